//! Fault injection on the GPU: every failure ends with the right error,
//! promptly, and nothing hangs. Ignored (with the reason) without a GPU;
//! fails instead when AUTARKY_REQUIRE_GPU=1. The tests that inject faults
//! need `--features fault-injection`.

mod common;

use std::time::{Duration, Instant};

use autarky::runtime::RunOptions;
use autarky::{Error, Graph, Runtime, TaskId, TaskKind};
use common::*;

/// A GPU runtime whose device waits give up after 300 ms.
fn quick() -> autarky::Builder {
    Runtime::builder().gpu().timeout(Duration::from_millis(300))
}

fn main() -> std::process::ExitCode {
    #[allow(unused_mut)]
    let mut trials = vec![
        gpu_trial_with(
            "failing_task_ends_the_run_with_task_failed",
            quick(),
            failing_task_ends_the_run_with_task_failed,
        ),
        gpu_trial_with(
            "a_failing_link_of_a_one_shot_chain_ends_the_run_naming_it",
            quick(),
            a_failing_link_of_a_one_shot_chain_ends_the_run_naming_it,
        ),
        gpu_trial_with(
            "a_failing_task_of_a_round_stops_the_tasks_of_its_round_that_wait_for_it",
            quick(),
            a_failing_task_of_a_round_stops_the_tasks_of_its_round_that_wait_for_it,
        ),
        gpu_trial_with(
            "non_finite_output_is_reported_for_checked_kinds",
            quick(),
            non_finite_output_is_reported_for_checked_kinds,
        ),
        gpu_trial_with(
            "task_waiting_on_a_word_nobody_writes_times_out",
            quick(),
            task_waiting_on_a_word_nobody_writes_times_out,
        ),
        gpu_trial(
            "host_watchdog_aborts_a_run_without_progress",
            host_watchdog_aborts_a_run_without_progress,
        ),
        gpu_trial_with(
            "bad_inputs_are_rejected_before_launch",
            quick(),
            bad_inputs_are_rejected_before_launch,
        ),
    ];
    #[cfg(feature = "fault-injection")]
    trials.extend([
        gpu_trial_with(
            "held_dependency_times_out_and_the_report_names_it",
            quick(),
            held_dependency_times_out_and_the_report_names_it,
        ),
        gpu_trial_with(
            "held_link_of_a_one_shot_chain_times_out_naming_it",
            quick(),
            held_link_of_a_one_shot_chain_times_out_naming_it,
        ),
        gpu_trial_with(
            "held_pinned_and_comm_tasks_time_out_naming_the_held_task",
            quick(),
            held_pinned_and_comm_tasks_time_out_naming_the_held_task,
        ),
        gpu_trial_with(
            "unknown_task_kind_in_the_tables_is_reported",
            quick(),
            unknown_task_kind_in_the_tables_is_reported,
        ),
        gpu_trial_with(
            "unknown_kind_of_a_solo_or_round_list_is_reported",
            quick(),
            unknown_kind_of_a_solo_or_round_list_is_reported,
        ),
        gpu_trial_with(
            "abi_version_mismatch_is_refused_by_the_kernel",
            quick(),
            abi_version_mismatch_is_refused_by_the_kernel,
        ),
    ]);
    run_trials(trials)
}

const EMPTY: &str = "__device__ void empty(autarky::TaskCtx&) {}";

/// A chain a → b → c of empty tasks, with names, plus 50 independent tasks.
fn chain(g: &mut Graph, kind: autarky::KindId) -> Vec<TaskId> {
    let t: Vec<TaskId> = (0..3).map(|_| g.add_task_bytes(kind, &[])).collect();
    g.set_name(t[0], "a")
        .set_name(t[1], "b")
        .set_name(t[2], "c");
    g.add_edge(t[0], t[1]).add_edge(t[1], t[2]);
    for _ in 0..50 {
        g.add_task_bytes(kind, &[]);
    }
    t
}

