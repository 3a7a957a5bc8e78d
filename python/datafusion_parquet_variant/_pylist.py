"""Query results as Python rows: pyarrow's values, with variants decoded by our codec."""

from __future__ import annotations

from typing import Any

from . import _internal

VARIANT_EXTENSION_NAME = "arrow.parquet.variant"


def _is_variant(field: Any) -> bool:
    import pyarrow as pa

    if isinstance(field.type, pa.ExtensionType):
        return field.type.extension_name == VARIANT_EXTENSION_NAME
    metadata = field.metadata or {}
    return metadata.get(b"ARROW:extension:name") == VARIANT_EXTENSION_NAME.encode()


def _converter(field: Any):
    """A function turning pyarrow's Python value of ``field`` into ours (variants decoded), or
    None when the field holds no variant."""
    import pyarrow as pa

    if _is_variant(field):

        def variant(v):
            if v is None:
                return None
            return _internal.variant_to_python(v["metadata"], v["value"])

        return variant
    t = field.type
    if pa.types.is_struct(t):
        children = {t.field(i).name: _converter(t.field(i)) for i in range(t.num_fields)}
        children = {k: c for k, c in children.items() if c is not None}
        if not children:
            return None

        def struct(v):
            if v is None:
                return None
            return {k: (children[k](x) if k in children else x) for k, x in v.items()}

        return struct
    if pa.types.is_map(t):
        key, item = _converter(t.key_field), _converter(t.item_field)
        if key is None and item is None:
            return None
        key = key or (lambda x: x)
        item = item or (lambda x: x)
        return lambda v: None if v is None else [(key(k), item(x)) for k, x in v]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or (
        hasattr(pa.types, "is_list_view") and pa.types.is_list_view(t)
    ):
        element = _converter(t.value_field)
        if element is None:
            return None
        return lambda v: None if v is None else [element(x) for x in v]
    return None


def to_pylist(table: Any) -> list[dict[str, Any]]:
    """The rows of the ``pyarrow.Table`` ``table`` as dicts, variants as Python values (see
    ``variant_to_python``), nested ones too."""
    rows = table.to_pylist()
    converters = {f.name: _converter(f) for f in table.schema}
    converters = {k: c for k, c in converters.items() if c is not None}
    for row in rows:
        for name, convert in converters.items():
            row[name] = convert(row[name])
    return rows
