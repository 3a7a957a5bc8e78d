//! Memory goes through DataFusion's memory pool: under a small limit, a large COPY of variants
//! and a large aggregation over them fail with the pool's resources-exhausted error (the process
//! neither aborts nor grows past the limit); the same statements run without the limit.
mod common;

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result as DFResult;
use datafusion::datasource::MemTable;
use datafusion::execution::memory_pool::{
    GreedyMemoryPool, MemoryLimit, MemoryPool, MemoryReservation, TrackConsumersPool,
};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

fn ctx(memory_limit: Option<usize>) -> SessionContext {
    let mut runtime = RuntimeEnvBuilder::new();
    if let Some(limit) = memory_limit {
        runtime = runtime.with_memory_pool(Arc::new(TrackConsumersPool::new(
            GreedyMemoryPool::new(limit),
            std::num::NonZeroUsize::new(3).unwrap(),
        )));
    }
    let ctx = SessionContext::new_with_config_rt(
        SessionConfig::new().with_target_partitions(2),
        runtime.build_arc().unwrap(),
    );
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx
}

/// 300,000 events of about 100 bytes of JSON each.
const EVENTS: &str = "SELECT i % 1000 AS k, parse_json('{\"id\":' || i || ',\"user\":\"u' || (i % 977) \
     || '\",\"tags\":[\"a\",\"b\"],\"score\":' || (i * 7 % 1000) || '.5,\"ok\":true}') AS v \
     FROM generate_series(1, 300000) t(i)";

/// The rows of `sql`, computed without a limit.
async fn rows_of(sql: &str) -> Vec<RecordBatch> {
    ctx(None).sql(sql).await.unwrap().collect().await.unwrap()
}

/// A session with `batches` as the in-memory table `name`, so that under a limit only what the
/// statement itself builds (the sink, the accumulators, a kernel's output) meets the pool.
fn with_table(memory_limit: Option<usize>, name: &str, batches: &[RecordBatch]) -> SessionContext {
    let limited = ctx(memory_limit);
    let table = MemTable::try_new(batches[0].schema(), vec![batches.to_vec()]).unwrap();
    limited.register_table(name, Arc::new(table)).unwrap();
    limited
}

async fn outcome(ctx: &SessionContext, sql: &str) -> Result<(), String> {
    match ctx.sql(sql).await {
        Ok(df) => df.collect().await.map(|_| ()),
        Err(e) => Err(e),
    }
    .map_err(|e| e.to_string())
}

/// The sink reserves what its writers buffer (the row group in progress, the rows sampled for
/// automatic shredding, and the object store's buffer, at least 256 KiB for a local file): a
/// pool of 256 KiB cannot hold them, and the write fails with the pool's error.
#[tokio::test]
async fn a_large_copy_fails_within_the_memory_limit() {
    let dir = common::scratch_dir("memory_limits", "copy");
    let events = rows_of(EVENTS).await;
    // Unshredded, and shredded automatically (the sink then also holds the sampled rows).
    for (name, options) in [
        ("plain", " OPTIONS ('variant.shred.v' 'none')"),
        ("auto", ""),
    ] {
        let copy = format!(
            "COPY (SELECT * FROM events) TO '{}/{name}.parquet' STORED AS PARQUET{options}",
            dir.display()
        );
        let e = outcome(&with_table(Some(256 << 10), "events", &events), &copy)
            .await
            .unwrap_err();
        assert!(e.contains("Resources exhausted"), "{e}");
        assert!(
            e.contains("allocation failed for VariantParquetSink"),
            "{e}"
        );
        outcome(&with_table(None, "events", &events), &copy)
            .await
            .unwrap();
    }
    // Nothing of the failed writes is left (see atomic_writes.rs): only the successful files.
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["auto.parquet", "plain.parquet"]);
}

/// The encoded bytes the object store's writer holds before it uploads them are reserved too,
/// and under a limit they keep to the writer's sixteenth of the pool (for a local file; remote
/// stores keep a 5 MiB part): with row groups of 4096 rows the writer's own buffers stay small,
/// and the 14 MB file is written under 8 MiB with `objectstore_writer_buffer_size` at its
/// 10 MiB default (which, held whole, did not fit), as with it set to 1 MiB.
#[tokio::test]
async fn the_object_stores_buffer_keeps_to_the_pool() {
    let dir = common::scratch_dir("memory_limits", "store_buffer");
    let events = rows_of(EVENTS).await;
    let copy = |name: &str| {
        format!(
            "COPY (SELECT * FROM events) TO '{}/{name}.parquet' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' 'none', 'format.compression' 'uncompressed', \
             'format.max_row_group_size' '4096')",
            dir.display()
        )
    };
    let limited = with_table(Some(8 << 20), "events", &events);
    outcome(&limited, &copy("default")).await.unwrap();
    outcome(
        &limited,
        "SET datafusion.execution.objectstore_writer_buffer_size = 1048576",
    )
    .await
    .unwrap();
    outcome(&limited, &copy("small_buffer")).await.unwrap();
    for name in ["default", "small_buffer"] {
        let written = std::fs::metadata(dir.join(format!("{name}.parquet"))).unwrap();
        assert!(written.len() > 12 << 20, "{name}: {}", written.len());
    }
}

