//! The CKKS evaluator: the scheme's bookkeeping written once over a backend's
//! [`CkksOps`]: which levels, scales and keys may meet, what a constant encodes to, which
//! key a rotation needs, and every result's level, scale and tag, computed here before
//! the backend runs (a backend computes words, never scales). Ciphertexts stay resident.
//!
//! | file | operations |
//! |---|---|
//! | `arith` | sums, plaintexts, constants, multiplication by `i` |
//! | `mul` | products, relinearization, rescale, levels and scales |
//! | `rotate` | rotations, conjugation, hoisting |
//! | `scaled` | exact-scale steps for circuits: constants at a chosen scale, relabels, ModRaise |
//!
//! Two modes ([`Mode`]). **Manual**: operations never change a level on their own; binary
//! operations need one level and one scale ([`fhe_api::ckks::Scale::same_as`]), products
//! are left for [`Evaluator::rescale`]. **Auto** (OpenFHE's FLEXIBLEAUTO, Lattigo's
//! default): products are rescaled at once, and before a binary operation the operand at
//! the higher level is brought to the other's level and scale ([`Evaluator::rescale_to`]),
//! so `x * x + x` needs no care. Both modes refuse a result whose scale would reach its
//! modulus before running.

mod arith;
mod mul;
mod rotate;
mod scaled;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use fhe_api::ckks::{Ciphertext, CkksMeta, EvalKeys, HostCiphertext, Params, PreparedSwitchKey, Scale, SwitchKind};
use fhe_api::error::{Error, KeyNeed, LevelNeed, Result};
use fhe_api::ops::{Backend, CkksOps};
use fhe_api::tag::KeyTag;

pub use arith::PlainOperand;
pub use rotate::HoistedCiphertext;

/// How an [`Evaluator`] treats levels and scales (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Explicit rescales and level matches (today's behaviour, and the default).
    #[default]
    Manual,
    /// Products rescaled at once; levels and scales reconciled before each operation.
    Auto,
}

/// The highest level each Galois key (by element) is switched at by some circuit
/// ([`Evaluator::add_keys_up_to`]); a key not named is prepared whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyLevels {
    pub galois: BTreeMap<u64, usize>,
}

impl KeyLevels {
    /// Notes a switch with the key of `g` at `level` (the highest one noted is kept).
    pub fn note(&mut self, g: u64, level: usize) {
        let l = self.galois.entry(g).or_insert(level);
        *l = (*l).max(level);
    }
}

/// Evaluation with prepared (resident) keys. `Send + Sync`: one evaluator may serve
/// many threads at once, and gain keys while it does ([`Evaluator::add_keys`]).
pub struct Evaluator {
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
    mode: Mode,
    /// The key set's tag, from the first key given (none before).
    tag: RwLock<KeyTag>,
    relin: RwLock<Option<Arc<PreparedSwitchKey>>>,
    galois: RwLock<BTreeMap<u64, Arc<PreparedSwitchKey>>>,
    _open: OpenParams,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("backend", &self.backend.name())
            .field("params", &self.params.name())
            .field("mode", &self.mode)
            .field("relin", &self.relin.read().map(|r| r.is_some()).unwrap_or(false))
            .field("galois", &self.galois_elements())
            .finish()
    }
}

/// The backend's CKKS capability, or `Error::Unsupported`.
pub fn ckks_ops(backend: &dyn Backend) -> Result<&dyn CkksOps> {
    backend.ckks().ok_or_else(|| Error::Unsupported { backend: backend.name(), scheme: "CKKS" })
}

/// Held by a [`crate::ckks::Context`] and an [`Evaluator`]: the backend keeps work
/// buffers for their parameters while one lives (`CkksOps::context_opened`) and frees
/// them when the last drops.
pub(crate) struct OpenParams {
    backend: Arc<dyn Backend>,
    params: Arc<Params>,
}

