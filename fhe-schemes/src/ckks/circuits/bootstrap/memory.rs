//! What a bootstrapping configuration holds in memory, estimated before anything is
//! allocated, and the refusal of one the machine cannot hold.
//!
//! Words of 8 bytes, `N` per limb: a prepared switching key holds `a` and `b` for each
//! key-switching digit over `Q_L P` (both expanded, as a backend computes with them); a
//! prepared diagonal is an extended plaintext over `Q_l P` at its level; the working set
//! is the baby-step rotations of one transform over `Q_L P`, plus a dozen ciphertexts.

use fhe_api::ckks::Params;
use fhe_api::error::{Error, Result};

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

/// Bytes of one prepared switching key at the top level.
pub(super) fn key_bytes(params: &Params) -> u64 {
    let digits = params.digits(params.max_level()).len() as u64;
    let limbs = (params.max_level() + 1 + params.p().len()) as u64;
    digits * 2 * 2 * limbs * limb_bytes(params)
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
}
