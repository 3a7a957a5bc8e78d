//! Shared helpers of the codec tests: a plain model of variant values, encoders and decoders for
//! it on both sides (our codec and arrow-rs `parquet-variant`), a checker of the canonical form
//! our builder promises, a strict parser of the JSON text our writer emits, and the location of
//! the conformance files.
#![allow(dead_code)]

pub mod faults;
pub mod s3;
mod temp_path;

pub use temp_path::TempPath;

use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, NaiveTime, Timelike};
use datafusion_parquet_variant::codec::{self, Value, VariantBuilder};
use parquet_variant as pv;
use parquet_variant::VariantBuilderExt;

// ---------------------------------------------------------------------------------------------
// Value model
// ---------------------------------------------------------------------------------------------

/// An f64 compared by bits (so NaN == NaN and 0.0 != -0.0), printed as a float.
#[derive(Clone, Copy)]
pub struct F64(pub f64);
impl PartialEq for F64 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl fmt::Debug for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// An f32 compared by bits.
#[derive(Clone, Copy)]
pub struct F32(pub f32);
impl PartialEq for F32 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl fmt::Debug for F32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A variant value, independent of any encoding. Objects keep their fields in the order given
/// (for generated values: insertion order; for decoded values: stored order).
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Null,
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(F64),
    Float(F32),
    /// (unscaled, scale)
    D4(i32, u8),
    D8(i64, u8),
    D16(i128, u8),
    /// days since 1970-01-01
    Date(i32),
    /// micros since the epoch, UTC
    Ts(i64),
    /// micros since the epoch, no time zone
    TsNtz(i64),
    /// micros since midnight
    Time(i64),
    TsNanos(i64),
    TsNtzNanos(i64),
    Uuid([u8; 16]),
    Binary(Vec<u8>),
    Str(String),
    Obj(Vec<(String, V)>),
    Arr(Vec<V>),
}

impl V {
    /// The same value with every object's fields sorted by key bytes (the stored order the spec
    /// requires and our builder writes).
    pub fn canonical(&self) -> V {
        match self {
            V::Obj(fields) => {
                let mut f: Vec<(String, V)> = fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.canonical()))
                    .collect();
                f.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                V::Obj(f)
            }
            V::Arr(items) => V::Arr(items.iter().map(V::canonical).collect()),
            other => other.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Our codec
// ---------------------------------------------------------------------------------------------

/// Appends `v` to our builder.
pub fn build_ours(b: &mut VariantBuilder, v: &V) -> codec::Result<()> {
    match v {
        V::Null => b.null(),
        V::Bool(x) => b.boolean(*x),
        V::I8(x) => b.int8(*x),
        V::I16(x) => b.int16(*x),
        V::I32(x) => b.int32(*x),
        V::I64(x) => b.int64(*x),
        V::Double(x) => b.double(x.0),
        V::Float(x) => b.float(x.0),
        V::D4(u, s) => b.decimal4(*u, *s),
        V::D8(u, s) => b.decimal8(*u, *s),
        V::D16(u, s) => b.decimal16(*u, *s),
        V::Date(d) => b.date(*d),
        V::Ts(t) => b.timestamp_micros(*t),
        V::TsNtz(t) => b.timestamp_ntz_micros(*t),
        V::Time(t) => b.time_micros(*t),
        V::TsNanos(t) => b.timestamp_nanos(*t),
        V::TsNtzNanos(t) => b.timestamp_ntz_nanos(*t),
        V::Uuid(u) => b.uuid(*u),
        V::Binary(x) => b.binary(x),
        V::Str(s) => b.string(s),
        V::Obj(fields) => {
            b.begin_object();
            for (k, v) in fields {
                b.key(k);
                build_ours(b, v)?;
            }
            b.end_object()?;
        }
        V::Arr(items) => {
            b.begin_array();
            for v in items {
                build_ours(b, v)?;
            }
            b.end_array();
        }
    }
    Ok(())
}

/// Encodes `v` with a fresh builder of ours: (metadata, value).
pub fn encode_ours(v: &V) -> codec::Result<(Vec<u8>, Vec<u8>)> {
    let mut b = VariantBuilder::new();
    build_ours(&mut b, v)?;
    b.finish()?;
    Ok((b.metadata().to_vec(), b.value().to_vec()))
}

/// Decodes with our views (stored order).
pub fn decode_ours(v: codec::Variant<'_>) -> codec::Result<V> {
    Ok(match v.get()? {
        Value::Null => V::Null,
        Value::Boolean(b) => V::Bool(b),
        Value::Int8(x) => V::I8(x),
        Value::Int16(x) => V::I16(x),
        Value::Int32(x) => V::I32(x),
        Value::Int64(x) => V::I64(x),
        Value::Double(x) => V::Double(F64(x)),
        Value::Float(x) => V::Float(F32(x)),
        Value::Decimal4(u, s) => V::D4(u, s),
        Value::Decimal8(u, s) => V::D8(u, s),
        Value::Decimal16(u, s) => V::D16(u, s),
        Value::Date(d) => V::Date(d),
        Value::Timestamp(t) => V::Ts(t),
        Value::TimestampNtz(t) => V::TsNtz(t),
        Value::Binary(b) => V::Binary(b.to_vec()),
        Value::String(s) => V::Str(s.to_string()),
        Value::Time(t) => V::Time(t),
        Value::TimestampNanos(t) => V::TsNanos(t),
        Value::TimestampNtzNanos(t) => V::TsNtzNanos(t),
        Value::Uuid(u) => V::Uuid(u),
        Value::Object(o) => {
            let mut fields = Vec::with_capacity(o.len());
            for i in 0..o.len() {
                fields.push((o.key(i)?.to_string(), decode_ours(o.value(i)?)?));
            }
            V::Obj(fields)
        }
        Value::Array(a) => {
            let mut items = Vec::with_capacity(a.len());
            for e in a.iter() {
                items.push(decode_ours(e?)?);
            }
            V::Arr(items)
        }
    })
}

/// Decodes (metadata, value) bytes with our codec.
pub fn decode_ours_bytes(metadata: &[u8], value: &[u8]) -> codec::Result<V> {
    decode_ours(codec::Variant::try_new(metadata, value)?)
}

/// `write_json` into a fresh string.
pub fn to_json_ours(
    metadata: &[u8],
    value: &[u8],
    tz: &codec::SessionTimeZone,
) -> codec::Result<String> {
    let mut out = Vec::new();
    codec::write_json(&mut out, codec::Variant::try_new(metadata, value)?, tz)?;
    Ok(String::from_utf8(out).expect("write_json wrote invalid UTF-8"))
}

// ---------------------------------------------------------------------------------------------
// arrow-rs parquet-variant (feed it valid bytes only: its decoder panics on some corrupt input)
// ---------------------------------------------------------------------------------------------

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
}

