//! Evaluation: prepare the evaluation key once, then blind-rotate, key-switch and
//! bootstrap whole batches.

use std::any::Any;

use crate::entities::{EvaluationKey, ExtractedLwe, LweCiphertext};
use crate::error::{Error, Result};
use crate::lut::Lut;
use crate::params::ParamSet;
use crate::tag::KeyTag;

/// An evaluation key in a backend's own form (evaluation-form bootstrap key in memory,
/// or buffers resident on a device). Only the backend that made it can use it.
pub struct PreparedKey {
    owner: String,
    params: ParamSet,
    tag: KeyTag,
    inner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PreparedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedKey({}, tag {}, owner {})", self.params, self.tag, self.owner)
    }
}

impl PreparedKey {
    /// `ek`'s resident form `inner`, made by backend `owner`; it keeps `ek`'s set and tag.
    pub fn new<T: Any + Send + Sync>(owner: String, ek: &EvaluationKey, inner: T) -> Self {
        PreparedKey { owner, params: ek.params(), tag: ek.tag(), inner: Box::new(inner) }
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    /// The evaluation key's tag: every output of an operation with this key carries it.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn owner(&self) -> &str {
        &self.owner
    }
    /// The backend's own form; `Error::WrongBackend` when another backend made it.
    pub fn downcast<T: Any>(&self, user: &str) -> Result<&T> {
        super::downcast_owned(&*self.inner, &self.owner, user)
    }
}

/// Checks that every input `(set, tag)` belongs to the key: its parameter set
/// (`Error::ParamMismatch`) and its key tag, the key's or none (`Error::WrongKey`). Every
/// backend calls it before any work, and tags its outputs with [`PreparedKey::tag`].
pub fn check_inputs<I>(key: &PreparedKey, inputs: I) -> Result<()>
where
    I: IntoIterator<Item = (ParamSet, KeyTag)>,
{
    for (p, tag) in inputs {
        if p != key.params() {
            return Err(Error::ParamMismatch { expected: key.params().name(), found: p.name() });
        }
        tag.check_against(key.tag())?;
    }
    Ok(())
}

pub trait BootstrapOps {
    /// Turn a serialized-form evaluation key into this backend's resident form.
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey>;

    /// For each input: mod-switch to `2N`, blind-rotate the sign test polynomial
    /// ([`Lut::sign`], all coefficients `round(Q/8)`), sample-extract coefficient 0. The
    /// result encrypts `+round(Q/8)` when the input phase is in `[0, q/2)`, else
    /// `-round(Q/8)`. Backends implement it as [`BootstrapOps::blind_rotate_batch_lut`]
    /// with the sign table, kept resident.
    fn blind_rotate_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>>;

    /// For each input: mod-switch to `2N`, blind-rotate the test polynomial of `lut`,
    /// sample-extract coefficient 0. The result encrypts `lut.value(m)` for the input's
    /// mod-switched phase `m` (programmable bootstrapping). A table of another set is
    /// `Error::ParamMismatch`.
    ///
    /// Every backend implements it. The default serves only the sign table (through
    /// `blind_rotate_batch`) and refuses any other with `Error::Unsupported`, so that
    /// wrappers written before tables existed keep compiling; the conformance suite
    /// (`lut_matches_oracle`) fails a backend that relies on it.
    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>> {
        lut.check_params(key.params())?;
        if !lut.is_sign() {
            return Err(Error::Unsupported {
                backend: key.owner().to_string(),
                scheme: "blind rotation with a look-up table other than the sign",
            });
        }
        self.blind_rotate_batch(key, inputs)
    }

    /// For each input: mod-switch `Q -> q`, then key-switch from the ring secret to `s`.
    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>>;

    /// Sign bootstrap: blind rotation, key switch, plus `q/8`. The output encrypts bit 1
    /// when the input phase is in `[0, q/2)`, else bit 0, with fresh noise. Backends
    /// override this to fuse the steps (one pass on a device).
    fn bootstrap_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        let rotated = self.blind_rotate_batch(key, inputs)?;
        let switched = self.key_switch_batch(key, &rotated)?;
        let eighth = (key.params().params().q_lwe() / 8) as u32;
        switched.iter().map(|ct| LweCiphertext::linear_combination(&[(1, ct)], eighth)).collect()
    }
}
