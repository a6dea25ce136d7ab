//! loom models of the emulator's protocol: the real `TaskStates::complete`
//! / `try_claim` / `complete_pinned` / `preds_done_now` / `relay` /
//! `lower_limit` and `ReadyQueue::push` / `pop`, over loom's atomics (see
//! `sync.rs`), with tiny graphs and capacities so loom can explore the
//! interleavings. Models of PEs give every PE its own `TaskStates`, as the
//! emulator does; a producer's remote out stores into the consumer PE's
//! proxy word. Mutants (the same code without one fence) must fail.
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
use super::sched::{Pending, TaskStates};
use crate::graph::{Graph, Limits, LoweredGraph, LoweredRun, TaskKind};
use autarky_shared::state_parts;

use super::test_lowered as lowered;
use super::test_lowered_run as lowered_run;

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

/// The per-instance data cells of a model: `cells[g * iterations + i]` is
/// written (to 1) by instance `i` of the graph's task `g`.
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

    fn cell(&self, g: u32, i: u32) -> &UnsafeCell<u32> {
        &self.cells[(g * self.iterations + i) as usize]
    }

    /// The body of instance `i` of local task `t` of `l`'s PE: every
    /// instance it depends on (on any PE: a proxy's global id is its
    /// producer's) must have written its cell, and that write must happen
    /// before this read (loom checks the latter).
    fn body(&self, l: &LoweredGraph, t: u32, i: u32) {
        let g = l.global[t as usize];
        let mut needs: Vec<(u32, u32)> = l
            .preds(&l.tasks[t as usize])
            .iter()
            .filter(|e| i >= e.distance)
            .map(|e| (l.global[e.task as usize], i - e.distance))
            .collect();
        if i > 0 {
            needs.push((g, i - 1));
        }
        for (p, j) in needs {
            // SAFETY: loom's UnsafeCell checks that this read does not race
            // with the write below of another instance; a race is a model
            // failure, not undefined behaviour.
            let v = self.cell(p, j).with(|c| unsafe { *c });
            assert_eq!(
                v, 1,
                "instance {i} of task {g} ran before instance {j} of task {p}"
            );
        }
        // SAFETY: as above; each cell is written by exactly one instance.
        self.cell(g, i).with_mut(|c| unsafe { *c = 1 });
    }
}

/// A worker of PE `pe` without a queue: runs `todo`'s instances, then every
/// instance their completions claim (keep all). Returns the instances it
/// ran as `(global task, iteration)`.
fn run_claimed(
    states: &[TaskStates],
    run: &LoweredRun,
    pe: usize,
    cells: &Cells,
    todo: Vec<(u32, u32)>,
) -> Vec<(u32, u32)> {
    run_claimed_with(states, run, pe, cells, todo, true, false)
}

/// [`run_claimed`]; `defer_arrivals` false: every arrival at a counted
/// task is made at once (as a device input with a long body does);
/// `oldest_first`: the worker runs its claims in the order made (its own
/// next instance before a join its arrival claimed), not newest first.
fn run_claimed_with(
    states: &[TaskStates],
    run: &LoweredRun,
    pe: usize,
    cells: &Cells,
    mut todo: Vec<(u32, u32)>,
    defer_arrivals: bool,
    oldest_first: bool,
) -> Vec<(u32, u32)> {
    let l = &run.pes[pe];
    let mut ran = Vec::new();
    // Fast-path completions defer their publishes (and a join's inputs
    // their arrivals) as a device block does (sched::Pending); owed ones
    // are made when the worker runs out.
    let mut pending = Pending::default();
    pending.no_deferred_arrivals = !defer_arrivals;
    loop {
        while let Some((t, i)) = if oldest_first && !todo.is_empty() {
            Some(todo.remove(0))
        } else {
            todo.pop()
        } {
            cells.body(l, t, i);
            ran.push((l.global[t as usize], i));
            states[pe].complete_with(l, t, i, states, &mut todo, Some(&mut pending));
        }
        // Owed publishes and arrivals; a join they make ready runs here.
        states[pe].flush_arrivals(l, &mut pending, &mut todo);
        if todo.is_empty() {
            break;
        }
    }
    ran
}

