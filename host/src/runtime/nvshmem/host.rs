//! NVSHMEM's host library (`libnvshmem_host.so.3`, loaded at run time):
//! bootstrap, symmetric heap, per-peer reachability, module init, finalize.
//!
//! # Protocol
//!
//! 1. Rank 0 gets a unique id (`nvshmemx_get_uniqueid`); every rank
//!    receives it through the run's [`Peers`] allgather (the MPI backend's
//!    bounded collectives: a dead rank is a `RankTimeout`, not a hang) and
//!    initialises with `nvshmemx_set_attr_uniqueid_args` +
//!    `nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)`. The UID
//!    bootstrap needs no MPI inside NVSHMEM (no `NVSHMEM_BOOTSTRAP=MPI`
//!    plugin matching the job's MPI ABI): NVSHMEM PE = rank. The caller's
//!    CUDA context must be current (NVSHMEM binds to the current device).
//! 2. `nvshmem_malloc(bytes)` is collective: every rank asks for the same
//!    size and gets the same address. Every PE's heap and state array are
//!    carved from it, so a symmetric address is the PE's own.
//! 3. Per peer, `nvshmem_ptr(sym, pe)`: non-null means load/store reachable
//!    (same node, P2P), and that address goes in the peer tables; null means
//!    NVSHMEM transport only, and the table entry is 0 (autarky/nvshmem.cuh).
//! 4. After loading the linked megakernel, `nvshmemx_cumodule_init(module)`
//!    fills the module's `nvshmemi_device_state_d`.
//! 5. At the end: `nvshmemx_cumodule_finalize` (by the GPU backend, before
//!    it unloads its modules: [`Nvshmem::finalize_modules`]), `nvshmem_free`,
//!    `nvshmemx_hostlib_finalize` ([`Nvshmem`] drops in that order; both are
//!    collective, so a rank that died makes the others wait here, after
//!    every bounded step of the run has already reported it).
//!
//! `AUTARKY_NVSHMEM_FORCE_REMOTE=1` makes every other PE NVSHMEM-only for
//! the device ([`Nvshmem::device_paths`]), so that two ranks on one node
//! exercise the put/signal path; host copies still use `nvshmem_ptr`
//! ([`Nvshmem::paths`]).
//!
//! Wired into `Transport::Nvshmem` (builder.rs, gpu.rs, launch.rs,
//! symmetric.rs); run on two H200s since session 7 (docs/design.md, "NVSHMEM transport").

use std::ffi::{c_int, c_void};
use std::sync::{Arc, OnceLock};

use libloading::os::unix::{Library, Symbol, RTLD_GLOBAL, RTLD_NOW};

use super::find::{nvshmem_search_dirs, search_nvshmem, NvshmemEnv, NvshmemInstall};
use crate::runtime::driver::Context;
use crate::runtime::transport::Peers;
use crate::{Error, Result};

/// `NVSHMEMX_INIT_WITH_UNIQUEID` (host/nvshmemx_api.h).
const INIT_WITH_UNIQUEID: u32 = 1 << 3;

/// `nvshmemx_uniqueid_v1`: 128 bytes, `version` first.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct UniqueId {
    version: c_int,
    internal: [u8; 124],
}
const _: () = assert!(std::mem::size_of::<UniqueId>() == 128);

/// `nvshmemx_uniqueid_args_v1` (24 bytes, checked by NVSHMEM's own static_assert).
#[repr(C)]
struct UniqueIdArgs {
    version: c_int,
    id: *mut UniqueId,
    myrank: c_int,
    nranks: c_int,
}
const _: () = assert!(std::mem::size_of::<UniqueIdArgs>() == 24);

/// `nvshmemx_init_args_v1` (128 bytes).
#[repr(C)]
struct InitArgs {
    version: c_int,
    uid_args: UniqueIdArgs,
    content: [u8; 96],
}
const _: () = assert!(std::mem::size_of::<InitArgs>() == 128);

/// `nvshmemx_init_attr_v1` (144 bytes).
#[repr(C)]
struct InitAttr {
    version: c_int,
    mpi_comm: *mut c_void,
    args: InitArgs,
}
const _: () = assert!(std::mem::size_of::<InitAttr>() == 144);

/// A struct's version word as NVSHMEM's initializer macros write it:
/// `(1 << 16) + sizeof(T)`.
fn version_of<T>() -> c_int {
    (1 << 16) + std::mem::size_of::<T>() as c_int
}

