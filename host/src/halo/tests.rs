//! Tests of the planner: every ghost cell after a simulated exchange is
//! compared with the global cell it mirrors.

use super::*;
use proptest::prelude::*;

/// Written into every ghost cell before an exchange; a ghost that should be
/// untouched must still hold it.
const POISON: f64 = -1.0e300;

/// Distinct value of every global cell.
fn f(g: [usize; 3]) -> f64 {
    ((g[0] * 1009 + g[1]) * 1013 + g[2]) as f64 + 1.0
}

/// One padded array per PE: interiors from `f`, ghosts poisoned.
fn filled(plan: &Plan) -> Vec<Vec<f64>> {
    let d = plan.decomposition();
    (0..d.num_pes())
        .map(|pe| {
            let l = plan.layout(pe);
            let o = d.local_origin(pe);
            let mut a = vec![POISON; l.len()];
            for c in l.interior().cells() {
                a[l.index_of(c)] = f(std::array::from_fn(|k| o[k] + c[k] - l.halo[k]));
            }
            a
        })
        .collect()
}

/// What a cell should hold after the exchange, or `None` for "untouched".
fn expected(plan: &Plan, pe: usize, c: [usize; 3]) -> Option<f64> {
    let d = plan.decomposition();
    let l = plan.layout(pe);
    let o = d.local_origin(pe);
    let (n, per) = (d.global(), d.periodic());
    let mut g = [0usize; 3];
    let mut ghost_axes = 0;
    for k in 0..3 {
        let local = c[k] as i64 - l.halo[k] as i64;
        let glob = o[k] as i64 + local;
        if local < 0 || local >= l.extent[k] as i64 {
            ghost_axes += 1;
            if !per[k] && !(0..n[k] as i64).contains(&glob) {
                return None; // physical boundary: the solver's cell
            }
        }
        g[k] = glob.rem_euclid(n[k] as i64) as usize;
    }
    let in_footprint = match plan.footprint() {
        Footprint::Faces => ghost_axes <= 1,
        Footprint::Full => true,
    };
    in_footprint.then(|| f(g))
}

/// Every cell of every PE that differs from what it should hold.
fn mismatches(plan: &Plan, arrays: &[Vec<f64>]) -> Vec<String> {
    let mut bad = Vec::new();
    for (pe, a) in arrays.iter().enumerate() {
        let l = plan.layout(pe);
        let all = Box3::new([0; 3], l.dims);
        for c in all.cells() {
            let want = expected(plan, pe, c).unwrap_or(POISON);
            let got = a[l.index_of(c)];
            if got != want {
                bad.push(format!("PE {pe} cell {c:?}: got {got}, want {want}"));
            }
        }
    }
    bad
}

