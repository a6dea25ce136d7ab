//! `autarky dag`: a random DAG with loop-carried edges, run on the GPU or
//! the emulator, and checked: every instance ran exactly once, after all
//! its predecessors' instances ([`crate::dag_check`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use autarky::trace::{EventKind, Trace};
use autarky::{Graph, RunOptions, Runtime, TaskId, TaskKind, TraceOptions};
use serde_json::json;

use crate::dag_check::{self, Checked, HostLog, MAX_CHECKED_INSTANCES};
use crate::{plural, CliError, Ctx};

/// Most tasks a demonstration graph may have.
pub const MAX_TASKS: u32 = 1 << 20;

/// Run a random DAG with loop-carried edges and check that every instance
/// ran exactly once, after all its predecessors' instances.
///
/// Each task depends on up to two of the 32 tasks before it; about one in
/// eight also has a loop-carried edge (iteration i waits for iteration
/// i − 1 of a random task). Every instance logs start/end sequence numbers
/// from one global counter; the check reads them back.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tasks in the graph (1..=1048576).
    #[arg(default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=MAX_TASKS as i64))]
    tasks: u32,
    /// Iterations: instances of every task (1..=2147483647).
    #[arg(default_value_t = 50, value_parser = iterations_parser())]
    iterations: u32,
    /// Seed of the graph generator (non-zero).
    #[arg(long, default_value_t = 0x9e37_79b9_7f4a_7c15, value_parser = clap::value_parser!(u64).range(1..=u64::MAX))]
    seed: u64,
    /// Run without logging and checking every instance (for runs larger
    /// than the check's 2^27-instance log).
    #[arg(long)]
    no_check: bool,
    /// Write a Chrome/Perfetto trace to FILE and print its summary: every
    /// block's task instances, waits, idle time and signals, from the
    /// device trace rings on the GPU, from the emulated blocks on the
    /// emulator (the same events, on a host clock).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Records each block's trace ring keeps (with --trace; a power of
    /// two). A block that records more keeps the newest; the rest are
    /// reported as dropped.
    #[arg(long, value_name = "N", default_value_t = TraceOptions::DEFAULT_RECORDS,
          value_parser = trace_records_parser, requires = "trace")]
    trace_records: u32,
    /// Also make every 100th task a wide join: it waits for W random
    /// earlier tasks (0..=4096; 0: no wide joins). Joins of more than 8
    /// are checked block-wide and, by default, counted.
    #[arg(long, value_name = "W", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=4096))]
    wide_joins: u32,
    /// Count the arrivals of every task with at least N predecessor edges
    /// (Builder::counted_fan_in; 2..; default 9). 2 runs every join of the
    /// graph through arrival counters.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    counted_fan_in: Option<u32>,
}

/// `--trace-records`: a power of two in the runtime's range (dag, jacobi2d,
/// jacobi3d, cg).
pub(crate) fn trace_records_parser(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a record count"))?;
    if n.is_power_of_two() && (TraceOptions::MIN_RECORDS..=TraceOptions::MAX_RECORDS).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} is not a power of two in {}..={}",
            TraceOptions::MIN_RECORDS,
            TraceOptions::MAX_RECORDS
        ))
    }
}

/// The iteration range every graph command accepts.
pub fn iterations_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=autarky::abi::MAX_ITERATIONS as i64)
}

/// Arguments of the `work` kind on the GPU: where to log.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct DagArgs {
    /// u64[2 · instances]: (start, end) per instance; 0 = do not log.
    log: u64,
    /// u32[instances]: executions per instance.
    count: u64,
    /// u64: the global sequence counter.
    counter: u64,
    iterations: u32,
    _pad: u32,
}

/// The device body: every thread adds to a block reduction that must equal
/// the closed form (or the task fails), and thread 0 logs the instance like
/// `HostLog` does.
const WORK_SRC: &str = r#"
struct DagArgs { unsigned long long* log; unsigned* count; unsigned long long* counter; unsigned iterations; unsigned pad; };
__device__ void work(autarky::TaskCtx& ctx) {
    const DagArgs& a = ctx.args<DagArgs>();
    __shared__ unsigned long long sum;
    __shared__ unsigned long long start;
    if (threadIdx.x == 0) {
        sum = 0;
        if (a.log) start = atomicAdd(a.counter, 1ull);
    }
    __syncthreads();  // publish sum = 0 (and start) to the block
    const unsigned long long v = (unsigned long long)threadIdx.x * (ctx.iteration + 1) + ctx.task;
    atomicAdd(&sum, v);
    __syncthreads();  // publish every thread's contribution to sum
    const unsigned long long n = blockDim.x;
    const unsigned long long want = (n * (n - 1) / 2) * (ctx.iteration + 1) + n * ctx.task;
    if (threadIdx.x == 0) {
        if (sum != want) ctx.fail(sum);
        if (a.log) {
            const unsigned long long slot = (unsigned long long)ctx.task * a.iterations + ctx.iteration;
            atomicAdd(&a.count[slot], 1u);
            __threadfence();
            const unsigned long long end = atomicAdd(a.counter, 1ull);
            a.log[2 * slot] = start;
            a.log[2 * slot + 1] = end;
        }
    }
}
"#;

