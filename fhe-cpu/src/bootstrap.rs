//! Prepared keys, blind rotation (GINX with ternary secrets) and sample extraction.
//!
//! For each LWE coefficient `a_i` (mod-switched to `2N`), with RGSW keys `K+ = RGSW(s_i
//! == 1)` and `K- = RGSW(s_i == -1)`:
//! `ACC <- ACC + (X^a - 1) (ACC [x] K+) + (X^-a - 1) (ACC [x] K-)`, which multiplies the
//! accumulator's phase by `X^(a s_i)`. Both external products share one gadget
//! decomposition of `ACC` (2L forward NTTs); the monomials are applied in evaluation
//! form; two inverse NTTs per coefficient.
//!
//! Rings with `Q < 2^29` (the 25- and 27-bit sets) run a 32-bit path: digits, NTTs,
//! accumulator and key are `u32` words, the key pair of each coefficient is interleaved
//! for one front-to-back read ([`crate::kernels::interleave_pair`]), and a batch runs
//! in groups that share each key pair's read (see [`blind_rotate_batch`]).

use rayon::prelude::*;

use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, Result};

use crate::kernels::Ahead;
use crate::ring::{monomial_mul, Ring};

/// The CPU's form of an evaluation key: full RGSW rows (both halves, evaluation form)
/// and full key-switching samples.
pub struct CpuPrepared {
    /// `[key][row][half][slot]`, half 0 = `a`, half 1 = `b` (empty for small moduli).
    pub(crate) bsk: Vec<u64>,
    /// For moduli below `2^29` (empty otherwise): 32-bit words, `[coefficient][pair]`,
    /// each pair `(K+, K-)` in the [`crate::kernels::interleave_pair`] layout.
    pub(crate) bsk32: Vec<u32>,
    /// `[sample][n + 1]`, `a` then `b`.
    pub(crate) ksk: Vec<u16>,
}

pub fn prepare(ring: &Ring, ek: &EvaluationKey) -> CpuPrepared {
    let ksk = crate::keyswitch::prepare_ksk(ring, ek);
    if ring.small.is_some() {
        // Residues below 2^29: 32-bit words (half the memory to stream per bootstrap).
        CpuPrepared { bsk: Vec::new(), bsk32: interleaved_pairs(ring, ek), ksk }
    } else {
        CpuPrepared { bsk: rgsw_rows(ring, ek), bsk32: Vec::new(), ksk }
    }
}

/// Full RGSW rows `[key][row][half][slot]`, every key on all cores.
fn rgsw_rows(ring: &Ring, ek: &EvaluationKey) -> Vec<u64> {
    let per_key = ring.params.rgsw_rows() * ring.n();
    let mut bsk: Vec<u64> = crate::kernels::zeroed_huge(2 * ring.params.bsk_b_len());
    bsk.par_chunks_mut(2 * per_key).enumerate().for_each(|(key, out)| ek.rgsw_key_rows(key, out, |x| x));
    bsk
}

/// Every coefficient's key pair as 32-bit words, interleaved, on all cores.
fn interleaved_pairs(ring: &Ring, ek: &EvaluationKey) -> Vec<u32> {
    let per_key = 2 * ring.params.rgsw_rows() * ring.n();
    let mut bsk: Vec<u32> = crate::kernels::zeroed_huge(2 * ring.params.bsk_b_len());
    bsk.par_chunks_mut(2 * per_key).enumerate().for_each(|(i, out)| {
        let (mut kp, mut km) = (vec![0u32; per_key], vec![0u32; per_key]);
        ek.rgsw_key_rows(2 * i, &mut kp, |x| x as u32);
        ek.rgsw_key_rows(2 * i + 1, &mut km, |x| x as u32);
        crate::kernels::interleave_pair(&kp, &km, ring.n(), out);
    });
    bsk
}

/// Scratch buffers of one blind rotation.
struct Scratch {
    acc: [Vec<u64>; 2],
    digits: Vec<Vec<u64>>,
    upd: [Vec<u64>; 2],
    ext: [Vec<u64>; 2],
    mono: Vec<u64>,
}

/// Mod switch `q -> 2N` (both powers of two): round half up.
#[inline]
fn ms_to_2n(x: u32, logq: u32, log2n: u32) -> usize {
    let shift = logq - log2n;
    (((x + (1 << (shift - 1))) >> shift) & ((1 << log2n) - 1)) as usize
}

