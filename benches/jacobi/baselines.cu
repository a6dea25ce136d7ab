// Jacobi baselines of the jacobi bench (benches/jacobi/baselines.rs says
// what each is). f32, padded arrays (ghost layer 1 on every axis) holding
// the Dirichlet values, row-major, x fastest. The update formulas are
// autarky's jacobi_tile's (host/src/solvers/jacobi_kernels.cu), term for
// term in the same order, so the grids agree bit for bit.

#define TX 32
#define TY 8
#define RY 4
#define RZ 8

struct Sweep {              // one sweep: in -> out
    const float* in;
    float* out;
    double* norm;           // jacobi2d_step_norm: adds the squared update here
    unsigned nx, ny;        // interior cells along x and y (3D: a cube of nx)
    unsigned tiles_x, tiles_y, tiles;
    unsigned pad;
};

struct Persist {            // all iterations in one cooperative launch
    float* a;               // read at even iterations
    float* b;               // read at odd iterations
    unsigned* counter;      // barrier arrivals (zero at launch)
    unsigned n, tiles_x, tiles_y, tiles, iterations, dim;
    unsigned pad;
};

// 2D 5-point on a padded (ny+2) x (nx+2) array, tile t of 32 x 32 cells;
// with NORM, returns this thread's sum of squared updates.
template <bool NORM>
__device__ __forceinline__ double tile2d(const float* __restrict__ in, float* __restrict__ out,
                                         unsigned nx, unsigned ny, unsigned tiles_x, unsigned t) {
    const unsigned long long s = nx + 2;
    const unsigned x = (t % tiles_x) * TX + threadIdx.x % TX;
    const unsigned y0 = (t / tiles_x) * (TY * RY) + (threadIdx.x / TX) * RY;
    double acc = 0;
    if (x >= nx || y0 >= ny) return acc;
    unsigned long long i = (y0 + 1ull) * s + x + 1;
    float up = in[i - s], mid = in[i];
    for (unsigned r = 0; r < RY && y0 + r < ny; ++r, i += s) {
        const float down = in[i + s];
        // autarky: (T)0.25 * ((in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1]))
        const float v = 0.25f * ((up + down) + (in[i - 1] + in[i + 1]));
        out[i] = v;
        if (NORM) {
            const double d = (double)v - (double)mid;
            acc += d * d;
        }
        up = mid;
        mid = down;
    }
    return acc;
}

// 3D 7-point on the padded (n+2)^3 array, tile t of 32 x 8 x 8 cells.
__device__ __forceinline__ void tile3d(const float* __restrict__ in, float* __restrict__ out,
                                       unsigned n, unsigned tiles_x, unsigned tiles_y, unsigned t) {
    const unsigned long long s = n + 2, p = s * s;
    const unsigned x = (t % tiles_x) * TX + threadIdx.x % TX;
    const unsigned y = ((t / tiles_x) % tiles_y) * TY + threadIdx.x / TX;
    const unsigned z0 = (t / (tiles_x * tiles_y)) * RZ;
    if (x >= n || y >= n || z0 >= n) return;
    unsigned long long i = (z0 + 1ull) * p + (y + 1ull) * s + x + 1;
    float below = in[i - p], mid = in[i];
    for (unsigned r = 0; r < RZ && z0 + r < n; ++r, i += p) {
        const float above = in[i + p];
        // autarky: ((in[i - sz] + in[i + sz]) + (in[i - sy] + in[i + sy]) + (in[i - 1] + in[i + 1])) / (T)6
        out[i] = ((below + above) + (in[i - s] + in[i + s]) + (in[i - 1] + in[i + 1])) / 6.0f;
        below = mid;
        mid = above;
    }
}

extern "C" __global__ void __launch_bounds__(256) jacobi2d_step(Sweep a) {
    tile2d<false>(a.in, a.out, a.nx, a.ny, a.tiles_x, blockIdx.x);
}

// The sweep plus its squared update norm (block sum, then one double
// atomicAdd per block into *a.norm).
extern "C" __global__ void __launch_bounds__(256) jacobi2d_step_norm(Sweep a) {
    __shared__ double warp_sums[8];
    double v = tile2d<true>(a.in, a.out, a.nx, a.ny, a.tiles_x, blockIdx.x);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0;
        for (int w = 0; w < 8; ++w) s += warp_sums[w];
        atomicAdd(a.norm, s);
    }
}

extern "C" __global__ void __launch_bounds__(256) jacobi3d_step(Sweep a) {
    tile3d(a.in, a.out, a.nx, a.tiles_x, a.tiles_y, blockIdx.x);
}

// Every block arrives once per barrier; the barrier ending iteration `it`
// is passed when the counter reaches (it + 1) * gridDim.x. Release on
// arrival, acquire on the spin (fences on both sides, as cooperative
// groups do), so every block's writes of the iteration are visible after.
__device__ __forceinline__ void grid_barrier(unsigned* counter, unsigned target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
        unsigned v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
        } while (v < target);
        __threadfence();
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(256) jacobi_persistent(Persist p) {
    for (unsigned it = 0; it < p.iterations; ++it) {
        const float* in = (it & 1) ? p.b : p.a;
        float* out = (it & 1) ? p.a : p.b;
        for (unsigned t = blockIdx.x; t < p.tiles; t += gridDim.x) {
            if (p.dim == 2) tile2d<false>(in, out, p.n, p.n, p.tiles_x, t);
            else tile3d(in, out, p.n, p.tiles_x, p.tiles_y, t);
        }
        if (it + 1 < p.iterations) grid_barrier(p.counter, (it + 1) * gridDim.x);
    }
}
