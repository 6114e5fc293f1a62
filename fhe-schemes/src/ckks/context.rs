//! One CKKS parameter set on one backend: the host-side API a user starts from (key
//! generation, encoding, encryption, decryption, moving ciphertexts to and from bytes),
//! and the door to the evaluator.

use std::sync::Arc;

use fhe_api::ckks::{
    Ciphertext, CkksMeta, EvalKeys, HostCiphertext, KeySet, Params, Plaintext, Preset, PublicKey, Scale, SecretKey,
};
use fhe_api::format::{Decode, TryEncode};
use fhe_api::ops::Backend;
use fhe_api::rng::Seed;
use fhe_api::tag::KeyTag;
use fhe_api::Result;

use crate::ckks::encoding::{Complex, Encoder};
use crate::ckks::encrypt::{decrypt, encrypt_pk, encrypt_sk};
use crate::ckks::evaluator::{check_params, ckks_ops, Evaluator, KeyLevels, Mode, OpenParams};
use crate::ckks::keygen::{
    each_eval_key_from_secret, eval_keys_from_secret, galois_key_from_seed, keygen, KeygenOptions,
};

/// A CKKS parameter set bound to a backend that declares the CKKS capability.
pub struct Context {
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    encoder: Encoder,
    _open: OpenParams,
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
        let _open = OpenParams::new(&backend, &params)?;
        let encoder = Encoder::new(&params)?;
        Ok(Context { backend, params, encoder, _open })
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
    pub fn galois_key_from_seed(&self, seed: &Seed, g: u64) -> Result<fhe_api::ckks::SwitchingKey> {
        galois_key_from_seed(&*self.backend, &self.params, seed, g)
    }

    /// The evaluation keys `options` names, made later from the secret key alone (OS
    /// randomness): a key set made without a rotation gains it here, then
    /// [`Evaluator::add_keys`]. The keys carry `sk`'s tag.
    pub fn eval_keys(&self, sk: &SecretKey, options: &KeygenOptions) -> Result<EvalKeys> {
        self.eval_keys_seeded(sk, options, &Seed::from_os()?)
    }

    /// [`Context::eval_keys`] with the randomness of `seed` (reproducible).
    pub fn eval_keys_seeded(&self, sk: &SecretKey, options: &KeygenOptions, seed: &Seed) -> Result<EvalKeys> {
        check_params(&self.params, sk.params())?;
        eval_keys_from_secret(&*self.backend, sk, seed, options)
    }

    /// An evaluator in `mode` holding the keys of [`Context::eval_keys_seeded`] (the same
    /// words), made from `sk` and prepared one at a time ([`Evaluator::add_keys_up_to`]
    /// with `levels`): the host never holds the key set beside the prepared keys, which
    /// is what a bootstrap's memory estimate assumes.
    pub fn evaluator_from_secret(
        &self,
        sk: &SecretKey,
        options: &KeygenOptions,
        mode: Mode,
        levels: &KeyLevels,
        seed: &Seed,
    ) -> Result<Evaluator> {
        check_params(&self.params, sk.params())?;
        let ev = self.evaluator_with(&EvalKeys::default(), mode)?;
        each_eval_key_from_secret(&*self.backend, sk, seed, options, |key| {
            let mut one = EvalKeys::default();
            one.insert(key);
            ev.add_keys_up_to(&one, levels)
        })?;
        Ok(ev)
    }

    /// Galois keys for rotations by `steps`, from the secret key alone.
    pub fn rotation_keys(&self, sk: &SecretKey, steps: &[i64]) -> Result<EvalKeys> {
        let options = KeygenOptions { relin: false, rotations: steps.to_vec(), conjugation: false };
        self.eval_keys(sk, &options)
    }

    /// Values (up to `slots`; `f64` or [`Complex`]) at the top level and the default
    /// scale; missing slots are zero.
    pub fn encode<T: Copy + Into<Complex>>(&self, values: &[T]) -> Result<Plaintext> {
        self.encode_at(values, self.params.max_level(), self.params.default_scale())
    }

    /// Values at `level` and `scale`.
    pub fn encode_at<T: Copy + Into<Complex>>(&self, values: &[T], level: usize, scale: Scale) -> Result<Plaintext> {
        self.encode_sparse(values, self.params.slots(), level, scale)
    }

    /// Sparse packing (as OpenFHE and Lattigo allow): `slots` values (a power of two up to
    /// `N/2`) in the subring of `X^(N / 2 slots)`; every slot of the full `N/2` repeats
    /// them, so rotations act on the `slots`-cycle. Decode with [`Context::decode_slots`].
    pub fn encode_sparse<T: Copy + Into<Complex>>(
        &self,
        values: &[T],
        slots: usize,
        level: usize,
        scale: Scale,
    ) -> Result<Plaintext> {
        let values: Vec<Complex> = values.iter().map(|&v| v.into()).collect();
        let meta = CkksMeta::new(self.params.clone(), level, scale, KeyTag::NONE)?;
        let coeffs = self.encoder.encode_with_slots(&values, slots, scale.value(), level)?;
        Plaintext::from_reduced(meta, coeffs)
    }

    /// An extended plaintext (limbs over the special primes too): what a sum of rotations
    /// with one lazy ModDown multiplies by ([`Evaluator::sum_of_rotations`]). It has no
    /// byte encoding; prepare it with [`Evaluator::prepare_plaintext`].
    pub fn encode_extended<T: Copy + Into<Complex>>(
        &self,
        values: &[T],
        level: usize,
        scale: Scale,
    ) -> Result<Plaintext> {
        Ok(self.encode_extended_ints(values, level, scale)?.0)
    }

