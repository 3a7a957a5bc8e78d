//! Our SQL functions as Rust functions that build [`Expr`]s, for DataFrames, as DataFusion's
//! `datafusion::functions::expr_fn` does for its own: `variant_get(col("v"), "$.a",
//! Some(DataType::Int32))` is the SQL `variant_get(v, '$.a', 'int')`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! use datafusion::arrow::datatypes::DataType;
//! use datafusion::prelude::*;
//! use datafusion_parquet_variant::expr_fn::{parse_json, to_json, variant_get};
//!
//! let ctx = datafusion_parquet_variant::session_context();
//! let df = ctx
//!     .read_empty()?
//!     .select(vec![parse_json(lit(r#"{"user": {"id": 7, "tags": ["a"]}}"#)).alias("v")])?
//!     .select(vec![
//!         variant_get(col("v"), "$.user.id", Some(DataType::Int32)).alias("id"),
//!         to_json(variant_get(col("v"), "$.user.tags", None)).alias("tags"),
//!     ])?;
//! let batches = df.collect().await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 7  | [\"a\"] |"), "{text}");
//! # Ok(())
//! # }
//! ```
use datafusion::arrow::datatypes::DataType;
use datafusion::logical_expr::{Expr, lit};

use super::*;
use crate::cast::target_type::sql_type_name;

/// `parse_json(json)`: the JSON text as a VARIANT (an error on malformed JSON).
pub fn parse_json(json: Expr) -> Expr {
    parse_json::parse_json_udf().call(vec![json])
}

/// `try_parse_json(json)`: as [`parse_json()`], NULL on malformed JSON.
pub fn try_parse_json(json: Expr) -> Expr {
    try_parse_json::try_parse_json_udf().call(vec![json])
}

/// `from_json(json, 'variant')`: as [`try_parse_json()`] (Spark's PERMISSIVE mode), blank text
/// NULL too.
pub fn from_json(json: Expr) -> Expr {
    from_json::from_json_udf().call(vec![json, lit("variant")])
}

/// `to_json(v)`: the variant as JSON text.
pub fn to_json(variant: Expr) -> Expr {
    to_json::to_json_udf().call(vec![variant])
}

/// `is_variant_null(v)`: whether the variant is a variant null (SQL NULL is not).
pub fn is_variant_null(variant: Expr) -> Expr {
    is_variant_null::is_variant_null_udf().call(vec![variant])
}

/// The arguments of a path lookup: the variant, the path, and the type as its SQL name (types
/// SQL cannot name come back as the nearest it can: a nanosecond timestamp in microseconds,
/// map keys as text).
fn path_args(variant: Expr, path: &str, as_type: Option<DataType>) -> Vec<Expr> {
    let mut args = vec![variant, lit(path)];
    match as_type {
        Some(DataType::Utf8View) => args.push(lit("STRING_VIEW")),
        Some(as_type) => args.push(lit(sql_type_name(&as_type))),
        None => {}
    }
    args
}

/// `variant_get(v, path [, type])`: the value at `path` (`$.a.b[0]`), a VARIANT, or cast to
/// `as_type` with Spark's cast rules (an error where it cannot be).
pub fn variant_get(variant: Expr, path: &str, as_type: Option<DataType>) -> Expr {
    variant_get::variant_get_udf().call(path_args(variant, path, as_type))
}

/// `try_variant_get(v, path [, type])`: as [`variant_get()`], NULL where the cast fails.
pub fn try_variant_get(variant: Expr, path: &str, as_type: Option<DataType>) -> Expr {
    try_variant_get::try_variant_get_udf().call(path_args(variant, path, as_type))
}

/// `schema_of_variant(v)`: the variant's type, as Spark writes it.
pub fn schema_of_variant(variant: Expr) -> Expr {
    schema_of_variant::schema_of_variant_udf().call(vec![variant])
}

/// `schema_of_variant_agg(v)`: the type of all the rows' variants, merged.
pub fn schema_of_variant_agg(variant: Expr) -> Expr {
    schema_of_variant_agg::schema_of_variant_agg_udaf().call(vec![variant])
}

/// `variant_shredding_schema_agg(v)`: the shredding type automatic shredding would choose.
pub fn variant_shredding_schema_agg(variant: Expr) -> Expr {
    variant_shredding_schema_agg::variant_shredding_schema_agg_udaf().call(vec![variant])
}

