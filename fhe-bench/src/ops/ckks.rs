//! CKKS measuring: seed 1's operations on one preset, with the precision of each
//! operation's decrypted output in its row, and the alternated comparison with OpenFHE
//! ([`crate::peers::openfhe`], a Python worker the bench starts).
//!
//! - [`CkksOp`]: the operations (`ckks_keygen`, `ckks_encrypt`, `ckks_decrypt`,
//!   `ckks_mul_relin`, `ckks_rescale`, `ckks_rotate`, `ckks_hoisted4`,
//!   `ckks_mul_plain_kept`, and `ckks_mul_plain`, which has no OpenFHE counterpart),
//!   each timed as OpenFHE's worker times its counterpart (what one call covers is in
//!   `bench/SCHEMA.md`);
//! - [`CkksFixture`]: keys, encoded and encrypted inputs made once, untimed, and the
//!   decryption of every operation's output checked against plaintext arithmetic before
//!   anything is timed ([`CkksFixture::check`]);
//! - [`run_ckks`]: our rows, `runs` runs of `iterations` timed calls after `warmup`
//!   discarded ones, optionally inside a one-thread rayon pool;
//! - [`run_alternated`]: ours and OpenFHE's in alternation, round by round, the side
//!   that goes first alternating (rows `<ours>/interleaved` and
//!   `peer:openfhe/interleaved`, one run per round, so [`crate::ratios`] gives the
//!   per-round ratio as for the other peers);
//!
//! Every result object is dropped after the clock stops, as OpenFHE's worker releases
//! its results after its clock stops.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use fhe_api::ckks::entities::{KeySet, Plaintext};
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::ckks::PreparedPlaintext;
use fhe_api::rng::SplitMix64;
use fhe_api::{Backend, Seed};
use fhe_schemes::ckks::Complex;
use fhe_schemes::ckks::Evaluator;
use fhe_schemes::ckks::KeygenOptions;
use fhe_schemes::ckks::{precision_bits, Context};

use super::{maybe_one_thread, Progress};
use crate::error::{Error, Result};
use crate::report::{alternate, round_spread, Row, INTERLEAVED};
use crate::stats::{Plan, Stats};

use crate::peers::openfhe::{self, OpenFhe, PeerPrecision};

/// Rotation steps of the keys: one rotation uses 1, four hoisted rotations 1..4.
pub const ROTATIONS: [i64; 4] = [1, 2, 3, 4];
/// Root string of the bench's key, encryption and value seeds.
pub const SEED_ROOT: &str = "lux-fhe-bench-ckks-v1";
/// A decrypted output below this many bits fails the check that runs before timing.
pub const MIN_PRECISION_BITS: f64 = 10.0;

/// One measured CKKS operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CkksOp {
    /// `keygen_from_seed`: secret, public, relinearization and Galois keys for
    /// [`ROTATIONS`] (OpenFHE: `KeyGen`, `EvalMultKeyGen`, `EvalRotateKeyGen(1..4)`).
    Keygen,
    /// Public-key encryption of a plaintext encoded beforehand (`encrypt_seeded`).
    Encrypt,
    /// Decryption and decoding of all slots of a fresh top-level ciphertext.
    Decrypt,
    /// Multiplication with relinearization, no rescale, of two top-level ciphertexts.
    MulRelin,
    /// Rescale of one relinearized top-level product.
    Rescale,
    /// One rotation by one slot.
    Rotate,
    /// Four rotations (1..4) sharing one decomposition (`rotate_hoisted`).
    Hoisted4,
    /// Multiplication of a top-level ciphertext by a plaintext kept prepared on the
    /// backend (`prepare_plaintext` once, untimed; OpenFHE: `EvalMult(ct, pt)`, its
    /// plaintexts held in evaluation form).
    MulPlainKept,
    /// The same with a host plaintext, prepared (cut to the level, taken to evaluation
    /// form on the backend) on every call: the only form before plaintexts could be
    /// kept. No OpenFHE counterpart.
    MulPlain,
}

