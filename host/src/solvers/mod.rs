//! Iterative solvers built on the public API, and their CPU references.

pub mod allreduce;
pub mod cg;
pub mod jacobi;
pub mod jacobi_ref;