/// Under a limit the sink ends a row group early rather than fail: its row group in progress and
/// the batches on their way to the writer hold at most a sixteenth of the pool each (a batch
/// waits for those ahead of it rather than fail), so that what feeds the sink keeps room. The
/// 300,000 variants, uncompressed and unshredded, make 3 row groups of the default 131,072 rows
/// (some 4.7 MB each) unlimited. Under 4 MiB (the store's buffer takes 256 KiB; the in-memory
/// table's batches are not counted) each row group ends at its 256 KiB share and the file holds
/// every row; a sink that kept the default row groups would be refused its next batch.
#[tokio::test]
async fn a_copy_under_a_small_limit_ends_its_row_groups_early() {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = common::scratch_dir("memory_limits", "row_groups");
    let events = rows_of(EVENTS).await;
    let row_groups = |name: &str| {
        let file = std::fs::File::open(dir.join(format!("{name}.parquet"))).unwrap();
        SerializedFileReader::new(file)
            .unwrap()
            .metadata()
            .num_row_groups()
    };
    for (name, limit) in [("unlimited", None), ("limited", Some(4 << 20))] {
        let limited = with_table(limit, "events", &events);
        let copy = format!(
            "COPY (SELECT * FROM events) TO '{}/{name}.parquet' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' 'none', 'format.compression' 'uncompressed')",
            dir.display()
        );
        outcome(&limited, &copy).await.unwrap();
        let read = ctx(None);
        let file = dir.join(format!("{name}.parquet"));
        read.register_parquet("written", file.to_str().unwrap(), Default::default())
            .await
            .unwrap();
        let sums = common::run(&read, "SELECT count(*), sum(v:id::bigint) FROM written").await;
        let column = |i: usize| sums[0].column(i).as_primitive::<Int64Type>().value(0);
        // ids 1..=300,000 sum to 300,000 * 300,001 / 2
        assert_eq!((column(0), column(1)), (300_000, 45_000_150_000), "{name}");
    }
    // 300,000 rows at 131,072 a row group
    assert_eq!(row_groups("unlimited"), 3);
    assert!(row_groups("limited") > 3, "{}", row_groups("limited"));
}

/// An aggregation with a thousand groups of variant schemas: its accumulators report their size
/// (without rendering their schema), and the pool refuses what does not fit.
#[tokio::test]
async fn a_large_aggregation_fails_within_the_memory_limit() {
    let agg = "SELECT k, schema_of_variant_agg(v) FROM events GROUP BY k";
    let events = rows_of(EVENTS).await;
    let e = outcome(&with_table(Some(256 << 10), "events", &events), agg)
        .await
        .unwrap_err();
    assert!(e.contains("Resources exhausted"), "{e}");
    // (the aggregation's own reservation failed: its stream is named after the phrase)
    let failed = e.split("allocation failed for ").nth(1).unwrap_or_default();
    assert!(
        failed
            .split(' ')
            .next()
            .unwrap_or_default()
            .contains("HashAggregateStream"),
        "{e}"
    );
    outcome(&with_table(None, "events", &events), agg)
        .await
        .unwrap();
}

/// The scalar kernels' outputs go through the pool too (DataFusion gives them no task context;
/// `register_all` carries the pool in the session's options). An output that does not fit is the
/// pool's error naming the function; the same queries run without the limit.
#[tokio::test]
async fn a_kernels_output_must_fit_the_memory_limit() {
    // variant_set pads each row's array to 100,001 elements (about 400 KB): 64 rows do not fit
    // in 4 MiB
    let padded = "SELECT sum(length(to_json(variant_set(parse_json('[]'), '$[100000]', i)))) \
                  FROM generate_series(1, 64) t(i)";
    let e = outcome(&ctx(Some(4 << 20)), padded).await.unwrap_err();
    assert!(e.contains("Resources exhausted"), "{e}");
    assert!(e.contains("variant_set"), "{e}");
    outcome(&ctx(None), padded).await.unwrap();

    // to_json over a table the pool does not see (in memory): 64 strings of 100,000 characters
    // as JSON text, 6.4 MB in one batch
    let big = rows_of(
        "SELECT parse_json('\"' || repeat('x', 100000) || '\"') AS v FROM generate_series(1, 64)",
    )
    .await;
    for (limit, fails) in [(Some(4 << 20), true), (None, false)] {
        let limited = with_table(limit, "big", &big);
        let result = outcome(&limited, "SELECT length(to_json(v)) FROM big").await;
        match result {
            Err(e) if fails => {
                assert!(e.contains("Resources exhausted"), "{e}");
                assert!(e.contains("to_json"), "{e}");
            }
            other => assert_eq!(other.is_err(), fails, "{other:?}"),
        }
    }
}

