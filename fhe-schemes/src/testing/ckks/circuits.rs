//! Circuits on a backend: Chebyshev series, linear transforms, slot sums and
//! bootstrapping, at an INSECURE `N = 2^12` configuration (the secure bootstrappable
//! preset takes minutes per key set; these take seconds). Values against `f64`, words
//! against the oracle.

use std::collections::BTreeMap;
use std::sync::Arc;

use fhe_api::ckks::entities::KeySet;
use fhe_api::ckks::params::{Params, ParamsLiteral, SecretDist};
use fhe_api::ckks::Ciphertext;
use fhe_api::{Backend, Seed};

use super::random_values;
use crate::ckks::circuits::{chebyshev_depth, sum_rotations};
use crate::ckks::{
    precision_bits, BootstrapConfig, Bootstrapper, Chebyshev, Complex, Context, DiagonalForm, Evaluator, KeyLevels,
    KeygenOptions, LinearTransform, Mode,
};

/// `N = 2^12`, 24 levels of 50 bits over a 60-bit first prime, `dnum` 4: far below
/// 128-bit security (`Params::insecure_for_tests`), for tests whose names say so.
pub fn insecure_params(secret: SecretDist) -> Arc<Params> {
    let lit = ParamsLiteral {
        name: "circuits-n4096".into(),
        log_n: 12,
        scale_bits: 50,
        depth: 24,
        first_bits: 60,
        special_bits: 60,
        dnum: 4,
        secret,
    };
    Arc::new(Params::insecure_for_tests(&lit).expect("a valid chain"))
}

/// A context, keys for `options` and an evaluator in `mode`, from a seed.
pub fn insecure_setup(
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    options: &KeygenOptions,
    mode: Mode,
) -> (Context, KeySet, Evaluator) {
    let ctx = Context::new(backend, params).expect("context");
    let keys = ctx.keygen_from_seed(&Seed::derive("lux-fhe-ckks-circuits", 1), options).expect("keygen");
    let ev = ctx.evaluator_with(&keys.eval, mode).expect("evaluator");
    (ctx, keys, ev)
}

/// With `levels`: [`insecure_setup`]'s keys (the same words) made from the secret key
/// into the evaluator one at a time, the Galois keys in `levels` prepared up to their
/// levels (`Context::evaluator_from_secret`, checked by [`check_key_levels`]); without,
/// [`insecure_setup`].
pub fn insecure_setup_up_to(
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    options: &KeygenOptions,
    mode: Mode,
    levels: Option<&KeyLevels>,
) -> (Context, KeySet, Evaluator) {
    let Some(levels) = levels else { return insecure_setup(backend, params, options, mode) };
    let ctx = Context::new(backend, params).expect("context");
    let seed = Seed::derive("lux-fhe-ckks-circuits", 1);
    let keys = ctx.keygen_from_seed(&seed, &KeygenOptions::default()).expect("keygen");
    let ev = ctx.evaluator_from_secret(&keys.sk, options, mode, levels, &seed).expect("evaluator");
    check_key_levels(&ev, levels);
    (ctx, keys, ev)
}

/// Some key of `levels` serves levels below the top (else the test proves nothing), and
/// `ev` kept each key up to its level or whole.
pub fn check_key_levels(ev: &Evaluator, levels: &KeyLevels) {
    let top = ev.params().max_level();
    assert!(levels.galois.values().any(|&l| l < top), "a key below the top");
    for (&g, &l) in &levels.galois {
        let kept = ev.galois_key_level(g).expect("a key for every element");
        assert!(kept == l || kept == top, "key {g}: asked up to {l}, kept up to {kept}");
    }
}

fn real_values(count: usize, seed: u64, lo: f64, hi: f64) -> Vec<Complex> {
    random_values(count, seed)
        .into_iter()
        .map(|v| Complex::new(lo + (v.re / 0.7 + 1.0) / 2.0 * (hi - lo), 0.0))
        .collect()
}

fn encrypt(ctx: &Context, keys: &KeySet, values: &[Complex], level: usize, seed: u64) -> Ciphertext {
    let pt = ctx.encode_at(values, level, ctx.params().scale_at(level)).expect("encode");
    ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-circuits-encrypt", seed)).expect("encrypt")
}

