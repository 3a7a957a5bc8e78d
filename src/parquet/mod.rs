//! Variant columns in Parquet files, through DataFusion's Parquet data source.
//!
//! - [`VariantParquetFormat`]: DataFusion's `ParquetFormat` plus the `arrow.parquet.variant`
//!   extension on every column a file marks as a variant (`VARIANT` logical type, or Spark's schema
//!   metadata), whatever `skip_metadata` says; scans and `COPY` keep the extension, and the
//!   parquet writer annotates such columns `VARIANT`.
//! - [`VariantParquetFormatFactory`]: the `parquet` file type for `CREATE EXTERNAL TABLE`,
//!   `FROM 'file.parquet'` and `COPY .. STORED AS PARQUET`; [`register_all`](crate::register_all)
//!   installs it.
//! - [`register_parquet_table`]: one call to register a file, directory or glob as a table.
//! - [`VariantParquetTable`] / [`VariantTableFactory`]: such tables (also `CREATE EXTERNAL
//!   TABLE .. STORED AS PARQUET`) in a form the logical plan codec can encode.
//! - [`variant_columns`]: which columns of a file are variants.
//! - [`logical_types`]: the Arrow types and extensions of Parquet logical types the parquet
//!   crate's conversion leaves plain (`ENUM` as a string; `UUID`, `JSON`, `GEOMETRY`, `GEOGRAPHY`
//!   extensions; `INTERVAL` exactly, through [`interval`]).
//!
//! - [`ShreddingOptions`] / [`write_parquet`]: writing variant columns shredded, from `COPY ..
//!   OPTIONS ('variant.shred.v' 'struct<a bigint, b string>')` or from Rust.
//!
//! - [`variant_scan`] / [`with_variant_scans`]: the same per-file work (paths read from shredded
//!   leaves, filters pushed into the scan, pruning) for Parquet scans an application builds
//!   itself over DataFusion's `ParquetSource`, as lakehouse table providers do.
//!
//! The files by concern: `read/` reads variants (the scan, its per-file expression adapter and
//! shredded paths, the footer's facts, pruning on shredded leaves, whole-value filters),
//! `write/` writes them (the sink, shredding options and inference's input sample, DataFrame
//! writes), `general/` is Parquet beyond variants (logical types, `INTERVAL`, atomic staging,
//! file errors); `format.rs` and `table.rs` join them for DataFusion.
//!
//! Shredded files are read as they are (`typed_value` columns included): per file, paths read
//! from the leaves they need and other uses are reassembled ([`VariantExprAdapterFactory`]); an
//! application's own expression adapter plugs in through
//! [`VariantParquetFormat::with_expr_adapter_factory`].
pub(crate) mod format;
pub(crate) mod general;
pub(crate) mod read;
mod table;
pub mod variant_columns;
pub(crate) mod variant_order;
pub(crate) mod write;

pub use general::{file_errors, interval, logical_types};
pub use write::input_sample;

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::config::TableParquetOptions;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;
use datafusion::common::TableReference;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::file_format::format_as_file_type;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::prelude::{DataFrame, SessionContext};

pub use format::{VariantParquetFormat, VariantParquetFormatFactory};
pub use input_sample::SampleUnderSort;
pub use read::expr_adapter::VariantExprAdapterFactory;
pub use read::shredded_get::ShreddedGetExpr;
pub use read::source::{VariantParquetSource, variant_scan, with_variant_scans};
pub use read::whole_value_filters::WholeValueFiltersIntoScan;
pub use table::{VariantParquetTable, VariantTableFactory};
pub use write::dataframe_writes::ParquetWritesAsVariant;
pub use write::shred_on_write::{
    NO_SHREDDING, SHRED_INFERENCE_OPTION, SHRED_OPTION_PREFIX, ShreddingOptions, VariantConfig,
    VariantTableOptions,
};
pub use write::sink::{AutoShredding, VARIANT_SPEC_VERSION, VariantParquetSink};

/// Writes `df` to Parquet at `path` (a file, or a directory when it ends in `/`), as `COPY ..
/// STORED AS PARQUET` does with the session's Parquet options: variant columns become VARIANT
/// groups, those `shredding` names shredded. Returns the row count batch of `COPY`.
pub async fn write_parquet(
    df: DataFrame,
    path: &str,
    shredding: ShreddingOptions,
) -> Result<Vec<RecordBatch>> {
    let format = VariantParquetFormatFactory::new().with_shredding(shredding);
    let (state, plan) = df.into_parts();
    let plan = LogicalPlanBuilder::copy_to(
        plan,
        path.to_string(),
        format_as_file_type(Arc::new(format)),
        HashMap::new(),
        vec![],
    )?
    .build()?;
    DataFrame::new(state, plan).collect().await
}

/// Registers the Parquet file, directory or glob at `path` as table `name` of `ctx`, reading
/// variant columns as variants (with the session's Parquet options, like `ctx.register_parquet`,
/// whose format does not know variants).
pub async fn register_parquet_table(ctx: &SessionContext, name: &str, path: &str) -> Result<()> {
    let state = ctx.state();
    let format = VariantParquetFormatFactory::new().create(&state, &Default::default())?;
    let options = ListingOptions::new(format).with_file_extension(".parquet");
    // as `SessionContext::register_listing_table` does, wrapped so that logical plans over the
    // table can be serialized
    let name = TableReference::from(name);
    let path = ListingTableUrl::parse(path)?.with_table_ref(name.clone());
    let schema = options.infer_schema(&state, &path).await?;
    let config = ListingTableConfig::new(path)
        .with_listing_options(options)
        .with_schema(schema);
    let table = ListingTable::try_new(config)?
        .with_cache(ctx.runtime_env().cache_manager.get_file_statistic_cache());
    ctx.register_table(name, Arc::new(VariantParquetTable::new(table)?))?;
    Ok(())
}

/// The Parquet group `group` (its name, repetition, converted type and id) with the fields
/// `fields` and the logical type `logical_type`.
pub(crate) fn rebuilt_group(
    group: &parquet::schema::types::Type,
    fields: Vec<parquet::schema::types::TypePtr>,
    logical_type: Option<parquet::basic::LogicalType>,
) -> parquet::errors::Result<parquet::schema::types::Type> {
    let info = group.get_basic_info();
    let mut builder = parquet::schema::types::Type::group_type_builder(info.name())
        .with_fields(fields)
        .with_logical_type(logical_type)
        .with_converted_type(info.converted_type());
    if info.has_repetition() {
        builder = builder.with_repetition(info.repetition());
    }
    if info.has_id() {
        builder = builder.with_id(Some(info.id()));
    }
    builder.build()
}

/// True when `options` encrypt or decrypt the files, with given properties or through an
/// encryption factory: only DataFusion's own reader decrypts, so our per-file work (which reads
/// and rebuilds footers) stands aside. (Our sink encrypts as DataFusion's does.)
pub(crate) fn is_encrypted(options: &TableParquetOptions) -> bool {
    let crypto = &options.crypto;
    crypto.file_encryption.is_some()
        || crypto.file_decryption.is_some()
        || crypto.factory_id.is_some()
}
