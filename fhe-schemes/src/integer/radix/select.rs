//! Selection: `c ? a : b` is, per block, `f(c, a_i) + g(c, b_i)` with bivariate tables
//! `f(c, x) = c x` and `g(c, x) = (1 - c) x` (one of the two is 0, so the sum is clean):
//! one level of `2B` bootstraps. `min` and `max` select on a comparison.

use fhe_api::{Error, ExtractedLwe, Lut, Result};

use super::compare::lt;
use super::{check_pair, RadixBool, RadixUint};
use crate::tfhe::pbs::PbsKey;

/// `c ? a : b`.
pub fn select(key: &PbsKey, c: &RadixBool, a: &RadixUint, b: &RadixUint) -> Result<RadixUint> {
    check_pair(a, b)?;
    if c.0.params() != a.params() {
        return Err(Error::ParamMismatch { expected: a.params().name().into(), found: c.0.params().name().into() });
    }
    let (take, drop) = (key.bivariate_lut(|c, x| c * x)?, key.bivariate_lut(|c, x| (1 - c.min(1)) * x)?);
    let packed: Vec<ExtractedLwe> =
        a.blocks().iter().chain(b.blocks()).map(|x| key.pack(&c.0, x)).collect::<Result<_>>()?;
    let n = a.blocks().len();
    let jobs: Vec<(&ExtractedLwe, &Lut)> =
        packed.iter().enumerate().map(|(i, p)| (p, if i < n { &take } else { &drop })).collect();
    let out = key.apply_mixed(&jobs)?;
    let blocks = out[..n]
        .iter()
        .zip(&out[n..])
        .map(|(x, y)| ExtractedLwe::linear_combination(&[(1, x), (1, y)], 0))
        .collect::<Result<_>>()?;
    RadixUint::from_blocks(blocks)
}

/// `min(a, b)`.
pub fn min(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixUint> {
    select(key, &lt(key, a, b)?, a, b)
}

/// `max(a, b)`.
pub fn max(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixUint> {
    select(key, &lt(key, a, b)?, b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{encrypt, fixture, operands, pbs_key};

    #[test]
    fn select_min_max_8_bits() {
        let sk = &fixture().0.sk;
        let key = pbs_key();
        for (t, (x, y)) in operands(8, 1, 0x5e1).into_iter().enumerate() {
            let (a, b) = (encrypt(8, x, 2 * t as u64 + 200), encrypt(8, y, 2 * t as u64 + 201));
            assert_eq!(min(key, &a, &b).unwrap().decrypt_u128(sk).unwrap(), x.min(y), "min({x}, {y})");
            assert_eq!(max(key, &a, &b).unwrap().decrypt_u128(sk).unwrap(), x.max(y), "max({x}, {y})");
        }
        let (a, b) = (encrypt(8, 17, 250), encrypt(8, 200, 251));
        for c in [false, true] {
            let bit = RadixBool(
                crate::tfhe::pbs::encrypt_block_seeded(sk, c as u64, &fhe_api::Seed::derive("sel", 0), 0).unwrap(),
            );
            let got = select(key, &bit, &a, &b).unwrap().decrypt_u128(sk).unwrap();
            assert_eq!(got, if c { 17 } else { 200 });
        }
    }
}
