//! [`VariantJsonSource`]: DataFusion's file scan (`DataSourceExec` over a `FileScanConfig`)
//! reading JSON files into variants. Each file is opened once per partition that holds it:
//! whole (decompressed as it is read), or, for an uncompressed NDJSON file split by DataFusion's
//! repartitioning, the lines that start in its byte range. Local files are read in large blocks;
//! other stores' bytes are taken as they arrive. What a reader holds is reserved in the
//! session's memory pool.
use std::fmt::{self, Formatter};
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, internal_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::physical_plan::{FileOpenFuture, FileOpener, FileScanConfig};
use datafusion::execution::memory_pool::{
    MemoryConsumer, MemoryPool, MemoryReservation, UnboundedMemoryPool,
};
use datafusion::object_store::path::Path;
use datafusion::object_store::{GetOptions, GetRange, GetResultPayload, ObjectStore};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::sort_expr::LexOrdering;
use datafusion::physical_plan::DisplayFormatType;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion_datasource::file::FileSource;
use datafusion_datasource::file_groups::FileGroupPartitioner;
use datafusion_datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion_datasource::{PartitionedFile, TableSchema};
use futures::StreamExt;
use futures::stream::BoxStream;

use super::documents::{BadRecord, ByteRange, DocumentReader};
use super::options::JsonReadOptions;

/// How much of a local file is read at a time.
const BLOCK_BYTES: usize = 1 << 20;

/// The scan's source: JSON files, each document a row of one variant column (see the module).
#[derive(Clone)]
pub struct VariantJsonSource {
    options: Arc<JsonReadOptions>,
    table_schema: TableSchema,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
    projection: SplitProjection,
    pool: Option<Arc<dyn MemoryPool>>,
}

impl VariantJsonSource {
    /// A source reading files with `options` into `table_schema` (the options' schema, and
    /// partition columns if any).
    pub fn new(options: Arc<JsonReadOptions>, table_schema: TableSchema) -> Self {
        VariantJsonSource {
            options,
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
            pool: None,
        }
    }

    /// The source reserving what its readers hold in `pool` (none set: no limit).
    pub fn with_pool(mut self, pool: Arc<dyn MemoryPool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// How the files are read.
    pub fn options(&self) -> &Arc<JsonReadOptions> {
        &self.options
    }
}

impl FileSource for VariantJsonSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema();
        let schema = Arc::new(file_schema.project(&self.projection.file_indices)?);
        let Some(batch_size) = self.batch_size else {
            return internal_err!("a JSON scan's batch size is set before it is opened");
        };
        let opener = Arc::new(VariantJsonOpener {
            options: Arc::clone(&self.options),
            schema,
            batch_size,
            store: object_store,
            store_url: base_config.object_store_url.as_str().to_string(),
            pool: self
                .pool
                .clone()
                .unwrap_or_else(|| Arc::new(UnboundedMemoryPool::default())),
            partition,
            bad_records: MetricBuilder::new(&self.metrics).counter("bad_records", partition),
            bytes_scanned: MetricBuilder::new(&self.metrics).counter("bytes_scanned", partition),
        });
        ProjectionOpener::try_new(self.projection.clone(), opener, file_schema)
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.batch_size = Some(batch_size);
        Arc::new(source)
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        let mut source = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        source.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(source)))
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "json_variant"
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::TreeRender => {
                // (one `key=value` line each, as the tree's box shows them)
                self.options.write_separated(f, "\n")?;
                writeln!(f)
            }
            _ => write!(f, ", {}", self.options),
        }
    }

    fn supports_repartitioning(&self) -> bool {
        !self.options.multi_line
    }

    /// Uncompressed NDJSON files are split by byte ranges, as DataFusion splits its own; a scan
    /// with a compressed or multi-line file is not (its files still spread over partitions).
    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> Result<Option<FileScanConfig>> {
        let compressed = config
            .file_groups
            .iter()
            .flat_map(|group| group.iter())
            .any(|file| {
                self.options
                    .compression_of(file.object_meta.location.as_ref())
                    .is_compressed()
            });
        if compressed || !self.supports_repartitioning() {
            return Ok(None);
        }
        let groups = FileGroupPartitioner::new()
            .with_target_partitions(target_partitions)
            .with_repartition_file_min_size(repartition_file_min_size)
            .with_preserve_order_within_groups(output_ordering.is_some())
            .repartition_file_groups(&config.file_groups);
        Ok(groups.map(|file_groups| {
            let mut config = config.clone();
            config.file_groups = file_groups;
            config
        }))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)
    }
}

