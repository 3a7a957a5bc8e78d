//! `variant_get_checked(variant_get_deferred(v, path, type))`: the value of a typed
//! `variant_get` whose extraction the optimizer may move toward the scan, with its cast errors
//! raised here, where the call was written, for the rows that get here (see
//! [`VariantGet`]). Not callable from SQL: the analyzer builds it.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};

use super::common::single_row_scalar;
use super::variant_get::{VariantGet, variant_get_udf};
use crate::cast::target_type::parse_target_type;
use crate::variant_array::variant_data_type;

/// The checking UDF (see the module documentation).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGetChecked {
    signature: Signature,
}

impl Default for VariantGetChecked {
    fn default() -> Self {
        VariantGetChecked {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for VariantGetChecked {
    fn name(&self) -> &str {
        "variant_get_checked"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("variant_get_checked: the return type depends on the argument")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        match args.arg_fields.first().map(|f| f.data_type()) {
            Some(DataType::Struct(fields)) if fields.len() == 2 => Ok(Arc::new(
                Field::new("variant_get", fields[0].data_type().clone(), true)
                    .with_metadata(fields[0].metadata().clone()),
            )),
            other => plan_err!("variant_get_checked expects a deferred variant_get, got {other:?}"),
        }
    }

    /// The name of the call it stands for (`variant_get(v, path, type)`), so that result columns
    /// are named as the query wrote them.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        match args {
            [Expr::ScalarFunction(ScalarFunction { func, args })]
                if func.inner().is::<VariantGet>() =>
            {
                variant_get_udf().schema_name(args)
            }
            _ => Ok(format!(
                "{}({})",
                self.name(),
                args.iter()
                    .map(|a| a.schema_name().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [arg] = datafusion::common::utils::take_function_args(self.name(), args.args)?;
        match arg {
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(checked(&a)?)),
            ColumnarValue::Scalar(s) => {
                let value = checked(&s.to_array_of_size(1)?)?;
                Ok(ColumnarValue::Scalar(single_row_scalar(&value)?))
            }
        }
    }
}

/// The values of a deferred result, or the error of its first row that has one.
fn checked(deferred: &ArrayRef) -> Result<ArrayRef> {
    let Some(s) = deferred.as_struct_opt().filter(|s| s.num_columns() == 2) else {
        return exec_err!(
            "variant_get_checked expects a deferred variant_get, got {}",
            deferred.data_type()
        );
    };
    let errors = s.column(1).as_string::<i32>();
    if errors.null_count() < errors.len() {
        let row = (0..errors.len()).find(|&i| errors.is_valid(i));
        if let Some(row) = row {
            return Err(DataFusionError::Execution(errors.value(row).to_string()));
        }
    }
    Ok(Arc::clone(s.column(0)))
}

/// `call` (a `variant_get` call) in the deferred form checked where it stands, when it is
/// typed (not VARIANT, which cannot fail), strict and reads a column (or an expression the
/// optimizer can move toward the scan); otherwise `call` itself.
pub(crate) fn defer_cast_errors(func: &Arc<ScalarUDF>, args: Vec<Expr>) -> Expr {
    let deferrable = func
        .inner()
        .downcast_ref::<VariantGet>()
        .is_some_and(|get| !get.is_deferred())
        && args.len() == 3
        && args.iter().skip(1).all(|a| matches!(a, Expr::Literal(..)))
        && !matches!(
            &args[2],
            Expr::Literal(t, _) if t.try_as_str().flatten().and_then(|t| parse_target_type(t).ok())
                == Some(variant_data_type())
        )
        && matches!(
            args[0].placement(),
            ExpressionPlacement::Column | ExpressionPlacement::MoveTowardsLeafNodes
        );
    if !deferrable {
        return Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), args));
    }
    let path = func
        .inner()
        .downcast_ref::<VariantGet>()
        .and_then(|get| get.path().cloned());
    let deferred = ScalarUDF::from(VariantGet::planned(path, true));
    Expr::ScalarFunction(ScalarFunction::new_udf(
        variant_get_checked_udf(),
        vec![Expr::ScalarFunction(ScalarFunction::new_udf(
            Arc::new(deferred),
            args,
        ))],
    ))
}

/// The `variant_get_checked` function.
pub fn variant_get_checked_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantGetChecked::default())));
    Arc::clone(&UDF)
}
