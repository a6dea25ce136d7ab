// The device-side scheduler: ready queue, completion, claim, block loops.
//
// Protocol (DESIGN.md, "Graphs and iterations"):
//
// state[t] = (claimed << 32) | done   (u64, device memory, one per task; 128 bytes apart under RUN_STATE_SPREAD: state_at)
//   done    = instances of t completed; written only by the block that ran
//             the instance (release), so a plain store suffices: while an
//             instance is in flight, claimed == done + 1 and no CAS can match.
//   claimed = instances of t claimed; advanced from n to n + 1 by CAS from
//             (n, n) to (n + 1, n) by whichever block first sees instance n
//             ready. Both halves only increase. claimed ≤ done + 1 always, so
//             at most one instance per task is queued and a queue of
//             capacity ≥ tasks never overflows.
// Instance n of s is ready when done[s] ≥ n (implicit self edge) and, for
// every predecessor edge (p, d), done[p] ≥ n + 1 − d.
//
// Completion of instance i of t: publish state[t] = (i+1, i+1) with
// release, fence.sc, then check every successor s (edge distance d) for
// instance n = i + d and t itself for n = i + 1, and claim each ready one by
// CAS (n, n) → (n+1, n). Publish → fence → check: of two predecessors
// finishing together, at least one sees the other's publish, so a successor
// is never lost; the CAS makes sure it is claimed once. Two refinements:
//  - fold: when t's own next instance is already ready, the publish itself
//    claims it, (i+2, i+1): nobody else can claim it in between, because
//    claimed == done + 1 until that store;
//  - early claim (fast path): a successor whose only predecessor edge is
//    t's is ready once instance i is done, so it is claimed before the
//    publish. A completion that claimed everything that could depend on
//    its publish reads nothing afterwards and skips the fence.
// (The emulator runs the same rules; loom checks them.)
// The completing block keeps the first instance it claimed (its own next
// instance first when it is folded into the publish: tasks of at most one
// successor edge; a task completed block-wide checks it after the publish,
// with its successors) and runs it next; the rest go to the ready queue. Tasks
// of small fan-in with at most one successor edge, itself of small fan-in
// and not counted, complete on thread 0 alone (complete_fast); others use
// the block-wide complete().
//
// Ready queues: ticketed Vyukov rings (see autarky_shared::QueueSlot), one
// for compute tasks (compute blocks pop, blocking) and one for comm tasks
// (comm blocks try-pop between their other duties). A compute block keeps
// only compute instances; comm instances are always pushed.
//
// Several PEs (RunParams): ids [num_tasks, num_tasks + num_proxies) are
// proxies for predecessors on other PEs. A producer with remote successors
// (TaskDesc::remote_*) stores state_word(i + 1, i + 1) into each consumer
// PE's proxy word with st.release.sys BEFORE its local publish, so that the
// next instance's runner (which acquires the local publish) can only store
// a larger value after it: the proxy word only increases. Readers of a
// proxy use system-scope acquire (the writer may be another GPU). Comm
// blocks relay proxies to their dynamic successors: a changed proxy value
// (relaxed poll, then fence) is followed by fence.sc and the same
// re-check-and-claim a local completion runs (try_claim_next), so the
// publish → fence → read argument covers remote predecessors too.
//
// Counted tasks (RunParams::counted_fan_in; fan-in in O(1)): a dynamic task
// with at least counted_fan_in predecessor edges is counted. Every
// completion that concerns it is an acq_rel RMW on one word, made after
// the completion's publish, and RMWs on one word are totally ordered:
// of the last arrival instance m needs and the task's own completion of
// m - 1 (an RMW of 0 on the same word), the later one acquires the other's
// publish and claims m. No SC fence on either side (the store-buffering
// form with fences was the protocol until session 29: -DAUTARKY_ARRIVE_SC).
// Two forms of the word (the host picks the kernel variant and the array):
// - arrival slots (-DAUTARKY_SLOTS, the default when the table fits): one
//   word per instance, slot j full (pred_count) exactly when every
//   predecessor instance j needs is done — no predecessor is read; the
//   arrival that fills it claims j if j is next and the task idle (see
//   arrival_slot, slots_arrive);
// - one counter (u64, only increases), a lower bound: an arrival checks
//   the task's next instance m, reading its predecessors, only when the
//   count reaches arrivals_needed(m) (see arrive).
// A reduction over P inputs then costs each input one atomic add, instead
// of a scan of P words per input.
//
// Pinned tasks (RunParams::pinned): the block of a slot runs its list in
// order, instance after instance; before each instance it polls the
// predecessors' done words (relaxed, then an acquire fence), runs the body
// and publishes done (and its carried limit, below) with a release store.
// Nobody claims a pinned task
// (lowering leaves pinned successors out of every successor list), so a
// pinned publish needs no fence unless the task has dynamic successors.
//
// Early finish: a body may lower Status::limit (ctx.finish_at, atomic min).
// Claims compare instances with run_limit(), read after their acquire: a
// stopping task lowers the limit before it publishes, so whoever acquired
// that publish (directly or through a chain of them) sees the lowered
// limit. Pinned blocks carry it instead (carried limits): nobody claims a
// pinned task, so its word's claimed half holds the limit its block knew
// at the publish (pinned_state_word: bit 31, then the limit). Thread 0
// keeps `known` (only decreasing): after an instance's acquire it lowers
// it to what the awaited words carried, or — when one of them carries
// none (a dynamic task's word, a proxy: another PE's limit is not ours) —
// to run_limit() read then, as a claim does (fold_limit); after the body,
// to what the body's own finish_at set (ResidualReport::limit, shared
// memory). The stopping task's word carries the lowered limit, and every
// pinned word published after acquiring it carries it on, so a pinned
// dependent of the stopping instance runs nothing past it without reading
// Status::limit on every hop (an L2 round trip after every acquire, on the
// critical path of every hop of every run that may stop: CG, checked
// Jacobi). Pinned blocks also read run_limit() when their list starts an
// instance that is a multiple of 16, for tasks that no stop gates (which
// the limit never bound exactly). The emulator runs the same rule; loom
// model (d) checks it. Comm block 0
// sets Status::stopped once every local task reached a lowered limit.
// Termination: the block that completes a task's last instance adds 1 to
// Status::tasks_finished; when it reaches num_tasks (or `stopped` is set)
// every idle block leaves.
#pragma once
#include "autarky/task.cuh"
#include "autarky/progress.cuh"

// Generated per graph: calls the body of `kind`, one of the comm kinds
// (Comm) or of the compute kinds (!Comm), or reports an unknown kind —
// unless !Checked: the caller checked `kind` with autarky_kind_known (the
// pinned solo and round paths, once when a block caches its list), and the
// dispatch has no unknown-kind branch (with one kind of the role, not even
// a compare: an empty body costs nothing on a hop).
template <bool Comm, bool Checked = true>
__device__ __forceinline__ void autarky_dispatch(autarky::TaskCtx& ctx, uint32_t kind);
// Generated per graph: is `kind` one of the comm kinds (Comm) or of the
// compute kinds (!Comm)?
template <bool Comm>
__device__ __forceinline__ bool autarky_kind_known(uint32_t kind);

namespace autarky {

constexpr uint32_t NONE = TASK_NONE;
// Successors with more predecessors than this are checked by the whole block.
constexpr uint32_t SMALL_FAN_IN = 8;
#ifndef AUTARKY_PROGRESS_PUBLISH_NS
#define AUTARKY_PROGRESS_PUBLISH_NS 50000
#endif
constexpr uint64_t PROGRESS_PUBLISH_NS = AUTARKY_PROGRESS_PUBLISH_NS;

__device__ __forceinline__ uint32_t done_of(uint64_t word) { return state_done(word); }

__device__ __forceinline__ bool run_finished(const RunParams& p) {
    return ld_relaxed_gpu_u32(&status_of(p)->tasks_finished) == p.num_tasks ||
           ((p.flags & RUN_MAY_STOP) && ld_relaxed_gpu_u32(&status_of(p)->stopped) != 0);
}
// Counts a task that completed its last instance, on the paths of blocks
// that do not go idle through queue_pop afterwards (pinned and comm
// completions): the add that completes the count wakes every idle block
// (wake_all). Compute blocks that finish the run go idle at once and find
// the end at their queue_pop's first poll. Once per task and run, so the
// round trip of the returned count is paid once per task.
__device__ __forceinline__ void count_finished(const RunParams& p, uint32_t tasks = 1) {
    if (atom_add_relaxed_gpu_u32(&status_of(p)->tasks_finished, tasks) + tasks == p.num_tasks) wake_all(p);
}
// Features a graph does not use are compiled out (the host passes
// -DAUTARKY_NO_PINNED / -DAUTARKY_NO_COMM_WORK / -DAUTARKY_NO_REMOTE): the
// register allocation of the whole kernel is set by its largest path, and a
// graph of dynamic compute tasks alone then gets the lean kernel it needs.
__device__ __forceinline__ bool is_comm_task(const RunParams& p, uint32_t t) {
#ifdef AUTARKY_NO_COMM_WORK
    return false;
#else
    return t >= p.first_comm;
#endif
}
// Is a task with `pred_count` predecessor edges counted (see the protocol)?
// Graphs without counted tasks are compiled with -DAUTARKY_NO_COUNTED.
__device__ __forceinline__ bool is_counted(const RunParams& p, uint32_t pred_count) {
#ifdef AUTARKY_NO_COUNTED
    return false;
#else
    return pred_count >= p.counted_fan_in;
#endif
}
// autarky_shared::arrivals_needed: a lower bound of the arrivals instance n
// of a counted task needs (exact once n + 1 reaches its largest distance).
__device__ __forceinline__ uint64_t arrivals_needed(uint32_t pred_count, uint32_t distance_sum, uint32_t n) {
    const uint64_t all = (uint64_t)pred_count * ((uint64_t)n + 1);
    return all > distance_sum ? all - distance_sum : 0;
}
// No gate: check whatever the arrival count.
constexpr uint64_t NO_GATE = ~0ull;
__device__ __forceinline__ bool is_proxy(const RunParams& p, uint32_t t) {
#ifdef AUTARKY_NO_REMOTE
    return false;
#else
    return t >= p.num_tasks;
#endif
}

// Read-only table records (TaskDesc, 48 bytes; Edge, 16) loaded with 16-byte
// non-coherent loads: three LDG.128 for a descriptor instead of twelve
// 4-byte loads (the records are 4-byte aligned in the ABI, but every table
// is its own device allocation, 256-byte aligned, and both sizes are
// multiples of 16). The tables do not change while a kernel runs. ncu on
// the dispatch bench's independent case: the per-instance prefetch of the
// successor's descriptor issued 25 instructions in each of the block's
// warps (predicated off in all but the lead), a fifth of the instance.
template <class T>
__device__ __forceinline__ T load_record(uint64_t table, uint32_t index) {
    static_assert(sizeof(T) % 16 == 0, "a record of whole 16-byte chunks");
    union {
        T t;
        uint4 v[sizeof(T) / 16];
    } u;
    const uint4* src = reinterpret_cast<const uint4*>(table) + (size_t)index * (sizeof(T) / 16);
#pragma unroll
    for (uint32_t k = 0; k < sizeof(T) / 16; ++k) u.v[k] = __ldg(src + k);
    return u.t;
}
__device__ __forceinline__ TaskDesc load_desc(const RunParams& p, uint32_t t) {
    return load_record<TaskDesc>(p.tasks, t);
}

// done[t] for a readiness check. Acquire pairs with the release that
// published it (system scope for proxies: their writer may be another GPU).
__device__ __forceinline__ uint32_t load_done(const RunParams& p, uint32_t t) {
    return done_of(is_proxy(p, t) ? ld_acquire_sys_u64(state_at(p, t)) : ld_acquire_gpu_u64(state_at(p, t)));
}

// ---- ready queue ----------------------------------------------------------

// Pushes instance (task, iteration). Returns false if the run was aborted
// while waiting for the slot (the slot's previous popper is mid-read).
// Comm tasks go to the comm ring, compute tasks to the compute ring.
AUTARKY_HOT bool queue_push(Who w, uint32_t task, uint32_t iteration) {
    const RunParams& p = *w.p;
    const bool comm = is_comm_task(p, task);
    QueueCtl* q = reinterpret_cast<QueueCtl*>(comm ? p.comm_queue : p.queue);
    const uint32_t mask = comm ? p.comm_queue_mask : p.queue_mask;
    const uint32_t k = atom_add_relaxed_gpu_u32(&q->tail, 1);
    QueueSlot* s = reinterpret_cast<QueueSlot*>(comm ? p.comm_slots : p.slots) + (k & mask);
    // Acquire pairs with the previous popper's release of `seq = k`: its read
    // of the old item happens before we overwrite it.
    WaitSite site{WaitKind::QueueSpace, k & mask, k, task, iteration};
    WaitResult r = wait_until(w, site, [&](uint64_t& seen, uint32_t) -> uint32_t {
        const uint32_t seq = (uint32_t)(ld_acquire_gpu_u64(&s->word) >> 32);
        seen = seq;
        return seq == k ? 1u : 0u;
    });
    if (r != WaitResult::Ready) return false;
    s->iteration = iteration;
    // Release publishes `iteration` (and the claim that preceded the push).
    st_release_gpu_u64(&s->word, queue_slot_word(k + 1, task));
    return true;
}

// Comm ring: takes one instance if one is queued now (Vyukov's try-dequeue:
// CAS the head ticket only when its slot is already filled). Never waits.
__device__ inline bool comm_try_pop(const RunParams& p, uint32_t* task, uint32_t* iteration) {
    QueueCtl* q = reinterpret_cast<QueueCtl*>(p.comm_queue);
    const uint32_t k = ld_relaxed_gpu_u32(&q->head);
    QueueSlot* s = reinterpret_cast<QueueSlot*>(p.comm_slots) + (k & p.comm_queue_mask);
    const uint64_t word = ld_relaxed_gpu_u64(&s->word);
    if ((uint32_t)(word >> 32) != k + 1) return false;
    if (atom_cas_relaxed_gpu_u32(&q->head, k, k + 1) != k) return false;
    // Acquire pairs with the pusher's release (as in queue_pop).
    fence_acquire_gpu();
    *task = (uint32_t)word;
    *iteration = s->iteration;
    st_release_gpu_u64(&s->word, queue_slot_word(k + p.comm_queue_mask + 1, 0));
    return true;
}

// Pops one instance. Ready: *task/*iteration are set. Stop: the run finished.
// `peek(task)` runs once the item is seen, before the slot is released: a
// load it issues (the task's descriptor) is in flight with the read of the
// slot's iteration, which the release waits for anyway, instead of
// starting after it.
template <class Peek>
AUTARKY_HOT WaitResult queue_pop(Who w, uint32_t* task, uint32_t* iteration, Peek peek) {
    const RunParams& p = *w.p;
    QueueCtl* q = reinterpret_cast<QueueCtl*>(p.queue);
    const uint32_t k = atom_add_relaxed_gpu_u32(&q->head, 1);
    QueueSlot* s = reinterpret_cast<QueueSlot*>(p.slots) + (k & p.queue_mask);
    uint64_t word = 0;
    WaitSite site{WaitKind::QueueItem, k & p.queue_mask, (uint64_t)(k + 1), NONE, 0};
    WaitResult r = wait_until(w, site, [&](uint64_t& seen, uint32_t polls) -> uint32_t {
        // Poll relaxed; once seq matches, the acquire fence makes this an
        // acquire pattern pairing with the pusher's release: the item and
        // everything the pusher saw (the predecessors' data) are visible.
        // (An ld.acquire per poll would invalidate L1 and fence on every poll
        // of every idle block.)
        word = ld_relaxed_gpu_u64(&s->word);
        const bool wake = woken(p, w.block);  // in flight with the slot's load
        seen = word >> 32;
        if ((uint32_t)(word >> 32) == k + 1) {
            fence_acquire_gpu();
            return 1u;
        }
        // The run is over (finished, stopped or aborted): leave.
        if (wake) return 2u;
        // Every idle block reads Status's word: rarely, or its L2 slice
        // becomes a hot spot that slows every other block's memory traffic.
        // Also at the first poll: a block going idle may be the one whose
        // completion finished the run (its own add is visible to it), and
        // then it wakes everyone.
        if ((polls == 1 || polls % 64 == 0) && run_finished(p)) {
            wake_all(p);
            return 2u;
        }
        return 0u;
    });
    if (r != WaitResult::Ready) return r;
    *task = (uint32_t)word;
    *iteration = s->iteration;
    peek(*task);
    // Release: our reads of the slot happen before the next pusher's writes.
    st_release_gpu_u64(&s->word, queue_slot_word(k + p.queue_mask + 1, 0));
    return WaitResult::Ready;
}

// ---- completion -------------------------------------------------------------

// Is done[pred] enough for instance n of a successor over an edge of
// `distance`? `t`/`t_done` short-cut the task that just completed.
__device__ __forceinline__ bool pred_satisfied(const RunParams& p, const Edge& e, uint32_t n, uint32_t t,
                                               uint32_t t_done) {
    const uint32_t need = n + 1 - e.distance;  // n ≥ distance here, so no underflow
    if (n + 1 <= e.distance) return true;
    const uint32_t have = e.task == t ? t_done : load_done(p, e.task);
    return geq_u32(have, need);
}

// May instance n still be claimed? The limit is read again here, after the
// readiness check's acquire loads: a stopping task lowers the limit before
// it publishes, so whoever saw its publish sees the new limit (reading it
// once at the start of a completion could claim one instance too many).
__device__ __forceinline__ bool below_limit(const RunParams& p, uint32_t n) {
    return !(p.flags & RUN_MAY_STOP) || n < run_limit(p);
}

// CAS instance n of s from ready to claimed. Acquire: pairs with the release
// that published s's previous instance (done[s] = n), so whoever runs
// instance n sees its data. No release half (it cost a MEMBAR that waited
// for the previous publish to drain): a kept instance runs in this block,
// and a pushed one is published by the push's own release, which also
// covers the body's writes (ordered before it by bar.sync).
__device__ __forceinline__ bool claim(const RunParams& p, uint32_t s, uint32_t n) {
    const uint64_t want = state_word(n, n);
    return atom_cas_acquire_gpu_u64(state_at(p, s), want, state_word(n + 1, n)) == want;
}

// The first task id that is a proxy (none under AUTARKY_NO_REMOTE), read
// once before a scan: the loads of a scan are asm with a memory clobber,
// after each of which the compiler reloads RunParams' fields.
__device__ __forceinline__ uint32_t first_proxy(const RunParams& p) {
#ifdef AUTARKY_NO_REMOTE
    return ~0u;
#else
    return p.num_tasks;
#endif
}
// Predecessor edge `index` of a table, its task and distance only (one
// 8-byte read-only load).
__device__ __forceinline__ void load_pred(uint64_t table, uint32_t index, uint32_t& task, uint32_t& distance) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(table) + (size_t)index * 2);
    task = v.x;
    distance = v.y;
}

// A group of up to B predecessors of instance n, every load in flight:
// get(j, task, distance) for each j < m first (edges, or their cached
// copies), then the done word of each (relaxed, all issued before any is
// used; t's counts as t_done), then the comparisons. Loading each word
// right after its edge cost a round trip per predecessor for the edge
// (the word's load waits for the edge, and the next edge's load waits for
// the word's asm): 1000 predecessors scanned by 128 threads took ~8
// dependent round trips a thread, now two. Sets `remote` when a proxy was
// read (its data needs a system-scope acquire). Constant indices only:
// the arrays stay in registers.
template <uint32_t B, class GetPred>
__device__ __forceinline__ bool preds_group_done(const States& state, uint32_t proxies, uint32_t m, uint32_t n, uint32_t t,
                                                 uint32_t t_done, bool& remote, GetPred get) {
    uint32_t task[B] = {}, need[B] = {}, have[B] = {};
    auto word = [&](uint32_t j) {
        if (need[j] != 0) {
            const uint32_t x = task[j];
            const bool proxy = x >= proxies;
            remote |= proxy;
            have[j] = x == t ? t_done
                             : state_done(proxy ? ld_relaxed_sys_u64(state.at(x)) : ld_relaxed_gpu_u64(state.at(x)));
        }
    };
#pragma unroll
    for (uint32_t j = 0; j < B; ++j) {
        uint32_t distance = ~0u;
        if (j < m) get(j, task[j], distance);
        need[j] = n + 1 > distance ? n + 1 - distance : 0;
#ifdef AUTARKY_SERIAL_PRED_LOADS
        word(j);  // control (A/B): each word loaded right after its edge
#endif
    }
#ifndef AUTARKY_SERIAL_PRED_LOADS
#pragma unroll
    for (uint32_t j = 0; j < B; ++j) word(j);
#endif
    bool ok = true;
#pragma unroll
    for (uint32_t j = 0; j < B; ++j) ok &= geq_u32(have[j], need[j]);
    return ok;
}

// Are instance n's predecessors (list [start, start+count)) done, counting
// t's instance as t_done? One thread, stops at the first one that is not
// (the fast path's check: at most one or two predecessors there, and no
// room for a batch in its registers).
__device__ __forceinline__ bool preds_ready_serial(const RunParams& p, uint32_t start, uint32_t count, uint32_t n,
                                                   uint32_t t, uint32_t t_done) {
    const Edge* preds = reinterpret_cast<const Edge*>(p.pred) + start;
    for (uint32_t k = 0; k < count; ++k)
        if (!pred_satisfied(p, preds[k], n, t, t_done)) return false;
    return true;
}

// The same check with the loads overlapped: a single predecessor is one
// acquire load; several are read PRED_BATCH at a time with relaxed loads,
// so their round trips overlap (an ld.acquire waits before anything after
// it issues: a stencil tile's five predecessors cost five L2 round trips
// in a row), then one acquire fence once all are done (system scope if a
// proxy is among them), which pairs with the release publishes the loads
// read. Used off the single-thread fast path.
constexpr uint32_t PRED_BATCH = 4;
__device__ __forceinline__ bool preds_ready_batch(const RunParams& p, uint32_t start, uint32_t count, uint32_t n,
                                                  uint32_t t, uint32_t t_done) {
    const Edge* preds = reinterpret_cast<const Edge*>(p.pred) + start;
    if (count <= 1) return count == 0 || pred_satisfied(p, preds[0], n, t, t_done);
    bool remote = false;
    const States state = states_of(p);
    const uint32_t proxies = first_proxy(p);
    const uint64_t table = p.pred;
    for (uint32_t k = 0; k < count; k += PRED_BATCH) {
        const bool ok = preds_group_done<PRED_BATCH>(state, proxies, count - k, n, t, t_done, remote,
                                                     [&](uint32_t j, uint32_t& task, uint32_t& distance) {
                                                         load_pred(table, start + k + j, task, distance);
                                                     });
        if (!ok) return false;
    }
    if (remote) fence_acquire_sys();
    else fence_acquire_gpu();
    return true;
}

