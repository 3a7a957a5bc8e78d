//! Machinery shared by the scalar functions: argument handling, scalar/array dispatch,
//! string access, error conversion and documentation sections.
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, GenericStringArray, OffsetSizeTrait, StringArray, StructArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::config::{ConfigEntry, ConfigExtension, ConfigOptions, ExtensionOptions};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryPool};
use datafusion::logical_expr::{ColumnarValue, DocSection, ReturnFieldArgs, ScalarFunctionArgs};

use crate::codec::{SessionTimeZone, VariantPath};
use crate::variant_array::{check_variant_arg, variant_field};

/// The documentation section of every variant function.
pub const DOC_SECTION_VARIANT: DocSection = DocSection {
    include: true,
    label: "Variant Functions",
    description: Some("Functions over semi-structured VARIANT values (Spark 4 semantics)."),
};

pub use crate::variant_array::codec_error;

/// `array` as a shredded variant column (one with `typed_value`), None for any other layout.
pub fn shredded_column(array: &ArrayRef) -> Option<&StructArray> {
    array
        .as_struct_opt()
        .filter(|s| s.column_by_name("typed_value").is_some())
}

/// The return field of a function returning an (unshredded) variant.
pub fn variant_return_field(args: &ReturnFieldArgs) -> Result<FieldRef> {
    let _ = args;
    Ok(Arc::new(variant_field("variant", true)))
}

/// Checks that argument `index` of `function` is a variant.
pub fn check_variant_args(function: &str, fields: &[FieldRef], index: usize) -> Result<()> {
    match fields.get(index) {
        Some(f) => check_variant_arg(function, f),
        None => exec_err!("{function} expects at least {} arguments", index + 1),
    }
}

/// The session time zone used to render timestamps.
pub fn session_time_zone(function: &str, args: &ScalarFunctionArgs) -> Result<SessionTimeZone> {
    SessionTimeZone::parse(args.config_options.execution.time_zone.as_deref())
        .map_err(|e| DataFusionError::Execution(format!("{function}: {e}")))
}

/// Runs a one-argument kernel over arrays; a scalar argument gives a scalar result. The
/// output must fit the session's memory pool ([`check_output_fits`]).
pub fn invoke_unary(
    function: &str,
    args: ScalarFunctionArgs,
    kernel: impl FnOnce(&ArrayRef) -> Result<ArrayRef>,
) -> Result<ColumnarValue> {
    let [arg] = datafusion::common::utils::take_function_args(function, args.args)?;
    match arg {
        ColumnarValue::Array(a) => {
            let out = kernel(&a)?;
            check_output_fits(function, &args.config_options, &out)?;
            Ok(ColumnarValue::Array(out))
        }
        ColumnarValue::Scalar(s) => {
            let a = s.to_array_of_size(1)?;
            let out = kernel(&a)?;
            Ok(ColumnarValue::Scalar(single_row_scalar(&out)?))
        }
    }
}

/// The session's memory pool, for the scalar kernels: DataFusion 55 gives a scalar function its
/// config options but no task context, so `register_all` carries the runtime's pool here. It
/// has no settable options.
#[derive(Clone, Default)]
pub struct KernelMemory {
    pool: Option<Arc<dyn MemoryPool>>,
}

impl KernelMemory {
    /// The kernels of a session whose runtime has `pool`.
    pub fn new(pool: Arc<dyn MemoryPool>) -> Self {
        KernelMemory { pool: Some(pool) }
    }
}

impl std::fmt::Debug for KernelMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelMemory")
    }
}

impl ConfigExtension for KernelMemory {
    const PREFIX: &'static str = "variant_kernel_memory";
}

impl ExtensionOptions for KernelMemory {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, _value: &str) -> Result<()> {
        plan_err!("unknown option '{key}': the memory pool is the runtime's (e.g. --memory-limit)")
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        vec![]
    }
}

/// Checks that the session's memory pool can hold a kernel's output, the way a streaming
/// operator's batch is held until the next operator takes it: reserved under the function's
/// name and released on return. Under a memory limit, a batch whose output does not fit is the
/// pool's resources-exhausted error, not an allocation past the limit that the next operators
/// build on. (The output is allocated by then: the limit is passed by at most one batch.)
pub fn check_output_fits(function: &str, config: &ConfigOptions, out: &ArrayRef) -> Result<()> {
    let Some(pool) = config
        .extensions
        .get::<KernelMemory>()
        .and_then(|m| m.pool.as_ref())
    else {
        return Ok(());
    };
    let reservation = MemoryConsumer::new(function).register(pool);
    reservation.try_grow(out.get_array_memory_size())
}

/// The scalar of a one-row result. Nested results keep their exact type (field names and
/// metadata such as the variant extension), which `ScalarValue::try_from_array` may not.
pub fn single_row_scalar(array: &ArrayRef) -> Result<ScalarValue> {
    Ok(match array.data_type() {
        DataType::List(_) => ScalarValue::List(Arc::new(array.as_list::<i32>().clone())),
        DataType::Map(..) => ScalarValue::Map(Arc::new(array.as_map().clone())),
        DataType::Struct(_) => ScalarValue::Struct(Arc::new(array.as_struct().clone())),
        _ => ScalarValue::try_from_array(array, 0)?,
    })
}

