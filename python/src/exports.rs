//! Our functions and Parquet tables for datafusion-python's `SessionContext`, as the
//! datafusion-ffi objects its PyCapsule protocol takes (`__datafusion_scalar_udf__`,
//! `__datafusion_aggregate_udf__`, `__datafusion_table_function__`,
//! `__datafusion_table_provider__`).
//!
//! What crosses: functions and aggregates (signatures, return fields with their extension
//! metadata, execution), table functions with constant arguments, and table providers with
//! their projections, filters and limits. What does not: planning hooks (the `v:path` syntax,
//! the `VARIANT` type name, casts planned as typed extractions, a function's `simplify`), and the
//! host's physical optimizer does not see into our scan (see [`ParquetTable`]) unless our planner
//! is installed ([`crate::planner`]).
use std::ffi::CStr;
use std::ptr::NonNull;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableFunctionImpl, TableProvider};
use datafusion::common::Result;
use datafusion::datasource::TableType;
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::logical_expr::expr_rewriter::unnormalize_col;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{
    AggregateUDF, Expr, LogicalPlan, ScalarUDF, TableProviderFilterPushDown,
};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_ffi::execution::FFI_TaskContextProvider;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_ffi::udaf::FFI_AggregateUDF;
use datafusion_ffi::udf::FFI_ScalarUDF;
use datafusion_ffi::udtf::FFI_TableFunction;
use datafusion_parquet_variant::delta::VariantDeltaTable;
use datafusion_parquet_variant::functions::{
    aggregate_functions as ours_aggregate, scalar_functions as ours_scalar,
};
use datafusion_parquet_variant::json_files::{READ_JSON_VARIANT, ReadJsonVariant};
use datafusion_parquet_variant::parquet::register_parquet_table;
use datafusion_parquet_variant::session_context;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::explode::ExplodeFunction;
use crate::runtime::{run, runtime};

/// One of our scalar functions, for `datafusion.udf(f)`.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct ScalarFunction {
    udf: Arc<ScalarUDF>,
}

#[pymethods]
impl ScalarFunction {
    /// The SQL name.
    #[getter]
    fn name(&self) -> String {
        self.udf.name().to_string()
    }

    fn __datafusion_scalar_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_ScalarUDF::from(Arc::clone(&self.udf));
        PyCapsule::new_with_value(py, ffi, c"datafusion_scalar_udf")
    }
}

/// One of our aggregate functions, for `datafusion.udaf(f)`.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct AggregateFunction {
    udaf: Arc<AggregateUDF>,
}

#[pymethods]
impl AggregateFunction {
    /// The SQL name.
    #[getter]
    fn name(&self) -> String {
        self.udaf.name().to_string()
    }

    fn __datafusion_aggregate_udf__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_AggregateUDF::from(Arc::clone(&self.udaf));
        PyCapsule::new_with_value(py, ffi, c"datafusion_aggregate_udf")
    }
}

/// `variant_explode` or `variant_explode_outer` over a constant, or `read_json_variant`, for
/// `datafusion.TableFunction(name, f, ctx)`.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct TableFunction {
    name: &'static str,
    function: Arc<dyn TableFunctionImpl>,
}

#[pymethods]
impl TableFunction {
    /// The SQL name.
    #[getter]
    fn name(&self) -> &'static str {
        self.name
    }

    fn __datafusion_table_function__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_TableFunction::new_with_ffi_codec(
            Arc::clone(&self.function) as _,
            Some(runtime().handle().clone()),
            host_codec(session)?,
        );
        PyCapsule::new_with_value(py, ffi, c"datafusion_table_function")
    }
}

/// One of our Parquet tables (VARIANT columns restored, files of any shredding), for
/// `SessionContext.register_table(name, table)` of datafusion-python. The filters the host
/// hands its scan prune row groups and pages on shredded leaves, and become Parquet row filters
/// where `datafusion.execution.parquet.pushdown_filters` is set; the host still applies them.
/// Paths in the projection are computed by the host on the whole variant column (its physical
/// optimizer does not see into a foreign scan), unless our planner plans the query
/// ([`crate::planner`]), which pushes them into the scan.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct ParquetTable {
    table: Arc<dyn TableProvider>,
}

