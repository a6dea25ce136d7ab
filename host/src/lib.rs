//! autarky: task graphs that run entirely on GPUs.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod abi_header;
pub mod emulator;
pub mod error;
pub mod graph;
pub mod runtime;
pub mod solvers;
pub mod status;

pub use autarky_shared as abi;
pub use emulator::EmulatorConfig;
pub use error::{Error, Result};
pub use graph::{CpuCtx, Graph, GraphError, KindId, Limits, LoweredGraph, TaskId, TaskKind};
pub use runtime::{Builder, RunOptions, Runtime};
pub use status::RunReport;
