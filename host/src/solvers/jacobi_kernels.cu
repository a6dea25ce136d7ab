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
    unsigned long long arrivals;  // unsigned[4] (slot = iteration % 4): partials written, counted
    unsigned lo[3], hi[3];        // the box, padded coordinates (z, y, x)
    unsigned sy, sz;              // strides of y and z (x stride is 1)
    unsigned tile, tiles;
    unsigned check_every, iterations;
    unsigned stencil;  // 5, 9, 7 or 27
    unsigned f64;      // element type: 1 = double, 0 = float
    unsigned steps;    // sweeps per graph iteration (temporal blocking; 1: none)
    unsigned ulo[3], uhi[3];  // cells that evolve (padded coordinates): the
                              // interior, plus ghosts that mirror a neighbour
    unsigned pad;
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
    unsigned long long arrivals;  // unsigned[4] (local): the tiles' arrival counters, by slot
    unsigned tiles, pes;
    unsigned check_every, iterations;
    unsigned stop_slack;  // finish_at(n + stop_slack) at convergence
    unsigned flags;       // 1: stop at `tol`; 2: a non-finite norm fails the run
    double tol;
};

// The Rust argument structs (jacobi.rs TileArgs, PulseArgs, CheckArgs)
// have these sizes too; tests/jacobi_device_compile.rs checks the host side.
static_assert(sizeof(JacobiTile) == 120, "JacobiTile drifted from jacobi.rs TileArgs");
static_assert(sizeof(JacobiPulse) == 80, "JacobiPulse drifted from jacobi.rs PulseArgs");
static_assert(sizeof(JacobiCheck) == 64, "JacobiCheck drifted from jacobi.rs CheckArgs");

namespace jacobi {

__device__ __forceinline__ bool is_check(unsigned n, unsigned every, unsigned iterations) {
    return every != 0 && ((n + 1) % every == 0 || n + 1 == iterations);
}

// The word check_local's wait names in a timeout (wait_index).
constexpr unsigned ARRIVALS_WORD = 0xA7;

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

// The stencil at cell i, with the centre column's neighbours along y
// (`up` = in[i - sy], `mid` = in[i], `down` = in[i + sy]) already in
// registers. Term for term the formulas of `stencil_at` (so results agree
// bit for bit with the CPU bodies and the reference).
template <class T, int K>
__device__ __forceinline__ T stencil_rows(const T* in, unsigned long long i, unsigned sy, unsigned sz,
                                          T up, T down) {
    if (K == 5) return (T)0.25 * ((up + down) + (in[i - 1] + in[i + 1]));
    if (K == 9) {
        const T faces = (up + down) + (in[i - 1] + in[i + 1]);
        const T diag = (in[i - sy - 1] + in[i - sy + 1]) + (in[i + sy - 1] + in[i + sy + 1]);
        return ((T)4 * faces + diag) / (T)20;
    }
    if (K == 7) return ((in[i - sz] + in[i + sz]) + (up + down) + (in[i - 1] + in[i + 1])) / (T)6;
    return stencil_at<T>(in, i, sy, sz, 27);
}

// R consecutive rows of one x column from cell i (padded index): every
// load is issued before the first store (the centre column once, rows
// y0 - 1 ... y0 + R, shared by neighbouring rows through registers), so
// the loads of all R rows are in flight together. No __restrict__: that
// could turn the loads into non-coherent ones, and another block wrote
// this data during this kernel.
template <class T, int K, int R>
__device__ __forceinline__ void rows(const T* in, T* out, unsigned long long i, unsigned sy, unsigned sz, bool check,
                                     double& acc) {
    T col[R + 2];
#pragma unroll
    for (int r = 0; r < R + 2; ++r) col[r] = in[i + (unsigned long long)r * sy - sy];
    T v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = stencil_rows<T, K>(in, i + (unsigned long long)r * sy, sy, sz, col[r], col[r + 2]);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        out[i + (unsigned long long)r * sy] = v[r];
        if (check) {
            const double d = (double)v[r] - (double)col[r + 1];
            acc += d * d;
        }
    }
}

// Rows per work item (at most): 8 (the default) or 16.
#ifndef JACOBI_RY
#define JACOBI_RY 8
#endif

// 3D 7-point tiles at least this deep march along z (below).
#ifndef JACOBI_ZMARCH_MIN
#define JACOBI_ZMARCH_MIN 2
#endif

// (A third knob, prefetching each warp's next work item to L2, was timed
// in session 6 and made every size 2-5 % slower; it is gone. 16 rows a
// work item was 6-11 % slower: it spills under the 64-register cap.)

// R consecutive z planes of one x column of a 3D 7-point tile from cell i:
// the centre column (planes z0 - 1 ... z0 + R) is loaded once and shared
// by neighbouring planes through registers, as `rows` does along y. The
// formula is term for term stencil_at's 7-point one, so results do not
// depend on the marching direction.
template <class T, int R>
__device__ __forceinline__ void planes(const T* in, T* out, unsigned long long i, unsigned sy, unsigned sz, bool check,
                                       double& acc) {
    T col[R + 2];
#pragma unroll
    for (int r = 0; r < R + 2; ++r) col[r] = in[i + (unsigned long long)r * sz - sz];
    T v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const unsigned long long c = i + (unsigned long long)r * sz;
        v[r] = ((col[r] + col[r + 2]) + (in[c - sy] + in[c + sy]) + (in[c - 1] + in[c + 1])) / (T)6;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        out[i + (unsigned long long)r * sz] = v[r];
        if (check) {
            const double d = (double)v[r] - (double)col[r + 1];
            acc += d * d;
        }
    }
}

