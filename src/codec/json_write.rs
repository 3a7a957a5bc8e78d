//! Variant to JSON text with Spark's formatting.
use super::bytes::{push_framed, push_short};
use super::error::{Result, VariantError};
use super::format::{
    SessionTimeZone, is_plain_ascii, write_base64, write_date, write_decimal, write_i64,
    write_java_double, write_java_float, write_json_bytes, write_json_string, write_time_micros,
    write_timestamp, write_uuid,
};
use super::raw::{RawKeys, RawLayout, Unreadable, raw_int, raw_uint};
use super::validate::DEFAULT_MAX_DEPTH;
use super::value::{ArrayView, ObjectView, Value, Variant, decimal_fits, value_size};
use super::value::{basic_type, primitive};

/// Appends the JSON text of `v` to `out`: keys in stored order, no whitespace, decimals without
/// trailing zeros, doubles as Java prints them, NaN/Infinity quoted, binary as padded base64,
/// dates/times/uuids quoted, timestamps in `tz` with a `+HH:MM` offset.
///
/// On error `out` may hold a partial rendering; callers truncate it.
pub fn write_json(out: &mut Vec<u8>, v: Variant<'_>, tz: &SessionTimeZone) -> Result<()> {
    write_value(out, v, tz, 0)
}

/// Renders many rows, always as UTF-8 text: each row is written by a byte-level writer (keys
/// checked for UTF-8 once per distinct metadata, values decoded straight from their header
/// bytes); a row it cannot read is rendered again by [`write_json`], which gives the precise
/// error.
#[derive(Debug, Default)]
pub struct JsonRowWriter {
    /// The metadata whose keys were last checked for UTF-8.
    checked_metadata: Vec<u8>,
}

impl JsonRowWriter {
    /// Appends the JSON text of the variant `(metadata, value)` to `out`, exactly as [`write_json`].
    pub fn write(
        &mut self,
        out: &mut Vec<u8>,
        metadata: &[u8],
        value: &[u8],
        tz: &SessionTimeZone,
    ) -> Result<()> {
        match self.row_keys(metadata) {
            Ok(keys) => write_in_row(out, &keys, value, tz),
            Err(Unreadable) => write_json(out, Variant::try_new(metadata, value)?, tz),
        }
    }

    /// The keys of `metadata`, read and checked once for all the values of a row written with
    /// [`write_in_row`] (a shredded row's residual values share their row's metadata).
    pub(crate) fn row_keys<'a>(
        &mut self,
        metadata: &'a [u8],
    ) -> std::result::Result<KeyText<'a>, Unreadable> {
        let keys = RawKeys::new(metadata)?;
        // Keys that are all plain ASCII (one pass over the dictionary) need neither the UTF-8
        // check nor escaping: each is written as quote, bytes, quote.
        let plain = is_plain_ascii(keys.strings()?);
        if !plain && self.checked_metadata != metadata {
            self.checked_metadata.clear();
            keys.check_utf8()?;
            self.checked_metadata.extend_from_slice(metadata);
        }
        Ok(KeyText { keys, plain })
    }
}

/// Appends the JSON text of `value`, of the row whose keys are `keys`, exactly as [`write_json`]:
/// by the byte-level writer, or where it cannot read the value, by [`write_json`].
pub(crate) fn write_in_row(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
) -> Result<()> {
    let start = out.len();
    if write_raw_value(out, keys, value, tz, 0).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    write_json(out, Variant::try_new(keys.keys.bytes, value)?, tz)
}

/// A dictionary whose keys are known to be UTF-8, and whether they are all plain ASCII.
#[derive(Clone, Copy)]
pub(crate) struct KeyText<'a> {
    pub(crate) keys: RawKeys<'a>,
    plain: bool,
}

