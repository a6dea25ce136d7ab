//! CPU-free Jacobi 2D (5/9-point) and 3D (7/27-point), built only on the
//! public API: a task graph of pinned tiles, halo pulses run by comm blocks,
//! and an in-kernel convergence check.
//!
//! # The graph (per PE)
//!
//! * **Tiles** (`jacobi_tile`, pinned round-robin to the PE's compute
//!   blocks): a box of the PE's interior. Instance `n` reads buffer `n % 2`
//!   and writes buffer `(n + 1) % 2` of the PE's padded array (a symmetric
//!   buffer: ghost layers of width S = [`JacobiConfig::steps_per_sync`],
//!   1 by default, on every active axis; a graph iteration is S sweeps). A
//!   tile waits for the previous instance of every tile within S cells
//!   (distance-1 edges: their output is its input, and their reads of its
//!   output buffer are over before it overwrites them). Interior tiles
//!   never wait for halos.
//! * **Pulses** (`jacobi_pulse`, comm role; a box of at least twice
//!   [`JacobiConfig::pulse_chunk_cells`] is split into chunks pinned to
//!   different comm blocks, avoiding the check's block when there are
//!   three or more): the
//!   halo plan of [`crate::halo`] (pulses Z → Y → X, edges and corners by
//!   forwarding). Each box of a pulse is one task on the sender: its
//!   *independent* boxes wait for the sender's tiles that produce them
//!   (distance 0), its *forwarded* boxes for the earlier incoming pulse that
//!   filled them (a cross-PE edge: the runtime turns it into a signal). A
//!   pulse stores buffer `(n + 1) % 2` straight into the receiver's copy of
//!   the buffer; the receiver's tiles that read those ghosts wait for it
//!   (distance 1, cross-PE: a signal carrying the iteration).
//! * **Check** (`jacobi_check_local`, `jacobi_check_global`, comm role,
//!   pinned to comm slot 1, or 0 with one comm block), when
//!   `check_every > 0`: every tile adds
//!   its squared update to a partial at check iterations; check_local sums
//!   the PE's partials in tile order and puts the sum into every PE's slot
//!   array; check_global (after every PE's check_local) sums the slots in PE
//!   order — the same order on every PE, so every PE computes a bitwise
//!   identical norm and takes the same decision: at convergence it calls
//!   `finish_at(n + STOP_SLACK)`. Tiles wait for check_global with distance
//!   [`STOP_SLACK`], so no tile can start an instance past the limit before
//!   it is set, and every PE stops after exactly the same iteration.
//!
//! # Why a pulse never overwrites a halo its receiver still reads
//!
//! Halos live in the double-buffered arrays: pulse `n` writes the
//! receiver's ghosts of buffer `(n + 1) % 2`, last read by the receiver's
//! tiles at instance `n − 1`. Every receiver tile that reads those ghosts is
//! within S cells of the face, so it is in the send box of the reverse
//! pulse (the receiver's own S-deep boundary layer towards the sender);
//! pulse `n` waits for
//! the sender's boundary tiles at `n`, which waited for that reverse pulse
//! at `n − 1`, which waited for the receiver's tiles at `n − 1`. On the
//! sender's side, a tile may not overwrite what a pulse still reads: tile
//! instance `n + 2` rewrites the buffer pulse `n` read, and an explicit
//! local edge (pulse → tile, distance 2) orders them.
//!
//! # Why the check's slots are reused safely
//!
//! The check's arrays are indexed by `n % 4`. *Partials and arrival
//! counters* (one counter a slot, reset by check_local once it has read
//! the partials): a tile at `n + 4` waits for check_global at `n + 2`
//! (the distance-2 gate), which waits for check_local at `n + 2`, which
//! runs after check_local at `n`. Tiles may be a check apart when every
//! graph iteration is checked, so one running count for all checks would
//! let a tile's arrival at `n + 1` stand in for another's missing one at
//! `n` (a wrong norm, 1 run in 10: fixed by the per-slot counters). *The
//! slot array* (every PE's sum, written into every PE): PE p's
//! check_local at `n + 4` must come after PE q's check_global at `n` has
//! read the slot. No edge orders them when `n + 2` is not a check (with
//! `check_every` 4, say, check_local at `n + 2` returns without waiting);
//! what does is that both check tasks of a PE are pinned to the same comm
//! block, which runs local `n`, global `n`, local `n + 1`, … in order: p's
//! local at `n + 4` waits for the tiles' arrivals at `n + 4`, those tiles
//! for p's global at `n + 2`, that for q's local at `n + 2`, which q's
//! block runs after q's global at `n`. (An explicit global → local edge
//! would say the same at the cost of a poll every iteration on the check
//! block, which at 256² already limits the iteration with a norm every
//! 100.)

use std::time::Duration;

use crate::graph::{Graph, TaskId, TaskKind};
use crate::halo::{self, grid_text, Box3, Decomposition, Footprint, LocalLayout};
use crate::runtime::SymBuffer;
use crate::solvers::jacobi_ref::{Boundary, JacobiProblem, Stencil};
use crate::status::RunReport;
use crate::{Error, Result, Runtime};

/// How far tiles may run ahead of the convergence check (graph
/// iterations). When the check of graph iteration `n` meets the tolerance
/// the run ends after graph iteration `n + STOP_SLACK − 1`, on every PE:
/// `STOP_SLACK − 1` more graph iterations run after the converged one, so
/// [`JacobiRun::iterations`] is `converged_at + STOP_SLACK` with S = 1
/// (`converged_at` counts from 0).
pub const STOP_SLACK: u32 = 2;

/// The CUDA bodies of the Jacobi kinds.
pub const KERNELS: &str = include_str!("jacobi_kernels.cu");

/// Element type on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl Precision {
    fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

/// What to solve and how.
#[derive(Clone, Debug)]
pub struct JacobiConfig {
    /// Grid, stencil, boundaries, initial values.
    pub problem: JacobiProblem,
    /// Most iterations to run.
    pub iterations: u32,
    /// Compute the update norm ‖a_new − a‖₂ every this many iterations (and
    /// at the last one); 0: never (no global synchronisation at all).
    pub check_every: u32,
    /// Stop when a checked norm is at most this (needs `check_every > 0`).
    pub tol: Option<f64>,
    /// Element type.
    pub precision: Precision,
    /// PE grid `[pz, py, px]`; default: [`Decomposition::auto`].
    pub pe_grid: Option<[usize; 3]>,
    /// Tile shape `[tz, ty, tx]` in cells; default: chosen from the PE's
    /// part of the grid alone ([`TILE_BLOCKS`] tiles' worth), never from
    /// the runtime's block count, so the norms (summed tile by tile) are
    /// bitwise the same on P virtual PEs and P GPUs (and on emulators of
    /// any thread count; within a tile the CPU body sums in its own order).
    /// The default depends on [`Self::steps_per_sync`] on small grids
    /// (whole S-step work items), so norms of different S agree to
    /// rounding; give a tile to compare them bitwise on the emulator.
    /// On the smallest grids with S > 1 the default tile is eight work
    /// items, one per warp, and the graph runs with
    /// [`SMALL_GRID_THREADS`] threads per block whatever the runtime's
    /// ([`Graph::set_threads_per_block`](crate::Graph::set_threads_per_block));
    /// a tile given here runs at the runtime's block shape, and so do the
    /// default tiles when the PEs' shares fall on both sides of the rule
    /// (one block shape a graph: those PEs' eight-item tiles then run two
    /// items a warp at the default 128 threads).
    pub tile: Option<[usize; 3]>,
    /// A non-finite norm fails the run with `Error::NonFinite` (naming the
    /// PE, the check task and the iteration) instead of running on, on
    /// both backends. It is the checks' norm that is tested: with
    /// `check_every == 0` nothing is checked.
    pub check_finite: bool,
    /// Pulses are split into chunks of at least this many cells (at least
    /// 1), one comm task each, spread over the runtime's comm blocks: a
    /// large halo is then copied by several blocks at once. With one comm
    /// block (the runtime's default) nothing is split. Default
    /// [`PULSE_CHUNK_CELLS`].
    pub pulse_chunk_cells: usize,
    /// Sweeps per graph iteration, 1 to 4 (temporal blocking; default 1).
    /// Errors name graph iterations, except a non-finite norm, which names
    /// the sweep its check was of.
    /// With S > 1 the PEs' ghost layers are S deep and a tile computes S
    /// sweeps of the tile grown by S from one read of it, in registers,
    /// redundantly at its edges: one synchronisation (neighbour waits,
    /// halo pulses) per S sweeps instead of per sweep, and fewer reads of
    /// the grid. The grid is bitwise that of S = 1. The 2D 5-point stencil
    /// (S up to 4) and the 3D 7-point one (S = 2 only); every
    /// PE needs at least S cells along each axis it exchanges halos on
    /// (a periodic axis of a lone PE included: its ghosts wrap onto it);
    /// `iterations` and `check_every` must be multiples of S (norms are of
    /// the last sweep of a check's graph iteration, so at the same
    /// iterations as with S = 1), and a tolerance stops the run
    /// `STOP_SLACK − 1` graph iterations (each S sweeps) after the
    /// converged check's ([`STOP_SLACK`]).
    pub steps_per_sync: u32,
}

/// Default [`JacobiConfig::pulse_chunk_cells`]: one round of a 128-thread
/// comm block (8 cells a thread).
pub const PULSE_CHUNK_CELLS: usize = 1024;

