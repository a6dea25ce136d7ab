//! The CG bench's host side without a GPU: its scalar kernels compile with
//! NVRTC alone (sm_90, no toolkit headers), its knobs parse (and bad ones
//! are refused), its iteration counts give runs of milliseconds without
//! driving small problems into underflow, its residual checks tell right
//! from wrong, its table applies the issue's targets, and its library
//! search finds versioned files.

#![allow(clippy::result_large_err)]

mod common;

#[path = "../benches/cg/baselines.rs"]
#[allow(dead_code)]
mod baselines;
#[path = "../benches/cg/cases.rs"]
#[allow(dead_code)]
mod cases;
#[path = "../benches/cg/check.rs"]
#[allow(dead_code)]
mod check;
#[path = "../benches/cg/config.rs"]
#[allow(dead_code)]
mod config;
#[path = "../benches/common/knobs.rs"]
mod knobs;
#[path = "../benches/cg/libs.rs"]
#[allow(dead_code)]
mod libs;
#[path = "../benches/common/report.rs"]
mod report;
#[path = "../benches/cg/scaling.rs"]
mod scaling;
#[path = "../benches/cg/vendor.rs"]
#[allow(dead_code)]
mod vendor;

pub type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

use autarky::runtime::nvrtc::{compile_cubin, Program};
use autarky::solvers::cg::{cg_reference, ones_rhs, poisson3d, zero_guess, CgOptions, CgVariant};
use cases::{Case, Role, AUTARKY, AUTARKY_SR, DEV_PTR, HOST_SYNC};
use check::Reading;
use common::{nvrtc_trial, run_trials, trial, trial_unless};
use config::{Config, Parsed, TwoGpuCase};
use scaling::ScalingCase;

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "the_scalar_kernels_compile_for_sm_90_with_nvrtc_alone",
            the_scalar_kernels_compile_for_sm_90_with_nvrtc_alone,
        ),
        trial(
            "the_kernel_slots_match_the_rust_slots",
            the_kernel_slots_match_the_rust_slots,
        ),
        trial(
            "defaults_cover_the_issue_cases_and_quick_drops_256",
            defaults_cover_the_issue_cases_and_quick_drops_256,
        ),
        trial(
            "the_two_gpu_part_defaults_to_128_256_and_2d_1024_and_quick_to_128",
            the_two_gpu_part_defaults_to_128_256_and_2d_1024_and_quick_to_128,
        ),
        trial(
            "the_two_gpu_target_is_a_speedup_above_one_at_256_on_standard_cg",
            the_two_gpu_target_is_a_speedup_above_one_at_256_on_standard_cg,
        ),
        trial(
            "the_two_gpu_table_shows_both_variants_speedups_and_the_verdict",
            the_two_gpu_table_shows_both_variants_speedups_and_the_verdict,
        ),
        trial(
            "flags_override_the_environment_and_unknown_arguments_are_reported",
            flags_override_the_environment_and_unknown_arguments_are_reported,
        ),
        trial(
            "bad_knobs_are_errors_that_name_the_knob",
            bad_knobs_are_errors_that_name_the_knob,
        ),
        trial(
            "iterations_give_runs_of_milliseconds_and_stay_below_the_underflow_zone",
            iterations_give_runs_of_milliseconds_and_stay_below_the_underflow_zone,
        ),
        trial(
            "the_cap_keeps_32_cubed_finite_in_both_recurrences_on_the_cpu_reference",
            the_cap_keeps_32_cubed_finite_in_both_recurrences_on_the_cpu_reference,
        ),
        trial(
            "recursive_residuals_must_agree_to_the_tolerance",
            recursive_residuals_must_agree_to_the_tolerance,
        ),
        trial(
            "true_residuals_agree_at_rounding_level_but_not_for_a_wrong_solution",
            true_residuals_agree_at_rounding_level_but_not_for_a_wrong_solution,
        ),
        trial(
            "the_true_residual_of_the_exact_solution_is_zero_and_of_zero_is_one",
            the_true_residual_of_the_exact_solution_is_zero_and_of_zero_is_one,
        ),
        trial(
            "the_64_target_is_twice_as_fast_as_host_sync",
            the_64_target_is_twice_as_fast_as_host_sync,
        ),
        trial(
            "the_256_target_is_no_slower_and_the_2d_target_is_35_us",
            the_256_target_is_no_slower_and_the_2d_target_is_35_us,
        ),
        trial(
            "the_table_and_the_report_carry_every_variant_ratio_and_verdict",
            the_table_and_the_report_carry_every_variant_ratio_and_verdict,
        ),
        trial(
            "the_library_search_prefers_the_most_specific_versioned_file",
            the_library_search_prefers_the_most_specific_versioned_file,
        ),
        trial(
            "the_library_search_lists_the_toolkit_and_leaves_out_stubs",
            the_library_search_lists_the_toolkit_and_leaves_out_stubs,
        ),
        trial_unless(
            "cusparse_preloaded_from_cg_bench_cuda_libs_is_what_cudarc_calls",
            || {
                std::env::var_os("CG_BENCH_CUDA_LIBS")
                    .filter(|v| !v.is_empty())
                    .is_none()
                    .then(|| "opt-in: set CG_BENCH_CUDA_LIBS to a directory holding libcusparse.so* (not on the linker path)".into())
            },
            cusparse_preloaded_from_cg_bench_cuda_libs_is_what_cudarc_calls,
        ),
    ])
}

