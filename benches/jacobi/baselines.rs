//! The one-GPU baselines: what a CUDA user writes for a Jacobi sweep
//! without a device-side scheduler, in f32, with exactly the update formula
//! of autarky's `jacobi_tile` (host/src/solvers/jacobi_kernels.cu), so the
//! final grids agree bit for bit (the check allows a few ulp, see
//! `crate::check`).
//!
//! * `launch`: one kernel launch per iteration (buffers swap on the host);
//! * `cuda-graph`: the same K launches captured once into a CUDA graph and
//!   replayed;
//! * `grid-barrier`: one persistent cooperative kernel, all K iterations
//!   inside, blocks meeting at a hand-written grid barrier (a monotonic
//!   arrival counter: iteration `it` ends when it reaches `(it + 1) · grid`)
//!   between iterations.
//!
//! The kernels are 2D-tiled and coalesced: a block of 256 threads is 32
//! columns × 8 thread rows; every thread marches along y (2D, 4 rows) or z
//! (3D, 8 planes) keeping the neighbours along that axis in registers, so a
//! warp reads and writes 128-byte rows.

use std::ffi::c_void;

use autarky::runtime::driver::{Context, DeviceMem, Event, Function, GraphExec, Module, Stream};
use autarky::runtime::nvrtc::{self, Program};
use autarky::Error;

use crate::BoxResult;

/// Threads per block of every baseline kernel.
pub const THREADS: u32 = 256;
/// Columns per block (one warp wide).
pub const TX: usize = 32;
/// Thread rows per block.
const TY: usize = 8;
/// Rows each thread marches over in 2D.
const RY: usize = 4;
/// Planes each thread marches over in 3D.
const RZ: usize = 8;

/// The baselines' CUDA source (compiled with NVRTC, no toolkit headers).
pub const SOURCE: &str = include_str!("baselines.cu");

/// `struct Sweep` of the source.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Sweep {
    pub input: u64,
    pub output: u64,
    pub norm: u64,
    pub nx: u32,
    pub ny: u32,
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub tiles: u32,
    pub pad: u32,
}

/// Blocks (tiles) of the 2D kernels for an interior of `ny` × `nx`:
/// `(tiles_x, tiles_y, tiles)`.
pub fn tiles_2d(nx: usize, ny: usize) -> (u32, u32, u32) {
    let (tx, ty) = (nx.div_ceil(TX), ny.div_ceil(TY * RY));
    (tx as u32, ty as u32, (tx * ty) as u32)
}

/// `struct Persist` of the source.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Persist {
    a: u64,
    b: u64,
    counter: u64,
    n: u32,
    tiles_x: u32,
    tiles_y: u32,
    tiles: u32,
    iterations: u32,
    dim: u32,
    pad: u32,
    pad2: u32,
}

/// The compiled kernels, a stream and two events.
pub struct Kernels<'a> {
    ctx: &'a Context,
    _module: Module,
    step2d: Function,
    step3d: Function,
    persistent: Function,
    stream: Stream,
    start: Event,
    end: Event,
    sm_count: u32,
}

/// One problem's buffers (padded arrays, buffer `a` holds the input of
/// iteration 0) and tiling.
pub struct Grid {
    /// 2 or 3.
    pub dim: u32,
    /// Interior cells per axis.
    pub n: u32,
    pub a: DeviceMem,
    pub b: DeviceMem,
    counter: DeviceMem,
    tiles_x: u32,
    tiles_y: u32,
    tiles: u32,
}

impl Grid {
    /// Buffers for an `n`-per-axis problem of `dim` axes, both holding `init`
    /// (the padded array).
    pub fn new(ctx: &Context, dim: u32, n: u32, init: &[f32]) -> Result<Grid, Error> {
        let a = DeviceMem::from_slice(ctx, init)?;
        let b = DeviceMem::from_slice(ctx, init)?;
        let nn = n as usize;
        let (tiles_x, tiles_y, tiles) = if dim == 2 {
            tiles_2d(nn, nn)
        } else {
            let (tx, ty) = (nn.div_ceil(TX), nn.div_ceil(TY));
            (tx as u32, ty as u32, (tx * ty * nn.div_ceil(RZ)) as u32)
        };
        Ok(Grid {
            dim,
            n,
            a,
            b,
            counter: DeviceMem::alloc(ctx, 4)?,
            tiles_x,
            tiles_y,
            tiles,
        })
    }

