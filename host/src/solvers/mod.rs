//! Iterative solvers built on the public API, and their CPU references.

pub mod jacobi_ref;
pub mod jacobi;
