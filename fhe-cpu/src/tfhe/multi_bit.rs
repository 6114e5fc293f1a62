//! Multi-bit blind rotation (the sets with [`BlindRotation::MultiBit`], after TFHE-rs's
//! multi-bit PBS): one step per group of `k` LWE coefficients instead of one per
//! coefficient, so `n / k` steps of two forward and two inverse NTTs (with the top digit
//! folded, as in [`crate::tfhe::bootstrap`]) instead of `n`. With `k = 1` (`M2C2`) it is
//! the binary secret's CMux, one key a coefficient where GINX has two.
//!
//! For group `g` with mod-switched mask `a_0 .. a_(k-1)` and binary secret bits
//! `s_0 .. s_(k-1)`, the key holds `K_t = RGSW([s == t])` for every non-zero bit pattern
//! `t`. Exactly one indicator is 1 (none when `s = 0`), so
//! `ACC <- ACC + sum_t (X^<a,t> - 1) (ACC [x] K_t)` multiplies the accumulator's phase by
//! `X^<a,s>`, `<a,t> = sum_(j in t) a_j mod 2N`. All `2^k - 1` external products share
//! one gadget decomposition of `ACC`; each is multiplied by its monomial in evaluation
//! form and summed before the inverse NTTs. Every operation is exact modulo `Q`, so any
//! order of the sums gives the same words (the GPU kernel's byte contract,
//! `fhe-gpu/kernels/tfhe/multi_bit.cu`).
//!
//! The 54-bit ring only (the multi-bit sets use it): 64-bit words, the key words
//! [`split`] into 27-bit limbs as [`crate::tfhe::ginx64`] holds them.

use rayon::prelude::*;

use fhe_api::tfhe::params::BlindRotation;
use fhe_api::{Error, EvaluationKey, ExtractedLwe, Lut, LweCiphertext, Result};

use crate::mem::{Ahead, Aligned, Isa};
use crate::tfhe::bootstrap::{
    fold_top_digit, initial_acc_b, ms_to_2n, sample_extract_at, BootstrapThreads, CpuPrepared, DuoSlot,
};
use crate::tfhe::ginx64::{join, reduce_limbs_lane, split, Wide, CHUNK, LIMB, MASK};
use crate::tfhe::ring::Ring;

/// Most indicator keys a group may have (`k <= 3`): with at most 7 products of two
/// residues summed per limb, every limb sum stays within [`reduce_limbs_lane`]'s bounds
/// (`lo, hi < 2^58`, `mid < 2^59`) and every `u128` sum below `16 Q^2`.
const MAX_TERMS: usize = 7;

/// Most RGSW rows (`2L`) the kernel takes (the same bound as the GINX kernels).
const MAX_ROWS: usize = 16;

/// `(k, 2^k - 1)` of a multi-bit set; an error for any other.
fn shape(ring: &Ring) -> Result<(usize, usize)> {
    match ring.params.blind_rotation {
        BlindRotation::MultiBit(k) if (1..=3).contains(&k.0) => Ok((k.0, (1 << k.0) - 1)),
        other => Err(Error::InvalidInput(format!(
            "{}: multi-bit blind rotation needs a grouping factor of 1 to 3, the set has {other:?}",
            ring.set
        ))),
    }
}

