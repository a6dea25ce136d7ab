//! The runtime: bootstrap a backend, launch graphs on it, wait for them.
//!
//! ```no_run
//! use autarky::{Graph, Runtime, TaskKind};
//! let rt = Runtime::builder().build()?;          // GPU if present, else the emulator
//! let mut g = Graph::new();
//! let k = g.add_kind(TaskKind::new("noop", "__device__ void noop(autarky::TaskCtx&) {}")
//!     .with_cpu(|_| Ok(())))?;
//! let a = g.add_task_bytes(k, &[]);
//! let b = g.add_task_bytes(k, &[]);
//! g.add_edge(a, b);
//! let report = rt.run(&g, 100)?;
//! assert_eq!(report.instances, 200);
//! # Ok::<(), autarky::Error>(())
//! ```
//!
//! Module map: `builder` holds the configuration a user types and checks
//! it; `options` the options of one run; this file the front end, which
//! validates and lowers a graph once and hands the tables and the options
//! to a backend. `gpu` is the GPU backend (boot, kernel loading, grid);
//! `launch` is one GPU run; `progress` reads its host-mapped progress
//! words while it runs; `libs` finds libcuda/libnvrtc without panics;
//! `nvrtc` and `cache` compile the megakernel to a CUBIN and cache it on
//! disk; `source` assembles its source; `driver` is the only file with raw
//! driver calls. The emulator backend lives in [`crate::emulator`].

mod buffer;
mod builder;
pub mod cache;
// The raw driver wrappers are public only for autarky's own benches, whose
// baselines (a launch per task, a CUDA graph, a persistent kernel) need plain
// kernel launches; they are not part of the library's API.
#[doc(hidden)]
pub mod driver;
mod gpu;
pub(crate) mod host_mem;
pub mod launch;
pub mod libs;
#[cfg(feature = "mpi")]
mod mpi;
pub mod nvrtc;
#[cfg(feature = "nvshmem")]
pub mod nvshmem;
mod options;
mod progress;
pub mod source;
mod symmetric;
mod transport;

use crate::emulator::{self, EmulatorConfig};
use crate::graph::{Graph, Limits, LoweredRun, TaskKind};
use crate::status::RunReport;
use crate::{Error, Result};
pub use buffer::Buffer;
use builder::Config;
pub(crate) use builder::DEFAULT_THREADS_PER_BLOCK;
pub use builder::{Builder, DEFAULT_ARRIVAL_SLOTS_MAX_BYTES, MULTI_GPU_COMM_BLOCKS};
use driver::{Context, DeviceProps};
pub use gpu::{gpu_count, gpu_topology};
pub(crate) use gpu::{Gpu, Loaded};
pub use host_mem::{cpu_slice, cpu_slice_mut, BufferAccessError, CpuSlice, CpuSliceMut};
pub use launch::{Finished, GpuRun};
#[allow(unused_imports)] // for the device-code generator
pub(crate) use options::fault_injection_enabled;
pub use options::{L2Persist, RunOptions, StateLayout, TraceOptions, MAX_TIMEOUT};
pub use progress::{PeProgress, Residual};
pub use symmetric::SymBuffer;
use symmetric::SymHeap;
use transport::Peers;
pub use transport::Transport;

enum Backend {
    Gpu(Box<Gpu>),
    Emulator(EmulatorConfig),
}

/// A booted backend that runs graphs.
pub struct Runtime {
    backend: Backend,
    cfg: Config,
    /// Every PE's symmetric heap, reserved at the first alloc_symmetric.
    heap: std::sync::OnceLock<std::sync::Arc<SymHeap>>,
    /// The other ranks of a multi-process run (or this process alone).
    peers: std::sync::Arc<dyn Peers>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("backend", &self.backend_name())
            .finish()
    }
}

