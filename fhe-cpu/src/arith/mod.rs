//! Elementwise modular arithmetic over whole limbs (`N` words under one prime), the
//! pointwise half of CKKS's work (the NTTs are the other): a SIMD kernel where the CPU
//! and the prime allow one, else the portable [`Modulus`] code. Every path returns the
//! canonical residue, so the bytes do not depend on which ran.

#[cfg(target_arch = "x86_64")]
mod ifma;
pub mod small;
#[cfg(target_arch = "x86_64")]
mod wide;

use fhe_api::ring::modulus::{csub, mul_shoup_lazy, Modulus};

/// `acc[i] = (acc[i] + a[i] b[i]) mod q` for words below `q` (equal lengths, checked by
/// the caller).
pub fn mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) {
    debug_assert!(a.len() == acc.len() && b.len() == acc.len());
    #[cfg(target_arch = "x86_64")]
    if ifma::takes(m.q) {
        // SAFETY: `takes` saw avx512f and avx512ifma on this CPU and `q < 2^50`.
        unsafe { ifma::mul_add(m, a, b, acc) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        let done = unsafe { wide::mul_add(m, a, b, acc) };
        portable_mul_add(m, &a[done..], &b[done..], &mut acc[done..]);
        return;
    }
    portable_mul_add(m, a, b, acc);
}

fn portable_mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) {
    acc.iter_mut().zip(a.iter().zip(b)).for_each(|(c, (&a, &b))| *c = m.add(*c, m.mul(a, b)));
}

/// `out[i] = a[i] b[i] mod q` for words below `q` (equal lengths, checked by the caller):
/// plaintext and constant products.
pub fn mul(m: &Modulus, a: &[u64], b: &[u64], out: &mut [u64]) {
    debug_assert!(a.len() == out.len() && b.len() == out.len());
    #[cfg(target_arch = "x86_64")]
    if ifma::takes_dot(m.q, 1) {
        // SAFETY: `takes_dot` saw avx512f and avx512ifma on this CPU and `q < 2^46`.
        unsafe { ifma::mul(m, a, b, out) };
        return;
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        done = unsafe { wide::mul(m, a, b, out) };
    }
    out[done..].iter_mut().zip(a[done..].iter().zip(&b[done..])).for_each(|(o, (&a, &b))| *o = m.mul(a, b));
}

/// Two inner products sharing their left operands, word by word:
/// `o0 = sum_j e_j b_j` and `o1 = sum_j e_j a_j` mod `q` (key switching's digit sum, the
/// key's two halves). Every slice has `o0`'s length, words below `q`.
pub fn dot_pair(m: &Modulus, e: &[&[u64]], b: &[&[u64]], a: &[&[u64]], o0: &mut [u64], o1: &mut [u64]) {
    debug_assert!(e.len() == b.len() && e.len() == a.len());
    #[cfg(target_arch = "x86_64")]
    if ifma::takes_dot(m.q, e.len()) {
        // SAFETY: `takes_dot` saw avx512f and avx512ifma, `q < 2^46` and at most 16 terms.
        unsafe { ifma::dot_pair(m, e, b, a, o0, o1) };
        return;
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        done = unsafe { wide::dot_pair(m, e, b, a, o0, o1) };
    }
    portable_dot_pair(m, &tails(e, done), &tails(b, done), &tails(a, done), &mut o0[done..], &mut o1[done..]);
}

/// `w = (x - w) c mod q` elementwise, `c` given with its Shoup companion
/// (`fhe_api::ring::modulus::shoup`): ModDown's and rescaling's last step. Words below
/// `q`, equal lengths.
pub fn sub_scale(m: &Modulus, x: &[u64], (c, c_shoup): (u64, u64), w: &mut [u64]) {
    debug_assert_eq!(x.len(), w.len());
    #[cfg(target_arch = "x86_64")]
    if ifma::takes(m.q) {
        // SAFETY: `takes` saw avx512f and avx512ifma on this CPU and `q < 2^50`.
        unsafe { ifma::sub_scale(m, x, c, w) };
        return;
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        done = unsafe { wide::sub_scale(m, x, (c, c_shoup), w) };
    }
    portable_sub_scale(m, &x[done..], (c, c_shoup), &mut w[done..]);
}

fn portable_sub_scale(m: &Modulus, x: &[u64], (c, c_shoup): (u64, u64), w: &mut [u64]) {
    let q = m.q;
    w.iter_mut().zip(x).for_each(|(w, &x)| *w = csub(mul_shoup_lazy(x + q - *w, c, c_shoup, q), q));
}

