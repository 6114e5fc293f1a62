//! The inner loops of blind rotation for the 54-bit ring (`2^33 <= Q < 2^54`,
//! `PN11QP54`), on 64-bit words: the lower gadget digits, and the GINX step's two
//! external products and two monomial products in one pass over the key pair.
//!
//! A product of two residues has up to 108 bits. The portable kernel sums a slot's
//! products in `u128` and reduces once ([`Wide::reduce_wide`]), where a reduction per
//! product used to cost most of the step. The AVX-512 and AVX2 kernels keep every word
//! as two 27-bit limbs, so `vpmuludq` (32 x 32 -> 64 bits) forms the four partial
//! products and the sums stay in 64-bit lanes; they reduce them with `2^54 = c (mod Q)`,
//! which needs `Q = 2^54 - c` with `c < 2^17` (`PN11QP54`: `c = 77823`). Any other
//! modulus runs the portable kernel. All give the residue in `[0, Q)`, so the same words.

use crate::mem::{Ahead, Isa};
use crate::modulus::{csub, Modulus};
use crate::tfhe::ginx32::Rows;

/// Slots per chunk of the interleaved 64-bit key (the AVX-512 kernel's lanes).
pub const CHUNK: usize = 8;

/// Bits per limb of the AVX-512 kernel: two limbs hold a residue below `2^54`.
pub(crate) const LIMB: u32 = 27;
pub(crate) const MASK: u64 = (1 << LIMB) - 1;

/// Most rows (`2L`) the kernels take: with at most 16 products of two residues, every
/// limb sum stays below `2^59` and every `u128` sum below `16 Q^2` (see the bounds at
/// [`Wide::reduce_wide`] and in the AVX-512 kernel).
const MAX_ROWS: usize = 16;

/// A key word (a residue below `2^54`) as the prepared key holds it: its low 27-bit limb
/// in the low 32-bit half, its high limb in the high half, so `vpmuludq` reads either limb
/// with at most one shift. [`join`] is the inverse.
#[inline(always)]
pub fn split(k: u64) -> u64 {
    debug_assert!(k < 1 << 54);
    ((k >> LIMB) << 32) | (k & MASK)
}

/// The residue of a [`split`] word.
#[inline(always)]
pub(crate) fn join(w: u64) -> u64 {
    ((w >> 32) << LIMB) | (w & 0xffff_ffff)
}

/// Constants of the wide kernels for one modulus `2^33 <= Q < 2^54`.
#[derive(Clone, Copy, Debug)]
pub struct Wide {
    pub(crate) q: u64,
    /// The Barrett reduction of a product.
    m: Modulus,
    /// `2^64 mod Q`.
    r64: u64,
    /// `c = 2^54 - Q` when it is below `2^17` (the AVX-512 kernel's reduction).
    pub(crate) c: Option<u64>,
}

impl Wide {
    /// `None` outside `2^33 <= Q < 2^54`: the split key words need `Q < 2^54`, and
    /// [`Wide::reduce_wide`] needs `2^64 < Q^2`.
    pub fn new(q: u64) -> Option<Wide> {
        if !(1u64 << 33..1 << 54).contains(&q) {
            return None;
        }
        let r64 = ((1u128 << 64) % u128::from(q)) as u64;
        let c = (1u64 << 54) - q;
        Some(Wide { q, m: Modulus::new(q), r64, c: (c < 1 << 17).then_some(c) })
    }

    /// `x mod Q` for `x < 16 Q^2`: `x = hi 2^64 + lo = hi r64 + lo (mod Q)`, and
    /// `hi r64 + lo < (16 Q^2 / 2^64) Q + 2^64 <= Q^2` for `2^33 <= Q < 2^54`
    /// (`16 Q / 2^64 <= 2^-6` and `2^64 / Q^2 <= 2^-2`).
    #[inline(always)]
    pub(crate) fn reduce_wide(&self, x: u128) -> u64 {
        let (hi, lo) = ((x >> 64) as u64, x as u64);
        self.m.reduce_product(u128::from(hi) * u128::from(self.r64) + u128::from(lo))
    }
}

