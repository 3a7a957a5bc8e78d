//! Casting variant values to SQL types with Spark's rules (`variant_get`, `CAST(v AS T)`).
//!
//! - [`target_type`]: type strings to Arrow types, and Spark's type names for messages.
//! - [`to_arrow`]: [`TypedBuilder`], which appends variant values to an Arrow array of the target
//!   type, casting each one.
//! - `extract`: whole-column extraction for the commonest targets (BIGINT, DOUBLE, STRING),
//!   the fast path of `variant_get` with a constant path.
//! - `numeric`, `datetime`: the scalar conversion rules.

mod datetime;
pub(crate) mod extract;
pub(crate) mod numeric;
pub mod target_type;
pub mod to_arrow;

pub use to_arrow::{CastOptions, DeferredErrors, OnCastError, TypedBuilder};
