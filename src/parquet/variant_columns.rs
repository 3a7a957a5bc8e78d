//! Which top-level columns of a Parquet file hold variants, and putting the `arrow.parquet.variant`
//! extension back on them in an Arrow schema.
//!
//! A column is a variant when its Parquet group carries the `VARIANT` logical type, or, for files
//! written by Spark 4.0 before the annotation existed, when Spark's own schema (the JSON in the
//! key-value metadata [`SPARK_ROW_METADATA_KEY`]) gives it the type `"variant"`.
use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

pub(crate) use crate::arrow_nested::changed_fields;
use crate::arrow_nested::with_inner_fields_changed;
use crate::codec::{JsonParser, Value, Variant, VariantBuilder};
use crate::variant_array::{has_variant_shape, is_variant_field, variant_extension_metadata};

/// The key-value metadata key under which Spark stores its schema (as JSON) in Parquet files.
pub const SPARK_ROW_METADATA_KEY: &str = "org.apache.spark.sql.parquet.row.metadata";

/// Why a top-level column is read as a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VariantMark {
    /// The Parquet group carries the `VARIANT` logical type (or the file's embedded Arrow schema
    /// gives the field the extension).
    Annotated,
    /// Spark's schema in the key-value metadata says `"variant"` (the group is not annotated).
    Spark,
}

/// The top-level variant columns of one or more Parquet files: `(column name, why)`.
pub type VariantColumns = BTreeSet<(String, VariantMark)>;

/// Adds the variant columns of one Parquet file (or of several whose schemas merged) to `out`,
/// given the Arrow schema the parquet crate derives from it *with* metadata (DataFusion's
/// `skip_metadata = false`).
///
/// The parquet crate (feature `variant_experimental`) tags groups annotated `VARIANT` with the
/// `arrow.parquet.variant` extension; a field of an embedded Arrow schema that had the extension
/// keeps it too. Spark's schema, which the crate copies from the key-value metadata into the
/// schema metadata, is read with our own JSON parser. An unreadable Spark schema is ignored (the
/// column is then read as a plain struct): it is a hint, not part of the data.
pub fn collect_variant_columns(file_schema: &Schema, out: &mut VariantColumns) {
    for field in file_schema.fields() {
        if is_variant_field(field) {
            out.insert((field.name().clone(), VariantMark::Annotated));
        }
    }
    if let Some(json) = file_schema.metadata().get(SPARK_ROW_METADATA_KEY) {
        for name in spark_variant_fields(json) {
            out.insert((name, VariantMark::Spark));
        }
    }
}

/// The names of the top-level fields whose type is `"variant"` in a Spark schema JSON
/// (`{"type":"struct","fields":[{"name":"v","type":"variant",...},...]}`); empty when the text is
/// not such a schema.
pub fn spark_variant_fields(json: &str) -> Vec<String> {
    let mut builder = VariantBuilder::new();
    if JsonParser::new().parse(json, &mut builder).is_err() {
        return vec![];
    }
    let Ok(schema) = Variant::try_new(builder.metadata(), builder.value()) else {
        return vec![];
    };
    spark_variant_fields_of(schema).unwrap_or_default()
}

fn spark_variant_fields_of(schema: Variant<'_>) -> Option<Vec<String>> {
    let Value::Object(schema) = schema.get().ok()? else {
        return None;
    };
    let Value::Array(fields) = schema.get("fields").ok()??.get().ok()? else {
        return None;
    };
    let text = |object: &crate::codec::ObjectView<'_>, key: &str| -> Option<String> {
        match object.get(key).ok()??.get().ok()? {
            Value::String(s) => Some(s.to_string()),
            _ => None,
        }
    };
    let mut names = vec![];
    for field in fields.iter() {
        let Ok(Value::Object(field)) = field.and_then(|f| f.get()) else {
            continue;
        };
        if text(&field, "type").as_deref() == Some("variant")
            && let Some(name) = text(&field, "name")
        {
            names.push(name);
        }
    }
    Some(names)
}

/// `schema` with the `arrow.parquet.variant` extension on each top-level field listed in
/// `columns`: an annotated column must be a struct, a Spark-marked one must also have the variant
/// shape (binary `metadata` and `value`). Only the two extension keys are added; the field's other
/// metadata is kept. Returns `schema` itself when nothing changes.
pub fn with_variant_extension(schema: &SchemaRef, columns: &VariantColumns) -> SchemaRef {
    if columns.is_empty() {
        return Arc::clone(schema);
    }
    let marked = |field: &Field| {
        let annotated = columns.contains(&(field.name().clone(), VariantMark::Annotated));
        let spark = columns.contains(&(field.name().clone(), VariantMark::Spark));
        match field.data_type() {
            DataType::Struct(_) if annotated => true,
            data_type => spark && has_variant_shape(data_type),
        }
    };
    with_fields_changed(schema, |field| {
        if is_variant_field(field) || !marked(field) {
            return None;
        }
        let mut metadata = field.metadata().clone();
        metadata.extend(variant_extension_metadata());
        Some(Arc::new(field.as_ref().clone().with_metadata(metadata)))
    })
}

