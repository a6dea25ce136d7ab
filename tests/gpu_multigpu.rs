//! Several GPUs in one process: one megakernel per GPU, peer access between
//! them, signals and halo pulses as direct stores over NVLink. Each trial
//! needs 2 GPUs: with fewer it is reported as ignored (needs 2 GPUs), and
//! with AUTARKY_REQUIRE_GPUS=2 it must run and pass.

mod common;

use std::time::{Duration, Instant};

use autarky::abi::ErrorCode;
use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver};
use autarky::solvers::jacobi_ref::{Boundary, JacobiProblem, Stencil};
use autarky::{Error, Graph, Runtime, TaskKind};
use common::*;

fn main() -> std::process::ExitCode {
    #[allow(unused_mut)]
    let mut trials = vec![
        gpus_trial(
            "random_dag_over_2_gpus_x_2_pes_runs_every_instance_once_in_order",
            2,
            random_dag_over_2_gpus_x_2_pes_runs_every_instance_once_in_order,
        ),
        gpus_trial(
            "jacobi_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes",
            2,
            jacobi_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes,
        ),
        gpus_trial(
            "jacobi_5_and_7_point_on_2_gpus_x_2_pes_is_bitwise_4_virtual_pes",
            2,
            jacobi_5_and_7_point_on_2_gpus_x_2_pes_is_bitwise_4_virtual_pes,
        ),
        gpus_trial(
            "cg_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes",
            2,
            cg_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes,
        ),
        gpus_trial(
            "jacobi_default_tiles_and_norms_on_2_gpus_are_bitwise_2_virtual_pes",
            2,
            jacobi_default_tiles_and_norms_on_2_gpus_are_bitwise_2_virtual_pes,
        ),
        gpus_trial(
            "symmetric_copies_work_after_a_runtime_on_another_gpu_is_dropped",
            2,
            symmetric_copies_work_after_a_runtime_on_another_gpu_is_dropped,
        ),
        gpus_trial(
            "abort_on_gpu_1_reaches_gpu_0",
            2,
            abort_on_gpu_1_reaches_gpu_0,
        ),
        gpus_trial(
            "a_nan_on_gpu_1_fails_the_run_naming_pe_task_and_iteration",
            2,
            a_nan_on_gpu_1_fails_the_run_naming_pe_task_and_iteration,
        ),
    ];
    #[cfg(feature = "fault-injection")]
    trials.push(gpus_trial(
        "a_withheld_pulse_between_2_gpus_ends_in_a_timeout_naming_it",
        2,
        a_withheld_pulse_between_2_gpus_ends_in_a_timeout_naming_it,
    ));
    run_trials(trials)
}

