//! Symmetric memory: every PE has a heap of the same size, and an
//! allocation lives at the same offset of every PE's heap. Task arguments
//! carry a PE's own address ([`SymBuffer::addr`]); device code reaches a
//! peer's copy through the peer-pointer table (`ctx.peer(ptr, pe)`), which
//! holds every heap's base as the calling PE reaches it.
//!
//! Heaps are reserved at the first allocation ([`crate::Builder::symmetric_heap_bytes`]
//! each) and freed with the runtime; allocations are bump-allocated at
//! 256-byte alignment and never freed individually.

use std::marker::PhantomData;
use std::sync::Arc;

use parking_lot::Mutex;

use std::ops::Range;

use super::driver::{Context, DeviceMem};
use super::transport::{share, Peers};
use crate::{Error, Result};

/// Alignment of every symmetric allocation (bytes).
pub const SYM_ALIGN: usize = 256;

enum HeapMem {
    /// One device allocation per PE, as this process reaches it: its own
    /// allocations for the PEs it hosts, CUDA IPC mappings of the other
    /// ranks' (multi-process runs).
    Gpu(Vec<DeviceMem>),
    /// One host allocation per PE (the emulator), registered like a
    /// [`super::Buffer`]'s, so CPU bodies reach it through `cpu_slice`.
    Host(Vec<super::host_mem::HostBuffer>),
    /// One `nvshmem_malloc` (Transport::Nvshmem), at the same address on
    /// every PE.
    #[cfg(feature = "nvshmem")]
    Nvshmem {
        /// Every PE's heap as this process's host copies reach it: this
        /// PE's own, a load/store peer's `nvshmem_ptr` mapping, or `None`
        /// (another node: only the device reaches it, with NVSHMEM puts).
        host: Vec<Option<DeviceMem>>,
        /// Every PE's peer-table entry (autarky/nvshmem.cuh: 0 for
        /// NVSHMEM-only peers).
        device: Vec<u64>,
        /// The symmetric address (every PE's own base).
        sym: u64,
        /// Keeps NVSHMEM (and so the allocation) alive while buffers are.
        _job: Arc<super::nvshmem::boot::Job>,
    },
}

/// Every PE's heap.
pub(crate) struct SymHeap {
    mem: HeapMem,
    /// Every PE's heap base as its own process has it (what task
    /// arguments carry); `None`: the same as `mem`'s addresses (one
    /// process).
    own: Option<Vec<u64>>,
    /// Every PE's context for host copies of its heap (its GPU's for this
    /// process's PEs; the mapping's, this process's first GPU's, for the
    /// others), made current before each copy: the thread's current
    /// context may be another runtime's, or one released since (a copy
    /// then failed with CUDA_ERROR_CONTEXT_IS_DESTROYED, or, into
    /// NVSHMEM's memory from another GPU's context, INVALID_VALUE). Empty
    /// on the emulator.
    ctxs: Vec<Arc<Context>>,
    bytes: usize,
    next: Mutex<usize>,
    /// Emulator runs in flight on these heaps (host memory). A host copy
    /// holds the lock while it copies and is refused while any run is in
    /// flight: with host memory a copy racing a run's bodies, or another
    /// thread's copy, would be a data race (a torn read, found by a
    /// user's trial), where on a GPU it is a copy racing a kernel.
    runs: Mutex<usize>,
}

/// An emulator run in flight on a [`SymHeap`] (see `SymHeap::runs`).
pub(crate) struct RunGuard<'a>(&'a SymHeap);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        *self.0.runs.lock() -= 1;
    }
}

impl Drop for SymHeap {
    fn drop(&mut self) {
        // The heaps are freed (field `mem`, dropped after this) with a live
        // context of this runtime current, not whatever the thread has (a
        // context released since would fail the frees, which drop ignores).
        if let Some(c) = self.ctxs.first() {
            let _ = c.bind();
        }
    }
}

