//! Linking relocatable device code with nvJitLink (`libnvJitLink.so.13`,
//! loaded at run time). nvJitLink runs on the CPU: no GPU or driver is
//! needed to produce the linked cubin, so this is tested everywhere the
//! library is present.
//!
//! Only the functions autarky calls are resolved. nvJitLink's header maps
//! each public name to a versioned symbol (`nvJitLinkCreate` →
//! `__nvJitLinkCreate_13_0`); the library exports both, and the unversioned
//! names are what CUDA 13's nvJitLink documents as its stable ABI.

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::os::unix::{Library, Symbol, RTLD_LOCAL, RTLD_NOW};

use super::find::{nvjitlink_search_dirs, search_nvjitlink, NvshmemEnv};
use crate::Error;

type Handle = *mut c_void;
/// `nvJitLinkInputType` values used here (nvJitLink.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Input {
    /// A (relocatable) cubin, e.g. NVRTC's output with `-rdc=true`.
    Cubin = 1,
    /// A host static library whose objects embed device code
    /// (`libnvshmem_device.a`).
    Library = 6,
}

struct Api {
    _lib: Library,
    create: unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> i32,
    destroy: unsafe extern "C" fn(*mut Handle) -> i32,
    add_data: unsafe extern "C" fn(Handle, i32, *const c_void, usize, *const c_char) -> i32,
    add_file: unsafe extern "C" fn(Handle, i32, *const c_char) -> i32,
    complete: unsafe extern "C" fn(Handle) -> i32,
    cubin_size: unsafe extern "C" fn(Handle, *mut usize) -> i32,
    cubin: unsafe extern "C" fn(Handle, *mut c_void) -> i32,
    error_log_size: unsafe extern "C" fn(Handle, *mut usize) -> i32,
    error_log: unsafe extern "C" fn(Handle, *mut c_char) -> i32,
    version: unsafe extern "C" fn(*mut u32, *mut u32) -> i32,
    path: PathBuf,
}

// SAFETY: `Api` holds a library handle and plain function pointers into it;
// nvJitLink's functions are thread-safe for distinct handles, and each link
// below owns its handle.
unsafe impl Send for Api {}
// SAFETY: as above; nothing in `Api` is mutated after loading.
unsafe impl Sync for Api {}

static API: OnceLock<Result<Api, Vec<String>>> = OnceLock::new();

fn load(path: &Path) -> Result<Api, String> {
    // SAFETY: loading runs the library's initialisers; libnvJitLink.so.13 is
    // found by its exact file name in CUDA/pip/linker directories and its
    // initialisers may run from any thread. RTLD_LOCAL: nothing else
    // resolves symbols through it.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| format!("{} (dlopen: {e})", path.display()))?;
    /// Reads one symbol as the function pointer type it is declared with.
    ///
    /// # Safety
    /// `T` must be the symbol's real C signature (nvJitLink.h, CUDA 13).
    unsafe fn sym<T: Copy>(lib: &Library, name: &[u8]) -> Result<T, String> {
        // SAFETY: the caller states that `T` is the symbol's type.
        let s: Symbol<T> = unsafe { lib.get(name) }.map_err(|e| e.to_string())?;
        Ok(*s)
    }
    // SAFETY: each type below is the signature nvJitLink.h (CUDA 13.0)
    // declares for that name: handles are `nvJitLinkHandle` (a pointer),
    // results `nvJitLinkResult` (a C enum, int-sized), input types
    // `nvJitLinkInputType` (a C enum).
    unsafe {
        Ok(Api {
            create: sym(&lib, b"nvJitLinkCreate\0")?,
            destroy: sym(&lib, b"nvJitLinkDestroy\0")?,
            add_data: sym(&lib, b"nvJitLinkAddData\0")?,
            add_file: sym(&lib, b"nvJitLinkAddFile\0")?,
            complete: sym(&lib, b"nvJitLinkComplete\0")?,
            cubin_size: sym(&lib, b"nvJitLinkGetLinkedCubinSize\0")?,
            cubin: sym(&lib, b"nvJitLinkGetLinkedCubin\0")?,
            error_log_size: sym(&lib, b"nvJitLinkGetErrorLogSize\0")?,
            error_log: sym(&lib, b"nvJitLinkGetErrorLog\0")?,
            version: sym(&lib, b"nvJitLinkVersion\0")?,
            path: path.to_path_buf(),
            _lib: lib,
        })
    }
}

fn api() -> Result<&'static Api, Error> {
    let r = API.get_or_init(|| {
        let dirs = nvjitlink_search_dirs(&NvshmemEnv::from_process());
        let path = search_nvjitlink(&dirs)?;
        load(&path).map_err(|e| vec![e])
    });
    r.as_ref().map_err(|looked| Error::NvshmemNotFound {
        part: "nvJitLink (libnvJitLink.so.13)",
        looked: looked.clone(),
        install: "`pip install nvidia-nvjitlink==13.0.88` (PyTorch's CUDA 13 wheels include it) and set AUTARKY_NVJITLINK_DIR to its site-packages/nvidia/cu13/lib",
    })
}

