//! [`VariantParquetSource`]: DataFusion's `ParquetSource` with the per-file work that variant
//! columns need.
//!
//! - **Filters**: a filter on `variant_get(v, ..)` references the whole variant column, which
//!   `ParquetSource` does not accept; this source adds such conjuncts to the scan's predicate
//!   (the filter above the scan keeps them too, so results never depend on them). Per file, the
//!   expression adapter rewrites them into reads of shredded leaves, so with
//!   `datafusion.execution.parquet.pushdown_filters` they become Parquet row filters that read
//!   only those leaves.
//! - **Per-file facts**: before DataFusion's opener plans a file, its footer (through the file
//!   metadata cache) tells which residual `value` columns of a shredded variant hold nothing in
//!   the whole file; paths then read neither them nor `metadata`.
//! - **Pruning**: row groups where the predicate on shredded leaves is false for every row are
//!   skipped, and in the others the pages where it is (see [`super::pruning`]).
use std::fmt;
use std::sync::Arc;

use std::collections::HashMap;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, plan_err};
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::parquet::{
    DefaultParquetFileReaderFactory, ParquetAccessPlan, ParquetFileReaderFactory,
};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSource, ParquetSource};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::ObjectStore;
use datafusion::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use datafusion::parquet::file::metadata::PageIndexPolicy;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::sort_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::sort_pushdown::SortOrderPushdownResult;
use datafusion::physical_plan::{DisplayFormatType, ExecutionPlan};
use datafusion_datasource::PartitionedFile;
use datafusion_datasource::morsel::{MorselPlan, MorselPlanner, Morselizer};

use super::expr_adapter::{ShreddedReadMetrics, VariantExprAdapterFactory, variant_column_names};
use super::facts::FileFacts;
use super::pruning::{VariantPruning, variant_path_call};
use super::shredded_get::{ShreddedRead, clipped_type};
use crate::codec::VariantPath;
use crate::parquet::general::file_errors::{FileErrorMorselizer, SkipFiles, SkippedFiles};
use crate::parquet::general::interval::{IntervalReaderFactory, interval_columns};
use crate::parquet::is_encrypted;

/// DataFusion's [`ParquetSource`] plus the variant work described in the module documentation.
/// [`VariantParquetFormat`](crate::parquet::VariantParquetFormat) puts it on every scan it plans.
#[derive(Debug, Clone)]
pub struct VariantParquetSource {
    inner: ParquetSource,
    /// The expression adapter factory the format installed on the scan; the per-file work is
    /// done only when the scan uses it (not when a table configured another one).
    adapter: Option<Arc<VariantExprAdapterFactory>>,
    /// Which unreadable files the scan skips (see [`crate::parquet::general::file_errors`]); the others' errors
    /// name them.
    skip: SkipFiles,
    /// The files this scan skipped, shared by its partitions and by the copies of this source
    /// its planning makes.
    skipped: SkippedFiles,
}

impl VariantParquetSource {
    /// Wraps `inner`, for a scan whose expression adapter factory is `adapter`.
    pub fn new(inner: ParquetSource, adapter: Option<Arc<VariantExprAdapterFactory>>) -> Self {
        Self {
            inner,
            adapter,
            skip: SkipFiles::default(),
            skipped: SkippedFiles::default(),
        }
    }

    /// This source over `inner` (a changed copy of its own), with everything else it has.
    fn over(&self, inner: ParquetSource) -> Self {
        Self {
            inner,
            adapter: self.adapter.clone(),
            skip: self.skip,
            skipped: self.skipped.clone(),
        }
    }

    /// This source, skipping the unreadable files `skip` says.
    pub fn with_skip_files(mut self, skip: SkipFiles) -> Self {
        self.skip = skip;
        self
    }

    /// Which unreadable files the scan skips.
    pub fn skip_files(&self) -> SkipFiles {
        self.skip
    }

    /// The wrapped source.
    pub fn inner(&self) -> &ParquetSource {
        &self.inner
    }

    /// The expression adapter factory the per-file work runs with, if any.
    pub fn adapter(&self) -> Option<&Arc<VariantExprAdapterFactory>> {
        self.adapter.as_ref()
    }

