//! The ready queue: a ticketed Vyukov ring, the same one the megakernel
//! uses (`autarky_shared::QueueCtl` / `QueueSlot`).
//!
//! # Words
//!
//! - `tail`: push tickets. Taken with `fetch_add` by a worker that claimed
//!   an instance it does not keep; only increases (mod 2^32).
//! - `head`: pop tickets. Taken with `fetch_add` by an idle compute worker
//!   (blocking pop), or with a CAS from `k` to `k + 1` by a comm worker that
//!   already saw slot `k` filled (`try_pop`, Vyukov's try-dequeue); only
//!   increases (mod 2^32).
//! - `slot[i].word = (seq << 32) | task`: slot `i` starts with `seq = i`.
//!   Push ticket `k` owns slot `k & mask` once `seq == k` (the slot is free
//!   for round `k`); it writes `iteration` and then publishes
//!   `word = ((k + 1) << 32) | task` with release. Pop ticket `k` owns the
//!   slot once it sees (acquire) `seq == k + 1`; it reads `task` and
//!   `iteration`, then frees the slot for push ticket `k + capacity` by
//!   storing `seq = k + capacity` with release. `seq` only increases (mod
//!   2^32); comparisons are equalities on `u32`, so wraparound is harmless
//!   because the capacity divides 2^32.
//! - `slot[i].iteration`: written by the pusher that owns the slot, read by
//!   the popper that owns it next; ownership passes through `word`.
//!
//! # Capacity
//!
//! At most one instance per task is claimed and not done at any time, and
//! only claimed instances are pushed, so with `capacity ≥ tasks` a push
//! never finds the ring full: a push with ticket `k + capacity` waits at most
//! for pop ticket `k` (which exists, because `capacity + 1` unpopped items
//! cannot exist) to finish reading its slot. Waits in `push` are therefore
//! short hand-offs between two workers in progress, never a full queue.

use std::ops::ControlFlow;

use super::sync::{AtomicU32, AtomicU64, Ordering};
use autarky_shared::WaitKind;

/// One slot of the ring.
struct Slot {
    /// `(seq << 32) | task`.
    word: AtomicU64,
    /// Iteration of the queued instance.
    iteration: AtomicU32,
}

/// What a blocked queue operation is waiting for, handed to the caller's
/// wait policy after every failed poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueWait {
    /// [`WaitKind::QueueItem`] (pop) or [`WaitKind::QueueSpace`] (push).
    pub kind: WaitKind,
    /// Slot index.
    pub slot: u32,
    /// The slot's `seq` as last seen.
    pub seen: u32,
    /// The `seq` the operation waits for.
    pub wanted: u32,
}

/// A bounded MPMC ring of `(task, iteration)` instances.
pub(crate) struct ReadyQueue {
    head: AtomicU32,
    tail: AtomicU32,
    slots: Box<[Slot]>,
    /// `capacity - 1`. Capacity is always a power of two.
    mask: u32,
}

impl ReadyQueue {
    /// An empty ring of `capacity` slots.
    ///
    /// # Panics
    /// If `capacity` is not a power of two ≥ 2.
    pub fn new(capacity: u32) -> Self {
        // Always a power of two, so `k & mask` is `k mod capacity` and the
        // capacity divides 2^32 (tickets wrap without skipping a round).
        // At least 2: with one slot, the `seq = k + 1` a push publishes is
        // the `seq` push ticket `k + 1` waits for, so a second push would
        // overwrite an unpopped entry (the loom model found this).
        assert!(
            capacity.is_power_of_two() && capacity >= 2,
            "ready-queue capacity {capacity} is not a power of two ≥ 2"
        );
        let slots = (0..capacity)
            .map(|i| Slot {
                word: AtomicU64::new((i as u64) << 32),
                iteration: AtomicU32::new(0),
            })
            .collect();
        ReadyQueue {
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
            slots,
            mask: capacity - 1,
        }
    }

    /// Capacity in slots.
    pub fn capacity(&self) -> u32 {
        self.mask + 1
    }

    /// Pushes `(task, iteration)`. `wait` is called after every failed poll
    /// of the slot; when it breaks, the push is abandoned (the run is
    /// aborting) and `Err` returned with the wait that gave up.
    pub fn push(
        &self,
        task: u32,
        iteration: u32,
        mut wait: impl FnMut(QueueWait) -> ControlFlow<()>,
    ) -> Result<(), QueueWait> {
        // Relaxed is enough for the ticket: it only hands out distinct
        // numbers (RMWs on one word are totally ordered); the slot's `seq`
        // handshake below carries all synchronization with the popper.
        let k = self.tail.fetch_add(1, Ordering::Relaxed);
        let slot = &self.slots[(k & self.mask) as usize];
        loop {
            // Acquire pairs with the release store of the popper that freed
            // this slot (`seq = k`), so its read of `iteration` for round
            // `k - capacity` happens before our overwrite below.
            let seq = (slot.word.load(Ordering::Acquire) >> 32) as u32;
            if seq == k {
                break;
            }
            let w = QueueWait {
                kind: WaitKind::QueueSpace,
                slot: k & self.mask,
                seen: seq,
                wanted: k,
            };
            if wait(w).is_break() {
                return Err(w);
            }
        }
        // Relaxed: the slot is ours until we publish `word`; the release
        // store below orders this write before the popper's read.
        slot.iteration.store(iteration, Ordering::Relaxed);
        // Release publishes `iteration` (and, transitively, everything that
        // happened before the claim of this instance) to the popper that
        // acquires `seq == k + 1`.
        slot.word.store(
            ((k.wrapping_add(1) as u64) << 32) | task as u64,
            Ordering::Release,
        );
        Ok(())
    }