// Are instance n's predecessors (list [start, start+count)) done now?
// Every thread of the block calls it (it ends with a barrier); the result
// is the same for all. A thread that saw its share done fences (acquire,
// system scope when a proxy is among them) before the barrier, so the
// predecessors' data is visible to every thread after it. Used for
// pinned comm tasks' wide joins (WIDE_POLL_MIN) and for successors with
// more than SMALL_FAN_IN predecessors in complete().
__device__ __noinline__ bool preds_done_block(const RunParams& p, uint32_t start, uint32_t count, uint32_t n) {
    const States state = states_of(p);
    const uint32_t proxies = first_proxy(p);
    const uint64_t table = p.pred;
    bool ok = true, remote = false;
    // This thread's share: predecessors threadIdx.x + k·blockDim.x, eight at
    // a time.
    const uint32_t mine = count > threadIdx.x ? (count - threadIdx.x + blockDim.x - 1) / blockDim.x : 0;
    for (uint32_t k0 = 0; ok && k0 < mine; k0 += 8) {
        ok = preds_group_done<8>(state, proxies, mine - k0, n, NONE, 0, remote,
                                 [&](uint32_t j, uint32_t& task, uint32_t& distance) {
                                     load_pred(table, start + threadIdx.x + (k0 + j) * blockDim.x, task, distance);
                                 });
    }
    if (ok) {
        if (remote) fence_acquire_sys();
        else fence_acquire_gpu();
    }
    return __syncthreads_and(ok) != 0;
}

// How far are the predecessors (list [start, start + count)) of a wide
// task done? Returns R: every instance below R has its predecessors done
// (R = the least done[p] + distance over the edges, saturated), so
// instance n is ready exactly when n < R, and, because done words only
// grow, stays so. Every thread of the block calls it (it ends with a
// barrier); *sh_min (shared memory, ~0u before the call, ordered by a
// barrier) takes the block's minimum. As in preds_done_block, each
// thread loads its share's edges, then their words, all in flight, and
// fences (acquire; system scope when a proxy is among them) before the
// barrier. complete() checks its wide successors with it; the answer for
// its own task is kept by thread 0 (WideReady), so that instances up to R
// are claimed by the completion before them with no read at all.
__device__ __noinline__ uint32_t preds_ready_through_block(const RunParams& p, uint32_t start, uint32_t count,
                                                           uint32_t* sh_min) {
    const States state = states_of(p);
    const uint32_t proxies = first_proxy(p);
    const uint64_t table = p.pred;
    bool remote = false;
    uint32_t low = ~0u;
    const uint32_t mine = count > threadIdx.x ? (count - threadIdx.x + blockDim.x - 1) / blockDim.x : 0;
    for (uint32_t k0 = 0; k0 < mine; k0 += 8) {
        uint32_t task[8] = {}, distance[8] = {};
        uint64_t word[8] = {};
#pragma unroll
        for (uint32_t j = 0; j < 8; ++j)
            if (k0 + j < mine) load_pred(table, start + threadIdx.x + (k0 + j) * blockDim.x, task[j], distance[j]);
#pragma unroll
        for (uint32_t j = 0; j < 8; ++j) {
            if (k0 + j < mine) {
                const bool proxy = task[j] >= proxies;
                remote |= proxy;
                word[j] = proxy ? ld_relaxed_sys_u64(state.at(task[j])) : ld_relaxed_gpu_u64(state.at(task[j]));
            }
        }
#pragma unroll
        for (uint32_t j = 0; j < 8; ++j) {
            if (k0 + j < mine) {
                const uint64_t r = (uint64_t)state_done(word[j]) + distance[j];
                low = r < low ? (uint32_t)r : low;
            }
        }
    }
    if (mine > 0) {
        if (remote) fence_acquire_sys();
        else fence_acquire_gpu();
    }
    low = __reduce_min_sync(0xffffffffu, low);
    if ((threadIdx.x & 31) == 0 && low != ~0u) atomicMin(sh_min, low);
    __syncthreads();
    return *sh_min;
}

// A pinned comm task's block-wide wait for instance n's predecessors (list
// [start, start + count)), up to `rounds` polls: each thread loads its
// share's edges (at most eight: count <= 8 blockDim.x) once and then polls
// only their done words, one relaxed load a word, all in flight; a thread
// whose share is done fences (acquire, system scope if a proxy is among
// them) and stops polling (done words only grow); __syncthreads_and ends
// the round. A round is then one L2 round trip and a barrier, where a
// round of the comm loop (preds_done_block) costs thread 0's list entry
// and descriptor, each thread's edges and then its words: four dependent
// round trips and two barriers between the last input's publish and its
// detection, twice an iteration in CG. Wider shares, or one round: as
// preds_done_block. Returns whether every predecessor is done; on true
// every thread's acquire happened before the barrier, and *low (shared
// memory, 0xffffffff before the wait) is the lowest limit the awaited
// words carried below the iteration count, 0 if one carried none (see
// fold_limit).
// (-DAUTARKY_EXP_WIDE_ONE_ROUND: one round of preds_done_block a comm
// loop round, the control.)
#ifndef AUTARKY_WIDE_ROUNDS
#define AUTARKY_WIDE_ROUNDS 16
#endif
constexpr uint32_t WIDE_ROUNDS = AUTARKY_WIDE_ROUNDS;
__device__ __noinline__ bool preds_wait_block(const RunParams& p, uint32_t start, uint32_t count, uint32_t n,
                                              uint32_t rounds, uint32_t* low) {
#ifdef AUTARKY_EXP_WIDE_ONE_ROUND
    rounds = 1;
#endif
    if (rounds <= 1 || count > 8 * blockDim.x) {
        // No words kept: the limit from Status (*low = 0 before the wait's
        // barrier; thread 0 reads it after).
        if (threadIdx.x == 0) *low = 0;
        return preds_done_block(p, start, count, n);
    }
    const States state = states_of(p);
    const uint32_t proxies = first_proxy(p);
    const uint32_t mine = count > threadIdx.x ? (count - threadIdx.x + blockDim.x - 1) / blockDim.x : 0;
    const uint64_t* word[8] = {};
    uint32_t need[8] = {};
    bool remote = false;
#pragma unroll
    for (uint32_t j = 0; j < 8; ++j) {
        if (j < mine) {
            uint32_t task, distance;
            load_pred(p.pred, start + threadIdx.x + j * blockDim.x, task, distance);
            need[j] = n + 1 > distance ? n + 1 - distance : 0;
            word[j] = state.at(task);
            remote |= task >= proxies && need[j] != 0;
        }
    }
    bool ok = false;
    for (uint32_t r = 0; r < rounds; ++r) {
        if (!ok) {
            uint64_t v[8] = {};
#pragma unroll
            for (uint32_t j = 0; j < 8; ++j)
                if (need[j] != 0) v[j] = remote ? ld_relaxed_sys_u64(word[j]) : ld_relaxed_gpu_u64(word[j]);
            ok = true;
#pragma unroll
            for (uint32_t j = 0; j < 8; ++j) ok &= geq_u32(state_done(v[j]), need[j]);
            if (ok) {
                if (remote) fence_acquire_sys();
                else fence_acquire_gpu();
                // The lowest limit this share's words carried (0: one
                // carried none), into the block's minimum when it says
                // anything: runs that never stop early never get here.
                if (may_stop_compiled() && (p.flags & RUN_MAY_STOP)) {
                    uint32_t mine_low = 0xffffffffu;
#pragma unroll
                    for (uint32_t j = 0; j < 8; ++j) {
                        const uint32_t c = need[j] != 0 ? state_carried_limit(v[j]) : 0xffffffffu;
                        mine_low = c < mine_low ? c : mine_low;
                    }
                    if (mine_low < p.iterations) atomicMin(low, mine_low);
                }
            }
        }
        if (__syncthreads_and(ok)) return true;
    }
    return false;
}

// Signals instance i's completion to every consumer PE (see the protocol at
// the top: before the local publish, system-scope release: the body's
// writes — including stores into peers' memory — happen before any
// consumer's acquire of the proxy word). `one_thread`: every instance of
// the task signals from this same thread (a pinned task: its block's
// thread 0), so NVSHMEM's per-thread fence keeps the signals in order.
__device__ __forceinline__ void publish_remote(const RunParams& p, const TaskDesc& d, uint32_t i,
                                               bool one_thread) {
#ifdef AUTARKY_NO_REMOTE
    return;
#endif
    const RemoteOut* r = reinterpret_cast<const RemoteOut*>(p.remote) + d.remote_start;
    const uint64_t* peers = reinterpret_cast<const uint64_t*>(p.peer_states);
#ifdef AUTARKY_NVSHMEM
    bool signalled = false;
#endif
    for (uint32_t k = 0; k < d.remote_count; ++k) {
        uint64_t* peer_state = reinterpret_cast<uint64_t*>(peers[r[k].pe]);
#ifdef AUTARKY_NVSHMEM
        // A consumer reachable only through NVSHMEM (table entry 0): the same
        // word, set by an NVSHMEM signal into its state array (symmetric: at
        // this PE's own address). The body's puts were completed by its
        // quiet(); the fence orders this thread's own earlier signals.
        if (peer_state == nullptr) {
            autarky_nvshmem_fence();
            autarky_nvshmem_signal_set(state_at(p, r[k].slot), state_word(i + 1, i + 1), (int)r[k].pe);
            AUTARKY_TRACE_SIGNAL(p, i, r[k].slot, r[k].pe);
            signalled = true;
            continue;
        }
#endif
        st_release_sys_u64(peer_state + ((uint64_t)r[k].slot << state_shift(p)), state_word(i + 1, i + 1));
        AUTARKY_TRACE_SIGNAL(p, i, r[k].slot, r[k].pe);
    }
#ifdef AUTARKY_NVSHMEM
    // A dynamic task's next instance may run on another block, which starts
    // after acquiring this one's local publish (gpu scope), and signals from
    // another thread: NVSHMEM orders two threads' signals by nothing, and a
    // SET of i + 1 landing after the SET of i + 2 would move the consumer's
    // word back (a wait for the last instance would then never end). So
    // the signal is delivered before the local publish that lets the next
    // instance start.
    if (signalled && !one_thread) autarky_nvshmem_quiet();
#endif
}

// Arrivals (see the protocol at the top). Every completion that concerns a
// counted task s is an RMW on its counter, acq_rel, made after the
// completion's publish: each predecessor instance's arrival (arrive), and
// s's own completion, which adds nothing (self_gate). RMWs on one word
// are totally ordered, and each reads the value the one before it wrote,
// so of the last arrival instance m needs and s's completion of m - 1,
// the later one acquires the other's publish: it reads s's word open (or
// the count full) and checks m. No SC fence is needed on either side, and
// each side's reads are ordered after its RMW by its acquire half; the
// earlier protocol (an SC fence after every arrival and after the task's
// publish, then a plain read of the counter: a store-buffering pattern)
// put two more ordering points on every input's completion (ncu, a join's
// inputs: ordering instructions were half of thread 0's stall samples;
// docs/performance.md, session 29). (-DAUTARKY_ARRIVE_SC: that protocol,
// the control; `fenced` there: the caller made an SC fence after its
// publish, so its RMW is relaxed.)
__device__ __forceinline__ uint64_t arrive(const RunParams& p, uint32_t s, uint32_t k, [[maybe_unused]] bool fenced) {
    uint64_t* a = &reinterpret_cast<uint64_t*>(p.arrivals)[s];
#ifdef AUTARKY_ARRIVE_SC
    const uint64_t count = (fenced ? atom_add_relaxed_gpu_u64(a, k) : atom_add_acq_rel_gpu_u64(a, k)) + k;
    fence_sc_gpu();
    return count;
#else
    return atom_add_acq_rel_gpu_u64(a, k) + k;
#endif
}
#if defined(AUTARKY_SLOTS) && !defined(AUTARKY_NO_COUNTED)
// Arrival slots (-DAUTARKY_SLOTS: the host chose them for this launch, see
// the protocol at the top): instead of one counter, a counted task s has
// one word per instance, slot (s, j) at arrivals[arrivals[s] + j] (the
// base index arrivals[s] is read-only for the run). Instance j of s has
// every predecessor instance it needs exactly when its slot holds
// s's pred_count (the host prefills a slot with the edges whose distance
// reaches before instance 0), so no predecessor is ever read: the arrival
// that fills slot j claims instance j if it is s's next and s is idle, and
// s's own completion of j - 1 reads slot j with an RMW of 0. RMWs on one
// slot are totally ordered, so of the two the later one acquires the
// other's publish and claims j — the argument of the counter, made exact.
#define AUTARKY_SLOTS_ON 1
#ifndef AUTARKY_SLOT_LOOK
#define AUTARKY_SLOT_LOOK 8
#endif
// Slots a join reads ahead of its running instance (compute_loop): those
// found full are kept by thread 0 and run with no read at all.
constexpr uint32_t SLOT_LOOK = AUTARKY_SLOT_LOOK;
// A join's inputs run in the self loop, their arrivals made there a batch
// at a time (run_self_loop), and a join whose next slots are known full
// runs them in a loop of its own (run_join_loop). (-DAUTARKY_NO_INPUT_LOOP,
// -DAUTARKY_NO_JOIN_LOOP: the main path for them, the controls.)
#ifndef AUTARKY_NO_INPUT_LOOP
#define AUTARKY_INPUT_LOOP_ON 1
#endif
#ifndef AUTARKY_NO_JOIN_LOOP
#define AUTARKY_JOIN_LOOP_ON 1
#endif
// The word that holds slot j of the counted task s: SLOT_FIELDS slots a
// word, slot j its 16-bit field slot_shift(j) (abi.h; the host's
// LoweredGraph::initial_arrival_slots lays them out), so an input's batch
// of arrivals is a quarter as many RMWs and a wide join's inputs queue a
// quarter as many at each word.
__device__ __forceinline__ uint64_t* arrival_slot(const RunParams& p, uint32_t s, uint32_t j) {
    uint64_t* a = reinterpret_cast<uint64_t*>(p.arrivals);
    return a + __ldg(reinterpret_cast<const unsigned long long*>(a) + s) + slot_word(j);
}
// One arrival at slot j of s (an acq_rel RMW of its word); the count
// before it.
__device__ __forceinline__ uint32_t slot_arrive(const RunParams& p, uint32_t s, uint32_t j) {
    return slot_count(atom_add_acq_rel_gpu_u64(arrival_slot(p, s, j), 1ull << slot_shift(j)), j);
}
// Slot j's count, read relaxed.
__device__ __forceinline__ uint32_t slot_read(const RunParams& p, uint32_t s, uint32_t j) {
    return slot_count(ld_relaxed_gpu_u64(arrival_slot(p, s, j)), j);
}
// After an arrival (acquired) that filled slot j of s: claim s's instance
// j if nobody runs s now and j is its next.
__device__ __forceinline__ bool slot_claim(const RunParams& p, uint32_t s, uint32_t j) {
    const uint64_t word = ld_relaxed_gpu_u64(state_at(p, s));
    return state_claimed(word) == j && state_done(word) == j && j < run_limit(p) && below_limit(p, j) &&
           claim(p, s, j);
}
#endif
// The gate of a counted task's check of its own next instance, after its
// publish: its arrival count, read by an RMW that adds nothing (acq_rel:
// see arrive). (-DAUTARKY_ARRIVE_SC: an acquire load after the SC fence.)
__device__ __forceinline__ uint64_t self_gate(const RunParams& p, const TaskDesc& d, uint32_t t,
                                              [[maybe_unused]] uint32_t n) {
    if (!is_counted(p, d.pred_count)) return NO_GATE;
#ifdef AUTARKY_SLOTS_ON
    // (Slots: NO_GATE when slot n is full, else 0, which every instance's
    // arrivals_needed exceeds — a prefilled slot is full.)
    if (n >= p.iterations) return 0;
    return slot_count(atom_add_acq_rel_gpu_u64(arrival_slot(p, t, n), 0), n) >= d.pred_count ? NO_GATE : 0;
#endif
    uint64_t* a = &reinterpret_cast<uint64_t*>(p.arrivals)[t];
#ifdef AUTARKY_ARRIVE_SC
    return ld_acquire_gpu_u64(a);
#else
    return atom_add_acq_rel_gpu_u64(a, 0);
#endif
}
// May a completion whose one successor edge is `edge` take the fast path
// (thread 0 alone) when that successor is counted? Its arrival and gated
// check need no barrier; a check of more predecessors than thread 0 reads
// alone is left to the block (compute_loop). (-DAUTARKY_NO_COUNTED_FAST:
// never, the control: the block-wide complete().)
__device__ __forceinline__ bool counted_fast(const RunParams& p, const Edge& edge) {
#ifdef AUTARKY_NO_COUNTED_FAST
    return false;
#else
    return edge.pred_count > 1 && is_counted(p, edge.pred_count);
#endif
}
// Does the protocol ask a completion that concerns counted tasks alone for
// an SC fence after its publish? Only the control's.
__device__ __forceinline__ constexpr bool counted_needs_sc() {
#ifdef AUTARKY_ARRIVE_SC
    return true;
#else
    return false;
#endif
}

// The re-check every completion that reads after its fence runs: if s has
// nothing in flight and its next instance is ready (and below the limit),
// claim it and push it. Used for comm-task completions, pinned tasks'
// dynamic successors and proxy relays (nobody there keeps instances).
// `gate`: an arrival count of the counted task s (NO_GATE otherwise); the
// predecessors are not read while it is below what the instance needs.
// Returns false if a push was aborted.
__device__ __noinline__ bool try_claim_next(Who w, uint32_t s, uint32_t limit, uint64_t gate) {
    const RunParams& p = *w.p;
    const uint64_t word = ld_acquire_gpu_u64(state_at(p, s));
    const uint32_t n = state_done(word);
    if (state_claimed(word) != n || n >= limit) return true;  // in flight (its completion re-checks) or done
    const TaskDesc d = load_desc(p, s);
    if (gate < arrivals_needed(d.pred_count, d.pred_distance_sum, n)) return true;
    if (!preds_ready_batch(p, d.pred_start, d.pred_count, n, NONE, 0)) return true;
    if (!below_limit(p, n) || !claim(p, s, n)) return true;
    return queue_push(w, s, n);
}

#ifdef AUTARKY_SLOTS_ON
// Arrivals of predecessor instances [first, first + k) over edge e at their
// slots (instance first + distance onwards, below the limit), each an RMW
// acq_rel; the one that fills a slot claims that instance if it is the
// task's next (slot_claim) and pushes it. Returns false if a push was
// aborted.
__device__ __noinline__ bool slots_arrive(Who w, const Edge& e, uint32_t first, uint32_t k, uint32_t limit) {
    const RunParams& p = *w.p;
    bool ok = true;
    for (uint32_t x = 0; x < k; ++x) {
        const uint64_t j = (uint64_t)first + x + e.distance;
        if (j >= limit) break;
        if (slot_arrive(p, e.task, (uint32_t)j) + 1 == e.pred_count &&
            slot_claim(p, e.task, (uint32_t)j))
            ok = queue_push(w, e.task, (uint32_t)j) && ok;
    }
    return ok;
}
#endif

// The re-check of successor edge e after a completion of instance `first`
// (k = 1) or a relay (k = how far the proxy advanced, from instance
// `first`): counted successors get the arrivals first and a gated check
// (with slots, the arrivals' own claims).
__device__ __forceinline__ bool recheck(Who w, const Edge& e, uint32_t limit, [[maybe_unused]] uint32_t first,
                                        uint32_t k) {
    const RunParams& p = *w.p;
#ifdef AUTARKY_SLOTS_ON
    if (is_counted(p, e.pred_count)) return slots_arrive(w, e, first, k, limit);
#endif
    // (Every caller made an SC fence after its publish or acquire.)
    return try_claim_next(w, e.task, limit, is_counted(p, e.pred_count) ? arrive(p, e.task, k, true) : NO_GATE);
}

// ---- deferred publishes (run-time chain fusion) -------------------------

// A completion that nobody but this block can be waiting on defers its
// publish while the block runs the instance it kept. Who reads done[t]: the
// readiness checks of t's successors and of t's own next instance, pinned
// successors' polls (not in the successor list: TaskDesc::pinned_succs),
// remote proxies, and comm block 0's stop detection and the host after an
// error. A fast completion defers only when it is not open (every successor
// instance its publish could make ready was claimed early, and its own next
// instance was folded or is past the limit), it kept one of them, and it
// has no pinned or remote successors: then every instance that depends on
// the publish is already claimed (its runner gets our data from this block
// or through the queue push's release), and the deferral is the same as a
// slower completion. Until the publish, state[t] reads (i + 1, i): instance
// i in flight, so every claim CAS on t still fails.
//
// The owed publishes are made together: one fence.acq_rel, then a relaxed
// store of each word (a fence followed by a strong write is a release
// pattern in PTX's memory model: whoever acquires the word sees everything
// before the fence, the bodies of every owed instance included). Their
// order among themselves does not matter: a successor claimed early was
// claimed (its claimed half stored) before the fence, so whoever sees the
// predecessor's done also sees the successor claimed. Flushed when PEND_MAX
// are owed, with the progress counter (every PUBLISH_EVERY instances), at
// the first completion that does not defer, before the block waits for the
// queue, and when it leaves. The emulator runs the same rule.
// (-DAUTARKY_NO_DEFER: publish every completion at once, the control.)
constexpr uint32_t PEND_MAX = 8;
struct Pending {
    uint32_t n;         // owed publishes
    uint32_t finished;  // owed tasks_finished increments
    uint32_t task[PEND_MAX];
    uint64_t word[PEND_MAX];
#ifndef AUTARKY_NO_COUNTED
    // Deferred arrivals (kernels with counted tasks; see flush_arrivals):
    // arr_k arrivals owed to the counted task arr_task (whose predecessor
    // list and distance sum are kept for its check), since arr_since.
    uint32_t arr_task, arr_k, arr_ps, arr_pc, arr_ds;
    uint64_t arr_since;
    // (Slots: the owed arrivals are input arr_input's, for
    // arr_task's instances arr_first, arr_first + 1, ...)
    uint32_t arr_input, arr_first;
    // A counted task's instance whose predecessors the block checks at its
    // next loop top (scan_task NONE: none), with its predecessor list.
    uint32_t scan_task, scan_iter, scan_ps, scan_pc;
#endif
};

__device__ __forceinline__ void flush_pending(const RunParams& p, Pending& q) {
    if (q.n == 0) return;
    fence_acq_rel_gpu();
    for (uint32_t k = 0; k < q.n; ++k) st_relaxed_gpu_u64(state_at(p, q.task[k]), q.word[k]);
    if (q.finished) atom_add_relaxed_gpu_u32(&status_of(p)->tasks_finished, q.finished);
    q.n = 0;
    q.finished = 0;
}

