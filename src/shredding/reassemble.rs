//! Reassembling shredded variants against each row's own metadata.
//!
//! The spec requires every field name of a variant, shredded or not, to be in its metadata, so a
//! reassembled value can use the row's metadata as it is: the metadata column is kept, residual
//! values are copied byte for byte, shredded fields get the ids their names have in the
//! dictionary, and only the shredded columns are encoded. The shredding schema is resolved once
//! per batch ([`GroupPlan`]), not per row.
//!
//! A row whose shredded field name is missing from its metadata (an invalid file) cannot be
//! written this way: [`reassemble`] then returns None and the caller rebuilds the batch with a
//! fresh dictionary.
use std::ops::Range;
use std::sync::Arc;

use crate::variant_array::invalid_variant;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Decimal32Array,
    Decimal64Array, Decimal128Array, FixedSizeBinaryArray, Float32Array, Float64Array, Int8Array,
    Int16Array, Int32Array, Int64Array, StructArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampNanosecondArray,
};
use datafusion::arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::Result;

use super::{codec_err, stack_checked_every_few_levels};
use crate::arrow_nested::grown_offset;
use crate::codec::bytes::reserve_at_sample_rate;
use crate::codec::decimal_digits;
use crate::codec::format::write_json_bytes;
use crate::codec::raw::{RawKeys, RawLayout};
use crate::codec::{
    DEFAULT_MAX_DEPTH, Metadata, ObjectView, Value, Variant, VariantError, basic_type, primitive,
    value_size, write_array, write_object,
};

