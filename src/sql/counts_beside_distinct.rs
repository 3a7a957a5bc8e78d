//! Grouped `count(DISTINCT x)` beside plain counts, planned as two aggregations that can spill.
//!
//! DataFusion plans `SELECT g, count(DISTINCT x) FROM t GROUP BY g` as two aggregations (first by
//! `g, x`, then by `g`: its `SingleDistinctToGroupBy` rule), both hash aggregations that spill
//! under a memory limit; but only when the other aggregates are `sum`, `min` or `max`. With a
//! `count(*)` beside it (JSONBench's Q2: `count(*) AS count, count(DISTINCT did) AS users`) the
//! distinct count keeps a set of values per group, which cannot spill: a few large groups over
//! 100M rows asked for a single reservation of 1.2 GB and failed under `-m 2g`.
//!
//! This rule writes such counts as sums DataFusion's rule takes: `count(*)` as `sum(1)` and
//! `count(e)` as `sum(CASE WHEN e IS NULL THEN 0 ELSE 1 END)`, under a projection that gives the
//! columns their former names. Only with a GROUP BY (every group has a row, so the sums are
//! never NULL, as the counts were not) and only when every aggregate is then one
//! `SingleDistinctToGroupBy` accepts: distinct ones all over one argument, the others `count`,
//! `sum`, `min` or `max`, none with a FILTER or ORDER BY.
use std::collections::HashSet;
use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result, ScalarValue};
use datafusion::functions_aggregate::sum::sum_udaf;
use datafusion::logical_expr::expr::{AggregateFunction, AggregateFunctionParams};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, Projection, lit, when};
use datafusion::optimizer::optimizer::ApplyOrder;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

/// The optimizer rule described in the module documentation.
#[derive(Debug, Default)]
pub struct CountsBesideDistinct;

/// The aggregate call of `expr` (under its alias, where DataFusion's optimizer gave it one),
/// when it is one without FILTER or ORDER BY.
fn plain_call(expr: &Expr) -> Option<&AggregateFunction> {
    match expr {
        Expr::Alias(alias) => plain_call(&alias.expr),
        Expr::AggregateFunction(call)
            if call.params.filter.is_none() && call.params.order_by.is_empty() =>
        {
            Some(call)
        }
        _ => None,
    }
}

fn is_count(call: &AggregateFunction) -> bool {
    !call.params.distinct && call.func.name() == "count" && call.params.args.len() == 1
}

/// Whether `aggregates` hold a distinct count over one argument and plain counts beside it, and
/// nothing DataFusion's rule would refuse once the counts are sums.
fn applies(aggregates: &[Expr]) -> bool {
    let mut distinct_args = HashSet::new();
    let mut counts = 0;
    for expr in aggregates {
        let Some(call) = plain_call(expr) else {
            return false;
        };
        if call.params.distinct {
            distinct_args.extend(call.params.args.iter());
        } else if is_count(call) {
            counts += 1;
        } else if !matches!(call.func.name(), "sum" | "min" | "max") {
            return false;
        }
    }
    distinct_args.len() == 1 && counts > 0
}

/// `count(*)` (`count(Int64(1))`) as `sum(1)`, `count(e)` as the sum of its non-null rows; other
/// aggregates as they are. Without aliases (DataFusion's rule takes only bare calls; the
/// projection above gives the names back).
fn count_as_sum(expr: &Expr) -> Result<Expr> {
    let Some(call) = plain_call(expr) else {
        return Ok(expr.clone());
    };
    if !is_count(call) {
        return Ok(Expr::AggregateFunction(call.clone()));
    }
    let one = lit(ScalarValue::Int64(Some(1)));
    let counted = match &call.params.args[0] {
        Expr::Literal(value, _) if !value.is_null() => one,
        arg => when(arg.clone().is_null(), lit(ScalarValue::Int64(Some(0)))).otherwise(one)?,
    };
    Ok(Expr::AggregateFunction(AggregateFunction {
        func: sum_udaf(),
        params: AggregateFunctionParams {
            args: vec![counted],
            distinct: false,
            filter: None,
            order_by: vec![],
            null_treatment: None,
        },
    }))
}

impl OptimizerRule for CountsBesideDistinct {
    fn name(&self) -> &str {
        "variant_counts_beside_distinct"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
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
        let grouping_sets = matches!(aggregate.group_expr.first(), Some(Expr::GroupingSet(_)));
        if aggregate.group_expr.is_empty() || grouping_sets || !applies(&aggregate.aggr_expr) {
            return Ok(Transformed::no(plan));
        }
        let sums = (aggregate.aggr_expr.iter())
            .map(count_as_sum)
            .collect::<Result<Vec<_>>>()?;
        let rewritten = Aggregate::try_new(
            Arc::clone(&aggregate.input),
            aggregate.group_expr.clone(),
            sums,
        )?;
        // the former names (and qualifiers) for the columns above
        let columns = (rewritten.schema.iter())
            .zip(aggregate.schema.iter())
            .map(|((qualifier, field), (was_qualifier, was))| {
                Expr::Column(Column::new(qualifier.cloned(), field.name()))
                    .alias_qualified(was_qualifier.cloned(), was.name())
            })
            .collect();
        let projection = Projection::try_new(columns, Arc::new(LogicalPlan::Aggregate(rewritten)))?;
        Ok(Transformed::yes(LogicalPlan::Projection(projection)))
    }
}
