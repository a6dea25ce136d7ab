//! The two-GPU part: strong scaling of autarky's CG, the same matrix on
//! one GPU (1 PE) and on two GPUs (`Builder::gpus(2).pes(2)`, one PE per
//! GPU, the halo and the allreduces between the GPUs inside the one
//! megakernel launch per GPU), standard and single-reduction, f64, fixed
//! iterations (tolerance 0), every configuration timed with device events
//! (GPU 0's kernel, which ends when both have), interleaved rep by rep.
//!
//! Correctness, once per case, before any timing:
//!
//! * x and the recursive residual on 2 GPUs are **bitwise** those on 2
//!   virtual PEs of one GPU: the solver is deterministic for a given PE
//!   count (the row split and the reduction order depend on the PE count
//!   only), so any difference is a transport bug, not rounding;
//! * the recursive residuals of the four configurations agree to
//!   `check::REL_TOL` (after `check::CHECK_ITERS` iterations when the
//!   timed count has converged to rounding level, as in `check.rs`), and
//!   their true residuals `‖b − A x‖/‖b‖` agree (`check::true_agree`);
//!   1 PE and 2 PEs split the dot products differently, so these agree to
//!   rounding, not bitwise.
//!
//! Heaps: symmetric allocations are never freed, so every runtime gets the
//! sum of its solvers' `heap_bytes_needed` (two solvers each).

use autarky::runtime::driver;
use autarky::solvers::cg::{heap_bytes_needed, poisson2d, poisson3d, CgRun, CgSolver, CgVariant};
use autarky::Runtime;
use serde_json::json;

use crate::check::{self, Reading};
use crate::config::{default_iterations, Config, TwoGpuCase};
use crate::scaling::{self, ScalingCase, VARIANTS};
use crate::{cg_config, time_autarky, BoxResult};

/// The recurrences, in [`VARIANTS`] order.
const RECURRENCES: [CgVariant; 2] = [CgVariant::Standard, CgVariant::SingleReduction];

/// Names of the checked configurations, `[variant][gpus − 1]`.
const LABELS: [[&str; 2]; 2] = [
    ["autarky 1 GPU", "autarky 2 GPUs"],
    [
        "autarky single-reduction 1 GPU",
        "autarky single-reduction 2 GPUs",
    ],
];

/// A runtime of `gpus` GPUs and `pes` PEs (a multiple of `gpus`) with
/// room for two solvers of `a`.
fn runtime(a: &autarky::solvers::cg::Csr<f64>, gpus: u32, pes: u32) -> BoxResult<Runtime> {
    let heap = heap_bytes_needed(a, pes)?;
    // As the CLI: 2 comm blocks on one GPU, the multi-GPU default (gathers
    // split over more blocks) on several.
    let mut b = Runtime::builder().gpu().comm_blocks(2);
    if gpus > 1 {
        b = b
            .gpus(gpus)
            .comm_blocks(autarky::runtime::MULTI_GPU_COMM_BLOCKS);
    }
    if pes > 1 {
        b = b.pes(pes);
    }
    Ok(b.symmetric_heap_bytes(2 * heap + (16 << 20)).build()?)
}

/// Standard and single-reduction solvers of `k` iterations on `rt`.
fn solvers<'a>(
    rt: &'a Runtime,
    a: &'a autarky::solvers::cg::Csr<f64>,
    k: u32,
) -> BoxResult<[CgSolver<'a>; 2]> {
    Ok([
        CgSolver::new(rt, a, cg_config(RECURRENCES[0], k))?,
        CgSolver::new(rt, a, cg_config(RECURRENCES[1], k))?,
    ])
}

/// One untimed-for-the-table run of each solver: the runs, after checking
/// that x is finite.
fn runs(s: &[CgSolver; 2], k: u32, what: [&str; 2]) -> BoxResult<[CgRun; 2]> {
    let one = |i: usize| -> BoxResult<CgRun> {
        let (_, run) = time_autarky(&s[i], k, what[i])?;
        if run.x.iter().any(|v| !v.is_finite()) {
            return Err(format!("{}: the solution holds a non-finite value", what[i]).into());
        }
        Ok(run)
    };
    Ok([one(0)?, one(1)?])
}

