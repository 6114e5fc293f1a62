//! A series evaluated on a ciphertext, in the Chebyshev basis (`T_i` of a real input) or
//! the power basis (`z^i`, for a complex `z` on or inside the unit circle): baby-step
//! giant-step (Paterson-Stockmeyer style) over `T_0 .. T_{B-1}` (babies) and `T_B, T_2B,
//! T_4B, ...` (giants). Coefficients may be complex (a product by `a + ib` is one
//! constant product, the backend encodes both parts).
//!
//! The Chebyshev basis: `T_2k = 2 T_k^2 - 1` and `T_{a+b} = 2 T_a T_b - T_{a-b}`; the
//! power basis: `z^(a+b) = z^a z^b`; either term `i` at depth `ceil(log2 i)`. A series of
//! degree below `B` is a leaf: `sum c_i T_i`, the babies multiplied by constants and
//! summed before one rescale (lazy: one level for all). A longer one is split at the
//! largest giant `T_g <= degree` (`p = q T_g + r`; Chebyshev: `T_{g+j} = 2 T_g T_j -
//! T_{g-j}`), and both halves recursed against a target depth: the quotient in one level
//! less than the remainder, so its product with `T_g` lands in time, and a leaf only
//! where its constants fit. Depth: `ceil(log2(d + 1))` for most `d` ([`chebyshev_depth`],
//! the same for both bases), the optimum.
//!
//! Scales: every intermediate sits at the canonical scale of its level
//! ([`fhe_api::ckks::Params::scale_at`]), so a product of two rescaled lands on the next
//! level's exactly, a sum needs no correction, and an operand from a higher level is
//! brought down by [`Evaluator::rescale_to`]. The leaf's constants are encoded so that
//! each product lands on the same scale, whatever level its baby came from.

use std::collections::BTreeMap;

use fhe_api::ckks::Ciphertext;
use fhe_api::error::{Error, LevelNeed, Result};

use super::chebyshev::Chebyshev;
use crate::ckks::encoding::Complex;
use crate::ckks::evaluator::Evaluator;

/// The baby-step count (a power of two) the evaluator uses for a degree.
pub fn baby_steps(degree: usize) -> usize {
    let m = usize::BITS - degree.leading_zeros(); // ceil(log2(degree + 1)) for degree >= 1
    1 << m.div_ceil(2).max(1)
}

/// `ceil(log2 i)`: the depth of `T_i` (`T_0` and `T_1` are free).
fn basis_depth(i: usize) -> usize {
    (usize::BITS - (i.max(1) - 1).leading_zeros()) as usize
}

/// The largest power of two at or below `d >= 1`.
fn giant(d: usize) -> usize {
    1 << (usize::BITS - 1 - d.leading_zeros())
}

/// Whether a series of degree `d` (babies `< bb`) can be evaluated in `depth` levels: as a
/// leaf (its top baby's depth, plus one for the constants), or split at the giant `T_g`
/// with the quotient in `depth - 1` (so its product with `T_g` fits) and the remainder
/// in `depth`.
fn fits(d: usize, depth: usize, bb: usize) -> bool {
    if d == 0 {
        return true;
    }
    if d < bb && basis_depth(d) < depth {
        return true;
    }
    if d < 2 || depth == 0 {
        return false;
    }
    let g = giant(d);
    basis_depth(g) < depth && (d == g || fits(d - g, depth - 1, bb)) && fits(g - 1, depth, bb)
}

/// Levels [`Evaluator::eval_chebyshev`] spends on a series of `degree`, from an input at
/// its canonical scale on `[-1, 1]` (one more otherwise): `ceil(log2(degree + 1))` for
/// most degrees (59, 119, 247 ...), one more just below a power of two (63, 127 ...),
/// where the last leaf's constants cannot share a level with its giant.
pub fn chebyshev_depth(degree: usize) -> usize {
    let bb = baby_steps(degree);
    (basis_depth(degree + 1)..).find(|&d| fits(degree, d, bb)).expect("depth ceil(log2) + 1 always fits")
}

/// A partial result: a constant (no ciphertext yet) or a ciphertext at its level's
/// canonical scale.
enum Value {
    Const(Complex),
    Ct(Ciphertext),
}

/// Which basis a series is written in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Chebyshev,
    Power,
}

