//! The equivalence gate that runs before any measurement, for either scheme: fhe-kat's
//! `equiv dispatch` of the measured sets on the oracle and on the target, so that the
//! bench and `cargo xtask equiv` apply one byte-comparison rule (DESIGN.md, "Measuring":
//! a backend that fails it reports no numbers).

use std::sync::Arc;

use fhe_api::Backend;
use fhe_bench::{EquivalenceGate, GateState};
use fhe_kat::{Scheme, Verdict};

use crate::kat::oracle;
use crate::Fail;

/// Runs `equiv dispatch` of `sets` with `seeds` seeds each, prints its lines, and says
/// what the report's `equivalence_gate` is: `passed`, `failed` (the detail names the
/// first mismatch), or `not_run` when the target is the oracle itself (nothing to compare
/// it with). A target that cannot run the scheme is skipped (exit 3): nothing to measure.
pub(super) fn run<S: Scheme>(
    target: &Arc<dyn Backend>,
    sets: &[S::Params],
    seeds: u64,
) -> Result<EquivalenceGate, Fail> {
    let oracle = oracle();
    let prefix = S::LABELS.prefix;
    let gate = if target.name() == oracle.name() {
        EquivalenceGate::new(GateState::NotRun, Some(format!("{} is the oracle", target.name())))
    } else {
        let r = fhe_kat::dispatch::<S>(&oracle, target, sets, seeds)?;
        print!("{r}");
        match r.verdict() {
            Verdict::Passed => EquivalenceGate::new(
                GateState::Passed,
                Some(format!("{prefix}dispatch, {seeds} seeds per set, byte-equal with {}", oracle.name())),
            ),
            Verdict::Failed(_) => {
                let passed: u64 = r.sets.iter().map(|s| s.passed).sum();
                let first = r.mismatches().next().map(|m| format!("; first {m}")).unwrap_or_default();
                let total = seeds * sets.len() as u64;
                let detail =
                    format!("{prefix}dispatch: {passed}/{total} seeds byte-equal with {}{first}", oracle.name());
                EquivalenceGate::new(GateState::Failed, Some(detail))
            }
            Verdict::Skipped(why) => return Err(Fail::Skipped(why)),
        }
    };
    println!("equivalence gate: {:?}: {}", gate.status, gate.detail.as_deref().unwrap_or(""));
    Ok(gate)
}

#[cfg(test)]
mod tests {
    use fhe_api::ckks::params::Preset;
    use fhe_api::ring::{PolynomialSize, RingModulus};
    use fhe_api::testing::{Delegate, Tamper};
    use fhe_api::ParamSet;
    use fhe_cpu::CpuBackend;
    use fhe_kat::ckks::Ckks;
    use fhe_kat::tfhe::Tfhe;

    use super::*;

    /// The CPU oracle with one word of every forward NTT off by one: keys come out wrong
    /// in both schemes.
    #[derive(Debug)]
    struct NttOffByOne;

    impl Tamper for NttOffByOne {
        fn name(&self) -> String {
            "test:ntt-off-by-one".into()
        }
        fn ring_forward(&self, _: PolynomialSize, q: RingModulus, data: &mut [u64]) -> fhe_api::Result<()> {
            data[0] = (data[0] + 1) % q.0;
            Ok(())
        }
    }

    const SMALL: Preset = Preset::Slots4096Scale40Depth2;

    #[test]
    fn the_bench_gate_is_the_dispatch_of_both_schemes() {
        let harvey: Arc<dyn Backend> = Arc::new(CpuBackend::new(Some("harvey")).unwrap());
        let g = run::<Ckks>(&harvey, &[SMALL], 1).unwrap();
        assert_eq!(g.status, GateState::Passed, "{g:?}");
        assert!(g.detail.unwrap().starts_with("ckks dispatch, 1 seeds per set"));
        assert_eq!(run::<Tfhe>(&oracle(), &[ParamSet::PN10QP27], 1).unwrap().status, GateState::NotRun);

        let flawed: Arc<dyn Backend> = Arc::new(Delegate::new(CpuBackend::oracle(), NttOffByOne));
        let g = run::<Ckks>(&flawed, &[SMALL], 1).unwrap();
        assert_eq!(g.status, GateState::Failed, "{g:?}");
        let detail = g.detail.unwrap();
        assert!(detail.contains("0/1 seeds") && detail.contains("first mismatch"), "{detail}");
        let g = run::<Tfhe>(&flawed, &[ParamSet::PN10QP27], 1).unwrap();
        assert_eq!(g.status, GateState::Failed, "{g:?}");
    }
}
