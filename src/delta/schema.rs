//! A Delta table's schema as Arrow, with its variant columns (at any depth) as variants, and the
//! reader features we can honour.
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use datafusion::common::{Result, not_impl_err, plan_err};
use deltalake_core::kernel::{DataType as DeltaType, MetadataValue, StructField, StructType};

use serde_json::{Value, json};

use crate::arrow_nested::with_inner_fields_changed;
use crate::variant_array::{
    is_variant_field, is_variant_like, variant_extension_metadata, variant_field,
};

/// The reader features whose meaning this reader implements; a table that needs any other is
/// refused, naming it.
pub(crate) const READER_FEATURES: &[&str] = &[
    "variantType",
    "variantType-preview",
    "variantShredding",
    "variantShredding-preview",
    "deletionVectors",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "columnMapping",
];

/// An error naming the first of `features` (a protocol's reader features) this reader does not
/// implement.
pub(crate) fn check_reader_features<'a>(features: impl IntoIterator<Item = &'a str>) -> Result<()> {
    for feature in features {
        if !READER_FEATURES.contains(&feature) {
            return not_impl_err!(
                "Delta table: reader feature '{feature}' is not supported (supported: {})",
                READER_FEATURES.join(", ")
            );
        }
    }
    Ok(())
}

/// The columns of `arrow` (a table's schema, `delta` in Arrow form) as its data files name them
/// under column mapping: each column, and each field inside it at any depth (in structs, lists
/// and maps), by its physical name; the types are otherwise the same. With `field_ids`, each
/// field that has a column mapping id carries it as its Parquet field id (as writers give it).
pub(crate) fn physical_fields(
    delta: &StructType,
    arrow: &Schema,
    field_ids: bool,
) -> Result<Vec<FieldRef>> {
    if delta.num_fields() != arrow.fields().len() {
        return plan_err!("Delta table: its schema and its Arrow form differ in width");
    }
    Ok((delta.fields().zip(arrow.fields().iter()))
        .map(|(d, a)| physical_field(d, a, field_ids))
        .collect())
}

/// `field` (the Arrow form of the Delta field `delta`) by its physical name, with its field id
/// where `field_ids` asks.
fn physical_field(delta: &StructField, field: &FieldRef, field_ids: bool) -> FieldRef {
    let name = physical_name(delta).unwrap_or(delta.name());
    let physical = physically_named(delta.data_type(), field, name, field_ids);
    match delta.metadata.get("delta.columnMapping.id") {
        Some(MetadataValue::Number(id)) if field_ids => {
            let mut metadata = physical.metadata().clone();
            metadata.insert(PARQUET_FIELD_ID.to_string(), id.to_string());
            Arc::new(physical.as_ref().clone().with_metadata(metadata))
        }
        _ => physical,
    }
}

/// The Arrow field metadata arrow-rs writes as a Parquet field id.
const PARQUET_FIELD_ID: &str = "PARQUET:field_id";

fn physical_name(field: &StructField) -> Option<&str> {
    match field.metadata.get("delta.columnMapping.physicalName") {
        Some(MetadataValue::String(name)) => Some(name),
        _ => None,
    }
}

/// `field` (of Delta type `delta`) named `name`, the fields inside it by their physical names
/// (and ids, with `field_ids`).
#[recursive::recursive]
fn physically_named(delta: &DeltaType, field: &FieldRef, name: &str, field_ids: bool) -> FieldRef {
    let data_type = match (delta, field.data_type()) {
        (DeltaType::Struct(d), DataType::Struct(children)) if d.num_fields() == children.len() => {
            Some(DataType::Struct(
                (d.fields().zip(children.iter()))
                    .map(|(d, a)| physical_field(d, a, field_ids))
                    .collect(),
            ))
        }
        (DeltaType::Array(d), _) => with_inner_fields_changed(field.data_type(), |element| {
            Some(physically_named(
                d.element_type(),
                element,
                element.name(),
                field_ids,
            ))
        }),
        (DeltaType::Map(d), DataType::Map(entries, _)) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let kv: Fields = vec![
                    physically_named(d.key_type(), &kv[0], kv[0].name(), field_ids),
                    physically_named(d.value_type(), &kv[1], kv[1].name(), field_ids),
                ]
                .into();
                with_inner_fields_changed(field.data_type(), |entries| {
                    Some(Arc::new(
                        entries
                            .as_ref()
                            .clone()
                            .with_data_type(DataType::Struct(kv.clone())),
                    ))
                })
            }
            _ => None,
        },
        _ => None,
    };
    let mut physical = field.as_ref().clone().with_name(name);
    if let Some(data_type) = data_type {
        physical = physical.with_data_type(data_type);
    }
    Arc::new(physical)
}

