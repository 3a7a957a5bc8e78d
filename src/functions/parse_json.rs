//! `parse_json(json_str)`: parses JSON text into a VARIANT.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, for_each_string, invoke_unary, string_bytes, variant_return_field,
};
use crate::codec::{JsonParser, VariantBuilder, excerpt};
use crate::variant_array::{VariantArrayBuilder, variant_data_type};

/// The `parse_json` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParseJson {
    signature: Signature,
}

impl Default for ParseJson {
    fn default() -> Self {
        ParseJson {
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Parses a JSON string into a VARIANT. Integers become the smallest integer type that \
         holds them, numbers with a fraction and no exponent become decimals, numbers with an \
         exponent become doubles. Invalid JSON, duplicate keys, nesting deeper than 1000 and \
         content after the value are errors (see try_parse_json).",
        "parse_json(json_str)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(parse_json('{\"b\": 1.50, \"a\": [true, null]}'));\n\
         {\"a\":[true,null],\"b\":1.5}\n```",
    )
    .with_argument("json_str", "A string holding one JSON value.")
    .build()
});

/// What to do with rows that fail to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Raise an error naming the function and the input.
    Fail,
    /// Return SQL NULL for the row.
    Null,
}

/// Parses every row of a string column into variants; empty or blank text is NULL where
/// `blank_is_null` (`from_json`), else malformed.
pub(crate) fn parse_json_array(
    function: &str,
    array: &ArrayRef,
    on_error: OnError,
    blank_is_null: bool,
) -> Result<ArrayRef> {
    let mut parser = JsonParser::new();
    let mut builder = VariantBuilder::new();
    // A variant is rarely larger than its JSON text: reserving that much saves the output
    // buffers growing (and copying) while the batch is parsed.
    let text_bytes = string_bytes(array);
    let mut out = VariantArrayBuilder::with_byte_capacity(array.len(), text_bytes / 2, text_bytes);
    for_each_string(function, array, |_, s| {
        let Some(s) = s.filter(|s| !(blank_is_null && s.trim().is_empty())) else {
            out.append_null();
            return Ok(());
        };
        match parser.parse(s, &mut builder) {
            Ok(()) => out.append_built(&builder),
            Err(_) if on_error == OnError::Null => out.append_null(),
            Err(e) => {
                return Err(DataFusionError::Execution(format!(
                    "{function}: invalid JSON '{}': {e}",
                    excerpt(s)
                )));
            }
        }
        Ok(())
    })?;
    out.finish()
}

/// A variant column of `docs` parsed as `parse_json` parses them (for tests that need one).
#[cfg(test)]
pub(crate) fn json_variants(docs: impl IntoIterator<Item = String>) -> ArrayRef {
    let docs: datafusion::arrow::array::StringArray = docs.into_iter().map(Some).collect();
    parse_json_array(
        "parse_json",
        &(Arc::new(docs) as ArrayRef),
        OnError::Fail,
        false,
    )
    .expect("valid JSON")
}

impl ScalarUDFImpl for ParseJson {
    fn name(&self) -> &str {
        "parse_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        variant_return_field(&args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| {
            parse_json_array(self.name(), a, OnError::Fail, false)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `parse_json` function.
pub fn parse_json_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ParseJson::default())));
    Arc::clone(&UDF)
}