/// Opens one file (or byte range) of a partition.
struct VariantJsonOpener {
    options: Arc<JsonReadOptions>,
    /// The columns read from the file (the projection's).
    schema: SchemaRef,
    batch_size: usize,
    store: Arc<dyn ObjectStore>,
    store_url: String,
    pool: Arc<dyn MemoryPool>,
    partition: usize,
    bad_records: Count,
    /// The bytes read from the files, as stored (compressed where they are), as DataFusion's
    /// Parquet scan counts its own.
    bytes_scanned: Count,
}

impl FileOpener for VariantJsonOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let location = file.object_meta.location.clone();
        let name = format!("{}{}", self.store_url, location);
        let compression = self.options.compression_of(location.as_ref());
        let size = file.object_meta.size;
        let range = match &file.range {
            None => ByteRange::WHOLE,
            Some(r) if !compression.is_compressed() => {
                ByteRange::lines_in(r.start as u64, r.end as u64, size)
            }
            Some(_) => return internal_err!("a byte range of the compressed file {name}"),
        };
        let store = Arc::clone(&self.store);
        let reader = DocumentReader::new(
            &self.options,
            Arc::clone(&self.schema),
            self.batch_size,
            range,
        );
        let reservation = MemoryConsumer::new(format!("read_json_variant[{}]", self.partition))
            .register(&self.pool);
        let bad_records = self.bad_records.clone();
        let bytes_scanned = self.bytes_scanned.clone();
        Ok(Box::pin(async move {
            let input = Input::open(
                &store,
                &location,
                range.first_byte,
                compression,
                bytes_scanned,
            )
            .await
            .map_err(|e| read_error(&name, e))?;
            let file = FileReader {
                input,
                rest: Bytes::new(),
                reader,
                reservation,
                bad_records,
                bad_seen: 0,
                name,
                store,
                location,
                compressed: compression.is_compressed(),
            };
            Ok(futures::stream::try_unfold(file, |mut file| async move {
                Ok(file.next_batch().await?.map(|batch| (batch, file)))
            })
            .boxed())
        }))
    }
}

fn read_error(name: &str, e: DataFusionError) -> DataFusionError {
    exec_datafusion_err!("read_json_variant: cannot read {name}: {e}")
}

/// A file's bytes, decompressed.
enum Input {
    /// A local file, read in blocks (as DataFusion's readers read local files, in the task).
    Read(Box<dyn Read + Send>),
    /// Another store's stream.
    Stream(BoxStream<'static, Result<Bytes>>),
}

impl Input {
    async fn open(
        store: &Arc<dyn ObjectStore>,
        location: &Path,
        from: u64,
        compression: FileCompressionType,
        bytes_scanned: Count,
    ) -> Result<Input> {
        let options = GetOptions {
            range: (from > 0).then_some(GetRange::Offset(from)),
            ..Default::default()
        };
        let result = store.get_opts(location, options).await?;
        match result.payload {
            GetResultPayload::File(mut file, _) => {
                file.seek(SeekFrom::Start(result.range.start))?;
                let file = CountedRead {
                    read: file,
                    count: bytes_scanned,
                };
                Ok(Input::Read(compression.convert_read(file)?))
            }
            GetResultPayload::Stream(stream) => {
                let stream = stream.map(move |chunk| {
                    let chunk = chunk.map_err(DataFusionError::from)?;
                    bytes_scanned.add(chunk.len());
                    Ok(chunk)
                });
                Ok(Input::Stream(compression.convert_stream(stream.boxed())?))
            }
        }
    }

