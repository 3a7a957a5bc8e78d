//! The data files of a Delta snapshot as DataFusion's `PartitionedFile`s: their paths (the log's
//! escapes resolved), typed partition values, the log's statistics (which DataFusion's Parquet
//! opener prunes whole files with, before reading a byte of them) and deletion vectors (a row
//! selection the opener applies).
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, UInt64Array};
use datafusion::arrow::datatypes::UInt64Type;
use datafusion::arrow::datatypes::{DataType, FieldRef, SchemaRef};
use datafusion::common::stats::Precision;
use datafusion::common::{
    Column, ColumnStatistics, DataFusionError, Result, ScalarValue, Statistics, exec_err,
};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::object_store::ObjectMeta;
use datafusion::object_store::path::Path;
use datafusion::parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::pruning::{PruningPredicateBuilder, PruningStatistics};
use deltalake_core::kernel::{EagerSnapshot, LogDataHandler, LogicalFileView};
use deltalake_core::logstore::LogStoreRef;
use futures::StreamExt;
use serde_json::Value;
use url::Url;

use crate::variant_array::is_variant_like;

/// What a scan of a Delta table reads of its data files.
pub(crate) struct FileLayout<'a> {
    /// The columns the data files hold (by physical names under column mapping).
    pub file_schema: &'a SchemaRef,
    /// The partition columns, as the scan names them (physical names under column mapping).
    pub partition_fields: &'a [FieldRef],
    /// Under column mapping: the physical name of each file column, by the table's name.
    pub physical_names: Option<&'a HashMap<String, String>>,
}

/// The files of `snapshot` (a table at `root`) for a scan of `layout`, those that `filter` (over
/// the table's columns, `table_schema`) leaves out skipped: their partition values and the log's
/// bounds say no row of theirs can pass; and how many were skipped.
pub(crate) async fn partitioned_files(
    snapshot: &EagerSnapshot,
    log_store: &LogStoreRef,
    root: &Url,
    layout: FileLayout<'_>,
    filter: Option<(Arc<dyn PhysicalExpr>, &SchemaRef)>,
) -> Result<(Vec<PartitionedFile>, usize)> {
    let FileLayout {
        file_schema,
        partition_fields,
        physical_names,
    } = layout;
    let log_data = snapshot.log_data();
    // (deltalake-core finds no statistics of a column-mapped table: the add actions' own JSON
    // statistics, keyed by physical names, serve then)
    let json_stats;
    let stats: &dyn PruningStatistics = match physical_names {
        Some(_) => {
            json_stats = JsonStats::new(&log_data, file_schema);
            &json_stats
        }
        None => &log_data,
    };
    let partition_values = (log_data.iter())
        .map(|view| partition_values(&view, partition_fields))
        .collect::<Result<Vec<_>>>()?;
    let keep = match filter {
        // (a predicate the pruner cannot take prunes nothing)
        Some((predicate, table_schema)) => {
            let partitions = (snapshot.metadata().partition_columns().iter().enumerate())
                .map(|(c, name)| {
                    let column = partition_values.iter().map(|values| values[c].clone());
                    Ok((name.clone(), ScalarValue::iter_to_array(column)?))
                })
                .collect::<Result<Vec<_>>>()?;
            let rows: UInt64Array = (log_data.iter())
                .map(|view| view.num_records().map(|n| n as u64))
                .collect();
            let bounds = LogBounds {
                log: stats,
                physical_names,
                table_schema,
                partitions,
                rows: Arc::new(rows),
            };
            PruningPredicateBuilder::new()
                .with_file_schema(Arc::clone(table_schema))
                .build(predicate)
                .and_then(|pruning| pruning.prune(&bounds).ok())
        }
        None => None,
    };
    let bounds = FileBounds::new(stats, file_schema);
    let root_path = Path::from_url_path(root.path()).map_err(external)?;
    let mut files = Vec::with_capacity(log_data.num_files());
    let mut deletion_vectors = Vec::new();
    let mut skipped = 0;
    for ((i, view), partition_values) in log_data.iter().enumerate().zip(partition_values) {
        if keep.as_ref().is_some_and(|keep| !keep[i]) {
            skipped += 1;
            continue;
        }
        let location = file_path(&root_path, &view)?;
        let size = u64::try_from(view.size()).unwrap_or(0);
        let meta = ObjectMeta {
            location,
            last_modified: view.modification_datetime().map_err(external)?,
            size,
            e_tag: None,
            version: None,
        };
        let mut file = PartitionedFile::new_from_meta(meta).with_partition_values(partition_values);
        let deletion_vector = view.deletion_vector_descriptor();
        file = file.with_statistics(Arc::new(bounds.of_file(
            i,
            view.num_records(),
            deletion_vector.is_some(),
        )));
        if let Some(dv) = deletion_vector {
            let Some(rows) = view.num_records() else {
                return exec_err!(
                    "Delta table: {} has a deletion vector but no row count in the log",
                    view.path()
                );
            };
            deletion_vectors.push((files.len(), dv, rows, view.path().to_string()));
        }
        files.push(file);
    }
    // the deletion vectors, read a few at once (each may be a file of its own in the store)
    let mut read = futures::stream::iter(deletion_vectors)
        .map(|(index, dv, rows, path)| async move {
            let deleted = read_deletion_vector(dv, log_store, root)
                .await
                .map_err(|e| e.context(format!("deletion vector of {path}")))?;
            Ok::<_, DataFusionError>((index, kept_rows(&deleted, rows)?))
        })
        .buffer_unordered(DELETION_VECTORS_AT_ONCE);
    while let Some(read) = read.next().await {
        let (index, kept) = read?;
        files[index] = files[index]
            .clone()
            .with_extension(ParquetRowSelection::new(kept));
    }
    Ok((files, skipped))
}

