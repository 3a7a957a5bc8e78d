//! Full validation of untrusted variant bytes.
use super::error::{Result, VariantError, malformed};
use super::metadata::Metadata;
use super::value::{ContainerLayout, Value, Variant, basic_type, value_size};

/// The default nesting depth limit (Spark's).
pub const DEFAULT_MAX_DEPTH: usize = 1000;

/// Validates `metadata` and `value` completely with the default depth limit.
///
/// Checks the metadata header and dictionary, every value header, bounds, offsets, UTF-8, field-id
/// range, unique object keys, nesting depth, and that no two children of a container share bytes
/// (array elements in offset order, object values anywhere but apart). Objects whose fields are not sorted by key are accepted
/// (DuckDB writes them); lookups on them fall back to a linear scan.
pub fn validate(metadata: &[u8], value: &[u8]) -> Result<()> {
    validate_with_depth(metadata, value, DEFAULT_MAX_DEPTH)
}

/// Like [`validate`] with an explicit depth limit.
pub fn validate_with_depth(metadata: &[u8], value: &[u8], max_depth: usize) -> Result<()> {
    let metadata = Metadata::try_new(metadata)?;
    metadata.validate()?;
    validate_value(Variant::with_metadata(metadata, value), 0, max_depth)
}

/// Validates one value (and its children) against already-validated metadata.
#[recursive::recursive]
pub fn validate_value(v: Variant<'_>, depth: usize, max_depth: usize) -> Result<()> {
    let bytes = v.value_bytes();
    let size = value_size(bytes)?;
    match v.get()? {
        Value::Object(obj) => {
            if depth >= max_depth {
                return Err(VariantError::DepthLimitExceeded(max_depth));
            }
            let layout = ContainerLayout::read(bytes, true)?;
            check_fields(bytes, &layout, size)?;
            let sorted = obj.is_sorted()?;
            if !sorted {
                check_unique_keys(&obj)?;
            }
            for i in 0..obj.len() {
                validate_value(obj.value(i)?, depth + 1, max_depth)?;
            }
        }
        Value::Array(arr) => {
            if depth >= max_depth {
                return Err(VariantError::DepthLimitExceeded(max_depth));
            }
            let layout = ContainerLayout::read(bytes, false)?;
            check_elements(bytes, &layout, size)?;
            for e in arr.iter() {
                validate_value(e?, depth + 1, max_depth)?;
            }
        }
        _ => {
            debug_assert!(bytes[0] & 0x03 <= basic_type::SHORT_STRING);
        }
    }
    Ok(())
}

/// The byte ranges of a container's children, in stored order: each starts inside the
/// container's data and ends within it.
fn child_extents(
    bytes: &[u8],
    layout: &ContainerLayout,
    size: usize,
) -> impl Iterator<Item = Result<(usize, usize)>> {
    (0..layout.num).map(move |i| {
        let start = layout.data_start + layout.offset(bytes, i)?;
        if start >= size {
            return malformed(format!("element {i} starts past the end of its container"));
        }
        let child_size = value_size(&bytes[start..size])?;
        if start + child_size > size {
            return malformed(format!("element {i} extends past the end of its container"));
        }
        Ok((start, start + child_size))
    })
}

/// Array elements lie in their offsets' order, each ending before the next begins (no two share
/// bytes).
fn check_elements(bytes: &[u8], layout: &ContainerLayout, size: usize) -> Result<()> {
    let mut previous_end = layout.data_start;
    for (i, extent) in child_extents(bytes, layout, size).enumerate() {
        let (start, end) = extent?;
        if start < previous_end {
            return malformed(format!(
                "array element {i} overlaps element {} (offsets must increase)",
                i - 1
            ));
        }
        previous_end = end;
    }
    Ok(())
}

/// Object field values may be stored in any order, but no two share bytes.
fn check_fields(bytes: &[u8], layout: &ContainerLayout, size: usize) -> Result<()> {
    // Values stored in field order are checked as they are read; at the first one that is not,
    // all are read again and sorted by where they start.
    let mut previous_end = layout.data_start;
    for extent in child_extents(bytes, layout, size) {
        let (start, end) = extent?;
        if start < previous_end {
            return check_fields_sorted(bytes, layout, size);
        }
        previous_end = end;
    }
    Ok(())
}

/// [`check_fields`] for values out of field order: all read, sorted by where they start.
fn check_fields_sorted(bytes: &[u8], layout: &ContainerLayout, size: usize) -> Result<()> {
    let mut extents = child_extents(bytes, layout, size).collect::<Result<Vec<_>>>()?;
    extents.sort_unstable();
    if extents.windows(2).any(|w| w[1].0 < w[0].1) {
        return malformed("two fields of an object share bytes");
    }
    Ok(())
}

/// Unsorted objects: keys must still be unique.
fn check_unique_keys(obj: &super::value::ObjectView<'_>) -> Result<()> {
    let mut keys = Vec::with_capacity(obj.len());
    for i in 0..obj.len() {
        keys.push(obj.key(i)?);
    }
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(VariantError::DuplicateKey(w[0].to_string()));
    }
    Ok(())
}
