//! The CUDA driver boundary: every driver call autarky makes is in this
//! file, wrapped in an owning type whose methods return `Result`. Calls go
//! through cudarc's `result` layer (`cudarc::driver::result`); raw `sys`
//! calls remain only where cudarc has no wrapper (`cuStreamQuery`, which
//! must tell "not ready" from an error; peer access; the device pointer of
//! host-mapped memory). Everything above this file is safe Rust.
//!
//! Every call is also noted in a per-thread call log when recording is on
//! ([`CallLog`]); the runtime records from just before the launch until the
//! kernel has ended, and tests assert that the log holds exactly one
//! `cuLaunchCooperativeKernel` and nothing but `cuStreamQuery` after it —
//! the definition of a CPU-free run (DESIGN.md).
//!
//! Callers must have loaded the driver first (`super::libs::ensure_driver`):
//! with dynamic loading, cudarc panics when libcuda is absent.
//!
//! Why not cudarc's safe types (`CudaContext`, `CudaSlice`, `CudaStream`):
//! a `CudaSlice` records an event on every stream that uses it, and a later
//! operation on the slice waits for that event — with a kernel that runs
//! until the graph ends, a deadlock. From cudarc 0.19.10's source,
//! `CudaContext::disable_event_tracking` (an `unsafe fn`) makes slices
//! created after the call record nothing, which would remove that wait, at
//! the price of every slice of the context giving up cross-stream
//! synchronization; `CudaContext::new` also panics without libcuda. This
//! reading has not been checked on a GPU. The megakernel is therefore given
//! raw device addresses from the owning types here, which track nothing.

use std::cell::RefCell;
use std::ffi::{c_void, CStr};
use std::ptr;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUresult};

use crate::Error;

thread_local! {
    static LOG: RefCell<Option<Vec<&'static str>>> = const { RefCell::new(None) };
}

/// Records the driver calls this thread makes between `start` and `take`.
pub struct CallLog;

impl CallLog {
    /// Starts recording on this thread (clearing any earlier record).
    pub fn start() {
        LOG.with(|l| *l.borrow_mut() = Some(Vec::new()));
    }
    /// Stops recording and returns the calls made since `start`.
    pub fn take() -> Vec<&'static str> {
        LOG.with(|l| l.borrow_mut().take().unwrap_or_default())
    }
}

fn note(name: &'static str) {
    LOG.with(|l| {
        if let Some(v) = l.borrow_mut().as_mut() {
            v.push(name);
        }
    });
}

fn check(call: &'static str, r: CUresult) -> Result<(), Error> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut s: *const std::ffi::c_char = ptr::null();
    // SAFETY: cuGetErrorName only writes a pointer to a static string (or
    // leaves it null for an unknown code); `s` is a valid out-pointer.
    unsafe { sys::cuGetErrorName(r, &mut s) };
    let name = if s.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null results of cuGetErrorName are static NUL-terminated strings.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    Err(Error::Driver {
        call,
        code: r as u32,
        name,
    })
}

/// A `cudarc::driver::result` call: noted in the call log under the driver
/// function's name, its error mapped to [`Error::Driver`].
fn via<T>(call: &'static str, r: Result<T, DriverError>) -> Result<T, Error> {
    note(call);
    r.map_err(|e| match check(call, e.0) {
        Err(err) => err,
        // A DriverError always carries a failure code.
        Ok(()) => Error::Driver {
            call,
            code: e.0 as u32,
            name: format!("{:?}", e.0),
        },
    })
}

/// Calls a raw `sys` driver function (only those cudarc's `result` layer
/// does not wrap), notes it in the call log and checks the result.
/// Expands to an `unsafe` call: every use site states why its arguments are valid.
macro_rules! cu {
    ($f:ident($($a:expr),* $(,)?)) => {{
        note(stringify!($f));
        check(stringify!($f), sys::$f($($a),*))
    }};
}

/// Static facts about a device.
#[derive(Clone, Debug)]
pub struct DeviceProps {
    /// Device name.
    pub name: String,
    /// Multiprocessors.
    pub sm_count: u32,
    /// Compute capability `(major, minor)`.
    pub cc: (u32, u32),
    /// Total memory in bytes.
    pub total_mem: usize,
    /// L2 cache in bytes.
    pub l2_bytes: usize,
    /// The most L2 a context may set aside for persisting lines
    /// ([`crate::L2Persist`]).
    pub max_persisting_l2: usize,
    /// The longest L2 access-policy window.
    pub max_l2_window: usize,
}

