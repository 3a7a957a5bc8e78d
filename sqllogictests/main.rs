//! sqllogictest runner for the `.slt` files in `sqllogictests/`.
//!
//! Modelled on DataFusion's own `datafusion-sqllogictest` harness. Every file runs on a fresh
//! `SessionContext` (target partitions fixed at 4, as DataFusion's harness does, so plans do
//! not depend on the machine) with `datafusion_parquet_variant::register_all_with_state` applied; variant
//! columns print as JSON text.
//!
//! ```text
//! cargo test --test sqllogictests                          # every file
//! cargo test --test sqllogictests -- basic                 # files whose path contains "basic"
//! cargo test --test sqllogictests -- basic.slt:42          # only the query at line 42 of
//!                                                          # basic.slt (statements still run)
//! cargo test --test sqllogictests -- --complete basic      # rewrite expected output in place
//! ```
//!
//! Each file may write under `/tmp/datafusion-parquet-variant-slt/<file stem>/`, which is emptied
//! before the file runs (so `INSERT`s do not accumulate across runs).
//!
//! All records of a file run even after a failure; every failure is reported, then a summary,
//! and the last line is `N passed, M failed` (counting files). The exit code is non-zero if any
//! file failed. A file that leaves a session option changed by `SET` at its end fails too.
//!
//! libtest flags (`--nocapture`, `--test-threads N`, `--format X`, `-q`, `--exact`, `--list`,
//! `--ignored`, `--skip X`, `-Z X`, ...) are accepted so that `cargo test` and nextest work:
//! `--list` prints the files as tests (`basic.slt: test`), `--test-threads N` sets how many files
//! run at once (default 2).

mod engine;
mod normalize;

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{MakeConnection, Record, Runner, parse_file, strict_column_validator};
use tokio::task::JoinSet;

use crate::engine::{DataFusionDb, EngineError};
use crate::normalize::{DFColumnType, value_normalizer, value_validator};

/// Folder of the test files, relative to the crate root.
const TEST_DIR: &str = "sqllogictests";
/// Parent of the per-file scratch folders.
const SCRATCH_DIR: &str = "/tmp/datafusion-parquet-variant-slt";
/// Files run at once unless `--test-threads` says otherwise.
const DEFAULT_JOBS: usize = 2;

const USAGE: &str = "\
usage: cargo test --test sqllogictests -- [OPTIONS] [FILTER...]

FILTER      run the .slt files whose path contains FILTER; FILE:LINE runs only the query
            record that contains LINE (statements of the file still run, to set up state)
--complete  rewrite the expected output of the selected files in place
--list      list the files (libtest format) and exit
--exact     a filter must equal the file name (as listed) instead of being a substring
--skip S    leave out files whose path contains S
--test-threads N
            how many files run at once (default 2)
Other libtest flags (--nocapture, --format X, -q, -Z X, ...) are accepted and ignored.";

#[derive(Debug, Default)]
struct Options {
    complete: bool,
    list: bool,
    ignored: bool,
    exact: bool,
    format_terse: bool,
    jobs: Option<usize>,
    filters: Vec<Filter>,
    skips: Vec<String>,
}

/// A positional argument: `file` or `file:line`.
#[derive(Debug)]
struct Filter {
    file: String,
    line: Option<u32>,
}

impl Filter {
    fn parse(arg: &str) -> Self {
        if let Some((file, line)) = arg.rsplit_once(':')
            && let Ok(line) = line.parse()
        {
            return Self {
                file: file.to_string(),
                line: Some(line),
            };
        }
        Self {
            file: arg.to_string(),
            line: None,
        }
    }
}

/// libtest options that take a value.
const VALUE_FLAGS: &[&str] = &[
    "--test-threads",
    "--format",
    "--color",
    "--logfile",
    "--shuffle-seed",
    "--skip",
    "-Z",
];

