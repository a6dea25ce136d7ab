//! A reusable device allreduce of up to [`MAX_WIDTH`] doubles per iteration,
//! bitwise identical on every PE, built from two comm tasks per PE.
//!
//! # Protocol
//!
//! Every iteration `n`, each PE has `C_q` *contributors* (tasks of the
//! caller, e.g. the tiles of a dot product). Contributor `c` of PE `q`
//! writes its `W` values into `partials[n % 2][c][0..W]` of its own PE
//! ([`Allreduce::partials_addr`], [`Allreduce::partial_index`]).
//!
//! * **local** (`allreduce_local`, comm role, one per PE, after every
//!   contributor of its PE): sums the partials with a fixed shape (a
//!   [`SUM_LANES`]-lane tree, [`lane_tree_sum`]: bitwise the same on every
//!   backend and block shape) and puts the `W` sums into `slots[n % 2][q][0..W]` of *every* PE (a store into the
//!   peer's symmetric memory; the cross-PE edge to the peer's global task is
//!   the signal).
//! * **global** (one per PE, after every PE's local): sums
//!   `slots[n % 2][0..P][j]` in PE order. The order, and so the result, is
//!   the same on every PE. The plain kind (`allreduce_sum`) stores the sums
//!   in `out[n % 2][0..W]` of its PE; a caller may instead register its own
//!   global kind whose arguments *start with* [`AllreduceArgs`] and whose
//!   body calls the sum helper (`autarky_allreduce::global_sum` on the
//!   device, [`cpu_global_sum`] on the emulator) and then uses the sums
//!   directly — no extra task, no extra hand-off (the CG solver does this).
//!
//! On a run of **one PE** the global sum is the local sum (`0 + s`), so a
//! global kind that sums with every thread of its block
//! (`autarky_allreduce::sum` on the device, [`cpu_sum`] on the emulator;
//! [`AllreduceKinds::fuse_single_pe`]) gets the allreduce as *one* task:
//! it sums the partials itself ([`FUSED`] in its arguments), bitwise the
//! same sums, one hand-off fewer. Its edges are the local task's:
//! contributors → it, and it → contributor of distance 2.
//!
//! # Why two slots are enough (`n % 2`)
//!
//! [`Allreduce::add_to_graph`] adds, besides the data edges, an edge
//! `global(q) → local(q)` of distance 1 and an edge `local(q) → contributor`
//! of distance 2 on every PE.
//!
//! * *Slots*: `local(q)` at `n + 2` rewrites `slots[n % 2]` of every PE `p`.
//!   It runs after `global(q)` at `n + 1` (distance-1 edge), which ran after
//!   `local(p)` at `n + 1` (every local precedes every global), which ran
//!   after `global(p)` at `n` (distance-1 edge on `p`): so every reader of
//!   the slots of iteration `n` is done before any writer of iteration
//!   `n + 2`; iteration `n + 1` writes the other half.
//! * *Partials*: a contributor at `n + 2` rewrites `partials[n % 2]` after
//!   `local` at `n` read it (distance-2 edge).
//! * *out* (plain kind only): `global` at `n + 2` rewrites `out[n % 2]`; the
//!   caller's readers of `out` at `n` must precede `global` at `n + 2` (for
//!   instance: readers that `local` depends on at `n + 1` or `n + 2`).

use crate::graph::{CpuCtx, Graph, KindId, TaskId, TaskKind};
use crate::runtime::SymBuffer;
use crate::{Error, Result, Runtime};

/// Most values one allreduce carries.
pub const MAX_WIDTH: usize = 4;

/// The CUDA source of the allreduce kinds and of the device helpers
/// (`autarky_allreduce::local_put`, `autarky_allreduce::global_sum`).
pub const SOURCE: &str = include_str!("allreduce.cu");

/// Arguments of the allreduce tasks (the prefix of a custom global kind's
/// arguments). Addresses are the task's own PE's.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AllreduceArgs {
    /// `double[2][contributors][width]` of this PE.
    pub partials: u64,
    /// `double[2][pes][width]` (symmetric).
    pub slots: u64,
    /// `double[2][width]` of this PE (written by the plain global kind).
    pub out: u64,
    /// Contributors of this PE.
    pub contributors: u32,
    /// PEs of the run.
    pub pes: u32,
    /// Values per contributor (1..=[`MAX_WIDTH`]).
    pub width: u32,
    /// [`FUSED`] when the global task sums the partials itself (set by
    /// [`Allreduce::add_to_graph`]); else 0.
    pub flags: u32,
}