/// The arrow-rs value of a primitive (panics on containers).
fn arrow_primitive(v: &V) -> pv::Variant<'static, '_> {
    match v {
        V::Null => pv::Variant::Null,
        V::Bool(x) => pv::Variant::from(*x),
        V::I8(x) => pv::Variant::Int8(*x),
        V::I16(x) => pv::Variant::Int16(*x),
        V::I32(x) => pv::Variant::Int32(*x),
        V::I64(x) => pv::Variant::Int64(*x),
        V::Double(x) => pv::Variant::Double(x.0),
        V::Float(x) => pv::Variant::Float(x.0),
        V::D4(u, s) => pv::Variant::Decimal4(pv::VariantDecimal4::try_new(*u, *s).unwrap()),
        V::D8(u, s) => pv::Variant::Decimal8(pv::VariantDecimal8::try_new(*u, *s).unwrap()),
        V::D16(u, s) => pv::Variant::Decimal16(pv::VariantDecimal16::try_new(*u, *s).unwrap()),
        V::Date(d) => pv::Variant::Date(epoch() + chrono::Duration::days(i64::from(*d))),
        V::Ts(t) => pv::Variant::TimestampMicros(DateTime::from_timestamp_micros(*t).unwrap()),
        V::TsNtz(t) => pv::Variant::TimestampNtzMicros(
            DateTime::from_timestamp_micros(*t).unwrap().naive_utc(),
        ),
        V::Time(t) => pv::Variant::Time(
            NaiveTime::from_num_seconds_from_midnight_opt(
                (t / 1_000_000) as u32,
                (t % 1_000_000) as u32 * 1000,
            )
            .unwrap(),
        ),
        V::TsNanos(t) => pv::Variant::TimestampNanos(DateTime::from_timestamp_nanos(*t)),
        V::TsNtzNanos(t) => {
            pv::Variant::TimestampNtzNanos(DateTime::from_timestamp_nanos(*t).naive_utc())
        }
        V::Uuid(u) => pv::Variant::Uuid(pv::Uuid::from_bytes(*u)),
        V::Binary(b) => pv::Variant::Binary(b),
        V::Str(s) => pv::Variant::from(s.as_str()),
        V::Obj(_) | V::Arr(_) => unreachable!("not a primitive"),
    }
}

