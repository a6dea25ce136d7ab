//! The CG kinds (and the allreduce's) compile with NVRTC alone, for sm_90,
//! together and with the plain allreduce kind. The compile is reported as
//! ignored, with the reason, when NVRTC is absent; it fails instead when
//! AUTARKY_REQUIRE_NVRTC=1.

mod common;

use autarky::runtime::source;
use autarky::solvers::{allreduce, cg};
use common::{nvrtc_trial, run_trials, trial};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "cg_kinds_compile_with_nvrtc_for_sm90",
            cg_kinds_compile_with_nvrtc_for_sm90,
        ),
        trial(
            "every_cg_kind_declares_the_argument_size_its_cuda_struct_has",
            every_cg_kind_declares_the_argument_size_its_cuda_struct_has,
        ),
    ])
}

fn cg_kinds_compile_with_nvrtc_for_sm90() {
    let mut kinds = cg::graph::cg_kinds();
    assert_eq!(
        kinds[0].name(),
        "allreduce_local",
        "the helpers' source comes first"
    );
    kinds.push(allreduce::sum_kind());
    for threads in [128, 256] {
        match source::compile(&kinds, threads, 90) {
            Ok(cubin) => assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin"),
            Err(e) => panic!("{e}"),
        }
    }
    // Each recurrence's own graph registers only the kinds it runs (its
    // megakernel holds no other body): every such set compiles too —
    // Standard with the direction fused (x's step apart, the emulator's
    // default, and in the SpMV, what a GPU takes when the vectors exceed
    // its L2) and separate, single reduction with its updates merged and
    // separate (x's step apart, and in the axpy tiles), each with the
    // preconditioner.
    let a = cg::poisson2d(16).unwrap();
    let rt = autarky::Runtime::builder()
        .emulator(1)
        .symmetric_heap_bytes(8 * cg::graph::heap_bytes_needed(&a, 1).unwrap())
        .build()
        .unwrap();
    for (variant, direction, merge_updates, x_step_apart) in [
        (
            cg::CgVariant::Standard,
            cg::DirectionForm::Fused,
            true,
            None,
        ),
        (
            cg::CgVariant::Standard,
            cg::DirectionForm::Fused,
            true,
            Some(false),
        ),
        (
            cg::CgVariant::Standard,
            cg::DirectionForm::Separate,
            true,
            None,
        ),
        (
            cg::CgVariant::SingleReduction,
            cg::DirectionForm::Auto,
            true,
            None,
        ),
        (
            cg::CgVariant::SingleReduction,
            cg::DirectionForm::Auto,
            false,
            None,
        ),
        (
            cg::CgVariant::SingleReduction,
            cg::DirectionForm::Auto,
            false,
            Some(false),
        ),
    ] {
        let cfg = cg::CgConfig {
            variant,
            direction,
            merge_updates,
            x_step_apart,
            precond: cg::Precond::Jacobi,
            ..cg::CgConfig::new(1e-8, 10)
        };
        let solver = cg::CgSolver::new(&rt, &a, cfg).unwrap();
        let names: Vec<&str> = solver.graph().kinds().iter().map(|k| k.name()).collect();
        let what = format!(
            "{variant:?} {direction:?} merged {merge_updates} x apart {x_step_apart:?}: {names:?}"
        );
        assert_eq!(names.contains(&"cg_xstep"), solver.x_step_apart(), "{what}");
        assert!(
            names.contains(
                &if variant == cg::CgVariant::SingleReduction && merge_updates {
                    "cg_spmv_merged"
                } else {
                    "cg_spmv"
                }
            ),
            "{what}"
        );
        if let Err(e) = source::compile(solver.graph().kinds(), 128, 90) {
            panic!("{what}: {e}");
        }
    }
}

fn every_cg_kind_declares_the_argument_size_its_cuda_struct_has() {
    // The CUDA structs mirror the Rust ones field by field; kernels.cu and
    // allreduce.cu static_assert the same sizes, so NVRTC (the test above)
    // checks the device side and this test the host side.
    let sizes: Vec<(String, usize)> = cg::graph::cg_kinds()
        .iter()
        .map(|k| (k.name().to_string(), k.arg_size()))
        .collect();
    let want = [
        ("allreduce_local", 40),
        ("cg_spmv", 176),
        ("cg_spmv_merged", 176),
        ("cg_update", 120),
        ("cg_direction", 120),
        ("cg_axpy", 120),
        ("cg_xstep", 120),
        ("cg_gather", 112),
        ("cg_gather_merged", 112),
        ("cg_reduce", 72),
    ];
    assert_eq!(
        sizes,
        want.iter()
            .map(|(n, s)| (n.to_string(), *s))
            .collect::<Vec<_>>()
    );
}
