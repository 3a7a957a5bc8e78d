#!/usr/bin/env bash
# Writes JSONBench-shaped files of generated Bluesky-like events (JSONBench's own files cannot be
# fetched everywhere): DIR/file_0001.json.gz ... file_NNNN.json.gz, ROWS events each (1M by
# default). File n depends only on n (and ROWS): the first N files of a larger set are the N-file
# set, files already there are kept, and files are written on every core. The generator is a
# small crate of its own (jsonbench/generator: no DataFusion, builds in seconds).
#   ./generate.sh DIR FILES [ROWS]
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
CARGO_TARGET_DIR="$ROOT/target/generator" cargo run --quiet --release --manifest-path jsonbench/generator/Cargo.toml -- "$1" "$2" "${3:-1000000}"
