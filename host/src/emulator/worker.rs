//! The emulated blocks: compute workers (pop, run, complete, keep one, push
//! the rest) and comm workers (publish progress, watch for stalls), the one
//! bounded wait helper they all use, and the first-error-wins status record.

use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use autarky_shared::{BlockStats, ErrorCode, Role, Status, WaitKind, TASK_NONE};

use super::queue::{QueueWait, ReadyQueue};
use super::sched::TaskStates;
use super::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use crate::graph::{CpuBody, CpuCtx, LoweredGraph};

/// Polls between two looks at the abort/finished flags and the clock.
const CHECK_EVERY: u32 = 256;
/// Polls spent spinning before a waiter starts yielding its thread.
const SPIN_POLLS: u32 = 64;
/// Polls after which a waiter sleeps between polls (an idle worker must not
/// starve the busy ones on a 2-core machine).
const SLEEP_POLLS: u32 = 4096;
/// Sleep between polls of a long wait.
const SLEEP: Duration = Duration::from_micros(50);
/// How often a comm worker publishes progress.
const COMM_PERIOD: Duration = Duration::from_micros(200);

/// One block's counters and current wait: `BlockStats` as atomics. Each
/// block writes only its own entry (so every field is Relaxed: there is one
/// writer, and readers — waiters summing progress, the comm watchdog, the
/// host after the join — only need eventually-current values or are ordered
/// by the join).
pub(crate) struct BlockCell {
    completed: AtomicU64,
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

    fn set_wait(&self, kind: WaitKind, index: u32, wanted: u64) {
        self.wait_index.store(index, Ordering::Relaxed);
        self.wait_wanted.store(wanted, Ordering::Relaxed);
        self.wait_kind.store(kind as u32, Ordering::Relaxed);
    }

    fn clear_wait(&self) {
        self.wait_kind
            .store(WaitKind::None as u32, Ordering::Relaxed);
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

/// Everything the workers of one run share.
pub(crate) struct Shared<'a> {
    pub lowered: &'a LoweredGraph,
    /// CPU body of every task (resolved before any thread starts).
    pub bodies: Vec<CpuBody>,
    pub states: TaskStates,
    pub queue: ReadyQueue,
    pub blocks: Box<[BlockCell]>,
    pub comm_blocks: u32,
    pub timeout: Duration,
    pub hold_task: Option<u32>,
    /// 0 → 1 when the last task finished; written by that completion,
    /// read by waiters to leave. Nothing is published through it (the host
    /// joins the workers), so both sides use Relaxed.
    finished: AtomicBool,
    /// 0 → 1 when an error was recorded; read by every waiter every
    /// [`CHECK_EVERY`] polls and by compute workers between instances.
    /// Relaxed both ways: it only makes workers leave; the error record is
    /// read by the host after the join.
    abort: AtomicBool,
    /// `ErrorCode` of the first error, set once by CAS from 0.
    error_code: AtomicU32,
    /// The first error's record, written by the CAS winner only.
    status: Mutex<Status>,
    /// Instances completed, published by comm worker 0 (the emulator's
    /// `HostControl::progress`); only increases.
    pub progress: AtomicU64,
    /// A panic payload from a task body, re-raised by the host after the join.
    pub panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl<'a> Shared<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        lowered: &'a LoweredGraph,
        bodies: Vec<CpuBody>,
        iterations: u32,
        comm_blocks: u32,
        compute_blocks: u32,
        timeout: Duration,
        hold_task: Option<u32>,
    ) -> Self {
        let queue = ReadyQueue::new(lowered.queue_capacity);
        // The roots' instance 0 is claimed in the initial state; queue them
        // in `roots` order, as the device's initial queue contents.
        for &r in &lowered.roots {
            queue
                .push(r, 0, |_| unreachable!("capacity ≥ tasks ≥ roots"))
                .expect("the initial queue fits");
        }
        Shared {
            lowered,
            bodies,
            states: TaskStates::new(lowered, iterations),
            queue,
            blocks: (0..comm_blocks + compute_blocks)
                .map(|_| BlockCell::new())
                .collect(),
            comm_blocks,
            timeout,
            hold_task,
            finished: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            error_code: AtomicU32::new(0),
            status: Mutex::new(Status::default()),
            progress: AtomicU64::new(0),
            panic: Mutex::new(None),
        }
    }

    /// Records `status` if it is the first error of the run, then raises
    /// abort either way (a later error also means "stop").
    fn fail(&self, status: Status) {
        // AcqRel/Acquire is more than needed (the record itself is behind a
        // mutex and read after the join); what matters is that exactly one
        // CAS from 0 succeeds: first error wins.
        if self
            .error_code
            .compare_exchange(0, status.error_code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            *self.status.lock().unwrap_or_else(|e| e.into_inner()) = status;
        }
        self.abort.store(true, Ordering::Relaxed);
    }

    fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }

    fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }

    /// Sum of every block's completed counter: progress anywhere.
    fn completed_total(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| b.completed.load(Ordering::Relaxed))
            .sum()
    }

    /// The status record (after the join).
    pub fn status(&self) -> Status {
        let mut s = *self.status.lock().unwrap_or_else(|e| e.into_inner());
        s.error_code = self.error_code.load(Ordering::Relaxed);
        s.abi_compiled = autarky_shared::ABI_VERSION;
        s
    }

    /// Every block's stats (after the join).
    pub fn block_stats(&self) -> Vec<BlockStats> {
        self.blocks.iter().map(BlockCell::snapshot).collect()
    }

    fn role(&self, block: u32) -> Role {
        if block < self.comm_blocks {
            Role::Comm
        } else {
            Role::Compute
        }
    }
}

/// Why a wait gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GiveUp {
    /// The run finished (only poppers may leave for this).
    Finished,
    /// Abort was raised, possibly by this waiter's own timeout.
    Abort,
}

/// The bounded wait policy: spin, then yield, then sleep; every
/// [`CHECK_EVERY`] polls look at abort (and finished, if allowed) and at the
/// deadline, which is re-armed whenever progress was made anywhere.
struct Waiter<'s, 'a> {
    shared: &'s Shared<'a>,
    block: u32,
    polls: u32,
    deadline: Instant,
    progress: u64,
    leave_when_finished: bool,
    gave_up: Option<GiveUp>,
}

impl<'s, 'a> Waiter<'s, 'a> {
    fn new(shared: &'s Shared<'a>, block: u32, leave_when_finished: bool) -> Self {
        Waiter {
            shared,
            block,
            polls: 0,
            deadline: Instant::now() + shared.timeout,
            progress: shared.completed_total(),
            leave_when_finished,
            gave_up: None,
        }
    }

    /// One failed poll of a wait on `kind`/`index` wanting `wanted`, having
    /// seen `seen`, on behalf of `(task, iteration)`.
    fn poll(
        &mut self,
        kind: WaitKind,
        index: u32,
        seen: u64,
        wanted: u64,
        task: u32,
        iteration: u32,
    ) -> ControlFlow<()> {
        let me = &self.shared.blocks[self.block as usize];
        if self.polls == 0 {
            me.set_wait(kind, index, wanted);
        }
        if self.polls % CHECK_EVERY == 0 {
            if self.shared.aborted() {
                return self.give_up(GiveUp::Abort);
            }
            if self.leave_when_finished && self.shared.is_finished() {
                return self.give_up(GiveUp::Finished);
            }
            let now = Instant::now();
            let progress = self.shared.completed_total();
            if progress != self.progress {
                self.progress = progress;
                self.deadline = now + self.shared.timeout;
            } else if now >= self.deadline {
                self.shared.fail(Status {
                    error_code: ErrorCode::Timeout as u32,
                    pe: 0,
                    block: self.block,
                    role: self.shared.role(self.block) as u32,
                    task,
                    iteration,
                    wait_kind: kind as u32,
                    wait_index: index,
                    seen,
                    wanted,
                    ..Status::default()
                });
                return self.give_up(GiveUp::Abort);
            }
        }
        self.polls = self.polls.saturating_add(1);
        if self.polls < SPIN_POLLS {
            super::sync::spin_hint();
        } else if self.polls < SLEEP_POLLS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(SLEEP);
        }
        ControlFlow::Continue(())
    }

    fn give_up(&mut self, why: GiveUp) -> ControlFlow<()> {
        self.gave_up = Some(why);
        // Keep the wait in BlockStats when the run ends badly: the
        // deadlock report lists what every block was waiting for.
        if why == GiveUp::Finished {
            self.shared.blocks[self.block as usize].clear_wait();
        }
        ControlFlow::Break(())
    }

    /// The wait succeeded: clear it from BlockStats.
    fn done(self) {
        if self.polls > 0 {
            self.shared.blocks[self.block as usize].clear_wait();
        }
    }
}

fn queue_poll(w: &mut Waiter<'_, '_>, q: QueueWait, task: u32, iteration: u32) -> ControlFlow<()> {
    w.poll(
        q.kind,
        q.slot,
        q.seen as u64,
        q.wanted as u64,
        task,
        iteration,
    )
}

