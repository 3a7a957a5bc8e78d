//! `variant-sql`: run SQL with first-class VARIANT support. See `variant-sql --help`.
use std::process::ExitCode;

use clap::Parser;
use datafusion_parquet_variant::cli::app::{Args, run};

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
