//! Sums, plaintexts, constants and multiplication by `i`.
//!
//! A constant `c` is the integer polynomial `round(Re c * f) + round(Im c * f) X^(N/2)`
//! for its encoding scale `f` (`X^(N/2)` is `i` in every slot): `f` is the ciphertext's
//! scale for an addition, and for a product the prime about to be dropped, `q_l`, so that
//! `rescale(mul_const(x, c))` has `x`'s scale again.

use std::borrow::Cow;

use fhe_api::ckks::{Ciphertext, CkksMeta, Plaintext, PreparedPlaintext};
use fhe_api::error::{Error, LevelNeed, Result};
use fhe_api::ops::ConstResidues;
use fhe_api::tag::KeyTag;

use super::{check_params, Evaluator, Mode};
use crate::ckks::encoding::Complex;

/// A plaintext an operation can take: a [`PreparedPlaintext`] (resident, prepared once,
/// the fast form) or a host [`Plaintext`] (uploaded and transformed for the call).
pub trait PlainOperand {
    /// The resident form at `level` (a plaintext at a higher level serves: its lower
    /// limbs are the same integers).
    fn resident<'a>(&'a self, ev: &Evaluator, level: usize) -> Result<Cow<'a, PreparedPlaintext>>;
}

impl PlainOperand for PreparedPlaintext {
    fn resident<'a>(&'a self, ev: &Evaluator, level: usize) -> Result<Cow<'a, PreparedPlaintext>> {
        check_params(ev.params(), self.params())?;
        plain_level(self.level(), level)?;
        Ok(Cow::Borrowed(self))
    }
}

impl PlainOperand for Plaintext {
    fn resident<'a>(&'a self, ev: &Evaluator, level: usize) -> Result<Cow<'a, PreparedPlaintext>> {
        check_params(ev.params(), self.params())?;
        plain_level(self.level(), level)?;
        Ok(Cow::Owned(ev.ops().upload_plaintext(self)?))
    }
}

fn plain_level(plain: usize, ct: usize) -> Result<()> {
    if plain < ct {
        return Err(Error::Level { op: "a plaintext operand", found: plain, needed: LevelNeed::AtLeast(ct) });
    }
    Ok(())
}

/// Residues of `round(x)` modulo `q_0 .. q_level`; `|x| < 2^126`.
fn residues(params: &fhe_api::ckks::Params, x: f64, level: usize) -> Result<Vec<u64>> {
    let r = x.round();
    if !r.is_finite() || r.abs() >= 2f64.powi(126) {
        return Err(Error::InvalidInput(format!("constant times scale ({x:e}) is not finite or not below 2^126")));
    }
    Ok(int_residues(params, r as i128, level))
}

/// Residues of the integer `v` modulo `q_0 .. q_level`.
pub(super) fn int_residues(params: &fhe_api::ckks::Params, v: i128, level: usize) -> Vec<u64> {
    params.q()[..=level].iter().map(|q| v.rem_euclid(q.0 as i128) as u64).collect()
}

/// `c` encoded at scale `f` for `level`.
pub(crate) fn const_residues(
    params: &fhe_api::ckks::Params,
    c: Complex,
    f: f64,
    level: usize,
) -> Result<ConstResidues> {
    let re = residues(params, c.re * f, level)?;
    let im = if c.im == 0.0 { Vec::new() } else { residues(params, c.im * f, level)? };
    Ok(ConstResidues { re, im })
}