impl DeviceProps {
    /// `major * 10 + minor` (90 for an H100/H200).
    pub fn arch(&self) -> u32 {
        self.cc.0 * 10 + self.cc.1
    }
}

/// The primary context of one device, retained while this lives.
pub struct Context {
    ctx: sys::CUcontext,
    dev: sys::CUdevice,
    /// Device facts.
    pub props: DeviceProps,
}

// SAFETY: a CUcontext handle may be used from any thread once made current
// there (`bind`); the driver synchronizes access to it internally.
unsafe impl Send for Context {}
// SAFETY: as above; `&Context` only exposes calls that bind first.
unsafe impl Sync for Context {}

/// Number of CUDA devices (initializing the driver).
pub fn device_count() -> Result<u32, Error> {
    via("cuInit", result::init())?;
    let n = via("cuDeviceGetCount", result::device::get_count())?;
    Ok(n.max(0) as u32)
}

impl Context {
    /// Can this context's device load and store `peer`'s device memory
    /// directly (peer-to-peer over NVLink or PCIe)?
    pub fn can_access_peer(&self, peer: &Context) -> Result<bool, Error> {
        let mut ok = 0i32;
        // SAFETY: both devices came from cuDeviceGet; `ok` is a valid out-pointer.
        unsafe { cu!(cuDeviceCanAccessPeer(&mut ok, self.dev, peer.dev))? };
        Ok(ok != 0)
    }

    /// Lets kernels of this context access `peer`'s memory (its UVA
    /// addresses). Already enabled is fine.
    pub fn enable_peer_access(&self, peer: &Context) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: this context is current (bind) and `peer.ctx` is a live
        // retained primary context; flags must be 0.
        let r = unsafe { sys::cuCtxEnablePeerAccess(peer.ctx, 0) };
        note("cuCtxEnablePeerAccess");
        if r == CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        check("cuCtxEnablePeerAccess", r)
    }

    /// The device ordinal's handle (for diagnostics).
    pub fn device(&self) -> i32 {
        self.dev
    }

    /// Retains device `ordinal`'s primary context and makes it current.
    pub fn new(ordinal: u32) -> Result<Context, Error> {
        via("cuInit", result::init())?;
        let dev = via("cuDeviceGet", result::device::get(ordinal as i32))?;
        let attr = |a: sys::CUdevice_attribute, dev: sys::CUdevice| -> Result<u32, Error> {
            // SAFETY: `dev` came from cuDeviceGet.
            let v = via("cuDeviceGetAttribute", unsafe {
                result::device::get_attribute(dev, a)
            })?;
            Ok(v as u32)
        };
        // SAFETY: `dev` came from cuDeviceGet; the retained context is
        // released once, in Drop.
        let ctx = via("cuDevicePrimaryCtxRetain", unsafe {
            result::primary_ctx::retain(dev)
        })?;
        // SAFETY: `ctx` was just retained.
        via("cuCtxSetCurrent", unsafe { result::ctx::set_current(ctx) })?;
        let name = via("cuDeviceGetName", result::device::get_name(dev))?;
        // SAFETY: `dev` came from cuDeviceGet.
        let total = via("cuDeviceTotalMem_v2", unsafe {
            result::device::total_mem(dev)
        })?;
        use sys::CUdevice_attribute::*;
        let props = DeviceProps {
            name,
            sm_count: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)?,
            cc: (
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)?,
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)?,
            ),
            total_mem: total,
            l2_bytes: attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)? as usize,
            max_persisting_l2: attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev)?
                as usize,
            max_l2_window: attr(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev)? as usize,
        };
        if attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev)? == 0 {
            return Err(Error::NoGpu {
                reason: format!(
                    "device {ordinal} ({}) does not support cooperative launch",
                    props.name
                ),
            });
        }
        Ok(Context { ctx, dev, props })
    }

    /// Makes this context current on the calling thread.
    pub fn bind(&self) -> Result<(), Error> {
        // SAFETY: `ctx` is a retained primary context (released only in Drop).
        via("cuCtxSetCurrent", unsafe {
            result::ctx::set_current(self.ctx)
        })
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize), Error> {
        self.bind()?;
        via("cuMemGetInfo_v2", result::mem_get_info())
    }

    /// The L2 now set aside for persisting lines, in bytes. This context
    /// must be current.
    pub fn persisting_l2(&self) -> Result<usize, Error> {
        let mut v = 0usize;
        // SAFETY: a plain driver call on the current context, writing `v`.
        check("cuCtxGetLimit", unsafe {
            sys::cuCtxGetLimit(&mut v, sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        })?;
        Ok(v)
    }

    /// Sets `bytes` of L2 aside for persisting lines (0: none, and the
    /// lines persisting so far become normal first). This context must be
    /// current.
    pub fn set_persisting_l2(&self, bytes: usize) -> Result<(), Error> {
        if bytes == 0 {
            // SAFETY: a plain driver call on the current context.
            check("cuCtxResetPersistingL2Cache", unsafe {
                sys::cuCtxResetPersistingL2Cache()
            })?;
        }
        // SAFETY: as above.
        check("cuCtxSetLimit", unsafe {
            sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, bytes)
        })
    }

    /// Blocks until all work in the context is done.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.bind()?;
        via("cuCtxSynchronize", result::ctx::synchronize())
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: we retained the primary context of `dev` in `new`.
        let _ = via("cuDevicePrimaryCtxRelease_v2", unsafe {
            result::primary_ctx::release(self.dev)
        });
    }
}

