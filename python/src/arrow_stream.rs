//! The Arrow PyCapsule stream protocol (`__arrow_c_stream__`), both ways: a query's result
//! streamed to pyarrow, polars, DuckDB..., and Arrow data of any of them taken in.
use std::ptr::NonNull;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow::record_batch::RecordBatchReader;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::runtime::runtime;

/// The capsule name the protocol gives a stream.
const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

/// A query's batch stream read one batch at a time by the consumer, on the consumer's thread:
/// each batch is computed when it is asked for.
struct BlockingReader {
    schema: SchemaRef,
    stream: SendableRecordBatchStream,
}

impl Iterator for BlockingReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        runtime()
            .block_on(self.stream.next())
            .map(|batch| batch.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for BlockingReader {
    fn schema(&self) -> SchemaRef {
        SchemaRef::clone(&self.schema)
    }
}

/// `stream` as a PyCapsule holding an `ArrowArrayStream` (the consumer takes it over; one left
/// unconsumed is released with the capsule).
pub(crate) fn stream_capsule<'py>(
    py: Python<'py>,
    stream: SendableRecordBatchStream,
) -> PyResult<Bound<'py, PyCapsule>> {
    let reader = BlockingReader {
        schema: stream.schema(),
        stream,
    };
    batches_capsule(py, Box::new(reader))
}

/// `reader`'s batches as a PyCapsule holding an `ArrowArrayStream`.
pub(crate) fn batches_capsule(
    py: Python<'_>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'_, PyCapsule>> {
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), STREAM_CAPSULE)
}

/// The schema and batches of `data`, any object with `__arrow_c_stream__` (a pyarrow table or
/// reader, a polars frame, a DuckDB result, one of our results...), read whole. Field metadata
/// comes along, so `arrow.parquet.variant` columns stay variants.
pub(crate) fn read_stream(data: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    if !data.hasattr("__arrow_c_stream__")? {
        return Err(PyTypeError::new_err(format!(
            "expected Arrow data with __arrow_c_stream__ (a pyarrow Table, a polars DataFrame, \
             ...), got {}",
            data.get_type().name()?
        )));
    }
    let capsule = data.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let pointer: NonNull<FFI_ArrowArrayStream> =
        capsule.pointer_checked(Some(STREAM_CAPSULE))?.cast();
    // SAFETY: the protocol's capsule holds a valid stream; `from_raw` moves it out and marks
    // the capsule's copy released, so the capsule's destructor does not release it again.
    let reader = unsafe { ArrowArrayStreamReader::from_raw(pointer.as_ptr()) }
        .map_err(|e| PyTypeError::new_err(format!("not an Arrow stream: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| crate::runtime::DataFusionError::new_err(e.to_string()))?;
    Ok((schema, batches))
}
