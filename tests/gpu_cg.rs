//! CG as a task graph on the GPU (virtual PEs on one GPU): the emulator
//! tests' checks on the device — against `cg_reference`, over PE counts,
//! bitwise repeatable, breakdown reported, CPU-free (skip without a GPU,
//! fail instead with AUTARKY_REQUIRE_GPU=1).

mod common;

use std::time::Duration;

use autarky::solvers::cg::{
    cg_reference, heap_bytes_needed, poisson2d, poisson3d, poisson3d_aniso, random_spd, CgConfig,
    CgError, CgOptions, CgRun, CgSolveError, CgSolver, CgVariant, Csr, DirectionForm, Precond,
};
use autarky::Runtime;
use common::*;

const TOL: f64 = 1e-8;

fn main() -> std::process::ExitCode {
    run_trials(vec![
        gpus_trial(
            "gpu_cg_converges_like_the_reference_for_every_variant",
            1,
            gpu_cg_converges_like_the_reference_for_every_variant,
        ),
        gpus_trial(
            "gpu_cg_pe_counts_agree_and_repeated_runs_are_bitwise_identical",
            1,
            gpu_cg_pe_counts_agree_and_repeated_runs_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_one_pe_fused_and_two_task_allreduces_are_bitwise_identical",
            1,
            gpu_cg_one_pe_fused_and_two_task_allreduces_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_fused_and_separate_directions_are_bitwise_identical",
            1,
            gpu_cg_fused_and_separate_directions_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_packed_and_plain_matrices_are_bitwise_identical",
            1,
            gpu_cg_packed_and_plain_matrices_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_lean_and_full_updates_are_bitwise_identical",
            1,
            gpu_cg_lean_and_full_updates_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_x_step_apart_and_in_spmv_are_bitwise_identical",
            1,
            gpu_cg_x_step_apart_and_in_spmv_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_merged_and_separate_single_reduction_updates_are_bitwise_identical",
            1,
            gpu_cg_merged_and_separate_single_reduction_updates_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_single_reduction_one_copy_of_z_and_two_halves_are_bitwise_identical",
            1,
            gpu_cg_single_reduction_one_copy_of_z_and_two_halves_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_x_steps_on_blocks_with_several_tiles_are_bitwise_identical",
            1,
            gpu_cg_x_steps_on_blocks_with_several_tiles_are_bitwise_identical,
        ),
        gpus_trial(
            "gpu_cg_vectors_kept_in_l2_change_nothing_but_speed",
            1,
            gpu_cg_vectors_kept_in_l2_change_nothing_but_speed,
        ),
        gpus_trial(
            "gpu_cg_indefinite_matrix_fails_at_the_reference_iteration",
            1,
            gpu_cg_indefinite_matrix_fails_at_the_reference_iteration,
        ),
        gpus_trial(
            "gpu_cg_run_is_one_launch_and_only_stream_queries",
            1,
            gpu_cg_run_is_one_launch_and_only_stream_queries,
        ),
    ])
}

fn rt(a: &Csr<f64>, pes: u32) -> Runtime {
    Runtime::builder()
        .gpu()
        .pes(pes)
        .comm_blocks(2)
        // Up to four solvers per runtime, and symmetric allocations are
        // never freed: room for four.
        .symmetric_heap_bytes(4 * heap_bytes_needed(a, pes).unwrap())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap_or_else(|e| panic!("GPU runtime with {pes} PEs: {e}"))
}

fn cfg(variant: CgVariant, precond: Precond) -> CgConfig {
    CgConfig {
        variant,
        precond,
        ..CgConfig::new(TOL, 10_000)
    }
}

fn reference(a: &Csr<f64>, variant: CgVariant) -> autarky::solvers::cg::CgResult {
    let n = a.n_rows();
    let opts = CgOptions {
        tol: TOL,
        max_iters: 10_000,
        variant,
    };
    cg_reference(a, &vec![1.0; n], &vec![0.0; n], &opts).unwrap()
}

