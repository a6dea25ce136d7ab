//! Recording events from host code (CPU task bodies) into a [`Trace`].
//!
//! One bounded buffer per block, each behind its own lock: a block is one
//! thread, so its lock is uncontended and costs one uncontended
//! lock/unlock per event. A full buffer, or a block beyond the ones the
//! recorder was made for, counts the event in `dropped` instead of growing
//! or losing it silently.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use super::{Trace, TraceEvent};

/// Bounded per-block event buffers with a shared monotonic clock.
#[derive(Debug)]
pub struct TraceRecorder {
    epoch: Instant,
    per_block: Vec<Mutex<Vec<TraceEvent>>>,
    capacity: usize,
    dropped: AtomicU64,
}

impl TraceRecorder {
    /// A recorder for blocks `0..blocks`, each keeping at most
    /// `capacity_per_block` events. Buffers grow as events arrive (no
    /// allocation up front beyond the block list).
    pub fn new(blocks: usize, capacity_per_block: usize) -> TraceRecorder {
        TraceRecorder {
            epoch: Instant::now(),
            per_block: (0..blocks).map(|_| Mutex::new(Vec::new())).collect(),
            capacity: capacity_per_block,
            dropped: AtomicU64::new(0),
        }
    }

    /// Nanoseconds since the recorder was made (its clock).
    pub fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos().min(u64::MAX as u128) as u64
    }

    /// Records `e` with its time set to now.
    pub fn record(&self, e: TraceEvent) {
        self.push(TraceEvent {
            t_ns: self.now_ns(),
            ..e
        });
    }

    /// Records `e` as it is (its time on [`TraceRecorder::now_ns`]'s clock).
    pub fn push(&self, e: TraceEvent) {
        let Some(buf) = self.per_block.get(e.block as usize) else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let mut buf = buf.lock();
        if buf.len() >= self.capacity || buf.try_reserve(1).is_err() {
            drop(buf);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        buf.push(e);
    }

    /// Events dropped so far.
    pub fn dropped(&self) -> u64 {
        // Relaxed: a counter read after the recording threads were joined
        // (the join orders it) or as an estimate while they run.
        self.dropped.load(Ordering::Relaxed)
    }

    /// Everything recorded, with `labels` for the tasks.
    pub fn into_trace(self, labels: Vec<String>) -> Trace {
        let dropped = self.dropped();
        let mut events = Vec::new();
        for b in self.per_block {
            events.extend(b.into_inner());
        }
        Trace {
            events,
            dropped,
            labels,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::super::{EventKind, Role};
    use super::*;

    #[test]
    fn events_past_capacity_or_block_range_are_counted_not_kept() {
        let r = TraceRecorder::new(2, 3);
        for i in 0..5 {
            r.record(ev(0, 1, Role::Compute, i, 0, EventKind::TaskStart));
        }
        r.record(ev(0, 0, Role::Comm, 0, 0, EventKind::TaskStart));
        r.record(ev(0, 7, Role::Compute, 0, 0, EventKind::TaskStart));
        let t = r.into_trace(vec![]);
        assert_eq!(t.events.len(), 4);
        assert_eq!(t.dropped, 3);
        let tasks: Vec<u32> = t
            .events
            .iter()
            .filter(|e| e.block == 1)
            .map(|e| e.task)
            .collect();
        assert_eq!(tasks, vec![0, 1, 2]);
    }

    #[test]
    fn the_clock_only_moves_forward_within_a_block() {
        let r = TraceRecorder::new(1, 100);
        for i in 0..50 {
            r.record(ev(0, 0, Role::Compute, i, 0, EventKind::TaskStart));
        }
        let t = r.into_trace(vec![]);
        assert!(t.events.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    }
}
