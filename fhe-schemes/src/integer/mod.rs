//! Encrypted unsigned integers: [`FheUint`] holds one encrypted bit per binary digit,
//! least significant first, and every operation is a levelled gate circuit
//! ([`circuit::IntOp`]) run with one batched bootstrap per level. Gate counts and depths
//! per operation and width are in `docs/INTEGERS.md`.
//!
//! ```no_run
//! use fhe_schemes::integer::FheUint;
//! use fhe_schemes::tfhe::{keygen, ServerKey};
//! use std::sync::Arc;
//!
//! # fn main() -> fhe_api::Result<()> {
//! let backend: Arc<dyn fhe_api::Backend> = Arc::new(fhe_cpu::CpuBackend::new(None)?);
//! let keys = keygen(&*backend, fhe_api::ParamSet::PN10QP27)?;
//! let server = ServerKey::new(backend, &keys.ek)?;
//! let a = FheUint::encrypt(&keys.pk, 8, 200)?;
//! let b = FheUint::encrypt(&keys.pk, 8, 100)?;
//! let sum = server.add(&a, &b)?; // wraps modulo 2^8
//! assert_eq!(sum.decrypt_u128(&keys.sk)?, 44);
//! # Ok(())
//! # }
//! ```

/// The encrypted-integer checks every backend's tests run (feature `testing`): test
/// bodies that panic on a mismatch, so not part of the default API.
#[cfg(any(test, feature = "testing"))]
pub mod conformance;
pub mod gates;
pub mod radix;

use fhe_api::format::{self, Decode, UintBits};
use fhe_api::{Error, KeyTag, LweCiphertext, ParamSet, PublicKey, Result, SecretKey};

pub use gates::circuit::{IntOp, PrefixNetwork};
pub use gates::netlist::{Bit, Builder, Circuit, CircuitStats};

use crate::tfhe::{decrypt_bit, encrypt_bit, gates as bit_gates, ServerKey};

/// The widest integer (bits): the widest the binary format carries.
pub const MAX_WIDTH: usize = fhe_api::format::MAX_UINT_BITS;

fn check_width(width: usize) -> Result<()> {
    if width == 0 || width > MAX_WIDTH {
        return Err(Error::InvalidInput(format!("integer width {width} bits: supported widths are 1 to {MAX_WIDTH}")));
    }
    Ok(())
}

/// The bits of `limbs` (little-endian `u64`s) at `width`, checking that the value fits.
pub fn limbs_to_bits(limbs: &[u64], width: usize) -> Result<Vec<bool>> {
    check_width(width)?;
    for (i, &limb) in limbs.iter().enumerate() {
        let keep = width.saturating_sub(64 * i).min(64);
        if keep < 64 && limb >> keep != 0 {
            return Err(Error::InvalidInput(format!("value does not fit in {width} bits")));
        }
    }
    Ok((0..width).map(|i| limbs.get(i / 64).is_some_and(|l| l >> (i % 64) & 1 == 1)).collect())
}

/// Little-endian `u64` limbs of `bits` (least significant first), `ceil(len / 64)` of them.
pub fn bits_to_limbs(bits: &[bool]) -> Vec<u64> {
    let mut limbs = vec![0u64; bits.len().div_ceil(64)];
    for (i, &b) in bits.iter().enumerate() {
        limbs[i / 64] |= (b as u64) << (i % 64);
    }
    limbs
}

/// `value` as two limbs.
pub fn u128_limbs(value: u128) -> [u64; 2] {
    [value as u64, (value >> 64) as u64]
}

/// An encrypted unsigned integer of 1 to 256 bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FheUint {
    bits: Vec<LweCiphertext>,
}

impl FheUint {
    /// Encrypts `value` at `width` bits under the public key (OS randomness).
    pub fn encrypt(pk: &PublicKey, width: usize, value: u128) -> Result<FheUint> {
        FheUint::encrypt_limbs(pk, width, &u128_limbs(value))
    }

