//! AVX-512 kernels for primes up to `2^60` (avx512f, avx512dq and avx512ifma), eight
//! words a register: the 60-bit CKKS chains (the bootstrappable presets and seed 2's
//! 59-bit scale), whose words do not fit the 52-bit limbs of [`super::ifma`].
//!
//! A product `x y` of words below `2^60` is accumulated exactly in three lanes of weights
//! `1`, `2^52` and `2^104`: with `x = xh 2^52 + xl`, the four 52-bit products `xl yl`,
//! `xl yh`, `xh yl`, `xh yh` (`vpmadd52luq`/`vpmadd52huq` read only the low 52 bits, so
//! `xl` is `x` itself) add their low and high halves into the lane of their weight. Up to
//! [`MAX_TERMS`] products and one residue sum below `2^124`; the sum `V = h 2^62 + l` is
//! then `h (2^62 mod Q) + l mod Q`, two Shoup products of the NTT's 64-bit kernel (each in
//! `[0, 3Q)`, inputs below `2^62`) and three conditional subtractions. Every result is
//! the canonical residue, the same word the portable code gives.

use std::arch::x86_64::*;

use fhe_api::ring::modulus::{shoup, Modulus};

use crate::ntt::avx512_wide::k64::mul_shoup_raw;

const L: usize = 8;
const M52: i64 = (1 << 52) - 1;

/// Products a sum takes before it is reduced: `16 (Q - 1)^2 + Q < 2^124` for `Q < 2^60`.
pub(super) const MAX_TERMS: usize = 16;

/// Whether the kernels take `q` on this CPU.
pub(super) fn takes(q: u64) -> bool {
    q < 1 << 60
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512ifma")
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn load(s: &[u64], at: usize) -> __m512i {
    let s = &s[at..at + L];
    // SAFETY: 8 in-bounds words; unaligned load.
    unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn store(s: &mut [u64], at: usize, v: __m512i) {
    let s = &mut s[at..at + L];
    // SAFETY: 8 in-bounds words; unaligned store.
    unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
}

/// A word and its bits above 52, the two limbs a product reads.
#[derive(Clone, Copy)]
struct Split(__m512i, __m512i);

impl Split {
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn of(x: __m512i) -> Split {
        Split(x, _mm512_srli_epi64::<52>(x))
    }
}

/// A lazy sum of products in lanes of weight `1`, `2^52` (two) and `2^104` (two): the
/// split lanes shorten the dependency chains.
#[derive(Clone, Copy)]
struct Acc([__m512i; 5]);

impl Acc {
    /// A sum starting from `x` (a word below `2^52` goes in the first lane as it is; a
    /// larger one is split so that every lane keeps its bound).
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn from(x: __m512i) -> Acc {
        let z = _mm512_setzero_si512();
        Acc([_mm512_and_si512(x, _mm512_set1_epi64(M52)), _mm512_srli_epi64::<52>(x), z, z, z])
    }

    /// `+= x y` for `x, y < 2^60`. Per product the first lane grows by below `2^52`, the
    /// second pair by below `3 2^52`, the third by below `2^9`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn mac(&mut self, Split(x, xh): Split, Split(y, yh): Split) {
        let [a0, a1, b1, a2, b2] = &mut self.0;
        *a0 = _mm512_madd52lo_epu64(*a0, x, y);
        *a1 = _mm512_madd52hi_epu64(*a1, x, y);
        *b1 = _mm512_madd52lo_epu64(*b1, x, yh);
        *a1 = _mm512_madd52lo_epu64(*a1, xh, y);
        *a2 = _mm512_madd52hi_epu64(*a2, x, yh);
        *b2 = _mm512_madd52hi_epu64(*b2, xh, y);
        *a2 = _mm512_madd52lo_epu64(*a2, xh, yh);
    }
}

/// The reduction's constants for one prime.
struct Reducer {
    q: __m512i,
    q2: __m512i,
    q4: __m512i,
    /// `2^62 mod Q` with its Shoup companion and the companion's high half.
    r62: [__m512i; 3],
    /// `1` likewise: `mul_shoup_raw(l, one)` is `l mod Q` in `[0, 3Q)`.
    one: [__m512i; 3],
}

impl Reducer {
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn new(q: u64) -> Reducer {
        let splat = |v: u64| _mm512_set1_epi64(v as i64);
        let consts = |w: u64| {
            let ws = shoup(w, q);
            [splat(w), splat(ws), splat(ws >> 32)]
        };
        let r62 = ((1u128 << 62) % u128::from(q)) as u64;
        Reducer { q: splat(q), q2: splat(2 * q), q4: splat(4 * q), r62: consts(r62), one: consts(1) }
    }

    /// The canonical residue of a sum below `2^124`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn reduce(&self, Acc([a0, a1, b1, a2, b2]): Acc) -> __m512i {
        let m52 = _mm512_set1_epi64(M52);
        let a1 = _mm512_add_epi64(_mm512_add_epi64(a1, b1), _mm512_srli_epi64::<52>(a0));
        let a0 = _mm512_and_si512(a0, m52);
        let a2 = _mm512_add_epi64(_mm512_add_epi64(a2, b2), _mm512_srli_epi64::<52>(a1));
        let a1 = _mm512_and_si512(a1, m52);
        // V = a2 2^104 + a1 2^52 + a0 = h 2^62 + l, `h < 2^62` as `V < 2^124`.
        let l = _mm512_or_si512(_mm512_slli_epi64::<52>(_mm512_and_si512(a1, _mm512_set1_epi64(0x3ff))), a0);
        let h = _mm512_add_epi64(_mm512_slli_epi64::<42>(a2), _mm512_srli_epi64::<10>(a1));
        let [w, ws, wsh] = self.r62;
        let [o, os, osh] = self.one;
        let s = _mm512_add_epi64(mul_shoup_raw(h, w, ws, wsh, self.q), mul_shoup_raw(l, o, os, osh, self.q));
        csub(csub(csub(s, self.q4), self.q2), self.q)
    }
}

