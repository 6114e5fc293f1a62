//! `cargo xtask bench`: the equivalence gate first, then the measurements, written as
//! JSON under `bench/results/<lane>/` and printed as a table; `bench chart` renders the
//! result files; `--peers` (cargo feature `peers` of xtask) times TFHE-rs and tfhe-ntt
//! in the same run and prints our time over theirs, then times our gates and TFHE-rs's,
//! and our NTT kernel and tfhe-ntt, alternately, round by round (`--interleave-rounds`,
//! `--interleave-calls`, `--interleave-ntt-calls`), so that a drift in the machine's
//! speed cannot sit between the two sides. The integer rows (`int_<op>_u<width>`,
//! `--int-ops`, `--int-widths`, `--int-mul-widths`) come from `bench_int.rs`.
//!
//! `--ckks <preset>` (repeatable) measures CKKS instead (`fhe_bench::ckks`): keygen,
//! encrypt, decrypt, mul+relin, rescale, rotate and 4 hoisted rotations, one thread, with
//! the precision in bits in each row, after the CKKS equivalence gate; one file per
//! preset under `bench/results/ckks/` (`ckks.rs`). With `--peers` it starts OpenFHE's
//! Python worker (`fhe-bench/peers/openfhe/worker.py`, the python of `scripts/openfhe-setup`;
//! no cargo feature needed) and times ours and theirs alternately, round by round.
//!
//! `--ckks-bootstrap uniform,sparse` measures CKKS bootstrapping at the peer's chain
//! (`ckks_boot.rs`); with `--peers`, alternated with OpenFHE's `EvalBootstrap`.
//!
//! `--ckks-fe [functions]` runs seed 2's FE functional bootstrapping table (`ckks_fe.rs`);
//! with `--peers`, alternated with OpenFHE's `EvalFEFuncBootstrap`.
//!
//! `bench memory` prints the device memory of CKKS keys and ciphertexts per preset,
//! computed from the GPU backend's layout (`memory.rs`).
//!
//! The bit scheme's rows are `tfhe.rs`'s.

mod ckks;
mod ckks_boot;
mod ckks_fe;
mod gate;
mod int;
mod memory;
mod tfhe;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use fhe_api::ckks::params::Preset;
use fhe_api::ParamSet;
use fhe_bench::ops::ckks_boot::BootSecret;
use fhe_schemes::ckks::{DiagonalForm, FeFunction};

