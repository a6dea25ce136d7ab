// Floor of a pinned neighbour hop on this GPU: a 32 x 32 grid of blocks,
// each waiting for its four neighbours' previous iteration (a flag >= n),
// then publishing n + 1 — the dispatch bench's pinned stencil row without
// the runtime. Variants of the wait, fence, barrier and release, of the
// flags' spacing (8 bytes to 256 apart), and of what the runtime's pinned
// path adds (a progress counter, a task id loaded an instance, a polling
// comm block, serial instructions on thread 0). A CUDA program, not a cargo
// bench: on the GPU machine,
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o pinned_hop benches/floor/pinned_hop.cu
//   ./pinned_hop          # every variant at 128 and 256 threads, packed and a line apart
//   ./pinned_hop strides  # the spacing sweep
//   ./pinned_hop x        # the runtime's additions, packed and a line apart
//   ./pinned_hop s        # two roles: the release of n beside the poll of n + 1
//   ./pinned_hop p        # a hop's parts (MEMBAR, a poll's round trip) and pipelined polls
//   ./pinned_hop b        # fewer polls: a spin after each failed one, or before the first
//   ./pinned_hop r        # the runtime solo path's pre-release pieces, one at a time
//   ./pinned_hop g        # fewer blocks: smaller grids, and a 32 x 32 grid of tiles in
//                         # patches of 1-16 tiles a block (one release fence a patch)
//   ./pinned_hop c        # the 1 x 1 and 2 x 2 patches' thread 0 cycles by phase
//   ./pinned_hop q        # the runtime round path's pieces on the 2 x 2 patch (session 42)
//
// Each row: median [min-max] µs an iteration of 7 runs of 20000 iterations
// (device events around a cooperative launch, after a 2000-iteration warm-up).
// Results and what they showed: docs/performance.md, session 26.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p){uint64_t v; asm volatile("ld.relaxed.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p){uint64_t v; asm volatile("ld.acquire.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ uint64_t ld_volatile(const uint64_t* p){uint64_t v; asm volatile("ld.volatile.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v){asm volatile("st.release.gpu.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v){asm volatile("st.relaxed.gpu.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void fence_acquire(){asm volatile("fence.acquire.gpu;":::"memory");}
__device__ __forceinline__ void fence_acq_rel(){asm volatile("fence.acq_rel.gpu;":::"memory");}

enum Mode {
  OURS = 0,        // thread 0: relaxed polls (all issued), fence.acquire, 2 barriers, st.release
  ACQ_POLL = 1,    // thread 0: ld.acquire polls, 2 barriers, st.release
  ACQREL_FENCE = 2,// fence.acq_rel instead of fence.acquire
  ONE_BAR = 3,     // OURS with the body barrier dropped (not valid with a body: the cost of a barrier)
  NO_BAR = 4,      // thread 0 alone, no barriers: the flag exchange itself
  LANES = 5,       // lanes 0..3 of warp 0 poll one neighbour each (relaxed), __all_sync, fence.acquire in each, 2 barriers
  BAR_ONLY = 6,    // no waiting at all: 2 barriers + the release per iteration (local overhead)
  FENCE_ST = 7,    // release as fence.acq_rel + st.relaxed
  VOLATILE = 8,    // ld.volatile polls + fence.acquire
  PROG = 10,       // OURS + every 16 iterations a per-block stats store and a red.add to one progress word
  LISTLOAD = 11,   // OURS + the task id loaded from a global list every instance (after the acquire), used after the barrier
  COMMSPIN = 12,   // OURS + one extra block polling a status word and sweeping the flags (the comm block)
  ALLX = 13,       // PROG + LISTLOAD + COMMSPIN
  HEAVY_POLL = 14, // OURS + ~120 dependent instructions in each poll iteration (thread 0)
  HEAVY_POST = 15, // OURS + ~200 dependent instructions between seeing the flags and the release (thread 0)
  HEAVY_BOTH = 16, // both
  SPLIT = 20,      // two roles: lane 0 of warp 1 polls for instance n (relaxed, fence.acquire) while
                   // thread 0 releases instance n - 1 (st.release); one barrier joins them, then
                   // the body and its barrier (the release of n leaves with the poll of n + 1)
  SPLIT_HEAVY = 21,// SPLIT + ~200 dependent instructions after the release (thread 0's bookkeeping)
                   // and ~120 between the poll and the barrier (warp 1's)
  HEAVY_POSTREL = 22, // OURS + the same ~200 after the release and ~120 after the poll, on thread 0
  FENCE_ONLY = 30, // no waiting: 2 barriers + fence.acq_rel, no store (a MEMBAR with nothing outstanding)
  BAR_RELAXED = 31,// no waiting: 2 barriers + st.relaxed (the loop without any fence)
  RTT = 32,        // OURS, each poll timed (clock64): the poll's round trip under this load -> g_rtt
  PIPE2 = 33,      // OURS with 2 batches of polls in flight, issued g_delay cycles apart (session 37)
  PIPE4 = 34,      // ... 4 batches
  BACKOFF = 35,    // OURS, g_delay cycles of spinning after each failed poll (fewer polls on the lines)
  FIRST_DELAY = 36,// OURS, g_delay cycles of spinning before an instance's first poll
  COUNT = 37,      // OURS, polls counted -> g_rtt[1] (one add a poll: how many polls an instance takes)
  // The runtime solo path's pre-release pieces, one at a time (session 37, not yet run):
  BAR_RED = 40,    // OURS, thread 0's verdict through the first barrier (__syncthreads_and: BAR.RED + B2R)
  FAILED_FLAG = 41,// OURS + a shared failure flag read after the body barrier, and a branch on it
  KIND_SWITCH = 42,// OURS + the body called through a switch on a kind held in a register (one empty case)
  PRE_ALL = 43,    // all three
};