impl Evaluator {
    /// The two operands at one level and scale: as given in the manual mode (or a typed
    /// error), the higher one brought down in the automatic mode.
    pub(super) fn reconcile<'a>(
        &self,
        op: &'static str,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Ciphertext>)> {
        if self.mode == Mode::Manual || (a.level() == b.level() && a.scale().same_as(b.scale())) {
            Self::same_level_and_scale(op, a, b)?;
            return Ok((Cow::Borrowed(a), Cow::Borrowed(b)));
        }
        if a.level() == b.level() {
            // One level, two scales: both move one level down, to `a`'s scale.
            let (l, s) = (a.level().checked_sub(1).ok_or(level_spent(op))?, a.scale());
            return Ok((Cow::Owned(self.rescale_to(a, l, s)?), Cow::Owned(self.rescale_to(b, l, s)?)));
        }
        let (hi, lo, swapped) = if a.level() > b.level() { (a, b, false) } else { (b, a, true) };
        let moved = Cow::Owned(self.rescale_to(hi, lo.level(), lo.scale())?);
        Ok(if swapped { (Cow::Borrowed(lo), moved) } else { (moved, Cow::Borrowed(lo)) })
    }

    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let tag = self.check_pair(a, b)?;
        let (a, b) = self.reconcile("add", a, b)?;
        self.ops().add(&a, &b, self.out("add", &a, a.level(), a.scale(), tag)?)
    }

    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let tag = self.check_pair(a, b)?;
        let (a, b) = self.reconcile("sub", a, b)?;
        self.ops().sub(&a, &b, self.out("sub", &a, a.level(), a.scale(), tag)?)
    }

    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        self.ops().negate(a, a.meta.clone())
    }

    /// `acc += b` in place (one level and scale, in either mode: an accumulator does not
    /// move). A degree-2 `b` needs a degree-2 `acc`.
    pub fn add_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let tag = self.check_pair(acc, b)?;
        Self::same_level_and_scale("add_assign", acc, b)?;
        self.ops().add_assign(acc, b)?;
        retag(acc, tag)
    }

    /// `acc -= b` in place.
    pub fn sub_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let tag = self.check_pair(acc, b)?;
        Self::same_level_and_scale("sub_assign", acc, b)?;
        self.ops().sub_assign(acc, b)?;
        retag(acc, tag)
    }

    /// `pt` prepared (resident, evaluation form) once, for any number of plaintext
    /// operations at its level or below.
    pub fn prepare_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        check_params(&self.params, pt.params())?;
        self.ops().upload_plaintext(pt)
    }

    /// [`Evaluator::prepare_plaintext`] of a plaintext whose integer coefficients are
    /// `ints`, kept compact where the backend can (`CkksOps::upload_plaintext_compact`):
    /// the same words in every product, a fraction of the memory, a transform per limb
    /// at each use.
    pub fn prepare_plaintext_compact(&self, pt: &Plaintext, ints: &[i64]) -> Result<PreparedPlaintext> {
        check_params(&self.params, pt.params())?;
        self.ops().upload_plaintext_compact(pt, ints)
    }

    fn plain_sum(&self, op: &'static str, a: &Ciphertext, p: &dyn PlainOperand, sub: bool) -> Result<Ciphertext> {
        self.check_one(a)?;
        let p = p.resident(self, a.level())?;
        if !a.scale().same_as(p.scale()) {
            return Err(Error::ScaleMismatch { op, left: a.scale().value(), right: p.scale().value() });
        }
        let tag = a.tag().combine(p.tag())?;
        let out = self.out(op, a, a.level(), a.scale(), tag)?;
        if sub {
            self.ops().sub_plain(a, &p, out)
        } else {
            self.ops().add_plain(a, &p, out)
        }
    }

    /// `a + p` (`p` at `a`'s scale).
    pub fn add_plain(&self, a: &Ciphertext, p: &impl PlainOperand) -> Result<Ciphertext> {
        self.plain_sum("add_plain", a, p, false)
    }

    /// `a - p`.
    pub fn sub_plain(&self, a: &Ciphertext, p: &impl PlainOperand) -> Result<Ciphertext> {
        self.plain_sum("sub_plain", a, p, true)
    }

    /// `a * p`: scale `a.scale * p.scale` (rescaled at once in the automatic mode).
    pub fn mul_plain(&self, a: &Ciphertext, p: &impl PlainOperand) -> Result<Ciphertext> {
        self.check_one(a)?;
        let p = p.resident(self, a.level())?;
        let tag = a.tag().combine(p.tag())?;
        let out = self.out("mul_plain", a, a.level(), a.scale().times(p.scale())?, tag)?;
        let prod = self.ops().mul_plain(a, &p, out)?;
        self.auto_rescale("mul_plain", prod)
    }

    /// `acc += a * p` in place (`acc` at the product's level and scale).
    pub fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &impl PlainOperand) -> Result<()> {
        let tag = self.check_pair(acc, a)?;
        let p = p.resident(self, a.level())?;
        let product = CkksMeta::new(a.params().clone(), a.level(), a.scale().times(p.scale())?, tag)?;
        Self::same_level_and_scale("mul_plain_then_add", acc, &product)?;
        self.ops().mul_plain_then_add(acc, a, &p)?;
        retag(acc, tag.combine(p.tag())?)
    }

    /// `a + c` in every slot (`c` real or complex), encoded at `a`'s scale.
    pub fn add_const(&self, a: &Ciphertext, c: impl Into<Complex>) -> Result<Ciphertext> {
        self.check_one(a)?;
        let r = const_residues(&self.params, c.into(), a.scale().value(), a.level())?;
        self.ops().add_const(a, &r, a.meta.clone())
    }

    /// `a - c` in every slot.
    pub fn sub_const(&self, a: &Ciphertext, c: impl Into<Complex>) -> Result<Ciphertext> {
        self.add_const(a, -c.into())
    }

    /// `a * c` in every slot, `c` encoded at the prime about to be dropped (`q_l`): the
    /// result's scale is `a.scale * q_l`, and its rescale (at once in the automatic mode)
    /// gives `a`'s scale back exactly. At level 0 there is no prime to drop: use
    /// [`Evaluator::mul_int`] for an integer, or a lower-scale ciphertext.
    pub fn mul_const(&self, a: &Ciphertext, c: impl Into<Complex>) -> Result<Ciphertext> {
        self.check_one(a)?;
        let f = self.params.q()[a.level()].0 as f64;
        let out = self.out("mul_const", a, a.level(), a.scale().mul_f64(f)?, a.tag())?;
        let r = const_residues(&self.params, c.into(), f, a.level())?;
        let prod = self.ops().mul_const(a, &r, out)?;
        self.auto_rescale("mul_const", prod)
    }

    /// `acc += a * c` in place, `c` encoded at `q_l` (`acc` at `a.scale * q_l`).
    pub fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, c: impl Into<Complex>) -> Result<()> {
        let tag = self.check_pair(acc, a)?;
        let f = self.params.q()[a.level()].0 as f64;
        let product = CkksMeta::new(a.params().clone(), a.level(), a.scale().mul_f64(f)?, tag)?;
        Self::same_level_and_scale("mul_const_then_add", acc, &product)?;
        let r = const_residues(&self.params, c.into(), f, a.level())?;
        self.ops().mul_const_then_add(acc, a, &r)?;
        retag(acc, tag)
    }

    /// `a * k` for an integer `k`: exact, scale unchanged, no level spent.
    pub fn mul_int(&self, a: &Ciphertext, k: i64) -> Result<Ciphertext> {
        self.check_one(a)?;
        // From the integer itself: exact beyond 2^53, where an `f64` is not.
        let r = ConstResidues { re: int_residues(&self.params, k.into(), a.level()), im: Vec::new() };
        self.ops().mul_const(a, &r, a.meta.clone())
    }

    /// Every slot times `i`: the monomial `X^(N/2)`, exact, no level spent.
    pub fn mul_i(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_one(a)?;
        self.ops().mul_monomial(a, self.params.n() / 2, a.meta.clone())
    }
}

/// A level error for an automatic reconciliation with nothing left to spend.
pub(super) fn level_spent(op: &'static str) -> Error {
    Error::Level { op, found: 0, needed: LevelNeed::AtLeast(1) }
}

/// `acc`'s tag after an in-place operation combined it with `tag`.
fn retag(acc: &mut Ciphertext, tag: KeyTag) -> Result<()> {
    if acc.tag() != tag {
        let meta = acc.meta.with("retag", acc.level(), acc.scale(), tag)?;
        let ct_meta = fhe_api::ckks::CtMeta::new(meta, acc.degree())?;
        acc.set_meta(ct_meta);
    }
    Ok(())
}
