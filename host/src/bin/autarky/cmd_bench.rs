//! `autarky bench`: how to run the dispatch bench, and whether this machine
//! can produce its numbers. The bench itself is a cargo bench target
//! (`benches/dispatch/`), since it carries its own baselines and report
//! writer; this command does not run it and says so.

use serde_json::json;

use crate::{CliError, Ctx};

/// Explain how to run the dispatch bench (`cargo bench --bench dispatch`)
/// and check whether this machine has what it needs (a GPU and NVRTC).
/// It does not run the bench itself.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Ctx, _: Args) -> Result<(), CliError> {
    let gpu = match autarky::Runtime::builder().gpu().build() {
        Ok(rt) => Ok(rt
            .device_props()
            .map_or_else(|| "a GPU".to_string(), |p| p.name.clone())),
        Err(e) => Err(e.to_string()),
    };
    let nvrtc = autarky::runtime::nvrtc::nvrtc_info().map_err(|e| e.to_string());
    let out = std::env::var("AUTARKY_BENCH_OUT")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "target/bench-report/".into());
    let ready = gpu.is_ok() && nvrtc.is_ok();
    ctx.say("The dispatch bench is not run by this command. From the source tree, run:");
    ctx.say("  cargo bench --bench dispatch              (full: N = 100, 1000, 10000; 11 reps)");
    ctx.say("  cargo bench --bench dispatch -- --quick   (smaller, for a first look)");
    ctx.say(format_args!(
        "It writes results.json and one SVG chart per case family to {out} (set AUTARKY_BENCH_OUT to change)."
    ));
    match (&gpu, &nvrtc) {
        (Ok(name), Ok(_)) => ctx.say(format_args!(
            "This machine can run it: {name}, NVRTC found."
        )),
        (Err(e), _) => ctx.say(format_args!(
            "On this machine the bench will print SKIP and exit 0: {e}"
        )),
        (_, Err(e)) => ctx.say(format_args!(
            "On this machine the bench will print SKIP and exit 0: {e}"
        )),
    }
    ctx.emit(&json!({
        "command": "bench",
        "ran": false,
        "how": "cargo bench --bench dispatch",
        "out_dir": out,
        "can_run_here": ready,
        "gpu": gpu.as_ref().ok(),
        "gpu_error": gpu.as_ref().err(),
        "nvrtc_error": nvrtc.as_ref().err(),
    }));
    Ok(())
}
