//! Variant columns in Arrow: every binary layout and shredded input are accepted wherever a
//! variant is, scalars give scalars, and outputs carry the extension type.
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, Int64Array, LargeBinaryArray,
    ListArray, RecordBatch, StringArray, StructArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{
    DataType, Field, Fields, Float64Type, Int32Type, Int64Type, Schema,
};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::codec::{JsonParser, SessionTimeZone, VariantBuilder};
use datafusion_parquet_variant::functions::to_json::{to_json_udf, variant_array_to_json};
use datafusion_parquet_variant::variant_array::{
    VARIANT_EXTENSION_NAME, is_variant_field, variant_extension_metadata,
};

/// Encodes JSON with our parser: (metadata, value).
fn encode(json: &str) -> (Vec<u8>, Vec<u8>) {
    let mut b = VariantBuilder::new();
    JsonParser::new().parse(json, &mut b).unwrap();
    (b.metadata().to_vec(), b.value().to_vec())
}

fn to_json(array: ArrayRef) -> Vec<Option<String>> {
    let out = variant_array_to_json("to_json", &array, &SessionTimeZone::utc()).unwrap();
    out.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

fn strings(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.to_string())).collect()
}

fn struct_of(fields: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> ArrayRef {
    let (fs, cols): (Vec<_>, Vec<_>) = fields
        .into_iter()
        .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
        .unzip();
    Arc::new(StructArray::new(Fields::from(fs), cols, nulls))
}

const DOCS: [&str; 3] = [r#"{"b":[1,2.5],"a":"x"}"#, "null", r#""s""#];
const EXPECTED: [&str; 3] = [r#"{"a":"x","b":[1,2.5]}"#, "null", r#""s""#];

#[test]
fn every_binary_layout_is_read() {
    let encoded: Vec<_> = DOCS.iter().map(|d| encode(d)).collect();
    let m: Vec<&[u8]> = encoded.iter().map(|e| e.0.as_slice()).collect();
    let v: Vec<&[u8]> = encoded.iter().map(|e| e.1.as_slice()).collect();
    let layouts: Vec<(ArrayRef, ArrayRef)> = vec![
        (
            Arc::new(BinaryArray::from(m.clone())),
            Arc::new(BinaryArray::from(v.clone())),
        ),
        (
            Arc::new(LargeBinaryArray::from(m.clone())),
            Arc::new(LargeBinaryArray::from(v.clone())),
        ),
        (
            Arc::new(BinaryViewArray::from(m.clone())),
            Arc::new(BinaryViewArray::from(v.clone())),
        ),
    ];
    for (metadata, value) in layouts {
        let array = struct_of(vec![("metadata", metadata), ("value", value)], None);
        assert_eq!(to_json(array), strings(&EXPECTED));
    }
}

#[test]
fn struct_nulls_are_sql_nulls() {
    let (m, v) = encode("1");
    let array = struct_of(
        vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![m.as_slice(), m.as_slice()])),
            ),
            (
                "value",
                Arc::new(BinaryArray::from(vec![v.as_slice(), v.as_slice()])),
            ),
        ],
        Some(NullBuffer::from(vec![true, false])),
    );
    assert_eq!(to_json(array), vec![Some("1".to_string()), None]);
}

