//! CG as a task graph on the CPU emulator (CI): the same graph as on the GPU
//! — SpMV/vector tiles, halo gathers on comm workers, in-kernel allreduces
//! and stop — against the f64 reference `cg_reference`.

mod common;

use std::time::Duration;

use autarky::solvers::cg::{
    cg_reference, heap_bytes_needed, poisson2d, poisson2d_aniso, poisson3d, poisson3d_aniso,
    random_spd, read_matrix_market, write_matrix_market, CgConfig, CgError, CgOptions, CgRun,
    CgSolveError, CgSolver, CgVariant, Csr, DirectionForm, Precond,
};
use autarky::Runtime;
use common::{iterations_within, max_abs_diff};

const TOL: f64 = 1e-8;

fn rt_for(a: &Csr<f64>, pes: u32) -> Runtime {
    Runtime::builder()
        .emulator(2)
        .pes(pes)
        .comm_blocks(2)
        // Room for two solvers (common::same_cg_runs builds a pair).
        .symmetric_heap_bytes(2 * heap_bytes_needed(a, pes).unwrap())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn cfg(variant: CgVariant, precond: Precond) -> CgConfig {
    CgConfig {
        variant,
        precond,
        // Several tiles per PE, so tile edges and tile-order sums are
        // exercised even on small matrices.
        tile_rows: Some(97),
        ..CgConfig::new(TOL, 5_000)
    }
}

fn solve(a: &Csr<f64>, pes: u32, c: CgConfig) -> CgRun {
    let rt = rt_for(a, pes);
    CgSolver::new(&rt, a, c).unwrap().run().unwrap()
}

fn reference(a: &Csr<f64>, variant: CgVariant) -> autarky::solvers::cg::CgResult {
    let opts = CgOptions {
        tol: TOL,
        max_iters: 5_000,
        variant,
    };
    let n = a.n_rows();
    cg_reference(a, &vec![1.0; n], &vec![0.0; n], &opts).unwrap()
}

fn cases() -> Vec<(&'static str, Csr<f64>)> {
    vec![
        ("poisson2d(24)", poisson2d(24).unwrap()),
        ("poisson3d(8)", poisson3d(8).unwrap()),
        (
            "poisson2d_aniso(20, 1, 0.05)",
            poisson2d_aniso(20, 1.0, 0.05).unwrap(),
        ),
        (
            "poisson3d_aniso(7, [1, 0.3, 0.05])",
            poisson3d_aniso(7, [1.0, 0.3, 0.05]).unwrap(),
        ),
        ("random_spd(600, 7, 3)", random_spd(600, 7, 3).unwrap()),
    ]
}

#[test]
fn graph_cg_converges_like_the_reference_for_every_variant() {
    for (name, a) in cases() {
        for (variant, precond, ref_variant) in common::cg_variants() {
            let want = reference(&a, ref_variant);
            let rt = rt_for(&a, 2);
            let solver = CgSolver::new(&rt, &a, cfg(variant, precond)).unwrap();
            let got = solver.run().unwrap();
            let what = format!("{name} {variant:?} {precond:?}");
            // Every task of every PE ran exactly `iterations` instances: the
            // stop hit the same iteration everywhere.
            let report = got.report.as_ref().unwrap();
            assert_eq!(
                report.instances,
                solver.graph().num_tasks() as u64 * got.iterations as u64,
                "{what}"
            );
            assert!(got.converged, "{what}: {got:?}");
            assert!(got.rel_residual <= TOL, "{what}: {}", got.rel_residual);
            assert!(
                got.true_rel_residual <= 10.0 * TOL,
                "{what}: true residual {}",
                got.true_rel_residual
            );
            assert!(
                iterations_within(got.iterations, want.iterations),
                "{what}: {} iterations, reference {}",
                got.iterations,
                want.iterations
            );
            let scale = want.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                max_abs_diff(&got.x, &want.x) <= 1e-5 * scale,
                "{what}: x differs from the reference by {}",
                max_abs_diff(&got.x, &want.x)
            );
        }
    }
}

