//! One ring `Z_Q[X]/(X^N + 1)` of a parameter set: its NTT, its tables, and the
//! polynomial helpers of blind rotation.

use std::sync::Arc;

use fhe_api::ring::math::{ntt_slot_exponent, pow_mod};
use fhe_api::tfhe::params::Params;
use fhe_api::{Error, ParamSet, Result};

use crate::arith::small::SmallBarrett;
use crate::mem::Isa;
use crate::modulus::Modulus;
use crate::ntt::NttTables;
use crate::tfhe::ginx64::Wide;
use crate::tfhe::stream::{self, StreamingNtt};

pub struct Ring {
    pub set: ParamSet,
    pub params: &'static Params,
    pub modulus: Modulus,
    pub ntt: Box<dyn StreamingNtt>,
    /// `psi^e` for `e` in `[0, 2N)`.
    psi_pow: Vec<u64>,
    /// `psi_pow` as 32-bit words (empty when `Q >= 2^32`).
    psi_pow32: Vec<u32>,
    /// Odd exponent of slot `k`: `2 bitrev(k) + 1`.
    slot_exp: Vec<u32>,
    /// Vectorized kernels for `Q < 2^29`, `None` for the 54-bit ring.
    pub small: Option<SmallBarrett>,
    /// The 64-bit kernels' constants for the 54-bit ring, `None` where `small` is set.
    pub wide: Option<Wide>,
    pub isa: Isa,
}

impl Ring {
    pub fn new(set: ParamSet, variant: &str) -> Result<Ring> {
        let params = set.params();
        let tables = Arc::new(NttTables::for_params(params));
        let q = params.q_ring();
        let two_n = 2 * params.big_n();
        let psi_pow: Vec<u64> = (0..two_n as u64).map(|e| pow_mod(tables.psi, e, q)).collect();
        let psi_pow32 = if q < 1 << 32 { psi_pow.iter().map(|&p| p as u32).collect() } else { Vec::new() };
        let slot_exp = (0..params.big_n()).map(|k| ntt_slot_exponent(k, tables.log_n) as u32).collect();
        let small = (q < (1 << 29)).then(|| SmallBarrett::new(q));
        let wide = match small {
            Some(_) => None,
            None => Some(Wide::new(q).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{set}: the CPU blind rotation takes a ring modulus below 2^29 or in [2^33, 2^54), not {q}"
                ))
            })?),
        };
        Ok(Ring {
            set,
            params,
            modulus: tables.modulus,
            ntt: stream::engine(variant, tables)?,
            psi_pow,
            psi_pow32,
            slot_exp,
            small,
            wide,
            isa: Isa::detect(),
        })
    }

    pub fn n(&self) -> usize {
        self.params.big_n()
    }

    /// `NTT(X^k) - 1` (evaluation form), `k` in `[0, 2N)`: slot `j` is `psi^(k e_j) - 1`.
    pub fn monomial_minus_one(&self, k: usize, out: &mut [u64]) {
        self.monomial_minus_one_at(k, 0..self.n(), out);
    }

    /// [`Ring::monomial_minus_one`] at slots `slots` only, into `out` (their length): the
    /// two-thread rotation's half. The same words as those slots of the whole.
    pub fn monomial_minus_one_at(&self, k: usize, slots: std::ops::Range<usize>, out: &mut [u64]) {
        assert!(slots.end <= self.n() && out.len() == slots.len(), "monomial slots inside the ring");
        #[cfg(target_arch = "x86_64")]
        if self.isa == Isa::Avx512 && self.modulus.q < 1 << 60 && out.len() >= 16 && out.len().is_power_of_two() {
            // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
            return unsafe {
                monomial_minus_one_avx512(self.modulus.q, &self.psi_pow, &self.slot_exp, k, slots.start, out)
            };
        }
        monomial_minus_one_body(self.modulus.q, &self.psi_pow, &self.slot_exp[slots], k, out);
    }

    /// [`Ring::monomial_minus_one`] for `X^k` and `X^-k` at once, as 32-bit words
    /// (rings with `Q < 2^32`): the GINX step's two monomials.
    pub fn monomials_minus_one32(&self, k: usize, plus: &mut [u32], minus: &mut [u32]) {
        crate::tfhe::ginx32::monomials_minus_one(
            self.isa,
            self.modulus.q as u32,
            &self.psi_pow32,
            &self.slot_exp,
            k,
            plus,
            minus,
        );
    }

    /// Signed gadget digits of `poly` (coefficient form): the centered representative
    /// in `(-Q/2, Q/2]` written in base `Bg`, least significant first, digits
    /// `0..L-1` in `[-Bg/2, Bg/2)` and the top digit the remaining carry (so the sum is
    /// exact even where `Bg^L / 2` barely exceeds `Q/2`, as for `PN10QP25Q`); digit `l`
    /// of coefficient `c` goes to `out[l][c]` as a residue.
    /// This exact algorithm is part of the byte contract.
    pub fn decompose(&self, poly: &[u64], out: &mut [Vec<u64>]) {
        let q = self.modulus.q as i64;
        let log_bg = self.params.bsk_base_log.0;
        let bg = 1i64 << log_bg;
        let half_bg = bg >> 1;
        let half_q = q / 2;
        let last = out.len() - 1;
        // Level by level over all coefficients, so each pass vectorizes; the top
        // level's slice holds the running (signed) remainder until it is final.
        let (lower, top) = out.split_at_mut(last);
        let rem = &mut top[0];
        for (r, &x) in rem.iter_mut().zip(poly) {
            let v = x as i64;
            *r = (if v > half_q { v - q } else { v }) as u64;
        }
        for digits in lower.iter_mut() {
            for (d_out, r) in digits.iter_mut().zip(rem.iter_mut()) {
                let v = *r as i64;
                let mut d = v & (bg - 1);
                d -= if d >= half_bg { bg } else { 0 };
                *r = ((v - d) >> log_bg) as u64;
                *d_out = (d + if d < 0 { q } else { 0 }) as u64;
            }
        }
        // The top digit absorbs the carry, so the decomposition is exact.
        for r in rem.iter_mut() {
            let v = *r as i64;
            *r = (v + if v < 0 { q } else { 0 }) as u64;
        }
    }
}

