//! Test-matrix generators: finite-difference Laplacians and random SPD
//! matrices.
//!
//! The Laplacians use the usual second-difference stencil `[-1, 2, -1]` per
//! axis on an `n × n` (or `n × n × n`) grid of interior points with
//! homogeneous Dirichlet boundaries, unscaled (no `1/h²`), so the diagonal is
//! 4 in 2-D and 6 in 3-D. Grid point `(i, j)` is row `i + n·j` (`x` fastest);
//! in 3-D `(i, j, k)` is row `i + n·(j + n·k)`.
//!
//! | generator          | rows | nonzeros        |
//! |--------------------|------|-----------------|
//! | `poisson2d(n)`     | n²   | 5n² − 4n        |
//! | `poisson3d(n)`     | n³   | 7n³ − 6n²       |

use super::csr::{check_dims, Csr};
use super::error::MatrixError;
use super::rng::SplitMix64;

/// The 5-point Laplacian on an `n × n` grid of interior points with
/// Dirichlet boundaries (diagonal 4, off-diagonals −1): `n²` rows,
/// `5n² − 4n` nonzeros; grid point `(i, j)` is row `i + n·j`.
pub fn poisson2d(n: usize) -> Result<Csr<f64>, MatrixError> {
    poisson2d_aniso(n, 1.0, 1.0)
}

/// The 7-point Laplacian on an `n × n × n` grid of interior points with
/// Dirichlet boundaries (diagonal 6, off-diagonals −1): `n³` rows,
/// `7n³ − 6n²` nonzeros; grid point `(i, j, k)` is row `i + n·(j + n·k)`.
pub fn poisson3d(n: usize) -> Result<Csr<f64>, MatrixError> {
    poisson3d_aniso(n, [1.0, 1.0, 1.0])
}

/// The anisotropic 5-point operator `−eps_x ∂²/∂x² − eps_y ∂²/∂y²`: stencil
/// `[-eps_x, 2 eps_x, -eps_x]` along `x` plus `[-eps_y, 2 eps_y, -eps_y]`
/// along `y`, so the diagonal is `2 (eps_x + eps_y)`. Each `eps` must be
/// finite and positive.
pub fn poisson2d_aniso(n: usize, eps_x: f64, eps_y: f64) -> Result<Csr<f64>, MatrixError> {
    stencil(n, &[eps_x, eps_y])
}

/// The anisotropic 7-point operator with coefficients `[eps_x, eps_y,
/// eps_z]`; the diagonal is `2 (eps_x + eps_y + eps_z)`. Each `eps` must be
/// finite and positive.
pub fn poisson3d_aniso(n: usize, eps: [f64; 3]) -> Result<Csr<f64>, MatrixError> {
    stencil(n, &eps)
}

/// The `2·d + 1`-point Laplacian on an `n^d` grid with per-axis
/// coefficients `eps` (`d = eps.len()`).
fn stencil(n: usize, eps: &[f64]) -> Result<Csr<f64>, MatrixError> {
    for (axis, &e) in eps.iter().enumerate() {
        if !(e.is_finite() && e > 0.0) {
            return Err(MatrixError::InvalidParameter(format!(
                "anisotropy coefficient for axis {axis} is {e}; it must be finite and positive"
            )));
        }
    }
    let d = eps.len() as u32;
    let rows = n.checked_pow(d).ok_or(MatrixError::TooLarge {
        n_rows: usize::MAX,
        n_cols: usize::MAX,
    })?;
    check_dims(rows, rows)?;
    let diag: f64 = 2.0 * eps.iter().sum::<f64>();
    // strides[a] = n^a: the distance between neighbours along axis a.
    let strides: Vec<usize> = (0..d).map(|a| n.pow(a)).collect();
    let per_row = 2 * eps.len() + 1;
    let mut row_ptr = Vec::with_capacity(rows + 1);
    let mut col_idx = Vec::with_capacity(rows * per_row);
    let mut values = Vec::with_capacity(rows * per_row);
    row_ptr.push(0u64);
    for row in 0..rows {
        // Neighbours in increasing column order: the lower neighbours from
        // the slowest axis down, the diagonal, then the upper neighbours
        // from the fastest axis up.
        for a in (0..eps.len()).rev() {
            let coord = (row / strides[a]) % n;
            if coord > 0 {
                col_idx.push((row - strides[a]) as u32);
                values.push(-eps[a]);
            }
        }
        col_idx.push(row as u32);
        values.push(diag);
        for a in 0..eps.len() {
            let coord = (row / strides[a]) % n;
            if coord + 1 < n {
                col_idx.push((row + strides[a]) as u32);
                values.push(-eps[a]);
            }
        }
        row_ptr.push(col_idx.len() as u64);
    }
    Csr::new(rows, rows, row_ptr, col_idx, values)
}

