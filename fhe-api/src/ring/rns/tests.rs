use super::*;
use crate::ring::math::mul_mod;
use crate::ring::prime::primes_below;
use crate::ring::PolynomialSize;
use num_bigint::{BigInt, BigUint};
use num_traits::{Euclid, One, ToPrimitive, Zero};

use crate::rng::SplitMix64 as Rng;

const N: usize = 16;

/// A uniform-enough multiprecision value below `m` from test words.
fn below(rng: &mut Rng, m: &BigUint) -> BigUint {
    let words = (m.bits() / 64 + 2) as usize;
    let digits: Vec<u32> = (0..2 * words).map(|_| rng.next_u64() as u32).collect();
    BigUint::new(digits) % m
}

/// `count` distinct NTT primes of `bits` bits (N = 16) not in `used`.
fn primes(bits: u32, count: usize, used: &mut Vec<u64>) -> Vec<u64> {
    let ps = primes_below(bits, PolynomialSize(N), count, used).unwrap();
    used.extend(&ps);
    ps
}

fn basis(ps: &[u64]) -> RnsBasis {
    RnsBasis::new(&ps.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>()).unwrap()
}

fn product(ps: &[u64]) -> BigUint {
    ps.iter().fold(BigUint::one(), |a, &q| a * q)
}

fn residue(x: &BigInt, q: u64) -> u64 {
    x.rem_euclid(&BigInt::from(q)).to_u64().unwrap()
}

/// Limb-major residues of the values `xs` over `ps`.
fn limbs(xs: &[BigInt], ps: &[u64]) -> Vec<u64> {
    ps.iter().flat_map(|&q| xs.iter().map(move |x| residue(x, q))).collect()
}

/// `N` values in `[0, m)`: the edge cases `0, 1, m-1, m/2 - 1, m/2, m/2 + 1`, then random.
fn values(rng: &mut Rng, m: &BigUint) -> Vec<BigInt> {
    let half = m / 2u32;
    let one = BigUint::one();
    let mut xs = vec![BigUint::zero(), one.clone(), m - &one, &half - &one, half.clone(), &half + &one];
    while xs.len() < N {
        xs.push(below(rng, m));
    }
    xs.into_iter().map(BigInt::from).collect()
}

#[test]
fn bad_bases_are_errors() {
    let ok = 1_152_921_504_606_830_593u64; // an NTT prime below 2^60
    for bad in [vec![], vec![ok, ok], vec![ok, 134_215_681 * 3], vec![2], vec![1], vec![(1 << 62) + 135]] {
        let e = RnsBasis::new(&bad.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>()).unwrap_err();
        assert!(matches!(e, Error::InvalidRing(_)), "{bad:?}: {e}");
    }
    let b = basis(&[ok, 134_215_681]);
    assert!(Rescaler::new(&b.prefix(1)).is_err());
    assert!(ModDown::new(&b, &b.prefix(1)).is_err());
}

#[test]
fn basis_constants_match_the_definition() {
    let ps = primes(50, 5, &mut vec![]);
    let b = basis(&ps);
    assert_eq!((b.len(), b.primes()), (5, ps.clone()));
    assert!((b.log2_product() - 250.0).abs() < 0.01);
    for k in 1..=5 {
        let sub = b.prefix(k);
        let q = product(&ps[..k]);
        for (i, &(w, ws)) in sub.q_hat_inv().iter().enumerate() {
            let qi = ps[i];
            assert_eq!((&q / qi * w % qi).to_u64().unwrap(), 1 % qi);
            assert_eq!(ws, shoup(w, qi));
            assert_eq!(sub.modulus(i).q, qi);
        }
    }
}

#[test]
fn u128_fold_is_exact() {
    let mut rng = Rng::new(7);
    for p in [3u64, 134_215_681, (1 << 62) - 57] {
        let m = Modulus::new(p);
        for x in [0u128, u128::MAX, u128::MAX - 1, 1 << 64, (p as u128) << 64]
            .into_iter()
            .chain((0..1000).map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128))
        {
            assert_eq!(m.reduce_u128(x) as u128, x % p as u128, "{x} mod {p}");
        }
    }
}

