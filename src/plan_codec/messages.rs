//! The protobuf messages our codecs write, beside DataFusion's own (which they embed where a
//! part of ours is one of DataFusion's: the Parquet scan under our source, the sink
//! configuration, the Parquet options).
use datafusion_proto::protobuf;

/// Every plan node our physical codec writes.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantPlanNode {
    #[prost(oneof = "variant_plan_node::Kind", tags = "1, 2, 3, 4, 5, 6, 7")]
    pub kind: Option<variant_plan_node::Kind>,
}

/// The kinds of [`VariantPlanNode`].
pub(crate) mod variant_plan_node {
    /// Which node.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Kind {
        #[prost(message, tag = "1")]
        Scan(super::VariantScanNode),
        #[prost(message, tag = "2")]
        Staged(super::StagedSinkNode),
        #[prost(message, tag = "3")]
        Sink(super::VariantSinkNode),
        #[prost(message, tag = "4")]
        JsonScan(super::JsonScanNode),
        #[prost(message, tag = "5")]
        Sample(super::InputSampleNode),
        #[prost(message, tag = "6")]
        DeltaAppend(super::DeltaAppendNode),
        #[prost(message, tag = "7")]
        DeltaChecks(super::DeltaChecksNode),
    }
}

/// Every expression our physical codec writes (its children travel as DataFusion's).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantExprNode {
    #[prost(oneof = "variant_expr_node::Kind", tags = "1")]
    pub kind: Option<variant_expr_node::Kind>,
}

/// The kinds of [`VariantExprNode`].
pub(crate) mod variant_expr_node {
    /// Which expression.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Kind {
        #[prost(message, tag = "1")]
        RenamedFields(super::RenamedFieldsNode),
    }
}

/// A Delta column's fields renamed as its table names them: the column as the table names it.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RenamedFieldsNode {
    #[prost(message, optional, tag = "1")]
    pub field: Option<protobuf::Field>,
}

/// A Parquet scan through [`VariantParquetSource`](crate::parquet::VariantParquetSource).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantScanNode {
    /// The same scan with DataFusion's `ParquetSource` (DataFusion's own encoding).
    #[prost(message, optional, tag = "1")]
    pub scan: Option<protobuf::PhysicalPlanNode>,
    /// Whether the scan reads through our per-file expression adapter.
    #[prost(bool, tag = "2")]
    pub variant_adapter: bool,
    /// Whether the scan skips files it cannot decode (`variant.ignore_corrupt_files`).
    #[prost(bool, tag = "3")]
    pub skip_corrupt_files: bool,
    /// Whether the scan skips files that are gone (`variant.ignore_missing_files`).
    #[prost(bool, tag = "4")]
    pub skip_missing_files: bool,
    /// The row selections of its files that have one (a Delta table's deletion vectors).
    #[prost(message, repeated, tag = "5")]
    pub row_selections: Vec<FileRowSelection>,
    /// How many files a Delta table's log ruled out before the scan (a count of its metrics).
    #[prost(uint64, optional, tag = "6")]
    pub files_pruned_by_log: Option<u64>,
}

/// The rows of one file a scan reads: runs of rows, a positive count selected, a negative one
/// skipped, in file order.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FileRowSelection {
    /// The file's object store path.
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(sint64, repeated, tag = "2")]
    pub runs: Vec<i64>,
}

/// An append to a Delta table (`delta::DeltaAppendExec`); its write plan travels as the
/// node's input.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeltaAppendNode {
    /// The table's root URL.
    #[prost(string, tag = "1")]
    pub root: String,
    /// The write's hidden folder (an object store path).
    #[prost(string, tag = "2")]
    pub folder: String,
    #[prost(uint64, tag = "3")]
    pub read_version: u64,
    /// The table's protocol as the log's JSON.
    #[prost(string, tag = "4")]
    pub protocol: String,
    /// The table's partition columns, in the order of the write's folders.
    #[prost(string, repeated, tag = "5")]
    pub partition_columns: Vec<String>,
}

