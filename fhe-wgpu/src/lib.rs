//! `fhe-wgpu`: the portable GPU backend (Vulkan, Metal, DX12) on wgpu, with WGSL
//! compute kernels. It is the GPU-style lane CI runs for real, on Mesa's software
//! Vulkan (lavapipe).
//!
//! Every kernel does exact modular arithmetic in 64-bit shader integers
//! (`SHADER_INT64`): Montgomery multiplication with `R = 2^32` for the 25- and 27-bit
//! rings and `R = 2^64` (a 128-bit product built from 32-bit halves) for the 54-bit
//! ring and CKKS's primes (up to 62 bits, read from a table at run time). An adapter
//! without 64-bit integers is reported unavailable with that cause. Every result is
//! fully reduced, so the bytes equal the CPU oracle's.
//!
//! Modules: [`device`] (adapter, device, buffers, error scopes), [`ring`] (a set's
//! constants, tables, shader source and compiled pipelines), [`ntt`] (batched
//! transforms), [`tfhe`] (resident keys; `tfhe/bootstrap.rs`: blind rotation and
//! extraction; `tfhe/keyswitch.rs`: key switching), [`ckks`] (the CKKS capability on
//! resident buffers, one file per op family).

pub mod ckks;
pub mod device;
pub mod ntt;
pub mod ring;
pub mod tfhe;

use std::sync::{Arc, OnceLock};

use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ops::{check_inputs, check_narrow_lwe, check_ring_input, KeyMeta, RingOps};
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{
    Backend, BackendEntry, BackendKind, BackendOptions, BootstrapOps, DeviceInfo, Error, EvaluationKey, ExtractedLwe,
    Lut, LweCiphertext, ParamSet, PreparedKey, Probe, Result,
};

use crate::device::Gpu;
use crate::ring::Pipelines;
use crate::tfhe::WgpuPrepared;

/// The registry entry of the wgpu backend.
pub const ENTRY: BackendEntry = BackendEntry { kind: BackendKind::Wgpu, probe, create };

fn probe() -> Probe {
    // Enumerating adapters loads the Vulkan driver: do it once per process.
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(device::probe).clone()
}

fn create(options: &BackendOptions) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(WgpuBackend::new(options)?))
}

/// The one NTT variant of this backend (radix-4 passes in device memory).
pub const NTT_VARIANT: &str = "radix4";

/// The wgpu backend on one adapter.
pub struct WgpuBackend {
    gpu: Gpu,
    /// Each set's compiled pipelines and tables, keyed by the set: a new set is a new
    /// key, never an index past a fixed array.
    sets: KeyedCache<ParamSet, Pipelines>,
    /// The CKKS module, plans and prime tables (`ckks`), built on first use.
    ckks: ckks::CkksState,
}

impl WgpuBackend {
    /// Opens adapter `options.device` (hardware adapters first, then software ones).
    pub fn new(options: &BackendOptions) -> Result<WgpuBackend> {
        if let Some(v) = options.ntt_variant.as_deref() {
            if v != NTT_VARIANT {
                return Err(Error::UnknownNttVariant {
                    backend: BackendKind::Wgpu,
                    value: v.to_string(),
                    valid: NTT_VARIANT.to_string(),
                });
            }
        }
        Ok(WgpuBackend { gpu: Gpu::open(options.device)?, sets: KeyedCache::new(), ckks: Default::default() })
    }

    /// The compiled pipelines and tables of `set`, built on first use; looked up once
    /// per call (a batch), never per kernel. A failed build is not cached, so a later
    /// call tries again (a lost device may come back; a shader error repeats its message).
    fn pipelines(&self, set: ParamSet) -> Result<Arc<Pipelines>> {
        self.sets.get_or_try_init(&set, || {
            Pipelines::new(&self.gpu, set)
                .map_err(|e| Error::Device { backend: BackendKind::Wgpu, detail: format!("{set} pipelines: {e}") })
        })
    }
}

impl WgpuBackend {
    /// One direction over a batch of the ring `(n, q)`: a bit-scheme set's ring through
    /// its compiled pipelines, any other ring (a CKKS prime) through the CKKS module's
    /// run-time-prime NTT.
    fn transform(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64], dir: ntt::Direction) -> Result<()> {
        let Some(set) = ParamSet::for_ring(n, q) else {
            return self.ring_transform_any(n, q, data, dir == ntt::Direction::Forward);
        };
        check_ring_input(n, q, data)?;
        ntt::run(&self.gpu, &*self.pipelines(set)?, set, data, dir)
    }
}

/// Key generation and encryption are host algorithms (`fhe-schemes`), over this NTT.
impl RingOps for WgpuBackend {
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform(n, q, data, ntt::Direction::Forward)
    }

    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform(n, q, data, ntt::Direction::Inverse)
    }

    fn ntt_variant(&self) -> &str {
        NTT_VARIANT
    }
}

impl BootstrapOps for WgpuBackend {
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        check_narrow_lwe(self.name(), ek.params())?; // the shaders hold LWE words in 16 bits
        let prepared = tfhe::prepare(&self.gpu, &*self.pipelines(ek.params())?, ek)?;
        Ok(PreparedKey::new(self.name(), KeyMeta::of(ek), prepared))
    }

    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        lut.check_params(key.params())?;
        let prepared = key.downcast::<WgpuPrepared>(&self.name())?;
        tfhe::bootstrap::blind_rotate_batch(&self.gpu, &*self.pipelines(key.params())?, prepared, inputs, lut)
    }

    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        let prepared = key.downcast::<WgpuPrepared>(&self.name())?;
        tfhe::keyswitch::key_switch_batch(&self.gpu, &*self.pipelines(key.params())?, prepared, inputs)
    }

    /// Blind rotation, extraction, key switch and `+ q/8` on the device: one
    /// submission per group of ciphertexts, nothing read back in between.
    fn bootstrap_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        let prepared = key.downcast::<WgpuPrepared>(&self.name())?;
        tfhe::bootstrap::bootstrap_batch(&self.gpu, &*self.pipelines(key.params())?, prepared, inputs)
    }
}

impl Backend for WgpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Wgpu
    }

    fn name(&self) -> String {
        format!("wgpu:{NTT_VARIANT}")
    }

    fn device_info(&self) -> DeviceInfo {
        self.gpu.device_info()
    }

    fn ckks(&self) -> Option<&dyn fhe_api::ops::CkksOps> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
