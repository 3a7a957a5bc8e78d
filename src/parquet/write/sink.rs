//! Writing Parquet files whose VARIANT groups say which version of the spec they follow.
//!
//! The parquet crate annotates variant columns `VARIANT` without a `specification_version`;
//! Spark 4.3 reads that as version 0 and rejects the file (`PARQUET_TYPE_NOT_RECOGNIZED`).
//! [`VariantParquetSink`] writes each file with an explicit Parquet schema, the one the parquet
//! crate derives with every `VARIANT` annotation set to version 1 (what Spark and DuckDB write).
//! Each file is written by one task, while tasks of their own shred its batches a few ahead, in
//! order (DataFusion's own sink, used for tables without variant or interval columns, encodes
//! a file's columns in parallel instead). It also writes `Interval(MonthDayNano)`
//! columns as `INTERVAL`, which the parquet crate cannot (see [`crate::parquet::general::interval`]).
use std::fmt;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::{cast, concat};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::common::config::TableParquetOptions;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result, exec_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryLimit, MemoryReservation};
use datafusion::object_store::ObjectStore;
use datafusion::object_store::path::Path;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, SendableRecordBatchStream};
use datafusion_datasource::write::demux::DemuxedStreamReceiver;
use datafusion_datasource::write::{ObjectWriterBuilder, get_writer_schema};
use futures::StreamExt;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ArrowSchemaConverter, AsyncArrowWriter};
use parquet::basic::LogicalType;
use parquet::basic::{Compression, PageType};
use parquet::encryption::encrypt::FileEncryptionProperties;
use parquet::file::metadata::{RowGroupMetaData, SortingColumn};
use parquet::file::properties::WriterPropertiesBuilder;
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use tokio::sync::mpsc::Receiver;
use tokio::task::JoinSet;

use super::in_flight::{InFlight, Ticket};
use super::input_sample::{InputSample, SampleOf};
use super::unique_leaves::unique_leaves;
use crate::parquet::general::interval::{
    holds_interval, interval_bytes_type, intervals_as_bytes, with_interval_annotations,
};
use crate::parquet::rebuilt_group;
use crate::parquet::variant_order::{
    ORDER_KEY as VARIANT_ORDER_KEY, VariantSortKey, encode as encode_variant_order,
};
use crate::shredding::{InferLimits, ShreddingInference, shred_variant, shredded_variant_type};
use crate::variant_array::{holds_field, is_variant_field, variant_data_type};

/// The object store writer of one file.
type BufWriter = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// The VARIANT specification version our files declare.
pub const VARIANT_SPEC_VERSION: i8 = 1;

/// True when `field` is a variant column or holds one (nested in a struct, list or map), by its
/// extension.
pub fn has_variant_column(field: &Field) -> bool {
    holds_field(field, &is_variant_field)
}

/// A Parquet [`FileSink`] that writes VARIANT groups with `specification_version` 1.
#[derive(Debug)]
pub struct VariantParquetSink {
    config: FileSinkConfig,
    options: TableParquetOptions,
    /// The names of the columns the input is sorted by, with (descending, nulls first).
    sorted_by: Vec<(String, bool, bool)>,
    /// The input's order by typed variant paths, recorded in each file's footer.
    variant_order: Vec<VariantSortKey>,
    /// The columns shredded with a type inferred per file.
    auto: Option<AutoShredding>,
}