impl CkksOp {
    pub const ALL: [CkksOp; 9] = [
        CkksOp::Keygen,
        CkksOp::Encrypt,
        CkksOp::Decrypt,
        CkksOp::MulRelin,
        CkksOp::Rescale,
        CkksOp::Rotate,
        CkksOp::Hoisted4,
        CkksOp::MulPlainKept,
        CkksOp::MulPlain,
    ];

    /// The row's `operation`.
    pub const fn name(self) -> &'static str {
        match self {
            CkksOp::Keygen => "ckks_keygen",
            CkksOp::Encrypt => "ckks_encrypt",
            CkksOp::Decrypt => "ckks_decrypt",
            CkksOp::MulRelin => "ckks_mul_relin",
            CkksOp::Rescale => "ckks_rescale",
            CkksOp::Rotate => "ckks_rotate",
            CkksOp::Hoisted4 => "ckks_hoisted4",
            CkksOp::MulPlainKept => "ckks_mul_plain_kept",
            CkksOp::MulPlain => "ckks_mul_plain",
        }
    }

    /// Whether OpenFHE's worker times a counterpart (all but `mul_plain`).
    pub const fn has_peer(self) -> bool {
        !matches!(self, CkksOp::MulPlain)
    }

    /// The name without the `ckks_` prefix: the OpenFHE worker's `op` (`keygen` is its
    /// `setup`).
    pub fn short(self) -> &'static str {
        &self.name()[5..]
    }
}

