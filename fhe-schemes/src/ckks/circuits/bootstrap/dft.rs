//! The encoding matrix as sparse factors: CoeffsToSlots and SlotsToCoeffs.
//!
//! Decoding (coefficients to slots) on `n` slots is `U w`, `U_(j,i) = xi^(i 5^j)`, `xi =
//! exp(2 pi i / 4n)` ([`crate::ckks::fft`]). As an FFT, `U = S_k ... S_1 R` (`k = log2
//! n`, `R` the bit reversal): stage `S_t` (length `len = 2^t`) pairs slot `p` with `p +
//! len/2` in each block of `len` and twists the second by `xi_(4 len)^(5^j mod 4 len)`,
//! `j` its place in the half-block: three diagonals (offsets `0, +-len/2`). Bootstrapping
//! never applies `R`: CoeffsToSlots computes `R U^-1 = S_1^-1 ... S_k^-1` (the
//! coefficients in bit-reversed order), the slot-wise modular reduction does not care,
//! and SlotsToCoeffs applies `S_k ... S_1` to them. Consecutive stages are merged into
//! one factor per level of the budget (`g` stages: at most `2^(g+1) - 1` diagonals).

use std::collections::BTreeMap;

use fhe_api::error::{Error, Result};

use crate::ckks::circuits::linear::LinearTransform;
use crate::ckks::encoding::Complex;
use crate::ckks::fft::roots;

/// The twiddle `xi_(4 len)^(5^j mod 4 len)` from the table of `4n` roots.
fn twiddle(table: &[Complex], n: usize, len: usize, j: usize) -> Complex {
    let lenq = 4 * len;
    let mut e = 1usize;
    for _ in 0..j {
        e = (e * 5) % lenq;
    }
    table[e * (4 * n / lenq)]
}

/// `S_t` (forward, `inverse == false`) or `S_t^-1` for `len = 2^t` on `n` slots.
fn stage(n: usize, len: usize, inverse: bool) -> Result<LinearTransform> {
    let table = roots((4 * n).trailing_zeros());
    let half = len / 2;
    let mut d: BTreeMap<usize, Vec<Complex>> = BTreeMap::new();
    let zero = || vec![Complex::default(); n];
    let mut put = |k: usize, p: usize, v: Complex| {
        let diag = d.entry(k % n).or_insert_with(zero);
        diag[p] += v;
    };
    let one = Complex::new(1.0, 0.0);
    for block in (0..n).step_by(len) {
        for j in 0..half {
            let w = twiddle(table, n, len, j);
            let (p, q) = (block + j, block + j + half);
            if inverse {
                // u = (a + b) / 2, v = (a - b) conj(w) / 2.
                let h = Complex::new(0.5, 0.0);
                put(0, p, h);
                put(half, p, h);
                put(n - half, q, w.conj() * 0.5);
                put(0, q, -(w.conj() * 0.5));
            } else {
                // a = u + w v, b = u - w v.
                put(0, p, one);
                put(half, p, w);
                put(n - half, q, one);
                put(0, q, -w);
            }
        }
    }
    LinearTransform::from_diagonals(n, d)
}

/// `count` group sizes summing to `stages`, the larger ones first.
fn groups(stages: usize, count: usize) -> Result<Vec<usize>> {
    if count == 0 || count > stages {
        return Err(Error::InvalidInput(format!(
            "a level budget of {count} for {stages} FFT stages: between 1 and {stages}"
        )));
    }
    Ok((0..count).map(|i| stages / count + usize::from(i < stages % count)).collect())
}

/// `x = m 2^e` split into `count` exact factors: `2^(e_i)` with `sum e_i = e`, the
/// mantissa `m` in the last. Every factor's values stay near 1, so no factor's plaintext
/// loses precision to a tiny or huge constant.
pub fn split_constant(x: f64, count: usize) -> Vec<f64> {
    let e = x.abs().log2().floor() as i32;
    let m = x / fhe_api::ckks::scale::pow2(e);
    let base = e.div_euclid(count as i32);
    let extra = e - base * count as i32;
    (0..count)
        .map(|i| {
            let ei = base + if i + 1 == count { extra } else { 0 };
            let f = fhe_api::ckks::scale::pow2(ei);
            if i + 1 == count {
                f * m
            } else {
                f
            }
        })
        .collect()
}

