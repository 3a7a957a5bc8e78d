//! Appending variant values to Arrow arrays of a target type, casting each with Spark's rules.
use std::cell::RefCell;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder,
    Float32Builder, Float64Builder, Int8Builder, Int16Builder, Int32Builder, Int64Builder,
    ListArray, MapArray, StringBuilder, StructArray, TimestampMicrosecondBuilder,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, FieldRef, Fields, TimeUnit};
use datafusion::common::{DataFusionError, Result, exec_err};

use super::datetime::{
    MICROS_PER_DAY, MICROS_PER_SECOND, local_to_utc, parse_date, parse_timestamp,
    parse_timestamp_ntz, utc_to_local,
};
use super::numeric::{
    decimal_to_f32, decimal_to_f64, double_to_decimal, exact_decimal, parse_boolean, parse_decimal,
    parse_double, parse_float, parse_integral, pow10, rescale,
};
use super::target_type::sql_type_name;
use crate::arrow_nested::grown_offset;
use crate::codec::format::{
    write_date, write_decimal, write_java_double, write_java_float, write_time_micros,
    write_timestamp, write_uuid,
};
use crate::codec::{SessionTimeZone, Value, Variant, write_json};
use crate::variant_array::{VariantArrayBuilder, has_variant_shape};

/// How casts behave.
#[derive(Debug)]
pub struct CastOptions {
    /// The function named in errors.
    pub function: &'static str,
    /// What the error suggests instead (`try_variant_get`, `try_cast`).
    pub suggestion: &'static str,
    /// What a value that cannot be cast gives.
    pub on_error: OnCastError,
    /// The session time zone for timestamps, dates and their text.
    pub tz: SessionTimeZone,
}

/// What a value that cannot be cast gives.
#[derive(Debug)]
pub enum OnCastError {
    /// An error (`variant_get`, `CAST`).
    Raise,
    /// NULL, element-wise in arrays, maps and structs (`try_variant_get`, `TRY_CAST`).
    Null,
    /// NULL as for [`OnCastError::Null`], and the error the row would have raised is kept (see
    /// [`DeferredErrors`]).
    Defer(RefCell<DeferredErrors>),
}

/// The errors of the rows of one batch, kept to be raised later, where the call was written:
/// an extraction the optimizer moved below a filter must fail only for rows the filter keeps.
#[derive(Debug, Default)]
pub struct DeferredErrors {
    /// The first error of the row being cast.
    pending: Option<DataFusionError>,
    /// `(row, error)` for each row that failed, in row order.
    rows: Vec<(usize, DataFusionError)>,
}

impl CastOptions {
    /// Options that raise errors (`strict`) or give NULL.
    pub fn new(
        function: &'static str,
        suggestion: &'static str,
        strict: bool,
        tz: SessionTimeZone,
    ) -> Self {
        CastOptions {
            function,
            suggestion,
            on_error: if strict {
                OnCastError::Raise
            } else {
                OnCastError::Null
            },
            tz,
        }
    }

    /// A value cannot be cast (`error` describes it): the error when raising, otherwise Ok
    /// (the caller gives NULL), keeping the row's first error when deferring.
    pub fn cannot_cast(&self, error: impl FnOnce() -> DataFusionError) -> Result<()> {
        match &self.on_error {
            OnCastError::Raise => Err(error()),
            OnCastError::Null => Ok(()),
            OnCastError::Defer(errors) => {
                let mut errors = errors.borrow_mut();
                if errors.pending.is_none() {
                    errors.pending = Some(error());
                }
                Ok(())
            }
        }
    }

    /// Row `row` is done: when deferring, its error (if it had one) is kept for it.
    #[inline]
    pub fn end_row(&self, row: usize) {
        if let OnCastError::Defer(errors) = &self.on_error {
            let mut errors = errors.borrow_mut();
            if let Some(e) = errors.pending.take() {
                errors.rows.push((row, e));
            }
        }
    }

