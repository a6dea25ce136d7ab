//! `autarky cg`: a CPU-free Conjugate Gradient solve
//! ([`autarky::solvers::cg::CgSolver`]) of a Poisson matrix or a Matrix
//! Market file with `b = 1`, `x₀ = 0`: iterations, the recursive and the
//! true relative residual, time per iteration and the backend.

use std::path::PathBuf;

use autarky::solvers::cg::{
    heap_bytes_needed, poisson2d, poisson3d, read_matrix_market, CgConfig, CgError, CgSolveError,
    CgSolver, CgVariant, Csr, DirectionForm, Precond,
};
use autarky::{RunOptions, Runtime};
use serde_json::json;

use crate::cg_footprint::Shape;
use crate::cmd_dag::iterations_parser;
use crate::memory::{gib, host_available};
use crate::{number_text, plural, CliError, Ctx};

/// The recurrence on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VariantArg {
    /// Hestenes–Stiefel: two allreduces per iteration.
    Standard,
    /// Chronopoulos–Gear: one fused allreduce per iteration.
    SingleReduction,
}

/// The preconditioner on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PrecondArg {
    /// None.
    None,
    /// Jacobi (diagonal); the matrix needs a positive diagonal.
    Jacobi,
}

/// Where the Standard recurrence forms its next direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DirectionArg {
    /// Fused when the rows on one GPU fit its L2 (80 bytes a row), else
    /// separate.
    Auto,
    /// Where it is read (the SpMV, the update, the gathers).
    Fused,
    /// In direction tasks of its own.
    Separate,
}

