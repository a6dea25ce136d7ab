//! A kind whose CUDA source does not compile fails on the emulator too:
//! when NVRTC is present, the emulator compiles the megakernel the GPU
//! would build and returns the same `Error::Nvrtc` (unless the check is
//! turned off). The tests that need NVRTC are reported as ignored, with
//! the reason, when it is absent (failed instead when
//! AUTARKY_REQUIRE_NVRTC=1); the one that checks the run without NVRTC is
//! ignored where NVRTC is present.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use autarky::emulator::{self, EmulatorConfig};
use autarky::{Error, Graph, Runtime, TaskKind};
use common::{nvrtc_found, nvrtc_trial, run_trials, trial, trial_unless};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "a_kind_with_a_syntax_error_fails_the_emulated_run_with_the_nvrtc_log",
            a_kind_with_a_syntax_error_fails_the_emulated_run_with_the_nvrtc_log,
        ),
        trial_unless(
            "without_nvrtc_a_kind_with_a_syntax_error_runs_unchecked",
            || {
                nvrtc_found()
                    .is_ok()
                    .then(|| "NVRTC is present: this checks the emulator without it".into())
            },
            without_nvrtc_a_kind_with_a_syntax_error_runs_unchecked,
        ),
        nvrtc_trial(
            "the_broken_kind_runs_when_the_check_is_turned_off",
            the_broken_kind_runs_when_the_check_is_turned_off,
        ),
        nvrtc_trial(
            "kinds_defined_by_another_kinds_source_compile_together_as_on_the_gpu",
            kinds_defined_by_another_kinds_source_compile_together_as_on_the_gpu,
        ),
        nvrtc_trial(
            "a_kind_whose_function_nothing_defines_fails_as_on_the_gpu",
            a_kind_whose_function_nothing_defines_fails_as_on_the_gpu,
        ),
        nvrtc_trial(
            "the_cuda_is_checked_at_the_graphs_own_block_shape_on_every_emulator_entry",
            the_cuda_is_checked_at_the_graphs_own_block_shape_on_every_emulator_entry,
        ),
        trial(
            "a_graph_without_device_source_runs_unchecked",
            a_graph_without_device_source_runs_unchecked,
        ),
    ])
}

/// One task of a kind with a syntax error in its CUDA source and a working
/// CPU body (which counts its runs).
fn broken_graph(runs: Arc<AtomicU64>) -> Graph {
    let mut g = Graph::new();
    let k = g
        .add_kind(
            TaskKind::new(
                "broken",
                "__device__ void broken(autarky::TaskCtx& ctx) { undeclared_thing(ctx) }",
            )
            .with_cpu(move |_| {
                runs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }),
        )
        .unwrap();
    g.add_task_bytes(k, &[]);
    g
}

fn a_kind_with_a_syntax_error_fails_the_emulated_run_with_the_nvrtc_log() {
    let runs = Arc::new(AtomicU64::new(0));
    let g = broken_graph(runs.clone());
    let rt = Runtime::builder().emulator(2).build().unwrap();
    match rt.run(&g, 3) {
        Err(Error::Nvrtc { log, options }) => {
            assert!(log.contains("undeclared_thing"), "log: {log}");
            assert!(options.iter().any(|o| o.contains("sm_90")), "{options:?}");
        }
        other => panic!("expected Error::Nvrtc, got {other:?}"),
    }
    assert_eq!(runs.load(Ordering::Relaxed), 0, "nothing ran");
    // The direct emulator API checks too.
    match emulator::run(&g, 1, &EmulatorConfig::default()) {
        Err(Error::Nvrtc { .. }) => {}
        other => panic!("expected Error::Nvrtc, got {other:?}"),
    }
}

/// Without NVRTC the source cannot be checked: the emulated run goes on.
fn without_nvrtc_a_kind_with_a_syntax_error_runs_unchecked() {
    let runs = Arc::new(AtomicU64::new(0));
    let g = broken_graph(runs.clone());
    let rt = Runtime::builder().emulator(2).build().unwrap();
    assert_eq!(rt.run(&g, 3).unwrap().instances, 3);
    assert_eq!(runs.load(Ordering::Relaxed), 3);
}

