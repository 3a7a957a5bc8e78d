//! The `variant-sql` program: arguments, session set-up and the choice between `-c` / `-f` and
//! the interactive REPL.
use std::env;
use std::path::Path;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use datafusion::config::{ConfigOptions, SpillCompression};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::context::SessionConfig;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::ExplainFormat;
use datafusion::prelude::SessionContext;
use datafusion_cli::catalog::DynamicObjectStoreCatalog;
use datafusion_cli::functions::ParquetMetadataFunc;
use datafusion_cli::object_storage::instrumented::InstrumentedObjectStoreRegistry;
use datafusion_cli::object_storage::{StdinCarriesCommands, is_stdin_location};
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::{MaxRows, PrintOptions};

use datafusion_parquet_variant::memory_pool::fit_to_pool;

use crate::context::VariantCliContext;
use crate::exec::{exec_commands, exec_files};
use crate::memory::MemoryArgs;
use crate::object_stores::EnvObjectStoreRegistry;
use crate::progress::{ProgressMode, ProgressRule, progress_shown};
use crate::repl::exec_from_repl;
use crate::sample::{TABLE_NAME, register_sample};

/// The output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// An aligned text table (at most `--maxrows` rows).
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// Tab-separated values with a header line.
    Tsv,
    /// One JSON array of row objects; variants are embedded as JSON values.
    Json,
    /// One JSON object per line; variants are embedded as JSON values.
    NdJson,
}

impl From<OutputFormat> for PrintFormat {
    fn from(format: OutputFormat) -> Self {
        match format {
            OutputFormat::Table => PrintFormat::Table,
            OutputFormat::Csv => PrintFormat::Csv,
            OutputFormat::Tsv => PrintFormat::Tsv,
            OutputFormat::Json => PrintFormat::Json,
            OutputFormat::NdJson => PrintFormat::NdJson,
        }
    }
}

/// Run SQL over Parquet, CSV and JSON files with first-class VARIANT support (DataFusion 55).
///
/// Without -c or -f, starts an interactive shell. The sample table `events` (id, ts, kind,
/// payload VARIANT) is available unless --no-sample is given.
#[derive(Debug, Parser, PartialEq)]
#[command(version, about, long_about, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `worker`: serve as a worker of a cluster instead of running SQL.
    #[cfg(feature = "distributed")]
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Execute the given SQL (may be repeated; each may hold several `;`-separated statements),
    /// then exit.
    #[arg(short = 'c', long = "command", num_args = 1.., value_parser = parse_command)]
    pub commands: Vec<String>,

    /// Execute the SQL statements in the given file(s), then exit (runs before -c).
    #[arg(short = 'f', long = "file", num_args = 1.., value_parser = parse_file)]
    pub files: Vec<String>,

    /// Output format. Variants print as JSON in every format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// Print only results: no banner, no row counts or timings.
    #[arg(short, long)]
    pub quiet: bool,

    /// The maximum number of rows the table format shows: a number, or `inf` for no limit.
    #[arg(long, default_value = "40")]
    pub maxrows: MaxRows,

    /// The progress line of statements running longer than two seconds (rows and bytes read,
    /// files done, time) on stderr: 'auto' when stderr is a terminal, 'always', or 'never'.
    /// Never with -q or the csv, tsv, json and nd-json formats.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,

    /// Do not register the sample table `events`.
    #[arg(long)]
    pub no_sample: bool,

    /// Syntax highlighting in the interactive shell.
    #[arg(long)]
    pub color: bool,

    /// Run in this directory: relative file names and LOCATIONs resolve against it.
    #[arg(short = 'p', long, value_parser = parse_data_dir)]
    pub data_path: Option<String>,

    /// The number of rows in each batch a query produces (DataFusion's default when not given).
    #[arg(short = 'b', long, value_parser = parse_batch_size)]
    pub batch_size: Option<usize>,

    /// The memory pool: -m, --mem-pool-type, --top-memory-consumers.
    #[command(flatten)]
    pub memory: MemoryArgs,

    /// Run every query on these datafusion-distributed workers (`variant-sql worker`):
    /// `host:port[,host:port...]`. Every worker must reach the files a query reads (shared
    /// paths or object stores).
    #[cfg(feature = "distributed")]
    #[arg(long, env = "VARIANT_SQL_WORKERS", value_parser = parse_workers)]
    pub workers: Option<String>,

    /// The file holding the cluster's token, which every call to a worker carries (else the
    /// environment variable VARIANT_SQL_WORKER_TOKEN, where set).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "FILE", requires = "workers")]
    pub worker_token_file: Option<std::path::PathBuf>,

    /// The CA certificates (PEM) that `https://` workers' certificates must chain to (the
    /// system's roots when not given).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "PEM_FILE", requires = "workers")]
    pub worker_ca: Option<std::path::PathBuf>,

    /// Run sqllogictest files instead of SQL: files, folders (searched for `.slt` files) or
    /// FILE:LINE (only that query). Each file runs in a fresh session with the plugin, compared
    /// as this project's own suite is; exits non-zero when a file fails.
    #[arg(long = "slt", num_args = 1.., value_name = "FILE_OR_DIR")]
    pub slt: Vec<String>,

    /// With --slt: rewrite the files' expected output in place.
    #[arg(long, requires = "slt")]
    pub complete: bool,
}

