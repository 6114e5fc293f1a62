//! `fhe-gpu`: what the GPU backends share, so that CUDA and HIP differ only in glue.
//!
//! - [`source`]: the kernels, `.cu` files under `kernels/` (shared headers at the top,
//!   the bit scheme's under `kernels/tfhe/`, CKKS's under `kernels/ckks/`), assembled
//!   into [`Program`]s compiled at run time: the limb-batched ring NTT per word width,
//!   the bit scheme's kernels per parameter set, the CKKS kernels once. No prime is
//!   compiled in: kernels read primes from table entries.
//!   `kernels/compat.h` is the only place CUDA, HIP and the CPU emulator differ.
//! - [`args`]: each kernel's arguments and each table entry as a `#[repr(C)]` struct,
//!   mirrored by a C struct in `kernels/args.h`, with the layout checks every kernel
//!   compiler runs.
//! - [`driver`]: the small trait a device driver implements (compile, allocate, copy,
//!   launch, synchronize) and RAII device buffers.
//! - [`memory`]: free device memory, the bytes of each resident CKKS object per
//!   parameter set, and the pre-flight check before large uploads.
//! - [`backend`]: [`GpuBackend`], every `fhe_api` op trait written once over a driver
//!   (`backend/ring.rs`, `backend/tfhe/`, `backend/ckks/`).
//!
//! This crate is not a backend and has no registry entry: `fhe-cuda` and `fhe-hip`
//! are, each a driver plus an entry. Its kernels run in CI on the CPU emulator of
//! `fhe-gpu-emu`, byte-compared with the oracle.

pub mod args;
pub mod backend;
pub mod driver;
pub mod memory;
pub mod source;
#[cfg(feature = "testing")]
pub mod testing;

pub use args::{
    BlindRotateArgs, CStruct, DevPtr, GpuModulus, GpuNttTable, KernelArgs, KeySwitchArgs, MultiBitBlindRotateArgs,
    Residue, RingNttArgs,
};
pub use backend::tfhe::GpuPrepared;
pub use backend::variant::{GpuNttVariant, GPU_NTT_VARIANTS};
pub use backend::GpuBackend;
pub use driver::{Buffer, GpuDriver, LaunchShape, Word};
pub use memory::{ckks_footprint, CkksFootprint, DeviceMemory};
pub use source::{kernel_source, Dialect, Program};
