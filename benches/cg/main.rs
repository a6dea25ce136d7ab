//! CG bench: autarky's CPU-free Conjugate Gradient (`CgSolver`, one
//! persistent megakernel launch for the whole solve) against the
//! launch-based CG a CUDA user writes with cuSPARSE and cuBLAS, in one
//! process, on the same matrix, for the same fixed number of iterations;
//! every variant timed with device events, interleaved rep by rep so clock
//! and thermal drift hit all alike; median and min–max over the timed reps
//! after two warm-ups.
//!
//! Cases (`<gpu>/<family>/<N>`, f64, `b = 1`, `x₀ = 0`, no
//! preconditioner): `poisson3d/N` (7-point, N³ rows; default N = 32, 64,
//! 128, 256) and `poisson2d/N` (5-point, N² rows; default N = 1024).
//! Variants:
//!
//! - `autarky`: standard CG as a task graph (two in-kernel allreduces per
//!   iteration); `autarky single-reduction`: the Chronopoulos–Gear
//!   recurrence (one fused allreduce), shown for reference. Both run with
//!   tolerance 0, so exactly K iterations (the stop test fires only on an
//!   exactly zero residual, and a run that stops early fails the bench).
//!   The time is the runtime's device-event time of the launch; the reset
//!   of the initial state and the read-back come outside it.
//! - `cusparse+cublas host-sync` and `cusparse+cublas dev-ptr`: the
//!   baseline of `baselines.rs` (cusparseSpMV + cuBLAS ddot/daxpy/dscal on
//!   one stream); host-sync computes α, β on the CPU after each blocking
//!   dot product (the realistic CPU-driven CG), dev-ptr keeps them on the
//!   device and never waits for the GPU inside the loop.
//!
//! K per case: a run of about 15 ms for autarky, a multiple of 50 in
//! 50..=500 (`config::default_iterations`); the unit is µs per iteration.
//!
//! Correctness, once per case, outside the timing (`check.rs`): the
//! recursive residuals of all four variants after the same number of
//! iterations agree to 1e-7 relative, and their true residuals
//! `‖b − A x‖/‖b‖` (recomputed on the host) agree; otherwise the bench
//! fails rather than time wrong work.
//!
//! Targets (issue 11, item 7): `poisson3d/64` autarky ≥ 2× faster than
//! host-sync; `poisson3d/256` no slower than host-sync; `poisson2d/1024`
//! autarky ≤ 35 µs per iteration. The table marks them `ok` / `MISS`.
//!
//! The two-GPU part (`two_gpu.rs`, `scaling.rs`; issue 11 item 7, issue
//! 13): autarky on 1 GPU (1 PE) against 2 GPUs (2 PEs, one per GPU) on
//! Poisson 3D 128³, 256³ and 2D 1024² (`--two-gpu=LIST`), standard and
//! single reduction, x on 2 GPUs checked bitwise against 2 virtual PEs of
//! one GPU and the residuals against 1 GPU before timing; target: on two
//! H200s, faster than one at 256³. With fewer than 2 GPUs it prints
//! `SKIP cg two-GPU part: needs 2 GPUs, N present`.
//!
//! Run: `cargo bench --bench cg -- --quick` first, then `cargo bench
//! --bench cg`. `--help` lists the knobs. Output: the table, and
//! `results.json` plus one SVG per family in `target/bench-report/cg/`
//! (`AUTARKY_BENCH_OUT` overrides). Without a GPU or NVRTC it prints
//! `SKIP cg bench: <reason>` and exits 0; without cuBLAS/cuSPARSE it prints
//! `SKIP cg baseline: <reason>` and measures autarky alone.

// The bench passes `autarky::Error` through unchanged; its size is the
// library's business, not this bench's.
#![allow(clippy::result_large_err)]

mod baselines;
mod cases;
mod check;
mod config;
#[path = "../common/knobs.rs"]
mod knobs;
mod libs;
#[path = "../common/probe.rs"]
mod probe;
#[path = "../common/report.rs"]
mod report;
mod scaling;
mod two_gpu;
mod vendor;

