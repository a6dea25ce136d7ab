// Device allreduce of up to 4 doubles (autarky::solvers::allreduce; the
// protocol and the slot-reuse argument are in allreduce.rs). Registered
// with `allreduce_local`; `allreduce_sum` (and any custom global kind)
// come after it and use the helpers below.
//   allreduce_local  (comm) this PE's partials summed in contributor order,
//                    put into slots[n % 2][pe][*] of every PE;
//   allreduce_sum    (comm) slots[n % 2][0..P][*] summed in PE order into
//                    out[n % 2][*] of this PE.

struct AllreduceArgs {
    unsigned long long partials;  // double[2][contributors][width] (local)
    unsigned long long slots;     // double[2][pes][width] (symmetric)
    unsigned long long out;       // double[2][width] (local)
    unsigned contributors, pes, width, pad;
};

static_assert(sizeof(AllreduceArgs) == 40, "AllreduceArgs drifted from allreduce.rs");

namespace autarky_allreduce {

// Thread 0 sums the partials (contributor order: deterministic); threads
// 0..pes-1 then put the sums, one PE per thread.
// Sums W-wide records in[0..count) in record order into s (thread 0's
// result; every thread of the block calls it). The block stages a chunk
// of records in shared memory with coalesced loads, then thread 0 adds it
// up: the same order of additions as a plain loop over the records (so
// bitwise the same sums as the emulator's), without one L2 round trip per
// record on thread 0 (a thousand contributors cost ~40 µs that way).
template <int W>
__device__ inline void ordered_sum(const double* in, unsigned count, double* chunk, unsigned chunk_len, double s[4]) {
    const unsigned per = chunk_len / W;  // records per chunk
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (unsigned c0 = 0; c0 < count; c0 += per) {
        const unsigned m = min(per, count - c0) * W;
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x) chunk[i] = in[(unsigned long long)c0 * W + i];
        __syncthreads();  // the chunk, to thread 0
        if (threadIdx.x == 0) {
#pragma unroll 4
            for (unsigned i = 0; i < m; i += W) {
                a0 += chunk[i];
                if (W > 1) a1 += chunk[i + 1];
                if (W > 2) a2 += chunk[i + 2];
                if (W > 3) a3 += chunk[i + 3];
            }
        }
        __syncthreads();  // thread 0 is done with the chunk before it is refilled
    }
    s[0] = a0;
    s[1] = a1;
    s[2] = a2;
    s[3] = a3;
}

// ordered_sum for a width known only at run time (1..4).
__device__ inline void ordered_sum_w(const double* in, unsigned count, unsigned w, double s[4]) {
    __shared__ double chunk[480];  // divisible by 1, 2, 3 and 4
    switch (w) {
        case 1: ordered_sum<1>(in, count, chunk, 480, s); break;
        case 2: ordered_sum<2>(in, count, chunk, 480, s); break;
        case 3: ordered_sum<3>(in, count, chunk, 480, s); break;
        default: ordered_sum<4>(in, count, chunk, 480, s); break;
    }
}

__device__ inline void local_put(autarky::TaskCtx& ctx, const AllreduceArgs& a) {
    __shared__ double sums[4];
    const unsigned n = ctx.iteration, w = a.width;
    const double* part = reinterpret_cast<const double*>(a.partials) + (unsigned long long)(n % 2) * a.contributors * w;
    double s[4];
    ordered_sum_w(part, a.contributors, w, s);
    if (threadIdx.x == 0)
        for (unsigned j = 0; j < 4; ++j) sums[j] = s[j];
    __syncthreads();  // publish sums[] to the putting threads
    const unsigned long long at = ((unsigned long long)(n % 2) * a.pes + ctx.pe) * w;
    for (unsigned pe = threadIdx.x; pe < a.pes; pe += blockDim.x) {
#ifdef AUTARKY_NVSHMEM
        // A store, or an NVSHMEM put for a peer reachable only so.
        double* row = reinterpret_cast<double*>(a.slots) + at;
        for (unsigned j = 0; j < w; ++j) ctx.put_value(row + j, sums[j], pe);
#else
        double* row = ctx.peer(reinterpret_cast<double*>(a.slots), pe) + at;
        for (unsigned j = 0; j < w; ++j) row[j] = sums[j];
#endif
    }
#ifdef AUTARKY_NVSHMEM
    if (threadIdx.x < a.pes) ctx.quiet();  // the puts land before the completion signals
#endif
}

__device__ inline void global_sum(autarky::TaskCtx& ctx, const AllreduceArgs& a, double s[4]) {
    const unsigned w = a.width;
    const double* slots = reinterpret_cast<const double*>(a.slots) + (unsigned long long)(ctx.iteration % 2) * a.pes * w;
    for (unsigned j = 0; j < 4; ++j) s[j] = 0;
    for (unsigned pe = 0; pe < a.pes; ++pe)
        for (unsigned j = 0; j < w; ++j) s[j] += slots[pe * w + j];
}

}  // namespace autarky_allreduce

__device__ void allreduce_local(autarky::TaskCtx& ctx) {
    autarky_allreduce::local_put(ctx, ctx.args<AllreduceArgs>());
}

__device__ void allreduce_sum(autarky::TaskCtx& ctx) {
    const AllreduceArgs& a = ctx.args<AllreduceArgs>();
    if (threadIdx.x != 0) return;
    double s[4];
    autarky_allreduce::global_sum(ctx, a, s);
    double* out = reinterpret_cast<double*>(a.out) + (ctx.iteration % 2) * a.width;
    for (unsigned j = 0; j < a.width; ++j) out[j] = s[j];
}
