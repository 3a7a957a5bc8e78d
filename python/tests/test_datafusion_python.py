"""Our functions and Parquet tables inside datafusion-python 55's own `SessionContext`, through
its FFI protocol (`register`, `register_parquet`)."""

import pathlib
import re

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


@pytest.mark.parametrize("planner", [False, True], ids=["functions", "planner"])
def test_variant_results_keep_their_extension_type(planner):
    df_ctx = dfpv.register(datafusion.SessionContext(), planner=planner)
    # a constant: the host's optimizer folds it into a literal
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


@pytest.fixture
def planned_ctx(shredded_file):
    """datafusion-python's session with our query planner, and our shredded file as `events`."""
    ctx = dfpv.register(datafusion.SessionContext(), planner=True)
    dfpv.register_parquet(ctx, "events", str(shredded_file))
    return ctx


def explain_analyze(ctx, query):
    plan = ctx.sql("EXPLAIN ANALYZE " + query).collect()
    return "\n".join(str(x) for x in pa.Table.from_batches(plan).column(1).to_pylist())


LEAF_QUERY = (
    "SELECT id, variant_get(v, '$.b', 'string') AS b FROM events "
    "WHERE variant_get(v, '$.a', 'bigint') = 5"
)


def test_the_planner_reads_only_the_leaves_a_query_needs(planned_ctx, df_ctx, shredded_file):
    assert rows(planned_ctx.sql(LEAF_QUERY)) == [{"id": 5, "b": "x"}]
    text = explain_analyze(planned_ctx, LEAF_QUERY)
    # both paths are read in the scan, from their shredded leaves; row groups without a = 5 skipped
    assert "variant_paths=[v $.a, v $.b]" in text or "variant_paths=[v $.b, v $.a]" in text, text
    assert re.search(r"variant_paths_from_shredded_leaves=[1-9]", text), text
    assert "variant_row_groups_pruned=2" in text, text
    # without the planner, datafusion-python computes the paths itself from the whole column
    dfpv.register_parquet(df_ctx, "events", str(shredded_file))
    assert rows(df_ctx.sql(LEAF_QUERY)) == [{"id": 5, "b": "x"}]
    assert "variant_paths=" not in explain_analyze(df_ctx, LEAF_QUERY)


def test_the_planner_plans_the_hosts_tables_and_functions(planned_ctx, tmp_path):
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    ctx = planned_ctx
    # a table in memory, joined with ours
    ctx.from_pydict({"id": [2, 5, 9], "tag": ["two", "five", "nine"]}, name="tags")
    joined = ctx.sql(
        "SELECT t.tag, to_json(e.v) AS j FROM tags t JOIN events e ON t.id = e.id ORDER BY t.id"
    )
    assert rows(joined) == [
        {"tag": "two", "j": '{"a":2,"b":"y"}'},
        {"tag": "five", "j": '{"a":5,"b":"x"}'},
    ]
    # a Python function, a window function and a subquery
    ctx.register_udf(
        datafusion.udf(lambda a: pa.array([x * 10 for x in a.to_pylist()]),
                       [pa.int64()], pa.int64(), "immutable", name="tenfold")
    )
    result = ctx.sql(
        "SELECT tenfold(id) AS t, row_number() OVER (ORDER BY id DESC) AS r FROM events "
        "WHERE id IN (SELECT id FROM tags) ORDER BY id"
    )
    assert rows(result) == [{"t": 20, "r": 2}, {"t": 50, "r": 1}]
    # a Python function under a built-in's name keeps its meaning (the host's codec inlines it)
    ctx.register_udf(
        datafusion.udf(lambda a: pa.array([x * 10 for x in a.to_pylist()]),
                       [pa.int64()], pa.int64(), "immutable", name="abs")
    )
    assert rows(ctx.sql("SELECT abs(id - 3) AS a FROM tags ORDER BY id")) == [
        {"a": -10}, {"a": 20}, {"a": 60}
    ]
    # a pyarrow dataset, and an insert into a table in memory
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "plain.parquet")
    ctx.register_dataset("plain", ds.dataset(str(tmp_path / "plain.parquet")))
    assert rows(ctx.sql("SELECT sum(x) AS s FROM plain")) == [{"s": 6}]
    ctx.sql("CREATE TABLE m AS SELECT 1 AS k").collect()
    ctx.sql("INSERT INTO m VALUES (2)").collect()
    assert rows(ctx.sql("SELECT sum(k) AS s FROM m")) == [{"s": 3}]


def test_the_planner_gives_errors_as_exceptions(planned_ctx, tmp_path):
    with pytest.raises(Exception, match="malformed JSON"):
        planned_ctx.sql("SELECT parse_json('{') AS v").collect()
    # datafusion-python 55 cannot hand a file format to a foreign planner: writes are refused
    with pytest.raises(Exception, match="file_format"):
        planned_ctx.sql(f"COPY (SELECT 1 AS x) TO '{tmp_path / 'x.parquet'}' STORED AS PARQUET").collect()
    assert not (tmp_path / "x.parquet").exists()


