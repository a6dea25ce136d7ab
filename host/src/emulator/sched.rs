//! The per-task state words and the completion step: publish, fence, check,
//! claim. This is the device scheduler's protocol over the shim atomics, so
//! the loom models exercise exactly this code.

use super::sync::{fence, AtomicU32, AtomicU64, Ordering};
use crate::graph::LoweredGraph;
use autarky_shared::{state_parts, state_word};

/// What a completion changed besides claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Completion {
    /// This completion made the task's `done` reach `iterations`.
    pub task_finished: bool,
    /// This completion finished the last unfinished task: the run is over.
    pub run_finished: bool,
}

/// The scheduler state of one PE: one state word per task and the
/// termination counter.
pub(crate) struct TaskStates {
    /// `state[t] = (claimed << 32) | done`; see the module docs of
    /// `emulator` for who writes it.
    state: Box<[AtomicU64]>,
    /// Tasks whose `done` reached `iterations`; only increases.
    tasks_finished: AtomicU32,
    iterations: u32,
}

impl TaskStates {
    /// The initial state of `lowered` (roots claimed) for a run of
    /// `iterations`.
    pub fn new(lowered: &LoweredGraph, iterations: u32) -> Self {
        TaskStates {
            state: lowered
                .initial_state()
                .into_iter()
                .map(AtomicU64::new)
                .collect(),
            tasks_finished: AtomicU32::new(0),
            iterations,
        }
    }

    /// Iterations of the run.
    pub fn iterations(&self) -> u32 {
        self.iterations
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
        // Acquire pairs with the release store in `complete` that
        // published this count: the predecessor instance's body (its
        // data) happens before whatever instance we claim on its basis.
        state_parts(self.state[task as usize].load(Ordering::Acquire)).1
    }

    /// Completes instance `iteration` of `task` (which the caller ran after
    /// claiming it) and claims every instance this completion made ready,
    /// appending them to `claims` in check order: the successors of `task`
    /// (successor-table order), then `task` itself.
    pub fn complete(
        &self,
        lowered: &LoweredGraph,
        task: u32,
        iteration: u32,
        claims: &mut Vec<(u32, u32)>,
    ) -> Completion {
        let word = &self.state[task as usize];
        debug_assert_eq!(
            state_parts(word.load(Ordering::Relaxed)),
            (iteration + 1, iteration),
            "task {task} completes instance {iteration} it does not hold"
        );
        let done = iteration + 1;
        let d = &lowered.tasks[task as usize];
        // Our own next instance, folded into the publish when it is already
        // ready (the device does the same): while our instance is in flight
        // (`claimed == done + 1`) nobody else can claim it, and predecessor
        // progress only grows, so "ready" seen now stays true.
        let self_next = done < self.iterations;
        let self_claimed = self_next
            && lowered
                .preds(d)
                .iter()
                .all(|e| (done + 1).saturating_sub(e.distance) <= self.done(e.task));
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
        for e in lowered.succs(d) {
            let n = iteration + e.distance;
            if n >= self.iterations {
                continue;
            }
            if e.pred_count != 1 {
                open = true;
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
                Ok(_) => claims.push((e.task, n)),
                Err(_) => open = true,
            }
        }
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
        word.store(published, Ordering::Release);
        if open {
            // A SeqCst fence is needed here. If the store above could be
            // reordered after the loads in the checks below, two
            // predecessors finishing together could each read the other's
            // old `done`, both find the successor not ready, and the
            // successor would never be scheduled. With a SeqCst fence
            // between publish and check in every completion that checks,
            // the completion whose fence is last in the single total order
            // of SeqCst fences sees every other store that preceded an
            // earlier fence, so at least one check sees the successor
            // ready. The same argument covers the self edge. A completion
            // that claimed everything early reads nothing after its publish
            // and needs no fence: nothing that depends on that publish is
            // left unclaimed.
            fence(Ordering::SeqCst);
            let mut last = None;
            for e in lowered.succs(d) {
                // The successor table is sorted by task, so the same
                // successor through a distance-0 and a distance-1 edge is
                // adjacent. Successors claimed above fail here (their
                // `claimed != done`, or their next instance is not ready).
                if last == Some(e.task) {
                    continue;
                }
                last = Some(e.task);
                if let Some(n) = self.try_claim(lowered, e.task) {
                    claims.push((e.task, n));
                }
            }
            // The implicit self edge: our completion may make our next
            // instance ready.
            if self_next && !self_claimed {
                if let Some(n) = self.try_claim(lowered, task) {
                    claims.push((task, n));
                }
            }
        }

        if done != self.iterations {
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
            run_finished: finished as usize == self.state.len(),
        }
    }

    /// Checks whether the next instance of `task` is ready and, if so,
    /// claims it. Returns the claimed iteration.
    pub fn try_claim(&self, lowered: &LoweredGraph, task: u32) -> Option<u32> {
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
        if n >= self.iterations {
            return None;
        }
        // `done[task] >= n` holds (done == claimed == n); check the
        // predecessors. `done` only increases, so a predecessor seen done
        // stays done and the readiness we establish here cannot be undone.
        let d = &lowered.tasks[task as usize];
        let ready = lowered
            .preds(d)
            .iter()
            .all(|e| (n + 1).saturating_sub(e.distance) <= self.done(e.task));
        if !ready {
            return None;
        }
        // The CAS decides ownership: words only increase, so it succeeds
        // exactly when nobody claimed instance `n` since our load (no ABA).
        // Acquire on success: ownership alone implies visibility of the
        // previous instance's writes (it reads the same value the Acquire
        // load above did). No Release: no reader needs it (a `claimed !=
        // done` word only makes others skip); the claimed instance's runner
        // gets our data from this worker, or through the queue's
        // release/acquire. The device's claim is `atom.acquire` too.
        // Relaxed on failure: someone else claimed it and we do nothing.
        word.compare_exchange(
            current,
            state_word(n + 1, n),
            Ordering::Acquire,
            Ordering::Relaxed,
        )
        .ok()
        .map(|_| n)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    use crate::emulator::test_lowered as lowered;

    #[test]
    fn successor_is_claimed_only_by_the_last_predecessor_to_complete() {
        let l = lowered(3, &[(0, 2, 0), (1, 2, 0)]);
        let s = TaskStates::new(&l, 1);
        let mut claims = Vec::new();
        s.complete(&l, 0, 0, &mut claims);
        assert_eq!(claims, []);
        let c = s.complete(&l, 1, 0, &mut claims);
        assert_eq!(claims, [(2, 0)]);
        assert!(c.task_finished && !c.run_finished);
        claims.clear();
        let c = s.complete(&l, 2, 0, &mut claims);
        assert_eq!(claims, []);
        assert!(c.run_finished);
    }

    #[test]
    fn carried_edge_holds_the_next_instance_until_the_predecessor_catches_up() {
        // 0 → 1 with distance 1: instance i of 1 needs instance i-1 of 0.
        let l = lowered(2, &[(0, 1, 1)]);
        assert_eq!(l.roots, [0, 1]);
        let s = TaskStates::new(&l, 3);
        let mut claims = Vec::new();
        s.complete(&l, 1, 0, &mut claims);
        assert_eq!(
            claims,
            [],
            "instance 1 of task 1 must wait for instance 0 of task 0"
        );
        s.complete(&l, 0, 0, &mut claims);
        // Our own next instance first (it is the one the worker keeps), then
        // the successor, claimed early: its only predecessor edge is ours.
        assert_eq!(claims, [(0, 1), (1, 1)]);
    }
}
