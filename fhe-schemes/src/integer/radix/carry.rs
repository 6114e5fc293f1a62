//! Carry propagation: blocks holding `s_i < 2 * message_modulus` (a block sum, at most
//! one carry out each) become clean blocks of `sum_i s_i M^i mod M^B`, `M` the message
//! modulus.
//!
//! - **Sequential**: block `i` adds the carry of block `i - 1`, then one level
//!   bootstraps it to its message and its carry: `B` levels of one blind rotation read
//!   twice (a many-LUT, `tfhe::pbs::ManyLut`) where every block above 0 is at most
//!   `2M - 2` (additions), else of 2 bootstraps. A lone rotation takes two threads on
//!   the CPU backend, so the chain's latency is about half a bootstrap a block.
//! - **Parallel prefix** (Hillis-Steele): one level maps each block to its state,
//!   generate (`s_i >= M`), propagate (`s_i = M - 1`) or none; `ceil(log2(B - 1))`
//!   levels combine states at distance 1, 2, 4, ... with a bivariate table
//!   (`hi` propagates: take `lo`, else `hi`), the last one giving carry bits; one level
//!   adds each carry and cleans: `2 + ceil(log2(B - 1))` levels, about `B log2 B`
//!   bootstraps.
//!
//! With few threads the sequential form does less work in about the same time; with
//! many the prefix form is shallower. [`Propagation::Auto`] counts rounds of
//! `threads` bootstraps for both and takes the fewer.

use fhe_api::{Error, ExtractedLwe, Lut, Result};

use crate::integer::radix::RadixUint;
use crate::tfhe::pbs::PbsKey;

/// How carries travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Propagation {
    Sequential,
    Prefix,
    /// The one with fewer rounds of `rayon::current_num_threads()` bootstraps.
    #[default]
    Auto,
}

/// Block states of the prefix: the encoding is the table's output.
const NONE: u64 = 0;
const PROPAGATE: u64 = 1;
const GENERATE: u64 = 2;

/// Rounds of `threads` parallel bootstraps for each form, at `blocks` blocks.
pub fn rounds(blocks: usize, threads: usize) -> (usize, usize) {
    let t = threads.max(1);
    let sequential = blocks * 2usize.div_ceil(t);
    let mut prefix = 2 * blocks.div_ceil(t);
    let m = blocks.saturating_sub(1);
    let mut d = 1;
    while d < m {
        prefix += (m - d).div_ceil(t);
        d *= 2;
    }
    (sequential, prefix)
}

/// Cleans `sums` into a radix integer, dropping the top carry: block 0 below `2 M`,
/// every other at most `max_sum` (below `2 M`; `2 M - 2` lets the sequential form read
/// a block's message and carry from one rotation). A larger `max_sum` is
/// `Error::InvalidInput`.
pub fn propagate(key: &PbsKey, sums: Vec<ExtractedLwe>, max_sum: u64, how: Propagation) -> Result<RadixUint> {
    let m = key.encoding().message_modulus();
    if max_sum >= 2 * m {
        return Err(Error::InvalidInput(format!(
            "carry propagation takes block sums below {}, not up to {max_sum}",
            2 * m
        )));
    }
    let how = match how {
        Propagation::Auto => {
            let (s, p) = rounds(sums.len(), rayon::current_num_threads());
            if p < s {
                Propagation::Prefix
            } else {
                Propagation::Sequential
            }
        }
        h => h,
    };
    let blocks = match how {
        Propagation::Prefix => prefix(key, sums)?,
        _ => sequential(key, sums, max_sum)?,
    };
    RadixUint::from_blocks(blocks)
}

fn sequential(key: &PbsKey, sums: Vec<ExtractedLwe>, max_sum: u64) -> Result<Vec<ExtractedLwe>> {
    let m = key.encoding().message_modulus();
    let (msg, carry) = (key.lut(|x| x % m)?, key.lut(|x| x / m)?);
    // A block with its carry in holds at most `max_sum + 1` (block 0 below `2 M`): where
    // that stays below the many-LUT's bound, one rotation gives message and carry.
    let many = key.many_lut(&[&|x| x % m, &|x| x / m])?;
    let one_rotation = max_sum < many.bound() - 1 && 2 * m <= many.bound();
    let last = sums.len() - 1;
    let mut out = Vec::with_capacity(sums.len());
    let mut carry_in: Option<ExtractedLwe> = None;
    for (i, s) in sums.into_iter().enumerate() {
        let t = match &carry_in {
            Some(c) => ExtractedLwe::linear_combination(&[(1, &s), (1, c)], 0)?,
            None => s,
        };
        // The top block's carry leaves the integer: only its message is needed.
        let mut r = if i == last {
            key.apply_batch(std::slice::from_ref(&t), &msg)?
        } else if one_rotation {
            key.apply_many(std::slice::from_ref(&t), &many)?.pop().expect("one input")
        } else {
            key.apply_mixed(&[(&t, &msg), (&t, &carry)])?
        };
        carry_in = (r.len() == 2).then(|| r.pop().expect("two outputs"));
        out.push(r.pop().expect("one output"));
    }
    Ok(out)
}

