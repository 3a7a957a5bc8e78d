//! `to_json` (ours, through the public UDF) vs arrow-rs `variant_to_json`.
//!
//! Our input is produced once by our `parse_json`; the arrow-rs input is produced once by its own
//! `json_to_variant` and converted (outside the timed loop) to the `Struct<Binary, Binary>` layout,
//! the only one its `variant_to_json` accepts.
mod common;

use std::hint::black_box;

use arrow::array::Array;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_parquet_variant::functions::to_json::to_json_udf;
use parquet_variant_compute::variant_to_json;

fn bench_to_json(c: &mut Criterion) {
    let json = common::default_batch();
    let ours_input = common::our_variant_batch(&json);
    let arrow_input = common::arrow_rs_variant_batch(&json);
    let udf = to_json_udf();
    let field = common::our_variant_field();

    let ours_out = common::invoke_udf(&udf, &field, &ours_input);
    let arrow_out = variant_to_json(&arrow_input).unwrap();
    assert_eq!(ours_out.len(), json.len());
    assert_eq!(arrow_out.len(), json.len());

    let mut group = c.benchmark_group("to_json");
    group.throughput(Throughput::Elements(json.len() as u64));
    group.bench_function("to_json ours 8k", |b| {
        b.iter(|| black_box(common::invoke_udf(&udf, &field, black_box(&ours_input))))
    });
    group.bench_function("to_json arrow-rs 8k", |b| {
        b.iter(|| black_box(variant_to_json(black_box(&arrow_input)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench_to_json);
criterion_main!(benches);
