//! # datafusion-parquet-variant
//!
//! Makes the Parquet **Variant** type a first-class citizen of Apache DataFusion SQL: Spark's
//! variant functions, the `v:path` syntax, casts, and Parquet tables that read and write
//! VARIANT columns (shredded ones with their paths read from the leaves they need).
//!
//! One call gives a session everything:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! use datafusion::arrow::array::AsArray;
//! use datafusion::prelude::SessionContext;
//!
//! let ctx = SessionContext::new();
//! datafusion_parquet_variant::register_all(&ctx)?;
//! let batches = ctx
//!     .sql(r#"SELECT to_json(v), v:user.id::int AS id
//!             FROM (SELECT parse_json('{"user": {"id": 7}, "amount": 12.50}') AS v)"#)
//!     .await?
//!     .collect()
//!     .await?;
//! assert_eq!(batches[0].column(0).as_string::<i32>().value(0), r#"{"amount":12.5,"user":{"id":7}}"#);
//! assert_eq!(batches[0].column(1).as_primitive::<datafusion::arrow::datatypes::Int32Type>().value(0), 7);
//! # Ok(())
//! # }
//! ```
//!
//! [`register_all_with_state`] does the same on a `SessionStateBuilder` (`register_all` builds
//! the context's state again from itself with it); [`session_context`] is a session built that
//! way. The default features are none: Delta tables (`delta`), datafusion-distributed
//! sessions (`distributed`) and the sqllogictest engine (`slt`) are opt-in, and the command-line
//! program is a crate of its own (`variant-sql`).
//!
//! The modules, bottom-up (each uses only those before it; `ARCHITECTURE.md` has the map):
//!
//! - [`codec`]: our own implementation of the Variant binary encoding: zero-copy views, validation
//!   of untrusted bytes, a builder, a streaming JSON parser and a JSON writer.
//! - [`variant_array`]: variant columns in Arrow (`arrow.parquet.variant` struct arrays).
//! - [`variant_schema`]: the types `schema_of_variant` reports.
//! - [`cast`]: variant values to SQL types with Spark's rules.
//! - [`shredding`]: shredded variants (`typed_value`): reassembly, shredding, inference.
//! - [`from_arrow`]: SQL values of any Arrow type to variants.
//! - [`functions`]: the SQL functions (`parse_json`, `to_json`, `variant_get`, ...).
//! - [`display`]: renders variant columns as JSON for query output.
//! - [`sql`]: planning: `v:path`, casts, the `VARIANT` type, `variant_explode` in FROM.
//! - [`parquet`]: the Parquet format, tables and sink for variant columns, and
//!   [`parquet::variant_scan`] for Parquet scans built elsewhere.
//! - [`json_files`]: JSON files read into variants (`read_json_variant`, `STORED AS
//!   JSON_VARIANT`).
//! - `delta` (feature `delta`): Delta Lake tables read by our Parquet scan.
//! - [`plan_codec`]: `datafusion-proto` codecs for plans holding any of the above.
//! - [`memory_pool`]: the memory pool for sessions with a limit (sorts' merges held to a share).
//! - `slt` (feature `slt`): the sqllogictest engine and runner.
//! - `distributed` (feature `distributed`): sessions for datafusion-distributed.

#![warn(missing_docs)]

mod arrow_nested;
pub mod cast;
pub mod codec;
#[cfg(feature = "delta")]
pub mod delta;
pub mod display;
#[cfg(feature = "distributed")]
pub mod distributed;
pub mod from_arrow;
pub mod functions;
pub mod json_files;
pub mod listing;
pub mod memory_pool;
mod panics;
pub mod parquet;
pub mod plan_codec;
mod register;
pub mod shredding;
#[cfg(feature = "slt")]
pub mod slt;
pub mod sql;
pub mod variant_array;
pub mod variant_schema;

pub use functions::expr_fn;
pub use register::{register_all, register_all_with_state, session_context};
