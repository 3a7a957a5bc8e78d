//! `try_variant_get(v, path [, type])`: like `variant_get`, but NULL where the cast fails.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature,
};

use super::common::DOC_SECTION_VARIANT;
use super::variant_get::{
    GetMode, get_placement, get_return_field, get_signature, invoke_get, specialize,
};
use crate::codec::VariantPath;

/// The `try_variant_get` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TryVariantGet {
    signature: Signature,
    path: Option<VariantPath>,
}

impl TryVariantGet {
    /// `try_variant_get` with its path parsed at planning, if it was.
    pub(crate) fn planned(path: Option<VariantPath>) -> Self {
        TryVariantGet {
            path,
            ..Self::default()
        }
    }
}

impl Default for TryVariantGet {
    fn default() -> Self {
        TryVariantGet {
            signature: get_signature(),
            path: None,
        }
    }
}

static DOC: LazyLock<Documentation> =
    LazyLock::new(|| {
        Documentation::builder(
        DOC_SECTION_VARIANT,
        "Like variant_get, but a value that cannot be cast gives NULL (element-wise inside \
         arrays, maps and structs). An invalid path is still an error.",
        "try_variant_get(variant, path [, type])",
    )
    .with_sql_example(
        "```sql\n> SELECT try_variant_get(parse_json('{\"a\": \"x\"}'), '$.a', 'int');\nNULL\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "The extraction path, e.g. '$.a.b[0]'.")
    .with_argument("type", "A string literal naming the result type (see variant_get).")
    .build()
    });

impl ScalarUDFImpl for TryVariantGet {
    fn name(&self) -> &str {
        "try_variant_get"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("try_variant_get: the return type depends on the arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        get_return_field(self.name(), &args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_get("try_variant_get", GetMode::Try, self.path.as_ref(), args)
    }

    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        specialize(self.name(), args, &self.path, |path| {
            ScalarUDF::from(TryVariantGet {
                signature: get_signature(),
                path: Some(path),
            })
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        get_placement(args)
    }
}

impl TryVariantGet {
    /// The literal path, parsed at planning time (None before simplification or when the path
    /// is not a literal).
    pub fn path(&self) -> Option<&VariantPath> {
        self.path.as_ref()
    }
}

/// The `try_variant_get` function.
pub fn try_variant_get_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(TryVariantGet::default())));
    Arc::clone(&UDF)
}
