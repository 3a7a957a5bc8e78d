//! `schema_of_variant` straight from shredded columns: each row's schema is built from its typed
//! columns and residual `value`s without reassembling the variant first. It is the schema
//! `schema_of_variant` gives for the reassembled value: typed primitives are typed by their
//! variant encoding, residual values by [`VariantSchema::of`], and a shredded field wins over a
//! residual field of its name, as in the reassembly. The text is written as the row is read
//! ([`write_group_schema`]) where nothing merges: objects without a residual, and residual values
//! (written straight too, [`VariantSchema::write_of`]); the rest is built as a tree first.
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use crate::variant_array::invalid_variant;
use datafusion::arrow::array::{Array, ArrayRef, StringBuilder, StructArray};
use datafusion::common::Result;

use super::codec_err;
use super::reassemble::{GroupPlan, ShreddedRows, Typed, is_shredded, residual_object};
use crate::codec::{EMPTY_METADATA, Metadata, Variant};
use crate::variant_schema::{VariantSchema, write_key};

/// The schema text of every row of the shredded variant column `array` (SQL NULL stays NULL),
/// as `schema_of_variant` gives it for the reassembled rows; `function` names the caller in
/// errors.
pub fn shredded_schemas(function: &str, array: &StructArray) -> Result<ArrayRef> {
    let column = ShreddedRows::new(array)?;
    let plan = &column.plan;
    let mut out = StringBuilder::with_capacity(array.len(), array.len() * 16);
    let mut scalar = Vec::new();
    let mut text = String::new();
    // (a struct may repeat a field name; such a plan's objects merge their fields in the tree)
    let distinct_names = names_distinct(plan);
    for i in 0..array.len() {
        let Some(m) = column.metadata(i) else {
            out.append_null();
            continue;
        };
        let meta =
            Metadata::try_new(m).map_err(|e| crate::variant_array::codec_error(function, e))?;
        text.clear();
        // a missing top-level value reads as a variant null
        let written = if distinct_names {
            write_group_schema(meta, plan, i, 0, &mut scalar, &mut text)?
        } else {
            write_tree_schema(meta, plan, i, 0, &mut scalar, &mut text)?
        };
        if !written {
            text.push_str("VOID");
        }
        out.append_value(&text);
    }
    Ok(Arc::new(out.finish()))
}

/// True when no object of `plan` repeats a field name (its fields are sorted by name).
#[recursive::recursive]
fn names_distinct(plan: &GroupPlan<'_>) -> bool {
    match plan.typed.as_ref().map(|(_, typed)| typed) {
        Some(Typed::Object(fields)) => {
            fields.windows(2).all(|w| w[0].name != w[1].name)
                && fields.iter().all(|f| names_distinct(&f.group))
        }
        Some(Typed::Array(_, element)) => names_distinct(element),
        Some(Typed::Primitive(_)) | None => true,
    }
}

/// Appends the text of [`group_schema`]'s schema to `out`, for a plan whose objects repeat no
/// field name ([`names_distinct`]); false (nothing written) when the value is missing. An object
/// without a residual and a residual value are written as they are read; an object with a
/// residual (whose fields merge with the shredded ones), an array (whose elements merge) and a
/// typed primitive go through the tree.
#[recursive::recursive]
fn write_group_schema(
    meta: Metadata<'_>,
    g: &GroupPlan<'_>,
    i: usize,
    depth: usize,
    scalar: &mut Vec<u8>,
    out: &mut String,
) -> Result<bool> {
    let value = g.value.as_ref().and_then(|v| v.get(i));
    let typed = g.typed.as_ref().filter(|(t, _)| t.is_valid(i));
    match (typed, value) {
        (None, None) => return Ok(false),
        (None, Some(bytes)) => {
            VariantSchema::write_of_at_depth(Variant::with_metadata(meta, bytes), depth, out)
                .map_err(codec_err)?;
        }
        (Some((_, Typed::Object(fields))), None) => {
            out.push_str("OBJECT<");
            let mut first = true;
            for f in fields.iter().filter(|f| f.is_present(i)) {
                let mark = out.len();
                if !first {
                    out.push_str(", ");
                }
                write_key(out, f.name).expect("writing to a String");
                out.push_str(": ");
                if write_group_schema(meta, &f.group, i, depth + 1, scalar, out)? {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push('>');
        }
        _ => return write_tree_schema(meta, g, i, depth, scalar, out),
    }
    Ok(true)
}

/// Appends the text of [`group_schema`]'s schema, built as a tree first, to `out`; false
/// (nothing written) when the value is missing.
fn write_tree_schema(
    meta: Metadata<'_>,
    g: &GroupPlan<'_>,
    i: usize,
    depth: usize,
    scalar: &mut Vec<u8>,
    out: &mut String,
) -> Result<bool> {
    let Some(schema) = group_schema(meta, g, i, depth, scalar)? else {
        return Ok(false);
    };
    write!(out, "{schema}").expect("writing to a String");
    Ok(true)
}

/// The schema of group `g` at row `i`, at nesting `depth`; None when the value is missing.
/// `scalar` is a buffer for typed primitives encoded as variants. (The recursion follows the
/// plan, which `GroupPlan::new` refuses deeper than the depth limit; residual values are checked
/// against the limit from `depth`.)
#[recursive::recursive]
fn group_schema(
    meta: Metadata<'_>,
    g: &GroupPlan<'_>,
    i: usize,
    depth: usize,
    scalar: &mut Vec<u8>,
) -> Result<Option<VariantSchema>> {
    let value = g.value.as_ref().and_then(|v| v.get(i));
    let residual_schema = |bytes: &[u8], depth: usize| {
        VariantSchema::of_at_depth(Variant::with_metadata(meta, bytes), depth).map_err(codec_err)
    };
    let Some((_, typed)) = g.typed.as_ref().filter(|(t, _)| t.is_valid(i)) else {
        return value.map(|v| residual_schema(v, depth)).transpose();
    };
    Ok(Some(match typed {
        Typed::Object(fields) => {
            let mut schema = BTreeMap::new();
            if let Some(residual) = value {
                let obj = residual_object(meta, residual)?;
                for j in 0..obj.len() {
                    let key = obj.key(j).map_err(codec_err)?;
                    if is_shredded(fields, key.as_bytes()) {
                        continue;
                    }
                    let child = obj.value(j).map_err(codec_err)?;
                    let child = VariantSchema::of_at_depth(child, depth + 1).map_err(codec_err)?;
                    schema.insert(key.to_string(), child);
                }
            }
            for f in fields.iter().filter(|f| f.is_present(i)) {
                if let Some(child) = group_schema(meta, &f.group, i, depth + 1, scalar)? {
                    schema.insert(f.name.to_string(), child);
                }
            }
            VariantSchema::Object(schema)
        }
        _ if value.is_some() => {
            return Err(invalid_variant(
                "Invalid variant, conflicting value and typed_value",
            ));
        }
        Typed::Primitive(p) => {
            scalar.clear();
            p.write(i, scalar);
            let v = Variant::try_new(EMPTY_METADATA, scalar).map_err(codec_err)?;
            VariantSchema::of(v).map_err(codec_err)?
        }
        Typed::Array(lists, element) => {
            let mut merged = VariantSchema::Void;
            for j in lists.range(i) {
                // a missing element reads as a variant null
                if let Some(e) = group_schema(meta, element, j, depth + 1, scalar)? {
                    merged = merged.merge(e);
                }
            }
            VariantSchema::Array(Box::new(merged))
        }
    }))
}
