//! The versioned binary format of every key and ciphertext (`docs/FORMAT.md`).
//!
//! Every object is a 20-byte header followed by a body whose length is fixed by the
//! object kind and the parameter set. All integers are little-endian.
//!
//! ```text
//! offset  size  field
//!      0     6  magic "LUXFHE" (4C 55 58 46 48 45)
//!      6     2  format version (u16, = 1)
//!      8     2  object kind id (u16, see ObjectKind)
//!     10     2  parameter set id (u16, ParamSet::id)
//!     12     8  body length in bytes (u64; must equal the length the kind and set dictate)
//!     20     .  body
//! ```
//!
//! Decoding untrusted bytes never panics and never allocates more than the parameter set
//! dictates: the header is checked in full (magic, version, kind, set, body length) and
//! the input length is compared with the expected total before any body buffer exists.
//!
//! [`Encode`] and [`Decode`] are implemented for [`LweCiphertext`], [`ExtractedLwe`],
//! [`SecretKey`], [`PublicKey`] and [`EvaluationKey`]; `serde` support (de)serializes
//! exactly these bytes (`serialize_bytes`; a visitor accepting borrowed bytes, byte
//! buffers and sequences of `u8`, so self-describing formats such as JSON round-trip).
//!
//! | module | holds |
//! |---|---|
//! | this one | the traits, the word packing every body shares, the public paths |
//! | `header` | the header, [`ObjectKind`], [`peek_header`], the checks before any body |
//! | `tfhe` | the bit scheme's bodies and their serde glue |
//!
//! [`LweCiphertext`]: crate::entities::LweCiphertext
//! [`ExtractedLwe`]: crate::entities::ExtractedLwe
//! [`SecretKey`]: crate::entities::SecretKey
//! [`PublicKey`]: crate::entities::PublicKey
//! [`EvaluationKey`]: crate::entities::EvaluationKey

mod header;
#[cfg(test)]
mod tests;
mod tfhe;

pub use header::{peek_header, Header, ObjectKind, FORMAT_VERSION, HEADER_LEN, MAGIC, SEED_LEN};
pub use tfhe::lwe_word_bytes;

use crate::error::{DecodeError, Error, Result};

/// Turns a valid value into its encoding. Encodings are canonical: one value, one byte
/// string, and `decode(encode(x)) == x`.
pub trait Encode {
    /// The kind written into the header.
    const KIND: ObjectKind;
    /// The exact number of bytes [`Encode::encode`] returns.
    fn encoded_len(&self) -> usize;
    /// Appends the encoding to `out` (reserving exactly what it needs).
    fn encode_to(&self, out: &mut Vec<u8>);
    /// The encoding in a vector of exactly [`Encode::encoded_len`] bytes.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_to(&mut out);
        out
    }
}

/// Parses an encoding. Any input that is not exactly one valid object of this kind
/// returns [`Error::Decode`]; no input panics.
pub trait Decode: Encode + Sized {
    fn decode(bytes: &[u8]) -> Result<Self>;
}

// ---------------------------------------------------------------------------------------
// Word packing. The width is matched once per array so every inner loop is a fixed-size
// copy into a pre-sized buffer.

/// Writes `words` at `width` (2 or 4) bytes each into `out` (exactly `words.len() * width`).
fn put_u32s(out: &mut [u8], words: &[u32], width: usize) {
    debug_assert_eq!(out.len(), words.len() * width);
    match width {
        2 => out.chunks_exact_mut(2).zip(words).for_each(|(c, &w)| c.copy_from_slice(&(w as u16).to_le_bytes())),
        _ => out.chunks_exact_mut(4).zip(words).for_each(|(c, &w)| c.copy_from_slice(&w.to_le_bytes())),
    }
}

/// Writes `words` at `width` (4 or 8) bytes each into `out`.
fn put_u64s(out: &mut [u8], words: &[u64], width: usize) {
    debug_assert_eq!(out.len(), words.len() * width);
    match width {
        4 => out.chunks_exact_mut(4).zip(words).for_each(|(c, &w)| c.copy_from_slice(&(w as u32).to_le_bytes())),
        _ => out.chunks_exact_mut(8).zip(words).for_each(|(c, &w)| c.copy_from_slice(&w.to_le_bytes())),
    }
}

/// The first word at or above `bound`, reported at element index `base + i`.
fn range_check<T: Copy + Into<u64> + Ord + Default>(words: &[T], bound: u64, base: usize) -> Result<(), DecodeError> {
    // A branch-free maximum first (vectorizes); locate the culprit only on failure.
    let max = words.iter().copied().max().unwrap_or_default();
    if max.into() < bound {
        return Ok(());
    }
    let i = words.iter().position(|&w| w.into() >= bound).unwrap_or(0);
    Err(DecodeError::OutOfRange { index: base + i, value: words[i].into(), bound })
}

/// Reads `bytes.len() / width` words of `width` (2 or 4) bytes, each below `bound`.
fn get_u32s(bytes: &[u8], width: usize, bound: u64, base: usize) -> Result<Vec<u32>, DecodeError> {
    let words: Vec<u32> = match width {
        2 => bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u32).collect(),
        _ => bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
    };
    range_check(&words, bound, base)?;
    Ok(words)
}

/// Reads `bytes.len() / width` words of `width` (4 or 8) bytes, each below `bound`.
fn get_u64s(bytes: &[u8], width: usize, bound: u64, base: usize) -> Result<Vec<u64>, DecodeError> {
    let words: Vec<u64> = match width {
        4 => bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64).collect(),
        _ => bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
    };
    range_check(&words, bound, base)?;
    Ok(words)
}

/// Secret coefficient to byte: 0 -> 0, +1 -> 1, -1 -> 2.
fn ternary_to_byte(x: i8) -> u8 {
    match x {
        1 => 1,
        -1 => 2,
        _ => 0,
    }
}

/// Byte to secret coefficient; anything but 0, 1, 2 is out of range.
fn byte_to_ternary(b: u8, index: usize) -> Result<i8, DecodeError> {
    match b {
        0 => Ok(0),
        1 => Ok(1),
        2 => Ok(-1),
        v => Err(DecodeError::OutOfRange { index, value: v as u64, bound: 3 }),
    }
}

fn invalid(e: Error) -> DecodeError {
    match e {
        Error::InvalidInput(s) => DecodeError::Invalid(s),
        Error::Decode(d) => d,
        other => DecodeError::Invalid(other.to_string()),
    }
}

fn seed_of(body: &[u8]) -> [u8; 32] {
    let mut seed = [0u8; SEED_LEN];
    seed.copy_from_slice(&body[..SEED_LEN]);
    seed
}
