//! Workers at network addresses: the coordinator's list of workers ([`WorkerList`]), the gRPC
//! channels to them ([`WorkerChannels`]: bounded connection time, HTTP/2 keep-alive, and every
//! error prefixed with the worker it came from), and the two session states
//! ([`coordinator_session_state`], [`worker_session_state`]).
use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SessionState, SessionStateBuilder, TaskContext};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, DistributedExt, ExecuteTaskRequest,
    GetWorkerInfoRequest, GetWorkerInfoResponse, SessionStateBuilderExt, SetPlanRequest,
    WorkerChannel, WorkerResolver, WorkerToCoordinatorMsg, grpc,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use tonic::transport::Endpoint;
use url::Url;

use super::auth::WorkerSecurity;
use super::variant_session_state;

/// How long a connection to a worker may take before the query fails naming the worker.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The HTTP/2 keep-alive ping interval, and how long a ping may go unanswered before the
/// connection (and the query on it) fails: a worker that vanishes mid-query (its machine gone,
/// not only its process) is noticed within twice this.
pub const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Parses a comma-separated list of workers: `host:port` (taken as `http://host:port`), or
/// `http://` or `https://` URLs (`https`: TLS, see [`WorkerSecurity`]). Errors name the entry
/// that is not an address.
pub fn parse_worker_urls(list: &str) -> Result<Vec<Url>> {
    let mut urls = vec![];
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let text = if entry.contains("://") {
            entry.to_string()
        } else {
            format!("http://{entry}")
        };
        let url = Url::parse(&text).map_err(|e| {
            DataFusionError::Configuration(format!("worker '{entry}' is not an address: {e}"))
        })?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || url.port_or_known_default().is_none()
            || url.path() != "/"
        {
            return Err(DataFusionError::Configuration(format!(
                "worker '{entry}' is not an address: expected host:port, http://host:port or \
                 https://host:port"
            )));
        }
        urls.push(url);
    }
    if urls.is_empty() {
        return Err(DataFusionError::Configuration(
            "the worker list is empty: expected host:port[,host:port...]".to_string(),
        ));
    }
    Ok(urls)
}

/// How long a suspect worker's name may take to resolve, and its port to accept a connection,
/// before the probe says it is down (see [`WorkerList`]).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a suspect's probe stands before it is probed again.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(5);
/// How long after the error that made it a suspect a worker is first probed.
pub const FIRST_PROBE_AFTER: Duration = Duration::from_secs(1);

/// The workers a transport error came through since they were last seen answering, each with
/// when it may be probed next: shared by a coordinator's [`WorkerList`] and its
/// [`WorkerChannels`]. Probes run on threads of their own, never on the thread that plans a
/// query.
#[derive(Debug, Default, Clone)]
struct Suspects(Arc<Mutex<HashMap<Url, Suspect>>>);

/// What is known of a suspect.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Suspect {
    /// When it may be probed (again).
    probe_after: Instant,
    /// Whether a probe of it is under way.
    probing: bool,
}

impl Suspects {
    /// Makes `url` a suspect, to be probed after [`FIRST_PROBE_AFTER`] (a worker that was just
    /// killed may still take connections for a moment).
    fn add(&self, url: &Url) {
        if let Ok(mut suspects) = self.0.lock() {
            suspects.insert(
                url.clone(),
                Suspect {
                    probe_after: Instant::now() + FIRST_PROBE_AFTER,
                    probing: false,
                },
            );
        }
    }

    /// Makes a suspect of every worker `error` names (`worker <url>`, at any depth: a worker
    /// that lost the worker it read from names it under its own name) when `error` is a failure
    /// to reach a worker, not a worker's own error: its root is an error of the transport (an
    /// `External` error: a gRPC status that carried no DataFusion error).
    fn add_named(&self, error: &DataFusionError) {
        if !matches!(error.find_root(), DataFusionError::External(_)) {
            return;
        }
        let mut layer = error;
        while let DataFusionError::Context(context, inner) = layer {
            if let Some(url) = context
                .strip_prefix("worker ")
                .and_then(|url| Url::parse(url).ok())
            {
                self.add(&url);
            }
            layer = inner;
        }
    }

