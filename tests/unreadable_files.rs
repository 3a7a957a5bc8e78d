//! Parquet files a scan cannot read, where SQL cannot reach (sqllogictests/
//! parquet_unreadable_files.slt has the rest): a file deleted between planning and reading
//! (named, or skipped with `variant.ignore_missing_files`), the skipped files' metrics, and the
//! options carried by a serialized plan.
mod common;

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::physical_plan::{ExecutionPlan, collect, displayable};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::plan_codec::{physical_plan_from_bytes, physical_plan_to_bytes};
use datafusion_parquet_variant::session_context;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sqllogictests/data/unreadable");

/// A scratch folder with good_0.parquet (ids 1-100) and good_1.parquet (ids 101-200).
fn good_files(name: &str) -> common::TempPath {
    let dir = common::TempPath::dir(&format!("variant-unreadable-{name}"));
    for file in ["good_0.parquet", "good_1.parquet"] {
        std::fs::copy(Path::new(DATA).join("bad_page").join(file), dir.join(file)).unwrap();
    }
    dir
}

async fn table(ctx: &SessionContext, dir: &Path, settings: &[&str]) {
    for setting in settings {
        ctx.sql(setting).await.unwrap().collect().await.unwrap();
    }
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}/'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
}

async fn sum_of(ctx: &SessionContext, plan: Arc<dyn ExecutionPlan>) -> i64 {
    let batches = collect(plan, ctx.task_ctx()).await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test]
async fn a_file_gone_before_it_is_read_is_named_or_skipped() {
    for settings in [vec![], vec!["SET variant.ignore_corrupt_files = true"]] {
        let dir = good_files("missing");
        let ctx = session_context();
        table(&ctx, &dir, &settings).await;
        let plan = common::plan(&ctx, "SELECT sum(id) FROM t").await;
        std::fs::remove_file(dir.join("good_1.parquet")).unwrap();
        let error = collect(plan, ctx.task_ctx()).await.unwrap_err().to_string();
        let file = format!("reading file file://{}/good_1.parquet", dir.display());
        assert!(error.contains(&file), "{settings:?}: {error}");
    }

    let dir = good_files("missing-skipped");
    let ctx = session_context();
    table(&ctx, &dir, &["SET variant.ignore_missing_files = true"]).await;
    let plan = common::plan(&ctx, "SELECT sum(id) FROM t").await;
    std::fs::remove_file(dir.join("good_1.parquet")).unwrap();
    assert_eq!(sum_of(&ctx, Arc::clone(&plan)).await, 5050);
    assert_eq!(
        common::metric_sum(plan.as_ref(), "missing_files_skipped"),
        1
    );
    assert_eq!(
        common::metric_sum(plan.as_ref(), "corrupt_files_skipped"),
        0
    );
}

#[tokio::test]
async fn skipped_corrupt_files_are_counted_once_each() {
    let ctx = session_context();
    table(
        &ctx,
        &Path::new(DATA).join("bad_page"),
        &["SET variant.ignore_corrupt_files = true"],
    )
    .await;
    let plan = common::plan(&ctx, "SELECT sum(id) FROM t").await;
    assert_eq!(sum_of(&ctx, Arc::clone(&plan)).await, 20100);
    assert_eq!(
        common::metric_sum(plan.as_ref(), "corrupt_files_skipped"),
        1
    );
    assert_eq!(
        common::metric_sum(plan.as_ref(), "missing_files_skipped"),
        0
    );

    // without the option, no file is skipped and the metric says so where the query succeeds
    let ctx = session_context();
    table(&ctx, &Path::new(DATA).join("bad_page"), &[]).await;
    let plan = common::plan(&ctx, "SELECT count(v:tag::string) FROM t").await;
    collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    assert_eq!(
        common::metric_sum(plan.as_ref(), "corrupt_files_skipped"),
        0
    );
}

#[tokio::test]
async fn a_serialized_scan_keeps_its_options() {
    let ctx = session_context();
    table(
        &ctx,
        &Path::new(DATA).join("bad_page"),
        &[
            "SET variant.ignore_corrupt_files = true",
            "SET variant.ignore_missing_files = true",
        ],
    )
    .await;
    let plan = common::plan(&ctx, "SELECT sum(id) FROM t").await;
    let bytes = physical_plan_to_bytes(plan).unwrap();
    // decoded where the options are off: the plan carries them
    let worker = session_context();
    let decoded = physical_plan_from_bytes(&bytes, &worker.task_ctx()).unwrap();
    let text = displayable(decoded.as_ref()).indent(true).to_string();
    assert!(
        text.contains("ignore_corrupt_files=true, ignore_missing_files=true"),
        "{text}"
    );
    assert_eq!(sum_of(&worker, decoded).await, 20100);

    let plain = session_context();
    table(&plain, &Path::new(DATA).join("bad_page"), &[]).await;
    let plan = common::plan(&plain, "SELECT sum(id) FROM t").await;
    let decoded =
        physical_plan_from_bytes(&physical_plan_to_bytes(plan).unwrap(), &worker.task_ctx())
            .unwrap();
    let error = collect(decoded, worker.task_ctx()).await.unwrap_err();
    assert!(error.to_string().contains("bad_page.parquet"), "{error}");
}

#[tokio::test]
async fn a_file_read_in_byte_ranges_is_skipped_once() {
    let ctx = session_context();
    table(
        &ctx,
        &Path::new(DATA).join("truncated"),
        &[
            "SET variant.ignore_corrupt_files = true",
            "SET datafusion.optimizer.repartition_file_min_size = 0",
            "SET datafusion.execution.target_partitions = 8",
        ],
    )
    .await;
    let plan = common::plan(&ctx, "SELECT sum(id) FROM t").await;
    // the truncated file is read by two partitions, each from its own byte range
    let text = displayable(plan.as_ref()).indent(true).to_string();
    assert_eq!(text.matches("truncated.parquet:").count(), 2, "{text}");
    assert_eq!(sum_of(&ctx, Arc::clone(&plan)).await, 20100);
    assert_eq!(
        common::metric_sum(plan.as_ref(), "corrupt_files_skipped"),
        1
    );
}
