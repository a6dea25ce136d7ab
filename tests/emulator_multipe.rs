//! End-to-end tests of the emulator on several PEs: cross-PE edges through
//! proxies and relays, pinned and comm-role tasks, early finish, abort
//! across PEs, timeouts on remote signals, and the symmetric heap.
//!
//! Every logged instance takes a start and an end number from one global
//! sequence counter (as `tests/common`'s `LOGGED_SRC` does on the GPU), so
//! "after" means "started after it ended" in one total order.

// Instances are named by (task, iteration) indices; indexing reads clearer
// than zipped iterators here.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use autarky::emulator::{self, EmulatorConfig};
use autarky::{CpuCtx, Error, Graph, Runtime, TaskId, TaskKind};

fn cfg(comm: usize, compute: usize) -> EmulatorConfig {
    EmulatorConfig {
        comm_threads: comm,
        compute_threads: compute,
        ..EmulatorConfig::default()
    }
}

/// `(global task, pe, iteration, start seq, end seq)` of one instance.
type Event = (u32, u32, u32, u64, u64);

/// A log of events shared by the bodies of the logged kinds.
#[derive(Clone, Default)]
struct Log {
    clock: Arc<AtomicU64>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Log {
    fn record(&self, ctx: &CpuCtx<'_>) {
        let start = self.clock.fetch_add(1, Ordering::SeqCst);
        // A little work between start and end widens the window in which a
        // wrongly scheduled successor would overlap.
        std::hint::black_box((0..50).sum::<u32>());
        let end = self.clock.fetch_add(1, Ordering::SeqCst);
        self.events
            .lock()
            .unwrap()
            .push((ctx.global, ctx.pe, ctx.iteration, start, end));
    }

    /// A compute kind named `name` that logs.
    fn kind(&self, name: &str) -> TaskKind {
        let log = self.clone();
        TaskKind::new(name, "").with_cpu(move |ctx| {
            log.record(ctx);
            Ok(())
        })
    }

    /// `(start, end)` of every instance, `[task][iteration]`; panics when an
    /// instance ran twice, never ran, or ran on the wrong PE.
    fn spans(&self, g: &Graph, iterations: u32) -> Vec<Vec<(u64, u64)>> {
        let mut spans = vec![vec![None; iterations as usize]; g.num_tasks()];
        for &(t, pe, i, s, e) in self.events.lock().unwrap().iter() {
            assert_eq!(
                pe,
                g.pe_of(TaskId::from_index(t as usize)),
                "task {t} ran on PE {pe}"
            );
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

    /// Every instance ran exactly once, after its own previous instance and
    /// after every predecessor instance it depends on.
    fn check(&self, g: &Graph, iterations: u32) {
        let spans = self.spans(g, iterations);
        let it = iterations as usize;
        for t in 0..g.num_tasks() {
            for i in 1..it {
                assert!(
                    spans[t][i - 1].1 < spans[t][i].0,
                    "task {t}: instance {i} started before instance {} ended",
                    i - 1
                );
            }
        }
        for e in g.edges() {
            let (p, s, d) = (e.from.index(), e.to.index(), e.distance as usize);
            for i in d..it {
                assert!(
                    spans[p][i - d].1 < spans[s][i].0,
                    "task {s} (PE {}) iteration {i} started before task {p} (PE {}) iteration {} ended",
                    g.pe_of(e.to),
                    g.pe_of(e.from),
                    i - d
                );
            }
        }
    }
}

/// A chain of `n` tasks placed round-robin on `pes` PEs (every edge
/// crosses PEs), closed by a loop-carried edge from the last to the first.
fn crossing_chain(pes: u32) {
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind("logged")).unwrap();
    let n = 12;
    let ids: Vec<TaskId> = (0..n)
        .map(|i| {
            let t = g.add_task_bytes(k, &[]);
            g.set_pe(t, i as u32 % pes);
            t
        })
        .collect();
    for w in ids.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    g.add_carried_edge(ids[n - 1], ids[0]);
    let report = emulator::run_pes(&g, 30, pes, &cfg(1, 2)).unwrap();
    assert_eq!(report.instances, 12 * 30);
    assert_eq!(report.per_block.len(), pes as usize * 3);
    log.check(&g, 30);
}

#[test]
fn chain_crossing_two_pes_with_a_carried_edge_back_runs_in_order() {
    crossing_chain(2);
}

#[test]
fn chain_crossing_four_pes_with_a_carried_edge_back_runs_in_order() {
    crossing_chain(4);
}

#[test]
fn diamond_with_branches_on_different_pes_joins_after_both() {
    // a (PE 0) → {b (PE 1), c (PE 2)} → d (PE 3), d → a carried, plus a
    // local sibling e of d on PE 3 that also needs b: the join on PE 3 has
    // two proxies and a local predecessor.
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind("logged")).unwrap();
    let [a, b, c, d, e] = [0u32, 1, 2, 3, 3].map(|pe| {
        let t = g.add_task_bytes(k, &[]);
        g.set_pe(t, pe);
        t
    });
    g.add_edge(a, b)
        .add_edge(a, c)
        .add_edge(b, d)
        .add_edge(c, d)
        .add_edge(b, e)
        .add_edge(e, d)
        .add_carried_edge(d, a);
    let report = emulator::run_pes(&g, 40, 4, &cfg(2, 2)).unwrap();
    assert_eq!(report.instances, 5 * 40);
    log.check(&g, 40);
}

#[test]
fn loop_carried_cross_pe_edges_in_both_directions_keep_iterations_apart() {
    // Two PEs exchanging every iteration: x0 → y1 (same iteration) and
    // y1 → x0 carried, and a second pair the other way round; independent
    // local work on each PE runs in between.
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind("logged")).unwrap();
    let mut on = |pe| {
        let t = g.add_task_bytes(k, &[]);
        g.set_pe(t, pe);
        t
    };
    let (x0, y1, x1, y0, w0, w1) = (on(0), on(1), on(1), on(0), on(0), on(1));
    g.add_edge(x0, y1)
        .add_carried_edge(y1, x0)
        .add_edge(x1, y0)
        .add_carried_edge(y0, x1)
        .add_carried_edge(y0, w1)
        .add_carried_edge(y1, w0)
        .add_edge(w0, y0)
        .add_edge(w1, y1);
    emulator::run_pes(&g, 60, 2, &cfg(1, 2)).unwrap();
    log.check(&g, 60);
}

