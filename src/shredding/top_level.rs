//! The top level of each row of a shredded variant column, for the functions that look no
//! deeper (`is_variant_null`, `variant_array_length`, `variant_object_keys`): what kind of value
//! a row holds, an array's length and an object's keys, read from the shredded columns without
//! reassembling the row. An object's keys come in the order the reassembled object stores them.
use crate::variant_array::invalid_variant;
use datafusion::arrow::array::{Array, StructArray};
use datafusion::common::Result;

use super::codec_err;
use super::reassemble::{ShreddedRows, Typed, is_shredded, residual_object};
use crate::codec::{Metadata, Variant};

/// The top level of one row.
pub enum TopLevel<'a> {
    /// SQL NULL.
    Null,
    /// No value (a variant null).
    Missing,
    /// A value stored unshredded.
    Residual(Variant<'a>),
    /// A value of a shredded primitive type.
    Primitive,
    /// A shredded array of this many elements.
    Array(usize),
    /// A shredded object with these keys.
    Object(&'a [&'a str]),
}

/// Calls `f` with the top level of every row of the shredded variant column `array`, in order.
pub fn for_each_top_level(
    array: &StructArray,
    mut f: impl FnMut(TopLevel<'_>) -> Result<()>,
) -> Result<()> {
    let column = ShreddedRows::new(array)?;
    let plan = &column.plan;
    let mut keys: Vec<&str> = vec![];
    for i in 0..array.len() {
        let Some(m) = column.metadata(i) else {
            f(TopLevel::Null)?;
            continue;
        };
        let meta = Metadata::try_new(m).map_err(codec_err)?;
        let value = plan.value.as_ref().and_then(|v| v.get(i));
        let Some((_, typed)) = plan.typed.as_ref().filter(|(t, _)| t.is_valid(i)) else {
            f(match value {
                Some(v) => TopLevel::Residual(Variant::with_metadata(meta, v)),
                None => TopLevel::Missing,
            })?;
            continue;
        };
        match typed {
            Typed::Object(fields) => {
                keys.clear();
                keys.extend(fields.iter().filter(|f| f.is_present(i)).map(|f| f.name));
                if let Some(residual) = value {
                    let shredded = keys.len();
                    let obj = residual_object(meta, residual)?;
                    for j in 0..obj.len() {
                        let key = obj.key(j).map_err(codec_err)?;
                        if !is_shredded(fields, key.as_bytes()) {
                            keys.push(key);
                        }
                    }
                    // sorted, as the reassembled object stores them when both kinds are there
                    if keys.len() > shredded && shredded > 0 {
                        keys.sort();
                    }
                }
                f(TopLevel::Object(&keys))?;
            }
            _ if value.is_some() => {
                return Err(invalid_variant(
                    "Invalid variant, conflicting value and typed_value",
                ));
            }
            Typed::Primitive(_) => f(TopLevel::Primitive)?,
            Typed::Array(lists, _) => f(TopLevel::Array(lists.range(i).len()))?,
        }
    }
    Ok(())
}
