//! `is_valid_variant(v)`: true when a variant's bytes are a valid encoding (Spark 4.2).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, BooleanArray};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, check_variant_args, invoke_unary, plain_return_field, shredded_column,
};
use crate::codec::validate;
use crate::shredding::{shredded_validity, variant_column};

/// The `is_valid_variant` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IsValidVariant {
    signature: Signature,
}

impl Default for IsValidVariant {
    fn default() -> Self {
        IsValidVariant {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns true when the VARIANT's metadata and value bytes are a valid encoding (bounds, \
         offsets, UTF-8, field ids, unique keys, nesting depth at most 1000), false when they are \
         not, NULL for SQL NULL. A shredded value is checked as stored: its metadata, every \
         residual value, the combinations of value and typed_value the shredding spec allows, \
         and its shredded field names in the metadata.",
        "is_valid_variant(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT is_valid_variant(parse_json('[{\"b\":true,\"a\":0}]'));\ntrue\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

/// Whether each row of the variant column `array` (any layout) is a valid variant, NULL for SQL
/// NULL.
pub fn is_valid_variant_array(array: &ArrayRef) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // checked where the file holds each value, without reassembling it
        return shredded_validity(shredded);
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let out: BooleanArray = (0..column.len())
        .map(|i| rows.bytes(i).map(|(m, v)| validate(m, v).is_ok()))
        .collect();
    Ok(Arc::new(out))
}

impl ScalarUDFImpl for IsValidVariant {
    fn name(&self) -> &str {
        "is_valid_variant"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), DataType::Boolean, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, is_valid_variant_array)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `is_valid_variant` function.
pub fn is_valid_variant_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(IsValidVariant::default())));
    Arc::clone(&UDF)
}
