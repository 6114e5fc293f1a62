//! `bench --ckks-bootstrap <secret>[,<secret>]`: CKKS bootstrapping at the peer's chain
//! (`slots32768-scale59-depth22`, level budget {3, 3}) with a uniform and/or a sparse
//! ternary secret (`fhe_bench::ops::ckks_boot`). The CKKS equivalence gate of that preset
//! first; then, per secret, our rounds (with `--peers`: ours and OpenFHE's
//! `EvalBootstrap` alternated, round by round); one file for the run under
//! `bench/results/ckks-bootstrap/`, rows for every secret asked for.

use std::sync::Arc;
use std::time::Duration;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;
use fhe_bench::ops::ckks_boot::{self, BootCase, BootPlan};
use fhe_bench::peers::openfhe::OpenFhe;
use fhe_bench::peers::openfhe_boot::OpenFheBoot;
use fhe_bench::{GateState, Row};
use fhe_kat::ckks::Ckks;

use super::{workspace_root, RunArgs};
use crate::{backend, Fail};

/// The plan the flags ask for; usage errors for what cannot run.
pub(super) fn plan(a: &RunArgs) -> Result<BootPlan, Fail> {
    if !a.params.is_empty() || !a.ckks.is_empty() {
        return Err(Fail::Usage(
            "--ckks-bootstrap measures the peer's bootstrapping chain: leave out --params and --ckks".into(),
        ));
    }
    if a.ckks_boot_rounds == 0 || a.ckks_boot_calls == 0 {
        return Err(Fail::Usage("--ckks-boot-rounds and --ckks-boot-calls must be at least 1".into()));
    }
    if !(a.ckks_boot_min_free_gib.is_finite() && a.ckks_boot_min_free_gib >= 0.0) {
        return Err(Fail::Usage("--ckks-boot-min-free-gib must be a number >= 0".into()));
    }
    Ok(BootPlan {
        rounds: a.ckks_boot_rounds,
        calls: a.ckks_boot_calls,
        warmup: a.ckks_boot_warmup,
        one_thread: !a.ckks_all_threads,
        min_free_bytes: (a.ckks_boot_min_free_gib * (1u64 << 30) as f64) as u64,
        max_wait: Duration::from_secs(a.ckks_boot_max_wait_s),
    })
}

