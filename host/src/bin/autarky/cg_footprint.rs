//! What an `autarky cg` solve needs in memory, bounded from above before
//! anything large is allocated: the Poisson matrices from `N` alone (before
//! they are generated), a Matrix Market file from its rows and row
//! offsets (before the halo plan and the heaps).
//!
//! Host memory, besides the PEs' symmetric heaps (which live there too on
//! the emulator, and on the GPU otherwise):
//! - always: the matrix (`row_ptr`, 8 B a row, and what the generator
//!   reserves for `col_idx` + `values`, 12 B a nonzero, `2d + 1` a row),
//!   the solver's halo plan (every PE's local CSR, 8 B a row and 12 B a
//!   nonzero, its ghost and send indices, 4 B each), and 16 MiB for the
//!   program itself (9.9 MB peak RSS measured for `--poisson2d 4`);
//! - on top, the largest of the solver's phases (8 B a vector entry):
//!   planning (`b`, `x₀`, the diagonal, its inverse, one PE's column
//!   scan), uploading (the same vectors, one padded array of one PE), the
//!   initial state (the same, `A x₀`, `r₀`, `z₀`, `w₀`, the per-PE copies
//!   of `x`, `r`, `y` and both halves of `[owned | ghosts]` `v`), and the
//!   end (`b`, the per-PE copies, the gathered `x`, `A x` for the true
//!   residual, one PE's download).
//!
//! Each term bounds what the code holds; of the phases only the largest
//! counts, since each one's vectors are gone before the next one's peak.
//! Measured (peak RSS from `/usr/bin/time
//! -v`, `autarky --emulator=2 cg … --max-iters 1`, debug build) against
//! this estimate with the emulator's heaps added:
//!
//! | run                                          | peak RSS | estimate | ratio |
//! |----------------------------------------------|----------|----------|-------|
//! | `--poisson3d 64`                             | 105 MiB  | 129 MiB  | 1.23  |
//! | `--poisson3d 96`                             | 329 MiB  | 397 MiB  | 1.21  |
//! | `--poisson3d 96 --pes 4`                     | 342 MiB  | 406 MiB  | 1.19  |
//! | `--poisson3d 128`                            | 767 MiB  | 918 MiB  | 1.20  |
//! | `--poisson3d 128 --pes 16 --precond jacobi`  | 820 MiB  | 977 MiB  | 1.19  |
//! | `--poisson3d 128 --variant single-reduction` | 815 MiB  | 918 MiB  | 1.13  |
//! | `--poisson2d 1000`                           | 304 MiB  | 379 MiB  | 1.25  |
//! | `--poisson2d 1000 --pes 16`                  | 312 MiB  | 390 MiB  | 1.25  |
//! | `--matrix` (64³ Poisson, a `general` file)   | 111 MiB  | 129 MiB  | 1.16  |
//! | `--matrix` (the same), `--pes 4`             | 112 MiB  | 149 MiB  | 1.33  |
//!
//! So the estimate is 13–33 % above the peak (the heaps are counted whole,
//! the emulator touches only the parts a run writes). `--poisson3d 400`
//! estimates 28.9 GB; the trial that asked for this check saw it peak at the
//! 23 GB of its whole machine.
//!
//! The heap per PE is [`heap_bytes_for`] of bounds of the largest PE's
//! rows, nonzeros, `[owned | ghosts]` length and send entries.

use autarky::solvers::cg::{heap_bytes_for, partition_rows, Csr, PartitionError};

/// Sizes of a solve's matrix and of its largest PE's share, as upper
/// bounds (exact where the matrix is known).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows (= columns).
    pub rows: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// Nonzeros the matrix's arrays are allocated for.
    pub nnz_alloc: u64,
    /// PEs.
    pub pes: u64,
    /// Most rows one PE owns.
    pub pe_rows: u64,
    /// Most nonzeros one PE owns.
    pub pe_nnz: u64,
    /// Most ghost entries one PE reads.
    pub pe_ghosts: u64,
    /// Longest `[owned | ghosts]` vector of a PE.
    pub pe_vlen: u64,
    /// Most send-list entries of one PE (all its receivers together).
    pub pe_sends: u64,
}

