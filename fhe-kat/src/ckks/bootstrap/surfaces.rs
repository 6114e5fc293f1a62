//! The surfaces of one bootstrap case, computed on one backend (the schedule is in the
//! [`super`] docs).

use std::sync::Arc;

use fhe_api::ckks::entities::KeySet;
use fhe_api::ckks::entities::SwitchingKey;
use fhe_api::ckks::params::SecretDist;
use fhe_api::ckks::{Ciphertext, Plaintext};
use fhe_api::Backend;
use fhe_schemes::ckks::circuits::EncapsulationKeys;
use fhe_schemes::ckks::{
    BootstrapConfig, Bootstrapper, Complex, Context, FeFunction, FunctionalBootstrapper, FunctionalConfig, Mode,
};

use super::corpus::BootstrapCase;
use super::{BootstrapSet, CaseSpec, CASES, INPUT_LEVEL};
use crate::ckks::surfaces::{ct_out, le_bytes, values, CkksComputed, Words};
use crate::scheme::CaseSeeds;
use crate::Result;

/// Every surface of one bootstrap case on one backend.
pub struct BootstrapComputed {
    /// The case as run: secret, configuration, what the bootstrapper derived.
    pub case: BootstrapCase,
    /// Keys, the encoded message, the input and the output.
    pub ckks: CkksComputed,
}

/// `sparse-ternary-192` or `ternary`.
pub(crate) fn secret_name(s: SecretDist) -> String {
    match s {
        SecretDist::Ternary => "ternary".into(),
        SecretDist::SparseTernary { hamming_weight } => format!("sparse-ternary-{hamming_weight}"),
    }
}

fn key_b(name: &str, keys: &[&SwitchingKey]) -> Words {
    let words: Vec<u64> = keys.iter().flat_map(|k| k.b().iter().copied()).collect();
    Words { name: name.into(), words: words.len(), bytes: le_bytes(&words) }
}

/// Computes case `seeds.index mod CASES.len()` of `set` on `backend` (which must
/// declare CKKS): keygen, the bootstrapper (and its encapsulation keys), the input at
/// level [`INPUT_LEVEL`], one bootstrap.
pub(crate) fn compute(backend: &Arc<dyn Backend>, set: BootstrapSet, seeds: &CaseSeeds) -> Result<BootstrapComputed> {
    let spec = CASES[(seeds.index % CASES.len() as u64) as usize];
    let params = set.params(spec.secret)?;
    let ctx = Context::new(backend.clone(), params.clone())?;
    let x = values(&seeds.master, 0, params.slots());
    let run = match spec.function {
        None => plain(&ctx, &spec, seeds, &x)?,
        Some(f) => functional(&ctx, &spec, f, seeds, &x)?,
    };
    let Run { keys, sse, px, cx, out, want, case } = run;

    let sk = keys.sk.coefficients().iter().map(|&c| c as u8).collect();
    let mut words = vec![
        Words { name: "sk".into(), words: keys.sk.coefficients().len(), bytes: sk },
        Words { name: "pk.b".into(), words: keys.pk.b().len(), bytes: le_bytes(keys.pk.b()) },
        key_b("rlk.b", &keys.eval.relin.iter().collect::<Vec<_>>()),
        key_b("gk.b", &keys.eval.galois.values().collect::<Vec<_>>()),
    ];
    if let Some(sse) = &sse {
        words.push(key_b("sse.to_sparse.b", &[&sse.to_sparse]));
        words.push(key_b("sse.to_dense.b", &[&sse.to_dense]));
    }
    words.push(Words { name: "encode[x]".into(), words: px.coeffs().len(), bytes: le_bytes(px.coeffs()) });

    let cts = vec![ct_out(&ctx, &keys.sk, "encrypt_pk[x]", &cx, x)?, ct_out(&ctx, &keys.sk, "bootstrap", &out, want)?];
    Ok(BootstrapComputed { case, ckks: CkksComputed { words, cts } })
}

/// What one case computed, before its surfaces are taken.
struct Run {
    keys: KeySet,
    sse: Option<EncapsulationKeys>,
    px: Plaintext,
    cx: Ciphertext,
    out: Ciphertext,
    /// What the output decrypts to.
    want: Vec<Complex>,
    case: BootstrapCase,
}

