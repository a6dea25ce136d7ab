// CG task bodies (autarky::solvers::cg::graph; the graph, the ordering
// argument and the scalar slots are documented there). Registered with
// the first CG kind a graph uses, after `allreduce_local` (whose source
// defines AllreduceArgs and autarky_allreduce::sum); a graph registers
// only the kinds its recurrence runs:
//   cg_spmv       a tile of rows: y = A v (v: the double-buffered vector,
//                 owned entries then ghosts), plus the tile's partials;
//                 with the direction fused (Standard, mode 2), the owned
//                 entries of p_n are formed as they are read, z + b p_{n-1};
//   cg_update     (Standard) x += a p, r -= a q, z = r / diag, partials;
//                 fused: p_n = z + b p_{n-1} formed and stored first;
//   cg_direction  (Standard, not fused) p_{n+1} = z + b p_n into the other
//                 half of v;
//   cg_xstep      (x's step apart) Standard, lean: x += a_{n-1} p_{n-1};
//                 single reduction, separate: x += a_n p_n; run by the SpMV
//                 tile's block after it, in the reduce's shadow;
//   cg_axpy       (single reduction, separate) p, s, x, r updates, z_{n+1}
//                 into v;
//   cg_spmv_merged  (single reduction, merged; CgSpmv mode 3) cg_spmv's
//                 product, with cg_axpy's updates applied to the tile's
//                 rows and z_{n+1} formed where it is read (no cg_axpy);
//   cg_gather     (comm) a send list of v's next half (fused: formed from
//                 z + b p_n), stored into the receiver's ghost block of its
//                 copy of v;
//   cg_gather_merged  (comm) the same, z_{n+1} formed as cg_spmv_merged
//                 forms it;
//   cg_reduce     (comm) the allreduce's global sum, then the recurrence's
//                 scalars, the stop test (finish_at) and the breakdown
//                 checks (fail) — the same on every PE.
// All sums have a fixed shape (stored order within a row, fixed lane
// trees, block_sum, tile order, PE order): bitwise reproducible.

struct CgSpmv {
    unsigned long long row_ptr, col, val;  // local CSR (row_ptr: u64, col: u32)
    unsigned long long v;                  // double[2][vlen] (symmetric)
    unsigned long long y;                  // output: q (Standard) or w
    unsigned long long r;                  // r (single-reduction partials)
    unsigned long long partials;           // allreduce partials of this PE
    unsigned long long vlen;
    unsigned lo, hi;  // rows
    unsigned lanes;   // threads per row (power of two <= 32)
    unsigned tile, tiles;
    unsigned mode;  // 0: Standard; 1: single reduction; 2: Standard, direction fused;
                    // 3: single reduction, the vector updates merged (cg_axpy's)
    unsigned width;
    unsigned owned;  // entries of v owned by this PE (the rest are ghosts)
    unsigned long long z;        // fused: z (r without preconditioner)
    unsigned long long scalars;  // fused: this PE's scalars (beta)
    unsigned compact;  // 1: row_ptr is u32, col the packed words, val the table (compact.rs);
                       // 2: row_ptr is a byte a row (its pattern), col the patterns' words
    unsigned lean;  // mode 2: this SpMV stores p_n (CgVec::lean); 1: and applies x += a_{n-1} p_{n-1}
                    // (2: cg_xstep applies it)
    unsigned long long pattern_ptr;  // compact 2: u32 offsets of the patterns' words
    unsigned long long x;            // lean and mode 3: x
    // Mode 3 (single reduction, merged): r, y (w) and s hold two halves
    // each, `stride` entries apart (by parity); p, dinv (precond) one.
    unsigned long long p, s, dinv, stride;
    unsigned precond;
    unsigned pad;
};

struct CgVec {
    unsigned long long x, r, y, v, p, s, z, dinv, scalars, partials, vlen;
    unsigned lo, hi, tile, tiles, precond, width;
    unsigned fused;  // fused: p_n = z + b p_{n-1} (no cg_direction), stored by cg_update
    unsigned lean;   // fused and lean: cg_spmv stores p_n and updates x; cg_update does r, z only;
                     // single reduction: cg_xstep applies x's step, not cg_axpy
};

// Entries a thread moves per round of a gather (cg_gather).
#ifndef CG_GATHER_BATCH
#define CG_GATHER_BATCH 4
#endif

