//! Measuring the candidates of a recommendation on real backends, the report file and
//! its printed form.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_api::{Backend, ParamSet};
use fhe_schemes::tfhe::gates::{self, Gate};

use fhe_bench::ops::ckks::ROTATIONS;
use fhe_bench::report::{new_file_path, sanitize};
use fhe_bench::schema::{
    constructor_lines, parse_recommendation, Recommendation, Suite, SuiteOp, RECOMMENDATION_KIND,
    RECOMMEND_SCHEMA_VERSION,
};
use fhe_bench::stats::sample_with;
use fhe_bench::table::{format_ns, render};
use fhe_bench::{Environment, Error, Plan, Progress, Result};

use super::check::{
    check_ckks, check_kernel, check_primitive, ckks_inputs, primitive_inputs, CkksInputs, CkksSetup, PrimitiveInputs,
    Setup,
};
use super::score::{rotation, score, CandidateTimings, OpTimings};

/// Timed calls per repetition when none is given: the NTT count of the bench for the
/// cheap kernel calls, seed 1's ten for whole operations.
pub fn default_iterations(suite: Suite) -> usize {
    match suite {
        Suite::Kernel => 200,
        Suite::Primitive | Suite::CkksPrimitive => 10,
    }
}

/// What a recommendation run measures and how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecommendConfig {
    pub suite: Suite,
    /// The bit-scheme parameter set (`kernel`, `primitive`; unused by `ckks-primitive`).
    pub params: ParamSet,
    /// The CKKS preset (`ckks-primitive` only).
    pub preset: Option<Preset>,
    /// Repetitions; each one measures every candidate, in a rotated order.
    pub reps: usize,
    /// Timed calls per operation, candidate and repetition.
    pub iterations: usize,
    /// Discarded calls before each operation's timed calls.
    pub warmup: usize,
    /// Root string of the key and ciphertext seeds (primitive suite).
    pub seed_root: String,
}

impl RecommendConfig {
    /// Seed 1's shape: 3 repetitions, 3 warm-up calls, the suite's default iterations.
    pub fn new(suite: Suite, params: ParamSet) -> RecommendConfig {
        RecommendConfig {
            suite,
            params,
            preset: None,
            reps: 3,
            iterations: default_iterations(suite),
            warmup: 3,
            seed_root: "lux-fhe-recommend-v1".to_string(),
        }
    }

    /// The `ckks-primitive` suite on `preset`, with seed 1's shape.
    pub fn ckks(preset: Preset) -> RecommendConfig {
        RecommendConfig { preset: Some(preset), ..RecommendConfig::new(Suite::CkksPrimitive, ParamSet::PN10QP27) }
    }

    /// The name of what is measured: the CKKS preset, or the parameter set.
    pub fn params_name(&self) -> &'static str {
        match (self.suite.is_ckks(), self.preset) {
            (true, Some(p)) => p.name(),
            _ => self.params.name(),
        }
    }

    fn plan(&self) -> Plan {
        Plan { iterations: self.iterations, warmup: self.warmup, runs: 1 }
    }
}

