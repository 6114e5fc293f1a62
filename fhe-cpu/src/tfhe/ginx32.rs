//! The inner loops of blind rotation for moduli below `2^29`, written so the compiler
//! vectorizes them (32-bit residues, `u32 x u32 -> u64` products), compiled three
//! times (portable, AVX2, AVX-512) and chosen once at run time ([`Isa`]).
//! Reductions are [`SmallBarrett`]'s (`crate::arith::small`).

use crate::arith::small::SmallBarrett;
use crate::mem::{prefetch, Ahead, Isa};

/// Slots per chunk of the interleaved small-modulus key (see [`interleave_pair`]).
pub const CHUNK: usize = 16;

/// One key pair `(K+, K-)`, each `[row][half][slot]`, interleaved for [`ginx_step`]
/// (`chunk` = [`CHUNK`]) or the wide kernel (`crate::tfhe::ginx64::CHUNK`):
/// `[chunk][row][half][sign][chunk slots]`, so a step reads the pair front to back once.
pub fn interleave_pair<T: Copy>(kp: &[T], km: &[T], n: usize, chunk: usize, out: &mut [T]) {
    let rows = kp.len() / (2 * n);
    let mut o = out.chunks_exact_mut(chunk);
    for c in 0..n / chunk {
        for r in 0..rows {
            for h in 0..2 {
                for k in [kp, km] {
                    let at = (2 * r + h) * n + c * chunk;
                    o.next().expect("out holds the pair").copy_from_slice(&k[at..at + chunk]);
                }
            }
        }
    }
}

/// Chunks ahead of the one being multiplied whose key words are prefetched: the key is
/// streamed from memory once per step, and without it the loads stall the multiplies.
const PREFETCH_CHUNKS: usize = 8;

/// One GINX step's evaluation-form work for one key pair, small modulus, on the slots
/// of `rows` ([`Rows`]: a range of `m` slots, `m` the monomials' length):
/// `upd[h] = (sum_r d_r K+[r][h]) (X^a - 1) + (sum_r d_r K-[r][h]) (X^-a - 1)`, reduced
/// to `[0, Q)`, then `eval[h] += upd[h]` (mod `Q`). The rows `d_r`, `r = p L + l` for
/// part `p` and level `l`, are the NTTs of the lower digits and, for `l = L - 1`,
/// `NTT(ACC_p)` itself (the folded key of [`crate::tfhe::bootstrap`]), read in place so the
/// step copies nothing. `pair` is the range's chunks of the [`interleave_pair`] layout,
/// `upd` `[half][m]`. The four sums of a chunk stay in registers across the rows; each
/// is at most `2L Q^2 < 2^58`, inside `reduce`'s range.
#[inline(always)]
fn ginx_step_body(
    br: SmallBarrett,
    rows: Rows<u32>,
    pair: &[u32],
    mono: [&[u32]; 2],
    upd: &mut [u32],
    next: &mut Ahead,
) {
    let [mono_p, mono_m] = mono;
    let m = mono_p.len();
    let (parts, levels) = rows.shape(m);
    let q = br.q as u32;
    let (upd_a, upd_b) = upd.split_at_mut(m);
    let chunk_len = parts * levels * 4 * CHUNK;
    for (c, kc) in pair.chunks_exact(chunk_len).enumerate() {
        let at = c * CHUNK;
        let ahead = (c + PREFETCH_CHUNKS) * chunk_len;
        prefetch(pair.get(ahead..ahead + chunk_len).unwrap_or(&[]));
        next.touch_lines(NEXT_LINES_PER_CHUNK);
        let mut acc = [[0u64; CHUNK]; 4];
        for (r, kr) in kc.chunks_exact(4 * CHUNK).enumerate() {
            let d: &[u32; CHUNK] = rows.row(m, levels, r)[at..at + CHUNK].try_into().expect("a chunk");
            for (sum, k) in acc.iter_mut().zip(kr.chunks_exact(CHUNK)) {
                for l in 0..CHUNK {
                    sum[l] += u64::from(d[l]) * u64::from(k[l]);
                }
            }
        }
        let (mp, mm) = (&mono_p[at..at + CHUNK], &mono_m[at..at + CHUNK]);
        for (h, out) in [&mut upd_a[at..at + CHUNK], &mut upd_b[at..at + CHUNK]].into_iter().enumerate() {
            let ev = &mut rows.eval[h * m + at..][..CHUNK];
            for l in 0..CHUNK {
                let ep = br.reduce(acc[2 * h][l]);
                let em = br.reduce(acc[2 * h + 1][l]);
                out[l] = br.reduce(ep * u64::from(mp[l]) + em * u64::from(mm[l])) as u32;
                let s = ev[l] + out[l];
                ev[l] = s.min(s.wrapping_sub(q));
            }
        }
    }
}

