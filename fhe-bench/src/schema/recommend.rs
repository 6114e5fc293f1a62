//! The recommendation file (`recommend ntt`, written by xtask): its serde structs, which
//! are its schema (`deny_unknown_fields`), and the rules across fields that types cannot
//! say ([`validate_recommendation`]). The screening rules that fill it (scoring,
//! near tie, confidence) and the runs that measure it live in `xtask/src/recommend/`;
//! they stay out of the measuring library, and this file stays here so that every file
//! under `bench/results/` loads through one schema.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{check_environment, decode, Problems};
use crate::env::Environment;
use crate::error::{Error, Result};

/// The name recommendation files' problems are reported under.
pub const RECOMMEND_SCHEMA: &str = "bench/recommend.schema.json";
/// The `kind` of every recommendation file.
pub const RECOMMENDATION_KIND: &str = "ntt_recommendation";

/// Version of the recommendation file format (`bench/recommend.schema.json`).
pub const RECOMMEND_SCHEMA_VERSION: u32 = 1;

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

/// Equal-weight geometric mean of positive values (`None` when empty or when one is not
/// a finite positive number).
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
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

/// How to select a backend and NTT variant: in Rust, through the facade, and in the
/// environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constructor {
    /// e.g. `CpuBackend::new(Some("avx512"))`.
    pub rust: String,
    /// e.g. `Engine::with_backend("cpu:avx512")`.
    pub engine: String,
    /// e.g. `LUX_FHE_BACKEND=cpu LUX_FHE_NTT=avx512`.
    pub env: String,
}

/// The [`Constructor`] lines of a `Backend::name()` such as `cpu:avx512`.
pub fn constructor_lines(backend: &str) -> Constructor {
    let (kind, variant) = backend.split_once(':').unwrap_or((backend, ""));
    let engine = format!("Engine::with_backend({backend:?})");
    match (kind, variant) {
        ("cpu", "") => Constructor { rust: "CpuBackend::new(None)".into(), engine, env: "LUX_FHE_BACKEND=cpu".into() },
        ("cpu", v) => Constructor {
            rust: format!("CpuBackend::new(Some({v:?}))"),
            engine,
            env: format!("LUX_FHE_BACKEND=cpu LUX_FHE_NTT={v}"),
        },
        (k, "") => Constructor { rust: engine.clone(), engine, env: format!("LUX_FHE_BACKEND={k}") },
        (k, v) => Constructor { rust: engine.clone(), engine, env: format!("LUX_FHE_BACKEND={k} LUX_FHE_NTT={v}") },
    }
}

/// One recommendation file (documented in `bench/SCHEMA.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recommendation {
    pub schema_version: u32,
    /// Always `ntt_recommendation` (tells these files from bench result files).
    pub kind: String,
    pub suite: Suite,
    pub params: String,
    /// The current default, a `Backend::name()`.
    pub default: String,
    /// Where the default comes from: `built-in` or `LUX_FHE_NTT`.
    pub default_source: String,
    /// The candidates, in the order given.
    pub requested: Vec<String>,
    pub operations: Vec<String>,
    pub reps: usize,
    pub iterations: usize,
    pub warmup: usize,
    /// The order the qualified candidates were measured in, per repetition.
    pub order_per_rep: Vec<Vec<String>>,
    /// The backend whose results every candidate's were compared with.
    pub oracle: String,
    /// What the correctness check compared.
    pub check: String,
    pub environment: Environment,
    #[serde(flatten)]
    pub scoring: Scoring,
    /// How to select the winner.
    pub constructor: Constructor,
}

/// Decodes a recommendation file's text, then [`validate_recommendation`]s it.
pub fn parse_recommendation(json: &str) -> Result<Recommendation> {
    let rec: Recommendation = decode(RECOMMEND_SCHEMA, json)?;
    validate_recommendation(&rec)?;
    Ok(rec)
}

/// Reads one recommendation file ([`parse_recommendation`]); errors name the file.
pub fn load_recommendation(path: &Path) -> Result<Recommendation> {
    let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
    parse_recommendation(&text).map_err(|e| Error::in_file(path, e))
}

