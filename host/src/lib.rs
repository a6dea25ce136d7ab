//! autarky: task graphs that run entirely on GPUs.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod error;
pub mod graph;
pub mod status;

pub use autarky_shared as abi;
pub use error::{Error, Result};
pub use graph::{CpuCtx, Graph, GraphError, KindId, Limits, LoweredGraph, TaskId, TaskKind};
pub use status::RunReport;
