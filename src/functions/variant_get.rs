//! `variant_get(v, path [, type])`: extracts the value at a path, cast to a type.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, PathArg, check_variant_args, codec_error, parse_path, session_time_zone,
    single_row_scalar,
};
use crate::cast::extract::extract_column;
use crate::cast::target_type::parse_target_type;
use crate::cast::{CastOptions, TypedBuilder};
use crate::codec::{Unreadable, Variant, VariantPath};
use crate::shredding::extract_shredded;
use crate::variant_array::{VariantColumn, variant_data_type, variant_field};

/// The `variant_get` UDF. `path` holds the literal path parsed at planning time (see
/// [`specialize`]).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGet {
    signature: Signature,
    path: Option<VariantPath>,
}

impl Default for VariantGet {
    fn default() -> Self {
        VariantGet {
            signature: get_signature(),
            path: None,
        }
    }
}

/// At planning time (`simplify`), replaces a call whose path is a literal by a call to a UDF
/// instance holding the parsed path, so execution never parses it.
pub(crate) fn specialize(
    function: &str,
    args: Vec<Expr>,
    parsed: &Option<VariantPath>,
    make: impl FnOnce(VariantPath) -> ScalarUDF,
) -> Result<ExprSimplifyResult> {
    if parsed.is_some() {
        return Ok(ExprSimplifyResult::Original(args));
    }
    let text = match args.get(1) {
        Some(Expr::Literal(value, _)) => value.try_as_str().flatten(),
        _ => None,
    };
    let Some(text) = text else {
        return Ok(ExprSimplifyResult::Original(args));
    };
    let path = parse_path(function, text)?;
    Ok(ExprSimplifyResult::Simplified(Expr::ScalarFunction(
        ScalarFunction::new_udf(Arc::new(make(path)), args),
    )))
}

/// `(variant, path)` or `(variant, path, type)`.
pub(crate) fn get_signature() -> Signature {
    Signature::one_of(
        vec![TypeSignature::Any(2), TypeSignature::Any(3)],
        Volatility::Immutable,
    )
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Extracts the value at `path` from a VARIANT, cast to `type` (default VARIANT). A missing \
         path gives NULL; a value that cannot be cast is an error (see try_variant_get). Paths: \
         `$` then `.name`, `['name']`, `[\"name\"]` or `[index]`.",
        "variant_get(variant, path [, type])",
    )
    .with_sql_example(
        "```sql\n> SELECT variant_get(parse_json('{\"a\": {\"b\": [10, 20]}}'), '$.a.b[1]', 'int');\n\
         20\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .with_argument("path", "The extraction path, e.g. '$.a.b[0]'.")
    .with_argument(
        "type",
        "A string literal naming the result type: boolean, tinyint, smallint, int, bigint, float, \
         double, decimal(p,s), string, binary, date, timestamp, timestamp_ntz, variant, \
         array<T>, map<string,T>, struct<...>.",
    )
    .build()
});

/// The return field of `variant_get`/`try_variant_get`: checks the arguments, validates a
/// literal path and resolves the type string, all at planning time.
pub(crate) fn get_return_field(function: &str, args: &ReturnFieldArgs) -> Result<FieldRef> {
    check_variant_args(function, args.arg_fields, 0)?;
    match args.arg_fields[1].data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {}
        DataType::Dictionary(_, value)
            if matches!(
                value.as_ref(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) => {}
        other => return plan_err!("{function} expects a string path, got {other}"),
    }
    if let Some(Some(path)) = args.scalar_arguments.get(1)
        && let Some(Some(text)) = path.try_as_str()
    {
        VariantPath::parse(text)
            .map_err(|e| DataFusionError::Plan(format!("{e} in `{function}`")))?;
    }
    let data_type = match args.arg_fields.get(2) {
        None => variant_data_type(),
        Some(_) => {
            let text = args
                .scalar_arguments
                .get(2)
                .copied()
                .flatten()
                .and_then(ScalarValue::try_as_str)
                .flatten();
            let Some(text) = text else {
                return plan_err!("{function}: the type argument must be a string literal");
            };
            parse_target_type(text)
                .map_err(|e| DataFusionError::Plan(format!("{function}: {e}")))?
        }
    };
    Ok(if data_type == variant_data_type() {
        Arc::new(variant_field(function, true))
    } else {
        Arc::new(Field::new(function, data_type, true))
    })
}