fn failing_task_ends_the_run_with_task_failed(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new(
        "flaky",
        "__device__ void flaky(autarky::TaskCtx& ctx) { if (ctx.task == 1 && ctx.iteration == 7) ctx.fail(42); }",
    )).unwrap();
    let t = chain(&mut g, k);
    let _ = t;
    let started = Instant::now();
    let f = rt
        .launch(&g, RunOptions::iterations(1000))
        .unwrap()
        .wait_detailed()
        .unwrap();
    match f.result {
        Err(Error::TaskFailed {
            task,
            iteration,
            code,
            pe,
        }) => {
            assert_eq!((task.as_str(), iteration, code, pe), ("#1 (b)", 7, 42, 0));
        }
        other => panic!("expected TaskFailed, got {other:?}"),
    }
    let prop = f.abort_propagation_ns.expect("abort propagation measured");
    eprintln!(
        "abort propagation (first error → last block out): {:.1} µs; host saw the end after {:?}",
        prop as f64 / 1e3,
        started.elapsed()
    );
    assert!(prop < 10_000_000, "abort took {prop} ns to propagate");
}

/// A chain of one-instance tasks runs in the scheduler's chain loop (a
/// block runs its links back to back, 32 descriptors loaded at once): a
/// link that fails there ends the run with its own name and instance.
fn a_failing_link_of_a_one_shot_chain_ends_the_run_naming_it(rt: Runtime) {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "flaky",
            "__device__ void flaky(autarky::TaskCtx& ctx) { if (ctx.task == 150) ctx.fail(42); }",
        ))
        .unwrap();
    let t: Vec<TaskId> = (0..300).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    g.set_name(t[150], "link");
    let f = rt
        .launch(&g, RunOptions::iterations(1))
        .unwrap()
        .wait_detailed()
        .unwrap();
    match f.result {
        Err(Error::TaskFailed {
            task,
            iteration,
            code,
            pe,
        }) => assert_eq!(
            (task.as_str(), iteration, code, pe),
            ("#150 (link)", 0, 42, 0)
        ),
        other => panic!("expected TaskFailed, got {other:?}"),
    }
}

/// Runs `g` for `iterations` with `hold` held (compiled first, so the
/// clock times the run only): it must end in a DeviceTimeout within 5 s,
/// whose report is returned (and printed) with the run's end.
#[cfg(feature = "fault-injection")]
fn held_run(
    rt: &Runtime,
    g: &Graph,
    iterations: u32,
    hold: TaskId,
) -> (String, autarky::runtime::Finished) {
    let opts = RunOptions {
        iterations,
        hold_task: Some(hold),
        ..Default::default()
    };
    rt.kernel_info(g).unwrap();
    let started = Instant::now();
    let f = rt.launch(g, opts).unwrap().wait_detailed().unwrap();
    let msg = match &f.result {
        Err(e @ Error::DeviceTimeout { .. }) => e.to_string(),
        other => panic!("expected DeviceTimeout, got {other:?}"),
    };
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    eprintln!("{msg}");
    (msg, f)
}

/// The hold hook inside a one-shot chain (the chain loop hands a held task
/// back to the main loop, which holds it).
#[cfg(feature = "fault-injection")]
fn held_link_of_a_one_shot_chain_times_out_naming_it(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    let t: Vec<TaskId> = (0..100).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    g.set_name(t[60], "held").set_name(t[61], "after");
    let (msg, _) = held_run(&rt, &g, 1, t[60]);
    assert!(msg.contains("#60 (held)"), "{msg}");
    assert!(
        msg.contains("#61 (after): instance 0 waits for #60 (held)"),
        "{msg}"
    );
}

#[cfg(feature = "fault-injection")]
fn held_dependency_times_out_and_the_report_names_it(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    let t = chain(&mut g, k);
    let (msg, f) = held_run(&rt, &g, 10, t[1]);
    assert!(msg.contains("#1 (b)"), "{msg}");
    assert!(msg.contains("#2 (c): instance 0 waits for #1 (b)"), "{msg}");
    eprintln!(
        "abort propagation: {:.1} µs",
        f.abort_propagation_ns.unwrap() as f64 / 1e3
    );
}

