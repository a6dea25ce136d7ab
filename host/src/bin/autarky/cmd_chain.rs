//! `autarky chain`: a chain of empty tasks run several times, for
//! profilers and quick latency readings (one warm-up, then the measured
//! runs; prints µs per instance).

use autarky::{Graph, TaskId, TaskKind};
use serde_json::json;

use crate::cmd_dag::iterations_parser;
use crate::{plural, CliError, Ctx};

/// Most tasks in the chain.
const MAX_TASKS: u32 = 1 << 20;

/// Run a chain of empty tasks (edges i → i+1) RUNS times after one warm-up
/// and print the time per instance (device clock on the GPU, host wall
/// time on the emulator).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tasks in the chain (1..=1048576).
    #[arg(default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_TASKS as i64))]
    tasks: u32,
    /// Iterations of the whole chain (1..=2147483647).
    #[arg(default_value_t = 10_000, value_parser = iterations_parser())]
    iterations: u32,
    /// Measured runs after the warm-up (1..=1000).
    #[arg(default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<(), CliError> {
    let (rt, threads) = ctx.runtime()?;
    let mut g = Graph::new();
    let k = g
        .add_kind(
            TaskKind::new("empty", "__device__ void empty(autarky::TaskCtx&) {}")
                .with_cpu(|_| Ok(())),
        )
        .expect("the empty kind is valid");
    let t: Vec<TaskId> = (0..a.tasks).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    let instances = a.tasks as u64 * a.iterations as u64;
    ctx.say(format_args!(
        "chain of {} × {} = {} on the {} backend",
        plural(a.tasks as u64, "task", "tasks"),
        plural(a.iterations as u64, "iteration", "iterations"),
        plural(instances, "instance", "instances"),
        rt.backend_name()
    ));
    let mut runs = Vec::new();
    for run in 0..=a.runs {
        let r = rt.run(&g, a.iterations)?;
        if r.instances != instances {
            return Err(CliError::Check(format!(
                "run {run}: expected {}, the run reports {}",
                plural(instances, "instance", "instances"),
                r.instances
            )));
        }
        let label = if run == 0 { "warm-up" } else { "run" };
        let (us, clock) = match r.device_ns {
            Some(ns) => (ns as f64 / 1e3 / instances as f64, "device"),
            None => (r.wall.as_secs_f64() * 1e6 / instances as f64, "host wall"),
        };
        ctx.say(format_args!(
            "{label}: {us:.3} µs per instance ({clock} clock)"
        ));
        runs.push(
            json!({"label": label, "us_per_instance": us, "clock": clock,
                         "wall_s": r.wall.as_secs_f64(), "device_ns": r.device_ns}),
        );
    }
    ctx.emit(&json!({
        "command": "chain",
        "backend": rt.backend_name(),
        "emulator_threads": threads,
        "tasks": a.tasks,
        "iterations": a.iterations,
        "instances_per_run": instances,
        "runs": runs,
    }));
    Ok(())
}
