"""Our own session (`datafusion_parquet_variant.SessionContext`): the whole engine from Python."""

import datetime
import decimal
import os
import pathlib
import signal
import threading
import uuid

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datafusion_parquet_variant as dfpv


def test_functions_syntax_and_casts(ctx):
    result = ctx.sql(
        """SELECT v:user.id::int AS id, v:tags[1]::string AS tag, to_json(v) AS json,
                  CAST(v:amount AS DECIMAL(10, 2)) AS amount
           FROM (SELECT parse_json('{"user": {"id": 7}, "tags": ["a", "b"], "amount": 12.50}') AS v)"""
    )
    assert result.to_pylist() == [
        {
            "id": 7,
            "tag": "b",
            "json": '{"amount":12.5,"tags":["a","b"],"user":{"id":7}}',
            "amount": decimal.Decimal("12.50"),
        }
    ]
    assert result.columns == ("id", "tag", "json", "amount")


def test_subscripts_and_arrows_on_variants(ctx):
    result = ctx.sql(
        """SELECT v['user']['id']::int AS id, v['tags'][1] AS tag, v->>'kind' AS kind
           FROM (SELECT parse_json('{"user": {"id": "7"}, "tags": ["a", "b"], "kind": "click"}') AS v)"""
    )
    # tags[1] is the second element: variant paths count from 0
    assert result.to_pylist() == [{"id": 7, "tag": "b", "kind": "click"}]


def test_colon_paths_bind_as_in_spark(ctx):
    # Spark's answer: 1 + (5 * 2) and -5, not ((1 + v):a) * 2
    result = ctx.sql(
        """SELECT 1 + v:a::int * 2 AS x, -v:a::int AS y
           FROM (SELECT parse_json('{"a": 5}') AS v)"""
    )
    assert result.to_pylist() == [{"x": 11, "y": -5}]


def test_variants_become_python_values(ctx):
    rows = ctx.sql(
        """SELECT parse_json('{"i": 1, "big": 30000000000, "d": 1.50, "f": 1e3, "s": "x",
                               "n": null, "l": [true, {"k": []}]}') AS v,
                  to_variant(DATE '2024-03-01') AS date,
                  to_variant(TIMESTAMP '2024-03-01 12:30:00.123456') AS ntz,
                  to_variant(arrow_cast(uuid(), 'Utf8')) AS text,
                  CAST(NULL AS VARIANT) AS missing"""
    ).to_pylist()
    (row,) = rows
    assert row["v"] == {
        "big": 30000000000,
        "d": decimal.Decimal("1.5"),
        "f": 1000.0,
        "i": 1,
        "l": [True, {"k": []}],
        "n": None,
        "s": "x",
    }
    assert isinstance(row["v"]["d"], decimal.Decimal)
    assert row["date"] == datetime.date(2024, 3, 1)
    assert row["ntz"] == datetime.datetime(2024, 3, 1, 12, 30, 0, 123456)
    assert isinstance(row["text"], str) and uuid.UUID(row["text"])
    assert row["missing"] is None


def test_variant_bytes_decode_and_bad_bytes_are_value_errors():
    # {"a": 1}: metadata (version 1, one key "a"), then an object of one int8 field
    metadata = bytes([0x01, 1, 0, 1]) + b"a"
    value = bytes([0x02, 1, 0, 0, 2, 0x0C, 1])
    assert dfpv.variant_to_python(metadata, value) == {"a": 1}
    with pytest.raises(ValueError, match="not a valid variant"):
        dfpv.variant_to_python(metadata, bytes([0x02, 9]))


def test_results_print_variants_as_json(ctx):
    result = ctx.sql("""SELECT 1 AS id, parse_json('{"b": [1, 2.50], "a": null}') AS v""")
    text = repr(result)
    assert '{"a":null,"b":[1,2.5]}' in text
    many = ctx.sql("SELECT value AS n FROM generate_series(1, 50)")
    assert "(first 10 rows shown)" in repr(many)
    assert "(first" not in many.to_string(50)


def test_the_stream_protocol_feeds_pyarrow_and_polars(ctx):
    result = ctx.sql(
        "SELECT value AS id, parse_json('{\"n\": ' || value || '}') AS v "
        "FROM generate_series(1, 3) ORDER BY id"
    )
    table = pa.table(result)
    assert table.num_rows == 3
    field = table.schema.field("v")
    metadata = field.metadata or {}
    extension = getattr(field.type, "extension_name", None)
    assert extension == dfpv.VARIANT_EXTENSION_NAME or (
        metadata.get(b"ARROW:extension:name") == dfpv.VARIANT_EXTENSION_NAME.encode()
    )
    frame = pl.DataFrame(ctx.sql("SELECT value AS id, value * 2 AS twice FROM generate_series(1, 4)"))
    assert frame["twice"].sum() == 20
    # the stream is read lazily and can be read again (each read runs the query)
    assert pa.table(result).num_rows == 3


