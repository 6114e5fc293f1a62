//! The PBS corpus replays on the CPU oracle and the default CPU variant, and the replay
//! can fail: a backend that flips one word of every blind rotation, a corrupted digest
//! and a changed value are each named by surface; a backend that prepares no `M2C2` keys
//! is skipped, never passed.

use std::sync::Arc;

use fhe_api::testing::{Delegate, Tamper};
use fhe_api::{Backend, ExtractedLwe, ParamSet, Seed};
use fhe_cpu::CpuBackend;

use super::{Pbs, CASES};
use crate::compare::MismatchKind;
use crate::corpus::{Corpus, EntryChange};
use crate::{replay, Mismatch, Scheme};

type PbsCorpus = Corpus<Pbs>;

fn load_default() -> PbsCorpus {
    PbsCorpus::load_default().unwrap()
}

/// Entry `k` of `M2C2`'s file.
fn entry(k: u64) -> PbsCorpus {
    entry_of(ParamSet::M2C2, k)
}

/// Entry `k` of `set`'s file.
fn entry_of(set: ParamSet, k: u64) -> PbsCorpus {
    let c = load_default().filter(|e| e.index == k && e.name == format!("{set}/{k}"));
    assert_eq!(c.len(), 1);
    c
}

fn surfaces(ms: &[Mismatch]) -> Vec<&str> {
    ms.iter().map(|m| m.surface.as_str()).collect()
}

/// The CPU oracle flipping bit 0 of word 7 of every blind rotation's output, or
/// declaring that it prepares no programmable-bootstrapping keys.
#[derive(Debug)]
struct Flawed {
    prepares_pbs: bool,
}

impl Tamper for Flawed {
    fn name(&self) -> String {
        format!("test:pbs-flawed-{}", self.prepares_pbs)
    }
    fn blind_rotate(&self, out: Vec<ExtractedLwe>) -> fhe_api::Result<Vec<ExtractedLwe>> {
        out.into_iter()
            .map(|ct| {
                let mut words = ct.as_words().to_vec();
                words[7] ^= 1;
                ExtractedLwe::from_raw(ct.params(), ct.tag(), words)
            })
            .collect()
    }
    fn declares_set(&self, set: ParamSet) -> bool {
        self.prepares_pbs || set.params().lwe_fits_u16()
    }
}

fn flawed(prepares_pbs: bool) -> Arc<dyn Backend> {
    Arc::new(Delegate::new(CpuBackend::oracle(), Flawed { prepares_pbs }))
}

#[test]
fn seeds_cases_and_file_are_the_documented_ones() {
    assert_eq!(Pbs::kat_root(ParamSet::M2C2), "lux-fhe-kat-v1/M2C2");
    assert_eq!(Pbs::file_name(ParamSet::M2C2), "pbs-M2C2.json");
    assert_eq!(Pbs::file_name(ParamSet::M2C2G3), "pbs-M2C2G3.json");
    let corpus = load_default();
    // One file per PBS set (grouping factors 1, 2, 3), every case in each.
    assert_eq!(corpus.len(), CASES.len() * ParamSet::PBS.len());
    assert_eq!(corpus.files.iter().map(|f| f.params).collect::<Vec<_>>(), ParamSet::PBS);
    for file in &corpus.files {
        let set = file.params;
        for (k, e) in file.entries.iter().enumerate() {
            let k = k as u64;
            assert_eq!((e.index, e.name.as_str()), (k, format!("{set}/{k}").as_str()));
            assert_eq!(e.seed, hex::encode(Seed::derive(&format!("lux-fhe-kat-v1/{set}"), k).0));
            let enc = |j| hex::encode(Seed::derive(&format!("lux-fhe-kat-v1/{set}/encrypt"), 3 * k + j).0);
            assert_eq!(e.encrypt_seeds, [enc(0), enc(1), enc(2)]);
            assert_eq!(e.case, CASES[k as usize].name());
        }
        let table = &file.entries[0];
        assert_eq!(table.inputs.len(), 16);
        assert_eq!(table.outputs.len(), 32);
        for (m, out) in table.outputs[16..].iter().enumerate() {
            assert_eq!((out.surface.clone(), out.value), (format!("pbs[{m}]"), table.inputs[m]), "{set}");
        }
        let add = &file.entries[1];
        let names: Vec<_> = add.outputs.iter().map(|o| o.surface.as_str()).collect();
        assert_eq!(names, ["a", "b", "add"]);
        assert_eq!(add.outputs[2].value, (add.inputs[0] + add.inputs[1]) % (1 << 16), "{set}");
    }
}

#[test]
fn the_pbs_corpus_replays_on_the_oracle_and_the_default_cpu_variant() {
    let corpus = load_default();
    let default_cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new(None).unwrap());
    for b in [Arc::new(CpuBackend::oracle()) as Arc<dyn Backend>, default_cpu] {
        let r = replay(&b, &corpus).unwrap();
        assert!(r.ok(), "{}: {:?}", b.name(), r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
        assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
    }
}

#[test]
fn replay_names_a_corrupted_digest_and_a_changed_value() {
    let mut corpus = entry(1);
    let e = &mut corpus.files[0].entries[0];
    let mut digest = hex::decode(&e.outputs[2].sha256).unwrap();
    digest[4] ^= 0x80;
    e.outputs[2].sha256 = hex::encode(digest);
    e.outputs[0].value ^= 1;
    let r = replay(&(Arc::new(CpuBackend::oracle()) as Arc<dyn Backend>), &corpus).unwrap();
    assert_eq!((r.entries, r.passed), (1, 0));
    assert_eq!(surfaces(&r.mismatches), ["a", "add (sha256)"], "{:?}", r.mismatches);
    assert!(matches!(r.mismatches[0].kind, MismatchKind::Structure(_)));
    assert_eq!(r.mismatches[1].offset(), Some(4));
    assert!(r.mismatches[1].to_string().contains("M2C2/1"), "{}", r.mismatches[1]);
}

#[test]
fn replay_catches_a_flipped_word_of_the_blind_rotation() {
    // Two sets of different grouping: each file pins its own rotation's words.
    for set in [ParamSet::M2C2, ParamSet::M2C2G2] {
        let r = replay(&flawed(true), &entry_of(set, 0)).unwrap();
        assert!(r.failed() && !r.ok(), "{set}");
        let found = surfaces(&r.mismatches);
        // Keys and encryptions make no blind rotation: only the bootstrapped blocks
        // differ (a flip of the lowest bit of one word is noise: they still decrypt right).
        assert!(!found.is_empty() && found.iter().all(|s| s.starts_with("pbs[")), "{set}: {found:?}");
        assert!(found.contains(&"pbs[0] (sha256)"), "{set}: {found:?}");
    }
}

#[test]
fn a_backend_without_wide_keys_is_skipped_never_passed() {
    let r = replay(&flawed(false), &load_default()).unwrap();
    let why = r.skipped.as_deref().expect("skipped");
    assert!(why.contains("prepares no keys of M2C2"), "{why}");
    assert_eq!(r.passed, 0);
    assert!(!r.ok() && !r.failed() && r.mismatches.is_empty());
}

#[test]
fn diff_names_the_changed_surfaces() {
    let old = entry(0);
    let mut changed = old.clone();
    let e = &mut changed.files[0].entries[0];
    e.outputs[20].sha256 = "00".into();
    e.ek_sha256 = "00".into();
    let name = e.name.clone();
    assert_eq!(old.diff(&changed), [EntryChange::Changed(name, vec!["ek".into(), "pbs[4]".into()])]);
}
