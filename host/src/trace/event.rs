//! One trace record: what happened, where (PE, block, role) and when.

use serde::{Deserialize, Serialize};

/// The role of the block that recorded an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A comm block: progress, watchdog, halo pulses, signals.
    Comm,
    /// A compute block: pops ready task instances and runs them.
    Compute,
}

impl Role {
    /// `"comm"` or `"compute"`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Comm => "comm",
            Role::Compute => "compute",
        }
    }
}

/// What an event records. Begin/end kinds pair up per (PE, block): a
/// `TaskStart` with the next `TaskEnd` of the same task and iteration, a
/// `WaitBegin` with the next `WaitEnd` of the same awaited word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A task instance's body starts (`arg` unused, 0).
    TaskStart,
    /// A task instance's body ended (`arg` unused, 0).
    TaskEnd,
    /// The block starts waiting for a word; `arg` = the awaited signal or
    /// word id.
    WaitBegin,
    /// The wait for word `arg` ended (the word reached its value, or the
    /// wait gave up).
    WaitEnd,
    /// The block sent signal `arg` to PE `to_pe`.
    SignalSent {
        /// Destination PE.
        to_pe: u32,
    },
    /// The block saw signal `arg` (sent from any PE) reach the value it
    /// waited for.
    SignalSeen,
    /// A halo pulse was packed (`arg`: pulse id).
    PulsePack,
    /// A halo pulse was put to its destination (`arg`: pulse id).
    PulsePut,
}

impl EventKind {
    /// A short name for display (`"task_start"`, …).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::TaskStart => "task_start",
            EventKind::TaskEnd => "task_end",
            EventKind::WaitBegin => "wait_begin",
            EventKind::WaitEnd => "wait_end",
            EventKind::SignalSent { .. } => "signal_sent",
            EventKind::SignalSeen => "signal_seen",
            EventKind::PulsePack => "pulse_pack",
            EventKind::PulsePut => "pulse_put",
        }
    }
}

/// One event as recorded by a block (device trace ring, emulator worker or
/// a host-side recorder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Time in nanoseconds on the recorder's clock (`%globaltimer` on the
    /// device; a monotonic host clock elsewhere). Only differences matter.
    pub t_ns: u64,
    /// PE that recorded it.
    pub pe: u32,
    /// Block (or emulator worker) that recorded it.
    pub block: u32,
    /// That block's role.
    pub role: Role,
    /// Task involved (the running task for waits and signals).
    pub task: u32,
    /// Iteration involved.
    pub iteration: u32,
    /// What happened.
    pub kind: EventKind,
    /// Kind-specific argument (see [`EventKind`]).
    pub arg: u64,
}
