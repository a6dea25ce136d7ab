//! What the emulated blocks of a run share: every PE's state words, rings,
//! block stats and status record, the run-wide abort flag, and the
//! first-error-wins rule across PEs.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use autarky_shared::{BlockStats, Role, Status, WaitKind, TASK_NONE};

use super::queue::ReadyQueue;
use super::sched::TaskStates;
use super::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use crate::graph::{CpuBody, LoweredGraph};
use crate::trace::TraceRecorder;

/// One block's counters and current wait: `BlockStats` as atomics. Each
/// block writes only its own entry (so every field is Relaxed: there is one
/// writer, and readers — waiters summing progress, the comm watchdog, the
/// host after the join — only need eventually-current values or are ordered
/// by the join).
pub(crate) struct BlockCell {
    pub completed: AtomicU64,
    wait_kind: AtomicU32,
    wait_index: AtomicU32,
    wait_wanted: AtomicU64,
    task: AtomicU32,
    iteration: AtomicU32,
}

impl BlockCell {
    fn new() -> Self {
        BlockCell {
            completed: AtomicU64::new(0),
            wait_kind: AtomicU32::new(WaitKind::None as u32),
            wait_index: AtomicU32::new(0),
            wait_wanted: AtomicU64::new(0),
            task: AtomicU32::new(TASK_NONE),
            iteration: AtomicU32::new(0),
        }
    }

    pub fn set_wait(&self, kind: WaitKind, index: u32, wanted: u64) {
        self.wait_index.store(index, Ordering::Relaxed);
        self.wait_wanted.store(wanted, Ordering::Relaxed);
        self.wait_kind.store(kind as u32, Ordering::Relaxed);
    }

    pub fn clear_wait(&self) {
        self.wait_kind
            .store(WaitKind::None as u32, Ordering::Relaxed);
    }

    /// The instance this block runs (or last ran).
    pub fn set_running(&self, task: u32, iteration: u32) {
        self.task.store(task, Ordering::Relaxed);
        self.iteration.store(iteration, Ordering::Relaxed);
    }

    /// `(local task, iteration)` of the instance this block runs or last
    /// ran, when it is not waiting (for the stall warning; racy, a hint).
    pub fn busy_with(&self) -> Option<(u32, u32)> {
        let s = self.snapshot();
        (s.wait_kind == WaitKind::None as u32 && s.task != TASK_NONE)
            .then_some((s.task, s.iteration))
    }

    /// One more instance completed (Relaxed: one writer; readers only
    /// watch for change).
    pub fn count(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> BlockStats {
        BlockStats {
            completed: self.completed.load(Ordering::Relaxed),
            wait_kind: self.wait_kind.load(Ordering::Relaxed),
            wait_index: self.wait_index.load(Ordering::Relaxed),
            wait_wanted: self.wait_wanted.load(Ordering::Relaxed),
            task: self.task.load(Ordering::Relaxed),
            iteration: self.iteration.load(Ordering::Relaxed),
        }
    }
}

/// One emulated PE: its tables, bodies, rings, blocks and status record.
/// Its state words are `Run::states[pe]` (peers store into them).
pub(crate) struct Pe<'a> {
    pub pe: u32,
    pub lowered: &'a LoweredGraph,
    /// CPU body of every local task (resolved before any thread starts).
    pub bodies: Vec<CpuBody>,
    /// Was the kind of each local task declared `may_finish_early`?
    pub may_finish: Vec<bool>,
    /// Compute ring (dynamic compute tasks), seeded with `roots`.
    pub queue: ReadyQueue,
    /// Comm ring (dynamic comm tasks), seeded with `comm_roots`.
    pub comm_queue: ReadyQueue,
    pub blocks: Box<[BlockCell]>,
    pub comm_blocks: u32,
    /// `ErrorCode` of this PE's first error, set once by CAS from 0.
    error_code: AtomicU32,
    /// This PE's first error's record and its run-wide order, written by
    /// the CAS winner only.
    status: Mutex<(u64, Status)>,
    /// Instances completed on this PE, published by comm worker 0 (the
    /// emulator's `HostControl::progress`); only increases.
    pub progress: AtomicU64,
}

impl<'a> Pe<'a> {
    pub fn new(
        lowered: &'a LoweredGraph,
        bodies: Vec<CpuBody>,
        may_finish: Vec<bool>,
        comm_blocks: u32,
        compute_blocks: u32,
    ) -> Self {
        // The roots' instance 0 is claimed in the initial state; queue them
        // in `roots` order, as the device's initial ring contents.
        let seeded = |capacity: u32, roots: &[u32]| {
            let q = ReadyQueue::new(capacity);
            for &r in roots {
                q.push(r, 0, |_| unreachable!("capacity ≥ tasks ≥ roots"))
                    .expect("the initial ring fits");
            }
            q
        };
        Pe {
            pe: lowered.pe,
            lowered,
            bodies,
            may_finish,
            queue: seeded(lowered.queue_capacity, &lowered.roots),
            comm_queue: seeded(lowered.comm_queue_capacity, &lowered.comm_roots),
            blocks: (0..comm_blocks + compute_blocks)
                .map(|_| BlockCell::new())
                .collect(),
            comm_blocks,
            error_code: AtomicU32::new(0),
            status: Mutex::new((u64::MAX, Status::default())),
            progress: AtomicU64::new(0),
        }
    }