fn the_scalar_kernels_compile_for_sm_90_with_nvrtc_alone() {
    let cubin = compile_cubin(&Program {
        name: "cg_baselines.cu",
        source: baselines::SOURCE,
        headers: &[],
        options: vec!["--std=c++17".into()],
        arch: 90,
    })
    .unwrap_or_else(|e| panic!("the scalar kernels do not compile: {e}"));
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    for name in ["cg_alpha", "cg_beta"] {
        assert!(
            cubin.windows(name.len()).any(|w| w == name.as_bytes()),
            "the CUBIN lacks {name}"
        );
    }
}

fn the_kernel_slots_match_the_rust_slots() {
    use baselines::slot;
    for (name, v) in [
        ("RHO", slot::RHO),
        ("RHO_NEW", slot::RHO_NEW),
        ("PAP", slot::PAP),
        ("ALPHA", slot::ALPHA),
        ("NEG_ALPHA", slot::NEG_ALPHA),
        ("BETA", slot::BETA),
        ("FAIL_ITER", slot::FAIL_ITER),
        ("FAIL_VALUE", slot::FAIL_VALUE),
    ] {
        let def = format!("#define {name} {v}\n");
        assert!(
            baselines::SOURCE.contains(&def),
            "baselines.cu lacks {def:?}"
        );
        assert!(v < slot::LEN);
    }
}

fn parse(env: &[(&str, &str)], args: &[&str]) -> BoxResult<Parsed> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    Config::from_args(
        |k| {
            env.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        },
        &args,
    )
}

fn run(env: &[(&str, &str)], args: &[&str]) -> (Config, Vec<String>) {
    match parse(env, args).unwrap() {
        Parsed::Run(c, ignored) => (c, ignored),
        Parsed::Help => panic!("asked for help"),
    }
}

fn defaults_cover_the_issue_cases_and_quick_drops_256() {
    let (c, ignored) = run(&[], &["--bench"]);
    assert!(ignored.is_empty(), "--bench is cargo's, not unknown");
    assert_eq!(c.sizes_3d, vec![32, 64, 128, 256]);
    assert_eq!(c.sizes_2d, vec![1024]);
    assert_eq!((c.reps, c.warmup, c.quick), (11, 2, false));
    assert_eq!(c.iterations, None);
    assert!(!c.no_baseline);

    let (q, _) = run(&[], &["--bench", "--quick"]);
    assert!(q.quick);
    assert_eq!(q.sizes_3d, vec![32, 64, 128]);
    assert_eq!(q.sizes_2d, vec![1024]);
    assert!(q.reps < c.reps);
    // The environment says the same.
    let (e, _) = run(&[("CG_BENCH_QUICK", "1")], &[]);
    assert_eq!(e, q);
    // "0" means off.
    let (z, _) = run(&[("CG_BENCH_QUICK", "0")], &[]);
    assert!(!z.quick);
}

fn p3(n: u32) -> TwoGpuCase {
    TwoGpuCase {
        family: "poisson3d",
        n,
    }
}