    /// `source` wrapped again when it is a `ParquetSource` (what the wrapped source's methods
    /// return), as it is otherwise.
    fn rewrap(&self, source: Arc<dyn FileSource>) -> Arc<dyn FileSource> {
        match source.downcast_ref::<ParquetSource>() {
            Some(parquet) => Arc::new(self.over(parquet.clone())),
            None => source,
        }
    }

    /// The variant paths of the projection and the predicate (`column path`), without repeats,
    /// in the order met.
    fn variant_paths(&self) -> Vec<String> {
        let variants = variant_column_names(self.inner.table_schema().table_schema());
        let mut paths: Vec<String> = vec![];
        let exprs = self
            .inner
            .projection()
            .into_iter()
            .flat_map(|p| p.iter().map(|e| Arc::clone(&e.expr)))
            .chain(self.inner.filter());
        for expr in exprs {
            let _ = expr.apply(|e| {
                if let Some((column, path)) = variant_path_call(e)
                    && variants.iter().any(|v| v == column.name())
                {
                    let text = format!("{} {path}", column.name());
                    if !paths.contains(&text) {
                        paths.push(text);
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            });
        }
        paths
    }

    /// The wrapped source, opening files through an [`IntervalReaderFactory`] when the table
    /// has `INTERVAL` columns and the scan converts them with our adapter (not for encrypted
    /// files: a footer rebuilt without its decryptor could not be read).
    fn opened_through(
        &self,
        store: &Arc<dyn ObjectStore>,
        config: &FileScanConfig,
    ) -> ParquetSource {
        let columns = interval_columns(self.inner.table_schema().table_schema());
        if columns.is_empty() || !self.per_file_work() || self.our_adapter(config).is_none() {
            return self.inner.clone();
        }
        let factory = IntervalReaderFactory::new(reader_factory(&self.inner, store), columns);
        self.inner
            .clone()
            .with_parquet_file_reader_factory(Arc::new(factory))
    }

    /// Whether the per-file work can run: not for encrypted files (their footers need the
    /// decryption properties the opener has).
    fn per_file_work(&self) -> bool {
        !is_encrypted(self.inner.table_parquet_options())
    }

    /// The expression adapter factory the format installed, when `config`'s scan uses it (not
    /// when a table configured another one).
    fn our_adapter(&self, config: &FileScanConfig) -> Option<&Arc<VariantExprAdapterFactory>> {
        match (&self.adapter, &config.expr_adapter_factory) {
            (Some(ours), Some(used)) if std::ptr::addr_eq(Arc::as_ptr(ours), Arc::as_ptr(used)) => {
                Some(ours)
            }
            _ => None,
        }
    }

    /// Our morselizer, which plans each file with its facts (see the module documentation), or
    /// the wrapped source's where there is no per-file work.
    fn variant_morselizer(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Box<dyn Morselizer>> {
        let adapter = self.our_adapter(base_config).map(|a| a.as_ref().clone());
        let table_schema = self.inner.table_schema().table_schema();
        let pruning = VariantPruning::try_new(self.inner.filter().as_ref(), table_schema)?;
        let source = self.opened_through(&object_store, base_config);
        let Some(adapter) = adapter.filter(|_| self.per_file_work()) else {
            return source.create_morselizer(object_store, base_config, partition);
        };
        if variant_column_names(table_schema).is_empty() {
            return source.create_morselizer(object_store, base_config, partition);
        }
        let mut template = base_config.clone();
        template.file_groups = vec![];
        let reader_factory = reader_factory(&source, &object_store);
        let metrics = self.inner.metrics();
        Ok(Box::new(VariantMorselizer {
            shared: Arc::new(Shared {
                source,
                object_store,
                template,
                partition,
                adapter,
                pruning,
                reader_factory,
                metrics: metrics.clone(),
                row_groups_pruned: MetricBuilder::new(metrics)
                    .global_counter("variant_row_groups_pruned"),
                page_rows_pruned: MetricBuilder::new(metrics)
                    .global_counter("variant_page_rows_pruned"),
                read_metrics: ShreddedReadMetrics::new(metrics),
            }),
        }))
    }
}

impl FileSource for VariantParquetSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn datafusion::datasource::physical_plan::FileOpener>> {
        self.opened_through(&object_store, base_config)
            .create_file_opener(object_store, base_config, partition)
    }

    /// The variant morselizer (or the wrapped source's), its files' errors naming them or
    /// skipping them (see [`crate::parquet::general::file_errors`]).
    fn create_morselizer(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Box<dyn Morselizer>> {
        let inner = self.variant_morselizer(object_store, base_config, partition)?;
        Ok(Box::new(FileErrorMorselizer::new(
            inner,
            base_config.object_store_url.as_str(),
            self.skip,
            self.inner.metrics(),
            self.skipped.clone(),
        )))
    }

    fn table_schema(&self) -> &TableSchema {
        self.inner.table_schema()
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        self.rewrap(self.inner.with_batch_size(batch_size))
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.inner.filter()
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        self.inner.projection()
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        self.inner.metrics()
    }

    fn file_type(&self) -> &str {
        self.inner.file_type()
    }

    /// The Parquet source's details, then the variant paths this scan reads itself (from the
    /// shredded leaves of files that shred them): `variant_paths=[v $.a, v $.b.c]`.
    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.fmt_extra(t, f)?;
        for (skips, what) in [
            (self.skip.corrupt, "ignore_corrupt_files"),
            (self.skip.missing, "ignore_missing_files"),
        ] {
            match t {
                _ if !skips => {}
                DisplayFormatType::TreeRender => writeln!(f, "{what}=true")?,
                _ => write!(f, ", {what}=true")?,
            }
        }
        let paths = self.variant_paths();
        if paths.is_empty() {
            return Ok(());
        }
        match t {
            DisplayFormatType::TreeRender => writeln!(f, "variant_paths={}", paths.join(", ")),
            _ => write!(f, ", variant_paths=[{}]", paths.join(", ")),
        }
    }

    fn supports_repartitioning(&self) -> bool {
        self.inner.supports_repartitioning()
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> Result<Option<FileScanConfig>> {
        self.inner.repartitioned(
            target_partitions,
            repartition_file_min_size,
            output_ordering,
            config,
        )
    }

    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        let table_schema = Arc::clone(self.inner.table_schema().table_schema());
        let mut result = self.inner.try_pushdown_filters(filters.clone(), config)?;
        let mut source = match result.updated_node.take() {
            Some(updated) => match updated.downcast_ref::<ParquetSource>() {
                Some(parquet) => parquet.clone(),
                None => {
                    result.updated_node = Some(updated);
                    return Ok(result);
                }
            },
            None => self.inner.clone(),
        };
        // Filters on variant paths that the Parquet source did not take: into its predicate
        // (for the per-file rewrite, row filters and pruning); the parent keeps them.
        let mut added = vec![];
        for (filter, pushed) in filters.iter().zip(&result.filters) {
            if matches!(pushed, PushedDown::No)
                && super::pruning::reads_variant_paths_only(filter, &table_schema)
            {
                added.push(Arc::clone(filter));
            }
        }
        if !added.is_empty() {
            let predicate =
                datafusion::physical_expr::conjunction(source.filter().into_iter().chain(added));
            source = source.with_predicate(predicate);
        }
        result.updated_node = Some(Arc::new(self.over(source)));
        Ok(result)
    }

    fn try_pushdown_sort(
        &self,
        order: &[PhysicalSortExpr],
        eq_properties: &EquivalenceProperties,
    ) -> Result<SortOrderPushdownResult<Arc<dyn FileSource>>> {
        Ok(match self.inner.try_pushdown_sort(order, eq_properties)? {
            SortOrderPushdownResult::Exact { inner } => SortOrderPushdownResult::Exact {
                inner: self.rewrap(inner),
            },
            SortOrderPushdownResult::Inexact { inner } => SortOrderPushdownResult::Inexact {
                inner: self.rewrap(inner),
            },
            SortOrderPushdownResult::Unsupported => SortOrderPushdownResult::Unsupported,
        })
    }

    fn reorder_files(&self, files: Vec<PartitionedFile>) -> Vec<PartitionedFile> {
        self.inner.reorder_files(files)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        Ok(self
            .inner
            .try_pushdown_projection(projection)?
            .map(|s| self.rewrap(s)))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }
}

/// `config`, a scan over DataFusion's [`ParquetSource`] that an application built itself (a
/// lakehouse table provider, say), with the per-file work of our own tables: `variant_get` paths
/// on a column a file shreds read from the path's leaves only, filters on such paths pushed into
/// the scan (Parquet row filters with `pushdown_filters`), and row groups and pages pruned with
/// the leaves' statistics. Variant columns of another layout in a file than in the table are
/// reassembled. The scan's own expression adapter factory, if it has one, keeps adapting
/// everything else (ours wraps it); a scan that already has this work is returned as it is.
///
/// What it needs from the scan: the table schema declares each variant column as the
/// unshredded `arrow.parquet.variant` struct (`Struct{metadata, value}` with the extension
/// metadata, see [`crate::variant_array::variant_field`]), and the session has our functions
/// ([`crate::register_all`]), whose calls the scan recognises. Paths reach the scan through
/// DataFusion's projection pushdown, which does not cross a round-robin repartition: a scan with
/// no statistics that DataFusion repartitions that way reads whole columns (give the scan its
/// row counts, as lakehouse logs have them). See `tests/foreign_scan.rs`.
pub fn variant_scan(mut config: FileScanConfig) -> Result<FileScanConfig> {
    if config
        .file_source
        .downcast_ref::<VariantParquetSource>()
        .is_some()
    {
        return Ok(config);
    }
    let Some(parquet) = config.file_source.downcast_ref::<ParquetSource>().cloned() else {
        return plan_err!(
            "variant_scan: the scan reads {} files through another source than DataFusion's \
             ParquetSource",
            config.file_source.file_type()
        );
    };
    let adapter = Arc::new(match config.expr_adapter_factory.take() {
        Some(theirs) => VariantExprAdapterFactory::new(theirs),
        None => VariantExprAdapterFactory::over_default(),
    });
    config.expr_adapter_factory = Some(Arc::clone(&adapter) as _);
    config.file_source = Arc::new(VariantParquetSource::new(parquet, Some(adapter)));
    Ok(config)
}

/// `plan` with [`variant_scan`]'s work on every scan over DataFusion's [`ParquetSource`] in it:
/// for a table provider whose `scan` returns a plan of its own making, wrap its answer.
pub fn with_variant_scans(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let Some(config) = node
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
            .filter(|config| config.file_source.downcast_ref::<ParquetSource>().is_some())
        else {
            return Ok(Transformed::no(node));
        };
        let config = variant_scan(config.clone())?;
        Ok(Transformed::yes(
            DataSourceExec::from_data_source(config) as Arc<dyn ExecutionPlan>
        ))
    })
    .data()
}

