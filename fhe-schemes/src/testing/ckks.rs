//! The CKKS conformance suite: generic functions over any backend that declares the
//! CKKS capability, stamped per backend by [`crate::ckks_conformance_tests!`]. Words are
//! compared with the CPU oracle's (same seeds), and decrypted values with plaintext
//! arithmetic, with the measured precision in bits.

use std::sync::Arc;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::ckks::Complex;
use crate::ckks::Evaluator;
use crate::ckks::KeygenOptions;
use crate::ckks::{precision_bits, Context};
use fhe_api::ckks::entities::{KeySet, Plaintext};
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::{Backend, Error, Seed};

/// Rotation steps every suite key set carries.
pub const ROTATIONS: [i64; 5] = [1, 2, 3, 4, -1];

/// The preset `LUX_CKKS_PRESET` names, else `slots32768-scale40-depth34`: the one the
/// ignored measurements run by default. Panics on a name that is not a preset.
pub fn preset_from_env() -> Preset {
    std::env::var("LUX_CKKS_PRESET")
        .ok()
        .map(|s| s.parse().expect("LUX_CKKS_PRESET names a CKKS preset"))
        .unwrap_or(Preset::Slots32768Scale40Depth34)
}

/// Values in the unit disc from a seed.
pub fn random_values(count: usize, seed: u64) -> Vec<Complex> {
    let mut r = ChaCha20Rng::seed_from_u64(seed);
    let mut unit = || (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    (0..count).map(|_| Complex { re: unit() * 0.7, im: unit() * 0.7 }).collect()
}

/// A context, keys (relin, [`ROTATIONS`], conjugation) and evaluator from a seed.
pub fn setup(backend: Arc<dyn Backend>, preset: Preset, seed: u64) -> (Context, KeySet, Evaluator) {
    let ctx = Context::from_preset(backend, preset).expect("context");
    let options = KeygenOptions { relin: true, rotations: ROTATIONS.to_vec(), conjugation: true };
    let keys = ctx.keygen_from_seed(&Seed::derive("lux-fhe-ckks-conformance", seed), &options).expect("keygen");
    let ev = ctx.evaluator(&keys.eval).expect("evaluator");
    (ctx, keys, ev)
}

fn encrypt(ctx: &Context, keys: &KeySet, values: &[Complex], seed: u64) -> Ciphertext {
    let pt = ctx.encode(values).expect("encode");
    ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-encrypt", seed)).expect("encrypt")
}

fn rotate_plain(v: &[Complex], k: i64) -> Vec<Complex> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

/// One operation's measured precision.
#[derive(Debug, Clone)]
pub struct OpPrecision {
    pub op: &'static str,
    pub bits: f64,
}

/// Every evaluator operation against plaintext arithmetic; panics when an operation's
/// precision falls below `min_bits`. Returns the measured precisions.
pub fn ops_match_plaintext(backend: Arc<dyn Backend>, preset: Preset, min_bits: f64) -> Vec<OpPrecision> {
    let (ctx, keys, ev) = setup(backend, preset, 1);
    let slots = ctx.params().slots();
    let (x, y) = (random_values(slots, 11), random_values(slots, 12));
    let (cx, cy) = (encrypt(&ctx, &keys, &x, 1), encrypt(&ctx, &keys, &y, 2));
    let dec = |h: &Ciphertext| ctx.decrypt(&keys.sk, h).expect("decrypt");
    let zip = |f: &dyn Fn(Complex, Complex) -> Complex| x.iter().zip(&y).map(|(&a, &b)| f(a, b)).collect::<Vec<_>>();
    let mut out = Vec::new();
    let mut check = |op: &'static str, got: &Ciphertext, want: &[Complex]| {
        let bits = precision_bits(&dec(got), want);
        assert!(bits >= min_bits, "{preset} {op}: {bits:.1} bits < {min_bits}");
        out.push(OpPrecision { op, bits });
    };
    check("encrypt", &cx, &x);
    check("encrypt_os_randomness", &ctx.encrypt(&keys.pk, &ctx.encode(&x).unwrap()).unwrap(), &x);
    check("encrypt_sk_os_randomness", &ctx.encrypt_sk(&keys.sk, &ctx.encode(&x).unwrap()).unwrap(), &x);
    check("add", &ev.add(&cx, &cy).unwrap(), &zip(&|a, b| a + b));
    check("sub", &ev.sub(&cx, &cy).unwrap(), &zip(&|a, b| a - b));
    check("negate", &ev.negate(&cx).unwrap(), &x.iter().map(|&a| -a).collect::<Vec<_>>());
    check("mul_relin_rescale", &ev.mul_rescale(&cx, &cy).unwrap(), &zip(&|a, b| a * b));
    let py = ctx.encode(&y).unwrap();
    check("add_plain", &ev.add_plain(&cx, &py).unwrap(), &zip(&|a, b| a + b));
    check("mul_plain_rescale", &ev.rescale(&ev.mul_plain(&cx, &py).unwrap()).unwrap(), &zip(&|a, b| a * b));
    let c = Complex { re: 0.375, im: 0.0 };
    check("add_const", &ev.add_const(&cx, 0.375).unwrap(), &x.iter().map(|&a| a + c).collect::<Vec<_>>());
    check(
        "mul_const_rescale",
        &ev.rescale(&ev.mul_const(&cx, -1.25).unwrap()).unwrap(),
        &x.iter().map(|a| *a * -1.25).collect::<Vec<_>>(),
    );
    check("mul_int", &ev.mul_int(&cx, 3).unwrap(), &x.iter().map(|&a| a * 3.0).collect::<Vec<_>>());
    for k in ROTATIONS {
        check("rotate", &ev.rotate(&cx, k).unwrap(), &rotate_plain(&x, k));
    }
    check("conjugate", &ev.conjugate(&cx).unwrap(), &x.iter().map(|a| a.conj()).collect::<Vec<_>>());
    let dropped = ev.drop_to_level(&cx, 0).unwrap();
    check("drop_to_level", &dropped, &x);
    // Multiply, then rotate: the end-to-end check.
    let prod = ev.mul_rescale(&cx, &cy).unwrap();
    check("mul_then_rotate", &ev.rotate(&prod, 3).unwrap(), &rotate_plain(&zip(&|a, b| a * b), 3));
    out
}