impl VariantParquetSink {
    /// A sink for `config`, with DataFusion's Parquet writer `options`. When the input is sorted
    /// (`ordering`, over `config`'s output schema) by plain columns, the files record it as their
    /// `sorting_columns`, as DataFusion's sink does, so that scans know the order.
    pub fn new(
        config: FileSinkConfig,
        options: TableParquetOptions,
        ordering: Option<&LexRequirement>,
    ) -> Self {
        let schema = config.output_schema();
        let sorted_by = ordering
            .and_then(|ordering| {
                ordering
                    .iter()
                    .map(|r| {
                        let column = r.expr.downcast_ref::<Column>()?;
                        let options = r.options.unwrap_or_default();
                        let name = schema.fields().get(column.index())?.name().clone();
                        Some((name, options.descending, options.nulls_first))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .unwrap_or_default();
        Self {
            config,
            options,
            sorted_by,
            variant_order: vec![],
            auto: None,
        }
    }

    /// The files' configuration.
    pub fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    /// DataFusion's Parquet writer options.
    pub fn parquet_options(&self) -> &TableParquetOptions {
        &self.options
    }

    /// The columns shredded with an inferred type, if any.
    pub fn auto_shredding(&self) -> Option<&AutoShredding> {
        self.auto.as_ref()
    }

    /// Shreds `auto`'s columns with a type inferred from each file's first rows.
    pub fn with_auto_shredding(mut self, auto: AutoShredding) -> Self {
        self.auto = (!auto.columns.is_empty()).then_some(auto);
        self
    }

    /// The input's order by typed variant paths the files record (empty: none).
    pub fn variant_order(&self) -> &[VariantSortKey] {
        &self.variant_order
    }

    /// Records `keys`, the input's order by typed variant paths, in each file's footer
    /// (`parquet::variant_order`), so that scans know the order.
    pub fn with_variant_order(mut self, keys: Vec<VariantSortKey>) -> Self {
        self.variant_order = keys;
        self
    }
}

impl DisplayAs for VariantParquetSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VariantParquetSink(file_groups=")?;
        for (i, url) in self.config.table_paths.iter().enumerate() {
            write!(f, "{}{url}", if i > 0 { ", " } else { "" })?;
        }
        write!(f, ")")
    }
}

#[async_trait]
impl DataSink for VariantParquetSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}

#[async_trait]
impl FileSink for VariantParquetSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = get_writer_schema(&self.config);
        // the automatic columns by their index in the files (partition columns are not written)
        let output = self.config.output_schema();
        let auto = self.auto.as_ref().map(|auto| {
            let columns: Vec<usize> = (auto.columns.iter())
                .filter_map(|&i| schema.index_of(output.field(i).name()).ok())
                .collect();
            AutoShredding {
                // (the sample's columns are the automatic columns one for one)
                sample: (columns.len() == auto.columns.len())
                    .then(|| auto.sample.clone())
                    .flatten(),
                columns,
                ..auto.clone()
            }
        });
        let intervals = (schema.fields().iter().enumerate())
            .filter(|(_, f)| holds_interval(f.data_type()))
            .map(|(i, _)| i)
            .collect();
        // (no limit: shares of it that nothing reaches)
        let pool_limit = match context.memory_pool().memory_limit() {
            MemoryLimit::Finite(limit) => limit,
            _ => usize::MAX,
        };
        let files = Arc::new(FileSetup {
            schema,
            intervals,
            options: self.options.clone(),
            sorted_by: self.sorted_by.clone(),
            variant_order: self.variant_order.clone(),
            auto,
            batches_ahead: context.session_config().target_partitions().clamp(1, 4),
            store_buffer: store_buffer(
                (context.session_config().options())
                    .execution
                    .objectstore_writer_buffer_size,
                pool_limit / 16,
                self.config.object_store_url.as_str().starts_with("file://"),
            ),
            awaits_at_most: pool_limit / 4,
            writer_share: pool_limit / 16,
            from_sample: OnceLock::new(),
        });
        let mut tasks: JoinSet<Result<u64>> = JoinSet::new();
        while let Some((path, rx)) = file_stream_rx.recv().await {
            let writer = ObjectWriterBuilder::new(
                FileCompressionType::UNCOMPRESSED,
                &path,
                Arc::clone(&object_store),
            )
            .with_buffer_size(Some(files.store_buffer))
            .build()?;
            let encryption = file_encryption(&self.options, context, &files.schema, &path).await?;
            let files = Arc::clone(&files);
            let reservation = MemoryConsumer::new(format!("VariantParquetSink[{path}]"))
                .register(context.memory_pool());
            tasks.spawn(async move { files.write(writer, encryption, rx, reservation).await });
        }
        let mut rows = 0;
        while let Some(result) = tasks.join_next().await {
            match result {
                Ok(written) => rows += written?,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => return Err(DataFusionError::External(Box::new(e))),
            }
        }
        demux_task
            .join_unwind()
            .await
            .map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))??;
        Ok(rows)
    }
}

/// The smallest part S3 and the stores like it take in a multipart upload (but the last).
const SMALLEST_UPLOAD_PART: usize = 5 << 20;
/// The smallest buffer a local file's writer is given: writes of less cost more in calls than
/// they save in memory.
const SMALLEST_LOCAL_BUFFER: usize = 256 << 10;

/// The bytes a file's object-store writer buffers before it uploads: `configured`
/// (`objectstore_writer_buffer_size`, 10 MiB by default), but no more than the writer's share of
/// a limited pool, which holds them; never less than the part a remote store takes, nor than
/// [`SMALLEST_LOCAL_BUFFER`] for a local file. (The 10 MiB alone failed sorted loads under 20 MiB
/// pools.)
fn store_buffer(configured: usize, writer_share: usize, local: bool) -> usize {
    let floor = if local {
        SMALLEST_LOCAL_BUFFER
    } else {
        SMALLEST_UPLOAD_PART
    };
    configured.min(writer_share.max(floor))
}

/// The metadata a Parquet writer keeps of the row groups it has written, until it writes them
/// in the footer: about [`FOOTER_BYTES_PER_CHUNK`] a column chunk and [`FOOTER_BYTES_PER_PAGE`]
/// a page (its column and offset index entries).
#[derive(Debug, Default)]
struct Footer {
    /// The row groups counted.
    row_groups: usize,
    /// Their metadata's bytes, estimated.
    bytes: usize,
}