/// Thinnest slab (cells along the split axis) [`default_decomposition`]
/// gives a PE.
pub const MIN_SLAB_CELLS: usize = 16;

/// The PE grid a solve gets when [`JacobiConfig::pe_grid`] is `None`:
/// slabs — one axis split, the one of least face among those whose slabs
/// are at least `max(steps, MIN_SLAB_CELLS)` cells thick (ties: the slower
/// axis) — and otherwise the split of least halo whose blocks are at least
/// `steps` thick ([`Decomposition::auto_for_halo`]). A split along two or
/// three axes has less halo but two or three pulse rounds a
/// synchronisation, each forwarding the one before (edges and corners):
/// measured on H200s (docs/performance.md, session 17), slabs were faster
/// at every size but one, across 4 GPUs (3D 256³ with S = 2: 35.9 against
/// 51.8 µs an iteration; 2D 1024² with S = 4: 3.76 against 5.79; 16384²
/// equal) and on 4 or 8 virtual PEs of one GPU (3D 256³ on 8: 131 against
/// 168; 2D 4096² on 4: 28.4 against 26.3, the exception).
pub fn default_decomposition(
    p: &JacobiProblem,
    pes: usize,
    steps: usize,
) -> std::result::Result<Decomposition, halo::HaloError> {
    let periodic = [0, 1, 2].map(|a| p.boundary[a] == Boundary::Periodic);
    let thick = steps.max(MIN_SLAB_CELLS);
    if pes > 1 {
        let face = |a: usize| {
            (0..3)
                .filter(|&b| b != a)
                .map(|b| p.dims[b])
                .product::<usize>()
        };
        let slab = (0..3)
            .filter(|&a| p.dims[a] / pes >= thick)
            .min_by_key(|&a| (face(a), a));
        if let Some(a) = slab {
            let mut grid = [1; 3];
            grid[a] = pes;
            return Decomposition::new(p.dims, grid, periodic);
        }
    }
    // Blocks at least S cells thick where the stencil exchanges halos,
    // when some factorization has them.
    Decomposition::auto_for_halo(p.dims, pes, periodic, steps)
}

/// Most comm blocks [`comm_blocks_for_virtual_pes`] suggests.
pub const VIRTUAL_PE_MAX_COMM_BLOCKS: u32 = 16;

/// Comm blocks per PE worth giving a runtime of `pes` virtual PEs on one
/// GPU for `cfg`: one per chunk ([`JacobiConfig::pulse_chunk_cells`]) of
/// the largest pulse, at most [`VIRTUAL_PE_MAX_COMM_BLOCKS`], at least 1.
/// A pulse is copied by as many comm blocks as it has chunks, so a large
/// halo wants many and a small one gains nothing from more (their polling
/// costs a small grid: measured on an H200, 4 virtual PEs of 2D 1024²
/// with 4 sweeps a sync took 9.5 µs an iteration with 1 comm block and
/// 16.5 with 16), while 2 virtual PEs of 3D 256³ took 391 µs with the
/// runtime's default of 1 and 63 with 16 (docs/performance.md, session
/// 17). The runtime's own default for PEs on one GPU is 1, since it does
/// not know the graph; `autarky jacobi2d|jacobi3d` passes this one. 1 for
/// one PE, and when the decomposition fails (the solver then says why).
pub fn comm_blocks_for_virtual_pes(cfg: &JacobiConfig, pes: u32) -> u32 {
    let p = &cfg.problem;
    let steps = cfg.steps_per_sync.max(1) as usize;
    if pes <= 1 {
        return 1;
    }
    let periodic = [0, 1, 2].map(|a| p.boundary[a] == Boundary::Periodic);
    let decomp = match cfg.pe_grid {
        Some(g) => Decomposition::new(p.dims, g, periodic),
        None => default_decomposition(p, pes as usize, steps),
    };
    let Ok(decomp) = decomp else { return 1 };
    let ext = decomp.max_local_extent();
    let grid = decomp.pes();
    // The largest face a PE sends, `steps` layers deep.
    let face = (0..3)
        .filter(|&a| grid[a] > 1)
        .map(|a| {
            (0..3)
                .filter(|&b| b != a)
                .map(|b| ext[b])
                .product::<usize>()
                * steps
        })
        .max()
        .unwrap_or(0);
    let chunks = face.div_ceil(cfg.pulse_chunk_cells.max(1));
    chunks.clamp(1, VIRTUAL_PE_MAX_COMM_BLOCKS as usize) as u32
}

impl JacobiConfig {
    /// `iterations` sweeps of `problem` in f32, no norm.
    pub fn new(problem: JacobiProblem, iterations: u32) -> JacobiConfig {
        JacobiConfig {
            problem,
            iterations,
            check_every: 0,
            tol: None,
            precision: Precision::F32,
            pe_grid: None,
            tile: None,
            check_finite: true,
            pulse_chunk_cells: PULSE_CHUNK_CELLS,
            steps_per_sync: 1,
        }
    }
}

/// What a solve did.
#[derive(Clone, Debug)]
pub struct JacobiRun {
    /// The global interior after the last iteration (row-major, x fastest).
    pub field: Vec<f64>,
    /// Iterations run (the same on every PE).
    pub iterations: u32,
    /// `(iteration, ‖a_new − a‖₂)` at every check.
    pub norms: Vec<(u32, f64)>,
    /// The first checked iteration whose norm met the tolerance.
    pub converged_at: Option<u32>,
    /// The runtime's report of the run.
    pub report: RunReport,
}

