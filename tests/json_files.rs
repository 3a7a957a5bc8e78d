//! Reading JSON files into variants (`read_json_variant`, `src/json_files/`) where SQL files
//! cannot reach: byte ranges of one file cut at every offset around its line ends, a split scan
//! planned by DataFusion, a 50 MB line under a memory limit, the pool's limit on a reader, and
//! the `bad_records` metric.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::memory_pool::GreedyMemoryPool;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_datasource::TableSchema;
use datafusion_parquet_variant::json_files::{JsonReadOptions, VariantJsonFormat};
use datafusion_parquet_variant::session_context;

/// A fresh folder of this test's own under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("datafusion-parquet-variant-json-files")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ctx_with(config: SessionConfig, memory_limit: Option<usize>) -> SessionContext {
    let mut runtime = RuntimeEnvBuilder::new();
    if let Some(limit) = memory_limit {
        runtime = runtime.with_memory_pool(Arc::new(GreedyMemoryPool::new(limit)));
    }
    let ctx = SessionContext::new_with_config_rt(config, runtime.build_arc().unwrap());
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx
}

/// The last column of `batches` as strings (NULL as "NULL"): the value, or an EXPLAIN's plan.
fn strings(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for batch in batches {
        let column = batch.column(batch.num_columns() - 1);
        let column =
            datafusion::arrow::compute::cast(column, &datafusion::arrow::datatypes::DataType::Utf8)
                .unwrap();
        let column = column.as_string::<i32>();
        for i in 0..column.len() {
            out.push(if column.is_valid(i) {
                column.value(i).to_string()
            } else {
                "NULL".to_string()
            });
        }
    }
    out
}

async fn sql_strings(ctx: &SessionContext, sql: &str) -> Vec<String> {
    strings(&ctx.sql(sql).await.unwrap().collect().await.unwrap())
}

async fn sql_error(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Ok(df) => df.collect().await.map(|_| ()),
        Err(e) => Err(e),
    }
    .expect_err(sql)
    .to_string()
}

/// `to_json` of each document the scan reads from `path` split as `groups` (each a list of
/// byte ranges), sorted.
async fn read_ranges(path: &Path, groups: &[Vec<(i64, i64)>]) -> Vec<String> {
    let format = VariantJsonFormat::new(JsonReadOptions::default());
    let schema = format.options().schema();
    let source = format.file_source(TableSchema::from(Arc::clone(&schema)));
    let size = std::fs::metadata(path).unwrap().len();
    let location = path.to_str().unwrap().trim_start_matches('/').to_string();
    let file_groups = groups
        .iter()
        .map(|ranges| {
            FileGroup::new(
                ranges
                    .iter()
                    .map(|&(start, end)| {
                        PartitionedFile::new(location.clone(), size).with_range(start, end)
                    })
                    .collect(),
            )
        })
        .collect();
    let config = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), source)
        .with_file_groups(file_groups)
        .build();
    let ctx = session_context();
    let batches = collect(DataSourceExec::from_data_source(config), ctx.task_ctx())
        .await
        .unwrap();
    ctx.register_batch(
        "t",
        datafusion::arrow::compute::concat_batches(&schema, &batches).unwrap(),
    )
    .unwrap();
    let mut rows = sql_strings(&ctx, "SELECT to_json(v) FROM t").await;
    rows.sort();
    rows
}