/// `schema` with every field inside its columns nullable (the columns keep theirs; variants and
/// map keys keep their own shape): the table's columns as SQL plans with them. DataFusion casts
/// an insert's rows to the table's types and has no cast that makes a nested field
/// non-nullable, so a field declared NOT NULL inside a struct, list or map would refuse every
/// append; appends check those fields on the rows instead (`checks`).
pub(crate) fn nested_nullable(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<FieldRef> = (schema.fields().iter())
        .map(|f| {
            let data_type = relaxed(f);
            Arc::new(f.as_ref().clone().with_data_type(data_type))
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The type of `field` with the fields inside it nullable (see [`nested_nullable`]).
#[recursive::recursive]
fn relaxed(field: &Field) -> DataType {
    let nullable = |f: &FieldRef, nullable: bool| -> FieldRef {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(relaxed(f))
                .with_nullable(nullable || f.is_nullable()),
        )
    };
    if is_variant_like(field) {
        return field.data_type().clone();
    }
    match field.data_type() {
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| nullable(f, true)).collect())
        }
        DataType::List(element) => DataType::List(nullable(element, true)),
        DataType::LargeList(element) => DataType::LargeList(nullable(element, true)),
        DataType::Map(entries, sorted) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let kv = vec![nullable(&kv[0], false), nullable(&kv[1], true)];
                let entries = entries
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(kv.into()));
                DataType::Map(Arc::new(entries), *sorted)
            }
            _ => field.data_type().clone(),
        },
        other => other.clone(),
    }
}

/// `arrow` (deltalake's Arrow form of `delta`, a table's schema) with every field that `delta`
/// types as `variant`, at any depth, given the variant extension and the unshredded layout.
pub(crate) fn with_variants(delta: &StructType, arrow: &Schema) -> Result<SchemaRef> {
    if delta.num_fields() != arrow.fields().len() {
        return plan_err!("Delta table: its schema and its Arrow form differ in width");
    }
    let fields = (delta.fields().zip(arrow.fields().iter()))
        .map(|(d, a)| field_with_variants(d.data_type(), a))
        .collect::<Vec<_>>();
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        arrow.metadata().clone(),
    )))
}

/// `field` with the variants `delta` (its Delta type) holds marked.
#[recursive::recursive]
fn field_with_variants(delta: &DeltaType, field: &FieldRef) -> FieldRef {
    let data_type = match (delta, field.data_type()) {
        (DeltaType::Variant(_), _) => {
            let mut marked = variant_field(field.name(), field.is_nullable());
            let mut metadata = field.metadata().clone();
            metadata.extend(variant_extension_metadata());
            marked = marked.with_metadata(metadata);
            return Arc::new(marked);
        }
        (DeltaType::Struct(d), DataType::Struct(children)) if d.num_fields() == children.len() => {
            DataType::Struct(
                (d.fields().zip(children.iter()))
                    .map(|(d, a)| field_with_variants(d.data_type(), a))
                    .collect(),
            )
        }
        (DeltaType::Array(d), DataType::List(element)) => {
            DataType::List(field_with_variants(d.element_type(), element))
        }
        (DeltaType::Array(d), DataType::LargeList(element)) => {
            DataType::LargeList(field_with_variants(d.element_type(), element))
        }
        (DeltaType::Map(d), DataType::Map(entries, sorted)) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let key = field_with_variants(d.key_type(), &kv[0]);
                let value = field_with_variants(d.value_type(), &kv[1]);
                let entries = entries
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(vec![key, value].into()));
                DataType::Map(Arc::new(entries), *sorted)
            }
            _ => return Arc::clone(field),
        },
        _ => return Arc::clone(field),
    };
    Arc::new(field.as_ref().clone().with_data_type(data_type))
}

/// A Delta schema (the log's `schemaString` JSON) for the Arrow `schema` of a new table: its
/// variants as `variant`, at any depth; an Arrow type Delta has no name for is an error.
pub(crate) fn delta_schema(schema: &Schema) -> Result<Value> {
    let fields = (schema.fields().iter())
        .map(delta_field)
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"type": "struct", "fields": fields}))
}

fn delta_field(field: &FieldRef) -> Result<Value> {
    Ok(json!({
        "name": field.name(),
        "type": delta_type(field)?,
        "nullable": field.is_nullable(),
        "metadata": {},
    }))
}