    /// The deferred `(row, error)` pairs so far (empty unless deferring).
    pub fn take_deferred(&self) -> Vec<(usize, DataFusionError)> {
        match &self.on_error {
            OnCastError::Defer(errors) => std::mem::take(&mut errors.borrow_mut().rows),
            _ => vec![],
        }
    }
}

/// An Arrow array under construction, of a type variant values can be cast to.
#[derive(Debug)]
pub enum TypedBuilder {
    /// BOOLEAN.
    Boolean(BooleanBuilder),
    /// TINYINT.
    Int8(Int8Builder),
    /// SMALLINT.
    Int16(Int16Builder),
    /// INT.
    Int32(Int32Builder),
    /// BIGINT.
    Int64(Int64Builder),
    /// FLOAT.
    Float32(Float32Builder),
    /// DOUBLE.
    Float64(Float64Builder),
    /// DECIMAL(p, s).
    Decimal(Decimal128Builder, u8, u8),
    /// STRING.
    Utf8(StringBuilder, Vec<u8>),
    /// BINARY.
    Binary(BinaryBuilder),
    /// DATE.
    Date(Date32Builder),
    /// TIMESTAMP (UTC-adjusted, `Some(tz)`) or TIMESTAMP_NTZ (`None`), microseconds.
    Timestamp(TimestampMicrosecondBuilder, Option<Arc<str>>),
    /// VARIANT.
    Variant(VariantArrayBuilder),
    /// `ARRAY<T>`.
    List {
        /// The element field.
        field: FieldRef,
        /// Offsets into the elements.
        offsets: Vec<i32>,
        /// Row validity.
        validity: Vec<bool>,
        /// The elements.
        element: Box<TypedBuilder>,
    },
    /// MAP<STRING, T>.
    Map {
        /// The entries field.
        entries: FieldRef,
        /// Offsets into the entries.
        offsets: Vec<i32>,
        /// Row validity.
        validity: Vec<bool>,
        /// Entry keys.
        keys: StringBuilder,
        /// Entry values.
        values: Box<TypedBuilder>,
    },
    /// STRUCT<...>.
    Struct {
        /// The fields.
        fields: Fields,
        /// One builder per field.
        children: Vec<TypedBuilder>,
        /// Row validity.
        validity: Vec<bool>,
    },
}

pub(super) use crate::variant_array::codec_error as codec;