def test_a_shredded_file_reads_only_its_leaves(ctx, shredded_file):
    ctx.register_parquet("events", str(shredded_file))
    query = "SELECT id, v:b::string AS b FROM events WHERE v:a::bigint = 5"
    assert ctx.sql(query).to_pylist() == [{"id": 5, "b": "x"}]
    plan = ctx.sql(query).explain(analyze=True)
    # the scan reads the paths from the shredded leaves and skips the row groups without a = 5
    assert "variant_paths=[v $.a, v $.b]" in plan or "variant_paths=[v $.b, v $.a]" in plan
    assert "variant_paths_from_shredded_leaves=" in plan
    assert "variant_row_groups_pruned=2" in plan
    assert "variant_paths" in ctx.sql(query).explain()


def test_our_file_round_trips_through_pyarrow(ctx, shredded_file):
    # pyarrow reads our shredded file; the table goes back into a query as a variant column
    table = pq.read_table(shredded_file)
    ctx.register_arrow("from_pyarrow", table)
    rows = ctx.sql("SELECT id, to_json(v) AS j FROM from_pyarrow ORDER BY id").to_pylist()
    assert rows[3] == {"id": 4, "j": '{"a":4,"b":"z","e":[1,2.5]}'}
    assert rows[2] == {"id": 3, "j": '{"a":3,"b":7}'}
    # and a result of ours, through pyarrow, back in
    ctx.register_arrow("ours", ctx.sql("SELECT v FROM from_pyarrow WHERE id = 1").to_arrow_table())
    assert ctx.sql("SELECT v:c.d::boolean AS d FROM ours").to_pylist() == [{"d": True}]


def test_polars_frames_register_as_tables(ctx):
    frame = pl.DataFrame({"id": [1, 2], "j": ['{"a": 1}', '{"a": [2]}']})
    ctx.register_arrow("frame", frame)
    rows = ctx.sql("SELECT id, schema_of_variant(parse_json(j)) AS s FROM frame ORDER BY id")
    assert rows.to_pylist() == [{"id": 1, "s": "OBJECT<a: BIGINT>"}, {"id": 2, "s": "OBJECT<a: ARRAY<BIGINT>>"}]
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        ctx.register_arrow("nope", [1, 2, 3])


def test_copy_and_insert_run_when_planned(ctx, tmp_path):
    out = tmp_path / "out.parquet"
    result = ctx.sql(f"COPY (SELECT parse_json('[1, 2]') AS v) TO '{out}' STORED AS PARQUET")
    assert out.exists()
    assert result.to_pylist() == [{"count": 1}]
    ctx.sql("CREATE TABLE t (v VARIANT)")
    ctx.sql("INSERT INTO t SELECT parse_json('{\"x\": 1}')")
    assert ctx.sql("SELECT to_json(v) AS j FROM t").to_pylist() == [{"j": '{"x":1}'}]
    assert ctx.table("t").count() == 1
    assert "t" in ctx.table_names()


def test_errors_are_python_exceptions(ctx):
    with pytest.raises(dfpv.DataFusionError, match="table 'nowhere' not found|nowhere"):
        ctx.sql("SELECT * FROM nowhere")
    with pytest.raises(dfpv.DataFusionError, match="malformed JSON"):
        ctx.sql("SELECT parse_json('{\"a\": ') AS v").to_pylist()
    # a bad cast names the value and the type, as in Spark
    with pytest.raises(dfpv.DataFusionError, match="cannot be cast"):
        ctx.sql("SELECT variant_get(parse_json('\"x\"'), '$', 'int') AS i").to_pylist()
    assert issubclass(dfpv.ResourcesExhausted, dfpv.DataFusionError)
    with pytest.raises(ValueError, match="not a memory size"):
        dfpv.SessionContext(memory_limit="lots")


