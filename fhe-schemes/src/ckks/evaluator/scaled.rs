//! Exact-scale steps the circuits (polynomials, linear transforms, bootstrapping) are
//! built from. They behave the same in both modes: nothing here rescales on its own, so
//! a circuit chooses every scale and spends every level itself.

use fhe_api::ckks::{Ciphertext, CkksMeta, CtMeta, Scale};
use fhe_api::error::{Error, LevelNeed, Result};

use super::arith::const_residues;
use super::Evaluator;
use crate::ckks::encoding::Complex;

impl Evaluator {
    /// `a * c` with `c` encoded at the scale `factor` (a positive `f64`; `c * factor` is
    /// rounded to an integer): the result's scale is `a.scale * factor`, never rescaled.
    /// With `factor = target * q_l / a.scale`, the next rescale lands on `target`.
    pub fn mul_const_scaled(&self, a: &Ciphertext, c: impl Into<Complex>, factor: f64) -> Result<Ciphertext> {
        self.check_one(a)?;
        let out = self.out("mul_const_scaled", a, a.level(), a.scale().mul_f64(factor)?, a.tag())?;
        let r = const_residues(&self.params, c.into(), factor, a.level())?;
        self.ops().mul_const(a, &r, out)
    }

    /// `acc += a * c` in place, `c` encoded at `factor` (`acc` at `a`'s level and at
    /// `a.scale * factor`).
    pub fn mul_const_then_add_scaled(
        &self,
        acc: &mut Ciphertext,
        a: &Ciphertext,
        c: impl Into<Complex>,
        factor: f64,
    ) -> Result<()> {
        self.check_pair(acc, a)?;
        let product = a.scale().mul_f64(factor)?;
        if acc.level() != a.level() {
            return Err(Error::Level {
                op: "mul_const_then_add_scaled",
                found: a.level(),
                needed: LevelNeed::Equal(acc.level()),
            });
        }
        if !acc.scale().same_as(product) {
            return Err(Error::ScaleMismatch {
                op: "mul_const_then_add_scaled",
                left: acc.scale().value(),
                right: product.value(),
            });
        }
        let r = const_residues(&self.params, c.into(), factor, a.level())?;
        self.ops().mul_const_then_add(acc, a, &r)
    }

    /// `a * b` relinearized at their common level, never rescaled (either mode).
    pub(crate) fn mul_relin_only(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let out = self.product_meta("mul_relin_only", a, b)?;
        self.ops().mul_relin(a, b, &*self.relin_key()?, out)
    }

    /// The metadata of `a * b` before any rescale, for operands of one key set at one level.
    fn product_meta(&self, op: &'static str, a: &Ciphertext, b: &Ciphertext) -> Result<CkksMeta> {
        let tag = self.check_pair(a, b)?;
        if a.level() != b.level() {
            return Err(Error::Level { op, found: b.level(), needed: LevelNeed::Equal(a.level()) });
        }
        self.out("mul", a, a.level(), a.scale().times(b.scale())?, tag)
    }

    /// `a * b` relinearized at their common level `l >= 1` and rescaled to `l - 1` (either
    /// mode): the words of [`Evaluator::mul_relin_only`] then [`Evaluator::rescale`], in
    /// one backend call.
    pub(crate) fn mul_relin_rescale_only(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mid = self.product_meta("mul_relin_rescale_only", a, b)?;
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let scale = mid.scale().div_f64(self.params.q()[l].0 as f64)?;
        let out = self.out("rescale", a, l - 1, scale, mid.tag())?;
        self.ops().mul_relin_rescale(a, b, &*self.relin_key()?, mid, out)
    }

    /// The same words read at another scale: the message is multiplied by
    /// `a.scale / scale`, for free. Circuits fold constant factors this way.
    pub(crate) fn relabel(&self, a: &Ciphertext, scale: Scale) -> Result<Ciphertext> {
        self.check_one(a)?;
        let meta = self.out("relabel", a, a.level(), scale, a.tag())?;
        let mut out = a.clone();
        out.set_meta(CtMeta::new(meta, a.degree())?);
        Ok(out)
    }

    /// Bootstrapping's ModRaise: `a` (level 0, degree 1) lifted to `level`, decrypting to
    /// `m + q_0 I` read at `a`'s scale (the caller accounts for the `q_0 I` term).
    pub(crate) fn mod_raise(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check_one(a)?;
        let out = self.out("mod_raise", a, level, a.scale(), a.tag())?;
        self.ops().mod_raise(a, out)
    }
}
