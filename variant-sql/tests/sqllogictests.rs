//! sqllogictest runner for the `.slt` files in the repository's `sqllogictests/`: the library's
//! runner (`datafusion_parquet_variant::slt`, the same that `variant-sql --slt` uses) behind
//! libtest's command line. It runs from the repository's root, as the files' paths to their data
//! (`sqllogictests/data/...`) are relative to it.
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

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use datafusion_parquet_variant::slt::{
    SessionFactory, SltFile, complete_files, default_session, find_slt_files, run_files,
};

/// Folder of the test files, relative to the repository's root.
const TEST_DIR: &str = "sqllogictests";
/// The repository's root (this crate's folder is below it).
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
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

/// The files to run, sorted by name, after filters and `--skip`.
fn select_files(options: &Options) -> std::io::Result<Vec<SltFile>> {
    let dir = Path::new(TEST_DIR);
    let mut paths = vec![];
    find_slt_files(dir, &mut paths)?;
    let mut files: Vec<SltFile> = paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            SltFile {
                path,
                name,
                lines: vec![],
            }
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));

    // absolute paths (an editor's) are taken below the repository's root, the current folder
    let root_prefix = format!("{}/", std::env::current_dir()?.display());
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
                .strip_prefix(&root_prefix)
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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    if let Err(e) = std::env::set_current_dir(REPO) {
        eprintln!("error: cannot enter the repository's root {REPO}: {e}");
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

    let session: SessionFactory = Arc::new(default_session);
    let failed = if options.complete {
        complete_files(&files, session).await
    } else {
        let colorize = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        run_files(
            files,
            session,
            options.jobs.unwrap_or(DEFAULT_JOBS),
            colorize,
        )
        .await
    };
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
