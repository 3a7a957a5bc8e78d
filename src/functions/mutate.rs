//! Shared machinery of the path mutators (`variant_insert`, `variant_set`, `variant_delete`,
//! `variant_array_append` and their `try_` forms): argument handling, paths parsed once per
//! batch, and one edit walk that copies a variant into a builder, changing it along the path.
//! Nothing goes through JSON: untouched sub-values are copied as they are.
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs};

use super::common::{
    PathArg, check_output_fits, check_variant_args, codec_error, single_row_scalar,
    variant_return_field,
};
use crate::codec::{PathSegment, Value, Variant, VariantBuilder, VariantError};
use crate::from_arrow::{ArrowToVariant, check_convertible};
use crate::shredding::variant_column;
use crate::variant_array::VariantArrayBuilder;

/// A mutator's UDF: its struct, its `ScalarUDFImpl` (the variant type returned, the value
/// argument checked where `with_value`, `invoke` run on the arguments), its documentation and
/// its `*_udf` function, written once for the seven mutators (as DataFusion's
/// `make_udf_function!` writes its own functions); each keeps a file of its own.
macro_rules! mutator_udf {
    (
        $(#[$meta:meta])*
        struct $udf:ident;
        name: $name:literal,
        udf: $udf_fn:ident,
        signature: $signature:expr,
        with_value: $with_value:expr,
        invoke: $invoke:expr,
        description: $description:literal,
        syntax: $syntax:literal,
        example: $example:literal,
        arguments: [$(($arg:literal, $arg_doc:literal)),* $(,)?] $(,)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, PartialEq, Eq, Hash)]
        pub struct $udf {
            signature: datafusion::logical_expr::Signature,
        }

        impl Default for $udf {
            fn default() -> Self {
                $udf {
                    signature: $signature,
                }
            }
        }

        impl datafusion::logical_expr::ScalarUDFImpl for $udf {
            fn name(&self) -> &str {
                $name
            }

            fn signature(&self) -> &datafusion::logical_expr::Signature {
                &self.signature
            }

            fn return_type(
                &self,
                _arg_types: &[datafusion::arrow::datatypes::DataType],
            ) -> datafusion::common::Result<datafusion::arrow::datatypes::DataType> {
                Ok($crate::variant_array::variant_data_type())
            }

            fn return_field_from_args(
                &self,
                args: datafusion::logical_expr::ReturnFieldArgs,
            ) -> datafusion::common::Result<datafusion::arrow::datatypes::FieldRef> {
                $crate::functions::mutate::mutator_return_field($name, &args, $with_value)
            }

            fn invoke_with_args(
                &self,
                args: datafusion::logical_expr::ScalarFunctionArgs,
            ) -> datafusion::common::Result<datafusion::logical_expr::ColumnarValue> {
                let invoke: fn(
                    &str,
                    datafusion::logical_expr::ScalarFunctionArgs,
                ) -> datafusion::common::Result<datafusion::logical_expr::ColumnarValue> = $invoke;
                invoke($name, args)
            }

            fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
                static DOC: std::sync::LazyLock<datafusion::logical_expr::Documentation> =
                    std::sync::LazyLock::new(|| {
                        datafusion::logical_expr::Documentation::builder(
                            $crate::functions::common::DOC_SECTION_VARIANT,
                            $description,
                            $syntax,
                        )
                        .with_sql_example($example)
                        $(.with_argument($arg, $arg_doc))*
                        .build()
                    });
                Some(&DOC)
            }
        }

        #[doc = concat!("The `", $name, "` function.")]
        pub fn $udf_fn() -> std::sync::Arc<datafusion::logical_expr::ScalarUDF> {
            static UDF: std::sync::LazyLock<std::sync::Arc<datafusion::logical_expr::ScalarUDF>> =
                std::sync::LazyLock::new(|| {
                    std::sync::Arc::new(datafusion::logical_expr::ScalarUDF::from($udf::default()))
                });
            std::sync::Arc::clone(&UDF)
        }
    };
}

pub(crate) use mutator_udf;

/// How many variant nulls one edit may pad into arrays, in total over the path's indexes (an
/// index past the end of an array pads up to it): more is rejected instead of building a huge
/// value.
pub const MAX_PADDING: u32 = 1 << 20;

