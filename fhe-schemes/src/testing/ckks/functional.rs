//! FE functional bootstrapping on a backend, at the INSECURE `N = 2^12` chain of
//! `circuits` (a first prime wider than the scale by 10 bits: our SlotsToCoeffs lands on
//! `q_0 / 4` whatever the scale, so the chain needs no prime one bit above it). Values
//! against `f64`, words against the oracle.

use std::sync::Arc;

use fhe_api::ckks::entities::KeySet;
use fhe_api::ckks::params::SecretDist;
use fhe_api::ckks::Ciphertext;
use fhe_api::{Backend, Seed};

use super::circuits::{insecure_params, insecure_setup, insecure_setup_up_to};
use crate::ckks::circuits::{relative_precision, FourierSeries};
use crate::ckks::{
    Complex, Context, DiagonalForm, Evaluator, FeFunction, FunctionalBootstrapper, FunctionalConfig, Mode,
};

/// The configuration the tests run: budget `{3, 2}`, the exponential at 38 bits.
pub fn insecure_config() -> FunctionalConfig {
    FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(50) }
}

/// Every shipped function's series at 24 bits.
pub fn insecure_series() -> Vec<(FeFunction, FourierSeries)> {
    FeFunction::ALL.iter().map(|&f| (f, f.series(24.0).expect("a series at 24 bits"))).collect()
}

/// A functional bootstrapper for `max_degree` with its encapsulation keys (seeded):
/// made on the host and given (`from_secret` false), or made from the secret one at a
/// time (the same words).
pub fn ready_functional(
    ctx: &Context,
    keys: &KeySet,
    ev: &Evaluator,
    config: &FunctionalConfig,
    max_degree: usize,
    from_secret: bool,
) -> FunctionalBootstrapper {
    let mut fb = FunctionalBootstrapper::new(ctx, ev, config, max_degree).expect("functional bootstrapper");
    let seed = Seed::derive("lux-fhe-ckks-functional-sse", 1);
    if from_secret {
        fb.set_encapsulation_from_secret(ctx, ev, &keys.sk, &seed).expect("encapsulation keys made and prepared");
    } else if let Some(sse) =
        FunctionalBootstrapper::encapsulation_keys_seeded(ctx, &keys.sk, config, &seed).expect("keys")
    {
        fb.set_encapsulation_keys(ev, &sse).expect("encapsulation keys prepared");
    }
    fb
}

/// Seed 2's input `x_i = -1/2 + i / slots` at the bootstrapper's input level.
fn encrypt_input(ctx: &Context, keys: &KeySet, level: usize) -> (Vec<f64>, Ciphertext) {
    let n = ctx.params().slots();
    let xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let pt = ctx.encode_at(&values, level, ctx.params().scale_at(level)).expect("encode");
    let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-functional-encrypt", 1)).expect("encrypt");
    (xs, ct)
}

/// Each function through one functional bootstrap (uniform ternary secret, raised through
/// a sparse one) decrypts to `f(2 R x)` within `min_bits` of its range, at the level
/// the bootstrapper names; then a product of two outputs, past the input's levels.
/// Returns each function's precision.
pub fn insecure_functional_bootstrap_each_function(backend: Arc<dyn Backend>, min_bits: f64) -> Vec<(FeFunction, f64)> {
    let params = insecure_params(SecretDist::Ternary);
    let options = FunctionalBootstrapper::key_options(&params, &insecure_config()).expect("keys");
    let (ctx, keys, ev) = insecure_setup(backend, params, &options, Mode::Auto);
    let series = insecure_series();
    let max_degree = series.iter().map(|(_, s)| s.degree()).max().unwrap_or(1);
    let fb = ready_functional(&ctx, &keys, &ev, &insecure_config(), max_degree, false);
    let (xs, ct) = encrypt_input(&ctx, &keys, fb.input_level());
    let z = fb.exponential(&ev, &ct).expect("exponential");
    let mut out = Vec::new();
    let mut outputs = Vec::new();
    for (f, s) in &series {
        let y = fb.apply(&ev, &z, s).expect("series");
        assert_eq!(y.level(), fb.output_level(&ev, s.degree()), "{}", f.name());
        let got: Vec<f64> = ctx.decrypt(&keys.sk, &y).expect("decrypt").iter().map(|c| c.re).collect();
        let want: Vec<f64> = xs.iter().map(|&x| f.eval(2.0 * f.radius() * x)).collect();
        let (bits, _) = relative_precision(&want, &got);
        assert!(bits >= min_bits, "{}: {bits:.1} bits", f.name());
        out.push((*f, bits));
        outputs.push((want, y));
    }
    // tanh(v) * sigmoid(v), computed on the refreshed outputs.
    let (t, s) = (&outputs[2], &outputs[3]);
    let prod = ev.mul(&t.1, &s.1).expect("product of two outputs");
    let got: Vec<f64> = ctx.decrypt(&keys.sk, &prod).expect("decrypt").iter().map(|c| c.re).collect();
    let want: Vec<f64> = t.0.iter().zip(&s.0).map(|(a, b)| a * b).collect();
    let (bits, _) = relative_precision(&want, &got);
    assert!(bits >= min_bits - 1.0, "a product of two outputs: {bits:.1} bits");
    out
}

/// A functional bootstrap's output words equal the oracle's, the backend's keys prepared
/// up to their levels (`FunctionalBootstrapper::key_levels`) and its keys under the sparse
/// secret made one at a time (`FunctionalConfig::sparse_keys`: CoeffsToSlots and the
/// exponential under it), the oracle's whole and from the host.
pub fn insecure_functional_bootstrap_byte_equal_to_oracle(backend: Arc<dyn Backend>, oracle: Arc<dyn Backend>) {
    let params = insecure_params(SecretDist::Ternary);
    let config = FunctionalConfig { sparse_keys: true, ..insecure_config() };
    let options = FunctionalBootstrapper::key_options(&params, &config).expect("keys");
    let levels = FunctionalBootstrapper::key_levels(&params, &config).expect("key levels");
    let (_, gelu) = insecure_series().pop().expect("gelu");
    let mut outs = Vec::new();
    // The oracle keeps its diagonals compact: the same words as whole ones.
    for (b, up_to, form) in [(backend, true, DiagonalForm::Evaluation), (oracle, false, DiagonalForm::Compact)] {
        let (ctx, keys, ev) = insecure_setup_up_to(b, params.clone(), &options, Mode::Auto, up_to.then_some(&levels));
        let config = FunctionalConfig { diagonals: Some(form), ..config.clone() };
        let fb = ready_functional(&ctx, &keys, &ev, &config, gelu.degree(), up_to);
        assert_eq!(fb.diagonal_form(), form);
        let (_, ct) = encrypt_input(&ctx, &keys, fb.input_level());
        outs.push(ev.download(&fb.bootstrap(&ev, &ct, &gelu).expect("bootstrap")).expect("download"));
    }
    assert_eq!(outs[0], outs[1], "functional bootstrap output words");
}
