//! TFHE-rs and tfhe-ntt, timed in the same process with the same loop as our backends
//! (cargo feature `peers`): TFHE-rs boolean gates (`peer:tfhe`) and the tfhe-ntt NTT
//! (`peer:tfhe-ntt`).
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
//! `interleaved` times our gates and NTT kernels and the peers' alternately, round by
//! round, for machines whose speed drifts between the minute our suite runs and the
//! minute the peers run (rows `<ours>/interleaved` and `peer:<peer>/interleaved`).

mod interleaved;

use std::sync::Arc;

use fhe_api::ParamSet;
use fhe_cpu::ntt::{find_variant, NttEngine, NttTables};
use tfhe::boolean::prelude::*;

use crate::error::{Error, Result};
use crate::ops::tfhe::{Operation, SuiteConfig};
use crate::ops::Progress;
use crate::report::Row;
use crate::stats::{measure_with, Plan, Stats};

pub use interleaved::{run_interleaved_gates, run_interleaved_ntt, INTERLEAVED};

pub const TFHE_BACKEND: &str = "peer:tfhe";
pub const TFHE_NTT_BACKEND: &str = "peer:tfhe-ntt";

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
    crate::ops::maybe_one_thread(true, f)
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

/// One timed call, ours or a peer's.
pub(crate) type Call<'a> = Box<dyn FnMut() -> Result<()> + 'a>;

/// One NTT case that both sides time the same way: `batch` polynomials of `set`'s ring,
/// transformed in place one after another, from the same input words.
#[derive(Clone, Copy, Debug)]
struct NttCase {
    set: ParamSet,
    op: Operation,
    batch: usize,
}

impl NttCase {
    /// The NTT cases of `config` for `set`, in its order.
    fn all(set: ParamSet, config: &SuiteConfig) -> Vec<NttCase> {
        config
            .cases()
            .into_iter()
            .filter(|(op, _)| matches!(op, Operation::NttForward | Operation::NttInverse))
            .map(|(op, batch)| NttCase { set, op, batch })
            .collect()
    }

    fn forward(&self) -> bool {
        self.op == Operation::NttForward
    }

    /// `(N, Q)` of the ring.
    fn ring(&self) -> (usize, u64) {
        let p = self.set.params();
        (p.big_n(), p.q_ring())
    }

    /// The input words, each below `Q`.
    fn input(&self) -> Vec<u64> {
        let (n, q) = self.ring();
        (0..(self.batch * n) as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q).collect()
    }

    /// [`NttCase::input`] on 32-bit words (rings with `Q < 2^32`).
    fn input32(&self) -> Vec<u32> {
        self.input().into_iter().map(|x| x as u32).collect()
    }

    fn row(&self, backend: &str, variant: &str, plan: Plan, stats: Stats) -> Row {
        Row::new(self.op.name(), self.set.name(), backend, variant, self.batch, plan, stats)
    }
}

/// A call that transforms each polynomial of `data` in place, one after another, with
/// `fwd` (a forward case) or `inv`.
fn per_poly<'a, T: 'a>(
    mut data: Vec<T>,
    case: NttCase,
    fwd: impl Fn(&mut [T]) + 'a,
    inv: impl Fn(&mut [T]) + 'a,
) -> Call<'a> {
    let (n, _) = case.ring();
    let forward = case.forward();
    Box::new(move || {
        for poly in data.chunks_exact_mut(n) {
            if forward {
                fwd(poly);
            } else {
                inv(poly);
            }
        }
        ok(&data)
    })
}

/// Our `engine` on `case`, as tfhe-ntt is called: in place, one polynomial after another,
/// on 32-bit words where the ring allows (`forward32`, the blind rotation's form; `u64`
/// words for the 54-bit ring), without the `NttOps` input validation. The second value
/// names the word type.
fn own_ntt_call(engine: &dyn NttEngine, case: NttCase) -> (Call<'_>, &'static str) {
    if case.ring().1 < 1 << 32 {
        let fwd = |p: &mut [u32]| engine.forward32(p);
        let inv = |p: &mut [u32]| engine.inverse32(p);
        (per_poly(case.input32(), case, fwd, inv), "u32")
    } else {
        (per_poly(case.input(), case, |p| engine.forward(p), |p| engine.inverse(p)), "u64")
    }
}

/// tfhe-ntt's `plan` on `case`: forward, or inverse without its separate normalization pass.
fn tfhe_ntt_call(plan: &NttPlan, case: NttCase) -> Call<'_> {
    match plan {
        NttPlan::P32(pl) => per_poly(case.input32(), case, |p| pl.fwd(p), |p| pl.inv(p)),
        NttPlan::P64(pl) => per_poly(case.input(), case, |p| pl.fwd(p), |p| pl.inv(p)),
    }
}

/// The `variant` engine of fhe-cpu for `set`'s ring.
fn own_engine(set: ParamSet, variant: &str) -> Result<Box<dyn NttEngine>> {
    let v = find_variant(variant).map_err(|e| Error::Peer { peer: TFHE_NTT_BACKEND, message: e.to_string() })?;
    Ok((v.build)(Arc::new(NttTables::for_params(set.params()))))
}

/// Our CPU NTT kernel timed with exactly the loop of [`run_tfhe_ntt`] ([`own_ntt_call`]).
/// Backend `cpu:<variant>/kernel`: the like-for-like row for `peer:tfhe-ntt` (the
/// `cpu:<variant>` rows time the public `NttOps` call on `u64` words).
pub fn run_own_ntt_kernels(params: &[ParamSet], config: &SuiteConfig, variant: &str) -> Result<Vec<Row>> {
    one_thread(|| {
        let backend = format!("cpu:{variant}/kernel");
        let mut rows = Vec::new();
        for &set in params {
            let engine = own_engine(set, variant)?;
            for case in NttCase::all(set, config) {
                let plan = config.plan(case.op);
                let label = format!("{backend} {set} {} x{}", case.op, case.batch);
                let (mut call, words) = own_ntt_call(&*engine, case);
                let stats = timed(label, plan, &mut |_| {}, &mut call)?;
                rows.push(
                    case.row(&backend, variant, plan, stats)
                        .with_note(format!("fhe-cpu {variant} engine in place on {words} words, 1 thread")),
                );
            }
        }
        Ok(rows)
    })
}

/// tfhe-ntt forward and inverse on our rings ([`tfhe_ntt_call`]).
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
        for case in NttCase::all(set, config) {
            let p = config.plan(case.op);
            let label = format!("{TFHE_NTT_BACKEND} {set} {} x{}", case.op, case.batch);
            let stats = timed(label, p, progress, tfhe_ntt_call(&plan, case))?;
            let (n, q) = case.ring();
            rows.push(
                case.row(TFHE_NTT_BACKEND, variant, p, stats)
                    .with_note(format!("tfhe_ntt::{variant}::Plan::try_new({n}, {q}), 1 thread")),
            );
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

fn ok<T>(value: T) -> Result<()> {
    std::hint::black_box(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::tfhe::Iterations;

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
}
