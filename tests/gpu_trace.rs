//! GPU tests of device tracing (RunOptions::trace → RunReport::trace) and
//! of the host-mapped progress words (GpuRun::progress_snapshot). Without a
//! GPU each is reported as ignored with the reason; with
//! AUTARKY_REQUIRE_GPU=1 it fails instead (tests/common/mod.rs).

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use autarky::runtime::{PeProgress, Residual, RunOptions};
use autarky::trace::{EventKind, Role, Trace};
use autarky::{Graph, RunReport, Runtime, TaskId, TaskKind, TraceOptions};
use common::*;

fn main() -> std::process::ExitCode {
    run_trials(vec![
        gpu_trial(
            "a_traced_run_records_one_start_and_end_per_instance",
            a_traced_run_records_one_start_and_end_per_instance,
        ),
        gpu_trial_with(
            "a_full_ring_keeps_the_newest_records_and_counts_the_rest_as_dropped",
            Runtime::builder()
                .gpu()
                .compute_blocks(1)
                .timeout(Duration::from_secs(10)),
            a_full_ring_keeps_the_newest_records_and_counts_the_rest_as_dropped,
        ),
        gpu_trial_with(
            "signals_between_virtual_pes_pair_sender_and_receiver",
            Runtime::builder()
                .gpu()
                .pes(2)
                .comm_blocks(2)
                .compute_blocks(8)
                .timeout(Duration::from_secs(10)),
            signals_between_virtual_pes_pair_sender_and_receiver,
        ),
        gpu_trial(
            "progress_words_reach_the_final_count_without_a_cuda_call",
            progress_words_reach_the_final_count_without_a_cuda_call,
        ),
        gpu_trial(
            "an_untraced_run_after_a_traced_one_has_no_trace",
            an_untraced_run_after_a_traced_one_has_no_trace,
        ),
    ])
}

fn traced(iterations: u32, records_per_block: u32) -> RunOptions {
    RunOptions {
        trace: Some(TraceOptions::records_per_block(records_per_block)),
        ..RunOptions::iterations(iterations)
    }
}

/// One launch, then only stream queries (the run stayed CPU-free).
fn assert_cpu_free(r: &RunReport) {
    assert_eq!(
        r.driver_calls.first(),
        Some(&"cuLaunchCooperativeKernel"),
        "{:?}",
        r.driver_calls
    );
    assert!(
        r.driver_calls[1..].iter().all(|c| *c == "cuStreamQuery"),
        "driver calls during a traced run: {:?}",
        r.driver_calls
    );
}

/// Events of every (PE, block) in the order the block recorded them
/// (decode keeps ring order) never go back in time.
fn assert_monotonic_per_block(t: &Trace) {
    let mut last: HashMap<(u32, u32), u64> = HashMap::new();
    for e in &t.events {
        let prev = last.insert((e.pe, e.block), e.t_ns).unwrap_or(0);
        assert!(
            e.t_ns >= prev,
            "PE {} block {}: {:?} at {} after an event at {prev}",
            e.pe,
            e.block,
            e.kind,
            e.t_ns
        );
    }
}

