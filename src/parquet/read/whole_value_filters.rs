//! Whole-value reads in a filter computed in the scan. A filter directly over our Parquet scan
//! whose predicate calls a function that reads shredded input as it is
//! (`functions::reads_shredded_input`) on a column (`WHERE is_valid_variant(v)`) has those calls
//! added to the scan's projection and reads their results there: the per-file expression adapter then hands a shredded file's column to
//! the function as the file has it, without reassembling the values. The filter computed them on
//! every row of the scan anyway, so no row costs more; its output is the columns it gave before.
//!
//! It is a physical rule because DataFusion's logical filter pushdown moves a filter below the
//! projection that would compute the calls, putting them back into the predicate.
use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, internal_datafusion_err};
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{CaseExpr, Column};
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};

use super::source::VariantParquetSource;
use crate::functions::reads_shredded_input;

/// The physical optimizer rule described in the module documentation.
#[derive(Debug, Default)]
pub struct WholeValueFiltersIntoScan;

/// True for a call of a function that reads shredded input as it is, on a column.
fn is_whole_value_read(expr: &Arc<dyn PhysicalExpr>) -> bool {
    expr.downcast_ref::<ScalarFunctionExpr>()
        .is_some_and(|call| {
            reads_shredded_input(call.fun())
                && matches!(call.args(), [arg] if arg.downcast_ref::<Column>().is_some())
        })
}

/// True when `plan` is a scan through [`VariantParquetSource`].
fn is_variant_scan(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.downcast_ref::<DataSourceExec>()
        .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
        .is_some_and(|config| {
            config
                .file_source
                .downcast_ref::<VariantParquetSource>()
                .is_some()
        })
}

/// `filter` with its whole-value reads computed by the scan below it, None when it has none or
/// the scan does not take them.
fn reads_into_scan(filter: &FilterExec) -> Result<Option<FilterExec>> {
    let scan = filter.input();
    if !is_variant_scan(scan) {
        return Ok(None);
    }
    // the whole-value reads, and the columns the predicate reads outside them
    let mut reads: Vec<Arc<dyn PhysicalExpr>> = vec![];
    let schema = scan.schema();
    let output = match filter.projection() {
        Some(projection) => projection.to_vec(),
        None => (0..schema.fields().len()).collect(),
    };
    let mut kept: BTreeSet<usize> = output.iter().copied().collect();
    // (not those under a CASE, which computes a branch only for the rows that reach it: a
    // guard such as `CASE WHEN is_valid_variant(v) THEN to_json(v) .. END` must keep the rows it
    // turns away from the call)
    filter.predicate().apply(|e| {
        if e.downcast_ref::<CaseExpr>().is_some() {
            return Ok(TreeNodeRecursion::Jump);
        }
        if is_whole_value_read(e) {
            if !reads.iter().any(|r| r.as_ref() == e.as_ref()) {
                reads.push(Arc::clone(e));
            }
            return Ok(TreeNodeRecursion::Jump);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if reads.is_empty() {
        return Ok(None);
    }
    filter.predicate().apply(|e| {
        if reads.iter().any(|r| r.as_ref() == e.as_ref()) {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let Some(c) = e.downcast_ref::<Column>() {
            kept.insert(c.index());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    // the scan gives those columns and the filter's output, then the reads' results (a variant
    // column that only the reads used is no longer reassembled)
    let kept: Vec<usize> = kept.into_iter().collect();
    let position = |index: usize| {
        kept.binary_search(&index)
            .map_err(|_| internal_datafusion_err!("column {index} is not kept"))
    };
    let alias = |i: usize| format!("__variant_whole_value_{i}");
    let mut exprs: Vec<ProjectionExpr> = kept
        .iter()
        .map(|&i| {
            let name = schema.field(i).name();
            ProjectionExpr::new(Arc::new(Column::new(name, i)), name.clone())
        })
        .collect();
    exprs.extend(
        reads
            .iter()
            .enumerate()
            .map(|(i, read)| ProjectionExpr::new(Arc::clone(read), alias(i))),
    );
    let projection = ProjectionExec::try_new(exprs, Arc::clone(scan))?;
    let Some(scan) = scan.try_swapping_with_projection(&projection)? else {
        return Ok(None);
    };
    let predicate = Arc::clone(filter.predicate())
        .transform_down(|e| {
            let column = match reads.iter().position(|r| r.as_ref() == e.as_ref()) {
                Some(i) => Column::new(&alias(i), kept.len() + i),
                None => match e.downcast_ref::<Column>() {
                    Some(c) => Column::new(c.name(), position(c.index())?),
                    None => return Ok(Transformed::no(e)),
                },
            };
            let column: Arc<dyn PhysicalExpr> = Arc::new(column);
            Ok(Transformed::new(column, true, TreeNodeRecursion::Jump))
        })?
        .data;
    let output = output.into_iter().map(position).collect::<Result<_>>()?;
    let rewritten = FilterExecBuilder::from(filter)
        .with_input(scan)
        .with_predicate(predicate)
        // (`apply_projection` composes with the filter's own projection, which indexed the old
        // input: cleared first, the new one is the whole output)
        .apply_projection(None)?
        .apply_projection(Some(output))?
        .build()?;
    Ok(Some(rewritten))
}

impl PhysicalOptimizerRule for WholeValueFiltersIntoScan {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(filter) = node.downcast_ref::<FilterExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match reads_into_scan(filter)? {
                Some(rewritten) => Transformed::yes(Arc::new(rewritten) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "variant_whole_value_filters_into_scan"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
