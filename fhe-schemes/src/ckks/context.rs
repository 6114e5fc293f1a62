//! One CKKS parameter set on one backend: the host-side API a user starts from (key
//! generation, encoding, encryption, decryption), and the door to the evaluator.

use std::sync::Arc;

use crate::ckks::encoding::{Complex, Encoder};
use crate::ckks::encrypt::{decrypt, encrypt_pk_with, encrypt_sk};
use crate::ckks::evaluator::{check_params, ckks_ops, CkksEvaluator};
use crate::ckks::keygen::{galois_key_from_seed, keygen, CkksKeygenOptions};
use fhe_api::ckks::entities::{CkksEvalKeys, CkksKeySet, CkksPlaintext, CkksPublicKey, CkksSecretKey, SwitchingKey};
use fhe_api::ckks::params::{CkksParams, CkksPreset};
use fhe_api::error::Result;
use fhe_api::ops::{Backend, CkksHandle};
use fhe_api::rng::Seed;

/// A CKKS parameter set bound to a backend that declares the CKKS capability.
pub struct CkksContext {
    backend: Arc<dyn Backend>,
    params: Arc<CkksParams>,
    encoder: Encoder,
}

impl std::fmt::Debug for CkksContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CkksContext({} on {})", self.params.name, self.backend.name())
    }
}

impl CkksContext {
    /// `Error::Unsupported` when the backend has no CKKS; `Error::SecurityBound` when the
    /// parameters exceed the 128-bit bound.
    pub fn new(backend: Arc<dyn Backend>, params: Arc<CkksParams>) -> Result<Self> {
        ckks_ops(&*backend)?;
        params.check_security()?;
        let encoder = Encoder::new(&params)?;
        Ok(CkksContext { backend, params, encoder })
    }

    pub fn from_preset(backend: Arc<dyn Backend>, preset: CkksPreset) -> Result<Self> {
        Self::new(backend, Arc::new(preset.params().clone()))
    }

    pub fn params(&self) -> &Arc<CkksParams> {
        &self.params
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Every key from `seed` (reproducible on every backend, byte for byte).
    pub fn keygen_from_seed(&self, seed: &Seed, options: &CkksKeygenOptions) -> Result<CkksKeySet> {
        keygen(&*self.backend, &self.params, seed, options)
    }

    /// Every key from OS randomness.
    pub fn keygen(&self, options: &CkksKeygenOptions) -> Result<CkksKeySet> {
        self.keygen_from_seed(&Seed::from_os()?, options)
    }

    /// One more Galois key (element `g`) for the secret of `seed`.
    pub fn galois_key_from_seed(&self, seed: &Seed, g: u64) -> Result<SwitchingKey> {
        galois_key_from_seed(&*self.backend, &self.params, seed, g)
    }

    /// Complex values (up to `slots`) at the top level and the default scale.
    pub fn encode(&self, values: &[Complex]) -> Result<CkksPlaintext> {
        self.encode_at(values, self.params.max_level(), self.params.default_scale())
    }

    /// Real values at the top level and the default scale.
    pub fn encode_real(&self, values: &[f64]) -> Result<CkksPlaintext> {
        let c: Vec<Complex> = values.iter().map(|&re| Complex { re, im: 0.0 }).collect();
        self.encode(&c)
    }

    pub fn encode_at(&self, values: &[Complex], level: usize, scale: f64) -> Result<CkksPlaintext> {
        let coeffs = self.encoder.encode(values, scale, level)?;
        CkksPlaintext::from_raw(self.params.clone(), level, scale, coeffs)
    }

    /// All `N/2` slots of a plaintext.
    pub fn decode(&self, pt: &CkksPlaintext) -> Result<Vec<Complex>> {
        check_params(&self.params, pt.params())?;
        self.encoder.decode(pt.coeffs(), pt.level(), pt.scale(), self.params.slots())
    }

    /// Public-key encryption of `pt` with the randomness of `seed`, resident on the backend.
    pub fn encrypt_seeded(&self, pk: &CkksPublicKey, pt: &CkksPlaintext, seed: &Seed) -> Result<CkksHandle> {
        check_params(&self.params, pk.params())?;
        let ops = ckks_ops(&*self.backend)?;
        let ct = encrypt_pk_with(&*self.backend, pk, pt, seed, &|len| ops.result_buffer(&self.params, len))?;
        ops.upload_owned(ct)
    }

    /// Public-key encryption of `values` (encoded at the top level) with OS randomness.
    pub fn encrypt(&self, pk: &CkksPublicKey, values: &[Complex]) -> Result<CkksHandle> {
        self.encrypt_seeded(pk, &self.encode(values)?, &Seed::from_os()?)
    }

    /// Secret-key encryption with the randomness of `seed`.
    pub fn encrypt_sk_seeded(&self, sk: &CkksSecretKey, pt: &CkksPlaintext, seed: &Seed) -> Result<CkksHandle> {
        check_params(&self.params, sk.params())?;
        let ct = encrypt_sk(&*self.backend, sk, pt, seed)?;
        ckks_ops(&*self.backend)?.upload_owned(ct)
    }

    /// Secret-key encryption of `values` (encoded at the top level) with OS randomness.
    pub fn encrypt_sk(&self, sk: &CkksSecretKey, values: &[Complex]) -> Result<CkksHandle> {
        self.encrypt_sk_seeded(sk, &self.encode(values)?, &Seed::from_os()?)
    }

    /// The noisy plaintext a resident ciphertext holds (downloads it).
    pub fn decrypt_plaintext(&self, sk: &CkksSecretKey, ct: &CkksHandle) -> Result<CkksPlaintext> {
        check_params(&self.params, sk.params())?;
        let host = ckks_ops(&*self.backend)?.download(ct)?;
        decrypt(&*self.backend, sk, &host)
    }

    /// Decrypts and decodes all `N/2` slots.
    pub fn decrypt(&self, sk: &CkksSecretKey, ct: &CkksHandle) -> Result<Vec<Complex>> {
        self.decode(&self.decrypt_plaintext(sk, ct)?)
    }

    /// An evaluator with `keys` prepared (resident) on the backend.
    pub fn evaluator(&self, keys: &CkksEvalKeys) -> Result<CkksEvaluator> {
        CkksEvaluator::new(self.backend.clone(), self.params.clone(), keys)
    }
}

/// Precision in bits of `got` against `want`: `-log2(max |got - want|)` (capped at 60).
pub fn precision_bits(got: &[Complex], want: &[Complex]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| ((g.re - w.re).powi(2) + (g.im - w.im).powi(2)).sqrt())
        .fold(0.0f64, f64::max);
    if err == 0.0 {
        60.0
    } else {
        (-err.log2()).min(60.0)
    }
}
