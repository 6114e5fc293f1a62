//! The file formats, written once. The serde structs are the schema: [`Report`] (with
//! [`crate::Row`], [`crate::Environment`], [`crate::Stats`]) for bench result files and
//! [`Recommendation`] ([`recommend`]) for `recommend ntt` files, each `deny_unknown_fields`, so that a
//! stray or misspelt field fails to load instead of being dropped. What a type cannot
//! say (ranges, ratios that must agree with the medians they come from, which fields a
//! row of each kind carries) is checked by one function per format, [`validate`] and
//! [`validate_recommendation`], which report every problem at once.
//!
//! Writing goes through the same path as reading (serialize, then [`parse_report`] or
//! [`parse_recommendation`] on the text), so a file that was written can be read back.
//! `bench/schema.json` and `bench/recommend.schema.json` describe the same formats for
//! other tools; tests keep their required fields in step with these structs.

use std::fmt::Display;
use std::path::Path;

pub mod recommend;

use crate::env::Environment;
use crate::error::{Error, Result};
use crate::report::{GateState, Report, Row, SCHEMA_VERSION};

pub use recommend::{
    constructor_lines, geomean, load_recommendation, parse_recommendation, validate_recommendation, CandidateResult,
    Confidence, Constructor, OpResult, Recommendation, Scoring, Suite, SuiteOp, RECOMMENDATION_KIND, RECOMMEND_SCHEMA,
    RECOMMEND_SCHEMA_VERSION,
};

/// The name bench result files' problems are reported under.
pub const REPORT_SCHEMA: &str = "bench/schema.json";

/// Relative tolerance of the ratio checks: the files are written with `float_roundtrip`,
/// so a recomputed ratio differs at most in the last bits of a different evaluation
/// order (a geometric mean), far below this.
const RATIO_TOLERANCE: f64 = 1e-9;

/// Decodes a result file's text into the typed report, then [`validate`]s it.
pub fn parse_report(json: &str) -> Result<Report> {
    let report: Report = decode(REPORT_SCHEMA, json)?;
    validate(&report)?;
    Ok(report)
}

/// Reads one result file ([`parse_report`]); errors name the file.
pub fn load_report(path: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
    parse_report(&text).map_err(|e| Error::in_file(path, e))
}

fn decode<T: serde::de::DeserializeOwned>(schema: &'static str, json: &str) -> Result<T> {
    // serde's message names the field, the line and the column.
    serde_json::from_str(json).map_err(|e| Error::Schema { schema, problems: vec![e.to_string()] })
}

