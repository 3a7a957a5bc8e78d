//! What DataFusion 55 loses when it decodes a physical plan, put back: a scalar function call
//! is decoded with a return field made of its type alone (no metadata), and a literal without
//! its field metadata. Variant values then arrive as plain structs, which our functions, our
//! sink and the display would not treat as variants.
use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::Result;
use datafusion::common::metadata::FieldMetadata;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};

use crate::variant_array::{has_variant_shape, variant_extension_metadata};

/// `plan` with the return fields of its projections' function calls computed again from their
/// arguments (as planning did), and variant-shaped literals marked as variants. The nodes above
/// a changed projection are rebuilt over it: those whose schema is their input's follow (an
/// aggregate keeps the schema it was decoded with). Calls elsewhere (filters, aggregates) keep
/// their decoded fields: their results are read by our functions from their shape, and only
/// projections name the columns a query returns or writes. (The projection of our Parquet scan
/// is restored as the codec decodes it.) A call
/// whose return field cannot be computed again keeps the decoded one.
pub fn restore_variant_fields(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let Some(projection) = node.downcast_ref::<ProjectionExec>() else {
            return Ok(Transformed::no(node));
        };
        let input_schema = projection.input().schema();
        let mut changed = false;
        let exprs = projection
            .expr()
            .iter()
            .map(|p| {
                let restored = restore_expr(Arc::clone(&p.expr), &input_schema)?;
                changed |= restored.transformed;
                Ok(ProjectionExpr {
                    expr: restored.data,
                    alias: p.alias.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if !changed {
            return Ok(Transformed::no(node));
        }
        let restored = ProjectionExec::try_new(exprs, Arc::clone(projection.input()))?;
        Ok(Transformed::yes(
            Arc::new(restored) as Arc<dyn ExecutionPlan>
        ))
    })
    .data()
}

/// `expr` (over `schema`) with its function calls' return fields and literals restored.
pub(super) fn restore_expr(
    expr: Arc<dyn PhysicalExpr>,
    schema: &Schema,
) -> Result<Transformed<Arc<dyn PhysicalExpr>>> {
    expr.transform_up(|e| {
        if let Some(call) = e.downcast_ref::<ScalarFunctionExpr>() {
            let Ok(planned) = ScalarFunctionExpr::try_new(
                Arc::new(call.fun().clone()),
                call.args().to_vec(),
                schema,
                Arc::new(call.config_options().clone()),
            ) else {
                return Ok(Transformed::no(e));
            };
            let (planned_field, decoded_field) =
                (planned.return_field(schema)?, call.return_field(schema)?);
            // only metadata may differ; anything else means the call is not what was planned
            if planned_field.data_type() != decoded_field.data_type()
                || planned_field.metadata() == decoded_field.metadata()
            {
                return Ok(Transformed::no(e));
            }
            let planned = planned.with_nullable(call.nullable());
            return Ok(Transformed::yes(Arc::new(planned) as Arc<dyn PhysicalExpr>));
        }
        if let Some(literal) = e.downcast_ref::<Literal>() {
            let field = literal.return_field(schema)?;
            if has_variant_shape(field.data_type()) && field.metadata().is_empty() {
                let metadata = FieldMetadata::from(variant_extension_metadata());
                let marked = Literal::new_with_metadata(literal.value().clone(), Some(metadata));
                return Ok(Transformed::yes(Arc::new(marked) as Arc<dyn PhysicalExpr>));
            }
        }
        Ok(Transformed::no(e))
    })
}
