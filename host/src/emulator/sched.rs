//! The per-task state words of one PE and the protocol steps over them:
//! the three completions (dynamic compute, comm, pinned), the claim, the
//! pinned task's readiness poll, the proxy relay and the early-finish
//! limit. This is the device scheduler's protocol over the shim atomics, so
//! the loom models exercise exactly this code.

use super::sync::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use crate::graph::LoweredGraph;
use autarky_shared::{
    arrivals_needed, pinned_state_word, slot_add_mask, slot_count, slot_shift, slot_word,
    state_carried_limit, state_parts, state_word, Edge, TaskDesc, SLOT_FIELDS,
};

/// What a completion changed besides claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Completion {
    /// This completion made the task's `done` reach the PE's limit.
    pub task_finished: bool,
    /// This completion finished the last unfinished task of the PE.
    pub run_finished: bool,
}

/// The device's `SMALL_FAN_IN` (scheduler.cuh): tasks and successors with
/// at most this many predecessor edges take its single-thread fast path,
/// the only completion that defers its publish.
pub(crate) const SMALL_FAN_IN: u32 = 8;

/// Owed publishes are flushed when this many are owed (the device's
/// `PEND_MAX`).
pub(crate) const PEND_MAX: usize = 8;

/// Owed arrivals are made when this many are owed (the device's
/// `ARRIVE_BATCH`; it also makes them when they get old).
pub(crate) const ARRIVE_BATCH: u64 = 16;

/// Publishes a dynamic worker owes (run-time chain fusion, the device's
/// `Pending`): a fast-path-shaped completion that nobody but its worker
/// can be waiting on — not open (every successor instance its publish could
/// make ready was claimed early, its own next instance folded or past the
/// limit), something kept, no pinned or remote successors — defers its
/// publish while the worker runs what it kept. Until then its word reads
/// `(i + 1, i)` (instance in flight), so every claim CAS on it fails: a
/// deferral is the same as a slower completion. [`TaskStates::flush`]
/// makes them all with one Release fence and Relaxed stores (the device's
/// `fence.acq_rel` + `st.relaxed`): whoever acquires one of the words
/// synchronizes with the fence, so sees every owed instance's writes and
/// every early claim made before it. The worker flushes when `PEND_MAX`
/// are owed, every 16 completions (the device: with its progress counter),
/// at the first completion that does not defer, before it waits for its
/// ring and when it leaves.
///
/// A join's input that keeps its own next instance also owes its arrival
/// at the counted join (the device: when its body was short): the flush
/// that makes the owed publishes then adds the owed arrivals with one RMW
/// and runs the check they call for ([`TaskStates::flush_arrivals`]), so
/// the protocol is that of as many arrivals in a row, made later.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    owed: Vec<(u32, u64)>,
    finished: u32,
    /// Arrivals owed to one counted task: (task, the first instance they
    /// are for, how many). With arrival slots they are for consecutive
    /// instances (`first`, `first + 1`, ...).
    arrivals: Option<(u32, u32, u64)>,
    /// Loom models: make every arrival at once (the path a device block
    /// takes for an input whose body was long).
    #[cfg(all(test, loom))]
    pub no_deferred_arrivals: bool,
}

impl Pending {
    /// Owed publishes.
    pub fn len(&self) -> usize {
        self.owed.len()
    }

    /// The newest word owed for `task`, if any.
    fn owed_word(&self, task: u32) -> Option<u64> {
        self.owed
            .iter()
            .rev()
            .find(|&&(t, _)| t == task)
            .map(|&(_, w)| w)
    }

    /// May arrivals be owed? (Always, but in the loom models that make
    /// every arrival at once.)
    fn defers_arrivals(&self) -> bool {
        #[cfg(all(test, loom))]
        return !self.no_deferred_arrivals;
        #[cfg(not(all(test, loom)))]
        true
    }

    /// Owes one more arrival at the counted task `task`, for its instance
    /// `n` (the caller made sure no other task is owed any, and with slots
    /// that `n` follows the owed ones) and returns how many are owed.
    fn owe_arrival(&mut self, task: u32, n: u32) -> u64 {
        let a = self.arrivals.get_or_insert((task, n, 0));
        debug_assert_eq!(a.0, task);
        a.2 += 1;
        a.2
    }

    fn owe(&mut self, task: u32, word: u64, finished: bool) {
        match self.owed.last_mut() {
            // The newest word of a task replaces its older one.
            Some(last) if last.0 == task => last.1 = word,
            _ => self.owed.push((task, word)),
        }
        self.finished += u32::from(finished);
    }
}

/// The scheduler state of one PE: one state word per task and proxy, the
/// termination counter, the early-finish limit and the stop flag.
pub(crate) struct TaskStates {
    /// `state[t] = (claimed << 32) | done`, local tasks then proxies; see
    /// the module docs of `emulator` for who writes it.
    state: Box<[AtomicU64]>,
    /// Arrival counter of every local task (only counted tasks' are used,
    /// `LoweredGraph::is_counted`): every completion of a predecessor
    /// instance adds one per edge to the task (`arrive`); a readiness check
    /// of a counted task reads its predecessors only once the counter
    /// reached `arrivals_needed` (`try_claim_gated`). Only increases.
    ///
    /// With arrival slots (`slots`, the device's `-DAUTARKY_SLOTS`) it is
    /// `LoweredGraph::initial_arrival_slots`: word `t` of a counted task is
    /// the index of its slot 0 (read-only), and its slot `j` counts the
    /// arrivals instance `j` needs; the instance is ready exactly when the
    /// slot holds `pred_count`.
    arrivals: Box<[AtomicU64]>,
    /// Arrival slots instead of one counter per task.
    slots: bool,
    /// Local tasks whose `done` reached the limit; only increases.
    tasks_finished: AtomicU32,
    /// Instances every task of this PE runs (`Status::limit`): starts at
    /// `iterations`, only decreases (`lower_limit`, a fetch_min). Read only
    /// when `may_stop`.
    limit: AtomicU32,
    /// 0 → 1 when comm worker 0 saw every local task reach a lowered limit
    /// (`Status::stopped`).
    stopped: AtomicBool,
    iterations: u32,
    num_tasks: u32,
    /// Loom mutant: a counted task's self gate by an Acquire load of its
    /// counter instead of an RMW.
    #[cfg(all(test, loom))]
    pub mutant_self_gate_by_load: bool,
    /// Loom mutant: `preds_ready` of several predecessors without its
    /// Acquire fence.
    #[cfg(all(test, loom))]
    pub mutant_ready_without_fence: bool,
    /// Loom mutant: `flush` without its Release fence.
    #[cfg(all(test, loom))]
    pub mutant_flush_without_fence: bool,
    /// Does any local task's kind call `finish_at` (`RUN_MAY_STOP`)?
    may_stop: bool,
}

impl TaskStates {
    /// The initial state of `lowered` (roots claimed) for a run of
    /// `iterations`.
    #[cfg(test)]
    pub fn new(lowered: &LoweredGraph, iterations: u32) -> Self {
        Self::with_slots(lowered, iterations, false)
    }

