//! The bit scheme's evaluation: prepare the evaluation key once, then blind-rotate,
//! key-switch and bootstrap whole batches.

use crate::error::{Error, Result};
use crate::ops::Resident;
use crate::tag::KeyTag;
use crate::tfhe::entities::{EvaluationKey, ExtractedLwe, LweCiphertext};
use crate::tfhe::lut::Lut;
use crate::tfhe::params::ParamSet;

/// What the host knows of a prepared evaluation key: its set and its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMeta {
    params: ParamSet,
    tag: KeyTag,
}

impl KeyMeta {
    /// The set and tag of `ek`: a prepared key keeps both.
    pub fn of(ek: &EvaluationKey) -> KeyMeta {
        KeyMeta { params: ek.params(), tag: ek.tag() }
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    /// The evaluation key's tag: every output of an operation with this key carries it.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
}

/// An evaluation key in a backend's own form (evaluation-form bootstrap key in memory,
/// or buffers resident on a device). Only the backend that made it can use it.
pub type PreparedKey = Resident<KeyMeta>;

/// Checks that every input `(set, tag)` belongs to the key: its parameter set
/// (`Error::ParamMismatch`) and its key tag, the key's or none (`Error::WrongKey`). Every
/// backend calls it before any work, and tags its outputs with the key's tag.
pub fn check_inputs<I>(key: &PreparedKey, inputs: I) -> Result<()>
where
    I: IntoIterator<Item = (ParamSet, KeyTag)>,
{
    for (p, tag) in inputs {
        if p != key.params() {
            return Err(Error::ParamMismatch { expected: key.params().name().into(), found: p.name().into() });
        }
        tag.check_against(key.tag())?;
    }
    Ok(())
}

/// For a backend whose kernels hold LWE words in 16 bits (the gate sets, `q <= 2^16`):
/// refuses a set with wider words (the programmable-bootstrapping sets) with
/// `Error::Unsupported` before anything is uploaded.
pub fn check_narrow_lwe(backend: String, set: ParamSet) -> Result<()> {
    if !set.params().lwe_fits_u16() {
        return Err(Error::Unsupported {
            backend,
            scheme: "parameter sets with LWE words over 16 bits (the programmable-bootstrapping sets)",
        });
    }
    Ok(())
}

pub trait BootstrapOps {
    /// Turn a serialized-form evaluation key into this backend's resident form.
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey>;

    /// For each input: mod-switch to `2N`, blind-rotate the test polynomial of `lut`,
    /// sample-extract coefficient 0. The result encrypts `lut.value(m)` for the input's
    /// mod-switched phase `m` (programmable bootstrapping). A table of another set is
    /// `Error::ParamMismatch`.
    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>>;

    /// [`BootstrapOps::blind_rotate_batch_lut`] reading several coefficients of each
    /// rotated accumulator (many-LUT: a table that holds several functions side by side,
    /// function `j` read at coefficient `at[j]`). Output `i * at.len() + j` encrypts
    /// `lut.value(m + at[j])` for input `i`'s mod-switched phase `m`; each offset is below
    /// `N`. `at = [0]` is [`BootstrapOps::blind_rotate_batch_lut`] itself. A backend
    /// without the extraction at other coefficients refuses with `Error::Unsupported`.
    fn blind_rotate_batch_lut_at(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
        at: &[usize],
    ) -> Result<Vec<ExtractedLwe>> {
        if at == [0] {
            return self.blind_rotate_batch_lut(key, inputs, lut);
        }
        Err(Error::Unsupported {
            backend: key.owner().to_string(),
            scheme: "many-LUT (sample extraction at coefficients other than 0)",
        })
    }

    /// [`BootstrapOps::blind_rotate_batch_lut`] with the sign table ([`Lut::sign`], all
    /// coefficients `round(Q/8)`): the result encrypts `+round(Q/8)` when the input phase
    /// is in `[0, q/2)`, else `-round(Q/8)`.
    fn blind_rotate_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>> {
        self.blind_rotate_batch_lut(key, inputs, &Lut::sign(key.params()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_lwe_sets_are_refused_by_narrow_backends() {
        for set in ParamSet::ALL {
            assert!(check_narrow_lwe("cuda".into(), set).is_ok(), "{set}");
        }
        let e = check_narrow_lwe("cuda".into(), ParamSet::M2C2).unwrap_err().to_string();
        assert!(e.contains("cuda") && e.contains("16 bits"), "{e}");
    }
}
