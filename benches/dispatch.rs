//! Dispatch bench: what one empty task costs the device-side scheduler, next
//! to the ways CUDA users get the same work done without it. Everything runs
//! in one process, interleaved rep by rep so clock and thermal drift hit
//! every variant alike, and is timed with device events.
//!
//! Cases (`<gpu>/dispatch/...`; N = 10 000 unless shrunk):
//!
//! - `chain-N`: dependent hand-off latency. autarky runs a graph of N empty
//!   tasks with edges i → i+1 for one iteration; the events bracket the one
//!   cooperative launch, so the time includes launch and block start-up
//!   (a few µs, amortized over N). Per hand-off = time / N. The in-kernel
//!   `%globaltimer` span (first block entry → last block exit) is shown as
//!   its own row.
//! - `self-chain-N`: one task run for N iterations; every instance waits for
//!   the previous one (the implicit self edge), so this is the same latency
//!   without any graph-table walk to a different task.
//! - Baselines for both: `launch/task` is N back-to-back launches of an
//!   empty kernel (1 block × 32 threads) on one stream; `cuda-graph` is the
//!   same N launches captured into a CUDA graph, timed per replay.
//! - `independent-TxM`: throughput. T independent empty tasks, each run for
//!   M iterations (T·M ≈ 10⁷ instances). T = 4 × the megakernel's grid
//!   (blocks/SM × SMs): the ready queue holds at most one instance per task,
//!   so T bounds the work visible at once, and 4 per block keeps every block
//!   fed while its own last task's next instance is still being published.
//!   On an H200 at 8 blocks/SM that is 132·8·4 = 4224. Baselines (DESIGN.md's
//!   "atomic claim"): a persistent kernel on the same grid whose thread 0 of
//!   each block claims task indices with `atomicAdd` on one global counter
//!   until T·M are claimed (`atomic-claim`), and the same with the claimed
//!   index broadcast to the whole block through shared memory
//!   (`atomic-claim+bcast`), which is what a block-wide task body needs.
//!
//! The ratio column is always baseline time / autarky time per task: above
//! 1 autarky is faster.
//!
//! Run: `cargo bench --bench dispatch`. Knobs (env or `-- --flag`):
//! `AUTARKY_BENCH_QUICK=1` / `--quick` (N = 1000, 3 reps, 10⁶ instances),
//! `AUTARKY_BENCH_N` / `--n=`, `AUTARKY_BENCH_REPS` / `--reps=`,
//! `AUTARKY_BENCH_INSTANCES` / `--instances=` (T·M target),
//! `AUTARKY_BENCH_OUT` (directory for `dispatch.json`, default
//! `target/bench`). Without a GPU or NVRTC it prints `SKIP dispatch bench:
//! <reason>` and exits 0.

// The baselines pass `autarky::Error` through unchanged; its size is the
// library's business, not this bench's.
#![allow(clippy::result_large_err)]

use std::error::Error as StdError;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::path::PathBuf;

use autarky::runtime::driver::{Context, DeviceMem, Event, Function, GraphExec, Module, Stream};
use autarky::runtime::nvrtc::{self, Program};
use autarky::runtime::{RunOptions, Runtime};
use autarky::{Error, Graph, TaskId, TaskKind};

type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// DESIGN.md "Cost model": the targets this bench gates.
const TARGET_HANDOFF_US: f64 = 0.5;
const TARGET_RATE_G: f64 = 1.0;

/// The baselines' kernels, compiled with NVRTC for the device at hand.
const BASELINE_SOURCE: &str = r#"
// An empty kernel: the unit of work of the launch and CUDA-graph baselines.
extern "C" __global__ void empty_kernel() {}

// DESIGN.md's "atomic claim" baseline: a persistent grid in which thread 0
// of every block claims task indices from one global counter until `total`
// are claimed. Every block's final, failing claim also increments the
// counter, so it ends at total + gridDim.x. Each block writes how many it
// claimed so the host can check that exactly `total` ran.
extern "C" __global__ void claim_kernel(unsigned long long* counter,
                                        unsigned long long total,
                                        unsigned long long* claimed_per_block) {
    if (threadIdx.x != 0) return;
    unsigned long long mine = 0;
    while (atomicAdd(counter, 1ull) < total) ++mine;
    claimed_per_block[blockIdx.x] = mine;
}

