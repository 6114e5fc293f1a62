//! Homomorphic linear transforms from plaintext diagonals, baby-step giant-step.
//!
//! A map on `n` slots (a power of two up to `N/2`; a vector of `n` slots repeats through
//! all `N/2`, as sparse packing leaves it) is held by its nonzero cyclic diagonals:
//! `y_j = sum_k d_k[j] x_(j+k mod n)`. With the offsets in units of their common power of
//! two `u`, each offset is `k = (G + b) u` for a baby `b < B` and a giant `G` (a multiple
//! of `B`), and
//!
//! `y = sum_G rot_G( sum_b rot_-G(d_(G+b)) * rot_b(x) )`.
//!
//! The baby rotations share one decomposition of `x` (hoisting) and stay over `Q_l P`
//! (the lazy ModDown, `docs/CKKS.md`): each giant's inner sum is multiplied and summed
//! there against the pre-rotated diagonals, encoded as extended plaintexts, and divided
//! by `P` once. So a transform costs `B - 1` hoisted rotations, one rotation per giant
//! and one ModDown per giant. The diagonals are encoded once, at the level and scale
//! where they are used ([`PreparedLinearTransform`]).

use std::collections::BTreeMap;

use fhe_api::ckks::{Ciphertext, ExtCiphertext, PreparedPlaintext, Scale};
use fhe_api::error::{Error, KeyNeed, LevelNeed, Result};
use fhe_api::ring::automorphism::galois_element_for_rotation;

use crate::ckks::context::Context;
use crate::ckks::encoding::Complex;
use crate::ckks::evaluator::Evaluator;

/// A linear map on `n` slots by its nonzero cyclic diagonals.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearTransform {
    n: usize,
    diagonals: BTreeMap<usize, Vec<Complex>>,
}

impl LinearTransform {
    /// The map with these diagonals (`offset -> n values`, offsets below `n`); `n` a
    /// power of two.
    pub fn from_diagonals(n: usize, diagonals: BTreeMap<usize, Vec<Complex>>) -> Result<Self> {
        if !n.is_power_of_two() {
            return Err(Error::InvalidInput(format!("a linear transform on {n} slots: a power of two")));
        }
        for (&k, d) in &diagonals {
            if k >= n || d.len() != n {
                return Err(Error::InvalidInput(format!(
                    "diagonal {k} with {} values for a transform on {n} slots",
                    d.len()
                )));
            }
        }
        Ok(LinearTransform { n, diagonals })
    }

    /// The map of a dense `n x n` matrix (`rows[j][i]` multiplies `x_i` into `y_j`);
    /// all-zero diagonals are left out.
    pub fn from_matrix(rows: &[Vec<Complex>]) -> Result<Self> {
        let n = rows.len();
        if rows.iter().any(|r| r.len() != n) {
            return Err(Error::InvalidInput("a linear transform's matrix must be square".into()));
        }
        let mut diagonals = BTreeMap::new();
        for k in 0..n {
            let d: Vec<Complex> = (0..n).map(|j| rows[j][(j + k) % n]).collect();
            if d.iter().any(|c| c.re != 0.0 || c.im != 0.0) {
                diagonals.insert(k, d);
            }
        }
        Self::from_diagonals(n, diagonals)
    }

    /// Slots it acts on.
    pub fn slots(&self) -> usize {
        self.n
    }

    pub fn diagonals(&self) -> &BTreeMap<usize, Vec<Complex>> {
        &self.diagonals
    }

    /// The map applied to plain values (`x.len() == n`), in `f64`.
    pub fn apply_plain(&self, x: &[Complex]) -> Vec<Complex> {
        let n = self.n;
        let mut y = vec![Complex::default(); n];
        for (&k, d) in &self.diagonals {
            for j in 0..n {
                y[j] += d[j] * x[(j + k) % n];
            }
        }
        y
    }

