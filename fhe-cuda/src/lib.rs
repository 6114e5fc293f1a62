//! `fhe-cuda`: the CUDA backend. The kernels are `fhe-gpu`'s one source, compiled at run
//! time by NVRTC for the device's architecture (`sm_90` on Hopper) and cached per
//! context; the backend logic is `fhe_gpu::GpuBackend`. This crate is the CUDA driver
//! glue and the registry entry.
//!
//! Nothing is linked at build time (cudarc with `dynamic-loading`): `libcuda` and
//! `libnvrtc` are opened when first probed. cudarc panics when a library is missing,
//! so [`probe`] checks both with `is_culib_present` before any other call, and every
//! driver call here runs under `catch_unwind` as well (a driver too old for a symbol
//! also panics inside cudarc): no path panics on a machine without CUDA.
//!
//! Environment: `LUX_FHE_BACKEND=cuda` requires this backend; `LUX_FHE_DEVICE` picks
//! the device ordinal (default 0).

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::{result as cu, sys};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use fhe_api::{Backend, BackendEntry, BackendKind, BackendOptions, DeviceInfo, Error, Probe, Result, Unavailable};
use fhe_gpu::{DeviceMemory, Dialect, GpuBackend, GpuDriver, KernelArgs, LaunchShape, Program};

/// The registry entry of the CUDA backend.
pub const ENTRY: BackendEntry = BackendEntry { kind: BackendKind::Cuda, probe, create };

/// The CUDA backend type.
pub type CudaBackend = GpuBackend<CudaDriver>;

/// Largest block launched: leaves the compiler up to 255 registers a thread (the blind
/// rotation's 128-bit arithmetic needs more than 64), so no launch fails for resources.
const MAX_BLOCK: u32 = 256;

fn unavailable(cause: Unavailable) -> Error {
    Error::Unavailable { backend: BackendKind::Cuda, cause }
}

fn device_error(detail: impl std::fmt::Display) -> Error {
    Error::Device { backend: BackendKind::Cuda, detail: detail.to_string() }
}

/// Runs driver code that may panic inside cudarc (missing library or symbol) and turns
/// the panic into `Unavailable`.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(unavailable(Unavailable::DriverMissing {
            library: "libcuda/libnvrtc".into(),
            detail: format!("{what}: {msg}"),
        }))
    })
}

fn libraries_present() -> std::result::Result<(), Unavailable> {
    // SAFETY: `is_culib_present` only tries to dlopen the library names; it has no
    // preconditions and no effect beyond loading them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Unavailable::DriverMissing {
            library: "libcuda.so".into(),
            detail: "the NVIDIA driver is not installed or not on the loader path".into(),
        });
    }
    nvrtc_present()
}

fn nvrtc_present() -> std::result::Result<(), Unavailable> {
    // SAFETY: only tries to dlopen the library names, as above.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Unavailable::DriverMissing {
            library: "libnvrtc.so.12".into(),
            detail: "NVRTC (CUDA 12) compiles the kernels at run time: install the CUDA toolkit's NVRTC \
                     or the PyPI wheel nvidia-cuda-nvrtc-cu12 and add its lib folder to LD_LIBRARY_PATH"
                .into(),
        });
    }
    Ok(())
}

fn device_count() -> Result<i32> {
    libraries_present().map_err(unavailable)?;
    guarded("cuInit", || {
        cu::init().map_err(|e| unavailable(Unavailable::NoDevice { detail: format!("cuInit failed: {e}") }))?;
        cu::device::get_count()
            .map_err(|e| unavailable(Unavailable::NoDevice { detail: format!("cuDeviceGetCount failed: {e}") }))
    })
}

/// Cheap and panic-free: libraries, `cuInit`, and at least one device.
pub fn probe() -> Probe {
    match device_count() {
        Ok(0) => Probe::Unavailable(Unavailable::NoDevice { detail: "the CUDA driver reports 0 devices".into() }),
        Ok(_) => Probe::Hardware,
        Err(Error::Unavailable { cause, .. }) => Probe::Unavailable(cause),
        Err(e) => Probe::Unavailable(Unavailable::NoDevice { detail: e.to_string() }),
    }
}

fn create(options: &BackendOptions) -> Result<Arc<dyn Backend>> {
    // A misspelt NTT variant is refused as such, on a machine without the device too.
    if let Some(v) = options.ntt_variant.as_deref() {
        fhe_gpu::GpuNttVariant::parse(BackendKind::Cuda, v)?;
    }
    Ok(Arc::new(CudaBackend::new(CudaDriver::open(options.device)?, Dialect::Cuda, options)?))
}

