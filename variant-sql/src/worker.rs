//! `variant-sql worker`: a long-running datafusion-distributed worker with our session (see
//! [`datafusion_parquet_variant::distributed::workers::worker_session_state`]), object stores made from the
//! environment on first use ([`EnvObjectStoreRegistry`]), an optional memory limit shared by its
//! queries, and a clean stop on SIGTERM or Ctrl-C.
use std::net::SocketAddr;
use std::sync::Arc;

use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion_distributed::{DistributedTaskContext, Worker, WorkerQueryContext};
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

use crate::memory::MemoryArgs;
use crate::object_stores::EnvObjectStoreRegistry;
use datafusion_parquet_variant::distributed::auth::{
    WorkerSecurity, WorkerToken, authenticated, check_listen, server_tls,
};
use datafusion_parquet_variant::distributed::checked_calls::checked_calls;
use datafusion_parquet_variant::distributed::workers::{
    KEEP_ALIVE, WorkerChannels, worker_session_state,
};
use datafusion_parquet_variant::memory_pool::fit_to_pool;

/// The arguments of `variant-sql worker`.
#[derive(Debug, clap::Args, PartialEq)]
pub struct WorkerArgs {
    /// The address to serve on, e.g. `0.0.0.0:50051` (port 0: any free port; the worker prints
    /// the address it took on stderr).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// The file holding the cluster's token: every call must carry it (else the environment
    /// variable VARIANT_SQL_WORKER_TOKEN, where set). A worker without a token listens on
    /// loopback only, unless --insecure.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,

    /// Listen beyond loopback without a token: anyone who reaches the port can run any plan,
    /// with this worker's credentials.
    #[arg(long)]
    pub insecure: bool,

    /// Serve TLS with this certificate chain (PEM); coordinators then call it `https://`.
    #[arg(long, value_name = "PEM_FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM_FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,

    /// The CA certificates (PEM) that the `https://` workers this one reads from must chain to
    /// (the system's roots when not given).
    #[arg(long, value_name = "PEM_FILE")]
    pub tls_ca: Option<std::path::PathBuf>,

    /// The memory pool every query on this worker shares.
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// Serves until SIGTERM or Ctrl-C, then stops: the port is released and queries in flight are
/// cancelled (their coordinators get an error naming this worker).
pub async fn run_worker(args: WorkerArgs) -> Result<()> {
    let mut runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(EnvObjectStoreRegistry::default()));
    // Under -m, the tasks' batches and sorts' merge headroom fitted to the pool, as the program
    // fits its own session's: a task's session starts from DataFusion's defaults (the
    // coordinator's settings do not travel with the plan), whose 8,192-row batches and 10 MiB
    // headroom a sort of wide variant rows cannot spill within a small share. The pool's merge
    // shares are sized for those same settings.
    let limit = args.memory.memory_limit;
    let mut task_options = ConfigOptions::default();
    if let Some(limit) = limit {
        fit_to_pool(&mut task_options, limit);
    }
    if let Some(pool) = args.memory.pool(&task_options) {
        runtime = runtime.with_memory_pool(pool);
    }
    let runtime = runtime.build_arc()?;
    let token = WorkerToken::from_file_or_env(args.token_file.as_deref())?;
    check_listen(args.listen, token.as_ref(), args.insecure)?;
    // the workers this one reads from are called as its coordinator calls it
    let mut security = WorkerSecurity::default().with_token(token.clone());
    if let Some(ca) = &args.tls_ca {
        security = security.with_ca_file(ca)?;
    }
    if args.tls_cert.is_some() {
        // a worker its coordinator calls over TLS sends the token to its peers so too
        security = security.tls_only();
    }
    let channels = WorkerChannels::with_security(security);
    let worker = Worker::from_session_builder(move |mut ctx: WorkerQueryContext| {
        log_task(&mut ctx);
        if let (Some(limit), Some(config)) = (limit, ctx.builder.config().as_mut()) {
            fit_to_pool(config.options_mut(), limit);
        }
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
    let mut server = Server::builder();
    if let (Some(certificate), Some(key)) = (&args.tls_cert, &args.tls_key) {
        server = server
            .tls_config(server_tls(certificate, key)?)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
    }
    eprintln!(
        "variant-sql worker {} listening on {address}",
        env!("CARGO_PKG_VERSION")
    );
    if token.is_some() && args.tls_cert.is_none() && !address.ip().is_loopback() {
        eprintln!(
            "variant-sql worker on {address}: warning: the cluster's token reaches this worker in \
             clear (no TLS): anyone on the way can read it; give --tls-cert and --tls-key"
        );
    }
    eprintln!(
        "variant-sql worker on {address}: {}, {}",
        if args.tls_cert.is_some() {
            "TLS"
        } else {
            "plain HTTP/2 (no TLS)"
        },
        if token.is_some() {
            "calls must carry the cluster's token"
        } else {
            "any caller is taken (no token)"
        }
    );
    if let Some(limit) = limit {
        eprintln!(
            "variant-sql worker on {address}: memory limit {limit} bytes: batches of {} rows, \
             {} bytes kept for a sort's merge",
            task_options.execution.batch_size.get(),
            task_options.execution.sort_spill_reservation_bytes
        );
    }
    let server = server
        .http2_keepalive_interval(Some(KEEP_ALIVE))
        .http2_keepalive_timeout(Some(KEEP_ALIVE))
        .add_service(authenticated(
            checked_calls(worker.into_worker_server()),
            token,
        ))
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
