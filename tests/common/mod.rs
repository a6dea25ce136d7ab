//! Shared helpers for GPU and NVRTC test files, and the harness they run
//! under.
//!
//! # Writing a GPU test file
//!
//! GPU tests must show in the summary as *ignored, with the reason* where
//! there is no GPU — not as `ok` — and must fail where a GPU is required
//! but missing. The built-in harness cannot decide "ignored" at run time,
//! so GPU test files use `libtest-mimic`:
//!
//! 1. In `Cargo.toml`: `[[test]] name = "gpu_foo"`, `path = "tests/gpu_foo.rs"`,
//!    `harness = false`.
//! 2. In the file: `mod common;` and a `main` that lists one trial per test:
//!
//! ```ignore
//! mod common;
//! use autarky::Runtime;
//! use common::*;
//!
//! fn main() -> std::process::ExitCode {
//!     run_trials(vec![
//!         // One GPU, the default GPU runtime (10 s timeout):
//!         gpu_trial("diamond_runs_once", diamond_runs_once),
//!         // One GPU, a runtime of your own:
//!         gpu_trial_with("few_blocks", Runtime::builder().gpu().compute_blocks(3), few_blocks),
//!         // N GPUs; the body boots what it needs:
//!         gpus_trial("halo_exchange_two_gpus", 2, halo_exchange),
//!     ])
//! }
//!
//! fn diamond_runs_once(rt: Runtime) { /* assert!, unwrap: a panic fails the test */ }
//! ```
//!
//! A trial that needs `n` GPUs runs when `n` GPUs (and NVRTC) are present.
//! Otherwise it is reported as `ignored (no GPU: …)` or `ignored (needs 2
//! GPUs, 1 present)` — unless the environment requires them:
//! `AUTARKY_REQUIRE_GPU=1` requires one GPU, `AUTARKY_REQUIRE_GPUS=N`
//! requires `N`; a trial needing at most the required count then fails
//! with the reason instead. Trials that are opt-in (long soaks) are
//! wrapped in [`opt_in`]: reported as ignored with how to run them, and run
//! with `-- --ignored NAME`.
//!
//! # Tests that need NVRTC, or nothing
//!
//! The same harness serves files whose tests need NVRTC but no GPU (the
//! device-compile tier) and the plain tests beside them ([`trials`]):
//! `nvrtc_trial("name", body)` runs where NVRTC loads and is otherwise
//! `ignored (no NVRTC: …)` — or failed when `AUTARKY_REQUIRE_NVRTC=1`, as
//! on CI; `trial("name", body)` always runs; `trial_unless("name", why_not,
//! body)` is ignored with `why_not()`'s reason when it returns one.
#![allow(dead_code)]

mod trials;
#[allow(unused_imports)]
pub use trials::*;
pub mod shapes;
#[allow(unused_imports)]
pub use shapes::Rng;

use std::sync::OnceLock;
use std::time::Duration;

use autarky::{Buffer, Graph, Runtime, TaskKind};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// GPUs the environment requires: `AUTARKY_REQUIRE_GPUS=N`, or 1 for
/// `AUTARKY_REQUIRE_GPU=1`, else 0.
pub fn required_gpus() -> u32 {
    let n = std::env::var("AUTARKY_REQUIRE_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let one = u32::from(std::env::var("AUTARKY_REQUIRE_GPU").as_deref() == Ok("1"));
    n.max(one)
}

/// GPUs usable for tests (driver, devices and NVRTC), probed once per test
/// binary, or why there are none.
pub fn usable_gpus() -> &'static Result<u32, String> {
    static PROBE: OnceLock<Result<u32, String>> = OnceLock::new();
    PROBE.get_or_init(|| {
        let short = |e: autarky::Error| {
            let s = e.to_string();
            s.split(';').next().unwrap_or(&s).to_string()
        };
        let n = autarky::runtime::gpu_count().map_err(short)?;
        if n == 0 {
            return Err("no GPU: the driver reports 0 devices".into());
        }
        autarky::runtime::nvrtc::nvrtc_version()
            .map_err(|e| format!("{n} GPU(s) but no NVRTC: {}", short(e)))?;
        Ok(n)
    })
}

