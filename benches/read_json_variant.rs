//! Reading NDJSON into variants: our `DocumentReader` (what `read_json_variant` runs per file:
//! lines cut out of the file's bytes, parsed into a variant batch) over the bytes of 8192 JSON
//! event objects, beside `parse_json` over the same documents already in a `StringArray` (the
//! parse without the cutting) and arrow-rs `json_to_variant` on that array.
mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion::arrow::array::{Array, AsArray};
use datafusion_parquet_variant::functions::parse_json::parse_json_udf;
use datafusion_parquet_variant::json_files::JsonReadOptions;
use datafusion_parquet_variant::json_files::documents::{ByteRange, DocumentReader};
use parquet_variant_compute::json_to_variant;

fn bench_read_json_variant(c: &mut Criterion) {
    let json = common::default_batch();
    let strings = json.as_string::<i32>();
    let mut file = Vec::new();
    for i in 0..strings.len() {
        file.extend_from_slice(strings.value(i).as_bytes());
        file.push(b'\n');
    }
    let options = JsonReadOptions::default();
    let schema = options.schema();
    let read = |bytes: &[u8]| {
        let mut reader = DocumentReader::new(&options, schema.clone(), 1 << 20, ByteRange::WHOLE);
        // in blocks of 1 MiB, as a local file is read
        for block in bytes.chunks(1 << 20) {
            let mut rest = block;
            while !rest.is_empty() {
                let taken = reader.decode(rest).unwrap();
                rest = &rest[taken..];
            }
        }
        reader.finish().unwrap();
        reader.flush().unwrap().unwrap()
    };
    assert_eq!(read(&file).num_rows(), json.len());
    let udf = parse_json_udf();
    let field = common::utf8_field();
    assert_eq!(json_to_variant(&json).unwrap().len(), json.len());

    let mut group = c.benchmark_group("read_json_variant");
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.bench_function("read_json_variant ours ndjson 8k", |b| {
        b.iter(|| black_box(read(black_box(&file))))
    });
    group.bench_function("parse_json ours 8k strings", |b| {
        b.iter(|| black_box(common::invoke_udf(&udf, &field, black_box(&json))))
    });
    group.bench_function("json_to_variant arrow-rs 8k strings", |b| {
        b.iter(|| black_box(json_to_variant(black_box(&json)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench_read_json_variant);
criterion_main!(benches);
