#!/usr/bin/env bash
# Bytes of data (the Parquet file: there is no index).
set -euo pipefail
source "$(dirname "$0")/env.sh"
stat -c %s "$TABLE_FILE"
