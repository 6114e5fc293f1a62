//! ModDown that rounds: `round(x / P)` over `Q` from `x` over `Q ∪ P`, exactly (up to a
//! misfloor of probability below `2^-55` per coefficient, which moves that one result by
//! one, like any rounding noise). The plain fast base conversion's ModDown
//! (`floor(x / P) - u`, `0 <= u < len(P)`) has a bias of about `-(1 + len(P)) / 2` per
//! coefficient; multiplied by the secret in key switching it is a random walk whose energy
//! lands in the low-frequency slots (measured: 16 bits of precision after a rotation at
//! N = 2^16 against 19.4 after a fresh encryption). Rounding exactly removes it.
//!
//! Pinned, per coefficient (`h = floor(P / 2)`, `P = p_0 ... p_{K-1}`):
//!
//! ```text
//! z_k = (x_k + (h mod p_k)) mod p_k                      z = (x + h) mod P, in RNS
//! t_k = [z_k (P/p_k)^-1]_{p_k}
//! f_k = floor(t_k c_k / 2^s_k),  s_k = bitlen(p_k) - 1,  c_k = floor(2^(64 + s_k) / p_k)
//! v   = floor((sum_k f_k) / 2^64)                         = floor(sum_k t_k / p_k)
//! d_i = (sum_k t_k ((P/p_k) mod q_i) - v (P mod q_i) - (h mod q_i)) mod q_i
//! ```
//!
//! `d = z - h` is the centered remainder of `x` modulo `P`, so `(x - d) / P = round(x / P)`
//! (halves up); the caller finishes with `y_i = (x_i - d_i) P^-1 mod q_i`, in coefficient
//! or (after an NTT of `d_i`) evaluation form. `f_k` is `t_k 2^64 / p_k` low by at most 3
//! (`c_k` is low by less than 1 and `t_k < 2^(s_k + 1)`), so `v` is exact unless `z / P`
//! is within `3K 2^-64` of an integer.

use crate::error::{Error, Result};
use crate::ring::math::{inv_mod, mul_mod, product_mod};
use crate::ring::modulus::{csub, mul_shoup_lazy, shoup, Modulus};
use crate::ring::rns::{dot_block, RnsBasis};

/// Coefficients per block: the block's `t` stay in the first-level cache while every
/// output prime reads them.
const BLOCK: usize = 256;

/// The `P -> Q` map of the rounding ModDown: the centered remainder of `x mod P`,
/// reduced modulo each `q_i`.
#[derive(Clone, Debug)]
pub struct RoundingConverter {
    from: Vec<Modulus>,
    /// `(h mod p_k, (P/p_k)^-1 mod p_k, its Shoup companion)`.
    input: Vec<(u64, u64, u64)>,
    /// `(c_k, s_k)` of the fixed-point quotient.
    frac: Vec<(u64, u32)>,
    to: Vec<Modulus>,
    /// `(P / p_k) mod q_i`, one row of `K` per output prime.
    p_hat_mod_q: Vec<u64>,
    /// `(v P + h) mod q_i` for `v` in `0..=K`, one row of `K + 1` per output prime.
    offset: Vec<u64>,
}

/// [`RoundingConverter::constants`]: the words the pinned definition above names.
#[derive(Clone, Copy, Debug)]
pub struct RoundingConstants<'a> {
    pub input: &'a [(u64, u64, u64)],
    pub frac: &'a [(u64, u32)],
    pub p_hat_mod_q: &'a [u64],
    pub offset: &'a [u64],
}

/// `floor(P / 2) mod m`: `P` is odd (a product of odd primes), so `h = (P - 1) / 2` and
/// `h mod m = (P mod m - 1) * 2^-1 mod m` for an odd prime `m`.
fn half_mod(moduli: &[Modulus], m: u64) -> u64 {
    let p = product_mod(moduli.iter().map(|p| p.q), m);
    mul_mod((p + m - 1) % m, inv_mod(2, m), m)
}

