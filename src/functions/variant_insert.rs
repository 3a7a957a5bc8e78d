//! `variant_insert(variant, path, value)`: adds a field or inserts an array element along a path (Spark 4.3).
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

/// The `variant_insert` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantInsert {
    signature: Signature,
}

impl Default for VariantInsert {
    fn default() -> Self {
        VariantInsert {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Inserts value at path: a new object field (an error if the key exists), or an array element at the index, shifting later elements right and padding with variant nulls past the end. Missing intermediate objects are created; a segment that meets the wrong kind of value gives an error. Any SQL NULL argument gives NULL.",
        "variant_insert(variant, path, value)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(variant_insert(parse_json('[\"a\",\"b\"]'), '$[1]', 'z'));\n[\"a\",\"z\",\"b\"]\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "A path in variant_get's grammar (`$.a.b[0]`).")
    .with_argument("value", "The value to write; any type, converted as CAST(value AS VARIANT).")
    .build()
});

impl ScalarUDFImpl for VariantInsert {
    fn name(&self) -> &str {
        "variant_insert"
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
        invoke_mutator(self.name(), Edit::Insert, false, args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_insert` function.
pub fn variant_insert_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantInsert::default())));
    Arc::clone(&UDF)
}
