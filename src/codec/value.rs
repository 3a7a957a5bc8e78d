//! Zero-copy views over variant values.
use super::bytes::{read_array, read_uint, slice};
use super::error::{Result, VariantError, malformed};
use super::metadata::Metadata;

/// Basic type ids (the two low bits of the value header byte).
pub mod basic_type {
    /// A primitive value; the header's upper 6 bits are the primitive type id.
    pub const PRIMITIVE: u8 = 0;
    /// A string shorter than 64 bytes; the upper 6 bits are its length.
    pub const SHORT_STRING: u8 = 1;
    /// An object.
    pub const OBJECT: u8 = 2;
    /// An array.
    pub const ARRAY: u8 = 3;
}

/// Primitive type ids of the encoding spec.
pub mod primitive {
    #![allow(missing_docs)]
    pub const NULL: u8 = 0;
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const INT8: u8 = 3;
    pub const INT16: u8 = 4;
    pub const INT32: u8 = 5;
    pub const INT64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const DECIMAL4: u8 = 8;
    pub const DECIMAL8: u8 = 9;
    pub const DECIMAL16: u8 = 10;
    pub const DATE: u8 = 11;
    pub const TIMESTAMP: u8 = 12;
    pub const TIMESTAMP_NTZ: u8 = 13;
    pub const FLOAT: u8 = 14;
    pub const BINARY: u8 = 15;
    pub const STRING: u8 = 16;
    pub const TIME: u8 = 17;
    pub const TIMESTAMP_NANOS: u8 = 18;
    pub const TIMESTAMP_NTZ_NANOS: u8 = 19;
    pub const UUID: u8 = 20;
}

/// Size in bytes of the data following the header of a fixed-size primitive, or None for
/// variable-size (binary, string) and unknown ids.
#[inline]
pub(crate) fn fixed_primitive_size(type_id: u8) -> Option<usize> {
    use primitive::*;
    Some(match type_id {
        NULL | TRUE | FALSE => 0,
        INT8 => 1,
        INT16 => 2,
        INT32 | DATE | FLOAT => 4,
        INT64 | DOUBLE | TIMESTAMP | TIMESTAMP_NTZ | TIME | TIMESTAMP_NANOS
        | TIMESTAMP_NTZ_NANOS => 8,
        DECIMAL4 => 5,
        DECIMAL8 => 9,
        DECIMAL16 => 17,
        UUID => 16,
        _ => return None,
    })
}

/// Header layout of an object or array value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContainerLayout {
    /// Number of elements.
    pub num: usize,
    /// Bytes per field id (objects only; 0 for arrays).
    pub id_size: usize,
    /// Bytes per offset.
    pub offset_size: usize,
    /// Position of the first field id (objects) or offset (arrays).
    pub ids_start: usize,
    /// Position of the first offset.
    pub offsets_start: usize,
    /// Position of the first child value.
    pub data_start: usize,
    /// Position just past the last child value (from the last offset; may lie past the bytes
    /// of a corrupt value, which `child` and `size` check).
    pub data_end: usize,
}

impl ContainerLayout {
    /// Reads the layout of the object or array whose header byte is `value[0]`.
    #[inline]
    pub(crate) fn read(value: &[u8], is_object: bool) -> Result<Self> {
        let header = value[0] >> 2;
        let offset_size = (header & 0x03) as usize + 1;
        let (id_size, is_large) = if is_object {
            (((header >> 2) & 0x03) as usize + 1, header & 0x10 != 0)
        } else {
            (0, header & 0x04 != 0)
        };
        let count_size = if is_large { 4 } else { 1 };
        let num = read_uint(value, 1, count_size)? as usize;
        let ids_start = 1 + count_size;
        let offsets_start = num
            .checked_mul(id_size)
            .and_then(|n| n.checked_add(ids_start))
            .ok_or_else(|| VariantError::Malformed("container header overflows".into()))?;
        let data_start = num
            .checked_add(1)
            .and_then(|n| n.checked_mul(offset_size))
            .and_then(|n| n.checked_add(offsets_start))
            .filter(|&n| n <= value.len())
            .ok_or_else(|| {
                VariantError::Malformed(format!(
                    "container of {num} elements does not fit in {} bytes",
                    value.len()
                ))
            })?;
        let last = read_uint(value, offsets_start + num * offset_size, offset_size)? as usize;
        Ok(ContainerLayout {
            num,
            id_size,
            offset_size,
            ids_start,
            offsets_start,
            data_start,
            data_end: data_start + last,
        })
    }

