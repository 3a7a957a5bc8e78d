//! Atomic Parquet writes: a `COPY` or `INSERT` writes its files under staging names and publishes
//! them (renames each to its real name) only after the whole input was written. A statement that
//! fails, or is cancelled, deletes what it staged: no new file appears, no existing file is
//! replaced, and readers of the table never list a half-written file (staging names do not end
//! in the table's extension).
//!
//! The sink underneath (ours for variant columns, DataFusion's otherwise) is given a sink
//! configuration whose output names are the staging names: the single output file gets a hidden
//! sibling name, and the files of a directory output (partitioned or not) get their extension
//! followed by a suffix unique to the write, by which they are found again afterwards.
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{Result, internal_err};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::datasource::physical_plan::FileSinkConfig;
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::TaskContext;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::path::Path;
use datafusion::object_store::{ObjectStore, ObjectStoreExt};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, SendableRecordBatchStream,
};

/// Where one write stages its files, and how they are published.
#[derive(Debug, Clone)]
enum Staging {
    /// One output file: written at `staged`, renamed to `target`.
    File { staged: Path, target: Path },
    /// A directory output: every file under `prefix` whose name ends with `suffix` was written
    /// by this write; publishing drops the suffix.
    Directory { prefix: Path, suffix: String },
}

/// A suffix no other write uses: the process, the time and a counter.
fn unique_suffix() -> String {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    format!("{:x}-{nanos:x}-{n:x}.inprogress", std::process::id())
}

/// Rewrites `conf` to write under staging names; returns the rewritten configuration and the
/// staging that [`publish_staged`] needs.
pub(crate) fn stage(mut conf: FileSinkConfig) -> Result<(FileSinkConfig, StagedWrite)> {
    let Some(output) = conf.table_paths.first() else {
        return internal_err!("a file sink without an output path");
    };
    let suffix = unique_suffix();
    let single =
        conf.table_partition_cols.is_empty() && conf.file_output_mode.single_file_output(output);
    let staging = if single {
        let target = output.prefix().clone();
        let name = target.filename().unwrap_or("output");
        let staged_name = format!(".{name}.{suffix}");
        let staged = match target.parts().count() {
            0 | 1 => Path::from(staged_name.as_str()),
            n => Path::from_iter(target.parts().take(n - 1)).join(staged_name.as_str()),
        };
        let url = format!("{}{}", conf.object_store_url.as_str(), staged);
        conf.table_paths = vec![ListingTableUrl::parse(url)?];
        conf.file_output_mode = datafusion_datasource::file_sink_config::FileOutputMode::SingleFile;
        Staging::File { staged, target }
    } else {
        conf.file_extension = format!("{}.{suffix}", conf.file_extension);
        Staging::Directory {
            prefix: output.prefix().clone(),
            suffix: format!(".{suffix}"),
        }
    };
    let write = StagedWrite {
        store: conf.object_store_url.clone(),
        staging,
    };
    Ok((conf, write))
}

/// The staging of one write, and the store it writes to.
#[derive(Debug, Clone)]
pub(crate) struct StagedWrite {
    store: ObjectStoreUrl,
    staging: Staging,
}

impl StagedWrite {
    /// `plan` (a `DataSinkExec` writing under the staging names) with its sink publishing the
    /// files once the sink succeeded, and deleting them otherwise.
    pub(crate) fn wrap(self, plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(exec) = plan.downcast_ref::<DataSinkExec>() else {
            return internal_err!("a Parquet writer plan is not a DataSinkExec");
        };
        let (input, sort_order) = (Arc::clone(exec.input()), exec.sort_order().clone());
        let sink = Arc::new(StagedSink {
            inner: plan,
            write: self,
        });
        Ok(Arc::new(DataSinkExec::new(input, sink, sort_order)))
    }

    /// The staged files, each with the name it is published under.
    async fn staged_files(&self, store: &dyn ObjectStore) -> Result<Vec<(Path, Path)>> {
        match &self.staging {
            Staging::File { staged, target } => Ok(match store.head(staged).await {
                Ok(_) => vec![(staged.clone(), target.clone())],
                Err(datafusion::object_store::Error::NotFound { .. }) => vec![],
                Err(e) => return Err(e.into()),
            }),
            Staging::Directory { prefix, suffix } => {
                // Level by level (partition directories below the output directory).
                let (mut files, mut folders) = (vec![], vec![prefix.clone()]);
                while let Some(folder) = folders.pop() {
                    let listed = store.list_with_delimiter(Some(&folder)).await?;
                    folders.extend(listed.common_prefixes);
                    files.extend(listed.objects.into_iter().filter_map(|meta| {
                        let name = meta.location.as_ref().strip_suffix(suffix.as_str())?;
                        Some((meta.location.clone(), Path::from(name)))
                    }));
                }
                Ok(files)
            }
        }
    }

    /// Renames every staged file to its name.
    async fn publish(&self, store: &dyn ObjectStore) -> Result<()> {
        for (staged, target) in self.staged_files(store).await? {
            store.rename(&staged, &target).await?;
        }
        Ok(())
    }

    /// Deletes every staged file (best effort: the first error is returned after trying all).
    async fn discard(&self, store: &dyn ObjectStore) -> Result<()> {
        let mut first_error = None;
        for (staged, _) in self.staged_files(store).await? {
            match store.delete(&staged).await {
                Ok(()) | Err(datafusion::object_store::Error::NotFound { .. }) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), |e| Err(e.into()))
    }
}

/// A sink that writes through the sink of `inner` (the `DataSinkExec` the format planned, with
/// the staging names) and then publishes (see the module).
#[derive(Debug)]
struct StagedSink {
    inner: Arc<dyn ExecutionPlan>,
    write: StagedWrite,
}

impl StagedSink {
    fn sink(&self) -> &dyn DataSink {
        self.inner
            .downcast_ref::<DataSinkExec>()
            .expect("checked in StagedWrite::wrap")
            .sink()
    }
}

impl DisplayAs for StagedSink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.sink().fmt_as(t, f)
    }
}

/// Deletes the staged files when dropped armed: the write was cancelled (its future dropped)
/// before it published or discarded them.
struct DiscardOnDrop {
    write: Option<(StagedWrite, Arc<dyn ObjectStore>)>,
}

impl Drop for DiscardOnDrop {
    fn drop(&mut self) {
        if let Some((write, store)) = self.write.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = write.discard(store.as_ref()).await;
            });
        }
    }
}

#[async_trait]
impl DataSink for StagedSink {
    fn metrics(&self) -> Option<datafusion::physical_plan::metrics::MetricsSet> {
        self.sink().metrics()
    }

    fn schema(&self) -> &SchemaRef {
        self.sink().schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let store = context.runtime_env().object_store(&self.write.store)?;
        let mut guard = DiscardOnDrop {
            write: Some((self.write.clone(), Arc::clone(&store))),
        };
        let written = self.sink().write_all(data, context).await;
        let outcome = match written {
            Ok(rows) => match self.write.publish(store.as_ref()).await {
                Ok(()) => Ok(rows),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        if outcome.is_err() {
            // The sink's error is the one to report; leftovers of a failed clean-up are
            // staging names, which no reader lists.
            let _ = self.write.discard(store.as_ref()).await;
        }
        guard.write = None;
        outcome
    }
}
