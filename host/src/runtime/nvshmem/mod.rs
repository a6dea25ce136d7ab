//! The NVSHMEM transport (cargo feature `nvshmem`): peers that are not
//! load/store reachable (other nodes), reached with NVSHMEM puts and
//! signals from inside the megakernel.
//!
//! Everything is found and loaded at run time — NVSHMEM's host library,
//! its device library, nvJitLink and the CUDA headers — so the feature
//! builds (and its unit tests run) on a machine that has none of them.
//!
//! - [`find`]: where each piece is looked for, in order.
//! - [`jitlink`]: nvJitLink, which links relocatable device code on the CPU.
//! - [`compile`]: the megakernel with `-DAUTARKY_NVSHMEM`, the bridge unit
//!   (the only code that sees NVSHMEM's headers) and `libnvshmem_device.a`,
//!   linked into one cubin.
//! - [`host`]: NVSHMEM's host library (init, symmetric heap, per-peer
//!   reachability, module init, finalize).
//! - `boot`: joining NVSHMEM when a `Transport::Nvshmem` runtime is built.
//!
//! Device protocol (autarky/nvshmem.cuh): a peer-table entry is the peer's
//! address when the peer is load/store reachable (then the usual stores
//! and `st.release.sys` signals apply) and 0 when it is reachable only
//! through NVSHMEM; then a completion sets the consumer's proxy word with
//! an NVSHMEM signal (`NVSHMEM_SIGNAL_SET` of the same state word the
//! store would write), and bodies move data with `ctx.put` / `ctx.put_value`
//! and complete it with `ctx.quiet()` before returning. Consumers wait on
//! their own (local) words with the one bounded wait, never
//! `nvshmem_signal_wait_until`, which cannot be aborted.

pub(crate) mod boot;
pub mod compile;
pub mod find;
pub mod host;
pub mod jitlink;

pub use compile::{toolchain, Toolchain};
pub use find::NvshmemInstall;
