//! Fourier extensions: a function on `[-R, R]` as a trigonometric series whose period,
//! `4R`, is twice the range, the FE functional bootstrap's series
//! ([`crate::ckks::circuits::FunctionalBootstrapper`]).
//!
//! With `x = v / 2R` in `[-1/2, 1/2)`, the series is `F(v) = 2 Re(sum_j c_j e^(i pi j
//! x))` (OpenFHE's convention for `EvalFEFuncBootstrap`: `c_0` first). A function that is
//! not periodic has a slowly converging Fourier series (Gibbs at the ends of its period);
//! fitted on half of a longer period, with the other half free, the series converges
//! geometrically for an analytic function (Boyd, "A comparison of numerical algorithms for
//! Fourier extension of the first, second, and third kinds", J. Comput. Phys. 2002;
//! Huybrechs, "On the Fourier extension of nonperiodic functions", SIAM J. Numer. Anal.
//! 2010). The fit is their oversampled least squares: `8(2d + 1)` Chebyshev points of
//! `[-1/2, 1/2]`, the `2d + 1` real unknowns `a_0, a_j, b_j` of `a_0 + sum a_j cos(pi j x)
//! + b_j sin(pi j x)`, solved by Householder QR with a Tikhonov term weighted by the
//! frequency (`lambda (1 + j)^2`, a Sobolev penalty): the system is ill-conditioned by
//! construction (the free half), and without the penalty the lowest degrees that reach a
//! precision do it with coefficients thousands of times the function's size, which
//! multiply the bootstrap's noise by as much. [`FourierSeries::for_precision`] sets
//! `lambda` just below the precision asked for and takes the lowest degree within it
//! whose noise gain ([`FourierSeries::noise_gain`]) is at most 16 times the range.
//!
//! The cosines come from [`cos_sin_turns`] and every sum runs in a fixed order: the
//! coefficients of a deterministic function are the same on every platform.

use fhe_api::error::{Error, Result};

use crate::ckks::encoding::Complex;
use crate::ckks::fft::cos_sin_turns;

/// Highest degree [`FourierSeries::fit`] accepts.
pub const MAX_FOURIER_DEGREE: usize = 255;

/// Tikhonov weight of [`FourierSeries::fit`], relative to the columns' size: below the
/// precision any series is asked for here (2^-40), above the conditioning floor of `f64`.
const TIKHONOV: f64 = 1e-12;

/// The most a series chosen by [`FourierSeries::for_precision`] may amplify the error of
/// the exponential, relative to the function's range.
const MAX_GAIN: f64 = 16.0;

/// `F(v) = 2 Re(sum_j c_j e^(i pi j v / 2R))` on `[-R, R]` (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct FourierSeries {
    /// `R`: the series fits the function on `[-R, R]`.
    pub radius: f64,
    /// `c_0 .. c_d`.
    pub coeffs: Vec<Complex>,
}

impl FourierSeries {
    /// The Fourier extension of `f` on `[-radius, radius]` of degree `degree` (`1 ..=`
    /// [`MAX_FOURIER_DEGREE`]); `Error::InvalidInput` for a bad radius or degree, or an `f`
    /// not finite at a sample.
    pub fn fit(f: impl Fn(f64) -> f64, radius: f64, degree: usize) -> Result<FourierSeries> {
        Self::fit_regularized(f, radius, degree, TIKHONOV)
    }