/// Device memory (`cuMemAlloc`), freed on drop; or another process's
/// allocation opened through CUDA IPC ([`DeviceMem::open_ipc`]), closed on
/// drop.
pub struct DeviceMem {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    /// `Some(base)`: an IPC mapping whose `cuIpcOpenMemHandle` returned
    /// `base` (`ptr` may lie past it); closed instead of freed.
    ipc_base: Option<sys::CUdeviceptr>,
    /// Memory owned by someone else ([`DeviceMem::borrowed`]): neither
    /// freed nor closed on drop.
    borrowed: bool,
}

/// What another process needs to map one of this process's allocations
/// (`cuIpcGetMemHandle` of the allocation that holds it, and where in that
/// allocation the memory starts). Plain bytes: it travels over MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpcHandle {
    /// The driver's opaque handle of the whole allocation.
    pub handle: [u8; 64],
    /// Bytes from the allocation's base to the memory.
    pub offset: u64,
    /// Size of the memory in bytes.
    pub bytes: u64,
}

impl IpcHandle {
    /// Encoded size in bytes ([`IpcHandle::to_bytes`]).
    pub const ENCODED: usize = 64 + 8 + 8;

    /// `handle`, then `offset` and `bytes` little-endian.
    pub fn to_bytes(&self) -> [u8; Self::ENCODED] {
        let mut b = [0u8; Self::ENCODED];
        b[..64].copy_from_slice(&self.handle);
        b[64..72].copy_from_slice(&self.offset.to_le_bytes());
        b[72..80].copy_from_slice(&self.bytes.to_le_bytes());
        b
    }

    /// The inverse of [`IpcHandle::to_bytes`].
    ///
    /// # Panics
    /// If `b` is shorter than [`IpcHandle::ENCODED`].
    pub fn from_bytes(b: &[u8]) -> IpcHandle {
        let mut handle = [0u8; 64];
        handle.copy_from_slice(&b[..64]);
        IpcHandle {
            handle,
            offset: u64::from_le_bytes(b[64..72].try_into().expect("8 bytes")),
            bytes: u64::from_le_bytes(b[72..80].try_into().expect("8 bytes")),
        }
    }
}

// SAFETY: a device pointer is a plain address valid in any thread of the
// process once its context is current; access is through `&self`/`&mut self`.
unsafe impl Send for DeviceMem {}
// SAFETY: as above; shared access only copies in or out with driver calls.
unsafe impl Sync for DeviceMem {}

impl DeviceMem {
    /// Allocates `bytes` (at least 1) of device memory in the current context.
    pub fn alloc(ctx: &Context, bytes: usize) -> Result<DeviceMem, Error> {
        ctx.bind()?;
        // SAFETY: context bound; freed once, in Drop.
        let ptr = via("cuMemAlloc_v2", unsafe {
            result::malloc_sync(bytes.max(1))
        })?;
        Ok(DeviceMem {
            ptr,
            bytes,
            ipc_base: None,
            borrowed: false,
        })
    }