fn time_op(
    b: &dyn Backend,
    setup: &Setup,
    inputs: Option<&PrimitiveInputs>,
    ckks: Option<&CkksInputs>,
    op: SuiteOp,
    config: &RecommendConfig,
    tick: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f64>> {
    let params = config.params;
    let plan = config.plan();
    let runs = match (op, setup, inputs) {
        (SuiteOp::NttForward | SuiteOp::NttInverse | SuiteOp::NttRoundTrip, Setup::Kernel { input }, _) => {
            let mut data = input.clone();
            sample_with(
                || {
                    if op != SuiteOp::NttInverse {
                        b.ntt_forward(params, &mut data)?;
                    }
                    if op != SuiteOp::NttForward {
                        b.ntt_inverse(params, &mut data)?;
                    }
                    std::hint::black_box(&data);
                    Ok(())
                },
                plan,
                tick,
            )?
        }
        (SuiteOp::KeySwitch, Setup::Primitive { key }, Some(i)) => {
            let mut next = 0;
            sample_with(
                || {
                    let input = std::slice::from_ref(&i.switch_inputs[next % i.switch_inputs.len()]);
                    next += 1;
                    std::hint::black_box(b.key_switch_batch(key, input)?);
                    Ok(())
                },
                plan,
                tick,
            )?
        }
        (SuiteOp::Bootstrap, Setup::Primitive { key }, Some(i)) => sample_with(
            || {
                std::hint::black_box(b.bootstrap_batch(key, &i.cts[0..1])?);
                Ok(())
            },
            plan,
            tick,
        )?,
        (SuiteOp::GateAnd, Setup::Primitive { key }, Some(i)) => sample_with(
            || {
                std::hint::black_box(gates::gate_batch(b, key, Gate::And, &i.cts[1..2], &i.cts[2..3])?);
                Ok(())
            },
            plan,
            tick,
        )?,
        (
            SuiteOp::CkksEncrypt
            | SuiteOp::CkksDecrypt
            | SuiteOp::CkksMulRelin
            | SuiteOp::CkksRotate
            | SuiteOp::CkksHoisted4,
            Setup::Ckks(s),
            _,
        ) => {
            let i = ckks.ok_or_else(|| Error::InvalidInput("no CKKS inputs".into()))?;
            let CkksSetup { ctx, ev, cx, cy } = s.as_ref();
            sample_with(
                || {
                    match op {
                        SuiteOp::CkksEncrypt => {
                            std::hint::black_box(ctx.encrypt_seeded(&i.keys.pk, &i.pts[0], &i.seeds[0])?);
                        }
                        SuiteOp::CkksDecrypt => {
                            std::hint::black_box(ctx.decrypt(&i.keys.sk, cx)?);
                        }
                        SuiteOp::CkksMulRelin => {
                            std::hint::black_box(ev.mul(cx, cy)?);
                        }
                        SuiteOp::CkksRotate => {
                            std::hint::black_box(ev.rotate(cx, 1)?);
                        }
                        _ => {
                            std::hint::black_box(ev.rotate_hoisted(cx, &ROTATIONS)?);
                        }
                    }
                    Ok(())
                },
                plan,
                tick,
            )?
        }
        _ => return Err(Error::InvalidInput(format!("{op} is not an operation of the {} suite", config.suite))),
    };
    Ok(runs.into_iter().flatten().collect())
}

/// Screens `candidates` (at least two distinct backends) with `config`: each is first
/// checked against `oracle` (disqualified when a result differs), then every qualified
/// one is timed in every repetition, in the rotated order, and the timings are
/// [`score`]d against `default` (the current default's `Backend::name()`, whose
/// `default_source` is recorded).
///
/// Keys, ciphertexts and prepared keys are made before any timing.
pub fn run_recommend(
    candidates: &[Arc<dyn Backend>],
    default: &str,
    default_source: &str,
    oracle: &dyn Backend,
    config: &RecommendConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Recommendation> {
    let names: Vec<String> = candidates.iter().map(|b| b.name()).collect();
    if names.len() < 2 {
        return Err(Error::InvalidInput(format!(
            "recommend needs at least two candidates, got {}: {}",
            names.len(),
            names.join(", ")
        )));
    }
    if let Some((i, n)) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
        return Err(Error::InvalidInput(format!("candidate {} ({n}) is listed twice", i + 1)));
    }
    if config.reps == 0 || config.iterations == 0 {
        return Err(Error::InvalidPlan(format!(
            "reps ({}) and iterations ({}) must be >= 1",
            config.reps, config.iterations
        )));
    }
    let params = config.params;
    let oracle_name = oracle.name();
    // Captured before anything is measured: the commit and date of the code that runs.
    let environment = Environment::capture(candidates.first().map(|b| b.as_ref()));
    let (inputs, check) = match config.suite {
        Suite::Kernel | Suite::CkksPrimitive => {
            (None, "ntt_forward of one polynomial and ntt_inverse of the result, word for word")
        }
        Suite::Primitive => (
            Some(primitive_inputs(oracle, config)?),
            "blind_rotate, key_switch, bootstrap and gate_and outputs, word for word (keys and inputs from the oracle)",
        ),
    };
    let (ckks, check) = match config.suite {
        Suite::CkksPrimitive => {
            // A CKKS context holds its backend: the oracle as an `Arc` (one of the
            // candidates, or the CPU oracle itself).
            let cpu_oracle = fhe_cpu::CpuBackend::oracle();
            let oracle_arc: Arc<dyn Backend> = match candidates.iter().find(|b| b.name() == oracle_name) {
                Some(b) => b.clone(),
                None if cpu_oracle.name() == oracle_name => Arc::new(cpu_oracle),
                None => {
                    return Err(Error::InvalidInput(format!(
                        "the ckks-primitive suite compares with the CPU oracle, not {oracle_name}"
                    )))
                }
            };
            (
                Some(ckks_inputs(&oracle_arc, config)?),
                "CKKS encrypt (x, y), mul_relin, rotate(1) and hoisted rotate(1..4) outputs, word for word (keys from \
                 the oracle, same seeds), then Enc(x) and the rescaled x*y decrypted to within 10 bits",
            )
        }
        _ => (None, check),
    };
    let mut setups = Vec::with_capacity(candidates.len());
    let mut timings = Vec::with_capacity(candidates.len());
    for (b, name) in candidates.iter().zip(&names) {
        let verdict = match &inputs {
            None => match &ckks {
                Some(c) => check_ckks(b, c),
                None => check_kernel(b.as_ref(), params, oracle)?,
            },
            Some(i) => check_primitive(b.as_ref(), i),
        };
        let disqualified = verdict.as_ref().err().cloned();
        if let Some(why) = &disqualified {
            tracing::warn!(candidate = %name, reason = %why, "disqualified");
        }
        let ops = config
            .suite
            .operations()
            .iter()
            .map(|o| OpTimings { operation: o.name().to_string(), reps: Vec::new() })
            .collect();
        timings.push(CandidateTimings { backend: name.clone(), disqualified, ops });
        setups.push(verdict.ok());
    }

    let mut order_per_rep = Vec::with_capacity(config.reps);
    for rep in 0..config.reps {
        let order: Vec<usize> = rotation(candidates.len(), rep).into_iter().filter(|&i| setups[i].is_some()).collect();
        order_per_rep.push(order.iter().map(|&i| names[i].clone()).collect());
        for i in order {
            let setup = setups[i].as_ref().expect("filtered");
            for (j, &op) in config.suite.operations().iter().enumerate() {
                let label = format!("rep {}/{} {} {} {op}", rep + 1, config.reps, names[i], config.params_name());
                let calls = config.iterations;
                progress(&Progress::Start { label: label.clone(), calls });
                let samples = time_op(
                    candidates[i].as_ref(),
                    setup,
                    inputs.as_ref(),
                    ckks.as_ref(),
                    op,
                    config,
                    &mut |done, calls| progress(&Progress::Tick { label: label.clone(), done, calls }),
                )?;
                progress(&Progress::Finish { label });
                timings[i].ops[j].reps.push(samples);
            }
        }
    }

    let scoring = score(&timings, default)?;
    let constructor = constructor_lines(&scoring.winner);
    Ok(Recommendation {
        schema_version: RECOMMEND_SCHEMA_VERSION,
        kind: RECOMMENDATION_KIND.to_string(),
        suite: config.suite,
        params: config.params_name().to_string(),
        default: default.to_string(),
        default_source: default_source.to_string(),
        requested: names,
        operations: config.suite.operations().iter().map(|o| o.name().to_string()).collect(),
        reps: config.reps,
        iterations: config.iterations,
        warmup: config.warmup,
        order_per_rep,
        oracle: oracle_name,
        check: check.to_string(),
        environment,
        scoring,
        constructor,
    })
}

/// Writes `rec` as JSON to `out`, or when `out` is `None` to
/// `<dir>/<timestamp>-ntt-<suite>-<params>.json` (a second file in the same second gets
/// `-2`, `-3`, ...). Returns the path.
pub fn write_recommendation(dir: &Path, rec: &Recommendation, out: Option<&Path>) -> Result<PathBuf> {
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => new_file_path(dir, &format!("ntt-{}-{}", rec.suite, sanitize(&rec.params))),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.into(), source })?;
    }
    let json = serde_json::to_string_pretty(rec)?;
    // Checked as a reader will see it: the text, through the typed schema.
    parse_recommendation(&json)?;
    std::fs::write(&path, json + "\n").map_err(|source| Error::Io { path: path.clone(), source })?;
    tracing::info!(path = %path.display(), "wrote NTT recommendation");
    Ok(path)
}

