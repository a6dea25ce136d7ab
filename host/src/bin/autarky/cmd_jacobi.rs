//! `autarky jacobi2d` / `autarky jacobi3d`: a CPU-free Jacobi solve
//! ([`autarky::solvers::jacobi`]) of a default problem, with its norms,
//! iterations and time per iteration.
//!
//! The default problem: the interior starts at 0 and the Dirichlet layer
//! holds `g = 1 + ½·sin(2πx/n)·cos(2πy/n)` (3D: times `cos(2πz/n)`), so the
//! solve relaxes towards a smooth harmonic field. With `--periodic` every
//! axis wraps, there is no Dirichlet layer, and the interior starts at the
//! same `g` instead (else a periodic solve from 0 would stay 0).

use std::f64::consts::PI;

use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver, Precision};
use autarky::solvers::jacobi_ref::{Boundary, JacobiProblem, Stencil};
use autarky::{RunOptions, Runtime};
use serde_json::json;

use crate::cmd_dag::iterations_parser;
use crate::memory::{gib, host_available};
use crate::{number_text, plural, CliError, Ctx};

/// How PEs reach each other, on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportArg {
    /// Every PE in this process (virtual PEs, or --gpus GPUs).
    Local,
    /// One process per MPI rank (`mpirun -n R autarky …`), one GPU per
    /// rank, --pes PEs per rank, peers through CUDA IPC (needs a build with
    /// `--features mpi`).
    Ipc,
    /// One process per MPI rank, one GPU and one PE per rank (--pes 1),
    /// peers through NVSHMEM: load/store where reachable, puts and signals
    /// otherwise (needs a build with `--features nvshmem` and NVSHMEM at
    /// run time: AUTARKY_NVSHMEM_DIR).
    Nvshmem,
}

impl TransportArg {
    /// The library's transport.
    pub fn transport(self) -> autarky::Transport {
        match self {
            TransportArg::Local => autarky::Transport::InProcess,
            TransportArg::Ipc => autarky::Transport::MpiIpc,
            TransportArg::Nvshmem => autarky::Transport::Nvshmem,
        }
    }
}

/// Ranks of the MPI job this process was started in (from the launcher's
/// environment), 1 outside one.
fn launcher_ranks() -> u32 {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// Element type on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PrecisionArg {
    /// 32-bit floats.
    F32,
    /// 64-bit floats.
    F64,
}

impl PrecisionArg {
    fn precision(self) -> Precision {
        match self {
            PrecisionArg::F32 => Precision::F32,
            PrecisionArg::F64 => Precision::F64,
        }
    }
    fn bytes(self) -> u64 {
        match self {
            PrecisionArg::F32 => 4,
            PrecisionArg::F64 => 8,
        }
    }
    fn name(self) -> &'static str {
        match self {
            PrecisionArg::F32 => "f32",
            PrecisionArg::F64 => "f64",
        }
    }
}

