//! A memory pool for sessions with a memory limit: DataFusion's fair spill pool, with each
//! sort's merge of its spill files held to a share of the pool.
//!
//! Under DataFusion's `FairSpillPool` the consumers that can spill (the sorts) share what the others leave,
//! but a consumer that cannot spill takes whatever is free. A sort that has spilled merges its
//! spill files through such a consumer (`ExternalSorterMerge[p]`) and seats as many files as
//! the pool lets it reserve batches for, so the first partition to merge took the whole pool
//! and the next one was refused even the headroom its sort reserves up front
//! (`sort_spill_reservation_bytes`); with wide rows (variants of a few hundred bytes, 3-5 MB a
//! batch) that happened long before the data outgrew the pool. [`FairSortPool`] caps such a
//! merge at a quarter of its partition's share, `pool / (4 * partitions)` (never below the
//! headroom), leaving the rest to what runs beside it (the sort of the other partitions, the
//! final merge of the partitions, the writer's row group): the merge seats fewer files and
//! merges in more passes, as DataFusion's multi-level merge does when memory is short. In a
//! large pool, where what runs beside the merges needs a small part, the cap is half of what a
//! partition's share leaves after the writer's eighth and 128 MiB: 864 MiB a merge under 4 GiB
//! and two partitions, against 512 MiB, so a pass seats some 45 spill files of 8,192 JSONBench
//! events (each reserves two batches, twice) instead of 27, where the 100M load's sorts spill 31
//! files each.
//!
//! The same consumer also merges a sort's runs held in memory (before they are spilled, or as
//! the sort's output when it never spilled), reserving each run's current batch again: as much
//! as the sort's data (and the rows of their keys), which cannot be merged in more passes. So
//! while it merges runs in memory the cap is never below what the sort of the same partition
//! (`ExternalSorter[p]`, which reserves its batches twice) held when its merge began. Such a
//! merge starts from nothing (the sort frees its merge headroom first, and its runs wait in
//! channels unaccounted); a merge of spill files starts from the headroom, which the sort reserves
//! again after its last spill, and keeps to the cap. (Before, it took the exemption too: the two
//! partitions' merges of their spill files took three quarters of the pool and starved the final
//! merge of the partitions, and the sorted load of the 2M JSONBench events failed under 96 MiB.)
//!
//! And consumers that can spill never take the pool's last eighth. A spiller keeps what it grew
//! to while the share it grew within shrinks (a merge of another partition growing), until its
//! next growth makes it spill; the fair pool let spillers fill the pool to the last byte, and a
//! merge starting meanwhile was refused its first bytes (a 100M sorted load under 4 GiB failed
//! so, one run in two).
//!
//! [`fit_to_pool`] sizes a session's batches and its sorts' merge headroom to such a pool: with
//! DataFusion's defaults a partition's sort needs some 28 MiB of wide rows before it can spill.
use std::collections::HashMap;
use std::fmt::{self, Display, Formatter};
use std::sync::Mutex;

use datafusion::common::{DataFusionError, Result, resources_datafusion_err};
use datafusion::config::{ConfigNonZeroUsize, ConfigOptions};
use datafusion::execution::memory_pool::{
    MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};

/// The widest rows [`fit_to_pool`] sizes batches for: a KiB, twice a JSONBench event as a variant.
const PLANNED_ROW_BYTES: usize = 1 << 10;
/// The fewest rows [`fit_to_pool`] leaves a batch.
const FEWEST_BATCH_ROWS: usize = 128;

