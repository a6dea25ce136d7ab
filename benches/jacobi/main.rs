//! Jacobi bench: autarky's CPU-free Jacobi solver (`JacobiSolver`, pinned
//! tiles in one persistent megakernel launch) against what CUDA users
//! write without a device-side scheduler, in one process, every variant
//! timed with device events, interleaved rep by rep so clock and thermal
//! drift hit all alike; median and min–max over the timed reps after two
//! warm-ups.
//!
//! Cases (`<gpu>/<family>/<N>`):
//!
//! - `jacobi2d/N`: 5-point f32 on N² interior cells (Dirichlet boundary
//!   from a smooth function, interior 0); `jacobi3d/N`: 7-point f32 on N³.
//!   Variants: `autarky` (no norm), `autarky norm/100` and `autarky
//!   norm/1` (update norm every 100 / every iteration, in the kernel;
//!   shown for reference), `autarky S=2` and in 2D `autarky S=4`
//!   (temporal blocking: 2 or 4 sweeps per synchronisation, no norm; run
//!   when S divides K; their grids must be bitwise autarky's, so the
//!   target, the ratio to the best baseline and TB/s are held against the
//!   fastest of `autarky` and these, which the table names), and the
//!   baselines of `baselines.rs`: `launch`
//!   (a kernel launch per iteration), `cuda-graph` (the same launches
//!   captured once, replayed), `grid-barrier` (one persistent cooperative
//!   kernel with a hand-written grid barrier per iteration). The baselines
//!   compute no norm. Each timed run is K iterations from the initial state
//!   (autarky's `reset()` happens outside the timed region), K chosen per
//!   size so a run lasts ~5–50 ms; the unit is µs per iteration, and TB/s
//!   is 2·cells·4 bytes over that time.
//! - `jacobi2d-pes/N`: the virtual-PE overhead, autarky with P = 4 virtual
//!   PEs on the one GPU (halo pulses between them) against P = 1.
//! - The two-GPU part (`two_gpu.rs`, `two_gpu_part`): a CPU-driven
//!   baseline over 2 GPUs (launch per iteration per GPU, halos by
//!   `cuMemcpyPeerAsync`, stream synchronisation before each norm) and
//!   autarky (one PE per GPU, with S = 1 and S = 4) on 1 and 2 GPUs, then
//!   weak scaling at N² per GPU. It needs 2 GPUs and says so when fewer
//!   are present.
//!
//! Correctness, once per case and outside the timing: every variant's
//! final grid (autarky's three, the three baselines) is compared with
//! autarky's (no-norm) grid; all use the same f32 formula in the same
//! order, so they agree bit for bit in practice; the check allows
//! [`TOLERANCE`] (absolute, on values of order 1) and fails the bench
//! beyond it, so no case times wrong work.
//!
//! Run: `cargo bench --bench jacobi -- --quick` first (well under two
//! minutes on an H200), then `cargo bench --bench jacobi`. `--help` lists
//! the knobs (sizes per family, reps, iterations). Output: one table per
//! part, and `results.json` plus one SVG per family in
//! `target/bench-report/jacobi/` (`AUTARKY_BENCH_OUT` overrides). Without
//! a GPU or NVRTC it prints `SKIP jacobi bench: <reason>` and exits 0.

// The baselines pass `autarky::Error` through unchanged; its size is the
// library's business, not this bench's.
#![allow(clippy::result_large_err)]

mod baselines;
mod cases;
mod config;
#[path = "../common/knobs.rs"]
mod knobs;
#[path = "../common/probe.rs"]
mod probe;
#[path = "../common/report.rs"]
mod report;
mod two_gpu;

use std::error::Error as StdError;
use std::f64::consts::PI;
use std::path::PathBuf;

use autarky::runtime::driver;
use autarky::runtime::nvrtc;
use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver};
use autarky::solvers::jacobi_ref::{JacobiProblem, Stencil};
use autarky::{RunOptions, Runtime, TraceOptions};
use serde_json::json;

use baselines::{Grid, Kernels};
use cases::{Case, Role};
use config::{default_iterations, Config};
use report::gpu_slug;
use report::Spread;

pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// Largest |difference| allowed between any two variants' final grids.
/// Every variant computes the same f32 expression in the same order, so
/// the expected difference is 0; the tolerance (about 80 ulp at 1.0) only
/// covers a compiler contracting differently.
pub const TOLERANCE: f64 = 1e-5;

fn out_dir() -> PathBuf {
    report::bench_dir("jacobi")
}

fn skip(reason: &str) -> BoxResult<()> {
    report::skip("jacobi", reason, &out_dir());
    Ok(())
}

