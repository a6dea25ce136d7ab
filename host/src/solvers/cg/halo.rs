//! The halo plan of a row-distributed SpMV: which `x` entries each PE needs
//! from which other PE, where they land, and each PE's matrix with columns
//! renumbered into its local `x`.
//!
//! # Layout and protocol (what the device side implements)
//!
//! PE `p` owns the contiguous rows `rows(p) = s_p..e_p` of `A` and the same
//! entries of `x` and `y` (`A` is square). Its local `x` vector has
//! `n_local + n_ghost` entries:
//!
//! ```text
//! local x of PE p:  [ x[s_p..e_p] (owned, n_local) | ghosts from owner q0 | ghosts from q1 | … ]
//!                     0 .. n_local                   ghost blocks in increasing owner order,
//!                                                    each sorted by global index, no duplicates
//! ```
//!
//! The local matrix (`n_local × (n_local + n_ghost)`) refers to these local
//! columns: global column `c` becomes `c − s_p` when owned, and the ghost
//! slot of `c` otherwise. Each row keeps the *global* matrix's entry order
//! (so its local columns are not sorted): a local SpMV then adds the same
//! products in the same order as the global one and gives bitwise-equal
//! results (same without FMA contraction on both sides).
//!
//! One exchange per SpMV, for every pair (owner `q` → receiver `p`) with a
//! non-empty list: `q` gathers `x_local_q[indices[k]]` (owner-local
//! indices, all `< n_local_q`) for `k = 0..len` and puts them at
//! `x_local_p[dest_start + k]`, then signals `p`. [`SendList`] on the owner
//! and [`GhostBlock`] on the receiver describe the same transfer: same
//! length, same order, `indices[k] + s_q == globals[k]`, and `dest_start`
//! is the block's `start`. `p` may run its SpMV once every owner it
//! receives from has signalled.

use std::ops::Range;

use super::csr::{spmv_rows, Csr};
use super::error::PartitionError;
use super::scalar::Scalar;

/// A PE's matrix over its local `x`: `n_rows` owned rows,
/// `n_cols = n_local + n_ghost` local columns, CSR arrays as in [`Csr`] but
/// with each row's entries in the global matrix's order (local columns not
/// sorted).
#[derive(Clone, Debug, PartialEq)]
pub struct LocalCsr<T = f64> {
    n_rows: usize,
    n_cols: usize,
    row_ptr: Vec<u64>,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> LocalCsr<T> {
    /// Owned rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Local columns: owned then ghost.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }
    /// Row offsets (`n_rows + 1` entries, from 0).
    pub fn row_ptr(&self) -> &[u64] {
        &self.row_ptr
    }
    /// Local column of every entry.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of every entry.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// `y = A_local x_local`, rows summed in stored order.
    ///
    /// # Panics
    /// If `x.len() != n_cols` or `y.len() != n_rows` (a caller bug).
    pub fn spmv_into(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.n_cols, "local spmv: x has the wrong length");
        assert_eq!(y.len(), self.n_rows, "local spmv: y has the wrong length");
        spmv_rows(&self.row_ptr, &self.col_idx, &self.values, x, y);
    }
}

/// Ghost entries a PE receives from one owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GhostBlock {
    owner: usize,
    globals: Vec<u32>,
    start: usize,
}

impl GhostBlock {
    /// The PE that owns these entries of `x`.
    pub fn owner(&self) -> usize {
        self.owner
    }
    /// Their global indices: sorted, without duplicates, all in the owner's
    /// rows.
    pub fn globals(&self) -> &[u32] {
        &self.globals
    }
    /// Local column of the first one; the block fills
    /// `start..start + len` of the receiver's local `x`.
    pub fn start(&self) -> usize {
        self.start
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.globals.len()
    }
    /// Never true for a block of a plan: empty blocks are not listed.
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }
}

/// Entries a PE gathers from its owned `x` and puts to one receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendList {
    receiver: usize,
    indices: Vec<u32>,
    dest_start: usize,
}