    /// Pops one instance. `wait` is called after every failed poll; when it
    /// breaks (the run finished or is aborting) the pop is abandoned and
    /// `None` returned. Abandoning is only sound when no push will ever fill
    /// the slot (finished) or nothing matters any more (abort): the ticket
    /// is consumed either way.
    pub fn pop(&self, mut wait: impl FnMut(QueueWait) -> ControlFlow<()>) -> Option<(u32, u32)> {
        // Relaxed, as for push tickets: distinct numbers only.
        let k = self.head.fetch_add(1, Ordering::Relaxed);
        let slot = &self.slots[(k & self.mask) as usize];
        let wanted = k.wrapping_add(1);
        let word = loop {
            // Acquire pairs with the pusher's release store of
            // `seq = k + 1`: its `iteration` write, and everything before
            // its claim of the instance, happen before we run the instance.
            let word = slot.word.load(Ordering::Acquire);
            let seq = (word >> 32) as u32;
            if seq == wanted {
                break word;
            }
            let w = QueueWait {
                kind: WaitKind::QueueItem,
                slot: k & self.mask,
                seen: seq,
                wanted,
            };
            if wait(w).is_break() {
                return None;
            }
        };
        let task = word as u32;
        // Relaxed: ordered after the pusher's write by the acquire above.
        let iteration = slot.iteration.load(Ordering::Relaxed);
        // Release: our reads of `iteration` above happen before the next
        // pusher (ticket `k + capacity`, which acquires this store) writes it.
        slot.word.store(
            (k.wrapping_add(self.capacity()) as u64) << 32,
            Ordering::Release,
        );
        Some((task, iteration))
    }

    /// Takes one instance if one is queued now, never waiting (the comm
    /// ring: comm workers have other duties between looks). Vyukov's
    /// try-dequeue: the head ticket is taken, by CAS, only once its slot is
    /// seen filled, so a failed look consumes nothing.
    pub fn try_pop(&self) -> Option<(u32, u32)> {
        // Relaxed: only a candidate ticket; the CAS below decides.
        let k = self.head.load(Ordering::Relaxed);
        let slot = &self.slots[(k & self.mask) as usize];
        // Acquire pairs with the pusher's release of `seq = k + 1` (as in
        // `pop`). The word cannot change between this load and our use of
        // it: only the owner of pop ticket `k` rewrites it, and that is us
        // once the CAS succeeds.
        let word = slot.word.load(Ordering::Acquire);
        if (word >> 32) as u32 != k.wrapping_add(1) {
            return None;
        }
        // Relaxed: tickets are distinct numbers only (as in `pop`); the
        // slot handshake carries the data.
        if self
            .head
            .compare_exchange(k, k.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let task = word as u32;
        // Relaxed: ordered after the pusher's write by the acquire above.
        let iteration = slot.iteration.load(Ordering::Relaxed);
        // Release: our read of `iteration` happens before the next pusher's
        // write (as in `pop`).
        slot.word.store(
            (k.wrapping_add(self.capacity()) as u64) << 32,
            Ordering::Release,
        );
        Some((task, iteration))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_survives_many_wraparounds() {
        let q = ReadyQueue::new(4);
        let never =
            |_: QueueWait| -> ControlFlow<()> { panic!("a single-threaded queue must not wait") };
        for round in 0..100u32 {
            for t in 0..3 {
                q.push(t, round, never).unwrap();
            }
            for t in 0..3 {
                assert_eq!(q.pop(never), Some((t, round)));
            }
        }
    }

    #[test]
    fn pop_on_empty_queue_reports_the_slot_it_waits_for() {
        let q = ReadyQueue::new(2);
        let mut seen = None;
        let got = q.pop(|w| {
            seen = Some(w);
            ControlFlow::Break(())
        });
        assert_eq!(got, None);
        assert_eq!(
            seen,
            Some(QueueWait {
                kind: WaitKind::QueueItem,
                slot: 0,
                seen: 0,
                wanted: 1
            })
        );
    }

    #[test]
    fn try_pop_takes_nothing_from_an_empty_ring_and_fifo_from_a_filled_one() {
        let q = ReadyQueue::new(2);
        let never = |_: QueueWait| -> ControlFlow<()> { panic!("unexpected wait") };
        assert_eq!(q.try_pop(), None);
        q.push(7, 3, never).unwrap();
        q.push(8, 4, never).unwrap();
        assert_eq!(q.try_pop(), Some((7, 3)));
        // A failed look consumed no ticket: the next push and pops line up.
        q.push(9, 5, never).unwrap();
        assert_eq!(q.try_pop(), Some((8, 4)));
        assert_eq!(q.pop(never), Some((9, 5)));
        assert_eq!(q.try_pop(), None);
    }

    #[test]
    fn push_into_a_full_ring_waits_for_space() {
        let q = ReadyQueue::new(2);
        let never = |_: QueueWait| -> ControlFlow<()> { panic!("unexpected wait") };
        q.push(0, 0, never).unwrap();
        q.push(1, 0, never).unwrap();
        let err = q.push(2, 0, |_| ControlFlow::Break(())).unwrap_err();
        assert_eq!(err.kind, WaitKind::QueueSpace);
        assert_eq!((err.slot, err.seen, err.wanted), (0, 1, 2));
    }
}
