//! CG as a task graph on the CPU emulator (CI): the same graph as on the GPU
//! — SpMV/vector tiles, halo gathers on comm workers, in-kernel allreduces
//! and stop — against the f64 reference `cg_reference`.

use std::time::Duration;

use autarky::solvers::cg::{
    cg_reference, heap_bytes_needed, poisson2d, poisson2d_aniso, poisson3d, poisson3d_aniso,
    random_spd, read_matrix_market, write_matrix_market, CgConfig, CgError, CgOptions, CgRun,
    CgSolveError, CgSolver, CgVariant, Csr, Precond,
};
use autarky::Runtime;

const TOL: f64 = 1e-8;

fn rt_for(a: &Csr<f64>, pes: u32) -> Runtime {
    Runtime::builder()
        .emulator(2)
        .pes(pes)
        .comm_blocks(2)
        .symmetric_heap_bytes(heap_bytes_needed(a, pes).unwrap())
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

fn within(got: u32, want: usize) -> bool {
    (got as usize).abs_diff(want) <= (want / 50).max(2)
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
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
        for (variant, precond, ref_variant) in [
            (CgVariant::Standard, Precond::None, CgVariant::Standard),
            (
                CgVariant::Standard,
                Precond::Jacobi,
                CgVariant::JacobiPreconditioned,
            ),
            (
                CgVariant::SingleReduction,
                Precond::None,
                CgVariant::SingleReduction,
            ),
            (
                CgVariant::SingleReduction,
                Precond::Jacobi,
                CgVariant::JacobiPreconditioned,
            ),
        ] {
            let want = reference(&a, ref_variant);
            let got = solve(&a, 2, cfg(variant, precond));
            let what = format!("{name} {variant:?} {precond:?}");
            assert!(got.converged, "{what}: {got:?}");
            assert!(got.rel_residual <= TOL, "{what}: {}", got.rel_residual);
            assert!(
                got.true_rel_residual <= 10.0 * TOL,
                "{what}: true residual {}",
                got.true_rel_residual
            );
            assert!(
                within(got.iterations, want.iterations),
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
