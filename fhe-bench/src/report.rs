//! Result files: rows, the report around them, writing under `bench/results/<lane>/`,
//! and the ratios between rows. These structs are the file format (`crate::schema`
//! reads them back and holds the rules across fields; `bench/SCHEMA.md` documents it).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::env::{file_timestamp, Environment};
use crate::error::{Error, Result};
use crate::stats::{Plan, Stats};

/// Version of the result format; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One measured `(operation, parameter set, backend, batch size)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// [`crate::Operation`] name, e.g. `ntt_forward`, `gate_and`.
    pub operation: String,
    /// Parameter set name, e.g. `PN10QP27`.
    pub param_set: String,
    /// `Backend::name()`, e.g. `cpu:reference`; peers are `peer:tfhe`, `peer:tfhe-ntt`.
    pub backend: String,
    /// `NttOps::ntt_variant()` of the backend (a peer's own NTT name for peers).
    pub ntt_variant: String,
    /// Polynomials (NTT) or ciphertexts (batched bootstrap) per timed call; 1 otherwise.
    pub batch_size: usize,
    /// Timed calls per run.
    pub iterations: usize,
    pub runs: usize,
    /// Discarded calls at the start of each run.
    pub warmup: usize,
    /// Statistics of one call, in nanoseconds.
    #[serde(flatten)]
    pub stats: Stats,
    /// `median_ns / batch_size`: the cost of one polynomial or ciphertext.
    pub per_item_median_ns: f64,
    /// Items per second at the median: `batch_size * 1e9 / median_ns`.
    pub throughput_per_s: f64,
    /// Free text (peer parameter choices and the like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For an integer operation (`int_*`): the shape of its gate circuit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circuit: Option<CircuitShape>,
    /// For a CKKS operation (`ckks_*`): the precision in bits of its decrypted output
    /// against plaintext arithmetic, `-log2(max |got - want|)` over all slots, measured
    /// once outside the timed region (absent for key generation and other schemes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_bits: Option<f64>,
    /// For a bootstrap row (`ckks_bootstrap`): what the time alone does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<BootstrapFacts>,
}

/// The facts of a CKKS bootstrap row beside its time (`bench/SCHEMA.md`, "CKKS
/// bootstrapping").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BootstrapFacts {
    /// `uniform ternary` or `sparse ternary, hamming weight 192`.
    pub secret: String,
    /// `ceil(log2 QP)` of our chain (null where the side does not expose it).
    #[serde(default)]
    pub log_qp: Option<u32>,
    /// Whether our chain is within our 128-bit bound for this secret; false: measured
    /// for comparison only.
    pub within_security_bound: bool,
    /// `-log2(mean |got - want|)` over all slots, the worst round's (the row's
    /// `precision_bits` is the max-error figure).
    #[serde(default)]
    pub precision_mean_bits: Option<f64>,
    /// The output's level: rescales left on it.
    pub output_level: usize,
    /// Levels a circuit may spend before the next bootstrap, which needs one level
    /// (`output_level - 1`).
    pub levels_left: usize,
    /// Peak resident memory of the measuring process in the worst round, bytes.
    pub peak_memory_bytes: u64,
    /// Switching keys bootstrapping holds (relinearization, rotations, conjugation).
    #[serde(default)]
    pub key_count: Option<usize>,
    /// Their size in bytes (the row's note says which form).
    #[serde(default)]
    pub key_bytes: Option<u64>,
}

/// The gate circuit behind an integer-operation row: what one call bootstraps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CircuitShape {
    /// Operand width in bits.
    pub width_bits: usize,
    /// Blind rotations: one per two-input gate, two per MUX node (`CircuitStats::gates`).
    pub gates: usize,
    /// Levels: sequential batched bootstrap calls.
    pub depth: usize,
    /// The largest level (bootstrap batch).
    pub max_level_width: usize,
    /// Blind rotations per level, first level first (they sum to `gates`).
    pub level_widths: Vec<usize>,
}

