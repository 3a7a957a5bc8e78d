//! Plans that travel: `datafusion-proto` codecs for everything of ours a plan can hold, so that
//! an engine shipping plans to other processes (datafusion-distributed, Ballista) runs our
//! functions and reads and writes our files as a single process does.
//!
//! - [`VariantPhysicalCodec`] encodes our Parquet scan (the source with its per-file variant
//!   adapter), our Parquet sink (VARIANT annotations, explicit and automatic shredding) and the
//!   staging that makes writes atomic. The shredding before the sink is a call of a hidden
//!   function, which travels by name like the others.
//! - [`VariantLogicalCodec`] encodes the `parquet` file type of `COPY` with its shredding
//!   options, tables over Parquet files ([`VariantParquetTable`], which `register_all`'s
//!   `CREATE EXTERNAL TABLE` and `register_parquet_table` create), and our functions' planned
//!   state; other file types and nodes go to the codec it
//!   wraps (DataFusion's default unless given). Encode analyzed plans (as engines ship them):
//!   the lateral `variant_explode` placeholder exists only before analysis, and its outer
//!   references are something DataFusion 55 cannot encode.
//! - Our functions travel by name: the receiving session resolves them from its registry, so
//!   it must have had [`register_all`](crate::register_all) (or `register_all_with_state`).
//! - DataFusion 55 drops the return field of every scalar function call, and the field
//!   metadata of literals, when it decodes a physical plan: variant results would arrive as
//!   plain structs. [`restore_variant_fields`] puts them back; [`physical_plan_from_bytes`]
//!   applies it, and an engine that decodes plans itself must apply it to each decoded plan
//!   (datafusion-distributed: a worker plan rewrite handler).
//!
//! An application's own codecs go inside ours: [`VariantPhysicalCodec::new`] and
//! [`VariantLogicalCodec::new`] pass on what is not ours (plan nodes, expressions, scalar,
//! aggregate and window functions; not higher-order functions). In DataFusion's
//! `ComposedPhysicalExtensionCodec` only the first codec ever encodes function state. The bytes
//! are not a format kept across versions of this crate.
use std::sync::Arc;

use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::{DataFusionError, Result, TableReference, internal_err, not_impl_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, ParquetRowSelection};
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileSinkConfig, JsonSource,
};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use datafusion::physical_expr::projection::{ProjectionExpr, ProjectionExprs};
use datafusion::physical_expr::{LexRequirement, PhysicalExpr, PhysicalSortExpr};
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_datasource::file::FileSource;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message;
use prost::bytes::Bytes;

use crate::json_files::{VariantJsonSource, VariantJsonTable};
use crate::parquet::format::with_variant_source;
use crate::parquet::general::file_errors::SkipFiles;
use crate::parquet::general::staged::{StagedSink, StagedWrite, StagingText};
use crate::parquet::variant_order;
use crate::parquet::write::input_sample::{InputSample, SampleExec, SampleOf};
use crate::parquet::write::shred_on_write::is_unshredded_variant;
use crate::parquet::{
    AutoShredding, ShreddingOptions, VariantExprAdapterFactory, VariantParquetFormatFactory,
    VariantParquetSink, VariantParquetSource, VariantParquetTable,
};
use crate::shredding::{InferLimits, InferenceRule};

mod messages;
mod restore;
mod table;
mod udfs;

pub use restore::restore_variant_fields;
pub use udfs::register_plan_functions;

use messages::{
    AutoShreddingNode, DeltaAppendNode, DeltaChecksNode, FileRowSelection, InputSampleNode,
    JsonScanNode, JsonTableNode, ShreddedColumn, StagedSinkNode, VariantExprNode,
    VariantFormatNode, VariantPlanNode, VariantScanNode, VariantSinkNode, VariantTableNode,
    variant_expr_node, variant_plan_node::Kind,
};

/// Encodes `plan` with [`VariantPhysicalCodec`] (DataFusion's own encoding for the rest).
pub fn physical_plan_to_bytes(plan: Arc<dyn ExecutionPlan>) -> Result<Bytes> {
    datafusion_proto::bytes::physical_plan_to_bytes_with_extension_codec(
        plan,
        &VariantPhysicalCodec::default(),
    )
}

/// Decodes a plan [`physical_plan_to_bytes`] encoded, in the session of `ctx` (which must have
/// our functions registered), with its variant fields restored ([`restore_variant_fields`]).
///
/// Bytes that do not decode are an error; so are the few corruptions on which DataFusion 55's
/// decoding panics (a boolean buffer shorter than its length, for one), caught here.
pub fn physical_plan_from_bytes(bytes: &[u8], ctx: &TaskContext) -> Result<Arc<dyn ExecutionPlan>> {
    let plan = without_panics(|| {
        datafusion_proto::bytes::physical_plan_from_bytes_with_extension_codec(
            bytes,
            ctx,
            &VariantPhysicalCodec::default(),
        )
    })?;
    restore_variant_fields(plan)
}

/// Encodes `plan` with [`VariantLogicalCodec`].
pub fn logical_plan_to_bytes(plan: &LogicalPlan) -> Result<Bytes> {
    datafusion_proto::bytes::logical_plan_to_bytes_with_extension_codec(
        plan,
        &VariantLogicalCodec::default(),
    )
}

