#!/usr/bin/env bash
# Loads the first N files of DATA_DIR (JSONBench's file_0001.json.gz, ... unchanged) into one
# sorted Parquet file in one COPY, shredded automatically (the shredding is inferred from a
# sample of all the documents, taken under the sort), and prints the seconds it took.
#   ./load_data.sh DATA_DIR N
# Bad documents are dropped (count.sh counts what was loaded), not fatal: one bad line must not
# stop a load of a billion.
set -euo pipefail
source "$(dirname "$0")/env.sh"
DATA_DIR="$(cd "$1" && pwd)"
N="$2"
INPUT="$TABLE_DIR/input"
rm -rf "$TABLE_DIR"
mkdir -p "$INPUT"
# the first N files, as one folder
find "$DATA_DIR" -maxdepth 1 -name 'file_*.json.gz' | sort | head -n "$N" | while read -r f; do
    ln -s "$f" "$INPUT/$(basename "$f")"
done
start=$(date +%s.%N)
sql -c "COPY (SELECT v FROM read_json_variant('$INPUT/', 'mode', 'DROPMALFORMED') ORDER BY $SORT_KEY) TO '$TABLE_FILE' STORED AS PARQUET" >/dev/null
end=$(date +%s.%N)
awk "BEGIN { printf \"%.3f\\n\", $end - $start }"
