//! The CUDA-library boundary of the baseline: cuBLAS and cuSPARSE handles,
//! a CSR matrix descriptor and an SpMV plan, each an owning type whose
//! methods return `Result`. Every raw `cudarc::{cublas,cusparse}::sys` call
//! of the bench is in this file; [`crate::baselines`] above it is safe Rust.
//!
//! Memory is autarky's [`DeviceMem`] (plain `cuMemAlloc`, no cudarc event
//! tracking), never a cudarc `CudaSlice`: a slice records events on every
//! stream that touches it, which must not meet autarky's megakernel (see
//! `autarky::runtime::driver`). The libraries are used only between
//! autarky runs (a run returns after its kernel ended), on the baseline's
//! own stream, in the process's one primary context, which autarky's
//! runtime and the libraries' CUDA runtime share.
//!
//! Callers must have run [`crate::libs::ensure`] first: with dynamic
//! loading, cudarc panics when a library is absent.

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::ptr;

use autarky::runtime::driver::{Context, DeviceMem};
use autarky::solvers::cg::Csr;
use cudarc::cublas::sys as blas;
use cudarc::cusparse::sys as sp;
use cudarc::driver::CudaStream;

/// Why a baseline call failed.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// A cuBLAS call returned an error status.
    #[error("cuBLAS {call} failed: {status}")]
    Cublas {
        /// The function.
        call: &'static str,
        /// Its status, by name.
        status: String,
    },
    /// A cuSPARSE call returned an error status.
    #[error("cuSPARSE {call} failed: {status}")]
    Cusparse {
        /// The function.
        call: &'static str,
        /// Its status, by name and description.
        status: String,
    },
    /// A CUDA driver call (stream, event, module, launch) failed.
    #[error("CUDA driver {call} failed: {code}")]
    Driver {
        /// What was being done.
        call: &'static str,
        /// The driver's result code.
        code: String,
    },
    /// autarky's driver layer (allocation, copy) or NVRTC failed.
    #[error(transparent)]
    Runtime(#[from] autarky::Error),
    /// The matrix does not fit the baseline's index types.
    #[error("the baseline cannot hold this matrix: {0}")]
    TooLarge(String),
    /// `pᵀAp` was not positive and finite: the matrix is not SPD, or the
    /// recurrence broke down (1-based iteration, as the CPU reference).
    #[error("the baseline's CG broke down at iteration {iteration}: p^T A p = {pap:e}")]
    Breakdown {
        /// 1-based iteration.
        iteration: u32,
        /// The offending value.
        pap: f64,
    },
}

/// Result of the baseline layer.
pub type Result<T> = std::result::Result<T, BaselineError>;

/// Maps a cudarc driver error (stream, event, module, launch).
pub fn driver(call: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> BaselineError {
    move |e| BaselineError::Driver {
        call,
        code: format!("{:?}", e.0),
    }
}

fn cublas_check(call: &'static str, s: blas::cublasStatus_t) -> Result<()> {
    if s == blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    Err(BaselineError::Cublas {
        call,
        status: format!("{s:?}"),
    })
}

fn cusparse_check(call: &'static str, s: sp::cusparseStatus_t) -> Result<()> {
    if s == sp::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: cusparseGetErrorString returns a pointer to a static
    // NUL-terminated string for every status (or null), and keeps nothing.
    let text = unsafe { sp::cusparseGetErrorString(s) };
    let text = if text.is_null() {
        String::new()
    } else {
        // SAFETY: non-null results are static NUL-terminated strings.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(BaselineError::Cusparse {
        call,
        status: format!("{s:?} ({text})"),
    })
}

/// A device vector of `len` f64 (an owned allocation).
pub struct Vector {
    mem: DeviceMem,
    len: usize,
}

