//! SQL values to variants (`to_variant`, `CAST(x AS VARIANT)`, `to_variant_object`, the values
//! given to the mutators).
//!
//! [`ArrowToVariant`] resolves the per-type dispatch once per array (a tree that mirrors the Arrow
//! type), then writes one row at a time into a [`VariantBuilder`]:
//! booleans, integers (unsigned widened; a UInt64 above `i64::MAX` becomes a decimal), floats
//! (Float16 as float), decimals (decimal4/8/16 by precision), strings, binary, `arrow.uuid`,
//! dates, timestamps (with a time zone: timestamp; without: timestamp_ntz; seconds to
//! microseconds to micros, nanoseconds to nanos), times (as microseconds), lists, structs and
//! string-keyed maps (objects), dictionaries, and variants (copied). Intervals, durations and
//! unions have no variant form: [`check_convertible`] rejects them at planning time.
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, FixedSizeBinaryArray, GenericListArray,
    GenericListViewArray, MapArray, OffsetSizeTrait, PrimitiveArray, StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type,
    Field, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};

use crate::codec::{VariantBuilder, is_time_of_day};
use crate::shredding::variant_column;
use crate::variant_array::{
    EXTENSION_NAME_KEY, UUID_EXTENSION_NAME, VariantArrayBuilder, VariantColumn, VariantRows,
    is_variant_like,
};

/// True when `field` is a UUID column.
fn is_uuid(field: &Field) -> bool {
    field.data_type() == &DataType::FixedSizeBinary(16)
        && field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(UUID_EXTENSION_NAME)
}

/// Checks at planning time that values of `field` can become variants; the error names
/// `function` and the type.
pub fn check_convertible(function: &str, field: &Field) -> Result<()> {
    if is_variant_like(field) {
        return Ok(());
    }
    match field.data_type() {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(..)
        | DataType::Time32(_)
        | DataType::Time64(_) => Ok(()),
        DataType::Decimal32(_, s)
        | DataType::Decimal64(_, s)
        | DataType::Decimal128(_, s)
        | DataType::Decimal256(_, s) => {
            if *s > 38 {
                plan_err!(
                    "{function}: {} has a scale above 38, which VARIANT decimals cannot hold",
                    field.data_type()
                )
            } else {
                Ok(())
            }
        }
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => check_convertible(function, f),
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_convertible(function, f)),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return plan_err!("{function}: malformed map type {}", field.data_type());
            };
            if !matches!(
                kv[0].data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) {
                return plan_err!(
                    "{function}: only maps with string keys become VARIANT objects, got {}",
                    field.data_type()
                );
            }
            check_convertible(function, &kv[1])
        }
        DataType::Dictionary(_, values) => {
            check_convertible(function, &Field::new("", values.as_ref().clone(), true))
        }
        other => plan_err!("{function}: values of type {other} cannot be converted to VARIANT"),
    }
}

/// Converts every row of `array` (described by `field`) to an unshredded variant column; SQL NULL
/// rows stay SQL NULL.
pub fn arrow_to_variant(function: &str, field: &Field, array: &ArrayRef) -> Result<ArrayRef> {
    let mut out = VariantArrayBuilder::with_capacity(array.len());
    if is_variant_like(field) {
        // Already a variant: copy the bytes into the unshredded Binary layout.
        let column = variant_column(array)?;
        let rows = column.rows()?;
        for i in 0..column.len() {
            match rows.bytes(i) {
                Some((m, v)) => out.append(m, v),
                None => out.append_null(),
            }
        }
        return out.finish();
    }
    let converter = ArrowToVariant::try_new(function, field, array)?;
    let mut builder = VariantBuilder::new();
    for row in 0..array.len() {
        if converter.is_null(row) {
            out.append_null();
        } else {
            builder.reset();
            converter.write(row, &mut builder)?;
            builder
                .finish()
                .map_err(|e| conversion_error(function, e))?;
            out.append_built(&builder);
        }
    }
    out.finish()
}

