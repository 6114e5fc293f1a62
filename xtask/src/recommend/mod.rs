//! `recommend ntt`: screening a backend's NTT variants (seed 1, DESIGN.md "NTT variants
//! and their screening").
//!
//! Three suites (`fhe_bench::schema::Suite`): `kernel` times prepared NTT method calls (forward, inverse,
//! round trip) with engine and input construction outside the timed region;
//! `primitive` times whole operations (key switch, bootstrap, one AND gate) whose
//! results are first checked against the CPU oracle; `ckks-primitive` times seed 1's
//! complete-CKKS operations (encrypt, decrypt, multiply + relinearize, one rotation,
//! four hoisted rotations) on a CKKS preset, with keys made and every output compared
//! with the oracle's word for word, and decrypted, before timing. A candidate whose
//! result differs is disqualified: reported, never timed, never recommended.
//!
//! The scoring rules ([`score`](mod@score), kept apart from the measuring in [`run`] so
//! that they can be tested on synthetic timings; the file they fill is
//! `fhe_bench::schema::recommend`, whose rules every file under `bench/results/` is
//! checked against):
//!
//! - per candidate and operation, the median of every sample of every repetition;
//! - `ratio = candidate median / baseline median` per operation, where the baseline is
//!   the current default variant (or, when `--backend` leaves it out, the first
//!   qualified candidate);
//! - `score` = the equal-weight geometric mean of those ratios (the baseline scores 1,
//!   lower is faster); `relative_latency = score / best score - 1`;
//! - near tie: when the fastest candidate is not the baseline but the baseline's
//!   relative latency is at most [`score::NEAR_TIE`] (3%), the current default is kept (only
//!   the default: a baseline that is just the first `--backend` name is not);
//! - each repetition is scored on its own the same way; the winner's lead in a
//!   repetition is `min over the other qualified candidates (their score / winner's) - 1`;
//!   confidence is `high` when the lead is at least [`score::HIGH_LEAD`] (5%) in every
//!   repetition, `medium` at [`score::MEDIUM_LEAD`] (3%), otherwise `low`;
//! - `median_cv`: the median over operations of each operation's coefficient of
//!   variation (sample standard deviation over mean of its pooled samples);
//! - repetition `r` measures the candidates in the order [`score::rotation`]`(k, r)`: every
//!   repetition starts with a different candidate, which spreads order effects
//!   (caches, frequency, neighbours on a shared machine) over all of them.
//!
//! # The command
//!
//! `cargo xtask recommend ntt --suite kernel|primitive --params P [--backend NAME]...
//! [--reps R] [--iters N] [--warmup W] [--out FILE]`, or `--suite ckks-primitive
//! --preset <ckks preset>` (seed 1's complete-CKKS operations): screens a backend's NTT variants
//! (seed 1; the rules above) and writes the JSON report to
//! `bench/results/recommend/` or `--out`.
//!
//! With no `--backend`, every CPU variant this CPU supports (`cpu:<variant>`, the
//! names `list-backends` prints); with `--backend`, at least two names of one backend
//! kind (exit 2 otherwise). The current default is `LUX_FHE_NTT` when it is set, else
//! the backend's built-in default.

mod check;
mod run;
mod score;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use fhe_api::ckks::params::Preset;
use fhe_api::registry::{env_text, normalise_variant, EnvVars};
use fhe_api::ParamSet;
use fhe_bench::schema::Suite;
use fhe_cpu::CpuBackend;

use crate::bench::workspace_root;
use crate::{backend, parse_params, Fail};

#[derive(Subcommand)]
pub enum RecommendCmd {
    /// Time the NTT variants and recommend one (equal-weight geometric mean of median
    /// ratios, 3% near tie keeps the default, confidence from the lead per repetition).
    Ntt(NttArgs),
}

