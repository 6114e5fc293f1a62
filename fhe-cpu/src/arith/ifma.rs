//! Elementwise products on AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`) for primes
//! `Q < 2^50`, eight words a register. A Barrett reduction on 52-bit limbs: with
//! `k = bitlen(Q)` and `mu = floor(2^(2k) / Q)`, `x = a b` splits as `H 2^52 + L`; then
//! `x1 = floor(x / 2^(k-1)) < 2^(k+1)` and `qe = floor(x1 mu / 2^(k+1))` are each
//! assembled from a high and a low product, and `x - qe Q` lies in `[0, 3Q)` (Barrett's
//! bound), below `2^52`, so the low 52 bits of `L - qe Q` give it exactly.

use std::arch::x86_64::*;

use fhe_api::ring::modulus::Modulus;

/// Whether the kernel takes `q` on this CPU.
pub(super) fn takes(q: u64) -> bool {
    q < 1 << 50 && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")
}

const L: usize = 8;

/// `acc = (acc + a b) mod q`, words below `q < 2^50`, equal lengths.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) {
    let q = m.q;
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
    for ((c, &x), &y) in acc[whole..].iter_mut().zip(&a[whole..]).zip(&b[whole..]) {
        *c = m.add(*c, m.mul(x, y));
    }
}

/// `w = (x - w) c mod q` for words below `q < 2^50`: `x + q - w < 2Q` times `c` by a
/// Shoup product with the 52-bit companion `floor(c 2^52 / Q)` (as the NTT's `k52`),
/// `[0, 2Q)`, then one subtraction.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn sub_scale(m: &Modulus, x: &[u64], c: u64, w: &mut [u64]) {
    let q = m.q;
    let cs = ((u128::from(c) << 52) / u128::from(q)) as u64;
    let (qv, cv, csv) = (_mm512_set1_epi64(q as i64), _mm512_set1_epi64(c as i64), _mm512_set1_epi64(cs as i64));
    let (zero, mask) = (_mm512_setzero_si512(), _mm512_set1_epi64((1 << 52) - 1));
    let whole = w.len() / L * L;
    for (wc, xc) in w[..whole].chunks_exact_mut(L).zip(x.chunks_exact(L)) {
        // SAFETY: each chunk holds L = 8 words; unaligned loads and store.
        let (xv, wv) = unsafe { (_mm512_loadu_si512(xc.as_ptr().cast()), _mm512_loadu_si512(wc.as_ptr().cast())) };
        let v = _mm512_sub_epi64(_mm512_add_epi64(xv, qv), wv);
        let qe = _mm512_madd52hi_epu64(zero, v, csv);
        let r = _mm512_sub_epi64(_mm512_madd52lo_epu64(zero, v, cv), _mm512_madd52lo_epu64(zero, qe, qv));
        let r = csub(_mm512_and_si512(r, mask), qv);
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(wc.as_mut_ptr().cast(), r) };
    }
    for (w, &x) in w[whole..].iter_mut().zip(&x[whole..]) {
        *w = m.mul(m.sub(x, *w), c);
    }
}

/// Whether [`dot_pair`] takes `q` and `terms` products a word on this CPU.
pub(super) fn takes_dot(q: u64, terms: usize) -> bool {
    q < 1 << 46 && (1..=16).contains(&terms) && takes(q)
}

