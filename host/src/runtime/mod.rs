//! The runtime: bootstrap a backend, launch graphs on it, wait for them.
//!
//! ```no_run
//! use autarky::{Graph, Runtime, TaskKind};
//! let rt = Runtime::builder().build()?;          // GPU if present, else the emulator
//! let mut g = Graph::new();
//! let k = g.add_kind(TaskKind::new("noop", "__device__ void noop(autarky::TaskCtx&) {}")
//!     .with_cpu(|_| Ok(())));
//! let a = g.add_task_bytes(k, &[]);
//! let b = g.add_task_bytes(k, &[]);
//! g.add_edge(a, b);
//! let report = rt.run(&g, 100)?;
//! assert_eq!(report.instances, 200);
//! # Ok::<(), autarky::Error>(())
//! ```
//!
//! Module map: `libs` finds libcuda/libnvrtc without panics; `nvrtc` and
//! `cache` compile the megakernel to a CUBIN and cache it on disk; `source`
//! assembles its source; `driver` is the only file with raw driver calls;
//! `launch` is one GPU run.

pub mod cache;
pub mod driver;
pub mod launch;
pub mod libs;
pub mod nvrtc;
pub mod source;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use crate::emulator::{self, EmulatorConfig};
use crate::graph::{Graph, TaskId, TaskKind};
use crate::status::RunReport;
use crate::{Error, Result};
use driver::{Context, DeviceProps, Function, Module};
pub use launch::{Finished, GpuRun};

/// Which backend a [`Builder`] should produce.
#[derive(Clone, Debug, PartialEq)]
enum Want {
    /// The GPU when one is present, else the emulator (with a notice).
    Auto,
    /// The GPU or an error.
    Gpu,
    /// The CPU emulator with this many compute threads.
    Emulator(usize),
}

/// Runtime configuration (see [`Builder`] for each knob).
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub device: u32,
    pub threads: u32,
    pub comm_blocks: u32,
    pub compute_blocks: Option<u32>,
    pub timeout: Duration,
    pub max_tasks: usize,
}

/// Builds a [`Runtime`]. Defaults work: GPU 0 if present (else the
/// emulator), 128 threads per block, 1 comm block, as many compute blocks as
/// can be co-resident, 10 s wait timeout.
#[derive(Clone, Debug)]
pub struct Builder {
    want: Want,
    cfg: Config,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            want: Want::Auto,
            cfg: Config {
                device: 0,
                threads: 128,
                comm_blocks: 1,
                compute_blocks: None,
                timeout: Duration::from_secs(10),
                max_tasks: 1 << 24,
            },
        }
    }
}

