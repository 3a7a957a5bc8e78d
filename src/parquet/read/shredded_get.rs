//! `variant_get(v, path [, type])` read from the shredded leaves of one Parquet file instead of
//! the whole variant column.
//!
//! The expression adapter replaces a call on a column that the file shreds by a
//! [`ShreddedGetExpr`]. Its children are `get_field(v, 'typed_value', 'a', ...)` chains, one per
//! Parquet leaf the answer can come from; DataFusion's Parquet opener turns them into a leaf-level
//! projection mask (and, in a pushed-down filter, a row-filter mask), so only those leaves are
//! read, and several paths of one column share the reads. The expression then evaluates on the
//! variant column *as decoded under that mask*: a struct pruned to the projected leaves, whose
//! null buffers still say at every level whether the object, array or field is there.
//!
//! Which leaves a path needs follows the shredding spec (`spec/VariantShredding.md`):
//! - a key whose field is shredded is read from that field's group only: "the `value` column of a
//!   partially shredded object must never contain fields represented by the Parquet columns in
//!   `typed_value`", and a non-null object is always in `typed_value` ("if the value is an object,
//!   `typed_value` must be non-null"), so the object's residual `value` is not read;
//! - an index into a shredded array is read from the array's `typed_value` (an array is never in
//!   `value`);
//! - where the path leaves the shredded schema (a key that is not shredded, a key or index on a
//!   level shredded as another type, a level without `typed_value`), the rest of the path is
//!   looked up in that level's `value` (with `metadata`), exactly as in an unshredded value;
//! - at the end of the path, the group's `value` and every leaf under its `typed_value`.
//!
//! The leaf's value is cast to the requested type by the same rules as an unshredded value (a
//! string leaf `"27"` read as INT gives 27): only an identical type (and integer widening) is
//! taken as it is; everything else goes through the variant cast of `variant_get`.
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, RecordBatch, StructArray, UInt64Array, make_array,
};
use datafusion::arrow::buffer::{BooleanBuffer, NullBuffer};
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::{Result, ScalarValue, exec_err, internal_err};
use datafusion::config::ConfigOptions;
use datafusion::functions::core::get_field;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use super::facts::ColumnFacts;
use crate::cast::{CastOptions, OnCastError};
use crate::codec::{EMPTY_METADATA, PathSegment, SessionTimeZone, VariantPath};
use crate::functions::variant_get::{GetMode, get_column, with_deferred_errors};

/// The element of an array in a leaf path (Parquet names it `list.element`).
const ELEMENT: &str = "[]";

/// A leaf path with Parquet's names for array elements.
fn parquet_names(leaf: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(leaf.len() + 1);
    for part in leaf {
        if part == ELEMENT {
            out.extend(["list".to_string(), "element".to_string()]);
        } else {
            out.push(part.clone());
        }
    }
    out
}

/// One step of the typed descent along a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Step {
    /// Into the shredded field `name` of the object group at this level.
    Field(String),
    /// Into element `index` of the shredded array at this level.
    Element(usize),
}

/// How one path is read from one file's layout of a variant column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ShreddedRead {
    /// The typed descent: the path's first `steps.len()` segments.
    steps: Vec<Step>,
    /// True when the descent covers the whole path (the answer is the last group's value);
    /// false when the rest of the path is looked up in the `value` of the group it ends at.
    complete: bool,
    /// The Parquet leaves the answer comes from, as field paths inside the variant column
    /// ([`ELEMENT`] for an array's element).
    leaves: Vec<Vec<String>>,
    /// True when the file holds nothing at the path's group (its `value` is empty in the whole
    /// file and it has no `typed_value`): every answer is NULL and no leaf of it is read.
    always_null: bool,
}