impl SendList {
    /// The receiving PE.
    pub fn receiver(&self) -> usize {
        self.receiver
    }
    /// Owner-local indices to gather (`< n_local` of the sender), in the
    /// order the receiver expects them.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }
    /// Local column in the receiver's `x` where entry 0 lands; entry `k`
    /// lands at `dest_start + k`.
    pub fn dest_start(&self) -> usize {
        self.dest_start
    }
}

/// Everything one PE needs for its part of the distributed SpMV.
#[derive(Clone, Debug, PartialEq)]
pub struct PePlan<T = f64> {
    rows: Range<usize>,
    matrix: LocalCsr<T>,
    ghosts: Vec<GhostBlock>,
    sends: Vec<SendList>,
}

impl<T: Scalar> PePlan<T> {
    /// Owned global rows (= owned entries of `x` and `y`).
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }
    /// Number of owned rows.
    pub fn n_local(&self) -> usize {
        self.rows.len()
    }
    /// Number of ghost entries.
    pub fn n_ghost(&self) -> usize {
        self.matrix.n_cols - self.rows.len()
    }
    /// The local matrix over owned-then-ghost columns.
    pub fn matrix(&self) -> &LocalCsr<T> {
        &self.matrix
    }
    /// Ghost blocks, in increasing owner order (the order of the ghost
    /// region).
    pub fn ghosts(&self) -> &[GhostBlock] {
        &self.ghosts
    }
    /// What this PE sends, in increasing receiver order.
    pub fn sends(&self) -> &[SendList] {
        &self.sends
    }
}

/// The halo plan of a square matrix over a row partition; see the
/// [module docs](self) for the layout and the exchange it describes.
#[derive(Clone, Debug, PartialEq)]
pub struct HaloPlan<T = f64> {
    n: usize,
    pes: Vec<PePlan<T>>,
}

impl<T: Scalar> HaloPlan<T> {
    /// Plans the distributed SpMV of `a` over `partition` (as from
    /// [`partition_rows`](super::partition_rows)).
    ///
    /// Errors: `a` not square, or `partition` not a sequence of non-empty
    /// contiguous ranges covering `0..n` in order.
    pub fn new(a: &Csr<T>, partition: &[Range<usize>]) -> Result<Self, PartitionError> {
        if !a.is_square() {
            return Err(PartitionError::NotSquare {
                n_rows: a.n_rows(),
                n_cols: a.n_cols(),
            });
        }
        let n = a.n_rows();
        check_partition(partition, n)?;
        let starts: Vec<usize> = partition.iter().map(|r| r.start).collect();
        let owner_of = |c: usize| starts.partition_point(|&s| s <= c) - 1;

        let mut pes: Vec<PePlan<T>> = partition
            .iter()
            .map(|rows| plan_pe(a, rows.clone(), &owner_of))
            .collect();

        // Send side: the mirror of every ghost block, listed on its owner
        // in receiver order (receivers are visited in increasing order).
        for p in 0..pes.len() {
            for b in 0..pes[p].ghosts.len() {
                let block = &pes[p].ghosts[b];
                let owner = block.owner;
                let s = partition[owner].start as u32;
                let list = SendList {
                    receiver: p,
                    indices: block.globals.iter().map(|&g| g - s).collect(),
                    dest_start: block.start,
                };
                pes[owner].sends.push(list);
            }
        }
        Ok(Self { n, pes })
    }

    /// Number of PEs.
    pub fn n_pes(&self) -> usize {
        self.pes.len()
    }

    /// Global dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The plan of PE `pe`.
    ///
    /// # Panics
    /// If `pe >= n_pes()` (a caller bug).
    pub fn pe(&self, pe: usize) -> &PePlan<T> {
        &self.pes[pe]
    }

    /// Every PE's plan, in PE order.
    pub fn pes(&self) -> &[PePlan<T>] {
        &self.pes
    }

