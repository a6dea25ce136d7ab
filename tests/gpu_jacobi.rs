//! Jacobi on the GPU with virtual PEs: against the f64 CPU reference, and
//! bitwise identical over PE counts and decompositions (skip without a GPU,
//! fail instead with AUTARKY_REQUIRE_GPU=1).

mod common;

use std::time::Duration;

use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver, Precision, STOP_SLACK};
use autarky::solvers::jacobi_ref::{reference, Boundary, JacobiProblem, Stencil};
use autarky::{Error, Runtime};
use common::*;

/// A GPU runtime from `b` (the trial runs only where a GPU is usable).
fn gpu_with(test: &str, b: autarky::runtime::Builder) -> Runtime {
    b.build().unwrap_or_else(|e| panic!("{test}: {e}"))
}

fn main() -> std::process::ExitCode {
    run_trials(vec![
        gpus_trial(
            "jacobi_matches_the_f64_reference_in_f32_and_f64",
            1,
            jacobi_matches_the_f64_reference_in_f32_and_f64,
        ),
        gpus_trial(
            "jacobi_grid_is_bitwise_identical_for_1_2_4_8_virtual_pes",
            1,
            jacobi_grid_is_bitwise_identical_for_1_2_4_8_virtual_pes,
        ),
        gpus_trial(
            "jacobi_3d_tiles_of_every_shape_match_the_emulator_bitwise",
            1,
            jacobi_3d_tiles_of_every_shape_match_the_emulator_bitwise,
        ),
        gpus_trial(
            "convergence_stops_every_pe_at_the_same_iteration_for_every_pe_count",
            1,
            convergence_stops_every_pe_at_the_same_iteration_for_every_pe_count,
        ),
        gpus_trial(
            "split_pulses_over_3_comm_blocks_leave_the_grid_and_norms_bitwise",
            1,
            split_pulses_over_3_comm_blocks_leave_the_grid_and_norms_bitwise,
        ),
        gpus_trial(
            "temporal_blocking_gives_bitwise_the_grid_of_one_sweep_per_sync",
            1,
            temporal_blocking_gives_bitwise_the_grid_of_one_sweep_per_sync,
        ),
        gpus_trial(
            "checks_at_every_iteration_norm_exactly_their_own_iteration",
            1,
            checks_at_every_iteration_norm_exactly_their_own_iteration,
        ),
        gpus_trial(
            "grids_one_cell_thick_along_an_axis_match_the_reference",
            1,
            grids_one_cell_thick_along_an_axis_match_the_reference,
        ),
        gpus_trial(
            "a_nan_in_the_grid_fails_the_run_naming_pe_task_and_iteration",
            1,
            a_nan_in_the_grid_fails_the_run_naming_pe_task_and_iteration,
        ),
    ])
}

fn rt(test: &str, pes: u32) -> Runtime {
    gpu_with(
        test,
        Runtime::builder()
            .gpu()
            .pes(pes)
            .comm_blocks(2)
            .compute_blocks(12)
            .symmetric_heap_bytes(64 << 20)
            .timeout(Duration::from_secs(10)),
    )
}

fn problem(dims: [usize; 3], stencil: Stencil, boundary: [Boundary; 3]) -> JacobiProblem {
    JacobiProblem::new(dims, stencil)
        .with_boundary(boundary)
        .with_init(|z, y, x| ((x * 7 + y * 13 + z * 5) % 17) as f64 / 17.0)
        .with_dirichlet(|z, y, x| 1.0 + 0.01 * x as f64 - 0.02 * y as f64 + 0.005 * z as f64)
}

fn max_rel_err(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
        / scale
}

const D: Boundary = Boundary::Dirichlet;
const P: Boundary = Boundary::Periodic;