/// Appends `v` to an arrow-rs builder.
pub fn build_arrow<B: VariantBuilderExt>(b: &mut B, v: &V) {
    match v {
        V::Obj(fields) => {
            let mut o = b.new_object();
            for (k, v) in fields {
                let mut field = pv::ObjectFieldBuilder::new(k, &mut o);
                build_arrow(&mut field, v);
            }
            o.finish();
        }
        V::Arr(items) => {
            let mut l = b.new_list();
            for v in items {
                build_arrow(&mut l, v);
            }
            l.finish();
        }
        // `append_null` of an object field builder skips the field: write variant null.
        other => b.append_value(arrow_primitive(other)),
    }
}

/// Encodes `v` with arrow-rs: (metadata, value).
pub fn encode_arrow(v: &V) -> (Vec<u8>, Vec<u8>) {
    let mut b = pv::VariantBuilder::new();
    build_arrow(&mut b, v);
    b.finish()
}

/// Decodes an arrow-rs variant into the model (stored order).
pub fn from_arrow(v: &pv::Variant<'_, '_>) -> V {
    match v {
        pv::Variant::Null => V::Null,
        pv::Variant::BooleanTrue => V::Bool(true),
        pv::Variant::BooleanFalse => V::Bool(false),
        pv::Variant::Int8(x) => V::I8(*x),
        pv::Variant::Int16(x) => V::I16(*x),
        pv::Variant::Int32(x) => V::I32(*x),
        pv::Variant::Int64(x) => V::I64(*x),
        pv::Variant::Double(x) => V::Double(F64(*x)),
        pv::Variant::Float(x) => V::Float(F32(*x)),
        pv::Variant::Decimal4(d) => V::D4(d.integer(), d.scale()),
        pv::Variant::Decimal8(d) => V::D8(d.integer(), d.scale()),
        pv::Variant::Decimal16(d) => V::D16(d.integer(), d.scale()),
        pv::Variant::Date(d) => V::Date((*d - epoch()).num_days() as i32),
        pv::Variant::TimestampMicros(t) => V::Ts(t.timestamp_micros()),
        pv::Variant::TimestampNtzMicros(t) => V::TsNtz(t.and_utc().timestamp_micros()),
        pv::Variant::TimestampNanos(t) => V::TsNanos(t.timestamp_nanos_opt().unwrap()),
        pv::Variant::TimestampNtzNanos(t) => {
            V::TsNtzNanos(t.and_utc().timestamp_nanos_opt().unwrap())
        }
        pv::Variant::Time(t) => V::Time(
            i64::from(t.num_seconds_from_midnight()) * 1_000_000 + i64::from(t.nanosecond() / 1000),
        ),
        pv::Variant::Uuid(u) => V::Uuid(*u.as_bytes()),
        pv::Variant::Binary(b) => V::Binary(b.to_vec()),
        pv::Variant::String(s) => V::Str(s.to_string()),
        pv::Variant::ShortString(s) => V::Str(s.as_str().to_string()),
        pv::Variant::Object(o) => V::Obj(
            o.iter()
                .map(|(k, v)| (k.to_string(), from_arrow(&v)))
                .collect(),
        ),
        pv::Variant::List(l) => V::Arr(l.iter().map(|v| from_arrow(&v)).collect()),
    }
}

/// Decodes (metadata, value) with arrow-rs (fully validating). Valid bytes only.
pub fn decode_arrow(metadata: &[u8], value: &[u8]) -> Result<V, String> {
    let v = pv::Variant::try_new(metadata, value).map_err(|e| e.to_string())?;
    Ok(from_arrow(&v))
}

// ---------------------------------------------------------------------------------------------
// Canonical form of our builder's output
// ---------------------------------------------------------------------------------------------

