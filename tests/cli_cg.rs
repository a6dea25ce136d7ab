//! `autarky cg` as a user sees it, on the emulator: a Matrix Market file
//! solved to the tolerance with JSON output, and one-line usage errors.

use std::process::{Command, Output};

use autarky::solvers::cg::{cg_reference, random_spd, write_matrix_market, CgOptions, CgVariant};

fn autarky(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autarky"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the autarky binary runs")
}

#[test]
fn cg_solves_a_matrix_market_file_on_the_emulator_and_prints_json() {
    let a = random_spd(400, 7, 13).unwrap();
    let dir = std::env::temp_dir().join(format!("autarky-cli-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.mtx");
    write_matrix_market(&a, &path).unwrap();
    let n = a.n_rows();
    for (variant, ref_variant) in [
        ("standard", CgVariant::Standard),
        ("single-reduction", CgVariant::SingleReduction),
    ] {
        let o = autarky(&[
            "--emulator=2",
            "--json",
            "cg",
            "--matrix",
            path.to_str().unwrap(),
            "--pes",
            "2",
            "--tol",
            "1e-9",
            "--variant",
            variant,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{variant}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
        assert_eq!(v["backend"], "emulator");
        assert_eq!(v["rows"], n);
        assert_eq!(v["converged"], true, "{v}");
        assert!(v["true_rel_residual"].as_f64().unwrap() <= 1e-8, "{v}");
        assert!(v["rel_residual"].as_f64().unwrap() <= 1e-9, "{v}");
        let want = cg_reference(
            &a,
            &vec![1.0; n],
            &vec![0.0; n],
            &CgOptions {
                tol: 1e-9,
                max_iters: 10_000,
                variant: ref_variant,
            },
        )
        .unwrap()
        .iterations as u64;
        let got = v["iterations"].as_u64().unwrap();
        assert!(got.abs_diff(want) <= (want / 50).max(2), "{got} vs {want}");
        assert!(v["us_per_iteration"].as_f64().unwrap() > 0.0);
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn cg_rejects_bad_arguments_with_one_line_and_status_2() {
    for (args, needle) in [
        (vec!["cg"], "missing required"),
        (
            vec!["cg", "--poisson2d", "4", "--poisson3d", "4"],
            "cannot be used with",
        ),
        (vec!["cg", "--poisson2d", "0"], "--poisson2d"),
        (vec!["cg", "--poisson3d", "2000"], "--poisson3d"),
        (vec!["cg", "--poisson2d", "4", "--tol", "-1"], "tolerance"),
        (
            vec!["cg", "--poisson2d", "4", "--max-iters", "0"],
            "--max-iters",
        ),
        (vec!["cg", "--poisson2d", "4", "--pes", "17"], "--pes"),
        (
            vec!["cg", "--poisson2d", "4", "--variant", "fast"],
            "--variant",
        ),
        (
            vec!["--emulator=2", "cg", "--poisson2d", "2", "--pes", "8"],
            "8 PEs",
        ),
        (
            vec!["--emulator=2", "cg", "--matrix", "/nonexistent/a.mtx"],
            "/nonexistent/a.mtx",
        ),
        (vec!["cg", "--poisson2d", "4", "--gpus", "0"], "--gpus"),
        (
            vec!["cg", "--poisson2d", "4", "--pes", "3", "--gpus", "2"],
            "--pes a multiple",
        ),
        (
            vec![
                "--emulator=2",
                "cg",
                "--poisson2d",
                "4",
                "--pes",
                "2",
                "--gpus",
                "2",
            ],
            "needs the GPU backend",
        ),
    ] {
        let o = autarky(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
}

/// `--trace` on the emulator: the file is written and the JSON carries the
/// trace facts (the compute blocks' time and what they waited for), the
/// numbers the two-GPU runs use to see where a CG iteration goes.
#[test]
fn cg_trace_on_the_emulator_writes_the_file_and_reports_the_waits() {
    let dir = std::env::temp_dir().join(format!("autarky-cli-cg-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let o = autarky(&[
        "--emulator=2",
        "--json",
        "cg",
        "--poisson2d",
        "24",
        "--pes",
        "2",
        "--trace",
        path.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["gpus"], 1);
    let t = &v["trace"];
    assert!(t["compute_block_ns"].as_u64().unwrap() > 0, "{t}");
    assert!(t["compute_waits_ns"].is_object(), "{t}");
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(
        file.contains("spmv tile 0 of PE 1"),
        "the trace names the SpMV tiles"
    );
    std::fs::remove_dir_all(&dir).ok();
}
