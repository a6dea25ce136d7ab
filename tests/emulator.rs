//! End-to-end tests of the CPU emulator backend: the device scheduling
//! protocol run by threads over the lowered tables.

// Instances are named by (task, iteration) indices; indexing reads clearer
// than zipped iterators here.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use autarky::emulator::{self, EmulatorConfig};
use autarky::{Error, Graph, TaskId, TaskKind};

#[path = "common/shapes.rs"]
mod shapes;

fn cfg(threads: usize) -> EmulatorConfig {
    EmulatorConfig {
        compute_threads: threads,
        ..EmulatorConfig::default()
    }
}

/// `(task, iteration, start seq, end seq)` of one instance.
type Event = (u32, u32, u64, u64);

/// A log of events shared by the bodies.
#[derive(Clone, Default)]
struct Log {
    clock: Arc<AtomicU64>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Log {
    fn kind(&self) -> TaskKind {
        let log = self.clone();
        TaskKind::new("logged", "").with_cpu(move |ctx| {
            let start = log.clock.fetch_add(1, Ordering::SeqCst);
            let end = log.clock.fetch_add(1, Ordering::SeqCst);
            log.events
                .lock()
                .unwrap()
                .push((ctx.task, ctx.iteration, start, end));
            Ok(())
        })
    }
    /// `(start, end)` of every instance, indexed `[task][iteration]`;
    /// panics when an instance ran twice.
    fn spans(&self, tasks: usize, iterations: u32) -> Vec<Vec<(u64, u64)>> {
        let mut spans = vec![vec![None; iterations as usize]; tasks];
        for &(t, i, s, e) in self.events.lock().unwrap().iter() {
            let slot = &mut spans[t as usize][i as usize];
            assert!(slot.is_none(), "instance {i} of task {t} ran twice");
            *slot = Some((s, e));
        }
        spans
            .into_iter()
            .enumerate()
            .map(|(t, v)| {
                v.into_iter()
                    .enumerate()
                    .map(|(i, x)| x.unwrap_or_else(|| panic!("instance {i} of task {t} never ran")))
                    .collect()
            })
            .collect()
    }
}

#[test]
fn diamond_runs_each_instance_once_in_dependency_order() {
    // a → {b, c} → d, for 50 iterations.
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind()).unwrap();
    let [a, b, c, d] = [0; 4].map(|_| g.add_task_bytes(k, &[]));
    g.add_edge(a, b)
        .add_edge(a, c)
        .add_edge(b, d)
        .add_edge(c, d);
    let report = emulator::run(&g, 50, &cfg(4)).unwrap();
    assert_eq!(report.backend, "emulator");
    assert_eq!(report.instances, 200);
    assert_eq!(report.per_block.len(), 5, "1 comm block + 4 compute blocks");
    assert_eq!(report.per_block[0], 0, "comm blocks run no tasks");
    let spans = log.spans(4, 50);
    for i in 0..50 {
        let [sa, sb, sc, sd] = [a, b, c, d].map(|t| spans[t.index()][i]);
        assert!(
            sa.1 < sb.0 && sa.1 < sc.0,
            "iteration {i}: b and c start after a ends"
        );
        assert!(
            sb.1 < sd.0 && sc.1 < sd.0,
            "iteration {i}: d starts after b and c end"
        );
        if i > 0 {
            for t in [a, b, c, d] {
                assert!(spans[t.index()][i - 1].1 < spans[t.index()][i].0);
            }
        }
    }
}

#[test]
fn one_task_fans_out_to_a_thousand_and_each_runs_after_it() {
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind()).unwrap();
    let src = g.add_task_bytes(k, &[]);
    for _ in 0..1000 {
        let t = g.add_task_bytes(k, &[]);
        g.add_edge(src, t);
    }
    let report = emulator::run(&g, 2, &cfg(3)).unwrap();
    assert_eq!(report.instances, 2002);
    let spans = log.spans(1001, 2);
    for t in 1..1001 {
        for i in 0..2 {
            assert!(
                spans[0][i].1 < spans[t][i].0,
                "task {t} iteration {i} started before the source ended"
            );
        }
    }
}