/// The digit rows of one GINX kernel call ([`ginx_step`], `crate::tfhe::ginx64::ginx_step`) on a
/// range of `m` slots (the monomials' length), `slot0..slot0 + m`: the whole ring for one
/// thread, or its part of the slots when two threads share a step
/// (`crate::tfhe::bootstrap`). `lower` holds the NTTs of the lower digits,
/// `[part][level < L - 1][slot]` with `n` slots a row, of which the call reads its
/// range; `eval` holds `NTT(ACC)` at the range's slots, `[part][m]`: it stands in for
/// the top digit, and the call updates it in place.
pub struct Rows<'a, T> {
    pub lower: &'a [T],
    pub n: usize,
    pub slot0: usize,
    pub eval: &'a mut [T],
}

impl<'a, T> Rows<'a, T> {
    /// All `n` slots: `eval` is `[part][n]`.
    pub fn whole(n: usize, lower: &'a [T], eval: &'a mut [T]) -> Self {
        Rows { lower, n, slot0: 0, eval }
    }

    /// `(parts, levels)` for a call on `m` slots: `eval` holds one row per part, `lower`
    /// `levels - 1` per part; checks that the range lies inside the rows.
    pub(crate) fn shape(&self, m: usize) -> (usize, usize) {
        assert!(m > 0 && self.slot0 + m <= self.n, "ginx_step: the slot range lies inside the rows");
        let parts = self.eval.len() / m;
        assert!(parts > 0 && self.eval.len() == parts * m, "ginx_step: eval holds whole rows");
        let lower_rows = self.lower.len() / self.n;
        assert!(
            self.lower.len() == lower_rows * self.n && lower_rows.is_multiple_of(parts),
            "ginx_step: lower digits per part"
        );
        (parts, lower_rows / parts + 1)
    }

    /// Row `r = p L + l` at the range's `m` slots: `lower`'s row `(p, l)` for `l < L - 1`,
    /// `eval`'s row `p` (`NTT(ACC_p)`) for the top level.
    #[inline(always)]
    pub(crate) fn row(&self, m: usize, levels: usize, r: usize) -> &[T] {
        let (p, l) = (r / levels, r % levels);
        if l == levels - 1 {
            &self.eval[p * m..(p + 1) * m]
        } else {
            let at = (p * (levels - 1) + l) * self.n + self.slot0;
            &self.lower[at..at + m]
        }
    }