/// What `variant-sql` runs instead of SQL.
#[cfg(feature = "distributed")]
#[derive(Debug, clap::Subcommand, PartialEq)]
pub enum Command {
    /// Serve as a datafusion-distributed worker: runs the parts of queries that a coordinator
    /// (`variant-sql --workers`, or an application with our coordinator session) sends, until
    /// SIGTERM or Ctrl-C. Object stores come from the environment (AWS_*, GOOGLE_*).
    Worker(crate::worker::WorkerArgs),
}

impl Args {
    /// True when no -c or -f is given: the REPL reads SQL from the terminal (or piped stdin).
    pub fn repl_mode(&self) -> bool {
        self.commands.is_empty() && self.files.is_empty() && self.slt.is_empty()
    }
}

fn parse_command(command: &str) -> Result<String, String> {
    if command.trim().is_empty() {
        Err("-c expects a non-empty SQL string".to_string())
    } else {
        Ok(command.to_string())
    }
}

fn parse_data_dir(dir: &str) -> Result<String, String> {
    if Path::new(dir).is_dir() {
        Ok(dir.to_string())
    } else {
        Err(format!("Invalid data directory '{dir}'"))
    }
}

fn parse_batch_size(size: &str) -> Result<usize, String> {
    match size.parse::<usize>() {
        Ok(size) if size > 0 => Ok(size),
        _ => Err(format!("Invalid batch size '{size}'")),
    }
}

#[cfg(feature = "distributed")]
fn parse_workers(list: &str) -> Result<String, String> {
    datafusion_parquet_variant::distributed::workers::parse_worker_urls(list)
        .map(|_| list.to_string())
        .map_err(|e| e.strip_backtrace())
}

fn parse_file(file: &str) -> Result<String, String> {
    if Path::new(file).is_file() || is_stdin_location(file) {
        Ok(file.to_string())
    } else {
        Err(format!("no such file: '{file}'"))
    }
}

