//! `bench --ckks <preset>...`: per preset, the CKKS equivalence gate (`equiv dispatch` of
//! the preset, [`super::gate`]), then our rows (or, with `--peers`, ours and OpenFHE's
//! alternated), one file each.

use std::sync::Arc;

use fhe_api::Backend;
use fhe_bench::ops::ckks::{self, CkksFixture, CkksOp, CkksPlan};
use fhe_bench::peers::openfhe::OpenFhe;
use fhe_bench::GateState;
use fhe_kat::ckks::Ckks;

use super::{workspace_root, RunArgs};
use crate::{backend, Fail};

/// Measures every preset of `--ckks`.
pub(super) fn measure(a: RunArgs) -> Result<(), Fail> {
    let failed = |e: fhe_bench::Error| Fail::Failed(e.to_string());
    let target: Arc<dyn Backend> = backend(&a.backend)?;
    if !a.params.is_empty() {
        return Err(Fail::Usage("--params names bit-scheme sets; with --ckks the presets are the parameters".into()));
    }
    if a.ckks_rounds == 0 || a.runs == 0 || a.ckks_iters == Some(0) || a.ckks_keygen_iters == Some(0) {
        return Err(Fail::Usage("--ckks-rounds, --runs and the CKKS iterations must be at least 1".into()));
    }
    let ops: Vec<CkksOp> = if a.ckks_ops.is_empty() {
        // With the peer, the operations it has a counterpart for.
        CkksOp::ALL.into_iter().filter(|o| !a.peers || o.has_peer()).collect()
    } else {
        a.ckks_ops
            .iter()
            .map(|o| o.parse::<CkksOp>().map_err(|e| Fail::Usage(e.to_string())))
            .collect::<Result<_, _>>()?
    };
    if let Some(op) = ops.iter().find(|o| a.peers && !o.has_peer()) {
        return Err(Fail::Usage(format!("{op} has no OpenFHE counterpart: leave it out of a --peers run")));
    }
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
        let gate = super::gate::run::<Ckks>(&target, &[preset], a.gate_seeds)?;
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
