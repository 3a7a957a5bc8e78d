//! Shredded variants (`spec/VariantShredding.md`): [`unshred`] reassembles them into the
//! unshredded form, [`extract_shredded`] reads a path straight from a shredded leaf, and
//! [`shred_variant`] (in `shred.rs`) shreds unshredded ones for writing.
//!
//! A shredded group holds an optional `value` (variant bytes) and an optional `typed_value`
//! (a column of the shredded type: a primitive, a list of groups, or a struct of groups).
//! Invalid combinations: when both `value` and a non-object `typed_value` are set the input is
//! rejected ("engines should fail"); in a partially shredded object, a field present in both the
//! residual `value` and a shredded column is taken from the shredded column (the spec: "the
//! `typed_value` column must be used"). The types of the shredded columns are checked before any
//! row is read, so an unsupported shredding schema is an error even when every row is NULL.
mod infer;
mod json;
mod reassemble;
mod schema;
mod shred;
mod top_level;
mod validity;

use std::sync::Arc;

use crate::variant_array::invalid_variant;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StructArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Fields, Float32Type,
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, Time64MicrosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use datafusion::common::{DataFusionError, Result};

use crate::codec::decimal_digits;
use crate::codec::{Metadata, Value, Variant, VariantBuilder};
use crate::variant_array::{VariantArrayBuilder, VariantColumn};

/// The levels of a walk over a shredding schema between two checks of the stack.
const LEVELS_PER_STACK_CHECK: usize = 4;

/// Runs `f`, level `depth` of a recursive walk over a shredding schema (which may nest up to
/// `DEFAULT_MAX_DEPTH` levels), with the stack checked, and grown where short, as
/// `#[recursive::recursive]` does, at one level in [`LEVELS_PER_STACK_CHECK`] only: the levels
/// in between take a few KiB of stack, well within the margin the check keeps, and a check
/// costs as much as a small object's level (the walks of `to_json` and of the reassembly spend
/// 2% in it when every object level checks).
#[inline(always)]
pub(super) fn stack_checked_every_few_levels<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth % LEVELS_PER_STACK_CHECK == LEVELS_PER_STACK_CHECK - 1 {
        stacker::maybe_grow(
            recursive::get_minimum_stack_size(),
            recursive::get_stack_allocation_size(),
            f,
        )
    } else {
        f()
    }
}

pub use infer::{InferLimits, InferenceRule, ShreddingInference};
pub use json::shredded_to_json;
pub use schema::shredded_schemas;
pub use shred::{shred_variant, shredded_variant_type};
pub use top_level::{TopLevel, for_each_top_level};
pub use validity::shredded_validity;

fn codec_err(e: crate::codec::VariantError) -> DataFusionError {
    crate::variant_array::codec_error("", e)
}

/// Binary bytes of row `i` of a binary column of any layout, None when null.
fn binary_at(array: &ArrayRef, i: usize) -> Result<Option<&[u8]>> {
    if array.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(i),
        DataType::LargeBinary => array.as_binary::<i64>().value(i),
        DataType::BinaryView => array.as_binary_view().value(i),
        other => {
            return Err(invalid_variant(format!(
                "shredded variant value must be binary, got {other}"
            )));
        }
    }))
}

/// A `{value, typed_value}` group.
struct Group<'a> {
    value: Option<&'a ArrayRef>,
    typed: Option<&'a ArrayRef>,
}

impl<'a> Group<'a> {
    fn of(s: &'a StructArray) -> Self {
        Group {
            value: s.column_by_name("value"),
            typed: s.column_by_name("typed_value"),
        }
    }

    fn present(&self, i: usize) -> bool {
        self.value.is_some_and(|v| v.is_valid(i)) || self.typed.is_some_and(|t| t.is_valid(i))
    }
}

/// Wraps a variant column of any layout for reading its rows: a shredded one (with
/// `typed_value`) is reassembled into the unshredded form first ([`unshred`]).
pub fn variant_column(array: &ArrayRef) -> Result<VariantColumn> {
    match array.as_struct_opt() {
        Some(s)
            if s.column_by_name("typed_value").is_some()
                && s.column_by_name("metadata").is_some() =>
        {
            VariantColumn::unshredded(unshred(s)?)
        }
        _ => VariantColumn::try_new(array),
    }
}

