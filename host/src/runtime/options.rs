//! Options of one run ([`RunOptions`]), read by every backend.
//!
//! Every option is honoured by every backend or refused with
//! [`Error::Unsupported`] naming the backend, before anything runs:
//!
//! | option | GPU | emulator |
//! |---|---|---|
//! | `iterations`, `timeout` | yes | yes |
//! | `watchdog`, `abort_grace` | yes | refused: no kernel to watch; waits end at `timeout` |
//! | `timed` | device events | refused: no device events ([`RunReport::wall`] is always measured) |
//! | `trace` | device trace rings ([`RunReport::trace`]) | the same events from its workers, host clock ([`crate::trace::TraceRecorder::ring`]) |
//! | `l2_persist` | an L2 access-policy window on each GPU's launch (one PE per GPU) | refused: no L2 to keep anything in |
//! | `hold_task` (feature `fault-injection`) | yes | yes |
//! | `corrupt_kind`, `abi_version_override` (feature `fault-injection`) | yes | refused |

use std::time::Duration;

use autarky_shared::MAX_ITERATIONS;

use crate::graph::TaskId;
use crate::{Error, Result};

#[cfg(doc)]
use crate::RunReport;

/// The longest timeout, watchdog or grace honoured (2⁶² ns, about 146
/// years): longer ones — `Duration::MAX` for "no timeout" — are this, so
/// deadlines (and the doubled deadline of a generic wait) never overflow on
/// the host or in the kernel's 64-bit nanosecond clock.
pub const MAX_TIMEOUT: Duration = Duration::from_nanos(1 << 62);

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Instances of every task (1..=MAX_ITERATIONS).
    pub iterations: u32,
    /// Overrides the runtime's wait timeout for this run (this and the
    /// two below: at most [`MAX_TIMEOUT`], which longer ones become).
    pub timeout: Option<Duration>,
    /// Host watchdog: raise abort after this long without progress
    /// (default: 2 × timeout + 1 s).
    pub watchdog: Option<Duration>,
    /// After the watchdog raised abort, how long to wait for the kernel to
    /// stop before reporting [`Error::Unstoppable`] (default: max(5 s,
    /// watchdog / 2)).
    pub abort_grace: Option<Duration>,
    /// Record device events around the launch ([`RunReport::event_ms`]).
    /// The two `cuEventRecord` calls are the only driver calls besides the
    /// launch before the kernel ends. GPU only: the emulator refuses it
    /// ([`Error::Unsupported`]) rather than report a wall time as a device
    /// time; [`RunReport::wall`] is measured on every backend.
    pub timed: bool,
    /// Record a trace of the run ([`RunReport::trace`]): every block's task
    /// instances, waits, idle time and signals, on the device clock. GPU:
    /// the megakernel is compiled with its trace rings (a separate cubin;
    /// untraced runs carry no trace code) and the rings are downloaded
    /// after the kernel ended, so the run stays CPU-free. The emulator
    /// records the same events from its workers, into rings of the same
    /// size, on a host clock (ns since the run's start).
    pub trace: Option<TraceOptions>,
    /// Keep a range of every PE's symmetric heap in L2 while the run lasts
    /// (GPU only, one PE per GPU): see [`L2Persist`].
    pub l2_persist: Option<L2Persist>,
    /// How the device lays out the tasks' state words (each task's
    /// `(claimed, done)` word, which its successors poll and its completion
    /// writes). `None`: as the environment variable
    /// `AUTARKY_STATE_SPACING=8|128` (bytes a word) says, for experiments,
    /// else chosen per run: a line each ([`StateLayout::Spread`]) on a run
    /// of one PE with at most 16 384 tasks where no task checks an instance
    /// by reading more than 8 predecessors' words (a join counted by
    /// arrival slots reads none), packed otherwise. GPU only; the
    /// emulator's state is host memory and takes no layout. [`StateLayout::Spread`] is refused
    /// ([`crate::Error::Unsupported`]) on runs of more than one PE: it has
    /// been measured and tested on one.
    pub state_layout: Option<StateLayout>,
    /// Fault injection: never run this task (a dependency that never
    /// completes). Both backends.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub hold_task: Option<TaskId>,
    /// Fault injection: give this task this kind index in the device
    /// tables. GPU only.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub corrupt_kind: Option<(TaskId, u32)>,
    /// Fault injection: pass this ABI version instead of the real one. GPU
    /// only.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub abi_version_override: Option<u32>,
}

