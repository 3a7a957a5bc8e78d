//! Atomic Parquet writes: a `COPY` or `INSERT` writes its files under staging names and publishes
//! them (renames each to its real name) only after the whole input was written. A statement that
//! fails, or is cancelled, deletes what it staged: no new file appears, no existing file is
//! replaced, and readers of the table never list a half-written file (staging names are hidden
//! and do not end in the table's extension).
//!
//! Publishing is checked against the store: a rename whose request failed may have happened
//! (its answer lost, or an object store's copy made and its delete refused), so the store is
//! looked at before the write is called failed ([`move_object`]). A rename that did not happen
//! undoes the ones before it (a directory output's files have new names: deleting them leaves
//! the directory as it was). Where the store refuses that too, the error names each file left
//! visible; a single output file is never half there (it is the old object or the new one).
//! Staged copies that cannot be removed stay hidden, each named in a warning.
//!
//! The sink underneath (ours for variant columns, DataFusion's otherwise) is given a sink
//! configuration whose output names are the staging names: the single output file gets a hidden
//! sibling name, and the files of a directory output (partitioned or not) go to a hidden folder
//! in the output directory, their extension followed by a suffix unique to the write. The
//! staging names are made on the output's URL, so that characters that need encoding name the
//! same objects on both sides.
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result, internal_err};
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
use datafusion_datasource::file_sink_config::FileOutputMode;

/// Where one write stages its files, and how they are published.
#[derive(Debug, Clone)]
enum Staging {
    /// One output file: written at `staged` (a hidden sibling), renamed to `target`.
    File { staged: Path, target: Path },
    /// A directory output: the files are written under `staging` (a hidden folder beside the
    /// output's files, which no table listing reads: readers skip names starting with `.`, and
    /// DataFusion's skip extensions they do not know), each name ending in `suffix`; publishing
    /// moves each to the same place under `target` without the suffix.
    Directory {
        staging: Path,
        target: Path,
        suffix: String,
        /// The staging folder on the local file system (a `file://` output), removed when the
        /// write is published or discarded: object stores have no folders to delete, but a
        /// local one would stay behind, empty.
        local_folder: Option<std::path::PathBuf>,
    },
}

/// A [`StagedWrite`]'s staging as plans carry it (`plan_codec`): its paths as their encoded
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StagingText {
    /// [`Staging::File`].
    File { staged: String, target: String },
    /// [`Staging::Directory`].
    Directory {
        staging: String,
        target: String,
        suffix: String,
    },
}

/// Where the local file system store keeps `path` (its own mapping, so that no character of a
/// name can make it another folder).
fn local_path(path: &Path) -> Option<std::path::PathBuf> {
    datafusion::object_store::local::LocalFileSystem::new()
        .path_to_filesystem(path)
        .ok()
}

