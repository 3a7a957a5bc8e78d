//! Untrusted shredded columns (what a Parquet file of another writer may hold): valid values
//! shredded by one of several types, then their `metadata` and `value` columns corrupted at any
//! depth (bytes replaced, rows nulled, a row's bytes given to another). Reassembly, `to_json`
//! and `schema_of_variant` straight from the shredded columns, `is_valid_variant` and the top
//! level read from them, and `variant_get` over them must never panic; where the reassembly and
//! a direct reading both succeed, the direct reading agrees with the function over the
//! reassembled column, and a row said valid reassembles to a valid value. Before the corruption (valid shredded
//! columns), our reassembly and arrow-rs's `unshred_variant` give the same JSON text.
#![no_main]

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, ListArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use datafusion::scalar::ScalarValue;
use datafusion_parquet_variant::cast::target_type::parse_target_type;
use datafusion_parquet_variant::codec::validate;
use datafusion_parquet_variant::codec::{JsonParser, SessionTimeZone, VariantBuilder};
use datafusion_parquet_variant::functions::scalar_functions;
use datafusion_parquet_variant::functions::schema_of_variant::variant_array_schemas;
use datafusion_parquet_variant::functions::to_json::variant_array_to_json;
use datafusion_parquet_variant::shredding::{
    for_each_top_level, shred_variant, shredded_schemas, shredded_to_json, shredded_validity,
    unshred,
};
use datafusion_parquet_variant::variant_array::{
    VariantArrayBuilder, VariantColumn, variant_extension_metadata,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use parquet_variant_compute::{VariantArray as ArrowVariantArray, unshred_variant};

const SCHEMAS: &[&str] = &[
    "struct<a bigint, b string, c array<int>, o struct<a decimal(12,3), b boolean>>",
    "struct<a double, b date, c array<struct<a timestamp, b timestamp_ntz>>, o variant>",
    "struct<a tinyint, b binary, c array<array<string>>, o struct<o struct<a float>>>",
    "array<struct<a decimal(38,0), b smallint>>",
    "decimal(18,4)",
    "string",
];

static VARIANT_GET: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    let all = scalar_functions();
    Arc::clone(
        all.iter()
            .find(|f| f.name() == "variant_get")
            .expect("registered"),
    )
});

/// The session options `variant_get` is invoked with (made once: building them is not cheap).
static CONFIG: LazyLock<Arc<ConfigOptions>> = LazyLock::new(|| Arc::new(ConfigOptions::new()));

#[derive(Arbitrary, Debug)]
struct Input {
    schema: u8,
    rows: Vec<Option<String>>,
    corruption: Vec<u8>,
    path: String,
}

/// The bytes that decide each corruption, in turn (exhausted: nothing more is changed).
struct Corruption<'a>(std::slice::Iter<'a, u8>);

impl Corruption<'_> {
    fn next(&mut self) -> Option<u8> {
        self.0.next().copied()
    }

    /// A row's bytes: kept, replaced by a few fuzz bytes, nulled, or another row's.
    fn bytes(&mut self, rows: &[Option<Vec<u8>>], i: usize) -> Option<Vec<u8>> {
        match self.next().map(|c| c % 8) {
            Some(0) => {
                let n = self.next().unwrap_or(0) % 16;
                Some((0..n).map(|_| self.next().unwrap_or(0)).collect())
            }
            Some(1) => None,
            Some(2) if !rows.is_empty() => {
                rows[self.next().unwrap_or(0) as usize % rows.len()].clone()
            }
            _ => rows[i].clone(),
        }
    }

    /// `array` with its binary columns (at any depth) corrupted; None when the result is not
    /// a valid Arrow array (a NULL where the schema forbids one).
    fn array(&mut self, array: &ArrayRef) -> Option<ArrayRef> {
        match array.data_type() {
            DataType::Struct(fields) => {
                let s = array.as_struct();
                let columns = s
                    .columns()
                    .iter()
                    .map(|c| self.array(c))
                    .collect::<Option<Vec<_>>>()?;
                let s = StructArray::try_new(fields.clone(), columns, s.nulls().cloned()).ok()?;
                Some(Arc::new(s))
            }
            DataType::List(field) => {
                let l = array.as_list::<i32>();
                let values = self.array(l.values())?;
                let l = ListArray::try_new(
                    Arc::clone(field),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .ok()?;
                Some(Arc::new(l))
            }
            DataType::Binary => {
                let rows: Vec<_> = array
                    .as_binary::<i32>()
                    .iter()
                    .map(|r| r.map(<[u8]>::to_vec))
                    .collect();
                let out: Vec<_> = (0..rows.len()).map(|i| self.bytes(&rows, i)).collect();
                Some(Arc::new(BinaryArray::from_iter(out)))
            }
            DataType::BinaryView => {
                let rows: Vec<_> = array
                    .as_binary_view()
                    .iter()
                    .map(|r| r.map(<[u8]>::to_vec))
                    .collect();
                let out: Vec<_> = (0..rows.len()).map(|i| self.bytes(&rows, i)).collect();
                Some(Arc::new(BinaryViewArray::from_iter(out)))
            }
            _ => Some(Arc::clone(array)),
        }
    }
}

