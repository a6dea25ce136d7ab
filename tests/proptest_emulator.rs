//! Property tests of the emulator's scheduling over random graphs: every
//! instance runs exactly once, and only after every instance it depends on
//! (its predecessors' instances `i - d` and its own instance `i - 1`) ended.
//!
//! Cases: 4000 by default, about 1 ms each on a 2-core machine in debug or
//! release alike (spawning the worker threads dominates), so ~4-8 s; set
//! `AUTARKY_PROPTEST_CASES` to run more (20000 took 20 s in debug).
//!
//! Both properties count joins (`counted_fan_in` 2 or 3, arrival counters
//! gating the readiness checks) in two thirds of the cases, and only joins
//! of 9 or more (the default) in the rest.
//!
//! The multi-PE property places tasks randomly on 1–4 PEs, pins some of them
//! (compute slots 0–1, comm slots 0–1) and gives some the comm role; cases:
//! 500 by default (up to 20 worker threads each), `AUTARKY_PROPTEST_MULTIPE_CASES`
//! for more.

// Instances are named by (task, iteration) indices; indexing reads clearer
// than zipped iterators here.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use autarky::emulator::{self, EmulatorConfig};
use autarky::{Graph, TaskKind};
use proptest::prelude::*;

/// A random graph: `(tasks, edges (from, to, distance))`. Distance-0 edges
/// go from a lower to a higher index (so they are acyclic); distance-1
/// edges go anywhere, self edges included. (A drawn distance-0 self edge
/// becomes a distance-1 one instead of a rejected case: rejections capped
/// proptest at about 60 000 cases.)
fn graphs() -> impl Strategy<Value = (usize, Vec<(usize, usize, u32)>)> {
    (1usize..40).prop_flat_map(|n| {
        let edge = (0..n, 0..n, prop::bool::weighted(0.3)).prop_map(|(a, b, carried)| {
            if carried || a == b {
                (a, b, 1)
            } else {
                (a.min(b), a.max(b), 0)
            }
        });
        (Just(n), prop::collection::vec(edge, 0..3 * n))
    })
}

fn cases() -> u32 {
    env_cases("AUTARKY_PROPTEST_CASES", 4000)
}

