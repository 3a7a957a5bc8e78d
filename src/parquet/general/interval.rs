//! Parquet `INTERVAL` read exactly, as `Interval(MonthDayNano)`.
//!
//! `INTERVAL` is a `FIXED_LEN_BYTE_ARRAY(12)` of three little-endian unsigned 32-bit numbers:
//! months, days and milliseconds. The parquet crate's Arrow reader turns it into
//! `Interval(DayTime)` (months dropped) or `Interval(YearMonth)` (days and milliseconds dropped)
//! and cannot decode `Interval(MonthDayNano)`. So:
//!
//! - the table schema gives such a column `Interval(MonthDayNano)`, at any depth (see
//!   [`super::logical_types`]);
//! - the scan's files are opened through `IntervalReaderFactory`, whose readers hand the opener
//!   a footer in which those columns (or the `INTERVAL` leaves inside them) are plain 12-byte
//!   values, without statistics (the format defines no order on `INTERVAL`, so none may prune);
//!   (only for scans that use our expression adapter, and not for encrypted files, whose
//!   footers cannot be rebuilt without their decryptor: there the parquet crate's lossy reading
//!   is refused with an error);
//! - the per-file expression adapter reads each such column through `IntervalFromParquet`
//!   (nested ones through its walk of the column), which converts the bytes exactly
//!   (milliseconds to nanoseconds, `interval_from_bytes`). A month or day count past
//!   `i32::MAX` has no `Interval(MonthDayNano)` value and is an error, not a wrapped number.
//!
//! Writing (our Parquet sink) goes the other way: an `Interval(MonthDayNano)` column is written
//! as an `INTERVAL` column when every value fits (months, days and milliseconds non-negative,
//! whole milliseconds, milliseconds within `u32`), and the write fails with an error naming the
//! first value that does not (as DuckDB refuses negative intervals; it truncates sub-millisecond
//! parts, which would be a silent loss). The footer's Arrow schema gives the column as
//! `FixedSizeBinary(12)`, as other readers (pyarrow) read `INTERVAL`.
use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeBinaryArray, GenericListArray, IntervalMonthDayNanoArray,
    OffsetSizeTrait, RecordBatch, make_array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::IntervalMonthDayNanoType;
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, IntervalMonthDayNano, IntervalUnit, Schema,
};
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics, exec_err};
use datafusion::datasource::physical_plan::parquet::ParquetFileReaderFactory;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_datasource::PartitionedFile;

use crate::arrow_nested::{holds_type, with_children_converted, with_inner_fields_changed};
use crate::parquet::rebuilt_group;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::basic::{ConvertedType, Type as PhysicalType};
use parquet::file::metadata::{
    FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder, RowGroupMetaData,
};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

/// The Arrow type an `INTERVAL` column is read as.
pub const INTERVAL_TYPE: DataType = DataType::Interval(IntervalUnit::MonthDayNano);

/// The Arrow type of an `INTERVAL` column's bytes.
pub(crate) const INTERVAL_BYTES_TYPE: DataType = DataType::FixedSizeBinary(12);

/// The top-level columns of a table schema that are or hold (in structs, lists, maps)
/// `Interval(MonthDayNano)`: those read from `INTERVAL`.
pub(crate) fn interval_columns(schema: &Schema) -> Arc<[String]> {
    schema
        .fields()
        .iter()
        .filter(|f| holds_interval(f.data_type()))
        .map(|f| f.name().clone())
        .collect()
}

/// True when `data_type` is `Interval(MonthDayNano)` or holds one (in structs, lists, maps).
pub(crate) fn holds_interval(data_type: &DataType) -> bool {
    holds_type(data_type, &|t| t == &INTERVAL_TYPE)
}

/// `stats` without the minimum, maximum and sum of the `Interval(MonthDayNano)` columns of
/// `schema` (the parquet crate would give them as `Interval(DayTime)`, months dropped).
pub(crate) fn without_interval_ranges(mut stats: Statistics, schema: &Schema) -> Statistics {
    for (field, column) in schema.fields().iter().zip(&mut stats.column_statistics) {
        if field.data_type() == &INTERVAL_TYPE {
            column.min_value = Precision::Absent;
            column.max_value = Precision::Absent;
            column.sum_value = Precision::Absent;
        }
    }
    stats
}

