// Device trace rings: what every block did and when, decoded by the host
// into autarky::trace (Chrome/Perfetto JSON, summaries).
//
// Compiled in only when the host passes -DAUTARKY_TRACE (a run with
// RunOptions::trace; the cubin and its cache key differ). Without it every
// AUTARKY_TRACE_* macro below expands to nothing, so the hot loop of an
// untraced kernel carries no trace code at all.
//
// Words (one ring per block of a PE; layout: TraceRingHeader in abi.h):
// - trace_head (shared memory, one per block): appends so far. Taken by
//   atomicAdd by the appending thread (thread 0 for every scheduler event;
//   any one thread of a body for ctx.wait_geq / ctx.trace_pulse, so two
//   threads of a block may append at once). Only increases.
// - the ring's records: record (k % trace_cap) holds append k, written with
//   plain stores by the thread that took k; once the ring is full, append k
//   overwrites append k − trace_cap (the oldest). Only this block writes
//   its ring.
// - TraceRingHeader::head: thread 0 stores trace_head there once, when the
//   block leaves (AUTARKY_TRACE_FLUSH, after block_exit's barrier, so every
//   append of the block happened before it). The host reads rings only
//   after the kernel ended, so the kernel boundary orders everything; the
//   host counts head − min(head, trace_cap) dropped records: never silent.
//
// What is recorded (TraceKind in abi.h): task bodies (TaskStart/TaskEnd,
// compute, pinned and comm blocks), waits that did not succeed at their
// first poll (WaitBegin/WaitEnd, arg = trace_wait_word(kind, index)), comm
// blocks' idle periods (WaitKind::CommIdle), remote completion signals
// (SignalSent at the producer, SignalSeen at a comm relay or a pinned poll)
// and pulse marks from bodies (ctx.trace_pulse).
//
// Timestamps are %globaltimer (ns, global across SMs, coarse: it advances
// about every µs on Hopper), so records of different blocks compare. A
// block's records are not appended in time order (a compute block appends
// an instance's TaskStart/TaskEnd after its completion, see
// AUTARKY_TRACE_TASK_RECORD); the host orders every block's records by
// time (a stable sort: equal stamps keep their append order).
#pragma once
#include "autarky/order.cuh"

#ifdef AUTARKY_TRACE

namespace autarky {

// Appends of this block so far (see the protocol above).
__shared__ uint64_t trace_head;

// Block `block`'s ring: its header, then trace_cap records.
__device__ __forceinline__ TraceRecord* trace_ring(const RunParams& p, uint32_t block) {
    return reinterpret_cast<TraceRecord*>(p.trace) + (uint64_t)block * (p.trace_cap + 1);
}

// Appends one record, stamped `t`, to the calling block's ring. Any one
// thread at a time per call site; concurrent appends from several threads
// take distinct slots.
__device__ __noinline__ void trace_append_at(const RunParams& p, TraceKind kind, uint32_t task, uint32_t iteration,
                                       uint64_t arg, uint32_t pe, uint64_t t) {
    if (p.trace == 0) return;  // a traced kernel launched without rings
    const uint32_t block = blockIdx.x - p.block_base;
    const uint64_t k = atomicAdd(&trace_head, 1ull);
    TraceRecord* r = trace_ring(p, block) + 1 + (k & (uint64_t)(p.trace_cap - 1));
    // Two 16-byte stores (records are 32-byte aligned: the ring area is a
    // device allocation of whole records), not six scalar ones: the next
    // release or fence of this thread waits for every store in flight, so
    // fewer, wider stores cost the traced hot loop less. Streaming (.cs):
    // nothing on the device reads the ring back.
    const uint32_t kb = trace_kind_block(kind, block);
    uint32_t* w = reinterpret_cast<uint32_t*>(r);
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(w), "r"((uint32_t)t), "r"((uint32_t)(t >> 32)),
                 "r"(task), "r"(iteration)
                 : "memory");
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(w + 4), "r"((uint32_t)arg),
                 "r"((uint32_t)(arg >> 32)), "r"(kb), "r"(pe)
                 : "memory");
}

// Appends one record stamped now.
__device__ inline void trace_append(const RunParams& p, TraceKind kind, uint32_t task, uint32_t iteration,
                                    uint64_t arg, uint32_t pe) {
    trace_append_at(p, kind, task, iteration, arg, pe, globaltimer_ns());
}

// Thread 0, once, before any append of the block.
__device__ __forceinline__ void trace_init() {
    if (threadIdx.x == 0) trace_head = 0;
}

// Thread 0, after the block's last append (see the protocol above).
__device__ __forceinline__ void trace_flush(const RunParams& p) {
    if (threadIdx.x != 0 || p.trace == 0) return;
    TraceRingHeader* h = reinterpret_cast<TraceRingHeader*>(trace_ring(p, blockIdx.x - p.block_base));
    h->head = trace_head;
}

// A wait that records WaitBegin at its first failed poll and WaitEnd when
// it goes out of scope (every return of the wait, whatever its result).
struct TraceWait {
    const RunParams& p;
    uint32_t task, iteration;
    uint64_t word;
    bool begun;
    __device__ TraceWait(const RunParams& p_, WaitKind kind, uint32_t index, uint32_t task_, uint32_t iteration_)
        : p(p_), task(task_), iteration(iteration_), word(trace_wait_word(kind, index)), begun(false) {}
    __device__ void failed_poll() {
        if (begun) return;
        begun = true;
        trace_append(p, TraceKind::WaitBegin, task, iteration, word, p.pe);
    }
    __device__ ~TraceWait() {
        if (begun) trace_append(p, TraceKind::WaitEnd, task, iteration, word, p.pe);
    }
};

