//! `autarky info`: which backend autarky finds, the GPUs and which pairs are
//! peers, the megakernel's occupancy, NVRTC, and the cubin cache.

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
    // Every GPU and the peer matrix (several GPUs of one run must be peers).
    let topology = match autarky::runtime::gpu_topology() {
        Ok((names, peers)) if rt.backend_name() == "gpu" => {
            for (i, n) in names.iter().enumerate() {
                ctx.say(format_args!("gpu {i}: {n}"));
            }
            if names.len() > 1 {
                ctx.say(format_args!(
                    "peer access (row can load/store column's memory): {}",
                    peers
                        .iter()
                        .enumerate()
                        .map(|(i, r)| format!(
                            "{i}:[{}]",
                            r.iter()
                                .map(|&p| if p { 'y' } else { '-' })
                                .collect::<String>()
                        ))
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
                let all = peers.iter().all(|r| r.iter().all(|&p| p));
                ctx.say(format_args!(
                    "every pair is load/store reachable: {}",
                    if all {
                        "yes (Builder::gpus can use all of them)"
                    } else {
                        "no"
                    }
                ));
            }
            json!({"gpus": names, "peer_access": peers})
        }
        _ => serde_json::Value::Null,
    };
    // The megakernel of an empty graph: registers and resident blocks.
    let occupancy = if rt.backend_name() == "gpu" {
        let mut g = autarky::Graph::new();
        g.add_kind(autarky::TaskKind::new(
            "info_noop",
            "__device__ void info_noop(autarky::TaskCtx&) {}",
        ))
        .expect("a valid kind");
        match rt.kernel_info(&g) {
            Ok(Some((per_sm, regs))) => {
                ctx.say(format_args!(
                    "megakernel: {regs} registers per thread, {per_sm} blocks per SM of {} threads",
                    rt.threads_per_block()
                ));
                json!({"registers": regs, "blocks_per_sm": per_sm, "threads": rt.threads_per_block()})
            }
            Ok(None) => serde_json::Value::Null,
            Err(e) => {
                ctx.say(format_args!("megakernel: could not compile ({e})"));
                json!({"error": e.to_string()})
            }
        }
    } else {
        serde_json::Value::Null
    };
    let cache = match autarky::runtime::cache::CubinCache::from_env() {
        Some(c) => {
            let (n, bytes) = c.usage();
            ctx.say(format_args!(
                "cubin cache: {} ({n} cubins, {:.1} MiB)",
                c.dir().display(),
                bytes as f64 / (1 << 20) as f64
            ));
            json!({"dir": c.dir(), "cubins": n, "bytes": bytes})
        }
        None => {
            ctx.say(format_args!("cubin cache: off (AUTARKY_CACHE=0)"));
            serde_json::Value::Null
        }
    };
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
        "topology": topology,
        "megakernel": occupancy,
        "nvrtc": nvrtc,
        "cubin_cache": cache,
    }));
    Ok(())
}
