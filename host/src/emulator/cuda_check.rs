//! Checking a graph's CUDA source before an emulated run.
//!
//! The emulator runs the kinds' CPU bodies, but the same graph on the GPU
//! runs their CUDA source; a body that does not compile must not pass on
//! the emulator and fail on the GPU. So when NVRTC is present
//! ([`crate::runtime::libs`]) the emulator compiles the megakernel exactly
//! as the GPU backend would for this run ([`source::compile_variant`]: the
//! same source assembly, all kinds together — a kind with empty source
//! whose function another kind's source defines, as in
//! `solvers::jacobi`, compiles as it does on the GPU — and the same
//! variant: trace rings, PEs, lean features) for [`CHECK_ARCH`], through
//! the on-disk cubin cache, and fails with the same [`Error::Nvrtc`].
//!
//! - Without NVRTC the run goes on; the process's first such run says so
//!   at info level (later ones at debug level).
//! - A graph whose every kind has empty source has no device code to
//!   check (a CPU-only graph): nothing is compiled.
//! - [`super::EmulatorConfig::check_cuda`] (`Builder::check_cuda(false)`)
//!   turns the check off, for graphs whose kinds have no device source.
//! - A kind set that compiled once is remembered for the life of the
//!   process, so repeated runs of one graph compile (or read the cache)
//!   once.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::graph::TaskKind;
use crate::runtime::source::{self, Variant};
use crate::{Error, Result};

/// The architecture the check compiles for: sm_90 (H100/H200), the GPUs
/// autarky runs on. Syntax and type errors do not depend on it.
pub const CHECK_ARCH: u32 = 90;

/// What a check did (for the caller's tests; the run only needs `Ok`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checked {
    /// The megakernel compiled (or was compiled before).
    Compiled,
    /// No kind has device source: nothing to compile.
    NoDeviceSource,
    /// NVRTC is not installed: not checked.
    NoNvrtc,
}

/// Kind sets (with block size and variant) that compiled in this process.
fn compiled() -> &'static Mutex<HashSet<[u8; 32]>> {
    static SET: OnceLock<Mutex<HashSet<[u8; 32]>>> = OnceLock::new();
    SET.get_or_init(Default::default)
}

fn key(kinds: &[TaskKind], threads: u32, variant: Variant) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(threads.to_le_bytes());
    h.update(CHECK_ARCH.to_le_bytes());
    // `Variant`'s Debug output names every field: a new field changes it.
    h.update(format!("{variant:?}").as_bytes());
    for k in kinds {
        for part in [k.name.as_bytes(), k.source.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    h.finalize().into()
}

/// Compiles the megakernel for `kinds` with `threads` threads per block
/// and `variant` (see the module docs). Errors: [`Error::Nvrtc`] with the
/// compiler's log when the source does not compile.
pub(crate) fn check(kinds: &[TaskKind], threads: u32, variant: Variant) -> Result<Checked> {
    check_with(kinds, threads, variant, |k, t, v| {
        source::compile_variant(k, t, CHECK_ARCH, v)
    })
}

/// [`check`] with the compiler given (tests inject one).
pub(crate) fn check_with(
    kinds: &[TaskKind],
    threads: u32,
    variant: Variant,
    compile: impl FnOnce(&[TaskKind], u32, Variant) -> Result<Vec<u8>>,
) -> Result<Checked> {
    if kinds.iter().all(|k| k.source.trim().is_empty()) {
        return Ok(Checked::NoDeviceSource);
    }
    let key = key(kinds, threads, variant);
    if compiled()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&key)
    {
        return Ok(Checked::Compiled);
    }
    match compile(kinds, threads, variant) {
        Ok(_) => {
            compiled()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key);
            Ok(Checked::Compiled)
        }
        Err(Error::NvrtcNotFound { .. }) => {
            // Once a process at info level (like the "no GPU" notice): a
            // user should know the CUDA bodies went unchecked; every run
            // at debug level.
            static SAID: std::sync::Once = std::sync::Once::new();
            let mut first = false;
            SAID.call_once(|| first = true);
            if first {
                tracing::info!(
                    "autarky: NVRTC not found, so the emulator runs the CPU bodies without compiling the kinds' CUDA source (set AUTARKY_NVRTC_DIR to check it here; the GPU backend compiles it)"
                );
            } else {
                tracing::debug!(
                    "emulator: NVRTC not found; the graph's CUDA source was not checked"
                );
            }
            Ok(Checked::NoNvrtc)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, src: &str) -> TaskKind {
        TaskKind::new(name, src)
    }

    #[test]
    fn a_graph_without_device_source_is_not_compiled() {
        let kinds = [kind("a", ""), kind("b", "  \n")];
        let r = check_with(&kinds, 128, Variant::default(), |_, _, _| {
            panic!("nothing to compile")
        });
        assert_eq!(r.unwrap(), Checked::NoDeviceSource);
    }

    #[test]
    fn a_missing_nvrtc_lets_the_run_go_on_and_a_compile_error_fails_it() {
        let kinds = [kind("nvrtc_missing_case", "__device__ void x(int) {}")];
        let r = check_with(&kinds, 128, Variant::default(), |_, _, _| {
            Err(Error::NvrtcNotFound { looked: vec![] })
        });
        assert_eq!(r.unwrap(), Checked::NoNvrtc);
        let kinds = [kind("compile_error_case", "syntax error here")];
        let r = check_with(&kinds, 128, Variant::default(), |_, _, _| {
            Err(Error::Nvrtc {
                log: "error: here".into(),
                options: vec![],
            })
        });
        assert!(matches!(r, Err(Error::Nvrtc { .. })), "{r:?}");
    }

    #[test]
    fn a_kind_set_that_compiled_is_not_compiled_again_but_a_changed_one_is() {
        let kinds = [kind("memo_case", "__device__ void memo_case(int) {}")];
        let mut calls = 0;
        for _ in 0..2 {
            check_with(&kinds, 128, Variant::default(), |_, _, _| {
                calls += 1;
                Ok(vec![])
            })
            .unwrap();
        }
        assert_eq!(calls, 1);
        // Another variant, block size or source is another compile.
        let traced = Variant {
            trace: true,
            ..Variant::default()
        };
        for (threads, v) in [(128, traced), (256, Variant::default())] {
            check_with(&kinds, threads, v, |_, _, _| {
                calls += 1;
                Ok(vec![])
            })
            .unwrap();
        }
        assert_eq!(calls, 3);
        // A failed compile is not remembered.
        let bad = [kind("memo_bad", "oops")];
        for _ in 0..2 {
            let r = check_with(&bad, 128, Variant::default(), |_, _, _| {
                calls += 1;
                Err(Error::Nvrtc {
                    log: String::new(),
                    options: vec![],
                })
            });
            assert!(r.is_err());
        }
        assert_eq!(calls, 5);
    }
}