/// `to_variant(x)`: any SQL value as a VARIANT (`CAST(x AS VARIANT)`).
pub fn to_variant(value: Expr) -> Expr {
    to_variant::to_variant_udf().call(vec![value])
}

/// `to_variant_object(x)`: a struct or map as a VARIANT object.
pub fn to_variant_object(value: Expr) -> Expr {
    to_variant_object::to_variant_object_udf().call(vec![value])
}

/// `is_valid_variant(v)`: whether the bytes are a valid variant.
pub fn is_valid_variant(variant: Expr) -> Expr {
    is_valid_variant::is_valid_variant_udf().call(vec![variant])
}

/// `variant_object_keys(v)`: an object's keys, sorted.
pub fn variant_object_keys(variant: Expr) -> Expr {
    variant_object_keys::variant_object_keys_udf().call(vec![variant])
}

/// `variant_array_length(v)`: an array's length.
pub fn variant_array_length(variant: Expr) -> Expr {
    variant_array_length::variant_array_length_udf().call(vec![variant])
}

/// `variant_insert(v, path, value)`: `value` inserted at `path` (an error where it exists).
pub fn variant_insert(variant: Expr, path: &str, value: Expr) -> Expr {
    variant_insert::variant_insert_udf().call(vec![variant, lit(path), value])
}

/// `try_variant_insert(v, path, value)`: as [`variant_insert()`], NULL where it raises.
pub fn try_variant_insert(variant: Expr, path: &str, value: Expr) -> Expr {
    try_variant_insert::try_variant_insert_udf().call(vec![variant, lit(path), value])
}

/// `variant_set(v, path, value)`: the value at `path` replaced (or added) by `value`.
pub fn variant_set(variant: Expr, path: &str, value: Expr) -> Expr {
    variant_set::variant_set_udf().call(vec![variant, lit(path), value])
}

/// `try_variant_set(v, path, value)`: as [`variant_set()`], NULL where it raises.
pub fn try_variant_set(variant: Expr, path: &str, value: Expr) -> Expr {
    try_variant_set::try_variant_set_udf().call(vec![variant, lit(path), value])
}

/// `variant_delete(v, path, ...)`: the values at `paths` removed.
pub fn variant_delete(variant: Expr, paths: &[&str]) -> Expr {
    let args = std::iter::once(variant).chain(paths.iter().map(|p| lit(*p)));
    variant_delete::variant_delete_udf().call(args.collect())
}

/// `variant_array_append(v, path, value)`: `value` appended to the array at `path`.
pub fn variant_array_append(variant: Expr, path: &str, value: Expr) -> Expr {
    variant_array_append::variant_array_append_udf().call(vec![variant, lit(path), value])
}

/// `try_variant_array_append(v, path, value)`: as [`variant_array_append()`], NULL where it
/// raises.
pub fn try_variant_array_append(variant: Expr, path: &str, value: Expr) -> Expr {
    try_variant_array_append::try_variant_array_append_udf().call(vec![variant, lit(path), value])
}

/// `variant_strip_nulls(v, include_arrays)`: variant nulls removed from objects (and arrays).
pub fn variant_strip_nulls(variant: Expr, include_arrays: bool) -> Expr {
    variant_strip_nulls::variant_strip_nulls_udf().call(vec![variant, lit(include_arrays)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each function builds the call SQL would, with the names SQL resolves.
    #[test]
    fn calls_name_the_sql_functions() {
        let v = || datafusion::prelude::col("v");
        let cases = [
            (
                variant_get(v(), "$.a", Some(DataType::Int32)),
                "variant_get(v, Utf8(\"$.a\"), Utf8(\"INT\"))",
            ),
            (
                try_variant_get(v(), "$.a", None),
                "try_variant_get(v, Utf8(\"$.a\"))",
            ),
            (
                variant_delete(v(), &["$.a", "$.b"]),
                "variant_delete(v, Utf8(\"$.a\"), Utf8(\"$.b\"))",
            ),
            (
                variant_strip_nulls(v(), true),
                "variant_strip_nulls(v, Boolean(true))",
            ),
            (schema_of_variant_agg(v()), "schema_of_variant_agg(v)"),
        ];
        for (expr, text) in cases {
            assert_eq!(expr.to_string(), text);
        }
    }
}
