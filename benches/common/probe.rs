//! The benches' start: a GPU runtime and NVRTC, or the reason to skip
//! (no GPU, no NVRTC). Any other failure is an error.

use autarky::runtime::{driver::DeviceProps, nvrtc};
use autarky::{Error, Runtime};

/// What the machine offers the bench (made once per bench run, so the
/// size of the GPU variant does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Probe {
    /// A GPU runtime (default builder) and its device's properties.
    Gpu(Runtime, DeviceProps),
    /// Why the bench cannot run here (printed by the bench's `skip`).
    Skip(String),
}

/// Boots a GPU runtime and checks NVRTC.
pub fn gpu() -> Result<Probe, Box<dyn std::error::Error>> {
    let rt = match Runtime::builder().gpu().build() {
        Ok(rt) => rt,
        Err(e @ Error::NoGpu { .. }) => return Ok(Probe::Skip(e.to_string())),
        Err(e) => return Err(format!("booting the GPU runtime: {e}").into()),
    };
    match nvrtc::nvrtc_version() {
        Ok(_) => {}
        Err(e @ Error::NvrtcNotFound { .. }) => return Ok(Probe::Skip(e.to_string())),
        Err(e) => return Err(format!("loading NVRTC: {e}").into()),
    }
    let props = rt
        .device_props()
        .ok_or("the GPU runtime has no device properties")?
        .clone();
    Ok(Probe::Gpu(rt, props))
}
