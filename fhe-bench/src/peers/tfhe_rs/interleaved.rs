//! Our rows and a peer's timed alternately, round by round, for machines whose speed
//! drifts between the minute our suite runs and the minute the peers run: a drift then
//! reaches both sides within the same round, which a suite-then-peers comparison a minute
//! apart cannot promise.
//!
//! - [`run_interleaved_gates`]: our gates against TFHE-rs's (rows `<ours>/interleaved`
//!   and `peer:tfhe/interleaved`);
//! - [`run_interleaved_ntt`]: our NTT kernel against tfhe-ntt on the same ring and words
//!   (rows `cpu:<variant>/kernel/interleaved` and `peer:tfhe-ntt/interleaved`).
//!
//! Every case is `rounds` rounds of `calls` timed calls per side, each side's round
//! starting with one discarded call, the side that goes first alternating between rounds.
//! A row holds one run per round (`run_medians_ns` keeps the per-round medians of both
//! sides in the same order), and our row's note gives the range and median of the
//! per-round ratios of medians.

use fhe_api::{Backend, ParamSet};
use fhe_schemes::tfhe::gates;
use tfhe::boolean::prelude::BinaryBooleanGates;

use super::{
    gen_keys, ntt_plan, ok, one_thread, own_engine, own_ntt_call, tfhe_ntt_call, Call, NttCase, TFHE_BACKEND,
    TFHE_NOTE, TFHE_NTT_BACKEND,
};
use crate::error::{Error, Result};
use crate::ops::tfhe::{Fixture, Operation, SuiteConfig};
pub use crate::report::INTERLEAVED;
use crate::report::{alternate, round_spread, Row};
use crate::stats::{sample_with, Plan, Stats};

/// How one kind of interleaved case is timed and named.
struct Pairing<'s> {
    rounds: usize,
    calls: usize,
    /// Our backend name (with [`INTERLEAVED`]) and NTT variant.
    ours: (&'s str, &'s str),
    /// The peer's backend name (with [`INTERLEAVED`]), variant and row note.
    theirs: (&'s str, &'s str, &'s str),
    /// Where each side runs, for our row's note.
    threads: &'s str,
}

impl Pairing<'_> {
    fn new<'s>(
        rounds: usize,
        calls: usize,
        ours: (&'s str, &'s str),
        theirs: (&'s str, &'s str, &'s str),
        threads: &'s str,
    ) -> Result<Pairing<'s>> {
        check_rounds(rounds, calls)?;
        Ok(Pairing { rounds, calls, ours, theirs, threads })
    }

    /// Times `ours` and `theirs` in alternation and returns their rows for `operation`
    /// on `set` with `batch` items a call.
    fn time(
        &self,
        operation: Operation,
        set: ParamSet,
        batch: usize,
        ours: &mut Call,
        theirs: &mut Call,
    ) -> Result<(Row, Row)> {
        let plan = Plan { iterations: self.calls, warmup: 1, runs: 1 };
        let time = |f: &mut Call| -> Result<Vec<f64>> {
            let mut runs = sample_with(f, plan, &mut |_, _| {})?;
            Ok(runs.pop().expect("one run"))
        };
        let (ours_runs, theirs_runs) = alternate(self.rounds, || time(ours), || time(theirs), &mut |_| {})?;
        let (rounds, calls) = (self.rounds, self.calls);
        let row_plan = Plan { iterations: calls, warmup: 1, runs: rounds };
        let ((ours_name, ours_variant), (theirs_name, theirs_variant, theirs_note)) = (self.ours, self.theirs);
        let row = |name: &str, variant: &str, runs: &[Vec<f64>]| -> Result<Row> {
            Ok(Row::new(operation.name(), set.name(), name, variant, batch, row_plan, Stats::from_runs(runs)?))
        };
        let (ours_row, theirs_row) =
            (row(ours_name, ours_variant, &ours_runs)?, row(theirs_name, theirs_variant, &theirs_runs)?);
        // One run per round on each side, so the rows' run medians pair round by round.
        let (lo, hi, mid) = round_spread(&ours_row, &theirs_row)?;
        tracing::info!(op = %operation, params = %set, batch, rounds, calls, lo, hi, "interleaved rounds");
        let note = format!(
            "interleaved with {theirs_name}: {rounds} rounds of {calls} calls per side, first side alternating; \
             {}; per-round ratio of medians {lo:.3}..{hi:.3} (median {mid:.3})",
            self.threads
        );
        Ok((ours_row.with_note(note), theirs_row.with_note(format!("{theirs_note}; interleaved with {ours_name}"))))
    }
}

