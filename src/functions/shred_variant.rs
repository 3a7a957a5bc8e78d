//! The hidden scalar function `__shred_variant(v, shredding [, segment, ..])` that
//! `COPY`/`INSERT` with `variant.shred.<column>` put before the sink: `v` shredded into the type
//! of its second argument, a typed NULL literal (so the type, whatever it is, travels with the
//! plan as a plain value, and the call by name: a receiving session resolves it once
//! `plan_codec::register_plan_functions` has registered it, with no codec of ours). With path
//! segments (string literals), the variant shredded is the one they lead to inside `v`: a struct
//! field by its name, `element` of a list, `value` of a map; the rest of `v` is kept as it is.
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::arrow_nested::with_children_converted;
use crate::shredding::{shred_variant, shredded_variant_type};
use crate::variant_array::variant_extension_metadata;

/// The name of the hidden function (not registered by `register_all`: plans carry it).
pub const SHRED_VARIANT_NAME: &str = "__shred_variant";

/// See the module.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShredVariant {
    signature: Signature,
}

impl Default for ShredVariant {
    fn default() -> Self {
        ShredVariant {
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ShredVariant {
    fn name(&self) -> &str {
        SHRED_VARIANT_NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{SHRED_VARIANT_NAME}: the return type depends on the arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [input, shredding, ..] = args.arg_fields else {
            return plan_err!("{SHRED_VARIANT_NAME} takes a variant and a shredding type");
        };
        let mut path = Vec::with_capacity(args.scalar_arguments.len().saturating_sub(2));
        for segment in args.scalar_arguments.iter().skip(2) {
            match segment {
                Some(ScalarValue::Utf8(Some(s))) => path.push(s.as_str()),
                _ => return plan_err!("{SHRED_VARIANT_NAME}: path segments are string literals"),
            }
        }
        let field = Field::new(self.name(), input.data_type().clone(), input.is_nullable())
            .with_metadata(input.metadata().clone());
        Ok(Arc::new(shredded_field(
            &field,
            &path,
            shredding.data_type(),
        )?))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (Some(input), Some(shredding)) = (args.args.first(), args.arg_fields.get(1)) else {
            return exec_err!("{SHRED_VARIANT_NAME} takes a variant and a shredding type");
        };
        let input = input.to_array(args.number_rows)?;
        let mut path = Vec::with_capacity(args.args.len().saturating_sub(2));
        for segment in args.args.iter().skip(2) {
            match segment {
                ColumnarValue::Scalar(ScalarValue::Utf8(Some(s))) => path.push(s.as_str()),
                _ => return exec_err!("{SHRED_VARIANT_NAME}: path segments are string literals"),
            }
        }
        Ok(ColumnarValue::Array(shred_at(
            &input,
            args.return_field.data_type(),
            &path,
            shredding.data_type(),
        )?))
    }
}

/// `field` with the variant that `path` leads to shredded as `shredding` (see the module): its
/// type the shredded one, marked with the variant extension.
fn shredded_field(field: &Field, path: &[&str], shredding: &DataType) -> Result<Field> {
    let Some((segment, rest)) = path.split_first() else {
        let mut metadata = field.metadata().clone();
        metadata.extend(variant_extension_metadata());
        let shredded = shredded_variant_type(shredding)?;
        return Ok(field
            .clone()
            .with_data_type(shredded)
            .with_metadata(metadata));
    };
    let data_type = match (field.data_type(), *segment) {
        (DataType::Struct(children), name) => {
            let Some((i, _)) = children.find(name) else {
                return plan_err!("{SHRED_VARIANT_NAME}: {} has no field {name}", field.name());
            };
            let mut children: Vec<FieldRef> = children.iter().cloned().collect();
            children[i] = Arc::new(shredded_field(&children[i], rest, shredding)?);
            DataType::Struct(children.into())
        }
        (DataType::List(element), "element") => {
            DataType::List(Arc::new(shredded_field(element, rest, shredding)?))
        }
        (DataType::LargeList(element), "element") => {
            DataType::LargeList(Arc::new(shredded_field(element, rest, shredding)?))
        }
        (DataType::Map(entries, sorted), "value") => {
            let DataType::Struct(key_value) = entries.data_type() else {
                return plan_err!("{SHRED_VARIANT_NAME}: map entries are not a struct");
            };
            let [key, value] = key_value.iter().collect::<Vec<_>>()[..] else {
                return plan_err!("{SHRED_VARIANT_NAME}: map entries are not a key and a value");
            };
            let key_value = Fields::from(vec![
                Arc::clone(key),
                Arc::new(shredded_field(value, rest, shredding)?),
            ]);
            let entries = entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(key_value));
            DataType::Map(Arc::new(entries), *sorted)
        }
        (other, segment) => {
            return plan_err!(
                "{SHRED_VARIANT_NAME}: {} ({other}) has no {segment} to shred",
                field.name()
            );
        }
    };
    Ok(field.clone().with_data_type(data_type))
}

/// `array` with the variant that `path` leads to (see the module) shredded as `shredding`, into
/// `out` (the type [`shredded_field`] gave); the other children are cast to their types in `out`
/// where a batch's type differs from the planned one (field metadata or nullability).
fn shred_at(
    array: &ArrayRef,
    out: &DataType,
    path: &[&str],
    shredding: &DataType,
) -> Result<ArrayRef> {
    let Some((segment, rest)) = path.split_first() else {
        return shred_variant(array, shredding);
    };
    let kept = |c: &ArrayRef, f: &FieldRef| match c.data_type() == f.data_type() {
        true => Ok(Arc::clone(c)),
        false => Ok(cast(c, f.data_type())?),
    };
    with_children_converted(array, out, |_, c, f| match out {
        DataType::Struct(_) if f.name() == *segment => shred_at(c, f.data_type(), rest, shredding),
        DataType::Struct(_) => kept(c, f),
        // the entries: a key, and the value on the path
        DataType::Map(..) => {
            let mut position = 0;
            with_children_converted(c, f.data_type(), |_, c, f| {
                position += 1;
                match position {
                    2 => shred_at(c, f.data_type(), rest, shredding),
                    _ => kept(c, f),
                }
            })
        }
        _ => shred_at(c, f.data_type(), rest, shredding),
    })
}

/// The hidden function.
pub fn shred_variant_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::from(ShredVariant::default())));
    Arc::clone(&UDF)
}