impl ShreddedRead {
    /// Plans reading `path` from a variant column whose file type is `file_type` (a shredded
    /// struct: `metadata`, `value` and/or `typed_value`), skipping the residual `value` leaves
    /// that `facts` (the file's statistics, when known) say hold nothing. None when the column
    /// is not shredded, has a layout this reader does not plan, or a leaf on the way has a
    /// field named "" (the caller then reads the whole column).
    pub(crate) fn plan(
        file_type: &DataType,
        path: &VariantPath,
        facts: Option<&ColumnFacts>,
    ) -> Option<Self> {
        let DataType::Struct(fields) = file_type else {
            return None;
        };
        fields.find("typed_value")?;
        let empty = |leaf: &[String]| facts.is_some_and(|f| f.is_empty(&parquet_names(leaf)));
        let residuals_under =
            |prefix: &[String]| facts.is_none_or(|f| f.has_residuals_under(&parquet_names(prefix)));
        let mut read = ShreddedRead {
            steps: vec![],
            complete: true,
            leaves: vec![],
            always_null: false,
        };
        let mut group = fields.clone();
        let mut prefix: Vec<String> = vec![];
        let mut needs_metadata = false;
        for segment in path.segments() {
            let typed = group.find("typed_value").map(|(_, f)| f.data_type());
            let next = match (segment, typed) {
                (PathSegment::Key(key), Some(DataType::Struct(typed))) => match typed.find(key) {
                    // a shredded field must be a `{value, typed_value}` group
                    Some((_, f)) => Some((Step::Field(key.clone()), group_fields(f.data_type())?)),
                    None => None,
                },
                (PathSegment::Index(i), Some(DataType::List(element))) => Some((
                    Step::Element(*i as usize),
                    group_fields(element.data_type())?,
                )),
                // other array layouts (not what the Parquet reader produces): read whole
                (PathSegment::Index(_), Some(t)) if t.is_list() => return None,
                _ => None,
            };
            let Some((step, next_group)) = next else {
                read.complete = false;
                break;
            };
            match &step {
                Step::Field(key) => prefix.extend(["typed_value".to_string(), key.clone()]),
                Step::Element(_) => prefix.extend(["typed_value".to_string(), ELEMENT.to_string()]),
            }
            read.steps.push(step);
            group = next_group;
        }
        if group.find("value").is_some() {
            let value = child(&prefix, "value");
            if !empty(&value) {
                needs_metadata = true;
                read.leaves.push(value);
            }
        }
        if read.complete
            && let Some((_, typed)) = group.find("typed_value")
        {
            let mut leaves = TypedLeaves {
                empty: &empty,
                residuals_under: &residuals_under,
                leaves: &mut read.leaves,
                needs_metadata: &mut needs_metadata,
            };
            leaves.collect(typed.data_type(), child(&prefix, "typed_value"));
        }
        read.always_null =
            !read.steps.is_empty() && !read.leaves.iter().any(|leaf| leaf.starts_with(&prefix));
        if needs_metadata || read.leaves.is_empty() {
            read.leaves.push(vec!["metadata".to_string()]);
        }
        // a shredded field named "" (a valid key) cannot be named by `get_field`, which refuses
        // empty names: such a read takes the whole column
        if (read.field_leaves().iter()).any(|leaf| leaf.iter().any(String::is_empty)) {
            return None;
        }
        Some(read)
    }

