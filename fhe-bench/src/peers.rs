//! Peers, timed in the same process with the same loop as our backends (cargo feature
//! `peers`): TFHE-rs boolean gates (`peer:tfhe`) and the tfhe-ntt NTT (`peer:tfhe-ntt`).
//!
//! The peers run inside a one-thread rayon pool: one core each. Our rows run with the
//! backend's own settings, so on the CPU backend a lone gate's blind rotation takes a
//! second core unless `LUX_FHE_BOOTSTRAP_THREADS=1` (recorded in
//! `environment.bootstrap_threads`); with `1`, a call of ours on one ciphertext uses one
//! core, as theirs does.
//!
//! Matching (so that [`crate::ratios`] pairs rows):
//! - `peer:tfhe` rows carry `param_set = PN10QP27`: TFHE-rs `DEFAULT_PARAMETERS` are its
//!   128-bit boolean set (n=805, N=512, k=3, p-fail about 2^-64), the closest match to our
//!   128-bit gate set; the `note` of each row says so. Gates, NOT, MUX, keygen, encrypt
//!   and decrypt are timed.
//! - `peer:tfhe-ntt` rows use exactly our rings: `prime32::Plan(1024, 134215681)` for
//!   PN10QP27, `prime32::Plan(1024, 33550337)` for PN10QP25Q and
//!   `prime64::Plan(2048, 18014398509404161)` for PN11QP54; forward and inverse (without
//!   the separate normalization pass) at the configured batch sizes.
//!
//! [`run_interleaved_gates`] times our gates and TFHE-rs's alternately, round by round,
//! for machines whose speed drifts between the minute our suite runs and the minute the
//! peers run (rows `<ours>/interleaved` and `peer:tfhe/interleaved`).

use fhe_api::{gates, Backend, ParamSet};
use tfhe::boolean::prelude::*;

use crate::error::{Error, Result};
use crate::ops::{Fixture, Operation, Progress, SuiteConfig};
use crate::report::Row;
use crate::stats::{measure_with, median_sorted, sample_with, Plan, Stats};

pub const TFHE_BACKEND: &str = "peer:tfhe";
pub const TFHE_NTT_BACKEND: &str = "peer:tfhe-ntt";
/// Suffix of the backend names of [`run_interleaved_gates`]' rows.
pub const INTERLEAVED: &str = "/interleaved";

const TFHE_NOTE: &str =
    "tfhe::boolean DEFAULT_PARAMETERS (n=805, N=512, k=3, 128-bit, p-fail ~2^-64), 1 thread; compared with PN10QP27";

/// The peers' rows for the operations and parameter sets of `config` that a peer
/// implements (others are skipped), timed with `config`'s plans.
///
/// `progress` must be `Send`: the peers run on the thread of a one-thread rayon pool.
pub fn run_peers(
    params: &[ParamSet],
    config: &SuiteConfig,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Vec<Row>> {
    one_thread(move || {
        let mut rows = run_tfhe_ntt(params, config, &mut *progress)?;
        if params.contains(&ParamSet::PN10QP27) {
            rows.extend(run_tfhe_boolean(config, &mut *progress)?);
        }
        Ok(rows)
    })
}

/// `f` inside a one-thread rayon pool.
fn one_thread<R: Send>(f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Peer { peer: TFHE_BACKEND, message: e.to_string() })?;
    pool.install(f)
}

fn timed<F>(label: String, plan: Plan, progress: &mut dyn FnMut(&Progress), op: F) -> Result<Stats>
where
    F: FnMut() -> Result<()>,
{
    let calls = plan.iterations * plan.runs;
    progress(&Progress::Start { label: label.clone(), calls });
    let stats =
        measure_with(op, plan, &mut |done, calls| progress(&Progress::Tick { label: label.clone(), done, calls }))?;
    tracing::info!(case = %label, median_ns = stats.median_ns, p99_ns = stats.p99_ns, "measured peer");
    progress(&Progress::Finish { label });
    Ok(stats)
}

enum NttPlan {
    P32(tfhe_ntt::prime32::Plan),
    P64(tfhe_ntt::prime64::Plan),
}

fn ntt_plan(params: ParamSet) -> Option<(NttPlan, &'static str)> {
    let p = params.params();
    let (n, q) = (p.big_n(), p.q_ring());
    if q < (1 << 31) {
        tfhe_ntt::prime32::Plan::try_new(n, q as u32).map(|pl| (NttPlan::P32(pl), "prime32"))
    } else {
        tfhe_ntt::prime64::Plan::try_new(n, q).map(|pl| (NttPlan::P64(pl), "prime64"))
    }
}