/// What a mutator does at the end of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Add a new field (error if it exists) or insert into an array, shifting later elements.
    Insert,
    /// Replace a field or element; create missing ones when `create_if_missing`.
    Set {
        /// Whether a missing target (and its missing parents) is created.
        create_if_missing: bool,
    },
    /// Remove a field or element; a missing target is ignored.
    Delete,
    /// Append to the array at the path; a missing target is ignored.
    Append,
}

/// What an edit did to one row.
enum Outcome {
    Changed,
    Unchanged,
    /// The edit is not possible (an existing key, an incompatible type): an error, or NULL in
    /// the `try_` forms.
    Rejected(String),
}

/// Writes the new value into the builder.
type WriteNew<'n> = dyn FnMut(&mut VariantBuilder) -> Result<()> + 'n;

fn kind(v: &Value<'_>) -> &'static str {
    match v {
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::Null => "a variant null",
        _ => "a scalar",
    }
}

fn codec(function: &str) -> impl Fn(crate::codec::VariantError) -> DataFusionError + '_ {
    move |e| codec_error(function, e)
}

/// Copies `v` into `b`, applying `edit` at the end of `path`.
#[recursive::recursive]
fn walk(
    function: &str,
    b: &mut VariantBuilder,
    v: Variant<'_>,
    path: &[PathSegment],
    edit: Edit,
    new: &mut WriteNew<'_>,
) -> Result<Outcome> {
    let value = v.get().map_err(codec(function))?;
    let Some((segment, rest)) = path.split_first() else {
        // Only `variant_array_append` edits the value at the end of the path itself.
        let Value::Array(array) = value else {
            return Ok(Outcome::Rejected(format!(
                "the target is {}, not an array",
                kind(&value)
            )));
        };
        b.begin_array();
        for e in array.iter() {
            b.append_variant(e.map_err(codec(function))?)
                .map_err(codec(function))?;
        }
        new(b)?;
        b.end_array();
        return Ok(Outcome::Changed);
    };
    let at_target = rest.is_empty();
    match (segment, &value) {
        (PathSegment::Key(key), Value::Object(object)) => {
            let mut found = false;
            object.check_field_sizes().map_err(codec(function))?;
            b.begin_object();
            for i in 0..object.len() {
                let name = object.key(i).map_err(codec(function))?;
                let field = object.value(i).map_err(codec(function))?;
                if name != key {
                    b.key(name);
                    b.append_variant(field).map_err(codec(function))?;
                    continue;
                }
                found = true;
                match (edit, at_target) {
                    (Edit::Insert, true) => {
                        return Ok(Outcome::Rejected(format!("the key `{key}` already exists")));
                    }
                    (Edit::Set { .. }, true) => {
                        b.key(name);
                        new(b)?;
                    }
                    (Edit::Delete, true) => {}
                    _ => {
                        b.key(name);
                        let outcome = walk(function, b, field, rest, edit, new)?;
                        if !matches!(outcome, Outcome::Changed) {
                            return Ok(outcome);
                        }
                    }
                }
            }
            if !found {
                if !creates(edit) {
                    return Ok(Outcome::Unchanged);
                }
                b.key(key);
                if let Some(reason) = create_missing(b, 0, rest, new)? {
                    return Ok(Outcome::Rejected(reason));
                }
            }
            b.end_object().map_err(codec(function))?;
            Ok(Outcome::Changed)
        }
        (PathSegment::Index(index), Value::Array(array)) => {
            let index = *index as usize;
            let len = array.len();
            if index >= len && !creates(edit) {
                return Ok(Outcome::Unchanged);
            }
            b.begin_array();
            for i in 0..len {
                let element = array
                    .get(i)
                    .map_err(codec(function))?
                    .expect("index in range");
                if i != index {
                    b.append_variant(element).map_err(codec(function))?;
                    continue;
                }
                match (edit, at_target) {
                    (Edit::Insert, true) => {
                        new(b)?;
                        b.append_variant(element).map_err(codec(function))?;
                    }
                    (Edit::Set { .. }, true) => new(b)?,
                    (Edit::Delete, true) => {}
                    _ => {
                        let outcome = walk(function, b, element, rest, edit, new)?;
                        if !matches!(outcome, Outcome::Changed) {
                            return Ok(outcome);
                        }
                    }
                }
            }
            if index >= len
                && let Some(reason) = create_missing(b, index - len, rest, new)?
            {
                return Ok(Outcome::Rejected(reason));
            }
            b.end_array();
            Ok(Outcome::Changed)
        }
        // Nothing to delete where the path does not lead.
        _ if edit == Edit::Delete => Ok(Outcome::Unchanged),
        (PathSegment::Key(key), value) => Ok(Outcome::Rejected(format!(
            "the path segment `{key}` needs an object, found {}",
            kind(value)
        ))),
        (PathSegment::Index(index), value) => Ok(Outcome::Rejected(format!(
            "the path segment `[{index}]` needs an array, found {}",
            kind(value)
        ))),
    }
}