// Owes the publish of `word` to state[t] (the newest word of a task
// replaces its older one: a self-chain owes one entry).
__device__ __forceinline__ void defer_publish(const RunParams& p, Pending& q, uint32_t t, uint64_t word,
                                              bool finished) {
    if (q.n > 0 && q.task[q.n - 1] == t) {
        q.word[q.n - 1] = word;
    } else {
        q.task[q.n] = t;
        q.word[q.n] = word;
        ++q.n;
    }
    q.finished += finished ? 1u : 0u;
    if (q.n == PEND_MAX) flush_pending(p, q);
}

// Deferred arrivals. A join's input that keeps its own next instance and
// whose body was short owes its arrival with its publish (both deferred)
// and makes up to ARRIVE_BATCH of them with one fence and one RMW: the
// flush's fence.acq_rel and relaxed stores publish every owed instance,
// and the RMW (acquire-release, see arrive) adds k after them, so the
// protocol is the same as k arrivals in a row. What it costs is latency:
// the join sees an input's instance at most ARRIVE_DEFER_CYCLES (or one
// short body) late — the inputs run ahead meanwhile, so the join's
// throughput is theirs. Owed arrivals are made when the batch is full or
// old, at a completion that does not defer its own, with the progress
// counter, when the block goes idle, and before a completion of the
// block-wide path. (-DAUTARKY_NO_DEFER_ARRIVALS: none deferred, the
// control.)
#ifndef AUTARKY_ARRIVE_BATCH
#define AUTARKY_ARRIVE_BATCH 16
#endif
#ifndef AUTARKY_ARRIVE_DEFER_CYCLES
#define AUTARKY_ARRIVE_DEFER_CYCLES 4096
#endif
constexpr uint32_t ARRIVE_BATCH = AUTARKY_ARRIVE_BATCH;
constexpr uint64_t ARRIVE_DEFER_CYCLES = AUTARKY_ARRIVE_DEFER_CYCLES;

#ifndef AUTARKY_NO_COUNTED
// Asks the block to check instance m of the counted task s (more
// predecessors than thread 0 reads alone): at its next loop top. One
// request at a time; a second one in the same completion (rare: arrivals
// owed to one join, our own to another) is checked by thread 0 alone,
// slowly but never dropped (a dropped check could be the one the instance
// waits for). Returns false if a push was aborted.
__device__ __noinline__ bool request_scan(Who w, Pending& q, uint32_t s, uint32_t m, uint32_t ps, uint32_t pc) {
    if (q.scan_task == NONE) {
        q.scan_task = s;
        q.scan_iter = m;
        q.scan_ps = ps;
        q.scan_pc = pc;
        return true;
    }
    const RunParams& p = *w.p;
    if (!preds_ready_batch(p, ps, pc, m, NONE, 0) || !below_limit(p, m) || !claim(p, s, m)) return true;
    return queue_push(w, s, m);
}
#endif

// Makes the owed publishes, then the owed arrivals (one RMW) and the
// check they may call for (claimed and pushed here, or asked of the
// block: request_scan). Returns false if a push was aborted.
__device__ __noinline__ bool flush_arrivals(Who w, Pending& q) {
    const RunParams& p = *w.p;
    [[maybe_unused]] const bool fenced = q.n > 0;  // flush_pending's fence orders what follows
    flush_pending(p, q);
#ifndef AUTARKY_NO_COUNTED
    if (q.arr_k == 0) return true;
    const uint32_t s = q.arr_task;
#ifdef AUTARKY_SLOTS_ON
    {
        // (The owed publishes may have gone out already: a fence of our
        // own then, so the RMWs stay a release pattern.)
        if (!fenced) fence_acq_rel_gpu();
        // One relaxed RMW a word of slots (its slots among them at once:
        // slot_add_mask), all in flight (the flush's fence made them a
        // release pattern); the ones that filled a slot then acquire
        // (fence) before reading s's word.
        // (At most ARRIVE_BATCH are owed at a time; more would be made a
        // batch after another, none dropped.)
        constexpr uint32_t WORDS = ARRIVE_BATCH / SLOT_FIELDS + 1;
        const uint32_t k = q.arr_k;
        q.arr_k = 0;
        for (uint32_t j0 = q.arr_first; j0 < q.arr_first + k; j0 += ARRIVE_BATCH) {
            const uint32_t kb = min(k - (j0 - q.arr_first), ARRIVE_BATCH);
            // Word y covers slots [lo_y, hi_y) of the batch [j0, j0 + kb).
            const uint32_t base = j0 - j0 % SLOT_FIELDS;
            uint64_t old[WORDS] = {};
#pragma unroll
            for (uint32_t y = 0; y < WORDS; ++y) {
                const uint32_t lo = max(j0, base + y * SLOT_FIELDS);
                if (lo < j0 + kb) old[y] = atom_add_relaxed_gpu_u64(arrival_slot(p, s, lo), slot_add_mask(lo, j0 + kb - lo));
            }
            uint32_t filled = 0;
#pragma unroll
            for (uint32_t y = 0; y < WORDS; ++y)
#pragma unroll
                for (uint32_t f = 0; f < SLOT_FIELDS; ++f) {
                    const uint32_t j = base + y * SLOT_FIELDS + f;
                    if (j >= j0 && j < j0 + kb && ((old[y] >> (16u * f)) & 0xffffu) + 1 == q.arr_pc)
                        filled |= 1u << (j - j0);
                }
            if (filled == 0) continue;
            fence_acq_rel_gpu();
            const uint64_t word = ld_relaxed_gpu_u64(state_at(p, s));
            const uint32_t m = state_done(word);
            if (state_claimed(word) != m || m < j0 || m - j0 >= kb || !((filled >> (m - j0)) & 1u)) continue;
            if (m >= run_limit(p) || !below_limit(p, m) || !claim(p, s, m)) continue;
            if (!queue_push(w, s, m)) return false;
        }
        return true;
    }
#endif
    const uint64_t arrived = arrive(p, s, q.arr_k, false);
    q.arr_k = 0;
    const uint64_t word = ld_relaxed_gpu_u64(state_at(p, s));
    const uint32_t m = state_done(word);
    if (state_claimed(word) != m || m >= run_limit(p) || arrived < arrivals_needed(q.arr_pc, q.arr_ds, m))
        return true;
    if (q.arr_pc > SMALL_FAN_IN) return request_scan(w, q, s, m, q.arr_ps, q.arr_pc);
    if (!preds_ready_batch(p, q.arr_ps, q.arr_pc, m, NONE, 0) || !below_limit(p, m) || !claim(p, s, m)) return true;
    return queue_push(w, s, m);
#else
    return true;
#endif
}

struct CompletionShared {
    uint32_t limit;         // run_limit() read by thread 0 for this completion
    uint32_t kept_task;
    uint32_t kept_iter;
    uint32_t big_count;     // successors with large fan-in, checked block-wide
    uint32_t big[32];       // indices j into [0, succ_count] (succ_count = self)
    uint32_t big_n[32];     // the instance of big[b] to check
#ifndef AUTARKY_NO_COUNTED
    uint32_t big_min[32];   // preds_ready_through_block's minimum for big[b] (~0u before)
#endif
    uint32_t big_overflow;  // more than 32 uncounted large-fan-in successors: check them serially
    uint64_t self_arrived;  // a counted task's arrival count, for its self check
};

// Resets big_min[slot] (kernels with counted tasks: preds_ready_through_block).
__device__ __forceinline__ void set_big_min([[maybe_unused]] CompletionShared& sh, [[maybe_unused]] uint32_t slot) {
#ifndef AUTARKY_NO_COUNTED
    sh.big_min[slot] = ~0u;
#endif
}

// Thread 0's memory of how far a wide task's predecessors are done: every
// instance of `task` below `ready` has its predecessors done (the last
// block-wide check of its own next instance, preds_ready_through_block).
// Done words only grow, so it never goes stale; while it covers the next
// instance, the completion claims that instance in its publish (the fold)
// without reading anything, and then takes the fast path (a join whose
// inputs ran ahead runs its instances like a self-chain).
// (-DAUTARKY_NO_WIDE_READY: never used, the control.)
struct WideReady {
    uint32_t task;
    uint32_t ready;
};
__device__ __forceinline__ bool wide_ready(const WideReady& w, uint32_t t, uint32_t n) {
#if defined(AUTARKY_NO_WIDE_READY) || defined(AUTARKY_NO_COUNTED)
    return false;
#else
    return w.task == t && n < w.ready;
#endif
}

// Does a counted task's arrival count (read by thread 0 after its publish
// and fence) rule out its instance n? Then its self check is skipped.
__device__ __forceinline__ bool self_gated_out(const RunParams& p, const TaskDesc& d, const CompletionShared& sh,
                                               uint32_t n) {
#if defined(AUTARKY_NO_COUNTED)
    return false;
#elif defined(AUTARKY_SLOTS_ON)
    // (Slots: the gate says whether slot n is full, nothing less.)
    return is_counted(p, d.pred_count) && sh.self_arrived != NO_GATE;
#else
    return is_counted(p, d.pred_count) && sh.self_arrived < arrivals_needed(d.pred_count, d.pred_distance_sum, n);
#endif
}

// Offers a claimed instance to the block: the first claimer keeps it, the
// others push it. Returns false if a push was aborted.
__device__ __forceinline__ bool keep_or_push(Who w, CompletionShared& sh, uint32_t s, uint32_t n) {
    if (!is_comm_task(*w.p, s) && atomicCAS(&sh.kept_task, NONE, s) == NONE) {
        sh.kept_iter = n;
        return true;
    }
    return queue_push(w, s, n);
}

// Edge j of task t's successors, or the self edge when j == succ_count.
__device__ __forceinline__ Edge successor_edge(const RunParams& p, const TaskDesc& d, uint32_t t, uint32_t j) {
    if (j < d.succ_count) return load_record<Edge>(p.succ, d.succ_start + j);
    return Edge{t, 1, d.pred_start, d.pred_count};
}

// Completes instance i of t with the whole block. `edge` is successor edge
// threadIdx.x of t, prefetched before the body ran (valid when
// threadIdx.x < succ_count). `completed` is thread 0's instance count. On
// return, sh.kept_task/kept_iter hold the instance to run next (NONE: pop
// one). Returns false if the block must leave (abort during a push).
AUTARKY_HOT bool complete(Who w, const TaskDesc& d, uint32_t t, uint32_t i, CompletionShared& sh,
                                uint32_t* failed, const Edge& edge, LoopClock& clock, Pending& pend, WideReady& wide) {
    const RunParams& p = *w.p;
    const uint32_t t_done = i + 1;
    if (threadIdx.x == 0) {
        const uint32_t limit = run_limit(p);
        const bool self_next = t_done < limit;
        sh.limit = limit;
        sh.kept_task = NONE;
        sh.big_count = 0;
        sh.big_overflow = 0;
        // Fold the claim of our own next instance into the publish when it
        // is already ready: nobody else can claim it in between, because
        // claimed == done + 1 until this very store. Predecessor progress
        // only grows, so "ready" seen now stays true.
        // (A wide task: when thread 0 knows its predecessors are done that
        // far, WideReady.)
        // A task with successors checks its own next instance in the pass
        // below, beside them, after the publish: the check here (its list's
        // records, then their words) held the publish back by two round
        // trips on thread 0, and the pass needs the SC fence anyway
        // (session 35: the dynamic stencil −14 %).
        // (-DAUTARKY_NO_LATE_SELF: before the publish for every task, the
        // control.)
#ifndef AUTARKY_NO_LATE_SELF
        const bool check_self_here = d.succ_count == 0;
#else
        constexpr bool check_self_here = true;
#endif
        const bool self_claimed =
            self_next &&
            (wide_ready(wide, t, t_done) ||
             (check_self_here && d.pred_count <= SMALL_FAN_IN &&
              preds_ready_batch(p, d.pred_start, d.pred_count, t_done, t, t_done))) &&
            below_limit(p, t_done);
        publish_remote(p, d, i, false);
        // Earlier completions' owed publishes first (one fence for both),
        // and their owed arrivals.
#ifndef AUTARKY_NO_COUNTED
        if (!flush_arrivals(w, pend)) atomicExch(failed, 1u);
#else
        flush_pending(p, pend);
#endif
        // Publish done[t] = i + 1. Release: the body's writes (ordered before
        // this by the caller's __syncthreads) are visible to whoever acquires it.
        st_release_gpu_u64(state_at(p, t), self_claimed ? state_word(t_done + 1, t_done) : state_word(t_done, t_done));
        // A SeqCst fence is needed here whenever we go on to read other
        // tasks' progress (successor checks, or our own unclaimed next
        // instance): a predecessor finishing at the same time does the
        // mirror image, and without the fence both could read the old value
        // of the other's word and neither would claim the successor.
        // (A counted task's own check needs none: its gate is an RMW on its
        // counter, see arrive.)
        if (d.succ_count > 0 ||
            (self_next && !self_claimed && (counted_needs_sc() || !is_counted(p, d.pred_count))))
            fence_sc_gpu();
        // A counted task checks its own next instance only once its
        // arrivals say it may be ready (an RMW after the publish).
#ifndef AUTARKY_NO_COUNTED
        sh.self_arrived = self_next && !self_claimed ? self_gate(p, d, t, t_done) : NO_GATE;
#endif
        if (t_done == limit) atom_add_relaxed_gpu_u32(&status_of(p)->tasks_finished, 1);
        // The block's counter is published every PUBLISH_EVERY instances or
        // TICK_CYCLES (and before the block goes idle, and at exit), not every
        // time: each store would make the next release wait for it to drain.
        ++clock.completed;
        if (loop_tick(w, clock)) atomicExch(failed, 1u);
        if (self_claimed) {
            sh.kept_task = t;
            sh.kept_iter = t_done;
        }
    }
    // Publish: thread 0's done[t] + SC fence happen before every thread's
    // successor checks below (bar.sync orders them), and the reset `sh`.
    __syncthreads();
    const uint32_t limit = sh.limit;
    const bool self_done = sh.kept_task == t || t_done >= limit;
    bool ok = true;
    // Successors with small fan-in: one thread each.
    for (uint32_t j = threadIdx.x; j <= d.succ_count; j += blockDim.x) {
        if (j == d.succ_count && self_done) continue;
        const Edge e = j < d.succ_count ? (j == threadIdx.x ? edge : successor_edge(p, d, t, j))
                                        : successor_edge(p, d, t, j);
        uint32_t n = i + e.distance;
        if (j < d.succ_count && e.pred_count > 1 && is_counted(p, e.pred_count)) {
            // A counted successor: arrive, then check its next unclaimed
            // instance m (not necessarily n: arrivals may lag publishes)
            // only if the count reached what m needs.
            // (The read-only distance sum is loaded first, so its latency
            // overlaps the RMW and the fence.)
#ifdef AUTARKY_SLOTS_ON
            // (Slots: the arrival at slot n; the one that fills it claims n
            // if n is the successor's next.)
            if (n < limit && slot_arrive(p, e.task, n) + 1 == e.pred_count &&
                slot_claim(p, e.task, n))
                ok = keep_or_push(w, sh, e.task, n) && ok;
            continue;
#endif
            const uint32_t distance_sum = reinterpret_cast<const TaskDesc*>(p.tasks)[e.task].pred_distance_sum;
            // Thread 0 made the SC fence above (succ_count > 0).
            const uint64_t arrived = arrive(p, e.task, 1, threadIdx.x == 0);
            // Relaxed (after the arrival's acquire): the word only decides
            // whether to check; the check's loads are acquired (a fence
            // once all are done) and the claim CAS acquires the
            // successor's own previous instance.
            const uint64_t word = ld_relaxed_gpu_u64(state_at(p, e.task));
            n = state_done(word);
            if (state_claimed(word) != n || n >= limit) continue;  // in flight (its completion re-checks) or done
            if (arrived < arrivals_needed(e.pred_count, distance_sum, n)) continue;
            if (e.pred_count > SMALL_FAN_IN) {
                const uint32_t slot = atomicAdd(&sh.big_count, 1u);
                if (slot < 32) {
                    sh.big[slot] = j;
                    sh.big_n[slot] = n;
                    set_big_min(sh, slot);
                    continue;
                }
                // No room in big[]: this thread checks it alone.
            }
            const bool ready = preds_ready_batch(p, e.pred_start, e.pred_count, n, t, t_done);
            if (ready && below_limit(p, n) && claim(p, e.task, n)) ok = keep_or_push(w, sh, e.task, n) && ok;
            continue;
        }
        if (n >= limit) continue;
        if (j == d.succ_count && self_gated_out(p, d, sh, n)) continue;
#ifdef AUTARKY_SLOTS_ON
        if (j == d.succ_count && is_counted(p, d.pred_count)) {
            // Its slot is full (the gate): ready.
            if (below_limit(p, n) && claim(p, t, n)) ok = keep_or_push(w, sh, t, n) && ok;
            continue;
        }
#endif
        bool ready = true;
        if (j < d.succ_count && e.pred_count == 1) {
            // This edge is the successor's only predecessor edge, and we just
            // completed the instance it needs: ready without a load.
        } else if (e.pred_count > SMALL_FAN_IN) {
            const uint32_t slot = atomicAdd(&sh.big_count, 1u);
            if (slot < 32) {
                sh.big[slot] = j;
                sh.big_n[slot] = n;
                set_big_min(sh, slot);
            } else {
                sh.big_overflow = 1;
            }
            continue;
        } else {
            ready = preds_ready_batch(p, e.pred_start, e.pred_count, n, t, t_done);
        }
        if (ready && below_limit(p, n) && claim(p, e.task, n)) ok = keep_or_push(w, sh, e.task, n) && ok;
    }
    // Publish: big[] / big_count to the whole block.
    __syncthreads();
    const uint32_t big = sh.big_count < 32 ? sh.big_count : 32;
    // Successors with large fan-in: the whole block checks their predecessors.
    for (uint32_t b = 0; b < big; ++b) {
        const Edge e = successor_edge(p, d, t, sh.big[b]);
        const uint32_t n = sh.big_n[b];
        // Each thread reads every blockDim-th predecessor, its loads in
        // flight together (thread 0 published done[t] before the first
        // barrier, so t needs no short-cut), and fences (acquire); the
        // barrier in preds_ready_through_block also publishes: every
        // thread's acquire happens before thread 0's claim. How far they
        // are done, for our own task, is kept for the next completions.
        // (Kernels without counted tasks keep none: their code stays that
        // of a plain check.)
#ifdef AUTARKY_NO_COUNTED
        const bool ready = preds_done_block(p, e.pred_start, e.pred_count, n);
#else
        const uint32_t ready_to = preds_ready_through_block(p, e.pred_start, e.pred_count, &sh.big_min[b]);
        if (threadIdx.x == 0 && sh.big[b] == d.succ_count) {
            wide.task = t;
            wide.ready = ready_to;
        }
        const bool ready = n < ready_to;
#endif
        if (threadIdx.x == 0 && ready && below_limit(p, n) && claim(p, e.task, n))
            ok = keep_or_push(w, sh, e.task, n) && ok;
    }
    if (sh.big_overflow && threadIdx.x == 0) {
        // Rare: more than 32 large-fan-in successors; thread 0 checks the rest.
        // Counted successors were checked by the thread that arrived (and
        // the self check of a counted task is gated like theirs).
        for (uint32_t j = 0; j <= d.succ_count; ++j) {
            const Edge e = successor_edge(p, d, t, j);
            const uint32_t n = i + e.distance;
            if (n >= limit || e.pred_count <= SMALL_FAN_IN) continue;
            if (j < d.succ_count && is_counted(p, e.pred_count)) continue;
            if (j == d.succ_count && (self_done || self_gated_out(p, d, sh, n))) continue;
            const Edge* preds = reinterpret_cast<const Edge*>(p.pred) + e.pred_start;
            bool ready = true;
            for (uint32_t k = 0; k < e.pred_count && ready; ++k) ready = pred_satisfied(p, preds[k], n, t, t_done);
            if (ready && below_limit(p, n) && claim(p, e.task, n)) ok = keep_or_push(w, sh, e.task, n) && ok;
        }
    }
    if (!ok) atomicExch(failed, 1u);
    // Publish: kept_task/kept_iter and `failed` to the whole block.
    __syncthreads();
    return *failed == 0;
}