/// One device's primary context and the null stream.
pub struct CudaDriver {
    ctx: sys::CUcontext,
    dev: sys::CUdevice,
    name: String,
    arch: &'static str,
    driver_version: i32,
    warp: u32,
}

// SAFETY: a CUDA context may be used from any thread once made current there, which
// every method does first; the handle itself is an opaque pointer.
unsafe impl Send for CudaDriver {}
// SAFETY: as above; concurrent use is serialized by `GpuBackend`'s lock.
unsafe impl Sync for CudaDriver {}

/// A module and its kernel handles.
pub struct CudaModule {
    module: sys::CUmodule,
    functions: HashMap<&'static str, sys::CUfunction>,
}

// SAFETY: module and function handles are context-wide and usable from any thread with
// the context current.
unsafe impl Send for CudaModule {}
// SAFETY: as above; they are never mutated after loading.
unsafe impl Sync for CudaModule {}

impl CudaDriver {
    /// Opens device `ordinal`: retains its primary context.
    pub fn open(ordinal: usize) -> Result<CudaDriver> {
        let count = device_count()?;
        if count == 0 {
            return Err(unavailable(Unavailable::NoDevice { detail: "the CUDA driver reports 0 devices".into() }));
        }
        if ordinal >= count as usize {
            return Err(unavailable(Unavailable::NoDevice {
                detail: format!("LUX_FHE_DEVICE={ordinal}, but only {count} CUDA device(s) (ordinals 0..{count})"),
            }));
        }
        guarded("open device", || {
            let dev = cu::device::get(ordinal as i32).map_err(device_error)?;
            // SAFETY: `dev` came from `cuDeviceGet`; the context is released in Drop.
            let ctx = unsafe { cu::primary_ctx::retain(dev) }.map_err(device_error)?;
            // SAFETY: `ctx` is the live primary context just retained.
            unsafe { cu::ctx::set_current(ctx) }.map_err(device_error)?;
            let attr = |a| {
                // SAFETY: `dev` is a valid device handle.
                unsafe { cu::device::get_attribute(dev, a) }.map_err(device_error)
            };
            let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
            let warp = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32;
            let mut driver_version = 0;
            // SAFETY: writes one int.
            unsafe { sys::cuDriverGetVersion(&mut driver_version) }.result().map_err(device_error)?;
            let name = cu::device::get_name(dev).map_err(device_error)?;
            let arch = arch_name(major, minor);
            tracing::info!(%name, arch, driver_version, "CUDA device opened");
            Ok(CudaDriver { ctx, dev, name, arch, driver_version, warp })
        })
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: `ctx` stays retained for the life of `self`.
        unsafe { cu::ctx::set_current(self.ctx) }.map_err(device_error)
    }

    /// The NVRTC architecture the kernels are compiled for, e.g. `sm_90`.
    pub fn arch(&self) -> &'static str {
        self.arch
    }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        // SAFETY: balances the `retain` in `open`; every buffer holding this driver is
        // gone (they own an `Arc` of it).
        let _ = guarded("release context", || unsafe { cu::primary_ctx::release(self.dev) }.map_err(device_error));
    }
}

/// `sm_XY` for compute capability X.Y (NVRTC wants a `'static` name).
fn arch_name(major: i32, minor: i32) -> &'static str {
    match (major, minor) {
        (7, 0) => "sm_70",
        (7, 5) => "sm_75",
        (8, 0) => "sm_80",
        (8, 6) => "sm_86",
        (8, 9) => "sm_89",
        (9, 0) => "sm_90",
        (10, 0) => "sm_100",
        (12, 0) => "sm_120",
        // Once per process and device kind: a few bytes.
        _ => Box::leak(format!("sm_{major}{minor}").into_boxed_str()),
    }
}

/// Compiles `source` to PTX for `arch` with NVRTC; the log is in the error.
pub fn compile_ptx(source: &str, arch: &'static str) -> Result<String> {
    nvrtc_present().map_err(unavailable)?;
    guarded("NVRTC", || {
        let opts = CompileOptions { arch: Some(arch), options: vec!["--std=c++17".into()], ..Default::default() };
        match compile_ptx_with_opts(source, opts) {
            Ok(ptx) => Ok(ptx.to_src()),
            Err(CompileError::CompileError { log, .. }) => {
                Err(device_error(format!("NVRTC failed for {arch}:\n{}", log.to_string_lossy())))
            }
            Err(e) => Err(device_error(format!("NVRTC failed for {arch}: {e:?}"))),
        }
    })
}

