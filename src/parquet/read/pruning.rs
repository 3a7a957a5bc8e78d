//! Skipping row groups with the statistics of shredded leaves.
//!
//! DataFusion's pruning maps a predicate's columns to the statistics of top-level Parquet
//! columns only, so a filter on `variant_get(v, '$.kind', 'string')` prunes nothing. Here each
//! such call (with a literal path and type) stands for a column of its own in a
//! [`PruningPredicate`], and its statistics in a row group are those of the path's shredded
//! `typed_value` leaf, where that is sound:
//! - the path is a chain of shredded object fields ending at a leaf shredded as the requested
//!   type (or a narrower integer): by the spec, a shredded field is never in its parent's
//!   residual object and an object is never in `value`, so the only other place the answer can
//!   be is the leaf's own `value`;
//! - that `value` holds nothing in the row group (its null count is the row count). Otherwise
//!   some rows' answers (a number written as text, say) are not in the leaf's statistics, and
//!   the row group's statistics are unknown;
//! - the leaf is not a float: Parquet's statistics leave NaN out of a float's range.
//!
//! The answers the scan reads follow the same rules (`shredded_get.rs`), so a skipped row group
//! has no row the predicate would keep.
//!
//! Within the row groups kept, the page index does the same per page, for conjuncts that read
//! one path: the rows kept are those of the leaf's pages the predicate does not rule out, plus
//! every row of the residual `value`'s pages that are not all null (pages of the two leaves do
//! not line up, so the residual's pages add their rows instead of making a page unknown).
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use datafusion::arrow::compute::{cast, nullif};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column as LogicalColumn, Result, ScalarValue};
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use datafusion::parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::parquet::file::page_index::column_index::ColumnIndexMetaData;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr, conjunction, split_conjunction};
use datafusion::physical_optimizer::pruning::{PruningPredicate, PruningPredicateBuilder};

use super::expr_adapter::variant_column_names;
use super::facts::holds_nothing;
use crate::codec::{PathSegment, VariantPath};
use crate::functions::try_variant_get::TryVariantGet;
use crate::functions::variant_get::VariantGet;
use crate::functions::variant_get_checked::VariantGetChecked;

/// A `variant_get`/`try_variant_get` call with a literal (planned) path and literal arguments
/// on a column: `(column, path)`.
pub(crate) fn variant_path_call(expr: &Arc<dyn PhysicalExpr>) -> Option<(&Column, &VariantPath)> {
    let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    let inner = call.fun().inner();
    let path = match inner.downcast_ref::<VariantGet>() {
        Some(get) => get.path(),
        None => inner.downcast_ref::<TryVariantGet>()?.path(),
    }?;
    let (column, rest) = call.args().split_first()?;
    if !rest.iter().all(|a| a.downcast_ref::<Literal>().is_some()) {
        return None;
    }
    Some((column.downcast_ref::<Column>()?, path))
}

/// The value of a variant path in a predicate: a `variant_get`/`try_variant_get` call with
/// literal arguments on a column (not deferred), or the checked value of a deferred one:
/// `(column, path)`.
fn path_value(expr: &Arc<dyn PhysicalExpr>) -> Option<(&Column, &VariantPath)> {
    let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    if call.fun().inner().is::<VariantGetChecked>() {
        return variant_path_call(call.args().first()?);
    }
    if call
        .fun()
        .inner()
        .downcast_ref::<VariantGet>()
        .is_some_and(VariantGet::is_deferred)
    {
        return None;
    }
    variant_path_call(expr)
}

