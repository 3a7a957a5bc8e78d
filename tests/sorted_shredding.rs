//! Automatic shredding survives sorted input: a sorted COPY infers from a sample of its whole
//! input (taken under the sort), so it shreds the paths an unsorted COPY of the same rows
//! shreds, whatever the order, where the first rows of its output are all alike.
use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_parquet_variant::register_all_with_state;

/// 25,000 events: every fifth of kind `a` ({kind, x}), the others of kind `b` ({kind, commit:
/// {op, n}}). Sorted by kind, the first 5,000 rows (more than the 4,096 sampled) are all `a`.
const EVENTS: &str = "SELECT CASE WHEN i % 5 = 0 \
    THEN parse_json('{\"kind\":\"a\",\"x\":' || i || '}') \
    ELSE parse_json('{\"kind\":\"b\",\"commit\":{\"op\":\"create\",\"n\":' || i || '}}') END AS v \
    FROM generate_series(1, 25000) t(i)";

fn session(target_partitions: usize) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(target_partitions);
    let state = register_all_with_state(
        datafusion::execution::SessionStateBuilder::new()
            .with_config(config)
            .with_default_features(),
    )
    .build();
    SessionContext::new_with_state(state)
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join("datafusion-parquet-variant-sorted-shredding");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The type `v` was written with in the file at `path`.
fn written_type(path: &PathBuf) -> DataType {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    builder
        .schema()
        .field_with_name("v")
        .unwrap()
        .data_type()
        .clone()
}

/// The names of the shredded fields of `v` (its typed_value's struct fields).
fn shredded_fields(t: &DataType) -> Vec<String> {
    let DataType::Struct(fields) = t else {
        panic!("not a struct: {t}")
    };
    let Some(typed) = fields.iter().find(|f| f.name() == "typed_value") else {
        return vec![];
    };
    let DataType::Struct(fields) = typed.data_type() else {
        return vec![];
    };
    fields.iter().map(|f| f.name().clone()).collect()
}

async fn copy(ctx: &SessionContext, order: &str, path: &PathBuf) -> DataType {
    let sql = format!(
        "COPY (SELECT v FROM ({EVENTS}) {order}) TO '{}' STORED AS PARQUET",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    written_type(path)
}

/// The plans of the COPY of the events in `order` to `path`, as text.
async fn explain_copy(ctx: &SessionContext, order: &str, path: &Path) -> String {
    let sql = format!(
        "EXPLAIN COPY (SELECT v FROM ({EVENTS}) {order}) TO '{}' STORED AS PARQUET",
        path.display()
    );
    let plan = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    datafusion::arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_sorted_copy_shreds_what_an_unsorted_one_does() {
    let dir = scratch();
    let ctx = session(4);
    let unsorted = copy(&ctx, "", &dir.join("unsorted.parquet")).await;
    assert_eq!(shredded_fields(&unsorted), ["commit", "kind", "x"]);
    let sorted = copy(&ctx, "ORDER BY v:kind::string", &dir.join("sorted.parquet")).await;
    assert_eq!(
        shredded_fields(&sorted),
        ["commit", "kind", "x"],
        "{sorted}"
    );
    // the same rows in another order, and in another number of partitions: the same sample
    let descending = copy(
        &ctx,
        "ORDER BY v:kind::string DESC, v:x::int",
        &dir.join("desc.parquet"),
    )
    .await;
    assert_eq!(descending, sorted);
    let one = copy(
        &session(1),
        "ORDER BY v:kind::string",
        &dir.join("one.parquet"),
    )
    .await;
    assert_eq!(one, sorted);
    // the plan shows the sample under the sort
    let text = explain_copy(
        &ctx,
        "ORDER BY v:kind::string",
        &dir.join("explained.parquet"),
    )
    .await;
    assert!(text.contains("VariantSampleExec: columns=[v]"), "{text}");
}

/// Without a sort above it the sample is never used: the sink samples its first rows, as before
/// (sorted input the optimizer need not sort, e.g. a LIMIT-free scan, keeps that behaviour).
#[tokio::test]
async fn an_unsorted_copy_has_no_sample() {
    let dir = scratch();
    let ctx = session(2);
    let text = explain_copy(&ctx, "", &dir.join("plain.parquet")).await;
    assert!(!text.contains("VariantSampleExec"), "{text}");
}