// Completes instance i of t with thread 0 alone: the fast path for tasks
// of small fan-in, not counted, with at most one successor edge whose
// successor has small fan-in (chains, independent tasks), the common case,
// or is counted (the inputs of a wide join: counted_fast). Same protocol
// as complete(), without the block-wide passes and their three barriers
// (profiled on an H200: ~240 instructions and 5 barriers per instance, with
// the memory fence only a quarter of the time). `edge` is successor entry 0
// (prefetched), `succ_distance_sum` its task's pred_distance_sum (read only
// for a counted one). Sets *next_task/*next_iter to the instance to run
// next (NONE: pop one). A counted successor whose arrivals say instance m
// may be ready and whose predecessors are too many for thread 0 alone is
// checked by the block at its next loop top (request_scan). `short_body`:
// the instance's body was short enough to defer its arrival with its
// publish (flush_arrivals). Returns false if a push was aborted.
AUTARKY_HOT bool complete_fast(Who w, const TaskDesc& d, uint32_t t, uint32_t i, const Edge& edge,
                               uint32_t succ_distance_sum, bool self_known, bool short_body, LoopClock& clock,
                               Pending& pend, uint32_t* next_task, uint32_t* next_iter) {
    const RunParams& p = *w.p;
    const uint32_t t_done = i + 1;
    const uint32_t limit = run_limit(p);
    const bool self_next = t_done < limit;
    // Fold the claim of our own next instance into the publish when it is
    // ready (see complete()); `self_known`: a wide task's next instance,
    // known ready (WideReady).
    const bool self_claimed =
        self_next &&
        (self_known ||
         (d.pred_count <= SMALL_FAN_IN && preds_ready_serial(p, d.pred_start, d.pred_count, t_done, t, t_done))) &&
        below_limit(p, t_done);
    const bool succ_live = d.succ_count == 1 && i + edge.distance < limit;
    // A comm successor is pushed to the comm ring, never kept here.
    const bool succ_keepable = !is_comm_task(p, edge.task);
    // Early claim: a successor whose only predecessor edge is this one is
    // ready once our instance is done, so claim it before publishing. Its
    // runner gets our data from this block (kept) or through the queue push's
    // release. If it is claimed here and our own next instance is settled,
    // nothing that could depend on our publish is left unclaimed, so we read
    // nothing after the publish and need no fence (see complete()).
    const uint32_t n = i + edge.distance;
    // A counted successor (counted_fast): never claimed early; the arrival
    // after the publish, then a check gated by it (below).
    const bool succ_counted = succ_live && edge.pred_count > 1 && is_counted(p, edge.pred_count);
    bool early = succ_live && edge.pred_count == 1 && below_limit(p, n);
#ifndef AUTARKY_NO_FIRST_CLAIM_STORE
    if (early && n == 0) {
        // Its first instance (we are instance 0, the edge has distance 0):
        // nobody can see it ready before our publish and it has no earlier
        // instance, so its word is still (0, 0) and nobody else writes it
        // until then; a plain store claims it (no CAS round trip). Ordered
        // before our publish by the publish's release (or flush's fence).
        st_relaxed_gpu_u64(state_at(p, edge.task), state_word(1, 0));
    } else
#endif
    if (early) {
        early = claim(p, edge.task, n);
    }
    publish_remote(p, d, i, false);
    const uint64_t word = self_claimed ? state_word(t_done + 1, t_done) : state_word(t_done, t_done);
    // Open: something our publish could make ready is still unclaimed, so
    // we read other tasks' progress after it.
    // (Known ready and not claimed: the limit came down below it.)
    const bool self_open = self_next && !self_claimed && !self_known;
    const bool open = (succ_live && !early) || self_open;
    // The SC fence after the publish: not for a counted successor (its
    // arrival is an acq_rel RMW, see arrive).
    const bool sc = self_open || (succ_live && !early && (!succ_counted || counted_needs_sc()));
#if !defined(AUTARKY_NO_DEFER) && !defined(AUTARKY_NO_DEFER_ARRIVALS) && !defined(AUTARKY_NO_COUNTED)
    // A join's input running ahead (its next instance kept, its body
    // short): its arrival is owed with its publish (flush_arrivals).
    const bool defer_arrival = succ_counted && self_claimed && !self_open && short_body && d.remote_count == 0 &&
#ifdef AUTARKY_SLOTS_ON
                               d.pinned_succs == 0 &&
                               (pend.arr_k == 0 || (pend.arr_task == edge.task && pend.arr_input == t &&
                                                    pend.arr_first + pend.arr_k == n));
#else
                               d.pinned_succs == 0 && (pend.arr_k == 0 || pend.arr_task == edge.task);
#endif
#else
    const bool defer_arrival = false;
    (void)short_body;
#endif
#ifndef AUTARKY_NO_DEFER
    // Chain fusion (see Pending): nothing but this block waits on the
    // publish, and the block runs what it kept next.
    const bool defer = defer_arrival || (!open && (self_claimed || (early && succ_keepable)) &&
                                         d.remote_count == 0 && d.pinned_succs == 0);
#else
    const bool defer = false;
#endif
    bool arr_ok = true;
    if (defer) {
        defer_publish(p, pend, t, word, t_done == limit);
#if !defined(AUTARKY_NO_DEFER) && !defined(AUTARKY_NO_DEFER_ARRIVALS) && !defined(AUTARKY_NO_COUNTED)
        if (defer_arrival) {
            if (pend.arr_k == 0) {
                pend.arr_task = edge.task;
                pend.arr_ps = edge.pred_start;
                pend.arr_pc = edge.pred_count;
                pend.arr_ds = succ_distance_sum;
                pend.arr_since = clock64();
                pend.arr_input = t;
                pend.arr_first = n;
            }
#if defined(AUTARKY_SLOTS_ON)
            // (Slots) Batches aligned to the join's instances: every input
            // makes the arrivals of instances [kB, kB + B) together, so the
            // join's slots fill B at a time and it runs through them
            // (run_join_loop).
            ++pend.arr_k;
            if ((n + 1) % ARRIVE_BATCH == 0 || clock64() - pend.arr_since >= ARRIVE_DEFER_CYCLES)
                arr_ok = flush_arrivals(w, pend);
#else
            if (++pend.arr_k >= ARRIVE_BATCH || clock64() - pend.arr_since >= ARRIVE_DEFER_CYCLES)
                arr_ok = flush_arrivals(w, pend);
#endif
        }
#endif
    } else {
        if (pend.n > 0) {
            // Owed publishes and ours under one fence (see Pending).
            defer_publish(p, pend, t, word, false);
            flush_pending(p, pend);
        } else {
            // Publish done[t] = i + 1. Release: the body's writes (ordered
            // before this by the caller's __syncthreads) are visible to
            // whoever acquires it.
            st_release_gpu_u64(state_at(p, t), word);
        }
        // A SeqCst fence is needed whenever we go on to read other tasks'
        // progress (see complete()), but for a counted successor's.
        if (sc) fence_sc_gpu();
        if (t_done == limit) atom_add_relaxed_gpu_u32(&status_of(p)->tasks_finished, 1);
#ifndef AUTARKY_NO_COUNTED
        // Owed arrivals (their publishes were just made) before ours.
        if (pend.arr_k > 0) arr_ok = flush_arrivals(w, pend);
#endif
    }
    ++clock.completed;
    // Owed publishes go out with the progress counter at the latest.
#if defined(AUTARKY_SLOTS_ON)
    if (pend.n > 0 && clock.completed % PUBLISH_EVERY == 0) flush_pending(p, pend);
#elif !defined(AUTARKY_NO_COUNTED)
    if ((pend.n > 0 || pend.arr_k > 0) && clock.completed % PUBLISH_EVERY == 0) arr_ok = flush_arrivals(w, pend) && arr_ok;
#else
    if (pend.n > 0 && clock.completed % PUBLISH_EVERY == 0) flush_pending(p, pend);
#endif
    bool ok = !loop_tick(w, clock) && arr_ok;
    *next_task = self_claimed ? t : NONE;
    *next_iter = t_done;
    if (early) {
        if (*next_task == NONE && succ_keepable) {
            *next_task = edge.task;
            *next_iter = i + edge.distance;
        } else {
            ok = queue_push(w, edge.task, i + edge.distance) && ok;
        }
    } else if (succ_counted && !defer_arrival) {
#ifdef AUTARKY_SLOTS_ON
        if (slot_arrive(p, edge.task, n) + 1 == edge.pred_count &&
            slot_claim(p, edge.task, n)) {
            if (*next_task == NONE && succ_keepable) {
                *next_task = edge.task;
                *next_iter = n;
            } else {
                ok = queue_push(w, edge.task, n) && ok;
            }
        }
#else
        // The arrival, then the successor's next unclaimed instance m (not
        // necessarily n: arrivals may lag publishes) only when the count
        // reached what m needs (see complete()).
        const uint64_t arrived = arrive(p, edge.task, 1, sc);
        const uint64_t sword = ld_relaxed_gpu_u64(state_at(p, edge.task));
        const uint32_t m = state_done(sword);
        if (state_claimed(sword) == m && m < limit &&
            arrived >= arrivals_needed(edge.pred_count, succ_distance_sum, m)) {
            if (edge.pred_count > SMALL_FAN_IN) {
#ifndef AUTARKY_NO_COUNTED
                ok = request_scan(w, pend, edge.task, m, edge.pred_start, edge.pred_count) && ok;
#endif
            } else if (preds_ready_batch(p, edge.pred_start, edge.pred_count, m, t, t_done) && below_limit(p, m) &&
                       claim(p, edge.task, m)) {
                if (*next_task == NONE && succ_keepable) {
                    *next_task = edge.task;
                    *next_iter = m;
                } else {
                    ok = queue_push(w, edge.task, m) && ok;
                }
            }
        }
#endif
    } else if (succ_live && !succ_counted) {
        // (Not a counted successor whose arrival was deferred: its check is
        // the arrivals', and a serial scan of a wide join's inputs here cost
        // the input that made it ~0.4 µs an input every instance — session
        // 30's trace: that input then paced the whole join.)
        // A sole predecessor edge is satisfied by the instance we just completed.
        const bool ready =
            edge.pred_count == 1 || preds_ready_serial(p, edge.pred_start, edge.pred_count, n, t, t_done);
        if (ready && below_limit(p, n) && claim(p, edge.task, n)) {
            if (*next_task == NONE && succ_keepable) {
                *next_task = edge.task;
                *next_iter = n;
            } else {
                ok = queue_push(w, edge.task, n) && ok;
            }
        }
    }
    if (self_open && preds_ready_serial(p, d.pred_start, d.pred_count, t_done, t, t_done) &&
        below_limit(p, t_done) && claim(p, t, t_done)) {
        if (*next_task == NONE) {
            *next_task = t;
            *next_iter = t_done;
        } else {
            ok = queue_push(w, t, t_done) && ok;
        }
    }
    return ok;
}

// ---- block loops -------------------------------------------------------------

// The chain loop (run_chain_loop) is compiled where the self loop is: not
// in traced kernels, not in kernels with pinned loops (their hot paths are
// pinned), and not in the protocol controls it depends on.
#if !defined(AUTARKY_TRACE) && !defined(AUTARKY_NO_CHAIN_LOOP) && defined(AUTARKY_NO_PINNED) && \
    !defined(AUTARKY_NO_DEFER) && !defined(AUTARKY_NO_FIRST_CLAIM_STORE)
#define AUTARKY_CHAIN_LOOP 1
#endif
// Chain tasks whose descriptors the chain loop loads together (one lane of
// warp 0 each: at most 32).
constexpr uint32_t CHAIN_BATCH = 32;

// A block's scheduler state in shared memory: one object, declared at
// kernel scope (megakernel.cu), laid out in 16-byte chunks by phase, because
// the compiler reads neighbouring words with one vector load (LDS.128) and
// compute-sanitizer's racecheck reports such a load as a hazard with any
// concurrent write to a word it covers, even though the value is discarded:
//  - chunk 0 {task, iter, run}: written by thread 0 before the loop-top
//    barrier, read by every thread after it;
//  - chunk 1 {failed, fast}: written before or during the body, read by
//    every thread after the post-body barrier. On the fast path thread 0
//    goes on to rewrite chunk 0 while slow warps still read chunk 1, so the
//    two must not share a vector load.
struct alignas(16) BlockShared {
    uint32_t task, iter, run;
    uint32_t slot;  // comm blocks: the pinned list index of the instance to run
    uint32_t failed;
    uint32_t fast;  // this instance completes on the fast path (thread 0 alone)
    uint32_t _pad1, _pad2;
    // Self loop: set by a failing body of an instance of this parity
    // ([parity][0]; see run_self_loop). One 16-byte chunk each: one is
    // written while the other is read.
    uint32_t self_stop[2][4];
    TaskDesc desc;
    // Thread 0 only: the first successor's descriptor, prefetched during the
    // body (kept here, not in a loop-carried register: that was spilled to
    // local memory, and every release fence then waited for the spill).
    TaskDesc next_desc;
    uint32_t next_task, _pad3[3];
    // Comm blocks: the lowest limit a wide pinned task's awaited words
    // carried (preds_wait_block; reset by thread 0 before each wait).
    uint32_t wide_low, _pad5[3];
    // (Slots: run_join_loop) thread 0's knowledge of how far a join's slots
    // are full, for the block (written before the loop-top barrier), and
    // the join loop's verdict (before its barrier).
    uint32_t join_rt, join_go[2], _pad6;
    CompletionShared done;
    Pending pend;  // thread 0 only: publishes owed by fused completions
    ResidualReport report;  // a body's residual, published after its completion (flush_report)
#ifdef AUTARKY_CHAIN_LOOP
    // The chain loop's batch (run_chain_loop): descriptors of the next
    // tasks, and how many of them are links. Written by warp 0 before a
    // barrier, read by every thread after it.
    TaskDesc chain_desc[CHAIN_BATCH];
    uint32_t chain_len;   // links to run, from chain_desc[0]
    uint32_t chain_next;  // then the next task: the last link's successor
    uint32_t chain_end;   // 1: it is no link (or nothing ran): hand it back
    uint32_t _pad4;
#endif
};

// The self loop. A task with no predecessors, no successors of any kind
// and a limit that cannot move (no early finish in the run) keeps its own
// next instance at every completion but the last (complete_fast's fold:
// nothing to wait for), and its completion defers its publish (nobody else
// reads it). Every thread knows that, so the block runs instances [it,
// iterations - 1) here without the loop top and its barrier: thread 0
// completes an instance (below) while the other warps start the next
// body, then joins them; one barrier an instance instead of two.
// Before each barrier thread 0 reads the abort word when its tick is due
// (at least every ~20 µs, and after every body that long), or passes on an
// abort its last completion saw, and the block leaves together: it never
// starts another body after an abort it could have seen (measured: a
// first version that only checked in the completion ran the host-watchdog
// fault test's 1.5 s body once more, 4.2 s against the test's 4 s bound).
// A failing body reports into the stop word of its instance's parity
// (self_stop), read after that instance's barrier: the previous
// instance's word may still be being read by warp 0. Returns the task's
// last instance (run by the caller), or that the block must leave. Out of
// line, taking and returning values (no address of the caller's locals):
// its registers stay out of the main loop (a first version inside the
// loop cost the chain hand-off 5 %).
// One instance of a loop (the self loop, the chain loop): every thread
// runs the body of d (instance it of task t), then the block takes its
// verdict. Thread 0 says whether its tick is due (due) and reads the abort
// word when it is, or passes on an abort its last completion saw
// (stopping); the barrier publishes the body's writes to the next
// instance's threads and to thread 0's completion. Returns true when the
// block must leave: an abort, or the body reported a failure into failed
// (read after the barrier).
__device__ __forceinline__ bool loop_instance(const Who& w, const RunParams& p, const TaskDesc& d, uint32_t t, uint32_t it,
                                              uint32_t* failed, const LoopClock& clock, bool stopping, bool& due) {
    TaskCtx ctx{d.global,  it, p.iterations, p.pe, w.block, reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset,
                d.arg_len, &p, failed,       t};
    autarky_dispatch<false>(ctx, d.kind);
    bool leave = false;
    due = false;
    if (threadIdx.x == 0) {
        due = clock64() - clock.last_tick >= TICK_CYCLES;
        leave = stopping || (due && abort_raised(p, false));
    }
    return __syncthreads_or(leave) || *failed;
}

struct SelfLoopEnd {
    LoopClock clock;  // thread 0's, advanced
    uint32_t it;      // the task's last instance, for the caller to run
    uint32_t ok;      // 0: the block must leave
};
__device__ __noinline__ SelfLoopEnd run_self_loop(Who w, BlockShared& sh, uint32_t t, uint32_t it,
                                                  LoopClock clock, [[maybe_unused]] uint32_t join = NONE,
                                                  [[maybe_unused]] uint32_t join_pc = 0) {
    const RunParams& p = *w.p;
    const TaskDesc d = sh.desc;  // (not changed before the loop top)
    // Thread 0: its last completion saw an abort; the publish it owes for
    // the task (the fold's word of its newest completed instance), kept in
    // a register and handed to sh.pend only when it flushes or leaves (the
    // shared-memory bookkeeping of defer_publish at every instance was the
    // longest part of its path).
    bool stopping = false;
    bool owes = false;
    uint64_t owed = 0;
#ifdef AUTARKY_INPUT_LOOP_ON
    // (Slots) A join's input (one counted successor `join`, distance 0):
    // its arrivals owed in registers, made ARRIVE_BATCH at a time aligned
    // to the join's instances (flush_arrivals, with the owed publish), as
    // complete_fast makes them; what is owed when the loop ends goes back
    // to sh.pend.
    uint32_t jfirst = 0, jk = 0;
    if (threadIdx.x == 0 && join != NONE && sh.pend.arr_k > 0) {
        if (sh.pend.arr_task == join && sh.pend.arr_input == t && sh.pend.arr_first + sh.pend.arr_k == it) {
            jfirst = sh.pend.arr_first;
            jk = sh.pend.arr_k;
            sh.pend.arr_k = 0;
        } else if (!flush_arrivals(w, sh.pend)) {
            stopping = true;
        }
    }
    auto hand_back = [&]() {
        if (jk > 0) {
            sh.pend.arr_task = join;
            sh.pend.arr_pc = join_pc;
            sh.pend.arr_ps = sh.pend.arr_ds = 0;
            sh.pend.arr_input = t;
            sh.pend.arr_first = jfirst;
            sh.pend.arr_k = jk;
            sh.pend.arr_since = clock64();
            jk = 0;
        }
    };
#endif
    for (; it + 1 < p.iterations; ++it) {
        bool due;
        if (loop_instance(w, p, d, t, it, &sh.self_stop[it & 1][0], clock, stopping, due)) {
            if (threadIdx.x == 0 && owes) defer_publish(p, sh.pend, t, owed, false);
#ifdef AUTARKY_INPUT_LOOP_ON
            if (threadIdx.x == 0) hand_back();
#endif
            return SelfLoopEnd{clock, it, 0};
        }
        if (threadIdx.x == 0) {
            // complete_fast's decisions, fixed for this shape: the fold
            // claims instance it + 1 (nothing to wait for, below the fixed
            // limit), nothing is claimed early, nothing is open, and the
            // publish is deferred. Only the bookkeeping is left: the owed
            // word, the count, and with the progress counter (every 16, or
            // when the tick is due) the flush and loop_tick.
            owed = state_word(it + 2, it + 1);
            owes = true;
            bool counted = ++clock.completed % PUBLISH_EVERY == 0;
#ifdef AUTARKY_INPUT_LOOP_ON
            if (join != NONE) {
                if (jk == 0) jfirst = it;
                ++jk;
                if ((it + 1) % ARRIVE_BATCH == 0) {
                    defer_publish(p, sh.pend, t, owed, false);
                    owes = false;
                    hand_back();
                    if (!flush_arrivals(w, sh.pend)) stopping = true;
                    // The progress counter goes with the batch, after its
                    // fence: an input's one fence every ARRIVE_BATCH
                    // instances, not one more for the count's own flush
                    // (session 33: the flushes' fences are the inputs'
                    // pace). A due tick still checks abort below.
                    publish_completed(p, w.block, clock);
                }
                counted = false;
            }
#endif
            if (counted || due) {
                if (owes) defer_publish(p, sh.pend, t, owed, false);
                owes = false;
                flush_pending(p, sh.pend);
                stopping = loop_tick(w, clock) || stopping;
            }
        }
    }
    // The last instance runs on the caller's path, whose completion makes
    // the owed publish (same task: its word replaces ours).
    if (threadIdx.x == 0 && owes) defer_publish(p, sh.pend, t, owed, false);
#ifdef AUTARKY_INPUT_LOOP_ON
    if (threadIdx.x == 0) hand_back();
#endif
    // An abort seen while completing the last instance here ends the block
    // before the caller runs the final one.
    const bool stop = __syncthreads_or(stopping);
    return SelfLoopEnd{clock, it, stop ? 0u : 1u};
}

#ifdef AUTARKY_JOIN_LOOP_ON
// The join loop (slots): a counted task with no successors whose next
// slots thread 0 knows full (below `rt`) runs them like the self loop —
// one barrier an instance, thread 0 completing instance it (the fold
// claims it + 1, known ready; the publish is owed) while the other warps
// start the next body — and reads the next SLOT_LOOK slots when it runs
// out of known ones. Entered with instance it claimed and it + 1 < rt;
// returns the instance for the caller's main path (claimed, not run), or
// that the block must leave.
__device__ __noinline__ SelfLoopEnd run_join_loop(Who w, BlockShared& sh, uint32_t t, uint32_t it, LoopClock clock,
                                                  uint32_t rt) {
    const RunParams& p = *w.p;
    const TaskDesc d = sh.desc;
    bool stopping = false;
    bool owes = false;
    uint64_t owed = 0;
    for (;;) {
        uint32_t* failed = &sh.self_stop[it & 1][0];
        TaskCtx ctx{d.global,  it, p.iterations, p.pe, w.block, reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset,
                    d.arg_len, &p, failed,       t};
        autarky_dispatch<false>(ctx, d.kind);
        bool leave = false, due = false;
        if (threadIdx.x == 0) {
            due = clock64() - clock.last_tick >= TICK_CYCLES;
            leave = stopping || (due && abort_raised(p, false));
            // May the loop run it + 1 as well? Its completion must fold
            // it + 2: known full, or read now.
            const uint32_t n2 = it + 2;
            if (n2 < p.iterations && n2 >= rt) {
                uint64_t v[SLOT_LOOK];
#pragma unroll
                for (uint32_t x = 0; x < SLOT_LOOK; ++x)
                    v[x] = n2 + x < p.iterations ? slot_read(p, t, n2 + x) : 0;
                uint32_t k = 0;
                bool full = true;
#pragma unroll
                for (uint32_t x = 0; x < SLOT_LOOK; ++x) {
                    full = full && n2 + x < p.iterations && v[x] >= d.pred_count;
                    k += full ? 1u : 0u;
                }
                if (k > 0) {
                    fence_acquire_gpu();
                    rt = n2 + k;
                }
            }
            sh.join_go[it & 1] = n2 < p.iterations && n2 < rt ? 1u : 0u;
        }
        if (__syncthreads_or(leave) || *failed) {
            if (threadIdx.x == 0 && owes) defer_publish(p, sh.pend, t, owed, false);
            return SelfLoopEnd{clock, it, 0};
        }
        const bool go = sh.join_go[it & 1] != 0;
        if (threadIdx.x == 0) {
            // The fold: instance it + 1 is claimed in the owed word.
            owed = state_word(it + 2, it + 1);
            owes = true;
            if (++clock.completed % PUBLISH_EVERY == 0 || due) {
                defer_publish(p, sh.pend, t, owed, false);
                owes = false;
                flush_pending(p, sh.pend);
                stopping = loop_tick(w, clock);
            }
        }
        ++it;
        if (!go) break;
    }
    if (threadIdx.x == 0) {
        if (owes) defer_publish(p, sh.pend, t, owed, false);
        sh.join_rt = rt;  // for thread 0's slot_rt (read by thread 0 only after this)
    }
    const bool stop = __syncthreads_or(stopping);
    return SelfLoopEnd{clock, it, stop ? 0u : 1u};
}
#endif

