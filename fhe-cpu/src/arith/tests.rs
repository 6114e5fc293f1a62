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

/// [`centered`] against the API's `centered_remainder_to`: 60- and 40-bit last primes
/// into 60-, 50- and 40-bit ones, inputs at the rounding's edges.
#[test]
fn centered_matches_the_api() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    for (ql, q) in [
        ((1u64 << 60) - 93, (1u64 << 59) + 0x3_0001),
        ((1 << 59) + 0x3_0001, (1 << 60) - 93),
        ((1 << 40) + 0x6_0001, (1 << 60) - 93),
        ((1 << 60) - 93, (1 << 50) + 55),
        ((1 << 60) - 93, (1 << 40) + 0x6_0001),
    ] {
        let (ml, m) = (Modulus::new(ql), Modulus::new(q));
        for n in [1usize, 8, 13, 1000] {
            let mut x: Vec<u64> = (0..n).map(|_| r.next_u64() % ql).collect();
            x.iter_mut().zip([0, ql - 1, ql / 2, ql / 2 + 1]).for_each(|(x, e)| *x = e);
            let (mut want, mut got) = (vec![0; n], vec![0; n]);
            fhe_api::ring::rns::centered_remainder_to(&ml, &m, &x, &mut want);
            centered(&ml, &m, &x, &mut got);
            assert_eq!(got, want, "q_last {ql} q {q} n {n}");
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
