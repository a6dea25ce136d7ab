//! Every option is honoured by every backend or refused with an error that
//! names the backend. These run on the emulator (everywhere); the GPU side
//! of each option is covered by tests/gpu.rs and tests/gpu_faults.rs.

use std::time::{Duration, Instant};

use autarky::{Error, Graph, GraphError, RunOptions, Runtime, TaskKind};

fn emulator() -> Runtime {
    Runtime::builder().emulator(2).build().unwrap()
}

/// A chain of `n` no-op tasks that can run on the emulator.
fn chain(n: usize) -> Graph {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("noop", "").with_cpu(|_| Ok(())))
        .unwrap();
    let t: Vec<_> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    g
}

fn unsupported(r: autarky::Result<autarky::RunReport>) -> (&'static str, &'static str) {
    match r {
        Err(Error::Unsupported {
            backend, option, ..
        }) => (backend, option),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// kernel_info lowers the graph as a run would (on every backend): a graph
/// a run accepts gives `None` on the emulator, one a run refuses is
/// refused, and an empty graph needs no lowering.
#[test]
fn kernel_info_lowers_the_graph_as_a_run_would() {
    let rt = Runtime::builder().emulator(2).max_tasks(8).build().unwrap();
    assert_eq!(rt.kernel_info(&chain(3)).unwrap(), None);
    assert_eq!(rt.kernel_info(&Graph::new()).unwrap(), None);
    match rt.kernel_info(&chain(10)) {
        Err(Error::InvalidGraph(GraphError::TooManyTasks { .. })) => {}
        other => panic!("expected TooManyTasks, got {other:?}"),
    }
}

/// prepare refuses what a run would refuse (the graph against the
/// runtime's limits, an option the backend does not honour) and on the
/// emulator, which compiles nothing, only checks: a run after it is the
/// same run.
#[test]
fn prepare_checks_as_a_run_would() {
    let rt = Runtime::builder().emulator(2).max_tasks(8).build().unwrap();
    rt.prepare(&chain(3), &RunOptions::iterations(5)).unwrap();
    assert_eq!(rt.run(&chain(3), 5).unwrap().instances, 15);
    match rt.prepare(&chain(10), &RunOptions::iterations(1)) {
        Err(Error::InvalidGraph(GraphError::TooManyTasks { .. })) => {}
        other => panic!("expected TooManyTasks, got {other:?}"),
    }
    let watched = RunOptions {
        watchdog: Some(Duration::from_secs(1)),
        ..RunOptions::iterations(1)
    };
    match rt.prepare(&chain(3), &watched) {
        Err(Error::Unsupported {
            backend: "emulator",
            option: "RunOptions::watchdog",
            ..
        }) => {}
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn emulator_honours_max_tasks() {
    let rt = Runtime::builder().emulator(2).max_tasks(8).build().unwrap();
    match rt.run(&chain(10), 1) {
        Err(Error::InvalidGraph(GraphError::TooManyTasks {
            tasks: 10,
            capacity: 8,
        })) => {}
        other => panic!("expected TooManyTasks, got {other:?}"),
    }
    assert_eq!(rt.run(&chain(8), 2).unwrap().instances, 16);
}

#[test]
fn emulator_honours_comm_blocks_as_comm_threads() {
    let rt = Runtime::builder()
        .emulator(2)
        .comm_blocks(3)
        .build()
        .unwrap();
    let r = rt.run(&chain(4), 5).unwrap();
    // One entry per emulated block: 3 comm + 2 compute; only compute runs tasks.
    assert_eq!(r.per_block.len(), 5);
    assert_eq!(r.per_block[..3], [0, 0, 0]);
    assert_eq!(r.instances, 20);
}

#[test]
fn emulator_compute_blocks_must_agree_with_its_threads() {
    let rt = Runtime::builder()
        .emulator(3)
        .compute_blocks(3)
        .build()
        .unwrap();
    assert_eq!(rt.run(&chain(2), 1).unwrap().per_block.len(), 4);
    match Runtime::builder().emulator(3).compute_blocks(4).build() {
        Err(Error::InvalidConfig(msg)) => assert!(msg.contains("disagree"), "{msg}"),
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn emulator_refuses_gpu_only_builder_knobs() {
    for (b, knob) in [
        (Runtime::builder().emulator(2).device(1), "device"),
        (
            Runtime::builder().emulator(2).threads_per_block(256),
            "threads_per_block",
        ),
    ] {
        match b.build() {
            Err(e @ Error::Unsupported { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("{knob} is not supported by the emulator backend")),
                    "{msg}"
                );
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
}

#[test]
fn emulator_honours_the_run_timeout() {
    // One body sleeps 2 s without progress; the idle worker's wait must end
    // at the run's 100 ms timeout (the runtime's own is 10 s).
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("sleepy", "").with_cpu(|ctx| {
            if ctx.task == 0 {
                std::thread::sleep(Duration::from_secs(2));
            }
            Ok(())
        }))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b);
    let opts = RunOptions {
        iterations: 1,
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let started = Instant::now();
    match emulator().run_with(&g, opts) {
        Err(Error::DeviceTimeout { .. }) => {}
        other => panic!("expected DeviceTimeout, got {other:?}"),
    }
    // The sleeping body is joined, so the run ends after it (2 s), long
    // before the runtime's 10 s timeout would have.
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn zero_run_timeout_is_refused() {
    let opts = RunOptions {
        iterations: 1,
        timeout: Some(Duration::ZERO),
        ..Default::default()
    };
    match emulator().run_with(&chain(2), opts) {
        Err(Error::InvalidConfig(msg)) => {
            assert_eq!(msg, "RunOptions::timeout must be more than zero")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn emulator_refuses_watchdog_abort_grace_and_timed() {
    let g = chain(2);
    let rt = emulator();
    let base = RunOptions::iterations(1);
    let cases = [
        (
            RunOptions {
                watchdog: Some(Duration::from_secs(1)),
                ..base.clone()
            },
            "RunOptions::watchdog",
        ),
        (
            RunOptions {
                abort_grace: Some(Duration::from_secs(1)),
                ..base.clone()
            },
            "RunOptions::abort_grace",
        ),
        (
            RunOptions {
                timed: true,
                ..base.clone()
            },
            "RunOptions::timed",
        ),
    ];
    for (opts, option) in cases {
        assert_eq!(unsupported(rt.run_with(&g, opts)), ("emulator", option));
    }
    // Refused before anything runs: a plain run still works.
    assert_eq!(rt.run_with(&g, base).unwrap().instances, 2);
}

#[test]
fn launch_and_abi_probe_are_refused_on_the_emulator() {
    let rt = emulator();
    match rt.launch(&chain(2), RunOptions::iterations(1)) {
        Err(Error::Unsupported {
            backend: "emulator",
            option: "Runtime::launch",
            ..
        }) => {}
        Err(e) => panic!("expected Unsupported, got {e:?}"),
        Ok(_) => panic!("expected Unsupported, got a run"),
    }
    match rt.abi_probe() {
        Err(Error::Unsupported {
            backend: "emulator",
            ..
        }) => {}
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[cfg(feature = "fault-injection")]
mod faults {
    use super::*;

    #[test]
    fn hold_task_works_on_the_emulator() {
        let mut g = chain(3);
        g.set_name(autarky::TaskId::from_index(1), "held");
        let opts = RunOptions {
            iterations: 2,
            timeout: Some(Duration::from_millis(200)),
            hold_task: Some(autarky::TaskId::from_index(1)),
            ..Default::default()
        };
        match emulator().run_with(&g, opts) {
            Err(e @ Error::DeviceTimeout { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("#2: instance 0 waits for #1 (held)"), "{msg}");
            }
            other => panic!("expected DeviceTimeout, got {other:?}"),
        }
    }

    #[test]
    fn fault_targets_outside_the_graph_are_refused() {
        let opts = RunOptions {
            iterations: 1,
            hold_task: Some(autarky::TaskId::from_index(7)),
            ..Default::default()
        };
        match emulator().run_with(&chain(2), opts) {
            Err(Error::InvalidConfig(msg)) => assert_eq!(
                msg,
                "RunOptions::hold_task names task #7, but the graph has 2 tasks"
            ),
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }

    #[test]
    fn gpu_only_faults_are_refused_on_the_emulator() {
        let g = chain(2);
        let rt = emulator();
        let t = autarky::TaskId::from_index(1);
        let opts = RunOptions {
            iterations: 1,
            corrupt_kind: Some((t, 9)),
            ..Default::default()
        };
        assert_eq!(
            unsupported(rt.run_with(&g, opts)),
            ("emulator", "RunOptions::corrupt_kind")
        );
        let opts = RunOptions {
            iterations: 1,
            abi_version_override: Some(1),
            ..Default::default()
        };
        assert_eq!(
            unsupported(rt.run_with(&g, opts)),
            ("emulator", "RunOptions::abi_version_override")
        );
    }
}
