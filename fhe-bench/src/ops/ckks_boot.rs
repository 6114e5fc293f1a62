//! CKKS bootstrapping against OpenFHE's `EvalBootstrap` (issue 35): both sides set up
//! the same chain (by default the peer's, [`Preset::Slots32768Scale59Depth22`]) with a
//! uniform or a sparse ternary secret, and bootstrap real values in [-1, 1] from their
//! lowest bootstrappable level, in alternated rounds.
//!
//! At N = 2^16 each side holds about 10 GB of keys and plaintexts, so a round is
//! self-contained: ours sets up, bootstraps and drops everything (and hands the freed
//! heap back to the system); OpenFHE's runs in a fresh worker process that exits after
//! it. Before each side's round the free memory is checked ([`wait_for_memory`]), so the
//! two never hold their keys at once.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fhe_api::ckks::params::{Params, ParamsLiteral, Preset, SecretDist};
use fhe_api::ckks::KeySet;
use fhe_api::rng::SplitMix64;
use fhe_api::{Backend, Seed};
use fhe_schemes::ckks::{BootstrapConfig, Bootstrapper, Complex, Context, KeygenOptions, Mode};

use super::{maybe_one_thread, Progress};
use crate::error::{Error, Result};
use crate::report::{alternate, round_spread, BootstrapFacts, Row, INTERLEAVED};
use crate::stats::{Plan, Stats};

use crate::ops::ckks_mem::log_step;
pub use crate::ops::ckks_mem::{
    mem_available, peak_rss, release_freed_memory, reset_peak_rss, start_round_peak, wait_for_memory,
};

/// The bootstrap row's `operation`.
pub const OP: &str = "ckks_bootstrap";
/// The set-up row's: key generation and the bootstrapper's preparation.
pub const SETUP_OP: &str = "ckks_bootstrap_setup";
/// Root string of our key and encryption seeds.
pub const SEED_ROOT: &str = "lux-fhe-bench-ckks-boot-v1";
/// Hamming weight of the sparse secret (OpenFHE's `SPARSE_TERNARY`).
pub const SPARSE_WEIGHT: usize = 192;

/// The secret distribution of a bootstrap case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BootSecret {
    /// Uniform ternary (OpenFHE's `UNIFORM_TERNARY`).
    Uniform,
    /// Sparse ternary of hamming weight [`SPARSE_WEIGHT`] (OpenFHE's `SPARSE_TERNARY`).
    Sparse,
    /// Uniform ternary, bootstrapped through a sparse secret (our default encapsulation;
    /// OpenFHE's `SPARSE_ENCAPSULATED`): the like-for-like pair of our uniform default.
    Encapsulated,
}

impl BootSecret {
    pub const ALL: [BootSecret; 3] = [BootSecret::Uniform, BootSecret::Sparse, BootSecret::Encapsulated];

    pub const fn name(self) -> &'static str {
        match self {
            BootSecret::Uniform => "uniform",
            BootSecret::Sparse => "sparse",
            BootSecret::Encapsulated => "encapsulated",
        }
    }

    pub const fn dist(self) -> SecretDist {
        match self {
            BootSecret::Uniform | BootSecret::Encapsulated => SecretDist::Ternary,
            BootSecret::Sparse => SecretDist::SparseTernary { hamming_weight: SPARSE_WEIGHT },
        }
    }

    /// What the rows say.
    pub fn describe(self) -> String {
        match self {
            BootSecret::Uniform => "uniform ternary".into(),
            BootSecret::Sparse => format!("sparse ternary, hamming weight {SPARSE_WEIGHT}"),
            BootSecret::Encapsulated => {
                format!("uniform ternary, bootstrapped through a sparse secret of weight {SPARSE_WEIGHT}")
            }
        }
    }
}

