//! Shredding for Parquet writing: our `shred_variant` vs arrow-rs `shred_variant` on the same
//! 8k-row unshredded batch (both read the variant column our `parse_json` produced), shredded as
//! an object of the events' common fields. Both outputs are first reassembled and rendered with
//! our `to_json`, and must equal the input's JSON.
mod common;

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_parquet_variant::cast::target_type::parse_target_type;
use datafusion_parquet_variant::codec::SessionTimeZone;
use datafusion_parquet_variant::functions::to_json::variant_array_to_json;
use datafusion_parquet_variant::shredding::shred_variant;
use parquet_variant_compute::VariantArray;

const SCHEMA: &str = "struct<id bigint, type string, user struct<id bigint, name string>, \
                      ts bigint, price decimal(10,2), tags array<string>, ok boolean>";

fn bench_shred(c: &mut Criterion) {
    let json = common::default_batch();
    let input = common::our_variant_batch(&json);
    let shredding = parse_target_type(SCHEMA).expect("schema");
    let arrow_input = VariantArray::try_new(input.as_ref()).expect("arrow-rs reads our column");

    let render = |a: &ArrayRef| variant_array_to_json("bench", a, &SessionTimeZone::utc()).unwrap();
    let expected = render(&input);
    let ours = shred_variant(&input, &shredding).expect("ours");
    let theirs: ArrayRef = Arc::new(
        parquet_variant_compute::shred_variant(&arrow_input, &shredding)
            .expect("arrow-rs")
            .into_inner(),
    );
    assert_eq!(render(&ours).as_ref(), expected.as_ref(), "ours");
    assert_eq!(render(&theirs).as_ref(), expected.as_ref(), "arrow-rs");
    assert_eq!(ours.len(), theirs.len());

    let mut group = c.benchmark_group("shred_variant");
    group.throughput(Throughput::Elements(json.len() as u64));
    group.bench_function("shred_variant events ours 8k", |bench| {
        bench.iter(|| black_box(shred_variant(black_box(&input), &shredding).unwrap()))
    });
    group.bench_function("shred_variant events arrow-rs 8k", |bench| {
        bench.iter(|| {
            black_box(
                parquet_variant_compute::shred_variant(black_box(&arrow_input), &shredding)
                    .unwrap(),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench_shred);
criterion_main!(benches);
