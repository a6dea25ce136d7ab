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
        ("cg_spmv", 136),
        ("cg_update", 120),
        ("cg_direction", 120),
        ("cg_axpy", 120),
        ("cg_gather", 64),
        ("cg_reduce", 72),
    ];
    assert_eq!(
        sizes,
        want.iter()
            .map(|(n, s)| (n.to_string(), *s))
            .collect::<Vec<_>>()
    );
}
