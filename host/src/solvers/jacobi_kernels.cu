// Jacobi task bodies (autarky::solvers::jacobi). Four kinds share this
// source (registered first by `jacobi_tile`):
//   jacobi_tile         a box of the PE's interior: one sweep from buffer
//                       n % 2 into (n + 1) % 2, plus the squared update
//                       summed over the box at check iterations;
//   jacobi_pulse        (comm) a box of this PE's padded array, buffer
//                       (n + 1) % 2, stored straight into a peer's ghost
//                       layer (the peer's copy of the symmetric buffer);
//   jacobi_check_local  (comm) sums the tiles' partials in tile order and
//                       puts the PE's sum into every PE's slot array;
//   jacobi_check_global (comm) sums the P slots in PE order (the same
//                       order on every PE: bitwise identical norms), keeps
//                       the norm, and ends the run at convergence.
// Arrays are padded (ghost layer `h` on active axes), row-major, x fastest.

struct JacobiTile {
    unsigned long long a;         // local base of the buffer pair
    unsigned long long len;       // elements per buffer
    unsigned long long partials;  // double[4][tiles] (slot = iteration % 4)
    unsigned lo[3], hi[3];        // the box, padded coordinates (z, y, x)
    unsigned sy, sz;              // strides of y and z (x stride is 1)
    unsigned tile, tiles;
    unsigned check_every, iterations;
    unsigned stencil;  // 5, 9, 7 or 27
    unsigned f64;      // element type: 1 = double, 0 = float
};

struct JacobiPulse {
    unsigned long long a;    // local base of the buffer pair (symmetric)
    unsigned long long len;  // elements per buffer
    unsigned lo[3];          // first cell sent, sender's padded coordinates
    unsigned shape[3];       // box shape (z, y, x)
    unsigned rlo[3];         // first cell written, receiver's padded coordinates
    unsigned sy, sz;         // sender strides
    unsigned rsy, rsz;       // receiver strides
    unsigned to_pe;
    unsigned f64;
    unsigned pad;
};

struct JacobiCheck {
    unsigned long long partials;  // double[4][tiles] (local)
    unsigned long long slots;     // double[4][pes] (symmetric)
    unsigned long long norms;     // double[checks] (local): global norm per check
    unsigned tiles, pes;
    unsigned check_every, iterations;
    unsigned stop_slack;  // finish_at(n + stop_slack) at convergence
    unsigned flags;       // 1: stop at `tol`; 2: a non-finite norm fails the run
    double tol;
};

namespace jacobi {

__device__ __forceinline__ bool is_check(unsigned n, unsigned every, unsigned iterations) {
    return every != 0 && ((n + 1) % every == 0 || n + 1 == iterations);
}

template <class T>
__device__ __forceinline__ T stencil_at(const T* in, unsigned long long i, unsigned sy, unsigned sz, unsigned kind) {
    switch (kind) {
        case 5:
            return (T)0.25 * ((in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1]));
        case 9: {
            const T faces = (in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1]);
            const T diag = (in[i - sy - 1] + in[i - sy + 1]) + (in[i + sy - 1] + in[i + sy + 1]);
            return ((T)4 * faces + diag) / (T)20;
        }
        case 7:
            return ((in[i - sz] + in[i + sz]) + (in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1])) / (T)6;
        default: {  // 27
            T faces = (in[i - sz] + in[i + sz]) + (in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1]);
            T edges = (T)0, corners = (T)0;
            for (int dz = -1; dz <= 1; dz += 2)
                edges += (in[i + dz * (long long)sz - sy] + in[i + dz * (long long)sz + sy]) +
                         (in[i + dz * (long long)sz - 1] + in[i + dz * (long long)sz + 1]);
            edges += (in[i - sy - 1] + in[i - sy + 1]) + (in[i + sy - 1] + in[i + sy + 1]);
            for (int dz = -1; dz <= 1; dz += 2)
                corners += (in[i + dz * (long long)sz - sy - 1] + in[i + dz * (long long)sz - sy + 1]) +
                           (in[i + dz * (long long)sz + sy - 1] + in[i + dz * (long long)sz + sy + 1]);
            return ((T)4 * faces + (T)2 * edges + corners) / (T)56;
        }
    }
}

// Block-wide sum of one double per thread (fixed shape: deterministic).
__device__ inline double block_sum(double v) {
    __shared__ double warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += warp_sums[w];
    __syncthreads();  // warp_sums is reused by the next call
    return s;
}

