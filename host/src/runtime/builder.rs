//! Runtime configuration: the [`Builder`] a user types knobs into, and the
//! checked [`Config`] the backends read.

use std::time::Duration;

use super::gpu::Gpu;
use super::transport::{InProcess, Transport};
use super::{Backend, Runtime};
use crate::emulator::EmulatorConfig;
use crate::{Error, Result};

/// Which backend a [`Builder`] should produce.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Want {
    /// The GPU when one is present, else the emulator (with a notice).
    Auto,
    /// The GPU or an error.
    Gpu,
    /// The CPU emulator with this many compute threads.
    Emulator(usize),
}

/// Threads per block of the megakernel unless [`Builder::threads_per_block`]
/// says otherwise (also the block size the emulator's CUDA check compiles
/// for).
pub(crate) const DEFAULT_THREADS_PER_BLOCK: u32 = 128;

/// Largest [`Builder::max_tasks`]: the ready queue's capacity is the next
/// power of two of the task count, held in a `u32`.
const MAX_TASKS_LIMIT: usize = 1 << 31;

/// Default of [`Builder::arrival_slots_max_bytes`]: 256 MiB per PE.
pub const DEFAULT_ARRIVAL_SLOTS_MAX_BYTES: u64 = 256 << 20;

/// Runtime configuration (see [`Builder`] for each knob).
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub device: u32,
    pub threads: u32,
    pub comm_blocks: u32,
    pub compute_blocks: Option<u32>,
    pub timeout: Duration,
    pub max_tasks: usize,
    /// Smallest predecessor count of a counted task ([`Builder::counted_fan_in`]).
    pub counted_fan_in: u32,
    /// Largest arrival-slot table per PE ([`Builder::arrival_slots_max_bytes`]).
    pub arrival_slots_max_bytes: u64,
    /// PEs in a run (virtual PEs on the GPU, or emulated PEs).
    pub pes: u32,
    /// GPUs of a run (devices `device .. device + gpus`); `pes` is split
    /// evenly over them.
    pub gpus: u32,
    /// Bytes of every PE's symmetric heap (reserved at the first
    /// `alloc_symmetric`).
    pub heap_bytes: usize,
    /// Emulator: compile the graph's CUDA source before running
    /// ([`EmulatorConfig::check_cuda`]).
    pub check_cuda: bool,
    /// How PEs reach each other ([`Builder::transport`]).
    pub transport: Transport,
    /// PEs of each MPI rank ([`Builder::pes_per_rank`]).
    pub pes_per_rank: u32,
    /// How long a rank waits for the others in an exchange.
    pub rank_timeout: Duration,
    /// Ranks of the job (1 in one process; set by `build`).
    pub ranks: u32,
}

impl Config {
    /// PEs in each megakernel launch (on each GPU of each rank).
    pub fn pes_per_gpu(&self) -> u32 {
        self.pes / (self.gpus.max(1) * self.ranks.max(1))
    }
}

/// Builds a [`Runtime`]. Defaults work: GPU 0 if present (else the
/// emulator), 128 threads per block, 1 comm block per PE (4 when the PEs
/// span GPUs), as many compute blocks as can be co-resident, 10 s wait
/// timeout.
#[derive(Clone, Debug)]
pub struct Builder {
    want: Want,
    cfg: Config,
    /// GPU-only knobs set explicitly, refused by an explicit emulator.
    gpu_only: Vec<&'static str>,
    /// Was [`Builder::pes`] called (refused with MPI, where PEs are ranks ×
    /// pes_per_rank)?
    pes_set: bool,
    /// Whether [`Builder::comm_blocks`] was called (else the default
    /// depends on whether the PEs span GPUs).
    comm_blocks_set: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            want: Want::Auto,
            cfg: Config {
                device: 0,
                // AUTARKY_THREADS_PER_BLOCK: the default for experiments
                // with block shape (an explicit threads_per_block wins).
                threads: std::env::var("AUTARKY_THREADS_PER_BLOCK")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(DEFAULT_THREADS_PER_BLOCK),
                comm_blocks: 1,
                pes: 1,
                gpus: 1,
                heap_bytes: 1 << 30,
                compute_blocks: None,
                timeout: Duration::from_secs(10),
                max_tasks: 1 << 24,
                counted_fan_in: autarky_shared::COUNTED_FAN_IN_DEFAULT,
                arrival_slots_max_bytes: DEFAULT_ARRIVAL_SLOTS_MAX_BYTES,
                check_cuda: true,
                transport: Transport::InProcess,
                pes_per_rank: 1,
                rank_timeout: Duration::from_secs(60),
                ranks: 1,
            },
            gpu_only: Vec::new(),
            pes_set: false,
            comm_blocks_set: false,
        }
    }
}

