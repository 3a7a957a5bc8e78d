//! Reading a file whose variant column has another layout than the table's: a shredded file
//! under a table declared `v VARIANT`, or files shredded differently. DataFusion's default
//! adapter would cast the struct, dropping `typed_value` (or failing on nullability); this one
//! reassembles such columns into the table's layout instead. It also reads `INTERVAL` columns
//! exactly (see [`crate::parquet::general::interval`]).
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, RecordBatch, StructArray, new_null_array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef, IntervalUnit, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};

use super::facts::FileFacts;
use super::shredded_get::ShreddedGetExpr;
use crate::arrow_nested::{holds_type, with_children_converted};
use crate::functions::reads_shredded_input;
use crate::functions::try_variant_get::TryVariantGet;
use crate::functions::variant_get::{GetMode, VariantGet};
use crate::parquet::general::interval::{
    INTERVAL_BYTES_TYPE, INTERVAL_TYPE, IntervalFromParquet, holds_interval, interval_from_bytes,
    is_marked_interval,
};
use crate::variant_array::{has_variant_shape, is_variant_field};

/// Wraps another [`PhysicalExprAdapterFactory`] (DataFusion's default unless given): variant
/// columns whose file layout differs from the table's are read through a reassembly into the
/// table's layout; everything else is left to the wrapped adapter.
#[derive(Debug, Clone)]
pub struct VariantExprAdapterFactory {
    inner: Arc<dyn PhysicalExprAdapterFactory>,
    /// Whether `inner` is DataFusion's default (see [`Self::over_default`]).
    default_inner: bool,
    /// The facts of the one file this factory adapts expressions for, when known.
    facts: Option<Arc<FileFacts>>,
    /// Where the reads of shredded leaves are counted, when the scan has metrics.
    metrics: Option<ShreddedReadMetrics>,
    /// The variant columns of the file read through a cast to a clipped type, with that type
    /// (see [`clipped_type`](super::shredded_get::clipped_type)), and the scan's predicate,
    /// whose reads name their leaves with `get_field` (a Parquet row filter takes those only).
    clips: Arc<HashMap<String, DataType>>,
    predicate: Option<Arc<dyn PhysicalExpr>>,
}

/// The scan metrics of reads from shredded leaves (`EXPLAIN ANALYZE` shows them).
#[derive(Debug, Clone)]
pub(crate) struct ShreddedReadMetrics {
    /// Variant paths read from shredded leaves (one per file and path).
    pub(crate) paths: Count,
    /// Parquet leaves those reads use (one per file, path and leaf).
    pub(crate) leaves: Count,
}

impl ShreddedReadMetrics {
    /// The metrics, registered in `metrics`.
    pub(crate) fn new(metrics: &ExecutionPlanMetricsSet) -> Self {
        ShreddedReadMetrics {
            paths: MetricBuilder::new(metrics).global_counter("variant_paths_from_shredded_leaves"),
            leaves: MetricBuilder::new(metrics).global_counter("variant_shredded_leaves_read"),
        }
    }
}

impl VariantExprAdapterFactory {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn PhysicalExprAdapterFactory>) -> Self {
        Self {
            inner,
            default_inner: false,
            facts: None,
            metrics: None,
            clips: Arc::default(),
            predicate: None,
        }
    }

    /// Wrapping DataFusion's default adapter.
    pub fn over_default() -> Self {
        Self {
            default_inner: true,
            ..Self::new(Arc::new(DefaultPhysicalExprAdapterFactory))
        }
    }

    /// Whether it was made by [`Self::over_default`] (and so wraps no application's adapter).
    pub fn wraps_default(&self) -> bool {
        self.default_inner
    }

    /// This factory for one file whose footer gave `facts`, counting its reads in `metrics`,
    /// with the clipped types of the columns whose projected paths go through arrays and the
    /// scan's predicate.
    pub(crate) fn for_file(
        &self,
        facts: Arc<FileFacts>,
        metrics: ShreddedReadMetrics,
        clips: HashMap<String, DataType>,
        predicate: Option<Arc<dyn PhysicalExpr>>,
    ) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            default_inner: self.default_inner,
            facts: Some(facts),
            metrics: Some(metrics),
            clips: Arc::new(clips),
            predicate,
        }
    }
}

