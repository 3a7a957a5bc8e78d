//! Files a scan cannot read: every error names its file ([`in_file`]), and the session options
//! `variant.ignore_corrupt_files` and `variant.ignore_missing_files` (Spark's
//! `spark.sql.files.ignoreCorruptFiles` / `ignoreMissingFiles`) skip such files instead, counted
//! in the scan's metrics (`corrupt_files_skipped`, `missing_files_skipped`) with one warning per
//! file in the log (per file and process: on a cluster each worker counts the files it skipped).
//!
//! `FileErrorMorselizer` wraps a scan's morselizer: a file's footer (planning) and its pages
//! (the morsels' streams) both go through it. A file that fails after some of its rows came out
//! keeps those rows, as in Spark (and so do other byte ranges of it read before the failure). Errors that are not the file's (the memory pool's, a
//! cancellation, an internal error) are never skipped. A panic while reading a file (the parquet
//! and arrow-ipc crates panic on some corrupt bytes) is such an error too (`decoding_panic`),
//! never the process's end.
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion::common::DataFusionError;
use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use datafusion_datasource::PartitionedFile;
use datafusion_datasource::morsel::{Morsel, MorselPlan, MorselPlanner, Morselizer};
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::functions::is_valid_variant::is_valid_variant_array;
use crate::panics::{catch, catch_async, panic_message};
use crate::parquet::VariantConfig;
use crate::variant_array::{
    INVALID_VARIANT_DEBUG, InvalidVariant, invalid_variant, is_variant_like,
};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::record_batch::RecordBatch;
use std::panic::AssertUnwindSafe;

/// Which unreadable files a scan skips rather than fails on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkipFiles {
    /// Files that cannot be decoded (a bad footer, a corrupt page, a truncated file).
    pub corrupt: bool,
    /// Files listed when the query was planned but gone when it reads them.
    pub missing: bool,
}

impl SkipFiles {
    /// The session's `variant.ignore_corrupt_files` and `variant.ignore_missing_files`.
    pub fn from_options(options: &ConfigOptions) -> Self {
        match options.extensions.get::<VariantConfig>() {
            Some(config) => SkipFiles {
                corrupt: config.ignore_corrupt_files,
                missing: config.ignore_missing_files,
            },
            None => SkipFiles::default(),
        }
    }

    /// Whether `error` (from reading one file) is skipped, and if so as what.
    pub(crate) fn skips(&self, error: &DataFusionError) -> Option<Unreadable> {
        match unreadable(error)? {
            Unreadable::Missing if self.missing => Some(Unreadable::Missing),
            Unreadable::Corrupt if self.corrupt => Some(Unreadable::Corrupt),
            _ => None,
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// It is not there (any more).
    Missing,
    /// Its bytes do not decode.
    Corrupt,
}

/// What `error` says of its file. Missing: an object store's or the OS's "not found" anywhere
/// in its chain. Corrupt: only where the file's bytes are at fault: its footer, a page header,
/// decompression or decoding (the parquet crate's errors, and the reader's I/O errors of a short
/// or invalid file), or values that are not valid variants ([`InvalidVariant`]). Neither for
/// the rest: another object store error (a permission, a network failure, throttling: the
/// store's fault), errors of expressions evaluated in the scan (casts, functions, filters),
/// the memory pool's, a cancellation, an internal or a configuration error.
///
pub(crate) fn unreadable(error: &DataFusionError) -> Option<Unreadable> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(store) = e.downcast_ref::<datafusion::object_store::Error>() {
            return match store {
                datafusion::object_store::Error::NotFound { .. } => Some(Unreadable::Missing),
                _ => None,
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::NotFound => Some(Unreadable::Missing),
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData => {
                    Some(Unreadable::Corrupt)
                }
                _ => None,
            };
        }
        if e.is::<InvalidVariant>() {
            return Some(Unreadable::Corrupt);
        }
        // a row filter's error, which the reader passes on as the text of DataFusion's error:
        // the query's, unless that error said the file's values are not variants
        if let Some(arrow) = e.downcast_ref::<datafusion::arrow::error::ArrowError>()
            && arrow.to_string().contains(ROW_FILTER_ERROR)
        {
            return (arrow.to_string())
                .contains(INVALID_VARIANT_DEBUG)
                .then_some(Unreadable::Corrupt);
        }
        source = e.source();
    }
    use datafusion::arrow::error::ArrowError;
    use datafusion::parquet::errors::ParquetError;
    let decoding = match error.find_root() {
        // a row filter's error comes as its text (DataFusion's `Debug` of it) in the reader's
        DataFusionError::ParquetError(e) => match e.as_ref() {
            ParquetError::ArrowError(text) if text.contains(ROW_FILTER_ERROR) => {
                return text
                    .contains(INVALID_VARIANT_DEBUG)
                    .then_some(Unreadable::Corrupt);
            }
            _ => true,
        },
        DataFusionError::ArrowError(e, _) => match e.as_ref() {
            ArrowError::ParquetError(text) if text.contains(ROW_FILTER_ERROR) => {
                return text
                    .contains(INVALID_VARIANT_DEBUG)
                    .then_some(Unreadable::Corrupt);
            }
            ArrowError::ParquetError(_) => true,
            _ => false,
        },
        _ => false,
    };
    decoding.then_some(Unreadable::Corrupt)
}

