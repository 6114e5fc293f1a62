//! The screening rules of `recommend ntt` (the module docs of `recommend` list them),
//! kept apart from the measuring ([`super::run`]) so that they can be tested on
//! synthetic timings. What they produce, [`Scoring`], is part of the recommendation
//! file and lives in `fhe_bench::schema::recommend` with the file's other structs.

use fhe_bench::schema::{geomean, CandidateResult, Confidence, OpResult, Scoring};
use fhe_bench::{Error, Result, Stats};

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

/// The candidate order of repetition `rep` over `count` candidates: a rotation that
/// starts at candidate `rep mod count`.
pub fn rotation(count: usize, rep: usize) -> Vec<usize> {
    (0..count).map(|i| (rep + i) % count.max(1)).collect()
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
            median_cv: Some(fhe_bench::stats::median_sorted(&cvs)),
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
