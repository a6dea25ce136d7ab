//! The CPU emulator: the same lowered tables ([`LoweredGraph`]) executed by
//! CPU threads playing the megakernel's blocks, with the same scheduling
//! protocol, the same status record and the same deadlock report. It runs
//! where there is no GPU and lets tests check the scheduling semantics end
//! to end; task bodies are the kinds' Rust bodies ([`TaskKind::with_cpu`]).
//!
//! # Protocol
//!
//! Blocks `[0, comm)` are comm workers, `[comm, comm + compute)` compute
//! workers. All shared words live in one PE's `worker::Shared`.
//!
//! **`state[t] = (claimed << 32) | done`** (one `u64` per task,
//! [`autarky_shared::state_word`]). `done` = instances of `t` completed,
//! `claimed` = instances claimed; both only increase, and
//! `done ≤ claimed ≤ done + 1` (at most one instance per task in flight).
//! Initially roots have `claimed = 1` and sit in the ready queue in `roots`
//! order ([`LoweredGraph::initial_state`]).
//!
//! - *Written* by: the claimer, with a CAS `(n, n) → (n + 1, n)` (AcqRel);
//!   the runner of the in-flight instance, with a plain store
//!   `(i + 1, i + 1)` (Release) — plain because while an instance is in
//!   flight every claim CAS expects `claimed == done` and fails.
//! - *Read* by: every readiness check (Acquire), which pairs with the
//!   runner's Release store, so a predecessor instance's writes happen
//!   before any instance claimed because of it.
//!
//! **Readiness** of instance `n` of `s` ([`LoweredGraph::instance_ready`]):
//! `done[s] ≥ n` (implicit self edge) and `done[p] ≥ n + 1 − d` for every
//! predecessor edge `(p, d)` (saturating).
//!
//! **Completion** of instance `i` of `t` (`sched::TaskStates::complete`),
//! the same rules as the device's `complete_fast` / `complete`:
//! 1. fold: if `t`'s own next instance is ready (its predecessors' `done`,
//!    Acquire), it is claimed by the publish itself below;
//! 2. early claims: every successor `s` whose only predecessor edge is this
//!    one is ready once instance `i` is done; CAS `(n, n) → (n + 1, n)` for
//!    `n = i + distance` before publishing. Anything not claimed here (a
//!    failed CAS, a successor with other predecessors, an unfolded self)
//!    leaves the completion *open*;
//! 3. store `state[t] = (i + 1, i + 1)`, or `(i + 2, i + 1)` when folded
//!    (Release): publish;
//! 4. only if open: `fence(SeqCst)`, which pairs with the fence of every
//!    other open completion, so of two completions that each make the
//!    other's successor ready, at least one sees the other's publish (no
//!    lost successor); then for every successor `s` of `t`, and `t` itself
//!    if not folded: load `state[s]` (Acquire); skip if `claimed ≠ done`
//!    (that instance's completion will re-check) or `claimed ≥ iterations`;
//!    check the predecessors' `done` (Acquire); if ready, CAS
//!    `(n, n) → (n + 1, n)`: the winner owns instance `n` of `s`. A
//!    completion that is not open reads nothing after its publish and needs
//!    no fence: nothing that depends on that publish is left unclaimed;
//! 5. keep one: the completing worker runs the first instance it claimed
//!    (its own next instance when folded) itself and pushes the rest to the
//!    ready queue;
//! 6. when `done[t]` reached `iterations`, `fetch_add` `tasks_finished`; the
//!    completion that makes it `num_tasks` sets `finished`.
//!
//! **Ready queue** (`queue::ReadyQueue`): the ticketed Vyukov ring of
//! `autarky_shared::QueueSlot`; its module docs give the words. Capacity
//! ([`LoweredGraph::queue_capacity`]) ≥ tasks, so it never overflows.
//!
//! **`finished`** (0 → 1): written by the completion that finished the last
//! task; read by idle compute workers and comm workers, which then leave.
//! **`abort`** (0 → 1): written by whoever records an error; read by every
//! wait every few hundred polls and by compute workers between instances.
//! **`error_code`**: set once by CAS from 0 (first error wins); the winner
//! fills the rest of the `Status` record. **`BlockStats[b]`**: written only
//! by block `b` (its completed count and its current wait); read by
//! waiters (progress anywhere re-arms their deadline), the comm watchdog
//! and, after the join, the host. **`progress`**: published by comm block 0;
//! only increases.
//!
//! **Waits** (queue pop, queue push, the test hold) are bounded: spin, then
//! yield the thread, then sleep briefly; every few hundred polls they check
//! `abort` (and `finished`, for pops) and a deadline of `timeout` measured
//! from the last progress anywhere. A waiter past its deadline records a
//! `Timeout` status naming its wait and raises abort; the host turns the
//! record into [`Error::DeviceTimeout`] with the deadlock report.
//!
//! # Checking
//!
//! The protocol steps are functions over the atomics of `sync.rs`, which
//! are loom's under `cfg(loom)`; `loom_tests.rs` model-checks them:
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib emulator::loom_tests`.
//! `tests/proptest_emulator.rs` checks exactly-once, in-order execution over
//! random graphs; `tests/emulator.rs` covers the end-to-end behaviours.

mod body;
mod comm;
mod compute;
mod queue;
mod sched;
mod shared;
mod sync;
mod wait;

#[cfg(all(test, loom))]
mod loom_tests;

/// Test helper shared by the unit tests and the loom models: `n` tasks of
/// one kind with `(from, to, distance)` edges, lowered.
#[cfg(test)]
pub(crate) fn test_lowered(n: usize, edges: &[(usize, usize, u32)]) -> LoweredGraph {
    test_lowered_run(&vec![0; n], &[], edges).pes.swap_remove(0)
}

/// Test helper: tasks on the PEs `pes[t]` (pinned to compute slot `s` for
/// every `(t, s)` in `pinned`) with `(from, to, distance)` edges, lowered
/// for as many PEs as the largest PE named.
#[cfg(test)]
pub(crate) fn test_lowered_run(
    pes: &[u32],
    pinned: &[(usize, u32)],
    edges: &[(usize, usize, u32)],
) -> LoweredRun {
    let mut g = Graph::new();
    let k = g.add_kind(crate::graph::TaskKind::new("k", "")).unwrap();
    let ids: Vec<_> = pes
        .iter()
        .map(|&pe| {
            let t = g.add_task_bytes(k, &[]);
            g.set_pe(t, pe);
            t
        })
        .collect();
    for &(t, s) in pinned {
        g.pin(ids[t], s);
    }
    for &(a, b, d) in edges {
        g.add_edge_with_distance(ids[a], ids[b], d);
    }
    g.lower_run(&Limits {
        num_pes: pes.iter().copied().max().unwrap_or(0) + 1,
        ..Limits::default()
    })
    .unwrap()
}

use std::time::{Duration, Instant};

use crate::graph::{Graph, Limits, LoweredGraph, LoweredRun};
use crate::status::{RunReport, Snapshot};
use crate::{Error, Result};

#[cfg(doc)]
use crate::TaskKind;

/// Configuration of an emulator run. Every PE of the run gets its own
/// `comm_threads + compute_threads` workers.
#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    /// Compute workers per PE (threads that run compute task instances); at
    /// least 1. The first of them run the PE's pinned compute lists
    /// ([`Graph::pin`]), one slot each; the rest pop the compute ring.
    /// Default: the machine's available parallelism, at least 2.
    pub compute_threads: usize,
    /// Comm workers per PE: they run comm tasks ([`TaskKind::comm`]; the
    /// first of them the pinned comm lists), relay other PEs' progress to
    /// this PE's tasks, and comm worker 0 publishes progress, detects an
    /// early finish and watches for stalls. Default 1; 0 is allowed only for
    /// one-PE runs without comm tasks or early finish.
    pub comm_threads: usize,
    /// Deadline of every wait without progress on its PE. Default 10 s.
    pub timeout: Duration,
    /// Test hook: never run this task (the graph's task index; its first
    /// instance is held by the worker that gets it), so the run must end in
    /// a timeout whose report names it. Default `None`.
    pub hold_task: Option<u32>,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            compute_threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2),
            comm_threads: 1,
            timeout: Duration::from_secs(10),
            hold_task: None,
        }
    }
}

/// Runs `graph` for `iterations` on CPU threads with the megakernel's
/// scheduling protocol, on one PE (every task must be on PE 0).
///
/// Errors: [`Error::InvalidConfig`] for iterations outside
/// `1..=MAX_ITERATIONS`, no compute threads, a `hold_task` that is not a
/// task, or a placement the workers cannot run (a pinned slot without a
/// worker, dynamic compute tasks without an unpinned compute worker, comm
/// work without a comm worker); [`Error::InvalidGraph`] from validation;
/// [`Error::NoCpuBody`] when a kind used by a task has no CPU body (before
/// any thread starts); [`Error::TaskFailed`] when a body returns
/// `Err(code)`; [`Error::DeviceTimeout`] when a wait ran past `cfg.timeout`
/// without progress. A body that panics makes the run stop and the panic
/// resumes on the caller's thread.
///
/// ```
/// use autarky::{emulator, Graph, TaskKind};
/// let mut g = Graph::new();
/// let k = g.add_kind(TaskKind::new("noop", "").with_cpu(|_| Ok(()))).unwrap();
/// let a = g.add_task_bytes(k, &[]);
/// let b = g.add_task_bytes(k, &[]);
/// g.add_edge(a, b);
/// let report = emulator::run(&g, 3, &emulator::EmulatorConfig::default()).unwrap();
/// assert_eq!(report.instances, 6);
/// ```
pub fn run(graph: &Graph, iterations: u32, cfg: &EmulatorConfig) -> Result<RunReport> {
    run_pes(graph, iterations, 1, cfg)
}