fn env_cases(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Edges `(from, to, distance)`.
type Edges = Vec<(usize, usize, u32)>;

/// Where one task goes: PE, comm role, pinned slot.
#[derive(Clone, Copy, Debug)]
struct Placement {
    pe: u32,
    comm: bool,
    pin: Option<u32>,
}

/// A random multi-PE graph: a graph as [`graphs`] makes with carried
/// distances 1–3, PEs (1–4), and a placement per task (any PE; a quarter comm; a quarter pinned to slot 0
/// or 1 of its role).
fn placed_graphs() -> impl Strategy<Value = (usize, Edges, u32, Vec<Placement>)> {
    (graphs(), 1u32..=4).prop_flat_map(|((n, edges), pes)| {
        let placement = (
            0..pes,
            prop::bool::weighted(0.25),
            prop::option::weighted(0.25, 0u32..2),
        )
            .prop_map(|(pe, comm, pin)| Placement { pe, comm, pin });
        // Carried edges get distances 1-3 (up to MAX_DISTANCE are valid).
        let m = edges.len();
        (
            Just(n),
            prop::collection::vec(1u32..=3, m).prop_map(move |ds| {
                edges
                    .iter()
                    .zip(ds)
                    .map(|(&(a, b, d), k)| (a, b, if d == 0 { 0 } else { k }))
                    .collect()
            }),
            Just(pes),
            prop::collection::vec(placement, n),
        )
    })
}

/// Checks the logged `(task, iteration, start, end)` events: every instance
/// ran exactly once, after its own previous instance and after every
/// predecessor instance it depends on.
fn check_log(
    events: &[(usize, usize, u64, u64)],
    n: usize,
    iters: usize,
    edges: &[(usize, usize, u32)],
) -> Result<(), TestCaseError> {
    let mut span = vec![vec![None; iters]; n];
    for &(t, i, s, e) in events {
        prop_assert!(
            span[t][i].is_none(),
            "instance {} of task {} ran twice",
            i,
            t
        );
        span[t][i] = Some((s, e));
    }
    for t in 0..n {
        for i in 0..iters {
            prop_assert!(
                span[t][i].is_some(),
                "instance {} of task {} never ran",
                i,
                t
            );
        }
    }
    let span: Vec<Vec<(u64, u64)>> = span
        .into_iter()
        .map(|v| v.into_iter().map(|x| x.unwrap()).collect())
        .collect();
    for t in 0..n {
        for i in 1..iters {
            prop_assert!(
                span[t][i - 1].1 < span[t][i].0,
                "instance {} of task {} started before instance {} ended",
                i,
                t,
                i - 1
            );
        }
    }
    for &(p, s, d) in edges {
        for i in (d as usize)..iters {
            prop_assert!(
                span[p][i - d as usize].1 < span[s][i].0,
                "instance {} of task {} started before instance {} of its predecessor {} ended",
                i,
                s,
                i - d as usize,
                p
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_instance_runs_once_after_all_it_depends_on(
        (n, edges) in graphs(),
        iterations in 1u32..20,
        threads in 1usize..6,
        counted_fan_in in prop::sample::select(vec![2u32, 3, 9]),
        slots in any::<bool>(),
    ) {
        let clock = Arc::new(AtomicU64::new(0));
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut g = Graph::new();
        let (c, ev) = (clock.clone(), events.clone());
        let k = g.add_kind(TaskKind::new("logged", "").with_cpu(move |ctx| {
            let start = c.fetch_add(1, Ordering::SeqCst);
            let end = c.fetch_add(1, Ordering::SeqCst);
            ev.lock().unwrap().push((ctx.task as usize, ctx.iteration as usize, start, end));
            Ok(())
        })).unwrap();
        let ids: Vec<_> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
        for &(a, b, d) in &edges {
            g.add_edge_with_distance(ids[a], ids[b], d);
        }
        // Counted tasks with arrival slots (the default) or one counter
        // (the fallback when the slot table is over its limit).
        let config = EmulatorConfig {
            compute_threads: threads,
            counted_fan_in,
            arrival_slots_max_bytes: if slots { EmulatorConfig::default().arrival_slots_max_bytes } else { 0 },
            ..EmulatorConfig::default()
        };
        let report = emulator::run(&g, iterations, &config).unwrap();
        let iters = iterations as usize;
        prop_assert_eq!(report.instances, (n * iters) as u64);

        check_log(&events.lock().unwrap(), n, iters, &edges)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: env_cases("AUTARKY_PROPTEST_MULTIPE_CASES", 500),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_instance_runs_once_after_all_it_depends_on_across_pes(
        (n, edges, pes, placement) in placed_graphs(),
        iterations in 1u32..12,
        counted_fan_in in prop::sample::select(vec![2u32, 3, 9]),
        slots in any::<bool>(),
    ) {
        let clock = Arc::new(AtomicU64::new(0));
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut g = Graph::new();
        let logged = |name: &str, comm: bool| {
            let (c, ev) = (clock.clone(), events.clone());
            let kind = TaskKind::new(name, "").with_cpu(move |ctx| {
                let start = c.fetch_add(1, Ordering::SeqCst);
                let end = c.fetch_add(1, Ordering::SeqCst);
                ev.lock().unwrap().push((ctx.global as usize, ctx.iteration as usize, start, end));
                Ok(())
            });
            if comm { kind.comm() } else { kind }
        };
        let compute = g.add_kind(logged("logged", false)).unwrap();
        let comm = g.add_kind(logged("pulse", true)).unwrap();
        let ids: Vec<_> = placement
            .iter()
            .map(|p| {
                let t = g.add_task_bytes(if p.comm { comm } else { compute }, &[]);
                g.set_pe(t, p.pe);
                if let Some(slot) = p.pin {
                    g.pin(t, slot);
                }
                t
            })
            .collect();
        for &(a, b, d) in &edges {
            g.add_edge_with_distance(ids[a], ids[b], d);
        }
        // Two comm workers (slots 0-1), three compute workers (slots 0-1
        // pinned at most, one left to pop).
        let config = EmulatorConfig {
            compute_threads: 3,
            comm_threads: 2,
            counted_fan_in,
            arrival_slots_max_bytes: if slots { EmulatorConfig::default().arrival_slots_max_bytes } else { 0 },
            ..EmulatorConfig::default()
        };
        let report = emulator::run_pes(&g, iterations, pes, &config).unwrap();
        let iters = iterations as usize;
        prop_assert_eq!(report.instances, (n * iters) as u64);
        check_log(&events.lock().unwrap(), n, iters, &edges)?;
    }
}

/// Runs a graph of `n` logged tasks with `edges` for `iterations` on the
/// emulator with `config` and checks the log.
fn run_logged(
    n: usize,
    edges: &[(usize, usize, u32)],
    iterations: u32,
    pes: u32,
    pe_of: impl Fn(usize) -> u32,
    config: &EmulatorConfig,
) {
    let clock = Arc::new(AtomicU64::new(0));
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut g = Graph::new();
    let (c, ev) = (clock.clone(), events.clone());
    let k = g
        .add_kind(TaskKind::new("logged", "").with_cpu(move |ctx| {
            let start = c.fetch_add(1, Ordering::SeqCst);
            let end = c.fetch_add(1, Ordering::SeqCst);
            ev.lock()
                .unwrap()
                .push((ctx.global as usize, ctx.iteration as usize, start, end));
            Ok(())
        }))
        .unwrap();
    let ids: Vec<_> = (0..n)
        .map(|t| {
            let id = g.add_task_bytes(k, &[]);
            g.set_pe(id, pe_of(t));
            id
        })
        .collect();
    for &(a, b, d) in edges {
        g.add_edge_with_distance(ids[a], ids[b], d);
    }
    let report = emulator::run_pes(&g, iterations, pes, config).unwrap();
    assert_eq!(report.instances, (n * iterations as usize) as u64);
    check_log(&events.lock().unwrap(), n, iterations as usize, edges).unwrap();
}

#[test]
fn wide_counted_joins_run_every_instance_once_in_order_on_one_and_three_pes() {
    // Two reductions over 300 inputs each (counted: more than 8
    // predecessors), the second also waiting for the first and for its own
    // inputs two iterations back; inputs chained in pairs so they do not
    // all run at once. On one PE, then spread over three (the joins' inputs
    // arrive through relays).
    let inputs = 300;
    let (r1, r2) = (inputs, inputs + 1);
    let mut edges: Vec<(usize, usize, u32)> = Vec::new();
    for i in 0..inputs {
        edges.push((i, r1, 0));
        edges.push((i, r2, 2));
        if i % 2 == 1 {
            edges.push((i - 1, i, 0));
        }
    }
    edges.push((r1, r2, 0));
    let config = EmulatorConfig {
        compute_threads: 3,
        comm_threads: 2,
        ..EmulatorConfig::default()
    };
    run_logged(inputs + 2, &edges, 30, 1, |_| 0, &config);
    run_logged(inputs + 2, &edges, 30, 3, |t| (t % 3) as u32, &config);
}
