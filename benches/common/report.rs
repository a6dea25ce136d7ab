//! Bench reports shared by every bench binary (dispatch, and later jacobi
//! and cg): `results.json` and one SVG chart per case family, written into
//! one directory (`AUTARKY_BENCH_OUT`, default `target/bench-report/`).
//!
//! Include it with `#[path = "../common/report.rs"] mod report;` (from a
//! `benches/<name>/main.rs`) or `#[path = "common/report.rs"]` (from a
//! `benches/<name>.rs`). It needs `serde`, `serde_json` and `plotters`
//! (svg backend, line series, error bars) and nothing from the bench.
//!
//! Shape of `results.json`:
//!
//! ```text
//! { "bench": "dispatch", "facts": { "device": "NVIDIA H200", … },
//!   "cases": [ { "name": "h200/dispatch/chain/10000", "family": "chain",
//!                "size": 10000, "size_label": "tasks in the chain (N)",
//!                "unit": "µs/hand-off", "lower_is_better": true,
//!                "target": { "le": 0.5 } | { "ge": 1.0 } | null,
//!                "params": { "n": 10000 },
//!                "autarky": { "variant": "autarky", "median": …, "min": …,
//!                             "max": …, "p10": …, "p90": …, "values": […] },
//!                "baselines": [ { "variant": "cuda-graph", …,
//!                                 "ratio_baseline_over_autarky": 1.4 } ],
//!                "references": [ … same shape, not compared … ] } ] }
//! ```
//!
//! `ratio_baseline_over_autarky` is baseline time / autarky time per unit
//! of work: above 1 autarky is faster, whichever way the unit points.
//! A skipped bench writes `{ "bench": …, "skipped": "<reason>" }`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::Serialize;

/// Median and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Middle value (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// 10th percentile (nearest rank; min below 10 samples).
    pub p10: f64,
    /// 90th percentile (nearest rank; max below 10 samples).
    pub p90: f64,
}

impl Spread {
    /// The spread of `samples`, `None` when there are none — or when any
    /// is NaN (a failed timing): a median of the rest would hide it, and
    /// NaN sorts last, so it would shift the median too.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        if samples.is_empty() || samples.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        let rank = |p: f64| s[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Spread {
            median,
            min: s[0],
            max: s[n - 1],
            p10: rank(0.10),
            p90: rank(0.90),
        })
    }
}

/// One variant's values in a case.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// `autarky`, `cuda-graph`, …
    pub variant: String,
    /// Median and spread of `values`.
    #[serde(flatten)]
    pub spread: Spread,
    /// Baseline time / autarky time (baselines only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_baseline_over_autarky: Option<f64>,
    /// Every timed rep, in the case's unit.
    pub values: Vec<f64>,
}

/// A target the autarky median is held against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// At most this value (a time).
    Le(f64),
    /// At least this value (a rate).
    Ge(f64),
}

impl Target {
    /// Whether `v` meets it.
    pub fn met_by(self, v: f64) -> bool {
        match self {
            Target::Le(t) => v <= t,
            Target::Ge(t) => v >= t,
        }
    }
}

/// One case: a family (what is measured) at one size.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// `<gpu>/<bench>/<family>/<size>`.
    pub name: String,
    /// Cases of one family share a chart.
    pub family: String,
    /// The x value in the family's chart.
    pub size: f64,
    /// What `size` counts (the chart's x label).
    pub size_label: String,
    /// Unit of every value (the chart's y label).
    pub unit: String,
    /// Whether smaller values are better (times) or larger (rates).
    pub lower_is_better: bool,
    /// The target for the autarky median, if any.
    pub target: Option<Target>,
    /// Whether the autarky median meets the target.
    pub meets_target: Option<bool>,
    /// Facts about the case (`n`, `tasks`, …).
    pub params: BTreeMap<String, u64>,
    /// autarky's values.
    pub autarky: Series,
    /// What autarky is compared against.
    pub baselines: Vec<Series>,
    /// Other readings of autarky shown for reference (e.g. the in-kernel
    /// clock), drawn but not compared.
    pub references: Vec<Series>,
}

