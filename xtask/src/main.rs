//! `cargo xtask`: the developer tasks of the Lux FHE runtime (a thin CLI over `fhe-kat`
//! and `fhe-bench`).
//!
//! - `kat generate [--force] [--scheme all|bits|ckks|ckks-bootstrap]`: recompute the
//!   known-answer corpus on the CPU oracle and write `fhe-kat/corpus/<SET>.json` (for
//!   CKKS, `ckks-<preset>.json`; for CKKS bootstrapping, `ckks-bootstrap-insecure.json`);
//!   refuses to overwrite a differing corpus without `--force`, and prints which entries
//!   changed.
//! - `kat replay --backend B`: recompute every corpus entry on `B`, byte for byte (CKKS
//!   and CKKS bootstrap entries by their words' SHA-256).
//! - `equiv dispatch --backend B --seeds N [--params P] [--ckks-seeds M]`: every public
//!   surface on the oracle and on `B`, seeds `Seed::derive("lux-fhe-dispatch-equiv-v1", k)`;
//!   then CKKS (root `lux-fhe-dispatch-equiv-v1/ckks`, preset slots4096-scale40-depth2).
//! - `equiv sweep --backend B --seeds N [--params P] [--ckks-seeds M]`: KAT replay, then an
//!   orthogonal bootstrap sweep, seeds `Seed::derive("lux-fhe-backend-equiv-sweep-v1", k)`;
//!   then the CKKS replay and a mul+rotate sweep (root `.../ckks`).
//!   `--params` takes bit-scheme sets and CKKS presets (default: every set and the small
//!   CKKS preset); a backend without CKKS prints `skipped` lines for it, never a pass.
//! - `bench [--backend B] [--params P] [--iters N] [--peers]`, `bench chart`, `bench memory`
//!   (device memory of CKKS keys and ciphertexts per preset): see `bench/`.
//! - `recommend ntt --suite kernel|primitive --params P [--device cuda:0]
//!   [--backend NAME]...` (or `--suite ckks-primitive --preset P`): screens the NTT
//!   variants and recommends one; see `recommend/`.
//! - `list-backends`: what this build can run here.
//! - `device-check [--dir D]`: the bundle for a GPU machine without Rust: release binary,
//!   KAT corpus, `run.sh` (equivalence gate first, then the CUDA and CPU benches).
//! - `soak [--gates 100000] [--params P] [--backend B]`: random chained gates, zero
//!   wrong results.
//!
//! `Seed::derive(root, k) = SHA-256(root || 0x00 || LE64(k))`; the full seed schedule is
//! documented in the `fhe-kat` crate.
//!
//! Modules: `kat` and `equiv` (both schemes through `fhe_kat::Scheme`), `bench/`
//! (`tfhe`, `ckks`, `int`, and the equivalence gate that runs first), `recommend/`,
//! `device_check`.
//!
//! Exit codes: 0 pass; 1 mismatch, wrong result or error; 2 usage error (unknown
//! backend, parameter set or NTT variant); 3 the backend is not available here
//! (`skipped: <cause>`), which is never a pass. `RUST_LOG=fhe_kat=info` shows progress.

use std::process::ExitCode;
use std::sync::Arc;

mod bench;
mod device_check;
mod equiv;
mod kat;
mod recommend;

use clap::{Args, Parser, Subcommand};
use fhe_api::registry::{parse_selection, resolve, EnvVars};
use fhe_api::{Backend, BackendKind, Error as FheError, ParamSet, Registry, Selection};
use fhe_kat::Verdict;

const EXIT_FAIL: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_SKIPPED: u8 = 3;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Lux FHE developer tasks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The known-answer corpus.
    #[command(subcommand)]
    Kat(kat::KatCmd),
    /// The equivalence gate: a backend against the CPU oracle.
    #[command(subcommand)]
    Equiv(equiv::EquivCmd),
    /// Random chained gates on one backend, every result checked.
    Soak(equiv::SoakArgs),
    /// Benchmarks (equivalence gate first), JSON results, charts.
    Bench(Box<bench::BenchArgs>),
    /// Screen implementation variants and recommend one (`recommend ntt`).
    #[command(subcommand)]
    Recommend(recommend::RecommendCmd),
    /// Prints the backends and CPU NTT variants this build can run here, one a line.
    ListBackends,
    /// Packs the release binary, KAT corpus and run.sh for a GPU machine with no Rust.
    DeviceCheck(device_check::DeviceCheckArgs),
}

#[derive(Args)]
pub(crate) struct BackendArg {
    /// `cpu`, `cpu:<ntt-variant>`, `cuda`, `hip`, `wgpu` (or `auto`); defaults to
    /// `LUX_FHE_BACKEND`, else `cpu`.
    #[arg(long, env = "LUX_FHE_BACKEND", default_value = "cpu")]
    pub backend: String,
}

pub(crate) fn parse_params(s: &str) -> Result<ParamSet, FheError> {
    s.parse()
}

/// Why a command did not pass.
#[derive(Debug)]
pub(crate) enum Fail {
    /// Mismatches or wrong results (already printed), or a runtime error.
    Failed(String),
    Usage(String),
    Skipped(String),
}

