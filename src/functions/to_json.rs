//! `to_json(v)`: renders a VARIANT as JSON text with Spark's formatting.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{
    DOC_SECTION_VARIANT, check_variant_args, codec_error, invoke_unary, plain_return_field,
    session_time_zone, shredded_column,
};
use crate::codec::bytes::reserve_at_sample_rate;
use crate::codec::{JsonRowWriter, SessionTimeZone};
use crate::shredding::{shredded_to_json, variant_column};

/// The `to_json` UDF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToJson {
    signature: Signature,
}

impl Default for ToJson {
    fn default() -> Self {
        ToJson {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Renders a VARIANT as JSON text: object keys in stored (sorted) order, no whitespace, \
         decimals without trailing zeros, doubles as Java prints them, binary as base64, \
         timestamps in the session time zone. A variant null gives 'null'; SQL NULL gives NULL.",
        "to_json(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT to_json(parse_json('{\"b\":1e10,\"a\":1.10}'));\n\
         {\"a\":1.1,\"b\":1.0E10}\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

/// Renders every row of a variant column as JSON text (SQL NULL stays NULL).
pub fn variant_array_to_json(
    function: &str,
    array: &ArrayRef,
    tz: &SessionTimeZone,
) -> Result<ArrayRef> {
    if let Some(shredded) = shredded_column(array) {
        // straight from the shredded columns, without reassembling the values
        return shredded_to_json(function, shredded, tz);
    }
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let n = column.len();
    let mut values: Vec<u8> = Vec::with_capacity(n * 32);
    let mut offsets: Vec<i32> = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut validity = Vec::with_capacity(n);
    let mut any_null = false;
    let mut writer = JsonRowWriter::default();
    for i in 0..n {
        match rows.bytes(i) {
            Some((m, v)) => {
                writer
                    .write(&mut values, m, v, tz)
                    .map_err(|e| codec_error(function, e))?;
                validity.push(true);
            }
            None => {
                validity.push(false);
                any_null = true;
            }
        }
        reserve_at_sample_rate(&mut values, i + 1, n);
        if values.len() > i32::MAX as usize {
            return exec_err!("{function}: output exceeds 2 GiB in one batch");
        }
        offsets.push(values.len() as i32);
    }
    let nulls = any_null.then(|| NullBuffer::from(validity));
    // Every row is UTF-8 by construction (`JsonRowWriter` writes checked keys and strings and
    // ASCII otherwise), which tests confirm in debug builds; arrow's check would read it all again.
    debug_assert!(
        std::str::from_utf8(&values).is_ok(),
        "to_json wrote invalid UTF-8"
    );
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    // SAFETY: offsets start at 0 and grow with each row up to `values.len()` (checked to fit in
    // i32), every row boundary ends a complete JSON text, and the text is UTF-8 (above).
    Ok(Arc::new(unsafe {
        StringArray::new_unchecked(offsets, values.into(), nulls)
    }))
}

impl ScalarUDFImpl for ToJson {
    fn name(&self) -> &str {
        "to_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args(self.name(), args.arg_fields, 0)?;
        Ok(plain_return_field(self.name(), DataType::Utf8, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_time_zone(self.name(), &args)?;
        invoke_unary(self.name(), args, |a| {
            variant_array_to_json(self.name(), a, &tz)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The `to_json` function.
pub fn to_json_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ToJson::default())));
    Arc::clone(&UDF)
}
