//! The options of `read_json_variant` and of `STORED AS JSON_VARIANT` tables, parsed once when
//! the table is made.
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;

use crate::variant_array::variant_field;

/// The default largest document, in bytes: a longer one is a bad record, so that one huge line
/// is refused instead of being held whole (option `maxDocumentBytes`).
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// What a document that cannot be parsed does (Spark's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The query stops with an error naming the file, the line and an excerpt (the default).
    FailFast,
    /// The row is kept with the variant NULL (and the text in the corrupt-record column, if any).
    Permissive,
    /// The row is left out, and counted in the scan's `bad_records` metric.
    DropMalformed,
}

impl Mode {
    /// The option's value, as Spark spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::FailFast => "FAILFAST",
            Mode::Permissive => "PERMISSIVE",
            Mode::DropMalformed => "DROPMALFORMED",
        }
    }
}

/// How the files are read: parsed from the name/value pairs a user gives (keys ignore case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonReadOptions {
    /// What a bad document does.
    pub mode: Mode,
    /// Each file holds one document, or one top-level array whose elements are the documents;
    /// otherwise each line is a document (NDJSON).
    pub multi_line: bool,
    /// The files' compression; `None`: from each file's extension (`.gz`, `.bz2`, `.xz`, `.zst`).
    pub compression: Option<FileCompressionType>,
    /// The name of the variant column (Spark's `singleVariantColumn`).
    pub variant_column: String,
    /// A column holding the text of each bad document (PERMISSIVE), NULL on good rows.
    pub corrupt_column: Option<String>,
    /// The largest document; a longer one is a bad record.
    pub max_document_bytes: usize,
}

impl Default for JsonReadOptions {
    fn default() -> Self {
        JsonReadOptions {
            mode: Mode::FailFast,
            multi_line: false,
            compression: None,
            variant_column: "v".to_string(),
            corrupt_column: None,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
        }
    }
}

/// The option names, as the documentation spells them.
pub const OPTION_NAMES: [&str; 6] = [
    "mode",
    "multiLine",
    "compression",
    "singleVariantColumn",
    "columnNameOfCorruptRecord",
    "maxDocumentBytes",
];

impl JsonReadOptions {
    /// Options from name/value pairs; an unknown name or a bad value is an error that says what
    /// is accepted. A name may carry DataFusion's `format.` prefix (as `CREATE EXTERNAL TABLE`
    /// passes it).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut options = JsonReadOptions::default();
        for (key, value) in pairs {
            let key = key.strip_prefix("format.").unwrap_or(key);
            options.set(key, value)?;
        }
        if options.corrupt_column.as_deref() == Some(options.variant_column.as_str()) {
            return plan_err!(
                "read_json_variant: columnNameOfCorruptRecord and singleVariantColumn both name \
                 '{}'",
                options.variant_column
            );
        }
        Ok(options)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let Some(name) = OPTION_NAMES
            .iter()
            .find(|name| name.eq_ignore_ascii_case(key))
        else {
            return plan_err!(
                "read_json_variant: unknown option '{key}' (options: {})",
                OPTION_NAMES.join(", ")
            );
        };
        let bad = |expected: &str| {
            plan_datafusion_err!("read_json_variant: option {name} takes {expected}, not '{value}'")
        };
        match *name {
            "mode" => {
                self.mode = match value.to_ascii_uppercase().as_str() {
                    "FAILFAST" => Mode::FailFast,
                    "PERMISSIVE" => Mode::Permissive,
                    "DROPMALFORMED" => Mode::DropMalformed,
                    _ => return Err(bad("FAILFAST, PERMISSIVE or DROPMALFORMED")),
                }
            }
            "multiLine" => {
                self.multi_line = match value.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            "compression" => {
                self.compression = match value.to_ascii_lowercase().as_str() {
                    "auto" | "" => None,
                    "none" | "uncompressed" => Some(FileCompressionType::UNCOMPRESSED),
                    "gzip" | "gz" => Some(FileCompressionType::GZIP),
                    "bzip2" | "bz2" => Some(FileCompressionType::BZIP2),
                    "xz" => Some(FileCompressionType::XZ),
                    "zstd" | "zst" => Some(FileCompressionType::ZSTD),
                    _ => return Err(bad("auto, none, gzip, bzip2, xz or zstd")),
                }
            }
            "singleVariantColumn" => {
                if value.is_empty() {
                    return Err(bad("a column name"));
                }
                self.variant_column = value.to_string();
            }
            "columnNameOfCorruptRecord" => {
                self.corrupt_column = (!value.is_empty()).then(|| value.to_string());
            }
            "maxDocumentBytes" => {
                self.max_document_bytes = match value.trim().parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(bad("a positive number of bytes")),
                }
            }
            _ => unreachable!("every name in OPTION_NAMES is matched"),
        }
        Ok(())
    }

    /// The options as name/value pairs that [`Self::from_pairs`] reads back (how plans carry
    /// them).
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = vec![
            ("mode".to_string(), self.mode.name().to_string()),
            ("multiLine".to_string(), self.multi_line.to_string()),
            (
                "compression".to_string(),
                self.compression
                    .map_or("auto", |c| compression_name(&c))
                    .to_string(),
            ),
            (
                "singleVariantColumn".to_string(),
                self.variant_column.clone(),
            ),
            (
                "maxDocumentBytes".to_string(),
                self.max_document_bytes.to_string(),
            ),
        ];
        if let Some(corrupt) = &self.corrupt_column {
            pairs.push(("columnNameOfCorruptRecord".to_string(), corrupt.clone()));
        }
        pairs
    }

    /// The table's columns: the variant, then the corrupt-record text if asked for.
    pub fn schema(&self) -> SchemaRef {
        let mut fields = vec![variant_field(&self.variant_column, true)];
        if let Some(corrupt) = &self.corrupt_column {
            fields.push(Field::new(corrupt, DataType::Utf8, true));
        }
        Arc::new(Schema::new(fields))
    }

    /// The compression of the file at `path`: the option's, or the one its extension names.
    pub fn compression_of(&self, path: &str) -> FileCompressionType {
        self.compression
            .unwrap_or_else(|| compression_by_extension(path))
    }
}

