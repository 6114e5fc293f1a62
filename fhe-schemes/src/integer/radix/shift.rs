//! Shifts and rotations by an encrypted amount: a barrel shifter. The width must be a
//! power of two (2 to 256 bits); the amount is taken modulo the width (its low
//! `log2(width)` bits; a narrower amount has fewer), as TFHE-rs's shifts do.
//!
//! - One level extracts the amount's bits `c_k` (one univariate table each).
//! - Stage 0 (one bit, inside each block): `out_i = t(c_0, x_i) + u(c_0, x_j)` from two
//!   bivariate tables of the packed pairs `4 c_0 + x`, with `j` the neighbour block the
//!   bit comes from: for a left shift `t = c ? 2x mod 4 : x` and `u = c ? x_(i-1) >> 1 : 0`,
//!   for a right shift `t = c ? x >> 1 : x` and `u = c ? 2 (x_(i+1) mod 2) : 0`.
//! - Stage `k >= 1` moves whole blocks, `d = 2^(k-1)` of them:
//!   `out_i = (c_k ? x_(i -+ d) : 0) + (c_k ? 0 : x_i)`, the select of `select.rs`; a
//!   block shifted in from outside (not for rotations) is 0, and its table is skipped.
//!
//! One of each pair of tables gives 0, so every output block is clean; it carries two
//! bootstraps' noise, and the next stage packs it beside a fresh bit (`4 c + x`: squared
//! 2-norm 18, within the noise model's 25). Cost at `B` blocks and `L = log2(width)`:
//! `1 + L` levels; `L` bit extractions, then `2B` bootstraps per stage less the blocks
//! shifted in from outside (`1` at stage 0 and `d` at stage `k` for shifts, none for
//! rotations). At 64 bits: 358 bootstraps for a shift, 390 for a rotation, 7 levels.

use fhe_api::{Error, ExtractedLwe, Lut, Result};

use super::RadixUint;
use crate::tfhe::pbs::PbsKey;

/// Which way bits move (whether the ones leaving re-enter is the `rotate` flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Left,
    Right,
}

/// `a << (amount mod width)`.
pub fn shl(key: &PbsKey, a: &RadixUint, amount: &RadixUint) -> Result<RadixUint> {
    barrel(key, a, amount, Dir::Left, false)
}

/// `a >> (amount mod width)`.
pub fn shr(key: &PbsKey, a: &RadixUint, amount: &RadixUint) -> Result<RadixUint> {
    barrel(key, a, amount, Dir::Right, false)
}

/// `a` rotated left by `amount mod width` bits.
pub fn rotl(key: &PbsKey, a: &RadixUint, amount: &RadixUint) -> Result<RadixUint> {
    barrel(key, a, amount, Dir::Left, true)
}

/// `a` rotated right by `amount mod width` bits.
pub fn rotr(key: &PbsKey, a: &RadixUint, amount: &RadixUint) -> Result<RadixUint> {
    barrel(key, a, amount, Dir::Right, true)
}

/// The block `x_i` receives from at distance `d` in direction `dir` (`None`: from
/// outside, a 0).
fn source(i: usize, d: usize, n: usize, dir: Dir, rotate: bool) -> Option<usize> {
    let from = match dir {
        Dir::Left => i.checked_sub(d),
        Dir::Right => Some(i + d).filter(|&j| j < n),
    };
    match (from, rotate) {
        (Some(j), _) => Some(j),
        (None, true) => Some(match dir {
            Dir::Left => i + n - d,
            Dir::Right => i + d - n,
        }),
        (None, false) => None,
    }
}

