//! `fhe-hip`: the HIP backend for AMD GPUs (MI300X, CDNA 3). The kernels are `fhe-gpu`'s
//! one CUDA source, compiled at run time by hiprtc through `kernels/compat.h` (no second
//! copy of kernel logic); the backend logic is `fhe_gpu::GpuBackend`. This crate is the
//! HIP runtime glue and the registry entry.
//!
//! The runtime (`libamdhip64.so`, `.so.7`, `.so.6`) and hiprtc (`libhiprtc.so`, ...) are
//! opened with `libloading`, declaring only the functions used ([`ffi`]); each missing
//! library or symbol is `Error::Unavailable` with its cause, so this crate builds and its
//! tests pass on a machine with no ROCm. The `hip-sys` crate was tried and does not
//! serve: it needs the ROCm headers at build time and links `-lamdhip64`, so a binary
//! with it cannot build everywhere and fail fast at run time.
//!
//! Wavefronts are 64 wide on CDNA: block sizes are multiples of 64, and the kernels use
//! only block-wide barriers, never a warp width. hiprtc compiles for the current device's
//! architecture; `LUX_FHE_HIP_ARCH=gfx942` forces one (`--offload-arch`).

pub mod ffi;

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, OnceLock};

use fhe_api::{Backend, BackendEntry, BackendKind, BackendOptions, DeviceInfo, Error, Probe, Result, Unavailable};
use fhe_gpu::{DeviceMemory, Dialect, GpuBackend, GpuDriver, KernelArgs, LaunchShape, Program};

use crate::ffi::{Handle, Hip, Hiprtc, HIP_ERROR_OUT_OF_MEMORY, HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE};

/// The registry entry of the HIP backend.
pub const ENTRY: BackendEntry = BackendEntry { kind: BackendKind::Hip, probe, create };

/// The HIP backend type.
pub type HipBackend = GpuBackend<HipDriver>;

/// CDNA wavefront width.
const WAVEFRONT: u32 = 64;
/// Largest block launched (a multiple of the wavefront), as for CUDA: room for registers.
const MAX_BLOCK: u32 = 256;

fn unavailable(cause: Unavailable) -> Error {
    Error::Unavailable { backend: BackendKind::Hip, cause }
}

fn device_error(detail: impl std::fmt::Display) -> Error {
    Error::Device { backend: BackendKind::Hip, detail: detail.to_string() }
}

/// The runtime, loaded once per process.
fn runtime() -> std::result::Result<&'static Hip, Unavailable> {
    static HIP: OnceLock<std::result::Result<Hip, Unavailable>> = OnceLock::new();
    HIP.get_or_init(Hip::load).as_ref().map_err(Clone::clone)
}

/// hiprtc, loaded once per process.
pub fn compiler() -> std::result::Result<&'static Hiprtc, Unavailable> {
    static RTC: OnceLock<std::result::Result<Hiprtc, Unavailable>> = OnceLock::new();
    RTC.get_or_init(Hiprtc::load).as_ref().map_err(Clone::clone)
}

fn device_count() -> std::result::Result<i32, Unavailable> {
    let hip = runtime()?;
    compiler()?;
    // SAFETY: hipInit takes flags 0; hipGetDeviceCount writes one int.
    hip.check("hipInit", unsafe { (hip.init)(0) }).map_err(|detail| Unavailable::NoDevice { detail })?;
    let mut count = 0;
    // SAFETY: as above.
    hip.check("hipGetDeviceCount", unsafe { (hip.get_device_count)(&mut count) })
        .map_err(|detail| Unavailable::NoDevice { detail })?;
    Ok(count)
}

/// Cheap and panic-free: both libraries, `hipInit`, at least one device.
pub fn probe() -> Probe {
    match device_count() {
        Ok(0) => Probe::Unavailable(Unavailable::NoDevice { detail: "the HIP runtime reports 0 devices".into() }),
        Ok(_) => Probe::Hardware,
        Err(cause) => Probe::Unavailable(cause),
    }
}

