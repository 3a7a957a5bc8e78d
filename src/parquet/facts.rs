//! What one Parquet file's footer says about its shredded variant columns: which residual
//! `value` leaves hold nothing in the whole file. A path whose residuals are all empty is read
//! from its typed leaf alone, without `value` and without `metadata`.
use std::collections::{HashMap, HashSet};

use datafusion::arrow::datatypes::Schema;
use datafusion::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

/// The facts of one file (see the module documentation).
#[derive(Debug, Default)]
pub struct FileFacts {
    columns: HashMap<String, ColumnFacts>,
}

/// The facts of one variant column of a file.
#[derive(Debug, Default)]
pub(crate) struct ColumnFacts {
    /// Every `value` leaf, as a field path inside the column (Parquet names: arrays appear as
    /// their `list`/`element` levels), and whether it holds nothing in the whole file.
    residuals: HashMap<Vec<String>, bool>,
}

impl FileFacts {
    /// The facts of the columns named in `variant_columns` that `file_schema` (the file's Arrow
    /// schema) has as structs, from the statistics in `metadata`. A leaf without null counts
    /// in some row group counts as holding values.
    pub fn new(
        metadata: &ParquetMetaData,
        file_schema: &Schema,
        variant_columns: &[String],
    ) -> Self {
        let wanted: HashSet<&str> = variant_columns
            .iter()
            .map(String::as_str)
            .filter(|c| {
                file_schema
                    .field_with_name(c)
                    .is_ok_and(|f| f.data_type().is_nested())
            })
            .collect();
        let mut facts = FileFacts::default();
        if wanted.is_empty() {
            return facts;
        }
        let descr = metadata.file_metadata().schema_descr();
        for (i, leaf) in descr.columns().iter().enumerate() {
            let parts = leaf.path().parts();
            let (Some(root), Some(last)) = (parts.first(), parts.last()) else {
                continue;
            };
            if !wanted.contains(root.as_str()) || last != "value" || parts.len() < 2 {
                continue;
            }
            let empty = metadata
                .row_groups()
                .iter()
                .all(|rg| holds_nothing(rg.column(i)));
            facts
                .columns
                .entry(root.clone())
                .or_default()
                .residuals
                .insert(parts[1..].to_vec(), empty);
        }
        facts
    }

    /// The facts of variant column `name`, if the file has them.
    pub(crate) fn column(&self, name: &str) -> Option<&ColumnFacts> {
        self.columns.get(name)
    }
}

/// True when every value of a column chunk is null, by its statistics (a leaf inside an array
/// has a value per element: its null count is compared with its value count, not the row
/// count). A chunk without a null count may hold values.
pub(crate) fn holds_nothing(chunk: &ColumnChunkMetaData) -> bool {
    chunk
        .statistics()
        .and_then(|s| s.null_count_opt())
        .is_some_and(|nulls| i64::try_from(nulls).ok() == Some(chunk.num_values()))
}

impl ColumnFacts {
    /// True when the `value` leaf at `leaf` (a field path inside the column) holds nothing in
    /// the file.
    pub(crate) fn is_empty(&self, leaf: &[String]) -> bool {
        self.residuals.get(leaf).copied().unwrap_or(false)
    }

    /// True when some `value` leaf at or below `prefix` holds something in the file.
    pub(crate) fn has_residuals_under(&self, prefix: &[String]) -> bool {
        self.residuals
            .iter()
            .any(|(leaf, empty)| !empty && leaf.starts_with(prefix))
    }
}
