//! Lowering a validated graph to the device tables of every PE: task
//! descriptors, CSR successor and predecessor lists with distances, remote
//! successor entries, pinned task lists, the argument arena and the initial
//! scheduler state. Iterations are never unrolled: the tables describe one
//! iteration plus distances.
//!
//! Each PE gets its own tables with local task ids, in three ranges:
//! `[0, first_comm)` compute tasks, `[first_comm, num_tasks)` comm tasks,
//! `[num_tasks, num_tasks + num_proxies)` *proxies*. A proxy stands for a
//! task on another PE that has successors here: its state word is written
//! by that PE (a [`RemoteOut`] entry of the producer) with a system-scope
//! release, so local readiness checks read a remote predecessor exactly
//! like a local one. Proxies are never run or claimed; a comm block relays
//! their progress to their dynamic successors.
//!
//! Pinned tasks ([`Graph::pin`]) are left out of every successor list:
//! nobody claims them, their block polls their predecessors. Each pinned
//! slot's list is in one global topological order of the distance-0 edges,
//! so blocks that each run their list in order can never wait on each
//! other in a circle.

use autarky_shared::{
    slot_shift, slot_word, state_word, Edge, RemoteOut, TaskDesc, SLOT_FIELDS, SLOT_MAX_COUNT,
};

use super::{Graph, GraphError, Limits};

/// Kind index of proxy tasks (never dispatched).
pub const PROXY_KIND: u32 = u32::MAX;

/// A pinned compute block whose list is one task of at most
/// [`SOLO_WIDE_PREDS`] predecessor edges (a stencil tile) runs it on the
/// device's solo path, its words and needs in registers (device:
/// `SOLO_PREDS`, scheduler.cuh's `pinned_solo`). Its registers are for this
/// many (a 2D tile's four neighbours) ...
pub const SOLO_PREDS: u32 = 4;
/// ... or for this many (the lean pinned path's most: a temporally blocked
/// 2D tile's eight neighbours, a 3D tile's six) in kernels whose graph has
/// such a list (`-DAUTARKY_SOLO_WIDE`).
pub const SOLO_WIDE_PREDS: u32 = 8;

/// A pinned compute list of two to [`ROUND_TASKS`] tasks that waits for
/// nothing of its own round from outside it (see
/// [`LoweredGraph::is_round_list`]) runs on the device's round path: one
/// poll of every outside predecessor an iteration, the bodies one after
/// another, then one release fence and a store of each task's word (a
/// patch of stencil tiles on one block). At most this many tasks (the
/// device's `PIN_CACHE_TASKS`: the list is cached in shared memory) ...
pub const ROUND_TASKS: u32 = 8;
/// ... awaiting at most this many predecessor edges from outside the list
/// in all (device: `ROUND_PREDS`, held in registers as the solo path's
/// eight: a 2 × 2 patch of 2D tiles awaits 8, a 2 × 1 patch 6), each task
/// at most [`SOLO_WIDE_PREDS`] (the lean path's bound) and the list at
/// most `PIN_CACHE_PREDS` = 64.
pub const ROUND_PREDS: u32 = 8;
const PIN_CACHE_PREDS: u32 = 64;

