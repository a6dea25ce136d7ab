//! The dispatch bench's table (benches/dispatch/cases.rs), with synthetic
//! reps: runs everywhere, no GPU needed. Every autarky row of the stencil
//! case — the graph's default placement and its pinned forms — is held
//! against the case's target, and the baselines are not.

#[path = "../benches/dispatch/cases.rs"]
#[allow(dead_code)]
mod cases;
#[path = "../benches/common/report.rs"]
mod report;

#[allow(dead_code)]
type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

use cases::{Case, Metric, Role, STENCIL_REFERENCE, STENCIL_TARGET_FACTOR};

/// The stencil case with 1000 iterations a rep: seconds = µs × 1e-3.
fn stencil(rows: &[(&'static str, Role, f64)]) -> Case {
    let variants: Vec<(&'static str, Role)> = rows.iter().map(|&(v, r, _)| (v, r)).collect();
    let mut c = Case::new(
        "h200",
        "stencil",
        1024,
        "tiles",
        Metric::IterationUs {
            iterations: 1000,
            reference: STENCIL_REFERENCE,
            factor: STENCIL_TARGET_FACTOR,
        },
        vec![("tiles", 1024)],
        &variants,
    );
    for &(v, _, us) in rows {
        for d in [-0.01, 0.0, 0.01] {
            c.push(v, (us + d) * 1e-3);
        }
    }
    c
}

/// The table's line for `variant`, its padding trimmed.
fn line<'a>(table: &'a str, variant: &str) -> &'a str {
    table
        .lines()
        .find(|l| {
            // The variant column: after the case's name (first line only).
            let rest = l.strip_prefix("h200/dispatch/stencil/1024").unwrap_or(l);
            rest.trim_start().starts_with(&format!("{variant}  "))
        })
        .unwrap_or_else(|| panic!("no line for {variant} in\n{table}"))
        .trim_end()
}

#[test]
fn every_autarky_row_of_the_stencil_is_held_against_the_target() {
    // The graph's median 1.26: the bar is 0.77 × 1.26 = 0.97 µs.
    let c = stencil(&[
        ("autarky", Role::Autarky, 4.9),
        ("autarky pinned", Role::AutarkyAlt, 1.16),
        (STENCIL_REFERENCE, Role::Baseline, 1.26),
        ("autarky pinned, 2×2 a block", Role::AutarkyAlt, 0.95),
    ]);
    let t = cases::table(&[c]);
    assert!(line(&t, "autarky").ends_with("MISS"), "{t}");
    assert!(line(&t, "autarky pinned").ends_with("MISS"), "{t}");
    assert!(
        line(&t, "autarky pinned, 2×2 a block").ends_with("ok"),
        "{t}"
    );
    let graph = line(&t, STENCIL_REFERENCE);
    assert!(!graph.contains("MISS") && !graph.ends_with("ok"), "{t}");
    // Ratios against the default placement's row, as for every baseline.
    assert!(line(&t, "autarky pinned").contains("0.24×"), "{t}");
}

#[test]
fn the_report_keeps_the_pinned_rows_as_baselines_of_the_default_row() {
    let c = stencil(&[
        ("autarky", Role::Autarky, 4.9),
        ("autarky pinned", Role::AutarkyAlt, 1.16),
        (STENCIL_REFERENCE, Role::Baseline, 1.26),
    ]);
    let r = c.to_result().expect("autarky ran");
    assert_eq!(r.autarky.variant, "autarky");
    assert_eq!(r.meets_target, Some(false));
    let names: Vec<&str> = r.baselines.iter().map(|b| b.variant.as_str()).collect();
    assert_eq!(names, vec!["autarky pinned", STENCIL_REFERENCE]);
    let pinned = r.baselines[0].ratio_baseline_over_autarky.expect("a ratio");
    assert!((pinned - 1.16 / 4.9).abs() < 1e-9, "{pinned}");
}
