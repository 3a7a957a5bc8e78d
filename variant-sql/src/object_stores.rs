//! [`EnvObjectStoreRegistry`]: object stores made from the environment when a plan first names
//! them: for workers, which get plans rather than SQL, and for `variant-sql` itself, where a
//! table function's location (`read_json_variant('s3://..')`) registers no store as
//! `CREATE EXTERNAL TABLE` does.
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::object_store::ObjectStore;
use datafusion::object_store::aws::AmazonS3Builder;
use datafusion::object_store::gcp::GoogleCloudStorageBuilder;
use datafusion::object_store::http::HttpBuilder;
use url::Url;

/// A registry (DataFusion's by default: local files) that makes a store on first use for
/// `s3://` (from the `AWS_*` variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
/// AWS_ENDPOINT, AWS_ALLOW_HTTP ...), `gs://` (`GOOGLE_*`) and `http(s)://` URLs, and registers
/// it there. A store registered before (by `CREATE EXTERNAL TABLE`, with its options) wins.
#[derive(Debug)]
pub struct EnvObjectStoreRegistry {
    stores: Arc<dyn ObjectStoreRegistry>,
}

impl Default for EnvObjectStoreRegistry {
    fn default() -> Self {
        Self::over(Arc::new(DefaultObjectStoreRegistry::new()))
    }
}

impl EnvObjectStoreRegistry {
    /// Makes missing stores from the environment into `stores`.
    pub fn over(stores: Arc<dyn ObjectStoreRegistry>) -> Self {
        EnvObjectStoreRegistry { stores }
    }
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
