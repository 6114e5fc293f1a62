//! The CKKS capability of a backend: evaluation on backend-owned handles.
//!
//! Ciphertexts, plaintexts and switching keys are uploaded once into a backend's own form
//! ([`CkksHandle`], [`PlainHandle`], [`PreparedSwitchKey`]: host memory on the CPU,
//! device buffers on a GPU) and stay there across operations; only [`CkksOps::download`]
//! brings a ciphertext back (to decrypt, serialize or compare). Every operation is exact
//! integer arithmetic with a pinned definition (`docs/CKKS.md`, "Evaluation"), so every
//! backend's downloaded words equal the CPU oracle's.
//!
//! The scheme's bookkeeping (which levels and scales may meet, what a constant encodes
//! to) is written once in [`crate::ckks::eval`]; a backend receives checked operands and
//! computes words. Each method still rejects handles it did not make.

use std::any::Any;
use std::sync::Arc;

use crate::ckks::entities::{CkksCiphertext, CkksPlaintext, SwitchKind, SwitchingKey};
use crate::ckks::params::CkksParams;
use crate::error::Result;

/// A CKKS ciphertext resident in a backend: its metadata on the host, its words wherever
/// the backend keeps them.
pub struct CkksHandle {
    owner: String,
    params: Arc<CkksParams>,
    level: usize,
    scale: f64,
    inner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for CkksHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CkksHandle({}, level {}, scale 2^{:.3}, on {})",
            self.params.name,
            self.level,
            self.scale.log2(),
            self.owner
        )
    }
}

impl CkksHandle {
    pub fn new<T: Any + Send + Sync>(
        owner: String,
        params: Arc<CkksParams>,
        level: usize,
        scale: f64,
        inner: T,
    ) -> Self {
        CkksHandle { owner, params, level, scale, inner: Box::new(inner) }
    }
    pub fn params(&self) -> &Arc<CkksParams> {
        &self.params
    }
    pub fn level(&self) -> usize {
        self.level
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn owner(&self) -> &str {
        &self.owner
    }
    /// The backend's own form; `Error::WrongBackend` when another backend made it.
    pub fn downcast<T: Any>(&self, user: &str) -> Result<&T> {
        super::downcast_owned(&*self.inner, &self.owner, user)
    }
}

/// A plaintext resident in a backend (evaluation form over `q_0 .. q_level`).
pub struct PlainHandle {
    owner: String,
    params: Arc<CkksParams>,
    level: usize,
    scale: f64,
    inner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PlainHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlainHandle({}, level {}, on {})", self.params.name, self.level, self.owner)
    }
}

impl PlainHandle {
    pub fn new<T: Any + Send + Sync>(
        owner: String,
        params: Arc<CkksParams>,
        level: usize,
        scale: f64,
        inner: T,
    ) -> Self {
        PlainHandle { owner, params, level, scale, inner: Box::new(inner) }
    }
    pub fn params(&self) -> &Arc<CkksParams> {
        &self.params
    }
    pub fn level(&self) -> usize {
        self.level
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn downcast<T: Any>(&self, user: &str) -> Result<&T> {
        super::downcast_owned(&*self.inner, &self.owner, user)
    }
}

/// A switching key in a backend's own form (both halves expanded; resident on a device).
pub struct PreparedSwitchKey {
    owner: String,
    params: Arc<CkksParams>,
    kind: SwitchKind,
    inner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PreparedSwitchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedSwitchKey({}, {:?}, on {})", self.params.name, self.kind, self.owner)
    }
}

impl PreparedSwitchKey {
    pub fn new<T: Any + Send + Sync>(owner: String, params: Arc<CkksParams>, kind: SwitchKind, inner: T) -> Self {
        PreparedSwitchKey { owner, params, kind, inner: Box::new(inner) }
    }
    pub fn params(&self) -> &Arc<CkksParams> {
        &self.params
    }
    pub fn kind(&self) -> SwitchKind {
        self.kind
    }
    pub fn downcast<T: Any>(&self, user: &str) -> Result<&T> {
        super::downcast_owned(&*self.inner, &self.owner, user)
    }
}