impl CaseResult {
    /// A case from raw values; `None` when autarky has no values. Ratios
    /// and the target verdict are computed here.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        family: &str,
        size: f64,
        size_label: &str,
        unit: &str,
        lower_is_better: bool,
        target: Option<Target>,
        params: BTreeMap<String, u64>,
        autarky: (&str, Vec<f64>),
        baselines: Vec<(&str, Vec<f64>)>,
        references: Vec<(&str, Vec<f64>)>,
    ) -> Option<CaseResult> {
        let series = |(variant, values): (&str, Vec<f64>)| {
            Spread::of(&values).map(|spread| Series {
                variant: variant.to_string(),
                spread,
                ratio_baseline_over_autarky: None,
                values,
            })
        };
        let autarky = series(autarky)?;
        let a = autarky.spread.median;
        let baselines = baselines
            .into_iter()
            .filter_map(series)
            .map(|mut s| {
                let b = s.spread.median;
                s.ratio_baseline_over_autarky = Some(if lower_is_better { b / a } else { a / b });
                s
            })
            .collect();
        Some(CaseResult {
            name,
            family: family.to_string(),
            size,
            size_label: size_label.to_string(),
            unit: unit.to_string(),
            lower_is_better,
            target,
            meets_target: target.map(|t| t.met_by(a)),
            params,
            autarky,
            baselines,
            references: references.into_iter().filter_map(series).collect(),
        })
    }
}

/// A bench's results.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Bench name (`dispatch`).
    pub bench: String,
    /// Facts about the machine and the run (device, grid, reps, …).
    pub facts: serde_json::Map<String, serde_json::Value>,
    /// Every case.
    pub cases: Vec<CaseResult>,
}

/// What [`write`] wrote.
#[derive(Debug)]
pub struct Written {
    /// `results.json`.
    pub json: PathBuf,
    /// One SVG per family, in family order.
    pub charts: Vec<PathBuf>,
}

/// `AUTARKY_BENCH_OUT`, else `target/bench-report/` of the workspace (or
/// of `CARGO_TARGET_DIR`).
pub fn out_dir() -> PathBuf {
    match std::env::var_os("AUTARKY_BENCH_OUT") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(t) if !t.is_empty() => PathBuf::from(t).join("bench-report"),
            _ => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target")
                .join("bench-report"),
        },
    }
}

/// Where bench `name` writes its results: `AUTARKY_BENCH_OUT` when set
/// — that directory itself, so give each bench (and each run you keep) a
/// directory of its own: two benches with the same one overwrite each
/// other's `results.json` — else `out_dir()/name`.
pub fn bench_dir(name: &str) -> PathBuf {
    match std::env::var_os("AUTARKY_BENCH_OUT") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => out_dir().join(name),
    }
}

/// Prints `SKIP <bench> bench: <reason>` and leaves a skip record in `dir`,
/// so a pipeline that reads the JSON sees why it is empty.
pub fn skip(bench: &str, reason: &str, dir: &Path) {
    println!("SKIP {bench} bench: {reason}");
    if let Err(e) = write_skip(bench, reason, dir) {
        eprintln!("{bench} bench: could not write the skip record: {e}");
    }
}

fn create_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))
}

/// Writes `results.json` and one `<bench>-<family>.svg` per family into
/// `dir` (created if missing).
pub fn write(report: &Report, dir: &Path) -> Result<Written, String> {
    create_dir(dir)?;
    let json = dir.join("results.json");
    let text = serde_json::to_string_pretty(report).map_err(|e| format!("encoding JSON: {e}"))?;
    std::fs::write(&json, text + "\n").map_err(|e| format!("writing {}: {e}", json.display()))?;
    let mut families: Vec<&str> = Vec::new();
    for c in &report.cases {
        if !families.contains(&c.family.as_str()) {
            families.push(&c.family);
        }
    }
    let mut charts = Vec::new();
    for f in families {
        let cases: Vec<&CaseResult> = report.cases.iter().filter(|c| c.family == f).collect();
        let path = dir.join(format!("{}-{}.svg", report.bench, slug(f)));
        chart(&report.bench, f, &cases, &path)?;
        charts.push(path);
    }
    Ok(Written { json, charts })
}

