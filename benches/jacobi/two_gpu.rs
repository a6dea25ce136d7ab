//! The two-GPU part: the CPU-driven baseline a CUDA user writes for a 2D
//! Jacobi solve over G GPUs — the grid split into G slabs of rows, one
//! kernel launch per iteration per GPU, the halo rows exchanged with
//! `cuMemcpyPeerAsync`, and at a norm check a stream synchronisation on
//! every GPU before the host reads and sums the partial norms.
//!
//! autarky's side of the part (one PE per GPU, S = 1 and S = 4) is in
//! `main.rs`'s `two_gpu_part`, against this baseline.
//!
//! The driver layer of the library (`autarky::runtime::driver`) has no
//! peer copies or peer access, so this part uses cudarc directly; the
//! kernels are the one-GPU baseline's (`crate::baselines::SOURCE`).
//!
//! # Ordering per iteration `it` (GPU g, its neighbour o)
//!
//! stream g: kernel(it) → record done[g] → wait done[o] → copy o's
//! boundary row of buffer (it+1)%2 into g's ghost row of the same buffer.
//! The copy runs on the receiver's stream, after its own kernels `it − 1`
//! (the last reader of that ghost row) and `it`; the sender's row is not
//! overwritten before the copy has read it, because the sender's kernel
//! `it + 2` follows its copy `it + 1`, which waited for the receiver's
//! kernel `it + 1`, which follows the receiver's copy `it`.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::baselines::{tiles_2d, Sweep, THREADS};
use crate::BoxResult;

/// One GPU's share: rows `[row0, row0 + rows)` of the interior.
struct Slab {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    step: CudaFunction,
    step_norm: CudaFunction,
    /// Padded `(rows + 2) × (n + 2)` arrays, buffer 0 and 1.
    bufs: [CudaSlice<f32>; 2],
    ptrs: [u64; 2],
    /// One f64: the squared update norm of the current check.
    norm: CudaSlice<f64>,
    norm_ptr: u64,
    done: CudaEvent,
    row0: usize,
    rows: usize,
}

/// What one run of the baseline did.
pub struct Outcome {
    /// Device-event seconds of the whole run (first launch to last copy).
    pub seconds: f64,
    /// `(iteration, ‖a_new − a‖₂)` at every check.
    pub norms: Vec<(u32, f64)>,
}

/// The CPU-driven solver on `gpus` GPUs for a 2D `n`² grid.
pub struct CpuDriven {
    n: usize,
    slabs: Vec<Slab>,
    start: CudaEvent,
    end: CudaEvent,
}

fn err(what: &str, e: impl std::fmt::Debug) -> Box<dyn std::error::Error> {
    format!("two-GPU baseline: {what}: {e:?}").into()
}

