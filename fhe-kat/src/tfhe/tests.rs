//! Tests that prove the gate can fail: a backend that perturbs one output word must be
//! caught by `dispatch`, by `sweep` and by the KAT replay; a corrupted corpus entry must
//! be caught by replay.

use std::sync::Arc;

use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::testing::{Delegate, Tamper};
use fhe_api::{Backend, LweCiphertext, ParamSet, Seed};
use fhe_cpu::CpuBackend;

use super::{soak, Tfhe};
use crate::compare::{MismatchKind, Source};
use crate::corpus::Corpus;
use crate::{dispatch, replay, sweep, Mismatch};

/// How [`Perturbed`] breaks the oracle.
#[derive(Clone, Copy, Debug)]
enum Flaw {
    /// Flip bit 0 of the `b` word of every `bootstrap_batch` output.
    BootstrapB,
    /// Add one to word 0 of every forward NTT: key generation runs on the backend's NTT,
    /// so the evaluation key's bootstrap key comes out wrong.
    NttWord,
}

/// The CPU oracle with one flaw; every other call is delegated.
#[derive(Debug)]
struct Perturbed(Flaw);

/// The oracle with `flaw`.
fn perturbed(flaw: Flaw) -> Arc<dyn Backend> {
    Arc::new(Delegate::new(CpuBackend::oracle(), Perturbed(flaw)))
}

fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

impl Tamper for Perturbed {
    fn name(&self) -> String {
        format!("test:perturbed-{:?}", self.0)
    }
    fn ring_forward(&self, _: PolynomialSize, q: RingModulus, data: &mut [u64]) -> fhe_api::Result<()> {
        if let Flaw::NttWord = self.0 {
            data[0] = (data[0] + 1) % q.0;
        }
        Ok(())
    }
    fn bootstrap(&self, out: Vec<LweCiphertext>) -> fhe_api::Result<Vec<LweCiphertext>> {
        match self.0 {
            Flaw::BootstrapB => out
                .into_iter()
                .map(|ct| {
                    let (params, tag) = (ct.params(), ct.tag());
                    let mut words = ct.into_words();
                    *words.last_mut().expect("b word") ^= 1;
                    LweCiphertext::from_raw(params, tag, words)
                })
                .collect(),
            Flaw::NttWord => Ok(out),
        }
    }
}

const SET: ParamSet = ParamSet::PN10QP27;

fn find<'a>(ms: impl IntoIterator<Item = &'a Mismatch>, surface: &str) -> Option<&'a Mismatch> {
    ms.into_iter().find(|m| m.surface == surface)
}

/// The byte offset of the `b` word in a serialized ciphertext of `SET` is within its
/// last 4 bytes (`b` is the last word; the format may pad or trail nothing).
fn assert_in_b_word(m: &Mismatch) {
    match m.kind {
        MismatchKind::Bytes { offset, expected_len, .. } => {
            assert!(offset + 4 >= expected_len && offset < expected_len, "{m}")
        }
        _ => panic!("not a byte mismatch: {m}"),
    }
}

#[test]
fn seed_derivation_is_the_documented_hash() {
    use sha2::{Digest, Sha256};
    for (root, k) in [(crate::DISPATCH_ROOT, 0u64), (crate::SWEEP_ROOT, 999)] {
        let mut h = Sha256::new();
        h.update(root.as_bytes());
        h.update([0u8]);
        h.update(k.to_le_bytes());
        let want: [u8; 32] = h.finalize().into();
        assert_eq!(Seed::derive(root, k).0, want);
    }
}

#[test]
fn dispatch_passes_on_a_second_oracle_instance() {
    let other: Arc<dyn Backend> = Arc::new(CpuBackend::new(Some("reference")).unwrap());
    let r = dispatch::<Tfhe>(&oracle(), &other, &[SET], 1).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.sets[0].passed, r.sets[0].seeds), (1, 1));
}

#[test]
fn dispatch_catches_a_flipped_bootstrap_word() {
    let r = dispatch::<Tfhe>(&oracle(), &perturbed(Flaw::BootstrapB), &[SET], 1).unwrap();
    assert!(!r.ok());
    assert_eq!(r.sets[0].passed, 0);
    let m = find(r.mismatches(), "bootstrap[0]").expect("bootstrap[0] caught");
    assert_eq!((m.case.source, m.case.params, m.case.index), (Source::Dispatch, SET.into(), 0));
    assert_in_b_word(m);
    assert!(find(r.mismatches(), "gate:and").is_some());
    assert!(find(r.mismatches(), "ek").is_none(), "keygen is not perturbed");
    let s = m.to_string();
    assert!(s.contains("PN10QP27") && s.contains("seed index 0") && s.contains("bootstrap[0]"), "{s}");
}