/// Our CPU NTT kernel timed with exactly the loop of [`run_tfhe_ntt`]: in place, one
/// polynomial after another, on 32-bit words where the ring allows (`forward32`, the
/// blind rotation's form; `u64` words for the 54-bit ring), without the `NttOps` input
/// validation. Backend `cpu:<variant>/kernel`: the like-for-like row for `peer:tfhe-ntt`
/// (the `cpu:<variant>` rows time the public `NttOps` call on `u64` words).
pub fn run_own_ntt_kernels(params: &[ParamSet], config: &SuiteConfig, variant: &str) -> Result<Vec<Row>> {
    one_thread(|| own_ntt_kernels(params, config, variant))
}

fn own_ntt_kernels(params: &[ParamSet], config: &SuiteConfig, variant: &str) -> Result<Vec<Row>> {
    use fhe_cpu::ntt::{find_variant, Ahead, NttTables};
    let v = find_variant(variant).map_err(|e| Error::Peer { peer: TFHE_NTT_BACKEND, message: e.to_string() })?;
    let backend = format!("cpu:{variant}/kernel");
    let mut rows = Vec::new();
    for &set in params {
        let p = set.params();
        let (n, q) = (p.big_n(), p.q_ring());
        let engine = (v.build)(std::sync::Arc::new(NttTables::new(p)));
        for &op in config.operations.iter().filter(|o| matches!(o, Operation::NttForward | Operation::NttInverse)) {
            let forward = op == Operation::NttForward;
            for &batch in &config.ntt_batch_sizes {
                let plan = config.plan(op);
                let input: Vec<u64> =
                    (0..(batch * n) as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q).collect();
                let label = format!("{backend} {set} {op} x{batch}");
                let (stats, words) = if q < 1 << 32 {
                    let mut data: Vec<u32> = input.iter().map(|&x| x as u32).collect();
                    let stats = timed(label, plan, &mut |_| {}, || {
                        for poly in data.chunks_exact_mut(n) {
                            if forward {
                                engine.forward32(poly, &mut Ahead::none());
                            } else {
                                engine.inverse32(poly, &mut Ahead::none());
                            }
                        }
                        std::hint::black_box(&data);
                        Ok(())
                    })?;
                    (stats, "u32")
                } else {
                    let mut data = input;
                    let stats = timed(label, plan, &mut |_| {}, || {
                        for poly in data.chunks_exact_mut(n) {
                            if forward {
                                engine.forward(poly);
                            } else {
                                engine.inverse(poly);
                            }
                        }
                        std::hint::black_box(&data);
                        Ok(())
                    })?;
                    (stats, "u64")
                };
                rows.push(
                    Row::new(op.name(), set.name(), &backend, variant, batch, plan, stats)
                        .with_note(format!("fhe-cpu {variant} engine in place on {words} words, 1 thread")),
                );
            }
        }
    }
    Ok(rows)
}

/// tfhe-ntt forward and inverse on our rings.
pub fn run_tfhe_ntt(
    params: &[ParamSet],
    config: &SuiteConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &set in params {
        let Some((plan, variant)) = ntt_plan(set) else {
            tracing::warn!(params = %set, "tfhe-ntt has no plan for this ring; skipped");
            continue;
        };
        let n = set.params().big_n();
        let q = set.params().q_ring();
        for &op in config.operations.iter().filter(|o| matches!(o, Operation::NttForward | Operation::NttInverse)) {
            let forward = op == Operation::NttForward;
            for &batch in &config.ntt_batch_sizes {
                let p = config.plan(op);
                let label = format!("{TFHE_NTT_BACKEND} {set} {op} x{batch}");
                let input: Vec<u64> =
                    (0..(batch * n) as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q).collect();
                let stats = match &plan {
                    NttPlan::P32(pl) => {
                        let mut data: Vec<u32> = input.iter().map(|&x| x as u32).collect();
                        timed(label, p, progress, || {
                            for poly in data.chunks_exact_mut(n) {
                                if forward {
                                    pl.fwd(poly);
                                } else {
                                    pl.inv(poly);
                                }
                            }
                            std::hint::black_box(&data);
                            Ok(())
                        })?
                    }
                    NttPlan::P64(pl) => {
                        let mut data = input.clone();
                        timed(label, p, progress, || {
                            for poly in data.chunks_exact_mut(n) {
                                if forward {
                                    pl.fwd(poly);
                                } else {
                                    pl.inv(poly);
                                }
                            }
                            std::hint::black_box(&data);
                            Ok(())
                        })?
                    }
                };
                rows.push(
                    Row::new(op.name(), set.name(), TFHE_NTT_BACKEND, variant, batch, p, stats)
                        .with_note(format!("tfhe_ntt::{variant}::Plan::try_new({n}, {q}), 1 thread")),
                );
            }
        }
    }
    Ok(rows)
}

