//! f64 reference Jacobi solver on the whole global grid, the yardstick for
//! the GPU and emulator solvers (which run f32 or f64 on a decomposed grid).
//!
//! # Coordinates and boundaries
//!
//! Interior cells are `0..n` along each axis, indexed `(z, y, x)`, stored
//! row-major with x fastest; a 2D problem has `nz = 1` and never looks along z.
//! A stencil reads the cells at offsets −1, 0, +1. A neighbour outside the
//! interior is resolved per axis:
//! * along a [`Boundary::Periodic`] axis its coordinate wraps (`-1 → n-1`,
//!   `n → 0`);
//! * if, after wrapping, it still lies outside along some
//!   [`Boundary::Dirichlet`] axis, its value is `dirichlet(z, y, x)` at those
//!   coordinates: `-1` or `n` along the Dirichlet axes, wrapped `0..n-1` along
//!   the periodic ones. So the Dirichlet layer sits at `-1` and `n`, and along
//!   a periodic axis it is periodic too (the edge/corner convention the
//!   decomposed solvers must follow when they write their boundary ghosts).
//!
//! # Stencils
//!
//! With `F`, `E`, `C` the sums over face, edge and corner neighbours:
//! * 2D 5-point: `a' = 0.25 · F` (4 faces);
//! * 2D 9-point: `a' = (4·F + E) / 20` (4 faces, 4 diagonals);
//! * 3D 7-point: `a' = F / 6`;
//! * 3D 27-point: `a' = (4·F + 2·E + C) / 56` (6 faces, 12 edges, 8 corners).
//!
//! Each is a weighted average with weights summing to one, so a linear
//! Dirichlet function is a fixed point and a fully periodic grid keeps its sum.

use std::sync::Arc;

/// A function of a cell's global coordinates `(z, y, x)`.
pub type CellFn = Arc<dyn Fn(i64, i64, i64) -> f64 + Send + Sync>;

/// The neighbourhood a Jacobi update averages over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stencil {
    /// 2D, faces only: `0.25 · (N + S + E + W)`.
    FivePoint,
    /// 2D, faces and diagonals: `(4 · faces + diagonals) / 20`.
    NinePoint,
    /// 3D, faces only: `faces / 6`.
    SevenPoint,
    /// 3D, faces, edges and corners: `(4 · faces + 2 · edges + corners) / 56`.
    TwentySevenPoint,
}

/// `"5-point"`, `"9-point"`, `"7-point"`, `"27-point"`: the stencil as
/// error messages name it.
impl std::fmt::Display for Stencil {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let points = match self {
            Stencil::FivePoint => 5,
            Stencil::NinePoint => 9,
            Stencil::SevenPoint => 7,
            Stencil::TwentySevenPoint => 27,
        };
        write!(f, "{points}-point")
    }
}

impl Stencil {
    /// Whether the stencil is 2D (needs `nz = 1`; never reads along z).
    pub fn is_2d(self) -> bool {
        matches!(self, Stencil::FivePoint | Stencil::NinePoint)
    }

    /// Whether the stencil reads edge/corner neighbours (a halo exchange for
    /// it needs the full footprint, not faces only).
    pub fn needs_corners(self) -> bool {
        matches!(self, Stencil::NinePoint | Stencil::TwentySevenPoint)
    }

    /// Weights of a neighbour with 1, 2 and 3 non-zero offsets (face, edge,
    /// corner), and the divisor.
    fn weights(self) -> ([f64; 3], f64) {
        match self {
            Stencil::FivePoint => ([1.0, 0.0, 0.0], 4.0),
            Stencil::NinePoint => ([4.0, 1.0, 0.0], 20.0),
            Stencil::SevenPoint => ([1.0, 0.0, 0.0], 6.0),
            Stencil::TwentySevenPoint => ([4.0, 2.0, 1.0], 56.0),
        }
    }
}

/// What lies beyond the two ends of an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Fixed values from [`JacobiProblem::dirichlet`] at coordinates −1 and n.
    Dirichlet,
    /// The axis wraps around.
    Periodic,
}

/// A Jacobi problem on a global grid.
#[derive(Clone)]
pub struct JacobiProblem {
    /// Interior cells `[nz, ny, nx]`; `nz = 1` for 2D stencils.
    pub dims: [usize; 3],
    /// The update rule.
    pub stencil: Stencil,
    /// Boundary per axis `[z, y, x]` (z is ignored by 2D stencils).
    pub boundary: [Boundary; 3],
    /// Initial interior value at `(z, y, x)`.
    pub init: CellFn,
    /// Dirichlet value at `(z, y, x)` outside the interior (see the module
    /// docs for which coordinates it is called with).
    pub dirichlet: CellFn,
}