impl RoundingConverter {
    /// From basis `p` (the special primes) to basis `q`; they must share no prime.
    pub fn new(p: &RnsBasis, q: &RnsBasis) -> Result<RoundingConverter> {
        if let Some(shared) = q.moduli().iter().find(|qi| p.moduli().iter().any(|pk| pk.q == qi.q)) {
            return Err(Error::InvalidRing(format!("ModDown: prime {} is in both Q and P", shared.q)));
        }
        let from = p.moduli().to_vec();
        let k = from.len();
        let p_hat = |i: usize, m: u64| {
            from.iter().enumerate().filter(|&(j, _)| j != i).fold(1 % m, |acc, (_, pj)| mul_mod(acc, pj.q % m, m))
        };
        let input = from
            .iter()
            .enumerate()
            .map(|(i, pk)| {
                let inv = inv_mod(p_hat(i, pk.q), pk.q);
                (half_mod(&from, pk.q), inv, shoup(inv, pk.q))
            })
            .collect();
        let frac = from
            .iter()
            .map(|pk| {
                let s = 63 - pk.q.leading_zeros();
                (((1u128 << (64 + s)) / pk.q as u128) as u64, s)
            })
            .collect();
        let to = q.moduli().to_vec();
        let p_hat_mod_q = to.iter().flat_map(|qi| (0..k).map(move |i| (i, qi.q))).map(|(i, m)| p_hat(i, m)).collect();
        let offset = to
            .iter()
            .flat_map(|qi| {
                let (pm, hm) = (product_mod(from.iter().map(|p| p.q), qi.q), half_mod(&from, qi.q));
                (0..=k as u64).map(move |v| (mul_mod(v % qi.q, pm, qi.q) + hm) % qi.q)
            })
            .collect();
        Ok(RoundingConverter { from, input, frac, to, p_hat_mod_q, offset })
    }