fn parse_args() -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if !arg.starts_with('-') || arg == "-" {
            options.filters.push(Filter::parse(&arg));
            continue;
        }
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, value)) if arg.starts_with("--") => (flag.to_string(), Some(value.into())),
            _ => (arg.clone(), None),
        };
        let value = if VALUE_FLAGS.contains(&flag.as_str()) {
            match inline_value {
                Some(value) => Some(value),
                None => Some(args.next().ok_or_else(|| format!("{flag} needs a value"))?),
            }
        } else {
            None
        };
        match flag.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--complete" => options.complete = true,
            "--list" => options.list = true,
            "--ignored" => options.ignored = true,
            "--exact" => options.exact = true,
            "--skip" => options.skips.extend(value),
            "--format" => options.format_terse = value.as_deref() == Some("terse"),
            "--test-threads" => {
                let n: usize = value
                    .as_deref()
                    .unwrap_or_default()
                    .parse()
                    .map_err(|_| "--test-threads needs a number".to_string())?;
                options.jobs = Some(n.max(1));
            }
            // --nocapture, --show-output, -q, --quiet, --include-ignored, --bench, --test,
            // --shuffle, --report-time, -Z ..., --color ..., and anything else libtest-like
            _ => {}
        }
    }
    Ok(options)
}

/// A test file: its path and its name (path relative to `sqllogictests/`, `/`-separated).
#[derive(Debug, Clone)]
struct TestFile {
    path: PathBuf,
    name: String,
    /// Lines given by `file:line` filters; empty = run every record.
    lines: Vec<u32>,
}

fn find_slt_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find_slt_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "slt") {
            out.push(path);
        }
    }
    Ok(())
}

/// The files to run, sorted by name, after filters and `--skip`.
fn select_files(options: &Options) -> std::io::Result<Vec<TestFile>> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest_dir.join(TEST_DIR);
    let mut paths = vec![];
    find_slt_files(&dir, &mut paths)?;
    let mut files: Vec<TestFile> = paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&dir)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            TestFile {
                path,
                name,
                lines: vec![],
            }
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));

    let manifest_prefix = format!("{}/", manifest_dir.display());
    let mut selected = vec![];
    for mut file in files {
        // matched against `sqllogictests/<name>`, so editor paths work too
        let long_name = format!("{TEST_DIR}/{}", file.name);
        if options.skips.iter().any(|s| long_name.contains(s.as_str())) {
            continue;
        }
        if options.filters.is_empty() {
            selected.push(file);
            continue;
        }
        let mut matched = false;
        let mut whole_file = false;
        for filter in &options.filters {
            let pattern = filter
                .file
                .strip_prefix(&manifest_prefix)
                .unwrap_or(&filter.file);
            let hit = if options.exact {
                pattern == file.name || pattern == long_name
            } else {
                long_name.contains(pattern)
            };
            if hit {
                matched = true;
                match filter.line {
                    Some(line) => file.lines.push(line),
                    None => whole_file = true,
                }
            }
        }
        if matched {
            if whole_file {
                file.lines.clear();
            }
            selected.push(file);
        }
    }
    Ok(selected)
}

/// A fresh session for one file.
fn new_context() -> datafusion::error::Result<SessionContext> {
    let config = SessionConfig::new().with_target_partitions(4);
    let builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    let state = datafusion_parquet_variant::register_all_with_state(builder).build();
    Ok(SessionContext::new_with_state(state))
}

/// Makes the connections of a file: all share the file's `SessionContext`.
struct MakeDb(SessionContext);

impl MakeConnection for MakeDb {
    type Conn = DataFusionDb;
    type MakeFuture = std::future::Ready<Result<DataFusionDb, EngineError>>;

    fn make(&mut self) -> Self::MakeFuture {
        std::future::ready(Ok(DataFusionDb::new(self.0.clone())))
    }
}

/// A runner over `ctx` that compares as DataFusion's harness does: strict column types, values
/// exactly (trailing whitespace trimmed only).
fn new_runner(ctx: &SessionContext) -> Runner<DataFusionDb, MakeDb> {
    let mut runner = Runner::new(MakeDb(ctx.clone()));
    runner.with_normalizer(value_normalizer);
    runner.with_validator(value_validator);
    runner.with_column_validator(strict_column_validator);
    runner
}

