//! Compressed sparse row matrices, validated at construction.

use super::error::MatrixError;
use super::scalar::Scalar;

/// A sparse matrix in compressed sparse row form.
///
/// Invariants, checked by [`Csr::new`] and relied on everywhere else:
/// - `row_ptr.len() == n_rows + 1`, `row_ptr[0] == 0`, `row_ptr` never
///   decreases and `row_ptr[n_rows] == col_idx.len() == values.len()`;
/// - the columns of every row are strictly increasing (sorted, no
///   duplicates) and `< n_cols`;
/// - every value is finite;
/// - `n_cols <= 2^32` so that every column fits a `u32`.
///
/// `row_ptr` is `u64` and `col_idx` `u32` — fixed-width, so the arrays can be
/// copied to the device as they are.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<T = f64> {
    n_rows: usize,
    n_cols: usize,
    row_ptr: Vec<u64>,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

/// Relative tolerance of [`Csr::check_symmetric`]: `A[i][j]` and `A[j][i]`
/// may differ by `SYMMETRY_RTOL · max(|A[i][j]|, |A[j][i]|, √|A[i][i]·A[j][j]|)`.
/// Tight enough that any intended asymmetry (a convection term, a wrong
/// sign) is refused, loose enough for a symmetric matrix assembled in
/// floating point in two orders and written with 15–17 digits; well below
/// what changes CG's convergence to the tolerances CG is run at (≥ 1e-14
/// relative residual in f64). The diagonal term keeps entries that cancel
/// to round-off (`1e-17` against `-3e-17` next to a diagonal of 4) from
/// counting as asymmetric: for an SPD matrix `|A[i][j]| ≤ √(A[i][i]·A[j][j])`.
pub const SYMMETRY_RTOL: f64 = 1e-10;

/// Largest dimension whose indices fit a `u32`.
const MAX_DIM: u64 = u32::MAX as u64 + 1;

/// Checks that an `n_rows × n_cols` matrix fits the index types.
pub(crate) fn check_dims(n_rows: usize, n_cols: usize) -> Result<(), MatrixError> {
    if n_cols as u64 > MAX_DIM || n_rows as u64 > MAX_DIM {
        return Err(MatrixError::TooLarge { n_rows, n_cols });
    }
    Ok(())
}