// The sweep of a 3D 7-point tile marching along z: work items are (y row,
// 32-wide x chunk, segment of up to JACOBI_RY planes), consecutive items
// on neighbouring rows (their y neighbours are each other's centres, so
// they meet in L1). Marching along y instead, every cell's two z
// neighbours are loads of their own: three reads of the grid per sweep
// instead of about one (the CUDA-graph baseline marches along z too).
template <class T>
__device__ __forceinline__ double sweep_z(const T* in, T* out, const JacobiTile& a, bool check) {
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1], nz = a.hi[0] - a.lo[0];
    const unsigned sy = a.sy, sz = a.sz;
    const unsigned chunks = (nx + 31) / 32, segs = (nz + JACOBI_RY - 1) / JACOBI_RY;
    const unsigned items = ny * chunks * segs;
    const unsigned lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    double acc = 0;
    for (unsigned w = threadIdx.x >> 5; w < items; w += warps) {
        const unsigned y = w % ny, rest = w / ny;
        const unsigned chunk = rest % chunks, seg = rest / chunks;
        const unsigned x = chunk * 32 + lane;
        if (x >= nx) continue;
        const unsigned z0 = seg * JACOBI_RY;
        unsigned n = min(nz - z0, (unsigned)JACOBI_RY);
        unsigned long long i =
            (unsigned long long)(a.lo[0] + z0) * sz + (unsigned long long)(a.lo[1] + y) * sy + a.lo[2] + x;
        if (n == JACOBI_RY) {
            planes<T, JACOBI_RY>(in, out, i, sy, sz, check, acc);
            continue;
        }
#if JACOBI_RY > 8
        if (n & 8) {
            planes<T, 8>(in, out, i, sy, sz, check, acc);
            i += 8ull * sz;
        }
#endif
        if (n & 4) {
            planes<T, 4>(in, out, i, sy, sz, check, acc);
            i += 4ull * sz;
        }
        if (n & 2) {
            planes<T, 2>(in, out, i, sy, sz, check, acc);
            i += 2ull * sz;
        }
        if (n & 1) planes<T, 1>(in, out, i, sy, sz, check, acc);
    }
    return acc;
}

// Rows per work item of the register-window 3D sweep below (0: the
// sweep above instead), and the planes whose loads a warp issues together
// there (f32; f64: 1). Measured at 256³ f32 (µs per iteration, one H200,
// session 14, best tile of each): G = 2, U = 2 93.5; G = 2, U = 1 97.9;
// G = 4, U = 1 97.2; G = 2, U = 4 110 and G = 4, U = 2 116 (both spill
// in the loop under the 64-register cap); the sweep above 116.6.
#ifndef JACOBI_Z2
#define JACOBI_Z2 2
#endif
#ifndef JACOBI_Z2_U
#define JACOBI_Z2_U 2
#endif
// (L2 prefetches 2, 4 or 8 planes ahead, bytes in flight without
// registers, were timed in session 14: 256³ 95.6 → 102-105 µs. Gone.)

// The sweep of a 3D 7-point tile marching along z through a register
// window. A work item is a 32-wide x chunk of G consecutive rows; its warp
// walks every plane of the tile. Lane l holds column x0 + l of rows
// y0 - 1 ... y0 + G of the planes z - 1 (centre rows only), z and z + 1, so
// each cell is loaded once per item and its neighbours come from
// registers: along z from the window, along y from the neighbouring row,
// along x by shuffles (lanes 0 and 1 load the two cells left and right of
// the chunk). `sweep_z` above loads every neighbour: 5.25 load
// instructions a cell against (2G + 2) / G here (3 for G = 2). Lanes past
// the tile's width (and rows past its height, in the last item) load
// clamped cells and store nothing, so every lane takes part in the
// shuffles. The formula is term for term stencil_at's 7-point one. Out of
// line: its registers are allocated apart from the other sweeps', which
// spill in jacobi_tile.
template <class T, int G, int U>
__device__ __noinline__ double sweep_z2(const T* in, T* out, const JacobiTile& a, bool check) {
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1], nz = a.hi[0] - a.lo[0];
    const unsigned sy = a.sy, sz = a.sz;
    const unsigned chunks = (nx + 31) / 32, groups = (ny + G - 1) / G;
    const unsigned items = chunks * groups;
    const unsigned lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    double acc = 0;
    for (unsigned w = threadIdx.x >> 5; w < items; w += warps) {
        const unsigned group = w % groups, chunk = w / groups;
        const unsigned x0 = chunk * 32, y0 = group * G;
        const unsigned width = min(32u, nx - x0), last = min((unsigned)G, ny - y0) + 1;
        // Row r of the window is row y0 - 1 + min(r, last) of the plane:
        // rows past the item's last one repeat the row below it (which
        // exists). Computed where used: an array of offsets spilled.
#define Z2_ROW(r) (min((unsigned)(r), last) * sy)
        // This lane's cell of row y0 - 1 on the plane below the tile.
        const T* q = in + ((unsigned long long)(a.lo[0] - 1) * sz + (unsigned long long)(a.lo[1] + y0 - 1) * sy +
                           a.lo[2] + x0);
        // Lanes 0 and 1 read the cells left and right of the chunk.
        const int eo = (lane == 0 ? -1 : (int)width) - (int)min(lane, width - 1);
        q += min(lane, width - 1);
        T* o = out + (q - in) + sz;
        T below[G], cur[G + 2];
#pragma unroll
        for (int r = 0; r < G; ++r) below[r] = q[Z2_ROW(r + 1)];
        q += sz;
#pragma unroll
        for (int r = 0; r < G + 2; ++r) cur[r] = q[Z2_ROW(r)];
        // Plane z from its edge cells `ce` and the next plane's rows `nx`;
        // then the window moves up a plane.
        auto plane = [&](const T(&ce)[G], const T(&nx)[G + 2]) {
#pragma unroll
            for (int r = 0; r < G; ++r) {
                const T c = cur[r + 1];
                const T up = __shfl_up_sync(0xffffffffu, c, 1);
                const T down = __shfl_down_sync(0xffffffffu, c, 1);
                const T el = __shfl_sync(0xffffffffu, ce[r], 0);
                const T er = __shfl_sync(0xffffffffu, ce[r], 1);
                const T left = lane == 0 ? el : up;
                const T right = lane + 1 == width ? er : down;
                const T v = ((below[r] + nx[r + 1]) + (cur[r] + cur[r + 2]) + (left + right)) / (T)6;
                if (lane < width && (unsigned)r + 1 < last) {
                    o[Z2_ROW(r + 1)] = v;
                    if (check) {
                        const double d = (double)v - (double)c;
                        acc += d * d;
                    }
                }
            }
            o += sz;
#pragma unroll
            for (int r = 0; r < G; ++r) below[r] = cur[r + 1];
#pragma unroll
            for (int r = 0; r < G + 2; ++r) cur[r] = nx[r];
        };
        unsigned z = 0;
        // U planes at a time: the loads of all U (their edge cells and the
        // rows above each) are issued before the first of them is
        // computed, so a warp has U planes of loads in flight.
        for (; z + U <= nz; z += U) {
            T ce[U][G], nx[U][G + 2];
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < G; ++r) ce[u][r] = lane < 2 ? q[(int)(u * sz + Z2_ROW(r + 1)) + eo] : (T)0;
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < G + 2; ++r) nx[u][r] = q[(u + 1) * sz + Z2_ROW(r)];
            q += U * sz;
