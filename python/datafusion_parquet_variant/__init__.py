"""Spark-compatible Variant SQL over Parquet, in Apache DataFusion.

Two ways in:

- :class:`SessionContext`: a session of our own with the whole engine (every function, the
  ``v:path`` syntax, casts, the ``VARIANT`` type name, Parquet tables that read shredded files
  leaf by leaf and write VARIANT columns).
- :func:`register`, :func:`register_parquet` and :func:`register_delta`: our functions, and
  Parquet and Delta tables, inside a ``datafusion.SessionContext`` of datafusion-python 55,
  through its FFI protocol.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _internal
from ._internal import DataFrame, DataFusionError, ResourcesExhausted, SessionContext

__all__ = [
    "SessionContext",
    "DataFrame",
    "DataFusionError",
    "ResourcesExhausted",
    "register",
    "register_parquet",
    "register_delta",
    "variant_to_python",
    "VARIANT_EXTENSION_NAME",
]

#: The Arrow extension name of variant columns.
VARIANT_EXTENSION_NAME = "arrow.parquet.variant"

def variant_to_python(metadata: bytes, value: bytes) -> Any:
    """One variant (its ``metadata`` and ``value`` bytes) as a Python value.

    null is ``None``; booleans, integers, floats, strings and binary their Python types;
    decimals ``decimal.Decimal``; dates, times and timestamps ``datetime`` values (TIMESTAMP in
    UTC, TIMESTAMP_NTZ naive, nanoseconds truncated to microseconds); uuids ``uuid.UUID``;
    objects ``dict``; arrays ``list``.
    """
    return _internal.variant_to_python(metadata, value)


def register(ctx: Any, planner: bool = False) -> Any:
    """Registers our functions with a ``datafusion.SessionContext`` (datafusion-python 55), and
    returns the context to use.

    Every scalar and aggregate function of ours, and ``variant_explode`` /
    ``variant_explode_outer`` as table functions over a constant. The ``v:path`` syntax, the
    ``VARIANT`` type name and casts planned as typed extractions need our SQL planner, which
    datafusion-python cannot take: write ``variant_get(v, '$.a', 'int')``.

    ``planner=True`` also installs our query planner on the session (through
    ``ctx.with_extensions``; the returned context carries the codecs it needs): datafusion-python
    still parses and optimizes each query, and we make its physical plan, so the paths a query
    reads from tables of :func:`register_parquet` are read from their shredded leaves alone, and
    our analysis applies (variants cannot be ordered). Make codec changes
    (``with_python_udf_inlining``, ``with_logical_extension_codec``) on the returned context, or
    call this again on it after making them elsewhere: the planner is the session's, and such a
    change on another context rebuilds it without our codecs.
    Writes (``COPY``, ``write_parquet``) are refused under it, since datafusion-python 55 cannot
    hand a file format to a foreign planner; object stores registered on the session and its
    memory limit do not reach the plans it makes (local files are read).
    """
    import datafusion

    for function in _internal.scalar_functions():
        ctx.register_udf(datafusion.udf(function))
    for function in _internal.aggregate_functions():
        ctx.register_udaf(datafusion.udaf(function))
    for function in _internal.table_functions():
        ctx.register_udtf(datafusion.TableFunction(function.name, function, ctx))
    if not planner:
        return ctx
    if _Planner.TABLES in ctx.logical_extension_codec_ids():
        # this context carries our codecs already: the planner is installed again against them
        # (a codec change made on another context of the session rebuilds the session's planner
        # against that context's codecs, which lack ours)
        ctx.set_query_planner(_internal.query_planner(ctx))
        return ctx
    return ctx.with_extensions(_Planner())


class _Planner:
    """Our query planner as a datafusion-python extension bundle: the codecs that lend the
    session's tables to it and return its plans, and the planner."""

    #: The id of the codec that lends tables (`_internal.LogicalCodec`).
    TABLES = _internal.LogicalCodec().__datafusion_codec_id__

    def __datafusion_session_components__(self, ctx: Any) -> Any:
        import datafusion

        return datafusion.SessionExtensionComponents(
            logical_extension_codecs=[_internal.LogicalCodec()],
            physical_extension_codecs=[_internal.PhysicalCodec()],
        )

    def __datafusion_session_planner__(self, ctx: Any, fallback: Any) -> Any:
        return _internal.query_planner(ctx)


def register_delta(
    ctx: Any,
    name: str,
    path: str,
    version: Optional[int] = None,
    timestamp: Optional[str] = None,
) -> None:
    """Registers the Delta table at ``path`` as the table ``name`` of a
    ``datafusion.SessionContext``: its newest version, or ``version``, or the newest one
    committed at or before ``timestamp``; VARIANT columns as variants, shredded ones read from
    their leaves, files pruned by the log's statistics and partition values.
    """
    ctx.register_table(name, _internal.delta_table(path, version, timestamp))


def register_parquet(ctx: Any, name: str, path: str) -> None:
    """Registers the Parquet file, folder or glob ``path`` as the table ``name`` of a
    ``datafusion.SessionContext``: VARIANT columns as variants (whatever the files' shredding);
    filters on ``variant_get`` paths prune row groups and pages on the shredded leaves.
    """
    ctx.register_table(name, _internal.parquet_table(path))
