//! Tracing on the CPU emulator (`RunOptions::trace` / `EmulatorConfig::trace`):
//! the emulated blocks record the device's events, in the same format, on a
//! host clock. No GPU needed.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use autarky::emulator::{self, EmulatorConfig};
use autarky::runtime::RunOptions;
use autarky::trace::{split_wait_word, EventKind, Role, Trace};
use autarky::{Error, Graph, RunReport, Runtime, TaskId, TaskKind, TraceOptions};
use serde_json::Value;

fn traced(comm: usize, compute: usize, records_per_block: u32) -> EmulatorConfig {
    EmulatorConfig {
        comm_threads: comm,
        compute_threads: compute,
        trace: Some(TraceOptions::records_per_block(records_per_block)),
        ..EmulatorConfig::default()
    }
}

/// A kind whose CPU body spins a little (so instances overlap and waits
/// happen) and counts its executions.
fn busy_kind(name: &str, runs: Arc<AtomicU64>) -> TaskKind {
    TaskKind::new(name, "").with_cpu(move |ctx| {
        let mut x = ctx.iteration as u64;
        for i in 0..2000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        runs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
}

fn edges(g: &Graph) -> Vec<(u32, u32, u32)> {
    g.edges()
        .iter()
        .map(|e| (e.from.index() as u32, e.to.index() as u32, e.distance))
        .collect()
}

/// Events of every (PE, block), in the order the block recorded them,
/// never go back in time.
fn assert_monotonic_per_block(t: &Trace) {
    let mut last: HashMap<(u32, u32), u64> = HashMap::new();
    for e in &t.events {
        let prev = last.insert((e.pe, e.block), e.t_ns).unwrap_or(0);
        assert!(e.t_ns >= prev, "{e:?} after an event at {prev}");
    }
}

/// Exactly one TaskStart and one TaskEnd per instance `(task, iteration)`
/// of `tasks × iterations`.
fn assert_one_start_and_end_per_instance(t: &Trace, tasks: &[u32], iterations: u32) {
    let mut starts: HashMap<(u32, u32), u32> = HashMap::new();
    let mut ends: HashMap<(u32, u32), u32> = HashMap::new();
    for e in &t.events {
        let m = match e.kind {
            EventKind::TaskStart => &mut starts,
            EventKind::TaskEnd => &mut ends,
            _ => continue,
        };
        *m.entry((e.task, e.iteration)).or_default() += 1;
    }
    let want: HashSet<(u32, u32)> = tasks
        .iter()
        .flat_map(|&t| (0..iterations).map(move |i| (t, i)))
        .collect();
    for (name, m) in [("TaskStart", &starts), ("TaskEnd", &ends)] {
        assert_eq!(
            m.keys().copied().collect::<HashSet<_>>(),
            want,
            "{name}: the set of instances"
        );
        assert!(m.values().all(|&n| n == 1), "{name} recorded twice: {m:?}");
    }
}

/// The Chrome JSON checks of `trace::chrome`'s tests: required fields,
/// durations ≥ 0, timestamps that only increase along every track, and
/// complete events that nest or follow each other.
fn assert_chrome_format(v: &Value) {
    let evs = v["traceEvents"].as_array().expect("traceEvents array");
    let mut last: HashMap<(u64, u64), f64> = HashMap::new();
    let mut open: HashMap<(u64, u64), Vec<f64>> = HashMap::new();
    for e in evs {
        for f in ["name", "ph", "ts", "pid", "tid"] {
            assert!(e.get(f).is_some(), "event without {f}: {e}");
        }
        if e["ph"] == "M" {
            continue;
        }
        let k = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let ts = e["ts"].as_f64().unwrap();
        assert!(
            ts >= *last.get(&k).unwrap_or(&0.0),
            "ts went back on {k:?}: {e}"
        );
        last.insert(k, ts);
        if e["ph"] == "X" {
            let dur = e["dur"].as_f64().unwrap();
            assert!(dur >= 0.0, "{e}");
            let stack = open.entry(k).or_default();
            while stack.last().is_some_and(|&end| end <= ts) {
                stack.pop();
            }
            let end = ts + dur;
            if let Some(&outer) = stack.last() {
                assert!(end <= outer, "slice {e} overlaps its enclosing slice");
            }
            stack.push(end);
        }
    }
}

#[test]
fn a_traced_run_records_one_start_and_end_per_instance_and_adds_up() {
    let iters = 30;
    let runs = Arc::new(AtomicU64::new(0));
    let mut g = Graph::new();
    let k = g.add_kind(busy_kind("busy", runs.clone())).unwrap();
    let t: Vec<TaskId> = (0..4).map(|_| g.add_task_bytes(k, &[])).collect();
    g.add_edge(t[0], t[1])
        .add_edge(t[0], t[2])
        .add_edge(t[1], t[3])
        .add_edge(t[2], t[3]);
    g.add_carried_edge(t[3], t[0]);
    let r = emulator::run(&g, iters, &traced(1, 3, 1 << 12)).unwrap();
    assert_eq!(r.instances, 4 * iters as u64);
    assert_eq!(runs.load(Ordering::Relaxed), 4 * iters as u64);
    let trace = r.trace.as_ref().expect("a traced run returns its trace");
    assert_eq!(trace.dropped, 0, "rings of 4096 hold this run");
    assert_eq!(trace.labels.len(), 4, "a label per task");

    let ids: Vec<u32> = t.iter().map(|t| t.index() as u32).collect();
    assert_one_start_and_end_per_instance(trace, &ids, iters);
    assert!(trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TaskStart | EventKind::TaskEnd))
        .all(|e| e.role == Role::Compute && e.block >= 1));
    assert_monotonic_per_block(trace);
    let pairs = trace.pair();
    assert_eq!(pairs.tasks.len(), 4 * iters as usize);
    assert_eq!(pairs.unmatched, 0, "every begin has its end");

    // Dependencies hold on the host clock too.
    let span: HashMap<(u32, u32), (u64, u64)> = pairs
        .tasks
        .iter()
        .map(|s| ((s.task, s.iteration), (s.start_ns, s.end_ns)))
        .collect();
    for (p, s, d) in edges(&g) {
        for i in d..iters {
            assert!(
                span[&(s, i)].0 >= span[&(p, i - d)].1,
                "task {s} iteration {i} started before task {p} iteration {} ended",
                i - d
            );
        }
    }
    // Each block's trace agrees with its own instance counter.
    for (b, &n) in r.per_block.iter().enumerate() {
        let traced = pairs.tasks.iter().filter(|s| s.block == b as u32).count() as u64;
        assert_eq!(traced, n, "block {b}: trace vs completed");
    }
    // Every wait names a word the device would name (kind, index).
    for w in &pairs.waits {
        assert!(split_wait_word(w.arg).is_some(), "{w:?}");
    }
    // The comm worker ran nothing: what it recorded is idle time.
    let comm: Vec<_> = trace.events.iter().filter(|e| e.block == 0).collect();
    assert!(!comm.is_empty(), "the comm worker records its idle time");
    assert!(comm.iter().all(
        |e| matches!(e.kind, EventKind::WaitBegin | EventKind::WaitEnd) && e.role == Role::Comm
    ));

    let s = trace.summary(&edges(&g));
    for b in &s.per_block {
        assert_eq!(b.busy_ns + b.idle_ns, b.wall_ns, "{b:?}");
    }
    assert_eq!(
        s.per_block.iter().map(|b| b.instances).sum::<u64>(),
        4 * iters as u64
    );
    assert!(s.critical_path.is_some());

    let json = trace.to_chrome_json();
    assert_chrome_format(&json);
    let slices = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "task")
        .count();
    assert_eq!(slices, 4 * iters as usize, "one slice per instance");
}