impl JacobiRun {
    /// Device (or emulator wall) time per iteration.
    pub fn time_per_iteration(&self) -> Duration {
        let ns = match (self.report.event_ms, self.report.device_ns) {
            (Some(ms), _) => (ms as f64 * 1e6) as u64,
            (None, Some(ns)) => ns,
            _ => self.report.wall.as_nanos() as u64,
        };
        Duration::from_nanos(ns / self.iterations.max(1) as u64)
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct TileArgs {
    a: u64,
    len: u64,
    partials: u64,
    arrivals: u64,
    lo: [u32; 3],
    hi: [u32; 3],
    sy: u32,
    sz: u32,
    tile: u32,
    tiles: u32,
    check_every: u32,
    iterations: u32,
    stencil: u32,
    f64: u32,
    steps: u32,
    ulo: [u32; 3],
    uhi: [u32; 3],
    pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct PulseArgs {
    a: u64,
    len: u64,
    lo: [u32; 3],
    shape: [u32; 3],
    rlo: [u32; 3],
    sy: u32,
    sz: u32,
    rsy: u32,
    rsz: u32,
    to_pe: u32,
    f64: u32,
    pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct CheckArgs {
    partials: u64,
    slots: u64,
    norms: u64,
    arrivals: u64,
    tiles: u32,
    pes: u32,
    check_every: u32,
    iterations: u32,
    stop_slack: u32,
    flags: u32,
    tol: f64,
}

/// One PE's tiles: a regular grid of boxes over its interior.
struct TileGrid {
    /// Tiles along z, y, x.
    count: [usize; 3],
    /// Tile shape.
    shape: [usize; 3],
    /// The PE's interior box in padded coordinates.
    interior: Box3,
}

impl TileGrid {
    fn len(&self) -> usize {
        self.count.iter().product()
    }
    fn index(&self, c: [usize; 3]) -> usize {
        (c[0] * self.count[1] + c[1]) * self.count[2] + c[2]
    }
    fn coords(&self, i: usize) -> [usize; 3] {
        [
            i / (self.count[1] * self.count[2]),
            (i / self.count[2]) % self.count[1],
            i % self.count[2],
        ]
    }
    fn tile_box(&self, c: [usize; 3]) -> Box3 {
        let mut lo = [0; 3];
        let mut hi = [0; 3];
        for a in 0..3 {
            lo[a] = self.interior.lo[a] + c[a] * self.shape[a];
            hi[a] = (lo[a] + self.shape[a]).min(self.interior.hi[a]);
        }
        Box3::new(lo, hi)
    }
    /// Tiles whose box intersects `b` (padded coordinates).
    fn intersecting(&self, b: &Box3) -> Vec<usize> {
        let mut range = [(0usize, 0usize); 3];
        for (a, r) in range.iter_mut().enumerate() {
            let lo = b.lo[a].max(self.interior.lo[a]);
            let hi = b.hi[a].min(self.interior.hi[a]);
            if lo >= hi {
                return Vec::new();
            }
            *r = (
                (lo - self.interior.lo[a]) / self.shape[a],
                (hi - 1 - self.interior.lo[a]) / self.shape[a] + 1,
            );
        }
        let mut out = Vec::new();
        for z in range[0].0..range[0].1 {
            for y in range[1].0..range[1].1 {
                for x in range[2].0..range[2].1 {
                    out.push(self.index([z, y, x]));
                }
            }
        }
        out
    }
}

/// `b` split along its longest axis (the outer one on a tie) into at most
/// `parts` boxes of at least `min_cells` cells each (just `b` when it is
/// smaller than two chunks or `parts` is 1), in order along that axis.
fn split_box(b: &Box3, parts: usize, min_cells: usize) -> Vec<Box3> {
    let shape = b.shape();
    let cells = b.len();
    // The longest axis; on a tie the outer one, so chunks keep whole x rows.
    let axis = (0..3)
        .max_by_key(|&a| (shape[a], std::cmp::Reverse(a)))
        .unwrap_or(2);
    // Layers along that axis a chunk needs for `min_cells`: every chunk
    // gets at least ⌊len / k⌋ of them.
    let rest = (cells / shape[axis].max(1)).max(1);
    let per = min_cells.max(1).div_ceil(rest);
    let k = parts.min(shape[axis] / per).max(1);
    (0..k)
        .map(|c| {
            let (mut lo, mut hi) = (b.lo, b.hi);
            lo[axis] = b.lo[axis] + shape[axis] * c / k;
            hi[axis] = b.lo[axis] + shape[axis] * (c + 1) / k;
            Box3::new(lo, hi)
        })
        .collect()
}

/// `b` grown by `r` cells on every active axis.
fn grow(b: &Box3, r: [usize; 3]) -> Box3 {
    let mut lo = b.lo;
    let mut hi = b.hi;
    for a in 0..3 {
        lo[a] = lo[a].saturating_sub(r[a]);
        hi[a] += r[a];
    }
    Box3::new(lo, hi)
}

/// A Jacobi solve laid out on a runtime: the graph, the symmetric buffers
/// and the initial state. Build it once, [`JacobiSolver::run`] it as often as
/// needed (each run starts from the initial values).
pub struct JacobiSolver<'rt> {
    rt: &'rt Runtime,
    cfg: JacobiConfig,
    graph: Graph,
    decomp: Decomposition,
    layouts: Vec<LocalLayout>,
    a: SymBuffer<u8>,
    norms: Option<SymBuffer<f64>>,
    /// Per PE and check slot (`n % 4`): tiles that wrote their partial for
    /// the slot's current check (reset by check_local, zeroed by `reset`).
    arrivals: SymBuffer<u32>,
    /// Elements per buffer (the largest PE's padded array).
    len: usize,
    /// Initial padded arrays of both buffers, per PE (bytes).
    initial: Vec<Vec<u8>>,
    tiles_per_pe: Vec<usize>,
    tile_shapes: Vec<[usize; 3]>,
}

impl std::fmt::Debug for JacobiSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JacobiSolver")
            .field("pe_grid", &self.decomp.pes())
            .field("tiles_per_pe", &self.tiles_per_pe)
            .field("tasks", &self.graph.num_tasks())
            .finish()
    }
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidConfig(msg.into())
}

/// The kinds of the Jacobi graph, in registration order (public for
/// compile checks: `tests/jacobi_device_compile.rs` compiles them with NVRTC).
pub fn jacobi_kinds() -> Vec<TaskKind> {
    kinds()
}

fn kinds() -> Vec<TaskKind> {
    vec![
        TaskKind::new("jacobi_tile", KERNELS)
            .args::<TileArgs>()
            .with_cpu(cpu::tile),
        TaskKind::new("jacobi_pulse", "")
            .args::<PulseArgs>()
            .comm()
            .with_cpu(cpu::pulse),
        TaskKind::new("jacobi_check_local", "")
            .args::<CheckArgs>()
            .comm()
            .with_cpu(cpu::check_local),
        TaskKind::new("jacobi_check_global", "")
            .args::<CheckArgs>()
            .comm()
            .may_finish_early()
            .with_cpu(cpu::check_global),
    ]
}

impl<'rt> JacobiSolver<'rt> {
    /// Plans the decomposition, tiles, pulses and checks for `rt`'s PEs and
    /// builds the graph and buffers. Errors: a problem the reference rejects,
    /// a PE grid that does not multiply to the runtime's PEs, a tolerance
    /// without checks, a grid too small for the PEs.
    pub fn new(rt: &'rt Runtime, cfg: JacobiConfig) -> Result<JacobiSolver<'rt>> {
        let p = &cfg.problem;
        let pes = rt.num_pes() as usize;
        if p.dims.contains(&0) {
            return Err(invalid(format!(
                "the grid of {} has an empty axis",
                grid_text(p.dims, p.stencil.is_2d())
            )));
        }
        if p.stencil.is_2d() && p.dims[0] != 1 {
            return Err(invalid(format!(
                "the {} stencil needs a 2D grid (nz = 1), got {}",
                p.stencil,
                grid_text(p.dims, p.stencil.is_2d())
            )));
        }
        if cfg.iterations == 0 {
            return Err(invalid("iterations must be at least 1"));
        }
        if cfg.pulse_chunk_cells == 0 {
            return Err(invalid("pulse_chunk_cells must be at least 1"));
        }
        let steps = cfg.steps_per_sync;
        if !(1..=4).contains(&steps) {
            return Err(invalid(format!(
                "steps_per_sync must be in 1..=4, got {steps}"
            )));
        }
        if steps > 1 {
            match p.stencil {
                Stencil::FivePoint => {}
                Stencil::SevenPoint if steps == 2 => {}
                Stencil::SevenPoint => {
                    return Err(invalid(format!(
                        "steps_per_sync {steps}: temporal blocking of the 7-point stencil runs 2 sweeps a sync, not {steps}"
                    )));
                }
                _ => {
                    return Err(invalid(format!(
                        "steps_per_sync {steps}: temporal blocking supports the 2D 5-point and 3D 7-point stencils only, not the {} stencil",
                        p.stencil
                    )));
                }
            }
            let two_d = p.stencil.is_2d();
            if p.dims[1] < 2 || p.dims[2] < 2 || (!two_d && p.dims[0] < 2) {
                return Err(invalid(format!(
                    "steps_per_sync {steps}: needs at least 2 cells along {}, got {}",
                    if two_d { "y and x" } else { "z, y and x" },
                    grid_text(p.dims, two_d)
                )));
            }
            if cfg.iterations % steps != 0 || cfg.check_every % steps != 0 {
                return Err(invalid(format!(
                    "steps_per_sync {steps}: iterations ({}) and check_every ({}) must be multiples of it",
                    cfg.iterations, cfg.check_every
                )));
            }
        }
        if cfg.tol.is_some() && cfg.check_every == 0 {
            return Err(invalid("a tolerance needs check_every > 0"));
        }
        if let Some(t) = cfg.tol {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(invalid(format!(
                    "tolerance must be finite and ≥ 0, got {t}"
                )));
            }
        }
        let periodic = [0, 1, 2].map(|a| p.boundary[a] == Boundary::Periodic);
        let decomp = match cfg.pe_grid {
            Some(g) => {
                if g.iter().product::<usize>() != pes {
                    return Err(invalid(format!(
                        "PE grid {} has {} PEs, the runtime has {pes}",
                        g.map(|v| v.to_string()).join(" × "),
                        g.iter().product::<usize>()
                    )));
                }
                Decomposition::new(p.dims, g, periodic)
            }
            None => default_decomposition(p, pes, steps as usize),
        }
        .map_err(|e| invalid(format!("decomposition: {e}")))?
        // Every axis the stencil reaches along has ghosts, also one of a
        // single cell (its neighbours are boundary values, or itself).
        .with_active_axes([!p.stencil.is_2d(), true, true]);
        // S sweeps per synchronisation need S ghost layers, corners
        // included (the 5-point stencil's reach after S sweeps is a
        // diamond of radius S).
        let footprint = if p.stencil.needs_corners() || steps > 1 {
            Footprint::Full
        } else {
            Footprint::Faces
        };
        let width = steps as usize;
        let plan = halo::plan(&decomp, width, footprint)
            .map_err(|e| match e {
                // In the solver's words: a block thinner than S sweeps'
                // ghost layers (a decomposition the caller chose, or one
                // where no factorization is thick enough).
                halo::HaloError::HaloWiderThanBlock {
                    axis,
                    halo: h,
                    smallest,
                    pes_along,
                } => {
                    let name = ["z", "y", "x"][axis];
                    let what = if pes_along == 1 {
                        format!("the periodic {name} axis has {smallest} cell{}", plural(smallest))
                    } else {
                        format!(
                            "{pes_along} PEs along {name} leave {smallest} cell{} to a PE there",
                            plural(smallest)
                        )
                    };
                    invalid(format!(
                        "decomposition: {what}, fewer than the {h} ghost layers of {steps} sweep{} a sync; use fewer PEs, a larger grid or fewer sweeps a sync",
                        plural(steps as usize)
                    ))
                }
                e => invalid(format!("halo plan: {e}")),
            })?;
        let layouts: Vec<LocalLayout> = (0..pes).map(|q| plan.layout(q)).collect();
        let len = decomp.max_layout(width).len();
        let reach = decomp.halo_widths(width);
        // Graph iterations (each S sweeps) and checks in them.
        let (g_iters, g_every) = (cfg.iterations / steps, cfg.check_every / steps);
        let esize = cfg.precision.size();

        let mut graph = Graph::new();
        let ks: Vec<_> = kinds()
            .into_iter()
            .map(|k| graph.add_kind(k))
            .collect::<std::result::Result<_, _>>()?;
        let (k_tile, k_pulse, k_local, k_global) = (ks[0], ks[1], ks[2], ks[3]);

        // Tiles: a shape that gives every compute block work without tiny
        // tiles (and x rows long enough to coalesce). The default shape on
        // small grids with S > 1 comes with a block shape of its own, which
        // the graph then runs with (every PE's default must agree on it).
        let mut block_threads = None;
        let grids: Vec<TileGrid> = (0..pes)
            .map(|q| {
                let lay = &layouts[q];
                let ext = lay.extent;
                let shape = match cfg.tile {
                    Some(t) => t,
                    None => {
                        let (t, threads) = default_shape(ext, TILE_BLOCKS, cfg.steps_per_sync);
                        block_threads = if q == 0 {
                            threads
                        } else {
                            block_threads.filter(|_| threads == block_threads)
                        };
                        t
                    }
                };
                let shape = [0, 1, 2].map(|a| shape[a].clamp(1, ext[a]));
                TileGrid {
                    count: [0, 1, 2].map(|a| ext[a].div_ceil(shape[a])),
                    shape,
                    interior: lay.interior(),
                }
            })
            .collect();
        // One task a tile: refused here, before a graph of them is built
        // (27 M tiles of one cell took 16 GB and half a minute to build,
        // then failed validation naming Builder::max_tasks).
        let tiles: usize = grids.iter().map(TileGrid::len).sum();
        if tiles > rt.max_tasks() {
            return Err(invalid(format!(
                "{tiles} tiles of {} are more tasks than the ready queue holds ({}): use larger tiles",
                grid_text(grids[0].shape, p.stencil.is_2d()),
                rt.max_tasks()
            )));
        }
        if let Some(threads) = block_threads {
            graph.set_threads_per_block(threads)?;
        }
        let (comm_blocks, compute_blocks) = rt.blocks_per_pe_of(&graph)?;
        let check_slot = comm_blocks.saturating_sub(1).min(1);
        let max_tiles = grids.iter().map(TileGrid::len).max().unwrap_or(1);

        let a = rt.alloc_symmetric::<u8>(2 * len * esize)?;
        let checks = cfg.check_every > 0;
        let partials = rt.alloc_symmetric::<f64>(4 * max_tiles)?;
        let slots = rt.alloc_symmetric::<f64>(4 * pes)?;
        let arrivals = rt.alloc_symmetric::<u32>(4)?;
        let norms = if checks {
            Some(rt.alloc_symmetric::<f64>((g_iters / g_every) as usize + 1)?)
        } else {
            None
        };
        let stencil_code = match p.stencil {
            Stencil::FivePoint => 5,
            Stencil::NinePoint => 9,
            Stencil::SevenPoint => 7,
            Stencil::TwentySevenPoint => 27,
        };
        let f64 = (cfg.precision == Precision::F64) as u32;

        // ---- tiles ---------------------------------------------------------
        let mut tile_ids: Vec<Vec<TaskId>> = Vec::with_capacity(pes);
        for (q, grid) in grids.iter().enumerate() {
            let lay = &layouts[q];
            // The cells that evolve: the interior, and on a side with a
            // neighbour (another PE or a periodic wrap) the ghosts, which
            // mirror its cells; a Dirichlet side's ghosts stay fixed.
            let (mut ulo, mut uhi) = ([0u32; 3], [0u32; 3]);
            for ax in 0..3 {
                let (h, ext) = (lay.halo[ax], lay.extent[ax]);
                ulo[ax] = if decomp.neighbor(q, ax, -1).is_some() {
                    0
                } else {
                    h
                } as u32;
                uhi[ax] = if decomp.neighbor(q, ax, 1).is_some() {
                    2 * h + ext
                } else {
                    h + ext
                } as u32;
            }
            let mut ids = Vec::with_capacity(grid.len());
            for i in 0..grid.len() {
                let b = grid.tile_box(grid.coords(i));
                let t = graph.add_task(
                    k_tile,
                    &TileArgs {
                        a: a.addr(q as u32),
                        len: len as u64,
                        partials: partials.addr(q as u32),
                        arrivals: arrivals.addr(q as u32),
                        lo: b.lo.map(|v| v as u32),
                        hi: b.hi.map(|v| v as u32),
                        sy: lay.strides[1] as u32,
                        sz: lay.strides[0] as u32,
                        tile: i as u32,
                        tiles: grid.len() as u32,
                        check_every: g_every,
                        iterations: g_iters,
                        stencil: stencil_code,
                        f64,
                        steps,
                        ulo,
                        uhi,
                        pad: 0,
                    },
                );
                graph.set_pe(t, q as u32);
                graph.pin(t, (i % compute_blocks as usize) as u32);
                graph.set_name(t, format!("tile {:?} of PE {q}", grid.coords(i)));
                ids.push(t);
            }
            // Neighbouring tiles: distance 1 both ways.
            for i in 0..grid.len() {
                let c = grid.coords(i);
                let reach_box = grow(&grid.tile_box(c), reach);
                for j in grid.intersecting(&reach_box) {
                    if j != i {
                        graph.add_carried_edge(ids[j], ids[i]);
                    }
                }
            }
            tile_ids.push(ids);
        }

        // ---- pulses ----------------------------------------------------------
        // One task per box of a pulse: (task, receiver-side box).
        let mut parts: Vec<Vec<TaskId>> = vec![Vec::new(); plan.pulses().len()];
        // Comm blocks for pulse chunks: all, but with three or more, not
        // the check's (a pinned comm list runs in order, so a chunk behind
        // the global check would wait for every PE's check first).
        let pulse_slots: Vec<u32> = (0..comm_blocks)
            .filter(|&s| !(checks && comm_blocks >= 3 && s == check_slot))
            .collect();
        for id in plan_order(&plan) {
            let pulse = &plan.pulses()[id];
            let (from, to) = (pulse.from_pe, pulse.to_pe);
            let (sl, rl) = (&layouts[from], &layouts[to]);
            let boxes: Vec<(Box3, Option<usize>)> = pulse
                .independent
                .iter()
                .map(|b| (*b, None))
                .chain(pulse.forwarded.iter().map(|f| (f.region, Some(f.after))))
                .collect();
            let boxes: Vec<(Box3, Option<usize>)> = boxes
                .into_iter()
                .filter(|(bx, _)| !bx.is_empty())
                .flat_map(|(bx, after)| {
                    split_box(&bx, pulse_slots.len(), cfg.pulse_chunk_cells)
                        .into_iter()
                        .map(move |c| (c, after))
                })
                .collect();
            for (chunk, (bx, after)) in boxes.into_iter().enumerate() {
                // The device copies a box with 32-bit cell indices (whose
                // loop counter must not wrap: at most 2^31 cells).
                if bx.shape().iter().product::<usize>() > 1 << 31 {
                    return Err(invalid(format!(
                        "a halo box of {} is too large (at most 2^31 cells a pulse)",
                        grid_text(bx.shape(), p.stencil.is_2d())
                    )));
                }
                let rlo = [0, 1, 2].map(|ax| pulse.recv.lo[ax] + (bx.lo[ax] - pulse.send.lo[ax]));
                let t = graph.add_task(
                    k_pulse,
                    &PulseArgs {
                        a: a.addr(from as u32),
                        len: len as u64,
                        lo: bx.lo.map(|v| v as u32),
                        shape: bx.shape().map(|v| v as u32),
                        rlo: rlo.map(|v| v as u32),
                        sy: sl.strides[1] as u32,
                        sz: sl.strides[0] as u32,
                        rsy: rl.strides[1] as u32,
                        rsz: rl.strides[0] as u32,
                        to_pe: to as u32,
                        f64,
                        pad: 0,
                    },
                );
                graph.set_pe(t, from as u32);
                // Chunks of one pulse on different comm blocks.
                graph.pin(t, pulse_slots[chunk % pulse_slots.len()]);
                graph.set_name(
                    t,
                    format!(
                        "pulse {id} ({} PE {from} → PE {to})",
                        halo::AXIS_NAMES[pulse.axis]
                    ),
                );
                match after {
                    None => {
                        // Data: the sender's tiles that produce the box; the
                        // same tiles' instance n + 2 rewrites it (WAR).
                        for j in grids[from].intersecting(&bx) {
                            graph.add_edge(tile_ids[from][j], t);
                            graph.add_edge_with_distance(t, tile_ids[from][j], 2);
                        }
                    }
                    Some(prev) => {
                        for &u in &parts[prev] {
                            graph.add_edge(u, t);
                        }
                    }
                }
                // The receiver's tiles that read the box wait for it.
                let rbox = Box3::new(rlo, [0, 1, 2].map(|ax| rlo[ax] + bx.shape()[ax]));
                let readers = grids[to].intersecting(&grow(&rbox, reach));
                for j in readers {
                    graph.add_carried_edge(t, tile_ids[to][j]);
                }
                parts[id].push(t);
            }
        }

        // ---- convergence check -------------------------------------------------
        if checks {
            let norms = norms.as_ref().expect("allocated with checks");
            let mut locals = Vec::with_capacity(pes);
            let mut globals = Vec::with_capacity(pes);
            for (q, grid) in grids.iter().enumerate() {
                let args = CheckArgs {
                    partials: partials.addr(q as u32),
                    slots: slots.addr(q as u32),
                    norms: norms.addr(q as u32),
                    arrivals: arrivals.addr(q as u32),
                    tiles: grid.len() as u32,
                    pes: pes as u32,
                    check_every: g_every,
                    iterations: g_iters,
                    stop_slack: STOP_SLACK,
                    flags: cfg.tol.is_some() as u32 | (cfg.check_finite as u32) << 1,
                    tol: cfg.tol.unwrap_or(0.0),
                };
                let l = graph.add_task(k_local, &args);
                let g = graph.add_task(k_global, &args);
                // One block, in list order: the slot array's reuse relies
                // on it (module docs).
                for t in [l, g] {
                    graph.set_pe(t, q as u32);
                    graph.pin(t, check_slot);
                }
                graph.set_name(l, format!("check (local sum) of PE {q}"));
                graph.set_name(g, format!("check (global norm) of PE {q}"));
                // No tile → check_local edges: check_local waits in its
                // body for the PE's arrival counter, and only at check
                // iterations (an edge would make it poll every tile at
                // every iteration: measured 1278 µs per iteration instead
                // of 102 at 4096² with 4096 tiles).
                for &t in &tile_ids[q] {
                    graph.add_edge_with_distance(g, t, STOP_SLACK);
                }
                locals.push(l);
                globals.push(g);
            }
            for &g in &globals {
                for &l in &locals {
                    graph.add_edge(l, g);
                }
            }
        }

        // ---- initial values ----------------------------------------------------
        let initial: Vec<Vec<u8>> = (0..pes)
            .map(|q| initial_array(&cfg, &decomp, &layouts[q], q, len))
            .collect();
        Ok(JacobiSolver {
            rt,
            tiles_per_pe: grids.iter().map(TileGrid::len).collect(),
            tile_shapes: grids.iter().map(|g| g.shape).collect(),
            cfg,
            graph,
            decomp,
            layouts,
            a,
            norms,
            arrivals,
            len,
            initial,
        })
    }

