#!/usr/bin/env bash
# Bytes on disk of the loaded table.
set -euo pipefail
source "$(dirname "$0")/env.sh"
stat -c %s "$TABLE_FILE"