/// The session configuration: DataFusion's `DATAFUSION_*` environment variables, plus
/// datafusion-cli's defaults (tree EXPLAIN, `NULL` shown for nulls, information schema).
fn session_config(args: &Args) -> Result<SessionConfig> {
    let mut options = ConfigOptions::from_env()?;
    if env::var_os("DATAFUSION_EXPLAIN_FORMAT").is_none() {
        options.explain.format = ExplainFormat::Tree;
    }
    if env::var_os("DATAFUSION_FORMAT_NULL").is_none() {
        options.format.null = String::from("NULL");
    }
    // spill files of sorts past the memory limit compressed: variant rows shrink severalfold,
    // and lz4 costs little beside the disk it saves
    if env::var_os("DATAFUSION_EXECUTION_SPILL_COMPRESSION").is_none() {
        options.execution.spill_compression = SpillCompression::Lz4Frame;
    }
    // under -m, batches and the sorts' merge headroom small enough for a sort of wide variant
    // rows to spill within its share of the pool; what the environment sets stays
    if let Some(limit) = args.memory.memory_limit {
        let mut fitted = options.clone();
        fit_to_pool(&mut fitted, limit);
        if env::var_os("DATAFUSION_EXECUTION_BATCH_SIZE").is_none() {
            options.execution.batch_size = fitted.execution.batch_size;
        }
        if env::var_os("DATAFUSION_EXECUTION_SORT_SPILL_RESERVATION_BYTES").is_none() {
            options.execution.sort_spill_reservation_bytes =
                fitted.execution.sort_spill_reservation_bytes;
        }
    }
    let mut config = SessionConfig::from(options).with_information_schema(true);
    if let Some(batch_size) = args.batch_size {
        config = config.with_batch_size(batch_size);
    }
    if args.repl_mode() || args.files.iter().any(|f| is_stdin_location(f)) {
        // stdin carries the SQL, so it cannot also be a table's LOCATION.
        config = config.with_extension(Arc::new(StdinCarriesCommands));
    }
    Ok(config)
}

/// Builds the session: everything of [`datafusion_parquet_variant::register_all_with_state`] (functions, `v:path`,
/// casts, the `VARIANT` type name), url tables (`FROM 'file.parquet'`), object stores registered
/// on demand, `parquet_metadata()` and (unless `--no-sample`) the sample table.
/// Returns the session and the number of sample rows registered.
pub async fn build_session(
    args: &Args,
    registry: Arc<InstrumentedObjectStoreRegistry>,
) -> Result<(VariantCliContext, usize)> {
    // stores a statement registers (CREATE EXTERNAL TABLE, with its options) are datafusion-cli's
    // instrumented ones; the others (a table function's location) come from the environment

    let stores = EnvObjectStoreRegistry::over(registry);
    let mut runtime = RuntimeEnvBuilder::new().with_object_store_registry(Arc::new(stores));
    let config = session_config(args)?;
    if let Some(pool) = args.memory.pool(config.options()) {
        runtime = runtime.with_memory_pool(pool);
    }
    let runtime = runtime.build_arc()?;
    // Built from a state builder: the `VARIANT` type name needs a type planner, which DataFusion
    // only accepts at build time.
    let builder = SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .with_runtime_env(runtime);
    #[cfg(feature = "distributed")]
    let state = match &args.workers {
        Some(list) => {
            use datafusion_parquet_variant::distributed::auth::{WorkerSecurity, WorkerToken};
            use datafusion_parquet_variant::distributed::workers::{
                WorkerList, coordinator_session_state, parse_worker_urls,
            };
            let token = WorkerToken::from_file_or_env(args.worker_token_file.as_deref())?;
            let mut security = WorkerSecurity::default().with_token(token);
            if let Some(ca) = &args.worker_ca {
                security = security.with_ca_file(ca)?;
            }
            let workers = WorkerList::new(parse_worker_urls(list)?).with_security(security);
            coordinator_session_state(builder, workers)?
        }
        None => datafusion_parquet_variant::register_all_with_state(builder).build(),
    };
    #[cfg(not(feature = "distributed"))]
    let state = datafusion_parquet_variant::register_all_with_state(builder).build();
    // the progress line's rule last: the plan it sees is the one that runs
    let state = SessionStateBuilder::new_from_existing(state)
        .with_physical_optimizer_rule(Arc::new(ProgressRule))
        .build();
    let ctx = SessionContext::new_with_state(state).enable_url_table();
    ctx.refresh_catalogs().await?;
    ctx.register_catalog_list(Arc::new(DynamicObjectStoreCatalog::new(
        ctx.state().catalog_list().clone(),
        ctx.state_weak_ref(),
    )));
    ctx.register_udtf("parquet_metadata", Arc::new(ParquetMetadataFunc {}));
    let rows = if args.no_sample {
        0
    } else {
        register_sample(&ctx, TABLE_NAME).await?
    };
    let progress = progress_shown(args.progress, args.format.into(), args.quiet);
    Ok((VariantCliContext::new(ctx).with_progress(progress), rows))
}

