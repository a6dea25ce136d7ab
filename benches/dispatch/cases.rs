//! Cases: what is measured, how a rep's seconds become the case's unit,
//! and how the cases print as a table and turn into the shared report.

use std::collections::BTreeMap;

use autarky::runtime::{RunOptions, Runtime};
use autarky::{Graph, TaskKind, TraceOptions};

use crate::report::{CaseResult, Spread, Target};
use crate::BoxResult;

/// The targets this bench gates (the scheduler-speed issue): a hand-off
/// between distinct tasks at most 0.5 µs, a task's next instance at most
/// 0.35 µs, both at least 1.4× faster than the CUDA graph's replay of the
/// same chain in the same run; independent tasks at least 1.3 G/s.
pub const TARGET_CHAIN_US: f64 = 0.5;
pub const TARGET_NEXT_INSTANCE_US: f64 = 0.35;
pub const TARGET_HANDOFF_VS_GRAPH: f64 = 1.4;
/// The hand-off cases' relative reference row.
pub const HANDOFF_REFERENCE: &str = "cuda-graph";
pub const TARGET_RATE_G: f64 = 1.3;

/// How a case reports a time per rep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// µs per dependent hand-off (lower is better): seconds × 10⁶ / N.
    /// Its target: at most `limit_us`, and at least
    /// `TARGET_HANDOFF_VS_GRAPH` × faster than the `HANDOFF_REFERENCE` row.
    HandoffUs { n: u64, limit_us: f64 },
    /// 10⁹ task instances per second (higher is better).
    RateG { instances: u64 },
    /// µs per iteration of a graph (lower is better): seconds × 10⁶ / M.
    /// Its target is relative: at most `factor` × the median of the
    /// case's baseline row named `reference`.
    IterationUs {
        iterations: u64,
        reference: &'static str,
        factor: f64,
    },
}

/// Fan-in target (issue: "≤ 2× the cost of 1000 independent tasks"): the
/// 1000 → 1 graph's iteration costs at most this factor times that of the
/// same number of independent tasks.
pub const FAN_IN_TARGET_FACTOR: f64 = 2.0;
/// The fan-in case's reference row.
pub const FAN_IN_REFERENCE: &str = "independent (same tasks, no join)";
/// The stencil case's reference row, and the target: 1.3× faster than it
/// (the Jacobi target against a CUDA graph, without the body).
pub const STENCIL_REFERENCE: &str = "cuda-graph (launch/iteration)";
pub const STENCIL_TARGET_FACTOR: f64 = 1.0 / 1.3;

impl Metric {
    fn of(self, seconds: f64) -> f64 {
        match self {
            Metric::HandoffUs { n, .. } => seconds * 1e6 / n as f64,
            Metric::RateG { instances } => instances as f64 / seconds / 1e9,
            Metric::IterationUs { iterations, .. } => seconds * 1e6 / iterations as f64,
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Metric::HandoffUs { .. } => "µs/hand-off",
            Metric::RateG { .. } => "G tasks/s",
            Metric::IterationUs { .. } => "µs/iteration",
        }
    }
    fn lower_is_better(self) -> bool {
        matches!(self, Metric::HandoffUs { .. } | Metric::IterationUs { .. })
    }
    /// The target; `reference` is the median of the case's reference row
    /// (relative targets; `None` before it ran).
    fn target(self, reference: Option<f64>) -> Target {
        match self {
            Metric::HandoffUs { limit_us, .. } => Target::Le(
                reference.map_or(f64::NAN, |r| limit_us.min(r / TARGET_HANDOFF_VS_GRAPH)),
            ),
            Metric::RateG { .. } => Target::Ge(TARGET_RATE_G),
            Metric::IterationUs { factor, .. } => {
                Target::Le(reference.map_or(f64::NAN, |r| factor * r))
            }
        }
    }
    fn target_text(self) -> String {
        match self {
            Metric::HandoffUs { limit_us, .. } => {
                format!("≤ {limit_us} µs & ≥ {TARGET_HANDOFF_VS_GRAPH}× {HANDOFF_REFERENCE}")
            }
            Metric::RateG { .. } => format!("≥ {TARGET_RATE_G} G/s"),
            Metric::IterationUs {
                reference, factor, ..
            } => format!("≤ {factor:.2}× {reference}"),
        }
    }
}