/// The bytes the parquet crate's writer holds for a column chunk's metadata and its page index,
/// besides [`FOOTER_BYTES_PER_PAGE`] for each page: measured (a counting allocator around an
/// `ArrowWriter` re-writing files of JSONBench's events by row group, 977 row groups of one page
/// a chunk and 16 of seven) at 875 bytes, with strings' statistics at their 64-byte bound.
const FOOTER_BYTES_PER_CHUNK: usize = 900;
/// The bytes of a page's column and offset index entries, measured as
/// [`FOOTER_BYTES_PER_CHUNK`] is (133).
const FOOTER_BYTES_PER_PAGE: usize = 150;

impl Footer {
    /// Counts the row groups of `flushed` (all a writer has written) not yet counted, and
    /// returns the bytes of them all.
    fn count(&mut self, flushed: &[RowGroupMetaData]) -> usize {
        for row_group in flushed.get(self.row_groups..).unwrap_or_default() {
            self.bytes += (row_group.columns().iter())
                .map(|chunk| {
                    let pages = (chunk.page_encoding_stats().into_iter().flatten())
                        .filter(|s| {
                            matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2)
                        })
                        .map(|s| s.count.max(0) as usize)
                        .sum::<usize>();
                    FOOTER_BYTES_PER_CHUNK + pages.max(1) * FOOTER_BYTES_PER_PAGE
                })
                .sum::<usize>();
        }
        self.row_groups = flushed.len();
        self.bytes
    }
}

/// The bytes a leaf's column writer holds beside the data it counts in its `memory_size`
/// (its encoders' and statistics' state; measured, 2.5-3.5 KB), and, for zstd, its codec's
/// contexts (the parquet crate makes a decompression context too: 94 KB each in `heaptrack`, and
/// a compression context of a few KB that grows with the pages compressed, up to about 1 MB for
/// pages of 1 MiB). A row group's writers hold them from its first batch until it is flushed:
/// JSONBench's 107 shredded leaves under zstd, 11 MB.
fn column_writer_bytes(compression: Compression) -> usize {
    const ENCODERS: usize = 4 << 10;
    const ZSTD_CONTEXTS: usize = 112 << 10;
    match compression {
        Compression::ZSTD(_) => ENCODERS + ZSTD_CONTEXTS,
        _ => ENCODERS,
    }
}

/// Automatic shredding: which columns, and how much to sample.
#[derive(Debug, Clone)]
pub struct AutoShredding {
    /// The output columns (indexes) shredded with an inferred type.
    pub columns: Vec<usize>,
    /// Rows sampled at most.
    pub sample_rows: usize,
    /// Bytes of those columns sampled at most.
    pub sample_bytes: usize,
    /// Bounds on the inferred types.
    pub limits: InferLimits,
    /// A sample of the input taken before the sink (`input_sample`: of the whole input under
    /// a sort, else of each partition's first rows), one column per entry of `columns`:
    /// inferred from instead of each file's first rows once it is finished.
    pub sample: Option<Arc<InputSample>>,
}

/// What every file of one write shares.
struct FileSetup {
    /// The output schema (explicitly shredded columns already shredded).
    schema: SchemaRef,
    /// The `Interval(MonthDayNano)` columns (indexes), written as `INTERVAL`.
    intervals: Vec<usize>,
    options: TableParquetOptions,
    sorted_by: Vec<(String, bool, bool)>,
    variant_order: Vec<VariantSortKey>,
    auto: Option<AutoShredding>,
    /// Batches made file batches at once, at most (the session's target partitions, up to 4);
    /// as many more wait for the writer.
    batches_ahead: usize,
    /// The bytes an object-store writer buffers before it uploads
    /// (`objectstore_writer_buffer_size`): a file smaller than that is held whole until closed.
    store_buffer: usize,
    /// The bytes of batches a file holds at most while it waits for each input partition's
    /// first rows to be sampled (besides the sample's own bound): a quarter of the memory
    /// pool's limit, so that the pipeline keeps room to write them once it stops waiting.
    awaits_at_most: usize,
    /// A sixteenth of the memory pool's limit: the bytes a file holds at most in batches on
    /// their way to its writer (but one batch always), and in its row group in progress (which
    /// ends early past it), so that what feeds the sink (readers, a sort's merges) keeps room
    /// beside it.
    writer_share: usize,
    /// The shredding of the automatic columns and their leaves without a dictionary, as the
    /// first file inferred them from the finished sample taken before the sink.
    from_sample: OnceLock<Inferred>,
}

/// The shredding type of each automatic column shredded (by index), and the leaves written
/// without a dictionary (see [`FileSetup::unique_leaves`]).
type Inferred = (Arc<[(usize, DataType)]>, Vec<(String, Vec<usize>)>);