impl fmt::Display for BootSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BootSecret {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "uniform" | "ternary" => Ok(BootSecret::Uniform),
            "sparse" => Ok(BootSecret::Sparse),
            "encapsulated" => Ok(BootSecret::Encapsulated),
            _ => Err(Error::InvalidInput(format!("unknown secret `{s}`; valid: uniform, sparse, encapsulated"))),
        }
    }
}

/// One bootstrap comparison: a chain, a secret, a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct BootCase {
    /// The chain (its `secret` is replaced by [`BootCase::secret`]'s).
    pub literal: ParamsLiteral,
    pub secret: BootSecret,
    pub config: BootstrapConfig,
}

/// A case's parameters and whether they are within our 128-bit bound.
#[derive(Clone, Debug)]
pub struct CaseParams {
    pub params: Arc<Params>,
    pub within_bound: bool,
    /// Our bound for this `N` and secret, if any table covers it.
    pub bound: Option<u32>,
}

impl BootCase {
    /// The peer's configuration: [`Preset::Slots32768Scale59Depth22`]'s chain, OpenFHE's
    /// level budget `{3, 3}`.
    pub fn peer_preset(secret: BootSecret) -> BootCase {
        BootCase { literal: Preset::Slots32768Scale59Depth22.literal(), secret, config: BootstrapConfig::default() }
    }

    /// The chain with the case's secret. Refused by the security check only (over our
    /// bound, or no bound for this `N` and secret), it is built anyway without it and
    /// marked so: OpenFHE runs it, and the rows say it is measured for comparison only.
    /// A chain that cannot be built is an error.
    pub fn params(&self) -> Result<CaseParams> {
        let lit = ParamsLiteral { secret: self.secret.dist(), ..self.literal.clone() };
        let (p, within_bound) = match Params::new(&lit) {
            Ok(p) => (p, true),
            Err(_) => (Params::insecure_for_tests(&lit)?, false),
        };
        let bound = p.security_bound();
        Ok(CaseParams { params: Arc::new(p), within_bound, bound })
    }

    /// The rows' `param_set`: the chain's name, `-sparse192` for the sparse secret, and
    /// `-over-bound` where it is over our 128-bit bound.
    pub fn param_set(&self, within_bound: bool) -> String {
        let mut s = self.literal.name.clone();
        match self.secret {
            BootSecret::Sparse => s.push_str(&format!("-sparse{SPARSE_WEIGHT}")),
            BootSecret::Encapsulated => s.push_str("-encapsulated"),
            BootSecret::Uniform => {}
        }
        if !within_bound {
            s.push_str("-over-bound");
        }
        s
    }

    /// The OpenFHE worker's `boot_setup` request for the same chain: N, scale, first
    /// prime, depth, `dnum`, secret, level budget, full packing, one thread.
    pub fn peer_request(&self) -> serde_json::Value {
        let l = &self.literal;
        serde_json::json!({
            "cmd": "boot_setup",
            "log_n": l.log_n,
            "scale_bits": l.scale_bits,
            "first_mod_bits": l.first_bits,
            "depth": l.depth,
            "dnum": l.dnum,
            "secret": self.secret.name(),
            "level_budget": [self.config.level_budget.0, self.config.level_budget.1],
            "slots": 1usize << (l.log_n - 1),
            "threads": 1,
            "seed": 1,
        })
    }
}

/// One side's round: set-up, bootstrap times, and what the output shows.
#[derive(Clone, Debug, PartialEq)]
pub struct BootRound {
    pub setup_ns: f64,
    /// Timed bootstraps (after the discarded ones).
    pub boot_ns: Vec<f64>,
    /// max and mean `|got - want|` over all slots, of the first timed output.
    pub max_err: f64,
    pub mean_err: f64,
    pub output_level: usize,
    /// Peak resident memory of the measuring process during the round, bytes.
    pub peak_bytes: u64,
    pub key_count: Option<usize>,
    pub key_bytes: Option<u64>,
    /// Seconds of the first timed bootstrap's phases (ModRaise, CoeffsToSlots, EvalMod,
    /// SlotsToCoeffs), where the side reports them.
    pub phases_s: Option<[f64; 4]>,
}

