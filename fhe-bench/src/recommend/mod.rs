//! `recommend ntt`: screening a backend's NTT variants (seed 1, DESIGN.md "NTT variants
//! and their screening").
//!
//! Three suites ([`Suite`]): `kernel` times prepared NTT method calls (forward, inverse,
//! round trip) with engine and input construction outside the timed region;
//! `primitive` times whole operations (key switch, bootstrap, one AND gate) whose
//! results are first checked against the CPU oracle; `ckks-primitive` times seed 1's
//! complete-CKKS operations (encrypt, decrypt, multiply + relinearize, one rotation,
//! four hoisted rotations) on a CKKS preset, with keys made and every output compared
//! with the oracle's word for word, and decrypted, before timing. A candidate whose
//! result differs is disqualified: reported, never timed, never recommended.
//!
//! The scoring rules ([`score`]), kept apart from the measuring ([`run`]) so that they
//! can be tested on synthetic timings:
//!
//! - per candidate and operation, the median of every sample of every repetition;
//! - `ratio = candidate median / baseline median` per operation, where the baseline is
//!   the current default variant (or, when `--backend` leaves it out, the first
//!   qualified candidate);
//! - `score` = the equal-weight geometric mean of those ratios (the baseline scores 1,
//!   lower is faster); `relative_latency = score / best score - 1`;
//! - near tie: when the fastest candidate is not the baseline but the baseline's
//!   relative latency is at most [`NEAR_TIE`] (3%), the current default is kept (only
//!   the default: a baseline that is just the first `--backend` name is not);
//! - each repetition is scored on its own the same way; the winner's lead in a
//!   repetition is `min over the other qualified candidates (their score / winner's) - 1`;
//!   confidence is `high` when the lead is at least [`HIGH_LEAD`] (5%) in every
//!   repetition, `medium` at [`MEDIUM_LEAD`] (3%), otherwise `low`;
//! - `median_cv`: the median over operations of each operation's coefficient of
//!   variation (sample standard deviation over mean of its pooled samples);
//! - repetition `r` measures the candidates in the order [`rotation`]`(k, r)`: every
//!   repetition starts with a different candidate, which spreads order effects
//!   (caches, frequency, neighbours on a shared machine) over all of them.

mod check;
pub mod run;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::stats::Stats;

pub use run::{
    constructor_lines, format_recommendation, run_recommend, write_recommendation, Constructor, RecommendConfig,
    Recommendation, RECOMMEND_SCHEMA_VERSION,
};

/// A gap of at most this much (relative latency of the default over the fastest) keeps
/// the current default.
pub const NEAR_TIE: f64 = 0.03;
/// The winner's lead in every repetition for `high` confidence.
pub const HIGH_LEAD: f64 = 0.05;
/// The winner's lead in every repetition for `medium` confidence.
pub const MEDIUM_LEAD: f64 = 0.03;
/// Slack on the thresholds above, so that a gap of exactly 3% computed in floating
/// point (`1.03 / 1.0 - 1 = 0.030000000000000027`) counts as 3%.
const SLACK: f64 = 1e-12;

/// A fixed list of measured operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suite {
    /// Prepared NTT calls only: forward, inverse, round trip.
    Kernel,
    /// Whole operations, results checked against the oracle: key switch, bootstrap, AND.
    Primitive,
    /// Seed 1's complete-CKKS operations on a CKKS preset, results checked against the
    /// oracle and decrypted first.
    #[serde(rename = "ckks-primitive")]
    CkksPrimitive,
}

impl Suite {
    pub const ALL: [Suite; 3] = [Suite::Kernel, Suite::Primitive, Suite::CkksPrimitive];

