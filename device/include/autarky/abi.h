// GENERATED from shared/src/lib.rs by autarky::abi_header — do not edit.
// Regenerate: AUTARKY_BLESS=1 cargo test --test abi
#pragma once

// Device code is self-contained (NVRTC alone, no toolkit headers).
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;

#define AUTARKY_ABI_VERSION 12u

namespace autarky {

constexpr uint32_t TASK_NONE = 0xffffffffu;
constexpr uint32_t MAX_ITERATIONS = 0x7fffffffu;
constexpr uint32_t STATE_LIMIT_CARRIED = 0x80000000u;
constexpr uint32_t TEST_HOLD_TASK = 1u;
constexpr uint32_t RUN_MAY_STOP = 2u;
constexpr uint32_t RUN_STATE_SPREAD = 4u;
constexpr uint32_t STATE_SPREAD_WORDS = 16u;
constexpr uint32_t MAX_LOCAL_PES = 16u;
constexpr uint32_t MAX_DISTANCE = 65536u;
constexpr uint32_t ABORT_BY_HOST = 1u;
constexpr uint32_t ABORT_BY_PE = 2u;
constexpr uint32_t WAKE_GROUP = 32u;
constexpr uint32_t WAKE_STRIDE = 32u;
constexpr uint32_t SLOT_FIELDS = 4u;
constexpr uint32_t SLOT_MAX_COUNT = 65535u;
constexpr uint32_t PROGRESS_SWEEP_TASKS = 32u;

// Word encodings (Rust: autarky_shared::{state_word, state_parts, pinned_state_word,
// state_carried_limit, queue_slot_word}).
// state[t] = (claimed << 32) | done.
__device__ __forceinline__ uint64_t state_word(uint32_t claimed, uint32_t done) {
    return ((uint64_t)claimed << 32) | done;
}
__device__ __forceinline__ uint32_t state_claimed(uint64_t word) { return (uint32_t)(word >> 32); }
__device__ __forceinline__ uint32_t state_done(uint64_t word) { return (uint32_t)word; }
// A pinned task's word: bit 31 of claimed set, the limit its block knew beside it.
__device__ __forceinline__ uint64_t pinned_state_word(uint32_t done, uint32_t limit) {
    return state_word(STATE_LIMIT_CARRIED | limit, done);
}
// The limit a word carries, or 0: none (read Status::limit).
__device__ __forceinline__ uint32_t state_carried_limit(uint64_t word) {
    const uint32_t claimed = state_claimed(word);
    return (claimed & STATE_LIMIT_CARRIED) ? (claimed & ~STATE_LIMIT_CARRIED) : 0u;
}
// QueueSlot::word = (seq << 32) | task.
__device__ __forceinline__ uint64_t queue_slot_word(uint32_t seq, uint32_t task) {
    return ((uint64_t)seq << 32) | task;
}
// Arrival slots (Rust: autarky_shared::{slot_word, slot_shift, slot_count,
// slot_add_mask}): slot j is field j % SLOT_FIELDS (16 bits) of word j / SLOT_FIELDS.
__device__ __forceinline__ uint64_t slot_word(uint32_t j) { return (uint64_t)(j / SLOT_FIELDS); }
__device__ __forceinline__ uint32_t slot_shift(uint32_t j) { return (j % SLOT_FIELDS) * 16u; }
__device__ __forceinline__ uint32_t slot_count(uint64_t word, uint32_t j) {
    return (uint32_t)((word >> slot_shift(j)) & 0xffffu);
}
__device__ __forceinline__ uint64_t slot_add_mask(uint32_t first, uint32_t k) {
    const uint32_t lo = first % SLOT_FIELDS;
    const uint32_t n = k < SLOT_FIELDS - lo ? k : SLOT_FIELDS - lo;
    return (0x0001000100010001ull >> (16u * (SLOT_FIELDS - n))) << (16u * lo);
}

// Why a run ended early. Recorded once per PE in [`Status::error_code`]
// by the first block that fails (compare-and-swap from `None`).
enum class ErrorCode : uint32_t {
    // No error.
    None = 0,
    // A bounded wait ran past its deadline ([`Status`] says what it awaited).
    Timeout = 1,
    // A task body called `ctx.fail(code)`; `detail` holds the code.
    TaskFailed = 2,
    // A task whose kind asks for finite outputs produced NaN or Inf; `detail` holds the element index.
    NonFinite = 3,
    // The task table names a kind the megakernel was not compiled with; `detail` holds the kind.
    UnknownTaskKind = 4,
    // The host passed an ABI version the kernel was not compiled for; `seen`/`wanted` hold both.
    AbiMismatch = 5,
    // The host raised abort through host-mapped memory (watchdog or user).
    HostAbort = 6,
};

// What a waiting block awaits. Written to [`BlockStats::wait_kind`] while it
// waits and to [`Status::wait_kind`] when a wait times out.
enum class WaitKind : uint32_t {
    // Not waiting.
    None = 0,
    // A compute block waits for a ready-queue slot to be filled (`index` = slot).
    QueueItem = 1,
    // A block waits for a ready-queue slot to be freed before pushing (`index` = slot).
    QueueSpace = 2,
    // A task body waits on a word through the public wait helper (`index` = word id given by the body).
    UserWord = 3,
    // Waiting for a remote signal (halo pulse); `index` = signal id.
    Signal = 4,
    // A test hook holds a task back (fault injection); `index` = task.
    TestHold = 5,
    // A comm block waits for any task instance of its PE to complete (stall watchdog).
    Progress = 6,
    // A pinned block waits for the predecessors of its next task instance (`index` = the task, `wanted` = the instance).
    Predecessors = 7,
    // A comm block found nothing to do: no pinned comm instance ready, the comm ring empty, no proxy changed (`index` = the block). Recorded in traces only; never a timeout's cause.
    CommIdle = 8,
};

// A block's role, fixed at launch: blocks `[0, comm_blocks)` communicate,
// the rest compute.
enum class Role : uint32_t {
    // Drives halo pulses, publishes progress, watches for stalls.
    Comm = 1,
    // Pops ready task instances and runs them.
    Compute = 2,
};

// What a [`TraceRecord`] records (its `kind_block & 0xff`). The host
// decodes each into an `autarky::trace::EventKind`.
enum class TraceKind : uint32_t {
    // A task instance's body starts (`task`, `iteration`; `arg` 0).
    TaskStart = 1,
    // A task instance's body ended (the block's barrier after it).
    TaskEnd = 2,
    // The block starts waiting: `arg` = [`trace_wait_word`]`(kind, index)` of the awaited word; `task`/`iteration` the wait site's (or [`TASK_NONE`]). Recorded only once the first poll failed.
    WaitBegin = 3,
    // The wait for word `arg` ended (satisfied, stopped or gave up).
    WaitEnd = 4,
    // A remote completion signal: `arg` = the proxy slot (local task id on the destination PE), `pe` = the destination PE, `iteration` = the completed instance. `task` is [`TASK_NONE`]: the host names the producer from the destination's proxy table.
    SignalSent = 5,
    // A proxy was seen advanced (comm relay, or a pinned poll that found its predecessors done): `arg` = `task` = the proxy's local id, `iteration` = the producer instance seen complete.
    SignalSeen = 6,
    // A task body marked a halo pulse packed (`arg`: pulse id).
    PulsePack = 7,
    // A task body marked a halo pulse put (`arg`: pulse id).
    PulsePut = 8,
};

// Trace encodings (Rust: autarky_shared::{trace_kind_block, trace_wait_word}).
__device__ __forceinline__ uint32_t trace_kind_block(TraceKind kind, uint32_t block) {
    return (uint32_t)kind | (block << 8);
}
__device__ __forceinline__ uint64_t trace_wait_word(WaitKind kind, uint32_t index) {
    return ((uint64_t)(uint32_t)kind << 32) | index;
}

// One task of the lowered graph. Indexed by task id.
struct alignas(4) TaskDesc {
    // Index of the task kind (the generated dispatch switch's case).
    uint32_t kind;
    // The task's id in the user's graph (errors and traces name it).
    uint32_t global;
    // Byte offset of the task's arguments in the argument arena (16-aligned).
    uint32_t arg_offset;
    // Byte length of the task's arguments.
    uint32_t arg_len;
    // First successor edge in [`RunParams::succ`].
    uint32_t succ_start;
    // Number of successor edges.
    uint32_t succ_count;
    // First predecessor edge in [`RunParams::pred`].
    uint32_t pred_start;
    // Number of predecessor edges.
    uint32_t pred_count;
    // First entry in [`RunParams::remote`]: successors on other PEs.
    uint32_t remote_start;
    // Number of remote successor entries.
    uint32_t remote_count;
    // Sum of the distances of the predecessor edges (saturating): with `pred_count` it gives the arrivals a counted task needs ([`arrivals_needed`]).
    uint32_t pred_distance_sum;
    // Predecessor edges from this task to pinned tasks of its PE (left out of the successor list: their blocks poll `done`). A completion with such readers publishes at once; one without may defer its publish while its block runs what it kept (chain fusion, see the device scheduler).
    uint32_t pinned_succs;
};
static_assert(sizeof(TaskDesc) == 48, "sizeof(TaskDesc) differs from Rust");
static_assert(alignof(TaskDesc) == 4, "alignof(TaskDesc) differs from Rust");

// One CSR edge entry: in the successor table `task` is the successor, in
// the predecessor table it is the predecessor. Instance `i` of the
// successor needs instance `i - distance` of the predecessor.
//
// Successor entries also carry the successor's predecessor range, so the
// completion path need not load the successor's descriptor first (one
// dependent round trip fewer per hand-off). In predecessor entries those
// two fields are 0.
struct alignas(4) Edge {
    // The task at the other end of the edge.
    uint32_t task;
    // 0 (same iteration) or more (loop-carried, at most [`MAX_DISTANCE`]).
    uint32_t distance;
    // Successor entries: the successor's `TaskDesc::pred_start`.
    uint32_t pred_start;
    // Successor entries: the successor's `TaskDesc::pred_count`.
    uint32_t pred_count;
};
static_assert(sizeof(Edge) == 16, "sizeof(Edge) differs from Rust");
static_assert(alignof(Edge) == 4, "alignof(Edge) differs from Rust");

// A successor on another PE: after completing instance `i`, the
// producer stores `state_word(i + 1, i + 1)` with a system-scope release
// into the consumer PE's state word `slot` (a *proxy* task that mirrors
// the producer there). The value is the iteration count (SET, never
// ADD), so it only increases and reordered stores cannot lose counts.
struct alignas(4) RemoteOut {
    // The consumer PE.
    uint32_t pe;
    // Local task id of the proxy on the consumer PE.
    uint32_t slot;
};
static_assert(sizeof(RemoteOut) == 8, "sizeof(RemoteOut) differs from Rust");
static_assert(alignof(RemoteOut) == 4, "alignof(RemoteOut) differs from Rust");

// Ready-queue control words (device memory). `head` and `tail` sit on
// separate 128-byte lines so poppers and pushers do not share a line.
//
// `head`: pop tickets, taken by compute blocks with `atomicAdd`; only increases.
// `tail`: push tickets, taken by blocks that claimed an instance; only increases.
struct alignas(4) QueueCtl {
    // Next pop ticket.
    uint32_t head;
    // Padding to 128 bytes.
    uint32_t _pad0[31];
    // Next push ticket.
    uint32_t tail;
    // Padding to 128 bytes.
    uint32_t _pad1[31];
};
static_assert(sizeof(QueueCtl) == 256, "sizeof(QueueCtl) differs from Rust");
static_assert(alignof(QueueCtl) == 4, "alignof(QueueCtl) differs from Rust");

// One ready-queue slot (a ticketed Vyukov slot).
//
// `word = (seq << 32) | task`. Slot `i` starts with `seq = i`.
// A pusher with ticket `k` waits for `seq == k` (slot free for round `k`),
// writes `iteration`, then stores `word = ((k + 1) << 32) | task` with
// release. A popper with ticket `k` waits (acquire) for `seq == k + 1`,
// reads `task` and `iteration`, then stores `seq = k + capacity`, freeing
// the slot for push ticket `k + capacity`. `seq` only increases (mod 2^32).
struct alignas(8) QueueSlot {
    // `(seq << 32) | task`.
    uint64_t word;
    // Iteration of the queued instance.
    uint32_t iteration;
    // Padding.
    uint32_t _pad;
};
static_assert(sizeof(QueueSlot) == 16, "sizeof(QueueSlot) differs from Rust");
static_assert(alignof(QueueSlot) == 8, "alignof(QueueSlot) differs from Rust");

// Per-PE error record and end-of-run counters (device memory).
//
// `error_code` is written once, by compare-and-swap from 0 by the first
// block that fails; that block then fills the other `err` fields and
// raises abort. The host reads the record after the kernel ends.
struct alignas(8) Status {
    // [`ErrorCode`] of the first error; 0 when the run succeeded.
    uint32_t error_code;
    // PE of the failing block.
    uint32_t pe;
    // Block index of the failing block.
    uint32_t block;
    // [`Role`] of the failing block.
    uint32_t role;
    // Task the failing block was running or waiting for ([`TASK_NONE`] if none).
    uint32_t task;
    // Iteration of that task.
    uint32_t iteration;
    // [`WaitKind`] of the timed-out wait.
    uint32_t wait_kind;
    // Index of the awaited word (slot, task, signal).
    uint32_t wait_index;
    // Value of the awaited word when the wait gave up.
    uint64_t seen;
    // Value the wait wanted.
    uint64_t wanted;
    // Error detail: task failure code, unknown kind, element index.
    uint64_t detail;
    // `%globaltimer` when the error was recorded (ns).
    uint64_t error_ns;
    // Earliest `%globaltimer` at which a block entered the kernel (ns), min over blocks; the host initializes it to `u64::MAX`.
    uint64_t start_ns;
    // Latest `%globaltimer` at which a block left its loop (ns), max over blocks.
    uint64_t last_exit_ns;
    // ABI version the kernel was compiled against.
    uint32_t abi_compiled;
    // Tasks that completed all their instances (termination counter).
    uint32_t tasks_finished;
    // Blocks that left their loop.
    uint32_t blocks_exited;
    // Device-memory mirror of the abort flag: raised (0 → 1) with the host-mapped `HostControl::abort` by any failing block; polled by every block every few hundred polls (cheaper than host memory).
    uint32_t abort;
    // Instances every task runs: starts at the run's iteration count and only decreases, when a task body asks the run to finish early (`ctx.finish_at(n)`, atomic min). Read by every claim and pinned loop when [`RUN_MAY_STOP`] is set.
    uint32_t limit;
    // Set (0 → 1) by comm block 0 once `limit` was lowered and every local task's `done` reached it: the run is over (the termination counter cannot know which completions were the last ones).
    uint32_t stopped;
    // Padding: `progress` on a 128-byte line of its own.
    uint32_t _pad0[6];
    // Instances completed on this PE so far: every block adds what it completed since its last add (`red.add`, relaxed) whenever it publishes its own `BlockStats::completed` (every `PUBLISH_EVERY` instances, at least every `TICK_CYCLES` while running, when it leaves, and for compute blocks before they go idle). One load gives the PE's progress to the stall checks (every wait's deadline, comm block 0's watchdog and its publish to `HostControl::progress`); before ABI 7 each of those summed every block's counter, a thousand serial loads that held comm block 0 off its own tasks for up to 260 µs (docs/performance.md, session 8).
    uint64_t progress;
    // Padding to 256 bytes.
    uint64_t _pad1[15];
};
static_assert(sizeof(Status) == 256, "sizeof(Status) differs from Rust");
static_assert(alignof(Status) == 8, "alignof(Status) differs from Rust");

// Per-PE words in host-mapped (pinned, device-mapped) memory: the only
// memory the host reads or writes while a run is in flight.
//
// `abort`: written by any block of any PE (system-scope store) or by the
// host; read by every block every few hundred polls; only goes 0 → 1.
// `finished`: written 0 → 1 by the last block to leave; read by the host.
// `progress`: instances completed on this PE, published by comm block 0
// (relaxed, system scope); only increases; read by the host watchdog.
// `iterations_done`: a lower bound of the minimum `done` over this
// PE's tasks, published by comm block 0 (relaxed, system scope) at the
// end of each sweep over the tasks ([`PROGRESS_SWEEP_TASKS`] tasks per
// progress publish), and exactly by the last block out when every task
// finished; only increases.
// `last_residual` / `residual_iteration`: the latest value a task body
// reported with `ctx.report_residual(r)` (relaxed, then release, system
// scope; written by the reporting block's thread 0 once the instance's
// completion is published, so a report never delays the instance's
// successors); `residual_iteration` is the reporting instance's iteration
// + 1, 0 until the first report. Two words: a host read racing a new
// report may pair one report's value with the next one's iteration.
struct alignas(8) HostControl {
    // Nonzero: every block of this PE must leave its loop now; [`ABORT_BY_HOST`] or [`ABORT_BY_PE`] says who asked.
    uint32_t abort;
    // Nonzero: every block of this PE has left its loop.
    uint32_t finished;
    // Instances completed on this PE (published periodically).
    uint64_t progress;
    // `%globaltimer` of the last progress publish (ns).
    uint64_t heartbeat_ns;
    // Iterations every task of this PE has completed (a lower bound).
    uint32_t iterations_done;
    // Iteration + 1 of the last residual report; 0: none yet.
    uint32_t residual_iteration;
    // The last residual a task body reported.
    double last_residual;
};
static_assert(sizeof(HostControl) == 40, "sizeof(HostControl) differs from Rust");
static_assert(alignof(HostControl) == 8, "alignof(HostControl) differs from Rust");

// Per-block counters and the block's current wait (device memory). Each
// block writes only its own entry; the host and comm blocks read them.
struct alignas(8) BlockStats {
    // Task instances this block completed.
    uint64_t completed;
    // [`WaitKind`] this block waits on now (0 when running or idle-free).
    uint32_t wait_kind;
    // Index of the awaited word.
    uint32_t wait_index;
    // Value the wait wants.
    uint64_t wait_wanted;
    // Task this block last ran or waits in ([`TASK_NONE`] if none).
    uint32_t task;
    // Iteration of that task.
    uint32_t iteration;
};
static_assert(sizeof(BlockStats) == 32, "sizeof(BlockStats) differs from Rust");
static_assert(alignof(BlockStats) == 8, "alignof(BlockStats) differs from Rust");

// One device trace record (32 bytes, so a ring is an array of them).
// Written by the block that owns the ring (see [`TraceRingHeader`]);
// read by the host after the kernel ended.
struct alignas(8) TraceRecord {
    // `%globaltimer` when the event happened (ns; coarse: it advances about every µs on Hopper).
    uint64_t t_ns;
    // Local task id on the recording PE ([`TASK_NONE`] if none).
    uint32_t task;
    // Iteration involved.
    uint32_t iteration;
    // Kind-specific argument ([`TraceKind`]).
    uint64_t arg;
    // [`TraceKind`] in bits 0..8, the recording block in bits 8..32 ([`trace_kind_block`]).
    uint32_t kind_block;
    // The destination PE for [`TraceKind::SignalSent`], else the recording PE.
    uint32_t pe;
};
static_assert(sizeof(TraceRecord) == 32, "sizeof(TraceRecord) differs from Rust");
static_assert(alignof(TraceRecord) == 8, "alignof(TraceRecord) differs from Rust");

// The header of one block's trace ring. A PE's trace area
// ([`RunParams::trace`]) holds one ring per block of its partition,
// block `b` at byte `b × (trace_cap + 1) × 32`: this header, then
// `trace_cap` [`TraceRecord`]s. Append number `k` (from 0) goes to
// record `k % trace_cap`, overwriting the oldest once the ring is full.
//
// `head`: appends so far (all of them, kept or overwritten), written by
// the block's thread 0 when the block leaves (the running count lives
// in shared memory); the host starts it at 0 and reads it after the
// kernel ended: `head − min(head, trace_cap)` records were dropped.
struct alignas(8) TraceRingHeader {
    // Appends so far.
    uint64_t head;
    // Padding to one record's size.
    uint64_t _pad[3];
};
static_assert(sizeof(TraceRingHeader) == 32, "sizeof(TraceRingHeader) differs from Rust");
static_assert(alignof(TraceRingHeader) == 8, "alignof(TraceRingHeader) differs from Rust");

// Everything one PE's scheduler needs. The launch passes one per local
// PE by value ([`MAX_LOCAL_PES`] at most); block `b` serves local PE
// `b / (comm_blocks + compute_blocks)`. Pointers are device addresses of
// this PE's tables.
//
// Local task ids: `[0, first_comm)` compute tasks, `[first_comm,
// num_tasks)` comm tasks (run by comm blocks only), `[num_tasks,
// num_tasks + num_proxies)` proxies: one per predecessor on another PE,
// whose state word that PE writes ([`RemoteOut`]).
struct alignas(8) RunParams {
    // Must equal the kernel's compiled [`ABI_VERSION`].
    uint32_t abi_version;
    // This PE's index.
    uint32_t pe;
    // Number of PEs in the run (all GPUs).
    uint32_t num_pes;
    // Local tasks of this PE (compute + comm, proxies excluded).
    uint32_t num_tasks;
    // Instances of every task to run.
    uint32_t iterations;
    // Blocks `[0, comm_blocks)` of this PE's partition have the comm role.
    uint32_t comm_blocks;
    // Blocks `[comm_blocks, comm_blocks + compute_blocks)` compute.
    uint32_t compute_blocks;
    // Compute ready-queue capacity minus one (capacity is a power of two).
    uint32_t queue_mask;
    // Deadline of every bounded wait without progress (ns).
    uint64_t timeout_ns;
    // [`RUN_MAY_STOP`], [`TEST_HOLD_TASK`], [`RUN_STATE_SPREAD`].
    uint32_t flags;
    // Task held back when `flags & TEST_HOLD_TASK`.
    uint32_t hold_task;
    // First comm task id.
    uint32_t first_comm;
    // Proxy tasks (ids `num_tasks..num_tasks + num_proxies`).
    uint32_t num_proxies;
    // Comm ready-queue capacity minus one (a power of two minus one).
    uint32_t comm_queue_mask;
    // Compute blocks `[0, pin_compute_slots)` run pinned task lists only.
    uint32_t pin_compute_slots;
    // Comm blocks `[0, pin_comm_slots)` run pinned comm task lists (besides their other duties).
    uint32_t pin_comm_slots;
    // First block of this PE in the launch's grid.
    uint32_t block_base;
    // `TaskDesc[num_tasks + num_proxies]`.
    uint64_t tasks;
    // Successor edges (CSR, by `TaskDesc::succ_start`); pinned successors are left out (nobody claims them: their block polls).
    uint64_t succ;
    // Predecessor edges (CSR, by `TaskDesc::pred_start`).
    uint64_t pred;
    // `RemoteOut[]` (by `TaskDesc::remote_start`).
    uint64_t remote;
    // `u32[pin_compute_slots + pin_comm_slots + 1]` offsets, then the pinned task ids of each slot in the order its block runs them.
    uint64_t pinned;
    // Argument arena.
    uint64_t args;
    // `u64[num_tasks + num_proxies]`: `(claimed << 32) | done` per task (`× STATE_SPREAD_WORDS` words, one a line, under [`RUN_STATE_SPREAD`]).
    uint64_t state;
    // `u32[num_proxies]`: last `done` of each proxy whose successors the relaying comm block checked (written by that block only).
    uint64_t proxy_seen;
    // Compute `QueueCtl`.
    uint64_t queue;
    // Compute `QueueSlot[queue_mask + 1]`.
    uint64_t slots;
    // Comm `QueueCtl`.
    uint64_t comm_queue;
    // Comm `QueueSlot[comm_queue_mask + 1]`.
    uint64_t comm_slots;
    // `Status` (device memory).
    uint64_t status;
    // `HostControl` (host-mapped; device address).
    uint64_t control;
    // `u64[num_pes]`: every PE's `HostControl` (raise abort everywhere).
    uint64_t peer_controls;
    // `u64[num_pes]`: every PE's `Status` (device abort mirrors), reachable from this PE.
    uint64_t peer_statuses;
    // `u64[num_pes]`: every PE's state array (remote successor signals).
    uint64_t peer_states;
    // `u64[num_pes]`: every PE's symmetric heap base, as this PE reaches it.
    uint64_t peer_heaps;
    // `BlockStats[comm_blocks + compute_blocks]`.
    uint64_t block_stats;
    // This PE's trace rings (see [`TraceRingHeader`]); 0 when the run is not traced. Read only by kernels compiled with `-DAUTARKY_TRACE`.
    uint64_t trace;
    // Records per trace ring (a power of two; 0 when not traced).
    uint32_t trace_cap;
    // Dynamic tasks with at least this many predecessor edges are *counted*: every predecessor completion adds to their arrival counter, and a readiness check runs only once the counter shows that every predecessor may be done ([`arrivals_needed`]). At least 2 (a sole predecessor edge is claimed without a check).
    uint32_t counted_fan_in;
    // `u64[num_tasks]`: arrivals of every local task (only counted tasks' words are used); zero at launch, only increase. With arrival slots (kernels compiled with `-DAUTARKY_SLOTS`): word `t` of a counted task `t` is the index of its slot words, and slot `j` is 16-bit field [`slot_shift`]`(j)` of word [`slot_word`]`(j)` from there (since ABI 12: [`SLOT_FIELDS`] slots a word).
    uint64_t arrivals;
    // Wake words of this PE's blocks: `u32`, one per [`WAKE_GROUP`] blocks (block `b` reads word `b / WAKE_GROUP`), [`WAKE_STRIDE`] words apart (a 128-byte line each); zero at launch, set to 1 (never back) when the run ends for this PE: by the block whose add made `Status::tasks_finished` reach `num_tasks`, by comm block 0 when it sets `Status::stopped`, and by a block that raises abort. Idle blocks read their word with every poll, so they leave within a poll of the end instead of at their next look at `Status` (every 64 polls: one word read by every idle block must be read rarely). Since ABI 9.
    uint64_t wake;
};
static_assert(sizeof(RunParams) == 256, "sizeof(RunParams) differs from Rust");
static_assert(alignof(RunParams) == 8, "alignof(RunParams) differs from Rust");

}  // namespace autarky

