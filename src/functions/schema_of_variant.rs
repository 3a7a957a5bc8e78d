//! `schema_of_variant(v)`: the schema of a VARIANT in Spark's type names.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, StringBuilder};
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
use crate::shredding::{shredded_schemas, variant_column};
use crate::variant_schema::VariantSchema;

/// The `schema_of_variant` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariant {
    signature: Signature,
}

impl Default for SchemaOfVariant {
    fn default() -> Self {
        SchemaOfVariant {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns the schema of a VARIANT in Spark's type names: VOID, BOOLEAN, BIGINT (every \
         integer width), DECIMAL(p,s), DOUBLE, FLOAT, STRING, BINARY, DATE, TIMESTAMP, \
         TIMESTAMP_NTZ, ARRAY<T>, OBJECT<key: T, ...> (keys sorted) and VARIANT where array \
         elements have no common type.",
        "schema_of_variant(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT schema_of_variant(parse_json('{\"b\": [1, 1.5], \"a\": null}'));\n\
         OBJECT<a: VOID, b: ARRAY<DECIMAL(21,1)>>\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

/// The schema text of every row of a variant column (SQL NULL stays NULL), shredded or not.
pub fn variant_array_schemas(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // straight from the shredded columns, without reassembling the values
        return shredded_schemas(function, shredded);
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let mut out = StringBuilder::with_capacity(column.len(), column.len() * 8);
    let mut text = String::new();
    for i in 0..column.len() {
        match rows.get(i)? {
            Some(v) => {
                text.clear();
                VariantSchema::write_of(v, &mut text).map_err(|e| codec_error(function, e))?;
                out.append_value(&text);
            }
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for SchemaOfVariant {
    fn name(&self) -> &str {
        "schema_of_variant"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), DataType::Utf8, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| variant_array_schemas(self.name(), a))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `schema_of_variant` function.
pub fn schema_of_variant_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(SchemaOfVariant::default())));
    Arc::clone(&UDF)
}