// Every proxy among instance n's predecessors was seen done (a pinned
// poll that succeeded): one SignalSeen per proxy edge that instance needs.
__device__ inline void trace_proxies_seen(const RunParams& p, const TaskDesc& d, uint32_t n) {
    const Edge* preds = reinterpret_cast<const Edge*>(p.pred) + d.pred_start;
    for (uint32_t k = 0; k < d.pred_count; ++k) {
        const Edge e = preds[k];
        if (e.task < p.num_tasks || n + 1 <= e.distance) continue;
        trace_append(p, TraceKind::SignalSeen, e.task, n - e.distance, e.task, p.pe);
    }
}

}  // namespace autarky

// Records `kind` (a TraceKind value) for (task, iter) with `arg`. One thread.
#define AUTARKY_TRACE_EVENT(p, kind, task, iter, arg) ::autarky::trace_append((p), (kind), (task), (iter), (arg), (p).pe)
// The same, by thread 0 of a block that is running the whole block.
#define AUTARKY_TRACE_T0(p, kind, task, iter, arg) \
    do {                                           \
        if (threadIdx.x == 0) AUTARKY_TRACE_EVENT(p, kind, task, iter, arg); \
    } while (0)
// Instance `iter` of a producer signalled proxy `slot` on PE `to_pe`.
#define AUTARKY_TRACE_SIGNAL(p, iter, slot, to_pe) \
    ::autarky::trace_append((p), ::autarky::TraceKind::SignalSent, ::autarky::TASK_NONE, (iter), (slot), (to_pe))
// A pinned poll found instance n's predecessors done (`remote`: a proxy among them).
#define AUTARKY_TRACE_PROXIES_SEEN(p, d, n, remote) \
    do {                                            \
        if (remote) ::autarky::trace_proxies_seen((p), (d), (n)); \
    } while (0)
// In a wait: declare the scope (WaitEnd when it ends), then mark each failed poll.
#define AUTARKY_TRACE_WAIT_SCOPE(p, site) \
    ::autarky::TraceWait autarky_trace_wait((p), (site).kind, (site).index, (site).task, (site).iteration)
#define AUTARKY_TRACE_WAIT_FAILED_POLL() autarky_trace_wait.failed_poll()
// A comm block's poll loop: the same scope, for its idle time (WaitKind::CommIdle).
#define AUTARKY_TRACE_IDLE_SCOPE(p, block)                                                                 \
    ::autarky::TraceWait autarky_trace_wait((p), ::autarky::WaitKind::CommIdle, (block), ::autarky::TASK_NONE, \
                                            0)
// A compute block's task instance (thread 0): its start and end times are
// taken where they happen, and both records are appended after the
// completion's publish, so that release does not wait for the records'
// stores (the dispatch bench measured 1.4-1.7x with them in the way).
// The host orders a block's records by time, not by append order.
#define AUTARKY_TRACE_TASK_DECL() uint64_t autarky_trace_t_start = 0, autarky_trace_t_end = 0
#define AUTARKY_TRACE_TASK_START() (autarky_trace_t_start = ::autarky::globaltimer_ns())
#define AUTARKY_TRACE_TASK_END() (autarky_trace_t_end = ::autarky::globaltimer_ns())
#define AUTARKY_TRACE_TASK_RECORD(p, task, iter)                                                                  \
    do {                                                                                                        \
        ::autarky::trace_append_at((p), ::autarky::TraceKind::TaskStart, (task), (iter), 0, (p).pe,             \
                                   autarky_trace_t_start);                                                      \
        ::autarky::trace_append_at((p), ::autarky::TraceKind::TaskEnd, (task), (iter), 0, (p).pe,               \
                                   autarky_trace_t_end);                                                        \
    } while (0)
#define AUTARKY_TRACE_INIT() ::autarky::trace_init()
#define AUTARKY_TRACE_FLUSH(p) ::autarky::trace_flush(p)

#else  // !AUTARKY_TRACE: no trace code at all

#define AUTARKY_TRACE_EVENT(p, kind, task, iter, arg) ((void)0)
#define AUTARKY_TRACE_T0(p, kind, task, iter, arg) ((void)0)
#define AUTARKY_TRACE_SIGNAL(p, iter, slot, to_pe) ((void)0)
#define AUTARKY_TRACE_PROXIES_SEEN(p, d, n, remote) ((void)0)
#define AUTARKY_TRACE_WAIT_SCOPE(p, site) ((void)0)
#define AUTARKY_TRACE_WAIT_FAILED_POLL() ((void)0)
#define AUTARKY_TRACE_IDLE_SCOPE(p, block) ((void)0)
#define AUTARKY_TRACE_INIT() ((void)0)
#define AUTARKY_TRACE_FLUSH(p) ((void)0)
#define AUTARKY_TRACE_TASK_DECL() ((void)0)
#define AUTARKY_TRACE_TASK_START() ((void)0)
#define AUTARKY_TRACE_TASK_END() ((void)0)
#define AUTARKY_TRACE_TASK_RECORD(p, task, iter) ((void)0)

#endif  // AUTARKY_TRACE