/// The hold hook on the pinned compute and comm paths (before, only the
/// dynamic path held: a held pinned task just ran, found by a
/// multi-process test on the H200). Each case: a → b → c with `b` pinned
/// (compute slot 0, or a comm task on comm slot 0), `b` held.
#[cfg(feature = "fault-injection")]
fn held_pinned_and_comm_tasks_time_out_naming_the_held_task(rt: Runtime) {
    for comm in [false, true] {
        let mut g = Graph::new();
        let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
        let kc = g
            .add_kind(
                TaskKind::new(
                    "empty_comm",
                    "__device__ void empty_comm(autarky::TaskCtx&) {}",
                )
                .comm(),
            )
            .unwrap();
        let t = chain(&mut g, k);
        let b = if comm {
            let b = g.add_task_bytes(kc, &[]);
            g.set_name(b, "pb");
            g.add_edge(t[2], b);
            b
        } else {
            g.pin(t[1], 0);
            t[1]
        };
        let opts = RunOptions {
            iterations: 10,
            hold_task: Some(b),
            ..Default::default()
        };
        let started = Instant::now();
        let f = rt.launch(&g, opts).unwrap().wait_detailed().unwrap();
        let msg = match f.result {
            Err(e @ Error::DeviceTimeout { .. }) => e.to_string(),
            other => panic!("comm={comm}: expected DeviceTimeout, got {other:?}"),
        };
        let name = if comm { "(pb)" } else { "(b)" };
        assert!(msg.contains(name), "comm={comm}: {msg}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "comm={comm}: took {:?}",
            started.elapsed()
        );
        eprintln!("comm={comm}: {msg}");
    }
}

fn non_finite_output_is_reported_for_checked_kinds(rt: Runtime) {
    let buf = zeroed(&rt, 256);
    let mut g = Graph::new();
    let k = g
        .add_kind(
            TaskKind::new(
                "nan_writer",
                r#"__device__ void nan_writer(autarky::TaskCtx& ctx) {
                 float* d = ctx.args<float*>();
                 for (unsigned i = threadIdx.x; i < 512; i += blockDim.x)
                     d[i] = (ctx.iteration == 3 && i == 77) ? __int_as_float(0x7fc00000) : 1.0f;
                 __syncthreads();
                 autarky::check_finite(ctx, d, 512);
               }"#,
            )
            .arg_size_bytes(8),
        )
        .unwrap();
    g.add_task(k, &buf.addr());
    match rt.run(&g, 10) {
        Err(Error::NonFinite {
            task,
            iteration,
            index,
            ..
        }) => assert_eq!((task.as_str(), iteration, index), ("#0", 3, 77)),
        other => panic!("expected NonFinite, got {other:?}"),
    }
}

#[cfg(feature = "fault-injection")]
fn unknown_task_kind_in_the_tables_is_reported(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    let t = chain(&mut g, k);
    let opts = RunOptions {
        iterations: 3,
        corrupt_kind: Some((t[2], 9)),
        ..Default::default()
    };
    match rt.run_with(&g, opts) {
        Err(Error::UnknownTaskKind { task, kind, .. }) => {
            assert_eq!((task.as_str(), kind), ("#2 (c)", 9))
        }
        other => panic!("expected UnknownTaskKind, got {other:?}"),
    }
}

/// A 4 × 4 grid of tiles of `kind` pinned in 2 × 2 patches (four round
/// lists, asserted), neighbours at distance 1; with `inside`, each patch's
/// second tile also waits for its first in the same iteration.
fn patched_grid(rt: &Runtime, kind: TaskKind, inside: bool, args: &[u8]) -> (Graph, Vec<TaskId>) {
    let side = 4usize;
    let mut g = Graph::new();
    let k = g.add_kind(kind).unwrap();
    let t: Vec<TaskId> = (0..side * side)
        .map(|_| g.add_task_bytes(k, args))
        .collect();
    let (_, compute) = rt.blocks_per_pe_of(&g).unwrap();
    assert!(compute >= 4, "{compute} compute blocks");
    shapes::grid_in_patches(side, inside).apply(&mut g, &t);
    let lowered = g.lower(&Default::default()).unwrap();
    let lists: Vec<&[u32]> = (0..lowered.pin_compute_slots)
        .map(|s| lowered.pinned_compute(s))
        .filter(|l| lowered.is_round_list(l))
        .collect();
    assert_eq!(lists.len(), 4, "round lists");
    assert!(lists
        .iter()
        .all(|l| lowered.round_waits_inside(l) == inside));
    (g, t)
}

