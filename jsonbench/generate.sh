#!/usr/bin/env bash
# Writes JSONBench-shaped files of generated Bluesky-like events (JSONBench's own files cannot be
# fetched everywhere): DIR/file_0001.json.gz ... file_NNNN.json.gz, ROWS events each.
#   ./generate.sh DIR FILES [ROWS]
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
cargo run --release --example jsonbench -- --ndjson-files "$1" --files "$2" --rows-per-file "${3:-1000000}"
