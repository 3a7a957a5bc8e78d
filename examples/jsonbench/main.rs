//! The query-level benchmark: a JSONBench-like dataset (Bluesky events, see `generate.rs`) written
//! as plain typed columns, as an unshredded VARIANT column and as VARIANT columns shredded in two
//! ways, and a set of queries timed on each layout in one run.
//!
//! ```sh
//! cargo run --release --example jsonbench -- [--rows N] [--dir D] [--runs R] [--query q1,q4]
//!     [--layout shredded,unshredded]
//! ```
//!
//! Layouts (files under `D`, generated once per row count and reused):
//! - `plain`: the queried fields as typed columns (the reference).
//! - `unshredded`: `v VARIANT`, every value in the `value` column.
//! - `shredded`: `v VARIANT` shredded on the queried paths only (`variant.shred.v`), so the rest
//!   of each event (texts, cids, other records' fields) stays in residual `value` columns.
//! - `auto`: `v VARIANT` as `COPY` writes it by default: shredded with the type inferred from
//!   each file's first rows.
//!
//! For each query it prints the median time of `R` runs on each layout, the ratios to plain (and
//! shredded to unshredded for whole-value queries), and the bytes the scans read (`bytes_scanned`
//! from the plans' metrics). It checks that every layout gives the same rows.
mod generate;
mod queries;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::arrow::array::{RecordBatch, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::{DataFusionError, Result};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanVisitor, accept, collect};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::parquet::register_parquet_table;

use generate::Generator;
use queries::{QUERIES, SHREDDED_PATHS};

/// The layouts, in the order they are printed.
const LAYOUTS: [&str; 4] = ["plain", "unshredded", "shredded", "auto"];

/// The plain layout's columns, from the unshredded file.
const PLAIN_SELECT: &str = "SELECT v:did::string AS did, v:time_us::bigint AS time_us, \
    v:kind::string AS kind, v:commit.collection::string AS collection, \
    v:commit.operation::string AS operation, \
    variant_get(v, '$.commit.record[\"$type\"]', 'string') AS record_type, \
    try_variant_get(v, '$.commit.record.subject.uri', 'string') AS subject_uri, \
    v:commit.record.embed.images[0].image.size::bigint AS image_size, \
    v:commit.record.embed.images[0].aspectRatio.width::bigint AS image_width \
    FROM t";

struct Args {
    rows: usize,
    dir: PathBuf,
    runs: usize,
    queries: Option<Vec<String>>,
    /// The layouts to time (all when None): one alone, e.g. under a profiler.
    layouts: Option<Vec<String>>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        rows: 2_000_000,
        dir: PathBuf::from("target/jsonbench"),
        runs: 3,
        queries: None,
        layouts: None,
    };
    let mut it = std::env::args().skip(1);
    let bad = |what: &str| DataFusionError::Plan(format!("jsonbench: {what}"));
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| bad(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--rows" => args.rows = value()?.parse().map_err(|_| bad("--rows N"))?,
            "--dir" => args.dir = PathBuf::from(value()?),
            "--runs" => args.runs = value()?.parse().map_err(|_| bad("--runs N"))?,
            "--query" => args.queries = Some(value()?.split(',').map(String::from).collect()),
            "--layout" => args.layouts = Some(value()?.split(',').map(String::from).collect()),
            other => return Err(bad(&format!("unknown argument {other}"))),
        }
    }
    Ok(args)
}

/// Writes the events as JSON text (`raw.parquet`, one Utf8 column `json`).
fn write_raw(path: &Path, rows: usize) -> Result<()> {
    let schema = Arc::new(Schema::new(vec![Field::new("json", DataType::Utf8, false)]));
    let file = std::fs::File::create(path)?;
    let mut writer = ArrowWriter::try_new(file, Arc::clone(&schema), None)?;
    let mut generator = Generator::new(0x0B1E_5C1E, rows / 10 + 1);
    let mut line = String::new();
    let mut written = 0;
    while written < rows {
        let n = (rows - written).min(8192);
        let mut json = StringBuilder::with_capacity(n, n * 700);
        for _ in 0..n {
            line.clear();
            generator.event(&mut line);
            json.append_value(&line);
        }
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(json.finish())])?;
        writer.write(&batch)?;
        written += n;
    }
    writer.close()?;
    Ok(())
}

