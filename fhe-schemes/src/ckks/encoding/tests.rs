use super::*;
use crate::ckks::fft::roots;
use fhe_api::ckks::params::Preset;
use fhe_api::ring::math::{inv_mod, mul_mod};
use fhe_api::ring::prime::primes_below;
use fhe_api::ring::{PolynomialSize, RingModulus};
use num_bigint::BigInt;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};

fn random_values(seed: u64, count: usize) -> Vec<Complex> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut unit = || (rng.next_u64() >> 11) as f64 * pow2(-52) - 1.0;
    (0..count).map(|_| Complex::new(unit(), unit())).collect()
}

fn max_err(a: &[Complex], b: &[Complex]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x.re - y.re).abs().max((x.im - y.im).abs())).fold(0.0, f64::max)
}

/// A tiny ring for hand-checkable identities (insecure, tests only): N = 16, two 50-bit
/// primes, scale 2^30.
struct Tiny {
    q: Vec<RingModulus>,
}

impl Tiny {
    fn n(&self) -> usize {
        16
    }
    fn q(&self) -> &[RingModulus] {
        &self.q
    }
    fn default_scale(&self) -> fhe_api::ckks::Scale {
        fhe_api::ckks::Scale::pow2(30).unwrap()
    }
    fn encoder(&self) -> Result<Encoder> {
        Encoder::for_ring(PolynomialSize(16), &self.q)
    }
}

fn tiny() -> Tiny {
    Tiny { q: primes_below(50, PolynomialSize(16), 2, &[]).unwrap().into_iter().map(RingModulus).collect() }
}

#[test]
fn round_trip_within_2_to_the_minus_30() {
    for preset in [Preset::Slots4096Scale40Depth2, Preset::Slots32768Scale40Depth34] {
        let p = preset.params();
        let enc = Encoder::new(p).unwrap();
        for slots in [p.slots(), 1024, 1] {
            for level in [0, p.max_level()] {
                let v = random_values(slots as u64, slots);
                let pt = enc.encode_with_slots(&v, slots, p.default_scale().value(), level).unwrap();
                assert_eq!(pt.len(), (level + 1) * p.n());
                let back = enc.decode(&pt, level, p.default_scale().value(), slots).unwrap();
                let e = max_err(&back, &v);
                assert!(e < pow2(-30), "{preset} slots {slots} level {level}: {e:e}");
            }
        }
    }
}

#[test]
fn sparse_plaintexts_live_in_the_subring() {
    let p = Preset::Slots4096Scale40Depth2.params();
    let enc = Encoder::new(p).unwrap();
    let pt = enc.encode_with_slots(&random_values(7, 64), 64, p.default_scale().value(), 1).unwrap();
    let gap = p.n() / 128;
    for (i, &c) in pt.iter().enumerate() {
        assert!((i % p.n()).is_multiple_of(gap) || c == 0, "coefficient {i}");
    }
    // Fewer values than slots are zero-padded.
    let short = enc.encode_real(&[1.5, -2.0], p.default_scale().value(), 0).unwrap();
    let back = enc.decode_real(&short, 0, p.default_scale().value(), p.slots()).unwrap();
    assert!((back[0] - 1.5).abs() < 1e-9 && (back[1] + 2.0).abs() < 1e-9 && back[2].abs() < 1e-9);
}

#[test]
fn known_vectors() {
    let p = Preset::Slots4096Scale40Depth2.params();
    let enc = Encoder::new(p).unwrap();
    let (n, delta) = (p.n(), 1u64 << 40);
    // All ones is the constant Delta.
    let ones = enc.encode_real(&vec![1.0; p.slots()], p.default_scale().value(), 2).unwrap();
    for (limb, q) in ones.chunks_exact(n).zip(p.q()) {
        assert_eq!(limb[0], delta % q.0);
        assert!(limb[1..].iter().all(|&c| c == 0));
    }
    // X has slot j = zeta^(5^j mod 2N), and encoding those values gives back X.
    let r = roots(p.log_n() + 1);
    let mut x = vec![0u64; 3 * n];
    for (limb, q) in p.q().iter().enumerate() {
        x[limb * n + 1] = delta % q.0;
    }
    let slots = enc.decode(&x, 2, p.default_scale().value(), p.slots()).unwrap();
    let mut e = 1usize;
    let expected: Vec<Complex> = (0..p.slots())
        .map(|_| {
            let z = r[e];
            e = e * 5 % (2 * n);
            z
        })
        .collect();
    assert!(max_err(&slots, &expected) < 1e-12);
    assert_eq!(enc.encode(&expected, p.default_scale().value(), 2).unwrap(), x);
    // With 8 slots, X^(N/16) has slot j = xi^(5^j mod 32), xi = zeta^(N/16).
    let mut y = vec![0u64; n];
    y[n / 16] = delta % p.q()[0].0;
    let slots = enc.decode(&y, 0, p.default_scale().value(), 8).unwrap();
    let mut e = 1usize;
    for z in slots {
        let w = r[e * n / 16];
        assert!((z.re - w.re).abs() < 1e-12 && (z.im - w.im).abs() < 1e-12);
        e = e * 5 % 32;
    }
}