/// One key pair `(K+, K-)`, each `[row][half][slot]` in `[0, Q)`, as the wide kernels
/// read it: [`split`] words, `[chunk][row][half][sign][CHUNK slots]`, so a step reads the
/// pair front to back once.
pub fn interleave_pair(kp: &[u64], km: &[u64], n: usize, out: &mut [u64]) {
    crate::tfhe::ginx32::interleave_pair(kp, km, n, CHUNK, out);
    out.iter_mut().for_each(|w| *w = split(*w));
}

/// One GINX step's evaluation-form work for one key pair, as
/// `crate::tfhe::ginx32::ginx_step_body` on 64-bit words: `upd[h] = (sum_r d_r K+[r][h])
/// (X^a - 1) + (sum_r d_r K-[r][h]) (X^-a - 1)` in `[0, Q)`, then `eval[h] += upd[h]`.
/// The four sums of a slot are `u128` (`rows Q^2 < 16 Q^2`) and reduced once each.
fn ginx_step_body(w: Wide, rows: Rows<u64>, pair: &[u64], mono: [&[u64]; 2], upd: &mut [u64], next: &mut Ahead) {
    let [mono_p, mono_m] = mono;
    // The slots of this call's range ([`Rows`]).
    let n = mono_p.len();
    let (parts, levels) = rows.shape(n);
    let chunk_len = parts * levels * 4 * CHUNK;
    let (upd_a, upd_b) = upd.split_at_mut(n);
    let next_lines = next.lines_left().div_ceil(n / CHUNK);
    for (c, kc) in pair.chunks_exact(chunk_len).enumerate() {
        let at = c * CHUNK;
        next.touch_lines(next_lines);
        let mut sums = [[0u128; CHUNK]; 4];
        for (r, kr) in kc.chunks_exact(4 * CHUNK).enumerate() {
            let d = &rows.row(n, levels, r)[at..at + CHUNK];
            for (sum, k) in sums.iter_mut().zip(kr.chunks_exact(CHUNK)) {
                for l in 0..CHUNK {
                    sum[l] += u128::from(d[l]) * u128::from(join(k[l]));
                }
            }
        }
        let (mp, mm) = (&mono_p[at..at + CHUNK], &mono_m[at..at + CHUNK]);
        for (h, out) in [&mut upd_a[at..at + CHUNK], &mut upd_b[at..at + CHUNK]].into_iter().enumerate() {
            let ev = &mut rows.eval[h * n + at..][..CHUNK];
            for l in 0..CHUNK {
                let ep = u128::from(w.reduce_wide(sums[2 * h][l]));
                let em = u128::from(w.reduce_wide(sums[2 * h + 1][l]));
                out[l] = w.reduce_wide(ep * u128::from(mp[l]) + em * u128::from(mm[l]));
                ev[l] = csub(ev[l] + out[l], w.q);
            }
        }
    }
}

/// [`reduce_limbs`] on one lane, in plain integer arithmetic.
#[inline(always)]
pub(crate) fn reduce_limbs_lane(lo: u64, mid: u64, hi: u64, c: u64, q: u64) -> u64 {
    csub(fold_limbs_lane(lo, mid, hi, c), q)
}

/// [`reduce_limbs_lane`] before its last subtraction: `hi 2^54 + mid 2^27 + lo` folded to
/// a value below `2Q` with the same residue.
#[inline(always)]
fn fold_limbs_lane(lo: u64, mid: u64, hi: u64, c: u64) -> u64 {
    // Every multiplicand below `2^32` by the bounds of [`reduce_limbs`]; the masks change
    // no value but tell the compiler so, which lets it use `vpmuludq`.
    const LOW: u64 = 0xffff_ffff;
    let c = c & LOW;
    let (t, a0) = (mid + (lo >> LIMB), lo & MASK);
    let (u, a1) = (hi + (t >> LIMB), t & MASK);
    let (b, a) = (a1 + ((u >> LIMB) & LOW) * c, a0 + (u & MASK) * c);
    ((b & MASK) << LIMB) + a + ((b >> LIMB) & LOW) * c
}

