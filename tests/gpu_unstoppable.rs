//! A task body that ignores abort (a raw spin loop, not ctx.wait_geq): the
//! host watchdog raises abort, the kernel does not stop within the grace
//! period, and the run is reported as Error::Unstoppable instead of being
//! waited on forever. Its own test binary: the kernel keeps running (for 3 s)
//! after the error, which would disturb other tests in the same process.
//! Ignored (with the reason) without a GPU; fails instead when
//! AUTARKY_REQUIRE_GPU=1.

mod common;

use std::time::{Duration, Instant};

use autarky::{Error, Graph, RunOptions, Runtime, TaskKind};
use common::*;

fn main() -> std::process::ExitCode {
    run_trials(vec![gpu_trial_with(
        "kernel_that_ignores_abort_is_reported_unstoppable_not_waited_on",
        Runtime::builder().gpu().timeout(Duration::from_secs(30)),
        kernel_that_ignores_abort_is_reported_unstoppable_not_waited_on,
    )])
}

fn kernel_that_ignores_abort_is_reported_unstoppable_not_waited_on(rt: Runtime) {
    // (Then: refused while it runs, usable again once it ended.)
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "stubborn",
            r#"__device__ void stubborn(autarky::TaskCtx& ctx) {
             unsigned long long t0 = autarky::globaltimer_ns();
             while (autarky::globaltimer_ns() - t0 < 3000000000ull) {}   // 3 s, never checks abort
           }"#,
        ))
        .unwrap();
    let s = g.add_task_bytes(k, &[]);
    g.set_name(s, "stubborn");
    rt.kernel_info(&g).unwrap(); // compile first: the clock below times the run only
    let opts = RunOptions {
        iterations: 1,
        watchdog: Some(Duration::from_millis(200)),
        abort_grace: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let started = Instant::now();
    match rt.run_with(&g, opts) {
        Err(e @ Error::Unstoppable { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("did not stop") && msg.contains("PE 0"),
                "{msg}"
            );
            eprintln!("{msg}");
        }
        other => panic!("expected Unstoppable, got {other:?}"),
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "reported after {took:?}, not promptly"
    );
    // While it still runs, a new run is refused at once (a cooperative
    // launch would queue behind it), not left to its own watchdog.
    let t = Instant::now();
    match rt.run(&g, 1) {
        Err(Error::GpuStuck { .. }) => {}
        other => panic!("expected GpuStuck while the old kernel runs, got {other:?}"),
    }
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "refused after {:?}",
        t.elapsed()
    );
    // Once it has ended, the GPU runs graphs again.
    std::thread::sleep(Duration::from_secs(3));
    let mut ok = Graph::new();
    let k = ok
        .add_kind(TaskKind::new(
            "fine",
            "__device__ void fine(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    ok.add_task_bytes(k, &[]);
    assert_eq!(rt.run(&ok, 10).unwrap().instances, 10);
}
