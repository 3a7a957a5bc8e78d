//! Variant queries on a datafusion-distributed cluster on localhost: starts gRPC workers on
//! local ports (in this process, each a real server), writes a directory of shredded Variant
//! Parquet files, and runs a query through a coordinator that splits the files across the
//! workers; prints the distributed plan and the rows.
//!
//! ```sh
//! cargo run --release -p variant-sql --features distributed --example cluster -- [--workers N] [--port P] [SQL]
//! ```
//!
//! What the coordinator and each worker need of ours is one call on their session builders:
//! `distributed::variant_session_state` (our functions, our physical codec, and the plan rewrite
//! that puts back the variant fields DataFusion's plan decoding drops).
use std::error::Error;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use datafusion_distributed::{
    DistributedExt, SessionStateBuilderExt, Worker, WorkerQueryContext, WorkerResolver,
    display_plan_ascii,
};
use datafusion_parquet_variant::distributed::checked_calls::checked_calls;
use datafusion_parquet_variant::distributed::variant_session_state;
use tonic::transport::Server;
use url::Url;

const DEFAULT_SQL: &str = "SELECT payload:user.geo.country::string AS country, kind, count(*) AS n \
     FROM events GROUP BY country, kind ORDER BY n DESC, country, kind LIMIT 10";

/// The workers at `ports` on localhost.
#[derive(Clone)]
struct Localhost {
    ports: Vec<u16>,
}

impl WorkerResolver for Localhost {
    fn get_urls(&self) -> Result<Vec<Url>, DataFusionError> {
        self.ports
            .iter()
            .map(|port| {
                Url::parse(&format!("http://localhost:{port}"))
                    .map_err(|e| DataFusionError::External(Box::new(e)))
            })
            .collect()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (mut workers, mut port, mut sql) = (3u16, 50051u16, DEFAULT_SQL.to_string());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--workers" => workers = args.next().ok_or("--workers N")?.parse()?,
            "--port" => port = args.next().ok_or("--port P")?.parse()?,
            _ => sql = arg,
        }
    }
    let ports: Vec<u16> = (port..port + workers).collect();
    for &port in &ports {
        let worker = Worker::from_session_builder(|ctx: WorkerQueryContext| async move {
            variant_session_state(ctx.builder)
        });
        let address = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        tokio::spawn(
            Server::builder()
                .add_service(checked_calls(worker.into_worker_server()))
                .serve(address),
        );
    }

    // the data: the bundled sample events as Variant Parquet, in eight files
    let dir = std::env::temp_dir().join(format!("variant-cluster-{}", std::process::id()));
    let writer = datafusion_parquet_variant::session_context();
    variant_sql::sample::register_sample(&writer, "events").await?;
    for part in 0..8 {
        let copy = format!(
            "COPY (SELECT * FROM events WHERE id % 8 = {part}) TO '{}/part-{part}.parquet' \
             STORED AS PARQUET",
            dir.display()
        );
        writer.sql(&copy).await?.collect().await?;
    }

    let coordinator = SessionContext::new_with_state(variant_session_state(
        SessionStateBuilder::new()
            .with_default_features()
            .with_distributed_worker_resolver(Localhost { ports })
            .with_distributed_planner()
            .with_distributed_file_scan_config_bytes_per_partition(1)?,
    )?);
    coordinator
        .sql(&format!(
            "CREATE EXTERNAL TABLE events STORED AS PARQUET LOCATION '{}/'",
            dir.display()
        ))
        .await?;
    let df = coordinator.sql(&sql).await?;
    let plan = df.clone().create_physical_plan().await?;
    println!("{}", display_plan_ascii(plan.as_ref(), false));
    let batches = df.collect().await?;
    println!("{}", pretty_format_batches(&batches)?);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
