//! Paths into variants in DataFusion's own SQL: `v['a']`, `v['a']['b']`, `v['items'][0]` and
//! `v->'a'`, `v->0` give VARIANT, `v->>'a'` text (as in Postgres, DuckDB and
//! datafusion-functions-json). Each is planned as `variant_get(v, '$.a.b')` (consecutive
//! accesses merged into one path), so a cast of it (`v['a']::int`) is the typed extraction
//! [`VariantCastRewrite`](super::VariantCastRewrite) makes of any `variant_get`, read from a
//! shredded file's leaf. Array subscripts are 0-based, as variant paths are in Spark,
//! Databricks and Snowflake (DataFusion's own lists stay 1-based). Structs, maps and lists
//! that are not variants keep DataFusion's meaning: the planner passes them on;
//! `get_field(v, 'value')` still reads a variant's own struct fields. A variant's storage struct
//! without the extension (DataFusion's own `register_parquet` reads a file's layout so) is a
//! variant where DataFusion's access would fail: `v['user']`, `v[0]`, `v->'a'`.
//!
//! DataFusion's parser binds `->` and `->>` more loosely than comparisons, `||`, `AND` and
//! `OR` (Postgres binds them tighter): `v->>'kind' = 'click'` arrives as
//! `v ->> ('kind' = 'click')`, and is planned as `(v ->> 'kind') = 'click'`, as written.
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::{GetFieldAccess, ScalarFunction};
use datafusion::logical_expr::planner::{
    ExprPlanner, PlannerResult, RawBinaryExpr, RawFieldAccessExpr,
};
use datafusion::logical_expr::{Expr, ExprSchemable, lit};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use super::colon_path::push_key;
use crate::functions::variant_get::variant_get_udf;
use crate::variant_array::{is_variant_field, is_variant_like};

/// Whether `access` is a path into a variant: `expr` has the variant extension, or it is a
/// struct of the variant's shape without it (a file's layout as DataFusion's own
/// `register_parquet` reads it: `metadata`, `value`, `typed_value`) and DataFusion's own
/// meaning would fail: a name that is none of its fields, or an index. A field the struct has
/// (`v['typed_value']`, a table declaring a file's shredded layout) keeps DataFusion's access.
fn is_variant_access(access: &RawFieldAccessExpr, schema: &DFSchema) -> bool {
    let Ok((_, field)) = access.expr.to_field(schema) else {
        return false;
    };
    if is_variant_field(&field) {
        return true;
    }
    let DataType::Struct(fields) = field.data_type() else {
        return false;
    };
    // the name DataFusion's access would look up among the struct's fields, if any
    let name = match &access.field_access {
        GetFieldAccess::NamedStructField { name } => name.try_as_str().flatten(),
        GetFieldAccess::ListIndex { key } => match key.as_ref() {
            Expr::Literal(value, _) => value.try_as_str().flatten(),
            _ => None,
        },
        GetFieldAccess::ListRange { .. } => return false,
    };
    is_variant_like(&field) && !name.is_some_and(|name| fields.iter().any(|f| f.name() == name))
}

/// Whether `expr` takes `->` and `->>` as a variant: the extension, or the variant's shape (for
/// which DataFusion has no meaning of these operators).
fn is_variant_operand(expr: &Expr, schema: &DFSchema) -> bool {
    expr.to_field(schema)
        .is_ok_and(|(_, field)| is_variant_like(&field))
}

/// Plans subscripts and `->`/`->>` on variants.
#[derive(Debug, Default)]
pub struct VariantAccessPlanner;

impl ExprPlanner for VariantAccessPlanner {
    fn plan_field_access(
        &self,
        access: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        if !is_variant_access(&access, schema) {
            return Ok(PlannerResult::Original(access));
        }
        let segment = match &access.field_access {
            GetFieldAccess::NamedStructField { name } => Step::of(&lit(name.clone()))?,
            GetFieldAccess::ListIndex { key } => Step::of(key)?,
            GetFieldAccess::ListRange { .. } => {
                return plan_err!(
                    "a slice of a VARIANT (`v[a:b]`) is not a path: subscript one element, or \
                     extract the array first (`CAST(v AS ARRAY<..>)`)"
                );
            }
        };
        Ok(PlannerResult::Planned(get(access.expr, segment, None)?))
    }

    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let text = match expr.op {
            BinaryOperator::Arrow => false,
            BinaryOperator::LongArrow => true,
            _ => return Ok(PlannerResult::Original(expr)),
        };
        if !is_variant_operand(&expr.left, schema) {
            return Ok(PlannerResult::Original(expr));
        }
        let as_text = text.then_some("string");
        Ok(PlannerResult::Planned(arrow(
            expr.left, expr.right, as_text,
        )?))
    }
}

