//! FE functional bootstrapping against OpenFHE's `EvalFEFuncBootstrap` (issue 36), seed
//! 2's table: every function at every configuration ([`seed_two_chains`]), ours and the
//! peer alternated round by round, one thread, each side's round self-contained (set-up,
//! one functional bootstrap per function, everything dropped; the peer in a fresh
//! worker). Both sides evaluate the same series (ours, [`FeFunction::series`] at the
//! scale's precision floor) on seed 2's input `x_i = -1/2 + i / slots`, and precision is
//! measured as seed 2 does: the mean error against `f(2 R x)` relative to its range.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fhe_api::ckks::params::{security_bound_bits, Params, SecretDist, SPARSE_MIN_HAMMING_WEIGHT};
use fhe_api::ckks::KeySet;
use fhe_api::{Backend, Seed};
use fhe_schemes::ckks::circuits::{precision_floor_bits, relative_precision};
use fhe_schemes::ckks::{
    Complex, Context, DiagonalForm, FeFunction, FourierSeries, FunctionalBootstrapper, FunctionalChain,
    FunctionalConfig, KeygenOptions, Mode,
};

use super::ckks_boot::host_key_bytes;
use super::maybe_one_thread;
use crate::error::{Error, Result};
use crate::ops::ckks_mem::{log_step, peak_rss, release_freed_memory, start_round_peak, wait_for_memory};
use crate::report::{alternate, BootstrapFacts, Row, INTERLEAVED};
use crate::stats::{Plan, Stats};

/// The rows' `operation`.
pub const OP: &str = "ckks_fe_bootstrap";
/// Root string of our key and encryption seeds.
pub const SEED_ROOT: &str = "lux-fhe-bench-ckks-fe-v1";

/// One configuration of the table and the series it runs.
#[derive(Clone, Debug)]
pub struct FeCase {
    pub chain: FunctionalChain,
    pub series: Vec<(FeFunction, FourierSeries)>,
    /// Our diagonals' form ([`FunctionalConfig::diagonals`]; `None`: settled by memory).
    pub diagonals: Option<DiagonalForm>,
}

impl FeCase {
    /// `functions`' series at the precision floor of the chain's scale.
    pub fn new(chain: FunctionalChain, functions: &[FeFunction]) -> Result<FeCase> {
        let bits = precision_floor_bits(chain.scale_bits);
        let series = functions.iter().map(|&f| Ok((f, f.series(bits)?))).collect::<Result<Vec<_>>>()?;
        Ok(FeCase { chain, series, diagonals: None })
    }

    /// Our configuration: the chain's, with the case's diagonal form.
    pub fn config(&self) -> FunctionalConfig {
        FunctionalConfig { diagonals: self.diagonals, ..self.chain.config() }
    }

    pub fn max_degree(&self) -> usize {
        self.series.iter().map(|(_, s)| s.degree()).max().unwrap_or(1)
    }

    /// Our parameters: refused over the sparse bound or, by the memory check of the
    /// round, beyond the machine.
    pub fn params(&self) -> Result<Params> {
        Ok(self.chain.params(self.max_degree())?)
    }

    /// The sparse-secret bound of the chain's `N`, the one seed 2 holds both sides to.
    pub fn bound(&self) -> Option<u32> {
        let sparse = SecretDist::SparseTernary { hamming_weight: SPARSE_MIN_HAMMING_WEIGHT };
        security_bound_bits(self.chain.log_n, sparse)
    }

    /// The worker's `fe_setup` request: the same ring, scale, levels after, budget and
    /// series; OpenFHE's own depth, and the fewest digits within the bound.
    pub fn peer_request(&self) -> serde_json::Value {
        let c = &self.chain;
        let functions: Vec<serde_json::Value> = self
            .series
            .iter()
            .map(|(f, s)| {
                let coeffs: Vec<[f64; 2]> = s.coeffs.iter().map(|c| [c.re, c.im]).collect();
                serde_json::json!({"name": f.name(), "radius": s.radius, "coeffs": coeffs})
            })
            .collect();
        serde_json::json!({
            "cmd": "fe_setup",
            "log_n": c.log_n,
            "scale_bits": c.scale_bits,
            "levels_after": c.levels_after,
            "level_budget": [c.level_budget.0, c.level_budget.1],
            "bound": self.bound().unwrap_or(0),
            "functions": functions,
            "threads": 1,
        })
    }
}

/// One function's functional bootstrap in a round.
#[derive(Clone, Debug, PartialEq)]
pub struct FeResult {
    pub ns: f64,
    pub mean_err: f64,
    pub max_err: f64,
    /// Seed 2's precision: `-log2(mean error / range of f)`.
    pub bits_mean_rel: Option<f64>,
    /// Levels the output holds (OpenFHE: `depth - GetLevel()`).
    pub output_level: usize,
}

