//! What the host knows of a CKKS object, wherever its words are: a ciphertext's or
//! plaintext's parameters, level, scale and key tag ([`CkksMeta`], carried by host objects
//! of [`crate::ckks::entities`] and by resident ones alike), and the resident objects a
//! backend keeps in its own form ([`Ciphertext`], [`PreparedPlaintext`],
//! [`PreparedSwitchKey`], [`Hoisted`]: host memory on the CPU, device buffers on a GPU).

use std::sync::Arc;

use crate::ckks::entities::{SwitchKind, SwitchingKey};
use crate::ckks::params::Params;
use crate::ckks::scale::Scale;
use crate::error::{Error, LevelNeed, Result};
use crate::ops::Resident;
use crate::tag::KeyTag;

/// A CKKS ciphertext resident in a backend: its [`CtMeta`] on the host, its words
/// wherever the backend keeps them. Cloning shares the words (they are never changed in
/// place while shared).
pub type Ciphertext = Resident<CtMeta>;

/// A plaintext resident in a backend (evaluation form over `q_0 .. q_level`): encode once,
/// prepare once ([`crate::ops::CkksOps::upload_plaintext`]), use many times.
pub type PreparedPlaintext = Resident<PlainMeta>;

/// A switching key in a backend's own form (both halves expanded; resident on a device).
pub type PreparedSwitchKey = Resident<SwitchKeyMeta>;

/// A ciphertext's key-switching decomposition (ModUp of `c1`), resident: computed once,
/// it serves any number of rotations of that ciphertext, in one call or several.
pub type Hoisted = Resident<HoistMeta>;

/// A ciphertext over `Q_level P` times `P`, before its ModDown (a rotation whose division
/// by `P` is deferred, so that a sum of rotations times extended plaintexts divides once:
/// the lazy ModDown of baby-step giant-step sums). Its [`CkksMeta`] is the ciphertext's
/// after the ModDown.
pub type ExtCiphertext = Resident<ExtMeta>;

/// An [`ExtCiphertext`]'s metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtMeta(pub CkksMeta);

impl std::ops::Deref for ExtMeta {
    type Target = CkksMeta;
    fn deref(&self) -> &CkksMeta {
        &self.0
    }
}

/// Parameters, level, scale and key tag of one CKKS ciphertext or plaintext.
#[derive(Clone, PartialEq)]
pub struct CkksMeta {
    params: Arc<Params>,
    level: usize,
    scale: Scale,
    tag: KeyTag,
}

impl std::fmt::Debug for CkksMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CkksMeta({}, level {}, scale {}, tag {})", self.params.name(), self.level, self.scale, self.tag)
    }
}

