//! DataFusion's `coalesce`, `nvl` (`ifnull`) and `nvl2`, taking a variant beside other SQL
//! values: their type is then VARIANT, and [`crate::sql::VariantCoercion`] makes the other values
//! variants before DataFusion's type coercion. Everything else is DataFusion's function.
//!
//! They replace DataFusion's under the same names because a function's type is computed while
//! the query is planned, before any rewrite can run: without this, `coalesce(v:x, 'd')` fails
//! there, refusing to unify a struct with a string.
use std::sync::Arc;

use datafusion::arrow::datatypes::Field;
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature,
};

use crate::variant_array::{has_variant_shape, is_variant_like, variant_data_type, variant_field};

/// `coalesce`, `nvl` and `nvl2` as [`VariantChoice`]s, for registration over DataFusion's.
pub fn variant_choice_functions() -> Vec<Arc<ScalarUDF>> {
    use datafusion::functions::core::{coalesce, nvl, nvl2};
    [coalesce(), nvl(), nvl2()]
        .into_iter()
        .map(|inner| Arc::new(ScalarUDF::new_from_impl(VariantChoice::new(inner))))
        .collect()
}

/// One of DataFusion's functions that choose among their arguments, taking variants.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantChoice {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl VariantChoice {
    /// Wraps `inner` (`coalesce`, `nvl` or `nvl2`).
    pub fn new(inner: Arc<ScalarUDF>) -> Self {
        let signature = Signature::user_defined(inner.signature().volatility);
        Self { inner, signature }
    }

    /// The arguments a result is chosen from: all but nvl2's first, which is only tested.
    fn choices<T>(&self, args: &[T]) -> std::ops::RangeFrom<usize> {
        usize::from(self.inner.name() == "nvl2").min(args.len())..
    }
}

impl ScalarUDFImpl for VariantChoice {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        // As they are: [`crate::sql::VariantCoercion`] makes the other values variants before DataFusion's
        // type coercion runs, and a string cannot be declared coercible to a struct here.
        if arg_types[self.choices(arg_types)]
            .iter()
            .any(has_variant_shape)
        {
            return Ok(arg_types.to_vec());
        }
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .map(|t| Arc::new(Field::new("", t.clone(), true)))
            .collect();
        Ok(fields_with_udf(&fields, self.inner.as_ref())?
            .iter()
            .map(|f| f.data_type().clone())
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        if arg_types[self.choices(arg_types)]
            .iter()
            .any(has_variant_shape)
        {
            return Ok(variant_data_type());
        }
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let fields = args.arg_fields;
        if fields[self.choices(fields)]
            .iter()
            .any(|f| is_variant_like(f))
        {
            return Ok(Arc::new(variant_field(self.name(), true)));
        }
        self.inner.return_field_from_args(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn conditional_arguments<'a>(
        &self,
        args: &'a [Expr],
    ) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        self.inner.conditional_arguments(args)
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}