impl CpuDriven {
    /// Contexts, streams, kernels (`cubin` from `baselines::SOURCE`) and
    /// slabs initialised from the global padded array `init` ((n+2)²).
    pub fn new(gpus: usize, n: usize, cubin: &[u8], init: &[f32]) -> BoxResult<CpuDriven> {
        if gpus == 0 || n < gpus {
            return Err(
                format!("two-GPU baseline: {n} rows cannot be split over {gpus} GPUs").into(),
            );
        }
        let s = n + 2;
        let mut slabs = Vec::with_capacity(gpus);
        for g in 0..gpus {
            let ctx = CudaContext::new(g).map_err(|e| err("context", e))?;
            // SAFETY: event tracking only adds implicit events around
            // buffer uses; this module orders every use explicitly (module
            // docs) and synchronises before reading back.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.new_stream().map_err(|e| err("stream", e))?;
            let module = ctx
                .load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| err("module", e))?;
            let step = module
                .load_function("jacobi2d_step")
                .map_err(|e| err("function", e))?;
            let step_norm = module
                .load_function("jacobi2d_step_norm")
                .map_err(|e| err("function", e))?;
            let row0 = g * n / gpus;
            let rows = (g + 1) * n / gpus - row0;
            // Global padded rows row0 ..= row0 + rows + 1: the slab with its
            // two ghost rows (a neighbour's first values, or Dirichlet).
            let local = &init[row0 * s..(row0 + rows + 2) * s];
            let b0 = stream.clone_htod(local).map_err(|e| err("upload", e))?;
            let b1 = stream.clone_htod(local).map_err(|e| err("upload", e))?;
            let norm = stream.alloc_zeros::<f64>(1).map_err(|e| err("alloc", e))?;
            let ptr = |b: &CudaSlice<f32>| b.device_ptr_raw(&stream);
            let ptrs = [ptr(&b0), ptr(&b1)];
            let norm_ptr = {
                use cudarc::driver::DevicePtr;
                let (p, _sync) = norm.device_ptr(&stream);
                p
            };
            let done = ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(|e| err("event", e))?;
            slabs.push(Slab {
                ctx,
                stream,
                step,
                step_norm,
                bufs: [b0, b1],
                ptrs,
                norm,
                norm_ptr,
                done,
                row0,
                rows,
            });
        }
        // Peer access both ways between neighbours, when the GPUs allow it
        // (cuMemcpyPeerAsync works without, staged through the host).
        for g in 0..gpus.saturating_sub(1) {
            for (a, b) in [(g, g + 1), (g + 1, g)] {
                enable_peer_access(&slabs[a].ctx, &slabs[b].ctx)?;
            }
        }
        let c0 = &slabs[0].ctx;
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(CpuDriven {
            n,
            start: c0.new_event(timing).map_err(|e| err("event", e))?,
            end: c0.new_event(timing).map_err(|e| err("event", e))?,
            slabs,
        })
    }

    /// Writes the initial values back (both buffers of every slab).
    pub fn reset(&mut self, init: &[f32]) -> BoxResult<()> {
        let s = self.n + 2;
        for sl in &mut self.slabs {
            let local = &init[sl.row0 * s..(sl.row0 + sl.rows + 2) * s];
            for b in &mut sl.bufs {
                sl.stream
                    .memcpy_htod(local, b)
                    .map_err(|e| err("upload", e))?;
            }
            sl.stream.synchronize().map_err(|e| err("sync", e))?;
        }
        Ok(())
    }

    fn launch(&self, sl: &Slab, it: usize, check: bool) -> BoxResult<()> {
        let (tiles_x, tiles_y, tiles) = tiles_2d(self.n, sl.rows);
        let mut sw = Sweep {
            input: sl.ptrs[it % 2],
            output: sl.ptrs[(it + 1) % 2],
            norm: sl.norm_ptr,
            nx: self.n as u32,
            ny: sl.rows as u32,
            tiles_x,
            tiles_y,
            tiles,
            pad: 0,
        };
        let f = if check { &sl.step_norm } else { &sl.step };
        let mut params = [&mut sw as *mut Sweep as *mut c_void];
        sl.ctx.bind_to_thread().map_err(|e| err("bind", e))?;
        // SAFETY: 1. both kernels take one `Sweep` by value, which `Sweep`
        // mirrors; 2. its pointers are this slab's live buffers of
        // (rows + 2) × (n + 2) floats and its f64 norm, and the kernel
        // touches only that padded array (tiles are bounded by nx, ny);
        // 3. the buffers outlive the work: `run` synchronises every stream
        // before returning; 4. one block per tile, as the kernel expects.
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                (tiles, 1, 1),
                (THREADS, 1, 1),
                0,
                sl.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| err("launch", e))
    }

    /// Copies neighbour `o`'s boundary row of buffer `par` into slab `g`'s
    /// ghost row of the same buffer, on `g`'s stream.
    fn halo(&self, g: usize, o: usize, par: usize) -> BoxResult<()> {
        let s = self.n + 2;
        let (dst, src) = (&self.slabs[g], &self.slabs[o]);
        // o above g: o's last interior row → g's top ghost row (0);
        // o below g: o's first interior row → g's bottom ghost row.
        let (src_row, dst_row) = if o < g {
            (src.rows, 0)
        } else {
            (1, dst.rows + 1)
        };
        let bytes = s * std::mem::size_of::<f32>();
        dst.stream.wait(&src.done).map_err(|e| err("wait", e))?;
        // SAFETY: 1. both rows lie inside their padded arrays (row indices
        // 0..=rows+1, s floats each), which stay alive until `run`
        // synchronises; 2. the contexts are the ones the buffers were
        // allocated in; 3. ordering against kernels is the module docs'.
        unsafe {
            result::memcpy_peer_async(
                dst.ctx.cu_ctx(),
                dst.ptrs[par] + (dst_row * bytes) as u64,
                src.ctx.cu_ctx(),
                src.ptrs[par] + (src_row * bytes) as u64,
                bytes,
                dst.stream.cu_stream(),
            )
        }
        .map_err(|e| err("cuMemcpyPeerAsync", e))
    }

    /// Runs `iterations` sweeps from the current state, checking the norm
    /// every `check_every` iterations (and at the last; 0: never).
    pub fn run(&mut self, iterations: u32, check_every: u32) -> BoxResult<Outcome> {
        let k = iterations as usize;
        let g_count = self.slabs.len();
        let s0 = &self.slabs[0];
        self.start
            .record(&s0.stream)
            .map_err(|e| err("record", e))?;
        for sl in &self.slabs[1..] {
            sl.stream.wait(&self.start).map_err(|e| err("wait", e))?;
        }
        let mut norms = Vec::new();
        for it in 0..k {
            let check = check_every > 0 && ((it + 1) % check_every as usize == 0 || it + 1 == k);
            for sl in &self.slabs {
                self.launch(sl, it, check)?;
                sl.done.record(&sl.stream).map_err(|e| err("record", e))?;
            }
            let par = (it + 1) % 2;
            for g in 0..g_count {
                if g > 0 {
                    self.halo(g, g - 1, par)?;
                }
                if g + 1 < g_count {
                    self.halo(g, g + 1, par)?;
                }
            }
            if check {
                let mut sum = 0.0;
                for sl in &mut self.slabs {
                    sl.stream.synchronize().map_err(|e| err("sync", e))?;
                    let mut v = [0f64];
                    sl.stream
                        .memcpy_dtoh(&sl.norm, &mut v)
                        .map_err(|e| err("download", e))?;
                    sl.stream.synchronize().map_err(|e| err("sync", e))?;
                    sum += v[0];
                    sl.stream
                        .memset_zeros(&mut sl.norm)
                        .map_err(|e| err("memset", e))?;
                }
                norms.push((it as u32, sum.sqrt()));
            }
        }
        let s0 = &self.slabs[0];
        for sl in &self.slabs[1..] {
            sl.done.record(&sl.stream).map_err(|e| err("record", e))?;
            s0.stream.wait(&sl.done).map_err(|e| err("wait", e))?;
        }
        self.end.record(&s0.stream).map_err(|e| err("record", e))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(|e| err("elapsed", e))?;
        for sl in &self.slabs {
            sl.stream.synchronize().map_err(|e| err("sync", e))?;
        }
        Ok(Outcome {
            seconds: ms as f64 * 1e-3,
            norms,
        })
    }

    /// The global interior after `iterations` sweeps (row-major).
    pub fn field(&self, iterations: u32) -> BoxResult<Vec<f32>> {
        let s = self.n + 2;
        let par = iterations as usize % 2;
        let mut out = Vec::with_capacity(self.n * self.n);
        for sl in &self.slabs {
            let mut local = vec![0f32; (sl.rows + 2) * s];
            sl.stream
                .memcpy_dtoh(&sl.bufs[par], &mut local)
                .map_err(|e| err("download", e))?;
            sl.stream.synchronize().map_err(|e| err("sync", e))?;
            for r in 1..=sl.rows {
                out.extend_from_slice(&local[r * s + 1..r * s + 1 + self.n]);
            }
        }
        Ok(out)
    }
}