__device__ unsigned long long g_progress[32];
__device__ unsigned long long g_rtt[2];  // RTT: cycles and polls, summed over blocks
__device__ int g_delay;                  // PIPE*: cycles between the batches' first issues
__device__ unsigned long long g_stats[8 * 2048];
__device__ unsigned g_list[2048];
__device__ unsigned g_status[32];
template <int M>
__global__ void hop(uint64_t* flags, int stride, int rows, int cols, int iters, int body_writes, float* sink) {
  const int t = blockIdx.x;
  __shared__ unsigned sh_task;
  __shared__ unsigned sh_failed;
  if (threadIdx.x == 0) sh_failed = 0;
  __syncthreads();
  // The kind a switch dispatches on (KIND_SWITCH): 0, but not known to
  // the compiler.
  const unsigned kind = (unsigned)body_writes >> 1;
  if ((M == COMMSPIN || M == ALLX) && t == rows * cols) {
    // the comm block: polls a status word; every 64 polls sweeps 64 flags
    if (threadIdx.x == 0) {
      unsigned k = 0;
      for (unsigned polls = 1;; ++polls) {
        unsigned v; asm volatile("ld.relaxed.gpu.u32 %0,[%1];":"=r"(v):"l"(g_status):"memory");
        if (v) break;
        if (polls % 64 == 0) {
          uint64_t least = ~0ull;
          for (int j = 0; j < 64; ++j, k = (k + 1) % (rows * cols)) { uint64_t f = ld_relaxed(flags + (size_t)k * stride); least = f < least ? f : least; }
          if (least >= (uint64_t)iters) break;
        }
      }
    }
    return;
  }
  if (t >= rows * cols) return;
  const int r = t / cols, c = t % cols;
  int nb[4]; int m = 0;
  if (r > 0) nb[m++] = t - cols;
  if (r + 1 < rows) nb[m++] = t + cols;
  if (c > 0) nb[m++] = t - 1;
  if (c + 1 < cols) nb[m++] = t + 1;
  for (int k = m; k < 4; ++k) nb[k] = nb[0];
  uint64_t* mine = flags + (size_t)t * stride;
  if constexpr (M == SPLIT || M == SPLIT_HEAVY) {
    for (int n = 0; n < iters; ++n) {
      if (threadIdx.x == 32) {
        for (;;) {
          uint64_t v[4];
#pragma unroll
          for (int k = 0; k < 4; ++k) v[k] = ld_relaxed(flags + (size_t)nb[k] * stride);
          bool ok = true;
#pragma unroll
          for (int k = 0; k < 4; ++k) ok = ok && v[k] >= (uint64_t)n;
          if (ok) break;
        }
        fence_acquire();
        if (M == SPLIT_HEAVY) {
          unsigned x = (unsigned)n;
#pragma unroll 1
          for (int q = 0; q < 40; ++q) x = x * 3u + (x >> 7);
          if (x == 0x12345u) sink[2] = 2.f;
        }
      }
      if (threadIdx.x == 0 && n > 0) {
        st_release(mine, n);
        if (M == SPLIT_HEAVY) {
          unsigned x = (unsigned)n;
#pragma unroll 1
          for (int q = 0; q < 66; ++q) x = x * 3u + (x >> 7);
          if (x == 0x12345u) sink[3] = 2.f;
        }
      }
      __syncthreads();
      if (body_writes) sink[(size_t)t * blockDim.x + threadIdx.x] = (float)n;
      __syncthreads();
    }
    if (threadIdx.x == 0) st_release(mine, iters);
  } else {
  unsigned long long rtt_cycles = 0, rtt_polls = 0;
  for (int n = 0; n < iters; ++n) {
    if (M == PIPE2 || M == PIPE4) {
      if (threadIdx.x == 0) {
        // K batches of the four polls in flight, the k-th issued k * delay
        // cycles after the first; each is checked when it returns and
        // reissued at once, so the flags are sampled every ~RTT / K
        // instead of every RTT (the loads stay in program order: asm
        // volatile).
        constexpr int K = (M == PIPE2) ? 2 : 4;
        const long long delay = g_delay;
        uint64_t v[K][4];
#pragma unroll
        for (int k = 0; k < K; ++k) {
#pragma unroll
          for (int j = 0; j < 4; ++j) v[k][j] = ld_relaxed(flags + (size_t)nb[j] * stride);
          if (k + 1 < K) { const long long t0 = clock64(); while (clock64() - t0 < delay) {} }
        }
        bool done = false;
        while (!done) {
#pragma unroll
          for (int k = 0; k < K; ++k) {
            if (!done) {
              bool ok = true;
#pragma unroll
              for (int j = 0; j < 4; ++j) ok = ok && v[k][j] >= (uint64_t)n;
              if (ok) done = true;
              else {
#pragma unroll
                for (int j = 0; j < 4; ++j) v[k][j] = ld_relaxed(flags + (size_t)nb[j] * stride);
              }
            }
          }
        }
        fence_acquire();
      }
    } else if (M == LANES) {
      if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        const uint64_t* f = flags + (size_t)nb[lane & 3] * stride;
        for (;;) {
          bool ok = lane >= 4 || ld_relaxed(f) >= (uint64_t)n;
          if (__all_sync(0xffffffffu, ok)) break;
        }
        fence_acquire();
      }
    } else if (M != BAR_ONLY && M != FENCE_ONLY && M != BAR_RELAXED && threadIdx.x == 0) {
      if (M == FIRST_DELAY) { const long long t0 = clock64(); while (clock64() - t0 < g_delay) {} }
      for (;;) {
        const long long t0 = (M == RTT) ? clock64() : 0;
        uint64_t v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const uint64_t* f = flags + (size_t)nb[k] * stride;
          v[k] = (M == ACQ_POLL) ? ld_acquire(f) : (M == VOLATILE) ? ld_volatile(f) : ld_relaxed(f);
        }
        bool ok = true;
#pragma unroll
        for (int k = 0; k < 4; ++k) ok = ok && v[k] >= (uint64_t)n;
        if (M == RTT) { rtt_cycles += clock64() - t0; ++rtt_polls; }
        if (M == COUNT) ++rtt_polls;
        if (M == BACKOFF && !ok) { const long long t1 = clock64(); while (clock64() - t1 < g_delay) {} }
        if (M == HEAVY_POLL || M == HEAVY_BOTH) {
          unsigned x = (unsigned)v[0];
#pragma unroll 1
          for (int q = 0; q < 40; ++q) x = x * 3u + (x >> 7);
          if (x == 0x12345u) sink[1] = 2.f;
        }
        if (ok) break;
      }
      if (M == ACQREL_FENCE) fence_acq_rel();
      else if (M != ACQ_POLL) fence_acquire();
      if (M == HEAVY_POSTREL) {
        unsigned x = (unsigned)n;
#pragma unroll 1
        for (int q = 0; q < 40; ++q) x = x * 3u + (x >> 7);
        if (x == 0x12345u) sink[2] = 2.f;
      }
      if (M == HEAVY_POST || M == HEAVY_BOTH) {
        unsigned x = (unsigned)n;
#pragma unroll 1
        for (int q = 0; q < 66; ++q) x = x * 3u + (x >> 7);
        if (x == 0x12345u) sink[2] = 2.f;
      }
    }
    if ((M == LISTLOAD || M == ALLX) && threadIdx.x == 0) { sh_task = *(volatile unsigned*)&g_list[t]; }
    if (M == BAR_RED || M == PRE_ALL) {
      if (!__syncthreads_and(1)) break;
    } else if (M != NO_BAR) __syncthreads();
    if (M == KIND_SWITCH || M == PRE_ALL) {
      switch (kind) {
        case 0: break;                                     // the empty body
        case 1: sink[(size_t)t * blockDim.x + threadIdx.x] = 1.f; break;
        default: if (threadIdx.x == 0) sh_failed = 1; break;
      }
    }
    if ((M == LISTLOAD || M == ALLX) && sh_task == 0xffffffffu) sink[0] = 1.f;
    if (body_writes) sink[(size_t)t * blockDim.x + threadIdx.x] = (float)n;
    if (M != NO_BAR && M != ONE_BAR) __syncthreads();
    if ((M == FAILED_FLAG || M == PRE_ALL) && *(volatile unsigned*)&sh_failed != 0) break;
    if (threadIdx.x == 0) {
      if (M == FENCE_ONLY) fence_acq_rel();
      else if (M == BAR_RELAXED) st_relaxed(mine, n + 1);
      else if (M == FENCE_ST) { fence_acq_rel(); st_relaxed(mine, n + 1); }
      else st_release(mine, n + 1);
      if (M == HEAVY_POSTREL) {
        unsigned x = (unsigned)n;
#pragma unroll 1
        for (int q = 0; q < 66; ++q) x = x * 3u + (x >> 7);
        if (x == 0x12345u) sink[3] = 2.f;
      }
      if ((M == PROG || M == ALLX) && (n + 1) % 16 == 0) {
        asm volatile("st.relaxed.gpu.u64 [%0],%1;"::"l"(g_stats + 8 * t),"l"((unsigned long long)n):"memory");
        asm volatile("red.relaxed.gpu.global.add.u64 [%0],%1;"::"l"(g_progress),"l"(16ull):"memory");
      }
    }
  }
  if ((M == RTT || M == COUNT) && threadIdx.x == 0) { atomicAdd(&g_rtt[0], rtt_cycles); atomicAdd(&g_rtt[1], rtt_polls); }
  }
}

