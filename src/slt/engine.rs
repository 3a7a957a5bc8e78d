//! The connection sqllogictest talks to: statements and queries run in a `SessionContext` the
//! caller built, variant columns printed as JSON.

use std::fmt;
use std::sync::Arc;

use crate::display::render_variants_as_json;
use async_trait::async_trait;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use sqllogictest::{AsyncDB, DBOutput};

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

/// Plans and runs `sql`, renders variant columns as JSON and normalizes every cell.
async fn run_query(ctx: &SessionContext, sql: &str) -> Result<DBOutput<DFColumnType>, EngineError> {
    let df = ctx.sql(sql).await?;
    let task_ctx = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await?;
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
