# Shared by the scripts: where things are. Sourced, not run.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
VARIANT_SQL="${VARIANT_SQL:-$ROOT/target/release/variant-sql}"
# the loaded table: one sorted, shredded Parquet file
TABLE_DIR="${TABLE_DIR:-$HERE/data}"
TABLE_FILE="$TABLE_DIR/bluesky.parquet"
CREATE_TABLE="CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '$TABLE_FILE'"
# the sort order (as JSONBench's ClickHouse entry orders its table)
SORT_KEY="v:kind::string, v:commit.operation::string, v:commit.collection::string, v:did::string, v:time_us::bigint"
sql() { "$VARIANT_SQL" --no-sample --quiet "$@"; }
