//! The query benchmark's queries (examples/jsonbench) on an in-memory datafusion-distributed
//! cluster of three workers, over a directory of Variant Parquet files written unshredded,
//! shredded on the queried paths and shredded automatically: the same rows, and the same bytes
//! read, as one process; then `COPY` through the cluster, read back.
//! Workers and the coordinator get what our plans need through `distributed::
//! variant_session_state`. Needs `--features distributed`.
#![cfg(feature = "distributed")]

mod common;
#[allow(dead_code)]
#[path = "../examples/jsonbench/generate.rs"]
mod generate;
#[allow(dead_code)]
#[path = "../examples/jsonbench/queries.rs"]
mod queries;

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::DataFusionError;
use datafusion::datasource::MemTable;
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    ChannelResolver, DistributedExt, DistributedMetricsFormat, SessionStateBuilderExt, Worker,
    WorkerChannel, WorkerQueryContext, WorkerResolver, display_plan_ascii, grpc,
    rewrite_distributed_plan_with_metrics,
};
use datafusion_parquet_variant::distributed::variant_session_state;
use datafusion_parquet_variant::slt::{SessionFactory, collect_files, run_files};
use hyper_util::rt::TokioIo;
use tonic::transport::{Endpoint, Server};
use url::Url;

const WORKERS: usize = 3;

/// One in-memory worker per URL, each served over its own duplex pipe.
#[derive(Clone)]
struct InMemoryCluster {
    channels: Vec<grpc::BoxCloneSyncChannel>,
}

impl InMemoryCluster {
    /// Starts the workers; each reaches the others (shuffles) through the same resolver.
    fn start() -> Self {
        let mut servers = vec![];
        let mut channels = vec![];
        for i in 0..WORKERS {
            let (client, server) = tokio::io::duplex(4 * 1024 * 1024);
            let mut client = Some(client);
            let endpoint = Endpoint::try_from(Self::url(i).to_string()).unwrap();
            let channel = endpoint.connect_with_connector_lazy(tower::service_fn(move |_| {
                let client = client.take().expect("one connection per worker");
                async move { Ok::<_, std::io::Error>(TokioIo::new(client)) }
            }));
            channels.push(grpc::BoxCloneSyncChannel::new(channel));
            servers.push(server);
        }
        let cluster = Self { channels };
        for server in servers {
            let resolver = cluster.clone();
            let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
                let resolver = resolver.clone();
                async move {
                    variant_session_state(ctx.builder.with_distributed_channel_resolver(resolver))
                }
            });
            tokio::spawn(async move {
                Server::builder()
                    .add_service(worker.into_worker_server())
                    .serve_with_incoming(tokio_stream::once(Ok::<_, std::io::Error>(server)))
                    .await
            });
        }
        cluster
    }

    fn url(i: usize) -> Url {
        Url::parse(&format!("http://worker-{i}:50051")).unwrap()
    }
}

#[async_trait]
impl ChannelResolver for InMemoryCluster {
    async fn get_worker_client_for_url(
        &self,
        url: &Url,
    ) -> Result<Box<dyn WorkerChannel>, DataFusionError> {
        let i = (0..WORKERS)
            .find(|&i| Self::url(i) == *url)
            .ok_or_else(|| DataFusionError::Internal(format!("no worker at {url}")))?;
        Ok(grpc::create_worker_client(self.channels[i].clone()))
    }
}

impl WorkerResolver for InMemoryCluster {
    fn get_urls(&self) -> Result<Vec<Url>, DataFusionError> {
        Ok((0..WORKERS).map(Self::url).collect())
    }
}