/// Lowers (never raises) a session's batch size and its sorts' merge headroom
/// (`datafusion.execution.batch_size`, `sort_spill_reservation_bytes`) to what a pool of
/// `pool_size` bytes shared by `target_partitions` sorts holds with wide variant rows.
///
/// A sort reserves each batch twice and keeps its merge headroom beside them, so with
/// DataFusion's defaults (8,192 rows, some 4 MB of JSONBench's events, and 10 MiB) a partition
/// needs about 28 MiB before it can spill at all, and the final merge of the partitions and the
/// writer need room beside the sorts. Fitted, a partition's share `pool_size / target_partitions`
/// holds a batch of 1 KiB rows in an eighth of it (two batches, each reserved twice, in half) and
/// the headroom in a quarter, so a sorted `COPY` completes with a few MiB a partition (4 MiB:
/// 512 rows and 1 MiB). A share of 64 MiB or more keeps DataFusion's batches; 40 MiB or more its
/// headroom.
pub fn fit_to_pool(options: &mut ConfigOptions, pool_size: usize) {
    let execution = &mut options.execution;
    let share = pool_size / execution.target_partitions.max(1);
    let rows = (share / 8 / PLANNED_ROW_BYTES).max(FEWEST_BATCH_ROWS);
    if rows < execution.batch_size.get() {
        execution.batch_size = ConfigNonZeroUsize::try_new(rows).expect("at least 128 rows");
    }
    execution.sort_spill_reservation_bytes = execution.sort_spill_reservation_bytes.min(share / 4);
}

/// What a large pool keeps from the sorts' merges of their spill files, beside the writer's
/// eighth: the final merge of the partitions (their batches, reserved twice) and the object
/// store's buffer, with room to spare.
const BESIDE_THE_MERGES: usize = 128 << 20;

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

/// What the merge of one partition's sort holds now, and what the sort held in runs when the
/// merge last held nothing: the runs it merges in memory, which it may reserve again. A sort
/// frees its merge's headroom before it merges its runs, and reserves it again (a growth from
/// nothing by the headroom) before it merges spill files: those count no runs.
#[derive(Debug, Default)]
struct MergeHolds {
    now: usize,
    runs: usize,
}

/// The pool's accounts.
#[derive(Debug, Default)]
struct Accounts {
    /// Consumers that can spill, registered.
    spillers: usize,
    /// Bytes held by consumers that can spill, and by the others.
    spillable: usize,
    unspillable: usize,
    /// What the sorts hold, by partition (`[0]`, ...).
    sorts: HashMap<String, SortHolds>,
    /// What the sorts' merges hold, by partition.
    merges: HashMap<String, MergeHolds>,
}

impl Accounts {
    /// Counts `bytes` more for `consumer`; `headroom` is what the sorts reserve for their merges.
    fn add(&mut self, consumer: &MemoryConsumer, bytes: usize, headroom: usize) {
        if consumer.can_spill() {
            self.spillable += bytes;
        } else {
            self.unspillable += bytes;
        }
        if let Some(partition) = sort_partition(consumer.name()) {
            let holds = self.sorts.entry(partition.to_string()).or_default();
            holds.now += bytes;
            holds.peak = holds.peak.max(holds.now);
        } else if let Some(partition) = merge_partition(consumer.name()) {
            let runs = self.runs_to_merge(partition, bytes, headroom);
            let holds = self.merges.entry(partition.to_string()).or_default();
            holds.runs = runs;
            holds.now += bytes;
        }
    }

    /// The bytes of runs in memory the merge of a partition's sort merges, as it grows by `bytes`
    /// (a merge never seen before: the most its sort held).
    fn runs_to_merge(&self, partition: &str, bytes: usize, headroom: usize) -> usize {
        match self.merges.get(partition) {
            Some(merge) if merge.now > 0 => merge.runs,
            _ if bytes == headroom => 0,
            Some(merge) => merge.runs,
            None => self.sorts.get(partition).map_or(0, |sort| sort.peak),
        }
    }

