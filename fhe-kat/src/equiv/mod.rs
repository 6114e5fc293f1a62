//! The equivalence gate, for either scheme: KAT replay, `dispatch` (every public
//! surface, oracle against target) and `sweep` (replay, then the scheme's orthogonal
//! sweep of random inputs), with their reports and the lines they print ([`report`]).
//!
//! A target that cannot run the scheme ([`Scheme::skip_reason`]) is reported as skipped,
//! with the reason, and counts no case as passed; an oracle that cannot is an error.

mod report;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fhe_api::Backend;

pub use report::{DispatchReport, ReplayReport, SetReport, SweepReport, Verdict};

use crate::compare::{Case, Checker, Mismatch, Source};
use crate::corpus::Corpus;
use crate::scheme::{CaseSeeds, Schedule, Scheme};
use crate::{Error, Result};

/// Mismatches kept per report (all are counted).
pub const MAX_REPORTED: usize = 32;

fn keep(into: &mut Vec<Mismatch>, found: Vec<Mismatch>) {
    let room = MAX_REPORTED.saturating_sub(into.len());
    into.extend(found.into_iter().take(room));
}

/// Replays every entry of `corpus` on `backend`: recomputes keys, encryptions and every
/// operation from the recorded seeds and compares them with the stored answers by the
/// scheme's rule ([`Scheme::check_entry`]). Skipped (with the reason) when `backend`
/// cannot run the scheme.
pub fn replay<S: Scheme>(backend: &Arc<dyn Backend>, corpus: &Corpus<S>) -> Result<ReplayReport<S>> {
    let start = Instant::now();
    let mut report = ReplayReport::new(backend.name(), corpus.len(), S::skip_reason(&**backend));
    if report.skipped.is_some() {
        return Ok(report);
    }
    for file in &corpus.files {
        for entry in S::entries(file) {
            let name = S::entry_name(entry);
            tracing::info!(entry = %name, backend = %backend.name(), "replaying KAT entry");
            let (p, seeds) = S::entry_input(entry)?;
            let case = Case { source: Source::Kat, params: p.into(), index: seeds.index, entry: Some(name.into()) };
            let mut check = Checker::new(case);
            let found = S::compute(backend, p, &seeds, Schedule::Kat)?;
            S::check_entry(&mut check, &backend.name(), file, entry, &found)?;
            if check.found.is_empty() {
                report.passed += 1;
            }
            keep(&mut report.mismatches, check.found);
        }
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

fn require_oracle<S: Scheme>(oracle: &dyn Backend) -> Result<()> {
    match S::skip_reason(oracle) {
        Some(why) => Err(Error::Corpus(format!("the oracle cannot run this scheme: {why}"))),
        None => Ok(()),
    }
}

/// Runs `case` for seeds `0..seeds` of every set; every set is skipped (with the
/// reason) when `target` cannot run the scheme.
fn run_sets<S: Scheme>(
    target: &dyn Backend,
    sets: &[S::Params],
    seeds: u64,
    source: Source,
    mut case: impl FnMut(S::Params, u64, &mut Checker) -> Result<()>,
) -> Result<Vec<SetReport<S>>> {
    let skipped = S::skip_reason(target);
    let mut out = Vec::new();
    for &params in sets {
        let mut set = SetReport {
            params,
            seeds,
            passed: 0,
            skipped: skipped.clone(),
            mismatches: Vec::new(),
            elapsed: Duration::ZERO,
        };
        if skipped.is_none() {
            let start = Instant::now();
            for k in 0..seeds {
                tracing::info!(%params, seed = k, target = %target.name(), source = source.name(), "equiv");
                let mut check = Checker::new(Case { source, params: params.into(), index: k, entry: None });
                case(params, k, &mut check)?;
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

/// `equiv dispatch`: for every set of `sets` and seeds `0..seeds` of
/// [`Scheme::dispatch_root`], every public surface ([`Schedule::Dispatch`]) on `oracle`
/// and on `target`, compared by [`Scheme::compare`].
pub fn dispatch<S: Scheme>(
    oracle: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    sets: &[S::Params],
    seeds: u64,
) -> Result<DispatchReport<S>> {
    require_oracle::<S>(&**oracle)?;
    let root = S::dispatch_root();
    let (oname, tname) = (oracle.name(), target.name());
    let sets = run_sets::<S>(&**target, sets, seeds, Source::Dispatch, |p, k, check| {
        let case = CaseSeeds::derive(&root, k);
        let o = S::compute(oracle, p, &case, Schedule::Dispatch)?;
        let t = S::compute(target, p, &case, Schedule::Dispatch)?;
        S::compare(check, &oname, &tname, &o, &t);
        Ok(())
    })?;
    Ok(DispatchReport { oracle: oname, target: tname, sets })
}

/// `equiv sweep`: replays `corpus` on `target`, then for every set of `sets` and seeds
/// `0..seeds` of [`Scheme::sweep_root`], the scheme's sweep case ([`Scheme::sweep_case`]).
pub fn sweep<S: Scheme>(
    oracle: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    corpus: &Corpus<S>,
    sets: &[S::Params],
    seeds: u64,
) -> Result<SweepReport<S>> {
    require_oracle::<S>(&**oracle)?;
    let kat = replay(target, corpus)?;
    let root = S::sweep_root();
    let sets = run_sets::<S>(&**target, sets, seeds, Source::Sweep, |p, k, check| {
        S::sweep_case(oracle, target, p, &CaseSeeds::derive(&root, k), check)
    })?;
    Ok(SweepReport { oracle: oracle.name(), target: target.name(), kat, sets })
}
