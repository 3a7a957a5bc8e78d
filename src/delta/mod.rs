//! Delta Lake tables (feature `delta`): `CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION
//! '..'` and [`register_delta`]. The log (snapshots, checkpoints, log replay, file statistics,
//! deletion vectors) is read by deltalake-core; the data files by our Parquet scan
//! ([`crate::parquet`]), so variant columns, shredded ones included, come back as variants and
//! paths are read from the leaves that hold them.
mod checks;
mod files;
mod renamed_fields;
mod schema;
mod store;
mod table;
mod write;

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::prelude::SessionContext;

pub use checks::{DeltaChecksExec, Rule, RuleKind};
pub use renamed_fields::RenamedFields;
pub use table::{
    DELTATABLE, DeltaTableFactory, DeltaVersion, FILES_PRUNED_BY_LOG, VariantDeltaTable,
};
pub use write::DeltaAppendExec;

/// Registers the Delta table at `location` (a path, or a URL whose object store the session
/// knows) as `name`, at `version`.
pub async fn register_delta(
    ctx: &SessionContext,
    name: &str,
    location: &str,
    version: DeltaVersion,
) -> Result<()> {
    let table = VariantDeltaTable::open(&ctx.state(), location, &version).await?;
    ctx.register_table(name, Arc::new(table))?;
    Ok(())
}
