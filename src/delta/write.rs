//! `INSERT INTO` a Delta table: the rows written as Parquet files by our sink (variant columns
//! shredded as `COPY` shreds them), then committed to the log as one new version.
//!
//! The files are written under a hidden folder of the table (`.variant-write-<id>/`, which no
//! reader lists), moved to the table's root once the whole input was written, and published by
//! the commit: a JSON file `_delta_log/<version>.json` put only if absent, its `commitInfo`
//! carrying a transaction id of ours. A commit that finds its version taken by another writer
//! retries at the next one, unless that writer changed the table's schema or protocol (a
//! conflict, reported). A commit whose outcome is unknown (its request failed, or a retry of it
//! found the version taken) is settled by reading the log: the version holding our transaction
//! id is ours, never another's, so nothing is committed twice and the files of a version that
//! did commit are never deleted. A write or commit that fails, or is cancelled, deletes the files
//! it staged and moved: no version, and no file a reader could see, is left behind (an append
//! cancelled while its commit request was in flight keeps them, since the request may still
//! land; a process killed half way leaves only files no version names).
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_datafusion_err, exec_err};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::execution::TaskContext;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::object_store::ObjectStore;
use datafusion::object_store::path::{Path, PathPart};
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::file::metadata::PageIndexPolicy;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream, collect,
};
use deltalake_core::kernel::transaction::TransactionError;
use deltalake_core::logstore::{CommitOrBytes, LogStoreRef};
use futures::StreamExt;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::{Map, Value, json};
use url::Url;

use super::schema::READER_FEATURES;
use crate::parquet::general::staged::{
    CLEAN_UP_AFTER_CANCEL_MS, MoveFailed, Moved, Published, delete_for_sure, move_object,
};

/// How many times a commit retries at a later version after another writer took its version.
const COMMIT_RETRIES: u64 = 15;

/// The writer features an append honours beside the reader features it reads
/// (`READER_FEATURES`): it checks NOT NULL, invariants and CHECK constraints on the rows
/// (`checks`), and writes no deletion vectors, row ids or in-commit timestamps. Any other one
/// refuses the append.
const APPEND_WRITER_ONLY_FEATURES: &[&str] = &[
    "appendOnly",
    "invariants",
    "checkConstraints",
    "domainMetadata",
    "changeDataFeed",
];

fn honoured_by_appends(feature: &str) -> bool {
    APPEND_WRITER_ONLY_FEATURES.contains(&feature) || READER_FEATURES.contains(&feature)
}

/// What an append commits against: the table as its snapshot showed it.
#[derive(Clone)]
pub(crate) struct AppendTarget {
    pub log_store: LogStoreRef,
    pub root: Url,
    /// The version the write read (the commit is `read_version + 1`, or later).
    pub read_version: u64,
    /// The table's protocol, as the log's JSON.
    pub protocol: Value,
    /// Its partition columns: the write stages each file under `<column>=<value>/` folders, one
    /// per column in this order (DataFusion's hive-style layout, the values as text).
    pub partition_columns: Vec<String>,
}

/// Runs a write plan (our Parquet sink, writing into `folder`), then commits its files to the
/// Delta log; yields one row, the number of rows written.
pub struct DeltaAppendExec {
    write: Arc<dyn ExecutionPlan>,
    /// The write's hidden folder under the table root.
    folder: Path,
    target: AppendTarget,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for DeltaAppendExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaAppendExec")
            .field("table", &self.target.root.as_str())
            .finish()
    }
}

impl DeltaAppendExec {
    /// The append of what `write` writes into `folder`.
    pub(crate) fn new(write: Arc<dyn ExecutionPlan>, folder: Path, target: AppendTarget) -> Self {
        let schema = count_schema();
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        DeltaAppendExec {
            write,
            folder,
            target,
            properties,
        }
    }
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

impl DeltaAppendExec {
    /// What travels of it beside its write plan: the write's folder, the table's root, the
    /// version read, the table's protocol and its partition columns.
    pub fn parts(&self) -> (&Path, &Url, u64, &Value, &[String]) {
        (
            &self.folder,
            &self.target.root,
            self.target.read_version,
            &self.target.protocol,
            &self.target.partition_columns,
        )
    }