/// Reassembles every row of a shredded variant struct array into `Struct{metadata, value}`:
/// against each row's own metadata where every shredded field name is in it (as the spec
/// requires; see `reassemble.rs`), else with a fresh dictionary per row.
pub fn unshred(array: &StructArray) -> Result<StructArray> {
    check_group(array.fields(), "")?;
    if let Some(reassembled) = reassemble::reassemble(array)? {
        return Ok(reassembled);
    }
    rebuild(array)
}

/// [`unshred`] with a fresh dictionary per row (every value re-encoded).
fn rebuild(array: &StructArray) -> Result<StructArray> {
    let metadata = array
        .column_by_name("metadata")
        .ok_or_else(|| DataFusionError::Execution("variant column has no metadata".into()))?;
    let group = Group::of(array);
    let mut out = VariantArrayBuilder::with_capacity(array.len());
    let mut builder = VariantBuilder::new();
    for i in 0..array.len() {
        if array.is_null(i) {
            out.append_null();
            continue;
        }
        let Some(m) = binary_at(metadata, i)? else {
            out.append_null();
            continue;
        };
        let m = Metadata::try_new(m).map_err(codec_err)?;
        builder.reset();
        if group.present(i) {
            append_group(&mut builder, m, &group, i, 0)?;
        } else {
            builder.null();
        }
        builder.finish().map_err(codec_err)?;
        out.append_built(&builder);
    }
    let result = out.finish()?;
    Ok(result.as_struct().clone())
}

/// Checks the children of a `{value, typed_value}` group (`path` names it in errors): `value`
/// must be binary and `typed_value` a type that shredding allows. (Once per batch and group, so
/// each level checks the stack.)
#[recursive::recursive]
fn check_group(fields: &Fields, path: &str) -> Result<()> {
    for f in fields.iter() {
        match f.name().as_str() {
            "value"
                if !matches!(
                    f.data_type(),
                    DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                ) =>
            {
                return Err(invalid_variant(format!(
                    "shredded variant value{path} must be binary, got {}",
                    f.data_type()
                )));
            }
            "typed_value" => check_typed(f.data_type(), path)?,
            _ => {}
        }
    }
    Ok(())
}

/// Checks that `t` is a type a shredded `typed_value` may have.
fn check_typed(t: &DataType, path: &str) -> Result<()> {
    match t {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Time64(TimeUnit::Microsecond)
        | DataType::Timestamp(TimeUnit::Microsecond | TimeUnit::Nanosecond, _)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(16) => Ok(()),
        DataType::Decimal32(_, s) | DataType::Decimal64(_, s) | DataType::Decimal128(_, s)
            if (0..=38).contains(s) =>
        {
            Ok(())
        }
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => match f.data_type() {
            DataType::Struct(fs) => check_group(fs, &format!("{path}[]")),
            other => Err(invalid_variant(format!(
                "shredded array elements{path} must be groups of value/typed_value, got {other}"
            ))),
        },
        DataType::Struct(fields) => {
            for f in fields.iter() {
                let DataType::Struct(fs) = f.data_type() else {
                    return Err(invalid_variant(format!(
                        "shredded object field `{}`{path} must be a group of value/typed_value",
                        f.name()
                    )));
                };
                check_group(fs, &format!("{path}.{}", f.name()))?;
            }
            Ok(())
        }
        other => Err(invalid_variant(format!(
            "Unsupported shredded value type{path}: {other}"
        ))),
    }
}

#[recursive::recursive]
fn append_group(
    b: &mut VariantBuilder,
    m: Metadata<'_>,
    g: &Group<'_>,
    i: usize,
    depth: usize,
) -> Result<()> {
    if depth > crate::codec::DEFAULT_MAX_DEPTH {
        return Err(codec_err(crate::codec::VariantError::DepthLimitExceeded(
            crate::codec::DEFAULT_MAX_DEPTH,
        )));
    }
    let value = match g.value {
        Some(v) => binary_at(v, i)?,
        None => None,
    };
    let typed = g.typed.filter(|t| t.is_valid(i));
    match (typed, value) {
        (None, None) => b.null(),
        (None, Some(v)) => b
            .append_variant(Variant::with_metadata(m, v))
            .map_err(codec_err)?,
        (Some(t), v) => {
            if let Some(s) = t.as_struct_opt() {
                append_object(b, m, s, i, v, depth)?;
            } else if v.is_some() {
                return Err(invalid_variant(
                    "Invalid variant, conflicting value and typed_value",
                ));
            } else {
                append_typed(b, m, t, i, depth)?;
            }
        }
    }
    Ok(())
}

