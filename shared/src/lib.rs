//! The host/device ABI of autarky.
//!
//! Every type the Rust host and the CUDA megakernel both read is defined here,
//! once. The C header `device/include/autarky/abi.h` is generated from the
//! tables below (`autarky::abi_header::generate`), and a test fails when the
//! committed header is stale. Layouts are checked three ways: `const` asserts
//! here, `static_assert`s in the header, and a GPU probe kernel that writes
//! `sizeof`/`offsetof` back to the host.
//!
//! Rules: fixed-width integers only, explicit `_pad` fields, enums stored as
//! `u32` fields (the enums themselves are `#[repr(u32)]` here and
//! `enum class : uint32_t` in C), no host handles, no `#ifdef`-dependent
//! layout. Device pointers travel as `u64`.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Bumped whenever any type below changes layout or meaning. The kernel
/// compares the value the host passes in [`RunParams::abi_version`] with the
/// one it was compiled against and refuses to run on a mismatch.
pub const ABI_VERSION: u32 = 12;

/// "No task" in task-id fields (for example in a [`Status`] that records an
/// error not tied to a task).
pub const TASK_NONE: u32 = u32::MAX;

/// Largest iteration count a run may ask for. Progress words are `u32` and
/// compared with wraparound-safe arithmetic, so counts stay below 2^31.
pub const MAX_ITERATIONS: u32 = (1 << 31) - 1;

/// Largest edge distance: instance `i` of a successor may wait for instance
/// `i - d` of a predecessor for any `d <= MAX_DISTANCE`.
pub const MAX_DISTANCE: u32 = 1 << 16;

/// Most PEs one megakernel launch hosts (virtual PEs on one GPU): the
/// launch passes one [`RunParams`] per local PE by value.
pub const MAX_LOCAL_PES: u32 = 16;

/// One field of an ABI struct, for the header generator and the layout probe.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Field name, identical in Rust and C.
    pub name: &'static str,
    /// C element type (`uint32_t`, `uint64_t`, ...).
    pub c_type: &'static str,
    /// Array length, 0 for a scalar.
    pub array: usize,
    /// Byte offset in the struct.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// Doc comment, copied into the header.
    pub doc: &'static str,
}

/// A `#[repr(C)]` struct that is part of the ABI.
pub trait AbiStruct: bytemuck::Pod {
    /// Type name, identical in Rust and C.
    const NAME: &'static str;
    /// Doc comment, copied into the header.
    const DOC: &'static str;
    /// Every field in declaration order.
    const FIELDS: &'static [Field];
    /// `size_of::<Self>()`.
    const SIZE: usize = core::mem::size_of::<Self>();
    /// `align_of::<Self>()`.
    const ALIGN: usize = core::mem::align_of::<Self>();
}

/// A `#[repr(u32)]` enum that is part of the ABI.
pub trait AbiEnum: Sized + Copy {
    /// Type name, identical in Rust and C.
    const NAME: &'static str;
    /// Doc comment, copied into the header.
    const DOC: &'static str;
    /// `(name, value, doc)` for every variant.
    const VARIANTS: &'static [(&'static str, u32, &'static str)];
    /// The variant with this value, if any.
    fn from_u32(v: u32) -> Option<Self>;
}

/// Scalar types allowed in ABI structs, with their C spelling.
pub trait CType {
    /// C spelling of the element type.
    const C_TYPE: &'static str;
    /// Array length (0 for scalars).
    const ARRAY: usize = 0;
}
impl CType for u32 {
    const C_TYPE: &'static str = "uint32_t";
}
impl CType for u64 {
    const C_TYPE: &'static str = "uint64_t";
}
impl CType for i32 {
    const C_TYPE: &'static str = "int32_t";
}
impl CType for f32 {
    const C_TYPE: &'static str = "float";
}
impl CType for f64 {
    const C_TYPE: &'static str = "double";
}
impl<T: CType, const N: usize> CType for [T; N] {
    const C_TYPE: &'static str = T::C_TYPE;
    const ARRAY: usize = N;
}