    /// `self` after `first` (`self . first`): `(A B)_(a+b)[p] = A_a[p] B_b[p + a]`.
    pub fn after(&self, first: &LinearTransform) -> Result<LinearTransform> {
        if self.n != first.n {
            return Err(Error::InvalidInput(format!("composing transforms on {} and {} slots", self.n, first.n)));
        }
        let n = self.n;
        let mut out: BTreeMap<usize, Vec<Complex>> = BTreeMap::new();
        for (&a, da) in &self.diagonals {
            for (&b, db) in &first.diagonals {
                let d = out.entry((a + b) % n).or_insert_with(|| vec![Complex::default(); n]);
                for p in 0..n {
                    d[p] += da[p] * db[(p + a) % n];
                }
            }
        }
        Self::from_diagonals(n, out)
    }

    /// Every diagonal times `c`.
    pub fn scaled(mut self, c: f64) -> LinearTransform {
        for d in self.diagonals.values_mut() {
            d.iter_mut().for_each(|v| *v = *v * c);
        }
        self
    }

    /// The baby-step giant-step split: the offset unit, the babies (in units) and, per
    /// giant (in units), its `(baby, diagonal offset)` terms.
    fn plan(&self) -> Plan {
        let unit = self.diagonals.keys().filter(|&&k| k != 0).map(|k| 1usize << k.trailing_zeros()).min().unwrap_or(1);
        let count = self.diagonals.len().max(1);
        // About sqrt(2 count) babies: a baby (hoisted, lazy) costs less than a giant.
        let mut bb = 1usize;
        while bb * bb < 2 * count {
            bb *= 2;
        }
        let bb = bb.min(self.n / unit);
        let mut giants: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        let mut babies = std::collections::BTreeSet::new();
        for &k in self.diagonals.keys() {
            let u = k / unit;
            let (g, b) = (u - u % bb, u % bb);
            giants.entry(g).or_default().push((b, k));
            babies.insert(b);
        }
        Plan { unit, babies: babies.into_iter().collect(), giants }
    }

    /// Baby steps of its baby-step giant-step split (the rotations kept at once).
    pub fn baby_count(&self) -> usize {
        self.plan().babies.len()
    }

    /// The rotation steps (signed, in `(-n/2, n/2]`) whose Galois keys applying it needs.
    pub fn rotations(&self) -> Vec<i64> {
        let plan = self.plan();
        let mut steps: Vec<i64> = plan
            .babies
            .iter()
            .chain(plan.giants.keys())
            .filter(|&&u| u != 0)
            .map(|&u| signed(u * plan.unit, self.n))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }
}

struct Plan {
    unit: usize,
    babies: Vec<usize>,
    giants: BTreeMap<usize, Vec<(usize, usize)>>,
}

/// `k` in `(-n/2, n/2]`: the same rotation of an `n`-periodic vector, and the key it
/// shares with every size of transform.
fn signed(k: usize, n: usize) -> i64 {
    if k > n / 2 {
        k as i64 - n as i64
    } else {
        k as i64
    }
}

/// How a prepared transform keeps its diagonals on the backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiagonalForm {
    /// Every limb in evaluation form: the fastest products.
    #[default]
    Evaluation,
    /// The integer coefficients alone, where the backend keeps them so
    /// (`CkksOps::keeps_compact_plaintexts`; elsewhere whole): `1 / (l + 1 + K)` of the
    /// memory at level `l`, and a transform per limb at each use. The same words. A
    /// diagonal with a coefficient of `2^63` or more is kept whole.
    Compact,
}

/// A transform with its diagonals encoded (extended plaintexts, resident) at one level
/// and scale: `Context::prepare_linear_transform`.
#[derive(Debug)]
pub struct PreparedLinearTransform {
    n: usize,
    level: usize,
    scale: Scale,
    /// Baby rotation steps (the first may be zero).
    babies: Vec<i64>,
    /// Giant rotation step and its terms `(index into babies, pre-rotated diagonal)`.
    giants: Vec<(i64, Vec<(usize, PreparedPlaintext)>)>,
}

