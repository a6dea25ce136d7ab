//! Pulse planning: which boxes each PE sends, to whom, and after what.

use super::{Box3, Decomposition, HaloError, LocalLayout};

/// Which ghost cells an exchange fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Footprint {
    /// Faces only: enough for 5-point (2D) and 7-point (3D) stencils. Every
    /// pulse spans the interior in the other axes and forwards nothing.
    Faces,
    /// Faces, edges and corners: enough for 9-point (2D) and 27-point (3D)
    /// stencils. Edges and corners travel by forwarding through earlier pulses.
    Full,
}

/// Part of a pulse's send box made of ghost cells the sender received from
/// an earlier pulse: it may be packed only after that pulse has arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forwarded {
    /// The cells, in the sender's padded coordinates (a sub-box of `send`).
    pub region: Box3,
    /// Id of the incoming pulse on the sender whose arrival fills `region`.
    pub after: usize,
}

/// One message: a box of the sender's padded array copied into the same-shape
/// box of the receiver's ghost layer, along one axis (never diagonal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulse {
    /// Index into [`Plan::pulses`]. Ids follow the global order (axis Z → Y →
    /// X, then direction −1 before +1, then sender PE).
    pub id: usize,
    /// Sending PE.
    pub from_pe: usize,
    /// Receiving PE: `decomp.neighbor(from_pe, axis, dir)`; equal to
    /// `from_pe` for a self-pulse (one PE along a periodic axis).
    pub to_pe: usize,
    /// Axis the data moves along (0 = z, 1 = y, 2 = x).
    pub axis: usize,
    /// Direction the data moves: +1 sends the sender's high interior slab to
    /// the receiver's low ghost layer, −1 the low slab to the high ghost layer.
    pub dir: i32,
    /// Cells read, in the sender's padded coordinates.
    pub send: Box3,
    /// Cells written, in the receiver's padded coordinates; same shape as
    /// `send`, cells paired in row-major order.
    pub recv: Box3,
    /// Sub-boxes of `send` holding only the sender's interior cells:
    /// packable as soon as the sender's iteration is done.
    pub independent: Vec<Box3>,
    /// Sub-boxes of `send` holding ghost cells filled by earlier pulses
    /// (empty with [`Footprint::Faces`]). With `independent` they partition
    /// `send`.
    pub forwarded: Vec<Forwarded>,
}

impl Pulse {
    /// Ids of the pulses this one waits for, ascending, without repeats.
    pub fn depends_on(&self) -> Vec<usize> {
        let mut d: Vec<usize> = self.forwarded.iter().map(|f| f.after).collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Whether the pulse stays on one PE (a periodic axis with one PE).
    pub fn is_self(&self) -> bool {
        self.from_pe == self.to_pe
    }
}

/// A planned halo exchange: every pulse of every PE, in global order.
#[derive(Debug, Clone)]
pub struct Plan {
    pub(super) decomp: Decomposition,
    pub(super) halo: usize,
    pub(super) footprint: Footprint,
    pub(super) pulses: Vec<Pulse>,
    pub(super) outgoing: Vec<Vec<usize>>,
    pub(super) incoming: Vec<Vec<usize>>,
}

impl Plan {
    /// The decomposition planned for.
    pub fn decomposition(&self) -> &Decomposition {
        &self.decomp
    }

    /// Ghost width on active axes.
    pub fn halo(&self) -> usize {
        self.halo
    }

    /// The footprint planned for.
    pub fn footprint(&self) -> Footprint {
        self.footprint
    }

    /// Every pulse; `pulses()[i].id == i`.
    pub fn pulses(&self) -> &[Pulse] {
        &self.pulses
    }

    /// Ids of the pulses a PE sends, in the order it should issue them.
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn outgoing(&self, pe: usize) -> &[usize] {
        &self.outgoing[pe]
    }

    /// Ids of the pulses a PE receives, in global order.
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn incoming(&self, pe: usize) -> &[usize] {
        &self.incoming[pe]
    }

