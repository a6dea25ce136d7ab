//! Errors of the CG host layer: one enum per concern, each variant something
//! a user can act on.

use std::path::PathBuf;

/// A matrix that cannot be built, generated, read or written.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// `row_ptr` does not have `n_rows + 1` entries.
    #[error("row_ptr has {got} entries, expected n_rows + 1 = {expected}")]
    RowPtrLength {
        /// `n_rows + 1`.
        expected: usize,
        /// `row_ptr.len()`.
        got: usize,
    },
    /// `row_ptr[0]` is not 0.
    #[error("row_ptr[0] is {got}, expected 0")]
    RowPtrStart {
        /// The value found.
        got: u64,
    },
    /// `row_ptr[row + 1] < row_ptr[row]`.
    #[error("row {row}: row_ptr decreases ({start} -> {end})")]
    RowPtrDecreasing {
        /// The row whose extent is negative.
        row: usize,
        /// `row_ptr[row]`.
        start: u64,
        /// `row_ptr[row + 1]`.
        end: u64,
    },
    /// `row_ptr[n_rows]`, `col_idx.len()` and `values.len()` disagree.
    #[error(
        "row_ptr ends at {row_ptr_end} but col_idx has {col_idx} and values has {values} entries"
    )]
    NnzMismatch {
        /// `row_ptr[n_rows]`.
        row_ptr_end: u64,
        /// `col_idx.len()`.
        col_idx: usize,
        /// `values.len()`.
        values: usize,
    },
    /// A column index is `>= n_cols`.
    #[error("row {row}: column {col} out of range (n_cols = {n_cols})")]
    ColumnOutOfRange {
        /// Row of the entry.
        row: usize,
        /// Its column.
        col: u32,
        /// Number of columns.
        n_cols: usize,
    },
    /// Column indices of a row are not strictly increasing (unsorted or
    /// duplicated).
    #[error("row {row}: columns not strictly increasing ({prev} then {col})")]
    ColumnsNotSorted {
        /// The row.
        row: usize,
        /// The earlier column.
        prev: u32,
        /// The column that follows it.
        col: u32,
    },
    /// A value is NaN or infinite.
    #[error("row {row}, column {col}: value {value} is not finite")]
    NonFinite {
        /// Row of the entry.
        row: usize,
        /// Its column.
        col: u32,
        /// The value (as f64).
        value: f64,
    },
    /// `A[row][col]` and `A[col][row]` differ by more than
    /// [`SYMMETRY_RTOL`](super::csr::SYMMETRY_RTOL) allows (an entry stored
    /// on one side only counts as 0 on the other): CG needs a symmetric
    /// matrix. Indices are 0-based; a Matrix Market file names the entries
    /// one higher.
    #[error(
        "the matrix is not symmetric: A[{row}][{col}] = {value} but A[{col}][{row}] = {mirror} \
         (0-based; entries ({}, {}) and ({}, {}) of a Matrix Market file; pairs may \
         differ by 1e-10 relative, so a file printed with fewer digits needs a symmetric \
         header); CG needs a symmetric positive definite matrix",
        .row + 1, .col + 1, .col + 1, .row + 1
    )]
    NotSymmetric {
        /// Row of the first entry (row-major order) whose mirror differs.
        row: usize,
        /// Its column.
        col: usize,
        /// `A[row][col]`.
        value: f64,
        /// `A[col][row]` (0 when not stored).
        mirror: f64,
    },
    /// The dimensions do not fit the index types (`u32` columns).
    #[error("a {n_rows} x {n_cols} matrix is too large: column indices are 32-bit (at most {} columns)", u64::from(u32::MAX) + 1)]
    TooLarge {
        /// Rows asked for.
        n_rows: usize,
        /// Columns asked for.
        n_cols: usize,
    },
    /// A generator parameter is out of range.
    #[error("invalid generator parameter: {0}")]
    InvalidParameter(String),
    /// A Matrix Market file is malformed or unsupported.
    #[error("{source_name}:{line}: {reason}")]
    MatrixMarket {
        /// The file's path, or `<input>` for a reader.
        source_name: String,
        /// 1-based line number of the offending line (the line after the
        /// last one when the file ends too early).
        line: usize,
        /// What is wrong, in words.
        reason: String,
    },
    /// Reading or writing a file failed. Said as `PATH: why`, the why in
    /// words without the OS's error number (`/a.mtx: no such file`, `/tmp:
    /// is a directory, not a Matrix Market file`).
    #[error("{}: {}", .path.display(), io_words(.source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// An I/O error in words: the OS's description without its `(os error N)`