/// Runs the program with `args`: -f files first, then -c commands, or the REPL when neither is
/// given.
pub async fn run(args: Args) -> Result<()> {
    #[cfg(feature = "distributed")]
    if let Some(Command::Worker(worker)) = args.command {
        return crate::worker::run_worker(worker).await;
    }
    if let Some(dir) = &args.data_path {
        env::set_current_dir(dir)?;
    }
    if !args.slt.is_empty() {
        return run_slt(&args).await;
    }
    let registry = Arc::new(InstrumentedObjectStoreRegistry::new());
    let (ctx, sample_rows) = build_session(&args, Arc::clone(&registry)).await?;
    let mut options = PrintOptions {
        format: args.format.into(),
        quiet: args.quiet,
        // `--maxrows` is the table format's: datafusion-cli's loop would also cut CSV and TSV
        // output after that many rows (rounded up to a batch)
        maxrows: match args.format {
            OutputFormat::Table => args.maxrows,
            _ => MaxRows::Unlimited,
        },
        color: args.color,
        instrumented_registry: registry,
    };
    // The banner belongs to the interactive shell: with -c or -f, stdout holds only the
    // results (valid CSV or JSON with those formats).
    if !args.quiet && args.repl_mode() {
        let version = env!("CARGO_PKG_VERSION");
        let cli = datafusion_cli::DATAFUSION_CLI_VERSION;
        if sample_rows > 0 {
            println!(
                "variant-sql {version} (DataFusion {cli}); sample table `{TABLE_NAME}`: \
                 {sample_rows} rows (id, ts, kind, payload VARIANT)"
            );
        } else {
            println!("variant-sql {version} (DataFusion {cli})");
        }
        println!(
            "Type SQL ending with ';', \\? for help, \\q to quit. Try: SELECT kind, payload FROM events LIMIT 3;"
        );
    }
    if args.repl_mode() {
        return exec_from_repl(&ctx, &mut options)
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)));
    }
    if !args.files.is_empty() {
        exec_files(&ctx, args.files, &options).await?;
    }
    if !args.commands.is_empty() {
        exec_commands(&ctx, args.commands, &options).await?;
    }
    Ok(())
}

