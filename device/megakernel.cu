// The megakernel: one cooperative launch per GPU runs the whole graph.
// The host passes one RunParams per local PE by value (virtual PEs share a
// GPU; each has its own block partition). Within a PE's partition, block
// roles are fixed at launch: blocks [0, comm_blocks) communicate, the rest
// compute; the first pin_compute_slots compute blocks run pinned lists.
#include "autarky/scheduler.cuh"
#include "autarky/user_tasks.cuh"  // generated: task bodies + autarky_dispatch

#ifndef AUTARKY_THREADS
#error "AUTARKY_THREADS (threads per block) must be defined by the host"
#endif
#ifndef AUTARKY_LOCAL_PES
#define AUTARKY_LOCAL_PES 1
#endif
// Blocks per SM the register allocation must allow (occupancy is what
// throughput of independent tasks scales with: see docs/performance.md).
#ifndef AUTARKY_MIN_BLOCKS
#define AUTARKY_MIN_BLOCKS (AUTARKY_THREADS <= 128 ? 8 : 1)
#endif

namespace autarky {
struct LaunchParams {
    RunParams pe[MAX_LOCAL_PES];
};
}  // namespace autarky

extern "C" __global__ void __launch_bounds__(AUTARKY_THREADS, AUTARKY_MIN_BLOCKS)
    autarky_megakernel(const __grid_constant__ autarky::LaunchParams lp) {
    using namespace autarky;
#if AUTARKY_LOCAL_PES == 1
    // One PE: a constant index, so every parameter is a constant-bank
    // operand (a dynamic index turns each access into a load).
    const RunParams& p = lp.pe[0];
#else
    // Every PE's partition has the same size (the host checks it).
    const uint32_t per_pe = lp.pe[0].comm_blocks + lp.pe[0].compute_blocks;
    const uint32_t local_pe = blockIdx.x / per_pe;
    const RunParams& p = lp.pe[local_pe < AUTARKY_LOCAL_PES ? local_pe : 0];
#endif
    const uint32_t block = blockIdx.x - p.block_base;
    if (p.abi_version != AUTARKY_ABI_VERSION) {
        // The layout may differ, but `abi_version` is the first field and
        // `status` is read only to report the mismatch.
        if (block == 0 && threadIdx.x == 0) {
            Who w{&p, 0, (uint32_t)Role::Compute};
            record_error(w, ErrorCode::AbiMismatch, TASK_NONE, 0, WaitKind::None, 0, AUTARKY_ABI_VERSION,
                         p.abi_version, 0);
        }
        return;
    }
    if (threadIdx.x == 0) {
        red_min_relaxed_gpu_u64(&status_of(p)->start_ns, globaltimer_ns());
        if (block == 0) status_of(p)->abi_compiled = AUTARKY_ABI_VERSION;
    }
    AUTARKY_TRACE_INIT();  // trace.cuh: before any append of this block
    // The scheduler's shared state: one object, live for the whole kernel
    // (see BlockShared).
    __shared__ BlockShared sh;
    if (threadIdx.x == 0) sh.report.iteration = 0;  // read by thread 0 only, after the role loop's first barrier
    if (threadIdx.x == 0) sh.report.limit = 0xffffffffu;  // finish_at lowers it (any thread, after that barrier)
    // A pinned compute block's cache of its list; a comm block's copy of its
    // pinned tasks' arguments.
    [[maybe_unused]] __shared__ PinnedCache pinned_cache;
    const bool comm = block < p.comm_blocks;
    const Who w{&p, block, comm ? (uint32_t)Role::Comm : (uint32_t)Role::Compute};
    if (comm) {
        comm_loop(w, sh, pinned_cache);
#ifndef AUTARKY_NO_PINNED
    } else if (block - p.comm_blocks < p.pin_compute_slots) {
        const uint32_t* pin = reinterpret_cast<const uint32_t*>(p.pinned);
        const uint32_t s = block - p.comm_blocks;
        const uint32_t slots = p.pin_compute_slots + p.pin_comm_slots;
        pinned_loop(w, sh, pinned_cache, pin + slots + 1 + pin[s], pin[s + 1] - pin[s]);
#endif
    } else {
        compute_loop(w, sh);
    }
    block_exit(w);
    AUTARKY_TRACE_FLUSH(p);  // trace.cuh: after block_exit's barrier, the block's last append
}

// Writes sizeof/offsetof of every ABI struct (generated table) so the host
// can compare them with Rust's layout.
extern "C" __global__ void autarky_abi_probe(unsigned long long* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) autarky_abi_layout(out);
}