    fn remove(&mut self, consumer: &MemoryConsumer, bytes: usize) {
        if consumer.can_spill() {
            self.spillable = self.spillable.saturating_sub(bytes);
        } else {
            self.unspillable = self.unspillable.saturating_sub(bytes);
        }
        if let Some(partition) = sort_partition(consumer.name())
            && let Some(holds) = self.sorts.get_mut(partition)
        {
            holds.now = holds.now.saturating_sub(bytes);
        } else if let Some(partition) = merge_partition(consumer.name()) {
            let sort_holds = self.sorts.get(partition).map_or(0, |sort| sort.now);
            if let Some(holds) = self.merges.get_mut(partition) {
                holds.now = holds.now.saturating_sub(bytes);
                if holds.now == 0 {
                    holds.runs = sort_holds;
                }
            }
        }
    }
}

/// DataFusion's fair spill pool, with a sort's merge held to a share and the last eighth of the
/// pool kept from consumers that can spill (see the module documentation).
#[derive(Debug)]
pub struct FairSortPool {
    pool_size: usize,
    merge_cap: usize,
    /// What each sort reserves for its merge (`sort_spill_reservation_bytes`).
    headroom: usize,
    /// What consumers that can spill leave free, for those that cannot.
    kept_free: usize,
    accounts: Mutex<Accounts>,
}

impl FairSortPool {
    /// A pool of `pool_size` bytes for plans of `partitions` partitions whose sorts reserve
    /// `sort_spill_reservation_bytes` each for their merges (DataFusion's
    /// `datafusion.execution.sort_spill_reservation_bytes`).
    pub fn new(pool_size: usize, partitions: usize, sort_spill_reservation_bytes: usize) -> Self {
        let partitions = partitions.max(1);
        let quarter_share = pool_size / (4 * partitions);
        // in a large pool, half of what the writer's eighth and the final merge leave
        let half_the_rest =
            (pool_size / 8 * 7).saturating_sub(BESIDE_THE_MERGES) / (2 * partitions);
        FairSortPool {
            pool_size,
            merge_cap: quarter_share
                .max(half_the_rest)
                .max(sort_spill_reservation_bytes),
            headroom: sort_spill_reservation_bytes,
            kept_free: pool_size / 8,
            accounts: Mutex::new(Accounts::default()),
        }
    }

    /// A pool of `pool_size` bytes for sessions of `config` (its target partitions and
    /// `sort_spill_reservation_bytes`).
    pub fn for_config(pool_size: usize, config: &ConfigOptions) -> Self {
        Self::new(
            pool_size,
            config.execution.target_partitions,
            config.execution.sort_spill_reservation_bytes,
        )
    }