/// `--slt`: runs (or with `--complete` rewrites) the sqllogictest files the arguments name.
async fn run_slt(args: &Args) -> Result<()> {
    use datafusion_parquet_variant::slt::{
        SessionFactory, collect_files, complete_files, default_session, run_files,
    };
    let files = collect_files(&args.slt)?;
    if files.is_empty() {
        return Err(DataFusionError::Execution(format!(
            "no .slt file in {}",
            args.slt.join(", ")
        )));
    }
    let session: SessionFactory = Arc::new(default_session);
    let failed = if args.complete {
        complete_files(&files, session).await
    } else {
        let colorize = args.color && std::io::IsTerminal::is_terminal(&std::io::stdout());
        run_files(files, session, 2, colorize).await
    };
    if failed > 0 {
        return Err(DataFusionError::Execution(format!(
            "{failed} sqllogictest file(s) failed"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion_cli::pool_type::PoolType;

    #[test]
    fn parses_flags_like_datafusion_cli() {
        let args = Args::try_parse_from([
            "variant-sql",
            "-c",
            "SELECT 1",
            "-c",
            "SELECT 2",
            "--format",
            "nd-json",
            "-q",
            "--maxrows",
            "inf",
            "--no-sample",
        ])
        .unwrap();
        assert_eq!(args.commands, ["SELECT 1", "SELECT 2"]);
        assert_eq!(args.format, OutputFormat::NdJson);
        assert!(args.quiet && args.no_sample && !args.repl_mode());
        assert_eq!(args.maxrows, MaxRows::Unlimited);

        let args = Args::try_parse_from(["variant-sql"]).unwrap();
        assert!(args.repl_mode());
        assert_eq!(args.format, OutputFormat::Table);
        assert_eq!(args.maxrows, MaxRows::Limited(40));

        assert!(Args::try_parse_from(["variant-sql", "-c", ""]).is_err());
        assert!(Args::try_parse_from(["variant-sql", "-f", "/no/such/file.sql"]).is_err());
        assert!(Args::try_parse_from(["variant-sql", "--format", "automatic"]).is_err());
    }

    /// datafusion-cli's -m, --mem-pool-type, -b and -p, with its size suffixes (binary units).
    #[test]
    fn parses_memory_batch_and_directory_flags() {
        let args = Args::try_parse_from([
            "variant-sql",
            "-m",
            "512m",
            "--mem-pool-type",
            "greedy",
            "-b",
            "100",
            "-p",
            ".",
        ])
        .unwrap();
        assert_eq!(args.memory.memory_limit, Some(512 << 20));
        assert_eq!(args.memory.mem_pool_type, PoolType::Greedy);
        assert_eq!(args.batch_size, Some(100));
        assert_eq!(args.data_path.as_deref(), Some("."));
        assert!(args.memory.pool(&ConfigOptions::default()).is_some());
        // the fair pool unless told otherwise (datafusion-cli's default is greedy)
        let args = Args::try_parse_from(["variant-sql"]).unwrap();
        assert_eq!(args.memory.mem_pool_type, PoolType::Fair);
        assert!(args.memory.pool(&ConfigOptions::default()).is_none());

        for bad in [
            ["-b", "0"],
            ["-m", "lots"],
            ["-p", "/no/such/dir"],
            ["--mem-pool-type", "x"],
        ] {
            assert!(
                Args::try_parse_from(["variant-sql", bad[0], bad[1]]).is_err(),
                "{bad:?}"
            );
        }
    }

    /// `variant-sql worker --listen ADDR [-m ..]`, and `--workers` (not beside a subcommand).
    #[cfg(feature = "distributed")]
    #[test]
    fn parses_worker_and_coordinator_flags() {
        let args = Args::try_parse_from([
            "variant-sql",
            "worker",
            "--listen",
            "127.0.0.1:0",
            "-m",
            "1g",
        ])
        .unwrap();
        let Some(Command::Worker(worker)) = args.command else {
            panic!("{args:?}")
        };
        assert_eq!(worker.listen.to_string(), "127.0.0.1:0");
        assert_eq!(worker.memory.memory_limit, Some(1 << 30));
        assert!(Args::try_parse_from(["variant-sql", "worker"]).is_err());
        assert!(Args::try_parse_from(["variant-sql", "worker", "--listen", "nowhere"]).is_err());
        assert!(
            Args::try_parse_from(["variant-sql", "-c", "SELECT 1", "worker", "--listen", ":1"])
                .is_err()
        );

        let args = Args::try_parse_from(["variant-sql", "--workers", "a:1,b:2"]).unwrap();
        assert_eq!(args.workers.as_deref(), Some("a:1,b:2"));
        assert!(args.command.is_none());
        assert!(Args::try_parse_from(["variant-sql", "--workers", "a:1,ftp://b:2"]).is_err());
        let args = Args::try_parse_from([
            "variant-sql",
            "--workers",
            "https://a:1",
            "--worker-token-file",
            "token",
            "--worker-ca",
            "ca.pem",
        ])
        .unwrap();
        assert_eq!(args.worker_token_file.unwrap().to_str(), Some("token"));
        assert_eq!(args.worker_ca.unwrap().to_str(), Some("ca.pem"));
        // (a token for no workers is a mistake)
        assert!(Args::try_parse_from(["variant-sql", "--worker-token-file", "token"]).is_err());

        let args = Args::try_parse_from([
            "variant-sql",
            "worker",
            "--listen",
            "0.0.0.0:7000",
            "--token-file",
            "token",
            "--tls-cert",
            "w.pem",
            "--tls-key",
            "w.key",
            "--tls-ca",
            "ca.pem",
        ])
        .unwrap();
        let Some(Command::Worker(worker)) = args.command else {
            panic!("{args:?}")
        };
        assert_eq!(worker.token_file.unwrap().to_str(), Some("token"));
        assert!(!worker.insecure);
        // a certificate needs its key
        assert!(
            Args::try_parse_from([
                "variant-sql",
                "worker",
                "--listen",
                ":1",
                "--tls-cert",
                "w.pem"
            ])
            .is_err()
        );
    }
}
