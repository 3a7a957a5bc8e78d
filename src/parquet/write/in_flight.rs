//! The memory a file's batches hold between the sink's input and its writer.
//!
//! Each batch takes a [`Ticket`] of its size from the memory pool before it is shredded and gives
//! it back once written. A batch waits for the batches ahead of it to be written (each returned
//! ticket wakes it) when the tickets out hold their bound, or when the pool is full, instead of
//! failing the write: under a small memory limit the pipeline runs with fewer batches in flight
//! and leaves the rest of the pool to what runs beside it (the readers feeding it). It fails
//! only when no batch is in flight, when the pool cannot hold this one batch at all.
use std::sync::{Arc, Mutex, MutexGuard};

use datafusion::common::Result;
use datafusion::execution::memory_pool::MemoryReservation;
use tokio::sync::Notify;

/// The tickets of one file's batches.
pub struct InFlight {
    state: Arc<State>,
    /// The bytes the tickets out hold at most (one ticket goes out whatever its size).
    bound: usize,
}

struct State {
    held: Mutex<Held>,
    /// Signalled when a ticket comes back.
    returned: Notify,
}

struct Held {
    /// What is reserved and not handed out as a ticket (the sampled batches' bytes, at first).
    unassigned: MemoryReservation,
    /// The tickets out, and their bytes.
    tickets: usize,
    bytes: usize,
}

/// A batch's bytes of the pool, given back when dropped.
pub struct Ticket {
    bytes: Option<MemoryReservation>,
    state: Arc<State>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self.state.held();
        held.tickets -= 1;
        held.bytes -= self.bytes.take().map_or(0, |bytes| bytes.size());
        drop(held);
        self.state.returned.notify_one();
    }
}

impl State {
    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl InFlight {
    /// Tickets drawn from `reservation` (what it holds now is handed out first), holding at
    /// most `bound` bytes together.
    pub fn new(reservation: MemoryReservation, bound: usize) -> Self {
        let held = Held {
            unassigned: reservation,
            tickets: 0,
            bytes: 0,
        };
        InFlight {
            state: Arc::new(State {
                held: Mutex::new(held),
                returned: Notify::new(),
            }),
            bound,
        }
    }

    /// A ticket of `size` bytes: at once when the bound and the pool allow it, else once enough
    /// tickets out have come back; the pool's error when none is out and the pool refuses.
    pub async fn ticket(&self, size: usize) -> Result<Ticket> {
        loop {
            // (asked for before trying, so that a ticket returned meanwhile is not missed)
            let returned = self.state.returned.notified();
            if let Some(ticket) = self.try_ticket(size)? {
                return Ok(ticket);
            }
            returned.await;
        }
    }

    /// A ticket, None to wait for one to come back, or the pool's error when none is out.
    fn try_ticket(&self, size: usize) -> Result<Option<Ticket>> {
        let mut held = self.state.held();
        if held.tickets > 0 && held.bytes + size > self.bound {
            return Ok(None);
        }
        let unassigned = size.saturating_sub(held.unassigned.size());
        if let Err(e) = held.unassigned.try_grow(unassigned) {
            return if held.tickets == 0 { Err(e) } else { Ok(None) };
        }
        held.tickets += 1;
        held.bytes += size;
        let bytes = held.unassigned.split(size);
        Ok(Some(Ticket {
            bytes: Some(bytes),
            state: Arc::clone(&self.state),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryConsumer, MemoryPool};
    use std::time::Duration;

    fn in_flight(pool: &Arc<dyn MemoryPool>) -> InFlight {
        InFlight::new(MemoryConsumer::new("sink").register(pool), usize::MAX)
    }

    #[tokio::test]
    async fn a_ticket_waits_for_one_to_come_back() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let tickets = Arc::new(in_flight(&pool));
        let first = tickets.ticket(60).await.unwrap();
        assert_eq!(pool.reserved(), 60);
        let waiting = tokio::spawn({
            let tickets = Arc::clone(&tickets);
            async move { tickets.ticket(60).await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "60 + 60 bytes do not fit in 100");
        drop(first);
        waiting.await.unwrap().unwrap();
        // (the second ticket was dropped by its task)
        assert_eq!(pool.reserved(), 0);
    }

    #[tokio::test]
    async fn a_ticket_that_never_fits_fails() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let tickets = in_flight(&pool);
        let e = tickets.ticket(101).await.err().unwrap();
        assert!(e.to_string().contains("Resources exhausted"), "{e}");
        // nothing out: the pool's refusal is final, even when others hold the pool
        let other = MemoryConsumer::new("other").register(&pool);
        other.grow(50);
        let e = tickets.ticket(60).await.err().unwrap();
        assert!(e.to_string().contains("Resources exhausted"), "{e}");
        drop(other);
        assert!(tickets.ticket(60).await.is_ok());
    }

    #[tokio::test]
    async fn the_reserved_bytes_are_handed_out_first() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let reservation = MemoryConsumer::new("sink").register(&pool);
        reservation.grow(90);
        let tickets = InFlight::new(reservation, usize::MAX);
        // the sample's 90 bytes: two tickets without growing
        let a = tickets.ticket(40).await.unwrap();
        let b = tickets.ticket(50).await.unwrap();
        assert_eq!(pool.reserved(), 90);
        let c = tickets.ticket(10).await.unwrap();
        assert_eq!(pool.reserved(), 100);
        drop((a, b, c));
        assert_eq!(pool.reserved(), 0);
    }

    #[tokio::test]
    async fn tickets_out_hold_their_bound() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1000));
        let tickets = Arc::new(InFlight::new(
            MemoryConsumer::new("sink").register(&pool),
            100,
        ));
        // one ticket goes out whatever its size
        let big = tickets.ticket(150).await.unwrap();
        let waiting = tokio::spawn({
            let tickets = Arc::clone(&tickets);
            async move { tickets.ticket(10).await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !waiting.is_finished(),
            "150 bytes out, past the bound of 100"
        );
        drop(big);
        waiting.await.unwrap().unwrap();
        let a = tickets.ticket(60).await.unwrap();
        let b = tickets.ticket(40).await.unwrap();
        assert_eq!(pool.reserved(), 100);
        drop((a, b));
    }
}
