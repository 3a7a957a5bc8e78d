//! Whole-value reads of a variant column computed in the scan. A call of a function that reads
//! shredded input as it is (`functions::reads_shredded_input`: `to_json(v)`,
//! `schema_of_variant(v)`, `is_valid_variant(v)`, `variant_object_keys(v)`, ...) inside an
//! aggregate directly over a table scan (`SELECT sum(length(to_json(v))) FROM t`) is moved into a
//! projection just above the scan, which the physical planner merges into the Parquet scan. There
//! the per-file expression adapter hands a shredded file's column to the function as the file
//! has it, and the answer is built straight from the shredded leaves, without reassembling the
//! values first (`shredding::json`, `shredding::schema`, `shredding::validity`,
//! `shredding::top_level`).
//!
//! Only an aggregate directly over the scan is rewritten: below a filter the function would run
//! on rows the filter drops. A projection over the scan needs no rewrite (DataFusion merges it);
//! a filter directly over the scan is the physical rule `parquet::WholeValueFiltersIntoScan`'s.
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, Projection, col};
use datafusion::optimizer::optimizer::ApplyOrder;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

use crate::functions::reads_shredded_input;

/// The optimizer rule described in the module documentation.
#[derive(Debug, Default)]
pub struct WholeValueReadsIntoScan;

/// The alias of the `index`th whole-value read in the projection above the scan.
fn read_alias(index: usize) -> String {
    format!("__variant_whole_value_{index}")
}

/// True for a whole-value read that shredded input serves directly: a call of one of the
/// functions of `reads_shredded_input` on a column.
pub(crate) fn is_whole_value_read(expr: &Expr) -> bool {
    let Expr::ScalarFunction(call) = expr else {
        return false;
    };
    reads_shredded_input(&call.func) && matches!(call.args.as_slice(), [Expr::Column(_)])
}

impl OptimizerRule for WholeValueReadsIntoScan {
    fn name(&self) -> &str {
        "variant_whole_value_reads_into_scan"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Aggregate(aggregate) = &plan else {
            return Ok(Transformed::no(plan));
        };
        if !matches!(aggregate.input.as_ref(), LogicalPlan::TableScan(_)) {
            return Ok(Transformed::no(plan));
        }
        let mut reads: Vec<Expr> = vec![];
        for expr in aggregate.group_expr.iter().chain(&aggregate.aggr_expr) {
            expr.apply(|e| {
                // a CASE computes a branch only for the rows that reach it (a guard such as
                // `CASE WHEN is_valid_variant(v) THEN to_json(v) END` must keep its rows away)
                if matches!(e, Expr::Case(_)) {
                    return Ok(TreeNodeRecursion::Jump);
                }
                if is_whole_value_read(e) {
                    if !reads.contains(e) {
                        reads.push(e.clone());
                    }
                    return Ok(TreeNodeRecursion::Jump);
                }
                Ok(TreeNodeRecursion::Continue)
            })?;
        }
        if reads.is_empty() {
            return Ok(Transformed::no(plan));
        }
        let input = Arc::clone(&aggregate.input);
        let mut projected: Vec<Expr> = input
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        projected.extend(
            reads
                .iter()
                .enumerate()
                .map(|(i, read)| read.clone().alias(read_alias(i))),
        );
        let projection = LogicalPlan::Projection(Projection::try_new(projected, input)?);
        // the aggregate keeps its output names
        let replace = |expr: &Expr| -> Result<Expr> {
            let (qualifier, name) = expr.qualified_name();
            let replaced = expr
                .clone()
                .transform_down(|e| match reads.iter().position(|r| *r == e) {
                    Some(i) => Ok(Transformed::new(
                        col(read_alias(i)),
                        true,
                        TreeNodeRecursion::Jump,
                    )),
                    None => Ok(Transformed::no(e)),
                })?
                .data;
            Ok(match expr {
                Expr::Alias(_) => replaced,
                _ => replaced.alias_qualified(qualifier, name),
            })
        };
        let group_expr = aggregate
            .group_expr
            .iter()
            .map(replace)
            .collect::<Result<_>>()?;
        let aggr_expr = aggregate
            .aggr_expr
            .iter()
            .map(replace)
            .collect::<Result<_>>()?;
        let rewritten = Aggregate::try_new(Arc::new(projection), group_expr, aggr_expr)?;
        Ok(Transformed::yes(LogicalPlan::Aggregate(rewritten)))
    }
}
