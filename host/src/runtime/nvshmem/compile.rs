//! Compiling device code that calls NVSHMEM: NVRTC with relocatable device
//! code, then nvJitLink with `libnvshmem_device.a`.
//!
//! NVSHMEM's device API is mostly inline functions in its headers that call
//! a few out-of-line functions (`nvshmemi_transfer_put_signal<…>`, …) and
//! read `nvshmemi_device_state_d`, all defined in `libnvshmem_device.a` (a
//! host archive whose objects embed relocatable cubins for sm_75 … sm_120).
//! The megakernel itself never includes NVSHMEM's headers: it calls the
//! `extern "C"` functions of device/nvshmem_bridge.cu (declared in
//! autarky/nvshmem.cuh), so it stays self-contained and compiles with NVRTC
//! alone (`-rdc=true -DAUTARKY_NVSHMEM`). The bridge is compiled separately
//! with NVSHMEM's and the CUDA include directories, and nvJitLink links
//! megakernel + bridge + the archive into the cubin the driver loads; the
//! host then runs `nvshmemx_cumodule_init` on the loaded module (host.rs),
//! which fills `nvshmemi_device_state_d`. The bridge's calls are not
//! inlined into the megakernel (no LTO): one call per put or signal.
//!
//! Two facts of NVSHMEM 3.x under NVRTC (found by linking, kept here so the
//! next reader does not rediscover them):
//!
//! 1. Only the point-to-point headers compile under NVRTC
//!    (`device/nvshmem_defines.h`, `device/nvshmemx_defines.h`; the
//!    collectives use `std::is_integral`, which NVRTC does not have), and
//!    they need `-default-device` (`nvshmem_tensor.h` has unannotated
//!    constructors). The bridge includes just those.
//! 2. libcu++ under NVRTC defines `uint64_t` as `unsigned long long`, but
//!    the archive was built by nvcc on LP64 Linux, where it is `unsigned
//!    long`: C++ names mangle differently and the link fails with
//!    "Undefined reference to `_Z28nvshmemi_transfer_put_signal…y…`". The
//!    bridge therefore gets an in-memory `cuda/std/cstdint` ([`CSTDINT_LP64`],
//!    which NVRTC prefers over the include path) with the LP64 types — and
//!    this is also why the bridge is its own unit: autarky/abi.h has
//!    `uint64_t` as `unsigned long long`, and one unit cannot have both.
//!
//! NVSHMEM's headers include `cuda_runtime.h`, `cuda_fp16.h`, `cuda_bf16.h`
//! and libcu++ (`cuda/std/…`), so the bridge needs the CUDA headers (the
//! megakernel does not): see find.rs for where they are looked for.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::find::{
    cuda_include_search_dirs, nvshmem_search_dirs, search_cuda_includes, search_nvshmem,
    NvshmemEnv, NvshmemInstall,
};
use super::jitlink::{link, Input, LinkInput};
use crate::graph::TaskKind;
use crate::runtime::nvrtc::{compile_cubin, Program};
use crate::runtime::source::{self, Variant, MEGAKERNEL_CU};

/// The bridge unit's source (device/nvshmem_bridge.cu).
pub const BRIDGE_CU: &str = include_str!("../../../../device/nvshmem_bridge.cu");
use crate::Error;

/// The include name NVRTC resolves to [`CSTDINT_LP64`].
pub const CSTDINT_NAME: &str = "cuda/std/cstdint";

/// libcu++'s `<cuda/std/cstdint>` with the LP64 integer types of the
/// compiler that built `libnvshmem_device.a` (see the module docs, 2).
/// The `cuda::std` names are brought in with libcu++'s own namespace macro,
/// as the original does.
pub const CSTDINT_LP64: &str = r#"// autarky: <cuda/std/cstdint> with LP64 types (see runtime/nvshmem/compile.rs).
#pragma once
#include <cuda/std/climits>
#include <cuda/std/version>
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef int8_t int_fast8_t;
typedef int16_t int_fast16_t;
typedef int32_t int_fast32_t;
typedef int64_t int_fast64_t;
typedef uint8_t uint_fast8_t;
typedef uint16_t uint_fast16_t;
typedef uint32_t uint_fast32_t;
typedef uint64_t uint_fast64_t;
typedef int8_t int_least8_t;
typedef int16_t int_least16_t;
typedef int32_t int_least32_t;
typedef int64_t int_least64_t;
typedef uint8_t uint_least8_t;
typedef uint16_t uint_least16_t;
typedef uint32_t uint_least32_t;
typedef uint64_t uint_least64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807L - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615UL
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define INTMAX_MIN INT64_MIN
#define INTMAX_MAX INT64_MAX
#define UINTMAX_MAX UINT64_MAX
#define PTRDIFF_MIN INT64_MIN
#define PTRDIFF_MAX INT64_MAX
#define SIZE_MAX UINT64_MAX
_LIBCUDACXX_BEGIN_NAMESPACE_STD
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
_LIBCUDACXX_END_NAMESPACE_STD
"#;

