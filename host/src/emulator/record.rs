//! What the emulated blocks record into a traced run
//! ([`crate::runtime::RunOptions::trace`]): the events the megakernel's
//! trace rings hold (`device/include/autarky/trace.cuh`), at the same
//! places, into a [`TraceRecorder::ring`] (per block: the newest
//! `records_per_block` events, the rest counted as dropped) on a host
//! clock (ns since the run's start). Task ids are global
//! ([`LoweredGraph::global`]); a proxy's is its producer's.
//!
//! | where | event |
//! |---|---|
//! | around every body (dynamic, pinned, comm) | `TaskStart` / `TaskEnd` (`body.rs`) |
//! | a wait whose first poll failed, until it ends (ready, finished, aborted, timed out) | `WaitBegin` / `WaitEnd`, word [`wait_word`]`(kind, index)` (`wait.rs`) |
//! | a comm worker's poll that ran nothing, until it runs an instance or leaves | the same for `WaitKind::CommIdle`, index = the block ([`Idle`]) |
//! | a completion about to store its remote outs | `SignalSent` per remote out: proxy slot, consumer PE ([`signals_sent`]) |
//! | a relay seeing a proxy advance | `SignalSeen`: proxy id, iteration = its new `done` − 1 (`comm.rs`) |
//! | a pinned poll that found every predecessor done | `SignalSeen` per proxy predecessor the instance needs ([`proxies_seen`]) |
//!
//! *Differences from the device.* A `SignalSent` is recorded just before
//! the completion that stores the proxy words (the device records it after
//! each store, inside the completion): the record must not postdate the
//! store, or a consumer on another thread could see the proxy — and record
//! its `SignalSeen` — before it, and [`crate::trace::Trace::flows`] would
//! not pair them (the device's `%globaltimer` is coarse enough that it does
//! not matter there). The emulator has no user-word waits (CPU bodies do not
//! wait on words) and no halo pulse marks.
//!
//! Tracing off costs one `Option` check per event site: every site holds
//! an `Option<BlockTrace>` taken from [`Run::tracer`].

use autarky_shared::{WaitKind, TASK_NONE};

use super::shared::Run;
use crate::graph::LoweredGraph;
use crate::trace::{wait_word, BlockTrace, Role};

impl Run<'_> {
    /// The recording handle of block `block` of PE `pe`, or `None` when
    /// the run is not traced.
    #[inline]
    pub(crate) fn tracer(&self, pe: u32, block: u32) -> Option<BlockTrace<'_>> {
        let rec = self.trace.as_ref()?;
        let role = match self.pes[pe as usize].role(block) {
            autarky_shared::Role::Comm => Role::Comm,
            _ => Role::Compute,
        };
        Some(rec.block(pe, block, role))
    }
}

/// The global id of local task (or proxy) `task`; [`TASK_NONE`] stays so.
pub(crate) fn global(l: &LoweredGraph, task: u32) -> u32 {
    if task == TASK_NONE {
        TASK_NONE
    } else {
        l.global[task as usize]
    }
}

/// Instance `i` of local task `task` is about to signal its remote outs:
/// one `SignalSent` per consumer proxy (its slot on the consumer PE).
pub(crate) fn signals_sent(tr: &BlockTrace<'_>, l: &LoweredGraph, task: u32, i: u32) {
    let d = &l.tasks[task as usize];
    for r in l.remotes(d) {
        tr.signal_sent(d.global, i, r.slot, r.pe);
    }
}

/// A pinned poll found instance `n` of local task `task` ready: one
/// `SignalSeen` per proxy predecessor that instance needed (the device's
/// `trace_proxies_seen`).
pub(crate) fn proxies_seen(tr: &BlockTrace<'_>, l: &LoweredGraph, task: u32, n: u32) {
    let d = &l.tasks[task as usize];
    for e in l.preds(d) {
        if l.is_proxy(e.task) && n + 1 > e.distance {
            tr.signal_seen(l.global[e.task as usize], n - e.distance, e.task);
        }
    }
}

/// A comm worker's idle period: `WaitBegin` of `CommIdle` at the first
/// poll that ran nothing, `WaitEnd` before the next instance it runs (or
/// when it leaves).
pub(crate) struct Idle {
    word: u64,
    open: bool,
}

impl Idle {
    /// Comm worker `block`'s idle tracker (nothing open).
    pub fn new(block: u32) -> Self {
        Idle {
            word: wait_word(WaitKind::CommIdle, block),
            open: false,
        }
    }

    /// A poll ran nothing: begins the idle period if none is open.
    pub fn nothing_ran(&mut self, tr: &BlockTrace<'_>) {
        if !self.open {
            self.open = true;
            tr.wait_begin(TASK_NONE, 0, self.word);
        }
    }

    /// An instance is about to run, or the worker leaves: ends the idle
    /// period if one is open.
    pub fn end(&mut self, tr: &BlockTrace<'_>) {
        if self.open {
            self.open = false;
            tr.wait_end(TASK_NONE, 0, self.word);
        }
    }
}
