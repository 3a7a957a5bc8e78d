#!/usr/bin/env bash
# Builds variant-sql (release). Needs a Rust toolchain (rustup) and a C compiler.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
cargo build --release --bin variant-sql