/// Solve `A x = 1` by CG on a task graph (SpMV tiles, halo gathers, in-kernel
/// allreduces and stop test).
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("matrix_source").required(true).multiple(false))]
pub struct Args {
    /// The 5-point Poisson matrix of an N×N grid (N 1..=46340; the solve
    /// must fit in memory).
    #[arg(long, value_name = "N", group = "matrix_source",
          value_parser = clap::value_parser!(u64).range(1..=46_340))]
    poisson2d: Option<u64>,
    /// The 7-point Poisson matrix of an N×N×N grid (N 1..=1290; the solve
    /// must fit in memory).
    #[arg(long, value_name = "N", group = "matrix_source",
          value_parser = clap::value_parser!(u64).range(1..=1290))]
    poisson3d: Option<u64>,
    /// A Matrix Market file (real, integer or pattern; general or
    /// symmetric). The matrix must be symmetric: a general file whose
    /// A[i][j] and A[j][i] differ (beyond 1e-10 relative) is refused.
    #[arg(long, value_name = "FILE", group = "matrix_source")]
    matrix: Option<PathBuf>,
    /// Stop when ‖r‖/‖b‖ ≤ T (finite, ≥ 0); a run that reaches --max-iters
    /// first prints its result and exits with status 4.
    #[arg(long, value_name = "T", default_value_t = 1e-8, value_parser = parse_tol,
          allow_hyphen_values = true)]
    tol: f64,
    /// Most iterations (1..=2147483647).
    #[arg(long, default_value_t = 10_000, value_parser = iterations_parser())]
    max_iters: u32,
    /// Threads per matrix row in the SpMV tiles: 1, 2, 4, 8, 16 or 32
    /// (default: about one per 8 nonzeros of the average row, a power of
    /// two: 1 for Poisson).
    #[arg(long, value_name = "L", value_parser = ["1", "2", "4", "8", "16", "32"])]
    spmv_lanes: Option<String>,
    /// Processing elements (virtual PEs on one GPU), 1..=16.
    #[arg(long, value_name = "P", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=autarky::abi::MAX_LOCAL_PES as i64))]
    pes: u32,
    /// GPUs to spread the PEs over (devices 0..G of this process, every
    /// pair peers; --pes must be a multiple of G). GPU only.
    #[arg(long, value_name = "G", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    gpus: u32,
    /// Comm blocks per PE, 1..=64 (default: 2 on one GPU — the reduce
    /// apart from the gathers — and 32 when the PEs span GPUs, where each
    /// ghost plane's gather splits over them).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    comm_blocks: Option<u32>,
    /// Write a device trace of the run to FILE (Chrome trace JSON; with
    /// --json the summary, including what the compute blocks waited for,
    /// is in the output).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Records each block's trace ring keeps (with --trace; a power of
    /// two). A block that records more keeps the newest; the rest are
    /// reported as dropped.
    #[arg(long, value_name = "N", default_value_t = autarky::TraceOptions::DEFAULT_RECORDS,
          value_parser = super::cmd_dag::trace_records_parser, requires = "trace")]
    trace_records: u32,
    /// The recurrence.
    #[arg(long, value_enum, default_value_t = VariantArg::Standard)]
    variant: VariantArg,
    /// The preconditioner.
    #[arg(long, value_enum, default_value_t = PrecondArg::None)]
    precond: PrecondArg,
    /// With one PE, run each allreduce as two tasks (a local sum, then the
    /// reduce), as on several PEs, instead of one (for comparison; the
    /// results are bitwise the same).
    #[arg(long)]
    unfused_allreduce: bool,
    /// Standard recurrence: where the next direction p = z + βp is formed
    /// (the results are bitwise the same; the speed is not).
    #[arg(long, value_enum, default_value_t = DirectionArg::Auto)]
    direction: DirectionArg,
    /// Do not keep the vectors in L2 while the matrix streams through (by
    /// default, on a run of one PE on a GPU, all of them are when they fit
    /// the L2 the device can set aside, and the most reused ones when they
    /// take up to 1.4× that; the results are the same).
    #[arg(long)]
    no_l2_persist: bool,
    /// Give the SpMV the matrix as plain CSR (12 bytes a nonzero) even when
    /// it fits the packed form (4 bytes a nonzero; used by default when
    /// every PE's rows fit it; the results are bitwise the same).
    #[arg(long)]
    plain_matrix: bool,
    /// Give the SpMV the packed matrix's rows and offsets even when its rows
    /// take few enough distinct patterns to be stored as a byte each (used
    /// by default when every PE's rows do: stencil matrices; the results
    /// are bitwise the same).
    #[arg(long)]
    no_row_patterns: bool,
    /// With the direction fused: x's step and the direction's store in the
    /// update tiles instead of the SpMV's (the former layout, for
    /// comparisons; bitwise the same results).
    #[arg(long, hide = true)]
    full_update: bool,
    /// With lean updates: x's step in the SpMV's row loop (separate single
    /// reduction: in the axpy tiles), not a task of its own after each
    /// SpMV tile (by default that task is used when the vectors fit in L2;
    /// for comparisons; bitwise the same results).
    #[arg(long, hide = true, conflicts_with = "x_step_apart")]
    x_in_spmv: bool,
    /// With lean updates: x's step as a task of its own whatever the size.
    #[arg(long, hide = true)]
    x_step_apart: bool,
    /// Single reduction: the vector updates merged into the SpMV tiles (r,
    /// w and s by parity) instead of axpy tiles that run before the SpMV
    /// (the former default, for comparisons; bitwise the same results).
    #[arg(long, hide = true)]
    merged_updates: bool,
    /// Single reduction with separate updates: z in two halves of v by
    /// parity and r a vector of its own (the former layout, for
    /// comparisons; bitwise the same results).
    #[arg(long, hide = true)]
    double_buffer: bool,
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

/// Bad input is a usage error (2); a breakdown found by the run is a
/// failed check (3); the runtime's failures are run errors (1).
fn cli_error(e: CgSolveError) -> CliError {
    match e {
        CgSolveError::Runtime(e) => CliError::Run(e),
        CgSolveError::Cg(e @ (CgError::NotPositiveDefinite { .. } | CgError::NonFinite { .. })) => {
            CliError::Check(e.to_string())
        }
        other => CliError::Usage(other.to_string()),
    }
}

/// The matrix a run solves: generated later, or read already.
enum Source {
    /// The `2d + 1`-point Poisson matrix of an `n^d` grid.
    Poisson { d: u32, n: u64 },
    /// A Matrix Market file, read and checked symmetric.
    File(Csr<f64>),
}