/// `sum_i [x_i qhat_i^{-1}]_{q_i} qhat_i` computed exactly: the integer the conversion
/// reduces mod each output prime.
fn conv_integer(x: &BigInt, a: &[u64]) -> BigInt {
    let qa = BigInt::from(product(a));
    a.iter()
        .map(|&qi| {
            let qhat = &qa / qi;
            let t = mul_mod(residue(x, qi), inv_mod(residue(&qhat, qi), qi), qi);
            qhat * t
        })
        .sum()
}

#[test]
fn base_conversion_is_x_plus_small_multiple_of_q() {
    let mut rng = Rng::new(1);
    // (len A, bits A, len B, bits B): the last two force the chunked u128 path
    // (20 products of 62-bit words overflow a u128) and a single input limb.
    for (la, ba, lb, bb) in [(3, 40, 5, 60), (6, 60, 8, 50), (8, 55, 3, 45), (20, 62, 4, 62), (1, 50, 3, 40)] {
        let mut used = vec![];
        let (a, b) = (primes(ba, la, &mut used), primes(bb, lb, &mut used));
        let conv = BaseConverter::new(&basis(&a), &basis(&b));
        assert_eq!((conv.from_len(), conv.to_len()), (la, lb));
        assert_eq!(la > 16, la > conv.lazy_terms, "{la} {}", conv.lazy_terms);
        let qa = product(&a);
        for _ in 0..4 {
            let xs = values(&mut rng, &qa);
            let mut out = vec![0u64; lb * N];
            conv.convert(N, &limbs(&xs, &a), &mut out);
            for (c, x) in xs.iter().enumerate() {
                let s = conv_integer(x, &a);
                let u = (&s - x) / BigInt::from(qa.clone());
                assert!(&(&u * BigInt::from(qa.clone())) + x == s && u >= BigInt::zero() && u < BigInt::from(la));
                for (j, &p) in b.iter().enumerate() {
                    assert_eq!(out[j * N + c], residue(&s, p), "la={la} lb={lb} c={c} j={j}");
                }
            }
        }
    }
}

#[test]
fn mod_down_rounds_exactly() {
    let mut rng = Rng::new(2);
    for (lq, bq, lp, bp) in [(3, 50, 1, 60), (5, 45, 2, 61), (8, 40, 3, 60), (4, 60, 4, 55)] {
        let mut used = vec![];
        let (q, p) = (primes(bq, lq, &mut used), primes(bp, lp, &mut used));
        let md = ModDown::new(&basis(&q), &basis(&p)).unwrap();
        let (qq, pp) = (product(&q), product(&p));
        let pi_big = BigInt::from(pp.clone());
        for _ in 0..4 {
            let xs = values(&mut rng, &(&qq * &pp));
            let mut ql = limbs(&xs, &q);
            let pl = limbs(&xs, &p);
            // The pieces, as the evaluation-form caller uses them, give the same words.
            let mut pieces = ql.clone();
            let mut conv = vec![0u64; lq * N];
            md.converter().convert(N, &pl, &mut conv);
            for (i, &(s, ss)) in md.p_inv_mod_q().iter().enumerate() {
                let m = Modulus::new(q[i]);
                sub_and_scale(&m, &mut pieces[i * N..][..N], &conv[i * N..][..N], s, ss);
            }
            md.apply(N, &mut ql, &pl);
            assert_eq!(ql, pieces);
            for (c, x) in xs.iter().enumerate() {
                // round(x / P), halves up, reduced mod each q_i.
                let shifted: BigInt = x + &pi_big / 2u32;
                let want = shifted.div_euclid(&pi_big);
                for (i, &qi) in q.iter().enumerate() {
                    assert_eq!(ql[i * N + c], residue(&want, qi), "lq={lq} lp={lp} c={c} i={i}");
                }
            }
        }
    }
}

