//! The surfaces of one bootstrap case, computed on one backend (the schedule is in the
//! [`super`] docs).

use std::sync::Arc;

use fhe_api::ckks::entities::SwitchingKey;
use fhe_api::ckks::params::SecretDist;
use fhe_api::Backend;
use fhe_schemes::ckks::{BootstrapConfig, Bootstrapper, Context, Mode};

use super::corpus::BootstrapCase;
use super::{BootstrapSet, CASES, INPUT_LEVEL};
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
    let config = BootstrapConfig { encapsulation: spec.encapsulation, ..BootstrapConfig::default() };
    let ctx = Context::new(backend.clone(), params.clone())?;
    let keys = ctx.keygen_from_seed(&seeds.master, &Bootstrapper::key_options(&params, &config)?)?;
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto)?;
    let mut bs = Bootstrapper::new(&ctx, &ev, &config)?;
    let sse = Bootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &seeds.encrypt[1])?;
    if let Some(sse) = &sse {
        bs.set_encapsulation_keys(&ev, sse)?;
    }

    let x = values(&seeds.master, 0, params.slots());
    let px = ctx.encode_at(&x, INPUT_LEVEL, params.scale_at(INPUT_LEVEL))?;
    let cx = ctx.encrypt_seeded(&keys.pk, &px, &seeds.encrypt[0])?;
    let out = bs.bootstrap(&ev, &cx)?;

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

    let cts =
        vec![ct_out(&ctx, &keys.sk, "encrypt_pk[x]", &cx, x.clone())?, ct_out(&ctx, &keys.sk, "bootstrap", &out, x)?];
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
    };
    Ok(BootstrapComputed { case, ckks: CkksComputed { words, cts } })
}
