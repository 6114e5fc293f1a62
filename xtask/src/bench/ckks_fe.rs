//! `bench --ckks-fe [functions]`: seed 2's FE functional bootstrapping table
//! (`fhe_bench::ops::ckks_fe`): every function at every configuration of
//! [`seed_two_chains`], each refused configuration printed with its reason (over the
//! bound, or beyond the machine's memory), the rest measured, with `--peers` alternated
//! with OpenFHE's `EvalFEFuncBootstrap`; one file under `bench/results/ckks-fe/`.

use std::sync::Arc;
use std::time::Duration;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;
use fhe_bench::ops::ckks_fe::{self, FeCase, FePeer, FePlan};
use fhe_bench::peers::openfhe::OpenFhe;
use fhe_bench::peers::openfhe_fe::OpenFheFe;
use fhe_bench::GateState;
use fhe_kat::ckks::Ckks;
use fhe_schemes::ckks::circuits::seed_two_chains;
use fhe_schemes::ckks::{FeFunction, FunctionalBootstrapper};

use super::{workspace_root, RunArgs};
use crate::{backend, Fail};

pub(super) fn measure(a: RunArgs) -> Result<(), Fail> {
    let failed = |e: fhe_bench::Error| Fail::Failed(e.to_string());
    if a.ckks_boot_rounds == 0 {
        return Err(Fail::Usage("--ckks-boot-rounds must be at least 1".into()));
    }
    let functions = match a.ckks_fe.as_deref() {
        Some([]) | None => FeFunction::ALL.to_vec(),
        Some(f) => f.to_vec(),
    };
    let chains: Vec<_> = seed_two_chains()
        .into_iter()
        .filter(|c| a.ckks_fe_configs.is_empty() || a.ckks_fe_configs.contains(&c.name))
        .collect();
    if chains.is_empty() {
        let names: Vec<String> = seed_two_chains().into_iter().map(|c| c.name).collect();
        return Err(Fail::Usage(format!("--ckks-fe-configs: none of {}", names.join(", "))));
    }
    let target: Arc<dyn Backend> = backend(&a.backend)?;
    let mut peer = if a.peers {
        let python = a.openfhe_python.clone().unwrap_or_else(|| OpenFhe::default_python(&workspace_root()));
        let peer = OpenFheFe::new(&python).map_err(|e| Fail::Usage(e.to_string()))?;
        println!("peer: OpenFHE {} ({})", peer.info["version"], python.display());
        Some(peer)
    } else {
        None
    };
    let plan = FePlan {
        rounds: a.ckks_boot_rounds,
        warmup: a.ckks_boot_warmup,
        one_thread: !a.ckks_all_threads,
        min_free_bytes: (a.ckks_boot_min_free_gib.max(0.0) * (1u64 << 30) as f64) as u64,
        max_wait: Duration::from_secs(a.ckks_boot_max_wait_s),
    };
    // The CKKS equivalence gate first, at the 59-bit chain (as `--ckks-bootstrap`), on an
    // instance of the backend of its own: dropped with its plans and their buffer pools
    // (0.3 GiB at N = 2^16), which would otherwise sit in every round's peak memory.
    let gate = super::gate::run::<Ckks>(&backend(&a.backend)?, &[Preset::Slots32768Scale59Depth22], a.gate_seeds)?;
    if gate.status == GateState::Failed {
        return Err(Fail::Failed(format!("{} failed the CKKS equivalence gate: no numbers reported", target.name())));
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for chain in chains {
        let mut case = FeCase::new(chain.clone(), &functions).map_err(failed)?;
        case.diagonals = a.ckks_diagonals.0;
        // Refusals are reasons, said and recorded; anything else is a failure.
        let refusal = match case.params() {
            Err(e) => Some(e.to_string()),
            Ok(p) => FunctionalBootstrapper::key_options(&p, &case.config()).err().map(|e| e.to_string()),
        };
        if let Some(why) = refusal {
            println!("{}: skipped: {why}", chain.name);
            skipped.push(format!("{}: {why}", chain.name));
            continue;
        }
        println!("{}: {} functions, {} rounds", chain.name, case.series.len(), plan.rounds);
        let peer = peer.as_mut().map(|p| p as &mut dyn FePeer);
        rows.extend(ckks_fe::run_fe(target.clone(), &case, peer, &plan).map_err(failed)?);
    }
    let lane = a.lane.clone().unwrap_or_else(|| "ckks-fe".to_string());
    let dir = a.results_dir.clone().unwrap_or_else(|| workspace_root().join("bench/results"));
    let report = fhe_bench::Report::new(
        &lane,
        &target.name(),
        fhe_bench::Environment::capture(Some(target.as_ref())),
        gate,
        rows,
    );
    let path = fhe_bench::write_results(&dir, &lane, &report).map_err(failed)?;
    println!("{}", ckks_fe::format_fe_table(&report.rows));
    for s in &skipped {
        println!("skipped {s}");
    }
    println!("results written to {}", path.display());
    Ok(())
}
