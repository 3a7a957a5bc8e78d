//! Our query planner inside datafusion-python sessions (`register(ctx, planner=True)`).
//!
//! datafusion-python 55 takes a foreign query planner through its extension bundles
//! (`SessionContext.with_extensions`): the host plans and optimizes a query, encodes the logical
//! plan with its session's codec chain, and our planner makes the physical plan, which comes back
//! encoded through the same chain. [`VariantQueryPlanner`] plans with a session state of ours
//! (everything `register_all_with_state` installs, the host's options), so the paths a query
//! reads from our Parquet tables are pushed into the scan as in our own sessions: only the
//! shredded leaves they need are read.
//!
//! Nothing of the plan leaves the process, so the objects the chain cannot encode are lent
//! instead: [`LendingCodec`] encodes any table provider (a MemTable, a Python dataset, our
//! tables) as a handle to the provider itself, and [`ReturningCodec`] hands the physical plan
//! back the same way ([`ReturnedPlan`]). A handle is taken once, when it is decoded. Functions of
//! DataFusion's own are marked on the way so that the plan holds ours, not the host's called
//! through FFI.
use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::config::Extensions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{
    Result, TableReference, exec_datafusion_err, exec_err, internal_err, not_impl_err,
};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{
    FunctionRegistry, SendableRecordBatchStream, SessionState, SessionStateBuilder, TaskContext,
};
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, displayable,
};
use datafusion_ffi::execution::FFI_TaskContextProvider;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::proto::physical_extension_codec::FFI_PhysicalExtensionCodec;
use datafusion_ffi::query_planner::FFI_QueryPlanner;
use datafusion_parquet_variant::plan_codec::restore_variant_fields;
use datafusion_parquet_variant::register_all_with_state;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::exports::{FilteredScan, capsule_clone};
use crate::runtime::runtime;

/// The most objects lent at once. A handle is taken when its plan is decoded; one whose plan is
/// never decoded (a plan encoded for another purpose, or whose decoding failed) is dropped once
/// this many newer ones were lent.
const MOST_LENT: usize = 4096;

/// The start of a handle's bytes, so that a handle is never mistaken for another codec's bytes.
const HANDLE_TAG: &[u8] = b"datafusion-parquet-variant lent ";

/// Objects lent for the time between a plan's encoding and its decoding in this process.
struct Lent<T> {
    next: AtomicU64,
    items: Mutex<BTreeMap<u64, T>>,
}

impl<T> Lent<T> {
    const fn new() -> Self {
        Self {
            next: AtomicU64::new(0),
            items: Mutex::new(BTreeMap::new()),
        }
    }

    /// Lends `item`: writes its handle (the tag, this process's [`process_mark`], a number) to
    /// `buf`.
    fn lend(&self, item: T, buf: &mut Vec<u8>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        items.insert(id, item);
        while items.len() > MOST_LENT {
            items.pop_first();
        }
        buf.extend_from_slice(HANDLE_TAG);
        buf.extend_from_slice(&process_mark().to_le_bytes());
        buf.extend_from_slice(&id.to_le_bytes());
    }

    /// Takes back the item whose handle is `buf`; `what` names it in errors.
    fn take(&self, buf: &[u8], what: &str) -> Result<T> {
        let Some(rest) = buf.strip_prefix(HANDLE_TAG) else {
            return exec_err!("not a handle of datafusion-parquet-variant's planner: {what}");
        };
        if rest.len() != 16 {
            return exec_err!("a malformed handle of {what}");
        }
        let (mut process, mut id) = ([0; 8], [0; 8]);
        process.copy_from_slice(&rest[..8]);
        id.copy_from_slice(&rest[8..]);
        if u64::from_le_bytes(process) != process_mark() {
            return exec_err!(
                "{what} was lent by datafusion-parquet-variant's planner in another process: \
                 plans it encodes are valid only in the process that planned them"
            );
        }
        let id = u64::from_le_bytes(id);
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        items.remove(&id).ok_or_else(|| {
            exec_datafusion_err!(
                "{what} lent by datafusion-parquet-variant's planner was already taken back \
                 (a plan it encodes is decoded once) or dropped (at most {MOST_LENT} are held)"
            )
        })
    }
}

/// A random number drawn once per process, in every handle: a handle from another process (even
/// one with the same process id, as in containers) is refused, not resolved to another object.
fn process_mark() -> u64 {
    static MARK: LazyLock<u64> = LazyLock::new(|| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.finish()
    });
    *MARK
}

/// Table providers lent by [`LendingCodec`].
static TABLES: Lent<Arc<dyn TableProvider>> = Lent::new();

/// Physical plans returned by [`ReturningCodec`].
static PLANS: Lent<Arc<dyn ExecutionPlan>> = Lent::new();