struct CgGather {
    unsigned long long v;    // double[2][vlen] (symmetric), this PE's copy
    unsigned long long idx;  // unsigned[count]: owned indices to send
    unsigned long long vlen;
    unsigned long long stage;  // double[count] (symmetric): values staged for an NVSHMEM put
    unsigned count, dest, to_pe;
    unsigned fused;              // 1: send z + b p_n (v[n % 2] holds p_n) instead of v[(n + 1) % 2]; 2: below
    unsigned long long z;        // fused: z (r without preconditioner)
    unsigned long long scalars;  // fused: this PE's scalars (beta); merged: alpha, beta
    // fused == 2 (single reduction, merged): send z_{n+1} formed from
    // r_n, w_n, s_{n-1} (halves `stride` apart) as the SpMV forms it.
    unsigned long long r, w, s, dinv, stride;
    unsigned precond;
    unsigned pad;
};

struct CgReduce {
    AllreduceArgs ar;
    unsigned long long scalars;  // double[16] of this PE
    double b_norm, tol;
    unsigned stage;  // 1: p^T A p -> alpha; 2: rho, |r| -> stop, beta; 3: single reduction
    unsigned precond;
};

// The Rust mirrors (graph.rs) have these sizes too (tests/cg_device_compile.rs).
static_assert(sizeof(CgSpmv) == 176, "CgSpmv drifted from graph.rs SpmvArgs");
static_assert(sizeof(CgVec) == 120, "CgVec drifted from graph.rs VecArgs");
static_assert(sizeof(CgGather) == 112, "CgGather drifted from graph.rs GatherArgs");
static_assert(sizeof(CgReduce) == 72, "CgReduce drifted from graph.rs ReduceArgs");

namespace cg {

// Scalar slots (graph.rs `slot`).
enum : unsigned { ALPHA = 0, BETA = 2, RHO = 4, LAST_RR = 6, FAIL_VALUE = 7, FAIL_WHAT = 8, FAIL_ITER = 9 };
// graph.rs NOT_POSITIVE_DEFINITE / NON_FINITE.
enum : unsigned { NOT_SPD = 0xC60001u, NON_FINITE = 0xC60002u };

__device__ __forceinline__ bool finite(double v) { return v - v == 0.0; }

// Block-wide sum of one double per thread (fixed shape: deterministic).
__device__ inline double block_sum(double v) {
    __shared__ double warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();  // publish warp_sums
    double s = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += warp_sums[w];
    __syncthreads();  // warp_sums is reused by the next call
    return s;
}

// The tile's partials (acc[0..width), width <= N). The loop over N is
// unrolled so that acc[] stays in registers: indexed by the run-time
// width it lived in local memory, and every row's `acc[0] += ...` in the
// SpMV and update loops was a local load and store (ptxas, nvdisasm -g).
// -DAUTARKY_EXP_ACC_LOCAL: the former loop (the A/B control).
template <unsigned N>
__device__ inline void put_partials(unsigned n, const unsigned long long partials, unsigned tile, unsigned tiles,
                                    unsigned width, const double (&acc)[N]) {
#ifdef AUTARKY_EXP_ACC_LOCAL
    const double* accp = acc;
    for (unsigned j = 0; j < width; ++j) {
        const double s = block_sum(accp[j]);
        if (threadIdx.x == 0)
            reinterpret_cast<double*>(partials)[((unsigned long long)(n % 2) * tiles + tile) * width + j] = s;
    }
#else
#pragma unroll
    for (unsigned j = 0; j < N; ++j) {
        if (j < width) {
            const double s = block_sum(acc[j]);
            if (threadIdx.x == 0)
                reinterpret_cast<double*>(partials)[((unsigned long long)(n % 2) * tiles + tile) * width + j] = s;
        }
    }
#endif
}

// The next search direction, z + b p: the one expression cg_direction, and
// with the direction fused cg_spmv, cg_update and cg_gather, evaluate (an
// explicit fma, so every place rounds the same way: the fused and unfused
// graphs give bitwise the same iterates).
__device__ __forceinline__ double direction(double z, double beta, double p) { return fma(beta, p, z); }

// Single reduction: one row's step of iteration n (cg_axpy's, and with the
// updates merged the SpMV's and the gather's, all through these: bitwise
// the same iterates either way). s_n = w_n + b s_{n-1}, r_{n+1} = r_n - a
// s_n, z_{n+1} = M^-1 r_{n+1}.
__device__ __forceinline__ double sr_s(double w, double beta, double s_old) { return fma(beta, s_old, w); }
__device__ __forceinline__ double sr_r(double r, double alpha, double s) { return fma(-alpha, s, r); }
__device__ __forceinline__ double sr_z(double r, bool precond, const double* dinv, unsigned i) {
    return precond ? r * dinv[i] : r;
}

// Merged single reduction: z_{n+1} of owned entry c, formed from the
// values of iteration n its owner's tile reads too (r_n, w_n in the halves
// of parity n, s_{n-1} in the other), before that tile has applied them:
// the tile writes the other halves (graph.rs, ordering).
struct SrNext {
    const double *r, *w, *s_old, *dinv;
    double alpha, beta;
    bool precond;
    __device__ __forceinline__ double operator()(unsigned c) const {
        return sr_z(sr_r(r[c], alpha, sr_s(w[c], beta, s_old[c])), precond, dinv, c);
    }
};

__device__ inline void fail(autarky::TaskCtx& ctx, double* sc, unsigned code, unsigned what, double value, unsigned k) {
    sc[FAIL_VALUE] = value;
    sc[FAIL_WHAT] = (double)what;
    sc[FAIL_ITER] = (double)k;
    ctx.fail(code);
}

}  // namespace cg