/// The rules of a recommendation file that its types cannot say: version and kind,
/// the suite's operations, every candidate requested once and in order, a disqualified
/// candidate without timings, each operation's ratio its median over the baseline's,
/// each score the geometric mean of its ratios, the relative latencies, the winner and
/// its lead, and the constructor lines of the winner.
pub fn validate_recommendation(rec: &Recommendation) -> Result<()> {
    let mut p = Problems(Vec::new());
    if rec.schema_version != RECOMMEND_SCHEMA_VERSION {
        p.push(
            "$.schema_version",
            format_args!("{} is not the supported {RECOMMEND_SCHEMA_VERSION}", rec.schema_version),
        );
    }
    if rec.kind != RECOMMENDATION_KIND {
        p.push("$.kind", format_args!("expected `{RECOMMENDATION_KIND}`, found `{}`", rec.kind));
    }
    for (field, s) in [
        ("params", &rec.params),
        ("default", &rec.default),
        ("default_source", &rec.default_source),
        ("oracle", &rec.oracle),
        ("check", &rec.check),
    ] {
        p.non_empty("$", field, s);
    }
    check_environment(&mut p, &rec.environment);
    p.positive("$", "reps", rec.reps);
    p.positive("$", "iterations", rec.iterations);
    let want_ops: Vec<&str> = rec.suite.operations().iter().map(|o| o.name()).collect();
    if rec.operations != want_ops {
        p.push("$.operations", format_args!("{:?} are not the {} suite's {want_ops:?}", rec.operations, rec.suite));
    }
    let s = &rec.scoring;
    let backends: Vec<&str> = s.candidates.iter().map(|c| c.backend.as_str()).collect();
    if rec.requested.len() < 2 || rec.requested != backends {
        p.push("$.candidates", format_args!("{backends:?} are not the requested {:?} (at least two)", rec.requested));
    }
    if rec.order_per_rep.len() != rec.reps {
        p.push("$.order_per_rep", format_args!("{} orders for {} repetitions", rec.order_per_rep.len(), rec.reps));
    }
    let qualified = |name: &str| s.candidates.iter().any(|c| c.backend == name && c.disqualified.is_none());
    for (r, order) in rec.order_per_rep.iter().enumerate() {
        if let Some(b) = order.iter().find(|b| !qualified(b)) {
            p.push(format_args!("$.order_per_rep[{r}]"), format_args!("`{b}` is not a qualified candidate"));
        }
    }
    let Some(base) = s.candidates.iter().find(|c| c.backend == s.baseline && c.disqualified.is_none()) else {
        p.push("$.baseline", format_args!("`{}` is not a qualified candidate", s.baseline));
        return p.finish(RECOMMEND_SCHEMA);
    };
    if s.baseline_is_default != (s.baseline == rec.default) {
        p.push(
            "$.baseline_is_default",
            format_args!("{} for baseline `{}`, default `{}`", s.baseline_is_default, s.baseline, rec.default),
        );
    }
    let best = s.candidates.iter().filter_map(|c| c.score).min_by(f64::total_cmp);
    for (i, c) in s.candidates.iter().enumerate() {
        let at = format!("$.candidates[{i}]");
        if c.disqualified.is_some() {
            if !c.ops.is_empty()
                || c.score.is_some()
                || c.relative_latency.is_some()
                || c.median_cv.is_some()
                || !c.rep_scores.is_empty()
            {
                p.push(&at, "a disqualified candidate has no timings, score, latency or cv");
            }
            continue;
        }
        let names: Vec<&str> = c.ops.iter().map(|o| o.operation.as_str()).collect();
        if names != want_ops || c.ops.len() != base.ops.len() {
            p.push(format_args!("{at}.ops"), format_args!("{names:?} are not the operations {want_ops:?}"));
            continue;
        }
        for (j, (o, b)) in c.ops.iter().zip(&base.ops).enumerate() {
            let oat = format!("{at}.ops[{j}]");
            for (field, x) in [("median_ns", o.median_ns), ("p99_ns", o.p99_ns), ("cv", o.cv)] {
                p.non_negative(&oat, field, x);
            }
            if o.samples != rec.reps * rec.iterations || o.rep_medians_ns.len() != rec.reps {
                p.push(
                    &oat,
                    format_args!(
                        "{} samples and {} rep_medians_ns for {} reps x {} iterations",
                        o.samples,
                        o.rep_medians_ns.len(),
                        rec.reps,
                        rec.iterations
                    ),
                );
            }
            p.agrees(&oat, "ratio", o.ratio, o.median_ns / b.median_ns, "median_ns over the baseline's");
        }
        if c.rep_scores.len() != rec.reps {
            p.push(
                format_args!("{at}.rep_scores"),
                format_args!("{} scores for {} reps", c.rep_scores.len(), rec.reps),
            );
        }
        let ratios: Vec<f64> = c.ops.iter().map(|o| o.ratio).collect();
        match (c.score, geomean(&ratios), best, c.relative_latency) {
            (Some(score), Some(g), Some(best), Some(rl)) => {
                p.agrees(&at, "score", score, g, "the geometric mean of the ratios");
                p.agrees(&at, "relative_latency", 1.0 + rl, score / best, "score / best score - 1, plus 1");
            }
            _ => p.push(&at, "a qualified candidate has a score and a relative_latency from positive ratios"),
        }
        if c.median_cv.is_none() {
            p.push(format_args!("{at}.median_cv"), "missing on a qualified candidate");
        }
    }
    let score_of = |name: &str| s.candidates.iter().find(|c| c.backend == name).and_then(|c| c.score);
    if score_of(&s.fastest).is_none() || score_of(&s.fastest) != best {
        p.push("$.fastest", format_args!("`{}` does not have the lowest score", s.fastest));
    }
    let kept = s.near_tie && s.baseline_is_default && s.winner == s.baseline;
    if !(s.winner == s.fastest && !s.near_tie || kept) {
        p.push("$.winner", format_args!("`{}` is neither the fastest nor the default kept on a near tie", s.winner));
    }
    if s.min_lead != s.lead_per_rep.iter().copied().min_by(f64::total_cmp) {
        p.push("$.min_lead", "is not the smallest of lead_per_rep (null when empty)");
    }
    if rec.constructor != constructor_lines(&s.winner) {
        p.push("$.constructor", format_args!("not the constructor lines of the winner `{}`", s.winner));
    }
    p.finish(RECOMMEND_SCHEMA)
}
