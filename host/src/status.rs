//! Turning the device's status block into an [`Error`], and the deadlock
//! report: for every unfinished task, what its next instance waits on.
//! Shared by the GPU backend and the emulator, which fill the same
//! [`Status`] / [`BlockStats`] / state words.

use std::fmt::Write;

use autarky_shared::{
    state_parts, AbiEnum, BlockStats, ErrorCode, Role, Status, WaitKind, TASK_NONE,
};

use crate::graph::{Graph, LoweredGraph};
use crate::Error;

/// What one run did, on any backend.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Backend that ran it (`"gpu"`, `"emulator"`).
    pub backend: &'static str,
    /// Iterations every task ran.
    pub iterations: u32,
    /// Task instances completed (tasks × iterations on success).
    pub instances: u64,
    /// Instances completed by each compute block (comm blocks report 0).
    pub per_block: Vec<u64>,
    /// Host wall time from launch to the end of the wait.
    pub wall: std::time::Duration,
    /// Device time from the first block's entry to the last block's exit
    /// (`%globaltimer`, GPU only).
    pub device_ns: Option<u64>,
    /// Device-event time around the launch, when the run asked for it
    /// (`RunOptions::timed`, GPU only).
    pub event_ms: Option<f32>,
    /// Driver calls the host made from just before the launch to the end of
    /// the kernel (GPU only): one `cuLaunchCooperativeKernel` (plus the two
    /// `cuEventRecord`s of a timed run), then only `cuStreamQuery`.
    pub driver_calls: Vec<&'static str>,
    /// What every block did and when, for a run with `RunOptions::trace`
    /// (global task ids, the graph's labels, events lost to full rings in
    /// [`crate::trace::Trace::dropped`]).
    pub trace: Option<crate::trace::Trace>,
}

/// Everything needed to explain a failed run.
pub(crate) struct Snapshot<'a> {
    pub graph: &'a Graph,
    pub lowered: &'a LoweredGraph,
    pub iterations: u32,
    pub comm_blocks: u32,
    pub status: Status,
    pub state: &'a [u64],
    pub blocks: &'a [BlockStats],
}

fn role_name(role: u32) -> String {
    match Role::from_u32(role) {
        Some(Role::Comm) => "comm".into(),
        Some(Role::Compute) => "compute".into(),
        None => format!("role {role}"),
    }
}

/// Describes a wait in words (`index` is a local task id of `lowered` for
/// task-valued waits).
pub(crate) fn describe_wait(
    graph: &Graph,
    lowered: &LoweredGraph,
    kind: u32,
    index: u32,
) -> String {
    match WaitKind::from_u32(kind) {
        Some(WaitKind::QueueItem) => format!(
            "ready-queue slot {index} to be filled (no task instance became ready)"
        ),
        Some(WaitKind::QueueSpace) => format!("ready-queue slot {index} to be freed"),
        Some(WaitKind::UserWord) => format!("user word {index} (task body wait)"),
        Some(WaitKind::Signal) => format!("signal {index}"),
        Some(WaitKind::TestHold) => format!(
            "task {} held back by a test hook",
            lowered.label(graph, index)
        ),
        Some(WaitKind::Predecessors) => format!(
            "the predecessors of pinned task {}",
            lowered.label(graph, index)
        ),
        Some(WaitKind::Progress) => format!(
            "any task instance of PE {index} to complete (no progress anywhere; a task body may be stuck)"
        ),
        Some(WaitKind::CommIdle) => format!("work for comm block {index} (idle)"),
        Some(WaitKind::None) => "nothing".into(),
        None => format!("unknown wait kind {kind} (index {index})"),
    }
}

