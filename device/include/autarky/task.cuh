// What a task body sees: autarky::TaskCtx. Every thread of the block calls
// the body with the same context.
//
//   __device__ void my_kind(autarky::TaskCtx& ctx) {
//       const MyArgs& a = ctx.args<MyArgs>();
//       ...
//       if (bad) ctx.fail(42);   // the run ends with Error::TaskFailed { code: 42 }
//   }
#pragma once
#include "autarky/wait.cuh"
#include "autarky/nvshmem.cuh"

namespace autarky {

struct TaskCtx {
    uint32_t task;        // task id in the user's graph (global over PEs)
    uint32_t iteration;   // iteration of this instance
    uint32_t iterations;  // iterations of the whole run
    uint32_t pe;          // this PE
    uint32_t block;       // block running the instance
    const unsigned char* args_ptr;
    uint32_t arg_len;
    const RunParams* params;
    uint32_t* failed;  // shared-memory flag: nonzero once any thread of the block called fail()
    uint32_t local;    // the task's id in this PE's tables (what error records name)
    // The block's pending residual report (shared memory; report_residual),
    // published to the host by the block's thread 0 after the instance's
    // completion. Null on paths that publish at once (the self loop).
    ResidualReport* report = nullptr;

    // The task's arguments, as the type the kind declared. Read-only for
    // the whole run. They may be in shared memory (a pinned block keeps a
    // copy of its tasks' arguments there), so read them through this
    // reference, never with loads of the global space only (__ldg,
    // ld.global); a pointer stored in the arguments is unaffected.
    template <class T>
    __device__ __forceinline__ const T& args() const {
        return *reinterpret_cast<const T*>(args_ptr);
    }

    // Ends the run with Error::TaskFailed { task, iteration, code }.
    // Callable from any thread; the first error of the run wins.
    __device__ void fail(uint64_t code) const {
        Who w{params, block, (uint32_t)Role::Compute};
        record_error(w, ErrorCode::TaskFailed, local, iteration, WaitKind::None, 0, 0, 0, code);
        atomicExch(failed, 1u);
    }

    // Ends the run with Error::NonFinite { index } (for kinds that check outputs).
    __device__ void fail_non_finite(uint64_t index) const {
        Who w{params, block, (uint32_t)Role::Compute};
        record_error(w, ErrorCode::NonFinite, local, iteration, WaitKind::None, 0, 0, 0, index);
        atomicExch(failed, 1u);
    }

    // Ends the run early: every task runs its instances below `n` and no
    // more (Status::limit, atomic min; n is raised to iteration + 1 if
    // lower). Exact for every task that depends, through edges, on this
    // instance (it cannot have started instance n before this one
    // completes); declare the kind with TaskKind::may_finish_early().
    // Callable from any thread; the earliest limit wins.
    __device__ void finish_at(uint32_t n) const {
        if (!(params->flags & RUN_MAY_STOP)) {
            fail(0xF1415Bu);  // the kind was not declared may_finish_early()
            return;
        }
        const uint32_t limit = n > iteration ? n : iteration + 1;
        red_min_relaxed_gpu_u32(&status_of(*params)->limit, limit);
        // The block's own record (shared memory): a pinned block's next
        // publish carries it (pinned_state_word), so its pinned consumers
        // learn the limit from the word they poll.
        if (report != nullptr) atomicMin(&report->limit, limit);
    }

    // This PE's symmetric-heap address `local` as PE `pe` has it, reachable
    // from here (direct stores over NVLink for a GPU peer; same GPU for a
    // virtual PE). Every PE's heap has the same layout.
    template <class T>
    __device__ __forceinline__ T* peer(T* local, uint32_t pe) const {
        const uint64_t* heaps = reinterpret_cast<const uint64_t*>(params->peer_heaps);
        const uint64_t off = reinterpret_cast<uint64_t>(local) - heaps[params->pe];
        return reinterpret_cast<T*>(heaps[pe] + off);
    }

#ifdef AUTARKY_NVSHMEM
    // Under NVSHMEM (-DAUTARKY_NVSHMEM): can this thread load from and store
    // to PE `pe`'s heap? (Its peer-table entry is 0 when `pe` is reachable
    // only through NVSHMEM; see autarky/nvshmem.cuh.) Without NVSHMEM every
    // peer is, and there is no such call: bodies use `peer` directly.
    __device__ __forceinline__ bool reachable(uint32_t pe) const {
        return reinterpret_cast<const uint64_t*>(params->peer_heaps)[pe] != 0;
    }

