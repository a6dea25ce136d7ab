//! Developer tool (not an example to copy): small graphs for
//! compute-sanitizer (scripts/sanitize.sh), a diamond and a random DAG with
//! loop-carried edges, on a small grid so instrumented runs finish in
//! seconds. Exits non-zero, with the reason, on any wrong result or error,
//! including a missing GPU or NVRTC.
//!
//! `cargo build --release --features dev-tools --bin dev-sanitize`

use std::time::Duration;

use autarky::{Graph, Runtime, TaskId, TaskKind};

const BODY: &str = r#"
struct SanArgs { unsigned* count; unsigned* data; unsigned iterations; unsigned pad; };
__device__ void counted(autarky::TaskCtx& ctx) {
    const SanArgs& a = ctx.args<SanArgs>();
    __shared__ unsigned partial;
    if (threadIdx.x == 0) partial = 0;
    __syncthreads();
    atomicAdd(&partial, a.data[(ctx.task * 131u + threadIdx.x) % 4096u]);
    __syncthreads();
    // data[] is read-only here (every word 0x01010101), so partial = blockDim.x * 0x01010101.
    if (threadIdx.x == 0) {
        a.count[ctx.task * a.iterations + ctx.iteration] += (partial == blockDim.x * 0x01010101u) ? 1u : 100u;
    }
}
"#;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SanArgs {
    count: u64,
    data: u64,
    iterations: u32,
    pad: u32,
}

fn run(
    rt: &Runtime,
    name: &str,
    n: usize,
    iters: u32,
    edges: impl Fn(&mut Graph, &[TaskId]),
) -> Result<(), String> {
    let count = rt
        .alloc::<u32>(n * iters as usize)
        .map_err(|e| e.to_string())?;
    let data = rt.alloc::<u32>(4096).map_err(|e| e.to_string())?;
    data.copy_from(&[0x0101_0101; 4096])
        .map_err(|e| e.to_string())?;
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("counted", BODY).args::<SanArgs>())
        .map_err(|e| e.to_string())?;
    let args = SanArgs {
        count: count.addr(),
        data: data.addr(),
        iterations: iters,
        pad: 0,
    };
    let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &args)).collect();
    edges(&mut g, &t);
    let r = rt.run(&g, iters).map_err(|e| e.to_string())?;
    let c = count.to_vec().map_err(|e| e.to_string())?;
    if r.instances != (n * iters as usize) as u64 || c.iter().any(|&x| x != 1) {
        return Err(format!(
            "{name}: {} instances, counts {:?}…",
            r.instances,
            &c[..c.len().min(8)]
        ));
    }
    println!("{name}: {n} tasks × {iters} iterations OK");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let rt = match Runtime::builder()
        .gpu()
        .compute_blocks(8)
        .timeout(Duration::from_secs(60))
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("dev-sanitize: needs a GPU: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let diamond = run(&rt, "diamond", 4, 20, |g, t| {
        g.add_edge(t[0], t[1])
            .add_edge(t[0], t[2])
            .add_edge(t[1], t[3])
            .add_edge(t[2], t[3]);
        g.add_carried_edge(t[3], t[0]);
    });
    let random = run(&rt, "random dag", 200, 10, |g, t| {
        let mut x = 12345u64;
        for s in 1..t.len() {
            for _ in 0..3 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if x >> 62 != 0 {
                    g.add_edge(t[s - 1 - (x >> 33) as usize % s.min(16)], t[s]);
                }
            }
            if (x >> 20) % 7 == 0 {
                g.add_carried_edge(t[(x >> 40) as usize % t.len()], t[s]);
            }
        }
    });
    match diamond.and(random) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dev-sanitize: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
