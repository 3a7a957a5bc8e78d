//! [`VariantDeltaTable`]: a Delta table's snapshot (its log read by deltalake-core) scanned by our
//! Parquet scan, and the `STORED AS DELTATABLE` factory.
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{DFSchema, DataFusionError, Result, ScalarValue, not_impl_err, plan_err};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::datasource::physical_plan::FileSinkConfig;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::functions::expr_fn::{encode, regexp_like};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown};
use datafusion::logical_expr::{Operator, binary_expr, cast, lit, when};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::projection::{ProjectionExpr, ProjectionExprs};
use datafusion::physical_plan::metrics::MetricBuilder;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_datasource::file_sink_config::FileOutputMode;
use delta_kernel::table_features::ColumnMappingMode;
use deltalake_core::kernel::transaction::TransactionError;
use deltalake_core::kernel::{EagerSnapshot, StructTypeExt};
use deltalake_core::logstore::CommitOrBytes;
use deltalake_core::logstore::LogStore;
use deltalake_core::{DeltaTable, DeltaTableBuilder, DeltaTableError};
use url::Url;

use super::checks::{DeltaChecksExec, RuleKind, StatedRules, plan_rules};
use super::files::{FileLayout, partitioned_files};
use super::renamed_fields::RenamedFields;
use super::schema::{
    check_reader_features, delta_schema, nested_nullable, new_table_protocol, physical_fields,
    with_variants,
};
use super::store::{ensure_log_store_factory, log_store, store_url};
use super::write::{
    AppendTarget, DeltaAppendExec, HEX_FOLDER_PREFIX, unhonoured_writer_feature, write_folder,
};
use crate::parquet::VariantParquetFormatFactory;
use crate::variant_array::{column_list, declared_as};

/// The name of the table type: `CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '..'`
/// (delta-rs's name for it).
pub const DELTATABLE: &str = "DELTATABLE";

/// Which version of a Delta table to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum DeltaVersion {
    /// The newest.
    #[default]
    Newest,
    /// This version (`OPTIONS ('version' 'N')`, Spark's `versionAsOf`).
    Version(u64),
    /// The newest version committed at or before this time (`OPTIONS ('timestamp' '..')`,
    /// Spark's `timestampAsOf`): an RFC 3339 time, or a date and time read as UTC.
    Timestamp(DateTime<Utc>),
}

impl DeltaVersion {
    /// The version `OPTIONS (..)` ask for: `version` (or `versionAsOf`), `timestamp` (or
    /// `timestampAsOf`), at most one of them; any other key is an error.
    pub fn from_options<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut out = DeltaVersion::Newest;
        for (key, value) in pairs {
            // (DataFusion gives `OPTIONS` keys lowercased, with a `format.` prefix)
            let key = key.strip_prefix("format.").unwrap_or(key);
            let asked = match key.to_ascii_lowercase().as_str() {
                "version" | "versionasof" => match value.trim().parse::<u64>() {
                    Ok(v) => DeltaVersion::Version(v),
                    _ => {
                        return plan_err!("Delta table: version '{value}' is not a version number");
                    }
                },
                "timestamp" | "timestampasof" => DeltaVersion::Timestamp(parse_time(value)?),
                _ => {
                    return plan_err!(
                        "Delta table: unknown option '{key}' (options: 'version', 'timestamp')"
                    );
                }
            };
            if out != DeltaVersion::Newest {
                return plan_err!("Delta table: give one of 'version' and 'timestamp'");
            }
            out = asked;
        }
        Ok(out)
    }
}

/// `text` as a UTC time: RFC 3339, or what a cast to `TIMESTAMP` reads (as UTC).
fn parse_time(text: &str) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(t.with_timezone(&Utc));
    }
    let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    match ScalarValue::Utf8(Some(text.to_string())).cast_to(&utc) {
        Ok(ScalarValue::TimestampMicrosecond(Some(us), _)) => {
            DateTime::from_timestamp_micros(us).ok_or_else(|| bad_time(text))
        }
        _ => Err(bad_time(text)),
    }
}

fn bad_time(text: &str) -> DataFusionError {
    DataFusionError::Plan(format!("Delta table: timestamp '{text}' is not a time"))
}