/// The object-store path of a file the log lists (paths are relative to the table, escaped as
/// URIs: `%25` is `%`), or its own absolute location (shallow clones).
fn file_path(root: &Path, view: &LogicalFileView) -> Result<Path> {
    let path = view.path();
    if let Ok(url) = Url::parse(&path) {
        return Path::from_url_path(url.path()).map_err(external);
    }
    let joined = format!("{}/{}", root.as_ref().trim_end_matches('/'), path);
    Ok(Path::parse(&joined).unwrap_or_else(|_| Path::from(joined.as_str())))
}

/// The file's partition values, typed as the table types its partition columns (the log holds
/// them as text: "" and a missing value are NULL).
fn partition_values(view: &LogicalFileView, fields: &[FieldRef]) -> Result<Vec<ScalarValue>> {
    if fields.is_empty() {
        return Ok(Vec::new());
    }
    let raw = view.partition_values_map();
    fields
        .iter()
        .map(|field| {
            let text = raw.get(field.name()).cloned().flatten();
            match text.filter(|t| !t.is_empty()) {
                None => ScalarValue::try_from(field.data_type()),
                Some(text) => ScalarValue::Utf8(Some(text.clone()))
                    .cast_to(field.data_type())
                    .map_err(|e| {
                        e.context(format!(
                            "Delta table: partition value '{text}' of column {} in {}",
                            field.name(),
                            view.path()
                        ))
                    }),
            }
        })
        .collect()
}

/// The log's statistics as bounds: a string's maximum may be cut to a prefix and a timestamp's
/// truncated to milliseconds (the protocol allows both), which makes them no upper bound, so
/// those maxima are withheld; minima (cut or truncated down, still lower bounds), null counts
/// and row counts pass as the log has them; partition columns are bounded by their values,
/// exactly.
struct LogBounds<'a> {
    log: &'a dyn PruningStatistics,
    /// Under column mapping: the name `log` knows each column by (by the table's name).
    physical_names: Option<&'a HashMap<String, String>>,
    table_schema: &'a SchemaRef,
    /// Each partition column (as the table names it) with its typed value per file.
    partitions: Vec<(String, ArrayRef)>,
    /// Each file's row count, from the log (deltalake-core's own gives none for these logs).
    rows: ArrayRef,
}

impl LogBounds<'_> {
    fn partition(&self, column: &Column) -> Option<&ArrayRef> {
        (self.partitions.iter())
            .find(|(name, _)| *name == column.name)
            .map(|(_, values)| values)
    }

    /// `column` (a file column, by the table's name) as the log's statistics name it.
    fn in_log(&self, column: &Column) -> Option<Column> {
        match self.physical_names {
            Some(names) => Some(Column::new_unqualified(names.get(&column.name)?)),
            None => Some(column.clone()),
        }
    }
}

