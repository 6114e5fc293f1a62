use std::sync::Arc;

use fhe_api::ckks::params::SecretDist;
use fhe_api::rng::Seed;
use fhe_cpu::CpuBackend;

use super::*;
use crate::ckks::circuits::fourier::FeFunction;
use crate::ckks::{Complex, Mode};
use fhe_api::error::{Error, LevelNeed};

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
fn insecure_functional_bootstrap_refuses_what_it_cannot_do() {
    let config = FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(50) };
    let exp = FeFunction::Exp.series(20.0).unwrap();
    // A chain too short for the exponential and the series names the depth it needs.
    let short = insecure_fe_params(12);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), short.clone()).unwrap();
    let options = FunctionalBootstrapper::key_options(&short, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let e = FunctionalBootstrapper::new(&ctx, &ev, &config, exp.degree()).unwrap_err();
    assert!(matches!(e, Error::Level { needed: LevelNeed::AtLeast(_), .. }), "{e}");
    let params = insecure_fe_params(24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let fb = FunctionalBootstrapper::new(&ctx, &ev, &config, exp.degree()).unwrap();
    let values = vec![Complex::new(0.25, 0.0); params.slots()];
    let at = |level| {
        let pt = ctx.encode_at(&values, level, params.scale_at(level)).unwrap();
        ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([5; 32])).unwrap()
    };
    // Below the input level; a series longer than prepared; no encapsulation keys yet.
    let e = fb.bootstrap(&ev, &at(1), &exp).unwrap_err();
    assert!(matches!(e, Error::Level { found: 1, .. }), "{e}");
    let long = FeFunction::Gelu.series(30.0).unwrap();
    assert!(long.degree() > exp.degree());
    assert!(fb.bootstrap(&ev, &at(4), &long).unwrap_err().to_string().contains("degree"));
    let e = fb.bootstrap(&ev, &at(4), &exp).unwrap_err().to_string();
    assert!(e.contains("encapsulation_keys"), "{e}");
}

/// Seed 2's chains: the first prime one bit above the scale, log QP within the sparse
/// bound with the fewest digits, and a chain over it refused naming both numbers.
#[test]
fn seed_two_chains_fit_their_bounds() {
    for chain in seed_two_chains() {
        let bits = crate::ckks::circuits::fourier::precision_floor_bits(chain.scale_bits);
        let degree = FeFunction::ALL.iter().map(|f| f.series(bits).unwrap().degree()).max().unwrap();
        let p = chain.params(degree).unwrap();
        let bound =
            fhe_api::ckks::params::security_bound_bits(chain.log_n, SecretDist::SparseTernary { hamming_weight: 192 })
                .unwrap();
        assert!(p.log_qp() <= bound, "{}", chain.name);
        if p.dnum() > 1 {
            let fewer = FunctionalChain { dnum: Some(p.dnum() - 1), ..chain.clone() };
            assert!(fewer.params(degree).is_err(), "{}: dnum {} fits too", chain.name, p.dnum() - 1);
        }
        assert_eq!(p.q()[0].0.ilog2() + 1, chain.scale_bits + 1);
        if std::env::var("LUX_FE_MEMORY").is_err() {
            continue;
        }
        let mem = FunctionalBootstrapper::memory_estimate(&p, &chain.config()).unwrap();
        eprintln!(
            "{}: degree {degree} ({bits} bits), depth {}, dnum {}, {} special, log QP {}, memory {:.1} GiB \
             (keys {:.1}, {} rotations; plaintexts {:.1}; working {:.1})",
            chain.name,
            p.depth(),
            p.dnum(),
            p.p().len(),
            p.log_qp(),
            mem.total() as f64 / (1u64 << 30) as f64,
            mem.keys as f64 / (1u64 << 30) as f64,
            FunctionalBootstrapper::key_options(&p, &chain.config()).map(|o| o.rotations.len()).unwrap_or(0),
            mem.plaintexts as f64 / (1u64 << 30) as f64,
            mem.working as f64 / (1u64 << 30) as f64,
        );
    }
    let deep = FunctionalChain { levels_after: 20, ..seed_two_chains().remove(2) };
    let e = deep.params(35).unwrap_err();
    let Error::SecurityBound { log_qp, bound, .. } = e else { panic!("{e}") };
    assert!(log_qp > bound && bound == 1553);
}
