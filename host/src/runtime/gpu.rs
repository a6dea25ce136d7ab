//! The GPU backend: one device, its context, and the megakernels loaded on
//! it (compiled once per set of task kinds), plus the grid each gets.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use super::builder::Config;
use super::driver::{self, Context, Function, Module};
use super::{libs, source};
use crate::graph::TaskKind;
use crate::{Error, Result};

/// Number of CUDA devices, or [`Error::NoGpu`] saying why there is none
/// usable (no driver, or a driver that fails to initialize).
pub fn gpu_count() -> Result<u32> {
    libs::ensure_driver()?;
    driver::device_count().map_err(|e| Error::NoGpu {
        reason: format!("the CUDA driver is present but failed to initialize: {e}"),
    })
}

/// Every GPU's name, and for every ordered pair whether the first can load
/// and store the second's memory directly (peer-to-peer: what several GPUs
/// in one run need). Retains each device's primary context.
pub fn gpu_topology() -> Result<(Vec<String>, Vec<Vec<bool>>)> {
    let n = gpu_count()?;
    let ctxs: Vec<Context> = (0..n)
        .map(Context::new)
        .collect::<std::result::Result<_, _>>()?;
    let names = ctxs.iter().map(|c| c.props.name.clone()).collect();
    let mut peers = vec![vec![false; n as usize]; n as usize];
    for (i, a) in ctxs.iter().enumerate() {
        for (j, b) in ctxs.iter().enumerate() {
            peers[i][j] = i == j || a.can_access_peer(b)?;
        }
    }
    Ok((names, peers))
}

/// The first clause of a [`Error::NoGpu`] reason (before `;`), for one-line
/// notices; the full reason says where autarky looked.
pub(crate) fn short_reason(reason: &str) -> &str {
    reason.split(';').next().unwrap_or(reason)
}

/// A compiled and loaded megakernel for one set of task kinds.
pub(crate) struct Loaded {
    pub module: Module,
    pub kernel: Function,
    pub occupancy: u32,
    pub registers: u32,
    /// Threads per block it was compiled for (and is launched with).
    pub threads: u32,
}

/// The GPU backend: one device, its context and the loaded megakernels.
pub(crate) struct Gpu {
    /// The NVSHMEM job of a `Transport::Nvshmem` runtime: every megakernel
    /// is linked with NVSHMEM's device library and its module initialised
    /// (`nvshmemx_cumodule_init`); `Drop` finalizes the modules before they
    /// are unloaded.
    #[cfg(feature = "nvshmem")]
    pub nvshmem: Option<Arc<super::nvshmem::boot::Job>>,
    // Field order is drop order: the modules must be unloaded before the
    // context is released (compute-sanitizer reported cuModuleUnload on a
    // released context as CUDA_ERROR_INVALID_HANDLE).
    loaded: Mutex<HashMap<[u8; 32], Arc<Loaded>>>,
    /// Streams of kernels that did not stop after abort (their memory was
    /// leaked): a new run first checks they have ended, and refuses to
    /// launch behind one that has not ([`Error::GpuStuck`]) instead of
    /// waiting for its own watchdog.
    pub stuck: Mutex<Vec<driver::Stream>>,
    /// Shared with every [`super::Buffer`] allocated on it, so device
    /// memory is freed before the context is released.
    pub ctx: Arc<Context>,
    pub cfg: Config,
    /// The run's other GPUs (`Builder::gpus`), in device order after this
    /// one; peer access is enabled between every pair.
    pub others: Vec<Gpu>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // NVSHMEM's per-module state goes before the modules (`loaded`,
        // dropped after this) are unloaded.
        #[cfg(feature = "nvshmem")]
        if let Some(job) = &self.nvshmem {
            let _ = self.ctx.bind();
            job.nv.lock().finalize_modules();
        }
    }
}