/// `o0 = sum_j e_j b_j`, `o1 = sum_j e_j a_j` mod `q < 2^46`, at most 16 terms.
///
/// Each sum accumulates the products' low and high 52-bit halves in two 64-bit lanes
/// (`vpmadd52*` add into their destination), so `x = hi 2^52 + lo < 16 Q^2 < 2^(2K)` with
/// `K = bitlen(Q) + 2`, and is reduced once: Barrett with `K` in place of `bitlen(Q)`,
/// `mu = floor(2^(2K) / Q) < 2^(K+3) <= 2^51`. As `Q >= 2^(K-3)`, the estimate is low by
/// at most 5 (its two truncations cost under 1 and 2^(K-1) / Q <= 4), so `x - qe Q < 6Q <
/// 2^52` is exact in 52 bits and three conditional subtractions (4Q, 2Q, Q) finish it.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn dot_pair(m: &Modulus, e: &[&[u64]], b: &[&[u64]], a: &[&[u64]], o0: &mut [u64], o1: &mut [u64]) {
    let q = m.q;
    let r = Reducer::new(q);
    let n = o0.len();
    let whole = n / L * L;
    let zero = _mm512_setzero_si512();
    for at in (0..whole).step_by(L) {
        let (mut lo0, mut hi0, mut lo1, mut hi1) = (zero, zero, zero, zero);
        for ((e, b), a) in e.iter().zip(b).zip(a) {
            let (e, b, a) = (&e[at..at + L], &b[at..at + L], &a[at..at + L]);
            // SAFETY: each slice holds L = 8 words; unaligned loads.
            let (ev, bv, av) = unsafe {
                (
                    _mm512_loadu_si512(e.as_ptr().cast()),
                    _mm512_loadu_si512(b.as_ptr().cast()),
                    _mm512_loadu_si512(a.as_ptr().cast()),
                )
            };
            lo0 = _mm512_madd52lo_epu64(lo0, ev, bv);
            hi0 = _mm512_madd52hi_epu64(hi0, ev, bv);
            lo1 = _mm512_madd52lo_epu64(lo1, ev, av);
            hi1 = _mm512_madd52hi_epu64(hi1, ev, av);
        }
        let (w0, w1) = (r.reduce(lo0, hi0), r.reduce(lo1, hi1));
        // SAFETY: `at + L <= whole <= n` words; unaligned stores.
        unsafe {
            _mm512_storeu_si512(o0[at..at + L].as_mut_ptr().cast(), w0);
            _mm512_storeu_si512(o1[at..at + L].as_mut_ptr().cast(), w1);
        }
    }
    // The tail, word by word in `u128`.
    for s in whole..n {
        let (mut x0, mut x1) = (0u128, 0u128);
        for ((e, b), a) in e.iter().zip(b).zip(a) {
            x0 += u128::from(e[s]) * u128::from(b[s]);
            x1 += u128::from(e[s]) * u128::from(a[s]);
        }
        o0[s] = m.reduce_u128(x0);
        o1[s] = m.reduce_u128(x1);
    }
}

/// `y[c] = sum_i t_i[c] w_i mod q`: the products' halves accumulate as in [`dot_pair`]
/// and [`Reducer::reduce`] finishes each word once. The caller's `dot_const_fits` keeps
/// the words below `2^52`, `q < 2^46`, at most 16 rows and the sum below `2^(2K)`, the
/// reduction's bound.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn dot_const(m: &Modulus, t: &[&[u64]], w: &[u64], y: &mut [u64]) {
    let r = Reducer::new(m.q);
    let n = y.len();
    let whole = n / L * L;
    let zero = _mm512_setzero_si512();
    // At most 16 rows (`dot_const_fits`); broadcast once, on the stack.
    let mut wv = [zero; 16];
    wv.iter_mut().zip(w).for_each(|(v, &w)| *v = _mm512_set1_epi64(w as i64));
    let wv = &wv[..w.len()];
    for at in (0..whole).step_by(L) {
        let (mut lo, mut hi) = (zero, zero);
        for (row, &wk) in t.iter().zip(wv) {
            let x = &row[at..at + L];
            // SAFETY: the slice holds L = 8 words; unaligned load.
            let xv = unsafe { _mm512_loadu_si512(x.as_ptr().cast()) };
            lo = _mm512_madd52lo_epu64(lo, xv, wk);
            hi = _mm512_madd52hi_epu64(hi, xv, wk);
        }
        // SAFETY: `at + L <= whole <= n` words; unaligned store.
        unsafe { _mm512_storeu_si512(y[at..at + L].as_mut_ptr().cast(), r.reduce(lo, hi)) };
    }
    for (s, o) in y.iter_mut().enumerate().skip(whole) {
        *o = m.reduce_u128(t.iter().zip(w).map(|(row, &w)| u128::from(row[s]) * u128::from(w)).sum());
    }
}

/// `out = a b mod q < 2^46`, word by word ([`dot_pair`]'s reduction, one term a word).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn mul(m: &Modulus, a: &[u64], b: &[u64], out: &mut [u64]) {
    let r = Reducer::new(m.q);
    let zero = _mm512_setzero_si512();
    let whole = out.len() / L * L;
    for ((o, x), y) in out[..whole].chunks_exact_mut(L).zip(a.chunks_exact(L)).zip(b.chunks_exact(L)) {
        // SAFETY: each chunk holds L = 8 words; unaligned loads.
        let (xv, yv) = unsafe { (_mm512_loadu_si512(x.as_ptr().cast()), _mm512_loadu_si512(y.as_ptr().cast())) };
        let w = r.reduce(_mm512_madd52lo_epu64(zero, xv, yv), _mm512_madd52hi_epu64(zero, xv, yv));
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), w) };
    }
    for ((o, &x), &y) in out[whole..].iter_mut().zip(&a[whole..]).zip(&b[whole..]) {
        *o = m.mul(x, y);
    }
}

