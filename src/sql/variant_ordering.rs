//! Variants are not ordered, grouped or deduplicated, as in Spark: `ORDER BY v`, `GROUP BY v`,
//! `DISTINCT`, `UNION` (without `ALL`), `INTERSECT`, `EXCEPT`, `min`/`max` and distinct
//! aggregates of a variant, window partitions and orders on one, and joins on one are planning
//! errors (Spark's `INVALID_ORDERING_TYPE`, `GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE`,
//! `SET_OPERATION_ON_VARIANT_TYPE`). Their bytes would order and compare, which is not their
//! meaning: one value has more than one encoding. Values nested in structs, lists and maps count.
//!
//! An [`AnalyzerRule`] over the plan as written (after type coercion, which does not refuse
//! these); comparisons in expressions are refused by [`crate::sql::VariantCoercion`].
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::expr::{AggregateFunction, WindowFunction};
use datafusion::logical_expr::{Distinct, Expr, ExprSchemable, LogicalPlan, SortExpr};
use datafusion::optimizer::AnalyzerRule;

use super::variant_coercion::refuse;
use crate::variant_array::contains_variant;

/// The rule; registered by `register_all`.
#[derive(Debug, Default)]
pub struct VariantOrderingCheck;

impl AnalyzerRule for VariantOrderingCheck {
    fn name(&self) -> &str {
        "variant_ordering_check"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.apply_with_subqueries(|node| {
            check_node(node)?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(plan)
    }
}

fn check_node(node: &LogicalPlan) -> Result<()> {
    match node {
        LogicalPlan::Sort(sort) => check_sort(&sort.expr, sort.input.schema(), "ORDER BY")?,
        LogicalPlan::Aggregate(aggregate) => {
            let schema = aggregate.input.schema();
            for expr in &aggregate.group_expr {
                let keys = match expr {
                    Expr::GroupingSet(set) => set.distinct_expr(),
                    expr => vec![expr],
                };
                for key in keys {
                    if holds_variant(key, schema) {
                        return plan_err!(
                            "The expression {key} cannot be used as a grouping expression because \
                             its data type VARIANT is not an orderable data type (Spark's \
                             GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE): group by typed values \
                             instead, e.g. `v:a::string`, or `to_json(v)`"
                        );
                    }
                }
            }
        }
        LogicalPlan::Distinct(distinct) => {
            let (schema, exprs) = match distinct {
                Distinct::All(input) => (input.schema(), None),
                Distinct::On(on) => (on.input.schema(), Some(&on.on_expr)),
            };
            let refused = match exprs {
                None => schema
                    .fields()
                    .iter()
                    .find(|f| contains_variant(f))
                    .map(|f| f.name().clone()),
                Some(exprs) => exprs
                    .iter()
                    .find(|e| holds_variant(e, schema))
                    .map(|e| e.to_string()),
            };
            if let Some(column) = refused {
                return plan_err!(
                    "Cannot have VARIANT type columns in DISTINCT or a set operation (UNION, \
                     INTERSECT, EXCEPT), but the type of column {column} is VARIANT (Spark's \
                     SET_OPERATION_ON_VARIANT_TYPE); UNION ALL keeps variants"
                );
            }
        }
        LogicalPlan::Join(join) => {
            for (left, right) in &join.on {
                if holds_variant(left, join.left.schema())
                    || holds_variant(right, join.right.schema())
                {
                    return refuse("A join key (of INTERSECT and EXCEPT too)");
                }
            }
        }
        _ => {}
    }
    // aggregates and window functions wherever they are written
    let Some(input) = node.inputs().first().copied() else {
        return Ok(());
    };
    let schema = input.schema();
    let mut result = Ok(());
    let _ = node.apply_expressions(|expr| {
        expr.apply(|e| {
            result = check_call(e, schema);
            Ok(if result.is_err() {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })
    });
    result
}

fn check_call(expr: &Expr, schema: &DFSchema) -> Result<()> {
    match expr {
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            let ordered = matches!(func.name(), "min" | "max") || params.distinct;
            if ordered && params.args.iter().any(|a| holds_variant(a, schema)) {
                return refuse(&format!("`{}`", func.name()));
            }
            check_sort(&params.order_by, schema, "An aggregate's ORDER BY")
        }
        Expr::WindowFunction(window) => {
            let WindowFunction { params, .. } = window.as_ref();
            if params.partition_by.iter().any(|p| holds_variant(p, schema)) {
                return refuse("PARTITION BY");
            }
            check_sort(&params.order_by, schema, "A window's ORDER BY")
        }
        _ => Ok(()),
    }
}

fn check_sort(sort: &[SortExpr], schema: &DFSchema, what: &str) -> Result<()> {
    match sort.iter().any(|s| holds_variant(&s.expr, schema)) {
        true => refuse(what),
        false => Ok(()),
    }
}

/// True when `expr`'s type is a variant or holds one (in a struct, list or map).
fn holds_variant(expr: &Expr, schema: &DFSchema) -> bool {
    expr.to_field(schema)
        .is_ok_and(|(_, field)| contains_variant(&field))
}
