//! Finding NVSHMEM, nvJitLink and the CUDA headers NVSHMEM's device
//! headers include, at run time (never at build time: the `nvshmem` feature
//! builds on machines that have none of them).
//!
//! Search orders (first hit wins; every place tried is listed in the error):
//!
//! - **NVSHMEM** (a directory with `lib/libnvshmem_host.so.3`,
//!   `lib/libnvshmem_device.a` and `include/nvshmem.h`): `AUTARKY_NVSHMEM_DIR`,
//!   `NVSHMEM_HOME`, then `nvidia/nvshmem` in every Python package directory
//!   ([`super::super::libs::python_package_dirs`]: the active venv or conda
//!   env, `~/.local`, `/usr/local`, `/usr`, `/opt/*/.venv`) — the layout of
//!   the `nvidia-nvshmem-cu13` wheel, as PyTorch installs it.
//! - **nvJitLink** (`libnvJitLink.so.13`): `AUTARKY_NVJITLINK_DIR`, then the
//!   directories searched for NVRTC (`AUTARKY_NVRTC_DIR`, `$CUDA_HOME/lib64`,
//!   …, `nvidia/cu13/lib` of every package directory, `LD_LIBRARY_PATH`).
//! - **CUDA headers** (`cuda_runtime.h`, `cuda_fp16.h`, and libcu++'s
//!   `cuda/std/type_traits` there or under `cccl/`): `AUTARKY_CUDA_INCLUDE_DIR`,
//!   `$CUDA_HOME/include`, `$CUDA_PATH/include`, `/usr/local/cuda/include`,
//!   then `nvidia/cu13/include` of every package directory (the
//!   `nvidia-cuda-runtime` and `nvidia-cuda-cccl` wheels).
//!
//! The search functions take an [`NvshmemEnv`] snapshot and only read
//! directories, so their order is tested without any of the libraries.

use std::path::{Path, PathBuf};

use crate::runtime::libs::{nvrtc_search_dirs, push_unique, python_package_dirs, EnvSnapshot};

/// The SONAME of NVSHMEM's host library (NVSHMEM 3.x).
pub const NVSHMEM_HOST_SONAME: &str = "libnvshmem_host.so.3";
/// The SONAME of nvJitLink for CUDA 13.
pub const NVJITLINK_SONAME: &str = "libnvJitLink.so.13";

/// The environment the searches read, captured once.
#[derive(Clone, Debug, Default)]
pub(crate) struct NvshmemEnv {
    pub base: EnvSnapshot,
    pub nvshmem_dir: Option<PathBuf>,
    pub nvshmem_home: Option<PathBuf>,
    pub nvjitlink_dir: Option<PathBuf>,
    pub cuda_include_dir: Option<PathBuf>,
}

impl NvshmemEnv {
    pub(crate) fn from_process() -> Self {
        let path = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        NvshmemEnv {
            base: EnvSnapshot::from_process(),
            nvshmem_dir: path("AUTARKY_NVSHMEM_DIR"),
            nvshmem_home: path("NVSHMEM_HOME"),
            nvjitlink_dir: path("AUTARKY_NVJITLINK_DIR"),
            cuda_include_dir: path("AUTARKY_CUDA_INCLUDE_DIR"),
        }
    }
}

/// An NVSHMEM installation: where its pieces are, and its version (read
/// from its headers, so it is known without loading anything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvshmemInstall {
    /// The directory holding `lib/` and `include/`.
    pub root: PathBuf,
    /// `lib/libnvshmem_host.so.3`.
    pub host_lib: PathBuf,
    /// `lib/libnvshmem_device.a` (relocatable device code for every
    /// architecture NVSHMEM supports, linked into the megakernel).
    pub device_lib: PathBuf,
    /// `include/`.
    pub include: PathBuf,
    /// `(major, minor, patch)` from `include/non_abi/nvshmem_version.h`,
    /// when the header says.
    pub version: Option<(u32, u32, u32)>,
}

/// Directories that may hold an NVSHMEM installation, in search order.
pub(crate) fn nvshmem_search_dirs(env: &NvshmemEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in [&env.nvshmem_dir, &env.nvshmem_home].into_iter().flatten() {
        push_unique(&mut out, d.clone());
    }
    for pkgs in python_package_dirs(&env.base) {
        push_unique(&mut out, pkgs.join("nvidia/nvshmem"));
    }
    out
}