/// The tensor product of two ciphertexts, word by word: `d0 = x0 y0`,
/// `d1 = x0 y1 + x1 y0`, `d2 = x1 y1` mod `q < 2^46` ([`dot_pair`]'s reduction, one to
/// two terms a word).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) unsafe fn tensor(m: &Modulus, [x0, x1, y0, y1]: [&[u64]; 4], [d0, d1, d2]: [&mut [u64]; 3]) {
    let q = m.q;
    let r = Reducer::new(q);
    let zero = _mm512_setzero_si512();
    let n = d0.len();
    let whole = n / L * L;
    let load = |s: &[u64], at: usize| {
        let s = &s[at..at + L];
        // SAFETY: L = 8 in-bounds words; unaligned load.
        unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
    };
    for at in (0..whole).step_by(L) {
        let (a0, a1, b0, b1) = (load(x0, at), load(x1, at), load(y0, at), load(y1, at));
        let w0 = r.reduce(_mm512_madd52lo_epu64(zero, a0, b0), _mm512_madd52hi_epu64(zero, a0, b0));
        let lo = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, a0, b1), a1, b0);
        let hi = _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(zero, a0, b1), a1, b0);
        let w1 = r.reduce(lo, hi);
        let w2 = r.reduce(_mm512_madd52lo_epu64(zero, a1, b1), _mm512_madd52hi_epu64(zero, a1, b1));
        // SAFETY: `at + L <= whole <= n` words of each output; unaligned stores.
        unsafe {
            _mm512_storeu_si512(d0[at..at + L].as_mut_ptr().cast(), w0);
            _mm512_storeu_si512(d1[at..at + L].as_mut_ptr().cast(), w1);
            _mm512_storeu_si512(d2[at..at + L].as_mut_ptr().cast(), w2);
        }
    }
    for s in whole..n {
        d0[s] = m.mul(x0[s], y0[s]);
        d1[s] = m.add(m.mul(x0[s], y1[s]), m.mul(x1[s], y0[s]));
        d2[s] = m.mul(x1[s], y1[s]);
    }
}

/// [`dot_pair`]'s constants, broadcast.
struct Reducer {
    q: __m512i,
    q2: __m512i,
    q4: __m512i,
    mu: __m512i,
    mask: __m512i,
    h_up: __m128i,
    l_down: __m128i,
    ph_up: __m128i,
    pl_down: __m128i,
}

impl Reducer {
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn new(q: u64) -> Reducer {
        let big_k = u64::from(64 - q.leading_zeros()) + 2;
        let mu = ((1u128 << (2 * big_k)) / u128::from(q)) as u64;
        let count = |c: u64| _mm_set_epi64x(0, c as i64);
        Reducer {
            q: _mm512_set1_epi64(q as i64),
            q2: _mm512_set1_epi64(2 * q as i64),
            q4: _mm512_set1_epi64(4 * q as i64),
            mu: _mm512_set1_epi64(mu as i64),
            mask: _mm512_set1_epi64((1 << 52) - 1),
            h_up: count(53 - big_k),
            l_down: count(big_k - 1),
            ph_up: count(51 - big_k),
            pl_down: count(big_k + 1),
        }
    }

    /// `(hi 2^52 + lo) mod Q` for the accumulated halves ([`dot_pair`]'s bounds).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn reduce(&self, lo: __m512i, hi: __m512i) -> __m512i {
        let zero = _mm512_setzero_si512();
        let hi = _mm512_add_epi64(hi, _mm512_srli_epi64::<52>(lo));
        let lo = _mm512_and_si512(lo, self.mask);
        let x1 = _mm512_or_si512(_mm512_sll_epi64(hi, self.h_up), _mm512_srl_epi64(lo, self.l_down));
        let ph = _mm512_madd52hi_epu64(zero, x1, self.mu);
        let pl = _mm512_madd52lo_epu64(zero, x1, self.mu);
        let qe = _mm512_or_si512(_mm512_sll_epi64(ph, self.ph_up), _mm512_srl_epi64(pl, self.pl_down));
        let r = _mm512_and_si512(_mm512_sub_epi64(lo, _mm512_madd52lo_epu64(zero, qe, self.q)), self.mask);
        csub(csub(csub(r, self.q4), self.q2), self.q)
    }
}

/// `x mod m` for `x < 2m`.
#[inline]
#[target_feature(enable = "avx512f")]
fn csub(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
}
