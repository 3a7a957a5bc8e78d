//! The Variant binary encoding (`spec/VariantEncoding.md`).
//!
//! - [`Metadata`]: a view over the metadata (key dictionary) bytes.
//! - [`Variant`] / [`Value`]: a zero-copy, bounds-checked view over one value and its decoded form.
//! - [`validate()`]: full validation of untrusted bytes; returns errors, never panics.
//! - [`VariantBuilder`]: writes values with minimal widths and a sorted, unique dictionary.
//! - [`JsonParser`]: a streaming JSON parser that writes Variant directly (Spark's number rules).
//! - [`write_json`]: Variant to JSON text with Spark's formatting.
//! - [`format`](mod@format): the scalar formatting rules (Java doubles, decimals, dates, timestamps, escapes).
//!
//! ```
//! use datafusion_parquet_variant::codec::{
//!     JsonParser, SessionTimeZone, Value, Variant, VariantBuilder, validate, write_json,
//! };
//!
//! let mut builder = VariantBuilder::new();
//! JsonParser::new().parse(r#"{"b": 1.50, "a": [true, 1e10]}"#, &mut builder)?;
//! validate(builder.metadata(), builder.value())?;
//!
//! let v = Variant::try_new(builder.metadata(), builder.value())?;
//! let Value::Object(obj) = v.get()? else { unreachable!() };
//! assert!(matches!(obj.get("b")?.unwrap().get()?, Value::Decimal4(150, 2)));
//!
//! let mut json = Vec::new();
//! write_json(&mut json, v, &SessionTimeZone::utc())?;
//! assert_eq!(json, br#"{"a":[true,1.0E10],"b":1.5}"#);
//! # Ok::<(), datafusion_parquet_variant::codec::VariantError>(())
//! ```

mod builder;
pub(crate) mod bytes;
mod error;
pub mod format;
mod json_parse;
pub(crate) mod json_write;
mod metadata;
mod path;
pub(crate) mod raw;
mod validate;
mod value;

pub use builder::{VariantBuilder, write_array, write_object};
pub use error::{Result, VariantError, excerpt};
pub use format::SessionTimeZone;
pub use json_parse::JsonParser;
pub use json_write::{JsonRowWriter, write_json};
pub(crate) use metadata::metadata_version;
pub use metadata::{EMPTY_METADATA, Metadata};
pub use path::{InvalidPath, MAX_PATH_SEGMENTS, PathSegment, VariantPath};
pub use raw::Unreadable;
pub(crate) use raw::raw_int;
pub use validate::{DEFAULT_MAX_DEPTH, validate, validate_value, validate_with_depth};
pub use value::{ArrayView, ObjectView, Value, Variant, basic_type, primitive, value_size};
pub(crate) use value::{MICROS_PER_DAY, decimal_digits, is_time_of_day};