impl SymHeap {
    /// Marks an emulator run in flight until the guard drops: host copies
    /// are refused meanwhile. Waits only for a host copy in progress.
    pub(crate) fn enter_run(&self) -> RunGuard<'_> {
        *self.runs.lock() += 1;
        RunGuard(self)
    }

    /// Runs `copy` (a host copy of host-memory heaps) unless a run is in
    /// flight, holding the lock so no run starts and no other copy runs
    /// meanwhile.
    fn host_copy(
        &self,
        addr: u64,
        bytes: usize,
        exclusive: bool,
        copy: impl FnOnce(*mut u8),
    ) -> Result<()> {
        let runs = self.runs.lock();
        if *runs > 0 {
            return Err(Error::BufferAccess(super::BufferAccessError {
                addr,
                bytes,
                reason: format!(
                    "{} emulator run{} of this runtime {} in flight (another thread): \
                     symmetric buffers are copied between runs",
                    *runs,
                    if *runs == 1 { "" } else { "s" },
                    if *runs == 1 { "is" } else { "are" }
                ),
            }));
        }
        // And a borrow of the range, so no cpu_slice a host thread holds
        // overlaps the copy.
        super::host_mem::with_borrow(addr, bytes, exclusive, copy)?;
        drop(runs);
        Ok(())
    }

    /// Zeroed device heaps, `bytes` each, one on the GPU of every context.
    pub(crate) fn alloc_gpu(ctxs: &[&Context], bytes: usize) -> Result<Vec<DeviceMem>> {
        let mut mems = Vec::with_capacity(ctxs.len());
        for ctx in ctxs {
            let m = DeviceMem::alloc(ctx, bytes)?;
            m.fill_bytes(0)?;
            mems.push(m);
        }
        Ok(mems)
    }

    /// Every PE's heap: `mine` are the heaps of PEs `local` (allocated by
    /// [`SymHeap::alloc_gpu`]); the other ranks' are mapped (collective
    /// with several ranks; in one process, `mine` are all the heaps).
    pub(crate) fn gpu_shared(
        peers: &dyn Peers,
        ctx: &Context,
        local: Range<u32>,
        mine: Vec<DeviceMem>,
        bytes: usize,
    ) -> Result<SymHeap> {
        if peers.ranks() == 1 {
            return Ok(SymHeap {
                mem: HeapMem::Gpu(mine),
                own: None,
                ctxs: Vec::new(),
                bytes,
                next: Mutex::new(0),
                runs: Mutex::new(0),
            });
        }
        let refs: Vec<&DeviceMem> = mine.iter().collect();
        let shared = share(peers, ctx, "symmetric heap", &refs)?;
        let mut mapped = shared.mappings.into_iter();
        let mut mine = mine.into_iter();
        let mems = (0..shared.own.len() as u32)
            .map(|q| {
                if local.contains(&q) {
                    mine.next()
                } else {
                    mapped.next()
                }
                .expect("share returns one entry per PE")
            })
            .collect();
        Ok(SymHeap {
            mem: HeapMem::Gpu(mems),
            own: Some(shared.own),
            ctxs: Vec::new(),
            bytes,
            next: Mutex::new(0),
            runs: Mutex::new(0),
        })
    }

    /// The heap of a `Transport::Nvshmem` runtime: `bytes` of NVSHMEM's
    /// symmetric heap (collective: every rank reserves it now), zeroed on
    /// this PE, and every PE reached through `nvshmem_ptr`.
    #[cfg(feature = "nvshmem")]
    pub(crate) fn nvshmem(
        job: Arc<super::nvshmem::boot::Job>,
        ctx: &Context,
        bytes: usize,
    ) -> Result<SymHeap> {
        use super::nvshmem::host::PeerPath;
        let (sym, host_paths, device_paths) = {
            let mut nv = job.nv.lock();
            let sym = nv.malloc(bytes)?;
            (sym, nv.paths(sym), nv.device_paths(sym))
        };
        ctx.bind()?;
        let host = host_paths
            .iter()
            .map(|p| match *p {
                // SAFETY: `sym` (this PE's) and a peer's nvshmem_ptr mapping
                // of it are `bytes` of device memory reachable from this
                // context, allocated until NVSHMEM is finalized, which `_job`
                // (held next to the views) delays until the heap drops.
                PeerPath::Local => Some(unsafe { DeviceMem::borrowed(sym, bytes) }),
                // SAFETY: as above.
                PeerPath::LoadStore(a) => Some(unsafe { DeviceMem::borrowed(a, bytes) }),
                PeerPath::Remote => None,
            })
            .collect::<Vec<_>>();
        host.iter()
            .zip(&host_paths)
            .find(|(_, p)| **p == PeerPath::Local)
            .and_then(|(m, _)| m.as_ref())
            .expect("this PE is among the paths")
            .fill_bytes(0)?;
        Ok(SymHeap {
            mem: HeapMem::Nvshmem {
                device: device_paths.iter().map(|p| p.table_entry(sym)).collect(),
                host,
                sym,
                _job: job,
            },
            own: None,
            ctxs: Vec::new(),
            bytes,
            next: Mutex::new(0),
            runs: Mutex::new(0),
        })
    }

    /// Host heaps for the emulator, `bytes` each (zeroed pages are mapped
    /// lazily by the OS, so an unused heap costs address space only).
    pub(crate) fn host(pes: u32, bytes: usize) -> Result<SymHeap> {
        // Fallibly: a heap larger than the host can give is an error, not
        // an abort of the process (`vec!` aborts on allocation failure).
        // Registered host buffers (zeroed by the allocator: fresh pages
        // are not touched until used), so CPU bodies can borrow symmetric
        // memory with `cpu_slice` as they do a Buffer's.
        let one = || -> Result<super::host_mem::HostBuffer> {
            super::host_mem::HostBuffer::new(bytes).ok_or_else(|| Error::HostMemory {
                bytes,
                what: "a PE's symmetric heap on the emulator (Builder::symmetric_heap_bytes)"
                    .into(),
            })
        };
        Ok(SymHeap {
            mem: HeapMem::Host((0..pes).map(|_| one()).collect::<Result<_>>()?),
            own: None,
            ctxs: Vec::new(),
            bytes,
            next: Mutex::new(0),
            runs: Mutex::new(0),
        })
    }

    /// Base address of every PE's heap as its own process has it.
    pub(crate) fn own_bases(&self) -> Vec<u64> {
        #[cfg(feature = "nvshmem")]
        if let HeapMem::Nvshmem { sym, device, .. } = &self.mem {
            return vec![*sym; device.len()];
        }
        match &self.own {
            Some(o) => o.clone(),
            None => self.bases(),
        }
    }

    /// Base address of every PE's heap as this process reaches it (device
    /// or host addresses).
    pub(crate) fn bases(&self) -> Vec<u64> {
        match &self.mem {
            HeapMem::Gpu(m) => m.iter().map(|m| m.ptr()).collect(),
            HeapMem::Host(h) => h.iter().map(|h| h.addr()).collect(),
            #[cfg(feature = "nvshmem")]
            HeapMem::Nvshmem { device, .. } => device.clone(),
        }
    }

    fn pes(&self) -> u32 {
        match &self.mem {
            HeapMem::Gpu(m) => m.len() as u32,
            HeapMem::Host(h) => h.len() as u32,
            #[cfg(feature = "nvshmem")]
            HeapMem::Nvshmem { device, .. } => device.len() as u32,
        }
    }

    /// PE `pe`'s heap as this process's copies reach it (NVSHMEM: `None`
    /// for a PE on another node).
    #[cfg(feature = "nvshmem")]
    fn nvshmem_host(&self, pe: u32) -> Option<Result<&DeviceMem>> {
        match &self.mem {
            HeapMem::Nvshmem { host, .. } => Some(host[pe as usize].as_ref().ok_or_else(|| {
                Error::Unsupported {
                    backend: "nvshmem",
                    option: "SymBuffer copy of a PE on another node",
                    reason: format!(
                        "PE {pe}'s symmetric heap is reachable only through NVSHMEM puts from the device; copy from the process that hosts it (Runtime::local_pes)"
                    ),
                }
            })),
            _ => None,
        }
    }

    /// Sets every PE's context for host copies (see `ctxs`).
    pub(crate) fn with_contexts(mut self, ctxs: Vec<Arc<Context>>) -> SymHeap {
        self.ctxs = ctxs;
        self
    }

    /// Makes PE `pe`'s context current for a host copy of its heap.
    fn bind(&self, pe: u32) -> Result<()> {
        if let Some(c) = self.ctxs.get(pe as usize) {
            c.bind()?;
        }
        Ok(())
    }

    fn reserve(&self, bytes: usize) -> Result<usize> {
        let mut next = self.next.lock();
        let off = next.next_multiple_of(SYM_ALIGN);
        if off + bytes > self.bytes {
            return Err(Error::InvalidConfig(format!(
                "symmetric heap exhausted: {bytes} bytes wanted at offset {off} of {}; raise Builder::symmetric_heap_bytes",
                self.bytes
            )));
        }
        *next = off + bytes;
        Ok(off)
    }
}

