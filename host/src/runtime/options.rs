//! Options of one run ([`RunOptions`]), read by every backend.

use std::time::Duration;

use autarky_shared::MAX_ITERATIONS;

use crate::graph::TaskId;
use crate::{Error, Result};

#[cfg(doc)]
use crate::RunReport;

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Instances of every task (1..=MAX_ITERATIONS).
    pub iterations: u32,
    /// Overrides the runtime's wait timeout for this run.
    pub timeout: Option<Duration>,
    /// Host watchdog: raise abort after this long without progress
    /// (default: 2 × timeout + 1 s).
    pub watchdog: Option<Duration>,
    /// After the watchdog raised abort, how long to wait for the kernel to
    /// stop before reporting [`Error::Unstoppable`] (default: max(5 s,
    /// watchdog / 2)).
    pub abort_grace: Option<Duration>,
    /// Record device events around the launch ([`RunReport::event_ms`]).
    /// The two `cuEventRecord` calls are the only driver calls besides the
    /// launch before the kernel ends.
    pub timed: bool,
    /// Fault injection: never run this task (a dependency that never completes).
    #[doc(hidden)]
    pub hold_task: Option<TaskId>,
    /// Fault injection: give this task this kind index in the device tables.
    #[doc(hidden)]
    pub corrupt_kind: Option<(TaskId, u32)>,
    /// Fault injection: pass this ABI version instead of the real one.
    #[doc(hidden)]
    pub abi_version_override: Option<u32>,
}

impl RunOptions {
    /// `iterations` instances of every task, defaults otherwise.
    pub fn iterations(iterations: u32) -> Self {
        RunOptions {
            iterations,
            ..Default::default()
        }
    }
}

/// Iterations must be in `1..=MAX_ITERATIONS` on every backend.
pub(crate) fn validate_iterations(iterations: u32) -> Result<()> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(Error::InvalidConfig(format!(
            "iterations must be in 1..={MAX_ITERATIONS}, got {iterations}"
        )));
    }
    Ok(())
}
