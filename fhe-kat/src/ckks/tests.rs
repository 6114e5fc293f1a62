//! Tests that prove the CKKS half of the gate can fail: a backend that flips one word of
//! every product is caught by the replay, by `dispatch` and by `sweep`; a corrupted
//! digest or decoded slot in the corpus is caught by the replay; a backend without CKKS
//! is reported as skipped, never as passed.

use std::sync::Arc;

use fhe_api::ckks::entities::HostCiphertext;
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::ops::CkksOps;
use fhe_api::testing::{Delegate, Tamper};
use fhe_api::{Backend, Seed};
use fhe_cpu::CpuBackend;

use super::corpus::CkksKatCt;
use super::{Ckks, KAT_PRESETS};
use crate::compare::{CaseSet, MismatchKind, Source};
use crate::corpus::{Corpus, EntryChange};
use crate::{dispatch, replay, sweep, Mismatch, Scheme};

type CkksCorpus = Corpus<Ckks>;

fn load_default() -> CkksCorpus {
    CkksCorpus::load_default().unwrap()
}

const SMALL: Preset = Preset::Slots4096Scale40Depth2;
/// The word of `c1` the flawed product flips (bit 0).
const FLIPPED_WORD: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Flaw {
    /// Bit 0 of word [`FLIPPED_WORD`] of `c1` of every `mul_relin` output.
    MulWord,
    /// `Backend::ckks()` is `None` (a GPU backend today).
    NoCkks,
}

/// The CPU oracle with one flaw; every other call is delegated.
#[derive(Debug)]
struct Flawed(Flaw);

fn flawed(flaw: Flaw) -> Arc<dyn Backend> {
    Arc::new(Delegate::new(CpuBackend::oracle(), Flawed(flaw)))
}

fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

impl Tamper for Flawed {
    fn name(&self) -> String {
        format!("test:flawed-{:?}", self.0)
    }
    fn ckks(&self, op: &'static str, ops: &dyn CkksOps, out: Ciphertext) -> fhe_api::Result<Ciphertext> {
        if op != "mul_relin" {
            return Ok(out);
        }
        let out = ops.download(&out)?;
        let meta = out.meta().clone();
        let (c0, mut c1) = out.into_parts();
        c1[FLIPPED_WORD] ^= 1;
        ops.upload(&HostCiphertext::from_raw(meta, c0, c1)?)
    }
    fn declares_ckks(&self) -> bool {
        self.0 != Flaw::NoCkks
    }
}

fn surfaces(ms: &[Mismatch]) -> Vec<&str> {
    ms.iter().map(|m| m.surface.as_str()).collect()
}

fn one_entry() -> CkksCorpus {
    let c = load_default().filter(|e| e.name == "ckks/slots4096-scale40-depth2/0");
    assert_eq!(c.len(), 1);
    c
}

/// The surfaces a flipped product word reaches: `mul`, `rescale` (of `mul`) and, in the
/// sweep, the rotated product; never the keys, encryptions or other operations.
fn product_surface(s: &str) -> bool {
    ["mul", "rescale", "rotate(1)", "random:mul", "random:rescale", "random:rotate(1)"]
        .iter()
        .any(|p| s == *p || s.starts_with(&format!("{p} ")))
}

#[test]
fn seed_roots_are_the_documented_strings() {
    assert_eq!(Ckks::dispatch_root(), "lux-fhe-dispatch-equiv-v1/ckks");
    assert_eq!(Ckks::sweep_root(), "lux-fhe-backend-equiv-sweep-v1/ckks");
    assert_eq!(Ckks::kat_root(SMALL), "lux-fhe-kat-v1/ckks/slots4096-scale40-depth2");
    let e = &one_entry().files[0].entries[0];
    assert_eq!(e.seed, hex::encode(Seed::derive("lux-fhe-kat-v1/ckks/slots4096-scale40-depth2", 0).0));
    assert_eq!(
        e.encrypt_seeds[2],
        hex::encode(Seed::derive("lux-fhe-kat-v1/ckks/slots4096-scale40-depth2/encrypt", 2).0)
    );
}

