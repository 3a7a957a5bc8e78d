#!/usr/bin/env bash
# Scanning NDJSON, the way in measured alone: read_json_variant over an uncompressed NDJSON file
# (the documents parsed into variants, then a path filtered), beside parse_json over the same
# lines already in memory (no file, no cutting into lines). Best of three runs in one process.
#   ./scan.sh FILE.ndjson   (gunzip -k a file_0001.json.gz for one)
# compare.py times DuckDB's scans of the same file.
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
FILTER="v:kind::string = 'commit'"
best() { sed -n 's/^Elapsed \([0-9.]*\) seconds\./\1/p' | tail -n 3 | sort -n | head -n 1; }
scan="SELECT count(*) FROM read_json_variant('$FILE') WHERE $FILTER"
ours=$("$VARIANT_SQL" --no-sample -c "$scan" -c "$scan" -c "$scan" | best)
load="CREATE EXTERNAL TABLE lines (json VARCHAR) STORED AS CSV LOCATION '$FILE'
      OPTIONS ('format.delimiter' E'\\x01', 'format.quote' E'\\x02', 'format.has_header' 'false')"
parse="SELECT count(*) FROM texts WHERE parse_json(json):kind::string = 'commit'"
in_memory=$("$VARIANT_SQL" --no-sample -c "$load" -c "CREATE TABLE texts AS SELECT json FROM lines" \
    -c "$parse" -c "$parse" -c "$parse" | best)
bytes=$(stat -c %s "$FILE")
cores=$(nproc)
echo "read_json_variant + filter: $ours s ($(awk "BEGIN { printf \"%.0f\", $bytes / $ours / 1e6 / $cores }") MB/s per core over $cores cores)"
echo "parse_json over the lines in memory + filter: $in_memory s"
echo "ratio: $(awk "BEGIN { printf \"%.2f\", $ours / $in_memory }")"