/// One side's round.
#[derive(Clone, Debug, PartialEq)]
pub struct FeRound {
    pub setup_ns: f64,
    /// In the case's function order.
    pub results: Vec<FeResult>,
    pub peak_bytes: u64,
    pub log_qp: Option<u32>,
    pub dnum: usize,
    pub depth: usize,
    pub key_count: Option<usize>,
    pub key_bytes: Option<u64>,
    /// How our diagonals were kept (`None` for the peer).
    pub diagonals: Option<DiagonalForm>,
}

/// Seed 2's input for `slots` slots.
pub fn inputs(slots: usize) -> Vec<f64> {
    (0..slots).map(|i| -0.5 + i as f64 / slots as f64).collect()
}

/// Our round: keys from a seed, evaluator, functional bootstrapper and encapsulation keys
/// (the set-up), the input encrypted at the bootstrapper's input level, one functional
/// bootstrap per function, each decrypted against `f(2 R x)`.
pub fn our_round(
    backend: Arc<dyn Backend>,
    case: &FeCase,
    params: &Arc<Params>,
    round: u64,
    warmup: usize,
) -> Result<FeRound> {
    start_round_peak();
    log_step("round start (heap trimmed, peak reset)");
    let config = case.config();
    let ctx = Context::new(backend, params.clone())?;
    let start = Instant::now();
    let options = FunctionalBootstrapper::key_options(params, &config)?;
    let levels = FunctionalBootstrapper::key_levels(params, &config)?;
    let seed = Seed::derive(SEED_ROOT, round);
    let KeySet { sk, pk, .. } = ctx.keygen_from_seed(&seed, &KeygenOptions::default())?;
    log_step("secret and public key");
    // Made and prepared one at a time, each up to the level it serves: OpenFHE's
    // EvalBootstrapKeyGen also keeps one copy of its keys.
    let ev = ctx.evaluator_from_secret(&sk, &options, Mode::Auto, &levels, &seed)?;
    log_step("the user's evaluation keys, prepared");
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &config, case.max_degree())?;
    log_step("the bootstrapper's diagonals");
    // The encapsulation keys (and, with FunctionalConfig::sparse_keys, those under the
    // sparse secret) likewise one at a time; every key's host form is the same size.
    fb.set_encapsulation_from_secret(&ctx, &ev, &sk, &Seed::derive(SEED_ROOT, 2000 + round))?;
    log_step("encapsulation and sparse-secret keys, prepared");
    let key_count = 1 + ev.galois_elements().len() + 2 * usize::from(fb.encapsulates()) + fb.sparse_key_count();
    let key_bytes = key_count as u64 * host_key_bytes(params);
    let setup_ns = start.elapsed().as_nanos() as f64;
    let x = inputs(params.slots());
    let values: Vec<Complex> = x.iter().map(|&v| Complex::new(v, 0.0)).collect();
    let level = fb.input_level();
    let ct = ctx.encrypt_seeded(
        &pk,
        &ctx.encode_at(&values, level, params.scale_at(level))?,
        &Seed::derive(SEED_ROOT, 1000 + round),
    )?;
    if let Some((_, s)) = case.series.first() {
        for _ in 0..warmup {
            std::hint::black_box(fb.bootstrap(&ev, &ct, s)?);
        }
    }
    let mut results = Vec::new();
    for (f, s) in &case.series {
        let t = Instant::now();
        let out = std::hint::black_box(fb.bootstrap(&ev, &ct, s)?);
        let ns = t.elapsed().as_nanos() as f64;
        let got: Vec<f64> = ctx.decrypt(&sk, &out)?.iter().map(|c| c.re).collect();
        let want: Vec<f64> = x.iter().map(|&v| f.eval(2.0 * f.radius() * v)).collect();
        let (bits, max_err) = relative_precision(&want, &got);
        let mean_err = want.iter().zip(&got).map(|(w, g)| (w - g).abs()).sum::<f64>() / want.len() as f64;
        results.push(FeResult {
            ns,
            mean_err,
            max_err,
            bits_mean_rel: bits.is_finite().then_some(bits),
            output_level: out.level(),
        });
    }
    log_step("the functional bootstraps");
    Ok(FeRound {
        setup_ns,
        results,
        peak_bytes: peak_rss().unwrap_or(0),
        log_qp: Some(params.log_qp()),
        dnum: params.dnum(),
        depth: params.depth(),
        key_count: Some(key_count),
        key_bytes: Some(key_bytes),
        diagonals: Some(fb.diagonal_form()),
    })
}