    /// Offset `i` (0..=num), relative to `data_start`.
    #[inline]
    pub(crate) fn offset(&self, value: &[u8], i: usize) -> Result<usize> {
        Ok(read_uint(
            value,
            self.offsets_start + i * self.offset_size,
            self.offset_size,
        )? as usize)
    }

    /// Field id `i` (objects only).
    #[inline]
    pub(crate) fn field_id(&self, value: &[u8], i: usize) -> Result<usize> {
        Ok(read_uint(value, self.ids_start + i * self.id_size, self.id_size)? as usize)
    }

    /// The bytes from child `i`'s start to the end of the container's data.
    #[inline]
    pub(crate) fn child<'a>(&self, value: &'a [u8], i: usize) -> Result<&'a [u8]> {
        let end = self.data_end;
        let start = self.data_start + self.offset(value, i)?;
        if start >= end || end > value.len() {
            return malformed(format!("offset of element {i} is out of bounds"));
        }
        Ok(&value[start..end])
    }

    /// Array element `i`: its bytes from its offset to the next element's offset. Element
    /// offsets must increase, so that no two elements share bytes and a walk over every element
    /// costs at most the array's size (aliased elements could make it exponential).
    #[inline]
    pub(crate) fn element<'a>(&self, value: &'a [u8], i: usize) -> Result<&'a [u8]> {
        let start = self.data_start + self.offset(value, i)?;
        let end = self.data_start + self.offset(value, i + 1)?;
        if start >= end {
            return malformed(format!(
                "array element {i} overlaps the next one (offsets must increase)"
            ));
        }
        if end > value.len() {
            return malformed(format!("offset of element {i} is out of bounds"));
        }
        Ok(&value[start..end])
    }

    /// Checks that the object's field values, by their sizes, fit in its data together: with
    /// each field within the data, a walk over every field then costs at most the object's size,
    /// however the fields are laid out (several fields pointing at one value could make it
    /// exponential). [`crate::codec::validate`] checks exactly that no two fields share bytes.
    pub(crate) fn check_field_sizes(&self, value: &[u8]) -> Result<()> {
        let data = self.data_end - self.data_start;
        let mut total = 0usize;
        for i in 0..self.num {
            total += value_size(self.child(value, i)?)?;
            if total > data {
                return malformed(format!(
                    "the fields of an object overlap: field {i} ends past {data} bytes of field data"
                ));
            }
        }
        Ok(())
    }

    /// Total size of the container value in bytes.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.data_end
    }
}

/// Size in bytes of the value that starts at `value[0]` (header included).
pub fn value_size(value: &[u8]) -> Result<usize> {
    let Some(&header) = value.first() else {
        return malformed("empty value");
    };
    let size = match header & 0x03 {
        basic_type::PRIMITIVE => {
            let type_id = header >> 2;
            match fixed_primitive_size(type_id) {
                Some(n) => 1 + n,
                None if type_id == primitive::BINARY || type_id == primitive::STRING => {
                    5 + read_uint(value, 1, 4)? as usize
                }
                None => return Err(VariantError::UnknownPrimitiveType(type_id)),
            }
        }
        basic_type::SHORT_STRING => 1 + (header >> 2) as usize,
        basic_type::OBJECT => ContainerLayout::read(value, true)?.size(),
        _ => ContainerLayout::read(value, false)?.size(),
    };
    if size > value.len() {
        return malformed(format!(
            "value of {size} bytes does not fit in {} bytes",
            value.len()
        ));
    }
    Ok(size)
}