// A 32 x 32 grid of tiles (a flag each, `stride` words apart) in patches of
// PX x PY tiles a block (session 38): thread 0 polls every neighbour of the
// patch outside it (relaxed, all issued, then fence.acquire), the block runs
// one barrier, then a barrier a tile (the tiles' empty bodies, as the
// runtime runs a pinned list), then — Batched — one fence.acq_rel and a
// relaxed store of each tile's flag: the release of a patch's instances
// behind one MEMBAR (valid as a release of every tile's writes: the fence
// in the storing thread after the barrier covers the block's writes), or —
// not Batched — a st.release after each tile's barrier. The addresses are
// computed once, in registers (a missing neighbour at the grid's edge polls
// the patch's own first flag, which is always far enough).
// X (session 42, mode q): the runtime round path's pieces added to the
// batched patch one at a time (bits below), to price each on the floor.
enum PatchX {
  PX_REL = 1,       // the release as fence.release (the runtime's since session 41), not fence.acq_rel
  PX_VERDICT = 2,   // thread 0's verdict through a shared word: a store before the first barrier, every thread loads it after, and a branch
  PX_FAILED = 4,    // a shared failure flag every thread loads after the last body's barrier, and a branch
  PX_PROG = 8,      // every 4th iteration (16 tiles) a per-block stats store and a generic red.add to one progress word (the runtime's publish_completed)
  PX_PROG_G = 16,   // ... the red.add on a .global address
  PX_TICK = 32,     // a clock64 read and a compare on thread 0 after the stores (loop_tick's test)
  PX_GROUP = 64,    // a block's K words in one line (word j of block b at b * stride + j), not a line a tile
  PX_ONEBAR = 128,  // one barrier for the bodies instead of one a tile (the cost of K - 1 barriers)
  PX_LIMIT = 256,   // thread 0 rereads the limit from a kernel argument after the acquire (the runtime's post-acquire check)
};
template <int PX, int PY, bool Batched, bool Clock = false, int X = 0>
__global__ void __launch_bounds__(128, 8) patch_hop(uint64_t* flags, int stride, int iters) {
  constexpr int R = 32, C = 32, M = 2 * (PX + PY), K = PX * PY;
  constexpr int pcols = C / PX;
  const int pr = (blockIdx.x / pcols) * PY, pc = (blockIdx.x % pcols) * PX;
  // Tile (r, c)'s word: a line a tile, or (PX_GROUP) its block's line.
  auto word_of = [&](int r, int c) -> uint64_t* {
    if (X & PX_GROUP) return flags + (size_t)((r / PY) * pcols + c / PX) * stride + (r % PY) * PX + c % PX;
    return flags + (size_t)(r * C + c) * stride;
  };
  uint64_t* own = word_of(pr, pc);
  const uint64_t* nb[M];
#pragma unroll
  for (int d = 0; d < PY; ++d) {
    nb[2 * d] = pc > 0 ? word_of(pr + d, pc - 1) : own;
    nb[2 * d + 1] = pc + PX < C ? word_of(pr + d, pc + PX) : own;
  }
#pragma unroll
  for (int d = 0; d < PX; ++d) {
    nb[2 * PY + 2 * d] = pr > 0 ? word_of(pr - 1, pc + d) : own;
    nb[2 * PY + 2 * d + 1] = pr + PY < R ? word_of(pr + PY, pc + d) : own;
  }
  uint64_t* mine[K];
#pragma unroll
  for (int j = 0; j < K; ++j) mine[j] = word_of(pr + j / PX, pc + j % PX);
  __shared__ unsigned sh_run, sh_failed;
  if (threadIdx.x == 0) { sh_run = 1; sh_failed = 0; }
  __syncthreads();
  const bool lead = threadIdx.x == 0;
  unsigned long long tick_at = 0, completed = 0;
  // Clock (mode c): thread 0's cycles an iteration by phase, printed for a
  // few blocks — the runtime's -DAUTARKY_EXP_PHASE_CLOCK marks.
  unsigned long long ph[5] = {0, 0, 0, 0, 0}, ph_at = 0;
  auto mark = [&](int k, int n) {
    if (!Clock || threadIdx.x != 0) return;
    const unsigned long long now = clock64();
    if (n >= 100) ph[k] += now - ph_at;
    ph_at = now;
  };
  for (int n = 0; n < iters; ++n) {
    mark(4, n);
    bool run = true;
    if (lead) {
      for (;;) {
        uint64_t v[M];
#pragma unroll
        for (int j = 0; j < M; ++j) v[j] = ld_relaxed(nb[j]);
        bool ok = true;
#pragma unroll
        for (int j = 0; j < M; ++j) ok = ok && v[j] >= (uint64_t)n;
        if (ok) break;
      }
      mark(0, n);
      fence_acquire();
      if (X & PX_LIMIT) run = n < *(volatile int*)&iters;
      if (X & PX_VERDICT) sh_run = run;
    }
    __syncthreads();
    if ((X & PX_VERDICT) && !*(volatile unsigned*)&sh_run) break;
    mark(1, n);
#pragma unroll
    for (int j = 0; j < ((X & PX_ONEBAR) ? 1 : K); ++j) {
      __syncthreads();
      if (!Batched && threadIdx.x == 0) st_release(mine[j], n + 1);
    }
    if ((X & PX_FAILED) && *(volatile unsigned*)&sh_failed != 0) break;
    mark(2, n);
    if (Batched && lead) {
      if (X & PX_REL) asm volatile("fence.release.gpu;" ::: "memory");
      else fence_acq_rel();
      mark(3, n);
#pragma unroll
      for (int j = 0; j < K; ++j) st_relaxed(mine[j], n + 1);
      completed += K;
      if ((X & (PX_PROG | PX_PROG_G)) && completed % 16 == 0) {
        st_relaxed((uint64_t*)&g_stats[blockIdx.x], completed);
        if (X & PX_PROG_G) asm volatile("red.relaxed.gpu.global.add.u64 [%0],%1;"::"l"(g_progress),"l"(16ull):"memory");
        else asm volatile("red.relaxed.gpu.add.u64 [%0],%1;"::"l"(g_progress),"l"(16ull):"memory");
      }
      if (X & PX_TICK) {
        const unsigned long long now = clock64();
        if (now - tick_at >= 40000) {
          tick_at = now;
          if (*(volatile unsigned*)g_status != 0) break;
        }
      }
    }
  }
  if (Clock && threadIdx.x == 0 && iters >= 1000 && blockIdx.x % 61 == 7) {
    const double d = iters - 100;
    printf("phase floor %dx%d block %u: wait %.0f acq+bar %.0f bodies %.0f fence %.0f stores+tail %.0f cycles\n", PX,
           PY, blockIdx.x, ph[0] / d, ph[1] / d, ph[2] / d, ph[3] / d, ph[4] / d);
  }
}