#ifdef AUTARKY_CHAIN_LOOP
// The chain loop. In a run of one instance per task (iterations == 1, a
// limit that cannot move), a chain link — a compute task x with one
// successor edge (x → x + 1, distance 0), no remote or pinned successors,
// whose successor has no other predecessor and is a compute task — is
// completed the way complete_fast completes it: the successor's first
// instance is claimed by a plain store (nobody else can see it ready), the
// publish of done[x] is deferred (nobody but this block waits on it: see
// Pending) and the block runs the successor next. All of that is fixed by
// the tables, so every thread can know it: the block runs the links of a
// chain here without the loop top, its barrier and its dependent loads (a
// link's descriptor, then its successor edge, then the successor's
// descriptor: two L2 round trips a hand-off with empty bodies). Warp 0
// loads CHAIN_BATCH descriptors at once, one lane each, and checks which
// are links; ids are taken to be consecutive (x, x + 1, …: a chain built
// in order), which every lane verifies — the edge says x → x + 1 and the
// successor table is where consecutive links put it — so a chain in
// another order, or a task that is not a link, ends the batch. Thread 0
// completes a link (the claim store, the owed publish as a range of ids,
// the count) while the other warps start the next body; one barrier a
// link. Owed publishes go out as Pending's do — one fence, then relaxed
// stores — with the progress counter (every PUBLISH_EVERY links, or when
// the tick is due) and when the loop returns. Abort and failures as in
// the self loop (run_self_loop). Entered from compute_loop with task x
// (instance 0, claimed, not run) after a completion handed it over; returns
// the next task to run (claimed, instance 0, not run: the first that is not
// a link, or x itself), or that the block must leave.
struct ChainLoopEnd {
    LoopClock clock;  // thread 0's, advanced
    uint32_t task;    // the next task, for the caller to run (instance 0)
    uint32_t ok;      // 0: the block must leave
};
__device__ __noinline__ ChainLoopEnd run_chain_loop(Who w, BlockShared& sh, uint32_t x, LoopClock clock) {
    const RunParams& p = *w.p;
    // Thread 0: publishes owed for tasks [owed_first, owed_first + owed_n)
    // (each done = 1: their only instance; flushed before a link that does
    // not extend the range).
    uint32_t owed_first = 0, owed_n = 0;
    bool stopping = false;
    uint32_t step = 0;
    auto flush = [&]() {
        if (sh.pend.n > 0) flush_pending(p, sh.pend);  // owed before the loop
        if (owed_n == 0) return;
        fence_acq_rel_gpu();
        for (uint32_t k = 0; k < owed_n; ++k) st_relaxed_gpu_u64(state_at(p, owed_first + k), state_word(1, 1));
        // Never the run's last add: the task after the owed ones is unfinished.
        atom_add_relaxed_gpu_u32(&status_of(p)->tasks_finished, owed_n);
        owed_n = 0;
    };
    for (uint32_t base = x;;) {
        // Warp 0: the batch [base, base + CHAIN_BATCH), lane j task base + j.
        // The batch runs its leading links, each the successor of the one
        // before; the successor table entries of consecutive links are
        // consecutive (lane 0's start + j), which every lane checks before
        // it reads its entry.
        if (threadIdx.x < 32) {
            const uint32_t j = threadIdx.x, y = base + j;
            const bool in = j < CHAIN_BATCH && y < p.first_comm;
            TaskDesc dy{};
            if (in) dy = load_desc(p, y);
            const uint32_t s0 = __shfl_sync(0xffffffffu, dy.succ_start, 0);
            bool link = false, consecutive = false;
            uint32_t next = 0;
            if (in) {
                sh.chain_desc[j] = dy;
                if (dy.succ_count == 1 && dy.succ_start == s0 + j && dy.remote_count == 0 && dy.pinned_succs == 0) {
                    const Edge e = load_record<Edge>(p.succ, s0 + j);
                    link = e.pred_count == 1 && e.distance == 0 && e.task < p.first_comm;
#ifdef AUTARKY_FAULTS
                    // Fault injection: a held task is never run here (it is
                    // handed back, and the main loop holds it).
                    if ((p.flags & TEST_HOLD_TASK) && y == p.hold_task) link = false;
#endif
                    next = e.task;
                    consecutive = e.task == y + 1;
                }
            }
            // Lane j runs when lanes 0 … j are links and 0 … j - 1 lead to
            // the next lane.
            const uint32_t runs = __ballot_sync(0xffffffffu, link) & ((__ballot_sync(0xffffffffu, consecutive) << 1) | 1u);
            const uint32_t len = ~runs == 0 ? 32u : (uint32_t)__ffs(~runs) - 1;
            const uint32_t last = __shfl_sync(0xffffffffu, next, len > 0 ? len - 1 : 0);
            const bool last_consecutive = __shfl_sync(0xffffffffu, consecutive, len > 0 ? len - 1 : 0);
            if (j == 0) {
                sh.chain_len = len;
                sh.chain_next = len > 0 ? last : base;
                // Known not to be a link: nothing ran, or the last link's
                // successor is the lane after it, which did not run.
                sh.chain_end = len == 0 || (last_consecutive && len < CHAIN_BATCH);
            }
        }
        // Publish: the batch to the block.
        __syncthreads();
        // (Read before any step's barrier: warp 0 rewrites them in the next
        // batch, which starts after the last step's barrier.)
        const uint32_t len = sh.chain_len, next = sh.chain_next;
        const bool end = sh.chain_end != 0;
        for (uint32_t j = 0; j < len; ++j, ++step) {
            const uint32_t y = base + j;
            const TaskDesc d = sh.chain_desc[j];
            bool due;
            if (loop_instance(w, p, d, y, 0, &sh.self_stop[step & 1][0], clock, stopping, due)) {
                if (threadIdx.x == 0) flush();
                return ChainLoopEnd{clock, y, 0};
            }
            if (threadIdx.x == 0) {
                // complete_fast for a link: the successor's first instance
                // claimed by store (before the publish that flush makes), the
                // publish owed, the count.
                st_relaxed_gpu_u64(state_at(p, j + 1 < len ? y + 1 : next), state_word(1, 0));
                if (owed_n > 0 && owed_first + owed_n != y) flush();  // owed: a range of ids
                if (owed_n == 0) owed_first = y;
                ++owed_n;
                if (++clock.completed % PUBLISH_EVERY == 0 || due) {
                    flush();
                    stopping = loop_tick(w, clock);
                }
            }
            // The batch is read again only after the next load's barrier:
            // every thread has read chain_desc[j] before this step's barrier.
        }
        if (end) {
            // The next task (no link, or x itself) runs on the caller's
            // path. An abort seen while completing the last link ends the
            // block first.
            if (threadIdx.x == 0) flush();
            const bool stop = __syncthreads_or(stopping);
            return ChainLoopEnd{clock, next, stop ? 0u : 1u};
        }
        // The chain goes on at `next` (len ≥ 1 here). Warp 0 rewrites the
        // batch: every thread read its entries before the last step's
        // barrier.
        base = next;
    }
}
#endif

// Compute blocks: pop (or keep) an instance, run it with every thread,
// complete it; leave when the run finished or was aborted.
AUTARKY_HOT void compute_loop(Who w, BlockShared& sh) {
    const RunParams& p = *w.p;
    uint32_t& sh_task = sh.task;
    uint32_t& sh_iter = sh.iter;
    uint32_t& sh_run = sh.run;
    uint32_t& sh_failed = sh.failed;
    TaskDesc& sh_desc = sh.desc;
    CompletionShared& sh_done = sh.done;
    uint32_t task = NONE, iter = 0;  // thread 0's next instance
    uint32_t desc_of = NONE;         // task whose descriptor sh_desc holds
    LoopClock clock;                 // thread 0: instances completed, publish/abort times
    bool stop = false;               // thread 0: abort seen, or a fast-path push was aborted
    [[maybe_unused]] bool handed = false;  // thread 0: `task` is the successor its last completion kept
    // (-DAUTARKY_NO_POP_DESC: the descriptor loaded after the pop, the
    // control.)
#ifndef AUTARKY_NO_POP_DESC
    uint32_t popped = NONE;  // thread 0: the task whose descriptor queue_pop loaded into popped_desc
    TaskDesc popped_desc;
#endif
    WideReady wide{NONE, 0};  // thread 0: how far a wide task's predecessors are done
#ifdef AUTARKY_SLOTS_ON
    uint32_t slot_rt_task = NONE, slot_rt = 0;  // thread 0: slots of slot_rt_task full below slot_rt
#endif
    AUTARKY_TRACE_TASK_DECL();       // thread 0: the running instance's start/end times (traced kernels)
    if (threadIdx.x == 0) sh.next_task = NONE;
    if (threadIdx.x == 0) sh_failed = 0;
    if (threadIdx.x == 0) sh.pend.n = sh.pend.finished = 0;
#ifndef AUTARKY_NO_COUNTED
    // (Deferred arrivals and the block's counted check: Pending.)
    if (threadIdx.x == 0) sh.pend.arr_k = 0;
    if (threadIdx.x == 0) sh.pend.scan_task = NONE;
    // Thread 0: when the running instance's body started (deferred arrivals
    // are for short bodies only).
    uint64_t body_start = 0;
#endif
    if (threadIdx.x == 0) sh.self_stop[0][0] = sh.self_stop[1][0] = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            flush_report(p, sh.report);  // the last instance's residual, after its completion
            uint32_t run = stop ? 0 : 1;
            // 3: the block checks a counted successor first (below; only
            // kernels with counted tasks have the path).
#ifndef AUTARKY_NO_COUNTED
            bool scan = run && sh.pend.scan_task != NONE;
#else
            constexpr bool scan = false;
#endif
            while (run && !scan) {
                if (task == NONE) {
                    // Going idle: owed publishes and the exact count first,
                    // so neither readiness checks nor progress sums
                    // (watchdog, host) wait on this block's work. (Owed
                    // arrivals too: a check they call for comes first.)
#ifndef AUTARKY_NO_COUNTED
                    if (!flush_arrivals(w, sh.pend)) {
                        run = 0;
                        break;
                    }
                    if (sh.pend.scan_task != NONE) {
                        scan = true;
                        break;
                    }
#else
                    flush_pending(p, sh.pend);
#endif
                    publish_completed(p, w.block, clock);
#ifndef AUTARKY_NO_POP_DESC
                    run = queue_pop(w, &task, &iter, [&](uint32_t t) {
                              if (t != desc_of) {
                                  popped_desc = load_desc(p, t);
                                  popped = t;
                              }
                          }) == WaitResult::Ready;
#else
                    run = queue_pop(w, &task, &iter, [](uint32_t) {}) == WaitResult::Ready;
#endif
                    if (run) {
                        BlockStats* bs = stats_of(p, w.block);
                        bs->task = task;
                        bs->iteration = iter;
                    }
                }
                if (!run) break;
#ifdef AUTARKY_FAULTS
                if ((p.flags & TEST_HOLD_TASK) && task == p.hold_task) {
                    // Fault injection: this instance never runs or completes.
                    // Sit in a bounded wait on nothing, so the run ends in a
                    // timeout whose report names the held task.
                    WaitSite site{WaitKind::TestHold, task, 1, task, iter};
                    wait_until(w, site, [](uint64_t& seen, uint32_t) -> uint32_t {
                        seen = 0;
                        return 0u;
                    });
                    run = 0;
                    break;
                }
#endif
                break;
            }
            // 2: the next task was handed over by its predecessor's
            // completion (the chain loop may take it).
            sh_run = run ? (scan ? 3u : handed ? 2u : 1u) : 0u;
            if (scan) {
#ifndef AUTARKY_NO_COUNTED
                sh_task = sh.pend.scan_task;
                sh_iter = sh.pend.scan_iter;
                sh.pend.scan_task = NONE;
#endif
            } else if (run) {
                handed = false;
                sh_task = task;
                sh_iter = iter;
                // Read-only table; a task that keeps its own next instance
                // (the common steady state) reuses the descriptor it has.
#ifndef AUTARKY_NO_POP_DESC
                if (desc_of != task)
                    sh_desc = task == popped ? popped_desc : task == sh.next_task ? sh.next_desc : load_desc(p, task);
                popped = NONE;
#else
                if (desc_of != task)
                    sh_desc = task == sh.next_task ? sh.next_desc : load_desc(p, task);
#endif
#ifdef AUTARKY_JOIN_LOOP_ON
                sh.join_rt = task == slot_rt_task ? slot_rt : 0;
#endif
                desc_of = task;
#ifndef AUTARKY_NO_COUNTED
                body_start = clock64();
#endif
                AUTARKY_TRACE_TASK_START();
            }
        }
        // Publish: sh_run, sh_task, sh_iter, sh_desc to the block.
        __syncthreads();
        if (!sh_run) break;
#ifndef AUTARKY_NO_COUNTED
        if (sh_run == 3) {
            // Instance sh_iter of the counted task sh_task, whose arrivals
            // say it may be ready: the whole block reads its predecessors
            // (the list request_scan kept in sh.pend; nothing rewrites it
            // before the barrier in preds_done_block), and thread 0 claims
            // it, keeps it if it has nothing else to run, or pushes it.
            const uint32_t s = sh_task, m = sh_iter;
            const bool ready = preds_done_block(p, sh.pend.scan_ps, sh.pend.scan_pc, m);
            if (threadIdx.x == 0 && ready && below_limit(p, m) && claim(p, s, m)) {
                if (task == NONE && !is_comm_task(p, s)) {
                    task = s;
                    iter = m;
                } else if (!queue_push(w, s, m)) {
                    stop = true;
                }
            }
            continue;
        }
#endif
        const TaskDesc d = sh_desc;
        uint32_t it = sh_iter;
#if !defined(AUTARKY_TRACE) && !defined(AUTARKY_NO_SELF_LOOP) && defined(AUTARKY_NO_PINNED)
        // A task with no predecessors and no successors: every instance but
        // its last runs in the self loop (see run_self_loop); the last one
        // runs below. (Not in traced kernels: thread 0 times each instance
        // at the loop top; and only in kernels without pinned loops: in
        // those its code cost registers and spills, and their hot paths are
        // pinned.)
#ifdef AUTARKY_INPUT_LOOP_ON
        // (Slots) A join's input — no predecessors, one counted successor
        // over a distance-0 edge — runs in the self loop too, its arrivals
        // batched there.
        uint32_t join = NONE, join_pc = 0;
        if (d.pred_count == 0 && d.succ_count == 1 && d.remote_count == 0 && d.pinned_succs == 0 &&
            !(p.flags & RUN_MAY_STOP) && it + 1 < p.iterations) {
            const Edge je = load_record<Edge>(p.succ, d.succ_start);
            if (je.distance == 0 && je.pred_count > 1 && is_counted(p, je.pred_count) && !is_comm_task(p, je.task)) {
                join = je.task;
                join_pc = je.pred_count;
            }
        }
        if ((join != NONE || d.succ_count == 0) && d.pred_count == 0 && d.remote_count == 0 &&
            d.pinned_succs == 0 && !(p.flags & RUN_MAY_STOP) && it + 1 < p.iterations) {
            const SelfLoopEnd e = run_self_loop(w, sh, sh_task, it, clock, join, join_pc);
#else
        if (d.pred_count == 0 && d.succ_count == 0 && d.remote_count == 0 && d.pinned_succs == 0 &&
            !(p.flags & RUN_MAY_STOP) && it + 1 < p.iterations) {
            const SelfLoopEnd e = run_self_loop(w, sh, sh_task, it, clock);
#endif
            clock = e.clock;
            it = e.it;
            if (!e.ok) break;
        }
#ifdef AUTARKY_JOIN_LOOP_ON
        // (Slots) A join whose next slots thread 0 knows full: the join loop
        // (run_join_loop), then the instance it hands back on this path.
        if (d.succ_count == 0 && d.pred_count > 1 && is_counted(p, d.pred_count) && d.remote_count == 0 &&
            d.pinned_succs == 0 && !(p.flags & RUN_MAY_STOP) && it + 1 < p.iterations && sh.join_rt > it + 1) {
            const SelfLoopEnd e = run_join_loop(w, sh, sh_task, it, clock, sh.join_rt);
            clock = e.clock;
            it = e.it;
            if (!e.ok) break;
            if (threadIdx.x == 0) {
                slot_rt_task = sh_task;
                slot_rt = sh.join_rt;
            }
        }
#endif
#endif
#ifdef AUTARKY_CHAIN_LOOP
        // A chain link handed over by its predecessor in a one-instance
        // run: the chain loop runs it and the links after it, and hands
        // back the first task that is not one (see run_chain_loop). The
        // tests here are those every link passes; the loop checks the rest.
        if (sh_run == 2 && p.iterations == 1 && !(p.flags & RUN_MAY_STOP) && d.succ_count == 1 &&
            d.remote_count == 0 && d.pinned_succs == 0) {
            const ChainLoopEnd e = run_chain_loop(w, sh, sh_task, clock);
            clock = e.clock;
            if (!e.ok) break;
            if (e.task != sh_task) {
                // Run the task handed back from the loop top (its descriptor
                // is loaded there).
                if (threadIdx.x == 0) {
                    task = e.task;
                    iter = 0;
                }
                continue;
            }
        }
#endif
        // Prefetch this thread's successor edge (read-only) so its latency
        // overlaps the body instead of lengthening the completion path.
        Edge edge{};
        if (threadIdx.x < d.succ_count) edge = load_record<Edge>(p.succ, d.succ_start + threadIdx.x);
        // Decided by thread 0 from its prefetched edge; published to the
        // block by the barrier after the body.
        // (A counted successor needs the arrival, which complete() adds. A
        // task of many predecessors checks its own next instance block-wide
        // in complete(): on thread 0 alone, a join of a thousand inputs took
        // ~150 µs per instance, one dependent load per input.)
        // (A counted task's own check goes through its counter: complete().)
        // A wide task whose next instance thread 0 knows ready (WideReady)
        // folds it into its publish and needs nothing else checked there.
#ifdef AUTARKY_SLOTS_ON
        // (Slots) A counted task's next SLOT_LOOK slots, read while the body
        // runs: how far they are full is kept by thread 0 (slot_rt), and a
        // join with no successors whose next slot is full folds its next
        // instance into its publish (fast path); a join whose inputs ran
        // ahead folds SLOT_LOOK instances for one round of loads.
        bool slot_next = false;
        uint64_t slot_val[SLOT_LOOK] = {};
        const bool slot_task = threadIdx.x == 0 && is_counted(p, d.pred_count) && it + 1 < p.iterations;
        bool slot_known = false;
        if (slot_task) {
            if (slot_rt_task == sh_task && it + 1 < slot_rt) {
                slot_known = true;
            } else {
#pragma unroll
                for (uint32_t x = 0; x < SLOT_LOOK; ++x)
                    if (it + 1 + x < p.iterations) slot_val[x] = slot_read(p, sh_task, it + 1 + x);
            }
        }
#endif
#ifndef AUTARKY_NO_COUNTED
        if (threadIdx.x == 0)
            sh.fast = ((d.pred_count <= SMALL_FAN_IN && (counted_needs_sc() || !is_counted(p, d.pred_count))) ||
                       wide_ready(wide, sh_task, it + 1)) &&
                      (d.succ_count == 0 ||
                       (d.succ_count == 1 && ((edge.pred_count <= SMALL_FAN_IN && !is_counted(p, edge.pred_count)) ||
                                              counted_fast(p, edge))));
#else
        // (Kernels without counted tasks: the same test, as main writes it.)
        if (threadIdx.x == 0)
            sh.fast = d.pred_count <= SMALL_FAN_IN &&
                      (d.succ_count == 0 || (d.succ_count == 1 && edge.pred_count <= SMALL_FAN_IN));
#endif
        // Thread 0 also prefetches the first successor's descriptor (a
        // read-only table): on a chain that successor is usually the next
        // instance this block runs, and the load then overlaps the body.
        // (Not zero-initialized: only the lead reads it, and only when it
        // loaded it; the six zeroing moves were issued by every warp.)
        TaskDesc next_desc;
        if (threadIdx.x == 0 && d.succ_count > 0) next_desc = load_desc(p, edge.task);
        TaskCtx ctx{d.global,  it,         p.iterations, p.pe,      w.block,
                    reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset,
                    d.arg_len, &p,         &sh_failed,   sh_task,   &sh.report};
        autarky_dispatch<false>(ctx, d.kind);
#ifdef AUTARKY_SLOTS_ON
        if (slot_task && d.succ_count == 0) {
            if (!slot_known) {
                uint32_t k = 0;
                bool full = true;
#pragma unroll
                for (uint32_t x = 0; x < SLOT_LOOK; ++x) {
                    full = full && it + 1 + x < p.iterations && slot_val[x] >= d.pred_count;
                    k += full ? 1u : 0u;
                }
                if (k > 0) {
                    fence_acquire_gpu();
                    slot_rt_task = sh_task;
                    slot_rt = it + 1 + k;
                    slot_known = true;
                }
            }
            if (slot_known) {
                slot_next = true;
                sh.fast = true;
            }
        }
#endif
        // Publish: every thread's body writes happen before thread 0's release
        // of done[t] in complete(); `sh_failed` to the block.
        __syncthreads();
        if (threadIdx.x == 0) {
            AUTARKY_TRACE_TASK_END();
            if (sh_failed) AUTARKY_TRACE_TASK_RECORD(p, sh_task, it);
        }
        if (sh_failed) break;
        if (threadIdx.x == 0 && d.succ_count > 0) {
            sh.next_task = edge.task;
            sh.next_desc = next_desc;
        }
        if (sh.fast) {
            // Thread 0 alone; the next loop top's barrier publishes its result.
            if (threadIdx.x == 0) {
                if (!complete_fast(w, d, sh_task, it, edge, sh.next_desc.pred_distance_sum,
#ifdef AUTARKY_SLOTS_ON
                                   slot_next,
#else
                                   d.pred_count > SMALL_FAN_IN && wide_ready(wide, sh_task, it + 1),
#endif
#ifndef AUTARKY_NO_COUNTED
                                   clock64() - body_start < ARRIVE_DEFER_CYCLES,
#else
                                   false,
#endif
                                   clock, sh.pend, &task, &iter)) {
                    task = NONE;
                    stop = true;
                }
                handed = task != NONE && task != sh_task && d.succ_count == 1 && task == edge.task;
                AUTARKY_TRACE_TASK_RECORD(p, sh_task, it);
            }
            continue;
        }
        const bool completed = complete(w, d, sh_task, it, sh_done, &sh_failed, edge, clock, sh.pend, wide);
        if (threadIdx.x == 0) AUTARKY_TRACE_TASK_RECORD(p, sh_task, it);
        if (!completed) break;
        if (threadIdx.x == 0) {
            task = sh_done.kept_task;
            iter = sh_done.kept_iter;
        }
    }
    if (threadIdx.x == 0) {
        flush_pending(p, sh.pend);
        flush_report(p, sh.report);
        publish_completed(p, w.block, clock);
    }
}

// ---- pinned tasks and comm blocks ------------------------------------------

// Are instance n's predecessors done now? One relaxed poll of each, issued
// eight at a time before any is tested (so they overlap instead of forming
// a chain of L2 round trips); when all are done, an acquire fence (system
// scope if a proxy is among them) makes their data visible. `get(k, task,
// distance)` gives predecessor k. Thread 0.
template <class GetPred>
__device__ __forceinline__ bool preds_done_batch(const RunParams& p, uint32_t count, uint32_t n, GetPred get) {
    bool remote = false;
    const States state = states_of(p);
    const uint32_t proxies = first_proxy(p);
    for (uint32_t k0 = 0; k0 < count; k0 += 8) {
        const bool ok = preds_group_done<8>(state, proxies, count - k0, n, NONE, 0, remote,
                                            [&](uint32_t j, uint32_t& task, uint32_t& distance) { get(k0 + j, task, distance); });
        if (!ok) return false;
    }
    if (remote) fence_acquire_sys();
    else fence_acquire_gpu();
#ifdef AUTARKY_TRACE
    // trace: every proxy this poll saw advance far enough.
    for (uint32_t k = 0; remote && k < count; ++k) {
        uint32_t task, distance;
        get(k, task, distance);
        if (is_proxy(p, task) && n + 1 > distance)
            trace_append(p, TraceKind::SignalSeen, task, n - distance, task, p.pe);
    }
#endif
    return true;
}

