//! The one bounded wait policy every emulated block uses: spin, then yield
//! the thread, then sleep; every [`CHECK_EVERY`] polls look at abort (and
//! at the end of the run, if the waiter may leave for it) and at the
//! deadline, which is re-armed whenever the waiter's PE made progress.
//! In a traced run a wait records `WaitBegin` at its first failed poll and
//! `WaitEnd` when it ends, whatever its result (the device's `TraceWait`).

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use autarky_shared::{ErrorCode, Status, WaitKind};

use super::queue::QueueWait;
use super::record;
use super::shared::Run;
use crate::trace::{wait_word, BlockTrace};

/// Polls between two looks at the abort/finished flags and the clock.
pub(crate) const CHECK_EVERY: u32 = 256;
/// Polls spent spinning before a waiter starts yielding its thread.
const SPIN_POLLS: u32 = 64;
/// Polls after which a waiter sleeps between polls (an idle worker must not
/// starve the busy ones on a 2-core machine).
const SLEEP_POLLS: u32 = 4096;
/// Sleep between polls of a long wait.
const SLEEP: Duration = Duration::from_micros(50);

/// Backs off after the `polls`-th failed poll of a wait (spin, yield, sleep).
pub(crate) fn back_off(polls: u32) {
    if polls < SPIN_POLLS {
        super::sync::spin_hint();
    } else if polls < SLEEP_POLLS {
        std::thread::yield_now();
    } else {
        std::thread::sleep(SLEEP);
    }
}

/// Why a wait gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// The PE's run finished (only poppers and pinned pollers may leave for
    /// this).
    Finished,
    /// Abort was raised, possibly by this waiter's own timeout.
    Abort,
}

/// One wait of block `block` of PE `pe`.
pub(crate) struct Waiter<'s, 'a> {
    run: &'s Run<'a>,
    pe: u32,
    block: u32,
    polls: u32,
    deadline: Instant,
    /// Generic waits ("nothing became ready") get twice the timeout, so the
    /// error names a specific wait — the cause, not its symptom — when there
    /// is one (the device does the same).
    patience: Duration,
    progress: u64,
    leave_when_finished: bool,
    pub gave_up: Option<GiveUp>,
    /// The block's trace handle (traced runs only).
    trace: Option<BlockTrace<'s>>,
    /// `(global task, iteration, word)` of the `WaitBegin` recorded at the
    /// first failed poll, for the `WaitEnd` recorded on drop.
    begun: Option<(u32, u32, u64)>,
}

impl<'s, 'a> Waiter<'s, 'a> {
    pub fn new(run: &'s Run<'a>, pe: u32, block: u32, leave_when_finished: bool) -> Self {
        Waiter {
            run,
            pe,
            block,
            polls: 0,
            deadline: Instant::now() + run.timeout,
            patience: run.timeout,
            progress: run.pes[pe as usize].completed_total(),
            leave_when_finished,
            gave_up: None,
            trace: run.tracer(pe, block),
            begun: None,
        }
    }

    /// One failed poll of a wait on `kind`/`index` wanting `wanted`, having
    /// seen `seen`, on behalf of `(task, iteration)`.
    pub fn poll(
        &mut self,
        kind: WaitKind,
        index: u32,
        seen: u64,
        wanted: u64,
        task: u32,
        iteration: u32,
    ) -> ControlFlow<()> {
        let pe = &self.run.pes[self.pe as usize];
        let me = &pe.blocks[self.block as usize];
        if self.polls == 0 {
            if let Some(t) = &self.trace {
                let begun = (
                    record::global(pe.lowered, task),
                    iteration,
                    wait_word(kind, index),
                );
                t.wait_begin(begun.0, begun.1, begun.2);
                self.begun = Some(begun);
            }
            me.set_wait(kind, index, wanted);
            if matches!(kind, WaitKind::QueueItem | WaitKind::Progress) {
                self.patience = 2 * self.run.timeout;
                self.deadline = Instant::now() + self.patience;
            }
        }
        if self.polls % CHECK_EVERY == 0 {
            if self.run.aborted() {
                return self.give_up(GiveUp::Abort);
            }
            if self.leave_when_finished && self.run.states[self.pe as usize].is_finished() {
                return self.give_up(GiveUp::Finished);
            }
            let now = Instant::now();
            let progress = pe.completed_total();
            if progress != self.progress {
                self.progress = progress;
                self.deadline = now + self.patience;
            } else if now >= self.deadline {
                self.run.fail(
                    self.pe,
                    Status {
                        error_code: ErrorCode::Timeout as u32,
                        block: self.block,
                        role: pe.role(self.block) as u32,
                        task,
                        iteration,
                        wait_kind: kind as u32,
                        wait_index: index,
                        seen,
                        wanted,
                        ..Status::default()
                    },
                );
                return self.give_up(GiveUp::Abort);
            }
        }
        self.polls = self.polls.saturating_add(1);
        back_off(self.polls);
        ControlFlow::Continue(())
    }

    /// A queue operation's failed poll.
    pub fn queue_poll(&mut self, q: QueueWait, task: u32, iteration: u32) -> ControlFlow<()> {
        self.poll(
            q.kind,
            q.slot,
            q.seen as u64,
            q.wanted as u64,
            task,
            iteration,
        )
    }

    fn give_up(&mut self, why: GiveUp) -> ControlFlow<()> {
        self.gave_up = Some(why);
        // Keep the wait in BlockStats when the run ends badly: the
        // deadlock report lists what every block was waiting for.
        if why == GiveUp::Finished {
            self.run.pes[self.pe as usize].blocks[self.block as usize].clear_wait();
        }
        ControlFlow::Break(())
    }

    /// The wait succeeded: clear it from BlockStats.
    pub fn done(self) {
        if self.polls > 0 {
            self.run.pes[self.pe as usize].blocks[self.block as usize].clear_wait();
        }
    }
}

impl Drop for Waiter<'_, '_> {
    /// Every end of a wait that began (success, a give-up, or the caller
    /// leaving its loop) records its `WaitEnd`.
    fn drop(&mut self) {
        if let (Some(t), Some((task, iteration, word))) = (&self.trace, self.begun) {
            t.wait_end(task, iteration, word);
        }
    }
}
