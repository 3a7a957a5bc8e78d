//! DataFusion's own sqllogictest suite as a regression guard: the test files that the
//! `datafusion-sqllogictest` 55.2 crate ships, each run in DataFusion's test context (its
//! tables, its strict column types and value comparison) with [`register_all`] applied to the
//! session: our Parquet format and table factory, planners, rewrites, analyzer and optimizer
//! rules all active.
//!
//! Every file listed in `tests/data/datafusion_suite/passing_without_plugin.txt` (the files that
//! pass on plain DataFusion 55.2 from the crate alone; the others need data the crate does not
//! ship, or Postgres) must pass with the plugin, but those in `exceptions.txt`, each with its
//! reason.
//!
//! `DATAFUSION_SUITE=plain cargo test --all-features --test datafusion_suite -- --nocapture` runs every file
//! without the plugin and prints the passing list anew; `DATAFUSION_SUITE=all` runs every file
//! both ways and prints the counts.
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use datafusion::common::DataFusionError;
use datafusion_parquet_variant::register_all;
use datafusion_sqllogictest::{
    DFColumnType, DFOutput, DFSqlLogicTestError, DataFusion, TestContext, df_value_validator,
    setup_scratch_dir, value_normalizer,
};
use futures::StreamExt;
use sqllogictest::{Record, parse_file, strict_column_validator};

/// The longest one file may run.
const FILE_TIMEOUT: Duration = Duration::from_secs(300);

/// The folder of the `datafusion-sqllogictest` crate's sources (as cargo resolved it).
fn suite_crate_dir() -> PathBuf {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata failed");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|package| package["name"] == "datafusion-sqllogictest")
        .expect("datafusion-sqllogictest is a dev-dependency")["manifest_path"]
        .as_str()
        .unwrap()
        .to_string();
    Path::new(&manifest).parent().unwrap().to_path_buf()
}

/// The `.slt` files under `dir`, relative to it.
fn slt_files(dir: &Path, under: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir.join(under)).unwrap() {
        let entry = entry.unwrap();
        let relative = under.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            slt_files(dir, &relative, found);
        } else if relative.extension().is_some_and(|ext| ext == "slt") {
            found.push(relative);
        }
    }
}

/// DataFusion's engine, with the file our Parquet scan names before a read error taken off again
/// (`reading file <url>` caused by DataFusion's error): the suite's expected errors begin with
/// DataFusion's own words.
struct FileNamesStripped(DataFusion);

#[async_trait::async_trait]
impl sqllogictest::AsyncDB for FileNamesStripped {
    type Error = DFSqlLogicTestError;
    type ColumnType = DFColumnType;

    async fn run(&mut self, sql: &str) -> Result<DFOutput, DFSqlLogicTestError> {
        self.0.run(sql).await.map_err(|error| match error {
            DFSqlLogicTestError::DataFusion(DataFusionError::Context(file, inner))
                if file.starts_with("reading file ") =>
            {
                DFSqlLogicTestError::DataFusion(*inner)
            }
            error => error,
        })
    }

    async fn shutdown(&mut self) {
        self.0.shutdown().await
    }

    fn engine_name(&self) -> &str {
        self.0.engine_name()
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await;
    }
}

/// Runs `test_files/<relative>` (the working directory is a copy of the crate) as DataFusion's
/// runner does, with our plugin or without; the errors, if any.
async fn run_file(relative: PathBuf, plugin: bool) -> Result<(), String> {
    let Some(test_ctx) = TestContext::try_new_for_test_file(&relative).await else {
        return Err("DataFusion's runner skips it".to_string());
    };
    if plugin {
        register_all(test_ctx.session_ctx()).map_err(|e| e.to_string())?;
    }
    setup_scratch_dir(&relative).map_err(|e| e.to_string())?;
    let path = Path::new("test_files").join(&relative);
    let records = parse_file(&path).map_err(|e| e.to_string())?;
    let ctx = test_ctx.session_ctx().clone();
    let mut runner = sqllogictest::Runner::new(|| {
        let ctx = ctx.clone();
        let relative = relative.clone();
        async move {
            Ok(FileNamesStripped(DataFusion::new(
                ctx,
                relative,
                indicatif::ProgressBar::hidden(),
            )))
        }
    });
    runner.add_label("Datafusion");
    runner.with_column_validator(strict_column_validator);
    runner.with_normalizer(value_normalizer);
    runner.with_validator(df_value_validator);
    let mut errors = vec![];
    for record in records {
        if let Record::Halt { .. } = record {
            break;
        }
        if let Err(e) = runner.run_async(record).await {
            errors.push(e.to_string());
        }
    }
    runner.shutdown_async().await;
    match errors.first() {
        None => Ok(()),
        Some(first) => Err(format!("{} errors; the first: {first}", errors.len())),
    }
}