#[pymethods]
impl ParquetTable {
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_TableProvider::new_with_ffi_codec(
            Arc::clone(&self.table),
            true,
            Some(runtime().handle().clone()),
            host_codec(session)?,
        );
        PyCapsule::new_with_value(py, ffi, c"datafusion_table_provider")
    }
}

/// The logical codec of the host session: datafusion-python hands its session (or, from
/// `Schema.register_table`, the codec's capsule itself).
fn host_codec(session: Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let capsule = if session.hasattr("__datafusion_logical_extension_codec__")? {
        session
            .getattr("__datafusion_logical_extension_codec__")?
            .call0()?
    } else {
        session
    };
    capsule_clone(&capsule)
}

/// A datafusion-ffi object datafusion-python hands over in a PyCapsule of name [`Self::NAME`].
pub(crate) trait InCapsule: Clone {
    /// The capsule's name.
    const NAME: &'static CStr;
}

impl InCapsule for FFI_LogicalExtensionCodec {
    const NAME: &'static CStr = c"datafusion_logical_extension_codec";
}

impl InCapsule for FFI_TaskContextProvider {
    const NAME: &'static CStr = c"datafusion_task_context_provider";
}

/// A reference of our own to the object in `capsule` (a capsule of another name is an error).
pub(crate) fn capsule_clone<T: InCapsule>(capsule: &Bound<'_, PyAny>) -> PyResult<T> {
    let object: NonNull<T> = capsule
        .cast::<PyCapsule>()?
        .pointer_checked(Some(T::NAME))?
        .cast();
    // SAFETY: a capsule of that name holds a `T`, which the host keeps alive while the capsule
    // lives; cloning takes a reference of our own.
    Ok(unsafe { object.as_ref() }.clone())
}

/// Our scalar functions (those an application calls; not the hidden ones plans hold).
#[pyfunction]
pub(crate) fn scalar_functions() -> Vec<ScalarFunction> {
    ours_scalar()
        .into_iter()
        .map(|udf| ScalarFunction { udf })
        .collect()
}

/// Our aggregate functions.
#[pyfunction]
pub(crate) fn aggregate_functions() -> Vec<AggregateFunction> {
    ours_aggregate()
        .into_iter()
        .map(|udaf| AggregateFunction { udaf })
        .collect()
}

/// `variant_explode` and `variant_explode_outer`, and `read_json_variant` (its arguments
/// constants: the location, then option names and values).
#[pyfunction]
pub(crate) fn table_functions() -> Vec<TableFunction> {
    let mut functions: Vec<TableFunction> = [false, true]
        .into_iter()
        .map(|outer| {
            let function = ExplodeFunction::new(outer);
            TableFunction {
                name: function.name(),
                function: Arc::new(function),
            }
        })
        .collect();
    functions.push(TableFunction {
        name: READ_JSON_VARIANT,
        function: Arc::new(ReadJsonVariant),
    });
    functions
}

/// The Parquet file, folder or glob `path` as one of our tables.
#[pyfunction]
pub(crate) fn parquet_table(py: Python<'_>, path: &str) -> PyResult<ParquetTable> {
    let path = path.to_string();
    let table = run(py, async move {
        let ctx = session_context();
        register_parquet_table(&ctx, "t", &path).await?;
        ctx.table_provider("t").await
    })?;
    Ok(ParquetTable {
        table: Arc::new(FilteredScan { inner: table }),
    })
}

