//! Misuse, other key sets, spent levels and overflowing scales are typed errors, before
//! anything runs; nothing returns `Ok` with garbage.

use std::sync::Arc;

use fhe_api::ckks::{Preset, Scale};
use fhe_api::{Backend, Error, KeyNeed, LevelNeed};

use super::{encrypt, random_values, setup};
use crate::ckks::{Complex, KeygenOptions};
use fhe_api::Seed;

/// Misuse returns the documented errors, each naming an operation that exists.
pub fn rejects_misuse(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend, preset, 5);
    let x = random_values(8, 51);
    let a = encrypt(&ctx, &keys, &x, 7);
    let top = a.level();
    let low = ev.drop_to_level(&a, 0).unwrap();
    let e = ev.add(&a, &low).unwrap_err();
    assert!(matches!(e, Error::Level { op: "add", found: 0, needed: LevelNeed::Equal(l) } if l == top), "{e}");
    assert!(e.to_string().contains("Evaluator::drop_to_level"), "{e}");
    assert!(matches!(ev.mul(&a, &low), Err(Error::Level { op: "mul", .. })));
    assert!(matches!(ev.rescale(&low), Err(Error::Level { op: "rescale", needed: LevelNeed::AtLeast(1), .. })));
    assert!(matches!(ev.drop_to_level(&low, 1), Err(Error::Level { op: "drop_to_level", .. })));
    let sq = ev.mul(&a, &a).unwrap();
    let e = ev.add(&a, &sq).unwrap_err();
    assert!(matches!(e, Error::ScaleMismatch { op: "add", .. }), "{e}");
    assert!(e.to_string().contains("Evaluator::rescale_to"), "{e}");
    let e = ev.rotate(&a, 5).unwrap_err();
    assert!(matches!(e, Error::MissingKey(KeyNeed::Rotation { steps: 5, .. })), "{e}");
    let bare = ctx.evaluator(&Default::default()).unwrap();
    assert!(matches!(bare.mul(&a, &a), Err(Error::MissingKey(KeyNeed::Relinearization))));
    assert!(matches!(bare.conjugate(&a), Err(Error::MissingKey(KeyNeed::Conjugation { .. }))));
    let too_many = vec![Complex::default(); ctx.params().slots() + 1];
    assert!(ctx.encode(&too_many).is_err());
    assert!(ev.add_const(&a, f64::NAN).is_err());
    // A product whose scale would reach the modulus is refused before it runs: two
    // default-scale ciphertexts at level 0 (2^80 over q_0's 55-60 bits).
    let e = ev.mul(&low, &low).unwrap_err();
    assert!(matches!(e, Error::ScaleOverflow { op: "mul", level: 0, .. }), "{e}");
    // A product at a small scale that fits stays allowed.
    let small = Scale::pow2(20).unwrap();
    let s = ctx.encrypt_seeded(&keys.pk, &ctx.encode_at(&x, 0, small).unwrap(), &Seed::derive("small", 0)).unwrap();
    assert!(ev.mul(&s, &s).is_ok(), "{preset}: 2^40 fits at level 0");
    // Scales no constructor takes.
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::MIN_POSITIVE / 4.0] {
        assert!(Scale::new(bad).is_err(), "{bad:e}");
    }
    assert!(matches!(ctx.encode_at(&x, 0, Scale::pow2(70).unwrap()), Err(Error::ScaleOverflow { .. })));
    // The automatic mode has no level to rescale into at level 0.
    let auto = ctx.evaluator_with(&keys.eval, crate::ckks::Mode::Auto).unwrap();
    assert!(matches!(auto.mul(&s, &s), Err(Error::Level { op: "mul", .. })));
    // A degree-2 product cannot be downloaded or rotated before relinearization.
    let t = ev.tensor(&a, &a).unwrap();
    assert!(ev.download(&t).is_err() && ev.rotate(&t, 1).is_err());
}

/// Another key set's objects (same preset) are `Error::WrongKey`: decryption with the
/// other secret key, an evaluator holding the other set's keys, and mixing the two sets
/// in one operation. Another preset's are `Error::ParamMismatch`.
pub fn other_key_sets_are_refused(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend.clone(), preset, 8);
    let (_, other, other_ev) = setup(backend.clone(), preset, 9);
    let x = random_values(8, 81);
    let a = encrypt(&ctx, &keys, &x, 8);
    let b = ctx.encrypt_seeded(&other.pk, &ctx.encode(&x).unwrap(), &Seed::derive("other", 0)).unwrap();
    let wrong = |r: fhe_api::Result<_>| matches!(r, Err(Error::WrongKey { .. }));
    assert!(wrong(ctx.decrypt(&other.sk, &a).map(|_| ())), "{preset}: decrypt under another secret key");
    assert!(wrong(other_ev.mul(&a, &a).map(|_| ())), "{preset}: another set's evaluator");
    assert!(wrong(ev.add(&a, &b).map(|_| ())), "{preset}: two sets in one sum");
    assert!(wrong(ev.rotate(&b, 1).map(|_| ())), "{preset}: a rotation of another set's ciphertext");
    assert!(wrong(ev.add_keys(&other.eval)), "{preset}: another set's keys added to an evaluator");
    let mixed = fhe_api::ckks::EvalKeys { relin: other.eval.relin.clone(), galois: keys.eval.galois.clone() };
    assert!(wrong(ctx.evaluator(&mixed).map(|_| ())), "{preset}: keys of two sets in one evaluator");
    let elsewhere = Preset::ALL.into_iter().find(|&p| p != preset).unwrap();
    let other_ctx = crate::ckks::Context::from_preset(backend, elsewhere).unwrap();
    let o = other_ctx.keygen_from_seed(&Seed::derive("elsewhere", 0), &KeygenOptions::default()).unwrap();
    assert!(matches!(ctx.decrypt(&o.sk, &a), Err(Error::ParamMismatch { .. })));
}