fn jacobi_matches_the_f64_reference_in_f32_and_f64() {
    let cases = [
        ([1, 61, 95], Stencil::FivePoint, [D, D, D]),
        ([1, 48, 40], Stencil::NinePoint, [D, P, D]),
        ([14, 11, 19], Stencil::SevenPoint, [D, D, P]),
        ([10, 12, 9], Stencil::TwentySevenPoint, [P, D, D]),
    ];
    let config = |prob: &JacobiProblem, precision| {
        let mut cfg = JacobiConfig::new(prob.clone(), 40);
        cfg.precision = precision;
        cfg.tile = Some([3, 5, 16]);
        cfg
    };
    let precisions = [(Precision::F32, 2e-6), (Precision::F64, 1e-13)];
    let rts = [1, 4].map(|pes| rt("jacobi_vs_reference", pes));
    let mut jobs = Vec::new();
    for rt in &rts {
        for (dims, stencil, bc) in cases {
            for (precision, _) in precisions {
                jobs.push((rt, config(&problem(dims, stencil, bc), precision)));
            }
        }
    }
    compile_jacobi_ahead(&jobs);
    for rt in &rts {
        let pes = rt.num_pes();
        for (dims, stencil, bc) in cases {
            let prob = problem(dims, stencil, bc);
            let want = reference(&prob, 40).unwrap().field;
            for (precision, tol) in precisions {
                let cfg = config(&prob, precision);
                let run = JacobiSolver::new(rt, cfg).unwrap().run().unwrap();
                assert_eq!(run.iterations, 40);
                let err = max_rel_err(&run.field, &want);
                assert!(
                    err <= tol,
                    "{stencil:?} {dims:?} {bc:?} {precision:?} on {pes} PEs: max rel error {err:e} > {tol:e}"
                );
            }
        }
    }
}

fn jacobi_grid_is_bitwise_identical_for_1_2_4_8_virtual_pes() {
    let cases = [
        ([1, 64, 80], Stencil::FivePoint, [D, D, D]),
        ([1, 50, 70], Stencil::NinePoint, [P, P, D]),
        ([16, 12, 20], Stencil::SevenPoint, [D, P, D]),
        ([12, 16, 10], Stencil::TwentySevenPoint, [P, P, P]),
    ];
    let grids: [&[[usize; 3]]; 4] = [
        &[[1, 1, 1]],
        &[[1, 1, 2], [1, 2, 1]],
        &[[1, 2, 2], [1, 1, 4], [1, 4, 1], [2, 2, 1]],
        &[[2, 2, 2], [1, 2, 4], [1, 8, 1]],
    ];
    // Every (runtime, case, PE grid) in the order the results are kept.
    let rts = [1u32, 2, 4, 8].map(|pes| rt("jacobi_bitwise", pes));
    let mut jobs = Vec::new();
    for (pi, rt) in rts.iter().enumerate() {
        for (ci, (dims, stencil, bc)) in cases.iter().enumerate() {
            for g in grids[pi] {
                if stencil.is_2d() && g[0] != 1 {
                    continue;
                }
                let mut cfg = JacobiConfig::new(problem(*dims, *stencil, *bc), 33);
                cfg.pe_grid = Some(*g);
                cfg.tile = Some([4, 7, 24]);
                jobs.push((ci, (rt, cfg)));
            }
        }
    }
    compile_jacobi_ahead(&jobs.iter().map(|(_, j)| j.clone()).collect::<Vec<_>>());
    let mut results: Vec<Vec<Vec<f64>>> = vec![Vec::new(); cases.len()];
    for (ci, (rt, cfg)) in jobs {
        let run = JacobiSolver::new(rt, cfg).unwrap().run().unwrap();
        results[ci].push(run.field);
    }
    for (ci, r) in results.iter().enumerate() {
        for (k, f) in r.iter().enumerate().skip(1) {
            let diff = f
                .iter()
                .zip(&r[0])
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            assert_eq!(
                diff, 0,
                "case {ci}: decomposition #{k} differs from 1 PE in {diff} cells"
            );
        }
    }
}