impl UniqueId {
    fn zeroed() -> Self {
        UniqueId {
            version: version_of::<UniqueId>(),
            internal: [0; 124],
        }
    }
    fn to_bytes(self) -> Vec<u8> {
        let mut b = self.version.to_le_bytes().to_vec();
        b.extend_from_slice(&self.internal);
        b
    }
    fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != 128 {
            return None;
        }
        let mut internal = [0u8; 124];
        internal.copy_from_slice(&b[4..]);
        Some(UniqueId {
            version: c_int::from_le_bytes(b[..4].try_into().ok()?),
            internal,
        })
    }
}

struct Api {
    _lib: Library,
    get_uniqueid: unsafe extern "C" fn(*mut UniqueId) -> c_int,
    set_attr_uniqueid_args:
        unsafe extern "C" fn(c_int, c_int, *const UniqueId, *mut InitAttr) -> c_int,
    hostlib_init_attr: unsafe extern "C" fn(u32, *mut InitAttr) -> c_int,
    hostlib_finalize: unsafe extern "C" fn(),
    my_pe: unsafe extern "C" fn() -> c_int,
    n_pes: unsafe extern "C" fn() -> c_int,
    malloc: unsafe extern "C" fn(usize) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
    ptr: unsafe extern "C" fn(*const c_void, c_int) -> *mut c_void,
    barrier_all: unsafe extern "C" fn(),
    cumodule_init: unsafe extern "C" fn(*mut c_void) -> c_int,
    cumodule_finalize: unsafe extern "C" fn(*mut c_void) -> c_int,
    vendor_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int),
    install: NvshmemInstall,
}

// SAFETY: `Api` is a library handle and function pointers into it, never
// mutated after loading. NVSHMEM's host calls are made from the thread
// that owns the runtime (the Runtime is driven from one thread at a time).
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

static API: OnceLock<std::result::Result<Api, Vec<String>>> = OnceLock::new();

fn load(install: &NvshmemInstall) -> std::result::Result<Api, String> {
    // SAFETY: loading runs NVSHMEM's initialisers, which only set up its
    // globals; the file is found by its exact name in an NVSHMEM install.
    // RTLD_GLOBAL: the bootstrap and transport plugins NVSHMEM dlopens from
    // its own directory resolve symbols against it.
    let lib = unsafe { Library::open(Some(&install.host_lib), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("{} (dlopen: {e})", install.host_lib.display()))?;
    /// # Safety
    /// `T` must be the symbol's C signature (NVSHMEM 3.x host headers).
    unsafe fn sym<T: Copy>(lib: &Library, name: &[u8]) -> std::result::Result<T, String> {
        // SAFETY: the caller states that `T` is the symbol's type.
        let s: Symbol<T> = unsafe { lib.get(name) }.map_err(|e| e.to_string())?;
        Ok(*s)
    }
    // SAFETY: every type below is the signature host/nvshmem_api.h and
    // host/nvshmemx_api.h (NVSHMEM 3.3) declare for that name; `CUmodule`
    // is a pointer.
    unsafe {
        Ok(Api {
            get_uniqueid: sym(&lib, b"nvshmemx_get_uniqueid\0")?,
            set_attr_uniqueid_args: sym(&lib, b"nvshmemx_set_attr_uniqueid_args\0")?,
            hostlib_init_attr: sym(&lib, b"nvshmemx_hostlib_init_attr\0")?,
            hostlib_finalize: sym(&lib, b"nvshmemx_hostlib_finalize\0")?,
            my_pe: sym(&lib, b"nvshmem_my_pe\0")?,
            n_pes: sym(&lib, b"nvshmem_n_pes\0")?,
            malloc: sym(&lib, b"nvshmem_malloc\0")?,
            free: sym(&lib, b"nvshmem_free\0")?,
            ptr: sym(&lib, b"nvshmem_ptr\0")?,
            barrier_all: sym(&lib, b"nvshmem_barrier_all\0")?,
            cumodule_init: sym(&lib, b"nvshmemx_cumodule_init\0")?,
            cumodule_finalize: sym(&lib, b"nvshmemx_cumodule_finalize\0")?,
            vendor_version: sym(&lib, b"nvshmemx_vendor_get_version_info\0")?,
            install: install.clone(),
            _lib: lib,
        })
    }
}

fn api() -> Result<&'static Api> {
    let r = API.get_or_init(|| {
        let install = search_nvshmem(&nvshmem_search_dirs(&NvshmemEnv::from_process()))?;
        load(&install).map_err(|e| vec![e])
    });
    r.as_ref().map_err(|looked| Error::NvshmemNotFound {
        part: "NVSHMEM (libnvshmem_host.so.3)",
        looked: looked.clone(),
        install: "`pip install nvidia-nvshmem-cu13` (PyTorch's CUDA 13 wheels include it) and set AUTARKY_NVSHMEM_DIR to its site-packages/nvidia/nvshmem",
    })
}