/// A NaN in GPU 1's part of the grid: the first check reports NonFinite
/// naming the global check task and its iteration (every PE computes the
/// same norm, so the first error is a check's), promptly.
fn a_nan_on_gpu_1_fails_the_run_naming_pe_task_and_iteration() {
    let rt = rt(2, 2);
    let prob = JacobiProblem::new([1, 48, 40], Stencil::FivePoint).with_init(|_, y, x| {
        if (y, x) == (40, 7) {
            f64::NAN
        } else {
            0.0
        }
    });
    let mut cfg = JacobiConfig::new(prob, 50);
    cfg.check_every = 5;
    cfg.pe_grid = Some([1, 2, 1]);
    let t0 = Instant::now();
    match JacobiSolver::new(&rt, cfg).unwrap().run() {
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
        other => panic!("expected NonFinite, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(10));
}

/// The pulse from GPU 1 to GPU 0 withheld: GPU 0's tiles wait for its
/// signal; the run ends in a timeout whose report names the awaited pulse,
/// within the timeout, on both GPUs (one report for the run).
#[cfg(feature = "fault-injection")]
fn a_withheld_pulse_between_2_gpus_ends_in_a_timeout_naming_it() {
    let rt = Runtime::builder()
        .gpu()
        .gpus(2)
        .pes(2)
        .comm_blocks(2)
        .compute_blocks(8)
        .symmetric_heap_bytes(64 << 20)
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let mut cfg = JacobiConfig::new(JacobiProblem::new([1, 64, 48], Stencil::FivePoint), 30);
    cfg.pe_grid = Some([1, 2, 1]);
    let solver = JacobiSolver::new(&rt, cfg).unwrap();
    let g = solver.graph();
    let pulse = (0..g.num_tasks())
        .map(autarky::TaskId::from_index)
        .find(|&t| g.pe_of(t) == 1 && g.name(t).is_some_and(|n| n.contains("PE 1 → PE 0")))
        .expect("a pulse from PE 1 to PE 0");
    let name = g.name(pulse).unwrap().to_string();
    let mut opts = autarky::RunOptions::iterations(30);
    opts.hold_task = Some(pulse);
    let t0 = Instant::now();
    match solver.run_with(opts) {
        Err(e @ Error::DeviceTimeout { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&name), "the report must name {name}: {msg}");
            eprintln!("{msg}");
        }
        other => panic!("expected DeviceTimeout, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

fn rt(pes: u32, gpus: u32) -> Runtime {
    Runtime::builder()
        .gpu()
        .gpus(gpus)
        .pes(pes)
        .comm_blocks(2)
        .compute_blocks(8)
        .symmetric_heap_bytes(64 << 20)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn random_dag_over_2_gpus_x_2_pes_runs_every_instance_once_in_order() {
    let rt = rt(4, 2);
    let (n, iters) = (80, 40);
    let logged = Logged::new(&rt, n, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let mut rng = Rng(2024);
    let ids: Vec<_> = (0..n)
        .map(|_| {
            let t = g.add_task(k, &logged.args());
            g.set_pe(t, rng.below(4) as u32);
            t
        })
        .collect();
    for i in 1..n {
        let j = rng.below(i as u64) as usize;
        g.add_edge(ids[j], ids[i]);
        if rng.below(3) == 0 {
            g.add_carried_edge(ids[i], ids[rng.below(i as u64) as usize]);
        }
    }
    let report = rt.run(&g, iters).unwrap();
    assert_eq!(report.instances, n as u64 * iters as u64);
    // One launch per GPU (each after making its context current), then
    // only waits.
    let launches = report
        .driver_calls
        .iter()
        .filter(|c| **c == "cuLaunchCooperativeKernel")
        .count();
    assert_eq!(launches, 2, "{:?}", report.driver_calls);
    assert!(report.driver_calls.iter().all(|c| matches!(
        *c,
        "cuLaunchCooperativeKernel" | "cuStreamQuery" | "cuCtxSetCurrent"
    )));
    logged.check(&g);
}

fn jacobi_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes() {
    for (dims, stencil) in [
        ([1, 96, 80], Stencil::NinePoint),
        ([16, 14, 12], Stencil::TwentySevenPoint),
    ] {
        let prob = JacobiProblem::new(dims, stencil)
            .with_boundary([Boundary::Periodic, Boundary::Dirichlet, Boundary::Periodic])
            .with_init(|z, y, x| ((x * 3 + y * 5 + z * 7) % 11) as f64 / 11.0)
            .with_dirichlet(|_, y, x| 1.0 + 0.01 * (x - y) as f64);
        let mut fields = Vec::new();
        for gpus in [1, 2] {
            let rt = rt(2, gpus);
            let mut cfg = JacobiConfig::new(prob.clone(), 41);
            cfg.tile = Some([4, 6, 32]);
            fields.push(JacobiSolver::new(&rt, cfg).unwrap().run().unwrap().field);
        }
        let diff = fields[0]
            .iter()
            .zip(&fields[1])
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            diff, 0,
            "{stencil:?}: 2 GPUs differ from 2 virtual PEs in {diff} cells"
        );
    }
}

fn jacobi_5_and_7_point_on_2_gpus_x_2_pes_is_bitwise_4_virtual_pes() {
    for (dims, stencil, check_every) in [
        ([1, 200, 136], Stencil::FivePoint, 10),
        ([24, 20, 36], Stencil::SevenPoint, 7),
    ] {
        let prob = JacobiProblem::new(dims, stencil)
            .with_init(|z, y, x| ((x * 5 + y * 3 + z * 2) % 13) as f64 / 13.0)
            .with_dirichlet(|z, y, x| 1.0 + 0.02 * x as f64 - 0.01 * (y + z) as f64);
        let mut runs = Vec::new();
        for gpus in [1, 2] {
            let rt = rt(4, gpus);
            let mut cfg = JacobiConfig::new(prob.clone(), 60);
            cfg.check_every = check_every;
            runs.push(JacobiSolver::new(&rt, cfg).unwrap().run().unwrap());
        }
        let diff = runs[0]
            .field
            .iter()
            .zip(&runs[1].field)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            diff, 0,
            "{stencil:?}: 2 GPUs x 2 PEs differ from 4 virtual PEs in {diff} cells"
        );
        // The norms too: the same reduction order on every PE count layout.
        assert_eq!(runs[0].norms, runs[1].norms, "{stencil:?}: norms differ");
        assert!(!runs[0].norms.is_empty());
    }
}

/// CG on 2 GPUs against 2 virtual PEs of one GPU, with the runtime's own
/// block counts (about 1054 compute blocks a PE on 2 GPUs, 527 on one):
/// a converging solve, and a 80³ Poisson run whose default tiling (about
/// 855 tiles a PE) once followed the block count and so gave different
/// dot products (the two-GPU CG bench found it).
fn cg_on_2_gpus_is_bitwise_the_same_as_on_2_virtual_pes() {
    use autarky::solvers::cg::{heap_bytes_needed, poisson3d, CgConfig, CgSolver, CgVariant};
    for (n, tol, max_iters) in [(20, 1e-8, 10_000), (80, 0.0, 20)] {
        let a = poisson3d(n).unwrap();
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            let mut runs = Vec::new();
            for gpus in [1, 2] {
                let rt = Runtime::builder()
                    .gpu()
                    .gpus(gpus)
                    .pes(2)
                    .comm_blocks(2)
                    .symmetric_heap_bytes(heap_bytes_needed(&a, 2).unwrap())
                    .timeout(Duration::from_secs(20))
                    .build()
                    .unwrap();
                let cfg = CgConfig {
                    variant,
                    ..CgConfig::new(tol, max_iters)
                };
                let s = CgSolver::new(&rt, &a, cfg).unwrap();
                runs.push((s.tiles_per_pe(), s.run().unwrap()));
            }
            let (t1, r1) = &runs[0];
            let (t2, r2) = &runs[1];
            assert_eq!(t1, t2, "{n}³ {variant:?}: tiles per PE differ");
            if tol > 0.0 {
                assert!(r1.converged, "{n}³ {variant:?}: {:?}", r1.iterations);
            }
            common::assert_same_cg_run(
                r2,
                r1,
                &format!("{n}³ {variant:?}, 2 GPUs against 2 virtual PEs"),
            );
        }
    }
}

/// Jacobi with default tiles and the runtime's own block counts: 2 GPUs
/// and 2 virtual PEs give the same tiles, so the same norms (summed tile
/// by tile) as well as the same grid. At 2048² a PE has ~2.1 M cells: the
/// tiles once followed the block count (527 against 1054 a PE) and would
/// differ.
fn jacobi_default_tiles_and_norms_on_2_gpus_are_bitwise_2_virtual_pes() {
    let prob = JacobiProblem::new([1, 2048, 2048], Stencil::FivePoint)
        .with_init(|_, y, x| ((x * 5 + y * 3) % 13) as f64 / 13.0)
        .with_dirichlet(|_, y, x| 1.0 + 0.02 * x as f64 - 0.01 * y as f64);
    let mut runs = Vec::new();
    for gpus in [1, 2] {
        let rt = Runtime::builder()
            .gpu()
            .gpus(gpus)
            .pes(2)
            .symmetric_heap_bytes(128 << 20)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        let mut cfg = JacobiConfig::new(prob.clone(), 40);
        cfg.check_every = 10;
        let s = JacobiSolver::new(&rt, cfg).unwrap();
        runs.push((s.tiles_per_pe().to_vec(), s.run().unwrap()));
    }
    assert_eq!(runs[0].0, runs[1].0, "tiles per PE differ");
    assert_eq!(runs[0].1.norms.len(), 4);
    let bits = |r: &autarky::solvers::jacobi::JacobiRun| {
        r.norms
            .iter()
            .map(|&(n, v)| (n, v.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&runs[0].1), bits(&runs[1].1), "norms differ");
    let diff = runs[0]
        .1
        .field
        .iter()
        .zip(&runs[1].1.field)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(diff, 0, "2 GPUs differ from 2 virtual PEs in {diff} cells");
}

/// A runtime's symmetric buffers are copied in their GPU's context, not
/// whatever the thread has current: here GPU 0's, of a runtime dropped
/// since. (Over NVSHMEM a rank whose runtime is on GPU 1 failed so after a
/// reference runtime on GPU 0 was dropped: CONTEXT_IS_DESTROYED, and
/// INVALID_VALUE while that runtime was still alive.) It tells the fix
/// apart only when dropping `b` destroys GPU 0's primary context, i.e. no
/// other runtime holds it: run single-threaded (`--test-threads=1`, as
/// scripts/gpu-validate.sh does); with ordinary device memory a copy under
/// another *live* context succeeds anyway (unified addressing).
fn symmetric_copies_work_after_a_runtime_on_another_gpu_is_dropped() {
    let one = |device| {
        Runtime::builder()
            .gpu()
            .device(device)
            .pes(1)
            .symmetric_heap_bytes(1 << 20)
            .build()
            .unwrap()
    };
    let a = one(1);
    let buf = a.alloc_symmetric::<f64>(1000).unwrap();
    buf.copy_from(0, &[1.5; 1000]).unwrap();
    {
        let b = one(0);
        let other = b.alloc_symmetric::<f64>(10).unwrap();
        // Leaves GPU 0's context current; dropping `b` releases it.
        other.copy_from(0, &[2.0; 10]).unwrap();
    }
    let want: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    buf.copy_from(0, &want).unwrap();
    assert_eq!(buf.to_vec(0).unwrap(), want);
    // And a run of `a` after it.
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "noop",
            "__device__ void noop(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    g.add_task_bytes(k, &[]);
    assert_eq!(a.run(&g, 3).unwrap().instances, 3);
}

fn abort_on_gpu_1_reaches_gpu_0() {
    let rt = rt(2, 2);
    let mut g = Graph::new();
    let noop = g
        .add_kind(TaskKind::new(
            "noop",
            "__device__ void noop(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    let fail = g
        .add_kind(TaskKind::new(
            "fail_late",
            "__device__ void fail_late(autarky::TaskCtx& ctx) { if (threadIdx.x == 0 && ctx.iteration == 5000) ctx.fail(9); }",
        ))
        .unwrap();
    let a = g.add_task_bytes(noop, &[]);
    let f = g.add_task_bytes(fail, &[]);
    g.set_pe(a, 0).set_pe(f, 1);
    let run = rt
        .launch(&g, autarky::RunOptions::iterations(50_000_000))
        .unwrap();
    let t0 = Instant::now();
    let fin = run.wait_detailed().unwrap();
    match fin.result {
        Err(Error::TaskFailed { pe, code, .. }) => assert_eq!((pe, code), (1, 9)),
        ref other => panic!("expected TaskFailed on PE 1, got {other:?}"),
    }
    // GPU 0's PE stopped because PE 1 raised abort, which is no error of
    // its own: it once recorded HostAbort (PE 1 sets the peers' host-mapped
    // words too), and when GPU 0's clock ran behind GPU 1's, that record
    // came "first" and the run reported Aborted on PE 0.
    let codes: Vec<u32> = fin.pe_statuses.iter().map(|s| s.error_code).collect();
    assert_eq!(
        codes,
        [0, ErrorCode::TaskFailed as u32],
        "error records per PE"
    );
    let prop = fin.abort_propagation_ns.unwrap();
    eprintln!("abort propagation across 2 GPUs: {prop} ns");
    assert!(prop < 10_000_000, "abort took {prop} ns to reach every GPU");
    assert!(t0.elapsed() < Duration::from_secs(5));
}