/// `out[c]` = the centered remainder of `input[c]` modulo `q_last`, reduced modulo `m`
/// (rescale's and ModRaise's `d`: the words of
/// `fhe_api::ring::rns::centered_remainder_to`, which the portable path calls). Inputs
/// below `q_last < 2^62`, equal lengths.
pub fn centered(q_last: &Modulus, m: &Modulus, input: &[u64], out: &mut [u64]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`;
        // `Modulus` keeps `q_last < 2^62`.
        done = unsafe { wide::centered(q_last.q, m, input, out) };
    }
    fhe_api::ring::rns::centered_remainder_to(q_last, m, &input[done..], &mut out[done..]);
}

/// The tensor product of `x = (x0, x1)` and `y = (y0, y1)` word by word: `d0 = x0 y0`,
/// `d1 = x0 y1 + x1 y0`, `d2 = x1 y1` mod `q` (a CKKS multiplication before
/// relinearization). Words below `q`, equal lengths.
pub fn tensor(m: &Modulus, x: [&[u64]; 4], d: [&mut [u64]; 3]) {
    #[cfg(target_arch = "x86_64")]
    if ifma::takes_dot(m.q, 2) {
        // SAFETY: `takes_dot` saw avx512f and avx512ifma and `q < 2^46`.
        unsafe { ifma::tensor(m, x, d) };
        return;
    }
    let mut done = 0;
    let [d0, d1, d2] = d;
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        done = unsafe { wide::tensor(m, x, [&mut *d0, &mut *d1, &mut *d2]) };
    }
    let x = x.map(|x| &x[done..]);
    portable_tensor(m, x, [&mut d0[done..], &mut d1[done..], &mut d2[done..]]);
}

fn portable_tensor(m: &Modulus, [x0, x1, y0, y1]: [&[u64]; 4], [d0, d1, d2]: [&mut [u64]; 3]) {
    for s in 0..d0.len() {
        d0[s] = m.mul(x0[s], y0[s]);
        d1[s] = m.reduce_u128(u128::from(x0[s]) * u128::from(y1[s]) + u128::from(x1[s]) * u128::from(y0[s]));
        d2[s] = m.mul(x1[s], y1[s]);
    }
}

/// The kernel [`dot_const`] runs for one output prime: IFMA on 52-bit limbs, the wide
/// IFMA kernel for primes up to `2^60`, or the portable `u128` sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotConst {
    Ifma,
    Wide,
    Portable,
}

/// Which kernel sums rows of words below `bounds[i]` times constants `w` (below `m.q`)
/// modulo `m` on this CPU: IFMA where [`dot_const_fits`], else the wide kernel for
/// `q < 2^60`, rows below `2^60` and at most 16 rows.
pub fn dot_const_path(m: &Modulus, bounds: &[u64], w: &[u64]) -> DotConst {
    #[cfg(target_arch = "x86_64")]
    {
        if dot_const_fits(m, bounds, w) && ifma::takes(m.q) {
            return DotConst::Ifma;
        }
        if bounds.len() <= wide::MAX_TERMS && bounds.iter().all(|&b| b <= 1 << 60) && wide::takes(m.q) {
            return DotConst::Wide;
        }
    }
    let _ = (m, bounds, w);
    DotConst::Portable
}

/// Whether [`dot_const`]'s IFMA kernel may sum these rows modulo `m`: words of row `i`
/// below `bounds[i] <= 2^52`, constants `w` below `m.q < 2^46`, at most 16 rows, and
/// `sum_i (bounds[i] - 1) w_i` below the reduction's `2^(2K)`, `K = bitlen(q) + 2`
/// (`ifma::dot_const`).
fn dot_const_fits(m: &Modulus, bounds: &[u64], w: &[u64]) -> bool {
    let big_k = 64 - m.q.leading_zeros() + 2;
    let sum: u128 = bounds.iter().zip(w).map(|(&b, &w)| u128::from(b.saturating_sub(1)) * u128::from(w)).sum();
    m.q < 1 << 46
        && (1..=16).contains(&bounds.len())
        && bounds.len() == w.len()
        && bounds.iter().all(|&b| b <= 1 << 52)
        && sum < 1u128 << (2 * big_k)
}

/// `y[c] = sum_i t_i[c] w_i mod q` (one output limb of a fast base conversion; rows
/// `t_i` of `y`'s length, words below `2^62`, constants below `q`). `path` comes from
/// [`dot_const_path`] for these rows' bounds; every path gives the canonical residues.
pub fn dot_const(m: &Modulus, t: &[&[u64]], w: &[u64], path: DotConst, y: &mut [u64]) {
    debug_assert!(t.len() == w.len() && t.iter().all(|r| r.len() == y.len()));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    match path {
        DotConst::Ifma => {
            // SAFETY: `dot_const_path` saw avx512f and avx512ifma on this CPU and bounded
            // the sums (words below 2^52, q < 2^46, at most 16 rows).
            unsafe { ifma::dot_const(m, t, w, y) };
            return;
        }
        // SAFETY: `dot_const_path` saw avx512f, avx512dq and avx512ifma on this CPU, `q <
        // 2^60`, rows below 2^60 and at most 16 of them.
        DotConst::Wide => done = unsafe { wide::dot_const(m, t, w, y) },
        DotConst::Portable => {}
    }
    let _ = path;
    portable_dot_const(m, &tails(t, done), w, &mut y[done..]);
}