/// Every cut of the file into two byte ranges, at each offset from two bytes before to two
/// bytes after every line end (and at both ends of the file), gives every document once.
#[tokio::test]
async fn byte_ranges_cut_around_every_line_end_give_each_document_once() {
    let dir = scratch("ranges");
    let path = dir.join("lines.ndjson");
    let text: &[u8] = b"{\"a\":1}\n\n{\"b\":[1,2,3]}\r\n   \n\"x\"\n{\"c\":{\"d\":null}}\n7\n[]";
    std::fs::write(&path, text).unwrap();
    let size = text.len() as i64;
    let whole = read_ranges(&path, &[vec![(0, size)]]).await;
    assert_eq!(
        whole,
        [
            "\"x\"",
            "7",
            "[]",
            "{\"a\":1}",
            "{\"b\":[1,2,3]}",
            "{\"c\":{\"d\":null}}"
        ]
    );
    let mut cuts: Vec<i64> = vec![0, 1, size - 1, size];
    for (i, b) in text.iter().enumerate() {
        if *b == b'\n' {
            let i = i as i64;
            cuts.extend((i - 2)..=(i + 2));
        }
    }
    cuts.retain(|c| (0..=size).contains(c));
    cuts.sort();
    cuts.dedup();
    for &cut in &cuts {
        // the two ranges as two partitions, and as one partition reading both in turn
        let halves = [(0, cut), (cut, size)];
        let partitions: Vec<Vec<(i64, i64)>> = halves
            .iter()
            .filter(|(a, b)| a < b)
            .map(|r| vec![*r])
            .collect();
        assert_eq!(read_ranges(&path, &partitions).await, whole, "cut at {cut}");
        let one: Vec<(i64, i64)> = halves.iter().copied().filter(|(a, b)| a < b).collect();
        assert_eq!(
            read_ranges(&path, &[one]).await,
            whole,
            "cut at {cut}, one partition"
        );
    }
}

/// 3000 lines of NDJSON, line `bad_line` (counted from 1) cut off when given.
fn write_lines(path: &Path, bad_line: Option<usize>) {
    let mut text = String::new();
    for i in 1..=3000 {
        if Some(i) == bad_line {
            text.push_str("{\"i\":\n");
        } else {
            text.push_str(&format!("{{\"i\":{i},\"s\":\"{}\"}}\n", "x".repeat(i % 40)));
        }
    }
    std::fs::write(path, text).unwrap();
}

