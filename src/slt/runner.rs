//! Running `.slt` files: each in a fresh session from a [`SessionFactory`], every record run
//! even after a failure, a report per file and the closing `N passed, M failed` line (counting
//! files); `--complete` rewrites expected output in place.
//!
//! Each file may write under `/tmp/datafusion-parquet-variant-slt/<file stem>/`, which is emptied
//! before the file runs (so `INSERT`s do not accumulate across runs). A file that leaves a
//! session option changed by `SET` at its end fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{MakeConnection, Record, Runner, parse_file, strict_column_validator};
use tokio::task::JoinSet;

use super::engine::{EngineError, VariantSltDb};
use super::normalize::{DFColumnType, value_normalizer, value_validator};

/// Parent of the per-file scratch folders.
pub const SCRATCH_DIR: &str = "/tmp/datafusion-parquet-variant-slt";

/// Makes the fresh session each file runs in.
pub type SessionFactory = Arc<dyn Fn() -> datafusion::error::Result<SessionContext> + Send + Sync>;

/// The session our own suite runs in: DataFusion's defaults with target partitions fixed at 4
/// (as DataFusion's harness does, so plans do not depend on the machine) and everything of
/// [`crate::register_all_with_state`].
pub fn default_session() -> datafusion::error::Result<SessionContext> {
    let config = SessionConfig::new().with_target_partitions(4);
    let builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    let state = crate::register_all_with_state(builder).build();
    Ok(SessionContext::new_with_state(state))
}

/// One `.slt` file to run.
#[derive(Debug, Clone)]
pub struct SltFile {
    /// Where it is.
    pub path: PathBuf,
    /// How reports name it.
    pub name: String,
    /// The lines of a `FILE:LINE` selection: only the query records holding them run
    /// (statements still run, to set up state). Empty: every record.
    pub lines: Vec<u32>,
}

/// The `.slt` files that `args` name: each a file, a folder (searched recursively, files
/// sorted by path) or `FILE:LINE`. A file named twice runs once, with the lines of both.
pub fn collect_files(args: &[String]) -> std::io::Result<Vec<SltFile>> {
    let mut files: Vec<SltFile> = vec![];
    for arg in args {
        let (path, line) = match arg.rsplit_once(':') {
            Some((path, line)) if line.parse::<u32>().is_ok() => {
                (path, Some(line.parse::<u32>().expect("checked")))
            }
            _ => (arg.as_str(), None),
        };
        let path = Path::new(path);
        let mut found = vec![];
        if path.is_dir() {
            find_slt_files(path, &mut found)?;
            found.sort();
        } else if path.is_file() {
            found.push(path.to_path_buf());
        } else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no such file or folder: {}", path.display()),
            ));
        }
        for path in found {
            let name = path.display().to_string();
            match files.iter_mut().find(|f| f.path == path) {
                Some(file) => file.lines.extend(line),
                None => files.push(SltFile {
                    path,
                    name,
                    lines: line.into_iter().collect(),
                }),
            }
        }
    }
    Ok(files)
}

/// Every `.slt` file below `dir`.
pub fn find_slt_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
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

/// Runs `files`, `jobs` at a time, each in a fresh session from `session`; prints a report per
/// file, the failed files and the closing `N passed, M failed` line. Returns how many failed.
pub async fn run_files(
    files: Vec<SltFile>,
    session: SessionFactory,
    jobs: usize,
    colorize: bool,
) -> usize {
    if let Err(e) = super::normalize::check_strictness() {
        println!("error: {e}");
        return files.len().max(1);
    }
    let start = Instant::now();
    let mut pending = files.into_iter();
    let mut running = JoinSet::new();
    let mut names = BTreeMap::new();
    let mut passed = 0;
    let mut failed: Vec<String> = vec![];
    loop {
        while running.len() < jobs.max(1) {
            let Some(file) = pending.next() else { break };
            let name = file.name.clone();
            let id = running
                .spawn(run_file(file, Arc::clone(&session), colorize))
                .id();
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
    failed.len()
}

/// `--complete`: rewrites the expected output of `files` in place (line selections do not
/// apply); prints a line per file and the closing `N passed, M failed`. Returns how many failed.
pub async fn complete_files(files: &[SltFile], session: SessionFactory) -> usize {
    let mut failed = 0;
    for file in files {
        if !file.lines.is_empty() {
            println!("{}: line filters are ignored by --complete", file.name);
        }
        match complete_file(file, &session).await {
            Ok(()) => println!("{} ... completed", file.name),
            Err(e) => {
                println!("{} ... FAILED to complete: {e}", file.name);
                failed += 1;
            }
        }
    }
    println!();
    println!("{} passed, {failed} failed", files.len() - failed);
    failed
}

/// Makes the connections of a file: all share the file's `SessionContext`.
struct MakeDb(SessionContext);

impl MakeConnection for MakeDb {
    type Conn = VariantSltDb;
    type MakeFuture = std::future::Ready<Result<VariantSltDb, EngineError>>;

    fn make(&mut self) -> Self::MakeFuture {
        std::future::ready(Ok(VariantSltDb::new(self.0.clone())))
    }
}

/// A runner over `ctx` that compares as DataFusion's harness does: strict column types, values
/// exactly (trailing whitespace trimmed only).
fn new_runner(ctx: &SessionContext) -> Runner<VariantSltDb, MakeDb> {
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

async fn run_file(file: SltFile, session: SessionFactory, colorize: bool) -> FileReport {
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
    let ctx = match session() {
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
fn fresh_scratch(file: &SltFile) -> Result<(), String> {
    if let Some(stem) = file.path.file_stem() {
        let scratch = Path::new(SCRATCH_DIR).join(stem);
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    }
    Ok(())
}

/// `--complete`: rewrites the expected output of `file` in place.
async fn complete_file(file: &SltFile, session: &SessionFactory) -> Result<(), String> {
    fresh_scratch(file)?;
    let ctx = session().map_err(|e| format!("cannot create the session: {e}"))?;
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