/// The CPU's multi-bit key: every group's `2^k - 1` RGSW keys, folded
/// ([`crate::tfhe::bootstrap`]'s top-digit fold) and laid out
/// `[group][chunk][term][row][half][CHUNK slots]` as [`split`] words, so a step reads
/// its group front to back once.
pub fn prepare_keys(ring: &Ring, ek: &EvaluationKey) -> Result<Aligned<u64>> {
    let (_, terms) = shape(ring)?;
    if ring.wide.is_none() || ring.params.rgsw_rows() > MAX_ROWS {
        return Err(Error::InvalidInput(format!(
            "{}: multi-bit blind rotation runs on the 54-bit ring only",
            ring.set
        )));
    }
    let (n, rows) = (ring.n(), ring.params.rgsw_rows());
    let per_key = 2 * rows * n;
    let mut bsk = Aligned::zeroed_huge(ring.params.bsk_keys() * per_key);
    bsk.par_chunks_mut(terms * per_key).enumerate().for_each(|(g, out)| {
        let mut keys = vec![0u64; terms * per_key];
        for (t, key) in keys.chunks_exact_mut(per_key).enumerate() {
            ek.rgsw_key_rows(g * terms + t, key, |x| x);
            fold_top_digit(ring, key);
        }
        interleave_group(&keys, terms, rows, n, out);
    });
    Ok(bsk)
}

/// One group's keys (`[term][row][half][slot]`) in the kernel's layout
/// (`[chunk][term][row][half][CHUNK]`, [`split`] words).
fn interleave_group(keys: &[u64], terms: usize, rows: usize, n: usize, out: &mut [u64]) {
    let mut o = out.chunks_exact_mut(CHUNK);
    for c in 0..n / CHUNK {
        for t in 0..terms {
            for rh in 0..2 * rows {
                let at = (t * 2 * rows + rh) * n + c * CHUNK;
                let dst = o.next().expect("out holds the group");
                dst.iter_mut().zip(&keys[at..at + CHUNK]).for_each(|(d, &k)| *d = split(k));
            }
        }
    }
}

/// The accumulator and scratch of one ciphertext's rotation.
struct State {
    /// `[part][slot]`, coefficient form.
    acc: Aligned<u64>,
    /// `NTT(acc)`, `[part][slot]`: the top digit's stand-in (folded keys).
    eval: Aligned<u64>,
    /// NTTs of the exact decomposition's lower digits, `[part][level < E - 1][slot]`.
    lower: Aligned<u64>,
    /// Where the lowest digit is dropped: `NTT(acc - d_0) = eval - NTT(d_0)`,
    /// `[part][slot]`, the top row in place of `eval` (empty otherwise).
    top: Aligned<u64>,
    /// `NTT(X^<a,t>) - 1` for `t = 1 .. 2^k - 1`, `[term][slot]`.
    mono: Aligned<u64>,
    upd: Aligned<u64>,
}

/// Multi-bit blind rotations of a batch, each accumulator read at every offset of `at`
/// (input-major): a lone ciphertext on two threads ([`crate::tfhe::multi_bit_duo`])
/// where `threads` is 2 and [`DuoSlot::take`] finds a core free for the second,
/// otherwise one ciphertext a task on all cores. (Rotating several in lockstep, each
/// block of key read once for all, measured no faster: 5.2 ms a PBS on 2 threads with
/// groups of 1, 2, 4 or 8; the step is bound by arithmetic, not the key's reads.)
pub fn blind_rotate_batch(
    ring: &Ring,
    key: &CpuPrepared,
    inputs: &[LweCiphertext],
    lut: &Lut,
    at: &[usize],
    threads: BootstrapThreads,
) -> Result<Vec<ExtractedLwe>> {
    let (k, terms) = shape(ring)?;
    let wide = ring.wide.ok_or_else(|| Error::InvalidInput(format!("{}: not the 54-bit ring", ring.set)))?;
    let n = ring.n();
    if let Some(j) = at.iter().find(|&&j| j >= n) {
        return Err(Error::InvalidInput(format!("sample extraction at {j}: the ring has N = {n} coefficients")));
    }
    let extract = |acc: &[u64]| -> Vec<ExtractedLwe> {
        at.iter().map(|&j| sample_extract_at(ring, key.tag, &acc[..n], &acc[n..], j)).collect()
    };
    if let [ct] = inputs {
        if threads == BootstrapThreads::Two {
            if let Some(_slot) = DuoSlot::take() {
                return Ok(extract(&crate::tfhe::multi_bit_duo::blind_rotate(ring, wide, key, ct, lut, k, terms)));
            }
        }
    }
    Ok(inputs.par_iter().flat_map_iter(|ct| extract(&blind_rotate(ring, wide, key, ct, lut, k, terms))).collect())
}

