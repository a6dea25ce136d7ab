//! Block decomposition of a structured grid over PEs.

use super::{HaloError, LocalLayout};

/// A structured grid `[nz, ny, nx]` split into `pz × py × px` blocks, one per
/// PE. A 2D grid has `nz = 1`, a 1D grid `nz = ny = 1`.
///
/// * PE numbering is x fastest: `pe = (cz * py + cy) * px + cx`.
/// * Blocks are balanced: along an axis of `n` cells split `p` ways, the first
///   `n % p` blocks hold `n / p + 1` cells, the others `n / p`.
/// * By default an axis with a single global cell is *inactive*: it has no
///   ghost layer and no neighbours, whatever its periodic flag says (the z
///   axis of a 2D grid). A solver whose stencil reaches along such an axis
///   makes it active with [`Decomposition::with_active_axes`]: its one
///   cell then has ghosts on both sides (boundary values, or itself on a
///   periodic axis), like any other axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decomposition {
    global: [usize; 3],
    pes: [usize; 3],
    periodic: [bool; 3],
    active: [bool; 3],
}

/// Origin and extent of block `c` of `p` along an axis of `n` cells.
fn block(n: usize, p: usize, c: usize) -> (usize, usize) {
    let (base, rem) = (n / p, n % p);
    (c * base + c.min(rem), base + usize::from(c < rem))
}

impl Decomposition {
    /// Splits `global = [nz, ny, nx]` into `pes = [pz, py, px]` blocks;
    /// `periodic` says per axis whether the grid wraps around.
    ///
    /// Errors: an axis with no cells ([`HaloError::EmptyAxis`]) or no PEs
    /// ([`HaloError::NoPes`]), or more PEs than cells along an axis
    /// ([`HaloError::MorePesThanCells`]; this includes `pz != 1` on a 2D grid).
    pub fn new(
        global: [usize; 3],
        pes: [usize; 3],
        periodic: [bool; 3],
    ) -> Result<Decomposition, HaloError> {
        for axis in 0..3 {
            if global[axis] == 0 {
                return Err(HaloError::EmptyAxis { axis });
            }
            if pes[axis] == 0 {
                return Err(HaloError::NoPes { axis });
            }
            if pes[axis] > global[axis] {
                return Err(HaloError::MorePesThanCells {
                    axis,
                    pes: pes[axis],
                    cells: global[axis],
                });
            }
        }
        Ok(Decomposition {
            global,
            pes,
            periodic,
            active: global.map(|n| n > 1),
        })
    }

    /// The same split with `active` saying per axis whether it has ghost
    /// layers and neighbours. An axis of more than one cell is always
    /// active (`active[a]` only adds axes: a stencil that reaches along an
    /// axis needs its ghosts even when the axis has a single cell).
    pub fn with_active_axes(mut self, active: [bool; 3]) -> Decomposition {
        for (a, on) in active.into_iter().enumerate() {
            self.active[a] |= on;
        }
        self
    }

    /// Splits `global` over `p` PEs, choosing the factorization `pz·py·px = p`
    /// whose busiest PE sends the fewest halo cells to other PEs: for each
    /// split axis, the largest block's face area normal to it times the
    /// faces a middle block has there (1 for two PEs on a non-periodic axis,
    /// else 2). This splits the largest axes first. Among equal costs it splits the slower
    /// axes (z, then y) more, because their faces are contiguous in memory
    /// (x fastest) and cheaper to pack. An axis never gets more PEs than
    /// cells, so a 2D grid (`nz = 1`) is never split along z.
    ///
    /// Errors: [`HaloError::NoPesAtAll`] for `p = 0`, [`HaloError::EmptyAxis`],
    /// and [`HaloError::NoFactorization`] when no factorization fits.
    pub fn auto(
        global: [usize; 3],
        p: usize,
        periodic: [bool; 3],
    ) -> Result<Decomposition, HaloError> {
        Decomposition::auto_for_halo(global, p, periodic, 1)
    }

    /// [`Decomposition::auto`] for a halo `halo` cells wide: among the
    /// factorizations whose blocks are at least `halo` cells thick along
    /// every split or periodic axis (the ones a halo plan of that width
    /// accepts), the cheapest; when there is none, `auto`'s choice (whose
    /// halo plan then says which axis is too thin).
    pub fn auto_for_halo(
        global: [usize; 3],
        p: usize,
        periodic: [bool; 3],
        halo: usize,
    ) -> Result<Decomposition, HaloError> {
        if p == 0 {
            return Err(HaloError::NoPesAtAll);
        }
        if let Some(axis) = (0..3).find(|&a| global[a] == 0) {
            return Err(HaloError::EmptyAxis { axis });
        }
        let mut best: Option<(usize, [usize; 3])> = None;
        let mut best_thick: Option<(usize, [usize; 3])> = None;
        // Ascending pz, then py: a later candidate of equal cost splits the
        // slower axes more, so `<=` keeps it.
        for pz in (1..=p).filter(|d| p % d == 0) {
            let rest = p / pz;
            for py in (1..=rest).filter(|d| rest % d == 0) {
                let pes = [pz, py, rest / py];
                if (0..3).any(|a| pes[a] > global[a]) {
                    continue;
                }
                let ext: [usize; 3] = std::array::from_fn(|a| global[a].div_ceil(pes[a]));
                let cost: usize = (0..3)
                    .map(|a| {
                        let sides = match pes[a] {
                            1 => 0,
                            2 if !periodic[a] => 1,
                            _ => 2,
                        };
                        sides
                            * (0..3)
                                .filter(|&b| b != a)
                                .map(|b| ext[b])
                                .product::<usize>()
                    })
                    .sum();
                if best.map_or(true, |(c, _)| cost <= c) {
                    best = Some((cost, pes));
                }
                // (An axis of one cell is a 2D grid's z: no halo there.)
                let exchanges = |a: usize| pes[a] > 1 || (periodic[a] && global[a] > 1);
                let thick = (0..3).all(|a| !exchanges(a) || global[a] / pes[a] >= halo);
                if thick && best_thick.map_or(true, |(c, _)| cost <= c) {
                    best_thick = Some((cost, pes));
                }
            }
        }
        match best_thick.or(best) {
            Some((_, pes)) => Decomposition::new(global, pes, periodic),
            None => Err(HaloError::NoFactorization { pes: p, global }),
        }
    }