fn the_two_gpu_part_defaults_to_128_256_and_2d_1024_and_quick_to_128() {
    let (c, _) = run(&[], &[]);
    let p2 = TwoGpuCase {
        family: "poisson2d",
        n: 1024,
    };
    assert_eq!(c.two_gpu, vec![p3(128), p3(256), p2]);
    let (q, _) = run(&[], &["--quick"]);
    assert_eq!(q.two_gpu, vec![p3(128)]);
    // The flag and the environment select cases; 'none' skips the part
    // (the single-GPU lists keep the run non-empty).
    let (f, _) = run(
        &[("CG_BENCH_2GPU", "64")],
        &["--two-gpu=3d:1_28,2d:512,256"],
    );
    assert_eq!(
        f.two_gpu,
        vec![
            p3(128),
            TwoGpuCase {
                family: "poisson2d",
                n: 512
            },
            p3(256)
        ]
    );
    let (e, _) = run(&[("CG_BENCH_2GPU", "64")], &[]);
    assert_eq!(e.two_gpu, vec![p3(64)]);
    let (n, _) = run(&[], &["--two-gpu=none"]);
    assert!(n.two_gpu.is_empty());
    // The two-GPU part alone is a valid selection.
    let (only, _) = run(&[], &["--3d=none", "--2d=none", "--two-gpu=256"]);
    assert!(only.sizes_3d.is_empty() && only.sizes_2d.is_empty());
    assert_eq!(only.two_gpu, vec![p3(256)]);
}

fn scaling_case(n: u32, one_gpu_ms: f64, two_gpu_ms: f64) -> ScalingCase {
    let mut c = ScalingCase::new(
        "h200",
        "poisson3d",
        n,
        ((n as u64).pow(3), 7 * (n as u64).pow(3)),
        50,
    );
    for (i, scale) in [1.0, 1.02, 0.99].into_iter().enumerate() {
        c.push("standard", 1, one_gpu_ms * 1e-3 * scale);
        c.push("standard", 2, two_gpu_ms * 1e-3 * scale);
        // Single reduction: a bit faster on both, shown but not judged.
        c.push(
            "single-reduction",
            1,
            0.9 * one_gpu_ms * 1e-3 + i as f64 * 1e-6,
        );
        c.push(
            "single-reduction",
            2,
            0.9 * two_gpu_ms * 1e-3 + i as f64 * 1e-6,
        );
    }
    c
}

fn the_two_gpu_target_is_a_speedup_above_one_at_256_on_standard_cg() {
    let fast = scaling_case(256, 10.0, 6.0);
    // 10 ms / 50 iterations = 200 µs per iteration on one GPU.
    assert!((fast.spread("standard", 1).unwrap().median - 200.0).abs() < 1e-9);
    let s = fast.speedup("standard").unwrap();
    assert!((s - 10.0 / 6.0).abs() < 1e-9, "{s}");
    assert_eq!(fast.verdict(), Some(true));
    // Slower on two GPUs, or equal, misses.
    assert_eq!(scaling_case(256, 6.0, 10.0).verdict(), Some(false));
    assert_eq!(scaling_case(256, 6.0, 6.0).verdict(), Some(false));
    // Only 256³ carries the target.
    assert_eq!(scaling_case(128, 10.0, 6.0).verdict(), None);
    // Without 2-GPU numbers there is no verdict.
    let mut half = ScalingCase::new("h200", "poisson3d", 256, (1, 1), 50);
    half.push("standard", 1, 1e-3);
    assert_eq!(half.speedup("standard"), None);
    assert_eq!(half.verdict(), None);
}

fn the_two_gpu_table_shows_both_variants_speedups_and_the_verdict() {
    let a = scaling_case(128, 4.0, 2.5);
    let b = scaling_case(256, 30.0, 40.0);
    let t = scaling::table(&[&a, &b]);
    assert!(t.contains("h200/cg-2gpu/poisson3d/128"), "{t}");
    assert!(t.contains("1.60×"), "128: 4 / 2.5: {t}");
    assert!(t.contains("0.75×"), "256: 30 / 40: {t}");
    assert!(t.contains("faster on 2 MISS"), "{t}");
    assert!(!t.contains("faster on 2 ok"), "{t}");
    let line = scaling::target_line(&[&a, &b]);
    assert!(line.contains("0.75×") && line.contains("MISSED"), "{line}");
    assert!(scaling::target_line(&[&a]).contains("not run"));
    let j = b.to_json();
    assert_eq!(j["meets_target"], serde_json::json!(false));
    assert_eq!(j["variants"].as_array().unwrap().len(), 4);
    assert!((j["speedup_2_over_1"]["standard"].as_f64().unwrap() - 0.75).abs() < 1e-9);
}