    /// The task graph (for benches and inspection).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The PE grid `[pz, py, px]`.
    pub fn pe_grid(&self) -> [usize; 3] {
        self.decomp.pes()
    }

    /// Graph iterations a run of the configured iterations takes: each is
    /// [`JacobiConfig::steps_per_sync`] sweeps. For timing the graph with
    /// [`Runtime::run_with`] directly, as the bench does.
    pub fn graph_iterations(&self) -> u32 {
        self.cfg.iterations / self.cfg.steps_per_sync
    }

    /// Tiles of every PE.
    pub fn tiles_per_pe(&self) -> &[usize] {
        &self.tiles_per_pe
    }

    /// The tile shape (z, y, x cells) of every PE: the default one, or
    /// [`JacobiConfig::tile`] with each size clamped to the PE's extent
    /// along its axis (a tile longer than the PE's part of the grid takes
    /// the whole axis). Edge tiles may be shorter.
    pub fn tile_shapes(&self) -> &[[usize; 3]] {
        &self.tile_shapes
    }

    /// Writes the initial values into the buffers of every PE this process
    /// hosts ([`Runtime::local_pes`]: all of them in one process).
    pub fn reset(&self) -> Result<()> {
        for q in self.rt.local_pes() {
            self.a.copy_from(q, &self.initial[q as usize])?;
            self.arrivals.copy_from(q, &[0; 4])?;
        }
        Ok(())
    }

