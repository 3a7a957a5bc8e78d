//! A Parquet scan built by hand over DataFusion's `ParquetSource`, as lakehouse table providers
//! build theirs (no `ListingTable`, no `VariantParquetFormat`), given our per-file work through
//! the public API (`parquet::variant_scan`, `parquet::with_variant_scans`): it reads only the
//! shredded leaves a path needs and prunes row groups on them, with the answers of our own table.
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use common::recording::{Recording, leaves_read};
use common::{metric_sum, run};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder, ParquetSource};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::Expr;
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::parquet::{variant_scan, with_variant_scans};
use datafusion_parquet_variant::session_context;
use datafusion_parquet_variant::variant_array::variant_field;

/// How the hand-built table gives its scan our work.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Work {
    /// A plain `ParquetSource` scan.
    None,
    /// Its `FileScanConfig` through `variant_scan`.
    Config,
    /// Its finished plan through `with_variant_scans`.
    Plan,
}

/// A table over one Parquet file whose scan is built by hand, as a lakehouse provider does.
#[derive(Debug)]
struct HandBuiltTable {
    path: PathBuf,
    schema: SchemaRef,
    work: Work,
}

#[async_trait]
impl TableProvider for HandBuiltTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let size = std::fs::metadata(&self.path)?.len();
        let file = PartitionedFile::new(self.path.to_str().unwrap().trim_start_matches('/'), size);
        let source = Arc::new(ParquetSource::new(Arc::clone(&self.schema)));
        // the row count, as lakehouse logs keep it (without statistics DataFusion would put a
        // round-robin repartition above this small scan, which projections do not cross)
        let rows = SerializedFileReader::new(std::fs::File::open(&self.path)?)?
            .metadata()
            .file_metadata()
            .num_rows();
        let statistics =
            Statistics::new_unknown(&self.schema).with_num_rows(Precision::Exact(rows as usize));
        let config: FileScanConfig =
            FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), source)
                .with_file(file)
                .with_statistics(statistics)
                .with_projection_indices(projection.cloned())?
                .with_limit(limit)
                .build();
        Ok(match self.work {
            Work::None => DataSourceExec::from_data_source(config),
            Work::Config => DataSourceExec::from_data_source(variant_scan(config)?),
            Work::Plan => with_variant_scans(DataSourceExec::from_data_source(config))?,
        })
    }
}

/// The table's schema as the application declares it: `v` the unshredded variant type.
fn declared_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        variant_field("v", true),
    ]))
}

/// Writes six rows in three row groups of two, `v` shredded on `a` (a bigint) and `b` (a
/// string; one row holds a number there, which stays in the residual).
async fn write_file(dir: &Path) -> PathBuf {
    let ctx = session_context();
    let path = dir.join("events.parquet");
    run(
        &ctx,
        &format!(
            r#"COPY (SELECT id, parse_json(j) AS v FROM (VALUES
                (1, '{{"a":1,"b":"x","c":{{"d":true}}}}'),
                (2, '{{"a":2,"b":"y"}}'),
                (3, '{{"a":3,"b":7}}'),
                (4, '{{"a":4,"b":"z","e":[1,2]}}'),
                (5, '{{"a":5,"b":"x"}}'),
                (6, '{{"a":6}}')
              ) AS t(id, j) ORDER BY id) TO '{}' STORED AS PARQUET
              OPTIONS ('variant.shred.v' 'struct<a bigint, b string>',
                       'format.max_row_group_size' '2')"#,
            path.display()
        ),
    )
    .await;
    path
}

/// A session reading files through a recording store, with our table `ours` and the
/// hand-built table `hand` (given `work`) over `path`.
async fn session(path: &Path, work: Work) -> (SessionContext, Arc<Recording>) {
    let ctx = session_context();
    let store = Recording::new();
    ctx.register_object_store(
        &url::Url::parse("file://").unwrap(),
        Arc::clone(&store) as _,
    );
    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE ours STORED AS PARQUET LOCATION '{}'",
            path.display()
        ),
    )
    .await;
    let table = HandBuiltTable {
        path: path.to_path_buf(),
        schema: declared_schema(),
        work,
    };
    ctx.register_table("hand", Arc::new(table)).unwrap();
    (ctx, store)
}

fn set(leaves: &[&str]) -> BTreeSet<String> {
    leaves.iter().map(|s| s.to_string()).collect()
}