fn flags_override_the_environment_and_unknown_arguments_are_reported() {
    let (c, ignored) = run(
        &[("CG_BENCH_3D", "32"), ("CG_BENCH_REPS", "3")],
        &[
            "--3d=64,1_28",
            "--2d=none",
            "--reps=7",
            "--iters=250",
            "--no-baseline",
            "--frobnicate",
        ],
    );
    assert_eq!(c.sizes_3d, vec![64, 128]);
    assert!(c.sizes_2d.is_empty());
    assert_eq!(c.reps, 7);
    assert_eq!(c.iterations, Some(250));
    assert!(c.no_baseline);
    assert_eq!(ignored, vec!["--frobnicate".to_string()]);
    assert_eq!(parse(&[], &["-h"]).unwrap(), Parsed::Help);
}

fn bad_knobs_are_errors_that_name_the_knob() {
    for (args, word) in [
        (vec!["--3d=0"], "3D sizes"),
        (vec!["--3d=abc"], "3D sizes"),
        (vec!["--3d=100000"], "3D sizes"),
        (vec!["--2d=-4"], "2D sizes"),
        (vec!["--reps=0"], "reps"),
        (vec!["--reps=3,4"], "reps"),
        (vec!["--iters=0"], "iters"),
        (vec!["--3d=none", "--2d=none", "--two-gpu=none"], "no case"),
        (vec!["--two-gpu=0"], "two-GPU"),
        (vec!["--two-gpu=513"], "two-GPU"),
        (vec!["--two-gpu=2d:8193"], "two-GPU"),
        (vec!["--two-gpu=4d:16"], "two-GPU"),
        (vec!["--two-gpu=128;256"], "two-GPU"),
    ] {
        let e = parse(&[], &args).unwrap_err().to_string();
        assert!(e.contains(word), "{args:?}: {e}");
    }
}

fn iterations_give_runs_of_milliseconds_and_stay_below_the_underflow_zone() {
    let k = |n: u64, per_row: u64| config::default_iterations(n, n * per_row);
    // Small problems: capped (32³ single reduction breaks down near 1660).
    assert_eq!(k(32 * 32 * 32, 7), 500);
    // 256³: ~3 GB per iteration, ~1 ms: the floor of 50.
    assert_eq!(k(256 * 256 * 256, 7), 50);
    // 2D 1024²: ~0.15 GB per iteration.
    let k2 = k(1024 * 1024, 5);
    assert!((250..=350).contains(&k2), "{k2}");
    for n in [32u64, 64, 128, 256] {
        let it = k(n * n * n, 7);
        assert_eq!(it % 50, 0);
        assert!((50..=500).contains(&it));
    }
}

fn the_cap_keeps_32_cubed_finite_in_both_recurrences_on_the_cpu_reference() {
    // The reason for the cap, checked: 500 iterations of either recurrence
    // on Poisson 32³ run to the end without breakdown or a zero residual.
    let a = poisson3d(32).unwrap();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        let r = cg_reference(
            &a,
            &ones_rhs(&a),
            &zero_guess(&a),
            &CgOptions {
                tol: 0.0,
                max_iters: 500,
                variant,
            },
        )
        .unwrap_or_else(|e| panic!("{variant:?}: {e}"));
        assert_eq!(r.iterations, 500, "{variant:?}");
        assert!(
            r.rel_residual > 0.0 && r.rel_residual < 1e-30,
            "{variant:?}: {}",
            r.rel_residual
        );
        assert!(
            r.true_rel_residual < 1e-10,
            "{variant:?}: {}",
            r.true_rel_residual
        );
    }
}

fn reading(variant: &'static str, recursive: f64, true_residual: f64) -> Reading {
    Reading {
        variant,
        recursive,
        true_residual,
    }
}

fn recursive_residuals_must_agree_to_the_tolerance() {
    let a = reading(AUTARKY, 1.0e-2, 1.0e-2);
    let close = reading(HOST_SYNC, 1.0e-2 * (1.0 + 1e-9), 1.0e-2);
    let off = reading(DEV_PTR, 1.0e-2 * (1.0 + 1e-5), 1.0e-2);
    let worst = check::recursive_agree("c", &a, &[close]).unwrap();
    assert!(worst > 0.0 && worst < check::REL_TOL, "{worst}");
    let e = check::recursive_agree("c", &a, &[close, off]).unwrap_err();
    assert!(e.contains(DEV_PTR) && e.contains("refusing"), "{e}");
    // A NaN never agrees.
    assert!(check::recursive_agree("c", &a, &[reading(HOST_SYNC, f64::NAN, 0.0)]).is_err());
    assert_eq!(check::rel_diff(0.0, 0.0), 0.0);
    assert_eq!(check::rel_diff(1.0, f64::INFINITY), f64::INFINITY);
}