#[test]
fn an_untraced_run_has_no_trace() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    g.add_task_bytes(k, &[]);
    let r = emulator::run(&g, 3, &EmulatorConfig::default()).unwrap();
    assert!(r.trace.is_none());
}

/// `a` on PE 0 → `b` on PE 1, `b → a` carried: every instance crosses PEs
/// twice. `pin_b`: `b` is pinned (its proxy is polled by its pinned
/// worker instead of relayed).
fn two_pe_run(pin_b: bool) -> (Graph, [u32; 2], RunReport) {
    let iters = 20;
    let runs = Arc::new(AtomicU64::new(0));
    let mut g = Graph::new();
    let k = g.add_kind(busy_kind("hop", runs)).unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.set_pe(a, 0).set_pe(b, 1);
    g.add_edge(a, b).add_carried_edge(b, a);
    if pin_b {
        g.pin(b, 0);
    }
    let r = emulator::run_pes(&g, iters, 2, &traced(1, 2, 1 << 12)).unwrap();
    assert_eq!(r.instances, 2 * iters as u64);
    (g, [a.index() as u32, b.index() as u32], r)
}

fn assert_signals_pair_up(r: &RunReport, [ga, gb]: [u32; 2], seen_role: Role) {
    let iters = r.iterations;
    let trace = r.trace.as_ref().expect("a traced run returns its trace");
    assert_eq!(trace.dropped, 0);
    assert_one_start_and_end_per_instance(trace, &[ga, gb], iters);
    assert_monotonic_per_block(trace);
    let sent = |from: u32, task: u32| -> Vec<u32> {
        let mut v: Vec<u32> = trace
            .events
            .iter()
            .filter(|e| {
                e.pe == from
                    && e.task == task
                    && e.kind == EventKind::SignalSent { to_pe: 1 - from }
            })
            .map(|e| e.iteration)
            .collect();
        v.sort_unstable();
        v
    };
    let all: Vec<u32> = (0..iters).collect();
    assert_eq!(sent(0, ga), all, "a signals PE 1 once per instance");
    assert_eq!(sent(1, gb), all, "b signals PE 0 once per instance");
    for e in trace
        .events
        .iter()
        .filter(|e| e.kind == EventKind::TaskStart)
    {
        assert_eq!(e.pe, if e.task == ga { 0 } else { 1 }, "{e:?}");
    }
    // b's proxy on PE 1 is seen by `seen_role` blocks.
    let seen_b: Vec<_> = trace
        .events
        .iter()
        .filter(|e| e.kind == EventKind::SignalSeen && e.pe == 1)
        .collect();
    assert!(!seen_b.is_empty(), "PE 1 saw no proxy advance");
    assert!(
        seen_b.iter().all(|e| e.role == seen_role && e.task == ga),
        "{seen_b:?}"
    );
    let flows = trace.flows();
    assert!(!flows.is_empty(), "no signal paired with its sighting");
    for f in &flows {
        let (s, r) = (&trace.events[f.sent], &trace.events[f.seen]);
        assert!(r.t_ns >= s.t_ns, "seen before sent: {s:?} {r:?}");
        assert_eq!(s.task, r.task, "both ends name the producer");
        assert_eq!(s.arg, r.arg, "both ends name the proxy slot");
        assert_ne!(s.pe, r.pe);
    }
    // Both directions pair at least once.
    let dirs: HashSet<u32> = flows.iter().map(|f| trace.events[f.seen].pe).collect();
    assert_eq!(dirs, HashSet::from([0, 1]));
    assert_chrome_format(&trace.to_chrome_json());
}

