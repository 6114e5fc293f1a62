//! The HIP runtime and hiprtc functions this backend uses, and nothing else, loaded with
//! `libloading`. Each missing library or symbol is an `Unavailable` with its cause.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use fhe_api::Unavailable;
use libloading::Library;

pub type HipError = c_int;
pub type HiprtcResult = c_int;
pub type Handle = *mut c_void;

pub const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
/// `hipErrorOutOfMemory` (hip_runtime_api.h; the same value as `hipErrorMemoryAllocation`).
pub const HIP_ERROR_OUT_OF_MEMORY: HipError = 2;

/// Sonames tried in order: the unversioned development link, then ROCm 7 and 6.
pub const HIP_LIBRARIES: [&str; 3] = ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"];
pub const HIPRTC_LIBRARIES: [&str; 3] = ["libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6"];

/// The HIP runtime: the library stays loaded as long as the function pointers live.
pub struct Hip {
    _lib: Library,
    pub init: unsafe extern "C" fn(c_uint) -> HipError,
    pub get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub set_device: unsafe extern "C" fn(c_int) -> HipError,
    pub device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipError,
    pub driver_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    pub free: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    pub mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> HipError,
    pub module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> HipError,
    pub module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> HipError,
    #[allow(clippy::type_complexity)]
    pub module_launch_kernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipError,
    pub module_unload: unsafe extern "C" fn(Handle) -> HipError,
    pub device_synchronize: unsafe extern "C" fn() -> HipError,
    pub get_error_string: unsafe extern "C" fn(HipError) -> *const c_char,
}

/// hiprtc, the run-time compiler.
pub struct Hiprtc {
    _lib: Library,
    pub create_program: unsafe extern "C" fn(
        *mut Handle,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> HiprtcResult,
    pub compile_program: unsafe extern "C" fn(Handle, c_int, *const *const c_char) -> HiprtcResult,
    pub get_program_log_size: unsafe extern "C" fn(Handle, *mut usize) -> HiprtcResult,
    pub get_program_log: unsafe extern "C" fn(Handle, *mut c_char) -> HiprtcResult,
    pub get_code_size: unsafe extern "C" fn(Handle, *mut usize) -> HiprtcResult,
    pub get_code: unsafe extern "C" fn(Handle, *mut c_char) -> HiprtcResult,
    pub destroy_program: unsafe extern "C" fn(*mut Handle) -> HiprtcResult,
}

fn open(names: &[&'static str]) -> Result<(Library, &'static str), Unavailable> {
    let mut errors = Vec::new();
    for &name in names {
        // SAFETY: loading a shared library runs its initializers; the HIP libraries are
        // designed to be dlopened (that is how the ROCm runtime loads its own parts).
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok((lib, name)),
            Err(e) => errors.push(format!("{name}: {e}")),
        }
    }
    Err(Unavailable::DriverMissing { library: names[0].to_string(), detail: errors.join("; ") })
}

/// Builds `$ty` from `$lib`: every field a symbol looked up by its C name, then the
/// library itself, moved in last so the pointers never outlive it.
macro_rules! load {
    ($ty:ident, $lib:expr, $libname:expr, { $($field:ident = $sym:literal),* $(,)? }) => {{
        let lib: Library = $lib;
        $ty {
            $(
                // SAFETY: the field's type is the C prototype of `$sym` from the HIP headers
                // (hip_runtime_api.h / hiprtc.h, ROCm 6 and 7), declared by hand above.
                $field: *unsafe { lib.get(concat!($sym, "\0").as_bytes()) }.map_err(|e| {
                    Unavailable::DriverMissing { library: $libname.to_string(), detail: format!("symbol {}: {e}", $sym) }
                })?,
            )*
            _lib: lib,
        }
    }};
}

impl Hip {
    pub fn load() -> Result<Hip, Unavailable> {
        let (lib, name) = open(&HIP_LIBRARIES)?;
        Ok(load!(Hip, lib, name, {
            init = "hipInit",
            get_device_count = "hipGetDeviceCount",
            set_device = "hipSetDevice",
            device_get_name = "hipDeviceGetName",
            driver_get_version = "hipDriverGetVersion",
            malloc = "hipMalloc",
            free = "hipFree",
            memcpy = "hipMemcpy",
            mem_get_info = "hipMemGetInfo",
            module_load_data = "hipModuleLoadData",
            module_get_function = "hipModuleGetFunction",
            module_launch_kernel = "hipModuleLaunchKernel",
            module_unload = "hipModuleUnload",
            device_synchronize = "hipDeviceSynchronize",
            get_error_string = "hipGetErrorString",
        }))
    }

    /// `Ok` for `hipSuccess`, else the runtime's message.
    pub fn check(&self, what: &str, e: HipError) -> Result<(), String> {
        if e == 0 {
            return Ok(());
        }
        // SAFETY: hipGetErrorString returns a static NUL-terminated string for any code.
        let msg = unsafe { CStr::from_ptr((self.get_error_string)(e)) }.to_string_lossy().into_owned();
        Err(format!("{what} failed: {msg} (hipError_t {e})"))
    }
}

impl Hiprtc {
    pub fn load() -> Result<Hiprtc, Unavailable> {
        let (lib, name) = open(&HIPRTC_LIBRARIES)?;
        Ok(load!(Hiprtc, lib, name, {
            create_program = "hiprtcCreateProgram",
            compile_program = "hiprtcCompileProgram",
            get_program_log_size = "hiprtcGetProgramLogSize",
            get_program_log = "hiprtcGetProgramLog",
            get_code_size = "hiprtcGetCodeSize",
            get_code = "hiprtcGetCode",
            destroy_program = "hiprtcDestroyProgram",
        }))
    }
}