/// The 3D 7-point sweep marches each tile along z with a register window
/// (rows in groups, x neighbours by shuffles): tiles with several x chunks
/// and a ragged last one, row counts that are not a multiple of the
/// group, one-plane and one-row tiles, and the default tiles must give the
/// CPU bodies' grid bit for bit (the same formula, term for term).
fn jacobi_3d_tiles_of_every_shape_match_the_emulator_bitwise() {
    let emu = Runtime::builder()
        .emulator(2)
        .comm_blocks(2)
        .symmetric_heap_bytes(64 << 20)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let prob = problem([13, 21, 75], Stencil::SevenPoint, [D, P, D]);
    let tiles: [Option<[usize; 3]>; 6] = [
        None,
        Some([5, 6, 40]),
        Some([13, 21, 75]),
        Some([2, 3, 33]),
        Some([1, 1, 64]),
        Some([7, 9, 31]),
    ];
    let rts = [1, 2].map(|pes| rt("jacobi_3d_tiles", pes));
    let mut jobs = Vec::new();
    for rt in &rts {
        for precision in [Precision::F32, Precision::F64] {
            for tile in tiles {
                let mut cfg = JacobiConfig::new(prob.clone(), 21);
                cfg.precision = precision;
                cfg.tile = tile;
                jobs.push((rt, cfg));
            }
        }
    }
    compile_jacobi_ahead(&jobs);
    for rt in &rts {
        let pes = rt.num_pes();
        for precision in [Precision::F32, Precision::F64] {
            let mut cfg = JacobiConfig::new(prob.clone(), 21);
            cfg.precision = precision;
            let want = JacobiSolver::new(&emu, cfg.clone())
                .unwrap()
                .run()
                .unwrap()
                .field;
            for tile in tiles {
                cfg.tile = tile;
                let run = JacobiSolver::new(rt, cfg.clone()).unwrap().run().unwrap();
                let diff = run
                    .field
                    .iter()
                    .zip(&want)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                assert_eq!(
                    diff, 0,
                    "{precision:?} tile {tile:?} on {pes} PEs: {diff} cells differ from the emulator"
                );
            }
        }
    }
}

fn convergence_stops_every_pe_at_the_same_iteration_for_every_pe_count() {
    let prob = problem([1, 40, 40], Stencil::FivePoint, [D, D, D]);
    let mut cfg = JacobiConfig::new(prob.clone(), 100_000);
    cfg.precision = Precision::F64;
    cfg.check_every = 10;
    cfg.tol = Some(1e-3);
    let rts = [1u32, 2, 4].map(|pes| rt("jacobi_convergence", pes));
    compile_jacobi_ahead(&rts.iter().map(|rt| (rt, cfg.clone())).collect::<Vec<_>>());
    let mut stops = Vec::new();
    for rt in &rts {
        let run = JacobiSolver::new(rt, cfg.clone()).unwrap().run().unwrap();
        let c = run.converged_at.expect("converges");
        assert_eq!(
            run.iterations,
            c + STOP_SLACK,
            "stopped {STOP_SLACK} after the check"
        );
        assert!(run.norms.last().unwrap().1 <= 1e-3);
        assert!(
            run.norms.windows(2).all(|w| w[1].1 < w[0].1),
            "norm decreases"
        );
        // The field is the reference's after exactly that many iterations.
        let want = reference(&prob, run.iterations as usize).unwrap().field;
        assert!(max_rel_err(&run.field, &want) < 1e-12);
        stops.push((run.iterations, run.norms.last().unwrap().1));
    }
    assert!(stops.windows(2).all(|w| w[0].0 == w[1].0), "{stops:?}");
}

fn a_nan_in_the_grid_fails_the_run_naming_pe_task_and_iteration() {
    let rt = rt("jacobi_nan", 2);
    let prob = JacobiProblem::new([1, 32, 32], Stencil::FivePoint).with_init(|_, y, x| {
        if (y, x) == (20, 5) {
            f64::NAN
        } else {
            0.0
        }
    });
    let mut cfg = JacobiConfig::new(prob, 50);
    cfg.check_every = 5;
    cfg.pe_grid = Some([1, 2, 1]);
    match JacobiSolver::new(&rt, cfg).unwrap().run() {
        Err(Error::NonFinite {
            pe,
            task,
            iteration,
            ..
        }) => {
            assert_eq!(iteration, 4, "the first check");
            assert!(task.contains("check (global norm)"), "{task}");
            assert!(pe < 2);
        }
        other => panic!("expected NonFinite, got {other:?}"),
    }
}

