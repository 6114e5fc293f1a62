//! What the host knows of a CKKS object, wherever its words are: a ciphertext's or
//! plaintext's parameters, level and scale ([`CkksMeta`], carried by host objects of
//! [`crate::ckks::entities`] and by resident ones alike), and the resident objects a
//! backend keeps in its own form ([`Ciphertext`], [`PreparedPlaintext`],
//! [`PreparedSwitchKey`]: host memory on the CPU, device buffers on a GPU).

use std::sync::Arc;

use crate::ckks::entities::{SwitchKind, SwitchingKey};
use crate::ckks::params::Params;
use crate::error::{Error, Result};
use crate::ops::Resident;

/// A CKKS ciphertext resident in a backend: its [`CkksMeta`] on the host, its words
/// wherever the backend keeps them.
pub type Ciphertext = Resident<CkksMeta>;

/// A plaintext resident in a backend (evaluation form over `q_0 .. q_level`).
pub type PreparedPlaintext = Resident<PlainMeta>;

/// A switching key in a backend's own form (both halves expanded; resident on a device).
pub type PreparedSwitchKey = Resident<SwitchKeyMeta>;

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

/// A prepared switching key's metadata: its parameters and which secret it switches from.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchKeyMeta {
    params: Arc<Params>,
    kind: SwitchKind,
}

impl SwitchKeyMeta {
    pub fn of(key: &SwitchingKey) -> SwitchKeyMeta {
        SwitchKeyMeta { params: key.params().clone(), kind: key.kind() }
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    pub fn kind(&self) -> SwitchKind {
        self.kind
    }
}

/// Parameters, level and scale of one CKKS ciphertext or plaintext.
#[derive(Clone, PartialEq)]
pub struct CkksMeta {
    params: Arc<Params>,
    level: usize,
    scale: f64,
}

impl std::fmt::Debug for CkksMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CkksMeta({}, level {}, scale 2^{:.3})", self.params.name(), self.level, self.scale.log2())
    }
}

impl CkksMeta {
    /// A level above the chain's top is `Error::Level`; a scale that is not finite and
    /// positive is `Error::InvalidInput`.
    pub fn new(params: Arc<Params>, level: usize, scale: f64) -> Result<CkksMeta> {
        check_level(&params, level)?;
        check_scale(scale)?;
        Ok(CkksMeta { params, level, scale })
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    /// The object lives over `q_0 .. q_level`.
    pub fn level(&self) -> usize {
        self.level
    }
    /// The factor its message is multiplied by.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Limbs of each polynomial: `level + 1`.
    pub fn limbs(&self) -> usize {
        self.level + 1
    }
}

pub(crate) fn check_level(params: &Params, level: usize) -> Result<()> {
    if level > params.max_level() {
        return Err(Error::Level(format!(
            "level {level} is above {}'s top level {}",
            params.name(),
            params.max_level()
        )));
    }
    Ok(())
}

pub(crate) fn check_scale(scale: f64) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidInput(format!("a CKKS scale must be finite and positive, not {scale}")));
    }
    Ok(())
}