impl Vector {
    /// `len` f64 of device memory (contents undefined).
    pub fn new(ctx: &Context, len: usize) -> Result<Vector> {
        Ok(Vector {
            mem: DeviceMem::alloc(ctx, len.max(1) * 8)?,
            len,
        })
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Device address of entry 0.
    pub fn ptr(&self) -> u64 {
        self.mem.ptr()
    }

    /// The allocation (for copies).
    pub fn mem(&self) -> &DeviceMem {
        &self.mem
    }

    /// Device address of entry `i`.
    ///
    /// # Panics
    /// If `i` is out of range (a bench bug).
    pub fn at(&self, i: usize) -> u64 {
        assert!(i < self.len, "entry {i} of a vector of {}", self.len);
        self.mem.ptr() + 8 * i as u64
    }
}

/// Where cuBLAS reads scalars and writes dot products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerMode {
    /// Host memory: a dot product returns to the host, and so blocks until
    /// the stream has computed it.
    Host,
    /// Device memory: nothing blocks.
    Device,
}

/// A cuBLAS handle bound to one stream.
pub struct Blas {
    h: blas::cublasHandle_t,
    mode: Cell<PointerMode>,
}

/// Checks that `x` and `y` have the same length and returns it as cuBLAS's int.
fn blas_len(x: &Vector, y: &Vector) -> Result<i32> {
    assert_eq!(x.len, y.len, "vectors of different lengths");
    i32::try_from(x.len).map_err(|_| BaselineError::TooLarge(format!("{} rows", x.len)))
}

