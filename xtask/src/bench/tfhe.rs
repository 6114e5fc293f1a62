//! `bench` of the bit scheme: the equivalence gate (`equiv dispatch` of the sets), then
//! the suite's rows, the integer rows, and with `--peers` TFHE-rs's and tfhe-ntt's.

use fhe_api::{Backend, ParamSet};
use fhe_bench::{GateState, Iterations, Operation, Plan, SuiteConfig};
use fhe_kat::tfhe::Tfhe;

use super::int::{self, IntCases};
use super::{workspace_root, RunArgs};
use crate::{backend, Fail};

pub(super) fn measure(a: RunArgs) -> Result<(), Fail> {
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
    let gate = super::gate::run::<Tfhe>(&target, &sets, a.gate_seeds)?;
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
    report.rows.extend(int::measure(&target, &sets, &int_cases, &mut progress)?);
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