impl Runtime {
    /// A builder with working defaults.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// `"gpu"` or `"emulator"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Gpu(_) => "gpu",
            Backend::Emulator(_) => "emulator",
        }
    }

    /// The GPU's properties (None on the emulator).
    pub fn device_props(&self) -> Option<&DeviceProps> {
        match &self.backend {
            Backend::Gpu(g) => Some(&g.ctx.props),
            Backend::Emulator(_) => None,
        }
    }

    /// Free and total device memory in bytes (GPU only: the emulator
    /// returns [`Error::Unsupported`]).
    pub fn device_memory(&self) -> Result<(usize, usize)> {
        match &self.backend {
            Backend::Gpu(g) => g.ctx.mem_info(),
            Backend::Emulator(_) => Err(Error::Unsupported {
                backend: "emulator",
                option: "Runtime::device_memory",
                reason: "the emulator has no device memory".into(),
            }),
        }
    }

    /// The GPU context (None on the emulator), for allocating buffers that
    /// task arguments point to.
    pub fn context(&self) -> Option<&Context> {
        match &self.backend {
            Backend::Gpu(g) => Some(&*g.ctx),
            Backend::Emulator(_) => None,
        }
    }

    /// `len` zeroed elements of `T` on this runtime's backend: device memory
    /// on the GPU, host memory on the emulator. Put [`Buffer::addr`] in task
    /// arguments; keep the buffer alive until the runs that use it return.
    pub fn alloc<T: bytemuck::Pod>(&self, len: usize) -> Result<Buffer<T>> {
        match &self.backend {
            Backend::Gpu(g) => Buffer::device(&g.ctx, len),
            Backend::Emulator(_) => Buffer::host(len),
        }
    }

    /// `(blocks per SM, registers per thread)` of the megakernel that a run
    /// of `graph` with default options compiles — for its kinds, its block
    /// shape and the scheduler paths its lowered tables use — on the GPU;
    /// `None` on the emulator. Compiling it here also puts it in the kernel
    /// cache, so the run that follows starts without compiling. A graph
    /// without tasks gets the full kernel (every path compiled in).
    pub fn kernel_info(&self, graph: &Graph) -> Result<Option<(u32, u32)>> {
        // Lowered as a one-iteration run with default options would be (on
        // every backend, so a graph a run would refuse is refused here too).
        let run = if graph.num_tasks() == 0 {
            None
        } else {
            Some(self.lower(graph, &RunOptions::iterations(1).clamped())?)
        };
        let Backend::Gpu(g) = &self.backend else {
            return Ok(None);
        };
        let l = match run {
            None => g.load(graph.kinds(), self.threads_of(graph))?,
            Some(mut run) => self.load_run(g, graph, &mut run, &RunOptions::iterations(1))?,
        };
        Ok(Some((l.occupancy, l.registers)))
    }

    /// Compiles and loads the kernel that [`Runtime::run_with`]`(graph,
    /// opts)` would launch (or finds it in the kernel and cubin caches), so
    /// that run starts without compiling; refuses what the run would
    /// refuse (the options, the graph). On the emulator it only checks.
    ///
    /// Several threads may prepare at once (the runtime is `Sync`): each
    /// kernel not yet cached compiles on its caller's thread, so graphs
    /// prepared from a thread each compile in parallel — seconds each
    /// for large graphs' kinds — while runs stay one at a time. It is not
    /// collective: under MPI each rank prepares its own kernel.
    pub fn prepare(&self, graph: &Graph, opts: &RunOptions) -> Result<()> {
        let opts = opts.clone().clamped();
        let mut run = self.lower(graph, &opts)?;
        if let Backend::Gpu(g) = &self.backend {
            self.load_run(g, graph, &mut run, &opts)?;
        }
        Ok(())
    }

    /// The kernel of a run of `run` (lowered from `graph`) with `opts` on
    /// GPU 0 (and loaded on this process's other GPUs), as a launch
    /// computes it: this rank's PEs, spread over its GPUs.
    fn load_run(
        &self,
        g: &Gpu,
        graph: &Graph,
        run: &mut LoweredRun,
        opts: &RunOptions,
    ) -> Result<std::sync::Arc<Loaded>> {
        let gpus: Vec<&Gpu> = std::iter::once(g).chain(g.others.iter()).collect();
        let local_pes = ((self.cfg.pes / self.peers.ranks()).max(1) / gpus.len() as u32).max(1);
        let slots =
            source::uses_arrival_slots(run, opts.iterations, self.cfg.arrival_slots_max_bytes);
        let mut l = launch::run_kernels(&gpus, graph, run, opts, local_pes, slots)?;
        Ok(l.swap_remove(0))
    }

    /// Runs `graph` for `iterations` and waits for it.
    pub fn run(&self, graph: &Graph, iterations: u32) -> Result<RunReport> {
        self.run_with(graph, RunOptions::iterations(iterations))
    }

    /// Runs `graph` with options and waits for it.
    ///
    /// Every option is honoured by every backend or refused with
    /// [`Error::Unsupported`] naming the backend: the emulator refuses
    /// `watchdog`, `abort_grace` and `timed` (see [`RunOptions`]). On the
    /// emulator the graph's CUDA source is compiled first when NVRTC is
    /// present ([`Builder::check_cuda`]), so a body that fails to compile
    /// fails with [`Error::Nvrtc`] on both backends.
    pub fn run_with(&self, graph: &Graph, opts: RunOptions) -> Result<RunReport> {
        let opts = opts.clamped();
        let lowered = self.lower(graph, &opts)?;
        match &self.backend {
            Backend::Gpu(g) => {
                GpuRun::start(g, graph, lowered, opts, self.heap_bases(), &*self.peers)?.wait()
            }
            Backend::Emulator(e) => {
                // Host copies of symmetric buffers are refused until the
                // run ends (host memory: they would race its bodies).
                let _in_flight = self.heap.get().map(|h| h.enter_run());
                let cfg = EmulatorConfig {
                    timeout: opts.timeout.unwrap_or(e.timeout),
                    hold_task: opts.faults().hold_task.map(|t| t.index() as u32),
                    trace: opts.trace,
                    ..e.clone()
                };
                emulator::run_prelowered(
                    graph,
                    &lowered,
                    opts.iterations,
                    &cfg,
                    &self.heap_bases(),
                    self.threads_of(graph),
                )
            }
        }
    }

    /// Launches `graph` on the GPU (exactly one cooperative launch) and
    /// returns the run in flight; [`GpuRun::wait`] finalizes it. GPU only:
    /// the emulator returns [`Error::Unsupported`] (use [`Runtime::run`]).
    pub fn launch<'a>(&'a self, graph: &'a Graph, opts: RunOptions) -> Result<GpuRun<'a>> {
        match &self.backend {
            Backend::Gpu(g) => {
                let opts = opts.clamped();
                let lowered = self.lower(graph, &opts)?;
                GpuRun::start(g, graph, lowered, opts, self.heap_bases(), &*self.peers)
            }
            Backend::Emulator(_) => Err(Error::Unsupported {
                backend: "emulator",
                option: "Runtime::launch",
                reason: "it returns a GPU run in flight; use Runtime::run".into(),
            }),
        }
    }

    /// What every backend checks first: the options (and that this backend
    /// honours them), then the graph, validated and lowered once against
    /// this runtime's limits.
    fn lower(&self, graph: &Graph, opts: &RunOptions) -> Result<LoweredRun> {
        opts.check(graph.num_tasks())?;
        if let Backend::Emulator(_) = self.backend {
            opts.check_emulator()?;
        }
        Ok(graph.lower_run(&Limits {
            num_pes: self.cfg.pes,
            max_tasks: self.cfg.max_tasks,
            counted_fan_in: self.cfg.counted_fan_in,
        })?)
    }

    /// `(comm, compute)` blocks every PE gets for a graph with these kinds:
    /// on the GPU, what the co-resident grid allows for the compiled
    /// megakernel (compiles it if needed); on the emulator, its threads.
    /// Pinned slots ([`Graph::pin`]) must be below these counts. This is
    /// for the runtime's block shape; a graph that sets its own
    /// ([`Graph::set_threads_per_block`]) asks [`Runtime::blocks_per_pe_of`].
    pub fn blocks_per_pe(&self, kinds: &[TaskKind]) -> Result<(u32, u32)> {
        self.blocks_at(kinds, self.cfg.threads)
    }

    /// [`Runtime::blocks_per_pe`] for `graph`'s kinds and block shape.
    pub fn blocks_per_pe_of(&self, graph: &Graph) -> Result<(u32, u32)> {
        self.blocks_at(graph.kinds(), self.threads_of(graph))
    }

    fn blocks_at(&self, kinds: &[TaskKind], threads: u32) -> Result<(u32, u32)> {
        match &self.backend {
            Backend::Gpu(g) => {
                let l = g.load(kinds, threads)?;
                g.grid(&l, self.cfg.pes_per_gpu())
            }
            Backend::Emulator(e) => Ok((e.comm_threads as u32, e.compute_threads as u32)),
        }
    }

    /// Threads per block `graph` runs with: its own, else the runtime's.
    fn threads_of(&self, graph: &Graph) -> u32 {
        graph.threads_per_block().unwrap_or(self.cfg.threads)
    }

    /// PEs of every run of this runtime ([`Builder::pes`]; with
    /// [`Transport::MpiIpc`], ranks × [`Builder::pes_per_rank`]).
    pub fn num_pes(&self) -> u32 {
        self.cfg.pes
    }

    /// PEs that share one GPU (one megakernel launch): all of them on the
    /// emulator and on one GPU, `num_pes / (GPUs × ranks)` otherwise.
    pub fn pes_per_gpu(&self) -> u32 {
        match self.backend {
            Backend::Gpu(_) => self.cfg.pes_per_gpu(),
            Backend::Emulator(_) => self.cfg.pes,
        }
    }

    /// The PEs this process hosts: all of them in one process; with
    /// [`Transport::MpiIpc`], this rank's `pes_per_rank` consecutive PEs.
    /// Host-side work per PE (filling a PE's symmetric buffers) belongs to
    /// the process that hosts the PE.
    pub fn local_pes(&self) -> std::ops::Range<u32> {
        transport::local_pes(self.peers.rank(), self.cfg.pes / self.peers.ranks())
    }

    /// This process's MPI rank (0 in one process).
    pub fn rank(&self) -> u32 {
        self.peers.rank()
    }

    /// Ranks of the MPI job (1 in one process).
    pub fn ranks(&self) -> u32 {
        self.peers.ranks()
    }

    /// The runtime's transport ([`Builder::transport`]).
    pub fn transport(&self) -> Transport {
        self.cfg.transport
    }

    /// How this process reaches every PE, in PE order: `"local"` for the
    /// PEs it hosts, `"ipc"` (CUDA IPC) for another rank's under
    /// [`Transport::MpiIpc`], and under [`Transport::Nvshmem`]
    /// `"nvshmem-p2p"` (load/store through `nvshmem_ptr`) or `"nvshmem"`
    /// (NVSHMEM puts and signals only: another node, or every peer with
    /// `AUTARKY_NVSHMEM_FORCE_REMOTE=1`). For `autarky info` and logs.
    pub fn peer_transports(&self) -> Vec<&'static str> {
        #[cfg(feature = "nvshmem")]
        if let Backend::Gpu(g) = &self.backend {
            if let Some(job) = &g.nvshmem {
                return job.paths.iter().map(|p| p.name()).collect();
            }
        }
        let local = self.local_pes();
        (0..self.cfg.pes)
            .map(|q| if local.contains(&q) { "local" } else { "ipc" })
            .collect()
    }

    /// Waits until every rank has called it (collective, bounded by
    /// [`Builder::rank_timeout`]); returns at once in one process. Use it
    /// between reading peers' symmetric buffers after a run and writing
    /// them again before the next one.
    pub fn barrier(&self) -> Result<()> {
        self.peers.allgather("barrier", &[]).map(|_| ())
    }

    /// The symmetric heaps, reserved now if this is the first allocation.
    fn heap(&self) -> Result<&std::sync::Arc<SymHeap>> {
        if let Some(h) = self.heap.get() {
            return Ok(h);
        }
        let h =
            match &self.backend {
                #[cfg(feature = "nvshmem")]
                Backend::Gpu(g) if g.nvshmem.is_some() => {
                    // One nvshmem_malloc (collective), the same address on every PE.
                    let job = g.nvshmem.clone().expect("checked by the guard");
                    SymHeap::nvshmem(job, &g.ctx, self.cfg.heap_bytes)?
                        .with_contexts(vec![g.ctx.clone(); self.cfg.pes as usize])
                }
                Backend::Gpu(g) => {
                    // PE q's heap lives on the GPU that runs it; with several
                    // ranks, the other ranks' heaps are mapped through CUDA IPC
                    // (collective: every rank reserves its heaps now). Every
                    // PE's context: its GPU's for this process's PEs;
                    // this process's first GPU's for the other ranks' (their
                    // heaps are mapped there). Host copies of a PE's heap run
                    // in it.
                    let per_gpu = self.cfg.pes_per_gpu();
                    let local = self.local_pes();
                    let pe_ctxs: Vec<std::sync::Arc<driver::Context>> = (0..self.cfg.pes)
                        .map(|q| {
                            let k = if local.contains(&q) {
                                (q - local.start) / per_gpu
                            } else {
                                0
                            };
                            if k == 0 {
                                g.ctx.clone()
                            } else {
                                g.others[k as usize - 1].ctx.clone()
                            }
                        })
                        .collect();
                    let ctxs: Vec<&driver::Context> =
                        local.clone().map(|q| &*pe_ctxs[q as usize]).collect();
                    let mine = transport::agree_ok(
                        &*self.peers,
                        "symmetric heap reservation",
                        SymHeap::alloc_gpu(&ctxs, self.cfg.heap_bytes),
                    )?;
                    g.ctx.bind()?;
                    SymHeap::gpu_shared(&*self.peers, &g.ctx, local, mine, self.cfg.heap_bytes)?
                        .with_contexts(pe_ctxs)
                }
                Backend::Emulator(_) => SymHeap::host(self.cfg.pes, self.cfg.heap_bytes)?,
            };
        Ok(self.heap.get_or_init(|| std::sync::Arc::new(h)))
    }

    /// A buffer of `len` values of `T` on every PE, at the same offset of
    /// each PE's symmetric heap (zeroed). Device code reaches a peer's copy
    /// with `ctx.peer(ptr, pe)`; [`SymBuffer::addr`] gives a PE's own
    /// address for task arguments.
    pub fn alloc_symmetric<T: bytemuck::Pod>(&self, len: usize) -> Result<SymBuffer<T>> {
        SymBuffer::new(self.heap()?.clone(), len)
    }

    /// Every PE's heap base as the PEs reach it (0s before any symmetric
    /// allocation).
    pub(crate) fn heap_bases(&self) -> Vec<u64> {
        match self.heap.get() {
            Some(h) => h.bases(),
            None => vec![0; self.cfg.pes as usize],
        }
    }

    /// Runs the layout probe kernel (compiled into every megakernel) and
    /// returns what the device reports for every ABI struct, in the order of
    /// [`crate::abi_header::expected_layout`] (GPU only).
    pub fn abi_probe(&self) -> Result<Vec<u64>> {
        let Backend::Gpu(g) = &self.backend else {
            return Err(Error::Unsupported {
                backend: "emulator",
                option: "Runtime::abi_probe",
                reason: "the probe is a GPU kernel".into(),
            });
        };
        let probe = TaskKind::new(
            "probe_noop",
            "__device__ void probe_noop(autarky::TaskCtx&) {}",
        );
        let loaded = g.load(std::slice::from_ref(&probe), self.cfg.threads)?;
        let module = &loaded.module;
        let f = module.function(source::PROBE_NAME)?;
        let n = crate::abi_header::expected_layout().len();
        let out = driver::DeviceMem::alloc(&g.ctx, n * 8)?;
        out.fill_bytes(0xff)?;
        let stream = driver::Stream::new(&g.ctx)?;
        let mut ptr = out.ptr();
        // SAFETY: autarky_abi_probe takes one `unsigned long long*`; `ptr`
        // points at `n` u64s, which is what the generated probe writes, and
        // `out` outlives the kernel (we synchronize before reading it).
        unsafe {
            f.launch(
                &stream,
                1,
                32,
                &mut [&mut ptr as *mut u64 as *mut std::ffi::c_void],
            )?
        };
        stream.synchronize()?;
        let mut v = vec![0u64; n];
        out.download(&mut v)?;
        Ok(v)
    }

    /// The most tasks a graph may have here (`Builder::max_tasks`): the
    /// ready queue's capacity.
    pub(crate) fn max_tasks(&self) -> usize {
        self.cfg.max_tasks
    }

    /// Threads per block of this runtime's megakernel (a graph may set its
    /// own: [`Graph::set_threads_per_block`]).
    pub fn threads_per_block(&self) -> u32 {
        self.cfg.threads
    }
}