/// One decoded value: a primitive, or a view of an object or array.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// Variant null.
    Null,
    /// Boolean.
    Boolean(bool),
    /// 8-bit integer.
    Int8(i8),
    /// 16-bit integer.
    Int16(i16),
    /// 32-bit integer.
    Int32(i32),
    /// 64-bit integer.
    Int64(i64),
    /// IEEE double.
    Double(f64),
    /// Decimal with up to 9 digits: (unscaled, scale).
    Decimal4(i32, u8),
    /// Decimal with up to 18 digits: (unscaled, scale).
    Decimal8(i64, u8),
    /// Decimal with up to 38 digits: (unscaled, scale).
    Decimal16(i128, u8),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the epoch, UTC-adjusted.
    Timestamp(i64),
    /// Microseconds since the epoch, without time zone.
    TimestampNtz(i64),
    /// IEEE float.
    Float(f32),
    /// Bytes.
    Binary(&'a [u8]),
    /// UTF-8 text (short or long string).
    String(&'a str),
    /// Microseconds since midnight, without time zone.
    Time(i64),
    /// Nanoseconds since the epoch, UTC-adjusted.
    TimestampNanos(i64),
    /// Nanoseconds since the epoch, without time zone.
    TimestampNtzNanos(i64),
    /// UUID, 16 big-endian bytes.
    Uuid([u8; 16]),
    /// An object.
    Object(ObjectView<'a>),
    /// An array.
    Array(ArrayView<'a>),
}

/// A variant value together with its metadata; all accessors are bounds-checked.
#[derive(Debug, Clone, Copy)]
pub struct Variant<'a> {
    metadata: Metadata<'a>,
    value: &'a [u8],
}

impl<'a> Variant<'a> {
    /// A view over `metadata` and `value` bytes; checks the metadata header only.
    pub fn try_new(metadata: &'a [u8], value: &'a [u8]) -> Result<Self> {
        Ok(Variant {
            metadata: Metadata::try_new(metadata)?,
            value,
        })
    }

    /// A view over a value with already-read metadata.
    pub fn with_metadata(metadata: Metadata<'a>, value: &'a [u8]) -> Self {
        Variant { metadata, value }
    }

    /// The metadata.
    pub fn metadata(&self) -> Metadata<'a> {
        self.metadata
    }

    /// The value bytes, starting at this value's header (they may extend past its end).
    pub fn value_bytes(&self) -> &'a [u8] {
        self.value
    }

    /// The value bytes of exactly this value.
    pub fn exact_value_bytes(&self) -> Result<&'a [u8]> {
        Ok(&self.value[..value_size(self.value)?])
    }

    /// The basic type (see [`basic_type`]).
    pub fn basic_type(&self) -> Result<u8> {
        match self.value.first() {
            Some(h) => Ok(h & 0x03),
            None => malformed("empty value"),
        }
    }

    /// True when this is variant null.
    pub fn is_null(&self) -> Result<bool> {
        match self.value.first() {
            Some(&h) => Ok(h == 0),
            None => malformed("empty value"),
        }
    }

    /// The text of a string value (short or long), None for other types: what [`Variant::get`]
    /// gives as `Value::String`, without decoding a whole [`Value`].
    #[inline]
    pub fn as_string(&self) -> Result<Option<&'a str>> {
        let v = self.value;
        let Some(&header) = v.first() else {
            return malformed("empty value");
        };
        match header & 0x03 {
            basic_type::SHORT_STRING => Ok(Some(utf8(slice(v, 1, (header >> 2) as usize)?)?)),
            basic_type::PRIMITIVE if header >> 2 == primitive::STRING => {
                Ok(Some(utf8(long_bytes(v)?)?))
            }
            _ => Ok(None),
        }
    }

    /// Decodes the value.
    pub fn get(&self) -> Result<Value<'a>> {
        use primitive::*;
        let v = self.value;
        let Some(&header) = v.first() else {
            return malformed("empty value");
        };
        let type_info = header >> 2;
        Ok(match header & 0x03 {
            basic_type::SHORT_STRING => {
                let b = slice(v, 1, type_info as usize)?;
                Value::String(utf8(b)?)
            }
            basic_type::OBJECT => Value::Object(ObjectView::new(self.metadata, v)?),
            basic_type::ARRAY => Value::Array(ArrayView::new(self.metadata, v)?),
            _ => match type_info {
                NULL => Value::Null,
                TRUE => Value::Boolean(true),
                FALSE => Value::Boolean(false),
                INT8 => Value::Int8(read_array::<1>(v, 1)?[0] as i8),
                INT16 => Value::Int16(i16::from_le_bytes(read_array(v, 1)?)),
                INT32 => Value::Int32(i32::from_le_bytes(read_array(v, 1)?)),
                INT64 => Value::Int64(i64::from_le_bytes(read_array(v, 1)?)),
                DOUBLE => Value::Double(f64::from_le_bytes(read_array(v, 1)?)),
                DECIMAL4 => {
                    let unscaled = i32::from_le_bytes(read_array(v, 2)?);
                    Value::Decimal4(unscaled, decimal_scale(v, unscaled.into(), 4)?)
                }
                DECIMAL8 => {
                    let unscaled = i64::from_le_bytes(read_array(v, 2)?);
                    Value::Decimal8(unscaled, decimal_scale(v, unscaled.into(), 8)?)
                }
                DECIMAL16 => {
                    let unscaled = i128::from_le_bytes(read_array(v, 2)?);
                    Value::Decimal16(unscaled, decimal_scale(v, unscaled, 16)?)
                }
                DATE => Value::Date(i32::from_le_bytes(read_array(v, 1)?)),
                TIMESTAMP => Value::Timestamp(i64::from_le_bytes(read_array(v, 1)?)),
                TIMESTAMP_NTZ => Value::TimestampNtz(i64::from_le_bytes(read_array(v, 1)?)),
                FLOAT => Value::Float(f32::from_le_bytes(read_array(v, 1)?)),
                BINARY => Value::Binary(long_bytes(v)?),
                STRING => Value::String(utf8(long_bytes(v)?)?),
                TIME => Value::Time(time_of_day(i64::from_le_bytes(read_array(v, 1)?))?),
                TIMESTAMP_NANOS => Value::TimestampNanos(i64::from_le_bytes(read_array(v, 1)?)),
                TIMESTAMP_NTZ_NANOS => {
                    Value::TimestampNtzNanos(i64::from_le_bytes(read_array(v, 1)?))
                }
                UUID => Value::Uuid(read_array(v, 1)?),
                other => return Err(VariantError::UnknownPrimitiveType(other)),
            },
        })
    }
}