fn bitwise_equal(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(u, v)| u.to_bits() == v.to_bits())
}

fn reading(variant: &'static str, r: &CgRun) -> Reading {
    Reading {
        variant,
        recursive: r.rel_residual,
        true_residual: r.true_rel_residual,
    }
}

/// Free device memory on GPU 0 must hold `need` bytes (a clear error
/// rather than an allocation failure halfway).
fn room(rt: &Runtime, need: u64, name: &str) -> BoxResult<()> {
    if let Ok((free, _)) = rt.device_memory() {
        if need > free as u64 {
            return Err(format!(
                "{name}: needs about {need} bytes of device memory on GPU 0, {free} are free"
            )
            .into());
        }
    }
    Ok(())
}

fn run_case(cfg: &Config, slug: &str, c: TwoGpuCase) -> BoxResult<ScalingCase> {
    let a = match c.family {
        "poisson3d" => poisson3d(c.n as usize)?,
        _ => poisson2d(c.n as usize)?,
    };
    let (rows, nnz) = (a.n_rows() as u64, a.nnz() as u64);
    let k = cfg
        .iterations
        .unwrap_or_else(|| default_iterations(rows, nnz));
    let mut case = ScalingCase::new(slug, c.family, c.n, (rows, nnz), k);
    let name = case.name.clone();
    eprintln!("{name}: {rows} rows, {nnz} nonzeros, {k} iterations per run; building …");
    let heap1 = heap_bytes_needed(&a, 1)? as u64;
    let heap2 = heap_bytes_needed(&a, 2)? as u64;

    // ---- correctness, once, outside the timing ----
    let rt2 = runtime(&a, 2, 2)?;
    // GPU 0 holds rt2's PE 0 and, for the bitwise check, both PEs of the
    // virtual-PE runtime (dropped before rt1 is built).
    room(&rt2, 2 * heap2 + 4 * heap2, &name)?;
    let s2 = solvers(&rt2, &a, k)?;
    eprintln!(
        "{name}: tiles per PE on 2 GPUs {:?} (standard), {:?} (single reduction)",
        s2[0].tiles_per_pe(),
        s2[1].tiles_per_pe()
    );
    let r2 = runs(&s2, k, [LABELS[0][1], LABELS[1][1]])?;
    {
        let rtv = runtime(&a, 1, 2)?;
        let sv = solvers(&rtv, &a, k)?;
        let rv = runs(
            &sv,
            k,
            [
                "autarky 2 virtual PEs",
                "autarky single-reduction 2 virtual PEs",
            ],
        )?;
        for i in 0..2 {
            if !bitwise_equal(&r2[i].x, &rv[i].x)
                || r2[i].rel_residual.to_bits() != rv[i].rel_residual.to_bits()
            {
                let diff = r2[i]
                    .x
                    .iter()
                    .zip(&rv[i].x)
                    .filter(|(u, v)| u.to_bits() != v.to_bits())
                    .count();
                return Err(format!(
                    "{name}: {}: x on 2 GPUs differs from 2 virtual PEs of one GPU in {diff} of {rows} entries (recursive residual {:e} against {:e}); the solver is deterministic for a PE count, so this is a transport bug; refusing to time wrong work",
                    VARIANTS[i], r2[i].rel_residual, rv[i].rel_residual
                )
                .into());
            }
        }
    }
    let rt1 = runtime(&a, 1, 1)?;
    room(&rt1, 2 * heap1, &name)?;
    let s1 = solvers(&rt1, &a, k)?;
    let r1 = runs(&s1, k, [LABELS[0][0], LABELS[1][0]])?;

    let at_k = [
        reading(LABELS[0][0], &r1[0]),
        reading(LABELS[0][1], &r2[0]),
        reading(LABELS[1][0], &r1[1]),
        reading(LABELS[1][1], &r2[1]),
    ];
    let worst_true = check::true_agree(&name, &at_k[0], &at_k[1..])?;
    let comparable = check::comparable(at_k[0].recursive);
    let (kc, at_kc) = if comparable {
        (k, at_k.to_vec())
    } else {
        // Converged: the recursive residuals have drifted apart by
        // rounding (check.rs); compare them after CHECK_ITERS instead, on
        // fresh runtimes (the heaps hold two solvers each).
        let kc = check::CHECK_ITERS.min(k);
        eprintln!(
            "{name}: recursive residual {:.3e} after {k} iterations is at rounding level; comparing the recursive residuals after {kc}",
            at_k[0].recursive
        );
        let short = |gpus: u32| -> BoxResult<[CgRun; 2]> {
            let rt = runtime(&a, gpus, gpus)?;
            let s = solvers(&rt, &a, kc)?;
            runs(
                &s,
                kc,
                [LABELS[0][gpus as usize - 1], LABELS[1][gpus as usize - 1]],
            )
        };
        // rt1 and rt2 stay alive (timing follows): the short runtimes add
        // their heaps on top, one at a time.
        let (c1, c2) = (short(1)?, short(2)?);
        (
            kc,
            vec![
                reading(LABELS[0][0], &c1[0]),
                reading(LABELS[0][1], &c2[0]),
                reading(LABELS[1][0], &c1[1]),
                reading(LABELS[1][1], &c2[1]),
            ],
        )
    };
    let worst_rec = check::recursive_agree(&name, &at_kc[0], &at_kc[1..])?;
    case.checked = format!(
        "x on 2 GPUs bitwise = 2 virtual PEs (both variants); recursive ‖r‖/‖b‖ after {kc} iterations: {} (worst relative difference {worst_rec:.1e}); \
         true ‖b − Ax‖/‖b‖ after {k}: {} (worst difference {worst_true:.1e})",
        check::list(&at_kc, false),
        check::list(&at_k, true),
    );
    eprintln!("{name}: correctness ok; timing …");

    // ---- timing: 1 and 2 GPUs interleaved, rep by rep ----
    let checked = [[&r1[0], &r2[0]], [&r1[1], &r2[1]]];
    for rep in 0..cfg.warmup + cfg.reps {
        for (i, variant) in VARIANTS.iter().enumerate() {
            for (g, s) in [&s1[i], &s2[i]].into_iter().enumerate() {
                let what = LABELS[i][g];
                let (t, run) = time_autarky(s, k, &format!("{name}: {what}"))?;
                let want = checked[i][g].rel_residual;
                if comparable && check::rel_diff(want, run.rel_residual) > check::REL_TOL {
                    return Err(format!(
                        "{name}: a timed run of {what} ended at recursive residual {:e}, the checked run at {want:e}",
                        run.rel_residual
                    )
                    .into());
                }
                if rep >= cfg.warmup {
                    case.push(variant, g as u32 + 1, t);
                }
            }
        }
    }
    Ok(case)
}

