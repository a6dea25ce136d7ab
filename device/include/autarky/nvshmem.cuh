// NVSHMEM operations the megakernel uses when compiled with
// -DAUTARKY_NVSHMEM (Transport::Nvshmem). Defined in device/nvshmem_bridge.cu,
// linked in by nvJitLink (runtime/nvshmem/compile.rs); without
// AUTARKY_NVSHMEM this header declares nothing and no code path changes.
//
// Peers: a peer-table entry (RunParams::peer_heaps / peer_states) is the
// peer's address when it is load/store reachable (same process, CUDA IPC,
// or nvshmem_ptr non-null), and 0 when it is reachable only through
// NVSHMEM. Then the symmetric address is this PE's own (every PE's heap
// and state array come from one nvshmem_malloc, at the same address on
// every NVSHMEM PE; one autarky PE per NVSHMEM PE).
#pragma once

#ifdef AUTARKY_NVSHMEM
extern "C" {
__device__ void* autarky_nvshmem_ptr(const void* sym, int pe);
__device__ void autarky_nvshmem_putmem_nbi(void* dst, const void* src, unsigned long long bytes, int pe);
__device__ void autarky_nvshmem_putmem_nbi_block(void* dst, const void* src, unsigned long long bytes, int pe);
__device__ void autarky_nvshmem_putmem_signal_nbi(void* dst, const void* src, unsigned long long bytes,
                                                  unsigned long long* sig, unsigned long long value, int pe);
__device__ void autarky_nvshmem_signal_set(unsigned long long* sig, unsigned long long value, int pe);
__device__ void autarky_nvshmem_p64(void* dst, unsigned long long bits, int pe);
__device__ void autarky_nvshmem_p32(unsigned int* dst, unsigned int value, int pe);
__device__ void autarky_nvshmem_quiet();
__device__ void autarky_nvshmem_fence();
}
#endif
