//! What a GPU run's host-mapped progress words say while it runs
//! ([`GpuRun::progress_snapshot`](super::GpuRun::progress_snapshot)): read
//! from pinned host memory the device writes, never through a CUDA call,
//! so polling them keeps the run CPU-free.
//!
//! Who writes each word and when is documented on
//! [`HostControl`](autarky_shared::HostControl) (and in
//! `device/include/autarky/progress.cuh`).

use std::mem::offset_of;

use autarky_shared::HostControl;

use super::driver::HostMapped;

/// A residual a task body reported (`ctx.report_residual(r)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Residual {
    /// The value.
    pub value: f64,
    /// The iteration of the instance that reported it.
    pub iteration: u32,
}

/// One PE's progress words, read at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeProgress {
    /// The PE.
    pub pe: u32,
    /// Local tasks of the PE (what `instances` counts instances of).
    pub tasks: u32,
    /// Task instances completed on the PE, published by its comm block 0
    /// about every 50 µs (and exactly at the end).
    pub instances: u64,
    /// Iterations every task of the PE has completed: a lower bound that
    /// lags by one sweep of the tasks (32 tasks per 50 µs publish), exact
    /// once every task finished.
    pub iterations_done: u32,
    /// The latest residual a task body of the PE reported, if any.
    pub residual: Option<Residual>,
    /// `%globaltimer` of the last publish (ns, device clock; 0 before the
    /// first).
    pub heartbeat_ns: u64,
    /// Every block of the PE has left its loop.
    pub finished: bool,
}

impl PeProgress {
    /// `instances / tasks`: the iterations the PE would have completed if
    /// its instances were spread evenly over its tasks (a leading
    /// estimate, next to the lagging bound [`PeProgress::iterations_done`]).
    pub fn iterations_estimate(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.instances as f64 / self.tasks as f64
        }
    }

    /// Reads PE `pe`'s words from its host-mapped [`HostControl`].
    pub(crate) fn read(control: &HostMapped, pe: u32, tasks: u32) -> PeProgress {
        // The device stores the residual, then (release) its iteration:
        // reading the iteration first gives that report's value or a later
        // one's.
        let residual_iteration = control.read::<u32>(offset_of!(HostControl, residual_iteration));
        let value = control.read::<f64>(offset_of!(HostControl, last_residual));
        PeProgress {
            pe,
            tasks,
            instances: control.read::<u64>(offset_of!(HostControl, progress)),
            iterations_done: control.read::<u32>(offset_of!(HostControl, iterations_done)),
            residual: (residual_iteration != 0).then_some(Residual {
                value,
                iteration: residual_iteration - 1,
            }),
            heartbeat_ns: control.read::<u64>(offset_of!(HostControl, heartbeat_ns)),
            finished: control.read::<u32>(offset_of!(HostControl, finished)) != 0,
        }
    }
}