/// The basis terms computed so far (`1` is the input), each once.
struct Basis {
    kind: Kind,
    terms: BTreeMap<usize, Ciphertext>,
}

const ZERO: Complex = Complex::new(0.0, 0.0);

impl Evaluator {
    /// `p(x)` for a Chebyshev series `p` on `[p.a, p.b]` (from
    /// [`Chebyshev::interpolate`]). Levels spent: [`chebyshev_depth`] when `x` is at its
    /// level's canonical scale (any result of the automatic mode, a fresh encryption at
    /// the top level) and the interval is `[-1, 1]`; one more otherwise (the change of
    /// variable). The result is at its level's canonical scale. `x` must hold real values
    /// in the interval: outside it the series diverges quickly.
    pub fn eval_chebyshev(&self, x: &Ciphertext, p: &Chebyshev) -> Result<Ciphertext> {
        let c: Vec<Complex> = p.coeffs.iter().map(|&c| Complex::from(c)).collect();
        self.eval_chebyshev_coeffs(x, p.a, p.b, &c)
    }

    /// `re(x) + i im(x)` for two Chebyshev series on the same interval (a complex function
    /// of a real input, e.g. `exp(i w x)` from its cosine and sine), in one evaluation:
    /// the basis and every product are shared, so it costs about one real series.
    /// Levels and conditions as [`Evaluator::eval_chebyshev`] for the higher degree.
    pub fn eval_chebyshev_complex(&self, x: &Ciphertext, re: &Chebyshev, im: &Chebyshev) -> Result<Ciphertext> {
        if re.a != im.a || re.b != im.b {
            return Err(Error::InvalidInput(format!(
                "complex Chebyshev series on two intervals: [{}, {}] and [{}, {}]",
                re.a, re.b, im.a, im.b
            )));
        }
        let n = re.coeffs.len().max(im.coeffs.len());
        let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
        let c: Vec<Complex> = (0..n).map(|i| Complex::new(at(&re.coeffs, i), at(&im.coeffs, i))).collect();
        self.eval_chebyshev_coeffs(x, re.a, re.b, &c)
    }

    /// `sum_j c_j z^j` for a ciphertext `z` whose slots lie on or inside the unit circle
    /// (the powers stay bounded), complex coefficients `c_0 ..= c_d`. Levels spent:
    /// [`chebyshev_depth`]`(d)`, `z` at its level's canonical scale; the result at its
    /// level's canonical scale.
    pub fn eval_power_series(&self, z: &Ciphertext, c: &[Complex]) -> Result<Ciphertext> {
        self.check_one(z)?;
        let z = self.canonical_label(z.clone())?;
        let mut basis = Basis { kind: Kind::Power, terms: BTreeMap::from([(1usize, z)]) };
        self.eval_basis(&mut basis, c, "eval_power_series")
    }

    fn eval_chebyshev_coeffs(&self, x: &Ciphertext, a: f64, b: f64, c: &[Complex]) -> Result<Ciphertext> {
        self.check_one(x)?;
        let x = self.chebyshev_input(x, a, b)?;
        let mut basis = Basis { kind: Kind::Chebyshev, terms: BTreeMap::from([(1usize, x)]) };
        self.eval_basis(&mut basis, c, "eval_chebyshev")
    }

    /// The series `c` over `basis` (holding its input as term 1), in the depth of its degree.
    fn eval_basis(&self, basis: &mut Basis, c: &[Complex], op: &'static str) -> Result<Ciphertext> {
        if c.is_empty() {
            return Err(Error::InvalidInput("a series with no coefficients".into()));
        }
        let degree = c.len() - 1;
        let need = chebyshev_depth(degree);
        let found = basis.terms[&1].level();
        if found < need {
            return Err(Error::Level { op, found, needed: LevelNeed::AtLeast(need) });
        }
        let bb = baby_steps(degree);
        match self.eval_series(basis, c, bb, need)? {
            Value::Ct(ct) => Ok(ct),
            // A constant series: `0 * x + c`, a ciphertext like any other result.
            Value::Const(k) => {
                let level = basis.terms[&1].level();
                self.leaf(basis, &[k, ZERO], Some(level))
            }
        }
    }

