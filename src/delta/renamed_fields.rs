//! Column mapping inside columns: a struct column's fields (at any depth, inside lists and maps
//! too) named in the data files by their physical names, renamed to the table's. The arrays are
//! the same: only the type's names change, no value is copied.
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::common::Result;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_plan::PhysicalExpr;

use crate::arrow_nested::with_children_converted;

/// `child` (a column as its data files name its fields) as `field` (the same column as the table
/// names them).
#[derive(Debug, Clone, Eq)]
pub struct RenamedFields {
    child: Arc<dyn PhysicalExpr>,
    field: FieldRef,
}

impl RenamedFields {
    /// `child`'s values, typed as `field` (their type with the table's names).
    pub fn new(child: Arc<dyn PhysicalExpr>, field: FieldRef) -> Self {
        Self { child, field }
    }

    /// The column as the table names it.
    pub fn field(&self) -> &FieldRef {
        &self.field
    }
}

impl PartialEq for RenamedFields {
    fn eq(&self, other: &Self) -> bool {
        self.child.eq(&other.child) && self.field == other.field
    }
}

impl Hash for RenamedFields {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.child.hash(state);
        self.field.hash(state);
    }
}

impl fmt::Display for RenamedFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "delta_logical_names({})", self.child)
    }
}

impl PhysicalExpr for RenamedFields {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let input = self.child.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(renamed(
            &input,
            self.field.data_type(),
        )?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.child]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(Self::new(
            Arc::clone(&children[0]),
            Arc::clone(&self.field),
        )))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `array` typed as `out`, a type of the same shape whose fields may be named otherwise (an
/// error where the shapes differ).
#[recursive::recursive]
fn renamed(array: &ArrayRef, out: &DataType) -> Result<ArrayRef> {
    if array.data_type() == out {
        return Ok(Arc::clone(array));
    }
    with_children_converted(array, out, |_, child, out| renamed(child, out.data_type()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray, Int32Array, ListArray, StructArray};
    use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
    use datafusion::arrow::datatypes::Field;
    use datafusion::physical_expr::expressions::Column;

    /// A list of structs {a int} whose field is `col-1` in the file: renamed to `a`, with the
    /// list's offsets, the struct's nulls and the values as they were.
    #[test]
    fn nested_names_change_and_nothing_else() {
        let file_struct = DataType::Struct(vec![Field::new("col-1", DataType::Int32, true)].into());
        let table_struct = DataType::Struct(vec![Field::new("a", DataType::Int32, true)].into());
        let values = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let structs = StructArray::try_new(
            vec![Field::new("col-1", DataType::Int32, true)].into(),
            vec![values],
            Some(NullBuffer::from(vec![true, true, false])),
        )
        .unwrap();
        let list = ListArray::try_new(
            Arc::new(Field::new("element", file_struct, true)),
            OffsetBuffer::from_lengths([2, 0, 1]),
            Arc::new(structs),
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap();
        let table_field = Arc::new(Field::new(
            "l",
            DataType::List(Arc::new(Field::new("element", table_struct, true))),
            true,
        ));
        let batch = RecordBatch::try_from_iter([("col-9", Arc::new(list) as ArrayRef)]).unwrap();
        let expr = RenamedFields::new(Arc::new(Column::new("col-9", 0)), Arc::clone(&table_field));
        let out = expr.evaluate(&batch).unwrap().into_array(3).unwrap();
        assert_eq!(out.data_type(), table_field.data_type());
        let out = out.as_list::<i32>();
        assert_eq!(out.value_offsets(), &[0, 2, 2, 3]);
        assert!(out.is_null(1));
        let inner = out.values().as_struct();
        assert_eq!(inner.column_names(), ["a"]);
        assert!(inner.is_null(2) && inner.is_valid(1));
        let a = inner
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(a.values(), &[1, 0, 3][..]);
        assert!(a.is_null(1));
        // a shape that differs is an error, not a panic
        let wrong = Arc::new(Field::new("l", DataType::Int32, true));
        let err = RenamedFields::new(Arc::new(Column::new("col-9", 0)), wrong)
            .evaluate(&batch)
            .unwrap_err();
        assert!(err.to_string().contains("cannot rebuild"), "{err}");
    }
}