/// [`AllreduceArgs::flags`]: no local task; the global task sums this PE's
/// partials (one PE, a kind that fuses: [`AllreduceKinds::fuse_single_pe`]).
pub const FUSED: u32 = 1;

/// The two tasks of one PE (one task, `local == global`, when fused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllreduceTasks {
    /// Sums the PE's partials and puts the sum into every PE's slots.
    pub local: TaskId,
    /// Sums the slots in PE order; its successors may use the global sums.
    pub global: TaskId,
}

/// The kinds an allreduce's tasks use: [`local_kind`] and a global kind
/// ([`sum_kind`] or the caller's own, whose arguments start with
/// [`AllreduceArgs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllreduceKinds {
    /// The registered [`local_kind`].
    pub local: KindId,
    /// The registered global kind.
    pub global: KindId,
    /// The global kind's body gets its sums from `autarky_allreduce::sum`
    /// called by every thread of its block (and from [`cpu_sum`] on the
    /// emulator), as [`sum_kind`] and the CG solver's reduce do: on a run
    /// of one PE the allreduce is then one task. False for a kind that
    /// calls `autarky_allreduce::global_sum` from one thread.
    pub fuse_single_pe: bool,
}

/// The buffers of one allreduce (see the [module docs](self)).
#[derive(Debug)]
pub struct Allreduce {
    width: usize,
    contributors: Vec<usize>,
    partials: SymBuffer<f64>,
    slots: SymBuffer<f64>,
    out: SymBuffer<f64>,
}

/// The local kind (`allreduce_local`), which carries [`SOURCE`]: register
/// it before any kind whose source uses the helpers.
pub fn local_kind() -> TaskKind {
    TaskKind::new("allreduce_local", SOURCE)
        .args::<AllreduceArgs>()
        .comm()
        .with_cpu(|ctx| {
            let a: AllreduceArgs = ctx.args();
            cpu_local_put(ctx, &a);
            Ok(())
        })
}

/// The plain global kind (`allreduce_sum`): stores the sums in `out`.
pub fn sum_kind() -> TaskKind {
    TaskKind::new("allreduce_sum", "")
        .args::<AllreduceArgs>()
        .comm()
        .with_cpu(|ctx| {
            let a: AllreduceArgs = ctx.args();
            let s = cpu_sum(ctx, &a);
            let par = (ctx.iteration % 2) as usize * a.width as usize;
            for (j, v) in s.iter().enumerate().take(a.width as usize) {
                // SAFETY: `out` holds 2 × width doubles of this PE (see
                // `Allreduce::new`); only this task writes it, and its
                // readers are ordered by the caller (module docs).
                unsafe { *(a.out as *mut f64).add(par + j) = *v };
            }
            Ok(())
        })
}