fn creates(edit: Edit) -> bool {
    matches!(
        edit,
        Edit::Insert
            | Edit::Set {
                create_if_missing: true
            }
    )
}

/// Appends `padding` variant nulls (to reach an index past an array's end), then the missing
/// rest of the path with the new value at its end; or says why not, when the nulls it would pad
/// in all exceed [`MAX_PADDING`].
fn create_missing(
    b: &mut VariantBuilder,
    padding: usize,
    path: &[PathSegment],
    new: &mut WriteNew<'_>,
) -> Result<Option<String>> {
    let indexes = path.iter().filter_map(|s| match s {
        PathSegment::Index(i) => Some(*i as usize),
        PathSegment::Key(_) => None,
    });
    let largest = indexes.clone().chain([padding]).max().unwrap_or(0);
    if largest > MAX_PADDING as usize {
        return Ok(Some(format!(
            "the index is {largest} elements past the end of the array (at most {MAX_PADDING})"
        )));
    }
    let total = indexes.sum::<usize>() + padding;
    if total > MAX_PADDING as usize {
        return Ok(Some(format!(
            "the path's indexes pad {total} nulls into arrays (at most {MAX_PADDING} in all)"
        )));
    }
    for _ in 0..padding {
        b.null();
    }
    create(b, path, new)?;
    Ok(None)
}

/// Writes the missing rest of a path (objects for keys, null-padded arrays for indexes) with the
/// new value at its end; [`create_missing`] checked the padding.
fn create(b: &mut VariantBuilder, path: &[PathSegment], new: &mut WriteNew<'_>) -> Result<()> {
    let Some((segment, rest)) = path.split_first() else {
        return new(b);
    };
    match segment {
        PathSegment::Key(key) => {
            b.begin_object();
            b.key(key);
            create(b, rest, new)?;
            b.end_object()
                .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        }
        PathSegment::Index(index) => {
            b.begin_array();
            for _ in 0..*index {
                b.null();
            }
            create(b, rest, new)?;
            b.end_array();
        }
    }
    Ok(())
}

/// Checks a mutator's arguments at planning time: a variant, then `paths` string arguments, then
/// (for insert, set and append) a value of any convertible type, then optional constant booleans.
pub fn mutator_return_field(
    function: &str,
    args: &ReturnFieldArgs,
    with_value: bool,
) -> Result<FieldRef> {
    let fields = args.arg_fields;
    check_variant_args(function, fields, 0)?;
    let is_string = |f: &Field| {
        matches!(
            f.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
        ) || matches!(f.data_type(), DataType::Dictionary(_, v) if v.as_ref() == &DataType::Utf8)
    };
    let path_count = if with_value { 1 } else { fields.len() - 1 };
    if path_count == 0 || fields.len() < 1 + path_count {
        return plan_err!("{function} expects a variant and a path");
    }
    for f in &fields[1..=path_count] {
        if !is_string(f) {
            return plan_err!("{function} expects string paths, got {}", f.data_type());
        }
    }
    if with_value {
        match fields.get(2) {
            Some(f) => check_convertible(function, f)?,
            None => return plan_err!("{function} expects a value argument"),
        }
    }
    variant_return_field(args)
}

/// The value of an optional constant boolean argument (`create_if_missing`, `include_arrays`).
pub fn constant_flag(function: &str, name: &str, arg: Option<&ColumnarValue>) -> Result<bool> {
    match arg {
        None => Ok(true),
        Some(ColumnarValue::Scalar(ScalarValue::Boolean(Some(b)))) => Ok(*b),
        Some(other) => exec_err!(
            "{function} expects `{name}` to be a constant BOOLEAN, got {}",
            other.data_type()
        ),
    }
}

