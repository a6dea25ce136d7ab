//! The Jacobi kinds compile with NVRTC alone, for sm_90, in every element
//! type and stencil (one source: `tile` dispatches on both at run time),
//! with the default options (run it with `AUTARKY_NVRTC_EXTRA=-DJACOBI_RY=16`
//! or `-DJACOBI_ZMARCH_MIN=1000000` to compile the sweep's experiment
//! knobs too). Reported as ignored, with the reason, when NVRTC is
//! absent; fails instead when AUTARKY_REQUIRE_NVRTC=1.

mod common;

use autarky::runtime::source;
use autarky::solvers::jacobi::jacobi_kinds;
use common::{nvrtc_trial, run_trials};

fn main() -> std::process::ExitCode {
    run_trials(vec![nvrtc_trial(
        "jacobi_kinds_compile_with_nvrtc_for_sm90",
        jacobi_kinds_compile_with_nvrtc_for_sm90,
    )])
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