/// How DataFusion's Parquet row filter words an error of its predicate.
const ROW_FILTER_ERROR: &str = "Error evaluating filter predicate";

/// The text errors from `file` are prefixed with.
fn context(file: &str) -> String {
    format!("reading file {file}")
}

/// `error`, said to come from reading `file` (once: an error that already names it is returned
/// as it is).
pub fn in_file(file: &str, error: DataFusionError) -> DataFusionError {
    let context = context(file);
    if let DataFusionError::Context(existing, _) = &error
        && *existing == context
    {
        return error;
    }
    DataFusionError::Context(context, Box::new(error))
}

/// A panic while decoding a file, as the parquet crate's error: it names the file and counts
/// as corrupt (`variant.ignore_corrupt_files` skips the file).
pub(crate) fn decoding_panic(message: &str) -> DataFusionError {
    DataFusionError::ParquetError(Box::new(
        datafusion::parquet::errors::ParquetError::General(format!(
            "decoding the file panicked: {message}"
        )),
    ))
}

/// The files one scan has skipped (by name), shared by its partitions: a file split into byte
/// ranges is counted and logged once, and its other ranges stop at their next batch.
#[derive(Debug, Default, Clone)]
pub(crate) struct SkippedFiles(Arc<Mutex<HashSet<String>>>);

impl SkippedFiles {
    /// Records `file`; true the first time.
    fn insert(&self, file: &str) -> bool {
        self.0
            .lock()
            .is_ok_and(|mut files| files.insert(file.to_string()))
    }

    fn contains(&self, file: &str) -> bool {
        self.0.lock().is_ok_and(|files| files.contains(file))
    }
}

/// The counters of skipped files.
#[derive(Debug, Clone)]
struct SkipCounters {
    corrupt: Count,
    missing: Count,
}

/// A scan's morselizer whose files' errors name the file, or skip it (see the module
/// documentation).
pub(crate) struct FileErrorMorselizer {
    inner: Box<dyn Morselizer>,
    /// The URL of the scan's object store (`file:///`, `s3://bucket/`), put before each path.
    store: String,
    skip: SkipFiles,
    counters: SkipCounters,
    skipped: SkippedFiles,
}

impl fmt::Debug for FileErrorMorselizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileErrorMorselizer")
            .field("inner", &self.inner)
            .field("skip", &self.skip)
            .finish()
    }
}

impl FileErrorMorselizer {
    /// Wraps `inner`, whose files live in the store at `store` (a URL); counts skipped files in
    /// `metrics`, once each for the whole scan (`skipped`, shared by its partitions).
    pub(crate) fn new(
        inner: Box<dyn Morselizer>,
        store: &str,
        skip: SkipFiles,
        metrics: &ExecutionPlanMetricsSet,
        skipped: SkippedFiles,
    ) -> Self {
        let mut store = store.to_string();
        if !store.ends_with('/') {
            store.push('/');
        }
        FileErrorMorselizer {
            inner,
            store,
            skip,
            counters: SkipCounters {
                corrupt: MetricBuilder::new(metrics).global_counter("corrupt_files_skipped"),
                missing: MetricBuilder::new(metrics).global_counter("missing_files_skipped"),
            },
            skipped,
        }
    }
}