impl Gpu {
    /// Loads the driver and retains the primary contexts of devices
    /// `cfg.device .. cfg.device + cfg.gpus`, enabling peer access between
    /// every pair (a pair that cannot load and store each other's memory is
    /// an error: no other transport exists yet).
    pub(crate) fn boot(cfg: &Config) -> Result<Gpu> {
        let n = gpu_count()?;
        let gpus = cfg.gpus.max(1);
        if cfg.device + gpus > n {
            return Err(Error::NoGpu {
                reason: format!(
                    "devices {}..{} requested ({gpus} GPU(s) from device {}), {n} present",
                    cfg.device,
                    cfg.device + gpus,
                    cfg.device
                ),
            });
        }
        let mut first = Self::boot_one(cfg, cfg.device)?;
        for d in 1..gpus {
            first.others.push(Self::boot_one(cfg, cfg.device + d)?);
        }
        let all: Vec<&Gpu> = std::iter::once(&first).chain(first.others.iter()).collect();
        for a in &all {
            if a.ctx.props.name != all[0].ctx.props.name
                || a.ctx.props.sm_count != all[0].ctx.props.sm_count
            {
                return Err(Error::InvalidConfig(format!(
                    "the run's GPUs differ ({} with {} SMs vs {} with {} SMs); every GPU of a run must be the same model",
                    a.ctx.props.name, a.ctx.props.sm_count, all[0].ctx.props.name, all[0].ctx.props.sm_count
                )));
            }
            for b in &all {
                if std::ptr::eq(*a, *b) {
                    continue;
                }
                if !a.ctx.can_access_peer(&b.ctx)? {
                    return Err(Error::InvalidConfig(format!(
                        "GPU {} cannot load and store GPU {}'s memory (no peer access); autarky needs every pair of a run's GPUs to be peers",
                        a.ctx.device(),
                        b.ctx.device()
                    )));
                }
                a.ctx.enable_peer_access(&b.ctx)?;
            }
        }
        first.ctx.bind()?;
        Ok(first)
    }

    fn boot_one(cfg: &Config, device: u32) -> Result<Gpu> {
        let ctx = Context::new(device)?;
        tracing::info!(
            "autarky: GPU {} {} (sm_{}, {} SMs)",
            device,
            ctx.props.name,
            ctx.props.arch(),
            ctx.props.sm_count
        );
        Ok(Gpu {
            #[cfg(feature = "nvshmem")]
            nvshmem: None,
            ctx: Arc::new(ctx),
            cfg: cfg.clone(),
            loaded: Mutex::new(HashMap::new()),
            others: Vec::new(),
            stuck: Mutex::new(Vec::new()),
        })
    }

    /// The (untraced) megakernel for these kinds at `threads` per block,
    /// compiled (or taken from the cubin cache) and loaded once per runtime.
    pub(crate) fn load(&self, kinds: &[TaskKind], threads: u32) -> Result<Arc<Loaded>> {
        self.load_variant(
            kinds,
            source::Variant {
                local_pes: self.cfg.pes_per_gpu(),
                ..Default::default()
            },
            threads,
        )
    }

    /// Err([`Error::GpuStuck`]) while a kernel that would not stop still
    /// runs on this GPU (forgotten once it has ended).
    pub(crate) fn check_not_stuck(&self) -> Result<()> {
        let mut stuck = self.stuck.lock();
        let mut still = Vec::new();
        for s in stuck.drain(..) {
            if !s.query()? {
                still.push(s);
            }
        }
        let busy = !still.is_empty();
        *stuck = still;
        if busy {
            return Err(Error::GpuStuck {
                device: self.ctx.device(),
            });
        }
        Ok(())
    }

    /// The megakernel variant for these kinds at `threads` per block,
    /// compiled (or taken from the cubin cache) and loaded once per runtime,
    /// variant and block shape.
    pub(crate) fn load_variant(
        &self,
        kinds: &[TaskKind],
        variant: source::Variant,
        threads: u32,
    ) -> Result<Arc<Loaded>> {
        let key = loaded_key(threads, kinds, variant);
        if let Some(l) = self.loaded.lock().get(&key) {
            return Ok(l.clone());
        }
        let module = self.compile_and_load(kinds, variant, threads)?;
        let kernel = module.function(source::MEGAKERNEL_NAME)?;
        let occupancy = kernel.occupancy(threads, 0)?;
        let registers = kernel.registers()?;
        tracing::debug!("megakernel: {registers} registers/thread, {occupancy} blocks/SM");
        let l = Arc::new(Loaded {
            module,
            kernel,
            occupancy,
            registers,
            threads,
        });
        self.loaded.lock().insert(key, l.clone());
        Ok(l)
    }

