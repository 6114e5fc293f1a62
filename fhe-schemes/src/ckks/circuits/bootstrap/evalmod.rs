//! EvalMod: the slot-wise reduction modulo 1 of `x = m 2^-c + I`, `I` an integer with
//! `|I| <= K`, by the scaled sine `sin(2 pi x) / 2 pi` (close to `x - I` when `m 2^-c` is
//! small).
//!
//! The sine is evaluated as a cosine with double angles: `p(u) ~ cos(2 pi ((K + 1) u -
//! 1/4) / 2^r)` on `u = x / (K + 1)` in `[-1, 1]` (a Chebyshev interpolant), then `r`
//! times `y <- 2 y^2 - 1`, which gives `cos(2 pi (x - 1/4)) = sin(2 pi x)`. The cosine
//! (Han-Ki 2020, as Lattigo and OpenFHE do) because the double-angle formula of a cosine
//! needs only the cosine itself, one product per step; dividing the angle by `2^r` shrinks
//! the interval the polynomial covers by `2^r`, and with it the degree, at one level per
//! step.
//!
//! **The range `K`.** After ModRaise, coefficient `j` is `m_j + q_0 I_j` with `I_j` the
//! rounding of `c0_j / q_0 + sum_i +-(c1_i / q_0) s_i`: a constant below 1 plus a sum of
//! `h` (the secret's weight) terms uniform in `[-1/2, 1/2]` (a ciphertext's `c1` is
//! uniform). Each such term has a moment-generating function below `exp(l^2 / 24)`
//! (`sinh(x)/x <= exp(x^2/6)`), and a uniform ternary secret's term one below
//! `exp(l^2 / 36)`, so Chernoff's bound gives `P(|sum| >= t) <= 2 exp(-t^2 / 2v)` with
//! `v = h/12` (sparse, weight `h`) or `v = N/18` (uniform ternary, `2N/3` expected
//! nonzero). Over all `N` coefficients, the failure probability per bootstrap is at
//! most `2^-40` for `t = sqrt(2 v ln(2^41 N))`, and `K = floor(t) + 1`.

use fhe_api::ckks::params::{Params, SecretDist};
use fhe_api::error::{Error, Result};

use crate::ckks::circuits::chebyshev::Chebyshev;
use crate::ckks::circuits::polynomial::chebyshev_depth;
use crate::ckks::fft::cos_sin_turns;

/// `log2` of the failure probability per bootstrap the range `K` is chosen for.
pub const FAILURE_LOG2: f64 = -40.0;

/// The bound `K` on `|I_j|` for `params`' secret and `N` (module docs), at a failure
/// probability of `2^log2_failure` per bootstrap.
pub fn k_bound(params: &Params, log2_failure: f64) -> u32 {
    k_bound_for(params.n(), params.secret(), log2_failure)
}

/// [`k_bound`] for a ring degree `n` and a secret distribution.
pub fn k_bound_for(n: usize, secret: SecretDist, log2_failure: f64) -> u32 {
    let n = n as f64;
    let v = match secret {
        SecretDist::SparseTernary { hamming_weight } => hamming_weight as f64 / 12.0,
        SecretDist::Ternary => n / 18.0,
    };
    // ln(2 N / P) = ln 2 (1 + log2 N - log2 P).
    let ln = std::f64::consts::LN_2 * (1.0 + n.log2() - log2_failure);
    (2.0 * v * ln).sqrt().floor() as u32 + 1
}

/// The approximation EvalMod evaluates: the interpolant, its double angles and `K`.
#[derive(Clone, Debug)]
pub struct ModPoly {
    pub k: u32,
    pub double_angles: u32,
    pub poly: Chebyshev,
    /// The sine's interpolant beside the cosine's, for the complex exponential
    /// ([`ModPoly::exponential`]); `None` for EvalMod's cosine.
    pub sine: Option<Chebyshev>,
}

impl ModPoly {
    /// The cheapest `(r, degree)` (fewest levels, then lowest degree: fewer products) whose
    /// interpolant is within `2^-target_bits / 2^r` of the cosine on `[-1, 1]` (`r`
    /// double angles multiply an error by `2^r sin(2^r t) / sin t`, about `2^r` near the
    /// integers), and never asked below `2^-47` (the `f64` floor of the check itself).
    pub fn new(k: u32, target_bits: u32) -> Result<ModPoly> {
        Self::search(k, target_bits, -0.25, false, None)
    }

