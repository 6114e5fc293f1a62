//! Radix integers: an unsigned integer as blocks of a programmable-bootstrapping set
//! (`crate::tfhe::pbs`), each holding `message_bits` of the value (2 for `M2C2`) with
//! room for carries above them, least significant block first. Sums of blocks are
//! free (host additions); a programmable bootstrap per block cleans the carries and
//! evaluates any function of one block or of a packed pair. Every level of a circuit
//! is one key-switch batch and one blind-rotation batch per distinct table
//! ([`PbsKey::apply_mixed`]).
//!
//! | file | operations |
//! |---|---|
//! | [`carry`] | carry propagation: sequential, or a Hillis-Steele parallel prefix over the blocks' generate/propagate states |
//! | [`add`] | `add`, `sub`, `scalar_add`, `scalar_sub` |
//! | [`compare`] | `eq`, `ne`, `lt`, `le`, `gt`, `ge` |
//! | [`select`] | `select`, `min`, `max` |
//! | [`mul`] | `mul`, `scalar_mul`: block products by bivariate tables, a carry-save reduction |
//! | [`shift`] | `shl`, `shr`, `rotl`, `rotr` by an encrypted amount: a barrel shifter |
//!
//! Every operation returns clean blocks (each below `message_modulus`); the boolean
//! results are one block holding 0 or 1 ([`RadixBool`]). When the radix form wins over
//! the boolean-gate integers (`crate::integer::FheUint`) is in `docs/INTEGERS.md`.

pub mod add;
pub mod carry;
pub mod compare;
pub mod mul;
pub mod select;
pub mod shift;

use fhe_api::rng::Seed;
use fhe_api::{Error, ExtractedLwe, KeyTag, ParamSet, Result, SecretKey};

use crate::integer::MAX_WIDTH;
use crate::tfhe::pbs::{decrypt_block, encrypt_block_seeded, Encoding, PbsKey};

pub use carry::Propagation;

/// An encrypted unsigned integer in clean radix blocks, least significant first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RadixUint {
    blocks: Vec<ExtractedLwe>,
}

/// An encrypted boolean: one block holding 0 or 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RadixBool(pub ExtractedLwe);

impl RadixBool {
    pub fn decrypt(&self, sk: &SecretKey) -> Result<bool> {
        match decrypt_block(sk, &self.0)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::InvalidInput(format!("boolean block decodes to {v}, not 0 or 1"))),
        }
    }
}

/// The number of blocks of a `width`-bit integer of `set`: `width` must be a multiple
/// of the set's message bits, from one block up to [`MAX_WIDTH`] bits.
pub fn block_count(set: ParamSet, width: usize) -> Result<usize> {
    let bits = Encoding::for_set(set)?.message_bits as usize;
    if width == 0 || width > MAX_WIDTH || !width.is_multiple_of(bits) {
        return Err(Error::InvalidInput(format!(
            "radix width {width} bits: {set} blocks hold {bits} bits, so widths are multiples of {bits} up to {MAX_WIDTH}"
        )));
    }
    Ok(width / bits)
}

/// The `bits`-bit digits of the little-endian limbs `limbs`, `count` of them; a value
/// that does not fit in `count * bits` bits is `Error::InvalidInput`.
pub(crate) fn digits(limbs: &[u64], bits: u32, count: usize) -> Result<Vec<u64>> {
    let width = count * bits as usize;
    for (i, &limb) in limbs.iter().enumerate() {
        let keep = width.saturating_sub(64 * i).min(64);
        if keep < 64 && limb >> keep != 0 {
            return Err(Error::InvalidInput(format!("value does not fit in {width} bits")));
        }
    }
    let mask = (1u64 << bits) - 1;
    Ok((0..count)
        .map(|d| {
            let at = d * bits as usize;
            limbs.get(at / 64).map_or(0, |l| (l >> (at % 64)) & mask)
        })
        .collect())
}

impl RadixUint {
    /// Encrypts the little-endian limbs `limbs` at `width` bits under the secret key,
    /// block `i` with stream `(seed, "block-encrypt", i)`.
    pub fn encrypt_limbs_seeded(sk: &SecretKey, width: usize, limbs: &[u64], seed: &Seed) -> Result<RadixUint> {
        let count = block_count(sk.params(), width)?;
        let enc = Encoding::for_set(sk.params())?;
        let blocks = digits(limbs, enc.message_bits, count)?
            .into_iter()
            .enumerate()
            .map(|(i, d)| encrypt_block_seeded(sk, d, seed, i as u64))
            .collect::<Result<_>>()?;
        Ok(RadixUint { blocks })
    }

