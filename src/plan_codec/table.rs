//! [`VariantParquetTable`]s in logical plans: the listing table's locations, options and
//! format, from which the receiving side builds the same table.
use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference, not_impl_err};
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::execution::TaskContext;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::logical_plan::from_proto::parse_sorts;
use datafusion_proto::logical_plan::to_proto::serialize_sorts;
use datafusion_proto::protobuf;

use super::messages::{JsonOptionsNode, JsonTableNode, TablePath, VariantTableNode};
use super::{
    arrow_type_from_proto, arrow_type_to_proto, corrupt, format_node, no_application_adapter,
    parquet_options_to_proto, required, shredding_from_node,
};
use crate::json_files::{JsonReadOptions, VariantJsonTable};
use crate::parquet::{VariantParquetFormat, VariantParquetTable};

/// `table` as a message; `codec` encodes the expressions of its declared orders.
pub(super) fn encode_table(
    table: &VariantParquetTable,
    codec: &dyn LogicalExtensionCodec,
) -> Result<VariantTableNode> {
    let format = table.format();
    no_application_adapter(format.expr_adapter_factory(), "a Parquet table")?;
    let listing = table.inner();
    let options = listing.options();
    if options.output_partitioning.is_some() {
        return not_impl_err!("a Parquet table with a declared partitioning cannot be encoded");
    }
    let paths = encode_paths(listing.table_paths());
    let partition_columns = options
        .table_partition_cols
        .iter()
        .map(|(name, data_type)| {
            Ok(protobuf::PartitionColumn {
                name: name.clone(),
                arrow_type: Some(arrow_type_to_proto(data_type)?),
            })
        })
        .collect::<Result<_>>()?;
    let file_sort_order = options
        .file_sort_order
        .iter()
        .map(|order| {
            Ok(protobuf::SortExprNodeCollection {
                sort_expr_nodes: serialize_sorts(order, codec)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(VariantTableNode {
        paths,
        file_extension: options.file_extension.clone(),
        format: Some(format_node(
            Some(parquet_options_to_proto(format.options())),
            format.shredding(),
        )?),
        partition_columns,
        file_sort_order,
        definition: listing.get_table_definition().map(str::to_string),
    })
}

/// The table `node` describes, with `schema` (partition columns included).
pub(super) fn decode_table(
    node: &VariantTableNode,
    schema: SchemaRef,
    ctx: &TaskContext,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Arc<dyn TableProvider>> {
    let format_node = required(&node.format, "a table's format")?;
    let parquet_options = required(&format_node.parquet_options, "a table's Parquet options")?
        .try_into()
        .map_err(|e| corrupt("Parquet options", e))?;
    let format = VariantParquetFormat::new()
        .with_options(parquet_options)
        .with_shredding(shredding_from_node(format_node)?);
    let paths = decode_paths(&node.paths)?;
    let partition_columns = node
        .partition_columns
        .iter()
        .map(|column| {
            let data_type = required(&column.arrow_type, "a partition column's type")?;
            Ok((column.name.clone(), arrow_type_from_proto(data_type)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let file_sort_order = node
        .file_sort_order
        .iter()
        .map(|order| Ok(parse_sorts(&order.sort_expr_nodes, ctx, codec)?))
        .collect::<Result<Vec<_>>>()?;
    // the files' schema: the table's without its partition columns
    let file_fields = schema
        .fields()
        .iter()
        .filter(|field| {
            !partition_columns
                .iter()
                .any(|(name, _)| name == field.name())
        })
        .cloned()
        .collect::<Vec<_>>();
    let file_schema = Schema::new_with_metadata(file_fields, schema.metadata().clone());
    let options = ListingOptions::new(Arc::new(format))
        .with_file_extension(&node.file_extension)
        .with_table_partition_cols(partition_columns)
        .with_file_sort_order(file_sort_order);
    let config = ListingTableConfig::new_with_multi_paths(paths)
        .with_listing_options(options)
        .with_schema(Arc::new(file_schema));
    let table = ListingTable::try_new(config)?
        .with_cache(ctx.runtime_env().cache_manager.get_file_statistic_cache())
        .with_definition(node.definition.clone());
    Ok(Arc::new(VariantParquetTable::new(table)?))
}

/// A table's locations as messages (URL, glob and name, which DataFusion's own encoding drops).
fn encode_paths(paths: &[ListingTableUrl]) -> Vec<TablePath> {
    paths
        .iter()
        .map(|path| TablePath {
            url: path.get_url().to_string(),
            glob: path
                .get_glob()
                .as_ref()
                .map(|glob| glob.as_str().to_string()),
            table_ref: path.get_table_ref().clone().map(Into::into),
        })
        .collect()
}

/// The locations [`encode_paths`] wrote (at least one).
fn decode_paths(paths: &[TablePath]) -> Result<Vec<ListingTableUrl>> {
    if paths.is_empty() {
        return Err(corrupt("a table", "no location"));
    }
    paths
        .iter()
        .map(|path| {
            let url = url::Url::parse(&path.url).map_err(|e| corrupt("a table location", e))?;
            let location = ListingTableUrl::try_new(url, None)?;
            let location = match &path.glob {
                Some(glob) => location.with_glob(glob)?,
                None => location,
            };
            Ok(match &path.table_ref {
                Some(name) => location.with_table_ref(
                    TableReference::try_from(name.clone())
                        .map_err(|e| corrupt("a table name", e))?,
                ),
                None => location,
            })
        })
        .collect()
}

/// JSON read options as a message.
pub(super) fn encode_json_options(options: &JsonReadOptions) -> JsonOptionsNode {
    let (names, values) = options.to_pairs().into_iter().unzip();
    JsonOptionsNode { names, values }
}

/// The options [`encode_json_options`] wrote.
pub(super) fn decode_json_options(node: &JsonOptionsNode) -> Result<JsonReadOptions> {
    if node.names.len() != node.values.len() {
        return Err(corrupt(
            "JSON read options",
            "names and values differ in number",
        ));
    }
    JsonReadOptions::from_pairs(
        node.names
            .iter()
            .map(String::as_str)
            .zip(node.values.iter().map(String::as_str)),
    )
}

/// A JSON table as a message.
pub(super) fn encode_json_table(table: &VariantJsonTable) -> JsonTableNode {
    JsonTableNode {
        paths: encode_paths(table.urls()),
        options: Some(encode_json_options(table.options())),
    }
}

/// The JSON table `node` describes.
pub(super) fn decode_json_table(node: &JsonTableNode) -> Result<Arc<dyn TableProvider>> {
    let options = decode_json_options(required(&node.options, "a JSON table's options")?)?;
    Ok(Arc::new(VariantJsonTable::with_urls(
        decode_paths(&node.paths)?,
        options,
    )?))
}