pub fn blind_rotate(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext) -> ExtractedLwe {
    if ring.small.is_some() {
        return blind_rotate_small(ring, key, std::slice::from_ref(ct)).pop().expect("one output");
    }
    let p = ring.params;
    let (big_n, rows, levels) = (p.big_n(), p.rgsw_rows(), p.bsk_levels.0);
    let m = ring.modulus;
    let two_n = 2 * big_n;
    let log2n = two_n.trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let mut s = Scratch {
        acc: [vec![0; big_n], vec![0; big_n]],
        digits: vec![vec![0; big_n]; rows],
        upd: [vec![0; big_n], vec![0; big_n]],
        ext: [vec![0; big_n], vec![0; big_n]],
        mono: vec![0; big_n],
    };
    initial_acc_b(ring, ct, &mut s.acc[1]);
    let key_len = rows * 2 * big_n;
    for (i, &ai) in ct.a().iter().enumerate() {
        let a = ms_to_2n(ai, logq, log2n);
        if a == 0 {
            continue; // X^0 - 1 = 0: the step is the identity.
        }
        let (lo, hi) = s.digits.split_at_mut(levels);
        ring.decompose(&s.acc[0], lo);
        ring.decompose(&s.acc[1], hi);
        for d in s.digits.iter_mut() {
            ring.ntt.forward(d);
        }
        s.upd[0].iter_mut().for_each(|x| *x = 0);
        s.upd[1].iter_mut().for_each(|x| *x = 0);
        for sign in 0..2 {
            let k = 2 * i + sign;
            let rgsw = &key.bsk[k * key_len..(k + 1) * key_len];
            external_product_ntt(ring, &s.digits, rgsw, &mut s.ext);
            ring.monomial_minus_one(if sign == 0 { a } else { two_n - a }, &mut s.mono);
            for half in 0..2 {
                for ((u, &e), &mo) in s.upd[half].iter_mut().zip(&s.ext[half]).zip(&s.mono) {
                    *u = m.add(*u, m.mul(e, mo));
                }
            }
        }
        for half in 0..2 {
            ring.ntt.inverse(&mut s.upd[half]);
            for (x, &u) in s.acc[half].iter_mut().zip(&s.upd[half]) {
                *x = m.add(*x, u);
            }
        }
    }
    sample_extract(ring, &s.acc[0], &s.acc[1])
}

/// `ext[half] = sum_r digits[r] * rgsw[r][half]`, all in evaluation form.
fn external_product_ntt(ring: &Ring, digits: &[Vec<u64>], rgsw: &[u64], ext: &mut [Vec<u64>; 2]) {
    // Only rings without a small-modulus kernel reach here (`ring.small` is `None`,
    // Q >= 2^29): each product is reduced, and 2L <= 16 reduced terms stay below 2^64.
    let big_n = ring.n();
    let m = ring.modulus;
    for (half, out) in ext.iter_mut().enumerate() {
        out.iter_mut().for_each(|x| *x = 0);
        for (r, d) in digits.iter().enumerate() {
            let k = &rgsw[(2 * r + half) * big_n..(2 * r + half + 1) * big_n];
            for ((o, &x), &y) in out.iter_mut().zip(d).zip(k) {
                *o += m.mul(x, y);
            }
        }
        out.iter_mut().for_each(|x| *x = m.reduce(*x));
    }
}

/// The `b` half of the starting accumulator `ACC = (0, X^-b TV)`, with the test vector
/// `TV = round(Q/8)` in every coefficient.
fn initial_acc_b(ring: &Ring, ct: &LweCiphertext, out: &mut [u64]) {
    let p = ring.params;
    let (q, two_n) = (ring.modulus.q, 2 * p.big_n());
    let b = ms_to_2n(ct.b(), p.lwe_modulus_log.0, two_n.trailing_zeros());
    let tv = vec![(q + 4) / 8; p.big_n()];
    monomial_mul(&tv, (two_n - b) % two_n, q, out);
}

/// Coefficient 0 of the accumulator as an LWE ciphertext under the ring secret:
/// `a'_0 = a_0`, `a'_i = -a_(N-i)`, `b' = b_0`.
pub fn sample_extract(ring: &Ring, acc_a: &[u64], acc_b: &[u64]) -> ExtractedLwe {
    let q = ring.modulus.q;
    let big_n = ring.n();
    let mut data = Vec::with_capacity(big_n + 1);
    data.push(acc_a[0]);
    for i in 1..big_n {
        let x = acc_a[big_n - i];
        data.push(if x == 0 { 0 } else { q - x });
    }
    data.push(acc_b[0]);
    ExtractedLwe::from_raw(ring.set, data).expect("extraction yields N + 1 residues")
}