/// The tables one PE's scheduler receives, plus the initial scheduler state.
#[derive(Clone, Debug)]
pub struct LoweredGraph {
    /// This PE.
    pub pe: u32,
    /// One descriptor per local task, then one per proxy.
    pub tasks: Vec<TaskDesc>,
    /// Successor edges, grouped by source (`TaskDesc::succ_start/count`);
    /// pinned successors left out.
    pub succ: Vec<Edge>,
    /// Predecessor edges, grouped by target (`TaskDesc::pred_start/count`).
    pub pred: Vec<Edge>,
    /// Successors on other PEs (`TaskDesc::remote_start/count`).
    pub remote: Vec<RemoteOut>,
    /// Argument arena (16-aligned entries).
    pub args: Vec<u8>,
    /// Dynamic compute tasks whose instance 0 is ready at start (no
    /// distance-0 predecessor): claimed and queued before the launch.
    pub roots: Vec<u32>,
    /// The same for dynamic comm tasks (the comm queue).
    pub comm_roots: Vec<u32>,
    /// Local tasks (compute + comm), proxies excluded.
    pub num_tasks: u32,
    /// First comm task id.
    pub first_comm: u32,
    /// Number of proxies (ids `num_tasks..`).
    pub num_proxies: u32,
    /// Pinned lists: offsets (`pin_compute_slots + pin_comm_slots + 1`
    /// entries, relative to the start of the id part) then task ids.
    pub pinned: Vec<u32>,
    /// Compute slots with a pinned list.
    pub pin_compute_slots: u32,
    /// Comm slots with a pinned list.
    pub pin_comm_slots: u32,
    /// Compute ready-queue capacity (a power of two ≥ 2 and ≥ compute tasks).
    pub queue_capacity: u32,
    /// Comm ready-queue capacity (a power of two ≥ 2 and ≥ comm tasks).
    pub comm_queue_capacity: u32,
    /// Global task id of every local task and proxy (a proxy's is its
    /// producer's).
    pub global: Vec<u32>,
    /// Does any local task's kind call `finish_at`?
    pub may_stop: bool,
    /// Compute tasks that are not pinned (they need a block that pops the
    /// compute ring).
    pub dynamic_compute: u32,
    /// Tasks with at least this many predecessor edges are counted
    /// ([`autarky_shared::RunParams::counted_fan_in`]).
    pub counted_fan_in: u32,
}

/// The lowered tables of every PE of a run.
#[derive(Clone, Debug)]
pub struct LoweredRun {
    /// One entry per PE.
    pub pes: Vec<LoweredGraph>,
    /// `(pe, local id)` of every global task.
    pub local: Vec<(u32, u32)>,
}

