//! Recording events from host code into a [`Trace`]: a CPU backend's
//! workers (the emulator plays the device's blocks and records the same
//! events the device rings do) or CPU task bodies.
//!
//! One bounded buffer per (PE, block), each behind its own lock: a block is
//! one thread, so its lock is uncontended and costs one uncontended
//! lock/unlock per event. What happens when a buffer is full depends on how
//! the recorder was made, and is never silent: [`TraceRecorder::new`] keeps
//! the first events and counts later ones in `dropped`;
//! [`TraceRecorder::ring`] behaves like the device's trace rings, keeping
//! the newest and counting the overwritten ones. An event of a PE or block
//! beyond the ones the recorder was made for is counted in `dropped` too.
//!
//! # Recording what the device records
//!
//! A backend that runs the scheduler on threads records, through
//! [`TraceRecorder::block`]'s [`BlockTrace`], exactly where the megakernel
//! records (`device/include/autarky/trace.cuh`), with global task ids
//! (`LoweredGraph::global`):
//!
//! | where | call |
//! |---|---|
//! | before / after a task body (compute, pinned, comm) | `task_start` / `task_end` |
//! | a wait whose first poll failed, and its end (ready, stopped, aborted, timed out) | `wait_begin` / `wait_end`, word [`super::wait_word`]`(kind, index)` |
//! | a comm worker that found nothing to do, until it finds work | the same with `WaitKind::CommIdle`, index = the block |
//! | a producer storing a remote successor's proxy word | `signal_sent(task, i, proxy slot, consumer PE)` |
//! | a relay (or pinned poll) seeing a proxy advance | `signal_seen(producer, instance, proxy id)` |

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use super::{EventKind, Role, Trace, TraceEvent};

/// Bounded per-block event buffers with a shared monotonic clock.
#[derive(Debug)]
pub struct TraceRecorder {
    epoch: Instant,
    /// Buffers of PE `pe`'s block `b` at `pe * blocks_per_pe + b`.
    per_block: Vec<Mutex<VecDeque<TraceEvent>>>,
    blocks_per_pe: usize,
    capacity: usize,
    /// Full buffer: overwrite the oldest event (true) or refuse the new one.
    keep_newest: bool,
    dropped: AtomicU64,
}

impl TraceRecorder {
    /// A recorder for blocks `0..blocks` of PE 0, each keeping its first
    /// `capacity_per_block` events (later ones are counted as dropped).
    /// Buffers grow as events arrive (no allocation up front beyond the
    /// block list).
    pub fn new(blocks: usize, capacity_per_block: usize) -> TraceRecorder {
        Self::make(1, blocks, capacity_per_block, false)
    }

    /// A recorder that behaves like the device's trace rings: blocks
    /// `0..blocks_per_pe` of PEs `0..pes`, each keeping its newest
    /// `records_per_block` events and counting the overwritten ones as
    /// dropped.
    pub fn ring(pes: usize, blocks_per_pe: usize, records_per_block: usize) -> TraceRecorder {
        Self::make(pes, blocks_per_pe, records_per_block, true)
    }

