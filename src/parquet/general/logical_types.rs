//! Parquet logical types that the parquet crate's Arrow schema conversion reads as a plain type,
//! and how our format corrects the table schema for them (per `LogicalTypes.md`):
//!
//! - `ENUM` (or the legacy `ENUM` ConvertedType) is a UTF-8 string, not a binary: the column's
//!   binary type becomes the matching string type (DataFusion casts the file's binary to it).
//! - `INTERVAL` is `Interval(MonthDayNano)`, read exactly (see [`super::interval`]).
//! - `UUID` gets the canonical `arrow.uuid` extension, `JSON` (or the legacy `JSON`) the
//!   canonical `arrow.json` extension.
//! - `GEOMETRY` / `GEOGRAPHY` get the GeoArrow `geoarrow.wkb` extension, with the CRS (default
//!   `OGC:CRS84`) and, for `GEOGRAPHY`, the edge interpolation algorithm (default `spherical`) in
//!   the extension metadata: `{"crs":"OGC:CRS84","edges":"spherical"}`.
//!
//! DataFusion drops top-level field metadata from inferred schemas (`skip_metadata`), so these
//! are derived from the files' Parquet schemas, as the variant extension is. They apply at any
//! depth (fields of structs, elements of lists, keys and values of maps).
use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, SchemaRef};
use parquet::basic::{ConvertedType, EdgeInterpolationAlgorithm, LogicalType, Repetition};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

use super::interval::INTERVAL_TYPE;
use crate::codec::format::write_json_string;
use crate::parquet::variant_columns::{changed_fields, with_fields_changed};
use crate::variant_array::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY};

pub use crate::variant_array::UUID_EXTENSION_NAME;
/// The canonical Arrow extension name for JSON text.
pub const JSON_EXTENSION_NAME: &str = "arrow.json";
/// The GeoArrow extension name for geometries and geographies as WKB binaries.
pub const WKB_EXTENSION_NAME: &str = "geoarrow.wkb";
/// The CRS a `GEOMETRY` / `GEOGRAPHY` column without one uses.
pub const DEFAULT_CRS: &str = "OGC:CRS84";

/// What to change in one primitive field (at any depth) of the Arrow schema.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogicalTypeFixup {
    /// Read the binary column as a string (`ENUM`).
    pub as_string: bool,
    /// Read the column as `Interval(MonthDayNano)` (`INTERVAL`, see [`super::interval`]).
    pub as_interval: bool,
    /// The extension name and its metadata (`None`: no metadata key) to put on the field.
    pub extension: Option<(&'static str, Option<String>)>,
}

/// The Parquet types of the top-level columns of one or more Parquet files that need a fix-up,
/// by column name (the first file whose column needs one decides): what the fix-ups are read
/// from.
pub type ParquetColumnTypes = BTreeMap<String, TypePtr>;

/// Adds the top-level columns of the Parquet schema `schema` that need a fix-up, at any depth,
/// to `out` (those it has already stay).
pub fn collect_logical_type_fixups(schema: &SchemaDescriptor, out: &mut ParquetColumnTypes) {
    for field in schema.root_schema().get_fields() {
        if !out.contains_key(field.name()) && needs_fixup(field) {
            out.insert(field.name().to_string(), Arc::clone(field));
        }
    }
}

/// True when `parquet` or a type inside it has a fix-up.
#[recursive::recursive]
fn needs_fixup(parquet: &Type) -> bool {
    if parquet.is_primitive() {
        return fixup_of(parquet).is_some();
    }
    parquet.get_fields().iter().any(|f| needs_fixup(f))
}

