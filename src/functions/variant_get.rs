//! `variant_get(v, path [, type])`: extracts the value at a path, cast to a type.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, StringBuilder, StructArray, new_null_array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, PathArg, check_variant_args, codec_error, parse_path, session_time_zone,
    single_row_scalar,
};
use crate::cast::extract::extract_column;
use crate::cast::target_type::parse_target_type;
use crate::cast::{CastOptions, OnCastError, TypedBuilder};
use crate::codec::{Unreadable, Variant, VariantPath};
use crate::shredding::{extract_shredded, variant_column};
use crate::variant_array::{variant_data_type, variant_field};

/// The `variant_get` UDF. `path` holds the literal path parsed at planning time (by its
/// `simplify`).
///
/// In its *deferred* form (`variant_get_deferred`, made by the analyzer from a typed
/// `variant_get` of a column, see `variant_get_checked::defer_cast_errors`), a value that cannot be cast gives NULL
/// and the error it would raise is returned beside it: `Struct{value, error}`. The optimizer may
/// then move the extraction toward the scan (a Parquet scan reads it from shredded leaves) while
/// `VariantGetChecked` (`variant_get_checked.rs`), left where the call was
/// written, raises the errors of the rows that get there: a filter that drops a row also drops
/// its error, as when the call is evaluated in place.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGet {
    signature: Signature,
    path: Option<VariantPath>,
    deferred: bool,
}

impl VariantGet {
    /// `variant_get` (or, `deferred`, `variant_get_deferred`) with its path parsed at planning,
    /// if it was.
    pub(crate) fn planned(path: Option<VariantPath>, deferred: bool) -> Self {
        VariantGet {
            signature: get_signature(),
            path,
            deferred,
        }
    }
}

impl Default for VariantGet {
    fn default() -> Self {
        VariantGet::planned(None, false)
    }
}

/// The type of a deferred `variant_get` result: the value and, where it could not be cast, the
/// error message.
pub(crate) fn deferred_type(value: &Field) -> DataType {
    DataType::Struct(Fields::from(vec![
        value.clone().with_name("value").with_nullable(true),
        Field::new("error", DataType::Utf8, true),
    ]))
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

/// Where the optimizer may move a `variant_get`/`try_variant_get` call: toward the scan (as
/// `get_field`) when it reads a column (or a movable expression) with a literal path and type, so
/// that a Parquet scan gets it in its projection or filter and reads only the shredded leaves the
/// path needs; otherwise where it is.
pub(crate) fn get_placement(args: &[ExpressionPlacement]) -> ExpressionPlacement {
    match args.split_first() {
        Some((
            ExpressionPlacement::Column | ExpressionPlacement::MoveTowardsLeafNodes,
            literals,
        )) if !literals.is_empty()
            && literals.iter().all(|p| *p == ExpressionPlacement::Literal) =>
        {
            ExpressionPlacement::MoveTowardsLeafNodes
        }
        _ => ExpressionPlacement::KeepInPlace,
    }
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

/// How a call treats values that cannot be cast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GetMode {
    /// `variant_get`: an error.
    Strict,
    /// `try_variant_get`: NULL.
    Try,
    /// `variant_get_deferred`: NULL, and the error returned beside the value.
    Deferred,
}

/// Runs `variant_get`, `try_variant_get` or the deferred form over a batch.
pub(crate) fn invoke_get(
    function: &'static str,
    mode: GetMode,
    preparsed: Option<&VariantPath>,
    args: ScalarFunctionArgs,
) -> Result<ColumnarValue> {
    let tz = session_time_zone(function, &args)?;
    let opts = CastOptions {
        function,
        suggestion: "try_variant_get",
        on_error: match mode {
            GetMode::Strict => OnCastError::Raise,
            GetMode::Try => OnCastError::Null,
            GetMode::Deferred => OnCastError::Defer(Default::default()),
        },
        tz,
    };
    let all_scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let rows = if all_scalar { 1 } else { args.number_rows };
    let return_type = match (mode, args.return_field.data_type()) {
        (GetMode::Deferred, DataType::Struct(fields)) => fields[0].data_type().clone(),
        (_, data_type) => data_type.clone(),
    };
    let mut iter = args.args.into_iter();
    let (Some(variant), Some(path)) = (iter.next(), iter.next()) else {
        return exec_err!("{function} expects 2 or 3 arguments");
    };
    let variant = variant.into_array(rows)?;
    let result = match path {
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
            match path {
                Some(path) => get_column(&variant, path, &return_type, &opts)?,
                None => new_null_array(&return_type, rows),
            }
        }
        paths @ ColumnarValue::Array(_) => {
            let column = variant_column(&variant)?;
            let variants = column.rows()?;
            let mut out = TypedBuilder::try_new(&return_type, rows)?;
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
                opts.end_row(i);
            }
            out.finish()?
        }
    };
    let result = if mode == GetMode::Deferred {
        with_deferred_errors(result, opts.take_deferred(), args.return_field.data_type())?
    } else {
        result
    };
    if all_scalar {
        Ok(ColumnarValue::Scalar(single_row_scalar(&result)?))
    } else {
        debug_assert_eq!(result.len(), rows);
        Ok(ColumnarValue::Array(result))
    }
}

