//! Solvers built on the public API.

pub mod cg;