fn append_object(
    b: &mut VariantBuilder,
    m: Metadata<'_>,
    s: &StructArray,
    i: usize,
    residual: Option<&[u8]>,
    depth: usize,
) -> Result<()> {
    b.begin_object();
    let DataType::Struct(fields) = s.data_type() else {
        unreachable!()
    };
    for (field, column) in fields.iter().zip(s.columns()) {
        let Some(fs) = column.as_struct_opt() else {
            return Err(invalid_variant(format!(
                "shredded object field `{}` must be a group of value/typed_value",
                field.name()
            )));
        };
        let g = Group::of(fs);
        if fs.is_valid(i) && g.present(i) {
            b.key(field.name());
            append_group(b, m, &g, i, depth + 1)?;
        }
    }
    if let Some(v) = residual {
        let v = Variant::with_metadata(m, v);
        match v.get().map_err(codec_err)? {
            Value::Object(obj) => {
                obj.check_field_sizes().map_err(codec_err)?;
                for j in 0..obj.len() {
                    let key = obj.key(j).map_err(codec_err)?;
                    if fields.find(key).is_some() {
                        continue; // invalid input: the shredded column wins
                    }
                    b.key(key);
                    b.append_variant(obj.value(j).map_err(codec_err)?)
                        .map_err(codec_err)?;
                }
            }
            _ => {
                return Err(invalid_variant(
                    "invalid shredded variant: typed_value is an object but value is not an object",
                ));
            }
        }
    }
    b.end_object().map_err(codec_err)
}

