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
//! - [`variant_columns`]: which columns of a file are variants.
//! - [`logical_types`]: the Arrow types and extensions of Parquet logical types the parquet
//!   crate's conversion leaves plain (`ENUM` as a string; `UUID`, `JSON`, `GEOMETRY`, `GEOGRAPHY`
//!   extensions).
//!
//! Shredded files are read as they are (`typed_value` columns included) and reassembled by the
//! functions. A per-file expression rewrite reading `typed_value` directly plugs in through
//! [`VariantParquetFormat::with_expr_adapter_factory`].
mod format;
pub mod logical_types;
pub mod variant_columns;

use datafusion::common::Result;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::ListingOptions;
use datafusion::prelude::SessionContext;

pub use format::{VariantParquetFormat, VariantParquetFormatFactory};

/// Registers the Parquet file, directory or glob at `path` as table `name` of `ctx`, reading
/// variant columns as variants (with the session's Parquet options, like `ctx.register_parquet`,
/// whose format does not know variants).
pub async fn register_parquet_table(ctx: &SessionContext, name: &str, path: &str) -> Result<()> {
    let state = ctx.state();
    let format = VariantParquetFormatFactory::new().create(&state, &Default::default())?;
    let options = ListingOptions::new(format).with_file_extension(".parquet");
    ctx.register_listing_table(name, path, options, None, None)
        .await
}
