//! The connection sqllogictest talks to: statements and queries run in a `SessionContext` the
//! caller built, variant columns printed as JSON.

use std::fmt;
use std::sync::Arc;

use crate::display::render_variants_as_json;
use async_trait::async_trait;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::{ViewTable, source_as_provider};
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::{LogicalPlan, TableSource};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::SessionContext;
use datafusion_datasource::memory::MemSink;
use sqllogictest::{AsyncDB, DBOutput};

use crate::parquet::VariantParquetTable;

use super::normalize::{DFColumnType, convert_batches, convert_schema_to_types};

/// An error of a statement or query. Its text is what `statement error <regex>` and
/// `query error <regex>` match against, in the same form as DataFusion's own harness:
/// `DataFusion error: <message without backtrace>` or `Arrow error: <message>`.
#[derive(Debug)]
pub enum EngineError {
    /// Planning or execution failed.
    DataFusion(DataFusionError),
    /// A result could not be formatted.
    Arrow(ArrowError),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DataFusion(e) => write!(f, "DataFusion error: {}", e.strip_backtrace()),
            Self::Arrow(e) => write!(f, "Arrow error: {e}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<DataFusionError> for EngineError {
    fn from(e: DataFusionError) -> Self {
        Self::DataFusion(e)
    }
}

impl From<ArrowError> for EngineError {
    fn from(e: ArrowError) -> Self {
        Self::Arrow(e)
    }
}

/// One connection: a handle on a `SessionContext` (all `connection` names of a file share the
/// same context). Build the context as your application does (tables, functions, options) and
/// apply [`crate::register_all`] or [`crate::register_all_with_state`] to it.
pub struct VariantSltDb {
    ctx: SessionContext,
}

impl VariantSltDb {
    /// A connection running its records in `ctx`.
    pub fn new(ctx: SessionContext) -> Self {
        Self { ctx }
    }
}

#[async_trait]
impl AsyncDB for VariantSltDb {
    type Error = EngineError;
    type ColumnType = DFColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DFColumnType>, EngineError> {
        run_query(&self.ctx, sql).await
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "DataFusion"
    }
}

/// Put in a session's configuration (`SessionConfig::with_extension`), it makes
/// [`VariantSltDb`] run every query through its plans encoded with our codecs
/// ([`crate::plan_codec`]) and decoded into fresh sessions (the same configuration and
/// runtime, with [`crate::register_all_with_state`]): the optimized logical plan (when every
/// table it touches can travel), planned again where it arrives, and then the physical plan,
/// which executes. A file's expected results then also say that its plans survive
/// serialization, as on a distributed engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct PlanRoundTrip;

/// A session like `sender`'s (configuration and runtime), with nothing registered but ours.
fn receiving_session(sender: &SessionContext) -> SessionContext {
    let builder = SessionStateBuilder::new()
        .with_config(sender.copied_config())
        .with_runtime_env(sender.runtime_env())
        .with_default_features();
    SessionContext::new_with_state(crate::register_all_with_state(builder).build())
}

/// True when `plan` inserts into an in-memory table, whose sink DataFusion cannot serialize
/// (its rows live in this process); such plans run where they were made.
fn writes_memory_table(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.exists(|node| {
        Ok(node
            .downcast_ref::<DataSinkExec>()
            .is_some_and(|sink| sink.sink().downcast_ref::<MemSink>().is_some()))
    })
    .unwrap_or(false)
}

/// True when every table `plan` reads or writes is one a logical plan can carry: listing tables
/// (ours wrapped as [`VariantParquetTable`]; one over our format that is not, as a URL table,
/// fails the round trip) and views over them. In-memory tables, the information schema, DDL and
/// extension nodes stay in this process.
fn logical_plan_travels(plan: &LogicalPlan) -> bool {
    let mut travels = true;
    let walked = plan.apply_with_subqueries(|node| {
        travels &= match node {
            LogicalPlan::TableScan(scan) => source_travels(&scan.source),
            LogicalPlan::Dml(dml) => source_travels(&dml.target),
            LogicalPlan::Ddl(_)
            | LogicalPlan::Statement(_)
            | LogicalPlan::DescribeTable(_)
            | LogicalPlan::Extension(_) => false,
            _ => true,
        };
        Ok(if travels {
            TreeNodeRecursion::Continue
        } else {
            TreeNodeRecursion::Stop
        })
    });
    walked.is_ok() && travels
}

fn source_travels(source: &Arc<dyn TableSource>) -> bool {
    let Ok(provider) = source_as_provider(source) else {
        return false;
    };
    // a listing table over our format travels wrapped: one that is not (a URL table) fails
    // loudly rather than skipping the round trip
    if provider.is::<VariantParquetTable>() || provider.is::<ListingTable>() {
        true
    } else if let Some(view) = provider.downcast_ref::<ViewTable>() {
        logical_plan_travels(view.logical_plan())
    } else {
        false
    }
}

/// Plans and runs `sql`, renders variant columns as JSON and normalizes every cell.
async fn run_query(ctx: &SessionContext, sql: &str) -> Result<DBOutput<DFColumnType>, EngineError> {
    let df = crate::sql::run_sql(ctx, sql).await?;
    let round_trip = ctx
        .state()
        .config()
        .get_extension::<PlanRoundTrip>()
        .is_some();
    let (mut task_ctx, mut plan) = if round_trip && logical_plan_travels(df.logical_plan()) {
        // as Ballista ships a query: optimized, then planned where it arrives
        let receiver = receiving_session(ctx);
        let optimized = ctx.state().optimize(df.logical_plan())?;
        let bytes = crate::plan_codec::logical_plan_to_bytes(&optimized)?;
        let decoded = crate::plan_codec::logical_plan_from_bytes(&bytes, &receiver.task_ctx())?;
        let plan = receiver.state().create_physical_plan(&decoded).await?;
        (receiver.task_ctx(), plan)
    } else {
        (Arc::new(df.task_ctx()), df.create_physical_plan().await?)
    };
    if round_trip && !writes_memory_table(&plan) {
        let receiver = receiving_session(ctx);
        task_ctx = receiver.task_ctx();
        let bytes = crate::plan_codec::physical_plan_to_bytes(plan)?;
        plan = crate::plan_codec::physical_plan_from_bytes(&bytes, &task_ctx)?;
    }
    let schema = plan.schema();
    let batches = collect(plan, task_ctx).await?;

    // read at query time: a `SET datafusion.execution.time_zone` earlier in the file applies
    let time_zone = ctx.state().config().options().execution.time_zone.clone();
    let time_zone = time_zone.as_deref();

    let rendered = batches
        .iter()
        .map(|batch| render_variants_as_json(batch, time_zone))
        .collect::<Result<Vec<RecordBatch>, _>>()?;
    let rendered_schema = match rendered.first() {
        Some(batch) => batch.schema(),
        None => render_variants_as_json(&RecordBatch::new_empty(schema), time_zone)?.schema(),
    };

    let types = convert_schema_to_types(rendered_schema.fields());
    let rows = convert_batches(&rendered)?;
    if rows.is_empty() && types.is_empty() {
        Ok(DBOutput::StatementComplete(0))
    } else {
        Ok(DBOutput::Rows { types, rows })
    }
}
