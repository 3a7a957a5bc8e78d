//! The hidden scalar function `__shred_variant(v, shredding)` that `COPY`/`INSERT` with
//! `variant.shred.<column>` put before the sink: `v` shredded into the type of its second
//! argument, a typed NULL literal (so the type, whatever it is, travels with the plan as a
//! plain value, and the call by name: a receiving session resolves it once
//! `plan_codec::register_plan_functions` has registered it, with no codec of ours).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::shredding::{shred_variant, shredded_variant_type};
use crate::variant_array::variant_extension_metadata;

/// The name of the hidden function (not registered by `register_all`: plans carry it).
pub const SHRED_VARIANT_NAME: &str = "__shred_variant";

/// See the module.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShredVariant {
    signature: Signature,
}

impl Default for ShredVariant {
    fn default() -> Self {
        ShredVariant {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ShredVariant {
    fn name(&self) -> &str {
        SHRED_VARIANT_NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{SHRED_VARIANT_NAME}: the return type depends on the arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [variant, shredding] = args.arg_fields else {
            return plan_err!("{SHRED_VARIANT_NAME} takes a variant and a shredding type");
        };
        Ok(Arc::new(
            Field::new(
                self.name(),
                shredded_variant_type(shredding.data_type())?,
                variant.is_nullable(),
            )
            .with_metadata(variant_extension_metadata()),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (Some(variant), Some(shredding)) = (args.args.first(), args.arg_fields.get(1)) else {
            return exec_err!("{SHRED_VARIANT_NAME} takes a variant and a shredding type");
        };
        let variant = variant.to_array(args.number_rows)?;
        Ok(ColumnarValue::Array(shred_variant(
            &variant,
            shredding.data_type(),
        )?))
    }
}

/// The hidden function.
pub fn shred_variant_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ShredVariant::default())));
    Arc::clone(&UDF)
}