    pub const fn name(self) -> &'static str {
        match self {
            Suite::Kernel => "kernel",
            Suite::Primitive => "primitive",
            Suite::CkksPrimitive => "ckks-primitive",
        }
    }

    /// Whether the suite measures a CKKS preset (rather than a bit-scheme parameter set).
    pub const fn is_ckks(self) -> bool {
        matches!(self, Suite::CkksPrimitive)
    }

    /// The operations of the suite, in measuring order.
    pub const fn operations(self) -> &'static [SuiteOp] {
        match self {
            Suite::Kernel => &[SuiteOp::NttForward, SuiteOp::NttInverse, SuiteOp::NttRoundTrip],
            Suite::Primitive => &[SuiteOp::KeySwitch, SuiteOp::Bootstrap, SuiteOp::GateAnd],
            Suite::CkksPrimitive => &[
                SuiteOp::CkksEncrypt,
                SuiteOp::CkksDecrypt,
                SuiteOp::CkksMulRelin,
                SuiteOp::CkksRotate,
                SuiteOp::CkksHoisted4,
            ],
        }
    }

    /// Timed calls per repetition when none is given: the NTT count of the bench for
    /// the cheap kernel calls, seed 1's ten for whole operations.
    pub const fn default_iterations(self) -> usize {
        match self {
            Suite::Kernel => 200,
            Suite::Primitive | Suite::CkksPrimitive => 10,
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Suite {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Suite::ALL.into_iter().find(|x| x.name().eq_ignore_ascii_case(s)).ok_or_else(|| Error::UnknownSuite {
            value: s.to_string(),
            valid: Suite::ALL.iter().map(|x| x.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// One operation of a suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteOp {
    /// `ntt_forward` on one polynomial.
    NttForward,
    /// `ntt_inverse` on one polynomial.
    NttInverse,
    /// `ntt_forward` then `ntt_inverse` on the same polynomial, one timed call.
    NttRoundTrip,
    /// `key_switch_batch` of one extracted LWE sample.
    KeySwitch,
    /// `bootstrap_batch` of one ciphertext.
    Bootstrap,
    /// `gate_batch(AND)` of one pair.
    GateAnd,
    /// CKKS public-key encryption of a plaintext encoded beforehand.
    CkksEncrypt,
    /// CKKS decryption and decoding of a fresh top-level ciphertext.
    CkksDecrypt,
    /// CKKS multiplication with relinearization (no rescale) at the top level.
    CkksMulRelin,
    /// One CKKS rotation by one slot.
    CkksRotate,
    /// Four CKKS rotations (1..4) sharing one decomposition.
    CkksHoisted4,
}

impl SuiteOp {
    pub const fn name(self) -> &'static str {
        match self {
            SuiteOp::NttForward => "ntt_forward",
            SuiteOp::NttInverse => "ntt_inverse",
            SuiteOp::NttRoundTrip => "ntt_round_trip",
            SuiteOp::KeySwitch => "key_switch",
            SuiteOp::Bootstrap => "bootstrap",
            SuiteOp::GateAnd => "gate_and",
            SuiteOp::CkksEncrypt => "ckks_encrypt",
            SuiteOp::CkksDecrypt => "ckks_decrypt",
            SuiteOp::CkksMulRelin => "ckks_mul_relin",
            SuiteOp::CkksRotate => "ckks_rotate",
            SuiteOp::CkksHoisted4 => "ckks_hoisted4",
        }
    }
}

impl fmt::Display for SuiteOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The candidate order of repetition `rep` over `count` candidates: a rotation that
/// starts at candidate `rep mod count`.
pub fn rotation(count: usize, rep: usize) -> Vec<usize> {
    (0..count).map(|i| (rep + i) % count.max(1)).collect()
}

/// Equal-weight geometric mean of positive values (`None` when empty or when one is not
/// a finite positive number).
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// The raw timings of one operation of one candidate: nanosecond samples per repetition.
#[derive(Clone, Debug, PartialEq)]
pub struct OpTimings {
    pub operation: String,
    pub reps: Vec<Vec<f64>>,
}

/// What was measured for one candidate. A disqualified candidate has no timings.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateTimings {
    /// `Backend::name()`, e.g. `cpu:avx512`.
    pub backend: String,
    /// Why it may not be recommended (its result differs from the oracle's, or it
    /// failed), or `None`.
    pub disqualified: Option<String>,
    pub ops: Vec<OpTimings>,
}

/// One operation of one candidate, summarized.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpResult {
    pub operation: String,
    /// Timed calls pooled over every repetition.
    pub samples: usize,
    /// Median of the pooled samples, nanoseconds per call.
    pub median_ns: f64,
    pub p99_ns: f64,
    /// Coefficient of variation of the pooled samples.
    pub cv: f64,
    /// The median of each repetition, in repetition order.
    pub rep_medians_ns: Vec<f64>,
    /// `median_ns` over the baseline's `median_ns` for this operation.
    pub ratio: f64,
}

/// One candidate, scored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateResult {
    pub backend: String,
    /// Why it is excluded, or null (always written).
    #[serde(deserialize_with = "Option::deserialize")]
    pub disqualified: Option<String>,
    pub ops: Vec<OpResult>,
    /// Geometric mean of the operation ratios (baseline = 1, lower is faster); null when
    /// disqualified.
    #[serde(deserialize_with = "Option::deserialize")]
    pub score: Option<f64>,
    /// The score of each repetition on its own (ratios of repetition medians).
    pub rep_scores: Vec<f64>,
    /// `score / best score - 1` (0 for the fastest).
    #[serde(deserialize_with = "Option::deserialize")]
    pub relative_latency: Option<f64>,
    /// Median over the operations of their `cv`.
    #[serde(deserialize_with = "Option::deserialize")]
    pub median_cv: Option<f64>,
}

/// The confidence label of a recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        })
    }
}