impl std::fmt::Debug for JacobiProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JacobiProblem")
            .field("dims", &self.dims)
            .field("stencil", &self.stencil)
            .field("boundary", &self.boundary)
            .finish_non_exhaustive()
    }
}

impl JacobiProblem {
    /// A problem with Dirichlet zero on every side and a zero initial guess.
    pub fn new(dims: [usize; 3], stencil: Stencil) -> JacobiProblem {
        JacobiProblem {
            dims,
            stencil,
            boundary: [Boundary::Dirichlet; 3],
            init: Arc::new(|_, _, _| 0.0),
            dirichlet: Arc::new(|_, _, _| 0.0),
        }
    }

    /// Sets the boundary per axis `[z, y, x]`.
    pub fn with_boundary(mut self, boundary: [Boundary; 3]) -> JacobiProblem {
        self.boundary = boundary;
        self
    }

    /// Sets the initial interior values.
    pub fn with_init(
        mut self,
        init: impl Fn(i64, i64, i64) -> f64 + Send + Sync + 'static,
    ) -> JacobiProblem {
        self.init = Arc::new(init);
        self
    }

    /// Sets the Dirichlet values.
    pub fn with_dirichlet(
        mut self,
        dirichlet: impl Fn(i64, i64, i64) -> f64 + Send + Sync + 'static,
    ) -> JacobiProblem {
        self.dirichlet = Arc::new(dirichlet);
        self
    }

    /// Cells of the interior.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Whether the interior has no cell (such a problem is rejected).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Index of interior cell `(z, y, x)` in [`ReferenceRun::field`].
    pub fn index(&self, z: usize, y: usize, x: usize) -> usize {
        (z * self.dims[1] + y) * self.dims[2] + x
    }
}

/// Why a reference run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JacobiRefError {
    /// An axis with no cells.
    #[error("the grid has 0 cells along {}; every axis needs at least 1", crate::halo::AXIS_NAMES[*.axis])]
    EmptyAxis {
        /// The axis (0 = z, 1 = y, 2 = x).
        axis: usize,
    },
    /// A 2D stencil on a grid with more than one z layer.
    #[error("the {stencil} stencil is 2D but the grid has nz = {nz}; use nz = 1 or a 3D stencil")]
    StencilNeeds2d {
        /// The stencil.
        stencil: Stencil,
        /// The z extent given.
        nz: usize,
    },
}

/// The result of [`reference()`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceRun {
    /// Interior values after the last iteration, row-major, x fastest
    /// (index with [`JacobiProblem::index`]).
    pub field: Vec<f64>,
    /// `‖a_new − a‖₂` over the interior, one entry per iteration.
    pub update_norms: Vec<f64>,
}

