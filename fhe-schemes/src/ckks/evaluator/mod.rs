//! The CKKS evaluator: the scheme's bookkeeping written once (which levels and scales
//! may meet, what a constant encodes to, which key a rotation needs) over a backend's
//! [`CkksOps`]. Ciphertexts stay resident in the backend between calls.
//!
//! Scales: `add`/`sub` need equal scales (relative difference at most `2^-30`, since two
//! ciphertexts rescaled by the same primes carry bit-identical scales and anything else is
//! a caller's mistake); products multiply scales; `rescale` divides by the dropped prime.

use std::collections::BTreeMap;
use std::sync::Arc;

use fhe_api::ckks::entities::{EvalKeys, HostCiphertext, Plaintext, SwitchKind};
use fhe_api::ckks::params::Params;
use fhe_api::ckks::{Ciphertext, PreparedPlaintext, PreparedSwitchKey};
use fhe_api::error::{Error, Result};
use fhe_api::ops::{Backend, CkksOps};
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation};

/// Relative scale difference `add` tolerates.
const SCALE_TOLERANCE: f64 = 1.0 / (1u64 << 30) as f64;

/// Evaluation with prepared (resident) keys. `Send + Sync`: one evaluator may serve
/// many threads at once.
pub struct Evaluator {
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    relin: Option<PreparedSwitchKey>,
    galois: BTreeMap<u64, PreparedSwitchKey>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("backend", &self.backend.name())
            .field("params", &self.params.name())
            .field("relin", &self.relin.is_some())
            .field("galois", &self.galois.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The backend's CKKS capability, or `Error::Unsupported`.
pub fn ckks_ops(backend: &dyn Backend) -> Result<&dyn CkksOps> {
    backend.ckks().ok_or_else(|| Error::Unsupported { backend: backend.name(), scheme: "CKKS" })
}

impl Evaluator {
    /// Prepares (uploads) every key in `keys`.
    pub fn new(backend: Arc<dyn Backend>, params: Arc<Params>, keys: &EvalKeys) -> Result<Self> {
        let ops = ckks_ops(&*backend)?;
        let mut relin = None;
        if let Some(k) = &keys.relin {
            check_params(&params, k.params())?;
            relin = Some(ops.prepare_key(k)?);
        }
        let mut galois = BTreeMap::new();
        for (&g, k) in &keys.galois {
            check_params(&params, k.params())?;
            if k.kind() != SwitchKind::Galois(g) {
                return Err(Error::InvalidInput(format!("the Galois key filed under {g} is a {:?} key", k.kind())));
            }
            galois.insert(g, ops.prepare_key(k)?);
        }
        Ok(Evaluator { backend, params, relin, galois })
    }

    fn ops(&self) -> &dyn CkksOps {
        self.backend.ckks().expect("checked at construction")
    }

    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    /// Galois elements with a prepared key.
    pub fn galois_elements(&self) -> impl Iterator<Item = u64> + '_ {
        self.galois.keys().copied()
    }

    pub fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        check_params(&self.params, ct.params())?;
        self.ops().upload(ct)
    }

