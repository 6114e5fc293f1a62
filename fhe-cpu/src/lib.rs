//! `fhe-cpu`: the CPU oracle. Its bytes define correct output for every backend.
//!
//! One module per concept: [`arith`] (elementwise modular kernels), [`mem`] (aligned
//! buffers, prefetches, ISA detection), [`ntt`] (the NTT variants: forward and inverse
//! on one prime), [`tfhe`] (the bit scheme: its ring, prepared keys, blind rotation and
//! its 32- and 64-bit GINX kernels, key switching) and [`ckks`]. Key generation and
//! encryption are host algorithms (`fhe-schemes`), over this backend's NTT. Batches run on all cores through
//! rayon.

pub mod arith;
pub mod ckks;
pub mod mem;
pub mod ntt;
pub mod tfhe;

/// Host modular arithmetic, shared with key generation (its home is `fhe-api`).
pub use fhe_api::ring::modulus;
use std::sync::Arc;

use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ops::{check_inputs, check_ring_input, CkksOps, KeyMeta, RingOps};
use fhe_api::ring::ntt::NttTables;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{
    Backend, BackendEntry, BackendKind, BackendOptions, BootstrapOps, DeviceInfo, EvaluationKey, ExtractedLwe, Lut,
    LweCiphertext, ParamSet, PreparedKey, Probe, Result,
};

use rayon::prelude::*;

pub use crate::tfhe::bootstrap::BootstrapThreads;
use crate::tfhe::bootstrap::{self, CpuPrepared};
use crate::tfhe::keyswitch;
use crate::tfhe::ring::Ring;

/// The registry entry of the CPU backend: always available.
pub const ENTRY: BackendEntry = BackendEntry { kind: BackendKind::Cpu, probe: || Probe::Hardware, create };

fn create(options: &BackendOptions) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(CpuBackend::new(options.ntt_variant.as_deref())?))
}

/// Batches of at least this many polynomials are transformed on all cores.
const PAR_NTT_MIN: usize = 64;

/// The CPU backend with one NTT variant.
pub struct CpuBackend {
    variant: &'static str,
    threads: BootstrapThreads,
    /// One ring per parameter set, keyed by the set: a new set is a new key, never an
    /// index past a fixed array.
    rings: KeyedCache<ParamSet, Ring>,
    /// One NTT engine per ring `(N, q)` (CKKS primes, [`RingOps`]).
    engines: KeyedCache<(usize, u64), Box<dyn ntt::NttEngine>>,
    /// One plan per CKKS parameter set (keyed by `N`, `dnum` and every prime).
    ckks_plans: KeyedCache<Vec<u64>, ckks::CkksPlan>,
}

impl CpuBackend {
    /// `None` picks the default variant; an unknown or unsupported name is an error, and
    /// so is a `LUX_FHE_BOOTSTRAP_THREADS` other than `1` or `2` ([`BootstrapThreads`]).
    pub fn new(variant: Option<&str>) -> Result<CpuBackend> {
        let variant = match variant {
            Some(v) => ntt::find_variant(v)?.name,
            None => ntt::default_variant(),
        };
        Ok(CpuBackend {
            variant,
            threads: BootstrapThreads::from_env()?,
            rings: KeyedCache::new(),
            engines: KeyedCache::new(),
            ckks_plans: KeyedCache::new(),
        })
    }

    /// This backend with a lone ciphertext's blind rotation on `threads`, whatever
    /// `LUX_FHE_BOOTSTRAP_THREADS` says.
    pub fn with_bootstrap_threads(self, threads: BootstrapThreads) -> CpuBackend {
        CpuBackend { threads, ..self }
    }

    /// Threads a lone ciphertext's blind rotation may use.
    pub fn bootstrap_threads(&self) -> BootstrapThreads {
        self.threads
    }

    /// The reference oracle (radix-2 NTT): the bytes every backend must reproduce. A
    /// `LUX_FHE_BOOTSTRAP_THREADS` it cannot read counts as the default here (threads
    /// change no word); [`CpuBackend::new`], the registry's path, reports it.
    pub fn oracle() -> CpuBackend {
        let variant = ntt::find_variant("reference").expect("reference is always supported").name;
        let threads = BootstrapThreads::from_env().unwrap_or(BootstrapThreads::Two);
        CpuBackend {
            variant,
            threads,
            rings: KeyedCache::new(),
            engines: KeyedCache::new(),
            ckks_plans: KeyedCache::new(),
        }
    }

    /// This backend's NTT engine for the ring `(N, q)`, built on first use.
    pub fn engine(&self, n: PolynomialSize, q: RingModulus) -> Result<Arc<Box<dyn ntt::NttEngine>>> {
        self.engines.get_or_try_init(&(n.0, q.0), || {
            let v = ntt::find_variant(self.variant)?;
            Ok((v.build)(Arc::new(NttTables::new(n, q)?)))
        })
    }

