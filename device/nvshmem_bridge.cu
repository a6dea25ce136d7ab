// The only translation unit that includes NVSHMEM's headers (runtime/
// nvshmem/compile.rs compiles it with NVRTC, -rdc=true, NVSHMEM's and the
// CUDA include directories, and links it with the megakernel and
// libnvshmem_device.a). It exports the few NVSHMEM operations autarky uses
// as extern "C" functions with plain types, declared in autarky/nvshmem.cuh.
//
// Why a separate unit: the megakernel is self-contained (autarky/abi.h
// defines uint64_t as unsigned long long, no toolkit headers), while
// NVSHMEM's headers need the CUDA headers and, to match the archive's C++
// mangling, an LP64 uint64_t (unsigned long). extern "C" names do not
// mangle, and both types are 64-bit unsigned in PTX, so the two units link.
#include <device/nvshmem_defines.h>
#include <device/nvshmemx_defines.h>

extern "C" {

// NVSHMEM PE `pe`'s copy of the symmetric address `sym` as a pointer this
// thread can load from and store to, or null when `pe` is reachable only
// through NVSHMEM's transports (another node, or no P2P).
__device__ void* autarky_nvshmem_ptr(const void* sym, int pe) { return nvshmem_ptr(sym, pe); }

// Non-blocking put of `bytes` from local `src` to `dst` (a symmetric
// address, as this PE has it) on `pe`. Complete after autarky_nvshmem_quiet
// from the same thread.
__device__ void autarky_nvshmem_putmem_nbi(void* dst, const void* src, unsigned long long bytes,
                                           int pe) {
    nvshmem_putmem_nbi(dst, src, (size_t)bytes, pe);
}

// The same put by the whole block: every thread calls it with the same
// arguments (NVSHMEM synchronises the block inside). Over NVLink the
// block's threads share the copy (a thread-level put of a 16 KiB halo row
// is one thread's copy loop); over a network it is one transfer. Complete
// after autarky_nvshmem_quiet.
__device__ void autarky_nvshmem_putmem_nbi_block(void* dst, const void* src, unsigned long long bytes,
                                                 int pe) {
    nvshmemx_putmem_nbi_block(dst, src, (size_t)bytes, pe);
}

// Put, then set the 64-bit word `sig` (symmetric) on `pe` to `value`
// (NVSHMEM_SIGNAL_SET), delivered after the data.
__device__ void autarky_nvshmem_putmem_signal_nbi(void* dst, const void* src, unsigned long long bytes,
                                                  unsigned long long* sig, unsigned long long value,
                                                  int pe) {
    nvshmem_putmem_signal_nbi(dst, src, (size_t)bytes, reinterpret_cast<uint64_t*>(sig), (uint64_t)value,
                              NVSHMEM_SIGNAL_SET, pe);
}

// Sets the 64-bit word `sig` (symmetric) on `pe` to `value`; ordered after
// this thread's earlier puts to `pe` only with a fence or quiet before it.
__device__ void autarky_nvshmem_signal_set(unsigned long long* sig, unsigned long long value, int pe) {
    nvshmemx_signal_op(reinterpret_cast<uint64_t*>(sig), (uint64_t)value, NVSHMEM_SIGNAL_SET, pe);
}

// Stores the 8-byte `bits` at `dst` (symmetric) on `pe`; delivered after
// autarky_nvshmem_quiet from the same thread.
__device__ void autarky_nvshmem_p64(void* dst, unsigned long long bits, int pe) {
    nvshmem_uint64_p(reinterpret_cast<uint64_t*>(dst), (uint64_t)bits, pe);
}

// Stores the 4-byte `value` at `dst` (symmetric) on `pe` (the abort word of
// a peer's Status: autarky/wait.cuh raise_abort); delivered after
// autarky_nvshmem_quiet from the same thread.
__device__ void autarky_nvshmem_p32(unsigned int* dst, unsigned int value, int pe) {
    nvshmem_uint32_p(reinterpret_cast<uint32_t*>(dst), (uint32_t)value, pe);
}

// Completes every put this thread issued (data delivered at the target).
__device__ void autarky_nvshmem_quiet() { nvshmem_quiet(); }

// Orders this thread's earlier puts to each PE before its later ones.
__device__ void autarky_nvshmem_fence() { nvshmem_fence(); }

}  // extern "C"