#[test]
fn pinned_tasks_mixed_with_dynamic_ones_across_pes_run_once_in_order() {
    // A stencil-like ring: per PE, two pinned tiles (slots 0 and 1) and a
    // dynamic reducer fed by every tile of every PE; tiles need their
    // neighbours (on other PEs too) from the previous iteration.
    let log = Log::default();
    let mut g = Graph::new();
    let k = g.add_kind(log.kind("logged")).unwrap();
    let pes = 3u32;
    let mut tiles = Vec::new();
    for pe in 0..pes {
        for slot in 0..2 {
            let t = g.add_task_bytes(k, &[]);
            g.set_pe(t, pe).pin(t, slot);
            tiles.push(t);
        }
    }
    let mut reducers = Vec::new();
    for pe in 0..pes {
        let r = g.add_task_bytes(k, &[]);
        g.set_pe(r, pe);
        reducers.push(r);
    }
    let n = tiles.len();
    for i in 0..n {
        g.add_carried_edge(tiles[(i + 1) % n], tiles[i]);
        g.add_carried_edge(tiles[(i + n - 1) % n], tiles[i]);
        g.add_edge(tiles[i], reducers[i % pes as usize]);
    }
    // A pinned task after a dynamic one: reducer of PE 0 → tile on PE 1.
    g.add_edge(reducers[0], tiles[2]);
    // 2 pinned compute workers + 1 dynamic per PE.
    let report = emulator::run_pes(&g, 50, pes, &cfg(1, 3)).unwrap();
    assert_eq!(report.instances, (n + pes as usize) as u64 * 50);
    // The pinned workers ran exactly their tiles' instances: per PE, block
    // 1 (slot 0) and block 2 (slot 1) ran 50 each.
    for pe in 0..pes as usize {
        assert_eq!(report.per_block[pe * 4 + 1], 50, "PE {pe} slot 0");
        assert_eq!(report.per_block[pe * 4 + 2], 50, "PE {pe} slot 1");
    }
    log.check(&g, 50);
}