/// Emulator threads (all PEs') per CPU core above which building an
/// emulator runtime warns that waits may time out.
const EMULATOR_THREADS_PER_CORE: usize = 64;

/// Default [`Builder::comm_blocks`] when the PEs span GPUs: a halo pulse
/// splits into chunks over the comm blocks, and its copy across NVLink is
/// as fast as the blocks issuing its stores. Measured on two H200s
/// (session 16, µs per iteration, comm blocks 4 / 8 / 16 / 32 / 64):
/// Jacobi 3D 256³ with 2 sweeps a sync 110 / 69.5 / 52.1 / **39.2** /
/// 44.6 (one GPU: 55.9), with 1 sweep 131 / 90.5 / 69.9 / **60.2** / 65.1
/// (one GPU: 96.3); 3D 128³ (2 sweeps) 25.9 / – / 13.4 / **11.1**; 3D 512³
/// (2 sweeps) 503 / – / – / **211**; 2D 4096² (4 sweeps) 14.5 / – / 11.9 /
/// **11.6**; 2D 16384² (4 sweeps) 174 / – / 175 / 175 and 1024² 3.75 /
/// 3.78 / 3.70 / – (compute-bound or latency-bound: no difference). A GPU
/// of ~1055 blocks gives up 32 compute blocks for it (3 %). (Session 7's
/// 4 was the best of 1, 2 and 4.)
pub const MULTI_GPU_COMM_BLOCKS: u32 = 32;

