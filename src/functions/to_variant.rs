//! `to_variant(x)`: any SQL value as a VARIANT (also what `CAST(x AS VARIANT)` plans to).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, invoke_unary, variant_return_field};
use crate::from_arrow::{arrow_to_variant, check_convertible};
use crate::variant_array::variant_data_type;

/// The `to_variant` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToVariant {
    signature: Signature,
}

impl Default for ToVariant {
    fn default() -> Self {
        ToVariant {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> =
    LazyLock::new(|| {
        Documentation::builder(
        DOC_SECTION_VARIANT,
        "Converts any SQL value to a VARIANT: numbers keep their type (unsigned integers widen), \
         decimals become variant decimals, timestamps keep their time zone kind, lists become \
         arrays, structs and string-keyed maps become objects, NULLs inside become variant nulls. \
         A SQL NULL gives NULL. `CAST(x AS VARIANT)` does the same.",
        "to_variant(expression)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(to_variant(named_struct('b', 1.50, 'a', [1, 2])));\n\
         {\"a\":[1,2],\"b\":1.50}\n```",
    )
    .with_argument("expression", "A value of any type but intervals, durations and unions.")
    .build()
    });

impl ScalarUDFImpl for ToVariant {
    fn name(&self) -> &str {
        "to_variant"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_convertible(self.name(), &args.arg_fields[0])?;
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

/// The `to_variant` function.
pub fn to_variant_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ToVariant::default())));
    Arc::clone(&UDF)
}