/// Where nvJitLink was loaded from and its `(major, minor)` version.
pub fn nvjitlink_info() -> Result<(PathBuf, (u32, u32)), Error> {
    let a = api()?;
    let (mut major, mut minor) = (0u32, 0u32);
    // SAFETY: two live, writable u32s; nvJitLinkVersion writes one each.
    let r = unsafe { (a.version)(&mut major, &mut minor) };
    if r != 0 {
        return Err(Error::NvJitLink {
            log: format!("nvJitLinkVersion returned {r}"),
            options: Vec::new(),
        });
    }
    Ok((a.path.clone(), (major, minor)))
}

/// One input of a link.
pub enum LinkInput<'a> {
    /// Bytes in memory, with a name for the log.
    Data {
        /// What the bytes are.
        kind: Input,
        /// The bytes.
        bytes: &'a [u8],
        /// Their name in nvJitLink's log.
        name: &'a str,
    },
    /// A file nvJitLink reads itself.
    File {
        /// What the file is.
        kind: Input,
        /// Its path.
        path: &'a Path,
    },
}

/// Owns an nvJitLink handle; destroys it on drop.
struct Linker<'a> {
    api: &'a Api,
    h: Handle,
}

impl Drop for Linker<'_> {
    fn drop(&mut self) {
        // SAFETY: `h` came from a successful nvJitLinkCreate and is destroyed
        // once, here.
        unsafe { (self.api.destroy)(&mut self.h) };
    }
}

impl Linker<'_> {
    fn error_log(&self) -> String {
        let mut n = 0usize;
        // SAFETY: `h` is live; `n` is writable.
        if unsafe { (self.api.error_log_size)(self.h, &mut n) } != 0 || n == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; n + 1];
        // SAFETY: `buf` has room for the `n` bytes (with NUL) nvJitLink reported.
        if unsafe { (self.api.error_log)(self.h, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }
}

/// Links `inputs` into one cubin with `options` (which must include
/// `-arch=sm_XX`). [`Error::NvJitLink`] carries nvJitLink's error log.
pub fn link(inputs: &[LinkInput], options: &[String]) -> Result<Vec<u8>, Error> {
    let api = api()?;
    let fail = |log: String| Error::NvJitLink {
        log,
        options: options.to_vec(),
    };
    let c_opts = options
        .iter()
        .map(|o| CString::new(o.as_str()).map_err(|_| fail(format!("option {o:?} has a NUL"))))
        .collect::<Result<Vec<_>, _>>()?;
    let ptrs: Vec<*const c_char> = c_opts.iter().map(|c| c.as_ptr()).collect();
    let mut h: Handle = std::ptr::null_mut();
    let n = u32::try_from(ptrs.len()).map_err(|_| fail("too many options".into()))?;
    // SAFETY: `h` is writable; `ptrs` holds `n` pointers to NUL-terminated
    // strings in `c_opts`, alive for the call (nvJitLink copies them).
    let r = unsafe { (api.create)(&mut h, n, ptrs.as_ptr()) };
    if r != 0 {
        return Err(fail(format!("nvJitLinkCreate returned {r}")));
    }
    let linker = Linker { api, h };
    for input in inputs {
        let r = match input {
            LinkInput::Data { kind, bytes, name } => {
                let cname = CString::new(*name).map_err(|_| fail("name has a NUL".into()))?;
                // SAFETY: `bytes` is live for the call (nvJitLink copies the
                // data); `cname` is NUL-terminated.
                unsafe {
                    (api.add_data)(
                        linker.h,
                        *kind as i32,
                        bytes.as_ptr().cast(),
                        bytes.len(),
                        cname.as_ptr(),
                    )
                }
            }
            LinkInput::File { kind, path } => {
                let cpath = CString::new(path.as_os_str().as_encoded_bytes())
                    .map_err(|_| fail(format!("{} has a NUL", path.display())))?;
                // SAFETY: `cpath` is NUL-terminated and live for the call.
                unsafe { (api.add_file)(linker.h, *kind as i32, cpath.as_ptr()) }
            }
        };
        if r != 0 {
            let what = match input {
                LinkInput::Data { name, .. } => (*name).to_string(),
                LinkInput::File { path, .. } => path.display().to_string(),
            };
            return Err(fail(format!(
                "adding {what} returned {r}\n{}",
                linker.error_log()
            )));
        }
    }
    // SAFETY: `h` is live.
    let r = unsafe { (api.complete)(linker.h) };
    if r != 0 {
        return Err(fail(format!(
            "nvJitLinkComplete returned {r}\n{}",
            linker.error_log()
        )));
    }
    let mut size = 0usize;
    // SAFETY: `h` is live and complete; `size` is writable.
    let r = unsafe { (api.cubin_size)(linker.h, &mut size) };
    if r != 0 {
        return Err(fail(format!("nvJitLinkGetLinkedCubinSize returned {r}")));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the `size` bytes nvJitLink reported.
    let r = unsafe { (api.cubin)(linker.h, cubin.as_mut_ptr().cast()) };
    if r != 0 {
        return Err(fail(format!("nvJitLinkGetLinkedCubin returned {r}")));
    }
    Ok(cubin)
}
