//! CG and Jacobi-preconditioned CG as a CPU-free task graph: SpMV tiles,
//! vector tiles, halo gathers and in-kernel allreduces, one CG iteration
//! per graph iteration, stopping in the kernel at the same iteration on
//! every PE. Built only on the public API, like [`crate::solvers::jacobi`].
//!
//! # Distribution
//!
//! Rows are split over the `P` PEs by [`partition_rows`]; [`HaloPlan`] gives
//! each PE its local matrix over `[owned | ghosts]` columns and the send
//! lists; the SpMV reads that matrix packed ([`super::compact`], 4 bytes a
//! nonzero) when every PE's fits — its rows as patterns, a byte a row, when
//! every PE's take at most 256 distinct ones — as plain CSR otherwise. The
//! vector the
//! SpMV multiplies (`p` for Standard, `z = M⁻¹r` for
//! single-reduction; `M = I` without preconditioner) lives in a symmetric
//! buffer `v` of two halves (`v[par][0..L]`, `L` = the largest
//! `n_local + n_ghost`), each half holding owned entries then ghosts. A PE's
//! rows are split into *tiles* of contiguous rows (balanced by nonzeros);
//! every tile owns three kinds of work on its rows, pinned to one compute
//! slot (round-robin over [`Runtime::blocks_per_pe`]).
//!
//! # Standard (two allreduces per iteration), iteration `n`
//!
//! 1. `cg_spmv` tile: `q = A p_n` from `v[n % 2]`; partial `Σ p q`.
//! 2. allreduce 1 → `pᵀAp`; its global task (`cg_reduce`) checks it is
//!    positive and finite and stores `α_n = ρ_n / pᵀAp` in `scalars`.
//! 3. `cg_update` tile: `x += α p`, `r −= α q`, `z = M⁻¹ r`; partials
//!    `Σ r z` (and `Σ r r` with a preconditioner).
//! 4. allreduce 2 → `ρ_{n+1}`, `‖r‖²`; `cg_reduce` stops the run when
//!    `‖r‖/‖b‖ ≤ tol` (`finish_at(n + 1)`), else stores `β_n`, `ρ_{n+1}`.
//! 5. `cg_direction` tile: `p_{n+1} = z + β p_n` into `v[(n + 1) % 2]`.
//! 6. `cg_gather` (comm, on the owner; each send list in up to one chunk
//!    per comm block, of at least [`GATHER_CHUNK_ENTRIES`], pinned in turn
//!    to the comm slots, not the reduce's when there are 3 or more): the chunk's entries of `v[(n + 1) % 2]`
//!    stored into the receiver's ghost region of its `v[(n + 1) % 2]`
//!    (staged and put with NVSHMEM when the receiver is reachable only so);
//!    the receiver's SpMV tiles that read those ghosts wait for it
//!    (distance 1, cross-PE: a signal).
//!
//! With the direction fused ([`CgConfig::direction`]; chosen by default
//! for problems whose vectors fit the GPU's L2, see [`DirectionForm`]),
//! there is no step 5: the SpMV of `n + 1` forms each owned entry of
//! `p_{n+1}` it reads as `z + β_n p_n` (`p_n` in `v[n % 2]`), waiting for
//! the reduce of step 4 (distance 1) instead of direction tiles; the update
//! of `n + 1` forms its rows' `p_{n+1}` the same way before it overwrites
//! `z`, and stores them into `v[(n + 1) % 2]`; a gather of `n` sends
//! `z + β_n p_n` of its entries, after the reduce of step 4 (and before the
//! update of `n + 1`, which overwrites `z`: an edge of distance 1 to the
//! tiles it reads). Every place evaluates the same expression (an `fma` on
//! the GPU), so the results are bitwise those of the direction tiles; an
//! iteration saves one pass over `z` and `p` and one hand-off. Iteration 0
//! reads `p₀` from `v[0]` (written on the host).
//!
//! Lean updates ([`CgConfig::lean_update`], the default with the direction
//! fused): the SpMV of `n` (after iteration 0) stores its rows' `p_n` into
//! `v[n % 2]` and applies the previous step, `x += α_{n−1} p_{n−1}`, from
//! the row's `p_{n−1}` it loads anyway; the update of `n` then reads `r`
//! and `q` and writes `r` (and `z`) only. The step of the last iteration
//! `k − 1` is applied on the host after the run, from `v[(k − 1) % 2]`
//! and `α_{k−1}` (an `fma`, as on the device): bitwise the results of full
//! updates. With `x`'s step apart ([`CgConfig::x_step_apart`], by default
//! where the vectors fit in L2) the same `fma` runs in a task of its own,
//! `cg_xstep`, pinned on the SpMV tile's block after it (edges SpMV →
//! x step → update): it overlaps the reduce that follows the SpMV, and it
//! reads `p_{n−1}`'s half of `v` before the tile's SpMV of `n + 1`
//! overwrites it (only that tile writes its rows there).
//!
//! # Single reduction (Chronopoulos–Gear), iteration `n`
//!
//! 1. `cg_axpy` tile (with `α_n`, `β_n` of the previous iteration's reduce):
//!    `p = z + β p`, `s = w + β s`, `x += α p`, `r −= α s`,
//!    `z_{n+1} = M⁻¹ r` into `v[(n + 1) % 2]`.
//! 2. `cg_gather`: ghosts of `z_{n+1}` as above (distance 0 to the SpMV).
//! 3. `cg_spmv` tile: `w = A z_{n+1}`; partials `γ = Σ r z`, `δ = Σ w z`
//!    (and `Σ r r` with a preconditioner) — one fused allreduce.
//! 4. `cg_reduce`: stop test on `‖r‖`; else `β = γ/γ_prev`,
//!    `pᵀAp = δ − β γ / α_prev` (checked positive), `α = γ / pᵀAp`, stored
//!    for iteration `n + 1`.
//!
//! With one copy of `z` ([`CgConfig::single_buffer`], the default) `v`
//! has one half: the axpy tile of `n` reads `z_n` and writes `z_{n+1}` in
//! place (the bodies' `vlen` is 0, so every parity offset is 0), and
//! without a preconditioner `r` is that half's owned part (`z = r`; the
//! tile stores `r_{n+1}` once). Five vectors of `maxn` entries (`v`, `w`,
//! `x`, `p`, `s`) instead of seven. With `x`'s step apart
//! ([`CgConfig::x_step_apart`]; by default when those vectors fit in L2)
//! the axpy tiles leave `x` alone and `cg_xstep`, pinned after each SpMV
//! tile, applies `x += α_n p_n` while the reduce sums (edges SpMV → x step
//! → axpy of `n + 1`, which rewrites `p`).
//!
//! With the updates merged ([`CgConfig::merge_updates`]; not the default)
//! there is no step 1: `r`, `w` and `s` are kept by parity (`r_n`, `w_n`,
//! `s_n` in the halves of parity `n`), and the SpMV tile of `n`
//! (`cg_spmv_merged`) forms each owned entry of `z_{n+1}` it multiplies
//! from `r_n`, `w_n` and `s_{n−1}` (`z = M⁻¹(r − α (w + β s))`), applies
//! step 1 to its own rows (`p`, `s_n`, `x`, `r_{n+1}`, and `w_{n+1}` its
//! product) and sums the partials; the gathers of `n`
//! (`cg_gather_merged`) send `z_{n+1}` formed the same way, after the
//! reduce of `n − 1`. Every place evaluates the same expressions (`fma`s
//! on the GPU), so the iterates are bitwise those of the axpy tiles; an
//! iteration has one phase of tiles and one hand-off fewer.
//!
//! The initial state (`r₀ = b − A x₀`, `z₀`, `p₀`/`w₀ = A z₀` and the first
//! scalars) is computed on the host in f64 before the launch, like Jacobi's
//! initial arrays; every iteration runs in the kernel.
//!
//! # Ordering (why every read sees the right data)
//!
//! Data edges: an SpMV tile waits for the tiles that produce the owned
//! entries of `v` it reads (found from its columns; always itself) and for
//! the gathers that fill its ghosts; a vector tile waits for its PE's
//! reduce; a gather waits for the tiles owning its send entries; every
//! tile is a contributor of the allreduce that follows it
//! ([`crate::solvers::allreduce`], whose own edges make its slots safe).
//! Reuse (write-after-read), with `v` double-buffered by parity:
//! * `v[(n + 1) % 2]` owned part is rewritten at `n` by tiles that wait (via
//!   the reduce of iteration `n` or `n − 1`) for every tile of every PE at
//!   `n` / `n − 1`, hence for the SpMV of `n − 1` that read it; the owner's
//!   gathers of `n − 2` that read it are ordered by an explicit distance-2
//!   edge gather → producing tile. Fused direction: the update of `n`
//!   rewrites `v[n % 2]`'s owned part after the first reduce of `n`, which
//!   follows every PE's SpMV of `n` — the SpMVs of `n − 1` that read it as
//!   `p_{n−2}` came before those; the gathers of `n − 2` read it before
//!   the update of `n − 1` (distance-1 edge gather → update tile), and
//!   that one comes before the update of `n`. Lean updates: the SpMV of
//!   `n` rewrites it instead, after the second reduce of `n − 1`, which
//!   follows every update of `n − 1`, hence every SpMV of `n − 1` and
//!   every gather of `n − 2`; no SpMV of `n` reads that half's owned
//!   entries (they read `p_{n−1}` and `z` for owned columns), and `x` is
//!   touched by its tile's SpMV only. The same edge keeps `z`
//!   (read by the gather of `n`) until the update of `n + 1`; the SpMVs of
//!   `n + 1` read `z` before the first reduce of `n + 1`.
//! * merged single reduction: the tile of `n` writes the halves of `r`, `w`
//!   of parity `n + 1` and of `s` of parity `n`, which hold `r_{n−1}`,
//!   `w_{n−1}`, `s_{n−2}`: read by the tiles of `n − 1` (before the reduce
//!   of `n − 1`, which every tile of `n` waits for) and by the gathers of
//!   `n − 1` (an explicit distance-1 edge gather → the tiles owning its
//!   entries). What it reads (`r_n`, `w_n`, `s_{n−1}`, its neighbours'
//!   too) was written by the tiles of `n − 1`, before that reduce; `p` and
//!   `x` are its own rows'.
//! * separate single reduction with one copy of `z`: the axpy tile of
//!   `n + 1` overwrites its rows of `z_{n+1}` (and `r`, when it is `z`)
//!   after the reduce of `n`, which follows every PE's SpMV tiles of `n`,
//!   the only tiles that read it (the receivers' read their ghosts, a
//!   copy); the owner's gathers of `n`, which read it too, come before it
//!   by an explicit distance-1 edge gather → axpy tile (distance 2 with two
//!   halves). The receiver's ghosts are rewritten by gather `n + 1`, after
//!   that same reduce of the owner, which follows the receiver's SpMVs of
//!   `n` through the allreduce.
//! * the receiver's ghosts of `v[(n + 1) % 2]` are rewritten by gather `n`,
//!   which follows the owner's tiles at `n`, which follow the owner's reduce
//!   of `n` (or `n − 1`), which follows every PE's partials of that
//!   iteration — the receiver's SpMV of `n − 1` (Standard) / `n − 2` (SR)
//!   that read those ghosts came before them.
//! * `scalars` are indexed by parity: a value of iteration `n` is rewritten
//!   at `n + 2`, after every reader of `n` (same chain).
//! * local vectors (`x`, `r`, `q`/`w`, `z`, `p`, `s`) are only touched by the
//!   tasks of the tile that owns the rows, in graph order, and those tasks
//!   are ordered through the reduces.
//!
//! # Stopping
//!
//! The reduce that tests convergence runs on every PE with bitwise equal
//! sums, so every PE takes the same decision and calls `finish_at(n + 1)`;
//! every task's instance `n + 1` depends, through edges, on that reduce of
//! its PE (SpMV/axpy tiles at `n + 1` wait for a direction/reduce task of
//! `n`, everything else waits for them), so the limit is exact and the
//! iteration count is the same on every PE. `pᵀAp ≤ 0` or a non-finite
//! scalar fails the run ([`NOT_POSITIVE_DEFINITE`], [`NON_FINITE`]) after
//! recording the value, reported as [`CgError::NotPositiveDefinite`] /
//! [`CgError::NonFinite`] with the reference's 1-based iteration.
//!
//! A zero right-hand side returns `x = 0`, 0 iterations, residuals 0,
//! without a run (the reference's convention); so does an `x₀` that
//! already meets the tolerance (0 iterations, `x = x₀`), and
//! `max_iters == 0`.

use std::ops::Range;
use std::time::Duration;

use super::compact::{CompactCsr, RowPatterns, MAX_PATTERNS, MAX_VALUES};
use super::error::{CgError, PartitionError};
use super::halo::HaloPlan;
use super::partition::partition_rows;
use super::reference::CgVariant;
use super::Csr;
use crate::graph::{Graph, TaskId, TaskKind};
use crate::runtime::SymBuffer;
use crate::solvers::allreduce::{self, Allreduce, AllreduceArgs, AllreduceKinds};
use crate::status::RunReport;
use crate::{Error, Runtime};

/// The CUDA bodies of the CG kinds (they use the allreduce helpers of
/// [`allreduce::SOURCE`], registered before them).
pub const KERNELS: &str = include_str!("kernels.cu");

/// Failure code of a non-positive `pᵀAp` (`ctx.fail` / `Err` of the body).
pub const NOT_POSITIVE_DEFINITE: u32 = 0xC6_0001;
/// Failure code of a scalar that became NaN or ∞.
pub const NON_FINITE: u32 = 0xC6_0002;

/// Preconditioner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precond {
    /// None (`M = I`).
    #[default]
    None,
    /// Jacobi: `M = diag(A)`; needs a positive diagonal.
    Jacobi,
}

