//! `variant_get` over shredded input reads the shredded columns directly and gives the same
//! answers as over the reassembled (unshredded) variants.
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Int64Array, StringArray, StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs};
use datafusion_parquet_variant::codec::{JsonParser, VariantBuilder};
use datafusion_parquet_variant::functions::variant_get::variant_get_udf;
use datafusion_parquet_variant::shredding::unshred;
use datafusion_parquet_variant::variant_array::variant_extension_metadata;

fn encode(json: &str) -> (Vec<u8>, Vec<u8>) {
    let mut b = VariantBuilder::new();
    JsonParser::new().parse(json, &mut b).unwrap();
    (b.metadata().to_vec(), b.value().to_vec())
}

fn struct_of(fields: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> ArrayRef {
    let (fs, cols): (Vec<_>, Vec<_>) = fields
        .into_iter()
        .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
        .unzip();
    Arc::new(StructArray::new(Fields::from(fs), cols, nulls))
}

fn variant_get(array: &ArrayRef, path: &str, data_type: DataType) -> ArrayRef {
    let field = Arc::new(
        Field::new("v", array.data_type().clone(), true)
            .with_metadata(variant_extension_metadata()),
    );
    let path_field = Arc::new(Field::new("p", DataType::Utf8, true));
    let type_field = Arc::new(Field::new("t", DataType::Utf8, true));
    let out = variant_get_udf()
        .invoke_with_args(ScalarFunctionArgs {
            args: vec![
                ColumnarValue::Array(Arc::clone(array)),
                ColumnarValue::Scalar(ScalarValue::Utf8(Some(path.into()))),
                ColumnarValue::Scalar(ScalarValue::Utf8(Some("ignored".into()))),
            ],
            arg_fields: vec![field, path_field, type_field],
            number_rows: array.len(),
            return_field: Arc::new(Field::new("r", data_type, true)),
            config_options: Arc::new(Default::default()),
        })
        .unwrap();
    match out {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(_) => panic!("expected an array"),
    }
}

/// `{"event_type": .., "event_ts": ..}` shredded: rows 0-1 objects, row 2 a string, row 3 SQL NULL,
/// row 4 an object without event_ts.
fn events(event_ts_value: Option<Vec<u8>>) -> (ArrayRef, ArrayRef) {
    let (meta, _) = encode(r#"{"email":"x"}"#);
    let (_, plain) = encode(r#""not an object""#);
    let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![meta.as_slice(); 5]));
    let value: ArrayRef = Arc::new(BinaryArray::from(vec![
        None,
        None,
        Some(plain.as_slice()),
        None,
        None,
    ]));
    let ts_typed = Int64Array::from(vec![Some(10), Some(20), None, Some(99), None]);
    let ts_value: ArrayRef = Arc::new(BinaryArray::from(vec![
        None,
        None,
        None,
        None,
        event_ts_value.as_deref(),
    ]));
    let event_ts = struct_of(
        vec![("value", ts_value), ("typed_value", Arc::new(ts_typed))],
        None,
    );
    let event_type = struct_of(
        vec![
            ("value", Arc::new(BinaryArray::from(vec![None::<&[u8]>; 5]))),
            (
                "typed_value",
                Arc::new(StringArray::from(vec![
                    Some("a"),
                    Some("b"),
                    None,
                    None,
                    Some("c"),
                ])),
            ),
        ],
        None,
    );
    let typed = struct_of(
        vec![("event_type", event_type), ("event_ts", event_ts)],
        Some(NullBuffer::from(vec![true, true, false, true, true])),
    );
    let shredded = struct_of(
        vec![
            ("metadata", metadata),
            ("value", value),
            ("typed_value", typed),
        ],
        Some(NullBuffer::from(vec![true, true, true, false, true])),
    );
    let plain: ArrayRef = Arc::new(unshred(shredded.as_struct()).unwrap());
    (shredded, plain)
}

#[test]
fn perfectly_shredded_leaf_is_read_directly() {
    let (shredded, plain) = events(None);
    let fast = variant_get(&shredded, "$.event_ts", DataType::Int64);
    let slow = variant_get(&plain, "$.event_ts", DataType::Int64);
    let expected = Int64Array::from(vec![Some(10), Some(20), None, None, None]);
    assert_eq!(fast.as_primitive(), &expected);
    assert_eq!(slow.as_primitive(), &expected);
    // The data buffer is the shredded column's own (no copy); only the NULLs were merged.
    let leaf = shredded
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .as_struct()
        .column_by_name("event_ts")
        .unwrap()
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .to_data();
    assert_eq!(
        fast.to_data().buffers()[0].as_ptr(),
        leaf.buffers()[0].as_ptr()
    );

    let fast = variant_get(&shredded, "$.event_type", DataType::Utf8);
    let slow = variant_get(&plain, "$.event_type", DataType::Utf8);
    assert_eq!(fast.as_string::<i32>(), slow.as_string::<i32>());
}

#[test]
fn rows_in_the_value_column_take_the_general_path() {
    // Row 4's event_ts is the string "30" in `value`: castable to bigint.
    let (_, text) = encode(r#""30""#);
    let (shredded, plain) = events(Some(text));
    let result = variant_get(&shredded, "$.event_ts", DataType::Int64);
    let expected = Int64Array::from(vec![Some(10), Some(20), None, None, Some(30)]);
    assert_eq!(result.as_primitive(), &expected);
    assert_eq!(
        variant_get(&plain, "$.event_ts", DataType::Int64).as_primitive(),
        &expected
    );
}

#[test]
fn other_types_and_missing_fields_match_the_unshredded_answer() {
    let (shredded, plain) = events(None);
    for (path, ty) in [
        ("$.event_ts", DataType::Utf8),
        ("$.event_ts", DataType::Float64),
        ("$.email", DataType::Utf8),
        ("$.missing", DataType::Int64),
        ("$", DataType::Utf8),
    ] {
        let a = variant_get(&shredded, path, ty.clone());
        let b = variant_get(&plain, path, ty.clone());
        assert_eq!(a.to_data(), b.to_data(), "{path} as {ty}");
    }
}
