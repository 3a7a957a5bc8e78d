//! [`PyDataFrame`]: the result of a query, read through the Arrow stream protocol or printed.
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchIterator};
use arrow::datatypes::SchemaRef;
use arrow::util::pretty::pretty_format_batches;
use datafusion::dataframe::DataFrame;
use datafusion_parquet_variant::display::display_variants;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use crate::arrow_stream::{batches_capsule, stream_capsule};
use crate::runtime::{py_err, run};

/// Rows `__repr__` prints.
const REPR_ROWS: usize = 10;

/// The result of a query, computed when it is read: `pyarrow.table(result)`,
/// `polars.from_arrow(result)` and DuckDB take it through `__arrow_c_stream__`, with variants as
/// `arrow.parquet.variant` columns. Printing it shows variants as JSON.
#[pyclass(
    name = "DataFrame",
    module = "datafusion_parquet_variant._internal",
    frozen
)]
pub(crate) struct PyDataFrame {
    df: DataFrame,
}

impl PyDataFrame {
    /// Wraps `df`.
    pub(crate) fn new(df: DataFrame) -> Self {
        PyDataFrame { df }
    }

    /// At most `rows` rows as a table of text, variants as JSON, and whether there are more.
    fn text(&self, py: Python<'_>, rows: usize) -> PyResult<(String, bool)> {
        let df = self.df.clone().limit(0, Some(rows + 1)).map_err(py_err)?;
        let df = display_variants(df).map_err(py_err)?;
        let mut batches = run(py, df.collect())?;
        let total: usize = batches.iter().map(|b| b.num_rows()).sum();
        if total > rows {
            // drop the extra row, which only told that there are more
            let last = batches.last_mut().expect("rows were read");
            *last = last.slice(0, last.num_rows() - (total - rows));
        }
        let text = pretty_format_batches(&batches)
            .map_err(|e| py_err(e.into()))?
            .to_string();
        Ok((text, total > rows))
    }
}

/// Batches already computed, handed over through the stream protocol.
#[pyclass(module = "datafusion_parquet_variant._internal", frozen)]
struct Collected {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

#[pymethods]
impl Collected {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        let reader = RecordBatchIterator::new(batches, Arc::clone(&self.schema));
        batches_capsule(py, Box::new(reader))
    }
}

#[pymethods]
impl PyDataFrame {
    /// The Arrow PyCapsule stream protocol: the result's batches, computed as the consumer reads
    /// them. `requested_schema` is a hint the protocol lets a producer ignore.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let df = self.df.clone();
        let stream = run(py, df.execute_stream())?;
        stream_capsule(py, stream)
    }

    /// The result as a `pyarrow.Table` (variants as `arrow.parquet.variant` columns), computed
    /// whole first: an error is a `DataFusionError`, and Ctrl-C stops it.
    fn to_arrow_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let df = self.df.clone();
        let schema = Arc::clone(df.schema().inner());
        let batches = run(py, df.collect())?;
        let collected = Collected { schema, batches };
        py.import("pyarrow")?
            .call_method1("table", (Bound::new(py, collected)?,))
    }

    /// The rows as dicts, variants as Python values (dict, list, int, float, `Decimal`, str,
    /// bytes, `datetime` values, `UUID`, None), nested ones too.
    fn to_pylist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let table = self.to_arrow_table(py)?;
        py.import("datafusion_parquet_variant._pylist")?
            .call_method1("to_pylist", (table,))
    }

    /// Prints the first `rows` rows, variants as JSON.
    #[pyo3(signature = (rows=20))]
    fn show(&self, py: Python<'_>, rows: usize) -> PyResult<()> {
        let text = self.to_string(py, rows)?;
        py.import("builtins")?.call_method1("print", (text,))?;
        Ok(())
    }

    /// The number of rows.
    fn count(&self, py: Python<'_>) -> PyResult<usize> {
        run(py, self.df.clone().count())
    }

    /// The first `rows` rows as a table of text, variants as JSON.
    #[pyo3(signature = (rows=20))]
    fn to_string(&self, py: Python<'_>, rows: usize) -> PyResult<String> {
        let (text, more) = self.text(py, rows)?;
        Ok(if more {
            format!("{text}\n(first {rows} rows shown)")
        } else {
            text
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.to_string(py, REPR_ROWS)
    }

    /// The plan, as `EXPLAIN` prints it; with `analyze`, run it and show each operator's
    /// metrics (`EXPLAIN ANALYZE`: the bytes scanned, the shredded leaves read, the row groups
    /// pruned...).
    #[pyo3(signature = (analyze=false, verbose=false))]
    fn explain(&self, py: Python<'_>, analyze: bool, verbose: bool) -> PyResult<String> {
        let df = self.df.clone().explain(verbose, analyze).map_err(py_err)?;
        let batches = run(py, df.collect())?;
        Ok(pretty_format_batches(&batches)
            .map_err(|e| py_err(e.into()))?
            .to_string())
    }

    /// The names of the result's columns.
    #[getter]
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let names: Vec<String> = self
            .df
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        PyTuple::new(py, names)
    }
}