/// Opens files through another factory, with readers whose footers show the `INTERVAL` leaves
/// of the top-level columns named in `columns` as plain `FIXED_LEN_BYTE_ARRAY(12)`.
#[derive(Debug)]
pub(crate) struct IntervalReaderFactory {
    inner: Arc<dyn ParquetFileReaderFactory>,
    columns: Arc<[String]>,
}

impl IntervalReaderFactory {
    /// Wraps `inner`, for the columns `columns`.
    pub(crate) fn new(inner: Arc<dyn ParquetFileReaderFactory>, columns: Arc<[String]>) -> Self {
        Self { inner, columns }
    }
}

impl ParquetFileReaderFactory for IntervalReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        Ok(Box::new(IntervalReader {
            inner: self.inner.create_reader(
                partition_index,
                partitioned_file,
                metadata_size_hint,
                metrics,
            )?,
            columns: Arc::clone(&self.columns),
        }))
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A reader whose footer shows its `INTERVAL` columns as plain 12-byte values.
struct IntervalReader {
    inner: Box<dyn AsyncFileReader + Send>,
    columns: Arc<[String]>,
}

impl AsyncFileReader for IntervalReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        Box::pin(async move {
            let metadata = self.inner.get_metadata(options).await?;
            without_interval_annotations(metadata, &self.columns)
        })
    }
}

/// `field` (a leaf) as a `FIXED_LEN_BYTE_ARRAY(12)` annotated `converted` (`INTERVAL`, or `NONE`
/// for plain bytes), with its repetition and id.
fn interval_leaf(field: &Type, converted: ConvertedType) -> parquet::errors::Result<Type> {
    let info = field.get_basic_info();
    let mut leaf = Type::primitive_type_builder(field.name(), PhysicalType::FIXED_LEN_BYTE_ARRAY)
        .with_repetition(info.repetition())
        .with_length(12)
        .with_converted_type(converted);
    if info.has_id() {
        leaf = leaf.with_id(Some(info.id()));
    }
    leaf.build()
}

/// The key of the key-value entry by which a footer [`IntervalReader`] rewrote marks column
/// `name` as `INTERVAL` bytes, or as holding them (it reaches the Arrow schema's metadata): the
/// adapter converts only marked columns, not a plain 12-byte column of a file under a table that
/// declares `INTERVAL`.
fn interval_bytes_mark(name: &str) -> String {
    format!("datafusion_parquet_variant.interval_bytes:{name}")
}

/// True when the Arrow schema of a file's footer marks column `name` as `INTERVAL` bytes.
pub(crate) fn is_marked_interval(file_schema: &Schema, name: &str) -> bool {
    file_schema
        .metadata()
        .contains_key(&interval_bytes_mark(name))
}

/// True for a top-level column named in `columns` that is or holds a primitive `INTERVAL`.
fn is_interval_column(field: &Type, columns: &[String]) -> bool {
    columns.iter().any(|c| c == field.name()) && holds_interval_leaf(field)
}

#[recursive::recursive]
fn holds_interval_leaf(field: &Type) -> bool {
    match field.is_primitive() {
        true => field.get_basic_info().converted_type() == ConvertedType::INTERVAL,
        false => field.get_fields().iter().any(|f| holds_interval_leaf(f)),
    }
}

/// `field` with its `INTERVAL` leaves, at any depth, as plain `FIXED_LEN_BYTE_ARRAY(12)`.
#[recursive::recursive]
fn with_plain_intervals(field: &TypePtr) -> parquet::errors::Result<TypePtr> {
    if field.is_primitive() {
        return Ok(match field.get_basic_info().converted_type() {
            ConvertedType::INTERVAL => Arc::new(interval_leaf(field, ConvertedType::NONE)?),
            _ => Arc::clone(field),
        });
    }
    let fields = (field.get_fields().iter())
        .map(with_plain_intervals)
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    let logical_type = field.get_basic_info().logical_type_ref().cloned();
    Ok(Arc::new(rebuilt_group(field, fields, logical_type)?))
}