    /// Encrypts the little-endian limbs `limbs` at `width` bits (up to 256: four limbs).
    pub fn encrypt_limbs(pk: &PublicKey, width: usize, limbs: &[u64]) -> Result<FheUint> {
        let bits = limbs_to_bits(limbs, width)?;
        Ok(FheUint { bits: bits.into_iter().map(|b| encrypt_bit(pk, b)).collect::<Result<_>>()? })
    }

    /// The noiseless encryption of a known constant: for operands public anyway.
    pub fn trivial(params: ParamSet, width: usize, limbs: &[u64]) -> Result<FheUint> {
        let bits = limbs_to_bits(limbs, width)?;
        Ok(FheUint { bits: bits.into_iter().map(|b| bit_gates::constant(params, b)).collect() })
    }

    /// From encrypted bits, least significant first (one parameter set, one key:
    /// bits of two key tags are `Error::WrongKey`).
    pub fn from_bits(bits: Vec<LweCiphertext>) -> Result<FheUint> {
        check_width(bits.len())?;
        let params = bits[0].params();
        if let Some(bad) = bits.iter().find(|b| b.params() != params) {
            return Err(Error::ParamMismatch { expected: params.name().into(), found: bad.params().name().into() });
        }
        bits.iter().try_fold(KeyTag::NONE, |tag, b| tag.combine(b.tag()))?;
        Ok(FheUint { bits })
    }

    pub fn width(&self) -> usize {
        self.bits.len()
    }
    pub fn params(&self) -> ParamSet {
        self.bits[0].params()
    }
    /// The encrypted bits, least significant first.
    pub fn bits(&self) -> &[LweCiphertext] {
        &self.bits
    }
    pub fn into_bits(self) -> Vec<LweCiphertext> {
        self.bits
    }

    /// The value as little-endian `u64` limbs (`ceil(width / 64)` of them).
    pub fn decrypt(&self, sk: &SecretKey) -> Result<Vec<u64>> {
        let bits = self.bits.iter().map(|b| decrypt_bit(sk, b)).collect::<Result<Vec<_>>>()?;
        Ok(bits_to_limbs(&bits))
    }

    /// The value as a `u128`; an error when it does not fit (only possible above 128 bits).
    pub fn decrypt_u128(&self, sk: &SecretKey) -> Result<u128> {
        let limbs = self.decrypt(sk)?;
        if limbs.iter().skip(2).any(|&l| l != 0) {
            return Err(Error::InvalidInput(format!(
                "the decrypted {}-bit value does not fit in a u128",
                self.width()
            )));
        }
        Ok(limbs.iter().take(2).enumerate().map(|(i, &l)| (l as u128) << (64 * i)).sum())
    }
}

/// The binary format (`docs/FORMAT.md`, "Composed objects": kind 12, a width, then each
/// bit's `LweCiphertext` encoding) and serde, which carries exactly those bytes.
impl FheUint {
    /// The encoding, canonical: `FheUint::decode(&x.encode()) == x`.
    pub fn encode(&self) -> Vec<u8> {
        format::encode_uint_bits(&self.bits).expect("an FheUint holds 1 to 256 bits of one parameter set")
    }

    /// Parses [`FheUint::encode`]'s bytes; anything else is `Error::Decode`, never a panic.
    pub fn decode(bytes: &[u8]) -> Result<FheUint> {
        Ok(FheUint { bits: UintBits::decode(bytes)?.into_bits() })
    }
}

impl serde::Serialize for FheUint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for FheUint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Ok(FheUint { bits: <UintBits as serde::Deserialize>::deserialize(deserializer)?.into_bits() })
    }
}

fn same_width(what: &str, a: &FheUint, b: &FheUint) -> Result<()> {
    if a.width() != b.width() {
        return Err(Error::InvalidInput(format!(
            "{what}: operand widths differ ({} vs {} bits)",
            a.width(),
            b.width()
        )));
    }
    Ok(())
}