    /// The ring of a parameter set, built on first use. Called once per call of an
    /// operation (one batch), not per step: the shared lock and `Arc` clone it costs are
    /// spread over a whole batch. A ring the CPU kernels cannot take is an error.
    pub fn ring(&self, set: ParamSet) -> Result<Arc<Ring>> {
        self.rings.get_or_try_init(&set, || Ring::new(set, self.variant))
    }
}

/// A sequential batch through the engine's fused checks (`NttEngine::forward_checked`):
/// each polynomial's words are checked as its transform's first pass reads them, which
/// spares the separate pass (its share: `docs/perf/2026-12-05.md`, "Lab notes moved from
/// the code"). True when every polynomial was transformed. False, with `data` as it was,
/// when the length is not a whole number of polynomials, the batch is one for all cores,
/// or a polynomial is declined (a word at or above `q`, or an engine without the fused
/// check): the ones before it are restored by the opposite transform, exact on reduced
/// words (`inverse(forward(x)) == x`), and the caller takes the checked path, which
/// reports the error.
fn fused_batch(e: &dyn ntt::NttEngine, n: usize, data: &mut [u64], forward: bool) -> bool {
    if !data.len().is_multiple_of(n) || data.len() >= PAR_NTT_MIN * n {
        return false;
    }
    for k in 0..data.len() / n {
        let poly = &mut data[k * n..(k + 1) * n];
        let taken = if forward { e.forward_checked(poly) } else { e.inverse_checked(poly) };
        if !taken {
            for done in data[..k * n].chunks_exact_mut(n) {
                if forward {
                    e.inverse(done);
                } else {
                    e.forward(done);
                }
            }
            return false;
        }
    }
    true
}

impl CpuBackend {
    /// One NTT direction over a batch: the fused checks for a short batch, else the input
    /// check, then every polynomial (on all cores for a large batch, such as key
    /// generation's; one polynomial stays inline).
    fn transform(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64], forward: bool) -> Result<()> {
        let e = self.engine(n, q)?;
        if fused_batch(&**e, n.0, data, forward) {
            return Ok(());
        }
        check_ring_input(n, q, data)?;
        let run = |p: &mut [u64]| if forward { e.forward(p) } else { e.inverse(p) };
        if data.len() >= PAR_NTT_MIN * n.0 {
            data.par_chunks_mut(n.0).for_each(run);
        } else {
            data.chunks_mut(n.0).for_each(run);
        }
        Ok(())
    }
}

impl RingOps for CpuBackend {
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform(n, q, data, true)
    }

    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform(n, q, data, false)
    }

    fn ring_mul_add(&self, q: RingModulus, a: &[u64], b: &[u64], acc: &mut [u64]) -> Result<()> {
        let m = fhe_api::ops::checked_modulus(q, a, b, acc)?;
        arith::mul_add(&m, a, b, acc);
        Ok(())
    }

    fn ntt_variant(&self) -> &str {
        self.variant
    }
}

impl BootstrapOps for CpuBackend {
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        let ring = self.ring(ek.params())?;
        let prepared = bootstrap::prepare(&ring, ek)?;
        Ok(PreparedKey::new(self.name(), KeyMeta::of(ek), prepared))
    }

    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>> {
        self.blind_rotate_batch_lut_at(key, inputs, lut, &[0])
    }

    fn blind_rotate_batch_lut_at(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
        at: &[usize],
    ) -> Result<Vec<ExtractedLwe>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        lut.check_params(key.params())?;
        let prepared = key.downcast::<CpuPrepared>(&self.name())?;
        let ring = self.ring(key.params())?;
        if key.params().params().grouping().is_some() {
            return crate::tfhe::multi_bit::blind_rotate_batch(&ring, prepared, inputs, lut, at, self.threads);
        }
        if at == [0] {
            return bootstrap::blind_rotate_batch(&ring, prepared, inputs, lut, self.threads);
        }
        Err(fhe_api::Error::Unsupported {
            backend: self.name(),
            scheme: "many-LUT on a GINX set (the multi-bit programmable-bootstrapping sets have it)",
        })
    }

    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        let prepared = key.downcast::<CpuPrepared>(&self.name())?;
        let ring = self.ring(key.params())?;
        keyswitch::key_switch_batch(&ring, prepared, inputs, self.threads)
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn name(&self) -> String {
        format!("cpu:{}", self.variant)
    }

    fn device_info(&self) -> DeviceInfo {
        DeviceInfo { name: cpu_model(), driver: None, software: false }
    }

    fn ckks(&self) -> Option<&dyn CkksOps> {
        Some(self)
    }

    /// Every set: the key switch keeps 32-bit words for the wide ones.
    fn prepares(&self, _: fhe_api::ParamSet) -> bool {
        true
    }
}

/// The CPU model from `/proc/cpuinfo` where there is one.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

#[cfg(test)]
mod tests;