impl KeyText<'_> {
    /// Writes key `id` as a JSON string followed by ':', after a ',' unless it is the `first`
    /// field.
    #[inline]
    pub(crate) fn write_field_name(
        &self,
        out: &mut Vec<u8>,
        id: usize,
        first: bool,
    ) -> std::result::Result<(), Unreadable> {
        // Only keys inside the region checked for plain ASCII / UTF-8 are written from here.
        let key = self.keys.checked_region_key(id)?;
        if self.plain {
            if first {
                push_framed(out, b"\"", key, b"\":");
            } else {
                push_framed(out, b",\"", key, b"\":");
            }
        } else {
            if !first {
                out.push(b',');
            }
            write_json_bytes(out, key);
            out.push(b':');
        }
        Ok(())
    }
}

/// Writes the value at `value[0]`, which lies within `value` (every byte it reads, children
/// included, is inside the slice, which may run on past the value's end, as an object field's
/// bytes do); returns its size, or Unreadable with part of it written. The keys of `keys` are
/// known to be UTF-8.
/// Inlined into the container loops for the common kinds (short strings, integers, booleans,
/// null); containers and the other primitives are written by out-of-line functions.
#[inline(always)]
pub(crate) fn write_raw_value(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    let header = *value.first().ok_or(Unreadable)?;
    // One dispatch per value, with the integer widths and the literals each sharing a case: a
    // row's fields vary in kind, and fewer targets mean fewer mispredicted jumps.
    match RAW_KINDS[header as usize] {
        RawKind::ShortString => {
            let len = (header >> 2) as usize;
            let text = value.get(1..1 + len).ok_or(Unreadable)?;
            write_raw_text(out, text)?;
            Ok(1 + len)
        }
        RawKind::Object if depth.is_multiple_of(STACK_CHECK_LEVELS) => {
            write_raw_object_on_ample_stack(out, keys, value, tz, depth)
        }
        RawKind::Object => write_raw_object(out, keys, value, tz, depth),
        RawKind::Array if depth.is_multiple_of(STACK_CHECK_LEVELS) => {
            write_raw_array_on_ample_stack(out, keys, value, tz, depth)
        }
        RawKind::Array => write_raw_array(out, keys, value, tz, depth),
        RawKind::Literal => {
            push_short(out, LITERALS[usize::from(header >> 2)]);
            Ok(1)
        }
        RawKind::Int => {
            let id = header >> 2;
            write_i64(out, raw_int(value, id)?);
            Ok(1 + (1 << (id - primitive::INT8)))
        }
        RawKind::Other => write_raw_primitive(out, keys, value, tz, depth),
    }
}

/// How the row writer handles a value, by its header byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RawKind {
    ShortString,
    Object,
    Array,
    /// null, true, false: written from [`LITERALS`].
    Literal,
    /// INT8, INT16, INT32, INT64.
    Int,
    /// Every other primitive (and unknown type ids, which the checked decoder reports).
    Other,
}

/// [`RawKind`] of every header byte.
static RAW_KINDS: [RawKind; 256] = {
    let mut kinds = [RawKind::Other; 256];
    let mut header = 0;
    while header < 256 {
        let id = (header >> 2) as u8;
        kinds[header] = match (header & 0x03) as u8 {
            basic_type::SHORT_STRING => RawKind::ShortString,
            basic_type::OBJECT => RawKind::Object,
            basic_type::ARRAY => RawKind::Array,
            _ if id <= primitive::FALSE => RawKind::Literal,
            _ if id <= primitive::INT64 => RawKind::Int,
            _ => RawKind::Other,
        };
        header += 1;
    }
    kinds
};

/// The JSON of the primitives null, true and false, by type id.
const LITERALS: [&[u8]; 3] = [b"null", b"true", b"false"];

/// How many nesting levels the container writers descend between checks for stack space (a
/// check per level costs more than the small frames it guards).
const STACK_CHECK_LEVELS: usize = 8;

/// [`write_raw_object`] after making sure the stack has room for [`STACK_CHECK_LEVELS`] more
/// levels (growing it on the heap when it runs low).
#[recursive::recursive]
fn write_raw_object_on_ample_stack(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    write_raw_object(out, keys, value, tz, depth)
}

/// [`write_raw_array`] after making sure the stack has room, as above.
#[recursive::recursive]
fn write_raw_array_on_ample_stack(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    write_raw_array(out, keys, value, tz, depth)
}

