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
//!   the row group's statistics are unknown.
//!
//! The answers the scan reads follow the same rules (`shredded_get.rs`), so a skipped row group
//! has no row the predicate would keep.
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use datafusion::arrow::compute::{cast, nullif};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column as LogicalColumn, Result, ScalarValue};
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal};
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
        // A predicate pruning cannot use is no error: nothing is pruned.
        let predicate = PruningPredicateBuilder::new()
            .with_file_schema(schema)
            .build(conjunction(kept));
        Ok(predicate.map(|predicate| Self { predicate, columns }))
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

/// The statistics of `path`'s typed leaf by row group, with the row groups where its residual
/// `value` holds something set to unknown; None when the file has no such leaf.
fn leaf_statistics(
    path: &PathColumn,
    metadata: &ParquetMetaData,
    file_schema: &Schema,
) -> Result<Option<(ArrayRef, ArrayRef, ArrayRef)>> {
    let Ok(field) = file_schema.field_with_name(&path.column) else {
        return Ok(None);
    };
    let mut group = field.data_type();
    let mut parts = vec![path.column.clone()];
    for segment in path.path.segments() {
        let PathSegment::Key(key) = segment else {
            return Ok(None);
        };
        let Some(typed) = struct_child(group, "typed_value") else {
            return Ok(None);
        };
        let Some(next) = struct_child(typed.data_type(), key) else {
            return Ok(None);
        };
        parts.extend(["typed_value".to_string(), key.clone()]);
        group = next.data_type();
    }
    if path.path.is_root() {
        return Ok(None);
    }
    let Some(leaf) = struct_child(group, "typed_value") else {
        return Ok(None);
    };
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
    if leaf.data_type().is_nested() || (leaf.data_type() != &path.data_type && !widening) {
        return Ok(None);
    }
    let descr = metadata.file_metadata().schema_descr();
    let find = |name: &str| {
        descr.columns().iter().position(|c| {
            let p = c.path().parts();
            p.len() == parts.len() + 1 && p[..parts.len()] == parts[..] && p[parts.len()] == name
        })
    };
    let Some(typed_index) = find("typed_value") else {
        return Ok(None);
    };
    let value_index = find("value");
    let row_groups = metadata.row_groups();
    // Row groups whose residual holds something: their statistics are unknown.
    let unknown: BooleanArray = row_groups
        .iter()
        .map(|rg| Some(value_index.is_some_and(|i| !holds_nothing(rg.column(i)))))
        .collect();
    let converter = StatisticsConverter::from_column_index(typed_index, leaf, descr)?
        .with_missing_null_counts_as_zero(false);
    // widened integers, string views: the type the predicate compares
    let widen = |a: ArrayRef| -> Result<ArrayRef> {
        Ok(if a.data_type() != &path.column_type {
            cast(&a, &path.column_type)?
        } else {
            a
        })
    };
    let min = nullif(
        &widen(converter.row_group_mins(row_groups.iter())?)?,
        &unknown,
    )?;
    let max = nullif(
        &widen(converter.row_group_maxes(row_groups.iter())?)?,
        &unknown,
    )?;
    let nulls: ArrayRef = Arc::new(converter.row_group_null_counts(row_groups.iter())?);
    let nulls = nullif(&nulls, &unknown)?;
    Ok(Some((min, max, nulls)))
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
