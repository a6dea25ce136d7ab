//! The baselines: what CUDA users do without a device-side scheduler —
//! an empty kernel launched per task, the same launches replayed from a
//! CUDA graph, and DESIGN.md's "atomic claim" persistent kernels — compiled
//! with NVRTC for the device at hand and timed with device events.

use std::ffi::c_void;

use autarky::runtime::driver::{Context, DeviceMem, Event, Function, GraphExec, Module, Stream};
use autarky::runtime::nvrtc::{self, Program};
use autarky::Error;

use crate::BoxResult;

/// The baselines' kernels, compiled with NVRTC for the device at hand.
const BASELINE_SOURCE: &str = r#"
// An empty kernel: the unit of work of the launch and CUDA-graph baselines.
extern "C" __global__ void empty_kernel() {}

// DESIGN.md's "atomic claim" baseline: a persistent grid in which thread 0
// of every block claims task indices from one global counter until `total`
// are claimed. Every block's final, failing claim also increments the
// counter, so it ends at total + gridDim.x. Each block writes how many it
// claimed so the host can check that exactly `total` ran.
extern "C" __global__ void claim_kernel(unsigned long long* counter,
                                        unsigned long long total,
                                        unsigned long long* claimed_per_block) {
    if (threadIdx.x != 0) return;
    unsigned long long mine = 0;
    while (atomicAdd(counter, 1ull) < total) ++mine;
    claimed_per_block[blockIdx.x] = mine;
}

// The same, but the claimed index reaches every thread of the block (as a
// block-wide task body needs): thread 0 claims, shares it through shared
// memory, and the block meets at a barrier before and after reading it.
extern "C" __global__ void claim_bcast_kernel(unsigned long long* counter,
                                              unsigned long long total,
                                              unsigned long long* claimed_per_block) {
    __shared__ unsigned long long index;
    unsigned long long mine = 0;
    for (;;) {
        if (threadIdx.x == 0) index = atomicAdd(counter, 1ull);
        __syncthreads();
        const bool done = index >= total;
        __syncthreads();
        if (done) break;
        ++mine;
    }
    if (threadIdx.x == 0) claimed_per_block[blockIdx.x] = mine;
}
"#;

/// The baselines' module, kernels, stream and events.
pub struct Baselines<'a> {
    ctx: &'a Context,
    _module: Module,
    empty: Function,
    pub claim: Function,
    pub claim_bcast: Function,
    stream: Stream,
    start: Event,
    end: Event,
}

impl<'a> Baselines<'a> {
    pub fn new(ctx: &'a Context, arch: u32) -> Result<Baselines<'a>, Error> {
        let cubin = nvrtc::compile_cubin(&Program {
            name: "dispatch_baselines.cu",
            source: BASELINE_SOURCE,
            headers: &[],
            options: vec!["--std=c++17".into()],
            arch,
        })?;
        let module = Module::load(ctx, &cubin)?;
        Ok(Baselines {
            ctx,
            empty: module.function("empty_kernel")?,
            claim: module.function("claim_kernel")?,
            claim_bcast: module.function("claim_bcast_kernel")?,
            _module: module,
            stream: Stream::new(ctx)?,
            start: Event::new(ctx)?,
            end: Event::new(ctx)?,
        })
    }

    fn launch_empty(&self) -> Result<(), Error> {
        // SAFETY: `empty_kernel` takes no parameters, so the empty parameter
        // list matches it exactly, and it touches no memory; the module that
        // owns the function lives in `self` for as long as the stream does.
        unsafe { self.empty.launch(&self.stream, 1, 32, &mut []) }
    }

    /// `n` launches of the empty kernel on `blocks` blocks each (one per
    /// tile of a stencil iteration), captured into a CUDA graph.
    pub fn capture_grid(&self, n: u32, blocks: u32) -> Result<GraphExec, Error> {
        self.stream.begin_capture()?;
        // SAFETY: as in `launch_empty`.
        let launched = (0..n)
            .try_for_each(|_| unsafe { self.empty.launch(&self.stream, blocks, 128, &mut []) });
        let exec = self.stream.end_capture();
        launched?;
        exec
    }

    /// Seconds for `n` back-to-back launches of the empty kernel.
    pub fn launches(&self, n: u32) -> Result<f64, Error> {
        self.start.record(&self.stream)?;
        for _ in 0..n {
            self.launch_empty()?;
        }
        self.end.record(&self.stream)?;
        Ok(self.start.elapsed_ms(&self.end)? as f64 * 1e-3)
    }

    /// The `n` launches captured into an instantiated CUDA graph.
    pub fn capture(&self, n: u32) -> Result<GraphExec, Error> {
        self.stream.begin_capture()?;
        let launched = (0..n).try_for_each(|_| self.launch_empty());
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

    /// Seconds for the atomic-claim kernel `f` to claim `total` indices on
    /// `grid` blocks; checks that exactly `total` were claimed.
    pub fn claim(
        &self,
        f: Function,
        bufs: &ClaimBuffers,
        grid: u32,
        threads: u32,
        total: u64,
    ) -> BoxResult<f64> {
        bufs.counter.fill_bytes(0)?;
        bufs.per_block.fill_bytes(0)?;
        // The memsets run on the legacy stream, which our non-blocking stream
        // does not wait for: finish them before the launch.
        self.ctx.synchronize()?;
        let mut counter = bufs.counter.ptr();
        let mut total_arg = total;
        let mut per_block = bufs.per_block.ptr();
        let mut params = [
            &mut counter as *mut u64 as *mut c_void,
            &mut total_arg as *mut u64 as *mut c_void,
            &mut per_block as *mut u64 as *mut c_void,
        ];
        self.start.record(&self.stream)?;
        // SAFETY: 1. both claim kernels take exactly
        // (unsigned long long*, unsigned long long, unsigned long long*), and
        // `params` points at a u64 device address, a u64 and a u64 device
        // address, in that order; 2. `counter` holds one u64 and `per_block`
        // holds `grid` u64s (checked when allocated), and both outlive the
        // kernel: `elapsed_ms` below waits for the end event, recorded after it.
        unsafe { f.launch(&self.stream, grid, threads, &mut params)? };
        self.end.record(&self.stream)?;
        let seconds = self.start.elapsed_ms(&self.end)? as f64 * 1e-3;
        let mut claimed = vec![0u64; grid as usize];
        bufs.per_block.download(&mut claimed)?;
        let sum: u64 = claimed.iter().sum();
        if sum != total {
            return Err(format!("atomic-claim baseline ran {sum} of {total} tasks").into());
        }
        Ok(seconds)
    }
}

/// The claim kernels' counter and per-block claimed counts.
pub struct ClaimBuffers {
    /// One u64.
    pub counter: DeviceMem,
    /// One u64 per block of the grid.
    pub per_block: DeviceMem,
}
