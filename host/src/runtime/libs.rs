//! Finding and loading the two CUDA shared libraries autarky needs at run
//! time: the driver (`libcuda.so.1`) and NVRTC (`libnvrtc.so.13`).
//!
//! # Protocol
//!
//! cudarc is built with `dynamic-loading`: every `cudarc::{driver,nvrtc}::sys`
//! function looks its library up by *name* (`get_lib_name_candidates`, e.g.
//! `libnvrtc.so`, …, `libnvrtc.so.13`) on first use and **panics** when none
//! loads. It never looks in `$CUDA_HOME` or in a pip wheel. So before any
//! `sys` call we:
//!
//! 1. search the places a user is likely to have the library (the lists are
//!    built by `driver_search_dirs` and `nvrtc_search_dirs` from one
//!    snapshot of the environment, so they are pure and testable);
//! 2. `dlopen` the first file found by absolute path with
//!    `RTLD_NOW | RTLD_GLOBAL` and keep the handle for the life of the
//!    process (it is stored in a `OnceLock`, never dropped);
//! 3. let cudarc do its own lookup. glibc's `dlopen` of a bare name first
//!    compares it with the SONAME of every object already loaded, so
//!    cudarc's `libnvrtc.so.13` / `libcuda.so.1` candidate resolves to the
//!    object we preloaded;
//! 4. check that it did: we compare the address of one symbol (`cuInit`,
//!    `nvrtcVersion`) as seen through our handle and through cudarc's, and
//!    name the file behind cudarc's from `/proc/self/maps`. cudarc tries the
//!    unversioned `libnvrtc.so` / `libcuda.so` *before* the versioned names,
//!    so a different library on the linker path (an old toolkit, the driver
//!    stub) can win; that is reported, not silently used.
//!
//! libnvrtc itself `dlopen`s `libnvrtc-builtins.so.13.*` by name, so the
//! builtins from the same directory are preloaded first for the same reason.
//!
//! Each search runs once per process; its outcome (success, or the list of
//! every place looked) is cached and returned by every later call.

use std::ffi::{c_int, c_void, OsStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

use crate::Error;

/// Where NVRTC was loaded from, and its version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvrtcInfo {
    /// The file cudarc's NVRTC calls go to (read back from `/proc/self/maps`
    /// when it was found by SONAME on the linker path).
    pub path: PathBuf,
    /// `(major, minor)` from `nvrtcVersion`.
    pub version: (i32, i32),
}

/// The NVRTC SONAME autarky is built against (cudarc feature `cuda-13000`).
const NVRTC_SONAME: &str = "libnvrtc.so.13";
/// Prefix of the builtins library libnvrtc loads by itself.
const NVRTC_BUILTINS_PREFIX: &str = "libnvrtc-builtins.so.13.";
/// Driver file names, most specific first.
const DRIVER_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// The environment variables the searches read, captured once so the
/// search-order functions are pure.
#[derive(Clone, Debug, Default)]
pub(crate) struct EnvSnapshot {
    pub autarky_nvrtc_dir: Option<PathBuf>,
    pub cuda_home: Option<PathBuf>,
    pub cuda_path: Option<PathBuf>,
    pub ld_library_path: Option<String>,
    pub virtual_env: Option<PathBuf>,
    pub conda_prefix: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

impl EnvSnapshot {
    pub(crate) fn from_process() -> Self {
        // An empty variable counts as unset: `CUDA_HOME= cmd` means "none".
        let path = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        EnvSnapshot {
            autarky_nvrtc_dir: path("AUTARKY_NVRTC_DIR"),
            cuda_home: path("CUDA_HOME"),
            cuda_path: path("CUDA_PATH"),
            ld_library_path: std::env::var("LD_LIBRARY_PATH").ok(),
            virtual_env: path("VIRTUAL_ENV"),
            conda_prefix: path("CONDA_PREFIX"),
            home: path("HOME"),
        }
    }

    fn ld_library_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.ld_library_path
            .as_deref()
            .unwrap_or("")
            .split(':')
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    }
}

/// True when `dir` is (inside) a CUDA `stubs` directory. The stub
/// `libcuda.so` there lets programs link without a driver; loading it gives
/// `CUDA_ERROR_STUB_LIBRARY` on the first call, so it never counts as a driver.
fn is_stub_dir(dir: &Path) -> bool {
    dir.components().any(|c| c.as_os_str() == "stubs")
}