impl Allreduce {
    /// Buffers for an allreduce of `width` values with `contributors[q]`
    /// contributors on PE `q` (one entry per PE of `rt`).
    ///
    /// Errors: a width outside `1..=MAX_WIDTH`, a PE without contributors,
    /// a contributor count that is not one per PE, or the symmetric heap is
    /// full.
    pub fn new(rt: &Runtime, width: usize, contributors: Vec<usize>) -> Result<Allreduce> {
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(Error::InvalidConfig(format!(
                "an allreduce carries 1..={MAX_WIDTH} values, not {width}"
            )));
        }
        let pes = rt.num_pes() as usize;
        if contributors.len() != pes {
            return Err(Error::InvalidConfig(format!(
                "allreduce: {} contributor counts for {pes} PEs",
                contributors.len()
            )));
        }
        if let Some(q) = contributors.iter().position(|&c| c == 0) {
            return Err(Error::InvalidConfig(format!(
                "allreduce: PE {q} has no contributor"
            )));
        }
        let max_c = contributors.iter().copied().max().unwrap_or(1);
        Ok(Allreduce {
            width,
            partials: rt.alloc_symmetric(2 * max_c * width)?,
            slots: rt.alloc_symmetric(2 * pes * width)?,
            out: rt.alloc_symmetric(2 * width)?,
            contributors,
        })
    }

    /// Values per contributor.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Address of PE `pe`'s partials (`double[2][contributors][width]`).
    pub fn partials_addr(&self, pe: u32) -> u64 {
        self.partials.addr(pe)
    }

    /// Index (in doubles) of value `j` of contributor `c` at iteration `n`
    /// in the partials of a PE with `contributors` contributors.
    pub fn partial_index(n: u32, contributors: usize, width: usize, c: usize, j: usize) -> usize {
        ((n % 2) as usize * contributors + c) * width + j
    }

    /// The arguments of PE `pe`'s tasks.
    pub fn args(&self, pe: u32) -> AllreduceArgs {
        AllreduceArgs {
            partials: self.partials.addr(pe),
            slots: self.slots.addr(pe),
            out: self.out.addr(pe),
            contributors: self.contributors[pe as usize] as u32,
            pes: self.contributors.len() as u32,
            width: self.width as u32,
            flags: 0,
        }
    }

    /// The plain global kind's sums of PE `pe` at iteration `n` (after the
    /// run).
    pub fn out(&self, pe: u32, n: u32) -> Result<Vec<f64>> {
        let all = self.out.to_vec(pe)?;
        let par = (n % 2) as usize * self.width;
        Ok(all[par..par + self.width].to_vec())
    }

    /// Adds one local and one global task per PE, pinned to comm slot
    /// `comm_slot`, with every edge of the [module docs](self):
    /// `contributors[q]` (exactly as many as given to [`Allreduce::new`]) →
    /// `local(q)` → `global(p)` for every `p`, and the two reuse edges. On
    /// a run of one PE with [`AllreduceKinds::fuse_single_pe`], one task
    /// (the global kind, [`FUSED`] in its arguments) with the local task's
    /// edges.
    /// `global_args(q, args)` gives the global task's argument bytes (for
    /// the plain kind: `bytemuck::bytes_of(&args).to_vec()`).
    ///
    /// Errors: contributor lists that do not match [`Allreduce::new`].
    pub fn add_to_graph(
        &self,
        g: &mut Graph,
        kinds: AllreduceKinds,
        comm_slot: u32,
        contributors: &[Vec<TaskId>],
        mut global_args: impl FnMut(u32, AllreduceArgs) -> Vec<u8>,
        name: &str,
    ) -> Result<Vec<AllreduceTasks>> {
        let ok = contributors.len() == self.contributors.len()
            && contributors
                .iter()
                .zip(&self.contributors)
                .all(|(l, &c)| l.len() == c);
        if !ok {
            return Err(Error::InvalidConfig(format!(
                "allreduce `{name}`: contributor lists do not match the counts it was built for ({:?})",
                self.contributors
            )));
        }
        let mut out = Vec::with_capacity(contributors.len());
        if kinds.fuse_single_pe && contributors.len() == 1 {
            let a = AllreduceArgs {
                flags: FUSED,
                ..self.args(0)
            };
            let gl = g.add_task_bytes(kinds.global, &global_args(0, a));
            g.set_pe(gl, 0);
            g.pin(gl, comm_slot);
            g.set_name(gl, format!("{name} (sum) of PE 0"));
            for &c in &contributors[0] {
                g.add_edge(c, gl);
                g.add_edge_with_distance(gl, c, 2);
            }
            out.push(AllreduceTasks {
                local: gl,
                global: gl,
            });
            return Ok(out);
        }
        for (q, tasks) in contributors.iter().enumerate() {
            let a = self.args(q as u32);
            let l = g.add_task(kinds.local, &a);
            let gl = g.add_task_bytes(kinds.global, &global_args(q as u32, a));
            for t in [l, gl] {
                g.set_pe(t, q as u32);
                g.pin(t, comm_slot);
            }
            g.set_name(l, format!("{name} (local sum) of PE {q}"));
            g.set_name(gl, format!("{name} (global sum) of PE {q}"));
            for &c in tasks {
                g.add_edge(c, l);
                g.add_edge_with_distance(l, c, 2);
            }
            g.add_carried_edge(gl, l);
            out.push(AllreduceTasks {
                local: l,
                global: gl,
            });
        }
        for to in &out {
            for from in &out {
                g.add_edge(from.local, to.global);
            }
        }
        Ok(out)
    }
}