impl PruningStatistics for LogBounds<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        match self.partition(column) {
            Some(values) => Some(Arc::clone(values)),
            None => self.log.min_values(&self.in_log(column)?),
        }
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        if let Some(values) = self.partition(column) {
            return Some(Arc::clone(values));
        }
        let field = self.table_schema.field_with_name(column.name()).ok()?;
        if !max_is_a_bound(field.data_type()) {
            return None;
        }
        self.log.max_values(&self.in_log(column)?)
    }

    fn num_containers(&self) -> usize {
        self.log.num_containers()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let Some(values) = self.partition(column) else {
            return self.log.null_counts(&self.in_log(column)?);
        };
        // (a partition column is NULL in every row of a file whose value is NULL, in none of
        // the others)
        let rows = self.rows.as_primitive::<UInt64Type>();
        let counts: UInt64Array = (0..values.len())
            .map(|i| match values.is_null(i) {
                true => rows.is_valid(i).then(|| rows.value(i)),
                false => Some(0),
            })
            .collect();
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::clone(&self.rows))
    }

    fn contained(
        &self,
        column: &Column,
        values: &std::collections::HashSet<ScalarValue>,
    ) -> Option<datafusion::arrow::array::BooleanArray> {
        match self.partition(column) {
            Some(_) => None,
            None => self.log.contained(&self.in_log(column)?, values),
        }
    }
}

/// The statistics each `add` of the log holds as JSON (keyed by the files' column names), read
/// by us: bounds of integer, boolean, string, date and timestamp columns (whose JSON converts
/// exactly), null counts and row counts.
struct JsonStats {
    /// Per file: its statistics, where the log has them.
    files: Vec<Option<Value>>,
    /// The type of each file column, by name.
    types: HashMap<String, DataType>,
}

impl JsonStats {
    fn new(log: &LogDataHandler<'_>, file_schema: &SchemaRef) -> Self {
        let files = (log.iter())
            .map(|view| serde_json::from_str(&view.stats()?).ok())
            .collect();
        let types = (file_schema.fields().iter())
            .filter(|f| !is_variant_like(f))
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        JsonStats { files, types }
    }

    /// Per file, the value the statistics give `column` under `kind` (`minValues`, ..).
    fn per_file<'a>(
        &'a self,
        column: &'a Column,
        kind: &'a str,
    ) -> impl Iterator<Item = Option<&'a Value>> + 'a {
        (self.files.iter()).map(move |stats| stats.as_ref()?.get(kind)?.get(&column.name))
    }

    fn bounds(&self, column: &Column, kind: &str) -> Option<ArrayRef> {
        let data_type = self.types.get(&column.name)?;
        let exact = matches!(
            data_type,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Boolean
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Date32
                | DataType::Timestamp(..)
        );
        if !exact {
            return None;
        }
        let null = ScalarValue::try_from(data_type).ok()?;
        let values = self.per_file(column, kind).map(|value| {
            let scalar = match value {
                Some(Value::String(text)) => ScalarValue::Utf8(Some(text.clone())),
                Some(Value::Number(n)) => ScalarValue::Int64(n.as_i64()),
                Some(Value::Bool(b)) => ScalarValue::Boolean(Some(*b)),
                _ => return null.clone(),
            };
            scalar.cast_to(data_type).unwrap_or_else(|_| null.clone())
        });
        ScalarValue::iter_to_array(values).ok()
    }
}

impl PruningStatistics for JsonStats {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, "minValues")
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, "maxValues")
    }

    fn num_containers(&self) -> usize {
        self.files.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        self.types.get(&column.name)?;
        let counts: UInt64Array = (self.per_file(column, "nullCount"))
            .map(|count| count.and_then(Value::as_u64))
            .collect();
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let rows: UInt64Array = (self.files.iter())
            .map(|stats| stats.as_ref()?.get("numRecords")?.as_u64())
            .collect();
        Some(Arc::new(rows))
    }

    fn contained(
        &self,
        _column: &Column,
        _values: &std::collections::HashSet<ScalarValue>,
    ) -> Option<datafusion::arrow::array::BooleanArray> {
        None
    }
}

/// Whether the log's maximum of a column of `data_type` is an upper bound (not for strings,
/// which may be cut to a prefix, nor timestamps, truncated to milliseconds).
fn max_is_a_bound(data_type: &DataType) -> bool {
    !matches!(
        data_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Timestamp(..)
    )
}

/// The log's per-file minimum and maximum values of the columns whose bounds prune safely (the
/// maxima of [`max_is_a_bound`] columns alone): they say which files cannot hold a value; they
/// are no exact answer (null counts are not given, so that no column is ever taken for a
/// constant).
struct FileBounds {
    /// Per file-schema column: the minimum and (where it is a bound) maximum per file, where
    /// the log has them.
    columns: Vec<Option<(ArrayRef, Option<ArrayRef>)>>,
}