fn a_traced_run_records_one_start_and_end_per_instance(rt: Runtime) {
    let iters = 50;
    let lg = Logged::new(&rt, 4, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..4).map(|_| g.add_task(k, &lg.args())).collect();
    g.add_edge(t[0], t[1])
        .add_edge(t[0], t[2])
        .add_edge(t[1], t[3])
        .add_edge(t[2], t[3]);
    g.add_carried_edge(t[3], t[0]);
    let r = rt.run_with(&g, traced(iters, 1 << 12)).unwrap();
    assert_eq!(r.instances, 4 * iters as u64);
    lg.check(&g);
    assert_cpu_free(&r);
    let trace = r.trace.as_ref().expect("a traced run returns its trace");
    assert_eq!(trace.dropped, 0, "rings of 4096 hold this run");

    // Exactly one start and one end per instance, on compute blocks.
    let mut starts: HashMap<(u32, u32), u32> = HashMap::new();
    let mut ends: HashMap<(u32, u32), u32> = HashMap::new();
    for e in &trace.events {
        let m = match e.kind {
            EventKind::TaskStart => &mut starts,
            EventKind::TaskEnd => &mut ends,
            _ => continue,
        };
        assert_eq!(e.role, Role::Compute, "{e:?}");
        *m.entry((e.task, e.iteration)).or_default() += 1;
    }
    let want: HashSet<(u32, u32)> = (0..4)
        .flat_map(|t| (0..iters).map(move |i| (t, i)))
        .collect();
    for (name, m) in [("TaskStart", &starts), ("TaskEnd", &ends)] {
        assert_eq!(
            m.keys().copied().collect::<HashSet<_>>(),
            want,
            "{name}: the set of instances"
        );
        assert!(m.values().all(|&n| n == 1), "{name} recorded twice: {m:?}");
    }
    let pairs = trace.pair();
    assert_eq!(pairs.tasks.len(), 4 * iters as usize);
    assert_eq!(pairs.unmatched, 0, "every begin has its end");
    assert_monotonic_per_block(trace);

    // Dependencies in device time (%globaltimer is one clock for all SMs).
    let span: HashMap<(u32, u32), (u64, u64)> = pairs
        .tasks
        .iter()
        .map(|s| ((s.task, s.iteration), (s.start_ns, s.end_ns)))
        .collect();
    for e in g.edges() {
        let (p, s, d) = (e.from.index() as u32, e.to.index() as u32, e.distance);
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
        assert_eq!(traced, n, "block {b}: trace vs BlockStats::completed");
    }
    // Comm blocks ran nothing here; what they recorded is idle time.
    let comm: Vec<_> = trace
        .events
        .iter()
        .filter(|e| e.role == Role::Comm)
        .collect();
    assert!(!comm.is_empty(), "comm blocks record their idle time");
    assert!(comm
        .iter()
        .all(|e| matches!(e.kind, EventKind::WaitBegin | EventKind::WaitEnd)));

    // The summary adds up on every block.
    let edges: Vec<(u32, u32, u32)> = g
        .edges()
        .iter()
        .map(|e| (e.from.index() as u32, e.to.index() as u32, e.distance))
        .collect();
    let s = trace.summary(&edges);
    for b in &s.per_block {
        assert_eq!(b.busy_ns + b.idle_ns, b.wall_ns, "{b:?}");
    }
    assert_eq!(
        s.per_block.iter().map(|b| b.instances).sum::<u64>(),
        4 * iters as u64
    );
    let json = trace.to_chrome_json();
    assert!(json["traceEvents"].as_array().unwrap().len() > 400);
}

fn a_full_ring_keeps_the_newest_records_and_counts_the_rest_as_dropped(rt: Runtime) {
    let iters = 1000;
    let lg = Logged::new(&rt, 1, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    g.add_task(k, &lg.args());
    let cap = 16;
    let r = rt.run_with(&g, traced(iters, cap)).unwrap();
    assert_eq!(r.instances, iters as u64);
    lg.check(&g);
    let trace = r.trace.expect("a traced run returns its trace");
    // The one compute block appended two records per instance (and maybe
    // a wait): at most `cap` are left, the rest are counted.
    let compute_block = r.per_block.len() as u32 - 1;
    let kept: Vec<_> = trace
        .events
        .iter()
        .filter(|e| e.block == compute_block)
        .collect();
    assert_eq!(kept.len(), cap as usize, "the ring is full");
    assert!(
        trace.dropped >= 2 * iters as u64 - cap as u64,
        "{} dropped",
        trace.dropped
    );
    // The newest survive: the last instance's end, nothing older than a
    // ring's worth of instances.
    let last_end = kept
        .iter()
        .filter(|e| e.kind == EventKind::TaskEnd)
        .map(|e| e.iteration)
        .max();
    assert_eq!(last_end, Some(iters - 1));
    assert!(kept
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TaskStart | EventKind::TaskEnd))
        .all(|e| e.iteration >= iters - cap));
    assert_monotonic_per_block(&trace);
    // The summary says the trace is incomplete.
    assert!(trace.summary(&[]).to_string().contains("dropped"));
}