/// What both Jacobi commands take.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// Interior cells along every axis: N² for jacobi2d, N³ for jacobi3d
    /// (N ≥ 1); the solve must fit in memory.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    size: u64,
    /// Most iterations (1..=2147483647).
    #[arg(long, default_value_t = 1000, value_parser = iterations_parser())]
    iters: u32,
    /// Compute the update norm ‖a_new − a‖₂ every C iterations (and at the
    /// last one); 0: never (no global synchronisation). Iterations are
    /// numbered from 0: with C = 100 the checks are of iterations 99, 199, …
    #[arg(long, value_name = "C", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(0..=autarky::abi::MAX_ITERATIONS as i64))]
    check_every: u32,
    /// Stop once a checked norm is at most T (finite, ≥ 0; needs
    /// --check-every > 0). Every PE stops at the same iteration, one
    /// synchronisation (S sweeps) after the one whose check met T: tiles
    /// may run that far ahead of the check. Not reached within --iters:
    /// the result is printed and the status is 4.
    #[arg(long, value_name = "T", value_parser = parse_tol, allow_hyphen_values = true)]
    tol: Option<f64>,
    /// Processing elements (virtual PEs on one GPU), 1..=16.
    #[arg(long, value_name = "P", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=autarky::abi::MAX_LOCAL_PES as i64))]
    pes: u32,
    /// GPUs to spread the PEs over (devices 0..G of this process, every
    /// pair peers; --pes must be a multiple of G). GPU only.
    #[arg(long, value_name = "G", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    gpus: u32,
    /// `local`: every PE in this process; `ipc`: one process per rank
    /// under mpirun (`mpirun -n 2 autarky jacobi2d … --transport ipc`),
    /// --pes PEs per rank; `nvshmem`: likewise, one PE per rank, peers
    /// through NVSHMEM.
    #[arg(long, value_enum, default_value_t = TransportArg::Local)]
    transport: TransportArg,
    /// Element type.
    #[arg(long, value_enum, default_value_t = PrecisionArg::F32)]
    precision: PrecisionArg,
    /// Every axis wraps around (no Dirichlet boundary).
    #[arg(long)]
    periodic: bool,
    /// Write a device trace of the run to FILE (Chrome trace JSON; with
    /// --json the summary, including the compute blocks' waits for
    /// neighbours and halos, is in the output).
    #[arg(long, value_name = "FILE")]
    trace: Option<std::path::PathBuf>,
    /// Records each block's trace ring keeps (with --trace; a power of
    /// two). A block that records more keeps the newest; the rest are
    /// reported as dropped.
    #[arg(long, value_name = "N", default_value_t = autarky::TraceOptions::DEFAULT_RECORDS,
          value_parser = super::cmd_dag::trace_records_parser, requires = "trace")]
    trace_records: u32,
    /// Comm blocks per PE, 1..=64 (default: 1 for one PE; for virtual PEs
    /// of one GPU one per --pulse-chunk cells of the largest halo pulse, at
    /// most 16; 32 when the PEs span GPUs). With more than one,
    /// each halo pulse is split into chunks of at least --pulse-chunk
    /// cells, copied by different comm blocks at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    comm_blocks: Option<u32>,
    /// Sweeps per synchronisation, 1..=4 (temporal blocking: ghosts S deep,
    /// each tile computes S sweeps from one read; after the same number of
    /// sweeps the grid is bitwise that of 1 — the norms too when --tile is
    /// the same, since the default tiles depend on S — but with --tol the
    /// run stops S sweeps after the converged check's). jacobi2d --stencil
    /// 5 (S up to 4) and jacobi3d --stencil 7 (S = 2) only; every PE needs
    /// at least S cells along each axis it exchanges halos on; --iters and
    /// --check-every must be multiples of S.
    #[arg(long, value_name = "S", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=4))]
    steps_per_sync: u32,
    /// Least cells in a chunk of a split pulse (at least 1).
    #[arg(long, value_name = "CELLS",
          default_value_t = autarky::solvers::jacobi::PULSE_CHUNK_CELLS as u64,
          value_parser = clap::value_parser!(u64).range(1..=u64::MAX))]
    pulse_chunk: u64,
}

/// Solve a 2D Jacobi problem (5- or 9-point) on a task graph of pinned
/// tiles, with the convergence check inside the kernel.
#[derive(Debug, clap::Args)]
pub struct Args2d {
    #[command(flatten)]
    common: Common,
    /// The stencil: 5 (faces) or 9 (faces and diagonals).
    #[arg(long, value_name = "5|9", default_value = "5", value_parser = parse_stencil_2d)]
    stencil: Stencil,
    /// Tile shape in cells, TYxTX (default: chosen from the grid). With
    /// --steps-per-sync above 1 on small grids (under 2¹⁹ cells a PE, up
    /// to 724²) the default tiles run in 256-thread blocks whatever
    /// AUTARKY_THREADS_PER_BLOCK says; a tile given here runs at the
    /// runtime's block shape. --json reports `threads_per_block`.
    #[arg(long, value_name = "TYxTX", value_parser = parse_tile::<2>)]
    tile: Option<[usize; 2]>,
    /// PE grid, PYxPX (their product is --pes; default: the split with the
    /// least halo).
    #[arg(long, value_name = "PYxPX", value_parser = parse_pe_grid::<2>)]
    pe_grid: Option<[usize; 2]>,
}

/// Solve a 3D Jacobi problem (7- or 27-point) on a task graph of pinned
/// tiles, with the convergence check inside the kernel.
#[derive(Debug, clap::Args)]
pub struct Args3d {
    #[command(flatten)]
    common: Common,
    /// The stencil: 7 (faces) or 27 (faces, edges and corners).
    #[arg(long, value_name = "7|27", default_value = "7", value_parser = parse_stencil_3d)]
    stencil: Stencil,
    /// Tile shape in cells, TZxTYxTX (default: chosen from the grid).
    #[arg(long, value_name = "TZxTYxTX", value_parser = parse_tile::<3>)]
    tile: Option<[usize; 3]>,
    /// PE grid, PZxPYxPX (their product is --pes; default: the split with
    /// the least halo).
    #[arg(long, value_name = "PZxPYxPX", value_parser = parse_pe_grid::<3>)]
    pe_grid: Option<[usize; 3]>,
}

/// A grid size of at least one cell per axis.
fn parse_size(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("the size must be at least 1 cell per axis".into()),
        Err(_) => Err(format!("the size must be a positive integer, got {s:?}")),
    }
}

