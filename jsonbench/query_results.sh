#!/usr/bin/env bash
# The queries' answers on the loaded table, and the same queries over the JSON files themselves
# (read_json_variant, no load): the two must agree. Exits non-zero when they do not.
#   ./query_results.sh DATA_DIR N
set -euo pipefail
source "$(dirname "$0")/env.sh"
INPUT="$TABLE_DIR/input"
loaded=$(mktemp); direct=$(mktemp)
trap 'rm -f "$loaded" "$direct"' EXIT
while IFS= read -r query; do
    [ -z "$query" ] && continue
    sql --format csv -c "$CREATE_TABLE" -c "$query" >> "$loaded"
    sql --format csv -c "CREATE VIEW bluesky AS SELECT v FROM read_json_variant('$INPUT/', 'mode', 'DROPMALFORMED')" -c "$query" >> "$direct"
done < "$HERE/queries.sql"
cat "$loaded"
if ! diff -u "$direct" "$loaded" >&2; then
    echo "the loaded table's answers differ from the JSON files' (above)" >&2
    exit 1
fi
echo "answers checked against the JSON files: equal" >&2