impl<T: Scalar> Csr<T> {
    /// A matrix from its CSR arrays, after checking every invariant listed
    /// on [`Csr`]. Errors name the offending row.
    pub fn new(
        n_rows: usize,
        n_cols: usize,
        row_ptr: Vec<u64>,
        col_idx: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self, MatrixError> {
        check_dims(n_rows, n_cols)?;
        if row_ptr.len() != n_rows + 1 {
            return Err(MatrixError::RowPtrLength {
                expected: n_rows + 1,
                got: row_ptr.len(),
            });
        }
        if row_ptr[0] != 0 {
            return Err(MatrixError::RowPtrStart { got: row_ptr[0] });
        }
        for (row, w) in row_ptr.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(MatrixError::RowPtrDecreasing {
                    row,
                    start: w[0],
                    end: w[1],
                });
            }
        }
        let end = row_ptr[n_rows];
        if end != col_idx.len() as u64 || end != values.len() as u64 {
            return Err(MatrixError::NnzMismatch {
                row_ptr_end: end,
                col_idx: col_idx.len(),
                values: values.len(),
            });
        }
        for row in 0..n_rows {
            let range = row_ptr[row] as usize..row_ptr[row + 1] as usize;
            let mut prev: Option<u32> = None;
            for (&col, &value) in col_idx[range.clone()].iter().zip(&values[range]) {
                if col as usize >= n_cols {
                    return Err(MatrixError::ColumnOutOfRange { row, col, n_cols });
                }
                if let Some(prev) = prev {
                    if col <= prev {
                        return Err(MatrixError::ColumnsNotSorted { row, prev, col });
                    }
                }
                if !value.is_finite() {
                    return Err(MatrixError::NonFinite {
                        row,
                        col,
                        value: value.to_f64(),
                    });
                }
                prev = Some(col);
            }
        }
        Ok(Self {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// A matrix from `(row, col, value)` triplets in any order; duplicate
    /// positions are summed (in the order given). Errors name the row of an
    /// out-of-range or non-finite entry.
    pub fn from_triplets(
        n_rows: usize,
        n_cols: usize,
        mut triplets: Vec<(u32, u32, T)>,
    ) -> Result<Self, MatrixError> {
        check_dims(n_rows, n_cols)?;
        for &(row, col, value) in &triplets {
            if row as usize >= n_rows {
                return Err(MatrixError::InvalidParameter(format!(
                    "triplet row {row} out of range (n_rows = {n_rows})"
                )));
            }
            if col as usize >= n_cols {
                return Err(MatrixError::ColumnOutOfRange {
                    row: row as usize,
                    col,
                    n_cols,
                });
            }
            if !value.is_finite() {
                return Err(MatrixError::NonFinite {
                    row: row as usize,
                    col,
                    value: value.to_f64(),
                });
            }
        }
        // Stable: duplicates keep their given order, so their sum is
        // reproducible.
        triplets.sort_by_key(|&(r, c, _)| (r, c));
        let mut row_ptr = vec![0u64; n_rows + 1];
        let mut col_idx = Vec::with_capacity(triplets.len());
        let mut values: Vec<T> = Vec::with_capacity(triplets.len());
        let mut last: Option<(u32, u32)> = None;
        for (row, col, value) in triplets {
            if last == Some((row, col)) {
                *values.last_mut().expect("a previous entry exists") += value;
            } else {
                row_ptr[row as usize + 1] += 1;
                col_idx.push(col);
                values.push(value);
                last = Some((row, col));
            }
        }
        for i in 0..n_rows {
            row_ptr[i + 1] += row_ptr[i];
        }
        // Sums of finite values can overflow; `new` reports that with its row.
        Self::new(n_rows, n_cols, row_ptr, col_idx, values)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Whether `n_rows == n_cols`.
    pub fn is_square(&self) -> bool {
        self.n_rows == self.n_cols
    }

    /// Number of stored entries (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Row offsets: row `i`'s entries are `row_ptr[i]..row_ptr[i + 1]`.
    pub fn row_ptr(&self) -> &[u64] {
        &self.row_ptr
    }

    /// Column of every entry, row by row, increasing within a row.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }

    /// Value of every entry, aligned with [`col_idx`](Self::col_idx).
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The columns and values of row `i`.
    ///
    /// # Panics
    /// If `i >= n_rows` (a caller bug).
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        let r = self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize;
        (&self.col_idx[r.clone()], &self.values[r])
    }

    /// The arrays `(n_rows, n_cols, row_ptr, col_idx, values)`.
    pub fn into_parts(self) -> (usize, usize, Vec<u64>, Vec<u32>, Vec<T>) {
        (
            self.n_rows,
            self.n_cols,
            self.row_ptr,
            self.col_idx,
            self.values,
        )
    }

    /// The entry at `(i, j)`, if stored.
    ///
    /// # Panics
    /// If `i >= n_rows` (a caller bug).
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        let (cols, vals) = self.row(i);
        let j = u32::try_from(j).ok()?;
        cols.binary_search(&j).ok().map(|k| vals[k])
    }

    /// `y = A x`, each row summed in stored (increasing column) order
    /// starting from zero, without fused multiply-add.
    ///
    /// # Panics
    /// If `x.len() != n_cols` or `y.len() != n_rows` (a caller bug).
    pub fn spmv_into(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.n_cols, "spmv: x has the wrong length");
        assert_eq!(y.len(), self.n_rows, "spmv: y has the wrong length");
        spmv_rows(&self.row_ptr, &self.col_idx, &self.values, x, y);
    }

    /// `A x` as a new vector; see [`spmv_into`](Self::spmv_into).
    ///
    /// # Panics
    /// If `x.len() != n_cols` (a caller bug).
    pub fn spmv(&self, x: &[T]) -> Vec<T> {
        let mut y = vec![T::ZERO; self.n_rows];
        self.spmv_into(x, &mut y);
        y
    }

    /// The main diagonal (`min(n_rows, n_cols)` entries); zero where no
    /// entry is stored.
    pub fn diagonal(&self) -> Vec<T> {
        (0..self.n_rows.min(self.n_cols))
            .map(|i| self.get(i, i).unwrap_or(T::ZERO))
            .collect()
    }

    /// Whether the matrix is square and `A[i][j] == A[j][i]` for every stored
    /// entry, both structurally (the mirror entry is stored) and numerically
    /// (bitwise-equal values, `-0.0 == 0.0`).
    pub fn is_symmetric(&self) -> bool {
        if !self.is_square() {
            return false;
        }
        (0..self.n_rows).all(|i| {
            let (cols, vals) = self.row(i);
            cols.iter()
                .zip(vals)
                .all(|(&j, &v)| self.get(j as usize, i) == Some(v))
        })
    }