impl Snapshot<'_> {
    /// The deadlock report: the waiting-for state of every block that was
    /// waiting, and for every unfinished task what its next instance lacks.
    pub fn report(&self) -> String {
        let mut out = String::new();
        let waiting: Vec<_> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.wait_kind != WaitKind::None as u32)
            .collect();
        if !waiting.is_empty() {
            let _ = write!(out, "\n  waiting blocks ({}):", waiting.len());
            for (i, b) in waiting.iter().take(8) {
                let role = if (*i as u32) < self.comm_blocks {
                    "comm"
                } else {
                    "compute"
                };
                let _ = write!(
                    out,
                    "\n    block {i} ({role}) waits for {}",
                    describe_wait(self.graph, self.lowered, b.wait_kind, b.wait_index)
                );
            }
            if waiting.len() > 8 {
                let _ = write!(out, "\n    … and {} more", waiting.len() - 8);
            }
        }
        let done = |t: u32| state_parts(self.state[t as usize]).1;
        let mut unfinished = 0usize;
        let mut lines = String::new();
        for (t, d) in self
            .lowered
            .tasks
            .iter()
            .enumerate()
            .take(self.lowered.num_tasks as usize)
        {
            let (claimed, dn) = state_parts(self.state[t]);
            if dn >= self.iterations {
                continue;
            }
            unfinished += 1;
            if unfinished > 10 {
                continue;
            }
            let label = self.lowered.label(self.graph, t as u32);
            if claimed > dn {
                let _ = write!(
                    lines,
                    "\n    {label}: instance {dn} claimed (queued or running), never completed"
                );
                continue;
            }
            let missing: Vec<String> = self
                .lowered
                .preds(d)
                .iter()
                .filter(|e| (dn + 1).saturating_sub(e.distance) > done(e.task))
                .map(|e| {
                    format!(
                        "{} (needs {} done, has {})",
                        self.lowered.label(self.graph, e.task),
                        dn + 1 - e.distance,
                        done(e.task)
                    )
                })
                .collect();
            if missing.is_empty() {
                let _ = write!(
                    lines,
                    "\n    {label}: instance {dn} ready but never claimed"
                );
            } else {
                let _ = write!(
                    lines,
                    "\n    {label}: instance {dn} waits for {}",
                    missing.join(", ")
                );
            }
        }
        if unfinished > 0 {
            let _ = write!(out, "\n  unfinished tasks ({unfinished}):{lines}");
            if unfinished > 10 {
                let _ = write!(out, "\n    … and {} more", unfinished - 10);
            }
        }
        out
    }

    /// `Ok(())` for a clean run, else the error the status block describes.
    pub fn to_result(&self, pe: u32) -> Result<(), Error> {
        let s = &self.status;
        let task = if s.task == TASK_NONE {
            "none".to_string()
        } else {
            self.lowered.label(self.graph, s.task)
        };
        let Some(code) = ErrorCode::from_u32(s.error_code) else {
            return Err(Error::UnknownDeviceError {
                pe,
                code: s.error_code,
            });
        };
        match code {
            ErrorCode::None => Ok(()),
            ErrorCode::Timeout => Err(Error::DeviceTimeout {
                pe: s.pe,
                block: s.block,
                role: role_name(s.role),
                task,
                iteration: s.iteration,
                waiting_for: describe_wait(self.graph, self.lowered, s.wait_kind, s.wait_index),
                seen: s.seen,
                wanted: s.wanted,
                report: self.report(),
            }),
            ErrorCode::TaskFailed => Err(Error::TaskFailed {
                pe: s.pe,
                task,
                iteration: s.iteration,
                code: s.detail,
            }),
            ErrorCode::NonFinite => Err(Error::NonFinite {
                pe: s.pe,
                task,
                iteration: s.iteration,
                index: s.detail,
            }),
            ErrorCode::UnknownTaskKind => Err(Error::UnknownTaskKind {
                pe: s.pe,
                task,
                kind: s.detail,
            }),
            ErrorCode::AbiMismatch => Err(Error::AbiMismatch {
                host: s.wanted as u32,
                kernel: s.seen as u32,
            }),
            ErrorCode::HostAbort => Err(Error::Aborted {
                pe: s.pe,
                reason: "abort raised through host-mapped memory".into(),
                report: self.report(),
            }),
        }
    }
}