    /// Resets and runs the solve with `opts` (its `iterations` are replaced
    /// by the configuration's).
    pub fn run_with(&self, opts: crate::RunOptions) -> Result<JacobiRun> {
        self.reset()?;
        let steps = self.cfg.steps_per_sync;
        let report = self
            .rt
            .run_with(&self.graph, self.options(opts))
            .map_err(|e| match e {
                // A non-finite norm is found by a check, at the last sweep of
                // its graph iteration: name that sweep, as the norms do. (Other
                // errors name the graph iteration, each `steps` sweeps.)
                Error::NonFinite {
                    pe,
                    task,
                    iteration,
                    index,
                } => Error::NonFinite {
                    pe,
                    task,
                    iteration: (iteration + 1) * steps - 1,
                    index,
                },
                // The emulator's check fails with a code (a CPU body has no
                // fail_non_finite): the same error as the GPU's, whose index
                // is the graph iteration.
                Error::TaskFailed {
                    pe,
                    task,
                    iteration,
                    code,
                } if code == NON_FINITE_CODE as u64 => Error::NonFinite {
                    pe,
                    task,
                    iteration: (iteration + 1) * steps - 1,
                    index: iteration as u64,
                },
                e => e,
            })?;
        self.collect(report)
    }

    /// Resets and runs the solve.
    pub fn run(&self) -> Result<JacobiRun> {
        self.run_with(crate::RunOptions::iterations(self.cfg.iterations))
    }

    /// Compiles the kernel [`JacobiSolver::run`] launches, or finds it in
    /// the caches ([`Runtime::prepare`]), so the solve starts without
    /// compiling. Solvers on one runtime may prepare from threads of their
    /// own at once: their kernels compile in parallel.
    pub fn prepare(&self) -> Result<()> {
        self.prepare_with(crate::RunOptions::iterations(self.cfg.iterations))
    }

    /// [`JacobiSolver::prepare`] for [`JacobiSolver::run_with`]`(opts)`.
    pub fn prepare_with(&self, opts: crate::RunOptions) -> Result<()> {
        self.rt.prepare(&self.graph, &self.options(opts))
    }

    /// The options a solve runs with: `opts` with the configuration's
    /// graph iterations (each runs `steps_per_sync` sweeps).
    fn options(&self, mut opts: crate::RunOptions) -> crate::RunOptions {
        opts.iterations = self.cfg.iterations / self.cfg.steps_per_sync;
        opts
    }

    fn collect(&self, report: RunReport) -> Result<JacobiRun> {
        // Graph iterations; sweeps are `steps` times as many.
        let steps = self.cfg.steps_per_sync;
        let iters = report.iterations;
        let dims = self.cfg.problem.dims;
        let mut field = vec![0.0f64; dims.iter().product()];
        let esize = self.cfg.precision.size();
        let par = (iters % 2) as usize;
        for q in 0..self.decomp.num_pes() {
            let bytes = self.a.to_vec(q as u32)?;
            let buf = &bytes[par * self.len * esize..(par + 1) * self.len * esize];
            let lay = &self.layouts[q];
            let origin = self.decomp.local_origin(q);
            for c in lay.interior().cells() {
                let i = lay.index_of(c);
                let v = match self.cfg.precision {
                    Precision::F32 => {
                        f32::from_ne_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap()) as f64
                    }
                    Precision::F64 => f64::from_ne_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap()),
                };
                let g = [0, 1, 2].map(|a| origin[a] + c[a] - lay.halo[a]);
                field[(g[0] * dims[1] + g[1]) * dims[2] + g[2]] = v;
            }
        }
        let mut norms = Vec::new();
        if let Some(nb) = &self.norms {
            let all = nb.to_vec(0)?;
            let every = self.cfg.check_every / steps;
            let g_iters = self.cfg.iterations / steps;
            for n in 0..iters {
                if (n + 1) % every == 0 || n + 1 == g_iters {
                    // The check of graph iteration n is of its last sweep.
                    norms.push(((n + 1) * steps - 1, all[(n / every) as usize]));
                }
            }
        }
        // Multi-process: no rank may reset (write) its PEs for the next run
        // while another still reads them here.
        self.rt.barrier()?;
        let converged_at = self
            .cfg
            .tol
            .and_then(|tol| norms.iter().find(|(_, v)| *v <= tol).map(|&(n, _)| n));
        Ok(JacobiRun {
            field,
            iterations: iters * steps,
            norms,
            converged_at,
            report,
        })
    }
}

/// Pulse ids in an order where every forwarded box's earlier pulse comes
/// first (ids are already Z → Y → X).
fn plan_order(plan: &halo::Plan) -> Vec<usize> {
    plan.dependency_order()
}

/// The block count default tiles are sized for: about the compute blocks
/// of one H200 (1055 at the default block shape), so a PE that owns a
/// whole H200 runs about one tile per block. A constant and not the
/// runtime's block count: the tiles fix the order of the norm's sum, and
/// must not depend on where the PEs run (P virtual PEs of one GPU have
/// 1/P of its blocks each; a P-GPU run has all of each GPU's).
pub const TILE_BLOCKS: usize = 1024;

/// A tile shape for a PE interior of `ext` cells and `blocks` compute
/// blocks: about one tile per block, of 2048 to 16384 cells, 8 or more rows
/// tall (a lane walks 8 rows of a column with its loads in flight together)
/// and up to 1024 cells wide.
///
/// Measured on the H200 (f32 5-point, µs per iteration): 1024² 9.5 with
/// the former 1 × 1024 tiles, 5.3 with 8 × 256; 4096² 78.5 with 4 × 1024,
/// 63.1 with 16 × 1024; 16384² 1353 with 4 × 1024, 1083 with 16 × 1024.
///
/// Rows beyond 8 are rounded up to a multiple of 8, so no lane's last
/// column segment is short: 4096² on 1055 blocks gets 16 × 1024 tiles
/// (1024 of them), not the 15 × 1024 that one-tile-per-block gives
/// (1096 of them: 41 blocks then run two), and 256³ gets 1 × 64 × 256
/// (1024 tiles, as 32 × 2 × 256: see [`Z_SWEEP_ROWS`]), not 1 × 62 × 256
/// (1280 tiles, the fifth of each plane only 8 rows).
///
/// With temporal blocking (`steps` = S > 1 sweeps a sync, 2D) on a grid
/// whose one-tile-per-block share is under 2048 cells, a tile is a whole
/// number of the S-step body's work items (32 − 2S columns × 8 rows) and
/// small, four items (one per warp) or eight: each item recomputes a
/// border S deep, and the rule above's 8 × 256 tiles at 256² kept 32 of
/// ~1000 blocks busy, 11 items each. Measured (f32,
/// S = 4, µs per sweep, session 10): 256² 8 × 96 1.14, 8 × 64 1.15,
/// 16 × 48 1.16, 8 × 256 (the rule above) 4.07; 1024² 16 × 96 2.63,
/// 16 × 144 2.72, 16 × 192 2.92, 8 × 256 ~4.7.
///
/// The smallest of those grids (share under 512 cells) run best with
/// eight items a tile, one a warp, in 256-thread blocks: see
/// [`default_shape`].
#[cfg(test)]
fn default_tile(ext: [usize; 3], blocks: usize, steps: u32) -> [usize; 3] {
    default_shape(ext, blocks, steps).0
}

