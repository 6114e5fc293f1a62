//! Fast modular arithmetic for one prime `Q < 2^62`.
//!
//! - [`Modulus::mul`]: Barrett reduction of a full product (`x < Q^2`), with
//!   `mu = floor(2^(2k) / Q)`, `k = bitlen(Q)`: the quotient estimate is low by at most
//!   2, so two conditional subtractions finish it.
//! - [`Modulus::reduce`]: any `u64`, with `m = floor(2^64 / Q)`: estimate low by at most 1.
//! - [`shoup`]: `w' = floor(w 2^64 / Q)`, so `w * x mod Q` costs one high and two low
//!   multiplications, result in `[0, 2Q)` (Harvey, "Faster arithmetic for NTTs", 2014).

#[derive(Clone, Copy, Debug)]
pub struct Modulus {
    pub q: u64,
    k: u32,
    /// `floor(2^(2k) / Q) < 2^(k+1)`, so below `2^63` for `Q < 2^62`.
    mu: u64,
    m64: u64,
    /// `2^64 mod Q` and its Shoup companion, to fold a 128-bit value.
    r64: u64,
    r64_shoup: u64,
}

impl Modulus {
    pub fn new(q: u64) -> Modulus {
        assert!(q > 2 && q < (1 << 62), "modulus out of range");
        let k = 64 - q.leading_zeros();
        let mu = ((1u128 << (2 * k)) / q as u128) as u64;
        let m64 = (u128::from(u64::MAX) / q as u128) as u64;
        let r64 = ((1u128 << 64) % q as u128) as u64;
        Modulus { q, k, mu, m64, r64, r64_shoup: shoup(r64, q) }
    }

    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_product(a as u128 * b as u128)
    }

    /// `x mod Q` for `x < Q^2`. `x >> (k-1) < 2^(k+1)` and `mu` fit `u64`, so the
    /// quotient estimate is one 64 x 64 -> 128-bit multiply, and `x - q3 Q < 3Q` is exact
    /// in wrapping `u64` arithmetic.
    #[inline]
    pub fn reduce_product(&self, x: u128) -> u64 {
        let q1 = (x >> (self.k - 1)) as u64;
        let q3 = ((u128::from(q1) * u128::from(self.mu)) >> (self.k + 1)) as u64;
        let r = (x as u64).wrapping_sub(q3.wrapping_mul(self.q));
        csub(csub(r, self.q), self.q)
    }

    /// `x mod Q` for any 128-bit `x` (lazy sums of products): `x = hi 2^64 + lo` and
    /// `hi 2^64 = hi (2^64 mod Q)`; [`mul_shoup_lazy`] takes any 64-bit `hi` (result `< 2Q`)
    /// and [`Modulus::reduce`] any 64-bit `lo`.
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let hi = mul_shoup_lazy((x >> 64) as u64, self.r64, self.r64_shoup, self.q);
        self.add(csub(hi, self.q), self.reduce(x as u64))
    }

    /// How many products of two residues (each `< Q`) a `u128` accumulates on top of a
    /// value `< Q` without overflow: at least 15 for `Q < 2^62`.
    pub fn lazy_products(&self) -> usize {
        let sq = (self.q as u128 - 1) * (self.q as u128 - 1);
        ((u128::MAX - self.q as u128) / sq.max(1)).min(usize::MAX as u128) as usize
    }

    /// `x mod Q` for any `u64`.
    #[inline]
    pub fn reduce(&self, x: u64) -> u64 {
        let est = ((x as u128 * self.m64 as u128) >> 64) as u64;
        csub(x - est * self.q, self.q)
    }

    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        csub(a + b, self.q)
    }

    #[inline]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        csub(a.wrapping_sub(b).wrapping_add(self.q), self.q)
    }

    /// `x mod Q` for `|x| < Q` (errors, secrets, ternary words), without a branch or a
    /// division so that a loop over a polynomial vectorizes: a negative `x` wraps to
    /// `x + Q`.
    #[inline]
    pub fn from_small(&self, x: i64) -> u64 {
        debug_assert!(x.unsigned_abs() < self.q, "{x} is not small next to {}", self.q);
        (x as u64).wrapping_add(self.q & ((x >> 63) as u64))
    }

    /// A signed small integer as a residue.
    #[inline]
    pub fn from_i64(&self, x: i64) -> u64 {
        // `rem_euclid` without a division: none for the small values of errors and
        // secrets, Barrett's for the rest (a compact plaintext's coefficients).
        let a = x.unsigned_abs();
        let r = if a < self.q { a } else { self.reduce(a) };
        if x < 0 && r != 0 {
            self.q - r
        } else {
            r
        }
    }
}

/// `x mod q` for `x < 2q`, without a branch (`min` compiles to a conditional move:
/// when `x < q`, `x - q` wraps above `x`). Data-dependent branches here cost a
/// misprediction per butterfly on random residues.
#[inline(always)]
pub fn csub(x: u64, q: u64) -> u64 {
    x.min(x.wrapping_sub(q))
}

/// Shoup companion of a constant `w < Q`.
#[inline]
pub fn shoup(w: u64, q: u64) -> u64 {
    (((w as u128) << 64) / q as u128) as u64
}

/// `w * x mod Q` in `[0, 2Q)`, given `ws = shoup(w, q)`; valid for any `x < 2^64`.
#[inline]
pub fn mul_shoup_lazy(x: u64, w: u64, ws: u64, q: u64) -> u64 {
    let hi = ((x as u128 * ws as u128) >> 64) as u64;
    x.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::math::mul_mod;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arithmetic_matches_u128(a in any::<u64>(), b in any::<u64>(), x in any::<u64>()) {
            for q in [134_215_681u64, 33_550_337, 18_014_398_509_404_161] {
                let m = Modulus::new(q);
                let (a, b) = (a % q, b % q);
                prop_assert_eq!(m.mul(a, b), mul_mod(a, b, q));
                prop_assert_eq!(m.reduce(x), x % q);
                for y in [x as i64, (x as i64) >> 40, -((x >> 40) as i64), i64::MIN, -1, 0, q as i64, -(q as i64)] {
                    prop_assert_eq!(m.from_i64(y), y.rem_euclid(q as i64) as u64);
                    if y.unsigned_abs() < q {
                        prop_assert_eq!(m.from_small(y), y.rem_euclid(q as i64) as u64);
                    }
                }
                let wide = (a as u128) * (x as u128) + (b as u128) * (u64::MAX as u128);
                prop_assert_eq!(m.reduce_u128(wide), (wide % q as u128) as u64);
                prop_assert_eq!(m.reduce_u128(u128::MAX), (u128::MAX % q as u128) as u64);
                let s = mul_shoup_lazy(x, b, shoup(b, q), q);
                prop_assert!(s < 2 * q);
                prop_assert_eq!(s % q, mul_mod(x % q, b, q));
            }
        }
    }
}
