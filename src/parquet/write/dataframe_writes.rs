//! `DataFrame::write_parquet` through our format: DataFusion's DataFrame writer names its own
//! `ParquetFormatFactory` in the plan (SQL's `COPY` takes the session's, ours), so its files
//! would hold plain structs where a variant column is written: no VARIANT annotation, no
//! shredding, no staging. [`ParquetWritesAsVariant`] gives such a write our factory, with the
//! same options.
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::datasource::file_format::file_type_to_format;
use datafusion::datasource::file_format::format_as_file_type;
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::logical_expr::LogicalPlan;
use datafusion::optimizer::AnalyzerRule;

use crate::parquet::VariantParquetFormatFactory;

/// Swaps DataFusion's Parquet format in a write's plan for ours (see the module).
#[derive(Debug, Default)]
pub struct ParquetWritesAsVariant;

impl AnalyzerRule for ParquetWritesAsVariant {
    fn name(&self) -> &str {
        "parquet_writes_as_variant"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up(|node| {
            let LogicalPlan::Copy(mut copy) = node else {
                return Ok(Transformed::no(node));
            };
            // (a file type of another kind is left as it is)
            let Ok(factory) = file_type_to_format(&copy.file_type) else {
                return Ok(Transformed::no(LogicalPlan::Copy(copy)));
            };
            let Some(theirs) = factory.downcast_ref::<ParquetFormatFactory>() else {
                return Ok(Transformed::no(LogicalPlan::Copy(copy)));
            };
            let ours = match &theirs.options {
                Some(options) => VariantParquetFormatFactory::new_with_options(options.clone()),
                None => VariantParquetFormatFactory::new(),
            };
            copy.file_type = format_as_file_type(Arc::new(ours));
            Ok(Transformed::yes(LogicalPlan::Copy(copy)))
        })
        .map(|transformed| transformed.data)
    }
}
