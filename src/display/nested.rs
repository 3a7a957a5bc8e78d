//! Turning variants into JSON text for printing, wherever they sit in a result: top-level
//! columns, struct fields, list elements and map values.
//!
//! [`display_variants`] adds a final projection to a query's [`DataFrame`] that passes every
//! column containing a variant through [`VariantDisplay`], keeping column names and qualifiers.
//! The JSON text is produced by the same kernel as `to_json`; the resulting Utf8 fields carry
//! the canonical extension name `arrow.json`, so the JSON printers can embed the text as JSON
//! values instead of quoting it as strings.
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::metadata::FieldMetadata;

use crate::arrow_nested::with_children_converted;
use datafusion::common::utils::take_function_args;
use datafusion::common::{Column, Result};
use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::codec::SessionTimeZone;
use crate::functions::common::session_time_zone;
use crate::functions::to_json::variant_array_to_json;
use crate::variant_array::{EXTENSION_NAME_KEY, contains_variant, is_variant_like};

/// The canonical Arrow extension name of Utf8 columns holding JSON text.
pub const JSON_EXTENSION_NAME: &str = "arrow.json";

/// True when `field` holds JSON text (extension `arrow.json`).
pub fn is_json_field(field: &Field) -> bool {
    field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(JSON_EXTENSION_NAME)
}

/// `field` with every variant inside replaced by a nullable Utf8 `arrow.json` field.
pub fn display_field(field: &Field) -> Field {
    if is_variant_like(field) {
        let metadata = HashMap::from([(
            EXTENSION_NAME_KEY.to_string(),
            JSON_EXTENSION_NAME.to_string(),
        )]);
        return Field::new(field.name(), DataType::Utf8, true).with_metadata(metadata);
    }
    let data_type = match field.data_type() {
        DataType::Struct(fields) => DataType::Struct(display_fields(fields)),
        DataType::List(f) => DataType::List(Arc::new(display_field(f))),
        DataType::LargeList(f) => DataType::LargeList(Arc::new(display_field(f))),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(Arc::new(display_field(f)), *n),
        DataType::Map(f, sorted) => DataType::Map(Arc::new(display_field(f)), *sorted),
        other => other.clone(),
    };
    field.clone().with_data_type(data_type)
}

fn display_fields(fields: &Fields) -> Fields {
    fields.iter().map(|f| display_field(f)).collect()
}

/// Converts `array` (of `field`'s type) to the type of [`display_field`]`(field)`.
pub fn display_array(field: &Field, array: &ArrayRef, tz: &SessionTimeZone) -> Result<ArrayRef> {
    if !contains_variant(field) {
        return Ok(Arc::clone(array));
    }
    if is_variant_like(field) {
        return variant_array_to_json("variant display", array, tz);
    }
    let new_field = display_field(field);
    with_children_converted(array, new_field.data_type(), |f, c, _| {
        display_array(f, c, tz)
    })
}

/// The internal function `variant_display(x)`: `x` with every variant inside rendered as JSON
/// text (see the module documentation). Not registered in the session; used by
/// [`display_variants`] only.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantDisplay {
    signature: Signature,
}

impl Default for VariantDisplay {
    fn default() -> Self {
        VariantDisplay {
            // Volatile: never constant-folded, which would turn the result into a `ScalarValue`.
            signature: Signature::any(1, Volatility::Volatile),
        }
    }
}

impl ScalarUDFImpl for VariantDisplay {
    fn name(&self) -> &str {
        "variant_display"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let field = Field::new("x", arg_types[0].clone(), true);
        Ok(display_field(&field).data_type().clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(display_field(&args.arg_fields[0])))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_time_zone(self.name(), &args)?;
        let [arg] = take_function_args(self.name(), &args.args)?;
        // A scalar argument is expanded rather than returned as a scalar: a `ScalarValue` would
        // drop the `arrow.json` metadata of nested fields (e.g. of list elements).
        let array = arg.to_array(args.number_rows)?;
        Ok(ColumnarValue::Array(display_array(
            &args.arg_fields[0],
            &array,
            &tz,
        )?))
    }
}

/// The [`VariantDisplay`] function.
pub fn variant_display_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantDisplay::default())));
    Arc::clone(&UDF)
}

/// Returns `df` with every column containing a variant rendered as JSON text (Utf8 with the
/// `arrow.json` extension), names and qualifiers unchanged; `df` itself when it has none.
pub fn display_variants(df: DataFrame) -> Result<DataFrame> {
    if !df.schema().fields().iter().any(|f| contains_variant(f)) {
        return Ok(df);
    }
    let udf = variant_display_udf();
    let exprs: Vec<Expr> = df
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::new(qualifier.cloned(), field.name()));
            if contains_variant(field) {
                let metadata = FieldMetadata::from(display_field(field).metadata().clone());
                udf.call(vec![column]).alias_qualified_with_metadata(
                    qualifier.cloned(),
                    field.name(),
                    Some(metadata),
                )
            } else {
                column
            }
        })
        .collect();
    df.select(exprs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::StringArray;
    use datafusion::prelude::SessionContext;

    async fn display(sql: &str) -> Result<Vec<datafusion::arrow::array::RecordBatch>> {
        let ctx = SessionContext::new();
        ctx.register_udf(
            crate::functions::parse_json::parse_json_udf()
                .as_ref()
                .clone(),
        );
        display_variants(ctx.sql(sql).await?)?.collect().await
    }

    #[tokio::test]
    async fn top_level_variants_become_json_text() -> Result<()> {
        let batches = display(
            "SELECT 1 AS id, parse_json('{\"b\":[1,2.50,null],\"a\":\"x\"}') AS payload, \
             CAST(NULL AS VARCHAR) AS s",
        )
        .await?;
        let schema = batches[0].schema();
        assert_eq!(schema.field(1).name(), "payload");
        assert_eq!(schema.field(1).data_type(), &DataType::Utf8);
        assert!(is_json_field(schema.field(1)));
        assert!(!is_json_field(schema.field(2)));
        let column = batches[0]
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(column.value(0), r#"{"a":"x","b":[1,2.5,null]}"#);
        Ok(())
    }

    #[tokio::test]
    async fn nested_variants_become_json_text() -> Result<()> {
        let batches = display(
            "SELECT named_struct('v', parse_json('[true]'), 'n', 1) AS s, \
             make_array(parse_json('1'), parse_json('{\"k\":null}')) AS l",
        )
        .await?;
        let schema = batches[0].schema();
        let DataType::Struct(fields) = schema.field(0).data_type() else {
            panic!("{schema:?}")
        };
        assert!(is_json_field(&fields[0]));
        let DataType::List(item) = schema.field(1).data_type() else {
            panic!("{schema:?}")
        };
        assert_eq!(item.data_type(), &DataType::Utf8);
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
        assert!(text.contains("{v: [true], n: 1}"), "{text}");
        assert!(text.contains(r#"[1, {"k":null}]"#), "{text}");
        Ok(())
    }

    #[tokio::test]
    async fn plans_without_variants_are_unchanged() -> Result<()> {
        let ctx = SessionContext::new();
        let df = ctx.sql("SELECT 1 AS a").await?;
        let plan = df.logical_plan().clone();
        assert_eq!(display_variants(df)?.logical_plan(), &plan);
        Ok(())
    }
}