/// `Ok` when `n` GPUs are usable, else the reason.
fn have_gpus(n: u32) -> Result<(), String> {
    match usable_gpus() {
        Ok(have) if *have >= n => Ok(()),
        Ok(have) => Err(format!("needs {n} GPUs, {have} present")),
        Err(reason) => Err(reason.clone()),
    }
}

/// A trial that needs `n` GPUs: runs `body` when they are present, is
/// ignored with the reason when not, fails when they are required.
pub fn gpus_trial(name: &str, n: u32, body: impl FnOnce() + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || match have_gpus(n) {
        Ok(()) => {
            body();
            Ok(Completion::Completed)
        }
        Err(reason) if required_gpus() < n => Ok(Completion::ignored_with(reason)),
        Err(reason) => Err(Failed::from(format!(
            "{} GPU(s) required by the environment, but {reason}",
            required_gpus()
        ))),
    })
}

/// A one-GPU trial with a runtime from `builder` (which should ask for the
/// GPU: `Runtime::builder().gpu()…`).
pub fn gpu_trial_with(
    name: &str,
    builder: autarky::Builder,
    body: impl FnOnce(Runtime) + Send + 'static,
) -> Trial {
    gpus_trial(name, 1, move || {
        let rt = builder
            .build()
            .unwrap_or_else(|e| panic!("booting the GPU runtime: {e}"));
        body(rt)
    })
}

/// A one-GPU trial with the default GPU runtime (10 s wait timeout).
pub fn gpu_trial(name: &str, body: impl FnOnce(Runtime) + Send + 'static) -> Trial {
    gpu_trial_with(
        name,
        Runtime::builder().gpu().timeout(Duration::from_secs(10)),
        body,
    )
}

/// Makes `trial` opt-in, like `#[ignore = "how"]`: it runs only with
/// `--ignored` or `--include-ignored`; otherwise it is reported as
/// `ignored (how)`, so the summary says how to run it.
pub fn opt_in(trial: Trial, how: &str) -> Trial {
    let args = Arguments::from_args();
    if args.ignored || args.include_ignored {
        return trial.with_ignored_flag(true);
    }
    let how = how.to_string();
    Trial::ignorable_test(trial.name(), move || Ok(Completion::ignored_with(how)))
}

/// Runs the trials with the command line's arguments (filters,
/// `--ignored`, `--test-threads`…) and returns the exit code.
pub fn run_trials(trials: Vec<Trial>) -> std::process::ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    libtest_mimic::run(&Arguments::from_args(), trials).exit_code()
}

/// Calls `f` on every item of `items`, on as many threads at once as the
/// machine has cores (at most one an item); returns when all are done. A
/// panic in `f` fails the caller once every thread has ended.
pub fn in_parallel<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(items.len());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                f(item);
            });
        }
    });
}

/// Compiles a trial's CG kernels before its runs, in parallel: for each
/// job `(matrix, PEs, configuration)` a solver on a runtime of its own
/// (`rt(matrix, PEs)`) is built and prepared (`CgSolver::prepare`), and
/// dropped — the kernels stay in the cubin cache on disk, where the
/// trial's own solvers, built after, find them. A cold CG kernel takes
/// NVRTC seconds and a trial compiles dozens, one at a time when its runs
/// ask (the runs themselves stay one at a time: they share the GPU); the
/// GPU machine has 16 cores. Does nothing with the cache off
/// (`AUTARKY_CACHE=0`): nothing would be kept. A job that cannot build or
/// compile panics with its configuration (the trial would fail there
/// anyway).
pub fn compile_cg_ahead(
    rt: impl Fn(&autarky::solvers::cg::Csr<f64>, u32) -> Runtime + Sync,
    jobs: &[(
        &autarky::solvers::cg::Csr<f64>,
        u32,
        autarky::solvers::cg::CgConfig,
    )],
) {
    if std::env::var("AUTARKY_CACHE").as_deref() == Ok("0") {
        return;
    }
    in_parallel(jobs, |(a, pes, cfg)| {
        let rt = rt(a, *pes);
        autarky::solvers::cg::CgSolver::new(&rt, a, cfg.clone())
            .and_then(|s| s.prepare())
            .unwrap_or_else(|e| panic!("compiling ahead, {pes} PE(s), {cfg:?}: {e}"));
    });
}