    /// Encrypts `value` at `width` bits with fresh OS randomness.
    pub fn encrypt(sk: &SecretKey, width: usize, value: u128) -> Result<RadixUint> {
        RadixUint::encrypt_limbs_seeded(sk, width, &crate::integer::u128_limbs(value), &Seed::from_os()?)
    }

    /// The noiseless encryption of a known constant (no key tag).
    pub fn trivial(key: &PbsKey, width: usize, limbs: &[u64]) -> Result<RadixUint> {
        let count = block_count(key.params(), width)?;
        let blocks = digits(limbs, key.encoding().message_bits, count)?.into_iter().map(|d| key.trivial(d)).collect();
        Ok(RadixUint { blocks })
    }

    /// From clean blocks, least significant first (one set, one key).
    pub fn from_blocks(blocks: Vec<ExtractedLwe>) -> Result<RadixUint> {
        let first = blocks.first().ok_or_else(|| Error::InvalidInput("a radix integer needs a block".into()))?;
        let set = first.params();
        block_count(set, blocks.len() * Encoding::for_set(set)?.message_bits as usize)?;
        if let Some(bad) = blocks.iter().find(|b| b.params() != set) {
            return Err(Error::ParamMismatch { expected: set.name().into(), found: bad.params().name().into() });
        }
        blocks.iter().try_fold(KeyTag::NONE, |tag, b| tag.combine(b.tag()))?;
        Ok(RadixUint { blocks })
    }

    pub fn blocks(&self) -> &[ExtractedLwe] {
        &self.blocks
    }

    pub fn params(&self) -> ParamSet {
        self.blocks[0].params()
    }

    /// Width in bits.
    pub fn width(&self) -> usize {
        let bits = Encoding::for_set(self.params()).map_or(0, |e| e.message_bits as usize);
        self.blocks.len() * bits
    }

    /// The value as little-endian limbs (`ceil(width / 64)` of them). Each block's full
    /// value (carries included) is added at its place, modulo `2^width`.
    pub fn decrypt_limbs(&self, sk: &SecretKey) -> Result<Vec<u64>> {
        let bits = Encoding::for_set(self.params())?.message_bits as usize;
        let width = self.width();
        let mut limbs = vec![0u64; width.div_ceil(64) + 1];
        for (i, b) in self.blocks.iter().enumerate() {
            let v = decrypt_block(sk, b)? as u128;
            let at = i * bits;
            let (limb, off) = (at / 64, at % 64);
            // v < 2^8, so the shifted value spans at most two limbs plus a carry.
            let mut carry = v << off;
            for l in limbs.iter_mut().skip(limb) {
                let (s, c) = l.overflowing_add(carry as u64);
                *l = s;
                carry = (carry >> 64) + c as u128;
                if carry == 0 {
                    break;
                }
            }
        }
        limbs.truncate(width.div_ceil(64));
        if !width.is_multiple_of(64) {
            let last = limbs.len() - 1;
            limbs[last] &= (1u64 << (width % 64)) - 1;
        }
        Ok(limbs)
    }

    /// The value of an integer of at most 128 bits.
    pub fn decrypt_u128(&self, sk: &SecretKey) -> Result<u128> {
        if self.width() > 128 {
            return Err(Error::InvalidInput(format!("{}-bit integer: decrypt_limbs reads it", self.width())));
        }
        let l = self.decrypt_limbs(sk)?;
        Ok(l[0] as u128 | (l.get(1).copied().unwrap_or(0) as u128) << 64)
    }
}

/// Two operands of one width and set (`Error::InvalidInput`, `Error::ParamMismatch`).
pub(crate) fn check_pair(a: &RadixUint, b: &RadixUint) -> Result<()> {
    if a.params() != b.params() {
        return Err(Error::ParamMismatch { expected: a.params().name().into(), found: b.params().name().into() });
    }
    if a.blocks.len() != b.blocks.len() {
        return Err(Error::InvalidInput(format!("operand widths differ: {} and {} bits", a.width(), b.width())));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
