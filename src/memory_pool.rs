//! A memory pool for sessions with a memory limit: DataFusion's fair spill pool, with each
//! sort's merge of its spill files held to a share of the pool.
//!
//! Under [`FairSpillPool`] the consumers that can spill (the sorts) share what the others leave,
//! but a consumer that cannot spill takes whatever is free. A sort that has spilled merges its
//! spill files through such a consumer (`ExternalSorterMerge[p]`) and seats as many files as
//! the pool lets it reserve batches for, so the first partition to merge took the whole pool
//! and the next one was refused even the headroom its sort reserves up front
//! (`sort_spill_reservation_bytes`); with wide rows (variants of a few hundred bytes, 3-5 MB a
//! batch) that happened long before the data outgrew the pool. [`FairSortPool`] caps such a
//! merge at a quarter of its partition's share, `pool / (4 * partitions)` (never below the
//! headroom), leaving the rest to what runs beside it (the sort of the other partitions, the
//! final merge of the partitions, the writer's row group): the merge seats fewer files and
//! merges in more passes, as DataFusion's multi-level merge does when memory is short.
//!
//! The same consumer also merges a sort's runs held in memory (before they are spilled, or as
//! the sort's output when it never spilled), reserving each run's current batch again: as much
//! as the sort's data, which cannot be merged in more passes. So the cap is never below three
//! quarters of the most the sort of the same partition (`ExternalSorter[p]`, which reserves its
//! batches twice) has held since it started.
use std::collections::HashMap;
use std::fmt::{self, Display, Formatter};
use std::sync::Mutex;

use datafusion::common::{Result, resources_datafusion_err};
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};

/// The name DataFusion's sorts give the consumer holding their merge's memory (one per
/// partition: `ExternalSorterMerge[0]`, ...).
const SORT_MERGE_CONSUMER: &str = "ExternalSorterMerge";
/// The name of the consumer holding a sort's buffered batches (`ExternalSorter[0]`, ...).
const SORT_CONSUMER: &str = "ExternalSorter";

/// The partition part of a sort's consumer name (`[0]` of `ExternalSorter[0]`).
fn sort_partition(name: &str) -> Option<&str> {
    name.strip_prefix(SORT_CONSUMER)
        .filter(|rest| rest.starts_with('['))
}

/// The partition part of a sort merge's consumer name (`[0]` of `ExternalSorterMerge[0]`).
fn merge_partition(name: &str) -> Option<&str> {
    name.strip_prefix(SORT_MERGE_CONSUMER)
}

/// What the sort of one partition holds now and has held at most since it started.
#[derive(Debug, Default)]
struct SortHolds {
    now: usize,
    peak: usize,
}

/// [`FairSpillPool`] in which one sort's merge holds at most its share of the pool.
#[derive(Debug)]
pub struct FairSortPool {
    inner: FairSpillPool,
    pool_size: usize,
    merge_cap: usize,
    /// What the sorts hold and the most they have held, by partition (`[0]`, ...).
    sorts_hold: Mutex<HashMap<String, SortHolds>>,
}

impl FairSortPool {
    /// A pool of `pool_size` bytes for plans of `partitions` partitions whose sorts reserve
    /// `sort_spill_reservation_bytes` each for their merges (DataFusion's
    /// `datafusion.execution.sort_spill_reservation_bytes`).
    pub fn new(pool_size: usize, partitions: usize, sort_spill_reservation_bytes: usize) -> Self {
        let share = pool_size / (4 * partitions.max(1));
        FairSortPool {
            inner: FairSpillPool::new(pool_size),
            pool_size,
            merge_cap: share.max(sort_spill_reservation_bytes),
            sorts_hold: Mutex::new(HashMap::new()),
        }
    }

    /// Counts `grown` bytes more (or `shrunk` fewer) held by `consumer` when it is a sort's.
    fn track(&self, consumer: &MemoryConsumer, grown: usize, shrunk: usize) {
        if let Some(partition) = sort_partition(consumer.name()) {
            let mut sorts = self.sorts_hold.lock().unwrap_or_else(|e| e.into_inner());
            let holds = sorts.entry(partition.to_string()).or_default();
            holds.now = (holds.now + grown).saturating_sub(shrunk);
            holds.peak = holds.peak.max(holds.now);
        }
    }

