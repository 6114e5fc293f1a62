//! NTT-prime generation: primes `q = 1 mod 2N`, so `Z_q[X]/(X^N + 1)` has a negacyclic
//! NTT. A CKKS chain takes its scale primes close to `2^scale_bits`, alternating above
//! and below it so that the scale after each rescale stays near `2^scale_bits` (the
//! product of deviations does not drift one way), and its first and special primes as
//! the largest of their size. The search is deterministic: the same arguments give the
//! same primes on every platform.

use crate::error::{Error, Result};
use crate::ring::math::is_prime;
use crate::ring::ntt::MAX_MODULUS_BITS;
use crate::ring::PolynomialSize;

/// Whether `q` is a prime `= 1 mod 2N` below `2^62`.
pub fn is_ntt_prime(q: u64, n: PolynomialSize) -> bool {
    let two_n = 2 * n.0 as u64;
    q < 1 << MAX_MODULUS_BITS && q % two_n == 1 && is_prime(q)
}

fn check_bits(bits: u32, n: PolynomialSize) -> Result<u64> {
    let two_n = 2 * n.0 as u64;
    if !n.0.is_power_of_two() || bits > MAX_MODULUS_BITS || (1u64 << bits) <= 2 * two_n {
        return Err(Error::InvalidRing(format!(
            "no NTT primes of {bits} bits for N = {}: need 2^bits > 4N and bits <= {MAX_MODULUS_BITS}",
            n.0
        )));
    }
    Ok(two_n)
}

/// The `count` largest primes `q < 2^bits` with `q = 1 mod 2N`, in decreasing order,
/// skipping those in `used`. All have exactly `bits` bits, else `Error::InvalidRing`.
pub fn primes_below(bits: u32, n: PolynomialSize, count: usize, used: &[u64]) -> Result<Vec<u64>> {
    let two_n = check_bits(bits, n)?;
    let mut out = Vec::with_capacity(count);
    let mut q = (1u64 << bits) + 1 - two_n;
    while out.len() < count {
        if q < 1 << (bits - 1) {
            return Err(Error::InvalidRing(format!("fewer than {count} NTT primes of {bits} bits for N = {}", n.0)));
        }
        if !used.contains(&q) && is_prime(q) {
            out.push(q);
        }
        q -= two_n;
    }
    Ok(out)
}

/// `count` primes `q = 1 mod 2N` nearest `2^bits`, taken alternately from above and below
/// (the first from below), skipping those in `used`; each within a factor `1 +- 2^-8` of
/// `2^bits` (else `Error::InvalidRing`: [`primes_tracking`] is the fallback).
pub fn primes_near(bits: u32, n: PolynomialSize, count: usize, used: &[u64]) -> Result<Vec<u64>> {
    let two_n = check_bits(bits + 1, n)?;
    let centre = 1u64 << bits;
    let window = centre >> 8;
    let (mut below, mut above) = (centre + 1 - two_n, centre + 1 + two_n);
    let mut out = Vec::with_capacity(count);
    let mut from_below = true;
    while out.len() < count {
        let q = loop {
            let cand = if from_below { below } else { above };
            if cand.abs_diff(centre) > window {
                return Err(Error::InvalidRing(format!("fewer than {count} NTT primes near 2^{bits} for N = {}", n.0)));
            }
            if from_below {
                below -= two_n;
            } else {
                above += two_n;
            }
            if !used.contains(&cand) && !out.contains(&cand) && is_prime(cand) {
                break cand;
            }
        };
        out.push(q);
        from_below = !from_below;
    }
    Ok(out)
}