/// Evaluation on resident handles. Inputs are checked by the caller
/// ([`crate::ckks::eval`]): same parameters, levels as documented per method, keys of
/// the right kind. Results carry the level and scale the method documents.
pub trait CkksOps: Send + Sync {
    /// A host ciphertext into this backend's form.
    fn upload(&self, ct: &CkksCiphertext) -> Result<CkksHandle>;
    /// [`CkksOps::upload`] of a ciphertext the caller no longer needs: a host-memory
    /// backend keeps its buffers instead of copying them (fresh encryptions).
    fn upload_owned(&self, ct: CkksCiphertext) -> Result<CkksHandle> {
        self.upload(&ct)
    }
    /// A host buffer of `len` words with unspecified contents, for a result about to come
    /// back through [`CkksOps::upload_owned`] (a fresh encryption's halves): a host-memory
    /// backend hands out the memory of dropped ciphertexts, already faulted in. The
    /// default allocates.
    fn result_buffer(&self, params: &Arc<CkksParams>, len: usize) -> Vec<u64> {
        let _ = params;
        vec![0; len]
    }
    /// Back to the host, words unchanged.
    fn download(&self, ct: &CkksHandle) -> Result<CkksCiphertext>;
    /// A coefficient-form plaintext into evaluation form, resident.
    fn upload_plaintext(&self, pt: &CkksPlaintext) -> Result<PlainHandle>;
    /// Expands a switching key's seeded `a` halves and keeps both halves resident.
    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey>;

    /// `a + b`, both at one level; scale of `a`.
    fn add(&self, a: &CkksHandle, b: &CkksHandle) -> Result<CkksHandle>;
    /// `a - b`, both at one level; scale of `a`.
    fn sub(&self, a: &CkksHandle, b: &CkksHandle) -> Result<CkksHandle>;
    /// `-a`.
    fn negate(&self, a: &CkksHandle) -> Result<CkksHandle>;
    /// `a + p` (`p` at `a`'s level); scale of `a`.
    fn add_plain(&self, a: &CkksHandle, p: &PlainHandle) -> Result<CkksHandle>;
    /// `a * p` (`p` at `a`'s level); scale `a.scale * p.scale`.
    fn mul_plain(&self, a: &CkksHandle, p: &PlainHandle) -> Result<CkksHandle>;
    /// Adds the integer whose residue modulo `q_i` is `residues[i]` to every message
    /// coefficient's constant term (`c0 + r`); scale of `a`.
    fn add_scalar(&self, a: &CkksHandle, residues: &[u64]) -> Result<CkksHandle>;
    /// Multiplies both parts by the integer with `residues`; scale `a.scale * factor_scale`.
    fn mul_scalar(&self, a: &CkksHandle, residues: &[u64], factor_scale: f64) -> Result<CkksHandle>;
    /// The tensor product relinearized with `rlk` (hybrid key switching of the `c1 c1'`
    /// part); both at one level; scale `a.scale * b.scale`.
    fn mul_relin(&self, a: &CkksHandle, b: &CkksHandle, rlk: &PreparedSwitchKey) -> Result<CkksHandle>;
    /// Divides by the last prime `q_l` with rounding: level `l - 1`, scale `scale / q_l`.
    fn rescale(&self, a: &CkksHandle) -> Result<CkksHandle>;
    /// Drops the top limbs down to `level` (no division); scale unchanged.
    fn drop_to_level(&self, a: &CkksHandle, level: usize) -> Result<CkksHandle>;
    /// `sigma_g(a)` switched back to `s` with the Galois key of `g` (rotation, conjugation).
    fn apply_galois(&self, a: &CkksHandle, key: &PreparedSwitchKey) -> Result<CkksHandle>;
    /// [`CkksOps::apply_galois`] for several keys sharing one decomposition of `a`'s `c1`
    /// (hoisting); the same words as separate calls.
    fn apply_galois_hoisted(&self, a: &CkksHandle, keys: &[&PreparedSwitchKey]) -> Result<Vec<CkksHandle>>;
}
