//! Statistics over timing samples, and the measuring loop.
//!
//! Definitions (also in `bench/SCHEMA.md`):
//! - samples are wall-clock nanoseconds of one call each, pooled over all runs;
//! - `median`: the middle sample, or the mean of the two middle samples for an even count;
//! - `p99`: nearest rank, the sample at rank `ceil(0.99 * n)` (1-based) of the sorted samples;
//! - `mean`, `min`, `max` as usual; `stddev`: the sample standard deviation (divisor `n - 1`,
//!   0 for one sample); `cv = stddev / mean` (0 when the mean is 0).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Summary of one measurement, every time in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    /// Timed calls that went into the statistics (warm-up excluded): `iterations * runs`.
    pub samples: usize,
    pub median_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    /// Coefficient of variation: sample standard deviation over mean (dimensionless).
    pub cv: f64,
    /// The median of each run on its own, in run order (spread between runs).
    pub run_medians_ns: Vec<f64>,
}

impl Stats {
    /// Statistics of one pooled set of samples (nanoseconds), with no per-run medians.
    pub fn from_samples(samples_ns: &[f64]) -> Result<Stats> {
        Stats::from_runs(&[samples_ns.to_vec()])
    }

    /// Statistics of several runs: the runs are pooled for every statistic, and each
    /// run's own median is kept in `run_medians_ns`.
    pub fn from_runs(runs: &[Vec<f64>]) -> Result<Stats> {
        let mut all: Vec<f64> = runs.iter().flatten().copied().collect();
        if all.is_empty() {
            return Err(Error::NoSamples);
        }
        if let Some(bad) = all.iter().find(|x| !x.is_finite() || **x < 0.0) {
            return Err(Error::InvalidSample(*bad));
        }
        all.sort_by(f64::total_cmp);
        let n = all.len();
        let mean = all.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { all.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let stddev = var.sqrt();
        let run_medians_ns = runs
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| {
                let mut r = r.clone();
                r.sort_by(f64::total_cmp);
                median_sorted(&r)
            })
            .collect();
        Ok(Stats {
            samples: n,
            median_ns: median_sorted(&all),
            p99_ns: percentile_sorted(&all, 99.0),
            min_ns: all[0],
            max_ns: all[n - 1],
            mean_ns: mean,
            stddev_ns: stddev,
            cv: if mean > 0.0 { stddev / mean } else { 0.0 },
            run_medians_ns,
        })
    }
}

/// Median of sorted, non-empty samples.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Nearest-rank percentile `p` (0 < p <= 100) of sorted, non-empty samples.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// How many calls to time and to throw away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Timed calls per run.
    pub iterations: usize,
    /// Untimed calls at the start of every run, discarded.
    pub warmup: usize,
    /// Runs; their samples are pooled.
    pub runs: usize,
}

/// Times `op`: `runs` runs, each `warmup` discarded calls followed by `iterations` timed
/// calls (one `Instant` pair per call), and summarizes the pooled samples.
///
/// `iterations` and `runs` must be at least 1. The first error `op` returns stops the
/// measurement and is returned.
pub fn measure<F>(op: F, iterations: usize, warmup: usize, runs: usize) -> Result<Stats>
where
    F: FnMut() -> Result<()>,
{
    measure_with(op, Plan { iterations, warmup, runs }, &mut |_, _| {})
}

/// [`measure`] with a callback after every timed call: `(done, total)` timed calls.
pub fn measure_with<F>(op: F, plan: Plan, tick: &mut dyn FnMut(usize, usize)) -> Result<Stats>
where
    F: FnMut() -> Result<()>,
{
    Stats::from_runs(&sample_with(op, plan, tick)?)
}

/// The raw samples behind [`measure_with`]: one vector of `iterations` nanosecond
/// timings per run, warm-up calls already discarded. For callers that pool samples
/// across separate measurements (`recommend`'s repetitions).
pub fn sample_with<F>(mut op: F, plan: Plan, tick: &mut dyn FnMut(usize, usize)) -> Result<Vec<Vec<f64>>>
where
    F: FnMut() -> Result<()>,
{
    if plan.iterations == 0 || plan.runs == 0 {
        return Err(Error::InvalidPlan(format!(
            "iterations ({}) and runs ({}) must be >= 1",
            plan.iterations, plan.runs
        )));
    }
    let total = plan.iterations * plan.runs;
    let mut done = 0;
    let mut runs = Vec::with_capacity(plan.runs);
    for _ in 0..plan.runs {
        for _ in 0..plan.warmup {
            op()?;
        }
        let mut samples = Vec::with_capacity(plan.iterations);
        for _ in 0..plan.iterations {
            let start = Instant::now();
            op()?;
            samples.push(start.elapsed().as_nanos() as f64);
            done += 1;
            tick(done, total);
        }
        runs.push(samples);
    }
    Ok(runs)
}

/// Median of non-empty samples in any order.
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

/// One side of an [`alternate`] comparison: a call to time.
pub type Call<'a> = Box<dyn FnMut() + 'a>;

