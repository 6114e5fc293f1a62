//! Multiplication against plain wrapping arithmetic, and the reduction's plan against
//! its invariants at every width.

use super::*;
use crate::integer::radix::tests::{encrypt, fixture, operands, pbs_key};
use fhe_api::ParamSet;

fn mask(width: usize) -> u128 {
    if width == 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

fn check_mul(width: usize, cases: &[(u128, u128)], how: Propagation, salt: u64) {
    let sk = &fixture().0.sk;
    let key = pbs_key();
    for (t, &(x, y)) in cases.iter().enumerate() {
        let (a, b) = (encrypt(width, x, salt + 2 * t as u64), encrypt(width, y, salt + 2 * t as u64 + 1));
        let p = mul(key, &a, &b, how).unwrap().decrypt_u128(sk).unwrap();
        assert_eq!(p, x.wrapping_mul(y) & mask(width), "{x} * {y} at {width} bits, {how:?}");
    }
}

#[test]
fn mul_8_bits_both_propagations() {
    let cases = operands(8, 2, 0x3a1);
    check_mul(8, &cases, Propagation::Sequential, 300);
    check_mul(8, &cases[..2], Propagation::Prefix, 340);
}

#[test]
fn mul_64_bits_random_operands() {
    // One random pair: about 1,700 bootstraps (a minute on two cores), against plain
    // u64 arithmetic, the type TFHE-rs's FheUint64 mirrors.
    let mut rng = fhe_api::rng::SplitMix64::new(0x64_3a1);
    let (x, y) = (rng.next_u64(), rng.next_u64());
    let (a, b) = (encrypt(64, x as u128, 400), encrypt(64, y as u128, 401));
    let got = mul(pbs_key(), &a, &b, Propagation::Auto).unwrap().decrypt_u128(&fixture().0.sk).unwrap();
    assert_eq!(got, x.wrapping_mul(y) as u128, "{x} * {y}");
}

#[test]
#[ignore = "about 25,000 bootstraps: minutes on two cores; cargo test --release -- --ignored"]
fn mul_256_bits() {
    let sk = &fixture().0.sk;
    let key = pbs_key();
    let mut rng = fhe_api::rng::SplitMix64::new(0x256_3a1);
    let x: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
    let y: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
    let seed = |i| fhe_api::Seed::derive("lux-fhe-radix-mul-256", i);
    let a = RadixUint::encrypt_limbs_seeded(sk, 256, &x, &seed(0)).unwrap();
    let b = RadixUint::encrypt_limbs_seeded(sk, 256, &y, &seed(1)).unwrap();
    let got = mul(key, &a, &b, Propagation::Auto).unwrap().decrypt_limbs(sk).unwrap();
    // Schoolbook product of the limbs, kept modulo 2^256.
    let mut want = [0u64; 4];
    for i in 0..4 {
        let mut carry = 0u128;
        for j in 0..4 - i {
            let t = want[i + j] as u128 + x[i] as u128 * y[j] as u128 + carry;
            want[i + j] = t as u64;
            carry = t >> 64;
        }
    }
    assert_eq!(got, want);
}

#[test]
fn scalar_mul_8_and_16_bits() {
    let sk = &fixture().0.sk;
    let key = pbs_key();
    for (width, cases) in [(8usize, operands(8, 2, 0x5ca1)), (16, operands(16, 1, 0x5ca2))] {
        let mut cases = cases;
        cases.extend([(0x5b, 0), (0x5b, 1), (0x5b, 4)]);
        for (t, (x, k)) in cases.into_iter().enumerate() {
            let a = encrypt(width, x, 500 + t as u64);
            let got = scalar_mul(key, &a, &crate::integer::u128_limbs(k), Propagation::Auto).unwrap();
            assert_eq!(got.decrypt_u128(sk).unwrap(), x.wrapping_mul(k) & mask(width), "{x} * {k} at {width} bits");
        }
    }
    let e = scalar_mul(key, &encrypt(8, 1, 520), &[256], Propagation::Auto).unwrap_err().to_string();
    assert!(e.contains("does not fit in 8 bits"), "{e}");
}

#[test]
fn operands_must_match() {
    let key = pbs_key();
    let e = mul(key, &encrypt(8, 1, 530), &encrypt(16, 1, 531), Propagation::Auto).unwrap_err().to_string();
    assert!(e.contains("widths differ"), "{e}");
}

#[test]
fn the_reduction_plan_keeps_every_group_in_bounds_and_ends_ready_for_the_add() {
    // Replays the planner on bounds alone at every width up to 256 bits, for products and
    // for scalar multiples of every digit: each group's sum stays below p with squared
    // 2-norm at most 25, and the final columns sum below 2M.
    let enc = Encoding::for_set(ParamSet::M2C2).unwrap();
    let m = enc.message_modulus();
    let scalar = |blocks: usize, d: u64| {
        let mut cols = vec![Vec::new(); blocks];
        for (j, col) in cols.iter_mut().enumerate() {
            col.extend((0..=j).map(|_| Bound { max: d * (m - 1), norm2: d * d }));
        }
        cols
    };
    for blocks in 1..=128 {
        let mut starts = vec![product_bounds(blocks, enc)];
        starts.extend((1..m).map(|d| scalar(blocks, d)));
        for mut columns in starts {
            let mut levels = 0;
            while let Some(plans) = plan_level(&columns, enc) {
                levels += 1;
                assert!(levels <= 16, "{blocks} blocks: no end after 16 levels");
                let mut next = vec![Vec::new(); blocks];
                for (c, (col, plan)) in columns.iter().zip(plans).enumerate() {
                    let mut seen: Vec<usize> = plan.keep.clone();
                    next[c].extend(plan.keep.iter().map(|&i| col[i]));
                    for g in &plan.groups {
                        let sum: u64 = g.iter().map(|&i| col[i].max).sum();
                        let norm2: u64 = g.iter().map(|&i| col[i].norm2).sum();
                        assert!(sum < enc.modulus() && norm2 <= MAX_NORM2, "{blocks} blocks: group {sum}, {norm2}");
                        let (msg, carry) = group_outputs(sum, enc);
                        next[c].push(msg);
                        if let (Some(b), true) = (carry, c + 1 < blocks) {
                            next[c + 1].push(b);
                        }
                        seen.extend(g);
                    }
                    seen.sort();
                    assert_eq!(seen, (0..col.len()).collect::<Vec<_>>(), "every term placed once");
                }
                columns = next;
            }
            for col in &columns {
                assert!(col.iter().map(|b| b.max).sum::<u64>() < 2 * m, "{blocks} blocks: final column {col:?}");
            }
        }
    }
}

#[test]
fn documented_costs_match_the_plan() {
    // docs/INTEGERS.md, "Bootstraps and levels": products, then the reduction.
    for (bits, want) in DOCUMENTED {
        assert_eq!(mul_cost(ParamSet::M2C2, bits).unwrap(), want, "{bits} bits");
    }
    assert!(mul_cost(ParamSet::PN10QP27, 8).is_err());
}

/// `(width, (bootstraps, levels))` of `mul` before its final carry propagation, as
/// `docs/INTEGERS.md` lists them.
const DOCUMENTED: [(usize, (usize, usize)); 6] =
    [(8, (23, 3)), (16, (98, 3)), (32, (403, 4)), (64, (1627, 5)), (128, (6506, 6)), (256, (25932, 7))];

#[test]
#[ignore = "prints the table of docs/INTEGERS.md: cargo test --release -p fhe-schemes print_mul_costs -- --ignored --nocapture"]
fn print_mul_costs() {
    for bits in [8usize, 16, 32, 64, 128, 256] {
        println!("({bits}, {:?}),", mul_cost(ParamSet::M2C2, bits).unwrap());
    }
}