/// Pulses split into chunks of at least 8 cells over 3 comm blocks a PE
/// (each chunk its own comm task, its own sender and receiver edges), on 4
/// virtual PEs, f32 and f64: grid and norms bitwise those of whole pulses
/// on 1 comm block (and the grid that of 1 PE). 3D tiles here are 8 planes
/// deep by default, so the 7-point case also runs the z-marching sweep.
fn split_pulses_over_3_comm_blocks_leave_the_grid_and_norms_bitwise() {
    let cases = [
        ([1, 64, 80], Stencil::FivePoint, [D, P, D]),
        ([16, 12, 20], Stencil::SevenPoint, [D, D, P]),
        ([12, 16, 10], Stencil::TwentySevenPoint, [P, D, D]),
    ];
    let builder = |comm: u32, pes: u32| {
        Runtime::builder()
            .gpu()
            .pes(pes)
            .comm_blocks(comm)
            .compute_blocks(12)
            .symmetric_heap_bytes(64 << 20)
            .timeout(Duration::from_secs(10))
    };
    let one = gpu_with("split_pulses", builder(1, 1));
    let whole = gpu_with("split_pulses", builder(1, 4));
    let split = gpu_with("split_pulses", builder(3, 4));
    let config = |(dims, stencil, bc), precision, chunk| {
        let mut cfg = JacobiConfig::new(problem(dims, stencil, bc), 30);
        cfg.precision = precision;
        cfg.check_every = 10;
        cfg.pulse_chunk_cells = chunk;
        cfg
    };
    let mut jobs = Vec::new();
    for case in cases {
        for precision in [Precision::F32, Precision::F64] {
            for (rt, chunk) in [(&one, 1024), (&whole, 1024), (&split, 8)] {
                jobs.push((rt, config(case, precision, chunk)));
            }
        }
    }
    compile_jacobi_ahead(&jobs);
    for case @ (_, stencil, _) in cases {
        for precision in [Precision::F32, Precision::F64] {
            let run = |rt: &Runtime, chunk: usize| {
                JacobiSolver::new(rt, config(case, precision, chunk))
                    .unwrap()
                    .run()
                    .unwrap()
            };
            let (a, b, c) = (run(&one, 1024), run(&whole, 1024), run(&split, 8));
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&c.field),
                bits(&b.field),
                "{stencil:?} {precision:?}: split vs whole pulses"
            );
            assert_eq!(
                bits(&c.field),
                bits(&a.field),
                "{stencil:?} {precision:?}: 4 PEs vs 1"
            );
            assert_eq!(c.norms, b.norms, "{stencil:?} {precision:?}: norms");
            assert_eq!(c.norms.len(), 3);
        }
    }
}

