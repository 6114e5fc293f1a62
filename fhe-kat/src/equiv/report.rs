//! The gate's reports and the lines they print (`cargo xtask kat` and `equiv` print
//! them as they are; [`crate::scheme::Labels`] says how each scheme's lines read).

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use super::MAX_REPORTED;
use crate::compare::{CaseSet, Mismatch};
use crate::scheme::Scheme;

/// How a report ended, for a command's exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// Nothing ran: the backend cannot run the scheme (the reason).
    Skipped(String),
    /// Something ran and differed (what, in one line).
    Failed(String),
}

fn verdict(skipped: Option<&String>, failed: bool, why: impl FnOnce() -> String) -> Verdict {
    match (skipped, failed) {
        (Some(s), _) => Verdict::Skipped(s.clone()),
        (None, true) => Verdict::Failed(why()),
        (None, false) => Verdict::Passed,
    }
}

/// The outcome of a KAT replay.
#[derive(Clone, Debug)]
pub struct ReplayReport<S: Scheme> {
    pub backend: String,
    pub entries: usize,
    /// Entries whose every surface matched (0 when skipped).
    pub passed: usize,
    /// Why nothing ran, for a backend that cannot run the scheme.
    pub skipped: Option<String>,
    /// The first [`MAX_REPORTED`] mismatches.
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
    scheme: PhantomData<fn() -> S>,
}

impl<S: Scheme> ReplayReport<S> {
    pub(super) fn new(backend: String, entries: usize, skipped: Option<String>) -> Self {
        ReplayReport {
            backend,
            entries,
            passed: 0,
            skipped,
            mismatches: Vec::new(),
            elapsed: Duration::ZERO,
            scheme: PhantomData,
        }
    }

    /// Every entry ran and matched.
    pub fn ok(&self) -> bool {
        self.skipped.is_none() && self.passed == self.entries
    }

    /// Something ran and differed (a skipped replay has not failed, nor passed).
    pub fn failed(&self) -> bool {
        self.skipped.is_none() && self.passed != self.entries
    }

    pub fn verdict(&self) -> Verdict {
        let why = || format!("{} of {} {}KAT entries differ", self.entries - self.passed, self.entries, S::LABELS.noun);
        verdict(self.skipped.as_ref(), self.failed(), why)
    }
}

/// The mismatches, then `KAT P/E byte-equal (backend, s)` (`KAT CKKS ...`), or
/// `KAT CKKS skipped: 0/E entries run (reason)`.
impl<S: Scheme> fmt::Display for ReplayReport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.mismatches {
            writeln!(f, "{m}")?;
        }
        let kat = S::LABELS.kat;
        match &self.skipped {
            Some(why) => writeln!(f, "{kat} skipped: 0/{} entries run ({why})", self.entries),
            None => writeln!(
                f,
                "{kat} {}/{} byte-equal ({}, {:.1} s)",
                self.passed,
                self.entries,
                self.backend,
                self.elapsed.as_secs_f64()
            ),
        }
    }
}

/// The outcome of one parameter set of `dispatch` or of the sweep.
#[derive(Clone, Debug)]
pub struct SetReport<S: Scheme> {
    pub params: S::Params,
    pub seeds: u64,
    /// Seeds whose every surface matched (0 when skipped).
    pub passed: u64,
    pub skipped: Option<String>,
    /// The first [`MAX_REPORTED`] mismatches.
    pub mismatches: Vec<Mismatch>,
    pub elapsed: Duration,
}

impl<S: Scheme> SetReport<S> {
    pub fn ok(&self) -> bool {
        self.skipped.is_none() && self.passed == self.seeds
    }
    pub fn failed(&self) -> bool {
        self.skipped.is_none() && self.passed != self.seeds
    }
}

/// One line per set (`<set>: P/S byte-equal (<what>, <target> vs oracle <oracle>, s)`),
/// then the total over the sets that ran.
fn write_sets<S: Scheme>(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    sets: &[SetReport<S>],
    target: &str,
    oracle: &str,
) -> fmt::Result {
    for s in sets {
        let set: CaseSet = s.params.into();
        match &s.skipped {
            Some(why) => writeln!(f, "{set}: skipped, 0/{} seeds run ({why})", s.seeds)?,
            None => writeln!(
                f,
                "{set}: {}/{} byte-equal ({what}, {target} vs oracle {oracle}, {:.1} s)",
                s.passed,
                s.seeds,
                s.elapsed.as_secs_f64()
            )?,
        }
        if s.mismatches.len() == MAX_REPORTED {
            writeln!(f, "  (mismatch list truncated to the first {MAX_REPORTED})")?;
        }
    }
    let ran: Vec<_> = sets.iter().filter(|s| s.skipped.is_none()).collect();
    let passed: u64 = ran.iter().map(|s| s.passed).sum();
    let seeds: u64 = ran.iter().map(|s| s.seeds).sum();
    let l = S::LABELS;
    write!(f, "{}total: {passed}/{seeds} byte-equal over {} {}", l.prefix, ran.len(), l.sets)?;
    if l.counts_skipped {
        write!(f, ", {} skipped", sets.len() - ran.len())?;
    }
    writeln!(f)
}

#[derive(Clone, Debug)]
pub struct DispatchReport<S: Scheme> {
    pub oracle: String,
    pub target: String,
    pub sets: Vec<SetReport<S>>,
}

