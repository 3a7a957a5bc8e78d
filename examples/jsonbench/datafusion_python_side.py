"""The jsonbench queries from Python: datafusion-python 55 with our functions and Parquet table
(`dfpv.register`), the same with our query planner (`planner=True`), and our own session
(`dfpv.SessionContext`), in one process over the same file.

    python datafusion_python_side.py FILE [RUNS]

FILE is one of jsonbench's variant layouts (`target/jsonbench/auto.parquet` after a jsonbench
run). Needs the package built with `maturin develop --release` into a venv with datafusion 55;
a dev build times our unoptimized code. Prints the median of RUNS (default 3) runs per query,
whole `collect()` calls, and the ratios. `sum` and `grp` run over plain columns of a generated
file: the planner's cost on queries that hold no variant.
"""
import os
import statistics
import sys
import tempfile
import time

import datafusion
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import datafusion_parquet_variant as dfpv


def get(path, to="string"):
    return f"variant_get(v, '{path}', '{to}')"


# q1, q3 and q5 of queries.rs in function-call form (datafusion-python takes no `v:path`)
QUERIES = {
    "q1": f"SELECT {get('$.commit.collection')} AS event, count(*) AS n FROM t "
    "GROUP BY event ORDER BY n DESC, event",
    "q3": f"SELECT {get('$.did')} AS user_id, min({get('$.time_us', 'bigint')}) AS first, "
    f"max({get('$.time_us', 'bigint')}) AS last FROM t WHERE {get('$.kind')} = 'commit' "
    f"AND {get('$.commit.operation')} = 'create' "
    f"AND {get('$.commit.collection')} = 'app.bsky.feed.post' "
    "GROUP BY user_id ORDER BY last - first DESC, user_id LIMIT 3",
    "q5": f"SELECT {get('$.did')} AS did, {get('$.time_us', 'bigint')} AS time_us FROM t "
    f"WHERE {get('$.commit.record.subject.uri')} LIKE 'at://did:plc:aa%' ORDER BY time_us, did",
    "sum": "SELECT sum(x), avg(x) FROM plain",
    "grp": "SELECT s, count(*), sum(abs(x - 5)) FROM plain GROUP BY s ORDER BY s LIMIT 3",
    "one": "SELECT 1",
}


def median_seconds(run, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    file, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as scratch:
        plain = os.path.join(scratch, "plain.parquet")
        n = 20_000_000
        x = pa.array(range(n), pa.int64())
        pq.write_table(pa.table({"x": x, "s": pc.bit_wise_and(x, 1023).cast(pa.string())}), plain)

        host = dfpv.register(datafusion.SessionContext())
        planned = dfpv.register(datafusion.SessionContext(), planner=True)
        ours = dfpv.SessionContext()
        for ctx in (host, planned):
            dfpv.register_parquet(ctx, "t", file)
            ctx.register_parquet("plain", plain)
        ours.register_parquet("t", file)
        ours.register_parquet("plain", plain)

        print(f"{'query':6} {'host s':>9} {'planner s':>10} {'dfpv s':>9} "
              f"{'planner/host':>13} {'planner/dfpv':>13}")
        for name, query in QUERIES.items():
            h = median_seconds(lambda: host.sql(query).collect(), runs)
            p = median_seconds(lambda: planned.sql(query).collect(), runs)
            o = median_seconds(lambda: ours.sql(query).to_arrow_table(), runs)
            print(f"{name:6} {h:9.4f} {p:10.4f} {o:9.4f} {p / h:12.2f}x {p / o:12.2f}x")


if __name__ == "__main__":
    main()
