//! What a bootstrapping configuration holds in memory, estimated before anything is
//! allocated, and the refusal of one the machine cannot hold.
//!
//! Words of 8 bytes, `N` per limb: a prepared switching key holds `a` and `b` for each
//! key-switching digit covering `Q_l` over `Q_l P`, `l` the highest level it switches at
//! ([`key_levels`]: the SlotsToCoeffs rotations low in the chain take a fraction of a
//! whole key), made and prepared one at a time (`Context::evaluator_from_secret`: a key
//! set held on the host as well adds `b` of every key over `Q_L P`); a prepared diagonal
//! is an extended plaintext over `Q_l P` at its level, or `N` words compact
//! ([`DiagonalForm::Compact`], where the backend keeps it so); the working set is the baby-step
//! rotations of one transform over `Q_L P`, a dozen ciphertexts, and the work buffers a
//! backend keeps ([`pool_bytes`]). On a backend with device memory the estimate is
//! checked against the device's free bytes as well ([`check_fits_on`]).

use fhe_api::ckks::Params;
use fhe_api::error::{Error, Result};
use fhe_api::ops::WORK_POOL_POLYS;
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation};
use fhe_api::Backend;

use crate::ckks::circuits::linear::{DiagonalForm, LinearTransform};
use crate::ckks::evaluator::KeyLevels;

/// Bytes a configuration needs, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Relinearization, conjugation and rotation keys, prepared.
    pub keys: u64,
    /// The transforms' prepared diagonals.
    pub plaintexts: u64,
    /// Baby steps and temporaries during one bootstrap.
    pub working: u64,
}

impl MemoryEstimate {
    pub fn total(&self) -> u64 {
        self.keys + self.plaintexts + self.working
    }
}

/// Bytes of one limb.
pub(super) fn limb_bytes(params: &Params) -> u64 {
    8 * params.n() as u64
}

/// Bytes of one switching key's `b` over `Q_l P` for the digits covering `Q_l`: a host
/// key's at the top level, half a prepared one's at `l`.
pub(super) fn half_key_bytes(params: &Params, level: usize) -> u64 {
    let digits = params.digits(level).len() as u64;
    digits * (level + 1 + params.p().len()) as u64 * limb_bytes(params)
}

/// Bytes of the keys of a bootstrap, prepared: the relinearization key and `extra` more
/// whole (encapsulation's from the sparse secret: `extra_low` at level 0), and the
/// Galois keys of `levels`, each up to its level; plus the host key being made.
pub(super) fn keys_bytes(params: &Params, levels: &KeyLevels, extra: usize, extra_low: usize) -> u64 {
    let top = params.max_level();
    let whole = 1 + extra as u64;
    let prepared: u64 = levels.galois.values().map(|&l| 2 * half_key_bytes(params, l)).sum::<u64>()
        + whole * 2 * half_key_bytes(params, top)
        + extra_low as u64 * 2 * half_key_bytes(params, 0);
    // The key being made: its `b`, its `a` expanded, and both cut to its level.
    prepared + 4 * half_key_bytes(params, top)
}

/// Bytes of the prepared diagonals of `factors`, each with its level: extended plaintexts
/// over `Q_l P`, or one word a coefficient when `compact`.
pub(super) fn diagonal_bytes<'a>(
    params: &Params,
    factors: impl Iterator<Item = (&'a LinearTransform, usize)>,
    compact: bool,
) -> u64 {
    let special = params.p().len();
    let limbs = |l: usize| if compact { 1 } else { (l + 1 + special) as u64 };
    factors.map(|(t, l)| t.diagonals().len() as u64 * limbs(l) * limb_bytes(params)).sum()
}

/// The form a configuration's diagonals take, and its estimate: `form` when set;
/// otherwise whole where the estimate with whole diagonals fits the machine's available
/// memory, compact where it does not. `memory(compact)` is the estimate in each form;
/// `keeps_compact`: whether the backend keeps compact plaintexts (if not, the diagonals
/// are whole whatever the form); `keys_made`: the keys are resident already, so the
/// machine's available memory is compared with the rest.
pub(super) fn settle_form(
    form: Option<DiagonalForm>,
    keeps_compact: bool,
    keys_made: bool,
    memory: impl Fn(bool) -> MemoryEstimate,
) -> (DiagonalForm, MemoryEstimate) {
    let strip = |m: MemoryEstimate| if keys_made { MemoryEstimate { keys: 0, ..m } } else { m };
    let whole = strip(memory(false));
    let form = form.unwrap_or(match available_memory() {
        Some(available) if whole.total() > available => DiagonalForm::Compact,
        _ => DiagonalForm::Evaluation,
    });
    match form {
        DiagonalForm::Compact if keeps_compact => (form, strip(memory(true))),
        _ => (form, whole),
    }
}