    /// Checks that the matrix is square and symmetric within
    /// [`SYMMETRY_RTOL`] (an entry stored on one side only counts as 0 on
    /// the other, so a stored explicit zero needs no mirror). CG needs a
    /// symmetric matrix; [`is_symmetric`](Self::is_symmetric) is the exact
    /// test.
    ///
    /// Errors: [`MatrixError::NotSymmetric`] naming the first entry, in
    /// row-major order, whose mirror differs (both values);
    /// [`MatrixError::InvalidParameter`] for a non-square matrix.
    pub fn check_symmetric(&self) -> Result<(), MatrixError> {
        if !self.is_square() {
            return Err(MatrixError::InvalidParameter(format!(
                "a {} x {} matrix cannot be symmetric",
                self.n_rows, self.n_cols
            )));
        }
        let abs_diag = |i: usize| self.get(i, i).map_or(0.0, |d| d.to_f64().abs());
        for i in 0..self.n_rows {
            let (cols, vals) = self.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let j = j as usize;
                if j == i {
                    continue;
                }
                let v = v.to_f64();
                let w = self.get(j, i).map_or(0.0, |w| w.to_f64());
                let scale = v.abs().max(w.abs()).max((abs_diag(i) * abs_diag(j)).sqrt());
                if (v - w).abs() > SYMMETRY_RTOL * scale {
                    return Err(MatrixError::NotSymmetric {
                        row: i,
                        col: j,
                        value: v,
                        mirror: w,
                    });
                }
            }
        }
        Ok(())
    }

    /// The same matrix with every value converted to `U` (rounded to
    /// nearest). Fails, naming the row, when a value overflows `U`.
    pub fn cast<U: Scalar>(&self) -> Result<Csr<U>, MatrixError> {
        let values = self
            .values
            .iter()
            .map(|&v| U::from_f64(v.to_f64()))
            .collect();
        Csr::new(
            self.n_rows,
            self.n_cols,
            self.row_ptr.clone(),
            self.col_idx.clone(),
            values,
        )
    }
}