fn conversion_error(function: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("{function}: {e}"))
}

/// Writes the rows of one Arrow array as variant values; see the module documentation.
pub struct ArrowToVariant<'a> {
    function: &'a str,
    nulls: Option<NullBuffer>,
    node: Node<'a>,
}

/// The offsets of a list-like array.
enum ListOffsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
    Fixed(usize),
    SmallView(&'a [i32], &'a [i32]),
    LargeView(&'a [i64], &'a [i64]),
}

impl ListOffsets<'_> {
    #[inline]
    fn range(&self, row: usize) -> (usize, usize) {
        match self {
            ListOffsets::Small(o) => (o[row] as usize, o[row + 1] as usize),
            ListOffsets::Large(o) => (o[row] as usize, o[row + 1] as usize),
            ListOffsets::Fixed(n) => (row * n, (row + 1) * n),
            ListOffsets::SmallView(o, s) => (o[row] as usize, (o[row] + s[row]) as usize),
            ListOffsets::LargeView(o, s) => (o[row] as usize, (o[row] + s[row]) as usize),
        }
    }
}

/// String keys of a map.
enum Keys<'a> {
    Utf8(&'a datafusion::arrow::array::StringArray),
    Large(&'a datafusion::arrow::array::LargeStringArray),
    View(&'a datafusion::arrow::array::StringViewArray),
}

impl<'a> Keys<'a> {
    #[inline]
    fn value(&self, i: usize) -> &'a str {
        match self {
            Keys::Utf8(a) => a.value(i),
            Keys::Large(a) => a.value(i),
            Keys::View(a) => a.value(i),
        }
    }
}

enum Node<'a> {
    Null,
    Boolean(&'a BooleanArray),
    Int8(&'a PrimitiveArray<Int8Type>),
    Int16(&'a PrimitiveArray<Int16Type>),
    Int32(&'a PrimitiveArray<Int32Type>),
    Int64(&'a PrimitiveArray<Int64Type>),
    UInt8(&'a PrimitiveArray<UInt8Type>),
    UInt16(&'a PrimitiveArray<UInt16Type>),
    UInt32(&'a PrimitiveArray<UInt32Type>),
    UInt64(&'a PrimitiveArray<UInt64Type>),
    Float16(&'a PrimitiveArray<Float16Type>),
    Float32(&'a PrimitiveArray<Float32Type>),
    Float64(&'a PrimitiveArray<Float64Type>),
    Decimal32(&'a PrimitiveArray<Decimal32Type>, u8, i8),
    Decimal64(&'a PrimitiveArray<Decimal64Type>, u8, i8),
    Decimal128(&'a PrimitiveArray<Decimal128Type>, u8, i8),
    Decimal256(&'a PrimitiveArray<Decimal256Type>, u8, i8),
    Utf8(&'a datafusion::arrow::array::StringArray),
    LargeUtf8(&'a datafusion::arrow::array::LargeStringArray),
    Utf8View(&'a datafusion::arrow::array::StringViewArray),
    Binary(&'a datafusion::arrow::array::BinaryArray),
    LargeBinary(&'a datafusion::arrow::array::LargeBinaryArray),
    BinaryView(&'a datafusion::arrow::array::BinaryViewArray),
    FixedSizeBinary(&'a FixedSizeBinaryArray),
    Uuid(&'a FixedSizeBinaryArray),
    Date32(&'a PrimitiveArray<Date32Type>),
    Date64(&'a PrimitiveArray<Date64Type>),
    /// Values in microseconds after multiplying by the factor; `bool` is "has a time zone".
    TimestampSecond(&'a PrimitiveArray<TimestampSecondType>, bool),
    TimestampMillisecond(&'a PrimitiveArray<TimestampMillisecondType>, bool),
    TimestampMicrosecond(&'a PrimitiveArray<TimestampMicrosecondType>, bool),
    TimestampNanosecond(&'a PrimitiveArray<TimestampNanosecondType>, bool),
    Time32Second(&'a PrimitiveArray<Time32SecondType>),
    Time32Millisecond(&'a PrimitiveArray<Time32MillisecondType>),
    Time64Microsecond(&'a PrimitiveArray<Time64MicrosecondType>),
    Time64Nanosecond(&'a PrimitiveArray<Time64NanosecondType>),
    List(ListOffsets<'a>, Box<ArrowToVariant<'a>>),
    Struct(Vec<&'a str>, Vec<ArrowToVariant<'a>>),
    Map(&'a [i32], Keys<'a>, Box<ArrowToVariant<'a>>),
    Dictionary(Vec<usize>, Box<ArrowToVariant<'a>>),
    /// An unshredded variant column, read in place.
    Variant(VariantRows<'a>),
    /// A shredded one, reassembled first.
    ShreddedVariant(VariantColumn),
}

fn list<'a, O: OffsetSizeTrait>(
    function: &'a str,
    a: &'a GenericListArray<O>,
    field: &Field,
) -> Result<(ArrowToVariant<'a>, &'a [O])> {
    Ok((
        ArrowToVariant::try_new(function, field, a.values())?,
        a.offsets().as_ref(),
    ))
}

fn list_view<'a, O: OffsetSizeTrait>(
    function: &'a str,
    a: &'a GenericListViewArray<O>,
    field: &Field,
) -> Result<(ArrowToVariant<'a>, &'a [O], &'a [O])> {
    Ok((
        ArrowToVariant::try_new(function, field, a.values())?,
        a.offsets().as_ref(),
        a.sizes().as_ref(),
    ))
}

impl<'a> ArrowToVariant<'a> {
    /// Prepares the conversion of `array`, whose field is `field` (for extension types).
    pub fn try_new(function: &'a str, field: &Field, array: &'a ArrayRef) -> Result<Self> {
        let node = if is_variant_like(field) {
            match VariantRows::borrowed(array) {
                Some(rows) => Node::Variant(rows),
                None => Node::ShreddedVariant(variant_column(array)?),
            }
        } else {
            Self::node(function, field, array)?
        };
        Ok(ArrowToVariant {
            function,
            nulls: array.logical_nulls(),
            node,
        })
    }

    fn node(function: &'a str, field: &Field, array: &'a ArrayRef) -> Result<Node<'a>> {
        Ok(match array.data_type() {
            DataType::Null => Node::Null,
            DataType::Boolean => Node::Boolean(array.as_boolean()),
            DataType::Int8 => Node::Int8(array.as_primitive()),
            DataType::Int16 => Node::Int16(array.as_primitive()),
            DataType::Int32 => Node::Int32(array.as_primitive()),
            DataType::Int64 => Node::Int64(array.as_primitive()),
            DataType::UInt8 => Node::UInt8(array.as_primitive()),
            DataType::UInt16 => Node::UInt16(array.as_primitive()),
            DataType::UInt32 => Node::UInt32(array.as_primitive()),
            DataType::UInt64 => Node::UInt64(array.as_primitive()),
            DataType::Float16 => Node::Float16(array.as_primitive()),
            DataType::Float32 => Node::Float32(array.as_primitive()),
            DataType::Float64 => Node::Float64(array.as_primitive()),
            DataType::Decimal32(p, s) => Node::Decimal32(array.as_primitive(), *p, *s),
            DataType::Decimal64(p, s) => Node::Decimal64(array.as_primitive(), *p, *s),
            DataType::Decimal128(p, s) => Node::Decimal128(array.as_primitive(), *p, *s),
            DataType::Decimal256(p, s) => Node::Decimal256(array.as_primitive(), *p, *s),
            DataType::Utf8 => Node::Utf8(array.as_string()),
            DataType::LargeUtf8 => Node::LargeUtf8(array.as_string()),
            DataType::Utf8View => Node::Utf8View(array.as_string_view()),
            DataType::Binary => Node::Binary(array.as_binary()),
            DataType::LargeBinary => Node::LargeBinary(array.as_binary()),
            DataType::BinaryView => Node::BinaryView(array.as_binary_view()),
            DataType::FixedSizeBinary(_) if is_uuid(field) => {
                Node::Uuid(array.as_fixed_size_binary())
            }
            DataType::FixedSizeBinary(_) => Node::FixedSizeBinary(array.as_fixed_size_binary()),
            DataType::Date32 => Node::Date32(array.as_primitive()),
            DataType::Date64 => Node::Date64(array.as_primitive()),
            DataType::Timestamp(unit, tz) => {
                let tz = tz.is_some();
                match unit {
                    TimeUnit::Second => Node::TimestampSecond(array.as_primitive(), tz),
                    TimeUnit::Millisecond => Node::TimestampMillisecond(array.as_primitive(), tz),
                    TimeUnit::Microsecond => Node::TimestampMicrosecond(array.as_primitive(), tz),
                    TimeUnit::Nanosecond => Node::TimestampNanosecond(array.as_primitive(), tz),
                }
            }
            DataType::Time32(TimeUnit::Second) => Node::Time32Second(array.as_primitive()),
            DataType::Time32(_) => Node::Time32Millisecond(array.as_primitive()),
            DataType::Time64(TimeUnit::Microsecond) => {
                Node::Time64Microsecond(array.as_primitive())
            }
            DataType::Time64(_) => Node::Time64Nanosecond(array.as_primitive()),
            DataType::List(f) => {
                let (child, offsets) = list(function, array.as_list::<i32>(), f)?;
                Node::List(ListOffsets::Small(offsets), Box::new(child))
            }
            DataType::LargeList(f) => {
                let (child, offsets) = list(function, array.as_list::<i64>(), f)?;
                Node::List(ListOffsets::Large(offsets), Box::new(child))
            }
            DataType::ListView(f) => {
                let (child, offsets, sizes) = list_view(function, array.as_list_view::<i32>(), f)?;
                Node::List(ListOffsets::SmallView(offsets, sizes), Box::new(child))
            }
            DataType::LargeListView(f) => {
                let (child, offsets, sizes) = list_view(function, array.as_list_view::<i64>(), f)?;
                Node::List(ListOffsets::LargeView(offsets, sizes), Box::new(child))
            }
            DataType::FixedSizeList(f, n) => {
                let a = array.as_fixed_size_list();
                let child = ArrowToVariant::try_new(function, f, a.values())?;
                Node::List(ListOffsets::Fixed(*n as usize), Box::new(child))
            }
            DataType::Struct(_) => {
                let a: &'a StructArray = array.as_struct();
                let names = a.fields().iter().map(|f| f.name().as_str()).collect();
                let children = a
                    .fields()
                    .iter()
                    .zip(a.columns())
                    .map(|(f, c)| ArrowToVariant::try_new(function, f, c))
                    .collect::<Result<_>>()?;
                Node::Struct(names, children)
            }
            DataType::Map(..) => {
                let a: &'a MapArray = array.as_map();
                let keys = match a.keys().data_type() {
                    DataType::Utf8 => Keys::Utf8(a.keys().as_string()),
                    DataType::LargeUtf8 => Keys::Large(a.keys().as_string()),
                    DataType::Utf8View => Keys::View(a.keys().as_string_view()),
                    other => {
                        return exec_err!(
                            "{function}: only maps with string keys become VARIANT objects, \
                             got {other} keys"
                        );
                    }
                };
                let DataType::Struct(kv) = a.entries().data_type() else {
                    return exec_err!("{function}: malformed map");
                };
                let values = ArrowToVariant::try_new(function, &kv[1], a.values())?;
                Node::Map(a.offsets().as_ref(), keys, Box::new(values))
            }
            DataType::Dictionary(_, value_type) => {
                let a = array.as_any_dictionary();
                let values = ArrowToVariant::try_new(
                    function,
                    &Field::new("", value_type.as_ref().clone(), true),
                    a.values(),
                )?;
                Node::Dictionary(a.normalized_keys(), Box::new(values))
            }
            other => {
                return exec_err!(
                    "{function}: values of type {other} cannot be converted to VARIANT"
                );
            }
        })
    }

    /// True when `row` is NULL (a SQL NULL at the top level, a variant null inside).
    #[inline]
    pub fn is_null(&self, row: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.is_null(row))
    }

    /// Writes `row` as the next value of `b` (a NULL row as variant null).
    pub fn write(&self, row: usize, b: &mut VariantBuilder) -> Result<()> {
        if self.is_null(row) {
            b.null();
            return Ok(());
        }
        let f = self.function;
        match &self.node {
            Node::Null => b.null(),
            Node::Boolean(a) => b.boolean(a.value(row)),
            Node::Int8(a) => b.int8(a.value(row)),
            Node::Int16(a) => b.int16(a.value(row)),
            Node::Int32(a) => b.int32(a.value(row)),
            Node::Int64(a) => b.int64(a.value(row)),
            Node::UInt8(a) => b.int16(a.value(row).into()),
            Node::UInt16(a) => b.int32(a.value(row).into()),
            Node::UInt32(a) => b.int64(a.value(row).into()),
            Node::UInt64(a) => match i64::try_from(a.value(row)) {
                Ok(v) => b.int64(v),
                Err(_) => b.decimal16(a.value(row).into(), 0),
            },
            Node::Float16(a) => b.float(a.value(row).to_f32()),
            Node::Float32(a) => b.float(a.value(row)),
            Node::Float64(a) => b.double(a.value(row)),
            Node::Decimal32(a, p, s) => decimal(f, b, a.value(row).into(), *p, *s)?,
            Node::Decimal64(a, p, s) => decimal(f, b, a.value(row).into(), *p, *s)?,
            Node::Decimal128(a, p, s) => decimal(f, b, a.value(row), *p, *s)?,
            Node::Decimal256(a, p, s) => match a.value(row).to_i128() {
                Some(v) => decimal(f, b, v, *p, *s)?,
                None => return exec_err!("{f}: decimal {} exceeds 38 digits", a.value(row)),
            },
            Node::Utf8(a) => b.string(a.value(row)),
            Node::LargeUtf8(a) => b.string(a.value(row)),
            Node::Utf8View(a) => b.string(a.value(row)),
            Node::Binary(a) => b.binary(a.value(row)),
            Node::LargeBinary(a) => b.binary(a.value(row)),
            Node::BinaryView(a) => b.binary(a.value(row)),
            Node::FixedSizeBinary(a) => b.binary(a.value(row)),
            Node::Uuid(a) => b.uuid(a.value(row).try_into().expect("16 bytes")),
            Node::Date32(a) => b.date(a.value(row)),
            Node::Date64(a) => {
                let ms = a.value(row);
                match i32::try_from(ms.div_euclid(86_400_000)) {
                    Ok(days) => b.date(days),
                    Err(_) => return exec_err!("{f}: date {ms} ms is out of range"),
                }
            }
            Node::TimestampSecond(a, tz) => timestamp_micros(f, b, a.value(row), 1_000_000, *tz)?,
            Node::TimestampMillisecond(a, tz) => timestamp_micros(f, b, a.value(row), 1_000, *tz)?,
            Node::TimestampMicrosecond(a, tz) => timestamp_micros(f, b, a.value(row), 1, *tz)?,
            Node::TimestampNanosecond(a, tz) => {
                if *tz {
                    b.timestamp_nanos(a.value(row))
                } else {
                    b.timestamp_ntz_nanos(a.value(row))
                }
            }
            Node::Time32Second(a) => {
                b.time_micros(time_of_day(f, i64::from(a.value(row)) * 1_000_000)?)
            }
            Node::Time32Millisecond(a) => {
                b.time_micros(time_of_day(f, i64::from(a.value(row)) * 1_000)?)
            }
            Node::Time64Microsecond(a) => b.time_micros(time_of_day(f, a.value(row))?),
            // VARIANT times have microsecond precision: nanoseconds are truncated.
            Node::Time64Nanosecond(a) => {
                b.time_micros(time_of_day(f, a.value(row).div_euclid(1_000))?)
            }
            Node::List(offsets, child) => {
                let (start, end) = offsets.range(row);
                b.begin_array();
                for i in start..end {
                    child.write(i, b)?;
                }
                b.end_array();
            }
            Node::Struct(names, children) => {
                b.begin_object();
                for (name, child) in names.iter().zip(children) {
                    b.key(name);
                    child.write(row, b)?;
                }
                b.end_object().map_err(|e| conversion_error(f, e))?;
            }
            Node::Map(offsets, keys, values) => {
                b.begin_object();
                for i in offsets[row] as usize..offsets[row + 1] as usize {
                    b.key(keys.value(i));
                    values.write(i, b)?;
                }
                b.end_object().map_err(|e| conversion_error(f, e))?;
            }
            Node::Dictionary(keys, values) => values.write(keys[row], b)?,
            Node::Variant(rows) => match rows.get(row)? {
                Some(v) => b.append_variant(v).map_err(|e| conversion_error(f, e))?,
                None => b.null(),
            },
            Node::ShreddedVariant(column) => match column.rows()?.get(row)? {
                Some(v) => b.append_variant(v).map_err(|e| conversion_error(f, e))?,
                None => b.null(),
            },
        }
        Ok(())
    }
}

/// Appends a decimal of type `Decimal(precision, scale)`: the width follows the precision
/// (decimal4 up to 9 digits, decimal8 up to 18, decimal16 up to 38), widened when a value has
/// more digits than its type says; a negative scale is applied to the unscaled value.
fn decimal(
    function: &str,
    b: &mut VariantBuilder,
    unscaled: i128,
    precision: u8,
    scale: i8,
) -> Result<()> {
    let (unscaled, scale, precision) = if scale < 0 {
        let factor = 10i128.checked_pow(u32::from(scale.unsigned_abs()));
        match factor.and_then(|f| unscaled.checked_mul(f)) {
            Some(v) => (v, 0u8, precision.saturating_add(scale.unsigned_abs())),
            None => {
                return exec_err!(
                    "{function}: decimal {unscaled}e{} exceeds 38 digits",
                    -scale
                );
            }
        }
    } else {
        (unscaled, scale as u8, precision)
    };
    let digits = crate::cast::numeric::digits(unscaled)
        .max(u32::from(precision).min(38))
        .max(u32::from(scale));
    if digits > 38 || scale > 38 {
        return exec_err!(
            "{function}: decimal with unscaled value {unscaled} and scale {scale} exceeds 38 digits"
        );
    }
    if digits <= 9 {
        b.decimal4(unscaled as i32, scale);
    } else if digits <= 18 {
        b.decimal8(unscaled as i64, scale);
    } else {
        b.decimal16(unscaled, scale);
    }
    Ok(())
}

/// `micros` since midnight, within one day as a variant TIME must be (Arrow's times are not
/// checked: one outside a day would make a malformed variant).
fn time_of_day(function: &str, micros: i64) -> Result<i64> {
    if !is_time_of_day(micros) {
        return exec_err!("{function}: the time of {micros} microseconds is outside a day");
    }
    Ok(micros)
}

fn timestamp_micros(
    function: &str,
    b: &mut VariantBuilder,
    v: i64,
    factor: i64,
    has_tz: bool,
) -> Result<()> {
    let Some(micros) = v.checked_mul(factor) else {
        return exec_err!("{function}: timestamp {v} is out of the microsecond range");
    };
    if has_tz {
        b.timestamp_micros(micros);
    } else {
        b.timestamp_ntz_micros(micros);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{
        Decimal128Array, FixedSizeBinaryArray, Float16Array, Int8Array, Int64Array, ListViewArray,
        TimestampNanosecondArray, TimestampSecondArray, UInt8Array, UInt32Array, UInt64Array,
    };
    use datafusion::arrow::buffer::ScalarBuffer;
    use half::f16;

    use super::*;
    use crate::codec::{Value, Variant};
    use crate::variant_array::VariantColumn;

    /// Converts `array` and returns row `row` decoded to a debug string of its `Value`.
    fn convert(field: Field, array: ArrayRef) -> Result<Vec<Option<String>>> {
        let out = arrow_to_variant("f", &field, &array)?;
        let column = VariantColumn::try_new(&out)?;
        let rows = column.rows()?;
        Ok((0..column.len())
            .map(|i| {
                rows.bytes(i).map(|(m, v)| {
                    crate::codec::validate(m, v).expect("valid");
                    format!("{:?}", Variant::try_new(m, v).unwrap().get().unwrap())
                })
            })
            .collect())
    }

    fn one(field: Field, array: ArrayRef) -> String {
        convert(field, array).unwrap()[0].clone().unwrap()
    }

    #[test]
    fn integer_widths_are_kept_and_unsigned_ones_widen() {
        let f = |t: DataType| Field::new("x", t, true);
        let int8: ArrayRef = Arc::new(Int8Array::from(vec![-5]));
        assert_eq!(
            one(f(DataType::Int8), int8),
            format!("{:?}", Value::Int8(-5))
        );
        let uint8: ArrayRef = Arc::new(UInt8Array::from(vec![200]));
        assert_eq!(
            one(f(DataType::UInt8), uint8),
            format!("{:?}", Value::Int16(200))
        );
        let uint32: ArrayRef = Arc::new(UInt32Array::from(vec![u32::MAX]));
        assert_eq!(
            one(f(DataType::UInt32), uint32),
            format!("{:?}", Value::Int64(4294967295))
        );
        let uint64: ArrayRef = Arc::new(UInt64Array::from(vec![u64::MAX, 1]));
        let out = convert(f(DataType::UInt64), uint64).unwrap();
        assert_eq!(
            out[0].as_deref(),
            Some(format!("{:?}", Value::Decimal16(u64::MAX as i128, 0)).as_str())
        );
        assert_eq!(
            out[1].as_deref(),
            Some(format!("{:?}", Value::Int64(1)).as_str())
        );
    }

    #[test]
    fn decimal_width_follows_precision_and_widens_for_oversized_values() {
        let dec = |p: u8, s: i8, v: i128| -> String {
            let a = Decimal128Array::from(vec![v])
                .with_precision_and_scale(p, s)
                .unwrap();
            one(
                Field::new("d", DataType::Decimal128(p, s), true),
                Arc::new(a),
            )
        };
        assert_eq!(dec(5, 2, 150), format!("{:?}", Value::Decimal4(150, 2)));
        assert_eq!(dec(12, 2, 150), format!("{:?}", Value::Decimal8(150, 2)));
        assert_eq!(dec(20, 2, 150), format!("{:?}", Value::Decimal16(150, 2)));
        // Arrow does not enforce precision on data: a value too wide for its type widens.
        assert_eq!(
            dec(5, 0, 12_345_678_901),
            format!("{:?}", Value::Decimal8(12_345_678_901, 0))
        );
        assert_eq!(dec(5, -3, 12), format!("{:?}", Value::Decimal4(12_000, 0)));
    }

    #[test]
    fn timestamps_keep_their_kind_and_precision() {
        let secs: ArrayRef = Arc::new(TimestampSecondArray::from(vec![1, i64::MAX]));
        let field = Field::new("t", secs.data_type().clone(), true);
        let out = convert(field.clone(), Arc::clone(&secs));
        assert!(
            out.unwrap_err()
                .to_string()
                .contains("out of the microsecond range"),
            "an overflowing timestamp is an error"
        );
        let secs: ArrayRef = Arc::new(TimestampSecondArray::from(vec![1]));
        assert_eq!(
            one(field, secs),
            format!("{:?}", Value::TimestampNtz(1_000_000))
        );
        let nanos: ArrayRef =
            Arc::new(TimestampNanosecondArray::from(vec![7]).with_timezone("Europe/Paris"));
        let field = Field::new("t", nanos.data_type().clone(), true);
        assert_eq!(one(field, nanos), format!("{:?}", Value::TimestampNanos(7)));
    }

    #[test]
    fn uuid_needs_the_extension() {
        let bytes: [u8; 16] = *b"0123456789abcdef";
        let a: ArrayRef =
            Arc::new(FixedSizeBinaryArray::try_from_iter([bytes].into_iter()).unwrap());
        let plain = Field::new("u", DataType::FixedSizeBinary(16), true);
        assert_eq!(
            one(plain.clone(), Arc::clone(&a)),
            format!("{:?}", Value::Binary(&bytes))
        );
        let uuid = plain.with_metadata(
            [(
                EXTENSION_NAME_KEY.to_string(),
                UUID_EXTENSION_NAME.to_string(),
            )]
            .into(),
        );
        assert_eq!(one(uuid, a), format!("{:?}", Value::Uuid(bytes)));
    }

    #[test]
    fn float16_and_list_views() {
        let h: ArrayRef = Arc::new(Float16Array::from(vec![f16::from_f32(0.5)]));
        assert_eq!(
            one(Field::new("h", DataType::Float16, true), h),
            format!("{:?}", Value::Float(0.5))
        );
        // Views may overlap and come in any order: rows [20, 30] and [10, 20].
        let item = Arc::new(Field::new("item", DataType::Int64, true));
        let view = ListViewArray::new(
            Arc::clone(&item),
            ScalarBuffer::from(vec![1, 0]),
            ScalarBuffer::from(vec![2, 2]),
            Arc::new(Int64Array::from(vec![10, 20, 30])),
            None,
        );
        let field = Field::new("l", view.data_type().clone(), true);
        let out = arrow_to_variant("f", &field, &(Arc::new(view) as ArrayRef)).unwrap();
        let column = VariantColumn::try_new(&out).unwrap();
        let rows = column.rows().unwrap();
        let json = |i| {
            let (m, v) = rows.bytes(i).unwrap();
            let mut text = Vec::new();
            let tz = crate::codec::SessionTimeZone::utc();
            crate::codec::write_json(&mut text, Variant::try_new(m, v).unwrap(), &tz).unwrap();
            String::from_utf8(text).unwrap()
        };
        assert_eq!(json(0), "[20,30]");
        assert_eq!(json(1), "[10,20]");
    }

    #[test]
    fn unsupported_types_are_planning_errors() {
        for t in [
            DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::DayTime),
            DataType::Duration(TimeUnit::Second),
            DataType::Decimal256(76, 40),
        ] {
            let err = check_convertible("to_variant", &Field::new("x", t.clone(), true));
            assert!(err.is_err(), "{t} should be rejected");
        }
        let map_int_keys = DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(
                    vec![
                        Field::new("key", DataType::Int32, false),
                        Field::new("value", DataType::Int32, true),
                    ]
                    .into(),
                ),
                false,
            )),
            false,
        );
        let err = check_convertible("to_variant", &Field::new("m", map_int_keys, true));
        assert!(err.unwrap_err().to_string().contains("string keys"));
    }
}