fn parse_stencil_2d(s: &str) -> Result<Stencil, String> {
    match s.trim() {
        "5" => Ok(Stencil::FivePoint),
        "9" => Ok(Stencil::NinePoint),
        _ => Err(format!("the 2D stencils are 5 and 9 (points), got {s:?}")),
    }
}

fn parse_stencil_3d(s: &str) -> Result<Stencil, String> {
    match s.trim() {
        "7" => Ok(Stencil::SevenPoint),
        "27" => Ok(Stencil::TwentySevenPoint),
        _ => Err(format!("the 3D stencils are 7 and 27 (points), got {s:?}")),
    }
}

/// A finite, non-negative tolerance.
fn parse_tol(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(t) => Err(format!(
            "the tolerance must be finite and ≥ 0, got {}",
            number_text(t)
        )),
        Err(_) => Err(format!("the tolerance must be a number, got {s:?}")),
    }
}

/// `--gpus G` with `--pes P`: G GPUs need the GPU backend, G GPUs present
/// and P a multiple of G (each condition its own message). Without a GPU
/// the run does not fall back to the emulator, which has no --gpus: that
/// is said in one line (it was the whole no-GPU report, status 1), before
/// --pes, which no value of would help.
pub fn check_gpus(ctx: &Ctx, gpus: u32, pes: u32) -> Result<(), CliError> {
    if gpus <= 1 {
        return Ok(());
    }
    if ctx.emulator.is_some() {
        return Err(CliError::Usage(format!(
            "--gpus {gpus}: needs the GPU backend; the emulator runs several PEs with --pes alone"
        )));
    }
    let (found, why) = match autarky::runtime::gpu_count() {
        Ok(n) => (n, String::new()),
        Err(autarky::Error::NoGpu { reason }) => {
            tracing::debug!("no GPU: {reason}");
            let first = reason.split(';').next().unwrap_or(&reason);
            (0, format!(" ({first})"))
        }
        Err(e) => return Err(e.into()),
    };
    if found == 0 {
        return Err(CliError::Usage(format!(
            "--gpus {gpus}: needs {gpus} GPUs, found 0{why}; the emulator has no --gpus: leave it out (--pes P runs P PEs on the emulator)"
        )));
    }
    if found < gpus {
        return Err(CliError::Usage(format!(
            "--gpus {gpus}: needs {gpus} GPUs, found {found}: give --gpus {found} or fewer"
        )));
    }
    if pes % gpus != 0 {
        return Err(CliError::Usage(format!(
            "--gpus {gpus}: --pes must be a multiple of it (got --pes {pes})"
        )));
    }
    Ok(())
}

/// A count per PE: `"4 per PE"` when every PE has the same, else each
/// PE's in turn (`"4 / 3 per PE"`). cg's header says its tiles so too.
pub fn per_pe_text(counts: &[usize]) -> String {
    match counts.split_first() {
        Some((first, rest)) if rest.iter().all(|c| c == first) => format!("{first} per PE"),
        _ => format!(
            "{} per PE",
            counts
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" / ")
        ),
    }
}

/// `"8x256"` → `[8, 256]`: D positive integers separated by `x` (or `×`,
/// as the run's `tiles:` line prints them).
fn parse_tile<const D: usize>(s: &str) -> Result<[usize; D], String> {
    let want = if D == 2 { "TYxTX" } else { "TZxTYxTX" };
    parse_sizes(s, 1 << 20).map_err(|e| match e {
        SizesError::Count => format!("the tile must be {want} ({D} sizes), got {s:?}"),
        SizesError::Range => {
            format!("every tile size must be an integer in 1..=1048576, got {s:?}")
        }
    })
}

/// A PE grid, `PYxPX` or `PZxPYxPX` (each at least 1).
fn parse_pe_grid<const D: usize>(s: &str) -> Result<[usize; D], String> {
    let want = if D == 2 { "PYxPX" } else { "PZxPYxPX" };
    parse_sizes(s, 1024)
        .map_err(|_| format!("the PE grid must be {want}, {D} integers in 1..=1024, got {s:?}"))
}

/// Why `parse_sizes` refused its input.
enum SizesError {
    /// Not D parts.
    Count,
    /// A part that is not an integer in 1..=max.
    Range,
}

/// D sizes separated by `x` (or `X`, `×`), each an integer in 1..=max.
fn parse_sizes<const D: usize>(s: &str, max: usize) -> Result<[usize; D], SizesError> {
    let parts: Vec<&str> = s.split(['x', 'X', '×']).collect();
    if parts.len() != D {
        return Err(SizesError::Count);
    }
    let mut out = [0usize; D];
    for (o, p) in out.iter_mut().zip(&parts) {
        match p.trim().parse::<usize>() {
            Ok(v) if (1..=max).contains(&v) => *o = v,
            _ => return Err(SizesError::Range),
        }
    }
    Ok(out)
}

