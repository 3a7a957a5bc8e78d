//! Running on [datafusion-distributed](https://github.com/datafusion-contrib/datafusion-distributed)
//! (cargo feature `distributed`): what the coordinator's and every worker's session need of ours
//! ([`variant_session_state`]), workers at network addresses ([`workers`]: the list, the
//! channels, the two sessions), who may call a worker and over what ([`auth`]: the cluster's
//! token, TLS), a worker's calls checked before it takes them ([`checked_calls`]), and
//! EXPLAIN of the distributed plan ([`explain_distributed`]).
pub mod auth;
pub mod checked_calls;
mod explain;
pub mod workers;

pub use explain::explain_distributed;

use datafusion::common::Result;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion_distributed::{
    DistributedExt, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse,
};

use crate::plan_codec::{VariantPhysicalCodec, register_plan_functions, restore_variant_fields};

/// Builds `builder` (a worker's, from its session builder; or the coordinator's, with its
/// worker resolver and the distributed planner) with our functions, our physical codec, the
/// variant fields put back on each plan a worker decodes (once its nodes' partitions are
/// checked: [`checked_calls::check_plan_partitions`]), and the hidden functions plans hold
/// (datafusion-distributed resolves functions by name: see
/// [`register_plan_functions`]).
pub fn variant_session_state(builder: SessionStateBuilder) -> Result<SessionState> {
    let mut state = crate::register_all_with_state(builder)
        .with_distributed_user_codec(VariantPhysicalCodec::default())
        .with_distributed_worker_plan_rewrite_handler(|event: WorkerPlanRewriteEvent<'_>| {
            checked_calls::check_plan_partitions(&event.plan)?;
            Ok(WorkerPlanRewriteEventResponse::new(restore_variant_fields(
                event.plan,
            )?))
        })
        .build();
    register_plan_functions(&mut state)?;
    Ok(state)
}