    /// The IPC handle another process opens with [`DeviceMem::open_ipc`]
    /// to reach this memory (same GPU or a peer GPU).
    pub fn ipc_handle(&self, ctx: &Context) -> Result<IpcHandle, Error> {
        ctx.bind()?;
        let mut base: sys::CUdeviceptr = 0;
        let mut size = 0usize;
        // SAFETY: `ptr` is a live device allocation of the bound context;
        // both out-pointers are valid.
        unsafe { cu!(cuMemGetAddressRange_v2(&mut base, &mut size, self.ptr))? };
        let mut h = sys::CUipcMemHandle_st { reserved: [0; 64] };
        // SAFETY: `base` is the base of a cuMemAlloc allocation (what
        // cuIpcGetMemHandle requires); `h` is a valid out-pointer.
        unsafe { cu!(cuIpcGetMemHandle(&mut h, base))? };
        Ok(IpcHandle {
            handle: h.reserved.map(|c| c as u8),
            offset: self.ptr - base,
            bytes: self.bytes as u64,
        })
    }

    /// Maps another process's allocation into `ctx` (CUDA IPC; peer access
    /// is enabled lazily when it lives on another GPU). The mapping is
    /// closed on drop; the exporting process must keep the memory alive
    /// until then.
    pub fn open_ipc(ctx: &Context, h: &IpcHandle) -> Result<DeviceMem, Error> {
        ctx.bind()?;
        let handle = sys::CUipcMemHandle_st {
            reserved: h.handle.map(|b| b as std::ffi::c_char),
        };
        let mut base: sys::CUdeviceptr = 0;
        // SAFETY: the context is bound; `handle` came from cuIpcGetMemHandle
        // in another process (opening one's own handle fails with an error,
        // not UB); `base` is a valid out-pointer; the mapping is closed once,
        // in Drop.
        unsafe {
            cu!(cuIpcOpenMemHandle_v2(
                &mut base,
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32
            ))?
        };
        Ok(DeviceMem {
            ptr: base + h.offset,
            bytes: h.bytes as usize,
            ipc_base: Some(base),
            borrowed: false,
        })
    }

    /// A view of `bytes` at device address `ptr` that another owner
    /// allocated (NVSHMEM's symmetric heap): copies in and out like any
    /// allocation, nothing freed on drop.
    ///
    /// # Safety
    /// `[ptr, ptr + bytes)` is device memory reachable from the context
    /// current at each copy, and stays allocated while the view lives.
    #[cfg_attr(not(feature = "nvshmem"), allow(dead_code))] // NVSHMEM's heap
    pub(crate) unsafe fn borrowed(ptr: u64, bytes: usize) -> DeviceMem {
        DeviceMem {
            ptr,
            bytes,
            ipc_base: None,
            borrowed: true,
        }
    }

    /// Allocates and fills with `data`.
    pub fn from_slice<T: bytemuck::Pod>(ctx: &Context, data: &[T]) -> Result<DeviceMem, Error> {
        let m = Self::alloc(ctx, std::mem::size_of_val(data))?;
        m.upload(data)?;
        Ok(m)
    }

