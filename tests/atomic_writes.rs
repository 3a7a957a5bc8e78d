//! A `COPY` or `INSERT` to Parquet that fails leaves nothing behind: no new file, no replaced
//! file, no staging file; one that succeeds leaves exactly its files under their real names. The
//! failing inputs go wrong late (a bad row after many good ones), when files are half written.
mod common;

use std::path::Path;
use std::time::Duration;

use common::{run, scratch_dir};
use datafusion::prelude::SessionContext;

fn ctx() -> SessionContext {
    let ctx = SessionContext::new().enable_url_table();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx
}

/// 200,000 rows of `{"a": i}`, with malformed JSON at row 150,000 when `bad`.
fn events(bad: bool) -> String {
    let broken = if bad { "150000" } else { "-1" };
    format!(
        "SELECT i % 3 AS p, parse_json(CASE WHEN i = {broken} THEN '{{oops' \
         ELSE '{{\"a\":' || i || '}}' END) AS v FROM generate_series(1, 200000) t(i)"
    )
}

/// Every file under `dir` (recursively), as paths relative to it, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = vec![];
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

async fn fails(ctx: &SessionContext, sql: &str) -> String {
    let result = match ctx.sql(sql).await {
        Ok(df) => df.collect().await.map(|_| ()),
        Err(e) => Err(e),
    };
    result.expect_err(sql).to_string()
}

async fn count(ctx: &SessionContext, location: &str) -> String {
    let sql = format!("SELECT count(*) AS n FROM '{location}'");
    common::first_cell(ctx, &sql).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_failed_copy_to_one_file_leaves_no_file_and_keeps_the_old_one() {
    let ctx = ctx();
    let dir = scratch_dir("atomic_writes", "single");
    let out = dir.join("out.parquet");
    let copy = |bad| {
        format!(
            "COPY ({}) TO '{}' STORED AS PARQUET",
            events(bad),
            out.display()
        )
    };
    let e = fails(&ctx, &copy(true)).await;
    assert!(e.contains("parse_json"), "{e}");
    assert_eq!(files(&dir), Vec::<String>::new());

    run(&ctx, &copy(false)).await;
    assert_eq!(files(&dir), ["out.parquet"]);
    let before = std::fs::read(&out).unwrap();
    fails(&ctx, &copy(true)).await;
    assert_eq!(files(&dir), ["out.parquet"]);
    assert!(
        std::fs::read(&out).unwrap() == before,
        "the old file was replaced"
    );
    assert_eq!(count(&ctx, out.to_str().unwrap()).await, "200000");
}

#[tokio::test]
async fn a_failed_copy_to_a_directory_leaves_no_file() {
    let ctx = ctx();
    let dir = scratch_dir("atomic_writes", "directory");
    let target = format!("{}/", dir.join("out").display());
    let copy = |bad, partitioned: bool| {
        let by = if partitioned {
            " PARTITIONED BY (p)"
        } else {
            ""
        };
        format!("COPY ({}) TO '{target}' STORED AS PARQUET{by}", events(bad))
    };
    for partitioned in [false, true] {
        fails(&ctx, &copy(true, partitioned)).await;
        assert_eq!(
            files(&dir),
            Vec::<String>::new(),
            "partitioned: {partitioned}"
        );
    }
    run(&ctx, &copy(false, true)).await;
    let written = files(&dir);
    assert!(!written.is_empty());
    for file in &written {
        assert!(file.starts_with("out/p="), "{file}");
        assert!(file.ends_with(".parquet"), "{file}");
    }
    fails(&ctx, &copy(true, true)).await;
    assert_eq!(files(&dir), written);
    assert_eq!(count(&ctx, &target).await, "200000");
}

/// DataFusion's own sink (no variant column) is staged the same way.
#[tokio::test]
async fn a_failed_copy_of_plain_columns_leaves_no_file() {
    let ctx = ctx();
    let dir = scratch_dir("atomic_writes", "plain");
    let copy = format!(
        "COPY (SELECT CAST(CASE WHEN i = 150000 THEN 'x' ELSE '1' END AS INT) AS n \
         FROM generate_series(1, 200000) t(i)) TO '{}' STORED AS PARQUET",
        dir.join("plain.parquet").display()
    );
    fails(&ctx, &copy).await;
    assert_eq!(files(&dir), Vec::<String>::new());
}

#[tokio::test]
async fn a_failed_insert_adds_no_file() {
    let ctx = ctx();
    let dir = scratch_dir("atomic_writes", "insert");
    let table = format!("{}/", dir.join("t").display());
    run(
        &ctx,
        &format!("COPY ({}) TO '{table}' STORED AS PARQUET", events(false)),
    )
    .await;
    run(
        &ctx,
        &format!("CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{table}'"),
    )
    .await;
    let written = files(&dir);
    assert!(!written.is_empty());
    fails(&ctx, &format!("INSERT INTO t {}", events(true))).await;
    assert_eq!(files(&dir), written);
    run(&ctx, &format!("INSERT INTO t {}", events(false))).await;
    assert!(files(&dir).len() > written.len());
    assert_eq!(count(&ctx, &table).await, "400000");
}

/// A write whose future is dropped part-way (a cancelled query) removes what it staged: here a
/// directory output cut into files of 20,000 rows, several of them complete at the cancellation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_copy_leaves_no_file() {
    let ctx = ctx();
    run(
        &ctx,
        "SET datafusion.execution.soft_max_rows_per_output_file = 20000",
    )
    .await;
    let dir = scratch_dir("atomic_writes", "cancelled");
    let copy = format!(
        "COPY (SELECT parse_json('{{\"a\":' || i || '}}') AS v FROM generate_series(1, 20000000) t(i)) \
         TO '{}/' STORED AS PARQUET",
        dir.join("big").display()
    );
    let df = ctx.sql(&copy).await.unwrap();
    let write = df.collect();
    assert!(
        tokio::time::timeout(Duration::from_millis(1500), write)
            .await
            .is_err(),
        "the write finished before it was cancelled"
    );
    // The clean-up runs as a task after the drop.
    let mut left = files(&dir);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = files(&dir);
    }
    assert_eq!(left, Vec::<String>::new());
}

