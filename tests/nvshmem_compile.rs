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
//! Each test is reported as ignored, with the reason, when a piece is
//! absent; set AUTARKY_REQUIRE_NVSHMEM=1 (and AUTARKY_REQUIRE_NVRTC=1) to
//! fail instead.

mod common;

use autarky::runtime::nvrtc::Program;
use autarky::runtime::nvshmem::compile::{
    compile_and_link, compile_megakernel, compile_megakernel_relocatable,
};
use autarky::runtime::nvshmem::toolchain;
use autarky::runtime::source::{self, Variant};
use autarky::{Error, TaskKind};
use common::{nvrtc_trial, run_trials, trial, without_nvrtc};
use libtest_mimic::{Completion, Failed, Trial};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial(
            "megakernel_with_nvshmem_paths_compiles_and_calls_the_bridge_only_when_asked",
            megakernel_with_nvshmem_paths_compiles_and_calls_the_bridge_only_when_asked,
        ),
        nvrtc_trial(
            "the_scheduler_signals_aborts_and_quiets_over_nvshmem_even_when_no_body_puts",
            the_scheduler_signals_aborts_and_quiets_over_nvshmem_even_when_no_body_puts,
        ),
        nvshmem_trial(
            "a_kernel_calling_nvshmem_put_signal_links_with_libnvshmem_device_into_an_sm90_cubin",
            a_kernel_calling_nvshmem_put_signal_links_with_libnvshmem_device_into_an_sm90_cubin,
        ),
        trial(
            "the_register_cap_is_the_launch_bounds_cap_in_allocation_units",
            the_register_cap_is_the_launch_bounds_cap_in_allocation_units,
        ),
        nvshmem_trial(
            "the_linked_nvshmem_megakernel_fits_eight_blocks_per_sm_at_128_threads",
            the_linked_nvshmem_megakernel_fits_eight_blocks_per_sm_at_128_threads,
        ),
        nvshmem_trial(
            "the_nvshmem_megakernel_with_the_cg_kinds_links_into_an_sm90_cubin",
            the_nvshmem_megakernel_with_the_cg_kinds_links_into_an_sm90_cubin,
        ),
        nvshmem_trial(
            "the_nvshmem_megakernel_with_the_jacobi_kinds_links_into_an_sm90_cubin",
            the_nvshmem_megakernel_with_the_jacobi_kinds_links_into_an_sm90_cubin,
        ),
    ])
}