impl TypedBuilder {
    /// A builder for `data_type` with room for `capacity` rows.
    pub fn try_new(data_type: &DataType, capacity: usize) -> Result<Self> {
        Ok(match data_type {
            DataType::Boolean => TypedBuilder::Boolean(BooleanBuilder::with_capacity(capacity)),
            DataType::Int8 => TypedBuilder::Int8(Int8Builder::with_capacity(capacity)),
            DataType::Int16 => TypedBuilder::Int16(Int16Builder::with_capacity(capacity)),
            DataType::Int32 => TypedBuilder::Int32(Int32Builder::with_capacity(capacity)),
            DataType::Int64 => TypedBuilder::Int64(Int64Builder::with_capacity(capacity)),
            DataType::Float32 => TypedBuilder::Float32(Float32Builder::with_capacity(capacity)),
            DataType::Float64 => TypedBuilder::Float64(Float64Builder::with_capacity(capacity)),
            DataType::Decimal128(p, s) if *s >= 0 => TypedBuilder::Decimal(
                Decimal128Builder::with_capacity(capacity).with_precision_and_scale(*p, *s)?,
                *p,
                *s as u8,
            ),
            DataType::Utf8 => TypedBuilder::Utf8(
                StringBuilder::with_capacity(capacity, capacity * 8),
                Vec::new(),
            ),
            DataType::Binary => TypedBuilder::Binary(BinaryBuilder::with_capacity(capacity, 0)),
            DataType::Date32 => TypedBuilder::Date(Date32Builder::with_capacity(capacity)),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => TypedBuilder::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone_opt(tz.clone()),
                tz.clone(),
            ),
            DataType::Struct(_) if has_variant_shape(data_type) => {
                TypedBuilder::Variant(VariantArrayBuilder::with_capacity(capacity))
            }
            DataType::List(field) => TypedBuilder::List {
                field: Arc::clone(field),
                offsets: vec![0],
                validity: Vec::with_capacity(capacity),
                element: Box::new(TypedBuilder::try_new(field.data_type(), capacity)?),
            },
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return exec_err!("map entries must be a struct");
                };
                TypedBuilder::Map {
                    entries: Arc::clone(entries),
                    offsets: vec![0],
                    validity: Vec::with_capacity(capacity),
                    keys: StringBuilder::new(),
                    values: Box::new(TypedBuilder::try_new(kv[1].data_type(), capacity)?),
                }
            }
            DataType::Struct(fields) => TypedBuilder::Struct {
                fields: fields.clone(),
                children: fields
                    .iter()
                    .map(|f| TypedBuilder::try_new(f.data_type(), capacity))
                    .collect::<Result<_>>()?,
                validity: Vec::with_capacity(capacity),
            },
            other => return exec_err!("cannot cast a variant to {other}"),
        })
    }

    /// Appends SQL NULL.
    pub fn append_null(&mut self) {
        match self {
            TypedBuilder::Boolean(b) => b.append_null(),
            TypedBuilder::Int8(b) => b.append_null(),
            TypedBuilder::Int16(b) => b.append_null(),
            TypedBuilder::Int32(b) => b.append_null(),
            TypedBuilder::Int64(b) => b.append_null(),
            TypedBuilder::Float32(b) => b.append_null(),
            TypedBuilder::Float64(b) => b.append_null(),
            TypedBuilder::Decimal(b, ..) => b.append_null(),
            TypedBuilder::Utf8(b, _) => b.append_null(),
            TypedBuilder::Binary(b) => b.append_null(),
            TypedBuilder::Date(b) => b.append_null(),
            TypedBuilder::Timestamp(b, _) => b.append_null(),
            TypedBuilder::Variant(b) => b.append_null(),
            TypedBuilder::List {
                offsets, validity, ..
            }
            | TypedBuilder::Map {
                offsets, validity, ..
            } => {
                offsets.push(*offsets.last().expect("starts with 0"));
                validity.push(false);
            }
            TypedBuilder::Struct {
                children, validity, ..
            } => {
                children.iter_mut().for_each(TypedBuilder::append_null);
                validity.push(false);
            }
        }
    }

    /// Like [`TypedBuilder::append`] for the value at `value[0]` with its metadata, decoding the
    /// common primitive cases (an integer, double, float, boolean or string leaf into a target of
    /// the same kind, variant null) straight from the bytes; everything else takes `append`.
    #[inline]
    pub fn append_bytes(
        &mut self,
        metadata: &[u8],
        value: &[u8],
        opts: &CastOptions,
    ) -> Result<bool> {
        use crate::codec::primitive as p;
        let Some(&header) = value.first() else {
            return self.append(
                Variant::try_new(metadata, value).map_err(|e| codec(opts.function, e))?,
                opts,
            );
        };
        if header == 0 && !matches!(self, TypedBuilder::Variant(_)) {
            self.append_null();
            return Ok(true);
        }
        let int = || -> Option<i64> {
            if header & 0x03 != 0 {
                return None;
            }
            Some(match header >> 2 {
                p::INT8 => i8::from_le_bytes(value.get(1..2)?.try_into().ok()?).into(),
                p::INT16 => i16::from_le_bytes(value.get(1..3)?.try_into().ok()?).into(),
                p::INT32 => i32::from_le_bytes(value.get(1..5)?.try_into().ok()?).into(),
                p::INT64 => i64::from_le_bytes(value.get(1..9)?.try_into().ok()?),
                _ => return None,
            })
        };
        let done = match self {
            TypedBuilder::Int64(b) => int().map(|v| b.append_value(v)),
            TypedBuilder::Int32(b) => int()
                .and_then(|v| i32::try_from(v).ok())
                .map(|v| b.append_value(v)),
            TypedBuilder::Float64(b) if header == p::DOUBLE << 2 => value
                .get(1..9)
                .map(|d| b.append_value(f64::from_le_bytes(d.try_into().expect("8 bytes")))),
            TypedBuilder::Boolean(b) if header == p::TRUE << 2 || header == p::FALSE << 2 => {
                b.append_value(header == p::TRUE << 2);
                Some(())
            }
            // Short strings (at most 63 bytes) while the output has room for them; the checked
            // path below says when it has not.
            TypedBuilder::Utf8(b, _)
                if header & 0x03 == crate::codec::basic_type::SHORT_STRING
                    && b.values_slice().len() < i32::MAX as usize - 64 =>
            {
                value
                    .get(1..1 + (header >> 2) as usize)
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .map(|s| b.append_value(s))
            }
            TypedBuilder::Variant(b) => crate::codec::value_size(value)
                .ok()
                .and_then(|size| b.append_part(metadata, &value[..size]).ok()),
            _ => None,
        };
        match done {
            Some(()) => Ok(true),
            None => self.append(
                Variant::try_new(metadata, value).map_err(|e| codec(opts.function, e))?,
                opts,
            ),
        }
    }

    /// Appends `v` cast to this builder's type. A variant null appends SQL NULL (except for a
    /// VARIANT target, which keeps it). When the value cannot be cast: an error in strict mode,
    /// otherwise nothing is appended and `Ok(false)` is returned (the caller appends NULL).
    pub fn append(&mut self, v: Variant<'_>, opts: &CastOptions) -> Result<bool> {
        if let TypedBuilder::Variant(b) = self {
            let value = v.exact_value_bytes().map_err(|e| codec(opts.function, e))?;
            (b.append_part(v.metadata().bytes(), value)).map_err(|e| codec(opts.function, e))?;
            return Ok(true);
        }
        let value = v.get().map_err(|e| codec(opts.function, e))?;
        if matches!(value, Value::Null) {
            self.append_null();
            return Ok(true);
        }
        let ok = match self {
            TypedBuilder::Boolean(b) => put(b, to_bool(&value)),
            TypedBuilder::Int8(b) => put(b, to_int(&value).and_then(|i| i8::try_from(i).ok())),
            TypedBuilder::Int16(b) => put(b, to_int(&value).and_then(|i| i16::try_from(i).ok())),
            TypedBuilder::Int32(b) => put(b, to_int(&value).and_then(|i| i32::try_from(i).ok())),
            TypedBuilder::Int64(b) => put(b, to_int(&value)),
            TypedBuilder::Float32(b) => put(b, to_f32(&value)),
            TypedBuilder::Float64(b) => put(b, to_f64(&value)),
            TypedBuilder::Decimal(b, p, s) => put(b, to_decimal(&value, *p, *s)),
            TypedBuilder::Utf8(b, scratch) => {
                scratch.clear();
                if to_text(v, &value, opts, scratch)? {
                    grown_offset(b.values_slice().len(), scratch.len(), opts.function)?;
                    b.append_value(String::from_utf8_lossy(scratch));
                    true
                } else {
                    false
                }
            }
            TypedBuilder::Binary(b) => match value {
                Value::Binary(bytes) => {
                    grown_offset(b.values_slice().len(), bytes.len(), opts.function)?;
                    b.append_value(bytes);
                    true
                }
                Value::String(s) => {
                    grown_offset(b.values_slice().len(), s.len(), opts.function)?;
                    b.append_value(s);
                    true
                }
                _ => false,
            },
            TypedBuilder::Date(b) => put(b, to_date(&value, &opts.tz)),
            TypedBuilder::Timestamp(b, tz) => {
                let micros = if tz.is_some() {
                    to_timestamp(&value, &opts.tz)
                } else {
                    to_timestamp_ntz(&value, &opts.tz)
                };
                put(b, micros)
            }
            TypedBuilder::Variant(_) => unreachable!("handled above"),
            TypedBuilder::List {
                offsets,
                validity,
                element,
                ..
            } => match value {
                Value::Array(arr) => {
                    for e in arr.iter() {
                        let e = e.map_err(|e| codec(opts.function, e))?;
                        if !element.append(e, opts)? {
                            element.append_null();
                        }
                    }
                    let last = *offsets.last().expect("starts with 0") as usize;
                    offsets.push(grown_offset(last, arr.len(), opts.function)?);
                    validity.push(true);
                    true
                }
                _ => false,
            },
            TypedBuilder::Map {
                offsets,
                validity,
                keys,
                values,
                ..
            } => match value {
                Value::Object(obj) => {
                    obj.check_field_sizes()
                        .map_err(|e| codec(opts.function, e))?;
                    for i in 0..obj.len() {
                        let key = obj.key(i).map_err(|e| codec(opts.function, e))?;
                        grown_offset(keys.values_slice().len(), key.len(), opts.function)?;
                        keys.append_value(key);
                        let field = obj.value(i).map_err(|e| codec(opts.function, e))?;
                        if !values.append(field, opts)? {
                            values.append_null();
                        }
                    }
                    let last = *offsets.last().expect("starts with 0") as usize;
                    offsets.push(grown_offset(last, obj.len(), opts.function)?);
                    validity.push(true);
                    true
                }
                _ => false,
            },
            TypedBuilder::Struct {
                fields,
                children,
                validity,
            } => match value {
                Value::Object(obj) => {
                    // Several struct fields read several object fields: they must not share bytes.
                    obj.check_field_sizes()
                        .map_err(|e| codec(opts.function, e))?;
                    for (field, child) in fields.iter().zip(children.iter_mut()) {
                        match obj.get(field.name()).map_err(|e| codec(opts.function, e))? {
                            Some(fv) => {
                                if !child.append(fv, opts)? {
                                    child.append_null();
                                }
                            }
                            None => child.append_null(),
                        }
                    }
                    validity.push(true);
                    true
                }
                _ => false,
            },
        };
        if !ok {
            opts.cannot_cast(|| self.cast_error(v, opts))?;
        }
        Ok(ok)
    }

    fn data_type_name(&self) -> String {
        match self.data_type() {
            Ok(dt) => sql_type_name(&dt),
            Err(_) => "?".into(),
        }
    }

    /// The Arrow type this builder produces.
    pub fn data_type(&self) -> Result<DataType> {
        Ok(match self {
            TypedBuilder::Boolean(_) => DataType::Boolean,
            TypedBuilder::Int8(_) => DataType::Int8,
            TypedBuilder::Int16(_) => DataType::Int16,
            TypedBuilder::Int32(_) => DataType::Int32,
            TypedBuilder::Int64(_) => DataType::Int64,
            TypedBuilder::Float32(_) => DataType::Float32,
            TypedBuilder::Float64(_) => DataType::Float64,
            TypedBuilder::Decimal(_, p, s) => DataType::Decimal128(*p, *s as i8),
            TypedBuilder::Utf8(..) => DataType::Utf8,
            TypedBuilder::Binary(_) => DataType::Binary,
            TypedBuilder::Date(_) => DataType::Date32,
            TypedBuilder::Timestamp(_, tz) => {
                DataType::Timestamp(TimeUnit::Microsecond, tz.clone())
            }
            TypedBuilder::Variant(_) => crate::variant_array::variant_data_type(),
            TypedBuilder::List { field, .. } => DataType::List(Arc::clone(field)),
            TypedBuilder::Map { entries, .. } => DataType::Map(Arc::clone(entries), false),
            TypedBuilder::Struct { fields, .. } => DataType::Struct(fields.clone()),
        })
    }

    fn cast_error(&self, v: Variant<'_>, opts: &CastOptions) -> DataFusionError {
        cast_error(v, &self.data_type_name(), opts)
    }

    /// Finishes the array.
    pub fn finish(self) -> Result<ArrayRef> {
        Ok(match self {
            TypedBuilder::Boolean(mut b) => Arc::new(b.finish()),
            TypedBuilder::Int8(mut b) => Arc::new(b.finish()),
            TypedBuilder::Int16(mut b) => Arc::new(b.finish()),
            TypedBuilder::Int32(mut b) => Arc::new(b.finish()),
            TypedBuilder::Int64(mut b) => Arc::new(b.finish()),
            TypedBuilder::Float32(mut b) => Arc::new(b.finish()),
            TypedBuilder::Float64(mut b) => Arc::new(b.finish()),
            TypedBuilder::Decimal(mut b, ..) => Arc::new(b.finish()),
            TypedBuilder::Utf8(mut b, _) => Arc::new(b.finish()),
            TypedBuilder::Binary(mut b) => Arc::new(b.finish()),
            TypedBuilder::Date(mut b) => Arc::new(b.finish()),
            TypedBuilder::Timestamp(mut b, _) => Arc::new(b.finish()),
            TypedBuilder::Variant(b) => b.finish()?,
            TypedBuilder::List {
                field,
                offsets,
                validity,
                element,
            } => Arc::new(ListArray::try_new(
                field,
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                element.finish()?,
                nulls(validity),
            )?),
            TypedBuilder::Map {
                entries,
                offsets,
                validity,
                mut keys,
                values,
            } => {
                let DataType::Struct(kv) = entries.data_type() else {
                    unreachable!("checked in try_new")
                };
                let entry_array = StructArray::try_new(
                    kv.clone(),
                    vec![Arc::new(keys.finish()), values.finish()?],
                    None,
                )?;
                Arc::new(MapArray::try_new(
                    entries,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    entry_array,
                    nulls(validity),
                    false,
                )?)
            }
            TypedBuilder::Struct {
                fields,
                children,
                validity,
            } => {
                let columns = children
                    .into_iter()
                    .map(TypedBuilder::finish)
                    .collect::<Result<Vec<_>>>()?;
                if fields.is_empty() {
                    Arc::new(StructArray::new_empty_fields(
                        validity.len(),
                        nulls(validity),
                    ))
                } else {
                    Arc::new(StructArray::try_new(fields, columns, nulls(validity))?)
                }
            }
        })
    }

    /// Number of rows appended.
    pub fn len(&self) -> usize {
        match self {
            TypedBuilder::Boolean(b) => b.len(),
            TypedBuilder::Int8(b) => b.len(),
            TypedBuilder::Int16(b) => b.len(),
            TypedBuilder::Int32(b) => b.len(),
            TypedBuilder::Int64(b) => b.len(),
            TypedBuilder::Float32(b) => b.len(),
            TypedBuilder::Float64(b) => b.len(),
            TypedBuilder::Decimal(b, ..) => b.len(),
            TypedBuilder::Utf8(b, _) => b.len(),
            TypedBuilder::Binary(b) => b.len(),
            TypedBuilder::Date(b) => b.len(),
            TypedBuilder::Timestamp(b, _) => b.len(),
            TypedBuilder::Variant(b) => b.len(),
            TypedBuilder::List { validity, .. }
            | TypedBuilder::Map { validity, .. }
            | TypedBuilder::Struct { validity, .. } => validity.len(),
        }
    }

    /// True when no rows were appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn nulls(validity: Vec<bool>) -> Option<NullBuffer> {
    validity
        .iter()
        .any(|v| !v)
        .then(|| NullBuffer::from(validity))
}