// The same, but the claimed index reaches every thread of the block (as a
// block-wide task body needs): thread 0 claims, shares it through shared
// memory, and the block meets at a barrier before and after reading it.
extern "C" __global__ void claim_bcast_kernel(unsigned long long* counter,
                                              unsigned long long total,
                                              unsigned long long* claimed_per_block) {
    __shared__ unsigned long long index;
    unsigned long long mine = 0;
    for (;;) {
        if (threadIdx.x == 0) index = atomicAdd(counter, 1ull);
        __syncthreads();
        const bool done = index >= total;
        __syncthreads();
        if (done) break;
        ++mine;
    }
    if (threadIdx.x == 0) claimed_per_block[blockIdx.x] = mine;
}
"#;

// ---- configuration --------------------------------------------------------

/// What to run, from the environment and the command line (cargo passes
/// `--bench` to harness-less benches; unknown arguments are ignored).
#[derive(Clone, Debug)]
struct Config {
    quick: bool,
    /// Chain length and self-chain iterations.
    n: u32,
    /// Timed repetitions per case (after `warmup` untimed ones).
    reps: usize,
    warmup: usize,
    /// Target instance count T·M of the throughput case.
    instances: u64,
}

impl Config {
    fn from_env_and_args() -> BoxResult<Config> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let mut quick = env("AUTARKY_BENCH_QUICK").is_some_and(|v| v != "0");
        let mut n = env("AUTARKY_BENCH_N");
        let mut reps = env("AUTARKY_BENCH_REPS");
        let mut instances = env("AUTARKY_BENCH_INSTANCES");
        for a in std::env::args().skip(1) {
            if a == "--quick" || a == "quick" {
                quick = true;
            } else if let Some(v) = a.strip_prefix("--n=") {
                n = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--reps=") {
                reps = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--instances=") {
                instances = Some(v.into());
            }
        }
        let parse = |what: &str, v: Option<String>, default: u64| -> BoxResult<u64> {
            match v {
                None => Ok(default),
                Some(s) => match s.trim().replace('_', "").parse::<u64>() {
                    Ok(x) if x > 0 => Ok(x),
                    _ => Err(format!("{what} must be a positive integer, got {s:?}").into()),
                },
            }
        };
        let (dn, dr, di) = if quick {
            (1_000, 3, 1_000_000)
        } else {
            (10_000, 11, 10_000_000)
        };
        let n = parse("N", n, dn)?;
        if n < 2 || n > u32::MAX as u64 {
            return Err(format!("N must be in 2..={}, got {n}", u32::MAX).into());
        }
        Ok(Config {
            quick,
            n: n as u32,
            reps: parse("reps", reps, dr)? as usize,
            warmup: 2,
            instances: parse("instances", instances, di)?,
        })
    }
}

// ---- statistics -----------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Stats {
    median: f64,
    min: f64,
    max: f64,
    p10: f64,
    p90: f64,
}

fn stats(samples: &[f64]) -> Stats {
    assert!(!samples.is_empty(), "statistics of no samples");
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    // Nearest rank: with fewer than 10 samples p10/p90 are min/max.
    let rank = |p: f64| s[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
    Stats {
        median,
        min: s[0],
        max: s[n - 1],
        p10: rank(0.10),
        p90: rank(0.90),
    }
}

/// How a case reports a time per rep.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Metric {
    /// µs per dependent hand-off (lower is better): seconds × 10⁶ / N.
    HandoffUs { n: u64 },
    /// 10⁹ task instances per second (higher is better).
    RateG { instances: u64 },
}