fn barrel(key: &PbsKey, a: &RadixUint, amount: &RadixUint, dir: Dir, rotate: bool) -> Result<RadixUint> {
    let enc = key.encoding();
    let (m, bits) = (enc.message_modulus(), enc.message_bits as usize);
    if a.params() != amount.params() || a.params() != key.params() {
        return Err(Error::ParamMismatch { expected: key.params().name().into(), found: a.params().name().into() });
    }
    let width = a.width();
    if !width.is_power_of_two() {
        return Err(Error::InvalidInput(format!(
            "shift by an encrypted amount: width {width} bits is not a power of two (2 to 256)"
        )));
    }
    // Stage 0's tables move one bit of a 2-bit block.
    if bits != 2 {
        return Err(Error::InvalidInput(format!(
            "shift by an encrypted amount needs 2-bit blocks; {} blocks hold {bits}",
            key.params()
        )));
    }
    let n = a.blocks().len();
    // The amount's bits that matter: log2(width), as many as it has.
    let stages = (width.trailing_zeros() as usize).min(amount.width());
    let bit_luts: Vec<Lut> = (0..bits).map(|b| key.lut(move |x| (x >> b) & 1)).collect::<Result<_>>()?;
    let jobs: Vec<(&ExtractedLwe, &Lut)> =
        (0..stages).map(|k| (&amount.blocks()[k / bits], &bit_luts[k % bits])).collect();
    let c = key.apply_mixed(&jobs)?;

    let mut x: Vec<ExtractedLwe> = a.blocks().to_vec();
    for (k, ck) in c.iter().enumerate() {
        // Two tables per output block: t on x_i itself, u on the block it receives from.
        let (t, u) = if k == 0 {
            match dir {
                Dir::Left => (
                    key.bivariate_lut(|c, v| if c == 1 { (2 * v) % m } else { v })?,
                    key.bivariate_lut(|c, v| if c == 1 { v >> 1 } else { 0 })?,
                ),
                Dir::Right => (
                    key.bivariate_lut(|c, v| if c == 1 { v >> 1 } else { v })?,
                    key.bivariate_lut(|c, v| if c == 1 { 2 * (v % 2) } else { 0 })?,
                ),
            }
        } else {
            (key.bivariate_lut(|c, v| (1 - c.min(1)) * v)?, key.bivariate_lut(|c, v| c * v)?)
        };
        // Stage 0 takes a bit from the neighbouring block, stage k moves 2^(k-1) blocks.
        let d = if k == 0 { 1 } else { 1 << (k - 1) };
        let mut packed = Vec::with_capacity(2 * n);
        let mut jobs: Vec<(usize, &Lut)> = Vec::with_capacity(2 * n);
        let mut owner = Vec::with_capacity(2 * n);
        for i in 0..n {
            jobs.push((packed.len(), &t));
            owner.push(i);
            packed.push(key.pack(ck, &x[i])?);
            if let Some(j) = source(i, d, n, dir, rotate) {
                jobs.push((packed.len(), &u));
                owner.push(i);
                packed.push(key.pack(ck, &x[j])?);
            }
        }
        let out = key.apply_indexed(&packed, &jobs)?;
        let mut next: Vec<Vec<&ExtractedLwe>> = vec![Vec::new(); n];
        for (ct, i) in out.iter().zip(owner) {
            next[i].push(ct);
        }
        x = next
            .into_iter()
            .map(|terms| ExtractedLwe::linear_combination(&terms.into_iter().map(|t| (1, t)).collect::<Vec<_>>(), 0))
            .collect::<Result<_>>()?;
    }
    RadixUint::from_blocks(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{encrypt, fixture, pbs_key};

    fn plain(x: u128, r: u32, width: u32, op: &str) -> u128 {
        let mask = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
        let r = r % width;
        let v = match op {
            "shl" => x << r,
            "shr" => x >> r,
            "rotl" if r == 0 => x,
            "rotl" => (x << r) | (x >> (width - r)),
            "rotr" if r == 0 => x,
            _ => (x >> r) | (x << (width - r)),
        };
        v & mask
    }

    #[test]
    fn shifts_and_rotations_8_bits_every_amount_class() {
        // Amounts 0..8 exercise each stage alone and together; 8-bit amounts above 7
        // wrap modulo the width (11 = 3, 255 = 7).
        let sk = &fixture().0.sk;
        let key = pbs_key();
        let x = 0b1011_0110u128;
        let a = encrypt(8, x, 600);
        for (t, r) in [0u32, 1, 2, 3, 5, 6, 7, 11, 255].into_iter().enumerate() {
            let amount = encrypt(8, r as u128, 610 + t as u64);
            for (op, f) in [("shl", shl as fn(_, _, _) -> _), ("shr", shr), ("rotl", rotl), ("rotr", rotr)] {
                let got = f(key, &a, &amount).unwrap().decrypt_u128(sk).unwrap();
                assert_eq!(got, plain(x, r, 8, op), "{op}({x:#b}, {r})");
            }
        }
    }

    #[test]
    fn shift_16_bits_by_a_narrow_amount() {
        // A 2-bit amount reaches only the first two stages.
        let sk = &fixture().0.sk;
        let x = 0xbeefu128;
        let got = shl(pbs_key(), &encrypt(16, x, 620), &encrypt(2, 3, 621)).unwrap().decrypt_u128(sk).unwrap();
        assert_eq!(got, (x << 3) & 0xffff);
        let got = rotr(pbs_key(), &encrypt(16, x, 622), &encrypt(16, 13, 623)).unwrap().decrypt_u128(sk).unwrap();
        assert_eq!(got, plain(x, 13, 16, "rotr"));
    }

    #[test]
    fn widths_that_are_not_powers_of_two_are_refused() {
        let e = shl(pbs_key(), &encrypt(24, 1, 630), &encrypt(8, 1, 631)).unwrap_err().to_string();
        assert!(e.contains("width 24 bits is not a power of two"), "{e}");
    }
}