/// Checks one candidate directory: `Ok` when every piece is there, else
/// what is missing.
pub(crate) fn nvshmem_in_dir(root: &Path) -> Result<NvshmemInstall, String> {
    let host_lib = root.join("lib").join(NVSHMEM_HOST_SONAME);
    let device_lib = root.join("lib/libnvshmem_device.a");
    let include = root.join("include");
    for (p, what) in [
        (&host_lib, "lib/libnvshmem_host.so.3"),
        (&device_lib, "lib/libnvshmem_device.a"),
        (&include.join("nvshmem.h"), "include/nvshmem.h"),
    ] {
        if !p.is_file() {
            return Err(format!("no {what}"));
        }
    }
    let version = std::fs::read_to_string(include.join("non_abi/nvshmem_version.h"))
        .ok()
        .and_then(|t| parse_version(&t));
    Ok(NvshmemInstall {
        root: root.to_path_buf(),
        host_lib,
        device_lib,
        include,
        version,
    })
}

/// `(major, minor, patch)` from the text of `nvshmem_version.h`.
pub(crate) fn parse_version(header: &str) -> Option<(u32, u32, u32)> {
    let get = |name: &str| {
        header.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse::<u32>().ok())
                .flatten()
        })
    };
    Some((
        get("NVSHMEM_VENDOR_MAJOR_VERSION")?,
        get("NVSHMEM_VENDOR_MINOR_VERSION")?,
        get("NVSHMEM_VENDOR_PATCH_VERSION")?,
    ))
}

/// The first complete NVSHMEM installation in `dirs`, or every directory
/// tried with why it was passed over.
pub(crate) fn search_nvshmem(dirs: &[PathBuf]) -> Result<NvshmemInstall, Vec<String>> {
    let mut looked = Vec::new();
    for d in dirs {
        match nvshmem_in_dir(d) {
            Ok(i) => return Ok(i),
            Err(why) => looked.push(format!("{} ({why})", d.display())),
        }
    }
    if looked.is_empty() {
        looked.push("no AUTARKY_NVSHMEM_DIR, NVSHMEM_HOME or Python package directory".into());
    }
    Err(looked)
}

/// Directories searched for `libnvJitLink.so.13`, in order.
pub(crate) fn nvjitlink_search_dirs(env: &NvshmemEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = &env.nvjitlink_dir {
        push_unique(&mut out, d.clone());
    }
    for d in nvrtc_search_dirs(&env.base) {
        push_unique(&mut out, d);
    }
    out
}

/// The first `libnvJitLink.so.13` in `dirs`, or every directory tried.
pub(crate) fn search_nvjitlink(dirs: &[PathBuf]) -> Result<PathBuf, Vec<String>> {
    let mut looked = Vec::new();
    for d in dirs {
        let p = d.join(NVJITLINK_SONAME);
        if p.is_file() {
            return Ok(p);
        }
        looked.push(format!("{} (no {NVJITLINK_SONAME})", d.display()));
    }
    Err(looked)
}

/// Directories that may hold the CUDA headers, in search order.
pub(crate) fn cuda_include_search_dirs(env: &NvshmemEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = &env.cuda_include_dir {
        push_unique(&mut out, d.clone());
    }
    for base in [&env.base.cuda_home, &env.base.cuda_path]
        .into_iter()
        .flatten()
    {
        push_unique(&mut out, base.join("include"));
    }
    push_unique(&mut out, PathBuf::from("/usr/local/cuda/include"));
    for pkgs in python_package_dirs(&env.base) {
        push_unique(&mut out, pkgs.join("nvidia/cu13/include"));
    }
    out
}

/// The `-I` directories for one candidate: the directory itself, plus its
/// `cccl/` when libc++ lives there (CUDA 13 and the pip wheels).
pub(crate) fn cuda_includes_in_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    for h in ["cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h"] {
        if !dir.join(h).is_file() {
            return Err(format!("no {h}"));
        }
    }
    if dir.join("cuda/std/type_traits").is_file() {
        Ok(vec![dir.to_path_buf()])
    } else if dir.join("cccl/cuda/std/type_traits").is_file() {
        Ok(vec![dir.to_path_buf(), dir.join("cccl")])
    } else {
        Err("no cuda/std/type_traits (libcu++, the nvidia-cuda-cccl wheel)".into())
    }
}