impl Morselizer for FileErrorMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> Result<Box<dyn MorselPlanner>> {
        let tracker = Arc::new(FileTracker {
            name: format!("{}{}", self.store, file.object_meta.location),
            skip: self.skip,
            counters: self.counters.clone(),
            skipped: self.skipped.clone(),
        });
        match catch(|| self.inner.plan_file(file), decoding_panic) {
            Ok(inner) => Ok(Box::new(TrackedPlanner { inner, tracker })),
            Err(e) => tracker.fail(e).map(|()| Box::new(NothingToRead) as _),
        }
    }
}

/// One file (or byte range of a file) being read: its name and what to skip; whether it was
/// skipped already, here or by another part of the scan, is in the scan's [`SkippedFiles`] (its
/// other morsels then end at once).
#[derive(Debug)]
struct FileTracker {
    name: String,
    skip: SkipFiles,
    counters: SkipCounters,
    skipped: SkippedFiles,
}

impl FileTracker {
    /// Ok when `error` is skipped (counted and logged once per file), else `error` naming the
    /// file.
    fn fail(&self, error: DataFusionError) -> Result<()> {
        let Some(kind) = self.skip.skips(&error) else {
            return Err(in_file(&self.name, error));
        };
        if self.skipped.insert(&self.name) {
            let (counter, what) = match kind {
                Unreadable::Missing => (&self.counters.missing, "missing"),
                Unreadable::Corrupt => (&self.counters.corrupt, "corrupt"),
            };
            counter.add(1);
            log::warn!(
                "skipped {what} file {} ({}): {}",
                self.name,
                match kind {
                    Unreadable::Missing => "variant.ignore_missing_files",
                    Unreadable::Corrupt => "variant.ignore_corrupt_files",
                },
                error.strip_backtrace()
            );
        }
        Ok(())
    }

    fn skipped(&self) -> bool {
        self.skipped.contains(&self.name)
    }
}

/// A planner with nothing to do: what a skipped file leaves.
#[derive(Debug)]
struct NothingToRead;

impl MorselPlanner for NothingToRead {
    fn plan(self: Box<Self>) -> Result<Option<MorselPlan>> {
        Ok(None)
    }
}

/// A file's planner (and the planners it leads to), its errors going through the file's
/// tracker.
#[derive(Debug)]
struct TrackedPlanner {
    inner: Box<dyn MorselPlanner>,
    tracker: Arc<FileTracker>,
}

impl MorselPlanner for TrackedPlanner {
    fn plan(self: Box<Self>) -> Result<Option<MorselPlan>> {
        let TrackedPlanner { inner, tracker } = *self;
        if tracker.skipped() {
            return Ok(None);
        }
        let mut plan = match catch(|| inner.plan(), decoding_panic) {
            Ok(Some(plan)) => plan,
            Ok(None) => return Ok(None),
            Err(e) => return tracker.fail(e).map(|()| None),
        };
        let track = |inner| -> Box<dyn MorselPlanner> {
            Box::new(TrackedPlanner {
                inner,
                tracker: Arc::clone(&tracker),
            })
        };
        let morsels: Vec<Box<dyn Morsel>> = plan
            .take_morsels()
            .into_iter()
            .map(|inner| {
                Box::new(TrackedMorsel {
                    inner,
                    tracker: Arc::clone(&tracker),
                }) as _
            })
            .collect();
        let planners: Vec<_> = plan.take_ready_planners().into_iter().map(track).collect();
        let mut tracked = MorselPlan::new()
            .with_morsels(morsels)
            .with_planners(planners);
        if let Some(pending) = plan.take_pending_planner() {
            let tracker = Arc::clone(&tracker);
            tracked.set_pending_planner(async move {
                match catch_async(pending, decoding_panic).await {
                    Ok(inner) => Ok(Box::new(TrackedPlanner { inner, tracker }) as _),
                    Err(e) => tracker.fail(e).map(|()| Box::new(NothingToRead) as _),
                }
            });
        }
        Ok(Some(tracked))
    }
}