    /// [`FourierSeries::fit`] with the penalty `lambda` (module docs).
    fn fit_regularized(f: impl Fn(f64) -> f64, radius: f64, degree: usize, tik: f64) -> Result<FourierSeries> {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(Error::InvalidInput(format!("Fourier extension radius {radius}: needs a finite R > 0")));
        }
        if !(1..=MAX_FOURIER_DEGREE).contains(&degree) {
            return Err(Error::InvalidInput(format!(
                "Fourier extension degree {degree}: must be 1 ..= {MAX_FOURIER_DEGREE}"
            )));
        }
        let n = 2 * degree + 1;
        let m = 8 * n;
        // Chebyshev points of [-1/2, 1/2]: denser at the ends, where a fit is hardest.
        let xs: Vec<f64> = (0..m).map(|k| 0.5 * cos_sin_turns((2 * k + 1) as f64 / (4 * m) as f64).0).collect();
        let mut rhs = Vec::with_capacity(m + n);
        for &x in &xs {
            let y = f(2.0 * radius * x);
            if !y.is_finite() {
                return Err(Error::InvalidInput(format!("the function is not finite at {}", 2.0 * radius * x)));
            }
            rhs.push(y);
        }
        rhs.resize(m + n, 0.0);
        // Rows: the samples, then sqrt(m) * TIKHONOV * I. Column-major.
        let lambda = tik * (m as f64).sqrt();
        let mut a = vec![0.0f64; n * (m + n)];
        let rows = m + n;
        for (k, &x) in xs.iter().enumerate() {
            a[k] = 1.0;
            for j in 1..=degree {
                let (c, s) = cos_sin_turns(j as f64 * x / 2.0);
                a[(2 * j - 1) * rows + k] = c;
                a[2 * j * rows + k] = s;
            }
        }
        for j in 0..n {
            // Column j is frequency (j + 1) / 2.
            a[j * rows + m + j] = lambda * ((1 + j.div_ceil(2)) as f64).powi(2);
        }
        let sol = least_squares(&mut a, rows, n, &mut rhs)?;
        let mut coeffs = vec![Complex::new(sol[0] / 2.0, 0.0)];
        coeffs.extend((1..=degree).map(|j| Complex::new(sol[2 * j - 1] / 2.0, -sol[2 * j] / 2.0)));
        Ok(FourierSeries { radius, coeffs })
    }

    /// The lowest degree whose series is within `2^-bits` of `f`'s range on `[-radius,
    /// radius]` ([`FourierSeries::relative_error`]) with a noise gain of at most 16 times
    /// that range (module docs); `Error::InvalidInput` when no degree up to `max_degree`
    /// does, naming the best reached.
    pub fn for_precision(f: impl Fn(f64) -> f64, radius: f64, bits: f64, max_degree: usize) -> Result<FourierSeries> {
        if !(1.0..=40.0).contains(&bits) {
            return Err(Error::InvalidInput(format!("Fourier extension to {bits} bits: must be 1 ..= 40")));
        }
        let range = range_of(&f, radius);
        let tik = (-(bits + 2.0)).exp2().max(TIKHONOV);
        let mut best = f64::INFINITY;
        for d in 1..=max_degree.min(MAX_FOURIER_DEGREE) {
            let s = FourierSeries::fit_regularized(&f, radius, d, tik)?;
            let e = s.relative_error(&f);
            if e <= (-bits).exp2() && s.noise_gain() <= MAX_GAIN * range {
                return Ok(s);
            }
            best = best.min(e);
        }
        Err(Error::InvalidInput(format!(
            "no Fourier extension of degree <= {max_degree} reaches 2^-{bits} of the range on [-{radius}, {radius}] \
             (best: 2^{:.1})",
            best.log2()
        )))
    }

    pub fn degree(&self) -> usize {
        self.coeffs.len().saturating_sub(1)
    }

    /// `F(v)` in `f64`.
    pub fn eval(&self, v: f64) -> f64 {
        let x = v / (2.0 * self.radius);
        let mut sum = self.coeffs.first().map_or(0.0, |c| c.re);
        for (j, c) in self.coeffs.iter().enumerate().skip(1) {
            let (cs, sn) = cos_sin_turns(j as f64 * x / 2.0);
            sum += c.re * cs - c.im * sn;
        }
        2.0 * sum
    }

    /// `max |F - f|` on `[-R, R]` over `f`'s range there (1 for a constant), sampled.
    pub fn relative_error(&self, f: impl Fn(f64) -> f64) -> f64 {
        let samples = 16 * self.coeffs.len() + 1025;
        let err = (0..samples)
            .map(|i| {
                let v = self.radius * (2.0 * i as f64 / (samples - 1) as f64 - 1.0);
                (self.eval(v) - f(v)).abs()
            })
            .fold(0.0, f64::max);
        err / range_of(&f, self.radius)
    }

    /// `2 sum j |c_j|`: the most an error `e` in the unit-circle point `z` the series is
    /// evaluated on moves `F` (by `2 sum j |c_j| e`, to first order).
    pub fn noise_gain(&self) -> f64 {
        2.0 * self.coeffs.iter().enumerate().map(|(j, c)| j as f64 * c.re.hypot(c.im)).sum::<f64>()
    }
}

