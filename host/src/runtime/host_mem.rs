//! Host memory for emulator buffers, and the only way Rust code touches it:
//! borrows checked against a process-wide registry.
//!
//! # Protocol
//!
//! An emulator [`Buffer`](super::Buffer) owns one zeroed host allocation
//! ([`HostAlloc`]) and registers it here under its base address while the
//! buffer lives. Task arguments carry plain addresses (`u64`), so a CPU
//! body finds its memory by address: [`cpu_slice`] / [`cpu_slice_mut`]
//! look the range up in the registry and *borrow* it:
//!
//! - a shared borrow is granted when no live exclusive borrow overlaps it;
//!   an exclusive borrow when no live borrow of any kind overlaps it;
//! - a borrow is released when its guard ([`CpuSlice`], [`CpuSliceMut`])
//!   drops; the guard also holds the allocation (an `Arc`), so memory is
//!   never freed under a guard, even if the buffer is dropped meanwhile;
//! - the host side of a buffer (`copy_from`, `to_vec`, `fill_zero`) takes
//!   the same borrows.
//!
//! Grants and releases happen under the registry's lock, so a release
//! happens before every later grant that overlaps it: a body that writes a
//! range and returns publishes its writes to the next borrower, in addition
//! to the scheduler's own ordering. Two borrows that conflict at the same
//! time are a data race the graph did not order (a missing edge): the
//! second is refused with [`BufferAccessError`], never granted.
//!
//! This is what makes the accessors safe to call with any address: an
//! address outside every live emulator buffer, a misaligned one, or a
//! range past a buffer's end is an error, not undefined behaviour.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Alignment of every emulator buffer (bytes): at least a cache line, so
/// buffers do not share lines, and enough for any `Pod` element type
/// autarky accepts up to this alignment.
pub(crate) const HOST_ALIGN: usize = 64;

