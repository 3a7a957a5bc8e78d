//! [`VariantParquetFormat`]: DataFusion's `ParquetFormat` that keeps variant columns variants, and
//! its [`VariantParquetFormatFactory`] (file extension `parquet`).
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::config::{ConfigOptions, TableParquetOptions};
use datafusion::common::{GetExt, Result, Statistics, internal_err, not_impl_err, plan_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::{ParquetFormat, ParquetFormatFactory};
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory, FileMeta};
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::{
    FileScanConfig, FileSinkConfig, FileSource, ParquetSource,
};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::object_store::path::Path;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use parquet::encryption::decrypt::FileDecryptionProperties;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use super::ShreddingOptions;
use super::general::file_errors::{SkipFiles, decoding_panic, in_file};
use super::general::interval::{holds_interval, without_interval_ranges};
use super::general::logical_types::{
    ParquetColumnTypes, collect_logical_type_fixups, with_logical_type_fixups,
};
use super::general::staged::stage;
use super::read::expr_adapter::VariantExprAdapterFactory;
use super::read::source::VariantParquetSource;
use super::variant_columns::{
    VariantColumns, collect_variant_columns, with_fields_changed, with_unshredded_variant_types,
    with_variant_extension,
};
use super::variant_order::{
    ORDER_KEY, decode as decode_variant_order, file_ordering, sorted_by_variant_paths,
    with_read_forms,
};
use super::write::input_sample::sample_input;
use super::write::sink::{VariantParquetSink, has_variant_column};
use crate::arrow_nested::with_inner_fields_changed;
use crate::panics::catch_async;
use crate::variant_array::{
    EXTENSION_NAME_KEY, has_unshredded_variant_shape, variant_extension_metadata,
};

/// A Parquet [`FileFormat`] that reads variant columns as `arrow.parquet.variant` fields.
///
/// It wraps DataFusion's [`ParquetFormat`] and delegates everything to it; after schema inference
/// it puts the variant extension back on every top-level column that a file marks as a variant
/// (a `VARIANT`-annotated group, or a group Spark's schema metadata calls `"variant"`), whatever
/// the `skip_metadata` option says. The extension then travels with the table schema into scans
/// (their output batches carry it) and into `COPY`/`INSERT` (the parquet writer annotates such
/// fields `VARIANT`).
///
/// [`Self::with_expr_adapter_factory`] is the per-file hook for rewriting scan expressions, e.g.
/// reading `v.typed_value.a.typed_value` instead of `variant_get(v, '$.a')` where a file is
/// shredded.
#[derive(Debug, Default)]
pub struct VariantParquetFormat {
    inner: ParquetFormat,
    expr_adapter_factory: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    shredding: ShreddingOptions,
}

impl VariantParquetFormat {
    /// A format with DataFusion's default Parquet options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wraps `inner`, keeping its options.
    pub fn from_parquet_format(inner: ParquetFormat) -> Self {
        Self {
            inner,
            expr_adapter_factory: None,
            shredding: ShreddingOptions::new(),
        }
    }

    /// Writes the variant columns `shredding` names shredded (`COPY`, `INSERT`); reading is
    /// unaffected.
    pub fn with_shredding(mut self, shredding: ShreddingOptions) -> Self {
        self.shredding = shredding;
        self
    }

    /// The columns written shredded.
    pub fn shredding(&self) -> &ShreddingOptions {
        &self.shredding
    }

    /// Sets the Parquet options (as `ParquetFormat::with_options`).
    pub fn with_options(mut self, options: TableParquetOptions) -> Self {
        self.inner = self.inner.with_options(options);
        self
    }

    /// The Parquet options in use.
    pub fn options(&self) -> &TableParquetOptions {
        self.inner.options()
    }

    /// The wrapped DataFusion format.
    pub fn inner(&self) -> &ParquetFormat {
        &self.inner
    }

