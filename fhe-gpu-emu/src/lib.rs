//! `fhe-gpu-emu`: the GPU kernels of `fhe-gpu`, compiled as C++ by `build.rs` and run on
//! the CPU: each block as `blockDim` threads sharing a barrier, blocks one after another.
//! It exists so CI (no GPU) runs the very kernel source CUDA and HIP compile, through
//! the very [`GpuBackend`] they use, and compares the bytes with the oracle. It is slow
//! (a thread switch per barrier) and only for tests; it is not a registry backend.
//!
//! What it cannot show: anything a real device adds (memory ordering between blocks,
//! warp scheduling, driver and compiler bugs). Those need the device checks.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::Mutex;

use fhe_api::registry::{env_text, normalise_variant, EnvVars};
use fhe_api::{BackendKind, BackendOptions, DeviceInfo, Error, Result};
use fhe_gpu::{
    kernel_source, DeviceMemory, Dialect, GpuBackend, GpuDriver, GpuNttVariant, KernelArgs, LaunchShape, Program,
};

/// A unit's launcher: kernel name, grid, block, dynamic shared bytes, then the argument
/// struct's bytes and their count (`cpp/launcher.hpp`).
type LaunchFn = unsafe extern "C" fn(*const c_char, c_uint, c_uint, c_uint, *const c_void, c_uint) -> c_int;

include!(concat!(env!("OUT_DIR"), "/units.rs"));

/// Threads per emulated block: few, so barriers stay cheap; not a power-of-two divisor
/// of N on purpose, so the kernels' strided loops are exercised with ragged tails.
const EMU_MAX_BLOCK: u32 = 12;
const EMU_WARP: u32 = 4;
/// Blocks per launch: few (one set of threads runs them one after another, a barrier
/// between blocks), and fewer than most launches want, so the kernels' grid-stride
/// loops run more than once.
const EMU_MAX_GRID: u32 = 8;

/// The emulator as a [`GpuDriver`]: host memory stands in for device memory. A memory
/// limit (none by default) simulates a small device: `memory` reports it, and an
/// allocation past it fails with `Error::OutOfMemory` as a real driver's would.
#[derive(Default)]
pub struct EmuDriver {
    memory: Mutex<EmuMemory>,
}

#[derive(Default)]
struct EmuMemory {
    allocations: HashMap<u64, Box<[u64]>>,
    /// Bytes of the live allocations.
    live: u64,
    /// Bytes of every allocation made so far, freed or not.
    allocated: u64,
    limit: Option<u64>,
}

impl EmuDriver {
    /// A driver whose simulated device holds `bytes`.
    pub fn with_memory_limit(bytes: u64) -> EmuDriver {
        let d = EmuDriver::default();
        d.set_memory_limit(Some(bytes));
        d
    }

    /// Sets (or, with `None`, lifts) the simulated device's size; allocations already
    /// made stay.
    pub fn set_memory_limit(&self, bytes: Option<u64>) {
        self.state().limit = bytes;
    }

    /// Bytes of the allocations alive now.
    pub fn live_bytes(&self) -> u64 {
        self.state().live
    }

    /// Bytes of every allocation made so far, freed or not: the difference across a call
    /// is what that call allocated.
    pub fn allocated_bytes(&self) -> u64 {
        self.state().allocated
    }

    fn state(&self) -> std::sync::MutexGuard<'_, EmuMemory> {
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A "module": the launcher of the C++ unit compiled for the program at build time.
pub struct EmuModule {
    launch: LaunchFn,
}

/// The GPU backend running on the emulator, with the NTT variant `LUX_FHE_NTT` names
/// (the default when unset), so every emulator test runs per variant as CI's matrix asks.
pub fn emulated_backend() -> Result<GpuBackend<EmuDriver>> {
    let raw = std::env::var_os(EnvVars::NTT);
    let ntt = env_text(EnvVars::NTT, raw.as_deref(), "a GPU NTT variant name, or unset")?.and_then(normalise_variant);
    GpuBackend::new(EmuDriver::default(), Dialect::HostEmu, &BackendOptions { ntt_variant: ntt, device: 0 })
}

/// The GPU backend running on the emulator with a simulated device of `bytes` (the
/// default NTT variant).
pub fn emulated_backend_with_memory(bytes: u64) -> Result<GpuBackend<EmuDriver>> {
    GpuBackend::new(EmuDriver::with_memory_limit(bytes), Dialect::HostEmu, &BackendOptions::default())
}

/// The GPU backend running on the emulator with NTT variant `variant`.
pub fn emulated_backend_with(variant: GpuNttVariant) -> Result<GpuBackend<EmuDriver>> {
    let options = BackendOptions { ntt_variant: Some(variant.name().to_string()), device: 0 };
    GpuBackend::new(EmuDriver::default(), Dialect::HostEmu, &options)
}

// SAFETY: `alloc` returns the address of a live boxed slice of at least `bytes` bytes,
// kept until `free`; launches run synchronously, so issue order holds.
unsafe impl GpuDriver for EmuDriver {
    type Module = EmuModule;

    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn label(&self) -> String {
        "gpu-emu".to_string()
    }