/// The default Dirichlet function (and periodic initial field) for a grid
/// of `n` cells per axis.
fn smooth(n: usize, three_d: bool) -> impl Fn(i64, i64, i64) -> f64 + Send + Sync + Clone {
    let k = 2.0 * PI / n as f64;
    move |z, y, x| {
        let zf = if three_d { (k * z as f64).cos() } else { 1.0 };
        1.0 + 0.5 * (k * x as f64).sin() * (k * y as f64).cos() * zf
    }
}

/// Memory a solve needs, in bytes (upper bounds; `None` on overflow).
#[derive(Clone, Copy, Debug)]
struct Footprint {
    /// Each PE's symmetric heap: both buffers of its padded sub-grid, the
    /// check's partials, slots and norms, and alignment slack.
    heap_per_pe: u64,
    /// Host memory besides the heaps: the solver's initial arrays and the
    /// field read back at the end.
    host: u64,
}

fn footprint(
    n: u64,
    d: u32,
    esize: u64,
    pes: u64,
    (iters, check_every): (u32, u32),
    tile: Option<&[usize]>,
    halo: u64,
) -> Option<Footprint> {
    let cells = n.checked_pow(d)?;
    // A PE's padded sub-grid (ghosts `halo` deep) has at most
    // Π(ceil(n/p_a) + 2h) ≤ Π(n/p_a + g) cells with g = 2h + 1; expanded,
    // that is ≤ n^d/P + g·d·(n+g)^(d-1) + g^d.
    let g = 2 * halo + 1;
    let local = (cells / pes)
        .checked_add((g * d as u64).checked_mul((n + g).checked_pow(d - 1)?)?)?
        .checked_add(g.checked_pow(d)?)?;
    let data = local.checked_mul(2 * esize)?;
    // Tiles per PE: with a given tile at most Π ceil(n / t_a); by default
    // tiles hold ≥ min(1024, cells) cells, ceil effects at most double each axis.
    let tiles = match tile {
        Some(t) => t
            .iter()
            .try_fold(1u64, |acc, &ta| acc.checked_mul(n.div_ceil(ta as u64)))?,
        None => (local / 1024 + 1).checked_mul(1 << d)?,
    };
    let norms = iters.checked_div(check_every).map_or(0, |q| q as u64 + 1);
    let heap = data
        .checked_add(tiles.checked_mul(4 * 8)?)?
        .checked_add(norms * 8)?
        .checked_add(4 * pes * 8)?
        .checked_add(1 << 20)?;
    // initial arrays (both buffers, every PE) + one PE's download + the field.
    let host = data
        .checked_mul(pes)?
        .checked_add(data)?
        .checked_add(cells.checked_mul(8)?)?;
    Some(Footprint {
        heap_per_pe: heap,
        host,
    })
}

/// What the solver refuses about the grid, stencil and temporal blocking,
/// checked here first so the error names the command's flags (the
/// solver's names `JacobiConfig` fields: `steps_per_sync`, `check_every`).
fn check_shape(three_d: bool, c: &Common, stencil: Stencil) -> Result<(), String> {
    // (A grid of one cell along an axis is fine: the solver gives it
    // ghosts on both sides, so jacobi3d --size 1 runs too.)
    let s = c.steps_per_sync;
    if s == 1 {
        return Ok(());
    }
    match stencil {
        Stencil::FivePoint => {}
        Stencil::SevenPoint if s == 2 => {}
        Stencil::SevenPoint => {
            return Err(format!(
                "--steps-per-sync {s}: jacobi3d's 7-point stencil runs 2 sweeps a synchronisation (--steps-per-sync 2), not {s}"
            ));
        }
        _ => {
            return Err(format!(
                "--steps-per-sync {s}: temporal blocking works with jacobi2d's 5-point stencil and jacobi3d's 7-point one only, not {}",
                if three_d {
                    format!("jacobi3d --stencil {}", stencil_points(stencil))
                } else {
                    format!("--stencil {}", stencil_points(stencil))
                }
            ));
        }
    }
    if c.size < 2 {
        return Err(format!(
            "--steps-per-sync {s}: needs --size 2 or more, got --size {}",
            c.size
        ));
    }
    let off: Vec<(&str, u32)> = [("--iters", c.iters), ("--check-every", c.check_every)]
        .into_iter()
        .filter(|(_, v)| v % s != 0)
        .collect();
    // What would do: each value rounded down to a multiple of S (at least S).
    let fix = off
        .iter()
        .map(|(flag, v)| format!("{flag} {}", (v / s).max(1) * s))
        .collect::<Vec<_>>()
        .join(" ");
    let said = off
        .iter()
        .map(|(flag, v)| format!("{flag} {v}"))
        .collect::<Vec<_>>()
        .join(" and ");
    match off.len() {
        0 => Ok(()),
        1 => Err(format!(
            "--steps-per-sync {s}: {said} must be a multiple of {s} (a graph iteration is {s} sweeps; {fix} would do)"
        )),
        _ => Err(format!(
            "--steps-per-sync {s}: {said} must be multiples of {s} (a graph iteration is {s} sweeps; {fix} would do)"
        )),
    }
}