use std::error::Error as StdError;
use std::path::PathBuf;

use autarky::runtime::nvrtc;
use autarky::solvers::cg::{
    heap_bytes_needed, poisson2d, poisson3d, CgConfig, CgRun, CgSolver, CgVariant, Csr,
};
use autarky::{RunOptions, Runtime};
use serde_json::json;

use baselines::{LaunchCg, PointerMode};
use cases::{Case, Role, AUTARKY, AUTARKY_SR, DEV_PTR, HOST_SYNC};
use check::Reading;
use config::{default_iterations, Config};

/// The bench's result type.
pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// The device autarky's runtime uses (the builder's default) and the
/// baseline joins.
const ORDINAL: usize = 0;

fn out_dir() -> PathBuf {
    report::bench_dir("cg")
}

fn skip(reason: &str) -> BoxResult<()> {
    report::skip("cg", reason, &out_dir());
    Ok(())
}

/// Standard or single-reduction CG, no preconditioner, tolerance 0 (so
/// exactly `k` iterations), `b = 1`, `x₀ = 0`.
/// What a solver keeps in L2 during its runs, for the log.
fn kept(s: &CgSolver<'_>) -> String {
    s.l2_window()
        .map_or("no".into(), |w| format!("{} MB", w.bytes / 1_000_000))
}

fn cg_config(variant: CgVariant, k: u32) -> CgConfig {
    CgConfig {
        variant,
        ..CgConfig::new(0.0, k)
    }
}

/// One timed autarky solve: device-event seconds and the run.
fn time_autarky(solver: &CgSolver, k: u32, what: &str) -> BoxResult<(f64, CgRun)> {
    let run = solver
        .run_with(RunOptions {
            timed: true,
            ..RunOptions::iterations(k)
        })
        .map_err(|e| format!("{what}: {e}"))?;
    if run.iterations != k {
        return Err(format!(
            "{what}: ran {} of {k} iterations (tolerance 0 stops only on an exactly zero residual)",
            run.iterations
        )
        .into());
    }
    let ms = run
        .report
        .as_ref()
        .and_then(|r| r.event_ms)
        .ok_or_else(|| format!("{what}: a timed run returned no event time"))?;
    Ok((ms as f64 * 1e-3, run))
}

/// The baseline's setup for a run: the compiled scalar kernels and where
/// the libraries came from, or why there is none.
struct BaselineSetup {
    cubin: Vec<u8>,
    sources: Vec<String>,
}

