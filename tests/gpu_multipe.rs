//! GPU tests of virtual PEs, pinned tasks, comm-role tasks, early finish,
//! and abort reaching every loop (skip without a GPU, fail instead with
//! AUTARKY_REQUIRE_GPU=1).

mod common;

use std::time::{Duration, Instant};

use autarky::abi::ErrorCode;
use autarky::{Error, Graph, Runtime, TaskKind};
use common::*;

/// A GPU runtime from `b` (the trial runs only where a GPU is usable).
fn gpu_with(test: &str, b: autarky::runtime::Builder) -> Runtime {
    b.build().unwrap_or_else(|e| panic!("{test}: {e}"))
}

fn gpu(test: &str) -> Runtime {
    gpu_with(
        test,
        Runtime::builder().gpu().timeout(Duration::from_secs(10)),
    )
}

fn main() -> std::process::ExitCode {
    run_trials(vec![
        gpus_trial(
            "random_dags_over_2_and_4_virtual_pes_with_pinned_and_comm_tasks_run_in_order",
            1,
            random_dags_over_2_and_4_virtual_pes_with_pinned_and_comm_tasks_run_in_order,
        ),
        gpus_trial(
            "random_dags_over_8_virtual_pes_run_in_order",
            1,
            random_dags_over_8_virtual_pes_run_in_order,
        ),
        gpus_trial(
            "counted_joins_in_random_dags_over_1_2_and_4_pes_run_in_order",
            1,
            counted_joins_in_random_dags_over_1_2_and_4_pes_run_in_order,
        ),
        gpus_trial(
            "pinning_to_a_high_slot_leaves_empty_slots_that_exit",
            1,
            pinning_to_a_high_slot_leaves_empty_slots_that_exit,
        ),
        gpus_trial(
            "pinned_tasks_read_their_whole_arguments",
            1,
            pinned_tasks_read_their_whole_arguments,
        ),
        gpus_trial(
            "abort_reaches_a_block_that_keeps_its_own_instances",
            1,
            abort_reaches_a_block_that_keeps_its_own_instances,
        ),
        gpus_trial(
            "a_healthy_chain_of_slow_instances_is_not_a_stall",
            1,
            a_healthy_chain_of_slow_instances_is_not_a_stall,
        ),
        gpus_trial(
            "finish_at_stops_every_pe_at_the_same_iteration",
            1,
            finish_at_stops_every_pe_at_the_same_iteration,
        ),
        gpus_trial(
            "finish_at_is_exact_along_a_chain_of_pinned_tasks",
            1,
            finish_at_is_exact_along_a_chain_of_pinned_tasks,
        ),
        gpus_trial(
            "abort_on_one_pe_reaches_every_pe",
            1,
            abort_on_one_pe_reaches_every_pe,
        ),
    ])
}

fn gpu_pes(test: &str, pes: u32) -> Runtime {
    gpu_pes_counted(test, pes, autarky_shared::COUNTED_FAN_IN_DEFAULT)
}

/// [`gpu_pes`] with tasks of `counted_fan_in` or more predecessors counted.
fn gpu_pes_counted(test: &str, pes: u32, counted_fan_in: u32) -> Runtime {
    gpu_with(
        test,
        Runtime::builder()
            .gpu()
            .pes(pes)
            .comm_blocks(2)
            .compute_blocks(8)
            .counted_fan_in(counted_fan_in)
            .timeout(Duration::from_secs(10)),
    )
}

/// The `logged` body on comm blocks (kind `logged` must be registered first:
/// it defines `LogArgs`).
fn logged_comm_kind() -> TaskKind {
    TaskKind::new(
        "logged_comm",
        "__device__ void logged_comm(autarky::TaskCtx& ctx) { logged(ctx); }",
    )
    .args::<LogArgs>()
    .comm()
}

/// A random DAG over `pes` PEs with loop-carried edges, some tasks pinned
/// (to compute slots 0..4), some of the comm role (some of them pinned to
/// comm slot 1); checks every instance ran once, after its predecessors.
fn random_multi_pe_dag(rt: &Runtime, seed: u64, n: usize, iters: u32) {
    random_multi_pe_dag_with_joins(rt, seed, n, iters, 0)
}

