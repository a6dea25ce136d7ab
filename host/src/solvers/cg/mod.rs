//! Host side of the Conjugate Gradient solver: matrices, test problems and
//! Matrix Market I/O (the reference solver and the distribution plan
//! follow).
//!
//! - [`Csr`]: validated compressed sparse row matrix (`u64` row offsets,
//!   `u32` columns, `f64` or `f32` values via [`Scalar`]).
//! - [`poisson2d`], [`poisson3d`], their anisotropic variants, and
//!   [`random_spd`]: SPD test matrices.
//! - [`read_matrix_market`] / [`write_matrix_market`]: `.mtx` files, errors
//!   naming the line.

mod csr;
mod error;
mod generate;
pub mod mtx;
mod rng;
mod scalar;

pub use csr::Csr;
pub use error::{CgError, MatrixError, PartitionError};
pub use generate::{poisson2d, poisson2d_aniso, poisson3d, poisson3d_aniso, random_spd};
pub use mtx::{
    parse_matrix_market, read_matrix_market, write_matrix_market, write_matrix_market_to,
};
pub use scalar::Scalar;