/// The noise of `got` against `want` on `q_0`'s limb: `(got - want) mod q_0`, centered in
/// `(-q_0/2, q_0/2]`, in integers (an `f64` of a 55-60-bit word would round it).
pub fn coefficient_noise(got: &Plaintext, want: &Plaintext) -> Vec<i64> {
    let (q0, n) = (got.params().q()[0].0, got.params().n());
    got.coeffs()[..n]
        .iter()
        .zip(&want.coeffs()[..n])
        .map(|(&g, &m)| {
            let d = (g + q0 - m) % q0;
            if d > q0 / 2 {
                d as i64 - q0 as i64
            } else {
                d as i64
            }
        })
        .collect()
}

/// A fresh public-key encryption's coefficient noise is the rounding of the division by
/// `p_0` (`fhe-api/src/ckks/encrypt.rs`): `-(r0 + r1 s) / p` with `r / p` uniform on
/// `[-1/2, 1/2)`, so its variance is `(1 + w) / 12` for a secret of Hamming weight `w`.
/// Without the division it would be `v e + e0 + e1 s`, about 16 times the deviation at
/// `N = 2^13`. Checked on the noise of `q_0`'s limb over all `N` coefficients (the
/// estimate's relative error is below 2% there).
pub fn fresh_noise_is_the_rounding(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, _) = setup(backend, preset, 4);
    let pt = ctx.encode(&random_values(ctx.params().slots(), 31)).unwrap();
    let w = keys.sk.coefficients().iter().filter(|&&s| s != 0).count() as f64;
    let want = ((1.0 + w) / 12.0).sqrt();
    for seed in 1..=2 {
        let c = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-noise", seed)).unwrap();
        let noise = coefficient_noise(&ctx.decrypt_plaintext(&keys.sk, &c).unwrap(), &pt);
        let rms = (noise.iter().map(|&e| (e as f64) * (e as f64)).sum::<f64>() / noise.len() as f64).sqrt();
        assert!((rms / want - 1.0).abs() < 0.1, "{preset}: fresh noise rms {rms:.1}, the rounding's {want:.1}");
    }
}

