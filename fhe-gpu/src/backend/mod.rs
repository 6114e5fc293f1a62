//! The GPU backend, written once over [`GpuDriver`], one file per op family as in every
//! backend:
//! - [`ring`]: `RingOps`, the limb-batched negacyclic NTT over any ring `(N, q)` the
//!   tables accept (`N <= 2^17`, `q < 2^62`), and its many-limb form
//!   [`GpuBackend::ring_forward_limbs`];
//! - [`tfhe`]: `BootstrapOps`: the evaluation key uploaded once by `prepare`; a batch
//!   bootstrapped in two launches (blind rotation with extraction, then key switching)
//!   and one copy back;
//! - [`ckks`]: `CkksOps`, every method on resident device buffers (`Backend::ckks()` is
//!   this backend), byte-equal to the oracle (checked on the emulator in CI).
//!
//! - [`variant`]: the NTT variants (seed 1's names), every ring NTT above runs the one
//!   the backend was built with.
//!
//! Key generation and encryption are host algorithms (`fhe-schemes`) over this NTT.
//! Compiled programs, ring tables, per-set tables and CKKS plans are cached per backend
//! (one device context) in [`KeyedCache`]s.

pub mod ckks;
pub mod ring;
pub mod tfhe;
pub mod variant;

use std::sync::{Arc, Mutex, MutexGuard};

use fhe_api::keyed_cache::KeyedCache;
use fhe_api::{Backend, BackendKind, BackendOptions, DeviceInfo, Error, ParamSet, Result};

use crate::args::{DevPtr, Residue};
use crate::driver::{Buffer, GpuDriver};
use crate::source::{kernel_source, Dialect, Program};

use variant::GpuNttVariant;

/// Residues on the device in a program's word size ([`Program::word_bits`]).
enum Residues<D: GpuDriver> {
    W32(Buffer<D, u32>),
    W64(Buffer<D, u64>),
}

impl<D: GpuDriver> Residues<D> {
    /// Uploads `data` (residues below a prime that fits `bits`) as words of `bits` bits.
    fn upload(drv: &Arc<D>, data: &[u64], bits: u32) -> Result<Self> {
        Ok(if bits == 32 {
            let narrow: Vec<u32> = data.iter().map(|&x| x as u32).collect();
            Residues::W32(Buffer::from_slice(drv, &narrow)?)
        } else {
            Residues::W64(Buffer::from_slice(drv, data)?)
        })
    }

    fn zeroed(drv: &Arc<D>, len: usize, bits: u32) -> Result<Self> {
        Ok(if bits == 32 { Residues::W32(Buffer::new(drv, len)?) } else { Residues::W64(Buffer::new(drv, len)?) })
    }

    fn dev_ptr(&self) -> DevPtr<Residue> {
        DevPtr::new(match self {
            Residues::W32(b) => b.ptr(),
            Residues::W64(b) => b.ptr(),
        })
    }

    fn read_into(&self, out: &mut [u64]) -> Result<()> {
        match self {
            Residues::W32(b) => {
                let mut narrow = vec![0u32; out.len()];
                b.read_into(&mut narrow)?;
                out.iter_mut().zip(narrow).for_each(|(o, x)| *o = u64::from(x));
                Ok(())
            }
            Residues::W64(b) => b.read_into(out),
        }
    }
}

/// A backend over one device of driver `D`.
pub struct GpuBackend<D: GpuDriver> {
    drv: Arc<D>,
    dialect: Dialect,
    /// The NTT variant every ring NTT of this backend runs.
    variant: GpuNttVariant,
    /// Each compiled program, compiled on first use.
    modules: KeyedCache<Program, D::Module>,
    /// Each ring's NTT tables, by `(N, q, word bits)`, as the CPU keeps its engines.
    rings: KeyedCache<(usize, u64, u32), ring::RingTables<D>>,
    /// Each bit-scheme set's resident tables.
    sets: KeyedCache<ParamSet, tfhe::SetState<D>>,
    /// Each CKKS parameter set's resident tables and constants, by `(N, dnum, primes)`.
    ckks_plans: KeyedCache<Vec<u64>, ckks::GpuCkksPlan<D>>,
    /// Device work is issued by one caller at a time (one stream).
    lock: Mutex<()>,
}

impl<D: GpuDriver> GpuBackend<D> {
    /// Wraps a driver; `options.ntt_variant` is `None` (the default variant) or the name
    /// of one of [`variant::GPU_NTT_VARIANTS`], else `Error::UnknownNttVariant` listing them.
    pub fn new(drv: D, dialect: Dialect, options: &BackendOptions) -> Result<Self> {
        let variant = match options.ntt_variant.as_deref() {
            None => GpuNttVariant::DEFAULT,
            Some(v) => GpuNttVariant::parse(drv.kind(), v)?,
        };
        Ok(GpuBackend {
            drv: Arc::new(drv),
            dialect,
            variant,
            modules: KeyedCache::new(),
            rings: KeyedCache::new(),
            sets: KeyedCache::new(),
            ckks_plans: KeyedCache::new(),
            lock: Mutex::new(()),
        })
    }

    /// The NTT variant this backend runs.
    pub fn variant(&self) -> GpuNttVariant {
        self.variant
    }

    pub fn driver(&self) -> &Arc<D> {
        &self.drv
    }

    fn device_err(&self, detail: impl std::fmt::Display) -> Error {
        Error::Device { backend: self.drv.kind(), detail: detail.to_string() }
    }

    /// Exclusive use of the device's stream.
    fn device_lock(&self) -> Result<MutexGuard<'_, ()>> {
        self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))
    }

    /// `program` compiled for this device, on first use (cached for the life of this
    /// backend, i.e. per device context). A failure is not cached: the next call
    /// compiles again and reports its own error.
    fn module(&self, program: Program) -> Result<Arc<D::Module>> {
        self.modules
            .get_or_try_init(&program, || {
                let started = std::time::Instant::now();
                let module = self.drv.compile(program, &kernel_source(program, self.dialect))?;
                let ms = started.elapsed().as_millis() as u64;
                tracing::info!(backend = %self.drv.kind(), %program, ms, "kernels compiled");
                Ok(module)
            })
            .map_err(|e| self.device_err(format!("{program}: {e}")))
    }

    /// Threads per block for a kernel with `work` independent items per barrier phase.
    fn block_for(&self, work: usize) -> u32 {
        let warp = self.drv.warp_size().max(1);
        let max = (self.drv.max_block() / warp).max(1) * warp;
        let want = u32::try_from(work).unwrap_or(u32::MAX).div_ceil(warp).saturating_mul(warp);
        want.clamp(warp, max)
    }
}

/// A batch's block count, as the launch takes it.
fn launch_grid(count: usize) -> Result<u32> {
    u32::try_from(count).map_err(|_| Error::InvalidInput(format!("batch of {count} is too large for one launch")))
}

impl<D: GpuDriver> Backend for GpuBackend<D> {
    fn kind(&self) -> BackendKind {
        self.drv.kind()
    }

    fn name(&self) -> String {
        format!("{}:{}", self.drv.label(), self.variant)
    }

    fn device_info(&self) -> DeviceInfo {
        self.drv.device_info()
    }

    /// Every `CkksOps` method runs on the device (`backend/ckks/`).
    fn ckks(&self) -> Option<&dyn fhe_api::ops::CkksOps> {
        Some(self)
    }

    fn device_memory(&self) -> Option<fhe_api::DeviceMemory> {
        self.drv.memory()
    }
}
