//! `variant_object_keys(v)`: the keys of a variant object in stored order, NULL for anything else.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, check_variant_args, codec_error, invoke_unary, plain_return_field,
    shredded_column,
};
use crate::codec::{Value, Variant};
use crate::shredding::{TopLevel, for_each_top_level, variant_column};

/// The `variant_object_keys` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantObjectKeys {
    signature: Signature,
}

impl Default for VariantObjectKeys {
    fn default() -> Self {
        VariantObjectKeys {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns the keys of a VARIANT object as a list of strings, in stored (sorted) order; NULL \
         when the value is not an object and for SQL NULL, like Spark's json_object_keys.",
        "variant_object_keys(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT variant_object_keys(parse_json('{\"b\": 1, \"a\": {\"c\": 2}}'));\n\
         [a, b]\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

fn keys_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// Appends the keys of `v` when it is an object, a NULL otherwise.
fn append_keys(function: &str, out: &mut ListBuilder<StringBuilder>, v: Variant<'_>) -> Result<()> {
    match v.get().map_err(|e| codec_error(function, e))? {
        Value::Object(obj) => {
            for k in 0..obj.len() {
                out.values()
                    .append_value(obj.key(k).map_err(|e| codec_error(function, e))?);
            }
            out.append(true);
        }
        _ => out.append_null(),
    }
    Ok(())
}

fn variant_object_keys_array(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // from the top level of the shredded columns, without reassembling the rows
        let mut out = ListBuilder::with_capacity(StringBuilder::new(), array.len());
        for_each_top_level(shredded, |row| {
            match row {
                TopLevel::Object(keys) => {
                    for key in keys {
                        out.values().append_value(key);
                    }
                    out.append(true);
                }
                TopLevel::Residual(v) => append_keys(function, &mut out, v)?,
                _ => out.append_null(),
            }
            Ok(())
        })?;
        return Ok(Arc::new(out.finish()));
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let mut out = ListBuilder::with_capacity(StringBuilder::new(), column.len());
    for i in 0..column.len() {
        match rows.get(i)? {
            Some(v) => append_keys(function, &mut out, v)?,
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for VariantObjectKeys {
    fn name(&self) -> &str {
        "variant_object_keys"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(keys_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), keys_type(), true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| {
            variant_object_keys_array(self.name(), a)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_object_keys` function.
pub fn variant_object_keys_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantObjectKeys::default())));
    Arc::clone(&UDF)
}
