use std::sync::Arc;

use fhe_api::ckks::params::{Params, ParamsLiteral, SecretDist};
use fhe_api::rng::Seed;
use fhe_cpu::CpuBackend;

use super::*;
use crate::ckks::{precision_bits, Complex, Mode};

/// N = 2^12, 50-bit primes: far below 128-bit security, small enough for CI.
pub(crate) fn insecure_params(secret: SecretDist, depth: usize) -> Arc<Params> {
    let lit = ParamsLiteral {
        name: "boot-ci".into(),
        log_n: 12,
        scale_bits: 50,
        depth,
        first_bits: 60,
        special_bits: 60,
        dnum: 4,
        secret,
    };
    Arc::new(Params::insecure_for_tests(&lit).unwrap())
}

#[test]
fn insecure_bootstrap_restores_levels_and_values() {
    let params = insecure_params(SecretDist::SparseTernary { hamming_weight: 192 }, 24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let mut config = BootstrapConfig::default();
    if let Ok(c) = std::env::var("BOOT_C") {
        config.prescale_bits = c.parse().unwrap();
    }
    config.arcsine = std::env::var("BOOT_ARC").is_ok();
    let options = Bootstrapper::key_options(&params, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([7; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
    let n = params.slots();
    let mut values: Vec<Complex> = (0..n)
        .map(|i| Complex::new(((i * 37 % 101) as f64 / 50.0) - 1.0, ((i * 11 % 61) as f64 / 30.0) - 1.0))
        .collect();
    if std::env::var("BOOT_CONST").is_ok() {
        values.iter_mut().for_each(|v| *v = Complex::new(0.95 + v.re * 0.05, 0.0));
    }
    let pt = ctx.encode_at(&values, 2, params.scale_at(2)).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
    let out = bs.bootstrap(&ev, &ct).unwrap();
    let got = ctx.decrypt(&keys.sk, &out).unwrap();
    let bits = precision_bits(&got, &values);
    eprintln!(
        "K = {}, EvalMod {:?}, output level {}, {} plaintexts, {} rotations: {bits:.1} bits",
        bs.k(),
        bs.eval_mod_shape(),
        bs.output_level(),
        bs.plaintexts(),
        options.rotations.len()
    );
    assert_eq!(out.level(), bs.output_level());
    assert!(bits > 15.0, "{bits}");
}

/// The peer's configuration (N = 2^16, uniform ternary): time, precision, levels.
/// `cargo test -p fhe-schemes --release --lib -- --ignored --nocapture bootstrap_at_the_peer_preset`
#[test]
#[ignore]
fn bootstrap_at_the_peer_preset() {
    let preset = fhe_api::ckks::Preset::Slots32768Scale59Depth22;
    let ctx = Context::from_preset(Arc::new(CpuBackend::new(None).unwrap()), preset).unwrap();
    let params = ctx.params().clone();
    let config = BootstrapConfig::default();
    let t = std::time::Instant::now();
    let options = Bootstrapper::key_options(&params, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([7; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
    eprintln!(
        "setup {:.1} s, {} rotation keys, {} plaintexts",
        t.elapsed().as_secs_f64(),
        options.rotations.len(),
        bs.plaintexts()
    );
    let n = params.slots();
    let values: Vec<Complex> = (0..n).map(|i| Complex::new(((i * 7919 % 10007) as f64 / 5003.5) - 1.0, 0.0)).collect();
    let pt = ctx.encode_at(&values, 1, params.scale_at(1)).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
    for _ in 0..2 {
        let t = std::time::Instant::now();
        let out = bs.bootstrap(&ev, &ct).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let got = ctx.decrypt(&keys.sk, &out).unwrap();
        eprintln!(
            "bootstrap {dt:.2} s: {:.1} bits, output level {}, K = {}, EvalMod {:?}",
            precision_bits(&got, &values),
            out.level(),
            bs.k(),
            bs.eval_mod_shape()
        );
    }
}