#[test]
fn single_reduction_needs_the_same_iterations_as_standard() {
    for (name, a) in cases() {
        let std = solve(&a, 2, cfg(CgVariant::Standard, Precond::None)).iterations;
        let sr = solve(&a, 2, cfg(CgVariant::SingleReduction, Precond::None)).iterations;
        assert!(
            iterations_within(sr, std as usize),
            "{name}: standard {std}, single reduction {sr}"
        );
    }
}

#[test]
fn one_two_and_four_pes_agree_within_the_tolerance() {
    let a = poisson2d(30).unwrap();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        let runs: Vec<CgRun> = [1, 2, 4]
            .iter()
            .map(|&p| solve(&a, p, cfg(variant, Precond::None)))
            .collect();
        let scale = runs[0].x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (p, r) in [2, 4].iter().zip(&runs[1..]) {
            assert!(
                r.iterations.abs_diff(runs[0].iterations) <= 2,
                "{variant:?}: P = 1 took {}, P = {p} took {}",
                runs[0].iterations,
                r.iterations
            );
            let d = max_abs_diff(&r.x, &runs[0].x);
            assert!(d <= 1e-6 * scale, "{variant:?}: P = {p} differs by {d}");
            assert!(r.true_rel_residual <= 10.0 * TOL);
        }
    }
}

#[test]
fn two_runs_with_the_same_pes_are_bitwise_identical() {
    let a = random_spd(500, 9, 21).unwrap();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        for pes in [1, 3] {
            let rt = rt_for(&a, pes);
            let solver = CgSolver::new(&rt, &a, cfg(variant, Precond::Jacobi)).unwrap();
            let first = solver.run().unwrap();
            let second = solver.run().unwrap();
            // A fresh solver (new graph, new buffers) as well.
            let rt2 = rt_for(&a, pes);
            let third = CgSolver::new(&rt2, &a, cfg(variant, Precond::Jacobi))
                .unwrap()
                .run()
                .unwrap();
            for other in [&second, &third] {
                common::assert_same_cg_run(other, &first, &format!("{variant:?}, {pes} PEs"));
            }
        }
    }
}

/// One PE: each allreduce fused into one task (the default) and run as a
/// local sum then the reduce (as on several PEs) give bitwise the same x,
/// residual and iteration count; the fused graph has one task fewer per
/// allreduce.
#[test]
fn one_pe_fused_and_two_task_allreduces_are_bitwise_identical() {
    let a = random_spd(500, 9, 21).unwrap();
    for (variant, allreduces) in [(CgVariant::Standard, 2), (CgVariant::SingleReduction, 1)] {
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("{variant:?} {precond:?}");
            let two = CgConfig {
                fuse_single_pe_allreduce: false,
                ..cfg(variant, precond)
            };
            let (f, _) = common::same_cg_runs(
                &rt_for(&a, 1),
                &a,
                (cfg(variant, precond), two),
                |fused, two| {
                    assert_eq!(
                        fused.graph().num_tasks() + allreduces,
                        two.graph().num_tasks(),
                        "{what}"
                    )
                },
                &what,
            );
            assert!(f.converged, "{what}: {f:?}");
        }
    }
}

/// The next direction formed where it is read (the SpMV, the update, the
/// gathers; the default) and in direction tiles of its own give bitwise the
/// same x, residual and iteration count, on one PE and on several (whose
/// gathers then send `z + β p` formed from the owner's z and p); the fused
/// graph has one task fewer per tile.
#[test]
fn fused_and_separate_directions_are_bitwise_identical() {
    let a = random_spd(500, 9, 21).unwrap();
    for pes in [1, 2, 3] {
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("{pes} PEs, {precond:?}");
            let with = |direction| CgConfig {
                direction,
                ..cfg(CgVariant::Standard, precond)
            };
            let (f, _) = common::same_cg_runs(
                &rt_for(&a, pes),
                &a,
                (with(DirectionForm::Fused), with(DirectionForm::Separate)),
                |fused, separate| {
                    let tiles: usize = fused.tiles_per_pe().iter().sum();
                    // x's step apart (by default where the vectors fit in L2):
                    // a task a tile the separate form has not.
                    let xsteps = if fused.x_step_apart() { tiles } else { 0 };
                    assert_eq!(
                        fused.graph().num_tasks() + tiles,
                        separate.graph().num_tasks() + xsteps,
                        "{what}"
                    );
                },
                &what,
            );
            assert!(f.converged && f.iterations > 10, "{what}: {f:?}");
        }
    }
}

