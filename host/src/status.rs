//! Turning the device's status block into an [`Error`], and the deadlock
//! report: for every unfinished task, what its next instance waits on.
//! Shared by the GPU backend and the emulator, which fill the same
//! [`Status`] / [`BlockStats`] / state words.

use std::fmt::Write;

use autarky_shared::{
    state_parts, AbiEnum, BlockStats, ErrorCode, Role, Status, WaitKind, STATE_LIMIT_CARRIED,
    TASK_NONE,
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
    /// Instances completed by each block, PE after PE (each PE's blocks in
    /// its order: comm blocks first, then compute blocks; comm blocks
    /// count the comm tasks they ran).
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
    /// The PE's limit: the run's iterations, or lower after `finish_at`.
    pub iterations: u32,
    /// The run's iterations (to tell an early stop in the report).
    pub run_iterations: u32,
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
        if self.iterations < self.run_iterations {
            // A PE that stopped early leaves other PEs' consumers of its
            // tasks waiting: say so where the report starts.
            let _ = write!(
                out,
                "\n  this PE stopped early: finish_at lowered its limit to {} of {} iterations \
                 (a PE that depends on it waits for instances it will not run: a graph that \
                 stops early needs a stopping task on every PE)",
                self.iterations, self.run_iterations
            );
        }
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
            // (A pinned task's word carries a limit in its claimed half,
            // not a claim: STATE_LIMIT_CARRIED.)
            if claimed & STATE_LIMIT_CARRIED == 0 && claimed > dn {
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
                // A pinned task is never claimed: its block runs it in
                // list order (held by a test hook, or the block is stuck
                // on an earlier entry of its list).
                let what = if self.lowered.is_pinned(t as u32) {
                    "ready, but its pinned block did not run it"
                } else {
                    "ready but never claimed"
                };
                let _ = write!(lines, "\n    {label}: instance {dn} {what}");
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

    /// The first predecessor of local task `t` whose done count is below
    /// what instance `n` needs: its label, its count and the count needed.
    fn first_unmet(&self, t: u32, n: u32) -> Option<(String, u32, u32)> {
        let d = self.lowered.tasks.get(t as usize)?;
        self.lowered.preds(d).iter().find_map(|e| {
            let needs = n.saturating_add(1).saturating_sub(e.distance);
            let has = state_parts(*self.state.get(e.task as usize)?).1;
            (needs > has).then(|| (self.lowered.label(self.graph, e.task), has, needs))
        })
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
            ErrorCode::Timeout => {
                let mut waiting_for =
                    describe_wait(self.graph, self.lowered, s.wait_kind, s.wait_index);
                let (mut seen, mut wanted) = (s.seen, s.wanted);
                // A pinned task's wait records no single word (it polls every
                // predecessor): name the first one still short of what the
                // instance needs, and its count, from the state at the end.
                if s.wait_kind == WaitKind::Predecessors as u32 {
                    if let Some((label, has, needs)) = self.first_unmet(s.wait_index, s.iteration) {
                        let _ = write!(waiting_for, ", first unmet: {label}");
                        (seen, wanted) = (has.into(), needs.into());
                    }
                }
                Err(Error::DeviceTimeout {
                    pe: s.pe,
                    block: s.block,
                    role: role_name(s.role),
                    task,
                    iteration: s.iteration,
                    waiting_for,
                    seen,
                    wanted,
                    report: self.report(),
                })
            }
            ErrorCode::TaskFailed if s.detail == crate::CpuCtx::FINISH_UNDECLARED as u64 => {
                Err(Error::FinishUndeclared {
                    pe: s.pe,
                    task,
                    iteration: s.iteration,
                })
            }
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

#[cfg(test)]
mod tests {
    use super::Snapshot;
    use crate::graph::{Graph, Limits, TaskKind};
    use crate::Error;
    use autarky_shared::{state_word, ErrorCode, Status, WaitKind};

    /// A pinned task's timeout names the predecessor it still lacks, with
    /// that predecessor's count and the count it needs (the device records
    /// no single word for such a wait: it polls every predecessor).
    #[test]
    fn a_pinned_wait_names_its_first_unmet_predecessor_and_its_counts() {
        let mut g = Graph::new();
        let k = g.add_kind(TaskKind::new("k", "")).unwrap();
        let ready = g.add_task_bytes(k, &[]);
        let late = g.add_task_bytes(k, &[]);
        let tile = g.add_task_bytes(k, &[]);
        g.set_name(ready, "ready")
            .set_name(late, "late")
            .set_name(tile, "tile");
        g.add_edge(ready, tile).add_edge(late, tile).pin(tile, 0);
        let lowered = g.lower(&Limits::default()).unwrap();
        let local = |t: crate::TaskId| {
            lowered
                .global
                .iter()
                .position(|&x| x == t.index() as u32)
                .unwrap() as u32
        };
        // Instance 3 of the tile needs 4 of each; `late` has 2.
        let mut state = vec![0u64; lowered.tasks.len()];
        state[local(ready) as usize] = state_word(4, 4);
        state[local(late) as usize] = state_word(2, 2);
        state[local(tile) as usize] = state_word(3, 3);
        let status = Status {
            error_code: ErrorCode::Timeout as u32,
            task: local(tile),
            iteration: 3,
            wait_kind: WaitKind::Predecessors as u32,
            wait_index: local(tile),
            wanted: 3,
            ..Default::default()
        };
        let snap = Snapshot {
            graph: &g,
            lowered: &lowered,
            iterations: 10,
            run_iterations: 10,
            comm_blocks: 1,
            status,
            state: &state,
            blocks: &[],
        };
        match snap.to_result(0) {
            Err(Error::DeviceTimeout {
                waiting_for,
                seen,
                wanted,
                ..
            }) => {
                assert!(
                    waiting_for.contains("first unmet: #1 (late)"),
                    "{waiting_for}"
                );
                assert_eq!((seen, wanted), (2, 4));
            }
            other => panic!("expected DeviceTimeout, got {other:?}"),
        }
    }
}
