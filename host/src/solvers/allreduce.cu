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
__device__ inline void local_put(autarky::TaskCtx& ctx, const AllreduceArgs& a) {
    __shared__ double sums[4];
    const unsigned n = ctx.iteration, w = a.width;
    if (threadIdx.x == 0) {
        const double* part = reinterpret_cast<const double*>(a.partials) + (unsigned long long)(n % 2) * a.contributors * w;
        double s[4] = {0, 0, 0, 0};
        for (unsigned c = 0; c < a.contributors; ++c)
            for (unsigned j = 0; j < w; ++j) s[j] += part[c * w + j];
        for (unsigned j = 0; j < 4; ++j) sums[j] = s[j];
    }
    __syncthreads();  // publish sums[] to the putting threads
    for (unsigned pe = threadIdx.x; pe < a.pes; pe += blockDim.x) {
        double* slots = ctx.peer(reinterpret_cast<double*>(a.slots), pe);
        double* row = slots + ((unsigned long long)(n % 2) * a.pes + ctx.pe) * w;
        for (unsigned j = 0; j < w; ++j) row[j] = sums[j];
    }
}

// The global sums, in PE order (identical on every PE). Every thread may
// call it; each computes the same values.
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