impl<S: Scheme> DispatchReport<S> {
    pub fn ok(&self) -> bool {
        self.sets.iter().all(SetReport::ok)
    }
    pub fn failed(&self) -> bool {
        self.sets.iter().any(SetReport::failed)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.sets.iter().flat_map(|s| s.mismatches.iter())
    }
    pub fn verdict(&self) -> Verdict {
        let skipped = self.sets.first().and_then(|s| s.skipped.as_ref());
        verdict(skipped, self.failed(), || format!("{}dispatch: mismatches found", S::LABELS.prefix))
    }
}

/// The mismatches, one line per set, the total.
impl<S: Scheme> fmt::Display for DispatchReport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in self.mismatches() {
            writeln!(f, "{m}")?;
        }
        write_sets(f, "dispatch", &self.sets, &self.target, &self.oracle)
    }
}

#[derive(Clone, Debug)]
pub struct SweepReport<S: Scheme> {
    pub oracle: String,
    pub target: String,
    pub kat: ReplayReport<S>,
    pub sets: Vec<SetReport<S>>,
}

impl<S: Scheme> SweepReport<S> {
    pub fn ok(&self) -> bool {
        self.kat.ok() && self.sets.iter().all(SetReport::ok)
    }
    pub fn failed(&self) -> bool {
        self.kat.failed() || self.sets.iter().any(SetReport::failed)
    }
    pub fn mismatches(&self) -> impl Iterator<Item = &Mismatch> {
        self.kat.mismatches.iter().chain(self.sets.iter().flat_map(|s| s.mismatches.iter()))
    }
    pub fn verdict(&self) -> Verdict {
        verdict(self.kat.skipped.as_ref(), self.failed(), || format!("{}sweep: mismatches found", S::LABELS.prefix))
    }
}

/// The replay (its mismatches and line), the sweep's mismatches, one line per set, the
/// total.
impl<S: Scheme> fmt::Display for SweepReport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kat)?;
        for m in self.sets.iter().flat_map(|s| s.mismatches.iter()) {
            writeln!(f, "{m}")?;
        }
        write_sets(f, S::LABELS.sweep, &self.sets, &self.target, &self.oracle)
    }
}

#[cfg(test)]
mod tests {
    use fhe_api::ckks::params::Preset;
    use fhe_api::ParamSet;

    use super::*;
    use crate::ckks::Ckks;
    use crate::tfhe::Tfhe;

    fn set<S: Scheme>(params: S::Params, passed: u64, skipped: Option<&str>) -> SetReport<S> {
        let skipped = skipped.map(str::to_string);
        SetReport { params, seeds: 2, passed, skipped, mismatches: Vec::new(), elapsed: Duration::from_millis(1234) }
    }

    /// The lines `scripts/test`, `xtask/device/run.sh` and readers know, scheme by scheme.
    #[test]
    fn lines_read_as_they_always_have() {
        let mut kat = ReplayReport::<Tfhe>::new("cpu:avx512".into(), 12, None);
        (kat.passed, kat.elapsed) = (12, Duration::from_millis(17_500));
        let bits = SweepReport::<Tfhe> {
            oracle: "cpu:reference".into(),
            target: "cpu:avx512".into(),
            kat,
            sets: vec![set(ParamSet::PN10QP27, 2, None), set(ParamSet::PN11QP54, 1, None)],
        };
        assert_eq!(
            bits.to_string(),
            "KAT 12/12 byte-equal (cpu:avx512, 17.5 s)\n\
             PN10QP27: 2/2 byte-equal (bootstrap sweep, cpu:avx512 vs oracle cpu:reference, 1.2 s)\n\
             PN11QP54: 1/2 byte-equal (bootstrap sweep, cpu:avx512 vs oracle cpu:reference, 1.2 s)\n\
             total: 3/4 byte-equal over 2 parameter sets\n"
        );
        assert_eq!(bits.verdict(), Verdict::Failed("sweep: mismatches found".into()));

        let why = "a-backend-without-ckks declares no CKKS capability (Backend::ckks() is None)";
        let ckks = DispatchReport::<Ckks> {
            oracle: "cpu:reference".into(),
            target: "a-backend-without-ckks".into(),
            sets: vec![set(Preset::Slots4096Scale40Depth2, 0, Some(why))],
        };
        assert_eq!(
            ckks.to_string(),
            format!(
                "ckks slots4096-scale40-depth2: skipped, 0/2 seeds run ({why})\n\
                 ckks total: 0/0 byte-equal over 0 presets, 1 skipped\n"
            )
        );
        assert_eq!(ckks.verdict(), Verdict::Skipped(why.into()));
        let replay = ReplayReport::<Ckks>::new("a-backend-without-ckks".into(), 8, Some(why.into()));
        assert_eq!(replay.to_string(), format!("KAT CKKS skipped: 0/8 entries run ({why})\n"));
        let mut replay = ReplayReport::<Ckks>::new("cpu".into(), 8, None);
        replay.passed = 7;
        assert!(replay.to_string().starts_with("KAT CKKS 7/8 byte-equal (cpu, 0.0 s)"));
        assert_eq!(replay.verdict(), Verdict::Failed("1 of 8 CKKS KAT entries differ".into()));
    }
}