/// Bytes (1..=4) needed for an unsigned value.
pub fn width_for(max: usize) -> usize {
    match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

fn uint(b: &[u8], pos: usize, width: usize) -> usize {
    let mut v = 0usize;
    for i in 0..width {
        v |= (b[pos + i] as usize) << (8 * i);
    }
    v
}

/// Parsed metadata: (keys, header byte).
pub fn parse_metadata(m: &[u8]) -> (Vec<Vec<u8>>, u8) {
    let header = m[0];
    let w = ((header >> 6) & 3) as usize + 1;
    let n = uint(m, 1, w);
    let strings = 1 + (n + 2) * w;
    let mut keys = Vec::with_capacity(n);
    for i in 0..n {
        let s = uint(m, 1 + (i + 1) * w, w);
        let e = uint(m, 1 + (i + 2) * w, w);
        keys.push(m[strings + s..strings + e].to_vec());
    }
    (keys, header)
}

/// Checks what our builder promises beyond validity: a sorted unique dictionary with the sorted
/// flag and the smallest offset width; objects with fields sorted by key; `is_large` exactly when
/// more than 255 elements; offsets in the smallest width; field ids in a width that holds the
/// largest id of the object and no more than the dictionary needs; children laid out without
/// gaps or overlaps; strings under 64 bytes as short strings; no bytes after the value.
/// Returns a description of the first violation.
pub fn check_canonical(metadata: &[u8], value: &[u8]) -> Result<(), String> {
    let (keys, header) = parse_metadata(metadata);
    if header & 0x0F != 1 {
        return Err(format!("metadata version {}", header & 0x0F));
    }
    if header & 0x10 == 0 {
        return Err("sorted_strings flag not set".into());
    }
    if header & 0x20 != 0 {
        return Err("reserved metadata bit set".into());
    }
    let total: usize = keys.iter().map(Vec::len).sum();
    let w = ((header >> 6) & 3) as usize + 1;
    let want_w = width_for(total.max(keys.len()));
    if w != want_w {
        return Err(format!(
            "metadata offset width {w}, smallest is {want_w} ({} keys, {total} bytes)",
            keys.len()
        ));
    }
    let want_len = 1 + (keys.len() + 2) * w + total;
    if metadata.len() != want_len {
        return Err(format!(
            "metadata is {} bytes, expected {want_len}",
            metadata.len()
        ));
    }
    if let Some(i) = (1..keys.len()).find(|&i| keys[i - 1] >= keys[i]) {
        return Err(format!(
            "dictionary not sorted/unique at {i}: {:?} >= {:?}",
            String::from_utf8_lossy(&keys[i - 1]),
            String::from_utf8_lossy(&keys[i])
        ));
    }
    let size = check_value(&keys, value, "$")?;
    if size != value.len() {
        return Err(format!(
            "value is {} bytes but the top-level value ends at {size}",
            value.len()
        ));
    }
    Ok(())
}

/// Checks the value at the start of `v`; returns its size.
fn check_value(keys: &[Vec<u8>], v: &[u8], path: &str) -> Result<usize, String> {
    let header = v[0];
    match header & 3 {
        0 => {
            let t = header >> 2;
            let fixed = match t {
                0..=2 => 0,
                3 => 1,
                4 => 2,
                5 | 11 | 14 => 4,
                6 | 7 | 12 | 13 | 17..=19 => 8,
                8 => 5,
                9 => 9,
                10 => 17,
                20 => 16,
                15 | 16 => {
                    let len = uint(v, 1, 4);
                    if t == 16 && len < 64 {
                        return Err(format!("{path}: {len}-byte string not a short string"));
                    }
                    return Ok(5 + len);
                }
                _ => return Err(format!("{path}: primitive type {t}")),
            };
            Ok(1 + fixed)
        }
        1 => Ok(1 + (header >> 2) as usize),
        basic => {
            let is_object = basic == 2;
            let h = header >> 2;
            let off_w = (h & 3) as usize + 1;
            let (id_w, is_large) = if is_object {
                (((h >> 2) & 3) as usize + 1, h & 0x10 != 0)
            } else {
                (0, h & 0x04 != 0)
            };
            let reserved = if is_object { h & 0x20 } else { h & 0x38 };
            if reserved != 0 {
                return Err(format!("{path}: reserved header bits set"));
            }
            let count_w = if is_large { 4 } else { 1 };
            let n = uint(v, 1, count_w);
            if is_large != (n > 255) {
                return Err(format!("{path}: is_large={is_large} with {n} elements"));
            }
            let ids_start = 1 + count_w;
            let offs_start = ids_start + n * id_w;
            let data_start = offs_start + (n + 1) * off_w;
            let offsets: Vec<usize> = (0..=n)
                .map(|i| uint(v, offs_start + i * off_w, off_w))
                .collect();
            let data_size = offsets[n];
            if off_w != width_for(data_size) {
                return Err(format!(
                    "{path}: offset width {off_w} for {data_size} bytes of data"
                ));
            }
            let mut spans = Vec::with_capacity(n);
            for i in 0..n {
                let child_path = if is_object {
                    let id = uint(v, ids_start + i * id_w, id_w);
                    format!("{path}.{}", String::from_utf8_lossy(&keys[id]))
                } else {
                    format!("{path}[{i}]")
                };
                let size = check_value(keys, &v[data_start + offsets[i]..], &child_path)?;
                spans.push((offsets[i], offsets[i] + size));
            }
            spans.sort();
            let mut end = 0;
            for (s, e) in spans {
                if s != end {
                    return Err(format!("{path}: gap or overlap at data offset {s}"));
                }
                end = e;
            }
            if end != data_size {
                return Err(format!(
                    "{path}: children end at {end}, last offset is {data_size}"
                ));
            }
            if is_object {
                let ids: Vec<usize> = (0..n)
                    .map(|i| uint(v, ids_start + i * id_w, id_w))
                    .collect();
                if let Some(i) = (1..n).find(|&i| keys[ids[i - 1]] >= keys[ids[i]]) {
                    return Err(format!("{path}: field {i} out of key order"));
                }
                let max_id = ids.iter().copied().max().unwrap_or(0);
                let max_dict = width_for(keys.len().saturating_sub(1));
                if id_w < width_for(max_id) || id_w > max_dict {
                    return Err(format!(
                        "{path}: field id width {id_w}, largest id {max_id}, dictionary of {}",
                        keys.len()
                    ));
                }
            } else if offsets.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("{path}: array offsets not increasing"));
            }
            Ok(data_start + data_size)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A strict parser of the JSON text `write_json` produces
// ---------------------------------------------------------------------------------------------

/// JSON as written by `write_json`, numbers kept as their text.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// Parses JSON in the exact form Spark's `to_json` writes: no whitespace outside strings, only
/// the escapes Jackson emits (`\" \\ \b \f \n \r \t` and `\u00XX` with uppercase hex for other
/// control characters), everything else raw. Anything else is an error.
pub fn parse_strict_json(text: &str) -> Result<Json, String> {
    let b = text.as_bytes();
    let mut pos = 0;
    let v = strict_value(b, &mut pos)?;
    if pos != b.len() {
        return Err(format!("trailing content at {pos}"));
    }
    Ok(v)
}

fn strict_value(b: &[u8], pos: &mut usize) -> Result<Json, String> {
    let Some(&c) = b.get(*pos) else {
        return Err("unexpected end".into());
    };
    match c {
        b'n' | b't' | b'f' => {
            for (word, v) in [
                (&b"null"[..], Json::Null),
                (b"true", Json::Bool(true)),
                (b"false", Json::Bool(false)),
            ] {
                if b[*pos..].starts_with(word) {
                    *pos += word.len();
                    return Ok(v);
                }
            }
            Err(format!("bad literal at {pos}"))
        }
        b'"' => strict_string(b, pos).map(Json::Str),
        b'[' => {
            *pos += 1;
            let mut items = Vec::new();
            if b.get(*pos) == Some(&b']') {
                *pos += 1;
                return Ok(Json::Arr(items));
            }
            loop {
                items.push(strict_value(b, pos)?);
                match b.get(*pos) {
                    Some(b',') => *pos += 1,
                    Some(b']') => {
                        *pos += 1;
                        return Ok(Json::Arr(items));
                    }
                    _ => return Err(format!("expected , or ] at {pos}")),
                }
            }
        }
        b'{' => {
            *pos += 1;
            let mut fields = Vec::new();
            if b.get(*pos) == Some(&b'}') {
                *pos += 1;
                return Ok(Json::Obj(fields));
            }
            loop {
                if b.get(*pos) != Some(&b'"') {
                    return Err(format!("expected key at {pos}"));
                }
                let k = strict_string(b, pos)?;
                if b.get(*pos) != Some(&b':') {
                    return Err(format!("expected : at {pos}"));
                }
                *pos += 1;
                fields.push((k, strict_value(b, pos)?));
                match b.get(*pos) {
                    Some(b',') => *pos += 1,
                    Some(b'}') => {
                        *pos += 1;
                        return Ok(Json::Obj(fields));
                    }
                    _ => return Err(format!("expected , or }} at {pos}")),
                }
            }
        }
        b'-' | b'0'..=b'9' => {
            let start = *pos;
            while matches!(
                b.get(*pos),
                Some(b'-' | b'+' | b'.' | b'E' | b'e' | b'0'..=b'9')
            ) {
                *pos += 1;
            }
            let t = std::str::from_utf8(&b[start..*pos]).unwrap().to_string();
            if t.parse::<f64>().is_err() {
                return Err(format!("bad number {t:?}"));
            }
            Ok(Json::Num(t))
        }
        _ => Err(format!("unexpected byte {c:#x} at {pos}")),
    }
}

fn strict_string(b: &[u8], pos: &mut usize) -> Result<String, String> {
    *pos += 1;
    let mut out = Vec::new();
    loop {
        let Some(&c) = b.get(*pos) else {
            return Err("unterminated string".into());
        };
        *pos += 1;
        match c {
            b'"' => return String::from_utf8(out).map_err(|e| e.to_string()),
            b'\\' => {
                let e = *b.get(*pos).ok_or("bad escape")?;
                *pos += 1;
                match e {
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'u' => {
                        let hex = b.get(*pos..*pos + 4).ok_or("short \\u")?;
                        *pos += 4;
                        let ok = hex.starts_with(b"00")
                            && hex[2..]
                                .iter()
                                .all(|h| h.is_ascii_digit() || (b'A'..=b'F').contains(h));
                        let cp = u8::from_str_radix(std::str::from_utf8(&hex[2..]).unwrap(), 16)
                            .map_err(|e| e.to_string())?;
                        if !ok || cp >= 0x20 || [8, 9, 10, 12, 13].contains(&cp) {
                            return Err(format!(
                                "escape \\u{} is not what Jackson writes",
                                String::from_utf8_lossy(hex)
                            ));
                        }
                        out.push(cp);
                    }
                    _ => return Err(format!("escape \\{} is not what Jackson writes", e as char)),
                }
            }
            c if c < 0x20 => return Err(format!("raw control character {c:#x}")),
            c => out.push(c),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Conformance files
// ---------------------------------------------------------------------------------------------

/// `tests/data/parquet-testing-variant/<sub>`: the parquet-testing conformance files, kept in
/// the repository (see the README there). Panics when the folder is missing: a test that needs
/// data fails without it, it never skips.
pub fn conformance_dir(sub: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parquet-testing-variant")
        .join(sub);
    assert!(
        dir.is_dir(),
        "conformance files not found at {}",
        dir.display()
    );
    dir
}

/// Every `(name, metadata, value)` in the conformance `variant/` folder, sorted by name.
/// Panics if a `.metadata` has no `.value` or the reverse.
pub fn conformance_examples(dir: &Path) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut names = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if let Some(ext) = path.extension().and_then(|e| e.to_str())
            && (ext == "metadata" || ext == "value")
        {
            names.insert(path.file_stem().unwrap().to_str().unwrap().to_string());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let read = |ext: &str| {
                let p = dir.join(format!("{name}.{ext}"));
                std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            };
            let m = read("metadata");
            let v = read("value");
            (name, m, v)
        })
        .collect()
}

/// Splits a `*.variant.bin` file into metadata and value (the metadata's length follows from its
/// header, dictionary size and last offset).
pub fn split_variant_file(bytes: &[u8]) -> (&[u8], &[u8]) {
    let dict_len = codec::Metadata::try_new(bytes).unwrap().len();
    let offset_size = ((bytes[0] >> 6) & 0x03) as usize + 1;
    let last = 1 + (dict_len + 1) * offset_size;
    let last_offset = bytes[last..last + offset_size]
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize);
    bytes.split_at(1 + (dict_len + 2) * offset_size + last_offset)
}

/// The Parquet schema of the file at `path`, as the parquet crate prints it.
pub fn parquet_schema_text(path: &std::path::Path) -> String {
    use parquet::file::reader::FileReader;
    let reader =
        parquet::file::reader::SerializedFileReader::new(std::fs::File::open(path).unwrap())
            .unwrap();
    schema_text(reader.metadata().file_metadata().schema_descr())
}

/// A Parquet schema as the parquet crate prints it.
pub fn schema_text(schema: &parquet::schema::types::SchemaDescriptor) -> String {
    let mut out = Vec::new();
    parquet::schema::printer::print_schema(&mut out, schema.root_schema());
    String::from_utf8(out).unwrap()
}

/// Asserts that `text` (a printed Parquet schema) has each of `lines`, leading spaces aside.
pub fn assert_schema_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(
            text.lines().any(|l| l.trim() == *line),
            "missing `{line}` in\n{text}"
        );
    }
}