    /// True when the path goes through a shredded array.
    pub(crate) fn through_array(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Element(_)))
    }

    /// The leaves `get_field` chains can name: each leaf, or the array it is in (whose whole
    /// subtree is then read), without repeats.
    fn field_leaves(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = vec![];
        for leaf in &self.leaves {
            let end = leaf.iter().position(|p| p == ELEMENT).unwrap_or(leaf.len());
            let leaf = leaf[..end].to_vec();
            if !out.contains(&leaf) {
                out.push(leaf);
            }
        }
        out
    }

    /// The answer for every row of `variant`, the column as read under the projection mask
    /// (pruned to the planned leaves, or more). `path` is the path planned.
    pub(crate) fn evaluate(
        &self,
        variant: &StructArray,
        path: &VariantPath,
        return_type: &DataType,
        opts: &CastOptions,
    ) -> Result<ArrayRef> {
        let len = variant.len();
        if self.always_null {
            return Ok(datafusion::arrow::array::new_null_array(return_type, len));
        }
        let metadata = variant.column_by_name("metadata");
        let mut group = variant.clone();
        // Rows whose value reaches the current group.
        let mut reached = variant.nulls().cloned();
        // Below an array, the group's arrays hold elements: `elements` maps each row to its
        // element there (None: no element), and `element_nulls` collects the element-level nulls
        // met since; only the arrays the answer is read from are taken at the end.
        let mut elements: Option<UInt64Array> = None;
        let mut element_nulls: Option<NullBuffer> = None;
        for step in &self.steps {
            let Some(typed) = group.column_by_name("typed_value") else {
                return internal_err!("shredded read: no typed_value at {step:?}");
            };
            match step {
                Step::Field(name) => {
                    let typed = typed.as_struct();
                    let Some(field) = typed.column_by_name(name) else {
                        return internal_err!("shredded read: no field {name}");
                    };
                    let field = field.as_struct().clone();
                    let nulls = NullBuffer::union(typed.nulls(), field.nulls());
                    match elements {
                        None => reached = NullBuffer::union(reached.as_ref(), nulls.as_ref()),
                        Some(_) => {
                            element_nulls =
                                NullBuffer::union(element_nulls.as_ref(), nulls.as_ref())
                        }
                    }
                    group = field;
                }
                Step::Element(index) => {
                    let list = typed.as_list::<i32>();
                    let offsets = list.value_offsets();
                    let valid = |nulls: &Option<NullBuffer>, i: usize| {
                        nulls.as_ref().is_none_or(|n| n.is_valid(i))
                    };
                    let indices: UInt64Array = match &elements {
                        // the first array on the path: its rows are the column's, so the
                        // answer's validity is computed a word at a time and its indices
                        // without a branch (an index under a null is never read by `take`)
                        None => {
                            let long_enough = BooleanBuffer::collect_bool(len, |row| {
                                *index < (offsets[row + 1] - offsets[row]) as usize
                            });
                            let answered = [reached.as_ref(), element_nulls.as_ref(), list.nulls()]
                                .into_iter()
                                .flatten()
                                .fold(long_enough, |v, n| &v & n.inner());
                            let at = offsets[..len]
                                .iter()
                                .map(|&start| start as u64 + *index as u64);
                            UInt64Array::new(at.collect(), Some(NullBuffer::new(answered)))
                        }
                        Some(e) => (0..len)
                            .map(|row| {
                                let at = e.is_valid(row).then(|| e.value(row) as usize)?;
                                let (start, end) = (offsets[at] as usize, offsets[at + 1] as usize);
                                (valid(&element_nulls, at)
                                    && list.is_valid(at)
                                    && *index < end - start)
                                    .then_some((start + index) as u64)
                            })
                            .collect(),
                    };
                    elements = Some(indices);
                    element_nulls = None;
                    group = list.values().as_struct().clone();
                }
            }
        }
        // The group's arrays by row.
        let by_row = |array: &ArrayRef| -> Result<ArrayRef> {
            match &elements {
                None => Ok(Arc::clone(array)),
                Some(indices) => Ok(take(
                    &with_nulls(array, element_nulls.as_ref())?,
                    indices,
                    None,
                )?),
            }
        };
        if let Some(indices) = &elements {
            reached = indices.nulls().cloned();
        }
        let group_value = group.column_by_name("value").map(by_row).transpose()?;
        let group_typed = match group.column_by_name("typed_value") {
            Some(typed) if self.complete => Some(by_row(typed)?),
            _ => None,
        };
        let (value, typed) = (group_value.as_ref(), group_typed.as_ref());
        // The leaf of a fully shredded path: its typed column, cast where its type differs.
        if let Some(typed) = typed
            && is_primitive(typed.data_type())
            && value.is_none_or(|v| !any_valid(v, reached.as_ref()))
            && let Some(result) = cast_leaf(typed, return_type)?
        {
            return with_nulls(&result, reached.as_ref());
        }
        // Everything else: the group (or the level's residual value) as a variant column, and
        // the rest of the path looked up in it as in an unshredded value.
        let mut names = vec![];
        let mut columns: Vec<ArrayRef> = vec![];
        let metadata = match metadata {
            Some(m) => Arc::clone(m),
            None => Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
                EMPTY_METADATA,
                len,
            ))) as ArrayRef,
        };
        names.push(Field::new("metadata", metadata.data_type().clone(), true));
        columns.push(metadata);
        if let Some(value) = value {
            names.push(Field::new("value", value.data_type().clone(), true));
            columns.push(Arc::clone(value));
        }
        if let Some(typed) = typed {
            names.push(Field::new("typed_value", typed.data_type().clone(), true));
            columns.push(Arc::clone(typed));
        }
        if columns.len() == 1 {
            return Ok(datafusion::arrow::array::new_null_array(return_type, len));
        }
        // A field with neither a value nor a typed value is missing: SQL NULL (a missing value
        // at the top or in an array reads as a variant null, as in the reassembled column).
        // Where the rest of the path is looked up in a residual, a missing residual has nothing.
        let field_ends_path = self.complete && matches!(self.steps.last(), Some(Step::Field(_)));
        let present = match (value, typed) {
            (Some(v), _) if !self.complete => v.nulls().cloned(),
            _ if !field_ends_path => None,
            (Some(v), Some(t)) => match (v.nulls(), t.nulls()) {
                (Some(a), Some(b)) => Some(NullBuffer::new(a.inner() | b.inner())),
                _ => None,
            },
            (Some(a), None) | (None, Some(a)) => a.nulls().cloned(),
            (None, None) => None,
        };
        let reached = NullBuffer::union(reached.as_ref(), present.as_ref());
        let sub = StructArray::try_new(Fields::from(names), columns, reached)?;
        let rest = if self.complete {
            VariantPath::default()
        } else {
            path.suffix(self.steps.len())
        };
        get_column(&(Arc::new(sub) as ArrayRef), &rest, return_type, opts)
    }

    /// The expressions that name the leaves to read over `column`: one cast of the column to
    /// `clip` (the type of the column clipped to the leaves every path on it needs, see
    /// [`clipped_type`]), or else one `get_field` chain per leaf (an array is named whole).
    fn leaf_exprs(
        &self,
        column: &Arc<dyn PhysicalExpr>,
        file_schema: &Schema,
        config: &Arc<ConfigOptions>,
        clip: Option<&DataType>,
    ) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
        if let Some(clip) = clip {
            return Ok(vec![Arc::new(CastExpr::new(
                Arc::clone(column),
                clip.clone(),
                None,
            ))]);
        }
        self.field_leaves()
            .iter()
            .map(|leaf| {
                let mut args = vec![Arc::clone(column)];
                args.extend(leaf.iter().map(|name| {
                    Arc::new(Literal::new(ScalarValue::Utf8(Some(name.clone()))))
                        as Arc<dyn PhysicalExpr>
                }));
                Ok(Arc::new(ScalarFunctionExpr::try_new(
                    get_field(),
                    args,
                    file_schema,
                    Arc::clone(config),
                )?) as Arc<dyn PhysicalExpr>)
            })
            .collect()
    }
}