/// The scale of the decimal of `width` bytes (4, 8 or 16) in `v`, whose unscaled value is
/// `unscaled`: malformed when its digits or its scale exceed the width's precision (9, 18, 38),
/// as Spark's `checkDecimal` holds.
#[inline]
fn decimal_scale(v: &[u8], unscaled: i128, width: usize) -> Result<u8> {
    let scale = read_array::<1>(v, 1)?[0];
    if !decimal_fits(width, unscaled, scale) {
        let digits = decimal_digits(unscaled);
        let (max, _) = decimal_precision(width);
        return malformed(format!(
            "decimal{width} with {digits} digits and scale {scale} exceeds its precision {max}"
        ));
    }
    Ok(scale)
}

/// Whether `micros` since midnight is a time of one day (`[0, 86,400,000,000)`), as a variant
/// TIME must be (DuckDB refuses others; they would print as another time of day).
#[inline]
pub(crate) fn is_time_of_day(micros: i64) -> bool {
    (0..MICROS_PER_DAY).contains(&micros)
}

/// Microseconds in a day: the length of a TIME's range and the step between DATE days.
pub(crate) const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The microseconds since midnight of a TIME: malformed outside a day ([`is_time_of_day`]).
#[inline]
fn time_of_day(micros: i64) -> Result<i64> {
    if !is_time_of_day(micros) {
        return malformed(format!(
            "a time of {micros} microseconds after midnight is outside a day"
        ));
    }
    Ok(micros)
}

/// The most digits a decimal of `width` bytes holds (9, 18 or 38), and 10 to that power.
#[inline]
fn decimal_precision(width: usize) -> (u8, u128) {
    match width {
        4 => (9, 10u128.pow(9)),
        8 => (18, 10u128.pow(18)),
        _ => (38, 10u128.pow(38)),
    }
}

/// Whether a decimal of `width` bytes (4, 8 or 16) with this unscaled value and scale is within
/// the width's precision, in digits and in scale (the specification's decimal table; Spark
/// reads anything wider as a malformed variant).
#[inline]
pub(crate) fn decimal_fits(width: usize, unscaled: i128, scale: u8) -> bool {
    let (max, bound) = decimal_precision(width);
    scale <= max && unscaled.unsigned_abs() < bound
}

/// Number of decimal digits of `|v|` (1 for 0).
pub(crate) fn decimal_digits(v: i128) -> u32 {
    let u = v.unsigned_abs();
    match u64::try_from(u) {
        Ok(small) => small.checked_ilog10().map_or(1, |log| log + 1),
        Err(_) => u.ilog10() + 1,
    }
}

#[inline]
fn long_bytes(v: &[u8]) -> Result<&[u8]> {
    let len = read_uint(v, 1, 4)? as usize;
    slice(v, 5, len)
}

#[inline]
fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).or_else(|_| malformed("string is not valid UTF-8"))
}

/// A view over an object value.
#[derive(Debug, Clone, Copy)]
pub struct ObjectView<'a> {
    metadata: Metadata<'a>,
    value: &'a [u8],
    layout: ContainerLayout,
}