/// The batches of the Parquet file at `path` as the parquet crate's Arrow reader reads them: the
/// file's own layout (shredded columns with their `typed_value`), not a table's.
pub fn read_parquet_raw(path: &std::path::Path) -> Vec<datafusion::arrow::array::RecordBatch> {
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(path).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap()
    .map(|b| b.unwrap())
    .collect()
}

// ---------------------------------------------------------------------------------------------
// Generated values
// ---------------------------------------------------------------------------------------------

/// Values with the keys the test schemas shred (`a`, `b`, `c`, `o`), of varied types (so that some fit their
/// shredded type and some do not), nested objects and arrays.
pub fn value_strategy() -> impl proptest::strategy::Strategy<Value = V> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(V::Null),
        any::<bool>().prop_map(V::Bool),
        any::<i8>().prop_map(V::I8),
        any::<i32>().prop_map(V::I32),
        any::<i64>().prop_map(V::I64),
        (any::<i32>(), 0u8..4).prop_map(|(x, s)| V::D4(x % 1_000_000_000, s)),
        (any::<i64>(), 0u8..6).prop_map(|(x, s)| V::D8(x % 1_000_000_000_000_000_000, s)),
        any::<f64>().prop_map(|x| V::Double(F64(x))),
        any::<f32>().prop_map(|x| V::Float(F32(x))),
        "[a-z]{0,8}".prop_map(V::Str),
        // inside chrono's range (arrow-rs decodes into chrono types)
        (-90_000_000i32..90_000_000).prop_map(V::Date),
        (-6_000_000_000_000_000_000i64..6_000_000_000_000_000_000).prop_map(V::Ts),
        (-6_000_000_000_000_000_000i64..6_000_000_000_000_000_000).prop_map(V::TsNtz),
        (any::<i64>(), 0u8..3).prop_map(|(x, s)| V::D16(x as i128 * 1_000_000_007, s)),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(V::Binary),
    ];
    let key = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("c".to_string()),
        Just("o".to_string()),
        "[a-z]{1,3}",
    ];
    leaf.prop_recursive(4, 32, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(V::Arr),
            proptest::collection::vec((key.clone(), inner), 0..6).prop_map(|fields| {
                let mut seen = std::collections::HashSet::new();
                V::Obj(
                    fields
                        .into_iter()
                        .filter(|(k, _)| seen.insert(k.clone()))
                        .collect(),
                )
            }),
        ]
    })
}

