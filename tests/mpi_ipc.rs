//! Multi-process runs ([`Transport::MpiIpc`]): run under MPI, e.g.
//!
//! ```text
//! cargo test --features mpi --test mpi_ipc --no-run      # prints the binary
//! mpirun --allow-run-as-root --oversubscribe -n 2 target/debug/deps/mpi_ipc-<hash>
//! ```
//!
//! Two ranks may share one GPU (CUDA IPC works between processes on one
//! device) or take one GPU each. Every rank runs every trial, in the same
//! order, one at a time (the runtime's steps are collective). Without
//! `mpirun` (no `OMPI_COMM_WORLD_SIZE`/`PMI_SIZE` in the environment) or
//! without the `mpi` feature, every trial is reported as ignored, with the
//! reason. The configuration trial needs no GPU: it runs under `mpirun` on
//! any machine. `a_rank_that_never_arrives…` and `a_rank_killed_mid_run…`
//! are opt-in (`-- --ignored <name>`, one at a time): each leaves a
//! collective pending on purpose, so the job ends with MPI_Abort at exit
//! after the trial passed. The second also needs `mpirun --mca
//! orte_abort_on_non_zero_status 0` (see its doc).

mod common;

use autarky::{Builder, Runtime, Transport};
use libtest_mimic::{Arguments, Trial};

/// Ranks of the MPI job this process belongs to, from the launcher's
/// environment (Open MPI, or PMI-based launchers).
fn mpi_ranks() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

fn mpi_rank() -> u32 {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(0)
}

/// Why MPI trials cannot run here, if they cannot.
fn mpi_skip() -> Option<String> {
    if !cfg!(feature = "mpi") {
        return Some("built without the `mpi` feature".into());
    }
    match mpi_ranks() {
        None => Some("not started by mpirun (run the binary under `mpirun -n 2`)".into()),
        Some(n) if n < 2 => Some(format!("needs 2 or more MPI ranks, the job has {n}")),
        Some(_) => None,
    }
}

fn mpi_trial(name: &str, needs_gpu: bool, body: fn()) -> Trial {
    let skip = mpi_skip().or_else(|| {
        if !needs_gpu {
            return None;
        }
        common::usable_gpus().as_ref().err().cloned()
    });
    match skip {
        // Listed as ignored with the reason; run anyway (`--ignored`, as
        // the opt-in trials are), it fails with the reason rather than
        // passing without having run.
        Some(why) => {
            let reason = why.clone();
            Trial::test(name, move || {
                Err(format!("cannot run here: {reason}").into())
            })
            .with_ignored_flag(true)
            .with_kind(why)
        }
        None => Trial::test(name, move || {
            body();
            Ok(())
        }),
    }
}

fn mpi_builder() -> Builder {
    Runtime::builder()
        .transport(Transport::MpiIpc)
        .symmetric_heap_bytes(64 << 20)
        .compute_blocks(4)
        // Bounds every collective (a rank whose trial panicked leaves the
        // other in one); compiles run on both ranks at once.
        .rank_timeout(std::time::Duration::from_secs(60))
}

/// Every rank builds with a different `pes_per_rank`: the configuration
/// exchange (before any CUDA call) fails on every rank, naming the knob.
fn ranks_that_disagree_on_the_configuration_all_fail_naming_the_knob() {
    let r = mpi_rank();
    match mpi_builder().pes_per_rank(1 + r % 2).build() {
        Err(autarky::Error::RanksDisagree { what, detail }) => {
            assert!(what.contains("configuration"), "{what}");
            assert!(detail.contains("pes_per_rank"), "{detail}");
        }
        other => panic!("rank {r}: expected RanksDisagree, got {other:?}"),
    }
}