#[test]
fn comm_tasks_run_only_on_comm_workers_and_keep_dependency_order() {
    // compute → pulse (comm) → compute on another PE, with a pinned comm
    // task on comm slot 1 and a dynamic one; comm tasks record their
    // worker's block, which must be a comm block (< 2).
    let log = Log::default();
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let mut g = Graph::new();
    let k = g.add_kind(log.kind("logged")).unwrap();
    let (l2, b2) = (log.clone(), blocks.clone());
    let pulse = g
        .add_kind(TaskKind::new("pulse", "").comm().with_cpu(move |ctx| {
            b2.lock().unwrap().push(ctx.block);
            l2.record(ctx);
            Ok(())
        }))
        .unwrap();
    let mut on = |kind, pe| {
        let t = g.add_task_bytes(kind, &[]);
        g.set_pe(t, pe);
        t
    };
    let (a0, p0, a1, p1, z0) = (on(k, 0), on(pulse, 0), on(k, 1), on(pulse, 1), on(k, 0));
    g.pin(p1, 1);
    g.add_edge(a0, p0)
        .add_edge(p0, a1)
        .add_edge(a1, p1)
        .add_edge(p1, z0)
        .add_carried_edge(z0, a0);
    let report = emulator::run_pes(&g, 40, 2, &cfg(2, 2)).unwrap();
    assert_eq!(report.instances, 5 * 40);
    let blocks = blocks.lock().unwrap();
    assert_eq!(blocks.len(), 80);
    assert!(
        blocks.iter().all(|&b| b < 2),
        "a comm task ran on a compute block: {blocks:?}"
    );
    log.check(&g, 40);
}

/// Per PE: a worker `w` and a checker `c` (may_finish_early) that needs
/// every PE's worker; `c → w` carried. Every checker calls `finish_at(7)`
/// in iteration 6, so every PE stops after iteration 6.
fn finish_everywhere(pes: u32) {
    let log = Log::default();
    let mut g = Graph::new();
    let work = g.add_kind(log.kind("work")).unwrap();
    let l2 = log.clone();
    let check = g
        .add_kind(
            TaskKind::new("check", "")
                .may_finish_early()
                .with_cpu(move |ctx| {
                    l2.record(ctx);
                    if ctx.iteration == 6 {
                        ctx.finish_at(7)?;
                    }
                    Ok(())
                }),
        )
        .unwrap();
    let mut ws = Vec::new();
    let mut cs = Vec::new();
    for pe in 0..pes {
        let w = g.add_task_bytes(work, &[]);
        let c = g.add_task_bytes(check, &[]);
        g.set_pe(w, pe).set_pe(c, pe).add_carried_edge(c, w);
        ws.push(w);
        cs.push(c);
    }
    for &w in &ws {
        for &c in &cs {
            g.add_edge(w, c);
        }
    }
    let report = emulator::run_pes(&g, 1000, pes, &cfg(1, 2)).unwrap();
    assert_eq!(report.iterations, 7, "every PE stops at iteration 7");
    assert_eq!(report.instances, 2 * pes as u64 * 7);
    log.check(&g, 7);
}

#[test]
fn finish_at_stops_two_pes_at_the_same_iteration() {
    finish_everywhere(2);
}

#[test]
fn finish_at_stops_four_pes_at_the_same_iteration() {
    finish_everywhere(4);
}

#[test]
fn finish_at_from_a_kind_not_declared_may_finish_early_fails_the_task() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("eager", "").with_cpu(|ctx| {
            // The body ignores the error: the task fails all the same.
            let _ = ctx.finish_at(2);
            Ok(())
        }))
        .unwrap();
    let t = g.add_task_bytes(k, &[]);
    g.set_pe(t, 1);
    // Its own error, saying what to declare (it was TaskFailed with the
    // code 15810907, CpuCtx::FINISH_UNDECLARED).
    match emulator::run_pes(&g, 5, 2, &cfg(1, 1)) {
        Err(e @ Error::FinishUndeclared { .. }) => {
            let Error::FinishUndeclared { pe, iteration, .. } = e else {
                unreachable!()
            };
            assert_eq!((pe, iteration), (1, 0));
            assert!(e.to_string().contains("may_finish_early()"), "{e}");
        }
        other => panic!("expected FinishUndeclared, got {other:?}"),
    }
}