/// The checks of the rows appended to a Delta table (`delta::DeltaChecksExec`); its input
/// travels as the node's input.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeltaChecksNode {
    /// The table's root URL.
    #[prost(string, tag = "1")]
    pub root: String,
    /// The table's columns, with their nullability at any depth.
    #[prost(message, optional, tag = "2")]
    pub table: Option<protobuf::Schema>,
    #[prost(message, repeated, tag = "3")]
    pub rules: Vec<DeltaRuleNode>,
}

/// One invariant or CHECK constraint of a Delta table.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeltaRuleNode {
    /// `invariant` or `check`.
    #[prost(string, tag = "1")]
    pub kind: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub sql: String,
    /// The expression, planned over the node's input.
    #[prost(message, optional, tag = "4")]
    pub expr: Option<protobuf::PhysicalExprNode>,
}

/// A `DataSinkExec` whose sink publishes staged files (`parquet::staged`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StagedSinkNode {
    /// The sink under the staging, as a `DataSinkExec` over a placeholder input (the real
    /// input travels once, as this node's input).
    #[prost(message, optional, tag = "1")]
    pub inner: Option<protobuf::PhysicalPlanNode>,
    /// The URL of the object store written to.
    #[prost(string, tag = "2")]
    pub store: String,
    /// Where the files are staged.
    #[prost(oneof = "Staging", tags = "3, 4")]
    pub staging: Option<Staging>,
}

/// Where one write stages its files (see `parquet::staged`); paths are object store paths,
/// already encoded.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Staging {
    /// One output file.
    #[prost(message, tag = "3")]
    File(StagedFile),
    /// A directory output.
    #[prost(message, tag = "4")]
    Directory(StagedDirectory),
}

/// A single output file: staged at `staged`, published as `target`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StagedFile {
    #[prost(string, tag = "1")]
    pub staged: String,
    #[prost(string, tag = "2")]
    pub target: String,
}

/// A directory output staged in the folder `staging`, names ending in `suffix`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StagedDirectory {
    #[prost(string, tag = "1")]
    pub staging: String,
    #[prost(string, tag = "2")]
    pub target: String,
    #[prost(string, tag = "3")]
    pub suffix: String,
}

/// [`VariantParquetSink`](crate::parquet::VariantParquetSink) under a `DataSinkExec`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantSinkNode {
    #[prost(message, optional, tag = "1")]
    pub config: Option<protobuf::FileSinkConfig>,
    #[prost(message, optional, tag = "2")]
    pub parquet_options: Option<protobuf::TableParquetOptions>,
    /// The `DataSinkExec`'s required input order.
    #[prost(message, repeated, tag = "3")]
    pub sort_order: Vec<protobuf::PhysicalSortExprNode>,
    /// Automatic shredding, when the sink does it.
    #[prost(message, optional, tag = "4")]
    pub auto: Option<AutoShreddingNode>,
    /// The input's order by variant paths the files record, as their footers hold it (empty:
    /// none).
    #[prost(string, tag = "5")]
    pub variant_order: String,
}

/// [`AutoShredding`](crate::parquet::AutoShredding).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct AutoShreddingNode {
    #[prost(uint64, repeated, tag = "1")]
    pub columns: Vec<u64>,
    #[prost(uint64, tag = "2")]
    pub sample_rows: u64,
    #[prost(uint64, tag = "3")]
    pub sample_bytes: u64,
    #[prost(uint64, tag = "4")]
    pub max_columns: u64,
    #[prost(uint64, tag = "5")]
    pub max_depth: u64,
    /// `InferenceRule::name`.
    #[prost(string, tag = "6")]
    pub rule: String,
    /// The sample of its input it infers from (of the whole input under a sort, else of each
    /// partition's first rows).
    #[prost(message, optional, tag = "7")]
    pub sample: Option<InputSampleNode>,
}