/// The first directory with every CUDA header NVSHMEM's device headers
/// need, as `-I` directories; or every directory tried.
pub(crate) fn search_cuda_includes(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, Vec<String>> {
    let mut looked = Vec::new();
    for d in dirs {
        match cuda_includes_in_dir(d) {
            Ok(v) => return Ok(v),
            Err(why) => looked.push(format!("{} ({why})", d.display())),
        }
    }
    Err(looked)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = std::env::temp_dir().join(format!(
                "autarky-nvshmem-find-{tag}-{}-{n}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        fn touch(&self, rel: &str, body: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn fake_nvshmem(t: &TempDir, root: &str) {
        t.touch(&format!("{root}/lib/libnvshmem_host.so.3"), "");
        t.touch(&format!("{root}/lib/libnvshmem_device.a"), "");
        t.touch(&format!("{root}/include/nvshmem.h"), "");
        t.touch(
            &format!("{root}/include/non_abi/nvshmem_version.h"),
            "#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 3\n\
             #define NVSHMEM_VENDOR_PATCH_VERSION 24\n",
        );
    }

    #[test]
    fn nvshmem_is_found_in_the_pip_wheel_layout_of_a_virtualenv() {
        let venv = TempDir::new("venv");
        fake_nvshmem(&venv, "lib/python3.12/site-packages/nvidia/nvshmem");
        let env = NvshmemEnv {
            base: EnvSnapshot {
                virtual_env: Some(venv.0.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        let dirs = nvshmem_search_dirs(&env);
        let got = search_nvshmem(&dirs).unwrap();
        assert_eq!(
            got.root,
            venv.0.join("lib/python3.12/site-packages/nvidia/nvshmem")
        );
        assert_eq!(got.version, Some((3, 3, 24)));
        assert!(got.device_lib.ends_with("lib/libnvshmem_device.a"));
    }

    #[test]
    fn autarky_nvshmem_dir_comes_first_and_an_incomplete_one_is_named_with_what_it_lacks() {
        let a = TempDir::new("incomplete");
        a.touch("lib/libnvshmem_host.so.3", "");
        let b = TempDir::new("complete");
        fake_nvshmem(&b, "x");
        let env = NvshmemEnv {
            nvshmem_dir: Some(a.0.clone()),
            nvshmem_home: Some(b.0.join("x")),
            ..Default::default()
        };
        let dirs = nvshmem_search_dirs(&env);
        assert_eq!(dirs[0], a.0);
        assert_eq!(dirs[1], b.0.join("x"));
        assert_eq!(search_nvshmem(&dirs).unwrap().root, b.0.join("x"));
        let looked = search_nvshmem(&dirs[..1]).unwrap_err();
        assert_eq!(
            looked,
            vec![format!("{} (no lib/libnvshmem_device.a)", a.0.display())]
        );
    }

    #[test]
    fn version_is_parsed_from_the_header_and_absent_when_the_header_says_nothing() {
        assert_eq!(
            parse_version(
                "#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 8\n#define NVSHMEM_VENDOR_PATCH_VERSION 0\n"
            ),
            Some((3, 8, 0))
        );
        assert_eq!(
            parse_version("#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n"),
            None
        );
    }

    #[test]
    fn nvjitlink_dir_is_searched_before_the_nvrtc_directories() {
        let a = TempDir::new("jl");
        a.touch(NVJITLINK_SONAME, "");
        let env = NvshmemEnv {
            nvjitlink_dir: Some(a.0.clone()),
            base: EnvSnapshot {
                autarky_nvrtc_dir: Some("/x/nvrtc".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let dirs = nvjitlink_search_dirs(&env);
        assert_eq!(dirs[..2], [a.0.clone(), PathBuf::from("/x/nvrtc")]);
        assert_eq!(search_nvjitlink(&dirs), Ok(a.0.join(NVJITLINK_SONAME)));
        let looked = search_nvjitlink(&dirs[1..2]).unwrap_err();
        assert_eq!(looked, vec!["/x/nvrtc (no libnvJitLink.so.13)".to_string()]);
    }

    #[test]
    fn cuda_headers_with_cccl_in_a_subdirectory_give_two_include_dirs() {
        let t = TempDir::new("inc");
        for h in ["cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h"] {
            t.touch(h, "");
        }
        assert!(cuda_includes_in_dir(&t.0)
            .unwrap_err()
            .contains("cuda/std/type_traits"));
        t.touch("cccl/cuda/std/type_traits", "");
        assert_eq!(
            search_cuda_includes(std::slice::from_ref(&t.0)),
            Ok(vec![t.0.clone(), t.0.join("cccl")])
        );
    }
}
