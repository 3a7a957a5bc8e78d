//! `variant_shredding_schema_agg(v)`: the shredding type automatic shredding would choose for a
//! VARIANT column's values (an aggregate), as the text `'variant.shred.<column>'` takes.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, TypeSignature,
    Volatility,
};
use datafusion::physical_expr::expressions::Literal;

use super::common::{DOC_SECTION_VARIANT, check_variant_args, codec_error};
use crate::cast::target_type::sql_type_name;
use crate::codec::Variant;
use crate::shredding::{InferLimits, InferenceRule, ShreddingInference};

/// The `variant_shredding_schema_agg` UDAF.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantShreddingSchemaAgg {
    signature: Signature,
}

impl Default for VariantShreddingSchemaAgg {
    fn default() -> Self {
        VariantShreddingSchemaAgg {
            signature: Signature::one_of(
                vec![TypeSignature::Any(1), TypeSignature::Any(2)],
                Volatility::Immutable,
            ),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        DOC_SECTION_VARIANT,
        "Returns the shredding type that writing the VARIANT values of a group to Parquet would \
         choose (automatic shredding). By default: object fields present in at least a tenth of \
         the values, or at least twice and in one value in a hundred; each place typed on the \
         type most of its values have (integers widened to BIGINT, decimals of one scale), the \
         other values left in `value`; at most 300 columns and 50 levels. With 'spark' as the \
         second argument, Spark's rule: fields in a tenth of the values, and a place whose \
         values disagree is VARIANT. The text is what the 'variant.shred.<column>' option takes. \
         SQL NULL rows are ignored.",
        "variant_shredding_schema_agg(variant [, rule])",
    )
    .with_sql_example(
        "```sql\n> SELECT variant_shredding_schema_agg(parse_json(j)) FROM (VALUES ('{\"a\": 1, \"b\": \"x\"}'), ('{\"a\": 7}')) t(j);\n\
         STRUCT<a: BIGINT, b: STRING>\n```",
    )
    .with_argument("variant", "A VARIANT column.")
    .with_argument(
        "rule",
        "The inference rule, a constant: 'default' or 'spark' (as `variant.shred_inference`).",
    )
    .build()
});

impl AggregateUDFImpl for VariantShreddingSchemaAgg {
    fn name(&self) -> &str {
        "variant_shredding_schema_agg"
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

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let mut limits = InferLimits::default();
        if let Some(rule) = args.exprs.get(1) {
            let rule = rule.downcast_ref::<Literal>().map(Literal::value);
            let Some(ScalarValue::Utf8(Some(rule)) | ScalarValue::Utf8View(Some(rule))) = rule
            else {
                return plan_err!(
                    "variant_shredding_schema_agg: the rule must be a constant string ('default' \
                     or 'spark')"
                );
            };
            limits.rule = InferenceRule::parse(rule.as_str())?;
        }
        Ok(Box::new(InferenceAccumulator(ShreddingInference::new(
            limits,
        ))))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[metadata]", args.name),
                DataType::Binary,
                true,
            )),
            Arc::new(Field::new(
                format!("{}[statistics]", args.name),
                DataType::Binary,
                true,
            )),
        ])
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some("VARIANT".into())))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The statistics of the values seen; the partial state is their variant encoding.
#[derive(Debug)]
struct InferenceAccumulator(ShreddingInference);

impl Accumulator for InferenceAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(array) = values.first() else {
            return exec_err!("variant_shredding_schema_agg expects one argument");
        };
        self.0.add_column(array)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [metadata, statistics] = states else {
            return exec_err!("variant_shredding_schema_agg: missing state");
        };
        let (metadata, statistics) = (metadata.as_binary::<i32>(), statistics.as_binary::<i32>());
        for (m, v) in metadata.iter().zip(statistics.iter()) {
            if let (Some(m), Some(v)) = (m, v) {
                let v = Variant::try_new(m, v)
                    .map_err(|e| codec_error("variant_shredding_schema_agg", e))?;
                self.0
                    .merge(&ShreddingInference::decode(v, InferLimits::default())?);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let (metadata, value) = self.0.encode()?;
        Ok(vec![
            ScalarValue::Binary(Some(metadata)),
            ScalarValue::Binary(Some(value)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let mut columns = InferLimits::default().max_columns;
        Ok(ScalarValue::Utf8(Some(sql_type_name(
            &self.0.finish(&mut columns),
        ))))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.0.size()
    }
}

/// The `variant_shredding_schema_agg` aggregate function.
pub fn variant_shredding_schema_agg_udaf() -> Arc<AggregateUDF> {
    static UDAF: LazyLock<Arc<AggregateUDF>> =
        LazyLock::new(|| Arc::new(AggregateUDF::from(VariantShreddingSchemaAgg::default())));
    Arc::clone(&UDAF)
}