/// One zeroed host allocation, freed when the last owner (the buffer or a
/// guard) drops.
pub(crate) struct HostAlloc {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: HostAlloc is a plain heap allocation; it is only read or written
// through borrows granted by the registry (module docs), which serialize
// conflicting accesses across threads.
unsafe impl Send for HostAlloc {}
// SAFETY: as above: `&HostAlloc` gives no access to the bytes by itself.
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    /// `bytes` zeroed bytes aligned to [`HOST_ALIGN`], or `None` when the
    /// size overflows a layout or the allocator fails.
    fn zeroed(bytes: usize) -> Option<HostAlloc> {
        let layout = Layout::from_size_align(bytes.max(1), HOST_ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(HostAlloc { ptr, layout })
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once here.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// A live borrow of `[start, end)`.
struct Borrow {
    id: u64,
    start: usize,
    end: usize,
    exclusive: bool,
}

/// A registered buffer: its memory and the borrows live on it.
struct Region {
    mem: Arc<HostAlloc>,
    bytes: usize,
    borrows: Vec<Borrow>,
}

/// Every live emulator buffer, by base address.
static REGISTRY: Mutex<BTreeMap<usize, Region>> = Mutex::new(BTreeMap::new());
static NEXT_BORROW: AtomicU64 = AtomicU64::new(1);

/// Why a buffer access was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("buffer access to {bytes} bytes at {addr:#x} refused: {reason}")]
pub struct BufferAccessError {
    /// Address asked for.
    pub addr: u64,
    /// Bytes asked for.
    pub bytes: usize,
    /// Why, in words.
    pub reason: String,
}

impl BufferAccessError {
    /// The failure code a CPU body returns when it converts this error with
    /// `?`. When a body fails with this code, the emulator reports the run
    /// as [`Error::TaskBufferAccess`](crate::Error::TaskBufferAccess) with
    /// the last refusal that body converted on its own thread (also logged
    /// through `tracing` at the conversion); with none, `Error::TaskFailed`.
    pub const CODE: u32 = 0xB0FF_00E4;
}

impl From<BufferAccessError> for u32 {
    fn from(e: BufferAccessError) -> u32 {
        tracing::error!("{e}");
        LAST_REFUSAL.with(|r| *r.borrow_mut() = Some(e));
        BufferAccessError::CODE
    }
}

thread_local! {
    /// The refusal a body on this thread last converted to its code: the
    /// emulator attaches it to the run's error
    /// ([`crate::Error::TaskBufferAccess`]), so the reason reaches the
    /// caller and not only the log.
    static LAST_REFUSAL: std::cell::RefCell<Option<BufferAccessError>> =
        const { std::cell::RefCell::new(None) };
}

/// Takes the refusal this thread's body last converted (emulator).
pub(crate) fn take_last_refusal() -> Option<BufferAccessError> {
    LAST_REFUSAL.with(|r| r.borrow_mut().take())
}

/// The emulator side of a [`Buffer`](super::Buffer): the registered
/// allocation, unregistered on drop.
pub(crate) struct HostBuffer {
    mem: Arc<HostAlloc>,
    bytes: usize,
}

impl HostBuffer {
    /// Allocates and registers `bytes` zeroed bytes.
    pub(crate) fn new(bytes: usize) -> Option<HostBuffer> {
        let mem = Arc::new(HostAlloc::zeroed(bytes)?);
        REGISTRY.lock().insert(
            mem.ptr.as_ptr() as usize,
            Region {
                mem: mem.clone(),
                bytes,
                borrows: Vec::new(),
            },
        );
        Some(HostBuffer { mem, bytes })
    }

    /// Base address (what task arguments carry).
    pub(crate) fn addr(&self) -> u64 {
        self.mem.ptr.as_ptr() as usize as u64
    }

    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // Later lookups fail; guards still alive keep the memory.
        REGISTRY.lock().remove(&(self.mem.ptr.as_ptr() as usize));
    }
}

/// A granted borrow; releases it on drop.
struct Token {
    base: usize,
    id: u64,
    ptr: NonNull<u8>,
    _mem: Arc<HostAlloc>,
}

impl Drop for Token {
    fn drop(&mut self) {
        if let Some(r) = REGISTRY.lock().get_mut(&self.base) {
            r.borrows.retain(|b| b.id != self.id);
        }
    }
}

/// Borrows `bytes` at `addr`, aligned to `align`, from a live buffer.
fn borrow(
    addr: u64,
    bytes: usize,
    align: usize,
    exclusive: bool,
) -> Result<Token, BufferAccessError> {
    let err = |reason: String| BufferAccessError {
        addr,
        bytes,
        reason,
    };
    let start = usize::try_from(addr).map_err(|_| err("not a host address".into()))?;
    let end = start
        .checked_add(bytes)
        .ok_or_else(|| err("the range wraps around".into()))?;
    if start % align != 0 {
        return Err(err(format!("misaligned for a {align}-byte element")));
    }
    let mut reg = REGISTRY.lock();
    let Some((&base, region)) = reg.range_mut(..=start).next_back() else {
        return Err(err("not inside a live emulator buffer".into()));
    };
    if end > base + region.bytes {
        return Err(err(if start < base + region.bytes {
            format!(
                "runs {} bytes past the end of the buffer of {} bytes at {base:#x}",
                end - (base + region.bytes),
                region.bytes
            )
        } else {
            format!(
                "not inside a live emulator buffer (the nearest one below is {} bytes at {base:#x})",
                region.bytes
            )
        }));
    }
    if let Some(b) = region
        .borrows
        .iter()
        .find(|b| b.start < end && start < b.end && (exclusive || b.exclusive))
    {
        return Err(err(format!(
            "overlaps a concurrent {} access to [{:#x}, {:#x}) that nothing orders before or after it — two task instances (a missing edge in the graph?), or a task and the host (host copies belong between runs)",
            if b.exclusive { "exclusive" } else { "shared" },
            b.start,
            b.end
        )));
    }
    let id = NEXT_BORROW.fetch_add(1, Ordering::Relaxed);
    region.borrows.push(Borrow {
        id,
        start,
        end,
        exclusive,
    });
    let offset = start - base;
    // SAFETY: `offset ≤ region.bytes` (checked above), so the pointer stays
    // inside (or one past the end of) the allocation.
    let ptr = unsafe { NonNull::new_unchecked(region.mem.ptr.as_ptr().add(offset)) };
    Ok(Token {
        base,
        id,
        ptr,
        _mem: region.mem.clone(),
    })
}

/// Runs `f` on the bytes `[addr, addr + bytes)` of a live emulator buffer
/// (a symmetric heap's host copy), holding a borrow of them — exclusive
/// when `exclusive` — so no `cpu_slice` elsewhere overlaps it meanwhile.
pub(crate) fn with_borrow(
    addr: u64,
    bytes: usize,
    exclusive: bool,
    f: impl FnOnce(*mut u8),
) -> Result<(), BufferAccessError> {
    let token = borrow(addr, bytes, 1, exclusive)?;
    f(token.ptr.as_ptr());
    drop(token);
    Ok(())
}

/// Shared access to `len` elements of `T` in an emulator buffer; derefs to
/// `&[T]`. See [`cpu_slice`].
pub struct CpuSlice<T> {
    token: Token,
    len: usize,
    _t: PhantomData<*const T>,
}

/// Exclusive access to `len` elements of `T` in an emulator buffer; derefs
/// to `&mut [T]`. See [`cpu_slice_mut`].
pub struct CpuSliceMut<T> {
    token: Token,
    len: usize,
    _t: PhantomData<*mut T>,
}

impl<T: bytemuck::Pod> std::ops::Deref for CpuSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: 1. the memory is live: the token holds the allocation;
        // 2. `len * size_of::<T>()` bytes from `ptr` lie inside it and `ptr`
        // is aligned for T (checked when borrowed; for zero bytes any
        // aligned non-null pointer is valid); 3. every byte pattern is a
        // valid T (Pod) and the bytes are initialized (allocated zeroed,
        // written only as Pod values); 4. no exclusive borrow overlaps
        // this one while the token lives, and all Rust access to the
        // memory goes through borrows, so nothing mutates it meanwhile.
        unsafe { std::slice::from_raw_parts(self.token.ptr.as_ptr() as *const T, self.len) }
    }
}