/// True for a struct type with a `typed_value` child.
fn declares_typed_value(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Struct(fields) if fields.find("typed_value").is_some())
}

/// True when `data_type` holds, inside it (in structs, lists and maps), a variant-shaped struct
/// for which `test` is true.
fn holds_variant(data_type: &DataType, test: &dyn Fn(&DataType) -> bool) -> bool {
    let inside = |t: &DataType| t != data_type && has_variant_shape(t) && test(t);
    holds_type(data_type, &inside)
}

/// True when `data_type` holds (in structs, lists, maps) an interval that is not
/// `Interval(MonthDayNano)`: what the parquet crate makes of `INTERVAL`, months or days dropped.
fn holds_lossy_interval(data_type: &DataType) -> bool {
    holds_type(
        data_type,
        &|t| matches!(t, DataType::Interval(unit) if unit != &IntervalUnit::MonthDayNano),
    )
}

/// The top-level columns of `schema` that hold variants.
pub(crate) fn variant_column_names(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|f| is_variant_field(f) || has_variant_shape(f.data_type()))
        .map(|f| f.name().clone())
        .collect()
}

impl Default for VariantExprAdapterFactory {
    fn default() -> Self {
        Self::new(Arc::new(DefaultPhysicalExprAdapterFactory))
    }
}