/// `file_type` (a variant column's type in a file) clipped to what `reads` need: the struct
/// fields and array elements on the way to their leaves. Reading a column through a cast to it
/// (DataFusion clips the Parquet read to the cast's fields) fetches only those leaves, inside
/// arrays too, which `get_field` cannot reach; all the reads of one column share it. None when
/// nothing is left out.
pub(crate) fn clipped_type(file_type: &DataType, reads: &[&ShreddedRead]) -> Option<DataType> {
    let leaves: Vec<&[String]> = reads
        .iter()
        .flat_map(|r| r.leaves.iter().map(Vec::as_slice))
        .collect();
    clip(file_type, &leaves).filter(|clipped| clipped != file_type)
}

fn clip(data_type: &DataType, leaves: &[&[String]]) -> Option<DataType> {
    if leaves.iter().any(|l| l.is_empty()) {
        return Some(data_type.clone());
    }
    let under = |name: &str| -> Vec<&[String]> {
        leaves
            .iter()
            .filter(|l| l[0] == name)
            .map(|l| &l[1..])
            .collect()
    };
    match data_type {
        DataType::Struct(fields) => {
            let kept: Vec<FieldRef> = fields
                .iter()
                .filter_map(|f| {
                    let sub = under(f.name());
                    if sub.is_empty() {
                        return None;
                    }
                    let t = clip(f.data_type(), &sub)?;
                    Some(Arc::new(f.as_ref().clone().with_data_type(t)))
                })
                .collect();
            (!kept.is_empty()).then(|| DataType::Struct(Fields::from(kept)))
        }
        DataType::List(element) => {
            let t = clip(element.data_type(), &under(ELEMENT))?;
            Some(DataType::List(Arc::new(
                element.as_ref().clone().with_data_type(t),
            )))
        }
        _ => None,
    }
}

