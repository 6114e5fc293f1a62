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
//! preset under `bench/results/ckks/`. With `--peers` it starts OpenFHE's Python worker
//! (`fhe-bench/peers/openfhe_ckks.py`, the python of `scripts/openfhe-setup`; no cargo
//! feature needed) and times ours and theirs alternately, round by round.

use std::path::PathBuf;

use std::sync::Arc;

use clap::{Args, Subcommand};
use fhe_api::ckks::params::Preset;
use fhe_api::{Backend, ParamSet};
use fhe_bench::ckks::{self, openfhe::OpenFhe, CkksFixture, CkksOp, CkksPlan};
use fhe_bench::{EquivalenceGate, GateState, Iterations, Operation, Plan, SuiteConfig};
use fhe_cpu::CpuBackend;

use crate::bench_int::{self, IntCases};
use crate::{backend, parse_params, Fail};

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
    /// Seeds per parameter set for the equivalence gate that runs first.
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
        None if !args.run.ckks.is_empty() => measure_ckks(args.run),
        None => measure(args.run),
    }
}

/// `bench --ckks <preset>...`: per preset, the CKKS gate, then our rows (or, with
/// `--peers`, ours and OpenFHE's alternated), one file each.
fn measure_ckks(a: RunArgs) -> Result<(), Fail> {
    let failed = |e: fhe_bench::Error| Fail::Failed(e.to_string());
    let target: Arc<dyn Backend> = backend(&a.backend)?;
    if !a.params.is_empty() {
        return Err(Fail::Usage("--params names bit-scheme sets; with --ckks the presets are the parameters".into()));
    }
    if a.ckks_rounds == 0 || a.runs == 0 || a.ckks_iters == Some(0) || a.ckks_keygen_iters == Some(0) {
        return Err(Fail::Usage("--ckks-rounds, --runs and the CKKS iterations must be at least 1".into()));
    }
    let ops = if a.ckks_ops.is_empty() {
        CkksOp::ALL.to_vec()
    } else {
        a.ckks_ops
            .iter()
            .map(|o| o.parse::<CkksOp>().map_err(|e| Fail::Usage(e.to_string())))
            .collect::<Result<_, _>>()?
    };
    // The peer first: a missing venv is said before anything is measured.
    let mut peer = if a.peers {
        let python = a.openfhe_python.clone().unwrap_or_else(|| OpenFhe::default_python(&workspace_root()));
        let peer = OpenFhe::spawn(&python).map_err(|e| Fail::Usage(e.to_string()))?;
        println!("peer: OpenFHE {} ({})", peer.info["version"], python.display());
        Some(peer)
    } else {
        None
    };
    let lane = a.lane.clone().unwrap_or_else(|| "ckks".to_string());
    let dir = a.results_dir.clone().unwrap_or_else(|| workspace_root().join("bench/results"));
    let oracle: Arc<dyn Backend> = Arc::new(CpuBackend::oracle());
    for &preset in &a.ckks {
        let mut plan = CkksPlan::for_preset(preset);
        plan.operations = ops.clone();
        // One run by default (the bit suite's `--runs 3` would triple a 2^16 run).
        plan.runs = if a.peers || a.runs == 3 { 1 } else { a.runs };
        plan.one_thread = !a.ckks_all_threads;
        if let Some(n) = a.ckks_iters.or(a.iters) {
            plan.iterations = n;
        }
        if let Some(n) = a.ckks_keygen_iters {
            plan.keygen_iterations = n;
        }
        // The equivalence gate runs first: a backend that fails it reports no numbers.
        let gate = ckks::gate(oracle.clone(), target.clone(), preset).map_err(failed)?;
        println!("equivalence gate: {:?}: {}", gate.status, gate.detail.as_deref().unwrap_or(""));
        let gate_failed = gate.status == GateState::Failed;
        let mut rows = Vec::new();
        let mut comparison = None;
        if !gate_failed {
            let mut fixture = CkksFixture::new(target.clone(), preset, ckks::SEED_ROOT).map_err(failed)?;
            match peer.as_mut() {
                None => {
                    let mut progress = fhe_bench::stderr_progress(plan.total_calls());
                    rows = ckks::run_ckks(&mut fixture, &plan, &mut progress).map_err(failed)?;
                }
                Some(peer) => {
                    let reply = peer.setup_for(preset).map_err(failed)?;
                    println!("peer set up: log QP {}, dnum {}", reply["log_qp"], reply["dnum"]);
                    let calls = plan.calls_per_round(a.ckks_rounds);
                    let mut progress = fhe_bench::stderr_progress(a.ckks_rounds * plan.operations.len());
                    let (ours, theirs) =
                        ckks::run_alternated(&mut fixture, peer, &plan, a.ckks_rounds, calls, &mut progress)
                            .map_err(failed)?;
                    comparison = Some(ckks::format_comparison(&ours, &theirs));
                    rows.extend(ours);
                    rows.extend(theirs);
                }
            }
        }
        let mut report = fhe_bench::Report::new(
            &lane,
            &target.name(),
            fhe_bench::Environment::capture(Some(target.as_ref())),
            gate,
            rows,
        );
        if !report.rows.is_empty() {
            report.params = preset.name().to_string();
        }
        let path = fhe_bench::write_results(&dir, &lane, &report).map_err(failed)?;
        println!("{}", fhe_bench::format_table(&report));
        if let Some(table) = comparison {
            println!(
                "ours over OpenFHE's, {} rounds alternated, one thread each (below 1.00x we are faster; \
                 OpenFHE is the PyPI wheel, a portable build without AVX):",
                a.ckks_rounds
            );
            println!("{table}");
        }
        println!("results written to {}", path.display());
        if gate_failed {
            return Err(Fail::Failed(format!(
                "{} failed the CKKS equivalence gate: no numbers reported",
                target.name()
            )));
        }
    }
    Ok(())
}

