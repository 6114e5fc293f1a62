//! The soak: many random gates, inputs chained from earlier outputs, every output
//! decrypted and checked against the plaintext circuit.
//!
//! A pool of [`POOL`] ciphertexts starts as fresh encryptions of random bits. Each
//! round draws up to [`ROUND`] operations (gate type uniform over the six two-input
//! gates, MUX and NOT; inputs uniform over the pool), runs them batched per gate type,
//! checks every output, and writes each output back over a random pool slot, so later
//! rounds consume bootstrapped (and NOT-ed) outputs. Randomness: stream `soak` of the
//! master seed `Seed::derive("lux-fhe-soak-v1", seed_index)` (keygen, bits, gate types,
//! slots), and `Seed::derive("lux-fhe-soak-v1/encrypt", seed_index * POOL + i)` for the
//! pool's encryptions, so a soak is reproducible.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use fhe_api::rng::stream;
use fhe_api::{Backend, LweCiphertext, ParamSet, Seed};
use fhe_schemes::tfhe::gates::{gate_batch, mux_batch, not};
use fhe_schemes::tfhe::Gate;

use crate::{Result, SOAK_ROOT};

/// Ciphertexts in the pool.
pub const POOL: usize = 64;
/// Operations per round (one batch per gate type).
pub const ROUND: usize = 128;

/// The outcome of a soak.
#[derive(Clone, Debug)]
pub struct SoakReport {
    pub backend: String,
    pub params: ParamSet,
    /// Operations evaluated (gates, MUX and NOT).
    pub gates: u64,
    /// Outputs that decrypted to the wrong bit (or to no bit).
    pub wrong: u64,
    /// Operations per gate name (`and`, ..., `mux`, `not`).
    pub by_gate: BTreeMap<&'static str, u64>,
    pub elapsed: Duration,
}

impl SoakReport {
    pub fn ok(&self) -> bool {
        self.wrong == 0
    }
}

#[derive(Clone, Copy)]
enum Op {
    Gate(Gate),
    Mux,
    Not,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Gate(g) => g.name(),
            Op::Mux => "mux",
            Op::Not => "not",
        }
    }
}

/// Evaluates `gates` random operations on `backend` and counts wrong results.
pub fn soak(backend: &dyn Backend, params: ParamSet, gates: u64, seed_index: u64) -> Result<SoakReport> {
    let start = Instant::now();
    let master = Seed::derive(SOAK_ROOT, seed_index);
    let keys = fhe_schemes::tfhe::keygen_from_seed(backend, params, &master)?;
    let key = backend.prepare(&keys.ek)?;
    let mut rng = stream(&master.0, "soak", 0);
    let mut pick = |m: usize| (rng.next_u64() % m as u64) as usize;

    let mut plain: Vec<bool> = Vec::with_capacity(POOL);
    let mut pool: Vec<LweCiphertext> = Vec::with_capacity(POOL);
    let enc_root = format!("{SOAK_ROOT}/encrypt");
    for i in 0..POOL as u64 {
        let bit = pick(2) == 1;
        plain.push(bit);
        pool.push(fhe_schemes::tfhe::encrypt_bit_seeded(
            &keys.pk,
            bit,
            &Seed::derive(&enc_root, seed_index * POOL as u64 + i),
        )?);
    }

    let ops: Vec<Op> = Gate::ALL.iter().map(|&g| Op::Gate(g)).chain([Op::Mux, Op::Not]).collect();
    let mut report = SoakReport {
        backend: backend.name(),
        params,
        gates: 0,
        wrong: 0,
        by_gate: BTreeMap::new(),
        elapsed: Duration::ZERO,
    };
    while report.gates < gates {
        let width = ROUND.min((gates - report.gates) as usize);
        // (op, input indices, output slot) for every operation of the round.
        let mut round: Vec<Vec<([usize; 3], usize)>> = vec![Vec::new(); ops.len()];
        for _ in 0..width {
            let op = pick(ops.len());
            round[op].push(([pick(POOL), pick(POOL), pick(POOL)], pick(POOL)));
        }
        let mut writes: Vec<(usize, bool, LweCiphertext)> = Vec::with_capacity(width);
        for (op, items) in ops.iter().zip(&round) {
            if items.is_empty() {
                continue;
            }
            let arg = |j: usize| items.iter().map(|(ins, _)| pool[ins[j]].clone()).collect::<Vec<_>>();
            let outs = match op {
                Op::Gate(g) => gate_batch(backend, &key, *g, &arg(0), &arg(1))?,
                Op::Mux => mux_batch(backend, &key, &arg(0), &arg(1), &arg(2))?,
                Op::Not => items.iter().map(|(ins, _)| not(&pool[ins[0]])).collect(),
            };
            for ((ins, slot), ct) in items.iter().zip(outs) {
                let [a, b, c] = ins.map(|i| plain[i]);
                let expected = match op {
                    Op::Gate(g) => g.eval_plain(a, b),
                    Op::Mux => {
                        if a {
                            b
                        } else {
                            c
                        }
                    }
                    Op::Not => !a,
                };
                let got = fhe_schemes::tfhe::decrypt_bit(&keys.sk, &ct);
                if got.as_ref().ok() != Some(&expected) {
                    report.wrong += 1;
                    tracing::error!(op = op.name(), expected, ?got, "soak: wrong result");
                }
                writes.push((*slot, expected, ct));
            }
            *report.by_gate.entry(op.name()).or_default() += items.len() as u64;
        }
        for (slot, bit, ct) in writes {
            plain[slot] = bit;
            pool[slot] = ct;
        }
        report.gates += width as u64;
        tracing::info!(done = report.gates, of = gates, wrong = report.wrong, "soak");
    }
    report.elapsed = start.elapsed();
    Ok(report)
}
