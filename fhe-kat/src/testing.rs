//! Tests that prove the gate can fail: a backend that perturbs one output word must be
//! caught by `dispatch`, by `sweep` and by the KAT replay; a corrupted corpus entry must
//! be caught by replay.

use fhe_api::{
    Backend, BackendKind, BootstrapOps, DeviceInfo, EvaluationKey, ExtractedLwe, KeyOps, KeySet, LweCiphertext, NttOps,
    ParamSet, PreparedKey, PublicKey, Seed,
};
use fhe_cpu::CpuBackend;

use crate::compare::{MismatchKind, Source};
use crate::corpus::Corpus;
use crate::{dispatch, replay, soak, sweep, Mismatch};

/// How [`Perturbed`] breaks the oracle.
#[derive(Clone, Copy, Debug)]
enum Flaw {
    /// Flip bit 0 of the `b` word of every `bootstrap_batch` output.
    BootstrapB,
    /// Flip bit 0 of key-switching-key word 0 of every generated evaluation key.
    EkWord,
}

/// The CPU oracle with one flaw; every other call is delegated.
struct Perturbed {
    inner: CpuBackend,
    flaw: Flaw,
}

impl Perturbed {
    fn new(flaw: Flaw) -> Self {
        Perturbed { inner: CpuBackend::oracle(), flaw }
    }
}

impl KeyOps for Perturbed {
    fn keygen_from_seed(&self, params: ParamSet, seed: &Seed) -> fhe_api::Result<KeySet> {
        let mut keys = self.inner.keygen_from_seed(params, seed)?;
        if let Flaw::EkWord = self.flaw {
            let ek = &keys.ek;
            let mut ksk = ek.ksk_b().to_vec();
            ksk[0] ^= 1;
            keys.ek = EvaluationKey::from_raw(params, *ek.public_seed(), ek.bsk_b().to_vec(), ksk)?;
        }
        Ok(keys)
    }
    fn encrypt_bit_seeded(&self, pk: &PublicKey, bit: bool, seed: &Seed) -> fhe_api::Result<LweCiphertext> {
        self.inner.encrypt_bit_seeded(pk, bit, seed)
    }
}

impl fhe_api::ops::RingOps for Perturbed {
    fn ring_forward(
        &self,
        n: fhe_api::params::PolynomialSize,
        q: fhe_api::params::RingModulus,
        data: &mut [u64],
    ) -> fhe_api::Result<()> {
        self.inner.ring_forward(n, q, data)
    }
    fn ring_inverse(
        &self,
        n: fhe_api::params::PolynomialSize,
        q: fhe_api::params::RingModulus,
        data: &mut [u64],
    ) -> fhe_api::Result<()> {
        self.inner.ring_inverse(n, q, data)
    }
}

impl NttOps for Perturbed {
    fn ntt_forward(&self, params: ParamSet, data: &mut [u64]) -> fhe_api::Result<()> {
        self.inner.ntt_forward(params, data)
    }
    fn ntt_inverse(&self, params: ParamSet, data: &mut [u64]) -> fhe_api::Result<()> {
        self.inner.ntt_inverse(params, data)
    }
    fn ntt_variant(&self) -> &str {
        self.inner.ntt_variant()
    }
}

impl BootstrapOps for Perturbed {
    fn prepare(&self, ek: &EvaluationKey) -> fhe_api::Result<PreparedKey> {
        self.inner.prepare(ek)
    }
    fn blind_rotate_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> fhe_api::Result<Vec<ExtractedLwe>> {
        self.inner.blind_rotate_batch(key, inputs)
    }
    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> fhe_api::Result<Vec<LweCiphertext>> {
        self.inner.key_switch_batch(key, inputs)
    }
    fn bootstrap_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> fhe_api::Result<Vec<LweCiphertext>> {
        let out = self.inner.bootstrap_batch(key, inputs)?;
        match self.flaw {
            Flaw::BootstrapB => out
                .into_iter()
                .map(|ct| {
                    let (params, tag) = (ct.params(), ct.tag());
                    let mut words = ct.into_words();
                    *words.last_mut().expect("b word") ^= 1;
                    LweCiphertext::from_raw(params, tag, words)
                })
                .collect(),
            Flaw::EkWord => Ok(out),
        }
    }
}

impl Backend for Perturbed {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn name(&self) -> String {
        format!("test:perturbed-{:?}", self.flaw)
    }
    fn device_info(&self) -> DeviceInfo {
        self.inner.device_info()
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
    let other = CpuBackend::new(Some("reference")).unwrap();
    let r = dispatch(&CpuBackend::oracle(), &other, &[SET], 1).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.sets[0].passed, r.sets[0].seeds), (1, 1));
}

#[test]
fn dispatch_catches_a_flipped_bootstrap_word() {
    let r = dispatch(&CpuBackend::oracle(), &Perturbed::new(Flaw::BootstrapB), &[SET], 1).unwrap();
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
fn dispatch_catches_a_flipped_ek_word() {
    let r = dispatch(&CpuBackend::oracle(), &Perturbed::new(Flaw::EkWord), &[SET], 1).unwrap();
    assert!(!r.ok());
    let m = find(r.mismatches(), "ek").expect("ek caught");
    assert!(m.offset().is_some(), "{m}");
    assert!(find(r.mismatches(), "sk").is_none() && find(r.mismatches(), "pk").is_none());
}

fn one_entry() -> Corpus {
    let c = Corpus::load_default().unwrap().filter(|e| e.name == "PN10QP27/0");
    assert_eq!(c.len(), 1);
    c
}

#[test]
fn sweep_catches_a_flipped_bootstrap_word_in_both_halves() {
    let r = sweep(&CpuBackend::oracle(), &Perturbed::new(Flaw::BootstrapB), &one_entry(), &[SET], 1).unwrap();
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
fn sweep_catches_a_flipped_ek_word_through_the_corpus() {
    let r = sweep(&CpuBackend::oracle(), &Perturbed::new(Flaw::EkWord), &one_entry(), &[SET], 0).unwrap();
    assert!(!r.ok());
    assert!(find(&r.kat.mismatches, "ek (sha256)").is_some(), "{:?}", r.kat.mismatches);
}

#[test]
fn the_whole_corpus_replays_on_the_oracle() {
    let corpus = Corpus::load_default().unwrap();
    for set in ParamSet::ALL {
        assert!(corpus.entries().filter(|e| e.params == set).count() >= 4, "{set}: fewer than 4 entries");
    }
    let r = replay(&CpuBackend::oracle(), &corpus).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!(r.passed, corpus.len());
}

#[test]
fn replay_catches_a_corrupted_entry() {
    let mut corpus = Corpus::load_default().unwrap().filter(|e| e.name == "PN10QP27/1");
    let out = corpus.files[0].entries[0].outputs.iter_mut().find(|o| o.surface == "gate:xor").unwrap();
    let mut bytes = hex::decode(&out.ct).unwrap();
    let offset = bytes.len() - 10;
    bytes[offset] ^= 1;
    out.ct = hex::encode(bytes);
    let r = replay(&CpuBackend::oracle(), &corpus).unwrap();
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
