//! `variant_delete(variant, path [, ...])`: removes fields or array elements (Spark 4.3).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::DOC_SECTION_VARIANT;
use super::mutate::{invoke_delete, mutator_return_field};
use crate::variant_array::variant_data_type;

/// The `variant_delete` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantDelete {
    signature: Signature,
}

impl Default for VariantDelete {
    fn default() -> Self {
        VariantDelete {
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Removes the object fields and array elements at the given paths, applied left to right (later elements shift left). Missing targets and SQL NULL paths are skipped; a SQL NULL variant gives NULL.",
        "variant_delete(variant, path [, ...])",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(variant_delete(parse_json('{\"a\":1,\"b\":[1,2]}'), '$.a', '$.b[0]'));\n{\"b\":[2]}\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "One or more paths in variant_get's grammar.")
    .build()
});

impl ScalarUDFImpl for VariantDelete {
    fn name(&self) -> &str {
        "variant_delete"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        mutator_return_field(self.name(), &args, false)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_delete(self.name(), args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_delete` function.
pub fn variant_delete_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantDelete::default())));
    Arc::clone(&UDF)
}
