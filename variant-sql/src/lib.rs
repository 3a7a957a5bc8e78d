//! `variant-sql`: SQL with first-class VARIANT support on the command line, built on
//! [datafusion-parquet-variant](https://docs.rs/datafusion-parquet-variant) and datafusion-cli's
//! library. Its execution loop, REPL and printers run against [`context::VariantCliContext`], a
//! session whose query results have their variants rendered as JSON text
//! (`datafusion_parquet_variant::display::display_variants`), so variants print as JSON in every
//! output format (and as embedded JSON values in `json` / `nd-json`, see [`json_output`]).
//!
//! - [`app`]: arguments and the program's entry point [`app::run`].
//! - [`context`]: the session wrapper handed to datafusion-cli.
//! - [`exec`]: `-c` / `-f` execution, with our JSON printer for `json` / `nd-json`.
//! - [`json_output`]: the JSON printers.
//! - [`memory`]: the memory pool's settings, the program's and its workers'.
//! - [`progress`]: the progress line of long statements on a terminal.
//! - [`repl`]: the interactive shell, datafusion-cli's loop with our statement execution.
//! - `worker` (feature `distributed`): `variant-sql worker`, a datafusion-distributed worker.
//! - [`object_stores`]: object stores made from the environment on first use (workers, and table
//!   functions' locations).
//! - [`sample`]: the bundled sample table `events`; [`rng`] the generator behind it.
#![warn(missing_docs)]

pub mod app;
pub mod context;
pub mod exec;
pub mod json_output;
pub mod memory;
pub mod object_stores;
pub mod progress;
pub mod repl;
pub mod rng;
pub mod sample;
#[cfg(feature = "distributed")]
pub mod worker;