impl Metric {
    fn of(self, seconds: f64) -> f64 {
        match self {
            Metric::HandoffUs { n } => seconds * 1e6 / n as f64,
            Metric::RateG { instances } => instances as f64 / seconds / 1e9,
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Metric::HandoffUs { .. } => "µs/hand-off",
            Metric::RateG { .. } => "G tasks/s",
        }
    }
    fn json_name(self) -> &'static str {
        match self {
            Metric::HandoffUs { .. } => "us_per_handoff",
            Metric::RateG { .. } => "g_tasks_per_s",
        }
    }
    /// Baseline time / autarky time per task, from the two medians.
    fn ratio(self, baseline: f64, autarky: f64) -> f64 {
        match self {
            Metric::HandoffUs { .. } => baseline / autarky,
            Metric::RateG { .. } => autarky / baseline,
        }
    }
    fn meets_target(self, v: f64) -> bool {
        match self {
            Metric::HandoffUs { .. } => v <= TARGET_HANDOFF_US,
            Metric::RateG { .. } => v >= TARGET_RATE_G,
        }
    }
    /// The target as JSON fields: `"target_le": 0.5` or `"target_ge": 1`.
    fn target_json(self) -> String {
        match self {
            Metric::HandoffUs { .. } => format!("\"target_le\": {}", json_num(TARGET_HANDOFF_US)),
            Metric::RateG { .. } => format!("\"target_ge\": {}", json_num(TARGET_RATE_G)),
        }
    }
    fn target(self) -> String {
        match self {
            Metric::HandoffUs { .. } => format!("≤ {TARGET_HANDOFF_US} µs"),
            Metric::RateG { .. } => format!("≥ {TARGET_RATE_G} G/s"),
        }
    }
}

/// What a row is, which decides how the table treats it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// autarky timed with device events: the case's reference and the
    /// number held against the target.
    Autarky,
    /// autarky's in-kernel `%globaltimer` span of the same runs (shown for
    /// reference: it leaves out the launch and block start-up).
    AutarkyInKernel,
    Baseline,
}

/// One variant of one case: its seconds per rep.
struct Row {
    variant: &'static str,
    role: Role,
    seconds: Vec<f64>,
}

