//! Tables of JSON files read into variants: [`VariantJsonFormat`] (the `FileFormat` a DataFusion
//! `ListingTable` lists and scans through), [`VariantJsonTable`] (that listing table, in a form
//! plans can carry) and [`VariantJsonTableFactory`] (`CREATE EXTERNAL TABLE .. STORED AS
//! JSON_VARIANT`).
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider, TableProviderFactory};
use datafusion::common::{GetExt, Result, Statistics, not_impl_err, plan_err};
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig};
use datafusion::datasource::source::DataSourceExec;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown, TableType};
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::TableSchema;
use datafusion_datasource::file::FileSource;

use super::options::JsonReadOptions;
use super::source::VariantJsonSource;
use crate::listing::data_files_only;
use crate::variant_array::{column_list, declared_as};

/// The name of the format in `STORED AS` (`CREATE EXTERNAL TABLE .. STORED AS JSON_VARIANT`).
pub const JSON_VARIANT: &str = "JSON_VARIANT";

/// JSON files as a `FileFormat` whose schema is fixed by its options (no inference: any
/// document fits a variant).
#[derive(Debug, Clone)]
pub struct VariantJsonFormat {
    options: Arc<JsonReadOptions>,
}

impl VariantJsonFormat {
    /// The format reading files with `options`.
    pub fn new(options: JsonReadOptions) -> Self {
        VariantJsonFormat {
            options: Arc::new(options),
        }
    }

    /// How the files are read.
    pub fn options(&self) -> &JsonReadOptions {
        &self.options
    }
}

#[async_trait]
impl FileFormat for VariantJsonFormat {
    fn get_ext(&self) -> String {
        "json".to_string()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        Ok(format!("json{}", compression.get_ext()))
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.options.compression
    }

    async fn infer_schema(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        _objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        Ok(self.options.schema())
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        _object: &ObjectMeta,
    ) -> Result<Statistics> {
        Ok(Statistics::new_unknown(&table_schema))
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        mut conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let Some(source) = conf.file_source.downcast_ref::<VariantJsonSource>() {
            let pool = Arc::clone(&state.runtime_env().memory_pool);
            conf.file_source = Arc::new(source.clone().with_pool(pool));
        }
        Ok(DataSourceExec::from_data_source(conf))
    }

    async fn create_writer_physical_plan(
        &self,
        _input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        _conf: FileSinkConfig,
        _order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        not_impl_err!("JSON_VARIANT tables are read-only: write Parquet with COPY")
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(VariantJsonSource::new(
            Arc::clone(&self.options),
            table_schema,
        ))
    }
}

/// A listing table of JSON files read through [`VariantJsonFormat`]: one row per document.
/// Its locations are files, folders or globs (`logs/*.json.gz`) in any object store the session
/// has registered.
#[derive(Debug)]
pub struct VariantJsonTable {
    inner: ListingTable,
}

impl VariantJsonTable {
    /// The documents of the files at `locations` (paths or URLs; local paths may hold a glob),
    /// read with `options`.
    pub fn try_new(locations: &[String], options: JsonReadOptions) -> Result<Self> {
        let urls = locations
            .iter()
            .map(ListingTableUrl::parse)
            .collect::<Result<Vec<_>>>()?;
        Self::with_urls(urls, options)
    }

    /// The documents of the files at `urls`, read with `options`.
    pub fn with_urls(urls: Vec<ListingTableUrl>, options: JsonReadOptions) -> Result<Self> {
        if urls.is_empty() {
            return plan_err!("read_json_variant needs a location");
        }
        let schema = options.schema();
        let listing =
            ListingOptions::new(Arc::new(VariantJsonFormat::new(options))).with_file_extension("");
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(listing)
            .with_schema(schema);
        Ok(VariantJsonTable {
            inner: ListingTable::try_new(config)?,
        })
    }

    /// Its locations, as parsed.
    pub fn urls(&self) -> &[ListingTableUrl] {
        self.inner.table_paths()
    }

    /// How its files are read.
    pub fn options(&self) -> &JsonReadOptions {
        self.inner
            .options()
            .format
            .downcast_ref::<VariantJsonFormat>()
            .expect("made with VariantJsonFormat")
            .options()
    }
}

#[async_trait]
impl TableProvider for VariantJsonTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let listing = data_files_only(state, self.inner.table_paths());
        let state = listing.as_ref().map_or(state, |s| s as &dyn Session);
        self.inner.scan(state, projection, filters, limit).await
    }

    async fn scan_with_args<'a>(
        &self,
        state: &dyn Session,
        args: ScanArgs<'a>,
    ) -> Result<ScanResult> {
        let listing = data_files_only(state, self.inner.table_paths());
        let state = listing.as_ref().map_or(state, |s| s as &dyn Session);
        self.inner.scan_with_args(state, args).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }
}

/// Makes `CREATE EXTERNAL TABLE t STORED AS JSON_VARIANT LOCATION '..' [OPTIONS (..)]` tables:
/// the options are `read_json_variant`'s; the columns are fixed by them (declare none, or
/// exactly those).
#[derive(Debug, Default)]
pub struct VariantJsonTableFactory;

#[async_trait]
impl TableProviderFactory for VariantJsonTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let options =
            JsonReadOptions::from_pairs(cmd.options.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        if !cmd.table_partition_cols.is_empty() {
            return not_impl_err!("{JSON_VARIANT} tables have no partition columns");
        }
        let expected = options.schema();
        let declared = cmd.schema.fields();
        let same = declared.len() == expected.fields().len()
            && (declared.iter().zip(expected.fields())).all(|(d, e)| declared_as(d, e));
        if !declared.is_empty() && !same {
            return plan_err!(
                "a {JSON_VARIANT} table's columns are ({}); declare none, or exactly those",
                column_list(expected.fields())
            );
        }
        Ok(Arc::new(VariantJsonTable::try_new(
            &cmd.locations,
            options,
        )?))
    }
}
