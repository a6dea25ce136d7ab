//! Host side of the Conjugate Gradient solver: matrices, test problems,
//! Matrix Market I/O, the f64 reference solver, and the plan of the
//! distributed SpMV that the device task graph executes.
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
//! - [`partition_rows`] and [`HaloPlan`]: contiguous row blocks per PE, and
//!   who sends which `x` entries to whom; [`HaloPlan::simulate_spmv`] runs
//!   the plan on the CPU. The [`halo`] module docs specify the layout and
//!   the exchange.
//! - [`CompactCsr`] ([`compact`]): the exact one-word-a-nonzero form the
//!   device SpMV reads when a matrix fits it.
//! - [`CgSolver`] ([`graph`]): the device solver — CG, Jacobi-preconditioned
//!   CG and single-reduction CG as a CPU-free task graph.
//!
//! ```
//! use autarky::solvers::cg::{
//!     cg_reference, ones_rhs, partition_rows, poisson2d, zero_guess, CgOptions, CgVariant,
//!     HaloPlan,
//! };
//!
//! let a = poisson2d(32)?;
//! let opts = CgOptions { tol: 1e-8, max_iters: 1000, variant: CgVariant::SingleReduction };
//! let res = cg_reference(&a, &ones_rhs(&a), &zero_guess(&a), &opts)?;
//! assert!(res.converged && res.true_rel_residual < 1e-7);
//!
//! let plan = HaloPlan::new(&a, &partition_rows(&a, 4)?)?;
//! assert_eq!(plan.simulate_spmv(&res.x)?, a.spmv(&res.x));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod compact;
mod csr;
mod error;
mod generate;
pub mod graph;
pub mod halo;
pub mod mtx;
mod partition;
pub mod reference;
mod rng;
mod scalar;

pub use compact::{CompactCsr, NotCompact, RowPatterns};
pub use csr::{Csr, SYMMETRY_RTOL};
pub use error::{CgError, MatrixError, PartitionError};
pub use generate::{poisson2d, poisson2d_aniso, poisson3d, poisson3d_aniso, random_spd};
pub use graph::{
    default_spmv_lanes, heap_bytes_for, heap_bytes_needed, CgConfig, CgRun, CgSolveError, CgSolver,
    DirectionForm, MatrixForm, Precond, FUSED_DIRECTION_L2_BYTES_PER_ROW,
    FUSED_DIRECTION_L2_BYTES_PER_ROW_PACKED, FUSED_DIRECTION_L2_BYTES_PER_ROW_PATTERNS,
    L2_PERSIST_HEAD_MAX_SHARE, L2_PERSIST_MAX_SHARE, MAX_DEFAULT_TILES,
};
pub use halo::{GhostBlock, HaloPlan, LocalCsr, PePlan, SendList};
pub use mtx::{
    parse_matrix_market, read_matrix_market, write_matrix_market, write_matrix_market_to,
};
pub use partition::partition_rows;
pub use reference::{cg_reference, ones_rhs, zero_guess, CgOptions, CgResult, CgVariant};
pub use scalar::Scalar;
