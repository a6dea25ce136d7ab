//! Why a decomposition, a plan or a simulated exchange cannot be made.

/// Axis names in array order: index 0 is z (slowest), 2 is x (fastest).
pub const AXIS_NAMES: [&str; 3] = ["z", "y", "x"];

/// A box of cells `[nz, ny, nx]` for a message: `"4 × 8 × 8 cells (z × y ×
/// x)"`, or, in a 2D problem (`two_d`, whose z extent is 1), `"8 × 8 cells
/// (y × x)"`.
pub(crate) fn grid_text(dims: [usize; 3], two_d: bool) -> String {
    match dims {
        [1, ny, nx] if two_d => format!("{ny} × {nx} cells (y × x)"),
        [nz, ny, nx] => format!("{nz} × {ny} × {nx} cells (z × y × x)"),
    }
}

/// Errors of the halo planner. Every variant names the axis (`z`, `y`, `x`)
/// and the numbers a user needs to pick a valid configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HaloError {
    /// The global grid has no cells along an axis.
    #[error("the global grid has 0 cells along {}; every axis needs at least 1 (2D grids use nz = 1)", AXIS_NAMES[*.axis])]
    EmptyAxis {
        /// The axis (0 = z, 1 = y, 2 = x).
        axis: usize,
    },
    /// Zero PEs were asked for along an axis (or in total).
    #[error("0 PEs along {}; every axis needs at least 1 PE", AXIS_NAMES[*.axis])]
    NoPes {
        /// The axis (0 = z, 1 = y, 2 = x).
        axis: usize,
    },
    /// Zero PEs were asked for in total ([`Decomposition::auto`](super::Decomposition::auto)).
    #[error("0 PEs asked for; a decomposition needs at least 1")]
    NoPesAtAll,
    /// More PEs than cells along an axis: some PE would own no cell. A 2D grid
    /// (nz = 1) lands here when pz is not 1.
    #[error("{pes} PEs along {} but only {cells} cell(s); use at most {cells} PE(s) along {}", AXIS_NAMES[*.axis], AXIS_NAMES[*.axis])]
    MorePesThanCells {
        /// The axis (0 = z, 1 = y, 2 = x).
        axis: usize,
        /// PEs asked for along it.
        pes: usize,
        /// Cells along it.
        cells: usize,
    },
    /// No factorization `pz * py * px = pes` fits the grid (each factor at
    /// most the cells along its axis).
    #[error("{pes} PEs cannot be arranged on a grid of {} with at least one cell per PE along each axis; use fewer PEs or a count with smaller factors", grid_text(*.global, .global[0] == 1))]
    NoFactorization {
        /// PEs asked for.
        pes: usize,
        /// The global grid `[nz, ny, nx]`.
        global: [usize; 3],
    },
    /// A halo of width 0 was asked for.
    #[error("halo width 0; a halo exchange needs width at least 1")]
    ZeroHalo,
    /// The halo is wider than the smallest block along an exchanging axis:
    /// its ghost cells would need data from a PE that is not a neighbour
    /// (or, with one PE along a periodic axis, from beyond the PE's own
    /// cells, which the ghosts wrap onto).
    #[error(
        "halo width {halo} is wider than the smallest block along {} ({smallest} cell(s)); {}",
        AXIS_NAMES[*.axis],
        if *.pes_along == 1 {
            format!(
                "with one PE along the periodic {} its ghosts wrap onto its own cells: use a narrower halo or a grid of at least {halo} cells along {}",
                AXIS_NAMES[*.axis], AXIS_NAMES[*.axis]
            )
        } else {
            format!("use fewer PEs along {} or a narrower halo", AXIS_NAMES[*.axis])
        }
    )]
    HaloWiderThanBlock {
        /// The axis (0 = z, 1 = y, 2 = x).
        axis: usize,
        /// Halo width asked for.
        halo: usize,
        /// Cells of the smallest block along the axis.
        smallest: usize,
        /// PEs along the axis.
        pes_along: usize,
    },
    /// [`Plan::simulate`](super::Plan::simulate) got a number of arrays other
    /// than the number of PEs.
    #[error("simulate got {got} arrays for {expected} PEs; pass one padded array per PE")]
    WrongArrayCount {
        /// PEs of the plan.
        expected: usize,
        /// Arrays given.
        got: usize,
    },
    /// [`Plan::simulate`](super::Plan::simulate) got an array of the wrong size.
    #[error("the array of PE {pe} has {got} elements, but its padded layout has {expected}; size it with Plan::layout(pe).len()")]
    WrongArrayLength {
        /// The PE.
        pe: usize,
        /// Elements of its padded layout.
        expected: usize,
        /// Elements given.
        got: usize,
    },
}