def test_a_memory_limit_is_an_exception_not_an_abort():
    # each batch of parse_json's output needs 65 KB: under a limit this small the session's
    # batches are fitted to the pool, down to their least, 128 values of about 510 bytes
    query = (
        "SELECT sum(length(to_json(parse_json('{\"x\": \"' || repeat('y', 500) || value || '\"}')))) AS n "
        "FROM generate_series(1, 100000)"
    )
    limited = dfpv.SessionContext(memory_limit="32k", target_partitions=1)
    with pytest.raises(dfpv.ResourcesExhausted, match="Resources exhausted"):
        limited.sql(query).to_pylist()
    # the same query without the limit: {"x":"y...y<i>"} is 508 bytes and the digits of i
    expected = sum(508 + len(str(i)) for i in range(1, 100001))
    assert dfpv.SessionContext().sql(query).to_pylist() == [{"n": expected}]


def test_ctrl_c_interrupts_a_running_query(ctx):
    query = ctx.sql("SELECT count(*) AS n FROM generate_series(1, 100000000000)")
    # Python's own handler, as an interactive session has it: a process started with SIGINT
    # ignored (a background job of a script) never installs it, and the query would run on
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            query.to_pylist()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


def test_read_json_variant_and_the_way_in(ctx, tmp_path):
    json_data = os.path.join(os.path.dirname(__file__), "..", "..", "sqllogictests", "data", "json")
    logs = os.path.join(json_data, "logs", "2026-11-*")
    # 2026-11-01.json holds days 1 and 1 (n 1, 2), 2026-11-02.json.gz day 2 (n 3)
    result = ctx.sql(
        f"SELECT v:day::int AS day, sum(v:n::int) AS n FROM read_json_variant('{logs}') "
        "GROUP BY day ORDER BY day"
    )
    assert result.to_pylist() == [{"day": 1, "n": 3}, {"day": 2, "n": 3}]
    bad = os.path.join(json_data, "bad.ndjson")
    result = ctx.sql(
        f"SELECT _corrupt_record AS raw FROM read_json_variant('{bad}', mode => 'PERMISSIVE', "
        "columnNameOfCorruptRecord => '_corrupt_record') WHERE v IS NULL"
    )
    assert result.to_pylist() == [
        {"raw": '{"a":'},
        {"raw": '{"a":1,"a":2}'},
        {"raw": '{"s":"\ufffd"}'},
        {"raw": '{"a":4'},
    ]
    out = tmp_path / "events.parquet"
    ctx.sql(
        f"COPY (SELECT v FROM read_json_variant('{json_data}/events.ndjson.zst') "
        f"ORDER BY v:time_us::bigint) TO '{out}' STORED AS PARQUET"
    ).to_pylist()
    assert pq.read_table(out).num_rows == 4