/// Everything needed to build NVSHMEM device code, found once.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The NVSHMEM installation (headers, device and host libraries).
    pub nvshmem: NvshmemInstall,
    /// `-I` directories with the CUDA headers NVSHMEM's headers include.
    pub cuda_includes: Vec<PathBuf>,
}

/// What is missing, every place looked, and how to install it (the fields
/// of [`Error::NvshmemNotFound`], kept cloneable for the cache).
type NotFound = (&'static str, Vec<String>, &'static str);

static TOOLCHAIN: OnceLock<Result<Toolchain, NotFound>> = OnceLock::new();

fn find_toolchain() -> Result<Toolchain, NotFound> {
    let env = NvshmemEnv::from_process();
    let nvshmem = search_nvshmem(&nvshmem_search_dirs(&env)).map_err(|looked| {
        (
            "NVSHMEM (lib/libnvshmem_host.so.3, lib/libnvshmem_device.a, include/nvshmem.h)",
            looked,
            "`pip install nvidia-nvshmem-cu13` (PyTorch's CUDA 13 wheels include it) and set AUTARKY_NVSHMEM_DIR to its site-packages/nvidia/nvshmem",
        )
    })?;
    let cuda_includes = search_cuda_includes(&cuda_include_search_dirs(&env)).map_err(|looked| {
        (
            "the CUDA headers NVSHMEM's device headers include (cuda_runtime.h, cuda_fp16.h, cuda/std)",
            looked,
            "install the CUDA toolkit headers, or `pip install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85` and set AUTARKY_CUDA_INCLUDE_DIR to its site-packages/nvidia/cu13/include",
        )
    })?;
    Ok(Toolchain {
        nvshmem,
        cuda_includes,
    })
}

/// Finds NVSHMEM and the CUDA headers (cached for the process; the error
/// lists every place looked and what to install).
pub fn toolchain() -> Result<Toolchain, Error> {
    TOOLCHAIN
        .get_or_init(find_toolchain)
        .clone()
        .map_err(|(part, looked, install)| Error::NvshmemNotFound {
            part,
            looked,
            install,
        })
}

/// NVRTC options that compile autarky device code with its NVSHMEM paths
/// (`-DAUTARKY_NVSHMEM`) as relocatable code, on top of its own options.
/// Needs NVRTC only: the megakernel includes no NVSHMEM header.
///
/// `--maxrregcount`: with `-rdc=true` every `__noinline__` function gets
/// its own register allocation, blind to the entry's launch bounds, and
/// the linked kernel needs the most any callee uses. ptxas refuses an entry
/// whose launch bounds cap registers below a callee's ("Entry function
/// 'autarky_megakernel' with max regcount of 64 calls function
/// '…try_claim_next…' with regcount of 94", at 128 threads, where the
/// bounds ask for 8 blocks per SM). Until session 8 this lifted the bounds
/// (`-DAUTARKY_MIN_BLOCKS=1`): the linked kernel then took 82–112
/// registers, 4 blocks per SM instead of 8, and Jacobi 16384² over NVSHMEM
/// ran at 1.46× one process (through puts and through the P2P mapping
/// alike). Every unit is now compiled under the bounds' own cap
/// ([`register_cap`]), so the bounds stand and the grid is the plain
/// build's.
pub fn megakernel_options(threads: u32) -> Vec<String> {
    let mut o = vec!["-rdc=true".to_string(), "-DAUTARKY_NVSHMEM".into()];
    o.extend(register_cap(threads).map(|cap| format!("--maxrregcount={cap}")));
    o
}

/// The registers per thread that the megakernel's launch bounds allow at
/// `threads` threads per block ([`register_cap_for`] with the blocks per SM
/// the bounds ask for: megakernel.cu's default, 8 at up to 128 threads and
/// 1 above, unless `AUTARKY_NVRTC_EXTRA` defines `AUTARKY_MIN_BLOCKS`, as it
/// may for experiments); `None` when that is no cap.
pub fn register_cap(threads: u32) -> Option<u32> {
    let extra = std::env::var("AUTARKY_NVRTC_EXTRA").unwrap_or_default();
    let min_blocks = extra
        .split_whitespace()
        .rev()
        .find_map(|o| o.strip_prefix("-DAUTARKY_MIN_BLOCKS=")?.parse().ok())
        .unwrap_or(if threads <= 128 { 8 } else { 1 });
    register_cap_for(threads, min_blocks)
}