    /// The most the merge of `partition` may hold: its share, or enough to merge in memory
    /// what the sort of the partition held.
    fn merge_limit(&self, partition: &str) -> usize {
        let sorts = self.sorts_hold.lock().unwrap_or_else(|e| e.into_inner());
        let peak = sorts.get(partition).map_or(0, |holds| holds.peak);
        self.merge_cap.max(peak / 4 * 3)
    }
}

impl Display for FairSortPool {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fair(pool_size: {}, sort merges up to {} each)",
            self.pool_size, self.merge_cap
        )
    }
}

impl MemoryPool for FairSortPool {
    fn name(&self) -> &str {
        "fair"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer);
        // a sort starts: the most it held is counted afresh
        if let Some(partition) = sort_partition(consumer.name()) {
            let mut sorts = self.sorts_hold.lock().unwrap_or_else(|e| e.into_inner());
            sorts.entry(partition.to_string()).or_default().peak = 0;
        }
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer)
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.inner.grow(reservation, additional);
        self.track(reservation.consumer(), additional, 0);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink);
        self.track(reservation.consumer(), 0, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let consumer = reservation.consumer();
        let wanted = reservation.size().saturating_add(additional);
        if !consumer.can_spill()
            && wanted > self.merge_cap
            && let Some(partition) = merge_partition(consumer.name())
        {
            let limit = self.merge_limit(partition);
            if wanted > limit {
                return Err(resources_datafusion_err!(
                    "Failed to allocate additional {additional} bytes for {} with {} bytes \
                     already allocated: a sort's merge holds at most {limit} bytes of the pool",
                    consumer.name(),
                    reservation.size()
                ));
            }
        }
        self.inner.try_grow(reservation, additional)?;
        self.track(consumer, additional, 0);
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.pool_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_merge_is_held_to_its_share_and_the_rest_is_left_for_others() {
        // 200 MB for two partitions: a merge may hold 25 MB
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(200_000_000, 2, 10_000_000));
        let merge = MemoryConsumer::new("ExternalSorterMerge[1]").register(&pool);
        merge.try_grow(25_000_000).unwrap();
        let err = merge.try_grow(1).unwrap_err().to_string();
        assert!(err.contains("at most 25000000 bytes"), "{err}");
        // the other partition's merge still gets its headroom, and another consumer that cannot
        // spill takes what is free, as in the fair pool
        let other = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        other.try_grow(10_000_000).unwrap();
        let writer = MemoryConsumer::new("ParquetSink").register(&pool);
        writer.try_grow(165_000_000).unwrap();
        assert!(writer.try_grow(1).is_err());
        assert_eq!(pool.reserved(), 200_000_000);
    }

    #[test]
    fn a_merge_of_runs_in_memory_may_hold_what_its_sort_held() {
        // the sort of partition 0 reserved 80 MB (its batches twice), then hands its runs to
        // the merge, which reserves their batches again: up to 60 MB, above the 25 MB share
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(200_000_000, 2, 10_000_000));
        let sort = MemoryConsumer::new("ExternalSorter[0]")
            .with_can_spill(true)
            .register(&pool);
        sort.try_grow(80_000_000).unwrap();
        sort.shrink(40_000_000);
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(60_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
        // another partition's sort does not lift partition 0's limit
        let other = MemoryConsumer::new("ExternalSorterMerge[1]").register(&pool);
        other.try_grow(25_000_000).unwrap();
        assert!(other.try_grow(1).is_err());
        // a new sort of partition 0 starts from nothing
        drop(sort);
        merge.free();
        let sort = MemoryConsumer::new("ExternalSorter[0]")
            .with_can_spill(true)
            .register(&pool);
        sort.try_grow(1_000).unwrap();
        merge.try_grow(25_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
    }

    #[test]
    fn a_merge_always_gets_the_headroom_sorts_reserve() {
        // a pool so small that the share is below the headroom: the headroom is the cap
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(32_000_000, 2, 5_000_000));
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(5_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
    }

    #[test]
    fn spillable_consumers_share_as_in_the_fair_pool() {
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(100, 2, 10));
        let a = MemoryConsumer::new("ExternalSorter[0]")
            .with_can_spill(true)
            .register(&pool);
        let b = MemoryConsumer::new("ExternalSorter[1]")
            .with_can_spill(true)
            .register(&pool);
        a.try_grow(50).unwrap();
        assert!(a.try_grow(1).is_err());
        b.try_grow(50).unwrap();
        assert_eq!(pool.reserved(), 100);
    }
}