impl FileSetup {
    /// Writes one file's batches; returns the row count. `reservation` holds what the file
    /// buffers (the sampled batches and those on their way to the writer, the writer's row group
    /// in progress, the encoded bytes the object-store writer holds before it uploads them), as
    /// DataFusion's sink reserves the first two: a write that needs more than the memory pool
    /// allows fails with the pool's resources-exhausted error.
    async fn write(
        self: Arc<Self>,
        writer: BufWriter,
        encryption: Option<Arc<FileEncryptionProperties>>,
        mut rx: Receiver<RecordBatch>,
        mut reservation: MemoryReservation,
    ) -> Result<u64> {
        // the first rows, to infer the shredding of the automatic columns from, or (once the
        // first has come) the sample taken before the sink when it is finished: at once when a
        // sort has finished it, else once every partition's head has passed, the batches that
        // arrive meanwhile held here (up to the sample's bytes and a quarter of the pool, or
        // what the pool can hold, past which the first rows do)
        let mut sample = vec![];
        let mut sampled = None;
        if let Some(auto) = &self.auto
            && self.from_sample.get().is_none()
        {
            let heads = (auto.sample.as_ref()).filter(|s| s.of() == SampleOf::PartitionHeads);
            let (mut rows, mut bytes) = (0, 0);
            loop {
                let first_rows_enough = rows >= auto.sample_rows || bytes >= auto.sample_bytes;
                // (what the file holds is what it has reserved so far)
                let held = reservation.size();
                let await_heads = (rows > 0 && held < auto.sample_bytes.min(self.awaits_at_most))
                    && heads.is_some_and(|heads| heads.runs_here());
                if first_rows_enough && !await_heads {
                    break;
                }
                let Some(batch) = rx.recv().await else {
                    break;
                };
                let size = batch.get_array_memory_size();
                let mut pool_full = false;
                if let Err(e) = reservation.try_grow(size) {
                    // (waiting for the heads is no reason to fail: the first rows are there)
                    if !first_rows_enough {
                        return Err(e);
                    }
                    reservation.grow(size);
                    pool_full = true;
                }
                rows += batch.num_rows();
                bytes += auto
                    .columns
                    .iter()
                    .map(|&i| batch.column(i).get_array_memory_size())
                    .sum::<usize>();
                sample.push(batch);
                if let Some(taken) = &auto.sample
                    && let Some(arrays) = taken.finished()?
                {
                    sampled = Some(arrays);
                    break;
                }
                if pool_full {
                    break;
                }
            }
            // (finished since the last batch came: the input has ended)
            if sampled.is_none()
                && let Some(taken) = &auto.sample
            {
                sampled = taken.finished()?;
            }
        }
        let (shredding, plain) = match (self.from_sample.get(), sampled) {
            (Some(inferred), _) => inferred.clone(),
            (None, Some(arrays)) => {
                let shredding: Arc<[(usize, DataType)]> = self.infer_from_columns(&arrays)?.into();
                let plain = self.unique_leaves(&shredding, &sample, Some(&arrays))?;
                // Every file infers the same from the finished sample: the first keeps what it
                // inferred for the others, and the sample's rows leave the pool (they held
                // 1.8 MB of it under JSONBench's sorted load, beside the sort's final merge).
                let inferred = self.from_sample.get_or_init(|| (shredding, plain)).clone();
                if let Some(taken) = self.auto.as_ref().and_then(|auto| auto.sample.as_ref()) {
                    taken.release();
                }
                inferred
            }
            (None, None) => {
                let shredding: Arc<[(usize, DataType)]> = self.infer(&sample)?.into();
                let plain = self.unique_leaves(&shredding, &sample, None)?;
                (shredding, plain)
            }
        };
        let schema = self.file_schema(&shredding)?;
        let (mut writer, column_writers) = self.writer(writer, encryption, &schema, &plain)?;
        // The batches are made file batches (shredded) by tasks of their own, a few at once and
        // in order, while this task encodes the previous ones: shredding and encoding are each
        // about a third of a write, and would otherwise share one core. A task of its own keeps
        // them coming while the writer is busy (a row group's flush is long). Each batch holds
        // its share of the pool (a ticket, `in_flight`) from entering the pipeline until
        // written, waiting for the batches ahead when the pool is full; the sample's batches
        // hold what was reserved for them while sampling.
        let in_flight = Arc::new(InFlight::new(reservation.take(), self.writer_share));
        let setup = Arc::clone(&self);
        let ahead = self.batches_ahead;
        let file_batches = futures::stream::iter(sample)
            .chain(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
            .then(move |batch| {
                let in_flight = Arc::clone(&in_flight);
                async move {
                    let ticket = in_flight.ticket(batch.get_array_memory_size()).await;
                    (batch, ticket)
                }
            })
            .map(move |(batch, ticket)| {
                let (setup, schema, shredding) = (
                    Arc::clone(&setup),
                    Arc::clone(&schema),
                    Arc::clone(&shredding),
                );
                SpawnedTask::spawn(async move {
                    let ticket = ticket?;
                    Ok((setup.file_batch(&batch, &schema, &shredding)?, ticket))
                })
                .join_unwind()
            })
            .buffered(ahead);
        let (tx, mut shredded) = tokio::sync::mpsc::channel(ahead);
        let shredder = SpawnedTask::spawn(async move {
            let mut file_batches = std::pin::pin!(file_batches);
            while let Some(batch) = file_batches.next().await {
                let batch: Result<(RecordBatch, Ticket)> = batch
                    .map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))
                    .and_then(|b| b);
                let failed = batch.is_err();
                // (a closed channel: the writer has stopped on an error of its own)
                if tx.send(batch).await.is_err() || failed {
                    break;
                }
            }
        });
        let mut rows = 0;
        // (the metadata of the row groups written, which the writer keeps for the footer)
        let mut footer = Footer::default();
        // What the file holds: its column writers, its row group in progress, the encoded bytes
        // the store's writer holds up to its buffer's size (then it uploads), and the footer.
        let held = |writer: &AsyncArrowWriter<_>, footer: &mut Footer| {
            column_writers
                + writer.memory_size()
                + writer.bytes_written().min(self.store_buffer)
                + footer.count(writer.flushed_row_groups())
        };
        while let Some(batch) = shredded.recv().await {
            let (batch, ticket) = batch?;
            rows += batch.num_rows() as u64;
            writer.write(&batch).await?;
            drop(ticket);
            // A row group may grow past the writer's share to the size of the footer so far:
            // each row group adds its columns' metadata to the footer, so row groups of a fixed
            // size under a small pool would fill it with metadata (JSONBench's 2M events under
            // 16 MiB made 977 row groups of 107 columns, 100 MB of metadata). Growing with the
            // footer, the two grow as the root of the data written.
            let row_group_bound = self.writer_share.max(footer.bytes);
            if writer.memory_size() > row_group_bound
                || (reservation.try_resize(held(&writer, &mut footer))).is_err()
            {
                // the row group in progress has outgrown its share of the pool, or what the
                // pool gives: it ends here, a smaller row group rather than a failed write
                writer.flush().await?;
                reservation.try_resize(held(&writer, &mut footer))?;
            }
        }
        // (a shredding task's panic surfaces here)
        shredder
            .join_unwind()
            .await
            .map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))?;
        writer.close().await?;
        reservation.free();
        Ok(rows)
    }

    /// The shredding type of each automatic column, from the first rows of the sampled batches
    /// (none where the inference chooses VARIANT).
    fn infer(&self, sample: &[RecordBatch]) -> Result<Vec<(usize, DataType)>> {
        let sample_rows = self.auto.as_ref().map_or(0, |auto| auto.sample_rows);
        self.infer_each(|_, i, inference| {
            for part in first_rows(sample, i, sample_rows) {
                inference.add_column(&part)?;
            }
            Ok(())
        })
    }

    /// The shredding type of each automatic column from `arrays`, one per automatic column (the
    /// whole input's sample).
    fn infer_from_columns(&self, arrays: &[ArrayRef]) -> Result<Vec<(usize, DataType)>> {
        self.infer_each(|k, _, inference| inference.add_column(&arrays[k]))
    }

    /// The shredding type of each automatic column (its position among them, its index) from
    /// the values `add` gives its inference; none where the inference chooses VARIANT.
    fn infer_each(
        &self,
        mut add: impl FnMut(usize, usize, &mut ShreddingInference) -> Result<()>,
    ) -> Result<Vec<(usize, DataType)>> {
        let Some(auto) = &self.auto else {
            return Ok(vec![]);
        };
        let mut columns = auto.limits.max_columns;
        let mut out = vec![];
        for (k, &i) in auto.columns.iter().enumerate() {
            let mut inference = ShreddingInference::new(auto.limits);
            add(k, i, &mut inference)?;
            let shredding = inference.finish(&mut columns);
            if shredding != variant_data_type() {
                out.push((i, shredding));
            }
        }
        Ok(out)
    }

    /// The leaves of each automatic column written without a dictionary: its name and the
    /// ordinals of the leaves whose sampled values hardly repeat (see `unique_leaves`), from the
    /// sample it was inferred from (the whole input's, or the first rows).
    fn unique_leaves(
        &self,
        shredding: &[(usize, DataType)],
        sample: &[RecordBatch],
        sampled: Option<&[ArrayRef]>,
    ) -> Result<Vec<(String, Vec<usize>)>> {
        let Some(auto) = &self.auto else {
            return Ok(vec![]);
        };
        let mut out = vec![];
        for (i, t) in shredding {
            let column = match sampled {
                Some(arrays) => match auto.columns.iter().position(|c| c == i) {
                    Some(k) => Arc::clone(&arrays[k]),
                    None => continue,
                },
                None => {
                    let parts = first_rows(sample, *i, auto.sample_rows);
                    let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
                    if parts.is_empty() {
                        continue;
                    }
                    concat(&parts)?
                }
            };
            let leaves = unique_leaves(&shred_variant(&column, t)?)?;
            out.push((self.schema.field(*i).name().clone(), leaves));
        }
        Ok(out)
    }

    /// The file's Arrow schema: the output schema with the automatic columns shredded, and the
    /// intervals as their 12 bytes.
    fn file_schema(&self, shredding: &[(usize, DataType)]) -> Result<SchemaRef> {
        if shredding.is_empty() && self.intervals.is_empty() {
            return Ok(Arc::clone(&self.schema));
        }
        let mut fields: Vec<FieldRef> = self.schema.fields().iter().cloned().collect();
        let mut retype = |i: usize, data_type: DataType| {
            let field = &fields[i];
            fields[i] = Arc::new(
                Field::new(field.name(), data_type, field.is_nullable())
                    .with_metadata(field.metadata().clone()),
            );
        };
        for (i, t) in shredding {
            retype(*i, shredded_variant_type(t)?);
        }
        for &i in &self.intervals {
            retype(i, interval_bytes_type(self.schema.field(i).data_type()));
        }
        Ok(Arc::new(Schema::new_with_metadata(
            fields,
            self.schema.metadata().clone(),
        )))
    }

    /// The Parquet writer of a file of `schema`: VARIANT groups with a specification version,
    /// the Arrow schema in the footer and the sorting columns as DataFusion's sink writes them,
    /// and the order by variant paths beside them.
    fn writer(
        &self,
        writer: BufWriter,
        encryption: Option<Arc<FileEncryptionProperties>>,
        schema: &SchemaRef,
        plain: &[(String, Vec<usize>)],
    ) -> Result<(AsyncArrowWriter<BufWriter>, usize)> {
        let mut options = self.options.clone();
        if schema.fields().iter().any(|f| has_variant_column(f)) {
            if options.global.max_row_group_size == DATAFUSION_ROW_GROUP_ROWS {
                options.global.max_row_group_size = VARIANT_ROW_GROUP_ROWS;
            }
            if options.global.compression.as_deref() == Some(DATAFUSION_COMPRESSION) {
                options.global.compression = Some(VARIANT_COMPRESSION.to_string());
            }
        }
        // (the order the input has, never one an option states: a scan trusts it)
        options.key_value_metadata.remove(VARIANT_ORDER_KEY);
        if !self.variant_order.is_empty() {
            let keys = encode_variant_order(&self.variant_order);
            (options.key_value_metadata).insert(VARIANT_ORDER_KEY.to_string(), Some(keys));
        }
        if !options.global.skip_arrow_metadata {
            // as DataFusion's sink: the Arrow schema goes into the footer's key-value metadata,
            // here with the shredded text read as string views (see `text_as_views`), unless
            // readers could not decode it
            let arrow_schema = text_as_views(schema);
            match arrow_schema_decodes(&arrow_schema) {
                true => options.arrow_schema(&arrow_schema),
                false => options.global.skip_arrow_metadata = true,
            }
        }
        let properties = WriterPropertiesBuilder::try_from(&options)?.build();
        let converted = ArrowSchemaConverter::new()
            .with_coerce_types(properties.coerce_types())
            .convert(schema)?;
        let intervals: Vec<(&str, &DataType)> = (self.intervals.iter())
            .map(|&i| {
                (
                    schema.field(i).name().as_str(),
                    self.schema.field(i).data_type(),
                )
            })
            .collect();
        let parquet_schema = SchemaDescriptor::new(with_interval_annotations(
            with_variant_version(converted.root_schema_ptr())?,
            &intervals,
        )?);
        let mut properties = properties
            .into_builder()
            .set_sorting_columns(sorting_columns(&self.sorted_by, &parquet_schema));
        // (unless dictionaries are set otherwise than DataFusion's default, for all columns or
        // for the leaf)
        if options.global.dictionary_enabled == Some(true) {
            for (name, leaves) in plain {
                let paths = (parquet_schema.columns().iter())
                    .map(|c| c.path())
                    .filter(|p| p.parts().first() == Some(name));
                for (ordinal, path) in paths.enumerate() {
                    let set = (options.column_specific_options.get(&path.string()))
                        .is_some_and(|c| c.dictionary_enabled.is_some());
                    if leaves.contains(&ordinal) && !set {
                        properties = properties.set_column_dictionary_enabled(path.clone(), false);
                    }
                }
            }
        }
        if let Some(encryption) = encryption {
            check_variants_encrypted_whole(&parquet_schema, &encryption)?;
            properties = properties.with_file_encryption_properties(encryption);
        }
        let properties = properties.build();
        let column_writers = (parquet_schema.columns().iter())
            .map(|leaf| column_writer_bytes(properties.compression(leaf.path())))
            .sum();
        // (the writer would put its own schema into the footer, over the one above)
        let options = ArrowWriterOptions::new()
            .with_properties(properties)
            .with_skip_arrow_metadata(true)
            .with_parquet_schema(parquet_schema);
        let writer = AsyncArrowWriter::try_new_with_options(writer, Arc::clone(schema), options)?;
        Ok((writer, column_writers))
    }
}