    /// Starts a probe of `url` on a thread of its own. One whose port answers is a suspect no
    /// more; else it is probed again after [`PROBE_INTERVAL`].
    fn probe(&self, url: &Url) {
        let (suspects, probed) = (self.clone(), url.clone());
        let started = std::thread::Builder::new()
            .name("variant-worker-probe".into())
            .spawn(move || {
                let up = accepts_connections(&probed);
                if let Ok(mut list) = suspects.0.lock() {
                    if up {
                        list.remove(&probed);
                    } else if let Some(suspect) = list.get_mut(&probed) {
                        *suspect = Suspect {
                            probe_after: Instant::now() + PROBE_INTERVAL,
                            probing: false,
                        };
                    }
                }
            });
        if started.is_err()
            && let Ok(mut suspects) = self.0.lock()
            && let Some(suspect) = suspects.get_mut(url)
        {
            suspect.probing = false;
        }
    }

    /// Whether `url` should be left out of the next query: a suspect that has not answered a
    /// probe since it became one. A probe that is due is started (in the background: this
    /// never waits for it).
    fn is_down(&self, url: &Url) -> bool {
        let due = match self.0.lock() {
            Ok(mut suspects) => match suspects.get_mut(url) {
                None => return false,
                Some(suspect) if !suspect.probing && Instant::now() >= suspect.probe_after => {
                    suspect.probing = true;
                    true
                }
                Some(_) => false,
            },
            Err(_) => return false,
        };
        if due {
            self.probe(url);
        }
        true
    }
}

/// Whether `url`'s host accepts a TCP connection on its port: its name resolved within
/// [`PROBE_TIMEOUT`] (on a thread of its own: the system's resolver has no timeout), each of
/// its addresses given [`PROBE_TIMEOUT`] to connect.
fn accepts_connections(url: &Url) -> bool {
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return false;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let (sender, receiver) = std::sync::mpsc::channel();
    let resolving = std::thread::Builder::new()
        .name("variant-worker-resolve".into())
        .spawn(move || {
            let addresses: Vec<_> = (host.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect())
                .unwrap_or_default();
            let _ = sender.send(addresses);
        });
    if resolving.is_err() {
        return false;
    }
    let Ok(addresses) = receiver.recv_timeout(PROBE_TIMEOUT) else {
        return false;
    };
    addresses
        .iter()
        .any(|address| TcpStream::connect_timeout(address, PROBE_TIMEOUT).is_ok())
}

/// A fixed list of workers, the coordinator's [`WorkerResolver`]. A worker that could not be
/// reached during a query (its [`WorkerChannels`] report it) is left out of the queries planned
/// from then on, and probed in the background after [`FIRST_PROBE_AFTER`] (again every
/// [`PROBE_INTERVAL`] while it does not answer): once its port accepts a connection, it is back. So a coordinator goes
/// on with the workers that are left, and planning never waits for a probe. When none is left,
/// all are used, and the query's error names them.
#[derive(Debug, Clone)]
pub struct WorkerList {
    urls: Arc<[Url]>,
    suspects: Suspects,
    /// What calls to them carry and what is trusted of them.
    security: WorkerSecurity,
}

impl WorkerList {
    /// The workers at `urls`, called without a token (and `https://` ones trusted by the
    /// system's roots): see [`Self::with_security`].
    pub fn new(urls: Vec<Url>) -> Self {
        WorkerList {
            urls: urls.into(),
            suspects: Suspects::default(),
            security: WorkerSecurity::default(),
        }
    }

    /// The same workers, called with `security`'s token and trusted by its CA.
    pub fn with_security(mut self, security: WorkerSecurity) -> Self {
        self.security = security;
        self
    }

    /// The workers' URLs.
    pub fn urls(&self) -> &[Url] {
        &self.urls
    }
}

impl WorkerResolver for WorkerList {
    fn get_urls(&self) -> Result<Vec<Url>> {
        let up: Vec<Url> = self
            .urls
            .iter()
            .filter(|url| !self.suspects.is_down(url))
            .cloned()
            .collect();
        Ok(if up.is_empty() {
            self.urls.to_vec()
        } else {
            up
        })
    }
}

/// The [`ChannelResolver`] of the coordinator and of every worker (a worker reads the stages
/// below its own from other workers): one gRPC channel per worker, connected on first use and
/// again after a failure, within [`CONNECT_TIMEOUT`], with HTTP/2 keep-alive pings
/// ([`KEEP_ALIVE`]). Every error that comes through a channel names its worker, the worker's own
/// errors included.
#[derive(Clone, Default)]
pub struct WorkerChannels {
    channels: Arc<Mutex<HashMap<Url, grpc::BoxCloneSyncChannel>>>,
    /// Where the workers errors came through are reported (a coordinator's list).
    suspects: Suspects,
    /// What every call carries, and what `https://` workers are trusted by.
    security: WorkerSecurity,
}