impl PreparedLinearTransform {
    pub fn level(&self) -> usize {
        self.level
    }
    pub fn scale(&self) -> Scale {
        self.scale
    }
    pub fn slots(&self) -> usize {
        self.n
    }
    /// Plaintexts it holds.
    pub fn plaintexts(&self) -> usize {
        self.giants.iter().map(|(_, t)| t.len()).sum()
    }
}

impl Context {
    /// `lt`'s diagonals encoded for an input at `level`: each pre-rotated for its giant
    /// step, repeated through the `N/2` slots, extended over `P`, at `scale` (the
    /// result's scale is the input's times `scale`; `q_level` gives the input's back after
    /// a rescale).
    pub fn prepare_linear_transform(
        &self,
        ev: &Evaluator,
        lt: &LinearTransform,
        level: usize,
        scale: Scale,
    ) -> Result<PreparedLinearTransform> {
        self.prepare_linear_transform_as(ev, lt, level, scale, DiagonalForm::Evaluation)
    }

    /// [`Context::prepare_linear_transform`] with the diagonals kept in `form`.
    pub fn prepare_linear_transform_as(
        &self,
        ev: &Evaluator,
        lt: &LinearTransform,
        level: usize,
        scale: Scale,
        form: DiagonalForm,
    ) -> Result<PreparedLinearTransform> {
        let (n, full) = (lt.n, self.params().slots());
        if n > full {
            return Err(Error::InvalidInput(format!("a transform on {n} slots for {full} slots")));
        }
        let plan = lt.plan();
        let index: BTreeMap<usize, usize> = plan.babies.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut giants = Vec::new();
        for (&g, terms) in &plan.giants {
            let shift = g * plan.unit;
            let mut prepared = Vec::new();
            for &(b, k) in terms {
                let d = &lt.diagonals[&k];
                // rot_-G(d)[i] = d[i - G], then periodic through all N/2 slots.
                let values: Vec<Complex> = (0..full).map(|i| d[(i % n + n - shift % n) % n]).collect();
                let pt = match form {
                    DiagonalForm::Evaluation => ev.prepare_plaintext(&self.encode_extended(&values, level, scale)?)?,
                    DiagonalForm::Compact => match self.encode_extended_ints(&values, level, scale)? {
                        (pt, Some(ints)) => ev.prepare_plaintext_compact(&pt, &ints)?,
                        (pt, None) => ev.prepare_plaintext(&pt)?,
                    },
                };
                prepared.push((index[&b], pt));
            }
            giants.push((signed(shift, n), prepared));
        }
        let babies = plan.babies.iter().map(|&b| signed(b * plan.unit, n)).collect();
        Ok(PreparedLinearTransform { n, level, scale, babies, giants })
    }
}

impl Evaluator {
    /// `lt(x)`: scale `x.scale * lt.scale`, rescaled at once in the automatic mode. `x`
    /// at `lt`'s level (or above: it is dropped); needs the Galois keys of
    /// [`LinearTransform::rotations`].
    pub fn linear_transform(&self, x: &Ciphertext, lt: &PreparedLinearTransform) -> Result<Ciphertext> {
        let y = self.linear_transform_unscaled(x, lt)?;
        self.auto_rescale("linear_transform", y)
    }