    /// [`Rows::row`]'s starts as pointers for the SIMD kernels, the first `rows` of them,
    /// with `eval`'s pointer: all `eval` pointers come from one `as_mut_ptr`, as the
    /// kernel reads and writes it.
    pub(crate) fn starts(&mut self, m: usize) -> (*mut T, [*const T; MAX_ROWS]) {
        let (parts, levels) = self.shape(m);
        assert!(parts * levels <= MAX_ROWS, "ginx_step: at most {MAX_ROWS} rows");
        let eval_ptr = self.eval.as_mut_ptr();
        let mut row_at = [self.lower.as_ptr(); MAX_ROWS];
        for (r, at) in row_at.iter_mut().enumerate().take(parts * levels) {
            let (p, l) = (r / levels, r % levels);
            // SAFETY: `p < parts` and `l < levels - 1` index whole rows of `eval` and
            // `lower`, and `slot0 + m <= n` (`shape` checked all three); `add` stays
            // inside each allocation.
            *at = unsafe {
                if l == levels - 1 {
                    eval_ptr.add(p * m).cast_const()
                } else {
                    self.lower.as_ptr().add((p * (levels - 1) + l) * self.n + self.slot0)
                }
            };
        }
        (eval_ptr, row_at)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn ginx_step_avx2(
    br: SmallBarrett,
    rows: Rows<u32>,
    pair: &[u32],
    mono: [&[u32]; 2],
    upd: &mut [u32],
    next: &mut Ahead,
) {
    ginx_step_body(br, rows, pair, mono, upd, next)
}

/// [`ginx_step_body`] in AVX-512 intrinsics: the products come from `vpmuludq` on the
/// even and the odd 32-bit lanes of the packed words, eight 64-bit sums per chunk in
/// registers, and the Barrett reductions on 64-bit lanes. The kernel is bound by how
/// many instructions it issues, so it saves them where it can:
/// - the four sums are only brought below `4Q` (no final subtractions) before the
///   monomial products: `2 (4Q) Q < 2^(k+31)` stays inside `reduce`'s range (for
///   `k <= 28`, which [`ginx_step`] checks);
/// - no prefetch of this pair: the caller streamed it in during the step before and the
///   start of this one ([`Ahead`]); this step streams the next words,
///   [`NEXT_LINES_PER_CHUNK`] lines a chunk.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn ginx_step_avx512(
    br: SmallBarrett,
    mut rows: Rows<u32>,
    pair: &[u32],
    mono: [&[u32]; 2],
    upd: &mut [u32],
    next: &mut Ahead,
) {
    use std::arch::x86_64::*;
    let [mono_p, mono_m] = mono;
    // `n`: the slots of this call's range (`Rows`), the length of every row it reads.
    let n = mono_p.len();
    let (parts, levels) = rows.shape(n);
    let (eval_ptr, row_at) = rows.starts(n);
    let rows = parts * levels;
    let chunk_len = rows * 4 * CHUNK;
    assert!(
        n.is_multiple_of(CHUNK)
            && parts == 2
            && rows <= MAX_ROWS
            && mono_m.len() == n
            && pair.len() == n / CHUNK * chunk_len
            && upd.len() == 2 * n,
        "ginx_step: operand sizes"
    );
    let qv32 = _mm512_set1_epi32(br.q as i32);
    let (qv, q2v, muv) =
        (_mm512_set1_epi64(br.q as i64), _mm512_set1_epi64(2 * br.q as i64), _mm512_set1_epi64(br.mu as i64));
    let shift = _mm512_set1_epi64(i64::from(br.shift));
    // `SmallBarrett::reduce` without its two subtractions: `[0, 4Q)` (each lane `< 2^(k+31)`).
    let reduce4 = |x: __m512i| {
        let est = _mm512_srli_epi64::<32>(_mm512_mul_epu32(_mm512_srlv_epi64(x, shift), muv));
        _mm512_sub_epi64(x, _mm512_mul_epu32(est, qv))
    };
    let reduce = |x: __m512i| {
        let r = reduce4(x);
        let r = _mm512_min_epu64(r, _mm512_sub_epi64(r, q2v));
        _mm512_min_epu64(r, _mm512_sub_epi64(r, qv))
    };
    // SAFETY (every block below): the assert above bounds each offset: `at + 16 <= n`
    // inside each row, the chunk's words lie in `pair`, `h * n + at + 16 <= upd.len()`,
    // `at + 16 <= n` for the monomials; unaligned loads and stores only.
    for c in 0..n / CHUNK {
        let at = c * CHUNK;
        next.touch_lines(NEXT_LINES_PER_CHUNK);
        // SAFETY: see above.
        let kc = unsafe { pair.as_ptr().add(c * chunk_len) };
        let (mut even, mut odd) = ([_mm512_setzero_si512(); 4], [_mm512_setzero_si512(); 4]);
        for (r, &row) in row_at[..rows].iter().enumerate() {
            // SAFETY: see above.
            let d = unsafe { _mm512_loadu_si512(row.add(at).cast()) };
            let d_odd = _mm512_srli_epi64::<32>(d);
            for hs in 0..4 {
                // SAFETY: see above.
                let k = unsafe { _mm512_loadu_si512(kc.add((r * 4 + hs) * CHUNK).cast()) };
                even[hs] = _mm512_add_epi64(even[hs], _mm512_mul_epu32(d, k));
                odd[hs] = _mm512_add_epi64(odd[hs], _mm512_mul_epu32(d_odd, _mm512_srli_epi64::<32>(k)));
            }
        }
        // SAFETY: see above.
        let (mp, mm) = unsafe {
            (_mm512_loadu_si512(mono_p.as_ptr().add(at).cast()), _mm512_loadu_si512(mono_m.as_ptr().add(at).cast()))
        };
        let (mp_odd, mm_odd) = (_mm512_srli_epi64::<32>(mp), _mm512_srli_epi64::<32>(mm));
        for h in 0..2 {
            let lanes = |sums: &[__m512i; 4], mp: __m512i, mm: __m512i| {
                let (ep, em) = (reduce4(sums[2 * h]), reduce4(sums[2 * h + 1]));
                reduce(_mm512_add_epi64(_mm512_mul_epu32(ep, mp), _mm512_mul_epu32(em, mm)))
            };
            let (e, o) = (lanes(&even, mp, mm), lanes(&odd, mp_odd, mm_odd));
            let out = _mm512_or_si512(e, _mm512_slli_epi64::<32>(o));
            // SAFETY: see above; `eval` has the same `[half][slot]` shape as `upd`, and its
            // chunk was read (as the top rows) before this write.
            unsafe {
                _mm512_storeu_si512(upd.as_mut_ptr().add(h * n + at).cast(), out);
                let ev = eval_ptr.add(h * n + at);
                let sum = _mm512_add_epi32(_mm512_loadu_si512(ev.cast()), out);
                _mm512_storeu_si512(ev.cast(), _mm512_min_epu32(sum, _mm512_sub_epi32(sum, qv32)));
            }
        }
    }
}

/// `NTT(X^k) - 1` and `NTT(X^-k) - 1` (evaluation form, `k` in `[0, 2N)`): slot `j` is
/// `psi^(+-k e_j) - 1`, read from `psi_pow` (`psi^e`, `e` in `[0, 2N)`), so the same
/// words as `Ring::monomial_minus_one`.
#[inline(always)]
fn monomials_body(psi_pow: &[u32], slot_exp: &[u32], k: usize, plus: &mut [u32], minus: &mut [u32]) {
    let mask = psi_pow.len() as u32 - 1;
    let k = k as u32;
    for ((p, m), &e) in plus.iter_mut().zip(minus.iter_mut()).zip(slot_exp) {
        let at = k.wrapping_mul(e) & mask;
        // Powers of psi are units, never 0, so `- 1` stays in `[0, Q - 1)`.
        *p = psi_pow[at as usize] - 1;
        *m = psi_pow[(at.wrapping_neg() & mask) as usize] - 1;
    }
}

/// [`monomials_body`] by multiplication instead of table lookups (gathers are slow):
/// with the ring's slot order `e_j = 2 bitrev(j) + 1`, slot `j + 2^t` (for `j < 2^t`)
/// is slot `j` times `psi^(k 2^(log N - t))`, so after 16 looked-up slots each doubling
/// is one vector multiply by a constant (exact, so the same words).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn monomials_avx512(q: u32, psi_pow: &[u32], slot_exp: &[u32], k: usize, plus: &mut [u32], minus: &mut [u32]) {
    use crate::ntt::avx512::k32::{csub, mul_shoup};
    use std::arch::x86_64::*;
    const L: usize = 16;
    let n = plus.len();
    let two_n = psi_pow.len();
    let ordered = crate::tfhe::ring::ntt_slot_order(slot_exp, n, 0, L);
    if n < 2 * L || two_n != 2 * n || minus.len() != n || slot_exp.len() != n || !ordered {
        return monomials_body(psi_pow, slot_exp, k, plus, minus);
    }
    let (qv, one) = (_mm512_set1_epi32(q as i32), _mm512_set1_epi32(1));
    let log_n = n.trailing_zeros();
    let k = k % two_n;
    for (out, k) in [(plus, k), (minus, (two_n - k) % two_n)] {
        for (o, &e) in out[..L].iter_mut().zip(slot_exp) {
            *o = psi_pow[(k * e as usize) & (two_n - 1)];
        }
        let mut len = L;
        while len < n {
            let c = psi_pow[(k << (log_n - len.trailing_zeros())) & (two_n - 1)];
            let cs = ((u64::from(c) << 32) / u64::from(q)) as u32;
            let (cv, csv) = (_mm512_set1_epi32(c as i32), _mm512_set1_epi32(cs as i32));
            let (src, dst) = out.split_at_mut(len);
            for at in (0..len).step_by(L) {
                // SAFETY: `at + 16 <= len`, within `src` and `dst` (`dst.len() >= len`:
                // `2 len <= n`); unaligned loads and stores.
                unsafe {
                    let x = _mm512_loadu_si512(src.as_ptr().add(at).cast());
                    let y = csub(mul_shoup(x, cv, csv, csv, qv), qv);
                    _mm512_storeu_si512(dst.as_mut_ptr().add(at).cast(), y);
                }
            }
            len *= 2;
        }
        // Powers of psi are units, never 0, so `- 1` stays in `[0, Q - 1)`.
        for at in (0..n).step_by(L) {
            // SAFETY: `at + 16 <= n = out.len()` (`n` is a multiple of 16 here).
            unsafe {
                let x = _mm512_loadu_si512(out.as_ptr().add(at).cast());
                _mm512_storeu_si512(out.as_mut_ptr().add(at).cast(), _mm512_sub_epi32(x, one));
            }
        }
    }
}