namespace cg {

// The matrix's form (CgSpmv::compact).
enum : int { PLAIN = 0, PACKED = 1, PATTERNS = 2 };

// A row's sum of products, this lane's share (entries l, l + lanes, ...),
// in stored order. Packed (compact.rs): one word a nonzero, column = row +
// (word >> 8, signed), value = table[word & 255] — the same values and
// columns as plain CSR, so bitwise the same sums. Patterns (compact.rs,
// RowPatterns): the row's byte picks its words among a few hundred at
// most, read through the read-only cache (they stay in L1): the vector
// loads wait on no DRAM load but the byte.
template <int Form, typename V>
__device__ __forceinline__ double row_sum(const CgSpmv& a, unsigned row, unsigned l, unsigned lanes, V vec) {
    double s = 0;
    if (Form == PATTERNS) {
        const unsigned char* ids = reinterpret_cast<const unsigned char*>(a.row_ptr);
        const unsigned* pp = reinterpret_cast<const unsigned*>(a.pattern_ptr);
        const unsigned* w = reinterpret_cast<const unsigned*>(a.col);
        const double* table = reinterpret_cast<const double*>(a.val);
        const unsigned id = ids[row];
        const unsigned begin = __ldg(pp + id), end = __ldg(pp + id + 1);
        for (unsigned k = begin + l; k < end; k += lanes) {
            const unsigned word = __ldg(w + k);
            s += __ldg(table + (word & 255u)) * vec(row + (unsigned)((int)word >> 8));
        }
    } else if (Form == PACKED) {
        const unsigned* rp = reinterpret_cast<const unsigned*>(a.row_ptr);
        const unsigned* w = reinterpret_cast<const unsigned*>(a.col);
        const double* table = reinterpret_cast<const double*>(a.val);
        for (unsigned k = rp[row] + l; k < rp[row + 1]; k += lanes) {
            const unsigned word = w[k];
            s += __ldg(table + (word & 255u)) * vec(row + (unsigned)((int)word >> 8));
        }
    } else {
        const unsigned long long* rp = reinterpret_cast<const unsigned long long*>(a.row_ptr);
        const unsigned* ci = reinterpret_cast<const unsigned*>(a.col);
        const double* va = reinterpret_cast<const double*>(a.val);
        for (unsigned long long k = rp[row] + l; k < rp[row + 1]; k += lanes) s += va[k] * vec(ci[k]);
    }
    return s;
}

}  // namespace cg

// Single reduction with the vector updates merged (mode 3; graph.rs): the
// tile applies iteration n's step to its rows (cg_axpy's: p, s, x,
// r_{n+1}) and multiplies z_{n+1}, whose owned entries it forms from r_n,
// w_n and s_{n-1} where it reads them (SrNext) and whose ghosts the
// owners' gathers formed alike into v[(n + 1) % 2]. r, w, s: the halves of
// parity n hold r_n, w_n (read) and s_n (written here); the others
// r_{n+1}, w_{n+1} (written here) and s_{n-1} (read).
template <int Form>
__device__ __forceinline__ void cg_spmv_merged_as(autarky::TaskCtx& ctx) {
    const CgSpmv& a = ctx.args<CgSpmv>();
    const unsigned n = ctx.iteration;
    const unsigned cur = n % 2, nxt = (n + 1) % 2;
    const double* v = reinterpret_cast<const double*>(a.v) + nxt * a.vlen;
    const unsigned lanes = a.lanes, groups = blockDim.x / lanes;
    const unsigned g = threadIdx.x / lanes, l = threadIdx.x % lanes;
    double acc[3] = {0, 0, 0};
    const double* sc = reinterpret_cast<const double*>(a.scalars);
    const cg::SrNext next{reinterpret_cast<const double*>(a.r) + cur * a.stride,
                          reinterpret_cast<const double*>(a.y) + cur * a.stride,
                          reinterpret_cast<const double*>(a.s) + nxt * a.stride,
                          reinterpret_cast<const double*>(a.dinv),
                          sc[cg::ALPHA + cur],
                          sc[cg::BETA + cur],
                          a.precond != 0};
    const unsigned owned = a.owned;
    auto z1 = [&](unsigned c) { return c < owned ? next(c) : v[c]; };
    for (unsigned base = a.lo; base < a.hi; base += groups) {
        const unsigned row = base + g;
        double s = row < a.hi ? cg::row_sum<Form>(a, row, l, lanes, z1) : 0.0;
        for (unsigned o = lanes / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, lanes);
        if (row < a.hi && l == 0) {
            // The other halves and p, x through the arguments (a pinned
            // block's copy in shared memory), not held across the loop:
            // fewer registers live in the row sum.
            const unsigned long long to = (unsigned long long)nxt * a.stride + row;
            const unsigned long long from = (unsigned long long)cur * a.stride + row;
            double* p = reinterpret_cast<double*>(a.p) + row;
            double* x = reinterpret_cast<double*>(a.x) + row;
            const double r0 = next.r[row];
            const double si = cg::sr_s(next.w[row], next.beta, next.s_old[row]);
            const double pi = cg::direction(cg::sr_z(r0, next.precond, next.dinv, row), next.beta, *p);
            const double ri = cg::sr_r(r0, next.alpha, si);
            const double zi = cg::sr_z(ri, next.precond, next.dinv, row);
            *p = pi;
            reinterpret_cast<double*>(a.s)[from] = si;
            *x = fma(next.alpha, pi, *x);
            reinterpret_cast<double*>(a.r)[to] = ri;
            reinterpret_cast<double*>(a.y)[to] = s;
            acc[0] += ri * zi;
            acc[1] += s * zi;
            acc[2] += ri * ri;
        }
    }
    cg::put_partials(n, a.partials, a.tile, a.tiles, a.width, acc);
}