    /// The append of a decoded plan: its log reached through the object store `runtime` has
    /// for the table.
    pub fn decoded(
        write: Arc<dyn ExecutionPlan>,
        folder: Path,
        root: Url,
        read_version: u64,
        (protocol, partition_columns): (Value, Vec<String>),
        runtime: &RuntimeEnv,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let log_store = super::store::log_store(runtime, &root)?;
        let target = AppendTarget {
            log_store,
            root,
            read_version,
            protocol,
            partition_columns,
        };
        Ok(Arc::new(DeltaAppendExec::new(write, folder, target)))
    }
}

/// The hidden folder a write of the table at `root` stages its files in, as a URL (for the
/// sink) and as a path of the store.
pub(crate) fn write_folder(root: &Url) -> Result<(ListingTableUrl, Path)> {
    let id = uuid::Uuid::new_v4();
    let url = root
        .join(&format!(".variant-write-{id}/"))
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let listing = ListingTableUrl::parse(url.as_str())?;
    let path = listing.prefix().clone();
    Ok((listing, path))
}

impl DisplayAs for DeltaAppendExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeltaAppendExec: table={}, read_version={}",
            self.target.root, self.target.read_version
        )
    }
}

impl ExecutionPlan for DeltaAppendExec {
    fn name(&self) -> &str {
        "DeltaAppendExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.write]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(write) = children.pop() else {
            return exec_err!("DeltaAppendExec has one child");
        };
        Ok(Arc::new(DeltaAppendExec::new(
            write,
            self.folder.clone(),
            self.target.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return exec_err!("DeltaAppendExec has one partition, not {partition}");
        }
        let write = Arc::clone(&self.write);
        let folder = self.folder.clone();
        let target = self.target.clone();
        let store = (context.runtime_env()).object_store(super::store::store_url(&target.root)?)?;
        let once = futures::stream::once(async move {
            let rows = append(write, &folder, &target, store, context).await?;
            RecordBatch::try_new(
                count_schema(),
                vec![Arc::new(UInt64Array::from(vec![rows])) as ArrayRef],
            )
            .map_err(DataFusionError::from)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            once.boxed(),
        )))
    }
}

/// A data file the write made, moved to the table's root.
struct WrittenFile {
    /// Its path relative to the table root, as the log writes it.
    relative: String,
    size: u64,
    metadata: Arc<ParquetMetaData>,
    /// Its partition values (None: NULL), one per partition column.
    partition_values: Vec<Option<String>>,
}

async fn append(
    write: Arc<dyn ExecutionPlan>,
    folder: &Path,
    target: &AppendTarget,
    store: Arc<dyn ObjectStore>,
    context: Arc<TaskContext>,
) -> Result<u64> {
    let moved = Published::default();
    let committing = Arc::new(AtomicBool::new(false));
    let mut guard = CleanUpOnDrop {
        armed: Some((
            folder.clone(),
            target.clone(),
            Arc::clone(&store),
            moved.clone(),
        )),
        committing: Arc::clone(&committing),
    };
    let written = collect(write, Arc::clone(&context)).await;
    let outcome = match written {
        Ok(_) => publish_and_commit(folder, target, &store, (&moved, &committing)).await,
        Err(e) => Err(CommitFailure::NotCommitted(e)),
    };
    guard.armed = None;
    match outcome {
        Ok(rows) => {
            remove_local_folder(folder, &target.root);
            Ok(rows)
        }
        Err(CommitFailure::NotCommitted(e)) => {
            // nothing of the write stays: neither what it staged nor what it moved
            clean_up(folder, target, store.as_ref(), &moved).await;
            Err(e)
        }
        Err(CommitFailure::Unknown(e)) => {
            // the version may hold the files: they stay (unreferenced if it does not)
            Err(e.context(format!(
                "Delta table at {}: whether the append was committed is unknown (the log could \
                 not be read after its commit failed); its data files were left in place",
                target.root
            )))
        }
    }
}