/// The two-GPU part; its results (or why it did not run) as JSON.
pub fn part(cfg: &Config, slug: &str) -> BoxResult<serde_json::Value> {
    if cfg.two_gpu.is_empty() {
        return Ok(json!({ "skipped": "no cases selected (--two-gpu=none)" }));
    }
    let count = driver::device_count()?;
    if count < 2 {
        let why = format!("needs 2 GPUs, {count} present");
        println!("SKIP cg two-GPU part: {why}");
        return Ok(json!({ "skipped": why }));
    }
    let mut cases = Vec::new();
    for &c in &cfg.two_gpu {
        cases.push(run_case(cfg, slug, c)?);
    }
    let refs: Vec<&ScalingCase> = cases.iter().collect();
    println!();
    print!("{}", scaling::table(&refs));
    println!(
        "two-GPU part: µs per CG iteration, median [min–max] over {} timed reps (device events, GPU 0's kernel); \
         1 GPU = 1 PE, 2 GPUs = 2 PEs (one per GPU); '2 vs 1' = 1-GPU median / 2-GPU median (> 1: two GPUs faster).",
        cfg.reps
    );
    println!("{}", scaling::target_line(&refs));
    for c in &cases {
        println!("checked {}: {}", c.name, c.checked);
    }
    Ok(json!({
        "gpus_present": count,
        "target": scaling::TARGET,
        "cases": cases.iter().map(ScalingCase::to_json).collect::<Vec<_>>(),
    }))
}