fn texts(array: &ArrayRef) -> Vec<Option<String>> {
    array
        .as_string::<i32>()
        .iter()
        .map(|r| r.map(str::to_string))
        .collect()
}

fuzz_target!(|input: Input| {
    let mut column = VariantArrayBuilder::with_capacity(input.rows.len());
    for row in input.rows.iter().take(64) {
        let mut b = VariantBuilder::new();
        match row {
            Some(text) if JsonParser::new().parse(text, &mut b).is_ok() => column.append_built(&b),
            _ => column.append_null(),
        }
    }
    let Ok(column) = column.finish() else {
        return;
    };
    let schema = SCHEMAS[input.schema as usize % SCHEMAS.len()];
    let ty = parse_target_type(schema).expect("a valid type");
    let shredded = shred_variant(&column, &ty).expect("valid values shred");
    let tz = SessionTimeZone::utc();
    let ours: ArrayRef = Arc::new(unshred(shredded.as_struct()).expect("valid shredded columns"));
    let theirs = ArrowVariantArray::try_new(shredded.as_ref())
        .and_then(|s| unshred_variant(&s))
        .expect("arrow-rs reads valid shredded columns");
    let theirs: ArrayRef = Arc::new(theirs.into_inner());
    assert_eq!(
        texts(&variant_array_to_json("to_json", &ours, &tz).expect("ours renders")),
        texts(&variant_array_to_json("to_json", &theirs, &tz).expect("theirs renders")),
        "arrow-rs, {schema}"
    );
    let Some(shredded) = Corruption(input.corruption.iter()).array(&shredded) else {
        return;
    };
    let direct = shredded_to_json("to_json", shredded.as_struct(), &tz);
    let direct_schemas = shredded_schemas("schema_of_variant", shredded.as_struct());
    let reassembled: Option<ArrayRef> = unshred(shredded.as_struct())
        .ok()
        .map(|r| Arc::new(r) as ArrayRef);
    if let Some(reassembled) = &reassembled {
        if let (Ok(direct), Ok(expected)) =
            (&direct, variant_array_to_json("to_json", reassembled, &tz))
        {
            assert_eq!(texts(direct), texts(&expected), "{schema}");
        }
        if let (Ok(direct), Ok(expected)) = (
            &direct_schemas,
            variant_array_schemas("schema_of_variant", reassembled),
        ) {
            assert_eq!(
                texts(direct),
                texts(&expected),
                "schema_of_variant, {schema}"
            );
        }
    }
    // is_valid_variant where the file holds each value: a row said valid reassembles, validly
    // (read from the whole column's reassembly where that succeeded, else from the row's own)
    if let Ok(validity) = shredded_validity(shredded.as_struct()) {
        let validity = validity.as_boolean();
        for i in (0..validity.len()).filter(|&i| validity.is_valid(i) && validity.value(i)) {
            let row: ArrayRef = match &reassembled {
                Some(all) => all.slice(i, 1),
                None => Arc::new(
                    unshred(shredded.slice(i, 1).as_struct())
                        .unwrap_or_else(|e| panic!("{schema}: row {i} said valid: {e}")),
                ),
            };
            let row = VariantColumn::try_new(&row).expect("a variant column");
            if let Some((m, v)) = row.rows().expect("readable rows").bytes(0) {
                assert!(validate(m, v).is_ok(), "{schema}: row {i}");
            }
        }
    }
    let _ = for_each_top_level(shredded.as_struct(), |_| Ok(()));
    // variant_get over the shredded column, the path and type as a query gives them
    let arg_fields = vec![
        Arc::new(
            Field::new("v", shredded.data_type().clone(), true)
                .with_metadata(variant_extension_metadata()),
        ),
        Arc::new(Field::new("path", DataType::Utf8, false)),
        Arc::new(Field::new("type", DataType::Utf8, false)),
    ];
    let path = ScalarValue::Utf8(Some(input.path.clone()));
    let target = ScalarValue::Utf8(Some("string".to_string()));
    let scalars = [None, Some(&path), Some(&target)];
    let Ok(return_field) = VARIANT_GET.return_field_from_args(ReturnFieldArgs {
        arg_fields: &arg_fields,
        scalar_arguments: &scalars,
    }) else {
        return;
    };
    let rows = shredded.len();
    let _ = VARIANT_GET.invoke_with_args(ScalarFunctionArgs {
        args: vec![
            ColumnarValue::Array(shredded),
            ColumnarValue::Scalar(path),
            ColumnarValue::Scalar(target),
        ],
        arg_fields,
        number_rows: rows,
        return_field,
        config_options: Arc::clone(&CONFIG),
    });
});