    /// Device address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Copies `data` to the start of this allocation (synchronous).
    ///
    /// # Panics
    /// If `data` is larger than the allocation.
    pub fn upload<T: bytemuck::Pod>(&self, data: &[T]) -> Result<(), Error> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        assert!(
            bytes.len() <= self.bytes,
            "upload of {} bytes into {}",
            bytes.len(),
            self.bytes
        );
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the destination range lies inside this allocation (asserted)
        // and the source is a live slice of the same length.
        via("cuMemcpyHtoD_v2", unsafe {
            result::memcpy_htod_sync(self.ptr, bytes)
        })
    }

    /// Copies the start of this allocation into `out` (synchronous).
    ///
    /// # Panics
    /// If `out` is larger than the allocation.
    pub fn download<T: bytemuck::Pod>(&self, out: &mut [T]) -> Result<(), Error> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        assert!(
            bytes.len() <= self.bytes,
            "download of {} bytes from {}",
            bytes.len(),
            self.bytes
        );
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the source range lies inside this allocation (asserted) and
        // the destination is a live, writable slice of the same length.
        via("cuMemcpyDtoH_v2", unsafe {
            result::memcpy_dtoh_sync(bytes, self.ptr)
        })
    }

    /// Copies `data` to byte offset `offset` of this allocation (synchronous).
    ///
    /// # Panics
    /// If the range does not lie inside the allocation.
    pub fn upload_at<T: bytemuck::Pod>(&self, offset: usize, data: &[T]) -> Result<(), Error> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        assert!(offset + bytes.len() <= self.bytes, "upload out of range");
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the destination range lies inside this allocation (asserted)
        // and the source is a live slice of the same length.
        via("cuMemcpyHtoD_v2", unsafe {
            result::memcpy_htod_sync(self.ptr + offset as u64, bytes)
        })
    }

    /// Copies from byte offset `offset` of this allocation into `out`.
    ///
    /// # Panics
    /// If the range does not lie inside the allocation.
    pub fn download_at<T: bytemuck::Pod>(&self, offset: usize, out: &mut [T]) -> Result<(), Error> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        assert!(offset + bytes.len() <= self.bytes, "download out of range");
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the source range lies inside this allocation (asserted) and
        // the destination is a live, writable slice of the same length.
        via("cuMemcpyDtoH_v2", unsafe {
            result::memcpy_dtoh_sync(bytes, self.ptr + offset as u64)
        })
    }

    /// Sets every byte to `value` (synchronous).
    pub fn fill_bytes(&self, value: u8) -> Result<(), Error> {
        // SAFETY: the range is exactly this allocation.
        via("cuMemsetD8_v2", unsafe {
            result::memset_d8_sync(self.ptr, value, self.bytes.max(1))
        })
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        if self.borrowed {
            return;
        }
        match self.ipc_base {
            Some(base) => {
                // SAFETY: `base` came from cuIpcOpenMemHandle and is closed
                // once, here.
                let _ = unsafe { cu!(cuIpcCloseMemHandle(base)) };
            }
            None => {
                // SAFETY: `ptr` came from cuMemAlloc and is freed once, here.
                let _ = via("cuMemFree_v2", unsafe { result::free_sync(self.ptr) });
            }
        }
    }
}

/// Pinned host memory mapped into the device's address space: the only
/// memory the host touches while a run is in flight.
pub struct HostMapped {
    host: *mut u8,
    dev: sys::CUdeviceptr,
    bytes: usize,
}

// SAFETY: the pinned allocation is a plain host address valid in every thread.
unsafe impl Send for HostMapped {}
// SAFETY: shared access reads/writes through volatile pointer operations only.
unsafe impl Sync for HostMapped {}

impl HostMapped {
    /// Allocates `bytes` of zeroed, device-mapped, pinned host memory.
    pub fn alloc(ctx: &Context, bytes: usize) -> Result<HostMapped, Error> {
        ctx.bind()?;
        let mut dev = 0;
        // SAFETY: 1. context bound; the flags ask for a mapping valid in
        // every context (PORTABLE) and on the device (DEVICEMAP); freed once,
        // in Drop; 2. `dev` is a live out-pointer (cudarc has no wrapper for
        // cuMemHostGetDevicePointer); 3. `host` points at `bytes.max(1)`
        // writable bytes, which we zero.
        let host = unsafe {
            let host = via(
                "cuMemHostAlloc",
                result::malloc_host(
                    bytes.max(1),
                    sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
                ),
            )?;
            cu!(cuMemHostGetDevicePointer_v2(&mut dev, host, 0))?;
            ptr::write_bytes(host as *mut u8, 0, bytes.max(1));
            host
        };
        Ok(HostMapped {
            host: host as *mut u8,
            dev,
            bytes,
        })
    }

    /// Device address of the mapping.
    pub fn dev_ptr(&self) -> u64 {
        self.dev
    }

    /// Volatile read of a `T` at byte `offset`.
    ///
    /// # Panics
    /// If the read would go past the end or is misaligned.
    pub fn read<T: bytemuck::Pod>(&self, offset: usize) -> T {
        assert!(
            offset + std::mem::size_of::<T>() <= self.bytes
                && offset % std::mem::align_of::<T>() == 0
        );
        // SAFETY: in bounds and aligned (asserted); the device writes this
        // memory concurrently, hence volatile (no torn values for the ≤ 8-byte
        // words we read: naturally aligned loads are single accesses).
        unsafe { ptr::read_volatile(self.host.add(offset) as *const T) }
    }