/// The functions FE functional bootstrapping ships series for, each on its range `[-R,
/// R]` (OpenFHE's ranges for exp, sigmoid and GELU; tanh on `[-4, 4]`, where it reaches
/// 0.9993; identity on `[-1, 1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeFunction {
    Identity,
    Exp,
    Tanh,
    Sigmoid,
    /// GELU in its tanh form, `x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2`.
    Gelu,
}

impl FeFunction {
    pub const ALL: [FeFunction; 5] =
        [FeFunction::Identity, FeFunction::Exp, FeFunction::Tanh, FeFunction::Sigmoid, FeFunction::Gelu];

    pub const fn name(self) -> &'static str {
        match self {
            FeFunction::Identity => "identity",
            FeFunction::Exp => "exp",
            FeFunction::Tanh => "tanh",
            FeFunction::Sigmoid => "sigmoid",
            FeFunction::Gelu => "gelu",
        }
    }

    /// `R`: the function's input range is `[-R, R]`.
    pub const fn radius(self) -> f64 {
        match self {
            FeFunction::Identity => 1.0,
            FeFunction::Exp => 2.0,
            FeFunction::Tanh => 4.0,
            FeFunction::Sigmoid | FeFunction::Gelu => 8.0,
        }
    }

    /// The function in `f64`.
    pub fn eval(self, v: f64) -> f64 {
        match self {
            FeFunction::Identity => v,
            FeFunction::Exp => v.exp(),
            FeFunction::Tanh => v.tanh(),
            FeFunction::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            FeFunction::Gelu => {
                let k = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * v * (1.0 + (k * (v + 0.044715 * v * v * v)).tanh())
            }
        }
    }

    /// Its series for `bits` of precision ([`FourierSeries::for_precision`], degree at most
    /// 127).
    pub fn series(self, bits: f64) -> Result<FourierSeries> {
        FourierSeries::for_precision(|v| self.eval(v), self.radius(), bits, 127)
    }
}

impl std::str::FromStr for FeFunction {
    type Err = Error;
    fn from_str(s: &str) -> Result<FeFunction> {
        FeFunction::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            let names: Vec<&str> = FeFunction::ALL.iter().map(|f| f.name()).collect();
            Error::InvalidInput(format!("unknown function {s:?}: one of {}", names.join(", ")))
        })
    }
}

/// The precision FE functional bootstrapping reaches at a scale of `2^scale_bits` (its
/// noise floor), which the shipped series are fitted to: a series more precise than the
/// floor only costs degree. The transforms' rounding at the scale, times `2 pi (K + 1)`
/// in the exponential and the series' gain, leaves about 8-9 bits at 29 bits (measured,
/// both libraries, docs/PERF.md) and 26 at 50 (the CI chain); OpenFHE reports 31.4 at
/// 59. The series are fitted a few bits past that, so their own error adds little: the
/// line through 29 -> 12 and 59 -> 32, capped at 36.
pub fn precision_floor_bits(scale_bits: u32) -> f64 {
    (12.0 + (scale_bits as f64 - 29.0) * 20.0 / 30.0).clamp(8.0, 36.0)
}

/// Seed 2's precision of `got` against `want`: the mean absolute error relative to the
/// range of `want`, in bits (`-log2`), and the largest absolute error.
pub fn relative_precision(want: &[f64], got: &[f64]) -> (f64, f64) {
    let n = want.len().min(got.len()).max(1);
    let (lo, hi) = want.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &w| (a.min(w), b.max(w)));
    let range = if hi - lo > 1e-15 { hi - lo } else { 1.0 };
    let errs = want.iter().zip(got).map(|(w, g)| (w - g).abs());
    let (sum, max) = errs.fold((0.0, 0.0f64), |(s, m), e| (s + e, m.max(e)));
    (-(sum / n as f64 / range).log2(), max)
}

/// `max f - min f` on `[-radius, radius]`, sampled (1 for a constant).
pub fn range_of(f: impl Fn(f64) -> f64, radius: f64) -> f64 {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..=2048 {
        let y = f(radius * (i as f64 / 1024.0 - 1.0));
        (lo, hi) = (lo.min(y), hi.max(y));
    }
    if hi - lo > 1e-300 {
        hi - lo
    } else {
        1.0
    }
}