/// Runs a one-path mutator (`insert`, `set`, `array_append` and `try_` forms) over a batch:
/// arguments `(v, path, value [, flag])`. Any SQL NULL argument gives NULL.
pub fn invoke_mutator(
    function: &str,
    edit: Edit,
    is_try: bool,
    args: ScalarFunctionArgs,
) -> Result<ColumnarValue> {
    let config = Arc::clone(&args.config_options);
    let all_scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let rows = if all_scalar { 1 } else { args.number_rows };
    let value_field = Arc::clone(&args.arg_fields[2]);
    let mut iter = args.args.into_iter();
    let (Some(variant), Some(path), Some(value)) = (iter.next(), iter.next(), iter.next()) else {
        return exec_err!("{function} expects at least 3 arguments");
    };
    let variant = variant.into_array(rows)?;
    let value = value.into_array(rows)?;
    let column = variant_column(&variant)?;
    let variants = column.rows()?;
    let mut paths = PathArg::try_new(function, path)?;
    let values = ArrowToVariant::try_new(function, &value_field, &value)?;
    let mut out = VariantArrayBuilder::with_capacity(rows);
    let mut b = VariantBuilder::new();
    for row in 0..rows {
        let path = paths.get(function, row)?;
        let (Some(v), Some(path)) = (variants.get(row)?, path) else {
            out.append_null();
            continue;
        };
        if values.is_null(row) {
            out.append_null();
            continue;
        }
        if path.is_root() && edit != Edit::Append {
            return exec_err!("{function}: the path `$` does not name a field or an element");
        }
        b.reset();
        let mut new = |b: &mut VariantBuilder| values.write(row, b);
        match walk(function, &mut b, v, path.segments(), edit, &mut new)? {
            Outcome::Changed => match b.finish() {
                Ok(()) => out.append_built(&b),
                // A result deeper than readers accept: the edit is not possible.
                Err(VariantError::DepthLimitExceeded(_)) if is_try => out.append_null(),
                Err(e) => return Err(codec(function)(e)),
            },
            Outcome::Unchanged => {
                let (m, value) = variants.bytes(row).expect("not null");
                out.append(m, value);
            }
            Outcome::Rejected(_) if is_try => out.append_null(),
            Outcome::Rejected(reason) => {
                return exec_err!("{function}: cannot apply the path `{path}`: {reason}");
            }
        }
    }
    finish(function, &config, out, all_scalar)
}

/// Runs `variant_delete(v, path, ...)`: each path applied left to right, missing targets and SQL
/// NULL paths skipped.
pub fn invoke_delete(function: &str, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
    let config = Arc::clone(&args.config_options);
    let all_scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let rows = if all_scalar { 1 } else { args.number_rows };
    let mut iter = args.args.into_iter();
    let Some(variant) = iter.next() else {
        return exec_err!("{function} expects a variant and paths");
    };
    let variant = variant.into_array(rows)?;
    let column = variant_column(&variant)?;
    let variants = column.rows()?;
    let mut paths = iter
        .map(|p| PathArg::try_new(function, p))
        .collect::<Result<Vec<_>>>()?;
    let mut out = VariantArrayBuilder::with_capacity(rows);
    let mut b = VariantBuilder::new();
    let (mut metadata, mut value) = (Vec::new(), Vec::new());
    let mut fail = |_: &mut VariantBuilder| -> Result<()> { exec_err!("{function}: no new value") };
    for row in 0..rows {
        let Some((m, v)) = variants.bytes(row) else {
            out.append_null();
            continue;
        };
        let mut changed = false;
        for paths in paths.iter_mut() {
            let Some(path) = paths.get(function, row)? else {
                continue;
            };
            if path.is_root() {
                return exec_err!("{function}: the path `$` does not name a field or an element");
            }
            let current = if changed {
                Variant::try_new(&metadata, &value)
            } else {
                Variant::try_new(m, v)
            }
            .map_err(codec(function))?;
            b.reset();
            if let Outcome::Changed = walk(
                function,
                &mut b,
                current,
                path.segments(),
                Edit::Delete,
                &mut fail,
            )? {
                b.finish().map_err(codec(function))?;
                metadata.clear();
                metadata.extend_from_slice(b.metadata());
                value.clear();
                value.extend_from_slice(b.value());
                changed = true;
            }
        }
        if changed {
            out.append(&metadata, &value);
        } else {
            out.append(m, v);
        }
    }
    finish(function, &config, out, all_scalar)
}

fn finish(
    function: &str,
    config: &ConfigOptions,
    out: VariantArrayBuilder,
    all_scalar: bool,
) -> Result<ColumnarValue> {
    let array: ArrayRef = out.finish()?;
    Ok(if all_scalar {
        ColumnarValue::Scalar(single_row_scalar(&array)?)
    } else {
        check_output_fits(function, config, &array)?;
        ColumnarValue::Array(array)
    })
}