/// Pushes `p` unless already present (first occurrence keeps its rank).
pub(crate) fn push_unique(out: &mut Vec<PathBuf>, p: PathBuf) {
    if !out.contains(&p) {
        out.push(p);
    }
}

/// Directories searched for the driver after the linker-path lookup by name,
/// in order. `stubs` directories are left out.
pub(crate) fn driver_search_dirs(env: &EnvSnapshot) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for base in [&env.cuda_home, &env.cuda_path].into_iter().flatten() {
        push_unique(&mut out, base.join("lib64"));
    }
    push_unique(&mut out, PathBuf::from("/usr/local/cuda/lib64"));
    push_unique(&mut out, PathBuf::from("/usr/lib/x86_64-linux-gnu"));
    for d in env.ld_library_dirs() {
        push_unique(&mut out, d);
    }
    out.retain(|d| !is_stub_dir(d));
    out
}

/// Entries of `dir` whose name starts with `prefix`, sorted newest-looking
/// first (reverse lexical: `python3.12` before `python3.11`). Unreadable or
/// missing directories give nothing.
fn subdirs_starting_with(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    v.sort();
    v.reverse();
    v
}

/// `site-packages` / `dist-packages` directories where pip may have put the
/// `nvidia-cuda-nvrtc` wheel, found by reading directories (no Python is
/// spawned). Only existing directories are returned.
pub(crate) fn python_package_dirs(env: &EnvSnapshot) -> Vec<PathBuf> {
    // Each `lib` directory holds `python3.X/{site,dist}-packages`.
    let mut libs: Vec<PathBuf> = Vec::new();
    for prefix in [&env.virtual_env, &env.conda_prefix].into_iter().flatten() {
        libs.push(prefix.join("lib"));
    }
    if let Some(home) = &env.home {
        libs.push(home.join(".local/lib"));
    }
    libs.push(PathBuf::from("/usr/local/lib"));
    libs.push(PathBuf::from("/usr/lib"));
    // `/opt/<anything>/.venv` is where several images keep their venv.
    if let Ok(rd) = std::fs::read_dir("/opt") {
        let mut opts: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        opts.sort();
        libs.extend(opts.into_iter().map(|o| o.join(".venv/lib")));
    }

    let mut out = Vec::new();
    for lib in libs {
        for py in subdirs_starting_with(&lib, "python3") {
            for leaf in ["site-packages", "dist-packages"] {
                let d = py.join(leaf);
                if d.is_dir() {
                    push_unique(&mut out, d);
                }
            }
        }
    }
    out
}

/// Directories searched for `libnvrtc.so.13`, in order. The final fallback,
/// a lookup of the bare SONAME on the linker path, is not a directory and is
/// done by [`search_nvrtc`].
pub(crate) fn nvrtc_search_dirs(env: &EnvSnapshot) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = &env.autarky_nvrtc_dir {
        push_unique(&mut out, d.clone());
    }
    for base in [&env.cuda_home, &env.cuda_path].into_iter().flatten() {
        push_unique(&mut out, base.join("lib64"));
    }
    push_unique(&mut out, PathBuf::from("/usr/local/cuda/lib64"));
    for pkgs in python_package_dirs(env) {
        push_unique(&mut out, pkgs.join("nvidia/cu13/lib"));
    }
    for d in env.ld_library_dirs() {
        push_unique(&mut out, d);
    }
    out
}

/// One place NVRTC may be loaded from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NvrtcCandidate {
    /// `libnvrtc.so.13` found as a file, with the builtins beside it if any.
    File {
        nvrtc: PathBuf,
        builtins: Option<PathBuf>,
    },
    /// The bare SONAME, resolved by the dynamic linker's own search path.
    Soname(&'static str),
}

/// Looks for `libnvrtc.so.13` (and its builtins) in one directory.
fn nvrtc_in_dir(dir: &Path) -> Option<NvrtcCandidate> {
    let nvrtc = dir.join(NVRTC_SONAME);
    if !nvrtc.is_file() {
        return None;
    }
    // Highest patch version wins if several builtins sit side by side.
    let builtins = std::fs::read_dir(dir).ok().and_then(|rd| {
        rd.filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().starts_with(NVRTC_BUILTINS_PREFIX))
            .max()
            .map(|n| dir.join(n))
    });
    Some(NvrtcCandidate::File { nvrtc, builtins })
}