/// The limb kernel of [`ginx_step_avx512`] in plain integer arithmetic on `W` lanes at
/// a time, for the compiler to vectorize (products of two values below `2^32` become
/// `vpmuludq`): the AVX2 copy, with four lanes. It beats the `u128` sums on AVX2, and the
/// AVX-512 intrinsics beat it compiled for AVX-512, so that copy stays (`docs/perf/2026-12-05.md`,
/// "Lab notes moved from the code").
#[inline(always)]
fn ginx_step_limbs<const W: usize>(
    w: Wide,
    rows: Rows<u64>,
    pair: &[u64],
    mono: [&[u64]; 2],
    upd: &mut [u64],
    next: &mut Ahead,
) {
    let [mono_p, mono_m] = mono;
    // The slots of this call's range ([`Rows`]).
    let n = mono_p.len();
    let (parts, levels) = rows.shape(n);
    let chunk_len = parts * levels * 4 * CHUNK;
    let (upd_a, upd_b) = upd.split_at_mut(n);
    let next_lines = next.lines_left().div_ceil(n / CHUNK);
    let (q, c) = (w.q, w.c.unwrap_or(u64::MAX));
    assert!(c < 1 << 17 && CHUNK.is_multiple_of(W), "limb kernel: Q = 2^54 - c, c < 2^17");
    for (ch, kc) in pair.chunks_exact(chunk_len).enumerate() {
        next.touch_lines(next_lines);
        for half_chunk in (0..CHUNK).step_by(W) {
            let at = ch * CHUNK + half_chunk;
            let (mut lo, mut mid, mut hi) = ([[0u64; W]; 4], [[0u64; W]; 4], [[0u64; W]; 4]);
            for (r, kr) in kc.chunks_exact(4 * CHUNK).enumerate() {
                let d = &rows.row(n, levels, r)[at..at + W];
                for hs in 0..4 {
                    let k = &kr[hs * CHUNK + half_chunk..][..W];
                    for x in 0..W {
                        // Words below `2^54`: the mask on the high limb changes nothing
                        // (see `reduce_limbs_lane`).
                        let (d0, d1) = (d[x] & MASK, (d[x] >> LIMB) & MASK);
                        let (k0, k1) = (k[x] & 0xffff_ffff, k[x] >> 32);
                        lo[hs][x] += d0 * k0;
                        mid[hs][x] += d0 * k1 + d1 * k0;
                        hi[hs][x] += d1 * k1;
                    }
                }
            }
            let (mp, mm) = (&mono_p[at..at + W], &mono_m[at..at + W]);
            for (h, out) in [&mut upd_a[at..at + W], &mut upd_b[at..at + W]].into_iter().enumerate() {
                let ev = &mut rows.eval[h * n + at..][..W];
                for x in 0..W {
                    let ep = reduce_limbs_lane(lo[2 * h][x], mid[2 * h][x], hi[2 * h][x], c, q);
                    let em = reduce_limbs_lane(lo[2 * h + 1][x], mid[2 * h + 1][x], hi[2 * h + 1][x], c, q);
                    let limbs = |v: u64| (v & MASK, (v >> LIMB) & MASK);
                    let ((e0, e1), (f0, f1)) = (limbs(ep), limbs(em));
                    let ((m0, m1), (n0, n1)) = (limbs(mp[x]), limbs(mm[x]));
                    let plo = e0 * m0 + f0 * n0;
                    let pmid = e0 * m1 + e1 * m0 + f0 * n1 + f1 * n0;
                    let phi = e1 * m1 + f1 * n1;
                    out[x] = reduce_limbs_lane(plo, pmid, phi, c, q);
                    ev[x] = csub(ev[x] + out[x], q);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn ginx_step_avx2(w: Wide, rows: Rows<u64>, pair: &[u64], mono: [&[u64]; 2], upd: &mut [u64], next: &mut Ahead) {
    ginx_step_limbs::<4>(w, rows, pair, mono, upd, next)
}

/// `hi 2^54 + mid 2^27 + lo (mod Q)` in `[0, Q)`, lane by lane, for `Q = 2^54 - c`
/// (`cv` = `c < 2^17`, `qv` = `Q`, `mask` = `2^27 - 1` in every lane), `lo, hi < 2^58`
/// and `mid < 2^59`: the AVX-512 kernel's reduction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
#[inline]
pub(crate) fn reduce_limbs(
    lo: std::arch::x86_64::__m512i,
    mid: std::arch::x86_64::__m512i,
    hi: std::arch::x86_64::__m512i,
    mask: std::arch::x86_64::__m512i,
    cv: std::arch::x86_64::__m512i,
    qv: std::arch::x86_64::__m512i,
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    // Carries up: `hi 2^54 + mid 2^27 + lo = u 2^54 + a1 2^27 + a0` with
    // `a0, a1 < 2^27` and `u < 2^58 + 2^33 < 2^59`.
    let t = _mm512_add_epi64(mid, _mm512_srli_epi64::<27>(lo));
    let a0 = _mm512_and_si512(lo, mask);
    let u = _mm512_add_epi64(hi, _mm512_srli_epi64::<27>(t));
    let a1 = _mm512_and_si512(t, mask);
    // `u 2^54 = u c = (u1 2^27 + u0) c` (mod Q), `u1 = u >> 27 < 2^32` (so `vpmuludq`
    // reads all of it), `u0 < 2^27`: the value is `b 2^27 + a`,
    // `b = a1 + u1 c < 2^50`, `a = a0 + u0 c < 2^45`.
    let b = _mm512_add_epi64(a1, _mm512_mul_epu32(_mm512_srli_epi64::<27>(u), cv));
    let a = _mm512_add_epi64(a0, _mm512_mul_epu32(_mm512_and_si512(u, mask), cv));
    // `b 2^27 = (b >> 27) c + (b & M) 2^27` (mod Q), `(b >> 27) c < 2^40`:
    // `v < 2^54 + 2^46 < 2Q`, so one conditional subtraction ends in `[0, Q)`.
    let high = _mm512_slli_epi64::<27>(_mm512_and_si512(b, mask));
    let v = _mm512_add_epi64(_mm512_add_epi64(high, a), _mm512_mul_epu32(_mm512_srli_epi64::<27>(b), cv));
    _mm512_min_epu64(v, _mm512_sub_epi64(v, qv))
}

/// [`ginx_step_body`] in AVX-512, for `Q = 2^54 - c`, `c < 2^17`. Every digit-row word
/// `d < 2^54` is split into limbs `d0 + 2^27 d1` and every key word comes split
/// ([`split`]), so each product is four `vpmuludq` summed into three 64-bit sums
/// `lo = sum d0 k0`, `mid = sum (d0 k1 + d1 k0)`, `hi = sum d1 k1`: with at most 16 rows,
/// `lo, hi < 2^58` and `mid < 2^59`. `reduce` then brings `hi 2^54 + mid 2^27 + lo`
/// into `[0, Q)`; its steps and bounds are commented inline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn ginx_step_avx512(w: Wide, mut rows: Rows<u64>, pair: &[u64], mono: [&[u64]; 2], upd: &mut [u64], next: &mut Ahead) {
    use std::arch::x86_64::*;
    let [mono_p, mono_m] = mono;
    // The slots of this call's range ([`Rows`]).
    let n = mono_p.len();
    let (parts, levels) = rows.shape(n);
    let (eval_ptr, row_at) = rows.starts(n);
    let rows = parts * levels;
    let chunk_len = rows * 4 * CHUNK;
    let c = w.c.unwrap_or(u64::MAX);
    assert!(
        n.is_multiple_of(CHUNK)
            && parts == 2
            && rows <= MAX_ROWS
            && c < 1 << 17
            && mono_m.len() == n
            && pair.len() == n / CHUNK * chunk_len
            && upd.len() == 2 * n,
        "wide ginx_step: operand sizes"
    );
    let (mask, cv, qv) = (_mm512_set1_epi64(MASK as i64), _mm512_set1_epi64(c as i64), _mm512_set1_epi64(w.q as i64));
    let reduce = |lo, mid, hi| reduce_limbs(lo, mid, hi, mask, cv, qv);
    // Both factors `< 2^54`, split into limbs: the three sums of their product.
    let limbs_product = |x: __m512i, y0: __m512i, y1: __m512i| {
        let (x0, x1) = (_mm512_and_si512(x, mask), _mm512_srli_epi64::<27>(x));
        let mid = _mm512_add_epi64(_mm512_mul_epu32(x0, y1), _mm512_mul_epu32(x1, y0));
        (_mm512_mul_epu32(x0, y0), mid, _mm512_mul_epu32(x1, y1))
    };
    // SAFETY (every block below): the assert above bounds each offset: `at + 8 <= n`
    // inside each row, the chunk's words lie in `pair`, `h * n + at + 8 <= upd.len()`,
    // `at + 8 <= n` for the monomials; unaligned loads and stores only.
    let next_lines = next.lines_left().div_ceil(n / CHUNK);
    for ch in 0..n / CHUNK {
        let at = ch * CHUNK;
        next.touch_lines(next_lines);
        // SAFETY: see above.
        let kc = unsafe { pair.as_ptr().add(ch * chunk_len) };
        let zero = _mm512_setzero_si512();
        let (mut lo, mut mid, mut hi) = ([zero; 4], [zero; 4], [zero; 4]);
        for (r, &row) in row_at[..rows].iter().enumerate() {
            // SAFETY: see above.
            let d = unsafe { _mm512_loadu_si512(row.add(at).cast()) };
            let (d0, d1) = (_mm512_and_si512(d, mask), _mm512_srli_epi64::<27>(d));
            for hs in 0..4 {
                // SAFETY: see above.
                let k = unsafe { _mm512_loadu_si512(kc.add((r * 4 + hs) * CHUNK).cast()) };
                // `vpmuludq` reads the low 32 bits of each lane: `k0` from `k`, `k1`
                // after the shift ([`split`]).
                let k1 = _mm512_srli_epi64::<32>(k);
                lo[hs] = _mm512_add_epi64(lo[hs], _mm512_mul_epu32(d0, k));
                let cross = _mm512_add_epi64(_mm512_mul_epu32(d0, k1), _mm512_mul_epu32(d1, k));
                mid[hs] = _mm512_add_epi64(mid[hs], cross);
                hi[hs] = _mm512_add_epi64(hi[hs], _mm512_mul_epu32(d1, k1));
            }
        }
        // SAFETY: see above.
        let (mp, mm) = unsafe {
            (_mm512_loadu_si512(mono_p.as_ptr().add(at).cast()), _mm512_loadu_si512(mono_m.as_ptr().add(at).cast()))
        };
        let (mp0, mp1) = (_mm512_and_si512(mp, mask), _mm512_srli_epi64::<27>(mp));
        let (mm0, mm1) = (_mm512_and_si512(mm, mask), _mm512_srli_epi64::<27>(mm));
        for h in 0..2 {
            let ep = reduce(lo[2 * h], mid[2 * h], hi[2 * h]);
            let em = reduce(lo[2 * h + 1], mid[2 * h + 1], hi[2 * h + 1]);
            // Two products of residues: `lo, hi < 2^55`, `mid < 2^56`.
            let (pl, pm, ph) = limbs_product(ep, mp0, mp1);
            let (ml, mmid, mh) = limbs_product(em, mm0, mm1);
            let out = reduce(_mm512_add_epi64(pl, ml), _mm512_add_epi64(pm, mmid), _mm512_add_epi64(ph, mh));
            // SAFETY: see above; `eval` has the same `[half][slot]` shape as `upd`, and its
            // chunk was read (as the top rows) before this write.
            unsafe {
                _mm512_storeu_si512(upd.as_mut_ptr().add(h * n + at).cast(), out);
                let ev = eval_ptr.add(h * n + at);
                let sum = _mm512_add_epi64(_mm512_loadu_si512(ev.cast()), out);
                _mm512_storeu_si512(ev.cast(), _mm512_min_epu64(sum, _mm512_sub_epi64(sum, qv)));
            }
        }
    }
}

/// See [`ginx_step_body`]; the AVX-512 kernel where the CPU and the modulus allow it.
/// `pair` is the [`interleave_pair`] layout, `mono` `[NTT(X^a) - 1, NTT(X^-a) - 1]`,
/// `upd` `[half][slot]`; what `next` (the prefetch of the key words ahead) has left is spread over
/// the chunks.
pub fn ginx_step(
    isa: Isa,
    w: Wide,
    rows: Rows<u64>,
    pair: &[u64],
    mono: [&[u64]; 2],
    upd: &mut [u64],
    next: &mut Ahead,
) {
    let n = mono[0].len();
    let (parts, levels) = rows.shape(n);
    assert!(
        parts * levels <= MAX_ROWS
            && n.is_multiple_of(CHUNK)
            && rows.slot0.is_multiple_of(CHUNK)
            && pair.len() == n * parts * levels * 4
            && upd.len() == 2 * n,
        "wide ginx_step: operand sizes"
    );
    match (isa, w.c) {
        // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx512, Some(_)) => unsafe { ginx_step_avx512(w, rows, pair, mono, upd, next) },
        // SAFETY: `Isa::detect` returned Avx2 only after checking the CPU supports AVX2.
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx2, Some(_)) => unsafe { ginx_step_avx2(w, rows, pair, mono, upd, next) },
        _ => ginx_step_body(w, rows, pair, mono, upd, next),
    }
}

/// `x <- x + y mod q` slot by slot, both operands in `[0, q)`, `q < 2^63`; dispatches on
/// `isa` (compiled for the baseline ISA the loop runs scalar: SSE2 has no unsigned 64-bit
/// minimum, and a one-thread `M2C2` bootstrap spent a fifth of its time in these loops).
pub fn add_mod(isa: Isa, q: u64, x: &mut [u64], y: &[u64]) {
    assert_eq!(x.len(), y.len(), "add_mod: operand lengths");
    match isa {
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { add_mod_avx512(q, x, y) },
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { add_mod_avx2(q, x, y) },
        Isa::Portable => add_mod_body(q, x, y),
    }
}

#[inline(always)]
fn add_mod_body(q: u64, x: &mut [u64], y: &[u64]) {
    for (x, &y) in x.iter_mut().zip(y) {
        let t = *x + y;
        *x = t.min(t.wrapping_sub(q));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn add_mod_avx512(q: u64, x: &mut [u64], y: &[u64]) {
    add_mod_body(q, x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_mod_avx2(q: u64, x: &mut [u64], y: &[u64]) {
    add_mod_body(q, x, y)
}

/// `out <- x - y mod q` slot by slot, both operands in `[0, q)`, `q < 2^63`; dispatches
/// on `isa` as [`add_mod`].
pub fn sub_mod_into(isa: Isa, q: u64, x: &[u64], y: &[u64], out: &mut [u64]) {
    assert!(x.len() == y.len() && x.len() == out.len(), "sub_mod_into: operand lengths");
    match isa {
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { sub_mod_avx512(q, x, y, out) },
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { sub_mod_avx2(q, x, y, out) },
        Isa::Portable => sub_mod_body(q, x, y, out),
    }
}

#[inline(always)]
fn sub_mod_body(q: u64, x: &[u64], y: &[u64], out: &mut [u64]) {
    for (o, (&x, &y)) in out.iter_mut().zip(x.iter().zip(y)) {
        let t = x.wrapping_sub(y);
        *o = t.min(t.wrapping_add(q));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn sub_mod_avx512(q: u64, x: &[u64], y: &[u64], out: &mut [u64]) {
    sub_mod_body(q, x, y, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_mod_avx2(q: u64, x: &[u64], y: &[u64], out: &mut [u64]) {
    sub_mod_body(q, x, y, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfhe::decompose::decompose_lower;
    use crate::tfhe::ring::Ring;
    use fhe_api::ring::math::mul_mod;
    use fhe_api::ParamSet;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    const Q54: u64 = 18_014_398_509_404_161;

    fn random(rng: &mut rand_chacha::ChaCha8Rng, q: u64, len: usize) -> Vec<u64> {
        (0..len).map(|_| rng.next_u64() % q).collect()
    }

    /// The step's additions and subtraction on every compiled copy, at random and at the
    /// edges (0, q - 1), against `u128` arithmetic.
    #[test]
    fn add_and_sub_mod_match_wide_arithmetic() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let q = Q54;
        let mut x = random(&mut rng, q, 1000);
        let mut y = random(&mut rng, q, 1000);
        x[..4].copy_from_slice(&[0, q - 1, q - 1, 0]);
        y[..4].copy_from_slice(&[0, q - 1, 0, q - 1]);
        let sum: Vec<u64> =
            x.iter().zip(&y).map(|(&a, &b)| ((u128::from(a) + u128::from(b)) % u128::from(q)) as u64).collect();
        let diff: Vec<u64> = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| ((u128::from(a) + u128::from(q) - u128::from(b)) % u128::from(q)) as u64)
            .collect();
        for isa in Isa::available() {
            let mut s = x.clone();
            add_mod(isa, q, &mut s, &y);
            assert_eq!(s, sum, "{isa:?} add");
            let mut d = vec![0u64; x.len()];
            sub_mod_into(isa, q, &x, &y, &mut d);
            assert_eq!(d, diff, "{isa:?} sub");
        }
    }

    /// Every reduction against `u128 %`, at random and at the edges of its range.
    #[test]
    fn reductions_are_exact() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(54);
        for q in [Q54, (1 << 33) + 17, (1 << 54) - 33] {
            let w = Wide::new(q).unwrap();
            let q2 = u128::from(q) * u128::from(q);
            let mut xs = vec![0, q2 - 1, 16 * q2 - 1, u128::from(u64::MAX), 1u128 << 64];
            xs.extend((0..10_000).map(|_| (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) % (16 * q2)));
            for x in xs {
                assert_eq!(u128::from(w.reduce_wide(x)), x % u128::from(q), "q {q} x {x}");
                if x < q2 {
                    assert_eq!(u128::from(w.m.reduce_product(x)), x % u128::from(q), "q {q} x {x}");
                }
            }
        }
        assert!(Wide::new(Q54).unwrap().c == Some(77_823));
        assert!(Wide::new(1 << 33).unwrap().c.is_none());
        assert!(Wide::new((1 << 33) - 1).is_none() && Wide::new(1 << 54).is_none());
    }

    /// The limb reductions (the AVX2 kernel's lane by lane, and the AVX-512 one where
    /// this CPU has it) against `u128 %` on a million random limb sums in their range and
    /// at the range's ends; enough of them land in `[Q, 2Q)` before the last subtraction
    /// to catch a missing one.
    #[test]
    fn limb_reduction_is_exact() {
        let c = (1u64 << 54) - Q54;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let top = [(1u64 << 58) - 1, (1 << 59) - 1, (1 << 58) - 1];
        let mut cases: Vec<[u64; 3]> = vec![[0; 3], top, [top[0], 0, 0], [0, top[1], 0], [0, 0, top[2]]];
        cases.extend((0..1 << 20).map(|_| top.map(|t| rng.next_u64() & t)));
        let want = |x: &[u64; 3]| {
            let s = (u128::from(x[2]) << 54) + (u128::from(x[1]) << 27) + u128::from(x[0]);
            (s % u128::from(Q54)) as u64
        };
        let mut above = 0;
        for x in &cases {
            assert_eq!(reduce_limbs_lane(x[0], x[1], x[2], c, Q54), want(x), "limbs {x:?}");
            // Count the lanes that need the last subtraction.
            above += usize::from(fold_limbs_lane(x[0], x[1], x[2], c) >= Q54);
        }
        assert!(above > 100, "only {above} lanes reached the last subtraction");
        #[cfg(target_arch = "x86_64")]
        if Isa::detect() == Isa::Avx512 {
            use std::arch::x86_64::*;
            for chunk in cases.chunks(CHUNK) {
                let lanes = |k: usize| {
                    let mut v = [0u64; CHUNK];
                    v.iter_mut().zip(chunk).for_each(|(v, x)| *v = x[k]);
                    v
                };
                let (lo, mid, hi) = (lanes(0), lanes(1), lanes(2));
                let mut got = [0u64; CHUNK];
                // SAFETY: AVX-512F/DQ/VL were detected above; the loads and the store
                // cover eight-word arrays.
                unsafe {
                    let load = |v: &[u64; CHUNK]| _mm512_loadu_si512(v.as_ptr().cast());
                    let (mask, cv, qv) =
                        (_mm512_set1_epi64(MASK as i64), _mm512_set1_epi64(c as i64), _mm512_set1_epi64(Q54 as i64));
                    let r = reduce_limbs(load(&lo), load(&mid), load(&hi), mask, cv, qv);
                    _mm512_storeu_si512(got.as_mut_ptr().cast(), r);
                }
                for (l, x) in chunk.iter().enumerate() {
                    assert_eq!(got[l], want(x), "AVX-512, limbs {x:?}");
                }
            }
        }
    }

    #[test]
    fn split_words_join_back() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for k in random(&mut rng, 1 << 54, 1000).into_iter().chain([0, (1 << 54) - 1, MASK, MASK + 1]) {
            assert_eq!(join(split(k)), k);
            assert!(split(k) & 0xffff_ffff <= MASK && split(k) >> 32 <= MASK);
        }
    }

    /// The lower digits are the first rows of `Ring::decompose`, word for word.
    #[test]
    fn lower_digits_match_the_ring_decomposition() {
        let ring = Ring::new(ParamSet::PN11QP54, "reference").unwrap();
        let (n, q, levels) = (ring.n(), ring.modulus.q, ring.params.bsk_levels.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let mut poly = random(&mut rng, q, n);
        poly[..4].copy_from_slice(&[0, q - 1, q / 2, q / 2 + 1]);
        let mut want = vec![vec![0u64; n]; levels];
        ring.decompose(&poly, &mut want);
        for isa in Isa::available() {
            let mut got = vec![0u64; (levels - 1) * n];
            decompose_lower(isa, q, ring.params.bsk_base_log.0, levels, &poly, &mut got);
            assert!(got.chunks_exact(n).zip(&want).all(|(g, w)| g == &w[..]), "{isa:?}");
        }
    }

    /// Both kernels against a slot-by-slot computation with `mul_mod`, on random rows
    /// and keys, for the 54-bit ring (AVX-512 where this CPU has it) and a modulus
    /// without the AVX-512 kernel's form (portable only).
    #[test]
    fn ginx_kernels_match_a_direct_computation() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // Random words, then every word `Q - 1` (the largest sums), for the 54-bit ring
        // with 5 and 8 levels (10 and 16 rows, the most the kernels take).
        for (q, levels, top) in [(Q54, 5, false), (Q54, 5, true), (Q54, 8, true), ((1 << 40) - 87, 4, false)] {
            let w = Wide::new(q).unwrap();
            let n = 64;
            let rows = 2 * levels;
            let mut words = |len: usize| if top { vec![q - 1; len] } else { random(&mut rng, q, len) };
            let lower = words(2 * (levels - 1) * n);
            let eval = words(2 * n);
            let (kp, km) = (words(rows * 2 * n), words(rows * 2 * n));
            let (mono_p, mono_m) = (words(n), words(n));
            let mut pair = vec![0u64; 4 * rows * n];
            interleave_pair(&kp, &km, n, &mut pair);
            let row = |r: usize, j: usize| {
                let (p, l) = (r / levels, r % levels);
                if l == levels - 1 {
                    eval[p * n + j]
                } else {
                    lower[(p * (levels - 1) + l) * n + j]
                }
            };
            let mut want_upd = vec![0u64; 2 * n];
            let mut want_eval = eval.clone();
            for h in 0..2 {
                for j in 0..n {
                    let sum =
                        |k: &[u64]| (0..rows).fold(0, |s, r| (s + mul_mod(row(r, j), k[(2 * r + h) * n + j], q)) % q);
                    let u = (mul_mod(sum(&kp), mono_p[j], q) + mul_mod(sum(&km), mono_m[j], q)) % q;
                    want_upd[h * n + j] = u;
                    want_eval[h * n + j] = (eval[h * n + j] + u) % q;
                }
            }
            for isa in Isa::available() {
                let (mut upd, mut ev) = (vec![0u64; 2 * n], eval.clone());
                let rows = Rows::whole(n, &lower, &mut ev);
                ginx_step(isa, w, rows, &pair, [&mono_p, &mono_m], &mut upd, &mut Ahead::none());
                assert!(upd == want_upd && ev == want_eval, "q {q}, {levels} levels, top {top}, {isa:?}");
                // Calls on two slot ranges (`bootstrap::blind_rotate_duo`'s halves, and
                // uneven ones) give the same words.
                for split in [n / 2, 3 * n / 8] {
                    for slots in [0..split, split..n] {
                        let m = slots.len();
                        let mut ev: Vec<u64> = eval.chunks_exact(n).flat_map(|e| e[slots.clone()].to_vec()).collect();
                        let mut upd = vec![0u64; 2 * m];
                        let keys = &pair[slots.start * pair.len() / n..slots.end * pair.len() / n];
                        let rows = Rows { lower: &lower, n, slot0: slots.start, eval: &mut ev };
                        let mono = [&mono_p[slots.clone()], &mono_m[slots.clone()]];
                        ginx_step(isa, w, rows, keys, mono, &mut upd, &mut Ahead::none());
                        for h in 0..2 {
                            let at = h * n + slots.start..h * n + slots.end;
                            assert!(upd[h * m..(h + 1) * m] == want_upd[at.clone()], "{q} {isa:?} {slots:?}");
                            assert!(ev[h * m..(h + 1) * m] == want_eval[at], "{q} {isa:?} eval {slots:?}");
                        }
                    }
                }
            }
        }
    }
}