/// Runs `variant_get` (strict) or `try_variant_get` over a batch.
pub(crate) fn invoke_get(
    function: &'static str,
    strict: bool,
    preparsed: Option<&VariantPath>,
    args: ScalarFunctionArgs,
) -> Result<ColumnarValue> {
    let opts = CastOptions {
        function,
        suggestion: "try_variant_get",
        strict,
        tz: session_time_zone(function, &args)?,
    };
    let all_scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let rows = if all_scalar { 1 } else { args.number_rows };
    let return_type = args.return_field.data_type().clone();
    let mut iter = args.args.into_iter();
    let (Some(variant), Some(path)) = (iter.next(), iter.next()) else {
        return exec_err!("{function} expects 2 or 3 arguments");
    };
    let variant = variant.into_array(rows)?;
    if let (ColumnarValue::Scalar(p), Some(s)) = (&path, variant.as_struct_opt())
        && let Some(Some(text)) = p.try_as_str()
        && s.column_by_name("typed_value").is_some()
        && let Some(found) = match preparsed {
            Some(path) => extract_shredded(s, path, &return_type),
            None => extract_shredded(s, &parse_path(function, text)?, &return_type),
        }
    {
        return Ok(if all_scalar {
            ColumnarValue::Scalar(single_row_scalar(&found)?)
        } else {
            ColumnarValue::Array(found)
        });
    }
    let column = VariantColumn::try_new(&variant)?;
    let variants = column.rows()?;
    let mut out = TypedBuilder::try_new(&return_type, rows)?;
    match path {
        ColumnarValue::Scalar(s) => {
            let parsed;
            let path = match s.try_as_str() {
                Some(Some(_)) if preparsed.is_some() => preparsed,
                Some(Some(text)) => {
                    parsed = parse_path(function, text)?;
                    Some(&parsed)
                }
                Some(None) => None,
                None if s.is_null() => None,
                None => return exec_err!("{function} expects a string path"),
            };
            // The commonest targets: one whole-column loop.
            if let Some(path) = path
                && let Some(result) = extract_column(&variants, rows, path, &return_type, &opts)?
            {
                return Ok(if all_scalar {
                    ColumnarValue::Scalar(single_row_scalar(&result)?)
                } else {
                    ColumnarValue::Array(result)
                });
            }
            // The lean byte-level lookup; a row it cannot read is re-read by `navigate`, which
            // gives the precise error.
            let lookup = path.map(|path| (path, path.raw_lookup()));
            for i in 0..rows {
                let (Some((path, lookup)), Some((m, v))) = (&lookup, variants.bytes(i)) else {
                    out.append_null();
                    continue;
                };
                match lookup.find(m, v) {
                    Ok(None) => out.append_null(),
                    Ok(Some(leaf)) => {
                        if !out.append_bytes(m, leaf, &opts)? {
                            out.append_null();
                        }
                    }
                    Err(Unreadable) => {
                        let v = Variant::try_new(m, v).map_err(|e| codec_error(function, e))?;
                        let found = path.navigate(v).map_err(|e| codec_error(function, e))?;
                        emit(&mut out, found, &opts)?;
                    }
                }
            }
        }
        paths @ ColumnarValue::Array(_) => {
            // Consecutive equal paths are parsed once.
            let mut paths = PathArg::try_new(function, paths)?;
            for i in 0..rows {
                let found = match (paths.get(function, i)?, variants.get(i)?) {
                    (Some(path), Some(v)) => {
                        path.navigate(v).map_err(|e| codec_error(function, e))?
                    }
                    _ => None,
                };
                emit(&mut out, found, &opts)?;
            }
        }
    }
    let result: ArrayRef = out.finish()?;
    if all_scalar {
        Ok(ColumnarValue::Scalar(single_row_scalar(&result)?))
    } else {
        debug_assert_eq!(result.len(), rows);
        Ok(ColumnarValue::Array(result))
    }
}

/// Appends a found value (cast), or NULL for a missing one or a failed `try_` cast.
fn emit(out: &mut TypedBuilder, found: Option<Variant<'_>>, opts: &CastOptions) -> Result<()> {
    match found {
        Some(found) => {
            if !out.append(found, opts)? {
                out.append_null();
            }
        }
        None => out.append_null(),
    }
    Ok(())
}

impl ScalarUDFImpl for VariantGet {
    fn name(&self) -> &str {
        "variant_get"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("variant_get: the return type depends on the arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        get_return_field(self.name(), &args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_get("variant_get", true, self.path.as_ref(), args)
    }

    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        specialize(self.name(), args, &self.path, |path| {
            ScalarUDF::from(VariantGet {
                signature: get_signature(),
                path: Some(path),
            })
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `variant_get` function.
pub fn variant_get_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantGet::default())));
    Arc::clone(&UDF)
}

#[cfg(test)]
mod tests {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};

    use super::*;

    /// The literal path of a query is parsed once, when the plan is optimized.
    #[tokio::test]
    async fn literal_paths_are_parsed_at_planning() {
        let ctx = crate::session_context();
        ctx.sql("CREATE TABLE t AS SELECT parse_json('{\"a\": [1]}') AS v")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let df = ctx
            .sql("SELECT variant_get(v, '$.a[0]', 'int') FROM t")
            .await
            .unwrap();
        let plan = df.into_optimized_plan().unwrap();
        let mut paths = Vec::new();
        plan.apply_expressions(|e| {
            e.apply(|e| {
                if let Expr::ScalarFunction(f) = e
                    && let Some(get) = f.func.inner().downcast_ref::<VariantGet>()
                {
                    paths.push(get.path.clone());
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
        .unwrap();
        assert_eq!(paths, vec![Some(VariantPath::parse("$.a[0]").unwrap())]);
    }
}
