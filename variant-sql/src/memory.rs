//! The memory pool's settings (`-m`, `--mem-pool-type`, `--top-memory-consumers`), shared by
//! the SQL program and its workers.
use std::num::NonZeroUsize;
use std::sync::Arc;

use datafusion::config::ConfigOptions;
use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryPool, TrackConsumersPool};
use datafusion_cli::pool_type::PoolType;
use datafusion_parquet_variant::memory_pool::FairSortPool;

/// The memory pool's settings, shared by the SQL program and its workers.
#[derive(Debug, clap::Args, PartialEq)]
pub struct MemoryArgs {
    /// The memory pool's limit, e.g. '512m' or '10g' (suffixes b, k, m, g, t; no limit when not
    /// given). A query that needs more spills where it can, else fails with DataFusion's
    /// resources-exhausted error naming the largest consumers.
    #[arg(short = 'm', long, value_parser = parse_memory_limit)]
    pub memory_limit: Option<usize>,

    /// The memory pool type with --memory-limit: 'fair' (each operator that can spill gets its
    /// share, so two sorts and the readers feeding them fit together, and a sort's merge of its
    /// spill files holds at most a share of the pool) or 'greedy' (first come, first served:
    /// one sort can take the whole pool and starve the rest).
    #[arg(long, default_value_t = PoolType::Fair)]
    pub mem_pool_type: PoolType,

    /// How many of the largest memory consumers an out-of-memory error names (0: no tracking).
    #[arg(long, default_value = "3")]
    pub top_memory_consumers: usize,
}

/// A byte count with an optional binary suffix (b, k/kb, m/mb, g/gb, t/tb; any case), as
/// datafusion-cli reads `--memory-limit`.
pub(super) fn parse_memory_limit(size: &str) -> Result<usize, String> {
    let lower = size.to_lowercase();
    let digits = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (number, suffix) = lower.split_at(digits);
    let shift = match suffix {
        "" | "b" => 0,
        "k" | "kb" => 10,
        "m" | "mb" => 20,
        "g" | "gb" => 30,
        "t" | "tb" => 40,
        _ => return Err(format!("Invalid memory pool size '{size}'")),
    };
    let number: usize = number
        .parse()
        .map_err(|_| format!("Invalid numeric value in memory pool size '{size}'"))?;
    number
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("memory pool size '{size}' is too large"))
}

impl MemoryArgs {
    /// The memory pool of `--memory-limit` (None: DataFusion's unbounded default), for sessions
    /// of `config` (its partitions and sorts' merge headroom size the fair pool's merge shares).
    pub fn pool(&self, config: &ConfigOptions) -> Option<Arc<dyn MemoryPool>> {
        let limit = self.memory_limit?;
        let top = NonZeroUsize::new(self.top_memory_consumers);
        let fair = || FairSortPool::for_config(limit, config);
        Some(match (&self.mem_pool_type, top) {
            (PoolType::Greedy, None) => Arc::new(GreedyMemoryPool::new(limit)),
            (PoolType::Greedy, Some(top)) => {
                Arc::new(TrackConsumersPool::new(GreedyMemoryPool::new(limit), top))
            }
            (PoolType::Fair, None) => Arc::new(fair()),
            (PoolType::Fair, Some(top)) => Arc::new(TrackConsumersPool::new(fair(), top)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sizes_as_datafusion_cli() {
        assert_eq!(parse_memory_limit("1024"), Ok(1024));
        assert_eq!(parse_memory_limit("2KB"), Ok(2048));
        assert_eq!(parse_memory_limit("10G"), Ok(10 << 30));
        assert_eq!(parse_memory_limit("1t"), Ok(1 << 40));
        for bad in ["", "m", "-1m", "1x", "1.5g", "99999999999999999999t"] {
            assert!(parse_memory_limit(bad).is_err(), "{bad}");
        }
    }
}