impl FileBounds {
    fn new(stats: &dyn PruningStatistics, file_schema: &SchemaRef) -> Self {
        let columns = (file_schema.fields().iter())
            .map(|field| {
                if !prunes_safely(field) {
                    return None;
                }
                let column = Column::new_unqualified(field.name());
                let max = (max_is_a_bound(field.data_type()))
                    .then(|| stats.max_values(&column))
                    .flatten();
                Some((stats.min_values(&column)?, max))
            })
            .collect();
        FileBounds { columns }
    }

    /// The statistics of file `i` of the log: its row count (inexact once rows are deleted)
    /// and its columns' bounds.
    fn of_file(&self, i: usize, rows: Option<usize>, deletes: bool) -> Statistics {
        let num_rows = match rows {
            Some(rows) if !deletes => Precision::Exact(rows),
            Some(rows) => Precision::Inexact(rows),
            None => Precision::Absent,
        };
        let column_statistics = (self.columns.iter())
            .map(|bounds| {
                let mut stats = ColumnStatistics::new_unknown();
                if let Some((min, max)) = bounds {
                    if let Ok(min) = ScalarValue::try_from_array(min, i)
                        && !min.is_null()
                    {
                        stats.min_value = Precision::Exact(min);
                    }
                    if let Some(max) = max
                        && let Ok(max) = ScalarValue::try_from_array(max, i)
                        && !max.is_null()
                    {
                        stats.max_value = Precision::Exact(max);
                    }
                }
                stats
            })
            .collect();
        Statistics {
            num_rows,
            total_byte_size: Precision::Absent,
            column_statistics,
        }
    }
}

/// Whether the log's bounds of `field` may prune files: integers, decimals and dates, and the
/// minima of timestamps and strings (floats are left out: NaN orders differently in Spark's
/// statistics).
fn prunes_safely(field: &FieldRef) -> bool {
    !is_variant_like(field)
        && matches!(
            field.data_type(),
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Decimal128(..)
                | DataType::Date32
                | DataType::Timestamp(..)
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
        )
}

/// How many deletion vectors planning reads at once.
const DELETION_VECTORS_AT_ONCE: usize = 16;

/// The rows of a deletion vector (row indexes, ascending), read as the Delta kernel reads them:
/// inline, or from its file relative to the table.
async fn read_deletion_vector(
    dv: deltalake_core::kernel::DeletionVectorDescriptor,
    log_store: &LogStoreRef,
    root: &Url,
) -> Result<Vec<u64>> {
    let dv: delta_kernel::actions::deletion_vector::DeletionVectorDescriptor =
        dv.try_into().map_err(external)?;
    let storage = log_store.engine(None).storage_handler();
    let root = root.clone();
    // (the kernel's storage handler blocks on its own tasks)
    tokio::task::spawn_blocking(move || dv.row_indexes(storage, &root))
        .await
        .map_err(external)?
        .map_err(external)
}

/// The selection of a file of `rows` rows that leaves out `deleted` (ascending row indexes).
fn kept_rows(deleted: &[u64], rows: usize) -> Result<RowSelection> {
    let mut selectors = Vec::new();
    let mut next = 0usize;
    for &row in deleted {
        let row = usize::try_from(row).unwrap_or(usize::MAX);
        if row >= rows {
            return exec_err!("deletion vector deletes row {row} of a file of {rows} rows");
        }
        if row < next {
            continue;
        }
        if row > next {
            selectors.push(RowSelector::select(row - next));
        }
        selectors.push(RowSelector::skip(1));
        next = row + 1;
    }
    if next < rows {
        selectors.push(RowSelector::select(rows - next));
    }
    Ok(RowSelection::from(selectors))
}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(selection: &RowSelection) -> Vec<(bool, usize)> {
        selection.iter().map(|s| (s.skip, s.row_count)).collect()
    }

    #[test]
    fn deleted_rows_become_skips() {
        let s = kept_rows(&[0, 2, 3, 9], 10).unwrap();
        assert_eq!(
            runs(&s),
            [(true, 1), (false, 1), (true, 2), (false, 5), (true, 1)]
        );
        assert_eq!(runs(&kept_rows(&[], 4).unwrap()), [(false, 4)]);
        let err = kept_rows(&[4], 4).unwrap_err();
        assert!(
            err.to_string()
                .contains("deletes row 4 of a file of 4 rows"),
            "{err}"
        );
    }
}
