//! `variant_explode(expr)` / `variant_explode_outer(expr)` as table functions over a constant
//! argument, for sessions that cannot take our planner (datafusion-python's): the argument is
//! computed once, and exploded by our own session as `LATERAL variant_explode` would.
use std::future::Future;
use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::Expr;
use datafusion_parquet_variant::session_context;

use crate::runtime::runtime;

/// `variant_explode` (`outer`: `variant_explode_outer`) over a constant.
#[derive(Debug)]
pub(crate) struct ExplodeFunction {
    outer: bool,
}

impl ExplodeFunction {
    /// The plain or the `_outer` form.
    pub(crate) fn new(outer: bool) -> Self {
        ExplodeFunction { outer }
    }

    /// The SQL name.
    pub(crate) fn name(&self) -> &'static str {
        if self.outer {
            "variant_explode_outer"
        } else {
            "variant_explode"
        }
    }

    /// The rows of `argument` exploded, computed in a session of ours.
    async fn explode(&self, argument: Expr) -> Result<MemTable> {
        let ctx = session_context();
        let value = ctx.read_empty()?.select(vec![argument.alias("v")])?;
        ctx.register_table("argument", value.into_view())?;
        let rows = ctx
            .sql(&format!(
                "SELECT e.pos, e.key, e.value FROM argument, LATERAL {}(argument.v) AS e",
                self.name()
            ))
            .await?;
        let schema = Arc::clone(rows.schema().inner());
        MemTable::try_new(schema, vec![rows.collect().await?])
    }
}

/// Runs `future` on our runtime from a thread of its own (the caller may be inside another
/// runtime, where blocking on ours is not allowed).
fn block_on<T: Send>(future: impl Future<Output = Result<T>> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| runtime().block_on(future))
            .join()
            .map_err(|_| exec_datafusion_err!("variant_explode panicked"))?
    })
}

impl TableFunctionImpl for ExplodeFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let [argument] = args.exprs() else {
            return plan_err!("{} takes one argument", self.name());
        };
        if !argument.column_refs().is_empty() {
            return plan_err!(
                "{}: in this session the argument must be a constant (LATERAL over a column \
                 needs datafusion_parquet_variant.SessionContext)",
                self.name()
            );
        }
        Ok(Arc::new(block_on(self.explode(argument.clone()))?))
    }
}