    /// The padded layout of a PE's array (sender and receiver layouts of a
    /// pulse are `layout(from_pe)` and `layout(to_pe)`).
    ///
    /// # Panics
    /// If `pe >= num_pes()`.
    pub fn layout(&self, pe: usize) -> LocalLayout {
        self.decomp.layout(pe, self.halo)
    }
}

/// Plans the exchange of `halo` ghost layers of `footprint` for `decomp`.
///
/// For every active axis in the order Z → Y → X and every PE with a
/// neighbour in direction `dir`, one pulse sends the `halo` interior cells
/// next to that side. In the other axes the send box spans:
/// * with [`Footprint::Faces`], the interior only;
/// * with [`Footprint::Full`], in axes exchanged earlier the interior plus
///   the ghost layers that earlier pulses fill (a side at a physical boundary
///   is left out: no pulse fills it, the solver owns it), in later axes the
///   interior only. The ghost part is split by the *last* earlier axis in
///   which a cell is a ghost; that axis's incoming pulse is the one that
///   wrote it, and the part is [`Forwarded`] after it.
///
/// Each ghost cell is written by at most one pulse; physical-boundary ghosts
/// by none.
///
/// Errors: [`HaloError::ZeroHalo`]; [`HaloError::HaloWiderThanBlock`] when an
/// exchanging axis has a block thinner than `halo`.
pub fn plan(decomp: &Decomposition, halo: usize, footprint: Footprint) -> Result<Plan, HaloError> {
    if halo == 0 {
        return Err(HaloError::ZeroHalo);
    }
    let n = decomp.num_pes();
    let min_ext = decomp.min_local_extent();
    for (axis, &smallest) in min_ext.iter().enumerate() {
        let exchanges = (0..n).any(|pe| decomp.neighbor(pe, axis, 1).is_some());
        if exchanges && smallest < halo {
            return Err(HaloError::HaloWiderThanBlock {
                axis,
                halo,
                smallest,
                pes_along: decomp.pes()[axis],
            });
        }
    }

    // Ids in global order; `id_of[axis][dir_index][from_pe]`, dir_index 0 for −1.
    let mut id_of = vec![[vec![None; n], vec![None; n]]; 3];
    let mut next = 0;
    for (axis, per_dir) in id_of.iter_mut().enumerate() {
        for (di, dir) in [-1, 1].into_iter().enumerate() {
            for (pe, slot) in per_dir[di].iter_mut().enumerate() {
                if decomp.neighbor(pe, axis, dir).is_some() {
                    *slot = Some(next);
                    next += 1;
                }
            }
        }
    }
    // The pulse that fills `pe`'s ghost layer on side `side` of `axis`: it
    // comes from the neighbour on that side, moving the opposite way.
    let filler = |pe: usize, axis: usize, side: i32| -> Option<usize> {
        let from = decomp.neighbor(pe, axis, side)?;
        let di = usize::from(side < 0); // moving −side: index 1 for +1
        id_of[axis][di][from]
    };

    let mut pulses = Vec::with_capacity(next);
    for (axis, per_dir) in id_of.iter().enumerate() {
        for (di, dir) in [-1i32, 1].into_iter().enumerate() {
            for (from_pe, &slot) in per_dir[di].iter().enumerate() {
                let Some(id) = slot else {
                    continue;
                };
                let to_pe = decomp
                    .neighbor(from_pe, axis, dir)
                    .expect("id implies neighbour");
                let ls = decomp.layout(from_pe, halo);
                let lr = decomp.layout(to_pe, halo);
                let interior = ls.interior();
                let h = ls.halo;
                // Along `axis`: the slab next to side `dir`, and the opposite ghost layer.
                let (s_lo, r_lo) = if dir > 0 {
                    (ls.extent[axis], 0)
                } else {
                    (h[axis], h[axis] + lr.extent[axis])
                };
                let mut send = interior.with_axis(axis, s_lo, s_lo + halo);
                if footprint == Footprint::Full {
                    for (j, &hj) in h.iter().enumerate().take(axis) {
                        let lo = if filler(from_pe, j, -1).is_some() {
                            0
                        } else {
                            hj
                        };
                        let hi = interior.hi[j]
                            + if filler(from_pe, j, 1).is_some() {
                                hj
                            } else {
                                0
                            };
                        send = send.with_axis(j, lo, hi);
                    }
                }
                let recv = send.with_axis(axis, r_lo, r_lo + halo);
                debug_assert!(
                    (0..3).all(|a| a == axis || ls.extent[a] == lr.extent[a]),
                    "neighbours along {axis} share extents in the other axes"
                );

                // Split the ghost part by the last earlier axis in which a cell is a ghost.
                let mut forwarded = Vec::new();
                let mut core = send;
                for j in (0..axis).rev() {
                    let low = core.with_axis(j, core.lo[j], interior.lo[j]);
                    let high = core.with_axis(j, interior.hi[j], core.hi[j]);
                    for (part, side) in [(low, -1), (high, 1)] {
                        if !part.is_empty() {
                            let after = filler(from_pe, j, side).expect(
                                "a ghost side is in the send box only when a pulse fills it",
                            );
                            forwarded.push(Forwarded {
                                region: part,
                                after,
                            });
                        }
                    }
                    core = core.with_axis(j, interior.lo[j], interior.hi[j]);
                }
                pulses.push(Pulse {
                    id,
                    from_pe,
                    to_pe,
                    axis,
                    dir,
                    send,
                    recv,
                    independent: vec![core],
                    forwarded,
                });
            }
        }
    }

    let mut outgoing = vec![Vec::new(); n];
    let mut incoming = vec![Vec::new(); n];
    for p in &pulses {
        outgoing[p.from_pe].push(p.id);
        incoming[p.to_pe].push(p.id);
    }
    Ok(Plan {
        decomp: decomp.clone(),
        halo,
        footprint,
        pulses,
        outgoing,
        incoming,
    })
}
