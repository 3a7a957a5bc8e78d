//! `variant_array_length(v)`: the number of elements of a variant array, NULL for anything else.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, Int32Array};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, check_variant_args, codec_error, invoke_unary, plain_return_field,
    shredded_column,
};
use crate::codec::Value;
use crate::shredding::{TopLevel, for_each_top_level, variant_column};

/// The `variant_array_length` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantArrayLength {
    signature: Signature,
}

impl Default for VariantArrayLength {
    fn default() -> Self {
        VariantArrayLength {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns the number of elements of a VARIANT array; NULL when the value is not an array \
         (objects, scalars, variant null) and for SQL NULL, like Spark's json_array_length.",
        "variant_array_length(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT variant_array_length(parse_json('[1, [2, 3], {}]'));\n3\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

fn variant_array_length_array(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // from the top level of the shredded columns, without reassembling the rows
        let mut out = Int32Array::builder(array.len());
        for_each_top_level(shredded, |row| {
            out.append_option(match row {
                TopLevel::Array(n) => Some(n as i32),
                TopLevel::Residual(v) => match v.get().map_err(|e| codec_error(function, e))? {
                    Value::Array(a) => Some(a.len() as i32),
                    _ => None,
                },
                _ => None,
            });
            Ok(())
        })?;
        return Ok(Arc::new(out.finish()));
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let mut out = Int32Array::builder(column.len());
    for i in 0..column.len() {
        let length = match rows.get(i)? {
            Some(v) => match v.get().map_err(|e| codec_error(function, e))? {
                Value::Array(a) => Some(a.len() as i32),
                _ => None,
            },
            None => None,
        };
        out.append_option(length);
    }
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for VariantArrayLength {
    fn name(&self) -> &str {
        "variant_array_length"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), DataType::Int32, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| {
            variant_array_length_array(self.name(), a)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_array_length` function.
pub fn variant_array_length_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantArrayLength::default())));
    Arc::clone(&UDF)
}
