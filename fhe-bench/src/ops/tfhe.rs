//! The bit scheme's operations, their default iteration counts, and the suite runner that
//! measures them on one backend and parameter set.

use std::fmt;
use std::str::FromStr;

use fhe_api::rng::SplitMix64;
use fhe_api::{Backend, ExtractedLwe, KeySet, LweCiphertext, ParamSet, PreparedKey, Seed};
use fhe_schemes::tfhe::gates::{self, Gate};
use serde::{Deserialize, Serialize};

use super::Progress;
use crate::error::{Error, Result};
use crate::report::Row;
use crate::stats::{measure_with, Plan};

/// One measured operation. Its JSON form is the snake_case name ([`Operation::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `ntt_forward` on `batch_size` polynomials in one call.
    NttForward,
    /// `ntt_inverse` on `batch_size` polynomials in one call.
    NttInverse,
    /// `key_switch_batch` on one `ExtractedLwe` (from `blind_rotate_batch`), a different
    /// one each call ([`KEY_SWITCH_INPUTS`] in turn).
    KeySwitch,
    /// `bootstrap_batch` with one input.
    Bootstrap,
    /// `bootstrap_batch` with `batch_size` inputs (report per-ciphertext throughput).
    BootstrapBatch,
    GateAnd,
    GateOr,
    GateNand,
    GateNor,
    GateXor,
    GateXnor,
    /// `mux_batch` on one triple.
    GateMux,
    /// `not` (host-only, no bootstrap).
    GateNot,
    /// `keygen_from_seed`: secret, public and evaluation key.
    Keygen,
    /// `encrypt_bit_seeded` of one bit under the public key.
    Encrypt,
    /// `decrypt_bit` of one ciphertext.
    Decrypt,
}