/// The spec's example: `34, null, "n/a", 100` shredded as int64.
#[test]
fn shredded_primitive() {
    let empty = encode("null").0;
    let null_value = encode("null").1;
    let na = encode(r#""n/a""#).1;
    let metadata = BinaryArray::from(vec![empty.as_slice(); 4]);
    let value = BinaryArray::from(vec![
        None,
        Some(null_value.as_slice()),
        Some(na.as_slice()),
        None,
    ]);
    let typed = Int64Array::from(vec![Some(34), None, None, Some(100)]);
    let array = struct_of(
        vec![
            ("metadata", Arc::new(metadata)),
            ("value", Arc::new(value)),
            ("typed_value", Arc::new(typed)),
        ],
        None,
    );
    assert_eq!(to_json(array), strings(&["34", "null", r#""n/a""#, "100"]));
}

/// The spec's `event` example: fully and partially shredded objects, a non-object, a field
/// present as null, and an empty object.
#[test]
fn shredded_object() {
    let (meta_email, rest_email) = encode(r#"{"email":"u@x"}"#);
    let (meta_plain, not_object) = encode(r#""not an object""#);
    let null_value = encode("null").1;
    let metadata = BinaryArray::from(vec![
        meta_plain.as_slice(),
        meta_email.as_slice(),
        meta_plain.as_slice(),
        meta_plain.as_slice(),
        meta_plain.as_slice(),
    ]);
    let value = BinaryArray::from(vec![
        None,
        Some(rest_email.as_slice()),
        Some(not_object.as_slice()),
        None,
        None,
    ]);
    let event_type = struct_of(
        vec![
            (
                "value",
                Arc::new(BinaryArray::from(vec![
                    None,
                    None,
                    None,
                    Some(null_value.as_slice()),
                    None,
                ])),
            ),
            (
                "typed_value",
                Arc::new(StringArray::from(vec![
                    Some("noop"),
                    Some("login"),
                    None,
                    None,
                    None,
                ])),
            ),
        ],
        None,
    );
    let event_ts = struct_of(
        vec![
            ("value", Arc::new(BinaryArray::from(vec![None::<&[u8]>; 5]))),
            (
                "typed_value",
                Arc::new(Int64Array::from(vec![
                    Some(1),
                    Some(2),
                    None,
                    Some(3),
                    None,
                ])),
            ),
        ],
        None,
    );
    let typed = struct_of(
        vec![("event_type", event_type), ("event_ts", event_ts)],
        Some(NullBuffer::from(vec![true, true, false, true, true])),
    );
    let array = struct_of(
        vec![
            ("metadata", Arc::new(metadata)),
            ("value", Arc::new(value)),
            ("typed_value", typed),
        ],
        None,
    );
    assert_eq!(
        to_json(array),
        strings(&[
            r#"{"event_ts":1,"event_type":"noop"}"#,
            r#"{"email":"u@x","event_ts":2,"event_type":"login"}"#,
            r#""not an object""#,
            r#"{"event_ts":3,"event_type":null}"#,
            "{}",
        ])
    );
}

/// The spec's `tags` example: arrays shredded as lists of strings with a null element.
#[test]
fn shredded_array() {
    let empty = encode("null").0;
    let null_value = encode("null").1;
    let element_value = BinaryArray::from(vec![None, None, None, Some(null_value.as_slice())]);
    let element_typed =
        StringArray::from(vec![Some("comedy"), Some("drama"), Some("horror"), None]);
    let elements = struct_of(
        vec![
            ("value", Arc::new(element_value)),
            ("typed_value", Arc::new(element_typed)),
        ],
        None,
    );
    let list = ListArray::new(
        Arc::new(Field::new("element", elements.data_type().clone(), false)),
        OffsetBuffer::from_lengths([2, 2, 0]),
        elements,
        Some(NullBuffer::from(vec![true, true, false])),
    );
    let array = struct_of(
        vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![empty.as_slice(); 3])),
            ),
            (
                "value",
                Arc::new(BinaryArray::from(vec![
                    None,
                    None,
                    Some(null_value.as_slice()),
                ])),
            ),
            ("typed_value", Arc::new(list)),
        ],
        None,
    );
    assert_eq!(
        to_json(array),
        strings(&[r#"["comedy","drama"]"#, r#"["horror",null]"#, "null"])
    );
}

/// Through SQL: a variant column with BinaryView children and the extension type, and one
/// without the extension metadata but with the variant shape.
#[tokio::test]
async fn sql_accepts_variant_columns_of_any_layout() {
    let encoded: Vec<_> = DOCS.iter().map(|d| encode(d)).collect();
    let m: Vec<&[u8]> = encoded.iter().map(|e| e.0.as_slice()).collect();
    let v: Vec<&[u8]> = encoded.iter().map(|e| e.1.as_slice()).collect();
    let column = struct_of(
        vec![
            ("metadata", Arc::new(BinaryViewArray::from(m))),
            ("value", Arc::new(BinaryViewArray::from(v))),
        ],
        None,
    );
    let with_ext = Field::new("v", column.data_type().clone(), true)
        .with_metadata(variant_extension_metadata());
    let without_ext = Field::new("w", column.data_type().clone(), true);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![with_ext, without_ext])),
        vec![Arc::clone(&column), column],
    )
    .unwrap();
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx.register_batch("t", batch).unwrap();
    let df = ctx
        .sql("SELECT to_json(v) AS a, to_json(w) AS b, is_variant_null(v) AS n FROM t")
        .await
        .unwrap();
    let out = df.collect().await.unwrap();
    let a: Vec<_> = out[0].column(0).as_string::<i32>().iter().collect();
    let b: Vec<_> = out[0].column(1).as_string::<i32>().iter().collect();
    let n: Vec<_> = out[0].column(2).as_boolean().iter().collect();
    let expected: Vec<_> = EXPECTED.iter().map(|s| Some(*s)).collect();
    assert_eq!(a, expected);
    assert_eq!(b, expected);
    assert_eq!(n, vec![Some(false), Some(true), Some(false)]);
}

/// Functions returning variants set the extension type on their return field.
#[tokio::test]
async fn return_field_carries_the_extension() {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    let df = ctx.sql("SELECT parse_json('[1]') AS v").await.unwrap();
    let field = df.schema().field(0).clone();
    assert_eq!(
        field
            .metadata()
            .get("ARROW:extension:name")
            .map(String::as_str),
        Some(VARIANT_EXTENSION_NAME)
    );
    let batches = df.collect().await.unwrap();
    assert!(is_variant_field(batches[0].schema().field(0)));
}

/// `register_all` (on a plain `SessionContext`) plans `LATERAL variant_explode`, and the exploded
/// `value` column keeps the variant extension through DataFusion's Unnest.
#[tokio::test]
async fn lateral_explode_after_register_all() {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx.sql("CREATE TABLE t (id INT, j VARCHAR) AS VALUES (1, '{\"b\":2,\"a\":1}'), (2, '[]')")
        .await
        .unwrap();
    let df = ctx
        .sql(
            "SELECT t.id, e.key, e.value FROM t, LATERAL variant_explode_outer(parse_json(t.j)) e \
             ORDER BY t.id, e.pos",
        )
        .await
        .unwrap();
    assert!(is_variant_field(df.schema().field(2)));
    let batches = df.collect().await.unwrap();
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    assert!(is_variant_field(batch.schema().field(2)));
    let keys: Vec<Option<&str>> = batch.column(1).as_string::<i32>().iter().collect();
    assert_eq!(keys, vec![Some("a"), Some("b"), None]);
    assert_eq!(
        to_json(batch.column(2).clone()),
        vec![Some("1".to_string()), Some("2".to_string()), None]
    );
}

/// A scalar variant (a one-row struct scalar) in gives a scalar out.
#[test]
fn scalar_in_scalar_out() {
    let (m, v) = encode(r#"{"k":true}"#);
    let array = struct_of(
        vec![
            ("metadata", Arc::new(BinaryArray::from(vec![m.as_slice()]))),
            ("value", Arc::new(BinaryArray::from(vec![v.as_slice()]))),
        ],
        None,
    );
    let scalar = ScalarValue::Struct(Arc::new(array.as_struct().clone()));
    let arg_field = Arc::new(
        Field::new("v", scalar.data_type(), true).with_metadata(variant_extension_metadata()),
    );
    let result = to_json_udf()
        .invoke_with_args(ScalarFunctionArgs {
            args: vec![ColumnarValue::Scalar(scalar)],
            arg_fields: vec![arg_field],
            number_rows: 1,
            return_field: Arc::new(Field::new("to_json", DataType::Utf8, true)),
            config_options: Arc::new(Default::default()),
        })
        .unwrap();
    match result {
        ColumnarValue::Scalar(s) => {
            assert_eq!(s, ScalarValue::Utf8(Some(r#"{"k":true}"#.into())))
        }
        other => panic!("expected a scalar, got {other:?}"),
    }
}

/// Typed `variant_get` over every pair of binary layouts (metadata and value children may
/// differ), with SQL NULLs from the struct's null buffer and from the value child's: the same
/// answers everywhere, including leaves that take the general cast rules (a decimal, numeric
/// text, an integer as text) and variant nulls.
#[tokio::test]
async fn typed_extraction_over_every_layout_pair() {
    let docs = [
        r#"{"i":7,"d":2.5e0,"s":"x","n":-5}"#,
        r#"{"i":null,"d":null,"s":null,"n":2147483648}"#,
        r#"{"i":"12","d":3,"s":42,"n":"3"}"#,
        r#"{"i":1.9,"d":"1e3","s":"é"}"#,
        r#"{"i":1,"d":1e0,"s":"hidden by the struct null"}"#,
        r#"{"i":2,"d":2e0,"s":"hidden by the value null"}"#,
    ];
    let encoded: Vec<_> = docs.iter().map(|d| encode(d)).collect();
    let m: Vec<Option<&[u8]>> = encoded.iter().map(|e| Some(e.0.as_slice())).collect();
    let mut v: Vec<Option<&[u8]>> = encoded.iter().map(|e| Some(e.1.as_slice())).collect();
    v[5] = None;
    let struct_nulls = NullBuffer::from(vec![true, true, true, true, false, true]);
    let layouts = |b: &[Option<&[u8]>]| -> Vec<ArrayRef> {
        vec![
            Arc::new(BinaryArray::from(b.to_vec())),
            Arc::new(LargeBinaryArray::from(b.to_vec())),
            Arc::new(BinaryViewArray::from(b.to_vec())),
        ]
    };
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    for metadata in layouts(&m) {
        for value in layouts(&v) {
            let column = struct_of(
                vec![("metadata", Arc::clone(&metadata)), ("value", value)],
                Some(struct_nulls.clone()),
            );
            let field = Field::new("v", column.data_type().clone(), true)
                .with_metadata(variant_extension_metadata());
            let batch =
                RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![column]).unwrap();
            let _ = ctx.deregister_table("t");
            ctx.register_batch("t", batch).unwrap();
            let out = ctx
                .sql(
                    "SELECT variant_get(v, '$.i', 'bigint'), variant_get(v, '$.d', 'double'), \
                     variant_get(v, '$.s', 'string'), try_variant_get(v, '$.n', 'int') FROM t",
                )
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            let ints: Vec<_> = out[0]
                .column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .collect();
            let doubles: Vec<_> = out[0]
                .column(1)
                .as_primitive::<Float64Type>()
                .iter()
                .collect();
            let texts: Vec<_> = out[0].column(2).as_string::<i32>().iter().collect();
            let narrow: Vec<_> = out[0]
                .column(3)
                .as_primitive::<Int32Type>()
                .iter()
                .collect();
            let layout = format!("{} / {}", metadata.data_type(), out[0].num_rows());
            assert_eq!(
                ints,
                vec![Some(7), None, Some(12), Some(1), None, None],
                "{layout}"
            );
            assert_eq!(
                doubles,
                vec![Some(2.5), None, Some(3.0), Some(1000.0), None, None],
                "{layout}"
            );
            assert_eq!(
                texts,
                vec![Some("x"), None, Some("42"), Some("é"), None, None],
                "{layout}"
            );
            // INT: in range, past int32 (NULL for try_), from text, missing.
            assert_eq!(
                narrow,
                vec![Some(-5), None, Some(3), None, None, None],
                "{layout}"
            );
        }
    }
}