/// The fix-up of the primitive `field` (one of the three kinds, never several).
fn fixup_of(field: &Type) -> Option<LogicalTypeFixup> {
    if !field.is_primitive() {
        return None;
    }
    let info = field.get_basic_info();
    let extension = |name| {
        Some(LogicalTypeFixup {
            extension: Some(name),
            ..Default::default()
        })
    };
    match (info.logical_type_ref(), info.converted_type()) {
        (Some(LogicalType::Enum), _) | (None, ConvertedType::ENUM) => Some(LogicalTypeFixup {
            as_string: true,
            ..Default::default()
        }),
        (None, ConvertedType::INTERVAL) => Some(LogicalTypeFixup {
            as_interval: true,
            ..Default::default()
        }),
        (Some(LogicalType::Uuid), _) => extension((UUID_EXTENSION_NAME, None)),
        // arrow-rs writes the canonical JSON extension's metadata as ""
        (Some(LogicalType::Json), _) | (None, ConvertedType::JSON) => {
            extension((JSON_EXTENSION_NAME, Some(String::new())))
        }
        (Some(LogicalType::Geometry(geometry)), _) => {
            extension((WKB_EXTENSION_NAME, Some(wkb_metadata(&geometry.crs, None))))
        }
        (Some(LogicalType::Geography(geography)), _) => {
            let edges = geography
                .algorithm
                .unwrap_or(EdgeInterpolationAlgorithm::SPHERICAL);
            extension((
                WKB_EXTENSION_NAME,
                Some(wkb_metadata(&geography.crs, Some(edges))),
            ))
        }
        _ => None,
    }
}

/// GeoArrow extension metadata: `{"crs":..}` plus `"edges"` for non-planar edges.
fn wkb_metadata(crs: &Option<String>, edges: Option<EdgeInterpolationAlgorithm>) -> String {
    let mut out = b"{\"crs\":".to_vec();
    write_json_string(&mut out, crs.as_deref().unwrap_or(DEFAULT_CRS));
    if let Some(edges) = edges {
        out.extend_from_slice(b",\"edges\":");
        let name = match edges {
            EdgeInterpolationAlgorithm::SPHERICAL => "spherical".to_string(),
            EdgeInterpolationAlgorithm::VINCENTY => "vincenty".to_string(),
            EdgeInterpolationAlgorithm::THOMAS => "thomas".to_string(),
            EdgeInterpolationAlgorithm::ANDOYER => "andoyer".to_string(),
            EdgeInterpolationAlgorithm::KARNEY => "karney".to_string(),
            other => format!("{other:?}").to_lowercase(),
        };
        write_json_string(&mut out, &name);
    }
    out.push(b'}');
    String::from_utf8(out).expect("JSON text of strings is UTF-8")
}

/// `schema` with the fix-ups of `fixups`' Parquet types applied to its fields, at any depth:
/// binaries read as strings where asked, extensions added where the field has none yet and its
/// type suits the extension. Returns `schema` itself when nothing changes.
pub fn with_logical_type_fixups(schema: &SchemaRef, fixups: &ParquetColumnTypes) -> SchemaRef {
    if fixups.is_empty() {
        return Arc::clone(schema);
    }
    with_fields_changed(schema, |field| {
        let parquet = fixups.get(field.name())?;
        fixed(field, parquet, false).map(Arc::new)
    })
}

/// `field` (the parquet crate's Arrow field for the Parquet type `parquet`) with the fix-ups of
/// `parquet` and of the types inside it; None when nothing changes. `as_element`: `parquet` is
/// a repeated field already taken as the list `field` is an element of (a legacy list is its
/// own element).
#[recursive::recursive]
fn fixed(field: &Field, parquet: &Type, as_element: bool) -> Option<Field> {
    let list_item = |item: &FieldRef| -> Option<FieldRef> {
        let element = list_element(parquet, as_element)?;
        let own = std::ptr::eq(element, parquet);
        fixed(item, element, own).map(Arc::new)
    };
    let data_type = match field.data_type() {
        DataType::List(item) => DataType::List(list_item(item)?),
        DataType::LargeList(item) => DataType::LargeList(list_item(item)?),
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(list_item(item)?, *n),
        DataType::Map(entries, sorted) => {
            let key_value = match group_fields(parquet) {
                [key_value] => key_value,
                _ => return None,
            };
            DataType::Map(Arc::new(fixed(entries, key_value, true)?), *sorted)
        }
        DataType::Struct(children) if !parquet.is_primitive() => {
            DataType::Struct(changed_fields(children, |c| {
                let p = group_fields(parquet)
                    .iter()
                    .find(|p| p.name() == c.name())?;
                fixed(c, p, false).map(Arc::new)
            })?)
        }
        _ if parquet.is_primitive() => {
            return fixed_field(field, &fixup_of(parquet)?);
        }
        _ => return None,
    };
    Some(field.clone().with_data_type(data_type))
}