impl From<fhe_kat::Error> for Fail {
    fn from(e: fhe_kat::Error) -> Self {
        Fail::Failed(e.to_string())
    }
}

impl From<FheError> for Fail {
    fn from(e: FheError) -> Self {
        Fail::Failed(e.to_string())
    }
}

/// The backends this binary was built with: the facade's registry (the CPU oracle,
/// plus whatever backend features of `lux-fhe` are on).
fn registry() -> Registry {
    lux_fhe::registry()
}

/// Constructs the backend `value` names, or says why it cannot run here.
/// The backend `--backend` names (clap reads `LUX_FHE_BACKEND` in its place), by the
/// library's one parsing rule ([`fhe_api::registry::resolve`], as `Engine::with_backend`):
/// `LUX_FHE_NTT` names the variant when the value names none, `LUX_FHE_DEVICE` the
/// device, and a variable that is not UTF-8 is an error naming it. Unlike
/// `with_backend`, a variant named in the value wins over a different `LUX_FHE_NTT`
/// instead of being refused, so tasks that walk the variants (`recommend`, CI's `equiv
/// dispatch` loop) run whatever the shell exports.
pub(crate) fn backend(value: &str) -> Result<Arc<dyn Backend>, Fail> {
    backend_on(value, None)
}

/// [`backend`] on device `device` when given (`recommend ntt --device cuda:1`), in place
/// of `LUX_FHE_DEVICE`.
pub(crate) fn backend_on(value: &str, device: Option<usize>) -> Result<Arc<dyn Backend>, Fail> {
    let usage = |e: FheError| Fail::Usage(e.to_string());
    let mut env = EnvVars::read();
    if parse_selection(Some(value)).map_err(usage)?.1.is_some() {
        env.ntt = None;
    }
    let (selection, mut options) = resolve(&env, Some(value)).map_err(usage)?;
    if let Some(d) = device {
        options.device = d;
    }
    let variant = options.ntt_variant.clone();
    match registry().create(&selection, &options) {
        Ok(b) => Ok(b),
        Err(FheError::Unavailable { backend, cause }) => {
            Err(Fail::Skipped(format!("backend {backend} unavailable: {cause}")))
        }
        // A CPU NTT variant this build knows but this CPU cannot run is unavailable here,
        // not a typo.
        Err(e @ FheError::UnknownNttVariant { .. }) => match (&selection, variant.as_deref()) {
            (Selection::Require(BackendKind::Cpu), Some(v)) if fhe_cpu::ntt::variants().iter().any(|k| k.name == v) => {
                Err(Fail::Skipped(format!(
                    "backend cpu:{v} unavailable: NTT variant `{v}` is not supported by this CPU"
                )))
            }
            _ => Err(Fail::Usage(e.to_string())),
        },
        Err(e) => Err(Fail::Failed(e.to_string())),
    }
}

/// The command's result from each scheme's verdict (`None`: the scheme did not run): the
/// first failure fails it; else it passes when a scheme ran; a command in which every
/// scheme that was asked for was skipped is skipped (exit 3), never a pass.
pub(crate) fn conclude<const N: usize>(verdicts: [Option<Verdict>; N]) -> Result<(), Fail> {
    let ran: Vec<Verdict> = verdicts.into_iter().flatten().collect();
    if let Some(Verdict::Failed(why)) = ran.iter().find(|v| matches!(v, Verdict::Failed(_))) {
        return Err(Fail::Failed(why.clone()));
    }
    match ran.iter().find(|v| matches!(v, Verdict::Passed)).or(ran.first()) {
        Some(Verdict::Skipped(why)) => Err(Fail::Skipped(why.clone())),
        _ => Ok(()),
    }
}

fn list_backends() -> Result<(), Fail> {
    use std::io::Write;
    let r = registry();
    let mut names: Vec<String> =
        fhe_cpu::ntt::variants().iter().filter(|v| (v.supported)()).map(|v| format!("cpu:{}", v.name)).collect();
    for kind in [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu].into_iter().filter(|&k| r.available(k)) {
        names.push(kind.name().to_string());
        // CUDA and HIP run the shared GPU backend: its NTT variants, by name.
        if kind != BackendKind::Wgpu {
            names.extend(fhe_gpu::GPU_NTT_VARIANTS.iter().map(|v| format!("{kind}:{v}")));
        }
    }
    let mut out = std::io::stdout().lock();
    for name in names {
        // A reader that stops early (`| head -n1`) is not an error.
        if let Err(e) = writeln!(out, "{name}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                break;
            }
            return Err(Fail::Failed(format!("stdout: {e}")));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Kat(c) => kat::run(c),
        Cmd::Equiv(c) => equiv::run(c),
        Cmd::Soak(a) => equiv::soak(a),
        Cmd::Bench(a) => bench::run(*a),
        Cmd::Recommend(c) => recommend::run(c),
        Cmd::ListBackends => list_backends(),
        Cmd::DeviceCheck(a) => device_check::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Failed(msg)) => {
            println!("FAILED: {msg}");
            ExitCode::from(EXIT_FAIL)
        }
        Err(Fail::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Fail::Skipped(cause)) => {
            println!("skipped: {cause}");
            ExitCode::from(EXIT_SKIPPED)
        }
    }
}