fn prefix(key: &PbsKey, sums: Vec<ExtractedLwe>) -> Result<Vec<ExtractedLwe>> {
    let m = key.encoding().message_modulus();
    let count = sums.len();
    // Carries into blocks 1..B come from the states of blocks 0..B-1.
    let chain = count - 1;
    let mut carries: Vec<ExtractedLwe> = Vec::new();
    if chain > 0 {
        let state = |x: u64| {
            if x >= m {
                GENERATE
            } else if x == m - 1 {
                PROPAGATE
            } else {
                NONE
            }
        };
        let combine = |hi: u64, lo: u64| if hi == PROPAGATE { lo } else { hi };
        let is_carry = |s: u64| (s == GENERATE) as u64;
        // Without a combining level, the first one gives the carry bits directly.
        let first = if chain == 1 { key.lut(|x| is_carry(state(x)))? } else { key.lut(state)? };
        let mut states = key.apply_batch(&sums[..chain], &first)?;
        let (step, step_last) = (key.bivariate_lut(combine)?, key.bivariate_lut(|hi, lo| is_carry(combine(hi, lo)))?);
        let done = key.lut(is_carry)?;
        let mut d = 1;
        while d < chain {
            let last = 2 * d >= chain;
            let packed: Vec<ExtractedLwe> =
                (d..chain).map(|i| key.pack(&states[i], &states[i - d])).collect::<Result<_>>()?;
            let mut jobs: Vec<(&ExtractedLwe, &Lut)> = Vec::with_capacity(chain);
            if last {
                // Blocks below d are final already: their states become carry bits here.
                jobs.extend(states[..d].iter().map(|s| (s, &done)));
            }
            jobs.extend(packed.iter().map(|p| (p, if last { &step_last } else { &step })));
            let updated = key.apply_mixed(&jobs)?;
            if last {
                states = updated;
            } else {
                states.splice(d.., updated);
            }
            d *= 2;
        }
        carries = states;
    }
    let inputs: Vec<ExtractedLwe> = sums
        .iter()
        .enumerate()
        .map(|(i, s)| match i {
            0 => Ok(s.clone()),
            _ => ExtractedLwe::linear_combination(&[(1, s), (1, &carries[i - 1])], 0),
        })
        .collect::<Result<_>>()?;
    key.apply_batch(&inputs, &key.lut(|x| x % m)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{fixture, pbs_key};
    use fhe_api::rng::{Seed, SplitMix64};

    #[test]
    fn round_counts() {
        // One thread: the sequential form's 2B against the prefix's 2B + B log B.
        assert_eq!(rounds(32, 1), (64, 64 + 124));
        // Two threads: B rounds against about (2B + B log B) / 2.
        assert_eq!(rounds(32, 2), (32, 32 + 64));
        // Many threads: the prefix is shallower.
        let (s, p) = rounds(32, 64);
        assert!(p < s, "{p} {s}");
        assert_eq!(rounds(1, 2), (1, 2));
    }

    #[test]
    fn both_forms_propagate_every_carry_pattern() {
        // Sums that generate, propagate and kill carries, including a chain of
        // propagates across every block and the top carry, which is dropped.
        let (keys, key) = (&fixture().0, pbs_key());
        let seed = Seed::derive("lux-fhe-radix-carry", 0);
        let mut rng = SplitMix64::new(38);
        let patterns: [Vec<u64>; 3] =
            [vec![4, 3, 3, 3, 3], vec![7, 3, 0, 6, 3], (0..5).map(|_| rng.below(8)).collect::<Vec<u64>>()];
        for (t, sums) in patterns.iter().enumerate() {
            let want = sums.iter().rev().fold(0u64, |acc, &s| acc * 4 + s) % (1 << 10);
            let cts: Vec<_> = sums
                .iter()
                .enumerate()
                .map(|(i, &s)| crate::tfhe::pbs::encrypt_block_seeded(&keys.sk, s, &seed, (t * 8 + i) as u64).unwrap())
                .collect();
            // Block sums up to 6 above block 0 take the many-LUT, a 7 two tables.
            let max_sum = sums[1..].iter().copied().max().unwrap_or(0);
            for how in [Propagation::Sequential, Propagation::Prefix] {
                let r = propagate(key, cts.clone(), max_sum, how).unwrap();
                assert_eq!(r.decrypt_u128(&keys.sk).unwrap(), want as u128, "{sums:?} {how:?}");
            }
        }
    }
}
