//! Jacobi on the CPU emulator (CI): the same task graph as on the GPU —
//! pinned tiles, halo pulses on comm workers, the in-kernel check — against
//! the f64 reference, bitwise identical over PE counts and decompositions.

use std::time::Duration;

use autarky::solvers::jacobi::{JacobiConfig, JacobiRun, JacobiSolver, Precision, STOP_SLACK};
use autarky::solvers::jacobi_ref::{reference, Boundary, JacobiProblem, Stencil};
use autarky::{Error, Runtime};

fn rt(pes: u32) -> Runtime {
    Runtime::builder()
        .emulator(2)
        .pes(pes)
        .comm_blocks(2)
        .symmetric_heap_bytes(8 << 20)
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn problem(dims: [usize; 3], stencil: Stencil, boundary: [Boundary; 3]) -> JacobiProblem {
    JacobiProblem::new(dims, stencil)
        .with_boundary(boundary)
        .with_init(|z, y, x| ((x * 7 + y * 13 + z * 5) % 17) as f64 / 17.0)
        .with_dirichlet(|z, y, x| 1.0 + 0.01 * x as f64 - 0.02 * y as f64 + 0.005 * z as f64)
}

/// Cells whose bits differ between two runs' grids.
fn cells_differing(a: &JacobiRun, b: &JacobiRun) -> usize {
    a.field
        .iter()
        .zip(&b.field)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
}

/// A run's norms with their iterations, as bits.
fn norm_bits(r: &JacobiRun) -> Vec<(u32, u64)> {
    r.norms.iter().map(|&(n, v)| (n, v.to_bits())).collect()
}

const D: Boundary = Boundary::Dirichlet;
const P: Boundary = Boundary::Periodic;

fn max_abs(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn emulated_jacobi_matches_the_reference_for_every_stencil() {
    let cases = [
        ([1, 19, 23], Stencil::FivePoint, [D, D, D]),
        ([1, 16, 14], Stencil::NinePoint, [P, D, P]),
        ([6, 7, 9], Stencil::SevenPoint, [D, P, D]),
        ([6, 6, 5], Stencil::TwentySevenPoint, [P, P, P]),
    ];
    for pes in [1, 4] {
        let rt = rt(pes);
        for (dims, stencil, bc) in cases {
            let prob = problem(dims, stencil, bc);
            let want = reference(&prob, 12).unwrap().field;
            for (precision, tol) in [(Precision::F32, 1e-5), (Precision::F64, 1e-13)] {
                let mut cfg = JacobiConfig::new(prob.clone(), 12);
                cfg.precision = precision;
                cfg.tile = Some([2, 3, 5]);
                let run = JacobiSolver::new(&rt, cfg).unwrap().run().unwrap();
                let err = max_abs(&run.field, &want);
                assert!(
                    err <= tol,
                    "{stencil:?} {precision:?} on {pes} PEs: max error {err:e}"
                );
            }
        }
    }
}

#[test]
fn emulated_jacobi_is_bitwise_identical_over_pe_counts_and_decompositions() {
    let cases = [
        ([1, 18, 20], Stencil::NinePoint, [D, P, D]),
        ([6, 8, 6], Stencil::TwentySevenPoint, [P, D, P]),
    ];
    for (dims, stencil, bc) in cases {
        let mut fields = Vec::new();
        for (pes, grid) in [
            (1, [1, 1, 1]),
            (2, [1, 2, 1]),
            (2, [1, 1, 2]),
            (4, [1, 2, 2]),
        ]
        .into_iter()
        .chain(if stencil.is_2d() {
            None
        } else {
            Some((4, [2, 2, 1]))
        }) {
            let mut cfg = JacobiConfig::new(problem(dims, stencil, bc), 9);
            cfg.pe_grid = Some(grid);
            cfg.tile = Some([2, 4, 4]);
            fields.push(
                JacobiSolver::new(&rt(pes), cfg)
                    .unwrap()
                    .run()
                    .unwrap()
                    .field,
            );
        }
        for (k, f) in fields.iter().enumerate().skip(1) {
            let diff = f
                .iter()
                .zip(&fields[0])
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            assert_eq!(
                diff, 0,
                "{stencil:?}: decomposition #{k} differs in {diff} cells"
            );
        }
    }
}

#[test]
fn emulated_convergence_stops_every_pe_at_the_same_iteration() {
    let prob = problem([1, 12, 12], Stencil::FivePoint, [D, D, D]);
    let mut stops = Vec::new();
    for pes in [1, 2, 4] {
        let mut cfg = JacobiConfig::new(prob.clone(), 10_000);
        cfg.precision = Precision::F64;
        cfg.check_every = 5;
        cfg.tol = Some(1e-3);
        let run = JacobiSolver::new(&rt(pes), cfg).unwrap().run().unwrap();
        let c = run.converged_at.expect("converges");
        assert_eq!(run.iterations, c + STOP_SLACK);
        let want = reference(&prob, run.iterations as usize).unwrap().field;
        assert!(max_abs(&run.field, &want) < 1e-12);
        stops.push(run.iterations);
    }
    assert!(stops.windows(2).all(|w| w[0] == w[1]), "{stops:?}");
}

#[test]
fn emulated_nan_fails_the_run_at_the_first_check() {
    let prob = JacobiProblem::new([1, 10, 10], Stencil::FivePoint).with_init(|_, y, x| {
        if (y, x) == (7, 2) {
            f64::NAN
        } else {
            0.0
        }
    });
    // With 3 sweeps a sync as well: the error names the sweep the check
    // was of, not the graph iteration.
    for steps in [1, 3] {
        let mut cfg = JacobiConfig::new(prob.clone(), 30);
        cfg.check_every = 3;
        cfg.steps_per_sync = steps;
        // Error::NonFinite, as on the GPU (the emulator's check fails with
        // NON_FINITE_CODE, which the solver turns into it).
        match JacobiSolver::new(&rt(2), cfg).unwrap().run() {
            Err(Error::NonFinite {
                iteration,
                task,
                index,
                ..
            }) => {
                assert_eq!(iteration, 2, "{steps}");
                // The graph iteration of the check, as the device records.
                assert_eq!(index as u32, 3 / steps - 1, "{steps}");
                assert!(task.contains("check (global norm)"), "{task}");
            }
            other => panic!("expected NonFinite, got {other:?}"),
        }
    }
}

/// A xorshift64 generator: `next(n)` draws from 0..n (fixed seeds keep
/// the random tests reproducible).
fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

/// Races in the halo protocol (a pulse overwriting ghosts its receiver
/// still reads, a tile overwriting cells a pulse still packs) would show as
/// run-to-run differences: random decompositions, tile shapes and
/// stencils, each run twice on the emulator's free-running threads and
/// compared bitwise with the one-PE result.
#[test]
fn random_decompositions_and_tiles_never_change_a_single_cell() {
    let mut next = xorshift(0x9e3779b97f4a7c15u64);
    let mut temporal_runs = 0;
    for case in 0..16 {
        let three_d = case % 2 == 1;
        let stencil = match (three_d, next(2)) {
            (false, 0) => Stencil::FivePoint,
            (false, _) => Stencil::NinePoint,
            (true, 0) => Stencil::SevenPoint,
            (true, _) => Stencil::TwentySevenPoint,
        };
        let dims = if three_d {
            [
                4 + next(4) as usize,
                4 + next(5) as usize,
                4 + next(5) as usize,
            ]
        } else {
            [1, 6 + next(10) as usize, 6 + next(10) as usize]
        };
        let bc = [0, 1, 2].map(|_| if next(2) == 0 { D } else { P });
        let prob = problem(dims, stencil, bc);
        // 2D 5-point: temporal blocking too, S sweeps a sync (iterations a
        // multiple of S; a PE block thinner than S is refused, then S = 1).
        let steps = if stencil == Stencil::FivePoint {
            1 + next(4) as u32
        } else {
            1
        };
        let iters = steps * (2 + next(4) as u32);
        let one = {
            let cfg = JacobiConfig::new(prob.clone(), iters);
            JacobiSolver::new(&rt(1), cfg).unwrap().run().unwrap().field
        };
        let pes = [2u32, 3, 4][next(3) as usize];
        let tile = [
            1 + next(3) as usize,
            1 + next(4) as usize,
            2 + next(5) as usize,
        ];
        // Pulses split into chunks of at least this many cells, over the
        // runtime's 2 comm blocks (9: most boxes here stay whole).
        let chunk = 1 + next(9) as usize;
        // A check every graph iteration or every other one: tiles then
        // run a check apart, and each norm must still be its own.
        let every = steps * (1 + next(2) as u32);
        let want_norms = reference(&prob, iters as usize).unwrap().update_norms;
        for _ in 0..2 {
            let mut cfg = JacobiConfig::new(prob.clone(), iters);
            cfg.tile = Some(tile);
            cfg.pulse_chunk_cells = chunk;
            cfg.steps_per_sync = steps;
            cfg.check_every = every;
            let rt = rt(pes);
            let solver = match JacobiSolver::new(&rt, cfg.clone()) {
                Err(Error::InvalidConfig(m)) if steps > 1 && m.contains("ghost layers") => {
                    cfg.steps_per_sync = 1;
                    cfg.check_every = every / steps;
                    JacobiSolver::new(&rt, cfg).unwrap()
                }
                other => {
                    if steps > 1 {
                        temporal_runs += 1;
                    }
                    other.unwrap()
                }
            };
            let run = solver.run().unwrap();
            let what = format!(
                "case {case}: {stencil:?} {dims:?} {bc:?}, {pes} PEs, tiles {tile:?}, pulse chunks ≥ {chunk} cells, {steps} sweeps a sync"
            );
            let diff = run
                .field
                .iter()
                .zip(&one)
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            assert_eq!(diff, 0, "{what}: {diff} cells differ from 1 PE");
            // f32 against the f64 reference: 1e-3 relative (one tile's
            // partial missing or stale moves a norm by far more).
            assert!(!run.norms.is_empty(), "{what}: no norms");
            for &(n, v) in &run.norms {
                let w = want_norms[n as usize];
                assert!(
                    (v - w).abs() <= 1e-3 * w.max(1e-6),
                    "{what}, check every {every}: norm of iteration {n} is {v}, the reference's {w}"
                );
            }
        }
    }
    assert!(
        temporal_runs >= 2,
        "only {temporal_runs} runs used temporal blocking"
    );
}

/// The pulse from PE 1 to PE 0 withheld (the GPU twin runs across two
/// GPUs in gpu_multigpu): PE 0's tiles wait for its signal, and the run
/// ends in a timeout whose report names the awaited pulse.
#[cfg(feature = "fault-injection")]
#[test]
fn a_withheld_pulse_ends_in_a_timeout_naming_it() {
    let rt = Runtime::builder()
        .emulator(2)
        .pes(2)
        .comm_blocks(2)
        .symmetric_heap_bytes(8 << 20)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let mut cfg = JacobiConfig::new(JacobiProblem::new([1, 64, 48], Stencil::FivePoint), 30);
    cfg.pe_grid = Some([1, 2, 1]);
    let solver = JacobiSolver::new(&rt, cfg).unwrap();
    let g = solver.graph();
    let pulse = (0..g.num_tasks())
        .map(autarky::TaskId::from_index)
        .find(|&t| g.pe_of(t) == 1 && g.name(t).is_some_and(|n| n.contains("PE 1 → PE 0")))
        .expect("a pulse from PE 1 to PE 0");
    let name = g.name(pulse).unwrap().to_string();
    let mut opts = autarky::RunOptions::iterations(30);
    opts.hold_task = Some(pulse);
    let t0 = std::time::Instant::now();
    match solver.run_with(opts) {
        Err(e @ Error::DeviceTimeout { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&name), "the report must name {name}: {msg}");
        }
        other => panic!("expected DeviceTimeout, got {other:?}"),
    }
    // No hang: alone this takes ~0.3 s; on a 2-core machine busy with two
    // other builds it took 12.9 s, so the bound is generous.
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
}

/// The default tiles depend on the grid and the PE count, not on the
/// backend's block count: runtimes with 2 and 5 compute workers give the
/// same tiles, hence bitwise the same norms (summed tile by tile) as well
/// as the same grid. (2 GPUs and 2 virtual PEs of one GPU differ the same
/// way in their block counts: ~1054 against ~527 per PE.)
#[test]
fn the_default_tiling_and_norms_do_not_depend_on_the_block_count() {
    let prob = problem([1, 128, 128], Stencil::FivePoint, [D, D, D]);
    let mut runs = Vec::new();
    for workers in [2, 5] {
        let rt = Runtime::builder()
            .emulator(workers)
            .pes(2)
            .comm_blocks(2)
            .symmetric_heap_bytes(8 << 20)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        let mut cfg = JacobiConfig::new(prob.clone(), 40);
        cfg.check_every = 4;
        let s = JacobiSolver::new(&rt, cfg).unwrap();
        // 128 × 64 cells a PE: 4 tiles of 16 × 128 (2048 cells, the
        // smallest default), more than the 2 workers, fewer than 5.
        assert_eq!(s.tiles_per_pe(), &[4, 4], "{workers} workers");
        runs.push(s.run().unwrap());
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(runs[0].norms.len(), 10);
    assert_eq!(
        norm_bits(&runs[0]),
        norm_bits(&runs[1]),
        "norms differ between 2 and 5 workers"
    );
    assert_eq!(bits(&runs[0].field), bits(&runs[1].field));
}

/// Temporal blocking: 2, 3 and 4 sweeps per graph iteration give bitwise
/// the grid and the norms of one sweep per iteration, on 1, 2 and 4 PEs
/// (the [1, 2, 2] grid needs the corner ghosts), Dirichlet and periodic
/// sides, f32 and f64, with tiles smaller than the ghost depth allows
/// (neighbouring tiles then feed each other's grown regions).
#[test]
fn temporal_blocking_gives_bitwise_the_grid_and_norms_of_one_sweep_per_sync() {
    let cases = [
        ([1, 20, 26], [D, D, D], 1u32, None),
        ([1, 18, 24], [P, P, D], 2, Some([1, 2, 1])),
        ([1, 22, 20], [D, D, P], 4, Some([1, 2, 2])),
        ([1, 24, 24], [P, P, P], 4, Some([1, 2, 2])),
    ];
    for (dims, bc, pes, grid) in cases {
        let prob = problem(dims, Stencil::FivePoint, bc);
        for precision in [Precision::F32, Precision::F64] {
            let run = |steps: u32| {
                let mut cfg = JacobiConfig::new(prob.clone(), 24);
                cfg.precision = precision;
                cfg.check_every = 12;
                cfg.pe_grid = grid;
                cfg.tile = Some([1, 3, 5]);
                cfg.steps_per_sync = steps;
                JacobiSolver::new(&rt(pes), cfg).unwrap().run().unwrap()
            };
            let one = run(1);
            assert_eq!(one.norms.len(), 2);
            for steps in [2, 3, 4] {
                let got = run(steps);
                let what =
                    format!("{dims:?} {bc:?} {pes} PEs {precision:?}, {steps} sweeps a sync");
                assert_eq!(got.iterations, 24, "{what}");
                let diff = cells_differing(&got, &one);
                assert_eq!(diff, 0, "{what}: {diff} cells differ");
                assert_eq!(norm_bits(&got), norm_bits(&one), "{what}: norms");
            }
        }
    }
}

/// Temporal blocking in 3D (7-point, 2 sweeps a sync): bitwise the grid
/// and (with the same tiles) the norms of one sweep per iteration on 1, 2,
/// 4 and 8 PEs (the [2, 2, 2] grid needs edge and corner ghosts 2 deep),
/// Dirichlet and periodic sides, f32 and f64, default tiles and tiles
/// thinner than the ghost depth on every axis.
#[test]
fn temporal_blocking_in_3d_gives_bitwise_the_grid_and_norms_of_one_sweep_per_sync() {
    let cases = [
        ([9, 10, 13], [D, D, D], 1u32, None, None),
        ([8, 12, 10], [P, D, P], 2, Some([2, 1, 1]), Some([1, 3, 5])),
        ([10, 8, 12], [D, P, D], 4, Some([1, 2, 2]), Some([3, 1, 4])),
        ([8, 8, 10], [P, P, P], 8, Some([2, 2, 2]), Some([2, 3, 1])),
        ([8, 10, 8], [D, D, P], 2, Some([1, 1, 2]), None),
    ];
    for (dims, bc, pes, grid, tile) in cases {
        let prob = problem(dims, Stencil::SevenPoint, bc);
        // (Eight emulated PEs are slow on a small machine: one precision.)
        let precisions: &[Precision] = if pes < 8 {
            &[Precision::F32, Precision::F64]
        } else {
            &[Precision::F32]
        };
        for &precision in precisions {
            let run = |steps: u32| {
                let mut cfg = JacobiConfig::new(prob.clone(), 12);
                cfg.precision = precision;
                cfg.check_every = 6;
                cfg.pe_grid = grid;
                cfg.tile = tile;
                cfg.steps_per_sync = steps;
                JacobiSolver::new(&rt(pes), cfg).unwrap().run().unwrap()
            };
            let one = run(1);
            assert_eq!(one.norms.len(), 2);
            let got = run(2);
            let what = format!("{dims:?} {bc:?} {pes} PEs {precision:?} {tile:?}");
            assert_eq!(got.iterations, 12, "{what}");
            let diff = cells_differing(&got, &one);
            assert_eq!(diff, 0, "{what}: {diff} cells differ");
            if tile.is_some() {
                assert_eq!(norm_bits(&got), norm_bits(&one), "{what}: norms");
            } else {
                // Default tiles differ with S (a tile's partial sum is in
                // its own cell order): the norms agree to rounding.
                for ((n1, v1), (n2, v2)) in one.norms.iter().zip(&got.norms) {
                    assert_eq!(n1, n2, "{what}");
                    assert!(
                        (v1 - v2).abs() <= 1e-12 * v1.abs(),
                        "{what}: norm {v2} vs {v1}"
                    );
                }
            }
        }
    }
}

/// What temporal blocking cannot do is refused before anything runs.
#[test]
fn temporal_blocking_refuses_what_it_cannot_do() {
    let rt = rt(1);
    let two_d = problem([1, 16, 16], Stencil::FivePoint, [D, D, D]);
    let cases: [(JacobiProblem, u32, u32, u32, &str); 8] = [
        (two_d.clone(), 0, 12, 0, "in 1..=4"),
        (two_d.clone(), 5, 20, 0, "in 1..=4"),
        (
            problem([1, 16, 16], Stencil::NinePoint, [D, D, D]),
            2,
            12,
            0,
            "not the 9-point stencil",
        ),
        (
            problem([8, 8, 8], Stencil::SevenPoint, [D, D, D]),
            4,
            12,
            0,
            "runs 2 sweeps a sync, not 4",
        ),
        (
            problem([8, 8, 8], Stencil::TwentySevenPoint, [D, D, D]),
            2,
            12,
            0,
            "not the 27-point stencil",
        ),
        (
            problem([1, 8, 8], Stencil::SevenPoint, [D, D, D]),
            2,
            12,
            0,
            "at least 2 cells along z, y and x",
        ),
        (two_d.clone(), 4, 10, 0, "multiples"),
        (two_d, 4, 12, 6, "multiples"),
    ];
    for (prob, steps, iters, every, want) in cases {
        let mut cfg = JacobiConfig::new(prob, iters);
        cfg.steps_per_sync = steps;
        cfg.check_every = every;
        match JacobiSolver::new(&rt, cfg) {
            Err(Error::InvalidConfig(m)) => assert!(m.contains(want), "{steps}: {m}"),
            Err(e) => panic!("{steps}: {e}"),
            Ok(_) => {
                panic!("{steps} sweeps a sync, {iters} iterations, check every {every}: accepted")
            }
        }
    }
}

/// Configuration errors say what a user wrote: stencils by their points
/// and grids by their cells, never the Rust names (`FivePoint`) or Debug
/// arrays (`[4, 8, 8]`); and a tile count the ready queue cannot hold is
/// refused before the graph of them is built, without naming the builder.
#[test]
fn configuration_errors_read_as_a_user_wrote_them() {
    let small = Runtime::builder()
        .emulator(2)
        .max_tasks(16)
        .symmetric_heap_bytes(8 << 20)
        .build()
        .unwrap();
    let mut too_many = JacobiConfig::new(problem([1, 8, 8], Stencil::FivePoint, [D, D, D]), 4);
    too_many.tile = Some([1, 1, 1]);
    let mut steps = JacobiConfig::new(problem([8, 8, 8], Stencil::SevenPoint, [D, D, D]), 4);
    steps.steps_per_sync = 3;
    steps.check_every = 0;
    let rt1 = rt(1);
    let cases: [(&Runtime, JacobiConfig, &str); 3] = [
        (
            &rt1,
            JacobiConfig::new(problem([4, 8, 8], Stencil::FivePoint, [D, D, D]), 4),
            "the 5-point stencil needs a 2D grid (nz = 1), got 4 × 8 × 8 cells (z × y × x)",
        ),
        (
            &rt1,
            steps,
            "temporal blocking of the 7-point stencil runs 2 sweeps a sync, not 3",
        ),
        (
            &small,
            too_many,
            "64 tiles of 1 × 1 cells (y × x) are more tasks than the ready queue holds (16): use larger tiles",
        ),
    ];
    for (rt, cfg, want) in cases {
        match JacobiSolver::new(rt, cfg) {
            Err(e @ Error::InvalidConfig(_)) => {
                let m = e.to_string();
                assert!(m.contains(want), "{m:?} lacks {want:?}");
                for rust in ["Point", "[", "Builder::"] {
                    assert!(!m.contains(rust), "{m:?} names {rust:?}");
                }
            }
            Err(e) => panic!("{want}: {e}"),
            Ok(_) => panic!("{want}: accepted"),
        }
    }
}

/// Temporal blocking with a tolerance: the run stops at the same check as
/// with one sweep a sync (the norms are the same), STOP_SLACK graph
/// iterations (each S sweeps) after its graph iteration, and the grid is the reference's after
/// the sweeps it reports.
#[test]
fn temporal_blocking_stops_at_the_same_check_and_reports_sweeps() {
    let prob = problem([1, 12, 12], Stencil::FivePoint, [D, D, D]);
    let run = |steps: u32| {
        let mut cfg = JacobiConfig::new(prob.clone(), 10_000);
        cfg.precision = Precision::F64;
        cfg.check_every = 4;
        cfg.tol = Some(1e-3);
        cfg.steps_per_sync = steps;
        JacobiSolver::new(&rt(2), cfg).unwrap().run().unwrap()
    };
    let one = run(1);
    for steps in [2, 4] {
        let got = run(steps);
        let c = got.converged_at.expect("converges");
        assert_eq!(Some(c), one.converged_at, "{steps} sweeps a sync");
        // The stop comes STOP_SLACK graph iterations after the check's (as
        // with one sweep a sync: c + STOP_SLACK), each `steps` sweeps.
        assert_eq!(
            got.iterations,
            c + 1 + (STOP_SLACK - 1) * steps,
            "{steps} sweeps a sync"
        );
        let want = reference(&prob, got.iterations as usize).unwrap().field;
        assert!(max_abs(&got.field, &want) < 1e-12, "{steps} sweeps a sync");
    }
}

/// Temporal blocking under random grids, PE counts, tiles, pulse chunks and
/// boundaries: S = 2..4 sweeps a sync on P PEs give bitwise the grid of one
/// sweep a sync on one PE.
#[test]
fn random_temporal_blocking_never_changes_a_single_cell() {
    let mut next = xorshift(0x2545f4914f6cdd1du64);
    for case in 0..10 {
        let dims = [1, 12 + next(30) as usize, 12 + next(40) as usize];
        let bc = [0, 1, 2].map(|_| if next(2) == 0 { D } else { P });
        let prob = problem(dims, Stencil::FivePoint, bc);
        let steps = 2 + next(3) as u32;
        let iters = steps * (2 + next(4) as u32);
        let pes = [1u32, 2, 3, 4][next(4) as usize];
        let tile = [1, 1 + next(9) as usize, 1 + next(40) as usize];
        let chunk = 1 + next(40) as usize;
        let one = {
            let cfg = JacobiConfig::new(prob.clone(), iters);
            JacobiSolver::new(&rt(1), cfg).unwrap().run().unwrap().field
        };
        let mut cfg = JacobiConfig::new(prob.clone(), iters);
        cfg.tile = Some(tile);
        cfg.pulse_chunk_cells = chunk;
        cfg.steps_per_sync = steps;
        let got = JacobiSolver::new(&rt(pes), cfg)
            .unwrap()
            .run()
            .unwrap()
            .field;
        let diff = got
            .iter()
            .zip(&one)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            diff, 0,
            "case {case}: {dims:?} {bc:?}, {pes} PEs, tiles {tile:?}, chunks ≥ {chunk}, {steps} sweeps a sync: {diff} cells differ"
        );
    }
}

/// Checking at every graph iteration lets tiles run a check ahead of each
/// other (a tile may start instance n + 1 before another has finished n):
/// each checked norm must still be of exactly its own iteration, the
/// reference's, on 1 and 2 PEs, one sweep a sync and four, many runs (the
/// interleavings differ from run to run).
#[test]
fn checks_at_every_iteration_norm_exactly_their_own_iteration() {
    let prob = problem([1, 40, 40], Stencil::FivePoint, [D, D, D]);
    let want = reference(&prob, 32).unwrap().update_norms;
    for (pes, steps, every) in [(1u32, 1u32, 1u32), (2, 1, 1), (2, 4, 4), (1, 2, 2)] {
        let rt = Runtime::builder()
            .emulator(3)
            .pes(pes)
            .comm_blocks(2)
            .symmetric_heap_bytes(8 << 20)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        let mut cfg = JacobiConfig::new(prob.clone(), 32);
        cfg.precision = Precision::F64;
        cfg.check_every = every;
        cfg.steps_per_sync = steps;
        cfg.tile = Some([1, 4, 4]);
        let solver = JacobiSolver::new(&rt, cfg).unwrap();
        for round in 0..8 {
            let run = solver.run().unwrap();
            assert_eq!(run.norms.len(), (32 / every) as usize);
            for &(n, v) in &run.norms {
                let w = want[n as usize];
                assert!(
                    (v - w).abs() <= 1e-12 * w,
                    "{pes} PEs, {steps} sweeps a sync, check every {every}, run {round}: \
                     norm of iteration {n} is {v}, the reference's {w}"
                );
            }
        }
    }
}

/// An axis of a single cell is still an axis of the stencil: its cell's
/// neighbours along it are boundary values (or itself, periodic). Thin
/// grids — a row, a column, a single cell, 3D slabs one cell thick along
/// any axis — on 1, 2 and 4 PEs, every stencil, Dirichlet and periodic,
/// against the f64 reference (they once ran with the thin axis's ghosts
/// left out: errors up to 3.45).
#[test]
fn grids_one_cell_thick_along_an_axis_match_the_reference() {
    let cases: Vec<([usize; 3], Stencil)> = vec![
        ([1, 1, 1], Stencil::FivePoint),
        ([1, 1, 8], Stencil::FivePoint),
        ([1, 8, 1], Stencil::NinePoint),
        ([1, 1, 9], Stencil::NinePoint),
        ([1, 1, 1], Stencil::SevenPoint),
        ([1, 5, 6], Stencil::SevenPoint),
        ([4, 1, 4], Stencil::SevenPoint),
        ([4, 4, 1], Stencil::TwentySevenPoint),
        ([2, 1, 1], Stencil::TwentySevenPoint),
        ([1, 6, 4], Stencil::TwentySevenPoint),
    ];
    for (dims, stencil) in cases {
        for bc in [[D, D, D], [P, P, P], [D, P, D], [P, D, P]] {
            let prob = problem(dims, stencil, bc);
            let want = reference(&prob, 5).unwrap();
            for pes in [1u32, 2, 4] {
                let mut cfg = JacobiConfig::new(prob.clone(), 5);
                cfg.precision = Precision::F64;
                cfg.check_every = 1;
                let what = format!("{stencil:?} {dims:?} {bc:?} on {pes} PEs");
                let rt = rt(pes);
                let solver = match JacobiSolver::new(&rt, cfg) {
                    Ok(s) => s,
                    // More PEs than cells: refused, and said so.
                    Err(Error::InvalidConfig(m)) if pes > 1 => {
                        assert!(m.contains("decomposition"), "{what}: {m}");
                        continue;
                    }
                    Err(e) => panic!("{what}: {e}"),
                };
                let run = solver.run().unwrap();
                let err = max_abs(&run.field, &want.field);
                assert!(err <= 1e-13, "{what}: max error {err:e}");
                for &(n, v) in &run.norms {
                    let w = want.update_norms[n as usize];
                    assert!(
                        (v - w).abs() <= 1e-12 * w.max(1e-300),
                        "{what}: norm of iteration {n} is {v}, the reference's {w}"
                    );
                }
            }
        }
    }
}

/// `JacobiSolver::prepare` checks what the solve's run would check (on
/// the emulator there is nothing to compile): options the backend refuses
/// fail in prepare as in the run, and a prepared solve (two sweeps a
/// sync) then runs as an unprepared solver's does, bit for bit.
#[test]
fn prepare_checks_what_the_solve_would_run() {
    let rt = rt(2);
    let mut cfg = JacobiConfig::new(problem([1, 20, 18], Stencil::FivePoint, [D, D, D]), 12);
    cfg.steps_per_sync = 2;
    let solver = JacobiSolver::new(&rt, cfg.clone()).unwrap();
    solver.prepare().unwrap();
    let watched = autarky::RunOptions {
        watchdog: Some(Duration::from_secs(1)),
        ..autarky::RunOptions::iterations(1)
    };
    match solver.prepare_with(watched.clone()) {
        Err(Error::Unsupported {
            backend: "emulator",
            option: "RunOptions::watchdog",
            ..
        }) => {}
        other => panic!("prepare: expected Unsupported, got {other:?}"),
    }
    assert!(
        matches!(solver.run_with(watched), Err(Error::Unsupported { .. })),
        "the run refuses what prepare refused"
    );
    let prepared = solver.run().unwrap();
    assert_eq!(prepared.iterations, 12);
    let fresh = JacobiSolver::new(&rt, cfg).unwrap().run().unwrap();
    assert_eq!(cells_differing(&prepared, &fresh), 0);
}