/// True when `filter` reads the table only through variant paths (`variant_get` calls with
/// literal arguments on variant columns of `table_schema`), at least one, and has nothing
/// volatile: such a filter can be evaluated on shredded leaves alone.
pub(crate) fn reads_variant_paths_only(
    filter: &Arc<dyn PhysicalExpr>,
    table_schema: &Schema,
) -> bool {
    let variants = variant_column_names(table_schema);
    let mut calls = 0;
    let mut other = false;
    let _ = filter.apply(|e| {
        if let Some((column, _)) = variant_path_call(e)
            && variants.iter().any(|v| v == column.name())
        {
            calls += 1;
            return Ok(TreeNodeRecursion::Jump);
        }
        if e.downcast_ref::<Column>().is_some() || e.is_volatile_node() {
            other = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    calls > 0 && !other
}

/// One variant path of the predicate, a column of the pruning schema.
#[derive(Debug, PartialEq)]
struct PathColumn {
    column: String,
    path: VariantPath,
    /// The type extracted.
    data_type: DataType,
    /// The type in the predicate: the extracted one, or a view of it (a `string` is extracted
    /// as Utf8 and cast to Utf8View).
    column_type: DataType,
}

/// A path value under a cast that only changes its string or binary layout: `(column, path,
/// the cast's type)`.
fn relaid_path_value(expr: &Arc<dyn PhysicalExpr>) -> Option<(&Column, &VariantPath, &DataType)> {
    let cast = expr.downcast_ref::<CastExpr>()?;
    let layout_only = matches!(
        cast.cast_type(),
        DataType::Utf8View | DataType::LargeUtf8 | DataType::BinaryView | DataType::LargeBinary
    );
    let (column, path) = path_value(cast.expr()).filter(|_| layout_only)?;
    Some((column, path, cast.cast_type()))
}

/// The conjuncts of a scan's predicate that read variant paths only, as a [`PruningPredicate`]
/// over one column per path.
#[derive(Debug)]
pub(crate) struct VariantPruning {
    predicate: Arc<PruningPredicate>,
    columns: Vec<PathColumn>,
    /// The conjuncts that read one path each, with that path's index in `columns`: pages are
    /// pruned by these one at a time (pages of different leaves do not line up).
    single_path: Vec<(usize, Arc<PruningPredicate>)>,
}

impl VariantPruning {
    /// The pruning of `predicate` (over `table_schema`); None when no conjunct reads variant
    /// paths only, or none of them can prune.
    pub(crate) fn try_new(
        predicate: Option<&Arc<dyn PhysicalExpr>>,
        table_schema: &SchemaRef,
    ) -> Result<Option<Self>> {
        let Some(predicate) = predicate else {
            return Ok(None);
        };
        let mut columns: Vec<PathColumn> = vec![];
        let mut kept = vec![];
        for conjunct in split_conjunction(predicate) {
            if !reads_variant_paths_only(conjunct, table_schema) {
                continue;
            }
            let rewritten = Arc::clone(conjunct)
                .transform_down(|e| {
                    let (column, path, column_type) = match relaid_path_value(&e) {
                        Some((column, path, t)) => (column, path, t.clone()),
                        None => match path_value(&e) {
                            Some((column, path)) => (column, path, e.data_type(table_schema)?),
                            None => return Ok(Transformed::no(e)),
                        },
                    };
                    let data_type = match e.downcast_ref::<CastExpr>() {
                        Some(cast) => cast.expr().data_type(table_schema)?,
                        None => column_type.clone(),
                    };
                    let path_column = PathColumn {
                        column: column.name().to_string(),
                        path: path.clone(),
                        data_type,
                        column_type,
                    };
                    let index = match columns.iter().position(|c| *c == path_column) {
                        Some(i) => i,
                        None => {
                            columns.push(path_column);
                            columns.len() - 1
                        }
                    };
                    let column: Arc<dyn PhysicalExpr> =
                        Arc::new(Column::new(&column_name(index), index));
                    Ok(Transformed::new(column, true, TreeNodeRecursion::Jump))
                })
                .data()?;
            kept.push(rewritten);
        }
        if kept.is_empty() {
            return Ok(None);
        }
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .enumerate()
                .map(|(i, c)| Field::new(column_name(i), c.column_type.clone(), true))
                .collect::<Vec<_>>(),
        ));
        let mut single_path = vec![];
        for conjunct in &kept {
            let mut paths = collect_columns(conjunct).into_iter().map(|c| c.index());
            if let (Some(index), None) = (paths.next(), paths.next())
                && let Some(predicate) = PruningPredicateBuilder::new()
                    .with_file_schema(Arc::clone(&schema))
                    .build(Arc::clone(conjunct))
            {
                single_path.push((index, predicate));
            }
        }
        // A predicate pruning cannot use is no error: nothing is pruned.
        let predicate = PruningPredicateBuilder::new()
            .with_file_schema(schema)
            .build(conjunction(kept));
        Ok(predicate.map(|predicate| Self {
            predicate,
            columns,
            single_path,
        }))
    }

    /// The rows of row group `row_group` whose pages may hold rows the predicate keeps, by the
    /// page index of the paths' leaves (conjuncts on one path each); None when the pages rule
    /// out nothing, or the file has no page index.
    pub(crate) fn page_selection(
        &self,
        metadata: &ParquetMetaData,
        file_schema: &Schema,
        row_group: usize,
    ) -> Option<RowSelection> {
        let rows = metadata.row_group(row_group).num_rows() as usize;
        let mut selection: Option<RowSelection> = None;
        for (index, predicate) in &self.single_path {
            let path = (*index, &self.columns[*index]);
            // (statistics pruning cannot use are no error: they rule out nothing)
            let Ok(Some(pages)) = page_selection(path, predicate, metadata, file_schema, row_group)
            else {
                continue;
            };
            if pages.row_count() + pages.skipped_row_count() != rows {
                continue;
            }
            selection = Some(match selection {
                Some(s) => s.intersection(&pages),
                None => pages,
            });
        }
        selection.filter(|s| s.row_count() < rows)
    }

    /// For each row group of the file: false when the predicate is false for every row.
    pub(crate) fn row_groups_to_read(
        &self,
        metadata: &ParquetMetaData,
        file_schema: &Schema,
    ) -> Result<Vec<bool>> {
        let stats = RowGroupStatistics::new(self, metadata, file_schema)?;
        self.predicate.prune(&stats)
    }
}

fn column_name(index: usize) -> String {
    format!("variant_path_{index}")
}

/// The statistics of each path's leaf, per row group of one file.
struct RowGroupStatistics {
    row_counts: UInt64Array,
    /// Per path column: `(min, max, null count)` by row group (null where unknown), or None
    /// when the file does not shred the path as a leaf of the requested type.
    columns: Vec<Option<(ArrayRef, ArrayRef, ArrayRef)>>,
}

impl RowGroupStatistics {
    fn new(
        pruning: &VariantPruning,
        metadata: &ParquetMetaData,
        file_schema: &Schema,
    ) -> Result<Self> {
        let row_groups = metadata.row_groups();
        let row_counts: UInt64Array = row_groups
            .iter()
            .map(|rg| Some(rg.num_rows() as u64))
            .collect();
        let columns = pruning
            .columns
            .iter()
            .map(|c| leaf_statistics(c, metadata, file_schema))
            .collect::<Result<_>>()?;
        Ok(Self {
            row_counts,
            columns,
        })
    }

    fn column(&self, column: &LogicalColumn) -> Option<&(ArrayRef, ArrayRef, ArrayRef)> {
        let index: usize = column.name().strip_prefix("variant_path_")?.parse().ok()?;
        self.columns.get(index)?.as_ref()
    }
}

/// Where a path's answers are in one file: its typed leaf (of the requested type or a narrower
/// integer) and the leaf's residual `value`, as Parquet leaf indexes.
struct PathLeaf<'a> {
    /// The typed leaf's Arrow field.
    field: &'a Field,
    typed_index: usize,
    value_index: Option<usize>,
}