/// `x mod m` for `x < 2m`.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
fn csub(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
}

/// `o0 = sum_j e_j b_j`, `o1 = sum_j e_j a_j` mod `q` on the whole blocks of eight words
/// (any number of terms, reduced every [`MAX_TERMS`]); returns the words done, the
/// caller finishes the tail.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn dot_pair(m: &Modulus, e: &[&[u64]], b: &[&[u64]], a: &[&[u64]], o0: &mut [u64], o1: &mut [u64]) -> usize {
    let r = Reducer::new(m.q);
    let whole = o0.len() / L * L;
    let zero = _mm512_setzero_si512();
    for at in (0..whole).step_by(L) {
        let (mut v0, mut v1) = (zero, zero);
        for ((e, b), a) in e.chunks(MAX_TERMS).zip(b.chunks(MAX_TERMS)).zip(a.chunks(MAX_TERMS)) {
            let (mut s0, mut s1) = (Acc::from(v0), Acc::from(v1));
            for ((e, b), a) in e.iter().zip(b).zip(a) {
                let ev = Split::of(load(e, at));
                s0.mac(ev, Split::of(load(b, at)));
                s1.mac(ev, Split::of(load(a, at)));
            }
            (v0, v1) = (r.reduce(s0), r.reduce(s1));
        }
        store(o0, at, v0);
        store(o1, at, v1);
    }
    whole
}

/// `o = sum_j x_j p_j mod q` on the whole blocks (as [`dot_pair`]); returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn dot(m: &Modulus, x: &[&[u64]], p: &[&[u64]], o: &mut [u64]) -> usize {
    let r = Reducer::new(m.q);
    let whole = o.len() / L * L;
    for at in (0..whole).step_by(L) {
        let mut v = _mm512_setzero_si512();
        for (x, p) in x.chunks(MAX_TERMS).zip(p.chunks(MAX_TERMS)) {
            let mut s = Acc::from(v);
            for (x, p) in x.iter().zip(p) {
                s.mac(Split::of(load(x, at)), Split::of(load(p, at)));
            }
            v = r.reduce(s);
        }
        store(o, at, v);
    }
    whole
}

/// `y = sum_i t_i w_i mod q` on the whole blocks, rows of words below `2^60`, constants
/// below `q`, at most [`MAX_TERMS`] rows (the caller checks both); returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn dot_const(m: &Modulus, t: &[&[u64]], w: &[u64], y: &mut [u64]) -> usize {
    debug_assert!(t.len() <= MAX_TERMS);
    let r = Reducer::new(m.q);
    let zero = _mm512_setzero_si512();
    let mut ws = [Split(zero, zero); MAX_TERMS];
    ws.iter_mut().zip(w).for_each(|(s, &w)| *s = Split::of(_mm512_set1_epi64(w as i64)));
    let whole = y.len() / L * L;
    for at in (0..whole).step_by(L) {
        let mut s = Acc::from(zero);
        for (row, &w) in t.iter().zip(&ws) {
            s.mac(Split::of(load(row, at)), w);
        }
        store(y, at, r.reduce(s));
    }
    whole
}