/// `count` scale primes for a chain whose scale primes [`primes_near`] cannot find (small
/// scales at large `N`: 29 bits at `N = 2^16` has one candidate in `2^17`), in chain
/// order (`q_1` first): chosen from the top down, each the unused NTT prime within `1 +-
/// 2^-3` of `2^bits` nearest `s_l^2 / 2^bits`, where `s_l` is the automatic mode's scale
/// at its level (`s_L = 2^bits`, `s_(l-1) = s_l^2 / q_l`). Far from `2^bits`, primes
/// taken without this would double the scale's deviation at every level; tracking it
/// keeps every level's scale within a few percent of `2^bits` (the nearest candidates
/// are spent first, so the lowest levels deviate most).
pub fn primes_tracking(bits: u32, n: PolynomialSize, count: usize, used: &[u64]) -> Result<Vec<u64>> {
    let two_n = check_bits(bits + 1, n)?;
    let centre = 1u64 << bits;
    let window = centre >> 3;
    // Candidates outward from 2^bits, alternating sides, until 4 per prime wanted (a
    // window of 2^-3 holds up to 2^(bits - 3) / 2N candidates: never walked whole).
    let want = 4 * count + 16;
    let mut cands = Vec::with_capacity(want);
    let (mut below, mut above) = (centre + 1 - two_n, centre + 1 + two_n);
    while cands.len() < want {
        let (b_ok, a_ok) = (centre - below <= window, above - centre <= window);
        if !b_ok && !a_ok {
            break;
        }
        for (ok, q) in [(b_ok, below), (a_ok, above)] {
            if ok && !used.contains(&q) && is_prime(q) {
                cands.push(q);
            }
        }
        below -= two_n;
        above += two_n;
    }
    if cands.len() < count {
        return Err(Error::InvalidRing(format!(
            "fewer than {count} NTT primes within 2^{bits} +- 2^{} for N = {}",
            bits - 3,
            n.0
        )));
    }
    let delta = centre as f64;
    let mut s = delta;
    let mut top_down = Vec::with_capacity(count);
    for _ in 0..count {
        let target = s * s / delta;
        let (i, _) = cands
            .iter()
            .enumerate()
            .map(|(i, &c)| (i, (c as f64 - target).abs()))
            .fold((0, f64::INFINITY), |best, x| if x.1 < best.1 { x } else { best });
        let q = cands.remove(i);
        s = s * s / q as f64;
        top_down.push(q);
    }
    top_down.reverse();
    Ok(top_down)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracking_primes_keep_every_level_scale_near_two_to_the_bits() {
        let n = PolynomialSize(1 << 16);
        assert!(primes_near(29, n, 29, &[]).is_err(), "the narrow window has too few");
        let q = primes_tracking(29, n, 29, &[]).unwrap();
        let delta = (1u64 << 29) as f64;
        let mut s = delta;
        for &p in q.iter().rev() {
            assert!(is_ntt_prime(p, n) && p.abs_diff(1 << 29) <= 1 << 26, "{p}");
            s = s * s / p as f64;
            assert!((s / delta - 1.0).abs() < 1.0 / 32.0, "scale {s} vs 2^29");
        }
        let mut sorted = q.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 29);
    }

    #[test]
    fn primes_are_ntt_primes_of_the_stated_size() {
        for log_n in [10u32, 13, 16, 17] {
            let n = PolynomialSize(1 << log_n);
            let big = primes_below(60, n, 6, &[]).unwrap();
            assert!(big.windows(2).all(|w| w[0] > w[1]));
            for &q in &big {
                assert!(is_ntt_prime(q, n) && q >> 59 == 1, "{q}");
            }
            let near = primes_near(40, n, 20, &big).unwrap();
            for &q in &near {
                assert!(is_ntt_prime(q, n));
                assert!(q.abs_diff(1 << 40) < (1 << 32));
            }
            // Alternating: the product stays within a few ulps of 2^(40 k).
            let drift: f64 = near.iter().map(|&q| (q as f64 / (1u64 << 40) as f64).ln()).sum();
            assert!(drift.abs() < 1e-4, "{drift}");
        }
    }

    #[test]
    fn impossible_requests_are_errors() {
        let n = PolynomialSize(1 << 16);
        assert!(primes_below(17, n, 1, &[]).is_err());
        assert!(primes_below(63, n, 1, &[]).is_err());
        assert!(primes_below(20, PolynomialSize(1 << 10), 10_000, &[]).is_err());
    }
}