    /// Compiles the megakernel variant and loads it: with NVRTC alone, or,
    /// under NVSHMEM, with `-DAUTARKY_NVSHMEM` linked against NVSHMEM's
    /// device library, then `nvshmemx_cumodule_init` on the module.
    fn compile_and_load(
        &self,
        kinds: &[TaskKind],
        variant: source::Variant,
        threads: u32,
    ) -> Result<Module> {
        let arch = self.ctx.props.arch();
        #[cfg(feature = "nvshmem")]
        if let Some(job) = &self.nvshmem {
            let cubin = super::nvshmem::compile::compile_megakernel(kinds, threads, arch, variant)?;
            let module = Module::load(&self.ctx, &cubin)?;
            // SAFETY: `module` is loaded in this runtime's context (current:
            // Module::load bound it) from a cubin linked with
            // libnvshmem_device.a; it stays loaded until `Gpu` drops, whose
            // Drop finalizes it first (before `loaded` unloads it).
            unsafe { job.nv.lock().init_module(module.raw())? };
            return Ok(module);
        }
        let cubin = source::compile_variant(kinds, threads, arch, variant)?;
        Module::load(&self.ctx, &cubin)
    }

    /// `(comm, compute)` blocks per PE for this kernel and `pes` PEs on
    /// the GPU, checked for co-residency (every PE's partition has the same
    /// size).
    pub(crate) fn grid(&self, l: &Loaded, pes: u32) -> Result<(u32, u32)> {
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
            None => (fits / pes).saturating_sub(comm),
        };
        if compute == 0 {
            return Err(Error::InvalidConfig(format!(
                "no compute blocks: {pes} PE(s) × {comm} comm blocks fill the {fits} co-resident slots"
            )));
        }
        if pes * (comm + compute) > fits {
            return Err(Error::NotCoResident {
                wanted: pes * (comm + compute),
                threads: l.threads,
                fits,
                per_sm: l.occupancy,
                sms,
            });
        }
        Ok((comm, compute))
    }
}

/// The key of a loaded megakernel: its kinds and everything that changes
/// the cubin, which is exactly the NVRTC options ([`source::options_for`]:
/// block size, variant, every lean flag, fault hooks, extra options). (Until
/// session 9 the key listed the variant's fields by hand and missed
/// `no_counted`: a graph with counted joins loaded after one without them,
/// of the same kinds, ran the kernel with counting compiled out.)
fn loaded_key(threads: u32, kinds: &[TaskKind], variant: source::Variant) -> [u8; 32] {
    let mut h = Sha256::new();
    for o in source::options_for(threads, variant) {
        h.update(o.as_bytes());
        h.update([0]);
    }
    h.update([0xff]);
    for k in kinds {
        h.update(k.name.as_bytes());
        h.update([0]);
        h.update(k.source.as_bytes());
        h.update([0]);
    }
    h.finalize().into()
}

#[cfg(test)]
mod loaded_key_tests {
    use super::loaded_key;
    use crate::runtime::source::{Lean, Variant};
    use crate::TaskKind;

    /// Every variant flag that changes the compiled kernel changes the key
    /// of the in-memory kernel cache, so no graph gets another graph's kernel.
    #[test]
    fn every_variant_flag_and_the_block_size_change_the_loaded_key() {
        let kinds = [TaskKind::new(
            "k",
            "__device__ void k(autarky::TaskCtx&) {}",
        )];
        let base = Variant::default();
        let key = |threads, v| loaded_key(threads, &kinds, v);
        let flips = [
            Variant {
                trace: true,
                ..base
            },
            Variant {
                local_pes: 2,
                ..base
            },
            Variant {
                lean: Lean {
                    no_pinned: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_comm_work: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_remote: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_counted: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_stop: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_solo: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    solo_wide: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    no_round: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                lean: Lean {
                    round_dep: true,
                    ..base.lean
                },
                ..base
            },
            Variant {
                slots: true,
                ..base
            },
        ];
        let mut keys = vec![key(128, base), key(64, base)];
        keys.extend(flips.iter().map(|&v| key(128, v)));
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b, "two different kernels share a cache key");
            }
        }
        // The same kinds and variant: the same key (the cache works).
        assert_eq!(key(128, base), key(128, base));
        let other = [TaskKind::new(
            "k",
            "__device__ void k(autarky::TaskCtx&) { }",
        )];
        assert_ne!(
            loaded_key(128, &other, base),
            key(128, base),
            "the body is part of the key"
        );
    }
}