/// The `work` kind: the device body above, and a CPU body doing the same
/// check and logging into `log` when given.
fn work_kind(log: Option<Arc<HostLog>>) -> TaskKind {
    TaskKind::new("work", WORK_SRC)
        .args::<DagArgs>()
        .with_cpu(move |ctx| {
            let start = log.as_ref().map(|l| l.start());
            let n = 128u64;
            let it = ctx.iteration as u64 + 1;
            let sum: u64 = (0..n).map(|t| t * it + ctx.task as u64).sum();
            let ok = sum == (n * (n - 1) / 2) * it + n * ctx.task as u64;
            if let (Some(l), Some(s)) = (&log, start) {
                l.end(ctx.task, ctx.iteration, s);
            }
            if ok {
                Ok(())
            } else {
                Err(1)
            }
        })
}

/// What a written trace file holds: one complete event per task span and
/// per wait span, one mark per signal or pulse event (begin/end pairs that
/// do not match are left out of the file).
struct Written {
    task_spans: u64,
    wait_spans: u64,
    marks: u64,
}

impl Written {
    fn of(trace: &Trace) -> Written {
        let p = trace.pair();
        let marks = trace
            .events
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::SignalSent { .. }
                        | EventKind::SignalSeen
                        | EventKind::PulsePack
                        | EventKind::PulsePut
                )
            })
            .count();
        Written {
            task_spans: p.tasks.len() as u64,
            wait_spans: p.waits.len() as u64,
            marks: marks as u64,
        }
    }

    /// `5 task spans`, `5 task spans and 2 waits`, `5 task spans, 2 waits
    /// and 1 signal or pulse mark`.
    fn describe(&self) -> String {
        let mut parts = vec![plural(self.task_spans, "task span", "task spans")];
        if self.wait_spans > 0 {
            parts.push(plural(self.wait_spans, "wait", "waits"));
        }
        if self.marks > 0 {
            parts.push(plural(
                self.marks,
                "signal or pulse mark",
                "signal and pulse marks",
            ));
        }
        match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => parts.join(""),
        }
    }
}

/// Writes `trace` as Chrome JSON to `path`, prints what the file holds and
/// the trace's summary, and returns the facts for `--json`.
pub(crate) fn write_trace(
    ctx: &Ctx,
    path: &std::path::Path,
    trace: &Trace,
    edges: &[(u32, u32, u32)],
) -> Result<serde_json::Value, CliError> {
    trace.write_chrome_json(path)?;
    let summary = trace.summary(edges);
    let written = Written::of(trace);
    ctx.say(format_args!(
        "wrote a trace of {} to {} ({} recorded, {} dropped; opens in Perfetto / chrome://tracing)",
        written.describe(),
        path.display(),
        plural(trace.events.len() as u64, "event", "events"),
        trace.dropped,
    ));
    ctx.say(format_args!("{}", summary.to_string().trim_end()));
    Ok(json!({
        "path": path,
        "task_spans": written.task_spans,
        "wait_spans": written.wait_spans,
        "signal_marks": written.marks,
        "events": trace.events.len(),
        "dropped": trace.dropped,
        "unmatched": summary.unmatched,
        "wall_ns": summary.wall_ns,
        "busy_ns_per_block": summary.per_block.iter().map(|b| b.busy_ns).collect::<Vec<_>>(),
        "overlap_fraction": summary.overlap_fraction,
        "compute_block_ns": summary.compute_block_ns,
        "compute_waits_ns": summary.compute_waits.iter().map(|(k, ns)| (k.clone(), json!(ns))).collect::<serde_json::Map<_, _>>(),
        "critical_path": summary.critical_path.as_ref().map(|c| json!({
            "iteration": c.iteration, "tasks": c.tasks, "span_ns": c.span_ns, "busy_ns": c.busy_ns})),
    }))
}