/// An [`InputSample`](crate::parquet::write::input_sample::InputSample): as the plan
/// node that takes it (over its one input), and as the sink's reference to it.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct InputSampleNode {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The sampler's columns, by name in its input (empty in the sink's reference).
    #[prost(string, repeated, tag = "2")]
    pub columns: Vec<String>,
    #[prost(uint64, tag = "3")]
    pub max_rows: u64,
    #[prost(uint64, tag = "4")]
    pub max_bytes: u64,
    /// How many columns it samples.
    #[prost(uint64, tag = "5")]
    pub width: u64,
    /// Whether it samples each partition's first rows (else the whole input).
    #[prost(bool, tag = "6")]
    pub partition_heads: bool,
}

/// [`VariantParquetFormatFactory`](crate::parquet::VariantParquetFormatFactory) (the file type
/// of `COPY .. STORED AS PARQUET`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantFormatNode {
    /// Its fixed Parquet options (`new_with_options`); absent: the session's.
    #[prost(message, optional, tag = "1")]
    pub parquet_options: Option<protobuf::TableParquetOptions>,
    /// The columns named in its shredding options, in order.
    #[prost(message, repeated, tag = "2")]
    pub shredding: Vec<ShreddedColumn>,
    /// Its inference rule (`InferenceRule::name`); empty: the session's.
    #[prost(string, tag = "3")]
    pub inference: String,
}

/// One column of [`ShreddingOptions`](crate::parquet::ShreddingOptions).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ShreddedColumn {
    #[prost(string, tag = "1")]
    pub column: String,
    /// Its shredding type; absent: written unshredded.
    #[prost(message, optional, tag = "2")]
    pub shredding: Option<protobuf::ArrowType>,
}

/// A [`VariantParquetTable`](crate::parquet::VariantParquetTable): a listing table over our
/// Parquet format (its schema travels beside, in DataFusion's scan node).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VariantTableNode {
    /// Where its files are.
    #[prost(message, repeated, tag = "1")]
    pub paths: Vec<TablePath>,
    /// The suffix its files must have ("" for any).
    #[prost(string, tag = "2")]
    pub file_extension: String,
    /// Its format: the Parquet options it reads with (always given) and its shredding.
    #[prost(message, optional, tag = "3")]
    pub format: Option<VariantFormatNode>,
    /// Its partition columns (Hive-style directories).
    #[prost(message, repeated, tag = "4")]
    pub partition_columns: Vec<protobuf::PartitionColumn>,
    /// The orders its files are declared to have.
    #[prost(message, repeated, tag = "5")]
    pub file_sort_order: Vec<protobuf::SortExprNodeCollection>,
    /// Its `CREATE EXTERNAL TABLE` statement, if it came from one.
    #[prost(string, optional, tag = "6")]
    pub definition: Option<String>,
}

/// One location of a table: a URL and the glob its files must match under it (DataFusion's
/// own encoding keeps the URL only).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TablePath {
    #[prost(string, tag = "1")]
    pub url: String,
    #[prost(string, optional, tag = "2")]
    pub glob: Option<String>,
    /// The name the table had when it was made (DataFusion's file listing cache is keyed by it).
    #[prost(message, optional, tag = "3")]
    pub table_ref: Option<protobuf::TableReference>,
}

/// A scan of JSON files through [`VariantJsonSource`](crate::json_files::VariantJsonSource).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JsonScanNode {
    /// The same scan with DataFusion's `JsonSource` (DataFusion's own encoding: the files, the
    /// schema, the projection).
    #[prost(message, optional, tag = "1")]
    pub scan: Option<protobuf::PhysicalPlanNode>,
    /// How the files are read.
    #[prost(message, optional, tag = "2")]
    pub options: Option<JsonOptionsNode>,
}

/// [`JsonReadOptions`](crate::json_files::JsonReadOptions), as the name/value pairs it reads.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JsonOptionsNode {
    #[prost(string, repeated, tag = "1")]
    pub names: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub values: Vec<String>,
}

/// A [`VariantJsonTable`](crate::json_files::VariantJsonTable): its locations and options.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JsonTableNode {
    #[prost(message, repeated, tag = "1")]
    pub paths: Vec<TablePath>,
    #[prost(message, optional, tag = "2")]
    pub options: Option<JsonOptionsNode>,
}