/// A task of a round (a 2 × 2 patch run as one) fails at iteration 5: the
/// run ends naming it; the tile of its round that waits for it in that
/// iteration never runs it (the round reads the failure flag before it);
/// nothing of its round runs iteration 6. Both forms of the round: with
/// tasks that wait inside it (the checked loop) and without (the bodies
/// back to back, the flag read once: the other tiles may run iteration 5).
fn a_failing_task_of_a_round_stops_the_tasks_of_its_round_that_wait_for_it(rt: Runtime) {
    const ITERS: u32 = 20;
    let kind = || {
        TaskKind::new(
            "marked",
            r#"__device__ void marked(autarky::TaskCtx& ctx) {
                 unsigned long long* out = ctx.args<unsigned long long*>();
                 if (threadIdx.x == 0) {
                     out[ctx.task * 20 + ctx.iteration] = 1;
                     if (ctx.task == 0 && ctx.iteration == 5) ctx.fail(9);
                 }
               }"#,
        )
        .arg_size_bytes(8)
    };
    for inside in [true, false] {
        let out = zeroed(&rt, 16 * ITERS as usize);
        let (g, _) = patched_grid(&rt, kind(), inside, &out.addr().to_le_bytes());
        match rt.run(&g, ITERS) {
            Err(Error::TaskFailed {
                task,
                iteration,
                code,
                ..
            }) => assert_eq!(
                (task.as_str(), iteration, code),
                ("#0", 5, 9),
                "inside {inside}"
            ),
            other => panic!("inside {inside}: expected TaskFailed, got {other:?}"),
        }
        let ran = out.to_vec().unwrap();
        let at = |task: usize, n: usize| ran[task * ITERS as usize + n] != 0;
        // Task 0's round: tasks 0, 1, 4, 5 (task 1 waits for 0 inside).
        for task in [0, 1, 4, 5] {
            for n in 0..5 {
                assert!(
                    at(task, n),
                    "inside {inside}: task {task} iteration {n} did not run"
                );
            }
            assert!(
                !at(task, 6),
                "inside {inside}: task {task} ran iteration 6 after its round failed"
            );
        }
        assert!(at(0, 5), "task 0 ran iteration 5 (and failed there)");
        if inside {
            assert!(
                !at(1, 5),
                "task 1 ran iteration 5 after task 0, which it waits for, failed"
            );
        }
    }
}

/// A kind id that names no kind, in the tables of a task on the solo path
/// (one pinned task a block) and of a task of a round (a 2 × 2 patch): the
/// block checks its list's kinds when it caches it, and a list with an
/// unknown one leaves those paths (which dispatch unchecked) for the one
/// that reports it.
#[cfg(feature = "fault-injection")]
fn unknown_kind_of_a_solo_or_round_list_is_reported(rt: Runtime) {
    // Solo: a ring of four pinned tiles, one a block.
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    let t: Vec<TaskId> = (0..4).map(|_| g.add_task_bytes(k, &[])).collect();
    for i in 0..4 {
        g.pin(t[i], i as u32);
        g.add_carried_edge(t[i], t[(i + 1) % 4]);
    }
    let lowered = g.lower(&Default::default()).unwrap();
    assert!(lowered.has_solo_list());
    // Round: the patched grid.
    let (patched, pt) = patched_grid(&rt, TaskKind::new("empty", EMPTY), false, &[]);
    for (name, g, bad) in [("solo", &g, t[2]), ("round", &patched, pt[5])] {
        let opts = RunOptions {
            iterations: 3,
            corrupt_kind: Some((bad, 9)),
            ..Default::default()
        };
        match rt.run_with(g, opts) {
            Err(Error::UnknownTaskKind { task, kind, .. }) => {
                assert_eq!(
                    (task.as_str(), kind),
                    (format!("#{}", bad.index()).as_str(), 9),
                    "{name}"
                )
            }
            other => panic!("{name}: expected UnknownTaskKind, got {other:?}"),
        }
    }
}

