//! Dispatch bench: what one empty task costs the device-side scheduler, next
//! to the ways CUDA users get the same work done without it. Everything runs
//! in one process, interleaved rep by rep so clock and thermal drift hit
//! every variant alike, and is timed with device events.
//!
//! Case families (`<gpu>/dispatch/<family>/<size>`), each at several sizes
//! so the report can draw time against size:
//!
//! - `chain/N`: dependent hand-off latency. autarky runs a graph of N empty
//!   tasks with edges i → i+1 for one iteration; the events bracket the one
//!   cooperative launch, so the time includes launch and block start-up
//!   (a few µs, amortized over N). Per hand-off = time / N. The in-kernel
//!   `%globaltimer` span (first block entry → last block exit) is reported
//!   as a reference series.
//! - `self-chain/N`: one task run for N iterations; every instance waits for
//!   the previous one (the implicit self edge), so this is the same latency
//!   without any graph-table walk to a different task.
//! - Baselines for both: `launch/task` is N back-to-back launches of an
//!   empty kernel (1 block × 32 threads) on one stream; `cuda-graph` is the
//!   same N launches captured into a CUDA graph, timed per replay.
//! - `independent/T·M`: throughput. T independent empty tasks, each run for
//!   M iterations. T = 4 × the compute blocks of the grid these runs get
//!   (read from a one-instance run: the graph's lean kernel may have
//!   another occupancy than the header's), so the work divides evenly into
//!   rounds: a block keeps a task's instances until its M are done, then
//!   takes another. On an H200 at 8 blocks/SM with one comm block that is
//!   (132·8 − 1)·4 = 4220. Baselines (DESIGN.md's "atomic
//!   claim"): a persistent kernel on the same grid whose thread 0 of each
//!   block claims task indices with `atomicAdd` on one global counter until
//!   T·M are claimed (`atomic-claim`), and the same with the claimed index
//!   broadcast to the whole block through shared memory
//!   (`atomic-claim+bcast`), which is what a block-wide task body needs.
//!
//! The ratio column is always baseline time / autarky time per task: above
//! 1 autarky is faster.
//!
//! Run: `cargo bench --bench dispatch`. Knobs (env or `-- --flag`):
//! `AUTARKY_BENCH_QUICK=1` / `--quick` (N = 100, 1000; 3 reps; 10⁵ and 10⁶
//! instances), `AUTARKY_BENCH_N` / `--n=` (comma list), `AUTARKY_BENCH_REPS`
//! / `--reps=`, `AUTARKY_BENCH_INSTANCES` / `--instances=` (comma list of
//! T·M targets), `AUTARKY_BENCH_OUT` (directory for `results.json` and the
//! SVG charts, default `target/bench-report/`), `AUTARKY_BENCH_TRACE=1` /
//! `--trace` (also run every autarky variant traced, `RunOptions::trace`,
//! in the same reps, and print traced / untraced time per case: the
//! tracing overhead), `AUTARKY_BENCH_TRACE_RECORDS` / `--trace-records=`
//! (records per block of those traces, default 4096; a full ring
//! overwrites, which costs the same as keeping, so small rings measure the
//! same overhead), `AUTARKY_BENCH_TRACE_DIR` / `--trace-dir=` (write each
//! traced case's last trace there as Chrome JSON, `<case>-<tasks>.json`;
//! implies `--trace`), `AUTARKY_BENCH_STENCIL_BLOCKS` / `--stencil-blocks=`
//! and `AUTARKY_BENCH_STENCIL_COUNTED` / `--stencil-counted=` (extra rows
//! of the dynamic stencil: on runtimes of that many compute blocks, or
//! with its tiles counted from that many inputs), `AUTARKY_BENCH_STENCIL_PATCHES`
//! / `--stencil-patches=` (extra rows of the pinned stencil in P × P
//! patches a block, on the shared runtime and on one of as many compute
//! blocks as patches), `AUTARKY_BENCH_STENCIL_ITERS` / `--stencil-iters=`
//! (iterations of each stencil run), `AUTARKY_BENCH_STENCIL_REPS=1` (each
//! rep's stencil times on stderr, with one more graph replay first in the
//! rep: a diagnostic). Without a GPU or NVRTC
//! it prints `SKIP dispatch bench: <reason>` and exits 0.
//!
//! Modules: `config` (knobs), `cases` (what is measured, the table),
//! `baselines` (the CUDA kernels compared against); the report writer is
//! shared with the other benches (`benches/common/report.rs`).