/// Our gates (on `backend`, PN10QP27) and TFHE-rs's timed in alternation: for each
/// two-input gate and MUX of `config.operations`, `rounds` rounds of `calls` calls per
/// side. Returns `(ours, theirs)`: one row per gate and side.
///
/// Our gates run on the caller's thread with the backend's own settings, as an
/// application calls them (on the CPU backend a lone gate's blind rotation takes a
/// second core unless `LUX_FHE_BOOTSTRAP_THREADS=1`; the report's
/// `environment.bootstrap_threads` records which). TFHE-rs's run in a one-thread rayon
/// pool, as in every peer row.
pub fn run_interleaved_gates(
    backend: &dyn Backend,
    config: &SuiteConfig,
    rounds: usize,
    calls: usize,
) -> Result<(Vec<Row>, Vec<Row>)> {
    let ours_name = format!("{}{INTERLEAVED}", backend.name());
    let theirs_name = format!("{TFHE_BACKEND}{INTERLEAVED}");
    let pairing = Pairing::new(
        rounds,
        calls,
        (&ours_name, backend.ntt_variant()),
        (&theirs_name, "tfhe-fft", TFHE_NOTE),
        "ours on the caller's thread with the backend's settings, theirs in a one-thread pool",
    )?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Peer { peer: TFHE_BACKEND, message: e.to_string() })?;
    let set = ParamSet::PN10QP27;
    let ops: Vec<Operation> =
        config.operations.iter().copied().filter(|o| o.gate().is_some() || *o == Operation::GateMux).collect();
    if ops.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut fixture = Fixture::new(backend, set, "lux-fhe-bench-interleaved")?;
    let ours_in = fixture.ciphertexts(3, 0)?;
    let key = fixture.prepared(backend)?;
    let ours_in = &ours_in;
    let (ck, sk) = pool.install(gen_keys);
    let (a, b, c) = (ck.encrypt(true), ck.encrypt(false), ck.encrypt(true));
    let (sk, a, b, c, pool) = (&sk, &a, &b, &c, &pool);
    let (mut ours_rows, mut theirs_rows) = (Vec::new(), Vec::new());
    for op in ops {
        let (mut ours, mut theirs): (Call, Call) = match op.gate() {
            Some(g) => (
                Box::new(move || ok(gates::gate_batch(backend, key, g, &ours_in[0..1], &ours_in[1..2])?)),
                Box::new(move || {
                    ok(pool.install(|| match g {
                        gates::Gate::And => sk.and(a, b),
                        gates::Gate::Or => sk.or(a, b),
                        gates::Gate::Nand => sk.nand(a, b),
                        gates::Gate::Nor => sk.nor(a, b),
                        gates::Gate::Xor => sk.xor(a, b),
                        gates::Gate::Xnor => sk.xnor(a, b),
                    }))
                }),
            ),
            None => (
                Box::new(move || ok(gates::mux_batch(backend, key, &ours_in[0..1], &ours_in[1..2], &ours_in[2..3])?)),
                Box::new(move || ok(pool.install(|| sk.mux(a, b, c)))),
            ),
        };
        let (o, t) = pairing.time(op, set, 1, &mut ours, &mut theirs)?;
        ours_rows.push(o);
        theirs_rows.push(t);
    }
    Ok((ours_rows, theirs_rows))
}

/// Our `variant` NTT kernel and tfhe-ntt timed in alternation, both on one thread, on
/// every NTT case of `config` (forward and inverse at each batch size) for each set of
/// `params` that tfhe-ntt has a plan for, exactly as [`super::run_own_ntt_kernels`] and
/// [`super::run_tfhe_ntt`] call them. Returns `(ours, theirs)`: one row per case and side.
pub fn run_interleaved_ntt(
    params: &[ParamSet],
    config: &SuiteConfig,
    variant: &str,
    rounds: usize,
    calls: usize,
) -> Result<(Vec<Row>, Vec<Row>)> {
    check_rounds(rounds, calls)?;
    let ours_name = format!("cpu:{variant}/kernel{INTERLEAVED}");
    let theirs_name = format!("{TFHE_NTT_BACKEND}{INTERLEAVED}");
    one_thread(|| {
        let (mut ours_rows, mut theirs_rows) = (Vec::new(), Vec::new());
        for &set in params {
            let Some((plan, peer_variant)) = ntt_plan(set) else {
                tracing::warn!(params = %set, "tfhe-ntt has no plan for this ring; skipped");
                continue;
            };
            let engine = own_engine(set, variant)?;
            for case in NttCase::all(set, config) {
                let (mut ours, words) = own_ntt_call(&*engine, case);
                let (n, q) = case.ring();
                let theirs_note = format!("tfhe_ntt::{peer_variant}::Plan::try_new({n}, {q}), 1 thread");
                let threads =
                    format!("both on one thread; ours the fhe-cpu {variant} engine in place on {words} words");
                let pairing = Pairing::new(
                    rounds,
                    calls,
                    (&ours_name, variant),
                    (&theirs_name, peer_variant, &theirs_note),
                    &threads,
                )?;
                let (o, t) = pairing.time(case.op, set, case.batch, &mut ours, &mut tfhe_ntt_call(&plan, case))?;
                ours_rows.push(o);
                theirs_rows.push(t);
            }
        }
        Ok((ours_rows, theirs_rows))
    })
}