fn the_broken_kind_runs_when_the_check_is_turned_off() {
    let runs = Arc::new(AtomicU64::new(0));
    let g = broken_graph(runs.clone());
    let rt = Runtime::builder()
        .emulator(2)
        .check_cuda(false)
        .build()
        .unwrap();
    assert_eq!(rt.run(&g, 3).unwrap().instances, 3);
    let cfg = EmulatorConfig {
        check_cuda: false,
        ..EmulatorConfig::default()
    };
    assert_eq!(emulator::run(&g, 2, &cfg).unwrap().instances, 2);
    assert_eq!(runs.load(Ordering::Relaxed), 5);
}

fn kinds_defined_by_another_kinds_source_compile_together_as_on_the_gpu() {
    // The second kind has no source of its own: the first kind's source
    // defines both functions (the pattern of solvers::jacobi).
    const SHARED: &str = r#"
        __device__ void first(autarky::TaskCtx&) {}
        __device__ void second(autarky::TaskCtx&) {}
    "#;
    let mut g = Graph::new();
    let a = g
        .add_kind(TaskKind::new("first", SHARED).with_cpu(|_| Ok(())))
        .unwrap();
    let b = g
        .add_kind(TaskKind::new("second", "").with_cpu(|_| Ok(())))
        .unwrap();
    let x = g.add_task_bytes(a, &[]);
    let y = g.add_task_bytes(b, &[]);
    g.add_edge(x, y);
    let rt = Runtime::builder().emulator(2).build().unwrap();
    assert_eq!(rt.run(&g, 2).unwrap().instances, 4);
}

/// A kind with empty source whose function nothing defines fails, as it
/// would on the GPU.
fn a_kind_whose_function_nothing_defines_fails_as_on_the_gpu() {
    let mut g = Graph::new();
    let a = g
        .add_kind(
            TaskKind::new("defined", "__device__ void defined(autarky::TaskCtx&) {}")
                .with_cpu(|_| Ok(())),
        )
        .unwrap();
    let b = g
        .add_kind(TaskKind::new("undefined_kind_fn", "").with_cpu(|_| Ok(())))
        .unwrap();
    g.add_task_bytes(a, &[]);
    g.add_task_bytes(b, &[]);
    let rt = Runtime::builder().emulator(2).build().unwrap();
    match rt.run(&g, 1) {
        // Reported in the generated dispatch, at a line naming the kind —
        // not under the last kind's snippet (kind_defined.cu), at a line
        // it does not have.
        Err(Error::Nvrtc { log, .. }) => {
            assert!(log.contains("undefined_kind_fn"), "{log}");
            assert!(log.contains("autarky_dispatch.cu("), "{log}");
            assert!(!log.contains("kind_defined.cu("), "{log}");
            // And nothing of the runtime's own: its warnings once came
            // with every user error (unused variables of lean variants).
            assert!(!log.contains("warning"), "{log}");
        }
        other => panic!("expected Error::Nvrtc, got {other:?}"),
    }
}

/// A graph that sets its block shape (`Graph::set_threads_per_block`) is
/// compiled for it, as the GPU would launch it: through the runtime and
/// through the direct emulator API alike (`-DAUTARKY_THREADS` in the
/// failed compile's options).
fn the_cuda_is_checked_at_the_graphs_own_block_shape_on_every_emulator_entry() {
    let mut g = broken_graph(Arc::new(AtomicU64::new(0)));
    g.set_threads_per_block(256).unwrap();
    let threads_of = |r: autarky::Result<autarky::RunReport>| match r {
        Err(Error::Nvrtc { options, .. }) => options
            .into_iter()
            .filter(|o| o.starts_with("-DAUTARKY_THREADS="))
            .collect::<Vec<_>>(),
        other => panic!("expected Error::Nvrtc, got {other:?}"),
    };
    let want = vec!["-DAUTARKY_THREADS=256".to_string()];
    let rt = Runtime::builder().emulator(2).build().unwrap();
    assert_eq!(threads_of(rt.run(&g, 1)), want, "Runtime::run");
    let cfg = EmulatorConfig::default();
    assert_eq!(
        threads_of(emulator::run(&g, 1, &cfg)),
        want,
        "emulator::run"
    );
    assert_eq!(
        threads_of(emulator::run_pes(&g, 1, 2, &cfg)),
        want,
        "emulator::run_pes"
    );
}

fn a_graph_without_device_source_runs_unchecked() {
    // CPU-only kinds (empty source): nothing to compile, with or without
    // NVRTC.
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("cpu_only", "").with_cpu(|_| Ok(())))
        .unwrap();
    g.add_task_bytes(k, &[]);
    let rt = Runtime::builder().emulator(1).build().unwrap();
    assert_eq!(rt.run(&g, 4).unwrap().instances, 4);
}