/// [`run`] on `pes` emulated PEs: tasks run on the PE [`Graph::set_pe`]
/// gave them, edges between PEs go through proxies as on the device. No
/// symmetric heap is reserved (every heap base is 0); runs that need one go
/// through a [`crate::Runtime`] built with `.emulator(threads).pes(pes)`.
///
/// Errors: those of [`run`], and [`Error::InvalidConfig`] for `pes` outside
/// `1..=MAX_LOCAL_PES`.
///
/// ```
/// use autarky::{emulator, Graph, TaskKind};
/// let mut g = Graph::new();
/// let k = g.add_kind(TaskKind::new("noop", "").with_cpu(|_| Ok(()))).unwrap();
/// let a = g.add_task_bytes(k, &[]);
/// let b = g.add_task_bytes(k, &[]);
/// g.set_pe(b, 1).add_edge(a, b);
/// let report = emulator::run_pes(&g, 3, 2, &emulator::EmulatorConfig::default()).unwrap();
/// assert_eq!(report.instances, 6);
/// ```
pub fn run_pes(
    graph: &Graph,
    iterations: u32,
    pes: u32,
    cfg: &EmulatorConfig,
) -> Result<RunReport> {
    if iterations == 0 || iterations > autarky_shared::MAX_ITERATIONS {
        return Err(Error::InvalidConfig(format!(
            "iterations must be in 1..={}, got {iterations}",
            autarky_shared::MAX_ITERATIONS
        )));
    }
    if pes == 0 || pes > autarky_shared::MAX_LOCAL_PES {
        return Err(Error::InvalidConfig(format!(
            "pes must be in 1..={}, got {pes}",
            autarky_shared::MAX_LOCAL_PES
        )));
    }
    let lowered = graph.lower_run(&Limits {
        num_pes: pes,
        max_tasks: 1 << 24,
    })?;
    run_prelowered(graph, &lowered, iterations, cfg, &vec![0; pes as usize])
}