/// The error of a strict cast: the value as JSON, the target type's SQL name, and the `try_`
/// function to use instead.
pub(super) fn cast_error(v: Variant<'_>, target: &str, opts: &CastOptions) -> DataFusionError {
    let mut json = Vec::new();
    let shown = match write_json(&mut json, v, &opts.tz) {
        Ok(()) => String::from_utf8_lossy(&json).into_owned(),
        Err(e) => format!("<{e}>"),
    };
    DataFusionError::Execution(format!(
        "{}: the variant value `{}` cannot be cast into `{}`. Please use `{}` instead.",
        opts.function,
        crate::codec::excerpt(&shown),
        target,
        opts.suggestion
    ))
}

/// Appends `v` when present; reports whether it was.
#[inline]
fn put<T, B: PushValue<T>>(b: &mut B, v: Option<T>) -> bool {
    match v {
        Some(v) => {
            b.push(v);
            true
        }
        None => false,
    }
}

/// The `append_value` of the primitive builders, as one trait.
trait PushValue<T> {
    fn push(&mut self, v: T);
}

macro_rules! push_value {
    ($($builder:ty => $t:ty),*) => {
        $(impl PushValue<$t> for $builder {
            #[inline]
            fn push(&mut self, v: $t) {
                self.append_value(v);
            }
        })*
    };
}

