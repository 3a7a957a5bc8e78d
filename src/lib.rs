//! # datafusion-parquet-variant
//!
//! Makes the Parquet **Variant** type a first-class citizen of Apache DataFusion SQL.
//!
//! - [`codec`]: our own implementation of the Variant binary encoding: zero-copy views, validation of
//!   untrusted bytes, a builder, a streaming JSON parser and a JSON writer.
//! - [`variant_array`]: variant columns in Arrow (`arrow.parquet.variant` struct arrays).
//! - [`functions`]: the SQL functions (`parse_json`, `to_json`, ...).
//! - [`display`]: renders variant columns as JSON for query output.
//! - [`shredding`]: shredded variants (`typed_value`): reassembly and shredding.
//! - [`parquet`]: the Parquet file format that reads and writes variant columns.
//! - [`register_all`]: registers everything with a `SessionContext` in one call.

mod arrow_nested;
pub mod cast;
pub mod cli;
pub mod codec;
pub mod display;
#[cfg(feature = "distributed")]
pub mod distributed;
pub mod functions;
pub mod parquet;
pub mod plan_codec;
mod register;
pub mod shredding;
pub mod slt;
pub mod sql;
pub mod variant_array;
pub mod variant_schema;

pub use register::{register_all, register_all_with_state, session_context};