    async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        match self {
            Input::Read(read) => {
                let mut block = vec![0u8; BLOCK_BYTES];
                let mut filled = 0;
                while filled < block.len() {
                    match read.read(&mut block[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                block.truncate(filled);
                Ok((filled > 0).then(|| Bytes::from(block)))
            }
            Input::Stream(stream) => stream.next().await.transpose(),
        }
    }
}

/// A file's reader that counts the bytes read.
struct CountedRead<R> {
    read: R,
    count: Count,
}

impl<R: Read> Read for CountedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.read.read(buf)?;
        self.count.add(n);
        Ok(n)
    }
}

/// One open file: its bytes through a [`DocumentReader`], batch by batch.
struct FileReader {
    input: Input,
    /// What the reader has not taken of the last chunk.
    rest: Bytes,
    reader: DocumentReader,
    reservation: MemoryReservation,
    bad_records: Count,
    bad_seen: usize,
    name: String,
    store: Arc<dyn ObjectStore>,
    location: Path,
    compressed: bool,
}

impl FileReader {
    async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if self.reader.is_full() || self.reader.is_done() {
                return self.emit();
            }
            if self.rest.is_empty() {
                let chunk = self
                    .input
                    .next_chunk()
                    .await
                    .map_err(|e| read_error(&self.name, e))?;
                match chunk {
                    Some(chunk) => self.rest = chunk,
                    None => {
                        if let Err(bad) = self.reader.finish() {
                            return Err(self.bad_record_error(bad).await);
                        }
                        continue;
                    }
                }
            }
            match self.reader.decode(&self.rest) {
                Ok(taken) => {
                    let _ = self.rest.split_to(taken);
                }
                Err(bad) => return Err(self.bad_record_error(bad).await),
            }
            self.reservation
                .try_resize(self.reader.memory_size() + self.rest.len())?;
        }
    }

    fn emit(&mut self) -> Result<Option<RecordBatch>> {
        let bad = self.reader.bad_records();
        self.bad_records.add(bad - self.bad_seen);
        self.bad_seen = bad;
        let batch = self.reader.flush()?;
        self.reservation
            .try_resize(self.reader.memory_size() + self.rest.len())?;
        Ok(batch)
    }

    /// The FAILFAST error for `bad`: its file, its line counted from the file's start, an
    /// excerpt, and the modes that would go on.
    fn bad_record_error(&self, bad: BadRecord) -> impl Future<Output = DataFusionError> + Send {
        let store = Arc::clone(&self.store);
        let location = self.location.clone();
        let name = self.name.clone();
        let first_line_start = self.reader.first_line_start();
        let compressed = self.compressed;
        async move { bad_record_error(bad, store, location, name, first_line_start, compressed).await }
    }
}

async fn bad_record_error(
    bad: BadRecord,
    store: Arc<dyn ObjectStore>,
    location: Path,
    name: String,
    first_line_start: Option<u64>,
    compressed: bool,
) -> DataFusionError {
    let line = match first_line_start {
        Some(start) if start > 0 => match newlines_before(&store, &location, start).await {
            Ok(before) => format!("line {}", before + bad.line),
            Err(_) => format!("the line at byte {}", bad.offset),
        },
        _ => format!("line {}", bad.line),
    };
    let at = if compressed {
        String::new()
    } else {
        format!(" (byte {})", bad.offset)
    };
    exec_datafusion_err!(
        "read_json_variant: bad JSON document in {name}, {line}{at}: {} in '{}'. Mode FAILFAST \
         stops at the first one; mode PERMISSIVE keeps such a row with a NULL variant, \
         DROPMALFORMED leaves it out",
        bad.message,
        bad.excerpt
    )
}

/// The newlines in the first `end` bytes of an (uncompressed) file: the line number where a
/// byte range begins, counted only when a bad document is reported.
async fn newlines_before(store: &Arc<dyn ObjectStore>, location: &Path, end: u64) -> Result<u64> {
    let options = GetOptions {
        range: Some(GetRange::Bounded(0..end)),
        ..Default::default()
    };
    let mut stream = store.get_opts(location, options).await?.into_stream();
    let mut count = 0u64;
    while let Some(chunk) = stream.next().await {
        count += memchr::memchr_iter(b'\n', &chunk?).count() as u64;
    }
    Ok(count)
}