push_value!(
    BooleanBuilder => bool, Int8Builder => i8, Int16Builder => i16, Int32Builder => i32,
    Int64Builder => i64, Float32Builder => f32, Float64Builder => f64,
    Decimal128Builder => i128, Date32Builder => i32, TimestampMicrosecondBuilder => i64
);

fn to_bool(v: &Value<'_>) -> Option<bool> {
    Some(match *v {
        Value::Boolean(b) => b,
        Value::Double(d) => d != 0.0,
        Value::Float(f) => f != 0.0,
        Value::String(s) => parse_boolean(s)?,
        _ => exact_decimal(v)?.0 != 0,
    })
}

/// Integral value (truncated toward zero) within i64; narrower targets check their own range.
pub(super) fn to_int(v: &Value<'_>) -> Option<i64> {
    match *v {
        Value::Boolean(b) => Some(b as i64),
        Value::Double(d) => f64_to_i64(d),
        Value::Float(f) => f64_to_i64(f as f64),
        Value::String(s) => parse_integral(s),
        Value::Timestamp(t) => Some(t.div_euclid(MICROS_PER_SECOND)),
        Value::TimestampNanos(t) => Some(t.div_euclid(1_000_000_000)),
        _ => {
            let (u, s) = exact_decimal(v)?;
            i64::try_from(u / pow10(s)).ok()
        }
    }
}

