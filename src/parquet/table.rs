//! Tables over Parquet files read through [`VariantParquetFormat`], in a form plans can carry.
//!
//! DataFusion's `ListingTable` does the work; [`VariantParquetTable`] wraps it so that a
//! logical-plan codec can recognise it: `datafusion-proto` 55 encodes a `ListingTable` only when
//! its format is one of DataFusion's own and refuses ours before asking the extension codec,
//! while any other table provider goes to the codec
//! ([`VariantLogicalCodec`](crate::plan_codec::VariantLogicalCodec) encodes this one).
//! [`VariantTableFactory`] makes `CREATE EXTERNAL TABLE .. STORED AS PARQUET` create it.
use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider, TableProviderFactory};
use datafusion::common::{Constraints, Result, Statistics, plan_err};
use datafusion::datasource::listing::{ListingTable, ListingTableUrl};
use datafusion::datasource::provider::DefaultTableFactory;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{
    CreateExternalTable, Expr, LogicalPlan, TableProviderFilterPushDown, TableType,
};
use datafusion::physical_plan::ExecutionPlan;

use super::VariantParquetFormat;
use crate::listing::data_files_only;

/// A `ListingTable` whose files are read (and written, by `INSERT`) through
/// [`VariantParquetFormat`]; it behaves as the table it wraps, but code that looks for a
/// `ListingTable` (as DataFusion's own plan encoding does) no longer finds one.
#[derive(Debug)]
pub struct VariantParquetTable {
    inner: ListingTable,
}

impl VariantParquetTable {
    /// Wraps `table`, whose format must be [`VariantParquetFormat`]. Encoded in a plan, it
    /// keeps its locations, options, partition columns, declared orders and definition; an
    /// expression adapter set through `ListingTableConfig`, constraints and column defaults
    /// are not carried.
    pub fn new(table: ListingTable) -> Result<Self> {
        if !table.options().format.is::<VariantParquetFormat>() {
            return plan_err!("a VariantParquetTable reads through VariantParquetFormat");
        }
        Ok(Self { inner: table })
    }

    /// `provider` wrapped when it is a `ListingTable` over [`VariantParquetFormat`], else itself.
    pub fn wrapped(provider: Arc<dyn TableProvider>) -> Arc<dyn TableProvider> {
        match provider.downcast_ref::<ListingTable>() {
            Some(table) => match Self::new(table.clone()) {
                Ok(ours) => Arc::new(ours),
                Err(_) => provider,
            },
            None => provider,
        }
    }

    /// The listing table it wraps.
    pub fn inner(&self) -> &ListingTable {
        &self.inner
    }

    /// Its format.
    pub fn format(&self) -> &VariantParquetFormat {
        self.inner
            .options()
            .format
            .downcast_ref::<VariantParquetFormat>()
            .expect("checked when wrapped")
    }
}

#[async_trait]
impl TableProvider for VariantParquetTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.inner.constraints()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn get_table_definition(&self) -> Option<&str> {
        self.inner.get_table_definition()
    }

    fn get_logical_plan(&'_ self) -> Option<Cow<'_, LogicalPlan>> {
        self.inner.get_logical_plan()
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.inner.get_column_default(column)
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

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.insert_into(state, input, insert_op).await
    }
}

/// `CREATE EXTERNAL TABLE` through another factory (DataFusion's own unless given), the listing
/// tables it creates over [`VariantParquetFormat`] wrapped as [`VariantParquetTable`]s;
/// [`register_all`](crate::register_all) installs it for `PARQUET`, around the factory the
/// session had.
#[derive(Debug)]
pub struct VariantTableFactory {
    inner: Arc<dyn TableProviderFactory>,
}

impl VariantTableFactory {
    /// Around DataFusion's own factory.
    pub fn new() -> Self {
        Self::wrapping(Arc::new(DefaultTableFactory::new()))
    }

    /// Around `inner`.
    pub fn wrapping(inner: Arc<dyn TableProviderFactory>) -> Self {
        Self { inner }
    }
}

impl Default for VariantTableFactory {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl TableProviderFactory for VariantTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        // the schema is inferred from the data files alone (see `crate::listing`)
        let locations = (cmd.locations.iter())
            .filter_map(|l| ListingTableUrl::parse(l).ok())
            .collect::<Vec<_>>();
        let listing = data_files_only(state, &locations);
        let state = listing.as_ref().map_or(state, |s| s as &dyn Session);
        let table = self.inner.create(state, cmd).await?;
        Ok(VariantParquetTable::wrapped(table))
    }
}
