//! `is_valid_variant` straight from shredded columns: each row is checked where the file holds
//! it, without reassembling it first. A shredded row is valid when its metadata is, every
//! residual `value` is a valid encoding at its depth, no primitive or array `typed_value` has a
//! residual beside it, a partially shredded object's residual is an object, the name of every
//! shredded field the row has is in its metadata (the spec requires it of every field name), and
//! the nesting stays within the depth limit. Typed columns hold valid values by construction
//! (their types were checked once per batch), so they are not read.
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanBuilder, StructArray};
use datafusion::common::Result;

use super::reassemble::{GroupPlan, ShreddedRows, Typed};
use crate::codec::{DEFAULT_MAX_DEPTH, Metadata, Variant, basic_type, validate_value};

/// Whether each row of the shredded variant column `array` is valid (SQL NULL stays NULL), as
/// the module documentation says.
pub fn shredded_validity(array: &StructArray) -> Result<ArrayRef> {
    let column = ShreddedRows::new(array)?;
    let plan = &column.plan;
    let mut out = BooleanBuilder::with_capacity(array.len());
    for i in 0..array.len() {
        match column.metadata(i) {
            Some(m) => out.append_value(row_is_valid(m, plan, i)),
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// Row `i` of the column planned as `plan`, with metadata bytes `m`.
fn row_is_valid(m: &[u8], plan: &GroupPlan<'_>, i: usize) -> bool {
    let Ok(meta) = Metadata::try_new(m) else {
        return false;
    };
    meta.validate().is_ok() && group_is_valid(meta, plan, i, 0)
}

/// True when group `g` holds a valid value (or none) at row `i`, at nesting `depth`. (The
/// recursion follows the plan, which `GroupPlan::new` refuses deeper than the depth limit.)
#[recursive::recursive]
fn group_is_valid(meta: Metadata<'_>, g: &GroupPlan<'_>, i: usize, depth: usize) -> bool {
    let value = g.value.as_ref().and_then(|v| v.get(i));
    let residual_is_valid = |bytes: &[u8]| {
        validate_value(
            Variant::with_metadata(meta, bytes),
            depth,
            DEFAULT_MAX_DEPTH,
        )
    };
    let Some((_, typed)) = g.typed.as_ref().filter(|(t, _)| t.is_valid(i)) else {
        return value.is_none_or(|v| residual_is_valid(v).is_ok());
    };
    match typed {
        Typed::Object(fields) => {
            if depth >= DEFAULT_MAX_DEPTH {
                return false;
            }
            let residual_is_object = value.is_none_or(|v| {
                // the header says object; the validation then reads it once
                v.first().is_some_and(|h| h & 0x03 == basic_type::OBJECT)
                    && residual_is_valid(v).is_ok()
            });
            residual_is_object
                && fields.iter().filter(|f| f.is_present(i)).all(|f| {
                    matches!(meta.find(f.name), Ok(Some(_)))
                        && group_is_valid(meta, &f.group, i, depth + 1)
                })
        }
        _ if value.is_some() => false,
        Typed::Primitive(_) => true,
        Typed::Array(lists, element) => {
            depth < DEFAULT_MAX_DEPTH
                && lists
                    .range(i)
                    .all(|j| group_is_valid(meta, element, j, depth + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{AsArray, BinaryArray, Int64Array};
    use datafusion::arrow::datatypes::Field;

    use super::*;
    use crate::codec::EMPTY_METADATA;

    /// Sorted metadata with the keys `a` and `b` (header, size, offsets 0 1 2, bytes).
    const AB: &[u8] = &[0x11, 2, 0, 1, 2, b'a', b'b'];
    /// `{"b": true}` against [`AB`]: object header, 1 field, id 1, offsets 0 1, `true`.
    const B_TRUE: &[u8] = &[0x02, 1, 1, 0, 1, 0x04];
    /// The int8 5.
    const FIVE: &[u8] = &[0x0C, 5];

    fn binary(rows: &[Option<&[u8]>]) -> ArrayRef {
        Arc::new(BinaryArray::from(rows.to_vec()))
    }

    /// A group (or a column) of the given named children.
    fn group(children: Vec<(&str, ArrayRef)>) -> ArrayRef {
        Arc::new(StructArray::from(
            children
                .into_iter()
                .map(|(name, array)| {
                    let field = Field::new(name, array.data_type().clone(), true);
                    (Arc::new(field), array)
                })
                .collect::<Vec<_>>(),
        ))
    }

    fn validity(column: ArrayRef) -> Vec<Option<bool>> {
        shredded_validity(column.as_struct())
            .unwrap()
            .as_boolean()
            .iter()
            .collect()
    }

    /// A column shredded as `struct<a bigint>`: each row's metadata, top-level residual and `a`.
    fn object_column(
        metadata: Vec<Option<&[u8]>>,
        value: Vec<Option<&[u8]>>,
        a: Vec<Option<i64>>,
    ) -> ArrayRef {
        let a = group(vec![("typed_value", Arc::new(Int64Array::from(a)))]);
        group(vec![
            ("metadata", binary(&metadata)),
            ("value", binary(&value)),
            ("typed_value", group(vec![("a", a)])),
        ])
    }

    #[test]
    fn well_formed_rows_are_valid_and_null_stays_null() {
        let column = object_column(
            vec![Some(AB), Some(AB), Some(AB), None],
            vec![Some(B_TRUE), None, None, None],
            vec![Some(1), Some(2), None, None],
        );
        assert_eq!(validity(column), [Some(true), Some(true), Some(true), None]);
    }

    #[test]
    fn a_shredded_name_missing_from_the_metadata_is_invalid() {
        // row 0 has `a`, which the empty dictionary lacks; row 1 does not (it is `{}`)
        let column = object_column(
            vec![Some(EMPTY_METADATA), Some(EMPTY_METADATA)],
            vec![None, None],
            vec![Some(5), None],
        );
        assert_eq!(validity(column), [Some(false), Some(true)]);
    }

    #[test]
    fn an_object_with_a_residual_that_is_no_object_is_invalid() {
        let column = object_column(vec![Some(AB)], vec![Some(FIVE)], vec![Some(1)]);
        assert_eq!(validity(column), [Some(false)]);
    }

    #[test]
    fn invalid_bytes_in_a_residual_or_the_metadata_are_invalid() {
        // the residual cut short; a field id past the dictionary; metadata of version 2
        let truncated = &B_TRUE[..5];
        let bad_id: &[u8] = &[0x02, 1, 7, 0, 1, 0x04];
        let column = object_column(
            vec![Some(AB), Some(AB), Some(&[0x12, 0, 0])],
            vec![Some(truncated), Some(bad_id), None],
            vec![Some(1), Some(1), None],
        );
        assert_eq!(validity(column), [Some(false), Some(false), Some(false)]);
    }

    #[test]
    fn a_primitive_with_a_residual_beside_it_is_invalid() {
        let column = group(vec![
            (
                "metadata",
                binary(&[Some(EMPTY_METADATA), Some(EMPTY_METADATA)]),
            ),
            ("value", binary(&[Some(FIVE), Some(FIVE)])),
            (
                "typed_value",
                Arc::new(Int64Array::from(vec![Some(5), None])),
            ),
        ]);
        assert_eq!(validity(column), [Some(false), Some(true)]);
    }
}