    /// Sum of every block's completed counter: progress anywhere on this
    /// PE (the device's `pe_progress`).
    pub fn completed_total(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| b.completed.load(Ordering::Relaxed))
            .sum()
    }

    /// The role of local block `block`.
    pub fn role(&self, block: u32) -> Role {
        if block < self.comm_blocks {
            Role::Comm
        } else {
            Role::Compute
        }
    }

    /// The status record and its run-wide order (after the join).
    pub fn status(&self) -> (u64, Status) {
        let (order, mut s) = *self.status.lock().unwrap_or_else(|e| e.into_inner());
        s.error_code = self.error_code.load(Ordering::Relaxed);
        s.abi_compiled = autarky_shared::ABI_VERSION;
        (order, s)
    }

    /// Every block's stats (after the join).
    pub fn block_stats(&self) -> Vec<BlockStats> {
        self.blocks.iter().map(BlockCell::snapshot).collect()
    }
}

/// Everything the workers of one run share.
pub(crate) struct Run<'a> {
    pub pes: Vec<Pe<'a>>,
    /// Every PE's state words, indexed by PE: producers store into their
    /// consumers' proxy words here.
    pub states: Vec<TaskStates>,
    pub timeout: Duration,
    /// `(pe, local task)` the test hook holds.
    pub hold: Option<(u32, u32)>,
    /// Every PE's symmetric heap base (host addresses).
    pub heaps: &'a [u64],
    pub started: Instant,
    /// 0 → 1 when an error was recorded on any PE (the device raises every
    /// PE's abort word; one shared flag is the same thing). Read by every
    /// waiter every few hundred polls and by every worker between
    /// instances. Relaxed both ways: it only makes workers leave; the error
    /// records are read by the host after the join.
    abort: AtomicBool,
    /// Hands out the run-wide order of the PEs' first errors, so the host
    /// reports the earliest (the device compares `Status::error_ns`).
    error_order: AtomicU64,
    /// A panic payload from a task body, with where it happened (PE,
    /// global task id, iteration), re-raised by the host after the join.
    pub panic: Mutex<Option<BodyPanic>>,
    /// Buffer refusals bodies returned as their failure code, with where
    /// (PE, global task id, iteration): the run's error names the reason.
    pub refusals: Mutex<Vec<(u32, u32, u32, crate::runtime::BufferAccessError)>>,
    /// The trace of a traced run: one ring per block of every PE, each
    /// written by its block's worker only (`record.rs` says what is
    /// recorded where). `None`: every event site does nothing.
    pub trace: Option<TraceRecorder>,
}

/// A task body's panic payload and where it was raised: PE, global task
/// id, iteration.
pub type BodyPanic = (Box<dyn std::any::Any + Send>, u32, u32, u32);

impl<'a> Run<'a> {
    pub fn new(
        pes: Vec<Pe<'a>>,
        iterations: u32,
        slots: bool,
        timeout: Duration,
        hold: Option<(u32, u32)>,
        heaps: &'a [u64],
        trace: Option<TraceRecorder>,
    ) -> Self {
        let states = pes
            .iter()
            .map(|p| TaskStates::with_slots(p.lowered, iterations, slots))
            .collect();
        Run {
            pes,
            states,
            timeout,
            hold,
            heaps,
            started: Instant::now(),
            abort: AtomicBool::new(false),
            error_order: AtomicU64::new(0),
            panic: Mutex::new(None),
            refusals: Mutex::new(Vec::new()),
            trace,
        }
    }

    /// Records `status` on PE `pe` if it is that PE's first error, then
    /// raises abort for every PE either way (a later error also means
    /// "stop").
    pub fn fail(&self, pe: u32, mut status: Status) {
        let p = &self.pes[pe as usize];
        // The ticket is taken before the CAS, so an error's order is never
        // later than that of an error recorded after it on another PE.
        let order = self.error_order.fetch_add(1, Ordering::Relaxed);
        // Exactly one CAS from 0 succeeds per PE: first error wins. The
        // record itself is behind a mutex and read after the join, so the
        // orderings carry nothing.
        if p.error_code
            .compare_exchange(0, status.error_code, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            status.pe = pe;
            status.error_ns = self.started.elapsed().as_nanos() as u64;
            *p.status.lock().unwrap_or_else(|e| e.into_inner()) = (order, status);
        }
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Raises abort with no error record: the host stops the run itself
    /// (a worker thread that could not be started).
    pub fn abort_all(&self) {
        self.abort.store(true, Ordering::Relaxed);
    }

    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
}