/// The random graph: the old demo's generator (xorshift; each task gets up
/// to two edges from the 32 before it, and one in eight a carried edge
/// from anywhere), without duplicate edges.
struct Dag {
    graph: Graph,
    edges: u64,
    carried: u64,
}

fn build(tasks: u32, seed: u64, wide_joins: u32, kind: TaskKind, args: DagArgs) -> Dag {
    let mut g = Graph::new();
    let k = g.add_kind(kind).expect("the dag kind is valid");
    let t: Vec<TaskId> = (0..tasks).map(|_| g.add_task(k, &args)).collect();
    let mut x = seed;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut seen = HashSet::new();
    let (mut edges, mut carried) = (0, 0);
    for s in 1..t.len() {
        for _ in 0..rnd(3) {
            let p = s - 1 - rnd(s.min(32));
            if seen.insert((p, s, 0)) {
                g.add_edge(t[p], t[s]);
                edges += 1;
            }
        }
        if rnd(8) == 0 {
            let p = rnd(t.len());
            if seen.insert((p, s, 1)) {
                g.add_carried_edge(t[p], t[s]);
                edges += 1;
                carried += 1;
            }
        }
        // A wide join: up to `wide_joins` more distance-0 edges from
        // anywhere before it.
        if wide_joins > 0 && s % 100 == 99 {
            for _ in 0..wide_joins {
                let p = rnd(s);
                if seen.insert((p, s, 0)) {
                    g.add_edge(t[p], t[s]);
                    edges += 1;
                }
            }
        }
    }
    Dag {
        graph: g,
        edges,
        carried,
    }
}

/// The device-side log of a GPU run.
struct DeviceLog {
    log: autarky::Buffer<u64>,
    count: autarky::Buffer<u32>,
    counter: autarky::Buffer<u64>,
}

impl DeviceLog {
    /// Buffers (zeroed) for `instances`; the log is poisoned, so an
    /// instance that never ran cannot pass for one that did.
    fn new(rt: &Runtime, instances: usize) -> autarky::Result<DeviceLog> {
        let log = rt.alloc::<u64>(2 * instances)?;
        log.copy_from(&vec![u64::MAX; 2 * instances])?;
        let count = rt.alloc::<u32>(instances)?;
        let counter = rt.alloc::<u64>(1)?;
        Ok(DeviceLog {
            log,
            count,
            counter,
        })
    }

    fn check(
        &self,
        tasks: u32,
        iterations: u32,
        g: &Graph,
    ) -> Result<Result<Checked, String>, CliError> {
        let n = tasks as usize * iterations as usize;
        let mut seq = Vec::new();
        let mut count = Vec::new();
        let fail = |e| {
            CliError::Usage(format!(
                "cannot allocate the host copy of the check log: {e}"
            ))
        };
        seq.try_reserve_exact(2 * n).map_err(fail)?;
        count.try_reserve_exact(n).map_err(fail)?;
        seq.extend(self.log.to_vec()?);
        count.extend(self.count.to_vec()?);
        Ok(dag_check::check(
            tasks,
            iterations,
            g.edges(),
            |i| seq[i],
            |i| count[i],
        ))
    }
}

