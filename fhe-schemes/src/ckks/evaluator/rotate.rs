//! Rotations and conjugation (Galois automorphisms), one at a time or hoisted: a
//! ciphertext's decomposition ([`Evaluator::hoist`]) computed once serves every rotation
//! of it, in one call or several.

use fhe_api::ckks::{Ciphertext, ExtCiphertext, Hoisted, PreparedPlaintext};
use fhe_api::error::{Error, KeyNeed, LevelNeed, Result};
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation};

use super::{check_params, Evaluator};

/// A ciphertext with its key-switching decomposition kept on the backend
/// ([`Evaluator::hoist`]).
#[derive(Clone, Debug)]
pub struct HoistedCiphertext {
    ct: Ciphertext,
    up: Hoisted,
}

impl HoistedCiphertext {
    /// The ciphertext it decomposes.
    pub fn ciphertext(&self) -> &Ciphertext {
        &self.ct
    }
}

impl Evaluator {
    /// Slots rotated left by `steps` (negative: right).
    pub fn rotate(&self, a: &Ciphertext, steps: i64) -> Result<Ciphertext> {
        self.check_one(a)?;
        let g = galois_element_for_rotation(self.params.ring_degree(), steps);
        if g == 1 {
            return Ok(a.clone());
        }
        let key = self.galois_key(g, a.level(), || KeyNeed::Rotation { steps, element: g })?;
        self.ops().apply_galois(a, &key, a.meta.clone())
    }

    /// Complex conjugation of every slot.
    pub fn conjugate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        let g = conjugation_element(self.params.ring_degree());
        let key = self.galois_key(g, a.level(), || KeyNeed::Conjugation { element: g })?;
        self.ops().apply_galois(a, &key, a.meta.clone())
    }

    /// `a`'s key-switching decomposition, kept on the backend: the expensive half of a
    /// rotation, done once for any number of [`Evaluator::rotate_hoisted_with`] calls.
    pub fn hoist(&self, a: &Ciphertext) -> Result<HoistedCiphertext> {
        self.check_one(a)?;
        Ok(HoistedCiphertext { ct: a.clone(), up: self.ops().hoist(a)? })
    }

    /// Rotations of a hoisted ciphertext by each of `steps`: the same words as separate
    /// [`Evaluator::rotate`] calls.
    pub fn rotate_hoisted_with(&self, h: &HoistedCiphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        self.check_one(&h.ct)?;
        let n = self.params.ring_degree();
        let elements: Vec<u64> = steps.iter().map(|&k| galois_element_for_rotation(n, k)).collect();
        let mut keys = Vec::new();
        for (&g, &steps) in elements.iter().zip(steps) {
            if g != 1 {
                keys.push(self.galois_key(g, h.ct.level(), || KeyNeed::Rotation { steps, element: g })?);
            }
        }
        let refs: Vec<_> = keys.iter().map(|k| &**k).collect();
        let mut rotated = self.ops().apply_galois_hoisted(&h.up, &refs, h.ct.meta.clone())?.into_iter();
        // A rotation by a multiple of the slot count is the ciphertext itself.
        Ok(elements.iter().map(|&g| if g == 1 { h.ct.clone() } else { rotated.next().expect("one per key") }).collect())
    }

    /// Several rotations of one ciphertext sharing one decomposition: [`Evaluator::hoist`]
    /// then [`Evaluator::rotate_hoisted_with`].
    pub fn rotate_hoisted(&self, a: &Ciphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        self.rotate_hoisted_with(&self.hoist(a)?, steps)
    }
}

/// The lazy ModDown of a sum of rotations (a baby-step giant-step inner sum): every
/// rotation stays over `Q_l P`, is multiplied there by an extended plaintext
/// (`Context::encode_extended`) and summed, and the sum is divided by `P` once, instead of
/// once per rotation.
impl Evaluator {
    /// `sum_i p_i * rotate(x, steps_i)` with one decomposition of `x` and one ModDown: the
    /// plaintexts extended, at `x`'s level or above, of one scale; the result's scale is
    /// `x.scale * p.scale` (rescaled at once in the automatic mode). A step of zero is `x`
    /// itself. The words differ from the sum of separate rotations (one rounding instead
    /// of several); the value agrees within the noise.
    pub fn sum_of_rotations(&self, x: &Ciphertext, terms: &[(i64, &PreparedPlaintext)]) -> Result<Ciphertext> {
        self.check_one(x)?;
        let scale = terms.first().ok_or_else(|| Error::InvalidInput("an empty sum of rotations".into()))?.1.scale();
        for (_, p) in terms {
            check_params(&self.params, p.params())?;
            if p.level() < x.level() {
                return Err(Error::Level {
                    op: "sum_of_rotations",
                    found: p.level(),
                    needed: LevelNeed::AtLeast(x.level()),
                });
            }
            if !p.scale().same_as(scale) {
                return Err(Error::ScaleMismatch {
                    op: "sum_of_rotations",
                    left: scale.value(),
                    right: p.scale().value(),
                });
            }
        }
        let out = self.out("sum_of_rotations", x, x.level(), x.scale().times(scale)?, x.tag())?;
        let n = self.params.ring_degree();
        let mut keys = Vec::new();
        let mut rotated_terms = Vec::new();
        for &(steps, p) in terms {
            let g = galois_element_for_rotation(n, steps);
            if g != 1 {
                keys.push(self.galois_key(g, x.level(), || KeyNeed::Rotation { steps, element: g })?);
                rotated_terms.push(p);
            }
        }
        let mut acc: Option<ExtCiphertext> = None;
        let mut add = |ext: &ExtCiphertext, p: &PreparedPlaintext| -> Result<()> {
            match &mut acc {
                Some(a) => self.ops().ext_mul_plain_then_add(a, ext, p),
                None => {
                    acc = Some(self.ops().ext_mul_plain(ext, p, out.clone())?);
                    Ok(())
                }
            }
        };
        for &(steps, p) in terms {
            if galois_element_for_rotation(n, steps) == 1 {
                add(&self.ops().lift(x, x.meta.clone())?, p)?;
            }
        }
        if !keys.is_empty() {
            let h = self.ops().hoist(x)?;
            let refs: Vec<_> = keys.iter().map(|k| &**k).collect();
            for (ext, p) in self.ops().apply_galois_lazy(&h, &refs, x.meta.clone())?.iter().zip(rotated_terms) {
                add(ext, p)?;
            }
        }
        let acc = acc.expect("at least one term");
        let sum = self.ops().mod_down(&acc, out)?;
        self.auto_rescale("sum_of_rotations", sum)
    }
}