/// Temporal blocking on the GPU (2D: 2, 3 and 4 sweeps per
/// synchronisation, lanes holding columns in registers, x neighbours by
/// shuffles; 3D 7-point: 2 sweeps, items marched along z through a
/// register window): the grid bitwise that of one sweep per
/// synchronisation, on 1, 4 and 8 virtual PEs (edge and corner ghosts),
/// Dirichlet and periodic sides, f32 and f64, default and small tiles (a
/// tile narrower than a warp's 32 - 2S output columns, shorter than its
/// rows, one plane or one row thick; x extents not a multiple of 28). The
/// norms agree with one sweep a sync's to rounding (a lane sums its cells
/// in another order).
fn temporal_blocking_gives_bitwise_the_grid_of_one_sweep_per_sync() {
    let cases = [
        ([1, 61, 95], [D, D, D], 1u32, None, None),
        ([1, 64, 80], [P, D, P], 4, Some([1, 2, 2]), None),
        ([1, 40, 52], [D, P, D], 4, Some([1, 2, 2]), Some([1, 5, 19])),
        ([40, 37, 70], [D, D, D], 1, None, None),
        ([24, 30, 61], [P, D, P], 4, Some([1, 2, 2]), None),
        ([20, 22, 66], [D, P, D], 8, Some([2, 2, 2]), Some([3, 5, 9])),
        ([16, 20, 60], [P, P, D], 1, None, Some([1, 1, 30])),
        ([16, 21, 90], [D, D, P], 1, None, Some([7, 3, 90])),
    ];
    let config =
        |(dims, bc, _, grid, tile): ([usize; 3], [Boundary; 3], u32, _, _), precision, steps| {
            let stencil = if dims[0] > 1 {
                Stencil::SevenPoint
            } else {
                Stencil::FivePoint
            };
            let mut cfg = JacobiConfig::new(problem(dims, stencil, bc), 48);
            cfg.precision = precision;
            cfg.check_every = 24;
            cfg.pe_grid = grid;
            cfg.tile = tile;
            cfg.steps_per_sync = steps;
            cfg
        };
    let steps_list = |dims: [usize; 3]| -> &[u32] {
        if dims[0] > 1 {
            &[1, 2]
        } else {
            &[1, 2, 3, 4]
        }
    };
    let rts = cases.map(|(_, _, pes, _, _)| rt("temporal_blocking", pes));
    let mut jobs = Vec::new();
    for (case, rt) in cases.iter().zip(&rts) {
        for precision in [Precision::F32, Precision::F64] {
            for &steps in steps_list(case.0) {
                jobs.push((rt, config(*case, precision, steps)));
            }
        }
    }
    compile_jacobi_ahead(&jobs);
    for (case, rt) in cases.iter().zip(&rts) {
        let (dims, bc, pes, _, tile) = *case;
        for precision in [Precision::F32, Precision::F64] {
            let run = |steps: u32| {
                JacobiSolver::new(rt, config(*case, precision, steps))
                    .unwrap()
                    .run()
                    .unwrap()
            };
            let one = run(1);
            for &steps in &steps_list(dims)[1..] {
                let got = run(steps);
                let what = format!(
                    "{dims:?} {bc:?} {pes} PEs {precision:?} {tile:?}, {steps} sweeps a sync"
                );
                assert_eq!(got.iterations, 48, "{what}");
                let diff = got
                    .field
                    .iter()
                    .zip(&one.field)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                assert_eq!(diff, 0, "{what}: {diff} cells differ from one sweep a sync");
                assert_eq!(got.norms.len(), 2, "{what}");
                for ((n1, v1), (n2, v2)) in one.norms.iter().zip(&got.norms) {
                    assert_eq!(n1, n2, "{what}");
                    assert!(
                        (v1 - v2).abs() <= 1e-5 * v1.abs().max(1e-30),
                        "{what}: norm {v2} vs {v1}"
                    );
                }
            }
        }
    }
    // The 3D body divides by 6 in three f32 operations that are IEEE
    // division for all but subnormal quotients, -0, infinities and NaN,
    // and redoes an item that meets one of those with IEEE division: grids
    // of values near the smallest normal float (quotients subnormal) and of
    // -0.0 must still be bitwise those of one sweep a sync.
    let rt = rt("temporal_blocking", 1);
    let tiny = |z: i64, y: i64, x: i64| (x * 7 + y * 13 + z * 5).rem_euclid(17) as f64 * 1e-39;
    let cases: [(&str, JacobiProblem); 2] = [
        (
            "subnormal",
            JacobiProblem::new([12, 14, 40], Stencil::SevenPoint)
                .with_init(tiny)
                .with_dirichlet(tiny),
        ),
        (
            "-0.0",
            JacobiProblem::new([12, 14, 40], Stencil::SevenPoint)
                .with_init(|_, _, _| -0.0)
                .with_dirichlet(|_, _, _| -0.0),
        ),
    ];
    let config = |prob: &JacobiProblem, steps| {
        let mut cfg = JacobiConfig::new(prob.clone(), 8);
        cfg.steps_per_sync = steps;
        cfg
    };
    let jobs: Vec<_> = cases
        .iter()
        .flat_map(|(_, prob)| [1, 2].map(|steps| (&rt, config(prob, steps))))
        .collect();
    compile_jacobi_ahead(&jobs);
    for (what, prob) in cases {
        let run = |steps: u32| {
            JacobiSolver::new(&rt, config(&prob, steps))
                .unwrap()
                .run()
                .unwrap()
        };
        let (one, two) = (run(1), run(2));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(
            one.field.iter().any(|&v| v != 0.0) || what == "-0.0",
            "{what}: the grid is all zero"
        );
        assert_eq!(
            bits(&two.field),
            bits(&one.field),
            "{what}: 2 sweeps a sync"
        );
    }
}