/// Compiles a trial's Jacobi kernels before its runs, in parallel: for
/// each job `(runtime, configuration)` a solver is built and prepared
/// (`JacobiSolver::prepare`), and dropped — the kernel stays loaded in
/// that runtime (and in the cubin cache on disk), where the trial's own
/// solvers on it find it. A trial's runs compile their kernels one at a
/// time when they ask (dozens of seconds a trial on a fresh machine); the
/// GPU machine has 16 cores. A configuration the solver refuses is
/// skipped (the trial meets the refusal itself); one that cannot compile
/// panics with its configuration.
pub fn compile_jacobi_ahead(jobs: &[(&Runtime, autarky::solvers::jacobi::JacobiConfig)]) {
    in_parallel(jobs, |(rt, cfg)| {
        if let Ok(s) = autarky::solvers::jacobi::JacobiSolver::new(rt, cfg.clone()) {
            s.prepare().unwrap_or_else(|e| {
                panic!(
                    "compiling ahead, {} PE(s), {:?} {:?} {:?}, {} sweep(s) a sync: {e}",
                    rt.num_pes(),
                    cfg.problem.dims,
                    cfg.problem.stencil,
                    cfg.precision,
                    cfg.steps_per_sync
                )
            });
        }
    });
}

/// The CG recurrences the convergence trials run, each with the CPU
/// reference's variant it must match: `(variant, preconditioner,
/// reference)` — Standard and the single reduction, each without and with
/// the Jacobi preconditioner.
pub fn cg_variants() -> [(
    autarky::solvers::cg::CgVariant,
    autarky::solvers::cg::Precond,
    autarky::solvers::cg::CgVariant,
); 4] {
    use autarky::solvers::cg::{CgVariant, Precond};
    [
        (CgVariant::Standard, Precond::None, CgVariant::Standard),
        (
            CgVariant::Standard,
            Precond::Jacobi,
            CgVariant::JacobiPreconditioned,
        ),
        (
            CgVariant::SingleReduction,
            Precond::None,
            CgVariant::SingleReduction,
        ),
        (
            CgVariant::SingleReduction,
            Precond::Jacobi,
            CgVariant::JacobiPreconditioned,
        ),
    ]
}

/// Asserts two CG runs are bitwise the same: iterations, the recursive
/// residual's bits and every entry of `x`; `what` names the comparison.
pub fn assert_same_cg_run(
    got: &autarky::solvers::cg::CgRun,
    want: &autarky::solvers::cg::CgRun,
    what: &str,
) {
    assert_eq!(got.iterations, want.iterations, "{what}");
    assert_eq!(
        got.rel_residual.to_bits(),
        want.rel_residual.to_bits(),
        "{what}"
    );
    let diff = got
        .x
        .iter()
        .zip(&want.x)
        .filter(|(u, v)| u.to_bits() != v.to_bits())
        .count();
    assert_eq!(diff, 0, "{what}: x differs in {diff} entries");
}