/// Every instance of every task ran exactly once (`ran` holds global ids).
fn assert_each_instance_ran_once(mut ran: Vec<(u32, u32)>, tasks: usize, iterations: u32) {
    ran.sort_unstable();
    let expected: Vec<(u32, u32)> = (0..tasks as u32)
        .flat_map(|t| (0..iterations).map(move |i| (t, i)))
        .collect();
    assert_eq!(ran, expected, "every instance runs exactly once");
}

/// Starts one thread per root (each runs its root's instance 0 and what it
/// claims), joins them, and checks that every instance ran exactly once and
/// every task finished.
fn run_roots_on_threads(l: std::sync::Arc<LoweredGraph>, iterations: u32) {
    run_roots_on_threads_mutant(l, iterations, Mutant::None)
}

/// A deliberately broken protocol step (the model must then fail).
#[derive(Clone, Copy, PartialEq)]
enum Mutant {
    None,
    /// A counted task's self gate by a load of its counter, not an RMW.
    SelfGateByLoad,
    /// Readiness checks of several predecessors without their Acquire fence.
    ReadyWithoutFence,
    /// Owed publishes made without the Release fence before their stores.
    FlushWithoutFence,
}

/// [`run_roots_on_threads`] with `mutant` (arrivals at counted tasks made
/// at once under `SelfGateByLoad`: the path whose race the mutant loses).
fn run_roots_on_threads_mutant(l: std::sync::Arc<LoweredGraph>, iterations: u32, mutant: Mutant) {
    run_roots_on_threads_mode(
        l,
        iterations,
        mutant,
        mutant != Mutant::SelfGateByLoad,
        false,
    )
}

/// [`run_roots_on_threads_mutant`]; `defer_arrivals` false: every arrival
/// at a counted task is made at once; `slots`: counted tasks get arrival
/// slots (the device's `-DAUTARKY_SLOTS`), and each worker runs its claims
/// oldest first (a join then runs on a worker whose own input went ahead,
/// so the join's completion races the other input's arrival at its next
/// slot).
fn run_roots_on_threads_mode(
    l: std::sync::Arc<LoweredGraph>,
    iterations: u32,
    mutant: Mutant,
    defer_arrivals: bool,
    slots: bool,
) {
    let run = std::sync::Arc::new(LoweredRun {
        pes: vec![(*l).clone()],
        local: (0..l.num_tasks).map(|t| (0, t)).collect(),
    });
    let mut st = TaskStates::with_slots(&l, iterations, slots);
    st.mutant_self_gate_by_load = mutant == Mutant::SelfGateByLoad;
    st.mutant_ready_without_fence = mutant == Mutant::ReadyWithoutFence;
    st.mutant_flush_without_fence = mutant == Mutant::FlushWithoutFence;
    let states = Arc::new(vec![st]);
    let cells = Arc::new(Cells::new(l.tasks.len(), iterations));
    let handles: Vec<_> = l
        .roots
        .iter()
        .map(|&r| {
            let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
            thread::spawn(move || {
                run_claimed_with(
                    &states,
                    &run,
                    0,
                    &cells,
                    vec![(r, 0)],
                    defer_arrivals,
                    slots,
                )
            })
        })
        .collect();
    let ran: Vec<(u32, u32)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_each_instance_ran_once(ran, l.tasks.len(), iterations);
    for w in states[0].snapshot() {
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

#[test]
fn neighbours_checking_their_own_next_instance_after_the_publish_run_each_once_and_never_early() {
    // Two stencil neighbours (carried edges both ways) that also feed a
    // third task: two successor edges each, so each checks its own next
    // instance after its publish, beside its successors (session 35; the
    // device's block-wide completion), not folded before it. Instance 1 of
    // 0 needs instance 0 of 1 and the other way round: the two completions
    // race, each reading the other's word after its own publish.
    let l = std::sync::Arc::new(lowered(3, &[(0, 1, 1), (1, 0, 1), (0, 2, 0), (1, 2, 0)]));
    assert_eq!(l.roots, [0, 1]);
    assert!(l.tasks[..2].iter().all(|d| d.succ_count == 2));
    check("neighbours, self checked late", 3, move || {
        run_roots_on_threads(l.clone(), 2)
    });
}

/// `n` tasks with `edges`, every task of 2 or more predecessor edges
/// counted (arrival counters gate its readiness checks).
fn counted(n: usize, edges: &[(usize, usize, u32)]) -> LoweredGraph {
    super::test_lowered_run_counted(&vec![0; n], &[], edges, 2)
        .pes
        .swap_remove(0)
}

#[test]
fn counted_successor_of_two_predecessors_is_claimed_exactly_once_over_two_iterations() {
    // The successor's next instance is opened either by the last arrival
    // (which sees the successor idle) or by the successor's own completion
    // (which sees the full count): never by neither, never twice.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    assert!(l.is_counted(&l.tasks[2]));
    check("counted, two predecessors, two iterations", 3, move || {
        run_roots_on_threads(l.clone(), 2)
    });
}

#[test]
fn counted_successor_with_arrivals_made_at_once_is_claimed_exactly_once_over_two_iterations() {
    // As above, every arrival made at once (no input defers its own): the
    // race of the last arrival with the successor's own gate.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    check("counted, arrivals at once, two iterations", 3, move || {
        run_roots_on_threads_mode(l.clone(), 2, Mutant::None, false, false)
    });
}

