//! The README's graph as a program: two tasks scale two buffers in turn,
//! for 100 iterations, on the GPU if there is one and on the CPU emulator
//! otherwise; then the result is checked.
//!
//! `cargo run --example graph` (add `-- --emulator` to force the emulator).

use autarky::{Graph, Runtime, TaskKind};

/// The task arguments, laid out as the CUDA struct below.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Scale {
    data: u64,
    n: u32,
    factor: f32,
}

const N: usize = 1024;
const ITERATIONS: u32 = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let rt = if std::env::args().any(|a| a == "--emulator") {
        Runtime::builder().emulator(2).build()?
    } else {
        Runtime::builder().build()? // GPU 0, or the emulator
    };

    let buf_a = rt.alloc::<f32>(N)?;
    let buf_b = rt.alloc::<f32>(N)?;
    buf_a.copy_from(&[1.0; N])?;
    buf_b.copy_from(&[1.0; N])?;

    let mut g = Graph::new();
    let scale = g.add_kind(
        TaskKind::new(
            "scale",
            r#"
            struct Scale { float* data; unsigned n; float factor; };
            __device__ void scale(autarky::TaskCtx& ctx) {   // every thread of the block runs it
                const Scale& a = ctx.args<Scale>();
                for (unsigned i = threadIdx.x; i < a.n; i += blockDim.x) a.data[i] *= a.factor;
            }"#,
        )
        .args::<Scale>()
        .with_cpu(|ctx| {
            // The same body for the emulator.
            let a: Scale = ctx.args();
            for x in autarky::cpu_slice_mut::<f32>(a.data, a.n as usize)?.iter_mut() {
                *x *= a.factor;
            }
            Ok(())
        }),
    )?;
    let a = g.add_task(
        scale,
        &Scale {
            data: buf_a.addr(),
            n: N as u32,
            factor: 2.0,
        },
    );
    let b = g.add_task(
        scale,
        &Scale {
            data: buf_b.addr(),
            n: N as u32,
            factor: 0.5,
        },
    );
    g.add_edge(a, b); // instance i of b after instance i of a
    g.add_carried_edge(b, a); // instance i+1 of a after instance i of b

    let report = rt.run(&g, ITERATIONS)?;
    println!(
        "{} backend: {} instances in {:?}",
        report.backend, report.instances, report.wall
    );

    // Powers of two are exact in f32: 2^100 and 2^-100 are in range.
    let (want_a, want_b) = (2f32.powi(ITERATIONS as i32), 0.5f32.powi(ITERATIONS as i32));
    let (got_a, got_b) = (buf_a.to_vec()?, buf_b.to_vec()?);
    if let Some(i) = (0..N).find(|&i| got_a[i] != want_a || got_b[i] != want_b) {
        return Err(format!(
            "element {i}: a = {}, b = {}; want {want_a} and {want_b}",
            got_a[i], got_b[i]
        )
        .into());
    }
    println!("ok: every element of a is {want_a:e} and of b is {want_b:e}");
    Ok(())
}