/// Two CG solvers of `a` on `rt` whose configurations differ in one
/// setting that must not change the numbers (where the direction is
/// formed, how one PE's allreduces are split, the matrix's encoding, the
/// L2 window): builds both, gives them to `check` (what the setting must
/// change in the solvers: task counts, getters), runs both and asserts the
/// runs are bitwise the same ([`assert_same_cg_run`]). Returns the runs.
pub fn same_cg_runs(
    rt: &Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    (first, second): (
        autarky::solvers::cg::CgConfig,
        autarky::solvers::cg::CgConfig,
    ),
    check: impl FnOnce(&autarky::solvers::cg::CgSolver<'_>, &autarky::solvers::cg::CgSolver<'_>),
    what: &str,
) -> (autarky::solvers::cg::CgRun, autarky::solvers::cg::CgRun) {
    use autarky::solvers::cg::CgSolver;
    let s1 = CgSolver::new(rt, a, first).unwrap_or_else(|e| panic!("{what}: first solver: {e}"));
    let s2 = CgSolver::new(rt, a, second).unwrap_or_else(|e| panic!("{what}: second solver: {e}"));
    check(&s1, &s2);
    let r1 = s1
        .run()
        .unwrap_or_else(|e| panic!("{what}: first run: {e}"));
    let r2 = s2
        .run()
        .unwrap_or_else(|e| panic!("{what}: second run: {e}"));
    assert_same_cg_run(&r1, &r2, what);
    (r1, r2)
}

/// The matrix's compact forms against plain CSR ([`same_cg_runs`] twice):
/// packed with row offsets (`with(true, false)`), then packed rows as
/// patterns (`with(true, true)`), each against `with(false, _)`; the
/// solvers report the form they got and have the same tasks, and the runs
/// converge after more than 10 iterations. `with(compact_matrix,
/// row_patterns)` gives the configuration.
pub fn compact_forms_match_plain(
    rt: &Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool, bool) -> autarky::solvers::cg::CgConfig,
    what: &str,
) {
    for patterns in [false, true] {
        let what = format!("{what}, row patterns {patterns}");
        let (p, _) = same_cg_runs(
            rt,
            a,
            (with(true, patterns), with(false, patterns)),
            |packed, plain| {
                assert!(packed.compact_matrix(), "{what}");
                assert_eq!(packed.row_patterns(), patterns, "{what}");
                assert!(!plain.compact_matrix() && !plain.row_patterns(), "{what}");
                assert_eq!(
                    packed.graph().num_tasks(),
                    plain.graph().num_tasks(),
                    "{what}"
                );
            },
            &what,
        );
        assert!(p.converged && p.iterations > 10, "{what}: {p:?}");
    }
}

/// Two forms of one recurrence that must give bitwise the same runs
/// ([`same_cg_runs`]): `with(true)` against `with(false)`, converged (more
/// than 10 iterations), then stopped by `max_iters` after an odd and an
/// even count (state kept by parity: each half ends a run; those runs set
/// the tolerance to 0 and `max_iters` to the count). `check(first,
/// second)` inspects the two solvers. `rt()` gives a runtime for each pair
/// (symmetric heaps are never freed).
pub fn forms_match_at_every_stop(
    rt: impl Fn() -> Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool) -> autarky::solvers::cg::CgConfig,
    check: impl Fn(&autarky::solvers::cg::CgSolver<'_>, &autarky::solvers::cg::CgSolver<'_>, &str),
    what: &str,
) {
    use autarky::solvers::cg::CgConfig;
    for stop in [None, Some(7), Some(8)] {
        let what = format!("{what}, stop {stop:?}");
        let at = |form| {
            let c = with(form);
            match stop {
                None => c,
                Some(k) => CgConfig {
                    tol: 0.0,
                    max_iters: k,
                    ..c
                },
            }
        };
        let (l, _) = same_cg_runs(
            &rt(),
            a,
            (at(true), at(false)),
            |s1, s2| check(s1, s2, &what),
            &what,
        );
        match stop {
            None => assert!(l.converged && l.iterations > 10, "{what}: {l:?}"),
            Some(k) => assert!(!l.converged && l.iterations == k, "{what}: {l:?}"),
        }
    }
}