/// The leaves of `path` in a file whose Arrow schema is `file_schema`; None when the file has
/// no typed leaf for it (see the module documentation).
fn path_leaf<'a>(
    path: &PathColumn,
    metadata: &ParquetMetaData,
    file_schema: &'a Schema,
) -> Option<PathLeaf<'a>> {
    let field = file_schema.field_with_name(&path.column).ok()?;
    let mut group = field.data_type();
    let mut parts = vec![path.column.clone()];
    for segment in path.path.segments() {
        let PathSegment::Key(key) = segment else {
            return None;
        };
        let typed = struct_child(group, "typed_value")?;
        let next = struct_child(typed.data_type(), key)?;
        parts.extend(["typed_value".to_string(), key.clone()]);
        group = next.data_type();
    }
    if path.path.is_root() {
        return None;
    }
    let leaf = struct_child(group, "typed_value")?;
    let widening = matches!(
        (leaf.data_type(), &path.data_type),
        (
            DataType::Int8,
            DataType::Int16 | DataType::Int32 | DataType::Int64
        ) | (DataType::Int16, DataType::Int32 | DataType::Int64)
            | (DataType::Int32, DataType::Int64)
            | (DataType::Utf8, DataType::Utf8View)
            | (DataType::Utf8View, DataType::Utf8)
    );
    // a float leaf's statistics leave NaN out (the Parquet spec's rule for writers), so its
    // range does not bound a row group's answers: `v:x::double > 1.0` keeps a NaN
    if leaf.data_type().is_nested()
        || leaf.data_type().is_floating()
        || (leaf.data_type() != &path.data_type && !widening)
    {
        return None;
    }
    let descr = metadata.file_metadata().schema_descr();
    let find = |name: &str| {
        descr.columns().iter().position(|c| {
            let p = c.path().parts();
            p.len() == parts.len() + 1 && p[..parts.len()] == parts[..] && p[parts.len()] == name
        })
    };
    Some(PathLeaf {
        field: leaf,
        typed_index: find("typed_value")?,
        value_index: find("value"),
    })
}

