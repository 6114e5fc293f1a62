//! The versioned binary format of every key and ciphertext (`docs/FORMAT.md`).
//!
//! Every object is a 20-byte header followed by a body whose length is fixed by the
//! object kind and the parameter set (and, for a CKKS ciphertext or plaintext, by the
//! level its body opens with). All integers are little-endian. Every bit-scheme body
//! opens with the 8-byte key tag of its key set ([`crate::tag::KeyTag`]); a public or
//! evaluation key whose stored tag is not the one its header's set and its public seed
//! derive (a relabelled key) is refused with [`Error::WrongKey`], a key with tag zero
//! or an all-zero key with [`Error::Decode`].
//!
//! ```text
//! offset  size  field
//!      0     6  magic "LUXFHE" (4C 55 58 46 48 45)
//!      6     2  format version (u16, = 2; version 1 had no key tags and is refused)
//!      8     2  object kind id (u16: ObjectKind 1..=5, CkksObjectKind 6..=10, ComposedKind 11..=12)
//!     10     2  parameter set id (u16: ParamSet::id 1..=3, Preset::id 101..=104)
//!     12     8  body length in bytes (u64; must equal the length the kind and set dictate)
//!     20     .  body
//! ```
//!
//! Decoding untrusted bytes never panics and never allocates more than the parameter set
//! dictates: the header is checked in full (magic, version, kind, set, body length) and
//! the input length is compared with the expected total before any body buffer exists.
//! A CKKS level is read from the body's fixed prefix and bounded by the preset's top
//! level before the length it implies is computed.
//!
//! [`Encode`] and [`Decode`] are implemented for [`LweCiphertext`], [`ExtractedLwe`],
//! [`SecretKey`], [`PublicKey`] and [`EvaluationKey`]; [`TryEncode`] and [`Decode`] for
//! [`HostCiphertext`], [`Plaintext`], [`ckks::SecretKey`], [`ckks::PublicKey`] and
//! [`SwitchingKey`] (fallible: parameters that are no preset have no encoding). `serde`
//! support (de)serializes exactly these bytes (`serialize_bytes`; a visitor accepting
//! borrowed bytes, byte buffers and sequences of `u8`, so self-describing formats such as
//! JSON round-trip).
//!
//! | module | holds |
//! |---|---|
//! | this one | the traits, the word packing every body shares, the public paths |
//! | `header` | the header, both schemes' kinds, [`peek_header`] and [`peek_ckks_header`], the checks before any body |
//! | `tfhe` | the bit scheme's bodies and their serde glue |
//! | `ckks` | the CKKS bodies ([`TryEncode`], since only presets have an encoding) |
//! | `keyset`, `uint` | the composed objects ([`ComposedKind`]): a [`KeySet`] and an encrypted integer's bits ([`UintBits`]), made of the other kinds' whole encodings |
//!
//! [`KeySet`]: crate::tfhe::entities::KeySet
//!
//! [`LweCiphertext`]: crate::tfhe::entities::LweCiphertext
//! [`ExtractedLwe`]: crate::tfhe::entities::ExtractedLwe
//! [`SecretKey`]: crate::tfhe::entities::SecretKey
//! [`PublicKey`]: crate::tfhe::entities::PublicKey
//! [`EvaluationKey`]: crate::tfhe::entities::EvaluationKey
//! [`HostCiphertext`]: crate::ckks::entities::HostCiphertext
//! [`Plaintext`]: crate::ckks::entities::Plaintext
//! [`ckks::SecretKey`]: crate::ckks::entities::SecretKey
//! [`ckks::PublicKey`]: crate::ckks::entities::PublicKey
//! [`SwitchingKey`]: crate::ckks::entities::SwitchingKey

mod ckks;
mod ckks_bundle;
#[cfg(test)]
mod ckks_refusal_tests;
#[cfg(test)]
mod ckks_tests;
#[cfg(test)]
mod composed_tests;
mod header;
mod keyset;
#[cfg(test)]
mod tag_tests;
#[cfg(test)]
mod tests;
mod tfhe;
mod uint;