/// Checks that the workers of `cfg` can run PE `l`'s placement (the GPU's
/// `check_placement`, plus the emulator's own rule for zero comm workers).
fn check_placement(
    graph: &Graph,
    l: &LoweredGraph,
    comm: u32,
    compute: u32,
    pes: usize,
) -> Result<()> {
    if l.pin_compute_slots > compute {
        return Err(Error::InvalidConfig(format!(
            "PE {} pins tasks to compute slot {} but has {compute} compute threads",
            l.pe,
            l.pin_compute_slots - 1
        )));
    }
    if l.pin_comm_slots > comm {
        return Err(Error::InvalidConfig(format!(
            "PE {} pins comm tasks to comm slot {} but has {comm} comm threads",
            l.pe,
            l.pin_comm_slots - 1
        )));
    }
    if let Some(t) = (0..l.first_comm).find(|&t| !l.is_pinned(t)) {
        if l.pin_compute_slots == compute {
            return Err(Error::InvalidConfig(format!(
                "task {} of PE {} is not pinned, but all {compute} compute threads of the PE run pinned lists; pin it or add compute threads",
                l.label(graph, t),
                l.pe
            )));
        }
    }
    let relayed =
        (l.num_tasks..l.num_tasks + l.num_proxies).any(|t| l.tasks[t as usize].succ_count > 0);
    if comm == 0 && (pes > 1 || l.first_comm < l.num_tasks || relayed || l.may_stop) {
        return Err(Error::InvalidConfig(
            "comm_threads must be at least 1 for several PEs, comm tasks or early finish: comm workers run comm tasks, relay other PEs' progress and detect the stop".into(),
        ));
    }
    Ok(())
}

