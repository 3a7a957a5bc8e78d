//! `parse_json` (ours, through the public UDF) vs arrow-rs `json_to_variant` on the same
//! 8192-row `StringArray` of JSON event objects.
mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_parquet_variant::functions::parse_json::parse_json_udf;
use parquet_variant_compute::json_to_variant;

fn bench_parse_json(c: &mut Criterion) {
    let json = common::default_batch();
    let (min, mean, max) = common::row_sizes(&json);
    eprintln!(
        "parse_json input: {} rows, {min}/{mean}/{max} bytes min/mean/max",
        json.len()
    );
    let udf = parse_json_udf();
    let field = common::utf8_field();

    // Both sides must accept every row.
    assert_eq!(common::invoke_udf(&udf, &field, &json).len(), json.len());
    assert_eq!(json_to_variant(&json).unwrap().len(), json.len());

    let mut group = c.benchmark_group("parse_json");
    group.throughput(Throughput::Elements(json.len() as u64));
    group.bench_function("parse_json ours 8k", |b| {
        b.iter(|| black_box(common::invoke_udf(&udf, &field, black_box(&json))))
    });
    group.bench_function("parse_json arrow-rs 8k", |b| {
        b.iter(|| black_box(json_to_variant(black_box(&json)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench_parse_json);
criterion_main!(benches);
