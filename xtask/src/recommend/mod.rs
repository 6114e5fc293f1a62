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
//! `cargo xtask recommend ntt --suite kernel|primitive --params P [--device D]
//! [--backend NAME]... [--reps R] [--iters N] [--warmup W] [--out FILE]`, or `--suite
//! ckks-primitive --preset <ckks preset>` (seed 1's complete-CKKS operations): screens a
//! backend's NTT variants (seed 1; the rules above) and writes the JSON report to
//! `bench/results/recommend/` or `--out` (`--output`, seed 1's spelling).
//!
//! `--device` names the backend screened: `cpu` (the default), `cuda[:N]` or `hip[:N]`
//! (device N, in place of `LUX_FHE_DEVICE`). With no `--backend`, every variant of it
//! that a screening includes: each NTT variant this CPU supports (`cpu:<variant>`, the
//! names `list-backends` prints), or each GPU variant but the diagnostic
//! `radix2_indexed` (seed 1 leaves it out unless named). With `--backend`, at least two
//! names of one backend kind (exit 2 otherwise); a bare name (`--backend
//! radix16_compact`) is a variant of `--device`'s backend, and a GPU variant is checked
//! by name before any device is opened. A GPU without a device here is unavailable with
//! its cause (exit 3). The current default is `LUX_FHE_NTT` when it is set, else
//! the backend's built-in default.

mod check;
mod run;
mod score;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use fhe_api::ckks::params::Preset;
use fhe_api::registry::{env_text, normalise_variant, parse_selection, EnvVars, Selection};
use fhe_api::{BackendKind, ParamSet};
use fhe_bench::schema::Suite;
use fhe_cpu::CpuBackend;

use crate::bench::workspace_root;
use crate::{backend_on, parse_params, Fail};

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
    /// Candidates (repeat, at least two), e.g. `--backend cpu:avx512 --backend cpu:avx2`,
    /// or bare variant names of `--device`'s backend (`--backend radix16_compact`);
    /// default: every non-diagnostic NTT variant of `--device`.
    #[arg(long = "backend")]
    backends: Vec<String>,
    /// The backend and device screened (seed 1's `--device cuda:0`): `cpu` (the
    /// default), `cuda[:ORDINAL]`, `hip[:ORDINAL]`. A GPU without a device here is
    /// reported unavailable with its cause (exit 3).
    #[arg(long, value_parser = parse_device)]
    device: Option<Device>,
    /// Repetitions; each measures every candidate, starting with a different one.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Timed calls per operation and repetition (default: kernel 200, primitive 10).
    #[arg(long)]
    iters: Option<usize>,
    /// Discarded calls before each operation's timed calls.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Output file (default: bench/results/recommend/<timestamp>-ntt-<suite>-<params>.json);
    /// `--output` is seed 1's spelling.
    #[arg(long, alias = "output")]
    out: Option<PathBuf>,
}

/// `--device`: a backend kind and, for a GPU, the device ordinal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    kind: BackendKind,
    ordinal: Option<usize>,
}

impl Device {
    /// The candidates when no `--backend` is given: every variant of the backend that a
    /// screening includes by default (seed 1 leaves diagnostic variants out).
    fn default_candidates(self) -> Vec<String> {
        match self.kind {
            BackendKind::Cpu => {
                fhe_cpu::ntt::variants().iter().filter(|v| (v.supported)()).map(|v| format!("cpu:{}", v.name)).collect()
            }
            kind => {
                fhe_gpu::GPU_NTT_VARIANTS.iter().filter(|v| !v.diagnostic()).map(|v| format!("{kind}:{v}")).collect()
            }
        }
    }

    /// A `--backend` value: a bare variant name is a variant of this device's backend.
    /// A GPU variant is checked by name here, so a typo is a usage error on a machine
    /// without the device too (the registry probes the device first).
    fn candidate(self, value: &str) -> Result<String, Fail> {
        let bare = !value.contains(':') && !BackendKind::ALL.iter().any(|k| k.name() == value.trim());
        let name = if bare { format!("{}:{}", self.kind, value.trim()) } else { value.to_string() };
        if let Ok((Selection::Require(kind @ (BackendKind::Cuda | BackendKind::Hip)), Some(v))) =
            parse_selection(Some(&name))
        {
            fhe_gpu::GpuNttVariant::parse(kind, &v).map_err(|e| Fail::Usage(e.to_string()))?;
        }
        Ok(name)
    }
}

