"""DuckDB's side of the jsonbench run (optional: only when a Python with `duckdb` is given).

    python duckdb_side.py write DIR          writes DIR/duckdb.parquet: the events as VARIANT,
                                             shredded by DuckDB on the queried paths
    python duckdb_side.py time DIR RUNS Q..  prints one line per query: name, median seconds of
                                             RUNS runs of DuckDB's JSON functions over the JSON
                                             text (DIR/json.parquet), query time only

jsonbench (main.rs) calls it with the interpreter named by JSONBENCH_DUCKDB_PYTHON.
"""
import statistics
import sys
import time

import duckdb

# The queried paths as DuckDB's SHREDDING option takes them (queries.rs: SHREDDED_PATHS).
SHREDDED_PATHS = (
    "STRUCT(did VARCHAR, time_us BIGINT, kind VARCHAR, commit STRUCT(collection VARCHAR, "
    'operation VARCHAR, record STRUCT("$type" VARCHAR, subject STRUCT(uri VARCHAR), '
    "embed STRUCT(images STRUCT(image STRUCT(size BIGINT), aspectRatio STRUCT(width BIGINT))[]))))"
)


def s(path):
    return f"json_extract_string(json, '{path}')"


def n(path):
    return f"CAST(json_extract(json, '{path}') AS BIGINT)"


# The queries of queries.rs with DuckDB's JSON functions over the text column `json`.
QUERIES = {
    "q1": f"SELECT {s('$.commit.collection')} AS event, count(*) AS n FROM t "
    "GROUP BY event ORDER BY n DESC, event",
    "q2": f"SELECT {s('$.commit.collection')} AS event, count(*) AS n, "
    f"count(DISTINCT {s('$.did')}) AS users FROM t "
    f"WHERE {s('$.kind')} = 'commit' AND {s('$.commit.operation')} = 'create' "
    "GROUP BY event ORDER BY n DESC, event",
    "q3": f"SELECT {s('$.did')} AS user_id, min({n('$.time_us')}) AS first, "
    f"max({n('$.time_us')}) AS last FROM t "
    f"WHERE {s('$.kind')} = 'commit' AND {s('$.commit.operation')} = 'create' "
    f"AND {s('$.commit.collection')} = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY last - first DESC, user_id LIMIT 3",
    "q4": f"""SELECT {s('$.commit.record."$type"')} AS type, """
    f"sum({n('$.commit.record.embed.images[0].image.size')}) AS bytes, "
    f"max({n('$.commit.record.embed.images[0].aspectRatio.width')}) AS widest "
    "FROM t GROUP BY type ORDER BY type",
    "q5": f"SELECT {s('$.did')} AS did, {n('$.time_us')} AS time_us FROM t "
    f"WHERE {s('$.commit.record.subject.uri')} LIKE 'at://did:plc:aa%' "
    "ORDER BY time_us, did",
}


def write(directory):
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT v FROM read_parquet('{directory}/unshredded.parquet')) "
        f"TO '{directory}/duckdb.parquet' (FORMAT parquet, SHREDDING {{v: '{SHREDDED_PATHS}'}})"
    )


def timed(directory, runs, names):
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute(f"CREATE VIEW t AS SELECT json FROM read_parquet('{directory}/json.parquet')")
    for name in names:
        sql = QUERIES.get(name)
        if sql is None:
            continue
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            con.execute(sql).fetchall()
            times.append(time.perf_counter() - started)
        print(name, statistics.median(times), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        timed(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