fn true_residuals_agree_at_rounding_level_but_not_for_a_wrong_solution() {
    // Converged: both at rounding level, different digits: fine.
    let a = reading(AUTARKY, 1e-54, 8.6e-14);
    let b = reading(AUTARKY_SR, 1e-52, 8.7e-14);
    check::true_agree("c", &a, &[b]).unwrap();
    // A baseline whose x is wrong has a large true residual.
    let wrong = reading(HOST_SYNC, 1e-54, 0.3);
    let e = check::true_agree("c", &a, &[b, wrong]).unwrap_err();
    assert!(e.contains(HOST_SYNC), "{e}");
    // Far from convergence, a 1e-4 relative difference is too much.
    let c = reading(AUTARKY, 0.5, 0.5);
    assert!(check::true_agree("c", &c, &[reading(DEV_PTR, 0.5, 0.50005)]).is_err());
    assert!(check::comparable(0.5) && !check::comparable(1e-12) && !check::comparable(f64::NAN));
}

fn the_true_residual_of_the_exact_solution_is_zero_and_of_zero_is_one() {
    let a = poisson3d(4).unwrap();
    assert!((check::true_rel_residual_ones(&a, &vec![0.0; a.n_rows()]) - 1.0).abs() < 1e-15);
    let r = cg_reference(
        &a,
        &ones_rhs(&a),
        &zero_guess(&a),
        &CgOptions {
            tol: 1e-14,
            max_iters: 1000,
            variant: CgVariant::Standard,
        },
    )
    .unwrap();
    let t = check::true_rel_residual_ones(&a, &r.x);
    assert!(
        (t - r.true_rel_residual).abs() < 1e-15,
        "{t} vs {}",
        r.true_rel_residual
    );
}

fn case(family: &'static str, n: u32, autarky_us: f64, host_us: f64, baseline: bool) -> Case {
    let k = 100;
    let mut variants = vec![(AUTARKY, Role::Autarky), (AUTARKY_SR, Role::Reference)];
    if baseline {
        variants.extend([(HOST_SYNC, Role::Baseline), (DEV_PTR, Role::Baseline)]);
    }
    let rows = (n as u64).pow(if family == "poisson3d" { 3 } else { 2 });
    let mut c = Case::new("h200", family, n, (rows, 7 * rows), k, &variants);
    for i in 0..3 {
        let jitter = 1.0 + 0.01 * (i as f64 - 1.0);
        c.push(AUTARKY, autarky_us * jitter * 1e-6 * k as f64);
        c.push(AUTARKY_SR, 0.9 * autarky_us * 1e-6 * k as f64);
        if baseline {
            c.push(HOST_SYNC, host_us * 1e-6 * k as f64);
            c.push(DEV_PTR, 0.5 * host_us * 1e-6 * k as f64);
        }
    }
    c
}

fn the_64_target_is_twice_as_fast_as_host_sync() {
    assert_eq!(
        case("poisson3d", 64, 10.0, 25.0, true).verdict(),
        Some(true)
    );
    assert_eq!(
        case("poisson3d", 64, 10.0, 19.0, true).verdict(),
        Some(false)
    );
    // Without a baseline the lead cannot be decided.
    assert_eq!(case("poisson3d", 64, 10.0, 25.0, false).verdict(), None);
    // No target at 32³.
    assert_eq!(case("poisson3d", 32, 10.0, 25.0, true).verdict(), None);
}

fn the_256_target_is_no_slower_and_the_2d_target_is_35_us() {
    assert_eq!(
        case("poisson3d", 256, 900.0, 900.0, true).verdict(),
        Some(true)
    );
    assert_eq!(
        case("poisson3d", 256, 910.0, 900.0, true).verdict(),
        Some(false)
    );
    assert_eq!(
        case("poisson2d", 1024, 34.0, 10.0, false).verdict(),
        Some(true)
    );
    assert_eq!(
        case("poisson2d", 1024, 36.0, 100.0, true).verdict(),
        Some(false)
    );
}