/// Writes the primitives other than integers, booleans and null: strings, doubles and decimals
/// from their bytes, the rarer types through the checked decoder. Returns the value's size.
#[inline(never)]
fn write_raw_primitive(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    let header = *value.first().ok_or(Unreadable)?;
    let fixed = |n: usize| value.get(1..1 + n).ok_or(Unreadable);
    match header >> 2 {
        primitive::STRING => {
            let len = raw_uint(value, 1, 4)?;
            let text = value.get(5..5 + len).ok_or(Unreadable)?;
            write_raw_text(out, text)?;
            Ok(5 + len)
        }
        primitive::DOUBLE => {
            let d = f64::from_le_bytes(fixed(8)?.try_into().expect("8"));
            write_double(out, d);
            Ok(9)
        }
        primitive::DECIMAL4 | primitive::DECIMAL8 | primitive::DECIMAL16 => {
            let width = match header >> 2 {
                primitive::DECIMAL4 => 4,
                primitive::DECIMAL8 => 8,
                _ => 16,
            };
            let bytes = fixed(1 + width)?;
            let scale = bytes[0];
            let mut unscaled = [0u8; 16];
            unscaled[..width].copy_from_slice(&bytes[1..]);
            // Sign-extend the little-endian two's complement value to 16 bytes.
            if bytes[width] & 0x80 != 0 {
                unscaled[width..].fill(0xFF);
            }
            let unscaled = i128::from_le_bytes(unscaled);
            if !decimal_fits(width, unscaled, scale) {
                // The checked decoder reports it.
                return Err(Unreadable);
            }
            write_decimal(out, unscaled, scale);
            Ok(2 + width)
        }
        _ => {
            let v = Variant::try_new(keys.keys.bytes, value).map_err(|_| Unreadable)?;
            write_value(out, v, tz, depth).map_err(|_| Unreadable)?;
            value_size(value).map_err(|_| Unreadable)
        }
    }
}

/// Writes a string value: plain ASCII straight, anything else checked for UTF-8 and escaped.
#[inline(always)]
fn write_raw_text(out: &mut Vec<u8>, text: &[u8]) -> std::result::Result<(), Unreadable> {
    if is_plain_ascii(text) {
        push_framed(out, b"\"", text, b"\"");
        Ok(())
    } else {
        write_escaped_text(out, text)
    }
}

/// [`write_raw_text`] for text that needs escaping or is not ASCII.
#[inline(never)]
fn write_escaped_text(out: &mut Vec<u8>, text: &[u8]) -> std::result::Result<(), Unreadable> {
    write_json_string(out, std::str::from_utf8(text).map_err(|_| Unreadable)?);
    Ok(())
}

/// Writes an object; called directly only between stack checks (see [`write_raw_value`]).
///
/// Measured and dropped: keeping the output's length and capacity in locals while the fields
/// are written (a raw-pointer cursor, synced around calls) was 6% slower on the to_json bench.
#[inline(never)]
fn write_raw_object(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    if depth >= DEFAULT_MAX_DEPTH {
        return Err(Unreadable);
    }
    let layout = RawLayout::read(value, true)?;
    let children = layout.children(value)?;
    out.push(b'{');
    // The fields' values may lie in any order, but together within the object's data: each is
    // read within the bytes the earlier ones left, so that values sharing bytes (several fields
    // at one offset) cannot make the walk longer than the input.
    let mut left = children.data_len();
    for i in 0..layout.num {
        keys.write_field_name(out, children.id(i)?, i == 0)?;
        let child = children.child_within(i, left)?;
        let size = write_raw_value(out, keys, child, tz, depth + 1)?;
        left = left.checked_sub(size).ok_or(Unreadable)?;
    }
    out.push(b'}');
    Ok(layout.data_start + children.data_len())
}

