//! Reading a file whose variant column has another layout than the table's: a shredded file
//! under a table declared `v VARIANT`, or files shredded differently. DataFusion's default
//! adapter would cast the struct, dropping `typed_value` (or failing on nullability); this one
//! reassembles such columns into the table's layout instead.
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use crate::variant_array::{has_variant_shape, is_variant_field};

/// Wraps another [`PhysicalExprAdapterFactory`] (DataFusion's default unless given): variant
/// columns whose file layout differs from the table's are read through a reassembly into the
/// table's layout; everything else is left to the wrapped adapter.
#[derive(Debug, Clone)]
pub struct VariantExprAdapterFactory {
    inner: Arc<dyn PhysicalExprAdapterFactory>,
}

impl VariantExprAdapterFactory {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn PhysicalExprAdapterFactory>) -> Self {
        Self { inner }
    }
}

impl Default for VariantExprAdapterFactory {
    fn default() -> Self {
        Self::new(Arc::new(DefaultPhysicalExprAdapterFactory))
    }
}

impl PhysicalExprAdapterFactory for VariantExprAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let mut relayout: HashMap<String, FieldRef> = HashMap::new();
        let mut logical_for_inner: Vec<FieldRef> = Vec::new();
        for field in logical_file_schema.fields() {
            let physical = physical_file_schema.field_with_name(field.name()).ok();
            match physical {
                Some(physical)
                    if (is_variant_field(field) || has_variant_shape(field.data_type()))
                        && has_variant_shape(physical.data_type())
                        && physical.data_type() != field.data_type() =>
                {
                    relayout.insert(field.name().clone(), Arc::clone(field));
                    // the wrapped adapter then keeps the column as the file has it
                    logical_for_inner.push(Arc::new(physical.clone()));
                }
                _ => logical_for_inner.push(Arc::clone(field)),
            }
        }
        if relayout.is_empty() {
            return self.inner.create(logical_file_schema, physical_file_schema);
        }
        let logical_for_inner = Arc::new(Schema::new_with_metadata(
            logical_for_inner,
            logical_file_schema.metadata().clone(),
        ));
        Ok(Arc::new(VariantExprAdapter {
            inner: self.inner.create(logical_for_inner, physical_file_schema)?,
            relayout,
        }))
    }
}

#[derive(Debug)]
struct VariantExprAdapter {
    inner: Arc<dyn PhysicalExprAdapter>,
    /// Columns to reassemble, with the table's field.
    relayout: HashMap<String, FieldRef>,
}

impl PhysicalExprAdapter for VariantExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        self.inner
            .rewrite(expr)?
            .transform_up(|e| {
                let Some(column) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                match self.relayout.get(column.name()) {
                    Some(field) => Ok(Transformed::yes(Arc::new(RelayoutVariant {
                        child: Arc::clone(&e),
                        field: Arc::clone(field),
                    })
                        as Arc<dyn PhysicalExpr>)),
                    None => Ok(Transformed::no(e)),
                }
            })
            .data()
    }
}

/// A variant column of any layout (shredded or not, any binary type) brought to `field`'s
/// layout.
#[derive(Debug, Eq)]
struct RelayoutVariant {
    child: Arc<dyn PhysicalExpr>,
    field: FieldRef,
}

impl PartialEq for RelayoutVariant {
    fn eq(&self, other: &Self) -> bool {
        self.child.eq(&other.child) && self.field == other.field
    }
}

impl Hash for RelayoutVariant {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.child.hash(state);
        self.field.hash(state);
    }
}

impl fmt::Display for RelayoutVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unshred_variant({})", self.child)
    }
}

impl PhysicalExpr for RelayoutVariant {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let input = self.child.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(relayout(&input, &self.field)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.child]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(RelayoutVariant {
            child: Arc::clone(&children[0]),
            field: Arc::clone(&self.field),
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Reassembles `input` (when shredded) and casts its `metadata`/`value` children to the types
/// `field` declares.
fn relayout(input: &ArrayRef, field: &FieldRef) -> Result<ArrayRef> {
    let DataType::Struct(target) = field.data_type() else {
        return exec_err!("variant column {} is not a struct", field.name());
    };
    let unshredded = match input.as_struct_opt() {
        Some(s) if s.column_by_name("typed_value").is_some() => crate::variant_array::unshred(s)?,
        Some(s) => s.clone(),
        None => {
            return exec_err!(
                "variant column {} is {} in this file",
                field.name(),
                input.data_type()
            );
        }
    };
    let mut columns = Vec::with_capacity(target.len());
    for child in target.iter() {
        match unshredded.column_by_name(child.name()) {
            Some(c) if c.data_type() == child.data_type() => columns.push(Arc::clone(c)),
            Some(c) => columns.push(cast(c, child.data_type())?),
            None => {
                return exec_err!(
                    "variant column {} has no {} child in this file",
                    field.name(),
                    child.name()
                );
            }
        }
    }
    Ok(Arc::new(StructArray::try_new(
        target.clone(),
        columns,
        unshredded.nulls().cloned(),
    )?))
}