fn the_table_and_the_report_carry_every_variant_ratio_and_verdict() {
    let a = case("poisson3d", 64, 10.0, 25.0, true);
    let b = case("poisson2d", 1024, 36.0, 100.0, true);
    let c = case("poisson3d", 32, 5.0, 20.0, false);
    let t = cases::table(&[&a, &b, &c]);
    for want in [
        "h200/poisson3d/64",
        "262144",
        "1835008",
        HOST_SYNC,
        DEV_PTR,
        "2.50×",
        "1.25×",
        "≥ 2× host-sync ok",
        "≤ 35 µs MISS",
        "10.00 [9.900–10.10]",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    // The case without a baseline prints dashes, not numbers.
    let last = t.lines().last().unwrap();
    assert!(
        last.contains("h200/poisson3d/32") && last.contains('—'),
        "{last}"
    );

    let r = a.to_result().unwrap();
    assert_eq!(r.unit, "µs/iteration");
    assert_eq!(r.meets_target, Some(true));
    assert_eq!(r.baselines.len(), 2);
    assert_eq!(r.references.len(), 1);
    assert_eq!(r.params["iterations"], 100);
    assert_eq!(r.params["rows"], 262144);
    assert!((r.autarky.spread.median - 10.0).abs() < 1e-9);
    let host = r.baselines.iter().find(|s| s.variant == HOST_SYNC).unwrap();
    assert!((host.ratio_baseline_over_autarky.unwrap() - 2.5).abs() < 1e-9);

    let lines = cases::goal_lines(&[&a, &b]);
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0].contains("poisson3d 64") && lines[0].contains("met"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("poisson3d 256") && lines[1].contains("not run"),
        "{lines:?}"
    );
    assert!(lines[2].contains("36.00 µs/iteration: MISSED"), "{lines:?}");
}

fn the_library_search_prefers_the_most_specific_versioned_file() {
    let dir = std::env::temp_dir().join(format!("cg-bench-libs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        "libcublas.so",
        "libcublas.so.13",
        "libcublas.so.13.1.0.3",
        "libcublasLt.so.13",
        "libcublas.so.bak-old",
        "libcusparse_static.a",
    ] {
        std::fs::write(dir.join(f), b"").unwrap();
    }
    let got = libs::find_in(&dir, "libcublas.so").unwrap();
    assert_eq!(got.file_name().unwrap(), "libcublas.so.13.1.0.3");
    let lt = libs::find_in(&dir, "libcublasLt.so").unwrap();
    assert_eq!(lt.file_name().unwrap(), "libcublasLt.so.13");
    assert_eq!(libs::find_in(&dir, "libcusparse.so"), None);
    assert_eq!(libs::find_in(&dir.join("missing"), "libcublas.so"), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn the_library_search_lists_the_toolkit_and_leaves_out_stubs() {
    let dirs = libs::search_dirs(Some(std::path::Path::new("/opt/x/nvidia/cu13/lib")));
    let pos = |p: &str| dirs.iter().position(|d| d == std::path::Path::new(p));
    let extra = pos("/opt/x/nvidia/cu13/lib").expect("the extra dir");
    let toolkit = pos("/usr/local/cuda/lib64").expect("the toolkit dir");
    assert!(extra < toolkit, "{dirs:?}");
    assert!(dirs
        .iter()
        .all(|d| !d.components().any(|c| c.as_os_str() == "stubs")));
    // Each directory once.
    let mut uniq = dirs.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), dirs.len(), "{dirs:?}");
}

fn cusparse_preloaded_from_cg_bench_cuda_libs_is_what_cudarc_calls() {
    // Opt-in: needs a directory holding libcusparse (e.g. a pip wheel's
    // nvidia/cu13/lib) that is NOT on the linker path, to exercise the
    // preload. No GPU is needed: only a status string is asked for.
    let dir = std::env::var_os("CG_BENCH_CUDA_LIBS").expect("the trial runs only when it is set");
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&dir).collect();
    let from = libs::load(libs::Lib::Cusparse, &dirs).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        from.contains("libcusparse.so") || from == "on the linker path",
        "{from}"
    );
    // SAFETY: cusparseGetErrorString takes any status and returns a static
    // NUL-terminated string (or null); cudarc resolves it in the library
    // just loaded (it would panic if it found none).
    let s = unsafe {
        cudarc::cusparse::sys::cusparseGetErrorString(
            cudarc::cusparse::sys::cusparseStatus_t::CUSPARSE_STATUS_NOT_INITIALIZED,
        )
    };
    assert!(!s.is_null());
    // SAFETY: non-null results are static NUL-terminated strings.
    let text = unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy();
    assert!(text.to_lowercase().contains("init"), "{text}");
}
