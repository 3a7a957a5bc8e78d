//! What reading through a Delta table costs beside reading its Parquet files directly: the same
//! queries, in one process, on a shredded Delta table written by `INSERT INTO` and on its data
//! files registered as a Parquet table; and the time to open a table whose log lists 10,000
//! files.
//!
//! ```sh
//! cargo run --release --features delta --example delta_overhead -- [ROWS] [RUNS]
//! ```
use std::time::{Duration, Instant};

use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::delta::{DeltaVersion, register_delta};
use datafusion_parquet_variant::session_context;

const QUERIES: &[(&str, &str)] = &[
    (
        "count by kind",
        "SELECT v:kind::string AS kind, count(*) FROM {t} GROUP BY kind ORDER BY kind",
    ),
    ("sum of a path", "SELECT sum(v:n::bigint) FROM {t}"),
    (
        "filter on a path",
        "SELECT count(*) FROM {t} WHERE v:user.age::int > 60",
    ),
    (
        "filter on a column",
        "SELECT count(*), sum(v:n::bigint) FROM {t} WHERE id > 900000",
    ),
    (
        "whole values",
        "SELECT count(DISTINCT to_json(v)) FROM {t} WHERE id % 100 = 0",
    ),
];

async fn run(ctx: &SessionContext, sql: &str) -> Result<Duration> {
    let start = Instant::now();
    ctx.sql(sql).await?.collect().await?;
    Ok(start.elapsed())
}

/// The best of `runs` runs of `sql` on the Parquet table `p` and on the Delta table `d`, run by
/// turns (so that the machine's drift falls on both alike).
async fn best_of_both(ctx: &SessionContext, sql: &str, runs: usize) -> Result<[Duration; 2]> {
    let mut best = [Duration::MAX; 2];
    for _ in 0..runs {
        for (i, table) in ["p", "d"].into_iter().enumerate() {
            best[i] = best[i].min(run(ctx, &sql.replace("{t}", table)).await?);
        }
    }
    Ok(best)
}

/// The best of `runs` times to plan `sql` (a Delta table's scan reads the log anew each time).
async fn best_plan(ctx: &SessionContext, sql: &str, runs: usize) -> Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        ctx.sql(sql).await?.create_physical_plan().await?;
        best = best.min(start.elapsed());
    }
    Ok(best)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rows: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let dir = std::env::temp_dir().join(format!("delta-overhead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let table = dir.join("events");
    let ctx = session_context();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE d (id BIGINT, v VARIANT) STORED AS DELTATABLE LOCATION '{}'",
        table.display()
    ))
    .await?
    .collect()
    .await?;
    // eight appends, one file each (eight versions)
    let per = rows / 8;
    let load = Instant::now();
    for part in 0..8 {
        let insert = format!(
            "INSERT INTO d SELECT id, parse_json('{{\"n\": ' || id || ', \"kind\": \"k' || (id % 7) || \
             '\", \"user\": {{\"age\": ' || (id % 90) || ', \"name\": \"u' || (id % 1000) || '\"}}}}') \
             FROM generate_series({}, {}) AS s(id)",
            part * per,
            (part + 1) * per - 1
        );
        ctx.sql(&insert).await?.collect().await?;
    }
    println!(
        "loaded {} rows in 8 appends: {:.2?}",
        per * 8,
        load.elapsed()
    );
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE p STORED AS PARQUET LOCATION '{}/'",
        table.display()
    ))
    .await?
    .collect()
    .await?;

    println!(
        "{:<20} {:>12} {:>12} {:>7}",
        "query", "parquet", "delta", "ratio"
    );
    let mut product = 1.0f64;
    for (name, sql) in QUERIES {
        let [parquet, delta] = best_of_both(&ctx, sql, runs).await?;
        let ratio = delta.as_secs_f64() / parquet.as_secs_f64();
        product *= ratio;
        println!("{name:<20} {parquet:>12.2?} {delta:>12.2?} {ratio:>7.3}");
    }
    println!(
        "geometric mean of the ratios: {:.3}",
        product.powf(1.0 / QUERIES.len() as f64)
    );
    let planned = "SELECT count(*) FROM {t} WHERE id > 900000";
    let parquet = best_plan(&ctx, &planned.replace("{t}", "p"), runs).await?;
    let delta = best_plan(&ctx, &planned.replace("{t}", "d"), runs).await?;
    println!(
        "a filtered scan planned: parquet {parquet:.2?}, delta {delta:.2?} (the log read anew)"
    );

    // a log of 10,000 files: 100 commits of 100 adds (the files are never opened)
    let big = dir.join("big");
    std::fs::create_dir_all(big.join("_delta_log"))?;
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"variant","nullable":true,"metadata":{}}]}"#;
    let mut first = vec![
        serde_json::json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["variantType"], "writerFeatures": ["variantType"]}}),
        serde_json::json!({"metaData": {"id": "big", "format": {"provider": "parquet", "options": {}},
            "schemaString": schema, "partitionColumns": [], "configuration": {}, "createdTime": 0}}),
    ];
    for commit in 0..100u64 {
        let mut actions = std::mem::take(&mut first);
        for file in 0..100u64 {
            let n = commit * 100 + file;
            actions.push(serde_json::json!({"add": {"path": format!("part-{n:05}.parquet"),
                "partitionValues": {}, "size": 1000, "modificationTime": 0, "dataChange": true,
                "stats": format!(r#"{{"numRecords":100,"minValues":{{"id":{}}},"maxValues":{{"id":{}}},"nullCount":{{"id":0}}}}"#, n * 100, n * 100 + 99)}}));
        }
        let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(big.join(format!("_delta_log/{commit:020}.json")), text)?;
    }
    let mut open = Duration::MAX;
    let mut plan = Duration::MAX;
    for _ in 0..runs {
        let ctx = session_context();
        let start = Instant::now();
        register_delta(&ctx, "big", big.to_str().unwrap(), DeltaVersion::Newest).await?;
        open = open.min(start.elapsed());
        let start = Instant::now();
        ctx.sql("SELECT v:kind FROM big WHERE id BETWEEN 500000 AND 500099")
            .await?
            .create_physical_plan()
            .await?;
        plan = plan.min(start.elapsed());
    }
    println!(
        "a log of 10,000 files (100 commits): open {open:.2?}, a filtered scan planned {plan:.2?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