use crate::{parse_params, Fail};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    sub: Option<BenchSub>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum BenchSub {
    /// Render every result file under bench/results into one SVG chart.
    Chart {
        /// Output file.
        #[arg(long, default_value = "bench/chart.svg")]
        out: PathBuf,
        /// Directory of result files.
        #[arg(long, default_value = "bench/results")]
        results: PathBuf,
    },
    /// Device memory of CKKS keys and ciphertexts per preset, computed from the GPU
    /// backend's layout (no device needed): a markdown table.
    Memory {
        /// Presets (repeatable; default every preset).
        #[arg(long, value_parser = parse_preset)]
        ckks: Vec<Preset>,
        /// Also write the table to this file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args)]
struct RunArgs {
    /// `cpu`, `cpu:<ntt-variant>`, `cuda`, `hip`, `wgpu`; defaults to `LUX_FHE_BACKEND`,
    /// else `cpu`.
    #[arg(long, env = "LUX_FHE_BACKEND", default_value = "cpu")]
    backend: String,
    /// Parameter sets (repeatable; default PN10QP27).
    #[arg(long, value_parser = parse_params)]
    params: Vec<ParamSet>,
    /// Results go to bench/results/<lane>/ (default: the backend kind, e.g. `cpu`).
    #[arg(long)]
    lane: Option<String>,
    /// Override every iteration count (defaults: NTT 200, key switch 100, bootstrap 30).
    #[arg(long)]
    iters: Option<usize>,
    #[arg(long)]
    ntt_iters: Option<usize>,
    #[arg(long)]
    ks_iters: Option<usize>,
    #[arg(long)]
    bootstrap_iters: Option<usize>,
    /// Runs aggregated per operation.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Operations (repeatable; default all), e.g. `bootstrap`, `ntt_forward`, `gate_and`.
    #[arg(long = "op")]
    ops: Vec<String>,
    /// Seeds per parameter set (or CKKS preset) of the equivalence gate that runs first:
    /// `equiv dispatch` of what is measured.
    #[arg(long, default_value_t = 2)]
    gate_seeds: u64,
    /// Also time TFHE-rs and tfhe-ntt in this run (needs `--features peers`).
    #[arg(long)]
    peers: bool,
    /// With `--peers`: rounds in which our gates and TFHE-rs's (and, with a `cpu`
    /// backend, our NTT kernel and tfhe-ntt) are timed alternately, the side that goes
    /// first alternating (0: no interleaved rows).
    #[arg(long, default_value_t = 10)]
    interleave_rounds: usize,
    /// With `--peers`: timed calls per side and round of the interleaved gates.
    #[arg(long, default_value_t = 5)]
    interleave_calls: usize,
    /// With `--peers`: timed calls per side and round of the interleaved NTT kernels.
    #[arg(long, default_value_t = 50)]
    interleave_ntt_calls: usize,
    /// Where result files go (default: `<workspace>/bench/results`); the lane folder is
    /// made below it.
    #[arg(long)]
    results_dir: Option<PathBuf>,
    /// Polynomials per NTT call (repeatable, one row each; GPUs want 1024 or more).
    #[arg(long = "ntt-batch")]
    ntt_batch: Vec<usize>,
    /// Ciphertexts per `bootstrap_batch` call for the throughput row.
    #[arg(long)]
    bootstrap_batch: Option<usize>,
    /// Integer operations timed at every `--int-widths` (`add`, `sub`, `mul_low`,
    /// `mul_full`, `eq`, `lt`, `le`, `min`, `max`, `select`); comma-separated. Default
    /// `add,lt`, or none when `--op` narrows the run.
    #[arg(long, value_delimiter = ',')]
    int_ops: Option<Vec<String>>,
    /// Operand widths (bits) for `--int-ops`; comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "8,16,32")]
    int_widths: Vec<usize>,
    /// Widths at which `mul_low` is timed as well (`none`: no multiplication rows).
    #[arg(long, value_delimiter = ',', default_value = "8")]
    int_mul_widths: Vec<String>,
    /// Timed calls per run of each integer operation (one warm-up call per run).
    #[arg(long, default_value_t = 3)]
    int_iters: usize,
    /// Skip the integer rows.
    #[arg(long)]
    no_int: bool,
    /// Measure CKKS on this preset instead of the bit scheme (repeatable), e.g.
    /// `slots32768-scale40-depth34`; results go to lane `ckks` unless `--lane` says
    /// otherwise. With `--peers`: alternated with OpenFHE.
    #[arg(long, value_parser = parse_preset)]
    ckks: Vec<Preset>,
    /// CKKS: timed calls per operation (default by ring size: N=2^16 10, 2^15 20,
    /// 2^14 30, 2^13 50; `--iters` also sets it).
    #[arg(long)]
    ckks_iters: Option<usize>,
    /// CKKS: timed key generations (default: N>=2^15 3, else 5).
    #[arg(long)]
    ckks_keygen_iters: Option<usize>,
    /// CKKS operations (comma-separated; default all): keygen, encrypt, decrypt,
    /// mul_relin, rescale, rotate, hoisted4.
    #[arg(long, value_delimiter = ',')]
    ckks_ops: Vec<String>,
    /// CKKS with `--peers`: rounds alternated with OpenFHE (each side's calls per round:
    /// the iterations divided by the rounds, rounded up; key generation one).
    #[arg(long, default_value_t = 5)]
    ckks_rounds: usize,
    /// CKKS: run our calls on the machine's rayon pool instead of one thread.
    #[arg(long)]
    ckks_all_threads: bool,
    /// CKKS with `--peers`: the python that runs OpenFHE's worker (default:
    /// `$LUX_OPENFHE_PYTHON`, else target/openfhe-venv/bin/python from
    /// scripts/openfhe-setup).
    #[arg(long)]
    openfhe_python: Option<PathBuf>,
    /// CKKS bootstrapping at the peer's chain (`slots32768-scale59-depth22`, level
    /// budget {3, 3}) with these secrets, comma-separated: `uniform` (OpenFHE:
    /// UNIFORM_TERNARY), `sparse` (over our 128-bit bound: measured for comparison only),
    /// `encapsulated` (ours uniform, as `uniform`; OpenFHE: SPARSE_ENCAPSULATED). With
    /// `--peers`: alternated with OpenFHE's `EvalBootstrap`. Results go to lane
    /// `ckks-bootstrap`.
    #[arg(long, value_delimiter = ',', value_parser = parse_secret)]
    ckks_bootstrap: Vec<BootSecret>,
    /// Bootstrapping: rounds (with `--peers`, alternated; each side's round sets up,
    /// bootstraps and drops everything).
    #[arg(long, default_value_t = 3)]
    ckks_boot_rounds: usize,
    /// Bootstrapping: timed bootstraps per side and round.
    #[arg(long, default_value_t = 1)]
    ckks_boot_calls: usize,
    /// Bootstrapping and FE (`--ckks-fe`, the first function's): discarded bootstraps
    /// before the timed ones, per side and round.
    #[arg(long, default_value_t = 0)]
    ckks_boot_warmup: usize,
    /// Bootstrapping: memory (GiB) that must be available before each side's round
    /// (at N = 2^16 each side holds about 10 GB); 0: no check.
    #[arg(long, default_value_t = 12.0)]
    ckks_boot_min_free_gib: f64,
    /// Bootstrapping: how long to wait for that memory before giving up (seconds).
    #[arg(long, default_value_t = 600)]
    ckks_boot_max_wait_s: u64,
    /// FE functional bootstrapping, seed 2's table: every function at every
    /// configuration that fits the machine (`--ckks-fe`), or these functions,
    /// comma-separated (identity, exp, tanh, sigmoid, gelu). With `--peers`: alternated
    /// with OpenFHE's `EvalFEFuncBootstrap`. Rounds and memory as bootstrapping's flags.
    /// Results go to lane `ckks-fe`.
    #[arg(long, num_args = 0.., value_delimiter = ',', value_parser = parse_fe_function)]
    ckks_fe: Option<Vec<FeFunction>>,
    /// FE functional bootstrapping: only these configurations (names as the table prints
    /// them, e.g. fe-n16-scale59-after1), comma-separated.
    #[arg(long, value_delimiter = ',')]
    ckks_fe_configs: Vec<String>,
    /// Bootstrapping and FE: how our transforms keep their diagonals: `auto` (whole
    /// where the machine holds them so, compact where not), `evaluation` (whole) or
    /// `compact` (the integers alone, transformed at each use; the same words).
    #[arg(long, default_value = "auto", value_parser = parse_diagonals)]
    ckks_diagonals: Diagonals,
}

/// `--ckks-diagonals`: `None` is `auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Diagonals(pub Option<DiagonalForm>);

fn parse_diagonals(s: &str) -> Result<Diagonals, String> {
    match s {
        "auto" => Ok(Diagonals(None)),
        "evaluation" => Ok(Diagonals(Some(DiagonalForm::Evaluation))),
        "compact" => Ok(Diagonals(Some(DiagonalForm::Compact))),
        _ => Err(format!("'{s}': one of auto, evaluation, compact")),
    }
}

fn parse_fe_function(s: &str) -> Result<FeFunction, String> {
    s.parse::<FeFunction>().map_err(|e| e.to_string())
}

fn parse_secret(s: &str) -> Result<BootSecret, String> {
    s.parse::<BootSecret>().map_err(|e| e.to_string())
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    // The error lists the presets.
    s.parse::<Preset>().map_err(|e| e.to_string())
}

pub fn run(args: BenchArgs) -> Result<(), Fail> {
    match args.sub {
        Some(BenchSub::Chart { out, results }) => {
            let files = fhe_bench::result_files(&results).map_err(|e| Fail::Failed(e.to_string()))?;
            if files.is_empty() {
                return Err(Fail::Failed(format!("no result files under {}", results.display())));
            }
            fhe_bench::render_chart(&files, &out).map_err(|e| Fail::Failed(e.to_string()))?;
            println!("chart of {} result files written to {}", files.len(), out.display());
            Ok(())
        }
        Some(BenchSub::Memory { ckks, out }) => memory::run(ckks, out),
        None if args.run.ckks_fe.is_some() => ckks_fe::measure(args.run),
        None if !args.run.ckks_bootstrap.is_empty() => ckks_boot::measure(args.run),
        None if !args.run.ckks.is_empty() => ckks::measure(args.run),
        None => tfhe::measure(args.run),
    }
}

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}
