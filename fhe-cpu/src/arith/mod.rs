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
        if bounds.len() <= 16 && bounds.iter().all(|&b| b <= 1 << 60) && wide::takes(m.q) {
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
mod tests {
    use super::*;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    #[test]
    fn sub_scale_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        for q in [97u64, (1 << 40) + 0x6_0001, (1 << 50) - 27, (1 << 50) + 55, (1 << 59) + 0x3_0001, (1 << 60) - 93] {
            let m = Modulus::new(q);
            for n in [1usize, 8, 13, 1000] {
                let c = r.next_u64() % q;
                let mut words = || -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(3).zip([0, q - 1, 0]).for_each(|(x, e)| *x = e);
                    v
                };
                let (x, w0) = (words(), words());
                let want: Vec<u64> = x
                    .iter()
                    .zip(&w0)
                    .map(|(&x, &w)| ((u128::from(x) + u128::from(q - w)) * u128::from(c) % u128::from(q)) as u64)
                    .collect();
                let cs = (c, fhe_api::ring::modulus::shoup(c, q));
                let mut w = w0.clone();
                sub_scale(&m, &x, cs, &mut w);
                assert_eq!(w, want, "q {q} n {n}");
                let mut w = w0.clone();
                portable_sub_scale(&m, &x, cs, &mut w);
                assert_eq!(w, want, "portable, q {q} n {n}");
            }
        }
    }

    #[test]
    fn tensor_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for q in [97u64, (1 << 40) + 0x6_0001, (1 << 46) - 87, (1 << 46) + 15, (1 << 59) + 0x3_0001, (1 << 60) - 93] {
            let m = Modulus::new(q);
            for n in [1usize, 8, 13, 1000] {
                let mut words = || -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(2).zip([q - 1, 0]).for_each(|(x, e)| *x = e);
                    v
                };
                let (x0, x1, y0, y1) = (words(), words(), words(), words());
                let p = |a: u64, b: u64| u128::from(a) * u128::from(b);
                let md = |x: u128| (x % u128::from(q)) as u64;
                let want: [Vec<u64>; 3] = [
                    (0..n).map(|s| md(p(x0[s], y0[s]))).collect(),
                    (0..n).map(|s| md(p(x0[s], y1[s]) + p(x1[s], y0[s]))).collect(),
                    (0..n).map(|s| md(p(x1[s], y1[s]))).collect(),
                ];
                let (mut d0, mut d1, mut d2) = (vec![0; n], vec![0; n], vec![0; n]);
                tensor(&m, [&x0, &x1, &y0, &y1], [&mut d0, &mut d1, &mut d2]);
                assert_eq!([&d0, &d1, &d2], [&want[0], &want[1], &want[2]], "q {q} n {n}");
                let (mut d0, mut d1, mut d2) = (vec![0; n], vec![0; n], vec![0; n]);
                portable_tensor(&m, [&x0, &x1, &y0, &y1], [&mut d0, &mut d1, &mut d2]);
                assert_eq!([&d0, &d1, &d2], [&want[0], &want[1], &want[2]], "portable, q {q} n {n}");
            }
        }
    }

    /// Both dot-product paths against `u128` arithmetic: primes either side of the IFMA
    /// kernel's `2^46` bound, 1 to 20 terms (it takes at most 16), words at the extremes.
    #[test]
    fn dot_pair_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        for q in [
            97u64,
            (1 << 40) + 0x6_0001,
            (1 << 41) - 0x1_FFFF,
            (1 << 46) - 87,
            (1 << 46) + 15,
            (1 << 59) + 0x3_0001,
            (1 << 60) - 93,
        ] {
            let m = Modulus::new(q);
            for (terms, n) in [(1usize, 9usize), (2, 64), (6, 1000), (16, 72), (17, 40), (20, 8), (33, 17)] {
                let mut words = || -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(3).zip([q - 1, 0, q - 1]).for_each(|(x, e)| *x = e);
                    v
                };
                let (e, b, a): (Vec<_>, Vec<_>, Vec<_>) = (0..terms).map(|_| (words(), words(), words())).collect();
                let sum = |k: &[Vec<u64>]| -> Vec<u64> {
                    (0..n)
                        .map(|s| {
                            let t = (0..terms).map(|j| u128::from(e[j][s]) * u128::from(k[j][s]) % u128::from(q));
                            (t.sum::<u128>() % u128::from(q)) as u64
                        })
                        .collect()
                };
                let want = (sum(&b), sum(&a));
                fn view(v: &[Vec<u64>]) -> Vec<&[u64]> {
                    v.iter().map(|x| &x[..]).collect()
                }
                let (ev, bv, av) = (view(&e), view(&b), view(&a));
                let (mut o0, mut o1) = (vec![0; n], vec![0; n]);
                dot_pair(&m, &ev, &bv, &av, &mut o0, &mut o1);
                assert_eq!((&o0, &o1), (&want.0, &want.1), "q {q} terms {terms} n {n}");
                let (mut o0, mut o1) = (vec![0; n], vec![0; n]);
                portable_dot_pair(&m, &ev, &bv, &av, &mut o0, &mut o1);
                assert_eq!((&o0, &o1), (&want.0, &want.1), "portable, q {q} terms {terms} n {n}");
            }
        }
    }

    /// [`dot`] against `u128` arithmetic: 60-bit primes (the wide kernel, which reduces
    /// every 16 terms) and others, 1 to 40 terms, words at the extremes.
    #[test]
    fn dot_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        for q in [97u64, (1 << 46) + 15, (1 << 59) + 0x3_0001, (1 << 60) - 93, (1 << 61) - 1] {
            let m = Modulus::new(q);
            for (terms, n) in [(1usize, 9usize), (4, 64), (16, 24), (17, 8), (40, 31)] {
                let mut words = || -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(2).for_each(|x| *x = q - 1);
                    v
                };
                let (x, p): (Vec<_>, Vec<_>) = (0..terms).map(|_| (words(), words())).collect();
                let want: Vec<u64> = (0..n)
                    .map(|s| {
                        let t = (0..terms).map(|j| u128::from(x[j][s]) * u128::from(p[j][s]) % u128::from(q));
                        (t.sum::<u128>() % u128::from(q)) as u64
                    })
                    .collect();
                let (xv, pv): (Vec<&[u64]>, Vec<&[u64]>) =
                    (x.iter().map(|v| &v[..]).collect(), p.iter().map(|v| &v[..]).collect());
                let mut o = vec![0; n];
                dot(&m, &xv, &pv, &mut o);
                assert_eq!(o, want, "q {q} terms {terms} n {n}");
                portable_dot(&m, &xv, &pv, &mut o);
                assert_eq!(o, want, "portable, q {q} terms {terms} n {n}");
            }
        }
    }

    /// Every path against `u128` arithmetic, on primes either side of the IFMA kernel's
    /// `2^50` bound and at the extremes of the range.
    #[test]
    fn mul_add_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for q in [
            97u64,
            (1 << 40) + 0x6_0001,
            (1 << 41) - 0x1_FFFF,
            (1 << 50) - 27,
            (1 << 50) + 55,
            (1 << 59) + 0x3_0001,
            (1 << 60) - 93,
        ] {
            let m = Modulus::new(q);
            for n in [0usize, 1, 7, 8, 9, 64, 1000] {
                let mut words = |n| -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(3).zip([0, 1, q - 1]).for_each(|(x, e)| *x = e);
                    v
                };
                let (a, b, acc0) = (words(n), words(n), words(n));
                let want: Vec<u64> = (0..n)
                    .map(|i| ((u128::from(acc0[i]) + u128::from(a[i]) * u128::from(b[i])) % u128::from(q)) as u64)
                    .collect();
                let mut acc = acc0.clone();
                mul_add(&m, &a, &b, &mut acc);
                assert_eq!(acc, want, "q {q} n {n}");
                let mut acc = acc0.clone();
                portable_mul_add(&m, &a, &b, &mut acc);
                assert_eq!(acc, want, "portable, q {q} n {n}");
            }
        }
    }

    /// [`mul`] against `u128` arithmetic, IFMA primes (below 2^46) and portable ones.
    #[test]
    fn mul_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for q in [97u64, (1 << 40) + 0x6_0001, (1 << 46) - 87, (1 << 46) + 15, (1 << 59) + 0x3_0001, (1 << 60) - 93] {
            let m = Modulus::new(q);
            for n in [0usize, 1, 7, 8, 9, 64, 1000] {
                let mut words = || -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(3).zip([0, 1, q - 1]).for_each(|(x, e)| *x = e);
                    v
                };
                let (a, b) = (words(), words());
                let want: Vec<u64> =
                    a.iter().zip(&b).map(|(&a, &b)| (u128::from(a) * u128::from(b) % u128::from(q)) as u64).collect();
                let mut out = vec![u64::MAX; n];
                mul(&m, &a, &b, &mut out);
                assert_eq!(out, want, "q {q} n {n}");
            }
        }
    }

    /// [`dot_const`] (IFMA where [`dot_const_fits`]) and the portable sum against `u128`
    /// arithmetic: rows of 40- and 41-bit words into 40-, 45- and 60-bit primes, and of 60-
    /// and 41-bit words into 50- and 60-bit ones (the wide kernel), 1 to 16 rows, ragged
    /// lengths.
    #[test]
    fn dot_const_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        let narrow = [(1u64 << 41) - 0x1_FFFF, (1 << 40) + 0x6_0001];
        let wide = [(1u64 << 60) - 93, (1 << 41) - 0x1_FFFF];
        for (q, bounds) in [
            ((1u64 << 40) + 0x6_0001, narrow),
            ((1 << 45) - 0x2_0001, narrow),
            ((1 << 60) - 93, narrow),
            ((1 << 50) + 55, wide),
            ((1 << 60) - 93, wide),
        ] {
            let m = Modulus::new(q);
            for rows in [1usize, 6, 9, 16] {
                for n in [0usize, 7, 8, 300] {
                    let b: Vec<u64> = (0..rows).map(|i| bounds[i % 2]).collect();
                    let mut t: Vec<Vec<u64>> = b.iter().map(|&b| (0..n).map(|_| r.next_u64() % b).collect()).collect();
                    t.iter_mut().zip(&b).for_each(|(row, &b)| row.iter_mut().take(1).for_each(|x| *x = b - 1));
                    let w: Vec<u64> = (0..rows).map(|_| r.next_u64() % q).collect();
                    let want: Vec<u64> = (0..n)
                        .map(|c| {
                            let s = t
                                .iter()
                                .zip(&w)
                                .fold(0u128, |a, (row, &w)| (a + u128::from(row[c]) * u128::from(w)) % u128::from(q));
                            s as u64
                        })
                        .collect();
                    let rows_ref: Vec<&[u64]> = t.iter().map(|v| v.as_slice()).collect();
                    let fits = dot_const_fits(&m, &b, &w);
                    assert_eq!(fits, q < 1 << 46 && rows <= 16 && b[0] < 1 << 52, "q {q} rows {rows}");
                    let mut y = vec![0; n];
                    dot_const(&m, &rows_ref, &w, dot_const_path(&m, &b, &w), &mut y);
                    assert_eq!(y, want, "q {q} rows {rows} n {n}");
                    portable_dot_const(&m, &rows_ref, &w, &mut y);
                    assert_eq!(y, want, "portable, q {q} rows {rows} n {n}");
                }
            }
        }
    }
}