/// The outcome of [`score`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scoring {
    /// The candidate every ratio is taken against.
    pub baseline: String,
    /// Whether the baseline is the current default (false when `--backend` left the
    /// default out or the default was disqualified).
    pub baseline_is_default: bool,
    /// The lowest score.
    pub fastest: String,
    /// The recommendation: `fastest`, or the baseline on a near tie.
    pub winner: String,
    /// True when the baseline was kept although another candidate scored lower.
    pub near_tie: bool,
    /// The winner's lead in each repetition (negative where another was faster); empty
    /// with a single qualified candidate.
    pub lead_per_rep: Vec<f64>,
    /// The smallest of `lead_per_rep` (always written, null when it is empty).
    #[serde(deserialize_with = "Option::deserialize")]
    pub min_lead: Option<f64>,
    pub confidence: Confidence,
    /// Why that confidence, in words.
    pub confidence_reason: String,
    pub candidates: Vec<CandidateResult>,
}

fn invalid(msg: String) -> Error {
    Error::InvalidInput(msg)
}

/// Scores `candidates` against the current default `default` (a `Backend::name()`) by
/// the rules in the module documentation.
///
/// Every qualified candidate must carry the same operations in the same order with the
/// same number of repetitions, each with at least one sample; at least one candidate
/// must be qualified.
pub fn score(candidates: &[CandidateTimings], default: &str) -> Result<Scoring> {
    let qualified: Vec<&CandidateTimings> = candidates.iter().filter(|c| c.disqualified.is_none()).collect();
    let Some(first) = qualified.first() else {
        return Err(invalid("no qualified candidate: every one was disqualified".into()));
    };
    let ops: Vec<&str> = first.ops.iter().map(|o| o.operation.as_str()).collect();
    let reps = first.ops.first().map(|o| o.reps.len()).unwrap_or(0);
    if ops.is_empty() || reps == 0 {
        return Err(invalid(format!("{}: no operations or no repetitions measured", first.backend)));
    }
    for c in &qualified {
        let names: Vec<&str> = c.ops.iter().map(|o| o.operation.as_str()).collect();
        if names != ops {
            return Err(invalid(format!("{}: operations {names:?}, expected {ops:?}", c.backend)));
        }
        if let Some(o) = c.ops.iter().find(|o| o.reps.len() != reps || o.reps.iter().any(Vec::is_empty)) {
            return Err(invalid(format!(
                "{} {}: expected {reps} non-empty repetitions, found {}",
                c.backend,
                o.operation,
                o.reps.len()
            )));
        }
    }
    let base = qualified.iter().find(|c| c.backend == default).unwrap_or(first);
    let baseline_is_default = base.backend == default;

    // Per operation: pooled statistics and repetition medians.
    let summarize =
        |c: &CandidateTimings| -> Result<Vec<Stats>> { c.ops.iter().map(|o| Stats::from_runs(&o.reps)).collect() };
    let base_stats = summarize(base)?;
    if let Some((o, _)) =
        ops.iter().zip(&base_stats).find(|(_, s)| s.median_ns <= 0.0 || s.run_medians_ns.contains(&0.0))
    {
        return Err(invalid(format!("baseline {} has a zero median for {o}", base.backend)));
    }

    let mut results = Vec::with_capacity(candidates.len());
    for c in candidates {
        if c.disqualified.is_some() {
            results.push(CandidateResult {
                backend: c.backend.clone(),
                disqualified: c.disqualified.clone(),
                ops: Vec::new(),
                score: None,
                rep_scores: Vec::new(),
                relative_latency: None,
                median_cv: None,
            });
            continue;
        }
        let stats = summarize(c)?;
        let op_results: Vec<OpResult> = c
            .ops
            .iter()
            .zip(&stats)
            .zip(&base_stats)
            .map(|((o, s), b)| OpResult {
                operation: o.operation.clone(),
                samples: s.samples,
                median_ns: s.median_ns,
                p99_ns: s.p99_ns,
                cv: s.cv,
                rep_medians_ns: s.run_medians_ns.clone(),
                ratio: s.median_ns / b.median_ns,
            })
            .collect();
        let ratios: Vec<f64> = op_results.iter().map(|o| o.ratio).collect();
        let score = geomean(&ratios).ok_or_else(|| invalid(format!("{}: a zero or invalid median", c.backend)))?;
        let rep_scores = (0..reps)
            .map(|r| {
                let rr: Vec<f64> =
                    stats.iter().zip(&base_stats).map(|(s, b)| s.run_medians_ns[r] / b.run_medians_ns[r]).collect();
                geomean(&rr).ok_or_else(|| invalid(format!("{}: a zero median in repetition {}", c.backend, r + 1)))
            })
            .collect::<Result<Vec<f64>>>()?;
        let mut cvs: Vec<f64> = stats.iter().map(|s| s.cv).collect();
        cvs.sort_by(f64::total_cmp);
        results.push(CandidateResult {
            backend: c.backend.clone(),
            disqualified: None,
            ops: op_results,
            score: Some(score),
            rep_scores,
            relative_latency: None,
            median_cv: Some(crate::stats::median_sorted(&cvs)),
        });
    }

    // The fastest: the lowest score; an exact tie goes to the baseline, then to the
    // candidate listed first.
    let scored: Vec<(usize, f64)> = results.iter().enumerate().filter_map(|(i, r)| r.score.map(|s| (i, s))).collect();
    let base_idx = results.iter().position(|r| r.backend == base.backend).expect("the baseline is a candidate");
    let mut fastest = base_idx;
    for &(i, s) in &scored {
        if s < results[fastest].score.expect("qualified") {
            fastest = i;
        }
    }
    let best = results[fastest].score.expect("qualified");
    for r in results.iter_mut() {
        r.relative_latency = r.score.map(|s| s / best - 1.0);
    }
    let base_gap = results[base_idx].relative_latency.expect("qualified");
    // Only the current default is kept on a near tie: a baseline that is merely the
    // first name listed has no claim to be kept.
    let near_tie = baseline_is_default && fastest != base_idx && base_gap <= NEAR_TIE + SLACK;
    let winner = if near_tie { base_idx } else { fastest };

    let lead_per_rep: Vec<f64> = (0..reps)
        .filter_map(|r| {
            let w = results[winner].rep_scores[r];
            scored
                .iter()
                .filter(|&&(i, _)| i != winner)
                .map(|&(i, _)| results[i].rep_scores[r] / w - 1.0)
                .min_by(f64::total_cmp)
        })
        .collect();
    let min_lead = lead_per_rep.iter().copied().min_by(f64::total_cmp);
    let (confidence, confidence_reason) = match min_lead {
        None => (Confidence::Low, "only one qualified candidate: nothing to compare".to_string()),
        Some(l) if l >= HIGH_LEAD - SLACK => {
            (Confidence::High, format!("fastest in every repetition, leading by at least {:.1}% (>= 5%)", 100.0 * l))
        }
        Some(l) if l >= MEDIUM_LEAD - SLACK => (
            Confidence::Medium,
            format!("fastest in every repetition, leading by at least {:.1}% (>= 3%, < 5%)", 100.0 * l),
        ),
        Some(_) if near_tie => (
            Confidence::Low,
            format!(
                "near tie: {} is within {:.1}% (<= 3%) of the fastest, {}; the current default is kept",
                results[base_idx].backend,
                100.0 * base_gap,
                results[fastest].backend
            ),
        ),
        Some(l) if l <= 0.0 => (Confidence::Low, "not the fastest in every repetition".to_string()),
        Some(l) => (Confidence::Low, format!("lead below 3% in some repetition (smallest {:.1}%)", 100.0 * l)),
    };
    Ok(Scoring {
        baseline: results[base_idx].backend.clone(),
        baseline_is_default,
        fastest: results[fastest].backend.clone(),
        winner: results[winner].backend.clone(),
        near_tie,
        lead_per_rep,
        min_lead,
        confidence,
        confidence_reason,
        candidates: results,
    })
}

#[cfg(test)]
mod tests;