impl Shape {
    /// The `2d + 1`-point Poisson matrix of an `n^d` grid (`d` 2 or 3)
    /// over `pes` PEs, without building it.
    ///
    /// The rows are split into contiguous blocks balanced by nonzeros + 1
    /// ([`partition_rows`]); a row's work is `2d + 2` less one per grid face
    /// it lies on. Those deficits repeat plane by plane (`s = n^(d-1)`
    /// rows) except in the first and last plane, one more a row there, so
    /// a block's work is off its share of rows by at most about
    /// `s / (2d + 2)` rows, plus the rounding of one row's work: a block
    /// holds at most `⌈rows/P⌉ + s/2 + 2d + 2` rows (the tests check this
    /// against the real partition of 2D and 3D grids on 1..=16 PEs; the
    /// largest excess there is `s/5`), and at least `⌊rows/P⌋` less as
    /// many. A block reads ghosts only within `s` rows of its ends (the
    /// largest stride), so at most `2s`; a PE sends at most the `2s` rows
    /// near its ends, each to at most `min(2d, P − 1)` other PEs, and to
    /// only the blocks next to it when every block spans a plane.
    ///
    /// Errors: fewer rows than PEs (as the partition would say), or a grid
    /// too large to count (`None` from the arithmetic: reported as such).
    pub fn poisson(d: u32, n: u64, pes: u32) -> Result<Option<Shape>, PartitionError> {
        let Some(rows) = n.checked_pow(d) else {
            return Ok(None);
        };
        let p = pes as u64;
        if rows < p {
            return Err(PartitionError::TooManyParts {
                parts: pes as usize,
                rows: rows as usize,
            });
        }
        let points = 2 * d as u64 + 1;
        let s = n.pow(d - 1);
        let Some(nnz_alloc) = rows.checked_mul(points) else {
            return Ok(None);
        };
        let nnz = nnz_alloc - 2 * d as u64 * s;
        let shape = if p == 1 {
            Shape {
                rows,
                nnz,
                nnz_alloc,
                pes: 1,
                pe_rows: rows,
                pe_nnz: nnz,
                pe_ghosts: 0,
                pe_vlen: rows,
                pe_sends: 0,
            }
        } else {
            // How far a block may be off its share of the rows.
            let slack = s / 2 + points + 1;
            let pe_rows = rows.min(rows.div_ceil(p) + slack);
            let pe_ghosts = (2 * s).min(rows - 1);
            Shape {
                rows,
                nnz,
                nnz_alloc,
                pes: p,
                pe_rows,
                pe_nnz: nnz.min(points * pe_rows),
                pe_ghosts,
                pe_vlen: rows.min(pe_rows + pe_ghosts),
                pe_sends: if rows / p >= s + slack {
                    // Every block spans a plane: a PE sends only to the
                    // blocks on either side, the s rows at that end.
                    (2 * s).min(pe_rows)
                } else {
                    (2 * d as u64).min(p - 1) * (2 * s).min(pe_rows)
                },
            }
        };
        Ok(Some(shape))
    }

    /// A matrix that exists, over `pes` PEs: rows and nonzeros per PE from
    /// the real partition; ghosts at most the other PEs' rows and at most
    /// the PE's nonzeros; sends at most the PE's rows once per other PE and
    /// at most the other PEs' nonzeros.
    ///
    /// Errors: fewer rows than PEs.
    pub fn of(a: &Csr<f64>, pes: u32) -> Result<Shape, PartitionError> {
        let parts = partition_rows(a, pes as usize)?;
        let (rows, nnz, p) = (a.n_rows() as u64, a.nnz() as u64, pes as u64);
        let mut shape = Shape {
            rows,
            nnz,
            nnz_alloc: nnz,
            pes: p,
            pe_rows: 0,
            pe_nnz: 0,
            pe_ghosts: 0,
            pe_vlen: 0,
            pe_sends: 0,
        };
        for r in parts {
            let n_p = r.len() as u64;
            let nnz_p = a.row_ptr()[r.end] - a.row_ptr()[r.start];
            let ghosts = (rows - n_p).min(nnz_p);
            shape.pe_rows = shape.pe_rows.max(n_p);
            shape.pe_nnz = shape.pe_nnz.max(nnz_p);
            shape.pe_ghosts = shape.pe_ghosts.max(ghosts);
            shape.pe_vlen = shape.pe_vlen.max(n_p + ghosts);
            shape.pe_sends = shape.pe_sends.max((n_p * (p - 1)).min(nnz - nnz_p));
        }
        Ok(shape)
    }

    /// Upper bound of every PE's symmetric heap ([`heap_bytes_for`]).
    pub fn heap_per_pe(&self) -> u64 {
        let us = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        heap_bytes_for(
            us(self.pe_rows),
            us(self.pe_nnz),
            us(self.pe_vlen),
            us(self.pe_sends),
            self.pes as u32,
        ) as u64
    }

