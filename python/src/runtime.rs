//! The tokio runtime queries run on, waiting for them with the GIL released and Ctrl-C heard,
//! and DataFusion's errors as Python exceptions.
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use datafusion::error::DataFusionError as DfError;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tokio::runtime::Runtime;

pyo3::create_exception!(
    datafusion_parquet_variant,
    DataFusionError,
    PyException,
    "An error of a query: DataFusion's message (planning, execution, bad input)."
);
pyo3::create_exception!(
    datafusion_parquet_variant,
    ResourcesExhausted,
    DataFusionError,
    "A query needed more memory than the session's memory limit allows."
);

/// DataFusion's error `e` as a Python exception ([`ResourcesExhausted`] for the memory pool's).
pub(crate) fn py_err(e: DfError) -> PyErr {
    let message = e.to_string();
    match e.find_root() {
        DfError::ResourcesExhausted(_) => ResourcesExhausted::new_err(message),
        _ => DataFusionError::new_err(message),
    }
}

/// The runtime every query of the package runs on (one per process).
pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("datafusion-parquet-variant")
            .build()
            .expect("a tokio runtime")
    })
}

/// How often a waiting query checks for a signal.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// A receiver of the ticks that pace the signal checks: one thread per process sends a tick
/// every [`SIGNAL_CHECK`], instead of the runtime's timer, which a worker drives only between
/// tasks (a query whose tasks keep every worker busy without yielding, a long `generate_series`
/// on two cores, would never be interrupted).
fn signal_ticks() -> tokio::sync::watch::Receiver<()> {
    static TICKS: OnceLock<tokio::sync::watch::Receiver<()>> = OnceLock::new();
    let mut ticks = TICKS
        .get_or_init(|| {
            let (tick, ticks) = tokio::sync::watch::channel(());
            std::thread::Builder::new()
                .name("datafusion-parquet-variant-signals".into())
                .spawn(move || {
                    // (the receiver in the static lives as long as the process)
                    while tick.send(()).is_ok() {
                        std::thread::sleep(SIGNAL_CHECK);
                    }
                })
                .expect("a thread for the signal checks");
            ticks
        })
        .clone();
    ticks.mark_unchanged();
    ticks
}

/// Runs `future` to completion on the runtime with the GIL released, so other Python threads
/// run meanwhile. A signal handler that raises (Ctrl-C's `KeyboardInterrupt`) drops the future,
/// which cancels the query, and its exception is returned.
pub(crate) fn wait_for<F>(py: Python<'_>, future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut ticks = signal_ticks();
    py.detach(|| {
        runtime().block_on(async {
            tokio::pin!(future);
            loop {
                tokio::select! {
                    out = &mut future => return Ok(out),
                    Ok(()) = ticks.changed() => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}

/// [`wait_for`] of a future that returns DataFusion's `Result`, its error as an exception.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    future: impl Future<Output = datafusion::error::Result<T>> + Send,
) -> PyResult<T> {
    wait_for(py, future)?.map_err(py_err)
}