/// Writes `rows` benchmark events in three layouts, four files each, under `dir/<layout>/`.
async fn write_layouts(dir: &std::path::Path, rows: usize) {
    let mut generator = generate::Generator::new(0x0B1E_5C1E, rows / 10 + 1);
    let mut line = String::new();
    let events: Vec<String> = (0..rows)
        .map(|_| {
            line.clear();
            generator.event(&mut line);
            line.clone()
        })
        .collect();
    let schema = Arc::new(Schema::new(vec![Field::new("json", DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(StringArray::from(events))],
    )
    .unwrap();
    let ctx = datafusion_parquet_variant::session_context();
    ctx.register_table(
        "raw",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
    )
    .unwrap();
    let layouts = [
        (
            "unshredded",
            "OPTIONS ('variant.shred.v' 'none')".to_string(),
        ),
        (
            "shredded",
            format!("OPTIONS ('variant.shred.v' '{}')", queries::SHREDDED_PATHS),
        ),
        ("auto", String::new()),
    ];
    for (layout, options) in &layouts {
        for part in 0..4 {
            let sql = format!(
                "COPY (SELECT parse_json(json) AS v FROM (SELECT json, row_number() OVER () AS n FROM raw)
                       WHERE n % 4 = {part})
                 TO '{}/{layout}/part-{part}.parquet' STORED AS PARQUET {options}",
                dir.display()
            );
            common::run(&ctx, &sql).await;
        }
    }
}

async fn rows_of(ctx: &SessionContext, sql: &str) -> String {
    let batches = common::run(ctx, sql).await;
    pretty_format_batches(&batches).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn benchmark_queries_give_the_same_rows_on_three_workers() {
    let dir = common::scratch_dir("variant-distributed", "layouts");
    write_layouts(&dir, 20_000).await;

    let local = datafusion_parquet_variant::session_context();
    let cluster = InMemoryCluster::start();
    let distributed = SessionContext::new_with_state(
        variant_session_state(
            SessionStateBuilder::new()
                .with_default_features()
                .with_distributed_worker_resolver(cluster.clone())
                .with_distributed_channel_resolver(cluster)
                .with_distributed_planner()
                .with_distributed_file_scan_config_bytes_per_partition(1)
                .unwrap()
                .with_distributed_metrics_collection(true)
                .unwrap(),
        )
        .unwrap(),
    );

    for layout in ["unshredded", "shredded", "auto"] {
        let location = format!("{}/{layout}/", dir.display());
        for ctx in [&local, &distributed] {
            ctx.sql("DROP TABLE IF EXISTS t").await.unwrap();
            ctx.sql(&format!(
                "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{location}'"
            ))
            .await
            .unwrap();
        }
        for query in queries::QUERIES.iter().filter(|q| q.again_of.is_none()) {
            let expected = rows_of(&local, query.variant).await;
            let got = rows_of(&distributed, query.variant).await;
            assert_eq!(got, expected, "{} on {layout}", query.name);
        }
        // the plan is distributed (its stages run on the workers), and its scans read the bytes
        // one process reads: the paths' shredded leaves only, where the files shred them
        for query in queries::QUERIES.iter().filter(|q| q.again_of.is_none()) {
            let plan = common::plan(&distributed, query.variant).await;
            let shown = display_plan_ascii(plan.as_ref(), false);
            assert!(shown.contains("Stage 1"), "{shown}");
            collect(Arc::clone(&plan), distributed.task_ctx())
                .await
                .unwrap();
            let plan =
                rewrite_distributed_plan_with_metrics(plan, DistributedMetricsFormat::Aggregated)
                    .await
                    .unwrap();
            let local_plan = common::plan(&local, query.variant).await;
            collect(Arc::clone(&local_plan), local.task_ctx())
                .await
                .unwrap();
            let (got, expected) = (
                common::metric_sum(plan.as_ref(), "bytes_scanned"),
                common::metric_sum(local_plan.as_ref(), "bytes_scanned"),
            );
            println!(
                "{} on {layout}: bytes scanned {got} distributed, {expected} local",
                query.name
            );
            assert_eq!(got, expected, "{} on {layout}", query.name);
        }
    }

    // writes through the cluster: explicit and automatic shredding, read back in one process
    let copies = [
        (
            "explicit",
            format!("OPTIONS ('variant.shred.v' '{}')", queries::SHREDDED_PATHS),
        ),
        ("automatic", String::new()),
    ];
    for (name, options) in &copies {
        let out = format!("{}/written-{name}/", dir.display());
        let copy = format!(
            "COPY (SELECT v FROM t WHERE v:kind::string = 'commit') TO '{out}' STORED AS PARQUET {options}"
        );
        let plan = common::plan(&distributed, &copy).await;
        println!("{}", display_plan_ascii(plan.as_ref(), false));
        collect(plan, distributed.task_ctx()).await.unwrap();
        local.sql("DROP TABLE IF EXISTS w").await.unwrap();
        local
            .sql(&format!(
                "CREATE EXTERNAL TABLE w STORED AS PARQUET LOCATION '{out}'"
            ))
            .await
            .unwrap();
        for query in queries::QUERIES.iter().filter(|q| q.again_of.is_none()) {
            let on_written = query.variant.replace("FROM t", "FROM w");
            let on_source = query.variant.replace(
                "FROM t",
                "FROM (SELECT v FROM t WHERE v:kind::string = 'commit')",
            );
            assert_eq!(
                rows_of(&local, &on_written).await,
                rows_of(&local, &on_source).await,
                "{} on what the cluster wrote ({name})",
                query.name
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Parquet files of our sqllogictest suite (reading our, Spark's and DuckDB's files,
/// shredded and not; `COPY` and `INSERT` with explicit and automatic shredding; INTERVAL), every
/// query planned by the distributed planner for three workers, which run its scans and writes:
/// the files' expected results hold as in one process.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parquet_slt_files_pass_on_three_workers() {
    let cluster = InMemoryCluster::start();
    let session: SessionFactory = Arc::new(move || {
        let builder = SessionStateBuilder::new()
            .with_config(SessionConfig::new().with_target_partitions(4))
            .with_default_features()
            .with_distributed_worker_resolver(cluster.clone())
            .with_distributed_channel_resolver(cluster.clone())
            .with_distributed_planner()
            .with_distributed_file_scan_config_bytes_per_partition(1)?;
        Ok(SessionContext::new_with_state(variant_session_state(
            builder,
        )?))
    });
    // such a session distributes a scan of one of the suite's files
    let ctx = session().unwrap();
    common::run(
        &ctx,
        "CREATE EXTERNAL TABLE events STORED AS PARQUET \
         LOCATION 'sqllogictests/data/variant_events.parquet'",
    )
    .await;
    let sql = "SELECT kind, count(*) FROM events GROUP BY kind";
    let shown = display_plan_ascii(common::plan(&ctx, sql).await.as_ref(), false);
    assert!(shown.contains("Stage 1"), "{shown}");

    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sqllogictests");
    let files: Vec<_> = collect_files(&[dir.to_string()])
        .expect("the suite's files")
        .into_iter()
        .filter(|file| {
            file.path
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("parquet_"))
        })
        .collect();
    assert_eq!(files.len(), 7, "{files:?}");
    let failed = run_files(files, Arc::clone(&session), 1, false).await;
    assert_eq!(
        failed, 0,
        "files failed on the cluster (see the report above)"
    );
}