fn gpu_cg_converges_like_the_reference_for_every_variant() {
    let cases = [
        ("poisson2d(64)", poisson2d(64).unwrap()),
        ("poisson3d(16)", poisson3d(16).unwrap()),
        (
            "poisson3d_aniso(12, [1, 0.1, 0.01])",
            poisson3d_aniso(12, [1.0, 0.1, 0.01]).unwrap(),
        ),
        ("random_spd(4000, 9, 5)", random_spd(4000, 9, 5).unwrap()),
    ];
    let variants = cg_variants();
    let mut jobs = Vec::new();
    for (_, a) in &cases {
        for pes in [1, 2] {
            for (variant, precond, _) in variants {
                jobs.push((a, pes, cfg(variant, precond)));
            }
        }
    }
    compile_cg_ahead(rt, &jobs);
    for (name, a) in &cases {
        for pes in [1, 2] {
            let rt = rt(a, pes);
            for (variant, precond, ref_variant) in variants {
                let what = format!("{name}, {pes} PE(s), {variant:?} {precond:?}");
                let want = reference(a, ref_variant);
                let solver = CgSolver::new(&rt, a, cfg(variant, precond)).unwrap();
                let got = solver.run().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(got.converged, "{what}: {got:?}");
                assert!(
                    got.true_rel_residual <= 10.0 * TOL,
                    "{what}: {}",
                    got.true_rel_residual
                );
                assert!(
                    iterations_within(got.iterations, want.iterations),
                    "{what}: {} iterations, reference {}",
                    got.iterations,
                    want.iterations
                );
                let report = got.report.as_ref().unwrap();
                assert_eq!(
                    report.instances,
                    solver.graph().num_tasks() as u64 * got.iterations as u64,
                    "{what}: every task ran exactly `iterations` instances"
                );
                eprintln!(
                    "{what}: {} iterations, {:?}/iteration",
                    got.iterations,
                    got.time_per_iteration()
                );
            }
        }
    }
}

fn gpu_cg_pe_counts_agree_and_repeated_runs_are_bitwise_identical() {
    let a = poisson2d(96).unwrap();
    let mut jobs = Vec::new();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        for pes in [1, 2, 4] {
            jobs.push((&a, pes, cfg(variant, Precond::None)));
        }
    }
    compile_cg_ahead(rt, &jobs);
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        let mut runs: Vec<CgRun> = Vec::new();
        for pes in [1, 2, 4] {
            let rt = rt(&a, pes);
            let solver = CgSolver::new(&rt, &a, cfg(variant, Precond::None)).unwrap();
            let first = solver.run().unwrap();
            let second = solver.run().unwrap();
            assert_same_cg_run(
                &second,
                &first,
                &format!("{variant:?}, {pes} PEs: two runs"),
            );
            runs.push(first);
        }
        let scale = runs[0].x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for r in &runs[1..] {
            assert!(r.iterations.abs_diff(runs[0].iterations) <= 2);
            assert!(max_abs_diff(&r.x, &runs[0].x) <= 1e-6 * scale);
        }
    }
}

/// One PE: each allreduce as one task (the global task sums the tiles'
/// partials block-wide, the default) and as a local sum then the reduce
/// give bitwise the same x, residual and iteration count; more tiles than
/// the sum's 128 lanes, so every level of its tree is used.
fn gpu_cg_one_pe_fused_and_two_task_allreduces_are_bitwise_identical() {
    let a = poisson2d(96).unwrap();
    let both = |variant, precond| {
        let c = CgConfig {
            tile_rows: Some(37),
            ..cfg(variant, precond)
        };
        let two = CgConfig {
            fuse_single_pe_allreduce: false,
            ..c.clone()
        };
        (c, two)
    };
    let mut jobs = Vec::new();
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        for precond in [Precond::None, Precond::Jacobi] {
            let (c, two) = both(variant, precond);
            jobs.extend([(&a, 1, c), (&a, 1, two)]);
        }
    }
    compile_cg_ahead(rt, &jobs);
    for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("{variant:?} {precond:?}");
            let (c, two) = both(variant, precond);
            let (f, _) = same_cg_runs(
                &rt(&a, 1),
                &a,
                (c, two),
                |fused, two| {
                    assert!(fused.tiles_per_pe()[0] > 128);
                    assert!(fused.graph().num_tasks() < two.graph().num_tasks());
                },
                &what,
            );
            assert!(f.converged, "{what}: {f:?}");
        }
    }
}

