"""DuckDB and ClickHouse (chDB) on the same JSONBench files, timed as JSONBench times them, for
docs/benchmarks.md. Optional, never in CI: needs `pip install duckdb==2.0.0 chdb==4.4.0 pytz`.

    python3 compare.py DATA_DIR N [--threads T] [--skip-chdb]

For each system: the load of the first N files (DuckDB: JSONBench's entry, a table of one JSON
column; ClickHouse: JSONBench's tuned DDL, a JSON column with typed paths and ORDER BY), bytes on
disk, and the five queries three times each in one process (hot = the faster of runs 2 and 3).
DuckDB also scans the NDJSON itself: `json_extract_string` over `read_ndjson_objects`, and the
same through `CAST(json AS VARIANT)`, which our `read_json_variant` is compared with.
"""

import argparse
import glob
import os
import shutil
import tempfile
import time

DUCKDB_QUERIES = [
    "SELECT j->>'$.commit.collection' AS event, count() AS count FROM bluesky GROUP BY event ORDER BY count DESC, event",
    "SELECT j->>'$.commit.collection' AS event, count() AS count, count(DISTINCT j->>'$.did') AS users FROM bluesky "
    "WHERE j->>'$.kind' = 'commit' AND j->>'$.commit.operation' = 'create' GROUP BY event ORDER BY count DESC, event",
    "SELECT j->>'$.commit.collection' AS event, hour(to_timestamp(CAST(j->>'$.time_us' AS BIGINT) / 1000000)) AS hour_of_day, "
    "count() AS count FROM bluesky WHERE j->>'$.kind' = 'commit' AND j->>'$.commit.operation' = 'create' "
    "AND j->>'$.commit.collection' IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like') "
    "GROUP BY event, hour_of_day ORDER BY hour_of_day, event",
    "SELECT j->>'$.did' AS user_id, min(to_timestamp(CAST(j->>'$.time_us' AS BIGINT) / 1000000)) AS first_post_ts FROM bluesky "
    "WHERE j->>'$.kind' = 'commit' AND j->>'$.commit.operation' = 'create' AND j->>'$.commit.collection' = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY first_post_ts ASC, user_id LIMIT 3",
    "SELECT j->>'$.did' AS user_id, (max(CAST(j->>'$.time_us' AS BIGINT)) - min(CAST(j->>'$.time_us' AS BIGINT))) // 1000 AS activity_span "
    "FROM bluesky WHERE j->>'$.kind' = 'commit' AND j->>'$.commit.operation' = 'create' AND j->>'$.commit.collection' = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY activity_span DESC, user_id LIMIT 3",
]

CLICKHOUSE_DDL = """CREATE TABLE bluesky (
    data JSON(max_dynamic_paths = 0, kind LowCardinality(String), commit.operation LowCardinality(String),
              commit.collection LowCardinality(String), did String, time_us UInt64) CODEC(ZSTD(1))
) ENGINE = MergeTree ORDER BY (data.kind, data.commit.operation, data.commit.collection, data.did,
                                fromUnixTimestamp64Micro(data.time_us))"""

CLICKHOUSE_QUERIES = [
    "SELECT data.commit.collection AS event, count() AS count FROM bluesky GROUP BY event ORDER BY count DESC, event",
    "SELECT data.commit.collection AS event, count() AS count, uniqExact(data.did) AS users FROM bluesky "
    "WHERE data.kind = 'commit' AND data.commit.operation = 'create' GROUP BY event ORDER BY count DESC, event",
    "SELECT data.commit.collection AS event, toHour(fromUnixTimestamp64Micro(data.time_us)) AS hour_of_day, count() AS count "
    "FROM bluesky WHERE data.kind = 'commit' AND data.commit.operation = 'create' AND data.commit.collection IN "
    "['app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like'] GROUP BY event, hour_of_day ORDER BY hour_of_day, event",
    "SELECT data.did::String AS user_id, min(fromUnixTimestamp64Micro(data.time_us)) AS first_post_ts FROM bluesky "
    "WHERE data.kind = 'commit' AND data.commit.operation = 'create' AND data.commit.collection = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY first_post_ts ASC, user_id LIMIT 3",
    "SELECT data.did::String AS user_id, date_diff('milliseconds', min(fromUnixTimestamp64Micro(data.time_us)), "
    "max(fromUnixTimestamp64Micro(data.time_us))) AS activity_span FROM bluesky WHERE data.kind = 'commit' "
    "AND data.commit.operation = 'create' AND data.commit.collection = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY activity_span DESC, user_id LIMIT 3",
]


