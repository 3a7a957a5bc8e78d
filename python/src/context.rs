//! [`PySessionContext`]: our own DataFusion session with everything the library installs.
use std::sync::Arc;

use datafusion::config::SpillCompression;
use datafusion::datasource::MemTable;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::memory_pool::TrackConsumersPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_parquet_variant::delta::{DeltaVersion, register_delta};
use datafusion_parquet_variant::distributed::auth::{WorkerSecurity, WorkerToken};
use datafusion_parquet_variant::distributed::explain_distributed;
use datafusion_parquet_variant::distributed::workers::{
    WorkerList, coordinator_session_state, parse_worker_urls,
};
use datafusion_parquet_variant::memory_pool::{FairSortPool, fit_to_pool};
use datafusion_parquet_variant::parquet::register_parquet_table;
use datafusion_parquet_variant::register_all_with_state;
use datafusion_parquet_variant::sql::run_sql;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrow_stream::read_stream;
use crate::dataframe::PyDataFrame;
use crate::runtime::{py_err, run};

/// A DataFusion session with the whole Variant engine: our functions, the `v:path` syntax,
/// casts of variants as typed extractions, the `VARIANT` type name, and Parquet tables that read
/// shredded files leaf by leaf and write VARIANT columns (atomically).
#[pyclass(
    name = "SessionContext",
    module = "datafusion_parquet_variant._internal",
    frozen
)]
pub(crate) struct PySessionContext {
    ctx: SessionContext,
}

/// A memory size: an int of bytes, or a text of a number and a unit (`k`, `m`, `g`, `t`, powers
/// of 1024; `b` or none for bytes).
fn memory_size(limit: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(bytes) = limit.extract::<usize>() {
        return Ok(bytes);
    }
    let bad = || {
        PyValueError::new_err(format!(
            "memory_limit: not a memory size: {limit} (say 1073741824, '512m' or '2g')"
        ))
    };
    let text = limit.extract::<String>().map_err(|_| bad())?.to_lowercase();
    let text = text.trim().trim_end_matches('b');
    let (number, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let scale: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return Err(bad()),
    };
    let number: f64 = number.trim().parse().map_err(|_| bad())?;
    if !number.is_finite() || number < 0.0 {
        return Err(bad());
    }
    Ok((number * scale as f64) as usize)
}

#[pymethods]
impl PySessionContext {
    /// `memory_limit` (bytes, or a text such as `"512m"` or `"2g"`) bounds what queries hold in
    /// memory: one that needs more spills or fails with `ResourcesExhausted`.
    /// `target_partitions` is the number of parallel streams (default: the number of cores).
    /// `workers` (`["host:port", ...]`, `variant-sql worker` processes; `https://host:port` over
    /// TLS) runs queries across them on datafusion-distributed; every worker must reach the
    /// files. `worker_token` is the cluster's token every call carries (default: the
    /// environment variable `VARIANT_SQL_WORKER_TOKEN`, where set); `worker_ca` the path of the
    /// CA certificates (PEM) `https://` workers must chain to (default: the system's roots).
    #[new]
    #[pyo3(signature = (memory_limit=None, target_partitions=None, workers=None, worker_token=None, worker_ca=None))]
    fn new(
        memory_limit: Option<Bound<'_, PyAny>>,
        target_partitions: Option<usize>,
        workers: Option<Vec<String>>,
        worker_token: Option<String>,
        worker_ca: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let memory_limit = memory_limit.map(|l| memory_size(&l)).transpose()?;
        let mut config = SessionConfig::new();
        if let Some(partitions) = target_partitions {
            config = config.with_target_partitions(partitions);
        }
        // spill files compressed, as variant-sql's: variant rows shrink severalfold
        config.options_mut().execution.spill_compression = SpillCompression::Lz4Frame;
        let mut runtime = RuntimeEnvBuilder::new();
        if let Some(limit) = memory_limit {
            // the fair pool, as variant-sql's: each operator that can spill gets its share, so
            // two sorts and the readers feeding them fit together (a greedy pool lets the first
            // sort take it all), and a sort's merge holds at most a share; the five largest
            // consumers named when it is exceeded
            let top = std::num::NonZeroUsize::new(5).expect("five");
            // batches and the sorts' merge headroom fitted to the pool, as variant-sql's
            fit_to_pool(config.options_mut(), limit);
            let pool = FairSortPool::for_config(limit, config.options());
            runtime = runtime.with_memory_pool(Arc::new(TrackConsumersPool::new(pool, top)));
        }
        let runtime = runtime.build_arc().map_err(py_err)?;
        let builder = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features();
        let state = match workers {
            Some(workers) => {
                let urls = parse_worker_urls(&workers.join(",")).map_err(|e| {
                    PyValueError::new_err(format!("workers: {}", e.strip_backtrace()))
                })?;
                let token = match worker_token {
                    Some(text) => Some(WorkerToken::new(&text).map_err(|e| {
                        PyValueError::new_err(format!("worker_token: {}", e.strip_backtrace()))
                    })?),
                    None => WorkerToken::from_file_or_env(None).map_err(py_err)?,
                };
                let mut security = WorkerSecurity::default().with_token(token);
                if let Some(ca) = worker_ca {
                    security = security.with_ca_file(&ca).map_err(py_err)?;
                }
                let workers = WorkerList::new(urls).with_security(security);
                coordinator_session_state(builder, workers).map_err(py_err)?
            }
            None => register_all_with_state(builder).build(),
        };
        Ok(PySessionContext {
            ctx: SessionContext::new_with_state(state),
        })
    }