    /// Runs the distributed SpMV on the CPU exactly as the device will:
    /// every local `x` is poisoned with NaN, filled with its owned slice,
    /// every owner gathers its [`SendList`]s and puts them into the
    /// receivers' ghost regions, then every PE multiplies its local matrix.
    /// Returns the concatenated `y`, which equals `a.spmv(x)` bitwise.
    pub fn simulate_spmv(&self, x: &[T]) -> Result<Vec<T>, PartitionError> {
        if x.len() != self.n {
            return Err(PartitionError::SizeMismatch {
                expected: self.n,
                got: x.len(),
            });
        }
        let poison = T::from_f64(f64::NAN);
        let mut local: Vec<Vec<T>> = self
            .pes
            .iter()
            .map(|pe| {
                let mut v = vec![poison; pe.matrix.n_cols];
                v[..pe.n_local()].copy_from_slice(&x[pe.rows.clone()]);
                v
            })
            .collect();
        for (owner, pe) in self.pes.iter().enumerate() {
            for send in &pe.sends {
                let gathered: Vec<T> = send
                    .indices
                    .iter()
                    .map(|&i| local[owner][i as usize])
                    .collect();
                let dest = &mut local[send.receiver];
                dest[send.dest_start..send.dest_start + gathered.len()].copy_from_slice(&gathered);
            }
        }
        let mut y = vec![T::ZERO; self.n];
        for (pe, x_local) in self.pes.iter().zip(&local) {
            pe.matrix.spmv_into(x_local, &mut y[pe.rows.clone()]);
        }
        Ok(y)
    }
}

/// Checks that `partition` is non-empty contiguous ranges covering `0..n`.
fn check_partition(partition: &[Range<usize>], n: usize) -> Result<(), PartitionError> {
    let bad = |m: String| Err(PartitionError::InvalidPartition(m));
    if partition.is_empty() {
        return bad("no parts".into());
    }
    let mut expect = 0;
    for (pe, r) in partition.iter().enumerate() {
        if r.start != expect {
            return bad(format!(
                "PE {pe} starts at row {}, expected {expect}",
                r.start
            ));
        }
        if r.end <= r.start {
            return bad(format!("PE {pe} has no rows ({r:?})"));
        }
        expect = r.end;
    }
    if expect != n {
        return bad(format!(
            "the parts cover 0..{expect}, the matrix has {n} rows"
        ));
    }
    Ok(())
}

/// The receive side and local matrix of the PE owning `rows`.
fn plan_pe<T: Scalar>(
    a: &Csr<T>,
    rows: Range<usize>,
    owner_of: &impl Fn(usize) -> usize,
) -> PePlan<T> {
    let owned = rows.start as u32..rows.end as u32;
    let lo = a.row_ptr()[rows.start] as usize;
    let hi = a.row_ptr()[rows.end] as usize;
    let entries = &a.col_idx()[lo..hi];

    // Remote columns, sorted and deduplicated. Partitions are contiguous
    // and ordered, so sorting by global index also groups by owner in
    // increasing owner order.
    let mut remote: Vec<u32> = entries
        .iter()
        .copied()
        .filter(|c| !owned.contains(c))
        .collect();
    remote.sort_unstable();
    remote.dedup();

    let n_local = rows.len();
    let col_idx: Vec<u32> = entries
        .iter()
        .map(|&c| {
            if owned.contains(&c) {
                c - owned.start
            } else {
                let k = remote
                    .binary_search(&c)
                    .expect("every remote column was collected");
                (n_local + k) as u32
            }
        })
        .collect();
    let row_ptr: Vec<u64> = a.row_ptr()[rows.start..=rows.end]
        .iter()
        .map(|&p| p - lo as u64)
        .collect();

    let mut ghosts: Vec<GhostBlock> = Vec::new();
    for (k, &c) in remote.iter().enumerate() {
        let owner = owner_of(c as usize);
        match ghosts.last_mut() {
            Some(block) if block.owner == owner => block.globals.push(c),
            _ => ghosts.push(GhostBlock {
                owner,
                globals: vec![c],
                start: n_local + k,
            }),
        }
    }

    PePlan {
        matrix: LocalCsr {
            n_rows: n_local,
            n_cols: n_local + remote.len(),
            row_ptr,
            col_idx,
            values: a.values()[lo..hi].to_vec(),
        },
        rows,
        ghosts,
        sends: Vec::new(),
    }
}

