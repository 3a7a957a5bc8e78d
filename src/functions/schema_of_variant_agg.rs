//! `schema_of_variant_agg(v)`: the merged schema of a VARIANT column (an aggregate).
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::common::{DOC_SECTION_VARIANT, check_variant_args, codec_error};
use crate::shredding::variant_column;
use crate::variant_schema::VariantSchema;

/// The `schema_of_variant_agg` UDAF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariantAgg {
    signature: Signature,
}

impl Default for SchemaOfVariantAgg {
    fn default() -> Self {
        SchemaOfVariantAgg {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns the merged schema of all VARIANT values in a group, with the merge rules of \
         schema_of_variant (numeric widening, object key union, VARIANT where there is no common \
         type). SQL NULL rows are ignored; no rows give VOID.",
        "schema_of_variant_agg(variant)",
    )
    .with_sql_example(
        "```sql\n> SELECT schema_of_variant_agg(parse_json(j)) FROM (VALUES ('{\"a\": 1}'), ('{\"b\": true}')) t(j);\n\
         OBJECT<a: BIGINT, b: BOOLEAN>\n```",
    )
    .with_argument("variant", "A VARIANT column.")
    .build()
});

impl AggregateUDFImpl for SchemaOfVariantAgg {
    fn name(&self) -> &str {
        "schema_of_variant_agg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        check_variant_args(self.name(), arg_fields, 0)?;
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, false)))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SchemaAccumulator {
            schema: VariantSchema::Void,
        }))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format!("{}[schema]", args.name),
            DataType::Utf8,
            true,
        ))])
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(VariantSchema::Void.to_string())))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// Holds the schema merged so far; the partial state is its text.
#[derive(Debug)]
struct SchemaAccumulator {
    schema: VariantSchema,
}

impl SchemaAccumulator {
    fn absorb(&mut self, s: VariantSchema) {
        let current = std::mem::replace(&mut self.schema, VariantSchema::Void);
        self.schema = current.merge(s);
    }
}

impl Accumulator for SchemaAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(array) = values.first() else {
            return exec_err!("schema_of_variant_agg expects one argument");
        };
        let column = variant_column(array)?;
        let rows = column.rows()?;
        for i in 0..column.len() {
            if let Some(v) = rows.get(i)? {
                let s =
                    VariantSchema::of(v).map_err(|e| codec_error("schema_of_variant_agg", e))?;
                self.absorb(s);
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(array) = states.first() else {
            return exec_err!("schema_of_variant_agg: missing state");
        };
        for text in array.as_string::<i32>().iter().flatten() {
            let s = VariantSchema::parse(text).ok_or_else(|| {
                DataFusionError::Internal(format!("schema_of_variant_agg: bad state {text}"))
            })?;
            self.absorb(s);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Utf8(Some(self.schema.to_string()))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(self.schema.to_string())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.schema.heap_size()
    }
}

/// The `schema_of_variant_agg` aggregate function.
pub fn schema_of_variant_agg_udaf() -> Arc<AggregateUDF> {
    static UDAF: LazyLock<Arc<AggregateUDF>> =
        LazyLock::new(|| Arc::new(AggregateUDF::from(SchemaOfVariantAgg::default())));
    Arc::clone(&UDAF)
}
