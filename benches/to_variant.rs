//! `to_variant` over a struct column (ours, through the public UDF) vs arrow-rs `cast_to_variant`
//! on the same 8k-row batch. Both outputs are rendered with our `to_json` and compared first; arrow-rs
//! leaves NULL struct fields out where Spark (and we) write variant nulls, so ours is compared after
//! `variant_strip_nulls`.
mod common;

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray,
    StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_parquet_variant::codec::SessionTimeZone;
use datafusion_parquet_variant::functions::to_json::variant_array_to_json;
use datafusion_parquet_variant::functions::to_variant::to_variant_udf;
use datafusion_parquet_variant::functions::variant_strip_nulls::variant_strip_nulls_udf;

/// 8192 event rows: `{id bigint, user string, score double, active boolean, tags list<string>,
/// address struct<city string, zip int>, at timestamp(us, UTC)}` with about 5% NULL fields.
fn struct_batch() -> ArrayRef {
    let n = common::BATCH_ROWS;
    let mut rng = common::Rng::new(common::SEED ^ 0x7a7a);
    let cities = ["Lisbon", "Oslo", "Quito", "Kyoto", "Dakar"];
    let ids: Int64Array = (0..n).map(|i| Some(i as i64 * 7919)).collect();
    let users: StringArray = (0..n)
        .map(|_| (!rng.chance(5)).then(|| format!("user_{}", rng.below(100_000))))
        .collect();
    let scores: Float64Array = (0..n)
        .map(|_| Some(rng.below(1_000_000) as f64 / 100.0))
        .collect();
    let active: BooleanArray = (0..n).map(|_| Some(rng.chance(50))).collect();
    let mut lengths = Vec::with_capacity(n);
    let mut tags = Vec::new();
    for _ in 0..n {
        let k = rng.below(4) as usize;
        lengths.push(k);
        for _ in 0..k {
            tags.push(
                rng.pick(&["new", "vip", "beta", "eu", "mobile"])
                    .to_string(),
            );
        }
    }
    let tags = ListArray::new(
        Arc::new(Field::new("item", DataType::Utf8, true)),
        OffsetBuffer::from_lengths(lengths),
        Arc::new(StringArray::from(tags)),
        None,
    );
    let city: StringArray = (0..n).map(|_| Some(rng.pick(&cities))).collect();
    let zip: Int32Array = (0..n)
        .map(|_| (!rng.chance(5)).then(|| rng.below(99_999) as i32))
        .collect();
    let address = StructArray::from(vec![
        (
            Arc::new(Field::new("city", DataType::Utf8, true)),
            Arc::new(city) as ArrayRef,
        ),
        (
            Arc::new(Field::new("zip", DataType::Int32, true)),
            Arc::new(zip) as ArrayRef,
        ),
    ]);
    let at = TimestampMicrosecondArray::from(
        (0..n)
            .map(|i| 1_700_000_000_000_000 + i as i64 * 1_000_003)
            .collect::<Vec<_>>(),
    )
    .with_timezone("UTC");
    let columns: Vec<ArrayRef> = vec![
        Arc::new(ids),
        Arc::new(users),
        Arc::new(scores),
        Arc::new(active),
        Arc::new(tags),
        Arc::new(address),
        Arc::new(at),
    ];
    let fields: Fields = ["id", "user", "score", "active", "tags", "address", "at"]
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    Arc::new(StructArray::new(fields, columns, None))
}

fn arrow_rs_to_variant(array: &ArrayRef) -> StructArray {
    parquet_variant_compute::cast_to_variant(array.as_ref())
        .expect("arrow-rs cast_to_variant")
        .into_inner()
}

fn as_binary_layout(s: &StructArray) -> ArrayRef {
    let to_binary = |name: &str| {
        arrow::compute::cast(s.column_by_name(name).expect("column"), &DataType::Binary)
            .expect("cast")
    };
    let fields = vec![
        Arc::new(Field::new("metadata", DataType::Binary, false)),
        Arc::new(Field::new("value", DataType::Binary, false)),
    ];
    Arc::new(
        StructArray::try_new(
            fields.into(),
            vec![to_binary("metadata"), to_binary("value")],
            s.nulls().cloned(),
        )
        .expect("struct"),
    )
}

fn bench_to_variant(c: &mut Criterion) {
    let input = struct_batch();
    let field = Arc::new(Field::new("event", input.data_type().clone(), true));
    let udf = to_variant_udf();

    let ours = common::invoke_udf(&udf, &field, &input);
    let theirs = as_binary_layout(&arrow_rs_to_variant(&input));
    let tz = SessionTimeZone::utc();
    let stripped = common::invoke_udf(
        &variant_strip_nulls_udf(),
        &common::our_variant_field(),
        &ours,
    );
    let ours_json = variant_array_to_json("to_json", &stripped, &tz).expect("ours to_json");
    let theirs_json = variant_array_to_json("to_json", &theirs, &tz).expect("theirs to_json");
    assert_eq!(
        ours_json.as_string::<i32>(),
        theirs_json.as_string::<i32>(),
        "ours and arrow-rs disagree"
    );

    let mut group = c.benchmark_group("to_variant");
    group.throughput(Throughput::Elements(input.len() as u64));
    group.bench_function("to_variant struct ours 8k", |b| {
        b.iter(|| black_box(common::invoke_udf(&udf, &field, black_box(&input))))
    });
    group.bench_function("to_variant struct arrow-rs 8k", |b| {
        b.iter(|| black_box(arrow_rs_to_variant(black_box(&input))))
    });
    group.finish();
}

criterion_group!(benches, bench_to_variant);
criterion_main!(benches);