/// A degree-59 series on `[-1, 1]` spends exactly its 6 levels, and `exp` on `[-2, 3]`
/// (a change of variable) one more; both decrypt within `min_bits` of `f64`.
pub fn insecure_chebyshev_series_match_f64(backend: Arc<dyn Backend>, min_bits: f64) -> f64 {
    let params = insecure_params(SecretDist::Ternary);
    let (ctx, keys, ev) = insecure_setup(backend, params.clone(), &KeygenOptions::default(), Mode::Auto);
    let top = params.max_level();
    let mut worst = f64::INFINITY;
    let f = |x: f64| (3.0 * x).cos() + 0.25 * x;
    for (poly, lo, hi, extra, fx) in [
        (Chebyshev::interpolate(f, -1.0, 1.0, 59).unwrap(), -1.0, 1.0, 0, &f as &dyn Fn(f64) -> f64),
        (Chebyshev::interpolate(f64::exp, -2.0, 3.0, 15).unwrap(), -2.0, 3.0, 1, &f64::exp),
    ] {
        let x = real_values(params.slots(), 11, lo, hi);
        let ct = encrypt(&ctx, &keys, &x, top, 12);
        let y = ev.eval_chebyshev(&ct, &poly).expect("eval_chebyshev");
        assert_eq!(y.level(), top - chebyshev_depth(poly.degree()) - extra, "degree {}", poly.degree());
        assert!(y.scale().same_as(params.scale_at(y.level())));
        let want: Vec<Complex> = x.iter().map(|v| Complex::new(fx(v.re), 0.0)).collect();
        let bits = precision_bits(&ctx.decrypt(&keys.sk, &y).unwrap(), &want);
        assert!(bits >= min_bits, "degree {}: {bits:.1} bits", poly.degree());
        worst = worst.min(bits);
    }
    worst
}

/// A transform with eleven scattered diagonals on all slots and one on a sparse packing
/// of 64 slots agree with their plain product; a missing rotation key is a typed error.
pub fn insecure_linear_transforms_match_plain(backend: Arc<dyn Backend>, min_bits: f64) -> f64 {
    let params = insecure_params(SecretDist::Ternary);
    let (ctx, keys, ev) = insecure_setup(backend, params.clone(), &KeygenOptions::default(), Mode::Manual);
    let top = params.max_level();
    let mut worst = f64::INFINITY;
    for n in [params.slots(), 64] {
        let offsets = [0usize, 1, 2, 3, 5, 8, 13, n / 2, n - 1, n - 4, n - 7];
        let diagonals: BTreeMap<usize, Vec<Complex>> =
            offsets.iter().enumerate().map(|(i, &k)| (k, random_values(n, 100 + i as u64))).collect();
        let lt = LinearTransform::from_diagonals(n, diagonals).unwrap();
        let x = random_values(n, 7);
        let pt = ctx.encode_sparse(&x, n, top, params.scale_at(top)).unwrap();
        let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-lt", n as u64)).unwrap();
        let q = params.q()[top].0 as f64;
        let scale = fhe_api::ckks::Scale::new(q).unwrap();
        let prepared = ctx.prepare_linear_transform(&ev, &lt, top, scale).unwrap();
        assert!(matches!(ev.linear_transform(&ct, &prepared), Err(fhe_api::Error::MissingKey(_))));
        ev.add_keys(&ctx.rotation_keys(&keys.sk, &lt.rotations()).unwrap()).unwrap();
        let y = ev.rescale(&ev.linear_transform(&ct, &prepared).unwrap()).unwrap();
        // Compact diagonals (where the backend keeps them so) give the same words.
        let compact = ctx.prepare_linear_transform_as(&ev, &lt, top, scale, DiagonalForm::Compact).unwrap();
        let z = ev.rescale(&ev.linear_transform(&ct, &compact).unwrap()).unwrap();
        assert_eq!(ev.download(&y).unwrap(), ev.download(&z).unwrap(), "{n} slots: compact diagonals");
        let bits = precision_bits(&ctx.decrypt_slots(&keys.sk, &y, n).unwrap(), &lt.apply_plain(&x));
        assert!(bits >= min_bits, "{n} slots: {bits:.1} bits");
        worst = worst.min(bits);
    }
    worst
}

/// Sums over all slots and over a stride, and an inner product, against `f64`.
pub fn insecure_slot_sums_match_plain(backend: Arc<dyn Backend>, min_bits: f64) -> f64 {
    let params = insecure_params(SecretDist::Ternary);
    let n = params.slots();
    let mut rotations = sum_rotations(1, n);
    rotations.extend(sum_rotations(64, n / 64));
    let options = KeygenOptions { relin: true, rotations, conjugation: false };
    let (ctx, keys, ev) = insecure_setup(backend, params.clone(), &options, Mode::Auto);
    let (a, b) = (random_values(n, 21), random_values(n, 22));
    let (ca, cb) = (encrypt(&ctx, &keys, &a, 10, 23), encrypt(&ctx, &keys, &b, 10, 24));
    let total = a.iter().fold(Complex::default(), |s, &v| s + v);
    let dot = a.iter().zip(&b).fold(Complex::default(), |s, (&x, &y)| s + x * y);
    let strided: Vec<Complex> =
        (0..n).map(|j| (0..n / 64).fold(Complex::default(), |s, k| s + a[(j + 64 * k) % n])).collect();
    let checks = [
        (ev.sum_slots(&ca, n).unwrap(), vec![total; n]),
        (ev.inner_product(&ca, &cb, n).unwrap(), vec![dot; n]),
        (ev.rotate_and_sum(&ca, 64, n / 64).unwrap(), strided),
    ];
    let mut worst = f64::INFINITY;
    for (ct, want) in checks {
        let bits = precision_bits(&ctx.decrypt(&keys.sk, &ct).unwrap(), &want);
        assert!(bits >= min_bits, "{bits:.1} bits");
        worst = worst.min(bits);
    }
    assert!(ev.rotate_and_sum(&ca, 1, 3).is_err());
    worst
}