    /// [`Self::new`]; `slots`: counted tasks get arrival slots (the
    /// device's `-DAUTARKY_SLOTS`) instead of one counter.
    pub fn with_slots(lowered: &LoweredGraph, iterations: u32, slots: bool) -> Self {
        let arrivals = if slots {
            lowered.initial_arrival_slots(iterations)
        } else {
            vec![0; lowered.num_tasks as usize]
        };
        TaskStates {
            state: lowered
                .initial_state()
                .into_iter()
                .map(AtomicU64::new)
                .collect(),
            arrivals: arrivals.into_iter().map(AtomicU64::new).collect(),
            slots,
            tasks_finished: AtomicU32::new(0),
            limit: AtomicU32::new(iterations),
            stopped: AtomicBool::new(false),
            iterations,
            num_tasks: lowered.num_tasks,
            #[cfg(all(test, loom))]
            mutant_self_gate_by_load: false,
            #[cfg(all(test, loom))]
            mutant_ready_without_fence: false,
            #[cfg(all(test, loom))]
            mutant_flush_without_fence: false,
            may_stop: lowered.may_stop,
        }
    }

    /// Iterations of the run.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    /// The instances every task of this PE runs now (the device's
    /// `run_limit`). Relaxed: a claim that reads a stale, higher limit runs
    /// one more instance, which `finish_at`'s contract allows for tasks
    /// that do not depend on the stopping instance; tasks that do depend on
    /// it acquired its publish, which the fetch_min precedes.
    #[inline]
    pub fn limit(&self) -> u32 {
        if self.may_stop {
            self.limit.load(Ordering::Relaxed)
        } else {
            self.iterations
        }
    }

    /// `ctx.finish_at`: lowers the limit to `n` if that is lower (atomic
    /// min, so the earliest limit wins and it only decreases). Relaxed, as
    /// on the device: what must see it is ordered after the body by the
    /// publish that follows it.
    pub fn lower_limit(&self, n: u32) {
        self.limit.fetch_min(n, Ordering::Relaxed);
    }

    /// Has this PE's run ended: every local task finished, or a lowered
    /// limit was reached everywhere (`stopped`)? Relaxed: it only makes
    /// idle workers leave; the host joins them before reading anything.
    pub fn is_finished(&self) -> bool {
        self.tasks_finished.load(Ordering::Relaxed) == self.num_tasks
            || (self.may_stop && self.stopped.load(Ordering::Relaxed))
    }

    /// Comm worker 0's check (the device's `detect_stop`): once the limit
    /// was lowered, is every local task done up to it? Then set `stopped`.
    pub fn detect_stop(&self) {
        if !self.may_stop {
            return;
        }
        let limit = self.limit();
        if limit >= self.iterations {
            return;
        }
        // Relaxed: nothing is read on the strength of these values; they
        // only decide that every worker may leave.
        let all = self.state[..self.num_tasks as usize]
            .iter()
            .all(|w| state_parts(w.load(Ordering::Relaxed)).1 >= limit);
        if all {
            self.stopped.store(true, Ordering::Relaxed);
        }
    }

    /// The state words as they are now (for reports; Relaxed: read after
    /// the workers were joined, or racy diagnostics).
    pub fn snapshot(&self) -> Vec<u64> {
        self.state
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }

    /// `done` of `task` as seen by a readiness check.
    #[inline]
    fn done(&self, task: u32) -> u32 {
        // Acquire pairs with the release store that published this count
        // (`publish`, or a producer PE's `signal_remote` for a proxy): the
        // predecessor instance's body (its data) happens before whatever
        // instance we claim on its basis.
        state_parts(self.state[task as usize].load(Ordering::Acquire)).1
    }

    /// Are instance `n`'s predecessors of `d` done (the device's
    /// `preds_ready_batch`)? One predecessor: one Acquire load. Several:
    /// Relaxed loads (the device overlaps them), then, when all are done,
    /// one Acquire fence, which pairs with the Release publishes they read.
    fn preds_ready(&self, lowered: &LoweredGraph, d: &TaskDesc, n: u32) -> bool {
        let preds = lowered.preds(d);
        let need = |e: &autarky_shared::Edge| (n + 1).saturating_sub(e.distance);
        if preds.len() <= 1 {
            return preds.iter().all(|e| need(e) <= self.done(e.task));
        }
        let ready = preds
            .iter()
            .all(|e| need(e) <= state_parts(self.state[e.task as usize].load(Ordering::Relaxed)).1);
        #[cfg(all(test, loom))]
        if self.mutant_ready_without_fence {
            return ready;
        }
        if ready {
            fence(Ordering::Acquire);
        }
        ready
    }

    /// Stores instance `i`'s completion into every consumer PE's proxy word
    /// of `d` (the device's `publish_remote`), BEFORE the local publish:
    /// the producer's next instance is claimed only after that publish is
    /// acquired, so its own proxy store comes later and the proxy word only
    /// increases. Release: the body's writes (including stores into peers'
    /// heaps) happen before any consumer's acquire of the proxy.
    fn signal_remote(lowered: &LoweredGraph, d: &TaskDesc, i: u32, peers: &[TaskStates]) {
        for r in lowered.remotes(d) {
            peers[r.pe as usize].state[r.slot as usize]
                .store(state_word(i + 1, i + 1), Ordering::Release);
        }
    }

    /// Counts a finished task when `done` reached `limit` (read at the
    /// start of the completion, as on the device).
    fn count_finished(&self, done: u32, limit: u32) -> Completion {
        if done != limit {
            return Completion {
                task_finished: false,
                run_finished: false,
            };
        }
        // Relaxed is enough: the counter's RMWs are totally ordered, so
        // exactly one completion sees `num_tasks - 1`; nothing is published
        // through it (the host joins the workers before reading results).
        let finished = self.tasks_finished.fetch_add(1, Ordering::Relaxed) + 1;
        Completion {
            task_finished: true,
            run_finished: finished == self.num_tasks,
        }
    }

    /// Completes instance `iteration` of the dynamic compute task `task`
    /// (which the caller ran after claiming it) and claims every instance
    /// this completion made ready, appending them to `claims` in check
    /// order: its own next instance when folded, early claims, then the
    /// re-checks (successor-table order, then `task` itself). `peers` are
    /// every PE's states (this one included), for remote outs.
    #[cfg(test)]
    pub fn complete(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        iteration: u32,
        peers: &[TaskStates],
        claims: &mut Vec<(u32, u32)>,
    ) -> Completion {
        self.complete_with(lowered, task, iteration, peers, claims, None)
    }

