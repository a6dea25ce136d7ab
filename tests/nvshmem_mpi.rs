//! Multi-process runs over NVSHMEM ([`Transport::Nvshmem`]): run under MPI,
//! two ranks, e.g. on a machine with two NVLink GPUs:
//!
//! ```text
//! cargo test --features nvshmem --test nvshmem_mpi --no-run     # prints the binary
//! AUTARKY_NVSHMEM_DIR=…/nvidia/nvshmem AUTARKY_NVJITLINK_DIR=…/nvidia/cu13/lib \
//! AUTARKY_CUDA_INCLUDE_DIR=…/nvidia/cu13/include AUTARKY_NVSHMEM_FORCE_REMOTE=1 \
//! mpirun --allow-run-as-root --oversubscribe -n 2 \
//!     -x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR \
//!     -x AUTARKY_NVSHMEM_FORCE_REMOTE -x AUTARKY_NVRTC_DIR target/debug/deps/nvshmem_mpi-<hash>
//! ```
//!
//! With `AUTARKY_NVSHMEM_FORCE_REMOTE=1` the device reaches the other rank
//! only through NVSHMEM puts and signals (what another node needs); without
//! it, through the `nvshmem_ptr` mapping (load/store, like CUDA IPC). Run
//! both. Every rank runs every trial in the same order, one at a time (the
//! runtime's steps are collective). Without `mpirun`, a GPU or NVSHMEM
//! (with nvJitLink and the CUDA headers), every trial is reported as
//! ignored, with the reason.

mod common;

use autarky::solvers::jacobi::{JacobiConfig, JacobiRun, JacobiSolver};
use autarky::solvers::jacobi_ref::{JacobiProblem, Stencil};
use autarky::{Builder, Error, Graph, RunOptions, Runtime, TaskKind, Transport};
use libtest_mimic::{Arguments, Trial};

/// Ranks of the MPI job this process belongs to, from the launcher's
/// environment (Open MPI, or PMI-based launchers).
fn mpi_ranks() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// Why these trials cannot run here, if they cannot.
fn skip() -> Option<String> {
    match mpi_ranks() {
        None => return Some("not started by mpirun (run the binary under `mpirun -n 2`)".into()),
        Some(n) if n != 2 => return Some(format!("needs exactly 2 MPI ranks, the job has {n}")),
        Some(_) => {}
    }
    if let Err(why) = common::usable_gpus() {
        return Some(why.clone());
    }
    if let Err(e) = autarky::runtime::nvshmem::toolchain() {
        return Some(format!("no NVSHMEM toolchain: {e}"));
    }
    if let Err(e) = autarky::runtime::nvshmem::host::nvshmem_info() {
        return Some(format!("no NVSHMEM host library: {e}"));
    }
    None
}

fn trial(name: &str, body: fn()) -> Trial {
    match skip() {
        // Listed as ignored with the reason; run anyway (`--ignored`), it
        // fails with the reason rather than passing without having run.
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

fn forced_remote() -> bool {
    std::env::var("AUTARKY_NVSHMEM_FORCE_REMOTE").as_deref() == Ok("1")
}

fn nvshmem_builder() -> Builder {
    Runtime::builder()
        .transport(Transport::Nvshmem)
        .symmetric_heap_bytes(128 << 20)
        .compute_blocks(4)
        // Bounds every collective: a rank whose trial panicked leaves the
        // other in one (session 7: a failing trial cost 150 s a run with
        // 180 s here). Compiles run on both ranks at once, well under it.
        .rank_timeout(std::time::Duration::from_secs(60))
}

/// The one NVSHMEM runtime of the process, shared by every trial: NVSHMEM
/// is initialised once per process (whether it can be initialised again
/// after `nvshmemx_hostlib_finalize` is not something these trials should
/// depend on). Built by the first trial that needs it, on every rank.
fn runtime() -> &'static Runtime {
    static RT: std::sync::OnceLock<Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| nvshmem_builder().build().unwrap())
}

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