/// The least-squares solution of the column-major `rows x n` system `a x = b` (`rows >=
/// n`), by Householder QR; `a` and `b` are overwritten.
fn least_squares(a: &mut [f64], rows: usize, n: usize, b: &mut [f64]) -> Result<Vec<f64>> {
    for k in 0..n {
        let col = &mut a[k * rows..(k + 1) * rows];
        let norm = col[k..].iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            return Err(Error::InvalidInput("a rank-deficient Fourier extension system".into()));
        }
        let alpha = if col[k] > 0.0 { -norm } else { norm };
        // v = col[k..] - alpha e_1, stored in place; H = I - 2 v v^T / (v^T v).
        col[k] -= alpha;
        let vv: f64 = col[k..].iter().map(|x| x * x).sum();
        let v: Vec<f64> = col[k..].to_vec();
        col[k] = alpha;
        for x in col[k + 1..].iter_mut() {
            *x = 0.0;
        }
        for j in k + 1..n {
            let cj = &mut a[j * rows + k..(j + 1) * rows];
            let dot: f64 = v.iter().zip(cj.iter()).map(|(p, q)| p * q).sum();
            let s = 2.0 * dot / vv;
            for (x, p) in cj.iter_mut().zip(&v) {
                *x -= s * p;
            }
        }
        let dot: f64 = v.iter().zip(&b[k..]).map(|(p, q)| p * q).sum();
        let s = 2.0 * dot / vv;
        for (x, p) in b[k..].iter_mut().zip(&v) {
            *x -= s * p;
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let mut s = b[k];
        for (j, xj) in x.iter().enumerate().skip(k + 1) {
            s -= a[j * rows + k] * xj;
        }
        x[k] = s / a[k * rows + k];
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_converge_fast_for_smooth_functions() {
        let tanh = |v: f64| v.tanh();
        let lo = FourierSeries::fit(tanh, 4.0, 8).unwrap().relative_error(tanh);
        let hi = FourierSeries::fit(tanh, 4.0, 32).unwrap().relative_error(tanh);
        assert!(hi < 1e-8 && hi < lo / 1e3, "{lo:e} {hi:e}");
        // A trigonometric polynomial of the series' own period is reproduced.
        let trig = |v: f64| 0.3 + (std::f64::consts::PI * v / 2.0).cos() - 0.5 * (std::f64::consts::PI * v).sin();
        let s = FourierSeries::fit(trig, 1.0, 4).unwrap();
        assert!(s.relative_error(trig) < 1e-11, "{:e}", s.relative_error(trig));
        assert!((s.coeffs[0].re - 0.15).abs() < 1e-9 && (s.coeffs[2].im - 0.25).abs() < 1e-9, "{:?}", s.coeffs);
    }

    #[test]
    fn series_for_a_precision_are_short_and_tame() {
        let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
        for bits in [12.0, 24.0, 32.0] {
            let s = FourierSeries::for_precision(sigmoid, 8.0, bits, 80).unwrap();
            assert!(s.relative_error(sigmoid) <= (-bits).exp2());
            // The plain fit at that degree reaches it too, with coefficients that would
            // amplify the noise far more: the penalty is what keeps them small.
            assert!(s.noise_gain() <= 16.0, "{bits}: {}", s.noise_gain());
            assert!(s.degree() as f64 <= 2.0 + 1.1 * bits, "{bits}: degree {}", s.degree());
        }
        let plain = FourierSeries::fit(sigmoid, 8.0, 16).unwrap();
        assert!(plain.noise_gain() > 1000.0, "{}", plain.noise_gain());
        // A jump cannot be fitted to 30 bits.
        let e = FourierSeries::for_precision(|v: f64| v.signum(), 1.0, 30.0, 20).unwrap_err();
        assert!(e.to_string().contains("2^-30"), "{e}");
        assert!(FourierSeries::fit(f64::exp, 0.0, 3).is_err());
        assert!(FourierSeries::fit(f64::exp, 1.0, 0).is_err());
        assert!(FourierSeries::fit(|_| f64::NAN, 1.0, 3).is_err());
    }
}