/// One ciphertext's rotated accumulator, `[part][slot]` in coefficient form.
pub(crate) fn blind_rotate(
    ring: &Ring,
    wide: Wide,
    key: &CpuPrepared,
    ct: &LweCiphertext,
    lut: &Lut,
    k: usize,
    terms: usize,
) -> Aligned<u64> {
    let p = ring.params;
    let (n, rows, exact, dropped) = (ring.n(), p.rgsw_rows(), p.bsk_exact_levels(), p.bsk_dropped_levels());
    let (log2n, logq) = ((2 * n).trailing_zeros(), p.lwe_modulus_log.0);
    let mut s = State {
        acc: Aligned::zeroed(2 * n),
        eval: Aligned::zeroed(2 * n),
        lower: Aligned::zeroed(2 * (exact - 1) * n),
        top: Aligned::zeroed(if dropped > 0 { 2 * n } else { 0 }),
        mono: Aligned::zeroed(terms * n),
        upd: Aligned::zeroed(2 * n),
    };
    initial_acc_b(ring, ct, lut, &mut s.acc[n..]);
    s.eval.copy_from_slice(&s.acc);
    ring.ntt.forward(&mut s.eval[n..]); // NTT(0) = 0 for the `a` part
    let group_len = terms * 2 * rows * n;
    let groups = &key.bsk[..p.n() / k * group_len];
    for (g, group_key) in groups.chunks_exact(group_len).enumerate() {
        let mut a = [0usize; 3];
        for (j, a) in a.iter_mut().enumerate().take(k) {
            *a = ms_to_2n(ct.a()[g * k + j], logq, log2n);
        }
        if a.iter().all(|&x| x == 0) {
            continue; // every X^<a,t> - 1 is 0: the step is the identity.
        }
        // This group's key arrives while the step's NTTs and kernel run, and the first
        // eighth of the next group's during its inverse NTTs: the kernel then finds its
        // words in cache instead of waiting on memory (a group is 64 KiB to 448 KiB).
        // Prefetching the whole next group instead, or half of it, measured no faster.
        let next = groups.get((g + 1) * group_len..(g + 1) * group_len + group_len / 8).unwrap_or(&[]);
        let mut ahead = Ahead::two(group_key, next);
        digits_and_monomials(ring, &a[..k], &mut ahead, &mut s);
        let top = if dropped > 0 { &s.top } else { &s.eval };
        let rows = Rows { lower: &s.lower, eval: top, n, levels: p.bsk_levels.0, dropped, slots: 0..n };
        kernel(ring.isa, wide, &rows, group_key, &s.mono, &mut s.upd, &mut ahead);
        finish_step(ring, &mut ahead, &mut s);
    }
    s.acc
}

/// A step's first half: the lower digits' NTTs, the top rows (with a dropped digit) and
/// the monomials.
fn digits_and_monomials(ring: &Ring, a: &[usize], ahead: &mut Ahead, s: &mut State) {
    let n = ring.n();
    let p = ring.params;
    let (q, exact, dropped) = (ring.modulus.q, p.bsk_exact_levels(), p.bsk_dropped_levels());
    let lower_len = (exact - 1) * n;
    for (acc, lower) in s.acc.chunks_exact(n).zip(s.lower.chunks_exact_mut(lower_len)) {
        crate::tfhe::decompose::decompose_lower(ring.isa, q, p.bsk_base_log.0, exact, acc, lower);
        for d in lower.chunks_exact_mut(n) {
            ring.ntt.forward_streaming(d, ahead);
        }
    }
    if dropped > 0 {
        // The kept digits recompose `acc - d_0` (`d_0` the signed remainder mod `Bg`),
        // so the folded top row multiplies its NTT.
        for (part, top) in s.top.chunks_exact_mut(n).enumerate() {
            let (e, d0) = (&s.eval[part * n..][..n], &s.lower[part * lower_len..][..n]);
            crate::tfhe::ginx64::sub_mod_into(ring.isa, q, e, d0, top);
        }
    }
    for (t, mono) in s.mono.chunks_exact_mut(n).enumerate() {
        ring.monomial_minus_one(term_exponent(a, t, n), mono);
    }
}