    fn accounts(&self) -> std::sync::MutexGuard<'_, Accounts> {
        self.accounts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The error of a refused growth, as DataFusion's pools word it.
    fn refused(
        &self,
        reservation: &MemoryReservation,
        additional: usize,
        available: usize,
    ) -> DataFusionError {
        resources_datafusion_err!(
            "Failed to allocate additional {additional} bytes for {} with {} bytes already \
             allocated for this reservation - {available} bytes remain available for the total \
             memory pool: {self}",
            reservation.consumer().name(),
            reservation.size()
        )
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
        let mut accounts = self.accounts();
        if consumer.can_spill() {
            accounts.spillers += 1;
        }
        // a sort starts: the most it held is counted afresh
        if let Some(partition) = sort_partition(consumer.name()) {
            accounts
                .sorts
                .entry(partition.to_string())
                .or_default()
                .peak = 0;
        }
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        if consumer.can_spill() {
            let mut accounts = self.accounts();
            accounts.spillers = accounts.spillers.saturating_sub(1);
        }
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.accounts()
            .add(reservation.consumer(), additional, self.headroom);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.accounts().remove(reservation.consumer(), shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let consumer = reservation.consumer();
        let wanted = reservation.size().saturating_add(additional);
        let mut accounts = self.accounts();
        let used = accounts.spillable + accounts.unspillable;
        if consumer.can_spill() {
            // its share of what the others hold not, as in the fair pool; and never the pool's
            // last eighth, so that what cannot spill finds room while a spiller still holds
            // more than a share that shrank since it grew
            let share =
                self.pool_size.saturating_sub(accounts.unspillable) / accounts.spillers.max(1);
            let free = self
                .pool_size
                .saturating_sub(self.kept_free)
                .saturating_sub(used);
            if wanted > share || additional > free {
                return Err(self.refused(reservation, additional, share.min(free)));
            }
        } else {
            if wanted > self.merge_cap
                && let Some(partition) = merge_partition(consumer.name())
            {
                let runs = accounts.runs_to_merge(partition, additional, self.headroom);
                let limit = self.merge_cap.max(runs);
                if wanted > limit {
                    return Err(resources_datafusion_err!(
                        "Failed to allocate additional {additional} bytes for {} with {} bytes \
                         already allocated: a sort's merge holds at most {limit} bytes of the pool",
                        consumer.name(),
                        reservation.size()
                    ));
                }
            }
            let free = self.pool_size.saturating_sub(used);
            if additional > free {
                return Err(self.refused(reservation, additional, free));
            }
        }
        accounts.add(consumer, additional, self.headroom);
        Ok(())
    }

    fn reserved(&self) -> usize {
        let accounts = self.accounts();
        accounts.spillable + accounts.unspillable
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.pool_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A consumer that can spill, as DataFusion's sorts register theirs.
    fn spiller(pool: &Arc<dyn MemoryPool>, name: &str) -> MemoryReservation {
        MemoryConsumer::new(name)
            .with_can_spill(true)
            .register(pool)
    }

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
        // the merge, which reserves their batches again: up to the 80 MB the sort held, above
        // the 25 MB share
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(200_000_000, 2, 10_000_000));
        let sort = spiller(&pool, "ExternalSorter[0]");
        sort.try_grow(80_000_000).unwrap();
        sort.shrink(40_000_000);
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(80_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
        // another partition's sort does not lift partition 0's limit
        let other = MemoryConsumer::new("ExternalSorterMerge[1]").register(&pool);
        other.try_grow(25_000_000).unwrap();
        assert!(other.try_grow(1).is_err());
        // a new sort of partition 0 starts from nothing
        drop(sort);
        merge.free();
        let sort = spiller(&pool, "ExternalSorter[0]");
        sort.try_grow(1_000).unwrap();
        merge.try_grow(25_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
    }

    #[test]
    fn a_merge_of_spill_files_keeps_to_its_share() {
        // as DataFusion's sort runs: the sort of partition 0 holds 80 MB of runs; its merge frees
        // the headroom and merges the runs (80 MB; as they are spilled the sort frees all it
        // held, the merge going on); then the headroom again, and the merge of the spill files
        // grows from it: up to the 25 MB share, the sort's 80 MB no longer counting
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(200_000_000, 2, 10_000_000));
        let sort = spiller(&pool, "ExternalSorter[0]");
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(10_000_000).unwrap();
        sort.try_grow(80_000_000).unwrap();
        merge.free();
        let runs = merge.new_empty();
        runs.try_grow(40_000_000).unwrap();
        sort.free();
        runs.try_grow(40_000_000).unwrap();
        assert!(runs.try_grow(1).is_err());
        drop(runs);
        merge.try_grow(10_000_000).unwrap();
        merge.try_grow(15_000_000).unwrap();
        let err = merge.try_grow(1).unwrap_err().to_string();
        assert!(err.contains("at most 25000000 bytes"), "{err}");
        // its next pass grows from nothing (the last pass's bytes freed), the sort holding none
        merge.free();
        merge.try_grow(25_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
        // runs in memory again (a sort of 80 MB whose merge then frees what it held): as much
        sort.try_grow(80_000_000).unwrap();
        merge.free();
        merge.try_grow(80_000_000).unwrap();
        assert!(merge.try_grow(1).is_err());
    }

    #[test]
    fn a_large_pools_merges_share_what_the_final_merge_and_the_writer_leave() {
        // 4 GiB for two partitions: of the 3.5 GiB left by the writer's eighth, less 128 MiB,
        // half for the two merges, 864 MiB each (a quarter of the share would be 512 MiB)
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(4 << 30, 2, 10 << 20));
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(10 << 20).unwrap();
        merge.try_grow((864 - 10) << 20).unwrap();
        let err = merge.try_grow(1).unwrap_err().to_string();
        assert!(
            err.contains(&format!("at most {} bytes", 864 << 20)),
            "{err}"
        );
        // under 128 MiB the quarter of the share stays the cap: 16 MiB
        let small = FairSortPool::new(128 << 20, 2, 10 << 20).to_string();
        assert!(
            small.ends_with(&format!("sort merges up to {} each)", 16 << 20)),
            "{small}"
        );
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
    fn spillers_share_and_leave_the_last_eighth_to_the_others() {
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(160, 2, 10));
        let a = spiller(&pool, "ExternalSorter[0]");
        let b = spiller(&pool, "ExternalSorter[1]");
        // each may hold half (80), but together not the last 20
        assert!(a.try_grow(81).is_err());
        a.try_grow(70).unwrap();
        b.try_grow(70).unwrap();
        assert!(a.try_grow(1).is_err());
        // a consumer that cannot spill finds the last 20
        let merge = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge.try_grow(20).unwrap();
        assert_eq!(pool.reserved(), 160);
    }

    #[test]
    fn a_spiller_over_a_shrunk_share_leaves_room_for_a_merge_to_start() {
        // 1000 bytes, the last 125 kept from spillers: sort 0 held 400 and sort 1 430; sort 0's
        // runs went to its merge (300: three quarters of what the sort held), shrinking the
        // spillers' shares to 350 each, while sort 1 keeps its 430; sort 0's output may then
        // grow by 145, not by the 270 its share would allow, and partition 1's merge still
        // gets its first bytes
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSortPool::new(1000, 2, 10));
        let sort0 = spiller(&pool, "ExternalSorter[0]");
        let sort1 = spiller(&pool, "ExternalSorter[1]");
        sort0.try_grow(400).unwrap();
        sort1.try_grow(430).unwrap();
        sort0.shrink(400);
        let merge0 = MemoryConsumer::new("ExternalSorterMerge[0]").register(&pool);
        merge0.try_grow(300).unwrap();
        let err = sort0.try_grow(146).unwrap_err().to_string();
        assert!(err.contains("145 bytes remain available"), "{err}");
        sort0.try_grow(145).unwrap();
        let merge1 = MemoryConsumer::new("ExternalSorterMerge[1]").register(&pool);
        merge1.try_grow(100).unwrap();
    }

