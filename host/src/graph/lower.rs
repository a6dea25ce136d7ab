//! Lowering a validated graph to the device tables: task descriptors, CSR
//! successor and predecessor lists with distances, the argument arena, and
//! the initial state (roots claimed and queued). Iterations are never
//! unrolled: the tables describe one iteration plus distances.

use autarky_shared::{state_word, Edge, TaskDesc};

use super::{Graph, GraphError, Limits};

/// The tables one PE's megakernel receives, plus the initial scheduler state.
#[derive(Clone, Debug)]
pub struct LoweredGraph {
    /// One descriptor per task.
    pub tasks: Vec<TaskDesc>,
    /// Successor edges, grouped by source (`TaskDesc::succ_start/count`).
    pub succ: Vec<Edge>,
    /// Predecessor edges, grouped by target (`TaskDesc::pred_start/count`).
    pub pred: Vec<Edge>,
    /// Argument arena (16-aligned entries).
    pub args: Vec<u8>,
    /// Tasks whose instance 0 is ready at start: no distance-0 predecessor.
    pub roots: Vec<u32>,
    /// Ready-queue capacity (a power of two ≥ tasks).
    pub queue_capacity: u32,
}

impl LoweredGraph {
    /// Initial state words: roots have instance 0 claimed (they start in
    /// the queue), every other task has nothing claimed or done.
    pub fn initial_state(&self) -> Vec<u64> {
        let mut s = vec![state_word(0, 0); self.tasks.len()];
        for &r in &self.roots {
            s[r as usize] = state_word(1, 0);
        }
        s
    }

    /// Is instance `n` of `task` ready, given `done` counts per task?
    /// (The host-side statement of the device's readiness rule, used by the
    /// emulator, the deadlock report and tests.)
    pub fn instance_ready(&self, task: u32, n: u32, done: impl Fn(u32) -> u32) -> bool {
        let d = &self.tasks[task as usize];
        done(task) >= n
            && self.preds(d).iter().all(|e| {
                // Instance n needs instance n - distance of the predecessor,
                // i.e. done[p] >= n - distance + 1 (trivially true when negative).
                (n + 1).saturating_sub(e.distance) <= done(e.task)
            })
    }

    /// Predecessor edges of a task.
    pub fn preds(&self, d: &TaskDesc) -> &[Edge] {
        &self.pred[d.pred_start as usize..(d.pred_start + d.pred_count) as usize]
    }

    /// Successor edges of a task.
    pub fn succs(&self, d: &TaskDesc) -> &[Edge] {
        &self.succ[d.succ_start as usize..(d.succ_start + d.succ_count) as usize]
    }
}

/// An edge as `(from, to, distance)` (or re-keyed `(to, from, distance)`).
type Triple = (u32, u32, u32);

impl Graph {
    /// Validates the graph and lowers it to device tables.
    pub fn lower(&self, limits: &Limits) -> Result<LoweredGraph, GraphError> {
        self.validate(limits)?;
        let n = self.tasks.len();

        // Deduplicate edges; drop distance-1 self edges (implied by the
        // implicit self edge every task has).
        let mut edges: Vec<(u32, u32, u32)> = self
            .edges
            .iter()
            .filter(|e| !(e.from == e.to && e.distance == 1))
            .map(|e| (e.from.0, e.to.0, e.distance))
            .collect();
        edges.sort_unstable();
        edges.dedup();

        // (key, other end, distance) triples, sorted by key, to CSR.
        let csr = |key: fn(&Triple) -> Triple| {
            let mut sorted: Vec<(u32, u32, u32)> = edges.iter().map(key).collect();
            sorted.sort_unstable();
            let mut start = vec![0u32; n + 1];
            for &(k, _, _) in &sorted {
                start[k as usize + 1] += 1;
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let list: Vec<Edge> = sorted
                .iter()
                .map(|&(_, other, distance)| Edge {
                    task: other,
                    distance,
                    pred_start: 0,
                    pred_count: 0,
                })
                .collect();
            (start, list)
        };
        let (succ_start, mut succ) = csr(|&(f, t, d)| (f, t, d));
        let (pred_start, pred) = csr(|&(f, t, d)| (t, f, d));
        for e in succ.iter_mut() {
            let s = e.task as usize;
            e.pred_start = pred_start[s];
            e.pred_count = pred_start[s + 1] - pred_start[s];
        }

        let tasks: Vec<TaskDesc> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskDesc {
                kind: t.kind.0,
                pe: t.pe,
                arg_offset: t.arg_offset as u32,
                arg_len: t.arg_len as u32,
                succ_start: succ_start[i],
                succ_count: succ_start[i + 1] - succ_start[i],
                pred_start: pred_start[i],
                pred_count: pred_start[i + 1] - pred_start[i],
            })
            .collect();
        let roots = (0..n as u32)
            .filter(|&i| {
                let d = &tasks[i as usize];
                pred[d.pred_start as usize..(d.pred_start + d.pred_count) as usize]
                    .iter()
                    .all(|e| e.distance > 0)
            })
            .collect();
        let mut args = self.args.clone();
        if args.is_empty() {
            args.resize(super::ARG_ALIGN, 0);
        }
        Ok(LoweredGraph {
            tasks,
            succ,
            pred,
            args,
            roots,
            queue_capacity: (n as u32).next_power_of_two().max(2),
        })
    }
}
