//! The atomics the emulator's protocol uses, swapped for loom's under
//! `cfg(loom)` so the loom models in `loom_tests.rs` check the real
//! protocol code (tokio and crossbeam do the same).
//!
//! Under `cfg(loom)` these types only work inside `loom::model`; the
//! emulator's `run` is not usable in a loom build (only the models are run
//! there).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64};

pub(crate) use std::sync::atomic::Ordering;

/// One failed poll of a spin-wait that has nothing else to do. Under loom it
/// yields to the model checker (a spin loop must, or loom explores it
/// forever); otherwise it is a CPU spin hint (the caller decides when to
/// yield the thread or sleep).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