pub use header::{
    peek_ckks_header, peek_header, CkksHeader, CkksObjectKind, ComposedKind, Header, ObjectKind, CKKS_LEVEL_PREFIX_LEN,
    CKKS_SWITCH_PREFIX_LEN, CKKS_WORD_LEN, FORMAT_VERSION, HEADER_LEN, KEY_TAG_LEN, MAGIC, SEED_LEN,
};
pub use tfhe::lwe_word_bytes;
pub use uint::{encode_uint_bits, UintBits, MAX_UINT_BITS, UINT_WIDTH_LEN};

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use zeroize::Zeroizing;

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

/// [`Encode`] for objects that may have no encoding: the CKKS objects, whose header names
/// their parameters by preset id ([`crate::ckks::params::Preset::id`]). Parameters that
/// equal no preset are refused with [`Error::InvalidInput`], since a reader could not
/// rebuild their primes. Encodings are canonical as [`Encode`]'s are.
pub trait TryEncode {
    /// The kind written into the header.
    const KIND: CkksObjectKind;
    /// The exact number of bytes [`TryEncode::try_encode`] returns.
    fn try_encoded_len(&self) -> Result<usize>;
    /// Appends the encoding to `out` (reserving exactly what it needs); on an error
    /// `out` is unchanged.
    fn try_encode_to(&self, out: &mut Vec<u8>) -> Result<()>;
    /// The encoding in a vector of exactly [`TryEncode::try_encoded_len`] bytes.
    fn try_encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.try_encoded_len()?);
        self.try_encode_to(&mut out)?;
        Ok(out)
    }
}

/// Parses an encoding made by [`Encode`] or [`TryEncode`]. Any input that is not exactly
/// one valid object of this kind returns [`Error::Decode`]; no input panics.
pub trait Decode: Sized {
    fn decode(bytes: &[u8]) -> Result<Self>;
}

/// What the serde visitor needs of a type beyond [`Decode`], for both schemes.
trait Wire: Decode {
    /// The kind's name, for messages.
    const NAME: &'static str;
    /// Whether the encoding holds a secret (the visitor then reserves its largest first
    /// buffer at once; every buffer it outgrows is wiped).
    const SECRET: bool;
    /// The longest encoding of the kind under any parameter set: the cap a serde
    /// sequence may grow to before it is rejected.
    fn max_encoded_len() -> usize;
}

/// The most a serde sequence's length hint may reserve before bytes arrive.
const SEQ_RESERVE_MAX: usize = 1 << 16;

/// The serde visitor of every format type: borrowed bytes, byte buffers and sequences of
/// `u8` (what self-describing formats such as JSON produce), all decoded as [`Decode`].
struct BytesVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Wire> Visitor<'de> for BytesVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Lux FHE binary encoding of a {} (bytes)", T::NAME)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        T::decode(v).map_err(E::custom)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<T, E> {
        // The buffer may hold a secret key: wipe it once decoded.
        let v = Zeroizing::new(v);
        T::decode(&v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let cap = T::max_encoded_len();
        // A length hint is the sender's claim, not a checked header: reserve at most 64 KiB
        // on it and grow as bytes really arrive (a CBOR array header claiming 2^40 bytes
        // must not reserve an evaluation key's size before the first byte is read). A
        // secret takes the 64 KiB at once: a secret key then never grows.
        let hint = if T::SECRET { cap } else { seq.size_hint().unwrap_or(0).min(cap) };
        let mut buf = Zeroizing::new(Vec::with_capacity(hint.min(SEQ_RESERVE_MAX)));
        while let Some(b) = seq.next_element::<u8>()? {
            if buf.len() == cap {
                return Err(de::Error::custom(DecodeError::Invalid(format!(
                    "byte sequence longer than any {} encoding ({cap} bytes)",
                    T::NAME
                ))));
            }
            if buf.len() == buf.capacity() {
                // Grow into a fresh buffer so the old one is wiped when dropped: Vec's own
                // reallocation would free an unwiped copy (a key set opens with its secret).
                let mut bigger = Zeroizing::new(Vec::with_capacity((2 * buf.len()).clamp(64, cap)));
                bigger.extend_from_slice(&buf);
                buf = bigger;
            }
            buf.push(b);
        }
        T::decode(&buf).map_err(de::Error::custom)
    }
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
