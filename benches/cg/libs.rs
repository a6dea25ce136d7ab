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
//!    (`libnvJitLink` for cuSPARSE, `libcublasLt` for cuBLAS), keeping the
//!    handles for the life of the process. glibc resolves a later `dlopen`
//!    of a bare name to an already loaded object with that SONAME, so
//!    cudarc's lookup then finds the preloaded file (the scheme autarky's
//!    `runtime/libs.rs` uses for NVRTC);
//! 3. ask cudarc again; if it still fails, the baseline is unavailable and
//!    [`ensure`] says where it looked. The bench then reports autarky
//!    alone and says why.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

/// One library the baseline needs: what it is called, and the file-name
/// prefixes of it and of the libraries it needs that may not be on the
/// linker path (loaded in this order).
struct Wanted {
    name: &'static str,
    /// `libcublasLt.so` before `libcublas.so`, …
    files: &'static [&'static str],
    /// cudarc's own lookup (`sys::is_culib_present`).
    present: fn() -> bool,
}

fn cublas_present() -> bool {
    // SAFETY: `is_culib_present` only dlopens and closes candidate names;
    // it has no precondition beyond dlopen's (see `open_global`).
    unsafe { cudarc::cublas::sys::is_culib_present() }
}

fn cusparse_present() -> bool {
    // SAFETY: as in `cublas_present`.
    unsafe { cudarc::cusparse::sys::is_culib_present() }
}

const WANTED: [Wanted; 2] = [
    Wanted {
        name: "cuBLAS",
        files: &["libcublasLt.so", "libcublas.so"],
        present: cublas_present,
    },
    Wanted {
        name: "cuSPARSE",
        files: &["libnvJitLink.so", "libcusparse.so"],
        present: cusparse_present,
    },
];

/// Where the libraries came from (for the bench's header and JSON).
#[derive(Clone, Debug)]
pub struct Found {
    /// One line per library: `cuBLAS: linker path` or `cuBLAS: /dir/libcublas.so.13`.
    pub sources: Vec<String>,
}

/// Handles of the preloaded files, kept (never unloaded) for the process.
static LOADED: OnceLock<Result<(Found, Vec<Library>), String>> = OnceLock::new();

/// Makes sure cudarc's cuBLAS and cuSPARSE calls will find their libraries
/// (module docs); the outcome is computed once. `extra_dir` is searched
/// first (the NVRTC directory autarky uses, where pip wheels put their
/// siblings).
pub fn ensure(extra_dir: Option<&Path>) -> Result<Found, String> {
    let r = LOADED.get_or_init(|| load(&search_dirs(extra_dir)));
    match r {
        Ok((found, _)) => Ok(found.clone()),
        Err(e) => Err(e.clone()),
    }
}

fn load(dirs: &[PathBuf]) -> Result<(Found, Vec<Library>), String> {
    let mut sources = Vec::new();
    let mut keep = Vec::new();
    let mut missing = Vec::new();
    for w in &WANTED {
        if (w.present)() {
            sources.push(format!("{}: on the linker path", w.name));
            continue;
        }
        let mut looked = Vec::new();
        let mut done = false;
        for dir in dirs {
            let files: Option<Vec<PathBuf>> = w.files.iter().map(|p| find_in(dir, p)).collect();
            let Some(files) = files else {
                looked.push(format!("{} (not all of {:?})", dir.display(), w.files));
                continue;
            };
            let mut opened = Vec::new();
            let mut why = None;
            for f in &files {
                match open_global(f.as_os_str()) {
                    Ok(l) => opened.push(l),
                    Err(e) => {
                        why = Some(format!("{}: {e}", f.display()));
                        break;
                    }
                }
            }
            if let Some(why) = why {
                looked.push(why);
                continue;
            }
            if (w.present)() {
                sources.push(format!(
                    "{}: {}",
                    w.name,
                    files
                        .last()
                        .map_or(String::new(), |f| f.display().to_string())
                ));
                keep.extend(opened);
                done = true;
                break;
            }
            looked.push(format!(
                "{} (loaded, but cudarc's lookup by name still fails)",
                dir.display()
            ));
        }
        if !done {
            missing.push(format!(
                "{} not found by name on the linker path nor in: {}",
                w.name,
                looked.join("; ")
            ));
        }
    }
    if missing.is_empty() {
        Ok((Found { sources }, keep))
    } else {
        Err(format!(
            "{}. Put the CUDA 13 toolkit's lib64 (or a pip wheel's nvidia/cu13/lib) on LD_LIBRARY_PATH \
             or in CG_BENCH_CUDA_LIBS",
            missing.join(". ")
        ))
    }
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
