//! `datafusion_parquet_variant._internal`: the Python extension of datafusion-parquet-variant.
//!
//! - [`context::PySessionContext`] / [`dataframe::PyDataFrame`]: our own session with the whole
//!   engine (`register_all_with_state`), and query results that leave through the Arrow PyCapsule
//!   stream protocol.
//! - [`exports`]: our functions and Parquet tables as datafusion-ffi objects, for
//!   datafusion-python's `SessionContext` (`register`, `register_parquet` in Python).
//! - [`planner`]: our query planner for datafusion-python sessions (`register(ctx, planner=True)`),
//!   with the codecs that lend tables to it and return its plans.
//! - [`values`]: variant values as Python objects.
//! - [`runtime`]: the tokio runtime, queries waited for without the GIL, and the errors.
mod arrow_stream;
mod context;
mod dataframe;
mod explode;
mod exports;
mod planner;
mod runtime;
mod values;

use pyo3::prelude::*;

/// The module's contents.
#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DataFusionError", py.get_type::<runtime::DataFusionError>())?;
    m.add(
        "ResourcesExhausted",
        py.get_type::<runtime::ResourcesExhausted>(),
    )?;
    m.add_class::<context::PySessionContext>()?;
    m.add_class::<dataframe::PyDataFrame>()?;
    m.add_class::<exports::ScalarFunction>()?;
    m.add_class::<exports::AggregateFunction>()?;
    m.add_class::<exports::TableFunction>()?;
    m.add_class::<exports::ParquetTable>()?;
    m.add_function(wrap_pyfunction!(exports::scalar_functions, m)?)?;
    m.add_function(wrap_pyfunction!(exports::aggregate_functions, m)?)?;
    m.add_function(wrap_pyfunction!(exports::table_functions, m)?)?;
    m.add_function(wrap_pyfunction!(exports::parquet_table, m)?)?;
    m.add_function(wrap_pyfunction!(exports::delta_table, m)?)?;
    m.add_class::<planner::LogicalCodec>()?;
    m.add_class::<planner::PhysicalCodec>()?;
    m.add_function(wrap_pyfunction!(planner::query_planner, m)?)?;
    m.add_function(wrap_pyfunction!(values::variant_to_python, m)?)?;
    Ok(())
}