#[cfg(test)]
// A one-PE partition is a list holding one range, not a range to collect.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::super::generate::{poisson2d, poisson3d, random_spd};
    use super::super::partition::partition_rows;
    use super::super::rng::SplitMix64;
    use super::*;

    /// A random non-symmetric square matrix with long-range couplings.
    fn random_general(n: usize, per_row: usize, seed: u64) -> Csr<f64> {
        let mut rng = SplitMix64::new(seed);
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i as u32, i as u32, 4.0));
            for _ in 0..per_row {
                let j = rng.below(n as u64) as u32;
                t.push((i as u32, j, rng.next_f64() - 0.5));
            }
        }
        Csr::from_triplets(n, n, t).unwrap()
    }

    fn random_x(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        // Values of mixed magnitude so that summation order matters.
        (0..n)
            .map(|_| (rng.next_f64() - 0.3) * 1e3f64.powf(rng.next_f64()))
            .collect()
    }

    #[test]
    fn distributed_spmv_equals_global_spmv_bitwise() {
        for (name, a) in [
            ("poisson2d(23)", poisson2d(23).unwrap()),
            ("poisson3d(7)", poisson3d(7).unwrap()),
            ("random_spd(400, 9, 2)", random_spd(400, 9, 2).unwrap()),
            ("random_general(300, 6, 4)", random_general(300, 6, 4)),
        ] {
            let x = random_x(a.n_rows(), 99);
            let want = a.spmv(&x);
            for p in [1, 2, 3, 4, 8] {
                let plan = HaloPlan::new(&a, &partition_rows(&a, p).unwrap()).unwrap();
                let got = plan.simulate_spmv(&x).unwrap();
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{name}, P = {p}, row {i}: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn distributed_spmv_works_in_f32() {
        let a = random_spd(200, 7, 8).unwrap().cast::<f32>().unwrap();
        let x: Vec<f32> = random_x(200, 3).iter().map(|&v| v as f32).collect();
        let want = a.spmv(&x);
        let plan = HaloPlan::new(&a, &partition_rows(&a, 3).unwrap()).unwrap();
        let got = plan.simulate_spmv(&x).unwrap();
        assert!(got
            .iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits()));
    }

    #[test]
    fn poisson2d_two_pes_exchange_one_grid_line_each() {
        let a = poisson2d(4).unwrap();
        let plan = HaloPlan::new(&a, &[0..8, 8..16]).unwrap();
        let (p0, p1) = (plan.pe(0), plan.pe(1));
        assert_eq!(p0.n_local(), 8);
        assert_eq!(p0.n_ghost(), 4);
        assert_eq!(p0.ghosts().len(), 1);
        assert_eq!(p0.ghosts()[0].owner(), 1);
        assert_eq!(p0.ghosts()[0].globals(), &[8, 9, 10, 11]);
        assert_eq!(p0.ghosts()[0].start(), 8);
        assert_eq!(p1.ghosts()[0].globals(), &[4, 5, 6, 7]);
        // PE 1 sends its first grid line (owner-local 0..4) to PE 0's ghosts.
        assert_eq!(p1.sends().len(), 1);
        assert_eq!(p1.sends()[0].receiver(), 0);
        assert_eq!(p1.sends()[0].indices(), &[0, 1, 2, 3]);
        assert_eq!(p1.sends()[0].dest_start(), 8);
        assert_eq!(p0.sends()[0].indices(), &[4, 5, 6, 7]);
        // Row 5 of PE 0 (global 5 = (1, 1)): globals 1, 4, 5, 6, 9 → the
        // last is ghost 9 → local column 8 + 1.
        let m = p0.matrix();
        let r = m.row_ptr()[5] as usize..m.row_ptr()[6] as usize;
        assert_eq!(&m.col_idx()[r], &[1, 4, 5, 6, 9]);
        // Row 0 of PE 1 (global 8): globals 4, 8, 9, 12 → ghost 4 is local 8
        // and comes first, as in the global row.
        let m = p1.matrix();
        let r = m.row_ptr()[0] as usize..m.row_ptr()[1] as usize;
        assert_eq!(&m.col_idx()[r], &[8, 0, 1, 4]);
    }

    #[test]
    fn ghost_blocks_and_send_lists_describe_the_same_transfers() {
        let a = random_general(500, 5, 17);
        for p in [2, 3, 8] {
            let partition = partition_rows(&a, p).unwrap();
            let plan = HaloPlan::new(&a, &partition).unwrap();
            for (r, pe) in plan.pes().iter().enumerate() {
                let mut next = pe.n_local();
                let mut prev_owner = None;
                for block in pe.ghosts() {
                    assert_ne!(block.owner(), r, "a PE never receives from itself");
                    assert!(prev_owner < Some(block.owner()), "blocks in owner order");
                    prev_owner = Some(block.owner());
                    assert_eq!(block.start(), next, "blocks are packed");
                    next += block.len();
                    assert!(block.globals().windows(2).all(|w| w[0] < w[1]));
                    let owner_rows = &partition[block.owner()];
                    assert!(block
                        .globals()
                        .iter()
                        .all(|&g| owner_rows.contains(&(g as usize))));
                    let send = plan
                        .pe(block.owner())
                        .sends()
                        .iter()
                        .find(|s| s.receiver() == r)
                        .expect("the owner has a send list for this receiver");
                    assert_eq!(send.dest_start(), block.start());
                    let as_globals: Vec<u32> = send
                        .indices()
                        .iter()
                        .map(|&i| i + owner_rows.start as u32)
                        .collect();
                    assert_eq!(as_globals, block.globals());
                }
                assert_eq!(next, pe.matrix().n_cols());
                // Every ghost is used by some entry, and every remote column
                // is a ghost.
                let mut used = vec![false; pe.matrix().n_cols()];
                for &c in pe.matrix().col_idx() {
                    used[c as usize] = true;
                }
                assert!(used[pe.n_local()..].iter().all(|&u| u));
                let sends_in_order = pe
                    .sends()
                    .windows(2)
                    .all(|w| w[0].receiver() < w[1].receiver());
                assert!(sends_in_order);
            }
        }
    }

    #[test]
    fn bad_partitions_and_inputs_are_errors() {
        let a = poisson2d(3).unwrap();
        for bad in [
            vec![],
            vec![0..4, 5..9],
            vec![0..4, 4..4, 4..9],
            vec![0..4, 4..8],
            vec![1..9],
        ] {
            assert!(
                matches!(
                    HaloPlan::new(&a, &bad),
                    Err(PartitionError::InvalidPartition(_))
                ),
                "{bad:?}"
            );
        }
        let rect = Csr::from_triplets(2, 3, vec![(0, 0, 1.0)]).unwrap();
        assert!(matches!(
            HaloPlan::new(&rect, &[0..2]),
            Err(PartitionError::NotSquare { .. })
        ));
        let plan = HaloPlan::new(&a, &[0..9]).unwrap();
        assert_eq!(
            plan.simulate_spmv(&[1.0; 8]),
            Err(PartitionError::SizeMismatch {
                expected: 9,
                got: 8
            })
        );
    }

    #[test]
    fn single_pe_has_no_ghosts_and_keeps_the_matrix() {
        let a = poisson3d(4).unwrap();
        let plan = HaloPlan::new(&a, &[0..64]).unwrap();
        let pe = plan.pe(0);
        assert_eq!(pe.n_ghost(), 0);
        assert!(pe.ghosts().is_empty() && pe.sends().is_empty());
        assert_eq!(pe.matrix().col_idx(), a.col_idx());
        assert_eq!(pe.matrix().row_ptr(), a.row_ptr());
    }
}