/// Runs `files` two at a time, each in its own task with a time limit.
async fn run_files(files: &[PathBuf], plugin: bool) -> BTreeMap<PathBuf, Result<(), String>> {
    futures::stream::iter(files.iter().cloned())
        .map(|relative| async move {
            let task = tokio::spawn(tokio::time::timeout(
                FILE_TIMEOUT,
                run_file(relative.clone(), plugin),
            ));
            let outcome = match task.await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(_)) => Err(format!("timed out after {FILE_TIMEOUT:?}")),
                Err(e) => Err(format!("panicked: {e}")),
            };
            (relative, outcome)
        })
        .buffer_unordered(2)
        .collect()
        .await
}

/// The relative paths listed in `tests/data/datafusion_suite/<name>`, with the text after `#`.
fn listed(name: &str) -> BTreeMap<PathBuf, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/datafusion_suite")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (file, reason) = line.split_once('#').unwrap_or((line, ""));
            (PathBuf::from(file.trim()), reason.trim().to_string())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datafusion_suite_passes_with_the_plugin() {
    // a writable copy of the crate's test files and data, as the working directory (the files
    // write under test_files/scratch and name their data relative to the crate)
    let source = suite_crate_dir();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("datafusion-suite");
    let _ = std::fs::remove_dir_all(&work);
    common::copy_dir(&source.join("test_files"), &work.join("test_files"));
    common::copy_dir(&source.join("data"), &work.join("data"));
    std::env::set_current_dir(&work).unwrap();

    let mode = std::env::var("DATAFUSION_SUITE").unwrap_or_default();
    if mode == "plain" || mode == "all" {
        let mut files = vec![];
        slt_files(Path::new("test_files"), Path::new(""), &mut files);
        files.sort();
        let plain = run_files(&files, false).await;
        let passing: Vec<_> = plain.iter().filter(|(_, r)| r.is_ok()).collect();
        println!(
            "# {} of {} files pass without the plugin",
            passing.len(),
            files.len()
        );
        for (file, _) in &passing {
            println!("{}", file.display());
        }
        for (file, outcome) in &plain {
            if let Err(e) = outcome {
                let first_line = e.lines().next().unwrap_or_default();
                println!(
                    "# fails without the plugin: {}: {first_line}",
                    file.display()
                );
            }
        }
        if mode == "all" {
            let with = run_files(&files, true).await;
            let both = with.iter().filter(|(_, r)| r.is_ok()).count();
            println!("# {both} of {} files pass with the plugin", files.len());
            for (file, outcome) in &with {
                if let (Err(e), Some(Ok(()))) = (outcome, plain.get(file)) {
                    println!("# only without the plugin: {}: {e}", file.display());
                }
            }
        }
        return;
    }

    let passing = listed("passing_without_plugin.txt");
    let exceptions = listed("exceptions.txt");
    assert!(passing.len() > 100, "only {} files listed", passing.len());
    for file in exceptions.keys() {
        assert!(
            passing.contains_key(file),
            "{} is an exception but not in the passing list",
            file.display()
        );
    }
    let files: Vec<_> = passing.keys().cloned().collect();
    for file in &files {
        assert!(
            Path::new("test_files").join(file).exists(),
            "{} is not in the suite",
            file.display()
        );
    }
    let outcomes = run_files(&files, true).await;
    let mut failed = vec![];
    for (file, outcome) in &outcomes {
        match (outcome, exceptions.get(file)) {
            (Err(e), None) => failed.push(format!("{}: {e}", file.display())),
            (Ok(()), Some(_)) => failed.push(format!(
                "{} passes: take it off the exceptions",
                file.display()
            )),
            _ => {}
        }
    }
    let ran = outcomes.len();
    assert!(
        failed.is_empty(),
        "{} of {ran} files fail with the plugin:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