/// max and mean `|got - want|` (complex modulus) over all slots.
pub fn errors(got: &[Complex], want: &[Complex]) -> Result<(f64, f64)> {
    if got.len() != want.len() || got.is_empty() {
        return Err(Error::InvalidInput(format!("{} decrypted slots for {} inputs", got.len(), want.len())));
    }
    let e: Vec<f64> = got.iter().zip(want).map(|(g, w)| (*g - *w).abs()).collect();
    Ok((e.iter().copied().fold(0.0, f64::max), e.iter().sum::<f64>() / e.len() as f64))
}

/// `-log2(err)`, `None` for an exact result.
pub fn bits(err: f64) -> Option<f64> {
    (err > 0.0 && err.is_finite()).then(|| -err.log2())
}

/// Bytes of one switching key in its host form: the `b` halves over all of QP and the
/// 32-byte seed `a` is expanded from.
pub fn host_key_bytes(params: &Params) -> u64 {
    let digits = params.digits(params.max_level()).len();
    (digits * (params.q().len() + params.p().len()) * params.n()) as u64 * 8 + 32
}

/// `count` real values uniform in [-1, 1].
pub fn real_values(count: usize, salt: u64) -> Vec<Complex> {
    let mut r = SplitMix64::new(0x2545_f491_4f6c_dd1d ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..count).map(|_| Complex { re: r.next_signed_unit(), im: 0.0 }).collect()
}

/// Our round: keys from a seed, the evaluator and the bootstrapper (the set-up, timed
/// once), an encryption at level 1 (the lowest a bootstrap takes), `warmup` discarded
/// and `calls` timed bootstraps; the first timed output decrypted against the inputs.
/// Everything is dropped before it returns.
pub fn our_round(
    backend: Arc<dyn Backend>,
    case: &BootCase,
    params: &Arc<Params>,
    calls: usize,
    warmup: usize,
    round: u64,
) -> Result<BootRound> {
    start_round_peak();
    log_step("round start (heap trimmed, peak reset)");
    let ctx = Context::new(backend, params.clone())?;
    let start = Instant::now();
    let options = Bootstrapper::key_options(params, &case.config)?;
    let levels = Bootstrapper::key_levels(params, &case.config)?;
    let seed = Seed::derive(SEED_ROOT, round);
    let KeySet { sk, pk, .. } = ctx.keygen_from_seed(&seed, &KeygenOptions::default())?;
    // Made and prepared one at a time, each up to the level it serves (a server holds
    // the prepared keys alone, as OpenFHE's context holds its one copy).
    let ev = ctx.evaluator_from_secret(&sk, &options, Mode::Auto, &levels, &seed)?;
    log_step("evaluation keys, prepared");
    let key_count = 1 + ev.galois_elements().len();
    let key_bytes = key_count as u64 * host_key_bytes(params);
    let mut bs = Bootstrapper::new(&ctx, &ev, &case.config)?;
    log_step("the bootstrapper's diagonals");
    // A uniform secret bootstraps through a sparse one by default (encapsulation): two
    // more switching keys, counted with the others.
    let seed = Seed::derive(SEED_ROOT, 2000 + round);
    let (mut key_count, mut key_bytes) = (key_count, key_bytes);
    if let Some(sse) = Bootstrapper::encapsulation_keys_seeded(&ctx, &sk, &case.config, &seed)? {
        key_count += 2;
        key_bytes += [&sse.to_sparse, &sse.to_dense].iter().map(|k| k.b().len() as u64 * 8 + 32).sum::<u64>();
        bs.set_encapsulation_keys(&ev, &sse)?;
    }
    let setup_ns = start.elapsed().as_nanos() as f64;
    let x = real_values(params.slots(), round);
    let pt = ctx.encode_at(&x, 1, params.scale_at(1))?;
    let ct = ctx.encrypt_seeded(&pk, &pt, &Seed::derive(SEED_ROOT, 1000 + round))?;
    let mut boot_ns = Vec::with_capacity(calls);
    let mut first = None;
    for i in 0..warmup + calls {
        let t = Instant::now();
        // The phase clock reads the time four times per bootstrap of a minute or more.
        let (out, phases) = std::hint::black_box(bs.bootstrap_timed(&ev, &ct)?);
        let ns = t.elapsed().as_nanos() as f64;
        if i >= warmup {
            boot_ns.push(ns);
            if first.is_none() {
                first = Some((out, phases));
            }
        }
    }
    log_step("the bootstraps");
    let peak_bytes = peak_rss().unwrap_or(0);
    let (out, ph) = first.ok_or_else(|| Error::InvalidPlan("no timed bootstrap".into()))?;
    let (max_err, mean_err) = errors(&ctx.decrypt(&sk, &out)?, &x)?;
    Ok(BootRound {
        setup_ns,
        boot_ns,
        max_err,
        mean_err,
        output_level: out.level(),
        peak_bytes,
        key_count: Some(key_count),
        key_bytes: Some(key_bytes),
        phases_s: Some([ph.mod_raise, ph.coeffs_to_slots, ph.eval_mod, ph.slots_to_coeffs]),
    })
}

