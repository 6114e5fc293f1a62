//! What the host knows of a CKKS ciphertext or plaintext, wherever its words are: its
//! parameters, its level and its scale. Host objects ([`crate::ckks::entities`]) and
//! backend-resident ones ([`crate::ops::CkksHandle`]) carry the same [`CkksMeta`].

use std::sync::Arc;

use crate::ckks::params::CkksParams;
use crate::error::{Error, Result};

/// Parameters, level and scale of one CKKS ciphertext or plaintext.
#[derive(Clone, PartialEq)]
pub struct CkksMeta {
    params: Arc<CkksParams>,
    level: usize,
    scale: f64,
}

impl std::fmt::Debug for CkksMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CkksMeta({}, level {}, scale 2^{:.3})", self.params.name, self.level, self.scale.log2())
    }
}

impl CkksMeta {
    /// A level above the chain's top is `Error::Level`; a scale that is not finite and
    /// positive is `Error::InvalidInput`.
    pub fn new(params: Arc<CkksParams>, level: usize, scale: f64) -> Result<CkksMeta> {
        check_level(&params, level)?;
        check_scale(scale)?;
        Ok(CkksMeta { params, level, scale })
    }
    pub fn params(&self) -> &Arc<CkksParams> {
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

pub(crate) fn check_level(params: &CkksParams, level: usize) -> Result<()> {
    if level > params.max_level() {
        return Err(Error::Level(format!("level {level} is above {}'s top level {}", params.name, params.max_level())));
    }
    Ok(())
}

pub(crate) fn check_scale(scale: f64) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidInput(format!("a CKKS scale must be finite and positive, not {scale}")));
    }
    Ok(())
}