/// Every PE is reached the way the environment says: this rank's own PE
/// locally, the other over NVSHMEM only when forced (else through
/// `nvshmem_ptr` when the GPUs are peers, as on one node).
fn the_other_rank_is_reached_over_nvshmem_as_the_environment_says() {
    let rt = runtime();
    assert_eq!((rt.num_pes(), rt.transport()), (2, Transport::Nvshmem));
    let t = rt.peer_transports();
    let me = rt.rank() as usize;
    assert_eq!(t[me], "local", "{t:?}");
    let other = t[1 - me];
    if forced_remote() {
        assert_eq!(other, "nvshmem", "{t:?}");
    } else {
        assert!(other == "nvshmem-p2p" || other == "nvshmem", "{t:?}");
    }
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

/// 2 ranks × 1 PE over NVSHMEM give bitwise the grid and norms of 2
/// virtual PEs in one process, twice in a row (the second run reuses the
/// symmetric state area). Under FORCE_REMOTE every halo pulse is an
/// NVSHMEM put, every cross-PE completion an NVSHMEM signal and every
/// norm slot a put_value.
fn jacobi2d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise() {
    let (n, iters) = (96, 60);
    twice_against_two_virtual_pes(runtime(), cfg(n, iters), "grid", |got| {
        assert_eq!(got.iterations, iters);
        assert!(got.field.iter().any(|&v| v != 0.0));
    });
}

/// Jacobi 3D (7-point, the PEs split along z, so a halo is a whole
/// plane): 2 ranks over NVSHMEM give bitwise the grid and norms of 2
/// virtual PEs in one process.
fn jacobi3d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise() {
    let prob = JacobiProblem::new([24, 20, 36], Stencil::SevenPoint)
        .with_init(|z, y, x| ((x * 5 + y * 3 + z * 2) % 13) as f64 / 13.0)
        .with_dirichlet(|z, y, x| 1.0 + 0.02 * x as f64 - 0.01 * (y + z) as f64);
    let mut c = JacobiConfig::new(prob, 42);
    c.check_every = 7;
    c.pe_grid = Some([2, 1, 1]);
    twice_against_two_virtual_pes(runtime(), c, "3D grid", |got| {
        assert_eq!(got.norms.len(), 6)
    });
}

/// CG (both recurrences) over NVSHMEM: bitwise the x, residual and
/// iteration count of 2 virtual PEs in one process, twice in a row. Under
/// FORCE_REMOTE every p gather is an NVSHMEM put (at 48³ in 2 chunks
/// from 2 of the 32 comm blocks at once) and every allreduce partial a put_value.
fn cg_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise() {
    use autarky::solvers::cg::{heap_bytes_needed, poisson3d, CgConfig, CgSolver, CgVariant};
    let rt = runtime();
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
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            let cfg = || CgConfig {
                variant,
                ..CgConfig::new(tol, max_iters)
            };
            let want = CgSolver::new(&one, &a, cfg()).unwrap().run().unwrap();
            if tol > 0.0 {
                assert!(want.converged, "{n}³ {variant:?}: {}", want.iterations);
            }
            let solver = CgSolver::new(rt, &a, cfg()).unwrap();
            for round in 0..2 {
                let got = solver.run().unwrap();
                let what = format!("rank {} {n}³ {variant:?} round {round}", rt.rank());
                common::assert_same_cg_run(&got, &want, &what);
            }
        }
    }
}

/// A task of PE 1 (rank 1) withheld: its successors on both ranks wait
/// (under FORCE_REMOTE for an NVSHMEM signal that never comes); the run
/// ends on every rank with a timeout naming the task, within the bound.
#[cfg(feature = "fault-injection")]
fn a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout() {
    let rt = runtime();
    let solver = JacobiSolver::new(rt, cfg(64, 20)).unwrap();
    let g = solver.graph();
    let held = (0..g.num_tasks())
        .map(autarky::TaskId::from_index)
        .find(|&t| g.pe_of(t) == 1)
        .expect("PE 1 has tasks");
    let mut opts = RunOptions::iterations(20);
    opts.hold_task = Some(held);
    opts.timeout = Some(std::time::Duration::from_secs(2));
    let t = std::time::Instant::now();
    match solver.run_with(opts) {
        Err(Error::DeviceTimeout { task, .. }) => assert!(!task.is_empty()),
        other => panic!("rank {}: expected DeviceTimeout, got {other:?}", rt.rank()),
    }
    assert!(t.elapsed() < std::time::Duration::from_secs(60));
    // The runtime still runs after the failed run (the state area is reused).
    solver.run().unwrap();
}