def test_planner_handles_are_taken_once(planned_ctx):
    from datafusion.plan import LogicalPlan

    planned_ctx.from_pydict({"a": [1]}, name="t")
    data = planned_ctx.sql("SELECT a FROM t").logical_plan().to_bytes(planned_ctx)
    # the table travels as a handle to itself, valid in this process, decoded once
    assert "TableScan: t" in str(LogicalPlan.from_bytes(planned_ctx, data).display_indent())
    with pytest.raises(Exception, match="already taken back"):
        LogicalPlan.from_bytes(planned_ctx, data)


def test_registering_the_planner_twice_keeps_one(planned_ctx, shredded_file):
    again = dfpv.register(planned_ctx, planner=True)
    assert again.logical_extension_codec_ids() == ["datafusion_parquet_variant.planner.tables"]
    assert rows(again.sql(LEAF_QUERY)) == [{"id": 5, "b": "x"}]
    # on the first context too (the planner then carries the codecs of the newest one)
    ctx = datafusion.SessionContext()
    first = dfpv.register(ctx, planner=True)
    second = dfpv.register(ctx, planner=True)
    dfpv.register_parquet(ctx, "events", str(shredded_file))
    for each in (ctx, first, second):
        assert rows(each.sql(LEAF_QUERY)) == [{"id": 5, "b": "x"}]


def test_a_codec_change_elsewhere_is_mended_by_registering_again():
    ctx = datafusion.SessionContext()
    planned = dfpv.register(ctx, planner=True)
    ctx.from_pydict({"a": [1]}, name="t")
    assert rows(planned.sql("SELECT a FROM t")) == [{"a": 1}]
    # a codec change on the first context rebuilds the session's planner with its codecs alone
    ctx.with_python_udf_inlining(enabled=False)
    with pytest.raises(Exception, match="LogicalExtensionCodec is not provided"):
        planned.sql("SELECT a FROM t").collect()
    dfpv.register(planned, planner=True)
    assert rows(planned.sql("SELECT a FROM t")) == [{"a": 1}]


def test_the_planner_applies_our_analysis(planned_ctx):
    # variants cannot be ordered (their order is not defined), as in our own sessions
    with pytest.raises(Exception, match="INVALID_ORDERING_TYPE"):
        planned_ctx.sql("SELECT id FROM events ORDER BY v").collect()


JSON_DATA = pathlib.Path(__file__).resolve().parents[2] / "sqllogictests" / "data" / "json"


def test_read_json_variant_reads_files(df_ctx):
    # events.ndjson.gz: four documents (sqllogictests/data/json/make.py), two of kind commit
    path = JSON_DATA / "events.ndjson.gz"
    result = df_ctx.sql(
        "SELECT variant_get(v, '$.kind', 'string') AS kind, count(*) AS n "
        f"FROM read_json_variant('{path}') GROUP BY kind ORDER BY kind"
    )
    assert rows(result) == [
        {"kind": "account", "n": 1},
        {"kind": "commit", "n": 2},
        {"kind": "identity", "n": 1},
    ]
    # bad.ndjson: two good documents among four bad ones; options as name/value pairs
    bad = JSON_DATA / "bad.ndjson"
    result = df_ctx.sql(
        f"SELECT to_json(v) AS j FROM read_json_variant('{bad}', 'mode', 'DROPMALFORMED')"
    )
    assert rows(result) == [{"j": '{"a":1}'}, {"j": '{"a":3}'}]
    with pytest.raises(Exception, match=r"bad\.ndjson, line 2 \(byte 8\)"):
        df_ctx.sql(f"SELECT count(*) FROM read_json_variant('{bad}')").collect()


@pytest.mark.parametrize("planner", [False, True], ids=["functions", "planner"])
def test_delta_tables_register_in_datafusion_python(planner):
    df_ctx = dfpv.register(datafusion.SessionContext(), planner=planner)
    delta = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "delta"
    dfpv.register_delta(df_ctx, "dv", str(delta / "table-with-dv-small"))
    # values 0..9, the rows of 0 and 9 deleted by a deletion vector
    assert rows(df_ctx.sql("SELECT count(*) AS n, sum(value) AS s FROM dv")) == [{"n": 8, "s": 36}]
    dfpv.register_delta(df_ctx, "before", str(delta / "table-with-dv-small"), version=0)
    assert rows(df_ctx.sql("SELECT count(*) AS n FROM before")) == [{"n": 10}]
    dfpv.register_delta(df_ctx, "plain", str(delta / "spark-variant-checkpoint"))
    assert rows(
        df_ctx.sql("SELECT sum(variant_get(v, '$.key', 'int')) AS s FROM plain WHERE id > 97")
    ) == [{"s": 98 + 99}]
    # the shredded fixture: ids 61..99 hold keys 61..99 (39 rows, 3120 in all)
    dfpv.register_delta(df_ctx, "shredded", str(delta / "spark-shredded-variant-preview-delta"))
    assert rows(
        df_ctx.sql(
            "SELECT count(*) AS n, sum(variant_get(v, '$.key', 'int')) AS s "
            "FROM shredded WHERE id > 60"
        )
    ) == [{"n": 39, "s": 3120}]