/// `calls` timed calls of `f` after one discarded, each in ms.
pub fn time_calls(calls: usize, f: &mut Call) -> Vec<f64> {
    f();
    (0..calls)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// `rounds` rounds of [`time_calls`] on each side, the side that goes first alternating
/// (ours in even rounds): every call's ms for `ours` and `theirs`, and each round's ratio
/// of medians, ours over theirs. The examples that time us against a peer in one process
/// (`fhe-bench/examples/*_vs_tfhe.rs`).
pub fn alternate(rounds: usize, calls: usize, ours: &mut Call, theirs: &mut Call) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (x, y) = if r % 2 == 0 {
            let x = time_calls(calls, ours);
            (x, time_calls(calls, theirs))
        } else {
            let y = time_calls(calls, theirs);
            (time_calls(calls, ours), y)
        };
        ratios.push(median(&x) / median(&y));
        a.extend(x);
        b.extend(y);
    }
    (a, b, ratios)
}

#[cfg(test)]
mod tests {
    /// Rounds alternate which side goes first, and every call is timed or discarded as
    /// documented (one discarded, then `calls` timed, per side and round).
    #[test]
    fn alternate_takes_turns_and_counts_calls() {
        use std::cell::RefCell;
        let order = RefCell::new(Vec::new());
        let mut ours: super::Call = Box::new(|| order.borrow_mut().push('o'));
        let mut theirs: super::Call = Box::new(|| order.borrow_mut().push('t'));
        let (a, b, ratios) = super::alternate(2, 2, &mut ours, &mut theirs);
        drop((ours, theirs));
        assert_eq!(order.into_inner().iter().collect::<String>(), "ooottttttooo");
        assert_eq!((a.len(), b.len(), ratios.len()), (4, 4, 2));
        assert_eq!(super::median(&[3.0, 1.0, 2.0]), 2.0);
    }

    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn known_vector_1_to_100() {
        // 1..=100 shuffled: median 50.5, nearest-rank p99 = 99, mean 50.5,
        // sample variance n(n+1)/12 = 841.666..., sd 29.0114...
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        v.reverse();
        v.swap(3, 70);
        let s = Stats::from_samples(&v).unwrap();
        assert_eq!(s.samples, 100);
        assert!(close(s.median_ns, 50.5));
        assert!(close(s.p99_ns, 99.0));
        assert!(close(s.min_ns, 1.0));
        assert!(close(s.max_ns, 100.0));
        assert!(close(s.mean_ns, 50.5));
        let sd = (100.0f64 * 101.0 / 12.0).sqrt();
        assert!(close(s.stddev_ns, sd));
        assert!(close(s.cv, sd / 50.5));
    }

    #[test]
    fn odd_count_and_small_p99() {
        let s = Stats::from_samples(&[5.0, 1.0, 3.0]).unwrap();
        assert!(close(s.median_ns, 3.0));
        // ceil(0.99 * 3) = 3: the largest sample.
        assert!(close(s.p99_ns, 5.0));
        assert!(close(s.mean_ns, 3.0));
        assert!(close(s.stddev_ns, 2.0));
        assert!(close(s.cv, 2.0 / 3.0));
    }

    #[test]
    fn constant_samples_have_zero_cv() {
        let s = Stats::from_samples(&[7.0; 10]).unwrap();
        assert_eq!(s.cv, 0.0);
        assert_eq!(s.stddev_ns, 0.0);
        let one = Stats::from_samples(&[4.0]).unwrap();
        assert_eq!((one.median_ns, one.p99_ns, one.stddev_ns), (4.0, 4.0, 0.0));
    }

    #[test]
    fn runs_are_pooled_and_run_medians_kept() {
        let s = Stats::from_runs(&[vec![1.0, 2.0, 3.0], vec![10.0, 20.0, 30.0]]).unwrap();
        assert_eq!(s.samples, 6);
        assert_eq!(s.run_medians_ns, vec![2.0, 20.0]);
        assert!(close(s.median_ns, 6.5));
        assert!(close(s.p99_ns, 30.0));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(matches!(Stats::from_samples(&[]), Err(Error::NoSamples)));
        assert!(matches!(Stats::from_samples(&[1.0, f64::NAN]), Err(Error::InvalidSample(_))));
        assert!(matches!(measure(|| Ok(()), 0, 0, 1), Err(Error::InvalidPlan(_))));
    }

    #[test]
    fn measure_discards_warmup_and_counts_calls() {
        let mut calls = 0usize;
        let s = measure(
            || {
                calls += 1;
                Ok(())
            },
            7,
            2,
            3,
        )
        .unwrap();
        assert_eq!(s.samples, 21);
        assert_eq!(s.run_medians_ns.len(), 3);
        assert_eq!(calls, 3 * (7 + 2));
    }

    #[test]
    fn measure_propagates_errors() {
        let r = measure(|| Err(Error::InvalidInput("boom".into())), 3, 0, 1);
        assert!(matches!(r, Err(Error::InvalidInput(_))));
    }
}
