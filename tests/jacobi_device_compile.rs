//! The Jacobi kinds compile with NVRTC alone, for sm_90, in every element
//! type and stencil (one source: `tile` dispatches on both at run time),
//! with the default options (run it with `AUTARKY_NVRTC_EXTRA=-DJACOBI_RY=16`
//! or `-DJACOBI_ZMARCH_MIN=1000000` to compile the sweep's experiment
//! knobs too). Reported as ignored, with the reason, when NVRTC is
//! absent; fails instead when AUTARKY_REQUIRE_NVRTC=1.

mod common;

use autarky::runtime::source;
use autarky::solvers::jacobi::jacobi_kinds;
use common::{nvrtc_trial, run_trials, trial};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "jacobi_kinds_compile_with_nvrtc_for_sm90",
            jacobi_kinds_compile_with_nvrtc_for_sm90,
        ),
        trial(
            "every_jacobi_kind_declares_the_argument_size_its_cuda_struct_has",
            every_jacobi_kind_declares_the_argument_size_its_cuda_struct_has,
        ),
    ])
}

/// The device does not check an argument struct's size against the bytes
/// the host gives: jacobi_kernels.cu static_asserts these sizes (checked
/// by NVRTC in the test above) and this test the host side.
fn every_jacobi_kind_declares_the_argument_size_its_cuda_struct_has() {
    let sizes: Vec<(String, usize)> = jacobi_kinds()
        .iter()
        .map(|k| (k.name().to_string(), k.arg_size()))
        .collect();
    let want = [
        ("jacobi_tile", 120),
        ("jacobi_pulse", 80),
        ("jacobi_check_local", 64),
        ("jacobi_check_global", 64),
    ];
    assert_eq!(
        sizes,
        want.iter()
            .map(|(n, s)| (n.to_string(), *s))
            .collect::<Vec<_>>()
    );
}

fn jacobi_kinds_compile_with_nvrtc_for_sm90() {
    let kinds = jacobi_kinds();
    assert_eq!(
        kinds[0].name(),
        "jacobi_tile",
        "the kernels' source comes first"
    );
    match source::compile(&kinds, 128, 90) {
        Ok(cubin) => assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin"),
        Err(e) => panic!("{e}"),
    }
}