/// and with a lower-case first letter (`no such file or directory`), or
/// the message an error was made with.
pub(crate) fn io_words(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text)
            .to_string(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// Why the reference CG refused to start or stopped early.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CgError {
    /// CG needs a square matrix.
    #[error("CG needs a square matrix, got {n_rows} x {n_cols}")]
    NotSquare {
        /// Rows.
        n_rows: usize,
        /// Columns.
        n_cols: usize,
    },
    /// A vector's length does not match the matrix.
    #[error("{vector} has {got} entries, the matrix has {expected} rows")]
    SizeMismatch {
        /// `"b"` or `"x0"`.
        vector: &'static str,
        /// Matrix dimension.
        expected: usize,
        /// Vector length.
        got: usize,
    },
    /// `tol` is negative or not finite.
    #[error("tolerance {0} is not a finite non-negative number")]
    InvalidTolerance(f64),
    /// An input vector holds NaN or ∞.
    #[error("{vector}[{index}] = {value} is not finite")]
    NonFiniteInput {
        /// `"b"` or `"x0"`.
        vector: &'static str,
        /// First offending index.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// `pᵀAp ≤ 0`: the matrix is not symmetric positive definite.
    #[error("matrix is not positive definite: p^T A p = {pap} <= 0 at iteration {iteration}")]
    NotPositiveDefinite {
        /// 1-based iteration in which the search direction was found.
        iteration: usize,
        /// The value of `pᵀAp`.
        pap: f64,
    },
    /// A diagonal entry is not positive, so the matrix is not SPD and the
    /// Jacobi preconditioner does not exist.
    #[error("diagonal entry of row {row} is {value}: the matrix is not positive definite (Jacobi needs a positive diagonal)")]
    NonPositiveDiagonal {
        /// The row.
        row: usize,
        /// Its diagonal value (0 when absent).
        value: f64,
    },
    /// A NaN or ∞ appeared during the iteration (overflow, or breakdown).
    #[error("{quantity} became {value} at iteration {iteration}")]
    NonFinite {
        /// Which scalar (`"alpha"`, `"beta"`, `"r^T r"`, …).
        quantity: &'static str,
        /// Its value.
        value: f64,
        /// 1-based iteration.
        iteration: usize,
    },
}

/// A row partition or halo plan that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// Zero parts asked for.
    #[error("cannot partition into 0 parts")]
    ZeroParts,
    /// Fewer rows than parts: some PE would own no row.
    #[error("{}", if *.parts == 1 { "the matrix has no rows".to_string() } else { format!("cannot give each of {parts} PEs a row: the matrix has fewer rows ({rows})") })]
    TooManyParts {
        /// Parts asked for.
        parts: usize,
        /// Rows available.
        rows: usize,
    },
    /// The distributed SpMV needs `x` distributed like the rows.
    #[error("a halo plan needs a square matrix, got {n_rows} x {n_cols}")]
    NotSquare {
        /// Rows.
        n_rows: usize,
        /// Columns.
        n_cols: usize,
    },
    /// The given partition is not a sequence of non-empty, contiguous ranges
    /// covering `0..n` in order.
    #[error("invalid partition: {0}")]
    InvalidPartition(String),
    /// A global vector's length does not match the plan.
    #[error("vector has {got} entries, the plan covers {expected} rows")]
    SizeMismatch {
        /// Rows covered by the plan.
        expected: usize,
        /// Vector length.
        got: usize,
    },
}