/// Every rule broken, each with the JSON path it is at.
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, at: impl Display, what: impl Display) {
        self.0.push(format!("{at}: {what}"));
    }

    fn non_empty(&mut self, at: &str, field: &str, s: &str) {
        if s.is_empty() {
            self.push(format_args!("{at}.{field}"), "expected a non-empty string");
        }
    }

    fn positive(&mut self, at: &str, field: &str, n: usize) {
        if n == 0 {
            self.push(format_args!("{at}.{field}"), "expected an integer >= 1, found 0");
        }
    }

    fn non_negative(&mut self, at: &str, field: &str, x: f64) {
        if !(x.is_finite() && x >= 0.0) {
            self.push(format_args!("{at}.{field}"), format_args!("expected a finite number >= 0, found {x}"));
        }
    }

    /// `found` equals `want` up to [`RATIO_TOLERANCE`].
    fn agrees(&mut self, at: &str, field: &str, found: f64, want: f64, rule: &str) {
        let scale = found.abs().max(want.abs()).max(f64::MIN_POSITIVE);
        // Written so that a NaN on either side is a disagreement.
        let close = (found - want).abs() <= RATIO_TOLERANCE * scale;
        if !close {
            self.push(format_args!("{at}.{field}"), format_args!("{found} is not {rule} ({want})"));
        }
    }

    fn finish(self, schema: &'static str) -> Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Schema { schema, problems: self.0 })
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn looks_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

fn check_environment(p: &mut Problems, env: &Environment) {
    let at = "$.environment";
    for (field, s) in [
        ("cpu_model", &env.cpu_model),
        ("os", &env.os),
        ("arch", &env.arch),
        ("rustc_version", &env.rustc_version),
        ("crate_version", &env.crate_version),
        ("git_commit", &env.git_commit),
        ("date_utc", &env.date_utc),
    ] {
        p.non_empty(at, field, s);
    }
    p.positive(at, "cores", env.cores);
    if !env.date_utc.is_empty() && !looks_rfc3339_utc(&env.date_utc) {
        p.push(
            format_args!("{at}.date_utc"),
            format_args!("`{}` is not RFC 3339 UTC (YYYY-MM-DDTHH:MM:SSZ)", env.date_utc),
        );
    }
}

/// The rules of a result file that its types cannot say: the supported version,
/// non-empty names, counts of at least one, `min <= median <= p99 <= max`, counts and
/// ratios that agree with each other, the fields each kind of row carries, and no rows
/// when the equivalence gate failed. Every problem is reported in one [`Error::Schema`].
pub fn validate(report: &Report) -> Result<()> {
    let mut p = Problems(Vec::new());
    if report.schema_version != SCHEMA_VERSION {
        p.push("$.schema_version", format_args!("{} is not the supported {SCHEMA_VERSION}", report.schema_version));
    }
    p.non_empty("$", "lane", &report.lane);
    p.non_empty("$", "backend", &report.backend);
    p.non_empty("$", "params", &report.params);
    check_environment(&mut p, &report.environment);
    if report.equivalence_gate.status == GateState::Failed && !report.rows.is_empty() {
        p.push("$.rows", "a backend that failed the equivalence gate reports no numbers");
    }
    for (i, row) in report.rows.iter().enumerate() {
        check_row(&mut p, &format!("$.rows[{i}]"), row);
    }
    p.finish(REPORT_SCHEMA)
}

fn check_row(p: &mut Problems, at: &str, r: &Row) {
    for (field, s) in [
        ("operation", &r.operation),
        ("param_set", &r.param_set),
        ("backend", &r.backend),
        ("ntt_variant", &r.ntt_variant),
    ] {
        p.non_empty(at, field, s);
    }
    let s = &r.stats;
    for (field, n) in
        [("batch_size", r.batch_size), ("iterations", r.iterations), ("runs", r.runs), ("samples", s.samples)]
    {
        p.positive(at, field, n);
    }
    for (field, x) in [
        ("median_ns", s.median_ns),
        ("p99_ns", s.p99_ns),
        ("min_ns", s.min_ns),
        ("max_ns", s.max_ns),
        ("mean_ns", s.mean_ns),
        ("stddev_ns", s.stddev_ns),
        ("cv", s.cv),
        ("per_item_median_ns", r.per_item_median_ns),
        ("throughput_per_s", r.throughput_per_s),
    ] {
        p.non_negative(at, field, x);
    }
    for (j, &x) in s.run_medians_ns.iter().enumerate() {
        p.non_negative(at, &format!("run_medians_ns[{j}]"), x);
    }
    if !(s.min_ns <= s.median_ns && s.median_ns <= s.p99_ns && s.p99_ns <= s.max_ns) {
        p.push(at, "expected min_ns <= median_ns <= p99_ns <= max_ns");
    }
    // Every timed call of every run is a sample, and every run has its median.
    if s.samples != r.iterations * r.runs {
        p.push(at, format_args!("samples {} is not iterations x runs ({} x {})", s.samples, r.iterations, r.runs));
    }
    if s.run_medians_ns.len() != r.runs {
        p.push(at, format_args!("{} run_medians_ns for {} runs", s.run_medians_ns.len(), r.runs));
    }
    // The derived figures are the median's (`Row::new`).
    let batch = r.batch_size.max(1) as f64;
    p.agrees(at, "per_item_median_ns", r.per_item_median_ns, s.median_ns / batch, "median_ns / batch_size");
    let throughput = if s.median_ns > 0.0 { batch * 1e9 / s.median_ns } else { 0.0 };
    p.agrees(at, "throughput_per_s", r.throughput_per_s, throughput, "batch_size * 1e9 / median_ns");
    check_row_kind(p, at, r);
}

/// Which optional fields a row carries follows from its operation: a gate circuit for
/// an integer operation (`int_*`), a precision for a CKKS operation (`ckks_*`) that
/// decrypts something (not key generation; peers and old files may leave it out).
fn check_row_kind(p: &mut Problems, at: &str, r: &Row) {
    let integer = r.operation.starts_with("int_");
    match (&r.circuit, integer) {
        (None, true) => p.push(format_args!("{at}.circuit"), "missing: an integer operation's row carries its circuit"),
        (Some(_), false) => p.push(format_args!("{at}.circuit"), "only integer operations (`int_*`) carry a circuit"),
        (None, false) => {}
        (Some(c), true) => {
            p.positive(&format!("{at}.circuit"), "width_bits", c.width_bits);
            let w = &c.level_widths;
            if w.len() != c.depth
                || w.iter().sum::<usize>() != c.gates
                || w.iter().copied().max().unwrap_or(0) != c.max_level_width
            {
                p.push(
                    format_args!("{at}.circuit"),
                    "level_widths must have `depth` entries summing to `gates` with maximum `max_level_width`",
                );
            }
        }
    }
    check_bootstrap(p, at, r);
    if let Some(bits) = r.precision_bits {
        if !r.operation.starts_with("ckks_") || r.operation == "ckks_keygen" || r.operation == "ckks_bootstrap_setup" {
            p.push(format_args!("{at}.precision_bits"), "only CKKS operations that decrypt carry a precision");
        }
        if !bits.is_finite() {
            p.push(format_args!("{at}.precision_bits"), format_args!("expected a finite number or null, found {bits}"));
        }
    }
}

/// Bootstrap facts ride on `ckks_bootstrap` and `ckks_fe_bootstrap` rows only, with
/// consistent levels and a finite mean precision.
fn check_bootstrap(p: &mut Problems, at: &str, r: &Row) {
    let Some(b) = &r.bootstrap else { return };
    if r.operation != "ckks_bootstrap" && r.operation != "ckks_fe_bootstrap" {
        p.push(
            format_args!("{at}.bootstrap"),
            "only `ckks_bootstrap` and `ckks_fe_bootstrap` rows carry bootstrap facts",
        );
    }
    if b.levels_left >= b.output_level.max(1) {
        p.push(format_args!("{at}.bootstrap.levels_left"), "must be below output_level (the next bootstrap needs one)");
    }
    if b.precision_mean_bits.is_some_and(|x| !x.is_finite()) {
        p.push(format_args!("{at}.bootstrap.precision_mean_bits"), "expected a finite number or null");
    }
    if b.peak_memory_bytes == 0 {
        p.push(format_args!("{at}.bootstrap.peak_memory_bytes"), "must be positive");
    }
}

#[cfg(test)]
mod tests;