/// Lean updates (the SpMV applies x's steps, the host the last one)
/// against full ones, with the direction fused
/// ([`forms_match_at_every_stop`]: the host's step reads `p_{k−1}` from
/// either half of `v`). `with(lean_update)` gives the configuration.
pub fn lean_and_full_updates_match(
    rt: impl Fn() -> Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool) -> autarky::solvers::cg::CgConfig,
    what: &str,
) {
    forms_match_at_every_stop(
        rt,
        a,
        with,
        |lean, full, what| {
            assert_eq!(lean.direction_fused(), Some(true), "{what}");
            assert!(lean.lean_update() && !full.lean_update(), "{what}");
            // x's step apart (the default): one more task a tile.
            assert!(!full.x_step_apart(), "{what}");
            if !lean.x_step_apart() {
                assert_eq!(lean.graph().num_tasks(), full.graph().num_tasks(), "{what}");
            } else {
                assert!(
                    lean.graph().num_tasks() > full.graph().num_tasks(),
                    "{what}"
                );
            }
        },
        what,
    );
}

/// With lean updates, x's step as a task of its own after each SpMV tile
/// (`cg_xstep`, the default) against the SpMV applying it in its row loop
/// ([`forms_match_at_every_stop`]). `with(x_step_apart)` gives the
/// configuration.
pub fn x_step_apart_and_in_spmv_match(
    rt: impl Fn() -> Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool) -> autarky::solvers::cg::CgConfig,
    what: &str,
) {
    forms_match_at_every_stop(
        rt,
        a,
        with,
        |apart, inline, what| {
            // Lean Standard (the step in the SpMV), or the separate single
            // reduction (in the axpy tiles).
            let separate_sr = |s: &autarky::solvers::cg::CgSolver<'_>| s.single_buffer().is_some();
            assert!(
                (apart.lean_update() && inline.lean_update())
                    || (separate_sr(apart) && separate_sr(inline)),
                "{what}"
            );
            assert!(apart.x_step_apart() && !inline.x_step_apart(), "{what}");
            assert!(
                apart.graph().num_tasks() > inline.graph().num_tasks(),
                "{what}"
            );
        },
        what,
    );
}

/// The single reduction's vector updates merged into the SpMV tiles
/// against vector tiles that run first ([`forms_match_at_every_stop`]:
/// `r`, `w` and `s` are kept by parity when merged). The merged graph has
/// no axpy tiles. `with(merge_updates)` gives the configuration.
pub fn merged_and_separate_updates_match(
    rt: impl Fn() -> Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool) -> autarky::solvers::cg::CgConfig,
    what: &str,
) {
    forms_match_at_every_stop(
        rt,
        a,
        with,
        |merged, separate, what| {
            assert_eq!(merged.updates_merged(), Some(true), "{what}");
            assert_eq!(separate.updates_merged(), Some(false), "{what}");
            let tiles: usize = merged.tiles_per_pe().iter().sum();
            // (And no x step tasks: the separate form's may have them.)
            let x_steps = if separate.x_step_apart() { tiles } else { 0 };
            assert_eq!(
                merged.graph().num_tasks() + tiles + x_steps,
                separate.graph().num_tasks(),
                "{what}: the merged graph has no axpy tiles"
            );
        },
        what,
    );
}

/// The separate single reduction with `z` in one copy of `v` (and `r` that
/// copy without a preconditioner) against the two halves by parity
/// ([`forms_match_at_every_stop`]). `with(single_buffer)` gives the
/// configuration (separate updates; `x`'s step may differ too, see
/// [`x_step_apart_and_in_spmv_match`]).
pub fn single_and_double_buffer_match(
    rt: impl Fn() -> Runtime,
    a: &autarky::solvers::cg::Csr<f64>,
    with: impl Fn(bool) -> autarky::solvers::cg::CgConfig,
    what: &str,
) {
    forms_match_at_every_stop(
        rt,
        a,
        with,
        |one, two, what| {
            assert_eq!(one.single_buffer(), Some(true), "{what}");
            assert_eq!(two.single_buffer(), Some(false), "{what}");
        },
        what,
    );
}

/// The issue's iteration check: a device run's `got` iterations within 2 %
/// (at least 2) of the CPU reference's `want`.
pub fn iterations_within(got: u32, want: usize) -> bool {
    (got as usize).abs_diff(want) <= (want / 50).max(2)
}