AUTARKY_HOT bool preds_done_now(const RunParams& p, const TaskDesc& d, uint32_t n) {
    const Edge* preds = reinterpret_cast<const Edge*>(p.pred) + d.pred_start;
    return preds_done_batch(p, d.pred_count, n, [&](uint32_t k, uint32_t& task, uint32_t& distance) {
        const Edge e = preds[k];
        task = e.task;
        distance = e.distance;
    });
}

// A pinned block's list, cached in shared memory when it is short (read-only
// tables: loaded once, so an instance's descriptor and predecessor list cost
// no L2 round trips after every acquire fence has invalidated L1).
constexpr uint32_t PIN_CACHE_TASKS = 8;
constexpr uint32_t PIN_CACHE_PREDS = 64;
// The cached tasks' arguments too (16-aligned each, while they fit): a
// body reads them from shared memory instead of L2. Arguments are read-only
// for the whole run, and every instance's first loads are of them, after
// the acquire fence has invalidated L1 — one or two dependent L2 round trips
// per instance (ncu, Jacobi 256²: ~20 % of the pinned path's samples).
constexpr uint32_t PIN_CACHE_ARG_BYTES = 1024;
constexpr uint32_t PIN_ARG_NONE = 0xffffffffu;
#ifdef AUTARKY_EXP_NO_PIN_ARGS
constexpr bool PIN_ARGS = false;  // experiment control: arguments from the arena, for A/B timing only
#else
constexpr bool PIN_ARGS = true;
#endif
struct PinnedCache {
    alignas(16) unsigned char args[PIN_CACHE_ARG_BYTES];
    TaskDesc desc[PIN_CACHE_TASKS];
    // Each cached predecessor's state word (its address: no index
    // arithmetic in the poll) and edge distance.
    const uint64_t* pred_word[PIN_CACHE_PREDS];
    uint32_t pred_off[PIN_CACHE_TASKS + 1];
    uint32_t pred_task[PIN_CACHE_PREDS];
    uint32_t pred_distance[PIN_CACHE_PREDS];
    uint32_t arg_off[PIN_CACHE_TASKS];  // in args[], or PIN_ARG_NONE: read from the arena
    uint32_t task[PIN_CACHE_TASKS];     // the list itself (no global load an instance)
    uint64_t* own_word[PIN_CACHE_TASKS];  // the list's own state words (the round path's stores)
    uint32_t remote[PIN_CACHE_TASKS];   // a proxy is among the task's predecessors (system-scope polls)
    uint32_t cached;  // the whole list fits
    uint32_t lean;    // cached, and no task awaits more than PIN_LEAN_PREDS predecessors
    uint32_t round;   // lean, and the list runs on the round path (is_round_list)
    uint32_t round_dep;  // the round path: round_dep_mask
};

// The solo and round paths dispatch their bodies unchecked (the kinds are
// checked once, when the list is cached: autarky_dispatch);
// -DAUTARKY_EXP_CHECKED_DISPATCH is the A/B control.
#ifdef AUTARKY_EXP_CHECKED_DISPATCH
constexpr bool PIN_DISPATCH_CHECKED = true;
#else
constexpr bool PIN_DISPATCH_CHECKED = false;
#endif

// A cached pinned task's predecessors polled by the lean path: at most this
// many (a 2D stencil tile has 4, a 3D one 6, with its pulses 8).
constexpr uint32_t PIN_LEAN_PREDS = 8;
// ... and by the solo path, held in registers (pinned_solo): a 2D stencil
// tile's four neighbours, or (-DAUTARKY_SOLO_WIDE, which the host passes
// only when some solo list awaits five to eight: a temporally blocked 2D
// tile's eight, a 3D tile's six) all that the lean path polls. Narrow
// otherwise: eight slots would lengthen a four-neighbour tile's path on
// thread 0 (the needs, the predicated loads and compares of four more).
#ifdef AUTARKY_SOLO_WIDE
constexpr uint32_t SOLO_PREDS = PIN_LEAN_PREDS;
#else
constexpr uint32_t SOLO_PREDS = 4;
#endif

// Thread 0 of a pinned block: are the cached predecessors of an instance
// done, `need[j]` being what predecessor j's done word must reach (0: not
// awaited)? One relaxed load of each awaited word, all issued before any
// is compared; the caller's acquire fence follows a true answer. The lean
// path's poll: the words' addresses and the needs are computed once an
// instance, not at every poll (the generic batch costs ~120 instructions a
// poll on thread 0, and a hop's latency grows with them: docs/
// performance.md, session 26).
// On true, `low` is the lowest limit the awaited words carry (carried
// limits: state_carried_limit; 0 when one of them carries none,
// 0xffffffff when none is awaited), worked out only then, from the words
// this poll loaded (the words die here: no registers held across the wait
// on thread 0's path).
// `word(j)` is predecessor j's word: from the cache's addresses (the lean
// path) or from indices held in registers (the solo path, N = SOLO_PREDS).
template <bool Remote, uint32_t N, class Word>
__device__ __forceinline__ bool lean_preds_done(Word word, const uint32_t (&need)[N], uint32_t& low) {
    uint64_t v[N];
#pragma unroll
    for (uint32_t j = 0; j < N; ++j) {
        v[j] = 0;
        if (need[j] != 0) v[j] = Remote ? ld_relaxed_sys_u64(word(j)) : ld_relaxed_gpu_u64(word(j));
    }
    bool ok = true;
#pragma unroll
    for (uint32_t j = 0; j < N; ++j) ok &= geq_u32(state_done(v[j]), need[j]);
    if (ok && may_stop_compiled()) {
        uint32_t m = 0xffffffffu;
#pragma unroll
        for (uint32_t j = 0; j < N; ++j) {
            const uint32_t c = need[j] != 0 ? state_carried_limit(v[j]) : 0xffffffffu;
            m = c < m ? c : m;
        }
        low = m;
    }
    return ok;
}
// ... with the words' addresses from the cache.
template <bool Remote>
__device__ __forceinline__ bool lean_preds_done(const uint64_t* const* words, const uint32_t (&need)[PIN_LEAN_PREDS],
                                                uint32_t& low) {
    return lean_preds_done<Remote>([&](uint32_t j) { return words[j]; }, need, low);
}

// Carried limits (see the protocol at the top): after its acquire, a
// pinned consumer lowers the limit it knows (`known`, thread 0's, only
// decreasing) to what its awaited words carried (`low`; 0xffffffff: no
// word was awaited) — or, when one of them carried none (0: a dynamic
// task's word, a proxy), to Status::limit, read after the acquire as
// before. Runs that cannot stop early skip it all.
// (-DAUTARKY_EXP_LIMIT_REREAD: Status::limit after every acquire, as
// before carried limits: the A/B control.)
__device__ __forceinline__ uint32_t fold_limit(const RunParams& p, uint32_t known, uint32_t low) {
    if (!may_stop_compiled() || !(p.flags & RUN_MAY_STOP)) return known;
#ifdef AUTARKY_EXP_LIMIT_REREAD
    low = 0;
#endif
    const uint32_t l = low != 0 ? low : run_limit(p);
    return l < known ? l : known;
}
// ... and, after a body, to what its own finish_at set (shared memory).
__device__ __forceinline__ uint32_t fold_report_limit(uint32_t known, const ResidualReport& r) {
    return r.limit < known ? r.limit : known;
}

// Thread 0 of a pinned block: does instance n of pinned task t run? Not
// when n reached the limit the block knows; else it waits (the one bounded
// wait) until `ready()` — are its predecessors done now? — holds, then
// `acquire()` fences (or its batch did) and returns the lowest limit the
// awaited words carried (carried_limit; 0: read Status::limit), which
// fold_limit applies before n is compared again. A wait that sees the
// run's limit reach n (every 64 polls) or an abort ends the list.
template <class Ready, class Acquire>
__device__ __forceinline__ bool await_pinned(Who w, uint32_t t, uint32_t n, uint32_t& known, Ready ready,
                                             Acquire acquire) {
    const RunParams& p = *w.p;
    if (n >= known) return false;
    if (!spin_ready(ready)) {
        WaitSite site{WaitKind::Predecessors, t, n, t, n};
        const WaitResult r = wait_until(w, site, [&](uint64_t& seen, uint32_t polls) -> uint32_t {
            seen = 0;
            if (ready()) return 1u;
            return (polls % 64 == 0 && n >= run_limit(p)) ? 2u : 0u;
        });
        if (r != WaitResult::Ready) return false;
    }
    known = fold_limit(p, known, acquire());
    return n < known;
}

// Completes instance n of pinned task t (thread 0): remote signals, the
// release publish, and — only when t has dynamic successors — the fence and
// their re-checks (pushed, never kept: this block runs its list only).
// Returns false when the block must leave (abort).
AUTARKY_HOT bool complete_pinned(Who w, const TaskDesc& d, uint32_t t, uint32_t n, LoopClock& clock,
                                 uint32_t known) {
    const RunParams& p = *w.p;
    publish_remote(p, d, n, true);
    // Release: the body's writes (bar.sync before this) are visible to
    // whoever acquires done[t] = n + 1; the word carries the limit the
    // block knows (`known`: its own finish_at folded in).
    st_release_gpu_u64(state_at(p, t), pinned_state_word(n + 1, known));
    bool ok = true;
    if (d.succ_count > 0) {
        // Publish → fence → read, as in complete().
        fence_sc_gpu();
        const uint32_t limit = run_limit(p);
        const Edge* succ = reinterpret_cast<const Edge*>(p.succ) + d.succ_start;
        for (uint32_t k = 0; k < d.succ_count; ++k) ok = recheck(w, succ[k], limit, n, 1) && ok;
    }
    // The last instance below the limit the block knows. (A block that
    // missed a lowered limit does not count: comm block 0 ends such runs,
    // once every task is done up to the limit: detect_stop.)
    if (n + 1 == known) count_finished(p);
    ++clock.completed;
    return !loop_tick(w, clock) && ok;
}

#ifdef AUTARKY_EXP_SOLO_FAST
// Session 42 experiment (the solo path): complete_pinned for a task with no
// remote successors whose caller issued the release fence already: the
// word's relaxed store at `own` (its state word), then as complete_pinned.
__device__ __forceinline__ bool complete_pinned_fenced(Who w, const TaskDesc& d, uint64_t* own, uint32_t n,
                                                       LoopClock& clock, uint32_t known) {
    const RunParams& p = *w.p;
    st_relaxed_gpu_u64(own, pinned_state_word(n + 1, known));
    bool ok = true;
    if (d.succ_count > 0) {
        fence_sc_gpu();
        const uint32_t limit = run_limit(p);
        const Edge* succ = reinterpret_cast<const Edge*>(p.succ) + d.succ_start;
        for (uint32_t k = 0; k < d.succ_count; ++k) ok = recheck(w, succ[k], limit, n, 1) && ok;
    }
    if (n + 1 == known) count_finished(p);
    ++clock.completed;
    return !loop_tick(w, clock) && ok;
}
#endif

// Completes instance i of a dynamic comm task (thread 0): like
// complete_pinned, plus the task's own next instance; nothing is kept.
__device__ __noinline__ bool complete_serial(Who w, const TaskDesc& d, uint32_t t, uint32_t i, LoopClock& clock) {
    const RunParams& p = *w.p;
    publish_remote(p, d, i, false);
    st_release_gpu_u64(state_at(p, t), state_word(i + 1, i + 1));
    // Publish → fence → read, as in complete().
    fence_sc_gpu();
    const uint32_t limit = run_limit(p);
    bool ok = true;
    const Edge* succ = reinterpret_cast<const Edge*>(p.succ) + d.succ_start;
    for (uint32_t k = 0; k < d.succ_count; ++k) ok = recheck(w, succ[k], limit, i, 1) && ok;
    if (i + 1 < limit) ok = try_claim_next(w, t, limit, self_gate(p, d, t, i + 1)) && ok;
    if (i + 1 == limit) count_finished(p);
    ++clock.completed;
    return !loop_tick(w, clock) && ok;
}

// Runs the body of (task, iter) with every thread of the block, with the
// descriptor in sh.desc; its arguments at `args` when not null (a pinned
// block's copy in shared memory), else in the argument arena. Returns false
// when a thread failed the task. Comm: the block is a comm block (it runs
// only comm kinds; autarky_dispatch).
template <bool Comm>
__device__ __forceinline__ bool run_body(Who w, BlockShared& sh, const TaskDesc& d, const unsigned char* args = nullptr) {
    const RunParams& p = *w.p;
#ifdef AUTARKY_FAULTS
    if ((p.flags & TEST_HOLD_TASK) && sh.task == p.hold_task) {
        // Fault injection on the pinned and comm paths (the dynamic path
        // holds before it gets here), as the emulator holds on every path:
        // the instance never runs; a bounded wait on nothing ends the run
        // in a timeout naming the held task.
        if (threadIdx.x == 0) {
            WaitSite site{WaitKind::TestHold, sh.task, 1, sh.task, sh.iter};
            wait_until(w, site, [](uint64_t& seen, uint32_t) -> uint32_t {
                seen = 0;
                return 0u;
            });
        }
        __syncthreads();
        return false;
    }
#endif
    TaskCtx ctx{d.global,
                sh.iter,
                p.iterations,
                p.pe,
                w.block,
                args != nullptr ? args : reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset,
                d.arg_len,
                &p,
                &sh.failed,
                sh.task,
                &sh.report};
    AUTARKY_TRACE_T0(p, TraceKind::TaskStart, sh.task, sh.iter, 0);
    autarky_dispatch<Comm>(ctx, d.kind);
    // Publish: every thread's body writes happen before thread 0's release
    // of done[t]; `sh.failed` to the block.
    __syncthreads();
    AUTARKY_TRACE_T0(p, TraceKind::TaskEnd, sh.task, sh.iter, 0);
    return sh.failed == 0;
}

#ifdef AUTARKY_EXP_PHASE_CLOCK
// Experiment flag (session 39; off in every kernel the host builds):
// thread 0's cycles an iteration by phase on the solo and round paths, printed for a few blocks at the end
// of runs of 1000 or more iterations: 0 the wait (loop top to ready), 1 the
// acquire and the verdict's barrier, 2 the bodies, 3 the release fence,
// 4 the stores and the bookkeeping to the next loop top.
// The sums in shared memory: a register spilled to the stack would be
// reloaded from L2 after each acquire's L1 invalidation (a 600-cycle stall
// that s39-a/b's first form measured as "bodies").
__device__ __forceinline__ unsigned long long* phase_sums() {
    __shared__ unsigned long long sums[9];
    return sums;
}
struct PhaseClock {
    unsigned long long* sum;
    __device__ __forceinline__ PhaseClock() : sum(phase_sums()) {
        if (threadIdx.x == 0)
            for (int k = 0; k < 9; ++k) sum[k] = 0;
    }
    __device__ __forceinline__ void mark(uint32_t k, uint32_t n) {
        if (threadIdx.x != 0) return;
        const unsigned long long now = clock64();
        if (n >= 100) sum[k] += now - sum[8];
        sum[8] = now;
    }
    __device__ __forceinline__ void print(const char* path, uint32_t block, uint32_t n) {
        if (threadIdx.x != 0 || n < 1000 || block % 61 != 7) return;
        const double d = (double)(n - 100);
        printf("phase %s block %u n %u: wait %.0f acq+bar %.0f bodies %.0f fence %.0f stores+tail %.0f cycles\n", path,
               block, n, sum[0] / d, sum[1] / d, sum[2] / d, sum[3] / d, sum[4] / d);
    }
};
#define AUTARKY_PHASE(k) phase.mark(k, n)
#else
#define AUTARKY_PHASE(k) \
    do {                 \
    } while (0)
#endif

#ifndef AUTARKY_NO_PIN_SOLO
// The solo path: a pinned block whose list is one task of at most
// SOLO_PREDS predecessors (a stencil tile; cached, so lean) runs its
// instances with what an instance needs in registers — on thread 0 the
// awaited words and their distances, on every thread the task id, the
// descriptor's body fields and the arguments' address — and passes thread
// 0's verdict in the loop-top barrier itself (bar.red). The generic lean
// path reads the needs, the words, sh.run/task/iter and the descriptor
// from shared memory every instance, a chain of dependent loads and ~200
// instructions on thread 0 between a predecessor's publish and its own;
// a hop's latency grows with that path (docs/performance.md, sessions 26
// and 36). Same protocol as pinned_loop: the poll, the acquire, the body,
// the release (complete_pinned), the limit checks, the abort tick. Its
// own loop (a branch inside pinned_loop's kept the registers live across
// every list's bodies: spills on the path, no gain); compiled only into
// kernels whose graph has such a list (the host passes
// -DAUTARKY_NO_PIN_SOLO otherwise; set by hand it is the A/B control).
__device__ __forceinline__ void pinned_solo(Who w, BlockShared& sh, PinnedCache& pc) {
    const RunParams& p = *w.p;
    const uint32_t t = pc.task[0];
    const TaskDesc& d = pc.desc[0];  // shared memory: the completion's fields
    const uint32_t global = d.global, arg_len = d.arg_len, kind = d.kind;
    const unsigned char* args = pc.arg_off[0] != PIN_ARG_NONE
                                    ? pc.args + pc.arg_off[0]
                                    : reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset;
    // Thread 0: the awaited words' addresses and their edges' distances; an
    // unused slot's need stays 0 (its word is never loaded). Addresses,
    // not indices: an index's address is recomputed every poll (a
    // constant-bank load and two adds a word: ~24 instructions into the
    // poll loop before its loads issue, 8 with addresses); the stencil row
    // ran 1.161–1.163 µs with addresses against 1.183–1.186 with indices,
    // Jacobi 2D and 3D unchanged (docs/performance.md, session 38).
    const uint64_t* at[SOLO_PREDS];
    uint32_t dist[SOLO_PREDS];
    const bool remote = pc.remote[0] != 0;
    if (threadIdx.x == 0) {
        const uint32_t base = pc.pred_off[0], count = d.pred_count;
#pragma unroll
        for (uint32_t j = 0; j < SOLO_PREDS; ++j) {
            at[j] = j < count ? pc.pred_word[base + j] : states_of(p).base;
            dist[j] = j < count ? pc.pred_distance[base + j] : 0xffffffffu;
        }
    }
    // (Not read through an asm as the round path does: the solo path ran
    // 1.125 us an iteration that way against 1.121 without; session 41.)
    const bool lead = threadIdx.x == 0;
#ifdef AUTARKY_EXP_SOLO_FAST
    // Session 42 experiment: the round path's cuts on the solo path — the
    // failure flag by held shared address, the spin's success straight to
    // the acquire, and (a task with no remote successors) thread 0 alone
    // reading the failure flag, tested after it issues the release fence.
    // (Registers are short here: a first form that also held the word's
    // address, the report's address and a runtime local_only spilled, a
    // value reloaded from L2 after the acquire.)
#ifdef AUTARKY_NO_REMOTE
    constexpr bool local_only = true;
#else
    const bool local_only = d.remote_count == 0;
#endif
    const uint32_t failed_at = held_shared_address(&sh.failed);
#endif
    LoopClock clock;
    bool stop = false;              // thread 0: leave at the next loop top
    uint32_t known = p.iterations;  // thread 0: the run's limit as this block knows it (fold_limit)
#ifdef AUTARKY_EXP_PHASE_CLOCK
    PhaseClock phase;
    uint32_t n_end = 0;
#endif
    for (uint32_t n = 0;; ++n) {
        AUTARKY_PHASE(4);
#ifdef AUTARKY_EXP_PHASE_CLOCK
        n_end = n;
#endif
        bool run = true;  // every thread but 0 votes to run; thread 0 decides
        if (lead) {
            if (may_stop_compiled() && (p.flags & RUN_MAY_STOP) && n % 16 == 0) {
                const uint32_t l = run_limit(p);
                known = l < known ? l : known;
            }
            uint32_t need[SOLO_PREDS];
#pragma unroll
            for (uint32_t j = 0; j < SOLO_PREDS; ++j) need[j] = n + 1 > dist[j] ? n + 1 - dist[j] : 0;
            uint32_t low = 0;
            auto word = [&](uint32_t j) -> const uint64_t* { return at[j]; };
            auto ready = [&]() -> bool {
                return remote ? lean_preds_done<true>(word, need, low) : lean_preds_done<false>(word, need, low);
            };
            auto acquire = [&]() -> uint32_t {
                // Every awaited release (system scope if a proxy is among
                // them), as preds_done_batch.
                if (remote) fence_acquire_sys();
                else fence_acquire_gpu();
#ifdef AUTARKY_TRACE
                const uint32_t off = pc.pred_off[0];
                for (uint32_t j = 0; remote && j < d.pred_count; ++j) {
                    const uint32_t x = pc.pred_task[off + j], distance = pc.pred_distance[off + j];
                    if (is_proxy(p, x) && n + 1 > distance)
                        trace_append(p, TraceKind::SignalSeen, x, n - distance, x, p.pe);
                }
#endif
                return low;
            };
#ifdef AUTARKY_EXP_SOLO_FAST
            if (!stop && n < known && spin_ready(ready)) {
                if (may_stop_compiled()) {
                    known = fold_limit(p, known, acquire());
                    run = n < known;
                } else {
                    (void)acquire();
                }
            } else {
                run = !stop && await_pinned(w, t, n, known, ready, acquire);
            }
#else
            run = !stop && await_pinned(w, t, n, known, ready, acquire);
#endif
        }
        AUTARKY_PHASE(0);
        // Publish: thread 0's verdict, and the predecessors' data (its
        // acquire), to the block.
        if (!__syncthreads_and(run)) break;
        AUTARKY_PHASE(1);
        TaskCtx ctx{global, n, p.iterations, p.pe, w.block, args, arg_len, &p, &sh.failed, t, &sh.report};
        AUTARKY_TRACE_T0(p, TraceKind::TaskStart, t, n, 0);
        autarky_dispatch<false, PIN_DISPATCH_CHECKED>(ctx, kind);
        // Publish: every thread's body writes happen before thread 0's
        // release of done[t]; `sh.failed` to the block.
        __syncthreads();
        AUTARKY_TRACE_T0(p, TraceKind::TaskEnd, t, n, 0);
#ifdef AUTARKY_EXP_SOLO_FAST
        if (!local_only && ld_shared_u32(failed_at) != 0) break;
        AUTARKY_PHASE(2);
        if (lead) {
            if (may_stop_compiled() && (p.flags & RUN_MAY_STOP)) known = fold_report_limit(known, sh.report);
            if (local_only) {
                const uint32_t failed = ld_shared_u32(failed_at);
                fence_release_gpu();
                if (failed != 0) stop = true;  // not released; the next verdict stops the block
                else if (!complete_pinned_fenced(w, d, state_at(p, t), n, clock, known)) stop = true;
            } else if (!complete_pinned(w, d, t, n, clock, known)) {
                stop = true;
            }
            AUTARKY_PHASE(3);
            flush_report(p, sh.report);
        }
#else
        if (sh.failed != 0) break;
        AUTARKY_PHASE(2);
        if (lead) {
            if (may_stop_compiled() && (p.flags & RUN_MAY_STOP)) known = fold_report_limit(known, sh.report);
            if (!complete_pinned(w, d, t, n, clock, known)) stop = true;
            AUTARKY_PHASE(3);
            flush_report(p, sh.report);
        }
#endif
    }
    if (threadIdx.x == 0) {
        flush_report(p, sh.report);
        publish_completed(p, w.block, clock);
    }
#ifdef AUTARKY_EXP_PHASE_CLOCK
    phase.print("solo", w.block, n_end);
#endif
}
#endif