/// Where NVSHMEM's host library is and the version it reports, loading it
/// (without initialising it) on first call. For `autarky info`.
pub fn nvshmem_info() -> Result<(NvshmemInstall, (i32, i32, i32))> {
    let a = api()?;
    let (mut ma, mut mi, mut pa) = (0, 0, 0);
    // SAFETY: three live, writable ints; the call only writes them and is
    // valid before initialisation.
    unsafe { (a.vendor_version)(&mut ma, &mut mi, &mut pa) };
    Ok((a.install.clone(), (ma, mi, pa)))
}

fn check(call: &'static str, r: c_int) -> Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(Error::Nvshmem {
            call,
            reason: format!("returned {r} (run with NVSHMEM_DEBUG=INFO for NVSHMEM's own report)"),
        })
    }
}

/// How this PE reaches one peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerPath {
    /// This PE itself.
    Local,
    /// Load/store through the address `nvshmem_ptr` gave (same node, P2P).
    LoadStore(u64),
    /// Only through NVSHMEM puts and signals.
    Remote,
}

impl PeerPath {
    /// The peer-table entry the device reads (autarky/nvshmem.cuh): the
    /// address, or 0 for NVSHMEM only. `own` is this PE's own address.
    pub fn table_entry(self, own: u64) -> u64 {
        match self {
            PeerPath::Local => own,
            PeerPath::LoadStore(a) => a,
            PeerPath::Remote => 0,
        }
    }

    /// The word `autarky info` and the run report print.
    pub fn name(self) -> &'static str {
        match self {
            PeerPath::Local => "local",
            PeerPath::LoadStore(_) => "nvshmem-p2p",
            PeerPath::Remote => "nvshmem",
        }
    }
}

/// `AUTARKY_NVSHMEM_FORCE_REMOTE=1`: the device reaches every other PE
/// through NVSHMEM puts and signals, even where `nvshmem_ptr` gives a
/// load/store address (to exercise the NVSHMEM path on one node).
pub fn force_remote() -> bool {
    std::env::var("AUTARKY_NVSHMEM_FORCE_REMOTE").as_deref() == Ok("1")
}

/// `paths` with every load/store peer made NVSHMEM-only when `force`.
fn forced(paths: Vec<PeerPath>, force: bool) -> Vec<PeerPath> {
    paths
        .into_iter()
        .map(|p| match p {
            PeerPath::LoadStore(_) if force => PeerPath::Remote,
            p => p,
        })
        .collect()
}

/// An initialised NVSHMEM job (one PE per rank). Dropping it frees the
/// symmetric allocations and finalizes NVSHMEM.
pub struct Nvshmem {
    api: &'static Api,
    pe: u32,
    pes: u32,
    allocs: Vec<u64>,
    modules: Vec<usize>,
    /// The symmetric area runs carve their state arrays and Status words
    /// from (address, bytes); replaced by a larger one when a run needs more.
    run_area: Option<(u64, usize)>,
    /// The context NVSHMEM was initialised in, released only after
    /// `nvshmemx_hostlib_finalize` (field order: dropped after `Drop::drop`).
    _ctx: Arc<Context>,
}

// SAFETY: the raw addresses in `Nvshmem` are plain numbers; every NVSHMEM
// host call is made with `&mut self` or `&self` behind the runtime's mutex,
// from one thread at a time.
unsafe impl Send for Nvshmem {}