template <int PX, int PY, bool Batched, bool Clock = false, int X = 0>
float run_patch(int stride, int iters, uint64_t* flags) {
  CK(cudaMemset(flags, 0, (size_t)32 * 32 * stride * 8));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  void* args[] = {&flags, &stride, &iters};
  CK(cudaEventRecord(a));
  CK(cudaLaunchCooperativeKernel((void*)patch_hop<PX, PY, Batched, Clock, X>, (32 / PX) * (32 / PY), 128, args, 0, 0));
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaGetLastError());
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000.f / iters;
}

template <int PX, int PY, bool Batched, int X = 0>
void patch_row(int stride, uint64_t* flags, const char* what = "") {
  const int iters = 20000, reps = 7;
  run_patch<PX, PY, Batched, false, X>(stride, 2000, flags);
  std::vector<float> v;
  for (int i = 0; i < reps; ++i) v.push_back(run_patch<PX, PY, Batched, false, X>(stride, iters, flags));
  std::sort(v.begin(), v.end());
  printf("patch %dx%d %-9s (%4d blocks) thr 128 stride %2d %-22s: median %.3f us/iter [%.3f-%.3f]\n", PX, PY,
         Batched ? "batched" : "per tile", (32 / PX) * (32 / PY), stride, what, v[reps/2], v[0], v[reps-1]);
}