#pragma unroll
            for (int u = 0; u < U; ++u) plane(ce[u], nx[u]);
        }
        for (; z < nz; ++z) {
            T ce[G], nx[G + 2];
#pragma unroll
            for (int r = 0; r < G; ++r) ce[r] = lane < 2 ? q[(int)Z2_ROW(r + 1) + eo] : (T)0;
            q += sz;
#pragma unroll
            for (int r = 0; r < G + 2; ++r) nx[r] = q[Z2_ROW(r)];
            plane(ce, nx);
        }
#undef Z2_ROW
    }
    return acc;
}

// One sweep of the box. Work items are (z plane, 32-wide x chunk, segment
// of up to JACOBI_RY rows); warp w takes items w, w + warps, ... and its
// lanes the 32 x cells of the chunk (coalesced). Each cell's formula is
// fixed and each thread's partial sums its cells in a fixed order, so the
// result does not depend on timing. The f32 5- and 7-point stencils (the
// ones that carry the performance targets) run a segment unrolled: 8 rows,
// or a short one as 4-, 2- and 1-row pieces; the others go row by row.
// (Unrolling every type and stencil made NVRTC take 14 s instead of 2.4 s
// for the megakernel with these kinds.)
template <class T, int K>
__device__ __forceinline__ double sweep(const T* in, T* out, const JacobiTile& a, bool check) {
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1], nz = a.hi[0] - a.lo[0];
    const unsigned sy = a.sy, sz = a.sz;
    const unsigned chunks = (nx + 31) / 32, segs = (ny + JACOBI_RY - 1) / JACOBI_RY;
    const unsigned items = nz * chunks * segs;
    const unsigned lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    constexpr bool unrolled = K == 5 || K == 7;
    double acc = 0;
#if JACOBI_Z2 > 0
    // f64 windows take twice the registers: one plane's loads at a time.
    if (K == 7 && nz >= JACOBI_ZMARCH_MIN)
        return sweep_z2<T, JACOBI_Z2, sizeof(T) == 8 ? 1 : JACOBI_Z2_U>(in, out, a, check);
#else
    if (K == 7 && nz >= JACOBI_ZMARCH_MIN) return sweep_z<T>(in, out, a, check);
#endif
    for (unsigned w = threadIdx.x >> 5; w < items; w += warps) {
        const unsigned seg = w % segs, rest = w / segs;
        const unsigned chunk = rest % chunks, z = rest / chunks;
        const unsigned x = chunk * 32 + lane;
        if (x >= nx) continue;
        const unsigned y0 = seg * JACOBI_RY;
        unsigned n = min(ny - y0, (unsigned)JACOBI_RY);
        unsigned long long i =
            (unsigned long long)(a.lo[0] + z) * sz + (unsigned long long)(a.lo[1] + y0) * sy + a.lo[2] + x;
        if (unrolled) {
            if (n == JACOBI_RY) {
                rows<T, K, unrolled ? JACOBI_RY : 1>(in, out, i, sy, sz, check, acc);
                continue;
            }
#if JACOBI_RY > 8
            if (n & 8) {
                rows<T, K, unrolled ? 8 : 1>(in, out, i, sy, sz, check, acc);
                i += 8ull * sy;
            }
#endif
            if (n & 4) {
                rows<T, K, unrolled ? 4 : 1>(in, out, i, sy, sz, check, acc);
                i += 4ull * sy;
            }
            if (n & 2) {
                rows<T, K, unrolled ? 2 : 1>(in, out, i, sy, sz, check, acc);
                i += 2ull * sy;
            }
            n &= 1;
        }
        for (; n > 0; --n, i += sy) rows<T, K, 1>(in, out, i, sy, sz, check, acc);
    }
    return acc;
}

