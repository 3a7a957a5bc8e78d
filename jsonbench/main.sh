#!/usr/bin/env bash
# JSONBench for datafusion-parquet-variant: install, load N files, sizes, count, queries, answers
# checked, and a results file in JSONBench's format.
#   ./main.sh DATA_DIR [N] [MACHINE]
# DATA_DIR holds JSONBench's files (file_0001.json.gz, ...), or generate.sh's.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA_DIR="$1"
N="${2:-1}"
MACHINE="${3:-$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB}"
cd "$HERE"
[ "${SKIP_INSTALL:-0}" = 1 ] || ./install.sh   # SKIP_INSTALL=1: variant-sql is built already
ROWS=$((N * 1000000))
load_time=$(./load_data.sh "$DATA_DIR" "$N")
total_size=$(./total_size.sh)
data_size=$(./data_size.sh)
count=$(./count.sh)
./query_results.sh "$DATA_DIR" "$N" > /dev/null
mapfile -t runs < <(./run_queries.sh)
source ./env.sh
version=$("$VARIANT_SQL" --version | awk '{print $2}')
name="results/$(printf '%s' "$MACHINE" | tr -cs 'A-Za-z0-9' '_' | sed 's/_$//')_bluesky_${N}m.json"
{
    echo "{"
    echo "  \"system\": \"DataFusion (datafusion-parquet-variant)\","
    echo "  \"version\": \"$version\","
    echo "  \"os\": \"$(. /etc/os-release && echo "$PRETTY_NAME")\","
    echo "  \"date\": \"$(date +%F)\","
    echo "  \"machine\": \"$MACHINE\","
    echo "  \"retains_structure\": \"yes\","
    echo "  \"tags\": [\"Rust\", \"column-oriented\", \"embedded\", \"Parquet\", \"variant\"],"
    echo "  \"dataset_size\": $ROWS,"
    echo "  \"num_loaded_documents\": $count,"
    echo "  \"load_time\": $load_time,"
    echo "  \"total_size\": $total_size,"
    echo "  \"data_size\": $data_size,"
    echo "  \"result\": ["
    for i in "${!runs[@]}"; do
        sep=","; [ "$i" -eq $((${#runs[@]} - 1)) ] && sep=""
        echo "    ${runs[$i]}$sep"
    done
    echo "  ]"
    echo "}"
} > "$name"
cat "$name"
