//! Automatic shredding inferred from a sample of a write's input, taken before the sink.
//!
//! A file's first rows make a poor sample when the input is sorted (`ORDER BY kind` puts every
//! `account` event first, and the paths of the rest go unshredded) and a changing one when it is
//! not (the sink receives its input's partitions interleaved as they come). So a [`SampleExec`]
//! in the plan keeps a sample of the rows on their way to the sink, which the sink infers from:
//!
//! - **under a sort** ([`SampleOf::WholeInput`]): a sort reads its whole input before it gives a
//!   row, so the sampler has seen every row before the sink sees the first;
//! - **otherwise** ([`SampleOf::PartitionHeads`]): the sampler sits as low as it can over the
//!   input's partitions and takes the first rows of each (an equal share of the bounds); the
//!   sink waits for every partition's share, holding what arrives meanwhile in the memory pool.
//!   Each partition's order is fixed (files, byte ranges, one stream's round robin), so the same
//!   input gives the same sample whatever order the partitions' rows arrive in.
//!
//! The sample is the rows whose hash (of their variant bytes) is smallest, at most the
//! session's `shred_sample_rows` rows and `shred_sample_bytes` bytes: the same rows give the
//! same sample, and so the same shredding, whatever order they arrive in. Where the sink cannot
//! use it (the sampler runs in another process, or an optimizer removed the sort, or the heads
//! take more than `shred_sample_bytes` to come), it samples its first rows as before; so does
//! each file of an unsorted partitioned write (`PARTITIONED BY`), whose rows are of one
//! partition value, unlike a sample of the whole write's.
use std::collections::hash_map::RandomState;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::task::{Context, Poll};

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
    RecordBatchStream,
};
use futures::Stream;

use crate::variant_array::{VariantArrayBuilder, VariantRows};

/// One sampled row: its hash, then its bytes (each sampled column's metadata and value, None
/// for SQL NULL). Ordered by hash first, so a max-heap drops the largest hash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SampledRow {
    hash: u64,
    values: Vec<Option<(Vec<u8>, Vec<u8>)>>,
}

impl SampledRow {
    fn size(&self) -> usize {
        self.values
            .iter()
            .map(|v| v.as_ref().map_or(0, |(m, v)| m.len() + v.len()))
            .sum()
    }
}

#[derive(Debug, Default)]
struct SampleState {
    rows: BinaryHeap<SampledRow>,
    bytes: usize,
    /// The sampled input's partitions (0 until one runs in this process), and how many are
    /// done: ended, or (heads) past their share.
    partitions: usize,
    done: usize,
    /// Whether an input column could not be read as unshredded variants.
    unusable: bool,
    /// Whether the sink has taken what it needs and the rows were let go (see `release`).
    released: bool,
    /// The sampled rows' bytes, in the memory pool of the first partition that ran.
    reservation: Option<MemoryReservation>,
}

/// What a [`SampleExec`] samples of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleOf {
    /// Every row (the sampler lies under a sort).
    WholeInput,
    /// The first rows of each partition, an equal share of the bounds each.
    PartitionHeads,
}

/// The shared sample of a write's input (see the module).
pub struct InputSample {
    id: u64,
    /// How many columns are sampled (the sink's automatic columns, one for one).
    width: usize,
    max_rows: usize,
    max_bytes: usize,
    of: SampleOf,
    state: Mutex<SampleState>,
}

impl fmt::Debug for InputSample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputSample({}, {} columns)", self.id, self.width)
    }
}

/// The samples of this process by id, so that a plan decoded here joins its sampler and its
/// sink again (in another process the sink finds no finished sample and samples its first rows).
static SAMPLES: LazyLock<Mutex<HashMap<u64, Weak<InputSample>>>> = LazyLock::new(Default::default);