/// What a row is, which decides how the table and the report treat it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    /// autarky timed with device events: the case's reference and the
    /// number held against the target.
    Autarky,
    /// autarky's in-kernel `%globaltimer` span of the same runs (shown for
    /// reference: it leaves out the launch and block start-up).
    AutarkyInKernel,
    /// autarky with `RunOptions::trace`, timed like `Autarky` (shown for
    /// the tracing overhead: traced / untraced).
    AutarkyTraced,
    /// autarky running the same graph another way (the stencil's tiles
    /// pinned, one a block or in patches): held against the case's target
    /// like `Autarky`, and in the report a baseline of the `Autarky` row.
    AutarkyAlt,
    Baseline,
}

/// One variant of one case: its seconds per rep.
pub struct Row {
    pub variant: &'static str,
    pub role: Role,
    pub seconds: Vec<f64>,
}

pub struct Case {
    pub name: String,
    pub family: &'static str,
    pub size: u64,
    pub size_label: &'static str,
    pub metric: Metric,
    /// Facts about the case for the report (`n`, `tasks`, …).
    pub params: Vec<(&'static str, u64)>,
    pub rows: Vec<Row>,
}

impl Case {
    pub fn new(
        slug: &str,
        family: &'static str,
        size: u64,
        size_label: &'static str,
        metric: Metric,
        params: Vec<(&'static str, u64)>,
        variants: &[(&'static str, Role)],
    ) -> Case {
        Case {
            name: format!("{slug}/dispatch/{family}/{size}"),
            family,
            size,
            size_label,
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

    /// Records one rep of `variant`.
    ///
    /// # Panics
    /// If the case has no such variant (a typo in the bench).
    pub fn push(&mut self, variant: &str, seconds: f64) {
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

    /// The median of the relative target's reference row, if it ran.
    fn reference_median(&self) -> Option<f64> {
        let reference = match self.metric {
            Metric::IterationUs { reference, .. } => reference,
            Metric::HandoffUs { .. } => HANDOFF_REFERENCE,
            Metric::RateG { .. } => return None,
        };
        self.rows
            .iter()
            .find(|r| r.variant == reference)
            .and_then(|r| Spread::of(&self.values(r)))
            .map(|s| s.median)
    }

    /// The case in the shared report's terms; `None` before any autarky rep.
    pub fn to_result(&self) -> Option<CaseResult> {
        let of = |role: Role| -> Vec<(&str, Vec<f64>)> {
            self.rows
                .iter()
                .filter(|r| r.role == role)
                .map(|r| (r.variant, self.values(r)))
                .collect()
        };
        let autarky = of(Role::Autarky).into_iter().next()?;
        let mut references = of(Role::AutarkyInKernel);
        references.extend(of(Role::AutarkyTraced));
        CaseResult::new(
            self.name.clone(),
            self.family,
            self.size as f64,
            self.size_label,
            self.metric.unit(),
            self.metric.lower_is_better(),
            Some(self.metric.target(self.reference_median())),
            self.params
                .iter()
                .map(|&(k, v)| (k.to_string(), v))
                .collect::<BTreeMap<_, _>>(),
            autarky,
            {
                let mut b = of(Role::AutarkyAlt);
                b.extend(of(Role::Baseline));
                b
            },
            references,
        )
    }

    /// Median traced time / median untraced time (both device events), when
    /// both ran.
    pub fn trace_overhead(&self) -> Option<f64> {
        let median = |role: Role| {
            self.rows
                .iter()
                .find(|r| r.role == role)
                .and_then(|r| Spread::of(&r.seconds))
                .map(|s| s.median)
        };
        Some(median(Role::AutarkyTraced)? / median(Role::Autarky)?)
    }
}

pub fn empty_kind() -> TaskKind {
    TaskKind::new("empty", "__device__ void empty(autarky::TaskCtx&) {}")
}

/// A chain of `n` empty tasks, edges i → i+1.
pub fn chain_graph(n: u32) -> Graph {
    let mut g = Graph::new();
    let k = g.add_kind(empty_kind()).expect("a valid kind");
    let ids: Vec<_> = (0..n).map(|_| g.add_task_bytes(k, &[])).collect();
    for w in ids.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    g
}

/// A join: `inputs` independent empty tasks, each an input of one more
/// (the sink, task `inputs`). Each iteration's sink instance waits for that
/// iteration's instance of every input.
pub fn fan_in_graph(inputs: u64) -> Graph {
    let mut g = Graph::new();
    let k = g.add_kind(empty_kind()).expect("a valid kind");
    let ids: Vec<_> = (0..inputs).map(|_| g.add_task_bytes(k, &[])).collect();
    let sink = g.add_task_bytes(k, &[]);
    for &i in &ids {
        g.add_edge(i, sink);
    }
    g
}

/// A 2D grid of `rows × cols` empty tiles, each waiting for its four
/// neighbours' previous iteration (distance-1 edges): a Jacobi sweep's
/// dependencies without the body. Each tile has 2–4 successors of 2–5
/// predecessor edges, the shape that misses the single-thread fast path.
/// With `pin = Some(p)`, the tiles are pinned in `p × p` patches, patch k
/// to compute slot k (`p = 1`: tile k on slot k, the Jacobi solver's
/// placement); `p` divides `rows` and `cols`.
pub fn stencil_graph(rows: u32, cols: u32, pin: Option<u32>) -> Graph {
    let mut g = Graph::new();
    let k = g.add_kind(empty_kind()).expect("a valid kind");
    let ids: Vec<_> = (0..rows * cols)
        .map(|i| {
            let t = g.add_task_bytes(k, &[]);
            if let Some(p) = pin {
                let (r, c) = (i / cols, i % cols);
                g.pin(t, (r / p) * (cols / p) + c / p);
            }
            t
        })
        .collect();
    let at = |r: u32, c: u32| ids[(r * cols + c) as usize];
    for r in 0..rows {
        for c in 0..cols {
            if r + 1 < rows {
                g.add_carried_edge(at(r, c), at(r + 1, c));
                g.add_carried_edge(at(r + 1, c), at(r, c));
            }
            if c + 1 < cols {
                g.add_carried_edge(at(r, c), at(r, c + 1));
                g.add_carried_edge(at(r, c + 1), at(r, c));
            }
        }
    }
    g
}

/// `n` independent empty tasks.
pub fn independent_graph(n: u64) -> Graph {
    let mut g = Graph::new();
    let k = g.add_kind(empty_kind()).expect("a valid kind");
    for _ in 0..n {
        g.add_task_bytes(k, &[]);
    }
    g
}

/// One timed autarky run.
pub struct AutarkyRun {
    /// Device-event seconds around the launch.
    pub event_s: f64,
    /// In-kernel `%globaltimer` seconds.
    pub device_s: Option<f64>,
    /// Trace records the rings could not keep (traced runs).
    pub dropped: Option<u64>,
    /// The trace (traced runs).
    pub trace: Option<autarky::trace::Trace>,
}

/// One timed autarky run, traced with `trace` records per block when
/// given. Checks that every instance ran.
pub fn run_autarky(
    rt: &Runtime,
    g: &Graph,
    iterations: u32,
    what: &str,
    trace: Option<u32>,
) -> BoxResult<AutarkyRun> {
    let opts = RunOptions {
        iterations,
        timed: true,
        trace: trace.map(TraceOptions::records_per_block),
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
    Ok(AutarkyRun {
        event_s: ev as f64 * 1e-3,
        device_s: r.device_ns.map(|ns| ns as f64 * 1e-9),
        dropped: r.trace.as_ref().map(|t| t.dropped),
        trace: r.trace,
    })
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

/// The cases as one aligned table with ratios and target verdicts.
pub fn table(cases: &[Case]) -> String {
    let mut lines: Vec<[String; 6]> = vec![[
        "case".into(),
        "variant".into(),
        "median".into(),
        "spread min–max".into(),
        "baseline/autarky".into(),
        "target".into(),
    ]];
    for c in cases {
        let reference = c
            .rows
            .iter()
            .find(|r| r.role == Role::Autarky)
            .and_then(|r| Spread::of(&c.values(r)))
            .map(|s| s.median);
        let mut first = true;
        for r in &c.rows {
            let Some(s) = Spread::of(&c.values(r)) else {
                continue;
            };
            let ratio = match (r.role, reference) {
                (Role::Baseline | Role::AutarkyAlt, Some(a)) => {
                    let x = if c.metric.lower_is_better() {
                        s.median / a
                    } else {
                        a / s.median
                    };
                    format!("{x:.2}×")
                }
                _ => "—".into(),
            };
            let target = match r.role {
                Role::Autarky | Role::AutarkyAlt => format!(
                    "{} {}",
                    c.metric.target_text(),
                    if c.metric.target(c.reference_median()).met_by(s.median) {
                        "ok"
                    } else {
                        "MISS"
                    }
                ),
                _ => String::new(),
            };
            lines.push([
                if first { c.name.clone() } else { String::new() },
                r.variant.into(),
                format!("{} {}", fmt_value(s.median), c.metric.unit()),
                format!("{}–{}", fmt_value(s.min), fmt_value(s.max)),
                ratio,
                target,
            ]);
            first = false;
        }
    }
    crate::report::render_table(lines.into_iter().map(Vec::from).collect())
}
