//! Cases: one grid size of one family, its variants' times, its target,
//! and how the cases print as tables and turn into the shared report.

use std::collections::BTreeMap;

use crate::report::{CaseResult, Spread, Target};

/// What a row is, which decides how the table and the report treat it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    /// autarky's base row (S = 1, no norm): held against the target and
    /// compared, unless a `Candidate` is faster.
    Autarky,
    /// Another autarky configuration that computes the same grid (temporal
    /// blocking: bitwise the grid of `Autarky`, no norm either), held
    /// against the target too: the verdict takes the fastest of these and
    /// the `Autarky` row, and names it.
    Candidate,
    /// Another autarky configuration of the same case, shown for reference.
    Reference,
    /// What autarky is compared against.
    Baseline,
}

pub struct Row {
    pub variant: &'static str,
    pub role: Role,
    /// Seconds per timed run (of `Case::iterations` iterations).
    pub seconds: Vec<f64>,
}

/// The targets of the issue, for the cases that have one.
#[derive(Clone, Copy, Debug)]
pub struct Goal {
    /// On the autarky median, in µs per iteration.
    pub target: Target,
    /// How the target reads to a person (`≥ 3.6 TB/s`).
    pub text: &'static str,
    /// A second condition: `baseline median / autarky median ≥ x`.
    pub faster_than: Option<(&'static str, f64)>,
}

pub struct Case {
    pub name: String,
    pub family: &'static str,
    pub n: u32,
    /// Iterations per timed run.
    pub iterations: u32,
    /// Interior cells.
    pub cells: u64,
    pub goal: Option<Goal>,
    pub rows: Vec<Row>,
    /// The correctness check's summary (`max |Δ| 0 over 3 grids`).
    pub checked: String,
}

/// µs per iteration of `seconds` for `iterations`.
fn us(seconds: f64, iterations: u32) -> f64 {
    seconds * 1e6 / iterations as f64
}

impl Case {
    pub fn new(
        slug: &str,
        family: &'static str,
        n: u32,
        dims: u32,
        iterations: u32,
        variants: &[(&'static str, Role)],
    ) -> Case {
        Case {
            name: format!("{slug}/{family}/{n}"),
            family,
            n,
            iterations,
            cells: (n as u64).pow(dims),
            goal: goal(family, n),
            rows: variants
                .iter()
                .map(|&(variant, role)| Row {
                    variant,
                    role,
                    seconds: Vec::new(),
                })
                .collect(),
            checked: String::new(),
        }
    }

    /// Records one run of `variant`.
    ///
    /// # Panics
    /// If the case has no such variant (a typo in the bench).
    /// One more variant (a column), timed like the others.
    pub fn add_variant(&mut self, variant: &'static str, role: Role) {
        self.rows.push(Row {
            variant,
            role,
            seconds: Vec::new(),
        });
    }

    pub fn push(&mut self, variant: &str, seconds: f64) {
        let name = &self.name;
        self.rows
            .iter_mut()
            .find(|r| r.variant == variant)
            .unwrap_or_else(|| panic!("case {name} has no variant {variant}"))
            .seconds
            .push(seconds);
    }

    /// Bytes a sweep moves at least (read and write every cell once, f32).
    pub fn bytes_per_iteration(&self) -> u64 {
        2 * 4 * self.cells
    }

    fn values(&self, r: &Row) -> Vec<f64> {
        r.seconds.iter().map(|&s| us(s, self.iterations)).collect()
    }

    pub fn spread(&self, variant: &str) -> Option<Spread> {
        let r = self.rows.iter().find(|r| r.variant == variant)?;
        Spread::of(&self.values(r))
    }

    fn autarky(&self) -> Option<(&Row, Spread)> {
        let r = self.rows.iter().find(|r| r.role == Role::Autarky)?;
        Some((r, Spread::of(&self.values(r))?))
    }

    /// The row held against the target and the baselines: the fastest
    /// (median) of the `Autarky` row and the candidates.
    pub fn held(&self) -> Option<(&Row, Spread)> {
        self.rows
            .iter()
            .filter(|r| matches!(r.role, Role::Autarky | Role::Candidate))
            .filter_map(|r| Some((r, Spread::of(&self.values(r))?)))
            .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
    }

    /// The fastest baseline: (variant, median µs).
    fn best_baseline(&self) -> Option<(&'static str, f64)> {
        self.rows
            .iter()
            .filter(|r| r.role == Role::Baseline)
            .filter_map(|r| Spread::of(&self.values(r)).map(|s| (r.variant, s.median)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// TB/s at `us_per_iteration`.
    pub fn tbps(&self, us_per_iteration: f64) -> f64 {
        self.bytes_per_iteration() as f64 / (us_per_iteration * 1e-6) / 1e12
    }

    /// Whether the held row's median meets the goal (both conditions).
    pub fn verdict(&self) -> Option<bool> {
        let g = self.goal?;
        let (_, a) = self.held()?;
        let mut ok = g.target.met_by(a.median);
        if let Some((v, x)) = g.faster_than {
            ok &= self.spread(v).is_some_and(|b| b.median / a.median >= x);
        }
        Some(ok)
    }

    /// The second condition, measured: (baseline, wanted ratio, measured).
    pub fn ratio_goal(&self) -> Option<(&'static str, f64, Option<f64>)> {
        let (v, x) = self.goal?.faster_than?;
        let measured = match (self.spread(v), self.held()) {
            (Some(b), Some((_, a))) => Some(b.median / a.median),
            _ => None,
        };
        Some((v, x, measured))
    }

    pub fn to_result(&self) -> Option<CaseResult> {
        let of = |role: Role| -> Vec<(&str, Vec<f64>)> {
            self.rows
                .iter()
                .filter(|r| r.role == role)
                .map(|r| (r.variant, self.values(r)))
                .collect()
        };
        // The held row is the report's autarky series; the others of its
        // roles are references.
        let (held, _) = self.held()?;
        let autarky = (held.variant, self.values(held));
        let mut references = of(Role::Reference);
        references.extend(
            self.rows
                .iter()
                .filter(|r| matches!(r.role, Role::Autarky | Role::Candidate))
                .filter(|r| r.variant != held.variant)
                .map(|r| (r.variant, self.values(r))),
        );
        let params = BTreeMap::from([
            ("n".to_string(), self.n as u64),
            ("cells".to_string(), self.cells),
            ("iterations".to_string(), self.iterations as u64),
            (
                "bytes_per_iteration".to_string(),
                self.bytes_per_iteration(),
            ),
        ]);
        let mut r = CaseResult::new(
            self.name.clone(),
            self.family,
            self.n as f64,
            "cells per axis (N)",
            "µs/iteration",
            true,
            self.goal.map(|g| g.target),
            params,
            autarky,
            of(Role::Baseline),
            references,
        )?;
        // The report's verdict covers the time target only; a second
        // condition (faster than a baseline) joins it here.
        r.meets_target = self.verdict();
        Some(r)
    }
}

/// The targets (µs per iteration for the autarky median).
fn goal(family: &str, n: u32) -> Option<Goal> {
    match (family, n) {
        ("jacobi2d", 256) => Some(Goal {
            target: Target::Le(1.0),
            text: "≤ 1.0 µs & ≥ 1.3× graph",
            faster_than: Some(("cuda-graph", 1.3)),
        }),
        ("jacobi2d", 1024) => Some(Goal {
            target: Target::Le(2.5),
            text: "≤ 2.5 µs",
            faster_than: None,
        }),
        ("jacobi2d", 16384) => Some(Goal {
            // 3.6 TB/s over 2 · 16384² · 4 bytes per iteration.
            target: Target::Le(2.0 * 4.0 * 16384f64 * 16384f64 / 3.6e12 * 1e6),
            text: "≥ 3.6 TB/s",
            faster_than: None,
        }),
        ("jacobi3d", 256) => Some(Goal {
            target: Target::Le(45.0),
            text: "≤ 45 µs",
            faster_than: None,
        }),
        _ => None,
    }
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn cell(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!("{} [{}–{}]", fmt(s.median), fmt(s.min), fmt(s.max)),
        None => "—".into(),
    }
}

/// The single-GPU table: µs per iteration, median [min–max].
pub fn table(cases: &[&Case]) -> String {
    let mut lines = vec![[
        "case",
        "iters",
        "autarky",
        "autarky norm/100",
        "autarky norm/1",
        "autarky S=2",
        "autarky S=4",
        "launch",
        "cuda-graph",
        "grid-barrier",
        "best/held",
        "held TB/s",
        "target",
    ]
    .map(String::from)
    .to_vec()];
    for c in cases {
        let a = c.autarky().map(|(_, s)| s);
        // Ratio, TB/s and verdict are of the held row (the fastest of
        // `autarky` and the candidates); a candidate is named.
        let held = c.held();
        let who = match held {
            Some((r, _)) if r.role == Role::Candidate => format!(" ({})", r.variant),
            _ => String::new(),
        };
        let h = held.map(|(_, s)| s);
        let ratio = match (c.best_baseline(), h) {
            (Some((v, b)), Some(h)) => format!("{:.2}× ({v}){who}", b / h.median),
            _ => "—".into(),
        };
        let target = match (c.goal, c.verdict()) {
            (Some(g), Some(ok)) => format!("{} {}{who}", g.text, if ok { "ok" } else { "MISS" }),
            (Some(g), None) => format!("{} —", g.text),
            _ => String::new(),
        };
        lines.push(vec![
            c.name.clone(),
            c.iterations.to_string(),
            cell(a),
            cell(c.spread("autarky norm/100")),
            cell(c.spread("autarky norm/1")),
            cell(c.spread("autarky S=2")),
            cell(c.spread("autarky S=4")),
            cell(c.spread("launch")),
            cell(c.spread("cuda-graph")),
            cell(c.spread("grid-barrier")),
            ratio,
            h.map_or("—".into(), |h| format!("{:.2}", c.tbps(h.median))),
            target,
        ]);
    }
    crate::report::render_table(lines)
}

/// The virtual-PE table: autarky with P = 4 against P = 1.
pub fn pes_table(cases: &[&Case]) -> String {
    let mut lines = vec![["case", "iters", "P = 1", "P = 4", "P=4 / P=1"]
        .map(String::from)
        .to_vec()];
    for c in cases {
        let (p1, p4) = (c.spread("autarky P=1"), c.spread("autarky P=4"));
        lines.push(vec![
            c.name.clone(),
            c.iterations.to_string(),
            cell(p1),
            cell(p4),
            match (p1, p4) {
                (Some(a), Some(b)) => format!("{:.2}×", b.median / a.median),
                _ => "—".into(),
            },
        ]);
    }
    crate::report::render_table(lines)
}