fn config_entries(ctx: &SessionContext) -> BTreeMap<String, Option<String>> {
    ctx.state()
        .config()
        .options()
        .entries()
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

/// The outcome of one file.
struct FileReport {
    name: String,
    /// Records run (statements and queries; controls and comments not counted).
    ran: usize,
    /// Queries left out by a `file:line` filter.
    skipped: usize,
    failures: Vec<String>,
    notes: Vec<String>,
    elapsed: Duration,
}

/// The index of the record of `path` itself (not an included file) that contains `line`:
/// the last record starting at or before it.
fn record_at_line(records: &[Record<DFColumnType>], path: &str, line: u32) -> Option<usize> {
    records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| record_location(r).map(|loc| (i, loc)))
        .filter(|(_, loc)| loc.file() == path && loc.line() <= line)
        .max_by_key(|(_, loc)| loc.line())
        .map(|(i, _)| i)
}

fn record_location(record: &Record<DFColumnType>) -> Option<&sqllogictest::Location> {
    match record {
        Record::Statement { loc, .. }
        | Record::Query { loc, .. }
        | Record::System { loc, .. }
        | Record::Let { loc, .. }
        | Record::Include { loc, .. }
        | Record::Sleep { loc, .. }
        | Record::Subtest { loc, .. }
        | Record::Halt { loc }
        | Record::HashThreshold { loc, .. } => Some(loc),
        _ => None,
    }
}

async fn run_file(file: TestFile, colorize: bool) -> FileReport {
    let start = Instant::now();
    let mut report = FileReport {
        name: file.name.clone(),
        ran: 0,
        skipped: 0,
        failures: vec![],
        notes: vec![],
        elapsed: Duration::ZERO,
    };

    if let Err(e) = fresh_scratch(&file) {
        report.failures.push(e);
        return report;
    }
    let ctx = match new_context() {
        Ok(ctx) => ctx,
        Err(e) => {
            report
                .failures
                .push(format!("cannot create the session: {e}"));
            return report;
        }
    };
    let records = match parse_file::<DFColumnType>(&file.path) {
        Ok(records) => records,
        Err(e) => {
            report.failures.push(format!("cannot parse the file: {e}"));
            return report;
        }
    };

    // `file:line` filters: the queries to keep
    let mut targets = BTreeSet::new();
    let path_str = file.path.to_string_lossy().to_string();
    for &line in &file.lines {
        match record_at_line(&records, &path_str, line) {
            Some(i) => {
                targets.insert(i);
            }
            None => report
                .notes
                .push(format!("no record at or before line {line}")),
        }
    }
    let line_filtered = !file.lines.is_empty();

    let before = config_entries(&ctx);
    let mut runner = new_runner(&ctx);
    for (i, record) in records.into_iter().enumerate() {
        if let Record::Halt { .. } = record {
            break;
        }
        let is_query = matches!(
            record,
            Record::Query { .. } | Record::System { .. } | Record::Let { .. }
        );
        if line_filtered && is_query && !targets.contains(&i) {
            report.skipped += 1;
            continue;
        }
        if is_query || matches!(record, Record::Statement { .. }) {
            report.ran += 1;
        }
        if let Err(e) = runner.run_async(record).await {
            report.failures.push(e.display(colorize).to_string());
        }
    }
    runner.shutdown_async().await;

    let after = config_entries(&ctx);
    let show = |v: Option<&Option<String>>| match v {
        Some(Some(v)) => v.clone(),
        Some(None) => "(unset)".to_string(),
        None => "(absent)".to_string(),
    };
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for key in keys {
        let (b, a) = (before.get(key), after.get(key));
        if b != a {
            report.failures.push(format!(
                "setting `{key}` was changed by SET and not reverted by the end of the file \
                 ({} -> {}); add `SET {key} = ...` (or `RESET {key}`) at the end",
                show(b),
                show(a)
            ));
        }
    }

    report.elapsed = start.elapsed();
    report
}

/// Empties the scratch folder of `file` (what an earlier run wrote there must not be read).
fn fresh_scratch(file: &TestFile) -> Result<(), String> {
    if let Some(stem) = file.path.file_stem() {
        let scratch = Path::new(SCRATCH_DIR).join(stem);
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    }
    Ok(())
}

