//! `variant_explode` over 100k event rows: ours through SQL
//! (`SELECT .. FROM t, LATERAL variant_explode(t.v) e`, the whole DataFusion plan) vs the closest
//! arrow-rs equivalent, a loop that decodes each row with `VariantArray::value` and appends
//! `(pos, key, value)` for every object field (arrow-rs has no explode kernel).
mod common;

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int32Builder, RecordBatch, StringBuilder};
use arrow::datatypes::Schema;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion::datasource::MemTable;
use parquet_variant::Variant;
use parquet_variant_compute::{VariantArray, VariantArrayBuilder};

const ROWS: usize = 100_000;

fn arrow_rs_explode(array: &VariantArray) -> (ArrayRef, ArrayRef, VariantArray) {
    let mut pos = Int32Builder::new();
    let mut keys = StringBuilder::new();
    let mut values = VariantArrayBuilder::new(array.len() * 8);
    for i in 0..array.len() {
        if array.is_null(i) {
            continue;
        }
        match array.value(i) {
            Variant::Object(object) => {
                for (k, (name, value)) in object.iter().enumerate() {
                    pos.append_value(k as i32);
                    keys.append_value(name);
                    values.append_variant(value);
                }
            }
            Variant::List(list) => {
                for (k, value) in list.iter().enumerate() {
                    pos.append_value(k as i32);
                    keys.append_null();
                    values.append_variant(value);
                }
            }
            _ => {}
        }
    }
    (
        Arc::new(pos.finish()),
        Arc::new(keys.finish()),
        values.build(),
    )
}

fn bench_explode(c: &mut Criterion) {
    // 100k rows in 8k batches, like a scan would deliver them.
    let batches: Vec<RecordBatch> = (0..ROWS.div_ceil(common::BATCH_ROWS))
        .map(|b| {
            let rows = common::BATCH_ROWS.min(ROWS - b * common::BATCH_ROWS);
            let json = common::json_batch(rows, common::SEED + b as u64);
            let v = common::our_variant_batch(&json);
            let schema = Schema::new(vec![
                datafusion_parquet_variant::variant_array::variant_field("v", true),
            ]);
            RecordBatch::try_new(Arc::new(schema), vec![v]).unwrap()
        })
        .collect();
    let arrow_inputs: Vec<VariantArray> = (0..batches.len())
        .map(|b| {
            let rows = batches[b].num_rows();
            let json = common::json_batch(rows, common::SEED + b as u64);
            parquet_variant_compute::json_to_variant(&json).unwrap()
        })
        .collect();

    let ctx = datafusion_parquet_variant::session_context();
    let table = MemTable::try_new(batches[0].schema(), vec![batches.clone()]).unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let sql = "SELECT e.pos, e.key, e.value FROM t, LATERAL variant_explode(t.v) e";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let run = || {
        runtime.block_on(async {
            let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
            batches.iter().map(|b| b.num_rows()).sum::<usize>()
        })
    };
    let ours_rows = run();
    let theirs_rows: usize = arrow_inputs
        .iter()
        .map(|a| arrow_rs_explode(a).0.len())
        .sum();
    assert_eq!(
        ours_rows, theirs_rows,
        "ours and arrow-rs disagree on the row count"
    );

    let mut group = c.benchmark_group("variant_explode");
    group.sample_size(20);
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("variant_explode lateral ours 100k", |b| {
        b.iter(|| black_box(run()))
    });
    group.bench_function("variant_explode loop arrow-rs 100k", |b| {
        b.iter(|| {
            for a in &arrow_inputs {
                black_box(arrow_rs_explode(black_box(a)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_explode);
criterion_main!(benches);
