//! Every query of our sqllogictest suite with its plans encoded by our codecs and decoded into
//! fresh sessions (`register_all`, nothing else): the optimized logical plan, planned again
//! where it arrives, then that physical plan, which runs (see `slt::PlanRoundTrip`). The files'
//! expected results must hold as they do in one process. Statements that plan (COPY, INSERT,
//! EXPLAIN) go through the same round trip; queries over in-memory tables skip the logical step
//! and inserts into them both (DataFusion cannot encode them: the rows live in the process).
use std::sync::Arc;

use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_parquet_variant::slt::{PlanRoundTrip, SessionFactory, collect_files, run_files};

/// Our suite's session (see `slt::default_session`), with the round trip switched on.
fn round_trip_session() -> datafusion::error::Result<SessionContext> {
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .with_extension(Arc::new(PlanRoundTrip));
    let builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    let state = datafusion_parquet_variant::register_all_with_state(builder).build();
    Ok(SessionContext::new_with_state(state))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_with_every_plan_serialized() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sqllogictests");
    let files = collect_files(&[dir.to_string()]).expect("the suite's files");
    assert!(files.len() > 20, "found only {} files", files.len());
    let session: SessionFactory = Arc::new(round_trip_session);
    let failed = run_files(files, session, 2, false).await;
    assert_eq!(
        failed, 0,
        "files failed with serialized plans (see the report above)"
    );
}
