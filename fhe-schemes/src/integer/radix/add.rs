//! Addition and subtraction modulo `2^width`: block sums on the host (each below
//! `2M`, `M` the message modulus), then one carry propagation ([`super::carry`]).
//! `a - b` is `a + (M - 1 - b_i per block) + 1`, the complement's blocks summed with
//! `a`'s and the `+1` folded into block 0 (still below `2M`). Every block above 0 is at
//! most `2M - 2`, so a sequential carry reads message and carry from one rotation.

use fhe_api::{ExtractedLwe, Result};

use super::carry::{propagate, Propagation};
use super::{check_pair, digits, RadixUint};
use crate::tfhe::pbs::PbsKey;

/// `a + b mod 2^width`.
pub fn add(key: &PbsKey, a: &RadixUint, b: &RadixUint, how: Propagation) -> Result<RadixUint> {
    check_pair(a, b)?;
    let sums = a
        .blocks()
        .iter()
        .zip(b.blocks())
        .map(|(x, y)| ExtractedLwe::linear_combination(&[(1, x), (1, y)], 0))
        .collect::<Result<_>>()?;
    propagate(key, sums, 2 * (key.encoding().message_modulus() - 1), how)
}

/// `a - b mod 2^width`.
pub fn sub(key: &PbsKey, a: &RadixUint, b: &RadixUint, how: Propagation) -> Result<RadixUint> {
    check_pair(a, b)?;
    propagate(key, sub_sums(key, a, b)?, 2 * (key.encoding().message_modulus() - 1), how)
}

/// The block sums of `a + !b + 1` before carries: `a_i + (M - 1 - b_i)`, plus 1 in block
/// 0 (the borrow chain of the comparisons reads their carries too).
pub(super) fn sub_sums(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<Vec<ExtractedLwe>> {
    let m = key.encoding().message_modulus();
    let q = key.params().params().q_ring();
    a.blocks()
        .iter()
        .zip(b.blocks())
        .enumerate()
        .map(|(i, (x, y))| {
            let constant = key.encoding().encode(q, m - 1 + (i == 0) as u64);
            ExtractedLwe::linear_combination(&[(1, x), (-1, y)], constant)
        })
        .collect()
}

/// `a + k mod 2^width` for a known `k` (little-endian limbs; it must fit the width).
pub fn scalar_add(key: &PbsKey, a: &RadixUint, k: &[u64], how: Propagation) -> Result<RadixUint> {
    let q = key.params().params().q_ring();
    let ds = digits(k, key.encoding().message_bits, a.blocks().len())?;
    let sums = a
        .blocks()
        .iter()
        .zip(ds)
        .map(|(x, d)| ExtractedLwe::linear_combination(&[(1, x)], key.encoding().encode(q, d)))
        .collect::<Result<_>>()?;
    propagate(key, sums, 2 * (key.encoding().message_modulus() - 1), how)
}

/// `a - k mod 2^width` for a known `k`: `a + (2^width - k)`.
pub fn scalar_sub(key: &PbsKey, a: &RadixUint, k: &[u64], how: Propagation) -> Result<RadixUint> {
    let width = a.width();
    let ds = digits(k, key.encoding().message_bits, a.blocks().len())?;
    if ds.iter().all(|&d| d == 0) {
        return Ok(a.clone());
    }
    // Two's complement of k at `width` bits, limb by limb.
    let limbs = width.div_ceil(64);
    let mut neg: Vec<u64> = (0..limbs).map(|i| !k.get(i).copied().unwrap_or(0)).collect();
    for l in neg.iter_mut() {
        let (s, c) = l.overflowing_add(1);
        *l = s;
        if !c {
            break;
        }
    }
    if !width.is_multiple_of(64) {
        neg[limbs - 1] &= (1u64 << (width % 64)) - 1;
    }
    scalar_add(key, a, &neg, how)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{encrypt, fixture, operands, pbs_key};

    fn check(width: usize, cases: usize, how: Propagation) {
        let sk = &fixture().0.sk;
        let key = pbs_key();
        let mask = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
        for (t, (x, y)) in operands(width, cases, 0xadd).into_iter().enumerate() {
            let (a, b) = (encrypt(width, x, 2 * t as u64), encrypt(width, y, 2 * t as u64 + 1));
            let s = add(key, &a, &b, how).unwrap().decrypt_u128(sk).unwrap();
            assert_eq!(s, x.wrapping_add(y) & mask, "{x} + {y} at {width} bits, {how:?}");
            let d = sub(key, &a, &b, how).unwrap().decrypt_u128(sk).unwrap();
            assert_eq!(d, x.wrapping_sub(y) & mask, "{x} - {y} at {width} bits, {how:?}");
            let k = crate::integer::u128_limbs(y);
            let sa = scalar_add(key, &a, &k, how).unwrap().decrypt_u128(sk).unwrap();
            assert_eq!(sa, x.wrapping_add(y) & mask, "{x} + scalar {y}");
            let ss = scalar_sub(key, &a, &k, how).unwrap().decrypt_u128(sk).unwrap();
            assert_eq!(ss, x.wrapping_sub(y) & mask, "{x} - scalar {y}");
        }
    }

    #[test]
    fn add_sub_8_bits_both_propagations() {
        check(8, 1, Propagation::Sequential);
        check(8, 1, Propagation::Prefix);
    }

    #[test]
    fn add_sub_16_bits() {
        check(16, 1, Propagation::Auto);
    }

    #[test]
    #[ignore = "about a minute on two cores: cargo test --release -- --ignored"]
    fn add_sub_32_and_64_bits() {
        for width in [32, 64] {
            check(width, 2, Propagation::Sequential);
            check(width, 2, Propagation::Prefix);
        }
    }

    #[test]
    fn operands_must_match_and_scalars_fit() {
        let key = pbs_key();
        let (a, b) = (encrypt(8, 1, 90), encrypt(16, 1, 91));
        assert!(add(key, &a, &b, Propagation::Auto).unwrap_err().to_string().contains("widths differ"));
        let e = scalar_add(key, &a, &[256], Propagation::Auto).unwrap_err().to_string();
        assert!(e.contains("does not fit in 8 bits"), "{e}");
    }
}