/// `(min, max, null count)` of `path`'s leaf (found by `converter`) by container, brought to
/// the type the predicate compares (widened integers, string views), with the containers that
/// `unknown` marks set to null (unknown).
fn known_statistics(
    path: &PathColumn,
    min: ArrayRef,
    max: ArrayRef,
    nulls: UInt64Array,
    unknown: &BooleanArray,
) -> Result<(ArrayRef, ArrayRef, ArrayRef)> {
    let widen = |a: ArrayRef| -> Result<ArrayRef> {
        Ok(if a.data_type() != &path.column_type {
            cast(&a, &path.column_type)?
        } else {
            a
        })
    };
    let min = nullif(&widen(min)?, unknown)?;
    let max = nullif(&widen(max)?, unknown)?;
    let nulls: ArrayRef = Arc::new(nulls);
    let nulls = nullif(&nulls, unknown)?;
    Ok((min, max, nulls))
}

/// The statistics of `path`'s typed leaf by row group, with the row groups where its residual
/// `value` holds something set to unknown; None when the file has no such leaf.
fn leaf_statistics(
    path: &PathColumn,
    metadata: &ParquetMetaData,
    file_schema: &Schema,
) -> Result<Option<(ArrayRef, ArrayRef, ArrayRef)>> {
    let Some(leaf) = path_leaf(path, metadata, file_schema) else {
        return Ok(None);
    };
    let descr = metadata.file_metadata().schema_descr();
    let row_groups = metadata.row_groups();
    // Row groups whose residual holds something: their statistics are unknown.
    let unknown: BooleanArray = row_groups
        .iter()
        .map(|rg| {
            Some(
                leaf.value_index
                    .is_some_and(|i| !holds_nothing(rg.column(i))),
            )
        })
        .collect();
    let converter = StatisticsConverter::from_column_index(leaf.typed_index, leaf.field, descr)?
        .with_missing_null_counts_as_zero(false);
    known_statistics(
        path,
        converter.row_group_mins(row_groups.iter())?,
        converter.row_group_maxes(row_groups.iter())?,
        converter.row_group_null_counts(row_groups.iter())?,
        &unknown,
    )
    .map(Some)
}