/// Every entry under `dir` (files and folders, recursively) whose name starts with `.`: staging
/// names left behind.
fn hidden(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') {
                out.push(name);
            }
            if path.is_dir() {
                folders.push(path);
            }
        }
    }
    out
}

/// Names with characters an object store encodes (`~`, `#`, `%`, spaces, non-ASCII) and partition
/// values holding them (and a `/`): the files land under exactly those names, and no staging
/// file or folder stays behind, after success or failure.
#[tokio::test]
async fn names_that_need_encoding_are_published_as_written() {
    let ctx = ctx();
    let dir = scratch_dir("atomic_writes", "encoded");
    let file = dir.join("a~b #1 é%.parquet");
    run(
        &ctx,
        &format!(
            "COPY (SELECT 1 AS x) TO '{}' STORED AS PARQUET",
            file.display()
        ),
    )
    .await;
    assert_eq!(files(&dir), ["a~b #1 é%.parquet"]);
    let table = dir.join("données~");
    let partitioned = format!(
        "COPY (SELECT * FROM (VALUES ('a/b', 1), ('Zürich', 2), ('100%', 3)) t(p, x)) \
         TO '{}/' STORED AS PARQUET PARTITIONED BY (p)",
        table.display()
    );
    run(&ctx, &partitioned).await;
    fails(
        &ctx,
        &format!(
            "COPY ({}) TO '{}/' STORED AS PARQUET",
            events(true),
            table.display()
        ),
    )
    .await;
    let written = files(&table);
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(written.iter().any(|f| f.starts_with("p=Z")), "{written:?}");
    assert_eq!(hidden(&dir), Vec::<String>::new());
    assert_eq!(count(&ctx, &format!("{}/", table.display())).await, "3");
}