/// Writes an array; called directly only between stack checks (see [`write_raw_value`]).
#[inline(never)]
fn write_raw_array(
    out: &mut Vec<u8>,
    keys: &KeyText<'_>,
    value: &[u8],
    tz: &SessionTimeZone,
    depth: usize,
) -> std::result::Result<usize, Unreadable> {
    if depth >= DEFAULT_MAX_DEPTH {
        return Err(Unreadable);
    }
    let layout = RawLayout::read(value, false)?;
    let children = layout.children(value)?;
    out.push(b'[');
    for i in 0..layout.num {
        if i > 0 {
            out.push(b',');
        }
        write_raw_value(out, keys, children.element(i)?, tz, depth + 1)?;
    }
    out.push(b']');
    Ok(layout.data_start + children.data_len())
}

fn write_value(
    out: &mut Vec<u8>,
    v: Variant<'_>,
    tz: &SessionTimeZone,
    depth: usize,
) -> Result<()> {
    match v.get()? {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Boolean(true) => out.extend_from_slice(b"true"),
        Value::Boolean(false) => out.extend_from_slice(b"false"),
        Value::Int8(i) => write_i64(out, i as i64),
        Value::Int16(i) => write_i64(out, i as i64),
        Value::Int32(i) => write_i64(out, i as i64),
        Value::Int64(i) => write_i64(out, i),
        Value::Double(d) => write_double(out, d),
        Value::Float(f) if f.is_finite() => write_java_float(out, f),
        Value::Float(f) => quoted(out, |o| write_java_float(o, f)),
        Value::Decimal4(u, s) => write_decimal(out, u as i128, s),
        Value::Decimal8(u, s) => write_decimal(out, u as i128, s),
        Value::Decimal16(u, s) => write_decimal(out, u, s),
        Value::String(s) => write_json_string(out, s),
        Value::Binary(b) => {
            out.push(b'"');
            write_base64(out, b);
            out.push(b'"');
        }
        Value::Date(d) => quoted(out, |o| write_date(o, d)),
        Value::Timestamp(t) => quoted(out, |o| write_timestamp(o, t, 1_000_000, Some(tz))),
        Value::TimestampNtz(t) => quoted(out, |o| write_timestamp(o, t, 1_000_000, None)),
        Value::TimestampNanos(t) => quoted(out, |o| write_timestamp(o, t, 1_000_000_000, Some(tz))),
        Value::TimestampNtzNanos(t) => quoted(out, |o| write_timestamp(o, t, 1_000_000_000, None)),
        Value::Time(t) => quoted(out, |o| write_time_micros(o, t)),
        Value::Uuid(u) => quoted(out, |o| write_uuid(o, &u)),
        Value::Object(obj) => write_object(out, obj, tz, depth)?,
        Value::Array(arr) => write_array(out, arr, tz, depth)?,
    }
    Ok(())
}

/// Containers are where the recursion happens: only they grow the stack when it runs low.
#[recursive::recursive]
fn write_object(
    out: &mut Vec<u8>,
    obj: ObjectView<'_>,
    tz: &SessionTimeZone,
    depth: usize,
) -> Result<()> {
    if depth >= DEFAULT_MAX_DEPTH {
        return Err(VariantError::DepthLimitExceeded(DEFAULT_MAX_DEPTH));
    }
    out.push(b'{');
    for (i, field) in obj.iter().enumerate() {
        let (key, value) = field?;
        if i > 0 {
            out.push(b',');
        }
        write_json_string(out, key);
        out.push(b':');
        write_value(out, value, tz, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

#[recursive::recursive]
fn write_array(
    out: &mut Vec<u8>,
    arr: ArrayView<'_>,
    tz: &SessionTimeZone,
    depth: usize,
) -> Result<()> {
    if depth >= DEFAULT_MAX_DEPTH {
        return Err(VariantError::DepthLimitExceeded(DEFAULT_MAX_DEPTH));
    }
    out.push(b'[');
    for (i, e) in arr.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_value(out, e?, tz, depth + 1)?;
    }
    out.push(b']');
    Ok(())
}

/// A double as Java prints it; NaN and the infinities quoted (they are not JSON numbers).
fn write_double(out: &mut Vec<u8>, d: f64) {
    if d.is_finite() {
        write_java_double(out, d);
    } else {
        quoted(out, |o| write_java_double(o, d));
    }
}

#[inline]
fn quoted(out: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u8>)) {
    out.push(b'"');
    f(out);
    out.push(b'"');
}