/// Largest `|a[i] − b[i]|`.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `n` u64s, poisoned with all-ones, so a value never written shows.
pub fn poisoned(rt: &Runtime, n: usize) -> Buffer<u64> {
    let b = rt.alloc::<u64>(n).unwrap();
    b.copy_from(&vec![u64::MAX; n]).unwrap();
    b
}

/// `n` zeroed u64s.
pub fn zeroed(rt: &Runtime, n: usize) -> Buffer<u64> {
    rt.alloc::<u64>(n).unwrap()
}

/// Arguments of the `logged` kind.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LogArgs {
    pub log: u64,     // u64[2 * tasks * iterations]: (start, end) sequence numbers
    pub count: u64,   // u32[tasks * iterations]: times each instance ran
    pub counter: u64, // u64: global sequence counter
    pub iterations: u32,
    pub _pad: u32,
}

/// Every instance takes a start and an end sequence number from one global
/// counter and counts its executions.
pub const LOGGED_SRC: &str = r#"
struct LogArgs { unsigned long long* log; unsigned* count; unsigned long long* counter; unsigned iterations; unsigned pad; };
__device__ void logged(autarky::TaskCtx& ctx) {
    if (threadIdx.x != 0) return;
    const LogArgs& a = ctx.args<LogArgs>();
    const unsigned long long slot = (unsigned long long)ctx.task * a.iterations + ctx.iteration;
    const unsigned long long start = atomicAdd(a.counter, 1ull);
    atomicAdd(&a.count[slot], 1u);
    __threadfence();
    const unsigned long long end = atomicAdd(a.counter, 1ull);
    a.log[2 * slot] = start;
    a.log[2 * slot + 1] = end;
}
"#;

pub fn logged_kind() -> TaskKind {
    TaskKind::new("logged", LOGGED_SRC).args::<LogArgs>()
}

/// A graph instrumented with the `logged` kind, with its device buffers.
pub struct Logged {
    pub log: Buffer<u64>,
    pub count: Buffer<u32>,
    pub counter: Buffer<u64>,
    pub tasks: usize,
    pub iterations: u32,
}

impl Logged {
    pub fn new(rt: &Runtime, tasks: usize, iterations: u32) -> Logged {
        let n = tasks * iterations as usize;
        let log = poisoned(rt, 2 * n);
        let count = rt.alloc::<u32>(n).unwrap();
        let counter = zeroed(rt, 1);
        Logged {
            log,
            count,
            counter,
            tasks,
            iterations,
        }
    }

    pub fn args(&self) -> LogArgs {
        LogArgs {
            log: self.log.addr(),
            count: self.count.addr(),
            counter: self.counter.addr(),
            iterations: self.iterations,
            _pad: 0,
        }
    }

    /// Checks that every instance ran exactly once and after every
    /// instance it depends on (including its own previous instance).
    pub fn check(&self, g: &Graph) {
        let n = self.tasks * self.iterations as usize;
        let log = self.log.to_vec().unwrap();
        let count = self.count.to_vec().unwrap();
        assert_eq!((log.len(), count.len()), (2 * n, n));
        let it = self.iterations as usize;
        for (slot, &c) in count.iter().enumerate() {
            assert_eq!(
                c,
                1,
                "instance (task {}, iteration {}) ran {c} times",
                slot / it,
                slot % it
            );
        }
        let start = |t: usize, i: usize| log[2 * (t * it + i)];
        let end = |t: usize, i: usize| log[2 * (t * it + i) + 1];
        for t in 0..self.tasks {
            for i in 1..it {
                assert!(
                    start(t, i) > end(t, i - 1),
                    "task {t}: instance {i} started before {} ended",
                    i - 1
                );
            }
        }
        for e in g.edges() {
            let (p, s, d) = (e.from.index(), e.to.index(), e.distance as usize);
            for i in d..it {
                assert!(
                    start(s, i) > end(p, i - d),
                    "task {s} iteration {i} started (seq {}) before task {p} iteration {} ended (seq {})",
                    start(s, i),
                    i - d,
                    end(p, i - d)
                );
            }
        }
    }
}
