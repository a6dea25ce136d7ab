// The megakernel: one cooperative launch per GPU runs the whole graph.
// The host passes RunParams by value; block roles are fixed at launch:
// blocks [0, comm_blocks) communicate, the rest compute.
#include "autarky/scheduler.cuh"
#include "autarky/user_tasks.cuh"  // generated: task bodies + autarky_dispatch

#ifndef AUTARKY_THREADS
#error "AUTARKY_THREADS (threads per block) must be defined by the host"
#endif

extern "C" __global__ void __launch_bounds__(AUTARKY_THREADS)
    autarky_megakernel(const __grid_constant__ autarky::RunParams p) {
    using namespace autarky;
    if (p.abi_version != AUTARKY_ABI_VERSION) {
        // The layout may differ, but `abi_version` is the first field and
        // `status` is read only to report the mismatch.
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            Who w{&p, 0, (uint32_t)Role::Compute};
            record_error(w, ErrorCode::AbiMismatch, 0xffffffffu, 0, WaitKind::None, 0, AUTARKY_ABI_VERSION,
                         p.abi_version, 0);
        }
        return;
    }
    if (threadIdx.x == 0) {
        red_min_relaxed_gpu_u64(&status_of(p)->start_ns, globaltimer_ns());
        if (blockIdx.x == 0) status_of(p)->abi_compiled = AUTARKY_ABI_VERSION;
    }
    // The scheduler's shared state: one object, live for the whole kernel
    // (see BlockShared).
    __shared__ BlockShared sh;
    const bool comm = blockIdx.x < p.comm_blocks;
    const Who w{&p, blockIdx.x, comm ? (uint32_t)Role::Comm : (uint32_t)Role::Compute};
    if (comm) comm_loop(w);
    else compute_loop(w, sh);
    block_exit(w);
}

// Writes sizeof/offsetof of every ABI struct (generated table) so the host
// can compare them with Rust's layout.
extern "C" __global__ void autarky_abi_probe(unsigned long long* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) autarky_abi_layout(out);
}
