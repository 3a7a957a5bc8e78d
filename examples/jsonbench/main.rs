//! The query-level benchmark: a JSONBench-like dataset (Bluesky events, see `generate.rs`) written
//! as plain typed columns, as an unshredded VARIANT column and as VARIANT columns shredded in
//! several ways, and a set of queries timed on each layout in one run.
//!
//! ```sh
//! cargo build --release --bin variant-sql   # for --process
//! cargo run --release --example jsonbench -- [--rows N] [--dir D] [--runs R] [--query q1,q4]
//!     [--layout shredded,unshredded] [--process] [--rewrite auto]
//! ```
//!
//! Layouts (files under `D`, generated once per row count and reused; `--rewrite a,b` writes
//! those again, e.g. after a change to the writer):
//! - `plain`: the queried fields as typed columns (the reference); the images also as the typed
//!   list of structs a schema would hold them in (q4n's reference; q4's reads the first image's
//!   fields, flattened when the file was written).
//! - `unshredded`: `v VARIANT`, every value in the `value` column.
//! - `shredded`: `v VARIANT` shredded on the queried paths only (`variant.shred.v`), so the rest
//!   of each event (texts, cids, other records' fields) stays in residual `value` columns.
//! - `auto`: `v VARIANT` as `COPY` writes it by default (the shredding type inferred from each
//!   file's first rows).
//! - `spark`: the same with Spark's inference rule (`variant.shred_inference` `spark`).
//! - `duckdb`: (when DuckDB is at hand, below) the events shredded by DuckDB on the queried paths.
//!
//! It prints the write side first (each layout's `COPY` time from the JSON text, and its size),
//! then for each query the median time of `R` runs on each layout (interleaved: a run on each
//! layout, then the next round), the ratios to plain, and the bytes the scans read
//! (`bytes_scanned` from the plans' metrics); it checks that every layout gives the same rows.
//! A query is timed inside this process (planning and execution), or with `--process` as a user
//! runs it: the whole `variant-sql` process, from start to exit, with the table registered by
//! `CREATE EXTERNAL TABLE` (the binary beside this one, in the same profile).
//!
//! JSONBench's layout of the same kind of events (`file_0001.json.gz`, ..., a million events a
//! file, at any size) is written by `jsonbench/generate.sh` (the crate `jsonbench/generator`,
//! which takes the generator below by its path); `jsonbench/` loads them.
//!
//! DuckDB (optional, never in CI): with `JSONBENCH_DUCKDB_PYTHON` naming a Python that has the
//! `duckdb` package, `duckdb_side.py` writes the `duckdb` layout and times DuckDB's JSON functions
//! over the JSON text (query time, 2 threads), printed beside the unshredded layout.
mod generate;
mod queries;

use std::path::{Path, PathBuf};
use std::process::Command;
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

/// The layouts, in the order they are printed (`duckdb` only when its file exists).
const LAYOUTS: [&str; 6] = ["plain", "unshredded", "shredded", "auto", "spark", "duckdb"];

/// The plain layout's columns, from the unshredded file.
const PLAIN_SELECT: &str = "SELECT v:did::string AS did, v:time_us::bigint AS time_us, \
    v:kind::string AS kind, v:commit.collection::string AS collection, \
    v:commit.operation::string AS operation, \
    variant_get(v, '$.commit.record[\"$type\"]', 'string') AS record_type, \
    try_variant_get(v, '$.commit.record.subject.uri', 'string') AS subject_uri, \
    v:commit.record.embed.images[0].image.size::bigint AS image_size, \
    v:commit.record.embed.images[0].aspectRatio.width::bigint AS image_width, \
    try_variant_get(v, '$.commit.record.embed.images', \
        'array<struct<image struct<size bigint>, aspectRatio struct<width bigint>>>') AS images \
    FROM t";

/// The environment variable naming a Python with the `duckdb` package.
const DUCKDB_PYTHON: &str = "JSONBENCH_DUCKDB_PYTHON";