fn append_typed(
    b: &mut VariantBuilder,
    m: Metadata<'_>,
    t: &ArrayRef,
    i: usize,
    depth: usize,
) -> Result<()> {
    match t.data_type() {
        DataType::Boolean => b.boolean(t.as_boolean().value(i)),
        DataType::Int8 => b.int8(t.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => b.int16(t.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => b.int32(t.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => b.int64(t.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => b.float(t.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => b.double(t.as_primitive::<Float64Type>().value(i)),
        DataType::Decimal32(p, s) => decimal(
            b,
            t.as_primitive::<Decimal32Type>().value(i) as i128,
            *p,
            *s,
        )?,
        DataType::Decimal64(p, s) => decimal(
            b,
            t.as_primitive::<Decimal64Type>().value(i) as i128,
            *p,
            *s,
        )?,
        DataType::Decimal128(p, s) => {
            decimal(b, t.as_primitive::<Decimal128Type>().value(i), *p, *s)?
        }
        DataType::Date32 => b.date(t.as_primitive::<Date32Type>().value(i)),
        DataType::Time64(TimeUnit::Microsecond) => {
            b.time_micros(t.as_primitive::<Time64MicrosecondType>().value(i))
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            let v = t.as_primitive::<TimestampMicrosecondType>().value(i);
            if tz.is_some() {
                b.timestamp_micros(v)
            } else {
                b.timestamp_ntz_micros(v)
            }
        }
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
            let v = t.as_primitive::<TimestampNanosecondType>().value(i);
            if tz.is_some() {
                b.timestamp_nanos(v)
            } else {
                b.timestamp_ntz_nanos(v)
            }
        }
        DataType::Utf8 => b.string(t.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => b.string(t.as_string::<i64>().value(i)),
        DataType::Utf8View => b.string(t.as_string_view().value(i)),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            b.binary(binary_at(t, i)?.unwrap_or_default())
        }
        DataType::FixedSizeBinary(16) => {
            let bytes: [u8; 16] = t
                .as_fixed_size_binary()
                .value(i)
                .try_into()
                .expect("16 bytes");
            b.uuid(bytes)
        }
        DataType::List(_) => {
            let l = t.as_list::<i32>();
            let offsets = l.value_offsets();
            list(
                b,
                m,
                l.values(),
                offsets[i] as usize,
                offsets[i + 1] as usize,
                depth,
            )?
        }
        DataType::LargeList(_) => {
            let l = t.as_list::<i64>();
            let offsets = l.value_offsets();
            list(
                b,
                m,
                l.values(),
                offsets[i] as usize,
                offsets[i + 1] as usize,
                depth,
            )?
        }
        DataType::ListView(_) => {
            let l = t.as_list_view::<i32>();
            let start = l.value_offsets()[i] as usize;
            let end = start + l.value_sizes()[i] as usize;
            list(b, m, l.values(), start, end, depth)?
        }
        DataType::LargeListView(_) => {
            let l = t.as_list_view::<i64>();
            let start = l.value_offsets()[i] as usize;
            let end = start + l.value_sizes()[i] as usize;
            list(b, m, l.values(), start, end, depth)?
        }
        DataType::FixedSizeList(_, n) => {
            let l = t.as_fixed_size_list();
            let n = *n as usize;
            list(b, m, l.values(), i * n, (i + 1) * n, depth)?
        }
        other => {
            return Err(invalid_variant(format!(
                "unsupported shredded variant type {other}"
            )));
        }
    }
    Ok(())
}

fn decimal(b: &mut VariantBuilder, unscaled: i128, precision: u8, scale: i8) -> Result<()> {
    if !(0..=38).contains(&scale) {
        return Err(invalid_variant(format!(
            "shredded decimal scale {scale} is out of range"
        )));
    }
    let scale = scale as u8;
    // a value wider than its column's precision (a corrupt file) keeps all its digits
    let precision = u32::from(precision).max(decimal_digits(unscaled));
    if precision <= 9 {
        b.decimal4(unscaled as i32, scale);
    } else if precision <= 18 {
        b.decimal8(unscaled as i64, scale);
    } else {
        b.decimal16(unscaled, scale);
    }
    Ok(())
}

fn list(
    b: &mut VariantBuilder,
    m: Metadata<'_>,
    elements: &ArrayRef,
    start: usize,
    end: usize,
    depth: usize,
) -> Result<()> {
    let Some(es) = elements.as_struct_opt() else {
        return Err(invalid_variant(
            "shredded array elements must be groups of value/typed_value",
        ));
    };
    let g = Group::of(es);
    b.begin_array();
    for j in start..end {
        append_group(b, m, &g, j, depth + 1)?;
    }
    b.end_array();
    Ok(())
}

/// Reads `path` straight from the shredded columns when the answer is there for every row:
/// each path segment is a key with a shredded field, and the leaf's `typed_value` has exactly
/// `return_type` with no row falling back to its `value` column. Returns the leaf column (its
/// data not copied) with the NULLs of every level merged in, or None when the general path must
/// be taken.
pub fn extract_shredded(
    array: &StructArray,
    path: &crate::codec::VariantPath,
    return_type: &DataType,
) -> Option<ArrayRef> {
    use crate::codec::PathSegment;
    use datafusion::arrow::array::make_array;
    use datafusion::arrow::buffer::NullBuffer;

    let mut nulls = NullBuffer::union(array.nulls(), None);
    let mut group = array;
    for segment in path.segments() {
        let PathSegment::Key(key) = segment else {
            return None;
        };
        let typed = group.column_by_name("typed_value")?.as_struct_opt()?;
        // Rows whose value is not an object (typed_value NULL) have no such field: NULL.
        nulls = NullBuffer::union(nulls.as_ref(), typed.nulls());
        let field = typed.column_by_name(key)?.as_struct_opt()?;
        nulls = NullBuffer::union(nulls.as_ref(), field.nulls());
        group = field;
    }
    if path.is_root() {
        return None;
    }
    if group
        .column_by_name("value")
        .is_some_and(|v| v.null_count() != v.len())
    {
        return None; // some rows hold a value that is not of the shredded type
    }
    let leaf = group.column_by_name("typed_value")?;
    if leaf.data_type() != return_type {
        return None;
    }
    let merged = NullBuffer::union(nulls.as_ref(), leaf.nulls());
    if merged.as_ref().map(NullBuffer::null_count) == leaf.nulls().map(NullBuffer::null_count) {
        return Some(Arc::clone(leaf));
    }
    let data = leaf.to_data().into_builder().nulls(merged).build().ok()?;
    Some(make_array(data))
}
