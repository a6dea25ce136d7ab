//! Runtime configuration: the [`Builder`] a user types knobs into, and the
//! checked [`Config`] the backends read.

use std::time::Duration;

use super::gpu::Gpu;
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
            Want::Auto => match Gpu::boot(&self.cfg) {
                Ok(g) => Ok(Runtime {
                    backend: Backend::Gpu(Box::new(g)),
                    cfg: self.cfg,
                }),
                Err(e @ Error::NoGpu { .. }) => {
                    let threads = std::thread::available_parallelism()
                        .map_or(2, |n| n.get())
                        .max(2);
                    eprintln!(
                        "autarky: no GPU ({e}); running on the CPU emulator with {threads} threads"
                    );
                    emulator(threads)
                }
                Err(e) => Err(e),
            },
        }
    }
}
