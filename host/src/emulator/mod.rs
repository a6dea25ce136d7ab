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

mod queue;
mod sched;
mod sync;
mod worker;

#[cfg(all(test, loom))]
mod loom_tests;

/// Test helper shared by the unit tests and the loom models: `n` tasks of
/// one kind with `(from, to, distance)` edges, lowered.
#[cfg(test)]
pub(crate) fn test_lowered(n: usize, edges: &[(usize, usize, u32)]) -> LoweredGraph {
    let mut g = Graph::new();
    let k = g.add_kind(crate::graph::TaskKind::new("k", "")).unwrap();
    let ids: Vec<_> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
    for &(a, b, d) in edges {
        g.add_edge_with_distance(ids[a], ids[b], d);
    }
    g.lower(&Limits::default()).unwrap()
}

use std::time::{Duration, Instant};

use crate::graph::{Graph, Limits, LoweredGraph, LoweredRun};
use crate::status::{RunReport, Snapshot};
use crate::{Error, Result};

#[cfg(doc)]
use crate::TaskKind;

/// Configuration of an emulator run.
#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    /// Compute workers (threads that pop and run task instances); at least 1.
    /// Default: the machine's available parallelism, at least 2.
    pub compute_threads: usize,
    /// Comm workers (progress publisher and stall watchdog). Default 1; 0 is
    /// allowed.
    pub comm_threads: usize,
    /// Deadline of every wait without progress anywhere. Default 10 s.
    pub timeout: Duration,
    /// Test hook: never run this task (its first instance is held by the
    /// worker that gets it), so the run must end in a timeout whose report
    /// names it. Default `None`.
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
/// scheduling protocol.
///
/// Errors: [`Error::InvalidConfig`] for iterations outside
/// `1..=MAX_ITERATIONS`, no compute threads or a `hold_task` that is not a
/// task; [`Error::InvalidGraph`] from validation; [`Error::NoCpuBody`] when
/// a kind used by a task has no CPU body (before any thread starts);
/// [`Error::TaskFailed`] when a body returns `Err(code)`;
/// [`Error::DeviceTimeout`] when a wait ran past `cfg.timeout` without
/// progress. A body that panics makes the run stop and the panic resumes on
/// the caller's thread.
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
    if iterations == 0 || iterations > autarky_shared::MAX_ITERATIONS {
        return Err(Error::InvalidConfig(format!(
            "iterations must be in 1..={}, got {iterations}",
            autarky_shared::MAX_ITERATIONS
        )));
    }
    let lowered = graph.lower_run(&Limits {
        num_pes: 1,
        max_tasks: 1 << 24,
    })?;
    run_prelowered(graph, &lowered, iterations, cfg, &[0])
}

/// [`run`] for a graph the caller already validated and lowered (the
/// runtime's front end lowers once, against its own limits).
pub(crate) fn run_prelowered(
    graph: &Graph,
    run: &LoweredRun,
    iterations: u32,
    cfg: &EmulatorConfig,
    _heaps: &[u64],
) -> Result<RunReport> {
    // TODO(multi-PE emulator): several PEs, pinned lists, comm tasks, proxies.
    let lowered = &run.pes[0];
    if run.pes.len() > 1
        || lowered.num_proxies > 0
        || lowered.first_comm < lowered.num_tasks
        || lowered.pin_compute_slots > 0
    {
        return Err(Error::InvalidConfig(
            "the emulator does not run several PEs, comm tasks or pinned tasks yet".into(),
        ));
    }
    if cfg.compute_threads == 0 {
        return Err(Error::InvalidConfig(
            "the emulator needs at least one compute thread".into(),
        ));
    }
    if let Some(h) = cfg.hold_task {
        if h as usize >= lowered.tasks.len() {
            return Err(Error::InvalidConfig(format!(
                "hold_task {h} is not a task (the graph has {} tasks)",
                lowered.tasks.len()
            )));
        }
    }
    let bodies = lowered
        .tasks
        .iter()
        .map(|d| {
            let kind = &graph.kinds()[d.kind as usize];
            kind.cpu_body().cloned().ok_or_else(|| Error::NoCpuBody {
                kind: kind.name().to_string(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let (comm, compute) = (cfg.comm_threads as u32, cfg.compute_threads as u32);
    run_lowered(graph, lowered, bodies, iterations, comm, compute, cfg)
}

fn run_lowered(
    graph: &Graph,
    lowered: &LoweredGraph,
    bodies: Vec<crate::graph::CpuBody>,
    iterations: u32,
    comm: u32,
    compute: u32,
    cfg: &EmulatorConfig,
) -> Result<RunReport> {
    let shared = worker::Shared::new(
        lowered,
        bodies,
        iterations,
        comm,
        compute,
        cfg.timeout,
        cfg.hold_task,
    );
    let start = Instant::now();
    std::thread::scope(|s| {
        for b in 0..comm + compute {
            let shared = &shared;
            std::thread::Builder::new()
                .name(format!("autarky-emu-{b}"))
                .spawn_scoped(s, move || {
                    if b < comm {
                        worker::comm(shared, b)
                    } else {
                        worker::compute(shared, b)
                    }
                })
                .expect("spawning an emulator worker thread");
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
    let state = shared.states.snapshot();
    let blocks = shared.block_stats();
    let snapshot = Snapshot {
        graph,
        lowered,
        iterations,
        comm_blocks: comm,
        status: shared.status(),
        state: &state,
        blocks: &blocks,
    };
    snapshot.to_result(0)?;
    debug_assert!(
        state
            .iter()
            .all(|&w| autarky_shared::state_parts(w) == (iterations, iterations)),
        "a clean emulator run left unfinished tasks"
    );
    let per_block: Vec<u64> = blocks.iter().map(|b| b.completed).collect();
    Ok(RunReport {
        backend: "emulator",
        iterations,
        instances: per_block.iter().sum(),
        per_block,
        wall,
        device_ns: None,
        event_ms: None,
        driver_calls: Vec::new(),
        trace: None,
    })
}