impl InputSample {
    /// A new sample of `width` columns, bounded by `max_rows` and `max_bytes`.
    pub fn new(width: usize, max_rows: usize, max_bytes: usize, of: SampleOf) -> Arc<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = RandomState::new().hash_one(NEXT.fetch_add(1, Ordering::Relaxed));
        Self::registered(id, width, max_rows, max_bytes, of)
    }

    /// The sample `id` of this process, or a new one under that id.
    pub fn registered(
        id: u64,
        width: usize,
        max_rows: usize,
        max_bytes: usize,
        of: SampleOf,
    ) -> Arc<Self> {
        let mut samples = SAMPLES.lock().unwrap_or_else(|e| e.into_inner());
        samples.retain(|_, sample| sample.strong_count() > 0);
        if let Some(sample) = samples.get(&id).and_then(Weak::upgrade) {
            return sample;
        }
        let sample = Arc::new(InputSample {
            id,
            width,
            max_rows: max_rows.max(1),
            max_bytes: max_bytes.max(1),
            of,
            state: Mutex::new(SampleState::default()),
        });
        samples.insert(id, Arc::downgrade(&sample));
        sample
    }

    /// Its id (how plans name it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How many columns it samples.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Its bounds: rows, bytes.
    pub fn bounds(&self) -> (usize, usize) {
        (self.max_rows, self.max_bytes)
    }

    /// What it samples.
    pub fn of(&self) -> SampleOf {
        self.of
    }

    /// Whether its sampler runs in this process (once the sink has received a row: the
    /// partition that gave it has started, and with it the count of partitions is known).
    pub fn runs_here(&self) -> bool {
        self.state().partitions > 0
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SampleState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sampled rows of each column, as variant arrays in hash order, once every partition
    /// of the input is done (ended, or past its head); None before (or when a column could not
    /// be sampled).
    pub fn finished(&self) -> Result<Option<Vec<ArrayRef>>> {
        let state = self.state();
        if state.unusable
            || state.released
            || state.partitions == 0
            || state.done < state.partitions
        {
            return Ok(None);
        }
        let rows = state.rows.clone().into_sorted_vec();
        let mut arrays = Vec::with_capacity(self.width);
        for c in 0..self.width {
            let mut out = VariantArrayBuilder::with_capacity(rows.len());
            for row in &rows {
                match &row.values[c] {
                    Some((metadata, value)) => out.append(metadata, value),
                    None => out.append_null(),
                }
            }
            arrays.push(out.finish()?);
        }
        Ok(Some(arrays))
    }

    /// Lets the sampled rows go and gives their memory back to the pool, once the sink has
    /// inferred what it needs from them: [`Self::finished`] answers None from then on.
    pub fn release(&self) {
        let mut state = self.state();
        state.released = true;
        state.rows = BinaryHeap::new();
        state.bytes = 0;
        if let Some(reservation) = &mut state.reservation {
            reservation.free();
        }
    }

    /// Adds the rows of `batch` (its `indices` columns) that belong to the sample, of its first
    /// rows only those within `share` (what is left of a partition's head, which they use up);
    /// fails when the memory pool cannot hold the sample.
    fn add(&self, batch: &RecordBatch, indices: &[usize], share: Option<&mut Share>) -> Result<()> {
        let columns: Option<Vec<VariantRows<'_>>> = indices
            .iter()
            .map(|&i| VariantRows::borrowed(batch.column(i)))
            .collect();
        let Some(columns) = columns else {
            self.state().unusable = true;
            return Ok(());
        };
        let rows = match share {
            None => batch.num_rows(),
            Some(share) => {
                let mut rows = 0;
                while rows < batch.num_rows() && !share.used_up() {
                    let size: usize = (columns.iter())
                        .filter_map(|c| c.bytes(rows).map(|(m, v)| m.len() + v.len()))
                        .sum();
                    share.rows -= 1;
                    share.bytes = share.bytes.saturating_sub(size.max(1));
                    rows += 1;
                }
                rows
            }
        };
        let hashes: Vec<u64> = (0..rows)
            .map(|row| {
                let mut h = Hasher::default();
                for column in &columns {
                    match column.bytes(row) {
                        Some((metadata, value)) => {
                            h.write(metadata);
                            h.write(value);
                        }
                        None => h.write(&[0xFF]),
                    }
                }
                h.finish()
            })
            .collect();
        let mut state = self.state();
        if state.released {
            return Ok(());
        }
        for (row, hash) in hashes.into_iter().enumerate() {
            let full = state.rows.len() >= self.max_rows;
            if full && state.rows.peek().is_some_and(|max| hash >= max.hash) {
                continue;
            }
            let sampled = SampledRow {
                hash,
                values: columns
                    .iter()
                    .map(|c| c.bytes(row).map(|(m, v)| (m.to_vec(), v.to_vec())))
                    .collect(),
            };
            state.bytes += sampled.size();
            state.rows.push(sampled);
            while state.rows.len() > self.max_rows
                || (state.bytes > self.max_bytes && state.rows.len() > 1)
            {
                let dropped = state.rows.pop().expect("not empty");
                state.bytes -= dropped.size();
            }
        }
        let bytes = state.bytes;
        match &mut state.reservation {
            Some(reservation) => reservation.try_resize(bytes),
            None => Ok(()),
        }
    }
}