/// What to solve and how.
#[derive(Clone, Debug)]
pub struct CgConfig {
    /// Stop when the recursive `‖r‖/‖b‖ ≤ tol` (finite, ≥ 0).
    pub tol: f64,
    /// Most iterations (the graph runs at most this many).
    pub max_iters: u32,
    /// [`CgVariant::Standard`] or [`CgVariant::SingleReduction`];
    /// [`CgVariant::JacobiPreconditioned`] means Standard with
    /// [`Precond::Jacobi`].
    pub variant: CgVariant,
    /// Preconditioner (applies to both recurrences).
    pub precond: Precond,
    /// Right-hand side; default all ones.
    pub b: Option<Vec<f64>>,
    /// Initial guess; default zeros.
    pub x0: Option<Vec<f64>>,
    /// Rows per tile; default: the PE's rows split by nonzeros into
    /// `nnz / 2048` tiles, at most [`MAX_DEFAULT_TILES`]. The default
    /// depends on the matrix and the PE count only, never on the
    /// backend's block count, so the same matrix on P virtual PEs and on P
    /// GPUs (any model) gives bitwise the same `x`, and so do emulators
    /// with any thread count (the per-tile partials of the dot products
    /// are summed with one fixed shape over the tiles, the allreduce's lane
    /// tree, and the tiles are the same; within a tile the GPU and the CPU
    /// bodies sum in different orders).
    pub tile_rows: Option<usize>,
    /// Threads per row in the SpMV tiles (a power of two, 1..=32); default
    /// [`default_spmv_lanes`] of the tile's average nonzeros per row. Any
    /// value gives a correct product; the sums within a row follow the
    /// lanes, so results differ in the last bits between values (and are
    /// bitwise reproducible for one value).
    pub spmv_lanes: Option<u32>,
    /// On a run of one PE, each allreduce as one task that sums the tiles'
    /// partials and computes the scalars (default true); false: a local
    /// sum task and the reduce task, as on several PEs (for comparison).
    /// Bitwise the same results either way.
    pub fuse_single_pe_allreduce: bool,
    /// Standard recurrence: where the next direction `p = z + β p` is
    /// formed (default [`DirectionForm::Auto`]). Bitwise the same results
    /// either way (every place evaluates the same `fma`); no effect on the
    /// single-reduction recurrence.
    pub direction: DirectionForm,
    /// Keep the vectors (`x`, `r`, `v`, `q`/`w`, `p`, `s`, `z`) in L2 while
    /// the matrix streams through ([`crate::L2Persist`]; default true): on
    /// a run of one PE on a GPU, all of them when their span is at most
    /// [`L2_PERSIST_MAX_SHARE`] × the L2 the device can set aside, the most
    /// reused ones up to [`L2_PERSIST_HEAD_MAX_SHARE`] ×. Results are the
    /// same either way.
    pub l2_persist_vectors: bool,
    /// Give the SpMV the matrix in the packed form of [`super::compact`]
    /// (one `u32` a nonzero and `u32` row offsets, against 12 bytes a
    /// nonzero and `u64` row offsets) when every PE's rows fit it; default
    /// true. Exact: bitwise the same results either way.
    pub compact_matrix: bool,
    /// With [`CgConfig::compact_matrix`]: when every PE's rows take at
    /// most 256 distinct packed word sequences ([`RowPatterns`]: stencil
    /// matrices), give the SpMV a byte a row and the list of sequences
    /// instead of the row offsets and words; default true. Exact: bitwise
    /// the same results either way.
    pub row_patterns: bool,
    /// With the direction fused ([`CgConfig::direction`]): the SpMV tiles
    /// store their rows' `p_n` and apply `x`'s step of the previous
    /// iteration, `x += α_{n−1} p_{n−1}` (both from values they load
    /// anyway), so the update tiles read and write only `r` (and `z`) —
    /// 56 → 24 bytes a row in the phase that streams the vectors, moved
    /// into the SpMV, whose time is its loads' latency rather than bytes.
    /// The last iteration's step is applied on the host after the run.
    /// Default true. Exact: bitwise the same results either way (the same
    /// `fma`s in the same order).
    pub lean_update: bool,
    /// With [`CgConfig::lean_update`]: `x`'s step, `x += α_{n−1} p_{n−1}`,
    /// applied by a task of its own (`cg_xstep`, pinned after each SpMV
    /// tile on the same block) instead of in the SpMV's row loop, where the
    /// `fma` waited on the loads of `x` and `α` at the end of every row
    /// (ncu, 2D 1024²: ~6 % of all stall samples). The task runs while its
    /// PE's reduce sums the SpMV's partials, hidden behind that hand-off
    /// when its pass over `x` and `p_{n−1}` hits L2. `None` (the default):
    /// apart when the recurrence's vectors fit in the device's L2
    /// ([`X_STEP_APART_L2_BYTES_PER_ROW`]; always on the emulator);
    /// `Some(b)` forces it. Exact: bitwise the same results either way
    /// (the same `fma`). The separate single reduction takes the same
    /// task for its step `x += α_n p_n`, out of the axpy tiles (which run
    /// between the reduce and the SpMV, on the iteration's critical path),
    /// by default when its vectors fit in L2 (40 bytes a row with one copy
    /// of `z` and no preconditioner): 2D 1024² 36.1 → 33.9 µs an
    /// iteration, 64³ 17.4 → 16.6 on one H200.
    pub x_step_apart: Option<bool>,
    /// Single-reduction recurrence: the SpMV tiles apply the vector
    /// updates of the iteration (`p`, `s`, `x`, `r`) to their rows and
    /// form the entries of `z_{n+1}` they multiply where they read them,
    /// from `r_n`, `w_n` and `s_{n−1}` (kept by parity), instead of vector
    /// tiles that run first — one phase and one hand-off an iteration
    /// fewer, but ten vectors instead of five. Default false: measured on
    /// one H200 against the separate updates with one copy of `z`
    /// ([`CgConfig::single_buffer`]) and `x`'s step apart, µs an iteration
    /// (merged / separate): 2D 1024² 59.4 / 33.9, 3D 64³ 20.9 / 16.6, 128³
    /// 117.7 / 103.3, 32³ 13.6 / 13.7. Exact: bitwise the same results
    /// either way (the same `fma`s). No effect on the Standard recurrence.
    pub merge_updates: bool,
    /// Single-reduction recurrence with separate updates (not
    /// [`CgConfig::merge_updates`]): `z` lives in one copy of `v`, not two
    /// halves by parity, and without a preconditioner `r` is that copy
    /// (`z = r`) — five vectors instead of seven, 40 bytes a row instead
    /// of 56, so 2D 1024² fits in an H200's L2. Safe because every reader
    /// of `z_{n+1}` (the SpMV tiles and gathers of `n`) comes before the
    /// reduce of `n`, which every axpy tile of `n + 1`, the only writers,
    /// waits for (module docs, "Ordering"). Default true; false keeps the
    /// halves (for comparison). Exact: bitwise the same results either
    /// way.
    pub single_buffer: bool,
}

/// [`CgConfig::l2_persist_vectors`]: the longest span of vectors kept in
/// L2, as a multiple of the device's `max_persisting_l2`. Measured on one
/// H200 (37.5 MiB may be set aside): 2D 1024²'s 42 MB of vectors (1.07×)
/// 77.1 → 74.4 µs an iteration (76.4 → 72.2 in a first experiment), 64³'s
/// 10 MB 33.1 → 33.0, 32³ 24.6 → 24.1; 128³'s 84 MB (2.1×) 164.8 → 277.5
/// with a window: one much larger than the set-aside part evicts its own
/// lines.
pub const L2_PERSIST_MAX_SHARE: f64 = 1.1;

/// [`CgConfig::l2_persist_vectors`]: vectors spanning up to this multiple
/// of the device's `max_persisting_l2` (and more than
/// [`L2_PERSIST_MAX_SHARE`]) keep their head in L2 — the vectors are laid
/// out most reused first (`v`, `z`, `r`, `q`/`w`, `x`, `p`, `s`) — as much
/// as can be set aside; longer spans keep none. Measured on one H200, the
/// matrix packed (head / none, µs an iteration): Jacobi-preconditioned 2D
/// 1024² (1.33×) 73.2 / 82.3; single reduction 2D 1024² (1.51×) 78.7 /
/// 79.0; 128³ (2.24×) 141.9 / 138.5; single reduction 128³ (3.1×) 196.7 /
/// 156.7 (the set-aside part leaves the rest of the vectors too little
/// L2). With the rows as patterns (the matrix streams ~1 MB) a head
/// beyond it still loses (head / none): 128³ 120.1, 120.5 / 113.1, 111.9;
/// 2D 1448² (2.7×) 118.9, 119.4 / 106.8, 107.0; Jacobi-preconditioned
/// 128³ 147.9 / 134.6; single reduction 128³ 164.3 / 135.3 (single
/// reduction 2D 1024² 64.7, 65.3 / 66.0, 65.4: equal). The environment
/// variable `AUTARKY_L2_HEAD_MAX_SHARE` overrides it, for experiments.
pub const L2_PERSIST_HEAD_MAX_SHARE: f64 = 1.4;

/// The bytes of a `span` of vectors (most reused first) kept in L2 on a
/// device that can set aside `max_persisting` bytes: all of them up to
/// [`L2_PERSIST_MAX_SHARE`] × that, its head up to
/// [`L2_PERSIST_HEAD_MAX_SHARE`] ×, none beyond (or without a set-aside).
#[cfg(test)]
fn l2_window_bytes(span: usize, max_persisting: usize) -> usize {
    l2_window_bytes_with(span, max_persisting, L2_PERSIST_HEAD_MAX_SHARE)
}

/// [`l2_window_bytes`] with the head's limit `head_share`.
fn l2_window_bytes_with(span: usize, max_persisting: usize, head_share: f64) -> usize {
    if max_persisting == 0 {
        return 0;
    }
    let share = span as f64 / max_persisting as f64;
    if share <= L2_PERSIST_MAX_SHARE {
        span
    } else if share <= head_share {
        max_persisting
    } else {
        0
    }
}

/// Where the Standard recurrence forms its next direction `p = z + β p`.
///
/// Fused, it is formed where it is read — each owned entry the SpMV loads
/// is `z + β p_{n−1}`, the update forms and stores its rows', the gathers
/// send it — and an iteration has one phase (a pass over `z` and `p`, and
/// a hand-off) fewer, but the SpMV reads two vectors instead of one.
/// Measured on one H200 (60 MiB L2; µs an iteration, fused / separate):
/// 3D 48³ 27.4 / 29.0, 64³ 31.3 / 34.4, 80³ 53.9 / 54.8, 2D 512² 27.2 /
/// 29.2, 724² 45.2 / 48.1 — but 3D 96³ 79.9 / 77.5, 112³ 117.2 / 113.2,
/// 160³ 325.7 / 310.3, 2D 1024² 79.0 / 77.6 (ncu there: 11.5 MB more DRAM
/// reads an iteration fused: the separate phase's vectors were L2 hits),
/// 1448² 153.3 / 151.8; 2048² equal; 128³ 161.8 / 164.4 (the exception).
/// With the matrix packed ([`CgConfig::compact_matrix`]) it streams a third
/// of the bytes and the crossover moves up: 2D 724² 31.8 / 35.0, 1024²
/// 59.1–60.4 / 60.7–61.2, 96³ equal (57.0 / 56.8), 1448² 132.6 / 129.4,
/// 112³ 95.4 / 92.9, 160³ 266.3 / 253.9 (2048² 229.0 / 232.8 and 128³
/// 134.7 / 136.7 the exceptions). With the packed rows as patterns
/// ([`CgConfig::row_patterns`]) the matrix is a byte a row and fused won
/// or tied at every size measured: 2D 724² 28.5, 27.4 / 29.2, 29.2; 1024²
/// 46.2, 46.2 / 47.2, 48.0; 1448² 106.9, 107.2 / 107.5, 108.5; 3D 64³
/// 25.9, 26.2 / 27.2, 27.2; 96³ 41.6, 41.4 / 41.6, 41.4; 128³ 111.9,
/// 111.5 / 114.0, 114.9. With lean updates ([`CgConfig::lean_update`],
/// which need the fused form: the update phase then moves 24 bytes a row
/// instead of 56) and the rows as patterns, fused won by more and at every
/// size measured: 2D 1448² 96.1 / 108.1, 2048² 170.5 / 208.9, 4096² 694.0
/// / 802.7; 3D 160³ 196.5 / 217.4, 200³ 352.6 / 396.0, 256³ 649.9 /
/// 798.4. [`DirectionForm::Auto`] follows those splits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DirectionForm {
    /// Fused at every size with lean updates and the rows as patterns
    /// (measured up to 16.8 M rows). Otherwise fused while the rows on one
    /// GPU take at most 80 bytes a row of its L2 (≤ 786 432 rows on 60
    /// MiB: between the measured 524 176 rows, fused 6 % faster, and
    /// 884 736, 3 % slower), 48 with the matrix packed (≤ 1 310 720 rows:
    /// between 1 048 576, fused 2 % faster, and 1 404 928, 3 % slower), 24
    /// with its rows as patterns (≤ 2 621 440 rows: 2 097 152, fused 1–3 %
    /// faster, the largest measured), separate above; fused on the
    /// emulator.
    #[default]
    Auto,
    /// Formed where it is read (no direction tiles).
    Fused,
    /// `cg_direction` tiles of its own.
    Separate,
}

/// [`DirectionForm::Auto`]'s rows a GPU may hold for the fused form: L2
/// bytes / this, with the matrix in plain CSR.
pub const FUSED_DIRECTION_L2_BYTES_PER_ROW: usize = 80;

/// [`FUSED_DIRECTION_L2_BYTES_PER_ROW`] with the matrix packed
/// ([`CgConfig::compact_matrix`]).
pub const FUSED_DIRECTION_L2_BYTES_PER_ROW_PACKED: usize = 48;

/// [`FUSED_DIRECTION_L2_BYTES_PER_ROW`] with the packed rows as patterns
/// ([`CgConfig::row_patterns`]).
pub const FUSED_DIRECTION_L2_BYTES_PER_ROW_PATTERNS: usize = 24;

/// The form the SpMV reads the matrix in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixForm {
    /// CSR: 12 bytes a nonzero, `u64` row offsets.
    Plain,
    /// Packed ([`super::compact`]): 4 bytes a nonzero, `u32` row offsets.
    Packed,
    /// Packed rows as patterns ([`RowPatterns`]): a byte a row.
    Patterns,
}

impl DirectionForm {
    /// Whether the direction is fused for `rows` rows on each GPU of `rt`,
    /// the matrix in `form`, the updates lean if fused (`lean`,
    /// [`CgConfig::lean_update`]).
    pub fn fused_for(self, rt: &Runtime, rows: usize, form: MatrixForm, lean: bool) -> bool {
        self.fused_with_l2(rows, rt.device_props().map(|d| d.l2_bytes), form, lean)
    }

    /// The same for a GPU of `l2_bytes` of L2 (None: the emulator).
    pub fn fused_with_l2(
        self,
        rows: usize,
        l2_bytes: Option<usize>,
        form: MatrixForm,
        lean: bool,
    ) -> bool {
        if self == DirectionForm::Auto && lean && form == MatrixForm::Patterns {
            return true;
        }
        let per_row = match form {
            MatrixForm::Plain => FUSED_DIRECTION_L2_BYTES_PER_ROW,
            MatrixForm::Packed => FUSED_DIRECTION_L2_BYTES_PER_ROW_PACKED,
            MatrixForm::Patterns => FUSED_DIRECTION_L2_BYTES_PER_ROW_PATTERNS,
        };
        match self {
            DirectionForm::Fused => true,
            DirectionForm::Separate => false,
            DirectionForm::Auto => match l2_bytes {
                None => true,
                Some(l2) => rows.saturating_mul(per_row) <= l2,
            },
        }
    }
}

/// [`CgConfig::x_step_apart`]'s default: `x`'s step is a task of its own
/// when the GPU's rows times this (the lean Standard recurrence's vectors,
/// `r`, both halves of `v`, `q` and `x`, 8 bytes each) fit in its L2.
/// Measured on one H200 (session 25, µs an iteration, apart / in the
/// SpMV): 2D 1024² (42 MB) 36.2, 36.0 / 37.0, 36.6; 64³ 22.9, 23.5 / 23.9,
/// 24.1; but 128³ (84 MB) 104.3, 102.2 / 90.5, 90.4 — out of L2 the extra
/// pass costs DRAM time the reduce's shadow does not cover.
pub const X_STEP_APART_L2_BYTES_PER_ROW: usize = 40;

/// [`CgConfig::x_step_apart`]'s default for `rows` on one GPU with
/// `l2_bytes` of L2 (None: the emulator, apart).
pub fn x_step_apart_by_default(rows: usize, l2_bytes: Option<usize>) -> bool {
    match l2_bytes {
        None => true,
        Some(l2) => rows.saturating_mul(X_STEP_APART_L2_BYTES_PER_ROW) <= l2,
    }
}

/// Most tiles per PE by default ([`CgConfig::tile_rows`] unset): about one
/// per compute block of an H200 (1055 with the default block shape), so a
/// PE that owns a whole GPU runs about one tile per block, and a virtual PE
/// sharing a GPU runs several per block. A constant, not the runtime's
/// block count: the tiling (and with it every dot product's summation
/// order) must not depend on where the PEs run.
pub const MAX_DEFAULT_TILES: usize = 1024;

/// The SpMV tiles' threads per row for `avg` nonzeros per row: about one
/// per 8 nonzeros, as a power of two (1 for the 5- and 7-point Poisson
/// matrices; measured on the H200, 300 iterations, µs/iteration for 1 / 2 /
/// 4 lanes: 3D 128³ 200 / 212 / 264, 2D 1024² 117 / 125 / 145 — with more
/// lanes a tile walks more row groups one after another, and rows this
/// short give the extra lanes little to do).
pub fn default_spmv_lanes(avg: usize) -> u32 {
    (avg / 8).next_power_of_two().clamp(1, 32) as u32
}

impl CgConfig {
    /// Standard CG, no preconditioner, `b = 1`, `x₀ = 0`.
    pub fn new(tol: f64, max_iters: u32) -> CgConfig {
        CgConfig {
            tol,
            max_iters,
            variant: CgVariant::Standard,
            precond: Precond::None,
            b: None,
            x0: None,
            tile_rows: None,
            spmv_lanes: None,
            fuse_single_pe_allreduce: true,
            direction: DirectionForm::Auto,
            l2_persist_vectors: true,
            compact_matrix: true,
            row_patterns: true,
            lean_update: true,
            x_step_apart: None,
            merge_updates: false,
            single_buffer: true,
        }
    }
}

/// What a solve did.
#[derive(Clone, Debug)]
pub struct CgRun {
    /// The last iterate.
    pub x: Vec<f64>,
    /// CG iterations run (the same on every PE).
    pub iterations: u32,
    /// Recursive `‖r‖/‖b‖` at the end (what the kernel tested).
    pub rel_residual: f64,
    /// `‖b − A x‖/‖b‖`, recomputed on the host in f64.
    pub true_rel_residual: f64,
    /// Whether `rel_residual ≤ tol`.
    pub converged: bool,
    /// The runtime's report; `None` when no run was needed (zero rhs, `x₀`
    /// already converged, `max_iters == 0`).
    pub report: Option<RunReport>,
}

