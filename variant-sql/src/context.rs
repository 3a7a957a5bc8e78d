//! [`VariantCliContext`]: the session datafusion-cli's execution loop runs against.
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::dataframe::DataFrame;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::object_store::ObjectStore;
use datafusion::prelude::SessionContext;
use datafusion_cli::cli_context::CliSessionContext;

use datafusion_parquet_variant::display::display_variants;

/// A [`SessionContext`] whose query results have their variants rendered as JSON text (see
/// [`display_variants`]), so that every datafusion-cli output format prints them as JSON.
/// Everything else is delegated to the session unchanged.
#[derive(Clone)]
pub struct VariantCliContext {
    ctx: SessionContext,
    progress: bool,
}

impl VariantCliContext {
    /// Wraps `ctx`.
    pub fn new(ctx: SessionContext) -> Self {
        VariantCliContext {
            ctx,
            progress: false,
        }
    }

    /// With the progress line on long statements (the session must have
    /// [`ProgressRule`](crate::progress::ProgressRule) last among its physical optimizer rules).
    pub fn with_progress(mut self, progress: bool) -> Self {
        self.progress = progress;
        self
    }

    /// The wrapped session.
    pub fn session(&self) -> &SessionContext {
        &self.ctx
    }
}

#[async_trait]
impl CliSessionContext for VariantCliContext {
    fn task_ctx(&self) -> Arc<TaskContext> {
        self.ctx.task_ctx()
    }

    fn session_state(&self) -> SessionState {
        self.ctx.state()
    }

    // `url::Url` is named by the trait's signature and re-exported by no DataFusion crate, hence
    // the direct `url` dependency (the version datafusion-cli itself uses).
    fn register_object_store(
        &self,
        url: &url::Url,
        object_store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore + 'static>> {
        self.ctx.register_object_store(url, object_store)
    }

    fn register_table_options_extension_from_scheme(&self, scheme: &str) {
        CliSessionContext::register_table_options_extension_from_scheme(&self.ctx, scheme)
    }

    /// Executes `plan` (DDL and statements run now, as in [`SessionContext::execute_logical_plan`])
    /// and returns the result with its variants rendered as JSON text. A query, `COPY` or
    /// `INSERT` gets the progress line where it is on ([`crate::progress`]).
    /// On a coordinator (`--workers`), EXPLAIN shows the distributed plan
    /// ([`datafusion_parquet_variant::distributed::explain_distributed`]).
    async fn execute_logical_plan(&self, plan: LogicalPlan) -> Result<DataFrame> {
        #[cfg(feature = "distributed")]
        if let Some(batch) =
            datafusion_parquet_variant::distributed::explain_distributed(&self.ctx.state(), &plan)
                .await?
        {
            return self.ctx.read_batch(batch);
        }
        let runs_long = !matches!(
            plan,
            LogicalPlan::Explain(_)
                | LogicalPlan::Analyze(_)
                | LogicalPlan::Ddl(_)
                | LogicalPlan::Statement(_)
                | LogicalPlan::DescribeTable(_)
        );
        crate::progress::arm(self.progress && runs_long);
        display_variants(self.ctx.execute_logical_plan(plan).await?)
    }
}