#[test]
fn a_thousand_tasks_fan_in_to_one_that_runs_after_all_of_them() {
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind()).unwrap();
    let srcs: Vec<TaskId> = (0..1000).map(|_| g.add_task_bytes(k, &[])).collect();
    let sink = g.add_task_bytes(k, &[]);
    for &s in &srcs {
        g.add_edge(s, sink);
    }
    let report = emulator::run(&g, 2, &cfg(3)).unwrap();
    assert_eq!(report.instances, 2002);
    let spans = log.spans(1001, 2);
    for i in 0..2 {
        let last_src_end = (0..1000).map(|t| spans[t][i].1).max().unwrap();
        assert!(
            last_src_end < spans[1000][i].0,
            "the sink started before every source ended"
        );
    }
}

#[test]
fn a_chain_of_ten_thousand_tasks_runs_in_order() {
    let n = 10_000usize;
    let next = Arc::new(AtomicU64::new(0));
    let seen = next.clone();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("link", "").with_cpu(move |ctx| {
            // Every link must see exactly its predecessors' count of increments.
            let before = seen.fetch_add(1, Ordering::SeqCst);
            if before == ctx.task as u64 {
                Ok(())
            } else {
                Err(1)
            }
        }))
        .unwrap();
    let ids: Vec<TaskId> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in ids.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    let report = emulator::run(&g, 1, &cfg(2)).unwrap();
    assert_eq!(report.instances, n as u64);
    assert_eq!(next.load(Ordering::SeqCst), n as u64);
}

#[test]
fn successor_reads_the_data_its_predecessor_wrote_in_the_same_iteration() {
    // producer writes f(i) into 64 cells; consumer checks them and writes
    // its own cells; a carried edge consumer → producer keeps the producer
    // from overwriting cells the consumer of the previous iteration reads.
    const N: usize = 64;
    let data: Arc<Vec<AtomicU64>> =
        Arc::new((0..2 * N).map(|_| AtomicU64::new(u64::MAX)).collect());
    let mut g = Graph::new();
    let d = data.clone();
    let produce = g
        .add_kind(TaskKind::new("produce", "").with_cpu(move |ctx| {
            for j in 0..N {
                d[j].store(ctx.iteration as u64 * 1000 + j as u64, Ordering::Relaxed);
            }
            Ok(())
        }))
        .unwrap();
    let d = data.clone();
    let consume = g
        .add_kind(TaskKind::new("consume", "").with_cpu(move |ctx| {
            for j in 0..N {
                let want = ctx.iteration as u64 * 1000 + j as u64;
                if d[j].load(Ordering::Relaxed) != want {
                    return Err(j as u32 + 1);
                }
                d[N + j].store(want + 1, Ordering::Relaxed);
            }
            Ok(())
        }))
        .unwrap();
    let p = g.add_task_bytes(produce, &[]);
    let c = g.add_task_bytes(consume, &[]);
    g.add_edge(p, c).add_carried_edge(c, p);
    let report = emulator::run(&g, 200, &cfg(4)).unwrap();
    assert_eq!(report.instances, 400);
    assert_eq!(data[N + 5].load(Ordering::Relaxed), 199 * 1000 + 5 + 1);
}

#[test]
fn failing_body_ends_the_run_with_task_failed_naming_task_and_iteration() {
    let mut g = Graph::new();
    let ok = g
        .add_kind(TaskKind::new("ok", "").with_cpu(|_| Ok(())))
        .unwrap();
    let bad = g
        .add_kind(TaskKind::new("bad", "").with_cpu(|ctx| {
            if ctx.iteration == 3 {
                Err(42)
            } else {
                Ok(())
            }
        }))
        .unwrap();
    let a = g.add_task_bytes(ok, &[]);
    let b = g.add_task_bytes(bad, &[]);
    g.set_name(b, "breaker");
    g.add_edge(a, b);
    let err = emulator::run(&g, 10, &cfg(2)).unwrap_err();
    match &err {
        Error::TaskFailed {
            task,
            iteration,
            code,
            ..
        } => {
            assert_eq!(task, "#1 (breaker)");
            assert_eq!(*iteration, 3);
            assert_eq!(*code, 42);
        }
        other => panic!("expected TaskFailed, got {other:?}"),
    }
    assert!(err.to_string().contains("breaker"), "{err}");
}

#[test]
fn held_task_ends_the_run_with_a_timeout_that_names_it() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let held = g.add_task_bytes(k, &[]);
    let c = g.add_task_bytes(k, &[]);
    g.set_name(held, "stuck_one");
    g.add_edge(a, held).add_edge(held, c);
    let config = EmulatorConfig {
        compute_threads: 2,
        timeout: Duration::from_millis(200),
        hold_task: Some(held.index() as u32),
        ..EmulatorConfig::default()
    };
    let t0 = std::time::Instant::now();
    let err = emulator::run(&g, 5, &config).unwrap_err();
    let elapsed = t0.elapsed();
    assert!(
        matches!(err, Error::DeviceTimeout { .. }),
        "expected a timeout, got {err:?}"
    );
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(
        msg.contains("#1 (stuck_one)"),
        "the report must name the held task: {msg}"
    );
    assert!(
        msg.contains("#2"),
        "the report must list the task waiting behind it: {msg}"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "the timeout took {elapsed:?}"
    );
}