    /// Plans `query`. A query (SELECT, EXPLAIN...) runs when its result is read; a statement
    /// runs now: DDL as DataFusion runs it, and `COPY` and `INSERT` too, whose result is then the
    /// row count.
    fn sql(&self, py: Python<'_>, query: &str) -> PyResult<PyDataFrame> {
        let ctx = self.ctx.clone();
        let query = query.to_string();
        let df = run(py, async move {
            let df = run_sql(&ctx, &query).await?;
            // on a session with workers, EXPLAIN shows the distributed plan
            if let Some(batch) = explain_distributed(&ctx.state(), df.logical_plan()).await? {
                return ctx.read_batch(batch);
            }
            if !matches!(
                df.logical_plan(),
                LogicalPlan::Copy(_) | LogicalPlan::Dml(_)
            ) {
                return Ok(df);
            }
            let schema = Arc::clone(df.schema().inner());
            let batches = df.collect().await?;
            ctx.read_table(Arc::new(MemTable::try_new(schema, vec![batches])?))
        })?;
        Ok(PyDataFrame::new(df))
    }

    /// Registers the Parquet file, folder or glob `path` as the table `name` (VARIANT columns as
    /// variants, shredded files read leaf by leaf).
    fn register_parquet(&self, py: Python<'_>, name: &str, path: &str) -> PyResult<()> {
        let ctx = self.ctx.clone();
        let (name, path) = (name.to_string(), path.to_string());
        run(py, async move {
            register_parquet_table(&ctx, &name, &path).await
        })
    }

    /// Registers the Delta table at `path` (a folder, or a URL whose object store the session
    /// knows) as `name`: its newest version, or `version`, or the newest one committed at or
    /// before `timestamp` (RFC 3339, or a date and time in UTC). Variant columns are variants;
    /// shredded ones are read leaf by leaf; `INSERT INTO name ..` appends a version.
    #[pyo3(signature = (name, path, version=None, timestamp=None))]
    fn register_delta(
        &self,
        py: Python<'_>,
        name: &str,
        path: &str,
        version: Option<u64>,
        timestamp: Option<&str>,
    ) -> PyResult<()> {
        let version = delta_version(version, timestamp)?;
        let ctx = self.ctx.clone();
        let (name, path) = (name.to_string(), path.to_string());
        run(py, async move {
            register_delta(&ctx, &name, &path, version).await
        })
    }

    /// Registers `data`, anything with `__arrow_c_stream__`, as the in-memory table `name`;
    /// `arrow.parquet.variant` columns stay variants.
    fn register_arrow(&self, name: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let (schema, batches) = read_stream(data)?;
        let table = MemTable::try_new(schema, vec![batches]).map_err(py_err)?;
        self.ctx
            .register_table(name, Arc::new(table))
            .map_err(py_err)?;
        Ok(())
    }

    /// Removes the table `name`.
    fn deregister_table(&self, name: &str) -> PyResult<()> {
        self.ctx.deregister_table(name).map_err(py_err)?;
        Ok(())
    }

    /// The table `name`, as a result to read.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<PyDataFrame> {
        let ctx = self.ctx.clone();
        let name = name.to_string();
        Ok(PyDataFrame::new(run(py, async move {
            ctx.table(name.as_str()).await
        })?))
    }

    /// The names of the tables of the default schema.
    fn table_names(&self) -> PyResult<Vec<String>> {
        let catalog = self.ctx.catalog("datafusion");
        let schema = catalog.and_then(|c| c.schema("public"));
        let mut names = schema.map(|s| s.table_names()).unwrap_or_default();
        names.sort();
        Ok(names)
    }
}

/// The version `version` or `timestamp` asks for (at most one of them).
pub(crate) fn delta_version(
    version: Option<u64>,
    timestamp: Option<&str>,
) -> PyResult<DeltaVersion> {
    let pairs: Vec<(&str, String)> = (version.map(|v| ("version", v.to_string())).into_iter())
        .chain(timestamp.map(|t| ("timestamp", t.to_string())))
        .collect();
    DeltaVersion::from_options(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
