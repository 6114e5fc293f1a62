//! Products, relinearization, rescaling and the moves between levels and scales.
//!
//! Scales: a product's scale is the product of its operands' (`f64`, correctly rounded);
//! a rescale divides by the dropped prime's value `q_l`; [`Evaluator::rescale_to`]
//! multiplies by the integer `k = round(t q_l / s)` and rescales, so the result's scale is
//! `s k / q_l`, within half a unit of the target `t` (and recorded as `t` when
//! [`fhe_api::ckks::Scale::same_as`] holds, else as the exact value).

use std::borrow::Cow;

use fhe_api::ckks::{Ciphertext, Scale};
use fhe_api::error::{Error, LevelNeed, Result};
use fhe_api::ops::ConstResidues;

use super::arith::{int_residues, level_spent};
use super::{Evaluator, Mode};

impl Evaluator {
    /// `a * b`, relinearized: scale `a.scale * b.scale`. In the manual mode the product
    /// stays at the operands' level (rescale it); in the automatic mode the operands are
    /// reconciled first and the product rescaled at once (one level).
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let tag = self.check_pair(a, b)?;
        let (a, b) = self.operands("mul", a, b)?;
        if self.mode == Mode::Auto && a.level() > 0 {
            return self.mul_relin_rescale_only(&a, &b);
        }
        let out = self.out("mul", &a, a.level(), a.scale().times(b.scale())?, tag)?;
        let prod = self.ops().mul_relin(&a, &b, &*self.relin_key()?, out)?;
        self.auto_rescale("mul", prod)
    }

    /// `a * a`.
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.mul(a, a)
    }

    /// `mul` then `rescale` (in the automatic mode, `mul` alone).
    pub fn mul_rescale(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        match self.mode {
            Mode::Manual => self.rescale(&self.mul(a, b)?),
            Mode::Auto => self.mul(a, b),
        }
    }

    /// `a * b` without relinearization: a degree-2 ciphertext (sums of such products
    /// need one [`Evaluator::relinearize`] in all). Same level and scale rules as `mul`
    /// in the manual mode, in either mode.
    pub fn tensor(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let tag = self.check_pair(a, b)?;
        if a.level() != b.level() {
            return Err(Error::Level { op: "tensor", found: b.level(), needed: LevelNeed::Equal(a.level()) });
        }
        let out = self.out("tensor", a, a.level(), a.scale().times(b.scale())?, tag)?;
        self.ops().tensor(a, b, out)
    }

    /// `acc += a * b` in place, unrelinearized (`acc` of degree 2, at the product's level
    /// and scale): the inner step of a sum of products.
    pub fn mul_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair(acc, a)?;
        let tag = self.check_pair(a, b)?.combine(acc.tag())?;
        if a.level() != b.level() || acc.level() != a.level() {
            return Err(Error::Level { op: "mul_then_add", found: b.level(), needed: LevelNeed::Equal(acc.level()) });
        }
        let product = self.out("mul_then_add", a, a.level(), a.scale().times(b.scale())?, tag)?;
        if !acc.scale().same_as(product.scale()) {
            return Err(Error::ScaleMismatch {
                op: "mul_then_add",
                left: acc.scale().value(),
                right: product.scale().value(),
            });
        }
        self.ops().mul_then_add(acc, a, b)
    }

    /// A degree-2 ciphertext back to degree 1 (needs the relinearization key).
    pub fn relinearize(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        self.ops().relinearize(a, &*self.relin_key()?, a.meta.clone())
    }

    /// Divides by the top prime: one level down, scale divided by that prime.
    pub fn rescale(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let scale = a.scale().div_f64(self.params.q()[l].0 as f64)?;
        self.ops().rescale(a, self.out("rescale", a, l - 1, scale, a.tag())?)
    }

    /// Drops the top limbs down to `level` (no division, scale unchanged).
    pub fn drop_to_level(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check_one(a)?;
        if level > a.level() {
            return Err(Error::Level { op: "drop_to_level", found: a.level(), needed: LevelNeed::AtLeast(level) });
        }
        if level == a.level() {
            return Ok(a.clone());
        }
        self.ops().drop_to_level(a, self.out("drop_to_level", a, level, a.scale(), a.tag())?)
    }

    /// Both operands at the lower of their two levels (scales unchanged).
    pub fn match_levels(&self, a: &Ciphertext, b: &Ciphertext) -> Result<(Ciphertext, Ciphertext)> {
        let level = a.level().min(b.level());
        Ok((self.drop_to_level(a, level)?, self.drop_to_level(b, level)?))
    }

    /// `a` at a scale of `scale`, one level down: multiplied by the integer nearest
    /// `scale q_l / a.scale` and rescaled (Lattigo's `SetScale`).
    pub fn set_scale(&self, a: &Ciphertext, scale: Scale) -> Result<Ciphertext> {
        self.check_one(a)?;
        let l = a.level().checked_sub(1).map(|_| a.level()).ok_or(level_spent("set_scale"))?;
        let ql = self.params.q()[l].0 as f64;
        let k = (scale.value() * ql / a.scale().value()).round();
        if !(1.0..2f64.powi(62)).contains(&k) {
            return Err(Error::InvalidInput(format!(
                "set_scale from {} to {scale} at level {l}: the factor {k:e} is not a positive integer below 2^62",
                a.scale()
            )));
        }
        let exact = a.scale().mul_f64(k)?.div_f64(ql)?;
        let target = if exact.same_as(scale) { scale } else { exact };
        let r = ConstResidues { re: int_residues(&self.params, k as i128, l), im: Vec::new() };
        let lifted = self.out("set_scale", a, l, a.scale().mul_f64(k)?, a.tag())?;
        let prod = self.ops().mul_const(a, &r, lifted)?;
        self.ops().rescale(&prod, self.out("set_scale", a, l - 1, target, a.tag())?)
    }

    /// `a` at `level` with `scale`: dropped to `level + 1`, then [`Evaluator::set_scale`];
    /// or dropped to `level` alone when the scale already matches. `a` itself when both
    /// do; a scale change at `a`'s own level needs a level below it (`Error::Level`).
    pub fn rescale_to(&self, a: &Ciphertext, level: usize, scale: Scale) -> Result<Ciphertext> {
        self.check_one(a)?;
        if level > a.level() {
            return Err(Error::Level { op: "rescale_to", found: a.level(), needed: LevelNeed::AtLeast(level) });
        }
        if a.scale().same_as(scale) {
            return self.drop_to_level(a, level);
        }
        if level == a.level() {
            return Err(Error::Level { op: "rescale_to", found: a.level(), needed: LevelNeed::AtLeast(level + 1) });
        }
        self.set_scale(&self.drop_to_level(a, level + 1)?, scale)
    }

    /// The operands of a product: as given in the manual mode (one level), reconciled
    /// in the automatic mode.
    fn operands<'a>(
        &self,
        op: &'static str,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Ciphertext>)> {
        match self.mode {
            Mode::Manual if a.level() != b.level() => {
                Err(Error::Level { op, found: b.level(), needed: LevelNeed::Equal(a.level()) })
            }
            Mode::Manual => Ok((Cow::Borrowed(a), Cow::Borrowed(b))),
            Mode::Auto if a.level() == b.level() => Ok((Cow::Borrowed(a), Cow::Borrowed(b))),
            Mode::Auto => {
                let level = a.level().min(b.level());
                Ok((Cow::Owned(self.drop_to_level(a, level)?), Cow::Owned(self.drop_to_level(b, level)?)))
            }
        }
    }

    /// A product's rescale in the automatic mode (the product as it is in the manual one).
    pub(crate) fn auto_rescale(&self, op: &'static str, prod: Ciphertext) -> Result<Ciphertext> {
        match self.mode {
            Mode::Manual => Ok(prod),
            Mode::Auto if prod.level() == 0 => Err(level_spent(op)),
            Mode::Auto => self.rescale(&prod),
        }
    }
}
