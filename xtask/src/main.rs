//! `cargo xtask`: the developer tasks of the Lux FHE runtime (a thin CLI over `fhe-kat`).
//!
//! - `kat generate [--force] [--scheme all|bits|ckks]`: recompute the known-answer corpus
//!   on the CPU oracle and write `fhe-kat/corpus/<SET>.json` (and, for CKKS,
//!   `ckks-<preset>.json`); refuses to overwrite a differing corpus without `--force`,
//!   and prints which entries changed.
//! - `kat replay --backend B`: recompute every corpus entry on `B`, byte for byte (CKKS
//!   entries by their words' SHA-256).
//! - `equiv dispatch --backend B --seeds N [--params P] [--ckks-seeds M]`: every public
//!   surface on the oracle and on `B`, seeds `Seed::derive("lux-fhe-dispatch-equiv-v1", k)`;
//!   then CKKS (root `lux-fhe-dispatch-equiv-v1/ckks`, preset slots4096-scale40-depth2).
//! - `equiv sweep --backend B --seeds N [--params P] [--ckks-seeds M]`: KAT replay, then an
//!   orthogonal bootstrap sweep, seeds `Seed::derive("lux-fhe-backend-equiv-sweep-v1", k)`;
//!   then the CKKS replay and a mul+rotate sweep (root `.../ckks`).
//!   `--params` takes bit-scheme sets and CKKS presets (default: every set and the small
//!   CKKS preset); a backend without CKKS prints `skipped` lines for it, never a pass.
//! - `bench [--backend B] [--params P] [--iters N] [--peers]`, `bench chart`: see `bench.rs`.
//! - `recommend ntt --suite kernel|primitive --params P [--backend NAME]...`: screens
//!   the NTT variants and recommends one; see `recommend.rs`.
//! - `list-backends`: what this build can run here.
//! - `device-check [--dir D]`: the bundle for a GPU machine without Rust: release binary,
//!   KAT corpus, `run.sh` (equivalence gate first, then the CUDA and CPU benches).
//! - `soak [--gates 100000] [--params P] [--backend B]`: random chained gates, zero
//!   wrong results.
//!
//! `Seed::derive(root, k) = SHA-256(root || 0x00 || LE64(k))`; the full seed schedule is
//! documented in the `fhe-kat` crate.
//!
//! Exit codes: 0 pass; 1 mismatch, wrong result or error; 2 usage error (unknown
//! backend, parameter set or NTT variant); 3 the backend is not available here
//! (`skipped: <cause>`), which is never a pass. `RUST_LOG=fhe_kat=info` shows progress.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

mod bench;
mod bench_int;
mod device_check;
mod kat_ckks;
mod recommend;

use clap::{Args, Parser, Subcommand, ValueEnum};
use fhe_api::ckks::params::Preset;
use fhe_api::registry::{parse_selection, resolve, EnvVars};
use fhe_api::{Backend, BackendKind, Error as FheError, ParamSet, Registry, Selection};
use fhe_cpu::CpuBackend;
use fhe_kat::{Corpus, Mismatch, SetReport, KAT_ENTRIES_PER_SET};

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
    Kat(KatCmd),
    /// The equivalence gate: a backend against the CPU oracle.
    #[command(subcommand)]
    Equiv(EquivCmd),
    /// Random chained gates on one backend, every result checked.
    Soak(SoakArgs),
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

#[derive(Subcommand)]
enum KatCmd {
    /// Recompute the corpus on the CPU oracle and write it.
    Generate {
        /// Overwrite a corpus whose entries differ.
        #[arg(long)]
        force: bool,
        /// Which scheme's files to regenerate.
        #[arg(long, value_enum, default_value_t = Scheme::All)]
        scheme: Scheme,
        #[command(flatten)]
        corpus: CorpusArg,
    },
    /// Recompute every corpus entry on a backend and compare byte for byte.
    Replay {
        #[command(flatten)]
        backend: BackendArg,
        #[command(flatten)]
        corpus: CorpusArg,
    },
}

#[derive(Subcommand)]
enum EquivCmd {
    /// Every public surface, oracle against backend, N seeds per parameter set.
    Dispatch(EquivArgs),
    /// KAT replay, then an orthogonal N-seed bootstrap sweep.
    Sweep {
        #[command(flatten)]
        args: EquivArgs,
        #[command(flatten)]
        corpus: CorpusArg,
    },
}

/// The schemes of the corpus.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scheme {
    All,
    Bits,
    Ckks,
}

#[derive(Args)]
struct BackendArg {
    /// `cpu`, `cpu:<ntt-variant>`, `cuda`, `hip`, `wgpu` (or `auto`); defaults to
    /// `LUX_FHE_BACKEND`, else `cpu`.
    #[arg(long, env = "LUX_FHE_BACKEND", default_value = "cpu")]
    backend: String,
}

#[derive(Args)]
struct CorpusArg {
    /// The corpus directory (default: the reviewed corpus, `fhe-kat/corpus`).
    #[arg(long)]
    corpus: Option<PathBuf>,
}