/// TFHE-rs boolean gates with its default parameters.
pub fn run_tfhe_boolean(config: &SuiteConfig, progress: &mut dyn FnMut(&Progress)) -> Result<Vec<Row>> {
    let set = ParamSet::PN10QP27;
    let (ck, sk) = gen_keys();
    let (a, b, c) = (ck.encrypt(true), ck.encrypt(false), ck.encrypt(true));
    let mut rows = Vec::new();
    for &op in &config.operations {
        let p = config.plan(op);
        let label = format!("{TFHE_BACKEND} {op}");
        let stats = match op {
            Operation::GateAnd => timed(label, p, progress, || ok(sk.and(&a, &b)))?,
            Operation::GateOr => timed(label, p, progress, || ok(sk.or(&a, &b)))?,
            Operation::GateNand => timed(label, p, progress, || ok(sk.nand(&a, &b)))?,
            Operation::GateNor => timed(label, p, progress, || ok(sk.nor(&a, &b)))?,
            Operation::GateXor => timed(label, p, progress, || ok(sk.xor(&a, &b)))?,
            Operation::GateXnor => timed(label, p, progress, || ok(sk.xnor(&a, &b)))?,
            Operation::GateMux => timed(label, p, progress, || ok(sk.mux(&a, &b, &c)))?,
            Operation::GateNot => timed(label, p, progress, || ok(sk.not(&a)))?,
            Operation::Keygen => timed(label, p, progress, || ok(gen_keys()))?,
            Operation::Encrypt => timed(label, p, progress, || ok(ck.encrypt(true)))?,
            Operation::Decrypt => timed(label, p, progress, || ok(ck.decrypt(&a)))?,
            _ => continue,
        };
        rows.push(Row::new(op.name(), set.name(), TFHE_BACKEND, "tfhe-fft", 1, p, stats).with_note(TFHE_NOTE));
    }
    Ok(rows)
}

/// One timed call of a gate, ours or the peer's.
type GateCall<'a> = Box<dyn FnMut() -> Result<()> + 'a>;

/// Our gates (on `backend`, PN10QP27) and TFHE-rs's timed in alternation: for each
/// two-input gate and MUX of `config.operations`, `rounds` rounds of `calls` timed calls
/// per side (after one discarded call), the side that goes first alternating between
/// rounds. Returns `(ours, theirs)`: one row per gate and side, backend
/// `<backend name>/interleaved` and `peer:tfhe/interleaved`, one run per round (so
/// `run_medians_ns` holds the per-round medians of both sides, in the same order). Our
/// row's note gives the range of the per-round ratios of medians.
///
/// Our gates run on the caller's thread with the backend's own settings, as an
/// application calls them (on the CPU backend a lone gate's blind rotation takes a
/// second core unless `LUX_FHE_BOOTSTRAP_THREADS=1`; the report's
/// `environment.bootstrap_threads` records which). TFHE-rs's run in a one-thread rayon
/// pool, as in every peer row. The point is that a drift in the machine's speed reaches
/// both sides within the same round, which a suite-then-peers comparison a minute apart
/// cannot promise.
pub fn run_interleaved_gates(
    backend: &dyn Backend,
    config: &SuiteConfig,
    rounds: usize,
    calls: usize,
) -> Result<(Vec<Row>, Vec<Row>)> {
    if rounds == 0 || calls == 0 {
        return Err(Error::InvalidPlan(format!(
            "interleaved gates: rounds ({rounds}) and calls ({calls}) must be >= 1"
        )));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Peer { peer: TFHE_BACKEND, message: e.to_string() })?;
    interleaved_gates(backend, config, rounds, calls, &pool)
}