    /// The global grid `[nz, ny, nx]`.
    pub fn global(&self) -> [usize; 3] {
        self.global
    }

    /// PEs per axis `[pz, py, px]`.
    pub fn pes(&self) -> [usize; 3] {
        self.pes
    }

    /// Whether each axis wraps around.
    pub fn periodic(&self) -> [bool; 3] {
        self.periodic
    }

    /// Whether an axis has ghost cells: its global extent is more than 1,
    /// or [`Decomposition::with_active_axes`] made it active.
    pub fn is_active(&self, axis: usize) -> bool {
        self.active[axis]
    }

    /// Number of PEs, `pz * py * px`.
    pub fn num_pes(&self) -> usize {
        self.pes.iter().product()
    }

    /// Block coordinates `[cz, cy, cx]` of a PE.
    ///
    /// # Panics
    /// If `pe >= num_pes()` (a programmer error: PE ids come from this
    /// decomposition).
    pub fn coords(&self, pe: usize) -> [usize; 3] {
        assert!(
            pe < self.num_pes(),
            "PE {pe} out of range (have {})",
            self.num_pes()
        );
        let [_, py, px] = self.pes;
        [pe / (py * px), (pe / px) % py, pe % px]
    }

    /// The PE at block coordinates `[cz, cy, cx]`.
    ///
    /// # Panics
    /// If a coordinate is not below the PE count along its axis.
    pub fn pe_at(&self, coords: [usize; 3]) -> usize {
        assert!(
            (0..3).all(|a| coords[a] < self.pes[a]),
            "block coordinates {coords:?} out of range (PEs {:?})",
            self.pes
        );
        let [_, py, px] = self.pes;
        (coords[0] * py + coords[1]) * px + coords[2]
    }

    /// Interior cells of a PE's block, `[ez, ey, ex]`.
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn local_extent(&self, pe: usize) -> [usize; 3] {
        let c = self.coords(pe);
        std::array::from_fn(|a| block(self.global[a], self.pes[a], c[a]).1)
    }

    /// Global index of the first interior cell of a PE's block.
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn local_origin(&self, pe: usize) -> [usize; 3] {
        let c = self.coords(pe);
        std::array::from_fn(|a| block(self.global[a], self.pes[a], c[a]).0)
    }

    /// Largest block extent per axis (`ceil(n / p)`), for allocating the same
    /// size on every PE (symmetric memory).
    pub fn max_local_extent(&self) -> [usize; 3] {
        std::array::from_fn(|a| self.global[a].div_ceil(self.pes[a]))
    }

    /// Smallest block extent per axis (`floor(n / p)`).
    pub fn min_local_extent(&self) -> [usize; 3] {
        std::array::from_fn(|a| self.global[a] / self.pes[a])
    }

    /// The PE next to `pe` along `axis` in direction `dir` (−1 or +1).
    /// Periodic axes wrap; with one PE along a periodic axis the neighbour is
    /// `pe` itself (a self-pulse). `None` at a physical (non-periodic)
    /// boundary and along inactive axes (no ghosts).
    ///
    /// # Panics
    /// If `pe >= num_pes()`, `axis > 2` or `dir` is not −1 or +1.
    pub fn neighbor(&self, pe: usize, axis: usize, dir: i32) -> Option<usize> {
        assert!(dir == -1 || dir == 1, "dir must be -1 or +1, got {dir}");
        let mut c = self.coords(pe);
        if !self.is_active(axis) {
            return None;
        }
        let p = self.pes[axis];
        let next = c[axis] as i64 + i64::from(dir);
        c[axis] = if (0..p as i64).contains(&next) {
            next as usize
        } else if self.periodic[axis] {
            next.rem_euclid(p as i64) as usize
        } else {
            return None;
        };
        Some(self.pe_at(c))
    }

    /// The padded layout of a PE's array with ghost width `halo` on both
    /// sides of every active axis (none on inactive ones).
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn layout(&self, pe: usize, halo: usize) -> LocalLayout {
        LocalLayout::new(self.local_extent(pe), self.halo_widths(halo))
    }

    /// The padded layout of the largest block: the size to allocate on every
    /// PE for symmetric memory.
    pub fn max_layout(&self, halo: usize) -> LocalLayout {
        LocalLayout::new(self.max_local_extent(), self.halo_widths(halo))
    }

    /// Ghost width per axis: `halo` on active axes, 0 on inactive ones.
    pub fn halo_widths(&self, halo: usize) -> [usize; 3] {
        std::array::from_fn(|a| if self.is_active(a) { halo } else { 0 })
    }
}