/// `d` truncated to an i64, as Spark's ANSI cast checks it: the range test is done in doubles,
/// where i64::MAX is 2^63, so 2^63 itself passes and saturates to i64::MAX.
fn f64_to_i64(d: f64) -> Option<i64> {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    let t = d.trunc();
    (-TWO_TO_63..=TWO_TO_63).contains(&t).then_some(t as i64)
}

pub(super) fn to_f64(v: &Value<'_>) -> Option<f64> {
    Some(match *v {
        Value::Boolean(b) => b as i64 as f64,
        Value::Double(d) => d,
        Value::Float(f) => f as f64,
        Value::String(s) => parse_double(s)?,
        Value::Timestamp(t) => t as f64 / MICROS_PER_SECOND as f64,
        _ => {
            let (u, s) = exact_decimal(v)?;
            decimal_to_f64(u, s)
        }
    })
}

fn to_f32(v: &Value<'_>) -> Option<f32> {
    Some(match *v {
        Value::Float(f) => f,
        Value::String(s) => parse_float(s)?,
        Value::Int8(i) => i as f32,
        Value::Int16(i) => i as f32,
        Value::Int32(i) => i as f32,
        Value::Int64(i) => i as f32,
        Value::Decimal4(..) | Value::Decimal8(..) | Value::Decimal16(..) => {
            let (u, s) = exact_decimal(v)?;
            decimal_to_f32(u, s)
        }
        _ => to_f64(v)? as f32,
    })
}