/// Deletes what an append that did not commit staged (its folder) and moved (to the root).
async fn clean_up(
    folder: &Path,
    target: &AppendTarget,
    store: &dyn ObjectStore,
    moved: &Published,
) {
    for path in moved.undo(store).await {
        log::warn!(
            "{path}: a data file of a failed append to the Delta table at {} could not be \
             removed; no version of the table names it",
            target.root
        );
    }
    let staged: Vec<_> = store.list(Some(folder)).collect().await;
    for meta in staged.into_iter().flatten() {
        if !delete_for_sure(store, &meta.location).await {
            log::warn!(
                "{}: a staged file of a failed append could not be removed; it stays in the \
                 table's hidden write folder, which no reader lists",
                meta.location
            );
        }
    }
    remove_local_folder(folder, &target.root);
}

/// Cleans up an append whose future was dropped (the query cancelled) before it committed or
/// failed: what it moved and staged is deleted, unless a commit request of it was in flight.
/// Such a request may still land after the drop (a local put on a blocking thread, an S3 PUT
/// already at the server), so its files stay, named by that version if it landed and by none
/// if it did not.
struct CleanUpOnDrop {
    armed: Option<(Path, AppendTarget, Arc<dyn ObjectStore>, Published)>,
    /// Whether a commit request is in flight.
    committing: Arc<AtomicBool>,
}

