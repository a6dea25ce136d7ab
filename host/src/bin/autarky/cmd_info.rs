//! `autarky info`: which backend autarky finds, the device, and NVRTC.

use serde_json::json;

use crate::{CliError, Ctx};

/// Show the backend, the GPU and where NVRTC was found.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Ctx, _: Args) -> Result<(), CliError> {
    let (rt, threads) = ctx.runtime()?;
    ctx.say(format_args!(
        "backend: {}{}",
        rt.backend_name(),
        threads
            .map(|t| format!(" ({t} compute threads)"))
            .unwrap_or_default()
    ));
    let device = rt.device_props().map(|p| {
        ctx.say(format_args!(
            "device: {} (sm_{}, {} SMs, {:.1} GiB)",
            p.name,
            p.arch(),
            p.sm_count,
            p.total_mem as f64 / (1u64 << 30) as f64
        ));
        json!({"name": p.name, "arch": p.arch(), "sm_count": p.sm_count, "total_mem": p.total_mem})
    });
    let nvrtc = match autarky::runtime::nvrtc::nvrtc_info() {
        Ok(n) => {
            ctx.say(format_args!(
                "nvrtc: {}.{} at {}",
                n.version.0,
                n.version.1,
                n.path.display()
            ));
            json!({"version": format!("{}.{}", n.version.0, n.version.1), "path": n.path})
        }
        Err(e) => {
            ctx.say(format_args!("nvrtc: {e}"));
            json!({"error": e.to_string()})
        }
    };
    ctx.emit(&json!({
        "backend": rt.backend_name(),
        "emulator_threads": threads,
        "device": device,
        "nvrtc": nvrtc,
    }));
    Ok(())
}