/// A random sparse symmetric positive definite `n × n` matrix, the same for
/// the same `(n, nnz_per_row, seed)` on every platform.
///
/// Construction: every row `i` gets a scale `r_i` uniform in `[1, 10]`. Each
/// row starts `k = ⌊(nnz_per_row − 1) / 2⌋` off-diagonal pairs at random
/// columns `j ≠ i`, with value `v = ±c · r_i · r_j`, `c` uniform in
/// `[0.1, 1)` and a random sign, stored at both `(i, j)` and `(j, i)`
/// (pairs that land on the same position are summed, symmetrically). The
/// diagonal is then `Σ_j |a_ij| + 0.1 · r_i²`: strictly diagonally dominant
/// with a positive diagonal, hence SPD. Rows have about `1 + 2k`
/// nonzeros on average (the count varies from row to row), and the row
/// scales spread the diagonal over two orders of magnitude — a case where
/// Jacobi preconditioning pays.
///
/// Only `+`, `·` and comparisons on exactly generated values are used, so
/// the result is bitwise reproducible. Needs `1 <= nnz_per_row <= n`.
pub fn random_spd(n: usize, nnz_per_row: usize, seed: u64) -> Result<Csr<f64>, MatrixError> {
    check_dims(n, n)?;
    if nnz_per_row == 0 || nnz_per_row > n {
        return Err(MatrixError::InvalidParameter(format!(
            "nnz_per_row = {nnz_per_row} must be between 1 and n = {n}"
        )));
    }
    let mut rng = SplitMix64::new(seed);
    let scale: Vec<f64> = (0..n).map(|_| 1.0 + 9.0 * rng.next_f64()).collect();
    let pairs = (nnz_per_row - 1) / 2;
    let mut triplets: Vec<(u32, u32, f64)> = Vec::with_capacity(n * (2 * pairs + 1));
    for i in 0..n {
        for _ in 0..pairs {
            // A column other than i, uniformly.
            let mut j = rng.below(n as u64 - 1) as usize;
            if j >= i {
                j += 1;
            }
            let magnitude = 0.1 + 0.9 * rng.next_f64();
            let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
            let v = sign * magnitude * scale[i] * scale[j];
            triplets.push((i as u32, j as u32, v));
            triplets.push((j as u32, i as u32, v));
        }
    }
    // Merge duplicates first so the diagonal dominates the merged values.
    let off = Csr::from_triplets(n, n, triplets)?;
    let mut with_diag: Vec<(u32, u32, f64)> = Vec::with_capacity(off.nnz() + n);
    for (i, &s) in scale.iter().enumerate() {
        let (cols, vals) = off.row(i);
        let mut abs_sum = 0.0;
        for (&c, &v) in cols.iter().zip(vals) {
            abs_sum += v.abs();
            with_diag.push((i as u32, c, v));
        }
        with_diag.push((i as u32, i as u32, abs_sum + 0.1 * s * s));
    }
    Csr::from_triplets(n, n, with_diag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson2d_nnz_follows_5n2_minus_4n() {
        for n in [1usize, 2, 3, 7, 16] {
            let a = poisson2d(n).unwrap();
            assert_eq!(a.n_rows(), n * n);
            assert_eq!(a.nnz(), 5 * n * n - 4 * n, "n = {n}");
        }
    }

    #[test]
    fn poisson2d_1024_has_5238784_nonzeros() {
        assert_eq!(poisson2d(1024).unwrap().nnz(), 5_238_784);
    }

    #[test]
    fn poisson3d_nnz_follows_7n3_minus_6n2() {
        for n in [1usize, 2, 3, 5, 8] {
            let a = poisson3d(n).unwrap();
            assert_eq!(a.n_rows(), n * n * n);
            assert_eq!(a.nnz(), 7 * n * n * n - 6 * n * n, "n = {n}");
        }
    }

    #[test]
    fn poisson_matrices_are_symmetric_with_diagonal_4_and_6() {
        let a = poisson2d(6).unwrap();
        assert!(a.is_symmetric());
        assert!(a.diagonal().iter().all(|&d| d == 4.0));
        let b = poisson3d(4).unwrap();
        assert!(b.is_symmetric());
        assert!(b.diagonal().iter().all(|&d| d == 6.0));
    }

    #[test]
    fn poisson2d_rows_match_the_stencil() {
        let n = 4;
        let a = poisson2d(n).unwrap();
        // Interior point (1, 2) → row 9: neighbours 5, 8, 10, 13.
        let (cols, vals) = a.row(1 + n * 2);
        assert_eq!(cols, &[5, 8, 9, 10, 13]);
        assert_eq!(vals, &[-1.0, -1.0, 4.0, -1.0, -1.0]);
        // Corner (0, 0): only the +x and +y neighbours.
        assert_eq!(a.row(0).0, &[0, 1, 4]);
        // Rows sum to the number of missing neighbours (Dirichlet boundary).
        let ones = vec![1.0; n * n];
        let y = a.spmv(&ones);
        assert_eq!(y[0], 2.0);
        assert_eq!(y[1], 1.0);
        assert_eq!(y[5], 0.0);
    }

    #[test]
    fn poisson3d_rows_match_the_stencil() {
        let n = 3;
        let a = poisson3d(n).unwrap();
        // The centre point (1, 1, 1) → row 13.
        let (cols, vals) = a.row(13);
        assert_eq!(cols, &[4, 10, 12, 13, 14, 16, 22]);
        assert_eq!(vals, &[-1.0, -1.0, -1.0, 6.0, -1.0, -1.0, -1.0]);
    }

    #[test]
    fn anisotropic_coefficients_land_on_their_axes() {
        let a = poisson2d_aniso(3, 1.0, 0.01).unwrap();
        assert!(a.is_symmetric());
        // Row 4 = (1, 1): y neighbours 1 and 7, x neighbours 3 and 5.
        let (cols, vals) = a.row(4);
        assert_eq!(cols, &[1, 3, 4, 5, 7]);
        assert_eq!(vals, &[-0.01, -1.0, 2.02, -1.0, -0.01]);
        let b = poisson3d_aniso(3, [1.0, 2.0, 3.0]).unwrap();
        assert!(b.is_symmetric());
        let (cols, vals) = b.row(13);
        assert_eq!(cols, &[4, 10, 12, 13, 14, 16, 22]);
        assert_eq!(vals, &[-3.0, -2.0, -1.0, 12.0, -1.0, -2.0, -3.0]);
    }

    #[test]
    fn bad_anisotropy_is_an_error() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                poisson2d_aniso(4, 1.0, bad),
                Err(MatrixError::InvalidParameter(_))
            ));
        }
        assert!(poisson3d_aniso(4, [1.0, 0.0, 1.0]).is_err());
    }

    #[test]
    fn too_large_grids_are_an_error_not_a_panic() {
        assert!(matches!(
            poisson2d(70_000),
            Err(MatrixError::TooLarge { .. })
        ));
        assert!(matches!(
            poisson3d(usize::MAX / 2),
            Err(MatrixError::TooLarge { .. })
        ));
    }

    #[test]
    fn random_spd_is_symmetric_and_strictly_diagonally_dominant() {
        let a = random_spd(500, 7, 1).unwrap();
        assert!(a.is_symmetric());
        for i in 0..a.n_rows() {
            let (cols, vals) = a.row(i);
            let mut diag = 0.0;
            let mut off = 0.0;
            for (&c, &v) in cols.iter().zip(vals) {
                if c as usize == i {
                    diag = v;
                } else {
                    off += f64::abs(v);
                }
            }
            assert!(
                diag > off,
                "row {i}: diagonal {diag} vs off-diagonal sum {off}"
            );
        }
        // About 1 + 2k = 7 nonzeros per row (a few pairs may coincide).
        let avg = a.nnz() as f64 / a.n_rows() as f64;
        assert!((6.5..=7.0).contains(&avg), "average {avg}");
    }

    #[test]
    fn random_spd_is_deterministic_by_seed() {
        let a = random_spd(200, 9, 42).unwrap();
        assert_eq!(a, random_spd(200, 9, 42).unwrap());
        assert_ne!(a, random_spd(200, 9, 43).unwrap());
    }

    #[test]
    fn random_spd_rejects_impossible_densities() {
        assert!(matches!(
            random_spd(10, 0, 1),
            Err(MatrixError::InvalidParameter(_))
        ));
        assert!(matches!(
            random_spd(10, 11, 1),
            Err(MatrixError::InvalidParameter(_))
        ));
        // One nonzero per row: a positive diagonal matrix.
        let d = random_spd(10, 1, 1).unwrap();
        assert_eq!(d.nnz(), 10);
        assert!(d.diagonal().iter().all(|&v| v > 0.0));
    }
}