    /// Volatile write of a `T` at byte `offset`.
    ///
    /// # Panics
    /// If the write would go past the end or is misaligned.
    pub fn write<T: bytemuck::Pod>(&self, offset: usize, v: T) {
        assert!(
            offset + std::mem::size_of::<T>() <= self.bytes
                && offset % std::mem::align_of::<T>() == 0
        );
        // SAFETY: in bounds and aligned (asserted); volatile because the
        // device reads it concurrently.
        unsafe { ptr::write_volatile(self.host.add(offset) as *mut T, v) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for HostMapped {
    fn drop(&mut self) {
        // SAFETY: `host` came from cuMemHostAlloc and is freed once, here.
        let _ = via("cuMemFreeHost", unsafe {
            result::free_host(self.host as *mut c_void)
        });
    }
}

/// A loaded module (CUBIN).
pub struct Module {
    m: sys::CUmodule,
}

// SAFETY: module handles are process-wide; use binds the context first.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Module {
    /// Loads a CUBIN into the context.
    pub fn load(ctx: &Context, cubin: &[u8]) -> Result<Module, Error> {
        ctx.bind()?;
        // SAFETY: `cubin` is a complete ELF image (from NVRTC) that lives
        // across the call; the driver copies it.
        let m = via("cuModuleLoadData", unsafe {
            result::module::load_data(cubin.as_ptr() as *const c_void)
        })?;
        Ok(Module { m })
    }

    /// The raw `CUmodule` (for `nvshmemx_cumodule_init`).
    #[cfg_attr(not(feature = "nvshmem"), allow(dead_code))]
    pub(crate) fn raw(&self) -> *mut c_void {
        self.m as *mut c_void
    }

    /// The kernel named `name`.
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        let c = std::ffi::CString::new(name).expect("kernel name has a NUL");
        // SAFETY: `m` is a loaded module.
        let f = via("cuModuleGetFunction", unsafe {
            result::module::get_function(self.m, c)
        })?;
        Ok(Function { f })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, unloaded once here.
        let _ = via("cuModuleUnload", unsafe { result::module::unload(self.m) });
    }
}

/// A kernel of a [`Module`] (valid while the module lives: keep both).
#[derive(Clone, Copy)]
pub struct Function {
    f: sys::CUfunction,
}

// SAFETY: function handles are process-wide.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl Function {
    /// Resident blocks per SM at `threads` threads per block.
    pub fn occupancy(&self, threads: u32, dynamic_smem: usize) -> Result<u32, Error> {
        // SAFETY: `f` is a live function.
        let n = via("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.f,
                threads as i32,
                dynamic_smem,
            )
        })?;
        Ok(n.max(0) as u32)
    }

    /// Registers per thread.
    pub fn registers(&self) -> Result<u32, Error> {
        // SAFETY: `f` is a live function.
        let n = via("cuFuncGetAttribute", unsafe {
            result::function::get_function_attribute(
                self.f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
            )
        })?;
        Ok(n.max(0) as u32)
    }

    /// Cooperative launch with one by-value parameter `param`.
    ///
    /// # Safety
    /// The kernel's only parameter must have exactly `P`'s layout, and every
    /// device address inside `param` must stay valid until the kernel ends.
    pub unsafe fn launch_cooperative<P: bytemuck::Pod>(
        &self,
        stream: &Stream,
        grid: u32,
        threads: u32,
        param: &P,
    ) -> Result<(), Error> {
        let mut args = [param as *const P as *mut c_void];
        // SAFETY: (1) the parameter layout matches (caller's contract); (2)
        // `args` holds one pointer to a live value, which the driver copies
        // before returning; (3) the stream is live.
        via("cuLaunchCooperativeKernel", unsafe {
            result::launch_cooperative_kernel(
                self.f,
                (grid, 1, 1),
                (threads, 1, 1),
                0,
                stream.s,
                &mut args,
            )
        })
    }

    /// Ordinary launch with raw kernel parameters (`params[i]` points at the
    /// i-th argument's value).
    ///
    /// # Safety
    /// `params` must match the kernel's parameter list in number, order and
    /// layout, and every device address they carry must stay valid until the
    /// kernel ends.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        grid: u32,
        threads: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the parameter list; the stream is live.
        via("cuLaunchKernel", unsafe {
            result::launch_kernel(self.f, (grid, 1, 1), (threads, 1, 1), 0, stream.s, params)
        })
    }
}

/// A non-blocking stream.
pub struct Stream {
    s: sys::CUstream,
}

// SAFETY: stream handles are process-wide; the driver serializes use.
unsafe impl Send for Stream {}
// SAFETY: as above.
unsafe impl Sync for Stream {}