/// Tries every directory in `dirs` in order, then the bare SONAME, calling
/// `try_load` on each candidate found until one succeeds. On failure returns
/// every path tried, with why each was rejected.
///
/// Pure apart from reading the directories: the loader is injected so the
/// search order and the error list can be tested without a real NVRTC.
pub(crate) fn search_nvrtc<T>(
    dirs: &[PathBuf],
    mut try_load: impl FnMut(&NvrtcCandidate) -> Result<T, String>,
) -> Result<T, Vec<String>> {
    let mut looked = Vec::new();
    for dir in dirs {
        match nvrtc_in_dir(dir) {
            None => looked.push(format!("{} (no {NVRTC_SONAME})", dir.display())),
            Some(c) => match try_load(&c) {
                Ok(t) => return Ok(t),
                Err(why) => looked.push(format!("{} ({why})", dir.display())),
            },
        }
    }
    let c = NvrtcCandidate::Soname(NVRTC_SONAME);
    match try_load(&c) {
        Ok(t) => Ok(t),
        Err(why) => {
            looked.push(format!("{NVRTC_SONAME} on the linker path ({why})"));
            Err(looked)
        }
    }
}

/// `dlopen(path, RTLD_NOW | RTLD_GLOBAL)`.
fn open_global(path: &OsStr) -> Result<Library, String> {
    // SAFETY: loading a shared object runs its initialisers. The only files
    // opened here are the NVIDIA driver and NVRTC libraries (found by their
    // exact file names in CUDA/pip/linker directories), whose initialisers
    // are written to be run by dlopen from any thread; RTLD_NOW makes a
    // missing dependency fail here rather than at a later call.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| e.to_string())
}

/// Address of `symbol` in `lib`, or `None` when it is not exported.
fn symbol_addr(lib: &Library, symbol: &[u8]) -> Option<usize> {
    // SAFETY: the symbol is read as an opaque address (`*const c_void`) and
    // never called or dereferenced, so its real type does not matter.
    let sym = unsafe { lib.get::<*const c_void>(symbol) }.ok()?;
    Some(*sym as usize)
}

/// The file mapped at `addr` in this process, from `/proc/self/maps`.
fn mapped_file_of(addr: usize) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        // "start-end perms offset dev inode   path"
        let mut f = line.split_whitespace();
        let (lo, hi) = f.next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        if !(lo..hi).contains(&addr) {
            return None;
        }
        let path = f.nth(4)?;
        path.starts_with('/').then(|| PathBuf::from(path))
    })
}

// ---------------------------------------------------------------- driver

/// A loaded driver: the handle is kept so the library is never unloaded.
struct Loaded {
    _lib: Library,
}

static DRIVER: OnceLock<Result<Loaded, String>> = OnceLock::new();

/// Makes sure `cudarc::driver::sys` calls will reach a real CUDA driver,
/// loading it on first call. Returns [`Error::NoGpu`] (saying where it
/// looked and how to fix it) when there is none; cached thereafter.
pub(crate) fn ensure_driver() -> Result<(), Error> {
    match DRIVER.get_or_init(|| load_driver(&EnvSnapshot::from_process())) {
        Ok(_) => Ok(()),
        Err(reason) => Err(Error::NoGpu {
            reason: reason.clone(),
        }),
    }
}

/// Loads `name` and accepts it only if it is not the toolkit's stub.
fn try_driver(name: &OsStr) -> Result<Loaded, String> {
    let lib = open_global(name)?;
    let file = symbol_addr(&lib, b"cuInit\0")
        .and_then(mapped_file_of)
        .ok_or_else(|| "loaded but exports no cuInit".to_string())?;
    if file.parent().is_some_and(is_stub_dir) {
        return Err(format!(
            "{} is the link-time stub, not a driver",
            file.display()
        ));
    }
    tracing::debug!("CUDA driver: {}", file.display());
    Ok(Loaded { _lib: lib })
}