/// `acc = (acc + a b) mod q` on the whole blocks; returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) -> usize {
    let r = Reducer::new(m.q);
    let whole = acc.len() / L * L;
    for at in (0..whole).step_by(L) {
        let mut s = Acc::from(load(acc, at));
        s.mac(Split::of(load(a, at)), Split::of(load(b, at)));
        store(acc, at, r.reduce(s));
    }
    whole
}

/// `out = a b mod q` on the whole blocks; returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn mul(m: &Modulus, a: &[u64], b: &[u64], out: &mut [u64]) -> usize {
    let r = Reducer::new(m.q);
    let whole = out.len() / L * L;
    let zero = _mm512_setzero_si512();
    for at in (0..whole).step_by(L) {
        let mut s = Acc::from(zero);
        s.mac(Split::of(load(a, at)), Split::of(load(b, at)));
        store(out, at, r.reduce(s));
    }
    whole
}

/// The tensor product (`super::tensor`) on the whole blocks; returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn tensor(m: &Modulus, [x0, x1, y0, y1]: [&[u64]; 4], [d0, d1, d2]: [&mut [u64]; 3]) -> usize {
    let r = Reducer::new(m.q);
    let whole = d0.len() / L * L;
    let zero = _mm512_setzero_si512();
    for at in (0..whole).step_by(L) {
        let (a0, a1) = (Split::of(load(x0, at)), Split::of(load(x1, at)));
        let (b0, b1) = (Split::of(load(y0, at)), Split::of(load(y1, at)));
        let (mut s0, mut s1, mut s2) = (Acc::from(zero), Acc::from(zero), Acc::from(zero));
        s0.mac(a0, b0);
        s1.mac(a0, b1);
        s1.mac(a1, b0);
        s2.mac(a1, b1);
        store(d0, at, r.reduce(s0));
        store(d1, at, r.reduce(s1));
        store(d2, at, r.reduce(s2));
    }
    whole
}

/// `w = (x - w) c mod q` on the whole blocks, `c < q`: `x + q - w < 2Q` times `c` by one
/// Shoup product in `[0, 3Q)`; returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn sub_scale(m: &Modulus, x: &[u64], (c, c_shoup): (u64, u64), w: &mut [u64]) -> usize {
    let splat = |v: u64| _mm512_set1_epi64(v as i64);
    let (q, q2) = (splat(m.q), splat(2 * m.q));
    let (cv, cs, csh) = (splat(c), splat(c_shoup), splat(c_shoup >> 32));
    let whole = w.len() / L * L;
    for at in (0..whole).step_by(L) {
        let v = _mm512_sub_epi64(_mm512_add_epi64(load(x, at), q), load(w, at));
        store(w, at, csub(csub(mul_shoup_raw(v, cv, cs, csh, q), q2), q));
    }
    whole
}

/// `out = (centered remainder of x mod q_last) mod q` on the whole blocks (rescale's and
/// ModRaise's `d`, as `fhe_api::ring::rns::centered_remainder_to` pins it), inputs below
/// `q_last < 2^62`: `r = (x + h) mod q_last` below `2^62`, `r mod q` by a Shoup product
/// with `w = 1` in `[0, 3Q)`, less `h mod q`. Returns the words done.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn centered(q_last: u64, m: &Modulus, input: &[u64], out: &mut [u64]) -> usize {
    let splat = |v: u64| _mm512_set1_epi64(v as i64);
    let h = q_last / 2;
    let (ql, hv, q, q2, qh) = (splat(q_last), splat(h), splat(m.q), splat(2 * m.q), splat(m.q - m.reduce(h)));
    let one_s = shoup(1, m.q);
    let (one, os, osh) = (splat(1), splat(one_s), splat(one_s >> 32));
    let whole = out.len() / L * L;
    for at in (0..whole).step_by(L) {
        let r = csub(_mm512_add_epi64(load(input, at), hv), ql);
        let t = csub(csub(mul_shoup_raw(r, one, os, osh, q), q2), q);
        store(out, at, csub(_mm512_add_epi64(t, qh), q));
    }
    whole
}
