//! `autarky cg` as a user sees it, on the emulator: a Matrix Market file
//! solved to the tolerance with JSON output, one-line usage errors (bad
//! arguments, a problem larger than memory, a non-symmetric matrix), and
//! status 4 for a run that stops at --max-iters.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use autarky::solvers::cg::{cg_reference, random_spd, write_matrix_market, CgOptions, CgVariant};

fn autarky(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autarky"))
        .args(args)
        .env_remove("RUST_LOG")
        // A 16 GiB host budget: the memory refusals below are then the
        // same on a machine of any size (a 560 GiB GPU host would run the
        // 800³ case instead of refusing it).
        .env("AUTARKY_HOST_MEMORY", (16u64 << 30).to_string())
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
    // The Standard recurrence with each form of the direction (auto fuses
    // on the emulator), and single reduction (no direction phase).
    for (variant, direction, ref_variant, form) in [
        ("standard", "auto", CgVariant::Standard, "fused"),
        ("standard", "separate", CgVariant::Standard, "separate"),
        ("standard", "fused", CgVariant::Standard, "fused"),
        ("single-reduction", "auto", CgVariant::SingleReduction, ""),
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
            "--direction",
            direction,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{variant}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
        assert_eq!(v["backend"], "emulator");
        // No L2 on the emulator to keep the vectors in.
        assert!(v["l2_persist_bytes"].is_null(), "{v}");
        // A random SPD matrix has a value per entry: too many to pack.
        assert_eq!(v["compact_matrix"], false, "{v}");
        if form.is_empty() {
            assert!(v["direction"].is_null(), "{v}");
        } else {
            assert_eq!(v["direction"], form, "{direction}: {v}");
        }
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

/// A Poisson matrix is given to the SpMV packed, its rows as patterns, by
/// default; packed with rows and offsets with `--no-row-patterns`; plain
/// with `--plain-matrix`. The JSON says which, and the runs are bitwise the
/// same (the printed residuals are equal).
#[test]
fn cg_packs_the_matrix_unless_told_not_to_and_the_runs_agree() {
    let run = |plain: bool, patterns: bool| {
        let mut args = vec![
            "--emulator=2",
            "--json",
            "cg",
            "--poisson3d",
            "12",
            "--pes",
            "2",
            "--tol",
            "0",
            "--max-iters",
            "25",
        ];
        if plain {
            args.push("--plain-matrix");
        }
        if !patterns {
            args.push("--no-row-patterns");
        }
        let o = autarky(&args);
        // Status 4: stopped at --max-iters (the tolerance is 0).
        assert_eq!(
            o.status.code(),
            Some(4),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
        assert_eq!(v["compact_matrix"], !plain, "{v}");
        assert_eq!(v["row_patterns"], !plain && patterns, "{v}");
        assert_eq!(v["iterations"], 25, "{v}");
        v
    };
    let (patterns, packed, plain) = (run(false, true), run(false, false), run(true, true));
    for key in ["rel_residual", "true_rel_residual"] {
        assert_eq!(packed[key], plain[key], "{key}");
        assert_eq!(patterns[key], plain[key], "{key}");
    }
}

/// `--comm-blocks` sets the comm blocks (threads, on the emulator) a PE
/// has; the JSON says what it got, the default (2) without the flag.
#[test]
fn cg_comm_blocks_are_set_by_the_flag_and_reported() {
    for (flag, want) in [(Some("3"), 3), (None, 2)] {
        let mut args = vec![
            "--emulator=2",
            "--json",
            "cg",
            "--poisson2d",
            "16",
            "--pes",
            "2",
        ];
        if let Some(n) = flag {
            args.extend(["--comm-blocks", n]);
        }
        let o = autarky(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
        assert_eq!(v["comm_blocks"], want, "{args:?}: {v}");
        assert_eq!(v["converged"], true, "{v}");
    }
    assert_usage(
        &["cg", "--poisson2d", "16", "--comm-blocks", "0"],
        &["--comm-blocks", "1..=64"],
    );
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
            vec!["cg", "--poisson2d", "4", "--tol", "-1.5e-6"],
            "the tolerance must be finite and ≥ 0, got -1.5e-6",
        ),
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

/// `--gpus G` needs G GPUs: a machine with fewer says so in one line,
/// status 2 (without a GPU it was the whole no-GPU report, which says the
/// run falls back to the emulator, status 1: the emulator has no --gpus).
/// That comes before --pes, which no value of would help; with the GPUs
/// there, --pes must be a multiple of G.
#[test]
fn cg_with_more_gpus_than_present_says_how_many_there_are() {
    let found = autarky::runtime::gpu_count().unwrap_or(0);
    let want = (found + 1).max(2).to_string();
    let o = autarky(&["cg", "--poisson2d", "4", "--gpus", &want]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: --gpus {want}: needs {want} GPUs, found {found}"
        )),
        "{err}"
    );
    if found == 0 {
        assert!(err.contains("the emulator has no --gpus"), "{err}");
    }
    if found >= 2 {
        assert_usage(
            &["cg", "--poisson2d", "4", "--pes", "3", "--gpus", "2"],
            &["--pes must be a multiple of it (got --pes 3)"],
        );
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
    assert_eq!(t["dropped"], 0, "the default ring holds this run: {t}");
    // --trace-records sizes the rings: 2 records a block drop most.
    let o = autarky(&[
        "--emulator=2",
        "--json",
        "cg",
        "--poisson2d",
        "24",
        "--trace",
        path.to_str().unwrap(),
        "--trace-records",
        "2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert!(
        v["trace"]["dropped"].as_u64().unwrap() > 0,
        "{}",
        v["trace"]
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_usage(
        &[
            "--emulator",
            "cg",
            "--poisson2d",
            "8",
            "--trace-records",
            "64",
        ],
        &["--trace"],
    );
}

/// Asserts a usage error: exit 2, nothing on stdout, one line on stderr
/// holding every needle.
fn assert_usage(args: &[&str], needles: &[&str]) {
    let o = autarky(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("autarky: no GPU"))
        .collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{args:?}: {err:?} lacks {needle:?}"
        );
    }
}

/// The largest documented sizes need hundreds of GiB: refused before the
/// matrix is generated (no allocator abort, no minutes of setup), saying
/// what to change — on the emulator, and on the default backend (the GPU,
/// or the emulator it falls back to).
#[test]
fn cg_refuses_a_matrix_larger_than_memory_at_once_with_status_2() {
    for size in [
        ["--poisson3d", "1290"],
        ["--poisson2d", "46340"],
        ["--poisson3d", "800"],
    ] {
        for emulator in [true, false] {
            let mut args = vec!["cg", size[0], size[1], "--max-iters", "1"];
            if emulator {
                args.insert(0, "--emulator=2");
            }
            let t = Instant::now();
            assert_usage(
                &args,
                &[&format!("{} {}", size[0], size[1]), "memory", "a smaller N"],
            );
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "{args:?}: {:?}",
                t.elapsed()
            );
        }
    }
    // On the emulator the heaps are host memory, and the message says so.
    assert_usage(
        &["--emulator=2", "cg", "--poisson3d", "1290", "--pes", "16"],
        &["host memory", "the PEs' heaps", "is available"],
    );
}

/// Not reaching --tol within --max-iters is status 4, with the result
/// still printed: the human lines, the JSON (`"converged": false`), and
/// nothing but the error line with --quiet.
#[test]
fn cg_that_stops_at_max_iters_prints_its_result_and_exits_4() {
    let base = [
        "--emulator=2",
        "cg",
        "--poisson2d",
        "16",
        "--max-iters",
        "5",
    ];
    let o = autarky(&base);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(4), "{out}{err}");
    assert!(out.contains("NOT converged after 5 iterations"), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not converged") && err.contains("--max-iters"),
        "{err}"
    );
    // The tolerance as it would be typed: the default 1e-8, and 0 (it
    // was `0e0`).
    assert!(err.contains("> --tol 1e-8 after 5 iterations"), "{err}");
    let o = autarky(&[&base[..], &["--tol", "0"][..]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("> --tol 0 after 5 iterations"), "{err}");

    let o = autarky(&[&["--json"][..], &base[..]].concat());
    assert_eq!(o.status.code(), Some(4));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["converged"], false, "{v}");
    assert_eq!(v["iterations"], 5, "{v}");
    assert!(v["rel_residual"].as_f64().unwrap() > 1e-8, "{v}");

    let o = autarky(&[&["--quiet"][..], &base[..]].concat());
    assert_eq!(o.status.code(), Some(4));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not converged"));

    // The same problem with room to converge: status 0.
    let o = autarky(&[
        "--emulator=2",
        "cg",
        "--poisson2d",
        "16",
        "--max-iters",
        "200",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// CG needs a symmetric matrix: a `general` file that is not symmetric is
/// refused naming the first pair (1-based, as in the file, with both
/// values); a `general` file that is symmetric runs.
#[test]
fn cg_refuses_a_non_symmetric_general_file_and_accepts_a_symmetric_one() {
    let dir = std::env::temp_dir().join(format!("autarky-cli-cg-sym-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let header = "%%MatrixMarket matrix coordinate real general\n3 3 7\n1 1 4\n2 2 4\n3 3 4\n1 2 -1\n2 1 -1\n";
    let bad = dir.join("nonsym.mtx");
    std::fs::write(&bad, format!("{header}2 3 -1\n3 2 -2.5\n")).unwrap();
    assert_usage(
        &["--emulator=2", "cg", "--matrix", bad.to_str().unwrap()],
        &[
            "nonsym.mtx",
            "not symmetric",
            "(2, 3) and (3, 2)",
            "-1",
            "-2.5",
        ],
    );
    let good = dir.join("sym.mtx");
    std::fs::write(&good, format!("{header}2 3 -1\n3 2 -1\n")).unwrap();
    let o = autarky(&[
        "--emulator=2",
        "--json",
        "cg",
        "--matrix",
        good.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["converged"], true, "{v}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A file of a 0 × 0 matrix is refused naming the file (it was "cannot
/// give each of 1 PEs a row", no file and a wrong plural).
#[test]
fn cg_refuses_a_matrix_without_rows_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("autarky-cli-cg-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.mtx");
    std::fs::write(
        &empty,
        "%%MatrixMarket matrix coordinate real general\n0 0 0\n",
    )
    .unwrap();
    let path = empty.to_str().unwrap();
    assert_usage(
        &["--emulator=2", "cg", "--matrix", path],
        &[&format!("{path}: the matrix has no rows")],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A --matrix that is not a file is one line in the user's words: it was
/// `/tmp:1: read failed: Is a directory (os error 21)` for a directory and
/// `I/O error on …: No such file or directory (os error 2)` for a missing
/// file.
#[test]
fn cg_says_in_words_why_a_matrix_path_cannot_be_read() {
    let dir = std::env::temp_dir().join(format!("autarky-cli-cg-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let missing = dir.join("no-such.mtx");
    let missing = missing.to_str().unwrap();
    for (path, want) in [
        (
            d,
            format!("error: {d}: is a directory, not a Matrix Market file\n"),
        ),
        (missing, format!("error: {missing}: no such file\n")),
    ] {
        let o = autarky(&["--emulator=2", "cg", "--matrix", path]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(o.stdout.is_empty(), "{path}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), want);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The header says an equal tile count once, as jacobi's `tiles:` line
/// does (it was `tiles per PE: 1+1+1+1`), and one row in the singular (it
/// was `1 rows, 1 nonzeros`).
#[test]
fn cg_header_says_equal_tile_counts_once_and_agrees_with_its_counts() {
    let header = |args: &[&str]| {
        let o = autarky(&[&["--emulator=2", "cg", "--max-iters", "1"][..], args].concat());
        // One iteration: converged (0) or not (4), the header the same.
        assert!(
            matches!(o.status.code(), Some(0 | 4)),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines().next().unwrap_or_default().to_string()
    };
    assert_eq!(
        header(&["--poisson2d", "1"]),
        "cg poisson2d 1: 1 row, 1 nonzero (row-pattern matrix), standard CG (direction fused), preconditioner none, 1 PE (tiles: 1 per PE), up to 1 iteration on the emulator backend"
    );
    let h = header(&["--poisson2d", "8", "--pes", "4"]);
    assert!(
        h.contains(": 64 rows, 288 nonzeros (row-pattern matrix),")
            && h.contains(", 4 PEs (tiles: 1 per PE),"),
        "{h}"
    );
}