impl JsonReadOptions {
    /// Writes the options a plan shows (`mode=..`, then `multiLine`, `compression` where set),
    /// `separator` between them.
    pub fn write_separated(&self, f: &mut fmt::Formatter<'_>, separator: &str) -> fmt::Result {
        write!(f, "mode={}", self.mode.name())?;
        if self.multi_line {
            write!(f, "{separator}multiLine=true")?;
        }
        if let Some(c) = &self.compression {
            write!(f, "{separator}compression={}", compression_name(c))?;
        }
        Ok(())
    }
}

impl fmt::Display for JsonReadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_separated(f, ", ")
    }
}

/// The compression a file's extension names (none for any other extension).
pub fn compression_by_extension(path: &str) -> FileCompressionType {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".gz") || lower.ends_with(".gzip") {
        FileCompressionType::GZIP
    } else if lower.ends_with(".bz2") {
        FileCompressionType::BZIP2
    } else if lower.ends_with(".xz") {
        FileCompressionType::XZ
    } else if lower.ends_with(".zst") || lower.ends_with(".zstd") {
        FileCompressionType::ZSTD
    } else {
        FileCompressionType::UNCOMPRESSED
    }
}

fn compression_name(c: &FileCompressionType) -> &'static str {
    match *c {
        FileCompressionType::GZIP => "gzip",
        FileCompressionType::BZIP2 => "bzip2",
        FileCompressionType::XZ => "xz",
        FileCompressionType::ZSTD => "zstd",
        _ => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_ignore_case_and_the_format_prefix() {
        let o = JsonReadOptions::from_pairs([
            ("MODE", "permissive"),
            ("format.multiline", "TRUE"),
            ("columnnameofcorruptrecord", "_corrupt_record"),
            ("compression", "ZSTD"),
        ])
        .unwrap();
        assert_eq!(o.mode, Mode::Permissive);
        assert!(o.multi_line);
        assert_eq!(o.corrupt_column.as_deref(), Some("_corrupt_record"));
        assert_eq!(o.compression, Some(FileCompressionType::ZSTD));
        let back =
            JsonReadOptions::from_pairs(o.to_pairs().iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn bad_options_say_what_is_accepted() {
        let e = JsonReadOptions::from_pairs([("mod", "x")]).unwrap_err();
        assert!(e.to_string().contains("unknown option 'mod'"), "{e}");
        let e = JsonReadOptions::from_pairs([("mode", "lenient")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("takes FAILFAST, PERMISSIVE or DROPMALFORMED, not 'lenient'"),
            "{e}"
        );
        let e = JsonReadOptions::from_pairs([("maxDocumentBytes", "0")]).unwrap_err();
        assert!(e.to_string().contains("a positive number"), "{e}");
        let e = JsonReadOptions::from_pairs([("columnNameOfCorruptRecord", "v")]).unwrap_err();
        assert!(e.to_string().contains("both name 'v'"), "{e}");
    }

    #[test]
    fn compression_follows_the_extension() {
        let o = JsonReadOptions::default();
        assert_eq!(o.compression_of("a/b.json.gz"), FileCompressionType::GZIP);
        assert_eq!(o.compression_of("b.JSON.BZ2"), FileCompressionType::BZIP2);
        assert_eq!(o.compression_of("b.xz"), FileCompressionType::XZ);
        assert_eq!(o.compression_of("b.ndjson.zst"), FileCompressionType::ZSTD);
        assert_eq!(
            o.compression_of("b.json"),
            FileCompressionType::UNCOMPRESSED
        );
    }
}