/// The SpMV storing the direction and applying x's steps (lean updates,
/// the default with the direction fused) and the update tiles doing it
/// give bitwise the same x, residual and iteration count, converged or
/// stopped after an odd or even count, with and without the
/// preconditioner, on one PE and on several, with every matrix form.
#[test]
fn lean_and_full_updates_are_bitwise_identical() {
    each_form_case(|a, pes, precond, compact_matrix, row_patterns, what| {
        let with = |form| CgConfig {
            direction: DirectionForm::Fused,
            compact_matrix,
            row_patterns,
            lean_update: form,
            ..cfg(CgVariant::Standard, precond)
        };
        common::lean_and_full_updates_match(|| rt_for(a, pes), a, with, what);
    });
}

/// With lean updates, x's step as a task of its own after each SpMV tile
/// (`cg_xstep`, the default) and in the SpMV's row loop give bitwise the
/// same x, residual and iteration count, converged or stopped after an odd
/// or even count, with and without the preconditioner, on one PE and on
/// several, with every matrix form.
#[test]
fn x_step_apart_and_in_spmv_are_bitwise_identical() {
    each_form_case(|a, pes, precond, compact_matrix, row_patterns, what| {
        let with = |form| CgConfig {
            direction: DirectionForm::Fused,
            compact_matrix,
            row_patterns,
            x_step_apart: Some(form),
            ..cfg(CgVariant::Standard, precond)
        };
        common::x_step_apart_and_in_spmv_match(|| rt_for(a, pes), a, with, what);
    });
}

/// The single reduction's vector updates merged into the SpMV tiles (the
/// default: the tiles form z_{n+1} from r, w and s of the iteration where
/// they read it, the gathers alike) and axpy tiles that run first give
/// bitwise the same x, residual and iteration count, converged or stopped
/// after an odd or even count, with and without the preconditioner, on
/// one PE and on several (ghosts), with the rows as patterns and plain.
#[test]
fn merged_and_separate_single_reduction_updates_are_bitwise_identical() {
    each_form_case(|a, pes, precond, compact_matrix, row_patterns, what| {
        let with = |form| CgConfig {
            compact_matrix,
            row_patterns,
            merge_updates: form,
            ..cfg(CgVariant::SingleReduction, precond)
        };
        common::merged_and_separate_updates_match(|| rt_for(a, pes), a, with, what);
    });
}

/// The separate single reduction with z in one copy of v (r that copy
/// without the preconditioner: the default) and in two halves by parity
/// give bitwise the same x, residual and iteration count, converged or
/// stopped after an odd or even count, with and without the
/// preconditioner, on one PE and on several (gathers read the one copy),
/// with the rows as patterns and plain.
#[test]
fn single_reduction_one_copy_of_z_and_two_halves_are_bitwise_identical() {
    each_form_case(|a, pes, precond, compact_matrix, row_patterns, what| {
        let with = |single_buffer| CgConfig {
            compact_matrix,
            row_patterns,
            merge_updates: false,
            single_buffer,
            ..cfg(CgVariant::SingleReduction, precond)
        };
        common::single_and_double_buffer_match(|| rt_for(a, pes), a, with, what);
    });
}

/// The separate single reduction: x's step as a task of its own after each
/// SpMV tile (`cg_xstep`, the default) and in the axpy tiles give bitwise
/// the same x, residual and iteration count, converged or stopped after
/// an odd or even count, with and without the preconditioner, on one PE
/// and on several, with every matrix form.
#[test]
fn single_reduction_x_step_apart_and_in_axpy_are_bitwise_identical() {
    each_form_case(|a, pes, precond, compact_matrix, row_patterns, what| {
        let with = |form| CgConfig {
            compact_matrix,
            row_patterns,
            merge_updates: false,
            x_step_apart: Some(form),
            ..cfg(CgVariant::SingleReduction, precond)
        };
        common::x_step_apart_and_in_spmv_match(|| rt_for(a, pes), a, with, what);
    });
}

