// Device allreduce of up to 4 doubles (autarky::solvers::allreduce; the
// protocol and the slot-reuse argument are in allreduce.rs). Registered
// with `allreduce_local`; `allreduce_sum` (and any custom global kind)
// come after it and use the helpers below.
//   allreduce_local  (comm) this PE's partials summed (a fixed lane tree),
//                    put into slots[n % 2][pe][*] of every PE;
//   allreduce_sum    (comm) slots[n % 2][0..P][*] summed in PE order into
//                    out[n % 2][*] of this PE.
// On a run of one PE whose global kind calls autarky_allreduce::sum with
// every thread (flags & FUSED), there is no local task: the global task
// sums the partials itself, one hand-off fewer.

struct AllreduceArgs {
    unsigned long long partials;  // double[2][contributors][width] (local)
    unsigned long long slots;     // double[2][pes][width] (symmetric)
    unsigned long long out;       // double[2][width] (local)
    unsigned contributors, pes, width, flags;  // flags: autarky_allreduce::FUSED
};

static_assert(sizeof(AllreduceArgs) == 40, "AllreduceArgs drifted from allreduce.rs");

namespace autarky_allreduce {

// AllreduceArgs::flags: no local task; the global task sums this PE's
// partials (a run of one PE; allreduce.rs, `AllreduceKinds::fuse_single_pe`).
constexpr unsigned FUSED = 1u;

// Sums W-wide records in[0..count) into s (every thread of the block calls
// it; every thread gets the sums) with a fixed shape that depends on the
// count only, never on the block's shape, so every GPU, block size and the
// emulator (allreduce.rs, `lane_tree_sum`) add in the same order:
//   1. lane v of SUM_LANES sums records v, v + SUM_LANES, v + 2 SUM_LANES, ...
//      in that order, from 0.0;
//   2. the lanes are combined pairwise: for off = SUM_LANES / 2, ..., 1,
//      lane v (< off) += lane v + off.
// (Until session 8 thread 0 added every record in turn, a 1024-long chain
// of dependent adds behind shared-memory loads: ~12.7 µs a local sum on
// the H200, twice per CG iteration. Here the loads of a lane are in flight
// together and the chain is count / SUM_LANES + 7 adds long.)
constexpr unsigned SUM_LANES = 128;

template <int W, int Q>
__device__ inline void lane_tree_sum(const double* in, unsigned count, double (*lanes)[4], double s[4]) {
    for (unsigned v = threadIdx.x; v < SUM_LANES; v += blockDim.x) {
        double a[W];
#pragma unroll
        for (int j = 0; j < W; ++j) a[j] = 0.0;
        unsigned c = v;
        // Q records of this lane in flight, then added in record order.
        for (; c + (Q - 1) * SUM_LANES < count; c += Q * SUM_LANES) {
            double x[Q][W];
#pragma unroll
            for (int q = 0; q < Q; ++q)
#pragma unroll
                for (int j = 0; j < W; ++j) x[q][j] = in[(unsigned long long)(c + q * SUM_LANES) * W + j];
#pragma unroll
            for (int q = 0; q < Q; ++q)
#pragma unroll
                for (int j = 0; j < W; ++j) a[j] += x[q][j];
        }
        for (; c < count; c += SUM_LANES)
#pragma unroll
            for (int j = 0; j < W; ++j) a[j] += in[(unsigned long long)c * W + j];
#pragma unroll
        for (int j = 0; j < W; ++j) lanes[v][j] = a[j];
    }
#ifdef AUTARKY_EXP_SUM_BARRIER_TREE
    for (unsigned off = SUM_LANES / 2; off > 0; off /= 2) {
#else
    // The levels above a warp through shared memory, the last five (off
    // 16 ... 1) in warp 0's registers by shuffles: the same pairs added in
    // the same order (lane v += lane v + off for v < off; a lane at or
    // above off holds what no later level reads), so bitwise the same
    // sums, with five barriers fewer. -DAUTARKY_EXP_SUM_BARRIER_TREE: every
    // level through shared memory (the A/B control).
    for (unsigned off = SUM_LANES / 2; off >= 32; off /= 2) {
#endif
        __syncthreads();  // the previous level's lanes, to every thread
        for (unsigned v = threadIdx.x; v < off; v += blockDim.x)
#pragma unroll
            for (int j = 0; j < W; ++j) lanes[v][j] += lanes[v + off][j];
    }
#ifndef AUTARKY_EXP_SUM_BARRIER_TREE
    __syncthreads();  // lanes 0..31, to warp 0
    if (threadIdx.x < 32) {
        double a[W];
#pragma unroll
        for (int j = 0; j < W; ++j) a[j] = lanes[threadIdx.x][j];
#pragma unroll
        for (unsigned off = 16; off > 0; off /= 2)
#pragma unroll
            for (int j = 0; j < W; ++j) a[j] += __shfl_down_sync(0xffffffffu, a[j], off);
        if (threadIdx.x == 0)
#pragma unroll
            for (int j = 0; j < W; ++j) lanes[0][j] = a[j];
    }
#endif
    __syncthreads();  // lane 0, to every thread
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j] = j < W ? lanes[0][j] : 0.0;
    __syncthreads();  // every thread has read lane 0 before the lanes are reused
}

// lane_tree_sum for a width known only at run time (1..4). Inlined: its
// in-flight records (up to 8 a lane) are many of the comm loop's spill
// instructions (nvdisasm -g: 180 of 384 local accesses at the sum in a CG
// megakernel), yet out of line (-DAUTARKY_EXP_SUM_NOINLINE, the A/B
// control) the call cost more than they do: CG 2D 1024² 36.8 against
// 38.4 µs an iteration (one H200, session 24; docs/performance.md).
#ifdef AUTARKY_EXP_SUM_NOINLINE
__device__ __noinline__
#else
__device__ inline
#endif
void lane_tree_sum_w(const double* in, unsigned count, unsigned w, double s[4]) {
    __shared__ double lanes[SUM_LANES][4];
    switch (w) {
        case 1: lane_tree_sum<1, 8>(in, count, lanes, s); break;
        case 2: lane_tree_sum<2, 4>(in, count, lanes, s); break;
        case 3: lane_tree_sum<3, 2>(in, count, lanes, s); break;
        default: lane_tree_sum<4, 2>(in, count, lanes, s); break;
    }
}

// This PE's partials of iteration n (their parity's half), summed by the
// lane tree into s: the local task's sum and a fused global task's.
__device__ inline void partials_sum(const AllreduceArgs& a, unsigned n, double s[4]) {
    const double* part =
        reinterpret_cast<const double*>(a.partials) + (unsigned long long)(n % 2) * a.contributors * a.width;
    lane_tree_sum_w(part, a.contributors, a.width, s);
}

// This PE's partials summed (partials_sum), then threads 0..pes-1 put the
// sums, one PE per thread.
__device__ inline void local_put(autarky::TaskCtx& ctx, const AllreduceArgs& a) {
    __shared__ double sums[4];
    const unsigned n = ctx.iteration, w = a.width;
    double s[4];
    partials_sum(a, n, s);
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

// The global sum for one thread (slots of every PE in PE order); not for
// a fused allreduce (use sum()).
__device__ inline void global_sum(autarky::TaskCtx& ctx, const AllreduceArgs& a, double s[4]) {
    const unsigned w = a.width;
    const double* slots = reinterpret_cast<const double*>(a.slots) + (unsigned long long)(ctx.iteration % 2) * a.pes * w;
    for (unsigned j = 0; j < 4; ++j) s[j] = 0;
    for (unsigned pe = 0; pe < a.pes; ++pe)
        for (unsigned j = 0; j < w; ++j) s[j] += slots[pe * w + j];
}

// The allreduce's sums, for its global task: every thread of the block
// calls it and gets them. Fused (one PE): this PE's partials by the lane
// tree, then 0 + each — what global_sum gives for one PE, bitwise — with
// no local task and no slots in between.
__device__ inline void sum(autarky::TaskCtx& ctx, const AllreduceArgs& a, double s[4]) {
    if (a.flags & FUSED) {
        partials_sum(a, ctx.iteration, s);
        for (unsigned j = 0; j < 4; ++j) s[j] = 0.0 + s[j];
        return;
    }
    global_sum(ctx, a, s);
}

}  // namespace autarky_allreduce

__device__ void allreduce_local(autarky::TaskCtx& ctx) {
    autarky_allreduce::local_put(ctx, ctx.args<AllreduceArgs>());
}

__device__ void allreduce_sum(autarky::TaskCtx& ctx) {
    const AllreduceArgs& a = ctx.args<AllreduceArgs>();
    double s[4];
    autarky_allreduce::sum(ctx, a, s);  // every thread
    if (threadIdx.x != 0) return;
    double* out = reinterpret_cast<double*>(a.out) + (ctx.iteration % 2) * a.width;
    for (unsigned j = 0; j < a.width; ++j) out[j] = s[j];
}
