//! A Delta table's schema as Arrow, with its variant columns (at any depth) as variants, and the
//! reader features we can honour.
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef};
use datafusion::common::{Result, not_impl_err, plan_err};
use deltalake_core::kernel::{DataType as DeltaType, StructType};

use crate::variant_array::{variant_extension_metadata, variant_field};

/// The reader features whose meaning this reader implements; a table that needs any other is
/// refused, naming it. (`columnMapping` is left out until the scan maps physical names.)
const READER_FEATURES: &[&str] = &[
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant_array::is_variant_field;
    use datafusion::arrow::datatypes::Field;

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
    }
}
