//! Device-compile tier: NVRTC alone (no CUDA toolkit headers, no GPU)
//! turns CUDA C++ into an sm_90 CUBIN, reports compile errors with the
//! compiler's own words, and a repeated compile is served from the disk cache.
//!
//! Skips with a printed reason when libnvrtc.so.13 is not found; fails
//! instead when `AUTARKY_REQUIRE_NVRTC=1`. Point `AUTARKY_NVRTC_DIR` at a pip
//! wheel's `site-packages/nvidia/cu13/lib` to use one.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use autarky::runtime::nvrtc::{cached_path, compile_cubin, nvrtc_info, Program};
use autarky::Error;

/// A self-contained kernel: a header supplied in memory, no toolkit includes.
const SAXPY: &str = r#"
#include "autarky_test.h"
extern "C" __global__ void saxpy(float a, const float* x, float* y, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;
const HEADER: (&str, &str) = ("autarky_test.h", "typedef unsigned int u32;\n");

/// Process-wide setup, run before any compile in this binary: every test
/// calls it first, so the environment is written once, before any test reads
/// it. Points the cubin cache at a fresh directory (so the first compile of
/// each source is a real miss) and reports whether NVRTC is usable.
fn setup() -> Option<&'static PathBuf> {
    static CACHE_DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = CACHE_DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("autarky-nvrtc-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::env::set_var("AUTARKY_CACHE_DIR", &d);
        std::env::remove_var("AUTARKY_CACHE");
        d
    });
    match nvrtc_info() {
        Ok(info) => {
            eprintln!(
                "NVRTC {}.{} from {}",
                info.version.0,
                info.version.1,
                info.path.display()
            );
            Some(dir)
        }
        Err(e @ Error::NvrtcNotFound { .. }) => {
            if std::env::var_os("AUTARKY_REQUIRE_NVRTC").is_some_and(|v| v == "1") {
                panic!("AUTARKY_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
            }
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("unexpected error looking for NVRTC: {e}"),
    }
}

fn program<'a>(name: &'a str, source: &'a str) -> Program<'a> {
    Program {
        name,
        source,
        headers: std::slice::from_ref(&HEADER),
        options: vec!["-std=c++17".into()],
        arch: 90,
    }
}

#[test]
fn self_contained_kernel_compiles_to_an_sm90_elf_cubin() {
    let Some(_) = setup() else { return };
    let t = Instant::now();
    let cubin = compile_cubin(&program("saxpy.cu", SAXPY)).expect("saxpy compiles");
    eprintln!("compile took {:.1?}, {} bytes", t.elapsed(), cubin.len());
    assert!(cubin.len() > 64, "cubin is {} bytes", cubin.len());
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    // ELF64, and e_machine = EM_CUDA (190): SASS, not PTX text.
    assert_eq!(cubin[4], 2, "ELFCLASS64");
    assert_eq!(u16::from_le_bytes([cubin[18], cubin[19]]), 190, "EM_CUDA");
    // The kernel's name is in the symbol table.
    assert!(cubin.windows(5).any(|w| w == b"saxpy"));
}

#[test]
fn broken_source_is_an_nvrtc_error_carrying_the_compiler_log() {
    let Some(_) = setup() else { return };
    let broken = "extern \"C\" __global__ void k(int* p) { *p = undeclared_name; }\n";
    let err = compile_cubin(&program("broken.cu", broken)).expect_err("must not compile");
    match err {
        Error::Nvrtc { log, options } => {
            assert!(log.contains("undeclared_name"), "log: {log}");
            assert!(log.contains("broken.cu"), "log names the file: {log}");
            assert!(log.contains("error"), "log: {log}");
            assert!(
                options.contains(&"--gpu-architecture=sm_90".to_string()),
                "{options:?}"
            );
            assert!(options.contains(&"-std=c++17".to_string()), "{options:?}");
        }
        other => panic!("expected Error::Nvrtc, got {other:?}"),
    }
    // A failed compile caches nothing.
    let p = cached_path(&program("broken.cu", broken)).unwrap().unwrap();
    assert!(!p.exists(), "{} should not exist", p.display());
}

#[test]
fn second_compile_of_the_same_program_is_read_from_the_cache() {
    let Some(dir) = setup() else { return };
    // A source no other test compiles, so the first compile is a miss.
    let src = format!("{SAXPY}\n// cache test\n");
    let p = program("cached.cu", &src);
    let path = cached_path(&p).unwrap().expect("cache is on");
    assert!(
        path.starts_with(dir),
        "{} under {}",
        path.display(),
        dir.display()
    );
    assert!(!path.exists());

    let t = Instant::now();
    let first = compile_cubin(&p).unwrap();
    let miss = t.elapsed();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        first,
        "the miss stored the cubin"
    );

    // Replace the cached file with a recognisable ELF-looking image: if the
    // second compile returns it, it came from the cache, not from NVRTC.
    let mut marked = first.clone();
    marked.extend_from_slice(b"autarky-cache-marker");
    std::fs::write(&path, &marked).unwrap();
    let t = Instant::now();
    let second = compile_cubin(&p).unwrap();
    let hit = t.elapsed();
    eprintln!("miss {miss:.1?}, hit {hit:.1?}");
    assert_eq!(
        second, marked,
        "second compile must come from the cache file"
    );

    // Any change to the inputs is a different entry.
    let mut q = p.clone();
    q.options.push("-lineinfo".into());
    assert_ne!(cached_path(&q).unwrap().unwrap(), path);
}