/// Calls `f(row, Option<&str>)` for every row of a string column of any layout.
pub fn for_each_string(
    function: &str,
    array: &ArrayRef,
    mut f: impl FnMut(usize, Option<&str>) -> Result<()>,
) -> Result<()> {
    macro_rules! each {
        ($a:expr) => {{
            let a = $a;
            for i in 0..a.len() {
                f(i, if a.is_null(i) { None } else { Some(a.value(i)) })?;
            }
        }};
    }
    match array.data_type() {
        DataType::Utf8 => each!(array.as_string::<i32>()),
        DataType::LargeUtf8 => each!(array.as_string::<i64>()),
        DataType::Utf8View => each!(array.as_string_view()),
        DataType::Null => {
            for i in 0..array.len() {
                f(i, None)?;
            }
        }
        other => return exec_err!("{function} expects a string argument, got {other}"),
    }
    Ok(())
}

/// The most a size hint from [`string_bytes`] reserves: string views may share their bytes, so
/// that the values' total length can far exceed the column's real size (8,192 views of one
/// 1 MiB string add up to 8 GiB); past this, output buffers grow as they fill.
pub const SIZE_HINT_CAP: usize = 64 << 20;

/// Total bytes of the values of a string column (0 for other types), at most
/// [`SIZE_HINT_CAP`]: a size hint for outputs built from its rows.
pub fn string_bytes(array: &ArrayRef) -> usize {
    string_values_length(array).min(SIZE_HINT_CAP)
}

/// Total length of the values of a string column (0 for other types).
fn string_values_length(array: &ArrayRef) -> usize {
    fn span<O: OffsetSizeTrait>(a: &GenericStringArray<O>) -> usize {
        let offsets = a.value_offsets();
        (offsets[offsets.len() - 1] - offsets[0]).as_usize()
    }
    match array.data_type() {
        DataType::Utf8 => span(array.as_string::<i32>()),
        DataType::LargeUtf8 => span(array.as_string::<i64>()),
        // A view's low 32 bits are the value's length.
        DataType::Utf8View => (array.as_string_view().views().iter())
            .map(|&view| view as u32 as usize)
            .sum(),
        _ => 0,
    }
}

/// A plain nullable field of `data_type` named after the function.
pub fn plain_return_field(name: &str, data_type: DataType, nullable: bool) -> FieldRef {
    Arc::new(Field::new(name, data_type, nullable))
}

/// A path argument: a constant parsed once, or a column parsed row by row (consecutive equal
/// paths are parsed once).
pub(crate) enum PathArg {
    /// A constant path (None: SQL NULL).
    Constant(Option<VariantPath>),
    /// A column of paths, with the last parsed one and its row.
    Column(StringArray, Option<(usize, VariantPath)>),
}

impl PathArg {
    /// Parses a constant path now; casts a path column (any string layout, dictionaries too) to
    /// `Utf8`.
    pub(crate) fn try_new(function: &str, arg: ColumnarValue) -> Result<Self> {
        match arg {
            ColumnarValue::Scalar(s) if s.is_null() => Ok(PathArg::Constant(None)),
            ColumnarValue::Scalar(s) => match s.try_as_str() {
                Some(Some(text)) => Ok(PathArg::Constant(Some(parse_path(function, text)?))),
                _ => exec_err!("{function} expects a string path, got {}", s.data_type()),
            },
            ColumnarValue::Array(a) => {
                let strings = cast(&a, &DataType::Utf8)?;
                Ok(PathArg::Column(strings.as_string::<i32>().clone(), None))
            }
        }
    }

    /// The path of `row`, None for SQL NULL.
    pub(crate) fn get(&mut self, function: &str, row: usize) -> Result<Option<&VariantPath>> {
        match self {
            PathArg::Constant(p) => Ok(p.as_ref()),
            PathArg::Column(strings, cache) => {
                if strings.is_null(row) {
                    return Ok(None);
                }
                let text = strings.value(row);
                let reuse = cache
                    .as_ref()
                    .is_some_and(|(r, _)| strings.value(*r) == text);
                if !reuse {
                    *cache = Some((row, parse_path(function, text)?));
                }
                Ok(cache.as_ref().map(|(_, p)| p))
            }
        }
    }
}

/// Parses a path; an invalid one is an error naming the function and the path.
pub(crate) fn parse_path(function: &str, text: &str) -> Result<VariantPath> {
    VariantPath::parse(text).map_err(|e| DataFusionError::Execution(format!("{e} in `{function}`")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{StringArray, StringViewBuilder};

    /// The hint is the values' total length, capped: 8,192 views of one 1 MiB string add up to
    /// 8 GiB in a column of 1 MiB.
    #[test]
    fn size_hints_are_capped() {
        let plain: ArrayRef = Arc::new(StringArray::from(vec!["ab", "cde"]));
        assert_eq!(string_bytes(&plain), 5);
        let mut views = StringViewBuilder::new();
        let block = views.append_block(vec![b'x'; 1 << 20].into());
        for _ in 0..8192 {
            views.try_append_view(block, 0, 1 << 20).unwrap();
        }
        let views: ArrayRef = Arc::new(views.finish());
        assert_eq!(string_values_length(&views), 8 << 30);
        assert_eq!(string_bytes(&views), SIZE_HINT_CAP);
    }
}