__global__ void empty_kernel() {}

__global__ void gridsync(int iters) {
  cg::grid_group g = cg::this_grid();
  for (int n = 0; n < iters; ++n) g.sync();
}

template <int M>
float run(int rows, int cols, int threads, int stride, int iters, int body, uint64_t* flags, float* sink) {
  CK(cudaMemset(flags, 0, (size_t)rows * cols * stride * 8));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  void* args[] = {&flags, &stride, &rows, &cols, &iters, &body, &sink};
  CK(cudaEventRecord(a));
  CK(cudaLaunchCooperativeKernel((void*)hop<M>, rows * cols + ((M == COMMSPIN || M == ALLX) ? 1 : 0), threads, args, 0, 0));
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaGetLastError());
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000.f / iters;
}

template <int M>
void row(const char* name, int rows, int cols, int threads, int stride, int body, uint64_t* flags, float* sink) {
  const int iters = 20000, reps = 7;
  run<M>(rows, cols, threads, stride, 2000, body, flags, sink);
  std::vector<float> v;
  for (int i = 0; i < reps; ++i) v.push_back(run<M>(rows, cols, threads, stride, iters, body, flags, sink));
  std::sort(v.begin(), v.end());
  printf("%-14s %2dx%-2d thr %3d stride %2d body %d : median %.3f us/iter [%.3f-%.3f]\n", name, rows, cols, threads, stride, body, v[reps/2], v[0], v[reps-1]);
}