/// `autarky jacobi2d`.
pub fn run_2d(ctx: &Ctx, a: Args2d) -> Result<(), CliError> {
    let tile = a.tile.map(|[ty, tx]| [1, ty, tx]);
    let grid = a.pe_grid.map(|[py, px]| [1, py, px]);
    solve(ctx, "jacobi2d", a.common, a.stencil, tile, grid)
}

/// `autarky jacobi3d`.
pub fn run_3d(ctx: &Ctx, a: Args3d) -> Result<(), CliError> {
    solve(ctx, "jacobi3d", a.common, a.stencil, a.tile, a.pe_grid)
}

fn stencil_points(s: Stencil) -> u32 {
    match s {
        Stencil::FivePoint => 5,
        Stencil::NinePoint => 9,
        Stencil::SevenPoint => 7,
        Stencil::TwentySevenPoint => 27,
    }
}

fn solve(
    ctx: &Ctx,
    command: &str,
    c: Common,
    stencil: Stencil,
    tile: Option<[usize; 3]>,
    pe_grid: Option<[usize; 3]>,
) -> Result<(), CliError> {
    let ipc = c.transport != TransportArg::Local;
    if let Some(g) = pe_grid {
        let p: usize = g.iter().product();
        if p != c.pes as usize {
            return Err(CliError::Usage(format!(
                "--pe-grid {}: {p} PEs, but --pes is {}",
                g.iter()
                    .skip(if stencil.is_2d() { 1 } else { 0 })
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("x"),
                c.pes
            )));
        }
    }
    let tname = c.transport.transport().name();
    if ipc && (c.gpus > 1 || ctx.emulator.is_some()) {
        return Err(CliError::Usage(format!(
            "--transport {tname}: one GPU per rank (start one rank per GPU with mpirun; no --gpus, no emulator)"
        )));
    }
    // A transport this build lacks: said in the flag's words (the
    // library's error names its Rust API).
    let built = match c.transport {
        TransportArg::Local => true,
        TransportArg::Ipc => cfg!(feature = "mpi"),
        TransportArg::Nvshmem => cfg!(feature = "nvshmem"),
    };
    if !built {
        let feature = if c.transport == TransportArg::Ipc {
            "mpi"
        } else {
            "nvshmem"
        };
        return Err(CliError::Usage(format!(
            "--transport {tname}: this autarky was built without it; rebuild with `cargo build --release --features {feature}` (needs an MPI: apt-get install libopenmpi-dev openmpi-bin libclang-dev){}",
            if feature == "nvshmem" { "; NVSHMEM itself is found at run time (AUTARKY_NVSHMEM_DIR, or the nvidia-nvshmem-cu13 pip wheel)" } else { "" }
        )));
    }
    if c.transport == TransportArg::Nvshmem && c.pes != 1 {
        return Err(CliError::Usage(format!(
            "--transport nvshmem: one PE per rank (got --pes {}); start one rank per PE",
            c.pes
        )));
    }
    // Every PE of the run: with ipc, --pes on each rank.
    let mut c = c;
    let pes_per_rank = c.pes;
    if ipc {
        c.pes *= launcher_ranks();
    }
    check_gpus(ctx, c.gpus, c.pes)?;
    if let Some(t) = c.tol {
        if c.check_every == 0 {
            return Err(CliError::Usage(format!(
                "--tol {} needs --check-every > 0: the tolerance is tested at the checks",
                number_text(t)
            )));
        }
    }
    let three_d = !stencil.is_2d();
    check_shape(three_d, &c, stencil).map_err(CliError::Usage)?;
    let d: u32 = if three_d { 3 } else { 2 };
    let tile_axes: Option<Vec<usize>> =
        tile.map(|t| if three_d { t.to_vec() } else { t[1..].to_vec() });
    let fp = footprint(
        c.size,
        d,
        c.precision.bytes(),
        c.pes as u64,
        (c.iters, c.check_every),
        tile_axes.as_deref(),
        c.steps_per_sync as u64,
    )
    .filter(|f| f.heap_per_pe <= usize::MAX as u64 / c.pes as u64)
    .ok_or_else(|| {
        CliError::Usage(format!(
            "--size {}: the grid would have {:.2e} cells ({}), more than can be addressed",
            c.size,
            (c.size as f64).powi(d as i32),
            if three_d { "N³" } else { "N²" }
        ))
    })?;
    if let Some(avail) = host_available() {
        if fp.host > avail {
            return Err(CliError::Usage(format!(
                "--size {}: the solve needs about {} of host memory, {} is available",
                c.size,
                gib(fp.host),
                gib(avail)
            )));
        }
    }
    let n = c.size as usize;
    let dims = if three_d { [n, n, n] } else { [1, n, n] };
    let g = smooth(n, three_d);
    let mut problem = JacobiProblem::new(dims, stencil).with_dirichlet(g.clone());
    if c.periodic {
        problem = problem.with_boundary([Boundary::Periodic; 3]).with_init(g);
    }
    let cfg = JacobiConfig {
        check_every: c.check_every,
        tol: c.tol,
        precision: c.precision.precision(),
        tile,
        pulse_chunk_cells: usize::try_from(c.pulse_chunk).unwrap_or(usize::MAX),
        steps_per_sync: c.steps_per_sync,
        pe_grid,
        ..JacobiConfig::new(problem, c.iters)
    };

    let (rt, threads) = if ipc {
        let rt = Runtime::builder()
            .transport(c.transport.transport())
            .pes_per_rank(pes_per_rank)
            .symmetric_heap_bytes(fp.heap_per_pe as usize)
            .build()?;
        if rt.num_pes() != c.pes {
            return Err(CliError::Usage(format!(
                "--transport {tname}: the job has {}, the launcher's environment said {}",
                plural(rt.ranks() as u64, "rank", "ranks"),
                launcher_ranks()
            )));
        }
        (rt, None)
    } else {
        // Virtual PEs of one GPU: as many comm blocks as the largest
        // pulse has chunks (the runtime's default there is 1).
        let virtual_pes = (c.gpus <= 1 && c.pes > 1)
            .then(|| autarky::solvers::jacobi::comm_blocks_for_virtual_pes(&cfg, c.pes));
        runtime(
            ctx,
            c.pes,
            c.gpus,
            c.comm_blocks,
            virtual_pes,
            fp.heap_per_pe as usize,
        )?
    };
    let heap_total = fp.heap_per_pe * rt.local_pes().len() as u64;
    match rt.device_memory() {
        Ok((free, _)) if heap_total > free as u64 => {
            return Err(CliError::Usage(format!(
                "--size {}: the solve needs about {} of device memory, {} is free",
                c.size,
                gib(heap_total),
                gib(free as u64)
            )))
        }
        // The emulator's heaps are host memory, mapped as they are touched.
        Ok(_) | Err(_) => {}
    }

    // What the configuration cannot do is a usage error. check_shape has
    // refused, in the flags' words, what the solver's own errors would
    // name by JacobiConfig field; a decomposition the PEs do not fit gets
    // the flags that chose it.
    let solver = JacobiSolver::new(&rt, cfg).map_err(|e| match e {
        autarky::Error::InvalidConfig(m) => {
            CliError::Usage(match m.strip_prefix("decomposition: ") {
                Some(why) => format!("--pes {} with --size {n}: {why}", c.pes),
                None => m,
            })
        }
        e => e.into(),
    })?;
    let pe_grid = solver.pe_grid();
    let size_text = if three_d {
        format!("{n}³")
    } else {
        format!("{n}²")
    };
    // A (z, y, x) shape as the command's axes: "2×4" in 2D, "1×2×4" in 3D.
    let shape_text = |s: &[usize; 3]| {
        s.iter()
            .skip(if three_d { 0 } else { 1 })
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("×")
    };
    ctx.say(format_args!(
        "{command} {size_text} {}-point {}, {}, {} (PE grid {}), up to {}{} on the {} backend",
        stencil_points(stencil),
        c.precision.name(),
        if c.periodic { "periodic" } else { "Dirichlet" },
        plural(c.pes as u64, "PE", "PEs"),
        shape_text(&pe_grid),
        plural(c.iters as u64, "iteration", "iterations"),
        if c.steps_per_sync > 1 {
            format!(", {} sweeps a synchronisation", c.steps_per_sync)
        } else {
            String::new()
        },
        rt.backend_name()
    ));

    // The tile shape each PE runs (the default, or --tile clamped to the
    // PE's part of the grid: said, since the user asked for another).
    let shapes = solver.tile_shapes();
    let mut distinct: Vec<&[usize; 3]> = shapes.iter().collect();
    distinct.dedup();
    let clamped = tile.is_some_and(|t| shapes.iter().any(|s| *s != t));
    ctx.say(format_args!(
        "tiles: {} cells{}, {}",
        distinct
            .iter()
            .map(|s| shape_text(s))
            .collect::<Vec<_>>()
            .join(" / "),
        match tile {
            Some(t) if clamped =>
                format!(" (--tile {} clamped to the PE's extent)", shape_text(&t)),
            Some(_) => " (--tile)".to_string(),
            None => " (default)".to_string(),
        },
        per_pe_text(solver.tiles_per_pe())
    ));

    let gpu = rt.backend_name() == "gpu";
    let opts = RunOptions {
        timed: gpu,
        trace: c
            .trace
            .as_ref()
            .map(|_| autarky::TraceOptions::records_per_block(c.trace_records)),
        ..RunOptions::iterations(c.iters)
    };
    let run = solver.run_with(opts)?;
    let trace_facts = match (&c.trace, &run.report.trace) {
        (Some(path), Some(trace)) => Some(super::cmd_dag::write_trace(ctx, path, trace, &[])?),
        _ => None,
    };
    for (it, norm) in &run.norms {
        ctx.say(format_args!("check at iteration {it}: ‖Δ‖₂ = {norm:.6e}"));
    }
    if let Some(tol) = c.tol {
        match run.converged_at {
            Some(at) => ctx.say(format_args!(
                "converged at iteration {at} (‖Δ‖₂ ≤ {}); stopped after {}",
                number_text(tol),
                plural(run.iterations as u64, "iteration", "iterations")
            )),
            None => ctx.say(format_args!(
                "not converged to {} within {}",
                number_text(tol),
                plural(run.iterations as u64, "iteration", "iterations")
            )),
        }
    }
    let (seconds, clock) = match (run.report.event_ms, run.report.device_ns) {
        (Some(ms), _) => (ms as f64 * 1e-3, "device events"),
        (None, Some(ns)) => (ns as f64 * 1e-9, "device clock"),
        _ => (run.report.wall.as_secs_f64(), "host wall"),
    };
    let us = seconds * 1e6 / run.iterations.max(1) as f64;
    ctx.say(format_args!(
        "ran {} in {:.3} ms: {us:.3} µs per iteration ({clock}, {} backend)",
        plural(run.iterations as u64, "iteration", "iterations"),
        seconds * 1e3,
        rt.backend_name()
    ));
    if run.field.iter().any(|v| !v.is_finite()) {
        return Err(CliError::Check(
            "the final field holds a non-finite value".into(),
        ));
    }
    ctx.emit(&json!({
        "command": command,
        "backend": rt.backend_name(),
        "emulator_threads": threads,
        "size": n,
        "dims": dims,
        "stencil": stencil_points(stencil),
        "precision": c.precision.name(),
        "boundary": if c.periodic { "periodic" } else { "dirichlet" },
        "pes": c.pes,
        "pe_grid": pe_grid,
        "tiles_per_pe": solver.tiles_per_pe(),
        "tile_shapes": solver.tile_shapes(),
        "threads_per_block": solver.graph().threads_per_block().unwrap_or(rt.threads_per_block()),
        "iterations_requested": c.iters,
        "iterations": run.iterations,
        "check_every": c.check_every,
        "steps_per_sync": c.steps_per_sync,
        // The runtime's count (the flag's, else the default: 1 for one PE,
        // one per pulse chunk for virtual PEs, 32 across GPUs), not the flag.
        "comm_blocks": rt.blocks_per_pe_of(solver.graph()).map(|b| b.0).ok().or(c.comm_blocks),
        "pulse_chunk": c.pulse_chunk,
        "tol": c.tol,
        "norms": run.norms.iter().map(|(i, v)| json!({"iteration": i, "norm": v})).collect::<Vec<_>>(),
        "converged_at": run.converged_at,
        "seconds": seconds,
        "us_per_iteration": us,
        "clock": clock,
        "gpus": c.gpus,
        "trace": trace_facts,
    }));
    // As cg: a --tol that was not reached is status 4, after the result.
    if let (Some(tol), None) = (c.tol, run.converged_at) {
        return Err(CliError::NotConverged(format!(
            "no checked ‖Δ‖₂ reached --tol {} within {} (raise --iters)",
            number_text(tol),
            plural(run.iterations as u64, "iteration", "iterations")
        )));
    }
    Ok(())
}