/// The readings of the four variants after `k` iterations (autarky first).
fn readings(
    a: &Csr<f64>,
    solvers: [(&'static str, &CgSolver); 2],
    base: Option<&LaunchCg>,
    k: u32,
    name: &str,
) -> BoxResult<Vec<Reading>> {
    let mut out = Vec::new();
    for (what, s) in solvers {
        let (_, run) = time_autarky(s, k, &format!("{name}: {what}"))?;
        if run.x.iter().any(|v| !v.is_finite()) {
            return Err(format!("{name}: {what}'s solution holds a non-finite value").into());
        }
        out.push(Reading {
            variant: what,
            recursive: run.rel_residual,
            true_residual: run.true_rel_residual,
        });
    }
    if let Some(b) = base {
        for (what, mode) in [
            (HOST_SYNC, PointerMode::Host),
            (DEV_PTR, PointerMode::Device),
        ] {
            let o = b.run(mode, k).map_err(|e| format!("{name}: {what}: {e}"))?;
            let x = b.solution()?;
            out.push(Reading {
                variant: what,
                recursive: o.rel_residual,
                true_residual: check::true_rel_residual_ones(a, &x),
            });
        }
    }
    Ok(out)
}

/// A runtime with room for two solvers of `a`.
fn runtime_for(a: &Csr<f64>) -> BoxResult<Runtime> {
    let heap = heap_bytes_needed(a, 1)?;
    Ok(Runtime::builder()
        .gpu()
        .comm_blocks(2)
        .symmetric_heap_bytes(2 * heap + (16 << 20))
        .build()?)
}

/// Device bytes the baseline needs for `a` (matrix, five vectors, slack
/// for the SpMV buffer and the libraries' workspaces).
fn baseline_bytes(rows: u64, nnz: u64) -> u64 {
    12 * nnz + 8 * rows + 5 * 8 * rows + (256 << 20)
}

fn run_case(
    cfg: &Config,
    slug: &str,
    family: &'static str,
    n: u32,
    setup: Option<&BaselineSetup>,
    facts: &mut serde_json::Map<String, serde_json::Value>,
) -> BoxResult<Case> {
    let a = match family {
        "poisson3d" => poisson3d(n as usize)?,
        _ => poisson2d(n as usize)?,
    };
    let (rows, nnz) = (a.n_rows() as u64, a.nnz() as u64);
    let k = cfg
        .iterations
        .unwrap_or_else(|| default_iterations(rows, nnz));
    let mut variants = vec![(AUTARKY, Role::Autarky), (AUTARKY_SR, Role::Reference)];
    if setup.is_some() {
        variants.extend([(HOST_SYNC, Role::Baseline), (DEV_PTR, Role::Baseline)]);
    }
    let mut case = Case::new(slug, family, n, (rows, nnz), k, &variants);
    let name = case.name.clone();
    eprintln!("{name}: {rows} rows, {nnz} nonzeros, {k} iterations per run; building …");

    let rt = runtime_for(&a)?;
    let heap = heap_bytes_needed(&a, 1)? as u64;
    if let Ok((free, _)) = rt.device_memory() {
        let need = 2 * heap + setup.map_or(0, |_| baseline_bytes(rows, nnz));
        if need > free as u64 {
            return Err(format!(
                "{name}: needs about {need} bytes of device memory, {free} are free"
            )
            .into());
        }
    }
    let ctx = rt.context().ok_or("the GPU runtime has no context")?;
    let std_cg = CgSolver::new(&rt, &a, cg_config(CgVariant::Standard, k))?;
    let sr_cg = CgSolver::new(&rt, &a, cg_config(CgVariant::SingleReduction, k))?;
    eprintln!(
        "{name}: autarky tiles per PE {:?} (standard), {:?} (single reduction); matrix {}; standard's direction {}; vectors kept in L2: {} (standard), {} (single reduction)",
        std_cg.tiles_per_pe(),
        sr_cg.tiles_per_pe(),
        if std_cg.row_patterns() {
            "packed rows as patterns (a byte a row)"
        } else if std_cg.compact_matrix() {
            "packed (4 bytes a nonzero)"
        } else {
            "plain CSR (12 bytes a nonzero)"
        },
        match std_cg.direction_fused() {
            Some(true) => "fused",
            _ => "separate",
        },
        kept(&std_cg),
        kept(&sr_cg),
    );
    // Declared after `rt`, so dropped before it: the baseline's handles go
    // while autarky's context reference is still held.
    let base = match setup {
        Some(s) => {
            let b = LaunchCg::new(ctx, ORDINAL, &a, &s.cubin)
                .map_err(|e| format!("{name}: setting up the cuSPARSE/cuBLAS baseline: {e}"))?;
            if !facts.contains_key("cublas_version") {
                facts.insert("cublas_version".into(), b.versions.0.into());
                facts.insert("cusparse_version".into(), b.versions.1.into());
                facts.insert("baseline_libraries".into(), json!(s.sources));
                eprintln!(
                    "baseline: cuBLAS {}, cuSPARSE {} ({})",
                    b.versions.0,
                    b.versions.1,
                    s.sources.join("; ")
                );
            }
            eprintln!(
                "{name}: baseline matrix with {}-bit indices",
                if b.wide_indices() { 64 } else { 32 }
            );
            if let Err(why) = b.preprocessed() {
                eprintln!("{name}: cusparseSpMV_preprocess not used: {why}");
            }
            Some(b)
        }
        None => None,
    };

    // ---- correctness, once, outside the timing ----
    let solvers = [(AUTARKY, &std_cg), (AUTARKY_SR, &sr_cg)];
    let at_k = readings(&a, solvers, base.as_ref(), k, &name)?;
    let worst_true = check::true_agree(&name, &at_k[0], &at_k[1..])?;
    let comparable = check::comparable(at_k[0].recursive);
    let (kc, at_kc) = if comparable {
        (k, at_k.clone())
    } else {
        // Converged: recursive residuals have drifted apart by rounding
        // (check.rs); compare them after CHECK_ITERS iterations instead.
        let kc = check::CHECK_ITERS.min(k);
        eprintln!(
            "{name}: recursive residual {:.3e} after {k} iterations is at rounding level; comparing the recursive residuals after {kc}",
            at_k[0].recursive
        );
        let rt2 = runtime_for(&a)?;
        let s2 = CgSolver::new(&rt2, &a, cg_config(CgVariant::Standard, kc))?;
        let sr2 = CgSolver::new(&rt2, &a, cg_config(CgVariant::SingleReduction, kc))?;
        let r = readings(
            &a,
            [(AUTARKY, &s2), (AUTARKY_SR, &sr2)],
            base.as_ref(),
            kc,
            &name,
        )?;
        (kc, r)
    };
    let worst_rec = check::recursive_agree(&name, &at_kc[0], &at_kc[1..])?;
    case.checked = format!(
        "recursive ‖r‖/‖b‖ after {kc} iterations: {} (worst relative difference {worst_rec:.1e}); \
         true ‖b − Ax‖/‖b‖ after {k}: {} (worst difference {worst_true:.1e})",
        check::list(&at_kc, false),
        check::list(&at_k, true),
    );
    eprintln!("{name}: correctness ok; timing …");

    // ---- timing ----
    let first: Vec<f64> = at_k.iter().map(|r| r.recursive).collect();
    // Every timed run must end where the checked one did (only meaningful
    // above rounding level; see check.rs).
    let same = |i: usize, what: &str, rec: f64| -> BoxResult<()> {
        if comparable && check::rel_diff(first[i], rec) > check::REL_TOL {
            return Err(format!(
                "{name}: a timed run of {what} ended at recursive residual {rec:e}, the checked run at {:e}",
                first[i]
            )
            .into());
        }
        Ok(())
    };
    for rep in 0..cfg.warmup + cfg.reps {
        let keep = rep >= cfg.warmup;
        for (i, (what, s)) in solvers.iter().enumerate() {
            let (t, run) = time_autarky(s, k, &format!("{name}: {what}"))?;
            same(i, what, run.rel_residual)?;
            if keep {
                case.push(what, t);
            }
        }
        if let Some(b) = &base {
            for (i, (what, mode)) in [
                (HOST_SYNC, PointerMode::Host),
                (DEV_PTR, PointerMode::Device),
            ]
            .into_iter()
            .enumerate()
            {
                let o = b.run(mode, k).map_err(|e| format!("{name}: {what}: {e}"))?;
                same(2 + i, what, o.rel_residual)?;
                if keep {
                    case.push(what, o.seconds);
                }
            }
        }
    }
    Ok(case)
}

/// Finds cuBLAS/cuSPARSE and compiles the scalar kernels; `Err` says why
/// the baseline cannot run.
fn baseline_setup(cfg: &Config, arch: u32) -> Result<BaselineSetup, String> {
    if cfg.no_baseline {
        return Err("disabled (--no-baseline)".into());
    }
    let nvrtc_dir = nvrtc::nvrtc_info()
        .ok()
        .and_then(|i| i.path.parent().map(|p| p.to_path_buf()));
    let found = libs::ensure(nvrtc_dir.as_deref())?;
    let cubin = nvrtc::compile_cubin(&nvrtc::Program {
        name: "cg_baselines.cu",
        source: baselines::SOURCE,
        headers: &[],
        options: vec!["--std=c++17".into()],
        arch,
    })
    .map_err(|e| format!("compiling the baseline's scalar kernels: {e}"))?;
    Ok(BaselineSetup {
        cubin,
        sources: found.sources,
    })
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
    let slug = report::gpu_slug(&props.name);
    let single_gpu = !(cfg.sizes_3d.is_empty() && cfg.sizes_2d.is_empty());
    let setup = if single_gpu {
        baseline_setup(&cfg, props.arch())
    } else {
        // The two-GPU part alone compares autarky with itself.
        Err("no single-GPU case selected".to_string())
    };
    if let (true, Err(why)) = (single_gpu, &setup) {
        println!("SKIP cg baseline: {why}; measuring autarky alone");
    }
    println!(
        "cg bench on {} (sm_{}, {} SMs): poisson3d {:?}, poisson2d {:?}, two-GPU {:?}; f64, no preconditioner; {} warm-up + {} timed reps per case{}",
        props.name,
        props.arch(),
        props.sm_count,
        cfg.sizes_3d,
        cfg.sizes_2d,
        cfg.two_gpu
            .iter()
            .map(|c| format!("{}/{}", c.family, c.n))
            .collect::<Vec<_>>(),
        cfg.warmup,
        cfg.reps,
        if cfg.quick { " (QUICK)" } else { "" }
    );

    let mut facts = serde_json::Map::new();
    let mut cases = Vec::new();
    let selected = cfg
        .sizes_3d
        .iter()
        .map(|&n| ("poisson3d", n))
        .chain(cfg.sizes_2d.iter().map(|&n| ("poisson2d", n)));
    for (family, n) in selected {
        cases.push(run_case(
            &cfg,
            &slug,
            family,
            n,
            setup.as_ref().ok(),
            &mut facts,
        )?);
    }

    let refs: Vec<&Case> = cases.iter().collect();
    if !cases.is_empty() {
        println!();
        print!("{}", cases::table(&refs));
        println!(
            "µs per CG iteration, median [min–max] over {} timed reps (device events); X/autarky = X's median / autarky's (> 1: autarky faster); \
             GB/s counts the matrix once and ~12 vector passes per iteration.",
            cfg.reps
        );
        println!(
            "targets (issue 11, item 7), on autarky's standard CG and its single-reduction CG:"
        );
        for l in cases::goal_lines(&refs) {
            println!("{l}");
        }
        for c in &cases {
            println!("checked {}: {}", c.name, c.checked);
        }
    }
    let two = two_gpu::part(&cfg, &slug)?;

    for (k, v) in [
        ("device", json!(props.name)),
        ("arch", props.arch().into()),
        ("sm_count", props.sm_count.into()),
        ("quick", cfg.quick.into()),
        ("warmup", cfg.warmup.into()),
        ("reps", cfg.reps.into()),
        ("precision", "f64".into()),
        ("rhs", "b = 1, x0 = 0, no preconditioner, tolerance 0 (fixed iterations)".into()),
        (
            "baseline",
            match &setup {
                Ok(_) => json!("cusparseSpMV (CSR, generic API) + cuBLAS ddot/daxpy/dscal on one stream; host-sync: host pointer mode, alpha/beta on the CPU; dev-ptr: device pointer mode, alpha/beta by one-thread kernels"),
                Err(why) => json!({ "skipped": why }),
            },
        ),
        (
            "ratio",
            "baseline time / autarky time per iteration; > 1 means autarky is faster".into(),
        ),
        ("recursive_rel_tol", check::REL_TOL.into()),
        (
            "checked",
            cases
                .iter()
                .map(|c| (c.name.clone(), json!(c.checked)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        ),
        ("targets", json!(cases::goal_lines(&refs))),
        ("two_gpu", two),
    ] {
        facts.insert(k.to_string(), v);
    }
    let rep = report::Report {
        bench: "cg".into(),
        facts,
        cases: cases.iter().filter_map(Case::to_result).collect(),
    };
    let w = report::write(&rep, &out_dir())?;
    println!("wrote {}", w.json.display());
    for c in &w.charts {
        println!("wrote {}", c.display());
    }
    Ok(())
}