impl PhysicalExprAdapterFactory for VariantExprAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let mut relayout: HashMap<String, FieldRef> = HashMap::new();
        let mut intervals: HashSet<String> = HashSet::new();
        let mut logical_for_inner: Vec<FieldRef> = Vec::new();
        for field in logical_file_schema.fields() {
            let physical = physical_file_schema.field_with_name(field.name()).ok();
            match physical {
                // an INTERVAL column, read as its bytes (see `crate::parquet::general::interval`)
                Some(physical)
                    if field.data_type() == &INTERVAL_TYPE
                        && physical.data_type() == &INTERVAL_BYTES_TYPE
                        && is_marked_interval(&physical_file_schema, field.name()) =>
                {
                    intervals.insert(field.name().clone());
                    logical_for_inner.push(Arc::new(physical.clone()));
                }
                // (a table that declares `typed_value` itself reads the file's layout as it is)
                Some(physical)
                    if (is_variant_field(field) || has_variant_shape(field.data_type()))
                        && !declares_typed_value(field.data_type())
                        && has_variant_shape(physical.data_type())
                        && physical.data_type() != field.data_type() =>
                {
                    relayout.insert(field.name().clone(), Arc::clone(field));
                    // the wrapped adapter then keeps the column as the file has it
                    logical_for_inner.push(Arc::new(physical.clone()));
                }
                // a column with variants inside it (in structs, lists, maps) that this file
                // lays out otherwise (shredded, in another order) under a table that declares
                // them unshredded, or with intervals inside it that the file gives as their
                // bytes; or an interval column, or one holding intervals, that the parquet crate
                // decoded itself, dropping months or days (encrypted files, read by DataFusion's
                // reader): reading it is an error
                Some(physical)
                    if physical.data_type() != field.data_type()
                        && ((holds_variant(field.data_type(), &|_| true)
                            && !holds_variant(field.data_type(), &declares_typed_value))
                            || (holds_interval(field.data_type())
                                && (is_marked_interval(&physical_file_schema, field.name())
                                    || holds_lossy_interval(physical.data_type())))) =>
                {
                    relayout.insert(field.name().clone(), Arc::clone(field));
                    logical_for_inner.push(Arc::new(physical.clone()));
                }
                _ => logical_for_inner.push(Arc::clone(field)),
            }
        }
        if relayout.is_empty() && intervals.is_empty() {
            return self.inner.create(logical_file_schema, physical_file_schema);
        }
        let logical_for_inner = Arc::new(Schema::new_with_metadata(
            logical_for_inner,
            logical_file_schema.metadata().clone(),
        ));
        let without_empty_residuals = self
            .facts
            .as_ref()
            .map(|facts| {
                relayout
                    .keys()
                    .filter_map(|name| {
                        let file_type = physical_file_schema.field_with_name(name).ok()?;
                        let clipped = facts
                            .column(name)?
                            .without_empty_residuals(file_type.data_type())?;
                        Some((name.clone(), clipped))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Arc::new(VariantExprAdapter {
            inner: self
                .inner
                .create(logical_for_inner, Arc::clone(&physical_file_schema))?,
            relayout,
            without_empty_residuals,
            intervals,
            physical_file_schema,
            facts: self.facts.clone(),
            metrics: self.metrics.clone(),
            clips: Arc::clone(&self.clips),
            predicate: self.predicate.clone(),
        }))
    }
}

#[derive(Debug)]
struct VariantExprAdapter {
    inner: Arc<dyn PhysicalExprAdapter>,
    /// Columns whose file layout differs from the table's, with the table's field.
    relayout: HashMap<String, FieldRef>,
    /// The shredded columns of `relayout` whose whole values are read without the `value`
    /// leaves that hold nothing in the file, with the type they are read as (see
    /// [`ColumnFacts::without_empty_residuals`](super::facts::ColumnFacts::without_empty_residuals)).
    without_empty_residuals: HashMap<String, DataType>,
    /// `INTERVAL` columns the file gives as their bytes.
    intervals: HashSet<String>,
    physical_file_schema: SchemaRef,
    facts: Option<Arc<FileFacts>>,
    metrics: Option<ShreddedReadMetrics>,
    clips: Arc<HashMap<String, DataType>>,
    predicate: Option<Arc<dyn PhysicalExpr>>,
}

impl VariantExprAdapter {
    /// `expr` as a read of shredded leaves, when it is a `variant_get`/`try_variant_get` with a
    /// literal path (and type) of a column this file shreds.
    fn shredded_get(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
        in_predicate: bool,
    ) -> Result<Option<ShreddedGetExpr>> {
        let Some(call) = expr.downcast_ref::<ScalarFunctionExpr>() else {
            return Ok(None);
        };
        let inner = call.fun().inner();
        let (mode, path) = if let Some(get) = inner.downcast_ref::<VariantGet>() {
            let mode = if get.is_deferred() {
                GetMode::Deferred
            } else {
                GetMode::Strict
            };
            (mode, get.path())
        } else if let Some(get) = inner.downcast_ref::<TryVariantGet>() {
            (GetMode::Try, get.path())
        } else {
            return Ok(None);
        };
        let args = call.args();
        let literals = args
            .iter()
            .skip(1)
            .all(|a| a.downcast_ref::<Literal>().is_some());
        let (Some(path), Some(column), true) = (path, args.first(), literals) else {
            return Ok(None);
        };
        let Some(name) = column.downcast_ref::<Column>().map(Column::name) else {
            return Ok(None);
        };
        if !self.relayout.contains_key(name) {
            return Ok(None);
        }
        let facts = self.facts.as_ref().and_then(|f| f.column(name));
        let clip = self.clips.get(name).filter(|_| !in_predicate);
        let get = ShreddedGetExpr::try_new(
            call,
            mode,
            path,
            column,
            &self.physical_file_schema,
            facts,
            clip,
        )?;
        if let (Some(get), Some(metrics)) = (&get, &self.metrics) {
            metrics.paths.add(1);
            metrics.leaves.add(get.leaf_names().len());
        }
        Ok(get)
    }
}

impl VariantExprAdapter {
    /// `Some(expr)` when `expr` is a call of a function that reads shredded input directly
    /// (`reads_shredded_input`) on a column this file shreds: the call, its column read as
    /// [`Self::whole_value`] reads it.
    fn reads_shredded_as_is(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
    ) -> Result<Option<Transformed<Arc<dyn PhysicalExpr>>>> {
        let Some(call) = expr.downcast_ref::<ScalarFunctionExpr>() else {
            return Ok(None);
        };
        let [arg] = call.args() else {
            return Ok(None);
        };
        let Some(column) = arg.downcast_ref::<Column>() else {
            return Ok(None);
        };
        if !reads_shredded_input(call.fun()) || !self.relayout.contains_key(column.name()) {
            return Ok(None);
        }
        let read = self.whole_value(arg, column.name());
        Ok(Some(if Arc::ptr_eq(&read, arg) {
            Transformed::no(Arc::clone(expr))
        } else {
            Transformed::yes(Arc::clone(expr).with_new_children(vec![read])?)
        }))
    }

    /// `column` (named `name`, a column this file lays out otherwise than the table) read
    /// whole: through a cast that leaves out its empty `value` leaves, when it has some.
    fn whole_value(&self, column: &Arc<dyn PhysicalExpr>, name: &str) -> Arc<dyn PhysicalExpr> {
        match self.without_empty_residuals.get(name) {
            Some(clipped) => Arc::new(CastExpr::new(Arc::clone(column), clipped.clone(), None)),
            None => Arc::clone(column),
        }
    }
}

impl PhysicalExprAdapter for VariantExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        let in_predicate = self
            .predicate
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &expr) || p.as_ref() == expr.as_ref());
        self.inner
            .rewrite(expr)?
            .transform_down(|e| {
                if let Some(get) = self.shredded_get(&e, in_predicate)? {
                    let get: Arc<dyn PhysicalExpr> = Arc::new(get);
                    return Ok(Transformed::new(get, true, TreeNodeRecursion::Jump));
                }
                if let Some(call) = self.reads_shredded_as_is(&e)? {
                    // the function takes the file's column as it is, without a reassembly
                    return Ok(Transformed::new(
                        call.data,
                        call.transformed,
                        TreeNodeRecursion::Jump,
                    ));
                }
                let Some(column) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                if self.intervals.contains(column.name()) {
                    let interval: Arc<dyn PhysicalExpr> =
                        Arc::new(IntervalFromParquet::new(Arc::clone(&e), column.name()));
                    return Ok(Transformed::new(interval, true, TreeNodeRecursion::Jump));
                }
                match self.relayout.get(column.name()) {
                    Some(field) => {
                        let relayout: Arc<dyn PhysicalExpr> = Arc::new(RelayoutVariant {
                            child: self.whole_value(&e, column.name()),
                            field: Arc::clone(field),
                        });
                        Ok(Transformed::new(relayout, true, TreeNodeRecursion::Jump))
                    }
                    None => Ok(Transformed::no(e)),
                }
            })
            .data()
    }
}