/// A plain bootstrap of `x` from level [`INPUT_LEVEL`].
fn plain(ctx: &Context, spec: &CaseSpec, seeds: &CaseSeeds, x: &[Complex]) -> Result<Run> {
    let params = ctx.params().clone();
    let config = BootstrapConfig { encapsulation: spec.encapsulation, ..BootstrapConfig::default() };
    let keys = ctx.keygen_from_seed(&seeds.master, &Bootstrapper::key_options(&params, &config)?)?;
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto)?;
    let mut bs = Bootstrapper::new(ctx, &ev, &config)?;
    let sse = Bootstrapper::encapsulation_keys_seeded(ctx, &keys.sk, &config, &seeds.encrypt[1])?;
    if let Some(sse) = &sse {
        bs.set_encapsulation_keys(&ev, sse)?;
    }
    let px = ctx.encode_at(x, INPUT_LEVEL, params.scale_at(INPUT_LEVEL))?;
    let cx = ctx.encrypt_seeded(&keys.pk, &px, &seeds.encrypt[0])?;
    let out = bs.bootstrap(&ev, &cx)?;
    let (degree, double_angles) = bs.eval_mod_shape();
    let case = BootstrapCase {
        secret: secret_name(spec.secret),
        level_budget: [config.level_budget.0, config.level_budget.1],
        prescale_bits: config.prescale_bits,
        failure_log2: config.failure_log2,
        eval_mod_bits: config.eval_mod_bits,
        encapsulation: config.encapsulation,
        arcsine: config.arcsine,
        min_bits: spec.min_bits,
        encapsulates: bs.encapsulates(),
        k: bs.k(),
        eval_mod_degree: degree,
        double_angles,
        function: None,
        series_degree: None,
    };
    Ok(Run { keys, sse, px, cx, out, want: x.to_vec(), case })
}

/// A functional bootstrap of `f` on `Re x` from the bootstrapper's input level (module
/// docs), with the conformance suite's configuration.
fn functional(ctx: &Context, spec: &CaseSpec, f: FeFunction, seeds: &CaseSeeds, x: &[Complex]) -> Result<Run> {
    let params = ctx.params().clone();
    let config =
        FunctionalConfig { level_budget: (3, 2), encapsulation: spec.encapsulation, ..FunctionalConfig::for_scale(50) };
    let series = f.series(24.0)?;
    let keys = ctx.keygen_from_seed(&seeds.master, &FunctionalBootstrapper::key_options(&params, &config)?)?;
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto)?;
    let mut fb = FunctionalBootstrapper::new(ctx, &ev, &config, series.degree())?;
    let sse = FunctionalBootstrapper::encapsulation_keys_seeded(ctx, &keys.sk, &config, &seeds.encrypt[1])?;
    if let Some(sse) = &sse {
        fb.set_encapsulation_keys(&ev, sse)?;
    }
    let level = fb.input_level();
    let px = ctx.encode_at(x, level, params.scale_at(level))?;
    let cx = ctx.encrypt_seeded(&keys.pk, &px, &seeds.encrypt[0])?;
    let out = fb.bootstrap(&ev, &cx, &series)?;
    let want = x.iter().map(|v| Complex::new(f.eval(2.0 * f.radius() * v.re), 0.0)).collect();
    let (degree, double_angles) = fb.exp_shape();
    let case = BootstrapCase {
        secret: secret_name(spec.secret),
        level_budget: [config.level_budget.0, config.level_budget.1],
        prescale_bits: 0,
        failure_log2: config.failure_log2,
        eval_mod_bits: config.exp_bits,
        encapsulation: config.encapsulation,
        arcsine: false,
        min_bits: spec.min_bits,
        encapsulates: sse.is_some(),
        k: fb.k(),
        eval_mod_degree: degree,
        double_angles,
        function: Some(f.name().to_string()),
        series_degree: Some(series.degree()),
    };
    Ok(Run { keys, sse, px, cx, out, want, case })
}
