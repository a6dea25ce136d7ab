//! The Jacobi bench's host side without a GPU: its baseline kernels compile
//! with NVRTC alone (sm_90, no toolkit headers), its initial arrays hold
//! the problem's Dirichlet layer, its case table applies the issue's
//! targets, and its iteration counts give runs of milliseconds.

#![allow(clippy::result_large_err)]

mod common;

#[path = "../benches/jacobi/baselines.rs"]
#[allow(dead_code)]
mod baselines;
#[path = "../benches/jacobi/cases.rs"]
#[allow(dead_code)]
mod cases;
#[path = "../benches/jacobi/config.rs"]
#[allow(dead_code)]
mod config;
#[path = "../benches/common/knobs.rs"]
mod knobs;
#[path = "../benches/common/report.rs"]
mod report;

pub type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

use autarky::runtime::nvrtc::{compile_cubin, Program};
use cases::{Case, Role};
use common::{nvrtc_trial, run_trials, trial};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "the_baseline_kernels_compile_for_sm_90_with_nvrtc_alone",
            the_baseline_kernels_compile_for_sm_90_with_nvrtc_alone,
        ),
        trial(
            "the_kernel_argument_structs_match_their_c_layout",
            the_kernel_argument_structs_match_their_c_layout,
        ),
        trial(
            "initial_arrays_hold_the_dirichlet_layer_and_a_zero_interior",
            initial_arrays_hold_the_dirichlet_layer_and_a_zero_interior,
        ),
        trial("interior_reads_rows_in_order", interior_reads_rows_in_order),
        trial("tiles_cover_the_grid", tiles_cover_the_grid),
        trial(
            "iterations_give_runs_of_milliseconds",
            iterations_give_runs_of_milliseconds,
        ),
        trial(
            "the_256_target_needs_both_the_time_and_the_lead_over_the_graph",
            the_256_target_needs_both_the_time_and_the_lead_over_the_graph,
        ),
        trial(
            "the_16384_target_is_a_bandwidth",
            the_16384_target_is_a_bandwidth,
        ),
        trial(
            "a_temporal_blocking_column_is_held_when_it_is_faster_and_named",
            a_temporal_blocking_column_is_held_when_it_is_faster_and_named,
        ),
        trial(
            "the_table_and_the_report_carry_every_variant_and_verdict",
            the_table_and_the_report_carry_every_variant_and_verdict,
        ),
    ])
}

fn the_baseline_kernels_compile_for_sm_90_with_nvrtc_alone() {
    let cubin = compile_cubin(&Program {
        name: "jacobi_baselines.cu",
        source: baselines::SOURCE,
        headers: &[],
        options: vec!["--std=c++17".into()],
        arch: 90,
    })
    .unwrap_or_else(|e| panic!("the baselines do not compile: {e}"));
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    for name in [
        "jacobi2d_step",
        "jacobi2d_step_norm",
        "jacobi3d_step",
        "jacobi_persistent",
    ] {
        assert!(
            cubin.windows(name.len()).any(|w| w == name.as_bytes()),
            "the CUBIN lacks {name}"
        );
    }
}

fn the_kernel_argument_structs_match_their_c_layout() {
    // struct Sweep: 3 pointers + 6 unsigned; struct Persist: 3 pointers +
    // 7 unsigned, padded to 8.
    assert_eq!(std::mem::size_of::<baselines::Sweep>(), 48);
    assert!(baselines::SOURCE.contains("unsigned nx, ny;"));
    assert!(baselines::SOURCE.contains("unsigned n, tiles_x, tiles_y, tiles, iterations, dim;"));
}

fn g(z: i64, y: i64, x: i64) -> f64 {
    100.0 * z as f64 + 10.0 * y as f64 + x as f64 + 0.5
}

fn initial_arrays_hold_the_dirichlet_layer_and_a_zero_interior() {
    let n = 5usize;
    let s = n + 2;
    let a = baselines::initial(2, n, &g);
    assert_eq!(a.len(), s * s);
    // Ghost (padded y, x) is global (y − 1, x − 1), z = 0.
    assert_eq!(a[0], g(0, -1, -1) as f32);
    assert_eq!(a[s - 1], g(0, -1, n as i64) as f32);
    assert_eq!(a[3 * s], g(0, 2, -1) as f32);
    assert_eq!(a[3 * s + s - 1], g(0, 2, n as i64) as f32);
    assert_eq!(a[(s - 1) * s + 2], g(0, n as i64, 1) as f32);
    assert!(baselines::interior(2, n, &a).iter().all(|&v| v == 0.0));

    let b = baselines::initial(3, n, &g);
    assert_eq!(b.len(), s * s * s);
    let at = |z: usize, y: usize, x: usize| b[(z * s + y) * s + x];
    assert_eq!(at(0, 3, 3), g(-1, 2, 2) as f32);
    assert_eq!(at(s - 1, 1, 4), g(n as i64, 0, 3) as f32);
    assert_eq!(at(2, 0, 4), g(1, -1, 3) as f32);
    assert_eq!(at(2, 3, 0), g(1, 2, -1) as f32);
    assert_eq!(at(2, 3, s - 1), g(1, 2, n as i64) as f32);
    let inner = baselines::interior(3, n, &b);
    assert_eq!(inner.len(), n * n * n);
    assert!(inner.iter().all(|&v| v == 0.0));
}

fn interior_reads_rows_in_order() {
    let n = 3usize;
    let s = n + 2;
    let padded: Vec<f32> = (0..s * s).map(|i| i as f32).collect();
    assert_eq!(
        baselines::interior(2, n, &padded),
        vec![6., 7., 8., 11., 12., 13., 16., 17., 18.]
    );
}