/// Column `column` of the first `rows` rows of `batches` exactly (fewer when they hold fewer),
/// a slice of each batch it spans.
fn first_rows(batches: &[RecordBatch], column: usize, rows: usize) -> Vec<ArrayRef> {
    let mut left = rows;
    let mut parts = vec![];
    for batch in batches {
        let take = left.min(batch.num_rows());
        parts.push(batch.column(column).slice(0, take));
        left -= take;
    }
    parts
}

/// DataFusion's default `max_row_group_size`.
const DATAFUSION_ROW_GROUP_ROWS: usize = 1024 * 1024;

/// The row group size of files with variant columns, unless `max_row_group_size` is set to
/// another value than DataFusion's default: smaller groups than DataFusion's million rows (as
/// DuckDB's 122,880 and Spark's 128 MB), so that the statistics of shredded leaves prune finer,
/// a file's row groups feed several partitions of a scan, and the writer buffers less of a file
/// (a shredded column has many leaves).
pub const VARIANT_ROW_GROUP_ROWS: usize = 128 * 1024;

/// DataFusion's default `compression`.
const DATAFUSION_COMPRESSION: &str = "zstd(3)";

/// The compression of files with variant columns, unless `compression` is set to another value
/// than DataFusion's default: zstd's first level, which on 2M Bluesky-like events wrote a file
/// 3% smaller than level 3 in 0.8x the time of the whole sorted `COPY` (the shredded leaves'
/// pages are short runs that level 3's longer search does not pay off on), queries the same.
pub const VARIANT_COMPRESSION: &str = "zstd(1)";

