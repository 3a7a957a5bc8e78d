//! Nested Arrow arrays (structs, lists, maps) rebuilt with their children converted: the one walk
//! behind every conversion that reaches inside them (variants rendered for display, reassembled
//! or shredded where they sit, intervals to and from their Parquet bytes).
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, LargeListArray, ListArray, MapArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_err};

/// `array` (a struct, list, large list, fixed-size list or map) rebuilt as the type `out`, of the
/// same kind: each child (a struct's fields in order, a list's values, a map's entries as one
/// struct) converted by `child(its field in array, the array, its field in out)` into the type of
/// its field in `out`. Offsets and nulls are kept. Another kind of array, or another kind of type
/// than the array's, is an error.
pub(crate) fn with_children_converted(
    array: &ArrayRef,
    out: &DataType,
    mut child: impl FnMut(&FieldRef, &ArrayRef, &FieldRef) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    Ok(match (array.data_type(), out) {
        (DataType::Struct(fields), DataType::Struct(out_fields))
            if fields.len() == out_fields.len() =>
        {
            let s = array.as_struct();
            let columns = (fields.iter().zip(s.columns()).zip(out_fields.iter()))
                .map(|((f, c), out)| child(f, c, out))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StructArray::try_new(
                out_fields.clone(),
                columns,
                s.nulls().cloned(),
            )?)
        }
        (DataType::List(f), DataType::List(out)) => {
            let l = array.as_list::<i32>();
            let values = child(f, l.values(), out)?;
            Arc::new(ListArray::try_new(
                Arc::clone(out),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::LargeList(f), DataType::LargeList(out)) => {
            let l = array.as_list::<i64>();
            let values = child(f, l.values(), out)?;
            Arc::new(LargeListArray::try_new(
                Arc::clone(out),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::FixedSizeList(f, n), DataType::FixedSizeList(out, _)) => {
            let l = array.as_fixed_size_list();
            let values = child(f, l.values(), out)?;
            Arc::new(FixedSizeListArray::try_new(
                Arc::clone(out),
                *n,
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::Map(f, _), DataType::Map(out, sorted)) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let entries = child(f, &entries, out)?;
            let Some(entries) = entries.as_struct_opt() else {
                return exec_err!("map entries converted to {}", entries.data_type());
            };
            Arc::new(MapArray::try_new(
                Arc::clone(out),
                m.offsets().clone(),
                entries.clone(),
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        (from, to) => return exec_err!("cannot rebuild {from} as {to}"),
    })
}