/// The scan's metric of the files that the log's partition values and statistics ruled out at
/// planning (they are never listed, so the Parquet scan's own pruning counts leave them out).
pub const FILES_PRUNED_BY_LOG: &str = "files_pruned_by_delta_log";

/// A Delta table at one version: its log read by deltalake-core (snapshot, checkpoints, file
/// statistics, deletion vectors), its data files read by our Parquet scan, so that variant
/// columns come back as variants and shredded ones are read per path from their leaves.
pub struct VariantDeltaTable {
    /// The snapshot read last (the newest one a scan or an append found, unless `pinned`).
    table: RwLock<DeltaTable>,
    /// Read at a version or time: its scans keep reading that version, and it takes no rows.
    pinned: bool,
    /// Column mapping: the scan reads physical names, and names them as the table does; an
    /// append writes these columns (physical names and field ids at any depth).
    mapped: Option<SchemaRef>,
    /// Column mapping: each column's physical name, by the table's name.
    physical_names: Option<HashMap<String, String>>,
    /// The table's root, ending in `/`.
    root: Url,
    /// Its columns in the log's order, variants marked, as SQL plans with them (every field
    /// inside a column nullable: `schema::nested_nullable`).
    schema: SchemaRef,
    /// Its columns as the log declares them (NOT NULL fields inside columns too), which appends
    /// check their rows against.
    declared: SchemaRef,
    /// The columns its data files hold (the others are partition columns).
    file_schema: SchemaRef,
    partition_fields: Vec<FieldRef>,
    /// For each column of `schema`, its place in a scan's output: file columns, then partition
    /// columns.
    scan_index: Vec<usize>,
}

impl fmt::Debug for VariantDeltaTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VariantDeltaTable")
            .field("root", &self.root.as_str())
            .field("version", &self.version())
            .finish()
    }
}

impl VariantDeltaTable {
    /// Opens the Delta table at `location` (a path or a URL whose object store the session's
    /// runtime knows) at `version`.
    pub async fn open(state: &dyn Session, location: &str, version: &DeltaVersion) -> Result<Self> {
        let root = table_root(location)?;
        let store_url = store_url(&root)?;
        let store = state.runtime_env().object_store(&store_url)?;
        let in_table = |e: DeltaTableError| {
            DataFusionError::External(Box::new(e)).context(format!("Delta table at {root}"))
        };
        ensure_log_store_factory(&root);
        let mut builder = DeltaTableBuilder::from_url(root.clone())
            .map_err(in_table)?
            .with_storage_backend(store, root.clone());
        builder = match version {
            DeltaVersion::Newest => builder,
            DeltaVersion::Version(v) => builder.with_version(*v),
            DeltaVersion::Timestamp(t) => builder.with_timestamp(*t),
        };
        let table = builder.load().await.map_err(in_table)?;
        let snapshot = table.snapshot().map_err(in_table)?.snapshot();
        // (deltalake-core reads the first version for a time before it; Spark refuses)
        if let DeltaVersion::Timestamp(t) = version
            && let Some(committed) = snapshot.version_timestamp(snapshot.version())
            && committed > t.timestamp_millis()
        {
            return plan_err!(
                "Delta table at {root}: the timestamp {t} is before the table's first commit"
            );
        }
        let protocol = snapshot.protocol();
        if let Some(features) = protocol.reader_features() {
            let names: Vec<String> = features.iter().map(|f| f.to_string()).collect();
            check_reader_features(names.iter().map(String::as_str))
                .map_err(|e| e.context(format!("Delta table at {root}")))?;
        }
        let declared = with_variants(&snapshot.schema(), &snapshot.arrow_schema())?;
        let schema = nested_nullable(&declared);
        let mut partition_columns = snapshot.metadata().partition_columns().to_vec();
        // column mapping: the files and the log's partition values name columns physically
        let mut mapped = None;
        let mut physical_names = None;
        let mut read_schema = Arc::clone(&schema);
        if snapshot.table_configuration().column_mapping_mode() != ColumnMappingMode::None {
            let physical = physical_fields(&snapshot.schema(), &schema, false)?;
            for name in &mut partition_columns {
                if let Ok(i) = schema.index_of(name) {
                    *name = physical[i].name().clone();
                }
            }
            physical_names = Some(
                (schema.fields().iter().zip(&physical))
                    .map(|(table, file)| (table.name().clone(), file.name().clone()))
                    .collect(),
            );
            read_schema = Arc::new(Schema::new_with_metadata(
                physical,
                schema.metadata().clone(),
            ));
            let written = physical_fields(&snapshot.schema(), &schema, true)?;
            mapped = Some(Arc::new(Schema::new(written)));
        }
        let (scan_index, file_schema, partition_fields) =
            scan_layout(&read_schema, &partition_columns)?;
        Ok(VariantDeltaTable {
            table: RwLock::new(table),
            pinned: *version != DeltaVersion::Newest,
            mapped,
            physical_names,
            root,
            schema,
            declared,
            file_schema,
            partition_fields,
            scan_index,
        })
    }