/// Hoisted rotations give the same words as separate ones.
pub fn hoisted_equals_separate(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend, preset, 2);
    let cx = encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 21), 3);
    let steps = [1, 2, 3, 4];
    let hoisted = ev.rotate_hoisted(&cx, &steps).unwrap();
    for (h, &k) in hoisted.iter().zip(&steps) {
        let single = ev.rotate(&cx, k).unwrap();
        assert_eq!(ev.download(h).unwrap(), ev.download(&single).unwrap(), "{preset}: rotation {k}");
    }
}

/// Multiplies until the chain is spent: each level multiplies by an encryption of other
/// unit-circle values (cut to the running ciphertext's level) and rescales, so the
/// product stays on the unit circle and errors add up level by level (repeated squaring
/// would double the relative error at every level instead). The precision after every
/// level must stay above `min_bits`; returns the final precision.
pub fn depth_chain(backend: Arc<dyn Backend>, preset: Preset, min_bits: f64) -> f64 {
    let (ctx, keys, ev) = setup(backend, preset, 3);
    let unit = |seed| -> Vec<Complex> {
        random_values(ctx.params().slots(), seed)
            .into_iter()
            .map(|c| {
                let r = (c.re * c.re + c.im * c.im).sqrt().max(1e-3);
                Complex { re: c.re / r, im: c.im / r }
            })
            .collect()
    };
    let (x, z) = (unit(31), unit(32));
    let mut want = x.clone();
    let mut ct = encrypt(&ctx, &keys, &x, 4);
    let factor = encrypt(&ctx, &keys, &z, 5);
    let mut bits = 60.0;
    while ct.level() > 0 {
        let f = ev.drop_to_level(&factor, ct.level()).unwrap();
        ct = ev.mul_rescale(&ct, &f).unwrap();
        want = want.iter().zip(&z).map(|(a, b)| *a * *b).collect();
        bits = precision_bits(&ctx.decrypt(&keys.sk, &ct).unwrap(), &want);
        eprintln!("{preset}: level {:>2}: {bits:.1} bits", ct.level());
        assert!(bits >= min_bits, "{preset}: {bits:.1} bits at level {}", ct.level());
    }
    assert!(matches!(ev.rescale(&ct), Err(Error::Level(_))));
    bits
}

/// Same seeds, same words: keys, encryptions and every operation's output.
pub fn byte_equal_to_oracle(backend: Arc<dyn Backend>, oracle: Arc<dyn Backend>, preset: Preset) {
    let (c1, k1, e1) = setup(backend, preset, 4);
    let (c2, k2, e2) = setup(oracle, preset, 4);
    assert_eq!(k1.pk, k2.pk, "{preset}: public key");
    assert_eq!(k1.eval.relin, k2.eval.relin, "{preset}: relinearization key");
    assert_eq!(k1.eval.galois, k2.eval.galois, "{preset}: Galois keys");
    let values = random_values(c1.params().slots(), 41);
    let (a1, a2) = (encrypt(&c1, &k1, &values, 5), encrypt(&c2, &k2, &values, 5));
    let (b1, b2) = (encrypt(&c1, &k1, &values, 6), encrypt(&c2, &k2, &values, 6));
    let same = |what: &str, x: &Ciphertext, y: &Ciphertext| {
        assert_eq!(e1.download(x).unwrap(), e2.download(y).unwrap(), "{preset}: {what}");
    };
    same("encrypt", &a1, &a2);
    same("mul_relin", &e1.mul(&a1, &b1).unwrap(), &e2.mul(&a2, &b2).unwrap());
    same("rescale", &e1.rescale(&a1).unwrap(), &e2.rescale(&a2).unwrap());
    same("rotate", &e1.rotate(&a1, 1).unwrap(), &e2.rotate(&a2, 1).unwrap());
    same("conjugate", &e1.conjugate(&a1).unwrap(), &e2.conjugate(&a2).unwrap());
    same("add", &e1.add(&a1, &b1).unwrap(), &e2.add(&a2, &b2).unwrap());
}