// Temporal blocking (2D 5-point): S sweeps per graph iteration. The PE's
// ghost layers are S deep, so a tile's cells after S sweeps depend only on
// the tile grown by S, read once at the start. A warp's work item is a
// 32-cell-wide column chunk of the grown tile and R + 2S rows; lane l holds
// its column in registers and gets its x neighbours by shuffles. Sweep k
// updates rows k .. R + 2S - 1 - k; lanes k .. 31 - k stay exact, so after
// S sweeps lanes S .. 31 - S (W = 32 - 2S columns) and rows S .. S + R - 1
// are the item's output. Every value is the same formula of the same
// neighbours as in S separate sweeps (term for term stencil_at's 5-point
// one), so the grid is bitwise that of steps = 1; cells outside
// [ulo, uhi) (Dirichlet ghosts) keep their values. The squared update
// (check iterations) is of the last sweep, summed per lane in item order.
template <class T, int S, bool CHECK>
__device__ __noinline__ double sweep_steps(const T* in, T* out, const JacobiTile& a) {
    constexpr int R = 8, W = 32 - 2 * S, C = R + 2 * S;
    const int lox = (int)a.lo[2], hix = (int)a.hi[2], loy = (int)a.lo[1], hiy = (int)a.hi[1];
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1];
    const unsigned chunks = (nx + W - 1) / W, segs = (ny + R - 1) / R;
    const unsigned items = chunks * segs;
    const unsigned lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const unsigned long long zoff = (unsigned long long)a.lo[0] * a.sz;
    const unsigned sy = a.sy;
    // Read once, unconditionally: inside the loop's `&&` chains these were
    // conditional loads the compiler may not hoist — a load of the
    // arguments per cell and step.
    const int ulox = (int)a.ulo[2], uhix = (int)a.uhi[2], uloy = (int)a.ulo[1], uhiy = (int)a.uhi[1];
    double acc = 0;
    for (unsigned w = threadIdx.x >> 5; w < items; w += warps) {
        const int x0 = lox + (int)((w / segs) * W);
        const int y0 = loy + (int)((w % segs) * R);
        const int x = x0 - S + (int)lane;
        const bool xload = x < hix + S;  // x >= lox - S >= 0 always
        const bool xu = x >= ulox && x < uhix;
        // Row j of the item is y0 - S + j (>= 0: ghosts are S deep). A
        // pointer walking the rows, not a 64-bit multiply per row (ncu: ~11
        // instructions a load with the multiply).
        const int rows_in = hiy + S - (y0 - S);  // rows j < rows_in exist
        const T* src = in + zoff + (unsigned long long)(y0 - S) * sy + x;
        T c[C];
#pragma unroll
        for (int j = 0; j < C; ++j) {
            c[j] = (xload && j < rows_in) ? *src : (T)0;
            src += sy;
        }
#pragma unroll
        for (int k = 1; k <= S; ++k) {
            T old_prev = c[k - 1];
#pragma unroll
            for (int j = k; j < C - k; ++j) {
                const T left = __shfl_up_sync(0xffffffffu, c[j], 1);
                const T right = __shfl_down_sync(0xffffffffu, c[j], 1);
                const T v = (T)0.25 * ((old_prev + c[j + 1]) + (left + right));
                old_prev = c[j];
                const int y = y0 - S + j;
                // Selects, not branches: a branch between two shuffles makes
                // the compiler reconverge the warp around every shuffle
                // (WARPSYNC, BSSY/BSYNC: ~4× the instructions of the step;
                // the S = 4 body cost ~5 µs on the H200). Adding +0.0 to
                // `acc` (≥ +0) leaves it bitwise unchanged. The norm's terms
                // only in the CHECK instance (check iterations).
                const bool evolves = xu & (y >= uloy) & (y < uhiy);
                if (CHECK && k == S) {
                    const bool counted = evolves & (j >= S) & (j < S + R) & ((int)lane >= S) &
                                         ((int)lane < S + W) & (x < hix) & (y < hiy);
                    const double d = counted ? (double)v - (double)c[j] : 0.0;
                    acc += d * d;
                }
                c[j] = evolves ? v : c[j];
            }
        }
        if ((int)lane >= S && (int)lane < S + W && x < hix) {
            const int rows_out = hiy - y0;  // rows S + j, j < rows_out, are in the tile
            T* dst = out + zoff + (unsigned long long)y0 * sy + x;
#pragma unroll
            for (int j = 0; j < R; ++j) {
                if (j < rows_out) *dst = c[S + j];
                dst += sy;
            }
        }
    }
    return acc;
}

// Rows of a work item of the 3D temporal-blocking body below, and the
// raw planes it loads ahead of the one it computes (0 or 1).
#ifndef JACOBI_T3_G
#define JACOBI_T3_G 2
#endif
#ifndef JACOBI_T3_PF
#define JACOBI_T3_PF 1
#endif