/// Integer operations on encrypted integers; each builds its circuit and runs it level by
/// level, one batched bootstrap per level. Operands must have the same width.
impl ServerKey {
    /// Runs `circuit` on encrypted input bits (in the circuit's input order). Inputs of
    /// another set or key are refused up front (`Error::ParamMismatch`,
    /// `Error::WrongKey`), also where the circuit has no gate (a shift only rewires).
    pub fn eval_circuit(&self, circuit: &Circuit, inputs: &[&LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        fhe_api::ops::check_inputs(&self.key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        circuit.eval_encrypted(&*self.backend, &self.key, inputs)
    }

    fn binary(&self, op: IntOp, a: &FheUint, b: &FheUint) -> Result<Vec<LweCiphertext>> {
        same_width(op.name(), a, b)?;
        let inputs: Vec<&LweCiphertext> = a.bits.iter().chain(&b.bits).collect();
        self.eval_circuit(&op.circuit(a.width()), &inputs)
    }

    fn binary_uint(&self, op: IntOp, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        Ok(FheUint { bits: self.binary(op, a, b)? })
    }

    fn binary_bit(&self, op: IntOp, a: &FheUint, b: &FheUint) -> Result<LweCiphertext> {
        Ok(self.binary(op, a, b)?.remove(0))
    }

    /// `a + b mod 2^w`.
    pub fn add(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        self.binary_uint(IntOp::Add, a, b)
    }
    /// `a - b mod 2^w`.
    pub fn sub(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        self.binary_uint(IntOp::Sub, a, b)
    }
    /// `a * b mod 2^w`.
    pub fn mul_low(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        self.binary_uint(IntOp::MulLow, a, b)
    }
    /// The full `2w`-bit product (a `w`-bit `FheUint` of width up to 128 gives up to 256).
    pub fn mul_full(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        if 2 * a.width() > MAX_WIDTH {
            return Err(Error::InvalidInput(format!(
                "mul_full of {}-bit operands needs {} bits, above the widest integer ({MAX_WIDTH}); use mul_low",
                a.width(),
                2 * a.width()
            )));
        }
        self.binary_uint(IntOp::MulFull, a, b)
    }
    /// Encrypted `a == b`.
    pub fn eq(&self, a: &FheUint, b: &FheUint) -> Result<LweCiphertext> {
        self.binary_bit(IntOp::Eq, a, b)
    }
    /// Encrypted `a < b` (unsigned).
    pub fn lt(&self, a: &FheUint, b: &FheUint) -> Result<LweCiphertext> {
        self.binary_bit(IntOp::Lt, a, b)
    }
    /// Encrypted `a <= b` (unsigned).
    pub fn le(&self, a: &FheUint, b: &FheUint) -> Result<LweCiphertext> {
        self.binary_bit(IntOp::Le, a, b)
    }
    pub fn min(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        self.binary_uint(IntOp::Min, a, b)
    }
    pub fn max(&self, a: &FheUint, b: &FheUint) -> Result<FheUint> {
        self.binary_uint(IntOp::Max, a, b)
    }

    /// `sel ? t : f`, with `sel` an encrypted bit.
    pub fn select(&self, sel: &LweCiphertext, t: &FheUint, f: &FheUint) -> Result<FheUint> {
        same_width("select", t, f)?;
        let inputs: Vec<&LweCiphertext> = std::iter::once(sel).chain(&t.bits).chain(&f.bits).collect();
        Ok(FheUint { bits: self.eval_circuit(&IntOp::Select.circuit(t.width()), &inputs)? })
    }

    /// `a << k mod 2^w` for a plain `k` (no bootstrap; `k >= w` gives zero).
    pub fn shl(&self, a: &FheUint, k: usize) -> Result<FheUint> {
        self.shift(IntOp::Shl(k), a)
    }
    /// `a >> k` (logical) for a plain `k` (no bootstrap; `k >= w` gives zero).
    pub fn shr(&self, a: &FheUint, k: usize) -> Result<FheUint> {
        self.shift(IntOp::Shr(k), a)
    }

    fn shift(&self, op: IntOp, a: &FheUint) -> Result<FheUint> {
        if a.params() != self.params() {
            return Err(Error::ParamMismatch {
                expected: self.params().name().into(),
                found: a.params().name().into(),
            });
        }
        let inputs: Vec<&LweCiphertext> = a.bits.iter().collect();
        Ok(FheUint { bits: self.eval_circuit(&op.circuit(a.width()), &inputs)? })
    }
}

#[cfg(test)]
mod tests;
