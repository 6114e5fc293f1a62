//! Element-wise CKKS arithmetic in evaluation form, limb by limb on all cores: sums,
//! plaintext and constant products (and their accumulating forms), monomials and the
//! tensor product. Every result word is fully reduced below its limb's prime.
//!
//! A constant `re + im X^(N/2)` is, in evaluation form, `re + im w` with `w` the
//! transform of `X^(N/2)` (a square root of `-1` per slot); a real constant stays a
//! scalar per limb.

use rayon::prelude::*;

use fhe_api::ops::ConstResidues;
use fhe_api::{Error, Result};

use super::plan::CkksPlan;
use crate::arith;

/// `coeffs` (coefficient form, limb-major) to evaluation form, in a pooled buffer.
pub fn to_eval(plan: &CkksPlan, coeffs: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let mut m = plan.take_vec(coeffs.len());
    m.copy_from_slice(coeffs);
    m.par_chunks_mut(n).enumerate().for_each(|(i, limb)| plan.primes[i].ntt.forward(limb));
    m
}

/// `f(modulus, x, y)` on every word of two polynomials of the same limbs.
fn zip(
    plan: &CkksPlan,
    x: &[u64],
    y: &[u64],
    f: impl Fn(&fhe_api::ring::modulus::Modulus, u64, u64) -> u64 + Sync,
) -> Vec<u64> {
    let n = plan.params.n();
    let mut out = plan.take_vec(x.len());
    out.par_chunks_mut(n).zip(x.par_chunks(n).zip(y.par_chunks(n))).enumerate().for_each(|(i, (o, (x, y)))| {
        let m = &plan.primes[i].m;
        o.iter_mut().zip(x.iter().zip(y)).for_each(|(o, (&x, &y))| *o = f(m, x, y));
    });
    out
}

/// `-x`.
pub fn negate(plan: &CkksPlan, x: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let mut out = plan.take_vec(x.len());
    out.par_chunks_mut(n).zip(x.par_chunks(n)).enumerate().for_each(|(i, (o, x))| {
        let m = &plan.primes[i].m;
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = m.sub(0, x));
    });
    out
}

/// `xs + ys` (or `xs - ys`) part by part; the result has the larger degree (a missing
/// part counts as zero).
pub fn add_sub(plan: &CkksPlan, xs: &[Vec<u64>], ys: &[Vec<u64>], sub: bool) -> Vec<Vec<u64>> {
    (0..xs.len().max(ys.len()))
        .map(|k| match (xs.get(k), ys.get(k)) {
            (Some(x), Some(y)) if sub => zip(plan, x, y, |m, a, b| m.sub(a, b)),
            (Some(x), Some(y)) => zip(plan, x, y, |m, a, b| m.add(a, b)),
            (Some(x), None) => super::copy(plan, x),
            (None, Some(y)) if sub => negate(plan, y),
            (None, Some(y)) => super::copy(plan, y),
            (None, None) => unreachable!("k is below one of the lengths"),
        })
        .collect()
}

/// `acc += ys` (or `-=`) in place; `ys` may not have a higher degree than `acc`.
pub fn accumulate(plan: &CkksPlan, acc: &mut [Vec<u64>], ys: &[Vec<u64>], sub: bool) -> Result<()> {
    check_degree(acc.len(), ys.len())?;
    let n = plan.params.n();
    for (a, y) in acc.iter_mut().zip(ys) {
        a.par_chunks_mut(n).zip(y.par_chunks(n)).enumerate().for_each(|(i, (a, y))| {
            let m = &plan.primes[i].m;
            if sub {
                a.iter_mut().zip(y).for_each(|(a, &y)| *a = m.sub(*a, y));
            } else {
                a.iter_mut().zip(y).for_each(|(a, &y)| *a = m.add(*a, y));
            }
        });
    }
    Ok(())
}

fn check_degree(acc: usize, x: usize) -> Result<()> {
    if x > acc {
        return Err(Error::InvalidInput(format!(
            "an accumulator of degree {} cannot take a term of degree {}: accumulate products into a degree-2 \
             ciphertext (Evaluator::tensor) or relinearize the term first",
            acc - 1,
            x - 1
        )));
    }
    Ok(())
}

