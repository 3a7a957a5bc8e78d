//! `try_parse_json(json_str)`: like `parse_json`, but NULL where the input is not valid JSON.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, invoke_unary, variant_return_field};
use super::parse_json::{OnError, parse_json_array};
use crate::variant_array::variant_data_type;

/// The `try_parse_json` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TryParseJson {
    signature: Signature,
}

impl Default for TryParseJson {
    fn default() -> Self {
        TryParseJson {
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Parses a JSON string into a VARIANT like parse_json, returning NULL instead of an error \
         when the input is not valid JSON.",
        "try_parse_json(json_str)",
    )
    .with_sql_example("```sql\n> SELECT try_parse_json('{\"a\":1,}') IS NULL;\ntrue\n```")
    .with_argument("json_str", "A string holding one JSON value.")
    .build()
});

impl ScalarUDFImpl for TryParseJson {
    fn name(&self) -> &str {
        "try_parse_json"
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
            parse_json_array(self.name(), a, OnError::Null, false)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `try_parse_json` function.
pub fn try_parse_json_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(TryParseJson::default())));
    Arc::clone(&UDF)
}
