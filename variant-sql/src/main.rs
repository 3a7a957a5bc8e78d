//! `variant-sql`: run SQL with first-class VARIANT support. See `variant-sql --help`.
use std::process::ExitCode;

use clap::Parser;
use variant_sql::app::{Args, run};

#[tokio::main]
async fn main() -> ExitCode {
    // warnings of ours on stderr (a skipped corrupt file); RUST_LOG chooses others
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("datafusion_parquet_variant=warn"),
    )
    .init();
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