pub fn run(ctx: &Ctx, a: Args) -> Result<(), CliError> {
    let instances = a.tasks as u64 * a.iterations as u64;
    if !a.no_check && instances > MAX_CHECKED_INSTANCES {
        return Err(CliError::Usage(format!(
            "{} × {} = {instances} instances is more than the check can log ({MAX_CHECKED_INSTANCES}); use fewer, or --no-check",
            plural(a.tasks as u64, "task", "tasks"),
            plural(a.iterations as u64, "iteration", "iterations"),
        )));
    }
    let counted = a.counted_fan_in;
    let (rt, threads) = ctx.runtime_with(|b| match counted {
        Some(n) => b.counted_fan_in(n),
        None => b,
    })?;
    let gpu = rt.context().is_some();

    // ---- logs and the graph ----
    let host_log = match (gpu, a.no_check) {
        (false, false) => Some(Arc::new(
            HostLog::new(instances, a.iterations).map_err(CliError::Usage)?,
        )),
        _ => None,
    };
    let device_log = if gpu && !a.no_check {
        Some(DeviceLog::new(&rt, instances as usize)?)
    } else {
        None
    };
    let args = device_log.as_ref().map_or(DagArgs::default(), |d| DagArgs {
        log: d.log.addr(),
        count: d.count.addr(),
        counter: d.counter.addr(),
        iterations: a.iterations,
        _pad: 0,
    });
    let dag = build(
        a.tasks,
        a.seed,
        a.wide_joins,
        work_kind(host_log.clone()),
        args,
    );
    let edges_text = if dag.carried > 0 {
        format!(
            "{}, with {}",
            plural(dag.edges, "edge", "edges"),
            plural(dag.carried, "loop-carried edge", "loop-carried edges")
        )
    } else {
        plural(dag.edges, "edge", "edges")
    };
    ctx.say(format_args!(
        "running a random DAG: {}, {edges_text}, {}, on the {} backend",
        plural(a.tasks as u64, "task", "tasks"),
        plural(a.iterations as u64, "iteration", "iterations"),
        rt.backend_name()
    ));

    // ---- run ----
    // Both backends record the trace the same way (RunOptions::trace): the
    // GPU in its device rings, the emulator from its emulated blocks.
    let opts = RunOptions {
        trace: a
            .trace
            .as_ref()
            .map(|_| TraceOptions::records_per_block(a.trace_records)),
        ..RunOptions::iterations(a.iterations)
    };
    let mut report = if gpu {
        let run = rt.launch(&dag.graph, opts)?;
        crate::progress::wait(run, instances, ctx.progress_bar())?
    } else {
        rt.run_with(&dag.graph, opts)?
    };
    ctx.say(format_args!(
        "completed {} of {} in {:?} (host wall){}",
        report.instances,
        plural(instances, "instance", "instances"),
        report.wall,
        report
            .device_ns
            .map(|ns| format!(", {:.3} ms on the device", ns as f64 / 1e6))
            .unwrap_or_default()
    ));
    if !report.driver_calls.is_empty() {
        let queries = report
            .driver_calls
            .iter()
            .filter(|c| **c == "cuStreamQuery")
            .count() as u64;
        ctx.say(format_args!(
            "host driver calls during the run: 1 launch + {} (CPU-free)",
            plural(queries, "stream query", "stream queries")
        ));
    }

    // ---- check ----
    let checked = if a.no_check {
        None
    } else if let Some(d) = &device_log {
        Some(d.check(a.tasks, a.iterations, &dag.graph)?)
    } else {
        host_log
            .as_ref()
            .map(|l| l.check(a.tasks, dag.graph.edges()))
    };
    let verdict = match (&checked, report.instances == instances) {
        (_, false) => Err(format!(
            "expected {}, the run reports {}",
            plural(instances, "instance", "instances"),
            report.instances
        )),
        (Some(Err(v)), _) => Err(v.clone()),
        _ => Ok(()),
    };
    let what = format!(
        "{} × {} = {}",
        plural(a.tasks as u64, "task", "tasks"),
        plural(a.iterations as u64, "iteration", "iterations"),
        plural(instances, "instance", "instances")
    );
    match (&checked, &verdict) {
        (Some(Ok(c)), Ok(())) => ctx.say(format_args!(
            "{what}, {} ran exactly once, after all its predecessors' instances ({} checked): OK",
            if instances == 1 { "it" } else { "each" },
            plural(c.dependencies, "dependency", "dependencies")
        )),
        (None, Ok(())) => ctx.say(format_args!(
            "{what} completed; order not checked (--no-check)"
        )),
        _ => {}
    }

    // ---- trace ----
    let mut trace_json = serde_json::Value::Null;
    if let Some(path) = &a.trace {
        let edge_list: Vec<(u32, u32, u32)> = dag
            .graph
            .edges()
            .iter()
            .map(|e| (e.from.index() as u32, e.to.index() as u32, e.distance))
            .collect();
        let trace: Trace = report.trace.take().ok_or_else(|| {
            CliError::Usage("the run returned no trace although --trace was given".into())
        })?;
        trace_json = write_trace(ctx, path, &trace, &edge_list)?;
    }

    ctx.emit(&json!({
        "command": "dag",
        "backend": rt.backend_name(),
        "emulator_threads": threads,
        "tasks": a.tasks,
        "iterations": a.iterations,
        "seed": a.seed,
        "edges": dag.edges,
        "loop_carried_edges": dag.carried,
        "instances_expected": instances,
        "instances_completed": report.instances,
        "wall_s": report.wall.as_secs_f64(),
        "device_ns": report.device_ns,
        "checked": checked.is_some(),
        "dependencies_checked": checked.as_ref().and_then(|c| c.as_ref().ok()).map(|c| c.dependencies),
        "ok": verdict.is_ok(),
        "violation": verdict.as_ref().err(),
        "trace": trace_json,
    }));
    verdict.map_err(CliError::Check)
}