/// A file's morsel: its stream's error names the file, or ends the stream when skipped.
#[derive(Debug)]
struct TrackedMorsel {
    inner: Box<dyn Morsel>,
    tracker: Arc<FileTracker>,
}

impl Morsel for TrackedMorsel {
    fn into_stream(self: Box<Self>) -> BoxStream<'static, Result<RecordBatch>> {
        let tracker = self.tracker;
        let inner = self.inner;
        // a panic while decoding ends the stream with an error (`catch_unwind` yields no more)
        let stream = match catch(|| Ok(inner.into_stream()), decoding_panic) {
            Ok(stream) => AssertUnwindSafe(stream)
                .catch_unwind()
                .map(|item| {
                    item.unwrap_or_else(|panic| Err(decoding_panic(panic_message(&*panic))))
                })
                .boxed(),
            Err(e) => futures::stream::once(futures::future::ready(Err(e))).boxed(),
        };
        if tracker.skip == SkipFiles::default() {
            // nothing is skipped (the options are off): errors are named, batches pass as they are
            return stream
                .map(move |item| item.map_err(|e| in_file(&tracker.name, e)))
                .boxed();
        }
        stream
            .scan((), move |(), item| {
                // under `ignore_corrupt_files`, the variants read are checked here, where a value
                // that is not one is still known to be this file's
                let item = match item {
                    Ok(batch) if tracker.skip.corrupt => check_variants(batch),
                    other => other,
                };
                let item = match item {
                    _ if tracker.skipped() => None,
                    Ok(batch) => Some(Ok(batch)),
                    Err(e) => match tracker.fail(e) {
                        Ok(()) => None,
                        Err(e) => Some(Err(e)),
                    },
                };
                futures::future::ready(item)
            })
            .boxed()
    }
}