    /// Installs `factory` on every scan this format plans whose configuration has no expression
    /// adapter yet (one set through `ListingTableConfig::with_expr_adapter_factory` wins). The
    /// factory sees each file's physical schema, so it can rewrite variant extraction into reads
    /// of that file's `typed_value` columns: DataFusion moves `variant_get(v, ..)` calls into the
    /// scan's projection, which the adapter rewrites per file.
    ///
    /// It is wrapped in a [`VariantExprAdapterFactory`], which reassembles variant columns whose
    /// file layout differs from the table's (`None`: DataFusion's default adapter, wrapped).
    /// DataFusion 55's Parquet opener creates the adapter for a file only when the scan has a
    /// predicate or the file's schema differs from the table's.
    pub fn with_expr_adapter_factory(
        mut self,
        factory: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    ) -> Self {
        self.expr_adapter_factory = factory;
        self
    }

    /// The expression adapter factory installed on scans, if any.
    pub fn expr_adapter_factory(&self) -> Option<&Arc<dyn PhysicalExprAdapterFactory>> {
        self.expr_adapter_factory.as_ref()
    }

    /// The variant columns of `objects`, read from their Arrow schemas *with* metadata.
    ///
    /// One merged inference covers the usual case; when the files' metadata do not merge (the
    /// reason DataFusion skips metadata by default), each file is inferred alone. Footers come
    /// from DataFusion's file metadata cache, filled by the inference just before, and
    /// encryption options apply as for the main inference.
    async fn variant_columns(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<VariantColumns> {
        let with_metadata = ParquetFormat::default()
            .with_options(self.inner.options().clone())
            .with_skip_metadata(false)
            .with_binary_as_string(false)
            .with_force_view_types(false);
        let mut columns = VariantColumns::new();
        match catch_async(
            with_metadata.infer_schema(state, store, objects),
            decoding_panic,
        )
        .await
        {
            Ok(schema) => collect_variant_columns(&schema, &mut columns),
            Err(_) => {
                for object in objects {
                    let schema = catch_async(
                        with_metadata.infer_schema(state, store, std::slice::from_ref(object)),
                        decoding_panic,
                    )
                    .await?;
                    collect_variant_columns(&schema, &mut columns);
                }
            }
        }
        Ok(columns)
    }

    /// `schema` (inferred from `objects`) with the variant extension on the columns the files
    /// mark as variants, each of the unshredded variant type.
    async fn with_variants(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
        schema: &SchemaRef,
    ) -> Result<SchemaRef> {
        let columns = if self.inner.skip_metadata() {
            self.variant_columns(state, store, objects).await?
        } else {
            // the inferred schema already has the fields' and the files' metadata
            let mut columns = VariantColumns::new();
            collect_variant_columns(schema, &mut columns);
            columns
        };
        Ok(with_unshredded_variant_types(&with_variant_extension(
            schema, &columns,
        )))
    }

    /// The logical-type fix-ups (see [`super::general::logical_types`]) of `objects`' top-level columns,
    /// from their Parquet schemas. Footers come from DataFusion's file metadata cache, filled by
    /// the inference just before, and encrypted ones are read with the options' decryption, as
    /// DataFusion's inference reads them; a file whose footer cannot be read here adds nothing.
    async fn logical_type_fixups(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> ParquetColumnTypes {
        let mut objects: Vec<_> = objects.iter().collect();
        // the first file (in DataFusion's inference order) that has a column decides
        objects.sort_unstable_by(|a, b| a.location.cmp(&b.location));
        let mut fixups = ParquetColumnTypes::new();
        for object in objects {
            if let Some(metadata) = self.footer(state, store, object).await {
                collect_logical_type_fixups(metadata.file_metadata().schema_descr(), &mut fixups);
            }
        }
        fixups
    }

    /// `object`'s footer, from DataFusion's file metadata cache (filled by the inference just
    /// before) and read with the options' decryption, as DataFusion's inference reads it; None
    /// when it cannot be read here.
    async fn footer(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        object: &ObjectMeta,
    ) -> Option<Arc<ParquetMetaData>> {
        let decryption = self.file_decryption(state, &object.location).await.ok()?;
        let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let footer = DFParquetMetadata::new(store.as_ref(), object)
            .with_decryption_properties(decryption)
            .with_metadata_size_hint(self.inner.metadata_size_hint())
            .with_file_metadata_cache(Some(cache))
            .with_page_index_policy(Some(PageIndexPolicy::Skip));
        catch_async(footer.fetch_metadata(), decoding_panic)
            .await
            .ok()
    }
}

impl VariantParquetFormat {
    /// The order `object` records by variant paths (see [`super::variant_order`]), over
    /// `table_schema`: None when it records none, or its footer cannot be read here.
    async fn variant_order(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: &Schema,
        object: &ObjectMeta,
    ) -> Option<LexOrdering> {
        let metadata = self.footer(state, store, object).await?;
        let recorded = (metadata.file_metadata().key_value_metadata()?.iter())
            .find(|kv| kv.key == ORDER_KEY)?
            .value
            .as_deref()?;
        let keys = decode_variant_order(recorded)?;
        file_ordering(&keys, table_schema, state.config().options())
    }

    /// The decryption of the file at `path`, as DataFusion's Parquet format finds it: the
    /// options' own properties, or those the session's encryption factory gives; None for a
    /// plain file.
    async fn file_decryption(
        &self,
        state: &dyn Session,
        path: &Path,
    ) -> Result<Option<Arc<FileDecryptionProperties>>> {
        let crypto = &self.inner.options().crypto;
        if let Some(properties) = &crypto.file_decryption {
            return Ok(Some(Arc::new(FileDecryptionProperties::try_from(
                properties.clone(),
            )?)));
        }
        let Some(factory) = &crypto.factory_id else {
            return Ok(None);
        };
        state
            .runtime_env()
            .parquet_encryption_factory(factory)?
            .get_file_decryption_properties(&crypto.factory_options, path)
            .await
    }
}

#[async_trait]
impl FileFormat for VariantParquetFormat {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        self.inner.get_ext_with_compression(compression)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        let schema = match catch_async(
            self.inner.infer_schema(state, store, objects),
            decoding_panic,
        )
        .await
        {
            Ok(schema) => self.with_variants(state, store, objects, &schema).await?,
            // Files whose variant columns are shredded differently do not merge as they are,
            // nor do maps whose writers name their entries differently (arrow-rs `entries`,
            // Spark and pyarrow `key_value`): each file's schema with its variant columns
            // unshredded and its maps' entries named as the Parquet format names them, merged.
            // A file that cannot be read is named here (or skipped, with
            // `variant.ignore_corrupt_files`).
            Err(merge_error) => {
                let skip = SkipFiles::from_options(state.config_options());
                let mut schemas = Vec::with_capacity(objects.len());
                for object in objects {
                    let one = std::slice::from_ref(object);
                    let inferred = self.inner.infer_schema(state, store, one);
                    let schema = match catch_async(inferred, decoding_panic).await {
                        Ok(schema) => schema,
                        Err(e) if skip.skips(&e).is_some() => {
                            log::warn!(
                                "schema inference skipped {}: {}",
                                object.location,
                                e.strip_backtrace()
                            );
                            continue;
                        }
                        Err(e) => return Err(in_file(object.location.as_ref(), e)),
                    };
                    let schema = self.with_variants(state, store, one, &schema).await?;
                    schemas.push(
                        with_fields_changed(&schema, map_entries_named)
                            .as_ref()
                            .clone(),
                    );
                }
                if schemas.is_empty() && !objects.is_empty() {
                    return plan_err!(
                        "no file could be read to infer the table's schema: all {} were \
                         skipped as corrupt (variant.ignore_corrupt_files)",
                        objects.len()
                    );
                }
                Arc::new(Schema::try_merge(schemas).map_err(|_| merge_error)?)
            }
        };
        let fixups = self.logical_type_fixups(state, store, objects).await;
        Ok(with_logical_type_fixups(&schema, &fixups))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let stats = (self.inner).infer_stats(state, store, Arc::clone(&table_schema), object);
        let stats = catch_async(stats, decoding_panic).await;
        let stats = match unknown_if_skipped(state, object, stats)? {
            Some(stats) => stats,
            None => return Ok(Statistics::new_unknown(&table_schema)),
        };
        Ok(without_interval_ranges(stats, &table_schema))
    }

    async fn infer_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Option<LexOrdering>> {
        let ordering = (self.inner).infer_ordering(state, store, Arc::clone(&table_schema), object);
        let ordering = catch_async(ordering, decoding_panic).await?;
        Ok(match ordering {
            Some(ordering) => Some(ordering),
            None => {
                self.variant_order(state, store, &table_schema, object)
                    .await
            }
        })
    }

    async fn infer_stats_and_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<FileMeta> {
        let meta =
            (self.inner).infer_stats_and_ordering(state, store, Arc::clone(&table_schema), object);
        let meta = catch_async(meta, decoding_panic).await;
        let Some(mut meta) = unknown_if_skipped(state, object, meta)? else {
            return Ok(FileMeta::new(Statistics::new_unknown(&table_schema)));
        };
        meta.statistics = without_interval_ranges(meta.statistics, &table_schema);
        if meta.ordering.is_none() {
            meta.ordering = self
                .variant_order(state, store, &table_schema, object)
                .await;
        }
        Ok(meta)
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        mut conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut adapter = None;
        if conf.expr_adapter_factory.is_none() {
            let ours = Arc::new(match &self.expr_adapter_factory {
                Some(inner) => VariantExprAdapterFactory::new(Arc::clone(inner)),
                None => VariantExprAdapterFactory::over_default(),
            });
            conf.expr_adapter_factory = Some(Arc::clone(&ours) as _);
            adapter = Some(ours);
        }
        // (an order by typed variant paths, in the form queries read them too, built with the
        // options the planner builds the queries' expressions with, which their equality
        // compares)
        let schema = Arc::clone(conf.file_source.table_schema().table_schema());
        let planned_with = (state.execution_props().config_options().cloned())
            .unwrap_or_else(|| Arc::new(ConfigOptions::default()));
        conf.output_ordering = with_read_forms(
            std::mem::take(&mut conf.output_ordering),
            &schema,
            &planned_with,
        );
        let plan = self.inner.create_physical_plan(state, conf).await?;
        let skip = SkipFiles::from_options(state.config_options());
        Ok(with_variant_source(Arc::clone(&plan), adapter, skip).unwrap_or(plan))
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (mut conf, staged) = stage(conf)?;
        conf.output_schema = with_variant_shaped_fields(&conf.output_schema);
        // (read before the shredding's projection and the sample go in above and below the sort)
        let variant_order = sorted_by_variant_paths(&input);
        let mut input = input;
        if !self.shredding.is_empty() {
            (input, conf.output_schema) = self.shredding.apply(input, &conf.output_schema)?;
            // (a column whose nested variant was shredded comes back as the projection gives
            // it, without the marks of its other variants)
            conf.output_schema = with_variant_shaped_fields(&conf.output_schema);
        }
        // variant columns go through our sink (VARIANT annotations with a spec version), and
        // intervals (which the parquet crate cannot write); encrypted too, as DataFusion's sink
        // encrypts
        if conf
            .output_schema
            .fields()
            .iter()
            .any(|f| has_variant_column(f) || holds_interval(f.data_type()))
        {
            if conf.insert_op != InsertOp::Append {
                return not_impl_err!("Overwrites are not implemented yet for Parquet");
            }
            let mut auto = self.shredding.automatic(state, &conf.output_schema);
            // per-column encryption names its columns' leaves before the files exist: the
            // leaves an inferred shredding adds would be written unencrypted (a uniform
            // encryption, by the footer key alone, covers them)
            let crypto = &self.inner.options().crypto;
            if crypto.factory_id.is_some()
                || (crypto.file_encryption.as_ref())
                    .is_some_and(|e| !e.column_encryption_properties.is_empty())
            {
                auto.columns.clear();
            }
            // a sample taken before the sink: under a sort it sees every row (the first rows of
            // sorted input are all alike), else the first rows of each partition (which arrive
            // at the sink in no fixed order); not the latter when each file holds the rows of
            // one partition value, which its own first rows describe better
            let names = (auto.columns.iter())
                .map(|&i| conf.output_schema.field(i).name().clone())
                .collect();
            let heads = conf.table_partition_cols.is_empty();
            (input, auto.sample) =
                sample_input(input, names, auto.sample_rows, auto.sample_bytes, heads)?;
            let sink = Arc::new(
                VariantParquetSink::new(
                    conf,
                    self.inner.options().clone(),
                    order_requirements.as_ref(),
                )
                .with_auto_shredding(auto)
                .with_variant_order(variant_order),
            );
            return staged.wrap(Arc::new(DataSinkExec::new(input, sink, order_requirements)));
        }
        let plan = self
            .inner
            .create_writer_physical_plan(input, state, conf, order_requirements)
            .await?;
        staged.wrap(plan)
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

/// `read` (a file's statistics): an error names the file, or is None (statistics unknown) when
/// the session skips such files (their scan then skips them too, see [`super::general::file_errors`]).
fn unknown_if_skipped<T>(
    state: &dyn Session,
    object: &ObjectMeta,
    read: Result<T>,
) -> Result<Option<T>> {
    match read {
        Ok(read) => Ok(Some(read)),
        Err(e)
            if SkipFiles::from_options(state.config_options())
                .skips(&e)
                .is_some() =>
        {
            Ok(None)
        }
        Err(e) => Err(in_file(object.location.as_ref(), e)),
    }
}

/// `plan` (a Parquet scan) with its `ParquetSource` wrapped in a [`VariantParquetSource`] whose
/// per-file work runs under `adapter`, which the scan is given too (the source does that work
/// only under the very adapter it knows), skipping the unreadable files `skip` says; None for
/// another plan.
pub(crate) fn with_variant_source(
    plan: Arc<dyn ExecutionPlan>,
    adapter: Option<Arc<VariantExprAdapterFactory>>,
    skip: SkipFiles,
) -> Option<Arc<dyn ExecutionPlan>> {
    let exec = plan.downcast_ref::<DataSourceExec>()?;
    let config = exec.data_source().downcast_ref::<FileScanConfig>()?;
    let parquet = config.file_source.downcast_ref::<ParquetSource>()?;
    let mut config = config.clone();
    if let Some(adapter) = &adapter {
        config.expr_adapter_factory = Some(Arc::clone(adapter) as _);
    }
    config.file_source =
        Arc::new(VariantParquetSource::new(parquet.clone(), adapter).with_skip_files(skip));
    Some(DataSourceExec::from_data_source(config))
}

/// `schema` with the variant extension on every field, at any depth (in structs, lists and
/// maps), that has exactly the unshredded variant layout (`Struct{metadata, value}`, both binary)
/// without carrying it: variants whose field metadata an expression dropped on the way (`CASE`,
/// `coalesce`, `nullif` return plain fields; `named_struct`, `make_array`, `map` build their
/// fields anew). They are written as VARIANT groups like the variants they are.
fn with_variant_shaped_fields(schema: &SchemaRef) -> SchemaRef {
    with_fields_changed(schema, marked_field)
}

/// `field` with the variant extension on it or on the variant-shaped fields inside it; None when
/// nothing changes.
#[recursive::recursive]
fn marked_field(field: &FieldRef) -> Option<FieldRef> {
    let inner = with_inner_fields_changed(field.data_type(), marked_field);
    let data_type = inner.as_ref().unwrap_or(field.data_type());
    // (not over another extension)
    let mark = !field.metadata().contains_key(EXTENSION_NAME_KEY)
        && has_unshredded_variant_shape(data_type);
    if inner.is_none() && !mark {
        return None;
    }
    let mut out = field.as_ref().clone().with_data_type(data_type.clone());
    if mark {
        let mut metadata = field.metadata().clone();
        metadata.extend(variant_extension_metadata());
        out = out.with_metadata(metadata);
    }
    Some(Arc::new(out))
}

/// `field` with the entries of every map in it (at any depth) named as the Parquet format names
/// them (`key_value { key, value }`); None when nothing changes. (A file's maps are read with the
/// table's names by a cast, which takes the entries' fields by position.)
#[recursive::recursive]
fn map_entries_named(field: &FieldRef) -> Option<FieldRef> {
    let data_type = match field.data_type() {
        DataType::Map(entries, sorted) => {
            let DataType::Struct(key_value) = entries.data_type() else {
                return None;
            };
            if key_value.len() != 2 {
                return None;
            }
            let names = ["key", "value"];
            let renamed: Vec<FieldRef> = (key_value.iter().zip(names))
                .map(|(f, name)| {
                    let f = map_entries_named(f).unwrap_or_else(|| Arc::clone(f));
                    Arc::new(f.as_ref().clone().with_name(name))
                })
                .collect();
            let named = entries.name() == "key_value"
                && renamed.iter().zip(key_value.iter()).all(|(a, b)| a == b);
            if named {
                return None;
            }
            let entries = entries
                .as_ref()
                .clone()
                .with_name("key_value")
                .with_data_type(DataType::Struct(renamed.into()));
            DataType::Map(Arc::new(entries), *sorted)
        }
        other => with_inner_fields_changed(other, map_entries_named)?,
    };
    Some(Arc::new(field.as_ref().clone().with_data_type(data_type)))
}

/// Creates [`VariantParquetFormat`]s for the `parquet` file type: registered by
/// [`register_all`](crate::register_all), it is what `CREATE EXTERNAL TABLE .. STORED AS
/// PARQUET`, `SELECT .. FROM 'file.parquet'` (with URL tables enabled) and `COPY .. STORED AS
/// PARQUET` use. Options (session defaults, `OPTIONS (..)`) are resolved exactly as by
/// DataFusion's `ParquetFormatFactory`.
pub struct VariantParquetFormatFactory {
    inner: ParquetFormatFactory,
    expr_adapter_factory: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    shredding: ShreddingOptions,
}

impl VariantParquetFormatFactory {
    /// A factory taking its options from the session (like `ParquetFormatFactory::new`).
    pub fn new() -> Self {
        Self {
            inner: ParquetFormatFactory::new(),
            expr_adapter_factory: None,
            shredding: ShreddingOptions::new(),
        }
    }

    /// A factory with fixed default options, overridden by per-statement options (like
    /// `ParquetFormatFactory::new_with_options`).
    pub fn new_with_options(options: TableParquetOptions) -> Self {
        Self {
            inner: ParquetFormatFactory::new_with_options(options),
            expr_adapter_factory: None,
            shredding: ShreddingOptions::new(),
        }
    }

    /// Gives every format this factory creates `factory` as its expression adapter (see
    /// [`VariantParquetFormat::with_expr_adapter_factory`]).
    pub fn with_expr_adapter_factory(
        mut self,
        factory: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    ) -> Self {
        self.expr_adapter_factory = factory;
        self
    }

    /// Gives every format this factory creates `shredding` (see
    /// [`VariantParquetFormat::with_shredding`]); `variant.shred.*` options of a statement add
    /// to it.
    pub fn with_shredding(mut self, shredding: ShreddingOptions) -> Self {
        self.shredding = shredding;
        self
    }

    /// The fixed Parquet options (`new_with_options`); None: the session's.
    pub fn parquet_options(&self) -> Option<&TableParquetOptions> {
        self.inner.options.as_ref()
    }

    /// The shredding options every format it creates starts from.
    pub fn shredding(&self) -> &ShreddingOptions {
        &self.shredding
    }

    /// The expression adapter factory every format it creates is given, if any.
    pub fn expr_adapter_factory(&self) -> Option<&Arc<dyn PhysicalExprAdapterFactory>> {
        self.expr_adapter_factory.as_ref()
    }

    fn wrap(
        &self,
        format: Arc<dyn FileFormat>,
        shredding: ShreddingOptions,
    ) -> Result<Arc<dyn FileFormat>> {
        let Some(parquet) = format.downcast_ref::<ParquetFormat>() else {
            return internal_err!("ParquetFormatFactory did not create a ParquetFormat");
        };
        let inner = ParquetFormat::default().with_options(parquet.options().clone());
        Ok(Arc::new(
            VariantParquetFormat::from_parquet_format(inner)
                .with_expr_adapter_factory(self.expr_adapter_factory.clone())
                .with_shredding(shredding),
        ))
    }
}

impl Default for VariantParquetFormatFactory {
    fn default() -> Self {
        Self::new()
    }
}

impl FileFormatFactory for VariantParquetFormatFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        let mut format_options = format_options.clone();
        let shredding = self
            .shredding
            .clone()
            .merged(ShreddingOptions::take_from(&mut format_options)?);
        self.wrap(self.inner.create(state, &format_options)?, shredding)
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(
            VariantParquetFormat::new()
                .with_expr_adapter_factory(self.expr_adapter_factory.clone())
                .with_shredding(self.shredding.clone()),
        )
    }
}

impl GetExt for VariantParquetFormatFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

impl fmt::Debug for VariantParquetFormatFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VariantParquetFormatFactory")
            .field("options", &self.inner.options)
            .field("expr_adapter_factory", &self.expr_adapter_factory)
            .field("shredding", &self.shredding)
            .finish()
    }
}