    /// The version read last.
    pub fn version(&self) -> Option<u64> {
        self.delta_table().version()
    }

    /// The table's partition columns, as the log lists them (by the table's names).
    pub fn partition_columns(&self) -> Result<Vec<String>> {
        let table = self.delta_table();
        Ok(snapshot_of(&table)?.metadata().partition_columns().to_vec())
    }

    /// The table's root URL.
    pub fn root(&self) -> &Url {
        &self.root
    }

    /// deltalake-core's table as read last (its log store and snapshot).
    pub fn delta_table(&self) -> DeltaTable {
        self.table.read().expect("not poisoned").clone()
    }

    /// The table to read now: the pinned version, or the newest one (the log read on from the
    /// version read last). A newer version whose columns differ is an error: the table was
    /// planned with the old ones.
    async fn current(&self) -> Result<DeltaTable> {
        let mut table = self.delta_table();
        if self.pinned {
            return Ok(table);
        }
        let read = table.version();
        table
            .update_state()
            .await
            .map_err(|e| external(e).context(format!("Delta table at {}", self.root)))?;
        if table.version() != read {
            let snapshot = snapshot_of(&table)?;
            let schema = with_variants(&snapshot.schema(), &snapshot.arrow_schema())?;
            if schema.fields() != self.declared.fields() {
                return plan_err!(
                    "Delta table at {}: its columns changed in version {}; register it again",
                    self.root,
                    snapshot.version()
                );
            }
            *self.table.write().expect("not poisoned") = table.clone();
        }
        Ok(table)
    }
}

fn snapshot_of(table: &DeltaTable) -> Result<&EagerSnapshot> {
    Ok(table.snapshot().map_err(external)?.snapshot())
}

