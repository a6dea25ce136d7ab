//! A compact, exact encoding of a CSR matrix for the device SpMV: one `u32`
//! a nonzero and `u32` row offsets, where plain CSR takes 12 bytes a
//! nonzero (`f64` value, `u32` column) and `u64` row offsets.
//!
//! The SpMV streams the matrix once an iteration and keeps its vectors in
//! L2, so the bytes of the matrix are most of what it reads from DRAM
//! (2D Poisson 1024²: 63 MB of values and columns and 8 MB of row offsets
//! an iteration, against 8 MB for each vector). Matrices from stencils and
//! most assembled ones have few distinct values and their columns near the
//! diagonal, so each nonzero packs into one word:
//!
//! ```text
//! bits 31..8: column − row, signed (−2²³ ..= 2²³ − 1)
//! bits  7..0: index into a table of at most 256 distinct values
//! ```
//!
//! Nothing is rounded: the table holds the values' exact bit patterns
//! (`-0.0` and `0.0` are two entries), the column is the row plus the
//! offset, and the device sums a row's products in the same order as from
//! plain CSR, so both give bitwise the same results. A matrix that does
//! not fit (more than 256 distinct values, a column too far from its row,
//! more than `u32::MAX` nonzeros) is reported as such and stays plain.
//!
//! A packed matrix whose rows take few distinct word sequences (stencil
//! matrices: the words are relative to the row) goes further as
//! [`RowPatterns`]: a byte a row, naming its sequence.

/// Largest |column − row| of the packed form, plus one (24-bit signed).
pub const MAX_OFFSET: i64 = 1 << 23;

/// Most distinct values the table holds.
pub const MAX_VALUES: usize = 256;

/// Why a matrix is not encoded compactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotCompact {
    /// More than [`MAX_VALUES`] distinct values (bit patterns).
    TooManyValues,
    /// An entry's column is [`MAX_OFFSET`] or more away from its row.
    OffsetTooLarge {
        /// The entry's (local) row.
        row: usize,
        /// Its (local) column.
        col: u32,
    },
    /// More nonzeros than `u32` row offsets can count.
    TooManyEntries,
}

impl std::fmt::Display for NotCompact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotCompact::TooManyValues => {
                write!(f, "more than {MAX_VALUES} distinct values")
            }
            NotCompact::OffsetTooLarge { row, col } => write!(
                f,
                "row {row} has column {col}, {MAX_OFFSET} or more from the diagonal"
            ),
            NotCompact::TooManyEntries => write!(f, "more than {} nonzeros", u32::MAX),
        }
    }
}

/// A CSR matrix (`n` rows) in the packed form described in the module
/// docs. Rows are those of the source; columns are the source's column
/// indices (for a PE's local matrix: owned entries, then ghosts).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactCsr {
    row_ptr: Vec<u32>,
    packed: Vec<u32>,
    table: Vec<f64>,
}

