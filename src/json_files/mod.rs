//! JSON files into VARIANT: `read_json_variant(location, ..)` and `CREATE EXTERNAL TABLE ..
//! STORED AS JSON_VARIANT`, one row per document (NDJSON lines, or with `multiLine` a file's
//! one document or the elements of its top-level array), parsed as `parse_json` parses.
//!
//! - [`options`]: the options (Spark's `mode`, `multiLine`, `columnNameOfCorruptRecord`, ...).
//! - [`documents`]: bytes to documents to variant batches, chunk by chunk.
//! - [`source`]: the file scan (`FileSource`): local files and object stores, compression,
//!   byte ranges of uncompressed NDJSON files, the memory pool, the `bad_records` metric.
//! - [`table`]: the `FileFormat`, the table and the `STORED AS JSON_VARIANT` factory.
//! - [`read_json_variant`]: the table function, and the planner for its named arguments.
pub mod documents;
pub mod options;
pub mod read_json_variant;
pub mod source;
pub mod table;

pub use options::{DEFAULT_MAX_DOCUMENT_BYTES, JsonReadOptions, Mode};
pub use read_json_variant::{
    READ_JSON_VARIANT, ReadJsonVariant, ReadJsonVariantPlanner, read_json_variant_table,
};
pub use source::VariantJsonSource;
pub use table::{JSON_VARIANT, VariantJsonFormat, VariantJsonTable, VariantJsonTableFactory};
