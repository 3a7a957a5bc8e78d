//! `try_variant_set(variant, path, value [, create_if_missing])`: like `variant_set`, but NULL where the update is not possible.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, TypeSignature, Volatility,
};

use super::common::DOC_SECTION_VARIANT;
use super::mutate::{Edit, constant_flag, invoke_mutator, mutator_return_field};
use crate::variant_array::variant_data_type;

/// The `try_variant_set` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TryVariantSet {
    signature: Signature,
}

impl Default for TryVariantSet {
    fn default() -> Self {
        TryVariantSet {
            signature: Signature::one_of(
                vec![TypeSignature::Any(3), TypeSignature::Any(4)],
                Volatility::Immutable,
            ),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Sets the field or array element at path to value, creating it (and missing intermediate objects, padding arrays with variant nulls) unless create_if_missing is false, in which case the input is returned unchanged. A segment that meets the wrong kind of value gives NULL. Any SQL NULL argument gives NULL.",
        "try_variant_set(variant, path, value [, create_if_missing])",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(try_variant_set(parse_json('{\"a\": {\"b\": 1}}'), '$.a.c', 2));\n{\"a\":{\"b\":1,\"c\":2}}\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "A path in variant_get's grammar (`$.a.b[0]`).")
    .with_argument("value", "The value to write; any type, converted as CAST(value AS VARIANT).")
    .with_argument("create_if_missing", "A constant BOOLEAN, default true.")
    .build()
});

impl ScalarUDFImpl for TryVariantSet {
    fn name(&self) -> &str {
        "try_variant_set"
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
        let create_if_missing = constant_flag(self.name(), "create_if_missing", args.args.get(3))?;
        invoke_mutator(self.name(), Edit::Set { create_if_missing }, true, args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `try_variant_set` function.
pub fn try_variant_set_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(TryVariantSet::default())));
    Arc::clone(&UDF)
}