/// A pool that remembers the largest reservation each consumer held (by the consumer's name).
#[derive(Debug)]
struct PeakPool {
    inner: GreedyMemoryPool,
    peaks: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

impl PeakPool {
    fn note(&self, reservation: &MemoryReservation, additional: usize) {
        let name = reservation.consumer().name().to_string();
        let mut peaks = self.peaks.lock().unwrap();
        let peak = peaks.entry(name).or_default();
        *peak = (*peak).max(reservation.size() + additional);
    }

    /// The largest reservation a consumer whose name starts with `prefix` held.
    fn peak(&self, prefix: &str) -> usize {
        let peaks = self.peaks.lock().unwrap();
        (peaks.iter())
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(_, &peak)| peak)
            .max()
            .unwrap_or(0)
    }
}

impl std::fmt::Display for PeakPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "peak({})", self.inner)
    }
}

impl MemoryPool for PeakPool {
    fn name(&self) -> &str {
        "peak"
    }
    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.note(reservation, additional);
        self.inner.grow(reservation, additional)
    }
    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink)
    }
    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> DFResult<()> {
        self.inner.try_grow(reservation, additional)?;
        self.note(reservation, additional);
        Ok(())
    }
    fn reserved(&self) -> usize {
        self.inner.reserved()
    }
    fn memory_limit(&self) -> MemoryLimit {
        self.inner.memory_limit()
    }
}

/// The Parquet writer keeps the metadata of every row group it has written (each column chunk's,
/// and its page index) until it writes the footer; the sink reserves it, and under a limit lets
/// a row group grow to the footer's size, so that small row groups do not fill the pool with
/// their metadata. 100,000 events of 40 integer fields, shredded (82 leaves), uncompressed, under
/// 8 MiB: a row group ends at its 512 KiB share at first, and at more than twice that by the
/// end. The file's metadata as the parquet crate measures it once read back
/// (`ParquetMetaData::memory_size`, page index included, 2.2 MB) was held in the pool: the
/// sink's largest reservation is at least that. Before, the sink reserved its row group and the
/// store's buffer only (870 KB at most here), and the footer of its row groups of one share
/// each took 3.8 MB.
#[tokio::test]
async fn a_copys_footer_is_held_in_the_pool_and_row_groups_grow_with_it() {
    use datafusion::parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    let dir = common::scratch_dir("memory_limits", "footer");
    let fields: Vec<String> = (0..40)
        .map(|f| format!("'\"f{f}\":' || (i * {} % 100003)", f + 1))
        .collect();
    let wide = format!(
        "SELECT parse_json('{{' || {} || '}}') AS v FROM generate_series(1, 100000) t(i)",
        fields.join(" || ',' || ")
    );
    // (in batches of 1024 rows, 330 KB each)
    let generate = SessionContext::new_with_config(SessionConfig::new().with_batch_size(1024));
    datafusion_parquet_variant::register_all(&generate).unwrap();
    let events = common::run(&generate, &wide).await;
    let pool = Arc::new(PeakPool {
        inner: GreedyMemoryPool::new(8 << 20),
        peaks: Default::default(),
    });
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(Arc::clone(&pool) as Arc<dyn MemoryPool>)
        .build_arc()
        .unwrap();
    let limited =
        SessionContext::new_with_config_rt(SessionConfig::new().with_target_partitions(2), runtime);
    datafusion_parquet_variant::register_all(&limited).unwrap();
    let table = MemTable::try_new(events[0].schema(), vec![events]).unwrap();
    limited.register_table("events", Arc::new(table)).unwrap();
    let path = dir.join("wide.parquet");
    let copy = format!(
        "COPY (SELECT * FROM events) TO '{}' STORED AS PARQUET \
         OPTIONS ('format.compression' 'uncompressed')",
        path.display()
    );
    outcome(&limited, &copy).await.unwrap();

    let file = std::fs::File::open(&path).unwrap();
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&file)
        .unwrap();
    assert_eq!(metadata.file_metadata().num_rows(), 100_000);
    // the variant's metadata and value, and each field's value and typed_value
    assert_eq!(metadata.file_metadata().schema_descr().num_columns(), 82);
    let footer = metadata.memory_size();
    let sink = pool.peak("VariantParquetSink");
    assert!(
        sink >= footer,
        "the sink held {sink}, the footer takes {footer}"
    );
    let sizes: Vec<i64> = (metadata.row_groups().iter())
        .map(|r| r.total_byte_size())
        .collect();
    let (first, last) = (sizes[0], sizes[sizes.len() - 2]);
    assert!(first < 3 << 20, "{sizes:?}");
    assert!(last > 2 * first, "{sizes:?}");
}