/// Checking at every graph iteration lets tiles be a check apart (a tile
/// may finish check n + 1 before another finishes n): every checked norm
/// must still be its own iteration's, the f64 reference's to rounding, on
/// 1 and 4 virtual PEs, one sweep a sync and four, over many runs.
fn checks_at_every_iteration_norm_exactly_their_own_iteration() {
    let prob = problem([1, 96, 96], Stencil::FivePoint, [D, D, D]);
    let want = reference(&prob, 48).unwrap().update_norms;
    let config = |steps, every| {
        let mut cfg = JacobiConfig::new(prob.clone(), 48);
        cfg.precision = Precision::F64;
        cfg.check_every = every;
        cfg.steps_per_sync = steps;
        cfg.tile = Some([1, 4, 16]);
        cfg
    };
    let schedules = [(1u32, 1u32), (4, 4), (2, 2)];
    let rts = [1, 4].map(|pes| rt("checks_at_every_iteration", pes));
    let jobs: Vec<_> = rts
        .iter()
        .flat_map(|rt| schedules.map(|(steps, every)| (rt, config(steps, every))))
        .collect();
    compile_jacobi_ahead(&jobs);
    for rt in &rts {
        let pes = rt.num_pes();
        for (steps, every) in schedules {
            let solver = JacobiSolver::new(rt, config(steps, every)).unwrap();
            for round in 0..16 {
                let run = solver.run().unwrap();
                assert_eq!(run.norms.len(), (48 / every) as usize);
                for &(n, v) in &run.norms {
                    let w = want[n as usize];
                    assert!(
                        (v - w).abs() <= 1e-10 * w,
                        "{pes} PEs, {steps} sweeps a sync, check every {every}, run {round}: \
                         norm of iteration {n} is {v}, the reference's {w}"
                    );
                }
            }
        }
    }
}

/// An axis of a single cell is still an axis of the stencil (its cell's
/// neighbours along it are boundary values, or itself when periodic): a
/// row, a column, one cell, 3D slabs one cell thick, on 1 and 2 virtual
/// PEs, against the f64 reference.
fn grids_one_cell_thick_along_an_axis_match_the_reference() {
    let cases = [
        ([1, 1, 1], Stencil::FivePoint),
        ([1, 1, 40], Stencil::FivePoint),
        ([1, 33, 1], Stencil::NinePoint),
        ([1, 9, 70], Stencil::SevenPoint),
        ([12, 1, 40], Stencil::SevenPoint),
        ([9, 7, 1], Stencil::TwentySevenPoint),
    ];
    let config = |prob: &JacobiProblem| {
        let mut cfg = JacobiConfig::new(prob.clone(), 6);
        cfg.precision = Precision::F64;
        cfg
    };
    let rts = [1, 2].map(|pes| rt("one_cell_thick", pes));
    let mut jobs = Vec::new();
    for rt in &rts {
        for (dims, stencil) in cases {
            for bc in [[D, D, D], [P, P, P]] {
                jobs.push((rt, config(&problem(dims, stencil, bc))));
            }
        }
    }
    compile_jacobi_ahead(&jobs);
    for rt in &rts {
        let pes = rt.num_pes();
        for (dims, stencil) in cases {
            for bc in [[D, D, D], [P, P, P]] {
                let prob = problem(dims, stencil, bc);
                let want = reference(&prob, 6).unwrap().field;
                let what = format!("{stencil:?} {dims:?} {bc:?} on {pes} PEs");
                let run = match JacobiSolver::new(rt, config(&prob)) {
                    Ok(s) => s.run().unwrap(),
                    Err(Error::InvalidConfig(m)) if pes > 1 && m.contains("decomposition") => {
                        continue
                    }
                    Err(e) => panic!("{what}: {e}"),
                };
                let err = max_rel_err(&run.field, &want);
                assert!(err <= 1e-13, "{what}: max rel error {err:e}");
            }
        }
    }
}