/// The cross-platform contract: these words are what every platform must produce.
#[test]
fn encoding_is_pinned() {
    let p = Preset::Slots4096Scale40Depth2.params();
    let enc = Encoder::new(p).unwrap();
    // Dyadic inputs, so the vector itself is the same everywhere.
    let v: Vec<Complex> =
        (0..p.slots()).map(|j| Complex::new((j % 7) as f64 / 4.0 - 0.75, (j % 5) as f64 / 8.0)).collect();
    let hash = |words: &[u64]| {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let full = enc.encode(&v, p.default_scale().value(), 2).unwrap();
    let sparse = enc.encode_with_slots(&v[..256], 256, p.default_scale().value(), 1).unwrap();
    assert_eq!(full, enc.encode(&v, p.default_scale().value(), 2).unwrap());
    assert_eq!(hash(&full), "2941a6bc9da88652ceba1799e8bc752f15e6dfb3c43426d4648765121076bf3a");
    assert_eq!(hash(&sparse), "022899e9cbe0b88e998f42e1a7f8d6a83ad6cbc941f4b15cfae7ed89678665d5");
}

/// Naive negacyclic product mod q.
fn negacyclic(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    let mut c = vec![0u64; n];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            let t = mul_mod(x, y, q);
            let k = (i + j) % n;
            c[k] = if i + j < n { (c[k] + t) % q } else { (c[k] + q - t) % q };
        }
    }
    c
}

#[test]
fn products_and_automorphisms_act_on_slots() {
    let p = tiny();
    let enc = p.encoder().unwrap();
    let repeated = [p.q()[0], p.q()[0]];
    assert!(matches!(Encoder::for_ring(PolynomialSize(16), &repeated), Err(Error::InvalidRing(_))));
    let (n, scale) = (p.n(), p.default_scale().value());
    let (a, b) = (random_values(1, 8), random_values(2, 8));
    let (pa, pb) = (enc.encode(&a, scale, 1).unwrap(), enc.encode(&b, scale, 1).unwrap());
    let prod: Vec<u64> =
        (0..2).flat_map(|l| negacyclic(&pa[l * n..(l + 1) * n], &pb[l * n..(l + 1) * n], p.q()[l].0)).collect();
    let got = enc.decode(&prod, 1, scale * scale, 8).unwrap();
    let want: Vec<Complex> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
    assert!(max_err(&got, &want) < 1e-7, "{}", max_err(&got, &want));
    // X -> X^g on coefficients (a sign per wrap): g = 5 rotates slots left by one,
    // g = 2N - 1 conjugates them.
    let auto = |pt: &[u64], g: usize| -> Vec<u64> {
        let mut out = vec![0u64; pt.len()];
        for (l, limb) in pt.chunks_exact(n).enumerate() {
            let q = p.q()[l].0;
            for (i, &c) in limb.iter().enumerate() {
                let e = i * g % (2 * n);
                out[l * n + e % n] = if e < n || c == 0 { c } else { q - c };
            }
        }
        out
    };
    let rot = enc.decode(&auto(&pa, 5), 1, scale, 8).unwrap();
    let want: Vec<Complex> = (0..8).map(|j| a[(j + 1) % 8]).collect();
    assert!(max_err(&rot, &want) < 1e-8);
    let conj = enc.decode(&auto(&pa, 2 * n - 1), 1, scale, 8).unwrap();
    assert!(max_err(&conj, &a.iter().map(|z| z.conj()).collect::<Vec<_>>()) < 1e-8);
}

/// |x - r| <= ulp(r) / 2 for the exact integer x and the f64 r (both as BigInt).
fn is_nearest(x: &BigInt, r: f64) -> bool {
    if r == 0.0 {
        return x == &BigInt::from(0);
    }
    let bits = r.abs().to_bits();
    let (m, e) = ((bits & ((1 << 52) - 1)) | (1 << 52), ((bits >> 52) & 0x7ff) as i64 - 1075);
    let sign = if r < 0.0 { -1 } else { 1 };
    // 2 |x 2^-e - m| <= 1, scaled to integers by 2^-e when e < 0.
    let (xs, ms) = if e >= 0 {
        (x.clone(), BigInt::from(sign * m as i128) << e as usize)
    } else {
        (x.clone() << (-e) as usize, BigInt::from(sign * m as i128))
    };
    let half_ulp = if e >= 0 { BigInt::from(1) << e as usize } else { BigInt::from(1) };
    (xs - ms).magnitude() * 2u32 <= *half_ulp.magnitude()
}