#[test]
fn rescale_rounds_exactly() {
    let mut rng = Rng::new(3);
    // The last prime larger than the rest, smaller than the rest, and in between.
    let cases: [(&[(u32, usize)], u32); 4] =
        [(&[(40, 3)], 60), (&[(60, 4)], 40), (&[(50, 2), (55, 3)], 52), (&[(61, 7)], 62)];
    for (head, last_bits) in cases {
        let mut used = vec![];
        let mut q: Vec<u64> = head.iter().flat_map(|&(b, c)| primes(b, c, &mut used)).collect();
        q.extend(primes(last_bits, 1, &mut used));
        let l = q.len() - 1;
        let r = Rescaler::new(&basis(&q)).unwrap();
        assert_eq!((r.last_modulus().q, r.q_last_inv_mod_q().len()), (q[l], l));
        let qq = BigInt::from(product(&q));
        let ql = BigInt::from(q[l]);
        let h = BigInt::from(q[l] / 2);
        for round in 0..5 {
            let mut xs = values(&mut rng, &product(&q));
            if round == 0 {
                // Around the rounding boundaries: k q_l + {0, +-h, +-(h+1)}, k of either sign.
                let k = BigInt::from(rng.next_u64() >> 3);
                let offs = [BigInt::zero(), h.clone(), -h.clone(), &h + 1u32, -(&h + 1u32)];
                for (slot, off) in xs.iter_mut().skip(6).zip(offs.iter().chain(offs.iter())) {
                    let sign = BigInt::from(if slot.bits() % 2 == 0 { 1 } else { -1 });
                    *slot = (&k * &ql * sign + off).rem_euclid(&qq);
                }
            }
            let mut words = limbs(&xs, &q);
            let mut pieces = words.clone();
            r.apply_coeff(N, &mut words);
            let (head_words, last) = pieces.split_at_mut(l * N);
            let mut d = vec![0u64; N];
            for (i, &(s, ss)) in r.q_last_inv_mod_q().iter().enumerate() {
                let m = Modulus::new(q[i]);
                centered_remainder_to(r.last_modulus(), &m, last, &mut d);
                sub_and_scale(&m, &mut head_words[i * N..][..N], &d, s, ss);
            }
            assert_eq!(words, pieces);
            for (c, x) in xs.iter().enumerate() {
                let xc = if x > &(&qq / 2) { x - &qq } else { x.clone() };
                let want = (&xc + &h).div_euclid(&ql); // round(xc / q_l), halves up
                for (i, &qi) in q[..l].iter().enumerate() {
                    assert_eq!(words[i * N + c], residue(&want, qi), "q={q:?} c={c} i={i}");
                }
                // The last limb is left as it was.
                assert_eq!(words[l * N + c], residue(x, q[l]));
            }
        }
    }
}

/// `cargo test -p fhe-api --release --lib ring::rns -- --ignored --nocapture`
#[test]
#[ignore = "timing; run in release mode"]
fn convert_speed() {
    let n = 1 << 16;
    let mut used = vec![];
    let a = primes_below(60, PolynomialSize(n), 6, &used).unwrap();
    used.extend(&a);
    let b = primes_below(60, PolynomialSize(n), 35, &used).unwrap();
    let conv = BaseConverter::new(&basis(&a), &basis(&b));
    let mut rng = Rng::new(9);
    let input: Vec<u64> = a.iter().flat_map(|&q| (0..n).map(|_| rng.next_u64() % q).collect::<Vec<_>>()).collect();
    let mut out = vec![0u64; b.len() * n];
    conv.convert(n, &input, &mut out);
    let mut times = vec![];
    for _ in 0..7 {
        let t = std::time::Instant::now();
        conv.convert(n, &input, &mut out);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!("convert n=2^16, 6 -> 35 limbs: median {:.2} ms (min {:.2})", times[3], times[0]);
    std::hint::black_box(&out);
}