impl CgRun {
    /// Device (or emulator wall) time per iteration; zero without a run.
    pub fn time_per_iteration(&self) -> Duration {
        let Some(r) = &self.report else {
            return Duration::ZERO;
        };
        let ns = match (r.event_ms, r.device_ns) {
            (Some(ms), _) => (ms as f64 * 1e6) as u64,
            (None, Some(ns)) => ns,
            _ => r.wall.as_nanos() as u64,
        };
        Duration::from_nanos(ns / self.iterations.max(1) as u64)
    }
}

/// Why a graph CG solve failed.
#[derive(Debug, thiserror::Error)]
pub enum CgSolveError {
    /// Bad input, or a breakdown found during the iteration (`pᵀAp ≤ 0`: the
    /// matrix is not SPD; a NaN/∞ scalar), with the reference's 1-based
    /// iteration.
    #[error(transparent)]
    Cg(#[from] CgError),
    /// The rows cannot be split over the PEs.
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// A configuration value out of range.
    #[error("invalid CG configuration: {0}")]
    InvalidConfig(String),
    /// The runtime failed (allocation, launch, timeout, …).
    #[error(transparent)]
    Runtime(#[from] Error),
    /// The matrix is not symmetric (CG needs a symmetric positive definite
    /// matrix): [`Csr::check_symmetric`]'s error.
    #[error(transparent)]
    Matrix(#[from] super::MatrixError),
}

type Result<T> = std::result::Result<T, CgSolveError>;

// ---- arguments (mirrored in kernels.cu) -------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct SpmvArgs {
    row_ptr: u64,
    col: u64,
    val: u64,
    v: u64,
    y: u64,
    r: u64,
    partials: u64,
    vlen: u64,
    lo: u32,
    hi: u32,
    lanes: u32,
    tile: u32,
    tiles: u32,
    /// 0: Standard (reads `v[n % 2]`, partial `Σ v y`); 1: single reduction
    /// (reads `v[(n + 1) % 2]`, partials `Σ r v`, `Σ y v`, [`Σ r r`]);
    /// 2: Standard with the direction fused (after iteration 0, owned
    /// entries `z + β p_{n−1}` from `z` and `v[(n + 1) % 2]`, ghosts from
    /// `v[n % 2]`); 3: single reduction with the vector updates merged
    /// ([`CgConfig::merge_updates`]: the tile applies `cg_axpy`'s step to
    /// its rows and forms the owned entries of `z_{n+1}` it reads from `r`,
    /// `w` and `s` of iteration `n`; ghosts from `v[(n + 1) % 2]`).
    mode: u32,
    width: u32,
    /// Entries of `v` this PE owns (columns below it are owned, the rest
    /// ghosts).
    owned: u32,
    /// Mode 2: `z` (`r` without a preconditioner).
    z: u64,
    /// Mode 2: this PE's scalars (`β_{n−1}`).
    scalars: u64,
    /// 1: the matrix is packed ([`super::compact`]): `row_ptr` is `u32`,
    /// `col` the packed words, `val` the table of values; 2: packed rows as
    /// patterns ([`RowPatterns`]): `row_ptr` is a byte a row (its
    /// pattern), `col` the patterns' words, `pattern_ptr` their offsets,
    /// `val` the table; 0: plain CSR.
    compact: u32,
    /// Mode 2 and [`VecArgs::lean`]: this SpMV stores its rows' `p_n` into
    /// `v[n % 2]` and applies `x += α_{n−1} p_{n−1}` (after iteration 0).
    lean: u32,
    /// `compact == 2`: the patterns' offsets into their words (`u32`).
    pattern_ptr: u64,
    /// Lean and mode 3: `x`.
    x: u64,
    /// Mode 3: `p`, `s` (two halves), `1/diag` (with a preconditioner).
    p: u64,
    s: u64,
    dinv: u64,
    /// Mode 3: entries between the parity halves of `r`, `y` and `s`.
    stride: u64,
    /// Mode 3: Jacobi preconditioner.
    precond: u32,
    pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct VecArgs {
    x: u64,
    r: u64,
    y: u64,
    v: u64,
    p: u64,
    s: u64,
    z: u64,
    dinv: u64,
    scalars: u64,
    partials: u64,
    vlen: u64,
    lo: u32,
    hi: u32,
    tile: u32,
    tiles: u32,
    precond: u32,
    width: u32,
    /// `cg_update` forms `p_n = z + β p_{n−1}` and stores it in `v[n % 2]`
    /// (after iteration 0; the direction fused, no `cg_direction` tasks).
    fused: u32,
    /// Fused and lean ([`CgConfig::lean_update`]): the SpMV stores `p_n`
    /// and applies `x`'s step; `cg_update` touches only `r` and `z`.
    lean: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct GatherArgs {
    v: u64,
    idx: u64,
    vlen: u64,
    /// `f64[count]` of this PE (symmetric): where the values are staged
    /// for an NVSHMEM put when the receiver is reachable only so.
    stage: u64,
    count: u32,
    dest: u32,
    to_pe: u32,
    /// 1: send `z + β_n p_n` (`p_n` in `v[n % 2]`) instead of
    /// `v[(n + 1) % 2]`; 2 (single reduction, updates merged): send
    /// `z_{n+1}` formed from `r_n`, `w_n` and `s_{n−1}` as the SpMV forms it.
    fused: u32,
    /// Fused: `z` (`r` without a preconditioner).
    z: u64,
    /// Fused: this PE's scalars (`β_n`; merged: `α_n` too).
    scalars: u64,
    /// Merged: `r`, `w`, `s` (two halves each, `stride` entries apart), `1/diag`.
    r: u64,
    w: u64,
    s: u64,
    dinv: u64,
    stride: u64,
    /// Merged: Jacobi preconditioner.
    precond: u32,
    pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ReduceArgs {
    ar: AllreduceArgs,
    scalars: u64,
    b_norm: f64,
    tol: f64,
    /// 1: Standard `pᵀAp` → α; 2: Standard `ρ`, `‖r‖` → stop, β;
    /// 3: single reduction `γ`, `δ`, `‖r‖` → stop, β, α.
    stage: u32,
    precond: u32,
}

/// Indices into every PE's `scalars` (f64).
mod slot {
    /// α by parity.
    pub const ALPHA: usize = 0;
    /// β by parity.
    pub const BETA: usize = 2;
    /// ρ (Standard) / γ (single reduction) by parity.
    pub const RHO: usize = 4;
    /// ‖r‖² of the last reduce that tested it.
    pub const LAST_RR: usize = 6;
    /// The value that failed the run.
    pub const FAIL_VALUE: usize = 7;
    /// Which quantity (index into `QUANTITIES`).
    pub const FAIL_WHAT: usize = 8;
    /// The reference's 1-based iteration of the failure.
    pub const FAIL_ITER: usize = 9;
    /// Array length.
    pub const LEN: usize = 16;
}

/// Names of the quantities a reduce checks (`slot::FAIL_WHAT`).
const QUANTITIES: [&str; 5] = ["p^T A p", "alpha", "beta", "r^T r", "r^T z"];

/// The kinds, in registration order (the allreduce source comes first),
/// those of them `used` names: a megakernel holds the bodies of its
/// graph's kinds only, so a recurrence's graph leaves out the others'
/// (every body inlined into the scheduler's loops raises the registers
/// they all need: ptxas spilled 2-5x more in every kind's paths when the
/// merged single-reduction SpMV was one more mode of `cg_spmv`). The
/// bodies' source (`KERNELS`) goes with the first CG kind registered.
fn kinds_used(used: impl Fn(&str) -> bool) -> Vec<TaskKind> {
    type Shape = fn(TaskKind) -> TaskKind;
    let cg: [(&str, Shape); 9] = [
        ("cg_spmv", |k| k.args::<SpmvArgs>().with_cpu(cpu::spmv)),
        ("cg_spmv_merged", |k| {
            k.args::<SpmvArgs>().with_cpu(cpu::spmv)
        }),
        ("cg_update", |k| k.args::<VecArgs>().with_cpu(cpu::update)),
        ("cg_direction", |k| {
            k.args::<VecArgs>().with_cpu(cpu::direction)
        }),
        ("cg_axpy", |k| k.args::<VecArgs>().with_cpu(cpu::axpy)),
        ("cg_xstep", |k| k.args::<VecArgs>().with_cpu(cpu::xstep)),
        ("cg_gather", |k| {
            k.args::<GatherArgs>().comm().with_cpu(cpu::gather)
        }),
        ("cg_gather_merged", |k| {
            k.args::<GatherArgs>().comm().with_cpu(cpu::gather)
        }),
        ("cg_reduce", |k| {
            k.args::<ReduceArgs>()
                .comm()
                .may_finish_early()
                .with_cpu(cpu::reduce)
        }),
    ];
    let mut out = vec![allreduce::local_kind()];
    for (name, shape) in cg {
        if used(name) {
            let source = if out.len() == 1 { KERNELS } else { "" };
            out.push(shape(TaskKind::new(name, source)));
        }
    }
    out
}

/// The CG task kinds (for device-compile tests and inspection).
pub fn cg_kinds() -> Vec<TaskKind> {
    kinds_used(|_| true)
}

/// Which recurrence runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recurrence {
    Standard,
    Single,
}

/// Per-PE buffers (symmetric, sized for the largest PE).
struct Buffers {
    /// Plain CSR (length 1 each when the matrix is packed).
    row_ptr: SymBuffer<u64>,
    col: SymBuffer<u32>,
    val: SymBuffer<f64>,
    /// The packed matrix ([`super::compact`]; length 1 each when plain or
    /// as row patterns, but the table).
    crow_ptr: SymBuffer<u32>,
    packed: SymBuffer<u32>,
    table: SymBuffer<f64>,
    /// Rows as patterns ([`RowPatterns`]; length 1 each otherwise): each
    /// row's pattern, the patterns' offsets and words.
    row_pattern: SymBuffer<u8>,
    pattern_ptr: SymBuffer<u32>,
    pattern_words: SymBuffer<u32>,
    dinv: SymBuffer<f64>,
    send_idx: SymBuffer<u32>,
    /// Values of the send lists, staged for NVSHMEM puts (same offsets as
    /// `send_idx`).
    stage: SymBuffer<f64>,
    x: SymBuffer<f64>,
    r: SymBuffer<f64>,
    v: SymBuffer<f64>,
    y: SymBuffer<f64>,
    p: SymBuffer<f64>,
    s: SymBuffer<f64>,
    z: SymBuffer<f64>,
    scalars: SymBuffer<f64>,
}

/// Where the solve starts, computed on the host.
enum Start {
    /// Nothing to run: the result is known.
    Done(Box<CgRun>),
    /// Per-PE initial contents.
    Run(Box<Initial>),
}

struct Initial {
    x: Vec<Vec<f64>>,
    r: Vec<Vec<f64>>,
    v: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
    scalars: Vec<f64>,
}

/// A CG solve laid out on a runtime: graph, buffers and initial state.
/// [`CgSolver::run`] it as often as needed (each run starts from `x₀`).
pub struct CgSolver<'a> {
    rt: &'a Runtime,
    a: &'a Csr<f64>,
    cfg: CgConfig,
    rec: Recurrence,
    precond: bool,
    /// The direction is fused (Standard; false for single reduction).
    fuse_dir: bool,
    /// x's step is a task of its own ([`CgConfig::x_step_apart`]).
    x_apart: bool,
    /// r is v's owned part (CgConfig::single_buffer, no preconditioner).
    r_is_v: bool,
    /// The vectors' heap range kept in L2 during runs, if any.
    l2_window: Option<crate::L2Persist>,
    /// The SpMV reads the packed matrix ([`CgConfig::compact_matrix`]).
    compact: bool,
    /// ... as row patterns ([`CgConfig::row_patterns`]).
    patterned: bool,
    graph: Graph,
    plan: HaloPlan<f64>,
    bufs: Buffers,
    vlen: usize,
    maxn: usize,
    /// b (and x₀) times `scale`, as solved.
    b: Vec<f64>,
    b_norm: f64,
    /// A power of two (1 unless b's magnitude is extreme): the solve is of
    /// A (x·scale) = b·scale, and x is divided by it when read back.
    scale: f64,
    start: Start,
    tiles: Vec<Vec<Range<usize>>>,
    /// The allreduces' buffers, held as long as the graph that uses them.
    _reductions: (Allreduce, Option<Allreduce>),
}

impl std::fmt::Debug for CgSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CgSolver")
            .field("recurrence", &self.rec)
            .field("precond", &self.precond)
            .field("tiles_per_pe", &self.tiles_per_pe())
            .field("tasks", &self.graph.num_tasks())
            .finish()
    }
}

fn invalid(msg: impl Into<String>) -> CgSolveError {
    CgSolveError::InvalidConfig(msg.into())
}

/// Symmetric heap bytes per PE a solve of `a` over `pes` PEs needs
/// (give it to [`crate::runtime::Builder::symmetric_heap_bytes`]). Symmetric
/// allocations live as long as the runtime, so a runtime that builds several
/// solvers needs the sum of theirs.
///
/// Errors: the rows cannot be split over `pes`, or `a` is not square.
pub fn heap_bytes_needed(a: &Csr<f64>, pes: u32) -> Result<usize> {
    let plan = HaloPlan::new(a, &partition_rows(a, pes as usize)?)?;
    let (maxn, nnz, vlen, sends) = sizes(&plan);
    Ok(heap_bytes_for(maxn, nnz, vlen, sends, pes))
}

/// [`heap_bytes_needed`] from sizes, for a matrix that is not built yet:
/// the heap per PE when no PE owns more than `rows` rows and `nnz`
/// nonzeros, no PE's `[owned | ghosts]` vector is longer than `vlen`, and
/// no PE's send lists hold more than `sends` entries together. Monotone in
/// every argument, so upper bounds of the sizes give an upper bound of the
/// heap. Saturates at `usize::MAX` instead of overflowing. Both assume the
/// default tiling (at most 1024 tiles a PE; the bound allows 4096): a solver built with a
/// smaller [`CgConfig::tile_rows`] can need more partials than this counts
/// (then the solver's allocation fails with a clear heap error).
pub fn heap_bytes_for(rows: usize, nnz: usize, vlen: usize, sends: usize, pes: u32) -> usize {
    // Every buffer holds at least one entry (as `sizes` counts them).
    let [maxn, nnz, vlen, sends] = [rows, nnz, vlen, sends].map(|v| v.max(1));
    let pes = pes as usize;
    // Vectors: x, r, y, p, s, z, 1/diag, and r, y and s twice with the
    // single reduction's updates merged (9 at most: that recurrence has
    // no z); partials: at most 2 × 4 values per tile of the two
    // allreduces (tiles ≤ rows, ≤ 4096 by default).
    let tiles = maxn.min(4096);
    let doubles = [
        nnz,
        maxn.saturating_mul(9),
        vlen.saturating_mul(2),
        slot::LEN,
        16 * tiles,
        pes.saturating_mul(16),
    ]
    .into_iter()
    .fold(0usize, usize::saturating_add);
    // Send lists: the indices, and the values staged for NVSHMEM puts.
    let bytes = [
        maxn.saturating_add(1).saturating_mul(8),
        nnz.saturating_mul(4),
        sends.saturating_mul(12),
        doubles.saturating_mul(8),
    ]
    .into_iter()
    .fold(0usize, usize::saturating_add);
    // Every buffer starts 256-byte aligned (the heap's SYM_ALIGN).
    bytes.saturating_add(32 * 256 + (1 << 16))
}

/// Smallest chunk a send list is split into (entries): below it one block
/// moves the list about as fast as several.
pub const GATHER_CHUNK_ENTRIES: usize = 1024;

/// A send list of `n` entries in up to `comm_blocks` consecutive chunks of
/// at least [`GATHER_CHUNK_ENTRIES`] (one chunk when `n` is smaller), as
/// even as can be.
fn gather_chunks(n: usize, comm_blocks: usize) -> Vec<Range<usize>> {
    let parts = (n / GATHER_CHUNK_ENTRIES).clamp(1, comm_blocks.max(1));
    (0..parts)
        .map(|i| n * i / parts..n * (i + 1) / parts)
        .collect()
}

/// `(largest n_local, largest nnz, largest n_local + n_ghost, largest
/// total send length)` over the PEs (each at least 1).
fn sizes(plan: &HaloPlan<f64>) -> (usize, usize, usize, usize) {
    let pes = plan.pes();
    let m = |f: &dyn Fn(&super::PePlan<f64>) -> usize| pes.iter().map(f).max().unwrap_or(1).max(1);
    (
        m(&|p| p.n_local()),
        m(&|p| p.matrix().nnz()),
        m(&|p| p.matrix().n_cols()),
        m(&|p| p.sends().iter().map(|s| s.indices().len()).sum()),
    )
}

/// Splits `row_ptr`'s rows into contiguous tiles balanced by `nnz + rows`:
/// `count` tiles (fewer when there are fewer rows).
fn split_rows(row_ptr: &[u64], count: usize) -> Vec<Range<usize>> {
    let n = row_ptr.len() - 1;
    let count = count.clamp(1, n.max(1));
    let work = |r: usize| row_ptr[r] as u128 + r as u128;
    let total = work(n);
    let mut out = Vec::with_capacity(count);
    let mut start = 0;
    for k in 1..count {
        let target = total * k as u128 / count as u128;
        let b = (start + 1..n).find(|&r| work(r) >= target).unwrap_or(n);
        let b = b.clamp(start + 1, n - (count - k));
        out.push(start..b);
        start = b;
    }
    out.push(start..n);
    out
}

impl<'a> CgSolver<'a> {
    /// Checks the inputs, plans rows, tiles and exchanges for `rt`'s PEs,
    /// builds the graph and buffers and the initial state.
    ///
    /// Errors ([`CgSolveError`]): a non-square or non-symmetric matrix
    /// ([`Csr::check_symmetric`]), `b`/`x₀` of the wrong
    /// length or with NaN/∞, a bad tolerance, `tile_rows == 0`, a
    /// non-positive diagonal with Jacobi, more PEs than rows, a full
    /// symmetric heap; for single reduction `pᵀAp ≤ 0` at iteration 1 is
    /// found here (it is computed on the host).
    pub fn new(rt: &'a Runtime, a: &'a Csr<f64>, cfg: CgConfig) -> Result<CgSolver<'a>> {
        if !a.is_square() {
            return Err(CgError::NotSquare {
                n_rows: a.n_rows(),
                n_cols: a.n_cols(),
            }
            .into());
        }
        // A non-symmetric matrix makes CG's recurrence meaningless (it may
        // still stop, on a residual of the wrong system's iterates).
        a.check_symmetric()?;
        let n = a.n_rows();
        let b = cfg.b.clone().unwrap_or_else(|| vec![1.0; n]);
        let x0 = cfg.x0.clone().unwrap_or_else(|| vec![0.0; n]);
        for (vector, v) in [("b", &b), ("x0", &x0)] {
            if v.len() != n {
                return Err(CgError::SizeMismatch {
                    vector,
                    expected: n,
                    got: v.len(),
                }
                .into());
            }
            if let Some(index) = v.iter().position(|x| !x.is_finite()) {
                return Err(CgError::NonFiniteInput {
                    vector,
                    index,
                    value: v[index],
                }
                .into());
            }
        }
        if !(cfg.tol.is_finite() && cfg.tol >= 0.0) {
            return Err(CgError::InvalidTolerance(cfg.tol).into());
        }
        if cfg.tile_rows == Some(0) {
            return Err(invalid("tile_rows must be at least 1"));
        }
        if let Some(l) = cfg.spmv_lanes {
            if !(l.is_power_of_two() && l <= 32) {
                return Err(invalid(format!(
                    "spmv_lanes must be a power of two in 1..=32, got {l}"
                )));
            }
        }
        let precond =
            cfg.precond == Precond::Jacobi || cfg.variant == CgVariant::JacobiPreconditioned;
        let rec = match cfg.variant {
            CgVariant::SingleReduction => Recurrence::Single,
            _ => Recurrence::Standard,
        };
        // Rows on one GPU: its PEs' share (PEs are balanced by nonzeros,
        // about the same rows each).
        let rows_per_gpu = (a.n_rows() as u64 * rt.pes_per_gpu() as u64)
            .div_ceil(rt.num_pes().max(1) as u64) as usize;
        let diag = a.diagonal();
        if precond {
            if let Some(row) = diag.iter().position(|&d| d <= 0.0) {
                return Err(CgError::NonPositiveDiagonal {
                    row,
                    value: diag[row],
                }
                .into());
            }
        }
        let dinv: Vec<f64> = if precond {
            diag.iter().map(|d| 1.0 / d).collect()
        } else {
            Vec::new()
        };

