// Memory-order primitives. Every flag access in autarky goes through these:
// the name carries the operation, the order and the scope. Scope `gpu` for
// words read on the same GPU; `sys` for words that cross GPUs or are read by
// the host (host-mapped memory). Every asm has a "memory" clobber so the
// compiler neither caches nor reorders ordinary accesses across it.
// Generic addressing throughout: pointers may be device or host-mapped memory.
#pragma once
#include "autarky/abi.h"

// The scheduler's hot path is force-inlined (each call boundary costs
// register saves around the call); -DAUTARKY_NO_FORCE_INLINE leaves the
// choice to the compiler, for measurements.
#ifdef AUTARKY_NO_FORCE_INLINE
#define AUTARKY_HOT __device__ inline
#else
#define AUTARKY_HOT __device__ __forceinline__
#endif

namespace autarky {

// ---- loads --------------------------------------------------------------
__device__ __forceinline__ uint32_t ld_relaxed_gpu_u32(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t ld_acquire_gpu_u32(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_relaxed_gpu_u64(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_acquire_gpu_u64(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t ld_relaxed_sys_u32(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_relaxed_sys_u64(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_acquire_sys_u64(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// ---- stores -------------------------------------------------------------
__device__ __forceinline__ void st_relaxed_gpu_u32(uint32_t* p, uint32_t v) {
    asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release_gpu_u32(uint32_t* p, uint32_t v) {
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_gpu_u64(uint64_t* p, uint64_t v) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_release_gpu_u64(uint64_t* p, uint64_t v) {
    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_release_sys_u32(uint32_t* p, uint32_t v) {
    asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release_sys_u64(uint64_t* p, uint64_t v) {
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys_u64(uint64_t* p, uint64_t v) {
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys_u32(uint32_t* p, uint32_t v) {
    asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// ---- read-modify-write --------------------------------------------------
__device__ __forceinline__ void red_min_relaxed_gpu_u32(uint32_t* p, uint32_t v) {
    asm volatile("red.relaxed.gpu.min.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t atom_add_relaxed_gpu_u32(uint32_t* p, uint32_t v) {
    uint32_t old;
    asm volatile("atom.relaxed.gpu.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ uint32_t atom_add_acq_rel_gpu_u32(uint32_t* p, uint32_t v) {
    uint32_t old;
    asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ uint64_t atom_add_acq_rel_gpu_u64(uint64_t* p, uint64_t v) {
    uint64_t old;
    asm volatile("atom.acq_rel.gpu.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
__device__ __forceinline__ uint64_t atom_add_relaxed_gpu_u64(uint64_t* p, uint64_t v) {
    uint64_t old;
    asm volatile("atom.relaxed.gpu.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
__device__ __forceinline__ uint32_t atom_cas_relaxed_gpu_u32(uint32_t* p, uint32_t cmp, uint32_t v) {
    uint32_t old;
    asm volatile("atom.relaxed.gpu.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(cmp), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ uint64_t atom_cas_acquire_gpu_u64(uint64_t* p, uint64_t cmp, uint64_t v) {
    uint64_t old;
    asm volatile("atom.acquire.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(cmp), "l"(v) : "memory");
    return old;
}
__device__ __forceinline__ void red_max_relaxed_gpu_u64(uint64_t* p, uint64_t v) {
    asm volatile("red.relaxed.gpu.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// On a .global address (every caller's word is in device memory): a
// generic red compiles to ATOM with a predicate and a shared-window
// fallback (QSPC, an ATOMS loop) whose branch waits for the predicate;
// .global is a REDG, issued and not waited for. (Session 42:
// -DAUTARKY_EXP_RED_GENERIC is the generic control, for A/B timing.)
__device__ __forceinline__ void red_add_relaxed_gpu_u64(uint64_t* p, uint64_t v) {
#ifdef AUTARKY_EXP_RED_GENERIC
    asm volatile("red.relaxed.gpu.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "l"(v) : "memory");
#endif
}
__device__ __forceinline__ void red_min_relaxed_gpu_u64(uint64_t* p, uint64_t v) {
    asm volatile("red.relaxed.gpu.min.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// ---- shared memory by held address -----------------------------------------
// A shared word by its shared-window address (__cvta_generic_to_shared),
// which a loop holds in a register: from a reference the compiler rebuilds
// the address from an S2UR of SR_CgaCtaId at each access. Volatile: in
// program order with the barriers around them.
__device__ __forceinline__ uint32_t held_shared_address(const void* p) {
    uint32_t at = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    asm volatile("mov.u32 %0, %0;" : "+r"(at));  // not rebuilt at each use
    return at;
}
__device__ __forceinline__ void st_shared_u32(uint32_t at, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t at) {
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(at) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_shared_u64(uint32_t at) {
    uint64_t v;
    asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(at) : "memory");
    return v;
}

// ---- fences -------------------------------------------------------------
__device__ __forceinline__ void fence_sc_gpu() { asm volatile("fence.sc.gpu;" ::: "memory"); }
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ void fence_sc_sys() { asm volatile("fence.sc.sys;" ::: "memory"); }
__device__ __forceinline__ void fence_acq_rel_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
// Acquire-only fences (PTX 8.6+, sm_90): after relaxed polls saw every
// awaited release, they make this an acquire pattern. On the H200 they are
// an L1 invalidate alone (CCTL.IVALL); fence.acq_rel adds a MEMBAR that
// waits for this thread's own outstanding stores — in a pinned block, the
// release of its previous instance, still on its way to L2 (ncu, Jacobi
// 256²: 4 % of the pinned path's samples on that wait).
// Before sm_90 there is no fence.acquire: the acq_rel fence (correct, only
// slower). AUTARKY_EXP_ACQ_REL_FENCE forces it on sm_90 as well, for
// same-process A/B timing only.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(AUTARKY_EXP_ACQ_REL_FENCE)
__device__ __forceinline__ void fence_acquire_gpu() { asm volatile("fence.acquire.gpu;" ::: "memory"); }
__device__ __forceinline__ void fence_acquire_sys() { asm volatile("fence.acquire.sys;" ::: "memory"); }
// A release fence without the acquire half (the acq_rel fence's CCTL.IVALL).
__device__ __forceinline__ void fence_release_gpu() { asm volatile("fence.release.gpu;" ::: "memory"); }
#else
__device__ __forceinline__ void fence_release_gpu() { fence_acq_rel_gpu(); }
__device__ __forceinline__ void fence_acquire_gpu() { fence_acq_rel_gpu(); }
__device__ __forceinline__ void fence_acquire_sys() { fence_acq_rel_sys(); }
#endif

// ---- time ---------------------------------------------------------------
// %globaltimer: nanoseconds, coarse (updates every ~1 µs on Hopper), the
// same clock on every SM.
__device__ __forceinline__ uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ void nanosleep_ns(uint32_t ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns) : "memory"); }

// Wraparound-safe "a >= b" for monotonic u32 counters that never drift more
// than 2^31 apart (NCCL's idiom).
__device__ __forceinline__ bool geq_u32(uint32_t a, uint32_t b) { return (uint32_t)(a - b) <= (0xffffffffu >> 1); }

}  // namespace autarky