/// A buffer of `len` values of `T` on every PE, at the same offset of each
/// PE's symmetric heap.
pub struct SymBuffer<T> {
    heap: Arc<SymHeap>,
    offset: usize,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> std::fmt::Debug for SymBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymBuffer")
            .field("offset", &self.offset)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: bytemuck::Pod> SymBuffer<T> {
    pub(crate) fn new(heap: Arc<SymHeap>, len: usize) -> Result<SymBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::InvalidConfig(format!("symmetric buffer of {len} elements overflows"))
        })?;
        let offset = heap.reserve(bytes)?;
        Ok(SymBuffer {
            heap,
            offset,
            len,
            _t: PhantomData,
        })
    }

    /// Elements per PE.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is the buffer empty?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte offset in every PE's heap.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// PE `pe`'s copy's address: a device address on the GPU, a host
    /// address on the emulator. Put it in the arguments of tasks of PE `pe`.
    /// In a multi-process run it is the address in the process that hosts
    /// PE `pe` (the same value on every rank).
    ///
    /// # Panics
    /// If `pe` is not a PE of the runtime.
    pub fn addr(&self, pe: u32) -> u64 {
        self.heap.own_bases()[pe as usize] + self.offset as u64
    }

    fn check(&self, pe: u32, n: usize) -> Result<()> {
        if pe >= self.heap.pes() {
            return Err(Error::InvalidConfig(format!(
                "PE {pe} does not exist (the runtime has {} PE{})",
                self.heap.pes(),
                if self.heap.pes() == 1 { "" } else { "s" }
            )));
        }
        if n != self.len {
            return Err(Error::InvalidConfig(format!(
                "copy of {n} elements into a symmetric buffer of {}",
                self.len
            )));
        }
        Ok(())
    }

    /// Copies `data` (exactly `len` elements) into PE `pe`'s copy. Not while
    /// a run that uses the buffer is in flight: on the emulator (host
    /// memory) a copy while any run of the runtime is in flight on another
    /// thread is refused ([`Error::BufferAccess`]), and copies from several
    /// threads take turns; on a GPU it would race the kernel. In a multi-process run a
    /// PE of another rank is written through its CUDA IPC mapping: order
    /// it against that rank's own accesses ([`crate::Runtime::barrier`]).
    pub fn copy_from(&self, pe: u32, data: &[T]) -> Result<()> {
        self.check(pe, data.len())?;
        self.heap.bind(pe)?;
        #[cfg(feature = "nvshmem")]
        if let Some(m) = self.heap.nvshmem_host(pe) {
            return m?.upload_at(self.offset, data);
        }
        match &self.heap.mem {
            HeapMem::Gpu(m) => Ok(m[pe as usize].upload_at(self.offset, data)?),
            #[cfg(feature = "nvshmem")]
            HeapMem::Nvshmem { .. } => unreachable!("handled above"),
            HeapMem::Host(_) => {
                let bytes: &[u8] = bytemuck::cast_slice(data);
                self.heap
                    .host_copy(self.addr(pe), bytes.len(), true, |dst| {
                        // SAFETY: 1. `dst` is the start of an exclusive borrow of
                        // exactly these bytes of PE pe's heap (host_copy holds it,
                        // and the heap's lock with no emulator run in flight), so
                        // nothing else reads or writes them now; 2. the regions
                        // cannot overlap (one is the caller's slice).
                        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) }
                    })
            }
        }
    }

    /// PE `pe`'s copy.
    pub fn to_vec(&self, pe: u32) -> Result<Vec<T>> {
        self.check(pe, self.len)?;
        self.heap.bind(pe)?;
        let mut out = vec![T::zeroed(); self.len];
        #[cfg(feature = "nvshmem")]
        if let Some(m) = self.heap.nvshmem_host(pe) {
            m?.download_at(self.offset, &mut out)?;
            return Ok(out);
        }
        match &self.heap.mem {
            HeapMem::Gpu(m) => m[pe as usize].download_at(self.offset, &mut out)?,
            #[cfg(feature = "nvshmem")]
            HeapMem::Nvshmem { .. } => unreachable!("handled above"),
            HeapMem::Host(_) => {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
                let (addr, n) = (self.addr(pe), bytes.len());
                // SAFETY: `src` starts a shared borrow of exactly these bytes
                // of PE pe's heap (host_copy holds it, and the lock with no
                // run in flight), so nothing writes them now; `out` is ours.
                self.heap.host_copy(addr, n, false, |src| unsafe {
                    std::ptr::copy_nonoverlapping(src, bytes.as_mut_ptr(), n)
                })?;
            }
        }
        Ok(out)
    }

    /// Copies `data` into every PE's copy.
    pub fn copy_to_all(&self, data: &[T]) -> Result<()> {
        for pe in 0..self.heap.pes() {
            self.copy_from(pe, data)?;
        }
        Ok(())
    }
}
