//! The launch-based CG baseline: what a CUDA user writes with the vendor
//! libraries — standard (Hestenes–Stiefel) CG without preconditioner, f64,
//! on one stream, one library call per vector operation, the sequence of
//! NVIDIA's `conjugateGradient` CUDA sample. Iteration `n`:
//!
//! ```text
//! q = A p                 cusparseSpMV (generic API, CSR, buffer sized once)
//! pAp = pᵀq               cublasDdot
//! α = ρ / pAp
//! x += α p                cublasDaxpy
//! r −= α q                cublasDaxpy
//! ρ' = rᵀr                cublasDdot
//! β = ρ' / ρ;  ρ = ρ'
//! p = r + β p             cublasDscal + cublasDaxpy
//! ```
//!
//! from `x₀ = 0`, `r₀ = p₀ = b`, `ρ₀ = r₀ᵀr₀` — autarky's Standard
//! iteration (`autarky::solvers::cg::graph`), so after `k` iterations both
//! hold the same recursive residual `√ρ_k / ‖b‖` up to rounding.
//!
//! Two variants:
//!
//! * [`PointerMode::Host`] (`cusparse+cublas host-sync`): cuBLAS host
//!   pointer mode; α and β are computed on the CPU, so each of the two dot
//!   products per iteration blocks the CPU until the stream has produced
//!   it — the realistic CPU-driven CG.
//! * [`PointerMode::Device`] (`cusparse+cublas dev-ptr`): cuBLAS device
//!   pointer mode; dot products land in device memory, α and β are
//!   computed by two one-thread kernels (`baselines.cu`), and the host
//!   enqueues all `k` iterations without waiting: only launch costs remain.
//!
//! Timing: device events on the stream around the `k` iterations; the
//! reset (`x = 0`, `r = p = b`) and the first `ρ` come before the start
//! event, like autarky's host-side initial state.

use std::sync::Arc;

use autarky::runtime::driver::Context;
use autarky::solvers::cg::Csr;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    result, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;

pub use crate::vendor::PointerMode;
use crate::vendor::{driver, BaselineError, Blas, CsrMatrix, Result, Sparse, Spmv, Vector};

/// The scalar kernels' CUDA source (compiled with NVRTC, no toolkit headers).
pub const SOURCE: &str = include_str!("baselines.cu");

/// Entries of the device scalar vector (mirrored by `#define`s in
/// `baselines.cu`).
pub mod slot {
    /// ρ = rᵀr of the current iteration.
    pub const RHO: usize = 0;
    /// ρ' of the next.
    pub const RHO_NEW: usize = 1;
    /// pᵀAp.
    pub const PAP: usize = 2;
    /// α.
    pub const ALPHA: usize = 3;
    /// −α.
    pub const NEG_ALPHA: usize = 4;
    /// β.
    pub const BETA: usize = 5;
    /// The constant 1 (cuBLAS's α of `p += r` in device mode).
    pub const ONE: usize = 6;
    /// 1-based iteration of the first breakdown; 0 when none.
    pub const FAIL_ITER: usize = 7;
    /// The `pᵀAp` of that breakdown.
    pub const FAIL_VALUE: usize = 8;
    /// Length of the vector.
    pub const LEN: usize = 16;
}

/// One run of the baseline.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Device-event seconds of the `k` iterations.
    pub seconds: f64,
    /// `√ρ_k / ‖b‖`: the recursive relative residual after them.
    pub rel_residual: f64,
}

/// The baseline's state for one matrix: handles, the matrix, the vectors,
/// the scalar kernels, a stream and two timing events.
///
/// Fields drop in declaration order: the SpMV plan and the library
/// handles go before the matrix, vectors and stream they refer to.
pub struct LaunchCg {
    spmv: Spmv,
    blas: Blas,
    sparse: Sparse,
    alpha_fn: CudaFunction,
    beta_fn: CudaFunction,
    _module: Arc<CudaModule>,
    a: CsrMatrix,
    b: Vector,
    x: Vector,
    r: Vector,
    p: Vector,
    q: Vector,
    s: Vector,
    start: CudaEvent,
    end: CudaEvent,
    stream: Arc<CudaStream>,
    cuda: Arc<CudaContext>,
    b_norm: f64,
    /// `(cuBLAS, cuSPARSE)` versions as the libraries report them.
    pub versions: (i32, i32),
}

