"""Our functions and Parquet tables inside datafusion-python 55's own `SessionContext`, through
its FFI protocol (`register`, `register_parquet`)."""

import datafusion
import pyarrow as pa
import pytest

import datafusion_parquet_variant as dfpv


@pytest.fixture
def df_ctx():
    ctx = datafusion.SessionContext()
    dfpv.register(ctx)
    return ctx


def rows(df):
    return pa.Table.from_batches(df.collect()).to_pylist()


def test_scalar_functions_answer(df_ctx):
    result = df_ctx.sql(
        """SELECT variant_get(parse_json('{"a": [1, 2]}'), '$.a[1]', 'int') AS second,
                  to_json(parse_json('{"b": 1.50, "a": null}')) AS json,
                  is_variant_null(parse_json('null')) AS is_null,
                  try_variant_get(parse_json('"x"'), '$', 'int') AS bad"""
    )
    assert rows(result) == [{"second": 2, "json": '{"a":null,"b":1.5}', "is_null": True, "bad": None}]


def test_variant_results_keep_their_extension_type(df_ctx):
    table = pa.Table.from_batches(df_ctx.sql("SELECT parse_json('[1]') AS v").collect())
    field = table.schema.field("v")
    metadata = field.metadata or {}
    assert getattr(field.type, "extension_name", None) == dfpv.VARIANT_EXTENSION_NAME or (
        metadata.get(b"ARROW:extension:name") == dfpv.VARIANT_EXTENSION_NAME.encode()
    )
    # and variant values decode in Python
    (row,) = table.to_pylist()
    v = row["v"]
    assert dfpv.variant_to_python(v["metadata"], v["value"]) == [1]


def test_aggregates_answer(df_ctx):
    df_ctx.from_pydict({"j": ['{"a": 1}', '{"a": 2.5, "b": "x"}', "[true]"]}, name="docs")
    result = df_ctx.sql("SELECT schema_of_variant_agg(parse_json(j)) AS s FROM docs")
    assert rows(result) == [{"s": "VARIANT"}]
    result = df_ctx.sql(
        "SELECT schema_of_variant_agg(parse_json(j)) AS s FROM docs WHERE j LIKE '{%'"
    )
    # BIGINT widens to DECIMAL(20,0); with DECIMAL(2,1): 20 integer digits and 1 fraction digit
    assert rows(result) == [{"s": "OBJECT<a: DECIMAL(21,1), b: STRING>"}]


def test_explode_takes_a_constant(df_ctx):
    result = df_ctx.sql(
        "SELECT pos, key, to_json(value) AS value "
        """FROM variant_explode(parse_json('{"b": [1], "a": true}')) ORDER BY pos"""
    )
    assert rows(result) == [
        {"pos": 0, "key": "a", "value": "true"},
        {"pos": 1, "key": "b", "value": "[1]"},
    ]
    outer = df_ctx.sql("SELECT pos, key FROM variant_explode_outer(parse_json('1'))")
    assert rows(outer) == [{"pos": None, "key": None}]


def test_errors_cross_as_exceptions(df_ctx):
    with pytest.raises(Exception, match="malformed JSON"):
        df_ctx.sql("SELECT parse_json('{') AS v").collect()


def test_a_shredded_file_through_register_parquet(df_ctx, shredded_file):
    dfpv.register_parquet(df_ctx, "events", str(shredded_file))
    result = df_ctx.sql(
        "SELECT id, variant_get(v, '$.b', 'string') AS b, to_json(v) AS j FROM events "
        "WHERE variant_get(v, '$.a', 'bigint') >= 4 ORDER BY id"
    )
    assert rows(result) == [
        {"id": 4, "b": "z", "j": '{"a":4,"b":"z","e":[1,2.5]}'},
        {"id": 5, "b": "x", "j": '{"a":5,"b":"x"}'},
        {"id": 6, "b": None, "j": '{"a":6}'},
    ]
    # the filter reached our scan: row groups without a >= 4 were skipped on the shredded leaf
    plan = df_ctx.sql(
        "EXPLAIN ANALYZE SELECT id FROM events WHERE variant_get(v, '$.a', 'bigint') = 5"
    )
    text = "\n".join(str(x) for x in pa.Table.from_batches(plan.collect()).column(1).to_pylist())
    assert "variant_row_groups_pruned=2" in text, text