// SAFETY: `alloc` returns `cuMemAlloc` memory of the requested size, valid until
// `cuMemFree`; every launch and copy goes to the legacy null stream, in issue order.
unsafe impl GpuDriver for CudaDriver {
    type Module = CudaModule;

    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn device_info(&self) -> DeviceInfo {
        let v = self.driver_version;
        DeviceInfo {
            name: format!("{} ({})", self.name, self.arch),
            driver: Some(format!("CUDA driver {}.{}", v / 1000, (v % 1000) / 10)),
            software: false,
        }
    }

    fn warp_size(&self) -> u32 {
        self.warp
    }

    fn max_block(&self) -> u32 {
        MAX_BLOCK
    }

    fn compile(&self, program: Program, source: &str) -> Result<CudaModule> {
        let ptx = compile_ptx(source, self.arch)?;
        self.bind()?;
        guarded("load module", || {
            let image = CString::new(ptx).map_err(|_| device_error("PTX holds a NUL byte"))?;
            // SAFETY: `image` is a NUL-terminated PTX text that outlives the call.
            let module = unsafe { cu::module::load_data(image.as_ptr().cast()) }.map_err(device_error)?;
            let mut functions = HashMap::new();
            for &name in program.kernels() {
                let c = CString::new(name).expect("kernel names have no NUL");
                // SAFETY: `module` was just loaded and is never unloaded while in use.
                let f = unsafe { cu::module::get_function(module, c) }
                    .map_err(|e| device_error(format!("{program}: kernel {name}: {e}")))?;
                functions.insert(name, f);
            }
            Ok(CudaModule { module, functions })
        })
    }

    fn alloc(&self, bytes: usize) -> Result<u64> {
        self.bind()?;
        // SAFETY: plain device allocation; freed by `free`.
        unsafe { cu::malloc_sync(bytes) }.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                // The need and what is left, instead of the driver's bare code (a CKKS key
                // set at N = 2^16 is gigabytes).
                let available = self.memory().map_or(0, |m| m.free);
                return Error::OutOfMemory { what: "a CUDA device allocation".into(), needed: bytes as u64, available };
            }
            device_error(format!("cuMemAlloc({bytes} bytes): {e}"))
        })
    }

    fn memory(&self) -> Option<DeviceMemory> {
        self.bind().ok()?;
        let info = guarded("cuMemGetInfo", || cu::mem_get_info().map_err(device_error));
        match info {
            Ok((free, total)) => Some(DeviceMemory { free: free as u64, total: total as u64 }),
            Err(e) => {
                tracing::warn!(error = %e, "cuMemGetInfo failed: uploads are not checked before they allocate");
                None
            }
        }
    }

    unsafe fn free(&self, ptr: u64) {
        if self.bind().is_ok() {
            // SAFETY: the caller passes a pointer from `alloc`, used no more.
            if let Err(e) = unsafe { cu::free_sync(ptr) } {
                tracing::warn!(error = %e, "cuMemFree failed");
            }
        }
    }

    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller guarantees the destination range is allocated.
        unsafe { cu::memcpy_htod_sync(dst, src) }.map_err(device_error)
    }

    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller guarantees the source range is allocated.
        unsafe { cu::memcpy_dtoh_sync(dst, src) }.map_err(device_error)
    }

    unsafe fn launch<A: KernelArgs>(&self, module: &CudaModule, shape: LaunchShape, args: &A) -> Result<()> {
        let kernel = A::KERNEL;
        self.bind()?;
        let f = *module.functions.get(kernel).ok_or_else(|| device_error(format!("no kernel {kernel}")))?;
        // The driver copies the kernel's one parameter (the C struct's bytes) through this
        // pointer during the call; the copy is ours, so the `*mut` it asks for is honest.
        let mut a = *args;
        let mut params = [(&mut a as *mut A).cast::<c_void>()];
        // SAFETY: `f` is `A::KERNEL` of a loaded module, whose one parameter is the C
        // struct `A` mirrors (the layout checks compiled into the module assert it), by
        // value; the caller guarantees the device pointers inside are live and sized.
        unsafe {
            cu::launch_kernel(
                f,
                (shape.grid, 1, 1),
                (shape.block, 1, 1),
                shape.shared_bytes,
                std::ptr::null_mut(),
                &mut params,
            )
        }
        .map_err(|e| device_error(format!("launch {kernel} {shape:?}: {e}")))
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        cu::ctx::synchronize().map_err(|e| device_error(format!("kernel failed: {e}")))
    }
}

impl Drop for CudaModule {
    fn drop(&mut self) {
        // SAFETY: nothing launches from this module after it is dropped.
        let _ = unsafe { cu::module::unload(self.module) };
    }
}

#[cfg(test)]
mod tests;