/// Decodes a plan [`logical_plan_to_bytes`] encoded, in the session of `ctx`.
/// Corrupt bytes are an error, as for [`physical_plan_from_bytes`].
pub fn logical_plan_from_bytes(bytes: &[u8], ctx: &TaskContext) -> Result<LogicalPlan> {
    without_panics(|| {
        datafusion_proto::bytes::logical_plan_from_bytes_with_extension_codec(
            bytes,
            ctx,
            &VariantLogicalCodec::default(),
        )
    })
}

/// `decode()`, with a panic inside it turned into an error.
fn without_panics<T>(decode: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::panics::catch(decode, |why| {
        DataFusionError::Internal(format!("cannot decode a plan: {why}"))
    })
}

/// How deep our plan nodes may nest in one another's embedded plans. A plan we encode nests
/// them at most two deep (a staged sink holding a sink; a scan's embedded plan must be a
/// Parquet file scan, checked before it is decoded); each
/// embedded plan is decoded afresh, so `prost`'s own depth limit restarts in it, and without
/// this bound a plan of a few kilobytes could nest deep enough to overflow the stack of the
/// thread that decodes it (a worker's, which would abort).
const MAX_NESTED_NODES: usize = 8;

thread_local! {
    /// How many of our plan nodes this thread is decoding, one inside another.
    static NESTED_NODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One of our plan nodes being decoded, counted in [`NESTED_NODES`] while it lives.
struct NestedDecode;

impl NestedDecode {
    /// Counts one more node, or refuses it past [`MAX_NESTED_NODES`].
    fn enter() -> Result<Self> {
        NESTED_NODES.with(|nested| {
            if nested.get() >= MAX_NESTED_NODES {
                return Err(corrupt(
                    "a plan",
                    format!("its variant plan nodes nest more than {MAX_NESTED_NODES} deep"),
                ));
            }
            nested.set(nested.get() + 1);
            Ok(NestedDecode)
        })
    }
}

impl Drop for NestedDecode {
    fn drop(&mut self) {
        NESTED_NODES.with(|nested| nested.set(nested.get() - 1));
    }
}

/// A `datafusion-proto` error for bytes that do not decode.
fn corrupt(what: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("cannot decode {what}: {e}"))
}

/// `value` of a message field that must be present.
fn required<'a, T>(value: &'a Option<T>, what: &str) -> Result<&'a T> {
    value
        .as_ref()
        .ok_or_else(|| DataFusionError::Internal(format!("{what} is missing")))
}

fn parquet_options_to_proto(options: &TableParquetOptions) -> protobuf::TableParquetOptions {
    // DataFusion converts Parquet options through its format factory
    protobuf::TableParquetOptions::from(&ParquetFormatFactory {
        options: Some(options.clone()),
    })
}

fn arrow_type_to_proto(data_type: &DataType) -> Result<protobuf::ArrowType> {
    protobuf::ArrowType::try_from(data_type).map_err(|e| corrupt("a type", e))
}

fn arrow_type_from_proto(proto: &protobuf::ArrowType) -> Result<DataType> {
    DataType::try_from(proto).map_err(|e| corrupt("a type", e))
}

/// Takes the projection out of the Parquet scan `scan`, with the schema its expressions are
/// over (the table's: the files' columns and the partition columns).
fn take_scan_projection(
    scan: &mut protobuf::PhysicalPlanNode,
) -> Result<Option<(protobuf::ProjectionExprs, Schema)>> {
    let Some(protobuf::physical_plan_node::PhysicalPlanType::ParquetScan(parquet)) =
        &mut scan.physical_plan_type
    else {
        return Ok(None);
    };
    let conf = parquet
        .base_conf
        .as_mut()
        .ok_or_else(|| corrupt("a scan", "no configuration"))?;
    let Some(projection) = conf.projection_exprs.take() else {
        return Ok(None);
    };
    let schema = Schema::try_from(required(&conf.schema, "a scan's schema")?)
        .map_err(|e| corrupt("a scan's schema", e))?;
    Ok(Some((projection, schema)))
}

/// The Parquet scan `plan` (decoded without a projection) projecting `projection`, as
/// DataFusion's decoding would have pushed it into the source.
fn with_scan_projection(
    plan: Arc<dyn ExecutionPlan>,
    projection: ProjectionExprs,
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(config) = plan
        .downcast_ref::<DataSourceExec>()
        .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
    else {
        return internal_err!("a variant scan that is no file scan");
    };
    let mut config = config.clone();
    if let Some(source) = config.file_source.try_pushdown_projection(&projection)? {
        config.file_source = source;
    }
    Ok(DataSourceExec::from_data_source(config))
}

/// An error when `adapter` is set: an application's expression adapter cannot travel.
fn no_application_adapter(
    adapter: Option<&Arc<dyn PhysicalExprAdapterFactory>>,
    what: &str,
) -> Result<()> {
    match adapter {
        Some(_) => {
            not_impl_err!("{what} with an application's expression adapter cannot be encoded")
        }
        None => Ok(()),
    }
}

