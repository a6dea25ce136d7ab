// Errors, abort, and the one bounded wait helper.
//
// Words (all per PE):
// - Status::error_code (device): 0 until the first error; written once by
//   CAS (first error wins); the winner then fills the record. Read by the
//   host after the kernel ends.
// - Status::abort (device): 0 → 1. HostControl::abort (host-mapped): 0 →
//   ABORT_BY_PE (2, a failing block: its own and every peer's host word,
//   release sys, after the device words) or ABORT_BY_HOST (1, the host);
//   either may overwrite the other, never back to 0. Only ABORT_BY_HOST
//   makes a PE without an error record HostAbort (a 2 always follows a
//   record somewhere). Every wait polls the device word every ABORT_POLLS
//   polls and the host word every HOST_ABORT_POLLS polls; every block
//   leaves its loop once either is nonzero.
// - BlockStats[b].wait_*: written by block b (thread 0) when a wait has not
//   been satisfied after its first check interval, cleared when it ends; read
//   by the host for the deadlock report.
#pragma once
#include "autarky/order.cuh"
#include "autarky/trace.cuh"
#include "autarky/nvshmem.cuh"

namespace autarky {

constexpr uint32_t ABORT_POLLS = 256;        // device abort word: every 256 polls
constexpr uint32_t HOST_ABORT_POLLS = 4096;  // host-mapped abort word: every 4096 polls
constexpr uint32_t SPIN_POLLS = 128;         // tight polls before backing off with nanosleep
// Polls a pinned block's thread 0 spins inline (spin_ready) before it
// enters the bounded wait (wait_until): a hop's wait is a few polls, and
// the inline spin ran a 2 x 2 patch of empty stencil tiles 1.129 -> 1.076
// us an iteration, one tile a block 1.159 -> 1.118 (docs/performance.md,
// session 41; -DAUTARKY_EXP_NO_INLINE_SPIN is the control). Fewer than
// ABORT_POLLS, so the wait's abort check and deadline start at most this
// many polls late.
constexpr uint32_t INLINE_POLLS = 32;
constexpr uint32_t BACKOFF_NS = 128;         // nanosleep between polls after SPIN_POLLS

// Identity of the calling block, passed to everything that may record an error.
struct Who {
    const RunParams* p;
    uint32_t block;
    uint32_t role;
};

__device__ __forceinline__ Status* status_of(const RunParams& p) { return reinterpret_cast<Status*>(p.status); }
__device__ __forceinline__ HostControl* control_of(const RunParams& p) {
    return reinterpret_cast<HostControl*>(p.control);
}
__device__ __forceinline__ BlockStats* stats_of(const RunParams& p, uint32_t block) {
    return reinterpret_cast<BlockStats*>(p.block_stats) + block;
}

// A PE's state array as this run lays it out: word t at index t, or at
// t × STATE_SPREAD_WORDS (a 128-byte line each) under RUN_STATE_SPREAD —
// the same spacing on every PE, so a producer finds a remote consumer's
// word at the index it would use for its own (see RUN_STATE_SPREAD).
struct States {
    uint64_t* base;
    uint32_t shift;
    __device__ __forceinline__ uint64_t* at(uint32_t t) const { return base + ((uint64_t)t << shift); }
};
__device__ __forceinline__ uint32_t state_shift(const RunParams& p) {
    return (p.flags & RUN_STATE_SPREAD) ? 4u : 0u;  // log2(STATE_SPREAD_WORDS)
}
static_assert(STATE_SPREAD_WORDS == 16u, "state_shift assumes 16 words a task");
__device__ __forceinline__ States states_of(const RunParams& p) {
    return States{reinterpret_cast<uint64_t*>(p.state), state_shift(p)};
}
// Task t's state word on this PE.
__device__ __forceinline__ uint64_t* state_at(const RunParams& p, uint32_t t) { return states_of(p).at(t); }

// The wake word of `block` (RunParams::wake: one per WAKE_GROUP blocks, a
// 128-byte line each). Set once the run is over for this PE (finished,
// stopped early, or aborted), never reset: an idle block reads its word with
// every poll (a load of its own group's line, issued with its other poll)
// and leaves when it is set, instead of finding the end by reading Status,
// which it may do only every 64 polls (~20 µs at the idle poll's rate:
// every idle block reads that one word, and more often makes its L2 slice
// a hot spot). docs/performance.md, session 17: the end of a run was ~20 µs
// of every run's fixed cost.
__device__ __forceinline__ uint32_t* wake_word(const RunParams& p, uint32_t block) {
    return reinterpret_cast<uint32_t*>(p.wake) + (block / WAKE_GROUP) * WAKE_STRIDE;
}
__device__ __forceinline__ bool woken(const RunParams& p, uint32_t block) {
#ifdef AUTARKY_NO_WAKE
    return false;  // control for A/B timing: the end found by polling Status
#else
    return ld_relaxed_gpu_u32(wake_word(p, block)) != 0;
#endif
}

// Sets every wake word of this PE (any thread; idempotent). Called by the
// first block that sees the run over: one relaxed store per group of
// blocks. Nothing is read on the strength of a wake word (a woken block
// only leaves, or re-reads Status), so it needs no ordering.
__device__ __noinline__ void wake_all(const RunParams& p) {
#ifndef AUTARKY_NO_WAKE
    uint32_t* words = reinterpret_cast<uint32_t*>(p.wake);
    const uint32_t groups = (p.comm_blocks + p.compute_blocks + WAKE_GROUP - 1) / WAKE_GROUP;
    for (uint32_t g = 0; g < groups; ++g) st_relaxed_gpu_u32(words + g * WAKE_STRIDE, 1u);
#endif
}

// Raises abort on this PE (device mirror), on every peer PE's device mirror
// (their Status, reachable through the peer table: virtual PEs and P2P
// GPUs) and on every PE's host-mapped word (system scope, so peers on other
// GPUs and the host see it). Peers poll their device mirror every
// ABORT_POLLS polls, so abort reaches every PE in microseconds.
//
// Under NVSHMEM (-DAUTARKY_NVSHMEM) a peer whose status entry is 0 is
// reachable only through NVSHMEM: its Status is at this PE's own Status
// address (every PE's Status is carved from one nvshmem_malloc, at the same
// offset), and the abort word is set there with an NVSHMEM put. The put is
// delivered at the latest by the quiet of this block's exit (block_exit),
// and this block leaves its loop right after raising abort.
__device__ inline void raise_abort(const RunParams& p) {
    st_release_gpu_u32(&status_of(p)->abort, 1);
    const uint64_t* statuses = reinterpret_cast<const uint64_t*>(p.peer_statuses);
    const uint64_t* controls = reinterpret_cast<const uint64_t*>(p.peer_controls);
    for (uint32_t pe = 0; pe < p.num_pes; ++pe) {
        if (pe != p.pe && statuses[pe] != 0) st_release_sys_u32(&reinterpret_cast<Status*>(statuses[pe])->abort, 1);
#ifdef AUTARKY_NVSHMEM
        if (pe != p.pe && statuses[pe] == 0) autarky_nvshmem_p32(&status_of(p)->abort, 1u, (int)pe);
#endif
        // ABORT_BY_PE, not the host's value: a peer that sees it records
        // no HostAbort of its own (the cause is this PE's record).
        st_release_sys_u32(&reinterpret_cast<HostControl*>(controls[pe])->abort, ABORT_BY_PE);
    }
    // This PE's idle blocks leave at once (peers' see their abort word
    // within ABORT_POLLS polls).
    wake_all(p);
}

// Records an error (first one wins) and raises abort. Callable by any thread.
__device__ __noinline__ void record_error(Who w, ErrorCode code, uint32_t task, uint32_t iteration, WaitKind wait_kind,
                                    uint32_t wait_index, uint64_t seen, uint64_t wanted, uint64_t detail) {
    const RunParams& p = *w.p;
    Status* s = status_of(p);
    if (atom_cas_relaxed_gpu_u32(&s->error_code, 0, (uint32_t)code) == 0) {
        s->pe = p.pe;
        s->block = w.block;
        s->role = w.role;
        s->task = task;
        s->iteration = iteration;
        s->wait_kind = (uint32_t)wait_kind;
        s->wait_index = wait_index;
        s->seen = seen;
        s->wanted = wanted;
        s->detail = detail;
        s->error_ns = globaltimer_ns();
        // Publish the record before abort: release in raise_abort orders it.
    }
    raise_abort(p);
}

// Has this PE been told to stop? `host` also reads the host-mapped word (slow: PCIe).
__device__ __forceinline__ bool abort_raised(const RunParams& p, bool host) {
    if (ld_relaxed_gpu_u32(&status_of(p)->abort) != 0) return true;
    return host && ld_relaxed_sys_u32(&control_of(p)->abort) != 0;
}

// Did the host (not a PE recording an error) raise this PE's abort?
__device__ __forceinline__ bool host_raised_abort(const RunParams& p) {
    return ld_relaxed_sys_u32(&control_of(p)->abort) == ABORT_BY_HOST;
}

// Can a task of this graph stop the run early (a kind that calls
// ctx.finish_at: RUN_MAY_STOP)? Graphs without one are compiled with
// -DAUTARKY_NO_STOP: the limit is the iteration count, and the carried
// limits' bookkeeping (scheduler.cuh) is compiled out of their hot paths.
__device__ __forceinline__ constexpr bool may_stop_compiled() {
#ifdef AUTARKY_NO_STOP
    return false;
#else
    return true;
#endif
}

// The number of instances every task runs now: the run's iteration count,
// or lower once a task body called ctx.finish_at (only read when the graph
// has such a kind: RUN_MAY_STOP). Only decreases.
__device__ __forceinline__ uint32_t run_limit(const RunParams& p) {
#if defined(AUTARKY_EXP_LIMIT_STATIC) || defined(AUTARKY_NO_STOP)
    return p.iterations;  // experiment: what every limit read costs a run that never stops early (A/B only)
#else
    return (p.flags & RUN_MAY_STOP) ? ld_relaxed_gpu_u32(&status_of(p)->limit) : p.iterations;
#endif
}

// Abort checks for loops that can run for long without waiting (a block
// keeping its own instances, a pinned list): the device word at least every
// TICK_CYCLES. Running loops never read the host-mapped word: a thousand blocks
// reading host memory saturate PCIe (measured: ~1 ms per read, every block
// stalled). Comm block 0 mirrors the host's abort into the device word.
constexpr uint64_t TICK_CYCLES = 40000;  // ~20 µs at the H200's ~2 GHz
// A block's completed counter is published every PUBLISH_EVERY instances
// and at least every TICK_CYCLES, so progress is visible by time too: a healthy
// chain of slow instances never looks like a stall.
constexpr uint32_t PUBLISH_EVERY = 16;

// Thread 0's clock for a running loop.
struct LoopClock {
    uint64_t completed = 0;  // instances this block completed
    uint64_t published = 0;  // of those, already added to Status::progress
    uint64_t last_tick = 0;  // clock64() of the last publish + abort check
};

// Publishes this block's completed count: its own BlockStats word (for
// reports and the error record) and, added to the PE's Status::progress,
// what it completed since its last publish. Thread 0 of a block. (Pinned
// and comm blocks do not publish before they wait, as compute blocks do
// before they go idle: up to PUBLISH_EVERY - 1 instances of theirs may
// reach the counter only at their next publish, as under ABI 6.)
__device__ __forceinline__ void publish_completed(const RunParams& p, uint32_t block, LoopClock& c) {
    st_relaxed_gpu_u64(&stats_of(p, block)->completed, c.completed);
    if (c.completed != c.published) {
        red_add_relaxed_gpu_u64(&status_of(p)->progress, c.completed - c.published);
        c.published = c.completed;
    }
}

// Instances completed on this PE (the blocks' published counts): one load.
// Every stall check reads it: a wait's deadline, comm block 0's watchdog
// and its publish to the host. (Until ABI 7 it summed every block's
// BlockStats word, ~1000 serial loads, and comm block 0 ran it every 64
// polls and every 50 µs: its own pinned tasks then waited up to 260 µs.)
#ifdef AUTARKY_EXP_PROGRESS_SCAN
// Experiment control (AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_PROGRESS_SCAN):
// ABI 6's sum over every block's counter, out of line as it was, for A/B
// timing only. (Inlined, as first written in session 8, it cost the hot
// loops far more than ABI 6 did: chain/100 6.0 µs a hand-off against ~2.)
__device__ __noinline__ uint64_t pe_progress_scan(const RunParams& p) {
    uint64_t sum = 0;
    const uint32_t blocks = p.comm_blocks + p.compute_blocks;
    for (uint32_t b = 0; b < blocks; ++b) sum += ld_relaxed_gpu_u64(&stats_of(p, b)->completed);
    return sum;
}
#endif
__device__ __forceinline__ uint64_t pe_progress(const RunParams& p) {
#ifdef AUTARKY_EXP_PROGRESS_SCAN
    return pe_progress_scan(p);
#else
    return ld_relaxed_gpu_u64(&status_of(p)->progress);
#endif
}

// Called by thread 0 of a running block after each instance it completed
// (`completed` already counted). Publishes the block's counter by count
// and by time; returns true when the block must leave because abort was
// raised (the device word: see TICK_CYCLES).
AUTARKY_HOT bool loop_tick(Who w, LoopClock& c) {
    const RunParams& p = *w.p;
    // clock64 (the SM's cycle counter: a few cycles to read) rather than
    // %globaltimer (docs/performance.md: the cost of each per instance).
#ifdef AUTARKY_TICK_GLOBALTIMER
    const uint64_t now = globaltimer_ns() * 2;
#else
    const uint64_t now = clock64();
#endif
    const bool due = now - c.last_tick >= TICK_CYCLES;
    if (c.completed % PUBLISH_EVERY != 0 && !due) return false;
    publish_completed(p, w.block, c);
    if (!due) return false;
    c.last_tick = now;
    return abort_raised(p, false);
}

// What a wait is for, for BlockStats and the error record.
struct WaitSite {
    WaitKind kind;
    uint32_t index;
    uint64_t wanted;
    uint32_t task;
    uint32_t iteration;
};

enum class WaitResult : uint32_t { Ready = 0, Stop = 1, Aborted = 2, TimedOut = 3 };

// `ready()` polled up to INLINE_POLLS times in a bare loop: true as soon
// as it holds. A caller that gets false waits through wait_until, which
// keeps the abort check, the deadline and the wait's record. A traced
// kernel polls once: its trace records every wait from the first failed
// poll. (-DAUTARKY_EXP_NO_INLINE_SPIN: once, for same-process A/B timing.)
template <class Ready>
__device__ __forceinline__ bool spin_ready(Ready ready) {
#if defined(AUTARKY_EXP_NO_INLINE_SPIN) || defined(AUTARKY_TRACE)
    return ready();
#else
#pragma unroll 1
    for (uint32_t i = 0; i < INLINE_POLLS; ++i)
        if (ready()) return true;
    return false;
#endif
}

// The one wait loop. `poll(seen)` returns 1 when the condition holds, 2 when
// the waiter should stop without error (the run finished), 0 to keep
// waiting; it stores the awaited word's value in `seen`. Bounded: every
// ABORT_POLLS polls it checks abort and the deadline; the deadline is
// A residual reported by a task body (TaskCtx::report_residual), held in
// shared memory until the block's thread 0 publishes it (flush_report).
struct ResidualReport {
    double value;
    uint32_t iteration;  // the reporting instance's iteration + 1; 0: nothing pending
    // The lowest limit this block's bodies set (finish_at: shared-memory
    // atomic min, any thread); only decreases. A pinned block folds it into
    // the limit its published words carry (pinned_state_word).
    uint32_t limit;
};

// Publishes a residual to the host: HostControl::last_residual, then
// residual_iteration with a system-scope release (a host that reads this
// iteration reads this residual or a later one). One thread.
__device__ __forceinline__ void publish_residual(const RunParams& p, double r, uint32_t iteration) {
    HostControl* c = control_of(p);
    st_relaxed_sys_u64(reinterpret_cast<uint64_t*>(&c->last_residual), (uint64_t)__double_as_longlong(r));
    st_release_sys_u32(&c->residual_iteration, iteration);
}

// flush_report's publish, out of line: inlined, the compiler predicated
// it into every instance's path, and its system-scope release's MEMBAR.SYS
// and error barriers, issued predicated off, still stalled the warp (~8 %
// of a pinned stencil tile's samples in ncu; out of line, the pinned
// stencil row went 1.45 → 1.42 µs an iteration: docs/performance.md,
// session 32).
__device__ __noinline__ void flush_report_publish(const RunParams& p, ResidualReport& r) {
    publish_residual(p, r.value, r.iteration);
    r.iteration = 0;
}

// Thread 0, after an instance's completion (and when the block leaves):
// publishes the residual its body reported, if any.
__device__ __forceinline__ void flush_report(const RunParams& p, ResidualReport& r) {
    if (r.iteration != 0) flush_report_publish(p, r);
}

// `timeout_ns` without progress anywhere on the PE (it re-arms while other
// blocks complete instances, so a long task elsewhere is not a hang). On
// timeout it records the error and raises abort. Called by one thread.
// `poll` also receives the poll count, so it can do expensive checks rarely.
template <class Poll>
__device__ WaitResult wait_until(Who w, const WaitSite& site, Poll poll) {
    const RunParams& p = *w.p;
    uint64_t seen = 0;
    uint64_t start = 0, progress_at_start = 0;
    // Generic waits ("nothing became ready", the comm watchdog) give the
    // specific ones (a user word, a held task, a queue slot) twice as long,
    // so the error names the wait that is the cause, not its symptom.
    const bool generic = site.kind == WaitKind::QueueItem || site.kind == WaitKind::Progress;
    const uint64_t deadline = generic ? 2 * p.timeout_ns : p.timeout_ns;
    bool published = false;
    AUTARKY_TRACE_WAIT_SCOPE(p, site);  // trace: WaitEnd on every return below
    for (uint32_t polls = 1;; ++polls) {
        const uint32_t r = poll(seen, polls);
        if (r != 0) {
            if (published) st_relaxed_gpu_u32(&stats_of(p, w.block)->wait_kind, (uint32_t)WaitKind::None);
            return r == 1 ? WaitResult::Ready : WaitResult::Stop;
        }
        AUTARKY_TRACE_WAIT_FAILED_POLL();  // trace: WaitBegin at the first failed poll
        if (polls % ABORT_POLLS == 0) {
            // Only comm blocks read the host-mapped word (PCIe): hundreds of
            // idle compute blocks reading it would saturate the link. They
            // see the host's abort through the device word, which comm
            // block 0 raises when it sees the host's.
            if (abort_raised(p, w.role == (uint32_t)Role::Comm && polls % HOST_ABORT_POLLS == 0)) {
                if (host_raised_abort(p) && ld_relaxed_gpu_u32(&status_of(p)->error_code) == 0)
                    record_error(w, ErrorCode::HostAbort, site.task, site.iteration, site.kind, site.index, seen,
                                 site.wanted, 0);
                return WaitResult::Aborted;
            }
            const uint64_t now = globaltimer_ns();
            if (!published) {
                BlockStats* bs = stats_of(p, w.block);
                bs->wait_index = site.index;
                bs->wait_wanted = site.wanted;
                bs->task = site.task;
                bs->iteration = site.iteration;
                st_relaxed_gpu_u32(&bs->wait_kind, (uint32_t)site.kind);
                published = true;
                start = now;
                progress_at_start = pe_progress(p);
            } else if (now - start > deadline) {
                const uint64_t progress = pe_progress(p);
                if (progress != progress_at_start) {
                    progress_at_start = progress;
                    start = now;
                } else {
                    record_error(w, ErrorCode::Timeout, site.task, site.iteration, site.kind, site.index, seen,
                                 site.wanted, 0);
                    return WaitResult::TimedOut;
                }
            }
        }
        if (polls > SPIN_POLLS) nanosleep_ns(BACKOFF_NS);
    }
}

}  // namespace autarky