/// Structural rules every plan must obey.
fn check_structure(plan: &Plan) {
    let d = plan.decomposition();
    let ps = plan.pulses();
    let mut expected_count = 0;
    for pe in 0..d.num_pes() {
        for axis in 0..3 {
            for dir in [-1, 1] {
                expected_count += usize::from(d.neighbor(pe, axis, dir).is_some());
            }
        }
    }
    assert_eq!(
        ps.len(),
        expected_count,
        "one pulse per (PE, axis, dir) with a neighbour"
    );
    for (i, p) in ps.iter().enumerate() {
        assert_eq!(p.id, i);
        if i > 0 {
            assert!(ps[i - 1].axis <= p.axis, "pulses ordered Z → Y → X");
        }
        // Not diagonal: the receiver is the neighbour along the pulse's axis.
        assert_eq!(Some(p.to_pe), d.neighbor(p.from_pe, p.axis, p.dir));
        let (cs, cr) = (d.coords(p.from_pe), d.coords(p.to_pe));
        for k in (0..3).filter(|&k| k != p.axis) {
            assert_eq!(cs[k], cr[k], "pulse {i} moves along {k} too");
        }
        let (ls, lr) = (plan.layout(p.from_pe), plan.layout(p.to_pe));
        assert_eq!(p.send.shape(), p.recv.shape());
        assert!(Box3::new([0; 3], ls.dims).contains(&p.send));
        assert!(Box3::new([0; 3], lr.dims).contains(&p.recv));
        let (si, ri) = (ls.interior(), lr.interior());
        // Reads interior layers along its axis, writes ghost layers.
        assert!(si.lo[p.axis] <= p.send.lo[p.axis] && p.send.hi[p.axis] <= si.hi[p.axis]);
        assert!(p.recv.hi[p.axis] <= ri.lo[p.axis] || p.recv.lo[p.axis] >= ri.hi[p.axis]);
        assert_eq!(p.send.shape()[p.axis], plan.halo());
        // In later axes: interior only.
        for k in p.axis + 1..3 {
            assert_eq!((p.send.lo[k], p.send.hi[k]), (si.lo[k], si.hi[k]));
        }
        // independent ∪ forwarded partitions send.
        let parts: Vec<Box3> = p
            .independent
            .iter()
            .copied()
            .chain(p.forwarded.iter().map(|f| f.region))
            .collect();
        assert_eq!(
            parts.iter().map(Box3::len).sum::<usize>(),
            p.send.len(),
            "pulse {i}"
        );
        for (a, x) in parts.iter().enumerate() {
            assert!(p.send.contains(x));
            for y in &parts[a + 1..] {
                assert!(!x.intersects(y), "pulse {i}: parts {x:?} and {y:?} overlap");
            }
        }
        for b in &p.independent {
            assert!(
                si.contains(b),
                "pulse {i}: independent part {b:?} leaves the interior"
            );
        }
        if plan.footprint() == Footprint::Faces {
            assert!(p.forwarded.is_empty());
        }
        for fw in &p.forwarded {
            assert!(
                fw.after < i,
                "pulse {i} waits for a later pulse {}",
                fw.after
            );
            let src = &ps[fw.after];
            assert_eq!(
                src.to_pe, p.from_pe,
                "pulse {i}: forwarded part names a pulse to another PE"
            );
            assert!(src.axis < p.axis);
            assert!(
                src.recv.contains(&fw.region),
                "pulse {i}: {:?} not written by pulse {}",
                fw.region,
                fw.after
            );
            assert!(fw
                .region
                .cells()
                .all(|c| !si.contains(&Box3::new(c, c.map(|v| v + 1)))));
        }
    }
    // No ghost cell is written twice.
    for pe in 0..d.num_pes() {
        let inc = plan.incoming(pe);
        for (a, &x) in inc.iter().enumerate() {
            for &y in &inc[a + 1..] {
                assert!(
                    !ps[x].recv.intersects(&ps[y].recv),
                    "pulses {x} and {y} both write PE {pe}"
                );
            }
        }
        assert!(plan
            .outgoing(pe)
            .windows(2)
            .all(|w| ps[w[0]].axis <= ps[w[1]].axis));
    }
}

