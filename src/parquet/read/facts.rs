//! What one Parquet file's footer says about its shredded variant columns: which residual
//! `value` leaves hold nothing in the whole file. A path whose residuals are all empty is read
//! from its typed leaf alone, without `value` and without `metadata`; a whole value is read
//! without the empty `value` leaves beside a `typed_value` ([`ColumnFacts::without_empty_residuals`]).
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Fields, Schema};
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
            // (an invalid file may name two leaves alike: empty only when both are)
            facts
                .columns
                .entry(root.clone())
                .or_default()
                .residuals
                .entry(parts[1..].to_vec())
                .and_modify(|e| *e &= empty)
                .or_insert(empty);
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

    /// `file_type` (the column's type in the file) without the `value` fields that hold nothing
    /// in the file where a `typed_value` stays beside them (the spec lets a writer omit such a
    /// `value`, so every reader of shredded columns takes the column so): reading the column
    /// through a cast to it (DataFusion clips the Parquet read to the cast's fields) skips
    /// those leaves, which cost their definition levels and null padding per row even though
    /// they hold nothing. None when no leaf is left out.
    pub(crate) fn without_empty_residuals(&self, file_type: &DataType) -> Option<DataType> {
        let mut changed = false;
        let clipped = self.clip_group(file_type, &mut Vec::new(), &mut changed);
        changed.then_some(clipped)
    }

    /// `data_type` (a `{value, typed_value}` group, `metadata` beside them at the top, whose
    /// Parquet path in the column is `path`) clipped.
    fn clip_group(
        &self,
        data_type: &DataType,
        path: &mut Vec<String>,
        changed: &mut bool,
    ) -> DataType {
        let DataType::Struct(fields) = data_type else {
            return data_type.clone();
        };
        let typed = fields.find("typed_value").is_some();
        let mut kept = Vec::with_capacity(fields.len());
        for field in fields.iter() {
            path.push(field.name().clone());
            match field.name().as_str() {
                // (a `value` of another type is kept, for the readers to refuse)
                "value"
                    if typed
                        && matches!(
                            field.data_type(),
                            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                        )
                        && self.is_empty(path) =>
                {
                    *changed = true
                }
                "typed_value" => {
                    let t = self.clip_typed(field.data_type(), path, changed);
                    kept.push(Arc::new(field.as_ref().clone().with_data_type(t)));
                }
                _ => kept.push(Arc::clone(field)),
            }
            path.pop();
        }
        DataType::Struct(Fields::from(kept))
    }

    /// A `typed_value` type clipped: the groups of an object's fields and of an array's
    /// elements (Parquet names those `list.element`).
    fn clip_typed(
        &self,
        data_type: &DataType,
        path: &mut Vec<String>,
        changed: &mut bool,
    ) -> DataType {
        match data_type {
            DataType::Struct(fields) => {
                let kept: Vec<_> = fields
                    .iter()
                    .map(|field| {
                        path.push(field.name().clone());
                        let t = self.clip_group(field.data_type(), path, changed);
                        path.pop();
                        Arc::new(field.as_ref().clone().with_data_type(t))
                    })
                    .collect();
                DataType::Struct(Fields::from(kept))
            }
            DataType::List(element) => {
                path.extend(["list".to_string(), "element".to_string()]);
                let t = self.clip_group(element.data_type(), path, changed);
                path.truncate(path.len() - 2);
                DataType::List(Arc::new(element.as_ref().clone().with_data_type(t)))
            }
            _ => data_type.clone(),
        }
    }

    /// True when some `value` leaf at or below `prefix` holds something in the file.
    pub(crate) fn has_residuals_under(&self, prefix: &[String]) -> bool {
        self.residuals
            .iter()
            .any(|(leaf, empty)| !empty && leaf.starts_with(prefix))
    }
}
