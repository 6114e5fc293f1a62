//! The scale of a CKKS ciphertext or plaintext: the factor its message is multiplied by.
//!
//! A [`Scale`] is an `f64` that is finite, normal and in `[2^-64, 2^1000)`; every constructor
//! and the decoder refuse anything else. Scales are tracked on the host, exactly as
//! `f64` arithmetic gives them (products and quotients correctly rounded, in the order the
//! evaluator documents): a rescale divides by the dropped prime's value, a constant is
//! encoded at the prime about to be dropped, so a rescaled product with a constant has
//! its operand's scale back (`docs/CKKS.md`, "Scale").
//!
//! Two scales are the same ([`Scale::same_as`]) when they differ by at most
//! [`SAME_SCALE_UNITS`] units of the scale itself, or by a relative `2^-44`, whichever is
//! wider: a difference `d` adds `d / scale` of the message to a sum, below the encoding's
//! own rounding (one unit) for the first bound, and below the `f64` rounding of a chain of
//! some hundred scale operations for the second.

use std::fmt;

use crate::error::{Error, Result};

/// Scales below `2^-64` are refused (a fresh ciphertext rescaled by one prime still sits
/// far above; anything that small is a slip).
pub const MIN_SCALE_LOG2: i32 = -64;
/// Scales at or above `2^1000` are refused (`f64` ends at `2^1024`).
pub const MAX_SCALE_LOG2: i32 = 1000;
/// Absolute units by which two scales may differ and still be one scale.
pub const SAME_SCALE_UNITS: f64 = 2.0;
/// Relative difference two scales may have and still be one scale.
pub const SAME_SCALE_RELATIVE: f64 = 1.0 / (1u64 << 44) as f64;

/// A checked CKKS scale.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub struct Scale(f64);

impl Scale {
    /// `value` as a scale: finite, normal, in `[2^-64, 2^1000)`; anything else is
    /// `Error::InvalidInput` naming it.
    pub fn new(value: f64) -> Result<Scale> {
        let in_range = value.is_normal() && value >= pow2(MIN_SCALE_LOG2) && value < pow2(MAX_SCALE_LOG2);
        if !in_range {
            return Err(Error::InvalidInput(format!(
                "a CKKS scale must be finite, normal and in [2^{MIN_SCALE_LOG2}, 2^{MAX_SCALE_LOG2}), not {value:e}"
            )));
        }
        Ok(Scale(value))
    }

    /// `2^bits` (`0 <= bits < 1000`).
    pub fn pow2(bits: u32) -> Result<Scale> {
        if bits as i32 >= MAX_SCALE_LOG2 {
            return Err(Error::InvalidInput(format!("scale 2^{bits}: at most 2^{}", MAX_SCALE_LOG2 - 1)));
        }
        Ok(Scale(pow2(bits as i32)))
    }

    pub fn value(self) -> f64 {
        self.0
    }

    pub fn log2(self) -> f64 {
        self.0.log2()
    }

    /// Whether `self` and `other` are one scale (see the module docs).
    pub fn same_as(self, other: Scale) -> bool {
        let d = (self.0 - other.0).abs();
        d <= SAME_SCALE_UNITS || d <= self.0.max(other.0) * SAME_SCALE_RELATIVE
    }

    /// `self * other` (a product's scale), checked.
    pub fn times(self, other: Scale) -> Result<Scale> {
        Scale::new(self.0 * other.0)
    }

    /// `self * f` for a positive factor (a constant's encoding scale, a prime), checked.
    pub fn mul_f64(self, f: f64) -> Result<Scale> {
        Scale::new(self.0 * f)
    }

    /// `self / d` (a rescale by the prime `d`), checked.
    pub fn div_f64(self, d: f64) -> Result<Scale> {
        Scale::new(self.0 / d)
    }
}

impl fmt::Debug for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scale(2^{:.4})", self.log2())
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "2^{:.4}", self.log2())
    }
}

impl TryFrom<f64> for Scale {
    type Error = Error;
    fn try_from(value: f64) -> Result<Scale> {
        Scale::new(value)
    }
}

/// `2^e` for `|e| <= 1022`, built from its bit pattern (no `powi`/`exp2` call).
pub fn pow2(e: i32) -> f64 {
    assert!((-1022..=1023).contains(&e), "2^{e} is not a normal f64");
    f64::from_bits(((e + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_scales_are_refused() {
        for v in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::MIN_POSITIVE / 2.0, pow2(-65), pow2(1000), f64::MAX] {
            assert!(Scale::new(v).is_err(), "{v:e}");
        }
        for v in [pow2(-64), 0.5, 1.0, pow2(40), pow2(999) * 1.5] {
            assert_eq!(Scale::new(v).unwrap().value(), v);
        }
    }

    #[test]
    fn same_as_allows_two_units_or_a_relative_2_to_the_minus_44() {
        let s = |v: f64| Scale::new(v).unwrap();
        assert!(s(1e12).same_as(s(1e12 + 2.0)));
        assert!(!s(1e12).same_as(s(1e12 + 3.0)));
        let big = pow2(59);
        assert!(s(big).same_as(s(big * (1.0 + SAME_SCALE_RELATIVE))));
        assert!(!s(big).same_as(s(big * (1.0 + 4.0 * SAME_SCALE_RELATIVE))));
    }
}