// Sub-warp CSR: `lanes` threads per row, all threads of the block loop the
// same number of times (shuffles need the whole warp).
template <int Form>
__device__ void cg_spmv_as(autarky::TaskCtx& ctx) {
    const CgSpmv& a = ctx.args<CgSpmv>();
    const unsigned n = ctx.iteration;
    const unsigned par = a.mode == 1 ? (n + 1) % 2 : n % 2;
    const double* v = reinterpret_cast<const double*>(a.v) + par * a.vlen;
    double* y = reinterpret_cast<double*>(a.y);
    const double* r = reinterpret_cast<const double*>(a.r);
    const unsigned lanes = a.lanes, groups = blockDim.x / lanes;
    const unsigned g = threadIdx.x / lanes, l = threadIdx.x % lanes;
    double acc[3] = {0, 0, 0};
    if (a.mode == 2 && n > 0) {
        // The direction fused: p_n's owned entries are z + b p_{n-1} (p_{n-1}
        // in the other half of v, b = beta_{n-1}); its ghosts arrived in
        // v[n % 2] from the owners' gathers. (Iteration 0 reads p_0 from
        // v[0], written on the host.)
        const double* pold = reinterpret_cast<const double*>(a.v) + ((n + 1) % 2) * a.vlen;
        const double* z = reinterpret_cast<const double*>(a.z);
        const double beta = reinterpret_cast<const double*>(a.scalars)[cg::BETA + (n + 1) % 2];
        const unsigned owned = a.owned;
        auto p = [&](unsigned c) { return c < owned ? cg::direction(z[c], beta, pold[c]) : v[c]; };
        // Lean (CgVec::lean): the row's p_n is stored into v[n % 2] here
        // (no SpMV of n reads that half's owned entries) and x takes the
        // previous iteration's step, x += a_{n-1} p_{n-1} (p_{n-1} is the
        // row's pold, loaded anyway) — the update tiles then touch only r
        // and z. x's line is prefetched into L1 before the row's sum, so
        // its round trip overlaps the row's without a register held across
        // it (measured against loading x there and loading it after the
        // sum: docs/performance.md, session 23); alpha is read where it is
        // used (an L1 hit after the first row; held across the loop it
        // cost the megakernel ~60 bytes of spills; control
        // -DCG_LEAN_ALPHA_EARLY). The step of the last iteration is
        // applied on the host after the run (graph.rs, collect).
        // x's step here (lean == 1) or in cg_xstep (2: CgConfig::x_step_apart).
        const bool lean = a.lean != 0, xin = a.lean == 1;
        double* pn = const_cast<double*>(v);
        double* x = reinterpret_cast<double*>(a.x);
#ifdef CG_LEAN_ALPHA_EARLY
        const double alpha = lean ? reinterpret_cast<const double*>(a.scalars)[cg::ALPHA + (n + 1) % 2] : 0.0;
#endif
        for (unsigned base = a.lo; base < a.hi; base += groups) {
            const unsigned row = base + g;
            const bool own = row < a.hi && l == 0;
            if (xin && own) asm volatile("prefetch.global.L1 [%0];" ::"l"(x + row));
            double s = row < a.hi ? cg::row_sum<Form>(a, row, l, lanes, p) : 0.0;
            for (unsigned o = lanes / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, lanes);
            if (own) {
                y[row] = s;
                const double po = pold[row];
                const double pi = cg::direction(z[row], beta, po);
                if (lean) pn[row] = pi;
                if (xin) {
#ifndef CG_LEAN_ALPHA_EARLY
                    const double alpha = reinterpret_cast<const double*>(a.scalars)[cg::ALPHA + (n + 1) % 2];
#endif
                    x[row] = fma(alpha, po, x[row]);
                }
                acc[0] += pi * s;
            }
        }
        cg::put_partials(n, a.partials, a.tile, a.tiles, a.width, acc);
        return;
    }
    for (unsigned base = a.lo; base < a.hi; base += groups) {
        const unsigned row = base + g;
        double s = row < a.hi ? cg::row_sum<Form>(a, row, l, lanes, [&](unsigned c) { return v[c]; }) : 0.0;
        for (unsigned o = lanes / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, lanes);
        if (row < a.hi && l == 0) {
            y[row] = s;
            const double vi = v[row];
            if (a.mode != 1) {
                acc[0] += vi * s;
            } else {
                // (r may be v itself: CgConfig::single_buffer.)
                const double ri = r == v ? vi : r[row];
                acc[0] += ri * vi;
                acc[1] += s * vi;
                acc[2] += ri * ri;
            }
        }
    }
    cg::put_partials(n, a.partials, a.tile, a.tiles, a.width, acc);
}