impl CompactCsr {
    /// Encodes the CSR arrays `row_ptr` (`n + 1` offsets), `col_idx` and
    /// `values`, or says why they do not fit.
    ///
    /// # Panics
    /// If the arrays are not consistent CSR (a caller bug: [`super::Csr`]
    /// and [`super::LocalCsr`] are).
    pub fn encode(
        row_ptr: &[u64],
        col_idx: &[u32],
        values: &[f64],
    ) -> Result<CompactCsr, NotCompact> {
        assert!(!row_ptr.is_empty() && col_idx.len() == values.len());
        assert_eq!(*row_ptr.last().unwrap() as usize, col_idx.len());
        if col_idx.len() > u32::MAX as usize {
            return Err(NotCompact::TooManyEntries);
        }
        let mut table: Vec<f64> = Vec::new();
        // The table's bit patterns: searched in order while short (a
        // stencil's two to four values: faster than hashing 10⁸ entries),
        // through the map once longer.
        let mut bits_of: Vec<u64> = Vec::new();
        let mut code_of: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        let mut packed = Vec::with_capacity(col_idx.len());
        for row in 0..row_ptr.len() - 1 {
            for k in row_ptr[row] as usize..row_ptr[row + 1] as usize {
                let off = col_idx[k] as i64 - row as i64;
                if !(-MAX_OFFSET..MAX_OFFSET).contains(&off) {
                    return Err(NotCompact::OffsetTooLarge {
                        row,
                        col: col_idx[k],
                    });
                }
                let bits = values[k].to_bits();
                let found = if bits_of.len() <= 16 {
                    bits_of.iter().position(|&b| b == bits).map(|c| c as u32)
                } else {
                    code_of.get(&bits).copied()
                };
                let code = match found {
                    Some(c) => c,
                    None => {
                        if table.len() == MAX_VALUES {
                            return Err(NotCompact::TooManyValues);
                        }
                        table.push(values[k]);
                        bits_of.push(bits);
                        code_of.insert(bits, table.len() as u32 - 1);
                        table.len() as u32 - 1
                    }
                };
                packed.push(((off as i32 as u32) << 8) | code);
            }
        }
        Ok(CompactCsr {
            row_ptr: row_ptr.iter().map(|&o| o as u32).collect(),
            packed,
            table,
        })
    }

    /// Row offsets (`n + 1`, from 0).
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    /// One word a nonzero: `(column − row) << 8 | code`.
    pub fn packed(&self) -> &[u32] {
        &self.packed
    }

    /// The distinct values, by code.
    pub fn table(&self) -> &[f64] {
        &self.table
    }

    /// Entry `k` of row `row`, decoded: `(column, value)`.
    pub fn entry(&self, row: usize, k: usize) -> (u32, f64) {
        decode(row, self.packed[k], &self.table)
    }

    /// Bytes the SpMV reads for the matrix (row offsets, words, table).
    pub fn bytes(&self) -> usize {
        4 * (self.row_ptr.len() + self.packed.len()) + 8 * self.table.len()
    }
}

/// Most distinct row patterns ([`RowPatterns`]): a row's pattern is a byte.
pub const MAX_PATTERNS: usize = 256;

/// A packed matrix ([`CompactCsr`]) whose rows take at most
/// [`MAX_PATTERNS`] distinct word sequences, stored as one byte a row: the
/// row's pattern, an index into a short list of word sequences.
///
/// A packed word holds the column relative to the row, so every interior
/// row of a stencil matrix has the same words (2D 5-point Poisson: 9
/// patterns, the interior and the boundary's kinds; 3D 7-point: 27). The
/// SpMV then reads one byte from DRAM for a row instead of its offsets and
/// words (2D 1024²: 1 MB an iteration instead of 25), and the addresses of
/// a row's vector entries follow from the row and the pattern, which stays
/// in L1, instead of waiting on the row's words. The words are those of
/// the packed matrix, in the same order: bitwise the same sums.
#[derive(Clone, Debug, PartialEq)]
pub struct RowPatterns {
    row_pattern: Vec<u8>,
    pattern_ptr: Vec<u32>,
    words: Vec<u32>,
}

impl RowPatterns {
    /// The rows of `c` as patterns, or `None` when they take more than
    /// [`MAX_PATTERNS`] distinct word sequences.
    pub fn of(c: &CompactCsr) -> Option<RowPatterns> {
        let rows = c.row_ptr.len() - 1;
        let row_words = |r: usize| &c.packed[c.row_ptr[r] as usize..c.row_ptr[r + 1] as usize];
        let mut index: std::collections::HashMap<&[u32], u8> = std::collections::HashMap::new();
        let mut pattern_ptr = vec![0u32];
        let mut words: Vec<u32> = Vec::new();
        let mut row_pattern = Vec::with_capacity(rows);
        // The previous row's pattern first: runs of interior rows share one.
        let mut last: Option<(&[u32], u8)> = None;
        for r in 0..rows {
            let w = row_words(r);
            let id = match last {
                Some((lw, id)) if lw == w => id,
                _ => match index.get(w) {
                    Some(&id) => id,
                    None => {
                        if index.len() == MAX_PATTERNS {
                            return None;
                        }
                        let id = index.len() as u8;
                        index.insert(w, id);
                        words.extend_from_slice(w);
                        pattern_ptr.push(words.len() as u32);
                        id
                    }
                },
            };
            last = Some((w, id));
            row_pattern.push(id);
        }
        Some(RowPatterns {
            row_pattern,
            pattern_ptr,
            words,
        })
    }