impl Nvshmem {
    /// Initialises NVSHMEM over `peers` with the unique-id bootstrap
    /// (collective; `ctx`, this rank's GPU, is made current first).
    pub(crate) fn init(peers: &dyn Peers, ctx: Arc<Context>) -> Result<Nvshmem> {
        let api = api()?;
        ctx.bind()?;
        let mut uid = UniqueId::zeroed();
        if peers.rank() == 0 {
            // SAFETY: `uid` is a live, writable nvshmemx_uniqueid_t with its
            // version set, as nvshmemx_get_uniqueid expects.
            check("nvshmemx_get_uniqueid", unsafe {
                (api.get_uniqueid)(&mut uid)
            })?;
        }
        let all = peers.allgather("nvshmem unique id", &uid.to_bytes())?;
        let mut uid = UniqueId::from_bytes(&all[0]).ok_or_else(|| Error::Nvshmem {
            call: "nvshmemx_get_uniqueid",
            reason: "rank 0's unique id did not arrive whole".into(),
        })?;
        let mut attr = InitAttr {
            version: version_of::<InitAttr>(),
            mpi_comm: std::ptr::null_mut(),
            args: InitArgs {
                version: version_of::<InitArgs>(),
                uid_args: UniqueIdArgs {
                    version: version_of::<UniqueIdArgs>(),
                    id: std::ptr::null_mut(),
                    myrank: -1,
                    nranks: -1,
                },
                content: [0; 96],
            },
        };
        let (rank, ranks) = (peers.rank() as c_int, peers.ranks() as c_int);
        // SAFETY: `uid` and `attr` are live and writable for the call;
        // NVSHMEM stores a pointer to `uid` in `attr`, used only by the
        // init call below while `uid` is still alive.
        check("nvshmemx_set_attr_uniqueid_args", unsafe {
            (api.set_attr_uniqueid_args)(rank, ranks, &mut uid, &mut attr)
        })?;
        // SAFETY: `attr` was filled by nvshmemx_set_attr_uniqueid_args; the
        // caller made this rank's CUDA context current.
        check("nvshmemx_hostlib_init_attr", unsafe {
            (api.hostlib_init_attr)(INIT_WITH_UNIQUEID, &mut attr)
        })?;
        // SAFETY: NVSHMEM is initialised.
        let (pe, pes) = unsafe { ((api.my_pe)(), (api.n_pes)()) };
        let me = Nvshmem {
            api,
            pe: pe as u32,
            pes: pes as u32,
            allocs: Vec::new(),
            modules: Vec::new(),
            run_area: None,
            _ctx: ctx,
        };
        if me.pe != peers.rank() || me.pes != peers.ranks() {
            return Err(Error::Nvshmem {
                call: "nvshmem_my_pe",
                reason: format!(
                    "NVSHMEM says PE {pe} of {pes}, the job says rank {rank} of {ranks}"
                ),
            });
        }
        Ok(me)
    }

    /// This PE (= rank).
    pub fn pe(&self) -> u32 {
        self.pe
    }

    /// PEs of the job.
    pub fn pes(&self) -> u32 {
        self.pes
    }

    /// `bytes` of symmetric memory (collective: every PE asks for the same
    /// size and gets the same address). Freed when `self` drops.
    pub fn malloc(&mut self, bytes: usize) -> Result<u64> {
        // SAFETY: NVSHMEM is initialised; every rank makes this call with the
        // same size (the callers allocate in lockstep).
        let p = unsafe { (self.api.malloc)(bytes) };
        if p.is_null() {
            return Err(Error::Nvshmem {
                call: "nvshmem_malloc",
                reason: format!(
                    "no {bytes} bytes of symmetric heap (raise NVSHMEM_SYMMETRIC_SIZE)"
                ),
            });
        }
        self.allocs.push(p as u64);
        Ok(p as u64)
    }

    /// How this PE reaches every PE's copy of the symmetric address `sym`.
    pub fn paths(&self, sym: u64) -> Vec<PeerPath> {
        (0..self.pes)
            .map(|q| {
                if q == self.pe {
                    return PeerPath::Local;
                }
                // SAFETY: `sym` is a symmetric address from `malloc`; the
                // call only computes an address.
                let p = unsafe { (self.api.ptr)(sym as *const c_void, q as c_int) };
                if p.is_null() {
                    PeerPath::Remote
                } else {
                    PeerPath::LoadStore(p as u64)
                }
            })
            .collect()
    }

    /// Fills the NVSHMEM device state of a loaded module (`CUmodule`) whose
    /// cubin was linked with `libnvshmem_device.a`.
    ///
    /// # Safety
    /// `module` is a live `CUmodule` of the current context, loaded from a
    /// cubin built by [`super::compile::compile_megakernel`], and stays
    /// loaded until [`Nvshmem::finalize_modules`] (or `self`'s drop).
    pub unsafe fn init_module(&mut self, module: *mut c_void) -> Result<()> {
        // SAFETY: the caller's contract.
        check("nvshmemx_cumodule_init", unsafe {
            (self.api.cumodule_init)(module)
        })?;
        self.modules.push(module as usize);
        Ok(())
    }