/// Each round's phases, for our note: `ModRaise/CtS/EvalMod/StC s` per round.
fn phases_note(rounds: &[BootRound]) -> String {
    let per: Vec<String> = rounds
        .iter()
        .filter_map(|r| r.phases_s)
        .map(|p| format!("{:.1}/{:.1}/{:.1}/{:.1}", p[0], p[1], p[2], p[3]))
        .collect();
    format!(
        "phases of the first timed bootstrap per round, ModRaise/CoeffsToSlots/EvalMod/SlotsToCoeffs in s: {}",
        per.join(", ")
    )
}

/// The bootstrapping peer (OpenFHE's worker; tests use a fake).
pub trait BootPeer {
    /// One round on `case`: set-up, `warmup` discarded and `calls` timed bootstraps.
    fn round(&mut self, case: &BootCase, calls: usize, warmup: usize) -> Result<BootRound>;
    /// Version, build and parameters, for its rows' notes.
    fn describe(&self, case: &BootCase) -> String;
}

/// How a comparison runs.
#[derive(Clone, Debug, PartialEq)]
pub struct BootPlan {
    pub rounds: usize,
    /// Timed bootstraps per side and round.
    pub calls: usize,
    /// Discarded bootstraps before them.
    pub warmup: usize,
    /// Our calls in a one-thread rayon pool (the comparison's setting).
    pub one_thread: bool,
    /// Free memory each side's round waits for (bytes; 0: no check).
    pub min_free_bytes: u64,
    /// How long to wait for it before giving up.
    pub max_wait: Duration,
}

impl Default for BootPlan {
    fn default() -> Self {
        BootPlan {
            rounds: 3,
            calls: 1,
            warmup: 0,
            one_thread: true,
            min_free_bytes: 0,
            max_wait: Duration::from_secs(600),
        }
    }
}

/// The rows of one side: `ckks_bootstrap` (one run per round, with its facts) and
/// `ckks_bootstrap_setup` (one sample per round).
fn side_rows(
    backend: &str,
    variant: &str,
    param_set: &str,
    plan: &BootPlan,
    rounds: &[BootRound],
    facts: BootstrapFacts,
) -> Result<(Row, Row)> {
    let boot: Vec<Vec<f64>> = rounds.iter().map(|r| r.boot_ns.clone()).collect();
    let setup: Vec<Vec<f64>> = rounds.iter().map(|r| vec![r.setup_ns]).collect();
    let boot_plan = Plan { iterations: plan.calls, warmup: plan.warmup, runs: plan.rounds };
    let setup_plan = Plan { iterations: 1, warmup: 0, runs: plan.rounds };
    let worst_max = rounds.iter().map(|r| r.max_err).fold(0.0, f64::max);
    Ok((
        Row::new(OP, param_set, backend, variant, 1, boot_plan, Stats::from_runs(&boot)?)
            .with_precision(bits(worst_max))
            .with_bootstrap(facts),
        Row::new(SETUP_OP, param_set, backend, variant, 1, setup_plan, Stats::from_runs(&setup)?),
    ))
}

