use std::sync::Arc;

use fhe_api::ckks::params::SecretDist;
use fhe_api::rng::Seed;
use fhe_cpu::CpuBackend;

use super::*;
use crate::ckks::circuits::fourier::{relative_precision, FeFunction};
use crate::ckks::{Complex, Mode};

/// The CI chain (N = 2^12, insecure) for the functional bootstrap: a 50-bit scale and a
/// first prime one bit wider, a uniform ternary secret raised through a sparse one.
fn insecure_fe_params(depth: usize) -> Arc<fhe_api::ckks::Params> {
    let lit = fhe_api::ckks::ParamsLiteral {
        name: "fe-ci".into(),
        log_n: 12,
        scale_bits: 50,
        depth,
        first_bits: 51,
        special_bits: 60,
        dnum: 4,
        secret: SecretDist::Ternary,
    };
    Arc::new(fhe_api::ckks::Params::insecure_for_tests(&lit).unwrap())
}

#[test]
fn insecure_functional_bootstrap_evaluates_each_function() {
    let config = FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(50) };
    let bits = 24.0;
    let series: Vec<_> = FeFunction::ALL.iter().map(|f| (f, f.series(bits).unwrap())).collect();
    let max_degree = series.iter().map(|(_, s)| s.degree()).max().unwrap();
    let probe = insecure_fe_params(40);
    let depth = FunctionalBootstrapper::depth(&probe, &config, max_degree).unwrap() + 2 + 1;
    let params = insecure_fe_params(depth);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let options = FunctionalBootstrapper::key_options(&params, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &config, max_degree).unwrap();
    let sse = FunctionalBootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([4; 32])).unwrap();
    fb.set_encapsulation_keys(&ev, &sse.expect("a uniform secret encapsulates")).unwrap();
    let n = params.slots();
    let xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let pt = ctx.encode_at(&values, fb.input_level(), params.scale_at(fb.input_level())).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([5; 32])).unwrap();
    let z = fb.exponential(&ev, &ct).unwrap();
    for (f, s) in &series {
        let out = fb.apply(&ev, &z, s).unwrap();
        assert_eq!(out.level(), fb.output_level(&ev, s.degree()));
        let got: Vec<f64> = ctx.decrypt(&keys.sk, &out).unwrap().iter().map(|c| c.re).collect();
        let want: Vec<f64> = xs.iter().map(|&x| f.eval(2.0 * f.radius() * x)).collect();
        let (prec, max) = relative_precision(&want, &got);
        eprintln!(
            "{}: degree {}, K {}, exp {:?}, level {} -> {}: {prec:.1} bits (max error {max:.2e})",
            f.name(),
            s.degree(),
            fb.k(),
            fb.exp_shape(),
            params.max_level(),
            out.level()
        );
        assert!(prec > 18.0, "{}: {prec}", f.name());
    }
}