/// Whether readers can decode `schema` from a footer's `ARROW:schema`: the IPC flatbuffer
/// verifier (the parquet crate's, with its default limits) refuses a schema nested past 64
/// tables, which a variant shredded about 30 levels deep reaches. A file whose schema does not
/// decode is written without it; readers then go by its Parquet schema, whose VARIANT
/// annotations mark the variant columns.
fn arrow_schema_decodes(schema: &Schema) -> bool {
    use datafusion::arrow::ipc::writer::{DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
    let encoded = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
        schema,
        &mut DictionaryTracker::new(true),
        &IpcWriteOptions::default(),
    );
    datafusion::arrow::ipc::root_as_message(&encoded.ipc_message).is_ok()
}

/// `schema` with the shredded text of its variant columns (string `typed_value`s) as Utf8View:
/// the Arrow schema the footer carries, which Arrow readers follow, so that reading a shredded
/// string leaf makes views into its pages (as DataFusion reads top-level text) instead of
/// copying every string, and a `::string` extraction takes the leaf as it is.
fn text_as_views(schema: &SchemaRef) -> SchemaRef {
    fn views(data_type: &DataType, in_typed: bool) -> DataType {
        match data_type {
            DataType::Utf8 if in_typed => DataType::Utf8View,
            DataType::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|f| {
                        let typed = in_typed || f.name() == "typed_value";
                        Arc::new(
                            f.as_ref()
                                .clone()
                                .with_data_type(views(f.data_type(), typed)),
                        )
                    })
                    .collect(),
            ),
            DataType::List(f) => DataType::List(Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(views(f.data_type(), in_typed)),
            )),
            other => other.clone(),
        }
    }
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if is_variant_field(f) {
                Arc::new(
                    f.as_ref()
                        .clone()
                        .with_data_type(views(f.data_type(), false)),
                )
            } else {
                Arc::clone(f)
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

impl FileSetup {
    /// `batch` as the file has it (`schema`): the columns `shredding` names shredded, the
    /// intervals as their `INTERVAL` bytes.
    fn file_batch(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        shredding: &[(usize, DataType)],
    ) -> Result<RecordBatch> {
        // (nested fields' types can differ in metadata only: variants inside structs, lists
        // and maps that the output schema marks, see `with_variant_shaped_fields`)
        let same_types = (batch.columns().iter().zip(schema.fields()))
            .all(|(c, f)| c.data_type() == f.data_type());
        if shredding.is_empty() && self.intervals.is_empty() && same_types {
            return Ok(batch.clone());
        }
        let mut columns = batch.columns().to_vec();
        for (i, t) in shredding {
            columns[*i] = shred_variant(&columns[*i], t)?;
        }
        for &i in &self.intervals {
            columns[i] = intervals_as_bytes(&columns[i], schema.field(i).name())?;
        }
        for (column, field) in columns.iter_mut().zip(schema.fields()) {
            if column.data_type() != field.data_type() {
                *column = cast(column, field.data_type())?;
            }
        }
        Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
    }
}

/// The encryption of the file at `path` (of Arrow schema `schema`), as DataFusion's sink sets it:
/// the options' own properties, or those the session's encryption factory gives for the file;
/// None for a plain file.
async fn file_encryption(
    options: &TableParquetOptions,
    context: &TaskContext,
    schema: &SchemaRef,
    path: &Path,
) -> Result<Option<Arc<FileEncryptionProperties>>> {
    if let Some(properties) = &options.crypto.file_encryption {
        return Ok(Some(Arc::new(FileEncryptionProperties::try_from(
            properties.clone(),
        )?)));
    }
    let Some(factory) = &options.crypto.factory_id else {
        return Ok(None);
    };
    context
        .runtime_env()
        .parquet_encryption_factory(factory)?
        .get_file_encryption_properties(&options.crypto.factory_options, schema, path)
        .await
}

/// An error when `encryption`'s column keys cover some leaves of a VARIANT group of `schema` but
/// not all: a variant is one value, and the leaves without a key (its `metadata`, which holds the
/// field names, or the `typed_value` leaves a shredding adds) would be written unencrypted.
fn check_variants_encrypted_whole(
    schema: &SchemaDescriptor,
    encryption: &FileEncryptionProperties,
) -> Result<()> {
    let (keyed, _, _) = encryption.column_keys();
    if keyed.is_empty() {
        // uniform encryption: every leaf under the footer key
        return Ok(());
    }
    let mut groups = vec![];
    for field in schema.root_schema().get_fields() {
        variant_groups(field, field.name(), &mut groups);
    }
    for (group, leaves) in groups {
        let (with, without): (Vec<&String>, Vec<&String>) =
            leaves.iter().partition(|leaf| keyed.contains(leaf));
        if !with.is_empty() && !without.is_empty() {
            return exec_err!(
                "the encryption gives keys to some leaves of the variant {group} ({}) but not to \
                 {}, which would be written unencrypted: give every leaf of a variant a key \
                 (shredding adds typed_value leaves; `'variant.shred.{group}' 'none'` writes \
                 only metadata and value), or encrypt every column with the footer key",
                with.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                without
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(())
}

/// The VARIANT groups in `t` (at `path`, dotted), each with the dotted paths of its leaves.
#[recursive::recursive]
fn variant_groups(t: &TypePtr, path: &str, out: &mut Vec<(String, Vec<String>)>) {
    fn leaves(t: &TypePtr, path: &str, out: &mut Vec<String>) {
        match t.is_primitive() {
            true => out.push(path.to_string()),
            false => (t.get_fields().iter())
                .for_each(|f| leaves(f, &format!("{path}.{}", f.name()), out)),
        }
    }
    if t.is_primitive() {
        return;
    }
    if let Some(LogicalType::Variant(_)) = t.get_basic_info().logical_type_ref() {
        let mut group = vec![];
        leaves(t, path, &mut group);
        out.push((path.to_string(), group));
        return;
    }
    for f in t.get_fields() {
        variant_groups(f, &format!("{path}.{}", f.name()), out);
    }
}

/// The sorted-by columns as Parquet sorting columns (leaf column indexes of `schema`); None
/// when one of them is not a top-level leaf column of the file.
fn sorting_columns(
    sorted_by: &[(String, bool, bool)],
    schema: &SchemaDescriptor,
) -> Option<Vec<SortingColumn>> {
    if sorted_by.is_empty() {
        return None;
    }
    sorted_by
        .iter()
        .map(|(name, descending, nulls_first)| {
            let leaf = schema
                .columns()
                .iter()
                .position(|c| c.path().parts() == std::slice::from_ref(name))?;
            Some(SortingColumn {
                column_idx: leaf as i32,
                descending: *descending,
                nulls_first: *nulls_first,
            })
        })
        .collect()
}

/// `t` with every `VARIANT` annotation set to [`VARIANT_SPEC_VERSION`].
fn with_variant_version(t: TypePtr) -> Result<TypePtr> {
    let Type::GroupType { basic_info, fields } = t.as_ref() else {
        return Ok(t);
    };
    let fields = fields
        .iter()
        .map(|f| with_variant_version(Arc::clone(f)))
        .collect::<Result<Vec<_>>>()?;
    let logical_type = match basic_info.logical_type_ref() {
        Some(LogicalType::Variant(_)) => Some(LogicalType::variant(Some(VARIANT_SPEC_VERSION))),
        other => other.cloned(),
    };
    Ok(Arc::new(rebuilt_group(&t, fields, logical_type)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store's buffer: the writer's share of a limited pool when smaller than the setting,
    /// but a whole part for remote stores; a smaller setting stays.
    #[test]
    fn the_store_buffer_keeps_to_the_writers_share() {
        const MIB: usize = 1 << 20;
        // an 8 MiB pool: a sixteenth is 512 KiB
        assert_eq!(store_buffer(10 * MIB, MIB / 2, true), MIB / 2);
        assert_eq!(store_buffer(10 * MIB, MIB / 2, false), 5 * MIB);
        // a tiny pool: the floors
        assert_eq!(store_buffer(10 * MIB, 1000, true), 256 << 10);
        // no limit (shares of usize::MAX), or a large pool: the setting
        assert_eq!(store_buffer(10 * MIB, usize::MAX / 16, false), 10 * MIB);
        assert_eq!(store_buffer(10 * MIB, 64 * MIB, true), 10 * MIB);
        // a setting below the floor is the user's
        assert_eq!(store_buffer(MIB, 64, false), MIB);
    }
}