/// Bootstrapping with `secret`: a ciphertext whose levels are spent is refreshed, then
/// multiplied past the chain's original depth (by unit-modulus values at every level
/// left, a second bootstrap, and again), each result within `min_bits` of `f64`.
/// Returns the first bootstrap's precision.
pub fn insecure_bootstrap_then_multiply(
    backend: Arc<dyn Backend>,
    secret: SecretDist,
    config: &BootstrapConfig,
    min_bits: f64,
) -> f64 {
    let params = insecure_params(secret);
    let options = Bootstrapper::key_options(&params, config).expect("bootstrap keys");
    let (ctx, keys, ev) = insecure_setup(backend, params.clone(), &options, Mode::Auto);
    let bs = ready_bootstrapper(&ctx, &keys, &ev, config);
    let n = params.slots();
    let mut want = random_values(n, 31); // in the unit disc
    let turn: Vec<Complex> = random_values(n, 33)
        .into_iter()
        .map(|v| {
            let r = v.abs().max(1e-3);
            Complex::new(v.re / r, v.im / r)
        })
        .collect();
    let w = encrypt(&ctx, &keys, &turn, params.max_level(), 34);
    let mut ct = encrypt(&ctx, &keys, &want, 1, 32);
    let mut first = None;
    let mut products = 0;
    for round in 0..2 {
        ct = bs.bootstrap(&ev, &ct).expect("bootstrap");
        assert_eq!(ct.level(), bs.output_level());
        let bits = precision_bits(&ctx.decrypt(&keys.sk, &ct).unwrap(), &want);
        assert!(bits >= min_bits, "bootstrap {round}: {bits:.1} bits");
        first.get_or_insert(bits);
        while ct.level() > 1 {
            ct = ev.mul(&ct, &w).unwrap();
            want.iter_mut().zip(&turn).for_each(|(v, t)| *v *= *t);
            products += 1;
        }
        let bits = precision_bits(&ctx.decrypt(&keys.sk, &ct).unwrap(), &want);
        assert!(bits >= min_bits - 1.0, "after the products of round {round}: {bits:.1} bits");
    }
    assert!(products + 2 * Bootstrapper::depth(&params, config).unwrap() > params.depth());
    first.expect("one bootstrap")
}

/// A bootstrapper for `config` with its encapsulation keys (seeded) when it needs them.
pub fn ready_bootstrapper(ctx: &Context, keys: &KeySet, ev: &Evaluator, config: &BootstrapConfig) -> Bootstrapper {
    let mut bs = Bootstrapper::new(ctx, ev, config).expect("bootstrapper");
    let seed = Seed::derive("lux-fhe-ckks-circuits-sse", 1);
    if let Some(sse) =
        Bootstrapper::encapsulation_keys_seeded(ctx, &keys.sk, config, &seed).expect("encapsulation keys")
    {
        bs.set_encapsulation_keys(ev, &sse).expect("encapsulation keys prepared");
    }
    bs
}

/// A bootstrap's output words equal the oracle's (uniform ternary secret, through the
/// sparse secret): the backend's keys made into its evaluator one by one, each prepared
/// up to the level it serves (`Bootstrapper::key_levels`), the oracle's whole.
pub fn insecure_bootstrap_byte_equal_to_oracle(backend: Arc<dyn Backend>, oracle: Arc<dyn Backend>) {
    let params = insecure_params(SecretDist::Ternary);
    let config = BootstrapConfig::default();
    let options = Bootstrapper::key_options(&params, &config).expect("bootstrap keys");
    let levels = Bootstrapper::key_levels(&params, &config).expect("key levels");
    let mut outs = Vec::new();
    // The oracle keeps its diagonals compact: the same words as whole ones.
    for (b, up_to, form) in [(backend, true, DiagonalForm::Evaluation), (oracle, false, DiagonalForm::Compact)] {
        let (ctx, keys, ev) = insecure_setup_up_to(b, params.clone(), &options, Mode::Auto, up_to.then_some(&levels));
        let config = BootstrapConfig { diagonals: Some(form), ..config.clone() };
        let bs = ready_bootstrapper(&ctx, &keys, &ev, &config);
        assert_eq!(bs.diagonal_form(), form);
        let ct = encrypt(&ctx, &keys, &random_values(params.slots(), 41), 1, 42);
        outs.push(ev.download(&bs.bootstrap(&ev, &ct).unwrap()).unwrap());
    }
    assert_eq!(outs[0], outs[1], "bootstrap output words");
}
