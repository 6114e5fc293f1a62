//! The CKKS half of the equivalence gate: KAT replay, `dispatch` (the round trip and
//! mul/rotate, oracle against target) and `sweep` (replay, then mul+rotate on the
//! oracle's keys and ciphertexts, and on uniformly random ciphertexts).
//!
//! A target that declares no CKKS capability (`Backend::ckks()` is `None`) is reported
//! as skipped, with the reason, and counts no case as passed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fhe_api::ckks::entities::HostCiphertext;
use fhe_api::ckks::params::Preset;
use fhe_api::rng::stream;
use fhe_api::Backend;
use fhe_schemes::ckks::Complex;
use fhe_schemes::ckks::Evaluator;
use fhe_schemes::ckks::KeygenOptions;
use fhe_schemes::ckks::{precision_bits, Context};

use super::corpus::{slot_close, CkksCorpus, CkksEntry};
use super::surfaces::{compute, ct_bytes, values, CkksComputed, CkksInput, CtOut, Schedule, MIN_BITS};
use super::{dispatch_root, sweep_root, DECODED_SLOTS, DECODED_TOLERANCE};
use crate::compare::{Case, Checker, Mismatch, Source};
use crate::equiv::MAX_REPORTED;
use crate::surfaces::sha256;
use crate::{Error, Result};

/// Why `backend` cannot run CKKS, or `None` when it declares the capability.
pub fn skip_reason(backend: &dyn Backend) -> Option<String> {
    backend
        .ckks()
        .is_none()
        .then(|| format!("{} declares no CKKS capability (Backend::ckks() is None)", backend.name()))
}

/// The outcome of a CKKS KAT replay.
#[derive(Clone, Debug)]
pub struct CkksReplayReport {
    pub backend: String,
    pub entries: usize,
    /// Entries whose every surface matched (0 when skipped).
    pub passed: usize,
    /// Why nothing ran, for a backend without CKKS.
    pub skipped: Option<String>,
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
}

impl CkksReplayReport {
    /// Every entry ran and matched.
    pub fn ok(&self) -> bool {
        self.skipped.is_none() && self.passed == self.entries
    }
    /// Something ran and differed (a skipped replay has not failed, nor passed).
    pub fn failed(&self) -> bool {
        self.skipped.is_none() && self.passed != self.entries
    }
}

/// The outcome of one preset of `dispatch` or of the sweep.
#[derive(Clone, Debug)]
pub struct CkksSetReport {
    pub preset: Preset,
    pub seeds: u64,
    /// Seeds whose every surface matched (0 when skipped).
    pub passed: u64,
    pub skipped: Option<String>,
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
}

impl CkksSetReport {
    pub fn ok(&self) -> bool {
        self.skipped.is_none() && self.passed == self.seeds
    }
    pub fn failed(&self) -> bool {
        self.skipped.is_none() && self.passed != self.seeds
    }
}

#[derive(Clone, Debug)]
pub struct CkksDispatchReport {
    pub oracle: String,
    pub target: String,
    pub sets: Vec<CkksSetReport>,
}

impl CkksDispatchReport {
    pub fn ok(&self) -> bool {
        self.sets.iter().all(CkksSetReport::ok)
    }
    pub fn failed(&self) -> bool {
        self.sets.iter().any(CkksSetReport::failed)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.sets.iter().flat_map(|s| s.mismatches.iter())
    }
}

#[derive(Clone, Debug)]
pub struct CkksSweepReport {
    pub oracle: String,
    pub target: String,
    pub kat: CkksReplayReport,
    pub sets: Vec<CkksSetReport>,
}

impl CkksSweepReport {
    pub fn ok(&self) -> bool {
        self.kat.ok() && self.sets.iter().all(CkksSetReport::ok)
    }
    pub fn failed(&self) -> bool {
        self.kat.failed() || self.sets.iter().any(CkksSetReport::failed)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.kat.mismatches.iter().chain(self.sets.iter().flat_map(|s| s.mismatches.iter()))
    }
}

fn keep(into: &mut Vec<Mismatch>, found: Vec<Mismatch>) {
    let room = MAX_REPORTED.saturating_sub(into.len());
    into.extend(found.into_iter().take(room));
}

fn unhex(entry: &CkksEntry, what: &str, s: &str) -> Result<Vec<u8>> {
    hex::decode(s).map_err(|e| Error::Corpus(format!("{}: bad {what} hex: {e}", entry.name)))
}

