//! Rendering variants as JSON text in query output.
//!
//! - [`render_variants_as_json`]: a record batch with every variant (also inside structs, lists
//!   and maps) as JSON text; used by the sqllogictest runner.
//! - [`display_variants`]: the same as a final projection of a `DataFrame`; used by `variant-sql`.
//! - [`VariantExtensionType`]: the extension-type formatter behind `DataFrame::show`.

mod nested;

pub use crate::variant_array::contains_variant;
pub use nested::{
    JSON_EXTENSION_NAME, VariantDisplay, display_array, display_field, display_variants,
    is_json_field, variant_display_udf,
};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray, make_array};
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, DisplayIndex, FormatOptions, FormatResult};
use datafusion::common::DataFusionError;
use datafusion::common::types::DFExtensionType;
use datafusion::error::Result;
use datafusion::logical_expr::registry::{ExtensionTypeRegistration, ExtensionTypeRegistrationRef};

use crate::codec::SessionTimeZone;
use crate::functions::to_json::variant_array_to_json;
use crate::variant_array::VARIANT_EXTENSION_NAME;

/// Returns `batch` with every variant (extension `arrow.parquet.variant` or the variant struct
/// shape, also inside structs, lists and maps) replaced by Utf8 JSON text (`to_json`), timestamps
/// rendered in `time_zone` (None = UTC). Other columns are returned unchanged.
pub fn render_variants_as_json(
    batch: &RecordBatch,
    time_zone: Option<&str>,
) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| contains_variant(f)) {
        return Ok(batch.clone());
    }
    let tz = SessionTimeZone::parse(time_zone).map_err(DataFusionError::Execution)?;
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if contains_variant(field) {
            fields.push(Arc::new(display_field(field)));
            columns.push(display_array(field, column, &tz)?);
        } else {
            fields.push(Arc::clone(field));
            columns.push(Arc::clone(column));
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// The `arrow.parquet.variant` extension type for DataFusion's extension-type registry: makes
/// `DataFrame::show` / `to_string` print variant values as JSON (timestamps in UTC).
#[derive(Debug)]
pub struct VariantExtensionType {
    storage: DataType,
}

impl DFExtensionType for VariantExtensionType {
    fn storage_type(&self) -> DataType {
        self.storage.clone()
    }

    fn serialize_metadata(&self) -> Option<String> {
        Some(String::new())
    }

    fn create_array_formatter<'fmt>(
        &self,
        array: &'fmt dyn Array,
        options: &FormatOptions<'fmt>,
    ) -> Result<Option<ArrayFormatter<'fmt>>> {
        let array: ArrayRef = make_array(array.to_data());
        let json = variant_array_to_json("to_json", &array, &SessionTimeZone::utc())?;
        Ok(Some(ArrayFormatter::new(
            Box::new(JsonDisplay {
                json: json.as_string::<i32>().clone(),
                null: options.null(),
            }),
            options.safe(),
        )))
    }
}

/// Displays pre-rendered JSON text.
struct JsonDisplay<'a> {
    json: StringArray,
    null: &'a str,
}

impl DisplayIndex for JsonDisplay<'_> {
    fn write(&self, idx: usize, f: &mut dyn std::fmt::Write) -> FormatResult {
        if self.json.is_null(idx) {
            f.write_str(self.null)?;
        } else {
            f.write_str(self.json.value(idx))?;
        }
        Ok(())
    }
}

/// The registration of [`VariantExtensionType`] for an extension-type registry.
pub fn variant_extension_registration() -> ExtensionTypeRegistrationRef {
    ExtensionTypeRegistration::new_arc(VARIANT_EXTENSION_NAME, |storage, _metadata| {
        Ok(Arc::new(VariantExtensionType {
            storage: storage.clone(),
        }))
    })
}