/// The facts of one side's rounds: the worst precision and memory, the output level
/// (the same in every round, or an error).
fn facts(case: &BootCase, cp: &CaseParams, log_qp: Option<u32>, rounds: &[BootRound]) -> Result<BootstrapFacts> {
    let level = rounds.first().map(|r| r.output_level).ok_or_else(|| Error::InvalidPlan("no rounds".into()))?;
    if rounds.iter().any(|r| r.output_level != level) {
        return Err(Error::InvalidInput("the output level changed between rounds".into()));
    }
    let worst_mean = rounds.iter().map(|r| r.mean_err).fold(0.0, f64::max);
    Ok(BootstrapFacts {
        secret: case.secret.describe(),
        log_qp,
        within_security_bound: cp.within_bound,
        precision_mean_bits: bits(worst_mean),
        output_level: level,
        levels_left: level.saturating_sub(1),
        peak_memory_bytes: rounds.iter().map(|r| r.peak_bytes).max().unwrap_or(0),
        key_count: rounds[0].key_count,
        key_bytes: rounds[0].key_bytes,
    })
}

/// How our bootstrap raises: through a sparse secret (encapsulation) or under the user's;
/// and how it keeps its diagonals.
fn raise_note(case: &BootCase) -> String {
    let diagonals = match case.config.diagonals {
        Some(form) => format!("our diagonals {form:?} (BootstrapConfig::diagonals)"),
        None => "our diagonals whole where the machine holds them (BootstrapConfig::diagonals None)".into(),
    };
    format!("{}; {diagonals}", raise_how(case))
}

fn raise_how(case: &BootCase) -> String {
    match (case.secret, case.config.encapsulation) {
        (BootSecret::Encapsulated, Some(h)) => {
            format!("both raise through a sparse secret (ours of weight {h}, OpenFHE's SPARSE_ENCAPSULATED)")
        }
        (BootSecret::Uniform, Some(h)) => format!(
            "ours raises through a sparse secret of weight {h} (sparse secret encapsulation, the default \
             BootstrapConfig; OpenFHE's UNIFORM_TERNARY raises under the dense secret)"
        ),
        _ => "ours raises under the user's secret".into(),
    }
}

fn bound_note(case: &BootCase, cp: &CaseParams) -> String {
    let p = &cp.params;
    match (cp.within_bound, cp.bound) {
        (true, b) => format!(
            "{}: log QP {} within our 128-bit bound {}",
            case.secret.describe(),
            p.log_qp(),
            b.map_or("-".into(), |b| b.to_string())
        ),
        (false, b) => format!(
            "{}: log QP {} is OVER our 128-bit bound {} for this secret: measured for comparison only \
             (OpenFHE runs it anyway)",
            case.secret.describe(),
            p.log_qp(),
            b.map_or("-".into(), |b| b.to_string())
        ),
    }
}