/// What a function of DataFusion's own (or ours) is encoded as ([`LendingCodec`]): its name says
/// which.
const BUILTIN_TAG: &[u8] = b"datafusion-parquet-variant builtin";

/// A session state of DataFusion's defaults and ours, built once: the functions DataFusion
/// provides, and the base of each state [`VariantQueryPlanner`] plans with.
fn base_state() -> &'static SessionState {
    static STATE: LazyLock<SessionState> = LazyLock::new(|| {
        let mut builder =
            register_all_with_state(SessionStateBuilder::new().with_default_features());
        // without our table options (see [`VariantQueryPlanner`] for the session options)
        if let Some(options) = builder.table_options().as_mut() {
            options.extensions = Extensions::new();
        }
        builder.build()
    });
    &STATE
}

/// A logical codec for the host's chain: every table provider travels as a handle to itself.
///
/// Functions travel by name, and those whose name is one of DataFusion's own functions are
/// marked so that our planner plans ours (not those that read session options, which the
/// host's session has made for itself): the host's reach us as foreign functions, called
/// through FFI batch by batch (a grouped aggregate 1.7 times slower). The host's codec encodes Python
/// functions before the chain reaches this one (unless its inlining is turned off), so a
/// Python function keeps its own name's meaning; one registered under a built-in's name with
/// inlining off, or another library's function under such a name, is planned as the built-in.
#[derive(Debug, Default)]
pub(crate) struct LendingCodec;

impl LogicalExtensionCodec for LendingCodec {
    fn try_decode(
        &self,
        _buf: &[u8],
        _inputs: &[LogicalPlan],
        _ctx: &TaskContext,
    ) -> Result<Extension> {
        not_impl_err!("datafusion-parquet-variant's planner does not decode extension nodes")
    }

    fn try_encode(&self, _node: &Extension, _buf: &mut Vec<u8>) -> Result<()> {
        not_impl_err!("datafusion-parquet-variant's planner does not encode extension nodes")
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        _schema: SchemaRef,
        _ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let table = TABLES.take(buf, &format!("the table {table_ref}"))?;
        Ok(FilteredScan::unwrapped(table))
    }

    fn try_encode_table_provider(
        &self,
        _table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        TABLES.lend(node, buf);
        Ok(())
    }

    fn try_decode_file_format(
        &self,
        _buf: &[u8],
        _ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        not_impl_err!("datafusion-parquet-variant's planner does not decode file formats")
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        builtin(buf, name, |name| base_state().udf(name))
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        // not those that read session options (a time zone, say): ours have the defaults, the
        // host's are made for its session
        let ours = base_state().scalar_functions().get(node.name());
        mark_builtin(
            ours.is_some_and(|f| {
                f.inner()
                    .with_updated_config(base_state().config_options())
                    .is_none()
            }),
            buf,
        )
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        builtin(buf, name, |name| base_state().udaf(name))
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        mark_builtin(
            base_state().aggregate_functions().contains_key(node.name()),
            buf,
        )
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        builtin(buf, name, |name| base_state().udwf(name))
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        mark_builtin(
            base_state().window_functions().contains_key(node.name()),
            buf,
        )
    }
}

/// Writes [`BUILTIN_TAG`] to `buf` when the function is `ours` (nothing otherwise: the function
/// then travels by name alone, to the host's registry).
fn mark_builtin(ours: bool, buf: &mut Vec<u8>) -> Result<()> {
    if ours {
        buf.extend_from_slice(BUILTIN_TAG);
    }
    Ok(())
}

/// The function `name` of ours (`lookup`) when `buf` is [`BUILTIN_TAG`].
fn builtin<T>(
    buf: &[u8],
    name: &str,
    lookup: impl FnOnce(&str) -> Result<Arc<T>>,
) -> Result<Arc<T>> {
    if buf == BUILTIN_TAG {
        lookup(name)
    } else {
        not_impl_err!("datafusion-parquet-variant's planner: no function {name} marked as ours")
    }
}

/// A physical codec for the host's chain: the plan [`VariantQueryPlanner`] made travels back as
/// a handle to itself ([`ReturnedPlan`]); nothing else is encoded here.
#[derive(Debug, Default)]
pub(crate) struct ReturningCodec;

impl PhysicalExtensionCodec for ReturningCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        _inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        PLANS.take(buf, "a physical plan")
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<ReturnedPlan>() {
            Some(returned) => {
                PLANS.lend(Arc::clone(&returned.plan), buf);
                Ok(())
            }
            None => {
                not_impl_err!("datafusion-parquet-variant's planner encodes only the plans it made")
            }
        }
    }
}

