//! Host side of the Conjugate Gradient solver: matrices, test problems,
//! Matrix Market I/O and the f64 reference solver (the distribution plan
//! follows).
//!
//! - [`Csr`]: validated compressed sparse row matrix (`u64` row offsets,
//!   `u32` columns, `f64` or `f32` values via [`Scalar`]).
//! - [`poisson2d`], [`poisson3d`], their anisotropic variants, and
//!   [`random_spd`]: SPD test matrices.
//! - [`read_matrix_market`] / [`write_matrix_market`]: `.mtx` files, errors
//!   naming the line.
//! - [`cg_reference`]: CPU CG in f64 (standard, Jacobi-preconditioned,
//!   Chronopoulos–Gear single-reduction) — the answer device runs are
//!   checked against.

mod csr;
mod error;
mod generate;
pub mod mtx;
pub mod reference;
mod rng;
mod scalar;

pub use csr::Csr;
pub use error::{CgError, MatrixError, PartitionError};
pub use generate::{poisson2d, poisson2d_aniso, poisson3d, poisson3d_aniso, random_spd};
pub use mtx::{
    parse_matrix_market, read_matrix_market, write_matrix_market, write_matrix_market_to,
};
pub use reference::{cg_reference, ones_rhs, zero_guess, CgOptions, CgResult, CgVariant};
pub use scalar::Scalar;