/// `out = X^k * a` in `Z_Q[X]/(X^N + 1)`, `k` in `[0, 2N)`.
pub fn monomial_mul(a: &[u64], k: usize, q: u64, out: &mut [u64]) {
    let n = a.len();
    let (k, negate_all) = if k >= n { (k - n, true) } else { (k, false) };
    for (i, &x) in a.iter().enumerate() {
        let j = i + k;
        let (j, neg) = if j >= n { (j - n, !negate_all) } else { (j, negate_all) };
        out[j] = if neg && x != 0 { q - x } else { x };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomial_tables_agree_with_the_ntt() {
        for set in [ParamSet::PN10QP27, ParamSet::M2C2] {
            monomials_agree_with_the_ntt(set);
        }
    }

    fn monomials_agree_with_the_ntt(set: ParamSet) {
        let ring = Ring::new(set, "reference").unwrap();
        let n = ring.n();
        let q = ring.modulus.q;
        for k in [1usize, 5, n - 1, n, n + 3, 2 * n - 1] {
            let mut mono = vec![0u64; n];
            let mut one = vec![0u64; n];
            one[0] = 1;
            monomial_mul(&one, k, q, &mut mono);
            mono[0] = (mono[0] + q - 1) % q;
            ring.ntt.forward(&mut mono);
            let mut table = vec![0u64; n];
            ring.monomial_minus_one(k, &mut table);
            assert_eq!(mono, table, "{set} k={k}");
        }
    }

    /// The doubling kernel (where this CPU runs it) gives the table's words for every `k`,
    /// on the 54-bit ring and a 27-bit one.
    #[test]
    fn monomial_kernel_matches_the_table() {
        for set in [ParamSet::M2C2, ParamSet::PN10QP27] {
            let ring = Ring::new(set, "reference").unwrap();
            let n = ring.n();
            for k in 0..4 * n {
                let (mut want, mut got) = (vec![0u64; n], vec![0u64; n]);
                monomial_minus_one_body(ring.modulus.q, &ring.psi_pow, &ring.slot_exp, k, &mut want);
                ring.monomial_minus_one(k, &mut got);
                assert_eq!(got, want, "{set} k={k} {:?}", ring.isa);
            }
        }
    }

    /// The 32-bit pair (every compiled copy: `ring.isa` is this CPU's) gives the words of
    /// `monomial_minus_one` for `k` and `2N - k`, for every `k`.
    #[test]
    fn monomials_at_a_slot_range_are_the_whole_ones_slots() {
        for set in [ParamSet::M2C2, ParamSet::PN10QP27] {
            let ring = Ring::new(set, "reference").unwrap();
            let n = ring.n();
            for k in (0..4 * n).step_by(7).chain([1, n - 1, n, 2 * n - 1]) {
                let mut whole = vec![0u64; n];
                ring.monomial_minus_one(k, &mut whole);
                for slots in [0..n / 2, n / 2..n, n / 4..n / 2, 8..24] {
                    let mut part = vec![0u64; slots.len()];
                    ring.monomial_minus_one_at(k, slots.clone(), &mut part);
                    assert_eq!(part[..], whole[slots.clone()], "{set} k {k} {slots:?}");
                }
            }
        }
    }

    #[test]
    fn monomial_pairs_agree() {
        for set in [ParamSet::PN10QP27, ParamSet::PN10QP25Q] {
            let ring = Ring::new(set, "reference").unwrap();
            let n = ring.n();
            let q = ring.modulus.q as u32;
            for k in 0..2 * n {
                let (mut want_p, mut want_m) = (vec![0u64; n], vec![0u64; n]);
                ring.monomial_minus_one(k, &mut want_p);
                ring.monomial_minus_one((2 * n - k) % (2 * n), &mut want_m);
                for isa in [crate::mem::Isa::Portable, ring.isa] {
                    let (mut p, mut m) = (vec![0u32; n], vec![0u32; n]);
                    crate::tfhe::ginx32::monomials_minus_one(
                        isa,
                        q,
                        &ring.psi_pow32,
                        &ring.slot_exp,
                        k,
                        &mut p,
                        &mut m,
                    );
                    assert!(p.iter().zip(&want_p).all(|(&a, &b)| u64::from(a) == b), "{set} k={k} {isa:?} plus");
                    assert!(m.iter().zip(&want_m).all(|(&a, &b)| u64::from(a) == b), "{set} k={k} {isa:?} minus");
                }
            }
        }
    }

    #[test]
    fn decomposition_recomposes() {
        for set in ParamSet::ALL {
            let ring = Ring::new(set, "reference").unwrap();
            let q = ring.modulus.q;
            let l = ring.params.bsk_levels.0;
            let poly: Vec<u64> = vec![0, 1, q - 1, q / 2, q / 2 + 1, 12345 % q, q - 7];
            let mut out = vec![vec![0u64; poly.len()]; l];
            ring.decompose(&poly, &mut out);
            for (c, &x) in poly.iter().enumerate() {
                let mut acc = 0u64;
                for (lev, d) in out.iter().enumerate() {
                    let g = pow_mod(ring.params.bsk_base(), lev as u64, q);
                    acc = (acc + fhe_api::ring::math::mul_mod(d[c], g, q)) % q;
                }
                assert_eq!(acc, x, "{set} coefficient {c}");
            }
        }
    }
}

/// Whether the `count` slots of `slot_exp` from `slot0` have the NTT's exponents
/// `2 bitrev(j) + 1` (bit reversal over `log2 n` bits): the order the doubling kernels of
/// the monomials rely on (`e_(j + len) = e_j + N / len`).
pub(crate) fn ntt_slot_order(slot_exp: &[u32], n: usize, slot0: usize, count: usize) -> bool {
    let log_n = n.trailing_zeros();
    (slot0..slot0 + count)
        .all(|j| slot_exp.get(j).is_some_and(|&e| e as usize == 2 * (j.reverse_bits() >> (usize::BITS - log_n)) + 1))
}

/// [`Ring::monomial_minus_one`] by table lookup, slot by slot.
fn monomial_minus_one_body(q: u64, psi_pow: &[u64], slot_exp: &[u32], k: usize, out: &mut [u64]) {
    let mask = psi_pow.len() - 1;
    for (o, &e) in out.iter_mut().zip(slot_exp) {
        let p = psi_pow[(k * e as usize) & mask];
        *o = if p == 0 { q - 1 } else { p - 1 };
    }
}

/// [`Ring::monomial_minus_one`] without a lookup per slot: in the NTT's bit-reversed
/// slot order `e_(j + len) = e_j + N / len` for `j < len` (a power of two), so the slots
/// `[len, 2 len)` are the slots `[0, len)` times `psi^(k N / len)`. The first eight come
/// from the table, each doubling is one exact Shoup product per slot (`k64`'s, reduced
/// to `[0, Q)`), so the words are the table's. Falls back to the table where the slot
/// order is not the NTT's.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn monomial_minus_one_avx512(q: u64, psi_pow: &[u64], slot_exp: &[u32], k: usize, slot0: usize, out: &mut [u64]) {
    use crate::ntt::avx512_wide::k64::mul_shoup_raw;
    use std::arch::x86_64::*;
    const L: usize = 8;
    let (n, len) = (slot_exp.len(), out.len());
    let two_n = psi_pow.len();
    let log_n = n.trailing_zeros();
    // The doubling holds inside any power-of-two run of slots that starts at a multiple
    // of its length: `e_(j + len) = e_j + N / len` wherever bit `len` of `j` is clear.
    let shaped = len.is_power_of_two() && len >= 2 * L && slot0.is_multiple_of(len) && slot0 + len <= n;
    let ordered = shaped && ntt_slot_order(slot_exp, n, 0, L) && ntt_slot_order(slot_exp, n, slot0, L);
    if !n.is_power_of_two() || two_n != 2 * n || !ordered {
        return monomial_minus_one_body(q, psi_pow, &slot_exp[slot0..slot0 + len], k, out);
    }
    let k = k % two_n;
    for (o, &e) in out[..L].iter_mut().zip(&slot_exp[slot0..]) {
        *o = psi_pow[(k * e as usize) & (two_n - 1)];
    }
    let (qv, one) = (_mm512_set1_epi64(q as i64), _mm512_set1_epi64(1));
    let reduce = |x: __m512i| {
        // `[0, 3Q)` to `[0, Q)`: two conditional subtractions.
        let x = _mm512_min_epu64(x, _mm512_sub_epi64(x, qv));
        _mm512_min_epu64(x, _mm512_sub_epi64(x, qv))
    };
    let mut len = L;
    while len < out.len() {
        let c = psi_pow[(k << (log_n - len.trailing_zeros())) & (two_n - 1)];
        let cs = ((u128::from(c) << 64) / u128::from(q)) as u64;
        let (cv, csv, cshv) =
            (_mm512_set1_epi64(c as i64), _mm512_set1_epi64(cs as i64), _mm512_set1_epi64((cs >> 32) as i64));
        let (src, dst) = out.split_at_mut(len);
        for at in (0..len).step_by(L) {
            // SAFETY: `at + 8 <= len`, within `src` and `dst` (`dst.len() >= len`: `2 len
            // <= out.len()`); unaligned loads and stores.
            unsafe {
                let x = _mm512_loadu_si512(src.as_ptr().add(at).cast());
                let y = reduce(mul_shoup_raw(x, cv, csv, cshv, qv));
                _mm512_storeu_si512(dst.as_mut_ptr().add(at).cast(), y);
            }
        }
        len *= 2;
    }
    // Powers of psi are units, never 0, so `- 1` stays in `[0, Q - 1)`.
    for at in (0..out.len()).step_by(L) {
        // SAFETY: `at + 8 <= out.len()` (a power of two, at least 16).
        unsafe {
            let x = _mm512_loadu_si512(out.as_ptr().add(at).cast());
            _mm512_storeu_si512(out.as_mut_ptr().add(at).cast(), _mm512_sub_epi64(x, one));
        }
    }
}