/// Generates the layouts under `dir` unless a previous run left them for the same row count.
async fn ensure_data(dir: &Path, rows: usize) -> Result<()> {
    let stamp = dir.join("rows");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(&rows.to_string()) {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    let started = Instant::now();
    let raw = dir.join("raw.parquet");
    write_raw(&raw, rows)?;
    let ctx = datafusion_parquet_variant::session_context();
    let file = |name: &str| dir.join(format!("{name}.parquet")).display().to_string();
    register_parquet_table(&ctx, "raw", &raw.display().to_string()).await?;
    let statements = [
        format!(
            "COPY (SELECT parse_json(json) AS v FROM raw) TO '{}' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' 'none')",
            file("unshredded")
        ),
        format!(
            "COPY (SELECT parse_json(json) AS v FROM raw) TO '{}' STORED AS PARQUET",
            file("auto")
        ),
        format!(
            "COPY (SELECT parse_json(json) AS v FROM raw) TO '{}' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' '{SHREDDED_PATHS}')",
            file("shredded")
        ),
    ];
    for sql in statements {
        ctx.sql(&sql).await?.collect().await?;
    }
    register_parquet_table(&ctx, "t", &file("unshredded")).await?;
    let plain = format!(
        "COPY ({PLAIN_SELECT}) TO '{}' STORED AS PARQUET",
        file("plain")
    );
    ctx.sql(&plain).await?.collect().await?;
    std::fs::remove_file(&raw)?;
    std::fs::write(&stamp, rows.to_string())?;
    eprintln!(
        "generated {rows} events under {} in {:.1?}",
        dir.display(),
        started.elapsed()
    );
    Ok(())
}

/// Sums the `bytes_scanned` metric over a plan.
struct BytesScanned(usize);

impl ExecutionPlanVisitor for BytesScanned {
    type Error = DataFusionError;

    fn pre_visit(&mut self, plan: &dyn ExecutionPlan) -> Result<bool> {
        if let Some(metrics) = plan.metrics() {
            self.0 += metrics
                .sum_by_name("bytes_scanned")
                .map_or(0, |m| m.as_usize());
        }
        Ok(true)
    }
}

/// Runs `sql` once: the rows as text (for comparing layouts), the time, the bytes scanned.
async fn run(ctx: &SessionContext, sql: &str) -> Result<(Vec<String>, Duration, usize)> {
    let started = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let elapsed = started.elapsed();
    let mut bytes = BytesScanned(0);
    accept(plan.as_ref(), &mut bytes)?;
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = vec![];
    for batch in &batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for i in 0..batch.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(i).to_string()).collect();
            rows.push(cells.join("|"));
        }
    }
    Ok((rows, elapsed, bytes.0))
}

/// One measured cell: median time and bytes scanned.
struct Measured {
    median: Duration,
    bytes: usize,
}

fn ratio(a: Option<&Measured>, b: Option<&Measured>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}x", a.median.as_secs_f64() / b.median.as_secs_f64()),
        _ => "-".into(),
    }
}

fn geomean(ratios: &[f64]) -> f64 {
    (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse_args()?;
    ensure_data(&args.dir, args.rows).await?;
    let mut contexts = vec![];
    for layout in LAYOUTS {
        let ctx = datafusion_parquet_variant::session_context();
        let path = args.dir.join(format!("{layout}.parquet"));
        register_parquet_table(&ctx, "t", &path.display().to_string()).await?;
        contexts.push(ctx);
    }
    println!(
        "{} events; median of {} runs per cell; bytes = bytes_scanned",
        args.rows, args.runs
    );
    println!(
        "| query | plain | unshredded | shredded | auto | unshredded / plain | shredded / plain | auto / plain | shredded / unshredded | auto / unshredded | bytes plain / unshredded / shredded / auto |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut shredded_ratios = vec![];
    let mut auto_ratios = vec![];
    for query in QUERIES {
        if let Some(only) = &args.queries
            && !only.iter().any(|q| q == query.name)
        {
            continue;
        }
        let mut cells: Vec<Option<Measured>> = vec![];
        let mut reference: Option<(&str, Vec<String>)> = None;
        for (layout, ctx) in LAYOUTS.iter().zip(&contexts) {
            let sql = if *layout == "plain" {
                query.plain
            } else {
                Some(query.variant)
            };
            let chosen = args
                .layouts
                .as_ref()
                .is_none_or(|only| only.iter().any(|l| l == layout));
            let Some(sql) = sql.filter(|_| chosen) else {
                cells.push(None);
                continue;
            };
            let mut times = vec![];
            let mut bytes = 0;
            for _ in 0..args.runs.max(1) {
                let (rows, time, scanned) = run(ctx, sql).await?;
                match &reference {
                    None => reference = Some((layout, rows)),
                    Some((first, expected)) if *expected != rows => {
                        return Err(DataFusionError::Execution(format!(
                            "{}: {layout} gives other rows than {first}:\n{:?}\n{:?}",
                            query.name,
                            &rows[..rows.len().min(5)],
                            &expected[..expected.len().min(5)]
                        )));
                    }
                    _ => {}
                }
                times.push(time);
                bytes = scanned;
            }
            times.sort();
            cells.push(Some(Measured {
                median: times[times.len() / 2],
                bytes,
            }));
        }
        let time = |c: &Option<Measured>| {
            c.as_ref()
                .map_or("-".into(), |m| format!("{:.3} s", m.median.as_secs_f64()))
        };
        let bytes = |c: &Option<Measured>| {
            c.as_ref()
                .map_or("-".into(), |m| format!("{:.1} MB", m.bytes as f64 / 1e6))
        };
        let [plain, unshredded, shredded, auto] = &cells[..] else {
            unreachable!()
        };
        if let (Some(s), Some(a), Some(p)) = (shredded, auto, plain) {
            shredded_ratios.push(s.median.as_secs_f64() / p.median.as_secs_f64());
            auto_ratios.push(a.median.as_secs_f64() / p.median.as_secs_f64());
        }
        println!(
            "| {} {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} / {} |",
            query.name,
            query.what,
            time(plain),
            time(unshredded),
            time(shredded),
            time(auto),
            ratio(unshredded.as_ref(), plain.as_ref()),
            ratio(shredded.as_ref(), plain.as_ref()),
            ratio(auto.as_ref(), plain.as_ref()),
            ratio(shredded.as_ref(), unshredded.as_ref()),
            ratio(auto.as_ref(), unshredded.as_ref()),
            bytes(plain),
            bytes(unshredded),
            bytes(shredded),
            bytes(auto),
        );
    }
    if !shredded_ratios.is_empty() {
        println!(
            "geomean shredded / plain: {:.2}x, auto / plain: {:.2}x",
            geomean(&shredded_ratios),
            geomean(&auto_ratios)
        );
    }
    Ok(())
}
