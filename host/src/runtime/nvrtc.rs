//! Compiling CUDA C++ to a CUBIN for one GPU architecture with NVRTC.
//!
//! This is the only module that calls `cudarc::nvrtc::sys`. It compiles
//! straight to SASS (`--gpu-architecture=sm_XX`, read back with
//! `nvrtcGetCUBIN`) rather than to PTX: the megakernel is built for the
//! device it runs on, and a CUBIN loads without the driver's JIT.
//!
//! Every compile first asks `libs::ensure_nvrtc` for the library (so a
//! missing NVRTC is an [`Error::NvrtcNotFound`], never cudarc's panic), then
//! the on-disk [`cache`](super::cache); only a miss runs NVRTC.

use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

use super::cache::{CubinCache, Key};
use super::libs::{self, NvrtcInfo};
use crate::Error;

/// One CUDA C++ translation unit to compile.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// File name NVRTC uses in diagnostics and line info (e.g. `"megakernel.cu"`).
    pub name: &'a str,
    /// The CUDA C++ source.
    pub source: &'a str,
    /// In-memory headers: `(include name, contents)`; `#include "<name>"`
    /// in `source` resolves to the contents.
    pub headers: &'a [(&'a str, &'a str)],
    /// Extra NVRTC options (e.g. `"-std=c++17"`, `"-lineinfo"`). Do not pass
    /// an architecture: it comes from `arch`.
    pub options: Vec<String>,
    /// Target compute capability ×10 without the dot: `90` for sm_90 (H100/H200).
    pub arch: u32,
}

impl Program<'_> {
    /// The options NVRTC is given: [`Program::options`] then the architecture.
    pub fn nvrtc_options(&self) -> Vec<String> {
        let mut o = self.options.clone();
        o.push(format!("--gpu-architecture=sm_{}", self.arch));
        o
    }

    fn cache_key(&self, nvrtc_version: (i32, i32)) -> Key {
        Key::new(
            self.name,
            self.source,
            self.headers,
            &self.nvrtc_options(),
            self.arch,
            nvrtc_version,
        )
    }
}

/// The NVRTC version `(major, minor)`, loading the library if needed.
pub fn nvrtc_version() -> Result<(i32, i32), Error> {
    libs::ensure_nvrtc().map(|i| i.version)
}

/// Where NVRTC was loaded from and its version, loading it if needed.
pub fn nvrtc_info() -> Result<NvrtcInfo, Error> {
    libs::ensure_nvrtc()
}

/// The file [`compile_cubin`] caches `p` in, or `None` when the cache is
/// off (`AUTARKY_CACHE=0`). The file need not exist.
pub fn cached_path(p: &Program) -> Result<Option<PathBuf>, Error> {
    let version = nvrtc_version()?;
    Ok(CubinCache::from_env().map(|c| c.path(&p.cache_key(version))))
}

/// What [`set_compile_notice`] is called with.
pub type CompileNotice = fn(name: &str, cache_file: Option<&std::path::Path>);

static COMPILE_NOTICE: std::sync::OnceLock<CompileNotice> = std::sync::OnceLock::new();

/// Installs `notice`, called before every compile the disk cache cannot
/// answer, with the program's name and the file its CUBIN will be cached
/// in (`None`: the cache is off). A front end can say why the first run
/// of a graph pauses: NVRTC takes ~15 s for a megakernel (the `autarky`
/// CLI prints a line on stderr). The first call wins; later ones are
/// ignored. Nothing is called by default.
pub fn set_compile_notice(notice: CompileNotice) {
    let _ = COMPILE_NOTICE.set(notice);
}

/// The keys being compiled in this process, and a wake-up for each end.
struct InFlight {
    keys: parking_lot::Mutex<std::collections::HashSet<Key>>,
    ended: parking_lot::Condvar,
}

fn in_flight() -> &'static InFlight {
    static IN_FLIGHT: std::sync::OnceLock<InFlight> = std::sync::OnceLock::new();
    IN_FLIGHT.get_or_init(|| InFlight {
        keys: Default::default(),
        ended: parking_lot::Condvar::new(),
    })
}

/// This thread's hold on compiling one key; let go (and waiters woken)
/// on drop, also when the compile fails or panics.
struct Compiling(Key);