        let pes = rt.num_pes() as usize;
        let plan = HaloPlan::new(a, &partition_rows(a, pes)?)?;
        let (maxn, max_nnz, vlen, max_sends) = sizes(&plan);

        // A right-hand side far from 1 in magnitude makes the sums of
        // squares under- or overflow (‖b‖ of a b of 1e-160s is 0: the run
        // then took the zero-rhs path and returned x = 0 as converged; of
        // 1e155s, ∞). Solve A (x·s) = b·s with s a power of two that brings
        // max |b| near 1: exact in binary floating point, and undone on x.
        let scale = rhs_scale(&b, &x0);
        let (b, x0) = if scale == 1.0 {
            (b, x0)
        } else {
            (
                b.iter().map(|v| v * scale).collect::<Vec<_>>(),
                x0.iter().map(|v| v * scale).collect::<Vec<_>>(),
            )
        };
        let b_norm = dot(&b, &b).sqrt();
        if !b_norm.is_finite() {
            return Err(CgError::NonFinite {
                quantity: "||b||",
                value: b_norm,
                iteration: 0,
            }
            .into());
        }

        // The matrix packed (super::compact) when every PE's rows fit, its
        // rows as patterns when every PE's packed rows take at most 256
        // sequences: one pass encoding every PE, so every process takes
        // the same decisions (and sizes the patterns' words buffer, which
        // is symmetric, by the largest PE's); a process keeps its own PEs'
        // encodings.
        let local = rt.local_pes();
        let mut packed: Option<Vec<Option<CompactCsr>>> = cfg.compact_matrix.then(Vec::new);
        let mut patterns: Option<Vec<Option<RowPatterns>>> =
            (cfg.compact_matrix && cfg.row_patterns).then(Vec::new);
        let mut max_pattern_words = 1usize;
        for (q, pe) in plan.pes().iter().enumerate() {
            let Some(cs) = packed.as_mut() else { break };
            let m = pe.matrix();
            let Ok(c) = CompactCsr::encode(m.row_ptr(), m.col_idx(), m.values()) else {
                packed = None;
                patterns = None;
                break;
            };
            let mine = local.contains(&(q as u32));
            if let Some(ps) = patterns.as_mut() {
                match RowPatterns::of(&c) {
                    Some(r) => {
                        max_pattern_words = max_pattern_words.max(r.words().len());
                        ps.push(mine.then_some(r));
                    }
                    None => patterns = None,
                }
            }
            cs.push(mine.then_some(c));
        }
        let compact = packed.is_some();
        let patterned = patterns.is_some();
        let form = match (compact, patterned) {
            (_, true) => MatrixForm::Patterns,
            (true, false) => MatrixForm::Packed,
            (false, false) => MatrixForm::Plain,
        };
        let fuse_dir = rec == Recurrence::Standard
            && cfg
                .direction
                .fused_for(rt, rows_per_gpu, form, cfg.lean_update);
        let lean = fuse_dir && cfg.lean_update;
        let merged = rec == Recurrence::Single && cfg.merge_updates;
        // Merged single reduction: r, w (y) and s by parity, two halves of
        // `maxn` entries each (mode 3's `stride`).
        let halves = if merged { 2 } else { 1 };
        // Separate single reduction, one copy of z (CgConfig::single_buffer):
        // v has one half (every parity offset is 0: the bodies' `vlen` is
        // 0), and r is its owned part when there is no preconditioner.
        let one_half = rec == Recurrence::Single && !merged && cfg.single_buffer;
        let r_is_v = one_half && !precond;
        let v_halves = if one_half { 1 } else { 2 };
        // The `vlen` the bodies offset the halves of v by.
        let vstride = if one_half { 0 } else { vlen as u64 };
        // x's step by cg_xstep (CgConfig::x_step_apart), not the SpMV (lean
        // Standard) or the axpy tiles (separate single reduction); by
        // default when the recurrence's vectors fit in L2.
        let sr_separate = rec == Recurrence::Single && !merged;
        let x_apart = (lean || sr_separate)
            && cfg.x_step_apart.unwrap_or_else(|| {
                let l2 = rt.device_props().map(|d| d.l2_bytes);
                if lean {
                    x_step_apart_by_default(rows_per_gpu, l2)
                } else {
                    // v, w, x, p, s; r unless it is v; dinv.
                    let vectors = v_halves + usize::from(!r_is_v) + 4 + usize::from(precond);
                    l2.map_or(true, |l2| rows_per_gpu.saturating_mul(8 * vectors) <= l2)
                }
            });
        // Entries of a buffer: n where used, 1 where not.
        let len = |used: bool, n: usize| if used { n } else { 1 };

        // ---- buffers -------------------------------------------------------
        let bufs = Buffers {
            row_ptr: rt.alloc_symmetric(len(!compact, maxn + 1))?,
            col: rt.alloc_symmetric(len(!compact, max_nnz))?,
            val: rt.alloc_symmetric(len(!compact, max_nnz))?,
            crow_ptr: rt.alloc_symmetric(len(compact && !patterned, maxn + 1))?,
            packed: rt.alloc_symmetric(len(compact && !patterned, max_nnz))?,
            table: rt.alloc_symmetric(len(compact, MAX_VALUES))?,
            row_pattern: rt.alloc_symmetric(len(patterned, maxn))?,
            pattern_ptr: rt.alloc_symmetric(len(patterned, MAX_PATTERNS + 1))?,
            pattern_words: rt.alloc_symmetric(len(patterned, max_pattern_words))?,
            dinv: rt.alloc_symmetric(if precond { maxn } else { 1 })?,
            send_idx: rt.alloc_symmetric(max_sends)?,
            stage: rt.alloc_symmetric(max_sends)?,
            // The vectors in the order of their reuse (the fields are
            // allocated in the order written): v, which the SpMV reads once
            // per nonzero, first, then z and r (the fused direction reads
            // them there too), q/w, and those only the vector phases touch
            // — an L2 window shorter than the vectors keeps the head.
            v: rt.alloc_symmetric(v_halves * vlen)?,
            z: rt.alloc_symmetric(if precond && rec == Recurrence::Standard {
                maxn
            } else {
                1
            })?,
            r: rt.alloc_symmetric(if r_is_v { 1 } else { halves * maxn })?,
            y: rt.alloc_symmetric(halves * maxn)?,
            x: rt.alloc_symmetric(maxn)?,
            p: rt.alloc_symmetric(if rec == Recurrence::Single { maxn } else { 1 })?,
            s: rt.alloc_symmetric(if rec == Recurrence::Single {
                halves * maxn
            } else {
                1
            })?,
            scalars: rt.alloc_symmetric(slot::LEN)?,
        };
        // The vectors' span of the heap kept in L2 during runs
        // (CgConfig::l2_persist_vectors): all of it when it about fits the
        // part of L2 the device can set aside, its head (the most reused
        // vectors, as much as can be set aside) when it is a little longer,
        // none beyond (L2_PERSIST_HEAD_MAX_SHARE).
        let l2_window = {
            let b = &bufs;
            let spans = [
                (b.x.offset(), b.x.len()),
                (b.r.offset(), b.r.len()),
                (b.v.offset(), b.v.len()),
                (b.y.offset(), b.y.len()),
                (b.p.offset(), b.p.len()),
                (b.s.offset(), b.s.len()),
                (b.z.offset(), b.z.len()),
            ];
            let lo = spans.iter().map(|s| s.0).min().unwrap_or(0);
            let hi = spans.iter().map(|s| s.0 + 8 * s.1).max().unwrap_or(0);
            // AUTARKY_L2_HEAD_MAX_SHARE overrides the head's limit, for
            // experiments with it (the default is the measured one).
            let head_share = std::env::var("AUTARKY_L2_HEAD_MAX_SHARE")
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(L2_PERSIST_HEAD_MAX_SHARE);
            let bytes = rt.device_props().map_or(0, |d| {
                l2_window_bytes_with(hi - lo, d.max_persisting_l2, head_share)
            });
            // One PE in all: measured on one GPU only so far (a run of one
            // PE per GPU on several GPUs could take it too).
            (cfg.l2_persist_vectors && rt.num_pes() == 1 && bytes > 0)
                .then_some(crate::L2Persist { offset: lo, bytes })
        };
        // The matrix and the send lists, once, into the PEs this process
        // hosts (every PE in one process; each rank writes its own under
        // MPI: another rank's heap may be reachable only from its GPU).
        let local = rt.local_pes();
        for (q, pe) in plan.pes().iter().enumerate() {
            let q = q as u32;
            if !local.contains(&q) {
                continue;
            }
            let m = pe.matrix();
            match packed.as_ref().and_then(|p| p[q as usize].as_ref()) {
                Some(c) => {
                    match patterns.as_ref().and_then(|p| p[q as usize].as_ref()) {
                        Some(r) => {
                            bufs.row_pattern
                                .copy_from(q, &padded(r.row_pattern(), maxn))?;
                            bufs.pattern_ptr
                                .copy_from(q, &padded(r.pattern_ptr(), MAX_PATTERNS + 1))?;
                            bufs.pattern_words
                                .copy_from(q, &padded(r.words(), max_pattern_words))?;
                        }
                        None => {
                            bufs.crow_ptr.copy_from(q, &padded(c.row_ptr(), maxn + 1))?;
                            bufs.packed.copy_from(q, &padded(c.packed(), max_nnz))?;
                        }
                    }
                    bufs.table.copy_from(q, &padded(c.table(), MAX_VALUES))?;
                }
                None => {
                    bufs.row_ptr.copy_from(q, &padded(m.row_ptr(), maxn + 1))?;
                    bufs.col.copy_from(q, &padded(m.col_idx(), max_nnz))?;
                    bufs.val.copy_from(q, &padded(m.values(), max_nnz))?;
                }
            }
            if precond {
                bufs.dinv.copy_from(q, &padded(&dinv[pe.rows()], maxn))?;
            }
            let idx: Vec<u32> = pe
                .sends()
                .iter()
                .flat_map(|s| s.indices().iter().copied())
                .collect();
            bufs.send_idx.copy_from(q, &padded(&idx, max_sends))?;
        }

        // ---- graph ---------------------------------------------------------
        let mut graph = Graph::new();
        // The kinds this recurrence and layout run (kinds_used).
        // AUTARKY_EXP_CG_ALL_KINDS=1: every CG kind registered (as before
        // kinds_used; the A/B control of its measurement).
        let all_kinds = std::env::var("AUTARKY_EXP_CG_ALL_KINDS").is_ok_and(|v| v == "1");
        let used = |name: &str| {
            all_kinds
                || match name {
                    "cg_spmv" | "cg_gather" => !merged,
                    "cg_spmv_merged" | "cg_gather_merged" => merged,
                    "cg_update" => rec == Recurrence::Standard,
                    "cg_direction" => rec == Recurrence::Standard && !fuse_dir,
                    "cg_xstep" => x_apart,
                    "cg_axpy" => rec == Recurrence::Single && !merged,
                    _ => true,
                }
        };
        let mut ids = std::collections::HashMap::new();
        for k in kinds_used(used) {
            let name = k.name().to_string();
            ids.insert(name, graph.add_kind(k).map_err(Error::from)?);
        }
        // A kind the graph does not register is never asked for (`used`).
        let kind = |name: &str| ids[name];
        let k_local = kind("allreduce_local");
        let k_reduce = kind("cg_reduce");
        let k_spmv = kind(if merged { "cg_spmv_merged" } else { "cg_spmv" });
        let k_gather = kind(if merged {
            "cg_gather_merged"
        } else {
            "cg_gather"
        });
        let (comm_blocks, compute_blocks) = rt.blocks_per_pe(graph.kinds())?;
        if comm_blocks == 0 || compute_blocks == 0 {
            return Err(invalid(format!(
                "CG needs comm and compute blocks, the runtime has {comm_blocks} and {compute_blocks}"
            )));
        }
        let ar_kinds = AllreduceKinds {
            local: k_local,
            global: k_reduce,
            fuse_single_pe: cfg.fuse_single_pe_allreduce,
        };
        let reduce_slot = comm_blocks.saturating_sub(1).min(1);

        let tiles: Vec<Vec<Range<usize>>> = plan
            .pes()
            .iter()
            .map(|pe| {
                let m = pe.matrix();
                let count = match cfg.tile_rows {
                    Some(t) => pe.n_local().div_ceil(t),
                    None => (m.nnz() / 2048).clamp(1, MAX_DEFAULT_TILES),
                };
                split_rows(m.row_ptr(), count)
            })
            .collect();
        let tile_of = |q: usize, row: usize| tiles[q].partition_point(|t| t.end <= row);

        let width_spmv = match rec {
            Recurrence::Standard => 1,
            Recurrence::Single => 2 + precond as usize,
        };
        let width_update = 1 + precond as usize;
        let counts: Vec<usize> = tiles.iter().map(Vec::len).collect();
        let ar1 = Allreduce::new(rt, width_spmv, counts.clone())?;
        let ar2 = match rec {
            Recurrence::Standard => Some(Allreduce::new(rt, width_update, counts.clone())?),
            Recurrence::Single => None,
        };