impl WorkerChannels {
    /// Channels that report the workers errors come through to `workers` (see [`WorkerList`]),
    /// with the list's security.
    pub fn reporting_to(workers: &WorkerList) -> Self {
        WorkerChannels {
            channels: Arc::default(),
            suspects: workers.suspects.clone(),
            security: workers.security.clone(),
        }
    }

    /// Channels with `security` (a worker's, to the workers it reads from).
    pub fn with_security(security: WorkerSecurity) -> Self {
        WorkerChannels {
            security,
            ..WorkerChannels::default()
        }
    }

    fn channel(&self, url: &Url) -> Result<grpc::BoxCloneSyncChannel> {
        let mut channels = self
            .channels
            .lock()
            .map_err(|_| DataFusionError::Internal("worker channels lock poisoned".into()))?;
        if let Some(channel) = channels.get(url) {
            return Ok(channel.clone());
        }
        let endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| name_worker(url, DataFusionError::External(Box::new(e))))?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEP_ALIVE)
            .keep_alive_timeout(KEEP_ALIVE)
            .keep_alive_while_idle(true)
            .tcp_nodelay(true);
        let endpoint = (self.security)
            .secured(url, endpoint)
            .map_err(|e| name_worker(url, e))?;
        let channel = (self.security)
            .channel(endpoint.connect_lazy())
            .map_err(|e| name_worker(url, e))?;
        channels.insert(url.clone(), channel.clone());
        Ok(channel)
    }
}

#[async_trait]
impl ChannelResolver for WorkerChannels {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        Ok(Box::new(NamedWorkerChannel {
            url: url.clone(),
            inner: grpc::create_worker_client(self.channel(url)?),
            suspects: self.suspects.clone(),
        }))
    }
}

/// `error`, said to come from the worker at `url` (once: an error already naming that worker
/// is returned as it is).
fn name_worker(url: &Url, error: DataFusionError) -> DataFusionError {
    let context = format!("worker {}", url.as_str().trim_end_matches('/'));
    match &error {
        DataFusionError::Context(existing, _) if *existing == context => error,
        _ => DataFusionError::Context(context, Box::new(error)),
    }
}

/// A worker's channel whose errors, and the errors in its streams, name the worker (and make
/// it a suspect).
struct NamedWorkerChannel {
    url: Url,
    inner: Box<dyn WorkerChannel>,
    suspects: Suspects,
}

impl NamedWorkerChannel {
    fn failed(&self, error: DataFusionError) -> DataFusionError {
        let error = name_worker(&self.url, error);
        self.suspects.add_named(&error);
        error
    }

    fn name_stream<T: Send + 'static>(
        &self,
        stream: BoxStream<'static, Result<T>>,
    ) -> BoxStream<'static, Result<T>> {
        let (url, suspects) = (self.url.clone(), self.suspects.clone());
        stream
            .map(move |item| {
                item.map_err(|e| {
                    let error = name_worker(&url, e);
                    suspects.add_named(&error);
                    error
                })
            })
            .boxed()
    }
}

#[async_trait]
impl WorkerChannel for NamedWorkerChannel {
    async fn coordinator_channel(
        &mut self,
        headers: http::HeaderMap,
        set_plan_request: SetPlanRequest,
        c2w_stream: BoxStream<'static, CoordinatorToWorkerMsg>,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<WorkerToCoordinatorMsg>>> {
        let stream = self
            .inner
            .coordinator_channel(headers, set_plan_request, c2w_stream, metrics, task_ctx)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(self.name_stream(stream))
    }

    async fn execute_task(
        &mut self,
        headers: http::HeaderMap,
        request: ExecuteTaskRequest,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<Vec<BoxStream<'static, Result<RecordBatch>>>> {
        let streams = self
            .inner
            .execute_task(headers, request, metrics, task_ctx)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(streams
            .into_iter()
            .map(|stream| self.name_stream(stream))
            .collect())
    }

    async fn get_worker_info(
        &mut self,
        request: GetWorkerInfoRequest,
    ) -> Result<GetWorkerInfoResponse> {
        self.inner
            .get_worker_info(request)
            .await
            .map_err(|e| self.failed(e))
    }
}