/// `schema` with each variant field (one carrying the extension, at any depth: in structs, lists
/// and maps too) of the unshredded layout `Struct{metadata, value}` (both non-null, of the binary
/// type the column's `metadata` has), whatever its layout in the files: shredding is how a file
/// stores a variant, not part of the table's type. Files of any layout (shredded or not, shredded
/// differently) are brought to it by the per-file expression adapter, which reads paths from
/// their shredded leaves. Returns `schema` itself when nothing changes.
pub fn with_unshredded_variant_types(schema: &SchemaRef) -> SchemaRef {
    with_fields_changed(schema, unshredded_field)
}

/// `field` with the variants in it (itself, or nested) of the unshredded layout; None when
/// nothing changes.
#[recursive::recursive]
fn unshredded_field(field: &FieldRef) -> Option<FieldRef> {
    let changed =
        |data_type: DataType| Some(Arc::new(field.as_ref().clone().with_data_type(data_type)));
    let data_type = match field.data_type() {
        DataType::Struct(children) if is_variant_field(field) => {
            let binary = match children.find("metadata").map(|(_, f)| f.data_type()) {
                Some(t @ (DataType::Binary | DataType::LargeBinary | DataType::BinaryView)) => {
                    t.clone()
                }
                _ => DataType::Binary,
            };
            let unshredded = DataType::Struct(Fields::from(vec![
                Field::new("metadata", binary.clone(), false),
                Field::new("value", binary, false),
            ]));
            return (field.data_type() != &unshredded).then(|| changed(unshredded))?;
        }
        other => with_inner_fields_changed(other, unshredded_field)?,
    };
    changed(data_type)
}

/// `schema` with each top-level field for which `change` gives a new one replaced; `schema`
/// itself when `change` gives none.
pub(crate) fn with_fields_changed(
    schema: &SchemaRef,
    change: impl FnMut(&FieldRef) -> Option<FieldRef>,
) -> SchemaRef {
    match changed_fields(schema.fields(), change) {
        Some(fields) => Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        None => Arc::clone(schema),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_schema_fields() {
        let json = r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{}},
            {"name":"v","type":"variant","nullable":true,"metadata":{}},
            {"name":"s","type":{"type":"struct","fields":[{"name":"w","type":"variant"}]}},
            {"name":"w","type":"variant","nullable":false,"metadata":{}}]}"#;
        assert_eq!(spark_variant_fields(json), vec!["v", "w"]);
        assert!(spark_variant_fields("not json").is_empty());
        assert!(spark_variant_fields(r#"{"type":"struct"}"#).is_empty());
        assert!(spark_variant_fields(r#"[1, 2]"#).is_empty());
    }

    #[test]
    fn extension_only_where_marked_and_shaped() {
        use std::collections::HashMap;
        let shaped = crate::variant_array::variant_data_type();
        let other = DataType::Struct(vec![Field::new("x", DataType::Int32, true)].into());
        let keep = HashMap::from([("PARQUET:field_id".to_string(), "7".to_string())]);
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("a", other.clone(), true).with_metadata(keep.clone()),
            Field::new("s", shaped.clone(), true),
            Field::new("n", other, true),
            Field::new("i", DataType::Int64, true),
            Field::new("plain", shaped, true),
        ]));
        let columns = VariantColumns::from([
            ("a".to_string(), VariantMark::Annotated),
            ("s".to_string(), VariantMark::Spark),
            ("n".to_string(), VariantMark::Spark),
            ("i".to_string(), VariantMark::Annotated),
        ]);
        let out = with_variant_extension(&schema, &columns);
        let marked: Vec<_> = out.fields().iter().map(|f| is_variant_field(f)).collect();
        assert_eq!(marked, [true, true, false, false, false]);
        assert_eq!(
            out.field(0).metadata().get("PARQUET:field_id").unwrap(),
            "7"
        );
        // nothing to do: the same schema comes back
        let same = with_variant_extension(&schema, &VariantColumns::new());
        assert!(Arc::ptr_eq(&same, &schema));
    }
}
