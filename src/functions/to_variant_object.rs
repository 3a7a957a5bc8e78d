//! `to_variant_object(x)`: a struct, map or list as a VARIANT (Spark's constructor for objects).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, invoke_unary, variant_return_field};
use crate::from_arrow::{arrow_to_variant, check_convertible};
use crate::variant_array::{is_variant_field, variant_data_type};

/// The `to_variant_object` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToVariantObject {
    signature: Signature,
}

impl Default for ToVariantObject {
    fn default() -> Self {
        ToVariantObject {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Converts a struct or a map with string keys to a VARIANT object (and a list to a VARIANT \
         array), recursively; NULL fields become variant nulls. Other types are rejected.",
        "to_variant_object(expression)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(to_variant_object(named_struct('b', 1, 'a', NULL)));\n\
         {\"a\":null,\"b\":1}\n```",
    )
    .with_argument("expression", "A struct, map or list.")
    .build()
});

impl ScalarUDFImpl for ToVariantObject {
    fn name(&self) -> &str {
        "to_variant_object"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = &args.arg_fields[0];
        let nested = matches!(
            field.data_type(),
            DataType::Struct(_)
                | DataType::Map(..)
                | DataType::List(_)
                | DataType::LargeList(_)
                | DataType::FixedSizeList(..)
                | DataType::ListView(_)
                | DataType::LargeListView(_)
                | DataType::Null
        );
        if !nested || is_variant_field(field) {
            return plan_err!(
                "{} expects a struct, map or list argument, got {}",
                self.name(),
                if is_variant_field(field) {
                    "VARIANT".to_string()
                } else {
                    field.data_type().to_string()
                }
            );
        }
        check_convertible(self.name(), field)?;
        variant_return_field(&args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let field = Arc::clone(&args.arg_fields[0]);
        invoke_unary(self.name(), args, |a| {
            arrow_to_variant(self.name(), &field, a)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `to_variant_object` function.
pub fn to_variant_object_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ToVariantObject::default())));
    Arc::clone(&UDF)
}