/// The factory `source` opens files with: its own, or DataFusion's default over `store`.
fn reader_factory(
    source: &ParquetSource,
    store: &Arc<dyn ObjectStore>,
) -> Arc<dyn ParquetFileReaderFactory> {
    source
        .parquet_file_reader_factory()
        .cloned()
        .unwrap_or_else(|| Arc::new(DefaultParquetFileReaderFactory::new(Arc::clone(store))))
}

/// What every file of one partition's scan shares.
#[derive(Debug)]
struct Shared {
    source: ParquetSource,
    object_store: Arc<dyn ObjectStore>,
    /// The scan's configuration without its files: each file gets a copy with its own adapter.
    template: FileScanConfig,
    partition: usize,
    adapter: VariantExprAdapterFactory,
    pruning: Option<VariantPruning>,
    reader_factory: Arc<dyn ParquetFileReaderFactory>,
    metrics: ExecutionPlanMetricsSet,
    row_groups_pruned: Count,
    /// Rows of the kept row groups skipped by the page index of the paths' leaves.
    page_rows_pruned: Count,
    read_metrics: ShreddedReadMetrics,
}

impl Shared {
    /// The variant columns of a file some projected path of which goes through a shredded
    /// array, each with its type clipped to what all the projected paths on it need (see
    /// [`clipped_type`]).
    fn clipped_columns(
        &self,
        file_schema: &Schema,
        facts: &FileFacts,
    ) -> HashMap<String, DataType> {
        let mut paths: HashMap<String, Vec<VariantPath>> = HashMap::new();
        for expr in self.source.projection().into_iter().flat_map(|p| p.iter()) {
            let _ = expr.expr.apply(|e| {
                if let Some((column, path)) = variant_path_call(e) {
                    paths
                        .entry(column.name().to_string())
                        .or_default()
                        .push(path.clone());
                }
                Ok(TreeNodeRecursion::Continue)
            });
        }
        let mut clips = HashMap::new();
        for (column, paths) in paths {
            let Ok(field) = file_schema.field_with_name(&column) else {
                continue;
            };
            let reads: Option<Vec<ShreddedRead>> = paths
                .iter()
                .map(|p| ShreddedRead::plan(field.data_type(), p, facts.column(&column)))
                .collect();
            let Some(reads) = reads else {
                continue;
            };
            if !reads.iter().any(ShreddedRead::through_array) {
                continue;
            }
            let reads: Vec<&ShreddedRead> = reads.iter().collect();
            if let Some(clip) = clipped_type(field.data_type(), &reads) {
                clips.insert(column, clip);
            }
        }
        clips
    }

