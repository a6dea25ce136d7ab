//! The runtime's error type: one variant per cause a user can act on.

use crate::graph::GraphError;

/// Everything that can go wrong in autarky, from bad input to a device
/// that timed out.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable CUDA driver or GPU.
    #[error("no GPU available: {reason}")]
    NoGpu {
        /// What was missing, and where we looked.
        reason: String,
    },
    /// libnvrtc could not be found.
    #[error("NVRTC (libnvrtc.so.13) not found; looked in: {}. Install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc==13.0.88` and set AUTARKY_NVRTC_DIR to its site-packages/nvidia/cu13/lib", .looked.join(", "))]
    NvrtcNotFound {
        /// Every path tried.
        looked: Vec<String>,
    },
    /// NVRTC rejected the megakernel source.
    #[error("NVRTC failed to compile the megakernel (options: {}):\n{log}", .options.join(" "))]
    Nvrtc {
        /// The compile log, verbatim.
        log: String,
        /// The options passed to NVRTC.
        options: Vec<String>,
    },
    /// A piece the NVSHMEM transport needs at run time (NVSHMEM itself,
    /// nvJitLink, or the CUDA headers NVSHMEM's device headers include) was
    /// not found.
    #[cfg(feature = "nvshmem")]
    #[error("{part} not found; looked in: {}. {install}", .looked.join(", "))]
    NvshmemNotFound {
        /// What is missing, e.g. `"NVSHMEM (libnvshmem_host.so.3)"`.
        part: &'static str,
        /// Every path tried, with why each was passed over.
        looked: Vec<String>,
        /// How to get it.
        install: &'static str,
    },
    /// nvJitLink failed to link the megakernel with NVSHMEM's device library.
    #[cfg(feature = "nvshmem")]
    #[error("nvJitLink failed to link the megakernel with NVSHMEM's device library (options: {}):\n{log}", .options.join(" "))]
    NvJitLink {
        /// nvJitLink's error log (or the failing call), verbatim.
        log: String,
        /// The options passed to nvJitLink.
        options: Vec<String>,
    },
    /// An NVSHMEM host call failed.
    #[cfg(feature = "nvshmem")]
    #[error("NVSHMEM call {call} failed: {reason}")]
    Nvshmem {
        /// The NVSHMEM function.
        call: &'static str,
        /// Its return code and what it means, or what was wrong.
        reason: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver call {call} failed: {name} ({code})")]
    Driver {
        /// The driver function.
        call: &'static str,
        /// `CUresult` value.
        code: u32,
        /// Its name from the driver.
        name: String,
    },
    /// The requested grid cannot be co-resident, so a cooperative launch would fail.
    #[error("{wanted} blocks of {threads} threads cannot be co-resident: {per_sm} per SM × {sms} SMs = {fits}")]
    NotCoResident {
        /// Blocks asked for.
        wanted: u32,
        /// Threads per block of the megakernel (the runtime's, or the
        /// graph's own: [`crate::Graph::set_threads_per_block`]); the
        /// blocks that fit depend on it.
        threads: u32,
        /// Blocks that fit.
        fits: u32,
        /// Occupancy per SM.
        per_sm: u32,
        /// SMs on the device.
        sms: u32,
    },
    /// The graph failed validation.
    #[error("invalid graph: {0}")]
    InvalidGraph(#[from] GraphError),
    /// A runtime or run option is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// The backend does not support this option or call.
    #[error("{option} is not supported by the {backend} backend: {reason}")]
    Unsupported {
        /// `"gpu"` or `"emulator"`.
        backend: &'static str,
        /// The option or call, e.g. `RunOptions::watchdog`.
        option: &'static str,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A bounded wait on the device ran past its deadline.
    #[error("device timeout on PE {pe}, block {block} ({role}): {waiting_for} — seen {seen}, wanted {wanted}; task {task}, iteration {iteration}{report}")]
    DeviceTimeout {
        /// PE of the block that gave up.
        pe: u32,
        /// Block index.
        block: u32,
        /// Its role.
        role: String,
        /// Task involved (label), or "none".
        task: String,
        /// Iteration involved.
        iteration: u32,
        /// What the block waited for, in words.
        waiting_for: String,
        /// Value of the awaited word at the deadline.
        seen: u64,
        /// Value it wanted.
        wanted: u64,
        /// The deadlock report: every unfinished task and what it waits on.
        report: String,
    },
    /// A task body reported failure through `ctx.fail(code)`.
    #[error("task {task} failed on PE {pe}, iteration {iteration}, with code {code}")]
    TaskFailed {
        /// PE.
        pe: u32,
        /// Task label.
        task: String,
        /// Iteration.
        iteration: u32,
        /// Code passed to `fail`.
        code: u64,
    },
    /// A body called `finish_at` but its kind was not declared
    /// `TaskKind::may_finish_early()` (both backends; the failure code
    /// [`crate::CpuCtx::FINISH_UNDECLARED`]).
    #[error(
        "task {task} called finish_at on PE {pe}, iteration {iteration}, but its kind was not \
         declared TaskKind::may_finish_early(): declare it (the runtime then reads the run's \
         limit where such kinds run)"
    )]
    FinishUndeclared {
        /// PE.
        pe: u32,
        /// Task label.
        task: String,
        /// Iteration.
        iteration: u32,
    },
    /// A CPU body (emulator) returned a buffer access refusal with `?`
    /// ([`BufferAccessError::CODE`](crate::runtime::BufferAccessError::CODE)):
    /// the refusal says which access and why.
    #[error("task {task} failed on PE {pe}, iteration {iteration}: {refusal}")]
    TaskBufferAccess {
        /// PE.
        pe: u32,
        /// Task label.
        task: String,
        /// Iteration.
        iteration: u32,
        /// The refused access.
        refusal: crate::runtime::BufferAccessError,
    },
    /// A task whose kind asks for finite outputs wrote NaN or Inf.
    #[error("task {task} wrote a non-finite value on PE {pe}, iteration {iteration}, at element {index}")]
    NonFinite {
        /// PE.
        pe: u32,
        /// Task label.
        task: String,
        /// Iteration.
        iteration: u32,
        /// Element index reported by the check.
        index: u64,
    },
    /// The device saw a task kind it was not compiled with.
    #[error("task {task} on PE {pe} has kind {kind}, which the megakernel was not compiled with")]
    UnknownTaskKind {
        /// PE.
        pe: u32,
        /// Task label.
        task: String,
        /// The kind index found in the table.
        kind: u64,
    },
    /// Host and kernel disagree on the ABI version.
    #[error("ABI mismatch: the host speaks version {host}, the kernel was compiled for {kernel}")]
    AbiMismatch {
        /// Host's version.
        host: u32,
        /// Kernel's version.
        kernel: u32,
    },
    /// The run was aborted from the host (watchdog or user).
    #[error("run aborted by the host on PE {pe}: {reason}{report}")]
    Aborted {
        /// PE.
        pe: u32,
        /// Why.
        reason: String,
        /// The deadlock report at abort time.
        report: String,
    },
    /// The kernel did not stop after abort was raised.
    #[error("the megakernel on PE {pe} did not stop within {waited_ms} ms of abort; the GPU context is unusable: {report}")]
    Unstoppable {
        /// PE.
        pe: u32,
        /// How long the host waited.
        waited_ms: u64,
        /// What was known.
        report: String,
    },
    /// An earlier megakernel on this GPU never stopped (see
    /// [`Error::Unstoppable`]) and is still running: a cooperative launch
    /// would wait behind it, so no new run starts until it ends.
    #[error("GPU {device}: an earlier megakernel that did not stop after abort is still running; no run can start until it ends (a body stuck in a loop that never checks abort: restart the process)")]
    GpuStuck {
        /// Device ordinal.
        device: i32,
    },
    /// A device-side error code the host does not know (ABI drift).
    #[error("device reported unknown error code {code} on PE {pe}")]
    UnknownDeviceError {
        /// PE.
        pe: u32,
        /// Raw code.
        code: u32,
    },
    /// A task kind has no CPU body, so the emulator cannot run it.
    #[error("task kind `{kind}` has no CPU body (TaskKind::with_cpu); the emulator cannot run it")]
    NoCpuBody {
        /// Kind name.
        kind: String,
    },
    /// The host could not give memory the emulator needed (a buffer, or a
    /// PE's symmetric heap). A GPU's own out-of-memory is a
    /// [`Error::Driver`] error.
    #[error("could not allocate {bytes} bytes of host memory for {what}")]
    HostMemory {
        /// Bytes asked for.
        bytes: usize,
        /// What for, with the knob that sizes it.
        what: String,
    },
    /// A buffer copy with the wrong number of elements.
    #[error("Buffer::{op}: {got} elements for a buffer of {len}")]
    BufferSize {
        /// The method.
        op: &'static str,
        /// Elements in the buffer.
        len: usize,
        /// Elements given.
        got: usize,
    },
    /// An emulator buffer access was refused (outside a live buffer,
    /// misaligned, or racing with another access).
    #[error(transparent)]
    BufferAccess(#[from] crate::runtime::BufferAccessError),
    /// The ranks of a multi-process run ([`crate::Transport::MpiIpc`])
    /// disagree: on the runtime configuration, the GPU model, the graph
    /// or the run options. Every rank reports the same disagreement.
    #[error("the MPI ranks disagree on {what}: {detail}; every rank must build the runtime with the same configuration and run the same graph with the same options, collectively")]
    RanksDisagree {
        /// What they disagree on (`"the configuration"`, `"the graph"`, …).
        what: String,
        /// Which rank has what.
        detail: String,
    },
    /// Another rank of a multi-process run failed where this one did not
    /// (booting its GPU, allocating its memory): every rank reports it.
    #[error("MPI rank {rank} failed: {error}")]
    RankFailed {
        /// The failing rank.
        rank: u32,
        /// Its error, as it printed it.
        error: String,
    },
    /// A multi-process exchange did not complete in time: a rank died, is
    /// stuck, or runs a different program. The MPI job cannot continue:
    /// end every rank.
    #[error("MPI exchange `{what}` did not complete within {waited_ms} ms: not every one of the {ranks} ranks arrived (a rank died, hung, or runs different code); end the job")]
    RankTimeout {
        /// The exchange (`"run start"`, `"barrier"`, …; the end of a
        /// run's `"run status"` is reported as [`Error::RankLost`]).
        what: String,
        /// How long this rank waited.
        waited_ms: u64,
        /// Ranks of the job.
        ranks: u32,
    },
    /// The exchange at the end of a multi-process run (every rank's status,
    /// for the report every rank gives) did not complete: another rank died
    /// or hung during the run. `local` is how this rank's own PEs ended:
    /// typically a timeout naming the task, iteration and signal they were
    /// still waiting for from the lost rank (`None`: they finished without
    /// error). End the job.
    #[error(
        "MPI exchange `{what}` at the end of the run did not complete within {waited_ms} ms: not every one of the {ranks} ranks arrived (a rank died or hung during the run); end the job. This rank's own PEs {}",
        .local.as_ref().map_or_else(|| "finished without error".to_string(), |e| format!("ended with: {e}"))
    )]
    RankLost {
        /// The exchange (`"run status"`).
        what: String,
        /// How long this rank waited.
        waited_ms: u64,
        /// Ranks of the job.
        ranks: u32,
        /// This rank's own outcome, as its PEs recorded it.
        local: Option<Box<Error>>,
    },
    /// MPI could not be used (not initialized by us, or a call failed).
    #[error("MPI: {0}")]
    Mpi(String),
    /// File-system error (cubin cache).
    #[error("I/O error at {path}: {source}")]
    Io {
        /// Path involved.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// `Result<T, autarky::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::Error;

    /// A rank lost during a run: the message says so and carries this
    /// rank's own outcome, or says it had none.
    #[test]
    fn a_lost_rank_reports_this_ranks_own_outcome() {
        let own = Error::RankFailed {
            rank: 0,
            error: "PE 0 timed out waiting for PE 1".into(),
        };
        let with = Error::RankLost {
            what: "run status".into(),
            waited_ms: 5000,
            ranks: 2,
            local: Some(Box::new(own)),
        }
        .to_string();
        assert!(
            with.contains("`run status` at the end of the run"),
            "{with}"
        );
        assert!(
            with.contains("a rank died or hung during the run"),
            "{with}"
        );
        assert!(
            with.ends_with("This rank's own PEs ended with: MPI rank 0 failed: PE 0 timed out waiting for PE 1"),
            "{with}"
        );
        let without = Error::RankLost {
            what: "run status".into(),
            waited_ms: 5000,
            ranks: 2,
            local: None,
        }
        .to_string();
        assert!(
            without.ends_with("This rank's own PEs finished without error"),
            "{without}"
        );
    }
}