#[derive(Args)]
pub struct NttArgs {
    /// `kernel`: prepared forward, inverse and round-trip NTT calls; `primitive`: key
    /// switch, bootstrap and an AND gate, results checked against the oracle first;
    /// `ckks-primitive`: CKKS encrypt, decrypt, mul+relin, one rotation and four hoisted
    /// rotations on `--preset`, checked against the oracle and decrypted first.
    #[arg(long, value_parser = parse_suite)]
    suite: Suite,
    /// Parameter set of `kernel` and `primitive`, e.g. PN10QP27.
    #[arg(long, value_parser = parse_params)]
    params: Option<ParamSet>,
    /// CKKS preset of `ckks-primitive`, e.g. slots8192-scale40-depth6.
    #[arg(long, value_parser = parse_preset)]
    preset: Option<Preset>,
    /// Candidates (repeat, at least two), e.g. `--backend cpu:avx512 --backend cpu:avx2`;
    /// default: every NTT variant this CPU supports.
    #[arg(long = "backend")]
    backends: Vec<String>,
    /// Repetitions; each measures every candidate, starting with a different one.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Timed calls per operation and repetition (default: kernel 200, primitive 10).
    #[arg(long)]
    iters: Option<usize>,
    /// Discarded calls before each operation's timed calls.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Output file (default: bench/results/recommend/<timestamp>-ntt-<suite>-<params>.json).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn parse_suite(s: &str) -> Result<Suite, fhe_bench::Error> {
    s.parse()
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    // The error lists the presets.
    s.parse::<Preset>().map_err(|e| e.to_string())
}

pub fn run(cmd: RecommendCmd) -> Result<(), Fail> {
    match cmd {
        RecommendCmd::Ntt(a) => ntt(a),
    }
}

fn ntt(a: NttArgs) -> Result<(), Fail> {
    let names: Vec<String> = match a.backends.len() {
        0 => fhe_cpu::ntt::variants().iter().filter(|v| (v.supported)()).map(|v| format!("cpu:{}", v.name)).collect(),
        1 => {
            return Err(Fail::Usage(format!(
                "--backend {} alone: name at least two candidates, or none for every NTT variant this CPU supports",
                a.backends[0]
            )))
        }
        _ => a.backends.clone(),
    };
    if a.reps == 0 || a.iters == Some(0) {
        return Err(Fail::Usage("--reps and --iters must be at least 1".into()));
    }
    let candidates = names.iter().map(|n| backend(n)).collect::<Result<Vec<_>, _>>()?;
    let kind = candidates[0].kind();
    if let Some(other) = candidates.iter().find(|b| b.kind() != kind) {
        return Err(Fail::Usage(format!(
            "recommend ntt compares the NTT variants of one backend: {} and {} are different backends",
            candidates[0].name(),
            other.name()
        )));
    }
    let resolved: Vec<String> = candidates.iter().map(|b| b.name()).collect();
    if let Some((i, n)) = resolved.iter().enumerate().find(|(i, n)| resolved[..*i].contains(n)) {
        return Err(Fail::Usage(format!("--backend {} names {n} again (already given)", names[i])));
    }
    if candidates.len() < 2 {
        return Err(Fail::Usage(format!("only one NTT variant to compare here: {}", resolved.join(", "))));
    }

    // The current default: what a user gets without choosing a variant.
    // `backend` reads `LUX_FHE_NTT` for a value without a variant (one parsing rule).
    let raw = std::env::var_os(EnvVars::NTT);
    let ntt = env_text(EnvVars::NTT, raw.as_deref(), "an NTT variant name, or unset")
        .map_err(|e| Fail::Usage(e.to_string()))?;
    let source = if ntt.and_then(normalise_variant).is_some() { "LUX_FHE_NTT" } else { "built-in" };
    let default = backend(kind.name())?.name();

    let mut config = match (a.suite.is_ckks(), a.params, a.preset) {
        (true, None, Some(preset)) => run::RecommendConfig::ckks(preset),
        (false, Some(params), None) => run::RecommendConfig::new(a.suite, params),
        (true, _, _) => {
            return Err(Fail::Usage("--suite ckks-primitive takes --preset (a CKKS preset), not --params".into()))
        }
        (false, _, _) => return Err(Fail::Usage(format!("--suite {} takes --params, not --preset", a.suite))),
    };
    config.reps = a.reps;
    config.warmup = a.warmup;
    if let Some(n) = a.iters {
        config.iterations = n;
    }
    let total = config.reps * candidates.len() * a.suite.operations().len() * config.iterations;
    let oracle = CpuBackend::oracle();
    let rec =
        run::run_recommend(&candidates, &default, source, &oracle, &config, &mut fhe_bench::stderr_progress(total))
            .map_err(|e| Fail::Failed(e.to_string()))?;
    let dir = workspace_root().join("bench/results").join(fhe_bench::chart::RECOMMEND_DIR);
    let path = run::write_recommendation(&dir, &rec, a.out.as_deref()).map_err(|e| Fail::Failed(e.to_string()))?;
    print!("{}", run::format_recommendation(&rec));
    println!("recommendation written to {}", path.display());
    Ok(())
}