/// Rank 0 waits for the others in `build`; the others never come: rank 0
/// fails with RankTimeout within the bound.
fn a_rank_that_never_arrives_ends_the_others_with_rank_timeout() {
    let r = mpi_rank();
    if r == 0 {
        let t = std::time::Instant::now();
        let e = mpi_builder()
            .rank_timeout(std::time::Duration::from_secs(2))
            .build()
            .unwrap_err();
        assert!(matches!(e, autarky::Error::RankTimeout { .. }), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
    } else {
        std::thread::sleep(std::time::Duration::from_secs(4));
    }
}

#[cfg(feature = "mpi")]
mod gpu {
    use super::*;
    use autarky::solvers::jacobi::{JacobiConfig, JacobiRun, JacobiSolver};
    use autarky::solvers::jacobi_ref::{JacobiProblem, Stencil};
    #[cfg(feature = "fault-injection")]
    use autarky::RunOptions;
    use autarky::{Error, Graph, TaskKind};

    fn problem(n: usize) -> JacobiProblem {
        JacobiProblem::new([1, n, n], Stencil::FivePoint)
            .with_init(|z, y, x| ((x * 7 + y * 13 + z * 5) % 17) as f64 / 17.0)
            .with_dirichlet(|_, y, x| 1.0 + 0.01 * x as f64 - 0.02 * y as f64)
    }

    fn cfg(n: usize, iters: u32) -> JacobiConfig {
        let mut c = JacobiConfig::new(problem(n), iters);
        c.check_every = 10;
        c.pe_grid = Some([1, 2, 1]);
        c
    }

    /// Runs `c` twice on `rt` (the ranks) and once on 2 virtual PEs of this
    /// rank's GPU (the reference): every round's grid bitwise and norms equal
    /// the reference's; `also` checks each round further.
    fn twice_against_two_virtual_pes(
        rt: &Runtime,
        c: JacobiConfig,
        what: &str,
        also: impl Fn(&JacobiRun),
    ) {
        let reference = {
            let one = Runtime::builder()
                .gpu()
                .pes(2)
                .compute_blocks(4)
                .symmetric_heap_bytes(64 << 20)
                .build()
                .unwrap();
            JacobiSolver::new(&one, c.clone()).unwrap().run().unwrap()
        };
        let solver = JacobiSolver::new(rt, c).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for round in 0..2 {
            let got = solver.run().unwrap();
            assert_eq!(
                bits(&got.field),
                bits(&reference.field),
                "rank {} round {round}: the {what} differs from 2 virtual PEs",
                rt.rank()
            );
            assert_eq!(got.norms, reference.norms);
            also(&got);
        }
    }

    /// 2 ranks × 1 PE give bitwise the grid and norms of 2 virtual PEs in
    /// one process (each rank computes the reference on its own GPU).
    pub fn jacobi2d_two_ranks_match_two_virtual_pes_bitwise() {
        let (n, iters) = (96, 60);
        let rt = mpi_builder().build().unwrap();
        assert_eq!(rt.num_pes(), 2);
        twice_against_two_virtual_pes(&rt, cfg(n, iters), "grid", |got| {
            assert_eq!(got.iterations, iters);
            assert!(got.field.iter().any(|&v| v != 0.0));
        });
    }

    /// Jacobi 3D (7-point, the PEs split along z): 2 ranks × 1 PE give
    /// bitwise the grid and norms of 2 virtual PEs in one process.
    pub fn jacobi3d_two_ranks_match_two_virtual_pes_bitwise() {
        let prob = JacobiProblem::new([24, 20, 36], Stencil::SevenPoint)
            .with_init(|z, y, x| ((x * 5 + y * 3 + z * 2) % 13) as f64 / 13.0)
            .with_dirichlet(|z, y, x| 1.0 + 0.02 * x as f64 - 0.01 * (y + z) as f64);
        let mut c = JacobiConfig::new(prob, 42);
        c.check_every = 7;
        c.pe_grid = Some([2, 1, 1]);
        let rt = mpi_builder().build().unwrap();
        twice_against_two_virtual_pes(&rt, c, "3D grid", |got| assert_eq!(got.norms.len(), 6));
    }

    /// CG (both recurrences): 2 ranks × 1 PE give bitwise the x, residual
    /// and iteration count of 2 virtual PEs in one process, twice in a row
    /// (each rank writes only its own PE's vectors; the p gather crosses
    /// ranks every iteration): a converging solve and a fixed-count one at
    /// 48³, whose 2304-entry ghost planes are gathered in 2 chunks by 2 of
    /// the 32 comm blocks (the default across ranks).
    pub fn cg_two_ranks_match_two_virtual_pes_bitwise() {
        use autarky::solvers::cg::{heap_bytes_needed, poisson3d, CgConfig, CgSolver, CgVariant};
        for (n, tol, max_iters) in [(16, 1e-8, 10_000), (48, 0.0, 20)] {
            let a = poisson3d(n).unwrap();
            let heap = 2 * heap_bytes_needed(&a, 2).unwrap();
            let one = Runtime::builder()
                .gpu()
                .pes(2)
                .compute_blocks(4)
                .symmetric_heap_bytes(heap)
                .build()
                .unwrap();
            let rt = mpi_builder().symmetric_heap_bytes(heap).build().unwrap();
            for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
                let cfg = || CgConfig {
                    variant,
                    ..CgConfig::new(tol, max_iters)
                };
                let want = CgSolver::new(&one, &a, cfg()).unwrap().run().unwrap();
                if tol > 0.0 {
                    assert!(want.converged, "{n}³ {variant:?}: {}", want.iterations);
                }
                let solver = CgSolver::new(&rt, &a, cfg()).unwrap();
                for round in 0..2 {
                    let got = solver.run().unwrap();
                    let what = format!("rank {} {n}³ {variant:?} round {round}", rt.rank());
                    common::assert_same_cg_run(&got, &want, &what);
                }
            }
        }
    }

    /// PE 0 (rank 0) has 5 tasks, PE 1 (rank 1) 1, so the ranks' ends
    /// (status, blocks, one state word per task) differ in length: the end
    /// exchange still has one length on every rank, and every rank reports
    /// every PE's instances (a size disagreement on `run status` before).
    pub fn ranks_whose_pes_have_different_task_counts_report_every_instance() {
        let rt = mpi_builder().build().unwrap();
        let mut g = Graph::new();
        let noop = g
            .add_kind(TaskKind::new(
                "noop",
                "__device__ void noop(autarky::TaskCtx&) {}",
            ))
            .unwrap();
        let on0: Vec<_> = (0..5).map(|_| g.add_task_bytes(noop, &[])).collect();
        for w in on0.windows(2) {
            g.add_edge(w[0], w[1]);
        }
        let on1 = g.add_task_bytes(noop, &[]);
        g.set_pe(on1, 1);
        g.add_edge(on0[4], on1);
        let iters = 7;
        for round in 0..2 {
            let report = rt.run(&g, iters).unwrap();
            assert_eq!(
                report.instances,
                6 * iters as u64,
                "rank {} round {round}",
                rt.rank()
            );
            assert_eq!(report.iterations, iters);
        }
    }

    /// A NaN in rank 1's part of the grid: the run fails on every rank with
    /// the same NonFinite error naming the PE, task and iteration.
    pub fn a_nan_on_one_rank_fails_every_rank_with_the_same_named_error() {
        let rt = mpi_builder().build().unwrap();
        let prob = JacobiProblem::new([1, 32, 32], Stencil::FivePoint).with_init(|_, y, x| {
            if (y, x) == (20, 5) {
                f64::NAN
            } else {
                0.0
            }
        });
        let mut c = JacobiConfig::new(prob, 50);
        c.check_every = 5;
        c.pe_grid = Some([1, 2, 1]);
        match JacobiSolver::new(&rt, c).unwrap().run() {
            Err(Error::NonFinite {
                pe,
                task,
                iteration,
                ..
            }) => {
                assert_eq!(iteration, 4, "the first check");
                assert!(task.contains("check (global norm)"), "{task}");
                assert!(pe < 2);
            }
            other => panic!("rank {}: expected NonFinite, got {other:?}", rt.rank()),
        }
    }

    /// Rank 1 is killed (SIGKILL, from a `kill` process) once its megakernel
    /// has completed instances of a long Jacobi run. Rank 0's run must end
    /// with an error within its bounds — the device timeout (2 s without
    /// progress: rank 0's tiles wait for halos that never come), then the
    /// end-of-run exchange's rank timeout (5 s) — never hang.
    ///
    /// Opt-in (`-- --ignored a_rank_killed`), and only meaningful under
    /// `mpirun --mca orte_abort_on_non_zero_status 0` (Open MPI): by
    /// default mpirun kills every rank as soon as one dies, which says
    /// nothing about autarky. Checked here (Open MPI 4.1, no GPU) that with
    /// that setting a rank killed by SIGKILL leaves the other running and
    /// its pending `MPI_Iallgather` never completes. The job then ends with
    /// MPI_Abort at exit (that exchange is still pending), after rank 0
    /// printed its result: read rank 0's `test result` line, not mpirun's
    /// status (`scripts/gpu-owed.sh mpi-kill`).
    pub fn a_rank_killed_mid_run_ends_the_other_within_the_timeout() {
        let rt = mpi_builder()
            .timeout(std::time::Duration::from_secs(2))
            .rank_timeout(std::time::Duration::from_secs(5))
            .build()
            .unwrap();
        let mut c = cfg(256, 4_000_000);
        c.check_every = 0;
        let solver = JacobiSolver::new(&rt, c).unwrap();
        let run = rt
            .launch(
                solver.graph(),
                autarky::RunOptions::iterations(solver.graph_iterations()),
            )
            .unwrap();
        if rt.rank() == 1 {
            // Mid-run: this PE's kernel has completed instances.
            let started = std::time::Instant::now();
            while run.progress_snapshot().iter().all(|p| p.instances == 0) {
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(30),
                    "rank 1's run never started"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            let me = std::process::id().to_string();
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &me])
                .status();
            // SIGKILL is not deliverable late; if `kill` could not run, abort.
            std::process::abort();
        }
        let t = std::time::Instant::now();
        match run.wait() {
            Err(e) => {
                eprintln!("rank 0 after rank 1 was killed, in {:?}: {e}", t.elapsed());
                // The end-of-run exchange names the lost rank's absence and
                // carries this rank's own record: its PE waited for the
                // dead rank's signals until its timeout.
                match &e {
                    autarky::Error::RankLost { local, .. } => assert!(
                        local.is_some(),
                        "rank 0's own PE recorded no error although its halo never came: {e}"
                    ),
                    other => panic!("expected RankLost, got: {other}"),
                }
            }
            Ok(r) => panic!("rank 0's run finished although rank 1 was killed: {r:?}"),
        }
        // 2 s device timeout (x2 for the comm watchdog) + 5 s rank timeout + slack.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "took {:?}",
            t.elapsed()
        );
    }

    /// A task of PE 1 (rank 1) withheld: its successors wait; the run ends
    /// on every rank with a timeout naming the PE, task and iteration.
    #[cfg(feature = "fault-injection")]
    pub fn a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout() {
        let rt = mpi_builder()
            .timeout(std::time::Duration::from_secs(2))
            .build()
            .unwrap();
        let solver = JacobiSolver::new(&rt, cfg(64, 20)).unwrap();
        let g = solver.graph();
        let held = (0..g.num_tasks())
            .map(autarky::TaskId::from_index)
            .find(|&t| g.pe_of(t) == 1)
            .expect("PE 1 has tasks");
        let mut opts = RunOptions::iterations(20);
        opts.hold_task = Some(held);
        let t = std::time::Instant::now();
        match solver.run_with(opts) {
            Err(Error::DeviceTimeout { task, .. }) => assert!(!task.is_empty()),
            other => panic!("rank {}: expected DeviceTimeout, got {other:?}", rt.rank()),
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(60));
    }
}

