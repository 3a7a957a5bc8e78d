//! `variant_strip_nulls(v [, include_arrays])`: removes variant nulls from objects (and arrays)
//! recursively (Spark 4.3).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, TypeSignature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, check_variant_args, codec_error, invoke_unary};
use super::mutate::constant_flag;
use crate::codec::{DEFAULT_MAX_DEPTH, Value, Variant, VariantBuilder, VariantError};
use crate::shredding::variant_column;
use crate::variant_array::{VariantArrayBuilder, variant_data_type, variant_field};

/// The `variant_strip_nulls` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantStripNulls {
    signature: Signature,
}

impl Default for VariantStripNulls {
    fn default() -> Self {
        VariantStripNulls {
            signature: Signature::one_of(
                vec![TypeSignature::Any(1), TypeSignature::Any(2)],
                Volatility::Immutable,
            ),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Removes, recursively, the object fields whose value is a variant null and (unless \
         include_arrays is false) the array elements that are variant nulls. A top-level variant \
         null stays null; emptied objects and arrays stay.",
        "variant_strip_nulls(variant [, include_arrays])",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(variant_strip_nulls(parse_json('{\"a\": {\"b\": null, \"c\": [1, null]}}')));\n\
         {\"a\":{\"c\":[1]}}\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("include_arrays", "A constant BOOLEAN, default true.")
    .build()
});

/// Copies `v` into `b` without its nulls.
#[recursive::recursive]
fn strip(
    b: &mut VariantBuilder,
    v: Variant<'_>,
    arrays: bool,
    depth: usize,
) -> Result<(), VariantError> {
    if depth > DEFAULT_MAX_DEPTH {
        return Err(VariantError::DepthLimitExceeded(DEFAULT_MAX_DEPTH));
    }
    match v.get()? {
        Value::Object(object) => {
            object.check_field_sizes()?;
            b.begin_object();
            for i in 0..object.len() {
                let field = object.value(i)?;
                if !field.is_null()? {
                    b.key(object.key(i)?);
                    strip(b, field, arrays, depth + 1)?;
                }
            }
            b.end_object()?;
        }
        Value::Array(array) => {
            b.begin_array();
            for e in array.iter() {
                let e = e?;
                if !(arrays && e.is_null()?) {
                    strip(b, e, arrays, depth + 1)?;
                }
            }
            b.end_array();
        }
        _ => b.append_variant(v)?,
    }
    Ok(())
}

fn strip_nulls_array(
    function: &str,
    array: &datafusion::arrow::array::ArrayRef,
    arrays: bool,
) -> Result<datafusion::arrow::array::ArrayRef> {
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let mut out = VariantArrayBuilder::with_capacity(column.len());
    let mut b = VariantBuilder::new();
    for i in 0..column.len() {
        let Some(v) = rows.get(i)? else {
            out.append_null();
            continue;
        };
        b.reset();
        strip(&mut b, v, arrays, 0)
            .and_then(|()| b.finish())
            .map_err(|e| codec_error(function, e))?;
        out.append_built(&b);
    }
    out.finish()
}

impl ScalarUDFImpl for VariantStripNulls {
    fn name(&self) -> &str {
        "variant_strip_nulls"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        if let Some(f) = args.arg_fields.get(1)
            && !matches!(f.data_type(), DataType::Boolean)
        {
            return plan_err!(
                "{} expects `include_arrays` to be a BOOLEAN, got {}",
                self.name(),
                f.data_type()
            );
        }
        Ok(Arc::new(variant_field(self.name(), true)))
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = constant_flag(self.name(), "include_arrays", args.args.get(1))?;
        args.args.truncate(1);
        args.arg_fields.truncate(1);
        invoke_unary(self.name(), args, |a| {
            strip_nulls_array(self.name(), a, arrays)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_strip_nulls` function.
pub fn variant_strip_nulls_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantStripNulls::default())));
    Arc::clone(&UDF)
}
