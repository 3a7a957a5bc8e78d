//! The `json` and `nd-json` printers. They write like datafusion-cli's (arrow-json, SQL NULL
//! fields omitted), except that Utf8 fields with the `arrow.json` extension — rendered variants —
//! are embedded as JSON values: `{"id":1,"payload":{"a":1}}`, not `{"id":1,"payload":"{\"a\":1}"}`.
use std::io::Write;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::writer::{
    JsonArray, JsonFormat, LineDelimited, NullableEncoder, Writer, WriterBuilder,
};
use datafusion::arrow::json::{Encoder, EncoderFactory, EncoderOptions};
use datafusion::error::Result;

use datafusion_parquet_variant::display::is_json_field;

/// An arrow-json [`EncoderFactory`] that writes the text of `arrow.json` string fields (top-level,
/// struct fields and list elements; not map values) as is.
#[derive(Debug, Default)]
pub struct RawJsonEncoderFactory;

/// Writes each string verbatim (it is JSON text already).
struct RawJsonEncoder<'a, F: Fn(usize) -> &'a str>(F);

impl<'a, F: Fn(usize) -> &'a str> Encoder for RawJsonEncoder<'a, F> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        out.extend_from_slice((self.0)(idx).as_bytes());
    }
}

/// arrow-json asks for the encoder of list elements with the list's field (and for nested lists
/// with the outermost one), so the field describing a string array may be a list's innermost
/// element field.
fn innermost_element(field: &FieldRef) -> &FieldRef {
    match field.data_type() {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => innermost_element(f),
        _ => field,
    }
}

impl EncoderFactory for RawJsonEncoderFactory {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> std::result::Result<Option<NullableEncoder<'a>>, ArrowError> {
        if !is_json_field(innermost_element(field)) {
            return Ok(None);
        }
        let nulls = array.nulls().cloned();
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                Box::new(RawJsonEncoder(move |i| a.value(i)))
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                Box::new(RawJsonEncoder(move |i| a.value(i)))
            }
            DataType::Utf8View => {
                let a = array.as_string_view();
                Box::new(RawJsonEncoder(move |i| a.value(i)))
            }
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, nulls)))
    }
}

/// A streaming JSON printer: a JSON array of objects (`json`) or one object per line (`nd-json`).
pub struct JsonPrinter<W: Write> {
    inner: PrinterKind<W>,
    rows: usize,
}

enum PrinterKind<W: Write> {
    Array(Writer<W, JsonArray>),
    Lines(Writer<W, LineDelimited>),
}

fn builder() -> WriterBuilder {
    WriterBuilder::new().with_encoder_factory(Arc::new(RawJsonEncoderFactory))
}

fn build<W: Write, F: JsonFormat>(out: W) -> Writer<W, F> {
    builder().build::<W, F>(out)
}

impl<W: Write> JsonPrinter<W> {
    /// A printer writing a JSON array (`line_delimited = false`) or NDJSON to `out`.
    pub fn new(out: W, line_delimited: bool) -> Self {
        let inner = if line_delimited {
            PrinterKind::Lines(build(out))
        } else {
            PrinterKind::Array(build(out))
        };
        JsonPrinter { inner, rows: 0 }
    }

    /// Writes the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        match &mut self.inner {
            PrinterKind::Array(w) => w.write(batch)?,
            PrinterKind::Lines(w) => w.write(batch)?,
        }
        Ok(())
    }

    /// The number of rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Ends the output (`]` and a newline for a JSON array; `[]` when there were no rows) and
    /// returns the writer.
    pub fn finish(self) -> Result<W> {
        Ok(match self.inner {
            PrinterKind::Array(mut w) => {
                w.finish()?;
                let mut out = w.into_inner();
                writeln!(out)?;
                out
            }
            PrinterKind::Lines(mut w) => {
                w.finish()?;
                w.into_inner()
            }
        })
    }
}

/// Writes `batches` as a JSON array or NDJSON into a string (for tests and small results).
pub fn batches_to_json_string(batches: &[RecordBatch], line_delimited: bool) -> Result<String> {
    let mut printer = JsonPrinter::new(Vec::new(), line_delimited);
    for batch in batches {
        printer.write(batch)?;
    }
    let bytes = printer.finish()?;
    Ok(String::from_utf8(bytes).expect("arrow-json writes UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;
    use datafusion_parquet_variant::display::display_variants;

    async fn json(sql: &str, line_delimited: bool) -> Result<String> {
        let ctx = SessionContext::new();
        datafusion_parquet_variant::register_all(&ctx)?;
        let batches = display_variants(ctx.sql(sql).await?)?.collect().await?;
        batches_to_json_string(&batches, line_delimited)
    }

    #[tokio::test]
    async fn variants_are_embedded() -> Result<()> {
        let sql = "SELECT id, try_parse_json(j) AS payload, s FROM (VALUES (1, '{\"a\":1}', 'x'), \
                   (2, 'null', NULL), (3, 'not json', '\"q\"')) AS t(id, j, s) ORDER BY id";
        assert_eq!(
            json(sql, true).await?,
            "{\"id\":1,\"payload\":{\"a\":1},\"s\":\"x\"}\n\
             {\"id\":2,\"payload\":null}\n\
             {\"id\":3,\"s\":\"\\\"q\\\"\"}\n"
        );
        assert_eq!(
            json(sql, false).await?,
            "[{\"id\":1,\"payload\":{\"a\":1},\"s\":\"x\"},{\"id\":2,\"payload\":null},\
             {\"id\":3,\"s\":\"\\\"q\\\"\"}]\n"
        );
        Ok(())
    }

    #[tokio::test]
    async fn nested_variants_are_embedded() -> Result<()> {
        let out = json(
            "SELECT make_array(parse_json('[1,\"b\"]'), NULL) AS l, \
             named_struct('v', parse_json('2.50')) AS s",
            true,
        )
        .await?;
        assert_eq!(out, "{\"l\":[[1,\"b\"],null],\"s\":{\"v\":2.5}}\n");
        Ok(())
    }

    #[test]
    fn empty_array_output() -> Result<()> {
        assert_eq!(batches_to_json_string(&[], false)?, "[]\n");
        assert_eq!(batches_to_json_string(&[], true)?, "");
        Ok(())
    }
}