/// The decrypted values of `ct` match plaintext arithmetic to [`MIN_BITS`].
fn check_precision(check: &mut Checker, backend: &str, ct: &CtOut) {
    let bits = ct.precision();
    if bits.is_nan() || bits < MIN_BITS {
        check.values(&ct.name, backend, format!("{bits:.1} bits of the plaintext result < {MIN_BITS}"));
    }
}

/// Checks one KAT entry against what `backend` computes now.
fn replay_entry(backend: Arc<dyn Backend>, entry: &CkksEntry, tolerance: f64) -> Result<Vec<Mismatch>> {
    let input = entry.input()?;
    let name = backend.name();
    let case =
        Case { source: Source::Kat, params: input.preset.into(), index: entry.index, entry: Some(entry.name.clone()) };
    let mut check = Checker::new(case);
    let c = compute(backend, &input, Schedule::Kat)?;
    if c.words.len() != entry.digests.len() || c.cts.len() != entry.outputs.len() {
        check.structure(
            "outputs",
            format!(
                "corpus has {} digests and {} ciphertexts, replay computes {} and {}",
                entry.digests.len(),
                entry.outputs.len(),
                c.words.len(),
                c.cts.len()
            ),
        );
    }
    for (found, stored) in c.words.iter().zip(&entry.digests) {
        if found.name != stored.name || found.words != stored.words {
            let what = format!(
                "corpus `{}` ({} words) meets computed `{}` ({})",
                stored.name, stored.words, found.name, found.words
            );
            check.structure(&stored.name, what);
            continue;
        }
        check.bytes(
            &format!("{} (sha256)", stored.name),
            &unhex(entry, "digest", &stored.sha256)?,
            &sha256(&found.bytes),
        );
    }
    for (found, stored) in c.cts.iter().zip(&entry.outputs) {
        let surface = &stored.surface;
        let scale_bits = format!("{:016x}", found.scale.to_bits());
        if found.name != *surface || found.level != stored.level || scale_bits != stored.scale_bits {
            let what = format!(
                "corpus `{surface}` at level {} scale bits {} meets computed `{}` at level {} scale bits {scale_bits}",
                stored.level, stored.scale_bits, found.name, found.level
            );
            check.structure(surface, what);
            continue;
        }
        check.bytes(&format!("{surface} (sha256)"), &unhex(entry, "digest", &stored.sha256)?, &sha256(&found.bytes));
        let dec = sha256(&found.decrypted);
        check.bytes(&format!("{surface} decrypt (sha256)"), &unhex(entry, "digest", &stored.decrypt_sha256)?, &dec);
        for (i, (s, f)) in stored.slots.iter().zip(&found.decoded).enumerate() {
            let f = [f.re, f.im];
            if !slot_close(*s, f, tolerance) {
                check.values(
                    surface,
                    &name,
                    format!("slot {i} decodes to {f:?}, corpus has {s:?} (tolerance {tolerance:e})"),
                );
            }
        }
        if stored.slots.len() != DECODED_SLOTS.min(found.decoded.len()) {
            check.structure(
                surface,
                format!("corpus has {} decoded slots, expected {DECODED_SLOTS}", stored.slots.len()),
            );
        }
        check_precision(&mut check, &name, found);
    }
    Ok(check.found)
}