/// The accumulator and scratch of one ciphertext on the 32-bit path.
struct Small {
    acc: Vec<u32>,
    digits: Vec<u32>,
    mono_p: Vec<u32>,
    mono_m: Vec<u32>,
    upd: Vec<u32>,
}

/// Blind rotation of a group of ciphertexts on the 32-bit path (`ring.small` is set),
/// coefficient by coefficient, so each key pair (128 KiB for `PN10QP27`) is read from
/// memory once for the whole group and then from cache.
fn blind_rotate_small(ring: &Ring, key: &CpuPrepared, cts: &[LweCiphertext]) -> Vec<ExtractedLwe> {
    let p = ring.params;
    let (big_n, rows) = (p.big_n(), p.rgsw_rows());
    let q = ring.modulus.q;
    let br = ring.small.expect("the 32-bit path");
    let two_n = 2 * big_n;
    let log2n = two_n.trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let log_bg = p.bsk_base_log.0;
    let mut start = vec![0u64; big_n];
    let mut states: Vec<Small> = cts
        .iter()
        .map(|ct| {
            initial_acc_b(ring, ct, &mut start);
            let mut acc = vec![0u32; 2 * big_n];
            acc[big_n..].iter_mut().zip(&start).for_each(|(o, &x)| *o = x as u32);
            Small {
                acc,
                digits: vec![0; rows * big_n],
                mono_p: vec![0; big_n],
                mono_m: vec![0; big_n],
                upd: vec![0; 2 * big_n],
            }
        })
        .collect();
    let pair_len = 2 * rows * 2 * big_n;
    let q32 = q as u32;
    for (i, pair) in key.bsk32.chunks_exact(pair_len).enumerate().take(p.n()) {
        let next = key.bsk32.get((i + 1) * pair_len..(i + 2) * pair_len).unwrap_or(&[]);
        let mut ahead = Ahead::new(next);
        for (s, ct) in states.iter_mut().zip(cts) {
            let a = ms_to_2n(ct.a()[i], logq, log2n);
            if a == 0 {
                continue; // X^0 - 1 = 0: the step is the identity.
            }
            let (acc_a, acc_b) = s.acc.split_at(big_n);
            let (lo, hi) = s.digits.split_at_mut(rows / 2 * big_n);
            crate::kernels::decompose(ring.isa, q32, log_bg, acc_a, lo);
            crate::kernels::decompose(ring.isa, q32, log_bg, acc_b, hi);
            for d in s.digits.chunks_exact_mut(big_n) {
                ring.ntt.forward32(d, &mut ahead);
            }
            ring.monomials_minus_one32(a, &mut s.mono_p, &mut s.mono_m);
            crate::kernels::ginx_step(ring.isa, br, &s.digits, pair, &s.mono_p, &s.mono_m, &mut s.upd);
            for (acc, u) in s.acc.chunks_exact_mut(big_n).zip(s.upd.chunks_exact_mut(big_n)) {
                ring.ntt.inverse32(u, &mut ahead);
                for (x, &v) in acc.iter_mut().zip(u.iter()) {
                    let t = *x + v; // both below Q < 2^29
                    *x = t.min(t.wrapping_sub(q32));
                }
            }
        }
    }
    states
        .iter()
        .map(|s| {
            let wide: Vec<u64> = s.acc.iter().map(|&x| u64::from(x)).collect();
            sample_extract(ring, &wide[..big_n], &wide[big_n..])
        })
        .collect()
}

/// Ciphertexts per group on the 32-bit path: enough to share each key pair's read among
/// several, few enough that every core gets a group.
const MAX_GROUP: usize = 8;

pub fn blind_rotate_batch(ring: &Ring, key: &CpuPrepared, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>> {
    if ring.small.is_none() {
        return Ok(inputs.par_iter().map(|ct| blind_rotate(ring, key, ct)).collect());
    }
    let group = inputs.len().div_ceil(rayon::current_num_threads()).clamp(1, MAX_GROUP);
    Ok(inputs.par_chunks(group).flat_map_iter(|g| blind_rotate_small(ring, key, g)).collect())
}