impl Row {
    pub fn new(
        operation: &str,
        param_set: &str,
        backend: &str,
        ntt_variant: &str,
        batch_size: usize,
        plan: Plan,
        stats: Stats,
    ) -> Row {
        let batch = batch_size.max(1) as f64;
        Row {
            operation: operation.to_string(),
            param_set: param_set.to_string(),
            backend: backend.to_string(),
            ntt_variant: ntt_variant.to_string(),
            batch_size,
            iterations: plan.iterations,
            runs: plan.runs,
            warmup: plan.warmup,
            per_item_median_ns: stats.median_ns / batch,
            throughput_per_s: if stats.median_ns > 0.0 { batch * 1e9 / stats.median_ns } else { 0.0 },
            stats,
            note: None,
            circuit: None,
            precision_bits: None,
            bootstrap: None,
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Row {
        self.note = Some(note.into());
        self
    }

    pub fn with_circuit(mut self, circuit: CircuitShape) -> Row {
        self.circuit = Some(circuit);
        self
    }

    pub fn with_bootstrap(mut self, facts: BootstrapFacts) -> Row {
        self.bootstrap = Some(facts);
        self
    }

    pub fn with_precision(mut self, bits: Option<f64>) -> Row {
        self.precision_bits = bits;
        self
    }
}

/// Outcome of the equivalence gate, which runs before any measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    /// The backend's outputs were byte-equal to the oracle's.
    Passed,
    /// A mismatch: the report must carry no rows.
    Failed,
    /// The gate could not run (no device); reported, never counted as a pass.
    Skipped,
    /// The gate was not run for this report (the oracle itself, peers, local runs).
    NotRun,
}

/// The equivalence-gate field, filled by the caller (xtask) before measuring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EquivalenceGate {
    pub status: GateState,
    /// What ran and what it found (counts, first mismatch), free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl EquivalenceGate {
    pub fn new(status: GateState, detail: Option<String>) -> Self {
        EquivalenceGate { status, detail }
    }
    pub fn not_run() -> Self {
        EquivalenceGate { status: GateState::NotRun, detail: None }
    }
}

/// One result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema_version: u32,
    /// Hardware lane, e.g. `cpu-oracle`, `h200`; the folder under `bench/results/`.
    pub lane: String,
    /// The backend the report is about (peers' rows may sit beside its own).
    pub backend: String,
    /// The parameter set(s) measured: one name, or several joined by `+`.
    pub params: String,
    pub environment: Environment,
    pub equivalence_gate: EquivalenceGate,
    pub rows: Vec<Row>,
}

impl Report {
    /// A report over `rows`; `params` is derived from the rows' parameter sets.
    ///
    /// When the gate failed the rows are dropped: a backend that fails the equivalence
    /// gate reports no numbers.
    pub fn new(
        lane: &str,
        backend: &str,
        environment: Environment,
        equivalence_gate: EquivalenceGate,
        rows: Vec<Row>,
    ) -> Report {
        let rows = if equivalence_gate.status == GateState::Failed {
            if !rows.is_empty() {
                tracing::warn!(backend, "equivalence gate failed: dropping {} rows", rows.len());
            }
            Vec::new()
        } else {
            rows
        };
        let mut sets: Vec<&str> = Vec::new();
        for r in rows.iter().filter(|r| r.backend == backend) {
            if !sets.contains(&r.param_set.as_str()) {
                sets.push(&r.param_set);
            }
        }
        let params = if sets.is_empty() { "none".to_string() } else { sets.join("+") };
        Report {
            schema_version: SCHEMA_VERSION,
            lane: lane.to_string(),
            backend: backend.to_string(),
            params,
            environment,
            equivalence_gate,
            rows,
        }
    }

    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

/// File-name-safe form of a component: ASCII alphanumerics, `-`, `_`, `.`, `+` are kept,
/// everything else (the `:` of `cpu:reference`) becomes `-`.
pub fn sanitize(component: &str) -> String {
    component.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.+".contains(c) { c } else { '-' }).collect()
}

/// `<folder>/<timestamp>-<stem>.json` for a file about to be written, the timestamp UTC
/// now (`20261202T165504Z`); a second file in the same second gets `-2`, `-3`, ...
pub fn new_file_path(folder: &Path, stem: &str) -> PathBuf {
    let stem = format!("{}-{stem}", file_timestamp(SystemTime::now()));
    let mut path = folder.join(format!("{stem}.json"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = folder.join(format!("{stem}-{n}.json"));
    }
    path
}

/// Writes `report` as `<dir>/<lane>/<timestamp>-<backend>-<params>.json` and returns the
/// path. `dir` is the results root, normally `<workspace>/bench/results`; the timestamp
/// is UTC (`20261202T165504Z`). The report is validated first (`crate::schema::validate`). The lane must be a
/// single path component; `report.lane` is set to it.
pub fn write_results(dir: &Path, lane: &str, report: &Report) -> Result<PathBuf> {
    if lane.is_empty() || lane != sanitize(lane) || lane.starts_with('.') {
        return Err(Error::InvalidInput(format!("lane `{lane}`: use letters, digits, `-`, `_`, `.`, `+`")));
    }
    let mut report = report.clone();
    report.lane = lane.to_string();
    let json = report.to_json()?;
    // Checked as a reader will see it: the text, through the typed schema.
    crate::schema::parse_report(&json)?;
    let folder = dir.join(lane);
    std::fs::create_dir_all(&folder).map_err(Error::io(&folder))?;
    let stem = format!("{}-{}", sanitize(&report.backend), sanitize(&report.params));
    let path = new_file_path(&folder, &stem);
    std::fs::write(&path, json + "\n").map_err(Error::io(&path))?;
    tracing::info!(path = %path.display(), rows = report.rows.len(), "wrote bench results");
    Ok(path)
}

/// One matching pair of rows: ours over theirs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub operation: String,
    pub param_set: String,
    pub batch_size: usize,
    pub ours_backend: String,
    pub theirs_backend: String,
    pub ours_median_ns: f64,
    pub theirs_median_ns: f64,
    /// `ours_median_ns / theirs_median_ns`: below 1 means we are faster.
    pub ratio: f64,
    /// For interleaved rows (both backends end in [`INTERLEAVED`], one run per round, as
    /// many rounds on each side): the median over rounds of ours' round median over
    /// theirs', the figure that a drift in the machine's speed between rounds cannot
    /// move. `None` for other pairs, whose runs were not side by side.
    #[serde(default)]
    pub per_round: Option<f64>,
}

/// Suffix of the backend names of rows timed in alternation with a peer's, round by
/// round (`fhe_bench::peers`, feature `peers`); their runs are the rounds.
pub const INTERLEAVED: &str = "/interleaved";

/// Ours' round median over theirs', round by round, sorted: `ours[i] / theirs[i]` for
/// two rows' `run_medians_ns` taken in alternation. Empty where the rounds do not pair
/// (different counts, none, or a round of theirs that is not positive).
pub(crate) fn per_round_ratios(ours: &[f64], theirs: &[f64]) -> Vec<f64> {
    if ours.len() != theirs.len() || theirs.iter().any(|&x| x <= 0.0) {
        return Vec::new();
    }
    let mut r: Vec<f64> = ours.iter().zip(theirs).map(|(o, t)| o / t).collect();
    r.sort_by(f64::total_cmp);
    r
}

/// Runs of samples, one per round (nanoseconds).
pub(crate) type Rounds = Vec<Vec<f64>>;

/// `rounds` rounds of `ours()` and `theirs()`, ours first in even rounds and theirs
/// first in odd ones, so that a drift in the machine's speed reaches both sides within
/// each round; `tick(round)` after each. Each side's samples, one run per round.
pub(crate) fn alternate(
    rounds: usize,
    mut ours: impl FnMut() -> Result<Vec<f64>>,
    mut theirs: impl FnMut() -> Result<Vec<f64>>,
    tick: &mut dyn FnMut(usize),
) -> Result<(Rounds, Rounds)> {
    let (mut o, mut t) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        if round % 2 == 0 {
            o.push(ours()?);
            t.push(theirs()?);
        } else {
            t.push(theirs()?);
            o.push(ours()?);
        }
        tick(round);
    }
    Ok((o, t))
}