#[test]
fn kind_without_cpu_body_is_refused_before_running() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "gpu_only",
            "__device__ void gpu_only(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    g.add_task_bytes(k, &[]);
    match emulator::run(&g, 1, &EmulatorConfig::default()) {
        Err(Error::NoCpuBody { kind }) => assert_eq!(kind, "gpu_only"),
        other => panic!("expected NoCpuBody, got {other:?}"),
    }
}

#[test]
fn zero_iterations_and_zero_compute_threads_are_invalid_config() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    g.add_task_bytes(k, &[]);
    assert!(matches!(
        emulator::run(&g, 0, &cfg(2)),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        emulator::run(&g, 1, &cfg(0)),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn single_worker_without_comm_blocks_completes_loop_carried_graph() {
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind()).unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b).add_carried_edge(b, a);
    let config = EmulatorConfig {
        compute_threads: 1,
        comm_threads: 0,
        ..EmulatorConfig::default()
    };
    let report = emulator::run(&g, 100, &config).unwrap();
    assert_eq!(report.per_block, vec![200]);
    let spans = log.spans(2, 100);
    for i in 1..100 {
        assert!(
            spans[1][i - 1].1 < spans[0][i].0,
            "a[{i}] must wait for b[{}]",
            i - 1
        );
    }
}

/// `CpuCtx::wait_geq` (the emulator's `ctx.wait_geq`): a body waits on a
/// word written by an independent task, outside the graph's edges, and
/// sees what the writer wrote before its release.
#[test]
fn a_body_waits_on_a_word_another_task_releases() {
    use std::sync::atomic::AtomicU32;
    let word = Arc::new(AtomicU32::new(0));
    let data = Arc::new(AtomicU64::new(0));
    let mut g = Graph::new();
    let (w, d) = (word.clone(), data.clone());
    let writer = g
        .add_kind(TaskKind::new("writer", "").with_cpu(move |ctx| {
            std::thread::sleep(Duration::from_millis(2));
            d.store(1000 + ctx.iteration as u64, Ordering::Relaxed);
            w.store(ctx.iteration + 1, Ordering::Release);
            Ok(())
        }))
        .unwrap();
    let (w, d) = (word.clone(), data.clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let waiter = g
        .add_kind(TaskKind::new("waiter", "").with_cpu(move |ctx| {
            ctx.wait_geq(&w, ctx.iteration + 1, 7)?;
            s.lock().unwrap().push(d.load(Ordering::Relaxed));
            Ok(())
        }))
        .unwrap();
    let a = g.add_task_bytes(writer, &[]);
    let b = g.add_task_bytes(waiter, &[]);
    // Each runs its instances in order; no edge between them.
    g.add_carried_edge(a, a).add_carried_edge(b, b);
    emulator::run(&g, 5, &cfg(2)).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 5);
    for (i, &v) in seen.iter().enumerate() {
        // The writer may be ahead, never behind what the waiter asked for.
        assert!(v >= 1000 + i as u64, "instance {i} saw {v}");
    }
}

