//! Finding cuBLAS and cuSPARSE for the baseline.
//!
//! cudarc is built with `dynamic-loading`: its first `cublas::sys` /
//! `cusparse::sys` call looks the library up by *name* (`libcublas.so`,
//! …, `libcublas.so.13`; `libcusparse.so`, …, `libcusparse.so.12`) and
//! **panics** when none loads. So before the baseline makes any call:
//!
//! 1. ask cudarc's own lookup (`is_culib_present`); when it finds both
//!    libraries, that is what the calls will use;
//! 2. otherwise search the usual places ([`search_dirs`]: toolkit
//!    `lib64`s, `LD_LIBRARY_PATH`, pip wheels' `nvidia/*/lib`, the
//!    directory autarky loaded NVRTC from) and `dlopen` the files by
//!    absolute path with `RTLD_NOW | RTLD_GLOBAL`, dependencies first
//!    when they sit next to it (`libnvJitLink` for cuSPARSE, `libcublasLt`
//!    for cuBLAS), keeping the handles for the life of the process. glibc
//!    resolves a later `dlopen` of a bare name to an already loaded object
//!    with that SONAME, so cudarc's lookup then finds the preloaded file
//!    (the scheme autarky's `runtime/libs.rs` uses for NVRTC; checked
//!    without a GPU by `tests/cg_bench.rs` with a CUDA 13 pip wheel, whose
//!    `libcusparse.so.12` cudarc then found);
//! 3. ask cudarc again; if it still fails, the baseline is unavailable and
//!    [`ensure`] says where it looked. The bench then reports autarky
//!    alone and says why.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

/// A library the baseline needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    /// `libcublas.so.13` (needs `libcublasLt.so.13`).
    Cublas,
    /// `libcusparse.so.12` in CUDA 13 (may load `libnvJitLink.so.13`).
    Cusparse,
}

impl Lib {
    /// Its name for people.
    pub fn name(self) -> &'static str {
        match self {
            Lib::Cublas => "cuBLAS",
            Lib::Cusparse => "cuSPARSE",
        }
    }

    /// The file-name prefix of the library itself.
    fn file(self) -> &'static str {
        match self {
            Lib::Cublas => "libcublas.so",
            Lib::Cusparse => "libcusparse.so",
        }
    }

    /// Libraries it loads that are preloaded first when they sit next to it.
    fn deps(self) -> &'static [&'static str] {
        match self {
            Lib::Cublas => &["libcublasLt.so"],
            Lib::Cusparse => &["libnvJitLink.so"],
        }
    }

    /// Whether cudarc's own lookup by name finds it.
    fn present(self) -> bool {
        // SAFETY: `is_culib_present` only dlopens and closes candidate
        // names; it has no precondition beyond dlopen's (see `open_global`).
        unsafe {
            match self {
                Lib::Cublas => cudarc::cublas::sys::is_culib_present(),
                Lib::Cusparse => cudarc::cusparse::sys::is_culib_present(),
            }
        }
    }
}

/// Where the libraries came from (for the bench's header and JSON).
#[derive(Clone, Debug)]
pub struct Found {
    /// One line per library: `cuBLAS: on the linker path` or
    /// `cuBLAS: /dir/libcublas.so.13`.
    pub sources: Vec<String>,
}

static FOUND: OnceLock<Result<Found, String>> = OnceLock::new();

/// Makes sure cudarc's cuBLAS and cuSPARSE calls will find their libraries
/// (module docs); the outcome is computed once. `extra_dir` is searched
/// first after `CG_BENCH_CUDA_LIBS` (the NVRTC directory autarky uses,
/// where pip wheels put their siblings).
pub fn ensure(extra_dir: Option<&Path>) -> Result<Found, String> {
    FOUND
        .get_or_init(|| {
            let dirs = search_dirs(extra_dir);
            let (mut sources, mut missing) = (Vec::new(), Vec::new());
            for lib in [Lib::Cublas, Lib::Cusparse] {
                match load(lib, &dirs) {
                    Ok(s) => sources.push(format!("{}: {s}", lib.name())),
                    Err(e) => missing.push(e),
                }
            }
            if missing.is_empty() {
                Ok(Found { sources })
            } else {
                Err(format!(
                    "{}. Put the CUDA 13 toolkit's lib64 (or a pip wheel's nvidia/cu13/lib) on \
                     LD_LIBRARY_PATH or in CG_BENCH_CUDA_LIBS",
                    missing.join(". ")
                ))
            }
        })
        .clone()
}