fn main() -> std::process::ExitCode {
    #[cfg_attr(not(feature = "mpi"), allow(unused_mut))]
    let mut trials = vec![
        mpi_trial(
            "ranks_that_disagree_on_the_configuration_all_fail_naming_the_knob",
            false,
            ranks_that_disagree_on_the_configuration_all_fail_naming_the_knob,
        ),
        common::opt_in(
            mpi_trial(
                "a_rank_that_never_arrives_ends_the_others_with_rank_timeout",
                false,
                a_rank_that_never_arrives_ends_the_others_with_rank_timeout,
            ),
            "opt-in, alone under mpirun -n 2: -- --ignored a_rank_that_never_arrives",
        ),
    ];
    #[cfg(feature = "mpi")]
    {
        trials.push(mpi_trial(
            "jacobi2d_two_ranks_match_two_virtual_pes_bitwise",
            true,
            gpu::jacobi2d_two_ranks_match_two_virtual_pes_bitwise,
        ));
        trials.push(mpi_trial(
            "jacobi3d_two_ranks_match_two_virtual_pes_bitwise",
            true,
            gpu::jacobi3d_two_ranks_match_two_virtual_pes_bitwise,
        ));
        trials.push(mpi_trial(
            "cg_two_ranks_match_two_virtual_pes_bitwise",
            true,
            gpu::cg_two_ranks_match_two_virtual_pes_bitwise,
        ));
        trials.push(mpi_trial(
            "ranks_whose_pes_have_different_task_counts_report_every_instance",
            true,
            gpu::ranks_whose_pes_have_different_task_counts_report_every_instance,
        ));
        trials.push(mpi_trial(
            "a_nan_on_one_rank_fails_every_rank_with_the_same_named_error",
            true,
            gpu::a_nan_on_one_rank_fails_every_rank_with_the_same_named_error,
        ));
        trials.push(common::opt_in(
            mpi_trial(
                "a_rank_killed_mid_run_ends_the_other_within_the_timeout",
                true,
                gpu::a_rank_killed_mid_run_ends_the_other_within_the_timeout,
            ),
            "opt-in, alone under mpirun --mca orte_abort_on_non_zero_status 0 -n 2: -- --ignored a_rank_killed",
        ));
        #[cfg(feature = "fault-injection")]
        trials.push(mpi_trial(
            "a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout",
            true,
            gpu::a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout,
        ));
    }
    let mut args = Arguments::from_args();
    // The runtime's steps are collective: every rank runs the trials in
    // the same order, one at a time.
    args.test_threads = Some(1);
    libtest_mimic::run(&args, trials).exit_code()
}