impl fmt::Display for CkksOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CkksOp {
    type Err = Error;
    /// `ckks_encrypt` or `encrypt`.
    fn from_str(s: &str) -> Result<Self> {
        CkksOp::ALL.into_iter().find(|o| o.name() == s || o.short() == s).ok_or_else(|| Error::UnknownOperation {
            value: s.to_string(),
            valid: CkksOp::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// How many calls to time per operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CkksPlan {
    pub operations: Vec<CkksOp>,
    /// Timed calls per run of every operation but key generation.
    pub iterations: usize,
    /// Timed calls per run of key generation.
    pub keygen_iterations: usize,
    /// Discarded calls at the start of each run (key generation: none, the fixture's
    /// own key generation came just before).
    pub warmup: usize,
    pub runs: usize,
    /// Run our calls inside a one-thread rayon pool (the comparison's setting).
    pub one_thread: bool,
}

impl CkksPlan {
    /// Defaults by ring size: N = 2^16 10 calls (key generation 3), 2^15 20 (3),
    /// 2^14 30 (5), smaller 50 (5); one warm-up call, one run, one thread.
    pub fn for_preset(preset: Preset) -> CkksPlan {
        let (iterations, keygen_iterations) = match preset.params().log_n() {
            16.. => (10, 3),
            15 => (20, 3),
            14 => (30, 5),
            _ => (50, 5),
        };
        CkksPlan {
            operations: CkksOp::ALL.to_vec(),
            iterations,
            keygen_iterations,
            warmup: 1,
            runs: 1,
            one_thread: true,
        }
    }

    /// Calls per round of the alternated comparison: about `iterations` samples per side
    /// over `rounds` rounds.
    pub fn calls_per_round(&self, rounds: usize) -> usize {
        self.iterations.div_ceil(rounds.max(1)).max(1)
    }

    fn plan(&self, op: CkksOp) -> Plan {
        match op {
            CkksOp::Keygen => Plan { iterations: self.keygen_iterations, warmup: 0, runs: self.runs },
            _ => Plan { iterations: self.iterations, warmup: self.warmup, runs: self.runs },
        }
    }

    /// Timed calls of a whole [`run_ckks`].
    pub fn total_calls(&self) -> usize {
        self.operations.iter().map(|&o| self.plan(o).iterations * self.runs).sum()
    }
}

/// `count` values with real and imaginary parts uniform in [-1, 1] (as OpenFHE's
/// worker draws them), from a SplitMix64 stream of `salt`.
pub fn values(count: usize, salt: u64) -> Vec<Complex> {
    let mut r = SplitMix64::new(0x9e37_79b9_7f4a_7c15 ^ salt.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    (0..count).map(|_| Complex { re: r.next_signed_unit(), im: r.next_signed_unit() }).collect()
}

/// The keys every fixture makes: relinearization and Galois keys for [`ROTATIONS`].
pub fn keygen_options() -> KeygenOptions {
    KeygenOptions { relin: true, rotations: ROTATIONS.to_vec(), conjugation: false }
}

fn rotate_plain(v: &[Complex], k: i64) -> Vec<Complex> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

/// Keys and inputs on one backend, made once before timing.
pub struct CkksFixture {
    pub preset: Preset,
    pub ctx: Context,
    pub keys: KeySet,
    pub ev: Evaluator,
    /// The values of `cx` and `cy`.
    pub x: Vec<Complex>,
    pub y: Vec<Complex>,
    /// `x` encoded at the top level (what `encrypt` encrypts).
    pub pt: Plaintext,
    /// `y` encoded at the top level (what the plaintext products multiply by), and the
    /// same kept prepared on the backend.
    pub pt_y: Plaintext,
    pub kept_y: PreparedPlaintext,
    pub cx: Ciphertext,
    pub cy: Ciphertext,
    /// `cx * cy`, relinearized (what `rescale` rescales).
    pub prod: Ciphertext,
    seed_root: String,
    calls: u64,
}

impl CkksFixture {
    /// Keys from `seed_root`, two fresh top-level encryptions and their product.
    pub fn new(backend: Arc<dyn Backend>, preset: Preset, seed_root: &str) -> Result<CkksFixture> {
        let ctx = Context::from_preset(backend, preset)?;
        let keys = ctx.keygen_from_seed(&Seed::derive(seed_root, 0), &keygen_options())?;
        let ev = ctx.evaluator(&keys.eval)?;
        let slots = ctx.params().slots();
        let (x, y) = (values(slots, 1), values(slots, 2));
        let pt = ctx.encode(&x)?;
        let cx = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive(seed_root, 1))?;
        let pt_y = ctx.encode(&y)?;
        let cy = ctx.encrypt_seeded(&keys.pk, &pt_y, &Seed::derive(seed_root, 2))?;
        let kept_y = ev.prepare_plaintext(&pt_y)?;
        let prod = ev.mul(&cx, &cy)?;
        let seed_root = seed_root.to_string();
        Ok(CkksFixture { preset, ctx, keys, ev, x, y, pt, pt_y, kept_y, cx, cy, prod, seed_root, calls: 0 })
    }

    fn decrypt(&self, h: &Ciphertext) -> Result<Vec<Complex>> {
        Ok(self.ctx.decrypt(&self.keys.sk, h)?)
    }

    /// The precision in bits of `op`'s output against plaintext arithmetic (`None` for
    /// key generation): `encrypt` and `decrypt` Dec(Enc(x)) against x, `mul_relin` and
    /// `rescale` Dec(Rescale(x * y)) against x y, `rotate` the rotation by one, and
    /// `hoisted4` the worst of its four rotations, the plaintext products
    /// Dec(Rescale(x * y)) with `y` a plaintext.
    pub fn precision(&self, op: CkksOp) -> Result<Option<f64>> {
        let ev = &self.ev;
        let bits = match op {
            CkksOp::Keygen => return Ok(None),
            CkksOp::Encrypt | CkksOp::Decrypt => precision_bits(&self.decrypt(&self.cx)?, &self.x),
            CkksOp::MulRelin | CkksOp::Rescale => {
                let want: Vec<Complex> = self.x.iter().zip(&self.y).map(|(&a, &b)| a * b).collect();
                precision_bits(&self.decrypt(&ev.rescale(&self.prod)?)?, &want)
            }
            CkksOp::Rotate => precision_bits(&self.decrypt(&ev.rotate(&self.cx, 1)?)?, &rotate_plain(&self.x, 1)),
            CkksOp::MulPlainKept | CkksOp::MulPlain => {
                let want: Vec<Complex> = self.x.iter().zip(&self.y).map(|(&a, &b)| a * b).collect();
                let prod = match op {
                    CkksOp::MulPlain => ev.mul_plain(&self.cx, &self.pt_y)?,
                    _ => ev.mul_plain(&self.cx, &self.kept_y)?,
                };
                precision_bits(&self.decrypt(&ev.rescale(&prod)?)?, &want)
            }
            CkksOp::Hoisted4 => {
                let outs = ev.rotate_hoisted(&self.cx, &ROTATIONS)?;
                let mut worst = f64::INFINITY;
                for (h, &k) in outs.iter().zip(&ROTATIONS) {
                    worst = worst.min(precision_bits(&self.decrypt(h)?, &rotate_plain(&self.x, k)));
                }
                worst
            }
        };
        Ok(Some(bits))
    }

    /// Every operation's precision, checked against [`MIN_PRECISION_BITS`] (the
    /// decryption check that runs before any timing).
    pub fn check(&self, ops: &[CkksOp]) -> Result<Vec<(CkksOp, Option<f64>)>> {
        let mut out = Vec::with_capacity(ops.len());
        for &op in ops {
            let bits = self.precision(op)?;
            if let Some(b) = bits.filter(|b| b.is_nan() || *b < MIN_PRECISION_BITS) {
                return Err(Error::InvalidInput(format!(
                    "{} {op}: the decrypted output has {b:.1} bits of precision (< {MIN_PRECISION_BITS}): \
                     not timing a wrong result",
                    self.preset
                )));
            }
            out.push((op, bits));
        }
        Ok(out)
    }

    /// `calls` timed calls of `op` after `warmup` discarded ones; one `Instant` pair per
    /// call, the result dropped after the clock stops.
    pub fn sample(&mut self, op: CkksOp, calls: usize, warmup: usize) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(calls);
        for i in 0..warmup + calls {
            let ns = self.call(op)?;
            if i >= warmup {
                out.push(ns);
            }
        }
        Ok(out)
    }

    /// One call of `op`: its wall-clock nanoseconds.
    fn call(&mut self, op: CkksOp) -> Result<f64> {
        self.calls += 1;
        let seed = Seed::derive(&self.seed_root, 1000 + self.calls);
        fn timed<T>(f: impl FnOnce() -> fhe_api::Result<T>) -> Result<f64> {
            let start = Instant::now();
            let out = std::hint::black_box(f()?);
            let ns = start.elapsed().as_nanos() as f64;
            drop(out);
            Ok(ns)
        }
        let (ctx, keys, ev) = (&self.ctx, &self.keys, &self.ev);
        match op {
            CkksOp::Keygen => timed(|| ctx.keygen_from_seed(&seed, &keygen_options())),
            CkksOp::Encrypt => timed(|| ctx.encrypt_seeded(&keys.pk, &self.pt, &seed)),
            CkksOp::Decrypt => timed(|| ctx.decrypt(&keys.sk, &self.cx)),
            CkksOp::MulRelin => timed(|| ev.mul(&self.cx, &self.cy)),
            CkksOp::Rescale => timed(|| ev.rescale(&self.prod)),
            CkksOp::Rotate => timed(|| ev.rotate(&self.cx, 1)),
            CkksOp::Hoisted4 => timed(|| ev.rotate_hoisted(&self.cx, &ROTATIONS)),
            CkksOp::MulPlainKept => timed(|| ev.mul_plain(&self.cx, &self.kept_y)),
            CkksOp::MulPlain => timed(|| ev.mul_plain(&self.cx, &self.pt_y)),
        }
    }
}

fn thread_note(one_thread: bool) -> &'static str {
    if one_thread {
        "one thread (a one-thread rayon pool)"
    } else {
        "the process's rayon pool"
    }
}

/// Our rows for `plan.operations` on `fixture`'s backend: `runs` runs of `iterations`
/// timed calls after `warmup` discarded ones (key generation: `keygen_iterations`, no
/// warm-up), each row with the operation's precision. The decryption check runs first.
pub fn run_ckks(fixture: &mut CkksFixture, plan: &CkksPlan, progress: &mut dyn FnMut(&Progress)) -> Result<Vec<Row>> {
    if plan.iterations == 0 || plan.keygen_iterations == 0 || plan.runs == 0 {
        return Err(Error::InvalidPlan("CKKS iterations and runs must be >= 1".into()));
    }
    let precision = maybe_one_thread(plan.one_thread, || fixture.check(&plan.operations))?;
    let backend = fixture.ctx.backend().clone();
    let preset = fixture.preset.name();
    let mut rows = Vec::new();
    for (op, bits) in precision {
        let p = plan.plan(op);
        let label = format!("{} {preset} {op}", backend.name());
        progress(&Progress::Start { label: label.clone(), calls: p.iterations * p.runs });
        let mut runs = Vec::with_capacity(p.runs);
        for r in 0..p.runs {
            runs.push(maybe_one_thread(plan.one_thread, || fixture.sample(op, p.iterations, p.warmup))?);
            progress(&Progress::Tick {
                label: label.clone(),
                done: (r + 1) * p.iterations,
                calls: p.iterations * p.runs,
            });
        }
        progress(&Progress::Finish { label });
        let stats = Stats::from_runs(&runs)?;
        tracing::info!(%op, preset, median_ns = stats.median_ns, p99_ns = stats.p99_ns, "measured CKKS");
        rows.push(
            Row::new(op.name(), preset, &backend.name(), backend.ntt_variant(), 1, p, stats)
                .with_precision(bits)
                .with_note(thread_note(plan.one_thread)),
        );
    }
    Ok(rows)
}

/// A peer timed in alternation with ours ([`OpenFhe`]; tests use a fake).
pub trait CkksPeer {
    /// `calls` timed calls of `op` after `warmup` discarded ones, in nanoseconds.
    fn sample(&mut self, op: CkksOp, calls: usize, warmup: usize) -> Result<Vec<f64>>;
    /// The peer's precision on its current set-up.
    fn precision(&mut self) -> Result<PeerPrecision>;
    /// Version, build and parameters, for its rows' notes.
    fn describe(&self) -> String;
}

impl CkksPeer for OpenFhe {
    fn sample(&mut self, op: CkksOp, calls: usize, warmup: usize) -> Result<Vec<f64>> {
        OpenFhe::sample(self, op, calls, warmup)
    }
    fn precision(&mut self) -> Result<PeerPrecision> {
        OpenFhe::precision(self)
    }
    fn describe(&self) -> String {
        OpenFhe::describe(self)
    }
}

/// Ours and OpenFHE's, alternated: for each operation, `rounds` rounds of `calls` timed
/// calls per side (key generation: one call per round), each side's round starting with
/// `warmup` discarded calls (key generation: none), ours first in even rounds and theirs
/// first in odd ones. Ours run as [`run_ckks`] runs them; `peer` must have been set up
/// for the same preset ([`OpenFhe::setup_for`]), with one thread. Returns
/// `(ours, theirs)`, one row per operation and side, each holding one run per round.
pub fn run_alternated(
    fixture: &mut CkksFixture,
    peer: &mut dyn CkksPeer,
    plan: &CkksPlan,
    rounds: usize,
    calls: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Vec<Row>, Vec<Row>)> {
    if rounds == 0 || calls == 0 {
        return Err(Error::InvalidPlan(format!("rounds ({rounds}) and calls ({calls}) must be >= 1")));
    }
    if let Some(op) = plan.operations.iter().find(|o| !o.has_peer()) {
        return Err(Error::InvalidPlan(format!("{op} has no OpenFHE counterpart to alternate with")));
    }
    let ours_precision = maybe_one_thread(plan.one_thread, || fixture.check(&plan.operations))?;
    let backend = fixture.ctx.backend().clone();
    let preset = fixture.preset;
    let ours_name = format!("{}{INTERLEAVED}", backend.name());
    let theirs_name = format!("{}{INTERLEAVED}", openfhe::PEER_BACKEND);
    let (mut ours_rows, mut theirs_rows) = (Vec::new(), Vec::new());
    for (op, ours_bits) in ours_precision {
        let (c, w) = if op == CkksOp::Keygen { (1, 0) } else { (calls, plan.warmup) };
        let label = format!("{} vs openfhe {preset} {op}", backend.name());
        progress(&Progress::Start { label: label.clone(), calls: rounds });
        let (ours, theirs) = alternate(
            rounds,
            || maybe_one_thread(plan.one_thread, || fixture.sample(op, c, w)),
            || peer.sample(op, c, w),
            &mut |round| progress(&Progress::Tick { label: label.clone(), done: round + 1, calls: rounds }),
        )?;
        progress(&Progress::Finish { label });
        let row_plan = Plan { iterations: c, warmup: w, runs: rounds };
        let ours_row = Row::new(
            op.name(),
            preset.name(),
            &ours_name,
            backend.ntt_variant(),
            1,
            row_plan,
            Stats::from_runs(&ours)?,
        );
        let theirs_row = Row::new(
            op.name(),
            preset.name(),
            &theirs_name,
            openfhe::PEER_VARIANT,
            1,
            row_plan,
            Stats::from_runs(&theirs)?,
        );
        let (lo, hi, mid) = round_spread(&ours_row, &theirs_row)?;
        tracing::info!(%op, %preset, lo, hi, mid, "alternated rounds");
        let ours_note = format!(
            "interleaved with {theirs_name}: {rounds} rounds of {c} calls per side after {w} discarded, first side \
             alternating; ours in {}; per-round ratio of medians {lo:.3}..{hi:.3} (median {mid:.3})",
            thread_note(plan.one_thread)
        );
        let theirs_note = format!(
            "{}; {}; interleaved with {ours_name}",
            peer.describe(),
            match op {
                CkksOp::Keygen => "KeyGen + EvalMultKeyGen + EvalRotateKeyGen(1..4), from the worker's setup",
                CkksOp::Hoisted4 => "precision: its single rotation's (the worker measures no hoisted precision)",
                CkksOp::MulPlainKept => "EvalMult(ct, pt) with pt made by MakeCKKSPackedPlaintext beforehand",
                _ => "timed by the worker (time.perf_counter_ns per call)",
            }
        );
        let theirs_bits = peer.precision()?.for_op(op);
        ours_rows.push(ours_row.with_precision(ours_bits).with_note(ours_note));
        theirs_rows.push(theirs_row.with_precision(theirs_bits).with_note(theirs_note));
    }
    Ok((ours_rows, theirs_rows))
}

impl PeerPrecision {
    /// The precision OpenFHE's worker reports for `op` (its `precision` command:
    /// `fresh` for encrypt and decrypt, `mul` for mul_relin and rescale, `rotate` for
    /// one rotation and for the hoisted four).
    pub fn for_op(&self, op: CkksOp) -> Option<f64> {
        match op {
            CkksOp::Keygen => None,
            CkksOp::Encrypt | CkksOp::Decrypt => self.fresh,
            CkksOp::MulRelin | CkksOp::Rescale => self.mul,
            CkksOp::Rotate | CkksOp::Hoisted4 => self.rotate,
            CkksOp::MulPlainKept => self.mul_plain,
            CkksOp::MulPlain => None,
        }
    }
}

/// The comparison as a table: per operation our median and p99, theirs, the ratio of
/// medians, the median of the per-round ratios, and both precisions.
pub fn format_comparison(ours: &[Row], theirs: &[Row]) -> String {
    let header = [
        "operation",
        "params",
        "ours median",
        "ours p99",
        "openfhe median",
        "openfhe p99",
        "ratio",
        "per round",
        "ours bits",
        "openfhe bits",
    ];
    let right = [false, false, true, true, true, true, true, true, true, true];
    let bits = |b: Option<f64>| b.map_or_else(|| "-".to_string(), |b| format!("{b:.1}"));
    let lines: Vec<Vec<String>> = crate::ratios(ours, theirs)
        .iter()
        .filter_map(|r| {
            let o = ours.iter().find(|o| o.operation == r.operation && o.param_set == r.param_set)?;
            let t = theirs.iter().find(|t| t.operation == r.operation && t.param_set == r.param_set)?;
            Some(vec![
                r.operation.clone(),
                r.param_set.clone(),
                crate::format_ns(o.stats.median_ns),
                crate::format_ns(o.stats.p99_ns),
                crate::format_ns(t.stats.median_ns),
                crate::format_ns(t.stats.p99_ns),
                format!("{:.2}x", r.ratio),
                r.per_round.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x")),
                bits(o.precision_bits),
                bits(t.precision_bits),
            ])
        })
        .collect();
    crate::table::render(&header, &right, &lines)
}

#[cfg(test)]
mod tests;