/// The printed form: a header, one line per candidate (per-operation medians, score,
/// relative latency, median CV, or why it was disqualified), the verdict and the
/// constructor lines.
pub fn format_recommendation(rec: &Recommendation) -> String {
    let env = &rec.environment;
    let s = &rec.scoring;
    let mut out = format!(
        "recommend ntt --suite {} --params {} | {} ({} cores) | commit {} | {} | {} reps x {} calls, {} warm-up\n",
        rec.suite,
        rec.params,
        env.machine(),
        env.cores,
        env.commit_label(),
        env.date_utc,
        rec.reps,
        rec.iterations,
        rec.warmup,
    );
    let mut header: Vec<String> = vec!["backend".into()];
    header.extend(rec.operations.iter().cloned());
    header.extend(["score".into(), "vs fastest".into(), "median cv".into(), "status".into()]);
    let mut right = vec![false];
    right.extend(rec.operations.iter().map(|_| true));
    right.extend([true, true, true, false]);
    let lines: Vec<Vec<String>> = s
        .candidates
        .iter()
        .map(|c| {
            let mut l = vec![c.backend.clone()];
            if c.disqualified.is_some() {
                l.extend(rec.operations.iter().map(|_| "-".to_string()));
                l.extend(["-".into(), "-".into(), "-".into()]);
            } else {
                l.extend(c.ops.iter().map(|o| format_ns(o.median_ns)));
                l.push(c.score.map(|x| format!("{x:.3}")).unwrap_or_default());
                l.push(c.relative_latency.map(|x| format!("{:+.1}%", 100.0 * x)).unwrap_or_default());
                l.push(c.median_cv.map(|x| format!("{:.1}%", 100.0 * x)).unwrap_or_default());
            }
            let mut status = Vec::new();
            if let Some(why) = &c.disqualified {
                status.push(format!("DISQUALIFIED: {why}"));
            }
            if c.backend == s.baseline {
                status.push(if s.baseline_is_default { "default".to_string() } else { "baseline".to_string() });
            }
            if c.backend == s.winner {
                status.push("recommended".to_string());
            }
            l.push(status.join(", "));
            l
        })
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    out.push_str(&render(&header_refs, &right, &lines));
    out.push_str(&format!(
        "score: geometric mean of per-operation median ratios to {}; near tie <= 3% keeps the default\n",
        s.baseline
    ));
    out.push_str(&format!("fastest: {}; recommended: {}", s.fastest, s.winner));
    if s.near_tie {
        out.push_str(" (near tie: the current default is kept)");
    }
    out.push_str(&format!("\nconfidence: {} ({})\n", s.confidence, s.confidence_reason));
    out.push_str(&format!(
        "use: {}   or   {}   or   {}\n",
        rec.constructor.rust, rec.constructor.engine, rec.constructor.env
    ));
    out
}

#[cfg(test)]
mod tests;
