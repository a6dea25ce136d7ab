//! The autarky command line.
//!
//!   autarky info                       what backend and device autarky finds
//!   autarky dag [TASKS] [ITERATIONS]   run a random demonstration DAG with
//!                                      loop-carried edges (GPU if present,
//!                                      else the CPU emulator) and check it
//!   autarky chain [TASKS] [ITERATIONS] [RUNS]
//!                                      a chain of empty tasks, run RUNS times
//!                                      (for profilers: one warm-up, then the
//!                                      measured runs; prints µs per instance)

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use autarky::{Graph, Runtime, TaskId, TaskKind};

fn usage() -> ExitCode {
    eprintln!("usage: autarky info | autarky dag [TASKS=2000] [ITERATIONS=50] | autarky chain [TASKS=1] [ITERATIONS=10000] [RUNS=3]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("info") => info(),
        Some("dag") => {
            let num = |i: usize, d: u64| args.get(i).map_or(Ok(d), |s| s.parse::<u64>());
            match (num(1, 2000), num(2, 50)) {
                (Ok(t), Ok(i)) => dag(t as usize, i as u32),
                _ => return usage(),
            }
        }
        Some("chain") => {
            let num = |i: usize, d: u64| args.get(i).map_or(Ok(d), |s| s.parse::<u64>());
            match (num(1, 1), num(2, 10_000), num(3, 3)) {
                (Ok(t), Ok(i), Ok(r)) => chain(t as usize, i as u32, r as usize),
                _ => return usage(),
            }
        }
        _ => return usage(),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn info() -> autarky::Result<()> {
    let rt = Runtime::builder().build()?;
    println!("backend: {}", rt.backend_name());
    if let Some(p) = rt.device_props() {
        println!(
            "device: {} (sm_{}, {} SMs, {:.1} GiB)",
            p.name,
            p.arch(),
            p.sm_count,
            p.total_mem as f64 / (1u64 << 30) as f64
        );
    }
    match autarky::runtime::nvrtc::nvrtc_info() {
        Ok(n) => println!(
            "nvrtc: {}.{} at {}",
            n.version.0,
            n.version.1,
            n.path.display()
        ),
        Err(e) => println!("nvrtc: {e}"),
    }
    Ok(())
}

/// A kind with a GPU body (a little arithmetic per thread, then a block
/// reduction that must equal the closed form) and a CPU body (the same
/// check), so the demo runs on either backend.
fn work_kind(checks: Arc<AtomicU64>) -> TaskKind {
    TaskKind::new(
        "work",
        r#"__device__ void work(autarky::TaskCtx& ctx) {
             __shared__ unsigned long long sum;
             if (threadIdx.x == 0) sum = 0;
             __syncthreads();
             unsigned long long v = (unsigned long long)threadIdx.x * (ctx.iteration + 1) + ctx.task;
             atomicAdd(&sum, v);
             __syncthreads();
             const unsigned long long n = blockDim.x;
             const unsigned long long want = (n * (n - 1) / 2) * (ctx.iteration + 1) + n * ctx.task;
             if (threadIdx.x == 0 && sum != want) ctx.fail(sum);
           }"#,
    )
    .with_cpu(move |ctx| {
        let n = 128u64;
        let sum: u64 = (0..n).map(|t| t * (ctx.iteration as u64 + 1) + ctx.task as u64).sum();
        checks.fetch_add(1, Ordering::Relaxed);
        if sum == (n * (n - 1) / 2) * (ctx.iteration as u64 + 1) + n * ctx.task as u64 {
            Ok(())
        } else {
            Err(1)
        }
    })
}

fn dag(tasks: usize, iterations: u32) -> autarky::Result<()> {
    let rt = Runtime::builder().build()?;
    let checks = Arc::new(AtomicU64::new(0));
    let mut g = Graph::new();
    let k = g.add_kind(work_kind(checks.clone()))?;
    let t: Vec<TaskId> = (0..tasks.max(1))
        .map(|_| g.add_task_bytes(k, &[]))
        .collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut edges = 0;
    for s in 1..t.len() {
        for _ in 0..rnd(3) {
            g.add_edge(t[s - 1 - rnd(s.min(32))], t[s]);
            edges += 1;
        }
        if rnd(8) == 0 {
            g.add_carried_edge(t[rnd(t.len())], t[s]);
            edges += 1;
        }
    }
    println!(
        "running a random DAG: {} tasks, {edges} edges (some loop-carried), {iterations} iterations, on the {} backend",
        t.len(),
        rt.backend_name()
    );
    let r = rt.run(&g, iterations)?;
    let want = t.len() as u64 * iterations as u64;
    println!(
        "completed {} of {want} instances in {:?} (host wall){}",
        r.instances,
        r.wall,
        r.device_ns
            .map(|ns| format!(", {:.3} ms on the device", ns as f64 / 1e6))
            .unwrap_or_default()
    );
    if let Some(calls) = (!r.driver_calls.is_empty()).then_some(&r.driver_calls) {
        println!(
            "host driver calls during the run: 1 launch + {} stream queries (CPU-free)",
            calls.iter().filter(|c| **c == "cuStreamQuery").count()
        );
    }
    if r.instances != want {
        return Err(autarky::Error::InvalidConfig(format!(
            "expected {want} instances, got {}",
            r.instances
        )));
    }
    Ok(())
}

fn chain(tasks: usize, iterations: u32, runs: usize) -> autarky::Result<()> {
    let rt = Runtime::builder().build()?;
    let mut g = Graph::new();
    let k = g.add_kind(
        TaskKind::new("empty", "__device__ void empty(autarky::TaskCtx&) {}").with_cpu(|_| Ok(())),
    )?;
    let t: Vec<TaskId> = (0..tasks.max(1))
        .map(|_| g.add_task_bytes(k, &[]))
        .collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    let n = t.len() as f64 * iterations as f64;
    for run in 0..=runs {
        let r = rt.run(&g, iterations)?;
        let label = if run == 0 { "warm-up" } else { "run" };
        match r.device_ns {
            Some(ns) => println!(
                "{label}: {:.3} µs per instance (device clock)",
                ns as f64 / 1e3 / n
            ),
            None => println!("{label}: {:?} wall", r.wall),
        }
    }
    Ok(())
}
