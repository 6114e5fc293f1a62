//! Words equal to the oracle's, hoisting, one evaluator on many threads, fresh noise and
//! the depth chain.

use std::sync::Arc;

use fhe_api::ckks::{Ciphertext, Plaintext, Preset};
use fhe_api::{Backend, Error, Seed};

use super::{encrypt, random_values, setup};
use crate::ckks::{precision_bits, Complex};

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

/// Hoisted rotations give the same words as separate ones, in one call and from a kept
/// decomposition reused across two rotation sets (and a rotation by zero is the input).
pub fn hoisted_equals_separate(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend, preset, 2);
    let cx = encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 21), 3);
    let steps = [1, 2, 3, 4];
    let hoisted = ev.rotate_hoisted(&cx, &steps).unwrap();
    let kept = ev.hoist(&cx).unwrap();
    let (first, second) =
        (ev.rotate_hoisted_with(&kept, &[3, 1]).unwrap(), ev.rotate_hoisted_with(&kept, &[4, 2, 0]).unwrap());
    for (h, &k) in hoisted.iter().zip(&steps) {
        let single = ev.download(&ev.rotate(&cx, k).unwrap()).unwrap();
        assert_eq!(ev.download(h).unwrap(), single, "{preset}: rotation {k}");
        let again = match k {
            3 => &first[0],
            1 => &first[1],
            4 => &second[0],
            _ => &second[1],
        };
        assert_eq!(ev.download(again).unwrap(), single, "{preset}: kept decomposition, rotation {k}");
    }
    assert_eq!(ev.download(&second[2]).unwrap(), ev.download(&cx).unwrap(), "{preset}: rotation by 0");
}

/// A product relinearized and rescaled in one backend call (`CkksOps::mul_relin_rescale`,
/// which the automatic mode's `mul` and the circuits' products use) gives the words of the
/// two steps, at the top level and lower; so does the automatic mode's `mul`.
pub fn fused_product_equals_its_steps(backend: Arc<dyn Backend>, preset: Preset) {
    let (ctx, keys, ev) = setup(backend, preset, 6);
    let auto = ctx.evaluator_with(&keys.eval, crate::ckks::Mode::Auto).unwrap();
    let a = encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 41), 7);
    let b = encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 42), 8);
    let top = a.level();
    for level in [top, top.div_ceil(2).max(1)] {
        let (x, y) = (ev.drop_to_level(&a, level).unwrap(), ev.drop_to_level(&b, level).unwrap());
        let steps = ev.rescale(&ev.mul_relin_only(&x, &y).unwrap()).unwrap();
        let fused = ev.mul_relin_rescale_only(&x, &y).unwrap();
        assert_eq!((fused.level(), fused.scale()), (steps.level(), steps.scale()), "{preset}: level {level}");
        let want = ev.download(&steps).unwrap();
        assert_eq!(ev.download(&fused).unwrap(), want, "{preset}: fused product at level {level}");
        assert_eq!(auto.download(&auto.mul(&x, &y).unwrap()).unwrap(), want, "{preset}: automatic mul at {level}");
    }
    let at0 = ev.drop_to_level(&a, 0).unwrap();
    assert!(ev.mul_relin_rescale_only(&at0, &at0).is_err(), "{preset}: a product at level 0 has no rescale");
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
    assert!(matches!(ev.rescale(&ct), Err(Error::Level { .. })));
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
    let relin = |e: &crate::ckks::Evaluator, a, b| e.relinearize(&e.tensor(a, b).unwrap()).unwrap();
    same("tensor+relinearize", &relin(&e1, &a1, &b1), &relin(&e2, &a2, &b2));
    same("tensor+relinearize = mul", &relin(&e1, &a1, &b1), &e2.mul(&a2, &b2).unwrap());
    same("mul_i", &e1.mul_i(&a1).unwrap(), &e2.mul_i(&a2).unwrap());
    let c = Complex::new(0.5, -0.75);
    same("mul_const", &e1.mul_const(&a1, c).unwrap(), &e2.mul_const(&a2, c).unwrap());
    same("add_const", &e1.add_const(&a1, c).unwrap(), &e2.add_const(&a2, c).unwrap());
    let (p1, p2) = (c1.encode(&values).unwrap(), c2.encode(&values).unwrap());
    same("mul_plain", &e1.mul_plain(&a1, &p1).unwrap(), &e2.mul_plain(&a2, &p2).unwrap());
    let t = c1.params().scale_at(a1.level() - 1);
    same(
        "rescale_to",
        &e1.rescale_to(&a1, a1.level() - 1, t).unwrap(),
        &e2.rescale_to(&a2, a2.level() - 1, t).unwrap(),
    );
    let (h1, h2) = (e1.rotate_hoisted(&a1, &[2, -1]).unwrap(), e2.rotate_hoisted(&a2, &[2, -1]).unwrap());
    same("rotate_hoisted", &h1[1], &h2[1]);
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