int main(int argc, char** argv) {
  int rows = 32, cols = 32;
  uint64_t* flags; float* sink;
  CK(cudaMalloc(&flags, (size_t)rows * cols * 32 * 8));
  CK(cudaMalloc(&sink, (size_t)rows * cols * 256 * 4));
  if (argc > 1 && argv[1][0] == 's') {
    // The two-role hop (session 34): the release of n beside the poll of n + 1.
    for (int stride : {1, 16}) {
      for (int body : {0, 1}) {
        row<OURS>("ours", rows, cols, 128, stride, body, flags, sink);
        row<SPLIT>("split", rows, cols, 128, stride, body, flags, sink);
      }
      row<HEAVY_POSTREL>("heavy_postrel", rows, cols, 128, stride, 0, flags, sink);
      row<SPLIT_HEAVY>("split_heavy", rows, cols, 128, stride, 0, flags, sink);
      row<OURS>("ours", rows, cols, 256, stride, 0, flags, sink);
      row<SPLIT>("split", rows, cols, 256, stride, 0, flags, sink);
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'g') {
    // Session 38: does a hop shorten with fewer blocks? The hop on smaller
    // grids of blocks, then the 32 x 32 tiles in patches a block.
    for (int rep = 0; rep < 2; ++rep) {
      const int dims[][2] = {{32, 32}, {32, 16}, {16, 16}, {16, 8}, {12, 11}, {8, 8}};
      for (auto& d : dims) row<OURS>("ours", d[0], d[1], 128, 16, 0, flags, sink);
      patch_row<1, 1, true>(16, flags);
      patch_row<2, 1, true>(16, flags);
      patch_row<2, 1, false>(16, flags);
      patch_row<2, 2, true>(16, flags);
      patch_row<2, 2, false>(16, flags);
      patch_row<4, 2, true>(16, flags);
      patch_row<4, 2, false>(16, flags);
      patch_row<4, 4, true>(16, flags);
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'q') {
    // Session 42: the runtime round path's pieces on the floor's 2 x 2
    // patch, one at a time and together, twice (PatchX).
    for (int rep = 0; rep < 2; ++rep) {
      patch_row<2, 2, true>(16, flags, "floor");
      patch_row<2, 2, true, PX_REL>(16, flags, "fence.release");
      patch_row<2, 2, true, PX_VERDICT>(16, flags, "verdict word");
      patch_row<2, 2, true, PX_FAILED>(16, flags, "failure flag");
      patch_row<2, 2, true, PX_PROG>(16, flags, "progress, generic red");
      patch_row<2, 2, true, PX_PROG_G>(16, flags, "progress, global red");
      patch_row<2, 2, true, PX_TICK>(16, flags, "tick");
      patch_row<2, 2, true, PX_LIMIT>(16, flags, "limit reread");
      patch_row<2, 2, true, PX_REL | PX_VERDICT | PX_FAILED | PX_PROG | PX_TICK | PX_LIMIT>(16, flags, "all six (generic red)");
      patch_row<2, 2, true, PX_REL | PX_VERDICT | PX_FAILED | PX_PROG_G | PX_TICK | PX_LIMIT>(16, flags, "all six (global red)");
      patch_row<2, 2, true, PX_GROUP>(16, flags, "a line a block");
      patch_row<2, 2, true, PX_GROUP | PX_REL>(16, flags, "a line a block, rel");
      patch_row<2, 2, true, PX_ONEBAR>(16, flags, "one body barrier");
      patch_row<1, 1, true>(16, flags, "floor 1x1");
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'c') {
    // Session 39: the floor's patches by phase (thread 0's cycles), one
    // 20000-iteration run each after the timed rows, beside the runtime's
    // -DAUTARKY_EXP_PHASE_CLOCK print of the same stencil.
    patch_row<1, 1, true>(16, flags);
    patch_row<2, 2, true>(16, flags);
    run_patch<1, 1, true, true>(16, 20000, flags);
    run_patch<2, 2, true, true>(16, 20000, flags);
    CK(cudaDeviceSynchronize());
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'r') {
    // The runtime solo path's pre-release pieces on the floor's hop.
    for (int rep = 0; rep < 2; ++rep) {
      row<OURS>("ours", rows, cols, 128, 16, 0, flags, sink);
      row<BAR_RED>("bar_red", rows, cols, 128, 16, 0, flags, sink);
      row<FAILED_FLAG>("failed_flag", rows, cols, 128, 16, 0, flags, sink);
      row<KIND_SWITCH>("kind_switch", rows, cols, 128, 16, 0, flags, sink);
      row<PRE_ALL>("pre_all", rows, cols, 128, 16, 0, flags, sink);
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'b') {
    // Session 37: fewer polls — a spin after each failed poll, or before an
    // instance's first — and how many polls an instance takes.
    for (int stride : {16, 1}) {
      row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
      unsigned long long z[2] = {0, 0};
      CK(cudaMemcpyToSymbol(g_rtt, z, sizeof z));
      row<COUNT>("count", rows, cols, 128, stride, 0, flags, sink);
      unsigned long long r[2];
      CK(cudaMemcpyFromSymbol(r, g_rtt, sizeof r));
      printf("  %.2f polls an instance\n", (double)r[1] / (7.0 * 20000 + 2000) / (rows * cols));
      for (int delay : {32, 64, 128, 256, 512, 1024}) {
        CK(cudaMemcpyToSymbol(g_delay, &delay, sizeof delay));
        printf("delay %d cycles:\n", delay);
        row<BACKOFF>("backoff", rows, cols, 128, stride, 0, flags, sink);
        row<FIRST_DELAY>("first_delay", rows, cols, 128, stride, 0, flags, sink);
      }
      row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'p') {
    // Session 37: what a hop is made of (the release's MEMBAR, the poll's
    // round trip under this load) and polls pipelined K batches deep.
    for (int stride : {16, 1}) {
      row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
      row<BAR_ONLY>("bar_only", rows, cols, 128, stride, 0, flags, sink);
      row<FENCE_ONLY>("fence_only", rows, cols, 128, stride, 0, flags, sink);
      row<BAR_RELAXED>("bar_relaxed", rows, cols, 128, stride, 0, flags, sink);
      unsigned long long z[2] = {0, 0};
      CK(cudaMemcpyToSymbol(g_rtt, z, sizeof z));
      row<RTT>("rtt", rows, cols, 128, stride, 0, flags, sink);
      unsigned long long r[2];
      CK(cudaMemcpyFromSymbol(r, g_rtt, sizeof r));
      printf("  rtt: %.0f cycles a poll (%llu polls, %.2f an instance)\n", (double)r[0] / r[1], r[1],
             (double)r[1] / (7.0 * 20000 + 2000) / (rows * cols));
      for (int delay : {64, 150, 300, 600}) {
        CK(cudaMemcpyToSymbol(g_delay, &delay, sizeof delay));
        printf("delay %d cycles:\n", delay);
        row<PIPE2>("pipe2", rows, cols, 128, stride, 0, flags, sink);
        row<PIPE4>("pipe4", rows, cols, 128, stride, 0, flags, sink);
      }
      row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
    }
    return 0;
  }
  if (argc > 1 && argv[1][0] == 'x') {
    for (int stride : {1, 16}) {
      row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
      row<PROG>("prog", rows, cols, 128, stride, 0, flags, sink);
      row<LISTLOAD>("listload", rows, cols, 128, stride, 0, flags, sink);
      row<COMMSPIN>("commspin", rows, cols, 128, stride, 0, flags, sink);
      row<ALLX>("allx", rows, cols, 128, stride, 0, flags, sink);
      row<HEAVY_POLL>("heavy_poll", rows, cols, 128, stride, 0, flags, sink);
      row<HEAVY_POST>("heavy_post", rows, cols, 128, stride, 0, flags, sink);
      row<HEAVY_BOTH>("heavy_both", rows, cols, 128, stride, 0, flags, sink);
    }
    return 0;
  }
  if (argc > 1) {
    for (int stride : {1, 2, 4, 8, 16, 32}) row<OURS>("ours", rows, cols, 128, stride, 0, flags, sink);
    for (int stride : {1, 2, 4, 8, 16, 32}) row<LANES>("lanes", rows, cols, 128, stride, 0, flags, sink);
    return 0;
  }
  for (int threads : {128, 256}) {
    for (int stride : {1, 16}) {
      row<OURS>("ours", rows, cols, threads, stride, 0, flags, sink);
      row<ACQ_POLL>("acq_poll", rows, cols, threads, stride, 0, flags, sink);
      row<ACQREL_FENCE>("acqrel_fence", rows, cols, threads, stride, 0, flags, sink);
      row<ONE_BAR>("one_bar", rows, cols, threads, stride, 0, flags, sink);
      row<NO_BAR>("no_bar", rows, cols, threads, stride, 0, flags, sink);
      row<LANES>("lanes", rows, cols, threads, stride, 0, flags, sink);
      row<BAR_ONLY>("bar_only", rows, cols, threads, stride, 0, flags, sink);
      row<FENCE_ST>("fence_st", rows, cols, threads, stride, 0, flags, sink);
      row<VOLATILE>("volatile", rows, cols, threads, stride, 0, flags, sink);
      row<OURS>("ours+body", rows, cols, threads, stride, 1, flags, sink);
    }
  }
  // Baselines: CUDA graph of empty launches (1024 x 128), grid sync per iteration.
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 1000; ++i) empty_kernel<<<rows * cols, 128, 0, s>>>();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> v;
  for (int i = 0; i < 7; ++i) {
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms * 1000.f / 1000);
  }
  std::sort(v.begin(), v.end());
  printf("cuda graph 1024x128 empty: median %.3f us/node [%.3f-%.3f]\n", v[3], v[0], v[6]);
  v.clear();
  for (int i = 0; i < 7; ++i) {
    int it = 20000; void* args[] = {&it};
    CK(cudaEventRecord(a)); CK(cudaLaunchCooperativeKernel((void*)gridsync, rows * cols, 128, args, 0, 0)); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms * 1000.f / it);
  }
  std::sort(v.begin(), v.end());
  printf("grid.sync 1024x128: median %.3f us/iter [%.3f-%.3f]\n", v[3], v[0], v[6]);
  return 0;
}