fn measure(a: RunArgs) -> Result<(), Fail> {
    if a.peers && !cfg!(feature = "peers") {
        // Say so before measuring anything, not after a long run.
        peers(&[], &SuiteConfig::default())?;
    }
    if a.peers && a.interleave_rounds > 0 && (a.interleave_calls == 0 || a.interleave_ntt_calls == 0) {
        return Err(Fail::Usage(
            "--interleave-calls and --interleave-ntt-calls must be at least 1 (or --interleave-rounds 0)".into(),
        ));
    }
    let target = backend(&a.backend)?;
    let sets = if a.params.is_empty() { vec![ParamSet::PN10QP27] } else { a.params.clone() };
    let mut cfg = SuiteConfig::default();
    if let Some(n) = a.iters {
        cfg.iterations = Iterations::uniform(n);
    }
    if let Some(n) = a.ntt_iters {
        cfg.iterations.ntt = n;
    }
    if let Some(n) = a.ks_iters {
        cfg.iterations.key_switch = n;
    }
    if let Some(n) = a.bootstrap_iters {
        cfg.iterations.bootstrap = n;
    }
    cfg.runs = a.runs;
    if !a.ntt_batch.is_empty() {
        cfg.ntt_batch_sizes = a.ntt_batch.clone();
    }
    if let Some(n) = a.bootstrap_batch {
        cfg.bootstrap_batch_size = n;
    }
    if !a.ops.is_empty() {
        cfg.operations = a
            .ops
            .iter()
            .map(|o| o.parse::<Operation>().map_err(|e| Fail::Usage(e.to_string())))
            .collect::<Result<_, _>>()?;
    }

    // The equivalence gate runs first: a backend that fails it reports no numbers.
    let oracle = crate::kat::oracle();
    let gate = fhe_kat::dispatch::<fhe_kat::tfhe::Tfhe>(&oracle, &target, &sets, a.gate_seeds)?;
    for m in gate.mismatches() {
        println!("{m}");
    }
    let gate = if gate.ok() {
        println!("equivalence gate: {} seeds per set byte-equal with {}", a.gate_seeds, oracle.name());
        EquivalenceGate::new(GateState::Passed, Some(format!("dispatch, {} seeds per set", a.gate_seeds)))
    } else {
        EquivalenceGate::new(GateState::Failed, Some("dispatch mismatches".into()))
    };
    let failed = gate.status == GateState::Failed;
    let lane = a.lane.clone().unwrap_or_else(|| target.kind().name().to_string());
    // Integer rows: by default with a full run; `--op` narrows the run to what it names.
    let int_ops = match (&a.int_ops, a.ops.is_empty()) {
        (Some(ops), _) => ops.clone(),
        (None, true) => vec!["add".to_string(), "lt".to_string()],
        (None, false) => Vec::new(),
    };
    let int_cases = if a.no_int || int_ops.is_empty() {
        IntCases::new(&[], &[], &[], Plan { iterations: 1, warmup: 0, runs: 1 })?
    } else {
        let plan = Plan { iterations: a.int_iters, warmup: 1, runs: 1 };
        let mul_widths = a
            .int_mul_widths
            .iter()
            .filter(|w| !w.is_empty() && w.as_str() != "none")
            .map(|w| w.parse::<usize>().map_err(|_| Fail::Usage(format!("--int-mul-widths: `{w}` is not a width"))))
            .collect::<Result<Vec<_>, _>>()?;
        IntCases::new(&int_ops, &a.int_widths, &mul_widths, plan)?
    };
    let total = (cfg.total_calls() + int_cases.total_calls()) * sets.len();
    let mut progress = fhe_bench::stderr_progress(total);
    let mut report = fhe_bench::run_report(target.as_ref(), &sets, &cfg, &lane, gate, &mut progress)
        .map_err(|e| Fail::Failed(e.to_string()))?;
    if failed {
        return Err(Fail::Failed(format!("{} failed the equivalence gate: no numbers reported", target.name())));
    }
    report.rows.extend(bench_int::measure(&target, &sets, &int_cases, &mut progress)?);
    // Peers run in the same process right after our rows; their rows go into the same
    // file (`backend` tells them apart), so the ratios can be recomputed from it.
    let ratios = if a.peers {
        let variant = target.name().strip_prefix("cpu:").map(str::to_string);
        // Our NTT kernel in the peers' own loop, on our side of the ratios.
        if let Some(variant) = &variant {
            report.rows.extend(own_ntt_kernels(&sets, &cfg, variant)?);
        }
        let rows = peers(&sets, &cfg)?;
        let ratios = fhe_bench::ratios(&report.rows, &rows);
        report.rows.extend(rows);
        // The interleaved rows pair only with each other: their ratio is the one that a
        // drift between the suite's minute and the peers' minute cannot move.
        let mut interleaved = Vec::new();
        if a.interleave_rounds > 0 {
            let mut pairs = Vec::new();
            if let Some(variant) = &variant {
                let rounds = (a.interleave_rounds, a.interleave_ntt_calls);
                pairs.push((
                    "NTT kernels interleaved with tfhe-ntt",
                    rounds,
                    interleaved_ntt(&sets, &cfg, variant, rounds)?,
                ));
            }
            if sets.contains(&ParamSet::PN10QP27) {
                let rounds = (a.interleave_rounds, a.interleave_calls);
                pairs.push((
                    "gates interleaved with TFHE-rs",
                    rounds,
                    interleaved_gates(target.as_ref(), &cfg, rounds)?,
                ));
            }
            for (title, rounds, (ours, theirs)) in pairs {
                let ratios = fhe_bench::ratios(&ours, &theirs);
                report.rows.extend(ours);
                report.rows.extend(theirs);
                if !ratios.is_empty() {
                    interleaved.push((title, rounds, ratios));
                }
            }
        }
        Some((ratios, interleaved))
    } else {
        None
    };
    let dir = a.results_dir.clone().unwrap_or_else(|| workspace_root().join("bench/results"));
    let path = fhe_bench::write_results(&dir, &lane, &report).map_err(|e| Fail::Failed(e.to_string()))?;
    println!("{}", fhe_bench::format_table(&report));
    if let Some((ratios, interleaved)) = ratios {
        println!("ours over theirs (median; below 1.00x we are faster):");
        println!("{}", fhe_bench::format_ratios(&ratios));
        for (title, (rounds, calls), ratios) in interleaved {
            println!(
                "{title}, {rounds} rounds of {calls} calls (median over all rounds; per-round range in the rows' notes):"
            );
            println!("{}", fhe_bench::format_ratios(&ratios));
        }
    }
    println!("results written to {}", path.display());
    Ok(())
}