// ---------------------------------------------------------------------------------------------
// Test harness helpers
// ---------------------------------------------------------------------------------------------

/// Copies the folder `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A fresh, empty scratch folder for test `test`, case `name`, removed when dropped.
pub fn scratch_dir(test: &str, name: &str) -> TempPath {
    TempPath::dir(&format!("{test}-{name}"))
}

/// The number of proptest cases: `PROPTEST_CASES`, or `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

/// The sum of metric `name` over every node of an executed plan.
pub fn metric_sum(
    plan: &dyn datafusion::physical_plan::ExecutionPlan,
    name: &'static str,
) -> usize {
    struct Sum(&'static str, usize);
    impl datafusion::physical_plan::ExecutionPlanVisitor for Sum {
        type Error = datafusion::error::DataFusionError;
        fn pre_visit(
            &mut self,
            plan: &dyn datafusion::physical_plan::ExecutionPlan,
        ) -> Result<bool, Self::Error> {
            if let Some(metrics) = plan.metrics() {
                self.1 += metrics.sum_by_name(self.0).map_or(0, |m| m.as_usize());
            }
            Ok(true)
        }
    }
    let mut sum = Sum(name, 0);
    datafusion::physical_plan::accept(plan, &mut sum).unwrap();
    sum.1
}

/// The physical plan of `sql` in `ctx` (panics on any error).
pub async fn plan(
    ctx: &datafusion::prelude::SessionContext,
    sql: &str,
) -> std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    ctx.sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
}