def _start_worker(binary, token=None):
    """A `variant-sql worker` on a free loopback port (taking calls that carry `token` only,
    where given): (process, "127.0.0.1:port")."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "VARIANT_SQL_WORKER_TOKEN"}
    if token is not None:
        env["VARIANT_SQL_WORKER_TOKEN"] = token
    process = subprocess.Popen(
        [binary, "worker", "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = process.stderr.readline()
    assert "listening on " in line, line
    return process, line.split()[-1]


@pytest.mark.skipif(
    "DFPV_VARIANT_SQL" not in os.environ,
    reason="needs variant-sql built with the `distributed` feature (cargo test sets DFPV_VARIANT_SQL)",
)
def test_workers_run_the_queries(shredded_file):
    workers = [_start_worker(os.environ["DFPV_VARIANT_SQL"]) for _ in range(2)]
    try:
        query = "SELECT v:b::string AS b, count(*) AS n, sum(v:a::bigint) AS a FROM t GROUP BY b ORDER BY b"
        local = dfpv.SessionContext()
        local.register_parquet("t", str(shredded_file))
        cluster = dfpv.SessionContext(workers=[address for _, address in workers])
        cluster.sql("SET distributed.file_scan_config_bytes_per_partition = 1")
        cluster.register_parquet("t", str(shredded_file))
        expected = local.sql(query).to_pylist()
        # b: "7" (event 3's number, cast as Spark casts it), x (events 1, 5), y (2), z (4),
        # NULL (6 has none)
        assert expected == [
            {"b": "7", "n": 1, "a": 3},
            {"b": "x", "n": 2, "a": 6},
            {"b": "y", "n": 1, "a": 2},
            {"b": "z", "n": 1, "a": 4},
            {"b": None, "n": 1, "a": 6},
        ]
        assert cluster.sql(query).to_pylist() == expected
        plan = cluster.sql(f"EXPLAIN {query}").to_pylist()
        assert [row["plan_type"] for row in plan] == ["logical_plan", "distributed_plan", "workers"]
        assert "Stage" in plan[1]["plan"]
        assert plan[2]["plan"].split("\n") == [f"http://{address}" for _, address in workers]
        # the workers ran the scan (each logs the tasks it starts)
        logs = []
        for process, _ in workers:
            process.kill()
            logs.append(process.stderr.read())
        assert any("started" in log for log in logs), logs
    finally:
        for process, _ in workers:
            process.kill()
            process.wait()


@pytest.mark.skipif(
    "DFPV_VARIANT_SQL" not in os.environ,
    reason="needs variant-sql built with the `distributed` feature (cargo test sets DFPV_VARIANT_SQL)",
)
def test_workers_take_only_calls_with_the_cluster_token(shredded_file, monkeypatch):
    monkeypatch.delenv("VARIANT_SQL_WORKER_TOKEN", raising=False)
    workers = [
        _start_worker(os.environ["DFPV_VARIANT_SQL"], token="py-cluster-secret") for _ in range(2)
    ]
    addresses = [address for _, address in workers]
    try:
        query = "SELECT v:b::string AS b, count(*) AS n FROM t GROUP BY b ORDER BY b"

        def run(**security):
            ctx = dfpv.SessionContext(workers=addresses, **security)
            ctx.sql("SET distributed.file_scan_config_bytes_per_partition = 1")
            ctx.register_parquet("t", str(shredded_file))
            return ctx.sql(query).to_pylist()

        with pytest.raises(dfpv.DataFusionError, match="none was sent"):
            run()
        with pytest.raises(dfpv.DataFusionError, match="the token sent is not this worker's"):
            run(worker_token="another-secret")
        expected = [
            {"b": "7", "n": 1},
            {"b": "x", "n": 2},
            {"b": "y", "n": 1},
            {"b": "z", "n": 1},
            {"b": None, "n": 1},
        ]
        assert run(worker_token="py-cluster-secret") == expected
        # the environment's token, where none is given
        monkeypatch.setenv("VARIANT_SQL_WORKER_TOKEN", "py-cluster-secret")
        assert run() == expected
        with pytest.raises(ValueError, match="worker_token: .*printable ASCII"):
            dfpv.SessionContext(workers=addresses, worker_token="with space")
    finally:
        for process, _ in workers:
            process.kill()
            process.wait()


def test_bad_worker_lists_are_refused():
    with pytest.raises(ValueError, match="workers: .*not an address"):
        dfpv.SessionContext(workers=["nowhere:port"])


#: delta-rs's Spark-written Delta tables, in the repository (tests/data/delta, Apache-2.0).
DELTA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "delta"


def test_delta_tables_read_travel_and_append(ctx, tmp_path):
    table = str(DELTA / "spark-variant-checkpoint")
    ctx.register_delta("plain", table)
    # Spark's answers: 102 rows, v = {"key": id}
    assert ctx.sql("SELECT count(*) AS n, sum(v:key::int) AS s FROM plain").to_pylist() == [
        {"n": 102, "s": 4951}
    ]
    ctx.register_delta("first", table, version=0)
    assert ctx.sql("SELECT count(*) AS n FROM first").to_pylist() == [{"n": 100}]
    # a deletion vector removed the rows with value 0 and 9
    ctx.register_delta("dv", str(DELTA / "table-with-dv-small"))
    assert [r["value"] for r in ctx.sql("SELECT value FROM dv ORDER BY value").to_pylist()] == list(
        range(1, 9)
    )
    with pytest.raises(ValueError, match="one of 'version' and 'timestamp'"):
        ctx.register_delta("both", table, version=1, timestamp="2024-12-23T00:00:00Z")

    # a new table, appended to, then read as Python values
    location = tmp_path / "events"
    ctx.sql(
        f"CREATE EXTERNAL TABLE events (id BIGINT, v VARIANT) STORED AS DELTATABLE "
        f"LOCATION '{location}'"
    )
    assert ctx.sql(
        """INSERT INTO events VALUES (1, parse_json('{"a": [1, 2]}')), (2, parse_json('"x"'))"""
    ).to_pylist() == [{"count": 2}]
    assert ctx.sql("SELECT id, v FROM events ORDER BY id").to_pylist() == [
        {"id": 1, "v": {"a": [1, 2]}},
        {"id": 2, "v": "x"},
    ]
    assert (location / "_delta_log" / "00000000000000000001.json").exists()
