//! Panics of the libraries we hand untrusted bytes to, turned into errors: the parquet and
//! arrow-ipc crates panic on some corrupt files (a zero divisor in a page, a schema flatbuffer
//! with an impossible type), datafusion-proto on some corrupt plans. A query then fails (or
//! skips the file) instead of taking the process down.
use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};

use datafusion::common::{DataFusionError, Result};
use futures::FutureExt;

/// The text a panic was raised with.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
}

/// `f()`, or `error` of the panic's message when it panics.
pub(crate) fn catch<T>(
    f: impl FnOnce() -> Result<T>,
    error: impl FnOnce(&str) -> DataFusionError,
) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| Err(error(panic_message(&*panic))))
}

/// `future`'s result, or `error` of the panic's message when polling it panics.
pub(crate) async fn catch_async<T>(
    future: impl Future<Output = Result<T>>,
    error: impl FnOnce(&str) -> DataFusionError,
) -> Result<T> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| Err(error(panic_message(&*panic))))
}