/// A trial that links with NVSHMEM's device library: needs NVRTC (see
/// [`nvrtc_trial`]) and NVSHMEM, nvJitLink and the CUDA headers. Without
/// the latter it is ignored, with what is missing and how to get it, or
/// failed when AUTARKY_REQUIRE_NVSHMEM=1.
fn nvshmem_trial(name: &str, body: fn()) -> Trial {
    Trial::ignorable_test(name, move || {
        if let Some(outcome) = without_nvrtc() {
            return outcome;
        }
        match toolchain() {
            Ok(_) => {
                body();
                Ok(Completion::Completed)
            }
            Err(Error::NvshmemNotFound { part, install, .. })
                if std::env::var("AUTARKY_REQUIRE_NVSHMEM").as_deref() != Ok("1") =>
            {
                Ok(Completion::ignored_with(format!("no {part}: {install}")))
            }
            Err(e) => Err(Failed::from(format!("AUTARKY_REQUIRE_NVSHMEM=1 but {e}"))),
        }
    })
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

/// The register count a cubin records for `function` (its `.nv.info`
/// section's `EIATTR_REGCOUNT` entries: format 0x04, attribute 0x2f, a
/// symbol index and the count). ELF64 little-endian, as NVRTC and
/// nvJitLink write it.
fn regcount(cubin: &[u8], function: &str) -> Option<u32> {
    let u16_at = |o: usize| u16::from_le_bytes(cubin[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(cubin[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(cubin[o..o + 8].try_into().unwrap()) as usize;
    let cstr = |o: usize| {
        let end = o + cubin[o..].iter().position(|&b| b == 0)?;
        std::str::from_utf8(&cubin[o..end]).ok()
    };
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    // (name, type, offset, size, link) of every section header.
    let secs: Vec<_> = (0..shnum)
        .map(|i| {
            let h = shoff + i * shentsize;
            (
                u32_at(h),
                u32_at(h + 4),
                u64_at(h + 0x18),
                u64_at(h + 0x20),
                u32_at(h + 0x28),
            )
        })
        .collect();
    let names = secs[shstrndx].2;
    let symtab = secs.iter().find(|s| s.1 == 2)?;
    let strtab = secs[symtab.4].2;
    let sym_name = |i: usize| cstr(strtab + u32_at(symtab.2 + i * 24));
    let info = secs
        .iter()
        .find(|s| cstr(names + s.0) == Some(".nv.info"))?;
    let (mut o, end) = (info.2, info.2 + info.3);
    while o + 2 <= end {
        let (format, attr) = (cubin[o], cubin[o + 1]);
        o += 2;
        match format {
            0x04 => {
                let len = u16_at(o);
                o += 2;
                if attr == 0x2f && sym_name(u32_at(o)) == Some(function) {
                    return Some(u32_at(o + 4) as u32);
                }
                o += len;
            }
            0x03 => o += 2,
            0x02 => o += 1,
            _ => {}
        }
    }
    None
}

/// NVRTC only: what CI can check without NVSHMEM.
fn megakernel_with_nvshmem_paths_compiles_and_calls_the_bridge_only_when_asked() {
    let with = compile_megakernel_relocatable(&kinds(), 256, 90).unwrap_or_else(|e| panic!("{e}"));
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
fn the_scheduler_signals_aborts_and_quiets_over_nvshmem_even_when_no_body_puts() {
    let noop = TaskKind::new("noop", "__device__ void noop(autarky::TaskCtx&) {}");
    let k = compile_megakernel_relocatable(&[noop], 128, 90).unwrap_or_else(|e| panic!("{e}"));
    for f in [
        "autarky_nvshmem_signal_set",
        "autarky_nvshmem_p32",
        "autarky_nvshmem_quiet",
    ] {
        assert!(contains(&k, f), "the scheduler does not call {f}");
    }
    assert!(!contains(&k, "autarky_nvshmem_putmem_nbi"), "no body puts");
}

fn a_kernel_calling_nvshmem_put_signal_links_with_libnvshmem_device_into_an_sm90_cubin() {
    let t = toolchain().unwrap_or_else(|e| panic!("{e}"));
    let src = r#"
        #include "autarky/nvshmem.cuh"
        extern "C" __global__ void probe(double* sym, const double* src, unsigned long long* sig, int pe) {
            autarky_nvshmem_putmem_signal_nbi(sym, src, 64, sig, 5ull, pe);
            double* p = (double*)autarky_nvshmem_ptr(sym, pe);
            if (p) p[0] = 1.0;
            autarky_nvshmem_quiet();
        }"#;
    let headers = source::headers("");
    let cubin = compile_and_link(
        &Program {
            name: "probe.cu",
            source: src,
            headers: &headers,
            options: vec!["--std=c++17".into()],
            arch: 90,
        },
        &t,
        128,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin");
    // The device state nvshmemx_cumodule_init fills, and the kernel.
    assert!(contains(&cubin, "nvshmemi_device_state_d"));
    assert!(contains(&cubin, "probe"));
}

/// The cap every relocatable unit is compiled under is ptxas's own for the
/// launch bounds, in its 8-registers-a-thread unit: a higher cap (96
/// threads: 85) lets a callee exceed the entry's real cap (80), which ptxas
/// refuses.
fn the_register_cap_is_the_launch_bounds_cap_in_allocation_units() {
    use autarky::runtime::nvshmem::compile::register_cap_for;
    assert_eq!(register_cap_for(128, 8), Some(64));
    assert_eq!(register_cap_for(96, 8), Some(80));
    assert_eq!(register_cap_for(64, 8), Some(128));
    assert_eq!(register_cap_for(32, 8), None);
    assert_eq!(register_cap_for(100, 8), Some(64)); // 4 warps
    assert_eq!(register_cap_for(128, 10), Some(48));
    assert_eq!(register_cap_for(256, 1), None);
    assert_eq!(register_cap_for(512, 1), Some(128));
    assert_eq!(register_cap_for(1024, 1), Some(64));
    assert_eq!(register_cap_for(0, 8), None);
}

/// The linked NVSHMEM megakernel keeps the plain build's register budget
/// at the default 128 threads (64: 8 blocks per SM). Relocatable callees
/// used to take 82–112 registers, which halved the grid (session 8: Jacobi
/// 16384² over NVSHMEM at 1.46× one process).
fn the_linked_nvshmem_megakernel_fits_eight_blocks_per_sm_at_128_threads() {
    let mut cg = autarky::solvers::cg::graph::cg_kinds();
    cg.push(autarky::solvers::allreduce::sum_kind());
    for (what, kinds) in [("jacobi", kinds()), ("cg", cg)] {
        let cubin = compile_megakernel(&kinds, 128, 90, Variant::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let regs = regcount(&cubin, source::MEGAKERNEL_NAME)
            .expect("the cubin records the kernel's register count");
        assert!(regs <= 64, "{what}: the NVSHMEM megakernel takes {regs} registers a thread at 128 threads (8 blocks per SM need <= 64)");
    }
}

/// CG's kinds under NVSHMEM: the gather's staged block put and the
/// allreduce's put_value paths compile and link.
fn the_nvshmem_megakernel_with_the_cg_kinds_links_into_an_sm90_cubin() {
    let mut kinds = autarky::solvers::cg::graph::cg_kinds();
    kinds.push(autarky::solvers::allreduce::sum_kind());
    let cubin =
        compile_megakernel(&kinds, 128, 90, Variant::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(cubin.starts_with(b"\x7fELF"));
    assert!(contains(&cubin, "nvshmemi_device_state_d"));
}

/// At 256 threads, at 96 (a register cap that is not 65536 / (threads × 8)),
/// and at 128 (the runtime's default, the block size
/// `Transport::Nvshmem` runs get unless told otherwise).
fn the_nvshmem_megakernel_with_the_jacobi_kinds_links_into_an_sm90_cubin() {
    for threads in [256, 128, 96] {
        let cubin = compile_megakernel(&kinds(), threads, 90, Variant::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cubin.starts_with(b"\x7fELF"));
        assert!(contains(&cubin, source::MEGAKERNEL_NAME));
        assert!(contains(&cubin, "nvshmemi_device_state_d"));
    }
}