impl Blas {
    /// A handle whose work goes to `stream`, in host pointer mode.
    pub fn new(stream: &CudaStream) -> Result<Blas> {
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("cuCtxSetCurrent"))?;
        let mut h = ptr::null_mut();
        // SAFETY: `h` is a valid out-pointer; the handle is destroyed once, in Drop.
        cublas_check("cublasCreate_v2", unsafe { blas::cublasCreate_v2(&mut h) })?;
        let b = Blas {
            h,
            mode: Cell::new(PointerMode::Host),
        };
        // SAFETY: the handle is live and the stream outlives it (the
        // baseline drops the handle first: field order in `LaunchCg`).
        cublas_check("cublasSetStream_v2", unsafe {
            blas::cublasSetStream_v2(b.h, stream.cu_stream() as blas::cudaStream_t)
        })?;
        b.set_mode(PointerMode::Host)?;
        Ok(b)
    }

    /// cuBLAS's version (`major * 10000 + minor * 100 + patch`).
    pub fn version(&self) -> Result<i32> {
        let mut v = 0;
        // SAFETY: live handle, valid out-pointer.
        cublas_check("cublasGetVersion_v2", unsafe {
            blas::cublasGetVersion_v2(self.h, &mut v)
        })?;
        Ok(v)
    }

    /// Sets the pointer mode of the following calls.
    pub fn set_mode(&self, m: PointerMode) -> Result<()> {
        let mode = match m {
            PointerMode::Host => blas::cublasPointerMode_t::CUBLAS_POINTER_MODE_HOST,
            PointerMode::Device => blas::cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE,
        };
        // SAFETY: live handle.
        cublas_check("cublasSetPointerMode_v2", unsafe {
            blas::cublasSetPointerMode_v2(self.h, mode)
        })?;
        self.mode.set(m);
        Ok(())
    }

    fn want(&self, m: PointerMode) {
        assert_eq!(self.mode.get(), m, "cuBLAS call in the wrong pointer mode");
    }

    /// `xᵀy`, returned to the host (blocks until computed).
    ///
    /// # Panics
    /// Outside host pointer mode, or for vectors of different lengths.
    pub fn dot_host(&self, x: &Vector, y: &Vector) -> Result<f64> {
        self.want(PointerMode::Host);
        let n = blas_len(x, y)?;
        let mut out = 0.0f64;
        // SAFETY: 1. x and y are live device vectors of n f64 each; 2. in
        // host pointer mode the result goes to `out`, a live f64 on this
        // stack frame, and the call returns only once it is written.
        cublas_check("cublasDdot_v2", unsafe {
            blas::cublasDdot_v2(
                self.h,
                n,
                x.ptr() as *const f64,
                1,
                y.ptr() as *const f64,
                1,
                &mut out,
            )
        })?;
        Ok(out)
    }

    /// `xᵀy` into device scalar `out` (entry of a live vector), asynchronously.
    ///
    /// # Panics
    /// Outside device pointer mode, or for vectors of different lengths.
    pub fn dot_device(&self, x: &Vector, y: &Vector, out: (&Vector, usize)) -> Result<()> {
        self.want(PointerMode::Device);
        let n = blas_len(x, y)?;
        let dst = out.0.at(out.1);
        // SAFETY: 1. x, y are live device vectors of n f64; 2. `dst` is an
        // entry of a live device vector (`at` checks the index), which the
        // baseline keeps until its stream has finished (it synchronizes
        // before returning from a run).
        cublas_check("cublasDdot_v2", unsafe {
            blas::cublasDdot_v2(
                self.h,
                n,
                x.ptr() as *const f64,
                1,
                y.ptr() as *const f64,
                1,
                dst as *mut f64,
            )
        })
    }

    /// `y += alpha·x` with `alpha` from the host.
    ///
    /// # Panics
    /// Outside host pointer mode, or for vectors of different lengths.
    pub fn axpy_host(&self, alpha: f64, x: &Vector, y: &Vector) -> Result<()> {
        self.want(PointerMode::Host);
        let n = blas_len(x, y)?;
        // SAFETY: live vectors of n f64; in host mode `alpha` is read
        // before the call returns.
        cublas_check("cublasDaxpy_v2", unsafe {
            blas::cublasDaxpy_v2(
                self.h,
                n,
                &alpha,
                x.ptr() as *const f64,
                1,
                y.ptr() as *mut f64,
                1,
            )
        })
    }

    /// `y += alpha·x` with `alpha` a device scalar.
    ///
    /// # Panics
    /// Outside device pointer mode, or for vectors of different lengths.
    pub fn axpy_device(&self, alpha: (&Vector, usize), x: &Vector, y: &Vector) -> Result<()> {
        self.want(PointerMode::Device);
        let n = blas_len(x, y)?;
        let a = alpha.0.at(alpha.1);
        // SAFETY: live vectors of n f64; `a` is an entry of a live device
        // vector kept until the stream has finished.
        cublas_check("cublasDaxpy_v2", unsafe {
            blas::cublasDaxpy_v2(
                self.h,
                n,
                a as *const f64,
                x.ptr() as *const f64,
                1,
                y.ptr() as *mut f64,
                1,
            )
        })
    }

    /// `x *= alpha` with `alpha` from the host.
    ///
    /// # Panics
    /// Outside host pointer mode.
    pub fn scal_host(&self, alpha: f64, x: &Vector) -> Result<()> {
        self.want(PointerMode::Host);
        let n = blas_len(x, x)?;
        // SAFETY: a live vector of n f64; `alpha` is read before returning.
        cublas_check("cublasDscal_v2", unsafe {
            blas::cublasDscal_v2(self.h, n, &alpha, x.ptr() as *mut f64, 1)
        })
    }

    /// `x *= alpha` with `alpha` a device scalar.
    ///
    /// # Panics
    /// Outside device pointer mode.
    pub fn scal_device(&self, alpha: (&Vector, usize), x: &Vector) -> Result<()> {
        self.want(PointerMode::Device);
        let n = blas_len(x, x)?;
        let a = alpha.0.at(alpha.1);
        // SAFETY: a live vector of n f64; `a` an entry of a live device
        // vector kept until the stream has finished.
        cublas_check("cublasDscal_v2", unsafe {
            blas::cublasDscal_v2(self.h, n, a as *const f64, x.ptr() as *mut f64, 1)
        })
    }

    /// `y = x` (either pointer mode).
    pub fn copy(&self, x: &Vector, y: &Vector) -> Result<()> {
        let n = blas_len(x, y)?;
        // SAFETY: live vectors of n f64.
        cublas_check("cublasDcopy_v2", unsafe {
            blas::cublasDcopy_v2(self.h, n, x.ptr() as *const f64, 1, y.ptr() as *mut f64, 1)
        })
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here.
        let _ = unsafe { blas::cublasDestroy_v2(self.h) };
    }
}

/// A cuSPARSE handle bound to one stream (host pointer mode: SpMV's
/// constant α = 1, β = 0 are read when the call is made, nothing blocks).
pub struct Sparse {
    h: sp::cusparseHandle_t,
}