/// The FE peer (OpenFHE's worker; tests use a fake).
pub trait FePeer {
    /// One round with `warmup` discarded calls before the timed ones.
    fn round(&mut self, case: &FeCase, warmup: usize) -> Result<FeRound>;
    /// Version, build and parameters, for its rows' notes.
    fn describe(&self, case: &FeCase) -> String;
}

/// How a table runs.
#[derive(Clone, Debug, PartialEq)]
pub struct FePlan {
    pub rounds: usize,
    /// Functional bootstraps of the first function before the timed ones, per side and
    /// round, discarded (each side's first call meets memory it has not touched yet).
    pub warmup: usize,
    pub one_thread: bool,
    /// Free memory each side's round waits for (bytes; 0: no check).
    pub min_free_bytes: u64,
    pub max_wait: Duration,
}

/// How our rows' peak memory is measured (the peer's note says how its is).
fn with_our_memory_note(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .map(|r| {
            let n = format!(
                "{}; peak memory: VmHWM of the bench process, reset before each round on a trimmed heap, the \
                 equivalence gate's backend dropped",
                r.note.clone().unwrap_or_default()
            );
            r.with_note(n)
        })
        .collect()
}

/// One side's rows: a row per function (one sample per round).
fn side_rows(
    backend: &str,
    variant: &str,
    case: &FeCase,
    plan: &FePlan,
    rounds: &[FeRound],
    b: usize,
) -> Result<Vec<Row>> {
    let first = rounds.first().ok_or_else(|| Error::InvalidPlan("no rounds".into()))?;
    let mut rows = Vec::new();
    for (i, (f, s)) in case.series.iter().enumerate() {
        let runs: Vec<Vec<f64>> = rounds.iter().map(|r| vec![r.results[i].ns]).collect();
        let worst = |g: &dyn Fn(&FeResult) -> f64| rounds.iter().map(|r| g(&r.results[i])).fold(0.0, f64::max);
        let level = first.results[i].output_level;
        let bits_rel = rounds.iter().filter_map(|r| r.results[i].bits_mean_rel).fold(f64::INFINITY, f64::min);
        let facts = BootstrapFacts {
            secret: format!(
                "uniform ternary through a sparse secret of weight {SPARSE_MIN_HAMMING_WEIGHT} (SPARSE_ENCAPSULATED)"
            ),
            log_qp: first.log_qp,
            within_security_bound: true,
            precision_mean_bits: crate::ops::ckks_boot::bits(worst(&|r| r.mean_err)),
            output_level: level,
            levels_left: level.saturating_sub(b),
            peak_memory_bytes: rounds.iter().map(|r| r.peak_bytes).max().unwrap_or(0),
            key_count: first.key_count,
            key_bytes: first.key_bytes,
        };
        let row = Row::new(
            OP,
            &format!("{}/{}", case.chain.name, f.name()),
            backend,
            variant,
            1,
            Plan { iterations: 1, warmup: plan.warmup, runs: plan.rounds },
            Stats::from_runs(&runs)?,
        )
        .with_precision(bits_rel.is_finite().then_some(bits_rel))
        .with_bootstrap(facts)
        .with_note(format!(
            "series degree {} ({} bits asked), depth {}, dnum {}, level budget {:?}; keys made into the evaluator \
                 one at a time, each prepared up to the level it serves (Context::evaluator_from_secret, \
                 FunctionalBootstrapper::key_levels, set_encapsulation_from_secret); sparse_keys {}: CoeffsToSlots and \
                 the exponential under the sparse secret;{} precision_bits: seed 2's \
                 -log2(mean |err| / range of f) (worst round), bootstrap.precision_mean_bits: -log2(mean |err|); \
                 max |err| {:.3e}; levels_left = output level - {b} (the next bootstrap's SlotsToCoeffs); {} discarded \
                 call(s) of the first function before the timed ones, per side and round",
            s.degree(),
            precision_floor_bits(case.chain.scale_bits),
            first.depth,
            first.dnum,
            case.chain.level_budget,
            case.chain.config().sparse_keys,
            first.diagonals.map(|d| format!(" diagonals {d:?} (DiagonalForm);")).unwrap_or_default(),
            worst(&|r| r.max_err),
            plan.warmup,
        ));
        rows.push(row);
    }
    Ok(rows)
}