#[test]
fn the_whole_ckks_corpus_replays_on_the_oracle() {
    let corpus = load_default();
    for p in KAT_PRESETS {
        let n = corpus.entries().filter(|e| e.preset == p.name()).count() as u64;
        assert_eq!(n, Ckks::KAT_ENTRIES, "{p}");
    }
    let r = replay(&oracle(), &corpus).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
}

#[test]
fn replay_catches_a_flipped_product_word() {
    let r = replay(&flawed(Flaw::MulWord), &one_entry()).unwrap();
    assert!(r.failed() && !r.ok());
    assert_eq!((r.entries, r.passed), (1, 0));
    let found = surfaces(&r.mismatches);
    assert!(found.contains(&"mul (sha256)") && found.contains(&"rescale (sha256)"), "{found:?}");
    assert!(found.iter().all(|s| product_surface(s)), "only the product and what follows it: {found:?}");
    let m = r.mismatches.iter().find(|m| m.surface == "mul (sha256)").unwrap();
    assert_eq!(m.case.entry.as_deref(), Some("ckks/slots4096-scale40-depth2/0"));
    assert_eq!((m.case.source, m.case.params), (Source::Kat, CaseSet::Ckks(SMALL)));
    assert!(m.to_string().contains("ckks slots4096-scale40-depth2"), "{m}");
}

#[test]
fn replay_catches_a_corrupted_digest_and_a_moved_slot() {
    let mut corpus = one_entry();
    let outputs = &mut corpus.files[0].entries[0].outputs;
    let find = |o: &mut Vec<CkksKatCt>, s: &str| o.iter().position(|c| c.surface == s).unwrap();
    let i = find(outputs, "rotate_hoisted[3]");
    let mut digest = hex::decode(&outputs[i].sha256).unwrap();
    digest[7] ^= 0x10;
    outputs[i].sha256 = hex::encode(digest);
    let j = find(outputs, "conjugate");
    outputs[j].slots[2][1] += 1e-12;
    let r = replay(&oracle(), &corpus).unwrap();
    assert_eq!((r.entries, r.passed), (1, 0));
    // In output order: `conjugate` comes before the hoisted rotations.
    assert_eq!(surfaces(&r.mismatches), ["conjugate", "rotate_hoisted[3] (sha256)"], "{:?}", r.mismatches);
    assert!(matches!(&r.mismatches[0].kind, MismatchKind::Values { what, .. } if what.contains("slot 2")));
    assert_eq!(r.mismatches[1].offset(), Some(7));
}

#[test]
fn dispatch_passes_on_every_cpu_variant() {
    let variants = fhe_cpu::ntt::variants().iter().filter(|v| (v.supported)());
    for v in variants {
        let target: Arc<dyn Backend> = Arc::new(CpuBackend::new(Some(v.name)).unwrap());
        let r = dispatch::<Ckks>(&oracle(), &target, &[SMALL], 1).unwrap();
        assert!(r.ok(), "{}: {:?}", v.name, r.mismatches().map(|m| m.to_string()).collect::<Vec<_>>());
        assert_eq!((r.sets[0].passed, r.sets[0].seeds), (1, 1));
    }
}

#[test]
fn dispatch_catches_a_flipped_product_word() {
    let r = dispatch::<Ckks>(&oracle(), &flawed(Flaw::MulWord), &[SMALL], 2).unwrap();
    assert!(r.failed());
    assert_eq!(r.sets[0].passed, 0);
    let found: Vec<_> = r.mismatches().map(|m| m.surface.as_str()).collect();
    assert!(found.iter().all(|s| product_surface(s)), "{found:?}");
    let m = r.mismatches().find(|m| m.surface == "mul").expect("mul caught");
    assert_eq!((m.case.source, m.case.params, m.case.index), (Source::Dispatch, CaseSet::Ckks(SMALL), 0));
    // c1 starts after c0's (level + 1) limbs of N words.
    let c1_start = 3 * SMALL.params().n() * 8;
    assert_eq!(m.offset(), Some(c1_start + 8 * FLIPPED_WORD), "{m}");
    assert!(r.mismatches().any(|m| m.case.index == 1), "every seed is caught");
}

