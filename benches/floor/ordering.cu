// What the ordering instructions on a completion's path cost on this GPU,
// alone and under the fan-in row's load: the input of a join publishes its
// word, orders, arrives on the join's counter and reads the join's word,
// once an instance, on thread 0, while other blocks do the same on the
// same counter (the join's other inputs) or poll queue slots (idle blocks).
// Session 29 found an input's completion ~4.5 µs longer than an
// independent task's, and removing its two SC fences and three barriers
// bought only 4-12 %: this sizes each step before the next protocol change
// (docs/performance.md, session 29, Next). A CUDA program, not a cargo
// bench: on the GPU machine,
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o ordering benches/floor/ordering.cu
//   ./ordering
//
// Rows: one variant of the sequence; columns: W worker blocks (the
// inputs; each has its own word, all share one counter and one "sink"
// word) and whether every other block of the grid polls a queue slot
// (relaxed loads, spinning or with a nanosleep of 128 ns — autarky's idle
// blocks after their first 128 polls — 1 µs or 4 µs between them;
// session 30's results in docs/performance.md). Each cell: the
// median [min-max] over 5 runs of ns an iteration of one worker's loop
// (2000 iterations after 200 of warm-up, %globaltimer on thread 0 of
// worker 0). Every iteration's store carries the value the previous
// iteration's RMW or load returned, so the loop is one dependent chain.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p){uint64_t v; asm volatile("ld.relaxed.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v){asm volatile("st.release.gpu.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v){asm volatile("st.relaxed.gpu.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void fence_sc(){asm volatile("fence.sc.gpu;":::"memory");}
__device__ __forceinline__ void fence_acq_rel(){asm volatile("fence.acq_rel.gpu;":::"memory");}
__device__ __forceinline__ uint64_t atom_add_relaxed(uint64_t* p, uint64_t v){uint64_t r; asm volatile("atom.relaxed.gpu.add.u64 %0,[%1],%2;":"=l"(r):"l"(p),"l"(v):"memory"); return r;}
__device__ __forceinline__ uint64_t atom_add_acq_rel(uint64_t* p, uint64_t v){uint64_t r; asm volatile("atom.acq_rel.gpu.add.u64 %0,[%1],%2;":"=l"(r):"l"(p),"l"(v):"memory"); return r;}
__device__ __forceinline__ uint64_t now_ns(){uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t)); return t;}

enum Variant {
  STORE = 0,       // st.relaxed of the own word (the loop's floor)
  RELEASE,         // st.release
  RELEASE_SC,      // st.release; fence.sc
  SC,              // st.relaxed; fence.sc
  ACQ_REL_FENCE,   // st.relaxed; fence.acq_rel
  RMW_RELAXED,     // st.relaxed; atom.relaxed.add on the shared counter (its value used)
  RMW_ACQ_REL,     // st.relaxed; atom.acq_rel.add
  OLD_INPUT,       // st.release; fence.sc; atom.relaxed.add; fence.sc; ld.relaxed of the sink word (main's input)
  RMW_INPUT,       // st.release; atom.acq_rel.add; ld.relaxed of the sink word (the session-29 experiment's input)
  OLD_INPUT_BARS,  // OLD_INPUT inside three block barriers, as complete() runs it
  BATCH8,          // batched arrivals: 7 instances in 8 owe their publish (nothing on the path), the 8th makes
                   // them: fence.acq_rel; st.relaxed; atom.acq_rel.add 8; ld.relaxed of the sink word
  VARIANTS
};
static const char* NAMES[VARIANTS] = {
  "st.relaxed", "st.release", "st.release; fence.sc", "st.relaxed; fence.sc", "st.relaxed; fence.acq_rel",
  "st; atom.relaxed (shared)", "st; atom.acq_rel (shared)", "main's input: rel; sc; rmw; sc; ld",
  "experiment's input: rel; rmw.acq_rel; ld", "main's input + 3 barriers", "batched: 1 in 8 fence; st; rmw; ld"};

