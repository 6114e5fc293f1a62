//! [`Delegate`]: a backend that forwards every method of every op trait to an inner
//! backend, provided methods included (so an inner backend's fused or resident forms are
//! the ones that run), and passes chosen outputs through [`Tamper`] hooks. Tests that
//! prove a gate can fail wrap the oracle in it; since the forwarding is written once
//! here, no wrapper can silently fall back to a trait default and test something else.

use std::sync::Arc;

use crate::ckks::{
    Ciphertext, CkksMeta, ExtCiphertext, Hoisted, HostCiphertext, Params, Plaintext, PreparedPlaintext,
    PreparedSwitchKey, SwitchingKey,
};
use crate::error::Result;
use crate::ops::{Backend, BootstrapOps, CkksOps, ConstResidues, DeviceInfo, PreparedKey, RingOps};
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
    /// Applied to every [`BootstrapOps::blind_rotate_batch_lut`] result.
    fn blind_rotate(&self, out: Vec<ExtractedLwe>) -> Result<Vec<ExtractedLwe>> {
        Ok(out)
    }
    /// Whether the wrapper declares that the inner backend prepares keys of `set`
    /// ([`Backend::prepares`]).
    fn declares_set(&self, set: crate::ParamSet) -> bool {
        let _ = set;
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
    fn in_place(&self, op: &'static str, acc: &mut Ciphertext) -> Result<()> {
        *acc = self.tamper.ckks(op, self.ops(), acc.clone())?;
        Ok(())
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
        self.tamper.blind_rotate(self.inner.blind_rotate_batch_lut(key, inputs, lut)?)
    }
    fn blind_rotate_batch_lut_at(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
        at: &[usize],
    ) -> Result<Vec<ExtractedLwe>> {
        self.tamper.blind_rotate(self.inner.blind_rotate_batch_lut_at(key, inputs, lut, at)?)
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
    fn context_opened(&self, params: &Arc<Params>) {
        self.ops().context_opened(params)
    }
    fn context_closed(&self, params: &Arc<Params>) {
        self.ops().context_closed(params)
    }
    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        self.ops().download(ct)
    }
    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        self.ops().upload_plaintext(pt)
    }
    fn upload_plaintext_compact(&self, pt: &Plaintext, ints: &[i64]) -> Result<PreparedPlaintext> {
        self.ops().upload_plaintext_compact(pt, ints)
    }
    fn keeps_compact_plaintexts(&self) -> bool {
        self.ops().keeps_compact_plaintexts()
    }
    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        self.ops().prepare_key(key)
    }
    fn prepare_key_up_to(&self, key: &SwitchingKey, max_level: usize) -> Result<PreparedSwitchKey> {
        self.ops().prepare_key_up_to(key, max_level)
    }
    fn add(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("add", self.ops().add(a, b, out))
    }
    fn sub(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("sub", self.ops().sub(a, b, out))
    }
    fn negate(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("negate", self.ops().negate(a, out))
    }
    fn add_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.ops().add_assign(acc, b)?;
        self.in_place("add_assign", acc)
    }
    fn sub_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.ops().sub_assign(acc, b)?;
        self.in_place("sub_assign", acc)
    }
    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("add_plain", self.ops().add_plain(a, p, out))
    }
    fn sub_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("sub_plain", self.ops().sub_plain(a, p, out))
    }
    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mul_plain", self.ops().mul_plain(a, p, out))
    }
    fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &PreparedPlaintext) -> Result<()> {
        self.ops().mul_plain_then_add(acc, a, p)?;
        self.in_place("mul_plain_then_add", acc)
    }
    fn add_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        self.one("add_const", self.ops().add_const(a, c, out))
    }
    fn mul_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mul_const", self.ops().mul_const(a, c, out))
    }
    fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, c: &ConstResidues) -> Result<()> {
        self.ops().mul_const_then_add(acc, a, c)?;
        self.in_place("mul_const_then_add", acc)
    }
    fn mul_monomial(&self, a: &Ciphertext, k: usize, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mul_monomial", self.ops().mul_monomial(a, k, out))
    }
    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("tensor", self.ops().tensor(a, b, out))
    }
    fn mul_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        self.ops().mul_then_add(acc, a, b)?;
        self.in_place("mul_then_add", acc)
    }
    fn relinearize(&self, a: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.one("relinearize", self.ops().relinearize(a, rlk, out))
    }
    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mul_relin", self.ops().mul_relin(a, b, rlk, out))
    }
    fn rescale(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("rescale", self.ops().rescale(a, out))
    }
    fn mul_relin_rescale(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rlk: &PreparedSwitchKey,
        mid: CkksMeta,
        out: CkksMeta,
    ) -> Result<Ciphertext> {
        self.one("mul_relin_rescale", self.ops().mul_relin_rescale(a, b, rlk, mid, out))
    }
    fn drop_to_level(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("drop_to_level", self.ops().drop_to_level(a, out))
    }
    fn mod_raise(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mod_raise", self.ops().mod_raise(a, out))
    }
    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.one("apply_galois", self.ops().apply_galois(a, key, out))
    }
    fn hoist(&self, a: &Ciphertext) -> Result<Hoisted> {
        self.ops().hoist(a)
    }
    fn apply_galois_hoisted(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<Ciphertext>> {
        let out = self.ops().apply_galois_hoisted(h, keys, out)?;
        out.into_iter().map(|c| self.tamper.ckks("apply_galois_hoisted", self.ops(), c)).collect()
    }
    fn apply_galois_lazy(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<ExtCiphertext>> {
        self.ops().apply_galois_lazy(h, keys, out)
    }
    fn lift(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext> {
        self.ops().lift(a, out)
    }
    fn ext_mul_plain(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext> {
        self.ops().ext_mul_plain(x, p, out)
    }
    fn ext_mul_plain_then_add(&self, acc: &mut ExtCiphertext, x: &ExtCiphertext, p: &PreparedPlaintext) -> Result<()> {
        self.ops().ext_mul_plain_then_add(acc, x, p)
    }
    fn ext_dot_plain(&self, xs: &[&ExtCiphertext], ps: &[&PreparedPlaintext], out: CkksMeta) -> Result<ExtCiphertext> {
        self.ops().ext_dot_plain(xs, ps, out)
    }
    fn mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.one("mod_down", self.ops().mod_down(x, out))
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
    fn prepares(&self, set: crate::ParamSet) -> bool {
        self.inner.prepares(set) && self.tamper.declares_set(set)
    }
}