/// The deferred result: `value` beside the errors of its rows.
pub(crate) fn with_deferred_errors(
    value: ArrayRef,
    errors: Vec<(usize, DataFusionError)>,
    data_type: &DataType,
) -> Result<ArrayRef> {
    let DataType::Struct(fields) = data_type else {
        return exec_err!("variant_get_deferred returns a struct, not {data_type}");
    };
    let messages: ArrayRef = if errors.is_empty() {
        new_null_array(&DataType::Utf8, value.len())
    } else {
        let mut messages = StringBuilder::new();
        let mut next = errors.into_iter().peekable();
        for row in 0..value.len() {
            match next.next_if(|(r, _)| *r == row) {
                Some((_, DataFusionError::Execution(message))) => messages.append_value(message),
                Some((_, other)) => messages.append_value(other.to_string()),
                None => messages.append_null(),
            }
        }
        Arc::new(messages.finish())
    };
    Ok(Arc::new(StructArray::try_new(
        fields.clone(),
        vec![value, messages],
        None,
    )?))
}

/// `variant_get` of one constant `path` over every row of `variant` (a variant column of any
/// layout, shredded ones included), cast to `return_type` with `opts`.
pub(crate) fn get_column(
    variant: &ArrayRef,
    path: &VariantPath,
    return_type: &DataType,
    opts: &CastOptions,
) -> Result<ArrayRef> {
    if return_type == &DataType::Utf8View {
        // the text as STRING, in the view layout
        let text = get_column(variant, path, &DataType::Utf8, opts)?;
        return Ok(cast(&text, return_type)?);
    }
    let function = opts.function;
    if let Some(s) = variant.as_struct_opt()
        && s.column_by_name("typed_value").is_some()
        && let Some(found) = extract_shredded(s, path, return_type)
    {
        return Ok(found);
    }
    let rows = variant.len();
    let column = variant_column(variant)?;
    let variants = column.rows()?;
    // The commonest targets: one whole-column loop.
    if let Some(result) = extract_column(&variants, rows, path, return_type, opts)? {
        return Ok(result);
    }
    // The lean byte-level lookup; a row it cannot read is re-read by `navigate`, which gives the
    // precise error.
    let mut out = TypedBuilder::try_new(return_type, rows)?;
    let lookup = path.raw_lookup();
    for i in 0..rows {
        let Some((m, v)) = variants.bytes(i) else {
            out.append_null();
            continue;
        };
        match lookup.find(m, v) {
            Ok(None) => out.append_null(),
            Ok(Some(leaf)) => {
                if !out.append_bytes(m, leaf, opts)? {
                    out.append_null();
                }
            }
            Err(Unreadable) => {
                let v = Variant::try_new(m, v).map_err(|e| codec_error(function, e))?;
                let found = path.navigate(v).map_err(|e| codec_error(function, e))?;
                emit(&mut out, found, opts)?;
            }
        }
        opts.end_row(i);
    }
    out.finish()
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
        if self.deferred {
            "variant_get_deferred"
        } else {
            "variant_get"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("variant_get: the return type depends on the arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = get_return_field("variant_get", &args)?;
        Ok(if self.deferred {
            Arc::new(Field::new(self.name(), deferred_type(&field), true))
        } else {
            field
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mode = if self.deferred {
            GetMode::Deferred
        } else {
            GetMode::Strict
        };
        invoke_get("variant_get", mode, self.path.as_ref(), args)
    }

    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        specialize(self.name(), args, &self.path, |path| {
            ScalarUDF::from(VariantGet::planned(Some(path), self.deferred))
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        // A typed call in place may fail: it stays where it is written (the analyzer makes the
        // movable, deferred form of the ones that read columns).
        if !self.deferred && args.len() == 3 {
            return ExpressionPlacement::KeepInPlace;
        }
        get_placement(args)
    }
}

impl VariantGet {
    /// True for the deferred form (see [`VariantGet`]).
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// The literal path, parsed at planning time (None before simplification or when the path
    /// is not a literal).
    pub fn path(&self) -> Option<&VariantPath> {
        self.path.as_ref()
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
        let ctx = datafusion::prelude::SessionContext::new();
        ctx.register_udf(super::super::parse_json::parse_json_udf().as_ref().clone());
        ctx.register_udf(variant_get_udf().as_ref().clone());
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
