//! Files a scan cannot read: every error names its file ([`in_file`]), and the session options
//! `variant.ignore_corrupt_files` and `variant.ignore_missing_files` (Spark's
//! `spark.sql.files.ignoreCorruptFiles` / `ignoreMissingFiles`) skip such files instead, counted
//! in the scan's metrics (`corrupt_files_skipped`, `missing_files_skipped`) with one warning per
//! file in the log (per file and process: on a cluster each worker counts the files it skipped).
//!
//! `FileErrorMorselizer` wraps a scan's morselizer: a file's footer (planning) and its pages
//! (the morsels' streams) both go through it. A file that fails after some of its rows came out
//! keeps those rows, as in Spark (and so do other byte ranges of it read before the failure). Errors that are not the file's (the memory pool's, a
//! cancellation, an internal error) are never skipped.
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

use super::VariantConfig;
use datafusion::arrow::record_batch::RecordBatch;

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

/// What `error` says of its file: missing (an object store's or the OS's "not found" anywhere in
/// its chain); neither when another object store error is in the chain (a permission, a
/// network failure, throttling: the store's fault, not the file's); corrupt when its root is a
/// Parquet, Arrow, I/O or execution error (decoding the file, or an expression evaluated inside
/// the reader on its values); neither for the others (the memory pool's, an internal or a
/// configuration error).
pub(crate) fn unreadable(error: &DataFusionError) -> Option<Unreadable> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(store) = e.downcast_ref::<datafusion::object_store::Error>() {
            return match store {
                datafusion::object_store::Error::NotFound { .. } => Some(Unreadable::Missing),
                _ => None,
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::NotFound
        {
            return Some(Unreadable::Missing);
        }
        source = e.source();
    }
    match error.find_root() {
        DataFusionError::ParquetError(_)
        | DataFusionError::ArrowError(..)
        | DataFusionError::IoError(_)
        | DataFusionError::External(_)
        | DataFusionError::Execution(_) => Some(Unreadable::Corrupt),
        _ => None,
    }
}

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
        match self.inner.plan_file(file) {
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
        let mut plan = match inner.plan() {
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
                match pending.await {
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
        if tracker.skip == SkipFiles::default() {
            // nothing is skipped (the options are off): errors are named, batches pass as they are
            return self
                .inner
                .into_stream()
                .map(move |item| item.map_err(|e| in_file(&tracker.name, e)))
                .boxed();
        }
        self.inner
            .into_stream()
            .scan((), move |(), item| {
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

#[cfg(test)]
mod tests {
    use super::*;

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