/// Lanes of the local sum's fixed tree ([`lane_tree_sum`]).
pub const SUM_LANES: usize = 128;

/// The local sum's fixed shape, the same on the device (`lane_tree_sum` in
/// `allreduce.cu`) and here: lane `v` of [`SUM_LANES`] sums `record(c)` for
/// `c = v, v + SUM_LANES, …` in that order from `0.0`; then for `off =
/// SUM_LANES / 2, …, 1`, lane `v < off` adds lane `v + off`. The shape
/// depends on `count` only (never on a block's thread count), so every
/// backend and block shape gives bitwise the same sums.
pub fn lane_tree_sum(
    count: usize,
    width: usize,
    record: impl Fn(usize, usize) -> f64,
) -> [f64; MAX_WIDTH] {
    let mut lanes = [[0.0f64; MAX_WIDTH]; SUM_LANES];
    for (v, lane) in lanes.iter_mut().enumerate() {
        for c in (v..count).step_by(SUM_LANES) {
            for (j, l) in lane.iter_mut().enumerate().take(width) {
                *l += record(c, j);
            }
        }
    }
    let mut off = SUM_LANES / 2;
    while off > 0 {
        let (low, high) = lanes.split_at_mut(off);
        for (lane, other) in low.iter_mut().zip(&high[..off]) {
            for (x, y) in lane.iter_mut().zip(other).take(width) {
                *x += *y;
            }
        }
        off /= 2;
    }
    lanes[0]
}

/// The local task's work on the emulator: sums this PE's partials of
/// iteration `ctx.iteration` ([`lane_tree_sum`]) and puts them into every
/// PE's slots.
pub fn cpu_local_put(ctx: &CpuCtx<'_>, a: &AllreduceArgs) {
    let w = a.width as usize;
    let s = cpu_partials_sum(ctx, a);
    let base = (ctx.iteration % 2) as usize * a.pes as usize * w + ctx.pe as usize * w;
    for pe in 0..a.pes {
        let slots = ctx.peer_addr(a.slots, pe) as *mut f64;
        for (j, sj) in s.iter().enumerate().take(w) {
            // SAFETY: every PE's slots hold 2 × pes × width doubles; this PE
            // alone writes its row, and no reader of this half is running
            // (module docs, "Why two slots are enough").
            unsafe { *slots.add(base + j) = *sj };
        }
    }
}

/// The sums of an allreduce on the emulator, for its global task (the
/// device's `autarky_allreduce::sum`): [`cpu_global_sum`], or when fused
/// ([`FUSED`], one PE) this PE's partials by [`lane_tree_sum`], then
/// `0 + s` — what the PE-order sum of one PE gives, bitwise.
pub fn cpu_sum(ctx: &CpuCtx<'_>, a: &AllreduceArgs) -> [f64; MAX_WIDTH] {
    if a.flags & FUSED == 0 {
        return cpu_global_sum(ctx, a);
    }
    cpu_partials_sum(ctx, a).map(|x| 0.0 + x)
}

/// This PE's partials of iteration `ctx.iteration` by [`lane_tree_sum`],
/// for the task that reads them: the local task, or the global task of a
/// fused allreduce (which has the local task's edges).
fn cpu_partials_sum(ctx: &CpuCtx<'_>, a: &AllreduceArgs) -> [f64; MAX_WIDTH] {
    let n = ctx.iteration;
    let w = a.width as usize;
    let contributors = a.contributors as usize;
    lane_tree_sum(contributors, w, |c, j| {
        let i = Allreduce::partial_index(n, contributors, w, c, j);
        // SAFETY: 1. `partials` holds 2 × contributors × width doubles of
        // this PE (`Allreduce::new`), and the heap outlives the run; 2.
        // every contributor's write at `n` precedes the reading task
        // (edges), and its write at `n + 2` follows it (distance-2 edge).
        unsafe { *(a.partials as *const f64).add(i) }
    })
}

