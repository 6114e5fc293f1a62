//! Comparisons. Each is one level of bivariate tables over the packed block pairs
//! `a_i M + b_i`, then a reduction:
//!
//! - **equality**: per-block `a_i == b_i` bits, summed in groups of up to `p - 1`
//!   (`p` the block modulus, 15 for `M2C2`) and each group's sum compared with its size,
//!   until one bit is left: `1 + ceil(log_(p-1) B)` levels;
//! - **order**: per-block signs (less, equal, greater), combined pairwise from the most
//!   significant (`hi` equal: take `lo`, else `hi`) in a tree, the last level mapping the
//!   sign to the answer: `1 + ceil(log2 B)` levels.

use fhe_api::{ExtractedLwe, Lut, Result};

use super::{check_pair, RadixBool, RadixUint};
use crate::tfhe::pbs::PbsKey;

const LESS: u64 = 0;
const EQUAL: u64 = 1;
const GREATER: u64 = 2;

/// `a == b`.
pub fn eq(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    equality(key, a, b, true)
}

/// `a != b`.
pub fn ne(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    equality(key, a, b, false)
}

fn equality(key: &PbsKey, a: &RadixUint, b: &RadixUint, want_equal: bool) -> Result<RadixBool> {
    check_pair(a, b)?;
    // A group's sum must stay below the block modulus (and its 2-norm^2, its size,
    // within the noise model's 25).
    let group = (key.encoding().modulus() - 1) as usize;
    let packed = packed_pairs(key, a, b)?;
    let mut bits = key.apply_batch(&packed, &key.bivariate_lut(|x, y| (x == y) as u64)?)?;
    loop {
        let last = bits.len() <= group;
        let sums: Vec<(ExtractedLwe, usize)> = bits
            .chunks(group)
            .map(|c| {
                let terms: Vec<(i64, &ExtractedLwe)> = c.iter().map(|b| (1, b)).collect();
                Ok((ExtractedLwe::linear_combination(&terms, 0)?, c.len()))
            })
            .collect::<Result<_>>()?;
        // One table per group size: at most two distinct sizes per level.
        let luts: Vec<(usize, Lut)> = {
            let mut sizes: Vec<usize> = sums.iter().map(|(_, n)| *n).collect();
            sizes.dedup();
            sizes
                .into_iter()
                .map(|n| {
                    let flip = last && !want_equal;
                    Ok((n, key.lut(move |s| ((s == n as u64) != flip) as u64)?))
                })
                .collect::<Result<_>>()?
        };
        let lut_of = |n: usize| &luts.iter().find(|(m, _)| *m == n).expect("a table per size").1;
        let jobs: Vec<(&ExtractedLwe, &Lut)> = sums.iter().map(|(s, n)| (s, lut_of(*n))).collect();
        bits = key.apply_mixed(&jobs)?;
        if last {
            return Ok(RadixBool(bits.pop().expect("one bit")));
        }
    }
}

/// `a < b`.
pub fn lt(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, |s| s == LESS)
}

/// `a <= b`.
pub fn le(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, |s| s != GREATER)
}

/// `a > b`.
pub fn gt(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, |s| s == GREATER)
}

/// `a >= b`.
pub fn ge(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, |s| s != LESS)
}

fn packed_pairs(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<Vec<ExtractedLwe>> {
    a.blocks().iter().zip(b.blocks()).map(|(x, y)| key.pack(x, y)).collect()
}

fn order(key: &PbsKey, a: &RadixUint, b: &RadixUint, answer: impl Fn(u64) -> bool + Copy) -> Result<RadixBool> {
    check_pair(a, b)?;
    let sign = |x: u64, y: u64| match x.cmp(&y) {
        std::cmp::Ordering::Less => LESS,
        std::cmp::Ordering::Equal => EQUAL,
        std::cmp::Ordering::Greater => GREATER,
    };
    let combine = |hi: u64, lo: u64| if hi == EQUAL { lo } else { hi };
    let packed = packed_pairs(key, a, b)?;
    if packed.len() == 1 {
        let lut = key.bivariate_lut(|x, y| answer(sign(x, y)) as u64)?;
        return Ok(RadixBool(key.apply_batch(&packed, &lut)?.remove(0)));
    }
    let mut signs = key.apply_batch(&packed, &key.bivariate_lut(sign)?)?;
    let step = key.bivariate_lut(combine)?;
    let step_last = key.bivariate_lut(|hi, lo| answer(combine(hi, lo)) as u64)?;
    while signs.len() > 1 {
        let last = signs.len() <= 2;
        // Pairs (2j + 1, 2j): the higher block is `hi`; an odd one out passes through.
        let pairs: Vec<ExtractedLwe> = signs.chunks_exact(2).map(|c| key.pack(&c[1], &c[0])).collect::<Result<_>>()?;
        let lut = if last { &step_last } else { &step };
        let mut next = key.apply_batch(&pairs, lut)?;
        if signs.len() % 2 == 1 {
            next.push(signs.pop().expect("the odd one out"));
        }
        signs = next;
    }
    Ok(RadixBool(signs.remove(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{encrypt, fixture, operands, pbs_key};

    fn check(width: usize, cases: usize) {
        let sk = &fixture().0.sk;
        let key = pbs_key();
        for (t, (x, y)) in operands(width, cases, 0xc0de).into_iter().enumerate() {
            let (a, b) = (encrypt(width, x, 2 * t as u64 + 100), encrypt(width, y, 2 * t as u64 + 101));
            let got = |r: Result<RadixBool>| r.unwrap().decrypt(sk).unwrap();
            assert_eq!(got(eq(key, &a, &b)), x == y, "{x} == {y}");
            assert_eq!(got(ne(key, &a, &b)), x != y, "{x} != {y}");
            assert_eq!(got(lt(key, &a, &b)), x < y, "{x} < {y}");
            assert_eq!(got(le(key, &a, &b)), x <= y, "{x} <= {y}");
            assert_eq!(got(gt(key, &a, &b)), x > y, "{x} > {y}");
            assert_eq!(got(ge(key, &a, &b)), x >= y, "{x} >= {y}");
        }
    }

    #[test]
    fn comparisons_8_bits() {
        check(8, 1);
    }

    #[test]
    fn comparisons_2_bits_one_block() {
        check(2, 2);
    }

    #[test]
    #[ignore = "about a minute on two cores: cargo test --release -- --ignored"]
    fn comparisons_32_and_64_bits() {
        check(32, 2);
        check(64, 2);
    }
}