/// The coordinator's session: ours ([`variant_session_state`]) planned by datafusion-distributed
/// across `workers`, reached through [`WorkerChannels`] that report failing workers to the list.
pub fn coordinator_session_state(
    builder: SessionStateBuilder,
    workers: WorkerList,
) -> Result<SessionState> {
    let channels = WorkerChannels::reporting_to(&workers);
    variant_session_state(
        builder
            .with_distributed_worker_resolver(workers)
            .with_distributed_channel_resolver(channels)
            .with_distributed_planner(),
    )
}

/// A worker's session for one query (from the builder datafusion-distributed hands the
/// worker): ours, reaching other workers through `channels` (shared by the worker's queries, so
/// connections are reused).
pub fn worker_session_state(
    builder: SessionStateBuilder,
    channels: WorkerChannels,
) -> Result<SessionState> {
    variant_session_state(builder.with_distributed_channel_resolver(channels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_worker_lists() {
        let urls = parse_worker_urls(
            "localhost:50051, 10.0.0.2:7000,http://w3.example,https://w4.example:7001",
        )
        .unwrap();
        let urls: Vec<&str> = urls.iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "http://localhost:50051/",
                "http://10.0.0.2:7000/",
                "http://w3.example/",
                "https://w4.example:7001/"
            ]
        );
        for bad in [
            "",
            " , ",
            "ftp://x:1",
            "http://x:1/path",
            "grpc://x:1",
            "x:notaport",
            "http://",
        ] {
            assert!(parse_worker_urls(bad).is_err(), "{bad}");
        }
    }

    /// `list`'s URLs once they are `expected` (the probes run in the background), within a few
    /// seconds.
    fn settled(list: &WorkerList, expected: &[Url]) -> Vec<Url> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let urls = list.get_urls().unwrap();
            if urls == expected || Instant::now() > deadline {
                return urls;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_worker_an_error_came_through_is_left_out_while_it_does_not_answer() {
        let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let up = Url::parse(&format!("http://{}", listening.local_addr().unwrap())).unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let down = Url::parse(&format!("http://{}", closed.local_addr().unwrap())).unwrap();
        drop(closed);
        let list = WorkerList::new(vec![up.clone(), down.clone()]);
        assert_eq!(list.get_urls().unwrap(), [up.clone(), down.clone()]);
        // a worker's own error (a corrupt file) makes no suspect
        let own = name_worker(&up, DataFusionError::Execution("bad page".into()));
        list.suspects.add_named(&own);
        assert!(!list.suspects.is_down(&up));
        // `up` lost `down`, whose failure came back through `up`: both are suspects, left out
        // at once (planning does not wait for their probes); the one that answers comes back
        let transport: Box<dyn std::error::Error + Send + Sync> = "connection reset".into();
        let lost = name_worker(
            &up,
            name_worker(&down, DataFusionError::External(transport)),
        );
        list.suspects.add_named(&lost);
        assert_eq!(
            settled(&list, std::slice::from_ref(&up)),
            std::slice::from_ref(&up)
        );
        // the probe stands: `down` stays out without being probed again
        let stood = list.suspects.0.lock().unwrap()[&down];
        assert!(!stood.probing, "{stood:?}");
        assert_eq!(list.get_urls().unwrap(), std::slice::from_ref(&up));
        assert_eq!(list.suspects.0.lock().unwrap()[&down], stood);
        assert!(!list.suspects.0.lock().unwrap().contains_key(&up));
        // none answers: all of them, so that the query's error names them
        let alone = WorkerList::new(vec![down.clone()]);
        alone.suspects.add(&down);
        assert_eq!(alone.get_urls().unwrap(), [down]);
        // a name that does not resolve is down, within the probe's time
        let nowhere = Url::parse("http://nowhere.invalid:50051").unwrap();
        let started = Instant::now();
        assert!(!accepts_connections(&nowhere));
        assert!(started.elapsed() < PROBE_TIMEOUT * 3);
    }

    #[test]
    fn errors_name_their_worker_once() {
        let url = Url::parse("http://127.0.0.1:9/").unwrap();
        let error = name_worker(&url, DataFusionError::Execution("boom".into()));
        assert_eq!(
            error.to_string(),
            "worker http://127.0.0.1:9\ncaused by\nExecution error: boom"
        );
        let again = name_worker(&url, error);
        assert_eq!(again.to_string().matches("worker http").count(), 1);
    }
}