/// What is left of a partition's head (its share of the sample's bounds).
#[derive(Debug, Clone, Copy)]
struct Share {
    rows: usize,
    bytes: usize,
}

impl Share {
    fn used_up(&self) -> bool {
        self.rows == 0 || self.bytes == 0
    }
}

/// A fast hash of bytes, the same in every process (8 bytes at a time, mixed as wyhash mixes).
#[derive(Default)]
struct Hasher(u64);

impl Hasher {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn mix(&mut self, word: u64) {
        let m = u128::from(self.0 ^ word) * u128::from(Self::K);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.mix(u64::from_le_bytes(tail) ^ ((bytes.len() as u64) << 56));
    }

    fn finish(&self) -> u64 {
        let mut h = Hasher(self.0);
        h.mix(Self::K);
        h.0
    }
}

/// Passes its input on unchanged, adding its rows to a [`InputSample`].
#[derive(Debug)]
pub struct SampleExec {
    input: Arc<dyn ExecutionPlan>,
    sample: Arc<InputSample>,
    /// The sampled columns' names and indexes in the input.
    names: Vec<String>,
    indices: Vec<usize>,
}

impl SampleExec {
    /// Samples the columns `names` of `input` into `sample`; None when one is missing.
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        sample: Arc<InputSample>,
        names: Vec<String>,
    ) -> Option<Self> {
        let schema = input.schema();
        let indices = names
            .iter()
            .map(|name| schema.index_of(name).ok())
            .collect::<Option<Vec<_>>>()?;
        (indices.len() == sample.width).then_some(SampleExec {
            input,
            sample,
            names,
            indices,
        })
    }

    /// The sampled columns' names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The sample it adds to.
    pub fn sample(&self) -> &Arc<InputSample> {
        &self.sample
    }

    /// Its input.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for SampleExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = match self.sample.of {
            SampleOf::WholeInput => "whole input",
            SampleOf::PartitionHeads => "partition heads",
        };
        write!(
            f,
            "VariantSampleExec: columns=[{}], of={of}",
            self.names.join(", ")
        )
    }
}

impl ExecutionPlan for SampleExec {
    fn name(&self) -> &str {
        "VariantSampleExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children.pop().expect("one child");
        match SampleExec::try_new(
            Arc::clone(&input),
            Arc::clone(&self.sample),
            self.names.clone(),
        ) {
            Some(exec) => Ok(Arc::new(exec)),
            // (the new input lacks a sampled column: no sample, the sink samples its first rows)
            None => Ok(input),
        }
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let partitions = self.input.output_partitioning().partition_count();
        {
            let mut state = self.sample.state();
            state.partitions = partitions;
            if state.reservation.is_none() {
                state.reservation =
                    Some(MemoryConsumer::new("VariantSampleExec").register(context.memory_pool()));
            }
        }
        let share = (self.sample.of == SampleOf::PartitionHeads).then(|| Share {
            rows: self.sample.max_rows.div_ceil(partitions.max(1)),
            bytes: self.sample.max_bytes.div_ceil(partitions.max(1)),
        });
        let input = self.input.execute(partition, context)?;
        Ok(Box::pin(SampleStream {
            input,
            sample: Arc::clone(&self.sample),
            indices: self.indices.clone(),
            share,
            done: false,
        }))
    }
}

