//! Device-compile tier: NVRTC alone (no CUDA toolkit headers, no GPU)
//! turns CUDA C++ into an sm_90 CUBIN, reports compile errors with the
//! compiler's own words, and a repeated compile is served from the disk cache
//! (a compile notice is called for the miss only).
//!
//! Without libnvrtc.so.13 every test is reported as ignored, with the
//! reason; with `AUTARKY_REQUIRE_NVRTC=1` they fail instead. Point
//! `AUTARKY_NVRTC_DIR` at a pip wheel's `site-packages/nvidia/cu13/lib` to
//! use one.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use autarky::runtime::nvrtc::{cached_path, compile_cubin, Program};
use autarky::Error;
use common::{nvrtc_trial, run_trials};

/// A self-contained kernel: a header supplied in memory, no toolkit includes.
const SAXPY: &str = r#"
#include "autarky_test.h"
extern "C" __global__ void saxpy(float a, const float* x, float* y, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;
const HEADER: (&str, &str) = ("autarky_test.h", "typedef unsigned int u32;\n");

/// This process's cubin cache: a fresh directory, so that the first
/// compile of each source is a real miss.
fn cache_dir() -> PathBuf {
    std::env::temp_dir().join(format!("autarky-nvrtc-test-{}", std::process::id()))
}

/// Every compile notice of this process: (program name, cache file).
static NOTICES: Mutex<Vec<(String, Option<PathBuf>)>> = Mutex::new(Vec::new());

fn record_notice(name: &str, cache_file: Option<&Path>) {
    NOTICES
        .lock()
        .unwrap()
        .push((name.to_string(), cache_file.map(Path::to_path_buf)));
}

fn main() -> std::process::ExitCode {
    autarky::runtime::nvrtc::set_compile_notice(record_notice);
    // Before any trial runs (and reads the environment): the cache in a
    // fresh directory, on.
    let _ = std::fs::remove_dir_all(cache_dir());
    std::env::set_var("AUTARKY_CACHE_DIR", cache_dir());
    std::env::remove_var("AUTARKY_CACHE");
    run_trials(vec![
        nvrtc_trial(
            "self_contained_kernel_compiles_to_an_sm90_elf_cubin",
            self_contained_kernel_compiles_to_an_sm90_elf_cubin,
        ),
        nvrtc_trial(
            "broken_source_is_an_nvrtc_error_carrying_the_compiler_log",
            broken_source_is_an_nvrtc_error_carrying_the_compiler_log,
        ),
        nvrtc_trial(
            "second_compile_of_the_same_program_is_read_from_the_cache",
            second_compile_of_the_same_program_is_read_from_the_cache,
        ),
        nvrtc_trial(
            "threads_compiling_one_program_at_once_compile_it_once",
            threads_compiling_one_program_at_once_compile_it_once,
        ),
    ])
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

fn self_contained_kernel_compiles_to_an_sm90_elf_cubin() {
    let cubin = compile_cubin(&program("saxpy.cu", SAXPY)).expect("saxpy compiles");
    assert!(cubin.len() > 64, "cubin is {} bytes", cubin.len());
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    // ELF64, and e_machine = EM_CUDA (190): SASS, not PTX text.
    assert_eq!(cubin[4], 2, "ELFCLASS64");
    assert_eq!(u16::from_le_bytes([cubin[18], cubin[19]]), 190, "EM_CUDA");
    // The kernel's name is in the symbol table.
    assert!(cubin.windows(5).any(|w| w == b"saxpy"));
}

fn broken_source_is_an_nvrtc_error_carrying_the_compiler_log() {
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

fn second_compile_of_the_same_program_is_read_from_the_cache() {
    let dir = cache_dir();
    // A source no other test compiles, so the first compile is a miss.
    let src = format!("{SAXPY}\n// cache test\n");
    let p = program("cached.cu", &src);
    let path = cached_path(&p).unwrap().expect("cache is on");
    assert!(
        path.starts_with(&dir),
        "{} under {}",
        path.display(),
        dir.display()
    );
    assert!(!path.exists());

    let first = compile_cubin(&p).unwrap();
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
    let second = compile_cubin(&p).unwrap();
    assert_eq!(
        second, marked,
        "second compile must come from the cache file"
    );
    // The notice came for the miss, naming the file, and not for the hit.
    let notices: Vec<_> = NOTICES
        .lock()
        .unwrap()
        .iter()
        .filter(|(n, _)| n == "cached.cu")
        .cloned()
        .collect();
    assert_eq!(notices, vec![("cached.cu".to_string(), Some(path.clone()))]);

    // Any change to the inputs is a different entry.
    let mut q = p.clone();
    q.options.push("-lineinfo".into());
    assert_ne!(cached_path(&q).unwrap().unwrap(), path);
}

/// Four threads compiling the same program at once (as threads preparing
/// graphs with the same kernel do) compile it once: the others wait for
/// that compile and read its CUBIN from the cache; all get the same bytes.
/// Two other programs compiled at the same time each compile once too.
fn threads_compiling_one_program_at_once_compile_it_once() {
    let sources: Vec<String> = (0..3)
        .map(|i| format!("{SAXPY}\n// at once {i}\n"))
        .collect();
    let names = ["at_once_0.cu", "at_once_1.cu", "at_once_2.cu"];
    let jobs: Vec<usize> = vec![0, 0, 1, 0, 2, 0];
    let cubins: Vec<Mutex<Option<Vec<u8>>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for (slot, &j) in cubins.iter().zip(&jobs) {
            let (name, src) = (names[j], &sources[j]);
            s.spawn(move || {
                let c = compile_cubin(&program(name, src)).expect("compiles");
                *slot.lock().unwrap() = Some(c);
            });
        }
    });
    let notices = NOTICES.lock().unwrap().clone();
    for (j, name) in names.iter().enumerate() {
        let n = notices.iter().filter(|(n, _)| n == name).count();
        assert_eq!(n, 1, "{name}: {n} compiles, notices {notices:?}");
        let mine: Vec<Vec<u8>> = jobs
            .iter()
            .zip(&cubins)
            .filter(|(&k, _)| k == j)
            .map(|(_, c)| c.lock().unwrap().clone().unwrap())
            .collect();
        assert!(
            mine.windows(2).all(|w| w[0] == w[1]),
            "{name}: the same CUBIN"
        );
    }
}
