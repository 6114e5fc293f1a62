//! One CKKS parameter set on one backend: the host-side API a user starts from (key
//! generation, encoding, encryption, decryption), and the door to the evaluator.

use std::sync::Arc;

use crate::ckks::encoding::{Complex, Encoder};
use crate::ckks::encrypt::{decrypt, encrypt_pk, encrypt_sk};
use crate::ckks::evaluator::{check_params, ckks_ops, Evaluator};
use crate::ckks::keygen::{galois_key_from_seed, keygen, KeygenOptions};
use fhe_api::ckks::entities::{EvalKeys, KeySet, Plaintext, PublicKey, SecretKey, SwitchingKey};
use fhe_api::ckks::params::{Params, Preset};
use fhe_api::ckks::Ciphertext;
use fhe_api::error::Result;
use fhe_api::ops::Backend;
use fhe_api::rng::Seed;

/// A CKKS parameter set bound to a backend that declares the CKKS capability.
pub struct Context {
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    encoder: Encoder,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Context({} on {})", self.params.name(), self.backend.name())
    }
}

impl Context {
    /// `Error::Unsupported` when the backend has no CKKS; `Error::SecurityBound` when the
    /// parameters exceed the 128-bit bound.
    pub fn new(backend: Arc<dyn Backend>, params: Arc<Params>) -> Result<Self> {
        ckks_ops(&*backend)?;
        params.check_security()?;
        let encoder = Encoder::new(&params)?;
        Ok(Context { backend, params, encoder })
    }

    pub fn from_preset(backend: Arc<dyn Backend>, preset: Preset) -> Result<Self> {
        Self::new(backend, Arc::new(preset.params().clone()))
    }

    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Every key from `seed` (reproducible on every backend, byte for byte).
    pub fn keygen_from_seed(&self, seed: &Seed, options: &KeygenOptions) -> Result<KeySet> {
        keygen(&*self.backend, &self.params, seed, options)
    }

    /// Every key from OS randomness.
    pub fn keygen(&self, options: &KeygenOptions) -> Result<KeySet> {
        self.keygen_from_seed(&Seed::from_os()?, options)
    }

    /// One more Galois key (element `g`) for the secret of `seed`.
    pub fn galois_key_from_seed(&self, seed: &Seed, g: u64) -> Result<SwitchingKey> {
        galois_key_from_seed(&*self.backend, &self.params, seed, g)
    }

    /// Values (up to `slots`; `f64` or [`Complex`]) at the top level and the default
    /// scale; missing slots are zero.
    pub fn encode<T: Copy + Into<Complex>>(&self, values: &[T]) -> Result<Plaintext> {
        self.encode_at(values, self.params.max_level(), self.params.default_scale())
    }

    /// Values at `level` and `scale`.
    pub fn encode_at<T: Copy + Into<Complex>>(&self, values: &[T], level: usize, scale: f64) -> Result<Plaintext> {
        let values: Vec<Complex> = values.iter().map(|&v| v.into()).collect();
        let coeffs = self.encoder.encode(&values, scale, level)?;
        Plaintext::from_raw(self.params.clone(), level, scale, coeffs)
    }

    /// All `N/2` slots of a plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex>> {
        check_params(&self.params, pt.params())?;
        self.encoder.decode(pt.coeffs(), pt.level(), pt.scale(), self.params.slots())
    }

    /// Public-key encryption of `pt` with the randomness of `seed`, resident on the backend.
    pub fn encrypt_seeded(&self, pk: &PublicKey, pt: &Plaintext, seed: &Seed) -> Result<Ciphertext> {
        check_params(&self.params, pk.params())?;
        let ops = ckks_ops(&*self.backend)?;
        let ct = encrypt_pk(&*self.backend, pk, pt, seed, &|len| ops.result_buffer(&self.params, len))?;
        ops.upload_owned(ct)
    }

    /// Public-key encryption of `pt` with OS randomness, resident on the backend.
    pub fn encrypt(&self, pk: &PublicKey, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_seeded(pk, pt, &Seed::from_os()?)
    }

    /// Secret-key encryption with the randomness of `seed`.
    pub fn encrypt_sk_seeded(&self, sk: &SecretKey, pt: &Plaintext, seed: &Seed) -> Result<Ciphertext> {
        check_params(&self.params, sk.params())?;
        let ct = encrypt_sk(&*self.backend, sk, pt, seed)?;
        ckks_ops(&*self.backend)?.upload_owned(ct)
    }

    /// Secret-key encryption of `pt` with OS randomness.
    pub fn encrypt_sk(&self, sk: &SecretKey, pt: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_sk_seeded(sk, pt, &Seed::from_os()?)
    }

    /// The noisy plaintext a resident ciphertext holds (downloads it).
    pub fn decrypt_plaintext(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Plaintext> {
        check_params(&self.params, sk.params())?;
        let host = ckks_ops(&*self.backend)?.download(ct)?;
        decrypt(&*self.backend, sk, &host)
    }

    /// Decrypts and decodes all `N/2` slots.
    pub fn decrypt(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<Complex>> {
        self.decode(&self.decrypt_plaintext(sk, ct)?)
    }

    /// An evaluator with `keys` prepared (resident) on the backend.
    pub fn evaluator(&self, keys: &EvalKeys) -> Result<Evaluator> {
        Evaluator::new(self.backend.clone(), self.params.clone(), keys)
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