#ifndef AUTARKY_NO_PIN_ROUND
// The round path: a pinned block whose list is a patch of tiles — two to
// PIN_CACHE_TASKS tasks that wait for nothing of their own iteration from
// outside the list (is_round_list) — runs an iteration of the whole list
// as one round: thread 0 polls every predecessor word from outside the
// list at once (at most ROUND_PREDS, in registers), one acquire, the
// bodies one after another (a barrier after each: an earlier task's
// writes are its later neighbours' inputs), then one release fence and a
// relaxed store of each task's word. A list of k tasks pays one poll's
// round trips and one MEMBAR an iteration instead of k of each; edges
// inside the list are never polled (the block ran their instances before,
// in program order, and its barriers published them to its threads).
// Fewer, fuller blocks also shorten the hop itself: the floor's hop is
// 0.93 µs on 1024 blocks and 0.77 on 256 (docs/performance.md, session
// 38). Host mirror: LoweredGraph::is_round_list (graph/lower.rs), which
// decides whether the kernel has this path (-DAUTARKY_NO_PIN_ROUND when no
// list qualifies).
constexpr uint32_t ROUND_PREDS = 8;

// Thread 0, once the list is cached: does it run on the round path? It
// must be lean (cached, each task at most PIN_LEAN_PREDS predecessors), of
// two or more tasks of known compute kinds (the round dispatches
// unchecked) with no dynamic or remote successors and no proxy
// predecessor; every distance-0 predecessor edge from a task earlier in
// the list (so a round's tasks wait for nothing outside it that could
// wait for the round's unpublished instances: its releases may wait for
// its last body); at most ROUND_PREDS edges from outside.
__device__ __noinline__ bool is_round_list(const PinnedCache& pc, uint32_t len) {
    if (len < 2 || !pc.lean) return false;
    uint32_t outside = 0;
    for (uint32_t k = 0; k < len; ++k) {
        const TaskDesc& d = pc.desc[k];
        if (d.succ_count != 0 || d.remote_count != 0 || pc.remote[k] != 0) return false;
        if (!autarky_kind_known<false>(d.kind)) return false;
        for (uint32_t j = pc.pred_off[k]; j < pc.pred_off[k] + d.pred_count; ++j) {
            uint32_t at = len;
            for (uint32_t q = 0; q < len; ++q)
                if (pc.task[q] == pc.pred_task[j]) at = q;
            if (at == len) {
                if (pc.pred_distance[j] == 0) return false;
                ++outside;
            } else if (pc.pred_distance[j] == 0 && at >= k) {
                return false;
            }
        }
    }
    return outside <= ROUND_PREDS;
}

// Is the cached predecessor j (in pc.pred_*) of list task k from outside
// the list?
__device__ __forceinline__ bool round_outside(const PinnedCache& pc, uint32_t len, uint32_t j) {
    for (uint32_t q = 0; q < len; ++q)
        if (pc.task[q] == pc.pred_task[j]) return false;
    return true;
}

// Bit k: list task k waits for an earlier task of the list in the same
// iteration (a distance-0 edge). A round reads the failure flag after a
// body only before such a task, and after its last body: a task that does
// not wait for a failed one may run (its instance is never released).
// Host mirror: LoweredGraph::round_waits_inside (-DAUTARKY_ROUND_DEP).
__device__ __noinline__ uint32_t round_dep_mask(const PinnedCache& pc, uint32_t len) {
    uint32_t mask = 0;
    for (uint32_t k = 0; k < len; ++k)
        for (uint32_t j = pc.pred_off[k]; j < pc.pred_off[k] + pc.desc[k].pred_count; ++j)
            if (pc.pred_distance[j] == 0 && !round_outside(pc, len, j)) mask |= 1u << k;
    return mask;
}

// The list position whose outside predecessor is the round's slot `slot`
// (the order pinned_round fills them in): for a wait's error record.
__device__ __noinline__ uint32_t round_owner(const PinnedCache& pc, uint32_t len, uint32_t slot) {
    uint32_t m = 0;
    for (uint32_t k = 0; k < len; ++k)
        for (uint32_t j = pc.pred_off[k]; j < pc.pred_off[k] + pc.desc[k].pred_count; ++j)
            if (round_outside(pc, len, j) && m++ == slot) return k;
    return 0;
}

// Timing only (AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_ROUND_BARE=<bits>): the
// round path with pieces the floor's patch kernel lacks removed, to price
// each (docs/performance.md, session 40). 1: no tick (progress, abort);
// 2: no flush_report; 4: no failure flag read; 8: no verdict (a plain
// barrier); 16: the poll spun inline, not through wait_until; 32: no
// limit fold after the acquire. Unsafe: never in a kernel the host builds.
#ifndef AUTARKY_EXP_ROUND_BARE
#define AUTARKY_EXP_ROUND_BARE 0
#endif
__device__ __forceinline__ void pinned_round(Who w, BlockShared& sh, PinnedCache& pc, uint32_t len) {
    constexpr uint32_t BARE = AUTARKY_EXP_ROUND_BARE;
    const RunParams& p = *w.p;
    // Thread 0: the outside predecessors' words (addresses, as the solo
    // path) and their edges' distances; an unused slot's need stays 0.
    const uint64_t* at[ROUND_PREDS];
    uint32_t dist[ROUND_PREDS];
    if (threadIdx.x == 0) {
#pragma unroll
        for (uint32_t m = 0; m < ROUND_PREDS; ++m) {
            at[m] = states_of(p).base;
            dist[m] = 0xffffffffu;
        }
        uint32_t m = 0;
        for (uint32_t k = 0; k < len; ++k)
            for (uint32_t j = pc.pred_off[k]; j < pc.pred_off[k] + pc.desc[k].pred_count; ++j) {
                if (!round_outside(pc, len, j)) continue;
                // (Registers: a loop over m with a constant index each.)
#pragma unroll
                for (uint32_t q = 0; q < ROUND_PREDS; ++q) {
                    if (q == m) {
                        at[q] = pc.pred_word[j];
                        dist[q] = pc.pred_distance[j];
                    }
                }
                ++m;
            }
    }
    const uint32_t dep = pc.round_dep;
    // Thread 0 or not, read once through an asm the compiler cannot
    // rematerialize: from `threadIdx.x == 0` it re-read SR_TID.X with an
    // S2R after the last body's barrier, in series before the release, and
    // at the loop's top. Held, a 2 x 2 patch ran 1.073 -> 1.045 us an
    // iteration (docs/performance.md, session 41).
    uint32_t tid;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
    const bool lead = tid == 0;
    // The shared words the loop reads and writes every round — the
    // verdict, the failure flag, the list's word addresses, the report —
    // by shared-window address, held: the compiler rebuilt each from an
    // S2UR of SR_CgaCtaId before its access, one of them on thread 0's
    // path between the acquire and the barrier and one before the release
    // fence. With the spin's success going straight to the acquire (below):
    // a 2 x 2 patch 1.018 -> 0.982 us an iteration (docs/performance.md,
    // session 42).
    const uint32_t run_at = held_shared_address(&sh.run);
    const uint32_t failed_at = held_shared_address(&sh.failed);
    const uint32_t own_at = held_shared_address(&pc.own_word[0]);
    const uint32_t report_at = held_shared_address(&sh.report.iteration);
    LoopClock clock;
    bool stop = false;              // thread 0: leave at the next loop top
    uint32_t known = p.iterations;  // thread 0: the run's limit as this block knows it (fold_limit)
#ifdef AUTARKY_EXP_PHASE_CLOCK
    PhaseClock phase;
    uint32_t n_end = 0;
#endif
    for (uint32_t n = 0;; ++n) {
        AUTARKY_PHASE(4);
#ifdef AUTARKY_EXP_PHASE_CLOCK
        n_end = n;
#endif
        bool run = true;  // every thread but 0 votes to run; thread 0 decides
        if (lead) {
            if (may_stop_compiled() && (p.flags & RUN_MAY_STOP) && n % 16 == 0) {
                const uint32_t l = run_limit(p);
                known = l < known ? l : known;
            }
            uint32_t need[ROUND_PREDS];
#pragma unroll
            for (uint32_t m = 0; m < ROUND_PREDS; ++m) need[m] = n + 1 > dist[m] ? n + 1 - dist[m] : 0;
            uint32_t low = 0;
            auto word = [&](uint32_t m) -> const uint64_t* { return at[m]; };
            auto ready = [&]() -> bool { return lean_preds_done<false>(word, need, low); };
            // A wait the inline spin ends (the common case) goes straight
            // to the acquire and the verdict's store: one path, not merged
            // with the bounded wait's result (a bool's conversions and a
            // predicated store on thread 0's path before the barrier).
            const bool quick = n < known && !stop && (BARE & 16) == 0 && spin_ready(ready);
            if (quick) {
            } else if (n >= known || stop) {
                run = false;
            } else if ((BARE & 16) != 0) {
                while (!ready()) {
                }
            } else {
                // The wait names the first list task one of whose outside
                // predecessors is not there yet (found again every
                // ABORT_POLLS polls, before the wait records its site).
                WaitSite site{WaitKind::Predecessors, pc.task[0], n, pc.task[0], n};
                const WaitResult r = wait_until(w, site, [&](uint64_t& seen, uint32_t polls) -> uint32_t {
                    seen = 0;
                    if (ready()) return 1u;
                    if (polls % ABORT_POLLS == 0) {
                        uint32_t late = ROUND_PREDS;
                        uint64_t late_word = 0;
#pragma unroll
                        for (uint32_t m = 0; m < ROUND_PREDS; ++m) {
                            const uint64_t v = need[m] != 0 ? ld_relaxed_gpu_u64(at[m]) : 0;
                            if (late == ROUND_PREDS && need[m] != 0 && !geq_u32(state_done(v), need[m])) {
                                late = m;
                                late_word = v;
                            }
                        }
                        if (late != ROUND_PREDS) {
                            const uint32_t t = pc.task[round_owner(pc, len, late)];
                            site.index = t;
                            site.task = t;
                            seen = late_word;
                        }
                    }
                    return (polls % 64 == 0 && n >= run_limit(p)) ? 2u : 0u;
                });
                run = r == WaitResult::Ready;
            }
            AUTARKY_PHASE(0);
            if (quick) {
                fence_acquire_gpu();
                if (may_stop_compiled() && (BARE & 32) == 0) {
                    known = fold_limit(p, known, low);
                    run = n < known;
                }
                st_shared_u32(run_at, run);
            } else {
                if (run) {
                    fence_acquire_gpu();
                    // (Without kinds that may stop the run, known is the
                    // iteration count and n < known held above: not
                    // recomputed — it was a constant-bank load, a compare and
                    // a select between the acquire and the verdict's store.)
                    if (may_stop_compiled() && (BARE & 32) == 0) {
                        known = fold_limit(p, known, low);
                        run = n < known;
                    }
                }
                st_shared_u32(run_at, run);
            }
        }
        // Publish: thread 0's verdict, and the predecessors' data (its
        // acquire), to the block. The verdict goes through a shared word
        // and a plain barrier, not bar.red.and: 1.152 -> 1.126 us an
        // iteration on a 2 x 2 patch (docs/performance.md, sessions 39-40;
        // on the solo path the same cost 0.03 us, so it keeps bar.red).
        // Thread 0 rewrites the word only after the round's body barriers
        // (two at least), so every thread has read this iteration's first.
        if ((BARE & 8) != 0) {
            __syncthreads();
            if (n >= known) break;  // thread 0's known only, but timing only
        } else {
            __syncthreads();
            if (ld_shared_u32(run_at) == 0) break;
        }
        AUTARKY_PHASE(1);
        // List task k's body, then a barrier: publish its writes to the
        // block (the next task's inputs) and, through thread 0's fence
        // below, to every consumer; `sh.failed` to the block.
        auto dispatch = [&](uint32_t k) {
            const TaskDesc& d = pc.desc[k];
            const uint32_t t = pc.task[k];
            const unsigned char* args = pc.arg_off[k] != PIN_ARG_NONE
                                            ? pc.args + pc.arg_off[k]
                                            : reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset;
            TaskCtx ctx{d.global, n, p.iterations, p.pe, w.block, args, d.arg_len, &p, &sh.failed, t, &sh.report};
            AUTARKY_TRACE_T0(p, TraceKind::TaskStart, t, n, 0);
            autarky_dispatch<false, PIN_DISPATCH_CHECKED>(ctx, d.kind);
        };
        auto body = [&](uint32_t k) {
            dispatch(k);
            __syncthreads();
            AUTARKY_TRACE_T0(p, TraceKind::TaskEnd, pc.task[k], n, 0);
        };
#ifdef AUTARKY_ROUND_DEP
        // Some round list of this graph has a task that waits for an
        // earlier one of its round (round_dep_mask): the failure flag is
        // read before such a task (it never runs after one it waits for
        // failed), and after the last body. (A volatile read: not hoisted
        // out of its branch.)
        for (uint32_t k = 0; k < len; ++k) {
            body(k);
            if (((dep >> (k + 1)) & 1u) && *static_cast<volatile uint32_t*>(&sh.failed) != 0) break;
        }
#else
        // No task waits for another of its round (dep is 0: the cache
        // refuses other lists): nothing between the bodies but their
        // barriers; thread 0 reads the failure flag after the last (below).
        // A body that fails does not stop the others, whose instances are
        // not released either. The mask's test after each body cost a
        // 2 × 2 patch of empty tiles 0.16 µs an iteration
        // (docs/performance.md, session 39). (Not unrolled: an empty
        // body's unrolled loop spilled its trip count, reloaded from L2
        // after the acquire's L1 invalidation.)
        (void)dep;
#pragma unroll 1
        for (uint32_t k = 0; k < len; ++k) body(k);
#endif
#ifdef AUTARKY_ROUND_DEP
        if ((BARE & 4) == 0 && sh.failed != 0) break;
#endif
        AUTARKY_PHASE(2);
        if (lead) {
            if (may_stop_compiled() && (p.flags & RUN_MAY_STOP)) known = fold_report_limit(known, sh.report);
            // Thread 0 alone reads the failure flag, and tests it only
            // after issuing the release fence, which a failed round's
            // stores then do not follow; its next loop top stops the block
            // through the verdict. No thread waits on the load before the
            // fence (every thread read it, and branched, after the last
            // body's barrier: 0.982 -> 0.971 us an iteration; session 42).
            uint32_t failed = 0;
            if ((BARE & 4) == 0) failed = ld_shared_u32(failed_at);
            // The words' addresses from the cache, loaded before the fence
            // (a shared load after the MEMBAR waits for it: 1.073 -> 1.068
            // us; a task id and its address worked out a store cost the
            // round 0.13 µs: docs/performance.md, sessions 39 and 41).
            uint64_t* own[PIN_CACHE_TASKS];
#pragma unroll
            for (uint32_t k = 0; k < PIN_CACHE_TASKS; ++k)
                own[k] = k < len ? reinterpret_cast<uint64_t*>(ld_shared_u64(own_at + 8 * k)) : nullptr;
            // Release the round: one fence orders every body's writes (the
            // barriers above) before all of the list's words, each then a
            // relaxed store (a release fence, then a strong store: PTX's
            // release pattern; the fused chain's deferred publishes do the
            // same). fence.release, not fence.acq_rel: the acquire half is
            // an L1 invalidation nothing here needs (the next round
            // acquires after its poll); 1.073 -> 1.065 us. Each word
            // carries the limit the block knows.
            fence_release_gpu();
            if (failed == 0) {
                AUTARKY_PHASE(3);
                const uint64_t word = pinned_state_word(n + 1, known);
#pragma unroll
                for (uint32_t k = 0; k < PIN_CACHE_TASKS; ++k)
                    if (k < len) st_relaxed_gpu_u64(own[k], word);
                if (n + 1 == known) count_finished(p, len);
                clock.completed += len;
                if ((BARE & 1) == 0 && loop_tick(w, clock)) stop = true;
                if ((BARE & 2) == 0 && ld_shared_u32(report_at) != 0) flush_report_publish(p, sh.report);
            } else {
                stop = true;  // a body failed: this round is not released
            }
        }
    }
    if (threadIdx.x == 0) {
        flush_report(p, sh.report);
        publish_completed(p, w.block, clock);
    }
#ifdef AUTARKY_EXP_PHASE_CLOCK
    phase.print("round", w.block, n_end);
#endif
}
#endif

// A pinned compute block: runs its list in order, instance after instance,
// until the limit, an abort or a failure.
AUTARKY_HOT void pinned_loop(Who w, BlockShared& sh, PinnedCache& pc, const uint32_t* list,
                                            uint32_t len) {
    const RunParams& p = *w.p;
    LoopClock clock;
    if (threadIdx.x == 0) {
        sh.failed = 0;
        // Fill the cache when the list fits (thread 0; read-only tables).
        uint32_t preds = 0, arg_bytes = 0;
        bool fits = len <= PIN_CACHE_TASKS;
        bool lean = true;
        for (uint32_t k = 0; fits && k < len; ++k) {
            const TaskDesc d = load_desc(p, list[k]);
            pc.desc[k] = d;
            pc.task[k] = list[k];
            pc.own_word[k] = state_at(p, list[k]);
            pc.pred_off[k] = preds;
            if (preds + d.pred_count > PIN_CACHE_PREDS) {
                fits = false;
                break;
            }
            lean = lean && d.pred_count <= PIN_LEAN_PREDS;
            const Edge* e = reinterpret_cast<const Edge*>(p.pred) + d.pred_start;
            uint32_t remote = 0;
            for (uint32_t j = 0; j < d.pred_count; ++j) {
                pc.pred_task[preds + j] = e[j].task;
                pc.pred_distance[preds + j] = e[j].distance;
                pc.pred_word[preds + j] = state_at(p, e[j].task);
                remote |= is_proxy(p, e[j].task);
            }
            pc.remote[k] = remote;
            preds += d.pred_count;
            const uint32_t padded = (d.arg_len + 15u) & ~15u;
            if (PIN_ARGS && d.arg_len <= PIN_CACHE_ARG_BYTES - arg_bytes &&
                padded <= PIN_CACHE_ARG_BYTES - arg_bytes) {
                pc.arg_off[k] = arg_bytes;
                arg_bytes += padded;
            } else {
                pc.arg_off[k] = PIN_ARG_NONE;
            }
        }
        pc.pred_off[fits ? len : 0] = preds;
        pc.cached = fits;
#ifdef AUTARKY_EXP_PINNED_GENERIC
        lean = false;  // experiment control: the generic path for every list, for A/B timing
#endif
        pc.lean = fits && lean;
#ifndef AUTARKY_NO_PIN_ROUND
        pc.round = is_round_list(pc, len);
        pc.round_dep = pc.round ? round_dep_mask(pc, len) : 0;
#ifndef AUTARKY_ROUND_DEP
        // A round that waits inside itself needs the checked loop, which
        // the host compiles in only where a list needs it
        // (LoweredGraph::round_waits_inside): none here, so such a list
        // (which the host would have seen) takes the cached path.
        if (pc.round_dep != 0) pc.round = 0;
#endif
#else
        pc.round = 0;
#endif
    }
    // Publish: the cache's layout to every thread, which then copy the
    // arguments (bytes: a task's length need not be a multiple of 4); the
    // loop's first barrier publishes the copies.
    __syncthreads();
    if (pc.cached) {
        const unsigned char* arena = reinterpret_cast<const unsigned char*>(p.args);
        for (uint32_t k = 0; k < len; ++k) {
            if (pc.arg_off[k] == PIN_ARG_NONE) continue;
            const TaskDesc& d = pc.desc[k];
            for (uint32_t b = threadIdx.x; b < d.arg_len; b += blockDim.x)
                pc.args[pc.arg_off[k] + b] = arena[d.arg_offset + b];
        }
    }
    // A slot with an empty list (a higher slot of this PE is used, this one
    // is not) has nothing to run: leave at once. (Without this the loop
    // below would count instances of nothing forever, never looking at the
    // abort word: a kernel that cannot be stopped. Found on the H200.)
    if (len == 0) return;
#ifndef AUTARKY_NO_PIN_SOLO
    // One task of at most SOLO_PREDS predecessors: the solo path (every
    // thread reads pc after the barrier above). A task the
    // fault-injection hook holds is left to this loop, whose run_body
    // holds it.
    bool held = false;
#ifdef AUTARKY_FAULTS
    held = (p.flags & TEST_HOLD_TASK) && pc.task[0] == p.hold_task;
#endif
    if (len == 1 && pc.lean && pc.desc[0].pred_count <= SOLO_PREDS && !held &&
        autarky_kind_known<false>(pc.desc[0].kind)) {
        pinned_solo(w, sh, pc);
        return;
    }
#endif
#ifndef AUTARKY_NO_PIN_ROUND
    // A patch of tasks that waits for nothing of its own iteration from
    // outside: the round path. (A held task is left to this loop, as on
    // the solo path.)
    bool held_any = false;
#ifdef AUTARKY_FAULTS
    for (uint32_t k = 0; k < len; ++k) held_any |= (p.flags & TEST_HOLD_TASK) && pc.task[k] == p.hold_task;
#endif
    if (pc.round && !held_any) {
        pinned_round(w, sh, pc, len);
        return;
    }
#endif
    bool stop = false;  // thread 0: leave at the next loop top
    // Thread 0: the run's limit as this block knows it (only decreases; see
    // fold_limit): its publishes carry it.
    uint32_t known = p.iterations;
    for (uint32_t n = 0;; ++n) {
        for (uint32_t k = 0; k < len; ++k) {
            // A task that no stop gates learns of a lowered limit here:
            // Status::limit once every 16 instances of the list (it was read
            // twice an instance).
            if (threadIdx.x == 0 && may_stop_compiled() && (p.flags & RUN_MAY_STOP) && k == 0 && n % 16 == 0) {
                const uint32_t l = run_limit(p);
                known = l < known ? l : known;
            }
            if (threadIdx.x == 0 && pc.lean) {
                // The lean path: everything from the cache, the words'
                // addresses and the needs fixed for the instance's polls.
                const uint32_t t = pc.task[k];
                const uint32_t off = pc.pred_off[k], count = pc.desc[k].pred_count;
                uint32_t need[PIN_LEAN_PREDS];
#pragma unroll
                for (uint32_t j = 0; j < PIN_LEAN_PREDS; ++j) {
                    need[j] = 0;
                    if (j < count) {
                        const uint32_t distance = pc.pred_distance[off + j];
                        need[j] = n + 1 > distance ? n + 1 - distance : 0;
                    }
                }
                const uint64_t* const* words = pc.pred_word + off;
                const bool remote = pc.remote[k] != 0;
                uint32_t low = 0;
                auto ready = [&]() -> bool {
                    return remote ? lean_preds_done<true>(words, need, low) : lean_preds_done<false>(words, need, low);
                };
                auto acquire = [&]() -> uint32_t {
                    // Every awaited release (system scope if a proxy is
                    // among them), as preds_done_batch.
                    if (remote) fence_acquire_sys();
                    else fence_acquire_gpu();
#ifdef AUTARKY_TRACE
                    for (uint32_t j = 0; remote && j < count; ++j) {
                        const uint32_t x = pc.pred_task[off + j], distance = pc.pred_distance[off + j];
                        if (is_proxy(p, x) && n + 1 > distance)
                            trace_append(p, TraceKind::SignalSeen, x, n - distance, x, p.pe);
                    }
#endif
                    return low;
                };
                sh.run = !stop && await_pinned(w, t, n, known, ready, acquire);
                sh.task = t;
                sh.iter = n;
            } else if (threadIdx.x == 0) {
                const uint32_t t = list[k];
                const bool cached = pc.cached;
                const TaskDesc d = cached ? pc.desc[k] : load_desc(p, t);
                const uint32_t off = cached ? pc.pred_off[k] : 0;
                auto ready = [&]() -> bool {
                    if (!cached) return preds_done_now(p, d, n);
                    return preds_done_batch(p, d.pred_count, n, [&](uint32_t j, uint32_t& task, uint32_t& dist) {
                        task = pc.pred_task[off + j];
                        dist = pc.pred_distance[off + j];
                    });
                };
                // (The generic batch fenced; it keeps no words: the limit
                // from Status, as before carried limits.)
                auto acquire = []() -> uint32_t { return 0u; };
                sh.run = !stop && await_pinned(w, t, n, known, ready, acquire);
                sh.task = t;
                sh.iter = n;
                sh.desc = d;
            }
            // Publish: sh.run/task/iter/desc and the predecessors' data
            // (thread 0's acquire) to the block.
            __syncthreads();
            if (!sh.run) goto out;
            {
                // The lean path reads the cached descriptor in place (no
                // copy through sh.desc an instance).
                const TaskDesc& d = pc.lean ? pc.desc[k] : sh.desc;
                if (!run_body<false>(w, sh, d,
                                     pc.cached && pc.arg_off[k] != PIN_ARG_NONE ? pc.args + pc.arg_off[k] : nullptr))
                    goto out;
                // run_body's barrier published the body's writes; thread 0
                // publishes done and, on abort, stops at the next loop top
                // (no third barrier per instance).
                if (threadIdx.x == 0) {
                    known = fold_report_limit(known, sh.report);
                    if (!complete_pinned(w, d, sh.task, sh.iter, clock, known)) stop = true;
                }
            }
            if (threadIdx.x == 0) flush_report(p, sh.report);
        }
    }
out:
    if (threadIdx.x == 0) {
        flush_report(p, sh.report);
        publish_completed(p, w.block, clock);
    }
}

