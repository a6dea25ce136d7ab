//! The CPU emulator: the same lowered tables ([`LoweredRun`], one
//! [`LoweredGraph`] per PE) executed by CPU threads playing the megakernel's
//! blocks, with the same scheduling protocol, the same status record and
//! the same deadlock report. It runs where there is no GPU and lets tests
//! check the scheduling semantics end to end — several PEs, pinned and
//! comm-role tasks, early finish — task bodies being the kinds' Rust bodies
//! ([`TaskKind::with_cpu`]).
//!
//! # Protocol
//!
//! **Workers.** Every PE has `comm + compute` workers ([`EmulatorConfig`]):
//! blocks `[0, comm)` are comm workers, `[comm, comm + pin_compute_slots)`
//! pinned compute workers (slot `b - comm`), the rest dynamic compute
//! workers, as in the megakernel's partition of a PE. Each PE has its own
//! state words, rings, block stats, limit, stop flag and status record
//! (`shared::Pe`, `sched::TaskStates`); the abort flag and the panic slot
//! are shared by the run (`shared::Run`).
//!
//! **`state[t] = (claimed << 32) | done`** (one `u64` per local task and
//! proxy, [`autarky_shared::state_word`]). `done` = instances of `t`
//! completed, `claimed` = instances claimed; both only increase, and
//! `done ≤ claimed ≤ done + 1` (at most one instance per task in flight).
//! Initially dynamic roots have `claimed = 1` and sit in their ring in
//! `roots` / `comm_roots` order ([`LoweredGraph::initial_state`]).
//!
//! - *Written* by: the claimer of a dynamic task, with a CAS `(n, n) →
//!   (n + 1, n)` (Acquire); the runner of the in-flight instance, with a
//!   plain store `(i + 1, i + 1)` (Release) — plain because while an
//!   instance is in flight every claim CAS expects `claimed == done` and
//!   fails; a pinned task's worker, with the same store (nobody claims a
//!   pinned task); for a **proxy** (ids `[num_tasks, num_tasks +
//!   num_proxies)`, a stand-in for a producer on another PE), the
//!   producer's runner on its own PE, storing `(i + 1, i + 1)` (Release)
//!   into the consumer PE's word for every `RemoteOut` of the producer,
//!   *before* its local publish: the producer's next instance is claimed
//!   only by someone who acquired that publish, so proxy words only increase.
//! - *Read* by: every readiness check (Acquire), which pairs with the
//!   Release store that published the value, so a predecessor instance's
//!   writes (on any PE) happen before any instance claimed because of it;
//!   pinned polls (Relaxed, then an Acquire fence once all are done); proxy
//!   relays (Relaxed, then a SeqCst fence).
//!
//! **Readiness** of instance `n` of `s` ([`LoweredGraph::instance_ready`]):
//! `done[s] ≥ n` (implicit self edge) and `done[p] ≥ n + 1 − d` for every
//! predecessor edge `(p, d)` (saturating), proxies included, and `n <`
//! the PE's limit.
//!
//! **Completion of a dynamic compute instance** `i` of `t`
//! (`TaskStates::complete`, the device's `complete_fast` / `complete`);
//! `limit` is read once at its start:
//! 1. fold: if `t`'s own next instance is ready (its predecessors' `done`,
//!    Acquire, then the limit again), it is claimed by the publish itself;
//! 2. early claims: every successor `s` whose only predecessor edge is this
//!    one is ready once instance `i` is done; CAS `(n, n) → (n + 1, n)` for
//!    `n = i + distance < limit` before publishing. Anything not claimed
//!    here (a failed CAS, a successor with other predecessors, an unfolded
//!    self) leaves the completion *open*;
//! 3. remote outs: the proxy stores above;
//! 4. store `state[t] = (i + 1, i + 1)`, or `(i + 2, i + 1)` when folded
//!    (Release): publish;
//! 5. only if open: `fence(SeqCst)`, which pairs with the fence of every
//!    other open completion and every relay, so of two completions that
//!    each make the other's successor ready, at least one sees the other's
//!    publish (no lost successor); then `try_claim` every successor and, if
//!    not folded, `t` itself: load `state[s]` (Acquire); skip if `claimed ≠
//!    done` (that instance's completion will re-check) or `claimed ≥
//!    limit`; check the predecessors' `done` (Acquire); read the limit
//!    again; if ready, CAS `(n, n) → (n + 1, n)`: the winner owns instance
//!    `n` of `s`. A completion that is not open reads nothing after its
//!    publish and needs no fence;
//!    A *counted* successor ([`LoweredGraph::is_counted`]: at least
//!    `counted_fan_in` predecessor edges) is not checked directly: the
//!    completion adds one arrival per edge to its counter (AcqRel RMW),
//!    fences again (SeqCst), and `try_claim`s it only when the count
//!    reached `arrivals_needed` for its next instance; a counted `t` checks
//!    itself only when its counter (Acquire, after the fence) did. The last
//!    arrival an instance needs and `t`'s completion of the previous one
//!    form the same store-buffering pair as publish → fence → check, so at
//!    least one of them checks (docs/design.md, "Wide joins"). Comm and
//!    pinned completions do the same; relays add how far the proxy moved;
//! 6. keep one: the worker runs the first *compute* instance it claimed
//!    (its own next instance when folded) itself; the rest go to their
//!    ring: comm tasks to the comm ring, compute tasks to the compute ring;
//! 7. when `done` reached `limit`, `fetch_add` `tasks_finished`.
//!
//! **Chain fusion** (`sched::Pending`, the device's `Pending`). In step 2,
//! a successor's *first* instance (`n = 0`: we are instance 0 and the edge
//! has distance 0) is claimed with a plain Relaxed store of `(1, 0)`
//! instead of the CAS: nobody can see it ready before our publish and it
//! has no earlier instance, so nobody else writes its word until then. A
//! completion of the device's fast-path shape (at most `SMALL_FAN_IN`
//! predecessor edges, at most one successor edge, itself small and not
//! counted) that is not open, kept something (its folded next instance or
//! an early-claimed compute successor), and has no remote outs and no
//! pinned successors (`TaskDesc::pinned_succs`: they poll `done`, outside
//! every successor list) **defers** steps 4 and 7: every instance that
//! depends on its publish is already claimed, so deferring is the same as
//! completing later, and its word reads `(i + 1, i)` (in flight: every
//! claim CAS on it fails) until then. The worker owes the publish
//! (the newest word of a task replaces its older one) and makes every owed
//! publish with one Release fence followed by Relaxed stores (whoever
//! acquires one synchronizes with the fence; early claims were stored
//! before it), then the owed `tasks_finished` increments: at the first
//! completion that does not defer (under the fence of its own publish),
//! when `PEND_MAX` are owed, every 16 completions, before the worker waits
//! for its ring and when it leaves.
//!
//! **Completion of a comm instance** (`complete_serial`): remote outs,
//! publish (Release), `fence(SeqCst)`, `try_claim` of every successor and
//! of `t` itself; nothing is folded, claimed early or kept.
//! **Completion of a pinned instance** (`complete_pinned`): remote outs,
//! publish (Release) of `pinned_state_word(n + 1, known)` — nobody claims a
//! pinned task, so the word's claimed half carries the limit the worker
//! knows — and only when `t` has dynamic successors the fence and their
//! `try_claim`s (pushed, never kept). Pinned successors are left out of
//! successor lists: nobody claims them.
//! **Completion of a round** (`complete_pinned_round`, the device's round
//! path for a list [`LoweredGraph::is_round_list`] accepts): after the
//! list's last body, one Release fence, then each task's word stored
//! Relaxed; such lists have no remote outs and no dynamic successors.
//!
//! **Pinned workers** run their slot's list ([`LoweredGraph::pinned_compute`],
//! [`LoweredGraph::pinned_comm`]) in order, instance after instance: before
//! instance `n` of `t` they poll `preds_done_now` (Relaxed loads of the
//! predecessors' words, proxies included; an Acquire fence once all are
//! done, pairing with the Release publishes read) in a bounded wait, then
//! lower the limit they know (`known`, only decreasing) to what the awaited
//! words carried — or to the limit read after the acquire when one of them
//! carried none (a dynamic task's word, a proxy): `fold_limit` — run if `n`
//! is below it, fold their body's own `finish_at` into it, complete. A
//! stopping task lowers the limit before it publishes, and its word (and
//! every pinned word published after acquiring it) carries the lowered
//! value, so every pinned task that depends on the stopping instance
//! through edges sees it without reading the limit on every hop (loom
//! model (d)). Workers also read the limit when the list starts an
//! instance that is a multiple of 16 (comm workers: and every 64 idle
//! polls), for tasks no stop gates. The lists are in one global
//! topological order, so pinned workers never wait on each other in a
//! circle. A round list's worker waits once an iteration for the list's
//! predecessors from outside it (`round_preds_done_now`; edges inside are
//! its own earlier instances), runs the bodies in order and completes the
//! round (loom model (e)); a list holding the test-held task runs
//! instance by instance, as on the device.
//!
//! **Comm workers** poll, in order of preference: the next instance of
//! their pinned comm list when its predecessors are done; an instance from
//! the comm ring (`ReadyQueue::try_pop`, never waiting); then the relay of
//! their share of the proxies (`j ≡ block mod comm`) whose `done` changed
//! since they last looked (Relaxed poll, `fence(SeqCst)`, then the same
//! `try_claim` of every dynamic successor as a local completion: if the
//! local predecessor's completion read the old proxy value, that read is
//! coherence-ordered before the producer's store, which happens before the
//! relay's fence, so the completion's fence precedes the relay's in the SC
//! order and the relay sees the local publish). Claimed instances go to
//! their rings. Comm worker 0 also publishes progress, detects the stop
//! and is the PE's stall watchdog.
//!
//! **Ready rings** (`queue::ReadyQueue`): two ticketed Vyukov rings per PE,
//! compute (popped, blocking, by dynamic compute workers) and comm (try-popped
//! by comm workers); their module docs give the words. Capacities
//! ([`LoweredGraph::queue_capacity`], `comm_queue_capacity`) ≥ their tasks,
//! so they never overflow.
//!
//! **Early finish.** `limit` (per PE, the device's `Status::limit`) starts
//! at `iterations` and only decreases: [`crate::CpuCtx::finish_at`]`(n)`
//! lowers it to `max(n, iteration + 1)` (fetch_min, Relaxed; sequenced
//! before the stopping instance's publish, so whoever acquires that publish
//! reads the lowered limit after it). Only kinds declared
//! [`TaskKind::may_finish_early`] may call it (others fail the task with
//! [`crate::CpuCtx::FINISH_UNDECLARED`]); only PEs with such a kind read it
//! (`may_stop`). **`stopped`** (0 → 1): set by comm worker 0 once the limit
//! was lowered and every local task's `done` reached it.
//! **Termination** of a PE: `tasks_finished == num_tasks`, or `stopped`;
//! idle workers of that PE then leave. A PE waits for other PEs only
//! through proxies, so every PE's stopping tasks must stop at the same
//! iteration for a graph with edges between PEs to end cleanly (as on the
//! device).
//!
//! **`abort`** (0 → 1, one flag for the run: the device raises every PE's
//! abort words; one shared flag is the same): written by whoever records an
//! error; read by every wait every few hundred polls and by every worker
//! between instances. **`error_code`** (per PE): set once by CAS from 0
//! (first error per PE wins); the winner fills the rest of its PE's
//! `Status` record, with a run-wide ticket taken before the CAS; the host
//! reports the error with the lowest ticket (the earliest), naming its PE,
//! its task ([`LoweredGraph::label`]: the graph's id; a proxy's label says
//! so) and iteration. **`BlockStats[b]`**: written only by block `b`; read
//! by waiters (progress anywhere on the PE re-arms their deadline), the
//! comm watchdog and, after the join, the host. **`progress`**: published
//! by comm block 0; only increases.
//!
//! **Waits** (ring pop, ring push, pinned polls, the test hold) are
//! bounded: spin, then yield the thread, then sleep briefly; every few
//! hundred polls they check `abort` (and the end of the PE's run, for pops
//! and pinned polls) and a deadline of `timeout` (twice that for the
//! generic "nothing became ready" wait) measured from the last progress on
//! their PE. A waiter past its deadline records a `Timeout` status naming
//! its wait and raises abort; the host turns the record into
//! [`Error::DeviceTimeout`] with the deadlock report of every PE.
//!
//! **Symmetric heap.** Bodies see the addresses the graph's arguments carry
//! (host addresses of the runtime's heaps, [`crate::runtime::SymBuffer::addr`]);
//! [`crate::CpuCtx::peer_addr`] translates one by the heap bases, as the
//! device's `ctx.peer`. Bodies dereference them in their own `unsafe`; the
//! graph's edges order the accesses (a producer's stores into a peer's heap
//! happen before its Release proxy store, which the consumer acquires).
//!
//! # Tracing
//!
//! A traced run ([`EmulatorConfig::trace`], `RunOptions::trace` through the
//! runtime) records what the device's trace rings record, where the device
//! records it (`record.rs` has the table): task bodies, waits whose first
//! poll failed, comm workers' idle time, proxy signals sent and seen; into
//! one [`TraceRecorder::ring`] per block (the newest `records_per_block`
//! events kept, the rest counted as dropped), with global task ids, on a
//! host clock (ns since the run's start). [`RunReport::trace`] holds it.
//! Untraced, every event site is one `Option` check.
//!
//! # The CUDA check
//!
//! Before running, the emulator compiles the graph's CUDA source with
//! NVRTC when it is present, exactly as the GPU backend would for the run
//! (`cuda_check.rs`), and fails with the same [`Error::Nvrtc`]; without
//! NVRTC, or for kinds without device source, nothing is checked
//! ([`EmulatorConfig::check_cuda`] turns it off).
//!
//! # Differences from the device
//!
//! - *Early finish re-reads the limit.* Every claim (fold, `try_claim`)
//!   reads the limit again after its predecessors' Acquire loads. The
//!   device reads it once, before them (`complete_fast`, `complete`,
//!   `try_claim_next`), so a dependent of the stopping instance whose
//!   completion races the stop can run one instance past the limit,
//!   against `finish_at`'s contract. The loom model
//!   `early_finish_is_exact_for_a_dependent_whose_completion_races_the_stop`
//!   fails without the re-read. (To be fixed on the device.)
//! - *`finish_at` is checked per kind.* The device fails `finish_at` only
//!   when no kind of the PE was declared (`RUN_MAY_STOP`); the emulator
//!   fails it for every kind not declared, as [`TaskKind::may_finish_early`]
//!   documents, so a graph that leans on another kind's declaration fails
//!   here first.
//! - *A block is one thread.* The device runs a body on every thread of a
//!   block and completes on thread 0 (or block-wide for large fan-in, with
//!   barriers between the passes); here body and completion are sequenced
//!   in one thread, which is what the barriers establish. The completion
//!   makes the same decisions (fold, early claims, fence only when open,
//!   keep one) in one serial pass.
//! - *One scope.* The device distinguishes gpu scope (same PE) from sys
//!   scope (proxies, peers' heaps); CPU threads share one coherent memory,
//!   so both are the same Rust orderings here. The device's relaxed-poll +
//!   fence pairs appear as Acquire loads where the emulator polls rings,
//!   and as the same relaxed-poll + fence pattern in pinned polls and
//!   relays.
//! - *Time and host words.* Deadlines use `Instant`, not `%globaltimer`;
//!   there are no host-mapped control words (no host abort, no
//!   `HostAbort`); errors are ordered by a ticket, not by `error_ns`; the
//!   deadlock report of a multi-PE error covers every PE (the GPU backend
//!   reports the erroring PE's). Comm workers look at abort on every poll
//!   (the device every 64).
//! - *Test hold.* `hold_task` holds the instance in whatever loop gets it
//!   (dynamic, pinned or comm); the device holds only in dynamic compute
//!   blocks. A failed task's record names the role of the worker that ran
//!   it (the device's `ctx.fail` always records the compute role).
//! - *Zero comm workers* are allowed for a one-PE run without comm tasks or
//!   early finish (the device always has a comm block).
//!
//! None of these changes an ordering argument: every protocol step above is
//! one function over the atomics of `sync.rs`, issued in the device's
//! order with the C++ ordering the device's PTX operation implements
//! (`st.release` ↦ Release store, `ld.acquire` / `atom.acquire` ↦ Acquire,
//! `fence.sc` ↦ SeqCst fence, `fence.acq_rel` after a relaxed poll ↦
//! Acquire fence; PTX's memory model implements the scoped C++ model, and
//! the device pairs these operations at scopes that cover both parties:
//! gpu within a PE, sys for proxies and peers' heaps). So a
//! loom verdict over these functions — exactly-once claims, no lost
//! successor, happens-before from every predecessor instance's writes to
//! its dependents — is a verdict about the device's protocol, within
//! loom's limits: bounded preemptions, tiny graphs, and no load-buffering
//! executions (loom does not explore them; none of the arguments above
//! relies on their absence).
//!
//! # Checking
//!
//! The protocol steps are functions over the atomics of `sync.rs`, which
//! are loom's under `cfg(loom)`; `loom_tests.rs` model-checks them, with
//! mutants that must fail:
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib emulator::loom_tests`.
//! `tests/proptest_emulator.rs` checks exactly-once, in-order execution over
//! random graphs and random multi-PE placements (pinned, comm);
//! `tests/emulator.rs` and `tests/emulator_multipe.rs` cover the end-to-end
//! behaviours.

mod body;
mod comm;
mod compute;
mod cuda_check;
mod queue;
mod record;
mod sched;
mod shared;
mod sync;
mod wait;

pub use cuda_check::CHECK_ARCH;

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
    test_lowered_run_counted(pes, pinned, edges, autarky_shared::COUNTED_FAN_IN_DEFAULT)
}

/// [`test_lowered_run`] with tasks of `counted_fan_in` or more predecessor
/// edges counted.
#[cfg(test)]
pub(crate) fn test_lowered_run_counted(
    pes: &[u32],
    pinned: &[(usize, u32)],
    edges: &[(usize, usize, u32)],
    counted_fan_in: u32,
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
        counted_fan_in,
        ..Limits::default()
    })
    .unwrap()
}

use std::time::{Duration, Instant};

use crate::graph::{Graph, Limits, LoweredGraph, LoweredRun};
use crate::runtime::source::{Lean, Variant};
use crate::runtime::TraceOptions;
use crate::status::{RunReport, Snapshot};
use crate::trace::{Trace, TraceRecorder};
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
    /// Record a trace of the run ([`RunReport::trace`]): every worker's
    /// task instances, waits, idle time and signals, as the device's trace
    /// rings record them, each worker keeping its newest
    /// `records_per_block` events (the rest counted as dropped), on a host
    /// clock (ns since the run's start). Default `None`: nothing is
    /// recorded.
    pub trace: Option<TraceOptions>,
    /// Compile the graph's CUDA source with NVRTC before running, when
    /// NVRTC is present, and fail with [`Error::Nvrtc`] as the GPU backend
    /// would (the same megakernel, for sm_[`CHECK_ARCH`]; through the
    /// cubin cache). Without NVRTC, or when no kind has device source,
    /// nothing is checked. Default `true`; turn it off for graphs whose
    /// kinds have only CPU bodies but carry source that does not compile.
    pub check_cuda: bool,
    /// Tasks with at least this many predecessor edges are counted, as on
    /// the device ([`crate::Builder::counted_fan_in`]). Default 9; at least 2.
    pub counted_fan_in: u32,
    /// Counted tasks get arrival slots, as on the device, when the table
    /// fits in this many bytes per PE ([`crate::Builder::arrival_slots_max_bytes`]).
    /// Default 256 MiB; 0: one counter per task.
    pub arrival_slots_max_bytes: u64,
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
            trace: None,
            check_cuda: true,
            counted_fan_in: autarky_shared::COUNTED_FAN_IN_DEFAULT,
            arrival_slots_max_bytes: crate::runtime::DEFAULT_ARRIVAL_SLOTS_MAX_BYTES,
        }
    }
}

/// Runs `graph` for `iterations` on CPU threads with the megakernel's
/// scheduling protocol, on one PE (every task must be on PE 0).
///
/// Errors: [`Error::InvalidConfig`] for iterations outside
/// `1..=MAX_ITERATIONS`, no compute threads, a `hold_task` that is not a
/// task, a trace ring size out of range, or a placement the workers cannot
/// run (a pinned slot without a worker, dynamic compute tasks without an
/// unpinned compute worker, comm work without a comm worker);
/// [`Error::InvalidGraph`] from validation; [`Error::Nvrtc`] when the
/// kinds' CUDA source does not compile ([`EmulatorConfig::check_cuda`]);
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
    if cfg.counted_fan_in < 2 {
        return Err(Error::InvalidConfig(format!(
            "counted_fan_in must be at least 2, got {}",
            cfg.counted_fan_in
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
        counted_fan_in: cfg.counted_fan_in,
        ..Limits::default()
    })?;
    run_prelowered(
        graph,
        &lowered,
        iterations,
        cfg,
        &vec![0; pes as usize],
        // The graph's block shape if it sets one, as the GPU launches it.
        graph
            .threads_per_block()
            .unwrap_or(crate::runtime::DEFAULT_THREADS_PER_BLOCK),
    )
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
    if let Some(t) = l.first_unpinned_compute() {
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
/// every PE's symmetric heap base (host addresses); `threads_per_block` is
/// the block size the GPU would compile the megakernel for (the CUDA
/// check).
pub(crate) fn run_prelowered(
    graph: &Graph,
    run: &LoweredRun,
    iterations: u32,
    cfg: &EmulatorConfig,
    heaps: &[u64],
    threads_per_block: u32,
) -> Result<RunReport> {
    let pes = run.pes.len();
    if cfg.compute_threads == 0 {
        return Err(Error::InvalidConfig(
            "the emulator needs at least one compute thread".into(),
        ));
    }
    if let Some(t) = &cfg.trace {
        t.check()?;
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
                "hold_task {h} is not a task (the graph has {} task{})",
                graph.num_tasks(),
                if graph.num_tasks() == 1 { "" } else { "s" }
            ))
        })?),
    };
    let (comm, compute) = (cfg.comm_threads as u32, cfg.compute_threads as u32);
    // Arrival slots or one counter per counted task: as the GPU would.
    let slots =
        crate::runtime::source::uses_arrival_slots(run, iterations, cfg.arrival_slots_max_bytes);
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
    if cfg.check_cuda {
        // The megakernel the GPU backend would build for this run.
        let variant = Variant {
            trace: cfg.trace.is_some(),
            local_pes: pes as u32,
            lean: Lean::of(run),
            slots,
        };
        cuda_check::check(graph.kinds(), threads_per_block, variant)?;
    }
    // The trace's clock starts here, with the run.
    let recorder = cfg
        .trace
        .map(|t| TraceRecorder::ring(pes, (comm + compute) as usize, t.records_per_block as usize));
    let mut shared = shared::Run::new(
        emulated,
        iterations,
        slots,
        cfg.timeout,
        hold,
        heaps,
        recorder,
    );
    let start = Instant::now();
    // A worker the OS will not start ends the run (the others leave on
    // abort) with an error, not a panic.
    let mut spawn_error = None;
    std::thread::scope(|s| {
        'pes: for p in &shared.pes {
            let pinned = p.lowered.pin_compute_slots;
            for b in 0..comm + compute {
                let (shared, pe) = (&shared, p.pe);
                let spawned = std::thread::Builder::new()
                    .name(format!("autarky-emu-{pe}-{b}"))
                    .spawn_scoped(s, move || {
                        if b < comm {
                            comm::worker(shared, pe, b)
                        } else if b - comm < pinned {
                            compute::pinned(shared, pe, b, b - comm)
                        } else {
                            compute::dynamic(shared, pe, b)
                        }
                    });
                if let Err(e) = spawned {
                    shared.abort_all();
                    spawn_error = Some(format!(
                        "could not start emulator thread {b} of PE {pe} ({} a PE, {} PE{}): {e}; \
                         use fewer (Builder::emulator, Builder::comm_blocks, Builder::pes)",
                        comm + compute,
                        shared.pes.len(),
                        if shared.pes.len() == 1 { "" } else { "s" }
                    ));
                    break 'pes;
                }
            }
        }
    });
    if let Some(m) = spawn_error {
        return Err(Error::InvalidConfig(m));
    }
    let wall = start.elapsed();
    if let Some((payload, pe, task, iteration)) = shared
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        // The body's own message, with where it was raised (a re-raised
        // payload alone names no task).
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        // panic_any runs the panic hook (resume_unwind does not), so a
        // program that does not catch it prints where it was raised.
        match msg {
            Some(m) => std::panic::panic_any(format!(
                "task {} panicked on PE {pe}, iteration {iteration}: {m}",
                graph.label(task)
            )),
            None => std::panic::resume_unwind(payload),
        }
    }
    let trace = shared.trace.take().map(|r| {
        r.into_trace(
            (0..graph.num_tasks() as u32)
                .map(|g| graph.label(g))
                .collect(),
        )
    });
    finish(graph, &shared, iterations, comm, wall, trace)
}

/// After the join: the error of the run (the earliest recorded on any PE),
/// or its report (with its trace, if traced).
fn finish(
    graph: &Graph,
    run: &shared::Run<'_>,
    iterations: u32,
    comm: u32,
    wall: Duration,
    trace: Option<Trace>,
) -> Result<RunReport> {
    let states: Vec<Vec<u64>> = run.states.iter().map(|s| s.snapshot()).collect();
    let blocks: Vec<_> = run.pes.iter().map(|p| p.block_stats()).collect();
    let statuses: Vec<_> = run.pes.iter().map(|p| p.status()).collect();
    let snapshot = |pe: usize| Snapshot {
        graph,
        lowered: run.pes[pe].lowered,
        iterations: run.states[pe].limit(),
        run_iterations: iterations,
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
        let mut err = err.unwrap_or(Error::UnknownDeviceError {
            pe: pe as u32,
            code: 0,
        });
        // A body's refused buffer access: the refusal, not only its code.
        if let Error::TaskFailed {
            pe: epe,
            task,
            iteration,
            code,
        } = &err
        {
            if *code == crate::runtime::BufferAccessError::CODE as u64 {
                let refusals = run.refusals.lock().unwrap_or_else(|e| e.into_inner());
                let found = refusals.iter().find(|(p, g, i, _)| {
                    *p == *epe && *i == *iteration && graph.label(*g) == *task
                });
                if let Some((_, _, _, refusal)) = found {
                    err = Error::TaskBufferAccess {
                        pe: *epe,
                        task: task.clone(),
                        iteration: *iteration,
                        refusal: refusal.clone(),
                    };
                }
            }
        }
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
                // (A pinned task's claimed half carries a limit instead.)
                let claimed = claimed & !autarky_shared::STATE_LIMIT_CARRIED;
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
        trace,
    })
}
