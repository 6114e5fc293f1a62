//! Elementwise products on AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`) for primes
//! `Q < 2^50`, eight words a register. A Barrett reduction on 52-bit limbs: with
//! `k = bitlen(Q)` and `mu = floor(2^(2k) / Q)`, `x = a b` splits as `H 2^52 + L`; then
//! `x1 = floor(x / 2^(k-1)) < 2^(k+1)` and `qe = floor(x1 mu / 2^(k+1))` are each
//! assembled from a high and a low product, and `x - qe Q` lies in `[0, 3Q)` (Barrett's
//! bound), below `2^52`, so the low 52 bits of `L - qe Q` give it exactly.

use std::arch::x86_64::*;

/// Whether the kernel takes `q` on this CPU.
pub(super) fn takes(q: u64) -> bool {
    q < 1 << 50 && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")
}

const L: usize = 8;

/// `acc = (acc + a b) mod q`, words below `q < 2^50`, equal lengths.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn mul_add(q: u64, a: &[u64], b: &[u64], acc: &mut [u64]) {
    let k = u64::from(64 - q.leading_zeros());
    let mu = ((1u128 << (2 * k)) / u128::from(q)) as u64;
    let (qv, muv, mask) = (_mm512_set1_epi64(q as i64), _mm512_set1_epi64(mu as i64), _mm512_set1_epi64((1 << 52) - 1));
    // Shift counts: `x1 = H << (53 - k) | L >> (k - 1)`, `qe = Ph << (51 - k) | Pl >> (k + 1)`.
    let count = |c: u64| _mm_set_epi64x(0, c as i64);
    let (h_up, l_down, ph_up, pl_down) = (count(53 - k), count(k - 1), count(51 - k), count(k + 1));
    let zero = _mm512_setzero_si512();
    let whole = acc.len() / L * L;
    for ((c, x), y) in acc[..whole].chunks_exact_mut(L).zip(a.chunks_exact(L)).zip(b.chunks_exact(L)) {
        // SAFETY: each chunk holds L = 8 words; unaligned loads and store.
        let (xv, yv, cv) = unsafe {
            (
                _mm512_loadu_si512(x.as_ptr().cast()),
                _mm512_loadu_si512(y.as_ptr().cast()),
                _mm512_loadu_si512(c.as_ptr().cast()),
            )
        };
        let hi = _mm512_madd52hi_epu64(zero, xv, yv);
        let lo = _mm512_madd52lo_epu64(zero, xv, yv);
        let x1 = _mm512_or_si512(_mm512_sll_epi64(hi, h_up), _mm512_srl_epi64(lo, l_down));
        let ph = _mm512_madd52hi_epu64(zero, x1, muv);
        let pl = _mm512_madd52lo_epu64(zero, x1, muv);
        let qe = _mm512_or_si512(_mm512_sll_epi64(ph, ph_up), _mm512_srl_epi64(pl, pl_down));
        let r = _mm512_and_si512(_mm512_sub_epi64(lo, _mm512_madd52lo_epu64(zero, qe, qv)), mask);
        let r = csub(csub(r, qv), qv);
        let s = csub(_mm512_add_epi64(cv, r), qv);
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(c.as_mut_ptr().cast(), s) };
    }
    // The tail, as the portable code computes it.
    let m = fhe_api::ring::modulus::Modulus::new(q);
    for ((c, &x), &y) in acc[whole..].iter_mut().zip(&a[whole..]).zip(&b[whole..]) {
        *c = m.add(*c, m.mul(x, y));
    }
}

/// `x mod m` for `x < 2m`.
#[inline]
#[target_feature(enable = "avx512f")]
fn csub(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
}