    /// `u = (2x - a - b) / (b - a)` at the canonical scale of its level.
    fn chebyshev_input(&self, x: &Ciphertext, a: f64, b: f64) -> Result<Ciphertext> {
        let canonical = self.params().scale_at(x.level());
        if a == -1.0 && b == 1.0 && x.scale().same_as(canonical) {
            return Ok(x.clone());
        }
        let l = x.level();
        if l == 0 {
            return Err(Error::Level { op: "eval_chebyshev", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let target = self.params().scale_at(l - 1);
        let f = target.value() * self.params().q()[l].0 as f64 / x.scale().value();
        let scaled = self.rescale(&self.mul_const_scaled(x, 2.0 / (b - a), f)?)?;
        self.add_const(&self.canonical_label(scaled)?, -(a + b) / (b - a))
    }

    /// `ct` labelled with its level's canonical scale, which it is within rounding.
    pub(crate) fn canonical_label(&self, ct: Ciphertext) -> Result<Ciphertext> {
        let s = self.params().scale_at(ct.level());
        if !ct.scale().same_as(s) {
            return Err(Error::ScaleMismatch { op: "eval_chebyshev", left: ct.scale().value(), right: s.value() });
        }
        if ct.scale() == s {
            Ok(ct)
        } else {
            self.relabel(&ct, s)
        }
    }

    /// `ct` at `level` (at or below its own) and that level's canonical scale.
    pub(crate) fn canonical_at(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let s = self.params().scale_at(level);
        self.canonical_label(self.rescale_to(ct, level, s)?)
    }

    /// Basis term `i`, computed once.
    fn term(&self, basis: &mut Basis, i: usize) -> Result<Ciphertext> {
        if let Some(t) = basis.terms.get(&i) {
            return Ok(t.clone());
        }
        let t = if i.is_power_of_two() {
            let h = self.term(basis, i / 2)?;
            let sq = self.canonical_product(&h, &h)?;
            match basis.kind {
                Kind::Chebyshev => self.sub_const(&self.mul_int(&sq, 2)?, 1.0)?,
                Kind::Power => sq,
            }
        } else {
            let a = 1 << (usize::BITS - 1 - i.leading_zeros());
            let (ta, tb) = (self.term(basis, a)?, self.term(basis, i - a)?);
            match basis.kind {
                Kind::Chebyshev => {
                    let mut raw = self.mul_int(&self.raw_product(&ta, &tb)?, 2)?;
                    // T_(a-b) is no deeper than T_a: subtracted before the one rescale.
                    let low = self.term(basis, a - (i - a))?;
                    self.fold_into(&mut raw, &low, -1.0)?;
                    self.canonical_label(self.rescale(&raw)?)?
                }
                Kind::Power => self.canonical_product(&ta, &tb)?,
            }
        };
        basis.terms.insert(i, t.clone());
        Ok(t)
    }

    /// `a * b` rescaled, both brought to the lower level first: canonical in, canonical out.
    pub(crate) fn canonical_product(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.at_lower_level(a, b)?;
        self.canonical_label(self.mul_relin_rescale_only(&a, &b)?)
    }

    /// `a * b` at the lower level (level 1 or above), relinearized, not rescaled.
    fn raw_product(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.at_lower_level(a, b)?;
        self.mul_relin_only(&a, &b)
    }

    /// Both operands canonical at the lower of their levels, which must be 1 or above.
    fn at_lower_level(&self, a: &Ciphertext, b: &Ciphertext) -> Result<(Ciphertext, Ciphertext)> {
        let l = a.level().min(b.level());
        if l == 0 {
            return Err(Error::Level { op: "eval_chebyshev", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        Ok((self.canonical_at(a, l)?, self.canonical_at(b, l)?))
    }

    /// `raw += k * x` before `raw`'s rescale: `x` (canonical, at `raw`'s level or above)
    /// dropped and multiplied by `k` encoded at `raw.scale / x.scale` (so the scales
    /// agree exactly; the constant is that factor rounded, within `0.5 / factor`), no level
    /// spent.
    fn fold_into(&self, raw: &mut Ciphertext, x: &Ciphertext, k: impl Into<Complex>) -> Result<()> {
        let x = self.drop_to_level(x, raw.level())?;
        let f = raw.scale().value() / x.scale().value();
        self.mul_const_then_add_scaled(raw, &x, k, f)
    }

    /// The series `c` in at most `depth` levels below the input (`fits` said it can).
    fn eval_series(&self, basis: &mut Basis, c: &[Complex], bb: usize, depth: usize) -> Result<Value> {
        let Some(d) = c.iter().rposition(|&x| x != ZERO).filter(|&d| d > 0) else {
            return Ok(Value::Const(c[0]));
        };
        let c = &c[..=d];
        if d < bb && basis_depth(d) < depth {
            return self.leaf(basis, c, None).map(Value::Ct);
        }
        let g = giant(d);
        let (q, r) = match basis.kind {
            // p = q T_g + r: q_0 = c_g, q_j = 2 c_(g+j); r_i = c_i - c_(2g-i) where 2g - i <= d.
            Kind::Chebyshev => {
                let mut q: Vec<Complex> = c[g..].iter().map(|&x| x * 2.0).collect();
                q[0] = c[g];
                let mut r = c[..g].to_vec();
                for (i, ri) in r.iter_mut().enumerate().skip(1) {
                    if 2 * g - i <= d {
                        *ri -= c[2 * g - i];
                    }
                }
                (q, r)
            }
            Kind::Power => (c[g..].to_vec(), c[..g].to_vec()),
        };
        let tg = self.term(basis, g)?;
        let mut raw = match self.eval_series(basis, &q, bb, depth - 1)? {
            Value::Const(k) => {
                let l = tg.level();
                let f = self.params().scale_at(l - 1).value() * self.params().q()[l].0 as f64 / tg.scale().value();
                self.mul_const_scaled(&tg, k, f)?
            }
            Value::Ct(qc) => self.raw_product(&qc, &tg)?,
        };
        Ok(Value::Ct(match self.eval_series(basis, &r, bb, depth)? {
            Value::Const(k) => self.add_const(&self.canonical_label(self.rescale(&raw)?)?, k)?,
            // The remainder joins the product before its rescale when it is high enough.
            Value::Ct(rc) if rc.level() >= raw.level() => {
                self.fold_into(&mut raw, &rc, 1.0)?;
                self.canonical_label(self.rescale(&raw)?)?
            }
            Value::Ct(rc) => {
                let qg = self.canonical_label(self.rescale(&raw)?)?;
                let l = qg.level().min(rc.level());
                self.add(&self.canonical_at(&qg, l)?, &self.canonical_at(&rc, l)?)?
            }
        }))
    }

    /// `sum_i c_i T_i` for babies `i < c.len()`: each baby dropped to the lowest level
    /// used (or `at`) and multiplied by its constant encoded to land on one scale, summed,
    /// rescaled once. With no nonzero baby, `at` names the level of `0 * T_1`.
    fn leaf(&self, basis: &mut Basis, c: &[Complex], at: Option<usize>) -> Result<Ciphertext> {
        let used: Vec<usize> = (1..c.len()).filter(|&i| c[i] != ZERO).collect();
        let babies = used.iter().map(|&i| self.term(basis, i)).collect::<Result<Vec<_>>>()?;
        let t = match at {
            Some(t) => t,
            None => {
                babies.iter().map(|b| b.level()).min().ok_or_else(|| Error::InvalidInput("a constant leaf".into()))?
            }
        };
        if t == 0 {
            return Err(Error::Level { op: "eval_chebyshev", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let target = self.params().scale_at(t - 1).value() * self.params().q()[t].0 as f64;
        let mut acc: Option<Ciphertext> = None;
        let t1 = basis.terms[&1].clone();
        let terms: Vec<(Complex, Ciphertext)> =
            if used.is_empty() { vec![(ZERO, t1)] } else { used.iter().map(|&i| c[i]).zip(babies).collect() };
        for (ci, b) in terms {
            let b = self.drop_to_level(&b, t)?;
            let f = target / b.scale().value();
            match &mut acc {
                None => acc = Some(self.mul_const_scaled(&b, ci, f)?),
                Some(acc) => self.mul_const_then_add_scaled(acc, &b, ci, f)?,
            }
        }
        let sum = self.canonical_label(self.rescale(&acc.expect("one term"))?)?;
        self.add_const(&sum, c[0])
    }
}
