//! sqllogictest for Variant: run any `.slt` files against a session with the plugin, as our own
//! suite runs (`variant-sql --slt FILE_OR_DIR...`, or from Rust).
//!
//! [`VariantSltDb`] is the engine: sqllogictest's async DB over a `SessionContext` the caller
//! builds (so an application adds its own tables and functions), with variant columns printed as
//! JSON and results compared as DataFusion's own harness compares them ([`normalize`]: strict
//! column types `B I R T D P ?`, values exact but for trailing whitespace). [`run_files`] runs
//! files each in a fresh session from a [`SessionFactory`].
//!
//! ```no_run
//! # async fn example() {
//! use std::sync::Arc;
//! use datafusion_parquet_variant::slt::{collect_files, default_session, run_files};
//!
//! let files = collect_files(&["my_tests/".to_string()]).unwrap();
//! // A session of your own: register tables and functions, then our plugin.
//! let failed = run_files(files, Arc::new(default_session), 2, false).await;
//! assert_eq!(failed, 0);
//! # }
//! ```

mod engine;
pub mod normalize;
mod runner;

pub use engine::{EngineError, PlanRoundTrip, VariantSltDb};
pub use runner::{
    SCRATCH_DIR, SessionFactory, SltFile, collect_files, complete_files, default_session,
    find_slt_files, run_files,
};