// A kind of its own (graph.rs kinds_used): only the merged recurrence's
// megakernel holds it.
__device__ void cg_spmv_merged(autarky::TaskCtx& ctx) {
    switch (ctx.args<CgSpmv>().compact) {
        case cg::PATTERNS: cg_spmv_merged_as<cg::PATTERNS>(ctx); break;
        case cg::PACKED: cg_spmv_merged_as<cg::PACKED>(ctx); break;
        default: cg_spmv_merged_as<cg::PLAIN>(ctx); break;
    }
}

__device__ void cg_spmv(autarky::TaskCtx& ctx) {
    switch (ctx.args<CgSpmv>().compact) {
        case cg::PATTERNS: cg_spmv_as<cg::PATTERNS>(ctx); break;
        case cg::PACKED: cg_spmv_as<cg::PACKED>(ctx); break;
        default: cg_spmv_as<cg::PLAIN>(ctx); break;
    }
}

__device__ void cg_update(autarky::TaskCtx& ctx) {
    const CgVec& a = ctx.args<CgVec>();
    const unsigned n = ctx.iteration;
    const double alpha = reinterpret_cast<const double*>(a.scalars)[cg::ALPHA + n % 2];
    double* p = reinterpret_cast<double*>(a.v) + (n % 2) * a.vlen;
    const double* q = reinterpret_cast<const double*>(a.y);
    double* x = reinterpret_cast<double*>(a.x);
    double* r = reinterpret_cast<double*>(a.r);
    double* z = reinterpret_cast<double*>(a.z);
    const double* dinv = reinterpret_cast<const double*>(a.dinv);
    // The direction fused (after iteration 0): p_n = z + b p_{n-1} formed
    // from z (r without preconditioner) before this update overwrites it,
    // and stored into v[n % 2] for the next iteration and the gathers.
    const bool form = a.fused && n > 0;
    const double* pold = reinterpret_cast<const double*>(a.v) + ((n + 1) % 2) * a.vlen;
    const double* zsrc = a.precond ? z : r;
    const double beta = form ? reinterpret_cast<const double*>(a.scalars)[cg::BETA + (n + 1) % 2] : 0.0;
    double acc[2] = {0, 0};
    // r -= a q, z = r / diag, and the row's terms of the partials.
    auto residual_step = [&](unsigned i) {
        const double ri = r[i] - alpha * q[i];
        r[i] = ri;
        if (a.precond) {
            const double zi = ri * dinv[i];
            z[i] = zi;
            acc[0] += ri * zi;
            acc[1] += ri * ri;
        } else {
            acc[0] += ri * ri;
        }
    };
    if (a.lean) {
        // Lean: the SpMV stored p_n and applies x's step (cg_spmv_as).
        for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) residual_step(i);
        cg::put_partials(n, a.partials, a.tile, a.tiles, a.width, acc);
        return;
    }
    for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) {
        double pi;
        if (form) {
            pi = cg::direction(zsrc[i], beta, pold[i]);
            p[i] = pi;
        } else {
            pi = p[i];
        }
        x[i] = fma(alpha, pi, x[i]);  // as the lean SpMV's (bitwise the same x)
        residual_step(i);
    }
    cg::put_partials(n, a.partials, a.tile, a.tiles, a.width, acc);
}

