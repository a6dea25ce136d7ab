//! `autarky info`: which backend autarky finds, the GPUs and which pairs are
//! peers, the megakernel's occupancy, NVRTC, NVSHMEM (builds with the
//! `nvshmem` feature), and the cubin cache. Under mpirun with
//! `--transport ipc|nvshmem`, also how this rank reaches every PE.

use autarky::Runtime;
use serde_json::json;

use crate::cmd_jacobi::TransportArg;
use crate::{plural, CliError, Ctx};

/// Show the backend, the GPU and where NVRTC was found.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `local` (default): this process alone. `ipc` or `nvshmem`: join the
    /// mpirun job with that transport (collective: start every rank with
    /// the same arguments) and print how this rank reaches every PE.
    #[arg(long, value_enum, default_value_t = TransportArg::Local)]
    transport: TransportArg,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let (rt, threads) = match args.transport {
        TransportArg::Local => ctx.runtime()?,
        t => {
            if ctx.emulator.is_some() {
                return Err(CliError::Usage(format!(
                    "--transport {}: one GPU per rank, no emulator",
                    t.transport().name()
                )));
            }
            (Runtime::builder().transport(t.transport()).build()?, None)
        }
    };
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
        _ => {
            // On the emulator: say whether a GPU is there at all (a user
            // who passed --emulator, or whose GPU could not be used, wants
            // to know which).
            match autarky::runtime::gpu_count() {
                _ if rt.backend_name() == "gpu" => {}
                Ok(n) if n > 0 => ctx.say(format_args!(
                    "device: none used ({} present; --emulator chose the CPU)",
                    plural(n as u64, "GPU", "GPUs")
                )),
                Ok(_) => ctx.say("device: none (the CUDA driver sees no GPU)"),
                Err(e) => ctx.say(format_args!(
                    "device: none ({})",
                    first_clause(&e.to_string())
                )),
            }
            serde_json::Value::Null
        }
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
                    "megakernel: {regs} registers per thread, {} per SM of {} threads",
                    plural(per_sm as u64, "block", "blocks"),
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
                "cubin cache: {} ({}, {:.1} MiB)",
                c.dir().display(),
                plural(n, "cubin", "cubins"),
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
    let nvshmem = nvshmem_info(ctx);
    let peers = if rt.transport().is_multi_process() {
        let t = rt.peer_transports();
        ctx.say(format_args!(
            "rank {} of {} ({} transport): {}",
            rt.rank(),
            rt.ranks(),
            rt.transport().name(),
            t.iter()
                .enumerate()
                .map(|(pe, how)| format!("PE {pe}: {how}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        json!({"rank": rt.rank(), "ranks": rt.ranks(), "transport": rt.transport().name(), "per_pe": t})
    } else {
        serde_json::Value::Null
    };
    ctx.emit(&json!({
        "backend": rt.backend_name(),
        "nvshmem": nvshmem,
        "peers": peers,
        "emulator_threads": threads,
        "device": device,
        "topology": topology,
        "megakernel": occupancy,
        "nvrtc": nvrtc,
        "cubin_cache": cache,
    }));
    Ok(())
}

/// Where NVSHMEM and its device-link toolchain are, and the version its
/// host library reports (builds with the `nvshmem` feature; loads the
/// library without initialising it).
#[cfg(feature = "nvshmem")]
fn nvshmem_info(ctx: &Ctx) -> serde_json::Value {
    use autarky::runtime::nvshmem;
    let host = nvshmem::host::nvshmem_info();
    let toolchain = nvshmem::toolchain();
    match (host, toolchain) {
        (Ok((install, (ma, mi, pa))), Ok(t)) => {
            ctx.say(format_args!(
                "nvshmem: {ma}.{mi}.{pa} at {} (device link: nvJitLink + CUDA headers at {})",
                install.root.display(),
                t.cuda_includes
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            json!({"version": format!("{ma}.{mi}.{pa}"), "root": install.root, "cuda_includes": t.cuda_includes})
        }
        (Err(e), _) | (_, Err(e)) => {
            ctx.say(format_args!("nvshmem: {e}"));
            json!({"error": e.to_string()})
        }
    }
}

/// Without the `nvshmem` feature: says so.
#[cfg(not(feature = "nvshmem"))]
fn nvshmem_info(ctx: &Ctx) -> serde_json::Value {
    ctx.say(format_args!(
        "nvshmem: not in this build (rebuild with `--features nvshmem`)"
    ));
    serde_json::Value::Null
}

/// The first clause of an error's text (up to a `;`).
fn first_clause(s: &str) -> &str {
    s.split(';').next().unwrap_or(s)
}
