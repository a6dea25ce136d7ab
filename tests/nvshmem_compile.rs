//! The NVSHMEM transport's device side compiles and links (feature
//! `nvshmem`; no GPU needed).
//!
//! - The megakernel with `-DAUTARKY_NVSHMEM` (the Jacobi kinds and a kind
//!   using `ctx.put`) compiles to relocatable code with NVRTC alone, and
//!   calls the bridge; without the define it does not.
//! - Where NVSHMEM, nvJitLink and the CUDA headers are installed, the bridge
//!   (`nvshmem_putmem_signal_nbi`, `nvshmem_ptr`, …) and the megakernel link
//!   with `libnvshmem_device.a` into an sm_90 cubin that carries NVSHMEM's
//!   device state for `nvshmemx_cumodule_init`.
//!
//! Each test skips with a printed reason when a piece is absent; set
//! AUTARKY_REQUIRE_NVSHMEM=1 (and AUTARKY_REQUIRE_NVRTC=1) to fail instead.

use autarky::runtime::nvrtc::Program;
use autarky::runtime::nvshmem::compile::{
    compile_and_link, compile_megakernel, compile_megakernel_relocatable,
};
use autarky::runtime::nvshmem::toolchain;
use autarky::runtime::source::{self, Variant};
use autarky::{Error, TaskKind};

fn require(var: &str) -> bool {
    std::env::var(var).as_deref() == Ok("1")
}