// x's step of the previous iteration, x += a_{n-1} p_{n-1} (p_{n-1} in
// v[(n + 1) % 2]), for the lean SpMV with x's step apart
// (CgConfig::x_step_apart): in the SpMV's row loop the fma waited on x's
// load and a's (ncu, 2D 1024²: ~6 % of all stall samples, on the SpMV's
// critical path); here it runs after the tile's SpMV, while its PE's
// reduce sums the partials. The same fma as the SpMV's: bitwise the same
// x. Rows CG_XSTEP_ROWS at a time a thread, every load issued first.
#ifndef CG_XSTEP_ROWS
#define CG_XSTEP_ROWS 1
#endif
__device__ void cg_xstep(autarky::TaskCtx& ctx) {
    const CgVec& a = ctx.args<CgVec>();
    const unsigned n = ctx.iteration;
    if (!a.fused) {
        // The separate single reduction (graph.rs; its axpy tiles then skip
        // x): x += a_n p_n, p_n stored by this tile's axpy of n (only the
        // axpy of n + 1, after this task, rewrites it), after the tile's
        // SpMV of n, while the reduce sums its partials. The axpy's fma.
        const double alpha = reinterpret_cast<const double*>(a.scalars)[cg::ALPHA + n % 2];
        const double* p = reinterpret_cast<const double*>(a.p);
        double* x = reinterpret_cast<double*>(a.x);
        for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) x[i] = fma(alpha, p[i], x[i]);
        return;
    }
    if (n == 0) return;  // x_0 is the host's
    const double alpha = reinterpret_cast<const double*>(a.scalars)[cg::ALPHA + (n + 1) % 2];
    const double* pold = reinterpret_cast<const double*>(a.v) + ((n + 1) % 2) * a.vlen;
    double* x = reinterpret_cast<double*>(a.x);
    constexpr unsigned R = CG_XSTEP_ROWS;
    const unsigned lo = a.lo, hi = a.hi, step = blockDim.x * R;
    for (unsigned base = lo + threadIdx.x; base < hi; base += step) {
        double po[R], xo[R];
#pragma unroll
        for (unsigned j = 0; j < R; ++j) {
            const unsigned i = base + j * blockDim.x;
            if (i < hi) {
                po[j] = pold[i];
                xo[j] = x[i];
            }
        }
#pragma unroll
        for (unsigned j = 0; j < R; ++j) {
            const unsigned i = base + j * blockDim.x;
            if (i < hi) x[i] = fma(alpha, po[j], xo[j]);
        }
    }
}

__device__ void cg_direction(autarky::TaskCtx& ctx) {
    const CgVec& a = ctx.args<CgVec>();
    const unsigned n = ctx.iteration;
    const double beta = reinterpret_cast<const double*>(a.scalars)[cg::BETA + n % 2];
    const double* p = reinterpret_cast<const double*>(a.v) + (n % 2) * a.vlen;
    double* pn = reinterpret_cast<double*>(a.v) + ((n + 1) % 2) * a.vlen;
    const double* z = reinterpret_cast<const double*>(a.precond ? a.z : a.r);
    for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) pn[i] = cg::direction(z[i], beta, p[i]);
}

__device__ void cg_axpy(autarky::TaskCtx& ctx) {
    const CgVec& a = ctx.args<CgVec>();
    const unsigned n = ctx.iteration;
    const double* sc = reinterpret_cast<const double*>(a.scalars);
    const double alpha = sc[cg::ALPHA + n % 2], beta = sc[cg::BETA + n % 2];
    const double* z = reinterpret_cast<const double*>(a.v) + (n % 2) * a.vlen;
    double* zn = reinterpret_cast<double*>(a.v) + ((n + 1) % 2) * a.vlen;
    const double* w = reinterpret_cast<const double*>(a.y);
    double* p = reinterpret_cast<double*>(a.p);
    double* s = reinterpret_cast<double*>(a.s);
    double* x = reinterpret_cast<double*>(a.x);
    double* r = reinterpret_cast<double*>(a.r);
    const double* dinv = reinterpret_cast<const double*>(a.dinv);
    // (Explicit fmas, shared with the merged SpMV and gather: the
    // contractions the compiler made of these expressions before.)
    // x's step here, or in cg_xstep after the SpMV (lean: CgConfig::x_step_apart).
    const bool xin = !a.lean;
    if (r == zn) {
        // One copy of z, and r is it (CgConfig::single_buffer, no
        // preconditioner: z = r; graph.rs gives vlen 0, so z == zn too):
        // r_n is the z_n just loaded, and r_{n+1} is stored once.
        for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) {
            const double zi = z[i];
            const double pi = cg::direction(zi, beta, p[i]);
            const double si = cg::sr_s(w[i], beta, s[i]);
            p[i] = pi;
            s[i] = si;
            if (xin) x[i] = fma(alpha, pi, x[i]);
            r[i] = cg::sr_r(zi, alpha, si);
        }
        return;
    }
    for (unsigned i = a.lo + threadIdx.x; i < a.hi; i += blockDim.x) {
        const double pi = cg::direction(z[i], beta, p[i]);
        const double si = cg::sr_s(w[i], beta, s[i]);
        p[i] = pi;
        s[i] = si;
        if (xin) x[i] = fma(alpha, pi, x[i]);
        const double ri = cg::sr_r(r[i], alpha, si);
        r[i] = ri;
        zn[i] = cg::sr_z(ri, a.precond != 0, dinv, i);
    }
}