impl Drop for Compiling {
    fn drop(&mut self) {
        let f = in_flight();
        f.keys.lock().remove(&self.0);
        f.ended.notify_all();
    }
}

/// Holds the compile of `key` in this process: waits while another
/// thread holds it.
fn compiling(key: Key) -> Compiling {
    let f = in_flight();
    let mut keys = f.keys.lock();
    while keys.contains(&key) {
        f.ended.wait(&mut keys);
    }
    keys.insert(key);
    Compiling(key)
}

/// Compiles `p` to a CUBIN for `sm_{p.arch}`, or returns it from the disk cache.
///
/// Errors: [`Error::NvrtcNotFound`] when libnvrtc.so.13 cannot be loaded;
/// [`Error::Nvrtc`] with NVRTC's log, verbatim, and the options used when
/// the compile fails. A cache that cannot be read or written is logged and
/// skipped; it never fails a compile.
pub fn compile_cubin(p: &Program) -> Result<Vec<u8>, Error> {
    let info = libs::ensure_nvrtc()?;
    let options = p.nvrtc_options();
    // Which variant this is (the paths compiled in or out), cached or not.
    tracing::debug!(
        "kernel {} for sm_{}: {}",
        p.name,
        p.arch,
        options
            .iter()
            .filter(|o| o.starts_with("-D"))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let key = p.cache_key(info.version);
    let cache = CubinCache::from_env();
    // One compile of a key at a time in this process: threads preparing
    // graphs whose kernels are the same (Runtime::prepare from several
    // threads) wait for the first and read its CUBIN from the cache instead
    // of compiling it again each (seconds of a core each).
    let _only = cache.as_ref().map(|_| compiling(key));
    if let Some(c) = &cache {
        match c.load(&key) {
            Ok(Some(cubin)) => return Ok(cubin),
            Ok(None) => {}
            Err(e) => tracing::warn!("cubin cache unreadable, compiling: {e}"),
        }
    }

    if let Some(notice) = COMPILE_NOTICE.get() {
        notice(p.name, cache.as_ref().map(|c| c.path(&key)).as_deref());
    }
    let t = Instant::now();
    let cubin = compile_uncached(p, &options)?;
    tracing::debug!(
        "NVRTC compiled {} for sm_{} in {:.1?} ({} bytes)",
        p.name,
        p.arch,
        t.elapsed(),
        cubin.len()
    );

    if let Some(c) = &cache {
        if let Err(e) = c.store(&key, &cubin) {
            tracing::warn!("could not cache the cubin, going on: {e}");
        }
    }
    Ok(cubin)
}

/// An `Error::Nvrtc` for a failure that produced no compiler log.
fn nvrtc_err(what: String, options: &[String]) -> Error {
    Error::Nvrtc {
        log: what,
        options: options.to_vec(),
    }
}

/// `s` as a C string, or an `Error::Nvrtc` naming `what` holds a NUL byte.
fn c_string(s: &str, what: &str, options: &[String]) -> Result<CString, Error> {
    CString::new(s).map_err(|e| {
        nvrtc_err(
            format!("{what} contains a NUL byte at offset {}", e.nul_position()),
            options,
        )
    })
}

/// Owns an `nvrtcProgram`; destroys it on drop, so every exit path does.
struct ProgramHandle(nvrtcProgram);

impl Drop for ProgramHandle {
    fn drop(&mut self) {
        // SAFETY: `self.0` was returned by a successful nvrtcCreateProgram
        // (a handle is only built then) and is destroyed here, once; no
        // pointer into the program (log, cubin) outlives `compile_uncached`,
        // which owns this guard.
        let r = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
        if r != nvrtcResult::NVRTC_SUCCESS {
            tracing::warn!("nvrtcDestroyProgram failed: {r:?}");
        }
    }
}

fn check(r: nvrtcResult, call: &str, options: &[String]) -> Result<(), Error> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(nvrtc_err(format!("{call} failed: {r:?}"), options))
    }
}