/// `autarky cg`.
pub fn run(ctx: &Ctx, a: Args) -> Result<(), CliError> {
    super::cmd_jacobi::check_gpus(ctx, a.gpus, a.pes)?;
    let (name, flag, source) = if let Some(n) = a.poisson2d {
        (
            format!("poisson2d {n}"),
            format!("--poisson2d {n}"),
            Source::Poisson { d: 2, n },
        )
    } else if let Some(n) = a.poisson3d {
        (
            format!("poisson3d {n}"),
            format!("--poisson3d {n}"),
            Source::Poisson { d: 3, n },
        )
    } else {
        let path = a.matrix.as_ref().expect("clap requires one matrix source");
        let m = read_matrix_market(path).map_err(|e| CliError::Usage(e.to_string()))?;
        // CG needs a symmetric matrix; a `general` file may hold any.
        m.check_symmetric()
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        let name = path.display().to_string();
        (name.clone(), name, Source::File(m))
    };
    // Memory first: bounds from N alone for the generators (nothing large
    // is allocated before the checks), from the matrix for a file.
    let shape = match &source {
        Source::Poisson { d, n } => Shape::poisson(*d, *n, a.pes)
            .map_err(|e| CliError::Usage(format!("{flag}: {e}")))?
            .ok_or_else(|| CliError::Usage(format!("{flag}: the grid is too large to count")))?,
        Source::File(m) => {
            Shape::of(m, a.pes).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?
        }
    };
    let heap = match &source {
        Source::Poisson { .. } => shape.heap_per_pe(),
        Source::File(m) => heap_bytes_needed(m, a.pes).map_err(cli_error)? as u64,
    };
    let heap = usize::try_from(heap)
        .map_err(|_| CliError::Usage(format!("{flag}: the heap per PE is too large to address")))?;
    let (rt, threads) = runtime(ctx, a.pes, a.gpus, a.comm_blocks, heap)?;
    let smaller = if a.matrix.is_some() {
        "a smaller matrix"
    } else {
        "a smaller N"
    };
    check_memory(&rt, &flag, smaller, &shape, heap as u64, a.pes, a.gpus)?;
    let matrix = match source {
        Source::Poisson { d: 2, n } => {
            poisson2d(n as usize).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?
        }
        Source::Poisson { n, .. } => {
            poisson3d(n as usize).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?
        }
        Source::File(m) => m,
    };
    let cfg = CgConfig {
        variant: match a.variant {
            VariantArg::Standard => CgVariant::Standard,
            VariantArg::SingleReduction => CgVariant::SingleReduction,
        },
        precond: match a.precond {
            PrecondArg::None => Precond::None,
            PrecondArg::Jacobi => Precond::Jacobi,
        },
        spmv_lanes: a
            .spmv_lanes
            .as_deref()
            .map(|l| l.parse().expect("clap checked it")),
        fuse_single_pe_allreduce: !a.unfused_allreduce,
        direction: match a.direction {
            DirectionArg::Auto => DirectionForm::Auto,
            DirectionArg::Fused => DirectionForm::Fused,
            DirectionArg::Separate => DirectionForm::Separate,
        },
        l2_persist_vectors: !a.no_l2_persist,
        compact_matrix: !a.plain_matrix,
        row_patterns: !a.no_row_patterns,
        lean_update: !a.full_update,
        x_step_apart: match (a.x_in_spmv, a.x_step_apart) {
            (true, _) => Some(false),
            (_, true) => Some(true),
            _ => None,
        },
        merge_updates: a.merged_updates,
        single_buffer: !a.double_buffer,
        ..CgConfig::new(a.tol, a.max_iters)
    };
    let solver = CgSolver::new(&rt, &matrix, cfg).map_err(cli_error)?;
    let variant = match a.variant {
        VariantArg::Standard => "standard",
        VariantArg::SingleReduction => "single-reduction",
    };
    let precond = match a.precond {
        PrecondArg::None => "none",
        PrecondArg::Jacobi => "jacobi",
    };
    ctx.say(format_args!(
        "cg {name}: {}, {} ({} matrix), {variant} CG{}, preconditioner {precond}, {}{} (tiles: {}), up to {} on the {} backend",
        plural(matrix.n_rows() as u64, "row", "rows"),
        plural(matrix.nnz() as u64, "nonzero", "nonzeros"),
        if solver.row_patterns() {
            "row-pattern"
        } else if solver.compact_matrix() {
            "packed"
        } else {
            "plain"
        },
        match solver.direction_fused() {
            Some(true) => " (direction fused)",
            Some(false) => " (direction separate)",
            None => "",
        },
        plural(a.pes as u64, "PE", "PEs"),
        if a.gpus > 1 {
            format!(" on {} GPUs", a.gpus)
        } else {
            String::new()
        },
        super::cmd_jacobi::per_pe_text(&solver.tiles_per_pe()),
        plural(a.max_iters as u64, "iteration", "iterations"),
        rt.backend_name()
    ));
    let gpu = rt.backend_name() == "gpu";
    let run = solver
        .run_with(RunOptions {
            timed: gpu,
            trace: a
                .trace
                .as_ref()
                .map(|_| autarky::TraceOptions::records_per_block(a.trace_records)),
            ..RunOptions::iterations(a.max_iters)
        })
        .map_err(cli_error)?;
    let trace_facts = match (&a.trace, run.report.as_ref().and_then(|r| r.trace.as_ref())) {
        (Some(path), Some(trace)) => Some(super::cmd_dag::write_trace(ctx, path, trace, &[])?),
        _ => None,
    };
    let (seconds, clock) = match &run.report {
        Some(r) => match (r.event_ms, r.device_ns) {
            (Some(ms), _) => (ms as f64 * 1e-3, "device events"),
            (None, Some(ns)) => (ns as f64 * 1e-9, "device clock"),
            _ => (r.wall.as_secs_f64(), "host wall"),
        },
        None => (0.0, "no run needed"),
    };
    let us = seconds * 1e6 / run.iterations.max(1) as f64;
    ctx.say(format_args!(
        "{} after {}: relative residual {} (recursive), {} (true, f64 on the host)",
        if run.converged {
            "converged"
        } else {
            "NOT converged"
        },
        plural(run.iterations as u64, "iteration", "iterations"),
        residual_text(run.rel_residual),
        residual_text(run.true_rel_residual)
    ));
    ctx.say(format_args!(
        "{:.3} ms: {us:.3} µs per iteration ({clock}, {} backend)",
        seconds * 1e3,
        rt.backend_name()
    ));
    if run.x.iter().any(|v| !v.is_finite()) {
        return Err(CliError::Check(
            "the solution holds a non-finite value".into(),
        ));
    }
    ctx.emit(&json!({
        "command": "cg",
        "matrix": name,
        "rows": matrix.n_rows(),
        "nnz": matrix.nnz(),
        "backend": rt.backend_name(),
        "emulator_threads": threads,
        "pes": a.pes,
        "gpus": a.gpus,
        // What a PE has (the flag, or the default).
        "comm_blocks": rt.blocks_per_pe_of(solver.graph()).map(|b| b.0).ok().or(a.comm_blocks),
        "tiles_per_pe": solver.tiles_per_pe(),
        "variant": variant,
        // Standard: where the next direction is formed ("fused" or
        // "separate"); null for the single-reduction recurrence.
        "direction": solver.direction_fused().map(|f| if f { "fused" } else { "separate" }),
        // Bytes of vectors kept in L2 during the run (null: none).
        "l2_persist_bytes": solver.l2_window().map(|w| w.bytes),
        // The SpMV read the matrix packed (4 bytes a nonzero) or plain.
        "compact_matrix": solver.compact_matrix(),
        // ... and its rows as patterns, a byte a row.
        "row_patterns": solver.row_patterns(),
        // The SpMV applied x's steps, the update tiles only r and z.
        "lean_update": solver.lean_update(),
        // ... and x's step was a task of its own after each SpMV tile.
        "x_step_apart": solver.x_step_apart(),
        // Single reduction: the SpMV tiles applied the vector updates
        // (null: Standard).
        "merged_updates": solver.updates_merged(),
        // Single reduction, separate updates: z in one copy of v (null:
        // merged, or Standard).
        "single_buffer": solver.single_buffer(),
        "precond": precond,
        "tol": a.tol,
        "max_iters": a.max_iters,
        "iterations": run.iterations,
        "converged": run.converged,
        "rel_residual": run.rel_residual,
        "true_rel_residual": run.true_rel_residual,
        "seconds": seconds,
        "us_per_iteration": us,
        "clock": clock,
        "trace": trace_facts,
    }));
    if !run.converged {
        return Err(CliError::NotConverged(format!(
            "{name}: relative residual {} > --tol {} after {} (raise --max-iters{})",
            residual_text(run.rel_residual),
            number_text(a.tol),
            plural(run.iterations as u64, "iteration", "iterations"),
            if a.precond == PrecondArg::None {
                ", or try --precond jacobi"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// Refuses (exit 2, one line saying what to change) a solve whose host
/// memory (with the heaps, on the emulator) is more than is available, or
/// whose heaps are more than a GPU has free. Before the matrix is
/// generated, so nothing large has been allocated yet.
fn check_memory(
    rt: &Runtime,
    flag: &str,
    smaller: &str,
    shape: &Shape,
    heap: u64,
    pes: u32,
    gpus: u32,
) -> Result<(), CliError> {
    let emulator = rt.backend_name() == "emulator";
    let heaps = heap.saturating_mul(pes as u64);
    let host = shape
        .host_bytes()
        .saturating_add(if emulator { heaps } else { 0 });
    if let Some(avail) = host_available() {
        if host > avail {
            return Err(CliError::Usage(format!(
                "{flag}: the solve needs about {} of host memory{}, {} is available: use {smaller}{}",
                gib(host),
                if emulator {
                    format!(" ({} of it the PEs' heaps, which the emulator keeps there)", gib(heaps))
                } else {
                    String::new()
                },
                gib(avail),
                if emulator {
                    " (on a GPU the heaps are in device memory)"
                } else {
                    ""
                }
            )));
        }
    }
    if let Ok((free, _)) = rt.device_memory() {
        // Per GPU: its share of the PEs' heaps.
        let per_gpu = pes / gpus;
        let need = heap.saturating_mul(per_gpu as u64);
        if need > free as u64 {
            return Err(CliError::Usage(format!(
                "{flag}: the solve needs about {} of device memory per GPU ({} a PE, {}), {} is free: use {smaller}, or spread the PEs over more GPUs (--gpus G, --pes a multiple of G)",
                gib(need),
                gib(heap),
                plural(per_gpu as u64, "PE", "PEs"),
                gib(free as u64)
            )));
        }
    }
    Ok(())
}

/// The runtime of [`Ctx::runtime`] with `pes` PEs over `gpus` GPUs (more
/// than one: the GPU backend only), `comm_blocks` comm blocks a PE (the
/// default below when `None`) and heaps of `heap` bytes.
fn runtime(
    ctx: &Ctx,
    pes: u32,
    gpus: u32,
    comm_blocks: Option<u32>,
    heap: usize,
) -> Result<(Runtime, Option<u32>), CliError> {
    // Two comm blocks on one GPU (the reduce apart from the gathers);
    // across GPUs the runtime's default, which splits each ghost plane's
    // gather over more blocks.
    let comm = comm_blocks.unwrap_or(if gpus > 1 {
        autarky::runtime::MULTI_GPU_COMM_BLOCKS
    } else {
        2
    });
    let builder = || {
        Runtime::builder()
            .pes(pes)
            .comm_blocks(comm)
            .symmetric_heap_bytes(heap)
    };
    if gpus > 1 {
        return Ok((builder().gpus(gpus).gpu().build()?, None));
    }
    let emulator = |threads: u32| -> Result<(Runtime, Option<u32>), CliError> {
        Ok((builder().emulator(threads as usize).build()?, Some(threads)))
    };
    match ctx.emulator {
        Some(t) => emulator(t.unwrap_or_else(Ctx::default_threads)),
        None => match builder().gpu().build() {
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

/// A residual to 4 significant digits (`1.234e-9`); an exact zero (an
/// exact initial guess, a zero right-hand side's component) as `0`, not
/// `0.000e0`.
fn residual_text(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else {
        format!("{v:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residuals_are_written_to_4_digits_and_zero_as_0() {
        assert_eq!(residual_text(0.0), "0");
        assert_eq!(residual_text(1.23456e-9), "1.235e-9");
        assert_eq!(residual_text(f64::NAN), "NaN");
    }

    #[test]
    fn tolerances_must_be_finite_and_non_negative() {
        assert_eq!(parse_tol("1e-6"), Ok(1e-6));
        assert!(parse_tol("-1").is_err());
        assert!(parse_tol("inf").is_err());
        assert!(parse_tol("NaN").is_err());
        assert!(parse_tol("x").is_err());
    }
}