    // Copies `n` elements from local memory `src` into PE `pe`'s copy of the
    // symmetric `dst_local` (this PE's address of it), from the calling
    // thread: stores when `pe` is reachable, else one non-blocking NVSHMEM
    // put. `src` must stay unchanged until quiet(). Every thread that put
    // calls quiet() before the body returns, so the data is delivered before
    // the task's completion signals the peer.
    template <class T>
    __device__ __forceinline__ void put(T* dst_local, const T* src, uint64_t n, uint32_t pe) const {
        if (!reachable(pe)) {
            autarky_nvshmem_putmem_nbi(dst_local, src, n * sizeof(T), (int)pe);
            return;
        }
        T* d = peer(dst_local, pe);
        for (uint64_t i = 0; i < n; ++i) d[i] = src[i];
    }

    // `put` by the whole block: every thread calls it with the same
    // arguments (a barrier inside; not from divergent code). The block's
    // threads share the stores when `pe` is reachable; else one NVSHMEM
    // block put (over NVLink the block shares the copy; a thread-level put
    // of a long row is one thread's loop). quiet() from every thread
    // before the body returns, as for put.
    template <class T>
    __device__ __forceinline__ void put_block(T* dst_local, const T* src, uint64_t n, uint32_t pe) const {
        if (!reachable(pe)) {
            autarky_nvshmem_putmem_nbi_block(dst_local, src, n * sizeof(T), (int)pe);
            return;
        }
        T* d = peer(dst_local, pe);
        for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = src[i];
    }

    // Stores one 8-byte value into PE `pe`'s copy of the symmetric
    // `dst_local`: a store when `pe` is reachable, else an NVSHMEM put of the
    // value (no source buffer to keep). quiet() before returning, as for put.
    template <class T>
    __device__ __forceinline__ void put_value(T* dst_local, T v, uint32_t pe) const {
        static_assert(sizeof(T) == 8, "put_value moves 8-byte values");
        if (!reachable(pe)) {
            unsigned long long bits;
            memcpy(&bits, &v, 8);
            autarky_nvshmem_p64(dst_local, bits, (int)pe);
            return;
        }
        *peer(dst_local, pe) = v;
    }

    // Completes every put and put_value of the calling thread (the data is
    // at the peers).
    __device__ __forceinline__ void quiet() const { autarky_nvshmem_quiet(); }
#endif

    // Publishes `r` as this PE's latest residual (HostControl::last_residual,
    // with this instance's iteration), for the host to read while the run
    // is in flight (GpuRun::progress_snapshot). Call from one thread.
    //
    // The stores to host memory come after the instance's completion is
    // published (flush_report, by the block's thread 0): their system-scope
    // release waits for the residual's store to cross PCIe (~1 µs), and in
    // the body it delayed every successor by that much — CG reports once an
    // iteration, from the reduce its next phase waits for.
    // (-DAUTARKY_EXP_REPORT_INLINE: stored in the body, the A/B control.)
    __device__ void report_residual(double r) const {
#ifndef AUTARKY_EXP_REPORT_INLINE
        if (report != nullptr) {
            report->value = r;
            report->iteration = iteration + 1;
            return;
        }
#endif
        publish_residual(*params, r, iteration + 1);
    }

    // Marks a halo pulse in the trace (kind: TraceKind::PulsePack or
    // PulsePut; id: the pulse) in traced runs; nothing otherwise. Call
    // from one thread.
    __device__ void trace_pulse(TraceKind kind, uint64_t id) const {
        (void)kind;
        (void)id;
        AUTARKY_TRACE_EVENT(*params, kind, local, iteration, id);
    }

    // Has the run been aborted (by another block, another PE or the host)?
    __device__ bool aborted() const { return abort_raised(*params, true); }

    // Bounded wait for `*word >= wanted` (wraparound-safe, acquire, gpu scope),
    // for bodies that must wait on data produced outside the graph's edges.
    // GPU scope: the word and the data it guards must be written by threads
    // of this GPU (a word another GPU stores over NVLink needs a
    // system-scope acquire, which this does not give; use a graph edge).
    // `word_id` names the word in the error if the wait times out. Returns
    // false when the run was aborted or the wait timed out: the body must
    // return promptly then. Call from one thread; broadcast the result.
    __device__ bool wait_geq(const uint32_t* word, uint32_t wanted, uint32_t word_id) const {
        Who w{params, block, (uint32_t)Role::Compute};
        WaitSite site{WaitKind::UserWord, word_id, wanted, local, iteration};
        WaitResult r = wait_until(w, site, [&](uint64_t& seen, uint32_t) -> uint32_t {
            const uint32_t v = ld_acquire_gpu_u32(word);
            seen = v;
            return geq_u32(v, wanted) ? 1u : 0u;
        });
        if (r != WaitResult::Ready) atomicExch(failed, 1u);
        return r == WaitResult::Ready;
    }
};

// Checks `n` floats for NaN/Inf with the whole block; fails the task on the first one.
__device__ inline bool check_finite(TaskCtx& ctx, const float* data, uint64_t n) {
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = data[i];
        if (!(v - v == 0.0f)) {  // NaN or Inf
            ctx.fail_non_finite(i);
            return false;
        }
    }
    return true;
}

}  // namespace autarky