fn external(e: DeltaTableError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// `schema`'s columns split into those of the data files and the partition columns (in the
/// order the log lists them), and where each column lands in a scan's output.
fn scan_layout(
    schema: &SchemaRef,
    partition_columns: &[String],
) -> Result<(Vec<usize>, SchemaRef, Vec<FieldRef>)> {
    let partition_fields = (partition_columns.iter())
        .map(|name| match schema.field_with_name(name) {
            Ok(field) => Ok(Arc::new(field.clone())),
            Err(_) => plan_err!("Delta table: partition column {name} is not in its schema"),
        })
        .collect::<Result<Vec<FieldRef>>>()?;
    let file_fields: Vec<FieldRef> = (schema.fields().iter())
        .filter(|f| !partition_columns.contains(f.name()))
        .cloned()
        .collect();
    let mut next_file = 0..;
    let scan_index = (schema.fields().iter())
        .map(
            |f| match partition_columns.iter().position(|p| p == f.name()) {
                Some(p) => file_fields.len() + p,
                None => next_file.next().expect("unbounded"),
            },
        )
        .collect();
    let file_schema = Arc::new(Schema::new_with_metadata(
        file_fields,
        schema.metadata().clone(),
    ));
    Ok((scan_index, file_schema, partition_fields))
}

/// The table's root URL (a directory: ending in `/`).
fn table_root(location: &str) -> Result<Url> {
    let mut url = ListingTableUrl::parse(location)?.get_url().clone();
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

/// Our Parquet format with the session's Parquet options: the data files' reader and writer.
fn parquet_format(state: &dyn Session) -> Result<Arc<dyn FileFormat>> {
    VariantParquetFormatFactory::new().create(state, &HashMap::new())
}

#[async_trait]
impl TableProvider for VariantDeltaTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let table = self.current().await?;
        // files whose partition values and statistics rule the filters out are not scanned
        // (deltalake-core finds the log's statistics by the table's names of the columns)
        let filter = match conjunction(filters.iter().cloned()) {
            Some(filter) => {
                let schema = DFSchema::try_from(Arc::clone(&self.schema))?;
                state.create_physical_expr(filter, &schema).ok()
            }
            _ => None,
        };
        let (files, skipped) = partitioned_files(
            snapshot_of(&table)?,
            &table.log_store(),
            &self.root,
            FileLayout {
                file_schema: &self.file_schema,
                partition_fields: &self.partition_fields,
                physical_names: self.physical_names.as_ref(),
            },
            filter.map(|f| (f, &self.schema)),
        )
        .await?;
        let format = parquet_format(state)?;
        let source = format.file_source(
            TableSchema::builder(Arc::clone(&self.file_schema))
                .with_table_partition_cols(self.partition_fields.clone())
                .build(),
        );
        // The table's columns by their place in the scan (file columns, then partition
        // columns), named as the table names them: the order is the table's, and columns of a
        // table with column mapping are read by their physical names.
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let files_width = self.file_schema.fields().len();
        let exprs = columns.iter().map(|&column| {
            let at = self.scan_index[column];
            let read = match at.checked_sub(files_width) {
                Some(p) => &self.partition_fields[p],
                None => self.file_schema.field(at),
            };
            let field = self.schema.field(column);
            let mut expr: Arc<dyn PhysicalExpr> = Arc::new(Column::new(read.name(), at));
            if read.data_type() != field.data_type() {
                // (column mapping inside the column: its fields renamed as the table names them)
                expr = Arc::new(RenamedFields::new(expr, Arc::new(field.clone())));
            }
            ProjectionExpr::new(expr, field.name().clone())
        });
        let Some(source) = source.try_pushdown_projection(&ProjectionExprs::new(exprs))? else {
            return plan_err!("Delta table: the Parquet scan took no projection");
        };
        // (the scan's metrics, which EXPLAIN ANALYZE shows, count the files the log ruled out)
        MetricBuilder::new(source.metrics())
            .global_counter(FILES_PRUNED_BY_LOG)
            .add(skipped);
        let partitions = state.config_options().execution.target_partitions.max(1);
        let groups = if files.is_empty() {
            Vec::new()
        } else {
            FileGroup::new(files).split_files(partitions)
        };
        let config = FileScanConfigBuilder::new(store_url(&self.root)?, source)
            .with_file_groups(groups)
            .with_limit(limit)
            .build();
        format.create_physical_plan(state, config).await
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append {
            return not_impl_err!("Delta table at {}: only appends are supported", self.root);
        }
        if self.pinned {
            return plan_err!(
                "Delta table at {}: a table read at a version or time takes no rows",
                self.root
            );
        }
        if let Some(field) = (self.partition_fields.iter()).find(|f| !writes_partition_values(f)) {
            return not_impl_err!(
                "Delta table at {}: appends to tables partitioned by a column of type {} ({}) \
                 are not supported yet",
                self.root,
                field.data_type(),
                field.name()
            );
        }
        let table = self.current().await?;
        let snapshot = snapshot_of(&table)?;
        if let Some(what) = unhonoured_table_rule(snapshot) {
            return not_impl_err!(
                "Delta table at {}: appends to tables with {what} are not supported yet",
                self.root
            );
        }
        let protocol = serde_json::to_value(snapshot.protocol()).map_err(|e| {
            DataFusionError::External(Box::new(e)).context("Delta table: its protocol")
        })?;
        if let Some(feature) = unhonoured_writer_feature(&protocol) {
            return not_impl_err!(
                "Delta table at {}: writer feature '{feature}' is not supported for appends",
                self.root
            );
        }
        // the rows are checked against the table's rules before anything is written
        let rules = plan_rules(state, &self.root, &input.schema(), stated_rules(snapshot)?)?;
        let input = DeltaChecksExec::wrap(input, &self.root, &self.declared, rules);
        let (folder_url, folder) = write_folder(&self.root)?;
        let partition_columns: Vec<String> = (self.partition_fields.iter())
            .map(|f| f.name().clone())
            .collect();
        let input = match &self.mapped {
            Some(written) => physically_named_columns(input, written)?,
            None => input,
        };
        let input = partition_values_as_text(state, input, &partition_columns)?;
        let conf = FileSinkConfig {
            original_url: self.root.to_string(),
            object_store_url: store_url(&self.root)?,
            file_group: FileGroup::default(),
            table_paths: vec![folder_url],
            output_schema: input.schema(),
            table_partition_cols: (partition_columns.iter())
                .map(|c| (c.clone(), DataType::Utf8))
                .collect(),
            insert_op: InsertOp::Append,
            keep_partition_by_columns: false,
            file_extension: "parquet".to_string(),
            file_output_mode: FileOutputMode::Directory,
        };
        let write = parquet_format(state)?
            .create_writer_physical_plan(input, state, conf, None)
            .await?;
        let target = AppendTarget {
            log_store: table.log_store(),
            root: self.root.clone(),
            read_version: snapshot.version(),
            protocol,
            partition_columns,
        };
        Ok(Arc::new(DeltaAppendExec::new(write, folder, target)))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        // (each file is pruned by the log's statistics and the scan's predicate; the filter
        // stays above it)
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }
}