/// Bytes of the work buffers a backend keeps between calls ([`WORK_POOL_POLYS`] extended
/// polynomials at the top level), beside those in use.
pub(super) fn pool_bytes(params: &Params) -> u64 {
    WORK_POOL_POLYS as u64 * (params.max_level() + 1 + params.p().len()) as u64 * limb_bytes(params)
}

/// The Galois keys of a bootstrap and the highest level each is switched at: the
/// transforms' rotations at each factor's level (`cts` from `cts_top`, `stc` from
/// `stc_top`, one level per factor), `extra` rotations at their levels, and conjugation
/// at `conj_level`.
pub(super) fn key_levels(
    params: &Params,
    (cts, cts_top): (&[LinearTransform], usize),
    (stc, stc_top): (&[LinearTransform], usize),
    extra: &[(i64, usize)],
    conj_level: usize,
) -> KeyLevels {
    let ring = params.ring_degree();
    let mut levels = KeyLevels::default();
    let factors = cts.iter().zip((0..=cts_top).rev()).chain(stc.iter().zip((0..=stc_top).rev()));
    for (t, l) in factors {
        for steps in t.rotations() {
            levels.note(galois_element_for_rotation(ring, steps), l);
        }
    }
    for &(steps, l) in extra {
        levels.note(galois_element_for_rotation(ring, steps), l);
    }
    levels.note(conjugation_element(ring), conj_level);
    levels
}

/// The memory the operating system reports available (`MemAvailable`), where it does.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `Error::OutOfMemory` when `estimate` exceeds what the machine has available (no
/// refusal where the system does not say).
pub fn check_fits(what: &str, estimate: &MemoryEstimate) -> Result<()> {
    match available_memory() {
        Some(available) if estimate.total() > available => {
            Err(Error::OutOfMemory { what: what.to_string(), needed: estimate.total(), available })
        }
        _ => Ok(()),
    }
}

/// [`check_fits`], then, where `backend` keeps its data on a device that reports its
/// memory (`Backend::device_memory`), the estimate against the device's free bytes.
pub fn check_fits_on(backend: &dyn Backend, what: &str, estimate: &MemoryEstimate) -> Result<()> {
    check_fits(what, estimate)?;
    match backend.device_memory() {
        Some(m) => m.check(what, &backend.device_info().name, estimate.total()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_beyond_the_machine_is_a_typed_error_naming_both_numbers() {
        let Some(available) = available_memory() else { return };
        let huge = MemoryEstimate { keys: available, plaintexts: available, working: 1 };
        let e = check_fits("a test configuration", &huge).unwrap_err();
        let Error::OutOfMemory { needed, available: a, .. } = &e else { panic!("{e}") };
        assert_eq!((*needed, *a > 0), (2 * available + 1, true));
        let msg = e.to_string();
        assert!(msg.contains("a test configuration") && msg.contains(&needed.to_string()), "{msg}");
        check_fits("nothing", &MemoryEstimate::default()).unwrap();
    }

    #[test]
    fn the_diagonal_form_is_settled_by_the_config_the_backend_and_the_machine() {
        let Some(available) = available_memory() else { return };
        let estimate = |whole_plaintexts: u64| {
            move |compact: bool| MemoryEstimate {
                keys: 10,
                plaintexts: if compact { 1 } else { whole_plaintexts },
                working: 5,
            }
        };
        let (small, huge) = (estimate(100), estimate(2 * available));
        use DiagonalForm::{Compact, Evaluation};
        // Asked for: kept, and counted compact only where the backend keeps it so.
        assert_eq!(settle_form(Some(Compact), true, false, small), (Compact, small(true)));
        assert_eq!(settle_form(Some(Compact), false, false, small), (Compact, small(false)));
        assert_eq!(settle_form(Some(Evaluation), true, false, huge).1, huge(false));
        // Left open: whole where it fits, compact where it does not; keys already made
        // are left out of both the comparison and the estimate.
        assert_eq!(settle_form(None, true, false, small), (Evaluation, small(false)));
        assert_eq!(settle_form(None, true, false, huge), (Compact, huge(true)));
        let rest = settle_form(None, true, true, small).1;
        assert_eq!((rest.keys, rest.plaintexts), (0, 100));
    }
}
