//! The CUDA side of autarky: loading the driver and NVRTC, compiling the
//! megakernel and caching what was compiled.

pub mod cache;
pub mod libs;
pub mod nvrtc;
pub mod source;