fn create(options: &BackendOptions) -> Result<Arc<dyn Backend>> {
    // A misspelt NTT variant is refused as such, on a machine without the device too.
    if let Some(v) = options.ntt_variant.as_deref() {
        fhe_gpu::GpuNttVariant::parse(BackendKind::Hip, v)?;
    }
    Ok(Arc::new(HipBackend::new(HipDriver::open(options.device)?, Dialect::Hip, options)?))
}

/// One HIP device, the null stream.
pub struct HipDriver {
    hip: &'static Hip,
    rtc: &'static Hiprtc,
    ordinal: i32,
    name: String,
    driver_version: i32,
}

/// A loaded code object and its kernel handles.
pub struct HipModule {
    hip: &'static Hip,
    module: Handle,
    functions: HashMap<&'static str, Handle>,
}

// SAFETY: HIP module and function handles are process-wide and usable from any thread.
unsafe impl Send for HipModule {}
// SAFETY: as above; never mutated after loading.
unsafe impl Sync for HipModule {}

impl Drop for HipModule {
    fn drop(&mut self) {
        // SAFETY: nothing launches from this module after it is dropped.
        let _ = unsafe { (self.hip.module_unload)(self.module) };
    }
}

impl HipDriver {
    pub fn open(ordinal: usize) -> Result<HipDriver> {
        let count = device_count().map_err(unavailable)?;
        if count == 0 {
            return Err(unavailable(Unavailable::NoDevice { detail: "the HIP runtime reports 0 devices".into() }));
        }
        if ordinal >= count as usize {
            return Err(unavailable(Unavailable::NoDevice {
                detail: format!("LUX_FHE_DEVICE={ordinal}, but only {count} HIP device(s) (ordinals 0..{count})"),
            }));
        }
        let (hip, rtc) = (runtime().map_err(unavailable)?, compiler().map_err(unavailable)?);
        let ordinal = ordinal as i32;
        let mut buf = [0 as c_char; 256];
        let mut driver_version = 0;
        // SAFETY: a valid ordinal; the name buffer is 256 bytes; the version one int.
        unsafe {
            hip.check("hipSetDevice", (hip.set_device)(ordinal)).map_err(device_error)?;
            hip.check("hipDeviceGetName", (hip.device_get_name)(buf.as_mut_ptr(), 256, ordinal))
                .map_err(device_error)?;
            hip.check("hipDriverGetVersion", (hip.driver_get_version)(&mut driver_version)).map_err(device_error)?;
        }
        // SAFETY: hipDeviceGetName wrote a NUL-terminated string into the zeroed buffer.
        let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        tracing::info!(%name, driver_version, "HIP device opened");
        Ok(HipDriver { hip, rtc, ordinal, name, driver_version })
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: the ordinal was validated in `open`.
        self.hip.check("hipSetDevice", unsafe { (self.hip.set_device)(self.ordinal) }).map_err(device_error)
    }
}