fn kinds() -> Vec<TaskKind> {
    vec![
        TaskKind::new("jacobi_tile", autarky::solvers::jacobi::KERNELS),
        TaskKind::new("jacobi_pulse", "").comm(),
        TaskKind::new("jacobi_check_local", "").comm(),
        TaskKind::new("jacobi_check_global", "")
            .comm()
            .may_finish_early(),
        TaskKind::new(
            "sender",
            r#"struct SendArgs { double* sym; double* staging; unsigned n; unsigned to; };
               __device__ void sender(autarky::TaskCtx& ctx) {
                   const SendArgs& a = ctx.args<SendArgs>();
               #ifdef AUTARKY_NVSHMEM
                   if (threadIdx.x == 0) {
                       ctx.put(a.sym, a.staging, a.n, a.to);
                       ctx.put_value(a.sym + a.n, 1.0, a.to);
                       ctx.quiet();
                   }
               #else
                   if (threadIdx.x == 0) *ctx.peer(a.sym, a.to) = 1.0;
               #endif
               }"#,
        )
        .arg_size_bytes(24),
    ]
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// NVRTC only: what CI can check without NVSHMEM.
#[test]
fn megakernel_with_nvshmem_paths_compiles_and_calls_the_bridge_only_when_asked() {
    let with = match compile_megakernel_relocatable(&kinds(), 256, 90) {
        Ok(c) => c,
        Err(Error::NvrtcNotFound { looked }) if !require("AUTARKY_REQUIRE_NVRTC") => {
            eprintln!("SKIP: NVRTC not found (looked in {looked:?})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert!(with.starts_with(b"\x7fELF"));
    for f in [
        "autarky_nvshmem_signal_set",
        "autarky_nvshmem_putmem_nbi",
        "autarky_nvshmem_putmem_nbi_block",
        "autarky_nvshmem_p64",
        "autarky_nvshmem_p32",
        "autarky_nvshmem_quiet",
    ] {
        assert!(contains(&with, f), "the NVSHMEM build does not call {f}");
    }
    let without = source::compile(&kinds(), 256, 90).unwrap();
    assert!(
        !contains(&without, "autarky_nvshmem"),
        "the default build must not reach the NVSHMEM bridge"
    );
}

/// The scheduler's own NVSHMEM paths, in a megakernel whose bodies call no
/// NVSHMEM: completion signals to NVSHMEM-only consumers (signal_set), the
/// abort put into their Status (p32) and the quiet at block exit. At 128
/// threads per block, the default, whose launch bounds once capped the
/// entry's registers below its relocatable callees' (a ptxas error).
#[test]
fn the_scheduler_signals_aborts_and_quiets_over_nvshmem_even_when_no_body_puts() {
    let noop = TaskKind::new("noop", "__device__ void noop(autarky::TaskCtx&) {}");
    let k = match compile_megakernel_relocatable(&[noop], 128, 90) {
        Ok(c) => c,
        Err(Error::NvrtcNotFound { looked }) if !require("AUTARKY_REQUIRE_NVRTC") => {
            eprintln!("SKIP: NVRTC not found (looked in {looked:?})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for f in [
        "autarky_nvshmem_signal_set",
        "autarky_nvshmem_p32",
        "autarky_nvshmem_quiet",
    ] {
        assert!(contains(&k, f), "the scheduler does not call {f}");
    }
    assert!(!contains(&k, "autarky_nvshmem_putmem_nbi"), "no body puts");
}

/// Skips (returning None) when NVSHMEM, nvJitLink or the CUDA headers are
/// missing, naming what and where it looked.
fn skip_unless_found(r: Result<Vec<u8>, Error>, test: &str) -> Option<Vec<u8>> {
    match r {
        Ok(c) => Some(c),
        Err(Error::NvshmemNotFound {
            part,
            looked,
            install,
        }) if !require("AUTARKY_REQUIRE_NVSHMEM") => {
            eprintln!("SKIP {test}: {part} not found (looked in {looked:?}); {install}");
            None
        }
        Err(Error::NvrtcNotFound { looked }) if !require("AUTARKY_REQUIRE_NVRTC") => {
            eprintln!("SKIP {test}: NVRTC not found (looked in {looked:?})");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_kernel_calling_nvshmem_put_signal_links_with_libnvshmem_device_into_an_sm90_cubin() {
    let t = match toolchain() {
        Ok(t) => t,
        Err(e) => {
            skip_unless_found(Err(e), "link");
            return;
        }
    };
    let src = r#"
        #include "autarky/nvshmem.cuh"
        extern "C" __global__ void probe(double* sym, const double* src, unsigned long long* sig, int pe) {
            autarky_nvshmem_putmem_signal_nbi(sym, src, 64, sig, 5ull, pe);
            double* p = (double*)autarky_nvshmem_ptr(sym, pe);
            if (p) p[0] = 1.0;
            autarky_nvshmem_quiet();
        }"#;
    let headers = source::headers("");
    let Some(cubin) = skip_unless_found(
        compile_and_link(
            &Program {
                name: "probe.cu",
                source: src,
                headers: &headers,
                options: vec!["--std=c++17".into()],
                arch: 90,
            },
            &t,
        ),
        "link",
    ) else {
        return;
    };
    assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin");
    // The device state nvshmemx_cumodule_init fills, and the kernel.
    assert!(contains(&cubin, "nvshmemi_device_state_d"));
    assert!(contains(&cubin, "probe"));
}

/// CG's kinds under NVSHMEM: the gather's staged block put and the
/// allreduce's put_value paths compile and link.
#[test]
fn the_nvshmem_megakernel_with_the_cg_kinds_links_into_an_sm90_cubin() {
    let mut kinds = autarky::solvers::cg::graph::cg_kinds();
    kinds.push(autarky::solvers::allreduce::sum_kind());
    let Some(cubin) = skip_unless_found(
        compile_megakernel(&kinds, 128, 90, Variant::default()),
        "megakernel link",
    ) else {
        return;
    };
    assert!(cubin.starts_with(b"\x7fELF"));
    assert!(contains(&cubin, "nvshmemi_device_state_d"));
}

/// At 256 threads, and at 128 (the runtime's default, the block size
/// `Transport::Nvshmem` runs get unless told otherwise).
#[test]
fn the_nvshmem_megakernel_with_the_jacobi_kinds_links_into_an_sm90_cubin() {
    for threads in [256, 128] {
        let Some(cubin) = skip_unless_found(
            compile_megakernel(&kinds(), threads, 90, Variant::default()),
            "megakernel link",
        ) else {
            return;
        };
        assert!(cubin.starts_with(b"\x7fELF"));
        assert!(contains(&cubin, source::MEGAKERNEL_NAME));
        assert!(contains(&cubin, "nvshmemi_device_state_d"));
    }
}