impl Stream {
    /// A new stream that does not synchronize with the legacy default stream.
    pub fn new(ctx: &Context) -> Result<Stream, Error> {
        ctx.bind()?;
        let s = via(
            "cuStreamCreate",
            result::stream::create(result::stream::StreamKind::NonBlocking),
        )?;
        Ok(Stream { s })
    }

    /// `Ok(true)` when all work on the stream has finished, `Ok(false)` while
    /// it runs, `Err` when it failed (the error of the kernel).
    pub fn query(&self) -> Result<bool, Error> {
        note("cuStreamQuery");
        // SAFETY: the stream is live.
        let r = unsafe { sys::cuStreamQuery(self.s) };
        if r == CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check("cuStreamQuery", r).map(|_| true)
    }

    /// An L2 access-policy window on this stream: kernels launched on it
    /// afterwards treat `hit_ratio` of `[base, base + bytes)` as persisting
    /// (kept in the context's set-aside L2, [`Context::set_persisting_l2`])
    /// and the rest as streaming.
    pub fn set_l2_window(&self, base: u64, bytes: usize, hit_ratio: f32) -> Result<(), Error> {
        // SAFETY: zero is a valid bit pattern of the attribute union, whose
        // window member is set in full below; the stream is live.
        unsafe {
            let mut v: sys::CUstreamAttrValue = std::mem::zeroed();
            v.accessPolicyWindow = sys::CUaccessPolicyWindow {
                base_ptr: base as *mut c_void,
                num_bytes: bytes,
                hitRatio: hit_ratio,
                hitProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
                missProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            };
            check(
                "cuStreamSetAttribute",
                sys::cuStreamSetAttribute(
                    self.s,
                    sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                    &v,
                ),
            )
        }
    }

    /// Blocks until all work on the stream has finished.
    pub fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: the stream is live.
        via("cuStreamSynchronize", unsafe {
            result::stream::synchronize(self.s)
        })
    }

    /// Starts capturing this stream's work into a graph.
    pub fn begin_capture(&self) -> Result<(), Error> {
        // SAFETY: the stream is live and not capturing.
        via("cuStreamBeginCapture_v2", unsafe {
            result::stream::begin_capture(
                self.s,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })
    }

    /// Ends the capture and instantiates the captured graph.
    pub fn end_capture(&self) -> Result<GraphExec, Error> {
        // SAFETY: the stream is capturing (begin_capture); the graph is
        // destroyed once instantiated (the exec owns a copy).
        unsafe {
            let g = via("cuStreamEndCapture", result::stream::end_capture(self.s))?;
            let e = via(
                "cuGraphInstantiateWithFlags",
                result::graph::instantiate(g, sys::CUgraphInstantiate_flags(0)),
            );
            via("cuGraphDestroy", result::graph::destroy(g))?;
            Ok(GraphExec { e: e? })
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here.
        let _ = via("cuStreamDestroy_v2", unsafe {
            result::stream::destroy(self.s)
        });
    }
}

/// An instantiated CUDA graph.
pub struct GraphExec {
    e: sys::CUgraphExec,
}

impl GraphExec {
    /// Launches the graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<(), Error> {
        // SAFETY: both handles are live.
        via("cuGraphLaunch", unsafe {
            result::graph::launch(self.e, stream.s)
        })
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: instantiated in end_capture, destroyed once here.
        let _ = via("cuGraphExecDestroy", unsafe {
            result::graph::exec_destroy(self.e)
        });
    }
}

/// A timing event.
pub struct Event {
    e: sys::CUevent,
}

impl Event {
    /// A new event with timing enabled.
    pub fn new(ctx: &Context) -> Result<Event, Error> {
        ctx.bind()?;
        let e = via(
            "cuEventCreate",
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT),
        )?;
        Ok(Event { e })
    }

    /// Records the event on `stream`.
    pub fn record(&self, stream: &Stream) -> Result<(), Error> {
        // SAFETY: both handles are live.
        via("cuEventRecord", unsafe {
            result::event::record(self.e, stream.s)
        })
    }

    /// Milliseconds from `self` to `end` (both recorded and complete).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, Error> {
        // SAFETY: both events are live.
        unsafe {
            via("cuEventSynchronize", result::event::synchronize(end.e))?;
            via(
                "cuEventElapsedTime_v2",
                result::event::elapsed(self.e, end.e),
            )
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here.
        let _ = via("cuEventDestroy_v2", unsafe {
            result::event::destroy(self.e)
        });
    }
}