impl OpenParams {
    pub(crate) fn new(backend: &Arc<dyn Backend>, params: &Arc<Params>) -> Result<Self> {
        ckks_ops(&**backend)?.context_opened(params);
        Ok(OpenParams { backend: backend.clone(), params: params.clone() })
    }
}

impl Drop for OpenParams {
    fn drop(&mut self) {
        if let Some(ops) = self.backend.ckks() {
            ops.context_closed(&self.params);
        }
    }
}

/// `Error::ParamMismatch` naming both parameter sets.
pub(crate) fn check_params(expected: &Params, found: &Params) -> Result<()> {
    if expected != found {
        return Err(Error::ParamMismatch { expected: expected.name().into(), found: found.name().into() });
    }
    Ok(())
}

impl Evaluator {
    /// Prepares (uploads) every key in `keys`.
    pub fn new(backend: Arc<dyn Backend>, params: Arc<Params>, keys: &EvalKeys, mode: Mode) -> Result<Self> {
        Self::new_up_to(backend, params, keys, mode, &KeyLevels::default())
    }

    /// [`Evaluator::new`] with the Galois keys in `levels` prepared up to their levels
    /// ([`Evaluator::add_keys_up_to`]).
    pub fn new_up_to(
        backend: Arc<dyn Backend>,
        params: Arc<Params>,
        keys: &EvalKeys,
        mode: Mode,
        levels: &KeyLevels,
    ) -> Result<Self> {
        let _open = OpenParams::new(&backend, &params)?;
        let ev = Evaluator {
            _open,
            backend,
            params,
            mode,
            tag: RwLock::new(KeyTag::NONE),
            relin: RwLock::new(None),
            galois: RwLock::new(BTreeMap::new()),
        };
        ev.add_keys_up_to(keys, levels)?;
        Ok(ev)
    }

    /// Prepares more keys (rotation keys made later from the secret key,
    /// `Context::eval_keys`); a key already there is replaced. Keys of another key set
    /// than the ones already given are `Error::WrongKey`, of other parameters
    /// `Error::ParamMismatch`; nothing is added when one key is refused.
    pub fn add_keys(&self, keys: &EvalKeys) -> Result<()> {
        self.add_keys_up_to(keys, &KeyLevels::default())
    }

    /// [`Evaluator::add_keys`], each Galois key named in `levels` prepared for switches up
    /// to its level only: the backend may keep a fraction of it (a key used only low in
    /// the chain, as a bootstrap's SlotsToCoeffs rotations, `Bootstrapper::key_levels`).
    /// A switch above that level is `Error::Level` (`LevelNeed::KeyUpTo`); adding the key
    /// again whole lifts the limit. Results are the same words as with whole keys.
    pub fn add_keys_up_to(&self, keys: &EvalKeys, levels: &KeyLevels) -> Result<()> {
        let mut tag = *self.tag.read().map_err(poisoned)?;
        let mut prepared = Vec::new();
        for (g, k) in keys.relin.iter().map(|k| (None, k)).chain(keys.galois.iter().map(|(&g, k)| (Some(g), k))) {
            check_params(&self.params, k.params())?;
            tag = tag.combine(k.tag())?;
            if let Some(g) = g {
                if k.kind() != SwitchKind::Galois(g) {
                    return Err(Error::InvalidInput(format!("the Galois key filed under {g} is a {:?} key", k.kind())));
                }
            } else if k.kind() != SwitchKind::Relin {
                return Err(Error::InvalidInput(format!("the relinearization key is a {:?} key", k.kind())));
            }
            let key = match g.and_then(|g| levels.galois.get(&g)) {
                Some(&level) => self.ops().prepare_key_up_to(k, level)?,
                None => self.ops().prepare_key(k)?,
            };
            prepared.push((g, Arc::new(key)));
        }
        let mut galois = self.galois.write().map_err(poisoned)?;
        for (g, k) in prepared {
            match g {
                Some(g) => drop(galois.insert(g, k)),
                None => *self.relin.write().map_err(poisoned)? = Some(k),
            }
        }
        *self.tag.write().map_err(poisoned)? = tag;
        Ok(())
    }