impl LoweredGraph {
    /// Initial state words: dynamic roots have instance 0 claimed (they
    /// start in a queue), every other task and proxy has nothing claimed or
    /// done.
    pub fn initial_state(&self) -> Vec<u64> {
        let mut s = vec![state_word(0, 0); self.tasks.len()];
        for &r in self.roots.iter().chain(&self.comm_roots) {
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

    /// Is `d` a counted task: do its predecessors' completions add to its
    /// arrival counter, and do readiness checks of it wait for the count
    /// ([`autarky_shared::arrivals_needed`])? Only dynamic tasks are ever
    /// checked this way (pinned tasks are in nobody's successor list).
    pub fn is_counted(&self, d: &TaskDesc) -> bool {
        d.pred_count >= self.counted_fan_in
    }

    /// Does some dynamic task of this PE get counted?
    pub fn uses_counting(&self) -> bool {
        self.succ
            .iter()
            .any(|e| e.pred_count >= self.counted_fan_in)
    }

    /// Words of the `arrivals` array with arrival slots for a run of
    /// `iterations` (`-DAUTARKY_SLOTS`): one base index per local task,
    /// then `iterations` slots per counted local task, packed
    /// [`SLOT_FIELDS`] to a word.
    pub fn arrival_slot_words(&self, iterations: u32) -> u64 {
        let counted = self.tasks[..self.num_tasks as usize]
            .iter()
            .filter(|d| self.is_counted(d))
            .count() as u64;
        u64::from(self.num_tasks) + counted * slot_words(iterations)
    }

    /// Can every counted task of this PE count with arrival slots (its
    /// predecessor edges fit a slot's 16-bit field, [`SLOT_MAX_COUNT`])?
    pub fn counted_fit_slots(&self) -> bool {
        self.tasks[..self.num_tasks as usize]
            .iter()
            .all(|d| !self.is_counted(d) || d.pred_count <= SLOT_MAX_COUNT)
    }

    /// The initial `arrivals` array with arrival slots
    /// ([`Self::arrival_slot_words`] words): word `t` of a counted task `t`
    /// is the index of its first slot word (its slot `j`, field
    /// [`slot_shift`]`(j)` of word [`slot_word`]`(j)` from there, counts
    /// the arrivals instance `j` needs, and holds `pred_count` exactly when
    /// every one is in), 0 for other tasks; each slot starts with the predecessor edges
    /// whose distance reaches before instance 0 (`distance > j`: nothing
    /// will ever arrive for them).
    pub fn initial_arrival_slots(&self, iterations: u32) -> Vec<u64> {
        let n = self.num_tasks as usize;
        let mut a = vec![0u64; self.arrival_slot_words(iterations) as usize];
        let mut next = n;
        for (t, d) in self.tasks[..n].iter().enumerate() {
            if !self.is_counted(d) {
                continue;
            }
            a[t] = next as u64;
            for e in self.preds(d) {
                for j in 0..e.distance.min(iterations) {
                    a[next + slot_word(j) as usize] += 1 << slot_shift(j);
                }
            }
            next += slot_words(iterations) as usize;
        }
        a
    }

    /// Does some compute slot's pinned list hold exactly one task of at
    /// most [`SOLO_WIDE_PREDS`] predecessor edges? Its block runs the
    /// device's solo path, which is compiled only into kernels whose graph
    /// has one.
    pub fn has_solo_list(&self) -> bool {
        self.solo_preds().is_some()
    }

    /// The most predecessor edges a solo list's task awaits (see
    /// [`LoweredGraph::has_solo_list`]); `None` without such a list. Above
    /// [`SOLO_PREDS`], the kernel's solo path holds [`SOLO_WIDE_PREDS`].
    pub fn solo_preds(&self) -> Option<u32> {
        (0..self.pin_compute_slots)
            .filter_map(|s| match self.pinned_compute(s) {
                [t] => Some(self.tasks[*t as usize].pred_count),
                _ => None,
            })
            .filter(|&n| n <= SOLO_WIDE_PREDS)
            .max()
    }

    /// Does `list` (a pinned compute list) run on the device's round path?
    /// It does when it has two to [`ROUND_TASKS`] tasks, each of at most
    /// [`SOLO_WIDE_PREDS`] predecessor edges (at most 64 in all), none with
    /// a dynamic or remote successor or a proxy predecessor, and every
    /// predecessor edge of distance 0 comes from a task earlier in the
    /// list — so an iteration's tasks wait for nothing outside the list
    /// that could wait for the list's own unpublished instances, and their
    /// releases may wait for the last body — and at most [`ROUND_PREDS`]
    /// edges come from outside it. (The device applies the same rule when
    /// it caches the list; this one decides whether the kernel has the
    /// path at all.)
    pub fn is_round_list(&self, list: &[u32]) -> bool {
        if list.len() < 2 || list.len() > ROUND_TASKS as usize {
            return false;
        }
        let (mut all, mut outside) = (0u32, 0u32);
        for (k, &t) in list.iter().enumerate() {
            let d = &self.tasks[t as usize];
            if d.pred_count > SOLO_WIDE_PREDS || d.succ_count != 0 || d.remote_count != 0 {
                return false;
            }
            all += d.pred_count;
            for e in self.preds(d) {
                if self.is_proxy(e.task) {
                    return false;
                }
                match list.iter().position(|&x| x == e.task) {
                    Some(j) if e.distance == 0 && j >= k => return false,
                    Some(_) => {}
                    None if e.distance == 0 => return false,
                    None => outside += 1,
                }
            }
        }
        all <= PIN_CACHE_PREDS && outside <= ROUND_PREDS
    }

    /// Does some compute slot's pinned list run on the round path
    /// ([`Self::is_round_list`])? The path is compiled only into kernels
    /// whose graph has one.
    pub fn has_round_list(&self) -> bool {
        (0..self.pin_compute_slots).any(|s| self.is_round_list(self.pinned_compute(s)))
    }

    /// Does a task of `list` (a round list: [`Self::is_round_list`]) wait
    /// for an earlier task of the list in the same iteration (an edge of
    /// distance 0 inside it)? A round then reads the block's failure flag
    /// between bodies (a task never runs after one it waits for failed);
    /// a round with no such task runs its bodies back to back, nothing but
    /// their barriers between them, and reads the flag once.
    pub fn round_waits_inside(&self, list: &[u32]) -> bool {
        list.iter().any(|&t| {
            self.preds(&self.tasks[t as usize])
                .iter()
                .any(|e| e.distance == 0 && list.contains(&e.task))
        })
    }

    /// Does some compute slot's round list wait inside itself
    /// ([`Self::round_waits_inside`])? Only such kernels compile the
    /// round's checked loop.
    pub fn has_round_waiting_inside(&self) -> bool {
        (0..self.pin_compute_slots).any(|s| {
            let list = self.pinned_compute(s);
            self.is_round_list(list) && self.round_waits_inside(list)
        })
    }

    /// Predecessor edges of a task.
    pub fn preds(&self, d: &TaskDesc) -> &[Edge] {
        &self.pred[d.pred_start as usize..(d.pred_start + d.pred_count) as usize]
    }

    /// Successor edges of a task (pinned successors left out).
    pub fn succs(&self, d: &TaskDesc) -> &[Edge] {
        &self.succ[d.succ_start as usize..(d.succ_start + d.succ_count) as usize]
    }

    /// Remote successor entries of a task.
    pub fn remotes(&self, d: &TaskDesc) -> &[RemoteOut] {
        &self.remote[d.remote_start as usize..(d.remote_start + d.remote_count) as usize]
    }

    /// Is local id `t` a proxy?
    pub fn is_proxy(&self, t: u32) -> bool {
        t >= self.num_tasks
    }

    /// Is local id `t` a comm task?
    pub fn is_comm(&self, t: u32) -> bool {
        t >= self.first_comm && t < self.num_tasks
    }

    /// The pinned list of compute slot `slot` (empty when none).
    pub fn pinned_compute(&self, slot: u32) -> &[u32] {
        self.pinned_slot(slot, self.pin_compute_slots)
    }

    /// The pinned list of comm slot `slot` (empty when none).
    pub fn pinned_comm(&self, slot: u32) -> &[u32] {
        if slot >= self.pin_comm_slots {
            return &[];
        }
        self.pinned_slot(self.pin_compute_slots + slot, u32::MAX)
    }

    fn pinned_slot(&self, slot: u32, bound: u32) -> &[u32] {
        if slot >= bound || slot >= self.pin_compute_slots + self.pin_comm_slots {
            return &[];
        }
        let base = (self.pin_compute_slots + self.pin_comm_slots + 1) as usize;
        let (a, b) = (
            self.pinned[slot as usize] as usize,
            self.pinned[slot as usize + 1] as usize,
        );
        &self.pinned[base + a..base + b]
    }

    /// Which local tasks (proxies excluded) are pinned, by local id, in
    /// linear time.
    pub fn pinned_mask(&self) -> Vec<bool> {
        let mut m = vec![false; self.num_tasks as usize];
        let base = (self.pin_compute_slots + self.pin_comm_slots + 1) as usize;
        for &t in self.pinned.get(base..).unwrap_or(&[]) {
            if let Some(x) = m.get_mut(t as usize) {
                *x = true;
            }
        }
        m
    }

    /// Does some task of this PE read many predecessors' state words when
    /// it checks an instance (more than `narrow`)? Every task does, except
    /// a dynamic counted task under arrival slots (`slots`): its slot says
    /// when the instance is ready, and no predecessor word is read.
    pub fn scans_wide(&self, narrow: u32, slots: bool) -> bool {
        let pinned = self.pinned_mask();
        self.tasks[..self.num_tasks as usize]
            .iter()
            .enumerate()
            .any(|(t, d)| d.pred_count > narrow && !(slots && self.is_counted(d) && !pinned[t]))
    }

    /// Is local task `t` pinned? (A scan of every pinned list: for one
    /// task. For many, [`LoweredGraph::first_unpinned_compute`] or a mask.)
    pub fn is_pinned(&self, t: u32) -> bool {
        let base = (self.pin_compute_slots + self.pin_comm_slots + 1) as usize;
        self.pinned.len() > base && self.pinned[base..].contains(&t)
    }

    /// The first local compute task that is not pinned, in linear time
    /// (`is_pinned` per task was quadratic: minutes for a Jacobi graph of
    /// millions of pinned tiles).
    pub fn first_unpinned_compute(&self) -> Option<u32> {
        let base = (self.pin_compute_slots + self.pin_comm_slots + 1) as usize;
        let mut pinned = vec![false; self.first_comm as usize];
        for &t in self.pinned.get(base..).unwrap_or(&[]) {
            if let Some(p) = pinned.get_mut(t as usize) {
                *p = true;
            }
        }
        pinned.iter().position(|&p| !p).map(|t| t as u32)
    }

    /// The label of local id `t` in `graph`'s terms.
    pub fn label(&self, graph: &Graph, t: u32) -> String {
        match self.global.get(t as usize) {
            Some(&g) if self.is_proxy(t) => format!("{} (proxy on PE {})", graph.label(g), self.pe),
            Some(&g) => graph.label(g),
            None => format!("#{t}?"),
        }
    }
}

impl Graph {
    /// Validates a single-PE graph and lowers it (PE 0's tables).
    pub fn lower(&self, limits: &Limits) -> Result<LoweredGraph, GraphError> {
        let mut run = self.lower_run(limits)?;
        Ok(run.pes.swap_remove(0))
    }

    /// Validates the graph and lowers it to every PE's tables.
    pub fn lower_run(&self, limits: &Limits) -> Result<LoweredRun, GraphError> {
        self.validate(limits)?;
        let n = self.tasks.len();
        let num_pes = limits.num_pes.max(1);
        let is_comm = |g: usize| self.kinds[self.tasks[g].kind.index()].comm;

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

        let topo = self.topological_rank(&edges);

        // Local ids: per PE, compute tasks then comm tasks (each in global
        // order), then proxies.
        let mut local = vec![(0u32, 0u32); n];
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); num_pes as usize];
        let mut first_comm = vec![0u32; num_pes as usize];
        for comm in [false, true] {
            for (g, slot) in local.iter_mut().enumerate() {
                if is_comm(g) == comm {
                    let pe = self.tasks[g].pe;
                    if !comm {
                        first_comm[pe as usize] += 1;
                    }
                    *slot = (pe, members[pe as usize].len() as u32);
                    members[pe as usize].push(g as u32);
                }
            }
        }
        // Proxies: one per (remote producer, consumer PE).
        let mut proxies: Vec<Vec<u32>> = vec![Vec::new(); num_pes as usize];
        for &(f, t, _) in &edges {
            let (pf, pt) = (self.tasks[f as usize].pe, self.tasks[t as usize].pe);
            if pf != pt {
                proxies[pt as usize].push(f);
            }
        }
        for p in proxies.iter_mut() {
            p.sort_unstable();
            p.dedup();
        }
        let proxy_id = |pe: u32, producer: u32| -> u32 {
            let list = &proxies[pe as usize];
            members[pe as usize].len() as u32
                + list.binary_search(&producer).expect("proxy planned") as u32
        };

        let mut pes = Vec::with_capacity(num_pes as usize);
        for pe in 0..num_pes {
            let mem = &members[pe as usize];
            let prox = &proxies[pe as usize];
            let num_local = mem.len();
            let total = num_local + prox.len();
            // Global id of every local id.
            let global: Vec<u32> = mem.iter().chain(prox.iter()).copied().collect();
            let to_local = |g: u32| -> u32 {
                let (p, l) = local[g as usize];
                if p == pe {
                    l
                } else {
                    proxy_id(pe, g)
                }
            };
            // Local edges (from, to, distance) in local ids: every edge whose
            // consumer is on this PE (its producer local or a proxy).
            let mut ledges: Vec<(u32, u32, u32)> = edges
                .iter()
                .filter(|&&(_, t, _)| self.tasks[t as usize].pe == pe)
                .map(|&(f, t, d)| (to_local(f), to_local(t), d))
                .collect();
            ledges.sort_unstable();
            let pinned_local = |l: u32| {
                (l as usize) < num_local && self.tasks[global[l as usize] as usize].pin.is_some()
            };

            // Predecessor CSR (all local edges).
            let mut pred_start = vec![0u32; total + 1];
            let mut by_to = ledges.clone();
            by_to.sort_unstable_by_key(|&(f, t, d)| (t, f, d));
            for &(_, t, _) in &by_to {
                pred_start[t as usize + 1] += 1;
            }
            for i in 0..total {
                pred_start[i + 1] += pred_start[i];
            }
            let pred: Vec<Edge> = by_to
                .iter()
                .map(|&(f, _, d)| Edge {
                    task: f,
                    distance: d,
                    pred_start: 0,
                    pred_count: 0,
                })
                .collect();
            // Successor CSR without pinned successors.
            let mut succ_start = vec![0u32; total + 1];
            let kept: Vec<(u32, u32, u32)> = ledges
                .iter()
                .copied()
                .filter(|&(_, t, _)| !pinned_local(t))
                .collect();
            for &(f, _, _) in &kept {
                succ_start[f as usize + 1] += 1;
            }
            // Edges to pinned successors, per producer: those readers poll
            // `done`, so the producer's completions publish at once.
            let mut pinned_succs = vec![0u32; total];
            for &(f, t, _) in &ledges {
                if pinned_local(t) {
                    pinned_succs[f as usize] += 1;
                }
            }
            for i in 0..total {
                succ_start[i + 1] += succ_start[i];
            }
            let succ: Vec<Edge> = kept
                .iter()
                .map(|&(_, t, d)| Edge {
                    task: t,
                    distance: d,
                    pred_start: pred_start[t as usize],
                    pred_count: pred_start[t as usize + 1] - pred_start[t as usize],
                })
                .collect();
            // Remote successors: one entry per (local producer, consumer PE).
            let mut remote: Vec<RemoteOut> = Vec::new();
            let mut remote_start = vec![0u32; total + 1];
            for (l, &g) in mem.iter().enumerate() {
                // `edges` is sorted by producer: g's edges are one run of it
                // (a scan of every edge per task made lowering quadratic:
                // 45 s for a chain of 200 000 tasks).
                let lo = edges.partition_point(|&(f, _, _)| f < g);
                let hi = lo + edges[lo..].partition_point(|&(f, _, _)| f == g);
                let mut pes_out: Vec<u32> = edges[lo..hi]
                    .iter()
                    .filter(|&&(_, t, _)| self.tasks[t as usize].pe != pe)
                    .map(|&(_, t, _)| self.tasks[t as usize].pe)
                    .collect();
                pes_out.sort_unstable();
                pes_out.dedup();
                for q in pes_out {
                    remote.push(RemoteOut {
                        pe: q,
                        slot: proxy_id(q, g),
                    });
                }
                remote_start[l + 1] = remote.len() as u32;
            }
            for i in num_local..total {
                remote_start[i + 1] = remote_start[i];
            }

            let tasks: Vec<TaskDesc> = (0..total)
                .map(|l| {
                    let g = global[l] as usize;
                    let (kind, arg_offset, arg_len) = if l < num_local {
                        let t = &self.tasks[g];
                        (t.kind.0, t.arg_offset as u32, t.arg_len as u32)
                    } else {
                        (PROXY_KIND, 0, 0)
                    };
                    TaskDesc {
                        kind,
                        global: g as u32,
                        arg_offset,
                        arg_len,
                        succ_start: succ_start[l],
                        succ_count: succ_start[l + 1] - succ_start[l],
                        pred_start: pred_start[l],
                        pred_count: pred_start[l + 1] - pred_start[l],
                        remote_start: remote_start[l],
                        remote_count: remote_start[l + 1] - remote_start[l],
                        pred_distance_sum: pred[pred_start[l] as usize..pred_start[l + 1] as usize]
                            .iter()
                            .fold(0u32, |a, e| a.saturating_add(e.distance)),
                        pinned_succs: pinned_succs[l],
                    }
                })
                .collect();
            let is_root = |l: usize| {
                let d = &tasks[l];
                pred[d.pred_start as usize..(d.pred_start + d.pred_count) as usize]
                    .iter()
                    .all(|e| e.distance > 0)
            };
            let fc = first_comm[pe as usize] as usize;
            let roots: Vec<u32> = (0..fc)
                .filter(|&l| !pinned_local(l as u32) && is_root(l))
                .map(|l| l as u32)
                .collect();
            let comm_roots: Vec<u32> = (fc..num_local)
                .filter(|&l| !pinned_local(l as u32) && is_root(l))
                .map(|l| l as u32)
                .collect();

            // Pinned lists by slot, in global topological order.
            let mut compute_slots: Vec<Vec<u32>> = Vec::new();
            let mut comm_slots: Vec<Vec<u32>> = Vec::new();
            let mut by_rank: Vec<u32> =
                (0..num_local as u32).filter(|&l| pinned_local(l)).collect();
            by_rank.sort_by_key(|&l| (topo[global[l as usize] as usize], l));
            for l in by_rank {
                let slot = self.tasks[global[l as usize] as usize].pin.unwrap() as usize;
                let lists = if (l as usize) < fc {
                    &mut compute_slots
                } else {
                    &mut comm_slots
                };
                if lists.len() <= slot {
                    lists.resize(slot + 1, Vec::new());
                }
                lists[slot].push(l);
            }
            let mut offsets = vec![0u32];
            let mut ids = Vec::new();
            for list in compute_slots.iter().chain(&comm_slots) {
                ids.extend_from_slice(list);
                offsets.push(ids.len() as u32);
            }
            let mut pinned = offsets;
            pinned.extend(ids);

            let mut args = self.args.clone();
            if args.is_empty() {
                args.resize(super::ARG_ALIGN, 0);
            }
            let may_stop = mem
                .iter()
                .any(|&g| self.kinds[self.tasks[g as usize].kind.index()].stops);
            let dynamic_compute = (0..fc).filter(|&l| !pinned_local(l as u32)).count() as u32;
            pes.push(LoweredGraph {
                dynamic_compute,
                pe,
                tasks,
                succ,
                pred,
                remote,
                args,
                roots,
                comm_roots,
                num_tasks: num_local as u32,
                first_comm: fc as u32,
                num_proxies: prox.len() as u32,
                pin_compute_slots: compute_slots.len() as u32,
                pin_comm_slots: comm_slots.len() as u32,
                pinned,
                queue_capacity: (fc as u32).next_power_of_two().max(2),
                comm_queue_capacity: ((num_local - fc) as u32).next_power_of_two().max(2),
                global,
                may_stop,
                counted_fan_in: limits.counted_fan_in.max(2),
            });
        }
        Ok(LoweredRun { pes, local })
    }

    /// Rank of every task in one topological order of the distance-0 edges
    /// (Kahn's algorithm, ties by task id). Validation has rejected cycles.
    fn topological_rank(&self, edges: &[(u32, u32, u32)]) -> Vec<u32> {
        let n = self.tasks.len();
        let mut indeg = vec![0u32; n];
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(f, t, d) in edges {
            if d == 0 && f != t {
                indeg[t as usize] += 1;
                out[f as usize].push(t);
            }
        }
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<u32>> = (0..n as u32)
            .filter(|&t| indeg[t as usize] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut rank = vec![0u32; n];
        let mut next = 0;
        while let Some(std::cmp::Reverse(t)) = ready.pop() {
            rank[t as usize] = next;
            next += 1;
            for &s in &out[t as usize] {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    ready.push(std::cmp::Reverse(s));
                }
            }
        }
        rank
    }
}

/// Words of one counted task's slots for a run of `iterations`.
fn slot_words(iterations: u32) -> u64 {
    u64::from(iterations).div_ceil(u64::from(SLOT_FIELDS))
}