macro_rules! abi_struct {
    (
        $(#[doc = $doc:expr])*
        pub struct $name:ident {
            $( $(#[doc = $fdoc:expr])* pub $field:ident : $ty:ty ),* $(,)?
        }
        size = $size:expr;
    ) => {
        $(#[doc = $doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $( $(#[doc = $fdoc])* pub $field: $ty ),*
        }
        const _: () = assert!(core::mem::size_of::<$name>() == $size);
        impl Default for $name {
            fn default() -> Self {
                bytemuck::Zeroable::zeroed()
            }
        }
        impl AbiStruct for $name {
            const NAME: &'static str = stringify!($name);
            const DOC: &'static str = concat!($($doc, "\n"),*);
            const FIELDS: &'static [Field] = &[
                $( Field {
                    name: stringify!($field),
                    c_type: <$ty as CType>::C_TYPE,
                    array: <$ty as CType>::ARRAY,
                    offset: core::mem::offset_of!($name, $field),
                    size: core::mem::size_of::<$ty>(),
                    doc: concat!($($fdoc),*),
                } ),*
            ];
        }
    };
}

macro_rules! abi_enum {
    (
        $(#[doc = $doc:expr])*
        pub enum $name:ident {
            $( $(#[doc = $vdoc:expr])* $variant:ident = $value:expr ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[doc = $vdoc])* $variant = $value ),*
        }
        impl AbiEnum for $name {
            const NAME: &'static str = stringify!($name);
            const DOC: &'static str = concat!($($doc, "\n"),*);
            const VARIANTS: &'static [(&'static str, u32, &'static str)] =
                &[ $( (stringify!($variant), $value, concat!($($vdoc),*)) ),* ];
            fn from_u32(v: u32) -> Option<Self> {
                match v {
                    $( $value => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }
        impl From<$name> for u32 {
            fn from(v: $name) -> u32 {
                v as u32
            }
        }
    };
}

abi_enum! {
    /// Why a run ended early. Recorded once per PE in [`Status::error_code`]
    /// by the first block that fails (compare-and-swap from `None`).
    pub enum ErrorCode {
        /// No error.
        None = 0,
        /// A bounded wait ran past its deadline ([`Status`] says what it awaited).
        Timeout = 1,
        /// A task body called `ctx.fail(code)`; `detail` holds the code.
        TaskFailed = 2,
        /// A task whose kind asks for finite outputs produced NaN or Inf; `detail` holds the element index.
        NonFinite = 3,
        /// The task table names a kind the megakernel was not compiled with; `detail` holds the kind.
        UnknownTaskKind = 4,
        /// The host passed an ABI version the kernel was not compiled for; `seen`/`wanted` hold both.
        AbiMismatch = 5,
        /// The host raised abort through host-mapped memory (watchdog or user).
        HostAbort = 6,
    }
}

abi_enum! {
    /// What a waiting block awaits. Written to [`BlockStats::wait_kind`] while it
    /// waits and to [`Status::wait_kind`] when a wait times out.
    pub enum WaitKind {
        /// Not waiting.
        None = 0,
        /// A compute block waits for a ready-queue slot to be filled (`index` = slot).
        QueueItem = 1,
        /// A block waits for a ready-queue slot to be freed before pushing (`index` = slot).
        QueueSpace = 2,
        /// A task body waits on a word through the public wait helper (`index` = word id given by the body).
        UserWord = 3,
        /// Waiting for a remote signal (halo pulse); `index` = signal id.
        Signal = 4,
        /// A test hook holds a task back (fault injection); `index` = task.
        TestHold = 5,
        /// A comm block waits for any task instance of its PE to complete (stall watchdog).
        Progress = 6,
        /// A pinned block waits for the predecessors of its next task instance
        /// (`index` = the task, `wanted` = the instance).
        Predecessors = 7,
        /// A comm block found nothing to do: no pinned comm instance ready,
        /// the comm ring empty, no proxy changed (`index` = the block).
        /// Recorded in traces only; never a timeout's cause.
        CommIdle = 8,
    }
}

abi_enum! {
    /// What a [`TraceRecord`] records (its `kind_block & 0xff`). The host
    /// decodes each into an `autarky::trace::EventKind`.
    pub enum TraceKind {
        /// A task instance's body starts (`task`, `iteration`; `arg` 0).
        TaskStart = 1,
        /// A task instance's body ended (the block's barrier after it).
        TaskEnd = 2,
        /// The block starts waiting: `arg` = [`trace_wait_word`]`(kind, index)`
        /// of the awaited word; `task`/`iteration` the wait site's (or
        /// [`TASK_NONE`]). Recorded only once the first poll failed.
        WaitBegin = 3,
        /// The wait for word `arg` ended (satisfied, stopped or gave up).
        WaitEnd = 4,
        /// A remote completion signal: `arg` = the proxy slot (local task id
        /// on the destination PE), `pe` = the destination PE, `iteration`
        /// = the completed instance. `task` is [`TASK_NONE`]: the host
        /// names the producer from the destination's proxy table.
        SignalSent = 5,
        /// A proxy was seen advanced (comm relay, or a pinned poll that
        /// found its predecessors done): `arg` = `task` = the proxy's local
        /// id, `iteration` = the producer instance seen complete.
        SignalSeen = 6,
        /// A task body marked a halo pulse packed (`arg`: pulse id).
        PulsePack = 7,
        /// A task body marked a halo pulse put (`arg`: pulse id).
        PulsePut = 8,
    }
}

abi_enum! {
    /// A block's role, fixed at launch: blocks `[0, comm_blocks)` communicate,
    /// the rest compute.
    pub enum Role {
        /// Drives halo pulses, publishes progress, watches for stalls.
        Comm = 1,
        /// Pops ready task instances and runs them.
        Compute = 2,
    }
}

abi_struct! {
    /// One task of the lowered graph. Indexed by task id.
    pub struct TaskDesc {
        /// Index of the task kind (the generated dispatch switch's case).
        pub kind: u32,
        /// The task's id in the user's graph (errors and traces name it).
        pub global: u32,
        /// Byte offset of the task's arguments in the argument arena (16-aligned).
        pub arg_offset: u32,
        /// Byte length of the task's arguments.
        pub arg_len: u32,
        /// First successor edge in [`RunParams::succ`].
        pub succ_start: u32,
        /// Number of successor edges.
        pub succ_count: u32,
        /// First predecessor edge in [`RunParams::pred`].
        pub pred_start: u32,
        /// Number of predecessor edges.
        pub pred_count: u32,
        /// First entry in [`RunParams::remote`]: successors on other PEs.
        pub remote_start: u32,
        /// Number of remote successor entries.
        pub remote_count: u32,
        /// Sum of the distances of the predecessor edges (saturating): with
        /// `pred_count` it gives the arrivals a counted task needs
        /// ([`arrivals_needed`]).
        pub pred_distance_sum: u32,
        /// Predecessor edges from this task to pinned tasks of its PE
        /// (left out of the successor list: their blocks poll `done`). A
        /// completion with such readers publishes at once; one without may
        /// defer its publish while its block runs what it kept (chain
        /// fusion, see the device scheduler).
        pub pinned_succs: u32,
    }
    size = 48;
}

abi_struct! {
    /// A successor on another PE: after completing instance `i`, the
    /// producer stores `state_word(i + 1, i + 1)` with a system-scope release
    /// into the consumer PE's state word `slot` (a *proxy* task that mirrors
    /// the producer there). The value is the iteration count (SET, never
    /// ADD), so it only increases and reordered stores cannot lose counts.
    pub struct RemoteOut {
        /// The consumer PE.
        pub pe: u32,
        /// Local task id of the proxy on the consumer PE.
        pub slot: u32,
    }
    size = 8;
}

abi_struct! {
    /// One CSR edge entry: in the successor table `task` is the successor, in
    /// the predecessor table it is the predecessor. Instance `i` of the
    /// successor needs instance `i - distance` of the predecessor.
    ///
    /// Successor entries also carry the successor's predecessor range, so the
    /// completion path need not load the successor's descriptor first (one
    /// dependent round trip fewer per hand-off). In predecessor entries those
    /// two fields are 0.
    pub struct Edge {
        /// The task at the other end of the edge.
        pub task: u32,
        /// 0 (same iteration) or more (loop-carried, at most [`MAX_DISTANCE`]).
        pub distance: u32,
        /// Successor entries: the successor's `TaskDesc::pred_start`.
        pub pred_start: u32,
        /// Successor entries: the successor's `TaskDesc::pred_count`.
        pub pred_count: u32,
    }
    size = 16;
}

abi_struct! {
    /// Ready-queue control words (device memory). `head` and `tail` sit on
    /// separate 128-byte lines so poppers and pushers do not share a line.
    ///
    /// `head`: pop tickets, taken by compute blocks with `atomicAdd`; only increases.
    /// `tail`: push tickets, taken by blocks that claimed an instance; only increases.
    pub struct QueueCtl {
        /// Next pop ticket.
        pub head: u32,
        /// Padding to 128 bytes.
        pub _pad0: [u32; 31],
        /// Next push ticket.
        pub tail: u32,
        /// Padding to 128 bytes.
        pub _pad1: [u32; 31],
    }
    size = 256;
}

abi_struct! {
    /// One ready-queue slot (a ticketed Vyukov slot).
    ///
    /// `word = (seq << 32) | task`. Slot `i` starts with `seq = i`.
    /// A pusher with ticket `k` waits for `seq == k` (slot free for round `k`),
    /// writes `iteration`, then stores `word = ((k + 1) << 32) | task` with
    /// release. A popper with ticket `k` waits (acquire) for `seq == k + 1`,
    /// reads `task` and `iteration`, then stores `seq = k + capacity`, freeing
    /// the slot for push ticket `k + capacity`. `seq` only increases (mod 2^32).
    pub struct QueueSlot {
        /// `(seq << 32) | task`.
        pub word: u64,
        /// Iteration of the queued instance.
        pub iteration: u32,
        /// Padding.
        pub _pad: u32,
    }
    size = 16;
}

abi_struct! {
    /// Per-PE error record and end-of-run counters (device memory).
    ///
    /// `error_code` is written once, by compare-and-swap from 0 by the first
    /// block that fails; that block then fills the other `err` fields and
    /// raises abort. The host reads the record after the kernel ends.
    pub struct Status {
        /// [`ErrorCode`] of the first error; 0 when the run succeeded.
        pub error_code: u32,
        /// PE of the failing block.
        pub pe: u32,
        /// Block index of the failing block.
        pub block: u32,
        /// [`Role`] of the failing block.
        pub role: u32,
        /// Task the failing block was running or waiting for ([`TASK_NONE`] if none).
        pub task: u32,
        /// Iteration of that task.
        pub iteration: u32,
        /// [`WaitKind`] of the timed-out wait.
        pub wait_kind: u32,
        /// Index of the awaited word (slot, task, signal).
        pub wait_index: u32,
        /// Value of the awaited word when the wait gave up.
        pub seen: u64,
        /// Value the wait wanted.
        pub wanted: u64,
        /// Error detail: task failure code, unknown kind, element index.
        pub detail: u64,
        /// `%globaltimer` when the error was recorded (ns).
        pub error_ns: u64,
        /// Earliest `%globaltimer` at which a block entered the kernel (ns),
        /// min over blocks; the host initializes it to `u64::MAX`.
        pub start_ns: u64,
        /// Latest `%globaltimer` at which a block left its loop (ns), max over blocks.
        pub last_exit_ns: u64,
        /// ABI version the kernel was compiled against.
        pub abi_compiled: u32,
        /// Tasks that completed all their instances (termination counter).
        pub tasks_finished: u32,
        /// Blocks that left their loop.
        pub blocks_exited: u32,
        /// Device-memory mirror of the abort flag: raised (0 → 1) with the
        /// host-mapped `HostControl::abort` by any failing block; polled by
        /// every block every few hundred polls (cheaper than host memory).
        pub abort: u32,
        /// Instances every task runs: starts at the run's iteration count and
        /// only decreases, when a task body asks the run to finish early
        /// (`ctx.finish_at(n)`, atomic min). Read by every claim and pinned
        /// loop when [`RUN_MAY_STOP`] is set.
        pub limit: u32,
        /// Set (0 → 1) by comm block 0 once `limit` was lowered and every
        /// local task's `done` reached it: the run is over (the termination
        /// counter cannot know which completions were the last ones).
        pub stopped: u32,
        /// Padding: `progress` on a 128-byte line of its own.
        pub _pad0: [u32; 6],
        /// Instances completed on this PE so far: every block adds what it
        /// completed since its last add (`red.add`, relaxed) whenever it
        /// publishes its own `BlockStats::completed` (every
        /// `PUBLISH_EVERY` instances, at least every `TICK_CYCLES` while
        /// running, when it leaves, and for compute blocks before they go
        /// idle). One load gives the
        /// PE's progress to the stall checks (every wait's deadline, comm
        /// block 0's watchdog and its publish to `HostControl::progress`);
        /// before ABI 7 each of those summed every block's counter, a
        /// thousand serial loads that held comm block 0 off its own tasks
        /// for up to 260 µs (docs/performance.md, session 8).
        pub progress: u64,
        /// Padding to 256 bytes.
        pub _pad1: [u64; 15],
    }
    size = 256;
}

abi_struct! {
    /// Per-PE words in host-mapped (pinned, device-mapped) memory: the only
    /// memory the host reads or writes while a run is in flight.
    ///
    /// `abort`: written by any block of any PE (system-scope store) or by the
    /// host; read by every block every few hundred polls; only goes 0 → 1.
    /// `finished`: written 0 → 1 by the last block to leave; read by the host.
    /// `progress`: instances completed on this PE, published by comm block 0
    /// (relaxed, system scope); only increases; read by the host watchdog.
    /// `iterations_done`: a lower bound of the minimum `done` over this
    /// PE's tasks, published by comm block 0 (relaxed, system scope) at the
    /// end of each sweep over the tasks ([`PROGRESS_SWEEP_TASKS`] tasks per
    /// progress publish), and exactly by the last block out when every task
    /// finished; only increases.
    /// `last_residual` / `residual_iteration`: the latest value a task body
    /// reported with `ctx.report_residual(r)` (relaxed, then release, system
    /// scope; written by the reporting block's thread 0 once the instance's
    /// completion is published, so a report never delays the instance's
    /// successors); `residual_iteration` is the reporting instance's iteration
    /// + 1, 0 until the first report. Two words: a host read racing a new
    /// report may pair one report's value with the next one's iteration.
    pub struct HostControl {
        /// Nonzero: every block of this PE must leave its loop now;
        /// [`ABORT_BY_HOST`] or [`ABORT_BY_PE`] says who asked.
        pub abort: u32,
        /// Nonzero: every block of this PE has left its loop.
        pub finished: u32,
        /// Instances completed on this PE (published periodically).
        pub progress: u64,
        /// `%globaltimer` of the last progress publish (ns).
        pub heartbeat_ns: u64,
        /// Iterations every task of this PE has completed (a lower bound).
        pub iterations_done: u32,
        /// Iteration + 1 of the last residual report; 0: none yet.
        pub residual_iteration: u32,
        /// The last residual a task body reported.
        pub last_residual: f64,
    }
    size = 40;
}

abi_struct! {
    /// One device trace record (32 bytes, so a ring is an array of them).
    /// Written by the block that owns the ring (see [`TraceRingHeader`]);
    /// read by the host after the kernel ended.
    pub struct TraceRecord {
        /// `%globaltimer` when the event happened (ns; coarse: it advances
        /// about every µs on Hopper).
        pub t_ns: u64,
        /// Local task id on the recording PE ([`TASK_NONE`] if none).
        pub task: u32,
        /// Iteration involved.
        pub iteration: u32,
        /// Kind-specific argument ([`TraceKind`]).
        pub arg: u64,
        /// [`TraceKind`] in bits 0..8, the recording block in bits 8..32
        /// ([`trace_kind_block`]).
        pub kind_block: u32,
        /// The destination PE for [`TraceKind::SignalSent`], else the
        /// recording PE.
        pub pe: u32,
    }
    size = 32;
}

abi_struct! {
    /// The header of one block's trace ring. A PE's trace area
    /// ([`RunParams::trace`]) holds one ring per block of its partition,
    /// block `b` at byte `b × (trace_cap + 1) × 32`: this header, then
    /// `trace_cap` [`TraceRecord`]s. Append number `k` (from 0) goes to
    /// record `k % trace_cap`, overwriting the oldest once the ring is full.
    ///
    /// `head`: appends so far (all of them, kept or overwritten), written by
    /// the block's thread 0 when the block leaves (the running count lives
    /// in shared memory); the host starts it at 0 and reads it after the
    /// kernel ended: `head − min(head, trace_cap)` records were dropped.
    pub struct TraceRingHeader {
        /// Appends so far.
        pub head: u64,
        /// Padding to one record's size.
        pub _pad: [u64; 3],
    }
    size = 32;
}

abi_struct! {
    /// Per-block counters and the block's current wait (device memory). Each
    /// block writes only its own entry; the host and comm blocks read them.
    pub struct BlockStats {
        /// Task instances this block completed.
        pub completed: u64,
        /// [`WaitKind`] this block waits on now (0 when running or idle-free).
        pub wait_kind: u32,
        /// Index of the awaited word.
        pub wait_index: u32,
        /// Value the wait wants.
        pub wait_wanted: u64,
        /// Task this block last ran or waits in ([`TASK_NONE`] if none).
        pub task: u32,
        /// Iteration of that task.
        pub iteration: u32,
    }
    size = 32;
}

abi_struct! {
    /// Everything one PE's scheduler needs. The launch passes one per local
    /// PE by value ([`MAX_LOCAL_PES`] at most); block `b` serves local PE
    /// `b / (comm_blocks + compute_blocks)`. Pointers are device addresses of
    /// this PE's tables.
    ///
    /// Local task ids: `[0, first_comm)` compute tasks, `[first_comm,
    /// num_tasks)` comm tasks (run by comm blocks only), `[num_tasks,
    /// num_tasks + num_proxies)` proxies: one per predecessor on another PE,
    /// whose state word that PE writes ([`RemoteOut`]).
    pub struct RunParams {
        /// Must equal the kernel's compiled [`ABI_VERSION`].
        pub abi_version: u32,
        /// This PE's index.
        pub pe: u32,
        /// Number of PEs in the run (all GPUs).
        pub num_pes: u32,
        /// Local tasks of this PE (compute + comm, proxies excluded).
        pub num_tasks: u32,
        /// Instances of every task to run.
        pub iterations: u32,
        /// Blocks `[0, comm_blocks)` of this PE's partition have the comm role.
        pub comm_blocks: u32,
        /// Blocks `[comm_blocks, comm_blocks + compute_blocks)` compute.
        pub compute_blocks: u32,
        /// Compute ready-queue capacity minus one (capacity is a power of two).
        pub queue_mask: u32,
        /// Deadline of every bounded wait without progress (ns).
        pub timeout_ns: u64,
        /// [`RUN_MAY_STOP`], [`TEST_HOLD_TASK`], [`RUN_STATE_SPREAD`].
        pub flags: u32,
        /// Task held back when `flags & TEST_HOLD_TASK`.
        pub hold_task: u32,
        /// First comm task id.
        pub first_comm: u32,
        /// Proxy tasks (ids `num_tasks..num_tasks + num_proxies`).
        pub num_proxies: u32,
        /// Comm ready-queue capacity minus one (a power of two minus one).
        pub comm_queue_mask: u32,
        /// Compute blocks `[0, pin_compute_slots)` run pinned task lists only.
        pub pin_compute_slots: u32,
        /// Comm blocks `[0, pin_comm_slots)` run pinned comm task lists (besides
        /// their other duties).
        pub pin_comm_slots: u32,
        /// First block of this PE in the launch's grid.
        pub block_base: u32,
        /// `TaskDesc[num_tasks + num_proxies]`.
        pub tasks: u64,
        /// Successor edges (CSR, by `TaskDesc::succ_start`); pinned successors
        /// are left out (nobody claims them: their block polls).
        pub succ: u64,
        /// Predecessor edges (CSR, by `TaskDesc::pred_start`).
        pub pred: u64,
        /// `RemoteOut[]` (by `TaskDesc::remote_start`).
        pub remote: u64,
        /// `u32[pin_compute_slots + pin_comm_slots + 1]` offsets, then the
        /// pinned task ids of each slot in the order its block runs them.
        pub pinned: u64,
        /// Argument arena.
        pub args: u64,
        /// `u64[num_tasks + num_proxies]`: `(claimed << 32) | done` per task
        /// (`× STATE_SPREAD_WORDS` words, one a line, under
        /// [`RUN_STATE_SPREAD`]).
        pub state: u64,
        /// `u32[num_proxies]`: last `done` of each proxy whose successors the
        /// relaying comm block checked (written by that block only).
        pub proxy_seen: u64,
        /// Compute `QueueCtl`.
        pub queue: u64,
        /// Compute `QueueSlot[queue_mask + 1]`.
        pub slots: u64,
        /// Comm `QueueCtl`.
        pub comm_queue: u64,
        /// Comm `QueueSlot[comm_queue_mask + 1]`.
        pub comm_slots: u64,
        /// `Status` (device memory).
        pub status: u64,
        /// `HostControl` (host-mapped; device address).
        pub control: u64,
        /// `u64[num_pes]`: every PE's `HostControl` (raise abort everywhere).
        pub peer_controls: u64,
        /// `u64[num_pes]`: every PE's `Status` (device abort mirrors), reachable
        /// from this PE.
        pub peer_statuses: u64,
        /// `u64[num_pes]`: every PE's state array (remote successor signals).
        pub peer_states: u64,
        /// `u64[num_pes]`: every PE's symmetric heap base, as this PE reaches it.
        pub peer_heaps: u64,
        /// `BlockStats[comm_blocks + compute_blocks]`.
        pub block_stats: u64,
        /// This PE's trace rings (see [`TraceRingHeader`]); 0 when the run
        /// is not traced. Read only by kernels compiled with
        /// `-DAUTARKY_TRACE`.
        pub trace: u64,
        /// Records per trace ring (a power of two; 0 when not traced).
        pub trace_cap: u32,
        /// Dynamic tasks with at least this many predecessor edges are
        /// *counted*: every predecessor completion adds to their arrival
        /// counter, and a readiness check runs only once the counter shows
        /// that every predecessor may be done ([`arrivals_needed`]). At
        /// least 2 (a sole predecessor edge is claimed without a check).
        pub counted_fan_in: u32,
        /// `u64[num_tasks]`: arrivals of every local task (only counted
        /// tasks' words are used); zero at launch, only increase. With
        /// arrival slots (kernels compiled with `-DAUTARKY_SLOTS`): word
        /// `t` of a counted task `t` is the index of its slot words, and
        /// slot `j` is 16-bit field [`slot_shift`]`(j)` of word
        /// [`slot_word`]`(j)` from there (since ABI 12: [`SLOT_FIELDS`]
        /// slots a word).
        pub arrivals: u64,
        /// Wake words of this PE's blocks: `u32`, one per [`WAKE_GROUP`]
        /// blocks (block `b` reads word `b / WAKE_GROUP`), [`WAKE_STRIDE`]
        /// words apart (a 128-byte line each); zero at launch, set to 1
        /// (never back) when the run ends for this PE: by the block whose
        /// add made `Status::tasks_finished` reach `num_tasks`, by comm
        /// block 0 when it sets `Status::stopped`, and by a block that
        /// raises abort. Idle blocks read their word with every poll, so they
        /// leave within a poll of the end instead of at their next look at
        /// `Status` (every 64 polls: one word read by every idle block must
        /// be read rarely). Since ABI 9.
        pub wake: u64,
    }
    size = 256;
}

/// [`RunParams::flags`] bit: some task may lower [`Status::limit`], so claims
/// read it (otherwise the limit is `iterations` and is never read).
pub const RUN_MAY_STOP: u32 = 2;

/// [`RunParams::flags`] bit: every PE's state array has one word every
/// [`STATE_SPREAD_WORDS`] (a 128-byte line each: word `t` at index
/// `t × STATE_SPREAD_WORDS`) instead of one every 8 bytes. Set for every PE
/// of a run or for none (a producer writes a remote consumer's word at its
/// own spacing). Packed, sixteen tasks share a line, and every block that
/// publishes or polls one of them queues behind the others' accesses at the
/// line's L2 slice (a bare neighbour-flag stencil on the H200: 2.25 µs a
/// hop packed, 0.94 a line each); spread, a wide join reads a line per
/// input. The host sets it when a run asks (`RunOptions::state_layout`;
/// docs/performance.md, session 26). Since ABI 10.
pub const RUN_STATE_SPREAD: u32 = 4;

/// State-array words a task's word takes when [`RUN_STATE_SPREAD`] is set.
pub const STATE_SPREAD_WORDS: u32 = 16;

/// Test hook bit in [`RunParams::flags`]: never run `hold_task`
/// (a dependency that never completes).
pub const TEST_HOLD_TASK: u32 = 1;

/// [`HostControl::abort`] as the host writes it: the host asked the run to
/// stop (a watchdog, a drop, a user's abort). A PE that sees it with no
/// error of its own records `ErrorCode::HostAbort`.
pub const ABORT_BY_HOST: u32 = 1;

/// [`HostControl::abort`] as a PE writes it when it raises abort after
/// recording an error (its own word and its peers'): a consequence of that
/// error, never recorded as `HostAbort` (which would hide the cause when
/// two GPUs' clocks order the records).
pub const ABORT_BY_PE: u32 = 2;

/// Blocks that share one wake word ([`RunParams::wake`]).
pub const WAKE_GROUP: u32 = 32;

/// Distance between two wake words, in `u32`s (128 bytes: a word per L2
/// line, so a group's polls touch only its own line).
pub const WAKE_STRIDE: u32 = 32;

/// Tasks comm block 0 looks at per progress publish when it sweeps the
/// PE's tasks for [`HostControl::iterations_done`].
pub const PROGRESS_SWEEP_TASKS: u32 = 32;

/// [`TraceRecord::kind_block`] of an event of `kind` recorded by `block`.
#[inline]
pub const fn trace_kind_block(kind: TraceKind, block: u32) -> u32 {
    (kind as u32) | (block << 8)
}

/// `(kind, block)` of a [`TraceRecord::kind_block`] (the kind as stored: it
/// may not be a valid [`TraceKind`] in a corrupt record).
#[inline]
pub const fn trace_kind_block_parts(word: u32) -> (u32, u32) {
    (word & 0xff, word >> 8)
}

/// The awaited-word id of a wait in traces ([`TraceKind::WaitBegin`]'s
/// `arg`): the [`WaitKind`] in the high 32 bits, its index in the low.
#[inline]
pub const fn trace_wait_word(kind: WaitKind, index: u32) -> u64 {
    ((kind as u64) << 32) | index as u64
}

/// Records (of 32 bytes) one PE's trace area holds for `blocks` blocks with
/// `cap` records per ring: one header and `cap` records per block.
#[inline]
pub const fn trace_area_records(blocks: u32, cap: u32) -> usize {
    blocks as usize * (cap as usize + 1)
}

/// The per-task state word `(claimed << 32) | done`.
///
/// `done` = instances completed; `claimed` = instances claimed. Both only
/// increase. `claimed == done` when no instance is in flight, `claimed ==
/// done + 1` while one is queued or running (never more: every instance runs
/// after the previous instance of the same task).
#[inline]
pub const fn state_word(claimed: u32, done: u32) -> u64 {
    ((claimed as u64) << 32) | done as u64
}

/// `(claimed, done)` of a state word.
#[inline]
pub const fn state_parts(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// Bit 31 of a state word's `claimed` half: the word is a pinned task's,
/// and the rest of that half is the run's limit as the publishing block
/// knew it ([`pinned_state_word`]). Nobody claims a pinned task, so its
/// `claimed` half is free to carry that: a pinned consumer takes the limit
/// from its predecessors' words, which it polls anyway, instead of reading
/// `Status::limit` after every acquire (an L2 round trip on every hop of a
/// run that may stop early). Iterations are below 2³¹
/// ([`MAX_ITERATIONS`]), so a limit fits beside the bit.
pub const STATE_LIMIT_CARRIED: u32 = 1 << 31;

/// A pinned task's state word after `done` instances, carrying `limit`,
/// the limit its block knew at the publish: the lowest of what its own
/// bodies set (`finish_at`), what its predecessors' words carried, and
/// what it read of `Status::limit` when a predecessor's word carried
/// nothing.
#[inline]
pub const fn pinned_state_word(done: u32, limit: u32) -> u64 {
    state_word(STATE_LIMIT_CARRIED | limit, done)
}

/// The limit a state word carries ([`pinned_state_word`]), or 0 when it
/// carries none (a dynamic task's word, a proxy, a pinned task's word
/// before its first publish): the reader must read `Status::limit` then.
/// A carried limit is never 0 (`finish_at` sets at least the stopping
/// instance's iteration + 1).
#[inline]
pub const fn state_carried_limit(word: u64) -> u32 {
    let claimed = (word >> 32) as u32;
    if claimed & STATE_LIMIT_CARRIED != 0 {
        claimed & !STATE_LIMIT_CARRIED
    } else {
        0
    }
}

/// Arrival slots a 64-bit word holds: slot `j` of a counted task is a
/// 16-bit count, field `j % SLOT_FIELDS` of word `j / SLOT_FIELDS` of the
/// task's slots ([`slot_word`], [`slot_shift`]). An input's batch of
/// arrivals then adds to a quarter as many words (one RMW a word, several
/// fields at once), and the thousand inputs of a wide join queue a quarter
/// as many RMWs at each word. A count never exceeds its task's
/// `pred_count`, which slots require to be at most [`SLOT_MAX_COUNT`], so
/// no field carries into the next.
pub const SLOT_FIELDS: u32 = 4;

/// Largest predecessor count of a task counted with arrival slots (the
/// field's width); a run with a wider counted task counts with one counter.
pub const SLOT_MAX_COUNT: u32 = 0xffff;

/// Word of slot `j` in its task's slot words.
#[inline]
pub const fn slot_word(j: u32) -> u64 {
    (j / SLOT_FIELDS) as u64
}

/// Bit offset of slot `j`'s field in its word.
#[inline]
pub const fn slot_shift(j: u32) -> u32 {
    (j % SLOT_FIELDS) * 16
}

/// Slot `j`'s count in `word` (its word, as read).
#[inline]
pub const fn slot_count(word: u64, j: u32) -> u32 {
    ((word >> slot_shift(j)) & 0xffff) as u32
}

/// What adds one arrival to each of slots `first .. first + k` that lie
/// in word [`slot_word`]`(first)` (those up to the word's end; `k` ≥ 1).
#[inline]
pub const fn slot_add_mask(first: u32, k: u32) -> u64 {
    let lo = first % SLOT_FIELDS;
    let n = if k < SLOT_FIELDS - lo {
        k
    } else {
        SLOT_FIELDS - lo
    };
    (0x0001_0001_0001_0001u64 >> (16 * (SLOT_FIELDS - n))) << (16 * lo)
}

/// Smallest predecessor count of a *counted* task by default
/// ([`RunParams::counted_fan_in`]): tasks with more predecessors than the
/// eight a completion checks one by one.
pub const COUNTED_FAN_IN_DEFAULT: u32 = 9;

/// Arrivals a counted task must have seen before instance `n` can be ready:
/// a lower bound of `Σ_e max(0, n + 1 - distance_e)` over its `pred_count`
/// predecessor edges, whose distances sum to `pred_distance_sum` (exact
/// once `n + 1` reaches the largest distance). Every predecessor instance
/// adds one arrival per edge it has to the task, so a counter below this
/// value proves that some instance `n` needs has not arrived yet.
#[inline]
pub const fn arrivals_needed(pred_count: u32, pred_distance_sum: u32, n: u32) -> u64 {
    (pred_count as u64 * (n as u64 + 1)).saturating_sub(pred_distance_sum as u64)
}

/// A ready-queue slot word `(seq << 32) | task` ([`QueueSlot::word`]).
#[inline]
pub const fn queue_slot_word(seq: u32, task: u32) -> u64 {
    ((seq as u64) << 32) | task as u64
}

/// `(seq, task)` of a queue slot word.
#[inline]
pub const fn queue_slot_parts(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// Slot `i` of a ring of `capacity` seeded with `roots` (instance 0 each,
/// already claimed), as if they had been pushed with tickets `0..roots.len()`
/// before the launch: slot `k < roots.len()` holds `roots[k]` with
/// `seq = k + 1`; every other slot is free for push ticket `i` (`seq = i`).
/// Both backends seed their rings with this function.
pub fn seeded_queue_slot(i: u32, roots: &[u32]) -> QueueSlot {
    match roots.get(i as usize) {
        Some(&task) => QueueSlot {
            word: queue_slot_word(i + 1, task),
            iteration: 0,
            _pad: 0,
        },
        None => QueueSlot {
            word: queue_slot_word(i, 0),
            iteration: 0,
            _pad: 0,
        },
    }
}

/// The control words of a ring seeded with `roots` roots: the next push
/// ticket follows them.
pub fn seeded_queue_ctl(roots: usize) -> QueueCtl {
    QueueCtl {
        tail: roots as u32,
        ..bytemuck::Zeroable::zeroed()
    }
}

/// The status record a run starts from: no error, no task, `start_ns` at
/// its maximum (blocks take the minimum), `limit` = the run's iterations.
pub fn initial_status(iterations: u32) -> Status {
    Status {
        task: TASK_NONE,
        start_ns: u64::MAX,
        limit: iterations,
        ..bytemuck::Zeroable::zeroed()
    }
}

/// Every ABI struct, for the header generator and the layout probe.
#[macro_export]
macro_rules! for_each_abi_struct {
    ($m:ident) => {
        $m!(TaskDesc);
        $m!(Edge);
        $m!(RemoteOut);
        $m!(QueueCtl);
        $m!(QueueSlot);
        $m!(Status);
        $m!(HostControl);
        $m!(BlockStats);
        $m!(TraceRecord);
        $m!(TraceRingHeader);
        $m!(RunParams);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed slots: each slot has its own field, and an add mask adds one
    /// to exactly the slots it names in the first one's word.
    #[test]
    fn packed_slots_have_a_field_each_and_masks_add_one_to_each_named() {
        let mut seen = [[false; 4]; 16];
        for j in 0..64u32 {
            assert!(slot_shift(j) < 64 && slot_shift(j) % 16 == 0);
            let at = &mut seen[slot_word(j) as usize][(slot_shift(j) / 16) as usize];
            assert!(!*at, "slot {j}");
            *at = true;
        }
        for first in 0..12u32 {
            for k in 1..20u32 {
                let m = slot_add_mask(first, k);
                let word = slot_word(first);
                let end = (word + 1) * SLOT_FIELDS as u64;
                for j in 0..64u32 {
                    let want = u32::from(
                        j >= first && (j as u64) < end && j < first + k && slot_word(j) == word,
                    );
                    let got = if slot_word(j) == word {
                        slot_count(m, j)
                    } else {
                        0
                    };
                    assert_eq!(got, want, "first {first} k {k} slot {j}");
                }
            }
        }
        // Counts up to the largest never reach the next field.
        let full = (SLOT_MAX_COUNT as u64) << slot_shift(1);
        assert_eq!(slot_count(full, 1), SLOT_MAX_COUNT);
        assert_eq!(slot_count(full, 0), 0);
        assert_eq!(slot_count(full, 2), 0);
    }

    #[test]
    fn field_tables_cover_every_byte_exactly_once() {
        fn check<T: AbiStruct>() {
            let mut covered = 0;
            for f in T::FIELDS {
                assert_eq!(f.offset, covered, "{}.{} leaves a hole", T::NAME, f.name);
                covered += f.size;
            }
            assert_eq!(covered, T::SIZE, "{} has trailing padding", T::NAME);
        }
        macro_rules! c {
            ($t:ident) => {
                check::<$t>()
            };
        }
        for_each_abi_struct!(c);
    }

    #[test]
    fn seeded_queue_holds_the_roots_then_free_slots() {
        let roots = [5, 9];
        assert_eq!(queue_slot_parts(seeded_queue_slot(0, &roots).word), (1, 5));
        assert_eq!(queue_slot_parts(seeded_queue_slot(1, &roots).word), (2, 9));
        assert_eq!(queue_slot_parts(seeded_queue_slot(2, &roots).word), (2, 0));
        assert_eq!(seeded_queue_ctl(2).tail, 2);
        assert_eq!(initial_status(7).limit, 7);
    }

    #[test]
    fn state_word_round_trips() {
        assert_eq!(state_parts(state_word(7, 6)), (7, 6));
        assert_eq!(state_parts(state_word(u32::MAX, 0)), (u32::MAX, 0));
    }

    #[test]
    fn enums_round_trip() {
        for &(_, v, _) in ErrorCode::VARIANTS {
            assert_eq!(ErrorCode::from_u32(v).map(u32::from), Some(v));
        }
        assert_eq!(ErrorCode::from_u32(999), None);
        for &(_, v, _) in TraceKind::VARIANTS {
            assert_eq!(TraceKind::from_u32(v).map(u32::from), Some(v));
            assert!(v < 256, "trace kinds fit kind_block's low byte");
        }
    }

    #[test]
    fn trace_kind_block_round_trips_and_wait_words_keep_their_kind() {
        let w = trace_kind_block(TraceKind::SignalSeen, 0x00ab_cdef);
        assert_eq!(trace_kind_block_parts(w), (6, 0x00ab_cdef));
        assert_eq!(
            trace_wait_word(WaitKind::QueueItem, 7),
            (1 << 32) | 7,
            "kind in the high word, index in the low"
        );
        assert_eq!(trace_area_records(3, 4), 15);
    }
}