/// See [`monomials_body`]; dispatches on `isa`. `q` is the ring's modulus (`< 2^30`).
pub fn monomials_minus_one(
    isa: Isa,
    q: u32,
    psi_pow: &[u32],
    slot_exp: &[u32],
    k: usize,
    plus: &mut [u32],
    minus: &mut [u32],
) {
    assert!(psi_pow.len().is_power_of_two(), "psi_pow holds 2N powers");
    match isa {
        // Table lookups, which do not vectorize without gathers.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => monomials_body(psi_pow, slot_exp, k, plus, minus),
        Isa::Portable => monomials_body(psi_pow, slot_exp, k, plus, minus),
        // SAFETY: as in `ginx_step`.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { monomials_avx512(q, psi_pow, slot_exp, k, plus, minus) },
    }
}

/// Lines of the key words ahead each 16-slot chunk of [`ginx_step`] prefetches: with the
/// step's NTT iterations (one line each) about a pair's size, so its read is
/// spread over the whole step (`PN10QP27`: 1536 + 512 = 2048 lines), and what is left
/// goes out in one burst ([`Ahead::rest`]).
pub const NEXT_LINES_PER_CHUNK: usize = 8;

/// Most rows (`2L`) the AVX-512 GINX kernels take.
pub(crate) const MAX_ROWS: usize = 16;

