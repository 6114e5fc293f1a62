//! CKKS on the emulator: the shared GPU backend's `CkksOps` (every kernel of
//! `kernels/ckks/`, run as C++ on the CPU) against the CPU oracle, byte for byte: the
//! shared conformance suite, the CKKS known-answer corpora (levelled operations and the
//! insecure bootstrap) and a dispatch run; each operation alone is `ckks_ops_tests`.

use std::sync::Arc;

use fhe_api::Backend;
use fhe_cpu::CpuBackend;
use fhe_kat::ckks::{Ckks, CkksBootstrap, EQUIV_PRESETS};
use fhe_kat::{dispatch, replay, Corpus};

use super::*;

fn gpu() -> Arc<GpuBackend<EmuDriver>> {
    Arc::new(emulated_backend().expect("the emulator"))
}

fhe_schemes::ckks_conformance_tests!(
    super::gpu(),
    std::sync::Arc::new(fhe_cpu::CpuBackend::oracle()),
    preset = fhe_api::ckks::params::Preset::Slots4096Scale40Depth2
);

/// Every entry of the CKKS known-answer corpus (both small presets) replays on the
/// emulated device with the pinned words.
#[test]
fn ckks_kat_replays_byte_equal() {
    let corpus = Corpus::<Ckks>::load_default().expect("the CKKS corpus");
    let target: Arc<dyn Backend> = gpu();
    let r = replay(&target, &corpus).expect("replay");
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
}

/// The pinned insecure bootstrap (ModRaise, the lazy-ModDown transforms, EvalMod)
/// replays on the emulated device with the pinned words.
#[test]
fn ckks_bootstrap_kat_replays_byte_equal() {
    let corpus = Corpus::<CkksBootstrap>::load_default().expect("the CKKS bootstrap corpus");
    let target: Arc<dyn Backend> = gpu();
    let r = replay(&target, &corpus).expect("replay");
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
}

/// Fresh seeds, the oracle's words against the device's.
#[test]
fn ckks_dispatch_matches_the_oracle() {
    let (oracle, target): (Arc<dyn Backend>, Arc<dyn Backend>) = (Arc::new(CpuBackend::oracle()), gpu());
    let d = dispatch::<Ckks>(&oracle, &target, &EQUIV_PRESETS, 2).expect("dispatch");
    assert!(d.ok(), "{:?}", d.sets.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>());
}

#[test]
fn the_capability_is_declared() {
    assert!(gpu().ckks().is_some());
}