/// Binary bytes of any layout.
#[derive(Clone, Copy)]
pub(super) enum Bytes<'a> {
    Binary(&'a BinaryArray),
    Large(&'a datafusion::arrow::array::LargeBinaryArray),
    View(&'a datafusion::arrow::array::BinaryViewArray),
}

impl<'a> Bytes<'a> {
    pub(super) fn new(array: &'a ArrayRef) -> Result<Self> {
        Ok(match array.data_type() {
            DataType::Binary => Bytes::Binary(array.as_binary()),
            DataType::LargeBinary => Bytes::Large(array.as_binary()),
            DataType::BinaryView => Bytes::View(array.as_binary_view()),
            other => {
                return Err(invalid_variant(format!(
                    "shredded variant value must be binary, got {other}"
                )));
            }
        })
    }

    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Bytes::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Bytes::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Bytes::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// Text of any layout.
#[derive(Clone, Copy)]
pub(super) enum Text<'a> {
    Utf8(&'a datafusion::arrow::array::StringArray),
    Large(&'a datafusion::arrow::array::LargeStringArray),
    View(&'a datafusion::arrow::array::StringViewArray),
}

impl<'a> Text<'a> {
    #[inline]
    pub(super) fn get(&self, i: usize) -> &'a [u8] {
        match self {
            Text::Utf8(a) => a.value(i).as_bytes(),
            Text::Large(a) => a.value(i).as_bytes(),
            Text::View(a) => a.value(i).as_bytes(),
        }
    }
}

/// A shredded primitive column, resolved to its concrete array.
pub(super) enum Primitive<'a> {
    Boolean(&'a BooleanArray),
    Int8(&'a Int8Array),
    Int16(&'a Int16Array),
    Int32(&'a Int32Array),
    Int64(&'a Int64Array),
    Float32(&'a Float32Array),
    Float64(&'a Float64Array),
    Decimal32(&'a Decimal32Array, u8, u8),
    Decimal64(&'a Decimal64Array, u8, u8),
    Decimal128(&'a Decimal128Array, u8, u8),
    Date(&'a Date32Array),
    Time(&'a Time64MicrosecondArray),
    /// (values, with a time zone)
    TimestampMicros(&'a TimestampMicrosecondArray, bool),
    TimestampNanos(&'a TimestampNanosecondArray, bool),
    String(Text<'a>),
    Binary(Bytes<'a>),
    Uuid(&'a FixedSizeBinaryArray),
}

/// The scale of a shredded decimal, checked.
fn scale_of(s: i8) -> Result<u8> {
    u8::try_from(s)
        .ok()
        .filter(|s| *s <= 38)
        .ok_or_else(|| invalid_variant(format!("shredded decimal scale {s} is out of range")))
}

impl<'a> Primitive<'a> {
    fn new(array: &'a ArrayRef) -> Result<Option<Self>> {
        Ok(Some(match array.data_type() {
            DataType::Boolean => Primitive::Boolean(array.as_boolean()),
            DataType::Int8 => Primitive::Int8(array.as_primitive()),
            DataType::Int16 => Primitive::Int16(array.as_primitive()),
            DataType::Int32 => Primitive::Int32(array.as_primitive()),
            DataType::Int64 => Primitive::Int64(array.as_primitive()),
            DataType::Float32 => Primitive::Float32(array.as_primitive()),
            DataType::Float64 => Primitive::Float64(array.as_primitive()),
            DataType::Decimal32(p, s) => {
                Primitive::Decimal32(array.as_primitive(), *p, scale_of(*s)?)
            }
            DataType::Decimal64(p, s) => {
                Primitive::Decimal64(array.as_primitive(), *p, scale_of(*s)?)
            }
            DataType::Decimal128(p, s) => {
                Primitive::Decimal128(array.as_primitive(), *p, scale_of(*s)?)
            }
            DataType::Date32 => Primitive::Date(array.as_primitive()),
            DataType::Time64(TimeUnit::Microsecond) => Primitive::Time(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Primitive::TimestampMicros(array.as_primitive(), tz.is_some())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
                Primitive::TimestampNanos(array.as_primitive(), tz.is_some())
            }
            DataType::Utf8 => Primitive::String(Text::Utf8(array.as_string())),
            DataType::LargeUtf8 => Primitive::String(Text::Large(array.as_string())),
            DataType::Utf8View => Primitive::String(Text::View(array.as_string_view())),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                Primitive::Binary(Bytes::new(array)?)
            }
            DataType::FixedSizeBinary(16) => Primitive::Uuid(array.as_fixed_size_binary()),
            _ => return Ok(None),
        }))
    }

    /// Appends row `i` (valid) encoded as a variant primitive.
    #[inline]
    pub(super) fn write(&self, i: usize, out: &mut Vec<u8>) {
        fn fixed(out: &mut Vec<u8>, type_id: u8, data: &[u8]) {
            out.push(type_id << 2);
            out.extend_from_slice(data);
        }
        fn decimal(out: &mut Vec<u8>, unscaled: i128, precision: u8, scale: u8) {
            // a value wider than its column's precision (a corrupt file) keeps all its digits
            let precision = u32::from(precision).max(decimal_digits(unscaled));
            if precision <= 9 {
                out.extend_from_slice(&[primitive::DECIMAL4 << 2, scale]);
                out.extend_from_slice(&(unscaled as i32).to_le_bytes());
            } else if precision <= 18 {
                out.extend_from_slice(&[primitive::DECIMAL8 << 2, scale]);
                out.extend_from_slice(&(unscaled as i64).to_le_bytes());
            } else {
                out.extend_from_slice(&[primitive::DECIMAL16 << 2, scale]);
                out.extend_from_slice(&unscaled.to_le_bytes());
            }
        }
        match self {
            Primitive::Boolean(a) => out.push(
                (if a.value(i) {
                    primitive::TRUE
                } else {
                    primitive::FALSE
                }) << 2,
            ),
            Primitive::Int8(a) => fixed(out, primitive::INT8, &a.value(i).to_le_bytes()),
            Primitive::Int16(a) => fixed(out, primitive::INT16, &a.value(i).to_le_bytes()),
            Primitive::Int32(a) => fixed(out, primitive::INT32, &a.value(i).to_le_bytes()),
            Primitive::Int64(a) => fixed(out, primitive::INT64, &a.value(i).to_le_bytes()),
            Primitive::Float32(a) => fixed(out, primitive::FLOAT, &a.value(i).to_le_bytes()),
            Primitive::Float64(a) => fixed(out, primitive::DOUBLE, &a.value(i).to_le_bytes()),
            Primitive::Decimal32(a, p, s) => decimal(out, a.value(i) as i128, *p, *s),
            Primitive::Decimal64(a, p, s) => decimal(out, a.value(i) as i128, *p, *s),
            Primitive::Decimal128(a, p, s) => decimal(out, a.value(i), *p, *s),
            Primitive::Date(a) => fixed(out, primitive::DATE, &a.value(i).to_le_bytes()),
            Primitive::Time(a) => fixed(out, primitive::TIME, &a.value(i).to_le_bytes()),
            Primitive::TimestampMicros(a, utc) => fixed(
                out,
                if *utc {
                    primitive::TIMESTAMP
                } else {
                    primitive::TIMESTAMP_NTZ
                },
                &a.value(i).to_le_bytes(),
            ),
            Primitive::TimestampNanos(a, utc) => fixed(
                out,
                if *utc {
                    primitive::TIMESTAMP_NANOS
                } else {
                    primitive::TIMESTAMP_NTZ_NANOS
                },
                &a.value(i).to_le_bytes(),
            ),
            Primitive::String(t) => {
                let s = t.get(i);
                if s.len() < 64 {
                    out.push(((s.len() as u8) << 2) | basic_type::SHORT_STRING);
                } else {
                    out.push(primitive::STRING << 2);
                    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                }
                out.extend_from_slice(s);
            }
            Primitive::Binary(b) => {
                let bytes = b.get(i).unwrap_or_default();
                out.push(primitive::BINARY << 2);
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
            Primitive::Uuid(a) => fixed(out, primitive::UUID, a.value(i)),
        }
    }
}

/// The element range of row `i` of an array column of any list layout.
pub(super) enum Lists<'a> {
    Offsets32(&'a [i32]),
    Offsets64(&'a [i64]),
    Views32(&'a [i32], &'a [i32]),
    Views64(&'a [i64], &'a [i64]),
    Fixed(usize),
}

impl Lists<'_> {
    #[inline]
    pub(super) fn range(&self, i: usize) -> Range<usize> {
        match self {
            Lists::Offsets32(o) => o[i] as usize..o[i + 1] as usize,
            Lists::Offsets64(o) => o[i] as usize..o[i + 1] as usize,
            Lists::Views32(o, s) => o[i] as usize..(o[i] + s[i]) as usize,
            Lists::Views64(o, s) => o[i] as usize..(o[i] + s[i]) as usize,
            Lists::Fixed(n) => i * n..(i + 1) * n,
        }
    }
}

/// A `typed_value` column, resolved.
pub(super) enum Typed<'a> {
    Primitive(Primitive<'a>),
    /// The shredded fields, sorted by name (as an object's fields are stored).
    Object(Vec<ObjectField<'a>>),
    Array(Lists<'a>, Box<GroupPlan<'a>>),
}

/// A shredded field of an object.
pub(super) struct ObjectField<'a> {
    pub(super) name: &'a str,
    /// The name as a JSON object key with its colon (`"name":`), for writing JSON.
    pub(super) json_key: Vec<u8>,
    /// Where the writer keeps the id of `name` in a row's metadata.
    slot: usize,
    /// The rows where the field has a value: its group valid (a null group: the field is
    /// missing, for files whose groups are optional), and a value in `value` or in
    /// `typed_value` (None: every row). Computed once per batch from the null buffers, so
    /// that the walks skip a missing field (most of them, in files that shred sparse
    /// fields) with one bit test.
    present: Option<BooleanBuffer>,
    pub(super) group: GroupPlan<'a>,
}

impl ObjectField<'_> {
    /// True when the field has a value at row `i`.
    #[inline]
    pub(super) fn is_present(&self, i: usize) -> bool {
        self.present.as_ref().is_none_or(|p| p.value(i))
    }
}

/// The rows where the field group `group` is valid and holds a value in `value` or in
/// `typed_value`, None when that is every row.
fn present_rows(group: &StructArray) -> Option<BooleanBuffer> {
    // the rows where a column of the group holds a value: None for every row, unset bits for
    // a column the group does not have
    let holds = |name: &str| match group.column_by_name(name) {
        Some(column) => column.nulls().map(|n| n.inner().clone()),
        None => Some(BooleanBuffer::new_unset(group.len())),
    };
    let held = match (holds("value"), holds("typed_value")) {
        (None, _) | (_, None) => None,
        (Some(value), Some(typed)) => Some(&value | &typed),
    };
    match (held, group.nulls()) {
        (held, None) => held,
        (None, Some(valid)) => Some(valid.inner().clone()),
        (Some(held), Some(valid)) => Some(&held & valid.inner()),
    }
}

/// The residual `value` of a partially shredded object: an object (the spec allows nothing else).
pub(super) fn residual_object<'k>(
    meta: Metadata<'k>,
    residual: &'k [u8],
) -> Result<ObjectView<'k>> {
    let obj = residual_view(meta, residual)?;
    obj.check_field_sizes().map_err(codec_err)?;
    Ok(obj)
}

/// [`residual_object`] without the check that its fields fit in its data together: for a
/// caller that sizes every field itself as it reads them ([`FieldSizes`]).
fn residual_view<'k>(meta: Metadata<'k>, residual: &'k [u8]) -> Result<ObjectView<'k>> {
    match Variant::with_metadata(meta, residual)
        .get()
        .map_err(codec_err)?
    {
        Value::Object(obj) => Ok(obj),
        _ => Err(invalid_variant(
            "invalid shredded variant: typed_value is an object but value is not an object",
        )),
    }
}

/// The bytes an object's fields have left of its data, counted down field by field: fields
/// sharing bytes run out, so that a walk over every field costs at most the object's size
/// (what [`ObjectView::check_field_sizes`] checks in a pass of its own).
pub(super) struct FieldSizes {
    data: usize,
    left: usize,
}

impl FieldSizes {
    /// For an object of `data` bytes of field data.
    pub(super) fn new(data: usize) -> Self {
        FieldSizes { data, left: data }
    }

    /// The bytes left for the fields not yet counted.
    #[inline]
    pub(super) fn left(&self) -> usize {
        self.left
    }

    /// Counts field `j`, of `size` bytes: an error when the fields so far need more than the
    /// data holds.
    #[inline]
    pub(super) fn take(&mut self, j: usize, size: usize) -> Result<(), VariantError> {
        self.left = self.left.checked_sub(size).ok_or_else(|| {
            VariantError::Malformed(format!(
                "the fields of an object overlap: field {j} ends past {} bytes of field data",
                self.data
            ))
        })?;
        Ok(())
    }
}

/// True when `key` is one of the shredded `fields` (sorted by name): a residual field of that
/// name (invalid input) is ignored, the shredded column wins.
pub(super) fn is_shredded(fields: &[ObjectField<'_>], key: &[u8]) -> bool {
    fields
        .binary_search_by(|f| f.name.as_bytes().cmp(key))
        .is_ok()
}

/// The metadata of row `i` of a variant column, None where the row is SQL NULL.
#[inline]
pub(super) fn row_metadata<'a>(
    array: &StructArray,
    metadata: &Bytes<'a>,
    i: usize,
) -> Option<&'a [u8]> {
    if array.is_valid(i) {
        metadata.get(i)
    } else {
        None
    }
}

/// A shredded variant column resolved once per batch, for the loops that read it row by row
/// without reassembling it: its shredding schema checked, its metadata, and the plan of its
/// top-level group.
pub(super) struct ShreddedRows<'a> {
    array: &'a StructArray,
    metadata: Bytes<'a>,
    pub(super) plan: GroupPlan<'a>,
}

impl<'a> ShreddedRows<'a> {
    pub(super) fn new(array: &'a StructArray) -> Result<Self> {
        super::check_group(array.fields(), "")?;
        let Some(metadata_column) = array.column_by_name("metadata") else {
            return Err(invalid_variant("variant column has no metadata"));
        };
        let metadata = Bytes::new(metadata_column)?;
        let plan = GroupPlan::new(array, 0, &mut 0)?;
        Ok(ShreddedRows {
            array,
            metadata,
            plan,
        })
    }

    /// The metadata of row `i`, None where the row is SQL NULL.
    #[inline]
    pub(super) fn metadata(&self, i: usize) -> Option<&'a [u8]> {
        row_metadata(self.array, &self.metadata, i)
    }
}

/// What a row loop over a shredded column builds: the rows' bytes back to back, their offsets
/// and validity, with the check that one batch's output fits i32 offsets.
pub(super) struct RowBuffers {
    /// The bytes written so far; a row appends to it, then [`RowBuffers::end_row`].
    pub(super) values: Vec<u8>,
    offsets: Vec<i32>,
    valid: Vec<bool>,
    /// The batch's row count.
    rows: usize,
}

impl RowBuffers {
    /// Empty buffers for `rows` rows.
    pub(super) fn with_rows(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        RowBuffers {
            values: Vec::new(),
            offsets,
            valid: Vec::with_capacity(rows),
            rows,
        }
    }

    /// Ends the current row, `valid` or SQL NULL; an error naming `function` where the batch's
    /// output outgrows i32 offsets (2 GiB).
    #[inline]
    pub(super) fn end_row(&mut self, valid: bool, function: &str) -> Result<()> {
        let end = grown_offset(self.values.len(), 0, function)?;
        self.valid.push(valid);
        self.offsets.push(end);
        reserve_at_sample_rate(&mut self.values, self.valid.len(), self.rows);
        Ok(())
    }

    /// The offsets, the bytes and the nulls (None when no row is null).
    pub(super) fn finish(self) -> (OffsetBuffer<i32>, Vec<u8>, Option<NullBuffer>) {
        let nulls = NullBuffer::from(self.valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        (
            OffsetBuffer::new(ScalarBuffer::from(self.offsets)),
            self.values,
            nulls,
        )
    }
}

/// A `{value, typed_value}` group, resolved once per batch.
pub(super) struct GroupPlan<'a> {
    pub(super) value: Option<Bytes<'a>>,
    pub(super) typed: Option<(Validity<'a>, Typed<'a>)>,
}

/// Which rows of an array are valid, resolved once per batch (no dynamic call per row).
#[derive(Clone, Copy)]
pub(super) struct Validity<'a>(Option<&'a NullBuffer>);

impl<'a> Validity<'a> {
    pub(super) fn of(array: &'a dyn Array) -> Self {
        Validity(array.nulls().filter(|nulls| nulls.null_count() > 0))
    }

    #[inline]
    pub(super) fn is_valid(&self, i: usize) -> bool {
        self.0.is_none_or(|nulls| nulls.is_valid(i))
    }
}

impl<'a> GroupPlan<'a> {
    /// The plan of `group`; its object fields take slots from `slots` on. (Once per batch and
    /// group, so each level checks the stack: schemas nest up to `DEFAULT_MAX_DEPTH` levels.)
    #[recursive::recursive]
    pub(super) fn new(group: &'a StructArray, depth: usize, slots: &mut usize) -> Result<Self> {
        if depth > DEFAULT_MAX_DEPTH {
            return Err(codec_err(VariantError::DepthLimitExceeded(
                DEFAULT_MAX_DEPTH,
            )));
        }
        let value_column = group.column_by_name("value");
        let value = (value_column.map(Bytes::new).transpose()?)
            // a column without a value in this batch (usual for shredded fields) is not read
            // row by row
            .filter(|_| value_column.is_some_and(|c| c.null_count() < c.len()));
        let typed = match group.column_by_name("typed_value") {
            Some(t) => Some((Validity::of(t.as_ref()), Typed::new(t, depth, slots)?)),
            None => None,
        };
        Ok(GroupPlan { value, typed })
    }
}

impl<'a> Typed<'a> {
    fn new(array: &'a ArrayRef, depth: usize, slots: &mut usize) -> Result<Self> {
        if let Some(p) = Primitive::new(array)? {
            return Ok(Typed::Primitive(p));
        }
        let mut element = |values: &'a ArrayRef| -> Result<Box<GroupPlan<'a>>> {
            match values.as_struct_opt() {
                Some(s) => Ok(Box::new(GroupPlan::new(s, depth + 1, slots)?)),
                None => Err(invalid_variant(
                    "shredded array elements must be groups of value/typed_value",
                )),
            }
        };
        Ok(match array.data_type() {
            DataType::Struct(fields) => {
                let s = array.as_struct();
                let mut out = Vec::with_capacity(fields.len());
                for (field, column) in fields.iter().zip(s.columns()) {
                    let Some(group) = column.as_struct_opt() else {
                        return Err(invalid_variant(format!(
                            "shredded object field `{}` must be a group of value/typed_value",
                            field.name()
                        )));
                    };
                    let slot = *slots;
                    *slots += 1;
                    let mut json_key = Vec::with_capacity(field.name().len() + 3);
                    write_json_bytes(&mut json_key, field.name().as_bytes());
                    json_key.push(b':');
                    out.push(ObjectField {
                        name: field.name(),
                        json_key,
                        slot,
                        present: present_rows(group),
                        group: GroupPlan::new(group, depth + 1, slots)?,
                    });
                }
                out.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
                Typed::Object(out)
            }
            DataType::List(_) => {
                let l = array.as_list::<i32>();
                Typed::Array(Lists::Offsets32(l.value_offsets()), element(l.values())?)
            }
            DataType::LargeList(_) => {
                let l = array.as_list::<i64>();
                Typed::Array(Lists::Offsets64(l.value_offsets()), element(l.values())?)
            }
            DataType::ListView(_) => {
                let l = array.as_list_view::<i32>();
                Typed::Array(
                    Lists::Views32(l.value_offsets(), l.value_sizes()),
                    element(l.values())?,
                )
            }
            DataType::LargeListView(_) => {
                let l = array.as_list_view::<i64>();
                Typed::Array(
                    Lists::Views64(l.value_offsets(), l.value_sizes()),
                    element(l.values())?,
                )
            }
            DataType::FixedSizeList(_, n) => {
                let l = array.as_fixed_size_list();
                Typed::Array(Lists::Fixed(*n as usize), element(l.values())?)
            }
            other => {
                return Err(invalid_variant(format!(
                    "unsupported shredded variant type {other}"
                )));
            }
        })
    }
}

/// A shredded field name that the row's metadata does not have: the row cannot reuse it.
struct KeyNotInMetadata;

/// One object field being written: its key, its id in the row's metadata, its bytes in the
/// object's buffer.
type Entry<'k> = (&'k [u8], u32, Range<usize>);

/// Buffers reused across rows, one set per nesting depth.
#[derive(Default)]
struct Scratch<'k> {
    bytes: Vec<Vec<u8>>,
    entries: Vec<Vec<Entry<'k>>>,
    ranges: Vec<Vec<Range<usize>>>,
    ids: Vec<(u32, Range<usize>)>,
}

/// The ids of the shredded field names in the metadata of the rows written so far: rows
/// usually share a few metadata dictionaries, whose lookups are then done once.
struct FieldIds<'k> {
    /// `(metadata bytes, id by slot)`; ids are looked up when first needed.
    known: Vec<(&'k [u8], Vec<u32>)>,
    /// The entry of the current row.
    current: usize,
    slots: usize,
}

/// An id not looked up yet.
const UNKNOWN: u32 = u32::MAX;
/// A name the metadata does not have.
const ABSENT: u32 = u32::MAX - 1;
/// At most this many dictionaries are remembered (then the cache starts over).
const MAX_KNOWN: usize = 64;

impl<'k> FieldIds<'k> {
    /// Makes `metadata` the current row's.
    fn select(&mut self, metadata: &'k [u8]) {
        if let Some(i) = self
            .known
            .iter()
            .position(|(m, _)| m.len() == metadata.len() && *m == metadata)
        {
            self.current = i;
            return;
        }
        if self.known.len() == MAX_KNOWN {
            self.known.clear();
        }
        self.known.push((metadata, vec![UNKNOWN; self.slots]));
        self.current = self.known.len() - 1;
    }

    /// The id of `field`'s name in the current row's metadata.
    #[inline]
    fn id(&mut self, meta: Metadata<'k>, field: &ObjectField<'_>) -> Result<Option<u32>> {
        let ids = &mut self.known[self.current].1;
        let id = match ids[field.slot] {
            UNKNOWN => {
                let id = match meta.find(field.name).map_err(codec_err)? {
                    Some(id) => id as u32,
                    None => ABSENT,
                };
                ids[field.slot] = id;
                id
            }
            id => id,
        };
        Ok((id != ABSENT).then_some(id))
    }
}

/// Writes the values of one batch.
struct Writer<'k> {
    scratch: Scratch<'k>,
    ids: FieldIds<'k>,
}

enum Written {
    Value,
    Missing,
}

impl<'k> Writer<'k> {
    /// Appends the value of `group` at row `i` to `out` (nothing when it is missing).
    /// (The recursion checks the stack at the objects every few levels and at each array
    /// ([`Self::array`]), not at each field and primitive.)
    #[inline]
    fn group(
        &mut self,
        meta: Metadata<'k>,
        g: &'k GroupPlan<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<std::result::Result<Written, KeyNotInMetadata>> {
        let value = g.value.as_ref().and_then(|v| v.get(i));
        let typed = g.typed.as_ref().filter(|(t, _)| t.is_valid(i));
        let Some((_, typed)) = typed else {
            return Ok(Ok(match value {
                Some(v) => {
                    out.extend_from_slice(v);
                    Written::Value
                }
                None => Written::Missing,
            }));
        };
        match typed {
            Typed::Object(fields) => stack_checked_every_few_levels(depth, || {
                self.object(meta, fields, value, i, out, depth)
            }),
            _ if value.is_some() => Err(invalid_variant(
                "Invalid variant, conflicting value and typed_value",
            )),
            Typed::Primitive(p) => {
                p.write(i, out);
                Ok(Ok(Written::Value))
            }
            Typed::Array(lists, element) => self.array(meta, lists, element, i, out, depth),
        }
    }

    /// Appends the shredded array of row `i`.
    #[recursive::recursive]
    fn array(
        &mut self,
        meta: Metadata<'k>,
        lists: &Lists<'k>,
        element: &'k GroupPlan<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<std::result::Result<Written, KeyNotInMetadata>> {
        let mut base = self.take_bytes(depth);
        let mut ranges = std::mem::take(&mut self.scratch.ranges[depth]);
        ranges.clear();
        for j in lists.range(i) {
            let start = base.len();
            match self.group(meta, element, j, &mut base, depth + 1)? {
                Ok(Written::Value) => {}
                // a missing element reads as a variant null
                Ok(Written::Missing) => base.push(0),
                Err(e) => return Ok(Err(e)),
            }
            ranges.push(start..base.len());
        }
        write_array(out, &base, &ranges);
        self.scratch.bytes[depth] = base;
        self.scratch.ranges[depth] = ranges;
        Ok(Ok(Written::Value))
    }

    /// Appends the object of row `i`: its shredded fields and its residual's, in name order.
    fn object(
        &mut self,
        meta: Metadata<'k>,
        fields: &'k [ObjectField<'k>],
        residual: Option<&'k [u8]>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<std::result::Result<Written, KeyNotInMetadata>> {
        let mut base = self.take_bytes(depth);
        let mut entries = std::mem::take(&mut self.scratch.entries[depth]);
        entries.clear();
        for field in fields {
            if !field.is_present(i) {
                continue;
            }
            let start = base.len();
            match self.group(meta, &field.group, i, &mut base, depth + 1)? {
                Ok(Written::Value) => {}
                Ok(Written::Missing) => continue,
                Err(e) => return Ok(Err(e)),
            }
            let Some(id) = self.ids.id(meta, field)? else {
                return Ok(Err(KeyNotInMetadata));
            };
            entries.push((field.name.as_bytes(), id, start..base.len()));
        }
        let shredded = entries.len();
        // the residual's fields follow the shredded ones in `entries`, in name order unless the
        // residual's keys are out of order (an invalid value, whose fields are then sorted when
        // shredded ones are among them)
        let mut in_order = true;
        if let Some(residual) = residual {
            let mark = base.len();
            if !raw_residual_fields(meta, fields, residual, &mut base, &mut entries) {
                // what the byte-level reader cannot read, read with the checked views (which
                // give the precise error)
                base.truncate(mark);
                entries.truncate(shredded);
                in_order =
                    checked_residual_fields(meta, fields, residual, &mut base, &mut entries)?;
            }
        }
        let mut ids = std::mem::take(&mut self.scratch.ids);
        ids.clear();
        // (a residual alone keeps its stored order, as `to_json` writes it)
        if in_order || shredded == 0 {
            merge_entries(&entries, shredded, &mut ids);
        } else {
            // (stable: duplicate keys of invalid input keep one order)
            entries.sort_by(|a, b| a.0.cmp(b.0));
            ids.extend(entries.iter().map(|(_, id, range)| (*id, range.clone())));
        }
        write_object(out, &base, &ids);
        self.scratch.ids = ids;
        self.scratch.bytes[depth] = base;
        self.scratch.entries[depth] = entries;
        Ok(Ok(Written::Value))
    }

    /// The byte buffer of `depth`, emptied (the per-depth buffers grown to `depth`).
    fn take_bytes(&mut self, depth: usize) -> Vec<u8> {
        let s = &mut self.scratch;
        if s.bytes.len() <= depth {
            s.bytes.resize_with(depth + 1, Vec::new);
            s.entries.resize_with(depth + 1, Vec::new);
            s.ranges.resize_with(depth + 1, Vec::new);
        }
        let mut b = std::mem::take(&mut s.bytes[depth]);
        b.clear();
        b
    }
}

/// A cursor over the names of shredded `fields` (sorted by name), asked about residual keys in
/// increasing order.
struct ShreddedNames<'a, 'f> {
    fields: &'a [ObjectField<'f>],
    next: usize,
}

impl ShreddedNames<'_, '_> {
    /// True when `key` (greater than every key asked before) is a shredded field's name.
    #[inline]
    fn has(&mut self, key: &[u8]) -> bool {
        while self
            .fields
            .get(self.next)
            .is_some_and(|f| f.name.as_bytes() < key)
        {
            self.next += 1;
        }
        self.fields
            .get(self.next)
            .is_some_and(|f| f.name.as_bytes() == key)
    }
}

/// Appends the fields of the residual object `residual` that the shredded `fields` do not
/// override to `base` and `entries`, read byte by byte: false (with some perhaps appended) when
/// that reader cannot read them or their keys are not strictly increasing. Every field is sized
/// within what the earlier ones left of the object's data (see [`FieldSizes`]), overridden ones
/// too, as the checked reading does.
fn raw_residual_fields<'k>(
    meta: Metadata<'k>,
    fields: &[ObjectField<'_>],
    residual: &'k [u8],
    base: &mut Vec<u8>,
    entries: &mut Vec<Entry<'k>>,
) -> bool {
    if residual
        .first()
        .is_none_or(|h| h & 0x03 != basic_type::OBJECT)
    {
        return false;
    }
    let (Ok(children), Ok(keys)) = (
        RawLayout::read(residual, true).and_then(|layout| layout.children(residual)),
        RawKeys::new(meta.bytes()),
    ) else {
        return false;
    };
    let mut sizes = FieldSizes::new(children.data_len());
    let mut shredded = ShreddedNames { fields, next: 0 };
    let mut previous: Option<&[u8]> = None;
    for j in 0..children.len() {
        let Ok((id, key)) = children.id(j).and_then(|id| Ok((id, keys.key(id)?))) else {
            return false;
        };
        if previous.is_some_and(|p| p >= key) {
            return false;
        }
        previous = Some(key);
        let overridden = shredded.has(key);
        let Some(child) = children
            .child_within(j, sizes.left())
            .ok()
            .and_then(|child| Some(&child[..value_size(child).ok()?]))
        else {
            return false;
        };
        if sizes.take(j, child.len()).is_err() {
            return false;
        }
        if !overridden {
            let start = base.len();
            base.extend_from_slice(child);
            entries.push((key, id as u32, start..base.len()));
        }
    }
    true
}

/// [`raw_residual_fields`] with the checked views: true when the residual's keys increase (the
/// fields appended are then in name order).
fn checked_residual_fields<'k>(
    meta: Metadata<'k>,
    fields: &[ObjectField<'_>],
    residual: &'k [u8],
    base: &mut Vec<u8>,
    entries: &mut Vec<Entry<'k>>,
) -> Result<bool> {
    let obj = residual_view(meta, residual)?;
    let mut sizes = FieldSizes::new(obj.data_len());
    // while the residual's keys increase (as the spec requires), a cursor over the shredded
    // names finds the overridden ones
    let mut shredded = ShreddedNames { fields, next: 0 };
    let (mut in_order, mut previous) = (true, None);
    for j in 0..obj.len() {
        let key = obj.key_bytes(j).map_err(codec_err)?;
        in_order &= previous.is_none_or(|p| p < key);
        previous = Some(key);
        let overridden = if in_order {
            shredded.has(key)
        } else {
            is_shredded(fields, key)
        };
        // (an overridden field is sized too, as the reassembly of any reader checks it)
        let child = obj.value(j).map_err(codec_err)?;
        let bytes = child.exact_value_bytes().map_err(codec_err)?;
        sizes.take(j, bytes.len()).map_err(codec_err)?;
        if overridden {
            continue;
        }
        let start = base.len();
        base.extend_from_slice(bytes);
        entries.push((
            key,
            obj.field_id(j).map_err(codec_err)? as u32,
            start..base.len(),
        ));
    }
    Ok(in_order)
}

/// The ids and byte ranges of `entries`, two runs in name order (`..split`, `split..`), merged
/// into `ids` in name order (the first run first among equal names).
fn merge_entries(entries: &[Entry<'_>], split: usize, ids: &mut Vec<(u32, Range<usize>)>) {
    let id_range = |(_, id, range): &Entry<'_>| (*id, range.clone());
    let (first, second) = entries.split_at(split);
    // (usually one run is empty: an object without residual, or without shredded fields)
    if first.is_empty() || second.is_empty() {
        ids.extend(entries.iter().map(id_range));
        return;
    }
    let (mut a, mut b) = (0, 0);
    while a < first.len() && b < second.len() {
        if second[b].0 < first[a].0 {
            ids.push(id_range(&second[b]));
            b += 1;
        } else {
            ids.push(id_range(&first[a]));
            a += 1;
        }
    }
    ids.extend(first[a..].iter().chain(&second[b..]).map(id_range));
}

/// Reassembles `array` (a shredded variant column) into `Struct{metadata, value}` with each
/// row's own metadata (the column itself); None when some row's metadata lacks a shredded field
/// name.
pub(super) fn reassemble(array: &StructArray) -> Result<Option<StructArray>> {
    let Some(metadata_column) = array.column_by_name("metadata") else {
        return Err(invalid_variant("variant column has no metadata"));
    };
    let metadata = Bytes::new(metadata_column)?;
    let mut slots = 0;
    let plan = GroupPlan::new(array, 0, &mut slots)?;
    let mut writer = Writer {
        scratch: Scratch::default(),
        ids: FieldIds {
            known: vec![],
            current: 0,
            slots,
        },
    };
    let mut rows = RowBuffers::with_rows(array.len());
    for i in 0..array.len() {
        let m = row_metadata(array, &metadata, i);
        if let Some(m) = m {
            let meta = Metadata::try_new(m).map_err(codec_err)?;
            writer.ids.select(m);
            match writer.group(meta, &plan, i, &mut rows.values, 0)? {
                Ok(Written::Value) => {}
                // a missing top-level value reads as a variant null
                Ok(Written::Missing) => rows.values.push(0),
                Err(KeyNotInMetadata) => return Ok(None),
            }
        }
        rows.end_row(m.is_some(), "variant reassembly")?;
    }
    let (offsets, values, nulls) = rows.finish();
    let value = BinaryArray::try_new(offsets, values.into(), nulls.clone())?;
    let fields = Fields::from(vec![
        Field::new("metadata", metadata_column.data_type().clone(), true),
        Field::new("value", DataType::Binary, true),
    ]);
    Ok(Some(StructArray::try_new(
        fields,
        vec![Arc::clone(metadata_column), Arc::new(value)],
        nulls,
    )?))
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{BinaryArray, Int64Array};

    use super::*;
    use crate::codec::{JsonParser, SessionTimeZone, VariantBuilder, write_json};

    #[test]
    fn a_field_is_present_where_its_group_is_valid_and_holds_a_value() {
        // rows: a residual value only; a typed value only; neither; a typed value under a null
        // group (an optional group: the field is missing); both (conflicting, but present)
        let value = BinaryArray::from(vec![Some(&[0x0c, 1][..]), None, None, None, Some(&[0])]);
        let typed = Int64Array::from(vec![None, Some(2), None, Some(4), Some(5)]);
        let fields = Fields::from(vec![
            Field::new("value", DataType::Binary, true),
            Field::new("typed_value", DataType::Int64, true),
        ]);
        let columns: Vec<ArrayRef> = vec![Arc::new(value), Arc::new(typed)];
        let group_nulls = NullBuffer::from(vec![true, true, true, false, true]);
        let group = StructArray::new(fields.clone(), columns.clone(), Some(group_nulls));
        let present = |group: &StructArray| {
            let rows = present_rows(group);
            (0..group.len())
                .map(|i| rows.as_ref().is_none_or(|p| p.value(i)))
                .collect::<Vec<_>>()
        };
        assert_eq!(present(&group), [true, true, false, false, true]);
        // a slice keeps its rows' own bits
        assert_eq!(present(&group.slice(1, 3)), [true, false, false]);
        // without `value`: where `typed_value` is valid; a group always valid whose typed
        // column has no nulls: every row (None)
        let typed_only = StructArray::new(
            Fields::from(vec![fields[1].as_ref().clone()]),
            vec![Arc::clone(&columns[1])],
            None,
        );
        assert_eq!(present(&typed_only), [false, true, false, true, true]);
        let dense = StructArray::from(vec![(
            Arc::new(Field::new("typed_value", DataType::Int64, false)),
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        )]);
        assert!(present_rows(&dense).is_none());
    }

    /// `{metadata, typed_value: {a: {typed_value}}}` with `metadata` for every row and `a`'s
    /// values.
    fn shredded(metadata: &[u8], a: Vec<Option<i64>>) -> StructArray {
        let n = a.len();
        let a_group = StructArray::from(vec![(
            Arc::new(Field::new("typed_value", DataType::Int64, true)),
            Arc::new(Int64Array::from(a)) as ArrayRef,
        )]);
        let typed = StructArray::from(vec![(
            Arc::new(Field::new("a", a_group.data_type().clone(), false)),
            Arc::new(a_group) as ArrayRef,
        )]);
        StructArray::from(vec![
            (
                Arc::new(Field::new("metadata", DataType::Binary, false)),
                Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
                    metadata, n,
                ))) as ArrayRef,
            ),
            (
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                Arc::new(typed) as ArrayRef,
            ),
        ])
    }

    fn json_rows(array: &StructArray) -> Vec<String> {
        let m = array.column_by_name("metadata").unwrap().as_binary::<i32>();
        let v = array.column_by_name("value").unwrap().as_binary::<i32>();
        (0..array.len())
            .map(|i| {
                let mut out = vec![];
                let variant = Variant::try_new(m.value(i), v.value(i)).unwrap();
                write_json(&mut out, variant, &SessionTimeZone::utc()).unwrap();
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    /// With the names in the rows' metadata, the values are written against it and the
    /// metadata column is the input's.
    #[test]
    fn values_reuse_the_rows_metadata() {
        let mut b = VariantBuilder::new();
        JsonParser::new().parse(r#"{"a": 0}"#, &mut b).unwrap();
        let input = shredded(b.metadata(), vec![Some(5), None]);
        let out = reassemble(&input).unwrap().unwrap();
        assert_eq!(json_rows(&out), [r#"{"a":5}"#, "{}"]);
        assert_eq!(
            out.column_by_name("metadata").unwrap().to_data(),
            input.column_by_name("metadata").unwrap().to_data()
        );
    }

    /// Residual fields are copied in name order beside the shredded `b`, which overrides a
    /// residual `b`; fields that share bytes, or point past the data, are refused, the
    /// overridden one too (copying fields that share bytes could make the output exponential).
    #[test]
    fn residual_fields_are_merged_and_sized() {
        use super::super::json::tests::{column, object};
        let (a, b, c) = (0, 1, 2);
        let input = column(
            vec![object(&[(c, 1), (a, 2)]), object(&[(a, 2), (b, 9)])],
            vec![Some(5), None],
        );
        let out = reassemble(&input).unwrap().unwrap();
        assert_eq!(json_rows(&out), [r#"{"a":2,"b":5,"c":1}"#, r#"{"a":2}"#]);
        // a residual alone, out of order, keeps its stored order (as `to_json` writes it)
        let alone = column(vec![object(&[(c, 1), (a, 2)])], vec![None]);
        let out = reassemble(&alone).unwrap().unwrap();
        assert_eq!(json_rows(&out), [r#"{"c":1,"a":2}"#]);
        for residual in [
            // `a` and `c` both at offset 0 of a two-byte data region
            vec![0x02, 2, 0, 2, 0, 0, 2, 0x0C, 1],
            // `b` (overridden) shares `a`'s bytes
            vec![0x02, 2, 0, 1, 0, 0, 2, 0x0C, 1],
            // `b` (overridden) points past the data
            vec![0x02, 2, 0, 1, 0, 9, 2, 0x0C, 1],
        ] {
            let err = reassemble(&column(vec![residual.clone()], vec![Some(5)])).unwrap_err();
            assert!(
                err.to_string().contains("malformed variant"),
                "{residual:?}: {err}"
            );
        }
    }

    /// A shredded name missing from a row's metadata (an invalid file): no reuse here, and
    /// `unshred` rebuilds the batch with dictionaries of its own.
    #[test]
    fn names_missing_from_the_metadata_rebuild_the_batch() {
        let input = shredded(crate::codec::EMPTY_METADATA, vec![Some(5), None]);
        assert!(reassemble(&input).unwrap().is_none());
        let out = super::super::unshred(&input).unwrap();
        assert_eq!(json_rows(&out), [r#"{"a":5}"#, "{}"]);
    }
}