    /// [`Context::encode_extended`], and its integer coefficients when every one is
    /// below `2^63` in magnitude (what a compact plaintext keeps).
    pub fn encode_extended_ints<T: Copy + Into<Complex>>(
        &self,
        values: &[T],
        level: usize,
        scale: Scale,
    ) -> Result<(Plaintext, Option<Vec<i64>>)> {
        let values: Vec<Complex> = values.iter().map(|&v| v.into()).collect();
        let meta = CkksMeta::new(self.params.clone(), level, scale, KeyTag::NONE)?;
        let special: Vec<_> = self.params.p().iter().map(|p| fhe_api::ring::modulus::Modulus::new(p.0)).collect();
        let (q, p, ints) =
            self.encoder.encode_extended(&values, self.params.slots(), scale.value(), level, &special)?;
        Ok((Plaintext::extended_from_reduced(meta, q, p)?, ints))
    }

    /// All `N/2` slots of a plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex>> {
        self.decode_slots(pt, self.params.slots())
    }

    /// The first `slots` slots (a sparse packing's values).
    pub fn decode_slots(&self, pt: &Plaintext, slots: usize) -> Result<Vec<Complex>> {
        check_params(&self.params, pt.params())?;
        self.encoder.decode(pt.coeffs(), pt.level(), pt.scale().value(), slots)
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

    /// The noisy plaintext a resident ciphertext holds (downloads it). A ciphertext of
    /// another key set is `Error::WrongKey`.
    pub fn decrypt_plaintext(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Plaintext> {
        check_params(&self.params, sk.params())?;
        decrypt(&*self.backend, sk, self.download(ct)?)
    }

    /// Decrypts and decodes all `N/2` slots.
    pub fn decrypt(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<Complex>> {
        self.decode(&self.decrypt_plaintext(sk, ct)?)
    }

    /// Decrypts and decodes the first `slots` slots (sparse packing).
    pub fn decrypt_slots(&self, sk: &SecretKey, ct: &Ciphertext, slots: usize) -> Result<Vec<Complex>> {
        self.decode_slots(&self.decrypt_plaintext(sk, ct)?, slots)
    }

    /// A resident ciphertext back on the host (to serialize or compare), words unchanged.
    pub fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        check_params(&self.params, ct.params())?;
        ckks_ops(&*self.backend)?.download(ct)
    }

    /// A host ciphertext onto the backend.
    pub fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        check_params(&self.params, ct.params())?;
        ckks_ops(&*self.backend)?.upload(ct)
    }

    /// The ciphertext's bytes in the versioned format (`docs/FORMAT.md`).
    pub fn to_bytes(&self, ct: &Ciphertext) -> Result<Vec<u8>> {
        self.download(ct)?.try_encode()
    }

    /// A ciphertext from [`Context::to_bytes`]'s bytes, resident; bytes of another
    /// preset are `Error::ParamMismatch`, malformed ones `Error::Decode`.
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<Ciphertext> {
        self.upload(&HostCiphertext::decode(bytes)?)
    }

    /// An evaluator in the manual mode with `keys` prepared (resident) on the backend.
    pub fn evaluator(&self, keys: &EvalKeys) -> Result<Evaluator> {
        self.evaluator_with(keys, Mode::Manual)
    }

    /// An evaluator in `mode` ([`Mode::Auto`] rescales and matches levels and scales
    /// itself).
    pub fn evaluator_with(&self, keys: &EvalKeys, mode: Mode) -> Result<Evaluator> {
        Evaluator::new(self.backend.clone(), self.params.clone(), keys, mode)
    }

    /// An evaluator in `mode` whose Galois keys named in `levels` are prepared for switches
    /// up to their levels only (`Bootstrapper::key_levels`: less memory, same words).
    pub fn evaluator_up_to(&self, keys: &EvalKeys, mode: Mode, levels: &KeyLevels) -> Result<Evaluator> {
        Evaluator::new_up_to(self.backend.clone(), self.params.clone(), keys, mode, levels)
    }
}

/// Precision in bits of `got` against `want`: `-log2(max |got - want|)` (capped at 60).
pub fn precision_bits(got: &[Complex], want: &[Complex]) -> f64 {
    let err = got.iter().zip(want).map(|(&g, &w)| (g - w).abs()).fold(0.0f64, f64::max);
    if err == 0.0 {
        60.0
    } else {
        (-err.log2()).min(60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_cpu::CpuBackend;

    /// The backend's work buffers for a parameter set live while a context or evaluator of
    /// it does, and go when the last is dropped (not at the backend's end).
    #[test]
    fn dropping_the_last_context_and_evaluator_frees_the_work_buffers() {
        let cpu = Arc::new(CpuBackend::oracle());
        let backend: Arc<dyn Backend> = cpu.clone();
        let params = Arc::new(Preset::Slots4096Scale40Depth2.params().clone());
        let plan = cpu.ckks_plan(&params).unwrap();
        let ctx = Context::new(backend, params.clone()).unwrap();
        let keys = ctx.keygen_from_seed(&Seed([3; 32]), &KeygenOptions::default()).unwrap();
        let ev = ctx.evaluator(&keys.eval).unwrap();
        let x = [Complex::new(0.5, 0.0)];
        let ct = ctx.encrypt(&keys.pk, &ctx.encode(&x).unwrap()).unwrap();
        drop(ev.rescale(&ev.mul(&ct, &ct).unwrap()).unwrap());
        drop(ct);
        assert!(plan.kept_bytes() > 0, "a multiplication's buffers are kept for the next");
        drop(ctx);
        assert!(plan.kept_bytes() > 0, "the evaluator is still open");
        drop(ev);
        assert_eq!(plan.kept_bytes(), 0);
    }
}