impl CorpusArg {
    fn dir(&self) -> PathBuf {
        self.corpus.clone().unwrap_or_else(fhe_kat::corpus_dir)
    }
}

#[derive(Args)]
struct EquivArgs {
    #[command(flatten)]
    backend: BackendArg,
    /// Seeds per parameter set.
    #[arg(long, default_value_t = 1000)]
    seeds: u64,
    /// Parameter sets and CKKS presets (repeatable; default: every set and the CKKS
    /// preset slots4096-scale40-depth2).
    #[arg(long, value_parser = parse_equiv_set)]
    params: Vec<EquivSet>,
    /// Seeds per CKKS preset (default: `--seeds`).
    #[arg(long)]
    ckks_seeds: Option<u64>,
}

/// A bit-scheme parameter set or a CKKS preset.
#[derive(Clone, Copy)]
enum EquivSet {
    Bits(ParamSet),
    Ckks(Preset),
}

fn parse_equiv_set(s: &str) -> Result<EquivSet, String> {
    match (s.parse::<ParamSet>(), s.parse::<Preset>()) {
        (Ok(p), _) => Ok(EquivSet::Bits(p)),
        (_, Ok(p)) => Ok(EquivSet::Ckks(p)),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

impl EquivArgs {
    /// The bit-scheme sets and CKKS presets to run.
    fn chosen(&self) -> (Vec<ParamSet>, Vec<Preset>) {
        if self.params.is_empty() {
            return (ParamSet::ALL.to_vec(), fhe_kat::ckks::EQUIV_PRESETS.to_vec());
        }
        let bits = self.params.iter().filter_map(|p| if let EquivSet::Bits(p) = p { Some(*p) } else { None });
        let ckks = self.params.iter().filter_map(|p| if let EquivSet::Ckks(p) = p { Some(*p) } else { None });
        (bits.collect(), ckks.collect())
    }
}

#[derive(Args)]
struct SoakArgs {
    #[command(flatten)]
    backend: BackendArg,
    /// Gates to evaluate.
    #[arg(long, default_value_t = 100_000)]
    gates: u64,
    /// Parameter set.
    #[arg(long, value_parser = parse_params, default_value = "PN10QP27")]
    params: ParamSet,
    /// Soak seed index (`Seed::derive("lux-fhe-soak-v1", k)`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub(crate) fn parse_params(s: &str) -> Result<ParamSet, FheError> {
    s.parse()
}

/// Why a command did not pass.
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
    let usage = |e: FheError| Fail::Usage(e.to_string());
    let mut env = EnvVars::read();
    if parse_selection(Some(value)).map_err(usage)?.1.is_some() {
        env.ntt = None;
    }
    let (selection, options) = resolve(&env, Some(value)).map_err(usage)?;
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

pub(crate) fn print_mismatches<'a>(ms: impl IntoIterator<Item = &'a Mismatch>) {
    for m in ms {
        println!("{m}");
    }
}

fn print_set(what: &str, s: &SetReport, target: &str, oracle: &str) {
    println!(
        "{}: {}/{} byte-equal ({what}, {target} vs oracle {oracle}, {:.1} s)",
        s.params,
        s.passed,
        s.seeds,
        s.elapsed.as_secs_f64()
    );
    if s.mismatches.len() == fhe_kat::equiv::MAX_REPORTED {
        println!("  (mismatch list truncated to the first {})", fhe_kat::equiv::MAX_REPORTED);
    }
}

/// `total: P/P byte-equal` over every parameter set (seed 0's headline figure).
fn print_total(sets: &[SetReport]) {
    let passed: u64 = sets.iter().map(|s| s.passed).sum();
    let seeds: u64 = sets.iter().map(|s| s.seeds).sum();
    println!("total: {passed}/{seeds} byte-equal over {} parameter sets", sets.len());
}

fn kat_generate(force: bool, scheme: Scheme, dir: PathBuf) -> Result<(), Fail> {
    if scheme != Scheme::Ckks {
        kat_generate_bits(force, &dir)?;
    }
    if scheme != Scheme::Bits {
        kat_ckks::generate(force, &dir)?;
    }
    Ok(())
}

fn kat_generate_bits(force: bool, dir: &std::path::Path) -> Result<(), Fail> {
    let oracle = CpuBackend::oracle();
    let start = Instant::now();
    let new = fhe_kat::corpus::generate(&oracle, &ParamSet::ALL, KAT_ENTRIES_PER_SET)?;
    let old = Corpus::load(dir)?;
    let changes = old.diff(&new);
    println!("generated {} entries on {} in {:.1} s", new.len(), oracle.name(), start.elapsed().as_secs_f64());
    if changes.is_empty() {
        println!("corpus {} is up to date ({} entries)", dir.display(), new.len());
        return Ok(());
    }
    for c in &changes {
        println!("  {c}");
    }
    if !old.is_empty() && !force {
        return Err(Fail::Failed(format!(
            "{} entries differ from {}; refusing to overwrite without --force",
            changes.len(),
            dir.display()
        )));
    }
    new.write(dir)?;
    println!("wrote {} entries to {}", new.len(), dir.display());
    Ok(())
}

fn kat_replay(backend_name: &str, dir: PathBuf) -> Result<(), Fail> {
    let b = backend(backend_name)?;
    let corpus = load_corpus(&dir)?;
    let r = fhe_kat::replay(b.as_ref(), &corpus)?;
    print_mismatches(&r.mismatches);
    println!("KAT {}/{} byte-equal ({}, {:.1} s)", r.passed, r.entries, r.backend, r.elapsed.as_secs_f64());
    let ckks = kat_ckks::replay(b, &dir)?;
    let bits = if r.ok() {
        Ok(())
    } else {
        Err(Fail::Failed(format!("{} of {} KAT entries differ", r.entries - r.passed, r.entries)))
    };
    ckks.with_bits(Some(bits))
}

fn load_corpus(dir: &std::path::Path) -> Result<Corpus, Fail> {
    let c = Corpus::load(dir)?;
    if c.is_empty() {
        return Err(Fail::Failed(format!("no KAT corpus in {} (run `cargo xtask kat generate`)", dir.display())));
    }
    Ok(c)
}

fn equiv_dispatch(a: EquivArgs) -> Result<(), Fail> {
    let b = backend(&a.backend.backend)?;
    let oracle = CpuBackend::oracle();
    let start = Instant::now();
    let (sets, presets) = a.chosen();
    let mut bits = None;
    if !sets.is_empty() {
        let r = fhe_kat::dispatch(&oracle, b.as_ref(), &sets, a.seeds)?;
        print_mismatches(r.mismatches());
        for s in &r.sets {
            print_set("dispatch", s, &r.target, &r.oracle);
        }
        print_total(&r.sets);
        bits = Some(if r.ok() { Ok(()) } else { Err(Fail::Failed("dispatch: mismatches found".into())) });
    }
    let ckks = kat_ckks::dispatch(b, &presets, a.ckks_seeds.unwrap_or(a.seeds))?;
    println!("dispatch wall time {:.1} s", start.elapsed().as_secs_f64());
    ckks.with_bits(bits)
}

fn equiv_sweep(a: EquivArgs, dir: PathBuf) -> Result<(), Fail> {
    let b = backend(&a.backend.backend)?;
    let oracle = CpuBackend::oracle();
    let start = Instant::now();
    // A scheme runs (its KAT replay, then its seed sweep) when `--params` names one of its
    // sets, or by default.
    let (sets, presets) = a.chosen();
    let mut bits = None;
    if !sets.is_empty() {
        let corpus = load_corpus(&dir)?;
        let r = fhe_kat::sweep(&oracle, b.as_ref(), &corpus, &sets, a.seeds)?;
        print_mismatches(r.mismatches());
        let secs = r.kat.elapsed.as_secs_f64();
        println!("KAT {}/{} byte-equal ({}, {secs:.1} s)", r.kat.passed, r.kat.entries, r.target);
        for s in &r.sets {
            print_set("bootstrap sweep", s, &r.target, &r.oracle);
        }
        print_total(&r.sets);
        bits = Some(if r.ok() { Ok(()) } else { Err(Fail::Failed("sweep: mismatches found".into())) });
    }
    let ckks = kat_ckks::sweep(b, &dir, &presets, a.ckks_seeds.unwrap_or(a.seeds))?;
    println!("sweep wall time {:.1} s", start.elapsed().as_secs_f64());
    ckks.with_bits(bits)
}

fn soak(a: SoakArgs) -> Result<(), Fail> {
    let b = backend(&a.backend.backend)?;
    let r = fhe_kat::soak(b.as_ref(), a.params, a.gates, a.seed)?;
    let counts = r.by_gate.iter().map(|(g, n)| format!("{g} {n}")).collect::<Vec<_>>().join(", ");
    let secs = r.elapsed.as_secs_f64();
    println!(
        "soak {} on {}: {} gates, {} wrong ({counts}) in {secs:.1} s ({:.2} ms/gate)",
        r.params,
        r.backend,
        r.gates,
        r.wrong,
        1e3 * secs / r.gates.max(1) as f64
    );
    if r.ok() {
        Ok(())
    } else {
        Err(Fail::Failed(format!("soak: {} wrong results", r.wrong)))
    }
}

fn list_backends() -> Result<(), Fail> {
    use std::io::Write;
    let r = registry();
    let mut names: Vec<String> =
        fhe_cpu::ntt::variants().iter().filter(|v| (v.supported)()).map(|v| format!("cpu:{}", v.name)).collect();
    names.extend(
        [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu]
            .into_iter()
            .filter(|&k| r.available(k))
            .map(|k| k.name().to_string()),
    );
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
        Cmd::Kat(KatCmd::Generate { force, scheme, corpus }) => kat_generate(force, scheme, corpus.dir()),
        Cmd::Kat(KatCmd::Replay { backend, corpus }) => kat_replay(&backend.backend, corpus.dir()),
        Cmd::Equiv(EquivCmd::Dispatch(a)) => equiv_dispatch(a),
        Cmd::Equiv(EquivCmd::Sweep { args, corpus }) => equiv_sweep(args, corpus.dir()),
        Cmd::Soak(a) => soak(a),
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