/// Whether an append writes the values of a partition column of this type (as the log's text:
/// integers, decimals, strings, booleans and dates, whose text DataFusion's cast writes as
/// Delta does).
fn writes_partition_values(field: &Field) -> bool {
    matches!(
        field.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Decimal128(..)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Boolean
            | DataType::Date32
    )
}

/// `input` (rows of a table with column mapping, its columns as the table names them) with its
/// columns as the data files name them (`written`: physical names and field ids at any depth).
fn physically_named_columns(
    input: Arc<dyn ExecutionPlan>,
    written: &SchemaRef,
) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = input.schema();
    if schema.fields().len() != written.fields().len() {
        return plan_err!(
            "Delta table: an append of {} columns to a table of {}",
            schema.fields().len(),
            written.fields().len()
        );
    }
    let pairs = schema.fields().iter().zip(written.fields().iter());
    let exprs = (pairs.enumerate())
        .map(|(i, (field, physical))| {
            let column = Arc::new(Column::new(field.name(), i));
            let physical = physical.as_ref().clone().with_nullable(field.is_nullable());
            let name = physical.name().clone();
            ProjectionExpr::new(
                Arc::new(RenamedFields::new(column, Arc::new(physical))),
                name,
            )
        })
        .collect::<Vec<_>>();
    Ok(Arc::new(ProjectionExec::try_new(exprs, input)?))
}