impl<'a> ObjectView<'a> {
    fn new(metadata: Metadata<'a>, value: &'a [u8]) -> Result<Self> {
        Ok(ObjectView {
            metadata,
            value,
            layout: ContainerLayout::read(value, true)?,
        })
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.layout.num
    }

    /// True when the object has no fields.
    pub fn is_empty(&self) -> bool {
        self.layout.num == 0
    }

    /// The dictionary id of field `i` (in stored order).
    pub fn field_id(&self, i: usize) -> Result<usize> {
        self.layout.field_id(self.value, i)
    }

    /// The key bytes of field `i` (in stored order), not checked for UTF-8.
    pub fn key_bytes(&self, i: usize) -> Result<&'a [u8]> {
        self.metadata.key_bytes(self.field_id(i)?)
    }

    /// The bytes of the object's value.
    pub fn value_bytes(&self) -> &'a [u8] {
        self.value
    }

    /// The dictionary the object's keys are ids in.
    pub fn metadata(&self) -> Metadata<'a> {
        self.metadata
    }

    /// The key of field `i` (in stored order).
    pub fn key(&self, i: usize) -> Result<&'a str> {
        self.metadata.key(self.field_id(i)?)
    }

    /// The value of field `i` (in stored order).
    pub fn value(&self, i: usize) -> Result<Variant<'a>> {
        Ok(Variant::with_metadata(
            self.metadata,
            self.layout.child(self.value, i)?,
        ))
    }

    /// The value of the field named `name`: a binary search over the sorted field ids, falling back
    /// to a linear scan for objects whose fields are not sorted (DuckDB writes such objects).
    pub fn get(&self, name: &str) -> Result<Option<Variant<'a>>> {
        let target = name.as_bytes();
        let n = self.layout.num;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.metadata.key_bytes(self.field_id(mid)?)?.cmp(target) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.value(mid).map(Some),
            }
        }
        if self.is_sorted_fast()? {
            Ok(None)
        } else {
            self.linear_find(target)
        }
    }

    /// Like [`ObjectView::is_sorted`], comparing ids when the dictionary is sorted (then id order
    /// is key order).
    fn is_sorted_fast(&self) -> Result<bool> {
        if !self.metadata.is_sorted() {
            return self.is_sorted();
        }
        let mut prev = None;
        for i in 0..self.layout.num {
            let id = self.field_id(i)?;
            if prev.is_some_and(|p| p >= id) {
                return Ok(false);
            }
            prev = Some(id);
        }
        Ok(true)
    }

    /// The value of the field with dictionary id `id`: a binary search over the field ids (sorted
    /// when the metadata is), falling back to a scan for objects whose fields are not sorted.
    pub fn get_by_id(&self, id: usize) -> Result<Option<Variant<'a>>> {
        let n = self.layout.num;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.field_id(mid)?.cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.value(mid).map(Some),
            }
        }
        if self.is_sorted_fast()? {
            return Ok(None);
        }
        for i in 0..n {
            if self.field_id(i)? == id {
                return self.value(i).map(Some);
            }
        }
        Ok(None)
    }

    fn linear_find(&self, target: &[u8]) -> Result<Option<Variant<'a>>> {
        for i in 0..self.layout.num {
            if self.metadata.key_bytes(self.field_id(i)?)? == target {
                return self.value(i).map(Some);
            }
        }
        Ok(None)
    }

    /// True when the fields are stored in strictly increasing key order, as the spec requires.
    pub fn is_sorted(&self) -> Result<bool> {
        let mut prev: Option<&[u8]> = None;
        for i in 0..self.layout.num {
            let key = self.metadata.key_bytes(self.field_id(i)?)?;
            if prev.is_some_and(|p| p >= key) {
                return Ok(false);
            }
            prev = Some(key);
        }
        Ok(true)
    }

    /// The length of the object's data: the bytes its field values lie in.
    pub fn data_len(&self) -> usize {
        self.layout.data_end - self.layout.data_start
    }

    /// Checks that the field values, by their sizes, fit in the object's data together, so that
    /// a walk over every field costs at most the object's size. [`ObjectView::iter`] checks this
    /// first; code that visits every field by index calls it before.
    pub fn check_field_sizes(&self) -> Result<()> {
        self.layout.check_field_sizes(self.value)
    }

    /// Iterates over `(key, value)` in stored order; the first item is an error when the fields
    /// overlap (see [`ObjectView::check_field_sizes`]).
    pub fn iter(&self) -> impl Iterator<Item = Result<(&'a str, Variant<'a>)>> + '_ {
        let overlap = self.check_field_sizes().err();
        let num = if overlap.is_some() {
            0
        } else {
            self.layout.num
        };
        overlap
            .map(Err)
            .into_iter()
            .chain((0..num).map(move |i| Ok((self.key(i)?, self.value(i)?))))
    }
}