// Writes sizeof/offsetof of every ABI struct, in the order of
// autarky::abi_header::expected_layout(), for the GPU layout probe.
// (NVRTC has no constant-expression offsetof, so field offsets are
// checked here, on the device, rather than by static_assert.)
__device__ inline void autarky_abi_layout(unsigned long long* out) {
    unsigned i = 0;
    out[i++] = sizeof(autarky::TaskDesc);
    { autarky::TaskDesc s{};
      out[i++] = (unsigned long long)((const char*)&s.kind - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.global - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.arg_offset - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.arg_len - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.succ_start - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.succ_count - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred_start - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred_count - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.remote_start - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.remote_count - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred_distance_sum - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pinned_succs - (const char*)&s);
    }
    out[i++] = sizeof(autarky::Edge);
    { autarky::Edge s{};
      out[i++] = (unsigned long long)((const char*)&s.task - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.distance - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred_start - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred_count - (const char*)&s);
    }
    out[i++] = sizeof(autarky::RemoteOut);
    { autarky::RemoteOut s{};
      out[i++] = (unsigned long long)((const char*)&s.pe - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.slot - (const char*)&s);
    }
    out[i++] = sizeof(autarky::QueueCtl);
    { autarky::QueueCtl s{};
      out[i++] = (unsigned long long)((const char*)&s.head - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad0 - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.tail - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad1 - (const char*)&s);
    }
    out[i++] = sizeof(autarky::QueueSlot);
    { autarky::QueueSlot s{};
      out[i++] = (unsigned long long)((const char*)&s.word - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iteration - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad - (const char*)&s);
    }
    out[i++] = sizeof(autarky::Status);
    { autarky::Status s{};
      out[i++] = (unsigned long long)((const char*)&s.error_code - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pe - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.block - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.role - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.task - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iteration - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wait_kind - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wait_index - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.seen - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wanted - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.detail - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.error_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.start_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.last_exit_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.abi_compiled - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.tasks_finished - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.blocks_exited - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.abort - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.limit - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.stopped - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad0 - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.progress - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad1 - (const char*)&s);
    }
    out[i++] = sizeof(autarky::HostControl);
    { autarky::HostControl s{};
      out[i++] = (unsigned long long)((const char*)&s.abort - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.finished - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.progress - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.heartbeat_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iterations_done - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.residual_iteration - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.last_residual - (const char*)&s);
    }
    out[i++] = sizeof(autarky::BlockStats);
    { autarky::BlockStats s{};
      out[i++] = (unsigned long long)((const char*)&s.completed - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wait_kind - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wait_index - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wait_wanted - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.task - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iteration - (const char*)&s);
    }
    out[i++] = sizeof(autarky::TraceRecord);
    { autarky::TraceRecord s{};
      out[i++] = (unsigned long long)((const char*)&s.t_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.task - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iteration - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.arg - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.kind_block - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pe - (const char*)&s);
    }
    out[i++] = sizeof(autarky::TraceRingHeader);
    { autarky::TraceRingHeader s{};
      out[i++] = (unsigned long long)((const char*)&s.head - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s._pad - (const char*)&s);
    }
    out[i++] = sizeof(autarky::RunParams);
    { autarky::RunParams s{};
      out[i++] = (unsigned long long)((const char*)&s.abi_version - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pe - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.num_pes - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.num_tasks - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.iterations - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.comm_blocks - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.compute_blocks - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.queue_mask - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.timeout_ns - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.flags - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.hold_task - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.first_comm - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.num_proxies - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.comm_queue_mask - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pin_compute_slots - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pin_comm_slots - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.block_base - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.tasks - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.succ - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pred - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.remote - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.pinned - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.args - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.state - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.proxy_seen - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.queue - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.slots - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.comm_queue - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.comm_slots - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.status - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.control - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.peer_controls - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.peer_statuses - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.peer_states - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.peer_heaps - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.block_stats - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.trace - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.trace_cap - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.counted_fan_in - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.arrivals - (const char*)&s);
      out[i++] = (unsigned long long)((const char*)&s.wake - (const char*)&s);
    }
}