    /// The same search for `exp(2 pi i (K + 1) u / 2^r)` (cosine and sine within the
    /// bound), squared `r` times into `exp(2 pi i x)`: the FE functional bootstrap's
    /// exponential (`functional`). `double_angles`: `None` searches every `r` as
    /// [`ModPoly::new`] does; `Some(r)` takes exactly `r` squarings and the lowest
    /// degree for them.
    pub fn exponential(k: u32, target_bits: u32, double_angles: Option<u32>) -> Result<ModPoly> {
        Self::search(k, target_bits, 0.0, true, double_angles)
    }

    /// `cos(2 pi ((K + 1) u + phase) / 2^r)`, and the sine when `complex`; `r` as given.
    fn search(k: u32, target_bits: u32, phase: f64, complex: bool, only: Option<u32>) -> Result<ModPoly> {
        if let Some(r) = only.filter(|&r| r > 10) {
            return Err(Error::InvalidInput(format!("{r} double angles: at most 10")));
        }
        // The highest degree each depth allows (`chebyshev_depth` grows with the degree).
        let mut top = [0usize; 11];
        for d in 1..=1023usize {
            let depth = chebyshev_depth(d);
            if depth < top.len() {
                top[depth] = d;
            }
        }
        let mut best: Option<((usize, usize), ModPoly)> = None;
        for r in only.map_or(0..=10u32, |r| r..=r) {
            let turns = move |u: f64| cos_sin_turns(((k as f64 + 1.0) * u + phase) / (1u64 << r) as f64);
            let (f, g) = (move |u: f64| turns(u).0, move |u: f64| turns(u).1);
            let bound = (-((target_bits + r).min(47) as f64)).exp2();
            let passes = |d: usize| -> Result<Option<(Chebyshev, Option<Chebyshev>)>> {
                let poly = Chebyshev::interpolate(f, -1.0, 1.0, d)?;
                if poly.max_error(f, 8 * d + 1) > bound {
                    return Ok(None);
                }
                if !complex {
                    return Ok(Some((poly, None)));
                }
                let sine = Chebyshev::interpolate(g, -1.0, 1.0, d)?;
                Ok((sine.max_error(g, 8 * d + 1) <= bound).then_some((poly, Some(sine))))
            };
            for depth in 3..top.len() {
                if passes(top[depth])?.is_none() {
                    continue;
                }
                // The lowest passing degree at this depth (the error falls with the degree).
                let (mut lo, mut hi) = (top[depth - 1] + 1, top[depth]);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if passes(mid)?.is_some() {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                let (poly, sine) = passes(hi)?.expect("the top degree passed");
                let cost = (depth + r as usize, hi);
                if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                    best = Some((cost, ModPoly { k, double_angles: r, poly, sine }));
                }
                break;
            }
        }
        best.map(|(_, p)| p)
            .ok_or_else(|| Error::InvalidInput(format!("no EvalMod polynomial of degree < 1024 for K = {k}")))
    }

    /// Levels EvalMod spends.
    pub fn depth(&self) -> usize {
        chebyshev_depth(self.poly.degree()) + self.double_angles as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ckks::Preset;

    #[test]
    fn k_follows_the_secret_and_the_ring() {
        let p16 = Preset::Slots32768Scale40Depth34.params();
        assert_eq!(p16.secret(), SecretDist::Ternary);
        // sqrt(2 (2^16 / 18) ln(2^57)) = 536.3
        assert_eq!(k_bound(p16, FAILURE_LOG2), 537);
        let mut lit = Preset::Slots32768Scale40Depth34.literal();
        lit.secret = SecretDist::SparseTernary { hamming_weight: 192 };
        lit.depth = 20;
        let sparse = Params::new(&lit).unwrap();
        // sqrt(2 (192 / 12) ln(2^57)) = 35.6
        assert_eq!(k_bound(&sparse, FAILURE_LOG2), 36);
        assert!(k_bound(&sparse, -60.0) > k_bound(&sparse, FAILURE_LOG2));
    }

    #[test]
    fn the_modular_polynomial_is_a_sine_near_integers() {
        let p = ModPoly::new(12, 40).unwrap();
        for i in -12i32..=12 {
            for &d in &[-1e-3, 0.0, 2.5e-4, 1e-3] {
                let x = i as f64 + d;
                let mut y = p.poly.eval(x / 13.0);
                for _ in 0..p.double_angles {
                    y = 2.0 * y * y - 1.0;
                }
                let want = (2.0 * std::f64::consts::PI * d).sin();
                assert!((y - want).abs() < 1e-10, "x = {x}: {y} vs {want}");
            }
        }
        assert!(p.depth() <= 11, "{p:?}");
    }
}