    pub fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        self.ops().download(ct)
    }

    fn check_one(&self, a: &Ciphertext) -> Result<()> {
        check_params(&self.params, a.params())
    }

    fn check_pair(&self, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_one(a)?;
        self.check_one(b)?;
        if a.level() != b.level() {
            return Err(Error::Level(format!(
                "operands at levels {} and {}: drop the higher with drop_to_level (or match_levels)",
                a.level(),
                b.level()
            )));
        }
        Ok(())
    }

    fn check_scales(left: f64, right: f64) -> Result<()> {
        if ((left - right) / left).abs() > SCALE_TOLERANCE {
            return Err(Error::ScaleMismatch { left, right });
        }
        Ok(())
    }

    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        Self::check_scales(a.scale(), b.scale())?;
        self.ops().add(a, b)
    }

    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        Self::check_scales(a.scale(), b.scale())?;
        self.ops().sub(a, b)
    }

    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        self.ops().negate(a)
    }

    /// Both operands at the lower of their two levels.
    pub fn match_levels(&self, a: &Ciphertext, b: &Ciphertext) -> Result<(Ciphertext, Ciphertext)> {
        let level = a.level().min(b.level());
        Ok((self.drop_to_level(a, level)?, self.drop_to_level(b, level)?))
    }

    /// A plaintext resident at `a`'s level (a plaintext encoded at a higher level is cut
    /// down: its lower limbs are the same integers).
    fn plain_for(&self, a: &Ciphertext, pt: &Plaintext) -> Result<PreparedPlaintext> {
        check_params(&self.params, pt.params())?;
        if pt.level() < a.level() {
            return Err(Error::Level(format!(
                "plaintext at level {} is below the ciphertext's level {}: encode it at level {}",
                pt.level(),
                a.level(),
                a.level()
            )));
        }
        let n = self.params.n();
        let cut = Plaintext::from_raw(
            pt.params().clone(),
            a.level(),
            pt.scale(),
            pt.coeffs()[..(a.level() + 1) * n].to_vec(),
        )?;
        self.ops().upload_plaintext(&cut)
    }

    pub fn add_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_one(a)?;
        Self::check_scales(a.scale(), pt.scale())?;
        let p = self.plain_for(a, pt)?;
        self.ops().add_plain(a, &p)
    }

    pub fn mul_plain(&self, a: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_one(a)?;
        let p = self.plain_for(a, pt)?;
        self.ops().mul_plain(a, &p)
    }

    /// Residues of `round(x)` modulo `q_0 .. q_level`; `|x| < 2^126`.
    fn residues(&self, x: f64, level: usize) -> Result<Vec<u64>> {
        let r = x.round();
        if !r.is_finite() || r.abs() >= 2f64.powi(126) {
            return Err(Error::InvalidInput(format!("constant times scale ({x:e}) is not finite or not below 2^126")));
        }
        Ok(self.int_residues(r as i128, level))
    }

    /// Residues of the integer `v` modulo `q_0 .. q_level`.
    fn int_residues(&self, v: i128, level: usize) -> Vec<u64> {
        self.params.q()[..=level].iter().map(|q| v.rem_euclid(q.0 as i128) as u64).collect()
    }

    /// `a + c` in every slot: `round(c * scale)` added to the constant term.
    pub fn add_const(&self, a: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.check_one(a)?;
        let r = self.residues(c * a.scale(), a.level())?;
        self.ops().add_scalar(a, &r)
    }

    /// `a * c` in every slot, `c` encoded at the default scale `2^scale_bits`; the result's
    /// scale is `a.scale * 2^scale_bits` (rescale afterwards).
    pub fn mul_const(&self, a: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.check_one(a)?;
        let factor = self.params.default_scale();
        let r = self.residues(c * factor, a.level())?;
        self.ops().mul_scalar(a, &r, factor)
    }

    /// `a * k` for an integer `k`: exact, scale unchanged.
    pub fn mul_int(&self, a: &Ciphertext, k: i64) -> Result<Ciphertext> {
        self.check_one(a)?;
        // From the integer itself: exact beyond 2^53, where an `f64` is not.
        let r = self.int_residues(k.into(), a.level());
        self.ops().mul_scalar(a, &r, 1.0)
    }

    /// `a * b`, relinearized; scale `a.scale * b.scale` (rescale afterwards).
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b)?;
        let rlk = self
            .relin
            .as_ref()
            .ok_or_else(|| Error::MissingKey("no relinearization key (keygen option relin)".into()))?;
        self.ops().mul_relin(a, b, rlk)
    }

    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.mul(a, a)
    }

    /// Divides by the top prime: one level down, scale divided by that prime.
    pub fn rescale(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        if a.level() == 0 {
            return Err(Error::Level("cannot rescale a ciphertext at level 0: the chain is spent".into()));
        }
        self.ops().rescale(a)
    }

    /// `mul` then `rescale`.
    pub fn mul_rescale(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.rescale(&self.mul(a, b)?)
    }

    pub fn drop_to_level(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check_one(a)?;
        if level > a.level() {
            return Err(Error::Level(format!("cannot raise a ciphertext from level {} to {level}", a.level())));
        }
        self.ops().drop_to_level(a, level)
    }

    fn key(&self, g: u64, what: &str) -> Result<&PreparedSwitchKey> {
        self.galois.get(&g).ok_or_else(|| Error::MissingKey(format!("no Galois key for {what} (element {g})")))
    }

    /// Slots rotated left by `steps` (negative: right).
    pub fn rotate(&self, a: &Ciphertext, steps: i64) -> Result<Ciphertext> {
        self.check_one(a)?;
        let g = galois_element_for_rotation(self.params.ring_degree(), steps);
        if g == 1 {
            return self.ops().drop_to_level(a, a.level());
        }
        let key = self.key(g, &format!("rotation by {steps}"))?;
        self.ops().apply_galois(a, key)
    }

    /// Complex conjugation of every slot.
    pub fn conjugate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        let g = conjugation_element(self.params.ring_degree());
        let key = self.key(g, "conjugation")?;
        self.ops().apply_galois(a, key)
    }

    /// Several rotations of one ciphertext sharing one decomposition (hoisting); the same
    /// words as separate [`Evaluator::rotate`] calls.
    pub fn rotate_hoisted(&self, a: &Ciphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        self.check_one(a)?;
        let elements: Vec<u64> =
            steps.iter().map(|&k| galois_element_for_rotation(self.params.ring_degree(), k)).collect();
        let mut keys = Vec::new();
        for (&g, &k) in elements.iter().zip(steps) {
            if g != 1 {
                keys.push(self.key(g, &format!("rotation by {k}"))?);
            }
        }
        let mut rotated = self.ops().apply_galois_hoisted(a, &keys)?.into_iter();
        elements
            .iter()
            .map(
                |&g| {
                    if g == 1 {
                        self.ops().drop_to_level(a, a.level())
                    } else {
                        Ok(rotated.next().expect("one per key"))
                    }
                },
            )
            .collect()
    }
}

pub(crate) fn check_params(expected: &Params, found: &Params) -> Result<()> {
    if expected != found {
        return Err(Error::InvalidInput(format!(
            "CKKS parameter mismatch: expected {}, found {}",
            expected.name(),
            found.name()
        )));
    }
    Ok(())
}
