//! `fhe-bench`: the measuring code of the Lux FHE runtime, reused by `cargo xtask bench`.
//!
//! The method (DESIGN.md, "Measuring"; the paper's benchmarks section, made stricter):
//! every call timed on its own, warm-up calls discarded at the start of every run,
//! several runs pooled, median and p99 (nearest rank) reported with min, max, mean and
//! the coefficient of variation; default iteration counts NTT 200, key switch 100,
//! bootstrap 30; raw JSON under `bench/results/<lane>/` with hardware, driver, commit
//! and parameter set. The equivalence gate runs first (the caller runs it and fills
//! [`EquivalenceGate`]); a report whose gate failed carries no rows.
//!
//! - [`stats`]: [`Stats`], [`measure`];
//! - [`ops`]: what is measured: [`ops::tfhe`] (the bit scheme's [`Operation`]s,
//!   [`SuiteConfig`] and [`run_suite`] over any backend) and [`ops::ckks`] (CKKS rows with
//!   the precision in bits in each, and the alternated comparison with OpenFHE) and
//!   [`ops::ckks_boot`] (bootstrapping against OpenFHE's `EvalBootstrap`, rounds alternated);
//! - [`env`](mod@env): the [`Environment`] identity;
//! - [`report`]: [`Row`], [`Report`], [`write_results`], [`ratios`];
//! - [`schema`]: the file formats read back, typed (`deny_unknown_fields`), with the
//!   rules across fields: [`load_report`], [`parse_report`], [`validate`], and the same
//!   for the recommendation files `cargo xtask recommend ntt` writes
//!   ([`schema::recommend`]; the screening itself lives in xtask);
//! - [`table`]: [`format_table`]; [`chart`]: [`render_chart`];
//! - [`peers`]: OpenFHE's Python worker (`peers/openfhe/`, no cargo feature needed) and,
//!   with the cargo feature `peers`, TFHE-rs gates and tfhe-ntt in the same process.
//!
//! The result format is documented in `bench/SCHEMA.md` and `bench/schema.json`.

pub mod chart;
pub mod env;
pub mod error;
pub mod ops;
pub mod peers;
pub mod report;
pub mod schema;
pub mod stats;
pub mod table;

pub use chart::{render_chart, render_chart_reports, result_files};
pub use env::{CpuFeatures, Environment};
pub use error::{Error, Result};
pub use ops::tfhe::{
    measure_case, ntt_input, run_report, run_suite, Fixture, Iterations, Operation, SuiteConfig, KEY_SWITCH_INPUTS,
};
pub use ops::{maybe_one_thread, no_progress, stderr_progress, Progress};
pub use report::{
    ratios, write_results, BootstrapFacts, CircuitShape, EquivalenceGate, GateState, Ratio, Report, Row, INTERLEAVED,
    SCHEMA_VERSION,
};
pub use schema::{
    load_recommendation, load_report, parse_recommendation, parse_report, validate, validate_recommendation,
};
pub use stats::{measure, measure_with, sample_with, Plan, Stats};
pub use table::{format_ns, format_ratios, format_table};

/// The JSON Schema of result files (`bench/schema.json`), for tools that want it.
pub const JSON_SCHEMA: &str = include_str!("../../bench/schema.json");

#[cfg(test)]
mod tests;