/// `<a, t> mod 2N` for the bit pattern `t + 1` of term `t`: the exponent of its monomial.
pub(crate) fn term_exponent(a: &[usize], t: usize, n: usize) -> usize {
    let bits = t + 1;
    a.iter().enumerate().filter(|(j, _)| bits >> j & 1 == 1).map(|(_, &x)| x).sum::<usize>() % (2 * n)
}

/// A step's second half, after the kernel: `eval += upd` and `acc += INTT(upd)`.
fn finish_step(ring: &Ring, ahead: &mut Ahead, s: &mut State) {
    let (n, q) = (ring.n(), ring.modulus.q);
    crate::tfhe::ginx64::add_mod(ring.isa, q, &mut s.eval, &s.upd);
    for (u, acc) in s.upd.chunks_exact_mut(n).zip(s.acc.chunks_exact_mut(n)) {
        ring.ntt.inverse_streaming(u, ahead);
        crate::tfhe::ginx64::add_mod(ring.isa, q, acc, u);
    }
}

/// The digit rows of a step: row `r = p L + l` is `lower`'s `(p, D + l)` for `l < L - 1`
/// (`lower` holds the exact decomposition's `L + D - 1` lower digits a part) and
/// `eval`'s part `p` (`NTT(ACC_p)`, or `NTT(ACC_p - d_0)` with a dropped digit) for the
/// top level.
pub(crate) struct Rows<'a> {
    pub lower: &'a [u64],
    /// The top rows, `[part][n]`.
    pub eval: &'a [u64],
    /// Slots of a row.
    pub n: usize,
    pub levels: usize,
    /// `D`, the dropped digits.
    pub dropped: usize,
    /// The slots the kernel computes, `slots.start .. slots.end` (whole chunks): one
    /// thread's half ([`crate::tfhe::multi_bit_duo`]) or all.
    pub slots: std::ops::Range<usize>,
}

impl<'a> Rows<'a> {
    /// Every slot.
    #[cfg(test)]
    pub fn whole(lower: &'a [u64], eval: &'a [u64], n: usize, levels: usize, dropped: usize) -> Rows<'a> {
        Rows { lower, eval, n, levels, dropped, slots: 0..n }
    }

    #[inline(always)]
    fn row(&self, r: usize) -> &[u64] {
        let (p, l) = (r / self.levels, r % self.levels);
        let n = self.n;
        if l == self.levels - 1 {
            &self.eval[p * n..(p + 1) * n]
        } else {
            let at = (p * (self.levels + self.dropped - 1) + self.dropped + l) * n;
            &self.lower[at..at + n]
        }
    }

    /// The chunks of [`Rows::slots`].
    fn chunks(&self) -> std::ops::Range<usize> {
        self.slots.start / CHUNK..self.slots.end / CHUNK
    }
}