/// DataFusion splits a large uncompressed file into byte ranges (one per partition); the rows
/// are those of the whole file, and a bad line far into the file is named by its line number
/// counted from the file's start.
#[tokio::test]
async fn a_split_file_reads_every_line_once_and_names_lines_from_the_file_start() {
    let dir = scratch("split");
    let path = dir.join("lines.ndjson");
    write_lines(&path, None);
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 1024);
    let ctx = ctx_with(config, None);
    let location = path.to_str().unwrap();
    let plan = sql_strings(
        &ctx,
        &format!("EXPLAIN SELECT count(*) FROM read_json_variant('{location}')"),
    )
    .await
    .join("\n");
    assert!(plan.contains("file_groups={4 groups"), "{plan}");
    assert!(plan.contains("lines.ndjson:0.."), "{plan}");
    assert!(
        plan.contains("file_type=json_variant, mode=FAILFAST"),
        "{plan}"
    );
    // the tree's box shows each option on a line of its own
    let tree = sql_strings(
        &ctx,
        &format!("EXPLAIN FORMAT TREE SELECT count(*) FROM read_json_variant('{location}')"),
    )
    .await
    .join("\n");
    assert!(
        (tree.lines()).any(|l| l.contains("mode: FAILFAST") && !l.contains("files")),
        "{tree}"
    );
    let rows = sql_strings(
        &ctx,
        &format!("SELECT count(*) FROM read_json_variant('{location}')"),
    )
    .await;
    assert_eq!(rows, ["3000"]);
    let sums = ctx
        .sql(&format!(
            "SELECT count(DISTINCT v:i::int) AS d, sum(v:i::bigint) AS s FROM read_json_variant('{location}')"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let shown = pretty_format_batches(&sums).unwrap().to_string();
    assert!(shown.contains("| 3000 | 4501500 |"), "{shown}");

    write_lines(&path, Some(2900));
    let e = sql_error(
        &ctx,
        &format!("SELECT count(*) FROM read_json_variant('{location}')"),
    )
    .await;
    assert!(e.contains("lines.ndjson, line 2900 (byte "), "{e}");
    assert!(e.contains("in '{\"i\":'"), "{e}");
}

/// A 50 MB line is a bad record under the default limit of 16 MiB: FAILFAST names it, the
/// other modes go on, and the reader never holds it whole (the session's pool has 40 MiB; the
/// reader holds at most the limit before it knows the line is too long).
#[tokio::test]
async fn a_50_mb_line_is_a_bad_record_and_is_not_held() {
    let dir = scratch("long_line");
    let path = dir.join("long.ndjson");
    let mut text = String::from("{\"a\":1}\n[");
    text.push_str(&"1,".repeat(25 * 1024 * 1024));
    text.push_str("1]\n{\"a\":2}\n");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let ctx = ctx_with(
        SessionConfig::new().with_target_partitions(1),
        Some(40 << 20),
    );
    let location = path.to_str().unwrap();
    let e = sql_error(
        &ctx,
        &format!("SELECT count(*) FROM read_json_variant('{location}')"),
    )
    .await;
    assert!(
        e.contains("long.ndjson, line 2 (byte 8): the document is longer than maxDocumentBytes (16777216 bytes) in '[1,1,1,"),
        "{e}"
    );
    let rows = sql_strings(
        &ctx,
        &format!("SELECT to_json(v) FROM read_json_variant('{location}', 'mode', 'DROPMALFORMED')"),
    )
    .await;
    assert_eq!(rows, ["{\"a\":1}", "{\"a\":2}"]);
    let rows = sql_strings(
        &ctx,
        &format!(
            "SELECT length(c) FROM read_json_variant('{location}', 'mode', 'PERMISSIVE', \
             'columnNameOfCorruptRecord', 'c') WHERE v IS NULL"
        ),
    )
    .await;
    assert_eq!(
        rows,
        ["1024"],
        "the corrupt-record text of an oversized line is its first KiB"
    );
}

/// What a reader holds is in the session's pool: its block of input (1 MiB) and a batch of 8192
/// variants of about 300 bytes do not fit in 2 MiB (the pool's error); with small batches they
/// do.
#[tokio::test]
async fn a_reader_holds_its_batch_in_the_memory_pool() {
    let dir = scratch("pool");
    let path = dir.join("wide.ndjson");
    let line = format!("{{\"s\":\"{}\"}}\n", "y".repeat(300));
    std::fs::write(&path, line.repeat(20_000)).unwrap();
    let location = path.to_str().unwrap();
    let sql = format!("SELECT count(v) FROM read_json_variant('{location}')");
    let config = SessionConfig::new().with_target_partitions(1);
    let e = sql_error(&ctx_with(config.clone(), Some(2 << 20)), &sql).await;
    assert!(e.contains("Resources exhausted"), "{e}");
    assert!(e.contains("read_json_variant[0]"), "{e}");
    let small_batches = config.with_batch_size(64);
    assert_eq!(
        sql_strings(&ctx_with(small_batches, Some(2 << 20)), &sql).await,
        ["20000"]
    );
}

/// DROPMALFORMED counts what it leaves out in the scan's `bad_records` metric.
#[tokio::test]
async fn explain_analyze_shows_the_bad_records() {
    let ctx = session_context();
    let plan = sql_strings(
        &ctx,
        "EXPLAIN ANALYZE SELECT count(*) FROM \
         read_json_variant('sqllogictests/data/json/bad.ndjson', 'mode', 'DROPMALFORMED')",
    )
    .await
    .join("\n");
    assert!(plan.contains("bad_records=4"), "{plan}");
}

/// The scan counts the bytes it reads from its files as stored (`bytes_scanned`, as DataFusion's
/// Parquet scan does): a gzipped file's compressed size, an uncompressed file's size.
#[tokio::test]
async fn bytes_scanned_are_the_files_bytes_as_stored() {
    for file in [
        "sqllogictests/data/json/events.ndjson.gz",
        "sqllogictests/data/json/bad.ndjson",
    ] {
        let ctx = session_context();
        let plan = ctx
            .sql(&format!(
                "SELECT count(*) FROM read_json_variant('{file}', 'mode', 'DROPMALFORMED')"
            ))
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx())
            .await
            .unwrap();
        let mut scanned = 0;
        let mut stack = vec![plan];
        while let Some(node) = stack.pop() {
            if let Some(metrics) = node.metrics() {
                scanned += metrics
                    .sum_by_name("bytes_scanned")
                    .map_or(0, |m| m.as_usize());
            }
            stack.extend(node.children().into_iter().cloned());
        }
        let size = std::fs::metadata(file).unwrap().len() as usize;
        assert_eq!(scanned, size, "{file}");
    }
}