/// One evaluator shared by several threads at once gives the words of one thread.
pub fn evaluator_is_shared_across_threads(backend: Arc<dyn Backend>, preset: Preset) {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let (ctx, keys, ev) = setup(backend, preset, 6);
    assert_send_sync(&ev);
    assert_send_sync(&ctx);
    let cts: Vec<Ciphertext> =
        (0..4).map(|i| encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 60 + i), 60 + i)).collect();
    let work = |ct: &Ciphertext| ev.download(&ev.rotate(&ev.mul(ct, ct).unwrap(), 1).unwrap()).unwrap();
    let alone: Vec<_> = cts.iter().map(work).collect();
    let shared: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cts.iter().map(|ct| s.spawn(|| work(ct))).collect();
        handles.into_iter().map(|h| h.join().expect("a worker thread")).collect()
    });
    assert_eq!(alone, shared, "{preset}: words differ between one thread and four");
}

/// Misuse returns the documented errors.
pub fn rejects_misuse(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend, preset, 5);
    let x = random_values(8, 51);
    let a = encrypt(&ctx, &keys, &x, 7);
    let low = ev.drop_to_level(&a, 0).unwrap();
    assert!(matches!(ev.add(&a, &low), Err(Error::Level(_))));
    assert!(matches!(ev.mul(&a, &low), Err(Error::Level(_))));
    assert!(matches!(ev.rescale(&low), Err(Error::Level(_))));
    assert!(matches!(ev.drop_to_level(&low, 1), Err(Error::Level(_))));
    let sq = ev.mul(&a, &a).unwrap();
    assert!(matches!(ev.add(&a, &sq), Err(Error::ScaleMismatch { .. })));
    assert!(matches!(ev.rotate(&a, 5), Err(Error::MissingKey(_))));
    let bare = ctx.evaluator(&Default::default()).unwrap();
    assert!(matches!(bare.mul(&a, &a), Err(Error::MissingKey(_))));
    assert!(matches!(bare.conjugate(&a), Err(Error::MissingKey(_))));
    let too_many = vec![Complex::default(); ctx.params().slots() + 1];
    assert!(ctx.encode(&too_many).is_err());
    assert!(ev.add_const(&a, f64::NAN).is_err());
}

/// Stamps the CKKS suite for one backend. `ckks_conformance_tests!(backend, oracle,
/// preset = Preset::X)` runs it; `ckks_conformance_tests!(unsupported = "why")`
/// stamps the same test names as `#[ignore]`d with the reason (a backend without the
/// capability is reported as skipped, never as a pass).
#[macro_export]
macro_rules! ckks_conformance_tests {
    (unsupported = $reason:literal) => {
        mod ckks_conformance {
            #[test]
            #[ignore = $reason]
            fn ckks_ops_match_plaintext() {}
            #[test]
            #[ignore = $reason]
            fn ckks_byte_equal_to_oracle() {}
            #[test]
            #[ignore = $reason]
            fn ckks_depth_chain() {}
        }
    };
    ($backend:expr, $oracle:expr, preset = $preset:expr) => {
        mod ckks_conformance {
            #[allow(unused_imports)]
            use super::*;
            use $crate::testing::ckks as suite;

            #[test]
            fn ckks_ops_match_plaintext() {
                let report = suite::ops_match_plaintext($backend, $preset, 15.0);
                for r in report {
                    eprintln!("{}: {} {:.1} bits", $preset, r.op, r.bits);
                }
            }
            #[test]
            fn ckks_hoisted_equals_separate() {
                suite::hoisted_equals_separate($backend, $preset);
            }
            #[test]
            fn ckks_fresh_noise_is_the_rounding() {
                suite::fresh_noise_is_the_rounding($backend, $preset);
            }
            #[test]
            fn ckks_depth_chain() {
                let bits = suite::depth_chain($backend, $preset, 10.0);
                eprintln!("{}: {bits:.1} bits after the whole chain", $preset);
            }
            #[test]
            fn ckks_byte_equal_to_oracle() {
                suite::byte_equal_to_oracle($backend, $oracle, $preset);
            }
            #[test]
            fn ckks_rejects_misuse() {
                suite::rejects_misuse($backend, $preset);
            }
            #[test]
            fn ckks_evaluator_is_shared_across_threads() {
                suite::evaluator_is_shared_across_threads($backend, $preset);
            }
        }
    };
}
