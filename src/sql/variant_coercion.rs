//! Variants beside other SQL values, as Spark's type coercion has them:
//! - where a result is one of several values (`coalesce`, `nvl`, `ifnull`, `nvl2`, the branches
//!   of `CASE`) and one of them is a variant, the others become variants (`to_variant`), so
//!   `coalesce(v:x, 'd')` is the variant `"d"`. Spark widens only strings so (other types are its
//!   `DATA_DIFF_TYPES` error); we widen every SQL value, so `coalesce(v:x, 1)` is the variant `1`.
//! - variants are not compared (`=`, `<`, `IN`, `BETWEEN`, ...): Spark's
//!   `DATATYPE_MISMATCH.INVALID_ORDERING_TYPE`. Their bytes would compare, which is not their
//!   meaning (`{"a":1,"b":2}` has more than one encoding).
//!
//! A [`FunctionRewrite`], so it runs before DataFusion's type coercion, which would refuse the
//! mixed types with a message about structs. Ordering, grouping and set operations are refused
//! by [`crate::sql::VariantOrderingCheck`]; `UNION` branches are widened by
//! [`crate::sql::UnionToVariant`].
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::{Between, InList, Like, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, Operator};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use crate::functions::to_variant::to_variant_udf;
use crate::variant_array::is_variant_like;

/// The rewrite; registered by `register_all`.
#[derive(Debug, Default)]
pub struct VariantCoercion;

impl FunctionRewrite for VariantCoercion {
    fn name(&self) -> &str {
        "variant_coercion"
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> Result<Transformed<Expr>> {
        match expr {
            Expr::ScalarFunction(ScalarFunction { func, mut args })
                if matches!(func.name(), "coalesce" | "nvl" | "ifnull" | "nvl2") =>
            {
                // nvl2(x, a, b) chooses between a and b; x is only tested
                let first = usize::from(func.name() == "nvl2").min(args.len());
                let changed = widen(&mut args[first..].iter_mut().collect::<Vec<_>>(), schema);
                let expr = Expr::ScalarFunction(ScalarFunction { func, args });
                Ok(Transformed::new_transformed(expr, changed))
            }
            Expr::Case(mut case) => {
                let mut results: Vec<&mut Expr> = case
                    .when_then_expr
                    .iter_mut()
                    .map(|(_, then)| then.as_mut())
                    .chain(case.else_expr.iter_mut().map(|e| e.as_mut()))
                    .collect();
                // DataFusion types a CASE by its first branch that is not NULL while the query
                // is planned; a later variant cannot change that type afterwards
                let first = results
                    .iter()
                    .find(|e| !matches!(e, Expr::Literal(ScalarValue::Null, _)));
                if let Some(first) = first
                    && !is_variant(first, schema)
                    && results.iter().any(|e| is_variant(e, schema))
                {
                    return plan_err!(
                        "A CASE takes the type of its first branch, {first}, which is not a \
                         VARIANT while a later branch is: put a variant branch first, or make the \
                         first one a variant with to_variant(..)"
                    );
                }
                let changed = widen(&mut results, schema);
                Ok(Transformed::new_transformed(Expr::Case(case), changed))
            }
            Expr::BinaryExpr(BinaryExpr { left, op, right })
                if is_comparison(op)
                    && (is_variant(&left, schema) || is_variant(&right, schema)) =>
            {
                refuse(&format!("`{op}`"))
            }
            Expr::InList(InList { expr, list, .. })
                if is_variant(&expr, schema) || list.iter().any(|e| is_variant(e, schema)) =>
            {
                refuse("`IN`")
            }
            Expr::Between(Between {
                expr, low, high, ..
            }) if [&expr, &low, &high].iter().any(|e| is_variant(e, schema)) => refuse("`BETWEEN`"),
            Expr::Like(Like { expr, pattern, .. })
                if is_variant(&expr, schema) || is_variant(&pattern, schema) =>
            {
                refuse("`LIKE`")
            }
            other => Ok(Transformed::no(other)),
        }
    }
}

/// Refuses comparisons of variants while the query is planned, where DataFusion would otherwise
/// fail first on a variant beside another type, with a message about structs.
#[derive(Debug, Default)]
pub struct VariantComparisonPlanner;

impl ExprPlanner for VariantComparisonPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let comparison = matches!(
            expr.op,
            BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq
                | BinaryOperator::Spaceship
        );
        if comparison && (is_variant(&expr.left, schema) || is_variant(&expr.right, schema)) {
            return refuse(&format!("`{}`", expr.op));
        }
        Ok(PlannerResult::Original(expr))
    }
}

fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// The error for comparing variants with `what`, in Spark's words, with the way out.
pub fn refuse<T>(what: &str) -> Result<T> {
    plan_err!(
        "{what} does not support ordering on type VARIANT (Spark's \
         DATATYPE_MISMATCH.INVALID_ORDERING_TYPE): compare or order typed values instead, e.g. \
         `v:a::int = 5`, `v:s::string`, or `to_json(v)`"
    )
}

/// True when `expr` is a variant (by its extension type, or its shape for inputs that lost it).
pub fn is_variant(expr: &Expr, schema: &DFSchema) -> bool {
    expr.to_field(schema)
        .is_ok_and(|(_, field)| is_variant_like(&field))
}

/// When one of `values` is a variant, the others (but untyped NULLs) become variants; true if any
/// changed.
fn widen(values: &mut [&mut Expr], schema: &DFSchema) -> bool {
    if !values.iter().any(|e| is_variant(e, schema)) {
        return false;
    }
    let mut changed = false;
    for value in values.iter_mut() {
        if is_variant(value, schema) || matches!(value, Expr::Literal(ScalarValue::Null, _)) {
            continue;
        }
        let sql_value = std::mem::replace(*value, Expr::Literal(ScalarValue::Null, None));
        **value = Expr::ScalarFunction(ScalarFunction::new_udf(to_variant_udf(), vec![sql_value]));
        changed = true;
    }
    changed
}