fn to_decimal(v: &Value<'_>, precision: u8, scale: u8) -> Option<i128> {
    match *v {
        Value::Boolean(b) => rescale(b as i128, 0, precision, scale),
        Value::Double(d) => double_to_decimal(d, precision, scale),
        Value::Float(f) => double_to_decimal(f as f64, precision, scale),
        Value::String(s) => parse_decimal(s, precision, scale),
        // (Spark: the seconds since the epoch as a double, then to the decimal)
        Value::Timestamp(_) => double_to_decimal(to_f64(v)?, precision, scale),
        _ => {
            let (u, s) = exact_decimal(v)?;
            rescale(u, s, precision, scale)
        }
    }
}

fn to_date(v: &Value<'_>, tz: &SessionTimeZone) -> Option<i32> {
    let micros_to_days = |m: i64| i32::try_from(m.div_euclid(MICROS_PER_DAY)).ok();
    match *v {
        Value::Date(d) => Some(d),
        Value::Timestamp(t) => micros_to_days(utc_to_local(t, tz)?),
        Value::TimestampNanos(t) => micros_to_days(utc_to_local(t.div_euclid(1000), tz)?),
        Value::TimestampNtz(t) => micros_to_days(t),
        Value::TimestampNtzNanos(t) => micros_to_days(t.div_euclid(1000)),
        Value::String(s) => parse_date(s),
        _ => None,
    }
}