/// `metadata` with the `INTERVAL` leaves of the top-level columns named in `columns` as plain
/// `FIXED_LEN_BYTE_ARRAY(12)` columns without statistics (as it is when it has none).
fn without_interval_annotations(
    metadata: Arc<ParquetMetaData>,
    columns: &[String],
) -> parquet::errors::Result<Arc<ParquetMetaData>> {
    let file = metadata.file_metadata();
    let root = file.schema_descr().root_schema();
    if !root
        .get_fields()
        .iter()
        .any(|f| is_interval_column(f, columns))
    {
        return Ok(metadata);
    }
    let mut fields: Vec<TypePtr> = Vec::with_capacity(root.get_fields().len());
    let mut marks = file.key_value_metadata().cloned().unwrap_or_default();
    for field in root.get_fields() {
        if !is_interval_column(field, columns) {
            fields.push(Arc::clone(field));
            continue;
        }
        fields.push(with_plain_intervals(field)?);
        marks.push(KeyValue::new(
            interval_bytes_mark(field.name()),
            "INTERVAL".to_string(),
        ));
    }
    let schema = Arc::new(SchemaDescriptor::new(Arc::new(
        Type::group_type_builder(root.name())
            .with_fields(fields)
            .build()?,
    )));
    // the leaves that lose their statistics
    let plain: Vec<bool> = (0..schema.num_columns())
        .map(|i| {
            let old = file.schema_descr().column(i);
            old.converted_type() == ConvertedType::INTERVAL
                && schema.column(i).converted_type() == ConvertedType::NONE
        })
        .collect();
    let mut row_groups = Vec::with_capacity(metadata.num_row_groups());
    for row_group in metadata.row_groups() {
        let mut columns = Vec::with_capacity(row_group.num_columns());
        for (column, plain) in row_group.columns().iter().zip(&plain) {
            columns.push(if *plain {
                column.clone().into_builder().clear_statistics().build()?
            } else {
                column.clone()
            });
        }
        let mut builder = RowGroupMetaData::builder(Arc::clone(&schema))
            .set_num_rows(row_group.num_rows())
            .set_total_byte_size(row_group.total_byte_size())
            .set_sorting_columns(row_group.sorting_columns().cloned())
            .set_column_metadata(columns);
        if let Some(ordinal) = row_group.ordinal() {
            builder = builder.set_ordinal(ordinal);
        }
        if let Some(offset) = row_group.file_offset() {
            builder = builder.set_file_offset(offset);
        }
        row_groups.push(builder.build()?);
    }
    let file = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        Some(marks),
        schema,
        file.column_orders().cloned(),
    );
    let column_index = metadata.column_index().map(|groups| {
        groups
            .iter()
            .map(|columns| {
                columns
                    .iter()
                    .zip(&plain)
                    .map(|(index, plain)| {
                        if *plain {
                            ColumnIndexMetaData::NONE
                        } else {
                            index.clone()
                        }
                    })
                    .collect()
            })
            .collect()
    });
    Ok(Arc::new(
        ParquetMetaDataBuilder::new(file)
            .set_row_groups(row_groups)
            .set_column_index(column_index)
            .set_offset_index(metadata.offset_index().cloned())
            .build(),
    ))
}

/// An `INTERVAL` column read as its 12 bytes, converted to `Interval(MonthDayNano)`.
#[derive(Debug, Eq)]
pub(crate) struct IntervalFromParquet {
    child: Arc<dyn PhysicalExpr>,
    name: String,
}

impl PartialEq for IntervalFromParquet {
    fn eq(&self, other: &Self) -> bool {
        self.child.eq(&other.child) && self.name == other.name
    }
}

impl Hash for IntervalFromParquet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.child.hash(state);
        self.name.hash(state);
    }
}

impl IntervalFromParquet {
    /// Converts the 12-byte values `child` gives, of the column `name`.
    pub(crate) fn new(child: Arc<dyn PhysicalExpr>, name: &str) -> Self {
        Self {
            child,
            name: name.to_string(),
        }
    }
}

impl fmt::Display for IntervalFromParquet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parquet_interval({})", self.child)
    }
}