/// The device layout of a run's task state words ([`RunOptions::state_layout`]).
/// Measured on one H200 (docs/performance.md, sessions 26 and 32): a line
/// each helps graphs of many narrow tasks that publish often (a 32 × 32
/// stencil of empty pinned tiles: 1.87 → 1.45 µs an iteration; the same
/// tiles dynamic: 6.4 → 5.9), and hurts graphs whose tasks scan many
/// predecessors' words, which then read a line per input (CG 2D 1024²:
/// 36.3 → 44.2 µs an iteration) — which is what the automatic choice
/// (`None`) looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateLayout {
    /// 8 bytes a task, sixteen to a 128-byte line: a wide join's scan
    /// reads one line per sixteen inputs, but every block that publishes
    /// or polls one of a line's words queues behind the others' accesses
    /// at the line's L2 slice.
    Packed,
    /// A 128-byte line a task: no queueing behind neighbours' words.
    Spread,
}

/// A range of the symmetric heap (the same on every PE: byte `offset`,
/// `bytes` long; e.g. from [`crate::SymBuffer::offset`]) that a run keeps
/// in L2 ([`RunOptions::l2_persist`]): each GPU's launch gets an L2
/// access-policy window over its PE's copy, with persisting hits, and the
/// context sets aside `min(bytes, DeviceProps::max_persisting_l2)` of L2 for
/// them (the window's hit ratio is that share of `bytes`: a window larger
/// than the set-aside part would evict its own lines). After the kernel
/// ended the persisting lines are reset and the set-aside is released, so
/// nothing lingers into later work. For data a run reads many times
/// between passes over larger data: CG's vectors while its matrix streams
/// through (one H200, 2D 1024²: 77.1 → 74.4 µs an iteration, DRAM reads
/// −30 MB an iteration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Persist {
    /// Byte offset in every PE's heap.
    pub offset: usize,
    /// Bytes from there (more than zero).
    pub bytes: usize,
}

/// How a run records its trace ([`RunOptions::trace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Records each block's trace ring holds (a power of two in
    /// [`TraceOptions::MIN_RECORDS`]`..=`[`TraceOptions::MAX_RECORDS`]).
    /// A block that records more keeps its newest records; the others are
    /// counted in [`crate::trace::Trace::dropped`]. Device memory: 32 bytes
    /// per record per block (plus one header per block), on every PE.
    pub records_per_block: u32,
}

impl TraceOptions {
    /// Smallest ring.
    pub const MIN_RECORDS: u32 = 2;
    /// Largest ring (512 MiB per block).
    pub const MAX_RECORDS: u32 = 1 << 24;
    /// Default ring: 4096 records (128 KiB) per block, about 2000 task
    /// instances.
    pub const DEFAULT_RECORDS: u32 = 4096;

    /// Rings of `records_per_block` records.
    pub fn records_per_block(records_per_block: u32) -> Self {
        TraceOptions { records_per_block }
    }

    /// Checks the ring size.
    pub(crate) fn check(&self) -> Result<()> {
        let n = self.records_per_block;
        if !n.is_power_of_two() || !(Self::MIN_RECORDS..=Self::MAX_RECORDS).contains(&n) {
            return Err(Error::InvalidConfig(format!(
                "TraceOptions::records_per_block must be a power of two in {}..={}, got {n}",
                Self::MIN_RECORDS,
                Self::MAX_RECORDS
            )));
        }
        Ok(())
    }
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            records_per_block: Self::DEFAULT_RECORDS,
        }
    }
}

/// The fault-injection options of one run; all `None` unless autarky is
/// built with the `fault-injection` feature.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Faults {
    pub hold_task: Option<TaskId>,
    pub corrupt_kind: Option<(TaskId, u32)>,
    pub abi_version_override: Option<u32>,
}

/// Whether autarky was built with the `fault-injection` feature: without
/// it no run can carry a fault, so the device's test hooks can be compiled
/// out of the hot loop.
#[allow(dead_code)] // for the device-code generator, which compiles the hooks out
pub(crate) fn fault_injection_enabled() -> bool {
    cfg!(feature = "fault-injection")
}

impl RunOptions {
    /// `iterations` instances of every task, defaults otherwise.
    pub fn iterations(iterations: u32) -> Self {
        RunOptions {
            iterations,
            ..Default::default()
        }
    }
}

impl RunOptions {
    /// The faults this run injects (none without the feature).
    pub(crate) fn faults(&self) -> Faults {
        #[cfg(feature = "fault-injection")]
        {
            Faults {
                hold_task: self.hold_task,
                corrupt_kind: self.corrupt_kind,
                abi_version_override: self.abi_version_override,
            }
        }
        #[cfg(not(feature = "fault-injection"))]
        {
            Faults::default()
        }
    }