#[recursive::recursive]
fn delta_type(field: &FieldRef) -> Result<Value> {
    if is_variant_field(field) {
        return Ok(json!("variant"));
    }
    Ok(match field.data_type() {
        DataType::Boolean => json!("boolean"),
        DataType::Int8 => json!("byte"),
        DataType::Int16 => json!("short"),
        DataType::Int32 => json!("integer"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => json!("string"),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => json!("binary"),
        DataType::Date32 => json!("date"),
        // (Delta keeps microseconds: finer values are cut to them on the way in)
        DataType::Timestamp(_, Some(_)) => json!("timestamp"),
        DataType::Timestamp(_, None) => json!("timestamp_ntz"),
        DataType::Decimal128(p, s) if *p <= 38 && *s >= 0 => json!(format!("decimal({p},{s})")),
        DataType::List(element) | DataType::LargeList(element) => json!({
            "type": "array",
            "elementType": delta_type(element)?,
            "containsNull": element.is_nullable(),
        }),
        DataType::Struct(children) => json!({
            "type": "struct",
            "fields": children.iter().map(delta_field).collect::<Result<Vec<_>>>()?,
        }),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => json!({
                "type": "map",
                "keyType": delta_type(&kv[0])?,
                "valueType": delta_type(&kv[1])?,
                "valueContainsNull": kv[1].is_nullable(),
            }),
            other => return plan_err!("Delta table: a map of {other} has no Delta type"),
        },
        other => {
            return plan_err!(
                "Delta table: column {} of type {other} has no Delta type",
                field.name()
            );
        }
    })
}

/// The protocol of a new table of `schema` (its Delta form): table features where it holds
/// variants or timestamps without time zone, the oldest protocol otherwise.
pub(crate) fn new_table_protocol(schema: &Value) -> Value {
    let text = schema.to_string();
    let mut features = Vec::new();
    if text.contains("\"variant\"") {
        features.push("variantType");
    }
    if text.contains("\"timestamp_ntz\"") {
        features.push("timestampNtz");
    }
    if features.is_empty() {
        return json!({"minReaderVersion": 1, "minWriterVersion": 2});
    }
    json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": features, "writerFeatures": features})
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, TimeUnit};

    #[test]
    fn unknown_reader_features_are_named() {
        check_reader_features(["variantType", "deletionVectors"]).unwrap();
        let err = check_reader_features(["variantType", "catalogManaged"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("reader feature 'catalogManaged' is not supported"),
            "{err}"
        );
    }

    #[test]
    fn variants_marked_at_any_depth() {
        let delta: StructType = serde_json::from_str(
            r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{}},
            {"name":"v","type":"variant","nullable":true,"metadata":{}},
            {"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},"nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"variant","valueContainsNull":true},"nullable":true,"metadata":{}}]}"#,
        )
        .unwrap();
        let plain = Field::new(
            "x",
            DataType::Struct(
                vec![
                    Field::new("metadata", DataType::Binary, false),
                    Field::new("value", DataType::Binary, false),
                ]
                .into(),
            ),
            true,
        );
        let arrow = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            plain.clone().with_name("v"),
            Field::new(
                "a",
                DataType::List(Arc::new(plain.clone().with_name("element"))),
                true,
            ),
            Field::new_map(
                "m",
                "key_value",
                Field::new("key", DataType::Utf8, false),
                plain.with_name("value"),
                false,
                true,
            ),
        ]);
        let out = with_variants(&delta, &arrow).unwrap();
        assert!(!is_variant_field(out.field(0)));
        assert!(is_variant_field(out.field(1)));
        let DataType::List(element) = out.field(2).data_type() else {
            panic!("a list")
        };
        assert!(is_variant_field(element));
        let DataType::Map(entries, _) = out.field(3).data_type() else {
            panic!("a map")
        };
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("entries")
        };
        assert!(!is_variant_field(&kv[0]) && is_variant_field(&kv[1]));
        // and back: the Delta schema of the marked Arrow schema is the one it came from
        let back: StructType = serde_json::from_value(delta_schema(&out).unwrap()).unwrap();
        assert_eq!(back, delta);
        let protocol = new_table_protocol(&delta_schema(&out).unwrap());
        assert_eq!(protocol["readerFeatures"], json!(["variantType"]));
    }

    #[test]
    fn types_without_a_delta_name_are_refused() {
        let schema = Schema::new(vec![Field::new("u", DataType::UInt32, true)]);
        let err = delta_schema(&schema).unwrap_err();
        assert!(
            err.to_string()
                .contains("column u of type UInt32 has no Delta type"),
            "{err}"
        );
        let times = Schema::new(vec![
            Field::new("ntz", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new(
                "utc",
                DataType::Timestamp(TimeUnit::Millisecond, Some("+01:00".into())),
                true,
            ),
        ]);
        let types = delta_schema(&times).unwrap();
        assert_eq!(types["fields"][0]["type"], json!("timestamp_ntz"));
        assert_eq!(types["fields"][1]["type"], json!("timestamp"));
        assert_eq!(
            new_table_protocol(&types)["readerFeatures"],
            json!(["timestampNtz"])
        );
        let plain = Schema::new(vec![Field::new("i", DataType::Int32, false)]);
        let protocol = new_table_protocol(&delta_schema(&plain).unwrap());
        assert_eq!(
            protocol,
            json!({"minReaderVersion": 1, "minWriterVersion": 2})
        );
    }
}