/// A variant column of any layout (shredded or not, any binary type), or a column holding such
/// variants or `INTERVAL` bytes, brought to `field`'s type (see [`relayout`]).
#[derive(Debug, Eq)]
struct RelayoutVariant {
    child: Arc<dyn PhysicalExpr>,
    field: FieldRef,
}

impl PartialEq for RelayoutVariant {
    fn eq(&self, other: &Self) -> bool {
        self.child.eq(&other.child) && self.field == other.field
    }
}

impl Hash for RelayoutVariant {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.child.hash(state);
        self.field.hash(state);
    }
}

impl fmt::Display for RelayoutVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match is_variant_field(&self.field) || has_variant_shape(self.field.data_type()) {
            true => write!(f, "unshred_variant({})", self.child),
            false => write!(f, "relayout({})", self.child),
        }
    }
}

impl PhysicalExpr for RelayoutVariant {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let input = self.child.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(relayout(&input, &self.field)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.child]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(RelayoutVariant {
            child: Arc::clone(&children[0]),
            field: Arc::clone(&self.field),
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `input` brought to `field`'s type: the variant it is, or the variants inside it (in structs,
/// lists and maps), reassembled where shredded (see [`relayout_variant`]); `INTERVAL` bytes
/// converted; other fields whose type differs cast, missing struct fields NULL.
#[recursive::recursive]
fn relayout(input: &ArrayRef, field: &FieldRef) -> Result<ArrayRef> {
    if input.data_type() == field.data_type() {
        return Ok(Arc::clone(input));
    }
    if is_variant_field(field) || has_variant_shape(field.data_type()) {
        return relayout_variant(input, field);
    }
    Ok(match (field.data_type(), input.data_type()) {
        (DataType::Struct(target), DataType::Struct(_)) => {
            let s = input.as_struct();
            let columns = target
                .iter()
                .map(|child| match s.column_by_name(child.name()) {
                    Some(c) => relayout(c, child),
                    None => Ok(new_null_array(child.data_type(), s.len())),
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StructArray::try_new(
                target.clone(),
                columns,
                s.nulls().cloned(),
            )?)
        }
        (DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..), _) => {
            with_children_converted(input, field.data_type(), |_, c, out| relayout(c, out))?
        }
        // a map's entries by position (writers name them differently, see `map_entries_named`)
        (DataType::Map(..), _) => {
            with_children_converted(input, field.data_type(), |_, c, out| {
                with_children_converted(c, out.data_type(), |_, c, out| relayout(c, out))
            })?
        }
        (&INTERVAL_TYPE, &INTERVAL_BYTES_TYPE) => interval_from_bytes(input, field.name())?,
        (&INTERVAL_TYPE, DataType::Interval(unit)) => {
            return exec_err!(
                "the INTERVAL {} of this file can only be read as {}, which drops months or \
                 days (encrypted files are read by DataFusion's reader)",
                field.name(),
                DataType::Interval(*unit)
            );
        }
        (target, _) => cast(input, target)?,
    })
}

/// Reassembles the variant column `input` (when shredded) and casts its `metadata`/`value`
/// children to the types `field` declares.
fn relayout_variant(input: &ArrayRef, field: &FieldRef) -> Result<ArrayRef> {
    let DataType::Struct(target) = field.data_type() else {
        return exec_err!("variant column {} is not a struct", field.name());
    };
    let unshredded = match input.as_struct_opt() {
        Some(s) if s.column_by_name("typed_value").is_some() => crate::shredding::unshred(s)?,
        Some(s) => s.clone(),
        None => {
            return exec_err!(
                "variant column {} is {} in this file",
                field.name(),
                input.data_type()
            );
        }
    };
    let mut columns = Vec::with_capacity(target.len());
    for child in target.iter() {
        match unshredded.column_by_name(child.name()) {
            Some(c) if c.data_type() == child.data_type() => columns.push(Arc::clone(c)),
            Some(c) => columns.push(cast(c, child.data_type())?),
            None => {
                return exec_err!(
                    "variant column {} has no {} child in this file",
                    field.name(),
                    child.name()
                );
            }
        }
    }
    Ok(Arc::new(StructArray::try_new(
        target.clone(),
        columns,
        unshredded.nulls().cloned(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{FixedSizeBinaryArray, IntervalDayTimeArray};
    use datafusion::arrow::datatypes::{
        Field, Fields, IntervalDayTime, IntervalMonthDayNano, IntervalMonthDayNanoType,
    };

    fn in_struct(name: &str, child: ArrayRef) -> ArrayRef {
        let fields = Fields::from(vec![Field::new(name, child.data_type().clone(), true)]);
        Arc::new(StructArray::new(fields, vec![child], None))
    }

    fn target() -> FieldRef {
        let fields = Fields::from(vec![Field::new("iv", INTERVAL_TYPE, true)]);
        Arc::new(Field::new("s", DataType::Struct(fields), true))
    }

    #[test]
    fn nested_interval_bytes_become_month_day_nano() {
        // 14 months, 3 days, 4500 ms
        let bytes: Vec<u8> = [14u32, 3, 4500]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes = FixedSizeBinaryArray::try_from_iter([bytes].into_iter()).unwrap();
        let out = relayout(&in_struct("iv", Arc::new(bytes)), &target()).unwrap();
        let iv = out.as_struct().column(0);
        let iv = iv.as_primitive::<IntervalMonthDayNanoType>();
        assert_eq!(iv.value(0), IntervalMonthDayNano::new(14, 3, 4_500_000_000));
    }

    /// A map whose writer named its entries otherwise (arrow-rs `MapBuilder`: `keys`/`values`),
    /// its values shredded variants, read under a table whose entries are `key_value { key,
    /// value }`: the entries are taken by position, the values reassembled.
    #[test]
    fn map_entries_are_relaid_out_by_position() {
        use crate::codec::{JsonParser, VariantBuilder};
        use crate::shredding::shred_variant;
        use crate::variant_array::{VariantArrayBuilder, variant_data_type, variant_field};
        use datafusion::arrow::array::{MapArray, StringArray};
        use datafusion::arrow::buffer::OffsetBuffer;
        let mut column = VariantArrayBuilder::with_capacity(2);
        for json in [r#"{"a": 1, "b": "x"}"#, "[2]"] {
            let mut b = VariantBuilder::new();
            JsonParser::new().parse(json, &mut b).unwrap();
            column.append_built(&b);
        }
        let column = column.finish().unwrap();
        let ty = crate::cast::target_type::parse_target_type("struct<a bigint>").unwrap();
        let shredded = shred_variant(&column, &ty).unwrap();
        let entries = |key: &str, value: Field| {
            Fields::from(vec![Field::new(key, DataType::Utf8, false), value])
        };
        let file_entries = entries(
            "keys",
            Field::new("values", shredded.data_type().clone(), true),
        );
        let keys: ArrayRef = Arc::new(StringArray::from(vec!["k", "k"]));
        let map = MapArray::try_new(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(file_entries.clone()),
                false,
            )),
            OffsetBuffer::from_lengths([1, 1]),
            StructArray::try_new(file_entries, vec![keys, shredded], None).unwrap(),
            None,
            false,
        )
        .unwrap();
        let table_entries = entries("key", variant_field("value", true));
        let target: FieldRef = Arc::new(Field::new(
            "m",
            DataType::Map(
                Arc::new(Field::new(
                    "key_value",
                    DataType::Struct(table_entries),
                    false,
                )),
                false,
            ),
            true,
        ));
        let out = relayout(&(Arc::new(map) as ArrayRef), &target).unwrap();
        assert_eq!(out.data_type(), target.data_type());
        let values = out.as_map().values().clone();
        assert_eq!(values.data_type(), &variant_data_type());
        let json = crate::functions::to_json::variant_array_to_json(
            "to_json",
            &values,
            &crate::codec::SessionTimeZone::utc(),
        )
        .unwrap();
        let json: Vec<_> = json.as_string::<i32>().iter().flatten().collect();
        assert_eq!(json, [r#"{"a":1,"b":"x"}"#, "[2]"]);
    }

    #[test]
    fn a_nested_interval_read_lossily_is_an_error() {
        // what the parquet crate makes of INTERVAL itself (DataFusion's reader, encrypted files)
        let day_time = IntervalDayTimeArray::from(vec![IntervalDayTime::new(3, 4500)]);
        let err = relayout(&in_struct("iv", Arc::new(day_time)), &target()).unwrap_err();
        assert!(
            err.to_string()
                .contains("the INTERVAL iv of this file can only be read as"),
            "{err}"
        );
    }
}