/// A compute block: pop (or keep) an instance, run it, complete it, keep
/// the first instance the completion claimed and push the rest.
pub(crate) fn compute(shared: &Shared<'_>, block: u32) {
    let me = &shared.blocks[block as usize];
    let iterations = shared.states.iterations();
    let mut next: Option<(u32, u32)> = None;
    let mut claims = Vec::new();
    loop {
        let (task, iteration) = match next.take() {
            Some(x) => x,
            None => {
                let mut w = Waiter::new(shared, block, true);
                match shared.queue.pop(|q| queue_poll(&mut w, q, TASK_NONE, 0)) {
                    Some(x) => {
                        w.done();
                        x
                    }
                    None => return,
                }
            }
        };
        if shared.aborted() {
            return;
        }
        me.task.store(task, Ordering::Relaxed);
        me.iteration.store(iteration, Ordering::Relaxed);

        if shared.hold_task == Some(task) {
            // Test hook: this block holds the instance and never runs it,
            // like a dependency that never completes. It waits (bounded)
            // until the run aborts; its own deadline may be what fires.
            let (_, done) = autarky_shared::state_parts(shared.states.snapshot()[task as usize]);
            let mut w = Waiter::new(shared, block, false);
            while w
                .poll(
                    WaitKind::TestHold,
                    task,
                    done as u64,
                    iteration as u64 + 1,
                    task,
                    iteration,
                )
                .is_continue()
            {}
            return;
        }

        let ctx = CpuCtx {
            task,
            iteration,
            pe: 0,
            block,
            iterations,
            args: task_args(shared.lowered, task),
        };
        let body = &shared.bodies[task as usize];
        match std::panic::catch_unwind(AssertUnwindSafe(|| body(&ctx))) {
            Ok(Ok(())) => {}
            Ok(Err(code)) => {
                shared.fail(task_failed(block, task, iteration, code as u64));
                return;
            }
            Err(payload) => {
                // The host re-raises the panic after the join; the record
                // makes every other worker leave at once instead of timing out.
                let mut slot = shared.panic.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(payload);
                drop(slot);
                shared.fail(task_failed(block, task, iteration, u64::MAX));
                return;
            }
        }

        claims.clear();
        let c = shared
            .states
            .complete(shared.lowered, task, iteration, &mut claims);
        // Relaxed: one writer (this block); readers only watch for change.
        me.completed.fetch_add(1, Ordering::Relaxed);
        if c.run_finished {
            shared.finished.store(true, Ordering::Relaxed);
        }
        let mut it = claims.drain(..);
        // Keep one: run the first claimed instance ourselves (no hand-off
        // through the queue on the dependency chain), push the rest.
        next = it.next();
        for (t, i) in it {
            let mut w = Waiter::new(shared, block, false);
            match shared.queue.push(t, i, |q| queue_poll(&mut w, q, t, i)) {
                Ok(()) => w.done(),
                Err(_) => return,
            }
        }
    }
}

/// A comm block: publishes progress every [`COMM_PERIOD`] and, as a stall
/// watchdog, raises a timeout when nothing completed anywhere for twice the
/// wait deadline (compute waiters, which know what they wait for, normally
/// report first; this catches bodies that never return).
pub(crate) fn comm(shared: &Shared<'_>, block: u32) {
    let total = shared.lowered.tasks.len() as u64 * shared.states.iterations() as u64;
    let mut last = shared.completed_total();
    let mut since = Instant::now();
    while !shared.aborted() && !shared.is_finished() {
        std::thread::sleep(COMM_PERIOD);
        let now_total = shared.completed_total();
        if block == 0 {
            // Relaxed: the host reads it as a progress indicator only.
            shared.progress.store(now_total, Ordering::Relaxed);
        }
        let now = Instant::now();
        if now_total != last {
            last = now_total;
            since = now;
        } else if now.duration_since(since) >= 2 * shared.timeout && !shared.is_finished() {
            shared.fail(Status {
                error_code: ErrorCode::Timeout as u32,
                pe: 0,
                block,
                role: Role::Comm as u32,
                task: TASK_NONE,
                iteration: 0,
                wait_kind: WaitKind::Progress as u32,
                wait_index: 0,
                seen: now_total,
                wanted: total,
                ..Status::default()
            });
        }
    }
    if block == 0 {
        shared
            .progress
            .store(shared.completed_total(), Ordering::Relaxed);
    }
}

fn task_failed(block: u32, task: u32, iteration: u32, code: u64) -> Status {
    Status {
        error_code: ErrorCode::TaskFailed as u32,
        pe: 0,
        block,
        role: Role::Compute as u32,
        task,
        iteration,
        detail: code,
        ..Status::default()
    }
}

fn task_args(lowered: &LoweredGraph, task: u32) -> &[u8] {
    let d = &lowered.tasks[task as usize];
    &lowered.args[d.arg_offset as usize..(d.arg_offset + d.arg_len) as usize]
}