    /// Writes `init` into both buffers (the state before iteration 0).
    pub fn reset(&self, init: &[f32]) -> Result<(), Error> {
        self.a.upload(init)?;
        self.b.upload(init)
    }

    /// The buffer holding the result after `iterations` sweeps.
    pub fn result(&self, iterations: u32) -> &DeviceMem {
        if iterations % 2 == 0 {
            &self.a
        } else {
            &self.b
        }
    }

    fn sweep(&self, it: u32) -> Sweep {
        let (input, output) = if it % 2 == 0 {
            (&self.a, &self.b)
        } else {
            (&self.b, &self.a)
        };
        Sweep {
            input: input.ptr(),
            output: output.ptr(),
            norm: 0,
            nx: self.n,
            ny: self.n,
            tiles_x: self.tiles_x,
            tiles_y: self.tiles_y,
            tiles: self.tiles,
            pad: 0,
        }
    }
}

impl<'a> Kernels<'a> {
    pub fn new(ctx: &'a Context) -> Result<Kernels<'a>, Error> {
        let cubin = nvrtc::compile_cubin(&Program {
            name: "jacobi_baselines.cu",
            source: SOURCE,
            headers: &[],
            options: vec!["--std=c++17".into()],
            arch: ctx.props.arch(),
        })?;
        let module = Module::load(ctx, &cubin)?;
        Ok(Kernels {
            ctx,
            step2d: module.function("jacobi2d_step")?,
            step3d: module.function("jacobi3d_step")?,
            persistent: module.function("jacobi_persistent")?,
            _module: module,
            stream: Stream::new(ctx)?,
            start: Event::new(ctx)?,
            end: Event::new(ctx)?,
            sm_count: ctx.props.sm_count,
        })
    }

    fn launch_step(&self, g: &Grid, it: u32) -> Result<(), Error> {
        let mut s = g.sweep(it);
        let f = if g.dim == 2 {
            &self.step2d
        } else {
            &self.step3d
        };
        let mut params = [&mut s as *mut Sweep as *mut c_void];
        // SAFETY: 1. both step kernels take exactly one `Sweep` by value and
        // `Sweep` mirrors it field for field (three pointers, six unsigned;
        // `norm` is unused by these two);
        // 2. the pointers are `g`'s two buffers of (n+2)^dim floats, and the
        // kernel touches only cells of the padded array (tile bounds are
        // checked against n); 3. `g` outlives the work: every caller waits
        // for the end event (or the stream) before dropping it; 4. the
        // grid is `tiles` blocks, one per tile, as the kernel expects.
        unsafe { f.launch(&self.stream, g.tiles, THREADS, &mut params) }
    }

    /// Seconds for `iterations` launches, one per iteration.
    pub fn launches(&self, g: &Grid, iterations: u32) -> Result<f64, Error> {
        self.start.record(&self.stream)?;
        for it in 0..iterations {
            self.launch_step(g, it)?;
        }
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// The `iterations` launches captured into a CUDA graph.
    pub fn capture(&self, g: &Grid, iterations: u32) -> Result<GraphExec, Error> {
        self.stream.begin_capture()?;
        let launched = (0..iterations).try_for_each(|it| self.launch_step(g, it));
        // End the capture even when a launch failed, so the stream is usable.
        let exec = self.stream.end_capture();
        launched?;
        exec
    }

    /// Seconds for one replay of `exec`.
    pub fn replay(&self, exec: &GraphExec) -> Result<f64, Error> {
        self.start.record(&self.stream)?;
        exec.launch(&self.stream)?;
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// Blocks of the persistent kernel for `g`: every block co-resident,
    /// and no more blocks than tiles.
    pub fn persistent_grid(&self, g: &Grid) -> Result<u32, Error> {
        let per_sm = self.persistent.occupancy(THREADS, 0)?;
        Ok((per_sm * self.sm_count).min(g.tiles).max(1))
    }

    /// Seconds for the persistent kernel to run `iterations` sweeps.
    pub fn persistent(&self, g: &Grid, iterations: u32) -> BoxResult<f64> {
        let grid = self.persistent_grid(g)?;
        if (iterations as u64) * (grid as u64) >= u32::MAX as u64 {
            return Err(format!(
                "grid-barrier baseline: {iterations} iterations × {grid} blocks overflow the 32-bit arrival counter"
            )
            .into());
        }
        g.counter.fill_bytes(0)?;
        // The memset runs on the legacy stream, which our non-blocking
        // stream does not wait for: finish it before the launch.
        self.ctx.synchronize()?;
        let p = Persist {
            a: g.a.ptr(),
            b: g.b.ptr(),
            counter: g.counter.ptr(),
            n: g.n,
            tiles_x: g.tiles_x,
            tiles_y: g.tiles_y,
            tiles: g.tiles,
            iterations,
            dim: g.dim,
            pad: 0,
            pad2: 0,
        };
        self.start.record(&self.stream)?;
        // SAFETY: 1. `jacobi_persistent` takes one `Persist` by value and
        // `Persist` mirrors it (three pointers, six unsigned, padding to
        // the C struct's size); 2. `a`, `b` are `g`'s padded arrays and
        // `counter` its zeroed u32, all alive until `elapsed_ms` below
        // has waited for the end event recorded after the kernel; 3. the
        // grid is at most the co-resident block count (occupancy × SMs),
        // which the cooperative launch also enforces, so the barrier's
        // spin always ends.
        unsafe {
            self.persistent
                .launch_cooperative(&self.stream, grid, THREADS, &p)?
        };
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// Waits for all work of the stream.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.stream.synchronize()
    }
}

/// The padded initial array of the bench problem (interior 0, Dirichlet
/// layer from `dirichlet`), the same values autarky's solver writes.
pub fn initial(dim: u32, n: usize, dirichlet: &(dyn Fn(i64, i64, i64) -> f64 + Sync)) -> Vec<f32> {
    let s = n + 2;
    let mut v = vec![0f32; if dim == 2 { s * s } else { s * s * s }];
    let g = |c: usize| c as i64 - 1;
    let edge = |c: usize| c == 0 || c == s - 1;
    if dim == 2 {
        for y in 0..s {
            for x in 0..s {
                if edge(y) || edge(x) {
                    v[y * s + x] = dirichlet(0, g(y), g(x)) as f32;
                }
            }
        }
    } else {
        for z in 0..s {
            for y in 0..s {
                let row = (z * s + y) * s;
                if edge(z) || edge(y) {
                    for x in 0..s {
                        v[row + x] = dirichlet(g(z), g(y), g(x)) as f32;
                    }
                } else {
                    v[row] = dirichlet(g(z), g(y), -1) as f32;
                    v[row + s - 1] = dirichlet(g(z), g(y), n as i64) as f32;
                }
            }
        }
    }
    v
}

/// The interior of a padded array, row-major, x fastest.
pub fn interior(dim: u32, n: usize, padded: &[f32]) -> Vec<f32> {
    let s = n + 2;
    let mut out = Vec::with_capacity(if dim == 2 { n * n } else { n * n * n });
    let planes = if dim == 2 { 1 } else { n };
    for z in 0..planes {
        for y in 0..n {
            let row = if dim == 2 {
                (y + 1) * s + 1
            } else {
                ((z + 1) * s + y + 1) * s + 1
            };
            out.extend_from_slice(&padded[row..row + n]);
        }
    }
    out
}