/// Ours and the peer's bootstraps on `case`, alternated: `plan.rounds` rounds, ours first
/// in even rounds and theirs in odd ones, each side's round self-contained (set-up,
/// bootstraps, everything dropped). Before each side's round the free memory must reach
/// `plan.min_free_bytes`. Returns `(ours, theirs)`: per side a `ckks_bootstrap` and a
/// `ckks_bootstrap_setup` row, `/interleaved`.
pub fn run_boot_alternated(
    backend: Arc<dyn Backend>,
    case: &BootCase,
    peer: &mut dyn BootPeer,
    plan: &BootPlan,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Vec<Row>, Vec<Row>)> {
    if plan.rounds == 0 || plan.calls == 0 {
        return Err(Error::InvalidPlan(format!("rounds ({}) and calls ({}) must be >= 1", plan.rounds, plan.calls)));
    }
    let cp = case.params()?;
    let param_set = case.param_set(cp.within_bound);
    let ours_name = format!("{}{INTERLEAVED}", backend.name());
    let theirs_name = format!("{}{INTERLEAVED}", crate::peers::openfhe::PEER_BACKEND);
    let label = format!("{} vs openfhe {param_set} {OP}", backend.name());
    progress(&Progress::Start { label: label.clone(), calls: plan.rounds });
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut round = 0u64;
    alternate(
        plan.rounds,
        || {
            wait_for_memory(plan.min_free_bytes, plan.max_wait)?;
            round += 1;
            let r = maybe_one_thread(plan.one_thread, || {
                our_round(backend.clone(), case, &cp.params, plan.calls, plan.warmup, round)
            })?;
            release_freed_memory();
            tracing::info!(secret = %case.secret, setup_s = r.setup_ns / 1e9, boot_s = r.boot_ns[0] / 1e9, "ours");
            ours.push(r);
            Ok(ours.last().map(|r| r.boot_ns.clone()).unwrap_or_default())
        },
        || {
            wait_for_memory(plan.min_free_bytes, plan.max_wait)?;
            let r = peer.round(case, plan.calls, plan.warmup)?;
            tracing::info!(secret = %case.secret, setup_s = r.setup_ns / 1e9, boot_s = r.boot_ns[0] / 1e9, "openfhe");
            theirs.push(r);
            Ok(theirs.last().map(|r| r.boot_ns.clone()).unwrap_or_default())
        },
        &mut |r| progress(&Progress::Tick { label: label.clone(), done: r + 1, calls: plan.rounds }),
    )?;
    progress(&Progress::Finish { label });
    let variant = backend.ntt_variant();
    let ours_facts = facts(case, &cp, Some(cp.params.log_qp()), &ours)?;
    let (ob, os) = side_rows(&ours_name, variant, &param_set, plan, &ours, ours_facts)?;
    let theirs_facts = facts(case, &cp, None, &theirs)?;
    let variant = crate::peers::openfhe::PEER_VARIANT;
    let (tb, ts) = side_rows(&theirs_name, variant, &param_set, plan, &theirs, theirs_facts)?;
    let (lo, hi, mid) = round_spread(&ob, &tb)?;
    let bound = bound_note(case, &cp);
    let alternation = format!(
        "{} rounds of {} timed bootstraps per side after {} discarded, first side alternating, each round \
         self-contained (set-up, bootstraps, all dropped)",
        plan.rounds, plan.calls, plan.warmup
    );
    let ours_note = format!(
        "{bound}; interleaved with {theirs_name}: {alternation}; per-round ratio of medians {lo:.3}..{hi:.3} \
         (median {mid:.3}); {}; input: real values uniform in [-1,1], public-key encrypted at level 1; level \
         budget {:?}; keys from a seed made into the evaluator (Mode::Auto) one at a time, each prepared up to \
         the level it serves (Context::evaluator_from_secret, Bootstrapper::key_levels); key_bytes: the host form \
         (b halves + 32-byte seed per key, a re-expanded); peak memory: VmHWM of the bench process, reset before each of our rounds \
         on a trimmed heap, the equivalence gate's backend dropped (includes the process's own baseline)",
        if plan.one_thread { "one thread (a one-thread rayon pool)" } else { "the process's rayon pool" },
        case.config.level_budget,
    );
    let ours_note = format!("{ours_note}; {}; {}", raise_note(case), phases_note(&ours));
    let theirs_note = format!("{}; {bound}; interleaved with {ours_name}", peer.describe(case));
    let setup_note =
        "set-up: key generation, evaluator and bootstrapper (ours: keygen_from_seed + evaluator_from_secret + \
                      Bootstrapper::new; OpenFHE: GenCryptoContext + EvalBootstrapSetup + KeyGen + EvalMultKeyGen + \
                      EvalBootstrapKeyGen), one per round";
    Ok((
        vec![ob.with_note(ours_note), os.with_note(setup_note)],
        vec![tb.with_note(theirs_note), ts.with_note(setup_note)],
    ))
}