    /// Reads `file`'s footer, and hands the file to a Parquet morselizer whose expression adapter
    /// knows the file's facts, with the row groups pruning skips.
    async fn plan(self: Arc<Self>, mut file: PartitionedFile) -> Result<Box<dyn MorselPlanner>> {
        let mut reader = self.reader_factory.create_reader(
            self.partition,
            file.clone(),
            file.metadata_size_hint,
            &self.metrics,
        )?;
        // the page index only serves pruning on the paths' leaves
        let page_index = if self.pruning.is_some() {
            PageIndexPolicy::Optional
        } else {
            PageIndexPolicy::Skip
        };
        let options = ArrowReaderOptions::new().with_page_index_policy(page_index);
        let metadata = reader.get_metadata(Some(&options)).await?;
        let file_schema: SchemaRef =
            Arc::clone(ArrowReaderMetadata::try_new(Arc::clone(&metadata), options)?.schema());
        let facts = FileFacts::new(
            &metadata,
            &file_schema,
            &variant_column_names(self.source.table_schema().table_schema()),
        );
        if let Some(pruning) = &self.pruning
            && file
                .extensions
                .get::<datafusion::datasource::physical_plan::parquet::ParquetRowSelection>()
                .is_none()
        {
            let row_groups = metadata.num_row_groups();
            let keep = pruning.row_groups_to_read(&metadata, &file_schema)?;
            let mut plan = file
                .extensions
                .get::<ParquetAccessPlan>()
                .cloned()
                .filter(|p| p.len() == row_groups)
                .unwrap_or_else(|| ParquetAccessPlan::new_all(row_groups));
            let mut changed = false;
            for (i, keep) in keep.iter().enumerate() {
                if !plan.should_scan(i) {
                    continue;
                }
                if !keep {
                    plan.skip(i);
                    self.row_groups_pruned.add(1);
                    changed = true;
                } else if let Some(rows) = pruning.page_selection(&metadata, &file_schema, i) {
                    self.page_rows_pruned.add(rows.skipped_row_count());
                    plan.scan_selection(i, rows);
                    changed = true;
                }
            }
            if changed {
                file = file.with_extension(plan);
            }
        }
        let clips = self.clipped_columns(&file_schema, &facts);
        let mut config = self.template.clone();
        config.expr_adapter_factory = Some(Arc::new(self.adapter.for_file(
            Arc::new(facts),
            self.read_metrics.clone(),
            clips,
            self.source.filter(),
        )));
        let morselizer = self.source.create_morselizer(
            Arc::clone(&self.object_store),
            &config,
            self.partition,
        )?;
        morselizer.plan_file(file)
    }
}

/// Plans each file through [`Shared::plan`].
#[derive(Debug)]
struct VariantMorselizer {
    shared: Arc<Shared>,
}

impl Morselizer for VariantMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> Result<Box<dyn MorselPlanner>> {
        Ok(Box::new(VariantFilePlanner {
            shared: Arc::clone(&self.shared),
            file,
        }))
    }
}

/// One file waiting for its footer.
#[derive(Debug)]
struct VariantFilePlanner {
    shared: Arc<Shared>,
    file: PartitionedFile,
}

impl MorselPlanner for VariantFilePlanner {
    fn plan(self: Box<Self>) -> Result<Option<MorselPlan>> {
        let Self { shared, file } = *self;
        Ok(Some(
            MorselPlan::new().with_pending_planner(shared.plan(file)),
        ))
    }
}
