//! `is_variant_null` (ours, through the public UDF) vs the closest arrow-rs equivalent.
//!
//! arrow-rs has no `is_variant_null` kernel, so the baseline decodes each row with
//! `parquet_variant::Variant::new(metadata, value)` (shallow validation, like `VariantArray::value`)
//! and checks `Variant::Null`, collecting a `BooleanArray` (SQL NULL gives false, as ours does).
//! Both sides read the same `Struct<Binary, Binary>` layout.
mod common;

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StringArray};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_parquet_variant::functions::is_variant_null::is_variant_null_udf;
use parquet_variant::Variant;

/// 8192 rows: about 25% JSON `null`, 5% SQL NULL, 10% scalars, the rest event objects.
fn mixed_batch() -> ArrayRef {
    let mut rng = common::Rng::new(common::SEED ^ 0x0123_4567);
    let mut row = String::new();
    let values: Vec<Option<String>> = (0..common::BATCH_ROWS)
        .map(|_| match rng.below(100) {
            0..25 => Some("null".to_string()),
            25..30 => None,
            30..35 => Some(rng.below(1000).to_string()),
            35..40 => Some("\"text\"".to_string()),
            _ => {
                common::json_event(&mut rng, &mut row);
                Some(row.clone())
            }
        })
        .collect();
    Arc::new(StringArray::from(values))
}

fn arrow_rs_is_variant_null(array: &ArrayRef) -> BooleanArray {
    let s = array.as_struct();
    let metadata = s.column(0).as_binary::<i32>();
    let value = s.column(1).as_binary::<i32>();
    (0..s.len())
        .map(|i| {
            Some(
                !s.is_null(i)
                    && matches!(
                        Variant::new(metadata.value(i), value.value(i)),
                        Variant::Null
                    ),
            )
        })
        .collect()
}

fn bench_is_variant_null(c: &mut Criterion) {
    let json = mixed_batch();
    let ours_input = common::our_variant_batch(&json);
    let arrow_input = common::arrow_rs_variant_batch(&json);
    let udf = is_variant_null_udf();
    let field = common::our_variant_field();

    let ours = common::invoke_udf(&udf, &field, &ours_input);
    let theirs = arrow_rs_is_variant_null(&arrow_input);
    assert_eq!(ours.as_boolean(), &theirs, "ours and arrow-rs disagree");

    let mut group = c.benchmark_group("is_variant_null");
    group.throughput(Throughput::Elements(json.len() as u64));
    group.bench_function("is_variant_null ours 8k", |b| {
        b.iter(|| black_box(common::invoke_udf(&udf, &field, black_box(&ours_input))))
    });
    group.bench_function("is_variant_null arrow-rs 8k", |b| {
        b.iter(|| black_box(arrow_rs_is_variant_null(black_box(&arrow_input))))
    });
    group.finish();
}

criterion_group!(benches, bench_is_variant_null);
criterion_main!(benches);