    /// [`Evaluator::linear_transform`] without the automatic rescale (either mode).
    pub(crate) fn linear_transform_unscaled(&self, x: &Ciphertext, lt: &PreparedLinearTransform) -> Result<Ciphertext> {
        self.check_one(x)?;
        if x.level() < lt.level {
            return Err(Error::Level {
                op: "linear_transform",
                found: x.level(),
                needed: LevelNeed::AtLeast(lt.level),
            });
        }
        let x = self.drop_to_level(x, lt.level)?;
        let out = self.out("linear_transform", &x, x.level(), x.scale().times(lt.scale)?, x.tag())?;
        let ring = self.params().ring_degree();
        // The babies over Q_l P: x lifted, and the rest rotated lazily from one ModUp.
        let mut keys = Vec::new();
        for &b in lt.babies.iter().filter(|&&b| b != 0) {
            let g = galois_element_for_rotation(ring, b);
            keys.push(self.galois_key(g, x.level(), || KeyNeed::Rotation { steps: b, element: g })?);
        }
        let mut rotated = if keys.is_empty() {
            Vec::new()
        } else {
            let refs: Vec<_> = keys.iter().map(|k| &**k).collect();
            self.ops().apply_galois_lazy(&self.ops().hoist(&x)?, &refs, x.meta.clone())?
        }
        .into_iter();
        let babies: Vec<ExtCiphertext> =
            lt.babies
                .iter()
                .map(|&b| {
                    if b == 0 {
                        self.ops().lift(&x, x.meta.clone())
                    } else {
                        Ok(rotated.next().expect("one per key"))
                    }
                })
                .collect::<Result<_>>()?;
        let mut total: Option<Ciphertext> = None;
        for (g, terms) in &lt.giants {
            let xs: Vec<&ExtCiphertext> = terms.iter().map(|(b, _)| &babies[*b]).collect();
            let ps: Vec<&PreparedPlaintext> = terms.iter().map(|(_, p)| p).collect();
            let acc = self.ops().ext_dot_plain(&xs, &ps, out.clone())?;
            let inner = self.ops().mod_down(&acc, out.clone())?;
            let part = self.rotate(&inner, *g)?;
            match &mut total {
                None => total = Some(part),
                Some(t) => self.add_assign(t, &part)?,
            }
        }
        match total {
            Some(t) => Ok(t),
            None => Err(Error::InvalidInput("a linear transform with no diagonal".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex {
        Complex::new(re, im)
    }

    #[test]
    fn diagonals_compose_like_matrices() {
        let n = 8;
        let m = |s: f64| -> Vec<Vec<Complex>> {
            (0..n).map(|j| (0..n).map(|i| c(((j * 3 + i) % 5) as f64 - s, (i * j % 3) as f64)).collect()).collect()
        };
        let (a, b) = (m(1.0), m(2.0));
        let x: Vec<Complex> = (0..n).map(|i| c(i as f64, 1.0 - i as f64)).collect();
        let (la, lb) = (LinearTransform::from_matrix(&a).unwrap(), LinearTransform::from_matrix(&b).unwrap());
        let direct = la.apply_plain(&lb.apply_plain(&x));
        let composed = la.after(&lb).unwrap().apply_plain(&x);
        for (u, v) in direct.iter().zip(&composed) {
            assert!((*u - *v).abs() < 1e-9);
        }
        let dense: Vec<Complex> = (0..n).map(|j| (0..n).fold(c(0.0, 0.0), |s, i| s + a[j][i] * x[i])).collect();
        for (u, v) in dense.iter().zip(&la.apply_plain(&x)) {
            assert!((*u - *v).abs() < 1e-9);
        }
    }

    #[test]
    fn the_plan_covers_every_diagonal_once_with_few_rotations() {
        let n = 1 << 10;
        // Offsets -7 .. 7 in units of 4: 15 diagonals.
        let diagonals: BTreeMap<usize, Vec<Complex>> =
            (-7i64..=7).map(|k| ((k * 4).rem_euclid(n as i64) as usize, vec![c(1.0, 0.0); n])).collect();
        let lt = LinearTransform::from_diagonals(n, diagonals).unwrap();
        let plan = lt.plan();
        assert_eq!(plan.unit, 4);
        let covered: usize = plan.giants.values().map(|t| t.len()).sum();
        assert_eq!(covered, 15);
        assert!(lt.rotations().len() <= 9, "{:?}", lt.rotations());
        assert!(lt.rotations().iter().all(|s| s.abs() <= n as i64 / 2 && *s != 0));
        assert!(LinearTransform::from_diagonals(6, BTreeMap::new()).is_err());
        assert!(LinearTransform::from_diagonals(8, BTreeMap::from([(8, vec![c(0.0, 0.0); 8])])).is_err());
    }
}