def timed(run):
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def dir_size(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def report(name, load, size, runs):
    print(f"{name}: load {load:.2f} s, {size} bytes")
    for i, r in enumerate(runs, 1):
        hot = min(r[1:])
        print(f"  Q{i}: runs {', '.join(f'{t:.3f}' for t in r)}; hot {hot:.3f} s")


def duckdb_side(files, threads, scratch):
    import duckdb

    path = os.path.join(scratch, "bluesky.duckdb")
    con = duckdb.connect(path)
    con.execute(f"SET threads = {threads}")
    file_list = "[" + ", ".join(f"'{f}'" for f in files) + "]"
    load, _ = timed(lambda: con.execute(
        f"CREATE TABLE bluesky AS SELECT json AS j FROM read_ndjson_objects({file_list}, ignore_errors=true)"
    ))
    con.execute("CHECKPOINT")
    size = dir_size(path)
    runs = [[timed(lambda: con.execute(q).fetchall())[0] for _ in range(3)] for q in DUCKDB_QUERIES]
    report(f"DuckDB {duckdb.__version__} (JSONBench's layout)", load, size, runs)
    # scanning the NDJSON itself (uncompressed copies, as read_json_variant is timed on them)
    for label, sql in [
        ("read_ndjson_objects + json_extract_string",
         "SELECT count(*) FROM read_ndjson_objects({f}) WHERE json_extract_string(json, '$.kind') = 'commit'"),
        ("read_ndjson_objects + CAST(json AS VARIANT)",
         "SELECT count(*) FROM read_ndjson_objects({f}) WHERE CAST(CAST(json AS VARIANT).kind AS VARCHAR) = 'commit'"),
    ]:
        plain = [f[: -len(".gz")] for f in files if os.path.exists(f[: -len(".gz")])]
        if not plain:
            print(f"  (scan: no uncompressed copies beside the files; gunzip -k them to time {label})")
            break
        q = sql.format(f="[" + ", ".join(f"'{p}'" for p in plain) + "]")
        times = [timed(lambda: con.execute(q).fetchall()) for _ in range(3)]
        print(f"  scan, {label}: {min(t for t, _ in times):.3f} s (count {times[0][1][0][0]})")
    con.close()


def chdb_side(files, threads, scratch):
    from chdb import session

    path = os.path.join(scratch, "chdb")
    s = session.Session(path)
    s.query(f"SET max_threads = {threads}")
    s.query(CLICKHOUSE_DDL)
    pattern = os.path.join(os.path.dirname(files[0]), "{" + ",".join(os.path.basename(f) for f in files) + "}")
    load, _ = timed(lambda: s.query(
        f"INSERT INTO bluesky SELECT json FROM file('{pattern}', 'JSONAsObject', 'json JSON') "
        "SETTINGS input_format_allow_errors_num = 1000000"
    ))
    s.query("OPTIMIZE TABLE bluesky FINAL")
    size = int(str(s.query(
        "SELECT sum(data_compressed_bytes) FROM system.parts WHERE table = 'bluesky' AND active", "CSV"
    )).strip())
    runs = [[timed(lambda: str(s.query(q, "CSV")))[0] for _ in range(3)] for q in CLICKHOUSE_QUERIES]
    version = str(s.query("SELECT version()", "CSV")).strip().strip('"')
    report(f"ClickHouse {version} through chDB (JSONBench's tuned DDL)", load, size, runs)
    s.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("n", type=int)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--skip-chdb", action="store_true")
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(os.path.abspath(args.data_dir), "file_*.json.gz")))[: args.n]
    scratch = tempfile.mkdtemp(prefix="jsonbench-compare-")
    try:
        duckdb_side(files, args.threads, scratch)
        if not args.skip_chdb:
            chdb_side(files, args.threads, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