/// Replays every entry of `corpus` on `backend`: recomputes keys, encryptions and every
/// operation from the recorded seeds and compares the digests of their words, and the
/// decoded slots within the file's tolerance. Skipped (with the reason) when `backend`
/// has no CKKS.
pub fn replay(backend: Arc<dyn Backend>, corpus: &CkksCorpus) -> Result<CkksReplayReport> {
    let start = Instant::now();
    let mut report = CkksReplayReport {
        backend: backend.name(),
        entries: corpus.len(),
        passed: 0,
        skipped: skip_reason(&*backend),
        mismatches: Vec::new(),
        elapsed: Duration::ZERO,
    };
    if report.skipped.is_some() {
        return Ok(report);
    }
    for file in &corpus.files {
        for entry in &file.entries {
            tracing::info!(entry = %entry.name, backend = %backend.name(), "replaying CKKS KAT entry");
            let found = replay_entry(backend.clone(), entry, file.decoded_tolerance)?;
            if found.is_empty() {
                report.passed += 1;
            }
            keep(&mut report.mismatches, found);
        }
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Byte-equal words, and decoded slots within [`DECODED_TOLERANCE`] of the oracle's.
fn compare_computed(check: &mut Checker, o: &CkksComputed, t: &CkksComputed, target: &str) {
    if o.words.len() != t.words.len() || o.cts.len() != t.cts.len() {
        check.structure("outputs", "the backends computed different surface lists".into());
    }
    for (ow, tw) in o.words.iter().zip(&t.words) {
        check.bytes(&ow.name, &ow.bytes, &tw.bytes);
    }
    for (oc, tc) in o.cts.iter().zip(&t.cts) {
        if (oc.level, oc.scale.to_bits()) != (tc.level, tc.scale.to_bits()) {
            let what = format!("level {} scale {} vs level {} scale {}", oc.level, oc.scale, tc.level, tc.scale);
            check.structure(&oc.name, what);
        }
        check.bytes(&oc.name, &oc.bytes, &tc.bytes);
        check.bytes(&format!("{} decrypt", oc.name), &oc.decrypted, &tc.decrypted);
        let far = oc
            .decoded
            .iter()
            .zip(&tc.decoded)
            .position(|(a, b)| !slot_close([a.re, a.im], [b.re, b.im], DECODED_TOLERANCE));
        if let Some(i) = far {
            let what = format!("slot {i} decodes to {:?}, the oracle's to {:?}", tc.decoded[i], oc.decoded[i]);
            check.values(&oc.name, target, what);
        }
        check_precision(check, target, tc);
    }
}

fn set_report(preset: Preset, seeds: u64, skipped: Option<String>) -> CkksSetReport {
    CkksSetReport { preset, seeds, passed: 0, skipped, mismatches: Vec::new(), elapsed: Duration::ZERO }
}

fn require_oracle(oracle: &dyn Backend) -> Result<()> {
    match skip_reason(oracle) {
        Some(why) => Err(Error::Corpus(format!("the oracle cannot run CKKS: {why}"))),
        None => Ok(()),
    }
}

/// Runs `case` for seeds `0..seeds` of every preset; presets are skipped (with the
/// reason) when `target` has no CKKS.
fn run_sets(
    target: &dyn Backend,
    presets: &[Preset],
    seeds: u64,
    source: Source,
    mut case: impl FnMut(Preset, u64, &mut Checker) -> Result<()>,
) -> Result<Vec<CkksSetReport>> {
    let skipped = skip_reason(target);
    let mut out = Vec::new();
    for &preset in presets {
        let mut set = set_report(preset, seeds, skipped.clone());
        if skipped.is_none() {
            let start = Instant::now();
            for k in 0..seeds {
                tracing::info!(%preset, seed = k, target = %target.name(), source = source.name(), "ckks");
                let mut check = Checker::new(Case { source, params: preset.into(), index: k, entry: None });
                case(preset, k, &mut check)?;
                if check.found.is_empty() {
                    set.passed += 1;
                }
                keep(&mut set.mismatches, check.found);
            }
            set.elapsed = start.elapsed();
        }
        out.push(set);
    }
    Ok(out)
}

/// `equiv dispatch` for CKKS: for every preset and seeds `0..seeds` of
/// `lux-fhe-dispatch-equiv-v1/ckks`, keygen (relin, rotation 1), public- and
/// secret-key encryption, decryption, mul, rescale and rotate(1) on `oracle` and on
/// `target`: words byte-equal, decoded values within 2^-50 of the oracle's.
pub fn dispatch(
    oracle: Arc<dyn Backend>,
    target: Arc<dyn Backend>,
    presets: &[Preset],
    seeds: u64,
) -> Result<CkksDispatchReport> {
    require_oracle(&*oracle)?;
    let root = dispatch_root();
    let sets = run_sets(&*target, presets, seeds, Source::Dispatch, |preset, k, check| {
        let input = CkksInput::derive(&root, preset, k);
        let o = compute(oracle.clone(), &input, Schedule::Dispatch)?;
        let t = compute(target.clone(), &input, Schedule::Dispatch)?;
        compare_computed(check, &o, &t, &target.name());
        Ok(())
    })?;
    Ok(CkksDispatchReport { oracle: oracle.name(), target: target.name(), sets })
}

/// Two uniformly random ciphertexts at the top level and default scale (stream
/// `ckks-sweep-random` of the master seed: `c0` then `c1`, limb by limb, `uniform_mod`).
fn random_ct(ctx: &Context, input: &CkksInput, j: u64) -> Result<HostCiphertext> {
    let p = ctx.params();
    let mut r = stream(&input.master.0, "ckks-sweep-random", j);
    let level = p.max_level();
    let mut poly = || -> Vec<u64> {
        p.q()[..=level].iter().flat_map(|q| (0..p.n()).map(|_| r.uniform_mod(q.0)).collect::<Vec<_>>()).collect()
    };
    let (c0, c1) = (poly(), poly());
    Ok(HostCiphertext::from_raw(p.clone(), level, p.default_scale(), c0, c1)?)
}

/// `mul`, `rescale` and `rotate(1)` of the product on one evaluator, downloaded.
fn mul_rotate(ev: &Evaluator, a: &HostCiphertext, b: &HostCiphertext) -> Result<[HostCiphertext; 3]> {
    let (a, b) = (ev.upload(a)?, ev.upload(b)?);
    let m = ev.mul(&a, &b)?;
    let r = ev.rescale(&m)?;
    let t = ev.rotate(&r, 1)?;
    Ok([ev.download(&m)?, ev.download(&r)?, ev.download(&t)?])
}

/// One sweep seed: the oracle's keys and encryptions, evaluated on both backends.
fn sweep_case(
    oracle: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    input: &CkksInput,
    check: &mut Checker,
) -> Result<()> {
    let octx = Context::from_preset(oracle.clone(), input.preset)?;
    let tctx = Context::from_preset(target.clone(), input.preset)?;
    let options = KeygenOptions { relin: true, rotations: vec![1], conjugation: false };
    let keys = octx.keygen_from_seed(&input.master, &options)?;
    let (oev, tev) = (octx.evaluator(&keys.eval)?, tctx.evaluator(&keys.eval)?);
    let slots = octx.params().slots();
    let (x, y) = (values(&input.master, 0, slots), values(&input.master, 1, slots));
    let enc = |v: &[Complex], seed| -> Result<HostCiphertext> {
        Ok(oev.download(&octx.encrypt_seeded(&keys.pk, &octx.encode(v)?, seed)?)?)
    };
    let (cx, cy) = (enc(&x, &input.encrypt_seeds[0])?, enc(&y, &input.encrypt_seeds[1])?);
    let (r0, r1) = (random_ct(&octx, input, 0)?, random_ct(&octx, input, 1)?);
    let names = ["mul", "rescale", "rotate(1)"];
    for (prefix, a, b) in [("", &cx, &cy), ("random:", &r0, &r1)] {
        let (o, t) = (mul_rotate(&oev, a, b)?, mul_rotate(&tev, a, b)?);
        for ((name, o), t) in names.iter().zip(&o).zip(&t) {
            let surface = format!("{prefix}{name}");
            if (o.level(), o.scale().to_bits()) != (t.level(), t.scale().to_bits()) {
                check.structure(
                    &surface,
                    format!("level {} scale {} vs {} {}", o.level(), o.scale(), t.level(), t.scale()),
                );
            }
            check.bytes(&surface, &ct_bytes(o), &ct_bytes(t));
        }
        if prefix.is_empty() {
            // The target's rotated product decrypts (on the oracle) to the plaintext result.
            let xy: Vec<Complex> = x.iter().zip(&y).map(|(&a, &b)| a * b).collect();
            let want: Vec<Complex> = (0..slots).map(|i| xy[(i + 1) % slots]).collect();
            let got = octx.decrypt(&keys.sk, &oev.upload(&t[2])?)?;
            let bits = precision_bits(&got, &want);
            if bits.is_nan() || bits < MIN_BITS {
                check.values(
                    "rotate(1)",
                    &target.name(),
                    format!("{bits:.1} bits of the plaintext result < {MIN_BITS}"),
                );
            }
        }
    }
    Ok(())
}

/// `equiv sweep` for CKKS: replays `corpus` on `target`, then for every preset and seeds
/// `0..seeds` of `lux-fhe-backend-equiv-sweep-v1/ckks`, mul, rescale and rotate(1) of
/// the oracle's encryptions and of two uniformly random ciphertexts, with the oracle's
/// keys prepared on both backends, byte-equal.
pub fn sweep(
    oracle: Arc<dyn Backend>,
    target: Arc<dyn Backend>,
    corpus: &CkksCorpus,
    presets: &[Preset],
    seeds: u64,
) -> Result<CkksSweepReport> {
    require_oracle(&*oracle)?;
    let kat = replay(target.clone(), corpus)?;
    let root = sweep_root();
    let sets = run_sets(&*target, presets, seeds, Source::Sweep, |preset, k, check| {
        sweep_case(&oracle, &target, &CkksInput::derive(&root, preset, k), check)
    })?;
    Ok(CkksSweepReport { oracle: oracle.name(), target: target.name(), kat, sets })
}