/// [`random_multi_pe_dag`] plus `joins` wide joins: tasks (dynamic, on a
/// random PE) that each wait for 10–300 random earlier tasks, one of them
/// through a loop-carried edge of distance 2 — fan-ins above the eight a
/// completion checks one by one, so they take the block-wide check and, by
/// default, arrival counting.
fn random_multi_pe_dag_with_joins(rt: &Runtime, seed: u64, n: usize, iters: u32, joins: usize) {
    let pes = rt.num_pes();
    let logged = Logged::new(rt, n + joins, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let kc = g.add_kind(logged_comm_kind()).unwrap();
    let mut rng = Rng(seed);
    let mut ids: Vec<_> = (0..n)
        .map(|_| {
            let comm = rng.below(5) == 0;
            let t = g.add_task(if comm { kc } else { k }, &logged.args());
            g.set_pe(t, rng.below(pes as u64) as u32);
            match (comm, rng.below(3)) {
                (false, 0) => {
                    g.pin(t, rng.below(4) as u32);
                }
                (true, 0) => {
                    g.pin(t, 1);
                }
                _ => {}
            }
            t
        })
        .collect();
    for i in 1..n {
        for _ in 0..rng.below(3) {
            let j = rng.below(i as u64) as usize;
            g.add_edge(ids[j], ids[i]);
        }
        if rng.below(4) == 0 {
            let j = i + rng.below((n - i) as u64) as usize;
            g.add_carried_edge(ids[j], ids[i]);
        }
    }
    let mut total = n;
    for _ in 0..joins {
        let t = g.add_task(k, &logged.args());
        g.set_pe(t, rng.below(pes as u64) as u32);
        let inputs = (10 + rng.below(291) as usize).min(total);
        for _ in 0..inputs {
            let j = rng.below(total as u64) as usize;
            g.add_edge(ids[j], t);
        }
        g.add_edge_with_distance(ids[rng.below(n as u64) as usize], t, 2);
        total += 1;
        ids.push(t);
    }
    let n = total;
    let report = rt.run(&g, iters).unwrap();
    assert_eq!(report.instances, n as u64 * iters as u64);
    assert_eq!(report.iterations, iters);
    logged.check(&g);
}

fn random_dags_over_2_and_4_virtual_pes_with_pinned_and_comm_tasks_run_in_order() {
    for pes in [2, 4] {
        let rt = gpu_pes("random_multi_pe_dag", pes);
        for seed in 1..=6 {
            random_multi_pe_dag(&rt, seed * 7919 + pes as u64, 60, 40);
        }
    }
}

fn counted_joins_in_random_dags_over_1_2_and_4_pes_run_in_order() {
    // Every join counted (2), and the default (only the wide joins).
    for counted in [2, autarky_shared::COUNTED_FAN_IN_DEFAULT] {
        for pes in [1, 2, 4] {
            let rt = gpu_pes_counted("counted_joins", pes, counted);
            for seed in 1..=4 {
                random_multi_pe_dag_with_joins(
                    &rt,
                    seed * 104729 + pes as u64 + counted as u64,
                    80,
                    40,
                    4,
                );
            }
        }
    }
}

fn random_dags_over_8_virtual_pes_run_in_order() {
    let rt = gpu_with(
        "random_dags_over_8_virtual_pes",
        Runtime::builder()
            .gpu()
            .pes(8)
            .comm_blocks(2)
            .compute_blocks(6)
            .timeout(Duration::from_secs(10)),
    );
    for seed in 1..=3 {
        random_multi_pe_dag(&rt, seed, 200, 30);
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct FailAt {
    iteration: u32,
    _pad: u32,
}

const FAIL_AT_SRC: &str = r#"
struct FailAt { unsigned iteration; unsigned pad; };
__device__ void fail_at(autarky::TaskCtx& ctx) {
    if (threadIdx.x == 0 && ctx.iteration == ctx.args<FailAt>().iteration) ctx.fail(77);
}
"#;

const NOOP_SRC: &str = "__device__ void noop(autarky::TaskCtx&) {}";

fn abort_reaches_a_block_that_keeps_its_own_instances() {
    // Task A self-loops (it keeps its own next instance: never waits), B
    // fails at iteration 0. Before the fix A ran all 10^7 instances (9.5 s).
    let rt = gpu("abort_reaches_kept_loop");
    let mut g = Graph::new();
    let noop = g.add_kind(TaskKind::new("noop", NOOP_SRC)).unwrap();
    let fail = g
        .add_kind(TaskKind::new("fail_at", FAIL_AT_SRC).args::<FailAt>())
        .unwrap();
    g.add_task_bytes(noop, &[]);
    let b = g.add_task(
        fail,
        &FailAt {
            iteration: 0,
            _pad: 0,
        },
    );
    let run = rt
        .launch(&g, autarky::RunOptions::iterations(10_000_000))
        .unwrap();
    // Timed from the launch (the kernel was compiled before it).
    let t0 = Instant::now();
    let fin = run.wait_detailed().unwrap();
    let wall = t0.elapsed();
    match fin.result {
        Err(Error::TaskFailed { code, ref task, .. }) => {
            assert_eq!(code, 77);
            assert!(task.contains(&format!("{b}")), "{task}");
        }
        ref other => panic!("expected TaskFailed, got {other:?}"),
    }
    let prop = fin.abort_propagation_ns.unwrap();
    eprintln!("abort propagation {prop} ns, wall {wall:?}");
    assert!(
        prop < 10_000_000,
        "abort took {prop} ns to reach every block"
    );
    assert!(wall < Duration::from_secs(2), "run took {wall:?}");
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SpinNs {
    ns: u64,
}

const SPIN_SRC: &str = r#"
struct SpinNs { unsigned long long ns; };
__device__ void spin_ns(autarky::TaskCtx& ctx) {
    if (threadIdx.x != 0) return;
    const unsigned long long t0 = autarky::globaltimer_ns();
    while (autarky::globaltimer_ns() - t0 < ctx.args<SpinNs>().ns) {}
}
"#;

fn a_healthy_chain_of_slow_instances_is_not_a_stall() {
    // Timeout 100 ms; 20 instances of 15 ms each: progress published by
    // time keeps every deadline re-armed.
    let rt = gpu_with(
        "slow_chain_not_a_stall",
        Runtime::builder().gpu().timeout(Duration::from_millis(100)),
    );
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("spin_ns", SPIN_SRC).args::<SpinNs>())
        .unwrap();
    g.add_task(k, &SpinNs { ns: 15_000_000 });
    let report = rt.run(&g, 20).unwrap();
    assert_eq!(report.instances, 20);
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Stop {
    count: u64, // u32[tasks]: instances run per task
    task: u32,
    at: u32, // finish_at(at + 2) at iteration `at`
}

const STOP_SRC: &str = r#"
struct Stop { unsigned* count; unsigned task; unsigned at; };
__device__ void counted(autarky::TaskCtx& ctx) {
    const Stop& a = ctx.args<Stop>();
    if (threadIdx.x == 0) atomicAdd(&a.count[a.task], 1u);
}
__device__ void stopper(autarky::TaskCtx& ctx) {
    const Stop& a = ctx.args<Stop>();
    if (threadIdx.x == 0) {
        atomicAdd(&a.count[a.task], 1u);
        if (ctx.iteration == a.at) ctx.finish_at(a.at + 2);
    }
}
"#;

/// The kinds of STOP_SRC: `counted` and `stopper` (may finish early).
fn stop_kinds(g: &mut Graph) -> (autarky::KindId, autarky::KindId) {
    let counted = g
        .add_kind(TaskKind::new("counted", STOP_SRC).args::<Stop>())
        .unwrap();
    let stopper = g
        .add_kind(
            TaskKind::new("stopper", "")
                .args::<Stop>()
                .may_finish_early(),
        )
        .unwrap();
    (counted, stopper)
}

fn finish_at_stops_every_pe_at_the_same_iteration() {
    // Per PE: a stopper and four workers (two pinned); workers depend on the
    // stopper with distance 2 and on each other across PEs.
    let rt = gpu_pes("finish_at_every_pe", 2);
    let pes = 2u32;
    let per_pe = 5usize;
    let n = per_pe * pes as usize;
    let count = zeroed(&rt, n); // u64s: room for n u32 counters
    let mut g = Graph::new();
    let (counted, stopper) = stop_kinds(&mut g);
    let at = 30;
    let mut ids = Vec::new();
    for pe in 0..pes {
        let s = g.add_task(
            stopper,
            &Stop {
                count: count.addr(),
                task: ids.len() as u32,
                at,
            },
        );
        g.set_pe(s, pe);
        ids.push(s);
        for w in 0..per_pe - 1 {
            let t = g.add_task(
                counted,
                &Stop {
                    count: count.addr(),
                    task: ids.len() as u32,
                    at,
                },
            );
            g.set_pe(t, pe);
            if w < 2 {
                g.pin(t, w as u32);
            }
            g.add_edge_with_distance(s, t, 2);
            g.add_edge(ids[ids.len() - 1], t);
            ids.push(t);
        }
    }
    // Cross-PE: the last worker of PE 0 feeds the first worker of PE 1.
    g.add_edge(ids[per_pe - 1], ids[per_pe + 1]);
    let report = rt.run(&g, 1000).unwrap();
    assert_eq!(report.iterations, at + 2);
    let c: Vec<u32> = bytemuck::cast_slice(&count.to_vec().unwrap())[..n].to_vec();
    assert!(
        c.iter().all(|&v| v == at + 2),
        "instances per task: {c:?} (want {} each)",
        at + 2
    );
}

/// A chain of pinned tasks, each on its own block: `s` calls
/// finish_at(at + 1) at iteration `at`; `x` needs `s`'s same instance, `y`
/// `x`'s previous one, `z` `y`'s previous one. Pinned words carry the
/// limit their block knew (nobody reads Status::limit after a pinned
/// acquire): `y` learns of the stop only through `x`'s word and `z`
/// through `y`'s, so each must run exactly `at + 1` instances — with
/// `at + 1` not a multiple of 16, where pinned blocks also read the limit.
/// (Loom model (d) in the emulator checks the same rule exhaustively.)
fn finish_at_is_exact_along_a_chain_of_pinned_tasks() {
    let rt = gpu_pes("finish_at_pinned_chain", 1);
    let count = zeroed(&rt, 4);
    let mut g = Graph::new();
    let (counted, stopper) = stop_kinds(&mut g);
    let at = 20u32;
    let ids: Vec<_> = (0..4u32)
        .map(|task| {
            let stop = Stop {
                count: count.addr(),
                task,
                // finish_at(at + 2) in the kind: at - 1 makes it at + 1.
                at: at - 1,
            };
            let t = g.add_task(if task == 0 { stopper } else { counted }, &stop);
            g.pin(t, task);
            t
        })
        .collect();
    g.add_edge(ids[0], ids[1]);
    g.add_carried_edge(ids[1], ids[2]);
    g.add_carried_edge(ids[2], ids[3]);
    let report = rt.run(&g, 1000).unwrap();
    assert_eq!(report.iterations, at + 1);
    let c: Vec<u32> = bytemuck::cast_slice(&count.to_vec().unwrap())[..4].to_vec();
    assert_eq!(
        c,
        [at + 1; 4],
        "instances per task (stopper, then the chain)"
    );
}

fn abort_on_one_pe_reaches_every_pe() {
    let rt = gpu_pes("abort_every_pe", 4);
    let mut g = Graph::new();
    let noop = g.add_kind(TaskKind::new("noop", NOOP_SRC)).unwrap();
    let fail = g
        .add_kind(TaskKind::new("fail_at", FAIL_AT_SRC).args::<FailAt>())
        .unwrap();
    let mut prev = None;
    for pe in 0..4 {
        let t = g.add_task_bytes(noop, &[]);
        g.set_pe(t, pe);
        if pe == 2 {
            g.pin(t, 0);
        }
        if let Some(p) = prev {
            g.add_carried_edge(p, t);
        }
        prev = Some(t);
    }
    let f = g.add_task(
        fail,
        &FailAt {
            iteration: 1000,
            _pad: 0,
        },
    );
    g.set_pe(f, 1);
    let run = rt
        .launch(&g, autarky::RunOptions::iterations(10_000_000))
        .unwrap();
    // Timed from the launch (the kernel was compiled before it).
    let t0 = Instant::now();
    let fin = run.wait_detailed().unwrap();
    match fin.result {
        Err(Error::TaskFailed { pe, code, .. }) => {
            assert_eq!((pe, code), (1, 77));
        }
        ref other => panic!("expected TaskFailed on PE 1, got {other:?}"),
    }
    // The other PEs stopped because PE 1 raised abort: that is not an
    // error of theirs (a peer's abort once read as the host's, recorded as
    // HostAbort, and on two GPUs whose clocks differ it hid the cause).
    let codes: Vec<u32> = fin.pe_statuses.iter().map(|s| s.error_code).collect();
    assert_eq!(
        codes,
        [0, ErrorCode::TaskFailed as u32, 0, 0],
        "error records per PE"
    );
    let prop = fin.abort_propagation_ns.unwrap();
    eprintln!("abort propagation over 4 PEs: {prop} ns");
    assert!(prop < 10_000_000, "abort took {prop} ns to reach every PE");
    assert!(t0.elapsed() < Duration::from_secs(3));
}

/// Checks every byte of its arguments: byte 0 is the task's own seed
/// (37·task + 11, so another task's copy fails too), byte i is byte 0 +
/// 7·i (mod 256). Fails with (task, first bad index + 1) otherwise.
const ARGCHECK_SRC: &str = r#"
__device__ void argcheck_body(autarky::TaskCtx& ctx) {
    const unsigned char* a = &ctx.args<unsigned char>();
    const unsigned char seed = (unsigned char)(37u * ctx.task + 11u);
    unsigned bad = 0;
    for (unsigned i = threadIdx.x; i < ctx.arg_len; i += blockDim.x)
        if (a[i] != (unsigned char)(seed + 7u * i)) bad = i + 1;
    if (bad) ctx.fail(((unsigned long long)ctx.task << 32) | bad);
}
"#;

/// A pinned block keeps a copy of its tasks' arguments in shared memory
/// while they fit (1 KiB, 16-aligned each): arguments of odd lengths, some
/// copied and some read from the arena (the list of slot 0 has more than
/// fits), and a list too long to cache at all (slot 1), each instance
/// checking every byte it sees.
fn pinned_tasks_read_their_whole_arguments() {
    let rt = gpu_pes("pinned_args", 1);
    let mut g = Graph::new();
    let sizes = [3usize, 20, 200, 600, 800, 17, 1, 250, 64, 33];
    let kinds: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let src = if i == 0 {
                format!("{ARGCHECK_SRC}\n__device__ void argcheck{i}(autarky::TaskCtx& c) {{ argcheck_body(c); }}")
            } else {
                format!("__device__ void argcheck{i}(autarky::TaskCtx& c) {{ argcheck_body(c); }}")
            };
            g.add_kind(TaskKind::new(format!("argcheck{i}"), &src).arg_size_bytes(n))
                .unwrap()
        })
        .collect();
    let bytes = |seed: u8, n: usize| -> Vec<u8> {
        (0..n).map(|i| seed.wrapping_add((7 * i) as u8)).collect()
    };
    let mut add_list = |slot: u32, count: usize| {
        let mut prev = None;
        let mut first = None;
        for j in 0..count {
            let k = j % sizes.len();
            // The seed ARGCHECK_SRC expects: from the id this task will get.
            let id = g.num_tasks() as u32;
            let t = g.add_task_bytes(kinds[k], &bytes((37 * id + 11) as u8, sizes[k]));
            assert_eq!(t.index() as u32, id);
            g.pin(t, slot);
            if let Some(p) = prev {
                g.add_edge(p, t);
            }
            first.get_or_insert(t);
            prev = Some(t);
        }
        g.add_carried_edge(prev.unwrap(), first.unwrap());
    };
    add_list(0, 8); // 8 tasks: cached, the 800-byte and 250-byte ones from the arena
    add_list(1, 10); // 10 tasks: more than the cache holds
    let report = rt.run(&g, 40).unwrap();
    assert_eq!(report.instances, 18 * 40);
}

/// Only slot 3 has a pinned list: compute slots 0..2 get empty lists, and
/// their blocks must leave at once (one such block spun forever once,
/// never looking at the abort word).
fn pinning_to_a_high_slot_leaves_empty_slots_that_exit() {
    let rt = gpu_pes("empty_pinned_slots", 1);
    let logged = Logged::new(&rt, 3, 50);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<_> = (0..3).map(|_| g.add_task(k, &logged.args())).collect();
    g.pin(t[0], 3);
    g.add_edge(t[0], t[1]).add_edge(t[1], t[2]);
    let t0 = Instant::now();
    let report = rt.run(&g, 50).unwrap();
    assert_eq!(report.instances, 150);
    logged.check(&g);
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t0.elapsed()
    );
}
