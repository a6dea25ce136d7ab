//! Halo exchange planning for structured grids split over PEs.
//!
//! # Model
//!
//! A global grid `[nz, ny, nx]` (2D: `nz = 1`; 1D: `nz = ny = 1`) is split
//! into balanced blocks, one per PE ([`Decomposition`]). Each PE stores its
//! block in a padded array ([`LocalLayout`], row-major, x fastest) with a
//! ghost layer of width `h` on both sides of every *active* axis (global
//! extent > 1, or made active by [`Decomposition::with_active_axes`]).
//! Ghost cells mirror cells of other blocks (or, along a
//! periodic axis, of the wrapped-around block, possibly the PE's own), except
//! at a physical boundary, where they hold boundary values the solver writes
//! and no pulse touches.
//!
//! # Protocol (what [`plan`] produces)
//!
//! The exchange is a list of *pulses*, GROMACS-style:
//! * Pulses are ordered by axis Z → Y → X. A pulse moves data along exactly
//!   one axis to the neighbouring PE along it: there are no diagonal
//!   messages.
//! * A pulse along axis `k` in direction +1 copies the sender's last `h`
//!   interior layers along `k` into the receiver's low ghost layer; −1 copies
//!   the first `h` into the high ghost layer.
//! * [`Footprint::Faces`]: the pulse spans the interior in the other axes.
//! * [`Footprint::Full`]: in axes exchanged before `k` the pulse also spans
//!   the ghost layers that were filled by those earlier pulses, so edges and
//!   corners reach diagonal neighbours in two or three hops. Those cells are
//!   [`Forwarded`] parts: the sender may pack them only after the named
//!   earlier incoming pulse has arrived. The rest ([`Pulse::independent`])
//!   holds only interior cells and can be packed at once.
//! * Every ghost cell is written by at most one pulse, and a pulse never
//!   reads a cell a pulse of the same axis writes (it reads interior layers
//!   along its own axis and writes ghost layers), so the only ordering
//!   constraints are the forwarded dependencies. [`Plan::simulate`] runs a
//!   plan on CPU arrays in an order that respects only those.
//!
//! Who writes what: a pulse's sender reads `send` (its own interior and
//! ghosts already filled by earlier pulses); only that pulse writes `recv`
//! on the receiver. A device implementation publishes one signal per pulse
//! after its last cell is stored; a forwarded part waits for the signal of
//! the pulse it names.

mod decomp;
mod error;
mod layout;
mod plan;
mod simulate;

#[cfg(test)]
mod tests;

pub use decomp::Decomposition;
pub(crate) use error::grid_text;
pub use error::{HaloError, AXIS_NAMES};
pub use layout::{Box3, LocalLayout};
pub use plan::{plan, Footprint, Forwarded, Plan, Pulse};