/// `batch`, or an [`InvalidVariant`] error naming the first of its variant columns (at the
/// top level) with a value that is not a valid variant.
fn check_variants(batch: RecordBatch) -> Result<RecordBatch> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if !is_variant_like(field) {
            continue;
        }
        let valid = is_valid_variant_array(column)?;
        if let Some(row) = (valid.as_boolean().iter()).position(|v| v == Some(false)) {
            return Err(invalid_variant(format!(
                "column {}: the value of row {row} of a batch is not a valid variant",
                field.name()
            )));
        }
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    use datafusion::arrow::error::ArrowError;
    use datafusion::parquet::errors::ParquetError;

    #[test]
    fn says_what_an_error_makes_of_its_file() {
        let missing =
            DataFusionError::ObjectStore(Box::new(datafusion::object_store::Error::NotFound {
                path: "x".into(),
                source: "gone".into(),
            }));
        assert_eq!(unreadable(&missing), Some(Unreadable::Missing));
        let io = DataFusionError::IoError(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(unreadable(&io), Some(Unreadable::Missing));
        let wrapped = DataFusionError::ParquetError(Box::new(
            datafusion::parquet::errors::ParquetError::External(Box::new(
                datafusion::object_store::Error::NotFound {
                    path: "x".into(),
                    source: "gone".into(),
                },
            )),
        ));
        assert_eq!(unreadable(&wrapped), Some(Unreadable::Missing));
        let corrupt = DataFusionError::ParquetError(Box::new(
            datafusion::parquet::errors::ParquetError::General("Corrupt footer".into()),
        ));
        assert_eq!(unreadable(&corrupt), Some(Unreadable::Corrupt));
        let in_context = in_file("file:///a.parquet", corrupt);
        assert_eq!(unreadable(&in_context), Some(Unreadable::Corrupt));
        let denied = DataFusionError::ParquetError(Box::new(
            datafusion::parquet::errors::ParquetError::External(Box::new(
                datafusion::object_store::Error::PermissionDenied {
                    path: "x".into(),
                    source: "403".into(),
                },
            )),
        ));
        assert_eq!(unreadable(&denied), None);
        let memory = DataFusionError::ResourcesExhausted("pool".into());
        assert_eq!(unreadable(&memory), None);
        // decoding errors the reader passes on as Arrow errors
        let decoding = DataFusionError::ArrowError(
            Box::new(ArrowError::ParquetError("Corrupt page".into())),
            None,
        );
        assert_eq!(unreadable(&decoding), Some(Unreadable::Corrupt));
        // the query's own errors, evaluated in the scan: a cast, a function, a filter
        let cast = DataFusionError::ArrowError(
            Box::new(ArrowError::CastError("Cannot cast string 'x'".into())),
            None,
        );
        assert_eq!(unreadable(&cast), None);
        let function = DataFusionError::Execution("variant_get: cannot cast \"x\"".into());
        assert_eq!(unreadable(&function), None);
        // (as the parquet crate passes on a row filter's error, and as older ones did)
        let filter = |inner: &DataFusionError| {
            DataFusionError::ParquetError(Box::new(ParquetError::from(ArrowError::ComputeError(
                format!("Error evaluating filter predicate: {inner:?}"),
            ))))
        };
        let filter_as_text = |inner: &DataFusionError| {
            DataFusionError::ParquetError(Box::new(ParquetError::ArrowError(format!(
                "Compute error: Error evaluating filter predicate: {inner:?}"
            ))))
        };
        assert_eq!(unreadable(&filter(&function)), None);
        assert_eq!(unreadable(&filter_as_text(&function)), None);
        assert_eq!(unreadable(&filter(&cast)), None);
        // values that are not variants are the file's, wherever they are read
        let invalid = crate::variant_array::invalid_variant("to_json: malformed variant");
        assert_eq!(
            unreadable(&in_file("file:///a.parquet", invalid)),
            Some(Unreadable::Corrupt)
        );
        let invalid = crate::variant_array::invalid_variant("to_json: malformed variant");
        assert_eq!(unreadable(&filter(&invalid)), Some(Unreadable::Corrupt));
        assert_eq!(
            unreadable(&filter_as_text(&invalid)),
            Some(Unreadable::Corrupt)
        );
        // a value that merely quotes the marker's name is no invalid variant
        let quoted = DataFusionError::Execution("cannot cast \"InvalidVariant(\" to INT".into());
        assert_eq!(unreadable(&filter(&quoted)), None);
        // the codec's limits are no bad bytes; bytes that are not a variant are
        let limit =
            crate::variant_array::codec_error("to_variant", crate::codec::VariantError::TooLarge);
        assert_eq!(unreadable(&limit), None);
        let unknown = crate::variant_array::codec_error(
            "to_json",
            crate::codec::VariantError::UnknownPrimitiveType(63),
        );
        assert_eq!(unreadable(&unknown), Some(Unreadable::Corrupt));
        // I/O: a short file is corrupt, a refused read is not
        let short = DataFusionError::IoError(std::io::ErrorKind::UnexpectedEof.into());
        assert_eq!(unreadable(&short), Some(Unreadable::Corrupt));
        let refused = DataFusionError::IoError(std::io::ErrorKind::PermissionDenied.into());
        assert_eq!(unreadable(&refused), None);
        assert_eq!(unreadable(&DataFusionError::Internal("bug".into())), None);

        let both = SkipFiles {
            corrupt: true,
            missing: false,
        };
        assert_eq!(both.skips(&in_context), Some(Unreadable::Corrupt));
        assert_eq!(both.skips(&missing), None);
        assert_eq!(both.skips(&memory), None);
    }

    #[test]
    fn errors_name_their_file_once() {
        let error = in_file(
            "file:///data/a.parquet",
            DataFusionError::Execution("bad page".into()),
        );
        assert_eq!(
            error.to_string(),
            "reading file file:///data/a.parquet\ncaused by\nExecution error: bad page"
        );
        let again = in_file("file:///data/a.parquet", error);
        assert_eq!(again.to_string().matches("reading file").count(), 1);
    }
}