struct Args {
    rows: usize,
    dir: PathBuf,
    runs: usize,
    queries: Option<Vec<String>>,
    /// The layouts to time (all when None): one alone, e.g. under a profiler.
    layouts: Option<Vec<String>>,
    /// The layouts to write again.
    rewrite: Vec<String>,
    /// Time whole `variant-sql` processes instead of queries in this one.
    process: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        rows: 2_000_000,
        dir: PathBuf::from("target/jsonbench"),
        runs: 3,
        queries: None,
        layouts: None,
        rewrite: vec![],
        process: false,
    };
    let mut it = std::env::args().skip(1);
    let bad = |what: &str| DataFusionError::Plan(format!("jsonbench: {what}"));
    let list = |s: String| s.split(',').map(String::from).collect::<Vec<_>>();
    while let Some(flag) = it.next() {
        if flag == "--process" {
            args.process = true;
            continue;
        }
        let value = it
            .next()
            .ok_or_else(|| bad(&format!("{flag} needs a value")))?;
        match flag.as_str() {
            "--rows" => args.rows = value.parse().map_err(|_| bad("--rows N"))?,
            "--dir" => args.dir = PathBuf::from(value),
            "--runs" => args.runs = value.parse().map_err(|_| bad("--runs N"))?,
            "--query" => args.queries = Some(list(value)),
            "--layout" => args.layouts = Some(list(value)),
            "--rewrite" => args.rewrite = list(value),
            other => return Err(bad(&format!("unknown argument {other}"))),
        }
    }
    Ok(args)
}