impl<T: bytemuck::Pod> std::ops::Deref for CpuSliceMut<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: as for CpuSlice; this borrow is exclusive.
        unsafe { std::slice::from_raw_parts(self.token.ptr.as_ptr() as *const T, self.len) }
    }
}

impl<T: bytemuck::Pod> std::ops::DerefMut for CpuSliceMut<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for CpuSlice (1–3), and 4. no other borrow of any kind
        // overlaps this one while the token lives, and `&mut self` makes
        // this the only reference derived from it.
        unsafe { std::slice::from_raw_parts_mut(self.token.ptr.as_ptr() as *mut T, self.len) }
    }
}

fn byte_len<T>(addr: u64, len: usize) -> Result<usize, BufferAccessError> {
    len.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| BufferAccessError {
            addr,
            bytes: usize::MAX,
            reason: format!("{len} elements overflow the address space"),
        })
}

/// Reads `len` elements of `T` at `addr` in an emulator buffer (from
/// [`Buffer::addr`](super::Buffer::addr)), for CPU task bodies.
///
/// Safe for any `addr`: the range must lie inside a live emulator buffer,
/// be aligned for `T`, and not overlap a concurrent exclusive access
/// (`cpu_slice_mut` by another running instance, or the host writing the
/// buffer), else [`BufferAccessError`]. Hold the guard only for the body's
/// duration. In a body, `?` turns the error into a failure code
/// ([`BufferAccessError::CODE`]).
pub fn cpu_slice<T: bytemuck::Pod>(
    addr: u64,
    len: usize,
) -> Result<CpuSlice<T>, BufferAccessError> {
    let token = borrow(
        addr,
        byte_len::<T>(addr, len)?,
        std::mem::align_of::<T>(),
        false,
    )?;
    Ok(CpuSlice {
        token,
        len,
        _t: PhantomData,
    })
}

/// Reads and writes `len` elements of `T` at `addr` in an emulator buffer,
/// for CPU task bodies. As [`cpu_slice`], but exclusive: refused while any
/// other access overlaps the range.
pub fn cpu_slice_mut<T: bytemuck::Pod>(
    addr: u64,
    len: usize,
) -> Result<CpuSliceMut<T>, BufferAccessError> {
    let token = borrow(
        addr,
        byte_len::<T>(addr, len)?,
        std::mem::align_of::<T>(),
        true,
    )?;
    Ok(CpuSliceMut {
        token,
        len,
        _t: PhantomData,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_exclusive_borrows_are_refused_until_released() {
        let b = HostBuffer::new(64).unwrap();
        let w = cpu_slice_mut::<u32>(b.addr(), 8).unwrap();
        assert!(
            cpu_slice::<u32>(b.addr() + 28, 1).is_err(),
            "overlaps the write"
        );
        let other = cpu_slice_mut::<u32>(b.addr() + 32, 8).unwrap(); // disjoint
        drop(w);
        let r1 = cpu_slice::<u32>(b.addr(), 8).unwrap();
        let r2 = cpu_slice::<u32>(b.addr(), 8).unwrap(); // shared with shared
        assert!(cpu_slice_mut::<u32>(b.addr(), 1).is_err());
        drop((r1, r2, other));
        assert!(cpu_slice_mut::<u32>(b.addr(), 16).is_ok());
    }

    #[test]
    fn ranges_outside_a_buffer_or_misaligned_are_refused() {
        let b = HostBuffer::new(16).unwrap();
        assert!(cpu_slice::<u32>(b.addr(), 5).is_err(), "past the end");
        assert!(cpu_slice::<u32>(b.addr() + 2, 1).is_err(), "misaligned");
        assert!(cpu_slice::<u8>(8, 1).is_err(), "no buffer there");
        assert!(cpu_slice::<u32>(b.addr(), usize::MAX).is_err(), "overflow");
        let addr = b.addr();
        drop(b);
        assert!(cpu_slice::<u8>(addr, 1).is_err(), "buffer dropped");
    }

    #[test]
    fn writes_through_one_borrow_are_seen_by_the_next() {
        let b = HostBuffer::new(4 * 10).unwrap();
        cpu_slice_mut::<u32>(b.addr(), 10)
            .unwrap()
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as u32 * 3);
        let r = cpu_slice::<u32>(b.addr(), 10).unwrap();
        assert_eq!(r[9], 27);
    }

    #[test]
    fn a_guard_keeps_memory_alive_after_its_buffer_drops() {
        let b = HostBuffer::new(8).unwrap();
        let mut w = cpu_slice_mut::<u64>(b.addr(), 1).unwrap();
        drop(b);
        w[0] = 7; // still valid memory (Miri would flag a use after free)
        assert_eq!(w[0], 7);
    }
}