/// Rows of a work item of the 3D 7-point sweep (f32; `JACOBI_Z2` in the
/// kernels), and the warps of a block that the default 3D tiles give an
/// item each. Measured (f32 7-point, µs per iteration, one H200, session
/// 14): 256³ with 2-row items 64 × 2 × 128 93.5, 32 × 2 × 256 94.5,
/// 16 × 2 × 256 101, 64 × 2 × 256 (512 tiles) 119; 4-row items 16 × 4 × 256
/// 97.2; the former sweep's 8 × 8 × 256 116.6. 64³: 8 × 4 × 64 5.97,
/// 16 × 2 × 64 (two items a tile) 8.89, 8 × 8 × 64 9.54.
const Z_SWEEP_ROWS: usize = 2;
const Z_SWEEP_WARPS: usize = 4;

/// Threads per block of the default tiles of the smallest grids with
/// S > 1: eight S-step work items a tile, one a warp.
pub const SMALL_GRID_THREADS: u32 = 256;

/// [`default_tile`], and the block shape the tile is meant for (None: the
/// runtime's). Measured (f32 5-point, S = 4, µs per sweep, one H200,
/// session 12): 256² at 256 threads 8 × 192 0.870, 8 × 128 0.893,
/// 16 × 128 1.11; at 128 threads 8 × 96 1.071 (the former default);
/// 512 threads 8 × 256 1.04. At 1024² (share 1024 cells) 256 threads
/// were slower than 128 with 16 × 96 (2.07): 32 × 96 3.49, 16 × 192 3.53.
fn default_shape(ext: [usize; 3], blocks: usize, steps: u32) -> ([usize; 3], Option<u32>) {
    let cells: usize = ext.iter().product();
    if steps > 1 && ext[0] == 1 && cells / blocks.max(1) < 2048 {
        let w = 32 - 2 * steps.min(4) as usize;
        if cells / blocks.max(1) < 512 {
            let items = (SMALL_GRID_THREADS / 32) as usize;
            return (
                [1, 8.min(ext[1]).max(1), (items * w).min(ext[2]).max(1)],
                Some(SMALL_GRID_THREADS),
            );
        }
        return ([1, 16.min(ext[1]).max(1), (4 * w).min(ext[2]).max(1)], None);
    }
    let target = (cells / blocks.max(1)).clamp(2048, 16 * 1024);
    let tx = (target / 8).clamp(32, 1024).min(ext[2]).max(1);
    let mut rows = (target / tx).max(1);
    if rows > 8 {
        rows = rows.div_ceil(8) * 8;
    }
    let tile = if ext[0] == 1 {
        [1, rows.min(ext[1]), tx]
    } else {
        // 3D: the 7-point sweep marches a work item (32 columns × 2 rows)
        // through every plane of the tile, so a tile is as few rows tall
        // as still gives each of a block's 4 warps an item, and the rest
        // of its cells are planes (its z neighbours outside the tile are
        // two planes of loads however deep it is).
        if steps > 1 {
            // Two sweeps a sync (items of 28 columns × 2 rows): tiles one
            // item tall, the rest of their cells planes, twice S = 1's
            // cells on large grids (each tile loads 4 planes beyond its
            // own) and 4 planes on small ones. Measured (f32, µs a sweep,
            // one H200, session 15): 256³ 32 × 2 × 256 55.1, 16 × 4 × 256
            // 56.7, 8 × 8 × 256 60.9, 8 × 4 × 256 65.7; 512³ 32 × 2 × 512
            // 405, 64 × 2 × 512 420, 16 × 2 × 512 441; 128³ 8 × 2 × 128
            // 9.55, 8 × 4 × 128 10.1; 64³ 4 × 2 × 64 3.35, 8 × 2 × 64
            // 3.74, 8 × 4 × 64 5.43.
            let share = cells / blocks.max(1);
            let target = share.clamp(2048, 32 * 1024);
            let tx = (target / 8).clamp(32, 1024).min(ext[2]).max(1);
            let ty = Z_SWEEP_ROWS.min(ext[1]);
            let tz = if share < 2048 {
                4
            } else {
                (target / tx / ty).max(1)
            };
            return ([tz.min(ext[0]), ty, tx], None);
        }
        let chunks = tx.div_ceil(32);
        let ty = (Z_SWEEP_ROWS * (Z_SWEEP_WARPS.div_ceil(chunks))).min(ext[1]);
        let tz = (rows / ty).max(1).min(ext[0]);
        [tz, ty, tx]
    };
    (tile, None)
}

/// A PE's padded array (both buffers), as bytes of the device type: interior
/// and every ghost cell from the global functions (the reference's
/// convention: periodic axes wrap; outside a Dirichlet axis the Dirichlet
/// function), so iteration 0 reads correct halos everywhere.
fn initial_array(
    cfg: &JacobiConfig,
    d: &Decomposition,
    lay: &LocalLayout,
    q: usize,
    len: usize,
) -> Vec<u8> {
    let p = &cfg.problem;
    let origin = d.local_origin(q);
    let esize = cfg.precision.size();
    let mut one = vec![0u8; len * esize];
    let full = Box3::new([0; 3], lay.dims);
    for c in full.cells() {
        let mut g = [0i64; 3];
        let mut outside = false;
        for a in 0..3 {
            let n = p.dims[a] as i64;
            let mut v = origin[a] as i64 + c[a] as i64 - lay.halo[a] as i64;
            if p.boundary[a] == Boundary::Periodic {
                v = v.rem_euclid(n);
            }
            if v < 0 || v >= n {
                outside = true;
            }
            g[a] = v;
        }
        let v = if outside {
            (p.dirichlet)(g[0], g[1], g[2])
        } else {
            (p.init)(g[0], g[1], g[2])
        };
        let i = lay.index_of(c);
        match cfg.precision {
            Precision::F32 => one[i * 4..i * 4 + 4].copy_from_slice(&(v as f32).to_ne_bytes()),
            Precision::F64 => one[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes()),
        }
    }
    let mut both = one.clone();
    both.extend_from_slice(&one);
    both
}

/// Solves `cfg` on `rt` (builds the graph, runs it once).
pub fn solve(rt: &Runtime, cfg: JacobiConfig) -> Result<JacobiRun> {
    JacobiSolver::new(rt, cfg)?.run()
}

/// Emulator bodies of the Jacobi kinds: the same arithmetic as
/// `jacobi_kernels.cu`, on the emulator's host-memory symmetric heaps.
///
/// Every access goes through raw pointers into the symmetric heap. SAFETY
/// (for every `unsafe` below): 1. the addresses come from the solver's own
/// arguments, built from `SymBuffer::addr` of buffers sized for every index
/// used (the padded layouts, `4 × tiles` partials, `4 × pes` slots, the
/// norms), and the heaps outlive the run; 2. the graph's edges order every
/// write before every read or overwrite of the same cells (module docs:
/// tiles after their neighbours' previous instance, pulses after the tiles
/// they read and before the tiles that read their ghosts, the WAR edges,
/// the check's slot indexing), so no two bodies touch the same cell
/// concurrently unless both only read it.
mod cpu {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::{CheckArgs, PulseArgs, TileArgs};
    use crate::graph::CpuCtx;

    fn is_check(n: u32, every: u32, iterations: u32) -> bool {
        every != 0 && ((n + 1) % every == 0 || n + 1 == iterations)
    }

    /// The word check_local's wait names in a timeout (`wait_index`).
    const ARRIVALS_WORD: u32 = 0xA7;

    /// The arrival counter of check slot `n % 4`.
    fn arrivals<'a>(addr: u64, n: u32) -> &'a AtomicU32 {
        // SAFETY: module docs (four 4-byte symmetric words of this PE,
        // aligned at the heap's 256 bytes, alive for the run); only atomics
        // touch them during a run.
        unsafe { &*(addr as *const AtomicU32).add((n % 4) as usize) }
    }

    trait Real:
        Copy
        + std::ops::Add<Output = Self>
        + std::ops::Mul<Output = Self>
        + std::ops::Div<Output = Self>
    {
        fn c(v: f64) -> Self;
        fn f(self) -> f64;
    }
    impl Real for f32 {
        fn c(v: f64) -> f32 {
            v as f32
        }
        fn f(self) -> f64 {
            self as f64
        }
    }
    impl Real for f64 {
        fn c(v: f64) -> f64 {
            v
        }
        fn f(self) -> f64 {
            self
        }
    }

    /// The stencil at flat index `i` (same association order as the CUDA code).
    ///
    /// # Safety
    /// Every neighbour of `i` within the stencil is inside the buffer `p`.
    unsafe fn stencil<T: Real>(p: *const T, i: isize, sy: isize, sz: isize, kind: u32) -> T {
        // SAFETY: the caller guarantees every offset used is in bounds.
        let r = |o: isize| unsafe { *p.offset(i + o) };
        match kind {
            5 => T::c(0.25) * ((r(-sy) + r(sy)) + (r(-1) + r(1))),
            9 => {
                let faces = (r(-sy) + r(sy)) + (r(-1) + r(1));
                let diag = (r(-sy - 1) + r(-sy + 1)) + (r(sy - 1) + r(sy + 1));
                (T::c(4.0) * faces + diag) / T::c(20.0)
            }
            7 => ((r(-sz) + r(sz)) + (r(-sy) + r(sy)) + (r(-1) + r(1))) / T::c(6.0),
            _ => {
                let faces = (r(-sz) + r(sz)) + (r(-sy) + r(sy)) + (r(-1) + r(1));
                let mut edges = T::c(0.0);
                let mut corners = T::c(0.0);
                for dz in [-sz, sz] {
                    edges = edges + ((r(dz - sy) + r(dz + sy)) + (r(dz - 1) + r(dz + 1)));
                }
                edges = edges + ((r(-sy - 1) + r(-sy + 1)) + (r(sy - 1) + r(sy + 1)));
                for dz in [-sz, sz] {
                    corners = corners
                        + ((r(dz - sy - 1) + r(dz - sy + 1)) + (r(dz + sy - 1) + r(dz + sy + 1)));
                }
                (T::c(4.0) * faces + T::c(2.0) * edges + corners) / T::c(56.0)
            }
        }
    }