/// `input` (rows of a partitioned table) with its `partition_columns` as the names of the
/// folders the sink writes each file under (`<column>=<name>/`), from which the append reads
/// the values back for the log: a value's text where it is plain (letters, digits, `_`, `-` and
/// inner dots), else `+` and the hex of its text (no store or file system escapes either); the
/// empty name for NULL (and the empty text, which Delta reads as NULL).
fn partition_values_as_text(
    state: &dyn Session,
    input: Arc<dyn ExecutionPlan>,
    partition_columns: &[String],
) -> Result<Arc<dyn ExecutionPlan>> {
    if partition_columns.is_empty() {
        return Ok(input);
    }
    let schema = input.schema();
    let df_schema = DFSchema::try_from(Arc::clone(&schema))?;
    let exprs = (schema.fields().iter().enumerate())
        .map(|(i, field)| {
            if !partition_columns.contains(field.name()) {
                let column = Arc::new(Column::new(field.name(), i));
                return Ok(ProjectionExpr::new(column, field.name().clone()));
            }
            let column = Expr::Column(datafusion::common::Column::new_unqualified(field.name()));
            let text = cast(column.clone(), DataType::Utf8);
            let plain = regexp_like(
                text.clone(),
                lit(r"^[A-Za-z0-9_-]([A-Za-z0-9_.-]*[A-Za-z0-9_-])?$"),
                None,
            );
            let hex = binary_expr(
                lit(HEX_FOLDER_PREFIX),
                Operator::StringConcat,
                encode(text.clone(), lit("hex")),
            );
            let name = when(column.is_null(), lit(""))
                .when(text.clone().eq(lit("")), lit(""))
                .when(plain, text)
                .otherwise(hex)?;
            let name = state.create_physical_expr(name, &df_schema)?;
            Ok(ProjectionExpr::new(name, field.name().clone()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(ProjectionExec::try_new(exprs, input)?))
}

/// Makes `CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '..' [OPTIONS ('version' 'N' |
/// 'timestamp' '..')]` tables: the columns and partition columns are the log's (declare none,
/// or exactly its columns). Columns declared where no table is (no log, or no folder) make a
/// new, empty table there.
#[derive(Debug, Default)]
pub struct DeltaTableFactory;

#[async_trait]
impl TableProviderFactory for DeltaTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let version =
            DeltaVersion::from_options(cmd.options.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let [location] = cmd.locations.as_slice() else {
            return plan_err!("a {DELTATABLE} table has one location");
        };
        let declared_schema = cmd.schema.as_arrow();
        let table = match VariantDeltaTable::open(state, location, &version).await {
            Ok(table) => table,
            // columns declared where no table is: a new table
            Err(e)
                if is_not_a_table(&e)
                    && !declared_schema.fields().is_empty()
                    && version == DeltaVersion::Newest =>
            {
                create_table(state, location, declared_schema, &cmd.table_partition_cols).await?;
                VariantDeltaTable::open(state, location, &version).await?
            }
            Err(e) => return Err(e),
        };
        let declared = cmd.schema.fields();
        let columns = table.schema.fields();
        let same = declared.len() == columns.len()
            && (declared.iter().zip(columns)).all(|(d, c)| declared_as(d, c));
        if !declared.is_empty() && !same {
            return plan_err!(
                "a {DELTATABLE} table's columns are its log's ({}); declare none, or exactly those",
                column_list(columns)
            );
        }
        let partitioned_by = table.partition_columns()?;
        if !cmd.table_partition_cols.is_empty() && cmd.table_partition_cols != partitioned_by {
            return plan_err!(
                "a {DELTATABLE} table's partition columns are its log's ({}); declare none, or \
                 exactly those",
                partitioned_by.join(", ")
            );
        }
        Ok(Arc::new(table))
    }
}

/// What a table asks of its writers that appends do not do, whatever its protocol's version:
/// generated or identity columns.
fn unhonoured_table_rule(snapshot: &EagerSnapshot) -> Option<&'static str> {
    let schema = snapshot.schema();
    for field in schema.fields() {
        if field.metadata.contains_key("delta.generationExpression") {
            return Some("generated columns");
        }
        if field
            .metadata
            .keys()
            .any(|k| k.starts_with("delta.identity."))
        {
            return Some("identity columns");
        }
    }
    None
}

/// The invariants (`delta.invariants`, at any depth) and CHECK constraints
/// (`delta.constraints.<name>`) every row appended to the table must satisfy, as the log states
/// them.
fn stated_rules(snapshot: &EagerSnapshot) -> Result<StatedRules> {
    let invariants =
        (snapshot.schema().get_invariants()).map_err(|e| DataFusionError::External(Box::new(e)))?;
    let mut rules: StatedRules = (invariants.into_iter())
        .map(|i| (RuleKind::Invariant, i.field_name, i.invariant_sql))
        .collect();
    let mut checks: Vec<_> = (snapshot.metadata().configuration().iter())
        .filter_map(|(key, sql)| {
            let name = key.strip_prefix("delta.constraints.")?;
            Some((RuleKind::Check, name.to_string(), sql.clone()))
        })
        .collect();
    checks.sort_by(|a, b| a.1.cmp(&b.1));
    rules.sort_by(|a, b| a.1.cmp(&b.1));
    rules.extend(checks);
    Ok(rules)
}

/// Whether `e` says that no Delta table is at the location.
fn is_not_a_table(e: &DataFusionError) -> bool {
    match e {
        DataFusionError::Context(_, inner) => is_not_a_table(inner),
        DataFusionError::External(inner) => matches!(
            inner.downcast_ref::<DeltaTableError>(),
            Some(
                DeltaTableError::NotATable(_)
                    | DeltaTableError::InvalidTableLocation(_)
                    | DeltaTableError::KernelError(
                        delta_kernel::Error::InvalidTableLocation(_)
                            | delta_kernel::Error::MissingVersion
                    )
            )
        ),
        _ => false,
    }
}

/// Creates an empty Delta table of `schema` at `location`: version 0 of its log, with the
/// protocol its columns need. (Another writer's table made there at once is kept.)
async fn create_table(
    state: &dyn Session,
    location: &str,
    schema: &Schema,
    partition_columns: &[String],
) -> Result<()> {
    let root = table_root(location)?;
    for name in partition_columns {
        match schema.field_with_name(name) {
            Ok(field) if writes_partition_values(field) => {}
            Ok(field) => {
                return not_impl_err!(
                    "Delta table at {root}: partitioning by a column of type {} ({name}) is not \
                     supported yet",
                    field.data_type()
                );
            }
            Err(_) => return plan_err!("Delta table at {root}: no column {name} to partition by"),
        }
    }
    let log_store = log_store(state.runtime_env(), &root)?;
    let delta = delta_schema(schema)?;
    let partition_by = serde_json::json!(partition_columns).to_string();
    let now = chrono::Utc::now().timestamp_millis();
    let actions = [
        serde_json::json!({"commitInfo": {"timestamp": now, "operation": "CREATE TABLE",
            "operationParameters": {"partitionBy": partition_by},
            "engineInfo": concat!("datafusion-parquet-variant/", env!("CARGO_PKG_VERSION"))}}),
        serde_json::json!({"protocol": new_table_protocol(&delta)}),
        serde_json::json!({"metaData": {"id": uuid::Uuid::new_v4().to_string(),
            "format": {"provider": "parquet", "options": {}},
            "schemaString": delta.to_string(), "partitionColumns": partition_columns,
            "configuration": {}, "createdTime": now}}),
    ];
    let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
    let bytes = CommitOrBytes::LogBytes(text.into_bytes().into());
    match log_store
        .write_commit_entry(0, bytes, uuid::Uuid::new_v4())
        .await
    {
        Ok(()) | Err(TransactionError::VersionAlreadyExists(_)) => Ok(()),
        Err(e) => Err(DataFusionError::External(Box::new(e))
            .context(format!("Delta table at {root}: creating it"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;

    #[test]
    fn versions_from_options() {
        let none: [(&str, &str); 0] = [];
        assert_eq!(
            DeltaVersion::from_options(none).unwrap(),
            DeltaVersion::Newest
        );
        assert_eq!(
            DeltaVersion::from_options([("versionAsOf", "3")]).unwrap(),
            DeltaVersion::Version(3)
        );
        let t = DeltaVersion::from_options([("timestamp", "2025-05-13 21:03:55")]).unwrap();
        assert_eq!(
            t,
            DeltaVersion::Timestamp(DateTime::from_timestamp(1747170235, 0).unwrap())
        );
        let t = DeltaVersion::from_options([("timestampAsOf", "2025-05-13T23:03:55+02:00")]);
        assert_eq!(
            t.unwrap(),
            DeltaVersion::Timestamp(DateTime::from_timestamp(1747170235, 0).unwrap())
        );
        for (pairs, error) in [
            (vec![("version", "-1")], "not a version number"),
            (vec![("version", "x")], "not a version number"),
            (vec![("timestamp", "yesterday")], "is not a time"),
            (
                vec![("version", "1"), ("timestamp", "2025-01-01")],
                "one of",
            ),
            (vec![("format", "parquet")], "unknown option 'format'"),
        ] {
            let err = DeltaVersion::from_options(pairs).unwrap_err();
            assert!(err.to_string().contains(error), "{err}");
        }
    }

    #[test]
    fn partition_columns_go_last_in_the_scan() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("p", DataType::Utf8, true),
            Field::new("b", DataType::Int64, true),
            Field::new("q", DataType::Int32, true),
        ]));
        let (index, files, partitions) =
            scan_layout(&schema, &["q".to_string(), "p".to_string()]).unwrap();
        assert_eq!(index, [0, 3, 1, 2]);
        assert_eq!(files.fields().len(), 2);
        let names: Vec<_> = partitions.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["q", "p"]);
        assert!(scan_layout(&schema, &["zz".to_string()]).is_err());
    }
}