/// The element type of the Parquet list `parquet`, per the backward-compatibility rules of
/// `LogicalTypes.md`: a repeated field is its own element; in a `LIST` group, the repeated field
/// is the element unless it is a group of one field not named `array` or `<list>_tuple`, whose
/// field is.
fn list_element(parquet: &Type, as_element: bool) -> Option<&Type> {
    if is_repeated(parquet) {
        // (once: a repeated field taken as its own list is not a list again)
        return (!as_element).then_some(parquet);
    }
    let [repeated] = group_fields(parquet) else {
        return None;
    };
    // (as the parquet crate decides: the one-tuple names count only for an unannotated
    // repeated group whose single field is not repeated)
    let one_tuple = !is_list_group(repeated)
        && !matches!(group_fields(repeated), [f] if is_repeated(f))
        && (repeated.name() == "array" || repeated.name() == format!("{}_tuple", parquet.name()));
    match group_fields(repeated) {
        [element] if !one_tuple => Some(element),
        _ => Some(repeated),
    }
}

/// True for a group annotated `LIST`.
fn is_list_group(parquet: &Type) -> bool {
    let info = parquet.get_basic_info();
    !parquet.is_primitive()
        && match info.logical_type_ref() {
            Some(logical_type) => logical_type == &LogicalType::List,
            None => info.converted_type() == ConvertedType::LIST,
        }
}

fn is_repeated(parquet: &Type) -> bool {
    let info = parquet.get_basic_info();
    info.has_repetition() && info.repetition() == Repetition::REPEATED
}

/// The fields of a Parquet group; none for a primitive (whose `get_fields` panics).
fn group_fields(parquet: &Type) -> &[TypePtr] {
    if parquet.is_primitive() {
        &[]
    } else {
        parquet.get_fields()
    }
}

fn fixed_field(field: &Field, fixup: &LogicalTypeFixup) -> Option<Field> {
    let mut out = field.clone();
    let mut changed = false;
    if fixup.as_string {
        let string = match field.data_type() {
            DataType::Binary => Some(DataType::Utf8),
            DataType::LargeBinary => Some(DataType::LargeUtf8),
            DataType::BinaryView => Some(DataType::Utf8View),
            _ => None,
        };
        if let Some(string) = string {
            out = out.with_data_type(string);
            changed = true;
        }
    }
    // (whatever the parquet crate made of it: DayTime, YearMonth from an Arrow schema hint)
    if fixup.as_interval && matches!(field.data_type(), DataType::Interval(_)) {
        out = out.with_data_type(INTERVAL_TYPE);
        changed = true;
    }
    if let Some((name, metadata)) = &fixup.extension
        && !field.metadata().contains_key(EXTENSION_NAME_KEY)
        && extension_fits(name, out.data_type())
    {
        let mut md = field.metadata().clone();
        md.insert(EXTENSION_NAME_KEY.to_string(), name.to_string());
        if let Some(metadata) = metadata {
            md.insert(EXTENSION_METADATA_KEY.to_string(), metadata.clone());
        }
        out = out.with_metadata(md);
        changed = true;
    }
    changed.then_some(out)
}

fn extension_fits(name: &str, data_type: &DataType) -> bool {
    match name {
        UUID_EXTENSION_NAME => data_type == &DataType::FixedSizeBinary(16),
        JSON_EXTENSION_NAME => matches!(
            data_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ),
        _ => matches!(
            data_type,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crs_is_escaped_and_edges_named() {
        assert_eq!(
            wkb_metadata(
                &Some("a\"b".into()),
                Some(EdgeInterpolationAlgorithm::KARNEY)
            ),
            r#"{"crs":"a\"b","edges":"karney"}"#
        );
        assert_eq!(wkb_metadata(&None, None), r#"{"crs":"OGC:CRS84"}"#);
    }
}