/// The result of `sql` as a printed table.
async fn answer(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&run(ctx, sql).await)
        .unwrap()
        .to_string()
}

/// `sql` run on the table `hand` and on `ours`: the same answer; returns it and the row groups
/// the hand-built scan pruned on variant paths.
async fn same_answer(ctx: &SessionContext, sql: &str) -> (String, usize) {
    let plan = common::plan(ctx, &sql.replace("{t}", "hand")).await;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    let hand = pretty_format_batches(&batches).unwrap().to_string();
    let ours = answer(ctx, &sql.replace("{t}", "ours")).await;
    assert_eq!(hand, ours, "{sql}");
    (hand, metric_sum(plan.as_ref(), "variant_row_groups_pruned"))
}

#[tokio::test]
async fn a_hand_built_scan_reads_only_the_leaves_of_a_path() {
    let dir = common::scratch_dir("foreign-scan-test", "leaves");
    let path = write_file(&dir).await;
    for work in [Work::Config, Work::Plan] {
        let (ctx, store) = session(&path, work).await;
        // a fully shredded path: its typed leaf alone
        assert_eq!(
            leaves_read(&ctx, &store, &path, "SELECT v:a::bigint FROM hand").await,
            set(&["v.typed_value.a.typed_value"]),
            "{work:?}"
        );
        // a path with a residual (7 is no string): the leaf's two columns and the metadata
        assert_eq!(
            leaves_read(&ctx, &store, &path, "SELECT v:b::string FROM hand").await,
            set(&[
                "v.metadata",
                "v.typed_value.b.typed_value",
                "v.typed_value.b.value"
            ]),
            "{work:?}"
        );
        // our own table reads the same leaves
        assert_eq!(
            leaves_read(&ctx, &store, &path, "SELECT v:a::bigint FROM ours").await,
            set(&["v.typed_value.a.typed_value"])
        );
    }
}

#[tokio::test]
async fn without_our_work_the_scan_cannot_read_the_shredded_file() {
    let dir = common::scratch_dir("foreign-scan-test", "plain");
    let path = write_file(&dir).await;
    let (ctx, _) = session(&path, Work::None).await;
    // DataFusion's own adapter would cast the shredded struct to the declared one
    let err = common::first_cell(&ctx, "SELECT v:a::bigint FROM hand")
        .await
        .unwrap_err();
    assert!(err.contains("Cannot cast column 'v'"), "{err}");
}

#[tokio::test]
async fn a_hand_built_scan_prunes_row_groups_with_the_answers_of_our_table() {
    let dir = common::scratch_dir("foreign-scan-test", "pruning");
    let path = write_file(&dir).await;
    for work in [Work::Config, Work::Plan] {
        let (ctx, _) = session(&path, work).await;
        // a = 5 lives in the third row group only
        let (text, pruned) = same_answer(
            &ctx,
            "SELECT id, v:b::string AS b FROM {t} WHERE v:a::bigint = 5",
        )
        .await;
        assert!(text.contains("| 5  | x |"), "{text}");
        assert_eq!(pruned, 2, "{work:?}");
        // b = 'z': the second row group holds 7 in b's residual, so it is read; the first and
        // third are pruned ('x' and 'y'; 'x' and none)
        let (text, pruned) = same_answer(
            &ctx,
            "SELECT id FROM {t} WHERE v:b::string = 'z' ORDER BY id",
        )
        .await;
        assert!(text.contains("| 4  |"), "{text}");
        assert_eq!(pruned, 2, "{work:?}");
        // whole values and reassembly: the same JSON as our table
        let (text, _) = same_answer(&ctx, "SELECT id, to_json(v) AS j FROM {t} ORDER BY id").await;
        assert!(text.contains(r#"{"a":4,"b":"z","e":[1,2]}"#), "{text}");
        assert!(text.contains(r#"{"a":3,"b":7}"#), "{text}");
    }
}

#[tokio::test]
async fn a_scan_of_another_format_is_refused() {
    use datafusion::datasource::physical_plan::CsvSource;
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
    let config = FileScanConfigBuilder::new(
        ObjectStoreUrl::local_filesystem(),
        Arc::new(CsvSource::new(schema)),
    )
    .build();
    let err = variant_scan(config).unwrap_err().to_string();
    assert!(
        err.contains("variant_scan: the scan reads csv files"),
        "{err}"
    );
}