fn tiles_cover_the_grid() {
    assert_eq!(baselines::tiles_2d(256, 256), (8, 8, 64));
    assert_eq!(baselines::tiles_2d(33, 1), (2, 1, 2));
    assert_eq!(baselines::tiles_2d(1024, 512), (32, 16, 512));
}

fn iterations_give_runs_of_milliseconds() {
    assert_eq!(config::default_iterations(2 * 4 * 256 * 256), 5000);
    let k = config::default_iterations(2 * 4 * 4096 * 4096);
    assert!((300..=400).contains(&k), "{k}");
    assert_eq!(config::default_iterations(2 * 4 * 16384 * 16384), 100);
    // Multiples of 4 everywhere: the S = 2 and S = 4 columns run at every size.
    for n in [128u64, 256, 1000, 4096, 8192, 16384, 30000] {
        assert_eq!(config::default_iterations(2 * 4 * n * n) % 4, 0, "{n}²");
    }
}

fn case(n: u32, autarky_us: f64, graph_us: f64) -> Case {
    let k = 1000;
    let mut c = Case::new(
        "h200",
        "jacobi2d",
        n,
        2,
        k,
        &[
            ("autarky", Role::Autarky),
            ("autarky norm/1", Role::Reference),
            ("launch", Role::Baseline),
            ("cuda-graph", Role::Baseline),
        ],
    );
    for _ in 0..3 {
        c.push("autarky", autarky_us * 1e-6 * k as f64);
        c.push("autarky norm/1", 2.0 * autarky_us * 1e-6 * k as f64);
        c.push("launch", 3.0 * 1e-6 * k as f64);
        c.push("cuda-graph", graph_us * 1e-6 * k as f64);
    }
    c
}

fn the_256_target_needs_both_the_time_and_the_lead_over_the_graph() {
    assert_eq!(case(256, 0.9, 1.2).verdict(), Some(true));
    // Fast enough, but only 1.1× ahead of the CUDA graph.
    assert_eq!(case(256, 0.9, 1.0).verdict(), Some(false));
    // Far ahead, but over 1 µs.
    assert_eq!(case(256, 1.1, 2.0).verdict(), Some(false));
    let (v, want, got) = case(256, 0.9, 1.8).ratio_goal().unwrap();
    assert_eq!((v, want), ("cuda-graph", 1.3));
    assert!((got.unwrap() - 2.0).abs() < 1e-9);
    // A size without a target has no verdict.
    assert_eq!(case(512, 0.9, 1.2).verdict(), None);
}

fn the_16384_target_is_a_bandwidth() {
    // 2 · 16384² · 4 bytes at 3.6 TB/s is 596.5 µs.
    assert_eq!(case(16384, 590.0, 700.0).verdict(), Some(true));
    assert_eq!(case(16384, 600.0, 700.0).verdict(), Some(false));
    assert!((case(16384, 596.5, 700.0).tbps(596.5) - 3.6).abs() < 1e-3);
}

/// The S = 4 column computes the same grid, so the target is held against
/// the fastest of it and `autarky`, and the table says which one.
fn a_temporal_blocking_column_is_held_when_it_is_faster_and_named() {
    let with_s4 = |s4_us: f64| {
        let mut c = case(256, 1.1, 2.0);
        c.add_variant("autarky S=4", Role::Candidate);
        for _ in 0..3 {
            c.push("autarky S=4", s4_us * 1e-6 * 1000.0);
        }
        c
    };
    // S = 1 misses (1.1 µs); S = 4 at 0.87 meets both conditions.
    let c = with_s4(0.87);
    assert_eq!(c.verdict(), Some(true));
    let t = cases::table(&[&c]);
    assert!(
        t.contains("≤ 1.0 µs & ≥ 1.3× graph ok (autarky S=4)"),
        "{t}"
    );
    assert!(t.contains("2.30× (cuda-graph) (autarky S=4)"), "{t}");
    let r = c.to_result().unwrap();
    assert_eq!(r.autarky.variant, "autarky S=4");
    assert!((r.autarky.spread.median - 0.87).abs() < 1e-9);
    // `autarky` (S = 1) is kept, as a reference.
    assert!(
        r.references.iter().any(|x| x.variant == "autarky"),
        "{:?}",
        r.references
    );
    // A slower candidate changes nothing: `autarky` is held, unnamed.
    let c = with_s4(1.5);
    assert_eq!(c.verdict(), Some(false));
    let t = cases::table(&[&c]);
    assert!(t.contains("≤ 1.0 µs & ≥ 1.3× graph MISS"), "{t}");
    assert!(!t.contains("(autarky S=4)"), "{t}");
}

fn the_table_and_the_report_carry_every_variant_and_verdict() {
    let a = case(256, 0.9, 1.2);
    let b = case(1024, 3.0, 4.0);
    let t = cases::table(&[&a, &b]);
    assert!(t.contains("h200/jacobi2d/256"), "{t}");
    assert!(t.contains("≤ 1.0 µs & ≥ 1.3× graph ok"), "{t}");
    assert!(t.contains("≤ 2.5 µs MISS"), "{t}");
    // best baseline at 256: the graph at 1.2 µs / 0.9 µs.
    assert!(t.contains("1.33× (cuda-graph)"), "{t}");
    let r = a.to_result().unwrap();
    assert_eq!(r.unit, "µs/iteration");
    assert_eq!(r.meets_target, Some(true));
    assert_eq!(r.baselines.len(), 2);
    assert_eq!(r.references.len(), 1);
    assert!((r.autarky.spread.median - 0.9).abs() < 1e-9);
    assert_eq!(r.params["iterations"], 1000);
    // The report's verdict includes the lead over the graph.
    assert_eq!(
        case(256, 0.9, 1.0).to_result().unwrap().meets_target,
        Some(false)
    );
}
