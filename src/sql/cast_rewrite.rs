//! Casts of variants become typed extractions:
//! - `CAST(v AS T)` / `v::T` -> `variant_get(v, '$', 'T')`, `TRY_CAST(v AS T)` -> `try_variant_get`;
//! - `CAST(variant_get(v, p) AS T)` (also `v:p::T`) -> `variant_get(v, p, 'T')`, with no
//!   intermediate variant;
//! - `CAST(x AS VARIANT)` / `TRY_CAST(x AS VARIANT)` of a SQL value -> `to_variant(x)`.
//!
//! A typed `variant_get` of a column (also one a cast folded) becomes its deferred form, checked
//! where it stands (see [`VariantGet`]), so that the optimizer can move the extraction toward the
//! scan without raising errors for rows a filter drops.
//!
//! Our UDFs are recognised by type, not by name. Target types the extraction cannot produce
//! directly (e.g. `Utf8View`, nanosecond timestamps) are extracted as the closest type and cast.
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Expr, lit};

use super::variant_coercion::is_variant;
use crate::cast::target_type::{map_type, sql_type_name};
use crate::functions::to_variant::to_variant_udf;
use crate::functions::try_variant_get::{TryVariantGet, try_variant_get_udf};
use crate::functions::variant_get::{VariantGet, variant_get_udf};
use crate::functions::variant_get_checked::defer_cast_errors;
use crate::variant_array::{has_variant_shape, variant_data_type};

/// The rewrite; registered by `register_all`.
#[derive(Debug, Default)]
pub struct VariantCastRewrite;

impl FunctionRewrite for VariantCastRewrite {
    fn name(&self) -> &str {
        "variant_cast"
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> Result<Transformed<Expr>> {
        let (inner, target, is_try) = match expr {
            Expr::Cast(Cast { expr, field }) => (expr, field, false),
            Expr::TryCast(TryCast { expr, field }) => (expr, field, true),
            // a typed variant_get of a column: deferred, so that it can move toward the scan
            Expr::ScalarFunction(ScalarFunction { func, args })
                if func
                    .inner()
                    .downcast_ref::<VariantGet>()
                    .is_some_and(|g| !g.is_deferred())
                    && args.len() == 3 =>
            {
                let deferred = defer_cast_errors(&func, args);
                let changed =
                    !matches!(&deferred, Expr::ScalarFunction(f) if Arc::ptr_eq(&f.func, &func));
                return Ok(Transformed::new_transformed(deferred, changed));
            }
            other => return Ok(Transformed::no(other)),
        };
        let rebuild = |inner: Box<Expr>, target: FieldRef| {
            if is_try {
                Expr::TryCast(TryCast::new_from_field(inner, target))
            } else {
                Expr::Cast(Cast::new_from_field(inner, target))
            }
        };
        let Some(extract_type) = extraction_type(target.data_type()) else {
            return Ok(Transformed::no(rebuild(inner, target)));
        };
        // variant_get(v, p) / try_variant_get(v, p) under the cast: fold the type in.
        let (variant, path) = match *inner {
            Expr::ScalarFunction(ScalarFunction { func, args })
                if args.len() == 2
                    && (func.inner().is::<VariantGet>() || func.inner().is::<TryVariantGet>()) =>
            {
                let [v, p] = <[Expr; 2]>::try_from(args).expect("two arguments");
                (v, p)
            }
            other => {
                if !is_variant(&other, schema) {
                    if extract_type == variant_data_type() {
                        // A SQL value cast to VARIANT: build it.
                        return Ok(Transformed::yes(Expr::ScalarFunction(
                            ScalarFunction::new_udf(to_variant_udf(), vec![other]),
                        )));
                    }
                    return Ok(Transformed::no(rebuild(Box::new(other), target)));
                }
                (other, lit("$"))
            }
        };
        if extract_type == variant_data_type() {
            // A cast to VARIANT of a variant: the extraction itself.
            let udf = if is_try {
                try_variant_get_udf()
            } else {
                variant_get_udf()
            };
            return Ok(Transformed::yes(Expr::ScalarFunction(
                ScalarFunction::new_udf(udf, vec![variant, path]),
            )));
        }
        let type_name = match extract_type {
            DataType::Utf8View => "STRING_VIEW".to_string(),
            _ => sql_type_name(&extract_type),
        };
        let args = vec![variant, path, lit(type_name)];
        let extraction = if is_try {
            Expr::ScalarFunction(ScalarFunction::new_udf(try_variant_get_udf(), args))
        } else {
            defer_cast_errors(&variant_get_udf(), args)
        };
        Ok(Transformed::yes(if &extract_type == target.data_type() {
            extraction
        } else {
            rebuild(Box::new(extraction), target)
        }))
    }
}

/// The type `variant_get` extracts for a cast to `target` (then cast to `target` when different),
/// or None when variants cannot be cast to it.
pub fn extraction_type(target: &DataType) -> Option<DataType> {
    match target {
        // text in the view layout is extracted so (inside lists and structs: as STRING)
        DataType::Utf8View => Some(DataType::Utf8View),
        _ => element_extraction_type(target),
    }
}

/// [`extraction_type`] inside a list, struct or map.
fn element_extraction_type(target: &DataType) -> Option<DataType> {
    Some(match target {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::Binary
        | DataType::Date32 => target.clone(),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => DataType::Int64,
        DataType::Float16 => DataType::Float32,
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s)
            if *s >= 0 =>
        {
            DataType::Decimal128(*p, *s)
        }
        DataType::Decimal256(p, s) if *s >= 0 && *p <= 38 => DataType::Decimal128(*p, *s),
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
        DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, tz) => DataType::Timestamp(
            TimeUnit::Microsecond,
            tz.as_ref()
                .map(|_| Arc::from(crate::cast::target_type::UTC)),
        ),
        DataType::List(f) | DataType::LargeList(f) => DataType::List(Arc::new(Field::new(
            "element",
            element_extraction_type(f.data_type())?,
            true,
        ))),
        DataType::Struct(_) if has_variant_shape(target) => variant_data_type(),
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| {
                    Some(Field::new(
                        f.name(),
                        element_extraction_type(f.data_type())?,
                        true,
                    ))
                })
                .collect::<Option<Fields>>()?,
        ),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv)
                if kv.len() == 2
                    && matches!(kv[0].data_type(), DataType::Utf8 | DataType::Utf8View) =>
            {
                map_type(element_extraction_type(kv[1].data_type())?)
            }
            _ => return None,
        },
        _ => return None,
    })
}
