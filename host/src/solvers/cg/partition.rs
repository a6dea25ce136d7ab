//! Splitting the rows of a matrix into contiguous blocks, one per PE.

use std::ops::Range;

use super::csr::Csr;
use super::error::PartitionError;
use super::scalar::Scalar;

/// Splits the rows of `a` into `parts` contiguous, non-empty, ordered blocks
/// balanced by work.
///
/// A row's work is its nonzero count plus one (the `+1` stands for the row's
/// own vector entries and keeps empty rows from being free). Boundary `k` is
/// the row whose prefix work is closest to `k/parts` of the total, moved
/// only as far as needed to leave every PE at least one row. So each block's
/// work is within one row's work of the ideal share: at most
/// `⌈total/parts⌉ + max_row_work`.
///
/// Errors: `parts == 0`, or fewer rows than parts.
pub fn partition_rows<T: Scalar>(
    a: &Csr<T>,
    parts: usize,
) -> Result<Vec<Range<usize>>, PartitionError> {
    let n = a.n_rows();
    if parts == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if n < parts {
        return Err(PartitionError::TooManyParts { parts, rows: n });
    }
    let row_ptr = a.row_ptr();
    // Prefix work before row r: nonzeros of rows < r plus r. Strictly
    // increasing in r.
    let work = |r: usize| -> u128 { u128::from(row_ptr[r]) + r as u128 };
    let total = work(n);
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0usize;
    for k in 1..parts {
        let target = total * k as u128 / parts as u128;
        // First row boundary whose prefix work reaches the target, then the
        // closer of it and its predecessor.
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if work(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut boundary = lo;
        if boundary > 0 && target - work(boundary - 1) < work(boundary) - target {
            boundary -= 1;
        }
        // Leave at least one row for this PE and for each one after it.
        let boundary = boundary.clamp(start + 1, n - (parts - k));
        ranges.push(start..boundary);
        start = boundary;
    }
    ranges.push(start..n);
    debug_assert!(ranges.iter().all(|r| !r.is_empty()));
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::super::generate::{poisson2d, poisson3d, random_spd};
    use super::*;

    fn check_balanced(a: &Csr<f64>, parts: usize) {
        let ranges = partition_rows(a, parts).unwrap();
        assert_eq!(ranges.len(), parts);
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges[parts - 1].end, a.n_rows());
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start, "contiguous");
        }
        let rp = a.row_ptr();
        let work = |r: &Range<usize>| (rp[r.end] - rp[r.start]) as usize + r.len();
        let total = a.nnz() + a.n_rows();
        let max_row = (0..a.n_rows())
            .map(|i| (rp[i + 1] - rp[i]) as usize + 1)
            .max()
            .unwrap();
        for r in &ranges {
            assert!(!r.is_empty());
            assert!(
                work(r) <= total.div_ceil(parts) + max_row,
                "{parts} parts: block {r:?} has work {} (ideal {})",
                work(r),
                total / parts
            );
        }
    }

    #[test]
    fn blocks_are_contiguous_nonempty_and_balanced() {
        for a in [
            poisson2d(33).unwrap(),
            poisson3d(9).unwrap(),
            random_spd(1000, 9, 5).unwrap(),
        ] {
            for parts in [1, 2, 3, 4, 7, 8, 16] {
                check_balanced(&a, parts);
            }
        }
    }

    #[test]
    fn one_heavy_row_is_isolated_and_others_still_get_rows() {
        // Row 0 holds 100 entries, the other 9 rows one each.
        let mut t: Vec<(u32, u32, f64)> = (0..100).map(|c| (0, c, 1.0)).collect();
        t.extend((1..10).map(|r| (r, r, 1.0)));
        let a = Csr::from_triplets(10, 100, t).unwrap();
        let ranges = partition_rows(&a, 4).unwrap();
        assert_eq!(ranges[0], 0..1);
        assert!(ranges.iter().all(|r| !r.is_empty()));
        check_balanced(&a, 4);
        check_balanced(&a, 10);
    }

    #[test]
    fn rows_equal_to_parts_gives_one_row_each() {
        let a = poisson2d(3).unwrap();
        let ranges = partition_rows(&a, 9).unwrap();
        assert_eq!(ranges, (0..9).map(|i| i..i + 1).collect::<Vec<_>>());
    }

    #[test]
    fn too_many_or_zero_parts_are_errors() {
        let a = poisson2d(2).unwrap();
        assert_eq!(
            partition_rows(&a, 5),
            Err(PartitionError::TooManyParts { parts: 5, rows: 4 })
        );
        assert_eq!(partition_rows(&a, 0), Err(PartitionError::ZeroParts));
    }

    #[test]
    fn symmetric_poisson_splits_in_the_middle() {
        let a = poisson2d(4).unwrap();
        assert_eq!(partition_rows(&a, 2).unwrap(), vec![0..8, 8..16]);
    }
}
