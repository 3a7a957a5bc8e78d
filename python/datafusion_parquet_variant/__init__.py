"""Spark-compatible Variant SQL over Parquet, in Apache DataFusion.

Two ways in:

- :class:`SessionContext`: a session of our own with the whole engine (every function, the
  ``v:path`` syntax, casts, the ``VARIANT`` type name, Parquet tables that read shredded files
  leaf by leaf and write VARIANT columns).
- :func:`register` and :func:`register_parquet`: our functions and Parquet tables inside a
  ``datafusion.SessionContext`` of datafusion-python 55, through its FFI protocol.
"""

from __future__ import annotations

from typing import Any

from . import _internal
from ._internal import DataFrame, DataFusionError, ResourcesExhausted, SessionContext

__all__ = [
    "SessionContext",
    "DataFrame",
    "DataFusionError",
    "ResourcesExhausted",
    "register",
    "register_parquet",
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


def register(ctx: Any) -> None:
    """Registers our functions with a ``datafusion.SessionContext`` (datafusion-python 55).

    Every scalar and aggregate function of ours, and ``variant_explode`` /
    ``variant_explode_outer`` as table functions over a constant. The ``v:path`` syntax, the
    ``VARIANT`` type name and casts planned as typed extractions need our planner, which
    datafusion-python cannot take: write ``variant_get(v, '$.a', 'int')``.
    """
    import datafusion

    for function in _internal.scalar_functions():
        ctx.register_udf(datafusion.udf(function))
    for function in _internal.aggregate_functions():
        ctx.register_udaf(datafusion.udaf(function))
    for function in _internal.table_functions():
        ctx.register_udtf(datafusion.TableFunction(function.name, function, ctx))


def register_parquet(ctx: Any, name: str, path: str) -> None:
    """Registers the Parquet file, folder or glob ``path`` as the table ``name`` of a
    ``datafusion.SessionContext``: VARIANT columns as variants (whatever the files' shredding);
    filters on ``variant_get`` paths prune row groups and pages on the shredded leaves.
    """
    ctx.register_table(name, _internal.parquet_table(path))