/// Writes the events as JSON text (`json.parquet`, one Utf8 column `json`).
fn write_json(path: &Path, rows: usize) -> Result<()> {
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

/// The file of `layout` under `dir`.
fn layout_file(dir: &Path, layout: &str) -> String {
    dir.join(format!("{layout}.parquet")).display().to_string()
}

/// The `COPY` options that write `layout` from the JSON text (None: not written by a `COPY`
/// from the text).
fn copy_options(layout: &str) -> Option<String> {
    Some(match layout {
        "unshredded" => "OPTIONS ('variant.shred.v' 'none')".into(),
        "auto" => String::new(),
        "spark" => "OPTIONS ('variant.shred_inference' 'spark')".into(),
        "shredded" => format!("OPTIONS ('variant.shred.v' '{SHREDDED_PATHS}')"),
        _ => return None,
    })
}

/// Generates the JSON text under `dir` unless a previous run left it for the same row count,
/// then writes each layout that is missing or named in `rewrite`, recording its `COPY` time.
async fn ensure_data(dir: &Path, rows: usize, rewrite: &[String]) -> Result<()> {
    let stamp = dir.join("rows");
    let json = dir.join("json.parquet");
    let fresh = std::fs::read_to_string(&stamp).ok().as_deref() == Some(&rows.to_string());
    if !fresh {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::remove_file(&stamp);
        let started = Instant::now();
        write_json(&json, rows)?;
        eprintln!("generated {rows} events in {:.1?}", started.elapsed());
    }
    let ctx = datafusion_parquet_variant::session_context();
    register_parquet_table(&ctx, "raw", &json.display().to_string()).await?;
    let wanted = |layout: &str| {
        !fresh
            || rewrite.iter().any(|l| l == layout)
            || !Path::new(&layout_file(dir, layout)).exists()
    };
    // (plain is selected from the unshredded file, duckdb rewrites it)
    for layout in ["unshredded", "shredded", "auto", "spark", "plain", "duckdb"] {
        if !wanted(layout) {
            continue;
        }
        let started = Instant::now();
        if let Some(options) = copy_options(layout) {
            let sql = format!(
                "COPY (SELECT parse_json(json) AS v FROM raw) TO '{}' STORED AS PARQUET {options}",
                layout_file(dir, layout)
            );
            ctx.sql(&sql).await?.collect().await?;
        } else if layout == "plain" {
            let ctx = datafusion_parquet_variant::session_context();
            register_parquet_table(&ctx, "t", &layout_file(dir, "unshredded")).await?;
            let sql = format!(
                "COPY ({PLAIN_SELECT}) TO '{}' STORED AS PARQUET",
                layout_file(dir, "plain")
            );
            ctx.sql(&sql).await?.collect().await?;
        } else if let Ok(python) = std::env::var(DUCKDB_PYTHON) {
            duckdb_side(&python, &["write", &dir.display().to_string()])?;
        } else {
            continue;
        }
        let elapsed = started.elapsed().as_secs_f64();
        std::fs::write(dir.join(format!("{layout}.write")), elapsed.to_string())?;
        eprintln!("wrote {layout} in {elapsed:.1} s");
    }
    std::fs::write(&stamp, rows.to_string())?;
    Ok(())
}

/// Runs `duckdb_side.py` with `args`; its standard output.
fn duckdb_side(python: &str, args: &[&str]) -> Result<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jsonbench/duckdb_side.py");
    let out = Command::new(python).arg(script).args(args).output()?;
    if !out.status.success() {
        return Err(DataFusionError::Execution(format!(
            "duckdb_side.py {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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

/// Runs `sql` once in this process: the rows as text (for comparing layouts), the time, the
/// bytes scanned.
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

/// Runs `sql` over the table in `file` as a user runs it: one whole `variant-sql` process (the
/// binary beside this example's, same profile). Its output lines, the wall time.
fn run_process(file: &str, sql: &str) -> Result<(Vec<String>, Duration)> {
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("variant-sql"))
        .filter(|b| b.exists())
        .ok_or_else(|| {
            DataFusionError::Execution(
                "--process: build variant-sql first (cargo build --release --bin variant-sql)"
                    .into(),
            )
        })?;
    let create = format!("CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{file}'");
    let started = Instant::now();
    let out = Command::new(bin)
        .args([
            "--no-sample",
            "-q",
            "--format",
            "csv",
            "-c",
            &create,
            "-c",
            sql,
        ])
        .output()?;
    let elapsed = started.elapsed();
    if !out.status.success() {
        return Err(DataFusionError::Execution(format!(
            "variant-sql: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let rows = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    Ok((rows, elapsed))
}

/// One measured cell: median time and bytes scanned (None in a whole process).
struct Measured {
    median: Duration,
    bytes: Option<usize>,
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

/// Prints each layout's `COPY` time (as recorded when it was written) and file size.
fn print_write_side(dir: &Path, layouts: &[&str]) {
    println!("| layout | COPY from the JSON text | file size |");
    println!("|---|---|---|");
    for layout in layouts {
        let time = std::fs::read_to_string(dir.join(format!("{layout}.write")))
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok())
            .map_or("-".into(), |t| format!("{t:.1} s"));
        let size = std::fs::metadata(layout_file(dir, layout))
            .map_or("-".into(), |m| format!("{:.1} MB", m.len() as f64 / 1e6));
        println!("| {layout} | {time} | {size} |");
    }
    println!();
}

/// DuckDB's JSON-function time per query, when a Python with `duckdb` is named.
fn duckdb_json_times(dir: &Path, runs: usize, names: &[&str]) -> Result<Vec<(String, Duration)>> {
    let Ok(python) = std::env::var(DUCKDB_PYTHON) else {
        return Ok(vec![]);
    };
    let mut args = vec![
        "time".to_string(),
        dir.display().to_string(),
        runs.to_string(),
    ];
    args.extend(names.iter().map(|n| n.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = duckdb_side(&python, &args)?;
    Ok(out
        .lines()
        .filter_map(|line| {
            let (name, secs) = line.split_once(' ')?;
            Some((
                name.to_string(),
                Duration::from_secs_f64(secs.parse().ok()?),
            ))
        })
        .collect())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse_args()?;
    ensure_data(&args.dir, args.rows, &args.rewrite).await?;
    let layouts: Vec<&str> = LAYOUTS
        .into_iter()
        .filter(|l| Path::new(&layout_file(&args.dir, l)).exists())
        .collect();
    print_write_side(&args.dir, &layouts[1..]);
    let mut contexts = vec![];
    for layout in &layouts {
        let ctx = datafusion_parquet_variant::session_context();
        register_parquet_table(&ctx, "t", &layout_file(&args.dir, layout)).await?;
        contexts.push(ctx);
    }
    let chosen_queries: Vec<&str> = QUERIES
        .iter()
        .map(|q| q.name)
        .filter(|name| (args.queries.as_ref()).is_none_or(|only| only.iter().any(|q| q == name)))
        .collect();
    let duckdb = duckdb_json_times(&args.dir, args.runs.max(1), &chosen_queries)?;
    println!(
        "{} events; median of {} runs per cell; {}; bytes = bytes_scanned",
        args.rows,
        args.runs,
        if args.process {
            "whole variant-sql processes"
        } else {
            "planning and execution in one process"
        }
    );
    let variant_layouts = &layouts[1..];
    let mut header = vec!["query".to_string()];
    header.extend(layouts.iter().map(|l| l.to_string()));
    header.extend(variant_layouts.iter().map(|l| format!("{l} / plain")));
    // DuckDB's figure is its query time alone: set beside a whole process it would flatter
    // DuckDB, so the ratio is given only for queries timed in this process
    let duckdb_ratio = !duckdb.is_empty() && !args.process;
    if !duckdb.is_empty() {
        header.push("DuckDB JSON (query only)".into());
    }
    if duckdb_ratio {
        header.push("unshredded / DuckDB JSON".into());
    }
    header.push(format!("bytes {}", layouts.join(" / ")));
    println!("| {} |", header.join(" | "));
    println!("|{}", "---|".repeat(header.len()));
    let mut ratios: Vec<Vec<f64>> = vec![vec![]; variant_layouts.len()];
    for query in QUERIES.iter().filter(|q| chosen_queries.contains(&q.name)) {
        // The chosen layouts' SQL; their runs interleaved (a run on each layout, then the next
        // round), so that a slow spell of this shared machine weighs on every layout alike
        // instead of on the one measured during it.
        let sqls: Vec<Option<&str>> = layouts
            .iter()
            .map(|layout| {
                let sql = if *layout == "plain" {
                    query.plain
                } else {
                    Some(query.variant)
                };
                let chosen =
                    (args.layouts.as_ref()).is_none_or(|only| only.iter().any(|l| l == layout));
                sql.filter(|_| chosen)
            })
            .collect();
        let mut times: Vec<Vec<Duration>> = vec![vec![]; layouts.len()];
        let mut scanned: Vec<Option<usize>> = vec![None; layouts.len()];
        let mut reference: Option<(&str, Vec<String>)> = None;
        for _ in 0..args.runs.max(1) {
            for (i, (layout, ctx)) in layouts.iter().zip(&contexts).enumerate() {
                let Some(sql) = sqls[i] else { continue };
                let (rows, time) = if args.process {
                    run_process(&layout_file(&args.dir, layout), sql)?
                } else {
                    let (rows, time, bytes) = run(ctx, sql).await?;
                    scanned[i] = Some(bytes);
                    (rows, time)
                };
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
                times[i].push(time);
            }
        }
        let cells: Vec<Option<Measured>> = times
            .iter_mut()
            .zip(&scanned)
            .map(|(times, bytes)| {
                times.sort();
                times.get(times.len() / 2).map(|median| Measured {
                    median: *median,
                    bytes: *bytes,
                })
            })
            .collect();
        let time = |c: &Option<Measured>| {
            c.as_ref()
                .map_or("-".into(), |m| format!("{:.3} s", m.median.as_secs_f64()))
        };
        let bytes = |c: &Option<Measured>| {
            c.as_ref()
                .and_then(|m| m.bytes)
                .map_or("-".into(), |b| format!("{:.1} MB", b as f64 / 1e6))
        };
        let plain = cells[0].as_ref();
        let mut row = vec![format!("{} {}", query.name, query.what)];
        row.extend(cells.iter().map(time));
        for (i, cell) in cells[1..].iter().enumerate() {
            row.push(ratio(cell.as_ref(), plain));
            if let (Some(c), Some(p), None) = (cell, plain, query.again_of) {
                ratios[i].push(c.median.as_secs_f64() / p.median.as_secs_f64());
            }
        }
        if !duckdb.is_empty() {
            let json = duckdb
                .iter()
                .find(|(n, _)| n == query.name)
                .map(|(_, t)| Measured {
                    median: *t,
                    bytes: None,
                });
            row.push(time(&json));
            if duckdb_ratio {
                let unshredded = layouts.iter().position(|l| *l == "unshredded");
                row.push(ratio(
                    unshredded.and_then(|i| cells[i].as_ref()),
                    json.as_ref(),
                ));
            }
        }
        row.push(cells.iter().map(bytes).collect::<Vec<_>>().join(" / "));
        println!("| {} |", row.join(" | "));
    }
    for (layout, ratios) in variant_layouts.iter().zip(&ratios) {
        if !ratios.is_empty() {
            println!("geomean {layout} / plain: {:.2}x", geomean(ratios));
        }
    }
    Ok(())
}