#[test]
fn dispatch_catches_a_wrong_ntt_word_in_the_ek() {
    let r = dispatch::<Tfhe>(&oracle(), &perturbed(Flaw::NttWord), &[SET], 1).unwrap();
    assert!(!r.ok());
    let m = find(r.mismatches(), "ek").expect("ek caught");
    assert!(m.offset().is_some(), "{m}");
    assert!(find(r.mismatches(), "sk").is_none() && find(r.mismatches(), "pk").is_none());
}

fn one_entry() -> Corpus<Tfhe> {
    let c = Corpus::<Tfhe>::load_default().unwrap().filter(|e| e.name == "PN10QP27/0");
    assert_eq!(c.len(), 1);
    c
}

#[test]
fn sweep_catches_a_flipped_bootstrap_word_in_both_halves() {
    let r = sweep(&oracle(), &perturbed(Flaw::BootstrapB), &one_entry(), &[SET], 1).unwrap();
    assert!(!r.ok());
    assert!(!r.kat.ok());
    let kat = find(&r.kat.mismatches, "bootstrap[0]").expect("KAT half caught it");
    assert_eq!(kat.case.entry.as_deref(), Some("PN10QP27/0"));
    assert_in_b_word(kat);
    assert!(!r.sets[0].ok());
    let m = find(&r.sets[0].mismatches, "bootstrap[0]").expect("sweep half caught it");
    assert_eq!((m.case.source, m.case.index), (Source::Sweep, 0));
    assert_in_b_word(m);
    assert!(find(&r.sets[0].mismatches, "bootstrap_batch(random[0])").is_some());
}

#[test]
fn sweep_catches_a_wrong_ntt_word_through_the_corpus() {
    let r = sweep(&oracle(), &perturbed(Flaw::NttWord), &one_entry(), &[SET], 0).unwrap();
    assert!(!r.ok());
    assert!(find(&r.kat.mismatches, "ek (sha256)").is_some(), "{:?}", r.kat.mismatches);
}

#[test]
fn the_whole_corpus_replays_on_the_oracle() {
    let corpus = Corpus::<Tfhe>::load_default().unwrap();
    for set in ParamSet::ALL {
        assert!(corpus.entries().filter(|e| e.params == set).count() >= 4, "{set}: fewer than 4 entries");
    }
    let r = replay(&oracle(), &corpus).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!(r.passed, corpus.len());
}

#[test]
fn replay_catches_a_corrupted_entry() {
    let mut corpus = Corpus::<Tfhe>::load_default().unwrap().filter(|e| e.name == "PN10QP27/1");
    let out = corpus.files[0].entries[0].outputs.iter_mut().find(|o| o.surface == "gate:xor").unwrap();
    let mut bytes = hex::decode(&out.ct).unwrap();
    let offset = bytes.len() - 10;
    bytes[offset] ^= 1;
    out.ct = hex::encode(bytes);
    let r = replay(&oracle(), &corpus).unwrap();
    assert_eq!((r.entries, r.passed), (1, 0));
    let m = r
        .mismatches
        .iter()
        .find(|m| m.surface == "gate:xor" && m.offset().is_some())
        .unwrap_or_else(|| panic!("{:?}", r.mismatches));
    assert_eq!(m.offset(), Some(offset));
    assert_eq!(m.case.entry.as_deref(), Some("PN10QP27/1"));
    let s = m.to_string();
    assert!(s.contains("PN10QP27/1") && s.contains("gate:xor") && s.contains(&format!("offset {offset}")), "{s}");
    assert!(r.mismatches.iter().all(|m| m.surface == "gate:xor"), "only the corrupted surface: {:?}", r.mismatches);
}

#[test]
fn a_short_soak_has_no_wrong_results() {
    let r = soak(&CpuBackend::oracle(), SET, 150, 0).unwrap();
    assert_eq!(r.gates, 150);
    assert_eq!(r.wrong, 0);
    assert_eq!(r.by_gate.values().sum::<u64>(), 150);
}