/// CoeffsToSlots' factors in the order they are applied (`S_k^-1` first), `levels` of
/// them, the whole times `c`.
pub fn coeffs_to_slots(n: usize, levels: usize, c: f64) -> Result<Vec<LinearTransform>> {
    let k = n.trailing_zeros() as usize;
    let sizes = groups(k, levels)?;
    let consts = split_constant(c, levels);
    let mut out = Vec::new();
    let mut t = k; // next stage to apply: S_t^-1, t = k .. 1
    for (size, c) in sizes.into_iter().zip(consts) {
        let mut f = stage(n, 1 << t, true)?;
        for s in 1..size {
            f = stage(n, 1 << (t - s), true)?.after(&f)?;
        }
        t -= size;
        out.push(f.scaled(c));
    }
    Ok(out)
}

/// SlotsToCoeffs' factors in the order they are applied (`S_1` first), `levels` of them,
/// the whole times `c`.
pub fn slots_to_coeffs(n: usize, levels: usize, c: f64) -> Result<Vec<LinearTransform>> {
    let k = n.trailing_zeros() as usize;
    let sizes = groups(k, levels)?;
    let consts = split_constant(c, levels);
    let mut out = Vec::new();
    let mut t = 1;
    for (size, c) in sizes.into_iter().zip(consts) {
        let mut f = stage(n, 1 << t, false)?;
        for s in 1..size {
            f = stage(n, 1 << (t + s), false)?.after(&f)?;
        }
        t += size;
        out.push(f.scaled(c));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ckks::fft::special_fft;

    fn bit_reverse(x: &[Complex]) -> Vec<Complex> {
        let bits = x.len().trailing_zeros();
        (0..x.len()).map(|i| x[if bits == 0 { 0 } else { i.reverse_bits() >> (usize::BITS - bits) }]).collect()
    }

    fn sample(n: usize) -> Vec<Complex> {
        (0..n)
            .map(|i| Complex::new(((i * 7 + 3) % 11) as f64 / 11.0 - 0.5, ((i * 5) % 13) as f64 / 13.0 - 0.5))
            .collect()
    }

    #[test]
    fn the_factors_are_the_encoders_special_fft() {
        for (n, levels) in [(8usize, 1usize), (64, 2), (256, 3), (1024, 4)] {
            let w = sample(n);
            let mut want = w.clone();
            special_fft(&mut want, 2 * n);
            let mut y = bit_reverse(&w);
            for f in slots_to_coeffs(n, levels, 1.0).unwrap() {
                y = f.apply_plain(&y);
            }
            for (a, b) in y.iter().zip(&want) {
                assert!((*a - *b).abs() < 1e-9, "n = {n}: {a:?} vs {b:?}");
            }
            // CoeffsToSlots inverts it, into bit-reversed order, times the constant.
            let mut z = want.clone();
            for f in coeffs_to_slots(n, levels, 0.25).unwrap() {
                z = f.apply_plain(&z);
            }
            for (a, b) in bit_reverse(&z).iter().zip(&w) {
                assert!((*a - *b * 0.25).abs() < 1e-9, "n = {n}");
            }
        }
    }

    #[test]
    fn factors_are_sparse_and_budgets_checked() {
        let f = coeffs_to_slots(1 << 12, 3, 1.0).unwrap();
        let counts: Vec<usize> = f.iter().map(|f| f.diagonals().len()).collect();
        assert!(counts.iter().all(|&c| c <= 31), "{counts:?}");
        assert!(coeffs_to_slots(1 << 4, 5, 1.0).is_err());
        assert!(slots_to_coeffs(1 << 4, 0, 1.0).is_err());
        let parts = split_constant(3.0e-5, 3);
        assert!((parts.iter().product::<f64>() - 3.0e-5).abs() < 1e-20);
        assert!(parts.iter().all(|p| (0.01..100.0).contains(p)), "{parts:?}");
    }
}
