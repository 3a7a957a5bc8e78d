//! A worker's calls checked before datafusion-distributed sees them, and its panics answered as
//! errors ([`checked_calls`]).
//!
//! datafusion-distributed 4.0 trusts the sizes a call declares: `ExecuteTask` allocates room for
//! `target_partition_end - target_partition_start` streams before it compares the range with
//! the plan, and builds the broadcast or repartition its producer head names with the
//! partitions the head gives; a `CoordinatorChannel`'s plan makes a channel for each partition
//! its work-unit feeds declare. A call from a token holder saying 2^58 partitions aborted the
//! worker (the allocation failed), and every query on it with it. The check reads those fields
//! (the gRPC frame's message, decoded here with only the fields it needs) and refuses a call
//! that declares more than [`MAX_PARTITIONS_PER_CALL`] partitions; the worker then sees the same
//! bytes. The partitions of the plan's own nodes are checked once it is decoded
//! ([`check_plan_partitions`], run by the worker's plan rewrite handler).
//!
//! A panic while the worker handles a call (datafusion-proto's decoding of some corrupt plans
//! panics) is answered `Internal`, saying so, instead of resetting the stream, which the caller
//! would take for a worker gone.
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, plan_err};
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, stream};
use http_body_util::{BodyExt, BodyStream, Full, Limited, StreamBody};
use tonic::Status;
use tonic::body::Body;
use tonic::server::NamedService;

use crate::panics::panic_message;

/// The most partitions one call may declare: an `ExecuteTask`'s range, or the sum of a plan's
/// work-unit feeds. DataFusion's plans have tens to hundreds; this leaves room and keeps what a
/// call makes the worker allocate small.
pub const MAX_PARTITIONS_PER_CALL: u64 = 1 << 16;

/// The largest `ExecuteTask` request read whole to be checked (a task key and a range: bytes).
const MAX_EXECUTE_TASK_BYTES: usize = 1 << 20;

/// `service` (a worker's gRPC service) with its calls checked ([`MAX_PARTITIONS_PER_CALL`]) and
/// its panics answered as errors.
pub fn checked_calls<S>(service: S) -> CheckedCalls<S> {
    CheckedCalls { inner: service }
}

/// See [`checked_calls`].
#[derive(Clone, Debug)]
pub struct CheckedCalls<S> {
    inner: S,
}

impl<S: NamedService> NamedService for CheckedCalls<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> tower::Service<http::Request<Body>> for CheckedCalls<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, std::result::Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // the clone that was made ready serves this call
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let request = match checked(request).await {
                Ok(request) => request,
                Err(refused) => return Ok(refused.into_http()),
            };
            match AssertUnwindSafe(inner.call(request)).catch_unwind().await {
                Ok(response) => response,
                Err(panic) => Ok(Status::internal(format!(
                    "the worker panicked handling the call: {}",
                    panic_message(&*panic)
                ))
                .into_http()),
            }
        })
    }
}

/// `request`, with the same body, or why it is refused.
async fn checked(request: http::Request<Body>) -> std::result::Result<http::Request<Body>, Status> {
    match request.uri().path() {
        "/worker.WorkerService/ExecuteTask" => {
            let (parts, body) = request.into_parts();
            let bytes = Limited::new(body, MAX_EXECUTE_TASK_BYTES)
                .collect()
                .await
                .map_err(|e| Status::invalid_argument(format!("an ExecuteTask call: {e}")))?
                .to_bytes();
            if let FirstFrame::Message(message) = first_frame(&bytes) {
                check_execute_task(message)?;
            }
            Ok(http::Request::from_parts(
                parts,
                Body::new(Full::new(bytes)),
            ))
        }
        "/worker.WorkerService/CoordinatorChannel" => {
            let (parts, mut body) = request.into_parts();
            // the first message (the plan) read whole, as the worker would read it next
            let mut head = BytesMut::new();
            while let FirstFrame::Incomplete = first_frame(&head) {
                let Some(frame) = body.frame().await else {
                    break;
                };
                if let Ok(data) = frame?.into_data() {
                    head.extend_from_slice(&data);
                }
            }
            let head = head.freeze();
            if let FirstFrame::Message(message) = first_frame(&head) {
                check_set_plan(message)?;
            }
            let rest = BodyStream::new(body);
            let body = stream::once(async move { Ok(http_body::Frame::data(head)) }).chain(rest);
            Ok(http::Request::from_parts(
                parts,
                Body::new(StreamBody::new(body)),
            ))
        }
        _ => Ok(request),
    }
}