/// Plans, checks structure, simulates and checks every cell.
fn check_exchange(
    global: [usize; 3],
    pes: [usize; 3],
    periodic: [bool; 3],
    h: usize,
    fp: Footprint,
) -> Plan {
    let d = Decomposition::new(global, pes, periodic).unwrap();
    let plan = plan(&d, h, fp).unwrap();
    check_structure(&plan);
    let mut arrays = filled(&plan);
    plan.simulate(&mut arrays).unwrap();
    let bad = mismatches(&plan, &arrays);
    assert!(
        bad.is_empty(),
        "{global:?} over {pes:?}, periodic {periodic:?}, h {h}, {fp:?}: {} wrong cells, first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
    plan
}

const FOOTPRINTS: [Footprint; 2] = [Footprint::Faces, Footprint::Full];

#[test]
fn one_d_exchange_fills_ghosts_for_uneven_splits_and_both_boundaries() {
    for fp in FOOTPRINTS {
        for h in [1, 2] {
            for per in [false, true] {
                check_exchange([1, 1, 17], [1, 1, 4], [false, false, per], h, fp);
                check_exchange([1, 1, 9], [1, 1, 2], [false, false, per], h, fp);
            }
        }
    }
}

#[test]
fn one_pe_on_a_periodic_axis_exchanges_with_itself() {
    for fp in FOOTPRINTS {
        for h in [1, 2] {
            let p = check_exchange([1, 1, 5], [1, 1, 1], [false, false, true], h, fp);
            assert_eq!(p.pulses().len(), 2);
            assert!(p.pulses().iter().all(Pulse::is_self));
            check_exchange([1, 6, 5], [1, 1, 1], [false, true, true], h, fp);
            check_exchange([4, 3, 5], [1, 1, 1], [true, true, true], h, fp);
            // Self-pulse along one axis, real neighbours along another.
            check_exchange([1, 6, 8], [1, 1, 3], [false, true, true], h, fp);
            check_exchange([1, 6, 8], [1, 2, 1], [false, true, false], h, fp);
        }
    }
}

/// An axis of one cell made active has a ghost layer on both sides; along
/// a periodic one its single cell's ghosts mirror the cell itself (a
/// self-pulse each way), on one PE and next to real neighbours.
#[test]
fn an_active_axis_of_one_cell_has_ghosts_that_mirror_it() {
    for fp in FOOTPRINTS {
        for (global, pes) in [([1, 1, 6], [1, 1, 1]), ([3, 1, 8], [1, 1, 2])] {
            let d = Decomposition::new(global, pes, [true; 3])
                .unwrap()
                .with_active_axes([true; 3]);
            assert!(d.is_active(1));
            assert_eq!(d.layout(0, 1).halo, [1, 1, 1]);
            let plan = plan(&d, 1, fp).unwrap();
            check_structure(&plan);
            let mut arrays = filled(&plan);
            plan.simulate(&mut arrays).unwrap();
            let bad = mismatches(&plan, &arrays);
            assert!(bad.is_empty(), "{global:?} over {pes:?}, {fp:?}: {bad:#?}");
        }
    }
    // Without it, the same axis has no ghosts (a 2D grid's z).
    let d = Decomposition::new([1, 4, 4], [1, 1, 1], [true; 3]).unwrap();
    assert!(!d.is_active(0));
    assert_eq!(d.layout(0, 1).halo, [0, 1, 1]);
}

#[test]
fn one_pe_without_periodic_axes_plans_no_pulse_and_leaves_ghosts_alone() {
    let p = check_exchange([3, 4, 5], [1, 1, 1], [false; 3], 2, Footprint::Full);
    assert!(p.pulses().is_empty());
}

#[test]
fn two_d_exchange_fills_faces_edges_and_corners_for_every_periodicity() {
    for fp in FOOTPRINTS {
        for h in [1, 2] {
            for per in [[false, false], [true, false], [false, true], [true, true]] {
                let periodic = [false, per[0], per[1]];
                check_exchange([1, 13, 11], [1, 3, 2], periodic, h, fp);
                check_exchange([1, 8, 9], [1, 2, 4], periodic, h, fp);
                check_exchange([1, 7, 7], [1, 1, 3], periodic, h, fp);
            }
        }
    }
}

#[test]
fn two_pes_on_a_periodic_axis_get_both_ghost_layers_from_the_same_neighbour() {
    let p = check_exchange(
        [1, 6, 6],
        [1, 2, 2],
        [false, true, true],
        2,
        Footprint::Full,
    );
    let from0: Vec<_> = p.outgoing(0).iter().map(|&i| p.pulses()[i].to_pe).collect();
    assert_eq!(from0, vec![2, 2, 1, 1]);
}

#[test]
fn three_d_exchange_fills_faces_edges_and_corners_for_every_periodicity() {
    for fp in FOOTPRINTS {
        for h in [1, 2] {
            for bits in 0..8u32 {
                let periodic = [bits & 4 != 0, bits & 2 != 0, bits & 1 != 0];
                check_exchange([7, 6, 5], [2, 3, 2], periodic, h, fp);
                check_exchange([5, 4, 6], [1, 2, 3], periodic, h, fp);
            }
        }
    }
}

#[test]
fn three_d_corner_reaches_the_diagonal_neighbour_in_three_hops() {
    let p = check_exchange([4, 4, 4], [2, 2, 2], [false; 3], 1, Footprint::Full);
    // PE 7 (block coords [1, 1, 1]) has its low ghost corner at padded
    // (0, 0, 0), mirroring global (1, 1, 1) of PE 0: it arrives with the x
    // pulse from PE 6, which forwards what PE 6 got from z and y.
    let x_pulse_to_7 = p
        .incoming(7)
        .iter()
        .map(|&i| &p.pulses()[i])
        .find(|q| q.axis == 2 && q.recv.contains(&Box3::new([0, 0, 0], [1, 1, 1])))
        .expect("an x pulse writes PE 7's low corner");
    assert_eq!(x_pulse_to_7.from_pe, 6);
    let ys: Vec<_> = x_pulse_to_7
        .depends_on()
        .iter()
        .map(|&i| p.pulses()[i].axis)
        .collect();
    assert_eq!(ys, vec![0, 1], "the corner pulse forwards z and y ghosts");
}

#[test]
fn dropping_forwarding_dependencies_corrupts_corners() {
    // The mutant must fail: it shows that `simulate`'s order is adversarial
    // enough for the structural tests above to mean something.
    let d = Decomposition::new([1, 8, 8], [1, 2, 2], [false, true, true]).unwrap();
    let mut p = plan(&d, 1, Footprint::Full).unwrap();
    let mut arrays = filled(&p);
    p.simulate(&mut arrays).unwrap();
    assert!(mismatches(&p, &arrays).is_empty());
    for q in &mut p.pulses {
        q.forwarded.clear();
    }
    let mut arrays = filled(&p);
    p.simulate(&mut arrays).unwrap();
    assert!(!mismatches(&p, &arrays).is_empty());
}

#[test]
fn faces_footprint_leaves_corners_untouched_and_sends_interior_only() {
    let p = check_exchange(
        [1, 8, 8],
        [1, 2, 2],
        [false, true, true],
        1,
        Footprint::Faces,
    );
    for q in p.pulses() {
        assert_eq!(q.independent, vec![q.send]);
        let si = p.layout(q.from_pe).interior();
        assert!(si.contains(&q.send));
    }
}

#[test]
fn uneven_split_gives_larger_blocks_first() {
    let d = Decomposition::new([1, 1, 10], [1, 1, 4], [false; 3]).unwrap();
    let ext: Vec<_> = (0..4).map(|pe| d.local_extent(pe)[2]).collect();
    let org: Vec<_> = (0..4).map(|pe| d.local_origin(pe)[2]).collect();
    assert_eq!(ext, vec![3, 3, 2, 2]);
    assert_eq!(org, vec![0, 3, 6, 8]);
    assert_eq!(d.max_local_extent(), [1, 1, 3]);
    assert_eq!(d.max_layout(1).dims, [1, 1, 5]);
    assert_eq!(d.layout(2, 2).dims, [1, 1, 6]);
}

#[test]
fn pe_numbering_is_x_fastest() {
    let d = Decomposition::new([4, 6, 8], [2, 3, 4], [false; 3]).unwrap();
    assert_eq!(d.num_pes(), 24);
    assert_eq!(d.coords(5), [0, 1, 1]);
    assert_eq!(d.coords(13), [1, 0, 1]);
    for pe in 0..24 {
        assert_eq!(d.pe_at(d.coords(pe)), pe);
    }
}

#[test]
fn neighbours_wrap_on_periodic_axes_and_stop_at_physical_ones() {
    let d = Decomposition::new([1, 6, 8], [1, 2, 4], [true, false, true]).unwrap();
    assert_eq!(d.neighbor(0, 2, -1), Some(3));
    assert_eq!(d.neighbor(3, 2, 1), Some(0));
    assert_eq!(d.neighbor(0, 1, -1), None);
    assert_eq!(d.neighbor(0, 1, 1), Some(4));
    assert_eq!(d.neighbor(4, 1, 1), None);
    // z has one cell: no ghosts, no neighbour, even though it is periodic.
    assert_eq!(d.neighbor(0, 0, 1), None);
    let one = Decomposition::new([1, 1, 5], [1, 1, 1], [false, false, true]).unwrap();
    assert_eq!(one.neighbor(0, 2, 1), Some(0));
    assert_eq!(one.layout(0, 1).halo, [0, 0, 1]);
}

#[test]
fn bad_decompositions_are_errors() {
    assert_eq!(
        Decomposition::new([1, 4, 4], [2, 1, 1], [false; 3]),
        Err(HaloError::MorePesThanCells {
            axis: 0,
            pes: 2,
            cells: 1
        })
    );
    assert_eq!(
        Decomposition::new([1, 4, 4], [1, 0, 1], [false; 3]),
        Err(HaloError::NoPes { axis: 1 })
    );
    assert_eq!(
        Decomposition::new([1, 4, 0], [1, 1, 1], [false; 3]),
        Err(HaloError::EmptyAxis { axis: 2 })
    );
    assert_eq!(
        Decomposition::new([1, 4, 3], [1, 1, 4], [false; 3]),
        Err(HaloError::MorePesThanCells {
            axis: 2,
            pes: 4,
            cells: 3
        })
    );
    assert_eq!(
        Decomposition::auto([1, 4, 4], 0, [false; 3]),
        Err(HaloError::NoPesAtAll)
    );
    assert_eq!(
        Decomposition::auto([1, 4, 4], 5, [false; 3]),
        Err(HaloError::NoFactorization {
            pes: 5,
            global: [1, 4, 4]
        })
    );
}

#[test]
fn bad_halos_are_errors() {
    let d = Decomposition::new([1, 1, 10], [1, 1, 4], [false; 3]).unwrap();
    assert_eq!(
        plan(&d, 0, Footprint::Faces).err(),
        Some(HaloError::ZeroHalo)
    );
    assert_eq!(
        plan(&d, 3, Footprint::Faces).err(),
        Some(HaloError::HaloWiderThanBlock {
            axis: 2,
            halo: 3,
            smallest: 2,
            pes_along: 4
        })
    );
    // A self-pulse needs the block at least as thick as the halo too, and
    // the error does not tell a lone PE to use fewer PEs.
    let one = Decomposition::new([1, 1, 2], [1, 1, 1], [false, false, true]).unwrap();
    let e = plan(&one, 3, Footprint::Full).err().unwrap();
    assert!(
        matches!(e, HaloError::HaloWiderThanBlock { axis: 2, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("ghosts wrap onto its own cells"),
        "{e}"
    );
    // Without any exchange a wide halo is only boundary cells: fine.
    let lone = Decomposition::new([1, 1, 2], [1, 1, 1], [false; 3]).unwrap();
    assert!(plan(&lone, 3, Footprint::Full).is_ok());
}

#[test]
fn simulate_rejects_arrays_of_the_wrong_count_or_size() {
    let d = Decomposition::new([1, 4, 4], [1, 2, 1], [false; 3]).unwrap();
    let p = plan(&d, 1, Footprint::Faces).unwrap();
    let mut one = vec![vec![0.0f64; p.layout(0).len()]];
    assert_eq!(
        p.simulate(&mut one),
        Err(HaloError::WrongArrayCount {
            expected: 2,
            got: 1
        })
    );
    let mut short = vec![vec![0.0f64; p.layout(0).len()], vec![0.0; 3]];
    assert_eq!(
        p.simulate(&mut short),
        Err(HaloError::WrongArrayLength {
            pe: 1,
            expected: p.layout(1).len(),
            got: 3
        })
    );
}

#[test]
fn auto_splits_the_largest_axes_and_never_z_of_a_2d_grid() {
    let auto = |g, p| Decomposition::auto(g, p, [false; 3]).unwrap().pes();
    assert_eq!(auto([1, 64, 64], 4), [1, 2, 2]);
    assert_eq!(
        auto([1, 64, 64], 2),
        [1, 2, 1],
        "ties split the slower axis"
    );
    assert_eq!(auto([1, 16, 1024], 8), [1, 1, 8]);
    assert_eq!(auto([64, 64, 64], 8), [2, 2, 2]);
    assert_eq!(auto([1, 1, 100], 7), [1, 1, 7]);
    for p in 1..=12 {
        assert_eq!(auto([1, 100, 100], p)[0], 1);
        assert_eq!(auto([1, 100, 100], p).iter().product::<usize>(), p);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_decompositions_exchange_every_ghost_correctly(
        nz in 1usize..6, ny in 1usize..9, nx in 1usize..9,
        pz in 1usize..3, py in 1usize..4, px in 1usize..4,
        per in 0u32..8, h in 1usize..3, full in any::<bool>(),
    ) {
        let (global, pes) = ([nz, ny, nx], [pz, py, px]);
        let periodic = [per & 4 != 0, per & 2 != 0, per & 1 != 0];
        let Ok(d) = Decomposition::new(global, pes, periodic) else { return Ok(()); };
        let fp = if full { Footprint::Full } else { Footprint::Faces };
        let Ok(p) = plan(&d, h, fp) else {
            // Only a too-thin block may refuse.
            prop_assert!((0..3).any(|a| d.min_local_extent()[a] < h));
            return Ok(());
        };
        check_structure(&p);
        let mut arrays = filled(&p);
        p.simulate(&mut arrays).unwrap();
        let bad = mismatches(&p, &arrays);
        prop_assert!(bad.is_empty(), "{:?}", &bad[..bad.len().min(4)]);
    }
}

/// A halo wider than 1 (temporal blocking) needs blocks at least that
/// thick: the automatic decomposition picks one whose blocks are, where
/// `auto` alone picks slabs a plan of that width refuses.
#[test]
fn auto_for_halo_picks_blocks_at_least_the_halo_thick() {
    let periodic = [true; 3];
    let slabs = Decomposition::auto([1, 6, 6], 4, periodic).unwrap();
    assert_eq!(slabs.pes(), [1, 4, 1]);
    assert!(plan(
        &slabs.clone().with_active_axes([false, true, true]),
        2,
        Footprint::Full
    )
    .is_err());
    for (global, p) in [
        ([1, 6, 6], 4),
        ([4, 4, 4], 4),
        ([5, 5, 5], 8),
        ([7, 7, 7], 6),
    ] {
        let d = Decomposition::auto_for_halo(global, p, periodic, 2).unwrap();
        let two_d = global[0] == 1;
        let d = d.with_active_axes([!two_d, true, true]);
        assert!(
            plan(&d, 2, Footprint::Full).is_ok(),
            "{global:?} on {p} PEs: {:?}",
            d.pes()
        );
    }
    // Where no factorization is thick enough, auto's choice (the plan
    // then names the thin axis).
    let d = Decomposition::auto_for_halo([1, 3, 3], 4, periodic, 2).unwrap();
    assert_eq!(
        d.pes(),
        Decomposition::auto([1, 3, 3], 4, periodic).unwrap().pes()
    );
    // Width 1 is auto.
    assert_eq!(
        Decomposition::auto_for_halo([8, 8, 8], 8, [false; 3], 1)
            .unwrap()
            .pes(),
        Decomposition::auto([8, 8, 8], 8, [false; 3]).unwrap().pes()
    );
}