    /// How the device reaches every PE's copy of `sym`: [`Nvshmem::paths`],
    /// with every load/store peer turned NVSHMEM-only under
    /// [`force_remote`].
    pub fn device_paths(&self, sym: u64) -> Vec<PeerPath> {
        forced(self.paths(sym), force_remote())
    }

    /// A symmetric area of at least `bytes` for one run's state arrays and
    /// Status words: the previous run's when it is large enough, else a new
    /// one (the old one stays allocated until NVSHMEM is finalized: freeing
    /// is collective and unbounded). Collective: every rank asks for the
    /// same size (every rank lowers the same run, checked before this call),
    /// so every rank makes the same choice.
    pub fn run_area(&mut self, bytes: usize) -> Result<u64> {
        if let Some((a, n)) = self.run_area {
            if n >= bytes {
                return Ok(a);
            }
        }
        let n = bytes.next_power_of_two().max(64 << 10);
        let a = self.malloc(n)?;
        self.run_area = Some((a, n));
        Ok(a)
    }

    /// `nvshmemx_cumodule_finalize` on every module [`Nvshmem::init_module`]
    /// initialised: the GPU backend calls it before unloading them.
    pub fn finalize_modules(&mut self) {
        for m in self.modules.drain(..) {
            // SAFETY: `m` was initialised by init_module and its module is
            // still loaded (the init_module contract: the caller finalizes
            // before unloading).
            unsafe { (self.api.cumodule_finalize)(m as *mut c_void) };
        }
    }

    /// `nvshmem_barrier_all` (collective).
    pub fn barrier_all(&self) {
        // SAFETY: NVSHMEM is initialised.
        unsafe { (self.api.barrier_all)() }
    }
}

impl Drop for Nvshmem {
    fn drop(&mut self) {
        self.finalize_modules();
        for p in self.allocs.drain(..) {
            // SAFETY: `p` came from nvshmem_malloc and is freed once.
            unsafe { (self.api.free)(p as *mut c_void) };
        }
        // SAFETY: NVSHMEM was initialised by `init` and is finalized once.
        unsafe { (self.api.hostlib_finalize)() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_id_survives_the_allgather_encoding_and_a_short_one_is_refused() {
        let mut u = UniqueId::zeroed();
        u.internal[0] = 7;
        u.internal[123] = 9;
        let b = u.to_bytes();
        assert_eq!(b.len(), 128);
        let v = UniqueId::from_bytes(&b).unwrap();
        assert_eq!(v.version, (1 << 16) + 128);
        assert_eq!((v.internal[0], v.internal[123]), (7, 9));
        assert!(UniqueId::from_bytes(&b[..127]).is_none());
    }

    #[test]
    fn peer_table_entry_is_zero_only_for_peers_reachable_through_nvshmem_alone() {
        assert_eq!(PeerPath::Local.table_entry(0x1000), 0x1000);
        assert_eq!(PeerPath::LoadStore(0x2000).table_entry(0x1000), 0x2000);
        assert_eq!(PeerPath::Remote.table_entry(0x1000), 0);
        assert_eq!(PeerPath::Remote.name(), "nvshmem");
    }

    #[test]
    fn forcing_remote_turns_load_store_peers_into_nvshmem_only_and_keeps_this_pe() {
        let p = vec![PeerPath::LoadStore(0x10), PeerPath::Local, PeerPath::Remote];
        assert_eq!(forced(p.clone(), false), p);
        assert_eq!(
            forced(p, true),
            vec![PeerPath::Remote, PeerPath::Local, PeerPath::Remote]
        );
    }

    /// Where libnvshmem_host is installed, it loads and reports the version
    /// its headers say (no GPU needed: nothing is initialised); elsewhere
    /// the error names where it looked. Skips visibly when absent.
    #[test]
    fn nvshmem_host_library_loads_and_reports_its_headers_version_or_says_where_it_looked() {
        match nvshmem_info() {
            Ok((install, v)) => {
                let want = install.version.expect("version header");
                assert_eq!(
                    (v.0 as u32, v.1 as u32, v.2 as u32),
                    want,
                    "{}",
                    install.root.display()
                );
            }
            Err(Error::NvshmemNotFound { looked, .. }) => {
                eprintln!("SKIP: NVSHMEM not found (looked in {looked:?})");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
