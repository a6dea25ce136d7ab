// Floor of the compute ready queue on this GPU: how many pop + push pairs a
// second the runtime's ticketed Vyukov ring passes with ~a thousand blocks
// at it, and what sharding it into K rings would give. The question it
// answers (docs/performance.md, session 35): does the one ring pace the
// dispatch bench's dynamic stencil (1024 tiles an iteration in 5.9 µs,
// ~5.8 ns a tile, against ~1.4 µs pinned)?
//
// A closed loop, no graph: G blocks of 128 threads; thread 0 of block b pops
// an item from ring b % K (ticket on the head, relaxed polls of the slot,
// fence.acquire, the slot released for the next lap), the block passes two
// barriers (the runtime's per-task barriers), then thread 0 pushes an item
// back to the same ring (ticket on the tail, an acquire poll for the slot's
// lap, the item, a release) — the runtime's queue_pop / queue_push, word for
// word. P items circulate (spread over the rings); every block does R
// rounds, so every pop ticket is matched by a push and nothing hangs.
// Variants: the ring as the runtime has it; the two tickets alone (no slot
// hand-off: the atomics' cost); the ring with the items pushed to the next
// ring (b + 1) % K instead of the same one (a pusher and a popper on other
// SMs, as a completion's successors are). A CUDA program, not a cargo
// bench: on the GPU machine,
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o ring benches/floor/ring.cu && ./ring
//
// Each row: median [min-max] of 7 runs of R rounds (device events around a
// cooperative launch, after a warm-up run): ns per pop + push pair over the
// whole GPU (time / (G·R)) and µs per round of one block (time / R).
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p){uint64_t v; asm volatile("ld.relaxed.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p){uint64_t v; asm volatile("ld.acquire.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v){asm volatile("st.release.gpu.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void fence_acquire(){asm volatile("fence.acquire.gpu;":::"memory");}
__device__ __forceinline__ uint32_t add_relaxed(uint32_t* p, uint32_t v){uint32_t r; asm volatile("atom.relaxed.gpu.global.add.u32 %0,[%1],%2;":"=r"(r):"l"(p),"r"(v):"memory"); return r;}

// One ring's tickets, each on its own 128-byte line (as QueueCtl's).
struct Ctl { uint32_t head; uint32_t pad0[31]; uint32_t tail; uint32_t pad1[31]; };
// A slot: (seq << 32 | item), and the item's iteration (as QueueSlot's).
struct Slot { uint64_t word; uint32_t iteration; uint32_t pad; };

enum Mode { RING = 0, TICKETS = 1, RING_NEXT = 2 };

template <int M>
__global__ void __launch_bounds__(128) ring(Ctl* ctl, Slot* slots, int k_rings, uint32_t mask, int rounds, uint32_t* sink) {
  __shared__ uint32_t sh_item;
  const int r = blockIdx.x % k_rings;
  const int rp = M == RING_NEXT ? (r + 1) % k_rings : r;
  for (int i = 0; i < rounds; ++i) {
    if (threadIdx.x == 0) {
      uint32_t item, iter = 0;
      if (M == TICKETS) {
        item = add_relaxed(&ctl[r].head, 1);
      } else {
        const uint32_t k = add_relaxed(&ctl[r].head, 1);
        Slot* s = slots + (size_t)r * (mask + 1) + (k & mask);
        uint64_t w;
        while ((uint32_t)((w = ld_relaxed(&s->word)) >> 32) != k + 1) {}
        fence_acquire();
        item = (uint32_t)w;
        iter = s->iteration;
        st_release(&s->word, (uint64_t)(k + mask + 1) << 32);
      }
      sh_item = item + iter;
    }
    __syncthreads();  // the task's start (the runtime broadcasts the popped task)
    const uint32_t item = sh_item;
    __syncthreads();  // the body's end
    if (threadIdx.x == 0) {
      if (M == TICKETS) {
        add_relaxed(&ctl[rp].tail, 1);
      } else {
        const uint32_t k = add_relaxed(&ctl[rp].tail, 1);
        Slot* s = slots + (size_t)rp * (mask + 1) + (k & mask);
        while ((uint32_t)(ld_acquire(&s->word) >> 32) != k) {}
        s->iteration = 0;
        st_release(&s->word, ((uint64_t)(k + 1) << 32) | item);
      }
    }
  }
  if (threadIdx.x == 0 && sink) sink[blockIdx.x] = sh_item;
}

// Rings of capacity mask + 1, P items spread over K rings (ring r gets
// P / K, the first P % K one more), tickets reset.
static void reset(Ctl* d_ctl, Slot* d_slots, int k_rings, uint32_t mask, int items) {
  std::vector<Ctl> ctl(k_rings);
  std::vector<Slot> slots((size_t)k_rings * (mask + 1));
  for (int r = 0; r < k_rings; ++r) {
    const uint32_t n = items / k_rings + (r < items % k_rings ? 1 : 0);
    ctl[r] = Ctl{};
    ctl[r].head = 0;
    ctl[r].tail = n;
    for (uint32_t j = 0; j <= mask; ++j) {
      Slot& s = slots[(size_t)r * (mask + 1) + j];
      s.iteration = 0;
      s.pad = 0;
      s.word = j < n ? ((uint64_t)(j + 1) << 32) | j : (uint64_t)j << 32;
    }
  }
  CK(cudaMemcpy(d_ctl, ctl.data(), sizeof(Ctl) * k_rings, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_slots, slots.data(), sizeof(Slot) * slots.size(), cudaMemcpyHostToDevice));
}

template <int M>
static void row(const char* name, int blocks, int k_rings, int items, int rounds, Ctl* d_ctl, Slot* d_slots,
                uint32_t* d_sink) {
  // Outstanding per ring ≤ items + blocks: a ring of 8192 never fills.
  const uint32_t mask = 8191;
  if (items < k_rings && M != TICKETS) { printf("%-10s skipped: fewer items than rings\n", name); return; }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> v;
  for (int rep = 0; rep < 8; ++rep) {
    reset(d_ctl, d_slots, k_rings, mask, items);
    int kr = k_rings, rr = rounds;
    uint32_t mm = mask;
    void* args[] = {&d_ctl, &d_slots, &kr, &mm, &rr, &d_sink};
    CK(cudaEventRecord(a));
    CK(cudaLaunchCooperativeKernel((void*)ring<M>, blocks, 128, args, 0, 0));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (rep > 0) v.push_back(ms);
  }
  std::sort(v.begin(), v.end());
  auto ns_pair = [&](float ms) { return ms * 1e6 / ((double)blocks * rounds); };
  auto us_round = [&](float ms) { return ms * 1e3 / rounds; };
  printf("%-10s G %4d K %3d P %4d : %7.3f ns a pair [%.3f-%.3f], %6.3f us a block's round [%.3f-%.3f]\n", name, blocks,
         k_rings, items, ns_pair(v[v.size() / 2]), ns_pair(v.front()), ns_pair(v.back()), us_round(v[v.size() / 2]),
         us_round(v.front()), us_round(v.back()));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
}

int main(int argc, char** argv) {
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring<RING>, 128, 0));
  per_sm = std::min(per_sm, 8);  // the runtime's dispatch grid: 8 blocks an SM
  const int full = sms * per_sm;
  const int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  printf("ring floor: %d SMs, up to %d blocks (%d an SM), %d rounds a block\n", sms, full, per_sm, rounds);
  Ctl* d_ctl;
  Slot* d_slots;
  uint32_t* d_sink;
  CK(cudaMalloc(&d_ctl, sizeof(Ctl) * 1024));
  CK(cudaMalloc(&d_slots, sizeof(Slot) * 1024 * 8192));
  CK(cudaMalloc(&d_sink, 4 * full));
  for (int g : {sms, 4 * sms, full}) {
    for (int k : {1, 2, 4, 8, 16, 33, 132}) {
      if (k > g) continue;
      // Items: one a block (every pop finds one soon), and a quarter of that.
      for (int p : {g, g / 4}) row<RING>("ring", g, k, p, rounds, d_ctl, d_slots, d_sink);
      // (Pushed to the next ring, a ring's pops are matched only if the
      // groups are equal: K must divide G, or a larger group waits forever.)
      if (g % k == 0) row<RING_NEXT>("ring-next", g, k, g, rounds, d_ctl, d_slots, d_sink);
      row<TICKETS>("tickets", g, k, g, rounds, d_ctl, d_slots, d_sink);
    }
  }
  return 0;
}
