//! The ring operations a backend runs for both schemes: the negacyclic NTT over any ring
//! `Z_q[X]/(X^N + 1)` (any NTT prime `q < 2^62`, `N` up to `2^17`: the bit scheme's one
//! prime and every prime of a CKKS chain) and the pointwise product.
//!
//! Conventions, shared by every backend and by the key formats:
//! - input of `forward`: coefficients in natural order, each in `[0, q)`;
//! - output of `forward`: slot `k` holds `A(psi^(2 bitrev(k) + 1))`, fully reduced to
//!   `[0, q)`, with `psi` from [`crate::ring::math::negacyclic_root`];
//! - `inverse` takes that order back to natural order and includes the `1/N` scaling,
//!   so `inverse(forward(a)) == a`.
//!
//! `data` holds a batch: its length is a multiple of `N`, one polynomial after another.
//! [`NttOps`] names the bit scheme's ring by its parameter set; it is provided for every
//! [`RingOps`], so a backend has one NTT to implement.

use crate::error::{Error, Result};
use crate::ring::modulus::Modulus;
use crate::ring::{PolynomialSize, RingModulus};
use crate::tfhe::params::ParamSet;

pub trait RingOps: Send + Sync {
    /// Forward NTT of a batch (a whole number of polynomials of `n` words, each `< q`);
    /// anything else is `Error::InvalidInput` ([`check_ring_input`]).
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()>;
    /// The exact inverse of [`RingOps::ring_forward`], `1/N` included.
    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()>;
    /// `acc[i] = (acc[i] + a[i] b[i]) mod q` elementwise: the pointwise product of two
    /// polynomials in evaluation form, accumulated. Words must be below `q` (not checked:
    /// a pass over every word would cost as much as the product; other words give
    /// unspecified words, never a panic). The default runs the portable host code; the
    /// CPU backend has a SIMD kernel.
    fn ring_mul_add(&self, q: RingModulus, a: &[u64], b: &[u64], acc: &mut [u64]) -> Result<()> {
        let m = checked_modulus(q, a, b, acc)?;
        acc.iter_mut().zip(a.iter().zip(b)).for_each(|(c, (&a, &b))| *c = m.add(*c, m.mul(a, b)));
        Ok(())
    }
    /// The NTT variant in use (`reference`, `harvey`, ...).
    fn ntt_variant(&self) -> &str;
}

/// The NTT over a bit-scheme parameter set's ring, provided for every [`RingOps`]: the
/// same transform as [`RingOps::ring_forward`] with `(N, Q)` taken from the set.
pub trait NttOps: RingOps {
    fn ntt_forward(&self, params: ParamSet, data: &mut [u64]) -> Result<()> {
        let p = params.params();
        self.ring_forward(p.ring_degree, p.ring_modulus, data)
    }

    fn ntt_inverse(&self, params: ParamSet, data: &mut [u64]) -> Result<()> {
        let p = params.params();
        self.ring_inverse(p.ring_degree, p.ring_modulus, data)
    }

    /// The negacyclic product `a b mod (X^N + 1, Q)` of two polynomials of `params`'s
    /// ring, coefficients in natural order and in `[0, Q)`, result likewise: both
    /// operands forward in one batch, a pointwise product mod `Q`, one inverse (which
    /// includes the `1/N`). An operand of another length than `N`, or with a coefficient
    /// at or above `Q`, is `Error::InvalidInput` naming the operand.
    fn negacyclic_mul(&self, params: ParamSet, a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
        let p = params.params();
        let (n, q) = (p.big_n(), p.q_ring());
        for (name, x) in [("a", a), ("b", b)] {
            if x.len() != n {
                return Err(Error::InvalidInput(format!(
                    "negacyclic_mul: operand {name} has {} coefficients, {params} has N = {n}",
                    x.len()
                )));
            }
            if any_at_or_above(q, x) {
                let i = x.iter().position(|&c| c >= q).expect("a coefficient at or above Q");
                return Err(Error::InvalidInput(format!(
                    "negacyclic_mul: operand {name} coefficient {i} is {}, not below Q = {q}",
                    x[i]
                )));
            }
        }
        let mut both = Vec::with_capacity(2 * n);
        both.extend_from_slice(a);
        both.extend_from_slice(b);
        self.ntt_forward(params, &mut both)?;
        // Evaluation form is pointwise: the product of the two transforms is the
        // transform of the negacyclic product.
        let m = Modulus::new(q);
        let (fa, fb) = both.split_at_mut(n);
        fa.iter_mut().zip(fb.iter()).for_each(|(x, &y)| *x = m.mul(*x, y));
        both.truncate(n);
        self.ntt_inverse(params, &mut both)?;
        Ok(both)
    }
}

impl<T: RingOps + ?Sized> NttOps for T {}