fn to_timestamp(v: &Value<'_>, tz: &SessionTimeZone) -> Option<i64> {
    match *v {
        Value::Timestamp(t) => Some(t),
        Value::TimestampNanos(t) => Some(t.div_euclid(1000)),
        Value::TimestampNtz(t) => local_to_utc(t, tz),
        Value::TimestampNtzNanos(t) => local_to_utc(t.div_euclid(1000), tz),
        Value::Date(d) => local_to_utc((d as i64).checked_mul(MICROS_PER_DAY)?, tz),
        Value::String(s) => parse_timestamp(s, tz),
        Value::Double(d) => f64_to_i64(d * MICROS_PER_SECOND as f64),
        Value::Float(f) => to_timestamp(&Value::Double(f as f64), tz),
        Value::Boolean(_) => None,
        _ => {
            let (u, s) = exact_decimal(v)?;
            let micros = u.checked_mul(MICROS_PER_SECOND as i128)? / pow10(s);
            i64::try_from(micros).ok()
        }
    }
}

fn to_timestamp_ntz(v: &Value<'_>, tz: &SessionTimeZone) -> Option<i64> {
    match *v {
        Value::TimestampNtz(t) => Some(t),
        Value::TimestampNtzNanos(t) => Some(t.div_euclid(1000)),
        Value::Timestamp(t) => utc_to_local(t, tz),
        Value::TimestampNanos(t) => utc_to_local(t.div_euclid(1000), tz),
        Value::Date(d) => (d as i64).checked_mul(MICROS_PER_DAY),
        Value::String(s) => parse_timestamp_ntz(s),
        _ => None,
    }
}

/// Spark's cast to STRING: raw text for strings, JSON for objects and arrays, Spark's casts for
/// the rest (timestamps in the session zone without offset).
pub(super) fn to_text(
    v: Variant<'_>,
    value: &Value<'_>,
    opts: &CastOptions,
    out: &mut Vec<u8>,
) -> Result<bool> {
    match *value {
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Binary(b) => out.extend_from_slice(b),
        Value::Boolean(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Double(d) => write_java_double(out, d),
        Value::Float(f) => write_java_float(out, f),
        Value::Date(d) => write_date(out, d),
        Value::Time(t) => write_time_micros(out, t),
        Value::Uuid(u) => write_uuid(out, &u),
        Value::Timestamp(t) => write_local_timestamp(out, t, 1_000_000, &opts.tz),
        Value::TimestampNanos(t) => write_local_timestamp(out, t, 1_000_000_000, &opts.tz),
        Value::TimestampNtz(t) => write_timestamp(out, t, 1_000_000, None),
        Value::TimestampNtzNanos(t) => write_timestamp(out, t, 1_000_000_000, None),
        Value::Object(_) | Value::Array(_) => {
            write_json(out, v, &opts.tz).map_err(|e| codec(opts.function, e))?
        }
        Value::Null => return Ok(false),
        _ => {
            let (u, s) = exact_decimal(value).expect("remaining kinds are exact numbers");
            write_decimal(out, u, s as u8);
        }
    }
    Ok(true)
}

/// A UTC timestamp as local text in `tz`, without the offset.
fn write_local_timestamp(out: &mut Vec<u8>, t: i64, units: i64, tz: &SessionTimeZone) {
    let start = out.len();
    write_timestamp(out, t, units, Some(tz));
    // write_timestamp appends "+HH:MM"; drop it.
    out.truncate(out.len().saturating_sub(6).max(start));
}