// Plain global loads and stores for the 3D temporal-blocking body: the
// buffers are global memory, and a generic access costs a descriptor and a
// 64-bit address computation per load (ncu, session 15). Not .nc: other
// blocks wrote this data during this kernel.
__device__ __forceinline__ float ld_global(const float* p) {
    float v;
    asm("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ double ld_global(const double* p) {
    double v;
    asm("ld.global.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st_global(float* p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
__device__ __forceinline__ void st_global(double* p, double v) {
    asm volatile("st.global.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
}

// x / 6, bit for bit IEEE round-to-nearest division, in three operations
// for f32: q = RN(x·c) with c = RN(1/6), the remainder x − 6q exact by an
// FMA, then RN(q + r·c). That equals RN(x / 6) for every finite x with
// |x| ≥ 2⁻¹²⁵ and for +0; for the rest `bad` is set, and the EXACT variant
// gives ±0 itself, ±∞ and NaN times c, and a small x (a subnormal
// quotient) the same three operations in f64 rounded once to f32 — exact
// because x / 6 = (m / 3)·2^(e − 1) for x = m·2^e is never within f64's
// rounding error of an f32 rounding midpoint unless it is representable.
// Both checked for all 2³² floats against x / 6 on the CPU (session 15).
// The compiler's x / 6 is the same three operations plus a range check
// that branches to a slow-path call (per value: the branch, the warp's
// reconvergence, and for subnormals a slow path that cost the 3D body ~20 %
// over a grid relaxing from zero). f64: IEEE division.
template <class T, bool EXACT>
__device__ __forceinline__ T div6(T x, bool& bad) {
    if (sizeof(T) == 8) return x / (T)6;
    const float xf = (float)x;
    const float c = __uint_as_float(0x3e2aaaabu);
    const float q = __fmul_rn(xf, c);
    const float r = __fmaf_rn(-q, 6.0f, xf);
    const float f = __fmaf_rn(r, c, q);
    const float ax = fabsf(xf);
    const float inf = __uint_as_float(0x7f800000u);
    const bool ok = (ax >= 0x1p-125f && ax < inf) || __float_as_uint(xf) == 0u;
    if (!EXACT) {
        bad |= !ok;
        return (T)f;
    }
    const double xd = (double)xf, cd = 1.0 / 6.0;
    const double qd = __dmul_rn(xd, cd);
    const double rd = __fma_rn(-qd, 6.0, xd);
    const float small = (float)__fma_rn(rd, cd, qd);
    const float special = xf == 0.0f ? xf : (ax < inf ? small : __fmul_rn(xf, c));
    return (T)(ok ? f : special);
}

// The first sweep of a plane in sweep_steps3's window (rows 1 .. G + 2 of
// the item), from the raw planes below (rows 1 .. G + 2), at and above it;
// cells whose bit in `m` is clear keep their values. `exact`: div6's
// exact variant; else its three operations, and the result says whether a
// value needs the exact one.
template <class T, int G, bool MASK>
__device__ __forceinline__ bool steps3_first(T (&s1)[G + 2], const T (&rb)[G + 2], const T (&rc)[G + 4],
                                             const T (&rn)[G + 4], unsigned m, bool exact) {
    bool bad = false;
#pragma unroll
    for (int i = 0; i < G + 2; ++i) {
        const int j = i + 1;
        const T c = rc[j];
        const T left = __shfl_up_sync(0xffffffffu, c, 1);
        const T right = __shfl_down_sync(0xffffffffu, c, 1);
        const T sum = (rb[i] + rn[j]) + (rc[j - 1] + rc[j + 1]) + (left + right);
        const T v = exact ? div6<T, true>(sum, bad) : div6<T, false>(sum, bad);
        s1[i] = (!MASK || ((m >> j) & 1u)) ? v : c;
    }
    return bad;
}

// The second sweep's values of a plane (rows 2 .. G + 1), from the first
// sweep's planes below (G rows), at (G + 2) and above (G + 2) it.
template <class T, int G>
__device__ __forceinline__ bool steps3_second(T (&s2)[G], const T (&sb)[G], const T (&sc)[G + 2],
                                              const T (&sa)[G + 2], bool exact) {
    bool bad = false;
#pragma unroll
    for (int r = 0; r < G; ++r) {
        const T c = sc[r + 1];
        const T left = __shfl_up_sync(0xffffffffu, c, 1);
        const T right = __shfl_down_sync(0xffffffffu, c, 1);
        const T sum = (sb[r] + sa[r + 1]) + (sc[r] + sc[r + 2]) + (left + right);
        s2[r] = exact ? div6<T, true>(sum, bad) : div6<T, false>(sum, bad);
    }
    return bad;
}

// One work item of sweep_steps3 (below): MASK keeps the cells outside
// [ulo, uhi) (Dirichlet ghosts) at their values (without it every cell of
// the item evolves, as in tiles away from Dirichlet sides). Returns the
// item's share of the squared update.
template <class T, int G, bool CHECK, bool MASK>
__device__ __forceinline__ double steps3_item(const T* in, T* out, const JacobiTile& a, int x0, int y0) {
    constexpr int S = 2, W = 32 - 2 * S, RR = G + 2 * S, R1 = G + 2;
    const unsigned lane = threadIdx.x & 31;
    const int hix = (int)a.hi[2], hiy = (int)a.hi[1], loz = (int)a.lo[0], hiz = (int)a.hi[0];
    const unsigned sy = a.sy, sz = a.sz;
    const int x = x0 - S + (int)lane;
    // Lanes past the grown tile load its last column, and rows past it its
    // last row: such cells reach only outputs that are not stored.
    const int xc = min(x, hix + S - 1);
    const int rows_in = hiy + S - (y0 - S);  // raw rows j < rows_in exist
    bool xu = true;
    unsigned ym = ~0u;  // bit j: raw row j evolves
    if (MASK) {
        xu = x >= (int)a.ulo[2] && x < (int)a.uhi[2];
        ym = 0;
#pragma unroll
        for (int j = 0; j < RR; ++j) {
            const int y = y0 - S + j;
            ym |= (unsigned)(y >= (int)a.ulo[1] && y < (int)a.uhi[1]) << j;
        }
        ym = xu ? ym : 0u;
    }
    const bool store = (int)lane >= S && (int)lane < S + W && x < hix;
    const int rows_out = hiy - y0;  // output rows r < rows_out are the tile's
    // Raw row j of a plane is j * sy past the row pointer (the last
    // existing row for j >= rows_in), as offsets computed once.
    unsigned roff[RR];
#pragma unroll
    for (int j = 0; j < RR; ++j) roff[j] = (unsigned)min(j, rows_in - 1) * sy;
    const T* src = in + (unsigned long long)(loz - S) * sz + (unsigned long long)(y0 - S) * sy + xc;
    T* dst = out + (unsigned long long)loz * sz + (unsigned long long)y0 * sy + x;
    auto load = [&](T (&v)[RR]) {
#pragma unroll
        for (int j = 0; j < RR; ++j) v[j] = ld_global(src + roff[j]);
        src += sz;
    };
    double acc = 0;
    T rb[R1], rc[RR], rn[RR];  // raw planes p - 1 (rows 1 .. G + 2), p, p + 1
    T sb[G], sc[R1];           // first sweep: planes p - 2 (rows 2 .. G + 1), p - 1
    {
        T t[RR];
        load(t);
#pragma unroll
        for (int i = 0; i < R1; ++i) rb[i] = t[i + 1];
    }
    load(rc);
    load(rn);
#pragma unroll
    for (int i = 0; i < G; ++i) sb[i] = (T)0;
#pragma unroll
    for (int i = 0; i < R1; ++i) sc[i] = (T)0;
    const int uloz = (int)a.ulo[0], uhiz = (int)a.uhi[0];
    // p runs over the planes of the first sweep, loz - 1 .. hiz; the second
    // sweep's plane is p - 1, from p = loz + 1 on.
    for (int p = loz - 1; p <= hiz; ++p) {
        T pf[RR];
        if (JACOBI_T3_PF) {
            if (p + 2 <= hiz + 1) {
                load(pf);
            } else {
#pragma unroll
                for (int j = 0; j < RR; ++j) pf[j] = rn[j];
            }
        }
        const unsigned m1 = MASK && !(p >= uloz && p < uhiz) ? 0u : ym;
        T s1[R1];
        // The first sweep of plane p; again with div6's exact variant when a
        // value of the plane needs it: the whole warp takes that branch.
        if (__any_sync(0xffffffffu, steps3_first<T, G, MASK>(s1, rb, rc, rn, m1, false)))
            steps3_first<T, G, MASK>(s1, rb, rc, rn, m1, true);
        if (p > loz) {
            const int q = p - 1;
            const unsigned m2 = MASK && !(q >= uloz && q < uhiz) ? 0u : ym;
            T s2[G];
            if (__any_sync(0xffffffffu, steps3_second<T, G>(s2, sb, sc, s1, false)))
                steps3_second<T, G>(s2, sb, sc, s1, true);
#pragma unroll
            for (int r = 0; r < G; ++r) {
                const T c = sc[r + 1];
                const T v = s2[r];
                const bool ev = !MASK || ((m2 >> (r + S)) & 1u);
                if (CHECK) {
                    const bool counted = ev & store & (r < rows_out);
                    const double d = counted ? (double)v - (double)c : 0.0;
                    acc += d * d;
                }
                if (store && r < rows_out) st_global(dst + (unsigned long long)r * sy, ev ? v : c);
            }
            dst += sz;
        }
#pragma unroll
        for (int i = 0; i < G; ++i) sb[i] = sc[i + 1];
#pragma unroll
        for (int i = 0; i < R1; ++i) sc[i] = s1[i];
#pragma unroll
        for (int i = 0; i < R1; ++i) rb[i] = rc[i + 1];
#pragma unroll
        for (int j = 0; j < RR; ++j) rc[j] = rn[j];
        if (JACOBI_T3_PF) {
#pragma unroll
            for (int j = 0; j < RR; ++j) rn[j] = pf[j];
        } else if (p + 2 <= hiz + 1) {
            load(rn);
        }
    }
    return acc;
}

// Temporal blocking (3D 7-point), two sweeps per graph iteration. The PE's
// ghost layers are 2 deep on every axis, so a tile's cells after two
// sweeps depend only on the tile grown by 2, and each cell of it is read
// once. A work item is a 32-column chunk of the grown tile (lanes 2 .. 29
// are its W = 28 output columns) and G output rows, marched along z
// through a register window: lane l holds, for its column,
//   the raw planes p - 1 (the G + 2 rows the first sweep needs as its
//   centre's z neighbour), p (G + 4 rows) and p + 1 (G + 4 rows; with
//   JACOBI_T3_PF, plane p + 2 is loading too),
//   the first sweep's planes p - 2 (G rows), p - 1 (G + 2) and p (G + 2),
// computes the first sweep of plane p (rows 1 .. G + 2 of the item) and
// then the second sweep of plane p - 1 (rows 2 .. G + 1), and stores it.
// x neighbours come by shuffles: the first sweep is exact on lanes
// 1 .. 30, the second on 2 .. 29. Every value is the same formula of the
// same neighbours as in two separate sweeps (term for term stencil_at's
// 7-point one; the division bit for bit, see div6), so the grid is bitwise
// that of steps = 1; cells outside [ulo, uhi) (Dirichlet ghosts) keep
// their values. The squared update (check iterations) is of the second
// sweep, summed per lane in item, plane and row order. Selects, not
// branches, between the shuffles (see sweep_steps).
template <class T, int G, bool CHECK>
__device__ __noinline__ double sweep_steps3(const T* in, T* out, const JacobiTile& a) {
    constexpr int S = 2, W = 32 - 2 * S, RR = G + 2 * S;
    const int lox = (int)a.lo[2], hix = (int)a.hi[2], loy = (int)a.lo[1], hiy = (int)a.hi[1];
    const unsigned nx = a.hi[2] - a.lo[2], ny = a.hi[1] - a.lo[1];
    const unsigned chunks = (nx + W - 1) / W, groups = (ny + G - 1) / G;
    const unsigned items = chunks * groups;
    const unsigned warps = blockDim.x >> 5;
    // Whether every cell the tile's items compute evolves along z (the
    // first sweep's planes lo - 1 .. hi).
    const bool zfull = (int)a.lo[0] - 1 >= (int)a.ulo[0] && (int)a.hi[0] + 1 <= (int)a.uhi[0];
    double acc = 0;
    for (unsigned w = threadIdx.x >> 5; w < items; w += warps) {
        const int x0 = lox + (int)((w / groups) * W);
        const int y0 = loy + (int)((w % groups) * G);
        // The item's loaded columns and rows, clipped to the grown tile.
        const bool full = zfull && x0 - S >= (int)a.ulo[2] && min(x0 - S + 32, hix + S) <= (int)a.uhi[2] &&
                          y0 - S >= (int)a.ulo[1] && min(y0 - S + RR, hiy + S) <= (int)a.uhi[1];
        acc += full ? steps3_item<T, G, CHECK, false>(in, out, a, x0, y0)
                    : steps3_item<T, G, CHECK, true>(in, out, a, x0, y0);
    }
    return acc;
}

template <class T, int K>
__device__ __forceinline__ void tile_k(const JacobiTile& a, unsigned n) {
    const T* in = reinterpret_cast<const T*>(a.a) + (n % 2) * a.len;
    T* out = reinterpret_cast<T*>(a.a) + ((n + 1) % 2) * a.len;
    const bool check = is_check(n, a.check_every, a.iterations);
    double part;
    if (K == 7 && a.steps > 1) {
        part = check ? sweep_steps3<T, JACOBI_T3_G, true>(in, out, a) : sweep_steps3<T, JACOBI_T3_G, false>(in, out, a);
    } else if (K == 5 && a.steps > 1) {
        switch (a.steps) {
            case 2: part = check ? sweep_steps<T, 2, true>(in, out, a) : sweep_steps<T, 2, false>(in, out, a); break;
            case 3: part = check ? sweep_steps<T, 3, true>(in, out, a) : sweep_steps<T, 3, false>(in, out, a); break;
            default: part = check ? sweep_steps<T, 4, true>(in, out, a) : sweep_steps<T, 4, false>(in, out, a); break;
        }
    } else {
        part = sweep<T, K>(in, out, a, check);
    }
    if (!check) return;
    const double s = block_sum(part);
    if (threadIdx.x == 0) {
        reinterpret_cast<double*>(a.partials)[(n % 4) * a.tiles + a.tile] = s;
        // Release: the partial before the arrival that check_local acquires.
        unsigned* count = reinterpret_cast<unsigned*>(a.arrivals) + n % 4;
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
    }
}

template <class T>
__device__ void tile(autarky::TaskCtx& ctx, const JacobiTile& a) {
    const unsigned n = ctx.iteration;
    switch (a.stencil) {
        case 5: tile_k<T, 5>(a, n); break;
        case 9: tile_k<T, 9>(a, n); break;
        case 7: tile_k<T, 7>(a, n); break;
        default: tile_k<T, 27>(a, n); break;
    }
}

// Number of cells a thread moves per round of a pulse: all of a round's
// loads are issued before its first store. (A plain loop waits for each
// load in turn: `dst` may alias `src` as far as the compiler knows, so no
// load moves above an earlier store. A 4096-cell halo row on 128 threads
// was then 32 dependent round trips, and the pulse the longest step of a
// two-GPU iteration.)
#ifndef JACOBI_PULSE_BATCH
#define JACOBI_PULSE_BATCH 8
#endif

// Copies the pulse's box from this PE's `src` array into `dst` (the
// receiver's copy, already translated to a pointer this thread can store
// to), the block's threads taking consecutive cells (coalesced along x).
// A box has at most 2^31 cells (the host refuses larger ones), so the
// 32-bit index arithmetic and loop counter cannot wrap.
template <class T>
__device__ __forceinline__ void copy_box(const T* src, T* dst, const JacobiPulse& a) {
    const unsigned nx = a.shape[2], ny = a.shape[1];
    const unsigned cells = a.shape[0] * ny * nx;
    const unsigned step = blockDim.x * JACOBI_PULSE_BATCH;
    for (unsigned base = threadIdx.x; base < cells; base += step) {
        T v[JACOBI_PULSE_BATCH];
#pragma unroll
        for (unsigned b = 0; b < JACOBI_PULSE_BATCH; ++b) {
            const unsigned c = base + b * blockDim.x;
            if (c < cells) {
                const unsigned x = c % nx, r = c / nx, y = r % ny, z = r / ny;
                v[b] = src[(unsigned long long)(a.lo[0] + z) * a.sz + (unsigned long long)(a.lo[1] + y) * a.sy +
                           a.lo[2] + x];
            }
        }
#pragma unroll
        for (unsigned b = 0; b < JACOBI_PULSE_BATCH; ++b) {
            const unsigned c = base + b * blockDim.x;
            if (c < cells) {
                const unsigned x = c % nx, r = c / nx, y = r % ny, z = r / ny;
                dst[(unsigned long long)(a.rlo[0] + z) * a.rsz + (unsigned long long)(a.rlo[1] + y) * a.rsy +
                    a.rlo[2] + x] = v[b];
            }
        }
    }
}

#ifdef AUTARKY_NVSHMEM
// The pulse to a peer reachable only through NVSHMEM: one block-wide
// non-blocking put per x row of the box (rows are contiguous on both
// sides; the whole block takes each row, so a 2D halo row of thousands of
// cells is not one thread's copy), completed by every thread's quiet()
// before the body returns (the completion then signals the peer).
template <class T>
__device__ void pulse_put(autarky::TaskCtx& ctx, const JacobiPulse& a, unsigned par) {
    const T* src = reinterpret_cast<const T*>(a.a) + par * a.len;
    T* dst = reinterpret_cast<T*>(a.a) + par * a.len;  // symmetric: the peer's copy is at the same address
    const unsigned nx = a.shape[2], ny = a.shape[1];
    const unsigned long long rows = (unsigned long long)a.shape[0] * ny;
    for (unsigned long long r = 0; r < rows; ++r) {
        const unsigned y = (unsigned)(r % ny);
        const unsigned z = (unsigned)(r / ny);
        const unsigned long long si = (unsigned long long)(a.lo[0] + z) * a.sz + (unsigned long long)(a.lo[1] + y) * a.sy + a.lo[2];
        const unsigned long long di =
            (unsigned long long)(a.rlo[0] + z) * a.rsz + (unsigned long long)(a.rlo[1] + y) * a.rsy + a.rlo[2];
        ctx.put_block(dst + di, src + si, nx, a.to_pe);
    }
    ctx.quiet();
}
#endif

template <class T>
__device__ void pulse(autarky::TaskCtx& ctx, const JacobiPulse& a) {
    const unsigned par = (ctx.iteration + 1) % 2;
#ifdef AUTARKY_NVSHMEM
    if (!ctx.reachable(a.to_pe)) {
        pulse_put<T>(ctx, a, par);
        return;
    }
#endif
    const T* src = reinterpret_cast<const T*>(a.a) + par * a.len;
    T* dst = ctx.peer(reinterpret_cast<T*>(a.a), a.to_pe) + par * a.len;
    copy_box<T>(src, dst, a);
}

}  // namespace jacobi

__device__ __noinline__ void jacobi_tile(autarky::TaskCtx& ctx) {
    const JacobiTile& a = ctx.args<JacobiTile>();
    if (a.f64) jacobi::tile<double>(ctx, a);
    else jacobi::tile<float>(ctx, a);
}

// Out of line: its batched copy would otherwise add to the megakernel's own
// register pressure (ptxas: spills of the inlined form 296 -> 392 bytes).
__device__ __noinline__ void jacobi_pulse(autarky::TaskCtx& ctx) {
    const JacobiPulse& a = ctx.args<JacobiPulse>();
    if (a.f64) jacobi::pulse<double>(ctx, a);
    else jacobi::pulse<float>(ctx, a);
}

__device__ void jacobi_check_local(autarky::TaskCtx& ctx) {
    const JacobiCheck& a = ctx.args<JacobiCheck>();
    const unsigned n = ctx.iteration;
    if (!jacobi::is_check(n, a.check_every, a.iterations)) return;
    // Every tile's partial of this check (acquire). No edges from the tiles:
    // they would make this task poll every tile at every iteration. One
    // counter a slot, not one a run: a tile may finish check n + 1 before
    // another finishes n, and a running total would then count it for n.
    unsigned* count = reinterpret_cast<unsigned*>(a.arrivals) + n % 4;
    __shared__ unsigned arrived;
    if (threadIdx.x == 0) arrived = ctx.wait_geq(count, a.tiles, jacobi::ARRIVALS_WORD);
    __syncthreads();  // thread 0's acquire and verdict, to the block
    if (!arrived) return;
    // Tile order (deterministic), staged through shared memory by the block.
    const double* part = reinterpret_cast<const double*>(a.partials) + (n % 4) * a.tiles;
    __shared__ double chunk[512];
    double s = 0;
    for (unsigned t0 = 0; t0 < a.tiles; t0 += 512) {
        const unsigned m = min(512u, a.tiles - t0);
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x) chunk[i] = part[t0 + i];
        __syncthreads();
        if (threadIdx.x == 0)
            for (unsigned i = 0; i < m; ++i) s += chunk[i];
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    // The slot's next arrivals (tiles at n + 4) come after this task's
    // completion, through the tiles' distance-2 wait for check_global at
    // n + 2 (module docs): a plain store suffices.
    *count = 0;
    double* slots = reinterpret_cast<double*>(a.slots);
#ifdef AUTARKY_NVSHMEM
    for (unsigned pe = 0; pe < a.pes; ++pe) ctx.put_value(slots + (n % 4) * a.pes + ctx.pe, s, pe);
    ctx.quiet();
#else
    for (unsigned pe = 0; pe < a.pes; ++pe) ctx.peer(slots, pe)[(n % 4) * a.pes + ctx.pe] = s;
#endif
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
