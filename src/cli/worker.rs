//! `variant-sql worker`: a long-running datafusion-distributed worker with our session (see
//! [`crate::distributed::workers::worker_session_state`]), object stores made from the
//! environment on first use ([`EnvObjectStoreRegistry`]), an optional memory limit shared by its
//! queries, and a clean stop on SIGTERM or Ctrl-C.
use std::net::SocketAddr;
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion_distributed::{DistributedTaskContext, Worker, WorkerQueryContext};
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

use super::app::MemoryArgs;
use super::object_stores::EnvObjectStoreRegistry;
use crate::distributed::workers::{KEEP_ALIVE, WorkerChannels, worker_session_state};

/// The arguments of `variant-sql worker`.
#[derive(Debug, clap::Args, PartialEq)]
pub struct WorkerArgs {
    /// The address to serve on, e.g. `0.0.0.0:50051` (port 0: any free port; the worker prints
    /// the address it took on stderr).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// The memory pool every query on this worker shares.
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// Serves until SIGTERM or Ctrl-C, then stops: the port is released and queries in flight are
/// cancelled (their coordinators get an error naming this worker).
pub async fn run_worker(args: WorkerArgs) -> Result<()> {
    let mut runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(EnvObjectStoreRegistry::default()));
    if let Some(pool) = args.memory.pool() {
        runtime = runtime.with_memory_pool(pool);
    }
    let runtime = runtime.build_arc()?;
    let channels = WorkerChannels::default();
    let worker = Worker::from_session_builder(move |mut ctx: WorkerQueryContext| {
        log_task(&mut ctx);
        let channels = channels.clone();
        async move { worker_session_state(ctx.builder, channels) }
    })
    .with_runtime_env(runtime)
    .with_version(env!("CARGO_PKG_VERSION"));

    let mut signals = StopSignals::listen()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| {
            DataFusionError::External(format!("cannot listen on {}: {e}", args.listen).into())
        })?;
    let address = listener.local_addr()?;
    eprintln!(
        "variant-sql worker {} listening on {address}",
        env!("CARGO_PKG_VERSION")
    );
    let server = Server::builder()
        .http2_keepalive_interval(Some(KEEP_ALIVE))
        .http2_keepalive_timeout(Some(KEEP_ALIVE))
        .add_service(worker.into_worker_server())
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)));
    tokio::select! {
        served = server => served.map_err(|e| DataFusionError::External(Box::new(e)))?,
        signal = signals.wait() => eprintln!("variant-sql worker on {address}: {signal}, stopping"),
    }
    Ok(())
}

/// Logs a task's start on stderr: which of its stage's tasks it is.
fn log_task(ctx: &mut WorkerQueryContext) {
    let task = ctx
        .builder
        .config()
        .as_ref()
        .and_then(|config| config.get_extension::<DistributedTaskContext>());
    match task {
        Some(task) => eprintln!(
            "variant-sql worker: task {} of {} started",
            task.task_index + 1,
            task.task_count
        ),
        None => eprintln!("variant-sql worker: task started"),
    }
}

/// SIGTERM and Ctrl-C (SIGINT), listened for from its creation on (a signal that comes before
/// the server runs still stops it).
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Waits for one and says which came.
    async fn wait(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "interrupted",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "interrupted"
        }
    }
}