// The entries of a send list, value(i) each, stored into dst (rounds of
// CG_GATHER_BATCH entries a thread: every index, then every value, then
// every store. A plain loop waits for two dependent loads per entry in
// turn (`dst` may alias as far as the compiler knows, so nothing moves
// above a store): a 128² ghost plane on 128 threads was 128 × 2 round
// trips, and two GPUs ran 128³ at 0.44× one GPU.)
template <typename F>
__device__ __forceinline__ void gather_rounds(const CgGather& a, double* dst, F value) {
    const unsigned* idx = reinterpret_cast<const unsigned*>(a.idx);
    constexpr unsigned B = CG_GATHER_BATCH;
    const unsigned step = blockDim.x * B;
    for (unsigned base = threadIdx.x; base < a.count; base += step) {
        unsigned id[B];
        double v[B];
#pragma unroll
        for (unsigned b = 0; b < B; ++b) {
            const unsigned k = base + b * blockDim.x;
            id[b] = k < a.count ? idx[k] : 0u;
        }
#pragma unroll
        for (unsigned b = 0; b < B; ++b) {
            const unsigned k = base + b * blockDim.x;
            if (k < a.count) v[b] = value(id[b]);
        }
#pragma unroll
        for (unsigned b = 0; b < B; ++b) {
            const unsigned k = base + b * blockDim.x;
            if (k < a.count) dst[k] = v[b];
        }
    }
}

// Sends value(i) of each entry of the list into the receiver's ghost
// block of its copy of v, in the half at `off`: stored directly (rounds,
// above) when the receiver is load/store reachable; else (NVSHMEM)
// staged contiguously, then one block-wide put into that block (its copy
// of the symmetric v is at this PE's address of it), completed by every
// thread's quiet() before the completion signals it.
template <typename F>
__device__ __forceinline__ void gather_send(autarky::TaskCtx& ctx, const CgGather& a, unsigned long long off,
                                            F value) {
#ifdef AUTARKY_NVSHMEM
    if (!ctx.reachable(a.to_pe)) {
        const unsigned* idx = reinterpret_cast<const unsigned*>(a.idx);
        double* stage = reinterpret_cast<double*>(a.stage);
        for (unsigned k = threadIdx.x; k < a.count; k += blockDim.x) stage[k] = value(idx[k]);
        __syncthreads();
        ctx.put_block(reinterpret_cast<double*>(a.v) + off + a.dest, stage, a.count, a.to_pe);
        ctx.quiet();
        return;
    }
#endif
    gather_rounds(a, ctx.peer(reinterpret_cast<double*>(a.v), a.to_pe) + off + a.dest, value);
}

// The gather of the merged single reduction (fused == 2): z_{n+1} of each
// entry as the owner's SpMV tiles form it (cg::SrNext; alpha_n, beta_n,
// and r_n, w_n, s_{n-1} by parity, which the owner's tiles of n do not
// overwrite). A kind of its own, as cg_spmv_merged.
__device__ void cg_gather_merged(autarky::TaskCtx& ctx) {
    const CgGather& a = ctx.args<CgGather>();
    const unsigned long long off = ((ctx.iteration + 1) % 2) * a.vlen;
    const unsigned cur = ctx.iteration % 2;
    const double* sc = reinterpret_cast<const double*>(a.scalars);
    const cg::SrNext next{reinterpret_cast<const double*>(a.r) + cur * a.stride,
                          reinterpret_cast<const double*>(a.w) + cur * a.stride,
                          reinterpret_cast<const double*>(a.s) + (1 - cur) * a.stride,
                          reinterpret_cast<const double*>(a.dinv),
                          sc[cg::ALPHA + cur],
                          sc[cg::BETA + cur],
                          a.precond != 0};
    gather_send(ctx, a, off, next);
}

