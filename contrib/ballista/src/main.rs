//! Our plan codecs plugged into Ballista 55: an in-process (standalone) scheduler and executor
//! whose plans travel through `VariantLogicalCodec` / `VariantPhysicalCodec`, each wrapping
//! Ballista's own codec (which encodes its shuffle nodes). A query with our functions runs in
//! three stages, and a query over a shredded Parquet file through `CREATE EXTERNAL TABLE`
//! (Ballista ships the logical plan, where the table is our `VariantParquetTable`); the rows of
//! both are checked against values worked out by hand (the second's are those of
//! sqllogictests/parquet_variant.slt).
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::{Result, exec_err};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_parquet_variant::plan_codec::{
    VariantLogicalCodec, VariantPhysicalCodec, register_plan_functions,
};

#[tokio::main]
async fn main() -> Result<()> {
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(2)
        .with_ballista_logical_extension_codec(Arc::new(VariantLogicalCodec::new(Arc::new(
            BallistaLogicalExtensionCodec::default(),
        ))))
        .with_ballista_physical_extension_codec(Arc::new(VariantPhysicalCodec::new(Arc::new(
            BallistaPhysicalExtensionCodec::default(),
        ))));
    let builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    // the scheduler's and the executor's sessions are made from this state: our functions, and
    // the hidden ones that planned plans call
    let mut state = datafusion_parquet_variant::register_all_with_state(builder).build();
    register_plan_functions(&mut state)?;
    let ctx = SessionContext::standalone_with_state(state).await?;
    // Ballista's client session keeps only its own scalar functions: ours again
    datafusion_parquet_variant::register_all(&ctx)?;

    let sql = "SELECT k, count(*) AS n, sum(variant_get(v, '$.a', 'int')) AS a, \
               max(to_json(v)) AS widest \
               FROM (SELECT column1 % 2 AS k, parse_json(column2) AS v FROM (VALUES \
               (1, '{\"a\":1,\"b\":[1,2]}'), (2, '{\"a\":2}'), (3, '{\"a\":3,\"c\":\"x\"}'), \
               (4, '[4]'))) GROUP BY k ORDER BY k";
    ctx.sql(&format!("EXPLAIN {sql}")).await?.show().await?;
    let batches = ctx.sql(sql).await?.collect().await?;
    let table = pretty_format_batches(&batches)?.to_string();
    println!("{table}");
    // k = 0: rows 2 and 4 ({"a":2} and [4]: a is 2 + NULL; '{' sorts after '[')
    // k = 1: rows 1 and 3 (a is 1 + 3; {"a":3.. sorts after {"a":1..)
    let expected = [
        "+---+---+---+-----------------+",
        "| k | n | a | widest          |",
        "+---+---+---+-----------------+",
        "| 0 | 2 | 2 | {\"a\":2}         |",
        "| 1 | 2 | 4 | {\"a\":3,\"c\":\"x\"} |",
        "+---+---+---+-----------------+",
    ]
    .join("\n");
    if table != expected {
        return exec_err!("unexpected rows:\n{table}\nexpected:\n{expected}");
    }

    ctx.sql(concat!(
        "CREATE EXTERNAL TABLE shredded STORED AS PARQUET LOCATION '",
        env!("CARGO_MANIFEST_DIR"),
        "/../../sqllogictests/data/variant_shredded.parquet'"
    ))
    .await?;
    let sql = "SELECT id, to_json(v) AS v, try_variant_get(v, '$.a', 'int') AS a, \
               variant_get(v, '$.b', 'string') AS b FROM shredded ORDER BY id";
    ctx.sql(&format!("EXPLAIN {sql}")).await?.show().await?;
    let batches = ctx.sql(sql).await?.collect().await?;
    let table = pretty_format_batches(&batches)?.to_string();
    println!("{table}");
    let expected = [
        "+----+---------------------+---+---+",
        "| id | v                   | a | b |",
        "+----+---------------------+---+---+",
        "| 1  | {\"a\":1,\"b\":\"x\"}     | 1 | x |",
        "| 2  | {\"a\":2,\"c\":true}    | 2 |   |",
        "| 3  | {\"a\":\"str\",\"b\":\"y\"} |   | y |",
        "| 4  | 42                  |   |   |",
        "| 5  |                     |   |   |",
        "+----+---------------------+---+---+",
    ]
    .join("\n");
    if table != expected {
        return exec_err!("unexpected rows:\n{table}\nexpected:\n{expected}");
    }
    Ok(())
}