/// Runs `iterations` Jacobi sweeps of `problem` in f64.
///
/// Errors: [`JacobiRefError::EmptyAxis`], [`JacobiRefError::StencilNeeds2d`].
pub fn reference(
    problem: &JacobiProblem,
    iterations: usize,
) -> Result<ReferenceRun, JacobiRefError> {
    let n = problem.dims;
    if let Some(axis) = (0..3).find(|&a| n[a] == 0) {
        return Err(JacobiRefError::EmptyAxis { axis });
    }
    if problem.stencil.is_2d() && n[0] != 1 {
        return Err(JacobiRefError::StencilNeeds2d {
            stencil: problem.stencil,
            nz: n[0],
        });
    }
    // One ghost layer on each side; none along z for 2D stencils.
    let pad = [usize::from(!problem.stencil.is_2d()), 1, 1];
    let dims: [usize; 3] = std::array::from_fn(|a| n[a] + 2 * pad[a]);
    let strides = [dims[1] * dims[2], dims[2], 1];
    let at = |c: [usize; 3]| c[0] * strides[0] + c[1] * strides[1] + c[2];

    // Fill the padded array: interior from `init`, Dirichlet ghosts once,
    // periodic ghosts as (ghost, interior source) copies refreshed every sweep.
    let mut a = vec![0.0f64; dims.iter().product()];
    let mut copies: Vec<(usize, usize)> = Vec::new();
    for z in 0..dims[0] {
        for y in 0..dims[1] {
            for x in 0..dims[2] {
                let c = [z, y, x];
                let mut g = [0i64; 3];
                let (mut ghost, mut dirichlet) = (false, false);
                for k in 0..3 {
                    g[k] = c[k] as i64 - pad[k] as i64;
                    if !(0..n[k] as i64).contains(&g[k]) {
                        ghost = true;
                        match problem.boundary[k] {
                            Boundary::Periodic => g[k] = g[k].rem_euclid(n[k] as i64),
                            Boundary::Dirichlet => dirichlet = true,
                        }
                    }
                }
                a[at(c)] = if dirichlet {
                    (problem.dirichlet)(g[0], g[1], g[2])
                } else if ghost {
                    let src: [usize; 3] = std::array::from_fn(|k| g[k] as usize + pad[k]);
                    copies.push((at(c), at(src)));
                    0.0
                } else {
                    (problem.init)(g[0], g[1], g[2])
                };
            }
        }
    }
    let refresh = |a: &mut [f64]| {
        for &(dst, src) in &copies {
            a[dst] = a[src];
        }
    };
    refresh(&mut a);

    // Neighbour offsets grouped by how many coordinates differ (face, edge, corner).
    let (weights, divisor) = problem.stencil.weights();
    let mut groups: [Vec<isize>; 3] = Default::default();
    let dz_range = if problem.stencil.is_2d() {
        0..=0
    } else {
        -1..=1
    };
    for dz in dz_range {
        for dy in -1isize..=1 {
            for dx in -1isize..=1 {
                let nonzero = [dz, dy, dx].iter().filter(|&&d| d != 0).count();
                if nonzero > 0 && weights[nonzero - 1] != 0.0 {
                    groups[nonzero - 1]
                        .push(dz * strides[0] as isize + dy * strides[1] as isize + dx);
                }
            }
        }
    }

    let mut b = a.clone();
    let mut update_norms = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let mut sq = 0.0;
        for z in 0..n[0] {
            for y in 0..n[1] {
                let row = at([z + pad[0], y + 1, 1]);
                for i in row..row + n[2] {
                    let mut acc = 0.0;
                    for (w, offs) in weights.iter().zip(&groups) {
                        if !offs.is_empty() {
                            let s: f64 = offs.iter().map(|&o| a[i.wrapping_add_signed(o)]).sum();
                            acc += w * s;
                        }
                    }
                    let v = acc / divisor;
                    sq += (v - a[i]) * (v - a[i]);
                    b[i] = v;
                }
            }
        }
        refresh(&mut b);
        std::mem::swap(&mut a, &mut b);
        update_norms.push(sq.sqrt());
    }

    let mut field = Vec::with_capacity(problem.len());
    for z in 0..n[0] {
        for y in 0..n[1] {
            let row = at([z + pad[0], y + 1, 1]);
            field.extend_from_slice(&a[row..row + n[2]]);
        }
    }
    Ok(ReferenceRun {
        field,
        update_norms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STENCILS_2D: [Stencil; 2] = [Stencil::FivePoint, Stencil::NinePoint];
    const STENCILS_3D: [Stencil; 2] = [Stencil::SevenPoint, Stencil::TwentySevenPoint];

    fn max_diff(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    /// The field `f` sampled on the interior of `p`.
    fn sample(p: &JacobiProblem, f: impl Fn(i64, i64, i64) -> f64) -> Vec<f64> {
        let mut v = Vec::new();
        for z in 0..p.dims[0] as i64 {
            for y in 0..p.dims[1] as i64 {
                for x in 0..p.dims[2] as i64 {
                    v.push(f(z, y, x));
                }
            }
        }
        v
    }

    fn linear(z: i64, y: i64, x: i64) -> f64 {
        x as f64 + 2.0 * y as f64 + 3.0 * z as f64
    }

    fn problems_with_linear_dirichlet() -> Vec<JacobiProblem> {
        let mut v: Vec<_> = STENCILS_2D
            .iter()
            .map(|&s| {
                JacobiProblem::new([1, 6, 7], s).with_dirichlet(|_, y, x| x as f64 + 2.0 * y as f64)
            })
            .collect();
        v.extend(
            STENCILS_3D
                .iter()
                .map(|&s| JacobiProblem::new([5, 6, 7], s).with_dirichlet(linear)),
        );
        v
    }

    #[test]
    fn linear_dirichlet_solution_is_a_fixed_point_of_every_stencil() {
        for p in problems_with_linear_dirichlet() {
            let g = p.dirichlet.clone();
            let p = p.with_init(move |z, y, x| g(z, y, x));
            let exact = sample(&p, |z, y, x| (p.dirichlet)(z, y, x));
            let run = reference(&p, 10).unwrap();
            assert!(max_diff(&run.field, &exact) < 1e-12, "{:?}", p.stencil);
            assert!(
                run.update_norms.iter().all(|&u| u < 1e-12),
                "{:?}",
                p.stencil
            );
        }
    }

    #[test]
    fn from_zero_converges_to_the_linear_solution_with_shrinking_updates() {
        for p in problems_with_linear_dirichlet() {
            let exact = sample(&p, |z, y, x| (p.dirichlet)(z, y, x));
            let run = reference(&p, 600).unwrap();
            let err = max_diff(&run.field, &exact);
            assert!(err < 1e-8, "{:?}: error {err}", p.stencil);
            let u = &run.update_norms;
            assert!(
                u[0] > 1.0,
                "{:?}: the first sweep moves the field",
                p.stencil
            );
            for w in u.windows(2).filter(|w| w[0] > 1e-12) {
                assert!(
                    w[1] < w[0],
                    "{:?}: update norm grew {} → {}",
                    p.stencil,
                    w[0],
                    w[1]
                );
            }
            // Fewer sweeps leave a larger error.
            let early = reference(&p, 20).unwrap();
            assert!(max_diff(&early.field, &exact) > err);
        }
    }

    /// Initial values 1..=9 on a 3×3 grid: `a(y, x) = 3y + x + 1`.
    fn three_by_three(stencil: Stencil) -> JacobiProblem {
        JacobiProblem::new([1, 3, 3], stencil)
            .with_init(|_, y, x| (3 * y + x + 1) as f64)
            .with_dirichlet(|_, y, x| (100 + 10 * y + x) as f64)
    }

    #[test]
    fn one_five_point_step_on_3x3_matches_hand_computation() {
        let p = three_by_three(Stencil::FivePoint);
        let run = reference(&p, 1).unwrap();
        // Centre: N 2, S 8, W 4, E 6.
        assert_eq!(run.field[p.index(0, 1, 1)], 5.0);
        // (0, 0): N g(-1,0) = 90, S 4, W g(0,-1) = 99, E 2.
        assert_eq!(run.field[p.index(0, 0, 0)], 195.0 / 4.0);
        // (2, 2): N 6, S g(3,2) = 132, W 8, E g(2,3) = 123.
        assert_eq!(run.field[p.index(0, 2, 2)], 269.0 / 4.0);
        let init = sample(&p, |z, y, x| (p.init)(z, y, x));
        let norm: f64 = run
            .field
            .iter()
            .zip(&init)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        assert!((run.update_norms[0] - norm).abs() < 1e-12);
    }

    #[test]
    fn one_nine_point_step_on_3x3_matches_hand_computation() {
        let p = three_by_three(Stencil::NinePoint);
        let run = reference(&p, 1).unwrap();
        // Centre: faces 2+8+4+6 = 20, diagonals 1+3+7+9 = 20.
        assert_eq!(run.field[p.index(0, 1, 1)], 100.0 / 20.0);
        // (0, 0): faces 195; diagonals g(-1,-1) 89, g(-1,1) 91, g(1,-1) 109, a(1,1) 5.
        assert!((run.field[p.index(0, 0, 0)] - (4.0 * 195.0 + 294.0) / 20.0).abs() < 1e-12);
    }

    #[test]
    fn dirichlet_corners_wrap_along_a_periodic_axis() {
        // y Dirichlet, x periodic: (0, 0)'s NW neighbour is g(-1, nx-1 = 2).
        let p = three_by_three(Stencil::NinePoint).with_boundary([
            Boundary::Dirichlet,
            Boundary::Dirichlet,
            Boundary::Periodic,
        ]);
        let run = reference(&p, 1).unwrap();
        // faces: N g(-1,0) 90, S 4, W a(0,2) 3, E 2 → 99;
        // diagonals: g(-1,2) 92, g(-1,1) 91, a(1,2) 6, a(1,1) 5 → 194.
        assert!((run.field[p.index(0, 0, 0)] - (4.0 * 99.0 + 194.0) / 20.0).abs() < 1e-12);
    }

    #[test]
    fn one_periodic_step_on_3x3_wraps_both_axes() {
        let p = three_by_three(Stencil::FivePoint).with_boundary([Boundary::Periodic; 3]);
        let run = reference(&p, 1).unwrap();
        // (0, 0): N a(2,0) 7, S 4, W a(0,2) 3, E 2.
        assert_eq!(run.field[p.index(0, 0, 0)], 4.0);
        // (2, 2): N 6, S a(0,2) 3, W 8, E a(2,0) 7.
        assert_eq!(run.field[p.index(0, 2, 2)], 6.0);
    }

    fn bumpy(z: i64, y: i64, x: i64) -> f64 {
        ((x * 7 + y * 13 + z * 5) % 11) as f64 + 0.1 * (x * y) as f64 - 0.3 * z as f64
    }

    fn periodic_problems() -> Vec<JacobiProblem> {
        let mut v: Vec<_> = STENCILS_2D
            .iter()
            .map(|&s| JacobiProblem::new([1, 12, 16], s))
            .collect();
        v.extend(
            STENCILS_3D
                .iter()
                .map(|&s| JacobiProblem::new([6, 5, 8], s)),
        );
        v.into_iter()
            .map(|p| p.with_boundary([Boundary::Periodic; 3]))
            .collect()
    }

    #[test]
    fn fully_periodic_sweeps_keep_the_sum() {
        for p in periodic_problems() {
            let p = p.with_init(bumpy);
            let sum0: f64 = sample(&p, bumpy).iter().sum();
            let run = reference(&p, 25).unwrap();
            let sum: f64 = run.field.iter().sum();
            assert!(
                (sum - sum0).abs() < 1e-10 * sum0.abs(),
                "{:?}: {sum0} → {sum}",
                p.stencil
            );
            assert!(
                run.update_norms[0] > 1.0,
                "the field is not already constant"
            );
        }
    }

    #[test]
    fn fully_periodic_sweeps_commute_with_translation() {
        for p in periodic_problems() {
            let [nz, ny, nx] = p.dims.map(|d| d as i64);
            let shift = [i64::from(nz > 1) * 2, 5, 3];
            let a = reference(&p.clone().with_init(bumpy), 7).unwrap();
            let b = reference(
                &p.clone().with_init(move |z, y, x| {
                    bumpy(
                        (z - shift[0]).rem_euclid(nz),
                        (y - shift[1]).rem_euclid(ny),
                        (x - shift[2]).rem_euclid(nx),
                    )
                }),
                7,
            )
            .unwrap();
            for z in 0..nz {
                for y in 0..ny {
                    for x in 0..nx {
                        let i = p.index(z as usize, y as usize, x as usize);
                        let j = p.index(
                            ((z + shift[0]) % nz) as usize,
                            ((y + shift[1]) % ny) as usize,
                            ((x + shift[2]) % nx) as usize,
                        );
                        assert!((a.field[i] - b.field[j]).abs() < 1e-12, "{:?}", p.stencil);
                    }
                }
            }
        }
    }

    #[test]
    fn fully_periodic_sweeps_keep_a_mirror_symmetry() {
        for p in periodic_problems() {
            let nx = p.dims[2] as i64;
            // Symmetric under x → -x (mod nx).
            let sym = move |z: i64, y: i64, x: i64| {
                let m = x.min((nx - x) % nx);
                bumpy(z, y, 0) + (m * m) as f64
            };
            let run = reference(&p.clone().with_init(sym), 9).unwrap();
            assert!(run.update_norms[0] > 0.1);
            for z in 0..p.dims[0] {
                for y in 0..p.dims[1] {
                    for x in 0..p.dims[2] {
                        let xm = (p.dims[2] - x) % p.dims[2];
                        let (u, v) = (run.field[p.index(z, y, x)], run.field[p.index(z, y, xm)]);
                        assert!((u - v).abs() < 1e-12, "{:?} at ({z},{y},{x})", p.stencil);
                    }
                }
            }
        }
    }

    #[test]
    fn zero_iterations_return_the_initial_field() {
        let p = JacobiProblem::new([2, 3, 4], Stencil::SevenPoint).with_init(bumpy);
        let run = reference(&p, 0).unwrap();
        assert_eq!(run.field, sample(&p, bumpy));
        assert!(run.update_norms.is_empty());
    }

    #[test]
    fn bad_problems_are_errors() {
        assert_eq!(
            reference(&JacobiProblem::new([2, 4, 4], Stencil::NinePoint), 1),
            Err(JacobiRefError::StencilNeeds2d {
                stencil: Stencil::NinePoint,
                nz: 2
            })
        );
        assert_eq!(
            reference(&JacobiProblem::new([1, 0, 4], Stencil::FivePoint), 1),
            Err(JacobiRefError::EmptyAxis { axis: 1 })
        );
        // Said by points, not by the enum's Rust name.
        let e = reference(&JacobiProblem::new([2, 4, 4], Stencil::NinePoint), 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the 9-point stencil is 2D but the grid has nz = 2; use nz = 1 or a 3D stencil"
        );
    }
}
