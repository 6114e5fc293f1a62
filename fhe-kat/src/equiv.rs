//! The equivalence gate: KAT replay, `dispatch` (every surface, oracle against target)
//! and `sweep` (replay, then an orthogonal bootstrap sweep).

use std::time::{Duration, Instant};

use fhe_api::format::{Decode, Encode};
use fhe_api::rng::stream;
use fhe_api::{Backend, KeyTag, LweCiphertext, ParamSet};
use fhe_schemes::tfhe::gates::refresh_batch;

use crate::compare::{Case, Checker, Mismatch, Source};
use crate::corpus::{Corpus, KatEntry};
use crate::surfaces::{compute, sha256, CaseInput, Computed};
use crate::{Error, Result, DISPATCH_ROOT, SWEEP_ROOT};

/// Mismatches kept per report (all are counted).
pub const MAX_REPORTED: usize = 32;

/// The outcome of a KAT replay.
#[derive(Clone, Debug)]
pub struct ReplayReport {
    pub backend: String,
    pub entries: usize,
    /// Entries whose every surface matched.
    pub passed: usize,
    /// The first [`MAX_REPORTED`] mismatches.
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
}

impl ReplayReport {
    pub fn ok(&self) -> bool {
        self.passed == self.entries
    }
}

/// The outcome of one parameter set of `dispatch` or of the sweep.
#[derive(Clone, Debug)]
pub struct SetReport {
    pub params: ParamSet,
    pub seeds: u64,
    /// Seeds whose every surface matched.
    pub passed: u64,
    /// The first [`MAX_REPORTED`] mismatches.
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
}

impl SetReport {
    pub fn ok(&self) -> bool {
        self.passed == self.seeds
    }
}

#[derive(Clone, Debug)]
pub struct DispatchReport {
    pub oracle: String,
    pub target: String,
    pub sets: Vec<SetReport>,
}

impl DispatchReport {
    pub fn ok(&self) -> bool {
        self.sets.iter().all(SetReport::ok)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.sets.iter().flat_map(|s| s.mismatches.iter())
    }
}

#[derive(Clone, Debug)]
pub struct SweepReport {
    pub oracle: String,
    pub target: String,
    pub kat: ReplayReport,
    pub sets: Vec<SetReport>,
}

impl SweepReport {
    pub fn ok(&self) -> bool {
        self.kat.ok() && self.sets.iter().all(SetReport::ok)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.kat.mismatches.iter().chain(self.sets.iter().flat_map(|s| s.mismatches.iter()))
    }
}

fn keep(into: &mut Vec<Mismatch>, found: Vec<Mismatch>) {
    let room = MAX_REPORTED.saturating_sub(into.len());
    into.extend(found.into_iter().take(room));
}

/// Checks one KAT entry against what `backend` computes now.
fn replay_entry(backend: &dyn Backend, entry: &KatEntry) -> Result<Vec<Mismatch>> {
    let input = entry.input()?;
    let case =
        Case { source: Source::Kat, params: entry.params.into(), index: entry.index, entry: Some(entry.name.clone()) };
    let mut check = Checker::new(case);
    let c = compute(backend, &input)?;
    for ((name, bytes), stored) in c.keys.iter().zip([&entry.sk_sha256, &entry.pk_sha256, &entry.ek_sha256]) {
        let stored =
            hex::decode(stored).map_err(|e| Error::Corpus(format!("{}: bad {name} digest hex: {e}", entry.name)))?;
        check.bytes(&format!("{name} (sha256)"), &stored, &sha256(bytes));
    }
    if c.cts.len() != entry.outputs.len() {
        check.structure(
            "outputs",
            format!("corpus has {} ciphertext surfaces, replay computes {}", entry.outputs.len(), c.cts.len()),
        );
    }
    for (found, stored) in c.cts.iter().zip(&entry.outputs) {
        if found.name != stored.surface || found.expected_bit != stored.bit {
            check.structure(
                &stored.surface,
                format!("corpus surface `{}` (bit {}) meets computed `{}`", stored.surface, stored.bit, found.name),
            );
            continue;
        }
        let bytes = hex::decode(&stored.ct)
            .map_err(|e| Error::Corpus(format!("{} {}: bad ciphertext hex: {e}", entry.name, stored.surface)))?;
        // The stored bytes must be a valid ciphertext that re-encodes to itself.
        match LweCiphertext::decode(&bytes) {
            Ok(ct) if ct.encode() == bytes => {}
            Ok(_) => check.structure(&stored.surface, "stored ciphertext does not re-encode to itself".into()),
            Err(e) => check.structure(&stored.surface, format!("stored ciphertext does not decode: {e}")),
        }
        check.bytes(&stored.surface, &bytes, &found.bytes);
        check.plaintext(&stored.surface, &backend.name(), stored.bit, &found.decrypted);
    }
    Ok(check.found)
}