#[test]
fn crt_is_exact_and_rounds_to_nearest() {
    let p = Preset::Slots32768Scale40Depth34.params();
    let q: Vec<u64> = p.q().iter().map(|m| m.0).collect();
    let crt = Crt::new(RnsBasis::new(p.q()).unwrap());
    let mut scratch = crt.scratch();
    let big_q: BigInt = q.iter().map(|&x| BigInt::from(x)).product();
    let residues = |x: &BigInt| -> Vec<u64> {
        q.iter().map(|&qi| (((x % qi) + qi) % qi).try_into().unwrap()).collect::<Vec<u64>>()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut cases: Vec<BigInt> = [0i64, 1, -1, 12345, -5].iter().map(|&v| BigInt::from(v)).collect();
    cases.push(BigInt::from(1) << 100usize);
    cases.push(-(BigInt::from(3) << 1000usize));
    let half: BigInt = (&big_q - BigInt::from(1)) / BigInt::from(2);
    cases.push(half.clone()); // the largest positive
    cases.push(-half); // the most negative
    for bits in [60usize, 64, 65, 120, 500, 1023, 1100] {
        let mut x = BigInt::from(rng.next_u64() | 1 << 63);
        while (x.bits() as usize) < bits {
            x = (x << 64) + rng.next_u64();
        }
        x >>= x.bits() as usize - bits;
        cases.push(if rng.next_u32() % 2 == 0 { x.clone() } else { -x });
    }
    for x in cases {
        let r = crt.to_f64(&residues(&x), &mut scratch);
        if x.bits() > 1024 {
            assert!(r.is_infinite() && (r < 0.0) == (x < BigInt::from(0)), "{x}");
        } else {
            assert!(is_nearest(&x, r), "{x} -> {r:e}");
        }
    }
    // Random residues: the centered value, whatever it is, is found exactly.
    for _ in 0..50 {
        let c: Vec<u64> = q.iter().map(|&qi| rng.next_u64() % qi).collect();
        let x: BigInt = c.iter().zip(&q).fold(BigInt::from(0), |acc, (&ci, &qi)| {
            let qh = &big_q / qi;
            let inv = inv_mod(((&qh % qi).try_into() as std::result::Result<u64, _>).unwrap(), qi);
            (acc + qh * mul_mod(ci, inv, qi)) % &big_q
        });
        let x = if &x * 2 > big_q { x - &big_q } else { x };
        let r = crt.to_f64(&c, &mut scratch);
        assert!(if x.bits() > 1024 { r.is_infinite() } else { is_nearest(&x, r) });
    }
}

#[test]
fn bad_inputs_are_errors() {
    let p = Preset::Slots4096Scale40Depth2.params();
    let enc = Encoder::new(p).unwrap();
    let s = p.default_scale().value();
    let e = |r: Result<Vec<u64>>| matches!(r, Err(Error::InvalidInput(_)));
    assert!(e(enc.encode(&vec![Complex::default(); p.slots() + 1], s, 0)));
    assert!(e(enc.encode_with_slots(&[], 3, s, 0)));
    assert!(e(enc.encode_with_slots(&[], p.slots() * 2, s, 0)));
    assert!(e(enc.encode(&[], s, 3)));
    assert!(e(enc.encode(&[], 0.0, 0)));
    assert!(e(enc.encode(&[], f64::NAN, 0)));
    assert!(e(enc.encode_real(&[f64::INFINITY], s, 0)));
    // One value spreads over N/2 coefficients: 2^100 / 2^12 * 2^40 = 2^128.
    let msg = enc.encode_real(&[pow2(100)], s, 0).unwrap_err().to_string();
    assert!(msg.contains("2^126"), "{msg}");
    assert!(enc.encode_real(&[pow2(80)], s, 0).is_ok());
    let ok = enc.encode_real(&[1.0], s, 1).unwrap();
    assert!(enc.decode(&ok[..p.n()], 1, s, p.slots()).is_err());
    let mut bad = ok.clone();
    bad[p.n() + 3] = p.q()[1].0;
    let msg = enc.decode(&bad, 1, s, p.slots()).unwrap_err().to_string();
    assert!(msg.contains("limb 1"), "{msg}");
    assert!(enc.decode(&ok, 1, s, 5).is_err());
}

/// `cargo test --release -p fhe-api --lib ckks::encoding -- --ignored --nocapture timing`
#[test]
#[ignore]
fn timing_at_n_2_to_the_16() {
    let p = Preset::Slots32768Scale40Depth34.params();
    let enc = Encoder::new(p).unwrap();
    let v = random_values(9, p.slots());
    let t = std::time::Instant::now();
    let _ = enc.encode(&v, p.default_scale().value(), 0).unwrap();
    println!("N = 2^16, first encode at 1 limb (builds the 2^17-entry root table): {:?}", t.elapsed());
    for level in [p.max_level(), 0] {
        let t = std::time::Instant::now();
        let pt = enc.encode(&v, p.default_scale().value(), level).unwrap();
        let te = t.elapsed();
        let t = std::time::Instant::now();
        let back = enc.decode(&pt, level, p.default_scale().value(), p.slots()).unwrap();
        let td = t.elapsed();
        println!("N = 2^16, {} limbs: encode {te:?}, decode {td:?}, max error {:e}", level + 1, max_err(&back, &v));
    }
}