/// The lowest, the highest and the median per-round ratio of two rows timed with
/// [`alternate`] (for their notes); an error only where a round of theirs took 0 ns.
pub(crate) fn round_spread(ours: &Row, theirs: &Row) -> Result<(f64, f64, f64)> {
    let per_round = per_round_ratios(&ours.stats.run_medians_ns, &theirs.stats.run_medians_ns);
    match (per_round.first(), per_round.last()) {
        (Some(&lo), Some(&hi)) => Ok((lo, hi, crate::stats::median_sorted(&per_round))),
        _ => Err(Error::InvalidSample(0.0)),
    }
}

/// The median over rounds of `ours`' round median over `theirs'` (see [`Ratio::per_round`]).
fn per_round_ratio(ours: &Row, theirs: &Row) -> Option<f64> {
    let paired = ours.backend.ends_with(INTERLEAVED) && theirs.backend.ends_with(INTERLEAVED);
    let r = per_round_ratios(&ours.stats.run_medians_ns, &theirs.stats.run_medians_ns);
    (paired && !r.is_empty()).then(|| crate::stats::median_sorted(&r))
}

/// For every row of `ours` with a row of `theirs` on the same operation, parameter set
/// and batch size, the ratio of medians (ours over theirs), in the order of `ours`.
pub fn ratios(ours: &[Row], theirs: &[Row]) -> Vec<Ratio> {
    let mut out = Vec::new();
    for o in ours {
        for t in theirs
            .iter()
            .filter(|t| t.operation == o.operation && t.param_set == o.param_set && t.batch_size == o.batch_size)
        {
            if t.stats.median_ns > 0.0 {
                out.push(Ratio {
                    operation: o.operation.clone(),
                    param_set: o.param_set.clone(),
                    batch_size: o.batch_size,
                    ours_backend: o.backend.clone(),
                    theirs_backend: t.backend.clone(),
                    ours_median_ns: o.stats.median_ns,
                    theirs_median_ns: t.stats.median_ns,
                    ratio: o.stats.median_ns / t.stats.median_ns,
                    per_round: per_round_ratio(o, t),
                });
            }
        }
    }
    out
}