/// The SpMV kernel shared by [`Csr`] and the per-PE local matrices of the
/// halo plan: both sum each row in stored order from zero, so the same
/// entries in the same order give bitwise-identical results.
pub(crate) fn spmv_rows<T: Scalar>(
    row_ptr: &[u64],
    col_idx: &[u32],
    values: &[T],
    x: &[T],
    y: &mut [T],
) {
    for (i, yi) in y.iter_mut().enumerate() {
        let r = row_ptr[i] as usize..row_ptr[i + 1] as usize;
        let mut acc = T::ZERO;
        for (&c, &v) in col_idx[r.clone()].iter().zip(&values[r]) {
            acc += v * x[c as usize];
        }
        *yi = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Csr<f64> {
        // [2 1 0]
        // [0 3 4]
        // [5 0 6]
        Csr::new(
            3,
            3,
            vec![0, 2, 4, 6],
            vec![0, 1, 1, 2, 0, 2],
            vec![2.0, 1.0, 3.0, 4.0, 5.0, 6.0],
        )
        .unwrap()
    }

    #[test]
    fn spmv_matches_dense_product() {
        let a = small();
        assert_eq!(a.spmv(&[1.0, 2.0, 3.0]), vec![4.0, 18.0, 23.0]);
        assert_eq!(a.nnz(), 6);
        assert_eq!(a.diagonal(), vec![2.0, 3.0, 6.0]);
        assert_eq!(a.get(0, 2), None);
        assert_eq!(a.get(2, 0), Some(5.0));
    }

    #[test]
    fn unsorted_columns_are_rejected_naming_the_row() {
        let e = Csr::new(2, 3, vec![0, 1, 3], vec![0, 2, 1], vec![1.0, 1.0, 1.0]).unwrap_err();
        assert!(matches!(
            e,
            MatrixError::ColumnsNotSorted {
                row: 1,
                prev: 2,
                col: 1
            }
        ));
        assert!(e.to_string().contains("row 1"), "{e}");
    }

    #[test]
    fn duplicate_columns_are_rejected() {
        let e = Csr::new(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 1.0]).unwrap_err();
        assert!(matches!(e, MatrixError::ColumnsNotSorted { row: 0, .. }));
    }

    #[test]
    fn out_of_range_column_is_rejected_naming_the_row() {
        let e = Csr::new(2, 2, vec![0, 1, 2], vec![0, 2], vec![1.0, 1.0]).unwrap_err();
        assert!(matches!(
            e,
            MatrixError::ColumnOutOfRange {
                row: 1,
                col: 2,
                n_cols: 2
            }
        ));
    }

    #[test]
    fn decreasing_row_ptr_is_rejected_naming_the_row() {
        let e = Csr::new(3, 3, vec![0, 2, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap_err();
        assert!(matches!(e, MatrixError::RowPtrDecreasing { row: 1, .. }));
    }

    #[test]
    fn bad_row_ptr_shape_is_rejected() {
        assert!(matches!(
            Csr::<f64>::new(2, 2, vec![0, 0], vec![], vec![]),
            Err(MatrixError::RowPtrLength {
                expected: 3,
                got: 2
            })
        ));
        assert!(matches!(
            Csr::<f64>::new(1, 1, vec![1, 1], vec![0], vec![1.0]),
            Err(MatrixError::RowPtrStart { got: 1 })
        ));
        assert!(matches!(
            Csr::new(1, 1, vec![0, 1], vec![0], vec![1.0, 2.0]),
            Err(MatrixError::NnzMismatch { .. })
        ));
    }

    #[test]
    fn nan_and_inf_values_are_rejected_naming_the_row() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = Csr::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, bad]).unwrap_err();
            assert!(
                matches!(e, MatrixError::NonFinite { row: 1, col: 1, .. }),
                "{e}"
            );
        }
    }

    #[test]
    fn from_triplets_sorts_and_sums_duplicates() {
        let a = Csr::from_triplets(
            2,
            2,
            vec![(1, 1, 1.0), (0, 1, 2.0), (1, 1, 0.5), (0, 0, 3.0)],
        )
        .unwrap();
        assert_eq!(a.row_ptr(), &[0, 2, 3]);
        assert_eq!(a.col_idx(), &[0, 1, 1]);
        assert_eq!(a.values(), &[3.0, 2.0, 1.5]);
    }

    #[test]
    fn is_symmetric_checks_structure_and_values() {
        assert!(!small().is_symmetric());
        let sym = Csr::from_triplets(2, 2, vec![(0, 0, 1.0), (0, 1, 2.0), (1, 0, 2.0)]).unwrap();
        assert!(sym.is_symmetric());
        let values_differ = Csr::from_triplets(2, 2, vec![(0, 1, 2.0), (1, 0, 2.0000001)]).unwrap();
        assert!(!values_differ.is_symmetric());
        let structure_differs = Csr::from_triplets(2, 2, vec![(0, 1, 2.0)]).unwrap();
        assert!(!structure_differs.is_symmetric());
        let rect = Csr::from_triplets(1, 2, vec![(0, 0, 1.0)]).unwrap();
        assert!(!rect.is_symmetric());
    }

    #[test]
    fn check_symmetric_names_the_first_asymmetric_pair_with_both_values() {
        // small(): A[0][1] = 1 but A[1][0] is not stored (0).
        match small().check_symmetric() {
            Err(MatrixError::NotSymmetric {
                row: 0,
                col: 1,
                value,
                mirror,
            }) => assert_eq!((value, mirror), (1.0, 0.0)),
            other => panic!("{other:?}"),
        }
        let a = Csr::from_triplets(
            3,
            3,
            vec![
                (0, 0, 4.0),
                (1, 1, 4.0),
                (2, 2, 4.0),
                (1, 2, -1.0),
                (2, 1, -2.0),
            ],
        )
        .unwrap();
        let e = a.check_symmetric().unwrap_err();
        assert!(
            matches!(
                e,
                MatrixError::NotSymmetric {
                    row: 1,
                    col: 2,
                    value: -1.0,
                    mirror: -2.0
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains("A[1][2] = -1 but A[2][1] = -2"), "{msg}");
        assert!(msg.contains("entries (2, 3) and (3, 2)"), "{msg}");
        let rect = Csr::from_triplets(1, 2, vec![(0, 0, 1.0)]).unwrap();
        assert!(rect.check_symmetric().is_err());
    }

    #[test]
    fn check_symmetric_accepts_round_off_and_explicit_zeros_but_not_more() {
        let pair = |lo: f64, up: f64| {
            Csr::from_triplets(2, 2, vec![(0, 0, 4.0), (1, 1, 4.0), (0, 1, up), (1, 0, lo)])
                .unwrap()
        };
        assert!(pair(-1.0, -1.0).check_symmetric().is_ok());
        // A few ulps apart: accepted.
        assert!(pair(-1.0, -1.0 - 4.0 * f64::EPSILON)
            .check_symmetric()
            .is_ok());
        // Round-off next to a large diagonal: accepted.
        assert!(pair(1e-17, -3e-17).check_symmetric().is_ok());
        // 1e-8 relative: refused.
        assert!(pair(-1.0, -1.0 - 1e-8).check_symmetric().is_err());
        // An explicit zero without a mirror is symmetric.
        let z = Csr::from_triplets(2, 2, vec![(0, 0, 1.0), (1, 1, 1.0), (0, 1, 0.0)]).unwrap();
        assert!(!z.is_symmetric());
        assert!(z.check_symmetric().is_ok());
    }

    #[test]
    fn cast_to_f32_rounds_and_rejects_overflow() {
        let a = small().cast::<f32>().unwrap();
        assert_eq!(a.spmv(&[1.0, 2.0, 3.0]), vec![4.0f32, 18.0, 23.0]);
        let huge = Csr::from_triplets(2, 2, vec![(1, 0, 1e300)]).unwrap();
        assert!(matches!(
            huge.cast::<f32>(),
            Err(MatrixError::NonFinite { row: 1, col: 0, .. })
        ));
    }
}