    /// Upper bound of the host memory of a solve besides the symmetric
    /// heaps (module docs), saturating.
    pub fn host_bytes(&self) -> u64 {
        let (r, p) = (self.rows, self.pes);
        let sum = |terms: &[u64]| terms.iter().copied().fold(0, u64::saturating_add);
        // Always there: the program, the matrix, the solver's halo plan.
        let lasting = sum(&[
            16 << 20,
            8 * (r + 1),
            12 * self.nnz_alloc,
            8 * (r + p),
            12 * self.nnz,
            4 * p * (self.pe_ghosts + self.pe_sends),
        ]);
        // Per phase of the solver, on top (8 B an entry; `b`, `x₀`, the
        // diagonal and its inverse live through the first three).
        let early = 8 * 4 * r;
        let initial = sum(&[8 * 3 * r, 16 * p * self.pe_vlen]);
        let phases = [
            // Planning: one PE's column scan.
            early + 4 * self.pe_nnz,
            // Uploading: one padded array of one PE.
            early + 8 * (self.pe_rows + 1).max(self.pe_nnz),
            // The initial state: A x₀, r₀, z₀, w₀, and the per-PE copies.
            early + 8 * 4 * r + initial,
            // The end: b, the per-PE copies, x, A x, one PE's download.
            8 * r + initial + 8 * 2 * r + 8 * self.pe_rows,
        ];
        lasting.saturating_add(phases.into_iter().max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autarky::solvers::cg::{heap_bytes_needed, poisson2d, poisson3d, random_spd, HaloPlan};

    /// The real per-PE maxima of `a` over `pes` PEs:
    /// `(rows, nnz, ghosts, vlen, sends)`.
    fn real(a: &Csr<f64>, pes: u32) -> (u64, u64, u64, u64, u64) {
        let plan = HaloPlan::new(a, &partition_rows(a, pes as usize).unwrap()).unwrap();
        let m = |f: &dyn Fn(&autarky::solvers::cg::PePlan<f64>) -> usize| {
            plan.pes().iter().map(f).max().unwrap() as u64
        };
        (
            m(&|p| p.n_local()),
            m(&|p| p.matrix().nnz()),
            m(&|p| p.n_ghost()),
            m(&|p| p.matrix().n_cols()),
            m(&|p| p.sends().iter().map(|s| s.indices().len()).sum()),
        )
    }

    fn assert_bounds(what: &str, s: &Shape, a: &Csr<f64>, pes: u32) {
        let (rows, nnz, ghosts, vlen, sends) = real(a, pes);
        assert_eq!(s.rows, a.n_rows() as u64, "{what}");
        assert_eq!(s.nnz, a.nnz() as u64, "{what}");
        assert!(s.pe_rows >= rows, "{what}: rows {} < {rows}", s.pe_rows);
        assert!(s.pe_nnz >= nnz, "{what}: nnz {} < {nnz}", s.pe_nnz);
        assert!(s.pe_ghosts >= ghosts, "{what}: ghosts");
        assert!(s.pe_vlen >= vlen, "{what}: vlen {} < {vlen}", s.pe_vlen);
        assert!(
            s.pe_sends >= sends,
            "{what}: sends {} < {sends}",
            s.pe_sends
        );
        let exact = heap_bytes_needed(a, pes).unwrap() as u64;
        assert!(s.heap_per_pe() >= exact, "{what}: heap below the real one");
    }

    #[test]
    fn poisson_shapes_bound_the_real_partition_and_plan() {
        for pes in 1u32..=16 {
            for n in [4u64, 5, 9, 16, 31, 64, 100, 333] {
                let s = Shape::poisson(2, n, pes).unwrap().unwrap();
                assert_bounds(
                    &format!("2D {n}, {pes} PEs"),
                    &s,
                    &poisson2d(n as usize).unwrap(),
                    pes,
                );
            }
            for n in [3u64, 4, 7, 12, 20, 33, 48] {
                let s = Shape::poisson(3, n, pes).unwrap().unwrap();
                assert_bounds(
                    &format!("3D {n}, {pes} PEs"),
                    &s,
                    &poisson3d(n as usize).unwrap(),
                    pes,
                );
            }
        }
    }

    #[test]
    fn poisson_heap_bound_is_close_to_the_real_heap_on_sizes_that_matter() {
        for (d, n, pes) in [(3u32, 64u64, 1u32), (3, 64, 4), (3, 48, 16), (2, 512, 8)] {
            let a = if d == 2 {
                poisson2d(n as usize).unwrap()
            } else {
                poisson3d(n as usize).unwrap()
            };
            let bound = Shape::poisson(d, n, pes).unwrap().unwrap().heap_per_pe() as f64;
            let exact = heap_bytes_needed(&a, pes).unwrap() as f64;
            assert!(
                bound >= exact && bound <= 1.15 * exact,
                "{d}D {n} on {pes}: {bound} vs {exact}"
            );
        }
    }

    #[test]
    fn matrix_shapes_bound_the_real_plan() {
        let a = random_spd(500, 7, 3).unwrap();
        for pes in [1u32, 2, 5, 16] {
            assert_bounds(
                &format!("random, {pes} PEs"),
                &Shape::of(&a, pes).unwrap(),
                &a,
                pes,
            );
        }
        let p = poisson3d(10).unwrap();
        assert_eq!(
            Shape::of(&p, 3).unwrap().pe_rows,
            real(&p, 3).0,
            "rows per PE come from the real partition"
        );
    }

    #[test]
    fn more_pes_than_rows_is_the_partition_error() {
        assert!(matches!(
            Shape::poisson(2, 2, 8),
            Err(PartitionError::TooManyParts { parts: 8, rows: 4 })
        ));
    }

    #[test]
    fn the_largest_grids_need_hundreds_of_gib_of_host_memory() {
        // 1290³: 2.1e9 rows, 1.5e10 nonzeros.
        let s = Shape::poisson(3, 1290, 1).unwrap().unwrap();
        assert!(s.host_bytes() > 500 << 30, "{}", s.host_bytes());
        let s = Shape::poisson(2, 46_340, 16).unwrap().unwrap();
        assert!(s.host_bytes() > 300 << 30, "{}", s.host_bytes());
        assert!(s.heap_per_pe() > 10 << 30, "{}", s.heap_per_pe());
    }
}
