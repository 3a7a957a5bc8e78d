//! `is_variant_null(v)`: true only for a variant null; SQL NULL gives false, never NULL.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, BooleanArray};
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
use crate::shredding::{TopLevel, for_each_top_level, variant_column};

/// The `is_variant_null` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IsVariantNull {
    signature: Signature,
}

impl Default for IsVariantNull {
    fn default() -> Self {
        IsVariantNull {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns true when the VARIANT is a variant null (JSON null), false otherwise. \
         A SQL NULL input gives false.",
        "is_variant_null(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT is_variant_null(parse_json('null')), is_variant_null(parse_json('\"null\"'));\n\
         true, false\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

fn is_variant_null_array(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // from the top level of the shredded columns, without reassembling the rows
        let mut out = Vec::with_capacity(array.len());
        for_each_top_level(shredded, |row| {
            out.push(match row {
                TopLevel::Missing => true,
                TopLevel::Residual(v) => v.is_null().map_err(|e| codec_error(function, e))?,
                _ => false,
            });
            Ok(())
        })?;
        return Ok(Arc::new(BooleanArray::from(out)));
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let mut out = Vec::with_capacity(column.len());
    for i in 0..column.len() {
        let is_null = match rows.get(i)? {
            Some(v) => v.is_null().map_err(|e| codec_error(function, e))?,
            None => false,
        };
        out.push(is_null);
    }
    Ok(Arc::new(BooleanArray::from(out)))
}

impl ScalarUDFImpl for IsVariantNull {
    fn name(&self) -> &str {
        "is_variant_null"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), DataType::Boolean, false))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| is_variant_null_array(self.name(), a))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `is_variant_null` function.
pub fn is_variant_null_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(IsVariantNull::default())));
    Arc::clone(&UDF)
}