/// The cases of the trials that compare two forms of a recurrence: one
/// anisotropic 3D matrix on 1, 2 and 3 PEs, with and without the
/// preconditioner, plain and with the rows as patterns; `f(a, pes,
/// precond, compact_matrix, row_patterns, what)`.
fn each_form_case(f: impl Fn(&Csr<f64>, u32, Precond, bool, bool, &str)) {
    let a = poisson3d_aniso(9, [1.0, 0.5, 2.0]).unwrap();
    for pes in [1, 2, 3] {
        for precond in [Precond::None, Precond::Jacobi] {
            for (compact_matrix, row_patterns) in [(false, false), (true, true)] {
                let what = format!("{pes} PEs, {precond:?}, compact {compact_matrix}");
                f(&a, pes, precond, compact_matrix, row_patterns, &what);
            }
        }
    }
}

/// The matrix packed for the SpMV (one word a nonzero, where it fits), its
/// rows as patterns (a byte a row, the default where they fit) and plain
/// give bitwise the same x, residual and iteration count, for each
/// recurrence and form of the direction (the SpMV's three modes), with and
/// without the preconditioner, on one PE and on several (ghost columns far
/// from their rows); a matrix with too many distinct values stays plain.
#[test]
fn packed_and_plain_matrices_are_bitwise_identical() {
    let a = poisson3d_aniso(9, [1.0, 0.5, 2.0]).unwrap();
    for pes in [1, 2, 3] {
        for (variant, direction) in [
            (CgVariant::Standard, DirectionForm::Fused),
            (CgVariant::Standard, DirectionForm::Separate),
            (CgVariant::SingleReduction, DirectionForm::Auto),
        ] {
            for precond in [Precond::None, Precond::Jacobi] {
                let what = format!("{pes} PEs, {variant:?} {direction:?} {precond:?}");
                let with = |compact_matrix, row_patterns| CgConfig {
                    direction,
                    compact_matrix,
                    row_patterns,
                    ..cfg(variant, precond)
                };
                common::compact_forms_match_plain(&rt_for(&a, pes), &a, with, &what);
            }
        }
    }
    let r = random_spd(200, 5, 3).unwrap();
    let rt = rt_for(&r, 1);
    let s = CgSolver::new(&rt, &r, cfg(CgVariant::Standard, Precond::None)).unwrap();
    assert!(!s.compact_matrix(), "a value an entry: plain");
    assert!(!s.row_patterns(), "plain: no patterns");
}

/// The default tiling depends on the matrix and the PE count, not on the
/// backend's block count: runtimes with 2 and 5 compute workers per PE give
/// bitwise the same x. (The GPU bench checks the same between 2 GPUs and
/// 2 virtual PEs of one GPU, which have ~1054 and ~527 compute blocks per
/// PE; before the default was fixed, its tiles followed the block count.)
#[test]
fn the_default_tiling_does_not_depend_on_the_block_count() {
    // ~4.5 × 2048 nonzeros per PE at 2 PEs: 4 default tiles per PE, more
    // than the 2 workers of the smaller runtime, fewer than the 5 of the
    // larger (the old default gave 2 and 4 tiles).
    let a = poisson2d(60).unwrap();
    let pes = 2;
    let mut x = Vec::new();
    for workers in [2, 5] {
        let rt = Runtime::builder()
            .emulator(workers)
            .pes(pes)
            .comm_blocks(2)
            .symmetric_heap_bytes(heap_bytes_needed(&a, pes).unwrap())
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let s = CgSolver::new(&rt, &a, CgConfig::new(TOL, 5_000)).unwrap();
        assert!(
            s.tiles_per_pe().iter().all(|&t| t == 4),
            "{workers} workers: tiles per PE {:?}",
            s.tiles_per_pe()
        );
        x.push(s.run().unwrap());
    }
    common::assert_same_cg_run(&x[1], &x[0], "2 against 5 compute workers");
}