/// A view over an array value.
#[derive(Debug, Clone, Copy)]
pub struct ArrayView<'a> {
    metadata: Metadata<'a>,
    value: &'a [u8],
    layout: ContainerLayout,
}

impl<'a> ArrayView<'a> {
    fn new(metadata: Metadata<'a>, value: &'a [u8]) -> Result<Self> {
        Ok(ArrayView {
            metadata,
            value,
            layout: ContainerLayout::read(value, false)?,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.num
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.layout.num == 0
    }

    /// Element `i`; `None` past the end.
    pub fn get(&self, i: usize) -> Result<Option<Variant<'a>>> {
        if i >= self.layout.num {
            return Ok(None);
        }
        self.element(i).map(Some)
    }

    fn element(&self, i: usize) -> Result<Variant<'a>> {
        Ok(Variant::with_metadata(
            self.metadata,
            self.layout.element(self.value, i)?,
        ))
    }

    /// Iterates over the elements (each read within its own offsets, so that none shares bytes
    /// with another).
    pub fn iter(&self) -> impl Iterator<Item = Result<Variant<'a>>> + '_ {
        (0..self.layout.num).map(move |i| self.element(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of 20 fields whose ids are in descending key order (as DuckDB may write):
    /// the binary search misses, and the lookup falls back to a linear scan.
    #[test]
    fn lookup_in_a_large_unsorted_object() {
        let keys: Vec<String> = (0..20).rev().map(|i| format!("k{i:02}")).collect();
        let mut metadata = vec![0x01, 20, 0];
        for i in 1..=20u8 {
            metadata.push(i * 3);
        }
        metadata.extend(keys.iter().flat_map(|k| k.bytes()));
        let mut value = vec![0x02, 20];
        value.extend(0..20u8); // field ids in dictionary order: k19, k18, ..., k00
        value.extend((0..=20u8).map(|i| i * 2)); // offsets
        for id in 0..20u8 {
            value.extend([primitive::INT8 << 2, 19 - id]); // "kNN" holds NN
        }
        crate::codec::validate(&metadata, &value).unwrap();
        let Value::Object(obj) = Variant::try_new(&metadata, &value).unwrap().get().unwrap() else {
            panic!("an object");
        };
        assert!(!obj.is_sorted().unwrap());
        for n in [0, 5, 13, 19] {
            let found = obj.get(&format!("k{n:02}")).unwrap().unwrap();
            assert!(matches!(found.get().unwrap(), Value::Int8(v) if v == n));
        }
        assert!(obj.get("k20").unwrap().is_none());
        assert!(obj.get("").unwrap().is_none());
    }

    /// `as_string` reads short and long strings as `get` does, None for other types, and the
    /// same errors for a string that overruns its bytes or is not UTF-8.
    #[test]
    fn as_string_reads_strings_only() {
        let metadata = [0x01, 0, 0]; // an empty dictionary
        let string = |value: &[u8]| {
            let v = Variant::try_new(&metadata, value).unwrap();
            v.as_string().map(|s| s.map(str::to_string))
        };
        // a short string "hi": basic type 1, length 2 in the upper bits
        assert_eq!(string(&[(2 << 2) | 1, b'h', b'i']).unwrap().unwrap(), "hi");
        // a long string "abc": primitive type 16, a 4-byte length
        let long = [primitive::STRING << 2, 3, 0, 0, 0, b'a', b'b', b'c'];
        assert_eq!(string(&long).unwrap().unwrap(), "abc");
        // int8 42 and an empty object are no strings
        assert_eq!(string(&[primitive::INT8 << 2, 42]).unwrap(), None);
        assert_eq!(string(&[0x02, 0, 0]).unwrap(), None);
        // a short string of 5 bytes with 2 there; a long one of 4 with 3; invalid UTF-8
        assert!(string(&[(5 << 2) | 1, b'h', b'i']).is_err());
        assert!(string(&[primitive::STRING << 2, 4, 0, 0, 0, b'a', b'b', b'c']).is_err());
        assert!(string(&[(1 << 2) | 1, 0xFF]).is_err());
        assert!(string(&[]).is_err());
    }
}