impl PhysicalExpr for IntervalFromParquet {
    fn return_field(&self, input_schema: &Schema) -> Result<FieldRef> {
        let child = self.child.return_field(input_schema)?;
        Ok(Arc::new(Field::new(
            child.name(),
            INTERVAL_TYPE,
            child.is_nullable(),
        )))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let input = self.child.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(interval_from_bytes(
            &input, &self.name,
        )?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.child]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(Self {
            child: Arc::clone(&children[0]),
            name: self.name.clone(),
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The `Interval(MonthDayNano)` values of `INTERVAL` bytes (`input`, of the column or field
/// `name`), exact; an error for a month or day count past `i32::MAX`.
pub(crate) fn interval_from_bytes(input: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let Some(bytes) = input
        .as_fixed_size_binary_opt()
        .filter(|b| b.value_length() == 12)
    else {
        return exec_err!(
            "INTERVAL column {name} is {} in this file, not 12-byte values",
            input.data_type()
        );
    };
    let mut values = Vec::with_capacity(bytes.len());
    let data = &bytes.value_data()[..bytes.len() * 12];
    for (i, value) in data.chunks_exact(12).enumerate() {
        let part = |n: usize| u32::from_le_bytes(value[4 * n..4 * n + 4].try_into().unwrap());
        let (months, days, millis) = (part(0), part(1), part(2));
        let (Ok(months), Ok(days)) = (i32::try_from(months), i32::try_from(days)) else {
            if bytes.is_null(i) {
                values.push(IntervalMonthDayNano::ZERO);
                continue;
            }
            return exec_err!(
                "INTERVAL column {name}: {months} months and {days} days do not fit an interval \
                 (at most {} each)",
                i32::MAX
            );
        };
        values.push(IntervalMonthDayNano::new(
            months,
            days,
            millis as i64 * 1_000_000,
        ));
    }
    Ok(Arc::new(IntervalMonthDayNanoArray::new(
        values.into(),
        bytes.nulls().cloned(),
    )))
}

/// The `INTERVAL` bytes of the `Interval(MonthDayNano)` column `name` (`column`); an error for
/// the first value `INTERVAL` cannot hold.
pub(crate) fn interval_bytes(column: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let Some(intervals) = column.as_primitive_opt::<IntervalMonthDayNanoType>() else {
        return exec_err!("INTERVAL column {name} is {}", column.data_type());
    };
    let mut bytes = Vec::with_capacity(intervals.len() * 12);
    for (i, v) in intervals.values().iter().enumerate() {
        let millis = v.nanoseconds / 1_000_000;
        let parts = (
            u32::try_from(v.months),
            u32::try_from(v.days),
            u32::try_from(millis),
        );
        match parts {
            (Ok(months), Ok(days), Ok(millis)) if v.nanoseconds % 1_000_000 == 0 => {
                bytes.extend_from_slice(&months.to_le_bytes());
                bytes.extend_from_slice(&days.to_le_bytes());
                bytes.extend_from_slice(&millis.to_le_bytes());
            }
            _ if intervals.is_null(i) => bytes.extend_from_slice(&[0; 12]),
            _ => {
                return exec_err!(
                    "cannot write {} months {} days {} nanoseconds to the Parquet INTERVAL \
                     column {name}: INTERVAL holds non-negative months, days and whole \
                     milliseconds (at most {} of each)",
                    v.months,
                    v.days,
                    v.nanoseconds,
                    u32::MAX
                );
            }
        }
    }
    Ok(Arc::new(FixedSizeBinaryArray::try_new(
        12,
        bytes.into(),
        intervals.nulls().cloned(),
    )?))
}

/// `data_type` with every `Interval(MonthDayNano)` in it (itself, or in structs, lists and maps)
/// as the `INTERVAL` bytes' type, `FixedSizeBinary(12)`.
#[recursive::recursive]
pub(crate) fn interval_bytes_type(data_type: &DataType) -> DataType {
    if data_type == &INTERVAL_TYPE {
        return INTERVAL_BYTES_TYPE;
    }
    let retyped = |f: &FieldRef| {
        let bytes = interval_bytes_type(f.data_type());
        (&bytes != f.data_type()).then(|| Arc::new(f.as_ref().clone().with_data_type(bytes)))
    };
    with_inner_fields_changed(data_type, retyped).unwrap_or_else(|| data_type.clone())
}

/// `column` (of the column `name`) with the `Interval(MonthDayNano)` values in it (itself, or in
/// structs, lists and maps) as their `INTERVAL` bytes ([`interval_bytes`]), of the type
/// [`interval_bytes_type`] gives. Only values the column shows are checked: a struct's nulls hide
/// its fields' values, and a list's values outside its rows' ranges are dropped.
#[recursive::recursive]
pub(crate) fn intervals_as_bytes(column: &ArrayRef, name: &str) -> Result<ArrayRef> {
    if column.data_type() == &INTERVAL_TYPE {
        return interval_bytes(column, name);
    }
    if !holds_interval(column.data_type()) {
        return Ok(Arc::clone(column));
    }
    let out = interval_bytes_type(column.data_type());
    let nulls = column.nulls();
    let column: ArrayRef = match column.data_type() {
        DataType::List(_) => Arc::new(trimmed_list(column.as_list::<i32>())),
        DataType::LargeList(_) => Arc::new(trimmed_list(column.as_list::<i64>())),
        _ => Arc::clone(column),
    };
    with_children_converted(&column, &out, |f, c, _| match f.data_type() {
        // (the fields of a struct under its nulls; no other column's bytes are touched)
        t if !holds_interval(t) => Ok(Arc::clone(c)),
        _ if matches!(column.data_type(), DataType::Struct(_)) => {
            intervals_as_bytes(&with_ancestor_nulls(c, nulls)?, name)
        }
        _ => intervals_as_bytes(c, name),
    })
}

/// `child` with the nulls of its parent struct (`nulls`) added to its own.
fn with_ancestor_nulls(child: &ArrayRef, nulls: Option<&NullBuffer>) -> Result<ArrayRef> {
    if nulls.is_none() {
        return Ok(Arc::clone(child));
    }
    let nulls = NullBuffer::union(nulls, child.nulls());
    Ok(make_array(
        child.to_data().into_builder().nulls(nulls).build()?,
    ))
}

/// `list` with only the values its rows use (a slice of a list keeps all of them).
fn trimmed_list<O: OffsetSizeTrait>(list: &GenericListArray<O>) -> GenericListArray<O> {
    let offsets = list.offsets();
    let (start, end) = (offsets[0].as_usize(), offsets[list.len()].as_usize());
    if start == 0 && end == list.values().len() {
        return list.clone();
    }
    let (DataType::List(field) | DataType::LargeList(field)) = list.data_type() else {
        unreachable!("a list array has a list type")
    };
    let rebased = OffsetBuffer::new(offsets.iter().map(|&o| o - offsets[0]).collect());
    GenericListArray::new(
        Arc::clone(field),
        rebased,
        list.values().slice(start, end - start),
        list.nulls().cloned(),
    )
}

/// `root` (a file's Parquet schema, converted from an Arrow schema) with the leaves of its
/// top-level columns that `columns` gives as `Interval(MonthDayNano)` (`(name, the column's Arrow
/// type before its intervals became bytes)`) annotated `INTERVAL`, at any depth.
pub(crate) fn with_interval_annotations(
    root: TypePtr,
    columns: &[(&str, &DataType)],
) -> Result<TypePtr> {
    if columns.is_empty() {
        return Ok(root);
    }
    let fields = root
        .get_fields()
        .iter()
        .map(
            |f| match columns.iter().find(|(name, _)| *name == f.name()) {
                Some((_, data_type)) => annotated(f, data_type),
                None => Ok(Arc::clone(f)),
            },
        )
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(
        Type::group_type_builder(root.name())
            .with_fields(fields)
            .build()?,
    ))
}

/// `parquet` (as the parquet crate converts `data_type`: a struct's fields in order, a list as
/// `LIST { repeated list { element } }`, a map as `MAP { repeated key_value { key, value } }`)
/// with the leaves `data_type` gives as `Interval(MonthDayNano)` annotated `INTERVAL`.
#[recursive::recursive]
fn annotated(parquet: &TypePtr, data_type: &DataType) -> Result<TypePtr> {
    if parquet.is_primitive() {
        return Ok(match data_type {
            &INTERVAL_TYPE => Arc::new(interval_leaf(parquet, ConvertedType::INTERVAL)?),
            _ => Arc::clone(parquet),
        });
    }
    let children = parquet.get_fields();
    let fields = match data_type {
        DataType::Struct(fields) if fields.len() == children.len() => (children.iter())
            .zip(fields.iter())
            .map(|(p, f)| annotated(p, f.data_type()))
            .collect::<Result<Vec<_>>>()?,
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _)
            if children.len() == 1 && !children[0].is_primitive() =>
        {
            let repeated = &children[0];
            let elements = (repeated.get_fields().iter())
                .map(|e| annotated(e, item.data_type()))
                .collect::<Result<Vec<_>>>()?;
            let logical_type = repeated.get_basic_info().logical_type_ref().cloned();
            vec![Arc::new(rebuilt_group(repeated, elements, logical_type)?)]
        }
        DataType::Map(entries, _) if children.len() == 1 => {
            vec![annotated(&children[0], entries.data_type())?]
        }
        _ => return Ok(Arc::clone(parquet)),
    };
    let logical_type = parquet.get_basic_info().logical_type_ref().cloned();
    Ok(Arc::new(rebuilt_group(parquet, fields, logical_type)?))
}