/// [`run`] for a graph the caller already validated and lowered (the
/// runtime's front end lowers once, against its own limits). `heaps` holds
/// every PE's symmetric heap base (host addresses).
pub(crate) fn run_prelowered(
    graph: &Graph,
    run: &LoweredRun,
    iterations: u32,
    cfg: &EmulatorConfig,
    heaps: &[u64],
) -> Result<RunReport> {
    let pes = run.pes.len();
    if cfg.compute_threads == 0 {
        return Err(Error::InvalidConfig(
            "the emulator needs at least one compute thread".into(),
        ));
    }
    if heaps.len() != pes {
        return Err(Error::InvalidConfig(format!(
            "{} symmetric heap bases for {pes} PEs",
            heaps.len()
        )));
    }
    let hold = match cfg.hold_task {
        None => None,
        Some(h) => Some(*run.local.get(h as usize).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "hold_task {h} is not a task (the graph has {} tasks)",
                graph.num_tasks()
            ))
        })?),
    };
    let (comm, compute) = (cfg.comm_threads as u32, cfg.compute_threads as u32);
    let mut emulated = Vec::with_capacity(pes);
    for l in &run.pes {
        check_placement(graph, l, comm, compute, pes)?;
        let kinds = &l.tasks[..l.num_tasks as usize];
        let bodies = kinds
            .iter()
            .map(|d| {
                let kind = &graph.kinds()[d.kind as usize];
                kind.cpu_body().cloned().ok_or_else(|| Error::NoCpuBody {
                    kind: kind.name().to_string(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let may_finish = kinds
            .iter()
            .map(|d| graph.kinds()[d.kind as usize].stops)
            .collect();
        emulated.push(shared::Pe::new(l, bodies, may_finish, comm, compute));
    }
    let shared = shared::Run::new(emulated, iterations, cfg.timeout, hold, heaps);
    let start = Instant::now();
    std::thread::scope(|s| {
        for p in &shared.pes {
            let pinned = p.lowered.pin_compute_slots;
            for b in 0..comm + compute {
                let (shared, pe) = (&shared, p.pe);
                std::thread::Builder::new()
                    .name(format!("autarky-emu-{pe}-{b}"))
                    .spawn_scoped(s, move || {
                        if b < comm {
                            comm::worker(shared, pe, b)
                        } else if b - comm < pinned {
                            compute::pinned(shared, pe, b, b - comm)
                        } else {
                            compute::dynamic(shared, pe, b)
                        }
                    })
                    .expect("spawning an emulator worker thread");
            }
        }
    });
    let wall = start.elapsed();
    if let Some(payload) = shared
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        std::panic::resume_unwind(payload);
    }
    finish(graph, &shared, iterations, comm, wall)
}

/// After the join: the error of the run (the earliest recorded on any PE),
/// or its report.
fn finish(
    graph: &Graph,
    run: &shared::Run<'_>,
    iterations: u32,
    comm: u32,
    wall: Duration,
) -> Result<RunReport> {
    let states: Vec<Vec<u64>> = run.states.iter().map(|s| s.snapshot()).collect();
    let blocks: Vec<_> = run.pes.iter().map(|p| p.block_stats()).collect();
    let statuses: Vec<_> = run.pes.iter().map(|p| p.status()).collect();
    let snapshot = |pe: usize| Snapshot {
        graph,
        lowered: run.pes[pe].lowered,
        iterations: run.states[pe].limit(),
        comm_blocks: comm,
        status: statuses[pe].1,
        state: &states[pe],
        blocks: &blocks[pe],
    };
    let first = (0..run.pes.len())
        .filter(|&pe| statuses[pe].1.error_code != 0)
        .min_by_key(|&pe| statuses[pe].0);
    if let Some(pe) = first {
        let err = snapshot(pe).to_result(pe as u32).err();
        let mut err = err.unwrap_or_else(|| Error::UnknownDeviceError {
            pe: pe as u32,
            code: 0,
        });
        // Several PEs: the deadlock report covers every PE (what a PE
        // waits for is often on another one: a proxy).
        if run.pes.len() > 1 {
            if let Error::DeviceTimeout { report, .. } | Error::Aborted { report, .. } = &mut err {
                *report = (0..run.pes.len())
                    .map(|q| format!("\n  PE {q}:{}", snapshot(q).report().replace('\n', "\n  ")))
                    .collect();
            }
        }
        return Err(err);
    }
    for (pe, s) in states.iter().enumerate() {
        let limit = run.states[pe].limit();
        let l = run.pes[pe].lowered;
        debug_assert!(
            s[..l.num_tasks as usize].iter().all(|&w| {
                let (claimed, done) = autarky_shared::state_parts(w);
                done >= limit && (limit < iterations || (claimed, done) == (iterations, iterations))
            }),
            "a clean emulator run left unfinished tasks on PE {pe}"
        );
    }
    let per_block: Vec<u64> = blocks.iter().flatten().map(|b| b.completed).collect();
    Ok(RunReport {
        backend: "emulator",
        iterations: run
            .states
            .iter()
            .map(|s| s.limit())
            .min()
            .unwrap_or(iterations),
        instances: per_block.iter().sum(),
        per_block,
        wall,
        device_ns: None,
        event_ms: None,
        driver_calls: Vec::new(),
    })
}