#[test]
fn task_failing_on_pe_1_ends_every_pe_with_task_failed_naming_pe_1() {
    // Four PEs each run a long independent chain; one task on PE 1 fails
    // in iteration 5. Every PE must stop (the run returns, well before the
    // chains could finish) and the error names PE 1.
    let mut g = Graph::new();
    let ran = Arc::new(AtomicU32::new(0));
    let r2 = ran.clone();
    let k = g
        .add_kind(TaskKind::new("slow", "").with_cpu(move |_| {
            r2.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_micros(200));
            Ok(())
        }))
        .unwrap();
    let bad = g
        .add_kind(TaskKind::new("bad", "").with_cpu(|ctx| {
            if ctx.iteration == 5 {
                Err(77)
            } else {
                Ok(())
            }
        }))
        .unwrap();
    for pe in 0..4 {
        let a = g.add_task_bytes(k, &[]);
        let b = g.add_task_bytes(k, &[]);
        g.set_pe(a, pe).set_pe(b, pe).add_edge(a, b);
    }
    let breaker = g.add_task_bytes(bad, &[]);
    g.set_pe(breaker, 1).set_name(breaker, "breaker");
    let t0 = std::time::Instant::now();
    let err = emulator::run_pes(&g, 100_000, 4, &cfg(1, 2)).unwrap_err();
    match &err {
        Error::TaskFailed {
            pe,
            task,
            iteration,
            code,
        } => {
            assert_eq!(*pe, 1);
            assert_eq!(task, "#8 (breaker)");
            assert_eq!((*iteration, *code), (5, 77));
        }
        other => panic!("expected TaskFailed, got {other:?}"),
    }
    assert!(
        ran.load(Ordering::Relaxed) < 8 * 100_000 / 10,
        "the other PEs kept running after the abort"
    );
    assert!(t0.elapsed() < Duration::from_secs(20));
}

#[test]
fn held_remote_producer_ends_in_a_timeout_whose_report_names_the_proxy() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let producer = g.add_task_bytes(k, &[]);
    let consumer = g.add_task_bytes(k, &[]);
    g.set_name(producer, "producer")
        .set_name(consumer, "consumer");
    g.set_pe(consumer, 1)
        .add_edge(a, producer)
        .add_edge(producer, consumer);
    let config = EmulatorConfig {
        timeout: Duration::from_millis(200),
        hold_task: Some(producer.index() as u32),
        ..cfg(1, 2)
    };
    let t0 = std::time::Instant::now();
    let err = emulator::run_pes(&g, 5, 2, &config).unwrap_err();
    assert!(
        matches!(err, Error::DeviceTimeout { .. }),
        "expected a timeout, got {err:?}"
    );
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(
        msg.contains("#1 (producer) (proxy on PE 1)"),
        "the report must name the proxy the consumer waits for: {msg}"
    );
    assert!(
        msg.contains("#2 (consumer): instance 0 waits for"),
        "the report must list the consumer: {msg}"
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn pinned_slot_without_a_worker_and_no_unpinned_worker_are_invalid_config() {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.set_pe(b, 1).pin(b, 2).add_edge(a, b);
    match emulator::run_pes(&g, 1, 2, &cfg(1, 2)) {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("compute slot 2"), "{m}"),
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    g.pin(b, 0);
    g.pin(a, 0);
    let c = g.add_task_bytes(k, &[]);
    g.set_pe(c, 1);
    match emulator::run_pes(&g, 1, 2, &cfg(1, 1)) {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("not pinned"), "{m}"),
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    // With a second compute worker the dynamic task has one.
    emulator::run_pes(&g, 3, 2, &cfg(1, 2)).unwrap();
    // Several PEs need a comm worker (it relays proxies).
    assert!(matches!(
        emulator::run_pes(&g, 1, 2, &cfg(0, 2)),
        Err(Error::InvalidConfig(_))
    ));
}

/// Arguments of the `put` and `take` kinds: a PE's own address of a
/// symmetric buffer of `u64`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Buf {
    addr: u64,
}

