//! `fhe-gpu`: what the GPU backends share, so that CUDA and HIP differ only in glue.
//!
//! - [`source`]: the kernels, one `.cu` source under `kernels/` (NTT, blind rotation
//!   with the external products and extraction, key switching), compiled per parameter
//!   set at run time; `kernels/compat.h` is the only place CUDA, HIP and the CPU
//!   emulator differ.
//! - [`args`]: each kernel's arguments as a `#[repr(C)]` struct, mirrored by a C struct
//!   in `kernels/args.h`, with the layout checks every kernel compiler runs.
//! - [`driver`]: the small trait a device driver implements (compile, allocate, copy,
//!   launch, synchronize) and RAII device buffers.
//! - [`backend`]: [`GpuBackend`], every `fhe_api` op trait written once over a driver.
//!
//! This crate is not a backend and has no registry entry: `fhe-cuda` and `fhe-hip`
//! are, each a driver plus an entry. Its kernels run in CI on the CPU emulator of
//! `fhe-gpu-emu`, byte-compared with the oracle.

pub mod args;
pub mod backend;
pub mod driver;
pub mod source;

pub use args::{BlindRotateArgs, DevPtr, KernelArgs, KeySwitchArgs, NttArgs, Residue};
pub use backend::{GpuBackend, GpuPrepared, GPU_NTT_VARIANT};
pub use driver::{Buffer, GpuDriver, LaunchShape, Word};
pub use source::{kernel_source, Dialect, KERNELS};
