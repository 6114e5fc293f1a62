//! Chebyshev interpolation: a function on `[a, b]` as `sum_j c_j T_j(u)`,
//! `u = (2x - a - b) / (b - a)`, from its values at the `d + 1` Chebyshev nodes of the
//! first kind (`x_k = cos(pi (k + 1/2) / (d + 1))`). The interpolant is within a small
//! factor (`O(log d)`) of the best polynomial of degree `d` in the max norm.
//!
//! The nodes and the cosines of the coefficient sum come from [`cos_sin_turns`] (no
//! libm) and every sum runs in a fixed order, so the coefficients, and with them the
//! ciphertexts a circuit computes, are the same on every platform for a function that
//! is itself deterministic.

use fhe_api::error::{Error, Result};

use crate::ckks::fft::cos_sin_turns;

/// A polynomial in the Chebyshev basis on an interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Chebyshev {
    /// The interval `[a, b]` the basis is mapped to.
    pub a: f64,
    pub b: f64,
    /// `c_0 .. c_d`: `p(x) = sum_j c_j T_j(u(x))`.
    pub coeffs: Vec<f64>,
}

impl Chebyshev {
    /// The interpolant of `f` of degree `degree` on `[a, b]` (`a < b`, both finite,
    /// `1 <= degree <= 1023`); `Error::InvalidInput` otherwise or when `f` is not finite at
    /// a node.
    pub fn interpolate(f: impl Fn(f64) -> f64, a: f64, b: f64, degree: usize) -> Result<Chebyshev> {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(Error::InvalidInput(format!("Chebyshev interval [{a}, {b}]: needs finite a < b")));
        }
        if !(1..=1023).contains(&degree) {
            return Err(Error::InvalidInput(format!("Chebyshev degree {degree}: must be 1 ..= 1023")));
        }
        let n = degree + 1;
        let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
        // Node k at angle (2k + 1) / (4n) turns.
        let values: Vec<f64> = (0..n)
            .map(|k| {
                let x = mid + half * cos_sin_turns((2 * k + 1) as f64 / (4 * n) as f64).0;
                f(x)
            })
            .collect();
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(format!("the function is not finite at the Chebyshev node {k}")));
        }
        // cos(pi j (k + 1/2) / n) is the cosine of j (2k + 1) / (4n) turns: one table of
        // the 4n multiples of 1/4n turn serves every (j, k).
        let table: Vec<f64> = (0..4 * n).map(|m| cos_sin_turns(m as f64 / (4 * n) as f64).0).collect();
        let coeffs = (0..n)
            .map(|j| {
                let sum: f64 = (0..n).map(|k| values[k] * table[(j * (2 * k + 1)) % (4 * n)]).sum();
                let w = if j == 0 { 1.0 } else { 2.0 };
                w * sum / n as f64
            })
            .collect();
        Ok(Chebyshev { a, b, coeffs })
    }

    /// The polynomial's degree (the index of the last coefficient).
    pub fn degree(&self) -> usize {
        self.coeffs.len().saturating_sub(1)
    }

    /// `p(x)` in `f64` by Clenshaw's recurrence (for checks and error bounds).
    pub fn eval(&self, x: f64) -> f64 {
        let u = (2.0 * x - self.a - self.b) / (self.b - self.a);
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coeffs.iter().skip(1).rev() {
            (b1, b2) = (2.0 * u * b1 - b2 + c, b1);
        }
        u * b1 - b2 + self.coeffs.first().copied().unwrap_or(0.0)
    }

    /// `max |p(x) - f(x)|` over `samples` evenly spaced points of `[a, b]`.
    pub fn max_error(&self, f: impl Fn(f64) -> f64, samples: usize) -> f64 {
        let samples = samples.max(2);
        (0..samples)
            .map(|i| {
                let x = self.a + (self.b - self.a) * i as f64 / (samples - 1) as f64;
                (self.eval(x) - f(x)).abs()
            })
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_polynomials_exactly_and_smooth_functions_closely() {
        // x^3 - 2x on [-3, 5] has degree 3: a degree-5 interpolant reproduces it.
        let p = Chebyshev::interpolate(|x| x * x * x - 2.0 * x, -3.0, 5.0, 5).unwrap();
        assert!(p.max_error(|x| x * x * x - 2.0 * x, 1000) < 1e-12);
        assert!(p.coeffs[4].abs() < 1e-12 && p.coeffs[5].abs() < 1e-12);
        // exp on [-1, 1] at degree 15: the error is below 2^-45.
        let e = Chebyshev::interpolate(f64::exp, -1.0, 1.0, 15).unwrap();
        assert!(e.max_error(f64::exp, 4000) < 2f64.powi(-45));
        // A degree too low for the function shows a large error (the check can fail).
        let lo = Chebyshev::interpolate(|x| (20.0 * x).cos(), -1.0, 1.0, 8).unwrap();
        assert!(lo.max_error(|x| (20.0 * x).cos(), 4000) > 0.1);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(Chebyshev::interpolate(f64::exp, 1.0, 1.0, 4).is_err());
        assert!(Chebyshev::interpolate(f64::exp, 0.0, f64::INFINITY, 4).is_err());
        assert!(Chebyshev::interpolate(f64::exp, 0.0, 1.0, 0).is_err());
        // Degree 2 has a node at 0 (a quarter turn, exactly): 1/x is infinite there.
        assert!(Chebyshev::interpolate(|x| 1.0 / x, -1.0, 1.0, 2).is_err());
        assert!(Chebyshev::interpolate(|x| 1.0 / x, -1.0, 1.0, 3).is_ok());
        assert!(Chebyshev::interpolate(|_| f64::NAN, -1.0, 1.0, 2).is_err());
    }
}