__device__ void cg_gather(autarky::TaskCtx& ctx) {
    const CgGather& a = ctx.args<CgGather>();
    const unsigned long long off = ((ctx.iteration + 1) % 2) * a.vlen;
    const double* src = reinterpret_cast<const double*>(a.v) + off;
    // The direction fused: entry i of p_{n+1} is z[i] + b_n p_n[i] (p_n in
    // v[n % 2], stored by this iteration's cg_update).
    const double* pcur = reinterpret_cast<const double*>(a.v) + (ctx.iteration % 2) * a.vlen;
    const double* z = reinterpret_cast<const double*>(a.z);
    const double beta = a.fused ? reinterpret_cast<const double*>(a.scalars)[cg::BETA + ctx.iteration % 2] : 0.0;
    auto value = [&](unsigned i) { return a.fused ? cg::direction(z[i], beta, pcur[i]) : src[i]; };
    gather_send(ctx, a, off, value);
}

// The sums with every thread (a fused allreduce sums the partials
// block-wide), then thread 0 alone: the decisions must be taken once.
__device__ void cg_reduce(autarky::TaskCtx& ctx) {
    const CgReduce& a = ctx.args<CgReduce>();
    const unsigned n = ctx.iteration, cur = n % 2, nxt = (n + 1) % 2;
    double* sc = reinterpret_cast<double*>(a.scalars);
    // Thread 0 loads the scalars the decisions need before the sums, so
    // their round trip overlaps the partials' instead of following the
    // tree (they were written by earlier reduces, which this instance's
    // predecessors' acquire ordered before it). -DAUTARKY_EXP_CG_SC_LATE:
    // read after the sums, the A/B control.
    double rho = 0, alpha_prev = 0;
#ifndef AUTARKY_EXP_CG_SC_LATE
    if (threadIdx.x == 0) {
        rho = sc[cg::RHO + cur];
        if (a.stage == 3) alpha_prev = sc[cg::ALPHA + cur];
    }
#endif
    double s[4];
    autarky_allreduce::sum(ctx, a.ar, s);
    if (threadIdx.x != 0) return;
#ifdef AUTARKY_EXP_CG_SC_LATE
    rho = sc[cg::RHO + cur];
    if (a.stage == 3) alpha_prev = sc[cg::ALPHA + cur];
#endif
    if (a.stage == 1) {
        const double pap = s[0];
        if (!cg::finite(pap)) return cg::fail(ctx, sc, cg::NON_FINITE, 0, pap, n + 1);
        if (pap <= 0.0) return cg::fail(ctx, sc, cg::NOT_SPD, 0, pap, n + 1);
        const double alpha = rho / pap;
        if (!cg::finite(alpha)) return cg::fail(ctx, sc, cg::NON_FINITE, 1, alpha, n + 1);
        sc[cg::ALPHA + cur] = alpha;
        return;
    }
    const double rr = a.stage == 2 ? (a.precond ? s[1] : s[0]) : (a.precond ? s[2] : s[0]);
    sc[cg::LAST_RR] = rr;
    if (!cg::finite(rr)) return cg::fail(ctx, sc, cg::NON_FINITE, 3, rr, n + 1);
    const double rel = sqrt(rr) / a.b_norm;
    ctx.report_residual(rel);
    if (rel <= a.tol) {
        ctx.finish_at(n + 1);
        return;
    }
    if (n + 1 == ctx.iterations) return;
    if (a.stage == 2) {
        const double rz = s[0];
        if (!cg::finite(rz)) return cg::fail(ctx, sc, cg::NON_FINITE, 4, rz, n + 1);
        const double beta = rz / rho;
        if (!cg::finite(beta)) return cg::fail(ctx, sc, cg::NON_FINITE, 2, beta, n + 1);
        sc[cg::RHO + nxt] = rz;
        sc[cg::BETA + cur] = beta;
        return;
    }
    // Single reduction: the scalars of iteration n + 1 (reference iteration n + 2).
    const double gamma = s[0], delta = s[1];
    const unsigned k = n + 2;
    const double beta = gamma / rho;
    if (!cg::finite(beta)) return cg::fail(ctx, sc, cg::NON_FINITE, 2, beta, k);
    const double pap = delta - beta * gamma / alpha_prev;
    if (!cg::finite(pap)) return cg::fail(ctx, sc, cg::NON_FINITE, 0, pap, k);
    if (pap <= 0.0) return cg::fail(ctx, sc, cg::NOT_SPD, 0, pap, k);
    const double alpha = gamma / pap;
    if (!cg::finite(alpha)) return cg::fail(ctx, sc, cg::NON_FINITE, 1, alpha, k);
    sc[cg::RHO + nxt] = gamma;
    sc[cg::ALPHA + nxt] = alpha;
    sc[cg::BETA + nxt] = beta;
}