/// The batches of `sql` run in `ctx` (panics on any error).
pub async fn run(
    ctx: &datafusion::prelude::SessionContext,
    sql: &str,
) -> Vec<datafusion::arrow::array::RecordBatch> {
    ctx.sql(sql).await.unwrap().collect().await.unwrap()
}

/// The first cell of `sql`'s result as text (None for NULL, arrow's display form otherwise), or
/// the text of the error planning or running it gave.
pub async fn first_cell(
    ctx: &datafusion::prelude::SessionContext,
    sql: &str,
) -> Result<Option<String>, String> {
    use datafusion::arrow::array::Array;
    let batches = match ctx.sql(sql).await {
        Ok(df) => df.collect().await,
        Err(e) => Err(e),
    }
    .map_err(|e| e.to_string())?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .ok_or_else(|| format!("no rows from {sql}"))?;
    let column = batch.column(0);
    Ok(column.is_valid(0).then(|| {
        datafusion::arrow::util::display::array_value_to_string(column, 0).expect("displayable")
    }))
}

// ---------------------------------------------------------------------------------------------
// Which Parquet leaves a query reads
// ---------------------------------------------------------------------------------------------

pub mod recording {
    //! A store that records the byte ranges read, and the Parquet leaves they cover.
    use std::collections::BTreeSet;
    use std::fmt;
    use std::ops::Range;
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use datafusion::object_store::local::LocalFileSystem;
    use datafusion::object_store::path::Path as StorePath;
    use datafusion::object_store::{
        CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
        ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    };
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    use datafusion::prelude::SessionContext;
    use futures::stream::BoxStream;