/// The rows of row group `row_group` that a predicate on `path` alone may keep, by the page
/// index: the rows of the leaf's pages `predicate` does not rule out, and every row of the
/// residual `value`'s pages that are not all null (rows whose answer is not in the leaf's
/// statistics). None when the file has no such leaf or no page index.
fn page_selection(
    path: (usize, &PathColumn),
    predicate: &PruningPredicate,
    metadata: &ParquetMetaData,
    file_schema: &Schema,
    row_group: usize,
) -> Result<Option<RowSelection>> {
    let (index, path) = path;
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Ok(None);
    };
    let Some(leaf) = path_leaf(path, metadata, file_schema) else {
        return Ok(None);
    };
    let descr = metadata.file_metadata().schema_descr();
    let row_groups = metadata.row_groups();
    let converter = StatisticsConverter::from_column_index(leaf.typed_index, leaf.field, descr)?
        .with_missing_null_counts_as_zero(false);
    let groups = [row_group];
    let Some(page_rows) = converter.data_page_row_counts(offset_index, row_groups, &groups)? else {
        return Ok(None);
    };
    let pages = page_rows.len();
    let stats = known_statistics(
        path,
        converter.data_page_mins(column_index, offset_index, &groups)?,
        converter.data_page_maxes(column_index, offset_index, &groups)?,
        converter.data_page_null_counts(column_index, offset_index, &groups)?,
        &BooleanArray::from(vec![false; pages]),
    )?;
    let mut columns = vec![None; index + 1];
    columns[index] = Some(stats);
    let statistics = RowGroupStatistics {
        row_counts: page_rows.clone(),
        columns,
    };
    let keep = predicate.prune(&statistics)?;
    let mut selection = selection_of_pages(page_rows.values().iter().map(|&n| n as usize), &keep);
    if let Some(value_index) = leaf.value_index {
        let total = row_groups[row_group].num_rows() as usize;
        let locations = offset_index
            .get(row_group)
            .and_then(|columns| columns.get(value_index))
            .map(|o| o.page_locations());
        let value_pages = column_index
            .get(row_group)
            .and_then(|columns| columns.get(value_index));
        let (Some(locations), Some(value_pages)) = (locations, value_pages) else {
            return Ok(None);
        };
        let rows = locations.iter().enumerate().map(|(i, page)| {
            let end = locations
                .get(i + 1)
                .map_or(total, |next| next.first_row_index as usize);
            end.saturating_sub(page.first_row_index as usize)
        });
        // a residual without a page index (or with one that does not match its pages, in a
        // corrupt file) may hold values anywhere
        if matches!(value_pages, ColumnIndexMetaData::NONE)
            || value_pages.num_pages() != locations.len() as u64
        {
            return Ok(None);
        }
        let holds: Vec<bool> = (0..locations.len())
            .map(|i| !value_pages.is_null_page(i))
            .collect();
        selection = selection.union(&selection_of_pages(rows, &holds));
    }
    Ok(Some(selection))
}

/// The rows of pages of `rows` rows each, selected where `keep` is true.
fn selection_of_pages(rows: impl Iterator<Item = usize>, keep: &[bool]) -> RowSelection {
    let selectors: Vec<RowSelector> = rows
        .zip(keep)
        .map(|(n, &keep)| {
            if keep {
                RowSelector::select(n)
            } else {
                RowSelector::skip(n)
            }
        })
        .collect();
    RowSelection::from(selectors)
}

fn struct_child<'a>(data_type: &'a DataType, name: &str) -> Option<&'a Field> {
    match data_type {
        DataType::Struct(fields) => fields.find(name).map(|(_, f)| f.as_ref()),
        _ => None,
    }
}

impl PruningStatistics for RowGroupStatistics {
    fn min_values(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.column(column).map(|(min, _, _)| Arc::clone(min))
    }

    fn max_values(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.column(column).map(|(_, max, _)| Arc::clone(max))
    }

    fn num_containers(&self) -> usize {
        self.row_counts.len()
    }

    fn null_counts(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.column(column).map(|(_, _, nulls)| Arc::clone(nulls))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::new(self.row_counts.clone()))
    }

    fn contained(
        &self,
        _column: &LogicalColumn,
        _values: &std::collections::HashSet<ScalarValue>,
    ) -> Option<BooleanArray> {
        None
    }
}