        let addr = |b: &SymBuffer<f64>, q: usize| b.addr(q as u32);
        // r, or v's owned part when r is z (one copy of z, no preconditioner).
        let r_addr = |q: usize| addr(if r_is_v { &bufs.v } else { &bufs.r }, q);
        let mut spmv_ids: Vec<Vec<TaskId>> = Vec::with_capacity(pes);
        let mut vec1_ids: Vec<Vec<TaskId>> = Vec::with_capacity(pes); // update / axpy
        let mut dir_ids: Vec<Vec<TaskId>> = Vec::with_capacity(pes);
        for (q, pe) in plan.pes().iter().enumerate() {
            let m = pe.matrix();
            let (mut sp, mut v1, mut dr) = (Vec::new(), Vec::new(), Vec::new());
            // The x step tasks, by tile (ordered after the block's last SpMV
            // below).
            let mut x_steps: Vec<(usize, TaskId)> = Vec::new();
            for (t, rows) in tiles[q].iter().enumerate() {
                let nnz = (m.row_ptr()[rows.end] - m.row_ptr()[rows.start]) as usize;
                let avg = nnz.div_ceil(rows.len().max(1));
                let lanes = cfg.spmv_lanes.unwrap_or_else(|| default_spmv_lanes(avg));
                let slot_c = (t % compute_blocks as usize) as u32;
                // The matrix's arrays and its form's code (SpmvArgs::compact).
                let (row_ptr, col, val, code) = match form {
                    MatrixForm::Plain => (
                        bufs.row_ptr.addr(q as u32),
                        bufs.col.addr(q as u32),
                        addr(&bufs.val, q),
                        0,
                    ),
                    MatrixForm::Packed => (
                        bufs.crow_ptr.addr(q as u32),
                        bufs.packed.addr(q as u32),
                        addr(&bufs.table, q),
                        1,
                    ),
                    MatrixForm::Patterns => (
                        bufs.row_pattern.addr(q as u32),
                        bufs.pattern_words.addr(q as u32),
                        addr(&bufs.table, q),
                        2,
                    ),
                };
                let sa = SpmvArgs {
                    row_ptr,
                    col,
                    val,
                    v: addr(&bufs.v, q),
                    y: addr(&bufs.y, q),
                    r: r_addr(q),
                    partials: ar1.partials_addr(q as u32),
                    vlen: vstride,
                    lo: rows.start as u32,
                    hi: rows.end as u32,
                    lanes,
                    tile: t as u32,
                    tiles: tiles[q].len() as u32,
                    mode: match rec {
                        Recurrence::Single if merged => 3,
                        Recurrence::Single => 1,
                        Recurrence::Standard if fuse_dir => 2,
                        Recurrence::Standard => 0,
                    },
                    width: width_spmv as u32,
                    owned: pe.n_local() as u32,
                    z: if precond { addr(&bufs.z, q) } else { r_addr(q) },
                    scalars: addr(&bufs.scalars, q),
                    compact: code,
                    // 1: the SpMV applies x's step; 2: cg_xstep does.
                    lean: match (lean, x_apart) {
                        (false, _) => 0,
                        (true, false) => 1,
                        (true, true) => 2,
                    },
                    pattern_ptr: bufs.pattern_ptr.addr(q as u32),
                    x: addr(&bufs.x, q),
                    p: addr(&bufs.p, q),
                    s: addr(&bufs.s, q),
                    dinv: addr(&bufs.dinv, q),
                    stride: maxn as u64,
                    precond: precond as u32,
                    pad: 0,
                };
                let va = VecArgs {
                    x: addr(&bufs.x, q),
                    r: r_addr(q),
                    y: addr(&bufs.y, q),
                    v: addr(&bufs.v, q),
                    p: addr(&bufs.p, q),
                    s: addr(&bufs.s, q),
                    z: addr(&bufs.z, q),
                    dinv: addr(&bufs.dinv, q),
                    scalars: addr(&bufs.scalars, q),
                    partials: ar2.as_ref().map_or(0, |a| a.partials_addr(q as u32)),
                    vlen: vstride,
                    lo: rows.start as u32,
                    hi: rows.end as u32,
                    tile: t as u32,
                    tiles: tiles[q].len() as u32,
                    precond: precond as u32,
                    width: width_update as u32,
                    fused: fuse_dir as u32,
                    // (Single reduction: x's step in cg_xstep.)
                    lean: (lean || (sr_separate && x_apart)) as u32,
                };
                let s = graph.add_task(k_spmv, &sa);
                graph.set_name(s, format!("spmv tile {t} of PE {q}"));
                let mut mine = vec![s];
                match rec {
                    Recurrence::Standard => {
                        // The x step after the SpMV tile (pinned after it
                        // on the same block, it runs while the reduce
                        // sums); before the update, so before the SpMV of
                        // n + 1 overwrites p_{n−1}'s half of v.
                        let xs = x_apart.then(|| {
                            let xs = graph.add_task(kind("cg_xstep"), &va);
                            graph.set_name(xs, format!("x step tile {t} of PE {q}"));
                            graph.add_edge(s, xs);
                            mine.push(xs);
                            x_steps.push((t, xs));
                            xs
                        });
                        let u = graph.add_task(kind("cg_update"), &va);
                        graph.set_name(u, format!("update tile {t} of PE {q}"));
                        graph.add_edge(s, u);
                        if let Some(xs) = xs {
                            graph.add_edge(xs, u);
                        }
                        mine.push(u);
                        v1.push(u);
                        if !fuse_dir {
                            let d = graph.add_task(kind("cg_direction"), &va);
                            graph.set_name(d, format!("direction tile {t} of PE {q}"));
                            graph.add_edge(u, d);
                            mine.push(d);
                            dr.push(d);
                        }
                    }
                    Recurrence::Single if merged => {
                        // The SpMV tile applies the updates (mode 3); it
                        // waits for its PE's reduce of n − 1 (below).
                    }
                    Recurrence::Single => {
                        let x = graph.add_task(kind("cg_axpy"), &va);
                        graph.set_name(x, format!("axpy tile {t} of PE {q}"));
                        // axpy(n) reads w of spmv(n − 1) and writes w's
                        // inputs; spmv(n) overwrites w after axpy(n).
                        graph.add_carried_edge(s, x);
                        graph.add_edge(x, s);
                        mine.push(x);
                        v1.push(x);
                        if x_apart {
                            // x += α_n p_n after the SpMV tile (pinned after
                            // it on the same block: it runs while the reduce
                            // sums), before the axpy of n + 1 rewrites p.
                            let xs = graph.add_task(kind("cg_xstep"), &va);
                            graph.set_name(xs, format!("x step tile {t} of PE {q}"));
                            graph.add_edge(s, xs);
                            graph.add_carried_edge(xs, x);
                            mine.push(xs);
                            x_steps.push((t, xs));
                        }
                    }
                }
                for &id in &mine {
                    graph.set_pe(id, q as u32);
                    graph.pin(id, slot_c);
                }
                sp.push(s);
            }
            // A block that runs several tiles (several virtual PEs a GPU,
            // small tiles) runs its x steps after its last SpMV: a block's
            // pinned list follows one topological order, ties by task id,
            // which put tile A's x step before tile B's SpMV — on the
            // iteration's critical path (2 virtual PEs, 2D 1024²: 66 µs an
            // iteration with the steps apart against 62 in the SpMV/axpy).
            // The edge orders only tasks the block runs in turn anyway.
            let cb = compute_blocks as usize;
            let n_tiles = tiles[q].len();
            for (t, xs) in x_steps {
                let slot = t % cb;
                let last = slot + cb * ((n_tiles - 1 - slot) / cb);
                if last != t {
                    graph.add_edge(sp[last], xs);
                }
            }
            spmv_ids.push(sp);
            vec1_ids.push(v1);
            dir_ids.push(dr);
        }
        // The producers of v (direction tiles / axpy tiles), and the
        // distance from a producer's instance to the SpMV that reads it.
        // With the direction fused, the update tiles store p_n (read by the
        // next update and the gathers; the SpMV forms p from z and p_{n−1}
        // after the reduce that gives β, its only local predecessor, below).
        let (producers, prod_dist) = match rec {
            Recurrence::Standard if fuse_dir => (&vec1_ids, 1u32),
            Recurrence::Standard => (&dir_ids, 1u32),
            Recurrence::Single => (&vec1_ids, 0u32),
        };
        // SpMV tiles wait for the tiles that produce the owned v they read
        // (fused, merged: for the reduce that follows all of them, below).
        if !fuse_dir && !merged {
            for (q, pe) in plan.pes().iter().enumerate() {
                let m = pe.matrix();
                let nl = pe.n_local();
                for (t, rows) in tiles[q].iter().enumerate() {
                    let lo = m.row_ptr()[rows.start] as usize;
                    let hi = m.row_ptr()[rows.end] as usize;
                    let mut from: Vec<usize> = m.col_idx()[lo..hi]
                        .iter()
                        .filter(|&&c| (c as usize) < nl)
                        .map(|&c| tile_of(q, c as usize))
                        .collect();
                    from.push(t);
                    from.sort_unstable();
                    from.dedup();
                    for j in from {
                        graph.add_edge_with_distance(producers[q][j], spmv_ids[q][t], prod_dist);
                    }
                }
            }
        }
        // Gathers: owner → receiver, each send list in up to `comm_blocks`
        // chunks of at least GATHER_CHUNK_ENTRIES, pinned to different comm
        // slots: one block's stores over NVLink move a 128² ghost plane
        // at a few GB/s (two H200s: CG 128³ at 0.40× one GPU, a single
        // gather instance 110 µs on the trace's critical path), several
        // blocks share it. A chunk's edges are its own: the tiles that
        // produce its entries, and the receiver tiles that read its ghosts.
        // The comm slots gathers take, in turn across the PE's send lists:
        // every one, except the reduce's when there are 3 or more.
        let gather_slots: Vec<u32> = (0..comm_blocks)
            .filter(|&c| comm_blocks < 3 || c != reduce_slot)
            .collect();
        let mut gather_ids: Vec<Vec<TaskId>> = vec![Vec::new(); pes];
        for (q, pe) in plan.pes().iter().enumerate() {
            let mut off = 0usize;
            let mut turn = 0usize;
            for send in pe.sends() {
                let to = send.receiver();
                let n = send.indices().len();
                // The device's gather loop counts entries in 32 bits and must
                // not wrap (rounds of blockDim × CG_GATHER_BATCH).
                if n > 1 << 31 {
                    return Err(invalid(format!(
                        "a send list of {n} entries from PE {q} to PE {to} is too long (at most 2^31)"
                    )));
                }
                let rp = plan.pe(to);
                let block = rp
                    .ghosts()
                    .iter()
                    .find(|b| b.owner() == q)
                    .expect("a send list mirrors a ghost block");
                let chunks = gather_chunks(n, gather_slots.len());
                for (c, range) in chunks.iter().enumerate() {
                    let g = graph.add_task(
                        k_gather,
                        &GatherArgs {
                            v: addr(&bufs.v, q),
                            idx: bufs.send_idx.addr(q as u32) + 4 * (off + range.start) as u64,
                            vlen: vstride,
                            stage: bufs.stage.addr(q as u32) + 8 * (off + range.start) as u64,
                            count: range.len() as u32,
                            dest: (send.dest_start() + range.start) as u32,
                            to_pe: to as u32,
                            fused: if merged { 2 } else { fuse_dir as u32 },
                            z: if precond { addr(&bufs.z, q) } else { r_addr(q) },
                            scalars: addr(&bufs.scalars, q),
                            r: r_addr(q),
                            w: addr(&bufs.y, q),
                            s: addr(&bufs.s, q),
                            dinv: addr(&bufs.dinv, q),
                            stride: maxn as u64,
                            precond: precond as u32,
                            pad: 0,
                        },
                    );
                    gather_ids[q].push(g);
                    graph.set_pe(g, q as u32);
                    graph.pin(g, gather_slots[turn % gather_slots.len()]);
                    turn += 1;
                    graph.set_name(
                        g,
                        if chunks.len() == 1 {
                            format!("gather PE {q} → PE {to}")
                        } else {
                            format!(
                                "gather PE {q} → PE {to} (part {} of {})",
                                c + 1,
                                chunks.len()
                            )
                        },
                    );
                    let mut src: Vec<usize> = send.indices()[range.clone()]
                        .iter()
                        .map(|&i| tile_of(q, i as usize))
                        .collect();
                    src.sort_unstable();
                    src.dedup();
                    for j in src {
                        if fuse_dir {
                            // Gather n reads z and p_n of these rows (after
                            // the reduce that gives β_n, edge below); the
                            // update of n + 1 overwrites z, and that of
                            // n + 2 the half holding p_n.
                            graph.add_edge_with_distance(g, producers[q][j], 1);
                        } else if merged {
                            // Gather n reads r_n, w_n, s_{n−1} of these rows
                            // (after the reduce of n − 1, edge below); the
                            // SpMV tile of n + 1 overwrites those halves.
                            graph.add_edge_with_distance(g, spmv_ids[q][j], 1);
                        } else {
                            // Gather n reads z_{n+1} of these rows; the
                            // axpy of n + 1 (one copy of z) or n + 2 (two
                            // halves) overwrites it.
                            graph.add_edge(producers[q][j], g);
                            graph.add_edge_with_distance(
                                g,
                                producers[q][j],
                                if one_half { 1 } else { 2 },
                            );
                        }
                    }
                    // The receiver's SpMV tiles that read this chunk's ghosts.
                    let c0 = (block.start() + range.start) as u32;
                    let cols = c0..c0 + range.len() as u32;
                    let m = rp.matrix();
                    for (t, rows) in tiles[to].iter().enumerate() {
                        let lo = m.row_ptr()[rows.start] as usize;
                        let hi = m.row_ptr()[rows.end] as usize;
                        if m.col_idx()[lo..hi].iter().any(|c| cols.contains(c)) {
                            graph.add_edge_with_distance(g, spmv_ids[to][t], prod_dist);
                        }
                    }
                }
                off += n;
            }
        }
        // Allreduces and their reduce tasks.
        let reduce_args = |stage: u32| {
            let scalars = &bufs.scalars;
            move |q: u32, ar: AllreduceArgs| {
                bytemuck::bytes_of(&ReduceArgs {
                    ar,
                    scalars: scalars.addr(q),
                    b_norm,
                    tol: cfg.tol,
                    stage,
                    precond: precond as u32,
                })
                .to_vec()
            }
        };
        match rec {
            Recurrence::Standard => {
                let r1 = ar1.add_to_graph(
                    &mut graph,
                    ar_kinds,
                    reduce_slot,
                    &spmv_ids,
                    reduce_args(1),
                    "p^T A p",
                )?;
                let ar2 = ar2.as_ref().expect("standard has two allreduces");
                let r2 = ar2.add_to_graph(
                    &mut graph,
                    ar_kinds,
                    reduce_slot,
                    &vec1_ids,
                    reduce_args(2),
                    "r^T z",
                )?;
                for q in 0..pes {
                    for &u in &vec1_ids[q] {
                        graph.add_edge(r1[q].global, u);
                    }
                    for &d in &dir_ids[q] {
                        graph.add_edge(r2[q].global, d);
                    }
                    if fuse_dir {
                        // β_n, and through the reduce every update tile of
                        // n (z and p_n of every row): the next SpMV, and
                        // the gathers, which send p_{n+1}.
                        for &s in &spmv_ids[q] {
                            graph.add_edge_with_distance(r2[q].global, s, 1);
                        }
                        for &g in &gather_ids[q] {
                            graph.add_edge(r2[q].global, g);
                        }
                    }
                }
            }
            Recurrence::Single => {
                let r = ar1.add_to_graph(
                    &mut graph,
                    ar_kinds,
                    reduce_slot,
                    &spmv_ids,
                    reduce_args(3),
                    "r^T z, w^T z",
                )?;
                for q in 0..pes {
                    for &x in &vec1_ids[q] {
                        graph.add_carried_edge(r[q].global, x);
                    }
                    if merged {
                        // α_n, β_n, and through the reduce every tile of
                        // n − 1 (r_n, w_n, s_{n−1} of every row): the SpMV
                        // tiles of n and the gathers, which send z_{n+1}.
                        for &t in spmv_ids[q].iter().chain(&gather_ids[q]) {
                            graph.add_carried_edge(r[q].global, t);
                        }
                    }
                }
            }
        }
        let mut start = initial_state(
            a,
            &plan,
            &b,
            &x0,
            &dinv,
            precond,
            rec,
            &cfg,
            b_norm,
            v_halves * vlen,
        )?;
        if let Start::Done(run) = &mut start {
            run.x.iter_mut().for_each(|v| *v /= scale);
        }
        Ok(CgSolver {
            rt,
            a,
            cfg,
            rec,
            precond,
            fuse_dir,
            x_apart,
            r_is_v,
            l2_window,
            compact,
            patterned,
            graph,
            plan,
            bufs,
            vlen,
            maxn,
            b,
            b_norm,
            scale,
            start,
            tiles,
            _reductions: (ar1, ar2),
        })
    }

