//! A memory pool for sessions with a memory limit: DataFusion's fair spill pool, with each
//! sort's merge of its spill files held to a share of the pool.
//!
//! Under [`FairSpillPool`] the consumers that can spill (the sorts) share what the others leave,
//! but a consumer that cannot spill takes whatever is free. A sort that has spilled merges its
//! spill files through such a consumer (`ExternalSorterMerge[p]`) and seats as many files as
//! the pool lets it reserve a batch for, so the first partition to merge took the whole pool
//! and the next one was refused even the headroom its sort reserves up front
//! (`sort_spill_reservation_bytes`); with wide rows (variants of a few hundred bytes, 3-5 MB a
//! batch) that happened long before the data outgrew the pool. [`FairSortPool`] caps each such
//! merge at a quarter of its partition's share, `pool / (4 * partitions)` (never below the
//! headroom), leaving the rest of the share to what runs beside it (the sort of the next
//! partition, the final merge of the partitions, the writer's row group): the merge seats fewer
//! files and merges in more passes, as DataFusion's multi-level merge does when memory is short.
use std::fmt::{self, Display, Formatter};

use datafusion::common::{Result, resources_datafusion_err};
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};

/// The name DataFusion's sorts give the consumer holding their merge's memory (one per
/// partition: `ExternalSorterMerge[0]`, ...).
const SORT_MERGE_CONSUMER: &str = "ExternalSorterMerge";

/// [`FairSpillPool`] in which one sort's merge holds at most its share of the pool.
#[derive(Debug)]
pub struct FairSortPool {
    inner: FairSpillPool,
    pool_size: usize,
    merge_cap: usize,
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
        }
    }

    /// The most one sort's merge may hold.
    pub fn merge_cap(&self) -> usize {
        self.merge_cap
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
        self.inner.register(consumer)
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer)
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.inner.grow(reservation, additional)
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink)
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let consumer = reservation.consumer();
        if !consumer.can_spill()
            && consumer.name().starts_with(SORT_MERGE_CONSUMER)
            && reservation.size().saturating_add(additional) > self.merge_cap
        {
            return Err(resources_datafusion_err!(
                "Failed to allocate additional {additional} bytes for {} with {} bytes already \
                 allocated: a sort's merge holds at most {} bytes of the pool",
                consumer.name(),
                reservation.size(),
                self.merge_cap
            ));
        }
        self.inner.try_grow(reservation, additional)
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