/// `upd[h] = sum_t (sum_r d_r K_t[r][h]) mono_t` at `rows.slots`, in `[0, Q)` (every
/// operand whole, `[..][n]`; other slots of `upd` untouched): the limb kernel
/// where the modulus is `2^54 - c` with `c < 2^17` (vectorized for AVX-512 or AVX2 where
/// the CPU has them), the `u128` kernel otherwise. The same words either way. `next`
/// prefetches: what it has left is spread over the chunks.
pub(crate) fn kernel(
    isa: Isa,
    w: Wide,
    rows: &Rows,
    group_key: &[u64],
    mono: &[u64],
    upd: &mut [u64],
    next: &mut Ahead,
) {
    let (n, r) = (rows.n, 2 * rows.levels);
    let terms = mono.len() / n;
    assert!(
        terms <= MAX_TERMS
            && r <= MAX_ROWS
            && mono.len() == terms * n
            && n.is_multiple_of(CHUNK)
            && rows.slots.start.is_multiple_of(CHUNK)
            && rows.slots.end.is_multiple_of(CHUNK)
            && rows.slots.start <= rows.slots.end
            && rows.slots.end <= n
            && group_key.len() == terms * 2 * r * n
            && upd.len() == 2 * n,
        "multi-bit kernel: operand sizes"
    );
    match (isa, w.c) {
        // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx512, Some(_)) => unsafe { kernel_avx512(w, rows, group_key, mono, upd, next) },
        // SAFETY: `Isa::detect` returned Avx2 only after checking the CPU supports AVX2.
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx2, Some(_)) => unsafe { kernel_avx2(w, rows, group_key, mono, upd, next) },
        (_, Some(_)) => kernel_limbs::<4>(w, rows, group_key, mono, upd, next),
        (_, None) => kernel_wide(w, rows, group_key, mono, upd, next),
    }
}