impl Operation {
    /// Every operation, in report order.
    pub const ALL: [Operation; 16] = [
        Operation::NttForward,
        Operation::NttInverse,
        Operation::KeySwitch,
        Operation::Bootstrap,
        Operation::BootstrapBatch,
        Operation::GateAnd,
        Operation::GateOr,
        Operation::GateNand,
        Operation::GateNor,
        Operation::GateXor,
        Operation::GateXnor,
        Operation::GateMux,
        Operation::GateNot,
        Operation::Keygen,
        Operation::Encrypt,
        Operation::Decrypt,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Operation::NttForward => "ntt_forward",
            Operation::NttInverse => "ntt_inverse",
            Operation::KeySwitch => "key_switch",
            Operation::Bootstrap => "bootstrap",
            Operation::BootstrapBatch => "bootstrap_batch",
            Operation::GateAnd => "gate_and",
            Operation::GateOr => "gate_or",
            Operation::GateNand => "gate_nand",
            Operation::GateNor => "gate_nor",
            Operation::GateXor => "gate_xor",
            Operation::GateXnor => "gate_xnor",
            Operation::GateMux => "gate_mux",
            Operation::GateNot => "gate_not",
            Operation::Keygen => "keygen",
            Operation::Encrypt => "encrypt",
            Operation::Decrypt => "decrypt",
        }
    }

    /// The two-input gate behind a `gate_*` operation, if it is one.
    pub const fn gate(self) -> Option<Gate> {
        match self {
            Operation::GateAnd => Some(Gate::And),
            Operation::GateOr => Some(Gate::Or),
            Operation::GateNand => Some(Gate::Nand),
            Operation::GateNor => Some(Gate::Nor),
            Operation::GateXor => Some(Gate::Xor),
            Operation::GateXnor => Some(Gate::Xnor),
            _ => None,
        }
    }

    /// The operation measuring a two-input gate.
    pub const fn of_gate(gate: Gate) -> Operation {
        match gate {
            Gate::And => Operation::GateAnd,
            Gate::Or => Operation::GateOr,
            Gate::Nand => Operation::GateNand,
            Gate::Nor => Operation::GateNor,
            Gate::Xor => Operation::GateXor,
            Gate::Xnor => Operation::GateXnor,
        }
    }

    /// Whether the operation needs an evaluation key (a bootstrap somewhere inside).
    pub const fn needs_bootstrap_key(self) -> bool {
        matches!(
            self,
            Operation::KeySwitch
                | Operation::Bootstrap
                | Operation::BootstrapBatch
                | Operation::GateAnd
                | Operation::GateOr
                | Operation::GateNand
                | Operation::GateNor
                | Operation::GateXor
                | Operation::GateXnor
                | Operation::GateMux
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Operation {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Operation::ALL.into_iter().find(|o| o.name().eq_ignore_ascii_case(s)).ok_or_else(|| Error::UnknownOperation {
            value: s.to_string(),
            valid: Operation::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// Timed iterations per run, by operation family. The defaults are the paper's
/// (NTT 200, key switch 100, bootstrap 30) plus counts for what it does not name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iterations {
    /// Forward and inverse NTT, every batch size.
    pub ntt: usize,
    pub key_switch: usize,
    /// Single bootstrap, and every two-input gate and MUX (one bootstrap each).
    pub bootstrap: usize,
    /// Batched bootstrap (one call bootstraps `bootstrap_batch` ciphertexts).
    pub bootstrap_batch: usize,
    pub keygen: usize,
    /// Encrypt, decrypt and NOT (cheap host operations).
    pub host: usize,
}

impl Default for Iterations {
    fn default() -> Self {
        Iterations { ntt: 200, key_switch: 100, bootstrap: 30, bootstrap_batch: 10, keygen: 5, host: 200 }
    }
}

impl Iterations {
    /// The iteration count of `op`.
    pub fn of(&self, op: Operation) -> usize {
        match op {
            Operation::NttForward | Operation::NttInverse => self.ntt,
            Operation::KeySwitch => self.key_switch,
            Operation::BootstrapBatch => self.bootstrap_batch,
            Operation::Keygen => self.keygen,
            Operation::Encrypt | Operation::Decrypt | Operation::GateNot => self.host,
            _ => self.bootstrap,
        }
    }

    /// Every count set to `n` (smoke runs, tests).
    pub fn uniform(n: usize) -> Iterations {
        Iterations { ntt: n, key_switch: n, bootstrap: n, bootstrap_batch: n, keygen: n, host: n }
    }
}

/// What a suite measures and how often.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteConfig {
    pub iterations: Iterations,
    /// Discarded calls at the start of each run (capped at 1 for keygen: a keygen is slow
    /// and has no cache to warm beyond the first).
    pub warmup: usize,
    /// Runs per operation; their samples are pooled.
    pub runs: usize,
    /// Polynomials per NTT call, one row each.
    pub ntt_batch_sizes: Vec<usize>,
    /// Ciphertexts per call of `bootstrap_batch`.
    pub bootstrap_batch_size: usize,
    /// The operations to measure (default: all of them).
    pub operations: Vec<Operation>,
    /// Root string of the seeds of keys and ciphertexts (results do not depend on it,
    /// but fixing it makes runs repeatable).
    pub seed_root: String,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            iterations: Iterations::default(),
            warmup: 3,
            runs: 3,
            ntt_batch_sizes: vec![1, 32, 1024],
            bootstrap_batch_size: 64,
            operations: Operation::ALL.to_vec(),
            seed_root: "lux-fhe-bench-v1".to_string(),
        }
    }
}

impl SuiteConfig {
    /// The plan of one operation under this configuration.
    pub fn plan(&self, op: Operation) -> Plan {
        let warmup = if op == Operation::Keygen { self.warmup.min(1) } else { self.warmup };
        Plan { iterations: self.iterations.of(op), warmup, runs: self.runs }
    }

    /// The `(operation, batch size)` pairs this configuration measures, in order.
    pub fn cases(&self) -> Vec<(Operation, usize)> {
        let mut out = Vec::new();
        for &op in &self.operations {
            match op {
                Operation::NttForward | Operation::NttInverse => {
                    out.extend(self.ntt_batch_sizes.iter().map(|&b| (op, b)));
                }
                Operation::BootstrapBatch => out.push((op, self.bootstrap_batch_size)),
                _ => out.push((op, 1)),
            }
        }
        out
    }

    /// Timed calls the whole suite makes (progress totals).
    pub fn total_calls(&self) -> usize {
        self.cases().iter().map(|&(op, _)| self.plan(op).iterations * self.runs).sum()
    }
}

/// Keys and inputs for one backend and parameter set, made once before timing.
pub struct Fixture {
    pub params: ParamSet,
    pub keys: KeySet,
    /// `None` until an operation needs it ([`Fixture::prepared`]).
    prepared: Option<PreparedKey>,
    seed_root: String,
}

impl Fixture {
    /// Generates the keys of `seed_root` on `backend`.
    pub fn new(backend: &dyn Backend, params: ParamSet, seed_root: &str) -> Result<Fixture> {
        let keys = fhe_schemes::tfhe::keygen_from_seed(backend, params, &Seed::derive(seed_root, 0))?;
        Ok(Fixture { params, keys, prepared: None, seed_root: seed_root.to_string() })
    }

    /// The evaluation key in the backend's form, prepared on first use.
    pub fn prepared(&mut self, backend: &dyn Backend) -> Result<&PreparedKey> {
        if self.prepared.is_none() {
            self.prepared = Some(backend.prepare(&self.keys.ek)?);
        }
        Ok(self.prepared.as_ref().expect("just prepared"))
    }

    /// `count` fresh encryptions of alternating bits.
    pub fn ciphertexts(&self, count: usize, offset: u64) -> Result<Vec<LweCiphertext>> {
        (0..count as u64)
            .map(|i| {
                let seed = Seed::derive(&self.seed_root, 1 + offset + i);
                Ok(fhe_schemes::tfhe::encrypt_bit_seeded(&self.keys.pk, i % 2 == 0, &seed)?)
            })
            .collect()
    }

    /// `polys` polynomials of uniform coefficients below `Q` (deterministic).
    pub fn ntt_input(&self, polys: usize) -> Vec<u64> {
        ntt_input(self.params, polys)
    }
}

/// `polys` polynomials of `params`' ring with uniform coefficients below `Q`
/// (deterministic: the same input for every backend and run).
pub fn ntt_input(params: ParamSet, polys: usize) -> Vec<u64> {
    let p = params.params();
    let q = p.q_ring();
    let mut r = SplitMix64::new(0x9e37_79b9_7f4a_7c15);
    (0..polys * p.big_n()).map(|_| r.below(q)).collect()
}

/// How many distinct extracted samples the `key_switch` row cycles through (fewer when
/// the plan makes fewer calls): together they read more than the whole key, so its rows
/// come from memory (`PN10QP27`: each reads about 3,000 rows of 1,114 bytes, 3.3 MiB, of
/// a 106 MiB key); one repeated input would time rows in cache (`docs/perf/2026-12-05.md`, "Lab
/// notes moved from the code").
pub const KEY_SWITCH_INPUTS: usize = 64;

/// Times `call` by `plan`; its output is kept from the optimizer and dropped inside the
/// timed call, as before.
fn timed<T>(
    mut call: impl FnMut() -> fhe_api::Result<T>,
    plan: Plan,
    tick: &mut dyn FnMut(usize, usize),
) -> Result<crate::Stats> {
    measure_with(
        || {
            std::hint::black_box(call()?);
            Ok(())
        },
        plan,
        tick,
    )
}

/// Measures one `(operation, batch size)` on `backend`, returning its row.
pub fn measure_case(
    backend: &dyn Backend,
    fixture: &mut Fixture,
    op: Operation,
    batch_size: usize,
    plan: Plan,
    tick: &mut dyn FnMut(usize, usize),
) -> Result<Row> {
    if batch_size == 0 {
        return Err(Error::InvalidInput(format!("{op}: batch size must be >= 1")));
    }
    let params = fixture.params;
    let stats = match op {
        Operation::NttForward | Operation::NttInverse => {
            let mut data = fixture.ntt_input(batch_size);
            let forward = op == Operation::NttForward;
            measure_with(
                || {
                    if forward {
                        backend.ntt_forward(params, &mut data)?;
                    } else {
                        backend.ntt_inverse(params, &mut data)?;
                    }
                    std::hint::black_box(&data);
                    Ok(())
                },
                plan,
                tick,
            )?
        }
        Operation::KeySwitch => {
            // Distinct inputs in turn, so the key's rows come from memory ([`KEY_SWITCH_INPUTS`]).
            let calls = (plan.warmup + plan.iterations) * plan.runs;
            let cts = fixture.ciphertexts(KEY_SWITCH_INPUTS.min(calls.max(1)), 0)?;
            let key = fixture.prepared(backend)?;
            let rotated: Vec<ExtractedLwe> = backend.blind_rotate_batch(key, &cts)?;
            let mut next = 0;
            let mut input = || {
                next += 1;
                std::slice::from_ref(&rotated[(next - 1) % rotated.len()])
            };
            timed(|| backend.key_switch_batch(key, input()), plan, tick)?
        }
        Operation::Bootstrap | Operation::BootstrapBatch => {
            let n = if op == Operation::Bootstrap { 1 } else { batch_size };
            let cts = fixture.ciphertexts(n, 0)?;
            let key = fixture.prepared(backend)?;
            timed(|| backend.bootstrap_batch(key, &cts), plan, tick)?
        }
        Operation::GateMux => {
            let cts = fixture.ciphertexts(3, 0)?;
            let key = fixture.prepared(backend)?;
            timed(|| gates::mux_batch(backend, key, &cts[0..1], &cts[1..2], &cts[2..3]), plan, tick)?
        }
        Operation::GateNot => {
            let cts = fixture.ciphertexts(1, 0)?;
            timed(|| Ok(gates::not(std::hint::black_box(&cts[0]))), plan, tick)?
        }
        Operation::Keygen => {
            let mut i = 1000u64;
            let root = fixture.seed_root.clone();
            let mut seed = || {
                i += 1;
                Seed::derive(&root, i)
            };
            timed(|| fhe_schemes::tfhe::keygen_from_seed(backend, params, &seed()), plan, tick)?
        }
        Operation::Encrypt => {
            let seed = Seed::derive(&fixture.seed_root, 2000);
            let pk = &fixture.keys.pk;
            timed(|| fhe_schemes::tfhe::encrypt_bit_seeded(pk, true, &seed), plan, tick)?
        }
        Operation::Decrypt => {
            let cts = fixture.ciphertexts(1, 0)?;
            timed(|| fhe_schemes::tfhe::decrypt_bit(&fixture.keys.sk, &cts[0]), plan, tick)?
        }
        gate_op => {
            let gate = gate_op.gate().expect("every other operation is a two-input gate");
            let cts = fixture.ciphertexts(2, 0)?;
            let key = fixture.prepared(backend)?;
            timed(|| gates::gate_batch(backend, key, gate, &cts[0..1], &cts[1..2]), plan, tick)?
        }
    };
    Ok(Row::new(op.name(), params.name(), &backend.name(), backend.ntt_variant(), batch_size, plan, stats))
}

/// Measures every case of `config` on `backend` for one parameter set.
///
/// Keys are generated (and the evaluation key prepared) once, untimed, before the
/// first case that needs them. Progress goes to `progress` and to `tracing` (info).
pub fn run_suite(
    backend: &dyn Backend,
    params: ParamSet,
    config: &SuiteConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<Row>> {
    tracing::info!(backend = %backend.name(), params = %params, "generating bench keys");
    let mut fixture = Fixture::new(backend, params, &config.seed_root)?;
    let mut rows = Vec::new();
    for (op, batch) in config.cases() {
        let plan = config.plan(op);
        let label = format!("{} {} {} x{}", backend.name(), params, op, batch);
        let calls = plan.iterations * plan.runs;
        progress(&Progress::Start { label: label.clone(), calls });
        let row = measure_case(backend, &mut fixture, op, batch, plan, &mut |done, calls| {
            progress(&Progress::Tick { label: label.clone(), done, calls })
        })?;
        tracing::info!(
            case = %label,
            median_ns = row.stats.median_ns,
            p99_ns = row.stats.p99_ns,
            cv = row.stats.cv,
            "measured"
        );
        progress(&Progress::Finish { label });
        rows.push(row);
    }
    Ok(rows)
}

/// The whole measurement of one backend as a report: the gate outcome first (run by the
/// caller), then [`run_suite`] for each parameter set, unless the gate failed, in which
/// case nothing is measured and the report carries no rows.
pub fn run_report(
    backend: &dyn Backend,
    params: &[ParamSet],
    config: &SuiteConfig,
    lane: &str,
    gate: crate::report::EquivalenceGate,
    progress: &mut dyn FnMut(&Progress),
) -> Result<crate::report::Report> {
    let mut rows = Vec::new();
    if gate.status == crate::report::GateState::Failed {
        tracing::warn!(backend = %backend.name(), "equivalence gate failed: no numbers reported");
    } else {
        for &set in params {
            rows.extend(run_suite(backend, set, config, progress)?);
        }
    }
    let env = crate::env::Environment::capture(Some(backend));
    Ok(crate::report::Report::new(lane, &backend.name(), env, gate, rows))
}