/// A body whose word never arrives: the run ends in a timeout naming the
/// word and the waiting task, and the body got `WAIT_ABANDONED`.
#[test]
fn a_body_wait_that_never_ends_times_out_naming_the_word() {
    use autarky::CpuCtx;
    use std::sync::atomic::AtomicU32;
    let word = Arc::new(AtomicU32::new(0));
    let got = Arc::new(Mutex::new(None));
    let mut g = Graph::new();
    let (w, gg) = (word.clone(), got.clone());
    let k = g
        .add_kind(TaskKind::new("waiter", "").with_cpu(move |ctx| {
            let r = ctx.wait_geq(&w, 1, 7);
            *gg.lock().unwrap() = Some(r);
            r
        }))
        .unwrap();
    let t = g.add_task_bytes(k, &[]);
    g.set_name(t, "waiter");
    let config = EmulatorConfig {
        compute_threads: 1,
        timeout: Duration::from_millis(200),
        ..EmulatorConfig::default()
    };
    let t0 = std::time::Instant::now();
    let err = emulator::run(&g, 1, &config).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::DeviceTimeout { .. }), "{err:?}");
    assert!(
        msg.contains("user word 7") && msg.contains("#0 (waiter)"),
        "{msg}"
    );
    assert_eq!(*got.lock().unwrap(), Some(Err(CpuCtx::WAIT_ABANDONED)));
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// The random graphs of pinned and dynamic tasks the GPU tests and soak run
/// (shapes::random_pinned_shape, and one in three shapes::
/// random_patched_shape) are valid, finish, and run every instance once
/// after its predecessors here too: the shapes are not the bug when one
/// fails on the GPU.
#[test]
fn random_graphs_of_pinned_and_dynamic_tasks_keep_every_order() {
    let mut rng = shapes::Rng(0x50105010);
    for round in 0..30 {
        let n = 10 + rng.below(60) as usize;
        let iters = 1 + rng.below(8) as u32;
        let mut r = shapes::Rng(rng.below(u64::MAX));
        // One in three: patches of tiles run as rounds.
        let shape = if round % 3 == 2 {
            shapes::random_patched_shape(|m| r.below(m), 2 + n / 8, 4)
        } else {
            shapes::random_pinned_shape(|m| r.below(m), n, 4, round % 2 == 1)
        };
        let n = shape.pins.len();
        let log = Log::default();
        let mut g = Graph::new();
        let k = g.add_kind(log.kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
        shape.apply(&mut g, &t);
        let report = emulator::run(&g, iters, &cfg(6)).unwrap();
        assert_eq!(report.instances, n as u64 * iters as u64, "round {round}");
        let spans = log.spans(n, iters);
        for task in 0..n {
            for i in 1..iters as usize {
                assert!(
                    spans[task][i - 1].1 < spans[task][i].0,
                    "round {round}: task {task} in order"
                );
            }
        }
        for &(p, s, d) in &shape.edges {
            for i in d as usize..iters as usize {
                assert!(
                    spans[p][i - d as usize].1 < spans[s][i].0,
                    "round {round}: task {s} iteration {i} after task {p} iteration {}",
                    i - d as usize
                );
            }
        }
    }
}

/// Patches of four tiles on four workers — a 4 × 4 stencil with carried
/// edges, each patch's first tile before its second and fourth in the same
/// iteration (the round path: one wait for the patch's outside
/// predecessors, the bodies in order, one release), and the same with each
/// patch's first tile also waiting for a tile of the patch before it in
/// the same iteration (those patches are not round lists): every instance
/// once, after its predecessors and its own previous instance.
#[test]
fn patches_of_tiles_run_in_rounds_and_keep_every_order() {
    for outside in [false, true] {
        let (side, iters) = (4usize, 12u32);
        let n = side * side;
        let log = Log::default();
        let mut g = Graph::new();
        let k = g.add_kind(log.kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
        let mut edges = Vec::new();
        for (pr, pc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let patch =
                [(0, 0), (0, 1), (1, 0), (1, 1)].map(|(dr, dc)| (pr * 2 + dr) * side + pc * 2 + dc);
            for &i in &patch {
                g.pin(t[i], (pr * 2 + pc) as u32);
            }
            edges.push((patch[0], patch[1], 0));
            edges.push((patch[0], patch[3], 0));
            if outside && pc > 0 {
                edges.push((patch[0] - 1, patch[0], 0));
            }
        }
        for i in 0..n {
            let (r, c) = (i / side, i % side);
            if r + 1 < side {
                edges.push((i, i + side, 1));
                edges.push((i + side, i, 1));
            }
            if c + 1 < side {
                edges.push((i, i + 1, 1));
                edges.push((i + 1, i, 1));
            }
        }
        for &(p, s, d) in &edges {
            g.add_edge_with_distance(t[p], t[s], d);
        }
        let lowered = g.lower(&Default::default()).unwrap();
        let rounds = (0..lowered.pin_compute_slots)
            .filter(|&s| lowered.is_round_list(lowered.pinned_compute(s)))
            .count();
        assert_eq!(rounds, if outside { 2 } else { 4 }, "outside {outside}");
        let report = emulator::run(&g, iters, &cfg(6)).unwrap();
        assert_eq!(report.instances, n as u64 * iters as u64);
        let spans = log.spans(n, iters);
        for task in 0..n {
            for i in 1..iters as usize {
                assert!(
                    spans[task][i - 1].1 < spans[task][i].0,
                    "task {task} in order"
                );
            }
        }
        for &(p, s, d) in &edges {
            for i in d as usize..iters as usize {
                assert!(
                    spans[p][i - d as usize].1 < spans[s][i].0,
                    "outside {outside}: task {s} iteration {i} after task {p} iteration {}",
                    i - d as usize
                );
            }
        }
    }
}

/// shapes::random_patched_shape makes what the GPU trial and the soak rely
/// on it for: round lists (LoweredGraph::is_round_list), some of whose
/// tasks wait for an earlier one of their round in the same iteration
/// (the round's checked loop) — in about half the graphs, so the kernels
/// of the other half keep the plain loop — and pinned lists beside them
/// that are not rounds.
#[test]
fn random_patched_shapes_make_rounds_of_both_loops_and_lists_that_are_not() {
    let mut rng = shapes::Rng(0x9a7c4e5);
    let (mut lists, mut rounds, mut inside, mut checked) = (0, 0, 0, 0);
    for _ in 0..50 {
        let patches = 2 + rng.below(40) as usize;
        let shape = shapes::random_patched_shape(|m| rng.below(m), patches, 64);
        let mut g = Graph::new();
        let k = g.add_kind(TaskKind::new("empty", "")).unwrap();
        let t: Vec<TaskId> = (0..shape.pins.len())
            .map(|_| g.add_task_bytes(k, &[]))
            .collect();
        shape.apply(&mut g, &t);
        let l = g.lower(&Default::default()).unwrap();
        for s in 0..l.pin_compute_slots {
            let list = l.pinned_compute(s);
            lists += 1;
            if l.is_round_list(list) {
                rounds += 1;
                inside += l.round_waits_inside(list) as u32;
            }
        }
        checked += l.has_round_waiting_inside() as u32;
    }
    eprintln!(
        "{lists} pinned lists: {rounds} rounds, {inside} of them waiting inside; \
         {checked} of 50 graphs with the checked loop"
    );
    assert!(rounds * 10 >= lists * 6, "most lists are rounds");
    assert!(rounds < lists, "some lists are not rounds");
    assert!(
        inside * 20 >= rounds && inside * 4 <= rounds,
        "both round loops, the plain one mostly"
    );
    assert!(
        (10..=40).contains(&checked),
        "kernels with and without the checked loop"
    );
}

/// A task of a round fails at iteration 5, as on the device
/// (gpu_faults: a_failing_task_of_a_round_stops_the_tasks_of_its_round_
/// that_wait_for_it): the run ends naming it; the round stops before the
/// first task that waits inside it for an earlier one in that iteration
/// (the device reads its failure flag there), and a round with no such
/// task runs all its bodies (the device's runs them back to back and reads
/// the flag after the last); nothing of the round runs iteration 6.
#[test]
fn a_failing_task_of_a_round_stops_only_what_waits_for_it_in_its_round() {
    for inside in [true, false] {
        let side = 4usize;
        let ran = Arc::new(Mutex::new(std::collections::HashSet::new()));
        let seen = ran.clone();
        let mut g = Graph::new();
        let k = g
            .add_kind(TaskKind::new("marked", "").with_cpu(move |ctx| {
                seen.lock().unwrap().insert((ctx.task, ctx.iteration));
                if ctx.task == 0 && ctx.iteration == 5 {
                    Err(9)
                } else {
                    Ok(())
                }
            }))
            .unwrap();
        let t: Vec<TaskId> = (0..side * side).map(|_| g.add_task_bytes(k, &[])).collect();
        shapes::grid_in_patches(side, inside).apply(&mut g, &t);
        let lowered = g.lower(&Default::default()).unwrap();
        let round = lowered.pinned_compute(0);
        assert!(lowered.is_round_list(round));
        assert_eq!(lowered.round_waits_inside(round), inside);
        match emulator::run(&g, 20, &cfg(6)) {
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
        let ran = ran.lock().unwrap();
        for task in [0u32, 1, 4, 5] {
            for n in 0..5 {
                assert!(
                    ran.contains(&(task, n)),
                    "inside {inside}: task {task} iteration {n}"
                );
            }
            assert!(
                !ran.contains(&(task, 6)),
                "inside {inside}: task {task} ran iteration 6"
            );
            // With a task that waits inside, the round stops before it
            // (and what follows it in the list); without, all run.
            let at_5 = task == 0 || !inside;
            assert_eq!(
                ran.contains(&(task, 5)),
                at_5,
                "inside {inside}: task {task} iteration 5"
            );
        }
    }
}