#[cfg(feature = "peers")]
fn peers(sets: &[ParamSet], cfg: &SuiteConfig) -> Result<Vec<fhe_bench::Row>, Fail> {
    fhe_bench::peers::run_peers(sets, cfg, &mut fhe_bench::no_progress()).map_err(|e| Fail::Failed(e.to_string()))
}

#[cfg(feature = "peers")]
fn own_ntt_kernels(sets: &[ParamSet], cfg: &SuiteConfig, variant: &str) -> Result<Vec<fhe_bench::Row>, Fail> {
    fhe_bench::peers::run_own_ntt_kernels(sets, cfg, variant).map_err(|e| Fail::Failed(e.to_string()))
}

/// Our rows and the peer's, interleaved.
type Paired = (Vec<fhe_bench::Row>, Vec<fhe_bench::Row>);

#[cfg(feature = "peers")]
fn interleaved_gates(target: &dyn Backend, cfg: &SuiteConfig, (rounds, calls): (usize, usize)) -> Result<Paired, Fail> {
    fhe_bench::peers::run_interleaved_gates(target, cfg, rounds, calls).map_err(|e| Fail::Failed(e.to_string()))
}

#[cfg(feature = "peers")]
fn interleaved_ntt(
    sets: &[ParamSet],
    cfg: &SuiteConfig,
    variant: &str,
    (rounds, calls): (usize, usize),
) -> Result<Paired, Fail> {
    fhe_bench::peers::run_interleaved_ntt(sets, cfg, variant, rounds, calls).map_err(|e| Fail::Failed(e.to_string()))
}

#[cfg(not(feature = "peers"))]
fn interleaved_gates(_: &dyn Backend, _: &SuiteConfig, _: (usize, usize)) -> Result<Paired, Fail> {
    Ok((Vec::new(), Vec::new()))
}

#[cfg(not(feature = "peers"))]
fn interleaved_ntt(_: &[ParamSet], _: &SuiteConfig, _: &str, _: (usize, usize)) -> Result<Paired, Fail> {
    Ok((Vec::new(), Vec::new()))
}

#[cfg(not(feature = "peers"))]
fn own_ntt_kernels(_: &[ParamSet], _: &SuiteConfig, _: &str) -> Result<Vec<fhe_bench::Row>, Fail> {
    Ok(Vec::new())
}

#[cfg(not(feature = "peers"))]
fn peers(_: &[ParamSet], _: &SuiteConfig) -> Result<Vec<fhe_bench::Row>, Fail> {
    Err(Fail::Usage(
        "--peers needs the peers feature: cargo run --release -p xtask --features peers -- bench --peers".into(),
    ))
}

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}
