#!/usr/bin/env python3
"""JSONBench's five queries on `variant-sql worker` processes on this machine: one process, then
1, 2 and 3 workers, over JSONBench-shaped files loaded into one sorted Parquet file each.

For every query and cluster size: whether the answer equals one process's, the best of RUNS hot
times (in one coordinator process, as run_queries.sh times them), and the bytes the stages
shipped to each other (datafusion-distributed's `bytes_transferred`, summed over the plan's
network boundaries, from EXPLAIN ANALYZE). Prints a Markdown table and writes the figures as JSON.

    python3 jsonbench/cluster.py DATA_DIR [--files 8] [--workers 1,2,3] [--runs 3] [--out FILE]

DATA_DIR holds file_0001.json.gz ... (generate.sh writes them); the Parquet files go to
DATA_DIR/parquet/ (kept: a second run reuses them). Needs variant-sql built with the
`distributed` feature: cargo build --release -p variant-sql --features distributed.
Standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VARIANT_SQL = os.environ.get("VARIANT_SQL", os.path.join(ROOT, "target/release/variant-sql"))
SORT_KEY = (
    "v:kind::string, v:commit.operation::string, v:commit.collection::string, "
    "v:did::string, v:time_us::bigint"
)
UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def sql(*commands, workers=None, csv=False):
    """Runs variant-sql with these -c commands; its stdout (fails loudly)."""
    args = [VARIANT_SQL, "--no-sample"]
    if csv:
        args += ["-q", "--format", "csv", "--maxrows", "inf"]
    if workers:
        args += ["--workers", ",".join(workers)]
    for command in commands:
        args += ["-c", command]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"variant-sql failed: {out.stderr}")
    return out.stdout


def load(data_dir, files):
    """One sorted Parquet file per JSON file (in JSONBench's ClickHouse order); the folder."""
    table = os.path.join(data_dir, "parquet")
    os.makedirs(table, exist_ok=True)
    for i in range(1, files + 1):
        source = os.path.join(data_dir, f"file_{i:04}.json.gz")
        target = os.path.join(table, f"part_{i:04}.parquet")
        if not os.path.exists(target):
            sql(
                f"COPY (SELECT v FROM read_json_variant('{source}', 'mode', 'DROPMALFORMED') "
                f"ORDER BY {SORT_KEY}) TO '{target}' STORED AS PARQUET"
            )
    return table


def start_workers(count):
    """`count` workers on free loopback ports: (processes, addresses)."""
    processes, addresses = [], []
    for _ in range(count):
        p = subprocess.Popen(
            [VARIANT_SQL, "worker", "--listen", "127.0.0.1:0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = p.stderr.readline()
        if "listening on " not in line:
            sys.exit(f"worker did not start: {line}")
        processes.append(p)
        addresses.append(line.split()[-1])
        # the workers log each task; keep their pipes from filling
        subprocess.Popen(["cat"], stdin=p.stderr, stdout=subprocess.DEVNULL)
    return processes, addresses


def best_time(create, query, runs, workers):
    out = sql(create, *([query] * runs), workers=workers)
    times = [float(t) for t in re.findall(r"^Elapsed ([0-9.]+) seconds\.", out, re.M)]
    return min(times[-runs:])


def shipped(create, query, workers):
    """Bytes shipped between stages: bytes_transferred over the plan's network boundaries."""
    out = sql(create, f"EXPLAIN ANALYZE {query}", workers=workers, csv=True)
    total = 0.0
    for value, unit in re.findall(r"bytes_transferred=([0-9.]+) ([KMGT]?B)\b", out):
        total += float(value) * UNITS[unit]
    return int(total)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "cluster.json"))
    args = parser.parse_args()
    data_dir = os.path.abspath(args.data_dir)
    queries = [q for q in open(os.path.join(HERE, "queries.sql")).read().splitlines() if q.strip()]

    started = time.time()
    table = load(data_dir, args.files)
    print(f"loaded {args.files} files in {time.time() - started:.1f} s", file=sys.stderr)
    create = f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{table}/'"
    rows = int(sql(create, "SELECT count(*) FROM bluesky", csv=True).splitlines()[1])

    answers = [sql(create, q, csv=True) for q in queries]
    results = {"events": rows, "files": args.files, "queries": []}
    for i, query in enumerate(queries):
        results["queries"].append(
            {"query": i + 1, "one_process": best_time(create, query, args.runs, None), "workers": {}}
        )
    for count in [int(c) for c in args.workers.split(",")]:
        processes, addresses = start_workers(count)
        try:
            for i, query in enumerate(queries):
                same = sql(create, query, workers=addresses, csv=True) == answers[i]
                results["queries"][i]["workers"][count] = {
                    "same_answer": same,
                    "seconds": best_time(create, query, args.runs, addresses),
                    "bytes_shipped": shipped(create, query, addresses),
                }
        finally:
            for p in processes:
                p.terminate()
                p.wait()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    counts = [int(c) for c in args.workers.split(",")]
    print(f"{rows} events in {args.files} files; best of {args.runs} hot runs, seconds "
          "(bytes shipped between stages)")
    print("| query | one process | " + " | ".join(f"{c} worker(s)" for c in counts) + " |")
    print("|---" * (2 + len(counts)) + "|")
    for q in results["queries"]:
        cells = []
        for c in counts:
            w = q["workers"][c]
            mark = "" if w["same_answer"] else " DIFFERENT ANSWER"
            cells.append(f"{w['seconds']:.3f} ({w['bytes_shipped'] / 1024:.0f} KiB){mark}")
        print(f"| Q{q['query']} | {q['one_process']:.3f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
