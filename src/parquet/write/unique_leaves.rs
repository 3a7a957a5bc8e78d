//! The shredded leaves a file writes without a dictionary: those whose values hardly repeat in
//! the sample automatic shredding inferred from (identifiers, hashes, microsecond times).
//!
//! A dictionary there holds every value once more, and the writer hashes each value only to give
//! the dictionary up at its page limit (1 MiB) in every row group. On 2M Bluesky-like events
//! (`jsonbench/`), writing the seven such leaves plain made the sorted load's file 5% smaller and
//! the load about 5% shorter, the queries as fast; a leaf whose values repeat a little (the
//! user id `did`: one sampled value in 25 repeats an earlier one) keeps its dictionary, which
//! JSONBench's Q2 reads 15% faster than plain pages.
use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;

/// Non-null sampled values a leaf needs for its sample to decide (fewer: the dictionary stays).
const DECIDES_FROM: usize = 1000;

/// A leaf hardly repeats when at most one sampled value in this many repeats an earlier one.
const REPEATS_ONE_IN: usize = 128;

/// The ordinals of the leaves of `shredded` (a shredded variant column's sample), numbered
/// depth-first as Parquet numbers the column's leaves, whose values hardly repeat.
pub(super) fn unique_leaves(shredded: &ArrayRef) -> Result<Vec<usize>> {
    let mut leaves = vec![];
    collect_leaves(shredded, &mut leaves);
    let mut unique = vec![];
    for (ordinal, leaf) in leaves.iter().enumerate() {
        if hardly_repeats(leaf)? {
            unique.push(ordinal);
        }
    }
    Ok(unique)
}

/// The leaf arrays of `array` in depth-first order (a list's leaves are its elements'). The
/// depth is the shredding type's, which inference bounds.
fn collect_leaves(array: &ArrayRef, out: &mut Vec<ArrayRef>) {
    match array.data_type() {
        DataType::Struct(_) => {
            for child in array.as_struct().columns() {
                collect_leaves(child, out);
            }
        }
        DataType::List(_) => collect_leaves(array.as_list::<i32>().values(), out),
        DataType::LargeList(_) => collect_leaves(array.as_list::<i64>().values(), out),
        _ => out.push(Arc::clone(array)),
    }
}

/// True when `leaf` has enough non-null values to decide and at most one in
/// [`REPEATS_ONE_IN`] of them equals an earlier one.
fn hardly_repeats(leaf: &ArrayRef) -> Result<bool> {
    let values = leaf.len() - leaf.null_count();
    if values < DECIDES_FROM {
        return Ok(false);
    }
    let converter = RowConverter::new(vec![SortField::new(leaf.data_type().clone())])?;
    let rows = converter.convert_columns(&[Arc::clone(leaf)])?;
    let mut seen = HashSet::with_capacity(values);
    let mut repeats = 0;
    for i in (0..leaf.len()).filter(|&i| leaf.is_valid(i)) {
        if !seen.insert(rows.row(i)) {
            repeats += 1;
        }
    }
    Ok(repeats * REPEATS_ONE_IN <= values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cast::target_type::parse_target_type;
    use crate::functions::parse_json::json_variants;
    use crate::shredding::shred_variant;

    /// A shredded column of `rows` objects `{"id": <distinct>, "kind": <one of three>, "n":
    /// <each value twice>}`: leaves metadata, value, id.value, id.typed_value, kind.value,
    /// kind.typed_value, n.value, n.typed_value.
    fn shredded(rows: usize) -> ArrayRef {
        let column = json_variants(
            (0..rows).map(|i| format!(r#"{{"id": "u{i}", "kind": "k{}", "n": {}}}"#, i % 3, i / 2)),
        );
        let shredding = parse_target_type("struct<id: string, kind: string, n: bigint>").unwrap();
        shred_variant(&column, &shredding).unwrap()
    }

    #[test]
    fn only_leaves_whose_values_hardly_repeat_are_chosen() {
        // id: all distinct (leaf 3); kind: 3 values; n: each value twice (half repeat); the
        // metadata (one dictionary for every row) repeats; value columns are all NULL
        assert_eq!(unique_leaves(&shredded(2000)).unwrap(), vec![3]);
    }

    #[test]
    fn a_small_sample_decides_nothing() {
        // 999 distinct ids: below the 1000 values a sample needs
        assert!(unique_leaves(&shredded(999)).unwrap().is_empty());
    }
}