    use super::run;

    /// A local file system that records the byte ranges read.
    #[derive(Debug)]
    pub struct Recording {
        pub inner: LocalFileSystem,
        pub ranges: Mutex<Vec<Range<u64>>>,
    }

    impl Recording {
        /// A recording store over the local file system.
        pub fn new() -> Arc<Self> {
            Arc::new(Recording {
                inner: LocalFileSystem::new(),
                ranges: Mutex::new(vec![]),
            })
        }
    }

    impl fmt::Display for Recording {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Recording({})", self.inner)
        }
    }

    #[async_trait]
    impl ObjectStore for Recording {
        async fn put_opts(
            &self,
            location: &StorePath,
            payload: PutPayload,
            opts: PutOptions,
        ) -> datafusion::object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }

        async fn put_multipart_opts(
            &self,
            location: &StorePath,
            opts: PutMultipartOptions,
        ) -> datafusion::object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }

        async fn get_opts(
            &self,
            location: &StorePath,
            options: GetOptions,
        ) -> datafusion::object_store::Result<GetResult> {
            if let Some(GetRange::Bounded(range)) = &options.range {
                self.ranges.lock().unwrap().push(range.clone());
            }
            self.inner.get_opts(location, options).await
        }

        async fn get_ranges(
            &self,
            location: &StorePath,
            ranges: &[Range<u64>],
        ) -> datafusion::object_store::Result<Vec<bytes::Bytes>> {
            self.ranges.lock().unwrap().extend(ranges.iter().cloned());
            self.inner.get_ranges(location, ranges).await
        }

        fn delete_stream(
            &self,
            locations: BoxStream<'static, datafusion::object_store::Result<StorePath>>,
        ) -> BoxStream<'static, datafusion::object_store::Result<StorePath>> {
            self.inner.delete_stream(locations)
        }

        fn list(
            &self,
            prefix: Option<&StorePath>,
        ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
            self.inner.list(prefix)
        }

        async fn list_with_delimiter(
            &self,
            prefix: Option<&StorePath>,
        ) -> datafusion::object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }

        async fn copy_opts(
            &self,
            from: &StorePath,
            to: &StorePath,
            options: CopyOptions,
        ) -> datafusion::object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    /// The leaves (dotted Parquet paths) whose column chunks overlap the ranges read by `sql`.
    pub async fn leaves_read(
        ctx: &SessionContext,
        store: &Recording,
        path: &Path,
        sql: &str,
    ) -> BTreeSet<String> {
        store.ranges.lock().unwrap().clear();
        run(ctx, sql).await;
        let ranges = store.ranges.lock().unwrap().clone();
        let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut read = BTreeSet::new();
        for rg in reader.metadata().row_groups() {
            for column in rg.columns() {
                let (start, len) = column.byte_range();
                let chunk = start..start + len;
                if ranges
                    .iter()
                    .any(|r| r.start < chunk.end && chunk.start < r.end)
                {
                    read.insert(column.column_path().string());
                }
            }
        }
        read
    }
}
