//! The bootstrap corpus replays on the CPU oracle and the default CPU variant, and the
//! replay can fail: a backend that flips one word of every product inside the bootstrap,
//! a corrupted digest, a moved slot or a changed case are each named by surface; a
//! malformed file is an error naming the cause; a backend without CKKS is skipped.

use std::sync::Arc;

use fhe_api::ckks::entities::HostCiphertext;
use fhe_api::ckks::Ciphertext;
use fhe_api::ops::CkksOps;
use fhe_api::testing::{Delegate, Tamper};
use fhe_api::{Backend, Seed};
use fhe_cpu::CpuBackend;

use super::{BootstrapSet, CkksBootstrap, CASES};
use crate::compare::{CaseSet, MismatchKind, Source};
use crate::corpus::{Corpus, EntryChange};
use crate::{replay, Error, Mismatch, Scheme};

type BootCorpus = Corpus<CkksBootstrap>;

fn load_default() -> BootCorpus {
    BootCorpus::load_default().unwrap()
}

fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

/// Entry `k` alone.
fn entry(k: u64) -> BootCorpus {
    let c = load_default().filter(|e| e.index == k);
    assert_eq!(c.len(), 1);
    c
}

fn surfaces(ms: &[Mismatch]) -> Vec<&str> {
    ms.iter().map(|m| m.surface.as_str()).collect()
}

/// The CPU oracle flipping bit 0 of word 5 of `c1` of every `mul_relin` output (the
/// bootstrap's products; keygen and encryption make none), or declaring no CKKS.
#[derive(Debug)]
struct Flawed {
    declares_ckks: bool,
}

impl Tamper for Flawed {
    fn name(&self) -> String {
        format!("test:bootstrap-flawed-{}", self.declares_ckks)
    }
    fn ckks(&self, op: &'static str, ops: &dyn CkksOps, out: Ciphertext) -> fhe_api::Result<Ciphertext> {
        if op != "mul_relin" {
            return Ok(out);
        }
        let out = ops.download(&out)?;
        let meta = out.meta().clone();
        let (c0, mut c1) = out.into_parts();
        c1[5] ^= 1;
        ops.upload(&HostCiphertext::from_raw(meta, c0, c1)?)
    }
    fn declares_ckks(&self) -> bool {
        self.declares_ckks
    }
}

fn flawed(declares_ckks: bool) -> Arc<dyn Backend> {
    Arc::new(Delegate::new(CpuBackend::oracle(), Flawed { declares_ckks }))
}

#[test]
fn seeds_cases_and_file_are_the_documented_ones() {
    assert_eq!(CkksBootstrap::kat_root(BootstrapSet::Insecure), "lux-fhe-kat-v1/ckks/bootstrap-insecure");
    assert_eq!(CkksBootstrap::file_name(BootstrapSet::Insecure), "ckks-bootstrap-insecure.json");
    let corpus = load_default();
    assert_eq!(corpus.len(), CASES.len());
    for (k, e) in corpus.entries().enumerate() {
        let k = k as u64;
        assert_eq!((e.index, e.name.as_str()), (k, format!("ckks/bootstrap-insecure/{k}").as_str()));
        assert_eq!(e.seed, hex::encode(Seed::derive("lux-fhe-kat-v1/ckks/bootstrap-insecure", k).0));
        let enc = |j| hex::encode(Seed::derive("lux-fhe-kat-v1/ckks/bootstrap-insecure/encrypt", 3 * k + j).0);
        assert_eq!(e.encrypt_seeds, [enc(0), enc(1), enc(2)]);
        let spec = CASES[k as usize];
        assert_eq!(e.case.secret, super::surfaces::secret_name(spec.secret));
        assert_eq!((e.case.encapsulation, e.case.min_bits), (spec.encapsulation, spec.min_bits));
        // Only a uniform secret with an encapsulation weight goes through a sparse one,
        // and only then are the encapsulation keys digested.
        let sse = e.case.secret == "ternary" && e.case.encapsulation.is_some();
        assert_eq!(e.case.encapsulates, sse, "{}", e.name);
        assert_eq!(e.digests.iter().any(|d| d.name.starts_with("sse.")), sse, "{}", e.name);
        let surfaces: Vec<_> = e.outputs.iter().map(|o| o.surface.as_str()).collect();
        assert_eq!(surfaces, ["encrypt_pk[x]", "bootstrap"]);
        // A functional bootstrap takes its input at its SlotsToCoeffs' level (2 here).
        let input_level = if spec.function.is_some() { 2 } else { super::INPUT_LEVEL };
        assert_eq!(e.case.function.as_deref(), spec.function.map(|f| f.name()));
        assert_eq!(e.outputs[0].level, input_level);
        assert!(e.outputs[1].level > e.outputs[0].level, "the bootstrap restores levels");
        assert!(e.outputs[1].precision_bits >= e.case.min_bits, "{}", e.name);
    }
}