/// A NaN in rank 1's part of the grid: the run fails on every rank with
/// the same NonFinite error (the abort reached the other PE through its
/// Status — an NVSHMEM put under FORCE_REMOTE — and the end-of-run gather
/// names the first error on every rank), well before the device timeout
/// (60 s: a PE that never saw the abort would wait that long).
fn a_nan_on_one_rank_fails_every_rank_with_the_same_named_error() {
    let rt = runtime();
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
    let mut opts = RunOptions::iterations(50);
    opts.timeout = Some(std::time::Duration::from_secs(60));
    let t = std::time::Instant::now();
    match JacobiSolver::new(rt, c).unwrap().run_with(opts) {
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
    // Compiling and linking the megakernel is part of the time.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(45),
        "rank {}: the run took {:?} to fail (a device timeout, not the propagated abort?)",
        rt.rank(),
        t.elapsed()
    );
}

/// Unpinned producers on rank 0: an instance runs on whichever compute
/// block claims it and signals the consumer on rank 1 from that block's
/// thread. Under FORCE_REMOTE each signal is an NVSHMEM signal, and NVSHMEM
/// orders signals only per thread: a SET of i + 1 landing after the SET of
/// i + 2 would move the consumer's word back, and a wait for the last
/// instance would never end (a timeout instead of this run's success).
/// Eight producers keep the four compute blocks trading instances; the
/// consumer is pinned (it polls the words).
fn unpinned_producers_signal_the_other_rank_in_order() {
    let rt = runtime();
    let mut g = Graph::new();
    let noop = g
        .add_kind(TaskKind::new(
            "noop",
            "__device__ void noop(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    let sink = g.add_task_bytes(noop, &[]);
    g.set_pe(sink, 1).pin(sink, 0);
    for _ in 0..8 {
        let t = g.add_task_bytes(noop, &[]);
        g.set_pe(t, 0);
        g.add_edge(t, sink);
    }
    let iters = 20_000;
    let mut opts = RunOptions::iterations(iters);
    opts.timeout = Some(std::time::Duration::from_secs(10));
    let report = rt.run_with(&g, opts).unwrap();
    // Every rank reports every PE's instances.
    assert_eq!(report.instances, 9 * iters as u64, "rank {}", rt.rank());
}

fn main() -> std::process::ExitCode {
    #[cfg_attr(not(feature = "fault-injection"), allow(unused_mut))]
    let mut trials = vec![
        trial(
            "the_other_rank_is_reached_over_nvshmem_as_the_environment_says",
            the_other_rank_is_reached_over_nvshmem_as_the_environment_says,
        ),
        trial(
            "jacobi2d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise",
            jacobi2d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise,
        ),
        trial(
            "jacobi3d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise",
            jacobi3d_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise,
        ),
        trial(
            "cg_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise",
            cg_two_ranks_over_nvshmem_match_two_virtual_pes_bitwise,
        ),
        trial(
            "unpinned_producers_signal_the_other_rank_in_order",
            unpinned_producers_signal_the_other_rank_in_order,
        ),
        trial(
            "a_nan_on_one_rank_fails_every_rank_with_the_same_named_error",
            a_nan_on_one_rank_fails_every_rank_with_the_same_named_error,
        ),
    ];
    #[cfg(feature = "fault-injection")]
    trials.push(trial(
        "a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout",
        a_withheld_task_on_rank_1_ends_every_rank_with_a_named_timeout,
    ));
    let mut args = Arguments::from_args();
    // The runtime's steps are collective: every rank runs the trials in
    // the same order, one at a time.
    args.test_threads = Some(1);
    libtest_mimic::run(&args, trials).exit_code()
}