    #[test]
    fn a_small_pool_gets_smaller_batches_and_merge_headroom() {
        let fitted = |pool_size: usize, partitions: usize| {
            let mut options = ConfigOptions::default();
            options.execution.target_partitions = partitions;
            fit_to_pool(&mut options, pool_size);
            let execution = options.execution;
            (
                execution.batch_size.get(),
                execution.sort_spill_reservation_bytes,
            )
        };
        // 4 MiB a partition: an eighth of it in 1 KiB rows, and a quarter for the headroom
        assert_eq!(fitted(8 << 20, 2), (512, 1 << 20));
        assert_eq!(fitted(8 << 20, 1), (1024, 2 << 20));
        // 40 MiB a partition keeps DataFusion's 10 MiB headroom; 64 MiB its 8,192 rows
        assert_eq!(fitted(80 << 20, 2), (5120, 10 << 20));
        assert_eq!(fitted(128 << 20, 2), (8192, 10 << 20));
        assert_eq!(fitted(4 << 30, 2), (8192, 10 << 20));
        // never fewer than 128 rows, and never more than the session had
        assert_eq!(fitted(1 << 20, 4), (128, 64 << 10));
        let mut options = ConfigOptions::default();
        options.execution.batch_size = ConfigNonZeroUsize::try_new(100).unwrap();
        fit_to_pool(&mut options, 4 << 30);
        assert_eq!(options.execution.batch_size.get(), 100);
    }
}