/// The root of a plan [`VariantQueryPlanner`] made, on its way back to the host: a leaf, so that
/// the encoding does not descend into the plan, which [`ReturningCodec`] lends whole (the host
/// receives the plan itself).
#[derive(Debug)]
struct ReturnedPlan {
    plan: Arc<dyn ExecutionPlan>,
}

impl DisplayAs for ReturnedPlan {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "ReturnedPlan: {}",
            displayable(self.plan.as_ref()).one_line()
        )
    }
}

impl ExecutionPlan for ReturnedPlan {
    fn name(&self) -> &str {
        "ReturnedPlan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.plan.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return internal_err!("ReturnedPlan is a leaf: it takes no children");
        }
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.plan.execute(partition, context)
    }
}

/// Plans the host's optimized logical plans with a session state of ours: the host's options,
/// our functions, rules and Parquet format, and DataFusion's physical optimizer, which pushes the
/// paths a query reads into our scans.
#[derive(Debug)]
struct VariantQueryPlanner;

#[async_trait]
impl QueryPlanner for VariantQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // the host's options without extensions: ours (`variant.*`, which matter to writes
        // only) would reach the host with every call into its tables and plans, and it refuses
        // options it does not know
        let mut config = session.config().clone();
        config.options_mut().extensions = Extensions::new();
        let plan = logical_plan.clone();
        // on our runtime: the host polls this future on its own, which our tokio does not see
        let physical = runtime()
            .spawn(async move {
                let state = SessionStateBuilder::new_from_existing(base_state().clone())
                    .with_config(config)
                    .build();
                // the whole pipeline again: our analyzer makes typed `variant_get` calls the
                // deferred form, which the optimizer then moves toward the scan
                // the host's encoding drops the field metadata of literals: constant variants
                // (`parse_json('[1]')`, folded by the host's optimizer) are marked again
                restore_variant_fields(state.create_physical_plan(&plan).await?)
            })
            .await
            .map_err(|e| exec_datafusion_err!("datafusion-parquet-variant's planner: {e}"))??;
        Ok(Arc::new(ReturnedPlan { plan: physical }))
    }
}

/// The task-context provider of the host session `session` (datafusion-python's
/// `SessionContext`, or its inner context).
fn task_context_provider(session: &Bound<'_, PyAny>) -> PyResult<FFI_TaskContextProvider> {
    const GETTER: &str = "__datafusion_task_context_provider__";
    let owner = if session.hasattr(GETTER)? {
        session.clone()
    } else {
        session.getattr("ctx")?
    };
    capsule_clone(&owner.getattr(GETTER)?.call0()?)
}

/// [`LendingCodec`] for datafusion-python's codec chain.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct LogicalCodec;

#[pymethods]
impl LogicalCodec {
    #[new]
    fn new() -> Self {
        Self
    }

    /// The codec's id in the host's chain (written beside each handle it encodes).
    #[getter]
    fn __datafusion_codec_id__(&self) -> &'static str {
        "datafusion_parquet_variant.planner.tables"
    }

    fn __datafusion_logical_extension_codec__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_LogicalExtensionCodec::new(
            Arc::new(LendingCodec),
            Some(runtime().handle().clone()),
            task_context_provider(&session)?,
        );
        PyCapsule::new_with_value(py, ffi, c"datafusion_logical_extension_codec")
    }
}

/// [`ReturningCodec`] for datafusion-python's codec chain.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
pub(crate) struct PhysicalCodec;

#[pymethods]
impl PhysicalCodec {
    #[new]
    fn new() -> Self {
        Self
    }

    /// The codec's id in the host's chain.
    #[getter]
    fn __datafusion_codec_id__(&self) -> &'static str {
        "datafusion_parquet_variant.planner.plans"
    }

    fn __datafusion_physical_extension_codec__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_PhysicalExtensionCodec::new(
            Arc::new(ReturningCodec),
            Some(runtime().handle().clone()),
            task_context_provider(&session)?,
        );
        PyCapsule::new_with_value(py, ffi, c"datafusion_physical_extension_codec")
    }
}

/// [`VariantQueryPlanner`] as datafusion-python takes a planner (its codecs are replaced by the
/// session's chain when it is installed).
#[pyfunction]
pub(crate) fn query_planner<'py>(
    py: Python<'py>,
    session: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_QueryPlanner::new(
        Arc::new(VariantQueryPlanner),
        Some(runtime().handle().clone()),
        task_context_provider(&session)?,
        Arc::new(DefaultLogicalExtensionCodec {}),
        Arc::new(DefaultPhysicalExtensionCodec {}),
    );
    PyCapsule::new_with_value(py, ffi, c"datafusion_query_planner")
}