/// What the bytes a call's body began with hold of its first gRPC frame.
enum FirstFrame<'a> {
    /// Not all of it yet.
    Incomplete,
    /// A compressed frame: left to the worker, which takes none.
    Compressed,
    /// The whole message of an uncompressed frame.
    Message(&'a [u8]),
}

/// See [`FirstFrame`].
fn first_frame(bytes: &[u8]) -> FirstFrame<'_> {
    let Some((&compressed, mut rest)) = bytes.split_first() else {
        return FirstFrame::Incomplete;
    };
    if compressed != 0 {
        return FirstFrame::Compressed;
    }
    if rest.len() < 4 {
        return FirstFrame::Incomplete;
    }
    let length = rest.get_u32() as usize;
    rest.get(..length)
        .map_or(FirstFrame::Incomplete, FirstFrame::Message)
}

/// The fields of an `ExecuteTaskRequest` (worker.proto) that size what the worker allocates:
/// the partition range, and the producer head's partitions (its oneof's two members that have
/// any, read as the optional messages they are on the wire).
#[derive(Clone, PartialEq, prost::Message)]
struct PartitionRange {
    #[prost(uint64, tag = "2")]
    start: u64,
    #[prost(uint64, tag = "3")]
    end: u64,
    #[prost(message, optional, tag = "7")]
    broadcast: Option<BroadcastHead>,
    #[prost(message, optional, tag = "8")]
    repartition: Option<RepartitionHead>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct BroadcastHead {
    #[prost(uint64, tag = "1")]
    output_partitions: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct RepartitionHead {
    /// A `datafusion.Partitioning`, encoded.
    #[prost(bytes = "vec", tag = "1")]
    partitioning: Vec<u8>,
}

/// A `CoordinatorToWorkerMsg` (worker.proto), down to what sizes the worker's allocations: its
/// `SetPlanRequest`'s work-unit feed declarations.
#[derive(Clone, PartialEq, prost::Message)]
struct CoordinatorMessage {
    #[prost(message, optional, tag = "1")]
    set_plan: Option<SetPlanFeeds>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct SetPlanFeeds {
    #[prost(message, repeated, tag = "4")]
    feeds: Vec<FeedDeclaration>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FeedDeclaration {
    #[prost(uint64, tag = "2")]
    partitions: u64,
}

/// Refuses an `ExecuteTask` whose partition range is reversed or too wide, or whose producer
/// head has too many partitions. A message that does not decode is left to the worker, which
/// refuses it.
fn check_execute_task(message: &[u8]) -> std::result::Result<(), Status> {
    let Ok(range) = <PartitionRange as prost::Message>::decode(message) else {
        return Ok(());
    };
    if range
        .end
        .checked_sub(range.start)
        .is_none_or(|count| count > MAX_PARTITIONS_PER_CALL)
    {
        return Err(Status::invalid_argument(format!(
            "an ExecuteTask call for partitions {}..{}: a call may ask for at most \
             {MAX_PARTITIONS_PER_CALL} partitions, in order",
            range.start, range.end
        )));
    }
    let head = match (&range.broadcast, &range.repartition) {
        (Some(broadcast), _) => Some(broadcast.output_partitions),
        (None, Some(repartition)) => {
            use datafusion_proto::protobuf::{Partitioning, partitioning::PartitionMethod};
            let partitioning = <Partitioning as prost::Message>::decode(&*repartition.partitioning);
            match partitioning.ok().and_then(|p| p.partition_method) {
                Some(PartitionMethod::RoundRobin(count) | PartitionMethod::Unknown(count)) => {
                    Some(count)
                }
                Some(PartitionMethod::Hash(hash)) => Some(hash.partition_count),
                _ => None,
            }
        }
        (None, None) => None,
    };
    match head {
        Some(count) if count > MAX_PARTITIONS_PER_CALL => Err(Status::invalid_argument(format!(
            "an ExecuteTask call whose producer head has {count} partitions: at most \
             {MAX_PARTITIONS_PER_CALL}"
        ))),
        _ => Ok(()),
    }
}

/// Refuses a decoded plan with a node of more than [`MAX_PARTITIONS_PER_CALL`] partitions (a
/// repartition of 2^58 would make a channel for each when it runs).
pub fn check_plan_partitions(plan: &Arc<dyn ExecutionPlan>) -> Result<()> {
    plan.apply(|node| {
        let count = node.output_partitioning().partition_count();
        if count as u64 > MAX_PARTITIONS_PER_CALL {
            return plan_err!(
                "{} with {count} partitions: a plan's nodes may have at most \
                 {MAX_PARTITIONS_PER_CALL}",
                node.name()
            );
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .map(|_| ())
}

/// Refuses a plan whose work-unit feeds declare too many partitions in all.
fn check_set_plan(message: &[u8]) -> std::result::Result<(), Status> {
    let Ok(CoordinatorMessage {
        set_plan: Some(plan),
    }) = <CoordinatorMessage as prost::Message>::decode(message)
    else {
        return Ok(());
    };
    let declared = plan
        .feeds
        .iter()
        .try_fold(0u64, |sum, feed| sum.checked_add(feed.partitions));
    match declared {
        Some(declared) if declared <= MAX_PARTITIONS_PER_CALL => Ok(()),
        _ => Err(Status::invalid_argument(format!(
            "a plan whose work-unit feeds declare more than {MAX_PARTITIONS_PER_CALL} \
             partitions in all"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use prost::Message;
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::Service;

    /// A stand-in worker: counts the calls that reach it and answers with the body it read, or
    /// panics when the body is `panic`.
    #[derive(Clone, Default)]
    struct Worker(Arc<AtomicUsize>);

    impl Service<http::Request<Body>> for Worker {
        type Response = http::Response<Body>;
        type Error = Infallible;
        type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<Body>) -> Self::Future {
            let calls = Arc::clone(&self.0);
            Box::pin(async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let body = request.into_body().collect().await.unwrap().to_bytes();
                if body.ends_with(b"panic") {
                    panic!("a corrupt plan");
                }
                Ok(http::Response::new(Body::new(Full::new(body))))
            })
        }
    }

    /// `message` as one gRPC frame.
    fn frame(message: &[u8]) -> Vec<u8> {
        let mut out = vec![0];
        out.extend((message.len() as u32).to_be_bytes());
        out.extend(message);
        out
    }

    /// What a call of `method` with `body` (sent in `chunks`) got: the worker's answer (the
    /// body it read) or the status it was refused with, and whether it reached the worker.
    async fn call(method: &str, body: Vec<u8>, chunks: usize) -> (StatusOr<Vec<u8>>, bool) {
        let worker = Worker::default();
        let mut service = checked_calls(worker.clone());
        let size = body.len().div_ceil(chunks).max(1);
        let parts: Vec<Result<_, Status>> = body
            .chunks(size)
            .map(|c| Ok(http_body::Frame::data(Bytes::copy_from_slice(c))))
            .collect();
        let request = http::Request::builder()
            .uri(format!("http://worker/worker.WorkerService/{method}"))
            .body(Body::new(StreamBody::new(stream::iter(parts))))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let reached = worker.0.load(Ordering::SeqCst) == 1;
        let answer = match Status::from_header_map(response.headers()) {
            Some(status) => Err(status),
            None => Ok(response
                .into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec()),
        };
        (answer, reached)
    }

    type StatusOr<T> = std::result::Result<T, Status>;

    /// The message of the status a call got: refused `InvalidArgument` before the worker.
    fn refused((answer, reached): (StatusOr<Vec<u8>>, bool)) -> String {
        let status = answer.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status}");
        assert!(!reached, "{status}");
        status.message().to_string()
    }

    fn execute_task(start: u64, end: u64) -> Vec<u8> {
        let range = PartitionRange {
            start,
            end,
            broadcast: None,
            repartition: None,
        };
        frame(&range.encode_to_vec())
    }

    fn set_plan(partitions: &[u64], plan: &[u8]) -> Vec<u8> {
        let feeds = partitions
            .iter()
            .map(|&partitions| FeedDeclaration { partitions })
            .collect();
        let mut set_plan = SetPlanFeeds { feeds }.encode_to_vec();
        // the plan's bytes (SetPlanRequest's field 3), which the check skips
        prost::encoding::bytes::encode(3, &plan.to_vec(), &mut set_plan);
        let mut message = vec![];
        prost::encoding::bytes::encode(1, &set_plan, &mut message);
        frame(&message)
    }

    #[tokio::test]
    async fn calls_within_bounds_reach_the_worker_with_their_bytes() {
        for chunks in [1, 3, 50] {
            let body = execute_task(4, 8);
            let (answer, reached) = call("ExecuteTask", body.clone(), chunks).await;
            assert_eq!((answer.unwrap(), reached), (body, true));
            let plan: Vec<u8> = (0..=255).collect();
            let mut body = set_plan(&[16, 16], &plan);
            // the messages after the plan go through too
            body.extend(frame(&[0x18, 1]));
            let (answer, reached) = call("CoordinatorChannel", body.clone(), chunks).await;
            assert_eq!((answer.unwrap(), reached), (body, true));
        }
        let (answer, reached) = call("GetWorkerInfo", vec![0; 5], 1).await;
        assert_eq!((answer.unwrap(), reached), (vec![0; 5], true));
        // a compressed first frame is left to the worker, unread
        let (answer, reached) = call("CoordinatorChannel", vec![1, 0, 0, 0, 9, 9], 2).await;
        assert_eq!((answer.unwrap(), reached), (vec![1, 0, 0, 0, 9, 9], true));
    }

    #[tokio::test]
    async fn calls_declaring_too_many_partitions_are_refused_before_the_worker() {
        for (start, end) in [(0, 1 << 58), (5, 4), (0, MAX_PARTITIONS_PER_CALL + 1)] {
            let message = refused(call("ExecuteTask", execute_task(start, end), 2).await);
            assert!(
                message.contains(&format!("partitions {start}..{end}")),
                "{message}"
            );
        }
        for feeds in [vec![1_000_000_000_000], vec![u64::MAX, 2], vec![1 << 15; 3]] {
            let message = refused(call("CoordinatorChannel", set_plan(&feeds, &[7; 10]), 3).await);
            assert!(
                message.contains("feeds declare more than 65536"),
                "{message}"
            );
        }
        // a producer head of too many partitions: a broadcast's, a repartition's
        let mut broadcast = PartitionRange {
            start: 0,
            end: 1,
            broadcast: Some(BroadcastHead {
                output_partitions: 1 << 58,
            }),
            repartition: None,
        };
        let hash = |count| {
            use datafusion_proto::protobuf::{
                Partitioning, PhysicalHashRepartition, partitioning::PartitionMethod,
            };
            Partitioning {
                partition_method: Some(PartitionMethod::Hash(PhysicalHashRepartition {
                    hash_expr: vec![],
                    partition_count: count,
                })),
            }
            .encode_to_vec()
        };
        let repartition = PartitionRange {
            broadcast: None,
            repartition: Some(RepartitionHead {
                partitioning: hash(1 << 58),
            }),
            ..broadcast.clone()
        };
        for request in [broadcast.clone(), repartition.clone()] {
            let message = refused(call("ExecuteTask", frame(&request.encode_to_vec()), 1).await);
            assert!(
                message.contains("producer head has 288230376151711744"),
                "{message}"
            );
        }
        broadcast.broadcast = Some(BroadcastHead {
            output_partitions: 8,
        });
        let repartition = PartitionRange {
            repartition: Some(RepartitionHead {
                partitioning: hash(8),
            }),
            ..repartition
        };
        for request in [broadcast, repartition] {
            let (answer, reached) = call("ExecuteTask", frame(&request.encode_to_vec()), 1).await;
            assert!(answer.is_ok() && reached);
        }
        // an ExecuteTask body past its bound is refused unread
        refused(call("ExecuteTask", vec![0; MAX_EXECUTE_TASK_BYTES + 1], 4).await);
    }

    #[test]
    fn plans_with_a_node_of_too_many_partitions_are_refused() {
        use datafusion::arrow::datatypes::Schema;
        use datafusion::physical_plan::Partitioning;
        use datafusion::physical_plan::empty::EmptyExec;
        use datafusion::physical_plan::repartition::RepartitionExec;
        let input: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(Arc::new(Schema::empty())));
        let repartition = |count| -> Arc<dyn ExecutionPlan> {
            let partitioning = Partitioning::RoundRobinBatch(count);
            Arc::new(RepartitionExec::try_new(Arc::clone(&input), partitioning).unwrap())
        };
        assert!(check_plan_partitions(&repartition(8)).is_ok());
        let error = check_plan_partitions(&repartition(1 << 17))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("RepartitionExec with 131072 partitions"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_panic_in_the_worker_is_an_internal_error() {
        let (answer, reached) = call("GetWorkerInfo", b"panic".to_vec(), 1).await;
        let error = answer.unwrap_err();
        assert_eq!(error.code(), tonic::Code::Internal);
        assert_eq!(
            error.message(),
            "the worker panicked handling the call: a corrupt plan"
        );
        assert!(reached);
    }
}