/// Each send list is split over the comm blocks (chunks of at least
/// GATHER_CHUNK_ENTRIES): with 3 comm blocks a 48² ghost plane goes in 2
/// parts on different comm slots, with 1 in one; x is bitwise the same (a
/// gather is a copy), on 2 and 4 PEs (interior PEs send two planes).
#[test]
fn gathers_split_over_comm_blocks_give_bitwise_the_same_x() {
    let a = poisson3d(48).unwrap();
    for pes in [2, 4] {
        let mut runs = Vec::new();
        for comm in [1, 3] {
            let rt = Runtime::builder()
                .emulator(2)
                .pes(pes)
                .comm_blocks(comm)
                .symmetric_heap_bytes(heap_bytes_needed(&a, pes).unwrap())
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap();
            let s = CgSolver::new(&rt, &a, CgConfig::new(0.0, 12)).unwrap();
            let g = s.graph();
            let parts = (0..g.num_tasks())
                .filter_map(|i| g.name(autarky::TaskId::from_index(i)))
                .filter(|n| n.starts_with("gather"))
                .filter(|n| n.contains("(part 2 of 2)"))
                .count();
            // P PEs in z slabs: 2(P − 1) send lists (one each way per
            // boundary), every one split with 3 comm blocks, none with 1.
            let lists = 2 * (pes as usize - 1);
            assert_eq!(
                parts,
                if comm == 1 { 0 } else { lists },
                "{pes} PEs, {comm} comm blocks"
            );
            runs.push(s.run().unwrap());
        }
        assert_eq!(runs[0].iterations, 12);
        common::assert_same_cg_run(&runs[1], &runs[0], &format!("{pes} PEs"));
    }
}