/// Replays every entry of `corpus` on `backend`: recomputes keys, encryptions,
/// bootstraps and gates from the recorded seeds and compares byte for byte.
pub fn replay(backend: &dyn Backend, corpus: &Corpus) -> Result<ReplayReport> {
    let start = Instant::now();
    let mut report = ReplayReport {
        backend: backend.name(),
        entries: corpus.len(),
        passed: 0,
        mismatches: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for entry in corpus.entries() {
        tracing::info!(entry = %entry.name, backend = %backend.name(), "replaying KAT entry");
        let found = replay_entry(backend, entry)?;
        if found.is_empty() {
            report.passed += 1;
        }
        keep(&mut report.mismatches, found);
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Compares every surface of two computations of the same case.
fn compare_computed(check: &mut Checker, oracle: &dyn Backend, target: &dyn Backend, o: &Computed, t: &Computed) {
    for ((name, ob), (_, tb)) in o.keys.iter().zip(&t.keys) {
        check.bytes(name, ob, tb);
    }
    for (oc, tc) in o.cts.iter().zip(&t.cts) {
        check.bytes(&oc.name, &oc.bytes, &tc.bytes);
        check.plaintext(&oc.name, &oracle.name(), oc.expected_bit, &oc.decrypted);
        check.plaintext(&tc.name, &target.name(), tc.expected_bit, &tc.decrypted);
    }
}

fn ntt_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The NTT surfaces: forward and inverse of one polynomial uniform mod `Q`.
fn compare_ntt(
    check: &mut Checker,
    oracle: &dyn Backend,
    target: &dyn Backend,
    input: &CaseInput,
) -> fhe_api::Result<()> {
    let p = input.params.params();
    let mut r = stream(&input.master.0, "equiv-ntt", 0);
    let poly: Vec<u64> = (0..p.big_n()).map(|_| r.uniform_mod(p.q_ring())).collect();
    let (mut o, mut t) = (poly.clone(), poly.clone());
    oracle.ntt_forward(input.params, &mut o)?;
    target.ntt_forward(input.params, &mut t)?;
    check.bytes("ntt:forward", &ntt_bytes(&o), &ntt_bytes(&t));
    oracle.ntt_inverse(input.params, &mut o)?;
    target.ntt_inverse(input.params, &mut t)?;
    check.bytes("ntt:inverse", &ntt_bytes(&o), &ntt_bytes(&t));
    check.bytes("ntt:round-trip", &ntt_bytes(&poly), &ntt_bytes(&t));
    Ok(())
}

/// `equiv dispatch`: for every set of `sets` and seeds `0..seeds` of
/// `lux-fhe-dispatch-equiv-v1`, every public surface on `oracle` and on `target`,
/// byte-equal (and every ciphertext decrypting to its plaintext on both).
pub fn dispatch(oracle: &dyn Backend, target: &dyn Backend, sets: &[ParamSet], seeds: u64) -> Result<DispatchReport> {
    let mut report = DispatchReport { oracle: oracle.name(), target: target.name(), sets: Vec::new() };
    for &params in sets {
        let start = Instant::now();
        let mut set = SetReport { params, seeds, passed: 0, mismatches: Vec::new(), elapsed: Duration::ZERO };
        for k in 0..seeds {
            tracing::info!(%params, seed = k, target = %target.name(), "dispatch");
            let input = CaseInput::derive(DISPATCH_ROOT, params, k);
            let mut check =
                Checker::new(Case { source: Source::Dispatch, params: params.into(), index: k, entry: None });
            let o = compute(oracle, &input)?;
            let t = compute(target, &input)?;
            compare_computed(&mut check, oracle, target, &o, &t);
            compare_ntt(&mut check, oracle, target, &input)?;
            if check.found.is_empty() {
                set.passed += 1;
            }
            keep(&mut set.mismatches, check.found);
        }
        set.elapsed = start.elapsed();
        report.sets.push(set);
    }
    Ok(report)
}

/// Two uniformly random LWE ciphertexts of case `input` (stream `equiv-sweep-random`),
/// tagged as the case's key (a random ciphertext is under every key; the tag only lets
/// the backends accept it).
fn random_cts(input: &CaseInput, tag: KeyTag) -> fhe_api::Result<Vec<LweCiphertext>> {
    let p = input.params.params();
    (0..2)
        .map(|j| {
            let mut r = stream(&input.master.0, "equiv-sweep-random", j);
            let words = (0..=p.n()).map(|_| r.uniform_mod(p.q_lwe()) as u32).collect();
            LweCiphertext::from_raw(input.params, tag, words)
        })
        .collect()
}

/// One sweep seed: the oracle's keys, prepared on both backends; `refresh_batch` of two
/// encrypted bits and `bootstrap_batch` of two random ciphertexts, byte-equal.
fn sweep_case(oracle: &dyn Backend, target: &dyn Backend, input: &CaseInput, check: &mut Checker) -> Result<()> {
    let keys = fhe_schemes::tfhe::keygen_from_seed(oracle, input.params, &input.master)?;
    let bits = &input.bits[..2];
    let enc = bits
        .iter()
        .zip(&input.encrypt_seeds)
        .map(|(&b, s)| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, b, s))
        .collect::<fhe_api::Result<Vec<_>>>()?;
    let random = random_cts(input, keys.ek.tag())?;
    let (ok, tk) = (oracle.prepare(&keys.ek)?, target.prepare(&keys.ek)?);
    let (orf, trf) = (refresh_batch(oracle, &ok, &enc)?, refresh_batch(target, &tk, &enc)?);
    for (j, ((o, t), &bit)) in orf.iter().zip(&trf).zip(bits).enumerate() {
        let surface = format!("bootstrap[{j}]");
        check.bytes(&surface, &o.encode(), &t.encode());
        let dec = |ct| fhe_schemes::tfhe::decrypt::decrypt_bit(&keys.sk, ct).map_err(|e| e.to_string());
        check.plaintext(&surface, &oracle.name(), bit, &dec(o));
        check.plaintext(&surface, &target.name(), bit, &dec(t));
    }
    let (obs, tbs) = (oracle.bootstrap_batch(&ok, &random)?, target.bootstrap_batch(&tk, &random)?);
    for (j, (o, t)) in obs.iter().zip(&tbs).enumerate() {
        check.bytes(&format!("bootstrap_batch(random[{j}])"), &o.encode(), &t.encode());
    }
    if obs.len() != tbs.len() || orf.len() != trf.len() {
        check.structure("bootstrap", "the backends returned batches of different lengths".into());
    }
    Ok(())
}

/// `equiv sweep`: replays `corpus` on `target`, then for every set of `sets` and seeds
/// `0..seeds` of `lux-fhe-backend-equiv-sweep-v1`, bootstraps on `oracle` and `target`.
pub fn sweep(
    oracle: &dyn Backend,
    target: &dyn Backend,
    corpus: &Corpus,
    sets: &[ParamSet],
    seeds: u64,
) -> Result<SweepReport> {
    let kat = replay(target, corpus)?;
    let mut sets_out = Vec::new();
    for &params in sets {
        let start = Instant::now();
        let mut set = SetReport { params, seeds, passed: 0, mismatches: Vec::new(), elapsed: Duration::ZERO };
        for k in 0..seeds {
            tracing::info!(%params, seed = k, target = %target.name(), "sweep");
            let input = CaseInput::derive(SWEEP_ROOT, params, k);
            let mut check = Checker::new(Case { source: Source::Sweep, params: params.into(), index: k, entry: None });
            sweep_case(oracle, target, &input, &mut check)?;
            if check.found.is_empty() {
                set.passed += 1;
            }
            keep(&mut set.mismatches, check.found);
        }
        set.elapsed = start.elapsed();
        sets_out.push(set);
    }
    Ok(SweepReport { oracle: oracle.name(), target: target.name(), kat, sets: sets_out })
}