    fn device_info(&self) -> DeviceInfo {
        DeviceInfo { name: "CPU emulator of the fhe-gpu kernels".into(), driver: None, software: true }
    }

    fn warp_size(&self) -> u32 {
        EMU_WARP
    }

    fn max_block(&self) -> u32 {
        EMU_MAX_BLOCK
    }

    fn max_grid(&self) -> u32 {
        EMU_MAX_GRID
    }

    fn compile(&self, program: Program, source: &str) -> Result<EmuModule> {
        // The C++ was compiled from exactly this text at build time; refuse anything else.
        if source != kernel_source(program, Dialect::HostEmu) {
            return Err(Error::Device {
                backend: BackendKind::Cuda,
                detail: "the emulator runs only the kernel source it was built from".into(),
            });
        }
        let unit = Program::all().iter().position(|p| *p == program).and_then(|i| UNITS.get(i));
        let launch = unit.ok_or_else(|| Error::Device {
            backend: BackendKind::Cuda,
            detail: format!("no emulator unit for {program} (build.rs compiles one per Program::all)"),
        })?;
        Ok(EmuModule { launch: *launch })
    }

    fn alloc(&self, bytes: usize) -> Result<u64> {
        let words = bytes.div_ceil(8);
        let size = words as u64 * 8;
        let mut m = self.state();
        if let Some(limit) = m.limit.filter(|&l| m.live + size > l) {
            return Err(Error::OutOfMemory {
                what: "an emulated device allocation".into(),
                needed: size,
                available: limit.saturating_sub(m.live),
            });
        }
        let buf = vec![0u64; words].into_boxed_slice();
        let ptr = buf.as_ptr() as u64;
        m.allocations.insert(ptr, buf);
        m.live += size;
        m.allocated += size;
        Ok(ptr)
    }

    fn memory(&self) -> Option<DeviceMemory> {
        let m = self.state();
        m.limit.map(|total| DeviceMemory { free: total.saturating_sub(m.live), total })
    }

    unsafe fn free(&self, ptr: u64) {
        let mut m = self.state();
        if let Some(buf) = m.allocations.remove(&ptr) {
            m.live -= buf.len() as u64 * 8;
        }
    }

    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<()> {
        // SAFETY: the caller guarantees `dst .. dst + len` is inside a live allocation,
        // which is host memory here and cannot overlap the borrowed `src`.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<()> {
        // SAFETY: as in `upload`, in the other direction.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    unsafe fn launch<A: KernelArgs>(&self, module: &EmuModule, shape: LaunchShape, args: &A) -> Result<()> {
        let kernel = A::KERNEL;
        let f = module.launch;
        let name = CString::new(kernel).map_err(|_| Error::InvalidInput(format!("kernel name {kernel:?}")))?;
        // The emulated built-ins and shared memory are process-wide: one launch at a time.
        static LAUNCH: Mutex<()> = Mutex::new(());
        let _one_at_a_time = LAUNCH.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = args.as_bytes();
        // SAFETY: the caller guarantees the pointers in `args` are live and sized for
        // the kernel; `name` and `bytes` outlive the synchronous call, and the launcher
        // reads exactly `bytes.len()` bytes (after checking that is its struct's size).
        let rc = unsafe {
            f(name.as_ptr(), shape.grid, shape.block, shape.shared_bytes, bytes.as_ptr().cast(), bytes.len() as c_uint)
        };
        let detail = match rc {
            0 => return Ok(()),
            1 => format!("no kernel named {kernel}"),
            2 => format!("bad launch shape {shape:?}"),
            _ => format!("{kernel} takes a struct of another size than {} ({} bytes)", A::RUST_NAME, bytes.len()),
        };
        Err(Error::Device { backend: BackendKind::Cuda, detail })
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod ckks_tests;

#[cfg(test)]
mod ckks_ops_tests;

#[cfg(test)]
mod variant_tests;

#[cfg(test)]
mod multi_bit_tests;

#[cfg(test)]
mod memory_tests;