#[test]
fn the_bootstrap_corpus_replays_on_the_oracle_and_the_default_cpu_variant() {
    let corpus = load_default();
    let default_cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new(None).unwrap());
    for b in [oracle(), default_cpu] {
        let r = replay(&b, &corpus).unwrap();
        assert!(r.ok(), "{}: {:?}", b.name(), r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
        assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
    }
}

#[test]
fn replay_names_a_corrupted_digest_a_moved_slot_and_a_changed_case() {
    let mut corpus = entry(0);
    let e = &mut corpus.files[0].entries[0];
    let mut digest = hex::decode(&e.outputs[1].sha256).unwrap();
    digest[3] ^= 0x01;
    e.outputs[1].sha256 = hex::encode(digest);
    e.outputs[0].slots[1][0] += 1e-12;
    e.case.eval_mod_bits += 1;
    let r = replay(&oracle(), &corpus).unwrap();
    assert_eq!((r.entries, r.passed), (1, 0));
    assert_eq!(surfaces(&r.mismatches), ["case", "encrypt_pk[x]", "bootstrap (sha256)"], "{:?}", r.mismatches);
    assert!(matches!(&r.mismatches[1].kind, MismatchKind::Values { what, .. } if what.contains("slot 1")));
    assert_eq!(r.mismatches[2].offset(), Some(3));
    let m = &r.mismatches[2];
    assert_eq!(m.case.entry.as_deref(), Some("ckks/bootstrap-insecure/0"));
    assert_eq!((m.case.source, m.case.params), (Source::Kat, CaseSet::CkksBootstrap(BootstrapSet::Insecure)));
    assert!(m.to_string().contains("ckks bootstrap-insecure"), "{m}");
}

#[test]
fn replay_catches_a_flipped_word_inside_the_bootstrap() {
    let r = replay(&flawed(true), &entry(0)).unwrap();
    assert!(r.failed() && !r.ok());
    let found = surfaces(&r.mismatches);
    assert!(found.contains(&"bootstrap (sha256)") && found.contains(&"bootstrap decrypt (sha256)"), "{found:?}");
    // Keys, the encoding and the input make no product: only the output differs.
    assert!(found.iter().all(|s| s.starts_with("bootstrap")), "{found:?}");
}

#[test]
fn a_backend_without_ckks_is_skipped_never_passed() {
    let r = replay(&flawed(false), &load_default()).unwrap();
    let why = r.skipped.as_deref().expect("skipped");
    assert!(why.contains("no CKKS capability"), "{why}");
    assert_eq!(r.passed, 0);
    assert!(!r.ok() && !r.failed() && r.mismatches.is_empty());
}

fn temp_dir(what: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("fhe-kat-bootstrap-{what}-{}", std::process::id()))
}

#[test]
fn malformed_files_are_errors_naming_the_cause() {
    let dir = temp_dir("malformed");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ckks-bootstrap-insecure.json");
    std::fs::write(&path, "{ \"format\": ").unwrap();
    assert!(matches!(BootCorpus::load(&dir), Err(Error::Json { path: p, .. }) if p == path));
    let mut wrong_format = entry(0);
    wrong_format.files[0].format = "lux-fhe-kat-ckks-v1".into();
    wrong_format.write(&dir).unwrap();
    let e = BootCorpus::load(&dir).unwrap_err().to_string();
    assert!(e.contains("format `lux-fhe-kat-ckks-v1`"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Entries whose input cannot be read: the replay stops with the entry and the cause.
    type Break = fn(&mut super::BootstrapEntry);
    let cases: [(Break, &str); 3] = [
        (|e| e.index = CASES.len() as u64, "only 4 cases"),
        (|e| e.seed = "zz".into(), "bad seed hex"),
        (|e| e.set = "bootstrap-secure".into(), "unknown CKKS bootstrap set"),
    ];
    for (break_it, cause) in cases {
        let mut c = entry(1);
        break_it(&mut c.files[0].entries[0]);
        let Err(e) = replay(&oracle(), &c) else { panic!("{cause}: replayed") };
        let e = e.to_string();
        assert!(e.contains("ckks/bootstrap-insecure/1") && e.contains(cause), "{e}");
    }
}

#[test]
fn diff_names_the_case_and_the_changed_surfaces_and_files_round_trip() {
    let old = entry(1);
    let mut changed = old.clone();
    let e = &mut changed.files[0].entries[0];
    e.case.k += 1;
    e.outputs[1].decrypt_sha256 = "00".into();
    let sse = e.digests.iter().position(|d| d.name == "sse.to_dense.b").expect("entry 1 encapsulates");
    e.digests[sse].sha256 = "00".into();
    let name = e.name.clone();
    assert_eq!(
        old.diff(&changed),
        [EntryChange::Changed(name, vec!["case".into(), "sse.to_dense.b".into(), "bootstrap".into()])]
    );
    let dir = temp_dir("round-trip");
    old.write(&dir).unwrap();
    let back = BootCorpus::load(&dir).unwrap();
    assert!(old.diff(&back).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
