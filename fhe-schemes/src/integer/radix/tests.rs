//! Shared pieces of the radix tests: the `M2C2` key set of the PBS tests, seeded
//! encryption and reproducible operands with the corner cases.

use fhe_api::rng::{Seed, SplitMix64};
use fhe_api::KeySet;

use super::RadixUint;
use crate::tfhe::pbs::PbsKey;

pub(crate) fn fixture() -> &'static (KeySet, PbsKey) {
    crate::tfhe::pbs::tests::fixture()
}

pub(crate) fn pbs_key() -> &'static PbsKey {
    &fixture().1
}

/// `value` at `width` bits, randomness from stream `index` of one test seed.
pub(crate) fn encrypt(width: usize, value: u128, index: u64) -> RadixUint {
    let seed = Seed::derive("lux-fhe-radix-tests", index);
    RadixUint::encrypt_limbs_seeded(&fixture().0.sk, width, &crate::integer::u128_limbs(value), &seed).unwrap()
}

/// Corner cases (0 and the largest value, equal operands), then `random` random pairs.
pub(crate) fn operands(width: usize, random: usize, seed: u64) -> Vec<(u128, u128)> {
    let max = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
    let mut rng = SplitMix64::new(seed);
    let mut next = || ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & max;
    let mut cases = vec![(0, max), (max, max), (max, 1)];
    for _ in 0..random {
        let a = next();
        cases.push((a, next()));
    }
    let a = next();
    cases.push((a, a));
    cases
}

#[test]
fn encrypt_decrypt_and_widths() {
    let sk = &fixture().0.sk;
    for (width, v) in [(2usize, 3u128), (8, 0xa5), (64, 0x0123_4567_89ab_cdef), (128, u128::MAX - 5)] {
        assert_eq!(encrypt(width, v, width as u64).decrypt_u128(sk).unwrap(), v, "{width}");
    }
    let e = RadixUint::encrypt_limbs_seeded(sk, 7, &[1], &Seed::derive("w", 0)).unwrap_err().to_string();
    assert!(e.contains("multiples of 2"), "{e}");
    let e = RadixUint::encrypt_limbs_seeded(sk, 8, &[256], &Seed::derive("w", 0)).unwrap_err().to_string();
    assert!(e.contains("does not fit in 8 bits"), "{e}");
    let limbs = [u64::MAX, 3, 0, 1 << 63];
    let x = RadixUint::encrypt_limbs_seeded(sk, 256, &limbs, &Seed::derive("w", 1)).unwrap();
    assert_eq!((x.width(), x.blocks().len()), (256, 128));
    assert_eq!(x.decrypt_limbs(sk).unwrap(), limbs);
}
