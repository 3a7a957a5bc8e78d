//! `variant_get` (ours, through the public UDF) vs arrow-rs `variant_get` on the same unshredded
//! 8k-row batch: typed int64, string, double, a nested path, and a missing path.
//!
//! Each side extracts from the variant column its own `parse_json` produced (outside the timed
//! loop); both use their default (strict) cast options.
mod common;

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, FieldRef};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use datafusion_parquet_variant::functions::try_variant_get::try_variant_get_udf;
use parquet_variant::{VariantPath, VariantPathElement};
use parquet_variant_compute::{GetOptions, variant_get};

/// Our `try_variant_get(v, path, type)` as DataFusion's executor calls it (path and type are
/// literals; the return field is resolved once, as at planning time).
fn ours(udf: &ScalarUDF, field: &FieldRef, input: &ArrayRef, path: &str, ty: &str) -> ArrayRef {
    let path_value = ScalarValue::Utf8(Some(path.to_string()));
    let type_value = ScalarValue::Utf8(Some(ty.to_string()));
    let arg_fields = vec![
        Arc::clone(field),
        Arc::new(Field::new("p", DataType::Utf8, false)),
        Arc::new(Field::new("t", DataType::Utf8, false)),
    ];
    let return_field = udf
        .return_field_from_args(ReturnFieldArgs {
            arg_fields: &arg_fields,
            scalar_arguments: &[None, Some(&path_value), Some(&type_value)],
        })
        .expect("return field");
    let args = ScalarFunctionArgs {
        args: vec![
            ColumnarValue::Array(Arc::clone(input)),
            ColumnarValue::Scalar(path_value),
            ColumnarValue::Scalar(type_value),
        ],
        arg_fields,
        number_rows: input.len(),
        return_field,
        config_options: Arc::new(Default::default()),
    };
    match udf.invoke_with_args(args).expect("invoke") {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(_) => panic!("expected an array"),
    }
}

fn arrow_rs(input: &ArrayRef, path: &[&'static str], ty: &DataType) -> ArrayRef {
    let path: VariantPath<'static> = path.iter().map(|k| VariantPathElement::field(*k)).collect();
    let options = GetOptions::new_with_path(path).with_as_type(Some(Arc::new(Field::new(
        "out",
        ty.clone(),
        true,
    ))));
    variant_get(input, options).expect("arrow-rs variant_get")
}

fn bench_variant_get(c: &mut Criterion) {
    let json = common::default_batch();
    let our_input = common::our_variant_batch(&json);
    let arrow_input: ArrayRef = Arc::new(
        parquet_variant_compute::json_to_variant(&json)
            .expect("arrow-rs json_to_variant")
            .into_inner(),
    );
    let udf = try_variant_get_udf();
    let field = common::our_variant_field();

    let cases: [(&str, &str, &[&'static str], &str, DataType); 5] = [
        ("typed int64", "$.id", &["id"], "bigint", DataType::Int64),
        ("string", "$.type", &["type"], "string", DataType::Utf8),
        ("double", "$.score", &["score"], "double", DataType::Float64),
        (
            "nested a.b int64",
            "$.user.id",
            &["user", "id"],
            "bigint",
            DataType::Int64,
        ),
        (
            "missing path",
            "$.nope",
            &["nope"],
            "bigint",
            DataType::Int64,
        ),
    ];
    let mut group = c.benchmark_group("variant_get");
    group.throughput(Throughput::Elements(json.len() as u64));
    for (name, our_path, arrow_path, our_type, arrow_type) in cases {
        // Both sides agree on the answer before they are timed.
        let a = ours(&udf, &field, &our_input, our_path, our_type);
        let b = arrow_rs(&arrow_input, arrow_path, &arrow_type);
        assert_eq!(a.len(), b.len());
        assert_eq!(a.null_count(), b.null_count(), "{name}");
        group.bench_function(format!("variant_get {name} ours 8k"), |bench| {
            bench.iter(|| {
                black_box(ours(
                    &udf,
                    &field,
                    black_box(&our_input),
                    our_path,
                    our_type,
                ))
            })
        });
        group.bench_function(format!("variant_get {name} arrow-rs 8k"), |bench| {
            bench.iter(|| black_box(arrow_rs(black_box(&arrow_input), arrow_path, &arrow_type)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_variant_get);
criterion_main!(benches);