fn interleaved_gates(
    backend: &dyn Backend,
    config: &SuiteConfig,
    rounds: usize,
    calls: usize,
    pool: &rayon::ThreadPool,
) -> Result<(Vec<Row>, Vec<Row>)> {
    let set = ParamSet::PN10QP27;
    let ops: Vec<Operation> =
        config.operations.iter().copied().filter(|o| o.gate().is_some() || *o == Operation::GateMux).collect();
    if ops.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut fixture = Fixture::new(backend, set, "lux-fhe-bench-interleaved")?;
    let ours_in = fixture.ciphertexts(backend, 3, 0)?;
    let key = fixture.prepared(backend)?;
    let ours_in = &ours_in;
    let (ck, sk) = pool.install(gen_keys);
    let (a, b, c) = (ck.encrypt(true), ck.encrypt(false), ck.encrypt(true));
    let (sk, a, b, c) = (&sk, &a, &b, &c);
    let ours_name = format!("{}{INTERLEAVED}", backend.name());
    let theirs_name = format!("{TFHE_BACKEND}{INTERLEAVED}");
    let plan = Plan { iterations: calls, warmup: 1, runs: 1 };
    let row_plan = Plan { iterations: calls, warmup: 1, runs: rounds };
    let (mut ours_rows, mut theirs_rows) = (Vec::new(), Vec::new());
    for op in ops {
        let (mut ours, mut theirs): (GateCall, GateCall) = match op.gate() {
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
        let (mut ours_runs, mut theirs_runs) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for round in 0..rounds {
            let time = |f: &mut GateCall| -> Result<Vec<f64>> {
                let mut runs = sample_with(f, plan, &mut |_, _| {})?;
                Ok(runs.pop().expect("one run"))
            };
            if round % 2 == 0 {
                ours_runs.push(time(&mut ours)?);
                theirs_runs.push(time(&mut theirs)?);
            } else {
                theirs_runs.push(time(&mut theirs)?);
                ours_runs.push(time(&mut ours)?);
            }
        }
        let per_round: Vec<f64> = ours_runs.iter().zip(&theirs_runs).map(|(o, t)| median(o) / median(t)).collect();
        let (lo, hi) = per_round.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let mut sorted = per_round.clone();
        sorted.sort_by(f64::total_cmp);
        tracing::info!(op = %op, rounds, calls, lo, hi, "interleaved gate rounds");
        let note = format!(
            "interleaved with {TFHE_BACKEND}: {rounds} rounds of {calls} calls per side, first side alternating; \
             ours on the caller's thread with the backend's settings, theirs in a one-thread pool; \
             per-round ratio of medians {lo:.3}..{hi:.3} (median {:.3})",
            median_sorted(&sorted)
        );
        ours_rows.push(
            Row::new(
                op.name(),
                set.name(),
                &ours_name,
                backend.ntt_variant(),
                1,
                row_plan,
                Stats::from_runs(&ours_runs)?,
            )
            .with_note(note),
        );
        theirs_rows.push(
            Row::new(op.name(), set.name(), &theirs_name, "tfhe-fft", 1, row_plan, Stats::from_runs(&theirs_runs)?)
                .with_note(format!("{TFHE_NOTE}; interleaved with {ours_name}")),
        );
    }
    Ok((ours_rows, theirs_rows))
}

/// Median of unsorted samples.
fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    median_sorted(&s)
}

fn ok<T>(value: T) -> Result<()> {
    std::hint::black_box(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Iterations;

    #[test]
    fn peers_produce_rows() {
        let config = SuiteConfig {
            iterations: Iterations::uniform(2),
            warmup: 0,
            runs: 1,
            ntt_batch_sizes: vec![1],
            operations: vec![Operation::NttForward, Operation::GateAnd, Operation::GateNot],
            ..SuiteConfig::default()
        };
        let rows = run_peers(&[ParamSet::PN10QP27, ParamSet::PN11QP54], &config, &mut |_| {}).unwrap();
        let names: Vec<(&str, &str, &str)> =
            rows.iter().map(|r| (r.backend.as_str(), r.operation.as_str(), r.param_set.as_str())).collect();
        assert!(names.contains(&(TFHE_NTT_BACKEND, "ntt_forward", "PN10QP27")));
        assert!(names.contains(&(TFHE_NTT_BACKEND, "ntt_forward", "PN11QP54")));
        assert!(names.contains(&(TFHE_BACKEND, "gate_and", "PN10QP27")));
        assert!(names.contains(&(TFHE_BACKEND, "gate_not", "PN10QP27")));
    }

    #[test]
    fn own_kernel_rows_pair_with_tfhe_ntt_and_unknown_variants_are_errors() {
        let config = SuiteConfig {
            iterations: Iterations::uniform(2),
            warmup: 0,
            runs: 1,
            ntt_batch_sizes: vec![1, 3],
            operations: vec![Operation::NttForward, Operation::NttInverse, Operation::GateAnd],
            ..SuiteConfig::default()
        };
        let sets = [ParamSet::PN10QP27, ParamSet::PN11QP54];
        let ours = run_own_ntt_kernels(&sets, &config, "reference").unwrap();
        assert_eq!(ours.len(), 2 * 2 * 2, "two sets, two directions, two batch sizes; no gate rows");
        assert!(ours.iter().all(|r| r.backend == "cpu:reference/kernel"));
        let theirs = run_tfhe_ntt(&sets, &config, &mut |_| {}).unwrap();
        assert_eq!(crate::ratios(&ours, &theirs).len(), ours.len(), "every kernel row has its peer row");
        assert!(run_own_ntt_kernels(&sets, &config, "no-such-variant").is_err());
    }

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
}