/// `--complete`: rewrites the expected output of `file` in place.
async fn complete_file(file: &TestFile) -> Result<(), String> {
    fresh_scratch(file)?;
    let ctx = new_context().map_err(|e| format!("cannot create the session: {e}"))?;
    let mut runner = new_runner(&ctx);
    let result = runner
        .update_test_file(
            &file.path,
            " ",
            value_validator,
            value_normalizer,
            strict_column_validator,
        )
        .await
        .map_err(|e| e.to_string());
    runner.shutdown_async().await;
    result
}

fn print_report(report: &FileReport) {
    let status = if report.failures.is_empty() {
        "ok"
    } else {
        "FAILED"
    };
    let skipped = if report.skipped > 0 {
        format!(", {} skipped by line filter", report.skipped)
    } else {
        String::new()
    };
    println!(
        "{} ... {status} ({} records{skipped}, {:.2}s)",
        report.name,
        report.ran,
        report.elapsed.as_secs_f64()
    );
    for note in &report.notes {
        println!("  note: {note}");
    }
    for failure in &report.failures {
        println!("{}", failure.trim_end());
        println!();
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    if let Err(e) = normalize::check_strictness() {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let options = match parse_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let files = match select_files(&options) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: cannot list {TEST_DIR}/: {e}");
            return ExitCode::FAILURE;
        }
    };

    if options.list {
        // no ignored tests; nextest lists with `--ignored` too
        if !options.ignored {
            for file in &files {
                println!("{}: test", file.name);
            }
            if !options.format_terse {
                println!("\n{} tests, 0 benchmarks", files.len());
            }
        }
        return ExitCode::SUCCESS;
    }
    if options.ignored {
        println!("0 passed, 0 failed");
        return ExitCode::SUCCESS;
    }
    if files.is_empty() && !options.filters.is_empty() {
        println!("no .slt file matches the filters");
    }

    if options.complete {
        let mut failed = vec![];
        for file in &files {
            if !file.lines.is_empty() {
                println!("{}: line filters are ignored by --complete", file.name);
            }
            match complete_file(file).await {
                Ok(()) => println!("{} ... completed", file.name),
                Err(e) => {
                    println!("{} ... FAILED to complete: {e}", file.name);
                    failed.push(file.name.clone());
                }
            }
        }
        println!();
        println!(
            "{} passed, {} failed",
            files.len() - failed.len(),
            failed.len()
        );
        return if failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    let colorize = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let jobs = options.jobs.unwrap_or(DEFAULT_JOBS);
    let start = Instant::now();
    let mut pending = files.into_iter();
    let mut running = JoinSet::new();
    let mut names = BTreeMap::new();
    let mut passed = 0;
    let mut failed: Vec<String> = vec![];
    loop {
        while running.len() < jobs {
            let Some(file) = pending.next() else { break };
            let name = file.name.clone();
            let id = running.spawn(run_file(file, colorize)).id();
            names.insert(id, name);
        }
        let Some(joined) = running.join_next_with_id().await else {
            break;
        };
        match joined {
            Ok((_, report)) => {
                print_report(&report);
                if report.failures.is_empty() {
                    passed += 1;
                } else {
                    failed.push(format!(
                        "{} ({} failures)",
                        report.name,
                        report.failures.len()
                    ));
                }
            }
            Err(e) => {
                let name = names.get(&e.id()).cloned().unwrap_or_default();
                let why = if e.is_panic() {
                    let payload = e.into_panic();
                    payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panic".to_string())
                } else {
                    e.to_string()
                };
                println!("{name} ... FAILED (panicked: {why})\n");
                failed.push(format!("{name} (panicked)"));
            }
        }
    }

    println!();
    if !failed.is_empty() {
        failed.sort();
        println!("failed files:");
        for f in &failed {
            println!("    {f}");
        }
        println!();
    }
    println!("finished in {:.2}s", start.elapsed().as_secs_f64());
    println!("{passed} passed, {} failed", failed.len());
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
