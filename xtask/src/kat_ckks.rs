//! The CKKS half of `kat generate`, `kat replay`, `equiv dispatch` and `equiv sweep`:
//! what it runs and the lines it prints (the bit scheme's lines are unchanged; every CKKS
//! line starts with `KAT CKKS` or `ckks`). A backend without the CKKS capability prints
//! `skipped` lines with the reason and passes nothing; the command's exit code is then
//! the bit scheme's, or 3 (skipped) when only CKKS was asked for.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;
use fhe_cpu::CpuBackend;
use fhe_kat::ckks::{CkksCorpus, CkksReplayReport, CkksSetReport, KAT_ENTRIES_PER_PRESET, KAT_PRESETS};

use crate::{print_mismatches, Fail};

fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

/// `kat generate` for CKKS: every preset of the corpus on the oracle, written to
/// `dir/ckks-<preset>.json` unless it differs from the files there (then `--force`).
pub(crate) fn generate(force: bool, dir: &Path) -> Result<(), Fail> {
    let oracle = oracle();
    let start = Instant::now();
    let new = fhe_kat::ckks::corpus::generate(oracle.clone(), &KAT_PRESETS, KAT_ENTRIES_PER_PRESET)?;
    let old = CkksCorpus::load(dir)?;
    let changes = old.diff(&new);
    println!("generated {} CKKS entries on {} in {:.1} s", new.len(), oracle.name(), start.elapsed().as_secs_f64());
    if changes.is_empty() {
        println!("CKKS corpus {} is up to date ({} entries)", dir.display(), new.len());
        return Ok(());
    }
    for c in &changes {
        println!("  {c}");
    }
    if !old.is_empty() && !force {
        return Err(Fail::Failed(format!(
            "{} CKKS entries differ from {}; refusing to overwrite without --force",
            changes.len(),
            dir.display()
        )));
    }
    new.write(dir)?;
    println!("wrote {} CKKS entries to {}", new.len(), dir.display());
    Ok(())
}

pub(crate) fn load(dir: &Path) -> Result<CkksCorpus, Fail> {
    let c = CkksCorpus::load(dir)?;
    if c.is_empty() {
        return Err(Fail::Failed(format!(
            "no CKKS KAT corpus in {} (run `cargo xtask kat generate --scheme ckks`)",
            dir.display()
        )));
    }
    Ok(c)
}

/// `KAT CKKS P/E byte-equal (...)`, or `KAT CKKS skipped: ...`.
fn print_replay(r: &CkksReplayReport) {
    print_mismatches(&r.mismatches);
    match &r.skipped {
        Some(why) => println!("KAT CKKS skipped: 0/{} entries run ({why})", r.entries),
        None => {
            println!("KAT CKKS {}/{} byte-equal ({}, {:.1} s)", r.passed, r.entries, r.backend, r.elapsed.as_secs_f64())
        }
    }
}

/// How the CKKS half ended (a runtime error is `Err(Fail)`).
pub(crate) enum Outcome {
    Passed,
    /// Nothing ran: the backend has no CKKS (the reason).
    Skipped(String),
    /// Something ran and differed (already printed).
    Failed(String),
}

impl Outcome {
    /// The command's result, given the bit scheme's (`None`: it did not run). A skipped
    /// CKKS half leaves the bit scheme's result; alone, it is a skip (exit 3), never a pass.
    pub(crate) fn with_bits(self, bits: Option<Result<(), Fail>>) -> Result<(), Fail> {
        match (bits, self) {
            (Some(Err(e)), _) => Err(e),
            (_, Outcome::Failed(why)) => Err(Fail::Failed(why)),
            (None, Outcome::Skipped(why)) => Err(Fail::Skipped(why)),
            _ => Ok(()),
        }
    }
}

fn outcome(skipped: Option<&String>, failed: bool, why: impl FnOnce() -> String) -> Outcome {
    match (skipped, failed) {
        (Some(s), _) => Outcome::Skipped(s.clone()),
        (None, true) => Outcome::Failed(why()),
        (None, false) => Outcome::Passed,
    }
}

/// `kat replay` for CKKS.
pub(crate) fn replay(b: Arc<dyn Backend>, dir: &Path) -> Result<Outcome, Fail> {
    let corpus = load(dir)?;
    let r = fhe_kat::ckks::replay(b, &corpus)?;
    print_replay(&r);
    let why = || format!("{} of {} CKKS KAT entries differ", r.entries - r.passed, r.entries);
    Ok(outcome(r.skipped.as_ref(), r.failed(), why))
}

fn print_sets(what: &str, sets: &[CkksSetReport], target: &str, oracle: &str) {
    for s in sets {
        match &s.skipped {
            Some(why) => println!("ckks {}: skipped, 0/{} seeds run ({why})", s.preset, s.seeds),
            None => println!(
                "ckks {}: {}/{} byte-equal ({what}, {target} vs oracle {oracle}, {:.1} s)",
                s.preset,
                s.passed,
                s.seeds,
                s.elapsed.as_secs_f64()
            ),
        }
        if s.mismatches.len() == fhe_kat::equiv::MAX_REPORTED {
            println!("  (mismatch list truncated to the first {})", fhe_kat::equiv::MAX_REPORTED);
        }
    }
    let ran: Vec<_> = sets.iter().filter(|s| s.skipped.is_none()).collect();
    let passed: u64 = ran.iter().map(|s| s.passed).sum();
    let seeds: u64 = ran.iter().map(|s| s.seeds).sum();
    let skipped = sets.len() - ran.len();
    println!("ckks total: {passed}/{seeds} byte-equal over {} presets, {skipped} skipped", ran.len());
}

/// `equiv dispatch` for CKKS (`Passed` when no preset is asked for).
pub(crate) fn dispatch(b: Arc<dyn Backend>, presets: &[Preset], seeds: u64) -> Result<Outcome, Fail> {
    if presets.is_empty() {
        return Ok(Outcome::Passed);
    }
    let r = fhe_kat::ckks::dispatch(oracle(), b, presets, seeds)?;
    print_mismatches(r.mismatches());
    print_sets("dispatch", &r.sets, &r.target, &r.oracle);
    Ok(outcome(r.sets[0].skipped.as_ref(), r.failed(), || "ckks dispatch: mismatches found".into()))
}

/// `equiv sweep` for CKKS (`Passed` when no preset is asked for).
pub(crate) fn sweep(b: Arc<dyn Backend>, dir: &Path, presets: &[Preset], seeds: u64) -> Result<Outcome, Fail> {
    if presets.is_empty() {
        return Ok(Outcome::Passed);
    }
    let corpus = load(dir)?;
    let r = fhe_kat::ckks::sweep(oracle(), b, &corpus, presets, seeds)?;
    print_replay(&r.kat);
    print_mismatches(r.sets.iter().flat_map(|s| s.mismatches.iter()));
    print_sets("mul+rotate sweep", &r.sets, &r.target, &r.oracle);
    Ok(outcome(r.kat.skipped.as_ref(), r.failed(), || "ckks sweep: mismatches found".into()))
}