    /// Each row's pattern.
    pub fn row_pattern(&self) -> &[u8] {
        &self.row_pattern
    }

    /// Offsets into [`RowPatterns::words`] (`patterns + 1`, from 0).
    pub fn pattern_ptr(&self) -> &[u32] {
        &self.pattern_ptr
    }

    /// The patterns' packed words (`(column − row) << 8 | code`), one
    /// pattern after another.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Distinct patterns.
    pub fn patterns(&self) -> usize {
        self.pattern_ptr.len() - 1
    }

    /// The packed words of row `row`.
    pub fn row_words(&self, row: usize) -> &[u32] {
        let p = self.row_pattern[row] as usize;
        &self.words[self.pattern_ptr[p] as usize..self.pattern_ptr[p + 1] as usize]
    }

    /// Bytes the SpMV reads for the rows (a byte each) and the patterns
    /// (the table of values not counted: see [`CompactCsr::bytes`]).
    pub fn bytes(&self) -> usize {
        self.row_pattern.len() + 4 * (self.pattern_ptr.len() + self.words.len())
    }
}

/// Decodes a packed word of row `row`: `(column, table[code])` — the
/// device's arithmetic (`row + (word as i32 >> 8)`, `table[word & 255]`).
pub(crate) fn decode(row: usize, word: u32, table: &[f64]) -> (u32, f64) {
    let col = (row as i64 + ((word as i32) >> 8) as i64) as u32;
    (col, table[(word & 255) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::cg::{poisson2d, poisson3d, random_spd};

    fn round_trip(row_ptr: &[u64], col_idx: &[u32], values: &[f64]) {
        let c = CompactCsr::encode(row_ptr, col_idx, values).expect("fits");
        assert_eq!(c.row_ptr().len(), row_ptr.len());
        for row in 0..row_ptr.len() - 1 {
            assert_eq!(c.row_ptr()[row] as u64, row_ptr[row]);
            for k in row_ptr[row] as usize..row_ptr[row + 1] as usize {
                let (col, v) = c.entry(row, k);
                assert_eq!(col, col_idx[k], "row {row} entry {k}");
                assert_eq!(v.to_bits(), values[k].to_bits(), "row {row} entry {k}");
            }
        }
    }

    #[test]
    fn poisson_matrices_round_trip_exactly_in_a_few_values() {
        for a in [poisson2d(17).unwrap(), poisson3d(9).unwrap()] {
            round_trip(a.row_ptr(), a.col_idx(), a.values());
            let c = CompactCsr::encode(a.row_ptr(), a.col_idx(), a.values()).unwrap();
            assert!(c.table().len() <= 3, "{:?}", c.table());
            assert_eq!(
                c.bytes(),
                4 * (a.n_rows() + 1 + a.nnz()) + 8 * c.table().len()
            );
        }
    }

    #[test]
    fn offsets_at_both_ends_of_the_range_round_trip() {
        // Row 0 reaches column 2^23 - 1; row 2^23 reaches column 0.
        let far = (MAX_OFFSET - 1) as u32;
        let n = MAX_OFFSET as usize + 1;
        // Row 0 holds entries 0 and 1, rows 1.. are empty but the last,
        // which holds entries 2 and 3.
        let mut row_ptr = vec![2u64; n + 1];
        row_ptr[0] = 0;
        row_ptr[n] = 4;
        let col_idx = vec![0, far, 0, MAX_OFFSET as u32];
        let values = vec![1.0, -0.0, 0.0, f64::MIN_POSITIVE];
        round_trip(&row_ptr, &col_idx, &values);
        // -0.0 and 0.0 are two codes.
        let c = CompactCsr::encode(&row_ptr, &col_idx, &values).unwrap();
        assert_eq!(c.table().len(), 4);
    }

    #[test]
    fn a_column_too_far_from_its_row_is_refused() {
        let row_ptr = [0u64, 1, 2];
        let col = MAX_OFFSET as u32 + 1;
        // Row 1 to column 2^23 + 1: offset 2^23, one past the range.
        assert_eq!(
            CompactCsr::encode(&row_ptr, &[0, col], &[1.0, 1.0]),
            Err(NotCompact::OffsetTooLarge { row: 1, col })
        );
        // Row 0 to column 2^23: also one past.
        assert_eq!(
            CompactCsr::encode(&row_ptr, &[MAX_OFFSET as u32, 0], &[1.0, 1.0]),
            Err(NotCompact::OffsetTooLarge {
                row: 0,
                col: MAX_OFFSET as u32
            })
        );
    }

    #[test]
    fn poisson_rows_take_a_pattern_for_each_kind_of_row() {
        for (a, kinds) in [(poisson2d(17).unwrap(), 9), (poisson3d(9).unwrap(), 27)] {
            let c = CompactCsr::encode(a.row_ptr(), a.col_idx(), a.values()).unwrap();
            let p = RowPatterns::of(&c).expect("a stencil's rows fit");
            assert_eq!(p.patterns(), kinds);
            assert_eq!(p.row_pattern().len(), a.n_rows());
            for row in 0..a.n_rows() {
                let k = c.row_ptr()[row] as usize..c.row_ptr()[row + 1] as usize;
                assert_eq!(p.row_words(row), &c.packed()[k], "row {row}");
            }
            assert_eq!(p.bytes(), a.n_rows() + 4 * (kinds + 1 + p.words().len()));
        }
    }

    #[test]
    fn more_than_256_row_patterns_are_refused_and_256_fit() {
        // Row r holds one entry at column r + (r mod k): k patterns.
        let rows = |k: usize| {
            let n = 600usize;
            let row_ptr: Vec<u64> = (0..=n as u64).collect();
            let col_idx: Vec<u32> = (0..n).map(|r| (r + r % k) as u32).collect();
            let c = CompactCsr::encode(&row_ptr, &col_idx, &vec![2.0; n]).unwrap();
            RowPatterns::of(&c)
        };
        assert_eq!(rows(256).expect("256 fit").patterns(), 256);
        assert_eq!(rows(257), None);
        // Empty rows are a pattern of no words.
        let c = CompactCsr::encode(&[0, 0, 1, 1], &[1], &[3.0]).unwrap();
        let p = RowPatterns::of(&c).unwrap();
        assert_eq!(p.patterns(), 2);
        assert_eq!(p.row_pattern(), &[0, 1, 0]);
        assert!(p.row_words(0).is_empty());
        assert_eq!(p.row_words(1), &[0u32]); // row 1, column 1: offset 0, code 0
    }

    #[test]
    fn more_than_256_distinct_values_are_refused_and_256_fit() {
        let n = 257usize;
        let row_ptr: Vec<u64> = (0..=n as u64).collect();
        let col_idx: Vec<u32> = (0..n as u32).collect();
        let values: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        assert_eq!(
            CompactCsr::encode(&row_ptr, &col_idx, &values),
            Err(NotCompact::TooManyValues)
        );
        let mut same = values.clone();
        same[256] = same[0];
        round_trip(&row_ptr, &col_idx, &same);
        // A random SPD matrix has a value per entry: plain.
        let a = random_spd(300, 5, 7).unwrap();
        assert_eq!(
            CompactCsr::encode(a.row_ptr(), a.col_idx(), a.values()),
            Err(NotCompact::TooManyValues)
        );
    }
}