/// The bench problem: interior 0, Dirichlet `1 + ½·sin(kx)·cos(ky)[·cos(kz)]`
/// with k = 2π/n (the `autarky jacobi2d/3d` default).
fn problem(dim: u32, n: u32) -> JacobiProblem {
    let nn = n as usize;
    let k = 2.0 * PI / n as f64;
    let three = dim == 3;
    let (dims, stencil) = if three {
        ([nn, nn, nn], Stencil::SevenPoint)
    } else {
        ([1, nn, nn], Stencil::FivePoint)
    };
    JacobiProblem::new(dims, stencil).with_dirichlet(move |z, y, x| {
        let zf = if three { (k * z as f64).cos() } else { 1.0 };
        1.0 + 0.5 * (k * x as f64).sin() * (k * y as f64).cos() * zf
    })
}

fn padded_cells(dim: u32, n: u32) -> u64 {
    (n as u64 + 2).pow(dim)
}

/// Heap bytes per PE for `solvers` solvers of `k` iterations whose padded
/// sub-grid has at most `local` cells: both f32 buffers, the check's
/// partials (32 bytes a tile, tiles of ≥ ~1024 cells), norms, slack.
fn heap_bytes(local: u64, k: u32, solvers: u64) -> usize {
    let one = 2 * 4 * local + local / 4 + 8 * (k as u64 + 1) + (1 << 20);
    (solvers * one + (16 << 20)) as usize
}