/// `base -> operand` (or `->>`, `as_type` "string"), where the parser may have bound the
/// operator more loosely than what follows it: the path step is `operand`'s leftmost operand
/// under comparisons, `||`, `AND`, `OR`, `LIKE`, `BETWEEN`, `IN`, `IS ..` and casts, which then
/// apply to the step's value (`v->>'kind' = 'click'` is `(v->>'kind') = 'click'`).
#[recursive::recursive]
fn arrow(base: Expr, operand: Expr, as_type: Option<&str>) -> Result<Expr> {
    use datafusion::logical_expr::{BinaryExpr, Operator};
    let looser = |op: &Operator| {
        matches!(
            op,
            Operator::Eq
                | Operator::NotEq
                | Operator::Lt
                | Operator::LtEq
                | Operator::Gt
                | Operator::GtEq
                | Operator::And
                | Operator::Or
                | Operator::StringConcat
                | Operator::IsDistinctFrom
                | Operator::IsNotDistinctFrom
                | Operator::RegexMatch
                | Operator::RegexIMatch
                | Operator::RegexNotMatch
                | Operator::RegexNotIMatch
                | Operator::LikeMatch
                | Operator::ILikeMatch
                | Operator::NotLikeMatch
                | Operator::NotILikeMatch
        )
    };
    Ok(match operand {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if looser(&op) => Expr::BinaryExpr(
            BinaryExpr::new(Box::new(arrow(base, *left, as_type)?), op, right),
        ),
        Expr::Like(mut like) => {
            like.expr = Box::new(arrow(base, *like.expr, as_type)?);
            Expr::Like(like)
        }
        Expr::SimilarTo(mut like) => {
            like.expr = Box::new(arrow(base, *like.expr, as_type)?);
            Expr::SimilarTo(like)
        }
        Expr::Between(mut between) => {
            between.expr = Box::new(arrow(base, *between.expr, as_type)?);
            Expr::Between(between)
        }
        Expr::InList(mut list) => {
            list.expr = Box::new(arrow(base, *list.expr, as_type)?);
            Expr::InList(list)
        }
        Expr::IsNull(inner) => Expr::IsNull(Box::new(arrow(base, *inner, as_type)?)),
        Expr::IsNotNull(inner) => Expr::IsNotNull(Box::new(arrow(base, *inner, as_type)?)),
        Expr::Cast(mut cast) => {
            cast.expr = Box::new(arrow(base, *cast.expr, as_type)?);
            Expr::Cast(cast)
        }
        Expr::TryCast(mut cast) => {
            cast.expr = Box::new(arrow(base, *cast.expr, as_type)?);
            Expr::TryCast(cast)
        }
        step => get(base, Step::of(&step)?, as_type)?,
    })
}

/// One step of a path: a key, or an element of an array.
enum Step {
    Key(String),
    Index(i64),
}

impl Step {
    /// The step a subscript or `->` operand names: a constant text or integer.
    fn of(operand: &Expr) -> Result<Self> {
        match operand {
            Expr::Literal(value, _) => match value {
                ScalarValue::Utf8(Some(key))
                | ScalarValue::LargeUtf8(Some(key))
                | ScalarValue::Utf8View(Some(key)) => Ok(Step::Key(key.clone())),
                ScalarValue::Int8(Some(_))
                | ScalarValue::Int16(Some(_))
                | ScalarValue::Int32(Some(_))
                | ScalarValue::Int64(Some(_))
                | ScalarValue::UInt8(Some(_))
                | ScalarValue::UInt16(Some(_))
                | ScalarValue::UInt32(Some(_))
                | ScalarValue::UInt64(Some(_)) => {
                    let index = value.cast_to(&datafusion::arrow::datatypes::DataType::Int64)?;
                    match index {
                        ScalarValue::Int64(Some(i)) => Ok(Step::Index(i)),
                        _ => plan_err!("a VARIANT subscript {value} is not an index"),
                    }
                }
                other => plan_err!(
                    "a VARIANT is subscripted by a key (text) or a 0-based index (integer), not \
                     {other}"
                ),
            },
            // `v[-1]` arrives as a negated literal
            Expr::Negative(inner) if matches!(inner.as_ref(), Expr::Literal(..)) => {
                plan_err!("a VARIANT array index counts from 0 and cannot be negative: {operand}")
            }
            Expr::BinaryExpr(_) => plan_err!(
                "a VARIANT path must be constant: `{operand}` is not a text or integer literal \
                 (DataFusion's parser binds `->` and `->>` more loosely than arithmetic: write \
                 `(v->>'a') + 1`)"
            ),
            _ => plan_err!(
                "a VARIANT path must be constant: `{operand}` is not a text or integer literal \
                 (use variant_get(v, path) with a path built in SQL for paths that vary by row)"
            ),
        }
    }
}

/// `variant_get(base, '<path>')` with `step` added to the path: `base` itself extended where
/// it is such a call already (`v['a']['b']` is one lookup of `$.a.b`), as `as_type` where given.
fn get(base: Expr, step: Step, as_type: Option<&str>) -> Result<Expr> {
    let (source, mut path) = match base {
        Expr::ScalarFunction(call)
            if call.func.name() == variant_get_udf().name() && call.args.len() == 2 =>
        {
            match &call.args[1] {
                Expr::Literal(ScalarValue::Utf8(Some(path)), _) => {
                    let path = path.clone();
                    let mut args = call.args;
                    args.truncate(1);
                    (args.remove(0), path)
                }
                _ => (Expr::ScalarFunction(call), "$".to_string()),
            }
        }
        other => (other, "$".to_string()),
    };
    let text = path.clone();
    match step {
        Step::Key(key) => push_key(&mut path, &key, &text)?,
        Step::Index(i) if i < 0 => {
            return plan_err!("a VARIANT array index counts from 0 and cannot be negative: {i}");
        }
        Step::Index(i) => path.push_str(&format!("[{i}]")),
    }
    let mut args = vec![source, lit(path)];
    if let Some(as_type) = as_type {
        args.push(lit(as_type));
    }
    Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
        variant_get_udf(),
        args,
    )))
}