impl Drop for CleanUpOnDrop {
    fn drop(&mut self) {
        let Some((folder, target, store, moved)) = self.armed.take() else {
            return;
        };
        if self.committing.load(Ordering::SeqCst) {
            log::warn!(
                "an append to the Delta table at {} was cancelled while its commit was in \
                 flight: its data files stay (no version names them unless the commit landed)",
                target.root
            );
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // (again over a few seconds: a part of the write already on a blocking thread still
        // lands after the first clean-up, and the local store makes its folder again)
        runtime.spawn(async move {
            for delay in CLEAN_UP_AFTER_CANCEL_MS {
                tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
                clean_up(&folder, &target, store.as_ref(), &moved).await;
            }
        });
    }
}

/// Why an append did not commit, as far as it knows.
enum CommitFailure {
    /// No version holds it: its files can go.
    NotCommitted(DataFusionError),
    /// A version may hold it: its files must stay.
    Unknown(DataFusionError),
}

impl From<DataFusionError> for CommitFailure {
    fn from(e: DataFusionError) -> Self {
        CommitFailure::NotCommitted(e)
    }
}

/// Moves the staged files to the table root (as `part-NNNNN-<id>.parquet`, each recorded in
/// `moved` once there), reads their footers for the log's statistics, and commits them
/// (`committing` set while a commit request is in flight); the number of rows committed.
async fn publish_and_commit(
    folder: &Path,
    target: &AppendTarget,
    store: &Arc<dyn ObjectStore>,
    (moved, committing): (&Published, &AtomicBool),
) -> std::result::Result<u64, CommitFailure> {
    let mut staged: Vec<_> = store
        .list(Some(folder))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<std::result::Result<_, _>>()
        .map_err(DataFusionError::from)?;
    staged.retain(|m| m.location.as_ref().ends_with(".parquet"));
    staged.sort_by(|a, b| a.location.cmp(&b.location));
    let root = Path::from_url_path(target.root.path()).map_err(DataFusionError::from)?;
    let id = uuid::Uuid::new_v4();
    let mut files = vec![];
    for (n, meta) in staged.iter().enumerate() {
        let (folders, partition_values) =
            partition_folders(&meta.location, folder, &target.partition_columns)?;
        let name = format!("part-{n:05}-{id}.parquet");
        let location: Path = (root.parts())
            .chain(folders)
            .chain([PathPart::from(name.as_str())])
            .collect();
        let relative = log_path(location.prefix_match(&root).into_iter().flatten());
        match move_object(store.as_ref(), &meta.location, &location).await {
            Ok(Moved::Clean) => {}
            Ok(Moved::SourceLeft) => log::warn!(
                "{}: a staged copy of an appended file could not be removed; it stays in the \
                 table's hidden write folder, which no reader lists",
                meta.location
            ),
            Err(MoveFailed { error, maybe_moved }) => {
                // a new name: one that may have arrived is deleted with the others
                if maybe_moved {
                    moved.add(&location);
                }
                return Err(error.into());
            }
        }
        moved.add(&location);
        let mut at_root = meta.clone();
        at_root.location = location.clone();
        let metadata = DFParquetMetadata::new(store.as_ref(), &at_root)
            .with_page_index_policy(Some(PageIndexPolicy::Skip))
            .fetch_metadata()
            .await?;
        files.push(WrittenFile {
            relative,
            size: meta.size,
            metadata,
            partition_values,
        });
    }
    let rows = files
        .iter()
        .map(|f| f.metadata.file_metadata().num_rows().max(0) as u64)
        .sum();
    commit(target, &files, committing).await?;
    Ok(rows)
}

/// The folders of a staged file at `location` under `folder` (the write's), one per partition
/// column (`<column>=<value>`, as the store names them), and the partition values they hold
/// (an empty one is NULL: the write gives NULL as empty text, as Delta reads it).
fn partition_folders<'a>(
    location: &'a Path,
    folder: &Path,
    columns: &[String],
) -> Result<(Vec<PathPart<'a>>, Vec<Option<String>>)> {
    let Some(parts) = location.prefix_match(folder) else {
        return exec_err!("Delta append: {location} is outside its write's folder {folder}");
    };
    let mut parts: Vec<PathPart<'a>> = parts.collect();
    parts.pop(); // (the file's own name)
    if parts.len() != columns.len() {
        return exec_err!(
            "Delta append: {location} lies {} folders deep, not one per partition column ({})",
            parts.len(),
            columns.join(", ")
        );
    }
    let values = (parts.iter().zip(columns))
        .map(|(part, column)| {
            let value = part.as_ref().rsplit_once('=').map(|(_, v)| v);
            folder_value(value.unwrap_or_default()).ok_or_else(|| {
                exec_datafusion_err!(
                    "Delta append: folder {} holds no value of column {column}",
                    part.as_ref()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((parts, values))
}

/// The prefix of a partition folder's name that holds its value in hex.
pub(crate) const HEX_FOLDER_PREFIX: &str = "+";

/// The partition value of a folder named `<column>=<name>`, where `name` is the value's text,
/// `+` and its hex, or empty (NULL); None where the hex is not a text's.
fn folder_value(name: &str) -> Option<Option<String>> {
    let Some(hex) = name.strip_prefix(HEX_FOLDER_PREFIX) else {
        return Some((!name.is_empty()).then(|| name.to_string()));
    };
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok().map(Some)
}

/// The characters a path in the log escapes (it is a relative URI): `%` (the store's own
/// escapes stay escapes), and those a URI cannot hold; non-ASCII bytes are always escaped.
const LOG_PATH_ESCAPES: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The path the log gives a file whose path below the table root is `parts`.
fn log_path<'a>(parts: impl Iterator<Item = PathPart<'a>>) -> String {
    let parts: Vec<String> = parts
        .map(|p| utf8_percent_encode(p.as_ref(), LOG_PATH_ESCAPES).to_string())
        .collect();
    parts.join("/")
}

/// The `add` actions of `files`, one JSON line each (the same in every attempt to commit).
fn add_lines(files: &[WrittenFile], columns: &[String], now: i64) -> String {
    let mut text = String::new();
    for file in files {
        let partition_values: Map<String, Value> = (columns.iter().zip(&file.partition_values))
            .map(|(c, v)| (c.clone(), v.as_ref().map_or(Value::Null, |v| json!(v))))
            .collect();
        let add = json!({"add": {
            "path": file.relative,
            "partitionValues": partition_values,
            "size": file.size,
            "modificationTime": now,
            "dataChange": true,
            "stats": file_stats(&file.metadata).to_string(),
        }});
        text.push_str(&add.to_string());
        text.push('\n');
    }
    text
}

/// A commit: its commitInfo (with `txn`, the append's transaction id, as Spark's `txnId`), the
/// protocol where shredded files need a feature `protocol` lacks, then `adds`.
fn commit_text(
    protocol: &Value,
    shredded: bool,
    adds: &str,
    target: &AppendTarget,
    (now, txn): (i64, &str),
) -> String {
    let partition_by = json!(target.partition_columns).to_string();
    let info = json!({"commitInfo": {
        "timestamp": now,
        "txnId": txn,
        "operation": "WRITE",
        "operationParameters": {"mode": "Append", "partitionBy": partition_by},
        "readVersion": target.read_version,
        "isBlindAppend": true,
        "engineInfo": concat!("datafusion-parquet-variant/", env!("CARGO_PKG_VERSION")),
    }});
    let mut text = format!("{info}\n");
    if shredded && let Some(protocol) = with_shredding_feature(protocol) {
        text.push_str(&json!({ "protocol": protocol }).to_string());
        text.push('\n');
    }
    text.push_str(adds);
    text
}

/// Whether a file shreds a variant: a `typed_value` leaf under one of its columns.
fn is_shredded(metadata: &ParquetMetaData) -> bool {
    let schema = metadata.file_metadata().schema_descr();
    (0..schema.num_columns()).any(|i| {
        schema
            .column(i)
            .path()
            .parts()
            .iter()
            .any(|p| p == "typed_value")
    })
}

/// `protocol` with the variant shredding feature added (the preview name beside
/// `variantType-preview`, as Spark's writer pairs them); None when it has one already.
fn with_shredding_feature(protocol: &Value) -> Option<Value> {
    let mut protocol = protocol.as_object()?.clone();
    let has = |list: &Map<String, Value>, key: &str, name: &str| {
        list.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|f| f == name))
    };
    if has(&protocol, "readerFeatures", "variantShredding")
        || has(&protocol, "readerFeatures", "variantShredding-preview")
    {
        return None;
    }
    let name = if has(&protocol, "readerFeatures", "variantType-preview") {
        "variantShredding-preview"
    } else {
        "variantShredding"
    };
    protocol.insert("minReaderVersion".into(), json!(3));
    protocol.insert("minWriterVersion".into(), json!(7));
    for key in ["readerFeatures", "writerFeatures"] {
        let list = protocol.entry(key).or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.push(json!(name));
        }
    }
    Some(Value::Object(protocol))
}

/// The log's statistics of a file: its row count, and the bounds and null counts of its
/// top-level integer, date and string columns.
fn file_stats(metadata: &ParquetMetaData) -> Value {
    let rows = metadata.file_metadata().num_rows();
    let mut mins = Map::new();
    let mut maxes = Map::new();
    let mut nulls = Map::new();
    let parquet_schema = metadata.file_metadata().schema_descr();
    if let Ok(arrow) = parquet_to_arrow_schema(parquet_schema, None) {
        for field in arrow.fields() {
            if !matches!(
                field.data_type(),
                DataType::Int8
                    | DataType::Int16
                    | DataType::Int32
                    | DataType::Int64
                    | DataType::Date32
                    | DataType::Utf8
                    | DataType::Utf8View
                    | DataType::LargeUtf8
            ) {
                continue;
            }
            let Ok(converter) = StatisticsConverter::try_new(field.name(), &arrow, parquet_schema)
            else {
                continue;
            };
            let groups = metadata.row_groups();
            if let (Ok(min), Ok(max)) = (
                converter.row_group_mins(groups.iter()),
                converter.row_group_maxes(groups.iter()),
            ) && let (Some(min), Some(max)) = (extreme(&min, true), extreme(&max, false))
            {
                mins.insert(field.name().clone(), min);
                maxes.insert(field.name().clone(), max);
            }
            if let Ok(counts) = converter.row_group_null_counts(groups.iter())
                && datafusion::arrow::array::Array::null_count(&counts) == 0
            {
                nulls.insert(
                    field.name().clone(),
                    json!(counts.values().iter().sum::<u64>()),
                );
            }
        }
    }
    json!({"numRecords": rows, "minValues": mins, "maxValues": maxes, "nullCount": nulls})
}

/// The least (`least`) or greatest value of `array` (the row groups' bounds) as the log's
/// JSON; None when a row group has none.
fn extreme(array: &ArrayRef, least: bool) -> Option<Value> {
    let mut best: Option<ScalarValue> = None;
    for i in 0..array.len() {
        let value = ScalarValue::try_from_array(array, i).ok()?;
        if value.is_null() {
            return None;
        }
        let better = match &best {
            None => true,
            Some(b) => match value.partial_cmp(b)? {
                std::cmp::Ordering::Less => least,
                std::cmp::Ordering::Greater => !least,
                std::cmp::Ordering::Equal => false,
            },
        };
        if better {
            best = Some(value);
        }
    }
    Some(match best? {
        ScalarValue::Int8(Some(v)) => json!(v),
        ScalarValue::Int16(Some(v)) => json!(v),
        ScalarValue::Int32(Some(v)) => json!(v),
        ScalarValue::Int64(Some(v)) => json!(v),
        ScalarValue::Utf8(Some(v))
        | ScalarValue::Utf8View(Some(v))
        | ScalarValue::LargeUtf8(Some(v)) => {
            json!(v)
        }
        date @ ScalarValue::Date32(Some(_)) => json!(date.to_string()),
        _ => return None,
    })
}

/// How many times a commit request whose outcome the log says was nothing is sent again at the
/// same version.
const COMMIT_RESENDS: u64 = 3;

/// Commits `files` at the first version after the read one that no other writer took. A
/// version taken by a commit that changed the schema is a conflict, as is one that gave the
/// table a writer feature appends do not honour; after another protocol change the commit
/// retries under the new protocol. A request that failed is settled by reading its version:
/// ours (our transaction id: the request landed), another's (taken: as above), or none (sent
/// again). `committing` is set while a request is in flight (for a drop guard), and left set
/// when the outcome is unknown.
async fn commit(
    target: &AppendTarget,
    files: &[WrittenFile],
    committing: &AtomicBool,
) -> std::result::Result<(), CommitFailure> {
    let mut version = target.read_version + 1;
    let mut protocol = target.protocol.clone();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let txn = uuid::Uuid::new_v4().to_string();
    let adds = add_lines(files, &target.partition_columns, now);
    let shredded = files.iter().any(|f| is_shredded(&f.metadata));
    let (mut taken, mut resent) = (0, 0);
    while taken <= COMMIT_RETRIES {
        let text = commit_text(&protocol, shredded, &adds, target, (now, &txn));
        let bytes = CommitOrBytes::LogBytes(text.into_bytes().into());
        committing.store(true, Ordering::SeqCst);
        let sent = (target.log_store)
            .write_commit_entry(version, bytes, uuid::Uuid::new_v4())
            .await;
        let failure = match sent {
            Ok(()) => return Ok(()),
            Err(TransactionError::VersionAlreadyExists(_)) => None,
            Err(e) => Some(DataFusionError::External(Box::new(e))),
        };
        // the version's entry says what happened: ours, another's, or nothing
        let entry = match target.log_store.read_commit_entry(version).await {
            Ok(entry) => entry,
            Err(read) => {
                let error = failure.unwrap_or_else(|| DataFusionError::External(Box::new(read)));
                return Err(CommitFailure::Unknown(error));
            }
        };
        committing.store(false, Ordering::SeqCst);
        let Some(winner) = entry else {
            // nothing there: the request did not land
            resent += 1;
            if resent > COMMIT_RESENDS {
                let error = failure.unwrap_or_else(|| {
                    DataFusionError::Execution(format!(
                        "Delta table at {}: version {version} was taken, then gone",
                        target.root
                    ))
                });
                return Err(CommitFailure::NotCommitted(error));
            }
            continue;
        };
        if transaction_of(&winner).as_deref() == Some(txn.as_str()) {
            return Ok(());
        }
        match changes_table(&winner) {
            TableChange::None => {}
            TableChange::Protocol(new) if unhonoured_writer_feature(&new).is_none() => {
                protocol = new;
            }
            change => {
                let what = match change {
                    TableChange::Protocol(new) => format!(
                        "protocol (writer feature '{}')",
                        unhonoured_writer_feature(&new).unwrap_or_default()
                    ),
                    _ => "schema".to_string(),
                };
                return Err(CommitFailure::NotCommitted(DataFusionError::Execution(
                    format!(
                        "Delta table at {}: a concurrent commit (version {version}) changed the \
                     table's {what}; the append was not committed",
                        target.root
                    ),
                )));
            }
        }
        version += 1;
        taken += 1;
    }
    Err(CommitFailure::NotCommitted(DataFusionError::Execution(
        format!(
            "Delta table at {}: the append found {COMMIT_RETRIES} newer versions in a row and was \
         not committed",
            target.root
        ),
    )))
}

/// The transaction id (`commitInfo.txnId`) of a commit (its JSON lines), where it has one.
fn transaction_of(commit: &[u8]) -> Option<String> {
    commit.split(|&b| b == b'\n').find_map(|line| {
        let action: Value = serde_json::from_slice(line).ok()?;
        Some(
            action
                .get("commitInfo")?
                .get("txnId")?
                .as_str()?
                .to_string(),
        )
    })
}

/// What a commit changed that matters to an append.
#[derive(Debug, PartialEq)]
enum TableChange {
    None,
    /// Its `metaData` (schema, partitioning, properties).
    Schema,
    /// Its protocol, now this.
    Protocol(Value),
}

/// What a commit (its JSON lines) changed.
fn changes_table(commit: &[u8]) -> TableChange {
    let mut change = TableChange::None;
    for line in commit.split(|&b| b == b'\n') {
        let Ok(Value::Object(mut action)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if action.contains_key("metaData") {
            return TableChange::Schema;
        }
        if let Some(protocol) = action.remove("protocol") {
            change = TableChange::Protocol(protocol);
        }
    }
    change
}

/// The first writer feature of `protocol` (the log's JSON) that appends do not honour.
pub(crate) fn unhonoured_writer_feature(protocol: &Value) -> Option<String> {
    (protocol.get("writerFeatures")?.as_array()?.iter())
        .filter_map(Value::as_str)
        .find(|f| !honoured_by_appends(f))
        .map(str::to_string)
}

/// Removes the write's folder where the store is the local file system (object stores have no
/// folders to leave behind).
fn remove_local_folder(folder: &Path, root: &Url) {
    if root.scheme() != "file" {
        return;
    }
    if let Ok(local) =
        datafusion::object_store::local::LocalFileSystem::new().path_to_filesystem(folder)
    {
        let _ = std::fs::remove_dir_all(local);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shredding_feature_added_once() {
        let stable = json!({"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["variantType"], "writerFeatures": ["variantType"]});
        let added = with_shredding_feature(&stable).unwrap();
        assert_eq!(
            added["readerFeatures"],
            json!(["variantType", "variantShredding"])
        );
        assert_eq!(
            added["writerFeatures"],
            json!(["variantType", "variantShredding"])
        );
        assert_eq!(with_shredding_feature(&added), None);
        let preview = json!({"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["variantType-preview"], "writerFeatures": ["variantType-preview"]});
        let added = with_shredding_feature(&preview).unwrap();
        assert_eq!(
            added["readerFeatures"],
            json!(["variantType-preview", "variantShredding-preview"])
        );
    }

    #[test]
    fn conflicting_commits() {
        let none = changes_table(b"{\"commitInfo\":{}}\n{\"add\":{}}\n");
        assert_eq!(none, TableChange::None);
        let schema = changes_table(b"{\"commitInfo\":{}}\n{\"metaData\":{}}");
        assert_eq!(schema, TableChange::Schema);
        let protocol = changes_table(b"{\"protocol\":{\"writerFeatures\":[\"rowTracking\"]}}\n");
        let TableChange::Protocol(new) = protocol else {
            panic!("a protocol change")
        };
        assert_eq!(
            unhonoured_writer_feature(&new).as_deref(),
            Some("rowTracking")
        );
        assert_eq!(changes_table(b"not json\n"), TableChange::None);
    }

    #[test]
    fn commits_name_their_transaction() {
        let target = AppendTarget {
            log_store: deltalake_core::logstore::default_logstore(
                Arc::new(datafusion::object_store::memory::InMemory::new()),
                Arc::new(datafusion::object_store::memory::InMemory::new()),
                &Url::parse("memory:///t/").unwrap(),
                &Default::default(),
            ),
            root: Url::parse("memory:///t/").unwrap(),
            read_version: 4,
            protocol: json!({}),
            partition_columns: vec![],
        };
        let text = commit_text(&json!({}), false, "", &target, (1, "txn-1"));
        assert_eq!(transaction_of(text.as_bytes()).as_deref(), Some("txn-1"));
        assert_eq!(transaction_of(b"{\"commitInfo\":{}}\n"), None);
        assert_eq!(transaction_of(b"not json"), None);
    }
}