/// Ours and (with a peer) theirs on `case`, alternated round by round, each side's
/// round after the free memory reached `plan.min_free_bytes`.
pub fn run_fe(
    backend: Arc<dyn Backend>,
    case: &FeCase,
    peer: Option<&mut dyn FePeer>,
    plan: &FePlan,
) -> Result<Vec<Row>> {
    if plan.rounds == 0 {
        return Err(Error::InvalidPlan("rounds must be >= 1".into()));
    }
    let params = Arc::new(case.params()?);
    let b = case.chain.level_budget.1;
    let our_rows = |name: &str, ours: &[FeRound]| -> Result<Vec<Row>> {
        Ok(with_our_memory_note(side_rows(name, backend.ntt_variant(), case, plan, ours, b)?))
    };
    let mut ours = Vec::new();
    let mut round = 0u64;
    let mut our_side = || -> Result<Vec<f64>> {
        wait_for_memory(plan.min_free_bytes, plan.max_wait)?;
        round += 1;
        let r = maybe_one_thread(plan.one_thread, || our_round(backend.clone(), case, &params, round, plan.warmup))?;
        release_freed_memory();
        tracing::info!(chain = %case.chain.name, setup_s = r.setup_ns / 1e9, "ours");
        let total = r.results.iter().map(|x| x.ns).sum();
        ours.push(r);
        Ok(vec![total])
    };
    let Some(peer) = peer else {
        for _ in 0..plan.rounds {
            our_side()?;
        }
        return our_rows(&backend.name(), &ours);
    };
    let mut theirs = Vec::new();
    // A peer that fails at a configuration (OpenFHE's worker killed for memory at the
    // 59-bit rows) leaves our rounds standing: its later rounds are not run, and our rows
    // say why they stand alone.
    let mut peer_failure: Option<String> = None;
    alternate(
        plan.rounds,
        &mut our_side,
        || {
            if peer_failure.is_some() {
                return Ok(Vec::new());
            }
            wait_for_memory(plan.min_free_bytes, plan.max_wait)?;
            match peer.round(case, plan.warmup) {
                Ok(r) => {
                    let total = r.results.iter().map(|x| x.ns).sum();
                    theirs.push(r);
                    Ok(vec![total])
                }
                Err(e) => {
                    let why: String = e.to_string().chars().take(240).collect();
                    tracing::warn!(chain = %case.chain.name, %why, "the peer failed; our rounds go on alone");
                    peer_failure = Some(why);
                    Ok(Vec::new())
                }
            }
        },
        &mut |_| {},
    )?;
    if let Some(why) = peer_failure {
        let rows = our_rows(&backend.name(), &ours)?;
        return Ok(rows
            .into_iter()
            .map(|r| {
                let n = format!(
                    "{}; no peer row: OpenFHE failed at this configuration ({why})",
                    r.note.clone().unwrap_or_default()
                );
                r.with_note(n)
            })
            .collect());
    }
    let ours_name = format!("{}{INTERLEAVED}", backend.name());
    let theirs_name = format!("{}{INTERLEAVED}", crate::peers::openfhe::PEER_BACKEND);
    let mut rows = our_rows(&ours_name, &ours)?;
    let note = peer.describe(case);
    let theirs_rows = side_rows(&theirs_name, crate::peers::openfhe::PEER_VARIANT, case, plan, &theirs, b + 1)?;
    rows.extend(theirs_rows.into_iter().map(|r| {
        let n = format!("{note}; {}", r.note.clone().unwrap_or_default());
        r.with_note(n)
    }));
    Ok(rows)
}

/// The table: per configuration and function, both sides' time, the ratio, precision,
/// levels and memory.
pub fn format_fe_table(rows: &[Row]) -> String {
    let header =
        ["side", "config/function", "time", "ratio", "bits (mean rel)", "max err", "out level", "log QP", "peak mem"];
    let right = [false, false, true, true, true, true, true, true, true];
    let mut lines = Vec::new();
    for r in rows.iter().filter(|r| r.operation == OP) {
        let Some(f) = &r.bootstrap else { continue };
        let ours = !r.backend.starts_with(crate::peers::openfhe::PEER_BACKEND);
        let ratio = if ours {
            rows.iter()
                .find(|t| t.param_set == r.param_set && t.backend.starts_with(crate::peers::openfhe::PEER_BACKEND))
                .map_or_else(|| "-".into(), |t| format!("{:.2}x", r.stats.median_ns / t.stats.median_ns))
        } else {
            "-".into()
        };
        let max_err = r
            .note
            .as_deref()
            .and_then(|n| n.split("max |err| ").nth(1))
            .and_then(|s| s.split(';').next())
            .unwrap_or("-");
        lines.push(vec![
            if ours { "ours".into() } else { "openfhe".into() },
            r.param_set.clone(),
            crate::format_ns(r.stats.median_ns),
            ratio,
            r.precision_bits.map_or_else(|| "-".into(), |b| format!("{b:.1}")),
            max_err.to_string(),
            f.output_level.to_string(),
            f.log_qp.map_or_else(|| "-".into(), |q| q.to_string()),
            format!("{:.2} GiB", f.peak_memory_bytes as f64 / (1u64 << 30) as f64),
        ]);
    }
    crate::table::render(&header, &right, &lines)
}