#[test]
fn counted_successor_of_three_predecessors_is_claimed_exactly_once() {
    let l = std::sync::Arc::new(counted(4, &[(0, 3, 0), (1, 3, 0), (2, 3, 0)]));
    check("counted, three predecessors", 3, move || {
        run_roots_on_threads(l.clone(), 1)
    });
}

#[test]
fn counted_successor_with_a_carried_edge_never_runs_early() {
    // 0 → 2 (distance 0), 1 → 2 (distance 1): arrivals of different
    // instances race for the same counter.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 1)]));
    check("counted, carried edge", 3, move || {
        run_roots_on_threads(l.clone(), 2)
    });
}

#[test]
fn slotted_successor_of_two_predecessors_is_claimed_exactly_once_over_two_iterations() {
    // Arrival slots: an instance is claimed by the arrival that fills its
    // slot (seeing the successor idle) or by the successor's completion
    // (its RMW of 0 seeing the slot full), never by neither, never twice,
    // and never before its inputs (no predecessor is read).
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    check("slots, two predecessors, two iterations", 3, move || {
        run_roots_on_threads_mode(l.clone(), 2, Mutant::None, true, true)
    });
}

#[test]
fn slotted_successor_with_arrivals_made_at_once_is_claimed_exactly_once_over_two_iterations() {
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    check("slots, arrivals at once, two iterations", 3, move || {
        run_roots_on_threads_mode(l.clone(), 2, Mutant::None, false, true)
    });
}

#[test]
fn slotted_successor_with_a_carried_edge_never_runs_early() {
    // 0 → 2 (distance 0), 1 → 2 (distance 1): slot 0 starts with the
    // carried edge's arrival; instance i of 1 arrives at slot i + 1.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 1)]));
    check("slots, carried edge", 3, move || {
        run_roots_on_threads_mode(l.clone(), 3, Mutant::None, true, true)
    });
}

#[test]
#[should_panic]
fn mutant_slot_self_gate_by_a_load_loses_the_successor() {
    // As with one counter: the successor's own read of its next slot must
    // be an RMW in that slot's order, or the last arrival and the
    // successor's completion can each miss the other.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    check("mutant: slot self gate by a load", 3, move || {
        run_roots_on_threads_mode(l.clone(), 2, Mutant::SelfGateByLoad, false, true)
    });
}

/// Chain fusion: `a → b`, and `b → c` carried. `a` folds its next instance
/// and claims `b` early, so its publish is deferred; `b`'s completion is
/// open (its own next instance waits for `a`), so it makes the owed
/// publish and its own under one fence. `c`'s next instance, claimed by the
/// other worker on the strength of `b`'s flushed word, reads `b`'s cell.
fn fused_chain() -> std::sync::Arc<LoweredGraph> {
    let l = lowered(3, &[(0, 1, 0), (1, 2, 1)]);
    assert_eq!(l.roots, [0, 2]);
    std::sync::Arc::new(l)
}

#[test]
fn deferred_publishes_made_under_one_fence_publish_every_owed_instance() {
    let l = fused_chain();
    check("fused chain", 3, move || run_roots_on_threads(l.clone(), 2));
}

