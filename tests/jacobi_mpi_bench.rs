//! The Jacobi-over-MPI bench's host side without a GPU or mpirun: its
//! knobs parse (and bad ones are refused), its grids split over two PEs
//! as the solver does, it skips outside a 2-rank job, and its table takes
//! the slower rank per rep and applies the 5 % target.

#[path = "../benches/jacobi_mpi/cases.rs"]
mod cases;
#[path = "../benches/jacobi_mpi/config.rs"]
#[allow(dead_code)]
mod config;
#[path = "../benches/common/knobs.rs"]
mod knobs;
#[path = "../benches/common/report.rs"]
mod report;

pub type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

use cases::Case;
use config::{mpi_skip, Config, Grid, Parsed};

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

#[test]
fn defaults_are_the_issue_sizes_and_quick_drops_16384() {
    let (c, ignored) = run(&[], &["--bench"]);
    assert!(ignored.is_empty(), "--bench is cargo's, not unknown");
    assert_eq!(c.strong, vec![1024, 4096, 16384]);
    assert_eq!(c.weak, vec![256]);
    assert_eq!((c.reps, c.warmup, c.iterations), (11, 2, None));
    let (q, _) = run(&[], &["--quick"]);
    assert_eq!(q.strong, vec![1024, 4096]);
    assert_eq!(q.weak, vec![256]);
    assert!(q.reps < c.reps);
    let (e, _) = run(&[("JACOBI_MPI_QUICK", "1")], &[]);
    assert_eq!(e, q);
}

#[test]
fn flags_override_the_environment_and_unknown_arguments_are_reported() {
    let (c, ignored) = run(
        &[("JACOBI_MPI_STRONG", "64"), ("JACOBI_MPI_REPS", "3")],
        &[
            "--strong=2_048,512",
            "--weak=none",
            "--reps=4",
            "--iters=300",
            "--frob",
        ],
    );
    assert_eq!(c.strong, vec![2048, 512]);
    assert!(c.weak.is_empty());
    assert_eq!((c.reps, c.iterations), (4, Some(300)));
    assert_eq!(ignored, vec!["--frob".to_string()]);
    assert_eq!(parse(&[], &["-h"]).unwrap(), Parsed::Help);
    for knob in [
        "--quick",
        "--strong=",
        "--weak=",
        "--reps=",
        "--iters=",
        "mpirun -n 2",
    ] {
        assert!(config::HELP.contains(knob), "--help lacks {knob}");
    }
}

#[test]
fn bad_knobs_are_errors_that_name_the_knob() {
    for (args, word) in [
        (vec!["--strong=1"], "strong sizes"),
        (vec!["--strong=40000"], "strong sizes"),
        (vec!["--strong=1k"], "strong sizes"),
        (vec!["--weak=-3"], "weak sizes"),
        (vec!["--reps=0"], "reps"),
        (vec!["--reps=2,3"], "reps"),
        (vec!["--iters=0"], "iters"),
        (vec!["--strong=none", "--weak=none"], "no case"),
    ] {
        let e = parse(&[], &args).unwrap_err().to_string();
        assert!(e.contains(word), "{args:?}: {e}");
    }
}

#[test]
fn strong_grids_are_n_squared_and_weak_grids_stack_two_per_gpu_squares() {
    let (c, _) = run(&[], &["--strong=1024", "--weak=256"]);
    let g = c.grids();
    assert_eq!(g.len(), 2);
    assert_eq!((g[0].family, g[0].ny, g[0].nx), ("strong", 1024, 1024));
    assert_eq!((g[1].family, g[1].ny, g[1].nx), ("weak", 512, 256));
    assert_eq!(g[1].cells(), 2 * 256 * 256);
    // Split along y: half the rows (rounded up) and both ghost layers.
    assert_eq!(g[0].padded_cells_per_pe(), 514 * 1026);
    let odd = Grid {
        family: "strong",
        n: 5,
        ny: 5,
        nx: 5,
    };
    assert_eq!(odd.padded_cells_per_pe(), 5 * 7);
}

#[test]
fn only_a_job_of_two_ranks_runs() {
    assert!(mpi_skip(None).unwrap().contains("mpirun"));
    assert!(mpi_skip(Some(1)).unwrap().contains("has 1"));
    assert!(mpi_skip(Some(4)).unwrap().contains("has 4"));
    assert_eq!(mpi_skip(Some(2)), None);
}

fn case(one_ms: &[f64], rank0_ms: &[f64], rank1_ms: &[f64]) -> Case {
    let g = Grid {
        family: "strong",
        n: 4096,
        ny: 4096,
        nx: 4096,
    };
    let mut c = Case::new("h200", g, 100);
    c.one_process = one_ms.iter().map(|m| m * 1e-3).collect();
    c.ranks = vec![
        rank0_ms.iter().map(|m| m * 1e-3).collect(),
        rank1_ms.iter().map(|m| m * 1e-3).collect(),
    ];
    c
}

#[test]
fn a_rep_over_ipc_counts_the_slower_rank() {
    let c = case(&[1.0, 1.0, 1.0], &[1.0, 3.0, 1.02], &[2.0, 1.0, 1.01]);
    let ipc: Vec<f64> = c.ipc_seconds().unwrap();
    assert_eq!(ipc, vec![2.0e-3, 3.0e-3, 1.02e-3]);
    // Median of 2.0, 3.0, 1.02 ms over 100 iterations: 20 µs.
    assert!((c.ipc_spread().unwrap().median - 20.0).abs() < 1e-9);
    // Ranks with different numbers of reps have no per-rep maximum.
    let bad = case(&[1.0], &[1.0, 1.0], &[1.0]);
    assert_eq!(bad.ipc_seconds(), None);
    assert_eq!(bad.verdict(), None);
}

#[test]
fn ipc_within_five_percent_meets_the_target_and_beyond_misses() {
    let ok = case(
        &[10.0, 10.1, 9.9],
        &[10.4, 10.4, 10.4],
        &[10.3, 10.2, 10.45],
    );
    assert!((ok.ratio().unwrap() - 1.04).abs() < 1e-9);
    assert_eq!(ok.verdict(), Some(true));
    let miss = case(
        &[10.0, 10.0, 10.0],
        &[10.6, 10.6, 10.6],
        &[10.0, 10.0, 10.0],
    );
    assert_eq!(miss.verdict(), Some(false));
    // Faster over IPC is fine too.
    let faster = case(&[10.0], &[9.0], &[9.5]);
    assert_eq!(faster.verdict(), Some(true));

    let t = cases::table(&[&ok, &miss]);
    assert!(t.contains("h200/jacobi2d-mpi/strong/4096"), "{t}");
    assert!(t.contains("4096×4096"), "{t}");
    assert!(t.contains("1.040") && t.contains("1.060"), "{t}");
    assert!(t.contains(" ok") && t.contains("MISS"), "{t}");
    assert!(cases::target_line(&[&ok, &miss]).contains("MISSED on 1 of 2"));
    assert!(cases::target_line(&[&ok, &faster]).contains("met on all 2"));
    let j = miss.to_json();
    assert_eq!(j["meets_target"], serde_json::json!(false));
    assert_eq!(
        j["ipc_2_ranks"]["seconds_per_run_per_rank"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