    fn make(pes: usize, blocks_per_pe: usize, capacity: usize, keep_newest: bool) -> Self {
        TraceRecorder {
            epoch: Instant::now(),
            per_block: (0..pes * blocks_per_pe)
                .map(|_| Mutex::new(VecDeque::new()))
                .collect(),
            blocks_per_pe,
            capacity,
            keep_newest,
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
        let slot = ((e.block as usize) < self.blocks_per_pe)
            .then(|| e.pe as usize * self.blocks_per_pe + e.block as usize);
        let Some(buf) = slot.and_then(|i| self.per_block.get(i)) else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let mut buf = buf.lock();
        if buf.len() >= self.capacity {
            if !self.keep_newest || buf.pop_front().is_none() {
                drop(buf);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            self.dropped.fetch_add(1, Ordering::Relaxed);
        } else if buf.try_reserve(1).is_err() {
            drop(buf);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        buf.push_back(e);
    }

    /// The recording handle of one block (what a worker thread keeps).
    pub fn block(&self, pe: u32, block: u32, role: Role) -> BlockTrace<'_> {
        BlockTrace {
            rec: self,
            pe,
            block,
            role,
        }
    }

    /// Events dropped so far.
    pub fn dropped(&self) -> u64 {
        // Relaxed: a counter read after the recording threads were joined
        // (the join orders it) or as an estimate while they run.
        self.dropped.load(Ordering::Relaxed)
    }

    /// Everything recorded, with `labels` for the tasks: blocks in (PE,
    /// block) order, each block's events in the order it recorded them.
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

/// One block's recording handle: every event it records carries the
/// block's PE, number and role, and the recorder's current time.
#[derive(Clone, Copy, Debug)]
pub struct BlockTrace<'a> {
    rec: &'a TraceRecorder,
    pe: u32,
    block: u32,
    role: Role,
}

impl BlockTrace<'_> {
    fn event(&self, kind: EventKind, task: u32, iteration: u32, arg: u64) {
        self.rec.record(TraceEvent {
            t_ns: 0,
            pe: self.pe,
            block: self.block,
            role: self.role,
            task,
            iteration,
            kind,
            arg,
        });
    }

    /// Instance `iteration` of global task `task` starts its body.
    pub fn task_start(&self, task: u32, iteration: u32) {
        self.event(EventKind::TaskStart, task, iteration, 0);
    }

    /// Instance `iteration` of global task `task` ended its body.
    pub fn task_end(&self, task: u32, iteration: u32) {
        self.event(EventKind::TaskEnd, task, iteration, 0);
    }

    /// The block starts waiting for `word` (see [`super::wait_word`]);
    /// `task` is the wait site's task, or `u32::MAX` for none.
    pub fn wait_begin(&self, task: u32, iteration: u32, word: u64) {
        self.event(EventKind::WaitBegin, task, iteration, word);
    }

    /// The wait for `word` ended (whatever its result).
    pub fn wait_end(&self, task: u32, iteration: u32, word: u64) {
        self.event(EventKind::WaitEnd, task, iteration, word);
    }

    /// Instance `iteration` of `task` signalled proxy `slot` on PE `to_pe`.
    pub fn signal_sent(&self, task: u32, iteration: u32, slot: u32, to_pe: u32) {
        self.event(
            EventKind::SignalSent { to_pe },
            task,
            iteration,
            slot as u64,
        );
    }

    /// This block saw proxy `slot` (of producer `task`) reach instance
    /// `iteration`'s completion.
    pub fn signal_seen(&self, task: u32, iteration: u32, slot: u32) {
        self.event(EventKind::SignalSeen, task, iteration, slot as u64);
    }

    /// A body marked halo pulse `id` packed.
    pub fn pulse_pack(&self, task: u32, iteration: u32, id: u64) {
        self.event(EventKind::PulsePack, task, iteration, id);
    }

    /// A body marked halo pulse `id` put.
    pub fn pulse_put(&self, task: u32, iteration: u32, id: u64) {
        self.event(EventKind::PulsePut, task, iteration, id);
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

    #[test]
    fn a_ring_recorder_keeps_the_newest_per_block_of_each_pe() {
        let r = TraceRecorder::ring(2, 2, 3);
        let b = r.block(1, 1, Role::Compute);
        for i in 0..5 {
            b.task_start(9, i);
        }
        r.block(0, 1, Role::Compute).task_end(4, 0);
        // Out of range: PE 2, block 2.
        r.block(2, 0, Role::Comm).task_start(0, 0);
        r.block(0, 2, Role::Comm).task_start(0, 0);
        let t = r.into_trace(vec![]);
        assert_eq!(t.dropped, 2 + 2, "two overwritten, two out of range");
        let kept: Vec<_> = t
            .events
            .iter()
            .map(|e| (e.pe, e.block, e.iteration))
            .collect();
        assert_eq!(kept, vec![(0, 1, 0), (1, 1, 2), (1, 1, 3), (1, 1, 4)]);
    }

    #[test]
    fn block_handles_record_what_the_device_records() {
        use super::super::wait_word;
        use autarky_shared::WaitKind;
        let r = TraceRecorder::ring(2, 1, 64);
        let (p0, p1) = (r.block(0, 0, Role::Comm), r.block(1, 0, Role::Comm));
        let w = wait_word(WaitKind::CommIdle, 0);
        p1.wait_begin(u32::MAX, 0, w);
        p0.task_start(5, 0);
        p0.task_end(5, 0);
        p0.signal_sent(5, 0, 3, 1);
        p1.wait_end(u32::MAX, 0, w);
        p1.signal_seen(5, 0, 3);
        let t = r.into_trace(vec![]);
        let p = t.pair();
        assert_eq!((p.tasks.len(), p.waits.len(), p.unmatched), (1, 1, 0));
        assert_eq!(p.waits[0].arg, w);
        assert_eq!(t.flows().len(), 1);
        assert!(t.events.iter().all(|e| e.role == Role::Comm));
    }
}
