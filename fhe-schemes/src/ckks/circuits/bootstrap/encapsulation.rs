//! Sparse secret encapsulation (Bossuat, Troncoso-Pastoriza and Hubaux, ACNS 2022,
//! ePrint 2022/024): a ciphertext under the user's dense secret `s` is switched, at level
//! 0, to a sparse secret `s'` with a key that exists only over `q_0 P` (so `s'` is only
//! ever sampled at a modulus far below its own security bound), raised under `s'` (whose
//! integer parts are small: `K` of the sparse weight), and switched back to `s` at the
//! top with a key from `s'` to `s` (whose security is `s`'s). The rest of the bootstrap
//! runs under `s` with the user's keys.
//!
//! A functional bootstrap may instead stay under `s'` through CoeffsToSlots and the
//! exponential, with evaluation keys of its own under `s'`, and switch back to `s` at the
//! exponential's output (`FunctionalConfig::sparse_keys`): its rescales and key switches
//! then round under a secret of weight `h` instead of about `2N/3`. Those keys sample
//! `s'` over the whole chain, so that is allowed only where the chain's log QP is within
//! the sparse secret's bound (`docs/CKKS.md`).

use std::sync::Arc;

use fhe_api::ckks::params::{security_bound_bits, SecretDist};
use fhe_api::ckks::{Ciphertext, EvalKeys, Params, PreparedSwitchKey, SecretKey, SwitchKind, SwitchingKey};
use fhe_api::error::{Error, Result};
use fhe_api::rng::Seed;

use crate::ckks::context::Context;
use crate::ckks::evaluator::{check_params, Evaluator, KeyLevels};
use crate::ckks::keygen::{each_sparse_eval_key, encapsulation_keys, KeygenOptions};

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
    /// Evaluation keys under `s'` for a bootstrap that stays under it after ModRaise
    /// (`FunctionalConfig::sparse_keys`); empty otherwise.
    pub sparse_eval: EvalKeys,
}

/// The keys prepared on the evaluator's backend; `sparse`: an evaluator with the keys
/// under `s'`, where the bootstrap stays under it.
#[derive(Debug)]
pub(super) struct PreparedEncapsulation {
    to_sparse: Arc<PreparedSwitchKey>,
    to_dense: Arc<PreparedSwitchKey>,
    sparse: Option<Evaluator>,
}

/// What a bootstrap that stays under `s'` needs: its keys there, up to their levels, and
/// the level it switches back to `s` at.
#[derive(Clone, Debug)]
pub(super) struct SparseSpan {
    pub options: KeygenOptions,
    pub levels: KeyLevels,
    pub dense_level: usize,
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
    let log_qp = params.log2_q_at(0) + params.p().iter().map(|p| (p.0 as f64).log2()).sum::<f64>();
    check_sparse_bound(
        params,
        h,
        log_qp.ceil() as u32,
        "sparse secret encapsulation",
        "BootstrapConfig::encapsulation to None",
    )?;
    Ok(Some(h))
}

/// `Error::SecurityBound` when `s'` of weight `h` sampled modulo a `log_qp`-bit modulus is
/// over the sparse bound of `N`; `Error::InvalidInput` for `what` where no bound covers
/// it, naming the setting (`fix`) that avoids it.
pub(super) fn check_sparse_bound(params: &Params, h: usize, log_qp: u32, what: &str, fix: &str) -> Result<()> {
    let secret = SecretDist::SparseTernary { hamming_weight: h };
    match security_bound_bits(params.log_n(), secret) {
        Some(bound) if log_qp <= bound => Ok(()),
        Some(bound) => Err(Error::SecurityBound { log_qp, bound, n: params.n(), secret: secret.name() }),
        None => Err(Error::InvalidInput(format!(
            "{what} with weight {h} at N = {}: no 128-bit bound covers that sparse secret \
             (N = 2^15 .. 2^17, weight >= 192); set {fix}",
            params.n()
        ))),
    }
}

/// Makes the keys from `sk` with the randomness of `seed` (and those under `s'` that
/// `sparse` names).
pub(super) fn make_keys(
    ctx: &Context,
    sk: &SecretKey,
    seed: &Seed,
    hamming_weight: usize,
    sparse: Option<&KeygenOptions>,
) -> Result<EncapsulationKeys> {
    check_params(ctx.params(), sk.params())?;
    let (to_sparse, to_dense) = encapsulation_keys(&**ctx.backend(), sk, seed, hamming_weight)?;
    let mut sparse_eval = EvalKeys::default();
    if let Some(options) = sparse {
        each_sparse_eval_key(&**ctx.backend(), sk, seed, hamming_weight, options, |k| {
            sparse_eval.insert(k);
            Ok(())
        })?;
    }
    Ok(EncapsulationKeys { to_sparse, to_dense, hamming_weight, sparse_eval })
}

