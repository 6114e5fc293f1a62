//! The negacyclic NTT over a parameter set's ring modulus.
//!
//! Conventions, shared by every backend and by the key format:
//! - input of `forward`: coefficients in natural order, each in `[0, Q)`;
//! - output of `forward`: slot `k` holds `A(psi^(2 bitrev(k) + 1))`, fully reduced to
//!   `[0, Q)`, with `psi` from [`crate::ring::math::negacyclic_root`];
//! - `inverse` takes that order back to natural order and includes the `1/N` scaling,
//!   so `inverse(forward(a)) == a`.
//!
//! `data` holds a batch: its length is a multiple of `N`, one polynomial after another.

use crate::error::{Error, Result};
use crate::params::ParamSet;
use crate::ring::modulus::Modulus;

pub trait NttOps {
    fn ntt_forward(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    fn ntt_inverse(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    /// The NTT variant in use (`reference`, `harvey`, ...).
    fn ntt_variant(&self) -> &str;

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

/// The input contract of both transforms, checked by every backend before it touches
/// `data`: a whole number of polynomials, every coefficient below `Q`.
pub fn check_ntt_input(params: ParamSet, data: &[u64]) -> Result<()> {
    let p = params.params();
    if !data.len().is_multiple_of(p.big_n()) {
        return Err(Error::InvalidInput(format!(
            "NTT batch length {} is not a multiple of N = {}",
            data.len(),
            p.big_n()
        )));
    }
    // The position only on the error path.
    let q = p.q_ring();
    if any_at_or_above(q, data) {
        let i = data.iter().position(|&x| x >= q).expect("an input at or above Q");
        return Err(Error::InvalidInput(format!("NTT input {i} is not below Q = {q}")));
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
                    let got = check_ntt_input(set, &data);
                    assert_eq!(got.is_ok(), x < q, "{set}: word {x} at {}", n + at);
                    if let Err(e) = got {
                        assert!(e.to_string().contains(&format!("input {}", n + at)), "{e}");
                    }
                }
            }
        }
    }
}
