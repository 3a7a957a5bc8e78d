//! Which files of a folder are data, by Spark's rule (`HadoopFSUtils.shouldFilterOutPathName`):
//! below a table's location, a name that starts with `.`, or with `_` unless it holds `=` (a
//! partition folder), or that ends in `._COPYING_`, is not data, and neither is anything
//! inside a folder so named: `_SUCCESS`, `.part-0.json.crc`, `_temporary/0/..`,
//! `_spark_metadata/`, `_delta_log/`. (Spark lists `_metadata` and `_common_metadata` for its
//! Parquet reader's summaries, and reads no rows from them; we leave them out.) A location that names such a file itself still reads it,
//! and a glob's matches are its own (the rule applies to folders listed whole).
//!
//! DataFusion's `ListingTable` lists every file under a folder (a folder location even drops
//! the extension filter). [`data_files_only`] gives a table the session it plans with, whose
//! object stores leave those names out of the listings under the table's folders; everything
//! else (reads, writes, listings elsewhere) goes to the session's own stores.
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::execution::object_store::ObjectStoreRegistry;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use url::Url;

/// Whether a file or folder named `name` (one segment of a path) may hold data.
pub fn is_data_name(name: &str) -> bool {
    let hidden = (name.starts_with('_') && !name.contains('='))
        || name.starts_with('.')
        || name.ends_with("._COPYING_");
    !hidden
}

/// Whether `location` is data as listed under the folder `root`: every segment below `root`
/// names data. Locations outside `root` are not judged (true).
pub fn is_data_below(root: &Path, location: &Path) -> bool {
    match location.prefix_match(root) {
        Some(mut below) => below.all(|part| is_data_name(part.as_ref())),
        None => true,
    }
}

/// `state` with object stores whose listings under the folders of `locations` (those that
/// are not globs) leave out what [`is_data_name`] says is not data. None where no location is
/// such a folder, or where the session is not a `SessionState` (a foreign session's listings
/// are DataFusion's).
pub fn data_files_only(state: &dyn Session, locations: &[ListingTableUrl]) -> Option<SessionState> {
    let folders: Vec<(Url, Path)> = locations
        .iter()
        .filter(|l| l.get_glob().is_none())
        .map(|l| {
            let store = l.object_store();
            let url: &Url = store.as_ref();
            (url.clone(), l.prefix().clone())
        })
        .collect();
    let session = state.as_any().downcast_ref::<SessionState>()?;
    if folders.is_empty() {
        return None;
    }
    let runtime = session.runtime_env();
    let registry = Arc::new(DataFilesRegistry {
        inner: Arc::clone(&runtime.object_store_registry),
        folders,
    });
    let runtime = Arc::new(RuntimeEnv {
        memory_pool: Arc::clone(&runtime.memory_pool),
        disk_manager: Arc::clone(&runtime.disk_manager),
        cache_manager: Arc::clone(&runtime.cache_manager),
        object_store_registry: registry,
        parquet_encryption_factory_registry: Arc::clone(
            &runtime.parquet_encryption_factory_registry,
        ),
    });
    Some(
        SessionStateBuilder::new_from_existing(session.clone())
            .with_runtime_env(runtime)
            .build(),
    )
}

/// Whether `a` and `b` name the same object store (scheme, host and port).
fn same_store(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port() == b.port()
}

/// The session's registry, its stores wrapped in [`DataFilesStore`]s for the folders on them.
#[derive(Debug)]
struct DataFilesRegistry {
    inner: Arc<dyn ObjectStoreRegistry>,
    /// The folders listed for data: each store's URL, and the folder on it.
    folders: Vec<(Url, Path)>,
}

impl ObjectStoreRegistry for DataFilesRegistry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.inner.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        let store = self.inner.get_store(url)?;
        let folders: Vec<Path> = (self.folders.iter())
            .filter(|(store_url, _)| same_store(store_url, url))
            .map(|(_, folder)| folder.clone())
            .collect();
        if folders.is_empty() {
            return Ok(store);
        }
        Ok(Arc::new(DataFilesStore {
            inner: store,
            folders: folders.into(),
        }))
    }
}

/// A store whose listings leave out what is not data below its `folders` (the rest is the
/// inner store's).
#[derive(Debug)]
struct DataFilesStore {
    inner: Arc<dyn ObjectStore>,
    folders: Arc<[Path]>,
}

impl DataFilesStore {
    fn keeps(folders: &[Path], location: &Path) -> bool {
        folders.iter().all(|folder| is_data_below(folder, location))
    }

    fn data_only(
        &self,
        listing: BoxStream<'static, datafusion::object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        let folders = Arc::clone(&self.folders);
        listing
            .try_filter(move |meta| futures::future::ready(Self::keeps(&folders, &meta.location)))
            .boxed()
    }
}

impl fmt::Display for DataFilesStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DataFiles({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for DataFilesStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> datafusion::object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> datafusion::object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> datafusion::object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[std::ops::Range<u64>],
    ) -> datafusion::object_store::Result<Vec<bytes::Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, datafusion::object_store::Result<Path>>,
    ) -> BoxStream<'static, datafusion::object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        self.data_only(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        self.data_only(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> datafusion::object_store::Result<ListResult> {
        let mut listed = self.inner.list_with_delimiter(prefix).await?;
        let folders = &self.folders;
        listed.objects.retain(|m| Self::keeps(folders, &m.location));
        listed.common_prefixes.retain(|p| Self::keeps(folders, p));
        Ok(listed)
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> datafusion::object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> datafusion::object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_names_that_are_not_data() {
        for name in [
            "_SUCCESS",
            ".part-0.json.crc",
            "_temporary",
            "_spark_metadata",
            "_delta_log",
            ".hidden",
            "part-0.json._COPYING_",
            "_metadata",
            "_common_metadata",
        ] {
            assert!(!is_data_name(name), "{name}");
        }
        for name in [
            "part-0.json",
            "x=1",
            "_x=1",
            "a_b.parquet",
            "data.",
            "copying",
        ] {
            assert!(is_data_name(name), "{name}");
        }
    }

    #[test]
    fn only_what_lies_below_the_folder_is_judged() {
        let root = Path::from("data/_staging/t");
        let judged = |p: &str| is_data_below(&root, &Path::from(p));
        assert!(judged("data/_staging/t/part-0.parquet"));
        assert!(judged("data/_staging/t/k=1/part-0.parquet"));
        assert!(!judged("data/_staging/t/_temporary/0/part-0.parquet"));
        assert!(!judged("data/_staging/t/k=1/.part-0.parquet.crc"));
        assert!(!judged("data/_staging/t/sub/_SUCCESS"));
        // the location itself, and what lies elsewhere
        assert!(judged("data/_staging/t"));
        assert!(judged("elsewhere/_SUCCESS"));
    }
}
