//! [`Delegate`]: a backend that forwards every method of every op trait to an inner
//! backend, provided methods included (so an inner backend's fused or resident forms are
//! the ones that run), and passes chosen outputs through [`Tamper`] hooks. Tests that
//! prove a gate can fail wrap the oracle in it; since the forwarding is written once
//! here, no wrapper can silently fall back to a trait default and test something else.

use std::sync::Arc;

use crate::ckks::{Ciphertext, HostCiphertext, Params, Plaintext, PreparedPlaintext, PreparedSwitchKey, SwitchingKey};
use crate::error::Result;
use crate::ops::{Backend, BootstrapOps, CkksOps, DeviceInfo, PreparedKey, RingOps};
use crate::registry::BackendKind;
use crate::ring::{PolynomialSize, RingModulus};
use crate::tfhe::entities::{EvaluationKey, ExtractedLwe, LweCiphertext};
use crate::tfhe::lut::Lut;

/// How a [`Delegate`] changes its inner backend; every hook's default changes nothing.
pub trait Tamper: Send + Sync + 'static {
    /// The wrapper's [`Backend::name`].
    fn name(&self) -> String;
    /// Applied to every batch [`RingOps::ring_forward`] returns.
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        let _ = (n, q, data);
        Ok(())
    }
    /// Applied to every [`BootstrapOps::bootstrap_batch`] result.
    fn bootstrap(&self, out: Vec<LweCiphertext>) -> Result<Vec<LweCiphertext>> {
        Ok(out)
    }
    /// Applied to every ciphertext a CKKS operation returns; `op` is the [`CkksOps`]
    /// method's name and `ops` the inner backend's CKKS (to download and re-upload).
    fn ckks(&self, op: &'static str, ops: &dyn CkksOps, out: Ciphertext) -> Result<Ciphertext> {
        let _ = (op, ops);
        Ok(out)
    }
    /// Whether the wrapper declares the inner backend's CKKS capability.
    fn declares_ckks(&self) -> bool {
        true
    }
}

/// `inner` with the changes of `tamper`.
pub struct Delegate<B, T> {
    inner: B,
    tamper: T,
}

impl<B: Backend, T: Tamper> Delegate<B, T> {
    pub fn new(inner: B, tamper: T) -> Self {
        Delegate { inner, tamper }
    }
    pub fn inner(&self) -> &B {
        &self.inner
    }
    fn ops(&self) -> &dyn CkksOps {
        self.inner.ckks().expect("Delegate::ckks declares CKKS only where the inner backend has it")
    }
    fn one(&self, op: &'static str, out: Result<Ciphertext>) -> Result<Ciphertext> {
        self.tamper.ckks(op, self.ops(), out?)
    }
}

impl<B: Backend, T: Tamper> RingOps for Delegate<B, T> {
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.inner.ring_forward(n, q, data)?;
        self.tamper.ring_forward(n, q, data)
    }
    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.inner.ring_inverse(n, q, data)
    }
    fn ring_mul_add(&self, q: RingModulus, a: &[u64], b: &[u64], acc: &mut [u64]) -> Result<()> {
        self.inner.ring_mul_add(q, a, b, acc)
    }
    fn ntt_variant(&self) -> &str {
        self.inner.ntt_variant()
    }
}

impl<B: Backend, T: Tamper> BootstrapOps for Delegate<B, T> {
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        self.inner.prepare(ek)
    }
    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>> {
        self.inner.blind_rotate_batch_lut(key, inputs, lut)
    }
    fn blind_rotate_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>> {
        self.inner.blind_rotate_batch(key, inputs)
    }
    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>> {
        self.inner.key_switch_batch(key, inputs)
    }
    fn bootstrap_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        self.tamper.bootstrap(self.inner.bootstrap_batch(key, inputs)?)
    }
}

impl<B: Backend, T: Tamper> CkksOps for Delegate<B, T> {
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        self.ops().upload(ct)
    }
    fn upload_owned(&self, ct: HostCiphertext) -> Result<Ciphertext> {
        self.ops().upload_owned(ct)
    }
    fn result_buffer(&self, params: &Arc<Params>, len: usize) -> Vec<u64> {
        self.ops().result_buffer(params, len)
    }
    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        self.ops().download(ct)
    }
    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        self.ops().upload_plaintext(pt)
    }
    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        self.ops().prepare_key(key)
    }
    fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.one("add", self.ops().add(a, b))
    }
    fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.one("sub", self.ops().sub(a, b))
    }
    fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.one("negate", self.ops().negate(a))
    }
    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext> {
        self.one("add_plain", self.ops().add_plain(a, p))
    }
    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext> {
        self.one("mul_plain", self.ops().mul_plain(a, p))
    }
    fn add_scalar(&self, a: &Ciphertext, residues: &[u64]) -> Result<Ciphertext> {
        self.one("add_scalar", self.ops().add_scalar(a, residues))
    }
    fn mul_scalar(&self, a: &Ciphertext, residues: &[u64], factor_scale: f64) -> Result<Ciphertext> {
        self.one("mul_scalar", self.ops().mul_scalar(a, residues, factor_scale))
    }
    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey) -> Result<Ciphertext> {
        self.one("mul_relin", self.ops().mul_relin(a, b, rlk))
    }
    fn rescale(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.one("rescale", self.ops().rescale(a))
    }
    fn drop_to_level(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.one("drop_to_level", self.ops().drop_to_level(a, level))
    }
    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey) -> Result<Ciphertext> {
        self.one("apply_galois", self.ops().apply_galois(a, key))
    }
    fn apply_galois_hoisted(&self, a: &Ciphertext, keys: &[&PreparedSwitchKey]) -> Result<Vec<Ciphertext>> {
        let out = self.ops().apply_galois_hoisted(a, keys)?;
        out.into_iter().map(|h| self.tamper.ckks("apply_galois_hoisted", self.ops(), h)).collect()
    }
}

impl<B: Backend, T: Tamper> Backend for Delegate<B, T> {
    fn kind(&self) -> BackendKind {
        self.inner.kind()
    }
    fn name(&self) -> String {
        self.tamper.name()
    }
    fn device_info(&self) -> DeviceInfo {
        self.inner.device_info()
    }
    fn ckks(&self) -> Option<&dyn CkksOps> {
        match self.inner.ckks() {
            Some(_) if self.tamper.declares_ckks() => Some(self),
            _ => None,
        }
    }
}
