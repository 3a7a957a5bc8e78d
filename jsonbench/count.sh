#!/usr/bin/env bash
# Documents loaded.
set -euo pipefail
source "$(dirname "$0")/env.sh"
sql --format csv -c "$CREATE_TABLE" -c "SELECT count(*) AS n FROM bluesky" | tail -n 1