    /// The Standard recurrence: whether its next direction is formed where
    /// it is read (true) or by direction tiles (false), as
    /// [`CgConfig::direction`] chose; None for single reduction.
    pub fn direction_fused(&self) -> Option<bool> {
        (self.rec == Recurrence::Standard).then_some(self.fuse_dir)
    }

    /// Whether the SpMV tiles apply `x`'s steps and the update tiles touch
    /// only `r` and `z` ([`CgConfig::lean_update`]; the direction fused).
    pub fn lean_update(&self) -> bool {
        self.fuse_dir && self.cfg.lean_update
    }

    /// With lean updates or the separate single reduction: whether `x`'s
    /// step is a task of its own (`cg_xstep`, [`CgConfig::x_step_apart`])
    /// rather than the SpMV's or the axpy tiles'.
    pub fn x_step_apart(&self) -> bool {
        self.x_apart
    }

    /// The single-reduction recurrence: whether the SpMV tiles apply the
    /// vector updates ([`CgConfig::merge_updates`]); None for Standard.
    pub fn updates_merged(&self) -> Option<bool> {
        (self.rec == Recurrence::Single).then_some(self.cfg.merge_updates)
    }

    /// The single-reduction recurrence with separate updates: whether `z`
    /// lives in one copy of `v` ([`CgConfig::single_buffer`]); None
    /// otherwise.
    pub fn single_buffer(&self) -> Option<bool> {
        (self.rec == Recurrence::Single && !self.cfg.merge_updates)
            .then_some(self.cfg.single_buffer)
    }

    /// Whether the SpMV reads the matrix packed ([`super::compact`]), as
    /// [`CgConfig::compact_matrix`] asked and the matrix allowed.
    pub fn compact_matrix(&self) -> bool {
        self.compact
    }

    /// Whether the SpMV reads the packed rows as patterns ([`RowPatterns`]),
    /// as [`CgConfig::row_patterns`] asked and every PE's rows allowed.
    pub fn row_patterns(&self) -> bool {
        self.patterned
    }

    /// The heap range of the vectors kept in L2 during runs
    /// ([`CgConfig::l2_persist_vectors`]), if any.
    pub fn l2_window(&self) -> Option<crate::L2Persist> {
        self.l2_window
    }

    /// The task graph (for benches and inspection).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Tiles of every PE.
    pub fn tiles_per_pe(&self) -> Vec<usize> {
        self.tiles.iter().map(Vec::len).collect()
    }

    /// Rows of every PE.
    pub fn rows_per_pe(&self) -> Vec<Range<usize>> {
        self.plan.pes().iter().map(|p| p.rows()).collect()
    }

    /// Writes the initial state into the buffers of every PE this process
    /// hosts ([`Runtime::local_pes`]: all of them in one process). Under
    /// MPI every rank resets its own; the run's launch is collective, so no
    /// kernel starts before every rank has.
    fn reset(&self, init: &Initial) -> Result<()> {
        for pe in self.rt.local_pes() {
            let q = pe as usize;
            self.bufs.x.copy_from(pe, &padded(&init.x[q], self.maxn))?;
            // (r and y hold two halves with the updates merged: the first
            // gets r₀, w₀.)
            // (Not when r is v's owned part: v gets z₀ = r₀ below.)
            if !self.r_is_v {
                self.bufs
                    .r
                    .copy_from(pe, &padded(&init.r[q], self.bufs.r.len()))?;
            }
            self.bufs
                .y
                .copy_from(pe, &padded(&init.y[q], self.bufs.y.len()))?;
            self.bufs
                .v
                .copy_from(pe, &padded(&init.v[q], self.bufs.v.len()))?;
            for b in [&self.bufs.p, &self.bufs.s, &self.bufs.z] {
                b.copy_from(pe, &vec![0.0; b.len()])?;
            }
            self.bufs.scalars.copy_from(pe, &init.scalars)?;
        }
        Ok(())
    }

    /// Resets and runs the solve with `opts` (its iterations are replaced by
    /// `max_iters`).
    pub fn run_with(&self, opts: crate::RunOptions) -> Result<CgRun> {
        let init = match &self.start {
            Start::Done(run) => return Ok((**run).clone()),
            Start::Run(init) => init,
        };
        self.reset(init)?;
        let report = match self.rt.run_with(&self.graph, self.options(opts)) {
            Ok(r) => r,
            Err(Error::TaskFailed { pe, code, .. })
                if code == NOT_POSITIVE_DEFINITE as u64 || code == NON_FINITE as u64 =>
            {
                return Err(self.breakdown(pe, code)?.into());
            }
            Err(e) => return Err(e.into()),
        };
        self.collect(report)
    }

    /// Resets and runs the solve.
    pub fn run(&self) -> Result<CgRun> {
        self.run_with(crate::RunOptions::iterations(self.cfg.max_iters))
    }

    /// Compiles the kernel [`CgSolver::run`] launches, or finds it in the
    /// caches ([`Runtime::prepare`]), so the solve starts without
    /// compiling. Solvers on one runtime may prepare from threads of their
    /// own at once: their kernels compile in parallel.
    pub fn prepare(&self) -> Result<()> {
        self.prepare_with(crate::RunOptions::iterations(self.cfg.max_iters))
    }

    /// [`CgSolver::prepare`] for [`CgSolver::run_with`]`(opts)`.
    pub fn prepare_with(&self, opts: crate::RunOptions) -> Result<()> {
        if let Start::Done(_) = &self.start {
            return Ok(());
        }
        Ok(self.rt.prepare(&self.graph, &self.options(opts))?)
    }

    /// The options a solve runs with: `opts` with `max_iters` iterations
    /// and the solver's L2 window unless `opts` sets one.
    fn options(&self, mut opts: crate::RunOptions) -> crate::RunOptions {
        opts.iterations = self.cfg.max_iters;
        opts.l2_persist = opts.l2_persist.or(self.l2_window);
        opts
    }

    /// The error a reduce recorded before failing the run.
    fn breakdown(&self, pe: u32, code: u64) -> Result<CgError> {
        // Every rank reaches the barrier, also when its read failed (a PE
        // on another node is reachable only through NVSHMEM puts), so no
        // rank waits there for one that left.
        let s = self.bufs.scalars.to_vec(pe);
        self.rt.barrier()?;
        let s = s?;
        let value = s[slot::FAIL_VALUE];
        let iteration = s[slot::FAIL_ITER] as usize;
        let quantity = QUANTITIES
            .get(s[slot::FAIL_WHAT] as usize)
            .copied()
            .unwrap_or("?");
        Ok(if code == NOT_POSITIVE_DEFINITE as u64 {
            CgError::NotPositiveDefinite {
                iteration,
                pap: value,
            }
        } else {
            CgError::NonFinite {
                quantity,
                value,
                iteration,
            }
        })
    }

    fn collect(&self, report: RunReport) -> Result<CgRun> {
        let k = report.iterations;
        let read = || -> Result<(Vec<f64>, Vec<f64>)> {
            let s = self.bufs.scalars.to_vec(0)?;
            let mut x = vec![0.0; self.a.n_rows()];
            for (q, pe) in self.plan.pes().iter().enumerate() {
                let mut xq = self.bufs.x.to_vec(q as u32)?;
                if self.lean_update() && k > 0 {
                    // The last iteration's step, x += α_{k−1} p_{k−1}: lean
                    // SpMVs apply iteration n − 1's, and the SpMV of k
                    // never runs. p_{k−1} is in v[(k − 1) % 2] (stored by
                    // the SpMV of k − 1, or on the host for k = 1); the
                    // device's fma, correctly rounded on both sides.
                    let h = ((k - 1) % 2) as usize;
                    let alpha = s[slot::ALPHA + h];
                    let v = self.bufs.v.to_vec(q as u32)?;
                    let p = &v[h * self.vlen..][..pe.n_local()];
                    for (xi, &pi) in xq.iter_mut().zip(p) {
                        *xi = alpha.mul_add(pi, *xi);
                    }
                }
                x[pe.rows()].copy_from_slice(&xq[..pe.n_local()]);
            }
            Ok((x, s))
        };
        let read = read();
        // Multi-process: no rank may reset (write) its PEs for the next run
        // while another still reads them here; every rank reaches the
        // barrier, also when its read failed.
        self.rt.barrier()?;
        let (x, s) = read?;
        let rel_residual = s[slot::LAST_RR].sqrt() / self.b_norm;
        // Relative residuals are those of the scaled system (the same).
        let true_rel_residual = true_residual(self.a, &self.b, &x) / self.b_norm;
        let x = if self.scale == 1.0 {
            x
        } else {
            x.into_iter().map(|v| v / self.scale).collect()
        };
        Ok(CgRun {
            x,
            iterations: report.iterations,
            rel_residual,
            true_rel_residual,
            converged: rel_residual <= self.cfg.tol,
            report: Some(report),
        })
    }
}

/// The power of two `s` that brings `max |b|` to [0.5, 1) when it is
/// outside [2⁻⁶⁴, 2⁶⁴] (sums of squares of the iteration then neither
/// underflow nor overflow); 1 otherwise — the common case solves exactly
/// the system given — and when `b` is zero, or `x₀ · s` would not be
/// finite.
pub(crate) fn rhs_scale(b: &[f64], x0: &[f64]) -> f64 {
    let m = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if m == 0.0 || (2f64.powi(-64)..=2f64.powi(64)).contains(&m) {
        return 1.0;
    }
    // m = f · 2^e with f in [0.5, 1): s = 2^-e (frexp by hand).
    // (Clamped so that s itself is finite: a subnormal max is brought to
    // about 1e-19, which is enough.)
    let e = (m.log2().floor() as i32 + 1).clamp(-1000, 1000);
    let s = 2f64.powi(-e);
    if x0.iter().any(|v| !(v * s).is_finite()) {
        return 1.0;
    }
    s
}

/// Zero-padded copy of `v` with `len` entries (`len ≥ v.len()`).
fn padded<T: Copy + Default>(v: &[T], len: usize) -> Vec<T> {
    let mut out = v.to_vec();
    out.resize(len.max(v.len()), T::default());
    out
}

fn dot(u: &[f64], v: &[f64]) -> f64 {
    u.iter().zip(v).map(|(a, b)| a * b).sum()
}

/// `‖b − A x‖`, f64.
fn true_residual(a: &Csr<f64>, b: &[f64], x: &[f64]) -> f64 {
    let ax = a.spmv(x);
    b.iter()
        .zip(&ax)
        .map(|(bi, ai)| (bi - ai) * (bi - ai))
        .sum::<f64>()
        .sqrt()
}

/// The host-side start of the recurrence (module docs), or the result when
/// there is nothing to iterate.
#[allow(clippy::too_many_arguments)]
fn initial_state(
    a: &Csr<f64>,
    plan: &HaloPlan<f64>,
    b: &[f64],
    x0: &[f64],
    dinv: &[f64],
    precond: bool,
    rec: Recurrence,
    cfg: &CgConfig,
    b_norm: f64,
    v_len: usize,
) -> Result<Start> {
    let n = a.n_rows();
    let done = |x: Vec<f64>, rel: f64, true_rel: f64| {
        Ok(Start::Done(Box::new(CgRun {
            x,
            iterations: 0,
            rel_residual: rel,
            true_rel_residual: true_rel,
            converged: rel <= cfg.tol,
            report: None,
        })))
    };
    if b_norm == 0.0 {
        return done(vec![0.0; n], 0.0, 0.0);
    }
    let ax = a.spmv(x0);
    let r: Vec<f64> = b.iter().zip(&ax).map(|(bi, ai)| bi - ai).collect();
    let rr = dot(&r, &r);
    if !rr.is_finite() {
        return Err(CgError::NonFinite {
            quantity: "r^T r",
            value: rr,
            iteration: 0,
        }
        .into());
    }
    let rel0 = rr.sqrt() / b_norm;
    if rel0 <= cfg.tol || cfg.max_iters == 0 {
        return done(x0.to_vec(), rel0, rel0);
    }
    let z: Vec<f64> = if precond {
        r.iter().zip(dinv).map(|(r, d)| r * d).collect()
    } else {
        r.clone()
    };
    let gamma = dot(&r, &z);
    let mut scalars = vec![0.0; slot::LEN];
    scalars[slot::RHO] = gamma;
    scalars[slot::LAST_RR] = rr;
    let w: Vec<f64> = match rec {
        Recurrence::Standard => vec![0.0; n],
        Recurrence::Single => {
            let w = a.spmv(&z);
            let delta = dot(&w, &z);
            if !delta.is_finite() {
                return Err(CgError::NonFinite {
                    quantity: "p^T A p",
                    value: delta,
                    iteration: 1,
                }
                .into());
            }
            if delta <= 0.0 {
                return Err(CgError::NotPositiveDefinite {
                    iteration: 1,
                    pap: delta,
                }
                .into());
            }
            scalars[slot::ALPHA] = gamma / delta;
            w
        }
    };
    let mut init = Initial {
        x: Vec::new(),
        r: Vec::new(),
        v: Vec::new(),
        y: Vec::new(),
        scalars,
    };
    for pe in plan.pes() {
        let rows = pe.rows();
        init.x.push(x0[rows.clone()].to_vec());
        init.r.push(r[rows.clone()].to_vec());
        init.y.push(w[rows.clone()].to_vec());
        // v[0] = p₀ = z₀ (Standard) or z₀ (single reduction), owned then
        // ghosts; v[1] (if any: `v_len` is one or two halves) is written
        // before it is read.
        let mut v = vec![0.0; v_len];
        v[..pe.n_local()].copy_from_slice(&z[rows]);
        for blk in pe.ghosts() {
            for (k, &gi) in blk.globals().iter().enumerate() {
                v[blk.start() + k] = z[gi as usize];
            }
        }
        init.v.push(v);
    }
    Ok(Start::Run(Box::new(init)))
}

/// Solves with `cfg` on `rt` (builds the graph, runs it once).
pub fn solve(rt: &Runtime, a: &Csr<f64>, cfg: CgConfig) -> Result<CgRun> {
    CgSolver::new(rt, a, cfg)?.run()
}

/// Emulator bodies: the same arithmetic as `kernels.cu` (row sums in stored
/// order, tile partials in row order), on the emulator's host-memory heaps.
///
/// SAFETY (for every `unsafe` below): 1. addresses come from the solver's
/// arguments, built from `SymBuffer::addr` of buffers sized for every index
/// used (`maxn` rows, `max_nnz` entries, `2 × vlen` for `v`, the send
/// lists, `slot::LEN` scalars, the allreduce partials), and the heaps
/// outlive the run; 2. the graph orders every write before every read or
/// overwrite of the same element (module docs, "Ordering"), so no two
/// bodies touch an element concurrently unless both only read it.
mod cpu {
    use super::{slot, GatherArgs, ReduceArgs, SpmvArgs, VecArgs};
    use super::{NON_FINITE, NOT_POSITIVE_DEFINITE};
    use crate::graph::CpuCtx;
    use crate::solvers::allreduce::{cpu_sum, Allreduce};

    /// Reads `base[i]`.
    ///
    /// # Safety
    /// `base + i` is in bounds of a live buffer no one writes concurrently.
    unsafe fn rd<T: Copy>(base: u64, i: usize) -> T {
        // SAFETY: the caller's contract.
        unsafe { *(base as *const T).add(i) }
    }

    /// Writes `base[i] = v`.
    ///
    /// # Safety
    /// `base + i` is in bounds of a live buffer no one accesses concurrently.
    unsafe fn wr<T>(base: u64, i: usize, v: T) {
        // SAFETY: the caller's contract.
        unsafe { *(base as *mut T).add(i) = v }
    }

    fn put_partials(n: u32, partials: u64, tile: u32, tiles: u32, acc: &[f64]) {
        for (j, &v) in acc.iter().enumerate() {
            let i = Allreduce::partial_index(n, tiles as usize, acc.len(), tile as usize, j);
            // SAFETY: module docs (this tile's partials).
            unsafe { wr(partials, i, v) };
        }
    }

