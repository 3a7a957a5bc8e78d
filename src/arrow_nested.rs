//! Arrow helpers below every other room: nested arrays (structs, lists, maps) rebuilt with their
//! children converted, the one walk behind every conversion that reaches inside them (variants
//! rendered for display, reassembled or shredded where they sit, intervals to and from their
//! Parquet bytes); and [`grown_offset`], the checked growth of i32 offsets every output builder
//! uses.
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait,
    StructArray,
};
use datafusion::arrow::datatypes::{DataType, FieldRef, Fields};
use datafusion::common::{DataFusionError, Result, exec_err};

/// The i32 offset after `added` more entries (list elements, map entries, string bytes) past
/// `current`: an error where the output of one batch outgrows i32 offsets, which arrow's
/// builders would panic on.
pub(crate) fn grown_offset(current: usize, added: usize, function: &str) -> Result<i32> {
    current
        .checked_add(added)
        .and_then(|end| i32::try_from(end).ok())
        .ok_or_else(|| {
            DataFusionError::Execution(format!("{function}: output exceeds 2 GiB in one batch"))
        })
}

/// `data_type` with the fields directly inside it (a struct's fields, a list's element, a map's
/// entries) replaced where `change` gives a new one; None when it gives none (or `data_type`
/// holds no fields).
pub(crate) fn with_inner_fields_changed(
    data_type: &DataType,
    mut change: impl FnMut(&FieldRef) -> Option<FieldRef>,
) -> Option<DataType> {
    Some(match data_type {
        DataType::Struct(children) => DataType::Struct(changed_fields(children, change)?),
        DataType::List(f) => DataType::List(change(f)?),
        DataType::LargeList(f) => DataType::LargeList(change(f)?),
        DataType::ListView(f) => DataType::ListView(change(f)?),
        DataType::LargeListView(f) => DataType::LargeListView(change(f)?),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(change(f)?, *n),
        DataType::Map(f, sorted) => DataType::Map(change(f)?, *sorted),
        _ => return None,
    })
}

/// `fields` with each field for which `change` gives a new one replaced; None when it gives
/// none.
pub(crate) fn changed_fields(
    fields: &Fields,
    mut change: impl FnMut(&FieldRef) -> Option<FieldRef>,
) -> Option<Fields> {
    let changed: Vec<Option<FieldRef>> = fields.iter().map(&mut change).collect();
    if changed.iter().all(Option::is_none) {
        return None;
    }
    let fields = (changed.into_iter().zip(fields.iter()))
        .map(|(new, old)| new.unwrap_or_else(|| Arc::clone(old)));
    Some(fields.collect())
}

/// True when `data_type` or a type inside it (struct fields, list elements, map entries) is one
/// for which `test` is true.
#[recursive::recursive]
pub(crate) fn holds_type(data_type: &DataType, test: &dyn Fn(&DataType) -> bool) -> bool {
    test(data_type)
        || match data_type {
            DataType::Struct(fields) => fields.iter().any(|f| holds_type(f.data_type(), test)),
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => holds_type(f.data_type(), test),
            _ => false,
        }
}

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
            list_converted(array.as_list::<i32>(), f, out, child)?
        }
        (DataType::LargeList(f), DataType::LargeList(out)) => {
            list_converted(array.as_list::<i64>(), f, out, child)?
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

fn list_converted<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    field: &FieldRef,
    out: &FieldRef,
    mut child: impl FnMut(&FieldRef, &ArrayRef, &FieldRef) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    let values = child(field, list.values(), out)?;
    Ok(Arc::new(GenericListArray::<O>::try_new(
        Arc::clone(out),
        list.offsets().clone(),
        values,
        list.nulls().cloned(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::grown_offset;

    /// Offsets grow up to i32::MAX and no further: past it, an error instead of arrow's panic.
    #[test]
    fn offsets_stop_at_i32_max() {
        assert_eq!(grown_offset(0, 0, "f").unwrap(), 0);
        assert_eq!(
            grown_offset(i32::MAX as usize - 5, 5, "f").unwrap(),
            i32::MAX
        );
        let err = grown_offset(i32::MAX as usize - 5, 6, "f").unwrap_err();
        assert!(
            err.to_string()
                .contains("f: output exceeds 2 GiB in one batch"),
            "{err}"
        );
        assert!(grown_offset(usize::MAX, 1, "f").is_err());
    }
}