/// [`kernel_limbs`] in AVX-512 intrinsics (the compiler's vectorization of the plain
/// copy leaves most of the speed behind): eight slots a chunk, every row's digit limbs
/// loaded once a chunk, each product four `vpmuludq` into `lo, mid, hi` sums with
/// `ginx64`'s bounds, reduced by its `reduce_limbs`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn kernel_avx512(w: Wide, rows: &Rows, group_key: &[u64], mono: &[u64], upd: &mut [u64], next: &mut Ahead) {
    use crate::tfhe::ginx64::reduce_limbs;
    use std::arch::x86_64::*;
    let (n, nrows) = (rows.n, 2 * rows.levels);
    let terms = mono.len() / n;
    let c = w.c.unwrap_or(u64::MAX);
    let chunk_len = terms * 2 * nrows * CHUNK;
    assert!(
        c < 1 << 17
            && nrows <= MAX_ROWS
            && terms <= MAX_TERMS
            && n.is_multiple_of(CHUNK)
            && group_key.len() == n / CHUNK * chunk_len
            && mono.len() == terms * n
            && upd.len() == 2 * n,
        "multi-bit AVX-512 kernel: operand sizes"
    );
    let mut row_at = [std::ptr::null::<u64>(); MAX_ROWS];
    for (r, at) in row_at.iter_mut().enumerate().take(nrows) {
        *at = rows.row(r).as_ptr(); // each row holds n words
    }
    let (mask, cv, qv) = (_mm512_set1_epi64(MASK as i64), _mm512_set1_epi64(c as i64), _mm512_set1_epi64(w.q as i64));
    let zero = _mm512_setzero_si512();
    let chunks = rows.chunks();
    assert!(chunks.end <= n / CHUNK, "multi-bit AVX-512 kernel: slots");
    let next_lines = next.lines_left().div_ceil(chunks.len().max(1));
    // SAFETY (every block below): the asserts bound each offset: `at + 8 <= n` in each
    // row, in each term's monomials and in each half of `upd`; the chunk's
    // `chunk_len` key words lie in `group_key`. Unaligned loads and stores only.
    for ch in chunks {
        let at = ch * CHUNK;
        // SAFETY: see above.
        let kc = unsafe { group_key.as_ptr().add(ch * chunk_len) };
        next.touch_lines(next_lines);
        let (mut d0, mut d1) = ([zero; MAX_ROWS], [zero; MAX_ROWS]);
        for r in 0..nrows {
            // SAFETY: see above.
            let d = unsafe { _mm512_loadu_si512(row_at[r].add(at).cast()) };
            d0[r] = _mm512_and_si512(d, mask);
            d1[r] = _mm512_srli_epi64::<27>(d);
        }
        let (mut plo, mut pmid, mut phi) = ([zero; 2], [zero; 2], [zero; 2]);
        for t in 0..terms {
            let (mut lo, mut mid, mut hi) = ([zero; 2], [zero; 2], [zero; 2]);
            for r in 0..nrows {
                for h in 0..2 {
                    // SAFETY: see above.
                    let k = unsafe { _mm512_loadu_si512(kc.add(((t * nrows + r) * 2 + h) * CHUNK).cast()) };
                    // `vpmuludq` reads the low 32 bits: `k0` from `k`, `k1` after the shift.
                    let k1 = _mm512_srli_epi64::<32>(k);
                    lo[h] = _mm512_add_epi64(lo[h], _mm512_mul_epu32(d0[r], k));
                    let cross = _mm512_add_epi64(_mm512_mul_epu32(d0[r], k1), _mm512_mul_epu32(d1[r], k));
                    mid[h] = _mm512_add_epi64(mid[h], cross);
                    hi[h] = _mm512_add_epi64(hi[h], _mm512_mul_epu32(d1[r], k1));
                }
            }
            // SAFETY: see above.
            let m = unsafe { _mm512_loadu_si512(mono.as_ptr().add(t * n + at).cast()) };
            let (m0, m1) = (_mm512_and_si512(m, mask), _mm512_srli_epi64::<27>(m));
            for h in 0..2 {
                let e = reduce_limbs(lo[h], mid[h], hi[h], mask, cv, qv);
                let (e0, e1) = (_mm512_and_si512(e, mask), _mm512_srli_epi64::<27>(e));
                plo[h] = _mm512_add_epi64(plo[h], _mm512_mul_epu32(e0, m0));
                let cross = _mm512_add_epi64(_mm512_mul_epu32(e0, m1), _mm512_mul_epu32(e1, m0));
                pmid[h] = _mm512_add_epi64(pmid[h], cross);
                phi[h] = _mm512_add_epi64(phi[h], _mm512_mul_epu32(e1, m1));
            }
        }
        for h in 0..2 {
            let out = reduce_limbs(plo[h], pmid[h], phi[h], mask, cv, qv);
            // SAFETY: see above.
            unsafe { _mm512_storeu_si512(upd.as_mut_ptr().add(h * n + at).cast(), out) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn kernel_avx2(w: Wide, rows: &Rows, group_key: &[u64], mono: &[u64], upd: &mut [u64], next: &mut Ahead) {
    kernel_limbs::<4>(w, rows, group_key, mono, upd, next)
}

/// The kernel on `W` lanes of plain integer limb arithmetic (as `ginx64`'s
/// `ginx_step_limbs`): each product of two residues `x0 + 2^27 x1` and `y0 + 2^27 y1`
/// as three sums `x0 y0`, `x0 y1 + x1 y0`, `x1 y1` of products of values below `2^32`,
/// which the compiler turns into `vpmuludq`; at most 16 rows or 7 terms per sum keep
/// the sums within [`reduce_limbs_lane`]'s bounds.
#[inline(always)]
fn kernel_limbs<const W: usize>(
    w: Wide,
    rows: &Rows,
    group_key: &[u64],
    mono: &[u64],
    upd: &mut [u64],
    next: &mut Ahead,
) {
    let (n, nrows) = (rows.n, 2 * rows.levels);
    let terms = mono.len() / n;
    let (q, c) = (w.q, w.c.unwrap_or(u64::MAX));
    assert!(c < 1 << 17 && CHUNK.is_multiple_of(W), "limb kernel: Q = 2^54 - c, c < 2^17");
    let limbs = |v: u64| (v & MASK, (v >> LIMB) & MASK);
    let chunk_len = terms * 2 * nrows * CHUNK;
    let (upd_a, upd_b) = upd.split_at_mut(n);
    let chunks = rows.chunks();
    let next_lines = next.lines_left().div_ceil(chunks.len().max(1));
    for (ch, kc) in group_key.chunks_exact(chunk_len).enumerate().skip(chunks.start).take(chunks.len()) {
        next.touch_lines(next_lines);
        for sub in (0..CHUNK).step_by(W) {
            let at = ch * CHUNK + sub;
            // The sums of `ext_t[h] mono_t` over the terms, per half.
            let (mut plo, mut pmid, mut phi) = ([[0u64; W]; 2], [[0u64; W]; 2], [[0u64; W]; 2]);
            for (t, kt) in kc.chunks_exact(2 * nrows * CHUNK).enumerate() {
                let (mut lo, mut mid, mut hi) = ([[0u64; W]; 2], [[0u64; W]; 2], [[0u64; W]; 2]);
                for (r, kr) in kt.chunks_exact(2 * CHUNK).enumerate() {
                    let d = &rows.row(r)[at..at + W];
                    for h in 0..2 {
                        let k = &kr[h * CHUNK + sub..][..W];
                        for x in 0..W {
                            let (d0, d1) = limbs(d[x]);
                            let (k0, k1) = (k[x] & 0xffff_ffff, k[x] >> 32);
                            lo[h][x] += d0 * k0;
                            mid[h][x] += d0 * k1 + d1 * k0;
                            hi[h][x] += d1 * k1;
                        }
                    }
                }
                let m = &mono[t * n + at..][..W];
                for h in 0..2 {
                    for x in 0..W {
                        let e = reduce_limbs_lane(lo[h][x], mid[h][x], hi[h][x], c, q);
                        let ((e0, e1), (m0, m1)) = (limbs(e), limbs(m[x]));
                        plo[h][x] += e0 * m0;
                        pmid[h][x] += e0 * m1 + e1 * m0;
                        phi[h][x] += e1 * m1;
                    }
                }
            }
            for (h, out) in [&mut upd_a[at..at + W], &mut upd_b[at..at + W]].into_iter().enumerate() {
                for x in 0..W {
                    out[x] = reduce_limbs_lane(plo[h][x], pmid[h][x], phi[h][x], c, q);
                }
            }
        }
    }
}

/// The kernel in `u128` sums, for any modulus the 64-bit path takes: at most 16 rows
/// or 7 terms of products below `Q^2` per sum, so every sum is below `16 Q^2`
/// ([`Wide::reduce_wide`]).
fn kernel_wide(w: Wide, rows: &Rows, group_key: &[u64], mono: &[u64], upd: &mut [u64], next: &mut Ahead) {
    let (n, nrows) = (rows.n, 2 * rows.levels);
    let terms = mono.len() / n;
    let chunk_len = terms * 2 * nrows * CHUNK;
    let chunks = rows.chunks();
    let next_lines = next.lines_left().div_ceil(chunks.len().max(1));
    for (ch, kc) in group_key.chunks_exact(chunk_len).enumerate().skip(chunks.start).take(chunks.len()) {
        next.touch_lines(next_lines);
        for l in 0..CHUNK {
            let at = ch * CHUNK + l;
            let mut out = [0u128; 2];
            for (t, kt) in kc.chunks_exact(2 * nrows * CHUNK).enumerate() {
                let mut ext = [0u128; 2];
                for (r, kr) in kt.chunks_exact(2 * CHUNK).enumerate() {
                    let d = u128::from(rows.row(r)[at]);
                    for (h, e) in ext.iter_mut().enumerate() {
                        *e += d * u128::from(join(kr[h * CHUNK + l]));
                    }
                }
                let m = u128::from(mono[t * n + at]);
                for h in 0..2 {
                    out[h] += u128::from(w.reduce_wide(ext[h])) * m;
                }
            }
            for h in 0..2 {
                upd[h * n + at] = w.reduce_wide(out[h]);
            }
        }
    }
}

#[cfg(test)]
#[path = "multi_bit_tests.rs"]
mod tests;