// Worker blocks [0, W): thread 0 runs the sequence `iters` times; the
// others wait at the barriers (OLD_INPUT_BARS) or at the end. Other blocks
// poll queue slots (when `poll`) until every worker is done.
__global__ void ordering(int variant, int workers, int iters, int poll, uint64_t* words, uint64_t* counter,
                         uint64_t* sink, uint64_t* slots, unsigned* finished, unsigned long long* out_ns) {
  const int b = blockIdx.x;
  if (b >= workers) {
    if (!poll || threadIdx.x != 0) return;
    const uint64_t* slot = slots + 2 * (b - workers);
    unsigned long long seen = 0;
    while (*(volatile unsigned*)finished < (unsigned)workers) {
      seen += ld_relaxed(slot);
      if (poll > 1) __nanosleep(poll);
    }
    if (seen == 1) out_ns[1] = seen;  // keeps the loads
    return;
  }
  uint64_t* mine = words + 16 * b;  // a line each
  uint64_t v = 1;
  uint64_t t0 = 0;
  for (int i = 0; i < iters; ++i) {
    if (i == iters / 10 && threadIdx.x == 0) t0 = now_ns();  // after the warm-up tenth
    if (variant == OLD_INPUT_BARS) __syncthreads();
    if (threadIdx.x == 0) {
      switch (variant) {
        case STORE: st_relaxed(mine, v); v = ld_relaxed(mine) + 1; break;
        case RELEASE: st_release(mine, v); v = ld_relaxed(mine) + 1; break;
        case RELEASE_SC: st_release(mine, v); fence_sc(); v = ld_relaxed(mine) + 1; break;
        case SC: st_relaxed(mine, v); fence_sc(); v = ld_relaxed(mine) + 1; break;
        case ACQ_REL_FENCE: st_relaxed(mine, v); fence_acq_rel(); v = ld_relaxed(mine) + 1; break;
        case RMW_RELAXED: st_relaxed(mine, v); v += atom_add_relaxed(counter, 1) & 1; break;
        case RMW_ACQ_REL: st_relaxed(mine, v); v += atom_add_acq_rel(counter, 1) & 1; break;
        case OLD_INPUT:
        case OLD_INPUT_BARS:
          st_release(mine, v); fence_sc(); v += atom_add_relaxed(counter, 1) & 1; fence_sc();
          v += ld_relaxed(sink) & 1; break;
        case RMW_INPUT:
          st_release(mine, v); v += atom_add_acq_rel(counter, 1) & 1; v += ld_relaxed(sink) & 1; break;
        case BATCH8:
          if ((i & 7) == 7) {
            fence_acq_rel(); st_relaxed(mine, v); v += atom_add_acq_rel(counter, 8) & 1; v += ld_relaxed(sink) & 1;
          }
          break;
      }
      ++v;
    }
    if (variant == OLD_INPUT_BARS) { __syncthreads(); __syncthreads(); }
  }
  if (threadIdx.x == 0) {
    if (b == 0) out_ns[0] = now_ns() - t0;
    atomicAdd(finished, 1u);
  }
}

int main() {
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int threads = 128;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ordering, threads, 0));
  const int grid = sms * per_sm;
  uint64_t *words, *counter, *sink, *slots;
  unsigned* finished;
  unsigned long long* out;
  CK(cudaMalloc(&words, sizeof(uint64_t) * 16 * grid));
  CK(cudaMalloc(&counter, 256));
  CK(cudaMalloc(&sink, 256));
  CK(cudaMalloc(&slots, sizeof(uint64_t) * 2 * grid));
  CK(cudaMalloc(&finished, sizeof(unsigned)));
  CK(cudaMalloc(&out, 2 * sizeof(unsigned long long)));
  CK(cudaMemset(words, 0, sizeof(uint64_t) * 16 * grid));
  CK(cudaMemset(counter, 0, 256));
  CK(cudaMemset(sink, 0, 256));
  CK(cudaMemset(slots, 0, sizeof(uint64_t) * 2 * grid));
  const int iters = 2200;  // the first tenth is warm-up
  struct Mode { int workers, poll; const char* name; };
  // poll: 0 no pollers; 1 pollers that never sleep; N > 1 pollers that
  // sleep N ns between loads (autarky's idle blocks: 128 after 128 polls).
  const Mode modes[] = {{1, 0, "W=1 quiet"},          {10, 0, "W=10 quiet"},
                        {10, 1, "W=10 + spinning"},   {10, 128, "W=10 + pollers 128ns"},
                        {10, 1024, "W=10 + pollers 1us"}, {10, 4096, "W=10 + pollers 4us"},
                        {1000 < grid ? 1000 : grid, 128, "W=1000 + pollers 128ns"}};
  printf("%d SMs x %d blocks of %d threads; ns an iteration of one worker, median [min-max] of 5 runs\n", sms, per_sm,
         threads);
  printf("%-42s", "variant");
  for (const Mode& m : modes) printf(" | %-24s", m.name);
  printf("\n");
  for (int v = 0; v < VARIANTS; ++v) {
    printf("%-42s", NAMES[v]);
    for (const Mode& m : modes) {
      std::vector<double> ns;
      for (int r = 0; r < 5; ++r) {
        CK(cudaMemset(finished, 0, sizeof(unsigned)));
        int var = v, w = m.workers, it = iters, poll = m.poll;
        void* args[] = {&var, &w, &it, &poll, &words, &counter, &sink, &slots, &finished, &out};
        CK(cudaLaunchCooperativeKernel((void*)ordering, grid, threads, args, 0, 0));
        CK(cudaDeviceSynchronize());
        unsigned long long t = 0;
        CK(cudaMemcpy(&t, out, sizeof(t), cudaMemcpyDeviceToHost));
        ns.push_back((double)t / (iters - iters / 10));
      }
      std::sort(ns.begin(), ns.end());
      char cell[64];
      snprintf(cell, sizeof cell, "%.0f [%.0f-%.0f]", ns[2], ns[0], ns[4]);
      printf(" | %-24s", cell);
    }
    printf("\n");
  }
  return 0;
}