    pub(crate) fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub(crate) fn ops(&self) -> &dyn CkksOps {
        self.backend.ckks().expect("checked at construction")
    }

    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The tag of the key set whose keys this evaluator holds ([`KeyTag::NONE`] before any).
    pub fn tag(&self) -> KeyTag {
        self.tag.read().map(|t| *t).unwrap_or(KeyTag::NONE)
    }

    /// Whether a relinearization key is prepared.
    pub fn has_relin(&self) -> bool {
        self.relin.read().map(|r| r.is_some()).unwrap_or(false)
    }

    /// Galois elements with a prepared key.
    pub fn galois_elements(&self) -> Vec<u64> {
        self.galois.read().map(|g| g.keys().copied().collect()).unwrap_or_default()
    }

    pub fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        check_params(&self.params, ct.params())?;
        self.ops().upload(ct)
    }

    pub fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        self.check_one(ct)?;
        self.ops().download(ct)
    }

    /// `a` is of these parameters and of this evaluator's key set (or of none; an
    /// evaluator given no key yet takes any set's).
    pub(crate) fn check_one(&self, a: &CkksMeta) -> Result<()> {
        check_params(&self.params, a.params())?;
        match self.tag() {
            t if t.is_none() => Ok(()),
            t => a.tag().check_against(t),
        }
    }

    /// Both operands checked, and their combined tag.
    pub(crate) fn check_pair(&self, a: &CkksMeta, b: &CkksMeta) -> Result<KeyTag> {
        self.check_one(a)?;
        self.check_one(b)?;
        a.tag().combine(b.tag())
    }

    /// Manual mode: one level and one scale, or a typed error naming `op`.
    fn same_level_and_scale(op: &'static str, a: &CkksMeta, b: &CkksMeta) -> Result<()> {
        if a.level() != b.level() {
            return Err(Error::Level { op, found: b.level(), needed: LevelNeed::Equal(a.level()) });
        }
        if !a.scale().same_as(b.scale()) {
            return Err(Error::ScaleMismatch { op, left: a.scale().value(), right: b.scale().value() });
        }
        Ok(())
    }

    pub(crate) fn relin_key(&self) -> Result<Arc<PreparedSwitchKey>> {
        self.relin.read().map_err(poisoned)?.clone().ok_or(Error::MissingKey(KeyNeed::Relinearization))
    }

    /// The Galois key of `g` for a switch at `level` (`Error::Level` when it was prepared
    /// for lower levels only).
    pub(crate) fn galois_key(
        &self,
        g: u64,
        level: usize,
        need: impl FnOnce() -> KeyNeed,
    ) -> Result<Arc<PreparedSwitchKey>> {
        let key = self.galois.read().map_err(poisoned)?.get(&g).cloned().ok_or_else(|| Error::MissingKey(need()))?;
        key.check_covers("rotation", level)?;
        Ok(key)
    }

    /// The highest level the Galois key of `g` switches at (`None`: no such key).
    pub fn galois_key_level(&self, g: u64) -> Option<usize> {
        self.galois.read().ok()?.get(&g).map(|k| k.max_level())
    }

    /// `meta` at `level` with `scale` and `tag`, checked (a scale that would reach the
    /// modulus is `Error::ScaleOverflow` naming `op`).
    pub(crate) fn out(
        &self,
        op: &'static str,
        like: &CkksMeta,
        level: usize,
        scale: Scale,
        tag: KeyTag,
    ) -> Result<CkksMeta> {
        like.with(op, level, scale, tag)
    }
}

fn poisoned<T>(_: T) -> Error {
    Error::InvalidInput("an evaluator's key table was poisoned by a panic in another thread".into())
}