impl Builder {
    /// Require the GPU backend (no emulator fallback).
    pub fn gpu(mut self) -> Self {
        self.want = Want::Gpu;
        self
    }
    /// Use the CPU emulator with `threads` compute threads (at least 1,
    /// checked by [`Builder::build`]). Each emulated block is a thread:
    /// [`Builder::comm_blocks`] sets the comm threads, and
    /// [`Builder::compute_blocks`], if set, must agree with `threads`. The
    /// GPU-only knobs ([`Builder::device`], [`Builder::threads_per_block`])
    /// are refused. The threads are per PE: a build whose PEs have more
    /// than 64 threads a CPU core between them logs a warning (waits may
    /// then time out before their thread is scheduled).
    pub fn emulator(mut self, threads: usize) -> Self {
        self.want = Want::Emulator(threads);
        self
    }
    /// CUDA device ordinal (default 0). GPU only: with
    /// [`Builder::emulator`] it is refused; when a build without a GPU
    /// falls back to the emulator it is ignored, and the fallback's notice
    /// says so.
    pub fn device(mut self, ordinal: u32) -> Self {
        self.gpu_only.push("device");
        self.cfg.device = ordinal;
        self
    }
    /// Threads per block (default 128, or `AUTARKY_THREADS_PER_BLOCK` when
    /// set): a multiple of 32 in 32..=1024, checked by [`Builder::build`].
    /// GPU only (an emulated block is one thread that runs each CPU body
    /// once): refused with [`Builder::emulator`], ignored — and said so in
    /// the notice — when a build without a GPU falls back to the emulator.
    pub fn threads_per_block(mut self, threads: u32) -> Self {
        self.gpu_only.push("threads_per_block");
        self.cfg.threads = threads;
        self
    }
    /// Blocks with the comm role per PE (at least 1: comm block 0
    /// publishes progress for the host watchdog and runs communication).
    /// Default: 1 when every PE is on one GPU, [`MULTI_GPU_COMM_BLOCKS`]
    /// when the PEs span GPUs (several GPUs, or several ranks), where
    /// halo pulses cross NVLink and split over the comm blocks. Virtual PEs
    /// of one GPU exchanging large halos want more than 1: for a Jacobi
    /// solve, [`comm_blocks_for_virtual_pes`](crate::solvers::jacobi::comm_blocks_for_virtual_pes)
    /// says how many (2 virtual PEs of a 256³ grid ran 6× faster with 16).
    pub fn comm_blocks(mut self, n: u32) -> Self {
        self.comm_blocks_set = true;
        self.cfg.comm_blocks = n;
        self
    }
    /// Blocks with the compute role (default: all that fit co-resident, or
    /// `AUTARKY_COMPUTE_BLOCKS` when set; at least 1). On the emulator,
    /// compute threads. A count given here applies to every graph, whatever
    /// its block shape ([`Graph::set_threads_per_block`](crate::Graph::set_threads_per_block)):
    /// fewer blocks of more threads fit, and a grid that does not is
    /// [`Error::NotCoResident`](crate::Error::NotCoResident), which names
    /// the shape.
    pub fn compute_blocks(mut self, n: u32) -> Self {
        self.cfg.compute_blocks = Some(n);
        self
    }
    /// Deadline of every device wait without progress (default 10 s; more
    /// than zero; at most [`MAX_TIMEOUT`](super::MAX_TIMEOUT), which
    /// `Duration::MAX` becomes).
    pub fn timeout(mut self, d: Duration) -> Self {
        self.cfg.timeout = d.min(super::MAX_TIMEOUT);
        self
    }
    /// Most tasks a graph may have: the ready queue's capacity (default
    /// 2^24; in 1..=2^31).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.cfg.max_tasks = n;
        self
    }

    /// Tasks with at least `n` predecessor edges are *counted* (default 9):
    /// each predecessor completion adds one to the task's arrival counter,
    /// and the task's predecessors are read only once the counter says they
    /// may all be done. A completion then costs O(1) per successor instead
    /// of a scan of every predecessor of the successor (a reduction over a
    /// thousand tasks costs one atomic add per input, not a thousand loads).
    /// Lower values count smaller fan-ins too (the tests use 2 to run the
    /// counted protocol on every join); at least 2.
    pub fn counted_fan_in(mut self, n: u32) -> Self {
        self.cfg.counted_fan_in = n;
        self
    }

    /// Largest table of arrival slots a GPU run gives one PE (default 256
    /// MiB). On the GPU a counted task keeps one 16-bit slot per instance
    /// of the run, four to a word: instance `j` is known ready exactly when
    /// its slot is full, so the task never reads its predecessors and runs
    /// the instances its inputs ran ahead through in a loop (a join of a
    /// thousand inputs at ~0.9 µs an iteration on an H200, against ~5 µs
    /// with one counter). A run whose table would be larger — counted
    /// tasks × iterations × 2 bytes — or with a counted task of more than
    /// 65 535 predecessor edges counts with one counter per task instead
    /// (the same results, checked by a readiness scan); 0 always does.
    pub fn arrival_slots_max_bytes(mut self, bytes: u64) -> Self {
        self.cfg.arrival_slots_max_bytes = bytes;
        self
    }

    /// Comm blocks per PE the runtime will have: as set, else 1 on one
    /// GPU and [`MULTI_GPU_COMM_BLOCKS`] when the PEs span GPUs.
    fn effective_comm_blocks(&self) -> u32 {
        if self.comm_blocks_set {
            self.cfg.comm_blocks
        } else if self.cfg.gpus > 1 || self.cfg.transport.is_multi_process() {
            MULTI_GPU_COMM_BLOCKS
        } else {
            1
        }
    }

    /// Every knob in range, or [`Error::InvalidConfig`] naming the knob.
    fn check(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::InvalidConfig(msg));
        let c = &self.cfg;
        if !(32..=1024).contains(&c.threads) || c.threads % 32 != 0 {
            // Name where the value came from when it was the environment.
            let from_env = !self.gpu_only.contains(&"threads_per_block")
                && std::env::var("AUTARKY_THREADS_PER_BLOCK").is_ok();
            return bad(format!(
                "threads_per_block must be a multiple of 32 in 32..=1024, got {}{}",
                c.threads,
                if from_env {
                    " (from AUTARKY_THREADS_PER_BLOCK)"
                } else {
                    ""
                }
            ));
        }
        if c.comm_blocks == 0 {
            return bad(
                "comm_blocks must be at least 1: at least one comm block is needed — it publishes progress and runs communication"
                    .into(),
            );
        }
        if c.compute_blocks == Some(0) {
            return bad("compute_blocks must be at least 1: compute blocks run the tasks".into());
        }
        if c.timeout.is_zero() {
            return bad("timeout must be more than zero: it is the deadline of every device wait without progress".into());
        }
        if c.max_tasks == 0 || c.max_tasks > MAX_TASKS_LIMIT {
            return bad(format!(
                "max_tasks must be in 1..={MAX_TASKS_LIMIT} (the ready queue's capacity, a 32-bit power of two), got {}",
                c.max_tasks
            ));
        }
        if c.counted_fan_in < 2 {
            return bad(format!(
                "counted_fan_in must be at least 2 (a task with one predecessor edge is claimed by that predecessor without a check), got {}",
                c.counted_fan_in
            ));
        }
        if self.want == Want::Emulator(0) {
            return bad(
                "emulator threads must be at least 1: compute threads run the tasks".into(),
            );
        }
        Ok(())
    }

    /// Processing elements of every run (default 1). On one GPU they are
    /// *virtual PEs*: each gets its own partition of the megakernel's blocks
    /// (`comm_blocks` + compute blocks each), its own task tables, ready
    /// queues, progress words and symmetric heap, and reaches its peers
    /// through the same peer-pointer path as GPUs do. At most
    /// `autarky::abi::MAX_LOCAL_PES` (16) per GPU.
    pub fn pes(mut self, n: u32) -> Self {
        self.pes_set = true;
        self.cfg.pes = n;
        self
    }

    /// GPUs of every run (default 1): devices `device .. device + n` of this
    /// process, one megakernel each, launched before the host waits on any;
    /// the PEs ([`Builder::pes`]) are split evenly over them, and every pair
    /// of GPUs must be peers (direct loads and stores, e.g. over NVLink).
    /// GPU only.
    pub fn gpus(mut self, n: u32) -> Self {
        self.cfg.gpus = n;
        self
    }

    /// Whether the emulator compiles each graph's CUDA source with NVRTC
    /// before running it (default `true`), so that a body that would not
    /// compile on the GPU fails on the emulator too, with the same
    /// [`Error::Nvrtc`]. Without NVRTC installed, or for a graph whose
    /// kinds all have empty source, nothing is checked either way. Turn it
    /// off for graphs whose kinds have CPU bodies only but carry source
    /// that does not compile. The GPU backend always compiles the source
    /// (it runs it), so this setting does not change a GPU run.
    pub fn check_cuda(mut self, check: bool) -> Self {
        self.cfg.check_cuda = check;
        self
    }

    /// Bytes of every PE's symmetric heap (default 1 GiB), reserved at the
    /// first [`Runtime::alloc_symmetric`].
    pub fn symmetric_heap_bytes(mut self, bytes: usize) -> Self {
        self.cfg.heap_bytes = bytes;
        self
    }

    /// How the PEs of a run reach each other (default
    /// [`Transport::InProcess`]). [`Transport::MpiIpc`] makes this process
    /// one rank of an `mpirun` job (needs the `mpi` cargo feature): the
    /// run's PEs are `ranks × pes_per_rank`, this rank hosts PEs `rank ×
    /// pes_per_rank ..` on GPU `node-local rank mod visible GPUs`, and
    /// `build()` is collective: every rank must build with the same
    /// configuration (checked: a mismatch fails every rank with
    /// [`Error::RanksDisagree`]). [`Builder::pes`], [`Builder::gpus`] above
    /// 1, [`Builder::device`] and the emulator are refused with it.
    /// [`Transport::Nvshmem`] is the same kind of job with one PE per rank
    /// and peers reached through NVSHMEM (needs the `nvshmem` cargo
    /// feature; `build()` also initialises NVSHMEM, collectively).
    pub fn transport(mut self, t: Transport) -> Self {
        self.cfg.transport = t;
        self
    }

    /// PEs of each rank with [`Transport::MpiIpc`] (default 1; virtual PEs
    /// of the rank's megakernel). Ignored in one process.
    pub fn pes_per_rank(mut self, n: u32) -> Self {
        self.cfg.pes_per_rank = n;
        self
    }

    /// How long a rank waits for the others at a collective step with
    /// [`Transport::MpiIpc`] (default 60 s; more than zero): the build, the
    /// first `alloc_symmetric`, the start and the end of every run. A rank
    /// that died or never arrives ends the others with
    /// [`Error::RankTimeout`] after this ([`Error::RankLost`] at the end of a
    /// run, with the surviving rank's own record). It must cover the slowest rank's
    /// megakernel compilation (first run of a graph) and the difference
    /// between the ranks' run ends. At most
    /// [`MAX_TIMEOUT`](super::MAX_TIMEOUT).
    pub fn rank_timeout(mut self, d: Duration) -> Self {
        self.cfg.rank_timeout = d.min(super::MAX_TIMEOUT);
        self
    }

    /// Boots the backend: for the GPU, loads the driver and retains the
    /// device's context; the megakernel is compiled per graph at launch.
    ///
    /// Errors: [`Error::InvalidConfig`] naming the knob when one is out of
    /// range (before anything is booted); [`Error::NoGpu`] from
    /// [`Builder::gpu`] without a usable GPU; driver errors while booting.
    pub fn build(mut self) -> Result<Runtime> {
        self.cfg.comm_blocks = self.effective_comm_blocks();
        self.check()?;
        if self.cfg.transport == Transport::Nvshmem && !cfg!(feature = "nvshmem") {
            self.check_mpi()?;
            return Err(Error::Unsupported {
                backend: "gpu",
                option: "Transport::Nvshmem",
                reason: "this autarky was built without NVSHMEM support; rebuild with `--features nvshmem` (implies `mpi`: needs an MPI to build; NVSHMEM itself is found at run time)".into(),
            });
        }
        if self.cfg.transport.is_multi_process() {
            return self.build_mpi();
        }
        let gpus = self.cfg.gpus;
        if gpus == 0 {
            return Err(Error::InvalidConfig("gpus must be at least 1".into()));
        }
        if gpus > 1 && matches!(self.want, Want::Emulator(_)) {
            return Err(Error::Unsupported {
                backend: "emulator",
                option: "Builder::gpus",
                reason: "the emulator has no GPUs; use Builder::pes for several PEs".into(),
            });
        }
        if self.cfg.pes == 0
            || self.cfg.pes % gpus != 0
            || self.cfg.pes / gpus > autarky_shared::MAX_LOCAL_PES
        {
            return Err(Error::InvalidConfig(format!(
                "pes must be a multiple of gpus ({gpus}) with at most {} PEs per GPU, got {}",
                autarky_shared::MAX_LOCAL_PES,
                self.cfg.pes
            )));
        }
        match self.want {
            Want::Emulator(threads) => {
                if let Some(&knob) = self.gpu_only.first() {
                    return Err(Error::Unsupported {
                        backend: "emulator",
                        option: knob,
                        reason: "it configures the GPU; the emulator has no device and runs each CPU body once per instance".into(),
                    });
                }
                if let Some(c) = self.cfg.compute_blocks.filter(|&c| c as usize != threads) {
                    return Err(Error::InvalidConfig(format!(
                        "compute_blocks ({c}) and emulator({threads}) disagree: each emulated compute block is a thread; set one of them"
                    )));
                }
                Ok(self.into_emulator(threads))
            }
            Want::Gpu => Ok(Runtime {
                backend: Backend::Gpu(Box::new(Gpu::boot(&self.cfg)?)),
                cfg: self.cfg,
                heap: Default::default(),
                peers: std::sync::Arc::new(InProcess),
            }),
            Want::Auto => match Gpu::boot(&self.cfg) {
                Ok(g) => Ok(Runtime {
                    backend: Backend::Gpu(Box::new(g)),
                    cfg: self.cfg,
                    heap: Default::default(),
                    peers: std::sync::Arc::new(InProcess),
                }),
                Err(Error::NoGpu { reason }) if self.cfg.gpus > 1 => Err(Error::NoGpu { reason }),
                Err(Error::NoGpu { reason }) => {
                    let threads = match self.cfg.compute_blocks {
                        Some(c) => c as usize,
                        None => std::thread::available_parallelism()
                            .map_or(2, |n| n.get())
                            .max(2),
                    };
                    let ignored = if self.gpu_only.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (ignoring {}, which configure{} a GPU)",
                            self.gpu_only
                                .iter()
                                .map(|k| format!("Builder::{k}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            if self.gpu_only.len() == 1 { "s" } else { "" }
                        )
                    };
                    tracing::info!(
                        "autarky: no GPU ({}); running on the CPU emulator with {threads} threads{ignored}",
                        super::gpu::short_reason(&reason)
                    );
                    Ok(self.into_emulator(threads))
                }
                Err(e) => Err(e),
            },
        }
    }

    /// The emulator backend: `compute` compute threads, one comm thread per
    /// comm block, the runtime's timeout.
    fn into_emulator(self, compute: usize) -> Runtime {
        // Every PE has its own threads. Far more than the machine's cores
        // and a waiting thread may not get the CPU before its wait's
        // deadline: the run then ends in a timeout that reads like a
        // deadlock (16 PEs × 1024 threads on 2 cores did).
        let per_pe = compute + self.cfg.comm_blocks as usize;
        let total = per_pe * self.cfg.pes as usize;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if total > EMULATOR_THREADS_PER_CORE * cores {
            tracing::warn!(
                "the emulator runs {total} threads ({} PE{} × {per_pe}) on {cores} core{}: a wait may reach its {:?} timeout before its thread gets the CPU; use fewer threads per PE (they are per PE) or a longer timeout",
                self.cfg.pes,
                if self.cfg.pes == 1 { "" } else { "s" },
                if cores == 1 { "" } else { "s" },
                self.cfg.timeout
            );
        }
        Runtime {
            backend: Backend::Emulator(EmulatorConfig {
                compute_threads: compute,
                comm_threads: self.cfg.comm_blocks as usize,
                timeout: self.cfg.timeout,
                hold_task: None,
                trace: None,
                check_cuda: self.cfg.check_cuda,
                counted_fan_in: self.cfg.counted_fan_in,
                arrival_slots_max_bytes: self.cfg.arrival_slots_max_bytes,
            }),
            cfg: self.cfg,
            heap: Default::default(),
            peers: std::sync::Arc::new(InProcess),
        }
    }

    /// What [`Transport::MpiIpc`] and [`Transport::Nvshmem`] refuse, before
    /// MPI is touched.
    fn check_mpi(&self) -> Result<()> {
        let c = &self.cfg;
        let refuse = |option: &'static str, reason: &str| {
            Err(Error::Unsupported {
                backend: "mpi",
                option,
                reason: reason.into(),
            })
        };
        if matches!(self.want, Want::Emulator(_)) {
            return refuse(
                "Builder::emulator",
                "the emulator runs every PE in this process; use Transport::InProcess",
            );
        }
        if self.pes_set {
            return refuse(
                "Builder::pes",
                "with Transport::MpiIpc the PEs are ranks × pes_per_rank; set Builder::pes_per_rank",
            );
        }
        if c.gpus != 1 {
            return refuse(
                "Builder::gpus",
                "each rank takes one GPU; start one rank per GPU",
            );
        }
        if self.gpu_only.contains(&"device") {
            return refuse(
                "Builder::device",
                "each rank takes GPU (node-local rank mod visible GPUs); choose GPUs with CUDA_VISIBLE_DEVICES",
            );
        }
        if c.pes_per_rank == 0 || c.pes_per_rank > autarky_shared::MAX_LOCAL_PES {
            return Err(Error::InvalidConfig(format!(
                "pes_per_rank must be in 1..={}, got {}",
                autarky_shared::MAX_LOCAL_PES,
                c.pes_per_rank
            )));
        }
        if c.rank_timeout.is_zero() {
            return Err(Error::InvalidConfig(
                "rank_timeout must be more than zero: it bounds every wait for the other ranks"
                    .into(),
            ));
        }
        if c.transport == Transport::Nvshmem && c.pes_per_rank != 1 {
            return Err(Error::Unsupported {
                backend: "nvshmem",
                option: "Builder::pes_per_rank",
                reason: format!(
                    "with Transport::Nvshmem each rank is one NVSHMEM PE and hosts one autarky PE (got pes_per_rank {}); start one rank per PE",
                    c.pes_per_rank
                ),
            });
        }
        Ok(())
    }

    #[cfg(not(feature = "mpi"))]
    fn build_mpi(self) -> Result<Runtime> {
        self.check_mpi()?;
        Err(Error::Unsupported {
            backend: "gpu",
            option: "Transport::MpiIpc",
            reason: "this autarky was built without MPI support; rebuild with `--features mpi` (needs an MPI: apt-get install libopenmpi-dev openmpi-bin libclang-dev)".into(),
        })
    }

    /// Joins the MPI job: agree on the configuration, boot this rank's
    /// GPU, agree that every rank booted one of the same model.
    #[cfg(feature = "mpi")]
    fn build_mpi(mut self) -> Result<Runtime> {
        use super::mpi::{MpiPeers, Session};
        use super::transport::{agree_ok, check_same_fields, Peers};
        self.check_mpi()?;
        let session = Session::get()?;
        let peers = MpiPeers {
            session: session.clone(),
            bound: self.cfg.rank_timeout,
        };
        let c = &self.cfg;
        let fields = vec![
            ("autarky version", env!("CARGO_PKG_VERSION").to_string()),
            ("transport", c.transport.name().to_string()),
            ("ABI version", autarky_shared::ABI_VERSION.to_string()),
            (
                "fault-injection",
                super::options::fault_injection_enabled().to_string(),
            ),
            ("pes_per_rank", c.pes_per_rank.to_string()),
            ("threads_per_block", c.threads.to_string()),
            ("comm_blocks", c.comm_blocks.to_string()),
            ("compute_blocks", format!("{:?}", c.compute_blocks)),
            ("timeout", format!("{:?}", c.timeout)),
            ("max_tasks", c.max_tasks.to_string()),
            ("counted_fan_in", c.counted_fan_in.to_string()),
            (
                "arrival_slots_max_bytes",
                c.arrival_slots_max_bytes.to_string(),
            ),
            ("symmetric_heap_bytes", c.heap_bytes.to_string()),
            ("rank_timeout", format!("{:?}", c.rank_timeout)),
        ];
        check_same_fields(&peers, "the configuration", &fields)?;
        let ranks = peers.ranks();
        self.cfg.ranks = ranks;
        self.cfg.pes = ranks * self.cfg.pes_per_rank;
        let boot = super::gpu::gpu_count().and_then(|n| {
            self.cfg.device = session.local_rank() % n;
            Gpu::boot(&self.cfg)
        });
        #[allow(unused_mut)] // NVSHMEM is attached to it
        let mut gpu = agree_ok(&peers, "GPU boot", boot)?;
        let model = vec![
            ("GPU", gpu.ctx.props.name.clone()),
            ("SMs", gpu.ctx.props.sm_count.to_string()),
        ];
        check_same_fields(&peers, "the GPU model", &model)?;
        #[cfg(feature = "nvshmem")]
        if self.cfg.transport == Transport::Nvshmem {
            gpu.nvshmem = Some(super::nvshmem::boot::boot(&peers, &gpu, &self.cfg)?);
        }
        tracing::info!(
            "autarky: MPI rank {} of {ranks}: GPU {} hosts PEs {:?}",
            peers.rank(),
            self.cfg.device,
            super::transport::local_pes(peers.rank(), self.cfg.pes_per_rank)
        );
        Ok(Runtime {
            backend: Backend::Gpu(Box::new(gpu)),
            cfg: self.cfg,
            heap: Default::default(),
            peers: std::sync::Arc::new(peers),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_blocks_default_to_one_on_one_gpu_and_more_when_pes_span_gpus() {
        let b = Runtime::builder;
        assert_eq!(b().gpu().pes(4).effective_comm_blocks(), 1);
        assert_eq!(b().emulator(2).effective_comm_blocks(), 1);
        assert_eq!(
            b().gpu().gpus(2).effective_comm_blocks(),
            MULTI_GPU_COMM_BLOCKS
        );
        assert_eq!(
            b().transport(Transport::MpiIpc).effective_comm_blocks(),
            MULTI_GPU_COMM_BLOCKS
        );
        // Set explicitly, it stays, on any layout.
        assert_eq!(b().gpu().gpus(2).comm_blocks(1).effective_comm_blocks(), 1);
        assert_eq!(b().gpu().comm_blocks(3).effective_comm_blocks(), 3);
    }
}
