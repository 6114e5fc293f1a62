//! Prepared keys, blind rotation (GINX with ternary secrets) and sample extraction.
//!
//! For each LWE coefficient `a_i` (mod-switched to `2N`), with RGSW keys `K+ = RGSW(s_i
//! == 1)` and `K- = RGSW(s_i == -1)`:
//! `ACC <- ACC + (X^a - 1) (ACC [x] K+) + (X^-a - 1) (ACC [x] K-)`, which multiplies the
//! accumulator's phase by `X^(a s_i)`. Both external products share one gadget
//! decomposition of `ACC` (2L forward NTTs); the monomials are applied in evaluation
//! form; two inverse NTTs per coefficient.

use rayon::prelude::*;

use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, Result};

use crate::ring::{monomial_mul, Ring};

/// The CPU's form of an evaluation key: full RGSW rows (both halves, evaluation form)
/// and full key-switching samples.
pub struct CpuPrepared {
    /// `[key][row][half][slot]`, half 0 = `a`, half 1 = `b` (empty for small moduli).
    pub(crate) bsk: Vec<u64>,
    /// The same as 32-bit words, for moduli below `2^29` (empty otherwise).
    pub(crate) bsk32: Vec<u32>,
    /// `[sample][n + 1]`, `a` then `b`.
    pub(crate) ksk: Vec<u16>,
}

pub fn prepare(ring: &Ring, ek: &EvaluationKey) -> CpuPrepared {
    let ksk = crate::keyswitch::prepare_ksk(ring, ek);
    if ring.small.is_some() {
        // Residues below 2^29: store 32-bit words directly (half the memory to fault in).
        CpuPrepared { bsk: Vec::new(), bsk32: rgsw_rows(ring, ek, |x| x as u32), ksk }
    } else {
        CpuPrepared { bsk: rgsw_rows(ring, ek, |x| x), bsk32: Vec::new(), ksk }
    }
}

/// Full RGSW rows `[key][row][half][slot]`, every key on all cores.
fn rgsw_rows<T: Copy + Default + Send>(ring: &Ring, ek: &EvaluationKey, conv: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let per_key = ring.params.rgsw_rows() * ring.n();
    let mut bsk = vec![T::default(); 2 * ring.params.bsk_b_len()];
    bsk.par_chunks_mut(2 * per_key).enumerate().for_each(|(key, out)| ek.rgsw_key_rows(key, out, &conv));
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
    let p = ring.params;
    let (big_n, rows, levels) = (p.big_n(), p.rgsw_rows(), p.bsk_levels.0);
    let m = ring.modulus;
    let q = m.q;
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
    // ACC = (0, X^-b * TV), TV = round(Q/8) in every coefficient.
    let mu = (q + 4) / 8;
    let b = ms_to_2n(ct.b(), logq, log2n);
    let tv = vec![mu; big_n];
    monomial_mul(&tv, (two_n - b) % two_n, q, &mut s.acc[1]);

    let key_len = rows * 2 * big_n;
    if let Some(br) = ring.small {
        let mut digits32 = vec![0u32; rows * big_n];
        let (mut mono_p, mut mono_m) = (vec![0u32; big_n], vec![0u32; big_n]);
        let mut acc4 = vec![0u64; 4 * big_n];
        let mut upd = vec![0u64; 2 * big_n];
        for (i, &ai) in ct.a().iter().enumerate() {
            let a = ms_to_2n(ai, logq, log2n);
            if a == 0 {
                continue;
            }
            let (lo, hi) = s.digits.split_at_mut(levels);
            ring.decompose(&s.acc[0], lo);
            ring.decompose(&s.acc[1], hi);
            for (d, out) in s.digits.iter_mut().zip(digits32.chunks_mut(big_n)) {
                ring.ntt.forward(d);
                out.iter_mut().zip(d.iter()).for_each(|(o, &x)| *o = x as u32);
            }
            ring.monomial_minus_one(a, &mut s.mono);
            mono_p.iter_mut().zip(&s.mono).for_each(|(o, &x)| *o = x as u32);
            ring.monomial_minus_one(two_n - a, &mut s.mono);
            mono_m.iter_mut().zip(&s.mono).for_each(|(o, &x)| *o = x as u32);
            let kp = &key.bsk32[2 * i * key_len..(2 * i + 1) * key_len];
            let km = &key.bsk32[(2 * i + 1) * key_len..(2 * i + 2) * key_len];
            crate::kernels::ginx_step(ring.isa, br, &digits32, kp, km, &mono_p, &mono_m, &mut acc4, &mut upd);
            for (half, u) in upd.chunks_mut(big_n).enumerate() {
                ring.ntt.inverse(u);
                for (x, &v) in s.acc[half].iter_mut().zip(u.iter()) {
                    *x = m.add(*x, v);
                }
            }
        }
        return sample_extract(ring, &s.acc[0], &s.acc[1]);
    }
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

pub fn blind_rotate_batch(ring: &Ring, key: &CpuPrepared, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>> {
    Ok(inputs.par_iter().map(|ct| blind_rotate(ring, key, ct)).collect())
}