// The baselines pass `autarky::Error` through unchanged; its size is the
// library's business, not this bench's.
#![allow(clippy::result_large_err)]

mod baselines;
mod cases;
mod config;
#[path = "../common/probe.rs"]
mod probe;
#[path = "../common/report.rs"]
mod report;

use std::error::Error as StdError;

use autarky::runtime::driver::DeviceMem;

use autarky::Graph;

use baselines::{Baselines, ClaimBuffers};
use cases::{
    chain_graph, empty_kind, fan_in_graph, independent_graph, run_autarky, stencil_graph, table,
    Case, Metric, Role, FAN_IN_REFERENCE, FAN_IN_TARGET_FACTOR, STENCIL_REFERENCE,
    STENCIL_TARGET_FACTOR, TARGET_CHAIN_US, TARGET_NEXT_INSTANCE_US,
};
use config::Config;
use report::gpu_slug;

pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

fn skip(reason: &str) -> BoxResult<()> {
    report::skip("dispatch", reason, &report::out_dir());
    Ok(())
}

fn main() -> BoxResult<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let cfg = Config::from_env_and_args()?;

    let (rt, props) = match probe::gpu()? {
        probe::Probe::Gpu(rt, props) => (rt, props),
        probe::Probe::Skip(why) => return skip(&why),
    };
    let ctx = rt.context().ok_or("the GPU runtime has no context")?;
    let slug = gpu_slug(&props.name);

    // ---- graphs (all of one kind, so they share one megakernel) ----
    let chains: Vec<(u32, Graph)> = cfg.sizes.iter().map(|&n| (n, chain_graph(n))).collect();
    let single = chain_graph(1);
    let (per_sm, regs) = rt
        .kernel_info(&single)
        .map_err(|e| format!("compiling the megakernel: {e}"))?
        .ok_or("kernel_info returned None on the GPU backend")?;
    let grid = per_sm * props.sm_count;
    let threads = rt.threads_per_block();
    // T = 4 per compute block of the grid the independent runs get. (Until
    // session 9 it was 4 per block of the grid, comm blocks included: with
    // one comm block, 4 tasks were left for a fifth round that ran alone
    // for ~250 µs, a fifth of the case's time, while every other block
    // polled an empty queue.) Each run compiles the lean kernel variant its
    // graph allows, whose occupancy may differ from `kernel_info`'s (the
    // one-task chain's variant), so the grid is read from a one-instance
    // run of the same kind of graph.
    let (comm_blocks, _) = rt
        .blocks_per_pe(&[empty_kind()])
        .map_err(|e| format!("the megakernel's block split: {e}"))?;
    let run_grid = rt
        .run(&independent_graph(1), 1)
        .map_err(|e| format!("sizing the independent case: {e}"))?
        .per_block
        .len() as u32;
    let compute_blocks = run_grid
        .checked_sub(comm_blocks)
        .filter(|&c| c > 0)
        .ok_or_else(|| {
            format!(
                "a grid of {run_grid} blocks has no compute block after {comm_blocks} comm blocks"
            )
        })?;
    let t_tasks = 4 * compute_blocks as u64;
    let indep = independent_graph(t_tasks);
    let mut throughput: Vec<(u32, u64)> = Vec::new();
    for &target in &cfg.instances {
        let m = target.div_ceil(t_tasks).max(1);
        let m = u32::try_from(m).map_err(|_| format!("M = {m} iterations is too many"))?;
        if !throughput.iter().any(|&(mm, _)| mm == m) {
            throughput.push((m, t_tasks * m as u64));
        }
    }

    // The fan-in cases: W inputs (cfg.fan_in; the row is 1000)
    // joined by one sink, M_FAN iterations, against the same number of
    // independent tasks, and against the join without arrival counting (a
    // runtime whose counted_fan_in no task reaches: every completion of an
    // input scans the sink's inputs).
    let m_fan: u32 = if cfg.quick { 20 } else { 200 };
    let fans: Vec<(u64, Graph, Graph)> = cfg
        .fan_in
        .iter()
        .map(|&w| (w, fan_in_graph(w), independent_graph(w + 1)))
        .collect();
    let rt_uncounted = autarky::Runtime::builder()
        .gpu()
        .counted_fan_in(u32::MAX)
        .build()
        .map_err(|e| format!("a runtime without arrival counting: {e}"))?;

    // The stencil case: a 32 × 32 grid of empty tiles with neighbour edges
    // of distance 1 (about one tile per compute block), dynamic and pinned,
    // against a CUDA graph of one 1024-block launch per iteration.
    const STENCIL: u32 = 32;
    let m_stencil: u32 = cfg
        .stencil_iters
        .unwrap_or(if cfg.quick { 50 } else { 500 });
    let stencil = stencil_graph(STENCIL, STENCIL, None);
    let stencil_pinned = if STENCIL * STENCIL < grid {
        Some(stencil_graph(STENCIL, STENCIL, Some(1)))
    } else {
        None
    };
    // `--stencil-patches`: the same tiles pinned P × P a block, on the
    // shared runtime and on one of as many compute blocks as patches (no
    // idle dynamic blocks beside the pinned ones). (A row name lives as
    // long as the bench: the table's names are &'static.)
    let stencil_patched: Vec<(Graph, &'static str, Option<autarky::Runtime>)> = cfg
        .stencil_patches
        .iter()
        .filter(|&&p| (STENCIL / p) * (STENCIL / p) < grid)
        .flat_map(|&p| {
            let blocks = (STENCIL / p) * (STENCIL / p);
            [false, true].map(|own| {
                let name = if own {
                    format!("autarky pinned, {p}×{p} a block, {blocks} compute blocks")
                } else {
                    format!("autarky pinned, {p}×{p} a block")
                };
                (
                    stencil_graph(STENCIL, STENCIL, Some(p)),
                    name,
                    own.then_some(blocks),
                )
            })
        })
        .map(|(g, name, blocks)| {
            let rt = match blocks {
                Some(n) => Some(
                    autarky::Runtime::builder()
                        .gpu()
                        .compute_blocks(n)
                        .build()
                        .map_err(|e| format!("a runtime for {name:?}: {e}"))?,
                ),
                None => None,
            };
            let name: &'static str = Box::leak(name.into_boxed_str());
            Ok((g, name, rt))
        })
        .collect::<BoxResult<Vec<_>>>()?;

    // `--stencil-blocks`: the dynamic stencil on runtimes of fewer (or
    // more) compute blocks, each a row of its own;
    // `--stencil-counted`: its tiles counted (counted_fan_in).
    let by_blocks = cfg.stencil_blocks.iter().map(|&n| {
        (
            autarky::Runtime::builder().gpu().compute_blocks(n),
            format!("autarky, {n} compute blocks"),
        )
    });
    let by_counted = cfg.stencil_counted.iter().map(|&n| {
        (
            autarky::Runtime::builder().gpu().counted_fan_in(n),
            format!("autarky, counted from {n}"),
        )
    });
    let stencil_rts = by_blocks
        .chain(by_counted)
        .map(|(builder, name)| {
            let rt = builder
                .build()
                .map_err(|e| format!("a runtime for {name:?}: {e}"))?;
            // A row name lives as long as the bench (the table's names are
            // &'static).
            let name: &'static str = Box::leak(name.into_boxed_str());
            Ok((rt, name))
        })
        .collect::<BoxResult<Vec<_>>>()?;

    let base =
        Baselines::new(ctx, props.arch()).map_err(|e| format!("building the baselines: {e}"))?;
    let stencil_exec = base
        .capture_grid(m_stencil, STENCIL * STENCIL)
        .map_err(|e| format!("capturing the stencil's launches: {e}"))?;
    let bufs = ClaimBuffers {
        counter: DeviceMem::alloc(ctx, 8)?,
        per_block: DeviceMem::alloc(ctx, 8 * grid as usize)?,
    };
    let execs = cfg
        .sizes
        .iter()
        .map(|&n| {
            base.capture(n)
                .map_err(|e| format!("capturing {n} launches into a CUDA graph: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;

    println!(
        "dispatch bench on {} (sm_{}, {} SMs): megakernel {per_sm} blocks/SM × {threads} threads, {regs} regs → grid {grid}; independent runs: {comm_blocks} comm + {compute_blocks} compute blocks; \
         N = {:?}, T = {t_tasks}, M = {:?}; {} warm-up + {} timed reps per case{}",
        props.name,
        props.arch(),
        props.sm_count,
        cfg.sizes,
        throughput.iter().map(|&(m, _)| m).collect::<Vec<_>>(),
        cfg.warmup,
        cfg.reps,
        if cfg.quick { " (QUICK: not for reporting)" } else { "" }
    );

    use Role::*;
    let traced: &[(&str, Role)] = if cfg.trace.is_some() {
        &[("autarky traced", AutarkyTraced)]
    } else {
        &[]
    };
    let chain_variants: Vec<(&str, Role)> = [
        ("autarky", Autarky),
        ("autarky in-kernel", AutarkyInKernel),
        ("launch/task", Baseline),
        ("cuda-graph", Baseline),
    ]
    .into_iter()
    .chain(traced.iter().copied())
    .collect();
    let mut cases = Vec::new();
    for &n in &cfg.sizes {
        for family in ["chain", "self-chain"] {
            cases.push(Case::new(
                &slug,
                family,
                n as u64,
                if family == "chain" {
                    "tasks in the chain (N)"
                } else {
                    "iterations of one task (N)"
                },
                Metric::HandoffUs {
                    n: n as u64,
                    limit_us: if family == "chain" {
                        TARGET_CHAIN_US
                    } else {
                        TARGET_NEXT_INSTANCE_US
                    },
                },
                vec![("n", n as u64)],
                &chain_variants,
            ));
        }
    }
    for &(m, total) in &throughput {
        cases.push(Case::new(
            &slug,
            "independent",
            total,
            "task instances (T·M)",
            Metric::RateG { instances: total },
            vec![
                ("tasks", t_tasks),
                ("iterations", m as u64),
                ("instances", total),
                ("grid", grid as u64),
            ],
            &[
                ("autarky", Autarky),
                ("autarky in-kernel", AutarkyInKernel),
                ("atomic-claim", Baseline),
                ("atomic-claim+bcast", Baseline),
            ]
            .into_iter()
            .chain(traced.iter().copied())
            .collect::<Vec<_>>(),
        ));
    }
    for &(w, _, _) in &fans {
        cases.push(Case::new(
            &slug,
            "fan-in",
            w,
            "inputs of the join",
            Metric::IterationUs {
                iterations: m_fan as u64,
                reference: FAN_IN_REFERENCE,
                factor: FAN_IN_TARGET_FACTOR,
            },
            vec![("inputs", w), ("iterations", m_fan as u64)],
            &[
                ("autarky", Autarky),
                ("autarky in-kernel", AutarkyInKernel),
                (FAN_IN_REFERENCE, Baseline),
                ("uncounted (scan per input)", Baseline),
            ]
            .into_iter()
            .chain(traced.iter().copied())
            .collect::<Vec<_>>(),
        ));
    }
    cases.push(Case::new(
        &slug,
        "stencil",
        (STENCIL * STENCIL) as u64,
        "tiles (32 × 32, neighbour edges of distance 1)",
        Metric::IterationUs {
            iterations: m_stencil as u64,
            reference: STENCIL_REFERENCE,
            factor: STENCIL_TARGET_FACTOR,
        },
        vec![
            ("tiles", (STENCIL * STENCIL) as u64),
            ("iterations", m_stencil as u64),
        ],
        &[
            ("autarky", Autarky),
            ("autarky in-kernel", AutarkyInKernel),
            ("autarky pinned", AutarkyAlt),
            (STENCIL_REFERENCE, Baseline),
        ]
        .into_iter()
        .chain(
            stencil_patched
                .iter()
                .map(|&(_, name, _)| (name, AutarkyAlt)),
        )
        .chain(stencil_rts.iter().map(|&(_, name)| (name, AutarkyAlt)))
        .collect::<Vec<_>>(),
    ));
    let find = |cases: &mut Vec<Case>, family: &str, size: u64| -> usize {
        cases
            .iter()
            .position(|c| c.family == family && c.size == size)
            .expect("every (family, size) has a case")
    };

    // Traced runs, when asked for: (case name, records dropped in the last rep).
    let mut dropped: Vec<(String, u64)> = Vec::new();
    let mut traced_run = |cases: &mut Vec<Case>,
                          i: usize,
                          g: &Graph,
                          iters: u32,
                          what: &str,
                          keep: bool|
     -> BoxResult<()> {
        let Some(records) = cfg.trace else {
            return Ok(());
        };
        let t = run_autarky(&rt, g, iters, what, Some(records))?;
        if let (Some(dir), Some(tr)) = (&cfg.trace_dir, &t.trace) {
            // Every rep overwrites the case's file: the last one stays.
            let name: String = what
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let path = dir.join(format!("{name}-{}.json", g.num_tasks()));
            tr.write_chrome_json(&path)
                .map_err(|e| format!("writing the trace of {what}: {e}"))?;
        }
        if keep {
            cases[i].push("autarky traced", t.event_s);
            let name = cases[i].name.clone();
            dropped.retain(|(n, _)| *n != name);
            dropped.push((name, t.dropped.unwrap_or(0)));
        }
        Ok(())
    };

    // Every rep runs every variant once, so drift is shared; the first
    // `warmup` reps are thrown away.
    for rep in 0..cfg.warmup + cfg.reps {
        let keep = rep >= cfg.warmup;
        for ((n, chain), exec) in chains
            .iter()
            .zip(&execs)
            .filter(|_| cfg.runs("chain") || cfg.runs("self-chain"))
        {
            let n = *n;
            let c = run_autarky(&rt, chain, 1, "chain", None)?;
            let (ev, dev) = (c.event_s, c.device_s);
            let i = find(&mut cases, "chain", n as u64);
            traced_run(&mut cases, i, chain, 1, "chain traced", keep)?;
            let launches = base
                .launches(n)
                .map_err(|e| format!("launch/task baseline: {e}"))?;
            let replay = base
                .replay(exec)
                .map_err(|e| format!("cuda-graph baseline: {e}"))?;
            let s = run_autarky(&rt, &single, n, "self-chain", None)?;
            let (sev, sdev) = (s.event_s, s.device_s);
            let i = find(&mut cases, "self-chain", n as u64);
            traced_run(&mut cases, i, &single, n, "self-chain traced", keep)?;
            if !keep {
                continue;
            }
            for (family, ev, dev) in [("chain", ev, dev), ("self-chain", sev, sdev)] {
                let i = find(&mut cases, family, n as u64);
                let c = &mut cases[i];
                c.push("autarky", ev);
                if let Some(d) = dev {
                    c.push("autarky in-kernel", d);
                }
                c.push("launch/task", launches);
                c.push("cuda-graph", replay);
            }
        }
        for &(m, total) in throughput.iter().filter(|_| cfg.runs("independent")) {
            let a = run_autarky(&rt, &indep, m, "independent", None)?;
            let (iev, idev) = (a.event_s, a.device_s);
            let i = find(&mut cases, "independent", total);
            traced_run(&mut cases, i, &indep, m, "independent traced", keep)?;
            let claim = base.claim(base.claim, &bufs, grid, threads, total)?;
            let claim_b = base.claim(base.claim_bcast, &bufs, grid, threads, total)?;
            if !keep {
                continue;
            }
            let i = find(&mut cases, "independent", total);
            let c = &mut cases[i];
            c.push("autarky", iev);
            if let Some(d) = idev {
                c.push("autarky in-kernel", d);
            }
            c.push("atomic-claim", claim);
            c.push("atomic-claim+bcast", claim_b);
        }
        for (w, fan, fan_indep) in fans.iter().filter(|_| cfg.runs("fan-in")) {
            let f = run_autarky(&rt, fan, m_fan, "fan-in", None)?;
            let fi = run_autarky(&rt, fan_indep, m_fan, "fan-in reference", None)?;
            let fu = run_autarky(&rt_uncounted, fan, m_fan, "fan-in uncounted", None)?;
            let i = find(&mut cases, "fan-in", *w);
            traced_run(&mut cases, i, fan, m_fan, "fan-in traced", keep)?;
            if keep {
                let c = &mut cases[i];
                c.push("autarky", f.event_s);
                if let Some(d) = f.device_s {
                    c.push("autarky in-kernel", d);
                }
                c.push(FAN_IN_REFERENCE, fi.event_s);
                c.push("uncounted (scan per input)", fu.event_s);
            }
        }
        if !cfg.runs("stencil") {
            continue;
        }
        // AUTARKY_BENCH_STENCIL_REPS=1 (a diagnostic, session 42): each
        // rep's stencil times on stderr, and one more graph replay first
        // in the rep (printed only) — the graph's reps after the patch rows
        // ran 16 % slower than in a run without them.
        let rep_log = std::env::var("AUTARKY_BENCH_STENCIL_REPS").is_ok_and(|v| v == "1");
        let g_first = if rep_log {
            Some(
                base.replay(&stencil_exec)
                    .map_err(|e| format!("stencil cuda-graph baseline: {e}"))?,
            )
        } else {
            None
        };
        let st = run_autarky(&rt, &stencil, m_stencil, "stencil", None)?;
        let sp = match &stencil_pinned {
            Some(g) => Some(run_autarky(&rt, g, m_stencil, "stencil pinned", None)?),
            None => None,
        };
        let sg = base
            .replay(&stencil_exec)
            .map_err(|e| format!("stencil cuda-graph baseline: {e}"))?;
        let mut extra_rows = Vec::with_capacity(stencil_rts.len());
        for (g, name, own) in &stencil_patched {
            extra_rows.push((
                *name,
                run_autarky(own.as_ref().unwrap_or(&rt), g, m_stencil, name, None)?.event_s,
            ));
        }
        for (rt_b, name) in &stencil_rts {
            extra_rows.push((
                *name,
                run_autarky(rt_b, &stencil, m_stencil, name, None)?.event_s,
            ));
        }
        if let Some(first) = g_first {
            let per = |s: f64| s * 1e6 / m_stencil as f64;
            let mut line = format!(
                "stencil rep {rep}: graph first {:.3}, dynamic {:.3}, pinned {}, graph {:.3}",
                per(first),
                per(st.event_s),
                sp.as_ref()
                    .map_or("-".into(), |p| format!("{:.3}", per(p.event_s))),
                per(sg)
            );
            for (name, s) in &extra_rows {
                line += &format!(", {name} {:.3}", per(*s));
            }
            eprintln!("{line} µs/iteration");
        }
        if keep {
            let i = find(&mut cases, "stencil", (STENCIL * STENCIL) as u64);
            let c = &mut cases[i];
            c.push("autarky", st.event_s);
            if let Some(d) = st.device_s {
                c.push("autarky in-kernel", d);
            }
            if let Some(p) = sp {
                c.push("autarky pinned", p.event_s);
            }
            c.push(STENCIL_REFERENCE, sg);
            for (name, s) in extra_rows {
                c.push(name, s);
            }
        }
    }

    // (`--only`: the families that ran; a chain size runs both chains.)
    cases.retain(|c| {
        cfg.runs(c.family)
            || (c.family.ends_with("chain") && (cfg.runs("chain") || cfg.runs("self-chain")))
    });
    println!();
    print!("{}", table(&cases));
    println!(
        "ratio = baseline time / autarky time per task (> 1: autarky faster); spread over {} timed reps; \
         'autarky' is device events around the one launch, 'in-kernel' is %globaltimer first entry → last exit.",
        cfg.reps
    );
    if let Some(records) = cfg.trace {
        println!();
        println!(
            "tracing overhead (AUTARKY_BENCH_TRACE=1, {records} records per block): traced / untraced device-event time, medians"
        );
        for c in &cases {
            let lost = dropped
                .iter()
                .find(|(n, _)| *n == c.name)
                .map_or(0, |(_, d)| *d);
            match c.trace_overhead() {
                Some(x) => println!(
                    "  {:<40} {x:.3}×  ({lost} records overwritten in the last rep)",
                    c.name
                ),
                None => println!("  {:<40} —", c.name),
            }
        }
    }
    let mut facts = serde_json::Map::new();
    for (k, v) in [
        ("device", serde_json::json!(props.name)),
        ("arch", props.arch().into()),
        ("sm_count", props.sm_count.into()),
        ("blocks_per_sm", per_sm.into()),
        ("registers", regs.into()),
        ("threads_per_block", threads.into()),
        ("grid", grid.into()),
        ("quick", cfg.quick.into()),
        ("trace_records_per_block", cfg.trace.into()),
        ("warmup", cfg.warmup.into()),
        ("reps", cfg.reps.into()),
        (
            "ratio",
            "baseline time / autarky time per task; > 1 means autarky is faster".into(),
        ),
    ] {
        facts.insert(k.to_string(), v);
    }
    let rep = report::Report {
        bench: "dispatch".into(),
        facts,
        cases: cases.iter().filter_map(Case::to_result).collect(),
    };
    let w = report::write(&rep, &report::out_dir())?;
    println!("wrote {}", w.json.display());
    for c in &w.charts {
        println!("wrote {}", c.display());
    }
    Ok(())
}