/// The next direction formed where it is read (SpMV, update, gathers; the
/// default) and by direction tiles give bitwise the same x, residual and
/// iteration count, on one PE and on 2 and 4 virtual PEs (gathers forming
/// `z + β p` for their receivers), with and without the preconditioner.
fn gpu_cg_fused_and_separate_directions_are_bitwise_identical() {
    let a = poisson2d(96).unwrap();
    let at = |precond, direction| CgConfig {
        tile_rows: Some(37),
        direction,
        ..cfg(CgVariant::Standard, precond)
    };
    let mut jobs = Vec::new();
    for pes in [1, 2, 4] {
        for precond in [Precond::None, Precond::Jacobi] {
            for direction in [DirectionForm::Fused, DirectionForm::Separate] {
                jobs.push((&a, pes, at(precond, direction)));
            }
        }
    }
    compile_cg_ahead(rt, &jobs);
    for pes in [1, 2, 4] {
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("{pes} PEs, {precond:?}");
            let with = |direction| at(precond, direction);
            let (f, _) = same_cg_runs(
                &rt(&a, pes),
                &a,
                (with(DirectionForm::Fused), with(DirectionForm::Separate)),
                |fused, separate| {
                    assert_eq!(fused.direction_fused(), Some(true));
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

/// The matrix packed for the SpMV (one word a nonzero where it fits), its
/// rows as patterns (a byte a row; the default where they fit) and plain
/// CSR give bitwise the same x, residual and iteration count
/// (`common::compact_forms_match_plain`): each of the SpMV's modes
/// (Standard with the direction fused and separate, single reduction), with and without the preconditioner, on 1,
/// 2 and 4 virtual PEs (ghost columns far from their rows), in 2D and 3D.
fn gpu_cg_packed_and_plain_matrices_are_bitwise_identical() {
    let mats = [
        poisson2d(96).unwrap(),
        poisson3d_aniso(20, [1.0, 0.5, 2.0]).unwrap(),
    ];
    let forms = [
        (CgVariant::Standard, DirectionForm::Fused),
        (CgVariant::Standard, DirectionForm::Separate),
        (CgVariant::SingleReduction, DirectionForm::Auto),
    ];
    let at = |variant, direction, precond, compact_matrix, row_patterns| CgConfig {
        tile_rows: Some(37),
        direction,
        compact_matrix,
        row_patterns,
        ..cfg(variant, precond)
    };
    let mut jobs = Vec::new();
    for a in &mats {
        for pes in [1, 2, 4] {
            for (variant, direction) in forms {
                for precond in [Precond::None, Precond::Jacobi] {
                    for (compact, patterns) in
                        [(true, false), (true, true), (false, false), (false, true)]
                    {
                        jobs.push((a, pes, at(variant, direction, precond, compact, patterns)));
                    }
                }
            }
        }
    }
    compile_cg_ahead(rt, &jobs);
    for a in &mats {
        for pes in [1, 2, 4] {
            for (variant, direction) in forms {
                for precond in [Precond::None, Precond::Jacobi] {
                    let what = format!(
                        "{} rows, {pes} PEs, {variant:?} {direction:?} {precond:?}",
                        a.n_rows()
                    );
                    let with =
                        |compact, patterns| at(variant, direction, precond, compact, patterns);
                    common::compact_forms_match_plain(&rt(a, pes), a, with, &what);
                }
            }
        }
    }
}

/// The SpMV storing the direction and applying x's steps (lean updates,
/// the default with the direction fused; the last step on the host) and
/// the update tiles doing it give bitwise the same x, residual and
/// iteration count (`common::lean_and_full_updates_match`: converged, and
/// stopped after an odd and an even count), on 1, 2 and 4 virtual PEs,
/// with and without the preconditioner, in 2D and 3D, with the rows as
/// patterns (the default) and as plain CSR.
fn gpu_cg_lean_and_full_updates_are_bitwise_identical() {
    each_form_case(
        |precond, compact, lean_update| CgConfig {
            lean_update,
            ..fused_cfg(precond, compact)
        },
        |rt, a, with, what| common::lean_and_full_updates_match(rt, a, with, what),
    );
}

/// The cases of the trials that compare two forms of a recurrence: 2D and
/// 3D, 1, 2 and 4 virtual PEs, with and without the preconditioner, the
/// rows as patterns and as plain CSR. `config(precond, compact, form)` is
/// a case's configuration in one form or the other; every case's two are
/// compiled ahead (`compile_cg_ahead`), then `f(rt, a, with, what)`
/// compares them (`with(form)`; `rt()` gives a runtime of the case's PEs).
fn each_form_case(
    config: impl Fn(Precond, bool, bool) -> CgConfig,
    f: impl Fn(&dyn Fn() -> Runtime, &Csr<f64>, &dyn Fn(bool) -> CgConfig, &str),
) {
    let mats = [
        poisson2d(96).unwrap(),
        poisson3d_aniso(20, [1.0, 0.5, 2.0]).unwrap(),
    ];
    let mut cases = Vec::new();
    for a in &mats {
        for pes in [1, 2, 4] {
            for precond in [Precond::None, Precond::Jacobi] {
                for compact in [true, false] {
                    cases.push((a, pes, precond, compact));
                }
            }
        }
    }
    let jobs: Vec<_> = cases
        .iter()
        .flat_map(|&(a, pes, precond, compact)| {
            [true, false].map(|form| (a, pes, config(precond, compact, form)))
        })
        .collect();
    compile_cg_ahead(rt, &jobs);
    for (a, pes, precond, compact) in cases {
        let what = format!(
            "{} rows, {pes} PEs, {precond:?}, compact {compact}",
            a.n_rows()
        );
        f(
            &|| rt(a, pes),
            a,
            &|form| config(precond, compact, form),
            &what,
        );
    }
}

/// Standard's configuration in those cases: tiles of 37 rows, the
/// direction fused.
fn fused_cfg(precond: Precond, compact: bool) -> CgConfig {
    CgConfig {
        tile_rows: Some(37),
        direction: DirectionForm::Fused,
        compact_matrix: compact,
        row_patterns: compact,
        ..cfg(CgVariant::Standard, precond)
    }
}

/// With lean updates, x's step as a task of its own after each SpMV tile
/// (`cg_xstep`, the default) and in the SpMV's row loop give bitwise the
/// same x, residual and iteration count
/// (`common::x_step_apart_and_in_spmv_match`: converged, and stopped after
/// an odd and an even count), on 1, 2 and 4 virtual PEs, with and without
/// the preconditioner, in 2D and 3D, with the rows as patterns and plain.
fn gpu_cg_x_step_apart_and_in_spmv_are_bitwise_identical() {
    each_form_case(
        |precond, compact, x_step_apart| CgConfig {
            x_step_apart: Some(x_step_apart),
            ..fused_cfg(precond, compact)
        },
        |rt, a, with, what| common::x_step_apart_and_in_spmv_match(rt, a, with, what),
    );
}

/// The single reduction's vector updates merged into the SpMV tiles (the
/// default) and axpy tiles that run first give bitwise the same x,
/// residual and iteration count (`common::merged_and_separate_updates_match`:
/// converged, and stopped after an odd and an even count), on 1, 2 and 4
/// virtual PEs (gathers forming z_{n+1} as the tiles do), with and without
/// the preconditioner, in 2D and 3D, with the rows as patterns and plain.
fn gpu_cg_merged_and_separate_single_reduction_updates_are_bitwise_identical() {
    each_form_case(
        |precond, compact, merge_updates| CgConfig {
            tile_rows: Some(37),
            compact_matrix: compact,
            row_patterns: compact,
            merge_updates,
            ..cfg(CgVariant::SingleReduction, precond)
        },
        |rt, a, with, what| common::merged_and_separate_updates_match(rt, a, with, what),
    );
}

/// The separate single reduction with z in one copy of v (r that copy
/// without the preconditioner) and x's step in a task of its own (the
/// defaults here) against z in two halves by parity and x's step in the
/// axpy tiles: bitwise the same x, residual and iteration count
/// (`common::single_and_double_buffer_match`: converged, and stopped after
/// an odd and an even count), on 1, 2 and 4 virtual PEs (gathers read the
/// one copy), with and without the preconditioner, in 2D and 3D, with the
/// rows as patterns and plain. (The emulator's trials take the two
/// changes one at a time.)
fn gpu_cg_single_reduction_one_copy_of_z_and_two_halves_are_bitwise_identical() {
    each_form_case(
        |precond, compact, new_form| CgConfig {
            tile_rows: Some(37),
            compact_matrix: compact,
            row_patterns: compact,
            merge_updates: false,
            single_buffer: new_form,
            x_step_apart: Some(new_form),
            ..cfg(CgVariant::SingleReduction, precond)
        },
        |rt, a, with, what| common::single_and_double_buffer_match(rt, a, with, what),
    );
}

/// Tiles small enough that every compute block runs two or more (the x
/// steps then follow an edge from their block's last SpMV, so they run
/// after it): x's step apart and in the SpMV (Standard) or the axpy tiles
/// (single reduction) give bitwise the same x, residual and iteration
/// count (`common::x_step_apart_and_in_spmv_match`), on 1 and 2 virtual
/// PEs.
fn gpu_cg_x_steps_on_blocks_with_several_tiles_are_bitwise_identical() {
    let a = poisson2d(96).unwrap();
    let at = |variant, form| CgConfig {
        tile_rows: Some(4),
        direction: DirectionForm::Fused,
        x_step_apart: Some(form),
        ..cfg(variant, Precond::None)
    };
    let mut jobs = Vec::new();
    for pes in [1, 2] {
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            jobs.extend([(&a, pes, at(variant, true)), (&a, pes, at(variant, false))]);
        }
    }
    compile_cg_ahead(rt, &jobs);
    for pes in [1, 2] {
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            let with = |form| at(variant, form);
            let what = format!("{variant:?}, {pes} PEs, tiles of 4 rows");
            {
                let rt = rt(&a, pes);
                let solver = CgSolver::new(&rt, &a, with(true)).unwrap();
                let (_, compute) = rt.blocks_per_pe(solver.graph().kinds()).unwrap();
                let tiles = solver.tiles_per_pe()[0];
                assert!(
                    tiles >= 2 * compute as usize,
                    "{what}: {tiles} tiles on {compute} compute blocks, fewer than two a block"
                );
            }
            common::x_step_apart_and_in_spmv_match(|| rt(&a, pes), &a, with, &what);
        }
    }
}

/// The vectors kept in L2 during the run (the default on a run of one PE
/// on a GPU) and not: bitwise the same run, still one launch and only stream
/// queries until it ends, and the set-aside L2 released after it (also
/// after a run of a plain graph through `Runtime::launch`). With two PEs
/// on the GPU the solver keeps none, and `RunOptions::l2_persist` is
/// refused there.
fn gpu_cg_vectors_kept_in_l2_change_nothing_but_speed() {
    use autarky::{L2Persist, RunOptions};
    let a = poisson2d(96).unwrap();
    let rt1 = rt(&a, 1);
    let (k, _) = same_cg_runs(
        &rt1,
        &a,
        (
            cfg(CgVariant::Standard, Precond::Jacobi),
            CgConfig {
                l2_persist_vectors: false,
                ..cfg(CgVariant::Standard, Precond::Jacobi)
            },
        ),
        |kept, plain| {
            let w = kept
                .l2_window()
                .expect("one PE on the GPU: the vectors are kept");
            assert!(w.bytes >= 5 * 8 * a.n_rows(), "{w:?}");
            assert!(plain.l2_window().is_none());
        },
        "vectors kept in L2 against not",
    );
    assert!(k.converged, "{k:?}");
    let calls = &k.report.as_ref().unwrap().driver_calls;
    assert_eq!(
        calls.first(),
        Some(&"cuLaunchCooperativeKernel"),
        "{calls:?}"
    );
    assert!(
        calls[1..].iter().all(|c| *c == "cuStreamQuery"),
        "{calls:?}"
    );
    let ctx = rt1.context().unwrap();
    ctx.bind().unwrap();
    assert_eq!(ctx.persisting_l2().unwrap(), 0, "released after the CG run");
    // A plain graph: the set-aside holds while the kernel runs, and is
    // released when the run is waited for.
    let empty = || autarky::TaskKind::new("empty", "__device__ void empty(autarky::TaskCtx&) {}");
    let mut g = autarky::Graph::new();
    let k = g.add_kind(empty()).unwrap();
    g.add_task_bytes(k, &[]);
    let buf = rt1.alloc_symmetric::<f64>(1 << 16).unwrap();
    let window = L2Persist {
        offset: buf.offset(),
        bytes: 8 << 16,
    };
    let run = rt1
        .launch(
            &g,
            RunOptions {
                l2_persist: Some(window),
                ..RunOptions::iterations(4)
            },
        )
        .unwrap();
    ctx.bind().unwrap();
    // (The driver sets aside whole units: 3.75 MiB on the H200.)
    let set = ctx.persisting_l2().unwrap();
    assert!(set >= 8 << 16, "set aside for the run: {set}");
    run.wait().unwrap();
    ctx.bind().unwrap();
    assert_eq!(ctx.persisting_l2().unwrap(), 0, "released after the run");
    // Two PEs on the GPU: none kept, and the option is refused.
    let rt2 = rt(&a, 2);
    let two = CgSolver::new(&rt2, &a, cfg(CgVariant::Standard, Precond::None)).unwrap();
    assert!(two.l2_window().is_none());
    let mut g2 = autarky::Graph::new();
    let k2 = g2.add_kind(empty()).unwrap();
    for pe in 0..2 {
        let t = g2.add_task_bytes(k2, &[]);
        g2.set_pe(t, pe);
    }
    match rt2.run_with(
        &g2,
        RunOptions {
            l2_persist: Some(window),
            ..RunOptions::iterations(1)
        },
    ) {
        Err(autarky::Error::InvalidConfig(m)) => assert!(m.contains("l2_persist"), "{m}"),
        other => panic!("{other:?}"),
    }
}

fn gpu_cg_indefinite_matrix_fails_at_the_reference_iteration() {
    let base = poisson2d(12).unwrap();
    let n = base.n_rows();
    let mut checked = 0;
    for shift in [0.3, 0.6, 1.0, 2.0] {
        let mut t = Vec::new();
        for i in 0..n {
            let (cols, vals) = base.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                t.push((i as u32, c, if c as usize == i { v - shift } else { v }));
            }
        }
        let a = Csr::from_triplets(n, n, t).unwrap();
        let rt = rt(&a, 2);
        for variant in [CgVariant::Standard, CgVariant::SingleReduction] {
            let opts = CgOptions {
                tol: TOL,
                max_iters: 10_000,
                variant,
            };
            let want = cg_reference(&a, &vec![1.0; n], &vec![0.0; n], &opts);
            let Err(CgError::NotPositiveDefinite { iteration, .. }) = want else {
                continue;
            };
            match CgSolver::new(&rt, &a, cfg(variant, Precond::None)).and_then(|s| s.run()) {
                Err(CgSolveError::Cg(CgError::NotPositiveDefinite { iteration: k, pap })) => {
                    assert_eq!(k, iteration, "shift {shift} {variant:?}");
                    assert!(pap <= 0.0);
                    checked += 1;
                }
                other => {
                    panic!("shift {shift} {variant:?}: expected NotPositiveDefinite, got {other:?}")
                }
            }
        }
    }
    assert!(checked > 0, "no shift made the reference break down");
}

fn gpu_cg_run_is_one_launch_and_only_stream_queries() {
    let a = poisson3d(20).unwrap();
    let rt = rt(&a, 2);
    let got = CgSolver::new(&rt, &a, cfg(CgVariant::SingleReduction, Precond::None))
        .unwrap()
        .run()
        .unwrap();
    let r = got.report.unwrap();
    assert_eq!(
        r.driver_calls.first(),
        Some(&"cuLaunchCooperativeKernel"),
        "{:?}",
        r.driver_calls
    );
    assert!(
        r.driver_calls[1..].iter().all(|c| *c == "cuStreamQuery"),
        "{:?}",
        r.driver_calls
    );
}