// A pinned comm task with more predecessors than this is polled by the
// whole block (each thread a share, eight polls in flight per thread)
// instead of by thread 0 alone: a reduction over a thousand tiles cost
// thread 0 ~130 serial L2 round trips per instance (CG at 1024^2: 800 µs
// per iteration on the H200).
constexpr uint32_t WIDE_POLL_MIN = 16;

// Relays proxies (this comm block's share: j ≡ block mod comm_blocks) whose
// value changed since the last look to their dynamic successors.
__device__ __noinline__ bool relay_proxies(Who w) {
    const RunParams& p = *w.p;
    bool ok = true;
    for (uint32_t j = w.block; j < p.num_proxies; j += p.comm_blocks) {
        const uint32_t t = p.num_tasks + j;
        const TaskDesc d = load_desc(p, t);
        if (d.succ_count == 0) continue;  // only pinned consumers: they poll it themselves
        const uint32_t v = state_done(ld_relaxed_sys_u64(state_at(p, t)));
        uint32_t* seen = reinterpret_cast<uint32_t*>(p.proxy_seen) + j;
        if (v == *seen) continue;
        const uint32_t from = *seen;
        const uint32_t advanced = v - from;  // producer instances first seen here: arrivals
        *seen = v;
        AUTARKY_TRACE_EVENT(p, TraceKind::SignalSeen, t, v - 1, t);
        // Acquire the producer's release and order it before the re-checks
        // (SC: the mirror image of a local completion's publish → fence).
        fence_sc_sys();
        const uint32_t limit = run_limit(p);
        const Edge* succ = reinterpret_cast<const Edge*>(p.succ) + d.succ_start;
        for (uint32_t k = 0; k < d.succ_count; ++k) ok = recheck(w, succ[k], limit, from, advanced) && ok;
    }
    return ok;
}

// Comm block 0 only: once the limit was lowered, is every local task done
// up to it? Then set Status::stopped (every block leaves).
__device__ __noinline__ void detect_stop(const RunParams& p) {
    const uint32_t limit = run_limit(p);
    if (limit >= p.iterations) return;
    for (uint32_t t = 0; t < p.num_tasks; ++t)
        if (!geq_u32(state_done(ld_relaxed_gpu_u64(state_at(p, t))), limit)) return;
    st_relaxed_gpu_u32(&status_of(p)->stopped, 1);
    wake_all(p);
}

// Comm blocks: one polling loop, thread 0 deciding and the block running
// what it found: the next instance of this block's pinned comm list when its
// predecessors are done, else an instance from the comm ring, else relays
// of changed proxies. Block 0 also publishes progress to host-mapped
// memory every PROGRESS_PUBLISH_NS, detects an early stop, and is the PE's
// stall watchdog: no instance completed anywhere on the PE for 2 × timeout
// (a task body stuck in an unbounded loop) ends the run with a Timeout
// naming the Progress wait. Every comm block checks abort every 64 polls.
#ifndef COMM_WAKE_EVERY
#define COMM_WAKE_EVERY 4
#endif
__device__ __noinline__ void comm_loop(Who w, BlockShared& sh, [[maybe_unused]] PinnedCache& pc) {
    const RunParams& p = *w.p;
    const uint32_t* pin = reinterpret_cast<const uint32_t*>(p.pinned);
    const uint32_t slots = p.pin_compute_slots + p.pin_comm_slots;
    [[maybe_unused]] const uint32_t* list = nullptr;  // unused in lean variants
    uint32_t len = 0;
    if (w.block < p.pin_comm_slots) {
        const uint32_t s = p.pin_compute_slots + w.block;
        list = pin + slots + 1 + pin[s];
        len = pin[s + 1] - pin[s];
    }
#ifndef AUTARKY_NO_PINNED
    // The pinned list's arguments in shared memory (as a pinned compute
    // block keeps them: pc's args and arg_off only), the first
    // PIN_CACHE_TASKS tasks' that fit: a body then reads them without a
    // round trip to L2 — the acquire before every instance invalidates L1,
    // so read from the arena they were one more round trip between a
    // reduce's last input and its sum. (-DAUTARKY_EXP_COMM_ARGS_GLOBAL:
    // from the arena, the A/B control.)
    if (threadIdx.x == 0) {
        // The list itself, its descriptors and its narrow tasks'
        // predecessor edges too, when they fit (read-only tables): a poll
        // round then loads the done words only. From the tables, a narrow
        // poll was four dependent round trips after the acquire that ended
        // the last instance had invalidated L1 (the list entry, the
        // descriptor, the edges, the words) — a Jacobi check runs two such
        // instances an iteration on one block. (-DAUTARKY_EXP_COMM_UNCACHED:
        // from the tables, the A/B control.)
        bool fits = len <= PIN_CACHE_TASKS, lean = fits;
        uint32_t preds = 0;
        for (uint32_t k = 0; fits && k < len; ++k) {
            const TaskDesc d = load_desc(p, list[k]);
            pc.task[k] = list[k];
            pc.desc[k] = d;
            pc.pred_off[k] = preds;
            if (d.pred_count > WIDE_POLL_MIN) continue;  // polled block-wide from the tables
            if (preds + d.pred_count > PIN_CACHE_PREDS) {
                lean = false;
                continue;
            }
            const Edge* e = reinterpret_cast<const Edge*>(p.pred) + d.pred_start;
            uint32_t remote = 0;
            for (uint32_t j = 0; j < d.pred_count; ++j) {
                pc.pred_task[preds + j] = e[j].task;
                pc.pred_distance[preds + j] = e[j].distance;
                pc.pred_word[preds + j] = state_at(p, e[j].task);
                remote |= is_proxy(p, e[j].task);
            }
            pc.remote[k] = remote;
            preds += d.pred_count;
        }
        pc.pred_off[fits ? len : 0] = preds;
#ifdef AUTARKY_EXP_COMM_UNCACHED
        fits = lean = false;
#endif
        pc.cached = fits;
        pc.lean = fits && lean;
        uint32_t bytes = 0;
        for (uint32_t k = 0; k < len && k < PIN_CACHE_TASKS; ++k) {
            const TaskDesc d = load_desc(p, list[k]);
            const uint32_t padded = (d.arg_len + 15u) & ~15u;
#ifndef AUTARKY_EXP_COMM_ARGS_GLOBAL
            if (padded <= PIN_CACHE_ARG_BYTES - bytes) {
                pc.arg_off[k] = bytes;
                bytes += padded;
                continue;
            }
#endif
            pc.arg_off[k] = PIN_ARG_NONE;
        }
    }
    // Publish: arg_off to every thread, which copy the bytes; the loop's
    // first barrier publishes the copies.
    __syncthreads();
    for (uint32_t k = 0; k < len && k < PIN_CACHE_TASKS; ++k) {
        if (pc.arg_off[k] == PIN_ARG_NONE) continue;
        const TaskDesc d = load_desc(p, list[k]);
        const unsigned char* arena = reinterpret_cast<const unsigned char*>(p.args) + d.arg_offset;
        for (uint32_t b = threadIdx.x; b < d.arg_len; b += blockDim.x) pc.args[pc.arg_off[k] + b] = arena[b];
    }
#endif
    LoopClock clock;
    uint32_t k = 0, n = 0;  // thread 0: pinned cursor (list index, instance)
    uint64_t last_publish = 0, watch_start = 0, watch_progress = 0;
    ProgressSweep sweep;  // publisher: HostControl::iterations_done (progress.cuh)
    const bool publisher = w.block == 0;
    // Thread 0: poll counters, kept across the block-wide polls of a wide
    // pinned task (so the abort, progress and watchdog checks every 64
    // polls still run while one waits), and whose turn it is: a failed
    // block-wide poll is followed by one poll of the other work (ring,
    // relays) before the next, so a wide task never starves them.
    uint32_t polls = 0, idle = 0;
    [[maybe_unused]] bool wide_turn = true;  // unused in lean variants
    // Whether anything but the pinned list can need this block: dynamic
    // comm tasks (the comm ring) or proxies to relay. Without, a wide
    // pinned task is polled every round, not every other one, and the ring
    // is not looked at (each look is two dependent L2 round trips): the
    // rounds of a wide wait go from ~5 round trips to ~1, and a reduce
    // starts that much sooner after its last input (CG: twice an
    // iteration). The pinned comm tasks are the comm slots' lists.
    // (-DAUTARKY_EXP_COMM_POLL_ALL: every round polls everything, the
    // control.)
    [[maybe_unused]] bool others = true;  // unused in lean variants
#ifndef AUTARKY_EXP_COMM_POLL_ALL
    others = p.num_tasks - p.first_comm > pin[slots] - pin[p.pin_compute_slots] || p.num_proxies > 0;
#endif
    // The run's limit as this block knows it (thread 0; only decreases, as
    // a pinned compute block's `known`): Status::limit every 64 polls, the
    // block's own finish_at after every instance, and after each pinned
    // instance's acquire what its awaited words carried (fold_limit; a
    // word that carries none: Status::limit, read after the acquire). A
    // stale value only delays leaving a list past a lowered limit.
    [[maybe_unused]] uint32_t limit_seen = run_limit(p);
    [[maybe_unused]] uint32_t refreshed = 0xffffffffu;  // the instance the list last refreshed it at
    [[maybe_unused]] auto see_limit = [&]() {
        const uint32_t l = run_limit(p);
        limit_seen = l < limit_seen ? l : limit_seen;
    };
    if (threadIdx.x == 0) sh.failed = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            uint32_t run = 0;
            AUTARKY_TRACE_IDLE_SCOPE(p, w.block);  // trace: idle time, WaitEnd when the loop is left
            for (;;) {
                ++polls;
                ++idle;
                // Every COMM_WAKE_EVERY polls (a comm block polls all run
                // long: a load each poll is more traffic than the end
                // needs). Issued first, read after this poll's other work:
                // its latency overlaps theirs.
#ifdef AUTARKY_NO_COMM_WAKE
                const bool wake = false;  // A/B control
#else
                const bool wake = polls % COMM_WAKE_EVERY == 0 && woken(p, w.block);
#endif
#ifndef AUTARKY_NO_PINNED
#ifdef AUTARKY_EXP_COMM_POLL_ALL
                see_limit();
#endif
                // As a pinned compute block: Status::limit when the list
                // starts an instance that is a multiple of 16 (once).
                if (may_stop_compiled() && (p.flags & RUN_MAY_STOP) && k == 0 && n % 16 == 0 && refreshed != n) {
                    refreshed = n;
                    see_limit();
                }
                if (len > 0 && n < limit_seen) {
                    const bool cached = pc.cached;
                    const uint32_t t = cached ? pc.task[k] : list[k];
                    const TaskDesc d = cached ? pc.desc[k] : load_desc(p, t);
                    const uint32_t off = cached ? pc.pred_off[k] : 0;
                    // The lowest limit the awaited words carried (0: read
                    // Status::limit; see fold_limit).
                    uint32_t low = 0;
                    auto ready = [&]() -> bool {
                        if (cached && pc.lean && d.pred_count <= PIN_LEAN_PREDS) {
                            // As the lean compute path: only the words.
                            uint32_t need[PIN_LEAN_PREDS];
#pragma unroll
                            for (uint32_t j = 0; j < PIN_LEAN_PREDS; ++j) {
                                need[j] = 0;
                                if (j < d.pred_count) {
                                    const uint32_t distance = pc.pred_distance[off + j];
                                    need[j] = n + 1 > distance ? n + 1 - distance : 0;
                                }
                            }
                            const uint64_t* const* words = pc.pred_word + off;
                            const bool remote = pc.remote[k] != 0;
                            if (!(remote ? lean_preds_done<true>(words, need, low)
                                         : lean_preds_done<false>(words, need, low)))
                                return false;
                            if (remote) fence_acquire_sys();
                            else fence_acquire_gpu();
                            return true;
                        }
                        if (!cached || !pc.lean) return preds_done_now(p, d, n);
                        return preds_done_batch(p, d.pred_count, n, [&](uint32_t j, uint32_t& task, uint32_t& dist) {
                            task = pc.pred_task[off + j];
                            dist = pc.pred_distance[off + j];
                        });
                    };
                    if (d.pred_count > WIDE_POLL_MIN) {
                        // With nothing else to poll, every round but each
                        // 64th, which runs the checks below (abort, the
                        // run's end, progress, the watchdog).
                        if (others ? wide_turn : polls % 64 != 0) {
                            wide_turn = false;
                            run = 3;  // a block-wide poll of its predecessors
                            sh.wide_low = 0xffffffffu;
                            sh.slot = k;
                            sh.task = t;
                            sh.iter = n;
                            sh.desc = d;
                            break;
                        }
                        wide_turn = true;
                    } else if (ready() && n < (limit_seen = fold_limit(p, limit_seen, low))) {
                        run = 2;
                        sh.slot = k;
                        sh.task = t;
                        sh.iter = n;
                        sh.desc = d;
                        idle = 0;
                        break;
                    }
                }
#endif
#ifndef AUTARKY_NO_COMM_WORK
                uint32_t t, it;
                if (others && comm_try_pop(p, &t, &it)) {
                    run = 1;
                    idle = 0;
                    sh.task = t;
                    sh.iter = it;
                    sh.desc = load_desc(p, t);
                    BlockStats* bs = stats_of(p, w.block);
                    bs->task = t;
                    bs->iteration = it;
                    break;
                }
#endif
#ifndef AUTARKY_NO_REMOTE
                if (others && !relay_proxies(w)) break;  // a push was aborted
#endif
                AUTARKY_TRACE_WAIT_FAILED_POLL();  // trace: nothing to run: idle
                // Woken (the run is over: see wake_word) or every 64th poll:
                // the checks below.
                if (polls % 64 != 0 && !wake) {
                    if (idle > SPIN_POLLS) nanosleep_ns(BACKOFF_NS);
                    continue;
                }
                see_limit();
                if (run_finished(p)) {
                    wake_all(p);
                    break;
                }
                if (abort_raised(p, polls % HOST_ABORT_POLLS == 0)) {
                    if (host_raised_abort(p) && ld_relaxed_gpu_u32(&status_of(p)->error_code) == 0)
                        record_error(w, ErrorCode::HostAbort, NONE, 0, WaitKind::None, 0, 0, 0, 0);
                    break;
                }
                const uint64_t now = globaltimer_ns();
                if (publisher) {
                    if (now - last_publish >= PROGRESS_PUBLISH_NS) {
                        last_publish = now;
                        st_relaxed_sys_u64(&control_of(p)->progress, pe_progress(p));
                        st_relaxed_sys_u64(&control_of(p)->heartbeat_ns, now);
                        sweep.step(p);
                        if (p.flags & RUN_MAY_STOP) detect_stop(p);
                    }
                    // Stall watchdog (re-armed by progress anywhere on the PE).
                    const uint64_t progress = pe_progress(p);
                    if (watch_start == 0 || progress != watch_progress) {
                        watch_start = now;
                        watch_progress = progress;
                    } else if (now - watch_start > 2 * p.timeout_ns) {
                        record_error(w, ErrorCode::Timeout, NONE, 0, WaitKind::Progress, p.pe, progress,
                                     progress + 1, 0);
                        break;
                    }
                }
                if (idle > SPIN_POLLS) nanosleep_ns(BACKOFF_NS);
            }
            sh.run = run;
        }
        // Publish: sh.run/task/iter/desc (and, for a pinned instance, the
        // predecessors' data acquired by thread 0) to the block.
        __syncthreads();
        uint32_t run = sh.run;
        if (run == 0) break;
#ifndef AUTARKY_NO_PINNED
        if (run == 3) {
            // Every thread: sh is not written again before the barrier in
            // preds_done_block.
            const TaskDesc d = sh.desc;
            const uint32_t at = sh.iter;
            // With nothing else to poll, several rounds before the loop's
            // other duties (a round is a round trip: the abort, progress
            // and watchdog checks every 64 loop rounds stay ~1 ms apart).
            if (!preds_wait_block(p, d.pred_start, d.pred_count, at, others ? 1u : WIDE_ROUNDS, &sh.wide_low))
                continue;
            // The limit after the acquire, as for a narrow task (what the
            // words carried, or Status::limit); thread 0 decides for the
            // block.
            if (threadIdx.x == 0) {
                limit_seen = fold_limit(p, limit_seen, sh.wide_low);
                sh.run = at < limit_seen ? 2u : 3u;
                if (sh.run == 2) idle = 0;
            }
            __syncthreads();
            if (sh.run != 2) continue;
            run = 2;
        }
        const uint32_t slot = sh.slot;
        const bool cached = run == 2 && slot < PIN_CACHE_TASKS && pc.arg_off[slot] != PIN_ARG_NONE;
        if (!run_body<true>(w, sh, sh.desc, cached ? pc.args + pc.arg_off[slot] : nullptr)) break;
#else
        if (!run_body<true>(w, sh, sh.desc)) break;
#endif
        if (threadIdx.x == 0) {
            bool ok;
            limit_seen = fold_report_limit(limit_seen, sh.report);
            if (run == 2) {
                ok = complete_pinned(w, sh.desc, sh.task, sh.iter, clock, limit_seen);
                if (++k == len) {
                    k = 0;
                    ++n;
                }
            } else {
                ok = complete_serial(w, sh.desc, sh.task, sh.iter, clock);
            }
            flush_report(p, sh.report);
            sh.run = ok ? run : 0;
        }
        // Publish: sh.run (abort seen by thread 0) to the block.
        __syncthreads();
        if (sh.run == 0) break;
    }
    if (threadIdx.x == 0) {
        flush_report(p, sh.report);
        publish_completed(p, w.block, clock);
    }
}

__device__ inline void block_exit(Who w) {
    const RunParams& p = *w.p;
#ifdef AUTARKY_NVSHMEM
    // Every NVSHMEM operation this thread issued (completion signals, abort
    // puts) is delivered before the block counts as exited: the host's end
    // of run (and the next run's reuse of the symmetric state words) comes
    // after every block of every PE exited.
    autarky_nvshmem_quiet();
#endif
    // Publish: every thread of this block is done with the run.
    __syncthreads();
    if (threadIdx.x != 0) return;
    Status* s = status_of(p);
    red_max_relaxed_gpu_u64(&s->last_exit_ns, globaltimer_ns());
    const uint32_t total = p.comm_blocks + p.compute_blocks;
    if (atom_add_acq_rel_gpu_u32(&s->blocks_exited, 1) + 1 == total) {
        // Last block of this PE out: publish the final counts.
        // Last block out: final progress, then tell the host we are done.
        HostControl* c = control_of(p);
        st_relaxed_sys_u64(&c->progress, pe_progress(p));
        publish_final_iterations_done(p);
        fence_sc_sys();
        st_release_sys_u32(&c->finished, 1);
    }
}

}  // namespace autarky
