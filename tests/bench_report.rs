//! The bench report writer (benches/common/report.rs), with synthetic
//! results: runs everywhere, no GPU needed.

#[path = "../benches/common/report.rs"]
mod report;

use std::collections::BTreeMap;

use report::{CaseResult, Report, Spread, Target};

fn case(family: &str, n: u64, autarky: Vec<f64>, graph: Vec<f64>) -> CaseResult {
    CaseResult::new(
        format!("h200/dispatch/{family}/{n}"),
        family,
        n as f64,
        "tasks in the chain (N)",
        "µs/hand-off",
        true,
        Some(Target::Le(0.5)),
        BTreeMap::from([("n".to_string(), n)]),
        ("autarky", autarky),
        vec![("cuda-graph", graph), ("launch/task", vec![])],
        vec![("autarky in-kernel", vec![0.3, 0.31])],
    )
    .expect("autarky has values")
}

fn synthetic() -> Report {
    let mut facts = serde_json::Map::new();
    facts.insert("device".into(), "synthetic".into());
    Report {
        bench: "dispatch".into(),
        facts,
        cases: vec![
            case("chain", 100, vec![0.9, 1.0, 1.1], vec![1.4, 1.5, 2.0]),
            case("chain", 10_000, vec![0.4, 0.45, 0.6], vec![0.7, 0.7, 0.8]),
            case("self-chain", 1000, vec![0.2, 0.3], vec![0.6, 0.8]),
        ],
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("autarky-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn spread_is_median_and_nearest_rank_percentiles() {
    let s = Spread::of(&[5.0, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 5.0));
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    let s = Spread::of(&v).unwrap();
    assert_eq!((s.p10, s.p90, s.median), (2.0, 18.0, 10.5));
    assert!(Spread::of(&[]).is_none());
    // A NaN (a failed timing) is no spread at all, not a shifted median.
    assert!(Spread::of(&[1.0, f64::NAN, 3.0]).is_none());
}

#[test]
fn results_json_has_every_case_with_medians_spreads_ratios_and_units() {
    let dir = temp_dir("report-json");
    let w = report::write(&synthetic(), &dir).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&w.json).unwrap()).unwrap();
    assert_eq!(v["bench"], "dispatch");
    assert_eq!(v["facts"]["device"], "synthetic");
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    let c = &cases[1];
    assert_eq!(c["name"], "h200/dispatch/chain/10000");
    assert_eq!(c["unit"], "µs/hand-off");
    assert_eq!(c["autarky"]["median"], 0.45);
    assert_eq!(c["autarky"]["min"], 0.4);
    assert_eq!(c["autarky"]["max"], 0.6);
    assert_eq!(c["target"]["le"], 0.5);
    assert_eq!(c["meets_target"], true);
    assert_eq!(cases[0]["meets_target"], false);
    // A baseline without values is left out, not reported as zero.
    let b = c["baselines"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["variant"], "cuda-graph");
    assert_eq!(b[0]["median"], 0.7);
    let ratio = b[0]["ratio_baseline_over_autarky"].as_f64().unwrap();
    assert!((ratio - 0.7 / 0.45).abs() < 1e-12, "{ratio}");
    assert_eq!(c["references"][0]["variant"], "autarky in-kernel");
    assert_eq!(c["autarky"]["values"].as_array().unwrap().len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_svg_chart_is_written_per_case_family() {
    let dir = temp_dir("report-svg");
    let w = report::write(&synthetic(), &dir).unwrap();
    let names: Vec<String> = w
        .charts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["dispatch-chain.svg", "dispatch-self-chain.svg"]);
    let svg = std::fs::read_to_string(&w.charts[0]).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    for label in ["autarky", "cuda-graph", "autarky in-kernel", "µs/hand-off"] {
        assert!(svg.contains(label), "chart lacks {label}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_skip_record_says_why() {
    let dir = temp_dir("report-skip");
    let p = report::write_skip("dispatch", "no GPU", &dir).unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"bench": "dispatch", "skipped": "no GPU"})
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