/// A Parquet file type's node: its fixed options and its shredding options.
fn format_node(
    parquet_options: Option<protobuf::TableParquetOptions>,
    shredding: &ShreddingOptions,
) -> Result<VariantFormatNode> {
    let columns = shredding
        .columns()
        .iter()
        .map(|(column, shredding)| {
            Ok(ShreddedColumn {
                column: column.clone(),
                shredding: shredding.as_ref().map(arrow_type_to_proto).transpose()?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(VariantFormatNode {
        parquet_options,
        shredding: columns,
        inference: (shredding.inference()).map_or(String::new(), |r| r.name().to_string()),
    })
}

/// The shredding options of a file type's node.
fn shredding_from_node(node: &VariantFormatNode) -> Result<ShreddingOptions> {
    let mut shredding = ShreddingOptions::new();
    for column in &node.shredding {
        shredding = match &column.shredding {
            Some(t) => shredding.with_column_type(&column.column, arrow_type_from_proto(t)?)?,
            None => shredding.without_shredding(&column.column),
        };
    }
    if !node.inference.is_empty() {
        shredding = shredding.with_inference(InferenceRule::parse(&node.inference)?);
    }
    Ok(shredding)
}

fn staging_to_proto(staging: StagingText) -> messages::Staging {
    match staging {
        StagingText::File { staged, target } => {
            messages::Staging::File(messages::StagedFile { staged, target })
        }
        StagingText::Directory {
            staging,
            target,
            suffix,
        } => messages::Staging::Directory(messages::StagedDirectory {
            staging,
            target,
            suffix,
        }),
    }
}

fn staging_from_proto(staging: &messages::Staging) -> StagingText {
    match staging.clone() {
        messages::Staging::File(messages::StagedFile { staged, target }) => {
            StagingText::File { staged, target }
        }
        messages::Staging::Directory(messages::StagedDirectory {
            staging,
            target,
            suffix,
        }) => StagingText::Directory {
            staging,
            target,
            suffix,
        },
    }
}

/// An input's sample as a message: for its sampler with the names of the columns it
/// samples, for its sink without.
fn sample_node(sample: &InputSample, columns: &[String]) -> InputSampleNode {
    let (max_rows, max_bytes) = sample.bounds();
    InputSampleNode {
        id: sample.id(),
        width: sample.width() as u64,
        columns: columns.to_vec(),
        max_rows: max_rows as u64,
        max_bytes: max_bytes as u64,
        partition_heads: sample.of() == SampleOf::PartitionHeads,
    }
}

/// The sample `node` names: the one of this process under its id (its sampler and its sink,
/// decoded here, share it), or a new one.
fn sample_from_node(node: &InputSampleNode) -> Arc<InputSample> {
    InputSample::registered(
        node.id,
        usize::try_from(node.width).unwrap_or(usize::MAX),
        usize::try_from(node.max_rows).unwrap_or(usize::MAX),
        usize::try_from(node.max_bytes).unwrap_or(usize::MAX),
        if node.partition_heads {
            SampleOf::PartitionHeads
        } else {
            SampleOf::WholeInput
        },
    )
}

/// A JSON scan: DataFusion encodes the scan with its own `JsonSource` in place of ours (files,
/// schema, projection), our options travel beside.
/// `plan` (a decoded Parquet scan) with each file named in `selections` given its row selection.
fn with_row_selections(
    plan: Arc<dyn ExecutionPlan>,
    selections: &[FileRowSelection],
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(config) = (plan.downcast_ref::<DataSourceExec>())
        .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
    else {
        return internal_err!("row selections for a plan that is no file scan");
    };
    let mut config = config.clone();
    let by_path: std::collections::HashMap<&str, &[i64]> = (selections.iter())
        .map(|s| (s.path.as_str(), s.runs.as_slice()))
        .collect();
    let mut found = 0;
    for group in &mut config.file_groups {
        let files = group.files().iter().cloned().map(|file| {
            match by_path.get(file.object_meta.location.as_ref()) {
                Some(runs) => {
                    found += 1;
                    let selectors: Vec<RowSelector> = (runs.iter())
                        .map(|&n| match n < 0 {
                            true => RowSelector::skip(n.unsigned_abs() as usize),
                            false => RowSelector::select(n as usize),
                        })
                        .collect();
                    file.with_extension(ParquetRowSelection::new(RowSelection::from(selectors)))
                }
                None => file,
            }
        });
        *group = FileGroup::new(files.collect());
    }
    if found < selections.len() {
        return Err(corrupt(
            "a scan's row selections",
            "a selection names no file of the scan",
        ));
    }
    Ok(DataSourceExec::from_data_source(config))
}

/// The count of files a Delta table's log ruled out before a scan, in the scan's `metrics`.
#[cfg(feature = "delta")]
fn files_pruned_by_log(metrics: &ExecutionPlanMetricsSet) -> Option<u64> {
    let value = (metrics.clone_inner()).sum_by_name(crate::delta::FILES_PRUNED_BY_LOG)?;
    Some(value.as_usize() as u64)
}

#[cfg(not(feature = "delta"))]
fn files_pruned_by_log(_metrics: &ExecutionPlanMetricsSet) -> Option<u64> {
    None
}

/// Counts `pruned` files ruled out by a Delta table's log in the metrics of `scan` (a decoded
/// scan: the count was made where the plan was).
fn count_files_pruned_by_log(scan: &Arc<dyn ExecutionPlan>, pruned: u64) {
    #[cfg(feature = "delta")]
    if let Some(exec) = scan.downcast_ref::<DataSourceExec>()
        && let Some(config) = exec.data_source().downcast_ref::<FileScanConfig>()
    {
        datafusion::physical_plan::metrics::MetricBuilder::new(config.file_source.metrics())
            .global_counter(crate::delta::FILES_PRUNED_BY_LOG)
            .add(pruned as usize);
    }
    #[cfg(not(feature = "delta"))]
    let _ = (scan, pruned);
}

/// A Delta append's node, where `node` is one.
#[cfg(feature = "delta")]
fn encode_delta_append(node: &Arc<dyn ExecutionPlan>) -> Option<DeltaAppendNode> {
    let exec = node.downcast_ref::<crate::delta::DeltaAppendExec>()?;
    let (folder, root, read_version, protocol, partition_columns) = exec.parts();
    Some(DeltaAppendNode {
        root: root.to_string(),
        folder: folder.to_string(),
        read_version,
        protocol: protocol.to_string(),
        partition_columns: partition_columns.to_vec(),
    })
}

#[cfg(not(feature = "delta"))]
fn encode_delta_append(_node: &Arc<dyn ExecutionPlan>) -> Option<DeltaAppendNode> {
    None
}

/// The Delta append of `node` over `write`, its log reached through the object store the
/// decoding process's runtime has for the table.
#[cfg(feature = "delta")]
fn decode_delta_append(
    node: &DeltaAppendNode,
    write: Arc<dyn ExecutionPlan>,
    ctx: &TaskContext,
) -> Result<Arc<dyn ExecutionPlan>> {
    let root = url::Url::parse(&node.root).map_err(|e| corrupt("a Delta table's root", e))?;
    let protocol =
        serde_json::from_str(&node.protocol).map_err(|e| corrupt("a Delta protocol", e))?;
    let folder = datafusion::object_store::path::Path::parse(&node.folder)
        .map_err(|e| corrupt("a Delta write's folder", e))?;
    crate::delta::DeltaAppendExec::decoded(
        write,
        folder,
        root,
        node.read_version,
        (protocol, node.partition_columns.clone()),
        ctx.runtime_env().as_ref(),
    )
}

/// The checks of a Delta append's rows, where `node` is one.
#[cfg(feature = "delta")]
fn encode_delta_checks(
    node: &Arc<dyn ExecutionPlan>,
    codec: &dyn PhysicalExtensionCodec,
    converter: &dyn PhysicalProtoConverterExtension,
) -> Result<Option<DeltaChecksNode>> {
    let Some(exec) = node.downcast_ref::<crate::delta::DeltaChecksExec>() else {
        return Ok(None);
    };
    let (root, table, rules) = exec.parts();
    let rules = rules
        .iter()
        .map(|rule| {
            Ok(messages::DeltaRuleNode {
                kind: rule.kind.as_str().to_string(),
                name: rule.name.clone(),
                sql: rule.sql.clone(),
                expr: Some(converter.physical_expr_to_proto(&rule.expr, codec)?),
            })
        })
        .collect::<Result<_>>()?;
    Ok(Some(DeltaChecksNode {
        root: root.to_string(),
        table: Some(table.as_ref().try_into()?),
        rules,
    }))
}

#[cfg(not(feature = "delta"))]
fn encode_delta_checks(
    _node: &Arc<dyn ExecutionPlan>,
    _codec: &dyn PhysicalExtensionCodec,
    _converter: &dyn PhysicalProtoConverterExtension,
) -> Result<Option<DeltaChecksNode>> {
    Ok(None)
}

/// The checks of `node` over `input`.
#[cfg(feature = "delta")]
fn decode_delta_checks(
    node: &DeltaChecksNode,
    input: Arc<dyn ExecutionPlan>,
    ctx: &TaskContext,
    codec: &dyn PhysicalExtensionCodec,
    converter: &dyn PhysicalProtoConverterExtension,
) -> Result<Arc<dyn ExecutionPlan>> {
    let root = url::Url::parse(&node.root).map_err(|e| corrupt("a Delta table's root", e))?;
    let table: datafusion::arrow::datatypes::Schema =
        required(&node.table, "a Delta table's columns")?.try_into()?;
    let decode_ctx = PhysicalPlanDecodeContext::new(ctx, codec);
    let schema = input.schema();
    let rules = node
        .rules
        .iter()
        .map(|rule| {
            let Some(kind) = crate::delta::RuleKind::parse(&rule.kind) else {
                return Err(corrupt("a Delta rule's kind", &rule.kind));
            };
            let expr = required(&rule.expr, "a Delta rule's expression")?;
            Ok(crate::delta::Rule {
                kind,
                name: rule.name.clone(),
                sql: rule.sql.clone(),
                expr: converter.proto_to_physical_expr(expr, &schema, &decode_ctx)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Arc::new(crate::delta::DeltaChecksExec::new(
        input,
        root,
        Arc::new(table),
        rules,
    )))
}

/// An expression of ours, where `node` is one.
#[cfg(feature = "delta")]
fn encode_expr(node: &Arc<dyn PhysicalExpr>) -> Result<Option<variant_expr_node::Kind>> {
    let Some(renamed) = node.downcast_ref::<crate::delta::RenamedFields>() else {
        return Ok(None);
    };
    let field = protobuf::Field::try_from(renamed.field().as_ref())?;
    Ok(Some(variant_expr_node::Kind::RenamedFields(
        messages::RenamedFieldsNode { field: Some(field) },
    )))
}

#[cfg(not(feature = "delta"))]
fn encode_expr(_node: &Arc<dyn PhysicalExpr>) -> Result<Option<variant_expr_node::Kind>> {
    Ok(None)
}

/// The expression `kind` over `inputs` (its children).
#[cfg_attr(not(feature = "delta"), allow(unused_variables))]
fn decode_expr(
    kind: variant_expr_node::Kind,
    inputs: &[Arc<dyn PhysicalExpr>],
) -> Result<Arc<dyn PhysicalExpr>> {
    match kind {
        #[cfg(feature = "delta")]
        variant_expr_node::Kind::RenamedFields(node) => {
            let (Some(field), [child]) = (node.field, inputs) else {
                return Err(corrupt("renamed fields", "not one field over one input"));
            };
            let field = datafusion::arrow::datatypes::Field::try_from(&field)?;
            Ok(Arc::new(crate::delta::RenamedFields::new(
                Arc::clone(child),
                Arc::new(field),
            )))
        }
        #[cfg(not(feature = "delta"))]
        variant_expr_node::Kind::RenamedFields(_) => {
            not_impl_err!("a Delta column's renamed fields need the feature `delta`")
        }
    }
}

fn encode_json_scan(
    config: &FileScanConfig,
    source: &VariantJsonSource,
    codec: &dyn PhysicalExtensionCodec,
    converter: &dyn PhysicalProtoConverterExtension,
) -> Result<JsonScanNode> {
    let mut plain = config.clone();
    let mut json: Arc<dyn FileSource> = Arc::new(JsonSource::new(source.table_schema().clone()));
    if let Some(projection) = source.projection()
        && let Some(projected) = json.try_pushdown_projection(projection)?
    {
        json = projected;
    }
    plain.file_source = json;
    let plain: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(plain);
    Ok(JsonScanNode {
        scan: Some(converter.execution_plan_to_proto(&plain, codec)?),
        options: Some(table::encode_json_options(source.options())),
    })
}

/// The scan [`encode_json_scan`] wrote, reading with the receiving session's memory pool.
fn decode_json_scan(
    node: &JsonScanNode,
    ctx: &TaskContext,
    codec: &dyn PhysicalExtensionCodec,
    converter: &dyn PhysicalProtoConverterExtension,
) -> Result<Arc<dyn ExecutionPlan>> {
    let options = table::decode_json_options(required(&node.options, "a JSON scan's options")?)?;
    let decode_ctx = PhysicalPlanDecodeContext::new(ctx, codec);
    let plan =
        converter.proto_to_execution_plan(required(&node.scan, "a JSON scan")?, &decode_ctx)?;
    let Some(config) = plan
        .downcast_ref::<DataSourceExec>()
        .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
    else {
        return Err(corrupt("a JSON scan", "not a file scan"));
    };
    let mut config = config.clone();
    let mut source: Arc<dyn FileSource> = Arc::new(
        VariantJsonSource::new(Arc::new(options), config.file_source.table_schema().clone())
            .with_pool(Arc::clone(&ctx.runtime_env().memory_pool)),
    );
    if let Some(projection) = config.file_source.projection()
        && let Some(projected) = source.try_pushdown_projection(projection)?
    {
        source = projected;
    }
    config.file_source = source;
    Ok(DataSourceExec::from_data_source(config))
}

/// How decoded nodes get their children: with their properties computed again.
const RECOMPUTE: ReplaceChildrenOptions =
    ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);

/// The physical codec: our scan, sink and staging (see the module);
/// what is not ours goes to the codec it wraps, if any.
#[derive(Debug, Default, Clone)]
pub struct VariantPhysicalCodec {
    inner: Option<Arc<dyn PhysicalExtensionCodec>>,
}

/// The first byte of what our codecs write for a plan node, an expression or a file type:
/// whether the rest is ours or the wrapped codec's.
const OF_INNER_CODEC: u8 = 0;
const OURS: u8 = 1;
/// The first byte of a table provider of ours that is a JSON table ([`VariantJsonTable`]).
const OURS_JSON: u8 = 2;

impl VariantPhysicalCodec {
    /// Ours, passing what is not ours to `inner` (an application's codec).
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        Self { inner: Some(inner) }
    }

    fn encode_scan(
        &self,
        config: &FileScanConfig,
        source: &VariantParquetSource,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<VariantScanNode> {
        // The scan with DataFusion's source, which DataFusion encodes. The adapter travels as a
        // flag, "ours, over DataFusion's default" (its state is made per file, at execution);
        // another one (an application's, on the table or inside ours) cannot travel.
        let foreign =
            || not_impl_err!("a scan with an application's expression adapter cannot be encoded");
        let ours = match (source.adapter(), &config.expr_adapter_factory) {
            (None, None) => false,
            (Some(ours), Some(used))
                if std::ptr::addr_eq(Arc::as_ptr(ours), Arc::as_ptr(used))
                    && ours.wraps_default() =>
            {
                true
            }
            _ => return foreign(),
        };
        // A file's row selection (a Delta table's deletion vector) is not in DataFusion's
        // encoding: it travels beside it; an access plan (an application's) cannot travel.
        let files = config.file_groups.iter().flat_map(|g| g.files());
        if files
            .clone()
            .any(|f| f.extension::<ParquetAccessPlan>().is_some())
        {
            return not_impl_err!("a scan of files with Parquet access plans cannot be encoded");
        }
        let row_selections = files
            .filter_map(|f| {
                let selection = f.extension::<ParquetRowSelection>()?;
                let runs = (selection.selection().iter())
                    .map(|s| {
                        let n = s.row_count as i64;
                        if s.skip { -n } else { n }
                    })
                    .collect();
                Some(FileRowSelection {
                    path: f.object_meta.location.to_string(),
                    runs,
                })
            })
            .collect();
        let mut plain = config.clone();
        plain.file_source = Arc::new(source.inner().clone());
        plain.expr_adapter_factory = None;
        let plain: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(plain);
        let skip = source.skip_files();
        Ok(VariantScanNode {
            scan: Some(converter.execution_plan_to_proto(&plain, self)?),
            variant_adapter: ours,
            skip_corrupt_files: skip.corrupt,
            skip_missing_files: skip.missing,
            row_selections,
            files_pruned_by_log: files_pruned_by_log(source.metrics()),
        })
    }

    fn decode_scan(
        &self,
        node: &VariantScanNode,
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        // the scan's own projection is decoded here rather than by DataFusion, which would
        // drop the metadata of its function calls' results (`s['v']` of a nested variant)
        let mut scan = required(&node.scan, "scan")?.clone();
        // (a Parquet file scan, checked before it is decoded: no plan of ours nests in it)
        if !matches!(
            scan.physical_plan_type,
            Some(protobuf::physical_plan_node::PhysicalPlanType::ParquetScan(
                _
            ))
        ) {
            return Err(corrupt("a variant scan", "it embeds no Parquet file scan"));
        }
        let projection = take_scan_projection(&mut scan)?;
        let mut plan = converter.proto_to_execution_plan(&scan, &decode_ctx)?;
        if !node.row_selections.is_empty() {
            plan = with_row_selections(plan, &node.row_selections)?;
        }
        if let Some((projection, schema)) = projection {
            let exprs = projection
                .projections
                .iter()
                .map(|p| {
                    let expr = required(&p.expr, "a projected expression")?;
                    let expr = converter.proto_to_physical_expr(expr, &schema, &decode_ctx)?;
                    Ok(ProjectionExpr::new(
                        restore::restore_expr(expr, &schema)?.data,
                        p.alias.clone(),
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            plan = with_scan_projection(plan, ProjectionExprs::new(exprs))?;
        }
        let adapter = node
            .variant_adapter
            .then(|| Arc::new(VariantExprAdapterFactory::over_default()));
        let skip = SkipFiles {
            corrupt: node.skip_corrupt_files,
            missing: node.skip_missing_files,
        };
        let Some(scan) = with_variant_source(plan, adapter, skip) else {
            return internal_err!("a variant scan that is no Parquet file scan");
        };
        if let Some(pruned) = node.files_pruned_by_log {
            count_files_pruned_by_log(&scan, pruned);
        }
        Ok(scan)
    }

    fn encode_staged_sink(
        &self,
        exec: &DataSinkExec,
        staged: &StagedSink,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<StagedSinkNode> {
        let (inner, write) = staged.parts();
        // the input travels once, as the outer node's input
        let placeholder: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(exec.input().schema()));
        let inner = Arc::clone(inner).replace_children(vec![placeholder], RECOMPUTE)?;
        let (store, staging) = write.to_text();
        Ok(StagedSinkNode {
            inner: Some(converter.execution_plan_to_proto(&inner, self)?),
            store,
            staging: Some(staging_to_proto(staging)),
        })
    }

    fn decode_staged_sink(
        &self,
        node: &StagedSinkNode,
        input: Arc<dyn ExecutionPlan>,
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let inner = converter
            .proto_to_execution_plan(required(&node.inner, "staged sink")?, &decode_ctx)?;
        let staging = staging_from_proto(required(&node.staging, "staging")?);
        let write = StagedWrite::from_text(&node.store, &staging)?;
        write.wrap(inner)?.replace_children(vec![input], RECOMPUTE)
    }

    fn encode_sink(
        &self,
        exec: &DataSinkExec,
        sink: &VariantParquetSink,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<VariantSinkNode> {
        let sort_order = exec
            .sort_order()
            .iter()
            .flat_map(|order| order.iter())
            .map(|requirement| {
                // an unspecified order is the default, as the sink reads it
                let options = requirement.options.unwrap_or_default();
                Ok(protobuf::PhysicalSortExprNode {
                    expr: Some(Box::new(
                        converter.physical_expr_to_proto(&requirement.expr, self)?,
                    )),
                    asc: !options.descending,
                    nulls_first: options.nulls_first,
                })
            })
            .collect::<Result<_>>()?;
        let auto = sink.auto_shredding().map(|auto| AutoShreddingNode {
            columns: auto.columns.iter().map(|&c| c as u64).collect(),
            sample_rows: auto.sample_rows as u64,
            sample_bytes: auto.sample_bytes as u64,
            max_columns: auto.limits.max_columns as u64,
            max_depth: auto.limits.max_depth as u64,
            rule: auto.limits.rule.name().to_string(),
            sample: auto.sample.as_deref().map(|s| sample_node(s, &[])),
        });
        let keys = sink.variant_order();
        Ok(VariantSinkNode {
            config: Some(sink.config().try_into()?),
            parquet_options: Some(parquet_options_to_proto(sink.parquet_options())),
            sort_order,
            auto,
            variant_order: if keys.is_empty() {
                String::new()
            } else {
                variant_order::encode(keys)
            },
        })
    }

    fn decode_sink(
        &self,
        node: &VariantSinkNode,
        input: Arc<dyn ExecutionPlan>,
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let schema = input.schema();
        let sort = node
            .sort_order
            .iter()
            .map(|sort| {
                let expr = required(&sort.expr, "sort expression")?;
                Ok(PhysicalSortExpr {
                    expr: converter.proto_to_physical_expr(expr, &schema, &decode_ctx)?,
                    options: SortOptions {
                        descending: !sort.asc,
                        nulls_first: sort.nulls_first,
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let sort_order = LexRequirement::new(sort.into_iter().map(Into::into));
        let config: FileSinkConfig = required(&node.config, "sink configuration")?.try_into()?;
        let options = required(&node.parquet_options, "Parquet options")?
            .try_into()
            .map_err(|e| corrupt("Parquet options", e))?;
        let output = Arc::clone(config.output_schema());
        let mut sink = VariantParquetSink::new(config, options, sort_order.as_ref());
        if !node.variant_order.is_empty() {
            let keys = variant_order::decode(&node.variant_order)
                .ok_or_else(|| corrupt("order by variant paths", &node.variant_order))?;
            sink = sink.with_variant_order(keys);
        }
        if let Some(auto) = &node.auto {
            let variant_column = |&c: &u64| {
                usize::try_from(c)
                    .ok()
                    .and_then(|c| output.fields().get(c))
                    // as `ShreddingOptions::automatic` picks them
                    .is_some_and(|f| is_unshredded_variant(f))
            };
            if !auto.columns.iter().all(variant_column) {
                return internal_err!("automatic shredding of a column that is no variant");
            }
            sink = sink.with_auto_shredding(AutoShredding {
                columns: auto.columns.iter().map(|&c| c as usize).collect(),
                sample_rows: auto.sample_rows as usize,
                sample_bytes: auto.sample_bytes as usize,
                limits: InferLimits {
                    max_columns: auto.max_columns as usize,
                    max_depth: auto.max_depth as usize,
                    // (a plan from before the rule travelled: Spark's, which it then had)
                    rule: if auto.rule.is_empty() {
                        InferenceRule::Spark
                    } else {
                        InferenceRule::parse(&auto.rule)?
                    },
                },
                sample: auto.sample.as_ref().map(sample_from_node),
            });
        }
        Ok(Arc::new(DataSinkExec::new(
            input,
            Arc::new(sink),
            sort_order,
        )))
    }
}

impl PhysicalExtensionCodec for VariantPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let buf = match (buf.split_first(), &self.inner) {
            (Some((&OURS, rest)), _) => rest,
            (Some((&OF_INNER_CODEC, rest)), Some(inner)) => {
                return inner.try_decode(rest, inputs, ctx, converter);
            }
            _ => return internal_err!("cannot decode a plan node: unknown tag"),
        };
        let _nested = NestedDecode::enter()?;
        let node = VariantPlanNode::decode(buf).map_err(|e| corrupt("a variant plan node", e))?;
        let input = || match inputs {
            [input] => Ok(Arc::clone(input)),
            _ => internal_err!("a variant sink with {} inputs", inputs.len()),
        };
        match required(&node.kind, "variant plan node")? {
            Kind::Scan(scan) => self.decode_scan(scan, ctx, converter),
            Kind::Staged(staged) => self.decode_staged_sink(staged, input()?, ctx, converter),
            Kind::Sink(sink) => self.decode_sink(sink, input()?, ctx, converter),
            Kind::JsonScan(scan) => decode_json_scan(scan, ctx, self, converter),
            #[cfg(feature = "delta")]
            Kind::DeltaAppend(node) => decode_delta_append(node, input()?, ctx),
            #[cfg(not(feature = "delta"))]
            Kind::DeltaAppend(_) => not_impl_err!("a Delta append needs the feature `delta`"),
            #[cfg(feature = "delta")]
            Kind::DeltaChecks(node) => decode_delta_checks(node, input()?, ctx, self, converter),
            #[cfg(not(feature = "delta"))]
            Kind::DeltaChecks(_) => not_impl_err!("a Delta append needs the feature `delta`"),
            Kind::Sample(node) => {
                let input = input()?;
                let sample = sample_from_node(node);
                Ok(
                    match SampleExec::try_new(Arc::clone(&input), sample, node.columns.clone()) {
                        Some(exec) => Arc::new(exec),
                        None => input,
                    },
                )
            }
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let kind = if let Some(exec) = node.downcast_ref::<DataSourceExec>()
            && let Some(config) = exec.data_source().downcast_ref::<FileScanConfig>()
            && let Some(source) = config.file_source.downcast_ref::<VariantParquetSource>()
        {
            Kind::Scan(self.encode_scan(config, source, converter)?)
        } else if let Some(exec) = node.downcast_ref::<SampleExec>() {
            Kind::Sample(sample_node(exec.sample(), exec.names()))
        } else if let Some(exec) = node.downcast_ref::<DataSourceExec>()
            && let Some(config) = exec.data_source().downcast_ref::<FileScanConfig>()
            && let Some(source) = config.file_source.downcast_ref::<VariantJsonSource>()
        {
            Kind::JsonScan(encode_json_scan(config, source, self, converter)?)
        } else if let Some(exec) = node.downcast_ref::<DataSinkExec>()
            && let Some(staged) = exec.sink().downcast_ref::<StagedSink>()
        {
            Kind::Staged(self.encode_staged_sink(exec, staged, converter)?)
        } else if let Some(exec) = node.downcast_ref::<DataSinkExec>()
            && let Some(sink) = exec.sink().downcast_ref::<VariantParquetSink>()
        {
            Kind::Sink(self.encode_sink(exec, sink, converter)?)
        } else if let Some(node) = encode_delta_append(&node) {
            Kind::DeltaAppend(node)
        } else if let Some(node) = encode_delta_checks(&node, self, converter)? {
            Kind::DeltaChecks(node)
        } else if let Some(inner) = &self.inner {
            return tagged(buf, OF_INNER_CODEC, |buf| {
                inner.try_encode(node, buf, converter)
            });
        } else {
            return not_impl_err!("VariantPhysicalCodec does not encode {}", node.name());
        };
        buf.push(OURS);
        VariantPlanNode { kind: Some(kind) }
            .encode(buf)
            .map_err(|e| corrupt("a variant plan node", e))
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match (udfs::decode_udf(name, buf)?, &self.inner) {
            (Some(udf), _) => Ok(udf),
            (None, Some(inner)) => inner.try_decode_udf(name, buf),
            (None, None) => {
                not_impl_err!("VariantPhysicalCodec does not decode the function {name}")
            }
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if !udfs::encode_udf(node, buf)?
            && let Some(inner) = &self.inner
        {
            inner.try_encode_udf(node, buf)?;
        }
        Ok(())
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        match &self.inner {
            Some(inner) => inner.try_decode_udaf(name, buf),
            None => not_impl_err!("VariantPhysicalCodec does not decode the aggregate {name}"),
        }
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner
            .as_ref()
            .map_or(Ok(()), |inner| inner.try_encode_udaf(node, buf))
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        match &self.inner {
            Some(inner) => inner.try_decode_udwf(name, buf),
            None => {
                not_impl_err!("VariantPhysicalCodec does not decode the window function {name}")
            }
        }
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner
            .as_ref()
            .map_or(Ok(()), |inner| inner.try_encode_udwf(node, buf))
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        // ours: a Delta column's fields renamed (the shredding before the sink is a function call)
        if let Ok(VariantExprNode { kind: Some(kind) }) = VariantExprNode::decode(buf) {
            return decode_expr(kind, inputs);
        }
        match &self.inner {
            Some(inner) => inner.try_decode_expr(buf, inputs, ctx),
            None => not_impl_err!("VariantPhysicalCodec does not decode this expression"),
        }
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> Result<()> {
        if let Some(kind) = encode_expr(node)? {
            let node = VariantExprNode { kind: Some(kind) };
            return node
                .encode(buf)
                .map_err(|e| corrupt("a variant expression", e));
        }
        match &self.inner {
            Some(inner) => inner.try_encode_expr(node, buf, ctx),
            None => not_impl_err!("VariantPhysicalCodec does not encode {node}"),
        }
    }
}

/// The logical codec: the `parquet` file type with its shredding options, tables over Parquet
/// files ([`VariantParquetTable`]), and our functions' planned state; everything else goes to the
/// codec it wraps.
#[derive(Debug)]
pub struct VariantLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl Default for VariantLogicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl VariantLogicalCodec {
    /// Ours, passing what is not ours to `inner`.
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        Self { inner }
    }
}

impl LogicalExtensionCodec for VariantLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.split_first() {
            Some((&OURS, rest)) => {
                let node = VariantTableNode::decode(rest).map_err(|e| corrupt("a table", e))?;
                table::decode_table(&node, schema, ctx, self)
            }
            Some((&OURS_JSON, rest)) => {
                let node = JsonTableNode::decode(rest).map_err(|e| corrupt("a table", e))?;
                table::decode_json_table(&node)
            }
            Some((&OF_INNER_CODEC, rest)) => self
                .inner
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            _ => internal_err!("cannot decode a table: unknown tag"),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(table) = node.downcast_ref::<VariantJsonTable>() {
            buf.push(OURS_JSON);
            return table::encode_json_table(table)
                .encode(buf)
                .map_err(|e| corrupt("a table", e));
        }
        let Some(table) = node.downcast_ref::<VariantParquetTable>() else {
            return tagged(buf, OF_INNER_CODEC, |buf| {
                self.inner.try_encode_table_provider(table_ref, node, buf)
            });
        };
        let message = table::encode_table(table, self)?;
        buf.push(OURS);
        message.encode(buf).map_err(|e| corrupt("a table", e))
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        match buf.split_first() {
            Some((&OURS, rest)) => {
                let node =
                    VariantFormatNode::decode(rest).map_err(|e| corrupt("a file type", e))?;
                let mut factory = match &node.parquet_options {
                    Some(options) => VariantParquetFormatFactory::new_with_options(
                        options
                            .try_into()
                            .map_err(|e| corrupt("Parquet options", e))?,
                    ),
                    None => VariantParquetFormatFactory::new(),
                };
                factory = factory.with_shredding(shredding_from_node(&node)?);
                Ok(Arc::new(factory))
            }
            Some((&OF_INNER_CODEC, rest)) => self.inner.try_decode_file_format(rest, ctx),
            _ => internal_err!("cannot decode a file type: unknown tag"),
        }
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        let Some(factory) = node.downcast_ref::<VariantParquetFormatFactory>() else {
            return tagged(buf, OF_INNER_CODEC, |buf| {
                self.inner.try_encode_file_format(buf, node)
            });
        };
        no_application_adapter(factory.expr_adapter_factory(), "a Parquet file type")?;
        let parquet_options = factory.parquet_options().map(parquet_options_to_proto);
        let node = format_node(parquet_options, factory.shredding())?;
        buf.push(OURS);
        node.encode(buf).map_err(|e| corrupt("a file type", e))
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match udfs::decode_udf(name, buf)? {
            Some(udf) => Ok(udf),
            None => self.inner.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if !udfs::encode_udf(node, buf)? {
            self.inner.try_encode_udf(node, buf)?;
        }
        Ok(())
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// Writes `tag` and then what `encode` writes into `buf`; on an error `buf` is left as it was
/// (a codec composed with ours may reuse it to try another).
fn tagged(
    buf: &mut Vec<u8>,
    tag: u8,
    encode: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    let start = buf.len();
    buf.push(tag);
    let encoded = encode(buf);
    if encoded.is_err() {
        buf.truncate(start);
    }
    encoded
}
