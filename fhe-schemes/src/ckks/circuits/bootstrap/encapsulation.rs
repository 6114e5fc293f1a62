//! Sparse secret encapsulation (Bossuat, Troncoso-Pastoriza and Hubaux, ACNS 2022,
//! ePrint 2022/024): a ciphertext under the user's dense secret `s` is switched, at level
//! 0, to a sparse secret `s'` with a key that exists only over `q_0 P` (so `s'` is only
//! ever sampled at a modulus far below its own security bound), raised under `s'` (whose
//! integer parts are small: `K` of the sparse weight), and switched back to `s` at the
//! top with a key from `s'` to `s` (whose security is `s`'s). The rest of the bootstrap
//! runs under `s` with the user's keys.

use std::sync::Arc;

use fhe_api::ckks::params::{security_bound_bits, SecretDist};
use fhe_api::ckks::{Ciphertext, Params, PreparedSwitchKey, SecretKey, SwitchKind, SwitchingKey};
use fhe_api::error::{Error, Result};
use fhe_api::rng::Seed;

use crate::ckks::context::Context;
use crate::ckks::evaluator::{check_params, Evaluator};
use crate::ckks::keygen::encapsulation_keys;

/// The two switching keys of sparse secret encapsulation, made from the secret key
/// ([`crate::ckks::Bootstrapper::encapsulation_keys`]). Each is an ordinary switching key
/// (kind: the identity's Galois key) and travels through the format as one.
#[derive(Clone, Debug, PartialEq)]
pub struct EncapsulationKeys {
    /// From `s` to `s'`: samples of `s'` over `q_0` and `P` only (secret-free words elsewhere).
    pub to_sparse: SwitchingKey,
    /// From `s'` back to `s`, over all of `QP`.
    pub to_dense: SwitchingKey,
    /// The weight of `s'`.
    pub hamming_weight: usize,
}

/// The keys prepared on the evaluator's backend.
#[derive(Debug)]
pub(super) struct PreparedEncapsulation {
    to_sparse: Arc<PreparedSwitchKey>,
    to_dense: Arc<PreparedSwitchKey>,
}

/// The weight of the sparse secret bootstrapping uses for `params` with `requested`
/// (`None` when the user's secret is sparse already); refuses a sparse secret whose
/// key modulus `q_0 P` is over the sparse bound of `N` (secure parameters only).
pub(super) fn effective_weight(params: &Params, requested: Option<usize>) -> Result<Option<usize>> {
    let Some(h) = requested.filter(|_| params.secret() == SecretDist::Ternary) else {
        return Ok(None);
    };
    if params.is_insecure() {
        return Ok(Some(h));
    }
    let secret = SecretDist::SparseTernary { hamming_weight: h };
    let log_qp = params.log2_q_at(0) + params.p().iter().map(|p| (p.0 as f64).log2()).sum::<f64>();
    let log_qp = log_qp.ceil() as u32;
    match security_bound_bits(params.log_n(), secret) {
        Some(bound) if log_qp <= bound => Ok(Some(h)),
        Some(bound) => Err(Error::SecurityBound { log_qp, bound, n: params.n(), secret: secret.name() }),
        None => Err(Error::InvalidInput(format!(
            "sparse secret encapsulation with weight {h} at N = {}: no 128-bit bound covers that sparse secret \
             (N = 2^15 .. 2^17, weight >= 192); set BootstrapConfig::encapsulation to None",
            params.n()
        ))),
    }
}

/// Makes the keys from `sk` with the randomness of `seed`.
pub(super) fn make_keys(
    ctx: &Context,
    sk: &SecretKey,
    seed: &Seed,
    hamming_weight: usize,
) -> Result<EncapsulationKeys> {
    check_params(ctx.params(), sk.params())?;
    let (to_sparse, to_dense) = encapsulation_keys(&**ctx.backend(), sk, seed, hamming_weight)?;
    Ok(EncapsulationKeys { to_sparse, to_dense, hamming_weight })
}

impl PreparedEncapsulation {
    pub(super) fn new(ev: &Evaluator, keys: &EncapsulationKeys, hamming_weight: usize) -> Result<Self> {
        if keys.hamming_weight != hamming_weight {
            return Err(Error::InvalidInput(format!(
                "encapsulation keys of weight {} for a bootstrap planned for weight {hamming_weight}",
                keys.hamming_weight
            )));
        }
        let ops = ev.ops();
        let mut prepared = Vec::new();
        // The switch to the sparse secret runs at level 0 only.
        for (key, level) in [(&keys.to_sparse, 0), (&keys.to_dense, ev.params().max_level())] {
            check_params(ev.params(), key.params())?;
            if key.kind() != SwitchKind::Galois(1) {
                return Err(Error::InvalidInput(format!("an encapsulation key is a {:?} key", key.kind())));
            }
            if !ev.tag().is_none() {
                key.tag().check_against(ev.tag())?;
            }
            prepared.push(Arc::new(ops.prepare_key_up_to(key, level)?));
        }
        let to_dense = prepared.pop().expect("two keys");
        let to_sparse = prepared.pop().expect("two keys");
        Ok(PreparedEncapsulation { to_sparse, to_dense })
    }

    /// `ct` (level 0, under `s`) under `s'`.
    pub(super) fn to_sparse(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        ev.ops().apply_galois(ct, &self.to_sparse, ct.meta.clone())
    }

    /// `ct` (under `s'`) back under `s`.
    pub(super) fn to_dense(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        ev.ops().apply_galois(ct, &self.to_dense, ct.meta.clone())
    }
}

/// ModRaise of `at0` (level 0) to the top: under the user's secret (`weight` `None`), or
/// through the sparse secret of `weight` with its prepared keys; keys missing is an
/// error naming `owner`'s call that makes them.
pub(super) fn raise(
    ev: &Evaluator,
    at0: &Ciphertext,
    weight: Option<usize>,
    keys: Option<&PreparedEncapsulation>,
    owner: &str,
) -> Result<Ciphertext> {
    let top = ev.params().max_level();
    match (weight, keys) {
        (None, _) => ev.mod_raise(at0, top),
        (Some(_), Some(keys)) => keys.to_dense(ev, &ev.mod_raise(&keys.to_sparse(ev, at0)?, top)?),
        (Some(h), None) => Err(Error::InvalidInput(format!(
            "this bootstrap goes through a sparse secret of weight {h}: make its keys with \
             {owner}::encapsulation_keys and give them to set_encapsulation_keys"
        ))),
    }
}