template <class T>
__device__ void tile(autarky::TaskCtx& ctx, const JacobiTile& a) {
    const unsigned n = ctx.iteration;
    T* base = reinterpret_cast<T*>(a.a);
    const T* in = base + (n % 2) * a.len;
    T* out = base + ((n + 1) % 2) * a.len;
    const bool check = is_check(n, a.check_every, a.iterations);
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1], nz = a.hi[0] - a.lo[0];
    double acc = 0;
    // Rows of x: 32-bit coordinates (a tile has < 2^32 cells), one
    // division per row (or per cell only when rows are shorter than the
    // block), 64-bit arithmetic only for the flat offset.
    const unsigned rows = ny * nz;
    const unsigned per_row = nx >= blockDim.x ? 1 : blockDim.x / nx;  // rows per pass
    const unsigned lane_row = threadIdx.x / (nx >= blockDim.x ? blockDim.x : nx);
    const unsigned lane_x = nx >= blockDim.x ? threadIdx.x : threadIdx.x % nx;
    if (lane_row < per_row) {
        for (unsigned row = lane_row; row < rows; row += per_row) {
            const unsigned y = row % ny, z = row / ny;
            const unsigned long long r0 =
                (unsigned long long)(a.lo[0] + z) * a.sz + (unsigned long long)(a.lo[1] + y) * a.sy + a.lo[2];
            for (unsigned x = lane_x; x < nx; x += (nx >= blockDim.x ? blockDim.x : nx)) {
                const unsigned long long i = r0 + x;
                const T v = stencil_at<T>(in, i, a.sy, a.sz, a.stencil);
                out[i] = v;
                if (check) {
                    const double d = (double)v - (double)in[i];
                    acc += d * d;
                }
            }
        }
    }
    if (check) {
        const double s = block_sum(acc);
        if (threadIdx.x == 0) reinterpret_cast<double*>(a.partials)[(n % 4) * a.tiles + a.tile] = s;
    }
}

template <class T>
__device__ void pulse(autarky::TaskCtx& ctx, const JacobiPulse& a) {
    const unsigned par = (ctx.iteration + 1) % 2;
    const T* src = reinterpret_cast<const T*>(a.a) + par * a.len;
    T* dst = ctx.peer(reinterpret_cast<T*>(a.a), a.to_pe) + par * a.len;
    const unsigned nx = a.shape[2], ny = a.shape[1];
    const unsigned long long cells = (unsigned long long)a.shape[0] * ny * nx;
    for (unsigned long long c = threadIdx.x; c < cells; c += blockDim.x) {
        const unsigned x = (unsigned)(c % nx);
        const unsigned long long r = c / nx;
        const unsigned y = (unsigned)(r % ny);
        const unsigned z = (unsigned)(r / ny);
        const unsigned long long si =
            (unsigned long long)(a.lo[0] + z) * a.sz + (unsigned long long)(a.lo[1] + y) * a.sy + a.lo[2] + x;
        const unsigned long long di =
            (unsigned long long)(a.rlo[0] + z) * a.rsz + (unsigned long long)(a.rlo[1] + y) * a.rsy + a.rlo[2] + x;
        dst[di] = src[si];
    }
}

}  // namespace jacobi

__device__ void jacobi_tile(autarky::TaskCtx& ctx) {
    const JacobiTile& a = ctx.args<JacobiTile>();
    if (a.f64) jacobi::tile<double>(ctx, a);
    else jacobi::tile<float>(ctx, a);
}

__device__ void jacobi_pulse(autarky::TaskCtx& ctx) {
    const JacobiPulse& a = ctx.args<JacobiPulse>();
    if (a.f64) jacobi::pulse<double>(ctx, a);
    else jacobi::pulse<float>(ctx, a);
}

__device__ void jacobi_check_local(autarky::TaskCtx& ctx) {
    const JacobiCheck& a = ctx.args<JacobiCheck>();
    const unsigned n = ctx.iteration;
    if (threadIdx.x != 0 || !jacobi::is_check(n, a.check_every, a.iterations)) return;
    const double* part = reinterpret_cast<const double*>(a.partials) + (n % 4) * a.tiles;
    double s = 0;
    for (unsigned t = 0; t < a.tiles; ++t) s += part[t];  // tile order: deterministic
    double* slots = reinterpret_cast<double*>(a.slots);
    for (unsigned pe = 0; pe < a.pes; ++pe) ctx.peer(slots, pe)[(n % 4) * a.pes + ctx.pe] = s;
}

__device__ void jacobi_check_global(autarky::TaskCtx& ctx) {
    const JacobiCheck& a = ctx.args<JacobiCheck>();
    const unsigned n = ctx.iteration;
    if (threadIdx.x != 0 || !jacobi::is_check(n, a.check_every, a.iterations)) return;
    const double* slots = reinterpret_cast<const double*>(a.slots) + (n % 4) * a.pes;
    double s = 0;
    for (unsigned pe = 0; pe < a.pes; ++pe) s += slots[pe];  // PE order: the same on every PE
    const double norm = sqrt(s);
    reinterpret_cast<double*>(a.norms)[n / a.check_every] = norm;
    if ((a.flags & 2) && !(norm - norm == 0.0)) {
        ctx.fail_non_finite(n);  // NaN or Inf somewhere in the update
        return;
    }
    if ((a.flags & 1) && norm <= a.tol) ctx.finish_at(n + a.stop_slack);
}
