#!/usr/bin/env bash
# Runs each query of queries.sql three times in one variant-sql process (the first after dropping
# the OS page cache, where this machine allows it) and prints one line per query: the three
# times in seconds, as JSONBench's results file holds them ([t1, t2, t3]).
set -euo pipefail
source "$(dirname "$0")/env.sh"
while IFS= read -r query; do
    [ -z "$query" ] && continue
    sync
    echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
    times=$("$VARIANT_SQL" --no-sample -c "$CREATE_TABLE" -c "$query" -c "$query" -c "$query" 2>&1 \
        | sed -n 's/^Elapsed \([0-9.]*\) seconds\./\1/p' | tail -n 3 | paste -sd, -)
    echo "[$times]"
done < "$HERE/queries.sql"
