//! `UNION` branches widened to VARIANT, as Spark's type coercion widens them: when a column is a
//! variant in one branch and another SQL type in another, that branch's values become variants
//! (`to_variant`), so `SELECT v:a FROM t UNION ALL SELECT 'x'` gives the variant `"x"`. (Spark
//! widens only strings so; we widen every SQL value, as in [`crate::sql::VariantCoercion`].)
//!
//! An [`AnalyzerRule`] that must run before DataFusion's type coercion, which refuses the mixed
//! types: `register_all_with_state` puts it first. (`register_all` can only append rules to a
//! built session; there `UNION` of a variant with another type stays DataFusion's error.)
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, Union};
use datafusion::optimizer::AnalyzerRule;

use crate::functions::to_variant::to_variant_udf;
use crate::variant_array::is_variant_like;

/// The rule; registered by `register_all_with_state`.
#[derive(Debug, Default)]
pub struct UnionToVariant;

impl AnalyzerRule for UnionToVariant {
    fn name(&self) -> &str {
        "variant_union_widening"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        Ok(plan.transform_up_with_subqueries(widen_union)?.data)
    }
}

fn widen_union(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Union(union) = plan else {
        return Ok(Transformed::no(plan));
    };
    let width = union.schema.fields().len();
    let is_variant = |input: &LogicalPlan, i: usize| {
        input
            .schema()
            .fields()
            .get(i)
            .is_some_and(|f| is_variant_like(f))
    };
    let widened: Vec<usize> = (0..width)
        .filter(|&i| union.inputs.iter().any(|input| is_variant(input, i)))
        .filter(|&i| union.inputs.iter().any(|input| !is_variant(input, i)))
        .collect();
    if widened.is_empty() {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let mut inputs = Vec::with_capacity(union.inputs.len());
    for input in union.inputs {
        if widened.iter().all(|&i| is_variant(&input, i)) {
            inputs.push(input);
            continue;
        }
        let exprs: Vec<Expr> = input
            .schema()
            .iter()
            .enumerate()
            .map(|(i, (qualifier, field))| {
                let column = Expr::Column(Column::from((qualifier, field)));
                if !widened.contains(&i)
                    || is_variant(&input, i)
                    || field.data_type() == &DataType::Null
                {
                    column
                } else {
                    Expr::ScalarFunction(ScalarFunction::new_udf(to_variant_udf(), vec![column]))
                        .alias(field.name())
                }
            })
            .collect();
        let projected = LogicalPlanBuilder::from(Arc::unwrap_or_clone(input))
            .project(exprs)?
            .build()?;
        inputs.push(Arc::new(projected));
    }
    Ok(Transformed::yes(LogicalPlan::Union(
        Union::try_new_with_loose_types(inputs)?,
    )))
}