/// See [`ginx_step_body`]; dispatches on `isa`. `mono` is `[NTT(X^a) - 1, NTT(X^-a) - 1]`
/// (as [`monomials_minus_one`] writes them), `next` the prefetch of the key words ahead.
pub fn ginx_step(
    isa: Isa,
    br: SmallBarrett,
    rows: Rows<u32>,
    pair: &[u32],
    mono: [&[u32]; 2],
    upd: &mut [u32],
    next: &mut Ahead,
) {
    // Both kernels' sums, `rows Q^2` and `2 (4Q) Q`, must stay inside `reduce`'s range:
    // true for every set on this path (`k <= 28`, 8 rows).
    let m = mono[0].len();
    let (parts, levels) = rows.shape(m);
    let bound = (parts * levels).max(8) as u128 * u128::from(br.q) * u128::from(br.q);
    assert!(bound < 1u128 << (br.shift + 32), "ginx_step: Q too large for the 32-bit kernel");
    assert!(
        m.is_multiple_of(CHUNK) && rows.slot0.is_multiple_of(CHUNK) && pair.len() == m * parts * levels * 4,
        "ginx_step: whole chunks of the pair"
    );
    match isa {
        Isa::Portable => ginx_step_body(br, rows, pair, mono, upd, next),
        // SAFETY: `Isa::detect` returned Avx2 only after checking the CPU supports AVX2.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { ginx_step_avx2(br, rows, pair, mono, upd, next) },
        // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { ginx_step_avx512(br, rows, pair, mono, upd, next) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::small::add_mod;
    use crate::tfhe::decompose::decompose;

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn small_barrett_is_exact(x in 0u64..(1u64 << 58), y in 0u64..(1u64 << 56)) {
            let b = SmallBarrett::new(134_215_681);
            prop_assert_eq!(b.reduce(x), x % 134_215_681);
            let b = SmallBarrett::new(33_550_337);
            prop_assert_eq!(b.reduce(y), y % 33_550_337);
        }
    }

    /// Every compiled copy of the kernels gives the portable copy's words, and the
    /// 32-bit decomposition gives `Ring::decompose`'s.
    #[test]
    fn kernel_copies_agree() {
        use rand_chacha::rand_core::{RngCore, SeedableRng};
        let isas = Isa::available();
        for set in [fhe_api::ParamSet::PN10QP27, fhe_api::ParamSet::PN10QP25Q] {
            let ring = crate::tfhe::ring::Ring::new(set, "reference").unwrap();
            let (n, q) = (ring.n(), ring.modulus.q);
            let rows = ring.params.rgsw_rows();
            let br = SmallBarrett::new(q);
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(q);
            let mut random = |len: usize| -> Vec<u32> { (0..len).map(|_| (rng.next_u64() % q) as u32).collect() };
            let (mut digits, mut kp, mut km, mut mp, mut mm) =
                (random(rows * n), random(2 * rows * n), random(2 * rows * n), random(n), random(n));
            // The largest operands in the first 32 slots of every row: the kernels' sums
            // reach their bounds there (the AVX-512 copy reduces them lazily).
            for v in [&mut digits, &mut kp, &mut km] {
                v.chunks_exact_mut(n).for_each(|row| row[..32].fill((q - 1) as u32));
            }
            for v in [&mut mp, &mut mm] {
                v[..32].fill((q - 2) as u32);
            }
            let mut edge = random(n);
            edge[..8].copy_from_slice(&[
                0,
                1,
                2,
                (q / 2) as u32,
                (q / 2 + 1) as u32,
                (q - 2) as u32,
                (q - 1) as u32,
                63,
            ]);
            let mut pair = vec![0u32; 4 * rows * n];
            interleave_pair(&kp, &km, n, CHUNK, &mut pair);
            // The definition, from the un-interleaved keys.
            let mut want = vec![0u32; 2 * n];
            for h in 0..2 {
                for j in 0..n {
                    let dot = |k: &[u32]| {
                        (0..rows)
                            .map(|r| u64::from(digits[r * n + j]) * u64::from(k[(2 * r + h) * n + j]) % q)
                            .sum::<u64>()
                            % q
                    };
                    want[h * n + j] = ((dot(&kp) * u64::from(mp[j]) + dot(&km) * u64::from(mm[j])) % q) as u32;
                }
            }
            let mut wide = vec![vec![0u64; n]; rows / 2];
            ring.decompose(&edge.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(), &mut wide);
            let want_digits: Vec<u32> = wide.concat().iter().map(|&x| x as u32).collect();
            // The kernel's operands: the top level's rows (`eval`, updated in place) apart
            // from the lower digits.
            let levels = rows / 2;
            let (mut lower, mut eval) = (Vec::new(), Vec::new());
            for (r, row) in digits.chunks_exact(n).enumerate() {
                if r % levels == levels - 1 { &mut eval } else { &mut lower }.extend_from_slice(row);
            }
            let want_eval: Vec<u32> =
                eval.iter().zip(&want).map(|(&e, &u)| ((u64::from(e) + u64::from(u)) % q) as u32).collect();
            for &isa in &isas {
                let (mut got, mut got_eval) = (vec![0u32; 2 * n], eval.clone());
                ginx_step(
                    isa,
                    br,
                    Rows::whole(n, &lower, &mut got_eval),
                    &pair,
                    [&mp, &mm],
                    &mut got,
                    &mut Ahead::none(),
                );
                assert!(got == want, "{set} {isa:?} ginx_step");
                assert!(got_eval == want_eval, "{set} {isa:?} ginx_step eval");
                // The same words from calls on two slot ranges, as the two threads of
                // `bootstrap::blind_rotate_duo` make them (halves), and uneven ones.
                for split in [n / 2, 3 * n / 8] {
                    for slots in [0..split, split..n] {
                        let m = slots.len();
                        let mut ev: Vec<u32> = eval.chunks_exact(n).flat_map(|e| e[slots.clone()].to_vec()).collect();
                        let mut up = vec![0u32; 2 * m];
                        let keys = &pair[slots.start * pair.len() / n..slots.end * pair.len() / n];
                        let rows = Rows { lower: &lower, n, slot0: slots.start, eval: &mut ev };
                        let mono = [&mp[slots.clone()], &mm[slots.clone()]];
                        ginx_step(isa, br, rows, keys, mono, &mut up, &mut Ahead::none());
                        for h in 0..2 {
                            let at = h * n + slots.start..h * n + slots.end;
                            assert!(up[h * m..(h + 1) * m] == want[at.clone()], "{set} {isa:?} ginx_step on {slots:?}");
                            assert!(ev[h * m..(h + 1) * m] == want_eval[at], "{set} {isa:?} eval on {slots:?}");
                        }
                    }
                }
                let log_bg = ring.params.bsk_base_log.0;
                let mut got = vec![0u32; levels * n];
                decompose(isa, q as u32, log_bg, levels, &edge, &mut got);
                assert!(got == want_digits, "{set} {isa:?} decompose");
                let mut got = vec![0u32; (levels - 1) * n];
                decompose(isa, q as u32, log_bg, levels, &edge, &mut got);
                assert!(got[..] == want_digits[..(levels - 1) * n], "{set} {isa:?} decompose without the top digit");
                // Each edge word plus itself (`0 + 0`, `(q - 1) + (q - 1)`, sums on either
                // side of `q`) and random words plus random words.
                let (mut x, y) = (edge.clone(), edge.clone());
                let want_sum: Vec<u32> =
                    x.iter().zip(&y).map(|(&a, &b)| ((u64::from(a) + u64::from(b)) % q) as u32).collect();
                add_mod(isa, q as u32, &mut x, &y);
                assert!(x == want_sum, "{set} {isa:?} add_mod");
            }
        }
    }

    #[test]
    fn small_barrett_edges() {
        for q in [134_215_681u64, 33_550_337] {
            let b = SmallBarrett::new(q);
            let k = 64 - q.leading_zeros();
            for x in [0, 1, q - 1, q, 4 * q - 1, (1u64 << (k + 31)) - 1, q * q, 16 * (q - 1) * (q - 1)] {
                if x < (1u64 << (k + 31)) {
                    assert_eq!(b.reduce(x), x % q, "q={q} x={x}");
                }
            }
        }
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use crate::mem::Aligned;

    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_ginx_step`:
    /// one key pair over and over (in cache) against 556 distinct pairs (from memory).
    #[test]
    #[ignore = "timing, not a check"]
    fn time_ginx_step() {
        let (n, rows, pairs) = (1024usize, 8usize, 556usize);
        let q = 134_215_681u64;
        let br = SmallBarrett::new(q);
        let pair_len = 4 * rows * n;
        let mut key = Aligned::<u32>::zeroed_huge(pairs * pair_len);
        key.iter_mut().enumerate().for_each(|(i, k)| *k = (i as u64 * 2_654_435_761 % q) as u32);
        let lower: Vec<u32> = (0..(rows - 2) * n).map(|i| (i as u64 * 40_503 % q) as u32).collect();
        let mut eval: Vec<u32> = (0..2 * n).map(|i| (i as u64 * 90_001 % q) as u32).collect();
        let mono: Vec<u32> = (0..n).map(|i| (i as u64 * 977 % q) as u32).collect();
        let mut upd = vec![0u32; 2 * n];
        let isa = Isa::detect();
        let smaps = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
        println!("{}", smaps.lines().filter(|l| l.starts_with("AnonHuge")).collect::<String>());
        for (what, stride) in [("one pair", 0usize), ("556 pairs", 1)] {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                for i in 0..pairs {
                    let pair = &key[i * stride * pair_len..][..pair_len];
                    ginx_step(
                        isa,
                        br,
                        Rows::whole(n, &lower, &mut eval),
                        pair,
                        [&mono, &mono],
                        &mut upd,
                        &mut Ahead::none(),
                    );
                }
                best = best.min(t.elapsed().as_secs_f64() * 1e6 / pairs as f64);
            }
            println!("{isa:?} {what}: {best:.2} us per step");
        }
    }
}