struct Case {
    name: String,
    metric: Metric,
    /// Free-form facts about the case for the JSON (`"n": 10000`, …).
    params: Vec<(&'static str, u64)>,
    rows: Vec<Row>,
}

impl Case {
    fn new(
        name: String,
        metric: Metric,
        params: Vec<(&'static str, u64)>,
        variants: &[(&'static str, Role)],
    ) -> Case {
        Case {
            name,
            metric,
            params,
            rows: variants
                .iter()
                .map(|&(variant, role)| Row {
                    variant,
                    role,
                    seconds: Vec::new(),
                })
                .collect(),
        }
    }
    fn push(&mut self, variant: &str, seconds: f64) {
        let row = self
            .rows
            .iter_mut()
            .find(|r| r.variant == variant)
            .unwrap_or_else(|| panic!("case {} has no variant {variant}", self.name));
        row.seconds.push(seconds);
    }
    fn values(&self, row: &Row) -> Vec<f64> {
        row.seconds.iter().map(|&s| self.metric.of(s)).collect()
    }
    /// Median of the autarky (event-timed) row.
    fn autarky_median(&self) -> Option<f64> {
        let r = self.rows.iter().find(|r| r.role == Role::Autarky)?;
        (!r.seconds.is_empty()).then(|| stats(&self.values(r)).median)
    }
}

// ---- autarky --------------------------------------------------------------

fn empty_kind() -> TaskKind {
    TaskKind::new("empty", "__device__ void empty(autarky::TaskCtx&) {}")
}

/// One timed autarky run: (event seconds, in-kernel seconds). Checks that
/// every instance ran.
fn run_autarky(
    rt: &Runtime,
    g: &Graph,
    iterations: u32,
    what: &str,
) -> BoxResult<(f64, Option<f64>)> {
    let opts = RunOptions {
        iterations,
        timed: true,
        ..Default::default()
    };
    let r = rt
        .run_with(g, opts)
        .map_err(|e| format!("autarky {what}: {e}"))?;
    let expected = g.num_tasks() as u64 * iterations as u64;
    if r.instances != expected {
        return Err(format!(
            "autarky {what}: {} instances ran, expected {expected}",
            r.instances
        )
        .into());
    }
    let ev = r
        .event_ms
        .ok_or_else(|| format!("autarky {what}: a timed run returned no event time"))?;
    Ok((ev as f64 * 1e-3, r.device_ns.map(|ns| ns as f64 * 1e-9)))
}

// ---- baselines ------------------------------------------------------------

/// The baselines' module, kernels, stream and events.
struct Baselines<'a> {
    ctx: &'a Context,
    _module: Module,
    empty: Function,
    claim: Function,
    claim_bcast: Function,
    stream: Stream,
    start: Event,
    end: Event,
}

impl<'a> Baselines<'a> {
    fn new(ctx: &'a Context, arch: u32) -> Result<Baselines<'a>, Error> {
        let cubin = nvrtc::compile_cubin(&Program {
            name: "dispatch_baselines.cu",
            source: BASELINE_SOURCE,
            headers: &[],
            options: vec!["--std=c++17".into()],
            arch,
        })?;
        let module = Module::load(ctx, &cubin)?;
        Ok(Baselines {
            ctx,
            empty: module.function("empty_kernel")?,
            claim: module.function("claim_kernel")?,
            claim_bcast: module.function("claim_bcast_kernel")?,
            _module: module,
            stream: Stream::new(ctx)?,
            start: Event::new(ctx)?,
            end: Event::new(ctx)?,
        })
    }

    fn launch_empty(&self) -> Result<(), Error> {
        // SAFETY: `empty_kernel` takes no parameters, so the empty parameter
        // list matches it exactly, and it touches no memory; the module that
        // owns the function lives in `self` for as long as the stream does.
        unsafe { self.empty.launch(&self.stream, 1, 32, &mut []) }
    }

    /// Seconds for `n` back-to-back launches of the empty kernel.
    fn launches(&self, n: u32) -> Result<f64, Error> {
        self.start.record(&self.stream)?;
        for _ in 0..n {
            self.launch_empty()?;
        }
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// The `n` launches captured into an instantiated CUDA graph.
    fn capture(&self, n: u32) -> Result<GraphExec, Error> {
        self.stream.begin_capture()?;
        let launched = (0..n).try_for_each(|_| self.launch_empty());
        // End the capture even when a launch failed, so the stream is usable.
        let exec = self.stream.end_capture();
        launched?;
        exec
    }

    /// Seconds for one replay of `exec`.
    fn replay(&self, exec: &GraphExec) -> Result<f64, Error> {
        self.start.record(&self.stream)?;
        exec.launch(&self.stream)?;
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// Seconds for the atomic-claim kernel `f` to claim `total` indices on
    /// `grid` blocks; checks that exactly `total` were claimed.
    fn claim(
        &self,
        f: Function,
        bufs: &ClaimBuffers,
        grid: u32,
        threads: u32,
        total: u64,
    ) -> BoxResult<f64> {
        bufs.counter.fill_bytes(0)?;
        bufs.per_block.fill_bytes(0)?;
        // The memsets run on the legacy stream, which our non-blocking stream
        // does not wait for: finish them before the launch.
        self.ctx.synchronize()?;
        let mut counter = bufs.counter.ptr();
        let mut total_arg = total;
        let mut per_block = bufs.per_block.ptr();
        let mut params = [
            &mut counter as *mut u64 as *mut c_void,
            &mut total_arg as *mut u64 as *mut c_void,
            &mut per_block as *mut u64 as *mut c_void,
        ];
        self.start.record(&self.stream)?;
        // SAFETY: 1. both claim kernels take exactly
        // (unsigned long long*, unsigned long long, unsigned long long*), and
        // `params` points at a u64 device address, a u64 and a u64 device
        // address, in that order; 2. `counter` holds one u64 and `per_block`
        // holds `grid` u64s (checked when allocated), and both outlive the
        // kernel: `elapsed_ms` below waits for the end event, recorded after it.
        unsafe { f.launch(&self.stream, grid, threads, &mut params)? };
        self.end.record(&self.stream)?;
        let seconds = self.start.elapsed_ms(&self.end)? as f64 * 1e-3;
        let mut claimed = vec![0u64; grid as usize];
        bufs.per_block.download(&mut claimed)?;
        let sum: u64 = claimed.iter().sum();
        if sum != total {
            return Err(format!("atomic-claim baseline ran {sum} of {total} tasks").into());
        }
        Ok(seconds)
    }
}

struct ClaimBuffers {
    counter: DeviceMem,
    per_block: DeviceMem,
}

// ---- output ---------------------------------------------------------------

/// `NVIDIA H200` → `h200`: the first word with a digit, lowercased.
fn gpu_slug(name: &str) -> String {
    let word = name
        .split_whitespace()
        .find(|w| w.chars().any(|c| c.is_ascii_digit()))
        .unwrap_or(name);
    let slug: String = word
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if slug.is_empty() {
        "gpu".into()
    } else {
        slug
    }
}

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn table(cases: &[Case]) -> String {
    let mut lines: Vec<[String; 6]> = vec![[
        "case".into(),
        "variant".into(),
        "median".into(),
        "spread min–max".into(),
        "baseline/autarky".into(),
        "target".into(),
    ]];
    for c in cases {
        let reference = c.autarky_median();
        for (i, r) in c.rows.iter().enumerate() {
            if r.seconds.is_empty() {
                continue;
            }
            let s = stats(&c.values(r));
            let ratio = match (r.role, reference) {
                (Role::Baseline, Some(a)) => format!("{:.2}×", c.metric.ratio(s.median, a)),
                _ => "—".into(),
            };
            let target = match r.role {
                Role::Autarky => format!(
                    "{} {}",
                    c.metric.target(),
                    if c.metric.meets_target(s.median) {
                        "ok"
                    } else {
                        "MISS"
                    }
                ),
                _ => String::new(),
            };
            lines.push([
                if i == 0 {
                    c.name.clone()
                } else {
                    String::new()
                },
                r.variant.into(),
                format!("{} {}", fmt_value(s.median), c.metric.unit()),
                format!("{}–{}", fmt_value(s.min), fmt_value(s.max)),
                ratio,
                target,
            ]);
        }
    }
    let widths: Vec<usize> = (0..6)
        .map(|k| {
            lines
                .iter()
                .map(|l| l[k].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        if i == 0 {
            let rule: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            let _ = writeln!(out, "{}", "-".repeat(rule));
        }
    }
    out
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

fn json_nums(vs: &[f64]) -> String {
    format!(
        "[{}]",
        vs.iter()
            .map(|&v| json_num(v))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Header facts for the JSON: `(key, already-encoded JSON value)`.
type Facts = Vec<(&'static str, String)>;

fn json(facts: &Facts, cases: &[Case]) -> String {
    let mut o = String::from("{\n  \"bench\": \"dispatch\",\n");
    for (k, v) in facts {
        let _ = writeln!(o, "  {}: {v},", json_str(k));
    }
    o.push_str("  \"cases\": [");
    for (ci, c) in cases.iter().enumerate() {
        let reference = c.autarky_median();
        let _ = write!(
            o,
            "{}\n    {{\n      \"case\": {},\n      \"metric\": {},\n      \"target\": {},\n      {},\n",
            if ci == 0 { "" } else { "," },
            json_str(&c.name),
            json_str(c.metric.json_name()),
            json_str(&c.metric.target()),
            c.metric.target_json()
        );
        for (k, v) in &c.params {
            let _ = writeln!(o, "      {}: {v},", json_str(k));
        }
        o.push_str("      \"results\": [");
        let rows: Vec<&Row> = c.rows.iter().filter(|r| !r.seconds.is_empty()).collect();
        for (ri, r) in rows.iter().enumerate() {
            let values = c.values(r);
            let s = stats(&values);
            let ratio = match (r.role, reference) {
                (Role::Baseline, Some(a)) => json_num(c.metric.ratio(s.median, a)),
                _ => "null".into(),
            };
            let meets = match r.role {
                Role::Autarky => c.metric.meets_target(s.median).to_string(),
                _ => "null".into(),
            };
            let role = match r.role {
                Role::Autarky => "autarky",
                Role::AutarkyInKernel => "autarky-in-kernel",
                Role::Baseline => "baseline",
            };
            let _ = write!(
                o,
                "{}\n        {{\"variant\": {}, \"role\": {}, \"median\": {}, \"min\": {}, \"max\": {}, \"p10\": {}, \"p90\": {}, \"ratio_baseline_over_autarky\": {}, \"meets_target\": {}, \"values\": {}, \"seconds\": {}}}",
                if ri == 0 { "" } else { "," },
                json_str(r.variant),
                json_str(role),
                json_num(s.median),
                json_num(s.min),
                json_num(s.max),
                json_num(s.p10),
                json_num(s.p90),
                ratio,
                meets,
                json_nums(&values),
                json_nums(&r.seconds)
            );
        }
        o.push_str("\n      ]\n    }");
    }
    o.push_str("\n  ]\n}\n");
    o
}

fn out_path() -> PathBuf {
    let dir = match std::env::var_os("AUTARKY_BENCH_OUT") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(t) if !t.is_empty() => PathBuf::from(t).join("bench"),
            _ => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target")
                .join("bench"),
        },
    };
    dir.join("dispatch.json")
}

fn write_json(text: &str) -> BoxResult<PathBuf> {
    let path = out_path();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

fn skip(reason: &str) -> BoxResult<()> {
    println!("SKIP dispatch bench: {reason}");
    // Leave a record so a pipeline that reads the JSON sees why it is empty.
    let text = format!(
        "{{\n  \"bench\": \"dispatch\",\n  \"skipped\": {}\n}}\n",
        json_str(reason)
    );
    if let Err(e) = write_json(&text) {
        eprintln!("dispatch bench: could not write the skip record: {e}");
    }
    Ok(())
}

// ---- main -----------------------------------------------------------------

fn main() -> BoxResult<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let cfg = Config::from_env_and_args()?;

    let rt = match Runtime::builder().gpu().build() {
        Ok(rt) => rt,
        Err(e @ Error::NoGpu { .. }) => return skip(&e.to_string()),
        Err(e) => return Err(format!("booting the GPU runtime: {e}").into()),
    };
    match nvrtc::nvrtc_version() {
        Ok(_) => {}
        Err(e @ Error::NvrtcNotFound { .. }) => return skip(&e.to_string()),
        Err(e) => return Err(format!("loading NVRTC: {e}").into()),
    }
    let ctx = rt.context().ok_or("the GPU runtime has no context")?;
    let props = rt
        .device_props()
        .ok_or("the GPU runtime has no device properties")?
        .clone();
    let slug = gpu_slug(&props.name);
    let n = cfg.n;

    // ---- graphs (all of one kind, so they share one megakernel) ----
    let mut chain = Graph::new();
    let k = chain.add_kind(empty_kind())?;
    let ids: Vec<TaskId> = (0..n).map(|_| chain.add_task_bytes(k, &[])).collect();
    for w in ids.windows(2) {
        chain.add_edge(w[0], w[1]);
    }
    let mut single = Graph::new();
    let k1 = single.add_kind(empty_kind())?;
    single.add_task_bytes(k1, &[]);

    let (per_sm, regs) = rt
        .kernel_info(&chain)
        .map_err(|e| format!("compiling the megakernel: {e}"))?
        .ok_or("kernel_info returned None on the GPU backend")?;
    let grid = per_sm * props.sm_count;
    let threads = rt.threads_per_block();
    let t_tasks = 4 * grid as u64;
    let m_iters = cfg.instances.div_ceil(t_tasks).max(1);
    let m_iters =
        u32::try_from(m_iters).map_err(|_| format!("M = {m_iters} iterations is too many"))?;
    let total = t_tasks * m_iters as u64;
    let mut indep = Graph::new();
    let ki = indep.add_kind(empty_kind())?;
    for _ in 0..t_tasks {
        indep.add_task_bytes(ki, &[]);
    }

    let base =
        Baselines::new(ctx, props.arch()).map_err(|e| format!("building the baselines: {e}"))?;
    let bufs = ClaimBuffers {
        counter: DeviceMem::alloc(ctx, 8)?,
        per_block: DeviceMem::alloc(ctx, 8 * grid as usize)?,
    };
    let exec = base
        .capture(n)
        .map_err(|e| format!("capturing {n} launches into a CUDA graph: {e}"))?;

    println!(
        "dispatch bench on {} (sm_{}, {} SMs): megakernel {per_sm} blocks/SM × {threads} threads, {regs} regs → grid {grid}; \
         N = {n}, T = {t_tasks}, M = {m_iters}; {} warm-up + {} timed reps per case{}",
        props.name,
        props.arch(),
        props.sm_count,
        cfg.warmup,
        cfg.reps,
        if cfg.quick { " (QUICK: not for reporting)" } else { "" }
    );

    use Role::*;
    let chain_variants = [
        ("autarky", Autarky),
        ("autarky in-kernel", AutarkyInKernel),
        ("launch/task", Baseline),
        ("cuda-graph", Baseline),
    ];
    let handoff = Metric::HandoffUs { n: n as u64 };
    let mut cases = vec![
        Case::new(
            format!("{slug}/dispatch/chain-{n}"),
            handoff,
            vec![("n", n as u64)],
            &chain_variants,
        ),
        Case::new(
            format!("{slug}/dispatch/self-chain-{n}"),
            handoff,
            vec![("n", n as u64)],
            &chain_variants,
        ),
        Case::new(
            format!("{slug}/dispatch/independent-{t_tasks}x{m_iters}"),
            Metric::RateG { instances: total },
            vec![
                ("tasks", t_tasks),
                ("iterations", m_iters as u64),
                ("instances", total),
                ("grid", grid as u64),
            ],
            &[
                ("autarky", Autarky),
                ("autarky in-kernel", AutarkyInKernel),
                ("atomic-claim", Baseline),
                ("atomic-claim+bcast", Baseline),
            ],
        ),
    ];

    // Every rep runs every variant once, so drift is shared; the first
    // `warmup` reps are thrown away.
    for rep in 0..cfg.warmup + cfg.reps {
        let keep = rep >= cfg.warmup;
        let (ev, dev) = run_autarky(&rt, &chain, 1, "chain")?;
        let launches = base
            .launches(n)
            .map_err(|e| format!("launch/task baseline: {e}"))?;
        let replay = base
            .replay(&exec)
            .map_err(|e| format!("cuda-graph baseline: {e}"))?;
        let (sev, sdev) = run_autarky(&rt, &single, n, "self-chain")?;
        let (iev, idev) = run_autarky(&rt, &indep, m_iters, "independent")?;
        let claim = base.claim(base.claim, &bufs, grid, threads, total)?;
        let claim_b = base.claim(base.claim_bcast, &bufs, grid, threads, total)?;
        if !keep {
            continue;
        }
        for (ci, ev, dev) in [(0, ev, dev), (1, sev, sdev)] {
            let c = &mut cases[ci];
            c.push("autarky", ev);
            if let Some(d) = dev {
                c.push("autarky in-kernel", d);
            }
            c.push("launch/task", launches);
            c.push("cuda-graph", replay);
        }
        let c = &mut cases[2];
        c.push("autarky", iev);
        if let Some(d) = idev {
            c.push("autarky in-kernel", d);
        }
        c.push("atomic-claim", claim);
        c.push("atomic-claim+bcast", claim_b);
    }

    let facts: Facts = vec![
        ("device", json_str(&props.name)),
        ("arch", props.arch().to_string()),
        ("sm_count", props.sm_count.to_string()),
        ("blocks_per_sm", per_sm.to_string()),
        ("registers", regs.to_string()),
        ("threads_per_block", threads.to_string()),
        ("grid", grid.to_string()),
        ("quick", cfg.quick.to_string()),
        ("warmup", cfg.warmup.to_string()),
        ("reps", cfg.reps.to_string()),
        (
            "ratio",
            json_str("baseline time / autarky time per task; > 1 means autarky is faster"),
        ),
    ];
    println!();
    print!("{}", table(&cases));
    println!(
        "ratio = baseline time / autarky time per task (> 1: autarky faster); spread over {} timed reps; \
         'autarky' is device events around the one launch, 'in-kernel' is %globaltimer first entry → last exit.",
        cfg.reps
    );
    let path = write_json(&json(&facts, &cases))?;
    println!("wrote {}", path.display());
    Ok(())
}