    /// The pinned constants of the conversion, for backends that run it elsewhere (the
    /// GPU kernels): per special prime `(h mod p_k, (P/p_k)^-1 mod p_k, its Shoup
    /// companion)` and `(c_k, s_k)`; per output prime `o` the row `(P/p_k) mod q_o` (`K`
    /// words at `o K`) and the offsets `(v P + h) mod q_o` (`K + 1` words at `o (K + 1)`).
    pub fn constants(&self) -> RoundingConstants<'_> {
        RoundingConstants { input: &self.input, frac: &self.frac, p_hat_mod_q: &self.p_hat_mod_q, offset: &self.offset }
    }

    /// The output primes, in limb order.
    pub fn to_primes(&self) -> Vec<u64> {
        self.to.iter().map(|m| m.q).collect()
    }

    /// The special primes `p_k`, in input limb order.
    pub fn sources(&self) -> &[Modulus] {
        &self.from
    }

    /// The output primes `q_i`, in limb order.
    pub fn targets(&self) -> &[Modulus] {
        &self.to
    }

    /// `output` (limb-major over `Q`, `len(Q) * n` words) = `d mod q_i` from `input`
    /// (limb-major over `P`, coefficient form, each word below its prime).
    pub fn convert(&self, n: usize, input: &[u64], output: &mut [u64]) {
        assert_eq!(output.len(), self.to.len() * n, "output must hold len(Q) * n words");
        let mut limbs: Vec<&mut [u64]> = output.chunks_mut(n).collect();
        self.convert_words(n, input, 0, &mut limbs);
    }

    /// [`RoundingConverter::convert`] of the words `start .. start + len` of each input
    /// limb, `len` the length of every slice of `out` (`out[o]` receives output limb
    /// `o`'s words of that range): disjoint ranges can run on different cores and give
    /// the words of one `convert`.
    pub fn convert_words(&self, n: usize, input: &[u64], start: usize, out: &mut [&mut [u64]]) {
        let k = self.from.len();
        assert_eq!(input.len(), k * n, "input must hold len(P) * n words");
        assert_eq!(out.len(), self.to.len(), "one output slice per prime of Q");
        let total = out.first().map_or(0, |o| o.len());
        assert!(start + total <= n && out.iter().all(|o| o.len() == total), "a word range of the polynomial");
        let mut t = vec![0u64; k * BLOCK.min(total)];
        let mut v = vec![0usize; BLOCK.min(total)];
        for at in (0..total).step_by(BLOCK) {
            let len = BLOCK.min(total - at);
            let mut sums = [0u128; BLOCK];
            for (i, (pk, &(h, w, ws))) in self.from.iter().zip(&self.input).enumerate() {
                let (c, s) = self.frac[i];
                for (j, &x) in input[i * n + start + at..][..len].iter().enumerate() {
                    debug_assert!(x < pk.q);
                    let z = csub(x + h, pk.q);
                    let ti = csub(mul_shoup_lazy(z, w, ws, pk.q), pk.q);
                    t[j * k + i] = ti;
                    sums[j] += (ti as u128 * c as u128) >> s;
                }
            }
            v[..len].iter_mut().zip(&sums[..len]).for_each(|(v, &f)| *v = (f >> 64) as usize);
            for (o, qi) in self.to.iter().enumerate() {
                let row = &self.p_hat_mod_q[o * k..][..k];
                let off = &self.offset[o * (k + 1)..][..k + 1];
                let out = &mut out[o][at..at + len];
                dot_block(k, &t[..len * k], row, out, qi);
                out.iter_mut().zip(&v[..len]).for_each(|(y, &vj)| *y = qi.sub(*y, off[vj]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::prime::primes_below;
    use crate::ring::RingModulus;
    use num_bigint::{BigInt, BigUint};
    use num_traits::{Euclid, One, ToPrimitive, Zero};

    const N: usize = 64;

    /// `round(x / P)` exactly, for random `x` in `[0, QP)` and the edges of each rounding.
    #[test]
    fn rounds_x_over_p_exactly() {
        let mut rng = crate::rng::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_u64();
        let n = crate::ring::PolynomialSize(1 << 12);
        for (lq, bq, lp, bp) in [(3, 50, 1, 60), (5, 45, 2, 61), (8, 40, 5, 60), (4, 60, 4, 55)] {
            let q = primes_below(bq, n, lq, &[]).unwrap();
            let p = primes_below(bp, n, lp, &q).unwrap();
            let basis = |ps: &[u64]| RnsBasis::new(&ps.iter().map(|&x| RingModulus(x)).collect::<Vec<_>>()).unwrap();
            let conv = RoundingConverter::new(&basis(&p), &basis(&q)).unwrap();
            let prod = |ps: &[u64]| ps.iter().fold(BigUint::one(), |a, &x| a * x);
            let (qq, pp) = (BigInt::from(prod(&q)), BigInt::from(prod(&p)));
            let qp = &qq * &pp;
            let mut xs: Vec<BigInt> = (0..N - 6)
                .map(|_| {
                    let mut x = BigInt::zero();
                    for _ in 0..12 {
                        x = (x << 64) + next();
                    }
                    x % &qp
                })
                .collect();
            // Exact halves and their neighbours, both signs (centered mod QP).
            let h: BigInt = &pp / 2;
            for m in [3i64, -5] {
                for dx in [-1i64, 0, 1] {
                    let v: BigInt = BigInt::from(m) * &pp + &h + BigInt::from(dx);
                    xs.push(v.rem_euclid(&qp));
                }
            }
            let residue = |x: &BigInt, m: u64| x.rem_euclid(&BigInt::from(m)).to_u64().unwrap();
            let mut input = vec![0u64; lp * N];
            for (k, &pk) in p.iter().enumerate() {
                for (c, x) in xs.iter().enumerate() {
                    input[k * N + c] = residue(x, pk);
                }
            }
            let mut d = vec![0u64; lq * N];
            conv.convert(N, &input, &mut d);
            for (c, x) in xs.iter().enumerate() {
                // d = (x + h) mod P - h, the centered remainder.
                let shifted: BigInt = x + &h;
                let want: BigInt = shifted.rem_euclid(&pp) - &h;
                for (i, &qi) in q.iter().enumerate() {
                    assert_eq!(d[i * N + c], residue(&want, qi), "lq={lq} lp={lp} c={c} i={i}");
                }
                let diff: BigInt = x - &want;
                assert!(diff.rem_euclid(&pp).is_zero());
            }
        }
    }

    #[test]
    fn shared_primes_are_refused() {
        let n = crate::ring::PolynomialSize(1 << 12);
        let q = primes_below(50, n, 3, &[]).unwrap();
        let b = RnsBasis::new(&q.iter().map(|&x| RingModulus(x)).collect::<Vec<_>>()).unwrap();
        assert!(RoundingConverter::new(&b.prefix(1), &b).is_err());
    }
}
