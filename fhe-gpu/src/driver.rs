//! The driver trait: the few device calls the backend needs. `fhe-cuda` implements it
//! over the CUDA driver API (cudarc), `fhe-hip` over the HIP runtime (libloading), and
//! `fhe-gpu-emu` over the CPU emulator; everything above it is written once.

use std::sync::Arc;

use fhe_api::{BackendKind, DeviceInfo, Error, Result};

use crate::args::{DevPtr, KernelArgs};
use crate::memory::DeviceMemory;
use crate::source::Program;

/// A launch: grid and block sizes (1-D) and dynamic shared memory in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: u32,
    pub block: u32,
    pub shared_bytes: u32,
}

/// The device calls of one device (one context, one stream).
///
/// # Safety
/// Implementations must return from `alloc` a device address valid for `bytes` bytes
/// until `free`, must run launches and copies in issue order, and must hand `launch`'s
/// `args` to kernel `A::KERNEL` as its one parameter, by value: exactly the
/// `size_of::<A>()` bytes of [`KernelArgs::as_bytes`], read before `launch` returns.
pub unsafe trait GpuDriver: Send + Sync + 'static {
    /// A compiled module of one [`Program`].
    type Module: Send + Sync + 'static;

    fn kind(&self) -> BackendKind;
    /// The first part of the backend's name (`cuda` in `cuda:radix16_compact`).
    fn label(&self) -> String {
        self.kind().name().to_string()
    }
    fn device_info(&self) -> DeviceInfo;
    /// Threads per warp (32) or wavefront (64 on CDNA): block sizes are multiples of it.
    fn warp_size(&self) -> u32;
    /// The largest block the kernels may be launched with.
    fn max_block(&self) -> u32;
    /// The most blocks one launch is given: kernels that loop over more work than one
    /// block each (the ring NTT) stride by the grid, so this only bounds parallelism.
    fn max_grid(&self) -> u32 {
        1 << 16
    }
    /// Compiles `source` (from [`crate::kernel_source`] for `program`) for this device;
    /// the module must hold every kernel of [`Program::kernels`].
    fn compile(&self, program: Program, source: &str) -> Result<Self::Module>;
    /// Allocates `bytes`; a driver out of memory answers `Error::OutOfMemory` naming
    /// the need and the free bytes, not a bare driver code.
    fn alloc(&self, bytes: usize) -> Result<u64>;
    /// Free and total device memory (`cuMemGetInfo`, `hipMemGetInfo`), `None` where the
    /// driver cannot say: large uploads are checked against it before they allocate.
    fn memory(&self) -> Option<DeviceMemory> {
        None
    }
    /// # Safety
    /// `ptr` came from `alloc` on this driver and is not used afterwards.
    unsafe fn free(&self, ptr: u64);
    /// # Safety
    /// `dst .. dst + src.len()` lies inside one live allocation.
    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<()>;
    /// # Safety
    /// `src .. src + dst.len()` lies inside one live allocation.
    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<()>;
    /// Launches kernel `A::KERNEL` of `module` with `args` as its one by-value parameter.
    ///
    /// # Safety
    /// Every pointer in `args` is live and sized for what the kernel accesses with `shape`.
    unsafe fn launch<A: KernelArgs>(&self, module: &Self::Module, shape: LaunchShape, args: &A) -> Result<()>;
    /// Waits for every launch and copy, surfacing asynchronous kernel errors.
    fn synchronize(&self) -> Result<()>;
}

/// Plain data that may be copied to and from devices as bytes: integer words and the
/// table entries of [`crate::args`].
///
/// # Safety
/// Implementors have no padding (every byte is initialized) and every byte pattern is a
/// valid value; the `c_struct!` macro asserts the first for table entries.
pub unsafe trait Word: Copy + Default + Send + Sync + 'static {}
// SAFETY: primitive integers: no padding, every bit pattern valid.
unsafe impl Word for u16 {}
// SAFETY: as above.
unsafe impl Word for u32 {}
// SAFETY: as above.
unsafe impl Word for u64 {}

fn as_bytes<T: Word>(v: &[T]) -> &[u8] {
    // SAFETY: by `Word`'s contract there is no padding, so every byte is initialized;
    // u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn as_bytes_mut<T: Word>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; by `Word`'s contract every byte pattern is a valid `T`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// A device allocation of `len` words of `T`, freed on drop.
pub struct Buffer<D: GpuDriver, T: Word> {
    drv: Arc<D>,
    ptr: u64,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<D: GpuDriver, T: Word> Buffer<D, T> {
    pub fn new(drv: &Arc<D>, len: usize) -> Result<Self> {
        let bytes = len.max(1) * std::mem::size_of::<T>();
        let ptr = drv.alloc(bytes)?;
        Ok(Buffer { drv: drv.clone(), ptr, len, _t: std::marker::PhantomData })
    }

    /// A new buffer holding `data`.
    pub fn from_slice(drv: &Arc<D>, data: &[T]) -> Result<Self> {
        let b = Self::new(drv, data.len())?;
        if !data.is_empty() {
            // SAFETY: the buffer was just allocated with room for `data.len()` words.
            unsafe { drv.upload(b.ptr, as_bytes(data))? };
        }
        Ok(b)
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The device address as a typed kernel argument.
    pub fn dev_ptr(&self) -> DevPtr<T> {
        DevPtr::new(self.ptr)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies the first `out.len()` words back.
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        if out.len() > self.len {
            return Err(Error::InvalidInput(format!("read of {} words from a {}-word buffer", out.len(), self.len)));
        }
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: bounds checked above; the allocation lives as long as `self`.
        unsafe { self.drv.download(self.ptr, as_bytes_mut(out)) }
    }
}

impl<D: GpuDriver, T: Word> Drop for Buffer<D, T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc` and the buffer is never used after drop.
        unsafe { self.drv.free(self.ptr) }
    }
}
