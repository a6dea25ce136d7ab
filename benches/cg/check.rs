//! Correctness, once per case and outside the timing: every variant's
//! residuals after the same number of iterations against autarky's
//! standard CG.
//!
//! * **Recursive residual** `√ρ_k/‖b‖` (what each recurrence carries): all
//!   variants run the same recurrence in exact arithmetic (single reduction
//!   rearranges it), so they agree to rounding — but only while the
//!   residual is well above rounding level. Once CG has converged, the
//!   recursive residual keeps shrinking geometrically and two correct
//!   implementations drift apart. Measured with the CPU reference
//!   (`cg_reference`, standard against single reduction, f64): Poisson
//!   2D 1024² agrees to ≤ 3·10⁻⁹ up to 1000 iterations (residual ≥ 0.05),
//!   3D 128³ to 1.3·10⁻¹⁰ at 200 iterations (2.6·10⁻⁴), but 3D 64³ differs
//!   by 3·10⁻⁶ at 180 iterations (1.3·10⁻¹⁰) and 3D 32³ by 15 % at 200
//!   (3·10⁻²⁴). So the recursive residuals are compared at the timed
//!   iteration count when autarky's is at least [`COMPARABLE`], with
//!   relative tolerance [`REL_TOL`]; otherwise at [`CHECK_ITERS`]
//!   iterations (short extra runs), where every bench case is far from
//!   converged (32³: 4·10⁻³).
//! * **True residual** `‖b − A x_k‖/‖b‖`, recomputed on the host in f64
//!   from each variant's `x`: it stagnates at rounding level after
//!   convergence (≈10⁻¹³ on these problems), so the values must agree to
//!   [`TRUE_REL_TOL`] relative plus [`TRUE_ABS_TOL`] absolute. A variant
//!   that updates `x` wrongly fails here even when its `r` is right.

/// Relative tolerance of two recursive residuals at the same iteration
/// (module docs: the CPU reference's two recurrences stay within 3·10⁻⁹).
pub const REL_TOL: f64 = 1e-7;
/// Smallest recursive residual at which residuals are compared at the
/// timed iteration count.
pub const COMPARABLE: f64 = 1e-5;
/// Iterations of the short check runs of converged cases.
pub const CHECK_ITERS: u32 = 40;
/// Relative part of the true-residual tolerance.
pub const TRUE_REL_TOL: f64 = 1e-6;
/// Absolute part (in units of `‖b‖`) of the true-residual tolerance.
pub const TRUE_ABS_TOL: f64 = 1e-9;

/// One variant's residuals after some iterations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// The variant's name.
    pub variant: &'static str,
    /// Recursive `‖r‖/‖b‖`.
    pub recursive: f64,
    /// True `‖b − A x‖/‖b‖` (NaN when not computed).
    pub true_residual: f64,
}

/// `|a − b| / max(|a|, |b|)`; 0 when both are 0; ∞ when either is not finite.
pub fn rel_diff(a: f64, b: f64) -> f64 {
    if !(a.is_finite() && b.is_finite()) {
        return f64::INFINITY;
    }
    let m = a.abs().max(b.abs());
    if m == 0.0 {
        0.0
    } else {
        (a - b).abs() / m
    }
}

/// Whether recursive residuals at this level (autarky's) are compared at
/// the timed iteration count.
pub fn comparable(recursive: f64) -> bool {
    recursive.is_finite() && recursive >= COMPARABLE
}

/// The worst relative difference of `others`' recursive residuals from
/// `reference`'s; an error naming the first beyond [`REL_TOL`].
pub fn recursive_agree(what: &str, reference: &Reading, others: &[Reading]) -> Result<f64, String> {
    let mut worst = 0.0f64;
    for o in others {
        let d = rel_diff(reference.recursive, o.recursive);
        if d > REL_TOL {
            return Err(format!(
                "{what}: the recursive residual of {} is {:e}, {}'s is {:e}: relative difference {d:.2e} > {REL_TOL:e}; refusing to time wrong work",
                o.variant, o.recursive, reference.variant, reference.recursive
            ));
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

/// The worst absolute difference of `others`' true residuals from
/// `reference`'s; an error naming the first beyond
/// `TRUE_REL_TOL · max + TRUE_ABS_TOL`.
pub fn true_agree(what: &str, reference: &Reading, others: &[Reading]) -> Result<f64, String> {
    let mut worst = 0.0f64;
    for o in others {
        let (a, b) = (reference.true_residual, o.true_residual);
        let d = (a - b).abs();
        let allowed = TRUE_REL_TOL * a.abs().max(b.abs()) + TRUE_ABS_TOL;
        if !(a.is_finite() && b.is_finite()) || d > allowed {
            return Err(format!(
                "{what}: the true residual ‖b − A x‖/‖b‖ of {} is {b:e}, {}'s is {a:e} (allowed difference {allowed:.1e}); refusing to time wrong work",
                o.variant, reference.variant
            ));
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

/// `‖b − A x‖ / ‖b‖` in f64 for `b = 1`.
pub fn true_rel_residual_ones(a: &autarky::solvers::cg::Csr<f64>, x: &[f64]) -> f64 {
    let ax = a.spmv(x);
    let rr: f64 = ax.iter().map(|v| (1.0 - v) * (1.0 - v)).sum();
    (rr / a.n_rows().max(1) as f64).sqrt()
}

/// `name 1.234567e-3` for each reading.
pub fn list(readings: &[Reading], true_residual: bool) -> String {
    readings
        .iter()
        .map(|r| {
            let v = if true_residual {
                r.true_residual
            } else {
                r.recursive
            };
            format!("{} {v:.9e}", r.variant)
        })
        .collect::<Vec<_>>()
        .join(", ")
}