impl Builder {
    /// Require the GPU backend (no emulator fallback).
    pub fn gpu(mut self) -> Self {
        self.want = Want::Gpu;
        self
    }
    /// Use the CPU emulator with `threads` compute threads.
    pub fn emulator(mut self, threads: usize) -> Self {
        self.want = Want::Emulator(threads.max(1));
        self
    }
    /// CUDA device ordinal (default 0).
    pub fn device(mut self, ordinal: u32) -> Self {
        self.cfg.device = ordinal;
        self
    }
    /// Threads per block (default 128).
    ///
    /// # Panics
    /// Unless a multiple of 32 in 32..=1024.
    pub fn threads_per_block(mut self, threads: u32) -> Self {
        assert!(
            (32..=1024).contains(&threads) && threads % 32 == 0,
            "threads per block must be a multiple of 32 in 32..=1024, got {threads}"
        );
        self.cfg.threads = threads;
        self
    }
    /// Blocks with the comm role (default 1; block 0 publishes progress and
    /// watches for stalls, so 0 disables host-visible progress).
    pub fn comm_blocks(mut self, n: u32) -> Self {
        self.cfg.comm_blocks = n;
        self
    }
    /// Blocks with the compute role (default: all that fit co-resident, or
    /// `AUTARKY_COMPUTE_BLOCKS` when set).
    pub fn compute_blocks(mut self, n: u32) -> Self {
        self.cfg.compute_blocks = Some(n);
        self
    }
    /// Deadline of every device wait without progress (default 10 s).
    pub fn timeout(mut self, d: Duration) -> Self {
        self.cfg.timeout = d;
        self
    }
    /// Most tasks a graph may have: the ready queue's capacity (default 2^24).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.cfg.max_tasks = n;
        self
    }

    /// Boots the backend: for the GPU, loads the driver and retains the
    /// device's context; the megakernel is compiled per graph at launch.
    pub fn build(self) -> Result<Runtime> {
        let emulator = |threads: usize| {
            Ok(Runtime {
                backend: Backend::Emulator(EmulatorConfig {
                    compute_threads: threads,
                    timeout: self.cfg.timeout,
                    ..EmulatorConfig::default()
                }),
                cfg: self.cfg.clone(),
            })
        };
        match self.want {
            Want::Emulator(t) => emulator(t),
            Want::Gpu => Ok(Runtime {
                backend: Backend::Gpu(Box::new(Gpu::boot(&self.cfg)?)),
                cfg: self.cfg,
            }),
            Want::Auto => {
                match Gpu::boot(&self.cfg) {
                    Ok(g) => Ok(Runtime {
                        backend: Backend::Gpu(Box::new(g)),
                        cfg: self.cfg,
                    }),
                    Err(e @ Error::NoGpu { .. }) => {
                        let threads = std::thread::available_parallelism()
                            .map_or(2, |n| n.get())
                            .max(2);
                        eprintln!("autarky: no GPU ({e}); running on the CPU emulator with {threads} threads");
                        emulator(threads)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// A compiled and loaded megakernel for one set of task kinds.
pub(crate) struct Loaded {
    pub module: Module,
    pub kernel: Function,
    pub occupancy: u32,
    pub registers: u32,
}

/// The GPU backend: one device, its context and the loaded megakernels.
pub(crate) struct Gpu {
    // Field order is drop order: the modules must be unloaded before the
    // context is released (compute-sanitizer reported cuModuleUnload on a
    // released context as CUDA_ERROR_INVALID_HANDLE).
    loaded: Mutex<HashMap<[u8; 32], Arc<Loaded>>>,
    pub ctx: Context,
    pub cfg: Config,
}

impl Gpu {
    fn boot(cfg: &Config) -> Result<Gpu> {
        libs::ensure_driver()?;
        let n = driver::device_count().map_err(|e| Error::NoGpu {
            reason: format!("the CUDA driver is present but failed to initialize: {e}"),
        })?;
        if cfg.device >= n {
            return Err(Error::NoGpu {
                reason: format!("device {} requested, {n} present", cfg.device),
            });
        }
        let ctx = Context::new(cfg.device)?;
        tracing::info!(
            "autarky: GPU {} {} (sm_{}, {} SMs)",
            cfg.device,
            ctx.props.name,
            ctx.props.arch(),
            ctx.props.sm_count
        );
        Ok(Gpu {
            ctx,
            cfg: cfg.clone(),
            loaded: Mutex::new(HashMap::new()),
        })
    }

    /// The megakernel for these kinds, compiled (or taken from the cubin
    /// cache) and loaded once per runtime.
    pub(crate) fn load(&self, kinds: &[TaskKind]) -> Result<Arc<Loaded>> {
        let mut h = Sha256::new();
        h.update(self.cfg.threads.to_le_bytes());
        for k in kinds {
            h.update(k.name.as_bytes());
            h.update([0]);
            h.update(k.source.as_bytes());
            h.update([0]);
        }
        let key: [u8; 32] = h.finalize().into();
        if let Some(l) = self.loaded.lock().get(&key) {
            return Ok(l.clone());
        }
        let cubin = source::compile(kinds, self.cfg.threads, self.ctx.props.arch())?;
        let module = Module::load(&self.ctx, &cubin)?;
        let kernel = module.function(source::MEGAKERNEL_NAME)?;
        let occupancy = kernel.occupancy(self.cfg.threads, 0)?;
        let registers = kernel.registers()?;
        tracing::debug!("megakernel: {registers} registers/thread, {occupancy} blocks/SM");
        let l = Arc::new(Loaded {
            module,
            kernel,
            occupancy,
            registers,
        });
        self.loaded.lock().insert(key, l.clone());
        Ok(l)
    }

    /// `(comm, compute)` blocks for this kernel, checked for co-residency.
    pub(crate) fn grid(&self, l: &Loaded) -> Result<(u32, u32)> {
        let sms = self.ctx.props.sm_count;
        let fits = l.occupancy * sms;
        let comm = self.cfg.comm_blocks;
        // AUTARKY_COMPUTE_BLOCKS overrides the default (not an explicit
        // Builder::compute_blocks), for experiments with grid size.
        let from_env = std::env::var("AUTARKY_COMPUTE_BLOCKS")
            .ok()
            .and_then(|v| v.parse().ok());
        let compute = match self.cfg.compute_blocks.or(from_env) {
            Some(c) => c,
            None => fits.saturating_sub(comm),
        };
        if compute == 0 {
            return Err(Error::InvalidConfig(format!(
                "no compute blocks: {comm} comm blocks fill all {fits} co-resident slots"
            )));
        }
        if comm + compute > fits {
            return Err(Error::NotCoResident {
                wanted: comm + compute,
                fits,
                per_sm: l.occupancy,
                sms,
            });
        }
        Ok((comm, compute))
    }
}

enum Backend {
    Gpu(Box<Gpu>),
    Emulator(EmulatorConfig),
}

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Instances of every task (1..=MAX_ITERATIONS).
    pub iterations: u32,
    /// Overrides the runtime's wait timeout for this run.
    pub timeout: Option<Duration>,
    /// Host watchdog: raise abort after this long without progress
    /// (default: 2 × timeout + 1 s).
    pub watchdog: Option<Duration>,
    /// After the watchdog raised abort, how long to wait for the kernel to
    /// stop before reporting [`Error::Unstoppable`] (default: max(5 s,
    /// watchdog / 2)).
    pub abort_grace: Option<Duration>,
    /// Record device events around the launch ([`RunReport::event_ms`]).
    /// The two `cuEventRecord` calls are the only driver calls besides the
    /// launch before the kernel ends.
    pub timed: bool,
    /// Fault injection: never run this task (a dependency that never completes).
    #[doc(hidden)]
    pub hold_task: Option<TaskId>,
    /// Fault injection: give this task this kind index in the device tables.
    #[doc(hidden)]
    pub corrupt_kind: Option<(TaskId, u32)>,
    /// Fault injection: pass this ABI version instead of the real one.
    #[doc(hidden)]
    pub abi_version_override: Option<u32>,
}

impl RunOptions {
    /// `iterations` instances of every task, defaults otherwise.
    pub fn iterations(iterations: u32) -> Self {
        RunOptions {
            iterations,
            ..Default::default()
        }
    }
}

/// A booted backend that runs graphs.
pub struct Runtime {
    backend: Backend,
    cfg: Config,
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

    /// The GPU context (None on the emulator), for allocating buffers that
    /// task arguments point to.
    pub fn context(&self) -> Option<&Context> {
        match &self.backend {
            Backend::Gpu(g) => Some(&g.ctx),
            Backend::Emulator(_) => None,
        }
    }

    /// `(blocks per SM, registers per thread)` of the megakernel compiled
    /// for `graph`'s kinds (GPU only).
    pub fn kernel_info(&self, graph: &Graph) -> Result<Option<(u32, u32)>> {
        match &self.backend {
            Backend::Gpu(g) => {
                let l = g.load(graph.kinds())?;
                Ok(Some((l.occupancy, l.registers)))
            }
            Backend::Emulator(_) => Ok(None),
        }
    }

    /// Runs `graph` for `iterations` and waits for it.
    pub fn run(&self, graph: &Graph, iterations: u32) -> Result<RunReport> {
        self.run_with(graph, RunOptions::iterations(iterations))
    }

    /// Runs `graph` with options and waits for it.
    pub fn run_with(&self, graph: &Graph, opts: RunOptions) -> Result<RunReport> {
        match &self.backend {
            Backend::Gpu(g) => GpuRun::start(g, graph, opts)?.wait(),
            Backend::Emulator(e) => {
                let cfg = EmulatorConfig {
                    timeout: opts.timeout.unwrap_or(e.timeout),
                    hold_task: opts.hold_task.map(|t| t.index() as u32),
                    ..e.clone()
                };
                if opts.abi_version_override.is_some() {
                    return Err(Error::InvalidConfig(
                        "abi_version_override needs the GPU backend".into(),
                    ));
                }
                emulator::run(graph, opts.iterations, &cfg)
            }
        }
    }

    /// Launches `graph` on the GPU (exactly one cooperative launch) and
    /// returns the run in flight; [`GpuRun::wait`] finalizes it.
    pub fn launch<'a>(&'a self, graph: &'a Graph, opts: RunOptions) -> Result<GpuRun<'a>> {
        match &self.backend {
            Backend::Gpu(g) => GpuRun::start(g, graph, opts),
            Backend::Emulator(_) => Err(Error::InvalidConfig(
                "launch() returns a run in flight and needs the GPU backend; use run() on the emulator".into(),
            )),
        }
    }

    /// Runs the layout probe kernel (compiled into every megakernel) and
    /// returns what the device reports for every ABI struct, in the order of
    /// [`crate::abi_header::expected_layout`] (GPU only).
    pub fn abi_probe(&self) -> Result<Vec<u64>> {
        let Backend::Gpu(g) = &self.backend else {
            return Err(Error::InvalidConfig(
                "the ABI probe needs the GPU backend".into(),
            ));
        };
        let probe = TaskKind::new(
            "probe_noop",
            "__device__ void probe_noop(autarky::TaskCtx&) {}",
        );
        let loaded = g.load(std::slice::from_ref(&probe))?;
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

    /// Threads per block of this runtime's megakernel.
    pub fn threads_per_block(&self) -> u32 {
        self.cfg.threads
    }
}