/// ptxas's register cap for `__launch_bounds__(threads, min_blocks)` on
/// sm_90: 64 Ki registers per SM shared by `min_blocks` blocks of
/// `ceil(threads / 32)` warps, allocated 256 a warp (8 a thread), so the
/// cap is a multiple of 8 (96 threads, 8 blocks: 80, not 85). `None` when it
/// is 255 or more (no cap) or the arguments are 0.
pub fn register_cap_for(threads: u32, min_blocks: u32) -> Option<u32> {
    if threads == 0 || min_blocks == 0 {
        return None;
    }
    let per_thread = 65536 / (threads.div_ceil(32) * 32 * min_blocks);
    let cap = per_thread & !7;
    (cap < 255).then_some(cap)
}

/// NVRTC options for the bridge unit (under the megakernel's register
/// cap at `threads` threads per block: its functions are the kernel's
/// callees).
pub fn bridge_options(t: &Toolchain, threads: u32) -> Vec<String> {
    let mut o = vec![
        "--std=c++17".to_string(),
        "-rdc=true".into(),
        "-default-device".into(),
        format!("-I{}", t.nvshmem.include.display()),
    ];
    o.extend(t.cuda_includes.iter().map(|d| format!("-I{}", d.display())));
    o.extend(register_cap(threads).map(|cap| format!("--maxrregcount={cap}")));
    o
}

/// The bridge unit, compiled to a relocatable cubin for `sm_{arch}` at
/// `threads` threads per block.
pub fn compile_bridge(t: &Toolchain, arch: u32, threads: u32) -> Result<Vec<u8>, Error> {
    compile_cubin(&Program {
        name: "nvshmem_bridge.cu",
        source: BRIDGE_CU,
        headers: &[(CSTDINT_NAME, CSTDINT_LP64)],
        options: bridge_options(t, threads),
        arch,
    })
}

/// Compiles `p` (with [`megakernel_options`] added) to a relocatable cubin
/// and links it with the bridge and `libnvshmem_device.a` into a loadable
/// cubin for `sm_{p.arch}`.
pub fn compile_and_link(p: &Program, t: &Toolchain, threads: u32) -> Result<Vec<u8>, Error> {
    let mut options = p.options.clone();
    options.extend(megakernel_options(threads));
    let main = compile_cubin(&Program {
        name: p.name,
        source: p.source,
        headers: p.headers,
        options,
        arch: p.arch,
    })?;
    let bridge = compile_bridge(t, p.arch, threads)?;
    link(
        &[
            LinkInput::Data {
                kind: Input::Cubin,
                bytes: &main,
                name: p.name,
            },
            LinkInput::Data {
                kind: Input::Cubin,
                bytes: &bridge,
                name: "nvshmem_bridge.cu",
            },
            LinkInput::File {
                kind: Input::Library,
                path: &t.nvshmem.device_lib,
            },
        ],
        &[format!("-arch=sm_{}", p.arch)],
    )
}

/// The megakernel for a graph's kinds with the NVSHMEM paths compiled in,
/// linked with the bridge and NVSHMEM's device library.
pub fn compile_megakernel(
    kinds: &[TaskKind],
    threads: u32,
    arch: u32,
    variant: Variant,
) -> Result<Vec<u8>, Error> {
    let t = toolchain()?;
    let user = source::user_tasks_header(kinds);
    let headers = source::headers(&user);
    compile_and_link(
        &Program {
            name: "megakernel.cu",
            source: MEGAKERNEL_CU,
            headers: &headers,
            options: source::options_for(threads, variant),
            arch,
        },
        &t,
        threads,
    )
}

/// Compiles (NVRTC only, no linking) the megakernel for `kinds` with its
/// NVSHMEM paths, to a relocatable cubin: checks the device side of the
/// transport on machines without NVSHMEM.
pub fn compile_megakernel_relocatable(
    kinds: &[TaskKind],
    threads: u32,
    arch: u32,
) -> Result<Vec<u8>, Error> {
    let user = source::user_tasks_header(kinds);
    let headers = source::headers(&user);
    let mut options = source::options_for(threads, Variant::default());
    options.extend(megakernel_options(threads));
    compile_cubin(&Program {
        name: "megakernel.cu",
        source: MEGAKERNEL_CU,
        headers: &headers,
        options,
        arch,
    })
}