#[test]
fn a_matrix_market_file_written_and_read_back_solves_the_same() {
    let a = random_spd(300, 5, 9).unwrap();
    let dir = std::env::temp_dir().join(format!("autarky-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("spd.mtx");
    write_matrix_market(&a, &path).unwrap();
    let back = read_matrix_market(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let want = reference(&a, CgVariant::Standard);
    let got = solve(&back, 2, cfg(CgVariant::Standard, Precond::None));
    assert!(
        got.converged && got.true_rel_residual <= 10.0 * TOL,
        "{got:?}"
    );
    assert!(iterations_within(got.iterations, want.iterations));
}

#[test]
fn max_iters_stops_the_run_unconverged_with_the_residual_it_reached() {
    let a = poisson2d(30).unwrap();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        let c = CgConfig {
            max_iters: 7,
            ..cfg(variant, Precond::None)
        };
        let got = solve(&a, 2, c);
        let n = a.n_rows();
        let want = cg_reference(
            &a,
            &vec![1.0; n],
            &vec![0.0; n],
            &CgOptions {
                tol: TOL,
                max_iters: 7,
                variant,
            },
        )
        .unwrap();
        assert_eq!(got.iterations, 7);
        assert!(!got.converged);
        assert!(
            (got.rel_residual - want.rel_residual).abs()
                <= 1e-9 * want.rel_residual.max(1e-300) + 1e-12,
            "{variant:?}: {} vs reference {}",
            got.rel_residual,
            want.rel_residual
        );
        assert!((got.true_rel_residual - want.true_rel_residual).abs() <= 1e-9);
    }
}

#[test]
fn a_custom_rhs_and_initial_guess_are_used() {
    let a = poisson3d(6).unwrap();
    let n = a.n_rows();
    let b: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
    let x0: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
    let got = solve(
        &a,
        2,
        CgConfig {
            b: Some(b.clone()),
            x0: Some(x0.clone()),
            ..cfg(CgVariant::Standard, Precond::None)
        },
    );
    let want = cg_reference(
        &a,
        &b,
        &x0,
        &CgOptions {
            tol: TOL,
            max_iters: 5000,
            variant: CgVariant::Standard,
        },
    )
    .unwrap();
    assert!(got.converged && got.true_rel_residual <= 10.0 * TOL);
    assert!(iterations_within(got.iterations, want.iterations));
}

#[test]
fn zero_rhs_and_a_converged_guess_return_without_a_run() {
    let a = poisson2d(10).unwrap();
    let n = a.n_rows();
    let rt = rt_for(&a, 2);
    let zero = CgSolver::new(
        &rt,
        &a,
        CgConfig {
            b: Some(vec![0.0; n]),
            x0: Some(vec![3.0; n]),
            ..cfg(CgVariant::Standard, Precond::None)
        },
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(zero.iterations, 0);
    assert!(zero.x.iter().all(|&v| v == 0.0));
    assert_eq!((zero.rel_residual, zero.true_rel_residual), (0.0, 0.0));
    assert!(zero.converged && zero.report.is_none());

    // x0 = the exact solution of A x = A 1.
    let ones = vec![1.0; n];
    let b = a.spmv(&ones);
    let done = CgSolver::new(
        &rt,
        &a,
        CgConfig {
            b: Some(b),
            x0: Some(ones.clone()),
            ..cfg(CgVariant::SingleReduction, Precond::None)
        },
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(done.iterations, 0);
    assert_eq!(done.x, ones);
    assert!(done.report.is_none());
}

/// `a − shift · I`: symmetric, indefinite for a shift inside the spectrum.
fn shifted(a: &Csr<f64>, shift: f64) -> Csr<f64> {
    let mut t = Vec::new();
    for i in 0..a.n_rows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            t.push((i as u32, c, if c as usize == i { v - shift } else { v }));
        }
    }
    Csr::from_triplets(a.n_rows(), a.n_cols(), t).unwrap()
}

#[test]
fn an_indefinite_matrix_fails_at_the_reference_iteration_with_its_curvature_sign() {
    let base = poisson2d(12).unwrap();
    let n = base.n_rows();
    let mut later = 0;
    for shift in [0.3, 0.6, 1.0, 2.0, 5.0] {
        let a = shifted(&base, shift);
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            let want = cg_reference(
                &a,
                &vec![1.0; n],
                &vec![0.0; n],
                &CgOptions {
                    tol: TOL,
                    max_iters: 5000,
                    variant,
                },
            );
            let Err(CgError::NotPositiveDefinite { iteration, .. }) = want else {
                continue;
            };
            let rt = rt_for(&a, 2);
            let got = CgSolver::new(&rt, &a, cfg(variant, Precond::None)).and_then(|s| s.run());
            match got {
                Err(CgSolveError::Cg(CgError::NotPositiveDefinite { iteration: k, pap })) => {
                    assert_eq!(k, iteration, "shift {shift} {variant:?}");
                    assert!(pap <= 0.0, "shift {shift} {variant:?}: pap {pap}");
                    later += usize::from(k > 1);
                }
                other => {
                    panic!("shift {shift} {variant:?}: expected NotPositiveDefinite, got {other:?}")
                }
            }
        }
    }
    assert!(
        later > 0,
        "no case failed after the first iteration (the test lost its bite)"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let a = poisson2d(6).unwrap();
    let n = a.n_rows();
    let rt = rt_for(&a, 2);
    let err = |c: CgConfig| CgSolver::new(&rt, &a, c).unwrap_err();
    let base = || cfg(CgVariant::Standard, Precond::None);
    assert!(matches!(
        err(CgConfig {
            b: Some(vec![1.0; n - 1]),
            ..base()
        }),
        CgSolveError::Cg(CgError::SizeMismatch { vector: "b", .. })
    ));
    assert!(matches!(
        err(CgConfig {
            x0: Some(vec![0.0; n + 1]),
            ..base()
        }),
        CgSolveError::Cg(CgError::SizeMismatch { vector: "x0", .. })
    ));
    let mut nan = vec![1.0; n];
    nan[5] = f64::NAN;
    assert!(matches!(
        err(CgConfig {
            b: Some(nan),
            ..base()
        }),
        CgSolveError::Cg(CgError::NonFiniteInput {
            vector: "b",
            index: 5,
            ..
        })
    ));
    let mut inf = vec![0.0; n];
    inf[2] = f64::INFINITY;
    assert!(matches!(
        err(CgConfig {
            x0: Some(inf),
            ..base()
        }),
        CgSolveError::Cg(CgError::NonFiniteInput {
            vector: "x0",
            index: 2,
            ..
        })
    ));
    assert!(matches!(
        err(CgConfig {
            tol: -1.0,
            ..base()
        }),
        CgSolveError::Cg(CgError::InvalidTolerance(_))
    ));
    assert!(matches!(
        err(CgConfig {
            tol: f64::NAN,
            ..base()
        }),
        CgSolveError::Cg(CgError::InvalidTolerance(_))
    ));
    assert!(matches!(
        err(CgConfig {
            tile_rows: Some(0),
            ..base()
        }),
        CgSolveError::InvalidConfig(_)
    ));
    for lanes in [0, 3, 64] {
        assert!(matches!(
            err(CgConfig {
                spmv_lanes: Some(lanes),
                ..base()
            }),
            CgSolveError::InvalidConfig(_)
        ));
    }
    let neg = shifted(&a, 10.0);
    assert!(matches!(
        CgSolver::new(&rt, &neg, cfg(CgVariant::Standard, Precond::Jacobi)).unwrap_err(),
        CgSolveError::Cg(CgError::NonPositiveDiagonal { row: 0, .. })
    ));
    let rect = Csr::from_triplets(3, 4, vec![(0, 0, 1.0)]).unwrap();
    assert!(matches!(
        CgSolver::new(&rt, &rect, base()).unwrap_err(),
        CgSolveError::Cg(CgError::NotSquare { .. })
    ));
    // More PEs than rows.
    let tiny = Csr::from_triplets(1, 1, vec![(0, 0, 2.0)]).unwrap();
    assert!(matches!(
        CgSolver::new(&rt, &tiny, base()).unwrap_err(),
        CgSolveError::Partition(_)
    ));
}

/// A right-hand side of extreme magnitude is solved as well as one near 1:
/// the same iterations, x scaled exactly, residuals of the scaled system.
/// (With b ~ 1e-160 the sums of squares underflowed: ‖b‖ = 0 took the
/// zero-rhs path and returned x = 0 "converged"; ~1e-155 stopped early
/// with a reported residual of 0. With b ~ 1e155, ‖b‖ overflowed.)
#[test]
fn right_hand_sides_of_extreme_magnitude_solve_like_unit_ones() {
    let a = poisson2d(6).unwrap();
    let b1: Vec<f64> = (0..36).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
    let unit = {
        let rt = rt_for(&a, 2);
        let c = CgConfig {
            b: Some(b1.clone()),
            ..CgConfig::new(1e-8, 500)
        };
        CgSolver::new(&rt, &a, c).unwrap().run().unwrap()
    };
    assert!(unit.converged && unit.iterations > 5);
    // Powers of two: the scaled solve is then exactly the unit one.
    for k in [-540i32, -520, -500, 500, 520] {
        let sc = 2f64.powi(k);
        let rt = rt_for(&a, 2);
        let c = CgConfig {
            b: Some(b1.iter().map(|v| v * sc).collect()),
            ..CgConfig::new(1e-8, 500)
        };
        let run = CgSolver::new(&rt, &a, c).unwrap().run().unwrap();
        let what = format!("b scaled by 2^{k}");
        assert!(run.converged, "{what}");
        assert_eq!(run.iterations, unit.iterations, "{what}");
        assert_eq!(
            run.rel_residual.to_bits(),
            unit.rel_residual.to_bits(),
            "{what}"
        );
        for (x, u) in run.x.iter().zip(&unit.x) {
            assert_eq!(*x, u * sc, "{what}");
        }
    }
}

/// The f64 reference scales an extreme right-hand side the same way.
#[test]
fn the_reference_solves_extreme_right_hand_sides_like_unit_ones() {
    let a = poisson2d(6).unwrap();
    let b1: Vec<f64> = (0..36).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
    let x0 = vec![0.0; 36];
    let opts = CgOptions::default();
    let unit = cg_reference(&a, &b1, &x0, &opts).unwrap();
    let sc = 2f64.powi(-540);
    let b: Vec<f64> = b1.iter().map(|v| v * sc).collect();
    let got = cg_reference(&a, &b, &x0, &opts).unwrap();
    assert_eq!(got.iterations, unit.iterations);
    assert!(got.x.iter().zip(&unit.x).all(|(x, u)| *x == u * sc));
}

/// CgSolver refuses a non-symmetric matrix (the CLI did; the library let
/// it run to a meaningless result or to max_iters).
#[test]
fn the_solver_refuses_a_non_symmetric_matrix() {
    let a = Csr::from_triplets(
        3,
        3,
        vec![
            (0, 0, 4.0),
            (0, 1, 1.0),
            (1, 0, 2.0),
            (1, 1, 4.0),
            (2, 2, 4.0),
        ],
    )
    .unwrap();
    let rt = rt_for(&a, 1);
    match CgSolver::new(&rt, &a, CgConfig::new(1e-8, 100)) {
        Err(CgSolveError::Matrix(e)) => assert!(e.to_string().contains("not symmetric"), "{e}"),
        other => panic!("expected a symmetry error, got {:?}", other.err()),
    }
}
