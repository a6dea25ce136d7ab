//! The two-GPU part's results: autarky's CG on one GPU (1 PE) against two
//! GPUs (2 PEs, one per GPU) on the same matrix, standard and single
//! reduction; the 2-vs-1 speedup, the target, the table and the
//! JSON record. No GPU code here (tests/cg_bench.rs runs it on made-up
//! times).

use serde_json::json;

use crate::report::Spread;

/// The two recurrences the part times, in table order.
pub const VARIANTS: [&str; 2] = ["standard", "single-reduction"];

/// The target of issue 11 item 7 / issue 13 for two GPUs, as printed.
pub const TARGET: &str = "on two H200s, faster than one at 256³ (standard CG)";

/// One matrix of the two-GPU part.
pub struct ScalingCase {
    /// `<gpu>/cg-2gpu/<family>/<n>`.
    pub name: String,
    /// `poisson3d` or `poisson2d`.
    pub family: &'static str,
    /// Grid points per axis.
    pub n: u32,
    /// Matrix rows.
    pub rows: u64,
    /// Stored entries.
    pub nnz: u64,
    /// CG iterations per timed run.
    pub iterations: u32,
    /// Seconds per timed run, `[variant][gpus − 1]` (variants as in
    /// [`VARIANTS`]).
    pub seconds: [[Vec<f64>; 2]; 2],
    /// The correctness check's summary.
    pub checked: String,
}

fn index(variant: &str) -> usize {
    VARIANTS
        .iter()
        .position(|v| *v == variant)
        .unwrap_or_else(|| panic!("no CG variant {variant:?} in the two-GPU part"))
}

impl ScalingCase {
    /// A case with no runs yet.
    pub fn new(
        slug: &str,
        family: &'static str,
        n: u32,
        (rows, nnz): (u64, u64),
        iterations: u32,
    ) -> ScalingCase {
        ScalingCase {
            name: format!("{slug}/cg-2gpu/{family}/{n}"),
            family,
            n,
            rows,
            nnz,
            iterations,
            seconds: Default::default(),
            checked: String::new(),
        }
    }

    /// Records one timed run.
    ///
    /// # Panics
    /// On a variant not in [`VARIANTS`] or `gpus` not 1 or 2 (a typo in
    /// the bench).
    pub fn push(&mut self, variant: &str, gpus: u32, seconds: f64) {
        assert!(gpus == 1 || gpus == 2, "the part runs on 1 or 2 GPUs");
        self.seconds[index(variant)][gpus as usize - 1].push(seconds);
    }

    /// µs per iteration of `variant` on `gpus` GPUs, median and spread.
    pub fn spread(&self, variant: &str, gpus: u32) -> Option<Spread> {
        let s = self.seconds[index(variant)].get(gpus.checked_sub(1)? as usize)?;
        let us: Vec<f64> = s.iter().map(|t| t * 1e6 / self.iterations as f64).collect();
        Spread::of(&us)
    }

    /// Median on 1 GPU / median on 2 GPUs (> 1: two GPUs are faster).
    pub fn speedup(&self, variant: &str) -> Option<f64> {
        let (one, two) = (self.spread(variant, 1)?, self.spread(variant, 2)?);
        (two.median > 0.0).then(|| one.median / two.median)
    }

    /// Whether this case carries the target (Poisson 3D 256³).
    pub fn has_target(&self) -> bool {
        self.family == "poisson3d" && self.n == 256
    }

    /// Target met (standard CG faster on two GPUs than on one); `None` when
    /// the case has no target or no numbers.
    pub fn verdict(&self) -> Option<bool> {
        if !self.has_target() {
            return None;
        }
        Some(self.speedup(VARIANTS[0])? > 1.0)
    }

    /// The case's JSON record.
    pub fn to_json(&self) -> serde_json::Value {
        let mut variants = Vec::new();
        for v in VARIANTS {
            for gpus in [1, 2] {
                variants.push(json!({
                    "variant": v,
                    "gpus": gpus,
                    "pes": gpus,
                    "spread_us_per_iteration": self.spread(v, gpus),
                    "seconds_per_run": self.seconds[index(v)][gpus as usize - 1],
                }));
            }
        }
        json!({
            "name": self.name,
            "family": self.family,
            "n": self.n,
            "rows": self.rows,
            "nnz": self.nnz,
            "iterations": self.iterations,
            "unit": "µs/iteration",
            "variants": variants,
            "speedup_2_over_1": VARIANTS
                .iter()
                .map(|v| (v.to_string(), json!(self.speedup(v))))
                .collect::<serde_json::Map<_, _>>(),
            "target": if self.has_target() { json!(TARGET) } else { json!(null) },
            "meets_target": self.verdict(),
            "checked": self.checked,
        })
    }
}

fn cell(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!("{:.2} [{:.2}–{:.2}]", s.median, s.min, s.max),
        None => "—".into(),
    }
}

fn times(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{x:.2}×"))
}

/// The table: µs per iteration on 1 and 2 GPUs per variant, and the
/// speedups.
pub fn table(cases: &[&ScalingCase]) -> String {
    let mut lines = vec![[
        "two-GPU case",
        "rows",
        "iters",
        "standard 1 GPU",
        "standard 2 GPUs",
        "2 vs 1",
        "single-red. 1 GPU",
        "single-red. 2 GPUs",
        "2 vs 1",
        "target",
    ]
    .map(String::from)
    .to_vec()];
    for c in cases {
        let target = match (c.has_target(), c.verdict()) {
            (true, Some(ok)) => format!("faster on 2 {}", if ok { "ok" } else { "MISS" }),
            (true, None) => "faster on 2 —".into(),
            _ => String::new(),
        };
        let [sd, sr] = VARIANTS;
        lines.push(vec![
            c.name.clone(),
            c.rows.to_string(),
            c.iterations.to_string(),
            cell(c.spread(sd, 1)),
            cell(c.spread(sd, 2)),
            times(c.speedup(sd)),
            cell(c.spread(sr, 1)),
            cell(c.spread(sr, 2)),
            times(c.speedup(sr)),
            target,
        ]);
    }
    crate::report::render_table(lines)
}

/// The target line under the table: what was measured at 256³, or why
/// nothing was.
pub fn target_line(cases: &[&ScalingCase]) -> String {
    let got = match cases.iter().find(|c| c.has_target()) {
        None => "not run (256 not in --two-gpu)".to_string(),
        Some(c) => match (c.speedup(VARIANTS[0]), c.verdict()) {
            (Some(s), Some(ok)) => format!(
                "2 GPUs {s:.2}× the speed of 1: {}",
                if ok { "met" } else { "MISSED" }
            ),
            _ => "no measurement".into(),
        },
    };
    format!("  target: {TARGET} — {got}")
}