/// Raw device address of a buffer (event tracking is off, so no event is
/// recorded when the guard drops).
trait RawPtr {
    fn device_ptr_raw(&self, stream: &Arc<CudaStream>) -> u64;
}

impl RawPtr for CudaSlice<f32> {
    fn device_ptr_raw(&self, stream: &Arc<CudaStream>) -> u64 {
        use cudarc::driver::DevicePtr;
        let (p, _sync) = self.device_ptr(stream);
        p
    }
}

/// Lets `ctx` read and write `peer`'s memory directly, when the hardware
/// allows it (already enabled counts as done).
fn enable_peer_access(ctx: &Arc<CudaContext>, peer: &Arc<CudaContext>) -> BoxResult<()> {
    let mut can = 0i32;
    // SAFETY: both device handles come from live contexts; `can` is a
    // valid out-pointer.
    let r = unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), peer.cu_device()) };
    if r != CUresult::CUDA_SUCCESS {
        return Err(err("cuDeviceCanAccessPeer", r));
    }
    if can == 0 {
        return Ok(());
    }
    ctx.bind_to_thread().map_err(|e| err("bind", e))?;
    // SAFETY: `ctx` is current on this thread and `peer` is a live context
    // of another device; flags must be 0.
    let r = unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) };
    match r {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
        r => Err(err("cuCtxEnablePeerAccess", r)),
    }
}