/// Each slice from word `done` on: the words a SIMD kernel left to the portable code.
fn tails<'a>(v: &[&'a [u64]], done: usize) -> Vec<&'a [u64]> {
    v.iter().map(|x| &x[done..]).collect()
}

/// Up to 8 products below `2^124` each and a folded word below `2^62` fit a `u128`.
fn portable_dot_const(m: &Modulus, t: &[&[u64]], w: &[u64], y: &mut [u64]) {
    let mut acc = [0u128; BLOCK];
    for start in (0..y.len()).step_by(BLOCK) {
        let len = BLOCK.min(y.len() - start);
        let acc = &mut acc[..len];
        acc.fill(0);
        for (k, (row, &wi)) in t.iter().zip(w).enumerate() {
            if k > 0 && k % 8 == 0 {
                acc.iter_mut().for_each(|x| *x = u128::from(m.reduce_u128(*x)));
            }
            let wi = u128::from(wi);
            acc.iter_mut().zip(&row[start..start + len]).for_each(|(a, &x)| *a += u128::from(x) * wi);
        }
        y[start..start + len].iter_mut().zip(acc.iter()).for_each(|(o, &a)| *o = m.reduce_u128(a));
    }
}

/// Words per block of the portable dot product: two `u128` sums per word stay in L1.
const BLOCK: usize = 256;

/// Sums of products accumulate in `u128` and reduce once per word, or every
/// [`Modulus::lazy_products`] terms (any order gives the same residues).
/// `o = sum_j x_j p_j mod q` word by word (a lazy sum of plaintext products): 128-bit
/// sums reduced once per word (and every `lazy_products` terms). Words below `q`.
pub fn dot(m: &Modulus, x: &[&[u64]], p: &[&[u64]], o: &mut [u64]) {
    debug_assert_eq!(x.len(), p.len());
    #[cfg(target_arch = "x86_64")]
    if wide::takes(m.q) {
        // SAFETY: `takes` saw avx512f, avx512dq and avx512ifma on this CPU and `q < 2^60`.
        let done = unsafe { wide::dot(m, x, p, o) };
        portable_dot(m, &tails(x, done), &tails(p, done), &mut o[done..]);
        return;
    }
    portable_dot(m, x, p, o);
}

fn portable_dot(m: &Modulus, x: &[&[u64]], p: &[&[u64]], o: &mut [u64]) {
    let n = o.len();
    let lazy = m.lazy_products().max(1);
    let mut acc = [0u128; BLOCK];
    for start in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - start);
        let acc = &mut acc[..len];
        acc.fill(0);
        let mut pending = 0;
        for (x, p) in x.iter().zip(p) {
            if pending == lazy {
                acc.iter_mut().for_each(|a| *a = u128::from(m.reduce_u128(*a)));
                pending = 0;
            }
            pending += 1;
            let (x, p) = (&x[start..start + len], &p[start..start + len]);
            for s in 0..len {
                acc[s] += u128::from(x[s]) * u128::from(p[s]);
            }
        }
        o[start..start + len].iter_mut().zip(acc.iter()).for_each(|(o, a)| *o = m.reduce_u128(*a));
    }
}

fn portable_dot_pair(m: &Modulus, e: &[&[u64]], b: &[&[u64]], a: &[&[u64]], o0: &mut [u64], o1: &mut [u64]) {
    let n = o0.len();
    let lazy = m.lazy_products().max(1);
    let (mut acc0, mut acc1) = ([0u128; BLOCK], [0u128; BLOCK]);
    for start in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - start);
        let (acc0, acc1) = (&mut acc0[..len], &mut acc1[..len]);
        acc0.fill(0);
        acc1.fill(0);
        let mut pending = 0;
        for ((e, b), a) in e.iter().zip(b).zip(a) {
            if pending == lazy {
                acc0.iter_mut().for_each(|x| *x = u128::from(m.reduce_u128(*x)));
                acc1.iter_mut().for_each(|x| *x = u128::from(m.reduce_u128(*x)));
                pending = 0;
            }
            pending += 1;
            let (e, b, a) = (&e[start..start + len], &b[start..start + len], &a[start..start + len]);
            for s in 0..len {
                let x = u128::from(e[s]);
                acc0[s] += x * u128::from(b[s]);
                acc1[s] += x * u128::from(a[s]);
            }
        }
        o0[start..start + len].iter_mut().zip(acc0.iter()).for_each(|(o, x)| *o = m.reduce_u128(*x));
        o1[start..start + len].iter_mut().zip(acc1.iter()).for_each(|(o, x)| *o = m.reduce_u128(*x));
    }
}

#[cfg(test)]
mod tests;