fn compile_uncached(p: &Program, options: &[String]) -> Result<Vec<u8>, Error> {
    let source = c_string(p.source, "the source", options)?;
    let name = c_string(p.name, "the program name", options)?;
    let mut includes = Vec::with_capacity(p.headers.len());
    let mut bodies = Vec::with_capacity(p.headers.len());
    for (inc, body) in p.headers {
        includes.push(c_string(inc, "a header name", options)?);
        bodies.push(c_string(body, &format!("header {inc}"), options)?);
    }
    let include_ptrs: Vec<*const c_char> = includes.iter().map(|s| s.as_ptr()).collect();
    let body_ptrs: Vec<*const c_char> = bodies.iter().map(|s| s.as_ptr()).collect();
    let c_options = options
        .iter()
        .map(|o| c_string(o, "an option", options))
        .collect::<Result<Vec<_>, _>>()?;
    let option_ptrs: Vec<*const c_char> = c_options.iter().map(|s| s.as_ptr()).collect();
    let n_headers = i32::try_from(p.headers.len())
        .map_err(|_| nvrtc_err("too many headers".into(), options))?;
    let n_options =
        i32::try_from(options.len()).map_err(|_| nvrtc_err("too many options".into(), options))?;
    // NVRTC documents NULL for "no headers".
    let (headers_ptr, includes_ptr) = if p.headers.is_empty() {
        (ptr::null(), ptr::null())
    } else {
        (body_ptrs.as_ptr(), include_ptrs.as_ptr())
    };

    let mut raw: nvrtcProgram = ptr::null_mut();
    // SAFETY:
    // 1. `source` and `name` are NUL-terminated CStrings alive until the end
    //    of this function; NVRTC copies them before returning.
    // 2. `headers_ptr` and `includes_ptr` are either both NULL with
    //    `n_headers == 0`, or both point to `n_headers` pointers to live
    //    CStrings (`bodies`, `includes`, which outlive this call).
    // 3. `raw` is a valid place for the new handle.
    let r = unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            source.as_ptr(),
            name.as_ptr(),
            n_headers,
            headers_ptr,
            includes_ptr,
        )
    };
    check(r, "nvrtcCreateProgram", options)?;
    let prog = ProgramHandle(raw);

    // SAFETY: `prog.0` is a live program (created above, destroyed only when
    // `prog` drops); `option_ptrs` holds `n_options` pointers to CStrings in
    // `c_options`, alive for the call.
    let compiled = unsafe { sys::nvrtcCompileProgram(prog.0, n_options, option_ptrs.as_ptr()) };
    let log = program_log(&prog, options)?;
    if compiled != nvrtcResult::NVRTC_SUCCESS {
        let log = if log.trim().is_empty() {
            format!("nvrtcCompileProgram failed with {compiled:?} and an empty log")
        } else {
            log
        };
        return Err(Error::Nvrtc {
            log,
            options: options.to_vec(),
        });
    }
    if !log.trim().is_empty() {
        tracing::debug!("NVRTC log for {} (compiled):\n{log}", p.name);
    }

    let mut size = 0usize;
    // SAFETY: `prog.0` is live and compiled; `size` is a valid `usize` place.
    check(
        unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) },
        "nvrtcGetCUBINSize",
        options,
    )?;
    if size == 0 {
        // A program compiled for a virtual arch (compute_XX) has no CUBIN.
        return Err(nvrtc_err(
            "NVRTC produced no CUBIN (is the architecture a real sm_XX?)".into(),
            options,
        ));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has exactly `size` writable bytes, the size NVRTC just
    // reported for this live program, and NVRTC writes no more than that.
    check(
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast::<c_char>()) },
        "nvrtcGetCUBIN",
        options,
    )?;
    Ok(cubin)
}

/// The program's compile log without its trailing NUL.
fn program_log(prog: &ProgramHandle, options: &[String]) -> Result<String, Error> {
    let mut size = 0usize;
    // SAFETY: `prog.0` is a live program; `size` is a valid `usize` place.
    check(
        unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) },
        "nvrtcGetProgramLogSize",
        options,
    )?;
    // The size counts the NUL terminator; 0 or 1 means no log.
    if size <= 1 {
        return Ok(String::new());
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has exactly `size` writable bytes, the log size NVRTC
    // just reported for this live program (terminator included).
    check(
        unsafe { sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr().cast::<c_char>()) },
        "nvrtcGetProgramLog",
        options,
    )?;
    if let Some(nul) = buf.iter().position(|&b| b == 0) {
        buf.truncate(nul);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