/// The global sum on the emulator: `slots[n % 2][0..P][j]` summed in PE
/// order (the same on every PE). Values past `width` are 0.
pub fn cpu_global_sum(ctx: &CpuCtx<'_>, a: &AllreduceArgs) -> [f64; MAX_WIDTH] {
    let w = a.width as usize;
    let mut s = [0.0f64; MAX_WIDTH];
    let base = (ctx.iteration % 2) as usize * a.pes as usize * w;
    for pe in 0..a.pes as usize {
        for (j, sj) in s.iter_mut().enumerate().take(w) {
            // SAFETY: this PE's slots (2 × pes × width doubles), written by
            // every PE's local task at this iteration, which precede this
            // task (edges); the next writer of this half comes after it.
            *sj += unsafe { *(a.slots as *const f64).add(base + pe * w + j) };
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A contributor whose partial depends on PE, tile and iteration in a
    /// way that makes summation order visible in the last bits.
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct Contrib {
        partials: u64,
        c: u32,
        contributors: u32,
    }

    // Out of line: `powi` folded at a call site with constant arguments may
    // round differently from the run-time `powi`, and every caller must see
    // the same bits.
    #[inline(never)]
    fn value(pe: u32, c: u32, n: u32, j: usize) -> f64 {
        (1.0 + pe as f64 * 0.1 + c as f64 * 1e-3 + n as f64).powi(3) * 1.1f64.powi(j as i32 + 7)
            / 3.0
    }

    /// Runs `iters` iterations of an allreduce of width 2 over `counts[q]`
    /// contributors on PE `q` (plain global kind, fused on one PE when
    /// `fuse`); returns the tasks of the graph and every PE's sums of the
    /// last two iterations, checked against the documented shape.
    fn run_allreduce(counts: &[usize], fuse: bool, iters: u32) -> (usize, Vec<[u64; 2]>) {
        let pes = counts.len() as u32;
        // The contributor kind is CPU-only (no device function): skip the
        // emulator's CUDA compile of the graph.
        let rt = Runtime::builder()
            .emulator(2)
            .pes(pes)
            .comm_blocks(1)
            .symmetric_heap_bytes(1 << 20)
            .timeout(Duration::from_secs(20))
            .check_cuda(false)
            .build()
            .unwrap();
        let ar = Allreduce::new(&rt, 2, counts.to_vec()).unwrap();
        let mut g = Graph::new();
        let lk = g.add_kind(local_kind()).unwrap();
        let sk = g.add_kind(sum_kind()).unwrap();
        let ck = g
            .add_kind(
                TaskKind::new("contrib", "")
                    .args::<Contrib>()
                    .with_cpu(|ctx| {
                        let a: Contrib = ctx.args();
                        for j in 0..2 {
                            let i = Allreduce::partial_index(
                                ctx.iteration,
                                a.contributors as usize,
                                2,
                                a.c as usize,
                                j,
                            );
                            let v = value(ctx.pe, a.c, ctx.iteration, j);
                            // SAFETY: test partials of 2 × contributors × 2.
                            unsafe { *(a.partials as *mut f64).add(i) = v };
                        }
                        Ok(())
                    }),
            )
            .unwrap();
        let mut contributors = Vec::new();
        for (q, &c) in counts.iter().enumerate() {
            let ts: Vec<TaskId> = (0..c)
                .map(|i| {
                    let t = g.add_task(
                        ck,
                        &Contrib {
                            partials: ar.partials_addr(q as u32),
                            c: i as u32,
                            contributors: c as u32,
                        },
                    );
                    g.set_pe(t, q as u32);
                    t
                })
                .collect();
            contributors.push(ts);
        }
        let tasks = ar
            .add_to_graph(
                &mut g,
                AllreduceKinds {
                    local: lk,
                    global: sk,
                    fuse_single_pe: fuse,
                },
                0,
                &contributors,
                |_, a| bytemuck::bytes_of(&a).to_vec(),
                "test",
            )
            .unwrap();
        assert_eq!(tasks.len(), counts.len());
        let fused = fuse && pes == 1;
        assert_eq!(tasks[0].local == tasks[0].global, fused);
        rt.run(&g, iters).unwrap();
        let mut sums = Vec::new();
        for n in [iters - 2, iters - 1] {
            let mut want = [0.0f64; 2];
            for (j, w) in want.iter_mut().enumerate() {
                for (q, &c) in counts.iter().enumerate() {
                    *w += tree_by_recursion(c, |i| value(q as u32, i as u32, n, j));
                }
            }
            for q in 0..pes {
                let got = ar.out(q, n).unwrap();
                assert_eq!(got[0].to_bits(), want[0].to_bits(), "PE {q}, n {n}");
                assert_eq!(got[1].to_bits(), want[1].to_bits(), "PE {q}, n {n}");
                sums.push([got[0].to_bits(), got[1].to_bits()]);
            }
        }
        (g.num_tasks(), sums)
    }

    #[test]
    fn every_pe_gets_the_same_sum_in_pe_order_of_lane_tree_sums() {
        // Several PEs: never fused (a local task per PE, then the global).
        let (tasks, _) = run_allreduce(&[2, 3, 1], true, 7);
        assert_eq!(tasks, 6 + 2 * 3);
    }

    #[test]
    fn one_pe_fused_is_one_task_and_bitwise_the_two_task_sum() {
        // More contributors than lanes: the lane tree's every level.
        let (fused_tasks, fused) = run_allreduce(&[300], true, 5);
        let (two_tasks, two) = run_allreduce(&[300], false, 5);
        assert_eq!(fused_tasks, 301);
        assert_eq!(two_tasks, 302);
        assert_eq!(fused, two);
    }

    /// The local sum's shape written another way: lane `v`'s record sum,
    /// then `f(v, off) = f(v, 2 off) + f(v + off, 2 off)` down to `f(0, 1)`.
    fn tree_by_recursion(count: usize, record: impl Fn(usize) -> f64) -> f64 {
        let lane = |v: usize| {
            let mut s = 0.0;
            let mut c = v;
            while c < count {
                s += record(c);
                c += SUM_LANES;
            }
            s
        };
        fn f(v: usize, off: usize, lane: &dyn Fn(usize) -> f64) -> f64 {
            if off == SUM_LANES {
                return lane(v);
            }
            f(v, 2 * off, lane) + f(v + off, 2 * off, lane)
        }
        f(0, 1, &lane)
    }

    #[test]
    fn the_lane_tree_has_the_documented_shape_and_is_not_a_plain_loop() {
        for (count, width) in [
            (1usize, 1usize),
            (3, 2),
            (127, 1),
            (128, 4),
            (129, 3),
            (1024, 2),
            (1500, 4),
        ] {
            let rec =
                |c: usize, j: usize| value(1, c as u32, 5, j) * if c % 3 == 0 { -1.0 } else { 1.0 };
            let got = lane_tree_sum(count, width, rec);
            for (j, g) in got.iter().enumerate() {
                let want = if j < width {
                    tree_by_recursion(count, |c| rec(c, j))
                } else {
                    0.0
                };
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "count {count}, width {width}, value {j}"
                );
            }
        }
        // The shape is visible in the last bits: a plain loop over 1024
        // such records gives another sum (so the device and the emulator
        // agreeing bitwise says they use the same shape).
        let rec = |c: usize| value(0, c as u32, 3, 0) * if c % 3 == 0 { -1.0 } else { 1.0 };
        let plain: f64 = (0..1024).map(rec).fold(0.0, |a, b| a + b);
        assert_ne!(
            lane_tree_sum(1024, 1, |c, _| rec(c))[0].to_bits(),
            plain.to_bits()
        );
    }

    #[test]
    fn bad_widths_and_counts_are_errors() {
        let rt = Runtime::builder()
            .emulator(1)
            .pes(2)
            .symmetric_heap_bytes(1 << 16)
            .build()
            .unwrap();
        assert!(Allreduce::new(&rt, 0, vec![1, 1]).is_err());
        assert!(Allreduce::new(&rt, MAX_WIDTH + 1, vec![1, 1]).is_err());
        assert!(Allreduce::new(&rt, 1, vec![1]).is_err());
        assert!(Allreduce::new(&rt, 1, vec![1, 0]).is_err());
        let ar = Allreduce::new(&rt, 1, vec![1, 1]).unwrap();
        let mut g = Graph::new();
        let lk = g.add_kind(local_kind()).unwrap();
        let sk = g.add_kind(sum_kind()).unwrap();
        let err = ar.add_to_graph(
            &mut g,
            AllreduceKinds {
                local: lk,
                global: sk,
                fuse_single_pe: true,
            },
            0,
            &[vec![], vec![]],
            |_, a| bytemuck::bytes_of(&a).to_vec(),
            "x",
        );
        assert!(err.is_err());
    }
}