    /// Temporal blocking (`steps` > 1: the 2D 5-point stencil, or the 3D
    /// 7-point one with 2 sweeps): `steps` sweeps of the tile grown by
    /// `steps` on its active axes (z only in 3D), read once from the input
    /// buffer, on a copy (the GPU bodies' algorithm, cell by cell the same
    /// formulas), then the tile written to the output buffer. Cells outside
    /// `[ulo, uhi)` keep their values. The squared update of the last sweep
    /// is summed over the tile in the order the one-sweep body sums it.
    fn tile_steps<T: Real>(ctx: &CpuCtx<'_>, a: &TileArgs, inp: *const T, out: *mut T) {
        let n = ctx.iteration;
        let s = a.steps as isize;
        let check = is_check(n, a.check_every, a.iterations);
        let three_d = a.stencil == 7;
        let (sy, sz) = (a.sy as isize, a.sz as isize);
        // Growth per axis (z, y, x).
        let g = [if three_d { s } else { 0 }, s, s];
        let lo = [0, 1, 2].map(|i| a.lo[i] as isize - g[i]);
        let hi = [0, 1, 2].map(|i| a.hi[i] as isize + g[i]);
        let (d, h, w) = (
            (hi[0] - lo[0]) as usize,
            (hi[1] - lo[1]) as usize,
            (hi[2] - lo[2]) as usize,
        );
        let at = |z: isize, y: isize, x: isize| {
            (((z - lo[0]) as usize) * h + (y - lo[1]) as usize) * w + (x - lo[2]) as usize
        };
        let mut cur: Vec<T> = Vec::with_capacity(d * h * w);
        for z in lo[0]..hi[0] {
            for y in lo[1]..hi[1] {
                for x in lo[2]..hi[2] {
                    // SAFETY: the tile grown by `steps` lies in the padded
                    // array (ghost layers are `steps` deep on the active
                    // axes, and temporal blocking needs every axis of the
                    // stencil active).
                    cur.push(unsafe { *inp.offset(z * sz + y * sy + x) });
                }
            }
        }
        let mut next = cur.clone();
        // Cells outside [ulo, uhi) keep their values: the ranges below are
        // clipped to it.
        let u = |i: usize, from: isize, to: isize| {
            from.max(a.ulo[i] as isize)..to.min(a.uhi[i] as isize)
        };
        let mut acc = 0.0f64;
        for k in 1..=s {
            let r = s - k;
            next.copy_from_slice(&cur);
            let zr = if three_d { r } else { 0 };
            for z in u(0, a.lo[0] as isize - zr, a.hi[0] as isize + zr) {
                for y in u(1, a.lo[1] as isize - r, a.hi[1] as isize + r) {
                    for x in u(2, a.lo[2] as isize - r, a.hi[2] as isize + r) {
                        let c = |dz: isize, dy: isize, dx: isize| cur[at(z + dz, y + dy, x + dx)];
                        let v = if three_d {
                            ((c(-1, 0, 0) + c(1, 0, 0))
                                + (c(0, -1, 0) + c(0, 1, 0))
                                + (c(0, 0, -1) + c(0, 0, 1)))
                                / T::c(6.0)
                        } else {
                            T::c(0.25) * ((c(0, -1, 0) + c(0, 1, 0)) + (c(0, 0, -1) + c(0, 0, 1)))
                        };
                        if k == s && check {
                            let d = v.f() - c(0, 0, 0).f();
                            acc += d * d;
                        }
                        next[at(z, y, x)] = v;
                    }
                }
            }
            std::mem::swap(&mut cur, &mut next);
        }
        for z in a.lo[0] as isize..a.hi[0] as isize {
            for y in a.lo[1] as isize..a.hi[1] as isize {
                for x in a.lo[2] as isize..a.hi[2] as isize {
                    // SAFETY: the tile lies in the interior (module docs).
                    unsafe { *out.offset(z * sz + y * sy + x) = cur[at(z, y, x)] };
                }
            }
        }
        if check {
            // SAFETY: partials holds 4 × tiles doubles (module docs).
            unsafe {
                *(a.partials as *mut f64)
                    .add((n % 4) as usize * a.tiles as usize + a.tile as usize) = acc
            };
            // Release: the partial before the arrival check_local acquires.
            arrivals(a.arrivals, n).fetch_add(1, Ordering::Release);
        }
    }

    fn tile_t<T: Real>(ctx: &CpuCtx<'_>, a: &TileArgs) {
        let n = ctx.iteration;
        let base = a.a as *mut T;
        // SAFETY: see the module docs (buffers of `2 × len` elements).
        let (inp, out) = unsafe {
            (
                base.add((n % 2) as usize * a.len as usize),
                base.add(((n + 1) % 2) as usize * a.len as usize),
            )
        };
        if a.steps > 1 {
            return tile_steps::<T>(ctx, a, inp, out);
        }
        let check = is_check(n, a.check_every, a.iterations);
        let (sy, sz) = (a.sy as isize, a.sz as isize);
        let mut acc = 0.0f64;
        for z in a.lo[0]..a.hi[0] {
            for y in a.lo[1]..a.hi[1] {
                for x in a.lo[2]..a.hi[2] {
                    let i = z as isize * sz + y as isize * sy + x as isize;
                    // SAFETY: the tile lies in the interior, so every stencil
                    // neighbour is in the padded array (module docs).
                    unsafe {
                        let v = stencil::<T>(inp, i, sy, sz, a.stencil);
                        if check {
                            let d = v.f() - (*inp.offset(i)).f();
                            acc += d * d;
                        }
                        *out.offset(i) = v;
                    }
                }
            }
        }
        if check {
            // SAFETY: partials holds 4 × tiles doubles (module docs).
            unsafe {
                *(a.partials as *mut f64)
                    .add((n % 4) as usize * a.tiles as usize + a.tile as usize) = acc
            };
            // Release: the partial before the arrival check_local acquires.
            arrivals(a.arrivals, n).fetch_add(1, Ordering::Release);
        }
    }

    pub(super) fn tile(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: TileArgs = ctx.args();
        if a.f64 != 0 {
            tile_t::<f64>(ctx, &a)
        } else {
            tile_t::<f32>(ctx, &a)
        }
        Ok(())
    }

    fn pulse_t<T: Copy>(ctx: &CpuCtx<'_>, a: &PulseArgs) {
        let par = ((ctx.iteration + 1) % 2) as usize * a.len as usize;
        let src = a.a as *const T;
        let dst = ctx.peer_addr(a.a, a.to_pe) as *mut T;
        for z in 0..a.shape[0] {
            for y in 0..a.shape[1] {
                for x in 0..a.shape[2] {
                    let si = (a.lo[0] + z) as usize * a.sz as usize
                        + (a.lo[1] + y) as usize * a.sy as usize
                        + (a.lo[2] + x) as usize;
                    let di = (a.rlo[0] + z) as usize * a.rsz as usize
                        + (a.rlo[1] + y) as usize * a.rsy as usize
                        + (a.rlo[2] + x) as usize;
                    // SAFETY: both boxes lie in their PE's padded array of
                    // buffer `par` (module docs).
                    unsafe { *dst.add(par + di) = *src.add(par + si) };
                }
            }
        }
    }

    pub(super) fn pulse(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: PulseArgs = ctx.args();
        if a.f64 != 0 {
            pulse_t::<f64>(ctx, &a)
        } else {
            pulse_t::<f32>(ctx, &a)
        }
        Ok(())
    }

    pub(super) fn check_local(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: CheckArgs = ctx.args();
        let n = ctx.iteration;
        if !is_check(n, a.check_every, a.iterations) {
            return Ok(());
        }
        // Every tile's partial of this check (acquire), on the slot's own
        // counter: a tile may finish check n + 1 before another finishes
        // n, so a running total could reach n's count without it.
        let count = arrivals(a.arrivals, n);
        ctx.wait_geq(count, a.tiles, ARRIVALS_WORD)?;
        let part = a.partials as *const f64;
        let mut s = 0.0;
        for t in 0..a.tiles as usize {
            // SAFETY: module docs (partials of this PE).
            s += unsafe { *part.add((n % 4) as usize * a.tiles as usize + t) };
        }
        // The slot's next arrivals (tiles at n + 4) come after this task,
        // through the tiles' distance-2 wait for check_global at n + 2.
        count.store(0, Ordering::Relaxed);
        for pe in 0..a.pes {
            let slots = ctx.peer_addr(a.slots, pe) as *mut f64;
            // SAFETY: module docs (every PE's slot array, 4 × pes doubles).
            unsafe { *slots.add((n % 4) as usize * a.pes as usize + ctx.pe as usize) = s };
        }
        Ok(())
    }