/// The Delta table at `path` (its newest version, or `version`, or the newest one committed at
/// or before `timestamp`) as one of our tables, read by our Parquet scan.
#[pyfunction]
#[pyo3(signature = (path, version=None, timestamp=None))]
pub(crate) fn delta_table(
    py: Python<'_>,
    path: &str,
    version: Option<u64>,
    timestamp: Option<&str>,
) -> PyResult<ParquetTable> {
    let version = crate::context::delta_version(version, timestamp)?;
    let path = path.to_string();
    let table = run(py, async move {
        let ctx = session_context();
        let table = VariantDeltaTable::open(&ctx.state(), &path, &version).await?;
        Ok(Arc::new(table) as Arc<dyn TableProvider>)
    })?;
    Ok(ParquetTable {
        table: Arc::new(FilteredScan { inner: table }),
    })
}

/// `filters` as our own session plans them over `table` (the analyzer makes typed `variant_get`
/// calls the deferred form that pruning reads, checked where written; simplification parses
/// their paths), as physical expressions over the table's columns.
fn our_predicates(
    table: &Arc<dyn TableProvider>,
    filters: &[Expr],
) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
    let ours = session_context();
    let state = ours.state();
    let scan = ours.read_table(Arc::clone(table))?;
    let mut predicates = Vec::with_capacity(filters.len());
    for filter in filters {
        let plan = scan
            .clone()
            .filter(unnormalize_col(filter.clone()))?
            .into_unoptimized_plan();
        let plan = state
            .analyzer()
            .execute_and_check(plan, state.config_options(), |_, _| {})?;
        let LogicalPlan::Filter(analyzed) = plan else {
            continue;
        };
        let schema = Arc::clone(analyzed.input.schema());
        let simplifier = ExprSimplifier::new(
            SimplifyContext::builder()
                .with_schema(Arc::clone(&schema))
                .with_config_options(Arc::new(state.config_options().as_ref().clone()))
                .build(),
        );
        let predicate = simplifier.simplify(analyzed.predicate)?;
        predicates.push(ours.create_physical_expr(predicate, &schema)?);
    }
    Ok(predicates)
}

/// `future`, polled inside `handle`'s runtime: what it spawns or waits on (timers, I/O) runs
/// there, wherever the future itself is polled.
struct InRuntime<F> {
    handle: tokio::runtime::Handle,
    future: std::pin::Pin<Box<F>>,
}

impl<F: std::future::Future> InRuntime<F> {
    fn new(handle: tokio::runtime::Handle, future: F) -> Self {
        InRuntime {
            handle,
            future: Box::pin(future),
        }
    }
}

impl<F: std::future::Future> std::future::Future for InRuntime<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let _inside = self.handle.enter();
        self.future.as_mut().poll(cx)
    }
}

/// A table whose scan takes the filters it is given into its Parquet source's predicate (for
/// pruning and row filters), which DataFusion's physical optimizer does in our own sessions.
#[derive(Debug)]
pub(crate) struct FilteredScan {
    inner: Arc<dyn TableProvider>,
}

impl FilteredScan {
    /// `table` as our own sessions plan it: the table inside a [`FilteredScan`] (whose filters
    /// DataFusion's physical optimizer then pushes into the scan itself), others as they are.
    pub(crate) fn unwrapped(table: Arc<dyn TableProvider>) -> Arc<dyn TableProvider> {
        match table.downcast_ref::<FilteredScan>() {
            Some(scan) => Arc::clone(&scan.inner),
            None => table,
        }
    }
}

#[async_trait]
impl TableProvider for FilteredScan {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // (polled by the host, on no runtime of ours: deltalake-core's log reads need one)
        let scan = self.inner.scan(state, projection, filters, limit);
        let plan = InRuntime::new(runtime().handle().clone(), scan).await?;
        if filters.is_empty() {
            return Ok(plan);
        }
        let Some(config) = plan
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
        else {
            return Ok(plan);
        };
        let predicates = our_predicates(&self.inner, filters)?;
        let pushed = config
            .file_source
            .try_pushdown_filters(predicates, state.config_options())?;
        let Some(source) = pushed.updated_node else {
            return Ok(plan);
        };
        let mut config = config.clone();
        config.file_source = source;
        Ok(DataSourceExec::from_data_source(config))
    }
}