fn load_driver(env: &EnvSnapshot) -> Result<Loaded, String> {
    let mut looked = Vec::new();
    let mut found = None;
    for name in DRIVER_NAMES {
        match try_driver(OsStr::new(name)) {
            Ok(l) => {
                found = Some(l);
                break;
            }
            Err(why) => looked.push(format!("{name} on the linker path ({why})")),
        }
    }
    if found.is_none() {
        'dirs: for dir in driver_search_dirs(env) {
            let mut any = false;
            for name in DRIVER_NAMES {
                let p = dir.join(name);
                if !p.is_file() {
                    continue;
                }
                any = true;
                match try_driver(p.as_os_str()) {
                    Ok(l) => {
                        found = Some(l);
                        break 'dirs;
                    }
                    Err(why) => looked.push(format!("{} ({why})", p.display())),
                }
            }
            if !any {
                looked.push(format!("{} (no libcuda.so.1)", dir.display()));
            }
        }
    }
    let Some(loaded) = found else {
        return Err(format!(
            "the CUDA driver library (libcuda.so.1) was not found; looked in: {}. \
             Install the NVIDIA driver (it provides libcuda.so.1; the CUDA toolkit's \
             stubs/libcuda.so does not count), or run on the emulator instead, \
             which autarky falls back to when asked",
            looked.join(", ")
        ));
    };

    // SAFETY: `is_culib_present` only dlopens and closes candidate names; it
    // has no precondition beyond dlopen's (see `open_global`).
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(format!(
            "libcuda was preloaded but cudarc's own lookup still failed; looked in: {}",
            looked.join(", ")
        ));
    }
    // SAFETY: `is_culib_present` just returned true, so `culib` finds a
    // library and does not panic; the returned handle lives for the process.
    let theirs = unsafe { cudarc::driver::sys::culib() };
    // SAFETY: as in `symbol_addr`, the symbol is only read as an address.
    let their_addr = unsafe { theirs.get::<*const c_void>(b"cuInit\0") }
        .ok()
        .map(|s| *s as usize);
    let ours = symbol_addr(&loaded._lib, b"cuInit\0");
    if their_addr != ours {
        let file = their_addr.and_then(mapped_file_of);
        let shown = file
            .as_deref()
            .map_or("an unknown file".into(), |p| p.display().to_string());
        if file
            .as_deref()
            .and_then(Path::parent)
            .is_some_and(is_stub_dir)
        {
            return Err(format!(
                "cudarc resolves libcuda to the link-time stub {shown}; remove the \
                 `stubs` directory from LD_LIBRARY_PATH and install the NVIDIA driver"
            ));
        }
        tracing::warn!(
            "cudarc loaded a different libcuda ({shown}) than autarky preloaded; \
             driver calls go to {shown}"
        );
    }
    Ok(loaded)
}

// ----------------------------------------------------------------- NVRTC

/// A loaded NVRTC: handles kept (builtins first) so neither is unloaded.
struct LoadedNvrtc {
    info: NvrtcInfo,
    _builtins: Option<Library>,
    _nvrtc: Library,
}

static NVRTC: OnceLock<Result<LoadedNvrtc, Vec<String>>> = OnceLock::new();

/// Makes sure `cudarc::nvrtc::sys` calls will reach libnvrtc.so.13, loading
/// it on first call, and returns where it is and its version. Returns
/// [`Error::NvrtcNotFound`] listing every path tried when it is not found;
/// cached thereafter.
pub(crate) fn ensure_nvrtc() -> Result<NvrtcInfo, Error> {
    let r = NVRTC.get_or_init(|| {
        let dirs = nvrtc_search_dirs(&EnvSnapshot::from_process());
        search_nvrtc(&dirs, load_nvrtc)
    });
    match r {
        Ok(l) => Ok(l.info.clone()),
        Err(looked) => Err(Error::NvrtcNotFound {
            looked: looked.clone(),
        }),
    }
}