/// `Error::InvalidInput` naming the first key under `s'` a span needs that `keys` lack.
fn check_has(keys: &EvalKeys, levels: &KeyLevels, relin: bool) -> Result<()> {
    let missing = if relin && keys.relin.is_none() {
        Some("the relinearization key".to_string())
    } else {
        levels.galois.keys().find(|g| !keys.galois.contains_key(g)).map(|g| format!("the Galois key of element {g}"))
    };
    match missing {
        Some(what) => Err(Error::InvalidInput(format!(
            "this bootstrap stays under the sparse secret, and the encapsulation keys lack {what} under it: \
             make them with the bootstrapper's encapsulation_keys for the same configuration"
        ))),
        None => Ok(()),
    }
}

impl PreparedEncapsulation {
    /// `to_dense` is prepared up to the level the bootstrap switches back at (the top
    /// without `span`).
    pub(super) fn new(
        ev: &Evaluator,
        keys: &EncapsulationKeys,
        hamming_weight: usize,
        span: Option<&SparseSpan>,
    ) -> Result<Self> {
        let dense_level = span.map_or(ev.params().max_level(), |s| s.dense_level);
        let (to_sparse, to_dense) = Self::switches(ev, keys, hamming_weight, dense_level)?;
        let sparse = match span {
            Some(span) => {
                check_has(&keys.sparse_eval, &span.levels, span.options.relin)?;
                let (backend, params) = (ev.backend().clone(), ev.params().clone());
                let sparse = Evaluator::new_up_to(backend, params, &keys.sparse_eval, ev.mode(), &span.levels)?;
                if !ev.tag().is_none() {
                    sparse.tag().check_against(ev.tag())?;
                }
                Some(sparse)
            }
            None => None,
        };
        Ok(PreparedEncapsulation { to_sparse, to_dense, sparse })
    }

    /// The two switches prepared: `to_sparse` at level 0, `to_dense` up to `dense_level`.
    fn switches(
        ev: &Evaluator,
        keys: &EncapsulationKeys,
        hamming_weight: usize,
        dense_level: usize,
    ) -> Result<(Arc<PreparedSwitchKey>, Arc<PreparedSwitchKey>)> {
        if keys.hamming_weight != hamming_weight {
            return Err(Error::InvalidInput(format!(
                "encapsulation keys of weight {} for a bootstrap planned for weight {hamming_weight}",
                keys.hamming_weight
            )));
        }
        let ops = ev.ops();
        let mut prepared = Vec::new();
        // The switch to the sparse secret runs at level 0 only.
        for (key, level) in [(&keys.to_sparse, 0), (&keys.to_dense, dense_level)] {
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
        Ok((to_sparse, to_dense))
    }

    /// [`PreparedEncapsulation::new`] with the keys made from `sk` and `seed` (the same
    /// words as [`make_keys`]), those under `s'` prepared one at a time as made, so the
    /// host never holds them all beside the prepared ones. `sk` is checked against the
    /// evaluator's key set through the two switches, which carry its tag as the others do.
    pub(super) fn from_secret(
        ctx: &Context,
        ev: &Evaluator,
        sk: &SecretKey,
        seed: &Seed,
        hamming_weight: usize,
        span: &SparseSpan,
    ) -> Result<Self> {
        let keys = make_keys(ctx, sk, seed, hamming_weight, None)?;
        let (to_sparse, to_dense) = Self::switches(ev, &keys, hamming_weight, span.dense_level)?;
        drop(keys);
        let (backend, params) = (ev.backend().clone(), ev.params().clone());
        let sparse = Evaluator::new_up_to(backend, params, &EvalKeys::default(), ev.mode(), &span.levels)?;
        each_sparse_eval_key(&**ctx.backend(), sk, seed, hamming_weight, &span.options, |key| {
            let mut one = EvalKeys::default();
            one.insert(key);
            sparse.add_keys_up_to(&one, &span.levels)
        })?;
        Ok(PreparedEncapsulation { to_sparse, to_dense, sparse: Some(sparse) })
    }

    /// The evaluator under `s'`, where the bootstrap stays under it.
    pub(super) fn sparse(&self) -> Option<&Evaluator> {
        self.sparse.as_ref()
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
