//! EXPLAIN on a coordinator session: DataFusion plans an EXPLAIN's input without the query
//! planner that datafusion-distributed installs, so its text shows one process's plan.
//! [`explain_distributed`] shows the plan the workers will run instead: its stages, each with
//! its task count, and the workers its tasks may be sent to.
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::Result;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion_distributed::{display_plan_ascii, get_distributed_worker_resolver};

/// For `EXPLAIN <query>` (not ANALYZE, which runs distributed already) on a session with
/// workers, the rows `logical_plan`, `distributed_plan` (the stages, from datafusion-
/// distributed's `display_plan_ascii`) and `workers` (the URLs the tasks may be routed to, in
/// the resolver's order; the routing itself happens when the query runs); None for any other
/// plan or a session without workers.
pub async fn explain_distributed(
    state: &SessionState,
    plan: &LogicalPlan,
) -> Result<Option<RecordBatch>> {
    let LogicalPlan::Explain(explain) = plan else {
        return Ok(None);
    };
    let Ok(resolver) = get_distributed_worker_resolver(state.config()) else {
        return Ok(None);
    };
    let optimized = state.optimize(&explain.plan)?;
    let physical = state
        .query_planner()
        .create_physical_plan(&optimized, state)
        .await?;
    let workers: Vec<String> = resolver
        .get_urls()?
        .iter()
        .map(|url| url.as_str().trim_end_matches('/').to_string())
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("plan_type", DataType::Utf8, false),
        Field::new("plan", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![
                "logical_plan",
                "distributed_plan",
                "workers",
            ])),
            Arc::new(StringArray::from(vec![
                optimized.display_indent().to_string(),
                display_plan_ascii(physical.as_ref(), false),
                workers.join("\n"),
            ])),
        ],
    )?;
    Ok(Some(batch))
}