#[test]
fn sweep_catches_a_flipped_product_word_in_both_halves() {
    let r = sweep(&oracle(), &flawed(Flaw::MulWord), &one_entry(), &[SMALL], 1).unwrap();
    assert!(r.failed() && r.kat.failed());
    assert!(r.kat.mismatches.iter().any(|m| m.surface == "mul (sha256)"));
    let found = surfaces(&r.sets[0].mismatches);
    assert!(
        found.contains(&"mul") && found.contains(&"random:mul") && found.contains(&"random:rotate(1)"),
        "{found:?}"
    );
    assert!(found.iter().all(|s| product_surface(s)), "{found:?}");
    assert!(r.sets[0].mismatches.iter().all(|m| m.case.source == Source::Sweep));
}

#[test]
fn sweep_passes_on_the_oracle() {
    let r = sweep(&oracle(), &oracle(), &one_entry(), &[SMALL], 2).unwrap();
    assert!(r.ok(), "{:?}", r.mismatches().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.kat.passed, r.sets[0].passed), (1, 2));
}

#[test]
fn a_backend_without_ckks_is_skipped_never_passed() {
    let corpus = one_entry();
    let r = replay(&flawed(Flaw::NoCkks), &corpus).unwrap();
    let why = r.skipped.as_deref().expect("skipped");
    assert!(why.contains("test:flawed-NoCkks") && why.contains("no CKKS capability"), "{why}");
    assert_eq!((r.entries, r.passed), (1, 0));
    assert!(!r.ok() && !r.failed() && r.mismatches.is_empty());
    let d = dispatch::<Ckks>(&oracle(), &flawed(Flaw::NoCkks), &[SMALL], 3).unwrap();
    assert!(d.sets[0].skipped.is_some() && d.sets[0].passed == 0 && !d.ok() && !d.failed());
    let s = sweep(&oracle(), &flawed(Flaw::NoCkks), &corpus, &[SMALL], 3).unwrap();
    assert!(s.kat.skipped.is_some() && s.sets[0].skipped.is_some() && !s.ok() && !s.failed());
    // An oracle without CKKS is an error, not a skip.
    assert!(dispatch::<Ckks>(&flawed(Flaw::NoCkks), &oracle(), &[SMALL], 1).is_err());
}

#[test]
fn diff_names_changed_surfaces_and_ignores_last_bit_float_noise() {
    let old = one_entry();
    let mut noisy = old.clone();
    let e = &mut noisy.files[0].entries[0];
    e.outputs[0].slots[0][0] = f64::from_bits(e.outputs[0].slots[0][0].to_bits() ^ 1);
    e.outputs[0].precision_bits += 0.01;
    assert!(old.diff(&noisy).is_empty());
    let mut changed = old.clone();
    let e = &mut changed.files[0].entries[0];
    e.digests[2].sha256 = "00".into();
    e.outputs[4].decrypt_sha256 = "00".into();
    let (name, rlk, mul) = (e.name.clone(), e.digests[2].name.clone(), e.outputs[4].surface.clone());
    assert_eq!((rlk.as_str(), mul.as_str()), ("rlk.b", "mul"));
    assert_eq!(old.diff(&changed), [EntryChange::Changed(name, vec![rlk, mul])]);
}

#[test]
fn corpus_round_trips_through_files() {
    let dir = std::env::temp_dir().join(format!("fhe-kat-ckks-test-{}", std::process::id()));
    let c = one_entry();
    c.write(&dir).unwrap();
    let back = CkksCorpus::load(&dir).unwrap();
    assert!(c.diff(&back).is_empty());
    assert_eq!(back.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(CkksCorpus::load(&dir).unwrap().is_empty());
}