/// Measures every secret of `--ckks-bootstrap`.
pub(super) fn measure(a: RunArgs) -> Result<(), Fail> {
    let failed = |e: fhe_bench::Error| Fail::Failed(e.to_string());
    let plan = plan(&a)?;
    let target: Arc<dyn Backend> = backend(&a.backend)?;
    // The peer first: a missing venv is said before anything is measured.
    let mut peer = if a.peers {
        let python = a.openfhe_python.clone().unwrap_or_else(|| OpenFhe::default_python(&workspace_root()));
        let peer = OpenFheBoot::new(&python).map_err(|e| Fail::Usage(e.to_string()))?;
        println!("peer: OpenFHE {} ({})", peer.info["version"], python.display());
        Some(peer)
    } else {
        None
    };
    let preset = Preset::Slots32768Scale59Depth22;
    // On an instance of the backend of its own (as `--ckks-fe`): the gate's plans and
    // buffer pools are dropped with it, not counted in the rounds' peak memory.
    let gate = super::gate::run::<Ckks>(&backend(&a.backend)?, &[preset], a.gate_seeds)?;
    let gate_failed = gate.status == GateState::Failed;
    let mut rows: Vec<Row> = Vec::new();
    let mut sets = Vec::new();
    let mut comparisons = Vec::new();
    if !gate_failed {
        for &secret in &a.ckks_bootstrap {
            let mut case = BootCase::peer_preset(secret);
            case.config.diagonals = a.ckks_diagonals.0;
            let cp = case.params().map_err(failed)?;
            sets.push(case.param_set(cp.within_bound));
            if !cp.within_bound {
                println!(
                    "{secret} secret: log QP {} is over our 128-bit bound {:?}: measured for comparison only",
                    cp.params.log_qp(),
                    cp.bound
                );
            }
            match peer.as_mut() {
                None => rows.extend(ckks_boot::run_boot_ours(target.clone(), &case, &plan).map_err(failed)?),
                Some(peer) => {
                    let mut progress = fhe_bench::stderr_progress(plan.rounds);
                    let (ours, theirs) =
                        ckks_boot::run_boot_alternated(target.clone(), &case, peer, &plan, &mut progress)
                            .map_err(failed)?;
                    comparisons.push(ckks_boot::format_boot_comparison(&ours, &theirs));
                    rows.extend(ours);
                    rows.extend(theirs);
                }
            }
        }
    }
    let lane = a.lane.clone().unwrap_or_else(|| "ckks-bootstrap".to_string());
    let dir = a.results_dir.clone().unwrap_or_else(|| workspace_root().join("bench/results"));
    let mut report = fhe_bench::Report::new(
        &lane,
        &target.name(),
        fhe_bench::Environment::capture(Some(target.as_ref())),
        gate,
        rows,
    );
    if !report.rows.is_empty() {
        report.params = sets.join("+");
    }
    let path = fhe_bench::write_results(&dir, &lane, &report).map_err(failed)?;
    println!("{}", fhe_bench::format_table(&report));
    for table in comparisons {
        println!(
            "ours over OpenFHE's, {} rounds alternated, one thread each (OpenFHE: the PyPI wheel, a portable build \
             without AVX):\n{table}",
            plan.rounds
        );
    }
    println!("results written to {}", path.display());
    if gate_failed {
        return Err(Fail::Failed(format!("{} failed the CKKS equivalence gate: no numbers reported", target.name())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use fhe_bench::ops::ckks_boot::BootSecret;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn args(extra: &[&str]) -> RunArgs {
        Cli::try_parse_from(["bench"].iter().chain(extra)).unwrap().run
    }

    #[test]
    fn secrets_are_comma_separated_and_the_defaults_are_three_rounds_of_one_call() {
        let a = args(&["--ckks-bootstrap", "uniform,sparse"]);
        assert_eq!(a.ckks_bootstrap, vec![BootSecret::Uniform, BootSecret::Sparse]);
        let p = plan(&a).unwrap();
        assert_eq!((p.rounds, p.calls, p.warmup, p.one_thread), (3, 1, 0, true));
        assert_eq!(p.min_free_bytes, 12 << 30);
        assert!(Cli::try_parse_from(["bench", "--ckks-bootstrap", "dense"]).is_err());
    }

    #[test]
    fn impossible_plans_are_usage_errors() {
        for bad in [
            &["--ckks-bootstrap", "uniform", "--ckks-boot-rounds", "0"][..],
            &["--ckks-bootstrap", "uniform", "--ckks-boot-calls", "0"],
            &["--ckks-bootstrap", "uniform", "--ckks", "slots4096-scale40-depth2"],
            &["--ckks-bootstrap", "uniform", "--ckks-boot-min-free-gib=-1"],
            &["--ckks-bootstrap", "uniform", "--ckks-boot-min-free-gib=NaN"],
        ] {
            assert!(matches!(plan(&args(bad)), Err(Fail::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn peers_without_the_venv_is_a_usage_error_naming_the_setup_script() {
        let mut a = args(&["--ckks-bootstrap", "uniform", "--peers"]);
        a.openfhe_python = Some("/nonexistent/openfhe-venv/bin/python".into());
        match measure(a) {
            Err(Fail::Usage(m)) => assert!(m.contains("scripts/openfhe-setup"), "{m}"),
            Err(Fail::Failed(m) | Fail::Skipped(m)) => panic!("not a usage error: {m}"),
            Ok(()) => panic!("ran without a peer"),
        }
    }
}