#[test]
fn bodies_store_into_a_peers_symmetric_heap_and_the_consumer_reads_it() {
    // A ring over 3 PEs: `put` on PE p writes 64 values for iteration i
    // into PE p+1's copy (through peer_addr); `take` on PE p+1 checks them.
    // take → put carried keeps the next put from overwriting unread data.
    const N: usize = 64;
    let pes = 3u32;
    let rt = Runtime::builder().emulator(2).pes(pes).build().unwrap();
    let buf = rt.alloc_symmetric::<u64>(N).unwrap();
    buf.copy_to_all(&[u64::MAX; N]).unwrap();
    let value = |pe: u32, i: u32, j: usize| ((pe as u64) << 40) | ((i as u64) << 8) | j as u64;
    let mut g = Graph::new();
    let put = g
        .add_kind(TaskKind::new("put", "").args::<Buf>().with_cpu(move |ctx| {
            let to = (ctx.pe + 1) % 3;
            let peer = ctx.peer_addr(ctx.args::<Buf>().addr, to) as *mut u64;
            for j in 0..N {
                // SAFETY: `peer` is PE `to`'s copy of a live symmetric
                // buffer of N u64s (the runtime outlives the run);
                // the graph's edges order this store after the
                // previous iteration's `take` on PE `to` (carried
                // edge) and before this iteration's (edge put → take).
                unsafe { peer.add(j).write_volatile(value(ctx.pe, ctx.iteration, j)) };
            }
            Ok(())
        }))
        .unwrap();
    let take = g
        .add_kind(
            TaskKind::new("take", "")
                .args::<Buf>()
                .with_cpu(move |ctx| {
                    let from = (ctx.pe + 2) % 3;
                    let mine = ctx.args::<Buf>().addr as *const u64;
                    for j in 0..N {
                        // SAFETY: our own copy of the buffer; the writer
                        // (`put` on PE `from`) finished before this instance
                        // was claimed (edge put → take, through a proxy).
                        let v = unsafe { mine.add(j).read_volatile() };
                        if v != value(from, ctx.iteration, j) {
                            return Err(j as u32 + 1);
                        }
                    }
                    Ok(())
                }),
        )
        .unwrap();
    let puts: Vec<TaskId> = (0..pes)
        .map(|pe| {
            let t = g.add_task(put, &Buf { addr: buf.addr(pe) });
            g.set_pe(t, pe);
            t
        })
        .collect();
    let takes: Vec<TaskId> = (0..pes)
        .map(|pe| {
            let t = g.add_task(take, &Buf { addr: buf.addr(pe) });
            g.set_pe(t, pe);
            t
        })
        .collect();
    for pe in 0..pes as usize {
        let next = (pe + 1) % pes as usize;
        g.add_edge(puts[pe], takes[next])
            .add_carried_edge(takes[next], puts[pe]);
    }
    let report = rt.run(&g, 100).unwrap();
    assert_eq!(report.instances, 6 * 100);
    // The last iteration's values are in every PE's copy.
    for pe in 0..pes {
        let from = (pe + 2) % pes;
        let got = buf.to_vec(pe).unwrap();
        assert_eq!(got[5], value(from, 99, 5), "PE {pe}");
    }
}

#[test]
fn finish_at_never_lets_a_dependent_of_the_stopping_instance_run_past_it() {
    // `s` calls finish_at(n) in iteration n - 1; every `x` needs the
    // previous iteration of `s` (carried edge) and nothing else, so its
    // completions race with s's: a claim that saw s's instance n - 1 done
    // must also see the lowered limit, so no x ever runs instance n. (The
    // window of that race is a few instructions wide; the loom model
    // `early_finish_is_exact_for_a_dependent_whose_completion_races_the_stop`
    // checks it exhaustively. This test checks the limit end to end.)
    for round in 0..20u32 {
        let stop = 3 + round % 5;
        let max_seen = Arc::new(AtomicU32::new(0));
        let mut g = Graph::new();
        let m = max_seen.clone();
        let x = g
            .add_kind(TaskKind::new("x", "").with_cpu(move |ctx| {
                m.fetch_max(ctx.iteration, Ordering::Relaxed);
                Ok(())
            }))
            .unwrap();
        let s = g
            .add_kind(
                TaskKind::new("s", "")
                    .may_finish_early()
                    .with_cpu(move |ctx| {
                        if ctx.iteration + 1 == stop {
                            ctx.finish_at(stop)?;
                        }
                        Ok(())
                    }),
            )
            .unwrap();
        let st = g.add_task_bytes(s, &[]);
        g.set_pe(st, 1);
        for _ in 0..6 {
            let t = g.add_task_bytes(x, &[]);
            g.set_pe(t, 1).add_carried_edge(st, t);
        }
        let report = emulator::run_pes(&g, 1000, 2, &cfg(1, 3)).unwrap();
        assert_eq!(report.iterations, stop);
        assert_eq!(
            max_seen.load(Ordering::Relaxed),
            stop - 1,
            "round {round}: a dependent of the stopping instance ran instance {stop} or later"
        );
    }
}

