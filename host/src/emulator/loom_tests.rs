//! loom models of the emulator's protocol: the real `TaskStates::complete`
//! / `try_claim` and `ReadyQueue::push` / `pop`, over loom's atomics (see
//! `sync.rs`), with tiny graphs and capacities so loom can explore the
//! interleavings.
//!
//! Task bodies write a `loom::cell::UnsafeCell` per instance and read the
//! cells of every instance they depend on, so a missing happens-before edge
//! (an ordering too weak) is reported by loom as a causality violation, and
//! a wrong order as a failed assertion.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test --release --lib emulator::loom_tests -- --nocapture`
//! (`LOOM_LOG=1` for loom's own log; `LOOM_MAX_PREEMPTIONS` overrides the
//! bounds set below).

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
use std::time::Instant;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use super::queue::{QueueWait, ReadyQueue};
use super::sched::TaskStates;
use crate::graph::LoweredGraph;
use autarky_shared::state_parts;

use super::test_lowered as lowered;

/// Runs `model` under loom with `preemption_bound`, printing how many
/// executions loom explored and how long it took.
fn check<F>(name: &str, preemption_bound: usize, model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = executions.clone();
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemption_bound);
    }
    // Spin-waits (queue polls) make long paths: every failed poll yields to
    // loom, which counts as a branch.
    builder.max_branches = builder.max_branches.max(100_000);
    let bound = builder.preemption_bound;
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, StdOrdering::Relaxed);
        model()
    });
    let n = executions.load(StdOrdering::Relaxed);
    eprintln!(
        "loom model {name}: {n} executions explored (preemption bound {bound:?}) in {:.2?}",
        start.elapsed()
    );
}

/// The per-instance data cells of a model: `cells[t * iterations + i]` is
/// written (to 1) by instance `i` of `t`.
struct Cells {
    cells: Vec<UnsafeCell<u32>>,
    iterations: u32,
}

impl Cells {
    fn new(tasks: usize, iterations: u32) -> Self {
        Cells {
            cells: (0..tasks * iterations as usize)
                .map(|_| UnsafeCell::new(0))
                .collect(),
            iterations,
        }
    }

    fn cell(&self, t: u32, i: u32) -> &UnsafeCell<u32> {
        &self.cells[(t * self.iterations + i) as usize]
    }

    /// The body of instance `i` of `t`: every instance it depends on must
    /// have written its cell, and that write must happen before this read
    /// (loom checks the latter).
    fn body(&self, l: &LoweredGraph, t: u32, i: u32) {
        let mut needs: Vec<(u32, u32)> = l
            .preds(&l.tasks[t as usize])
            .iter()
            .filter(|e| i >= e.distance)
            .map(|e| (e.task, i - e.distance))
            .collect();
        if i > 0 {
            needs.push((t, i - 1));
        }
        for (p, j) in needs {
            // SAFETY: loom's UnsafeCell checks that this read does not race
            // with the write below of another instance; a race is a model
            // failure, not undefined behaviour.
            let v = self.cell(p, j).with(|c| unsafe { *c });
            assert_eq!(
                v, 1,
                "instance {i} of task {t} ran before instance {j} of task {p}"
            );
        }
        // SAFETY: as above; each cell is written by exactly one instance.
        self.cell(t, i).with_mut(|c| unsafe { *c = 1 });
    }
}

/// A worker without a queue: runs `first`, then every instance its
/// completions claim (keep all). Returns the instances it ran.
fn run_local(
    states: &TaskStates,
    l: &LoweredGraph,
    cells: &Cells,
    first: (u32, u32),
) -> Vec<(u32, u32)> {
    let mut ran = Vec::new();
    let mut todo = vec![first];
    while let Some((t, i)) = todo.pop() {
        cells.body(l, t, i);
        ran.push((t, i));
        states.complete(l, t, i, &mut todo);
    }
    ran
}

