//! Joining NVSHMEM when a runtime with `Transport::Nvshmem` is built: after
//! the MPI configuration exchange and this rank's GPU boot (builder.rs),
//! before any graph is compiled.
//!
//! 1. Every rank finds the toolchain (NVSHMEM's headers and libraries,
//!    nvJitLink, the CUDA headers) and loads NVSHMEM's host library; one
//!    rank that cannot makes every rank fail with its error
//!    ([`agree_ok`]), before NVSHMEM's own (unbounded) bootstrap starts.
//! 2. `NVSHMEM_SYMMETRIC_SIZE`, unless the user set it, is raised to the
//!    symmetric heap plus room for the runs' state words.
//! 3. [`Nvshmem::init`] (unique-id bootstrap over the MPI allgather).
//! 4. The first run area (collective `nvshmem_malloc`) and, from it, how
//!    this PE reaches every other ([`Job::paths`]: what the device tables
//!    say, and what `autarky info` prints).

use std::sync::Arc;

use parking_lot::Mutex;

use super::host::{nvshmem_info, Nvshmem, PeerPath};
use crate::runtime::builder::Config;
use crate::runtime::transport::{agree_ok, Peers};
use crate::runtime::Gpu;
use crate::Result;

/// Bytes of symmetric heap NVSHMEM reserves beyond autarky's heap, for the
/// runs' state arrays and Status words (and NVSHMEM's own allocations).
const RUN_AREA_ROOM: usize = 256 << 20;

/// This rank's NVSHMEM job, shared by the GPU backend (module init, run
/// areas) and the symmetric heap.
pub(crate) struct Job {
    /// The initialised library.
    pub nv: Mutex<Nvshmem>,
    /// How the device reaches every PE (with `AUTARKY_NVSHMEM_FORCE_REMOTE`
    /// applied), in PE order.
    pub paths: Vec<PeerPath>,
}

/// Steps 1–4 of the module docs (collective).
pub(crate) fn boot(peers: &dyn Peers, gpu: &Gpu, cfg: &Config) -> Result<Arc<Job>> {
    agree_ok(
        peers,
        "NVSHMEM toolchain",
        super::toolchain().and_then(|_| nvshmem_info()).map(|_| ()),
    )?;
    if std::env::var_os("NVSHMEM_SYMMETRIC_SIZE").is_none() {
        // Read by NVSHMEM at init, just below. Set while this thread is the
        // only one inside autarky's build (build is collective and runs on
        // the caller's thread); a program that reads the environment from
        // other threads meanwhile should set the variable itself.
        std::env::set_var(
            "NVSHMEM_SYMMETRIC_SIZE",
            cfg.heap_bytes.saturating_add(RUN_AREA_ROOM).to_string(),
        );
    }
    let mut nv = Nvshmem::init(peers, gpu.ctx.clone())?;
    let area = nv.run_area(0)?;
    let paths = nv.device_paths(area);
    tracing::info!(
        "autarky: NVSHMEM PE {} of {}: peers {:?}",
        nv.pe(),
        nv.pes(),
        paths.iter().map(|p| p.name()).collect::<Vec<_>>()
    );
    Ok(Arc::new(Job {
        nv: Mutex::new(nv),
        paths,
    }))
}
