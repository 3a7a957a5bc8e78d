//! The `variant-sql` program: arguments, session set-up and the choice between `-c` / `-f` and
//! the interactive REPL.
use std::env;
use std::path::Path;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::context::SessionConfig;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::ExplainFormat;
use datafusion::prelude::SessionContext;
use datafusion_cli::catalog::DynamicObjectStoreCatalog;
use datafusion_cli::exec::exec_from_repl;
use datafusion_cli::functions::ParquetMetadataFunc;
use datafusion_cli::object_storage::instrumented::InstrumentedObjectStoreRegistry;
use datafusion_cli::object_storage::{StdinCarriesCommands, is_stdin_location};
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::{MaxRows, PrintOptions};

use super::context::VariantCliContext;
use super::exec::{exec_commands, exec_files};
use super::sample::{TABLE_NAME, register_sample};

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
#[command(version, about, long_about)]
pub struct Args {
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

    /// Do not register the sample table `events`.
    #[arg(long)]
    pub no_sample: bool,

    /// Syntax highlighting in the interactive shell.
    #[arg(long)]
    pub color: bool,
}

impl Args {
    /// True when no -c or -f is given: the REPL reads SQL from the terminal (or piped stdin).
    pub fn repl_mode(&self) -> bool {
        self.commands.is_empty() && self.files.is_empty()
    }
}

fn parse_command(command: &str) -> Result<String, String> {
    if command.trim().is_empty() {
        Err("-c expects a non-empty SQL string".to_string())
    } else {
        Ok(command.to_string())
    }
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
    let mut config = SessionConfig::from(options).with_information_schema(true);
    if args.repl_mode() || args.files.iter().any(|f| is_stdin_location(f)) {
        // stdin carries the SQL, so it cannot also be a table's LOCATION.
        config = config.with_extension(Arc::new(StdinCarriesCommands));
    }
    Ok(config)
}

/// Builds the session: everything of [`crate::register_all_with_state`] (functions, `v:path`,
/// casts, the `VARIANT` type name), url tables (`FROM 'file.parquet'`), object stores registered
/// on demand, `parquet_metadata()` and (unless `--no-sample`) the sample table.
/// Returns the session and the number of sample rows registered.
pub async fn build_session(
    args: &Args,
    registry: Arc<InstrumentedObjectStoreRegistry>,
) -> Result<(VariantCliContext, usize)> {
    let runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(registry)
        .build_arc()?;
    // Built from a state builder: the `VARIANT` type name needs a type planner, which DataFusion
    // only accepts at build time.
    let state = crate::register_all_with_state(
        SessionStateBuilder::new()
            .with_default_features()
            .with_config(session_config(args)?)
            .with_runtime_env(runtime),
    )
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
    Ok((VariantCliContext::new(ctx), rows))
}

/// Runs the program with `args`: -f files first, then -c commands, or the REPL when neither is
/// given.
pub async fn run(args: Args) -> Result<()> {
    let registry = Arc::new(InstrumentedObjectStoreRegistry::new());
    let (ctx, sample_rows) = build_session(&args, Arc::clone(&registry)).await?;
    let mut options = PrintOptions {
        format: args.format.into(),
        quiet: args.quiet,
        maxrows: args.maxrows,
        color: args.color,
        instrumented_registry: registry,
    };
    if !args.quiet {
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
        if args.repl_mode() {
            println!(
                "Type SQL ending with ';', \\? for help, \\q to quit. Try: SELECT kind, payload FROM events LIMIT 3;"
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