impl Sparse {
    /// A handle whose work goes to `stream`.
    pub fn new(stream: &CudaStream) -> Result<Sparse> {
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("cuCtxSetCurrent"))?;
        let mut h = ptr::null_mut();
        // SAFETY: valid out-pointer; destroyed once, in Drop.
        cusparse_check("cusparseCreate", unsafe { sp::cusparseCreate(&mut h) })?;
        let s = Sparse { h };
        // SAFETY: live handle; the stream outlives it (field order in `LaunchCg`).
        cusparse_check("cusparseSetStream", unsafe {
            sp::cusparseSetStream(s.h, stream.cu_stream() as sp::cudaStream_t)
        })?;
        Ok(s)
    }

    /// cuSPARSE's version (`major * 1000 + minor * 100 + patch`).
    pub fn version(&self) -> Result<i32> {
        let mut v = 0;
        // SAFETY: live handle, valid out-pointer.
        cusparse_check("cusparseGetVersion", unsafe {
            sp::cusparseGetVersion(self.h, &mut v)
        })?;
        Ok(v)
    }
}

impl Drop for Sparse {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here.
        let _ = unsafe { sp::cusparseDestroy(self.h) };
    }
}

/// A square CSR matrix on the device (32-bit indices when they fit, else
/// 64-bit) and its cuSPARSE descriptor.
pub struct CsrMatrix {
    desc: sp::cusparseSpMatDescr_t,
    /// Rows (= columns).
    pub n: usize,
    /// Whether the indices are 64-bit.
    pub wide: bool,
    // Kept alive for the descriptor, which points into them.
    _row_ptr: DeviceMem,
    _col: DeviceMem,
    _val: DeviceMem,
}

impl CsrMatrix {
    /// Uploads `a` (square) and describes it to cuSPARSE.
    pub fn new(ctx: &Context, a: &Csr<f64>) -> Result<CsrMatrix> {
        let (n, nnz) = (a.n_rows(), a.nnz());
        if !a.is_square() {
            return Err(BaselineError::TooLarge(format!(
                "{n} × {} is not square",
                a.n_cols()
            )));
        }
        let wide = nnz > i32::MAX as usize || n > i32::MAX as usize;
        let (row_ptr, col, itype) = if wide {
            let rp: Vec<i64> = a.row_ptr().iter().map(|&v| v as i64).collect();
            let c: Vec<i64> = a.col_idx().iter().map(|&v| v as i64).collect();
            (
                DeviceMem::from_slice(ctx, &rp)?,
                DeviceMem::from_slice(ctx, &c)?,
                sp::cusparseIndexType_t::CUSPARSE_INDEX_64I,
            )
        } else {
            let rp: Vec<i32> = a.row_ptr().iter().map(|&v| v as i32).collect();
            let c: Vec<i32> = a.col_idx().iter().map(|&v| v as i32).collect();
            (
                DeviceMem::from_slice(ctx, &rp)?,
                DeviceMem::from_slice(ctx, &c)?,
                sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
            )
        };
        let val = DeviceMem::from_slice(ctx, a.values())?;
        let mut desc = ptr::null_mut();
        // SAFETY: 1. `desc` is a valid out-pointer; 2. the three arrays are
        // live device allocations of n + 1 offsets, nnz indices (both of
        // `itype`) and nnz f64, zero-based; they live as long as the
        // descriptor (same struct; Drop destroys the descriptor, then the
        // fields are freed).
        cusparse_check("cusparseCreateCsr", unsafe {
            sp::cusparseCreateCsr(
                &mut desc,
                n as i64,
                n as i64,
                nnz as i64,
                row_ptr.ptr() as *mut c_void,
                col.ptr() as *mut c_void,
                val.ptr() as *mut c_void,
                itype,
                itype,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sp::cudaDataType::CUDA_R_64F,
            )
        })?;
        Ok(CsrMatrix {
            desc,
            n,
            wide,
            _row_ptr: row_ptr,
            _col: col,
            _val: val,
        })
    }
}

impl Drop for CsrMatrix {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here, before the arrays.
        let _ = unsafe { sp::cusparseDestroySpMat(self.desc) };
    }
}

/// A dense-vector descriptor over a [`Vector`].
struct DnVec(sp::cusparseDnVecDescr_t);