/// Both counts must be at least 1.
fn check_rounds(rounds: usize, calls: usize) -> Result<()> {
    if rounds == 0 || calls == 0 {
        return Err(Error::InvalidPlan(format!(
            "interleaved rows: rounds ({rounds}) and calls ({calls}) must be >= 1"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::tfhe::Iterations;

    #[test]
    fn interleaved_gates_pair_round_by_round() {
        let backend = fhe_cpu::CpuBackend::new(None).unwrap();
        let config = SuiteConfig {
            operations: vec![Operation::NttForward, Operation::GateXor, Operation::GateNot, Operation::GateMux],
            ..SuiteConfig::default()
        };
        let (ours, theirs) = run_interleaved_gates(&backend, &config, 3, 1).unwrap();
        let ops = |rows: &[Row]| rows.iter().map(|r| r.operation.clone()).collect::<Vec<_>>();
        assert_eq!(ops(&ours), ["gate_xor", "gate_mux"], "only bootstrapped gates, in config order");
        assert_eq!(ops(&theirs), ops(&ours));
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o.backend, format!("{}{INTERLEAVED}", backend.name()));
            assert_eq!(t.backend, format!("{TFHE_BACKEND}{INTERLEAVED}"));
            assert_eq!((o.runs, o.iterations, o.stats.run_medians_ns.len()), (3, 1, 3));
            assert_eq!(t.stats.run_medians_ns.len(), 3);
            assert!(o.note.as_deref().is_some_and(|n| n.contains("per-round ratio")));
        }
        assert_eq!(crate::ratios(&ours, &theirs).len(), 2);
        assert!(matches!(run_interleaved_gates(&backend, &config, 0, 1), Err(Error::InvalidPlan(_))));
        assert!(matches!(run_interleaved_gates(&backend, &config, 2, 0), Err(Error::InvalidPlan(_))));
    }

    #[test]
    fn interleaved_ntt_pairs_every_case_round_by_round() {
        let config = SuiteConfig {
            iterations: Iterations::uniform(2),
            ntt_batch_sizes: vec![1, 3],
            operations: vec![Operation::NttForward, Operation::GateAnd, Operation::NttInverse],
            ..SuiteConfig::default()
        };
        let sets = [ParamSet::PN10QP27, ParamSet::PN11QP54];
        let (ours, theirs) = run_interleaved_ntt(&sets, &config, "reference", 4, 2).unwrap();
        assert_eq!(ours.len(), 2 * 2 * 2, "two sets, two directions, two batch sizes; no gate rows");
        assert_eq!(theirs.len(), ours.len());
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o.backend, "cpu:reference/kernel/interleaved");
            assert_eq!(t.backend, format!("{TFHE_NTT_BACKEND}{INTERLEAVED}"));
            assert_eq!((&o.operation, &o.param_set, o.batch_size), (&t.operation, &t.param_set, t.batch_size));
            assert_eq!((o.runs, o.iterations, o.stats.run_medians_ns.len()), (4, 2, 4));
            assert_eq!(t.stats.run_medians_ns.len(), 4);
            assert!(o.note.as_deref().is_some_and(|n| n.contains("per-round ratio") && n.contains("one thread")));
        }
        let words = |set: &str| ours.iter().find(|r| r.param_set == set).and_then(|r| r.note.clone()).unwrap();
        assert!(words("PN10QP27").contains("u32 words") && words("PN11QP54").contains("u64 words"));
        let ratios = crate::ratios(&ours, &theirs);
        assert_eq!(ratios.len(), ours.len());
        for (o, r) in ours.iter().zip(&ratios) {
            let median = format!("(median {:.3})", r.per_round.expect("interleaved rows pair round by round"));
            assert!(o.note.as_deref().is_some_and(|n| n.ends_with(&median)), "the note's median is the table's");
        }
        assert!(run_interleaved_ntt(&sets, &config, "no-such-variant", 2, 1).is_err());
        assert!(matches!(run_interleaved_ntt(&sets, &config, "reference", 2, 0), Err(Error::InvalidPlan(_))));
    }
}