#[test]
#[should_panic]
fn mutant_flush_without_its_fence_publishes_no_data() {
    // The owed stores are Relaxed: without the fence before them, the
    // worker that acquires `b`'s word does not synchronize with the body
    // that wrote `b`'s cell.
    let l = fused_chain();
    check("mutant: flush without fence", 3, move || {
        run_roots_on_threads_mutant(l.clone(), 2, Mutant::FlushWithoutFence)
    });
}

#[test]
#[should_panic]
fn mutant_self_gate_by_a_load_loses_the_successor() {
    // Arrivals are RMWs without a fence. If the successor's own completion
    // read its counter with a load (not an RMW in the counter's order),
    // the last arrival could read the successor's old state word (instance
    // in flight) while the successor's completion reads the old count:
    // neither checks.
    let l = std::sync::Arc::new(counted(3, &[(0, 2, 0), (1, 2, 0)]));
    check("mutant: self gate by a load", 3, move || {
        run_roots_on_threads_mutant(l.clone(), 2, Mutant::SelfGateByLoad)
    });
}

#[test]
#[should_panic]
fn mutant_readiness_check_without_its_acquire_fence_reads_unpublished_data() {
    // Two predecessors: the check reads their done words relaxed; without
    // the Acquire fence after them, the successor's body may read a
    // predecessor's cell without a happens-before edge to its write.
    let l = std::sync::Arc::new(lowered(3, &[(0, 2, 0), (1, 2, 0)]));
    check("mutant: readiness check without fence", 3, move || {
        run_roots_on_threads_mutant(l.clone(), 1, Mutant::ReadyWithoutFence)
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

/// A relay under test: `(PE 1's states, its tables, seen, claims)`.
type Relay = fn(&TaskStates, &LoweredGraph, &mut [u32], &mut Vec<(u32, u32)>) -> bool;

/// Model (a): a producer on PE 0 and a local producer on PE 1 of one
/// dynamic successor on PE 1, with PE 1's comm worker relaying the proxy.
/// `relay` is the relay under test (the real one or a mutant).
fn remote_and_local_producer_model(run: std::sync::Arc<LoweredRun>, iterations: u32, relay: Relay) {
    let states = Arc::new(vec![
        TaskStates::new(&run.pes[0], iterations),
        TaskStates::new(&run.pes[1], iterations),
    ]);
    let cells = Arc::new(Cells::new(run.local.len(), iterations));
    // The remote producer (PE 0's root) and the local one (PE 1's root).
    let producers: Vec<_> = [(0usize, run.pes[0].roots[0]), (1, run.pes[1].roots[0])]
        .into_iter()
        .map(|(pe, root)| {
            let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
            thread::spawn(move || run_claimed(&states, &run, pe, &cells, vec![(root, 0)]))
        })
        .collect();
    // PE 1's comm worker: relays until it has relayed the proxy's final
    // value, running what its relays claim.
    let relay_thread = {
        let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
        thread::spawn(move || {
            let l = &run.pes[1];
            let mut seen = vec![0u32; l.num_proxies as usize];
            let mut ran = Vec::new();
            loop {
                let mut claims = Vec::new();
                relay(&states[1], l, &mut seen, &mut claims);
                ran.extend(run_claimed(&states, &run, 1, &cells, claims));
                if seen[0] == iterations {
                    return ran;
                }
                thread::yield_now();
            }
        })
    };
    let mut ran: Vec<(u32, u32)> = producers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ran.extend(relay_thread.join().unwrap());
    assert_each_instance_ran_once(ran, run.local.len(), iterations);
}

/// Tasks 0 (PE 0), 1 and 2 (PE 1); edges 0 → 2 and 1 → 2.
fn remote_and_local_producer_graph() -> std::sync::Arc<LoweredRun> {
    let run = lowered_run(&[0, 1, 1], &[], &[(0, 2, 0), (1, 2, 0)]);
    assert_eq!(run.pes[1].num_proxies, 1);
    assert_eq!(run.pes[0].remote.len(), 1);
    std::sync::Arc::new(run)
}

fn real_relay(s: &TaskStates, l: &LoweredGraph, seen: &mut [u32], c: &mut Vec<(u32, u32)>) -> bool {
    s.relay(l, 0, 1, seen, c)
}

#[test]
fn successor_of_a_remote_and_a_local_producer_is_claimed_exactly_once_through_the_relay() {
    let run = remote_and_local_producer_graph();
    check("remote + local producer, relay", 3, move || {
        remote_and_local_producer_model(run.clone(), 1, real_relay)
    });
}

#[test]
fn successor_of_a_remote_and_a_local_producer_survives_two_iterations_of_relays() {
    let run = remote_and_local_producer_graph();
    check(
        "remote + local producer, relay, two iterations",
        2,
        move || remote_and_local_producer_model(run.clone(), 2, real_relay),
    );
}

#[test]
fn counted_successor_of_a_remote_and_a_local_producer_gets_the_relayed_arrivals() {
    // The relay adds the proxy's advance to the counted successor's count.
    let run = super::test_lowered_run_counted(&[0, 1, 1], &[], &[(0, 2, 0), (1, 2, 0)], 2);
    assert!(run.pes[1].is_counted(&run.pes[1].tasks[1]));
    let run = std::sync::Arc::new(run);
    check(
        "counted, remote + local producer, relay, two iterations",
        2,
        move || remote_and_local_producer_model(run.clone(), 2, real_relay),
    );
}

#[test]
#[should_panic]
fn mutant_relay_without_its_fence_loses_the_successor() {
    // Without the SeqCst fence between the relay's poll of the proxy and
    // its re-check, the relay and the local producer's completion can each
    // read the other's old word: nobody claims the successor.
    let run = remote_and_local_producer_graph();
    check("mutant: relay without fence", 3, move || {
        remote_and_local_producer_model(run.clone(), 1, |s, l, seen, c| {
            s.relay_without_fence(l, 0, 1, seen, c)
        })
    });
}

/// Model (b): a pinned consumer polling its predecessors. `pe_of` places
/// tasks `p` (dynamic root), `c` (pinned to compute slot 0), `d` (dynamic)
/// with edges p → c, c → d, p → d; c's worker runs its list for
/// `iterations` instances (pushing nothing: the model's workers keep what
/// they claim), p's worker runs p and what it claims.
fn pinned_consumer_model(
    run: std::sync::Arc<LoweredRun>,
    iterations: u32,
    poll: fn(&TaskStates, &LoweredGraph, u32, u32) -> Option<u32>,
) {
    let pes = run.pes.len();
    let states = Arc::new(
        (0..pes)
            .map(|pe| TaskStates::new(&run.pes[pe], iterations))
            .collect::<Vec<_>>(),
    );
    let cells = Arc::new(Cells::new(run.local.len(), iterations));
    let (p_pe, p_local) = run.local[0];
    let (c_pe, c_local) = run.local[1];
    assert_eq!(run.pes[c_pe as usize].pinned_compute(0), [c_local]);
    let producer = {
        let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
        thread::spawn(move || run_claimed(&states, &run, p_pe as usize, &cells, vec![(p_local, 0)]))
    };
    let pinned = {
        let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
        thread::spawn(move || {
            let pe = c_pe as usize;
            let l = &run.pes[pe];
            let mut ran = Vec::new();
            for n in 0..iterations {
                while poll(&states[pe], l, c_local, n).is_none() {
                    thread::yield_now();
                }
                cells.body(l, c_local, n);
                ran.push((1, n));
                let mut claims = Vec::new();
                states[pe].complete_pinned(l, c_local, n, &states, &mut claims, iterations);
                ran.extend(run_claimed(&states, &run, pe, &cells, claims));
            }
            ran
        })
    };
    let mut ran = producer.join().unwrap();
    ran.extend(pinned.join().unwrap());
    assert_each_instance_ran_once(ran, run.local.len(), iterations);
}

fn real_poll(s: &TaskStates, l: &LoweredGraph, t: u32, n: u32) -> Option<u32> {
    s.preds_done_now(l, t, n)
}

#[test]
fn pinned_consumer_polling_runs_after_its_producer_and_hands_its_successor_on_once() {
    // p → c (pinned) → d, p → d on one PE, two iterations: d is claimed
    // either by p's completion or by the pinned completion's re-check.
    let run = std::sync::Arc::new(lowered_run(
        &[0, 0, 0],
        &[(1, 0)],
        &[(0, 1, 0), (1, 2, 0), (0, 2, 0)],
    ));
    check("pinned consumer", 3, move || {
        pinned_consumer_model(run.clone(), 2, real_poll)
    });
}

#[test]
fn pinned_consumer_of_a_remote_producer_polls_the_proxy() {
    // p on PE 0 → c pinned on PE 1 (polling the proxy) → d on PE 1, and
    // p → d (d's predecessors: the proxy and c; nobody relays here, so the
    // pinned completion's re-check must claim d).
    let run = std::sync::Arc::new(lowered_run(
        &[0, 1, 1],
        &[(1, 0)],
        &[(0, 1, 0), (1, 2, 0), (0, 2, 0)],
    ));
    check("pinned consumer of a proxy", 3, move || {
        pinned_consumer_model(run.clone(), 2, real_poll)
    });
}

#[test]
#[should_panic]
fn mutant_pinned_poll_without_its_acquire_fence_reads_unpublished_data() {
    let run = std::sync::Arc::new(lowered_run(
        &[0, 0, 0],
        &[(1, 0)],
        &[(0, 1, 0), (1, 2, 0), (0, 2, 0)],
    ));
    check("mutant: pinned poll without fence", 3, move || {
        pinned_consumer_model(run.clone(), 2, |s, l, t, n| {
            s.preds_done_now_without_fence(l, t, n)
        })
    });
}

/// Model (d): carried limits. Two pinned tasks on two workers: `s`
/// (slot 0) lowers the limit to 2 in instance 1 (`finish_at(2)`), `x`
/// (slot 1) needs `s`'s previous instance (carried edge), so its polls
/// race with `s`'s stop. Nobody reads the limit after an acquire: `x`
/// learns it only from the limit `s`'s word carries, and must not run
/// instance 2. Each worker runs the pinned loop's limit logic over the
/// real `TaskStates` calls; `fold` false is the mutant that ignores what
/// the words carry. (A chain of three, where the last learns of the stop
/// only through the middle one's word, runs on the GPU and the emulator:
/// `finish_at_is_exact_along_a_chain_of_pinned_tasks`; three workers
/// spinning made this model take minutes.)
fn carried_limit_model(iterations: u32, fold: bool) {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").may_finish_early())
        .unwrap();
    let ids: Vec<_> = (0..2).map(|_| g.add_task_bytes(k, &[])).collect();
    for (slot, &t) in ids.iter().enumerate() {
        g.pin(t, slot as u32);
    }
    g.add_carried_edge(ids[0], ids[1]);
    let run = std::sync::Arc::new(g.lower_run(&Limits::default()).unwrap());
    let l0 = &run.pes[0];
    let tasks: Vec<u32> = (0..2).map(|slot| l0.pinned_compute(slot)[0]).collect();
    let states = Arc::new(vec![TaskStates::new(l0, iterations)]);
    let handles: Vec<_> = tasks
        .iter()
        .enumerate()
        .map(|(slot, &t)| {
            let (states, run) = (states.clone(), run.clone());
            thread::spawn(move || {
                let l = &run.pes[0];
                let st = &states[0];
                let mut known = iterations;
                let mut ran = Vec::new();
                for n in 0..iterations {
                    if n >= known {
                        break;
                    }
                    let low = loop {
                        if let Some(low) = st.preds_done_now(l, t, n) {
                            break low;
                        }
                        // The wait's own look at the limit (a stop that
                        // never publishes what this instance awaits).
                        if n >= st.limit() {
                            return ran;
                        }
                        thread::yield_now();
                    };
                    if fold {
                        known = st.fold_limit(known, low);
                    }
                    if n >= known {
                        break;
                    }
                    ran.push((slot, n));
                    if slot == 0 && n == 1 {
                        // s's body: finish_at(2), into the global limit and
                        // the block's own record.
                        st.lower_limit(2);
                        known = known.min(2);
                    }
                    let mut claims = Vec::new();
                    st.complete_pinned(l, t, n, &states, &mut claims, known);
                    assert!(claims.is_empty(), "no dynamic successors here");
                }
                ran
            })
        })
        .collect();
    let mut ran: Vec<(usize, u32)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ran.sort_unstable();
    assert_eq!(
        ran,
        [(0, 0), (0, 1), (1, 0), (1, 1)],
        "a pinned task ran past the stop"
    );
}

#[test]
fn carried_limit_stops_every_pinned_dependent_of_the_stopping_instance() {
    check("carried limit", 3, || carried_limit_model(3, true));
}

#[test]
#[should_panic]
fn mutant_pinned_consumer_ignoring_the_carried_limit_runs_past_the_stop() {
    check("mutant: carried limit ignored", 3, || {
        carried_limit_model(3, false)
    });
}

/// Model (c): `s` lowers the limit to 2 in iteration 1 (`finish_at(2)`);
/// `x` needs the previous iteration of `s` (carried edge), so x's own
/// completions race with s's. x must never run instance 2.
#[test]
fn early_finish_is_exact_for_a_dependent_whose_completion_races_the_stop() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").may_finish_early())
        .unwrap();
    let s = g.add_task_bytes(k, &[]);
    let x = g.add_task_bytes(k, &[]);
    g.add_carried_edge(s, x);
    let run = std::sync::Arc::new(g.lower_run(&Limits::default()).unwrap());
    assert_eq!(run.pes[0].roots, [0, 1]);
    check("early finish", 3, move || {
        let iterations = 4;
        let states = Arc::new(vec![TaskStates::new(&run.pes[0], iterations)]);
        let handles: Vec<_> = [0u32, 1]
            .into_iter()
            .map(|root| {
                let (states, run) = (states.clone(), run.clone());
                thread::spawn(move || {
                    let l = &run.pes[0];
                    let mut ran = Vec::new();
                    let mut todo = vec![(root, 0)];
                    while let Some((t, i)) = todo.pop() {
                        if t == 0 && i == 1 {
                            // s's body: finish_at(2).
                            states[0].lower_limit(2);
                        }
                        ran.push((t, i));
                        states[0].complete(l, t, i, &states, &mut todo);
                    }
                    ran
                })
            })
            .collect();
        let mut ran: Vec<(u32, u32)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        ran.sort_unstable();
        assert_eq!(ran, [(0, 0), (0, 1), (1, 0), (1, 1)], "x ran past the stop");
    });
}

/// Model (e): round lists (the device's `pinned_round`). Two workers, each
/// running a patch of two tiles — `a0, a1` on slot 0, `b0, b1` on slot 1 —
/// with `a0 → a1` and `b0 → b1` in the same iteration and carried edges
/// between the patches both ways (`a1 → b0`, `b1 → a0`, `a0 → b1`,
/// distance 1). Each round: one wait for the list's outside predecessors
/// (`round_preds_done_now`), the bodies in order, one release of both
/// words (`complete_pinned_round`: a Release fence, then Relaxed stores).
/// Every body reads the cells of the instances it depends on, so a round
/// released without its fence is a causality violation.
fn round_model(iterations: u32, mutant: bool) {
    let run = std::sync::Arc::new(lowered_run(
        &[0, 0, 0, 0],
        &[(0, 0), (1, 0), (2, 1), (3, 1)],
        &[(0, 1, 0), (2, 3, 0), (1, 2, 1), (3, 0, 1), (0, 3, 1)],
    ));
    let l = &run.pes[0];
    assert_eq!(l.pinned_compute(0), [0, 1]);
    assert!(l.is_round_list(l.pinned_compute(0)) && l.is_round_list(l.pinned_compute(1)));
    let mut st = TaskStates::new(l, iterations);
    st.mutant_flush_without_fence = mutant;
    let states = Arc::new(st);
    let cells = Arc::new(Cells::new(4, iterations));
    let workers: Vec<_> = (0..2u32)
        .map(|slot| {
            let (states, cells, run) = (states.clone(), cells.clone(), run.clone());
            thread::spawn(move || {
                let l = &run.pes[0];
                let list = l.pinned_compute(slot);
                let mut ran = Vec::new();
                for n in 0..iterations {
                    while states.round_preds_done_now(l, list, n).is_none() {
                        thread::yield_now();
                    }
                    for &t in list {
                        cells.body(l, t, n);
                        ran.push((t, n));
                    }
                    states.complete_pinned_round(l, list, n, iterations);
                }
                ran
            })
        })
        .collect();
    let ran: Vec<(u32, u32)> = workers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_each_instance_ran_once(ran, 4, iterations);
    for w in states.snapshot() {
        assert_eq!(state_parts(w).1, iterations);
    }
}

#[test]
fn patches_released_in_rounds_under_one_fence_run_after_their_neighbours() {
    check("round lists", 3, || round_model(2, false));
}

#[test]
#[should_panic]
fn mutant_round_released_without_its_fence_publishes_no_data() {
    check("mutant: round without fence", 3, || round_model(2, true));
}
