//! The CKKS capability of a backend: evaluation on backend-owned handles.
//!
//! Ciphertexts, plaintexts and switching keys are uploaded once into a backend's own form
//! ([`Ciphertext`], [`PreparedPlaintext`], [`PreparedSwitchKey`]: host memory on the CPU,
//! device buffers on a GPU) and stay there across operations; only [`CkksOps::download`]
//! brings a ciphertext back (to decrypt, serialize or compare). Every operation is exact
//! integer arithmetic with a pinned definition (`docs/CKKS.md`, "Evaluation"), so every
//! backend's downloaded words equal the CPU oracle's.
//!
//! The scheme's bookkeeping (which levels and scales may meet, what a constant encodes
//! to) is written once on the host (`fhe_schemes::ckks`'s evaluator); a backend receives
//! checked operands and computes words. Each method still rejects handles it did not make.

use std::sync::Arc;

use crate::ckks::entities::{HostCiphertext, Plaintext, SwitchingKey};
use crate::ckks::meta::{Ciphertext, PreparedPlaintext, PreparedSwitchKey};
use crate::ckks::params::Params;
use crate::error::Result;

/// Evaluation on resident handles. Inputs are checked by the caller (the evaluator): same parameters, levels as documented per method, keys of
/// the right kind. Results carry the level and scale the method documents.
pub trait CkksOps: Send + Sync {
    /// A host ciphertext into this backend's form.
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext>;
    /// [`CkksOps::upload`] of a ciphertext the caller no longer needs: a host-memory
    /// backend keeps its buffers instead of copying them (fresh encryptions).
    fn upload_owned(&self, ct: HostCiphertext) -> Result<Ciphertext> {
        self.upload(&ct)
    }
    /// A host buffer of `len` words with unspecified contents, for a result about to come
    /// back through [`CkksOps::upload_owned`] (a fresh encryption's halves): a host-memory
    /// backend hands out the memory of dropped ciphertexts, already faulted in. The
    /// default allocates.
    fn result_buffer(&self, params: &Arc<Params>, len: usize) -> Vec<u64> {
        let _ = params;
        vec![0; len]
    }
    /// Back to the host, words unchanged.
    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext>;
    /// A coefficient-form plaintext into evaluation form, resident.
    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext>;
    /// Expands a switching key's seeded `a` halves and keeps both halves resident.
    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey>;

    /// `a + b`, both at one level; scale of `a`.
    fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext>;
    /// `a - b`, both at one level; scale of `a`.
    fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext>;
    /// `-a`.
    fn negate(&self, a: &Ciphertext) -> Result<Ciphertext>;
    /// `a + p` (`p` at `a`'s level); scale of `a`.
    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext>;
    /// `a * p` (`p` at `a`'s level); scale `a.scale * p.scale`.
    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext>;
    /// Adds the integer whose residue modulo `q_i` is `residues[i]` to every message
    /// coefficient's constant term (`c0 + r`); scale of `a`.
    fn add_scalar(&self, a: &Ciphertext, residues: &[u64]) -> Result<Ciphertext>;
    /// Multiplies both parts by the integer with `residues`; scale `a.scale * factor_scale`.
    fn mul_scalar(&self, a: &Ciphertext, residues: &[u64], factor_scale: f64) -> Result<Ciphertext>;
    /// The tensor product relinearized with `rlk` (hybrid key switching of the `c1 c1'`
    /// part); both at one level; scale `a.scale * b.scale`.
    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey) -> Result<Ciphertext>;
    /// Divides by the last prime `q_l` with rounding: level `l - 1`, scale `scale / q_l`.
    fn rescale(&self, a: &Ciphertext) -> Result<Ciphertext>;
    /// Drops the top limbs down to `level` (no division); scale unchanged.
    fn drop_to_level(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext>;
    /// `sigma_g(a)` switched back to `s` with the Galois key of `g` (rotation, conjugation).
    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey) -> Result<Ciphertext>;
    /// [`CkksOps::apply_galois`] for several keys sharing one decomposition of `a`'s `c1`
    /// (hoisting); the same words as separate calls.
    fn apply_galois_hoisted(&self, a: &Ciphertext, keys: &[&PreparedSwitchKey]) -> Result<Vec<Ciphertext>>;
}