/// Starts one thread per root (each runs its root's instance 0 and what it
/// claims), joins them, and checks that every instance ran exactly once and
/// every task finished.
fn run_roots_on_threads(l: std::sync::Arc<LoweredGraph>, iterations: u32) {
    let states = Arc::new(TaskStates::new(&l, iterations));
    let cells = Arc::new(Cells::new(l.tasks.len(), iterations));
    let handles: Vec<_> = l
        .roots
        .iter()
        .map(|&r| {
            let (states, cells, l) = (states.clone(), cells.clone(), l.clone());
            thread::spawn(move || run_local(&states, &l, &cells, (r, 0)))
        })
        .collect();
    let mut ran: Vec<(u32, u32)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ran.sort_unstable();
    let expected: Vec<(u32, u32)> = (0..l.tasks.len() as u32)
        .flat_map(|t| (0..iterations).map(move |i| (t, i)))
        .collect();
    assert_eq!(ran, expected, "every instance runs exactly once");
    for w in states.snapshot() {
        assert_eq!(state_parts(w), (iterations, iterations));
    }
}

#[test]
fn successor_of_two_predecessors_finishing_together_is_claimed_exactly_once() {
    let l = std::sync::Arc::new(lowered(3, &[(0, 2, 0), (1, 2, 0)]));
    check("two predecessors", 4, move || {
        run_roots_on_threads(l.clone(), 1)
    });
}

#[test]
fn successor_of_three_predecessors_finishing_together_is_claimed_exactly_once() {
    let l = std::sync::Arc::new(lowered(4, &[(0, 3, 0), (1, 3, 0), (2, 3, 0)]));
    check("three predecessors", 3, move || {
        run_roots_on_threads(l.clone(), 1)
    });
}

#[test]
fn successor_with_a_second_iteration_is_never_lost_or_run_early() {
    // Two predecessors, two iterations: the successor's next instance is
    // made ready by either a predecessor or its own completion (self edge).
    let l = std::sync::Arc::new(lowered(3, &[(0, 2, 0), (1, 2, 0)]));
    check("two predecessors, two iterations", 3, move || {
        run_roots_on_threads(l.clone(), 2)
    });
}

#[test]
fn loop_carried_edge_never_lets_the_next_instance_run_before_its_predecessor() {
    // 0 → 1 with distance 1: both are roots; instance i + 1 of 1 needs
    // instance i of 0, which another thread runs concurrently.
    let l = std::sync::Arc::new(lowered(2, &[(0, 1, 1)]));
    assert_eq!(l.roots, [0, 1]);
    check("loop-carried edge", 4, move || {
        run_roots_on_threads(l.clone(), 3)
    });
}

fn yield_wait(_: QueueWait) -> ControlFlow<()> {
    thread::yield_now();
    ControlFlow::Continue(())
}

/// Pushes `items` from one thread per list while the model's main thread
/// pops them all; checks nothing is lost or duplicated.
fn queue_model(capacity: u32, pushers: &'static [&'static [u32]]) {
    let q = Arc::new(ReadyQueue::new(capacity));
    let handles: Vec<_> = pushers
        .iter()
        .map(|&tasks| {
            let q = q.clone();
            thread::spawn(move || {
                for &t in tasks {
                    q.push(t, 10 * t, yield_wait).unwrap();
                }
            })
        })
        .collect();
    let total: usize = pushers.iter().map(|p| p.len()).sum();
    let mut got: Vec<(u32, u32)> = (0..total).map(|_| q.pop(yield_wait).unwrap()).collect();
    for h in handles {
        h.join().unwrap();
    }
    got.sort_unstable();
    let mut want: Vec<(u32, u32)> = pushers
        .iter()
        .flat_map(|p| p.iter())
        .map(|&t| (t, 10 * t))
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn ready_queue_at_capacity_never_loses_or_duplicates_an_entry() {
    // Capacity 2, three entries: the third push waits for the slot the
    // first pop frees, while pops wait for pushes.
    check("ready queue at capacity", 3, || {
        queue_model(2, &[&[1, 2, 3]])
    });
}

#[test]
fn ready_queue_overfilled_by_racing_pushers_never_loses_or_duplicates_an_entry() {
    // Two pushers race for tickets into a ring of 2 that three entries
    // overfill, so one push waits for the slot a pop frees. (Capacity 1 is
    // refused by `ReadyQueue::new`: this model found it overwrites.)
    check("ready queue, racing pushers", 1, || {
        queue_model(2, &[&[1, 2], &[3]])
    });
}