/// A chain of pinned tasks on their own workers: `s` lowers the limit to
/// `at + 1` at iteration `at`; `x` needs `s`'s same instance, `y` `x`'s
/// previous one, `z` `y`'s previous one. Pinned words carry the limit
/// their worker knew: `y` learns of the stop only through `x`'s word and
/// `z` through `y`'s, so each runs exactly `at + 1` instances (never a
/// multiple of 16 here, where pinned workers also read the limit). The GPU
/// runs the same graph (`gpu_multipe`); loom model (d) checks the rule
/// exhaustively.
#[test]
fn finish_at_is_exact_along_a_chain_of_pinned_tasks() {
    for round in 0..10u32 {
        let at = 20 + round % 3;
        let counts: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
        let mut g = Graph::new();
        let c = counts.clone();
        let counted = g
            .add_kind(TaskKind::new("counted", "").with_cpu(move |ctx| {
                c[ctx.task as usize].fetch_add(1, Ordering::Relaxed);
                Ok(())
            }))
            .unwrap();
        let c = counts.clone();
        let stopper = g
            .add_kind(
                TaskKind::new("stopper", "")
                    .may_finish_early()
                    .with_cpu(move |ctx| {
                        c[ctx.task as usize].fetch_add(1, Ordering::Relaxed);
                        if ctx.iteration == at {
                            ctx.finish_at(at + 1)?;
                        }
                        Ok(())
                    }),
            )
            .unwrap();
        let ids: Vec<_> = (0..4u32)
            .map(|slot| {
                let t = g.add_task_bytes(if slot == 0 { stopper } else { counted }, &[]);
                g.pin(t, slot);
                t
            })
            .collect();
        g.add_edge(ids[0], ids[1]);
        g.add_carried_edge(ids[1], ids[2]);
        g.add_carried_edge(ids[2], ids[3]);
        let report = emulator::run_pes(&g, 1000, 1, &cfg(1, 4)).unwrap();
        assert_eq!(report.iterations, at + 1);
        let got: Vec<u32> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        assert_eq!(got, [at + 1; 4], "round {round}: instances per task");
    }
}

/// `CpuCtx::task` is the graph's id, as the device's `ctx.task`, and
/// `CpuCtx::local` the PE's, as `ctx.local` (the CPU's `task` was the
/// PE-local id once, so a body indexing by it differed between backends
/// on several PEs).
#[test]
fn cpu_ctx_task_is_the_graphs_id_as_on_the_device() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("who", "").with_cpu(move |ctx| {
            s.lock().unwrap().push((ctx.task, ctx.local, ctx.pe));
            Ok(())
        }))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    let c = g.add_task_bytes(k, &[]);
    g.set_pe(a, 0).set_pe(b, 1).set_pe(c, 1);
    emulator::run_pes(&g, 1, 2, &cfg(1, 1)).unwrap();
    let mut v = seen.lock().unwrap().clone();
    v.sort();
    assert_eq!(v, vec![(0, 0, 0), (1, 0, 1), (2, 1, 1)]);
}

/// An early stop on one PE only: the PE that depends on it waits for
/// instances that will never run and times out — and the report says the
/// other PE stopped early and why that leaves it waiting.
#[test]
fn a_stop_on_one_pe_only_is_named_in_the_timeout_report() {
    let mut g = Graph::new();
    let stop = g
        .add_kind(
            TaskKind::new("stopper", "")
                .may_finish_early()
                .with_cpu(|ctx| {
                    if ctx.iteration == 2 {
                        ctx.finish_at(3)?;
                    }
                    Ok(())
                }),
        )
        .unwrap();
    let k = g
        .add_kind(TaskKind::new("follower", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(stop, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.set_pe(a, 0).set_pe(b, 1);
    g.add_edge(a, b);
    let c = EmulatorConfig {
        timeout: Duration::from_millis(300),
        ..cfg(1, 1)
    };
    match emulator::run_pes(&g, 10, 2, &c) {
        Err(Error::DeviceTimeout { report, .. }) => {
            assert!(
                report.contains("stopped early: finish_at lowered its limit to 3 of 10"),
                "{report}"
            );
        }
        other => panic!("expected DeviceTimeout, got {other:?}"),
    }
}