#[cfg(feature = "fault-injection")]
fn abi_version_mismatch_is_refused_by_the_kernel(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    chain(&mut g, k);
    let opts = RunOptions {
        iterations: 3,
        abi_version_override: Some(autarky::abi::ABI_VERSION + 100),
        ..Default::default()
    };
    match rt.run_with(&g, opts) {
        Err(Error::AbiMismatch { host, kernel }) => {
            assert_eq!(
                (host, kernel),
                (autarky::abi::ABI_VERSION + 100, autarky::abi::ABI_VERSION)
            )
        }
        other => panic!("expected AbiMismatch, got {other:?}"),
    }
}

fn task_waiting_on_a_word_nobody_writes_times_out(rt: Runtime) {
    let word = zeroed(&rt, 1);
    let mut g = Graph::new();
    let k = g
        .add_kind(
            TaskKind::new(
                "waiter",
                r#"__device__ void waiter(autarky::TaskCtx& ctx) {
                 if (threadIdx.x == 0) ctx.wait_geq(ctx.args<const uint32_t*>(), 1, 7);
               }"#,
            )
            .arg_size_bytes(8),
        )
        .unwrap();
    let w = g.add_task(k, &word.addr());
    g.set_name(w, "waiter");
    rt.kernel_info(&g).unwrap(); // compile first: the clock below times the run only
    let started = Instant::now();
    match rt.run(&g, 1) {
        Err(e @ Error::DeviceTimeout { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("user word 7") && msg.contains("#0 (waiter)"),
                "{msg}"
            );
        }
        other => panic!("expected DeviceTimeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Device waits would time out after 10 s; the host watchdog fires first
/// (300 ms without progress) and stops the run through host-mapped memory.
fn host_watchdog_aborts_a_run_without_progress(rt: Runtime) {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "slow",
            r#"__device__ void slow(autarky::TaskCtx& ctx) {
             // Busy for 1.5 s without completing: no progress, but it ends.
             unsigned long long t0 = autarky::globaltimer_ns();
             while (autarky::globaltimer_ns() - t0 < 1500000000ull) {}
           }"#,
        ))
        .unwrap();
    let s = g.add_task_bytes(k, &[]);
    g.set_name(s, "slow");
    let opts = RunOptions {
        iterations: 2,
        watchdog: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    rt.kernel_info(&g).unwrap(); // compile first: the clock below times the run only
    let started = Instant::now();
    match rt.run_with(&g, opts) {
        Err(e @ Error::Aborted { .. }) => eprintln!("{e}"),
        other => panic!("expected Aborted, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
}

fn bad_inputs_are_rejected_before_launch(rt: Runtime) {
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b).add_edge(b, a);
    let e = rt.run(&g, 1).unwrap_err().to_string();
    assert!(
        e.contains("cycle") && e.contains("#0") && e.contains("#1"),
        "{e}"
    );
    let mut g = Graph::new();
    let k = g.add_kind(TaskKind::new("empty", EMPTY)).unwrap();
    g.add_task_bytes(k, &[]);
    let e = rt.run(&g, 0).unwrap_err().to_string();
    assert!(e.contains("iterations"), "{e}");
    let too_many = Runtime::builder()
        .gpu()
        .compute_blocks(1_000_000)
        .build()
        .unwrap();
    match too_many.run(&g, 1) {
        Err(Error::NotCoResident { wanted, fits, .. }) => assert!(wanted > fits),
        other => panic!("expected NotCoResident, got {other:?}"),
    }
}
