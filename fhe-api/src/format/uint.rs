//! An encrypted unsigned integer (`lux_fhe::FheUint`; `docs/FORMAT.md`, "Composed
//! objects"): a width (u32), then the whole encoding of each bit's [`LweCiphertext`],
//! least significant first, behind a header of kind [`ComposedKind::FheUint`]. The width
//! is bounded by [`MAX_UINT_BITS`] and the length it implies is checked against the
//! header and the input before any bit is decoded.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use super::header::{open_composed, write_composed_header, ComposedKind, ObjectKind, HEADER_LEN};
use super::{BytesVisitor, Decode, Encode, Wire};
use crate::error::{DecodeError, Error, Result};
use crate::tfhe::entities::LweCiphertext;
use crate::tfhe::params::ParamSet;

/// The widest encrypted integer the format carries (bits).
pub const MAX_UINT_BITS: usize = 256;
/// Bytes of the width field that opens the body.
pub const UINT_WIDTH_LEN: usize = 4;

/// The body length of a `width`-bit integer under `params`.
fn body_len(params: ParamSet, width: usize) -> u64 {
    UINT_WIDTH_LEN as u64 + width as u64 * ObjectKind::LweCiphertext.encoded_len(params)
}

/// The encrypted bits of an unsigned integer as the format carries them: 1 to
/// [`MAX_UINT_BITS`] ciphertexts of one parameter set, least significant first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UintBits(Vec<LweCiphertext>);

impl UintBits {
    /// Checks the width (1 to [`MAX_UINT_BITS`]) and that every bit has one set.
    pub fn new(bits: Vec<LweCiphertext>) -> Result<UintBits> {
        if bits.is_empty() || bits.len() > MAX_UINT_BITS {
            return Err(Error::InvalidInput(format!(
                "integer width {} bits: the format carries 1 to {MAX_UINT_BITS}",
                bits.len()
            )));
        }
        let params = bits[0].params();
        if let Some(bad) = bits.iter().find(|b| b.params() != params) {
            return Err(Error::ParamMismatch { expected: params.name().into(), found: bad.params().name().into() });
        }
        Ok(UintBits(bits))
    }

    /// The bits, least significant first.
    pub fn bits(&self) -> &[LweCiphertext] {
        &self.0
    }

    /// The bits, least significant first.
    pub fn into_bits(self) -> Vec<LweCiphertext> {
        self.0
    }

    /// The exact number of bytes [`UintBits::encode`] returns.
    pub fn encoded_len(&self) -> usize {
        // Bounded by the size of ciphertexts that already exist in memory.
        (HEADER_LEN as u64 + body_len(self.0[0].params(), self.0.len())) as usize
    }

    /// The encoding: header, width, each bit's encoding.
    pub fn encode(&self) -> Vec<u8> {
        encode_bits(&self.0)
    }
}

/// [`UintBits::encode`] on borrowed bits that already satisfy [`UintBits::new`]'s checks
/// (a `FheUint` holds 1 to 256 bits of one set), so no copy of them is made.
pub fn encode_uint_bits(bits: &[LweCiphertext]) -> Result<Vec<u8>> {
    let params = bits.first().map(LweCiphertext::params);
    let ok = bits.len() <= MAX_UINT_BITS && params.is_some_and(|p| bits.iter().all(|b| b.params() == p));
    if !ok {
        // The checks and their messages are `new`'s.
        UintBits::new(bits.to_vec())?;
    }
    Ok(encode_bits(bits))
}

fn encode_bits(bits: &[LweCiphertext]) -> Vec<u8> {
    let params = bits[0].params();
    let len = body_len(params, bits.len());
    let mut out = Vec::with_capacity(HEADER_LEN + len as usize);
    out.resize(HEADER_LEN, 0);
    write_composed_header(&mut out, ComposedKind::FheUint, params, len);
    out.extend_from_slice(&(bits.len() as u32).to_le_bytes());
    bits.iter().for_each(|b| b.encode_to(&mut out));
    out
}

impl Decode for UintBits {
    /// 1 to [`MAX_UINT_BITS`] valid ciphertexts of the header's parameter set.
    fn decode(bytes: &[u8]) -> Result<Self> {
        let (params, body) = open_composed(bytes, ComposedKind::FheUint, |p, rest| {
            let w = rest
                .get(..UINT_WIDTH_LEN)
                .ok_or(DecodeError::Truncated { needed: HEADER_LEN + UINT_WIDTH_LEN, have: HEADER_LEN + rest.len() })?;
            let width = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize;
            if width == 0 || width > MAX_UINT_BITS {
                return Err(DecodeError::Invalid(format!(
                    "FheUint of width {width}: the format carries 1 to {MAX_UINT_BITS} bits"
                )));
            }
            Ok(body_len(p, width))
        })?;
        // The body length matched the width, so the chunks are whole encodings.
        let step = ObjectKind::LweCiphertext.encoded_len(params) as usize;
        let mut bits = Vec::with_capacity((body.len() - UINT_WIDTH_LEN) / step);
        for chunk in body[UINT_WIDTH_LEN..].chunks_exact(step) {
            let bit = LweCiphertext::decode(chunk)?;
            if bit.params() != params {
                return Err(DecodeError::Invalid(format!("FheUint of {params} holds a bit of {}", bit.params())).into());
            }
            bits.push(bit);
        }
        Ok(UintBits(bits))
    }
}

impl Wire for UintBits {
    const NAME: &'static str = "FheUint";
    const SECRET: bool = false;
    fn max_encoded_len() -> usize {
        let max = ParamSet::ALL.iter().map(|&p| HEADER_LEN as u64 + body_len(p, MAX_UINT_BITS)).max();
        max.unwrap_or(0).try_into().unwrap_or(usize::MAX)
    }
}

impl Serialize for UintBits {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.encode())
    }
}

impl<'de> Deserialize<'de> for UintBits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_byte_buf(BytesVisitor::<UintBits>(std::marker::PhantomData))
    }
}