/// The children of a `{value, typed_value}` group type.
fn group_fields(data_type: &DataType) -> Option<Fields> {
    match data_type {
        DataType::Struct(fields)
            if fields.find("value").is_some() || fields.find("typed_value").is_some() =>
        {
            Some(fields.clone())
        }
        _ => None,
    }
}

fn child(prefix: &[String], name: &str) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.push(name.to_string());
    path
}

fn is_primitive(data_type: &DataType) -> bool {
    !data_type.is_nested()
}

/// Collects every Parquet leaf under a `typed_value`: the column itself for a primitive or an
/// array (whose subtree is read whole), the `value` and `typed_value` leaves of each field for an
/// object; `value` leaves that hold nothing in the file are left out.
struct TypedLeaves<'a> {
    empty: &'a dyn Fn(&[String]) -> bool,
    residuals_under: &'a dyn Fn(&[String]) -> bool,
    leaves: &'a mut Vec<Vec<String>>,
    /// Set when a residual `value` is read (decoding it needs the metadata).
    needs_metadata: &'a mut bool,
}

impl TypedLeaves<'_> {
    fn collect(&mut self, data_type: &DataType, prefix: Vec<String>) {
        let DataType::Struct(fields) = data_type else {
            if data_type.is_nested() && (self.residuals_under)(&prefix) {
                *self.needs_metadata = true;
            }
            self.leaves.push(prefix);
            return;
        };
        for field in fields.iter() {
            let Some(group) = group_fields(field.data_type()) else {
                continue;
            };
            let at = child(&prefix, field.name());
            let value = child(&at, "value");
            if group.find("value").is_some() && !(self.empty)(&value) {
                *self.needs_metadata = true;
                self.leaves.push(value);
            }
            if let Some((_, typed)) = group.find("typed_value") {
                self.collect(typed.data_type(), child(&at, "typed_value"));
            }
        }
    }
}

/// True when some row of `array` is set where `rows` (None: every row) is.
fn any_valid(array: &ArrayRef, rows: Option<&NullBuffer>) -> bool {
    match (array.nulls(), rows) {
        (None, None) => !array.is_empty(),
        (None, Some(r)) => r.null_count() < r.len(),
        (Some(n), None) => n.null_count() < n.len(),
        (Some(n), Some(r)) => (n.inner() & r.inner()).count_set_bits() > 0,
    }
}

/// A shredded leaf of a primitive type as `target`, when that takes no variant cast rule: the
/// same type, an integer widened, or text in another layout. None otherwise.
fn cast_leaf(leaf: &ArrayRef, target: &DataType) -> Result<Option<ArrayRef>> {
    use DataType::*;
    let from = leaf.data_type();
    if from == target {
        return Ok(Some(Arc::clone(leaf)));
    }
    let widening = matches!(
        (from, target),
        (Int8, Int16 | Int32 | Int64)
            | (Int16, Int32 | Int64)
            | (Int32, Int64)
            | (Utf8 | LargeUtf8, Utf8View)
            | (Utf8View | LargeUtf8, Utf8)
    );
    Ok(widening.then(|| cast(leaf, target)).transpose()?)
}

/// `array` with the rows that `nulls` marks null set to NULL as well.
fn with_nulls(array: &ArrayRef, nulls: Option<&NullBuffer>) -> Result<ArrayRef> {
    let Some(nulls) = nulls else {
        return Ok(Arc::clone(array));
    };
    let merged = NullBuffer::union(array.nulls(), Some(nulls));
    if merged.as_ref().map(NullBuffer::null_count) == array.nulls().map(NullBuffer::null_count) {
        return Ok(Arc::clone(array));
    }
    let data = array.to_data().into_builder().nulls(merged).build()?;
    Ok(make_array(data))
}

/// `variant_get(v, path [, type])` (or `try_variant_get`) on a column a file shreds, reading only
/// the leaves the path needs (see the module documentation).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShreddedGetExpr {
    /// `variant_get` or `try_variant_get` (named in errors).
    function: &'static str,
    mode: GetMode,
    path: VariantPath,
    /// The replaced call's result field.
    return_field: FieldRef,
    /// The session time zone (for casts of timestamps and dates).
    time_zone: Option<String>,
    /// The name of the variant column (for display).
    column: String,
    read: ShreddedRead,
    /// What names the leaves read, over the column: one `get_field` chain per leaf, or one
    /// cast to the clipped type (see [`ShreddedRead::leaf_exprs`]).
    leaves: Vec<Arc<dyn PhysicalExpr>>,
}