    /// `z + β p`, the next direction: every place evaluates it alike, so
    /// the fused and unfused graphs give bitwise the same iterates. (Two
    /// roundings here, one in `kernels.cu`'s fma: the emulator and the GPU
    /// differ in the last bits anyway, their row sums do.)
    fn next_dir(z: f64, beta: f64, p: f64) -> f64 {
        z + beta * p
    }

    /// The single reduction's step of a row (`axpy`'s, and the merged
    /// SpMV's and gather's: the same expressions, so bitwise the same
    /// iterates): `s_n = w_n + β s_{n−1}`, `r_{n+1} = r_n − α s_n`,
    /// `z = M⁻¹ r`.
    fn sr_s(w: f64, beta: f64, s_old: f64) -> f64 {
        w + beta * s_old
    }
    fn sr_r(r: f64, alpha: f64, s: f64) -> f64 {
        r - alpha * s
    }
    /// # Safety
    /// With a preconditioner, `dinv + i` is in bounds of a live buffer.
    unsafe fn sr_z(r: f64, precond: bool, dinv: u64, i: usize) -> f64 {
        if precond {
            // SAFETY: the caller's contract.
            r * unsafe { rd::<f64>(dinv, i) }
        } else {
            r
        }
    }

    /// The merged single reduction's `z_{n+1}` of owned entry `c`, from
    /// `r_n`, `w_n` (halves of parity `n`) and `s_{n−1}` (the other half).
    ///
    /// # Safety
    /// `c` is an owned entry of this PE; the halves are not written now.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sr_next(
        r: u64,
        w: u64,
        s: u64,
        dinv: u64,
        precond: bool,
        stride: u64,
        n: u32,
        (alpha, beta): (f64, f64),
        c: usize,
    ) -> f64 {
        let (cur, old) = ((n % 2) as usize, ((n + 1) % 2) as usize);
        let st = stride as usize;
        // SAFETY: the caller's contract.
        unsafe {
            let si = sr_s(rd(w, cur * st + c), beta, rd(s, old * st + c));
            sr_z(sr_r(rd(r, cur * st + c), alpha, si), precond, dinv, c)
        }
    }

    /// α and β of iteration `k`.
    fn alpha_beta(scalars: u64, k: u32) -> (f64, f64) {
        // SAFETY: module docs (this PE's scalars; the slots of k are
        // rewritten only after every reader of k).
        unsafe {
            (
                rd(scalars, slot::ALPHA + (k % 2) as usize),
                rd(scalars, slot::BETA + (k % 2) as usize),
            )
        }
    }

    /// β of iteration `k` (its parity's slot of this PE's scalars).
    fn beta(scalars: u64, k: u32) -> f64 {
        // SAFETY: module docs (this PE's scalars; the slot of k is
        // rewritten only after every reader of k).
        unsafe { rd(scalars, slot::BETA + (k % 2) as usize) }
    }

    pub(super) fn spmv(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: SpmvArgs = ctx.args();
        let n = ctx.iteration;
        let par = if a.mode == 1 || a.mode == 3 {
            (n + 1) % 2
        } else {
            n % 2
        };
        let v = a.v + 8 * par as u64 * a.vlen;
        // Single reduction, the updates merged (mode 3): owned entries of
        // z_{n+1} formed from r_n, w_n, s_{n−1}; ghosts from v[(n + 1) % 2].
        let merged = a.mode == 3;
        let ab = if merged {
            alpha_beta(a.scalars, n)
        } else {
            (0.0, 0.0)
        };
        // The direction fused (mode 2, after iteration 0): owned entries of
        // p_n are z + β_{n−1} p_{n−1}, ghosts come from v[n % 2].
        let fused = a.mode == 2 && n > 0;
        let pold = a.v + 8 * ((n + 1) % 2) as u64 * a.vlen;
        let beta = if fused { beta(a.scalars, n - 1) } else { 0.0 };
        let lean = fused && a.lean != 0;
        // x's step here (lean 1) or in cg_xstep (2).
        let xin = fused && a.lean == 1;
        // SAFETY: module docs (scalars of this PE; α_{n−1}).
        let alpha: f64 = if xin {
            unsafe { rd(a.scalars, slot::ALPHA + ((n - 1) % 2) as usize) }
        } else {
            0.0
        };
        // SAFETY (the closure's reads): module docs (this PE's z, v halves).
        let p = |c: usize| -> f64 {
            unsafe {
                if merged && c < a.owned as usize {
                    sr_next(a.r, a.y, a.s, a.dinv, a.precond != 0, a.stride, n, ab, c)
                } else if fused && c < a.owned as usize {
                    next_dir(rd(a.z, c), beta, rd(pold, c))
                } else {
                    rd(v, c)
                }
            }
        };
        // The packed matrix's table of values (its buffer holds MAX_VALUES).
        let table: &[f64] = if a.compact != 0 {
            // SAFETY: module docs (this PE's table, written before the run).
            unsafe { std::slice::from_raw_parts(a.val as *const f64, super::MAX_VALUES) }
        } else {
            &[]
        };
        let mut acc = [0.0f64; 3];
        for row in a.lo as usize..a.hi as usize {
            let mut s = 0.0f64;
            if a.compact == 2 {
                // Rows as patterns (super::compact::RowPatterns): a byte a
                // row, the patterns' u32 offsets and their packed words.
                // SAFETY: module docs (this PE's matrix, its v half, its
                // rows; patterns index the MAX_PATTERNS + 1 offsets).
                let id: u8 = unsafe { rd(a.row_ptr, row) };
                let (lo, hi): (u32, u32) = unsafe {
                    (
                        rd(a.pattern_ptr, id as usize),
                        rd(a.pattern_ptr, id as usize + 1),
                    )
                };
                for k in lo as usize..hi as usize {
                    // SAFETY: as above.
                    let word: u32 = unsafe { rd(a.col, k) };
                    let (c, val) = crate::solvers::cg::compact::decode(row, word, table);
                    s += val * p(c as usize);
                }
            } else if a.compact != 0 {
                // The packed matrix (super::compact): u32 row offsets, one
                // word a nonzero, the table of values in `val`.
                // SAFETY: module docs (this PE's matrix, its v half, its
                // rows; codes index the table's MAX_VALUES entries).
                let (lo, hi): (u32, u32) = unsafe { (rd(a.row_ptr, row), rd(a.row_ptr, row + 1)) };
                for k in lo as usize..hi as usize {
                    // SAFETY: as above.
                    let word: u32 = unsafe { rd(a.col, k) };
                    let (c, val) = crate::solvers::cg::compact::decode(row, word, table);
                    s += val * p(c as usize);
                }
            } else {
                // SAFETY: module docs (this PE's matrix, its v half, its rows).
                let (lo, hi): (u64, u64) = unsafe { (rd(a.row_ptr, row), rd(a.row_ptr, row + 1)) };
                for k in lo as usize..hi as usize {
                    // SAFETY: as above.
                    s += unsafe { rd::<f64>(a.val, k) * p(rd::<u32>(a.col, k) as usize) };
                }
            }
            if merged {
                // The row's step (axpy's) and its partials.
                let (alpha, beta) = ab;
                let st = a.stride as usize;
                let (cur, nxt) = ((n % 2) as usize, ((n + 1) % 2) as usize);
                let pc = a.precond != 0;
                // SAFETY: module docs (this tile's rows of every half).
                unsafe {
                    let r0: f64 = rd(a.r, cur * st + row);
                    let si = sr_s(rd(a.y, cur * st + row), beta, rd(a.s, nxt * st + row));
                    let pi = next_dir(sr_z(r0, pc, a.dinv, row), beta, rd(a.p, row));
                    let ri = sr_r(r0, alpha, si);
                    let zi = sr_z(ri, pc, a.dinv, row);
                    wr(a.p, row, pi);
                    wr(a.s, cur * st + row, si);
                    wr(a.x, row, rd::<f64>(a.x, row) + alpha * pi);
                    wr(a.r, nxt * st + row, ri);
                    wr(a.y, nxt * st + row, s);
                    acc[0] += ri * zi;
                    acc[1] += s * zi;
                    acc[2] += ri * ri;
                }
                continue;
            }
            let vi = p(row);
            // SAFETY: as above.
            unsafe { wr(a.y, row, s) };
            if lean {
                // Lean (kernels.cu): p_n stored into v[n % 2] (no SpMV of
                // n reads its owned entries), x += α_{n−1} p_{n−1}.
                // SAFETY: module docs (this tile's rows of v, x).
                unsafe {
                    wr(v, row, vi);
                    if xin {
                        let x: f64 = rd(a.x, row);
                        wr(a.x, row, alpha.mul_add(rd(pold, row), x));
                    }
                }
            }
            if a.mode != 1 {
                acc[0] += vi * s;
            } else {
                // SAFETY: as above (r of this tile's rows).
                let ri: f64 = unsafe { rd(a.r, row) };
                acc[0] += ri * vi;
                acc[1] += s * vi;
                acc[2] += ri * ri;
            }
        }
        put_partials(n, a.partials, a.tile, a.tiles, &acc[..a.width as usize]);
        Ok(())
    }

    pub(super) fn update(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: VecArgs = ctx.args();
        let n = ctx.iteration;
        // SAFETY: module docs (scalars of this PE).
        let alpha: f64 = unsafe { rd(a.scalars, slot::ALPHA + (n % 2) as usize) };
        let p = a.v + 8 * (n % 2) as u64 * a.vlen;
        // The direction fused (after iteration 0): p_n = z + β_{n−1} p_{n−1}
        // formed before z is overwritten, and stored.
        let form = a.fused != 0 && n > 0;
        let pold = a.v + 8 * ((n + 1) % 2) as u64 * a.vlen;
        let zsrc = if a.precond != 0 { a.z } else { a.r };
        let beta = if form { beta(a.scalars, n - 1) } else { 0.0 };
        let mut acc = [0.0f64; 2];
        for i in a.lo as usize..a.hi as usize {
            // SAFETY: module docs (this tile's rows of x, r, q, p, z).
            unsafe {
                // Lean: the SpMV stored p_n and applies x's step.
                if a.lean == 0 {
                    let pi: f64 = if form {
                        let pi = next_dir(rd(zsrc, i), beta, rd(pold, i));
                        wr(p, i, pi);
                        pi
                    } else {
                        rd(p, i)
                    };
                    // (An fma, as the device's and the lean SpMV's.)
                    wr(a.x, i, alpha.mul_add(pi, rd::<f64>(a.x, i)));
                }
                let ri = rd::<f64>(a.r, i) - alpha * rd::<f64>(a.y, i);
                wr(a.r, i, ri);
                if a.precond != 0 {
                    let zi = ri * rd::<f64>(a.dinv, i);
                    wr(a.z, i, zi);
                    acc[0] += ri * zi;
                    acc[1] += ri * ri;
                } else {
                    acc[0] += ri * ri;
                }
            }
        }
        put_partials(n, a.partials, a.tile, a.tiles, &acc[..a.width as usize]);
        Ok(())
    }

    /// `cg_xstep`: x += α_{n−1} p_{n−1} on the tile's rows (the lean
    /// SpMV's fma, apart).
    pub(super) fn xstep(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: VecArgs = ctx.args();
        let n = ctx.iteration;
        if a.fused == 0 {
            // The separate single reduction: x += α_n p_n (p_n stored by
            // this tile's axpy of n; the axpy's expression).
            let (alpha, _) = alpha_beta(a.scalars, n);
            for i in a.lo as usize..a.hi as usize {
                // SAFETY: module docs (this tile's rows of x and p, which
                // only its axpy of n + 1, after this task, rewrites).
                unsafe {
                    let x: f64 = rd(a.x, i);
                    wr(a.x, i, x + alpha * rd::<f64>(a.p, i));
                }
            }
            return Ok(());
        }
        if n == 0 {
            return Ok(());
        }
        // SAFETY: module docs (scalars of this PE; α_{n−1}).
        let alpha: f64 = unsafe { rd(a.scalars, slot::ALPHA + ((n - 1) % 2) as usize) };
        let pold = a.v + 8 * ((n + 1) % 2) as u64 * a.vlen;
        for i in a.lo as usize..a.hi as usize {
            // SAFETY: module docs (this tile's rows of x and of v's half
            // p_{n−1}, which only this tile's next SpMV overwrites).
            unsafe {
                let x: f64 = rd(a.x, i);
                wr(a.x, i, alpha.mul_add(rd(pold, i), x));
            }
        }
        Ok(())
    }

    pub(super) fn direction(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: VecArgs = ctx.args();
        let n = ctx.iteration;
        let beta = beta(a.scalars, n);
        let p = a.v + 8 * (n % 2) as u64 * a.vlen;
        let pn = a.v + 8 * ((n + 1) % 2) as u64 * a.vlen;
        let z = if a.precond != 0 { a.z } else { a.r };
        for i in a.lo as usize..a.hi as usize {
            // SAFETY: module docs (this tile's rows of both halves of v).
            unsafe { wr(pn, i, next_dir(rd(z, i), beta, rd(p, i))) };
        }
        Ok(())
    }

    pub(super) fn axpy(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: VecArgs = ctx.args();
        let n = ctx.iteration;
        let (alpha, beta) = alpha_beta(a.scalars, n);
        let z = a.v + 8 * (n % 2) as u64 * a.vlen;
        let zn = a.v + 8 * ((n + 1) % 2) as u64 * a.vlen;
        for i in a.lo as usize..a.hi as usize {
            // SAFETY: module docs (this tile's rows).
            unsafe {
                let pi = next_dir(rd(z, i), beta, rd(a.p, i));
                let si = sr_s(rd(a.y, i), beta, rd(a.s, i));
                wr(a.p, i, pi);
                wr(a.s, i, si);
                // (x's step here, or in xstep: VecArgs::lean.)
                if a.lean == 0 {
                    wr(a.x, i, rd::<f64>(a.x, i) + alpha * pi);
                }
                let ri = sr_r(rd(a.r, i), alpha, si);
                wr(a.r, i, ri);
                wr(zn, i, sr_z(ri, a.precond != 0, a.dinv, i));
            }
        }
        Ok(())
    }

    pub(super) fn gather(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: GatherArgs = ctx.args();
        let n = ctx.iteration;
        let off = ((n + 1) % 2) as usize * a.vlen as usize;
        let cur = (n % 2) as usize * a.vlen as usize;
        let dst = ctx.peer_addr(a.v, a.to_pe);
        let beta = if a.fused != 0 {
            beta(a.scalars, n)
        } else {
            0.0
        };
        let ab = if a.fused == 2 {
            alpha_beta(a.scalars, n)
        } else {
            (0.0, 0.0)
        };
        for k in 0..a.count as usize {
            // SAFETY: module docs (the send list, its entries of z and v; the
            // receiver's ghost block of the same half, which no one else
            // touches now).
            unsafe {
                let i = rd::<u32>(a.idx, k) as usize;
                let value = if a.fused == 2 {
                    sr_next(a.r, a.w, a.s, a.dinv, a.precond != 0, a.stride, n, ab, i)
                } else if a.fused != 0 {
                    next_dir(rd(a.z, i), beta, rd(a.v, cur + i))
                } else {
                    rd::<f64>(a.v, off + i)
                };
                wr(dst, off + a.dest as usize + k, value);
            }
        }
        Ok(())
    }

    /// Records a failure for the host and returns its code.
    fn fail(scalars: u64, code: u32, what: usize, value: f64, iteration: u32) -> u32 {
        // SAFETY: module docs (this PE's scalars; the run ends now).
        unsafe {
            wr(scalars, slot::FAIL_VALUE, value);
            wr(scalars, slot::FAIL_WHAT, what as f64);
            wr(scalars, slot::FAIL_ITER, iteration as f64);
        }
        code
    }

    pub(super) fn reduce(ctx: &CpuCtx<'_>) -> Result<(), u32> {
        let a: ReduceArgs = ctx.args();
        let s = cpu_sum(ctx, &a.ar);
        let n = ctx.iteration;
        let sc = a.scalars;
        let cur = (n % 2) as usize;
        let nxt = ((n + 1) % 2) as usize;
        // SAFETY (every rd/wr of `sc`): module docs (this PE's scalars,
        // indexed by parity).
        match a.stage {
            1 => {
                let pap = s[0];
                let k = n + 1;
                if !pap.is_finite() {
                    return Err(fail(sc, NON_FINITE, 0, pap, k));
                }
                if pap <= 0.0 {
                    return Err(fail(sc, NOT_POSITIVE_DEFINITE, 0, pap, k));
                }
                let alpha = unsafe { rd::<f64>(sc, slot::RHO + cur) } / pap;
                if !alpha.is_finite() {
                    return Err(fail(sc, NON_FINITE, 1, alpha, k));
                }
                unsafe { wr(sc, slot::ALPHA + cur, alpha) };
            }
            2 => {
                let (rz, rr) = if a.precond != 0 {
                    (s[0], s[1])
                } else {
                    (s[0], s[0])
                };
                let k = n + 1;
                unsafe { wr(sc, slot::LAST_RR, rr) };
                if !rr.is_finite() {
                    return Err(fail(sc, NON_FINITE, 3, rr, k));
                }
                if rr.sqrt() / a.b_norm <= a.tol {
                    return ctx.finish_at(n + 1);
                }
                if n + 1 == ctx.iterations {
                    return Ok(());
                }
                if !rz.is_finite() {
                    return Err(fail(sc, NON_FINITE, 4, rz, k));
                }
                let beta = rz / unsafe { rd::<f64>(sc, slot::RHO + cur) };
                if !beta.is_finite() {
                    return Err(fail(sc, NON_FINITE, 2, beta, k));
                }
                unsafe {
                    wr(sc, slot::RHO + nxt, rz);
                    wr(sc, slot::BETA + cur, beta);
                }
            }
            _ => {
                let (gamma, delta, rr) = if a.precond != 0 {
                    (s[0], s[1], s[2])
                } else {
                    (s[0], s[1], s[0])
                };
                unsafe { wr(sc, slot::LAST_RR, rr) };
                if !rr.is_finite() {
                    return Err(fail(sc, NON_FINITE, 3, rr, n + 1));
                }
                if rr.sqrt() / a.b_norm <= a.tol {
                    return ctx.finish_at(n + 1);
                }
                if n + 1 == ctx.iterations {
                    return Ok(());
                }
                let k = n + 2;
                let beta = gamma / unsafe { rd::<f64>(sc, slot::RHO + cur) };
                if !beta.is_finite() {
                    return Err(fail(sc, NON_FINITE, 2, beta, k));
                }
                let pap = delta - beta * gamma / unsafe { rd::<f64>(sc, slot::ALPHA + cur) };
                if !pap.is_finite() {
                    return Err(fail(sc, NON_FINITE, 0, pap, k));
                }
                if pap <= 0.0 {
                    return Err(fail(sc, NOT_POSITIVE_DEFINITE, 0, pap, k));
                }
                let alpha = gamma / pap;
                if !alpha.is_finite() {
                    return Err(fail(sc, NON_FINITE, 1, alpha, k));
                }
                unsafe {
                    wr(sc, slot::RHO + nxt, gamma);
                    wr(sc, slot::ALPHA + nxt, alpha);
                    wr(sc, slot::BETA + nxt, beta);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ghost column an SpMV tile reads has an edge (distance 1) from
    /// the one gather chunk that writes it, the chunks of a send list cover
    /// it once, and every chunk waits for (and holds back by 2 iterations)
    /// the direction tiles that produce the entries it sends — with the
    /// direction fused, for its PE's second reduce (β_n, after every update
    /// tile), holding back by one iteration the update tiles whose z and
    /// p_n it reads; and there every SpMV tile waits for that reduce of the
    /// previous iteration. (A chunk edge to the wrong receiver tiles still
    /// gives the right x on the emulator most of the time: only this check
    /// sees it.)
    /// Auto fuses the direction up to 80 bytes of L2 a row on one GPU with
    /// plain CSR (on the H200's 60 MiB: the measured 64³ and 724² fused,
    /// 96³ and 1024² separate), 48 with the matrix packed (1024² fused,
    /// 112³ and 1448² separate), 24 with its rows as patterns (1448² and
    /// 128³ fused, 2048² separate), and always on the emulator; the
    /// explicit forms are kept.
    /// The vectors' L2 window on the H200 (37.5 MiB may be set aside): 2D
    /// 1024²'s 42 MB whole, the Jacobi-preconditioned 50 MB by its head,
    /// single reduction's 57 MB and 128³'s 84 MB none; nothing without a
    /// set-aside.
    #[test]
    fn the_l2_window_keeps_all_the_head_or_none_of_the_vectors() {
        let max = 37 << 20 | 512 << 10;
        assert_eq!(l2_window_bytes(41_943_560, max), 41_943_560);
        assert_eq!(l2_window_bytes(50_331_648, max), max);
        assert_eq!(l2_window_bytes(max * 14 / 10, max), max);
        assert_eq!(l2_window_bytes(56_623_104, max), 0);
        assert_eq!(l2_window_bytes(88_080_384, max), 0);
        assert_eq!(l2_window_bytes(1, 0), 0);
        assert_eq!(l2_window_bytes(0, max), 0);
    }

    #[test]
    fn auto_fuses_the_direction_while_the_rows_fit_l2() {
        let l2 = Some(60 << 20);
        let auto = DirectionForm::Auto;
        use MatrixForm::{Packed, Patterns, Plain};
        for form in [Plain, Packed, Patterns] {
            assert!(auto.fused_with_l2(64 * 64 * 64, l2, form, false));
            assert!(auto.fused_with_l2(724 * 724, l2, form, false));
            assert!(auto.fused_with_l2(786_432, l2, form, false));
            assert!(auto.fused_with_l2(usize::MAX, None, form, false));
            assert!(!auto.fused_with_l2(usize::MAX, l2, form, false));
            assert!(DirectionForm::Fused.fused_with_l2(1 << 30, l2, form, false));
            assert!(!DirectionForm::Separate.fused_with_l2(1, None, form, false));
        }
        assert!(!auto.fused_with_l2(786_433, l2, Plain, false));
        assert!(!auto.fused_with_l2(96 * 96 * 96, l2, Plain, false));
        assert!(!auto.fused_with_l2(1024 * 1024, l2, Plain, false));
        assert!(auto.fused_with_l2(1024 * 1024, l2, Packed, false));
        assert!(auto.fused_with_l2(1_310_720, l2, Packed, false));
        assert!(!auto.fused_with_l2(1_310_721, l2, Packed, false));
        assert!(!auto.fused_with_l2(112 * 112 * 112, l2, Packed, false));
        assert!(!auto.fused_with_l2(1448 * 1448, l2, Packed, false));
        assert!(auto.fused_with_l2(1448 * 1448, l2, Patterns, false));
        assert!(auto.fused_with_l2(128 * 128 * 128, l2, Patterns, false));
        assert!(auto.fused_with_l2(2_621_440, l2, Patterns, false));
        assert!(!auto.fused_with_l2(2_621_441, l2, Patterns, false));
        assert!(!auto.fused_with_l2(2048 * 2048, l2, Patterns, false));
        // Lean updates with the rows as patterns: fused at every size
        // (measured to 16.8 M rows); the other forms keep their limits.
        assert!(auto.fused_with_l2(4096 * 4096, l2, Patterns, true));
        assert!(auto.fused_with_l2(usize::MAX, l2, Patterns, true));
        assert!(!auto.fused_with_l2(1_310_721, l2, Packed, true));
        assert!(!auto.fused_with_l2(786_433, l2, Plain, true));
        assert!(!DirectionForm::Separate.fused_with_l2(1, l2, Patterns, true));
        // The solver reports what it chose: the emulator fuses Standard;
        // single reduction has no direction phase.
        let a = super::super::poisson2d(20).unwrap();
        let rt = Runtime::builder()
            .emulator(2)
            .symmetric_heap_bytes(4 * heap_bytes_needed(&a, 1).unwrap())
            .build()
            .unwrap();
        let std = CgSolver::new(&rt, &a, CgConfig::new(1e-8, 100)).unwrap();
        assert_eq!(std.direction_fused(), Some(true));
        let sep = CgConfig {
            direction: DirectionForm::Separate,
            ..CgConfig::new(1e-8, 100)
        };
        assert_eq!(
            CgSolver::new(&rt, &a, sep).unwrap().direction_fused(),
            Some(false)
        );
        let sr = CgConfig {
            variant: CgVariant::SingleReduction,
            ..CgConfig::new(1e-8, 100)
        };
        assert_eq!(CgSolver::new(&rt, &a, sr).unwrap().direction_fused(), None);
    }

    #[test]
    fn every_ghost_read_waits_for_the_gather_chunk_that_writes_it() {
        use std::collections::HashSet;
        let a = super::super::poisson3d(48).unwrap();
        for (pes, comm, fuse) in [
            (2, 3, false),
            (3, 4, false),
            (3, 2, false),
            (2, 1, false),
            (2, 3, true),
            (3, 2, true),
            (2, 1, true),
        ] {
            let rt = Runtime::builder()
                .emulator(2)
                .pes(pes)
                .comm_blocks(comm)
                .symmetric_heap_bytes(heap_bytes_needed(&a, pes).unwrap())
                .build()
                .unwrap();
            let c = CgConfig {
                direction: if fuse {
                    DirectionForm::Fused
                } else {
                    DirectionForm::Separate
                },
                ..CgConfig::new(0.0, 3)
            };
            let s = CgSolver::new(&rt, &a, c).unwrap();
            assert_eq!(s.rec, Recurrence::Standard);
            let g = &s.graph;
            let kind = |t: TaskId| g.kinds()[g.task_kind(t).0 as usize].name().to_string();
            let edges: HashSet<(usize, usize, u32)> = g
                .edges()
                .iter()
                .map(|e| (e.from.index(), e.to.index(), e.distance))
                .collect();
            let tasks: Vec<TaskId> = (0..g.num_tasks()).map(TaskId::from_index).collect();
            let of = |name: &str| {
                tasks
                    .iter()
                    .copied()
                    .filter(|&t| kind(t) == name)
                    .collect::<Vec<_>>()
            };
            let gathers: Vec<(TaskId, GatherArgs)> = of("cg_gather")
                .into_iter()
                .map(|t| (t, *bytemuck::from_bytes::<GatherArgs>(g.task_args(t))))
                .collect();
            // The tiles that produce v: direction tiles, or with the
            // direction fused update tiles (there are no direction tiles).
            let dirs: Vec<(TaskId, VecArgs)> = of("cg_direction")
                .into_iter()
                .map(|t| (t, *bytemuck::from_bytes::<VecArgs>(g.task_args(t))))
                .collect();
            let updates: Vec<(TaskId, VecArgs)> = of("cg_update")
                .into_iter()
                .map(|t| (t, *bytemuck::from_bytes::<VecArgs>(g.task_args(t))))
                .collect();
            assert_eq!(dirs.is_empty(), fuse);
            let producers = if fuse { &updates } else { &dirs };
            // Each PE's second reduce (stage 2: β).
            let beta_reduce = |q: usize| {
                let r: Vec<TaskId> = of("cg_reduce")
                    .into_iter()
                    .filter(|&t| {
                        g.pe_of(t) == q as u32
                            && bytemuck::from_bytes::<ReduceArgs>(g.task_args(t)).stage == 2
                    })
                    .collect();
                assert_eq!(r.len(), 1);
                r[0]
            };
            let what = format!("{pes} PEs, {comm} comm blocks, direction fused: {fuse}");
            // Chunks: each send list covered once, in order; each chunk
            // waits for its entries' producer tiles.
            for (q, pe) in s.plan.pes().iter().enumerate() {
                for send in pe.sends() {
                    let mut mine: Vec<&(TaskId, GatherArgs)> = gathers
                        .iter()
                        .filter(|(t, ga)| {
                            g.pe_of(*t) == q as u32 && ga.to_pe as usize == send.receiver()
                        })
                        .collect();
                    mine.sort_by_key(|(_, ga)| ga.dest);
                    let mut at = send.dest_start();
                    for (t, ga) in &mine {
                        assert_eq!(
                            ga.dest as usize, at,
                            "{what}: chunks of PE {q}'s list leave a gap"
                        );
                        let k0 = at - send.dest_start();
                        assert_eq!(ga.fused, fuse as u32);
                        if fuse {
                            assert!(
                                edges.contains(&(beta_reduce(q).index(), t.index(), 0)),
                                "{what}: chunk without the reduce that gives beta"
                            );
                        }
                        for &i in &send.indices()[k0..k0 + ga.count as usize] {
                            let (p, _) = producers
                                .iter()
                                .find(|(p, va)| {
                                    g.pe_of(*p) == q as u32 && (va.lo..va.hi).contains(&i)
                                })
                                .expect("a producer tile owns every row");
                            if fuse {
                                assert!(
                                    edges.contains(&(t.index(), p.index(), 1)),
                                    "{what}: chunk without its back edge"
                                );
                            } else {
                                assert!(
                                    edges.contains(&(p.index(), t.index(), 0)),
                                    "{what}: chunk without its producer"
                                );
                                assert!(
                                    edges.contains(&(t.index(), p.index(), 2)),
                                    "{what}: chunk without its back edge"
                                );
                            }
                        }
                        at += ga.count as usize;
                    }
                    assert_eq!(
                        at,
                        send.dest_start() + send.indices().len(),
                        "{what}: list not covered"
                    );
                    if comm >= 2 && send.indices().len() >= 2 * GATHER_CHUNK_ENTRIES {
                        assert!(
                            mine.len() > 1,
                            "{what}: a {}-entry list in one chunk",
                            send.indices().len()
                        );
                    }
                }
            }
            // Every ghost read waits for the chunk that writes that ghost.
            for t in of("cg_spmv") {
                let sa = *bytemuck::from_bytes::<SpmvArgs>(g.task_args(t));
                let r = g.pe_of(t) as usize;
                assert_eq!(sa.mode, if fuse { 2 } else { 0 });
                if fuse {
                    assert!(
                        edges.contains(&(beta_reduce(r).index(), t.index(), 1)),
                        "{what}: SpMV tile {} of PE {r} without the previous beta",
                        sa.tile
                    );
                }
                let rp = s.plan.pe(r);
                let m = rp.matrix();
                let lo = m.row_ptr()[sa.lo as usize] as usize;
                let hi = m.row_ptr()[sa.hi as usize] as usize;
                for &c in &m.col_idx()[lo..hi] {
                    if (c as usize) < rp.n_local() {
                        continue;
                    }
                    let writers: Vec<&(TaskId, GatherArgs)> = gathers
                        .iter()
                        .filter(|(_, ga)| {
                            ga.to_pe as usize == r && (ga.dest..ga.dest + ga.count).contains(&c)
                        })
                        .collect();
                    assert_eq!(writers.len(), 1, "{what}: ghost column {c} of PE {r}");
                    let w = writers[0].0;
                    assert!(
                        edges.contains(&(w.index(), t.index(), 1)),
                        "{what}: SpMV tile {} of PE {r} reads ghost {c} without waiting for {:?}",
                        sa.tile,
                        g.name(w)
                    );
                }
            }
        }
    }

    #[test]
    fn gather_chunks_cover_the_list_in_order_and_are_never_too_small() {
        assert_eq!(gather_chunks(0, 4), vec![0..0]);
        assert_eq!(gather_chunks(1000, 4), vec![0..1000]);
        assert_eq!(gather_chunks(2047, 4), vec![0..2047]);
        assert_eq!(gather_chunks(2048, 4), vec![0..1024, 1024..2048]);
        assert_eq!(gather_chunks(16384, 1), vec![0..16384]);
        for (n, comm) in [(16384, 4), (16383, 3), (5000, 8), (65536, 2)] {
            let c = gather_chunks(n, comm);
            assert!(c.len() <= comm);
            assert_eq!(c.first().unwrap().start, 0);
            assert_eq!(c.last().unwrap().end, n);
            assert!(c.windows(2).all(|w| w[0].end == w[1].start));
            assert!(
                c.iter().all(|r| r.len() >= GATHER_CHUNK_ENTRIES),
                "{n} {comm}: {c:?}"
            );
        }
    }

    #[test]
    fn x_step_is_apart_by_default_where_the_vectors_fit_in_l2() {
        // The H200's L2 (50 MiB): 2D 1024² (42 MB of vectors) apart, 128³
        // (84 MB) in the SpMV — as measured (X_STEP_APART_L2_BYTES_PER_ROW).
        let l2 = Some(50 << 20);
        assert!(x_step_apart_by_default(1 << 20, l2));
        assert!(x_step_apart_by_default(64 * 64 * 64, l2));
        assert!(!x_step_apart_by_default(128 * 128 * 128, l2));
        assert!(x_step_apart_by_default(usize::MAX, None));
        assert!(!x_step_apart_by_default(usize::MAX, l2));
    }

    #[test]
    fn default_lanes_give_about_eight_nonzeros_a_lane() {
        // 5- and 7-point Poisson: one lane a row (the measured best).
        assert_eq!(default_spmv_lanes(5), 1);
        assert_eq!(default_spmv_lanes(7), 1);
        assert_eq!(default_spmv_lanes(16), 2);
        // 27-point: 4 lanes; very dense rows: at most a warp.
        assert_eq!(default_spmv_lanes(27), 4);
        assert_eq!(default_spmv_lanes(1000), 32);
        assert_eq!(default_spmv_lanes(0), 1);
    }
}