struct SampleStream {
    input: SendableRecordBatchStream,
    sample: Arc<InputSample>,
    indices: Vec<usize>,
    /// What is left of the partition's head (heads only).
    share: Option<Share>,
    /// Whether the partition is done (ended, or past its head).
    done: bool,
}

impl SampleStream {
    fn finish(&mut self) {
        if !self.done {
            self.done = true;
            self.sample.state().done += 1;
        }
    }
}

impl Stream for SampleStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.input.as_mut().poll_next(cx);
        match &next {
            Poll::Ready(Some(Ok(batch))) if !self.done => {
                let this = &mut *self;
                if let Err(e) = this.sample.add(batch, &this.indices, this.share.as_mut()) {
                    return Poll::Ready(Some(Err(e)));
                }
                if self.share.is_some_and(|share| share.used_up()) {
                    self.finish();
                }
            }
            Poll::Ready(None) => self.finish(),
            _ => {}
        }
        next
    }
}

impl RecordBatchStream for SampleStream {
    fn schema(&self) -> SchemaRef {
        self.input.schema()
    }
}

/// A write's input, and the sample taken of it (if any).
pub type SampledInput = (Arc<dyn ExecutionPlan>, Option<Arc<InputSample>>);

/// `input` (a write's input) with a [`SampleExec`] of the columns `columns`, and the sample:
/// under its sort where a sort reads the whole input before the sink (only projections that
/// keep the columns, merges and repartitions lie above it), else over its partitions, below the
/// merges, repartitions and projections that keep the columns, when `heads`. `input` unchanged
/// and None when there are no columns, or they are not found. The physical optimizer may move
/// the sort; [`SampleUnderSort`] puts the sample back under it.
pub fn sample_input(
    input: Arc<dyn ExecutionPlan>,
    columns: Vec<String>,
    max_rows: usize,
    max_bytes: usize,
    heads: bool,
) -> Result<SampledInput> {
    if columns.is_empty() {
        return Ok((input, None));
    }
    let modes: &[SampleOf] = if heads {
        &[SampleOf::WholeInput, SampleOf::PartitionHeads]
    } else {
        &[SampleOf::WholeInput]
    };
    for &of in modes {
        let sample = InputSample::new(columns.len(), max_rows, max_bytes, of);
        if let Some(plan) = place(&input, columns.clone(), &sample)? {
            return Ok((plan, Some(sample)));
        }
    }
    Ok((input, None))
}