    /// The durations as the backends use them: each at most
    /// [`MAX_TIMEOUT`].
    pub(crate) fn clamped(mut self) -> RunOptions {
        for d in [&mut self.timeout, &mut self.watchdog, &mut self.abort_grace] {
            *d = d.map(|d| d.min(MAX_TIMEOUT));
        }
        self
    }

    /// What every backend checks before a run of a graph of `num_tasks`
    /// tasks: iterations in range, durations non-zero, fault targets in the
    /// graph.
    pub(crate) fn check(&self, num_tasks: usize) -> Result<()> {
        validate_iterations(self.iterations)?;
        for (knob, d) in [("timeout", self.timeout), ("watchdog", self.watchdog)] {
            if d == Some(Duration::ZERO) {
                return Err(Error::InvalidConfig(format!(
                    "RunOptions::{knob} must be more than zero"
                )));
            }
        }
        if let Some(t) = &self.trace {
            t.check()?;
        }
        if self.l2_persist.is_some_and(|w| w.bytes == 0) {
            return Err(Error::InvalidConfig(
                "RunOptions::l2_persist must cover more than zero bytes".into(),
            ));
        }
        let f = self.faults();
        for (knob, t) in [
            ("hold_task", f.hold_task),
            ("corrupt_kind", f.corrupt_kind.map(|(t, _)| t)),
        ] {
            if let Some(t) = t.filter(|t| t.index() >= num_tasks) {
                return Err(Error::InvalidConfig(format!(
                    "RunOptions::{knob} names task {t}, but the graph has {num_tasks} task{}",
                    if num_tasks == 1 { "" } else { "s" }
                )));
            }
        }
        Ok(())
    }

    /// Refuses what the emulator cannot honour, naming the option.
    pub(crate) fn check_emulator(&self) -> Result<()> {
        let refuse = |option: &'static str, reason: &str| {
            Err(Error::Unsupported {
                backend: "emulator",
                option,
                reason: reason.into(),
            })
        };
        if self.watchdog.is_some() {
            return refuse(
                "RunOptions::watchdog",
                "the host watchdog watches a GPU kernel's host-mapped progress; on the emulator every wait ends at RunOptions::timeout",
            );
        }
        if self.abort_grace.is_some() {
            return refuse(
                "RunOptions::abort_grace",
                "the emulator's workers are threads of this process and are always joined",
            );
        }
        if self.timed {
            return refuse(
                "RunOptions::timed",
                "there are no device events to time; RunReport::wall is measured on every backend",
            );
        }
        if self.l2_persist.is_some() {
            return refuse(
                "RunOptions::l2_persist",
                "it sets an L2 access-policy window on a GPU launch",
            );
        }
        let f = self.faults();
        if f.corrupt_kind.is_some() {
            return refuse(
                "RunOptions::corrupt_kind",
                "it corrupts the device tables of a GPU run",
            );
        }
        if f.abi_version_override.is_some() {
            return refuse(
                "RunOptions::abi_version_override",
                "the ABI version is checked by the GPU kernel",
            );
        }
        Ok(())
    }
}

/// Iterations must be in `1..=MAX_ITERATIONS` on every backend.
pub(crate) fn validate_iterations(iterations: u32) -> Result<()> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(Error::InvalidConfig(format!(
            "iterations must be in 1..={MAX_ITERATIONS}, got {iterations}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_rings_must_be_a_power_of_two_in_range() {
        let with = |n| RunOptions {
            trace: Some(TraceOptions::records_per_block(n)),
            ..RunOptions::iterations(1)
        };
        for ok in [2, 4096, 1 << 24] {
            assert!(with(ok).check(1).is_ok(), "{ok}");
        }
        for bad in [0, 1, 3, 1000, 1 << 25] {
            match with(bad).check(1) {
                Err(Error::InvalidConfig(m)) => assert!(m.contains("records_per_block"), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert_eq!(TraceOptions::default().records_per_block, 4096);
    }

    #[test]
    fn an_empty_l2_window_is_refused_and_the_emulator_refuses_any() {
        let with = |bytes| RunOptions {
            l2_persist: Some(L2Persist { offset: 0, bytes }),
            ..RunOptions::iterations(1)
        };
        match with(0).check(1) {
            Err(Error::InvalidConfig(m)) => assert!(m.contains("l2_persist"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(with(8).check(1).is_ok());
        match with(8).check_emulator() {
            Err(Error::Unsupported { option, .. }) => assert_eq!(option, "RunOptions::l2_persist"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_emulator_accepts_a_trace() {
        let o = RunOptions {
            trace: Some(TraceOptions::default()),
            ..RunOptions::iterations(1)
        };
        assert!(o.check_emulator().is_ok());
    }
}