    /// [`Self::complete`] by a worker that may owe publishes (`pending`,
    /// see [`Pending`]): a deferrable completion adds its publish to them;
    /// any other makes the owed ones first, under the fence of its own.
    /// A deferred completion reports no finished task (the flush counts
    /// it); `run_finished` includes a flush this completion made.
    pub fn complete_with(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        iteration: u32,
        peers: &[TaskStates],
        claims: &mut Vec<(u32, u32)>,
        pending: Option<&mut Pending>,
    ) -> Completion {
        let word = &self.state[task as usize];
        // The word as this worker last left it: an owed (deferred) publish
        // of the task's previous instance is newer than the one in memory.
        debug_assert_eq!(
            state_parts(
                pending
                    .as_ref()
                    .and_then(|p| p.owed_word(task))
                    .unwrap_or_else(|| word.load(Ordering::Relaxed))
            ),
            (iteration + 1, iteration),
            "task {task} completes instance {iteration} it does not hold"
        );
        let done = iteration + 1;
        let limit = self.limit();
        let d = &lowered.tasks[task as usize];
        // Did making owed publishes finish the PE's run?
        let mut flush_finished = false;
        // Our own next instance, folded into the publish when it is already
        // ready (the device does the same): while our instance is in flight
        // (`claimed == done + 1`) nobody else can claim it, and predecessor
        // progress only grows, so "ready" seen now stays true.
        let self_next = done < limit;
        // The limit is read again after the predecessors' acquire loads: a
        // stopping predecessor lowers it before publishing, so a claim that
        // saw its publish also sees the lowered limit (exact early finish
        // for every task that depends on the stopping instance).
        // A task of two or more successor edges checks its own next
        // instance after the publish, with them (the re-check below), as
        // the device's block-wide completion does: there the check before
        // the publish held the publish back by two round trips on one
        // thread (session 35: −14 % on a dynamic stencil). (The device also
        // checks late for a task of one successor edge that completes
        // block-wide — a wide task, or a successor of many predecessors —
        // and folds here; both orders are the protocol's, and the re-check
        // after the publish is the one every other successor gets.)
        let fold_first = lowered.succs(d).len() < 2;
        let self_claimed =
            self_next && fold_first && self.preds_ready(lowered, d, done) && done < self.limit();
        if self_claimed {
            claims.push((task, done));
        }
        // Early claims (the device's fast path does the same): a successor
        // whose only predecessor edge is this one is ready once our instance
        // is done, so it is claimed before we publish. Its runner gets our
        // data through the worker that ran us (it keeps or queues the claim
        // after this call; the queue hands it over with release/acquire).
        // `open` records whether anything that could depend on our publish
        // is still unclaimed.
        let mut open = self_next && !self_claimed;
        // Does a check after the publish need the SeqCst fence? Every one
        // but a counted task's: its arrivals and its own gate are RMWs on
        // its counter (see `arrive`).
        let mut sc = open && !lowered.is_counted(d);
        // Did an early claim take a compute successor (one this worker may
        // keep: comm instances always go to the comm ring)?
        let mut kept_successor = false;
        for e in lowered.succs(d) {
            let n = iteration + e.distance;
            if n >= limit {
                continue;
            }
            if e.pred_count != 1 {
                open = true;
                sc |= !lowered.is_counted(&lowered.tasks[e.task as usize]);
                continue;
            }
            if n == 0 {
                // Its first instance (we are instance 0, the edge has
                // distance 0): nobody can see it ready before our publish
                // and it has no earlier instance, so its word is still
                // (0, 0) and nobody else writes it until then; a plain
                // store claims it (the device saves the CAS's round trip).
                // Ordered before our publish by the publish's Release (or
                // the flush's fence).
                self.state[e.task as usize].store(state_word(1, 0), Ordering::Relaxed);
                kept_successor |= !lowered.is_comm(e.task);
                claims.push((e.task, n));
                continue;
            }
            // Acquire on success, as in `try_claim`. Failure: the successor's
            // previous instance is in flight (or not yet published); its own
            // completion or our re-check below claims it.
            match self.state[e.task as usize].compare_exchange(
                state_word(n, n),
                state_word(n + 1, n),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    kept_successor |= !lowered.is_comm(e.task);
                    claims.push((e.task, n));
                }
                Err(_) => {
                    open = true;
                    sc = true;
                }
            }
        }
        Self::signal_remote(lowered, d, iteration, peers);
        // A plain store is enough: while the instance is in flight
        // (`claimed == done + 1`) every CAS on this word expects
        // `claimed == done` and fails, so we are the only writer.
        // Release publishes the body's writes to every worker that
        // acquires this `done` in a readiness check (`Self::done`,
        // `try_claim`'s load).
        let published = if self_claimed {
            state_word(done + 1, done)
        } else {
            state_word(done, done)
        };
        if let Some(pending) = pending {
            // The device defers only on its fast path (thread 0 alone):
            // few predecessors, at most one successor edge, itself of few
            // predecessors and not counted.
            let fast = d.pred_count <= SMALL_FAN_IN
                && match lowered.succs(d) {
                    [] => true,
                    [e] => {
                        e.pred_count <= SMALL_FAN_IN
                            && !lowered.is_counted(&lowered.tasks[e.task as usize])
                    }
                    _ => false,
                };
            // A join's input running ahead (the device's fast path with a
            // counted successor, its next instance kept): the publish and
            // the arrival are owed together.
            let owed_arrival = match lowered.succs(d) {
                [e] if d.pred_count <= SMALL_FAN_IN
                    && !lowered.is_counted(d)
                    && e.pred_count > 1
                    && lowered.is_counted(&lowered.tasks[e.task as usize])
                    && iteration + e.distance < limit
                    && self_claimed
                    && d.remote_count == 0
                    && d.pinned_succs == 0
                    && !matches!(pending.arrivals, Some((t, first, k))
                        if t != e.task || (self.slots && u64::from(first) + k != u64::from(iteration + e.distance)))
                    && pending.defers_arrivals() =>
                {
                    Some((e.task, iteration + e.distance))
                }
                _ => None,
            };
            if let Some((join, n)) = owed_arrival {
                pending.owe(task, published, done == limit);
                let run_finished = if pending.owe_arrival(join, n) >= ARRIVE_BATCH {
                    self.flush_arrivals(lowered, pending, claims)
                } else {
                    pending.len() == PEND_MAX && self.flush(pending)
                };
                return Completion {
                    task_finished: false,
                    run_finished,
                };
            }
            if fast
                && !open
                && (self_claimed || kept_successor)
                && d.remote_count == 0
                && d.pinned_succs == 0
            {
                pending.owe(task, published, done == limit);
                let run_finished = pending.len() == PEND_MAX && self.flush(pending);
                return Completion {
                    task_finished: false,
                    run_finished,
                };
            }
            if pending.len() > 0 {
                // Owed publishes and ours under one fence.
                pending.owe(task, published, false);
                flush_finished = self.flush(pending);
            } else {
                word.store(published, Ordering::Release);
            }
            // Owed arrivals (their publishes are made) before ours.
            if pending.arrivals.is_some() {
                flush_finished |= self.flush_arrivals(lowered, pending, claims);
            }
        } else {
            word.store(published, Ordering::Release);
        }
        if open {
            // A SeqCst fence is needed here. If the store above could be
            // reordered after the loads in the checks below, two
            // predecessors finishing together could each read the other's
            // old `done`, both find the successor not ready, and the
            // successor would never be scheduled. With a SeqCst fence
            // between publish and check in every completion that checks
            // (and in every proxy relay), the completion whose fence is last
            // in the single total order of SeqCst fences sees every other
            // store that preceded an earlier fence, so at least one check
            // sees the successor ready. The same argument covers the self
            // edge. A completion that claimed everything early reads nothing
            // after its publish and needs no fence: nothing that depends on
            // that publish is left unclaimed. Nor does one whose open
            // checks are all of counted tasks (`sc` false): those go
            // through the counter's RMWs (see `arrive`).
            if sc {
                fence(Ordering::SeqCst);
            }
            let mut last = None;
            for e in lowered.succs(d) {
                if lowered.is_counted(&lowered.tasks[e.task as usize]) {
                    // A counted successor: one arrival per edge (two edges
                    // to it arrive twice), then the check, gated by the
                    // count the arrival returned. (Slots: the arrival at
                    // its slot, whose filler claims.)
                    if self.slots {
                        self.arrive_slots(e, iteration, 1, limit, claims);
                        continue;
                    }
                    let arrived = self.arrive(e.task, 1);
                    if let Some(n) = self.try_claim_gated(lowered, e.task, limit, Some(arrived)) {
                        claims.push((e.task, n));
                    }
                    continue;
                }
                // The successor table is sorted by task, so the same
                // successor through a distance-0 and a distance-1 edge is
                // adjacent. Successors claimed above fail here (their
                // `claimed != done`, or their next instance is not ready).
                if last == Some(e.task) {
                    continue;
                }
                last = Some(e.task);
                if let Some(n) = self.try_claim(lowered, e.task, limit) {
                    claims.push((e.task, n));
                }
            }
            // The implicit self edge: our completion may make our next
            // instance ready.
            if self_next && !self_claimed {
                let gate = self.self_gate(lowered, d, task);
                if let Some(n) = self.try_claim_gated(lowered, task, limit, gate) {
                    claims.push((task, n));
                }
            }
        }
        let c = self.count_finished(done, limit);
        Completion {
            task_finished: c.task_finished,
            run_finished: c.run_finished || flush_finished,
        }
    }

    /// The Release fence before deferred Relaxed publishes (`flush`, a
    /// round's release); the loom mutant `mutant_flush_without_fence`
    /// leaves it out.
    fn release_fence(&self) {
        #[cfg(all(test, loom))]
        if self.mutant_flush_without_fence {
            return;
        }
        fence(Ordering::Release);
    }

    /// Makes the publishes `pending` owes (see [`Pending`]): one Release
    /// fence, then a Relaxed store of each word, then the owed
    /// `tasks_finished` increments. Returns whether that finished the PE's
    /// run.
    pub fn flush(&self, pending: &mut Pending) -> bool {
        if pending.owed.is_empty() {
            return false;
        }
        self.release_fence();
        for &(t, w) in &pending.owed {
            self.state[t as usize].store(w, Ordering::Relaxed);
        }
        pending.owed.clear();
        let k = std::mem::take(&mut pending.finished);
        k > 0 && self.tasks_finished.fetch_add(k, Ordering::Relaxed) + k == self.num_tasks
    }

    /// [`Self::flush`], then the owed arrivals (one RMW, see [`Pending`])
    /// and the check of the join they call for, its claim appended to
    /// `claims`. Returns whether the flush finished the PE's run.
    pub fn flush_arrivals(
        &self,
        lowered: &LoweredGraph,
        pending: &mut Pending,
        claims: &mut Vec<(u32, u32)>,
    ) -> bool {
        let finished = self.flush(pending);
        if let Some((join, first, k)) = pending.arrivals.take() {
            if self.slots {
                self.flush_slot_arrivals(lowered, join, first, k, claims);
                return finished;
            }
            let arrived = self.arrive(join, k);
            if let Some(n) = self.try_claim_gated(lowered, join, self.limit(), Some(arrived)) {
                claims.push((join, n));
            }
        }
        finished
    }

    /// Completes instance `iteration` of the dynamic comm task `task` (the
    /// device's `complete_serial`): remote outs, the release publish, the
    /// fence, then the re-check of every successor and of `task` itself.
    /// Nothing is folded or claimed early (a comm worker keeps nothing).
    pub fn complete_serial(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        iteration: u32,
        peers: &[TaskStates],
        claims: &mut Vec<(u32, u32)>,
    ) -> Completion {
        let word = &self.state[task as usize];
        debug_assert_eq!(
            state_parts(word.load(Ordering::Relaxed)),
            (iteration + 1, iteration),
            "comm task {task} completes instance {iteration} it does not hold"
        );
        let d = &lowered.tasks[task as usize];
        let done = iteration + 1;
        Self::signal_remote(lowered, d, iteration, peers);
        // Release: as in `complete`; we are the only writer while in flight.
        word.store(state_word(done, done), Ordering::Release);
        // Publish → SeqCst fence → read, as in `complete`.
        fence(Ordering::SeqCst);
        let limit = self.limit();
        self.recheck_successors(lowered, d, limit, iteration, 1, claims);
        if done < limit {
            let gate = self.self_gate(lowered, d, task);
            if let Some(n) = self.try_claim_gated(lowered, task, limit, gate) {
                claims.push((task, n));
            }
        }
        self.count_finished(done, limit)
    }

    /// Completes instance `n` of the pinned task `task` (the device's
    /// `complete_pinned`): remote outs, the release publish and — only when
    /// `task` has dynamic successors — the fence and their re-checks.
    /// Nobody claims a pinned task, so its word is `(n + 1, n + 1)` after.
    pub fn complete_pinned(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        n: u32,
        peers: &[TaskStates],
        claims: &mut Vec<(u32, u32)>,
        known: u32,
    ) -> Completion {
        let d = &lowered.tasks[task as usize];
        Self::signal_remote(lowered, d, n, peers);
        // Release: the body's writes are visible to whoever acquires
        // done = n + 1 (a readiness check or a pinned poll's fence). The
        // only writer: nobody claims a pinned task, so the word's claimed
        // half carries the limit the worker knows (`known`, its own
        // finish_at folded in): `pinned_state_word`.
        self.state[task as usize].store(pinned_state_word(n + 1, known), Ordering::Release);
        if d.succ_count > 0 {
            // Publish → SeqCst fence → read, as in `complete`.
            fence(Ordering::SeqCst);
            let limit = self.limit();
            self.recheck_successors(lowered, d, limit, n, 1, claims);
        }
        // The last instance below the limit the worker knows (one that
        // missed a lowered limit does not count: `detect_stop` ends the
        // run once every task is done up to it).
        self.count_finished(n + 1, known)
    }

    /// Completes instance `n` of every task of a round list (`list`, which
    /// [`LoweredGraph::is_round_list`] accepts: no dynamic or remote
    /// successors) after its last body: one Release fence, then each task's
    /// word stored Relaxed (the device's `pinned_round`: a release fence
    /// before strong stores; the fused chain's deferred publishes do the
    /// same), each carrying `known`. Returns how many of the list's tasks
    /// this finished and whether it finished the PE's run.
    pub fn complete_pinned_round(
        &self,
        lowered: &LoweredGraph,
        list: &[u32],
        n: u32,
        known: u32,
    ) -> (u32, bool) {
        debug_assert!(lowered.is_round_list(list));
        self.release_fence();
        let word = pinned_state_word(n + 1, known);
        for &t in list {
            self.state[t as usize].store(word, Ordering::Relaxed);
        }
        let (mut finished, mut run_finished) = (0, false);
        for _ in list {
            let c = self.count_finished(n + 1, known);
            finished += c.task_finished as u32;
            run_finished |= c.run_finished;
        }
        (finished, run_finished)
    }

    /// Are the predecessors of instance `n` of every task of the round list
    /// `list` from outside it done? (Edges inside the list are not
    /// awaited: the worker ran their instances before, in order.) As
    /// [`Self::preds_done_now`]: relaxed loads, one Acquire fence on
    /// success, the lowest limit the words carried.
    pub fn round_preds_done_now(
        &self,
        lowered: &LoweredGraph,
        list: &[u32],
        n: u32,
    ) -> Option<u32> {
        let mut low = u32::MAX;
        for &t in list {
            for e in lowered.preds(&lowered.tasks[t as usize]) {
                if n < e.distance || list.contains(&e.task) {
                    continue;
                }
                let word = self.state[e.task as usize].load(Ordering::Relaxed);
                if state_parts(word).1 < n + 1 - e.distance {
                    return None;
                }
                low = low.min(state_carried_limit(word));
            }
        }
        fence(Ordering::Acquire);
        Some(low)
    }

    /// The first task of the round list `list` one of whose outside
    /// predecessors is not done for instance `n` (for a wait's record).
    pub fn round_late_task(&self, lowered: &LoweredGraph, list: &[u32], n: u32) -> u32 {
        list.iter()
            .copied()
            .find(|&t| {
                lowered.preds(&lowered.tasks[t as usize]).iter().any(|e| {
                    n >= e.distance
                        && !list.contains(&e.task)
                        && state_parts(self.state[e.task as usize].load(Ordering::Relaxed)).1
                            < n + 1 - e.distance
                })
            })
            .unwrap_or(list[0])
    }

    /// The limit a pinned worker knows after an instance's acquire
    /// (the device's `fold_limit`): `known` lowered to what the awaited
    /// words carried (`low`, from [`TaskStates::preds_done_now`]; `u32::MAX`
    /// when none was awaited) or, when one of them carried none (`low ==
    /// 0`: a dynamic task's word, a proxy), to the limit read now — after
    /// the acquire, so a stopping predecessor's lowering is seen. Runs that
    /// cannot stop early keep `known`.
    pub fn fold_limit(&self, known: u32, low: u32) -> u32 {
        if !self.may_stop {
            return known;
        }
        let l = if low != 0 { low } else { self.limit() };
        l.min(known)
    }

    /// Are instance `n`'s predecessors of the pinned task `task` done now
    /// (the device's pinned polls)? One Relaxed poll of each; when all are
    /// done, an Acquire fence, which pairs with the Release publishes (local
    /// or a producer PE's proxy store) the polls read: their instances'
    /// data is visible to the body that runs next. The task's own previous
    /// instance needs no check: its worker ran it. `Some(low)` when done:
    /// the lowest limit the awaited words carried (`state_carried_limit`;
    /// 0 when one carried none, `u32::MAX` when none was awaited), for
    /// [`TaskStates::fold_limit`].
    pub fn preds_done_now(&self, lowered: &LoweredGraph, task: u32, n: u32) -> Option<u32> {
        self.preds_done_now_impl::<true>(lowered, task, n)
    }

    /// Mutant for the loom models: `preds_done_now` without its acquire
    /// fence (a model over it must report a causality violation).
    #[cfg(all(test, loom))]
    pub fn preds_done_now_without_fence(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        n: u32,
    ) -> Option<u32> {
        self.preds_done_now_impl::<false>(lowered, task, n)
    }

    fn preds_done_now_impl<const FENCE: bool>(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        n: u32,
    ) -> Option<u32> {
        let d = &lowered.tasks[task as usize];
        let mut low = u32::MAX;
        for e in lowered.preds(d) {
            if n < e.distance {
                continue;
            }
            let word = self.state[e.task as usize].load(Ordering::Relaxed);
            if state_parts(word).1 < n + 1 - e.distance {
                return None;
            }
            low = low.min(state_carried_limit(word));
        }
        if FENCE {
            fence(Ordering::Acquire);
        }
        Some(low)
    }

    /// Relays this comm worker's share of the proxies (`j ≡ share mod
    /// stride`) whose value changed since `seen[j]` to their dynamic
    /// successors, claiming what became ready (the device's
    /// `relay_proxies`), and calls `on_seen(proxy, done)` for every proxy
    /// it saw advance (before its fence, where the device records
    /// `SignalSeen`). Returns whether any proxy changed.
    pub fn relay_with(
        &self,
        lowered: &LoweredGraph,
        share: u32,
        stride: u32,
        seen: &mut [u32],
        claims: &mut Vec<(u32, u32)>,
        on_seen: impl FnMut(u32, u32),
    ) -> bool {
        self.relay_impl::<true>(lowered, share, stride, seen, claims, on_seen)
    }

    /// `relay_with` without a callback: the loom models' relay.
    #[cfg(all(test, loom))]
    pub fn relay(
        &self,
        lowered: &LoweredGraph,
        share: u32,
        stride: u32,
        seen: &mut [u32],
        claims: &mut Vec<(u32, u32)>,
    ) -> bool {
        self.relay_impl::<true>(lowered, share, stride, seen, claims, |_, _| {})
    }

    /// Mutant for the loom models: `relay` without its SeqCst fence (a
    /// model over it must lose a successor).
    #[cfg(all(test, loom))]
    pub fn relay_without_fence(
        &self,
        lowered: &LoweredGraph,
        share: u32,
        stride: u32,
        seen: &mut [u32],
        claims: &mut Vec<(u32, u32)>,
    ) -> bool {
        self.relay_impl::<false>(lowered, share, stride, seen, claims, |_, _| {})
    }

    fn relay_impl<const FENCE: bool>(
        &self,
        lowered: &LoweredGraph,
        share: u32,
        stride: u32,
        seen: &mut [u32],
        claims: &mut Vec<(u32, u32)>,
        mut on_seen: impl FnMut(u32, u32),
    ) -> bool {
        let mut changed = false;
        for j in (share..lowered.num_proxies).step_by(stride.max(1) as usize) {
            let t = lowered.num_tasks + j;
            let d = &lowered.tasks[t as usize];
            if d.succ_count == 0 {
                continue; // only pinned consumers: they poll it themselves
            }
            // Relaxed poll; the fence below turns it into an acquire of the
            // producer's release store when it saw a new value.
            let v = state_parts(self.state[t as usize].load(Ordering::Relaxed)).1;
            if v == seen[j as usize] {
                continue;
            }
            // The producer instances this relay is the first to see: their
            // arrivals at counted successors.
            let from = seen[j as usize];
            let arrivals = u64::from(v.wrapping_sub(from));
            seen[j as usize] = v;
            changed = true;
            on_seen(t, v);
            // SeqCst: acquires the producer's release (the load above read
            // it), and is the mirror image of a local completion's publish →
            // fence → read. Of a local predecessor's completion (publish;
            // fence F1; read the proxy) and this relay (read the proxy's new
            // value; fence F2; read the local predecessor), at least one
            // sees the other's store: if the completion read the old proxy
            // value, that read is coherence-ordered before the producer's
            // store, which happens before F2, so F1 precedes F2 in the SC
            // order and the relay's read after F2 sees the local publish.
            if FENCE {
                fence(Ordering::SeqCst);
            }
            let limit = self.limit();
            self.recheck_successors(lowered, d, limit, from, arrivals, claims);
        }
        changed
    }

    /// The re-check of every (dynamic) successor of `d`, claims appended:
    /// what a completion that may not keep anything runs after its fence
    /// (comm tasks, pinned tasks, relays). `arrivals`: the predecessor
    /// instances this re-check announces to counted successors (1 for a
    /// completion; for a relay, how far the proxy advanced), from the
    /// predecessor's instance `first`.
    fn recheck_successors(
        &self,
        lowered: &LoweredGraph,
        d: &autarky_shared::TaskDesc,
        limit: u32,
        first: u32,
        arrivals: u64,
        claims: &mut Vec<(u32, u32)>,
    ) {
        for e in lowered.succs(d) {
            if self.slots && lowered.is_counted(&lowered.tasks[e.task as usize]) {
                self.arrive_slots(e, first, arrivals, limit, claims);
                continue;
            }
            let gate = lowered
                .is_counted(&lowered.tasks[e.task as usize])
                .then(|| self.arrive(e.task, arrivals));
            if let Some(n) = self.try_claim_gated(lowered, e.task, limit, gate) {
                claims.push((e.task, n));
            }
        }
    }

    /// Adds `k` arrivals to the counted task `task` and returns the count
    /// after them (the device's `arrive`). Called after the caller's publish
    /// (or, for a relay, after it acquired the producer's signal).
    ///
    /// AcqRel, and no fence: every completion that concerns a counted task
    /// is an RMW on its counter — each predecessor instance's arrival, and
    /// the task's own completion, which adds nothing (`self_gate`). RMWs on
    /// one counter are totally ordered and each reads what the one before
    /// it wrote (a release sequence), so of the last arrival an instance
    /// needs and the task's completion of the instance before it, the later
    /// one synchronizes with the other and sees its publish: either the
    /// arrival reads the task's word with the instance open, or the task's
    /// self check reads the full count. (The device's earlier protocol, an
    /// SC fence after each RMW and a plain read of the counter by the task,
    /// was a store-buffering pattern with two more fences on every input's
    /// path; the loom mutant `SelfGateByLoad` shows that without the
    /// task's RMW the successor is lost.)
    fn arrive(&self, task: u32, k: u64) -> u64 {
        self.arrivals[task as usize].fetch_add(k, Ordering::AcqRel) + k
    }

    /// The word that holds slot `j` of the counted task `task` (arrival
    /// slots, [`SLOT_FIELDS`] to a word: the count is its field
    /// [`slot_count`]`(word, j)`).
    fn slot_word(&self, task: u32, j: u32) -> &AtomicU64 {
        let base = self.arrivals[task as usize].load(Ordering::Relaxed) as usize;
        &self.arrivals[base + slot_word(j) as usize]
    }

    /// Slot `j`'s count, loaded with `order`.
    fn slot_load(&self, task: u32, j: u32, order: Ordering) -> u64 {
        u64::from(slot_count(self.slot_word(task, j).load(order), j))
    }

    /// Adds `k` arrivals to slot `j` (an RMW of its word with `order`);
    /// returns the count before.
    fn slot_add(&self, task: u32, j: u32, k: u64, order: Ordering) -> u64 {
        let old = self.slot_word(task, j).fetch_add(k << slot_shift(j), order);
        u64::from(slot_count(old, j))
    }

    /// Arrival slots (the device's `slots_arrive`): the arrivals of the
    /// predecessor instances `first..first + k` over edge `e`, at the slots
    /// of instances `first + distance..` below `limit`, one AcqRel RMW
    /// each. The arrival that fills a slot claims that instance when it is
    /// the task's next and nobody runs the task (`slot_claim`). The same
    /// argument as `arrive`'s, made exact: the last arrival instance `j`
    /// needs and the task's completion of `j - 1` (whose self gate is an
    /// RMW of 0 on slot `j`) are RMWs on one word, and the later one sees
    /// the other's publish.
    fn arrive_slots(&self, e: &Edge, first: u32, k: u64, limit: u32, claims: &mut Vec<(u32, u32)>) {
        for x in 0..k {
            let j = u64::from(first) + x + u64::from(e.distance);
            if j >= u64::from(limit) {
                break;
            }
            let j = j as u32;
            if self.slot_add(e.task, j, 1, Ordering::AcqRel) + 1 == u64::from(e.pred_count) {
                if let Some(n) = self.slot_claim(e.task, j) {
                    claims.push((e.task, n));
                }
            }
        }
    }

    /// Owed arrivals with slots (the device's `flush_arrivals`): a Release
    /// fence, a Relaxed RMW at each word of the slots (one add for the
    /// word's slots among them; a release pattern: whoever acquires a
    /// slot's count sees the owed publishes), then, if one of them filled
    /// a slot, an Acquire fence before the claim.
    fn flush_slot_arrivals(
        &self,
        lowered: &LoweredGraph,
        join: u32,
        first: u32,
        k: u64,
        claims: &mut Vec<(u32, u32)>,
    ) {
        let pc = u64::from(lowered.tasks[join as usize].pred_count);
        fence(Ordering::Release);
        let mut filled = Vec::new();
        let end = first + k as u32;
        let mut j = first;
        while j < end {
            let mask = slot_add_mask(j, end - j);
            let old = self.slot_word(join, j).fetch_add(mask, Ordering::Relaxed);
            for x in j..end {
                if slot_word(x) != slot_word(j) {
                    break;
                }
                if u64::from(slot_count(old, x)) + 1 == pc {
                    filled.push(x);
                }
            }
            j = (slot_word(j) as u32 + 1) * SLOT_FIELDS;
        }
        if filled.is_empty() {
            return;
        }
        fence(Ordering::Acquire);
        let (claimed, done) = state_parts(self.state[join as usize].load(Ordering::Relaxed));
        if claimed == done && filled.contains(&done) {
            if let Some(n) = self.slot_claim(join, done) {
                claims.push((join, n));
            }
        }
    }

    /// After an arrival that filled slot `j` of `task` (acquired): claims
    /// instance `j` if it is the task's next, nobody runs the task, and it
    /// is below the limit.
    fn slot_claim(&self, task: u32, j: u32) -> Option<u32> {
        let word = &self.state[task as usize];
        let current = word.load(Ordering::Relaxed);
        if state_parts(current) != (j, j) || j >= self.limit() {
            return None;
        }
        Self::claim_cas(word, current, j)
    }

    /// Claims instance `n` of a task whose word read `current` (idle at
    /// `n`): the CAS decides ownership. Words only increase, so it succeeds
    /// exactly when nobody claimed instance `n` since that load (no ABA).
    /// Acquire on success: ownership alone implies visibility of the
    /// previous instance's writes (it reads the same value the load that
    /// found it idle did). No Release: no reader needs it (a `claimed !=
    /// done` word only makes others skip); the claimed instance's runner
    /// gets our data from this worker, or through the queue's
    /// release/acquire. The device's claim is `atom.acquire` too. Relaxed
    /// on failure: someone else claimed it and we do nothing.
    fn claim_cas(word: &AtomicU64, current: u64, n: u32) -> Option<u32> {
        word.compare_exchange(
            current,
            state_word(n + 1, n),
            Ordering::Acquire,
            Ordering::Relaxed,
        )
        .ok()
        .map(|_| n)
    }

    /// The gate of a task's check of its own next instance, after its
    /// publish: the counter, read by an RMW that adds nothing (AcqRel, see
    /// `arrive`) when `d` is counted, else none. With slots: the slot of
    /// its next instance, read the same way; `u64::MAX` when it is full,
    /// else 0.
    fn self_gate(&self, lowered: &LoweredGraph, d: &TaskDesc, task: u32) -> Option<u64> {
        if self.slots && lowered.is_counted(d) {
            let n = state_parts(self.state[task as usize].load(Ordering::Relaxed)).1;
            if n >= self.iterations {
                return Some(0);
            }
            #[cfg(all(test, loom))]
            let count = if self.mutant_self_gate_by_load {
                self.slot_load(task, n, Ordering::Acquire)
            } else {
                self.slot_add(task, n, 0, Ordering::AcqRel)
            };
            #[cfg(not(all(test, loom)))]
            let count = self.slot_add(task, n, 0, Ordering::AcqRel);
            return Some(if count >= u64::from(d.pred_count) {
                u64::MAX
            } else {
                0
            });
        }
        lowered.is_counted(d).then(|| {
            #[cfg(all(test, loom))]
            if self.mutant_self_gate_by_load {
                return self.arrivals[task as usize].load(Ordering::Acquire);
            }
            self.arrivals[task as usize].fetch_add(0, Ordering::AcqRel)
        })
    }

    /// Checks whether the next instance of the dynamic task `task` is ready
    /// (and below `limit`, the limit the caller read, and the limit read
    /// again after the readiness loads) and, if so, claims it. Returns the
    /// claimed iteration.
    pub fn try_claim(&self, lowered: &LoweredGraph, task: u32, limit: u32) -> Option<u32> {
        self.try_claim_gated(lowered, task, limit, None)
    }

    /// `try_claim`, skipping the predecessor reads when `gate` (an arrival
    /// count of the counted task `task`) is below what its next instance
    /// needs: some predecessor instance it needs has not arrived, and that
    /// arrival's own check (or `task`'s self check) comes later.
    pub fn try_claim_gated(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        limit: u32,
        gate: Option<u64>,
    ) -> Option<u32> {
        let word = &self.state[task as usize];
        // Acquire pairs with the release store of the completion that
        // published this `done` (the self edge: the previous instance's
        // body happens before the next one).
        let current = word.load(Ordering::Acquire);
        let (claimed, done) = state_parts(current);
        if claimed != done {
            // An instance is in flight; its completion re-checks this task
            // (self edge) after its own publish and fence.
            return None;
        }
        let n = claimed;
        if n >= limit {
            return None;
        }
        // `done[task] >= n` holds (done == claimed == n); check the
        // predecessors. `done` only increases, so a predecessor seen done
        // stays done and the readiness we establish here cannot be undone.
        let d = &lowered.tasks[task as usize];
        let mut known = false;
        if let Some(count) = gate {
            if self.slots && lowered.is_counted(d) {
                // Slots: the gate says whether the slot of the instance the
                // caller saw next was full. That instance may have run
                // since (another worker claimed it when its slot filled,
                // and completed it): n is then a later one, whose own
                // completion's gate is responsible for it. So the slot of
                // n itself decides, acquired (whoever filled it released
                // every arrival before it); the device's claims name
                // their instance and fail the same way.
                if count != u64::MAX
                    || self.slot_load(task, n, Ordering::Acquire) < u64::from(d.pred_count)
                {
                    return None;
                }
                known = true;
            } else if count < arrivals_needed(d.pred_count, d.pred_distance_sum, n) {
                return None;
            }
        }
        let ready = known || self.preds_ready(lowered, d, n);
        // The limit again, after the acquire loads (see `complete`).
        if !ready || n >= self.limit() {
            return None;
        }
        Self::claim_cas(word, current, n)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    use crate::emulator::test_lowered as lowered;

    #[test]
    fn a_slot_gate_read_for_one_instance_never_claims_the_next() {
        // Join 2 of inputs 0 and 1 (slots). Its completion of instance 0
        // finds slot 1 full; before its check, another worker claims
        // instance 1 (the filling arrival) and completes it. The gate
        // (slot 1 full) must not claim instance 2, whose slot is empty
        // (found by proptest_emulator: instance 2 ran before its inputs).
        let run =
            crate::emulator::test_lowered_run_counted(&[0; 3], &[], &[(0, 2, 0), (1, 2, 0)], 2);
        let l = &run.pes[0];
        let s = TaskStates::with_slots(l, 3, true);
        s.state[2].store(state_word(1, 1), Ordering::Relaxed);
        s.slot_add(2, 1, 2, Ordering::Relaxed);
        let gate = s.self_gate(l, &l.tasks[2], 2);
        assert_eq!(gate, Some(u64::MAX), "slot 1 is full");
        s.state[2].store(state_word(2, 2), Ordering::Relaxed);
        assert_eq!(
            s.try_claim_gated(l, 2, 3, gate),
            None,
            "instance 2's slot is empty"
        );
        // Its slot full, the same stale gate claims it.
        s.slot_add(2, 2, 2, Ordering::Relaxed);
        assert_eq!(s.try_claim_gated(l, 2, 3, gate), Some(2));
    }

    /// A slot counts to 65 535 (a 16-bit field): a join of that many
    /// inputs counts with slots, one of one more with one counter (on the
    /// GPU and the emulator alike: both ask `uses_arrival_slots`).
    #[test]
    fn a_join_wider_than_a_slot_counts_with_one_counter() {
        use crate::runtime::source::uses_arrival_slots;
        for (inputs, slots) in [
            (autarky_shared::SLOT_MAX_COUNT as usize, true),
            (65_536, false),
        ] {
            let edges: Vec<_> = (0..inputs).map(|i| (i, inputs, 0)).collect();
            let run =
                crate::emulator::test_lowered_run_counted(&vec![0; inputs + 1], &[], &edges, 2);
            assert_eq!(run.pes[0].counted_fit_slots(), slots, "{inputs} inputs");
            assert_eq!(
                uses_arrival_slots(&run, 10, u64::MAX),
                slots,
                "{inputs} inputs"
            );
        }
    }

    #[test]
    fn arrival_slots_start_with_the_edges_that_reach_before_instance_0() {
        // 0 → 3 (distance 0), 1 → 3 (distance 1), 2 → 3 (distance 2);
        // every join of 2 or more counted.
        let run = crate::emulator::test_lowered_run_counted(
            &[0; 4],
            &[],
            &[(0, 3, 0), (1, 3, 1), (2, 3, 2)],
            2,
        );
        let l = &run.pes[0];
        assert_eq!(l.arrival_slot_words(4), 4 + 1);
        assert_eq!(l.arrival_slot_words(5), 4 + 2);
        // Word 3 is the join's slot base; its slots 0..4 (the four fields
        // of word 4) start with the edges of distance > j (2 at slot 0, 1
        // at slot 1, none after).
        assert_eq!(l.initial_arrival_slots(4), [0, 0, 0, 4, 2 | 1 << 16]);
        // Instance 0 then needs only 0's arrival, instance 1 two more.
        let s = [TaskStates::with_slots(l, 4, true)];
        let mut claims = Vec::new();
        s[0].complete(l, 0, 0, &s, &mut claims);
        assert!(
            claims.contains(&(3, 0)),
            "0's arrival fills slot 0: {claims:?}"
        );
        assert_eq!(s[0].slot_load(3, 1, Ordering::Relaxed), 1);
    }

    #[test]
    fn fused_chain_owes_its_publishes_until_the_flush() {
        // 0 → 1 → 2, one iteration: 0 claims 1 early (a plain store: its
        // first instance) and owes its publish; so does 1; 2 (no successor,
        // nothing kept) publishes with the owed ones under one fence.
        let l = lowered(3, &[(0, 1, 0), (1, 2, 0)]);
        let s = [TaskStates::new(&l, 1)];
        let mut pending = Pending::default();
        let mut claims = Vec::new();
        let c = s[0].complete_with(&l, 0, 0, &s, &mut claims, Some(&mut pending));
        assert_eq!(claims, [(1, 0)]);
        assert!(
            !c.task_finished,
            "a deferred completion counts at the flush"
        );
        let words = s[0].snapshot();
        assert_eq!(state_parts(words[0]), (1, 0), "0 still reads in flight");
        assert_eq!(state_parts(words[1]), (1, 0), "1 is claimed");
        assert_eq!(pending.len(), 1);
        claims.clear();
        s[0].complete_with(&l, 1, 0, &s, &mut claims, Some(&mut pending));
        assert_eq!(claims, [(2, 0)]);
        assert_eq!(pending.len(), 2);
        claims.clear();
        let c = s[0].complete_with(&l, 2, 0, &s, &mut claims, Some(&mut pending));
        assert_eq!(pending.len(), 0, "a completion that keeps nothing flushes");
        assert!(
            c.task_finished && c.run_finished,
            "the flush's two and this one"
        );
        for w in s[0].snapshot() {
            assert_eq!(state_parts(w), (1, 1));
        }
        assert!(
            s[0].is_finished(),
            "the owed tasks_finished increments were made"
        );
    }

    #[test]
    fn self_chain_owes_one_publish_and_the_flush_makes_the_newest() {
        let l = lowered(1, &[]);
        let s = [TaskStates::new(&l, 4)];
        let mut pending = Pending::default();
        let mut claims = Vec::new();
        for i in 0..3 {
            claims.clear();
            s[0].complete_with(&l, 0, i, &s, &mut claims, Some(&mut pending));
            assert_eq!(claims, [(0, i + 1)], "the fold keeps the next instance");
            assert_eq!(pending.len(), 1, "one entry per task");
        }
        assert_eq!(state_parts(s[0].snapshot()[0]), (1, 0));
        assert!(!s[0].flush(&mut pending));
        assert_eq!(
            state_parts(s[0].snapshot()[0]),
            (4, 3),
            "instance 3 claimed, 3 done"
        );
    }

    #[test]
    fn completion_read_by_a_pinned_successor_publishes_at_once() {
        // 0 → 1 with 1 pinned: 1 polls 0's done, outside every successor
        // list, so 0 (which folds its next instance) must not defer.
        let run = crate::emulator::test_lowered_run(&[0, 0], &[(1, 0)], &[(0, 1, 0)]);
        let l = &run.pes[0];
        assert_eq!(l.tasks[0].pinned_succs, 1);
        let s = [TaskStates::new(l, 2)];
        let mut pending = Pending::default();
        let mut claims = Vec::new();
        s[0].complete_with(l, 0, 0, &s, &mut claims, Some(&mut pending));
        assert_eq!(claims, [(0, 1)]);
        assert_eq!(pending.len(), 0);
        assert_eq!(state_parts(s[0].snapshot()[0]), (2, 1));
    }

    #[test]
    fn successor_is_claimed_only_by_the_last_predecessor_to_complete() {
        let l = lowered(3, &[(0, 2, 0), (1, 2, 0)]);
        let s = [TaskStates::new(&l, 1)];
        let mut claims = Vec::new();
        s[0].complete(&l, 0, 0, &s, &mut claims);
        assert_eq!(claims, []);
        let c = s[0].complete(&l, 1, 0, &s, &mut claims);
        assert_eq!(claims, [(2, 0)]);
        assert!(c.task_finished && !c.run_finished);
        claims.clear();
        let c = s[0].complete(&l, 2, 0, &s, &mut claims);
        assert_eq!(claims, []);
        assert!(c.run_finished);
    }

    fn counted(n: usize, edges: &[(usize, usize, u32)]) -> LoweredGraph {
        crate::emulator::test_lowered_run_counted(&vec![0; n], &[], edges, 2)
            .pes
            .swap_remove(0)
    }

    #[test]
    fn counted_join_is_claimed_by_the_last_arrival_and_counts_every_edge() {
        // 0, 1, 2 → 3, all counted (counted_fan_in 2): three arrivals per
        // instance of 3; only the third completion claims it.
        let l = counted(4, &[(0, 3, 0), (1, 3, 0), (2, 3, 0)]);
        assert!(l.is_counted(&l.tasks[3]) && !l.is_counted(&l.tasks[0]));
        let s = [TaskStates::new(&l, 2)];
        let mut claims = Vec::new();
        for t in [2, 0] {
            s[0].complete(&l, t, 0, &s, &mut claims);
        }
        // 0 and 2 folded their own next instances; nothing of 3 yet.
        assert_eq!(claims, [(2, 1), (0, 1)]);
        assert_eq!(s[0].arrivals[3].load(Ordering::Relaxed), 2);
        claims.clear();
        s[0].complete(&l, 1, 0, &s, &mut claims);
        assert_eq!(claims, [(1, 1), (3, 0)]);
        assert_eq!(s[0].arrivals[3].load(Ordering::Relaxed), 3);
        // Instance 1 of 3: predecessors run ahead of 3, which is still
        // running instance 0; 3's own completion finds the count full.
        claims.clear();
        for t in [0, 1, 2] {
            s[0].complete(&l, t, 1, &s, &mut claims);
        }
        assert_eq!(claims, []);
        assert_eq!(s[0].arrivals[3].load(Ordering::Relaxed), 6);
        s[0].complete(&l, 3, 0, &s, &mut claims);
        assert_eq!(claims, [(3, 1)]);
    }

    #[test]
    fn counted_task_with_carried_edges_needs_only_the_instances_it_waits_for() {
        // 0 → 2 (distance 0), 1 → 2 (distance 2): instance n of 2 needs
        // instance n of 0 and n - 2 of 1, so instances 0 and 1 need one
        // arrival each from 0 only; arrivals_needed gives 1 and 2 (exact
        // from n + 1 = 2 on: 2 (n + 1) - 2).
        let l = counted(3, &[(0, 2, 0), (1, 2, 2)]);
        assert_eq!(l.tasks[2].pred_distance_sum, 2);
        let s = [TaskStates::new(&l, 4)];
        let mut claims = Vec::new();
        s[0].complete(&l, 0, 0, &s, &mut claims);
        assert!(claims.contains(&(2, 0)), "{claims:?}");
        claims.clear();
        s[0].complete(&l, 2, 0, &s, &mut claims);
        s[0].complete(&l, 0, 1, &s, &mut claims);
        assert!(claims.contains(&(2, 1)), "{claims:?}");
        claims.clear();
        s[0].complete(&l, 2, 1, &s, &mut claims);
        s[0].complete(&l, 0, 2, &s, &mut claims);
        assert!(
            !claims.iter().any(|&(t, _)| t == 2),
            "instance 2 of 2 needs instance 0 of 1: {claims:?}"
        );
        claims.clear();
        s[0].complete(&l, 1, 0, &s, &mut claims);
        assert!(claims.contains(&(2, 2)), "{claims:?}");
    }

    #[test]
    fn arrivals_needed_is_a_lower_bound_exact_once_past_the_largest_distance() {
        for dists in [&[0u32, 0, 0][..], &[0, 1], &[1, 1, 3], &[5], &[0, 2, 2, 7]] {
            let p = dists.len() as u32;
            let sum: u32 = dists.iter().sum();
            let max = *dists.iter().max().unwrap();
            for n in 0..20u32 {
                let exact: u64 = dists
                    .iter()
                    .map(|&d| u64::from((n + 1).saturating_sub(d)))
                    .sum();
                let bound = autarky_shared::arrivals_needed(p, sum, n);
                assert!(bound <= exact, "{dists:?} n={n}");
                if n + 1 >= max {
                    assert_eq!(bound, exact, "{dists:?} n={n}");
                }
            }
        }
    }

    #[test]
    fn carried_edge_holds_the_next_instance_until_the_predecessor_catches_up() {
        // 0 → 1 with distance 1: instance i of 1 needs instance i-1 of 0.
        let l = lowered(2, &[(0, 1, 1)]);
        assert_eq!(l.roots, [0, 1]);
        let s = [TaskStates::new(&l, 3)];
        let mut claims = Vec::new();
        s[0].complete(&l, 1, 0, &s, &mut claims);
        assert_eq!(
            claims,
            [],
            "instance 1 of task 1 must wait for instance 0 of task 0"
        );
        s[0].complete(&l, 0, 0, &s, &mut claims);
        // Our own next instance first (it is the one the worker keeps), then
        // the successor, claimed early: its only predecessor edge is ours.
        assert_eq!(claims, [(0, 1), (1, 1)]);
    }
}