impl DnVec {
    /// # Safety
    /// `v` must outlive the descriptor.
    unsafe fn new(v: &Vector) -> Result<DnVec> {
        let mut d = ptr::null_mut();
        // SAFETY: valid out-pointer; `v` is a live device vector of
        // `v.len()` f64 (the caller keeps it alive).
        cusparse_check("cusparseCreateDnVec", unsafe {
            sp::cusparseCreateDnVec(
                &mut d,
                v.len() as i64,
                v.ptr() as *mut c_void,
                sp::cudaDataType::CUDA_R_64F,
            )
        })?;
        Ok(DnVec(d))
    }
}

impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once here.
        let _ = unsafe { sp::cusparseDestroyDnVec(self.0) };
    }
}

/// `y = A x` for fixed `A`, `x`, `y`: descriptors and the work buffer,
/// sized (and the matrix preprocessed) once.
pub struct Spmv {
    /// The matrix planned for (`run` checks it gets the same one).
    mat: sp::cusparseSpMatDescr_t,
    x: DnVec,
    y: DnVec,
    buffer: DeviceMem,
    /// Whether `cusparseSpMV_preprocess` succeeded (it is an optional
    /// speed-up; a failure is reported, not fatal).
    pub preprocessed: Result<()>,
}

const ALG: sp::cusparseSpMVAlg_t = sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
const OP: sp::cusparseOperation_t = sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
const ONE: f64 = 1.0;
const ZERO: f64 = 0.0;

impl Spmv {
    /// Plans `y = A x`.
    ///
    /// # Safety
    /// `a`, `x` and `y` must outlive the plan (the descriptors point into
    /// them), and `x`, `y` must have `a.n` entries.
    pub unsafe fn new(
        ctx: &Context,
        h: &Sparse,
        a: &CsrMatrix,
        x: &Vector,
        y: &Vector,
    ) -> Result<Spmv> {
        assert!(
            x.len() == a.n && y.len() == a.n,
            "SpMV vectors of the wrong length"
        );
        // SAFETY: the caller keeps x and y alive.
        let (dx, dy) = unsafe { (DnVec::new(x)?, DnVec::new(y)?) };
        let mut bytes = 0usize;
        // SAFETY: live handle and descriptors; α, β are host f64 (host
        // pointer mode); `bytes` is a valid out-pointer.
        cusparse_check("cusparseSpMV_bufferSize", unsafe {
            sp::cusparseSpMV_bufferSize(
                h.h,
                OP,
                &ONE as *const f64 as *const c_void,
                a.desc,
                dx.0,
                &ZERO as *const f64 as *const c_void,
                dy.0,
                sp::cudaDataType::CUDA_R_64F,
                ALG,
                &mut bytes,
            )
        })?;
        let buffer = DeviceMem::alloc(ctx, bytes.max(16))?;
        // SAFETY: as above, and `buffer` holds the `bytes` asked for; it
        // lives in the plan, as long as the plan is used.
        let preprocessed = cusparse_check("cusparseSpMV_preprocess", unsafe {
            sp::cusparseSpMV_preprocess(
                h.h,
                OP,
                &ONE as *const f64 as *const c_void,
                a.desc,
                dx.0,
                &ZERO as *const f64 as *const c_void,
                dy.0,
                sp::cudaDataType::CUDA_R_64F,
                ALG,
                buffer.ptr() as *mut c_void,
            )
        });
        Ok(Spmv {
            mat: a.desc,
            x: dx,
            y: dy,
            buffer,
            preprocessed,
        })
    }

    /// Enqueues `y = A x` on the handle's stream.
    ///
    /// # Panics
    /// If `a` is not the matrix the plan was made for (a bench bug).
    pub fn run(&self, h: &Sparse, a: &CsrMatrix) -> Result<()> {
        assert!(
            ptr::eq(self.mat, a.desc),
            "SpMV plan used with another matrix"
        );
        // SAFETY: live handle, matrix and descriptors (the plan's contract
        // keeps their memory alive); the buffer is the one sized for this
        // plan; α, β are host constants read during the call.
        cusparse_check("cusparseSpMV", unsafe {
            sp::cusparseSpMV(
                h.h,
                OP,
                &ONE as *const f64 as *const c_void,
                a.desc,
                self.x.0,
                &ZERO as *const f64 as *const c_void,
                self.y.0,
                sp::cudaDataType::CUDA_R_64F,
                ALG,
                self.buffer.ptr() as *mut c_void,
            )
        })
    }
}
