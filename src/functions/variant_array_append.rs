//! `variant_array_append(variant, path, value)`: appends to the array at a path (Spark 4.3).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::DOC_SECTION_VARIANT;
use super::mutate::{Edit, invoke_mutator, mutator_return_field};
use crate::variant_array::variant_data_type;

/// The `variant_array_append` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantArrayAppend {
    signature: Signature,
}

impl Default for VariantArrayAppend {
    fn default() -> Self {
        VariantArrayAppend {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Appends value to the array at path (`$` is the variant itself). A missing key or index returns the input unchanged; a target that is not an array, or a segment that meets the wrong kind of value, gives an error. Any SQL NULL argument gives NULL.",
        "variant_array_append(variant, path, value)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(variant_array_append(parse_json('[1, 2, 3]'), '$', 4));\n[1,2,3,4]\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "A path in variant_get's grammar; `$` for the variant itself.")
    .with_argument("value", "The value to write; any type, converted as CAST(value AS VARIANT).")
    .build()
});

impl ScalarUDFImpl for VariantArrayAppend {
    fn name(&self) -> &str {
        "variant_array_append"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        mutator_return_field(self.name(), &args, true)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_mutator(self.name(), Edit::Append, false, args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_array_append` function.
pub fn variant_array_append_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantArrayAppend::default())));
    Arc::clone(&UDF)
}