/// Makes `lib` reachable by cudarc: already on the linker path, or
/// preloaded from the first of `dirs` that holds it (its dependencies that
/// sit next to it first). Returns where it came from, or every place
/// looked. A preloaded library is never unloaded: cudarc keeps function
/// pointers into it for the life of the process.
pub fn load(lib: Lib, dirs: &[PathBuf]) -> Result<String, String> {
    if lib.present() {
        return Ok("on the linker path".into());
    }
    let mut looked = Vec::new();
    for dir in dirs {
        let Some(file) = find_in(dir, lib.file()) else {
            looked.push(format!("{} (no {}*)", dir.display(), lib.file()));
            continue;
        };
        let deps = lib.deps().iter().filter_map(|d| find_in(dir, d));
        let opened: Result<Vec<Library>, String> = deps
            .chain(std::iter::once(file.clone()))
            .map(|f| open_global(f.as_os_str()).map_err(|e| format!("{}: {e}", f.display())))
            .collect();
        match opened {
            Err(why) => looked.push(why),
            Ok(handles) => {
                if lib.present() {
                    // Kept for the process (doc comment).
                    handles.into_iter().for_each(std::mem::forget);
                    return Ok(file.display().to_string());
                }
                looked.push(format!(
                    "{} (loaded, but cudarc's lookup by name still fails)",
                    file.display()
                ));
            }
        }
    }
    Err(format!(
        "{} is not on the linker path nor in: {}",
        lib.name(),
        looked.join("; ")
    ))
}

/// The file in `dir` whose name is `prefix` or `prefix.<version>`,
/// preferring the longest (most specific) name; `None` when there is none.
pub fn find_in(dir: &Path, prefix: &str) -> Option<PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(usize, PathBuf)> = None;
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let ok = name == prefix
            || name
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|v| {
                    !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                });
        if ok && best.as_ref().map_or(true, |(l, _)| name.len() > *l) {
            best = Some((name.len(), e.path()));
        }
    }
    best.map(|(_, p)| p)
}

/// Directories searched after cudarc's lookup by name, in order, each once:
/// `CG_BENCH_CUDA_LIBS` (colon-separated), `extra`, `$CUDA_HOME/lib64`,
/// `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64` (and its `targets/…/lib`),
/// every `LD_LIBRARY_PATH` entry, then the `nvidia/*/lib` directories of
/// pip wheels under `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `/opt/torch/.venv`,
/// `/usr/local`, `/usr` and `~/.local`. `stubs` directories are left out.
pub fn search_dirs(extra: Option<&Path>) -> Vec<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) && !p.components().any(|c| c.as_os_str() == "stubs") {
            out.push(p);
        }
    };
    if let Some(v) = var("CG_BENCH_CUDA_LIBS") {
        std::env::split_paths(&v).for_each(&mut push);
    }
    if let Some(d) = extra {
        push(d.to_path_buf());
    }
    for k in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = var(k) {
            push(PathBuf::from(v).join("lib64"));
        }
    }
    push(PathBuf::from("/usr/local/cuda/lib64"));
    push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    if let Some(v) = var("LD_LIBRARY_PATH") {
        std::env::split_paths(&v).for_each(&mut push);
    }
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|k| var(k).map(PathBuf::from))
        .collect();
    prefixes.extend(["/opt/torch/.venv", "/usr/local", "/usr"].map(PathBuf::from));
    if let Some(h) = var("HOME") {
        prefixes.push(PathBuf::from(h).join(".local"));
    }
    for pre in prefixes {
        for site in site_packages(&pre) {
            // nvidia/cu13/lib (CUDA 13 wheels), nvidia/cublas/lib, … (older).
            let Ok(rd) = std::fs::read_dir(site.join("nvidia")) else {
                continue;
            };
            let mut libs: Vec<PathBuf> = rd.flatten().map(|e| e.path().join("lib")).collect();
            libs.sort();
            libs.into_iter().filter(|d| d.is_dir()).for_each(&mut push);
        }
    }
    out
}

/// `<prefix>/lib/python3*/site-packages` (and `dist-packages`).
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        if e.file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("python3"))
        {
            for s in ["site-packages", "dist-packages"] {
                let p = e.path().join(s);
                if p.is_dir() {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

fn open_global(path: &OsStr) -> Result<Library, String> {
    // SAFETY: loading a shared object runs its initialisers. The files
    // opened here are NVIDIA's cuBLAS / cuSPARSE / nvJitLink libraries,
    // found by their file names in CUDA, pip and linker directories, whose
    // initialisers are written to be run by dlopen from any thread;
    // RTLD_NOW makes a missing dependency fail here, not at a later call.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| e.to_string())
}
