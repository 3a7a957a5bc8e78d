//! Variant to JSON text with Spark's formatting.
use super::error::{Result, VariantError};
use super::format::{
    SessionTimeZone, write_base64, write_date, write_decimal, write_java_double, write_java_float,
    write_json_string, write_time_micros, write_timestamp, write_uuid,
};
use super::validate::DEFAULT_MAX_DEPTH;
use super::value::{ArrayView, ObjectView, Value, Variant};

/// Appends the JSON text of `v` to `out`: keys in stored order, no whitespace, decimals without
/// trailing zeros, doubles as Java prints them, NaN/Infinity quoted, binary as padded base64,
/// dates/times/uuids quoted, timestamps in `tz` with a `+HH:MM` offset.
///
/// On error `out` may hold a partial rendering; callers truncate it.
pub fn write_json(out: &mut Vec<u8>, v: Variant<'_>, tz: &SessionTimeZone) -> Result<()> {
    write_value(out, v, tz, 0)
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
        Value::Int8(i) => write_int(out, i as i64),
        Value::Int16(i) => write_int(out, i as i64),
        Value::Int32(i) => write_int(out, i as i64),
        Value::Int64(i) => write_int(out, i),
        Value::Double(d) => {
            if d.is_finite() {
                write_java_double(out, d);
            } else {
                out.push(b'"');
                write_java_double(out, d);
                out.push(b'"');
            }
        }
        Value::Float(f) => {
            if f.is_finite() {
                write_java_float(out, f);
            } else {
                out.push(b'"');
                write_java_float(out, f);
                out.push(b'"');
            }
        }
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
    for i in 0..obj.len() {
        if i > 0 {
            out.push(b',');
        }
        write_json_string(out, obj.key(i)?);
        out.push(b':');
        write_value(out, obj.value(i)?, tz, depth + 1)?;
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

#[inline]
fn write_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = itoa::Buffer::new();
    out.extend_from_slice(buf.format(v).as_bytes());
}

#[inline]
fn quoted(out: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u8>)) {
    out.push(b'"');
    f(out);
    out.push(b'"');
}