impl ShreddedGetExpr {
    /// Replaces `call` (a `variant_get`/`try_variant_get` of `column` with a literal path that
    /// was parsed at planning) for a file where `column` has type `file_type` in `file_schema`.
    /// None when the column is not shredded there (or not in a layout this reader plans).
    pub(crate) fn try_new(
        call: &ScalarFunctionExpr,
        mode: GetMode,
        path: &VariantPath,
        column: &Arc<dyn PhysicalExpr>,
        file_schema: &Schema,
        facts: Option<&ColumnFacts>,
        clip: Option<&DataType>,
    ) -> Result<Option<Self>> {
        let Some(col) = column.downcast_ref::<Column>() else {
            return Ok(None);
        };
        let file_type = file_schema.field(col.index()).data_type();
        let Some(read) = ShreddedRead::plan(file_type, path, facts) else {
            return Ok(None);
        };
        let config = Arc::new(call.config_options().clone());
        let leaves = read.leaf_exprs(column, file_schema, &config, clip)?;
        Ok(Some(ShreddedGetExpr {
            function: if mode == GetMode::Try {
                "try_variant_get"
            } else {
                "variant_get"
            },
            mode,
            path: path.clone(),
            return_field: call.return_field(file_schema)?,
            time_zone: call.config_options().execution.time_zone.clone(),
            column: col.name().to_string(),
            read,
            leaves,
        }))
    }

    /// The Parquet leaves this expression reads, as dotted paths (`v.typed_value.a.typed_value`).
    pub fn leaf_names(&self) -> Vec<String> {
        self.read
            .leaves
            .iter()
            .map(|leaf| format!("{}.{}", self.column, leaf.join(".")))
            .collect()
    }

    /// The variant column as decoded under the projection mask.
    fn pruned_column(&self, batch: &RecordBatch) -> Result<ArrayRef> {
        let column = self
            .leaves
            .first()
            .and_then(|leaf| match leaf.downcast_ref::<CastExpr>() {
                Some(cast) => Some(cast.expr()),
                None => leaf
                    .downcast_ref::<ScalarFunctionExpr>()
                    .and_then(|f| f.args().first()),
            });
        let Some(column) = column else {
            return internal_err!("shredded read of {} has no leaves", self.column);
        };
        column.evaluate(batch)?.into_array(batch.num_rows())
    }
}

impl fmt::Display for ShreddedGetExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}({}, '{}', '{}') reading [{}]",
            self.function,
            self.column,
            self.path,
            self.return_field.data_type(),
            self.leaf_names().join(", ")
        )
    }
}

impl PhysicalExpr for ShreddedGetExpr {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.return_field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let column = self.pruned_column(batch)?;
        let Some(variant) = column.as_struct_opt() else {
            return exec_err!(
                "{}: variant column {} is {} in this file",
                self.function,
                self.column,
                column.data_type()
            );
        };
        let opts = CastOptions {
            function: self.function,
            suggestion: "try_variant_get",
            on_error: match self.mode {
                GetMode::Strict => OnCastError::Raise,
                GetMode::Try => OnCastError::Null,
                GetMode::Deferred => OnCastError::Defer(Default::default()),
            },
            tz: SessionTimeZone::parse(self.time_zone.as_deref())
                .map_err(|e| datafusion::common::DataFusionError::Execution(e.to_string()))?,
        };
        let data_type = self.return_field.data_type();
        let value_type = match (self.mode, data_type) {
            (GetMode::Deferred, DataType::Struct(fields)) => fields[0].data_type(),
            _ => data_type,
        };
        let result = self.read.evaluate(variant, &self.path, value_type, &opts)?;
        Ok(ColumnarValue::Array(match self.mode {
            GetMode::Deferred => with_deferred_errors(result, opts.take_deferred(), data_type)?,
            _ => result,
        }))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        self.leaves.iter().collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(ShreddedGetExpr {
            function: self.function,
            mode: self.mode,
            path: self.path.clone(),
            return_field: Arc::clone(&self.return_field),
            time_zone: self.time_zone.clone(),
            column: self.column.clone(),
            read: self.read.clone(),
            leaves: children,
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