/// Our rounds alone (no peer): the same rows without `/interleaved`.
pub fn run_boot_ours(backend: Arc<dyn Backend>, case: &BootCase, plan: &BootPlan) -> Result<Vec<Row>> {
    if plan.rounds == 0 || plan.calls == 0 {
        return Err(Error::InvalidPlan(format!("rounds ({}) and calls ({}) must be >= 1", plan.rounds, plan.calls)));
    }
    let cp = case.params()?;
    let mut rounds = Vec::new();
    for round in 1..=plan.rounds as u64 {
        wait_for_memory(plan.min_free_bytes, plan.max_wait)?;
        rounds.push(maybe_one_thread(plan.one_thread, || {
            our_round(backend.clone(), case, &cp.params, plan.calls, plan.warmup, round)
        })?);
        release_freed_memory();
    }
    let f = facts(case, &cp, Some(cp.params.log_qp()), &rounds)?;
    let (b, s) = side_rows(&backend.name(), backend.ntt_variant(), &case.param_set(cp.within_bound), plan, &rounds, f)?;
    let note = format!("{}; {}; {}", bound_note(case, &cp), raise_note(case), phases_note(&rounds));
    Ok(vec![b.with_note(note), s])
}

/// Both sides' bootstrap rows as a table: times, the per-round ratio, precision,
/// levels, memory and keys.
pub fn format_boot_comparison(ours: &[Row], theirs: &[Row]) -> String {
    let header = [
        "side",
        "params",
        "bootstrap",
        "set-up",
        "ratio",
        "per round",
        "bits max",
        "bits mean",
        "out level",
        "levels left",
        "peak mem",
        "keys",
    ];
    let right = [false, false, true, true, true, true, true, true, true, true, true, true];
    let gib = |b: u64| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64);
    let opt = |b: Option<f64>| b.map_or_else(|| "-".to_string(), |b| format!("{b:.1}"));
    let ratios = crate::ratios(ours, theirs);
    let mut lines = Vec::new();
    for (side, rows) in [("ours", ours), ("openfhe", theirs)] {
        for b in rows.iter().filter(|r| r.operation == OP) {
            let Some(f) = &b.bootstrap else { continue };
            let setup = rows.iter().find(|r| r.operation == SETUP_OP && r.param_set == b.param_set);
            let ratio = ratios.iter().find(|r| r.operation == OP && r.param_set == b.param_set);
            let (ratio, per_round) = match (side, ratio) {
                ("ours", Some(r)) => {
                    (format!("{:.2}x", r.ratio), r.per_round.map_or_else(|| "-".into(), |x| format!("{x:.2}x")))
                }
                _ => ("-".into(), "-".into()),
            };
            lines.push(vec![
                side.to_string(),
                b.param_set.clone(),
                crate::format_ns(b.stats.median_ns),
                setup.map_or_else(|| "-".into(), |s| crate::format_ns(s.stats.median_ns)),
                ratio,
                per_round,
                opt(b.precision_bits),
                opt(f.precision_mean_bits),
                f.output_level.to_string(),
                f.levels_left.to_string(),
                gib(f.peak_memory_bytes),
                match (f.key_count, f.key_bytes) {
                    (Some(n), Some(b)) => format!("{n}, {}", gib(b)),
                    _ => "-".into(),
                },
            ]);
        }
    }
    crate::table::render(&header, &right, &lines)
}

#[cfg(test)]
mod tests;
