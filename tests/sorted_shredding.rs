//! Automatic shredding survives sorted input: a sorted COPY infers from a sample of its whole
//! input (taken under the sort), so it shreds the paths an unsorted COPY of the same rows
//! shreds, whatever the order, where the first rows of its output are all alike. An unsorted
//! COPY infers from the first rows of each of its input's partitions, whichever comes first.
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

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("datafusion-parquet-variant-sorted-shredding")
        .join(name);
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
    let dir = scratch("sorted");
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
    assert!(
        text.contains("VariantSampleExec: columns=[v], of=whole input"),
        "{text}"
    );
}

/// Without a sort, the sample is of each partition's first rows, taken below the merge of the
/// partitions: the sink waits for all of them, so a partition whose first rows come late is
/// sampled as much as one that has sent all of its rows by then. 20,000 `{"a":..}` rows come at
/// once; 10,000 `{"b":..}` rows come after three million others are filtered out. The sink's
/// first 4,096 rows are all `a`; the sample holds both, whichever side of the union is slow.
#[tokio::test]
async fn an_unsorted_copy_samples_every_partitions_first_rows() {
    let dir = scratch("unsorted");
    let ctx = session(2);
    let fast = "SELECT parse_json('{\"a\":' || i || '}') AS v FROM generate_series(1, 20000) t(i)";
    let slow = "SELECT parse_json('{\"b\":\"' || i || '\"}') AS v \
                FROM generate_series(1, 3000000) t(i) WHERE i > 2990000";
    for (name, input) in [
        ("fast_first", format!("{fast} UNION ALL {slow}")),
        ("slow_first", format!("{slow} UNION ALL {fast}")),
    ] {
        let path = dir.join(format!("{name}.parquet"));
        let copy = format!("COPY ({input}) TO '{}' STORED AS PARQUET", path.display());
        let plan = ctx.sql(&format!("EXPLAIN {copy}")).await.unwrap();
        let plan =
            datafusion::arrow::util::pretty::pretty_format_batches(&plan.collect().await.unwrap())
                .unwrap()
                .to_string();
        let sampler = plan
            .find("VariantSampleExec: columns=[v], of=partition heads")
            .unwrap_or_else(|| panic!("{plan}"));
        let merge = plan.find("CoalescePartitionsExec").unwrap();
        assert!(merge < sampler, "{plan}");
        ctx.sql(&copy).await.unwrap().collect().await.unwrap();
        assert_eq!(shredded_fields(&written_type(&path)), ["a", "b"], "{name}");
    }
}

/// Waiting for the slow partition's first rows holds what the fast one sends meanwhile in the
/// memory pool; where the pool cannot hold it, the sink stops waiting and infers from its first
/// rows (all `a` here) rather than fail: 400,000 rows (about 20 MB) under a pool of 8 MiB.
#[tokio::test]
async fn waiting_for_a_slow_partition_stays_within_the_pool() {
    let dir = scratch("pool");
    let pool = datafusion::execution::memory_pool::GreedyMemoryPool::new(8 << 20);
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_memory_pool(std::sync::Arc::new(pool))
        .build_arc()
        .unwrap();
    let state = register_all_with_state(
        datafusion::execution::SessionStateBuilder::new()
            .with_config(SessionConfig::new().with_target_partitions(2))
            .with_runtime_env(runtime)
            .with_default_features(),
    )
    .build();
    let ctx = SessionContext::new_with_state(state);
    let path = dir.join("limited.parquet");
    let copy = format!(
        "COPY (SELECT parse_json('{{\"a\":' || i || '}}') AS v FROM generate_series(1, 400000) t(i) \
         UNION ALL SELECT parse_json('{{\"b\":\"' || i || '\"}}') AS v \
         FROM generate_series(1, 3000000) t(i) WHERE i > 2990000) TO '{}' STORED AS PARQUET",
        path.display()
    );
    ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    assert_eq!(shredded_fields(&written_type(&path)), ["a"]);
}

/// A partitioned write (`PARTITIONED BY`) takes no such sample: each file holds the rows of one
/// partition value, which its own first rows describe.
#[tokio::test]
async fn a_partitioned_copy_has_no_sample() {
    let dir = scratch("partitioned");
    let ctx = session(2);
    let sql = format!(
        "EXPLAIN COPY (SELECT v, v:kind::string AS kind FROM ({EVENTS})) TO '{}/' \
         STORED AS PARQUET PARTITIONED BY (kind)",
        dir.display()
    );
    let plan = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    assert!(text.contains("VariantParquetSink"), "{text}");
    assert!(!text.contains("VariantSampleExec"), "{text}");
}