    pub(super) fn check_global(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: CheckArgs = ctx.args();
        let n = ctx.iteration;
        if !is_check(n, a.check_every, a.iterations) {
            return Ok(());
        }
        let slots = a.slots as *const f64;
        let mut s = 0.0;
        for pe in 0..a.pes as usize {
            // SAFETY: module docs.
            s += unsafe { *slots.add((n % 4) as usize * a.pes as usize + pe) };
        }
        let norm = s.sqrt();
        // SAFETY: module docs (norms of this PE, one per check).
        unsafe { *(a.norms as *mut f64).add((n / a.check_every) as usize) = norm };
        if a.flags & 2 != 0 && !norm.is_finite() {
            // The emulator's NonFinite: a failing body (the device records
            // Error::NonFinite with the iteration as the index).
            return Err(NON_FINITE);
        }
        if a.flags & 1 != 0 && norm <= a.tol {
            ctx.finish_at(n + a.stop_slack)?;
        }
        Ok(())
    }

    /// Failure code of a non-finite norm on the emulator.
    pub(super) const NON_FINITE: u32 = 0x4E614E;
}

/// The code the emulator's check fails with when a checked norm is not
/// finite; [`JacobiSolver::run`] reports it as [`Error::NonFinite`], as on
/// the GPU.
pub const NON_FINITE_CODE: u32 = cpu::NON_FINITE;

/// "s" unless `n` is 1.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::{default_shape, default_tile, split_box, Box3};

    /// The default PE grid: slabs along the axis of least face when they
    /// are thick enough, else the least-halo split.
    #[test]
    fn default_grids_are_slabs_when_thick_enough() {
        use super::{default_decomposition as dd, JacobiProblem, Stencil};
        let grid = |dims, stencil, pes, steps| {
            dd(&JacobiProblem::new(dims, stencil), pes, steps)
                .unwrap()
                .pes()
        };
        assert_eq!(grid([256, 256, 256], Stencil::SevenPoint, 4, 2), [4, 1, 1]);
        assert_eq!(grid([1, 1024, 1024], Stencil::FivePoint, 4, 4), [1, 4, 1]);
        // The axis of least face, not the slowest: 64 planes of 1024².
        assert_eq!(grid([64, 1024, 1024], Stencil::SevenPoint, 4, 1), [1, 4, 1]);
        // A wide, short 2D grid is cut across its width.
        assert_eq!(grid([1, 32, 4096], Stencil::FivePoint, 4, 1), [1, 1, 4]);
        // Too thin for slabs (8 rows a PE): the least-halo split.
        assert_eq!(grid([1, 64, 64], Stencil::FivePoint, 8, 1), [1, 4, 2]);
        assert_eq!(grid([6, 6, 6], Stencil::SevenPoint, 4, 2), [2, 2, 1]);
        assert_eq!(grid([1, 64, 64], Stencil::FivePoint, 1, 1), [1, 1, 1]);
    }

    /// Virtual PEs get a comm block per chunk of their largest pulse, 1 to
    /// 16: the shapes measured on the H200 (session 17).
    #[test]
    fn virtual_pes_get_a_comm_block_per_chunk_of_their_largest_pulse() {
        use super::{comm_blocks_for_virtual_pes as cb, JacobiConfig, JacobiProblem, Stencil};
        let cfg = |dims: [usize; 3], stencil, steps| JacobiConfig {
            steps_per_sync: steps,
            ..JacobiConfig::new(JacobiProblem::new(dims, stencil), 4)
        };
        let d3 = cfg([256, 256, 256], Stencil::SevenPoint, 2);
        assert_eq!(cb(&d3, 2), 16); // 256² × 2 cells a face: capped
        assert_eq!(cb(&d3, 1), 1);
        let d2 = |n, steps| cfg([1, n, n], Stencil::FivePoint, steps);
        assert_eq!(cb(&d2(4096, 4), 4), 16); // slabs: 4096 × 4 cells
        assert_eq!(cb(&d2(1024, 4), 4), 4); // slabs: 1024 × 4
        let grid = JacobiConfig {
            pe_grid: Some([1, 2, 2]),
            ..d2(4096, 4)
        };
        assert_eq!(cb(&grid, 4), 8); // 2 × 2 PEs: 2048 × 4 cells
        assert_eq!(cb(&d2(256, 1), 2), 1); // a 256-cell row
                                           // A small chunk size splits more, still capped.
        let fine = JacobiConfig {
            pulse_chunk_cells: 64,
            ..d2(1024, 4)
        };
        assert_eq!(cb(&fine, 4), 16);
    }

    /// A pulse box splits into contiguous chunks along its longest axis
    /// that cover it exactly, each at least the minimum, at most `parts`.
    #[test]
    fn pulse_boxes_split_into_chunks_that_cover_them() {
        let row = Box3::new([3, 1, 1], [4, 2, 4097]);
        let cases = [
            (row, 4, 1024, 4), // a 4096-cell halo row over 4 comm blocks
            (row, 8, 1024, 4), // never below the minimum chunk
            (row, 1, 1024, 1), // one comm block: whole
            (row, 4, 3000, 1), // smaller than two chunks: whole
            (Box3::new([1, 1, 1], [2, 257, 257]), 3, 1024, 3), // a 3D plane
            (Box3::new([0, 0, 0], [1, 3, 1]), 8, 1, 3), // at most one a cell row
            // 21 cells, at least 10 a chunk: a 3 + 4 column split would give 9.
            (Box3::new([0, 0, 0], [1, 3, 7]), 2, 10, 1),
        ];
        for (b, parts, min, want) in cases {
            let chunks = split_box(&b, parts, min);
            assert_eq!(chunks.len(), want, "{b:?} into {parts} of ≥ {min}");
            assert_eq!(chunks.iter().map(Box3::len).sum::<usize>(), b.len());
            for c in &chunks {
                assert!(chunks.len() == 1 || c.len() >= min, "{c:?}");
                for a in 0..3 {
                    assert!(c.lo[a] >= b.lo[a] && c.hi[a] <= b.hi[a] && c.lo[a] < c.hi[a]);
                }
            }
            if b.shape() == [1, 256, 256] {
                // A tie: split along y, so every chunk keeps whole x rows.
                assert!(chunks.iter().all(|c| c.shape()[2] == 256), "{chunks:?}");
            }
            for w in chunks.windows(2) {
                let a = (0..3)
                    .find(|&a| w[0].hi[a] != w[0].lo[a] + b.shape()[a])
                    .unwrap_or(2);
                assert_eq!(w[0].hi[a], w[1].lo[a], "chunks are contiguous and in order");
            }
        }
    }

    /// The default tile shapes are the ones the H200 sweep found fastest
    /// (docs/performance.md, session 4), for ~1000 compute blocks.
    #[test]
    fn default_tiles_follow_the_measured_shapes() {
        let blocks = super::TILE_BLOCKS;
        assert_eq!(default_tile([1, 1024, 1024], blocks, 1), [1, 8, 256]);
        // 4096² / 1055 blocks is just under 16 × 1024 cells (15 rows);
        // rounded up to the 16 rows (and 64 for 256³) the sweep timed.
        assert_eq!(default_tile([1, 4096, 4096], blocks, 1), [1, 16, 1024]);
        assert_eq!(default_tile([1, 16384, 16384], blocks, 1), [1, 16, 1024]);
        // 3D: 2-row items, one a warp at least, the rest planes.
        assert_eq!(default_tile([256, 256, 256], blocks, 1), [32, 2, 256]);
        assert_eq!(default_tile([64, 64, 64], blocks, 1), [8, 4, 64]);
        assert_eq!(default_tile([128, 128, 128], blocks, 1), [8, 2, 128]);
        assert_eq!(default_tile([512, 512, 512], blocks, 1), [16, 2, 512]);
        assert_eq!(default_tile([256, 256, 256], blocks, 2), [32, 2, 256]);
        assert_eq!(default_tile([512, 512, 512], blocks, 2), [32, 2, 512]);
        assert_eq!(default_tile([128, 128, 128], blocks, 2), [8, 2, 128]);
        assert_eq!(default_tile([64, 64, 64], blocks, 2), [4, 2, 64]);
        // Temporal blocking on small grids: whole S-step work items
        // (32 − 2S wide, 8 rows), four or eight of them.
        assert_eq!(default_tile([1, 256, 256], blocks, 4), [1, 8, 192]);
        assert_eq!(default_shape([1, 256, 256], blocks, 4).1, Some(256));
        assert_eq!(default_shape([1, 1024, 1024], blocks, 4).1, None);
        assert_eq!(default_shape([1, 256, 256], blocks, 1).1, None);
        assert_eq!(default_tile([1, 1024, 1024], blocks, 4), [1, 16, 96]);
        assert_eq!(default_tile([1, 1024, 1024], blocks, 2), [1, 16, 112]);
        assert_eq!(default_tile([1, 4096, 4096], blocks, 4), [1, 16, 1024]);
    }

    /// Small and odd grids: a tile never exceeds the grid, never is empty.
    #[test]
    fn default_tiles_fit_small_and_odd_grids() {
        for ext in [
            [1, 1, 1],
            [1, 7, 5],
            [1, 256, 256],
            [3, 5, 40],
            [16, 14, 12],
            [1, 3, 5000],
        ] {
            for (blocks, steps) in [1, 4, 1055]
                .into_iter()
                .flat_map(|b| [(b, 1), (b, 2), (b, 4)])
            {
                let t = default_tile(ext, blocks, steps);
                for a in 0..3 {
                    assert!(
                        t[a] >= 1 && t[a] <= ext[a],
                        "{ext:?} on {blocks} blocks: {t:?}"
                    );
                }
            }
        }
    }
}