impl LaunchCg {
    /// Sets the baseline up for `a` with `b = 1` on device `ordinal`, whose
    /// primary context `ctx` (autarky's) is; `cubin` is [`SOURCE`] compiled
    /// for the device.
    pub fn new(ctx: &Context, ordinal: usize, a: &Csr<f64>, cubin: &[u8]) -> Result<LaunchCg> {
        // cudarc's context object for the same primary context: used for
        // the stream, the events and the scalar kernels, never for memory.
        let cuda = CudaContext::new(ordinal).map_err(driver("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: the bench creates no `CudaSlice` in this context (memory
        // is autarky's `DeviceMem`), so there is nothing for cudarc's event
        // tracking to order; turning it off also keeps `new_stream` from
        // synchronizing the whole context.
        unsafe { cuda.disable_event_tracking() };
        let stream = cuda.new_stream().map_err(driver("cuStreamCreate"))?;
        let blas = Blas::new(&stream)?;
        let sparse = Sparse::new(&stream)?;
        let versions = (blas.version()?, sparse.version()?);
        let n = a.n_rows();
        let m = CsrMatrix::new(ctx, a)?;
        let ones = vec![1.0f64; n];
        let b = Vector::new(ctx, n)?;
        b.mem().upload(&ones)?;
        let (x, r, p, q) = (
            Vector::new(ctx, n)?,
            Vector::new(ctx, n)?,
            Vector::new(ctx, n)?,
            Vector::new(ctx, n)?,
        );
        let s = Vector::new(ctx, slot::LEN)?;
        // The uploads above are synchronous copies on the legacy stream,
        // which the non-blocking baseline stream does not wait for: finish
        // them before any work is enqueued there.
        ctx.synchronize()?;
        // SAFETY: `m`, `p` and `q` move into the returned `LaunchCg`
        // together with the plan and are dropped after it (field order);
        // moving them does not move their device memory, which is what
        // the descriptors point at; p and q have n entries.
        let spmv = unsafe { Spmv::new(ctx, &sparse, &m, &p, &q)? };
        let module = cuda
            .load_module(Ptx::from_binary(cubin.to_vec()))
            .map_err(driver("cuModuleLoadData"))?;
        let alpha_fn = module
            .load_function("cg_alpha")
            .map_err(driver("cuModuleGetFunction(cg_alpha)"))?;
        let beta_fn = module
            .load_function("cg_beta")
            .map_err(driver("cuModuleGetFunction(cg_beta)"))?;
        let event = || cuda.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        let start = event().map_err(driver("cuEventCreate"))?;
        let end = event().map_err(driver("cuEventCreate"))?;
        Ok(LaunchCg {
            spmv,
            blas,
            sparse,
            alpha_fn,
            beta_fn,
            _module: module,
            a: m,
            b,
            x,
            r,
            p,
            q,
            s,
            start,
            end,
            stream,
            cuda,
            b_norm: (n as f64).sqrt(),
            versions,
        })
    }

    /// Whether cuSPARSE's optional SpMV preprocessing was done (else why not).
    pub fn preprocessed(&self) -> std::result::Result<(), String> {
        self.spmv
            .preprocessed
            .as_ref()
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Whether the matrix went to cuSPARSE with 64-bit indices.
    pub fn wide_indices(&self) -> bool {
        self.a.wide
    }

    /// `x = 0`, `r = p = b` on the stream; in device mode also the scalars.
    fn reset(&self, mode: PointerMode) -> Result<()> {
        if mode == PointerMode::Device {
            let mut init = [0.0f64; slot::LEN];
            init[slot::ONE] = 1.0;
            // Synchronous, on the legacy stream: wait for it (below) before
            // the baseline stream reads the scalars.
            self.s.mem().upload(&init)?;
            self.cuda
                .synchronize()
                .map_err(driver("cuCtxSynchronize"))?;
        }
        // SAFETY: the range is exactly `x`'s allocation (n f64), alive
        // until the stream is done (every run waits for its end event).
        unsafe {
            result::memset_d8_async(self.x.ptr(), 0, self.x.len() * 8, self.stream.cu_stream())
        }
        .map_err(driver("cuMemsetD8Async"))?;
        self.blas.copy(&self.b, &self.r)?;
        self.blas.copy(&self.b, &self.p)
    }

    /// Runs `k` iterations from the initial state in `mode`, timed.
    pub fn run(&self, mode: PointerMode, k: u32) -> Result<Outcome> {
        self.cuda
            .bind_to_thread()
            .map_err(driver("cuCtxSetCurrent"))?;
        self.blas.set_mode(mode)?;
        self.reset(mode)?;
        let rho = match mode {
            PointerMode::Host => self.run_host(k)?,
            PointerMode::Device => self.run_device(k)?,
        };
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(driver("cuEventElapsedTime"))?;
        Ok(Outcome {
            seconds: ms as f64 * 1e-3,
            rel_residual: rho.max(0.0).sqrt() / self.b_norm,
        })
    }

    /// The host-sync iterations; returns the last ρ.
    fn run_host(&self, k: u32) -> Result<f64> {
        let (b, x, r, p, q) = (&self.blas, &self.x, &self.r, &self.p, &self.q);
        let mut rho = b.dot_host(r, r)?;
        self.start
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        for it in 0..k {
            self.spmv.run(&self.sparse, &self.a)?;
            let pap = b.dot_host(p, q)?;
            if !(pap > 0.0 && pap.is_finite()) {
                // Leave the stream idle before reporting (the events are
                // not waited for on this path).
                self.stream
                    .synchronize()
                    .map_err(driver("cuStreamSynchronize"))?;
                return Err(BaselineError::Breakdown {
                    iteration: it + 1,
                    pap,
                });
            }
            let alpha = rho / pap;
            b.axpy_host(alpha, p, x)?;
            b.axpy_host(-alpha, q, r)?;
            let rho_new = b.dot_host(r, r)?;
            let beta = rho_new / rho;
            rho = rho_new;
            b.scal_host(beta, p)?;
            b.axpy_host(1.0, r, p)?;
        }
        self.end
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        Ok(rho)
    }

    fn launch_scalar(&self, f: &CudaFunction, iteration: Option<u32>) -> Result<()> {
        let s = self.s.ptr();
        let mut l = self.stream.launch_builder(f);
        l.arg(&s);
        if let Some(it) = &iteration {
            l.arg(it);
        }
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: 1. `cg_alpha(double*, unsigned)` and `cg_beta(double*)`
        // get exactly those arguments (a u64 device address, a u32);
        // 2. the address is `s`, a live vector of `slot::LEN` f64 of which
        // the kernels touch slots 0..=8, kept alive until the stream has
        // finished (every run waits for its end event).
        unsafe { l.launch(one) }
            .map(|_| ())
            .map_err(driver("cuLaunchKernel"))
    }

    /// The device-pointer iterations; returns the last ρ (read back after
    /// the end event).
    fn run_device(&self, k: u32) -> Result<f64> {
        let (b, x, r, p, q, s) = (&self.blas, &self.x, &self.r, &self.p, &self.q, &self.s);
        b.dot_device(r, r, (s, slot::RHO))?;
        self.start
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        for it in 0..k {
            self.spmv.run(&self.sparse, &self.a)?;
            b.dot_device(p, q, (s, slot::PAP))?;
            self.launch_scalar(&self.alpha_fn, Some(it))?;
            b.axpy_device((s, slot::ALPHA), p, x)?;
            b.axpy_device((s, slot::NEG_ALPHA), q, r)?;
            b.dot_device(r, r, (s, slot::RHO_NEW))?;
            self.launch_scalar(&self.beta_fn, None)?;
            b.scal_device((s, slot::BETA), p)?;
            b.axpy_device((s, slot::ONE), r, p)?;
        }
        self.end
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        self.stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))?;
        let mut out = [0.0f64; slot::LEN];
        self.s.mem().download(&mut out)?;
        if out[slot::FAIL_ITER] != 0.0 {
            return Err(BaselineError::Breakdown {
                iteration: out[slot::FAIL_ITER] as u32,
                pap: out[slot::FAIL_VALUE],
            });
        }
        Ok(out[slot::RHO])
    }

    /// The current iterate `x` (after the stream has finished).
    pub fn solution(&self) -> Result<Vec<f64>> {
        self.stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))?;
        let mut x = vec![0.0; self.x.len()];
        self.x.mem().download(&mut x)?;
        Ok(x)
    }
}