/// Removes `folder` and the folders below it that are empty; files, and folders holding them,
/// stay (a staging folder is empty once its files were published or deleted).
fn remove_empty_folders(folder: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_folders(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(folder);
}

/// How every staging name ends.
const STAGING_END: &str = ".inprogress";

/// A name no other write uses: the process, the time and a counter.
fn unique_suffix() -> String {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    format!("{:x}-{nanos:x}-{n:x}{STAGING_END}", std::process::id())
}

/// `url` with its path replaced by `path` (already percent-encoded, as `Url::path` gives it).
fn with_url_path(url: &ListingTableUrl, path: &str) -> Result<ListingTableUrl> {
    let mut staged = url.get_url().clone();
    staged.set_path(path);
    ListingTableUrl::try_new(staged, None)
}

/// Rewrites `conf` to write under staging names; returns the rewritten configuration and the
/// staging that [`StagedWrite::wrap`] publishes. The staging names are made on the output's
/// URL, so that they name exactly the objects the sink writes (however their characters are
/// encoded).
pub(crate) fn stage(mut conf: FileSinkConfig) -> Result<(FileSinkConfig, StagedWrite)> {
    let Some(output) = conf.table_paths.first().cloned() else {
        return internal_err!("a file sink without an output path");
    };
    let suffix = unique_suffix();
    let single =
        conf.table_partition_cols.is_empty() && conf.file_output_mode.single_file_output(&output);
    let url_path = output.get_url().path();
    let staging = if single {
        let (folder, name) = url_path.rsplit_once('/').unwrap_or(("", url_path));
        let staged_url = with_url_path(&output, &format!("{folder}/.{name}.{suffix}"))?;
        let staged = staged_url.prefix().clone();
        conf.table_paths = vec![staged_url];
        conf.file_output_mode = FileOutputMode::SingleFile;
        Staging::File {
            staged,
            target: output.prefix().clone(),
        }
    } else {
        let folder = url_path.strip_suffix('/').unwrap_or(url_path);
        let staged_url = with_url_path(&output, &format!("{folder}/.{suffix}/"))?;
        let staging = staged_url.prefix().clone();
        let local_folder = (staged_url.scheme() == "file")
            .then(|| local_path(&staging))
            .flatten();
        conf.table_paths = vec![staged_url];
        conf.file_extension = format!("{}.{suffix}", conf.file_extension);
        Staging::Directory {
            staging,
            target: output.prefix().clone(),
            suffix: format!(".{suffix}"),
            local_folder,
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
    /// The staging as plans carry it: the store's URL and where the files go.
    pub(crate) fn to_text(&self) -> (String, StagingText) {
        let staging = match &self.staging {
            Staging::File { staged, target } => StagingText::File {
                staged: staged.to_string(),
                target: target.to_string(),
            },
            Staging::Directory {
                staging,
                target,
                suffix,
                ..
            } => StagingText::Directory {
                staging: staging.to_string(),
                target: target.to_string(),
                suffix: suffix.clone(),
            },
        };
        (self.store.as_str().to_string(), staging)
    }

    /// The staging [`Self::to_text`] gave. The text comes from elsewhere and the staging
    /// decides what is renamed and deleted, so it must have the shape [`stage`] gives: the
    /// single file is the target's hidden sibling with a write's suffix; a staging folder is
    /// the hidden folder of a suffix in the target. The local folder is worked out again from
    /// the store and the staging, as the local store names it.
    pub(crate) fn from_text(store: &str, staging: &StagingText) -> Result<Self> {
        let refuse = || internal_err!("a staged write that stage() did not make: {staging:?}");
        // a suffix: one name ending as stage() ends them
        let suffix_ok = |s: &str| s.ends_with(STAGING_END) && !s.contains('/');
        // `name` in the folder of `path` ("" at the root)
        let sibling = |path: &Path, name: &str| match path.as_ref().rsplit_once('/') {
            Some((folder, _)) => format!("{folder}/{name}"),
            None => name.to_string(),
        };
        let store = ObjectStoreUrl::parse(store)?;
        // the paths are already encoded: parsed, not built from parts (which would encode again)
        let staging = match staging {
            StagingText::File { staged, target } => {
                let staged = Path::parse(staged)?;
                let target = Path::parse(target)?;
                let name = target.filename().unwrap_or_default();
                let staged_name = staged.filename().unwrap_or_default();
                let suffix = staged_name
                    .strip_prefix(&format!(".{name}."))
                    .unwrap_or_default();
                if name.is_empty()
                    || !suffix_ok(suffix)
                    || staged.as_ref() != sibling(&target, staged_name)
                {
                    return refuse();
                }
                Staging::File { staged, target }
            }
            StagingText::Directory {
                staging,
                target,
                suffix,
            } => {
                let staging = Path::parse(staging)?;
                let target = Path::parse(target)?;
                // the staging folder is `.{suffix}` in the target (the suffix has its dot)
                let folder = suffix.as_str();
                let expected = match target.as_ref() {
                    "" => folder.to_string(),
                    target => format!("{target}/{folder}"),
                };
                if !folder.starts_with('.') || !suffix_ok(folder) || staging.as_ref() != expected {
                    return refuse();
                }
                let local_folder = store
                    .as_str()
                    .starts_with("file://")
                    .then(|| local_path(&staging))
                    .flatten();
                Staging::Directory {
                    staging,
                    target,
                    suffix: suffix.clone(),
                    local_folder,
                }
            }
        };
        Ok(Self { store, staging })
    }

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

    /// The staged files, each with the name it is published under. The single file is listed
    /// whether or not it exists (the sink always writes it, even without rows).
    async fn staged_files(&self, store: &dyn ObjectStore) -> Result<Vec<(Path, Path)>> {
        let (staging, target, suffix) = match &self.staging {
            Staging::File { staged, target } => return Ok(vec![(staged.clone(), target.clone())]),
            Staging::Directory {
                staging,
                target,
                suffix,
                ..
            } => (staging, target, suffix),
        };
        // Level by level (partition folders below the staging folder).
        let (mut files, mut folders) = (vec![], vec![staging.clone()]);
        while let Some(folder) = folders.pop() {
            let listed = store.list_with_delimiter(Some(&folder)).await?;
            folders.extend(listed.common_prefixes);
            for meta in listed.objects {
                // Both are encoded paths: the published name is the staged one moved from the
                // staging folder to the target and without the suffix, with no re-encoding.
                let name = meta.location.as_ref();
                let relative = name
                    .strip_prefix(staging.as_ref())
                    .and_then(|r| r.strip_suffix(suffix.as_str()));
                if let Some(relative) = relative {
                    let published = format!("{}{relative}", target.as_ref());
                    files.push((meta.location.clone(), Path::parse(published)?));
                }
            }
        }
        Ok(files)
    }

    /// Moves every staged file to its name, recording each one published in `published`. A
    /// move that fails undoes the ones before it (a directory output's files are new names:
    /// deleting them leaves the directory as it was); the error names any published file that
    /// could not be removed again. A staged copy left behind by a move that happened (a store
    /// that copies, then failed to delete) stays under its hidden name, named in a warning.
    async fn publish(&self, store: &dyn ObjectStore, published: &Published) -> Result<()> {
        let mut left_behind = vec![];
        for (staged, target) in self.staged_files(store).await? {
            match move_object(store, &staged, &target).await {
                Ok(Moved::Clean) => published.add(&target),
                Ok(Moved::SourceLeft) => {
                    published.add(&target);
                    left_behind.push(staged);
                }
                Err(MoveFailed { error, maybe_moved }) => {
                    warn_left_behind(&left_behind);
                    // a directory output's file has a new name: one that may have arrived is
                    // deleted with the others (a single output file may be the old one: kept)
                    if maybe_moved && matches!(self.staging, Staging::Directory { .. }) {
                        published.add(&target);
                    }
                    let visible = published.undo(store).await;
                    let error = match (&self.staging, maybe_moved) {
                        (Staging::File { .. }, true) => error.context(format!(
                            "publishing {target}: whether it was replaced is unknown (its \
                             rename failed and the store could not be asked); it is the old \
                             file or the new one, whole"
                        )),
                        _ => error.context(format!("publishing {target}")),
                    };
                    if visible.is_empty() {
                        return Err(error);
                    }
                    let names: Vec<String> = visible.iter().map(|p| p.to_string()).collect();
                    return Err(error.context(format!(
                        "the write failed while publishing its files, and these of them could \
                         not be removed again, so readers see them: {}",
                        names.join(", ")
                    )));
                }
            }
        }
        warn_left_behind(&left_behind);
        self.remove_local_folder();
        Ok(())
    }

    /// Removes the (by now empty) local staging folder, if any.
    fn remove_local_folder(&self) {
        if let Staging::Directory {
            local_folder: Some(folder),
            ..
        } = &self.staging
        {
            remove_empty_folders(folder);
        }
    }

    /// Deletes every staged file (best effort: each one left is named in a warning, the first
    /// error is returned after trying all).
    async fn discard(&self, store: &dyn ObjectStore) -> Result<()> {
        let mut first_error = None;
        for (staged, _) in self.staged_files(store).await? {
            match store.delete(&staged).await {
                Ok(()) | Err(datafusion::object_store::Error::NotFound { .. }) => {}
                Err(e) => {
                    log::warn!(
                        "{staged}: a staged file of a failed write could not be removed ({e}); \
                         it stays under its hidden name, which no reader lists"
                    );
                    first_error.get_or_insert(e);
                }
            }
        }
        self.remove_local_folder();
        first_error.map_or(Ok(()), |e| Err(e.into()))
    }
}

/// A sink that writes through the sink of `inner` (the `DataSinkExec` the format planned, with
/// the staging names) and then publishes (see the module).
#[derive(Debug)]
pub(crate) struct StagedSink {
    inner: Arc<dyn ExecutionPlan>,
    write: StagedWrite,
}

impl StagedSink {
    /// The `DataSinkExec` of the sink underneath, and the staging.
    pub(crate) fn parts(&self) -> (&Arc<dyn ExecutionPlan>, &StagedWrite) {
        (&self.inner, &self.write)
    }

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

/// The files a write has published (or moved) so far, shared with its drop guard.
#[derive(Debug, Default, Clone)]
pub(crate) struct Published(Arc<std::sync::Mutex<Vec<Path>>>);

impl Published {
    /// Records `path` as published.
    pub(crate) fn add(&self, path: &Path) {
        if let Ok(mut paths) = self.0.lock() {
            paths.push(path.clone());
        }
    }

    fn take(&self) -> Vec<Path> {
        (self.0.lock())
            .map(|mut paths| std::mem::take(&mut *paths))
            .unwrap_or_default()
    }

    /// Deletes the files published so far; those still there after it.
    pub(crate) async fn undo(&self, store: &dyn ObjectStore) -> Vec<Path> {
        let mut visible = vec![];
        for path in self.take() {
            if !delete_for_sure(store, &path).await {
                visible.push(path);
            }
        }
        visible
    }
}

/// Deletes `path`; whether it is gone (a delete that failed may have been applied: the store is
/// asked).
pub(crate) async fn delete_for_sure(store: &dyn ObjectStore, path: &Path) -> bool {
    match store.delete(path).await {
        Ok(()) | Err(datafusion::object_store::Error::NotFound { .. }) => true,
        Err(_) => matches!(
            store.head(path).await,
            Err(datafusion::object_store::Error::NotFound { .. })
        ),
    }
}

/// What became of a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moved {
    /// The object is at its new name, and no longer at its old one.
    Clean,
    /// The object is at its new name, and a copy stayed at the old one (a store that copies and
    /// deletes, whose delete failed twice).
    SourceLeft,
}

/// A move that failed.
#[derive(Debug)]
pub(crate) struct MoveFailed {
    /// The request's error.
    pub error: DataFusionError,
    /// Whether it may have happened all the same: the store could not be asked.
    pub maybe_moved: bool,
}

impl From<DataFusionError> for MoveFailed {
    fn from(error: DataFusionError) -> Self {
        MoveFailed {
            error,
            maybe_moved: false,
        }
    }
}

impl From<datafusion::object_store::Error> for MoveFailed {
    fn from(error: datafusion::object_store::Error) -> Self {
        DataFusionError::from(error).into()
    }
}

/// Moves `from` to `to` (the store's rename: the local store's own, a copy and a delete on
/// object stores). A move whose request failed may have happened all the same (its answer
/// lost, or the copy made and the delete refused), so the store is looked at then: `to` holding
/// an object of `from`'s size that it did not hold before means it did (its source, if still
/// there, is deleted again). Else the request's error, saying whether the store could not be
/// asked (the move may have happened).
pub(crate) async fn move_object(
    store: &dyn ObjectStore,
    from: &Path,
    to: &Path,
) -> std::result::Result<Moved, MoveFailed> {
    use datafusion::object_store::Error::NotFound;
    let source = store.head(from).await?;
    let before = match store.head(to).await {
        Ok(meta) => Some(meta),
        Err(NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let Err(error) = store.rename(from, to).await else {
        return Ok(Moved::Clean);
    };
    let arrived = match store.head(to).await {
        Ok(now) => now.size == source.size && Some(&now) != before.as_ref(),
        Err(NotFound { .. }) => false,
        Err(_) => {
            return Err(MoveFailed {
                error: error.into(),
                maybe_moved: true,
            });
        }
    };
    if !arrived {
        return Err(error.into());
    }
    Ok(if delete_for_sure(store, from).await {
        Moved::Clean
    } else {
        Moved::SourceLeft
    })
}

/// Warns of staged copies a write's moves left behind (under their hidden names, which no
/// reader lists).
fn warn_left_behind(paths: &[Path]) {
    for path in paths {
        log::warn!(
            "{path}: a staged copy of a published file could not be removed; it stays under its \
             hidden name, which no reader lists"
        );
    }
}

/// Deletes the staged files, and undoes what was published, when dropped armed: the write was
/// cancelled (its future dropped) before it finished publishing or discarding.
struct DiscardOnDrop {
    write: Option<(StagedWrite, Arc<dyn ObjectStore>, Published)>,
}

/// When the clean-up of a cancelled write runs (milliseconds, each after the one before). The
/// sink's writer tasks are aborted with the statement, but a store operation already running on
/// a blocking thread (a local file completed by a rename, a part written) still lands, and the
/// local store recreates the folders it needs: the clean-up runs again over a few seconds.
pub(crate) const CLEAN_UP_AFTER_CANCEL_MS: [u64; 5] = [0, 50, 250, 1000, 3000];

impl Drop for DiscardOnDrop {
    fn drop(&mut self) {
        if let Some((write, store, published)) = self.write.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let handle = runtime.clone();
            runtime.spawn_blocking(move || {
                for delay in CLEAN_UP_AFTER_CANCEL_MS {
                    std::thread::sleep(std::time::Duration::from_millis(delay));
                    let _ = handle.block_on(async {
                        let _ = published.undo(store.as_ref()).await;
                        write.discard(store.as_ref()).await
                    });
                }
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
        let published = Published::default();
        let mut guard = DiscardOnDrop {
            write: Some((self.write.clone(), Arc::clone(&store), published.clone())),
        };
        let written = self.sink().write_all(data, context).await;
        let outcome = match written {
            Ok(rows) => match self.write.publish(store.as_ref(), &published).await {
                Ok(()) => Ok(rows),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        if outcome.is_err() {
            // The sink's error is the one to report; leftovers of a failed clean-up are
            // staging names, which no reader lists (each named in a warning).
            let _ = self.write.discard(store.as_ref()).await;
        }
        guard.write = None;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(staging: &str, suffix: &str) -> StagingText {
        StagingText::Directory {
            staging: staging.to_string(),
            target: "tmp/out".to_string(),
            suffix: suffix.to_string(),
        }
    }

    fn file(staged: &str, target: &str) -> StagingText {
        StagingText::File {
            staged: staged.to_string(),
            target: target.to_string(),
        }
    }

    #[test]
    fn decoded_stagings_must_be_what_stage_makes() {
        let suffix = ".1-2-3.inprogress";
        let good = [
            directory("tmp/out/.1-2-3.inprogress", suffix),
            file("tmp/.out.parquet.1-2-3.inprogress", "tmp/out.parquet"),
            file(".out.parquet.1-2-3.inprogress", "out.parquet"),
        ];
        for staging in &good {
            assert!(
                StagedWrite::from_text("file://", staging).is_ok(),
                "{staging:?}"
            );
        }
        // each of these would make a write rename or delete what is not its own
        let bad = [
            directory("tmp/out", ""),
            directory("tmp/out/.x", ".x"),
            directory("tmp/out/.a/b.inprogress", ".a/b.inprogress"),
            directory("tmp/elsewhere/.1-2-3.inprogress", suffix),
            file("tmp/out.parquet", "tmp/out.parquet"),
            file("tmp/.out.parquet", "tmp/out.parquet"),
            // another file's staging, or one in another folder
            file("tmp/.other.parquet.1-2-3.inprogress", "tmp/out.parquet"),
            file("elsewhere/.out.parquet.1-2-3.inprogress", "tmp/out.parquet"),
            file(".out.parquet.1-2-3.inprogress", "tmp/out.parquet"),
        ];
        for staging in &bad {
            assert!(
                StagedWrite::from_text("file://", staging).is_err(),
                "{staging:?}"
            );
        }
    }

    #[test]
    fn only_local_stores_have_a_local_folder() {
        let staging = directory("tmp/out/.1-2-3.inprogress", ".1-2-3.inprogress");
        let remote = StagedWrite::from_text("s3://bucket", &staging).unwrap();
        assert!(matches!(
            remote.staging,
            Staging::Directory {
                local_folder: None,
                ..
            }
        ));
    }
}
