//! The Jacobi-over-MPI bench's host side without a GPU or mpirun: its
//! knobs parse (and bad ones are refused), its grids split over two PEs
//! as the solver does, it skips outside a 2-rank job, and its table takes
//! the slower rank per rep and applies the 5 % (IPC) and 20 % (NVSHMEM)
//! targets, and says why an NVSHMEM side was not timed.

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

use cases::{Case, NvshmemSide};
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

fn nvshmem(peer: &str, rank0_ms: &[f64], rank1_ms: &[f64]) -> NvshmemSide {
    NvshmemSide::Timed {
        peer: peer.into(),
        ranks: vec![
            rank0_ms.iter().map(|m| m * 1e-3).collect(),
            rank1_ms.iter().map(|m| m * 1e-3).collect(),
        ],
    }
}

#[test]
fn a_rep_over_nvshmem_counts_the_slower_rank_and_only_timed_sides_have_times() {
    let mut c = case(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
    assert_eq!(
        c.nvshmem,
        NvshmemSide::NotBuilt,
        "a new case has no NVSHMEM side"
    );
    assert_eq!((c.nvshmem_spread(), c.nvshmem_verdict()), (None, None));
    c.nvshmem = nvshmem("nvshmem", &[1.5, 3.0, 1.02], &[2.0, 1.0, 1.01]);
    assert_eq!(c.nvshmem_seconds().unwrap(), vec![2.0e-3, 3.0e-3, 1.02e-3]);
    // Median of 2.0, 3.0, 1.02 ms over 100 iterations: 20 µs; one process: 10.
    assert!((c.nvshmem_spread().unwrap().median - 20.0).abs() < 1e-9);
    assert!((c.nvshmem_ratio().unwrap() - 2.0).abs() < 1e-9);
    assert_eq!(c.nvshmem_verdict(), Some(false));
    // Ranks with different numbers of reps have no per-rep maximum.
    c.nvshmem = nvshmem("nvshmem", &[1.0, 1.0], &[1.0]);
    assert_eq!((c.nvshmem_seconds(), c.nvshmem_verdict()), (None, None));
    for side in [
        NvshmemSide::Skipped("no NVSHMEM toolchain".into()),
        NvshmemSide::Failed("differs".into()),
    ] {
        c.nvshmem = side;
        assert_eq!((c.nvshmem_spread(), c.nvshmem_ratio()), (None, None));
    }
}

#[test]
fn nvshmem_within_twenty_percent_meets_its_target_while_ipc_keeps_five() {
    // IPC 1.04 (ok), NVSHMEM 1.18 (ok): both targets met.
    let mut ok = case(&[10.0, 10.0, 10.0], &[10.4; 3], &[10.3; 3]);
    ok.nvshmem = nvshmem("nvshmem-p2p", &[11.8; 3], &[11.5; 3]);
    assert_eq!(
        (ok.verdict(), ok.nvshmem_verdict()),
        (Some(true), Some(true))
    );
    // IPC 1.10 (miss) but NVSHMEM 1.10 meets its own, looser target.
    let mut mixed = case(&[10.0; 3], &[11.0; 3], &[10.0; 3]);
    mixed.nvshmem = nvshmem("nvshmem-p2p", &[11.0; 3], &[11.0; 3]);
    assert_eq!(
        (mixed.verdict(), mixed.nvshmem_verdict()),
        (Some(false), Some(true))
    );
    // NVSHMEM 1.21: missed.
    let mut miss = case(&[10.0; 3], &[10.0; 3], &[10.0; 3]);
    miss.nvshmem = nvshmem("nvshmem-p2p", &[12.1; 3], &[10.0; 3]);
    assert_eq!(miss.nvshmem_verdict(), Some(false));

    let t = cases::table(&[&ok, &mixed, &miss]);
    let header = t.lines().next().unwrap();
    for col in [
        "one process (2 GPUs)",
        "2 ranks IPC",
        "ipc/one",
        "target ≤ 1.05",
        "2 ranks NVSHMEM (nvshmem-p2p)",
        "nvshmem/one",
        "target ≤ 1.20",
    ] {
        assert!(header.contains(col), "header lacks {col:?}: {header}");
    }
    let row = |name: &str| t.lines().filter(|l| l.contains(name)).count();
    assert_eq!(row("h200/jacobi2d-mpi/strong/4096"), 3, "{t}");
    assert!(t.contains("1.180") && t.contains("1.210"), "{t}");
    // The mixed row: IPC MISS, then NVSHMEM ok.
    let mixed_row = t.lines().nth(3).unwrap();
    let (ipc_part, nv_part) = mixed_row.split_at(mixed_row.find("MISS").unwrap());
    assert!(ipc_part.contains("1.100"), "{mixed_row}");
    assert!(
        nv_part.contains("1.100") && nv_part.trim_end().ends_with("ok"),
        "{mixed_row}"
    );

    assert!(cases::target_line(&[&ok, &mixed, &miss]).contains("MISSED on 1 of 3"));
    let nv = cases::nvshmem_target_line(&[&ok, &mixed, &miss]);
    assert!(
        nv.contains("within 20 %") && nv.contains("MISSED on 1 of 3"),
        "{nv}"
    );
    let nv = cases::nvshmem_target_line(&[&ok, &mixed]);
    assert!(nv.contains("met on all 2 cases"), "{nv}");
    assert!(cases::nvshmem_notes(&[&ok, &mixed]).is_empty());

    let j = miss.to_json();
    assert_eq!(j["nvshmem_2_ranks"]["status"], serde_json::json!("timed"));
    assert_eq!(
        j["nvshmem_2_ranks"]["peer_transport"],
        serde_json::json!("nvshmem-p2p")
    );
    assert_eq!(j["meets_nvshmem_target"], serde_json::json!(false));
    assert!((j["ratio_nvshmem_over_one_process"].as_f64().unwrap() - 1.21).abs() < 1e-9);
    assert_eq!(
        j["nvshmem_2_ranks"]["seconds_per_run_per_rank"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        j["meets_target"],
        serde_json::json!(true),
        "IPC still judged"
    );
}

#[test]
fn an_nvshmem_side_not_timed_says_why_and_never_counts_as_met() {
    let ok_ipc = || case(&[10.0; 3], &[10.0; 3], &[10.0; 3]);
    // Not built: the column and the target line say so; the IPC target
    // is still judged.
    let a = ok_ipc();
    let t = cases::table(&[&a]);
    assert!(t.contains("not built"), "{t}");
    assert!(t.lines().next().unwrap().contains("2 ranks NVSHMEM"), "{t}");
    assert!(cases::target_line(&[&a]).contains("met on all 1"));
    let nv = cases::nvshmem_target_line(&[&a]);
    assert!(
        nv.contains("no measurement") && nv.contains("not built on 1 of 1"),
        "{nv}"
    );
    assert!(!nv.contains("met on"), "{nv}");
    let notes = cases::nvshmem_notes(&[&a]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("every case") && notes[0].contains("--features mpi,nvshmem"));

    // Skipped on every case for one reason: one note, naming it.
    let why =
        "NVSHMEM is not usable on rank 1: no NVSHMEM host library: libnvshmem_host.so.3 not found";
    let (mut b, mut c) = (ok_ipc(), ok_ipc());
    b.nvshmem = NvshmemSide::Skipped(why.into());
    c.nvshmem = NvshmemSide::Skipped(why.into());
    assert!(cases::table(&[&b, &c]).contains("skipped"));
    let notes = cases::nvshmem_notes(&[&b, &c]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("rank 1") && notes[0].contains("libnvshmem_host"),
        "{notes:?}"
    );
    assert!(cases::nvshmem_target_line(&[&b, &c]).contains("skipped on 2 of 2"));
    assert_eq!(
        b.to_json()["nvshmem_2_ranks"]["reason"],
        serde_json::json!(why)
    );

    // One case timed and met, one FAILED: not "met on all".
    let mut d = ok_ipc();
    d.nvshmem = nvshmem("nvshmem", &[10.0; 3], &[10.0; 3]);
    let mut e = ok_ipc();
    e.name = "h200/jacobi2d-mpi/strong/16384".into();
    e.nvshmem = NvshmemSide::Failed("the 2-rank NVSHMEM grid differs".into());
    let t = cases::table(&[&d, &e]);
    assert!(
        t.contains("FAILED") && t.contains("2 ranks NVSHMEM (nvshmem)"),
        "{t}"
    );
    let nv = cases::nvshmem_target_line(&[&d, &e]);
    assert!(nv.contains("FAILED on 1 of 2"), "{nv}");
    assert!(nv.contains("met on all 1 timed cases"), "{nv}");
    let notes = cases::nvshmem_notes(&[&d, &e]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("strong/16384") && notes[0].contains("differs"),
        "{notes:?}"
    );
    assert_eq!(
        e.to_json()["nvshmem_2_ranks"]["status"],
        serde_json::json!("FAILED")
    );
    assert_eq!(e.to_json()["meets_nvshmem_target"], serde_json::Value::Null);
}

#[test]
fn a_grid_that_differs_in_one_bit_or_in_length_is_refused() {
    let want = vec![1.0, 0.0, 2.5];
    assert!(cases::check_bitwise("c", "2-rank NVSHMEM", "2-rank IPC", &want, &want).is_ok());
    let neg_zero = vec![1.0, -0.0, 2.5];
    let e =
        cases::check_bitwise("c", "2-rank NVSHMEM", "2-rank IPC", &neg_zero, &want).unwrap_err();
    assert!(
        e.contains("1 of 3 cells") && e.contains("refusing to time"),
        "{e}"
    );
    assert!(e.contains("NVSHMEM") && e.contains("IPC"), "{e}");
    let short = vec![1.0, 0.0];
    let e = cases::check_bitwise("c", "2-rank NVSHMEM", "2-rank IPC", &short, &want).unwrap_err();
    assert!(
        e.contains("2 cells") && e.contains("refusing to time"),
        "{e}"
    );
}

#[test]
fn one_nvshmem_runtime_gets_the_sum_of_every_grids_heap() {
    let (c, _) = run(&[], &["--strong=1024,4096", "--weak=256"]);
    let runs: Vec<(Grid, u32)> = c.grids().into_iter().map(|g| (g, 500)).collect();
    let each: Vec<usize> = runs.iter().map(|(g, k)| g.heap_bytes(*k)).collect();
    assert_eq!(
        config::heap_bytes_for_all(&runs),
        each.iter().sum::<usize>()
    );
    // Every grid's heap holds both f32 buffers of its larger sub-grid.
    for (g, h) in runs.iter().map(|r| r.0).zip(&each) {
        assert!(*h as u64 >= 2 * 4 * g.padded_cells_per_pe(), "{g:?}: {h}");
    }
    // More iterations need more norm slots.
    assert!(runs[0].0.heap_bytes(1000) > runs[0].0.heap_bytes(10));
}
