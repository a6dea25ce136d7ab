//! Typed buffers on every backend: device memory on the GPU, registered
//! host memory on the emulator ([`super::host_mem`]). Task arguments carry
//! a buffer's [`Buffer::addr`]; device bodies dereference it, CPU bodies
//! reach it through [`cpu_slice`](super::host_mem::cpu_slice) /
//! [`cpu_slice_mut`](super::host_mem::cpu_slice_mut).

use std::marker::PhantomData;
use std::sync::Arc;

use bytemuck::Pod;

use super::driver::{Context, DeviceMem};
use super::host_mem::{BufferAccessError, HostBuffer};
use crate::{Error, Result};

/// `len` elements of `T` on the runtime's backend, zeroed at allocation
/// ([`crate::Runtime::alloc`]).
///
/// A run does not take ownership of the buffers its tasks point to: keep
/// every buffer alive until the runs that use it have returned. (On the GPU
/// a buffer freed under a running kernel makes its accesses fault; on the
/// emulator a body's access to a dropped buffer is refused.) The host
/// methods copy synchronously; calling them while a run uses the buffer
/// races with its tasks (on the emulator the race is detected and refused).
pub struct Buffer<T> {
    mem: Mem,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

enum Mem {
    /// Field order is drop order: the memory is freed before this
    /// buffer's reference to the context is released.
    Device {
        mem: DeviceMem,
        ctx: Arc<Context>,
    },
    Host(HostBuffer),
}

impl<T: Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("backend", &self.backend_name())
            .field("len", &self.len)
            .field("addr", &format_args!("{:#x}", self.addr()))
            .finish()
    }
}

fn bytes_for<T>(len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::InvalidConfig(format!(
            "a buffer of {len} × {} bytes overflows the address space",
            std::mem::size_of::<T>()
        ))
    })
}

impl<T: Pod> Buffer<T> {
    /// `len` zeroed elements of device memory.
    pub(crate) fn device(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let mem = DeviceMem::alloc(ctx, bytes_for::<T>(len)?)?;
        mem.fill_bytes(0)?;
        Ok(Buffer {
            mem: Mem::Device {
                mem,
                ctx: ctx.clone(),
            },
            len,
            _t: PhantomData,
        })
    }

    /// `len` zeroed elements of registered host memory.
    pub(crate) fn host(len: usize) -> Result<Self> {
        let bytes = bytes_for::<T>(len)?;
        if std::mem::align_of::<T>() > super::host_mem::HOST_ALIGN {
            return Err(Error::InvalidConfig(format!(
                "element alignment {} exceeds the emulator's buffer alignment {}",
                std::mem::align_of::<T>(),
                super::host_mem::HOST_ALIGN
            )));
        }
        let mem = HostBuffer::new(bytes).ok_or_else(|| Error::HostMemory {
            bytes,
            what: format!("an emulator buffer of {len} elements"),
        })?;
        Ok(Buffer {
            mem: Mem::Host(mem),
            len,
            _t: PhantomData,
        })
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address to put in task arguments: a device address on the GPU,
    /// a host address on the emulator.
    pub fn addr(&self) -> u64 {
        match &self.mem {
            Mem::Device { mem, .. } => mem.ptr(),
            Mem::Host(h) => h.addr(),
        }
    }

    /// `"gpu"` or `"emulator"`.
    pub fn backend_name(&self) -> &'static str {
        match self.mem {
            Mem::Device { .. } => "gpu",
            Mem::Host(_) => "emulator",
        }
    }

    /// Copies `data` into the buffer (synchronous). `data.len()` must equal
    /// [`Buffer::len`], else [`Error::BufferSize`].
    pub fn copy_from(&self, data: &[T]) -> Result<()> {
        self.check_len("copy_from", data.len())?;
        match &self.mem {
            Mem::Device { mem, ctx } => {
                ctx.bind()?;
                mem.upload(data)
            }
            Mem::Host(h) => {
                let mut dst = self.host_mut(h)?;
                dst.copy_from_slice(data);
                Ok(())
            }
        }
    }

    /// The buffer's contents (synchronous).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        match &self.mem {
            Mem::Device { mem, ctx } => {
                let mut v = vec![T::zeroed(); self.len];
                ctx.bind()?;
                mem.download(&mut v)?;
                Ok(v)
            }
            Mem::Host(h) => {
                let src = super::host_mem::cpu_slice::<T>(h.addr(), self.len)
                    .map_err(Error::BufferAccess)?;
                Ok(src.to_vec())
            }
        }
    }

    /// Sets every byte to zero (synchronous).
    pub fn fill_zero(&self) -> Result<()> {
        match &self.mem {
            Mem::Device { mem, ctx } => {
                ctx.bind()?;
                mem.fill_bytes(0)
            }
            Mem::Host(h) => {
                self.host_mut(h)?.fill(T::zeroed());
                Ok(())
            }
        }
    }

    fn host_mut(&self, h: &HostBuffer) -> Result<super::host_mem::CpuSliceMut<T>> {
        debug_assert_eq!(h.bytes(), self.len * std::mem::size_of::<T>());
        super::host_mem::cpu_slice_mut::<T>(h.addr(), self.len)
            .map_err(|e: BufferAccessError| Error::BufferAccess(e))
    }

    fn check_len(&self, op: &'static str, got: usize) -> Result<()> {
        if got != self.len {
            return Err(Error::BufferSize {
                op,
                len: self.len,
                got,
            });
        }
        Ok(())
    }
}
