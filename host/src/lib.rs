//! autarky: task graphs that run entirely on GPUs.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod abi_header;
pub mod emulator;
pub mod error;
pub mod graph;
pub mod halo;
pub mod runtime;
pub mod solvers;
pub mod status;
pub mod trace;

pub use autarky_shared as abi;
pub use emulator::EmulatorConfig;
pub use error::{Error, Result};
pub use graph::{CpuCtx, Graph, GraphError, KindId, Limits, LoweredGraph, TaskId, TaskKind};
pub use runtime::{
    cpu_slice, cpu_slice_mut, Buffer, BufferAccessError, Builder, CpuSlice, CpuSliceMut, L2Persist,
    RunOptions, Runtime, StateLayout, SymBuffer, TraceOptions, Transport, MAX_TIMEOUT,
};
pub use status::RunReport;

/// The README's code blocks, compiled and run as doc-tests (on the
/// emulator where there is no GPU).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// docs/writing-kinds.md's code, compiled and run as a doc-test.
#[cfg(doctest)]
#[doc = include_str!("../../docs/writing-kinds.md")]
pub struct WritingKindsDoctests;
