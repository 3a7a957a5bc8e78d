//! Where a Delta table's bytes and log are: its object store (the session's, for the table's
//! root) and deltalake-core's log store over it.
use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreUrl;
use deltalake_core::DeltaTableBuilder;
use deltalake_core::logstore::{
    LogStore, LogStoreFactory, ObjectStoreRef, StorageConfig, default_logstore, logstore_factories,
};
use url::Url;

/// The object store's part of `root` (scheme and authority).
pub(crate) fn store_url(root: &Url) -> Result<ObjectStoreUrl> {
    ObjectStoreUrl::parse(&root[..url::Position::BeforePath])
}

/// deltalake-core keeps logs only where a log store factory is registered for the scheme (it
/// registers `file` and `memory`): for any other scheme this registers its default log store,
/// over the object store the session gives (`put` if absent commits, where the store has it).
pub(crate) fn ensure_log_store_factory(root: &Url) {
    let Ok(scheme) = Url::parse(&format!("{}://", root.scheme())) else {
        return;
    };
    let factories = logstore_factories();
    if factories.get(&scheme).is_none() {
        factories.insert(scheme, Arc::new(SessionStoreLogs));
    }
}

/// The default log store over the session's object store.
struct SessionStoreLogs;

impl LogStoreFactory for SessionStoreLogs {
    fn with_options(
        &self,
        prefixed_store: ObjectStoreRef,
        root_store: ObjectStoreRef,
        location: &Url,
        options: &StorageConfig,
    ) -> deltalake_core::DeltaResult<Arc<dyn LogStore>> {
        Ok(default_logstore(
            prefixed_store,
            root_store,
            location,
            options,
        ))
    }
}

/// The log store of the table at `root`, over the object store `runtime` has for it.
pub(crate) fn log_store(
    runtime: &datafusion::execution::runtime_env::RuntimeEnv,
    root: &Url,
) -> Result<deltalake_core::logstore::LogStoreRef> {
    let store = runtime.object_store(store_url(root)?)?;
    ensure_log_store_factory(root);
    Ok(DeltaTableBuilder::from_url(root.clone())
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .with_storage_backend(store, root.clone())
        .build()
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .log_store())
}