#[test]
fn signals_between_two_emulated_pes_pair_sender_and_relay() {
    let (_, ids, r) = two_pe_run(false);
    assert_signals_pair_up(&r, ids, Role::Comm);
}

#[test]
fn a_pinned_consumer_records_the_proxies_its_poll_saw() {
    let (_, ids, r) = two_pe_run(true);
    assert_signals_pair_up(&r, ids, Role::Compute);
}

#[test]
fn a_tiny_ring_keeps_the_newest_records_and_counts_the_rest_as_dropped() {
    let iters = 200;
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    g.add_task_bytes(k, &[]);
    let cap = 4;
    let r = emulator::run(&g, iters, &traced(1, 1, cap)).unwrap();
    let trace = r.trace.expect("a traced run returns its trace");
    let kept: Vec<_> = trace.events.iter().filter(|e| e.block == 1).collect();
    assert_eq!(kept.len(), cap as usize, "the ring is full");
    assert!(
        trace.dropped >= 2 * iters as u64 - cap as u64,
        "{} dropped",
        trace.dropped
    );
    let last_end = kept
        .iter()
        .filter(|e| e.kind == EventKind::TaskEnd)
        .map(|e| e.iteration)
        .max();
    assert_eq!(last_end, Some(iters - 1), "the newest records survive");
    assert!(kept
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TaskStart | EventKind::TaskEnd))
        .all(|e| e.iteration >= iters - cap));
    assert!(trace.summary(&[]).to_string().contains("dropped"));
}

#[test]
fn comm_tasks_are_traced_on_comm_blocks_and_idle_ends_before_them() {
    let iters = 10;
    let mut g = Graph::new();
    let work = g
        .add_kind(TaskKind::new("work", "").with_cpu(|_| Ok(())))
        .unwrap();
    let pulse = g
        .add_kind(TaskKind::new("pulse", "").comm().with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(work, &[]);
    let p = g.add_task_bytes(pulse, &[]);
    let b = g.add_task_bytes(work, &[]);
    g.add_edge(a, p).add_edge(p, b);
    let r = emulator::run(&g, iters, &traced(1, 2, 1 << 10)).unwrap();
    let trace = r.trace.expect("traced");
    assert_one_start_and_end_per_instance(
        &trace,
        &[a.index() as u32, p.index() as u32, b.index() as u32],
        iters,
    );
    let gp = p.index() as u32;
    for e in trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TaskStart | EventKind::TaskEnd))
    {
        let comm = e.task == gp;
        assert_eq!(e.role == Role::Comm, comm, "{e:?}");
    }
    // On the comm block, task instances and idle periods never overlap.
    let pairs = trace.pair();
    assert_eq!(pairs.unmatched, 0);
    let idle: Vec<_> = pairs.waits.iter().filter(|w| w.block == 0).collect();
    for s in pairs.tasks.iter().filter(|s| s.block == 0) {
        for w in &idle {
            assert!(
                w.end_ns <= s.start_ns || w.start_ns >= s.end_ns,
                "idle {w:?} overlaps {s:?}"
            );
        }
    }
    assert_chrome_format(&trace.to_chrome_json());
}

#[test]
fn the_runtime_returns_the_emulators_trace_and_checks_the_ring_size() {
    let rt = Runtime::builder()
        .emulator(2)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b);
    let opts = |n| RunOptions {
        trace: Some(TraceOptions::records_per_block(n)),
        ..RunOptions::iterations(5)
    };
    let r = rt.run_with(&g, opts(64)).unwrap();
    let t = r.trace.expect("RunReport::trace on the emulator");
    assert_eq!(t.pair().tasks.len(), 10);
    assert!(rt.run(&g, 5).unwrap().trace.is_none());
    match rt.run_with(&g, opts(3)) {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("records_per_block"), "{m}"),
        other => panic!("{other:?}"),
    }
}
