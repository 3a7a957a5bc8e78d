//! [`EnvObjectStoreRegistry`]: object stores made from the environment when a plan first names
//! them, for processes that get plans rather than SQL (workers).
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::object_store::ObjectStore;
use datafusion::object_store::aws::AmazonS3Builder;
use datafusion::object_store::gcp::GoogleCloudStorageBuilder;
use datafusion::object_store::http::HttpBuilder;
use url::Url;

/// DataFusion's registry (local files), plus a store made on first use for `s3://` (from the
/// `AWS_*` variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT,
/// AWS_ALLOW_HTTP ...), `gs://` (`GOOGLE_*`) and `http(s)://` URLs. A worker has no
/// `CREATE EXTERNAL TABLE` to register its stores: the coordinator's plans name them.
#[derive(Debug, Default)]
pub struct EnvObjectStoreRegistry {
    stores: DefaultObjectStoreRegistry,
}

impl ObjectStoreRegistry for EnvObjectStoreRegistry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.stores.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.stores.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.stores.get_store(url) {
            return Ok(store);
        }
        let store = store_from_env(url)?;
        self.stores.register_store(url, Arc::clone(&store));
        Ok(store)
    }
}

/// The store for `url`'s scheme and bucket (or host), configured from the environment.
fn store_from_env(url: &Url) -> Result<Arc<dyn ObjectStore>> {
    let failed = |e: datafusion::object_store::Error| {
        DataFusionError::Context(
            format!("object store for {url} from the environment"),
            Box::new(DataFusionError::ObjectStore(Box::new(e))),
        )
    };
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "s3" | "s3a" => Arc::new(
            AmazonS3Builder::from_env()
                .with_url(url.as_str())
                .build()
                .map_err(failed)?,
        ),
        "gs" | "gcs" => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_url(url.as_str())
                .build()
                .map_err(failed)?,
        ),
        "http" | "https" => Arc::new(
            HttpBuilder::new()
                .with_url(url.origin().ascii_serialization())
                .build()
                .map_err(failed)?,
        ),
        scheme => {
            return Err(DataFusionError::Execution(format!(
                "no object store for '{scheme}' URLs ({url}): s3, gs and http(s) are made from \
                 the environment"
            )));
        }
    };
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_stores_from_urls_once() {
        let registry = EnvObjectStoreRegistry::default();
        let local = Url::parse("file:///").unwrap();
        assert!(registry.get_store(&local).is_ok());
        let http = Url::parse("http://127.0.0.1:9/data/x.parquet").unwrap();
        let first = registry.get_store(&http).unwrap();
        let again = registry.get_store(&http).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let error = registry
            .get_store(&Url::parse("ftp://host/x").unwrap())
            .unwrap_err();
        assert!(
            error.to_string().contains("no object store for 'ftp'"),
            "{error}"
        );
    }
}
