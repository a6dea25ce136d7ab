//! The `autarky` binary as a user sees it: exit codes, one-line errors,
//! JSON that parses, and `dag`'s check on the emulator.

use std::process::{Command, Output};

fn autarky(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autarky"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the autarky binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a usage error: exit 2, nothing on stdout, exactly one line on
/// stderr that contains `needle`.
fn assert_usage_error(args: &[&str], needle: &str) {
    let o = autarky(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(stdout(&o), "", "{args:?}");
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?} printed more than one line: {err}"
    );
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

#[test]
fn help_and_version_go_to_stdout_with_status_0() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["dag", "--help"],
        &["chain", "--help"],
        &["info", "--help"],
        &["bench", "--help"],
        &["help", "dag"],
    ] {
        let o = autarky(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(
            stdout(&o).contains("Usage: autarky"),
            "{args:?}: {}",
            stdout(&o)
        );
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    let o = autarky(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o).trim(),
        format!("autarky {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn dag_help_documents_the_positional_forms() {
    let o = autarky(&["dag", "--help"]);
    let s = stdout(&o);
    for want in [
        "[TASKS]",
        "[ITERATIONS]",
        "--trace <FILE>",
        "--no-check",
        "1..=2147483647",
        "--emulator",
    ] {
        assert!(s.contains(want), "dag --help lacks {want}");
    }
}

#[test]
fn iterations_beyond_u32_are_rejected_not_wrapped() {
    assert_usage_error(
        &["--emulator", "dag", "10", "4294967297"],
        "4294967297 is not in 1..=2147483647",
    );
    assert_usage_error(
        &["--emulator", "dag", "10", "2147483648"],
        "not in 1..=2147483647",
    );
    assert_usage_error(
        &["--emulator", "dag", "10", "0"],
        "0 is not in 1..=2147483647",
    );
    assert_usage_error(&["--emulator", "chain", "1", "-5"], "'-5'");
}

#[test]
fn bad_task_counts_and_values_are_one_line_errors() {
    assert_usage_error(&["--emulator", "dag", "0"], "0 is not in 1..=1048576");
    assert_usage_error(
        &["--emulator", "dag", "1048577"],
        "1048577 is not in 1..=1048576",
    );
    assert_usage_error(&["--emulator", "dag", "ten"], "invalid value 'ten'");
    assert_usage_error(
        &["--emulator", "chain", "1", "10", "0"],
        "0 is not in 1..=1000",
    );
    assert_usage_error(&["--emulator=0", "info"], "0 is not in 1..=1024");
    assert_usage_error(&["--emulator=x", "info"], "invalid value 'x'");
    // A bare count after the flag would be the command's argument: refused.
    assert_usage_error(
        &["dag", "--emulator", "4", "10"],
        "`--emulator 4` is ambiguous",
    );
    assert_usage_error(
        &["dag", "--seed", "0"],
        "0 is not in 1..=18446744073709551615 ",
    );
}

#[test]
fn extra_arguments_and_unknown_commands_are_rejected() {
    assert_usage_error(
        &["--emulator", "dag", "10", "5", "extra"],
        "unexpected argument 'extra'",
    );
    assert_usage_error(
        &["--emulator", "chain", "1", "2", "3", "4"],
        "unexpected argument '4'",
    );
    assert_usage_error(&["info", "now"], "unexpected argument 'now'");
    assert_usage_error(&["frobnicate"], "unrecognized subcommand 'frobnicate'");
    assert_usage_error(&["--bogus"], "unexpected argument '--bogus'");
    assert_usage_error(&[], "a subcommand is required");
}

#[test]
fn a_run_too_large_to_check_is_refused_before_it_starts() {
    assert_usage_error(
        &["--emulator", "dag", "1000", "2147483647"],
        "more than the check can log",
    );
}

#[test]
fn dag_on_the_emulator_checks_every_instance_and_says_ok() {
    let o = autarky(&["--emulator=2", "dag", "300", "20"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("on the emulator backend"), "{out}");
    assert!(
        out.contains("300 tasks × 20 iterations = 6000 instances, each ran exactly once, after all its predecessors' instances"),
        "{out}"
    );
    assert!(out.trim_end().ends_with(": OK"), "{out}");
    assert!(out.contains("loop-carried edge"), "{out}");
}

#[test]
fn dag_with_wide_joins_counted_or_not_checks_every_instance() {
    // Every 100th task waits for 200 more: joins above the block-wide and
    // counted thresholds; with --counted-fan-in 2 every join is counted.
    for extra in [&[][..], &["--counted-fan-in", "2"][..]] {
        let mut args = vec!["--emulator=2", "dag", "600", "15", "--wide-joins", "200"];
        args.extend_from_slice(extra);
        let o = autarky(&args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}{}", stderr(&o));
        assert!(out.trim_end().ends_with(": OK"), "{args:?}: {out}");
    }
    assert_usage_error(
        &["dag", "10", "2", "--counted-fan-in", "1"],
        "--counted-fan-in",
    );
    assert_usage_error(&["dag", "10", "2", "--wide-joins", "5000"], "--wide-joins");
}

#[test]
fn dag_with_one_task_speaks_in_the_singular_and_names_no_carried_edges() {
    let o = autarky(&["--emulator=2", "dag", "1", "1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("1 task, 0 edges, 1 iteration"), "{out}");
    assert!(!out.contains("loop-carried"), "{out}");
    assert!(
        out.contains("1 task × 1 iteration = 1 instance, it ran exactly once"),
        "{out}"
    );
    assert!(out.contains("completed 1 of 1 instance in"), "{out}");
    // And so does the trace line.
    let path = std::env::temp_dir().join(format!("autarky-cli-trace1-{}.json", std::process::id()));
    let o = autarky(&[
        "--emulator=2",
        "dag",
        "1",
        "1",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("wrote a trace of 1 task span "),
        "{}",
        stdout(&o)
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn dag_json_parses_and_reports_the_check() {
    let o = autarky(&["--json", "--emulator=2", "dag", "100", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON value");
    assert_eq!(v["command"], "dag");
    assert_eq!(v["backend"], "emulator");
    assert_eq!(v["instances_expected"], 1000);
    assert_eq!(v["instances_completed"], 1000);
    assert_eq!(v["checked"], true);
    assert_eq!(v["ok"], true);
    assert!(v["dependencies_checked"].as_u64().unwrap() >= 990);
    assert!(v["violation"].is_null());
}

/// The block shape a Jacobi run used is in its JSON: temporal blocking on
/// a small grid runs its default tiles at 256 threads a block, whatever
/// the runtime's; a given tile or S = 1 runs at the runtime's (128).
#[test]
fn jacobi_json_names_the_block_shape() {
    for (extra, want) in [
        (&["--steps-per-sync", "4"][..], 256),
        (&["--steps-per-sync", "4", "--tile", "8x96"], 128),
        (&[], 128),
    ] {
        let mut args = vec![
            "--json",
            "--emulator=2",
            "jacobi2d",
            "--size",
            "64",
            "--iters",
            "8",
        ];
        args.extend_from_slice(extra);
        let o = autarky(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["threads_per_block"], want, "{args:?}");
    }
}

/// The tile shape a Jacobi run used is said: a --tile longer than the grid
/// along an axis takes the whole axis, and the output says it was clamped.
#[test]
fn jacobi_says_the_tile_shape_it_ran_and_when_it_clamped_one() {
    let args = [
        "--emulator=2",
        "jacobi3d",
        "--size",
        "16",
        "--iters",
        "2",
        "--tile",
        "4x40x8",
    ];
    let o = autarky(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("tiles: 4×16×8 cells (--tile 4×40×8 clamped to the PE's extent), 8 per PE"),
        "{out}"
    );
    let mut json = vec!["--json"];
    json.extend_from_slice(&args);
    let o = autarky(&json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tile_shapes"], serde_json::json!([[4, 16, 8]]));
    assert_eq!(v["tiles_per_pe"], serde_json::json!([8]));
}

/// Every PE's tile count once when they agree (not "1 / 1 / … per PE"),
/// and a --tile written with `×`, as the `tiles:` line prints it.
#[test]
fn jacobi_says_an_equal_tile_count_once_and_takes_the_tile_it_printed() {
    let o = autarky(&[
        "--emulator=2",
        "jacobi3d",
        "--size",
        "8",
        "--iters",
        "2",
        "--pes",
        "8",
        "--tile",
        "2×4×4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("tiles: 2×4×4 cells (--tile), 2 per PE\n"),
        "{out}"
    );
}

/// The user's flags, not the library's builder, in what too many tiles
/// gets: refused at once (a graph of 17.6 M tiles took seconds and
/// gigabytes to build, then failed naming Builder::max_tasks, status 1).
/// And a PE count that does not fit the grid says the grid in cells.
#[test]
fn jacobi_refuses_more_tiles_than_tasks_as_a_usage_error() {
    assert_usage_error(
        &[
            "--emulator=2",
            "jacobi2d",
            "--size",
            "4200",
            "--iters",
            "1",
            "--tile",
            "1x1",
        ],
        "17640000 tiles of 1 × 1 cells (y × x) are more tasks than the ready queue holds (16777216): use larger tiles",
    );
    assert_usage_error(
        &["--emulator=2", "jacobi3d", "--size", "2", "--pes", "16"],
        "16 PEs cannot be arranged on a grid of 2 × 2 × 2 cells (z × y × x) with",
    );
    assert_usage_error(
        &[
            "--emulator=2",
            "jacobi2d",
            "--size",
            "8",
            "--pes",
            "2",
            "--gpus",
            "2",
        ],
        "--gpus 2: needs the GPU backend; the emulator runs several PEs with --pes alone",
    );
}

/// `--gpus G` on a machine with fewer GPUs: one line saying how many were
/// found, status 2, whatever --pes is (it was the whole no-GPU report,
/// status 1, saying the run falls back to the emulator, which has no
/// --gpus).
#[test]
fn jacobi_with_more_gpus_than_present_says_how_many_there_are() {
    let found = autarky::runtime::gpu_count().unwrap_or(0);
    let want = (found + 1).max(2).to_string();
    for pes in ["1", &want] {
        assert_usage_error(
            &["jacobi2d", "--size", "8", "--pes", pes, "--gpus", &want],
            &format!("error: --gpus {want}: needs {want} GPUs, found {found}"),
        );
    }
    if found == 0 {
        assert_usage_error(
            &["jacobi3d", "--size", "8", "--gpus", "2"],
            "; the emulator has no --gpus: leave it out (--pes P runs P PEs on the emulator)",
        );
    }
}

/// A reader that goes away (`autarky … | head -1`) ends the process
/// quietly with status 1, not with a panic about a broken pipe: more
/// output than a pipe buffers, so the write fails whenever the reader
/// closes.
#[test]
fn a_reader_that_goes_away_ends_the_run_without_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_autarky"))
        .args([
            "--emulator=2",
            "jacobi2d",
            "--size",
            "8",
            "--iters",
            "3000",
            "--check-every",
            "1",
        ])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--pe-grid` chooses the decomposition (the JSON says it) and must
/// multiply to --pes.
#[test]
fn jacobi_pe_grid_is_taken_and_checked() {
    for (cmd, size, grid, want) in [
        ("jacobi2d", "64", "4x1", serde_json::json!([1, 4, 1])),
        ("jacobi3d", "16", "1x1x4", serde_json::json!([1, 1, 4])),
    ] {
        let o = autarky(&[
            "--emulator=2",
            "--json",
            cmd,
            "--size",
            size,
            "--pes",
            "4",
            "--pe-grid",
            grid,
            "--iters",
            "4",
        ]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["pe_grid"], want, "{cmd}: {v}");
    }
    assert_usage_error(
        &[
            "--emulator",
            "jacobi2d",
            "--size",
            "64",
            "--pes",
            "4",
            "--pe-grid",
            "2x1",
        ],
        "--pe-grid 2x1: 2 PEs, but --pes is 4",
    );
    assert_usage_error(
        &["--emulator", "jacobi2d", "--size", "64", "--pe-grid", "4"],
        "the PE grid must be PYxPX",
    );
}

/// `info` on the emulator says whether a GPU is there at all.
#[test]
fn info_on_the_emulator_says_what_became_of_the_gpu() {
    let o = autarky(&["--emulator", "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("backend: emulator"), "{out}");
    assert!(out.contains("device: none"), "{out}");
}

#[test]
fn info_chain_and_bench_json_parse() {
    for args in [
        &["--json", "--emulator", "info"][..],
        &["--json", "--emulator=2", "chain", "3", "50", "2"],
        &["--json", "bench"],
    ] {
        let o = autarky(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)));
        assert!(v.is_object(), "{args:?}");
    }
    let o = autarky(&["--json", "--emulator=2", "chain", "3", "50", "2"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["runs"].as_array().unwrap().len(),
        3,
        "one warm-up and two runs"
    );
    let o = autarky(&["--json", "bench"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ran"], false, "bench must not claim to have run");
    // info names the cubin cache and its size (the GPU fields are null on
    // the emulator).
    let dir = std::env::temp_dir().join(format!("autarky-info-cache-{}", std::process::id()));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_autarky"))
        .args(["--json", "--emulator", "info"])
        .env("AUTARKY_CACHE_DIR", &dir)
        .env_remove("AUTARKY_CACHE")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cubin_cache"]["dir"], dir.to_str().unwrap());
    assert_eq!(v["cubin_cache"]["cubins"], 0);
    assert!(v["megakernel"].is_null() && v["topology"].is_null(), "{v}");
}

#[test]
fn quiet_prints_nothing_on_stdout() {
    let o = autarky(&["--quiet", "--emulator=2", "dag", "50", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "");
}

#[test]
fn trace_on_the_emulator_writes_a_chrome_trace_with_every_instance() {
    let path = std::env::temp_dir().join(format!("autarky-cli-trace-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let o = autarky(&["--emulator=2", "dag", "40", "5", "--trace", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The line counts what the file holds: a span per instance (of the 400
    // events recorded, a start and an end each) and the emulated blocks'
    // waits; nothing dropped.
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("wrote a trace of "))
        .unwrap_or_else(|| panic!("no trace line: {}", stdout(&o)))
        .to_string();
    let count = |what: &str| -> u64 {
        let before = line
            .split_once(what)
            .unwrap_or_else(|| panic!("{line:?} lacks {what:?}"))
            .0;
        let n = before.rsplit([' ', '(']).next().unwrap();
        n.parse()
            .unwrap_or_else(|_| panic!("{line:?}: {n:?} before {what:?}"))
    };
    assert_eq!(count(" task spans"), 200, "{line}");
    assert!(count(" events recorded") >= 400, "{line}");
    assert!(line.contains(", 0 dropped"), "{line}");
    assert!(stdout(&o).contains("critical path"), "{}", stdout(&o));
    // Dynamic tasks: the emulated compute blocks wait for queue items.
    assert!(
        stdout(&o).contains("compute blocks waiting, share of their time: queue item"),
        "{}",
        stdout(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let tasks: Vec<_> = evs
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "task")
        .collect();
    assert_eq!(tasks.len(), 200, "one slice per instance");
    let waits = evs
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "wait")
        .count() as u64;
    assert_eq!(count(" waits"), waits, "{line}");
    assert!(
        evs.iter()
            .any(|e| e["ph"] == "X" && e["cat"] == "wait" && e["name"] == "wait comm idle 0"),
        "the comm worker's idle time is traced"
    );
    for e in evs {
        for f in ["name", "ph", "ts", "pid", "tid"] {
            assert!(e.get(f).is_some(), "{e} lacks {f}");
        }
    }
    assert!(evs.iter().any(|e| e["name"] == "thread_name"));
    std::fs::remove_file(&path).unwrap();
}

/// A --trace path that cannot be written is a usage error (status 2)
/// before anything runs — not an I/O error (status 1) after the whole run:
/// nothing is printed on stdout, where a run reports.
#[test]
fn a_trace_path_that_cannot_be_written_is_refused_before_the_run() {
    let dir = std::env::temp_dir();
    let not_a_dir = dir.join(format!("autarky-cli-notadir-{}", std::process::id()));
    std::fs::write(&not_a_dir, b"a file").unwrap();
    let under_a_file = not_a_dir.join("t.json");
    let file_as_dir = format!("{} is not a directory", not_a_dir.display());
    for (path, why) in [
        (
            "/nonexistent-dir/t.json",
            "the directory /nonexistent-dir does not exist",
        ),
        (dir.to_str().unwrap(), "is a directory"),
        (under_a_file.to_str().unwrap(), &file_as_dir),
    ] {
        let run = ["--emulator=2", "dag", "5", "2", "--trace", path];
        assert_usage_error(&run, &format!("--trace {path}: {why}"));
        let jacobi = ["--emulator=2", "jacobi2d", "--size", "8", "--trace", path];
        assert_usage_error(&jacobi, &format!("--trace {path}: {why}"));
    }
    std::fs::remove_file(&not_a_dir).unwrap();
}

#[test]
fn jacobi_help_documents_every_option_and_its_range() {
    for (cmd, stencil, tile) in [
        ("jacobi2d", "--stencil <5|9>", "--tile <TYxTX>"),
        ("jacobi3d", "--stencil <7|27>", "--tile <TZxTYxTX>"),
    ] {
        let o = autarky(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}");
        let s = stdout(&o);
        for want in [
            "Usage: autarky",
            "--size <N>",
            "--iters <ITERS>",
            "1..=2147483647",
            "--check-every <C>",
            "--tol <T>",
            "--pes <P>",
            "1..=16",
            "--gpus <G>",
            "--precision <PRECISION>",
            "f64",
            "--periodic",
            "--json",
            "--comm-blocks <N>",
            "--pulse-chunk <CELLS>",
            "--steps-per-sync <S>",
            "--trace <FILE>",
            "--trace-records <N>",
            "(N ≥ 1)",
            stencil,
            tile,
        ] {
            assert!(s.contains(want), "{cmd} --help lacks {want:?}");
        }
    }
}

#[test]
fn jacobi_bad_values_are_one_line_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["jacobi2d"], "--size <N>"),
        (&["jacobi2d", "--size", "0"], "at least 1 cell"),
        (&["jacobi3d", "--size", "-3"], "'-3'"),
        (
            &["jacobi2d", "--size", "8", "--iters", "0"],
            "0 is not in 1..=2147483647",
        ),
        (
            &["jacobi2d", "--size", "8", "--iters", "2147483648"],
            "not in 1..=2147483647",
        ),
        (
            &["jacobi2d", "--size", "8", "--pes", "0"],
            "0 is not in 1..=16",
        ),
        (
            &["jacobi2d", "--size", "8", "--comm-blocks", "0"],
            "0 is not in 1..=64",
        ),
        (
            &["jacobi2d", "--size", "8", "--pulse-chunk", "0"],
            "0 is not in 1..=18446744073709551615 ",
        ),
        (
            &["jacobi2d", "--size", "8", "--steps-per-sync", "5"],
            "5 is not in 1..=4",
        ),
        (
            &["jacobi2d", "--size", "8", "--steps-per-sync", "3"],
            "--steps-per-sync 3: --iters 1000 and --check-every 100 must be multiples of 3 (a graph iteration is 3 sweeps; --iters 999 --check-every 99 would do)",
        ),
        (
            &[
                "jacobi2d",
                "--size",
                "8",
                "--steps-per-sync",
                "4",
                "--check-every",
                "10",
            ],
            "--steps-per-sync 4: --check-every 10 must be a multiple of 4 (a graph iteration is 4 sweeps; --check-every 8 would do)",
        ),
        (
            &["jacobi3d", "--size", "8", "--steps-per-sync", "4"],
            "--steps-per-sync 4: jacobi3d's 7-point stencil runs 2 sweeps a synchronisation (--steps-per-sync 2), not 4",
        ),
        (
            &[
                "jacobi3d",
                "--size",
                "8",
                "--stencil",
                "27",
                "--steps-per-sync",
                "2",
            ],
            "7-point one only, not jacobi3d --stencil 27",
        ),
        (
            &["jacobi3d", "--size", "3", "--pes", "2", "--steps-per-sync", "2"],
            "--pes 2 with --size 3: 2 PEs along z leave 1 cell to a PE there, fewer than the 2 ghost layers of 2 sweeps a sync; use fewer PEs, a larger grid or fewer sweeps a sync",
        ),
        (
            &["jacobi3d", "--size", "1", "--steps-per-sync", "2"],
            "--steps-per-sync 2: needs --size 2 or more",
        ),
        (
            &["jacobi2d", "--size", "1", "--steps-per-sync", "2"],
            "--steps-per-sync 2: needs --size 2 or more",
        ),
        (
            &["jacobi2d", "--size", "2", "--pes", "16"],
            "--pes 16 with --size 2: 16 PEs cannot be arranged",
        ),
        (
            &[
                "jacobi2d",
                "--size",
                "8",
                "--stencil",
                "9",
                "--steps-per-sync",
                "2",
            ],
            "7-point one only, not --stencil 9",
        ),
        (
            &["jacobi3d", "--size", "8", "--pes", "17"],
            "17 is not in 1..=16",
        ),
        (
            &["jacobi2d", "--size", "8", "--tol", "-1"],
            "finite and ≥ 0",
        ),
        (
            // A negative exponent too: the value, not a flag `-1`.
            &["jacobi2d", "--size", "8", "--tol", "-1.5e-6"],
            "the tolerance must be finite and ≥ 0, got -1.5e-6",
        ),
        (
            &["jacobi2d", "--size", "8", "--tol", "inf"],
            "finite and ≥ 0",
        ),
        (
            &["jacobi2d", "--size", "8", "--tol", "NaN"],
            "finite and ≥ 0",
        ),
        (
            &[
                "jacobi2d",
                "--size",
                "8",
                "--check-every",
                "0",
                "--tol",
                "1e-3",
            ],
            "needs --check-every > 0",
        ),
        (
            &["jacobi2d", "--size", "8", "--stencil", "7"],
            "2D stencils are 5 and 9",
        ),
        (
            &["jacobi3d", "--size", "8", "--stencil", "9"],
            "3D stencils are 7 and 27",
        ),
        (&["jacobi2d", "--size", "8", "--precision", "f16"], "'f16'"),
        (
            &["jacobi2d", "--size", "8", "--tile", "8"],
            "TYxTX (2 sizes)",
        ),
        (
            &["jacobi3d", "--size", "8", "--tile", "8x8"],
            "TZxTYxTX (3 sizes)",
        ),
        (
            &["jacobi2d", "--size", "8", "--tile", "0x8"],
            "in 1..=1048576",
        ),
        (
            &["jacobi2d", "--size", "8", "--gpus", "2"],
            "--gpus 2: needs the GPU backend; the emulator runs several PEs",
        ),
        (
            &["jacobi2d", "--size", "8", "--gpus", "0"],
            "0 is not in 1..",
        ),
        (
            &["jacobi3d", "--size", "18446744073709551615"],
            "more than can be addressed",
        ),
        // 10⁵ cubed is 10¹⁵ cells: no machine has that memory.
        (&["jacobi3d", "--size", "100000"], "of host memory"),
    ];
    for (args, needle) in cases {
        let mut with_emulator = vec!["--emulator"];
        with_emulator.extend_from_slice(args);
        assert_usage_error(&with_emulator, needle);
    }
}

/// The smallest size the help allows, one cell, runs in 2D and 3D, and
/// right: the cell starts at 0 between boundary values of 1, so the first
/// update is 1 and the next 0 (it once ran with the thin axes' ghosts left
/// out: norms 0, 0, and 3D was refused).
#[test]
fn jacobi_runs_at_the_smallest_sizes_its_help_allows() {
    for cmd in ["jacobi2d", "jacobi3d"] {
        let args = [
            "--json",
            "--emulator=2",
            cmd,
            "--size",
            "1",
            "--iters",
            "3",
            "--check-every",
            "1",
            "--precision",
            "f64",
        ];
        let o = autarky(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["iterations"], 3, "{args:?}");
        let norms: Vec<f64> = v["norms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["norm"].as_f64().unwrap())
            .collect();
        assert_eq!(norms, [1.0, 0.0, 0.0], "{args:?}");
    }
}

/// A small solve on the emulator: it either runs (and reports consistent
/// JSON) or, while the emulator cannot run pinned tiles and comm tasks,
/// fails with that one clear line — never a panic or a wrong result.
#[test]
fn jacobi_on_the_emulator_runs_or_says_clearly_why_not() {
    for args in [
        &[
            "--json",
            "--emulator=2",
            "jacobi2d",
            "--size",
            "32",
            "--iters",
            "20",
            "--check-every",
            "5",
        ][..],
        &[
            "--json",
            "--emulator=2",
            "jacobi3d",
            "--size",
            "8",
            "--iters",
            "20",
            "--check-every",
            "5",
        ],
    ] {
        let o = autarky(args);
        let err = stderr(&o);
        match o.status.code() {
            Some(0) => {
                let v: serde_json::Value = serde_json::from_slice(&o.stdout)
                    .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)));
                assert_eq!(v["backend"], "emulator", "{args:?}");
                assert_eq!(v["iterations"], 20, "{args:?}");
                let norms = v["norms"].as_array().unwrap();
                assert_eq!(norms.len(), 4, "checks at 4, 9, 14, 19: {args:?}");
                let first = norms[0]["norm"].as_f64().unwrap();
                let last = norms[3]["norm"].as_f64().unwrap();
                assert!(first > 0.0 && last < first, "{args:?}: {first} → {last}");
            }
            other => panic!("{args:?}: exit {other:?}: {err}"),
        }
    }
}

/// The norms a `--json` Jacobi run prints, as text (bitwise comparable);
/// the run must succeed.
fn json_norms(args: &[&str]) -> Vec<String> {
    let o = autarky(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["norms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["norm"].to_string())
        .collect()
}

/// Pulses split over 3 comm blocks (chunks of at least 16 cells) give
/// bitwise the norms of whole pulses on the default one comm block, and so
/// does temporal blocking with the same tiles (its default tiles differ on
/// small grids: the norms, summed tile by tile, then agree to rounding).
#[test]
fn jacobi_split_pulses_give_the_same_norms() {
    let run = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--json",
            "--emulator=3",
            "jacobi2d",
            "--size",
            "64",
            "--pes",
            "2",
            "--iters",
            "20",
            "--check-every",
            "4",
            "--tile",
            "16x24",
        ];
        args.extend_from_slice(extra);
        json_norms(&args)
    };
    let whole = run(&[]);
    assert_eq!(whole.len(), 5);
    assert_eq!(run(&["--comm-blocks", "3", "--pulse-chunk", "16"]), whole);
    // Temporal blocking: 4 sweeps a synchronisation, the same norms.
    assert_eq!(run(&["--steps-per-sync", "4"]), whole);
}

/// jacobi3d with 2 sweeps a synchronisation (3D temporal blocking) prints
/// the norms of one sweep a synchronisation, on 1 and 8 PEs.
#[test]
fn jacobi3d_temporal_blocking_gives_the_same_norms() {
    let run = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--json",
            "--emulator=3",
            "jacobi3d",
            "--size",
            "8",
            "--iters",
            "8",
            "--check-every",
            "4",
        ];
        args.extend_from_slice(extra);
        json_norms(&args)
    };
    // 6³ periodic on 4 PEs: the cheapest PE grid (4 × 1 × 1) has blocks
    // 1 cell thick, thinner than 2 sweeps' ghosts; one whose blocks are
    // thick enough (2 × 2 × 1) is chosen instead.
    let o = autarky(&[
        "--json",
        "--emulator=2",
        "jacobi3d",
        "--size",
        "6",
        "--pes",
        "4",
        "--periodic",
        "--iters",
        "4",
        "--check-every",
        "2",
        "--steps-per-sync",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pe_grid"], serde_json::json!([2, 2, 1]));
    assert_eq!(v["steps_per_sync"], 2);
    // The same tiles (a tile's partial sum is in its own cell order).
    for pes in ["1", "8"] {
        let one = run(&["--pes", pes, "--tile", "2x4x4"]);
        assert_eq!(one.len(), 2);
        let two = run(&["--pes", pes, "--tile", "2x4x4", "--steps-per-sync", "2"]);
        assert_eq!(two, one, "{pes} PEs");
    }
}

/// jacobi2d's trace rings are sized by --trace-records as dag's are: a
/// ring of 4 records a block keeps the newest and counts the rest as
/// dropped (the default keeps them all here); the flag needs --trace and a
/// power of two.
#[test]
fn jacobi_trace_records_size_the_rings() {
    let dir = std::env::temp_dir().join(format!("autarky-cli-jtr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let dropped = |records: Option<&str>| -> u64 {
        let mut args = vec![
            "--json",
            "--emulator=2",
            "jacobi2d",
            "--size",
            "16",
            "--iters",
            "40",
            "--check-every",
            "4",
            "--trace",
            path.to_str().unwrap(),
        ];
        if let Some(r) = records {
            args.extend_from_slice(&["--trace-records", r]);
        }
        let o = autarky(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["trace"]["dropped"]
            .as_u64()
            .expect("the trace summary counts dropped records")
    };
    assert_eq!(dropped(None), 0, "the default ring holds this run");
    assert!(dropped(Some("4")) > 0, "a ring of 4 records drops");
    std::fs::remove_dir_all(&dir).ok();
    assert_usage_error(
        &[
            "--emulator",
            "jacobi2d",
            "--size",
            "8",
            "--trace-records",
            "1024",
        ],
        "--trace",
    );
    assert_usage_error(
        &[
            "--emulator",
            "jacobi2d",
            "--size",
            "8",
            "--trace",
            "t.json",
            "--trace-records",
            "1000",
        ],
        "1000 is not a power of two",
    );
}

#[test]
fn trace_ring_sizes_are_checked_before_anything_runs() {
    assert_usage_error(
        &[
            "--emulator",
            "dag",
            "5",
            "2",
            "--trace",
            "t.json",
            "--trace-records",
            "1000",
        ],
        "1000 is not a power of two",
    );
    assert_usage_error(
        &["--emulator", "dag", "5", "2", "--trace-records", "1024"],
        "--trace",
    );
}

#[test]
fn jacobi_trace_on_the_emulator_reports_how_long_tiles_waited_for_their_neighbours() {
    // Four PEs: pinned tiles wait for their neighbours' and the halo
    // pulses' instances; the summary says which share of the compute
    // blocks' time that was (issue 13's halo-wait fraction).
    let path = std::env::temp_dir().join(format!("autarky-cli-jtrace-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let o = autarky(&[
        "--json",
        "--emulator=2",
        "jacobi2d",
        "--size",
        "64",
        "--pes",
        "4",
        "--iters",
        "20",
        "--trace",
        p,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["trace"];
    let block_ns = t["compute_block_ns"].as_u64().unwrap();
    let pred_ns = t["compute_waits_ns"]["predecessors of"]
        .as_u64()
        .unwrap_or(0);
    assert!(block_ns > 0, "{t}");
    assert!(pred_ns > 0 && pred_ns <= block_ns, "{t}");
    let _ = std::fs::remove_file(&path);
}

/// More emulator threads than the OS will start (here under a 400 MB
/// address-space limit): the run ends with an error naming the knobs, not
/// a panic ("spawning an emulator worker thread: Os { code: 11 … }").
/// The run must outlast the spawning: with 2 iterations (as this test had)
/// the first workers could finish and free their stacks while the rest
/// were started, and then all 1001 started (3 runs in 20 here exited 0
/// with nothing on stderr, and CI failed once on it); with many iterations
/// the limit is met every time (20 of 20 at 20 000), and a machine that
/// starts them all still ends in about a second.
#[test]
fn emulator_threads_the_os_refuses_end_in_an_error_not_a_panic() {
    let o = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_autarky"))
        .args(["--emulator=1000", "dag", "5", "100000"])
        .env_remove("RUST_LOG")
        .output()
        .expect("bash runs");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("could not start emulator thread"), "{err}");
    assert_ne!(o.status.code(), Some(0), "{err}");
}

/// A --tol that is reached exits 0; one that is not prints the result and
/// exits 4, as cg does.
#[test]
fn jacobi_with_an_unreached_tolerance_prints_its_result_and_exits_4() {
    let run = |tol: &str| {
        autarky(&[
            "--json",
            "--emulator=2",
            "jacobi2d",
            "--size",
            "16",
            "--iters",
            "20",
            "--check-every",
            "5",
            "--tol",
            tol,
        ])
    };
    let reached = run("1e9");
    assert_eq!(reached.status.code(), Some(0), "{}", stderr(&reached));
    let missed = run("1e-300");
    assert_eq!(missed.status.code(), Some(4), "{}", stderr(&missed));
    let v: serde_json::Value = serde_json::from_slice(&missed.stdout).unwrap();
    assert_eq!(v["iterations"], 20);
    assert!(v["converged_at"].is_null());
    assert!(stderr(&missed).contains("--tol"), "{}", stderr(&missed));
}

/// Tolerances are written as a user would type them: `--tol 0` was
/// `0e0` in both the result line and the error, and `--tol 1e-8` was
/// `0.00000001` where --check-every 0 refused it.
#[test]
fn jacobi_writes_tolerances_as_they_were_typed() {
    let o = autarky(&[
        "--emulator=2",
        "jacobi2d",
        "--size",
        "8",
        "--iters",
        "10",
        "--check-every",
        "5",
        "--tol",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        out.contains("not converged to 0 within 10 iterations\n"),
        "{out}"
    );
    assert!(err.contains("reached --tol 0 within"), "{err}");
    assert!(!out.contains("0e0") && !err.contains("0e0"), "{out}{err}");
    assert_usage_error(
        &[
            "--emulator",
            "jacobi2d",
            "--size",
            "8",
            "--check-every",
            "0",
            "--tol",
            "1e-8",
        ],
        "--tol 1e-8 needs --check-every > 0",
    );
    assert_usage_error(
        &["--emulator", "jacobi2d", "--size", "8", "--tol=-1.5e-6"],
        "finite and ≥ 0, got -1.5e-6",
    );
}

/// A transport this build lacks is a usage error in the flag's words.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_transport_this_build_lacks_is_refused_in_the_flags_words() {
    let o = autarky(&["jacobi3d", "--size", "8", "--transport", "ipc"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--transport ipc: this autarky was built without it; rebuild with `cargo build --release --features mpi`"),
        "{e}"
    );
    assert!(!e.contains("Transport::"), "{e}");
}