/// Compiles `source` with hiprtc into a code object for `arch` (`None`: the current
/// device's). The log is in the error.
pub fn compile_code_object(rtc: &Hiprtc, source: &str, arch: Option<&str>) -> Result<Vec<u8>> {
    let src = CString::new(source).map_err(|_| device_error("kernel source holds a NUL byte"))?;
    let name = CString::new("lux_kernels.hip").expect("no NUL");
    let mut opts: Vec<CString> = vec![CString::new("-O3").expect("no NUL")];
    if let Some(a) = arch {
        opts.push(CString::new(format!("--offload-arch={a}")).map_err(|_| device_error("bad arch"))?);
    }
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: Handle = std::ptr::null_mut();
    // SAFETY: all strings are NUL-terminated and outlive the calls; no headers are
    // passed; `prog` is destroyed below on every path after creation.
    unsafe {
        let rc = (rtc.create_program)(&mut prog, src.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null());
        if rc != 0 {
            return Err(device_error(format!("hiprtcCreateProgram failed (hiprtcResult {rc})")));
        }
        let rc = (rtc.compile_program)(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
        let result = if rc != 0 {
            let mut size = 0usize;
            (rtc.get_program_log_size)(prog, &mut size);
            let mut log = vec![0u8; size.max(1)];
            (rtc.get_program_log)(prog, log.as_mut_ptr().cast());
            Err(device_error(format!(
                "hiprtc failed (hiprtcResult {rc}):\n{}",
                String::from_utf8_lossy(&log).trim_end_matches('\0')
            )))
        } else {
            let mut size = 0usize;
            (rtc.get_code_size)(prog, &mut size);
            let mut code = vec![0u8; size];
            (rtc.get_code)(prog, code.as_mut_ptr().cast());
            Ok(code)
        };
        (rtc.destroy_program)(&mut prog);
        result
    }
}

// SAFETY: `alloc` returns hipMalloc memory of the requested size, valid until hipFree;
// launches and copies go to the null stream, in issue order (hipMemcpy is synchronous).
unsafe impl GpuDriver for HipDriver {
    type Module = HipModule;

    fn kind(&self) -> BackendKind {
        BackendKind::Hip
    }

    fn device_info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            driver: Some(format!("HIP runtime {}", self.driver_version)),
            software: false,
        }
    }

    fn warp_size(&self) -> u32 {
        WAVEFRONT
    }

    fn max_block(&self) -> u32 {
        MAX_BLOCK
    }

    fn compile(&self, program: Program, source: &str) -> Result<HipModule> {
        let arch = std::env::var("LUX_FHE_HIP_ARCH").ok().filter(|a| !a.is_empty());
        let code = compile_code_object(self.rtc, source, arch.as_deref())?;
        self.bind()?;
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: `code` is the code object hiprtc produced; it outlives the call.
        self.hip
            .check("hipModuleLoadData", unsafe { (self.hip.module_load_data)(&mut module, code.as_ptr().cast()) })
            .map_err(device_error)?;
        let mut m = HipModule { hip: self.hip, module, functions: HashMap::new() };
        for &kernel in program.kernels() {
            let c = CString::new(kernel).expect("kernel names have no NUL");
            let mut f: Handle = std::ptr::null_mut();
            // SAFETY: `module` is loaded; `c` is NUL-terminated.
            self.hip
                .check("hipModuleGetFunction", unsafe { (self.hip.module_get_function)(&mut f, module, c.as_ptr()) })
                .map_err(|e| device_error(format!("{program}: kernel {kernel}: {e}")))?;
            m.functions.insert(kernel, f);
        }
        Ok(m)
    }

    fn alloc(&self, bytes: usize) -> Result<u64> {
        self.bind()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        let rc = unsafe { (self.hip.malloc)(&mut p, bytes) };
        if rc == HIP_ERROR_OUT_OF_MEMORY {
            // The need and what is left, instead of the runtime's bare code.
            let available = self.memory().map_or(0, |m| m.free);
            return Err(Error::OutOfMemory { what: "a HIP device allocation".into(), needed: bytes as u64, available });
        }
        self.hip.check("hipMalloc", rc).map_err(device_error)?;
        Ok(p as u64)
    }

    fn memory(&self) -> Option<DeviceMemory> {
        self.bind().ok()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: writes two `size_t`s.
        let rc = unsafe { (self.hip.mem_get_info)(&mut free, &mut total) };
        match self.hip.check("hipMemGetInfo", rc) {
            Ok(()) => Some(DeviceMemory { free: free as u64, total: total as u64 }),
            Err(e) => {
                tracing::warn!(error = %e, "uploads are not checked before they allocate");
                None
            }
        }
    }

    unsafe fn free(&self, ptr: u64) {
        // SAFETY: the caller passes a pointer from `alloc`, used no more.
        let rc = unsafe { (self.hip.free)(ptr as *mut c_void) };
        if let Err(e) = self.hip.check("hipFree", rc) {
            tracing::warn!(error = %e, "hipFree failed");
        }
    }

    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller guarantees the destination range is allocated.
        let rc =
            unsafe { (self.hip.memcpy)(dst as *mut c_void, src.as_ptr().cast(), src.len(), HIP_MEMCPY_HOST_TO_DEVICE) };
        self.hip.check("hipMemcpy (host to device)", rc).map_err(device_error)
    }

    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller guarantees the source range is allocated.
        let rc = unsafe {
            (self.hip.memcpy)(dst.as_mut_ptr().cast(), src as *const c_void, dst.len(), HIP_MEMCPY_DEVICE_TO_HOST)
        };
        self.hip.check("hipMemcpy (device to host)", rc).map_err(device_error)
    }

    unsafe fn launch<A: KernelArgs>(&self, module: &HipModule, shape: LaunchShape, args: &A) -> Result<()> {
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
        let rc = unsafe {
            (self.hip.module_launch_kernel)(
                f,
                shape.grid,
                1,
                1,
                shape.block,
                1,
                1,
                shape.shared_bytes,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.hip.check(&format!("launch {kernel} {shape:?}"), rc).map_err(device_error)
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: no arguments.
        self.hip.check("hipDeviceSynchronize", unsafe { (self.hip.device_synchronize)() }).map_err(device_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Here (no ROCm): unavailable with the library named, no panic.
    #[test]
    fn probe_and_create_never_panic() {
        match probe() {
            Probe::Hardware => assert!(create(&BackendOptions::default()).is_ok()),
            Probe::Software => panic!("HIP never reports a software device"),
            Probe::Unavailable(cause) => {
                let e = create(&BackendOptions::default()).err().expect("create must fail when the probe does");
                assert!(e.to_string().contains("backend `hip` unavailable"), "{e}");
                if let Unavailable::DriverMissing { library, .. } = &cause {
                    assert!(library.starts_with("libamdhip64") || library.starts_with("libhiprtc"), "{library}");
                }
            }
        }
        assert!(matches!(HipDriver::open(9999), Err(Error::Unavailable { .. })));
    }

    /// Every program reaches hiprtc as the shared source with the HIP branch of compat.h.
    #[test]
    fn hip_source_is_the_shared_source() {
        for program in Program::all() {
            let hip = fhe_gpu::kernel_source(program, Dialect::Hip);
            let cuda = fhe_gpu::kernel_source(program, Dialect::Cuda);
            assert_eq!(hip.replace("#define LUX_HIP 1\n", ""), cuda, "{program}");
        }
    }

    fn device_backend() -> Arc<HipBackend> {
        let driver = HipDriver::open(fhe_api::registry::device_from_env().unwrap()).unwrap();
        Arc::new(HipBackend::new(driver, Dialect::Hip, &BackendOptions::default()).unwrap())
    }

    /// The limb-batched ring NTT on a device, every variant, as fhe-cuda's test of the
    /// same name.
    #[test]
    #[ignore = "needs a HIP device"]
    fn ring_ntt_matches_the_oracle() {
        let open = |variant: fhe_gpu::GpuNttVariant| {
            let driver = HipDriver::open(fhe_api::registry::device_from_env().unwrap()).unwrap();
            let options = BackendOptions { ntt_variant: Some(variant.name().into()), device: 0 };
            HipBackend::new(driver, Dialect::Hip, &options).unwrap()
        };
        fhe_gpu::testing::every_variant_matches_the_oracle(open, &fhe_cpu::CpuBackend::oracle());
    }

    // The shared conformance suite on an AMD GPU: `cargo test -p fhe-hip -- --ignored`.
    fhe_schemes::conformance_tests!(
        ignore = "needs a HIP device",
        device_backend(),
        Arc::new(fhe_cpu::CpuBackend::oracle()),
        gates_per_set = 1000
    );

    // The CKKS suite on an AMD GPU (the shared backend's `CkksOps`, checked byte for
    // byte on the emulator in CI): `cargo test -p fhe-hip -- --ignored`.
    fhe_schemes::ckks_conformance_tests!(
        ignore = "needs a HIP device",
        device_backend(),
        Arc::new(fhe_cpu::CpuBackend::oracle()),
        preset = fhe_api::ckks::params::Preset::Slots4096Scale40Depth2
    );
}
