//! `variant_explode(v)` / `variant_explode_outer(v)`: one row per object field or array element,
//! with columns `pos INT, key STRING, value VARIANT` (Spark's generators).
//!
//! They are table functions, planned by [`crate::sql::explode`]: the argument becomes a list of
//! `(pos, key, value)` structs through the hidden scalar function here, which DataFusion's Unnest
//! then expands into rows, in one pass over the input. This file holds that list kernel and the
//! output columns.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, Int32Builder, ListArray, StringBuilder, StructArray};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, check_variant_args, codec_error, invoke_unary};
use crate::codec::Value;
use crate::shredding::variant_column;
use crate::variant_array::{VariantArrayBuilder, variant_field};

/// The output columns of `variant_explode`: `pos INT, key STRING, value VARIANT`, all nullable
/// (the `_outer` form pads with an all-NULL row).
pub fn explode_fields() -> Fields {
    Fields::from(vec![
        Field::new("pos", DataType::Int32, true),
        Field::new("key", DataType::Utf8, true),
        variant_field("value", true),
    ])
}

/// The type of the hidden list function: `List<Struct<pos, key, value>>`.
pub fn explode_list_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(
        DataType::Struct(explode_fields()),
        true,
    )))
}

/// The hidden scalar function behind `variant_explode`: the `(pos, key, value)` entries of each
/// row; NULL for SQL NULL, variant null and scalars, an empty list for empty containers.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantExplodeList {
    signature: Signature,
}

impl Default for VariantExplodeList {
    fn default() -> Self {
        VariantExplodeList {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

/// The name of the hidden list function (not registered: plans carry it by reference).
pub const EXPLODE_LIST_NAME: &str = "__variant_explode_list";

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Table function: one row per field of a VARIANT object (in stored, sorted key order) or \
         per element of a VARIANT array (key NULL), with columns pos, key, value. Scalars, variant \
         null, SQL NULL and empty containers give no rows; variant_explode_outer gives one \
         all-NULL row instead. Use it in FROM, also as `FROM t, LATERAL variant_explode(t.v) AS e`.",
        "variant_explode(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT * FROM variant_explode(parse_json('{\"a\": true, \"b\": 3.14}'));\n\
         0 a true\n1 b 3.14\n```",
    )
    .with_argument("variant", "A VARIANT value.")
    .build()
});

/// The documentation of the `variant_explode` table function.
pub fn variant_explode_documentation() -> &'static Documentation {
    &DOC
}

fn explode_list_array(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let n = column.len();
    let mut pos = Int32Builder::new();
    let mut keys = StringBuilder::new();
    let mut values = VariantArrayBuilder::with_capacity(n);
    let mut offsets: Vec<i32> = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut validity = Vec::with_capacity(n);
    let codec = |e| codec_error(function, e);
    for i in 0..n {
        let mut valid = false;
        if let Some(v) = rows.get(i)? {
            let metadata = v.metadata().bytes();
            match v.get().map_err(codec)? {
                Value::Object(object) => {
                    valid = true;
                    object.check_field_sizes().map_err(codec)?;
                    for k in 0..object.len() {
                        pos.append_value(k as i32);
                        keys.append_value(object.key(k).map_err(codec)?);
                        let field = object.value(k).map_err(codec)?;
                        let field = field.exact_value_bytes().map_err(codec)?;
                        values.append_part(metadata, field).map_err(codec)?;
                    }
                }
                Value::Array(elements) => {
                    valid = true;
                    for (k, e) in elements.iter().enumerate() {
                        pos.append_value(k as i32);
                        keys.append_null();
                        let element = e.map_err(codec)?.exact_value_bytes().map_err(codec)?;
                        values.append_part(metadata, element).map_err(codec)?;
                    }
                }
                _ => {}
            }
        }
        validity.push(valid);
        if values.len() > i32::MAX as usize {
            return exec_err!("{function}: too many rows in one batch");
        }
        offsets.push(values.len() as i32);
    }
    let entries = StructArray::try_new(
        explode_fields(),
        vec![
            Arc::new(pos.finish()),
            Arc::new(keys.finish()),
            values.finish()?,
        ],
        None,
    )?;
    let DataType::List(item) = explode_list_type() else {
        unreachable!()
    };
    Ok(Arc::new(ListArray::try_new(
        item,
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Arc::new(entries),
        Some(NullBuffer::from(validity)),
    )?))
}

impl ScalarUDFImpl for VariantExplodeList {
    fn name(&self) -> &str {
        EXPLODE_LIST_NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(explode_list_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_args("variant_explode", args.arg_fields, 0)?;
        Ok(Arc::new(Field::new(self.name(), explode_list_type(), true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| {
            explode_list_array("variant_explode", a)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The hidden list function.
pub fn variant_explode_list_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(VariantExplodeList::default())));
    Arc::clone(&UDF)
}