/// The runtime of [`Ctx::runtime`] with `pes` PEs, `comm_blocks` comm
/// blocks a PE (the builder's default when `None`, or `virtual_pes` for
/// PEs on one GPU when given: not on the emulator, whose comm blocks are
/// threads) and heaps of `heap` bytes.
fn runtime(
    ctx: &Ctx,
    pes: u32,
    gpus: u32,
    comm_blocks: Option<u32>,
    virtual_pes: Option<u32>,
    heap: usize,
) -> Result<(Runtime, Option<u32>), CliError> {
    let base = move |gpu: bool| {
        let b = Runtime::builder().pes(pes).symmetric_heap_bytes(heap);
        match comm_blocks.or(virtual_pes.filter(|_| gpu)) {
            Some(n) => b.comm_blocks(n),
            None => b,
        }
    };
    let builder = || base(false);
    if gpus > 1 {
        return Ok((builder().gpus(gpus).gpu().build()?, None));
    }
    let emulator = |threads: u32| -> Result<(Runtime, Option<u32>), CliError> {
        Ok((builder().emulator(threads as usize).build()?, Some(threads)))
    };
    match ctx.emulator {
        Some(t) => emulator(t.unwrap_or_else(Ctx::default_threads)),
        None => match base(true).gpu().build() {
            Ok(rt) => Ok((rt, None)),
            Err(autarky::Error::NoGpu { reason }) => {
                let threads = Ctx::default_threads();
                ctx.note_no_gpu(&reason, threads);
                emulator(threads)
            }
            Err(e) => Err(e.into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_parse_with_the_right_number_of_positive_sizes() {
        assert_eq!(parse_tile::<2>("8x256"), Ok([8, 256]));
        assert_eq!(parse_tile::<3>("2X4x64"), Ok([2, 4, 64]));
        assert!(parse_tile::<2>("8").is_err());
        assert!(parse_tile::<2>("2x4x8").is_err());
        assert!(parse_tile::<3>("0x4x8").is_err());
        assert!(parse_tile::<2>("ax4").is_err());
        assert!(parse_tile::<2>("8")
            .unwrap_err()
            .contains("TYxTX (2 sizes)"));
        assert!(parse_tile::<2>("0x8").unwrap_err().contains("1..=1048576"));
        assert_eq!(parse_pe_grid::<2>("2x4"), Ok([2, 4]));
        assert_eq!(parse_pe_grid::<3>("1×2X3"), Ok([1, 2, 3]));
        for bad in ["2", "2x0", "2x2048", "2xb"] {
            let e = parse_pe_grid::<2>(bad).unwrap_err();
            assert!(e.contains("PYxPX, 2 integers in 1..=1024"), "{e}");
        }
    }

    #[test]
    fn a_count_every_pe_shares_is_said_once() {
        assert_eq!(per_pe_text(&[4, 4, 4]), "4 per PE");
        assert_eq!(per_pe_text(&[1]), "1 per PE");
        assert_eq!(per_pe_text(&[4, 3]), "4 / 3 per PE");
    }

    #[test]
    fn tolerances_must_be_finite_and_non_negative() {
        assert_eq!(parse_tol("1e-6"), Ok(1e-6));
        assert_eq!(parse_tol("0"), Ok(0.0));
        for bad in ["-1", "inf", "NaN", "x"] {
            assert!(parse_tol(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_footprint_covers_both_buffers_and_overflows_to_none() {
        let f = footprint(1024, 2, 4, 1, (1000, 100), None, 1).unwrap();
        assert!(f.heap_per_pe >= 2 * 1026 * 1026 * 4, "{f:?}");
        assert!(f.heap_per_pe < 2 * 1026 * 1026 * 4 + (4 << 20), "{f:?}");
        // Four PEs: each heap holds about a quarter.
        let f4 = footprint(1024, 2, 4, 4, (1000, 100), None, 1).unwrap();
        assert!(f4.heap_per_pe * 2 < f.heap_per_pe, "{f4:?}");
        assert!(f4.heap_per_pe >= 2 * 514 * 514 * 4, "{f4:?}");
        // Ghosts 4 deep (4 sweeps a sync): both buffers of 1032².
        let h4 = footprint(1024, 2, 4, 1, (1000, 100), None, 4).unwrap();
        assert!(h4.heap_per_pe >= 2 * 1032 * 1032 * 4, "{h4:?}");
        // Norms every iteration of many iterations take room too.
        let g = footprint(16, 2, 4, 1, (1 << 30, 1), None, 1).unwrap();
        assert!(g.heap_per_pe >= 8 << 30, "{g:?}");
        assert!(footprint(u64::MAX / 2, 3, 8, 1, (10, 0), None, 1).is_none());
    }

    #[test]
    fn the_default_boundary_is_smooth_and_not_constant() {
        let g = smooth(64, false);
        assert_eq!(g(0, 0, 0), 1.0);
        assert!((g(0, 0, 16) - 1.5).abs() < 1e-12);
        assert!((g(0, 0, 15) - g(0, 0, 16)).abs() < 0.01);
    }
}