fn load_nvrtc(c: &NvrtcCandidate) -> Result<LoadedNvrtc, String> {
    let (builtins, nvrtc) = match c {
        NvrtcCandidate::File { nvrtc, builtins } => {
            let b = match builtins {
                Some(b) => Some(open_global(b.as_os_str()).map_err(|e| format!("dlopen: {e}"))?),
                None => None,
            };
            (
                b,
                open_global(nvrtc.as_os_str()).map_err(|e| format!("dlopen: {e}"))?,
            )
        }
        NvrtcCandidate::Soname(name) => (None, open_global(OsStr::new(name))?),
    };

    // SAFETY: `is_culib_present` only dlopens and closes candidate names; it
    // has no precondition beyond dlopen's (see `open_global`).
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("loaded, but cudarc's own lookup of libnvrtc still failed".into());
    }
    // SAFETY: `is_culib_present` just returned true, so `culib` finds a
    // library and does not panic; the returned handle lives for the process.
    let theirs = unsafe { cudarc::nvrtc::sys::culib() };
    // SAFETY: as in `symbol_addr`, the symbol is only read as an address.
    let their_addr = unsafe { theirs.get::<*const c_void>(b"nvrtcVersion\0") }
        .ok()
        .map(|s| *s as usize)
        .ok_or("cudarc's libnvrtc exports no nvrtcVersion")?;
    // The file cudarc's calls really reach; it may differ from ours when a
    // `libnvrtc.so` (tried first by cudarc) is on the linker path.
    let path = mapped_file_of(their_addr).unwrap_or_else(|| PathBuf::from(NVRTC_SONAME));
    // The toolkit's stubs/libnvrtc.so exists only for linking and calling
    // into it crashes the process. It can be reached even by the bare SONAME:
    // its SONAME is libnvrtc.so.13, so once cudarc has loaded it as
    // `libnvrtc.so` (its first candidate), `dlopen("libnvrtc.so.13")` returns it.
    if path.parent().is_some_and(is_stub_dir) {
        return Err(format!(
            "cudarc resolves libnvrtc to the link-time stub {}; remove the `stubs` \
             directory from LD_LIBRARY_PATH",
            path.display()
        ));
    }
    if symbol_addr(&nvrtc, b"nvrtcVersion\0") != Some(their_addr) {
        tracing::warn!(
            "cudarc loaded a different libnvrtc ({}) than autarky found; NVRTC calls go to it",
            path.display()
        );
    }

    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: both pointers are to live, writable `c_int`s on this stack
    // frame; nvrtcVersion writes one int through each and keeps neither.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {r:?}"));
    }
    tracing::debug!("NVRTC {major}.{minor}: {}", path.display());
    Ok(LoadedNvrtc {
        info: NvrtcInfo {
            path,
            version: (major, minor),
        },
        _builtins: builtins,
        _nvrtc: nvrtc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh empty directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("autarky-libs-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn nvrtc_dir_without_the_library_is_listed_as_looked() {
        let empty = TempDir::new("empty");
        let r: Result<(), _> =
            search_nvrtc(std::slice::from_ref(&empty.0), |_| Err("not here".into()));
        let looked = r.unwrap_err();
        assert_eq!(looked.len(), 2, "{looked:?}");
        assert!(
            looked[0].starts_with(&empty.0.display().to_string()),
            "{looked:?}"
        );
        assert!(looked[0].contains("no libnvrtc.so.13"), "{looked:?}");
        assert!(
            looked[1].starts_with("libnvrtc.so.13 on the linker path"),
            "{looked:?}"
        );
        // And it reaches the user-visible error text.
        let msg = Error::NvrtcNotFound { looked }.to_string();
        assert!(msg.contains(&empty.0.display().to_string()), "{msg}");
    }

    #[test]
    fn nvrtc_search_stops_at_first_dir_whose_library_loads_and_pairs_builtins() {
        let a = TempDir::new("a");
        let b = TempDir::new("b");
        let c = TempDir::new("c");
        for d in [&b.0, &c.0] {
            std::fs::write(d.join("libnvrtc.so.13"), b"").unwrap();
        }
        std::fs::write(b.0.join("libnvrtc-builtins.so.13.0"), b"").unwrap();
        let mut tried = Vec::new();
        let got = search_nvrtc(&[a.0.clone(), b.0.clone(), c.0.clone()], |cand| {
            tried.push(format!("{cand:?}"));
            match cand {
                NvrtcCandidate::File { nvrtc, builtins } if nvrtc.starts_with(&b.0) => {
                    Ok(builtins.clone())
                }
                _ => Err("no".into()),
            }
        });
        assert_eq!(got, Ok(Some(b.0.join("libnvrtc-builtins.so.13.0"))));
        assert_eq!(
            tried.len(),
            1,
            "a has no file, c is never reached: {tried:?}"
        );
    }

    #[test]
    fn nvrtc_load_failure_is_recorded_and_search_goes_on_to_the_soname() {
        let a = TempDir::new("broken");
        std::fs::write(a.0.join("libnvrtc.so.13"), b"not an ELF").unwrap();
        let got = search_nvrtc(std::slice::from_ref(&a.0), |cand| match cand {
            NvrtcCandidate::File { .. } => Err("dlopen: invalid ELF header".into()),
            NvrtcCandidate::Soname(n) => Ok(n.to_string()),
        });
        assert_eq!(got, Ok("libnvrtc.so.13".to_string()));
    }

    #[test]
    fn nvrtc_search_order_puts_autarky_dir_first_and_ld_library_path_last() {
        let env = EnvSnapshot {
            autarky_nvrtc_dir: Some("/x/nvrtc".into()),
            cuda_home: Some("/cuda-home".into()),
            cuda_path: Some("/cuda-path".into()),
            ld_library_path: Some("/ld1::/ld2".into()),
            ..Default::default()
        };
        let dirs = nvrtc_search_dirs(&env);
        let want_head: Vec<PathBuf> = [
            "/x/nvrtc",
            "/cuda-home/lib64",
            "/cuda-path/lib64",
            "/usr/local/cuda/lib64",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(dirs[..4], want_head[..]);
        assert_eq!(
            dirs[dirs.len() - 2..],
            [PathBuf::from("/ld1"), PathBuf::from("/ld2")]
        );
    }

    #[test]
    fn nvrtc_search_finds_pip_wheel_in_a_virtualenv() {
        let venv = TempDir::new("venv");
        let lib = venv.0.join("lib/python3.12/site-packages/nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        let env = EnvSnapshot {
            virtual_env: Some(venv.0.clone()),
            ..Default::default()
        };
        let dirs = nvrtc_search_dirs(&env);
        let pos = dirs.iter().position(|d| *d == lib);
        assert_eq!(pos, Some(1), "after /usr/local/cuda/lib64: {dirs:?}");
    }

    #[test]
    fn driver_search_skips_stub_directories() {
        let env = EnvSnapshot {
            cuda_home: Some("/usr/local/cuda-13.0".into()),
            ld_library_path: Some("/usr/local/cuda/lib64/stubs:/drv".into()),
            ..Default::default()
        };
        let dirs = driver_search_dirs(&env);
        assert!(dirs.iter().all(|d| !is_stub_dir(d)), "{dirs:?}");
        assert_eq!(dirs[0], PathBuf::from("/usr/local/cuda-13.0/lib64"));
        assert_eq!(dirs.last(), Some(&PathBuf::from("/drv")));
        assert!(is_stub_dir(Path::new("/usr/local/cuda/lib64/stubs")));
        assert!(!is_stub_dir(Path::new("/usr/local/cuda/lib64")));
    }

    /// Runs everywhere: with a driver it loads, without one it explains
    /// where it looked and what to install, and it never panics (cudarc's
    /// own lookup would).
    #[test]
    fn ensure_driver_loads_a_driver_or_says_how_to_get_one() {
        match ensure_driver() {
            Ok(()) => {
                // cudarc's lookup now succeeds without panicking.
                // SAFETY: only dlopens candidate names.
                assert!(unsafe { cudarc::driver::sys::is_culib_present() });
                eprintln!("driver found");
            }
            Err(Error::NoGpu { reason }) => {
                eprintln!("{reason}");
                if reason.contains("link-time stub") {
                    // A driver exists but LD_LIBRARY_PATH puts the stub
                    // first in cudarc's lookup: the fix is named.
                    assert!(reason.contains("LD_LIBRARY_PATH"), "{reason}");
                } else {
                    assert!(
                        reason.contains("libcuda.so.1 on the linker path"),
                        "{reason}"
                    );
                    assert!(reason.contains("Install the NVIDIA driver"), "{reason}");
                    assert!(reason.contains("emulator"), "{reason}");
                    assert!(
                        !reason.contains("stubs (no"),
                        "stubs are never searched: {reason}"
                    );
                }
            }
            Err(other) => panic!("expected NoGpu, got {other:?}"),
        }
        // Cached: a second call agrees with the first.
        assert_eq!(ensure_driver().is_ok(), DRIVER.get().unwrap().is_ok());
    }

    #[test]
    fn mapped_file_of_names_the_test_binary_for_one_of_its_own_functions() {
        let addr =
            mapped_file_of_names_the_test_binary_for_one_of_its_own_functions as *const () as usize;
        let file = mapped_file_of(addr).expect("own code is file-backed");
        let exe = std::env::current_exe().unwrap();
        assert_eq!(file.file_name(), exe.file_name());
    }
}
