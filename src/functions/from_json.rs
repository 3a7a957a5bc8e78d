//! `from_json(json_str, 'variant' [, options])`: Spark 4.0's way to JSON text as a VARIANT.
//! The text is parsed as `parse_json` parses it; Spark's modes decide what a malformed record
//! gives: NULL (`PERMISSIVE`, the default) or an error (`FAILFAST`). Empty or blank text is NULL
//! in both, as in Spark. Other schemas (structs, arrays, maps) are not supported.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, invoke_unary, variant_return_field};
use super::parse_json::{OnError, parse_json_array};
use crate::variant_array::variant_data_type;

/// The `from_json` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FromJson {
    signature: Signature,
}

impl Default for FromJson {
    fn default() -> Self {
        FromJson {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Parses JSON text into a VARIANT, as Spark 4.0's from_json with the schema 'variant' \
         (the only schema supported). The text is read as parse_json reads it. The mode option \
         says what a malformed record gives: PERMISSIVE (the default) NULL, FAILFAST an error. \
         Empty or blank text is NULL.",
        "from_json(json_str, 'variant' [, map('mode', 'FAILFAST')])",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(from_json('{\"a\": [1, 2]}', 'variant')), \
         from_json('{oops', 'variant') IS NULL;\n{\"a\":[1,2]} | true\n```",
    )
    .with_argument("json_str", "A string holding one JSON value.")
    .with_argument("schema", "'variant'.")
    .with_argument(
        "options",
        "A map of options: mode (PERMISSIVE or FAILFAST).",
    )
    .build()
});

/// What the options map says of malformed records.
fn on_error(options: Option<&ColumnarValue>) -> Result<OnError> {
    let Some(options) = options else {
        return Ok(OnError::Null);
    };
    let ColumnarValue::Scalar(ScalarValue::Map(map)) = options else {
        return exec_err!(
            "from_json: the options must be a constant map, e.g. map('mode', 'FAILFAST')"
        );
    };
    let mut on_error = OnError::Null;
    if map.is_empty() || map.is_null(0) {
        return Ok(on_error);
    }
    let entries = map.value(0);
    let (keys, values) = (entries.column(0), entries.column(1));
    let text = |array: &dyn Array, i: usize| -> Option<String> {
        let value = ScalarValue::try_from_array(array, i).ok()?;
        value.try_as_str().flatten().map(str::to_string)
    };
    for i in 0..entries.len() {
        let (Some(key), value) = (text(keys, i), text(values, i)) else {
            return exec_err!("from_json: option names are text");
        };
        if !key.eq_ignore_ascii_case("mode") {
            return exec_err!("from_json: option '{key}' is not supported (only 'mode')");
        }
        on_error = match value.as_deref().map(str::to_ascii_uppercase).as_deref() {
            Some("PERMISSIVE") => OnError::Null,
            Some("FAILFAST") => OnError::Fail,
            Some("DROPMALFORMED") => {
                return exec_err!(
                    "from_json: the DROPMALFORMED mode is not supported: acceptable modes are \
                     PERMISSIVE and FAILFAST (as in Spark)"
                );
            }
            other => {
                return exec_err!(
                    "from_json: unknown mode {}: acceptable modes are PERMISSIVE and FAILFAST",
                    other.unwrap_or("NULL")
                );
            }
        };
    }
    Ok(on_error)
}

/// Whether `schema` (the second argument, as planned) is the text `variant`.
fn is_variant_schema(schema: Option<&ScalarValue>) -> bool {
    schema
        .and_then(|s| s.try_as_str().flatten())
        .is_some_and(|s| s.trim().eq_ignore_ascii_case("variant"))
}

impl ScalarUDFImpl for FromJson {
    fn name(&self) -> &str {
        "from_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let text = |t: &DataType| match t {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(t.clone()),
            DataType::Null => Ok(DataType::Utf8),
            other => plan_err!("from_json expects JSON text, got {other}"),
        };
        match arg_types {
            [json, schema] => Ok(vec![text(json)?, text(schema)?]),
            [json, schema, options @ DataType::Map(..)] => {
                Ok(vec![text(json)?, text(schema)?, options.clone()])
            }
            [_, _, other] => plan_err!(
                "from_json: the options must be a map (Spark's INVALID_OPTIONS.NON_MAP_FUNCTION: \
                 use map('mode', 'FAILFAST')), got {other}"
            ),
            _ => plan_err!(
                "from_json expects 2 or 3 arguments (json_str, 'variant' [, options]), got {}",
                arg_types.len()
            ),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let schema = args.scalar_arguments.get(1).copied().flatten();
        if !is_variant_schema(schema) {
            let shown = schema.map_or("a value that is not a literal".to_string(), |s| {
                s.to_string()
            });
            return plan_err!(
                "from_json: the schema must be the literal 'variant' (struct, array and map \
                 schemas are not supported), got {shown}"
            );
        }
        // options already a literal are checked here; a call (`map('mode', ..)`) is folded into
        // one before it runs, and checked then (as is a column, which is refused)
        if let Some(options) = args.scalar_arguments.get(2).copied().flatten() {
            on_error(Some(&ColumnarValue::Scalar(options.clone())))?;
        }
        variant_return_field(&args)
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let on_error = on_error(args.args.get(2))?;
        args.args.truncate(1);
        invoke_unary(self.name(), args, |a| {
            parse_json_array(self.name(), a, on_error, true)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `from_json` function.
pub fn from_json_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(FromJson::default())));
    Arc::clone(&UDF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_variant_schema() {
        for good in ["variant", "VARIANT", " Variant "] {
            assert!(is_variant_schema(Some(&ScalarValue::from(good))), "{good}");
        }
        for bad in ["int", "v variant", "struct<a: variant>"] {
            assert!(!is_variant_schema(Some(&ScalarValue::from(bad))), "{bad}");
        }
        assert!(!is_variant_schema(None));
    }
}