/// `(c0 + m, c1, ..)` (or `c0 - m`), `m` over at least `c0`'s limbs.
pub fn plus_c0(plan: &CkksPlan, xs: &[Vec<u64>], m: &[u64], sub: bool) -> Vec<Vec<u64>> {
    let mut parts = Vec::with_capacity(xs.len());
    let m = &m[..xs[0].len()];
    parts.push(if sub {
        zip(plan, &xs[0], m, |q, a, b| q.sub(a, b))
    } else {
        zip(plan, &xs[0], m, |q, a, b| q.add(a, b))
    });
    parts.extend(xs[1..].iter().map(|x| super::copy(plan, x)));
    parts
}

/// `x * m` pointwise, `m` over at least `x`'s limbs.
pub fn mul(plan: &CkksPlan, x: &[u64], m: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let mut out = plan.take_vec(x.len());
    out.par_chunks_mut(n).zip(x.par_chunks(n).zip(m.par_chunks(n))).enumerate().for_each(|(i, (o, (x, m)))| {
        arith::mul(&plan.primes[i].m, x, m, o);
    });
    out
}

/// `acc += xs * m` part by part, in place.
pub fn mul_accumulate(plan: &CkksPlan, acc: &mut [Vec<u64>], xs: &[Vec<u64>], m: &[u64]) -> Result<()> {
    check_degree(acc.len(), xs.len())?;
    let n = plan.params.n();
    for (a, x) in acc.iter_mut().zip(xs) {
        let m = &m[..x.len()];
        a.par_chunks_mut(n).zip(x.par_chunks(n).zip(m.par_chunks(n))).enumerate().for_each(|(i, (a, (x, m)))| {
            arith::mul_add(&plan.primes[i].m, x, m, a);
        });
    }
    Ok(())
}

/// The evaluation form of the constant `c` over `q_0..q_level`: `re` in every slot, plus
/// `im` times the transform of `X^(N/2)`.
pub fn constant(plan: &CkksPlan, level: usize, c: &ConstResidues) -> Result<Vec<u64>> {
    let limbs = level + 1;
    let q = &plan.params.q()[..limbs];
    let bad = |v: &[u64]| v.len() != limbs || v.iter().zip(q).any(|(&r, q)| r >= q.0);
    if bad(&c.re) || (!c.im.is_empty() && bad(&c.im)) {
        return Err(Error::InvalidInput(format!("a constant needs {limbs} residues per part, each below its prime")));
    }
    let n = plan.params.n();
    let mut out = plan.take_vec(limbs * n);
    if c.im.is_empty() {
        out.par_chunks_mut(n).enumerate().for_each(|(i, o)| o.fill(c.re[i]));
        return Ok(out);
    }
    let w = plan.monomial(n / 2)?;
    out.par_chunks_mut(n).zip(w.par_chunks(n)).enumerate().for_each(|(i, (o, w))| {
        let m = &plan.primes[i].m;
        o.iter_mut().zip(w).for_each(|(o, &w)| *o = m.add(c.re[i], m.mul(c.im[i], w)));
    });
    Ok(out)
}

/// The transform of `X^k` over `q_0..q_level` (`0 <= k < 2N`; `X^N = -1`).
pub fn monomial(plan: &CkksPlan, level: usize, k: usize) -> Result<Vec<u64>> {
    let n = plan.params.n();
    if k >= 2 * n {
        return Err(Error::InvalidInput(format!("monomial X^{k}: the exponent must be below 2N = {}", 2 * n)));
    }
    let table = plan.monomial(k)?;
    Ok(super::copy(plan, &table[..(level + 1) * n]))
}

/// `(x0 y0, x0 y1 + x1 y0, x1 y1)` of two degree-1 ciphertexts, in one pass per limb.
pub fn tensor(plan: &CkksPlan, xs: &[Vec<u64>], ys: &[Vec<u64>]) -> [Vec<u64>; 3] {
    let n = plan.params.n();
    let len = xs[0].len();
    let (mut d0, mut d1, mut d2) = (plan.take_vec(len), plan.take_vec(len), plan.take_vec(len));
    d0.par_chunks_mut(n).zip(d1.par_chunks_mut(n)).zip(d2.par_chunks_mut(n)).enumerate().for_each(
        |(i, ((o0, o1), o2))| {
            let r = i * n..(i + 1) * n;
            let xy = [&xs[0][r.clone()], &xs[1][r.clone()], &ys[0][r.clone()], &ys[1][r]];
            arith::tensor(&plan.primes[i].m, xy, [o0, o1, o2]);
        },
    );
    [d0, d1, d2]
}
