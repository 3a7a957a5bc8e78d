"""How load and queries grow with the data: JSONBench's sorted load and five queries at several
sizes, each in whole variant-sql processes, for docs/benchmarks.md. Never in CI.

    python3 jsonbench/scale.py DATA_DIR [--sizes 2,20,100] [--memory 4g] [--query-memory 2g]
                               [--work DIR] [--keep]

DATA_DIR holds file_0001.json.gz, ... (JSONBench's files or `generate.sh`'s; the first N files
are the N-million set). For each size N, smallest first:

- load: the first N files into one sorted, shredded Parquet file (load_data.sh's COPY) under
  `-m MEMORY` with variant-sql's defaults, timed as a whole process; peak RSS (`/usr/bin/time`),
  bytes spilled and spill files (the COPY runs under EXPLAIN ANALYZE), the file's size;
- the five queries hot (the faster of runs 2 and 3 in one process), on the variant file and on
  the same fields as plain typed columns (written from the variant file, sorted alike);
- the queries whose state grows with the users (Q2, Q4, Q5) under `-m QUERY_MEMORY`: their
  answers must equal the unlimited run's, and their bytes spilled are recorded.

Prints a table (time per event in nanoseconds) and writes results/scale_<machine>.json. The
Parquet files of a size are deleted before the next size loads unless --keep: mind the disk
(spill files of the 100M load take tens of GB under the system's temporary folder).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VARIANT_SQL = os.environ.get("VARIANT_SQL", os.path.join(ROOT, "target", "release", "variant-sql"))
SORT_KEY = ("v:kind::string, v:commit.operation::string, v:commit.collection::string, "
            "v:did::string, v:time_us::bigint")
PLAIN_FIELDS = {
    "v:kind::string": "kind",
    "v:commit.operation::string": "operation",
    "v:commit.collection::string": "collection",
    "v:did::string": "did",
    "v:time_us::bigint": "time_us",
}


def queries():
    with open(os.path.join(HERE, "queries.sql")) as f:
        return [q.strip().rstrip(";") for q in f if q.strip()]


def plain(query):
    for path, column in PLAIN_FIELDS.items():
        query = query.replace(path, column)
    return query


def run(args, memory=None, timed=False):
    """Runs variant-sql with `args`; returns (stdout, seconds, peak RSS in bytes)."""
    cmd = [VARIANT_SQL, "--no-sample"]
    if memory:
        cmd += ["-m", memory]
    cmd += args
    if timed:
        cmd = ["/usr/bin/time", "-f", "__rss %M"] + cmd
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)[:300]}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    rss = None
    if timed:
        m = re.search(r"__rss (\d+)", out.stderr)
        rss = int(m.group(1)) * 1024 if m else None
    return out.stdout, seconds, rss


UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def spilled(explain):
    """Bytes spilled and spill files, summed over the operators of an EXPLAIN ANALYZE."""
    total = 0.0
    for number, unit in re.findall(r"spilled_bytes=([0-9.]+) ?([KMGT]?B)", explain):
        total += float(number) * UNITS[unit]
    files = sum(int(n) for n in re.findall(r"spill_count=(\d+)", explain))
    return int(total), files


def hot_times(create, qs, memory=None):
    """Each query three times in one process: the faster of runs 2 and 3, in seconds."""
    args = ["-c", create]
    for q in qs:
        args += ["-c", q, "-c", q, "-c", q]
    out, _, _ = run(args, memory)
    times = [float(t) for t in re.findall(r"^Elapsed ([0-9.]+) seconds\.", out, re.M)]
    times = times[1:]  # the CREATE
    if len(times) != 3 * len(qs):
        sys.exit(f"expected {3 * len(qs)} timings, got {len(times)}:\n{out[-2000:]}")
    return [min(times[3 * i + 1], times[3 * i + 2]) for i in range(len(qs))]


def answers(create, qs, memory=None):
    """The answers (CSV) of each query in one process, and the process's peak RSS."""
    args = ["-q", "--format", "csv", "-c", create]
    for q in qs:
        args += ["-c", q]
    out, _, rss = run(args, memory, timed=True)
    return out, rss


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data_dir")
    p.add_argument("--sizes", default="2,20,100", help="millions of events (files), comma-separated")
    p.add_argument("--memory", default="4g", help="-m of the loads")
    p.add_argument("--query-memory", default="2g", help="-m of Q2, Q4 and Q5's bounded runs")
    p.add_argument("--work", default=os.path.join(HERE, "data", "scale"))
    p.add_argument("--keep", action="store_true", help="keep each size's Parquet files")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    files = sorted(f for f in os.listdir(args.data_dir) if re.fullmatch(r"file_\d{4}\.json\.gz", f))
    if len(files) < max(sizes):
        sys.exit(f"{args.data_dir} holds {len(files)} files; --sizes needs {max(sizes)}")
    qs = queries()
    bounded = [1, 3, 4]  # Q2, Q4, Q5: state per user
    machine = f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') >> 30} GiB"
    results = {"machine": machine, "date": time.strftime("%Y-%m-%d"), "memory": args.memory,
               "query_memory": args.query_memory, "sizes": []}
    for n in sizes:
        work = os.path.join(args.work, f"{n}m")
        shutil.rmtree(work, ignore_errors=True)
        inp = os.path.join(work, "input")
        os.makedirs(inp)
        for f in files[:n]:
            os.symlink(os.path.abspath(os.path.join(args.data_dir, f)), os.path.join(inp, f))
        table = os.path.join(work, "bluesky.parquet")
        plain_table = os.path.join(work, "plain.parquet")
        events = n * 1_000_000

        copy = (f"EXPLAIN ANALYZE COPY (SELECT v FROM read_json_variant('{inp}/', 'mode', 'DROPMALFORMED') "
                f"ORDER BY {SORT_KEY}) TO '{table}' STORED AS PARQUET")
        out, load_s, load_rss = run(["-c", copy], args.memory, timed=True)
        spill_bytes, spill_files = spilled(out)
        size = os.path.getsize(table)
        print(f"{n}M: load {load_s:.1f} s, {load_s / events * 1e9:.0f} ns/event, peak RSS "
              f"{load_rss / 2**20:.0f} MiB, spilled {spill_bytes / 2**30:.2f} GiB in {spill_files} files, "
              f"file {size / 2**20:.0f} MiB", flush=True)

        columns = ", ".join(f"{path} AS {col}" for path, col in PLAIN_FIELDS.items())
        run(["-c", f"COPY (SELECT {columns} FROM '{table}' ORDER BY kind, operation, collection, did, time_us) "
                   f"TO '{plain_table}' STORED AS PARQUET"])

        create = f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{table}'"
        create_plain = f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{plain_table}'"
        variant_hot = hot_times(create, qs)
        plain_hot = hot_times(create_plain, [plain(q) for q in qs])
        print(f"{n}M: hot variant {variant_hot}, plain {plain_hot}", flush=True)

        # the queries holding a state per user, unlimited and under the query limit
        bq = [qs[i] for i in bounded]
        free_answers, free_rss = answers(create, bq)
        limited_answers, limited_rss = answers(create, bq, args.query_memory)
        equal = free_answers == limited_answers
        explain = ["-c", create]
        for q in bq:
            explain += ["-c", "EXPLAIN ANALYZE " + q]
        q_spill, q_spill_files = spilled(run(explain, args.query_memory)[0])
        print(f"{n}M: Q2/Q4/Q5 under -m {args.query_memory}: answers {'equal' if equal else 'DIFFER'}, "
              f"spilled {q_spill / 2**30:.2f} GiB in {q_spill_files} files, peak RSS "
              f"{limited_rss / 2**20:.0f} MiB (unlimited {free_rss / 2**20:.0f} MiB)", flush=True)
        if not equal:
            print(free_answers, "\n---\n", limited_answers)
        results["sizes"].append({
            "events": events, "load_s": round(load_s, 2), "load_rss": load_rss,
            "spilled_bytes": spill_bytes, "spill_files": spill_files, "file_bytes": size,
            "plain_file_bytes": os.path.getsize(plain_table),
            "hot_s": variant_hot, "plain_hot_s": plain_hot,
            "bounded_queries_equal": equal, "bounded_spilled_bytes": q_spill,
            "bounded_rss": limited_rss, "unbounded_rss": free_rss,
        })
        if not args.keep:
            shutil.rmtree(work)

    name = "scale_" + re.sub(r"[^A-Za-z0-9]+", "_", machine).strip("_") + ".json"
    with open(os.path.join(HERE, "results", name), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print("\n| events | load | ns/event | peak RSS | spilled | file | Q1-Q5 hot, variant | Q1-Q5 hot, plain |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results["sizes"]:
        print(f"| {r['events'] // 1_000_000}M | {r['load_s']:.1f} s | {r['load_s'] / r['events'] * 1e9:.0f} | "
              f"{r['load_rss'] / 2**30:.2f} GiB | {r['spilled_bytes'] / 2**30:.1f} GiB | "
              f"{r['file_bytes'] / 2**30:.2f} GiB | {' / '.join(f'{t:.3f}' for t in r['hot_s'])} | "
              f"{' / '.join(f'{t:.3f}' for t in r['plain_hot_s'])} |")


if __name__ == "__main__":
    main()