/// The [`Modulus`] of `q` for [`RingOps::ring_mul_add`], once the lengths agree and `q`
/// is one it takes (`2 < q < 2^62`).
pub fn checked_modulus(q: RingModulus, a: &[u64], b: &[u64], acc: &[u64]) -> Result<Modulus> {
    if a.len() != acc.len() || b.len() != acc.len() {
        return Err(Error::InvalidInput(format!(
            "pointwise product lengths differ: {}, {} and {} words",
            a.len(),
            b.len(),
            acc.len()
        )));
    }
    if q.0 <= 2 || q.0 >= 1 << 62 {
        return Err(Error::InvalidInput(format!("modulus {} is not in (2, 2^62)", q.0)));
    }
    Ok(Modulus::new(q.0))
}

/// The input contract of both transforms, checked by every backend before it touches
/// `data`: a whole number of polynomials, every word below `q`.
pub fn check_ring_input(n: PolynomialSize, q: RingModulus, data: &[u64]) -> Result<()> {
    if n.0 == 0 || !data.len().is_multiple_of(n.0) {
        return Err(Error::InvalidInput(format!("NTT batch length {} is not a multiple of N = {}", data.len(), n.0)));
    }
    // The position only on the error path.
    if any_at_or_above(q.0, data) {
        let i = data.iter().position(|&x| x >= q.0).expect("an input at or above q");
        return Err(Error::InvalidInput(format!("NTT input {i} is not below q = {}", q.0)));
    }
    Ok(())
}

/// Whether some word of `data` is `>= q` (`0 < q < 2^63`), in the widest vectors the CPU
/// has: at N = 1024 the SSE2 baseline's pass took a fifth of an AVX-512 transform's time.
fn any_at_or_above(q: u64, data: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, checked just above.
            return unsafe { any_at_or_above_avx512(q, data) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { any_at_or_above_avx2(q, data) };
        }
    }
    any_at_or_above_body(q, data)
}

/// A branch-free pass of subtractions and ORs, which vectorizes on any x86-64 (an
/// unsigned 64-bit compare has no SSE2 or AVX2 instruction): bit 63 of `(Q - 1 - x) | x`
/// is set exactly when `x >= Q` (`Q < 2^63`).
#[inline(always)]
fn any_at_or_above_body(q: u64, data: &[u64]) -> bool {
    data.iter().fold(0u64, |bad, &x| bad | (q - 1).wrapping_sub(x) | x) >> 63 != 0
}

/// AVX-512 has the unsigned compare: one `vpcmpuq` into a mask per eight words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn any_at_or_above_avx512(q: u64, data: &[u64]) -> bool {
    use std::arch::x86_64::{_mm512_cmpge_epu64_mask, _mm512_loadu_si512, _mm512_set1_epi64};
    let qv = _mm512_set1_epi64(q as i64);
    let (words, rest) = data.as_chunks::<8>();
    let mut bad = 0u8;
    for w in words {
        // SAFETY: eight in-bounds words; an unaligned load.
        bad |= _mm512_cmpge_epu64_mask(unsafe { _mm512_loadu_si512(w.as_ptr().cast()) }, qv);
    }
    bad != 0 || any_at_or_above_body(q, rest)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn any_at_or_above_avx2(q: u64, data: &[u64]) -> bool {
    any_at_or_above_body(q, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The subtraction trick, in every compiled copy, against the plain comparison at
    /// every edge of its range.
    #[test]
    fn input_check_rejects_exactly_words_at_or_above_q() {
        for set in ParamSet::ALL {
            let (n, q) = (set.params().big_n(), set.params().q_ring());
            for x in
                [0, 1, q - 1, q, q + 1, 1 << 62, (1 << 63) - 1, 1 << 63, (1 << 63) + q - 1, (1 << 63) + q, u64::MAX]
            {
                for at in [0, n / 2 + 1, n - 1] {
                    let mut data = vec![q - 1; 2 * n];
                    data[n + at] = x;
                    // Every compiled copy of the pass, then the dispatched check.
                    assert_eq!(any_at_or_above_body(q, &data), x >= q, "portable: {x}");
                    #[cfg(target_arch = "x86_64")]
                    {
                        if std::arch::is_x86_feature_detected!("avx2") {
                            // SAFETY: the CPU supports AVX2, checked just above.
                            assert_eq!(unsafe { any_at_or_above_avx2(q, &data) }, x >= q, "avx2: {x}");
                        }
                        if std::arch::is_x86_feature_detected!("avx512f") {
                            // SAFETY: the CPU supports AVX-512F, checked just above.
                            assert_eq!(unsafe { any_at_or_above_avx512(q, &data) }, x >= q, "avx512: {x}");
                        }
                    }
                    let got = check_ring_input(set.params().ring_degree, set.params().ring_modulus, &data);
                    assert_eq!(got.is_ok(), x < q, "{set}: word {x} at {}", n + at);
                    if let Err(e) = got {
                        assert!(e.to_string().contains(&format!("input {}", n + at)), "{e}");
                    }
                }
            }
        }
    }
}
