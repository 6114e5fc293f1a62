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
    config.arcsine = std::env::var("BOOT_NOARC").is_err();
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