fn parse_device(s: &str) -> Result<Device, String> {
    let valid = "cpu, cuda[:N], hip[:N]";
    let (kind, ordinal) = match s.trim().split_once(':') {
        Some((k, n)) => {
            let n = n.trim().parse::<usize>().map_err(|_| format!("device ordinal `{n}` is not a number ({valid})"))?;
            (k, Some(n))
        }
        None => (s.trim(), None),
    };
    match kind.to_ascii_lowercase().as_str() {
        "cpu" if ordinal.is_none() => Ok(Device { kind: BackendKind::Cpu, ordinal }),
        "cuda" => Ok(Device { kind: BackendKind::Cuda, ordinal }),
        "hip" => Ok(Device { kind: BackendKind::Hip, ordinal }),
        _ => Err(format!("unknown device `{s}`: {valid}")),
    }
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
    let device = a.device.unwrap_or(Device { kind: BackendKind::Cpu, ordinal: None });
    let names: Vec<String> = match a.backends.len() {
        0 => device.default_candidates(),
        1 => {
            return Err(Fail::Usage(format!(
                "--backend {} alone: name at least two candidates, or none for every NTT variant of {}",
                a.backends[0], device.kind
            )))
        }
        _ => a.backends.iter().map(|b| device.candidate(b)).collect::<Result<_, _>>()?,
    };
    if a.reps == 0 || a.iters == Some(0) {
        return Err(Fail::Usage("--reps and --iters must be at least 1".into()));
    }
    let candidates = names.iter().map(|n| backend_on(n, device.ordinal)).collect::<Result<Vec<_>, _>>()?;
    let kind = candidates[0].kind();
    if a.device.is_some() && kind != device.kind {
        return Err(Fail::Usage(format!("--backend {} is not a variant of --device {}", names[0], device.kind)));
    }
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
    let default = backend_on(kind.name(), device.ordinal)?.name();

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_as_seed_one_writes_them() {
        assert_eq!(parse_device("cuda:0"), Ok(Device { kind: BackendKind::Cuda, ordinal: Some(0) }));
        assert_eq!(parse_device("HIP:3"), Ok(Device { kind: BackendKind::Hip, ordinal: Some(3) }));
        assert_eq!(parse_device("cpu"), Ok(Device { kind: BackendKind::Cpu, ordinal: None }));
        assert_eq!(parse_device("cuda"), Ok(Device { kind: BackendKind::Cuda, ordinal: None }));
        for bad in ["cpu:0", "cuda:x", "tpu:0", ""] {
            assert!(parse_device(bad).is_err(), "{bad}");
        }
    }

    /// `--device cuda:0` screens every CUDA variant but the diagnostic one; bare
    /// `--backend` names are that backend's variants, and a misspelt one is a usage error.
    #[test]
    fn gpu_candidates_are_the_screened_variants() {
        let cuda = Device { kind: BackendKind::Cuda, ordinal: Some(0) };
        let names = cuda.default_candidates();
        assert_eq!(names.len(), fhe_gpu::GPU_NTT_VARIANTS.len() - 1);
        assert!(names.contains(&"cuda:radix2_compact_group16_smem8".to_string()), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("indexed")), "{names:?}");
        assert_eq!(cuda.candidate("radix16_compact").unwrap(), "cuda:radix16_compact");
        assert_eq!(cuda.candidate("radix2_indexed").unwrap(), "cuda:radix2_indexed");
        assert_eq!(cuda.candidate("cpu:avx2").unwrap(), "cpu:avx2");
        let e = cuda.candidate("radix8").unwrap_err();
        assert!(matches!(&e, Fail::Usage(m) if m.contains("radix4_compact")));
        let cpu = Device { kind: BackendKind::Cpu, ordinal: None };
        assert!(cpu.default_candidates().iter().all(|n| n.starts_with("cpu:")));
        assert_eq!(cpu.candidate("harvey").unwrap(), "cpu:harvey");
    }
}