fn max_abs_diff(a: &[f64], b: impl ExactSizeIterator<Item = f64>) -> BoxResult<f64> {
    if a.len() != b.len() {
        return Err(format!("grids of {} and {} cells", a.len(), b.len()).into());
    }
    let mut worst = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs();
        if d.is_nan() {
            return Ok(f64::NAN); // a NaN on either side is a failure, not a 0
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

fn check(case: &str, what: &str, diff: f64) -> BoxResult<()> {
    if diff.is_nan() || diff > TOLERANCE {
        return Err(format!(
            "{case}: {what} differs from autarky's grid by {diff:e} (> {TOLERANCE:e}): refusing to time wrong work"
        )
        .into());
    }
    Ok(())
}

/// Run every single-GPU case once more traced (AUTARKY_BENCH_TRACE=1):
/// the tracing overhead, traced / untraced.
fn bench_traced() -> bool {
    std::env::var("AUTARKY_BENCH_TRACE").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// One timed autarky run of `solver`, configured for `k` sweeps (reset
/// first, outside the timing): seconds for the `k` sweeps, which are
/// `solver.graph_iterations()` graph iterations (fewer with temporal
/// blocking).
fn time_autarky(rt: &Runtime, solver: &JacobiSolver, k: u32, what: &str) -> BoxResult<f64> {
    time_autarky_with(rt, solver, k, what, None)
}

/// [`time_autarky`], traced with `trace` when given.
fn time_autarky_with(
    rt: &Runtime,
    solver: &JacobiSolver,
    k: u32,
    what: &str,
    trace: Option<TraceOptions>,
) -> BoxResult<f64> {
    solver.reset()?;
    let g = solver.graph_iterations();
    let opts = RunOptions {
        iterations: g,
        timed: true,
        trace,
        ..Default::default()
    };
    let r = rt
        .run_with(solver.graph(), opts)
        .map_err(|e| format!("autarky {what}: {e}"))?;
    if r.iterations != g {
        return Err(format!(
            "autarky {what}: ran {} of {g} graph iterations ({k} sweeps)",
            r.iterations
        )
        .into());
    }
    let ms = r
        .event_ms
        .ok_or_else(|| format!("autarky {what}: a timed run returned no event time"))?;
    Ok(ms as f64 * 1e-3)
}

/// The downloaded interior of a baseline's result.
fn baseline_field(g: &Grid, k: u32) -> BoxResult<Vec<f32>> {
    let mut padded = vec![0f32; padded_cells(g.dim, g.n) as usize];
    g.result(k).download(&mut padded)?;
    Ok(baselines::interior(g.dim, g.n as usize, &padded))
}

/// A single-GPU case: autarky (three norm settings) and three baselines.
fn single_case(cfg: &Config, slug: &str, dim: u32, n: u32) -> BoxResult<Case> {
    let family = if dim == 2 { "jacobi2d" } else { "jacobi3d" };
    let cells = (n as u64).pow(dim);
    let k = cfg
        .iterations
        .unwrap_or_else(|| default_iterations(2 * 4 * cells));
    let mut case = Case::new(
        slug,
        family,
        n,
        dim,
        k,
        &[
            ("autarky", Role::Autarky),
            ("autarky norm/100", Role::Reference),
            ("autarky norm/1", Role::Reference),
            ("launch", Role::Baseline),
            ("cuda-graph", Role::Baseline),
            ("grid-barrier", Role::Baseline),
        ][..],
    );
    if bench_traced() {
        case.add_variant("autarky traced", Role::Reference);
    }
    // Temporal blocking (2D 5-point: S = 2 and 4; 3D 7-point: S = 2): S
    // sweeps per synchronisation, where S divides the iteration count; no
    // norm, like `autarky`.
    let steps: &[(&'static str, u32)] = if dim == 2 {
        &[("autarky S=2", 2), ("autarky S=4", 4)]
    } else {
        &[("autarky S=2", 2)]
    };
    let temporal: Vec<(&'static str, u32)> =
        steps.iter().copied().filter(|&(_, s)| k % s == 0).collect();
    for &(what, _) in &temporal {
        case.add_variant(what, Role::Candidate);
    }
    let name = case.name.clone();
    eprintln!("{name}: {k} iterations per run; building …");
    // Ghosts up to 4 deep (S = 4): (n + 8)^d cells a buffer at most.
    let rt = Runtime::builder()
        .gpu()
        .symmetric_heap_bytes(heap_bytes(
            padded_cells(dim, n + 6),
            k,
            3 + temporal.len() as u64,
        ))
        .build()?;
    let ctx = rt.context().ok_or("the GPU runtime has no context")?;
    let p = problem(dim, n);
    let solver = |check_every: u32| {
        JacobiSolver::new(
            &rt,
            JacobiConfig {
                check_every,
                ..JacobiConfig::new(p.clone(), k)
            },
        )
    };
    let mut solvers = vec![
        ("autarky", solver(0)?),
        ("autarky norm/100", solver(100)?),
        ("autarky norm/1", solver(1)?),
    ];
    for &(what, steps) in &temporal {
        let s = JacobiSolver::new(
            &rt,
            JacobiConfig {
                steps_per_sync: steps,
                ..JacobiConfig::new(p.clone(), k)
            },
        )?;
        solvers.push((what, s));
    }
    let kern = Kernels::new(ctx)?;
    let init = baselines::initial(dim, n as usize, &*p.dirichlet);
    let grid = Grid::new(ctx, dim, n, &init)?;

    // ---- correctness, once, outside the timing ----
    let reference = solvers[0].1.run()?;
    if reference.iterations != k {
        return Err(format!(
            "{name}: autarky ran {} of {k} iterations",
            reference.iterations
        )
        .into());
    }
    if reference.field.iter().any(|v| !v.is_finite()) {
        return Err(format!("{name}: autarky's grid holds a non-finite value").into());
    }
    let scale = reference.field.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale <= 0.1 {
        return Err(
            format!("{name}: autarky's grid did not move from 0 (max |a| = {scale})").into(),
        );
    }
    let mut worst = 0.0f64;
    for (what, s) in &solvers[1..] {
        let f = s.run()?.field;
        let d = max_abs_diff(&reference.field, f.into_iter())?;
        // Temporal blocking computes the same formulas of the same values:
        // its grid must be bitwise autarky's, not merely close.
        if what.starts_with("autarky S=") && d != 0.0 {
            return Err(format!(
                "{name}: {what} differs from autarky's grid by {d:e}; it must be bitwise equal: refusing to time wrong work"
            )
            .into());
        }
        check(&name, what, d)?;
        worst = worst.max(d);
    }
    let exec = kern.capture(&grid, k)?;
    for what in ["launch", "cuda-graph", "grid-barrier"] {
        grid.reset(&init)?;
        match what {
            "launch" => {
                kern.launches(&grid, k)?;
            }
            "cuda-graph" => {
                kern.replay(&exec)?;
            }
            _ => {
                kern.persistent(&grid, k)?;
            }
        }
        kern.synchronize()?;
        let f = baseline_field(&grid, k)?;
        let d = max_abs_diff(&reference.field, f.iter().map(|&v| v as f64))?;
        check(&name, what, d)?;
        worst = worst.max(d);
    }
    drop(reference);
    case.checked = format!(
        "max |Δ| {worst:e} over {} grids vs autarky's",
        solvers.len() - 1 + 3
    );
    eprintln!("{name}: correctness ok ({}); timing …", case.checked);

    // ---- timing ----
    for rep in 0..cfg.warmup + cfg.reps {
        let keep = rep >= cfg.warmup;
        let mut row = Vec::with_capacity(6);
        for (what, s) in &solvers {
            row.push((*what, time_autarky(&rt, s, k, what)?));
        }
        if bench_traced() {
            let t = TraceOptions {
                records_per_block: 4096,
            };
            row.push((
                "autarky traced",
                time_autarky_with(&rt, &solvers[0].1, k, "traced", Some(t))?,
            ));
        }
        row.push(("launch", kern.launches(&grid, k)?));
        row.push(("cuda-graph", kern.replay(&exec)?));
        row.push(("grid-barrier", kern.persistent(&grid, k)?));
        if keep {
            for (what, s) in row {
                case.push(what, s);
            }
        }
    }
    Ok(case)
}

/// The virtual-PE overhead at 2D size `n`: autarky with P = 4 against P = 1.
fn pes_case(cfg: &Config, slug: &str, n: u32) -> BoxResult<Case> {
    let k = cfg
        .iterations
        .unwrap_or_else(|| default_iterations(2 * 4 * (n as u64).pow(2)));
    let mut case = Case::new(
        slug,
        "jacobi2d-pes",
        n,
        2,
        k,
        &[
            ("autarky P=4", Role::Autarky),
            ("autarky P=1", Role::Baseline),
        ],
    );
    let name = case.name.clone();
    eprintln!("{name}: {k} iterations per run; building …");
    let padded = padded_cells(2, n);
    let rt1 = Runtime::builder()
        .gpu()
        .symmetric_heap_bytes(heap_bytes(padded, k, 1))
        .build()?;
    // A PE's sub-grid of a 4-way split: a quarter plus its ghost layers.
    let local = padded / 4 + 4 * (n as u64 + 3) + 64;
    let p = problem(2, n);
    // The comm blocks the CLI gives virtual PEs (one per pulse chunk).
    let comm =
        autarky::solvers::jacobi::comm_blocks_for_virtual_pes(&JacobiConfig::new(p.clone(), k), 4);
    let rt4 = Runtime::builder()
        .gpu()
        .pes(4)
        .comm_blocks(comm)
        .symmetric_heap_bytes(heap_bytes(local, k, 1))
        .build()?;
    let s1 = JacobiSolver::new(&rt1, JacobiConfig::new(p.clone(), k))?;
    let s4 = JacobiSolver::new(&rt4, JacobiConfig::new(p, k))?;
    let f1 = s1.run()?.field;
    let f4 = s4.run()?.field;
    let d = max_abs_diff(&f1, f4.into_iter())?;
    check(&name, "autarky P=4", d)?;
    case.checked = format!(
        "max |Δ| {d:e} (P=4 on PE grid {:?}, {comm} comm block{} a PE, vs P=1)",
        s4.pe_grid(),
        if comm == 1 { "" } else { "s" }
    );
    eprintln!("{name}: correctness ok ({}); timing …", case.checked);
    for rep in 0..cfg.warmup + cfg.reps {
        let t4 = time_autarky(&rt4, &s4, k, "P=4")?;
        let t1 = time_autarky(&rt1, &s1, k, "P=1")?;
        if rep >= cfg.warmup {
            case.push("autarky P=4", t4);
            case.push("autarky P=1", t1);
        }
    }
    Ok(case)
}

/// A runtime of `gpus` GPUs with one PE each, its heap sized for a padded
/// sub-grid of `local` cells.
fn gpus_runtime(gpus: u32, local: u64, k: u32, solvers: u64) -> BoxResult<Runtime> {
    let mut b = Runtime::builder().gpu();
    if gpus > 1 {
        b = b.gpus(gpus).pes(gpus);
    }
    Ok(b.symmetric_heap_bytes(heap_bytes(local, k, solvers))
        .build()?)
}

/// The 2D problem of the bench on an `ny × nx` grid (weak scaling stacks
/// one GPU's square along y).
fn problem_rect(ny: u32, nx: u32) -> JacobiProblem {
    let k = 2.0 * PI / nx as f64;
    JacobiProblem::new([1, ny as usize, nx as usize], Stencil::FivePoint)
        .with_dirichlet(move |_z, y, x| 1.0 + 0.5 * (k * x as f64).sin() * (k * y as f64).cos())
}

fn spread_cell(s: Option<Spread>) -> String {
    s.map_or("—".into(), |s| {
        format!("{:.3} [{:.3}–{:.3}]", s.median, s.min, s.max)
    })
}

/// The two-GPU part; its results (or why it did not run) as JSON.
///
/// Strong scaling at N² total: a CPU-driven baseline (a launch per
/// iteration per GPU, halos by peer copies, a synchronisation before each
/// norm) on 1 and 2 GPUs against autarky on 1 GPU and on 2 GPUs (one PE
/// per GPU, CPU-free), each also with S = 4 (temporal blocking) when 4
/// divides the iterations. Weak scaling at N² per GPU: autarky on 1 GPU
/// (N²) against 2 GPUs (2N × N, split along y), S = 1 and S = 4; at 256²
/// the ≤ 3 µs target is held against the faster of the two on 2 GPUs.
/// Every grid is checked against the 1-GPU baseline's and autarky 1 GPU's
/// bitwise (strong), or 2 GPUs' against 2 virtual PEs' and S = 4's against
/// S = 1's bitwise (weak), before anything is timed.
fn two_gpu_part(cfg: &Config, arch: u32) -> BoxResult<serde_json::Value> {
    if cfg.sizes_two_gpu.is_empty() && cfg.sizes_weak.is_empty() {
        return Ok(json!({ "skipped": "no sizes selected" }));
    }
    let count = driver::device_count()?;
    if count < 2 {
        let why = format!("needs 2 GPUs, {count} present");
        println!("SKIP jacobi two-GPU part: {why}");
        return Ok(json!({ "skipped": why }));
    }
    let cubin = nvrtc::compile_cubin(&nvrtc::Program {
        name: "jacobi_baselines.cu",
        source: baselines::SOURCE,
        headers: &[],
        options: vec!["--std=c++17".into()],
        arch,
    })?;
    // (label, GPUs, check_every, autarky?). The S = 4 rows (temporal
    // blocking: bitwise the same grid) run where the iterations allow.
    let variants: [(&str, usize, u32, bool); 9] = [
        ("cpu-driven 1 GPU", 1, 0, false),
        ("cpu-driven 2 GPUs", 2, 0, false),
        ("cpu-driven 2 GPUs norm/100", 2, 100, false),
        ("cpu-driven 2 GPUs norm/1", 2, 1, false),
        ("autarky 1 GPU", 1, 0, true),
        ("autarky 2 GPUs", 2, 0, true),
        ("autarky 2 GPUs norm/100", 2, 100, true),
        ("autarky 1 GPU S=4", 1, 0, true),
        ("autarky 2 GPUs S=4", 2, 0, true),
    ];
    let s4 = |what: &str| what.ends_with("S=4");
    let mut lines = vec![format!(
        "{:<22} {:>6}  {}  {:>8} {:>8} {:>8}",
        "two-GPU case (strong)",
        "iters",
        variants
            .iter()
            .map(|v| format!("{:>26}", v.0))
            .collect::<Vec<_>>()
            .join(" "),
        "autarky",
        "autarky",
        "best",
    )];
    lines.push(format!(
        "{:<22} {:>6}  {}  {:>8} {:>8} {:>8}",
        "",
        "",
        " ".repeat(27 * variants.len() - 1),
        "2 vs 1",
        "vs cpu2",
        "2 vs 1"
    ));
    let mut results = Vec::new();
    for &n in &cfg.sizes_two_gpu {
        let k = cfg
            .iterations
            .unwrap_or_else(|| default_iterations(2 * 4 * (n as u64).pow(2)));
        let name = format!("two-GPU {n}²");
        eprintln!("{name}: {k} iterations per run; building …");
        let p = problem(2, n);
        let init = baselines::initial(2, n as usize, &*p.dirichlet);
        let mut one = two_gpu::CpuDriven::new(1, n as usize, &cubin, &init)?;
        let mut two = two_gpu::CpuDriven::new(2, n as usize, &cubin, &init)?;
        // Correctness: 2 GPUs against 1, grid and last norm.
        let o1 = one.run(k, 100)?;
        let o2 = two.run(k, 100)?;
        let reference: Vec<f64> = one.field(k)?.iter().map(|&v| v as f64).collect();
        let d = max_abs_diff(&reference, two.field(k)?.iter().map(|&v| v as f64))?;
        check(&name, "cpu-driven 2 GPUs", d)?;
        let (l1, l2) = (o1.norms.last().map(|v| v.1), o2.norms.last().map(|v| v.1));
        match (l1, l2) {
            (Some(a), Some(b)) if (a - b).abs() <= 1e-9 * a.abs().max(1e-30) => {}
            _ => {
                return Err(
                    format!("{name}: last norms differ: 1 GPU {l1:?}, 2 GPUs {l2:?}").into(),
                )
            }
        }
        // autarky: 1 GPU, 2 GPUs, 2 GPUs with the norm every 100, and
        // S = 4 on 1 and 2 GPUs (ghosts 4 deep).
        let padded = padded_cells(2, n + 6);
        let rt1 = gpus_runtime(1, padded, k, 3)?;
        let rt2 = gpus_runtime(2, padded / 2 + 8 * (n as u64 + 9) + 64, k, 4)?;
        let with_s4 = k % 4 == 0;
        let a1 = JacobiSolver::new(&rt1, JacobiConfig::new(p.clone(), k))?;
        let a2 = JacobiSolver::new(&rt2, JacobiConfig::new(p.clone(), k))?;
        let a2n = JacobiSolver::new(
            &rt2,
            JacobiConfig {
                check_every: 100,
                ..JacobiConfig::new(p.clone(), k)
            },
        )?;
        let temporal = |rt| -> BoxResult<Option<JacobiSolver<'_>>> {
            if !with_s4 {
                return Ok(None);
            }
            let c = JacobiConfig {
                steps_per_sync: 4,
                ..JacobiConfig::new(p.clone(), k)
            };
            Ok(Some(JacobiSolver::new(rt, c)?))
        };
        let (a1s, a2s) = (temporal(&rt1)?, temporal(&rt2)?);
        let f1 = a1.run()?.field;
        let mut worst = d;
        let mut grids = vec![
            ("autarky 1 GPU", f1.clone()),
            ("autarky 2 GPUs", a2.run()?.field),
            ("autarky 2 GPUs norm/100", a2n.run()?.field),
        ];
        if let (Some(x1), Some(x2)) = (&a1s, &a2s) {
            grids.push(("autarky 1 GPU S=4", x1.run()?.field));
            grids.push(("autarky 2 GPUs S=4", x2.run()?.field));
        }
        for (what, f) in grids {
            let d = max_abs_diff(&reference, f.iter().copied())?;
            check(&name, what, d)?;
            worst = worst.max(d);
            if what != "autarky 1 GPU" && f != f1 {
                return Err(format!("{name}: {what}'s grid is not bitwise autarky 1 GPU's").into());
            }
        }
        eprintln!("{name}: correctness ok (max |Δ| {worst:e} vs the 1-GPU baseline; autarky's grids bitwise equal); timing …");
        let mut secs: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for rep in 0..cfg.warmup + cfg.reps {
            for (i, &(what, gpus, every, autarky)) in variants.iter().enumerate() {
                let us = if autarky {
                    let (rt, s) = match (gpus, every, s4(what)) {
                        (1, _, true) => match &a1s {
                            Some(s) => (&rt1, s),
                            None => continue,
                        },
                        (_, _, true) => match &a2s {
                            Some(s) => (&rt2, s),
                            None => continue,
                        },
                        (1, _, _) => (&rt1, &a1),
                        (_, 0, _) => (&rt2, &a2),
                        _ => (&rt2, &a2n),
                    };
                    time_autarky(rt, s, k, what)? * 1e6 / k as f64
                } else {
                    let s = if gpus == 1 { &mut one } else { &mut two };
                    s.reset(&init)?;
                    s.run(k, every)?.seconds * 1e6 / k as f64
                };
                if rep >= cfg.warmup {
                    secs[i].push(us);
                }
            }
        }
        let spreads: Vec<Option<Spread>> = secs.iter().map(|v| Spread::of(v)).collect();
        let med = |i: usize| spreads[i].map(|s| s.median);
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "—".into(),
        };
        // The best autarky time on each side (S = 1 or 4: the same grid).
        let best = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        lines.push(format!(
            "{:<22} {:>6}  {}  {:>8} {:>8} {:>8}",
            format!("jacobi2d-2gpu/{n}"),
            k,
            spreads
                .iter()
                .map(|s| format!("{:>26}", spread_cell(*s)))
                .collect::<Vec<_>>()
                .join(" "),
            ratio(med(4), med(5)),
            ratio(med(1), med(5)),
            ratio(best(med(4), med(7)), best(med(5), med(8))),
        ));
        results.push(json!({
            "n": n,
            "iterations": k,
            "unit": "µs/iteration",
            "max_abs_diff_vs_cpu_driven_1gpu": worst,
            "variants": variants.iter().zip(&spreads).zip(&secs).map(|((v, s), vals)| json!({
                "variant": v.0, "gpus": v.1, "check_every": v.2, "spread": s, "values": vals,
            })).collect::<Vec<_>>(),
        }));
    }
    let mut weak = Vec::new();
    let mut wlines = vec![format!(
        "{:<22} {:>6}  {:>26} {:>26}  {:>10}  {:>26} {:>26}  {:>10}  {}",
        "two-GPU case (weak)",
        "iters",
        "autarky 1 GPU (N²)",
        "autarky 2 GPUs (2N×N)",
        "efficiency",
        "1 GPU S=4",
        "2 GPUs S=4",
        "S=4 eff.",
        "target"
    )];
    for &n in &cfg.sizes_weak {
        let k = cfg
            .iterations
            .unwrap_or_else(|| default_iterations(2 * 4 * (n as u64).pow(2)));
        let name = format!("weak {n}² per GPU");
        eprintln!("{name}: {k} iterations per run; building …");
        let padded = padded_cells(2, n + 6);
        let rt1 = gpus_runtime(1, padded, k, 2)?;
        let rt2 = gpus_runtime(2, padded + 8 * (n as u64 + 9) + 64, k, 2)?;
        let with_s4 = k % 4 == 0;
        let cfg1 = |steps| JacobiConfig {
            steps_per_sync: steps,
            ..JacobiConfig::new(problem_rect(n, n), k)
        };
        let cfg2 = |steps| JacobiConfig {
            pe_grid: Some([1, 2, 1]),
            steps_per_sync: steps,
            ..JacobiConfig::new(problem_rect(2 * n, n), k)
        };
        let a1 = JacobiSolver::new(&rt1, cfg1(1))?;
        let a2 = JacobiSolver::new(&rt2, cfg2(1))?;
        let (a1s, a2s) = if with_s4 {
            (
                Some(JacobiSolver::new(&rt1, cfg1(4))?),
                Some(JacobiSolver::new(&rt2, cfg2(4))?),
            )
        } else {
            (None, None)
        };
        // Correctness: the 2-GPU run against the same 2N × N grid on 2
        // virtual PEs of one GPU (bitwise), and finite, moving values.
        let rtv = Runtime::builder()
            .gpu()
            .pes(2)
            .symmetric_heap_bytes(heap_bytes(padded + 4 * (n as u64 + 3) + 64, k, 1))
            .build()?;
        let av = JacobiSolver::new(
            &rtv,
            JacobiConfig {
                pe_grid: Some([1, 2, 1]),
                ..JacobiConfig::new(problem_rect(2 * n, n), k)
            },
        )?;
        let f2 = a2.run()?.field;
        if f2 != av.run()?.field {
            return Err(format!("{name}: 2 GPUs' grid is not bitwise 2 virtual PEs'").into());
        }
        let f1 = a1.run()?.field;
        if f2.iter().any(|v| !v.is_finite()) || f1.iter().any(|v| !v.is_finite()) {
            return Err(format!("{name}: a grid holds a non-finite value").into());
        }
        // S = 4 computes the same grids, bitwise.
        if let (Some(x1), Some(x2)) = (&a1s, &a2s) {
            if x1.run()?.field != f1 {
                return Err(format!("{name}: 1 GPU S=4's grid is not bitwise S=1's").into());
            }
            if x2.run()?.field != f2 {
                return Err(format!("{name}: 2 GPUs S=4's grid is not bitwise S=1's").into());
            }
        }
        drop(av);
        drop(rtv);
        eprintln!(
            "{name}: correctness ok (2 GPUs bitwise = 2 virtual PEs{}); timing …",
            if with_s4 {
                "; S = 4 bitwise = S = 1"
            } else {
                ""
            }
        );
        let (mut t1, mut t2, mut t1s, mut t2s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for rep in 0..cfg.warmup + cfg.reps {
            let x1 = time_autarky(&rt1, &a1, k, "weak 1 GPU")? * 1e6 / k as f64;
            let x2 = time_autarky(&rt2, &a2, k, "weak 2 GPUs")? * 1e6 / k as f64;
            let xs = match (&a1s, &a2s) {
                (Some(s1), Some(s2)) => Some((
                    time_autarky(&rt1, s1, k, "weak 1 GPU S=4")? * 1e6 / k as f64,
                    time_autarky(&rt2, s2, k, "weak 2 GPUs S=4")? * 1e6 / k as f64,
                )),
                _ => None,
            };
            if rep >= cfg.warmup {
                t1.push(x1);
                t2.push(x2);
                if let Some((a, b)) = xs {
                    t1s.push(a);
                    t2s.push(b);
                }
            }
        }
        let (s1, s2) = (Spread::of(&t1), Spread::of(&t2));
        let (s1s, s2s) = (Spread::of(&t1s), Spread::of(&t2s));
        let eff = |a: Option<Spread>, b: Option<Spread>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.0} %", 100.0 * a.median / b.median),
            _ => "—".into(),
        };
        // The target at 256² a GPU: ≤ 3 µs per iteration on two
        // GPUs, held against the faster of S = 1 and S = 4 (the same grid).
        let held = [s2, s2s]
            .into_iter()
            .flatten()
            .map(|s| s.median)
            .min_by(f64::total_cmp);
        let target = match (n, held) {
            (256, Some(h)) => format!(
                "≤ 3 µs {} ({h:.3}{})",
                if h <= 3.0 { "ok" } else { "MISS" },
                if s2s.is_some_and(|s| s.median == h) {
                    ", S=4"
                } else {
                    ""
                }
            ),
            _ => String::new(),
        };
        wlines.push(format!(
            "{:<22} {:>6}  {:>26} {:>26}  {:>10}  {:>26} {:>26}  {:>10}  {}",
            format!("jacobi2d-weak/{n}"),
            k,
            spread_cell(s1),
            spread_cell(s2),
            eff(s1, s2),
            spread_cell(s1s),
            spread_cell(s2s),
            eff(s1s, s2s),
            target
        ));
        weak.push(json!({
            "n_per_gpu": n, "iterations": k, "unit": "µs/iteration",
            "autarky_1gpu": s1, "autarky_2gpu": s2, "values_1gpu": t1, "values_2gpu": t2,
            "autarky_1gpu_s4": s1s, "autarky_2gpu_s4": s2s, "values_1gpu_s4": t1s, "values_2gpu_s4": t2s,
        }));
    }
    println!();
    for l in lines {
        println!("{l}");
    }
    println!("µs per iteration, median [min–max]; '2 vs 1' = autarky 1 GPU / autarky 2 GPUs (speedup); 'vs cpu2' = cpu-driven 2 GPUs / autarky 2 GPUs (> 1: autarky faster); \
              'best 2 vs 1' = the faster of S = 1 and S = 4 on 1 GPU / the same on 2 GPUs (S = 4 computes the same grid, bitwise; checked).");
    if !weak.is_empty() {
        println!();
        for l in wlines {
            println!("{l}");
        }
        println!("weak scaling: efficiency = time per iteration on 1 GPU (N²) / on 2 GPUs (2N × N); 100 % is flat.");
    }
    Ok(json!({ "gpus_present": count, "cases": results, "weak": weak }))
}

fn main() -> BoxResult<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let cfg = Config::from_env_and_args()?;

    let props = match probe::gpu()? {
        probe::Probe::Gpu(rt, props) => {
            drop(rt); // the cases build their own runtimes
            props
        }
        probe::Probe::Skip(why) => return skip(&why),
    };
    let slug = gpu_slug(&props.name);
    println!(
        "jacobi bench on {} (sm_{}, {} SMs): 2D {:?}, 3D {:?}, PEs {:?}, two-GPU {:?}, weak {:?}; {} warm-up + {} timed reps per case{}",
        props.name,
        props.arch(),
        props.sm_count,
        cfg.sizes_2d,
        cfg.sizes_3d,
        cfg.sizes_pes,
        cfg.sizes_two_gpu,
        cfg.sizes_weak,
        cfg.warmup,
        cfg.reps,
        if cfg.quick { " (QUICK)" } else { "" }
    );

    let mut cases = Vec::new();
    for &n in &cfg.sizes_2d {
        cases.push(single_case(&cfg, &slug, 2, n)?);
    }
    for &n in &cfg.sizes_3d {
        cases.push(single_case(&cfg, &slug, 3, n)?);
    }
    let mut pes = Vec::new();
    for &n in &cfg.sizes_pes {
        pes.push(pes_case(&cfg, &slug, n)?);
    }

    println!();
    if !cases.is_empty() {
        print!("{}", cases::table(&cases.iter().collect::<Vec<_>>()));
        println!(
            "µs per iteration, median [min–max] over {} timed reps; held = the fastest of autarky and its S = 2, 4 columns \
             (temporal blocking computes the same grid, bitwise; named when it is the one held); \
             best/held = fastest baseline / held (> 1: autarky faster); TB/s = 2·cells·4 B per iteration; \
             neither autarky's timed columns nor the baselines compute a norm.",
            cfg.reps
        );
    }
    if !pes.is_empty() {
        println!();
        print!("{}", cases::pes_table(&pes.iter().collect::<Vec<_>>()));
        println!("virtual-PE overhead: autarky with 4 PEs on one GPU (halo pulses between them) against 1 PE.");
    }
    for c in cases.iter().chain(&pes) {
        println!("checked {}: {}", c.name, c.checked);
    }
    if bench_traced() {
        println!("tracing overhead (AUTARKY_BENCH_TRACE=1, 4096 records per block): traced / untraced, medians");
        for c in &cases {
            if let (Some(t), Some(u)) = (c.spread("autarky traced"), c.spread("autarky")) {
                println!("  {:<28} {:.3}×", c.name, t.median / u.median);
            }
        }
    }
    let two = two_gpu_part(&cfg, props.arch())?;

    let mut ratio_goals = serde_json::Map::new();
    for c in &cases {
        if let Some((v, want, got)) = c.ratio_goal() {
            ratio_goals.insert(
                c.name.clone(),
                json!({ "baseline": v, "want_ratio_at_least": want, "measured": got,
                        "met": got.is_some_and(|g| g >= want) }),
            );
        }
    }
    let mut facts = serde_json::Map::new();
    for (k, v) in [
        ("device", json!(props.name)),
        ("arch", props.arch().into()),
        ("sm_count", props.sm_count.into()),
        ("quick", cfg.quick.into()),
        ("warmup", cfg.warmup.into()),
        ("reps", cfg.reps.into()),
        ("precision", "f32".into()),
        ("tolerance", TOLERANCE.into()),
        (
            "ratio",
            "baseline time / autarky time per iteration; > 1 means autarky is faster".into(),
        ),
        (
            "jacobi2d-pes",
            "autarky is P = 4 virtual PEs, the 'baseline' is P = 1: a ratio below 1 is the overhead".into(),
        ),
        ("ratio_goals", serde_json::Value::Object(ratio_goals)),
        (
            "checked",
            cases
                .iter()
                .chain(&pes)
                .map(|c| (c.name.clone(), json!(c.checked)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        ),
        ("two_gpu", two),
    ] {
        facts.insert(k.to_string(), v);
    }
    let rep = report::Report {
        bench: "jacobi".into(),
        facts,
        cases: cases
            .iter()
            .chain(&pes)
            .filter_map(Case::to_result)
            .collect(),
    };
    let w = report::write(&rep, &out_dir())?;
    println!("wrote {}", w.json.display());
    for c in &w.charts {
        println!("wrote {}", c.display());
    }
    Ok(())
}