fn signals_between_virtual_pes_pair_sender_and_receiver(rt: Runtime) {
    // a (PE 0) → b (PE 1), b → a carried: every instance crosses PEs twice.
    let iters = 20;
    let lg = Logged::new(&rt, 2, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let a = g.add_task(k, &lg.args());
    let b = g.add_task(k, &lg.args());
    g.set_pe(a, 0).set_pe(b, 1);
    g.add_edge(a, b).add_carried_edge(b, a);
    let r = rt.run_with(&g, traced(iters, 1 << 12)).unwrap();
    assert_eq!(r.instances, 2 * iters as u64);
    lg.check(&g);
    let trace = r.trace.expect("a traced run returns its trace");
    assert_eq!(trace.dropped, 0);
    let (ga, gb) = (a.index() as u32, b.index() as u32);
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
        .filter(|e| matches!(e.kind, EventKind::TaskStart))
    {
        assert_eq!(e.pe, if e.task == ga { 0 } else { 1 }, "{e:?}");
    }
    let seen = trace
        .events
        .iter()
        .filter(|e| e.kind == EventKind::SignalSeen)
        .count();
    assert!(seen > 0, "no proxy was seen advancing");
    let flows = trace.flows();
    assert!(!flows.is_empty(), "no signal paired with its sighting");
    for f in flows {
        let (s, r) = (&trace.events[f.sent], &trace.events[f.seen]);
        assert!(r.t_ns >= s.t_ns, "seen before sent: {s:?} {r:?}");
        assert_eq!(s.task, r.task, "both ends name the producer");
    }
}

/// Task 0 of a chain reports 1 / (iteration + 1) as its residual.
const RESIDUAL_SRC: &str = r#"
__device__ void residual(autarky::TaskCtx& ctx) {
    if (threadIdx.x == 0) ctx.report_residual(1.0 / (double)(ctx.iteration + 1));
}
"#;

fn progress_words_reach_the_final_count_without_a_cuda_call(rt: Runtime) {
    let iters = 3000;
    let mut g = Graph::new();
    let res = g.add_kind(TaskKind::new("residual", RESIDUAL_SRC)).unwrap();
    let noop = g
        .add_kind(TaskKind::new(
            "noop",
            "__device__ void noop(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    let t0 = g.add_task_bytes(res, &[]);
    let t1 = g.add_task_bytes(noop, &[]);
    let t2 = g.add_task_bytes(noop, &[]);
    g.add_edge(t0, t1).add_edge(t1, t2).add_carried_edge(t2, t0);
    let run = rt.launch(&g, RunOptions::iterations(iters)).unwrap();
    let started = Instant::now();
    let mut snaps: Vec<PeProgress> = Vec::new();
    let last = loop {
        let s = run.progress_snapshot();
        assert_eq!(s.len(), 1);
        snaps.push(s[0]);
        if s[0].finished {
            break s[0];
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run did not finish: {:?}",
            s[0]
        );
        std::thread::sleep(Duration::from_micros(200));
    };
    let r = run.wait().unwrap();
    assert_cpu_free(&r);
    for w in snaps.windows(2) {
        assert!(w[1].instances >= w[0].instances, "{w:?}");
        assert!(w[1].iterations_done >= w[0].iterations_done, "{w:?}");
    }
    assert!(snaps.iter().all(|s| s.iterations_done <= iters));
    assert_eq!(last.tasks, 3);
    assert_eq!(last.instances, 3 * iters as u64);
    assert_eq!(last.iterations_done, iters);
    assert_eq!(last.iterations_estimate(), iters as f64);
    assert_eq!(
        last.residual,
        Some(Residual {
            value: 1.0 / iters as f64,
            iteration: iters - 1
        })
    );
    assert!(
        last.heartbeat_ns > 0,
        "comm block 0 published at least once"
    );
    assert_eq!(r.instances, 3 * iters as u64);
}

fn an_untraced_run_after_a_traced_one_has_no_trace(rt: Runtime) {
    let lg = Logged::new(&rt, 3, 10);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..3).map(|_| g.add_task(k, &lg.args())).collect();
    g.add_edge(t[0], t[1]).add_edge(t[1], t[2]);
    let traced_run = rt.run_with(&g, traced(10, 64)).unwrap();
    assert!(traced_run.trace.is_some());
    let lg2 = Logged::new(&rt, 3, 10);
    let mut g2 = Graph::new();
    let k2 = g2.add_kind(logged_kind()).unwrap();
    let t2: Vec<TaskId> = (0..3).map(|_| g2.add_task(k2, &lg2.args())).collect();
    g2.add_edge(t2[0], t2[1]).add_edge(t2[1], t2[2]);
    let plain = rt.run(&g2, 10).unwrap();
    assert!(plain.trace.is_none(), "an untraced run carries no trace");
    assert_eq!(plain.instances, 30);
    lg2.check(&g2);
}