impl CkksMeta {
    /// A level above the chain's top is `Error::Level`; a scale at or above half the
    /// modulus of its level (`Q_level / 2`, where the message would wrap) is
    /// `Error::ScaleOverflow`.
    pub fn new(params: Arc<Params>, level: usize, scale: Scale, tag: KeyTag) -> Result<CkksMeta> {
        check_level(&params, level)?;
        check_fits("a CKKS object", &params, level, scale)?;
        Ok(CkksMeta { params, level, scale, tag })
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    /// The object lives over `q_0 .. q_level`.
    pub fn level(&self) -> usize {
        self.level
    }
    /// The factor its message is multiplied by.
    pub fn scale(&self) -> Scale {
        self.scale
    }
    /// The tag of the key set it belongs to ([`KeyTag::NONE`] for an encoded plaintext).
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    /// Limbs of each polynomial: `level + 1`.
    pub fn limbs(&self) -> usize {
        self.level + 1
    }
    /// The same object at another level, scale or tag, checked as [`CkksMeta::new`]
    /// checks, with `op` naming the operation in an error.
    pub fn with(&self, op: &'static str, level: usize, scale: Scale, tag: KeyTag) -> Result<CkksMeta> {
        check_level(&self.params, level)?;
        check_fits(op, &self.params, level, scale)?;
        Ok(CkksMeta { params: self.params.clone(), level, scale, tag })
    }
}

/// A resident ciphertext's metadata: its [`CkksMeta`] and its degree (`1` for
/// `(c0, c1)`, `2` for an unrelinearized product `(c0, c1, c2)`).
#[derive(Clone, Debug, PartialEq)]
pub struct CtMeta {
    pub meta: CkksMeta,
    degree: usize,
}

impl CtMeta {
    /// Degree 1 or 2; anything else is `Error::InvalidInput`.
    pub fn new(meta: CkksMeta, degree: usize) -> Result<CtMeta> {
        if !(1..=2).contains(&degree) {
            return Err(Error::InvalidInput(format!("a CKKS ciphertext of degree {degree}: 1 or 2")));
        }
        Ok(CtMeta { meta, degree })
    }
    pub fn degree(&self) -> usize {
        self.degree
    }
}

impl std::ops::Deref for CtMeta {
    type Target = CkksMeta;
    fn deref(&self) -> &CkksMeta {
        &self.meta
    }
}

/// A resident plaintext's metadata: a [`CkksMeta`] of its own type, so a plaintext
/// object is never taken for a ciphertext.
#[derive(Clone, Debug, PartialEq)]
pub struct PlainMeta(pub CkksMeta);

impl std::ops::Deref for PlainMeta {
    type Target = CkksMeta;
    fn deref(&self) -> &CkksMeta {
        &self.0
    }
}

/// A hoisting precompute's metadata: the ciphertext it decomposes.
#[derive(Clone, Debug, PartialEq)]
pub struct HoistMeta(pub CkksMeta);

impl std::ops::Deref for HoistMeta {
    type Target = CkksMeta;
    fn deref(&self) -> &CkksMeta {
        &self.0
    }
}

/// A prepared switching key's metadata: its parameters, which secret it switches from,
/// its key set's tag, and the highest level it switches at (a backend may keep only the
/// limbs a switch at that level or below reads: [`crate::ops::CkksOps::prepare_key_up_to`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchKeyMeta {
    params: Arc<Params>,
    kind: SwitchKind,
    tag: KeyTag,
    max_level: usize,
}

impl SwitchKeyMeta {
    /// A key prepared whole: it switches at every level.
    pub fn of(key: &SwitchingKey) -> SwitchKeyMeta {
        let max_level = key.params().max_level();
        SwitchKeyMeta { params: key.params().clone(), kind: key.kind(), tag: key.tag(), max_level }
    }
    /// A key prepared for switches at `max_level` or below (`Error::Level` above the chain).
    pub fn up_to(key: &SwitchingKey, max_level: usize) -> Result<SwitchKeyMeta> {
        check_level(key.params(), max_level)?;
        Ok(SwitchKeyMeta { max_level, ..SwitchKeyMeta::of(key) })
    }
    /// The highest level this prepared key switches at.
    pub fn max_level(&self) -> usize {
        self.max_level
    }
    /// `Error::Level` naming `op` when a switch at `level` needs limbs this key was
    /// prepared without.
    pub fn check_covers(&self, op: &'static str, level: usize) -> Result<()> {
        if level > self.max_level {
            return Err(Error::Level { op, found: level, needed: LevelNeed::KeyUpTo(self.max_level) });
        }
        Ok(())
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    pub fn kind(&self) -> SwitchKind {
        self.kind
    }
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
}

pub(crate) fn check_level(params: &Params, level: usize) -> Result<()> {
    if level > params.max_level() {
        return Err(Error::Level { op: "a CKKS object", found: level, needed: LevelNeed::AtMost(params.max_level()) });
    }
    Ok(())
}

/// `scale < Q_level / 2`: a larger scale would wrap the message around the modulus.
pub fn check_fits(op: &'static str, params: &Params, level: usize, scale: Scale) -> Result<()> {
    let modulus_log2 = params.log2_q_at(level);
    if scale.log2() >= modulus_log2 - 1.0 {
        return Err(Error::ScaleOverflow { op, scale_log2: scale.log2(), modulus_log2, level });
    }
    Ok(())
}