/// `plan` with a sampler of `columns` into `sample` placed, through nodes that keep the
/// columns: under the first sort below it (whole input; None when there is none), or over the
/// first node that is none of those (heads).
fn place(
    plan: &Arc<dyn ExecutionPlan>,
    columns: Vec<String>,
    sample: &Arc<InputSample>,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let rebuild = |plan: &Arc<dyn ExecutionPlan>, child: Arc<dyn ExecutionPlan>| {
        Arc::clone(plan).replace_children(
            vec![child],
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    };
    // (heads: a sampler over `plan` itself)
    let here = |columns: Vec<String>| -> Option<Arc<dyn ExecutionPlan>> {
        (sample.of == SampleOf::PartitionHeads)
            .then(|| SampleExec::try_new(Arc::clone(plan), Arc::clone(sample), columns))
            .flatten()
            .map(|exec| Arc::new(exec) as _)
    };
    if sample.of == SampleOf::WholeInput && plan.downcast_ref::<SortExec>().is_some() {
        let child = Arc::clone(plan.children()[0]);
        let Some(sampler) = SampleExec::try_new(child, Arc::clone(sample), columns) else {
            return Ok(None);
        };
        return Ok(Some(rebuild(plan, Arc::new(sampler))?));
    }
    let below = if let Some(projection) = plan.downcast_ref::<ProjectionExec>() {
        // the sampled columns by their names below the projection (plain columns only)
        let renamed = columns
            .iter()
            .map(|name| {
                projection.expr().iter().find_map(|p| {
                    (p.alias == *name)
                        .then(|| {
                            p.expr
                                .downcast_ref::<Column>()
                                .map(|c| c.name().to_string())
                        })
                        .flatten()
                })
            })
            .collect::<Option<Vec<_>>>();
        match renamed {
            Some(renamed) => renamed,
            None => return Ok(here(columns)),
        }
    } else if plan.downcast_ref::<CoalescePartitionsExec>().is_some()
        || plan.downcast_ref::<SortPreservingMergeExec>().is_some()
        || plan.downcast_ref::<RepartitionExec>().is_some()
        || plan.downcast_ref::<SampleExec>().is_some()
    {
        columns.clone()
    } else {
        return Ok(here(columns));
    };
    let child = Arc::clone(plan.children()[0]);
    match place(&child, below, sample)? {
        Some(child) => Ok(Some(rebuild(plan, child)?)),
        None => Ok(here(columns)),
    }
}

/// A physical optimizer rule, run after DataFusion's: moves each [`SampleExec`] under the sort
/// below it, where DataFusion's sort rules (which take a sort apart and put it together again
/// around its input's partitions) may have left it above.
#[derive(Debug, Default)]
pub struct SampleUnderSort;

impl PhysicalOptimizerRule for SampleUnderSort {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_down(|node| {
            let Some(sampler) = node.downcast_ref::<SampleExec>() else {
                return Ok(Transformed::no(node));
            };
            if sampler.sample.of != SampleOf::WholeInput
                || sampler.input.downcast_ref::<SortExec>().is_none()
            {
                return Ok(Transformed::no(node));
            }
            let moved = place(&sampler.input, sampler.names.clone(), &sampler.sample)?;
            Ok(match moved {
                Some(plan) => Transformed::yes(plan),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "variant_sample_under_sort"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::parse_json::json_variants;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryPool};

    /// A batch of one variant column holding `{"i": <i>}` for each i in `rows`.
    fn batch(rows: std::ops::Range<usize>) -> RecordBatch {
        let column = json_variants(rows.map(|i| format!(r#"{{"i": {i}}}"#)));
        let schema = Schema::new(vec![Field::new("v", column.data_type().clone(), true)]);
        RecordBatch::try_new(Arc::new(schema), vec![column]).unwrap()
    }

    #[test]
    fn a_released_sample_gives_its_rows_back_to_the_pool() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1 << 20));
        let sample = InputSample::new(1, 100, 1 << 20, SampleOf::WholeInput);
        {
            let mut state = sample.state();
            state.reservation = Some(MemoryConsumer::new("VariantSampleExec").register(&pool));
            (state.partitions, state.done) = (1, 1);
        }
        sample.add(&batch(0..10), &[0], None).unwrap();
        // each row: its metadata (one key, "i": 5 bytes) and its value (an object of one
        // field holding an int8: 5 + 2 bytes)
        assert_eq!(pool.reserved(), 10 * (5 + 7));
        assert_eq!(sample.finished().unwrap().unwrap()[0].len(), 10);

        sample.release();
        assert_eq!(pool.reserved(), 0);
        assert!(sample.finished().unwrap().is_none());
        // (rows that come after are not kept)
        sample.add(&batch(10..20), &[0], None).unwrap();
        assert_eq!(pool.reserved(), 0);
    }
}