/// Writes the skip record `{ "bench", "skipped" }` as `results.json`.
pub fn write_skip(bench: &str, reason: &str, dir: &Path) -> Result<PathBuf, String> {
    create_dir(dir)?;
    let json = dir.join("results.json");
    let v = serde_json::json!({ "bench": bench, "skipped": reason });
    let text = serde_json::to_string_pretty(&v).map_err(|e| format!("encoding JSON: {e}"))?;
    std::fs::write(&json, text + "\n").map_err(|e| format!("writing {}: {e}", json.display()))?;
    Ok(json)
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A log-axis tick label: only 1, 2 and 5 times a power of ten get one
/// (the others stay as grid lines), written short (`2k`, `10M`, `0.5`).
fn tick(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return String::new();
    }
    let exp = v.log10().floor();
    let mantissa = v / 10f64.powf(exp);
    if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 0.02) {
        return String::new();
    }
    let (scaled, suffix) = match v {
        v if v >= 1e9 => (v / 1e9, "G"),
        v if v >= 1e6 => (v / 1e6, "M"),
        v if v >= 1e3 => (v / 1e3, "k"),
        v => (v, ""),
    };
    let text = format!("{scaled:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{suffix}")
}

/// Log-log chart of one family: x = size, y = value; one line per variant
/// through its medians, min–max as error bars.
fn chart(bench: &str, family: &str, cases: &[&CaseResult], path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    // Every variant of the family, in first-seen order, with its points.
    let mut lines: Vec<(String, Vec<(f64, Spread)>)> = Vec::new();
    for c in cases {
        let all = std::iter::once(&c.autarky)
            .chain(&c.baselines)
            .chain(&c.references);
        for s in all {
            match lines.iter_mut().find(|(v, _)| *v == s.variant) {
                Some((_, pts)) => pts.push((c.size, s.spread)),
                None => lines.push((s.variant.clone(), vec![(c.size, s.spread)])),
            }
        }
    }
    for (_, pts) in &mut lines {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let xs: Vec<f64> = cases
        .iter()
        .map(|c| c.size)
        .filter(|&v| positive(v))
        .collect();
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|(_, p)| p.iter().flat_map(|(_, s)| [s.min, s.max]))
        .filter(|&v| positive(v))
        .collect();
    if xs.is_empty() || ys.is_empty() {
        return Err(err(&"no positive values to draw on log axes"));
    }
    // Headroom above the data for the legend (upper right).
    let range = |v: &[f64], top: f64| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        (lo / 1.5)..(hi * top)
    };
    let (xr, yr) = (range(&xs, 1.5), range(&ys, 4.0));
    let unit = &cases[0].unit;
    let size_label = &cases[0].size_label;

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut ch = ChartBuilder::on(&root)
        .caption(
            format!("{bench}: {family} ({unit}, log-log)"),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(xr.log_scale(), yr.log_scale())
        .map_err(|e| err(&e))?;
    ch.configure_mesh()
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .x_desc(size_label.as_str())
        .y_desc(unit.as_str())
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (variant, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<_> = pts
            .iter()
            .filter(|(x, s)| positive(*x) && positive(s.median))
            .collect();
        ch.draw_series(LineSeries::new(
            pts.iter().map(|(x, s)| (*x, s.median)),
            color.stroke_width(2),
        ))
        .map_err(|e| err(&e))?
        .label(variant.as_str())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        ch.draw_series(
            pts.iter().filter(|(_, s)| positive(s.min)).map(|(x, s)| {
                ErrorBar::new_vertical(*x, s.min, s.median, s.max, color.filled(), 8)
            }),
        )
        .map_err(|e| err(&e))?;
    }
    ch.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// `NVIDIA H200` → `h200`: the first word with a digit, lowercased.
pub fn gpu_slug(name: &str) -> String {
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

/// Lines as an aligned table, a rule under the header.
pub fn render_table(lines: Vec<Vec<String>>) -> String {
    use std::fmt::Write as _;
    let cols = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|k| {
            lines
                .iter()
                .filter_map(|l| l.get(k))
                .map(|c| c.chars().count())
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
            let _ = writeln!(
                out,
                "{}",
                "-".repeat(widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1))
            );
        }
    }
    out
}
