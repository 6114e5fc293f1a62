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

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use zeroize::Zeroizing;

use crate::entities::{EvaluationKey, ExtractedLwe, LweCiphertext, PublicKey, SecretKey};
use crate::error::{DecodeError, Error, Result};
use crate::params::{ParamSet, Params};

/// The six magic bytes that open every object.
pub const MAGIC: [u8; 6] = *b"LUXFHE";
/// The format version this build writes, and the only one it reads.
pub const FORMAT_VERSION: u16 = 1;
/// Bytes in the header.
pub const HEADER_LEN: usize = 20;
/// Bytes of the public seed that opens public- and evaluation-key bodies.
pub const SEED_LEN: usize = 32;

const VERSION_AT: usize = 6;
const KIND_AT: usize = 8;
const PARAMS_AT: usize = 10;
const BODY_LEN_AT: usize = 12;

/// The kind of object a header announces. The numeric ids are part of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ObjectKind {
    LweCiphertext,
    ExtractedLwe,
    SecretKey,
    PublicKey,
    EvaluationKey,
}

impl ObjectKind {
    /// Every kind, in id order.
    pub const ALL: [ObjectKind; 5] = [
        ObjectKind::LweCiphertext,
        ObjectKind::ExtractedLwe,
        ObjectKind::SecretKey,
        ObjectKind::PublicKey,
        ObjectKind::EvaluationKey,
    ];

    /// The id written into the header.
    pub const fn id(self) -> u16 {
        match self {
            ObjectKind::LweCiphertext => 1,
            ObjectKind::ExtractedLwe => 2,
            ObjectKind::SecretKey => 3,
            ObjectKind::PublicKey => 4,
            ObjectKind::EvaluationKey => 5,
        }
    }

    /// Inverse of [`ObjectKind::id`].
    pub const fn from_id(id: u16) -> Option<ObjectKind> {
        match id {
            1 => Some(ObjectKind::LweCiphertext),
            2 => Some(ObjectKind::ExtractedLwe),
            3 => Some(ObjectKind::SecretKey),
            4 => Some(ObjectKind::PublicKey),
            5 => Some(ObjectKind::EvaluationKey),
            _ => None,
        }
    }

    /// The Rust type name of the kind.
    pub const fn name(self) -> &'static str {
        match self {
            ObjectKind::LweCiphertext => "LweCiphertext",
            ObjectKind::ExtractedLwe => "ExtractedLwe",
            ObjectKind::SecretKey => "SecretKey",
            ObjectKind::PublicKey => "PublicKey",
            ObjectKind::EvaluationKey => "EvaluationKey",
        }
    }

    /// The exact body length of this kind under `params`, in bytes.
    pub const fn body_len(self, params: ParamSet) -> u64 {
        let p = params.params();
        let lwe = lwe_word_bytes(p) as u64;
        let ring = p.ring_coeff_bytes() as u64;
        match self {
            ObjectKind::LweCiphertext => (p.n() as u64 + 1) * lwe,
            ObjectKind::ExtractedLwe => (p.big_n() as u64 + 1) * ring,
            ObjectKind::SecretKey => p.n() as u64 + p.big_n() as u64,
            ObjectKind::PublicKey => SEED_LEN as u64 + p.pk_samples as u64 * lwe,
            ObjectKind::EvaluationKey => SEED_LEN as u64 + p.bsk_b_len() as u64 * ring + p.ksk_samples() as u64 * lwe,
        }
    }

    /// The exact encoded length (header and body) of this kind under `params`.
    pub const fn encoded_len(self, params: ParamSet) -> u64 {
        HEADER_LEN as u64 + self.body_len(params)
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes per LWE word (`a_i`, `b`, public- and key-switching-key `b` halves): 2 when
/// `q <= 2^16` (every production set: `q = 2^15`), else 4.
pub const fn lwe_word_bytes(p: &Params) -> usize {
    if p.lwe_modulus_log.0 <= 16 {
        2
    } else {
        4
    }
}

/// A validated header: what [`peek_header`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub kind: ObjectKind,
    pub params: ParamSet,
    /// The body length; always equal to `kind.body_len(params)` in a validated header.
    pub body_len: u64,
}

impl Header {
    /// Header plus body: where the next object starts in a concatenation of objects.
    pub fn total_len(&self) -> u64 {
        HEADER_LEN as u64 + self.body_len
    }
}

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

/// Reads and validates the header of an encoded object (magic, version, kind, parameter
/// set and body length) without looking at the body. It does not check that the body
/// is present: compare [`Header::total_len`] with the input length for that.
pub fn peek_header(bytes: &[u8]) -> Result<Header> {
    let raw = read_raw_header(bytes)?;
    let kind = ObjectKind::from_id(raw.kind).ok_or_else(|| DecodeError::WrongKind {
        expected: "a known object kind (ids 1..=5)",
        found: format!("unknown kind id {}", raw.kind),
    })?;
    Ok(finish_header(raw, kind)?)
}

struct RawHeader {
    version: u16,
    kind: u16,
    params: u16,
    body_len: u64,
}

fn le_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// Magic, length and version checks; the fields, unvalidated beyond that.
fn read_raw_header(bytes: &[u8]) -> Result<RawHeader, DecodeError> {
    // A prefix that disagrees with the magic is not ours, however short it is.
    let m = bytes.len().min(MAGIC.len());
    if bytes[..m] != MAGIC[..m] {
        return Err(DecodeError::BadMagic);
    }
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::Truncated { needed: HEADER_LEN, have: bytes.len() });
    }
    let version = le_u16(bytes, VERSION_AT);
    if version != FORMAT_VERSION {
        return Err(DecodeError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[BODY_LEN_AT..HEADER_LEN]);
    Ok(RawHeader {
        version,
        kind: le_u16(bytes, KIND_AT),
        params: le_u16(bytes, PARAMS_AT),
        body_len: u64::from_le_bytes(len),
    })
}

fn finish_header(raw: RawHeader, kind: ObjectKind) -> Result<Header, DecodeError> {
    let params = ParamSet::from_id(raw.params).ok_or(DecodeError::UnknownParamSet(raw.params))?;
    let expected = kind.body_len(params);
    if raw.body_len != expected {
        return Err(DecodeError::BadLength { params: params.name(), expected, found: raw.body_len });
    }
    Ok(Header { version: raw.version, kind, params, body_len: expected })
}

/// Validates the header for `kind` and the input length; returns the set and the body.
fn open(bytes: &[u8], kind: ObjectKind) -> Result<(ParamSet, &[u8]), DecodeError> {
    let raw = read_raw_header(bytes)?;
    if raw.kind != kind.id() {
        let found = match ObjectKind::from_id(raw.kind) {
            Some(k) => k.name().to_string(),
            None => format!("unknown kind id {}", raw.kind),
        };
        return Err(DecodeError::WrongKind { expected: kind.name(), found });
    }
    let header = finish_header(raw, kind)?;
    // The expected length is dictated by the parameter set, so it is small enough for
    // usize whenever the input could hold it; saturate where it is not.
    let total = usize::try_from(header.total_len()).unwrap_or(usize::MAX);
    if bytes.len() < total {
        return Err(DecodeError::Truncated { needed: total, have: bytes.len() });
    }
    if bytes.len() > total {
        return Err(DecodeError::TrailingBytes { extra: bytes.len() - total });
    }
    Ok((header.params, &bytes[HEADER_LEN..]))
}

fn write_header(out: &mut [u8], kind: ObjectKind, params: ParamSet) {
    out[..6].copy_from_slice(&MAGIC);
    out[VERSION_AT..VERSION_AT + 2].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[KIND_AT..KIND_AT + 2].copy_from_slice(&kind.id().to_le_bytes());
    out[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&params.id().to_le_bytes());
    out[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&kind.body_len(params).to_le_bytes());
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

// ---------------------------------------------------------------------------------------
// Bodies. `write_body` gets exactly `body_len` bytes; `read_body` gets exactly `body_len`
// bytes (checked by `open`).

trait Body: Sized {
    const KIND: ObjectKind;
    fn param_set(&self) -> ParamSet;
    fn write_body(&self, out: &mut [u8]);
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError>;
}

impl Body for LweCiphertext {
    const KIND: ObjectKind = ObjectKind::LweCiphertext;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn write_body(&self, out: &mut [u8]) {
        put_u32s(out, self.as_words(), lwe_word_bytes(self.params().params()));
    }
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError> {
        let p = params.params();
        let words = get_u32s(body, lwe_word_bytes(p), p.q_lwe(), 0)?;
        LweCiphertext::from_raw(params, words).map_err(invalid)
    }
}

impl Body for ExtractedLwe {
    const KIND: ObjectKind = ObjectKind::ExtractedLwe;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn write_body(&self, out: &mut [u8]) {
        put_u64s(out, self.as_words(), self.params().params().ring_coeff_bytes());
    }
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError> {
        let p = params.params();
        let words = get_u64s(body, p.ring_coeff_bytes(), p.q_ring(), 0)?;
        ExtractedLwe::from_raw(params, words).map_err(invalid)
    }
}

impl Body for SecretKey {
    const KIND: ObjectKind = ObjectKind::SecretKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn write_body(&self, out: &mut [u8]) {
        let n = self.lwe().len();
        out[..n].iter_mut().zip(self.lwe()).for_each(|(o, &x)| *o = ternary_to_byte(x));
        out[n..].iter_mut().zip(self.ring()).for_each(|(o, &x)| *o = ternary_to_byte(x));
    }
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError> {
        let p = params.params();
        // Exact-size buffers, zeroized on every early return; never reallocated.
        let mut lwe = Zeroizing::new(vec![0i8; p.n()]);
        let mut ring = Zeroizing::new(vec![0i8; p.big_n()]);
        let (lb, rb) = body.split_at(p.n());
        for (i, (d, &b)) in lwe.iter_mut().zip(lb).enumerate() {
            *d = byte_to_ternary(b, i)?;
        }
        for (i, (d, &b)) in ring.iter_mut().zip(rb).enumerate() {
            *d = byte_to_ternary(b, p.n() + i)?;
        }
        // Every coefficient is ternary and every length is right, so this cannot fail;
        // the buffers move into the key, which zeroizes them on drop.
        SecretKey::from_raw(params, std::mem::take(&mut *lwe), std::mem::take(&mut *ring)).map_err(invalid)
    }
}

impl Body for PublicKey {
    const KIND: ObjectKind = ObjectKind::PublicKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn write_body(&self, out: &mut [u8]) {
        out[..SEED_LEN].copy_from_slice(self.public_seed());
        put_u32s(&mut out[SEED_LEN..], self.b(), lwe_word_bytes(self.params().params()));
    }
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError> {
        let p = params.params();
        let b = get_u32s(&body[SEED_LEN..], lwe_word_bytes(p), p.q_lwe(), 0)?;
        PublicKey::from_raw(params, seed_of(body), b).map_err(invalid)
    }
}

impl Body for EvaluationKey {
    const KIND: ObjectKind = ObjectKind::EvaluationKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn write_body(&self, out: &mut [u8]) {
        let p = self.params().params();
        let (seed, rest) = out.split_at_mut(SEED_LEN);
        seed.copy_from_slice(self.public_seed());
        let (bsk, ksk) = rest.split_at_mut(p.bsk_b_len() * p.ring_coeff_bytes());
        put_u64s(bsk, self.bsk_b(), p.ring_coeff_bytes());
        put_u32s(ksk, self.ksk_b(), lwe_word_bytes(p));
    }
    fn read_body(params: ParamSet, body: &[u8]) -> Result<Self, DecodeError> {
        let p = params.params();
        let (bsk, ksk) = body[SEED_LEN..].split_at(p.bsk_b_len() * p.ring_coeff_bytes());
        let bsk_b = get_u64s(bsk, p.ring_coeff_bytes(), p.q_ring(), 0)?;
        let ksk_b = get_u32s(ksk, lwe_word_bytes(p), p.q_lwe(), p.bsk_b_len())?;
        EvaluationKey::from_raw(params, seed_of(body), bsk_b, ksk_b).map_err(invalid)
    }
}

fn encoded_len_of<T: Body>(x: &T) -> usize {
    // Bounded by the size of a value that already exists in memory.
    T::KIND.encoded_len(x.param_set()) as usize
}

fn encode_to_of<T: Body>(x: &T, out: &mut Vec<u8>) {
    let start = out.len();
    let len = encoded_len_of(x);
    out.reserve_exact(len);
    out.resize(start + len, 0);
    let dst = &mut out[start..];
    write_header(dst, T::KIND, x.param_set());
    x.write_body(&mut dst[HEADER_LEN..]);
}

fn decode_of<T: Body>(bytes: &[u8]) -> Result<T> {
    let (params, body) = open(bytes, T::KIND)?;
    Ok(T::read_body(params, body)?)
}

/// The largest encoding of `kind` over every production set: the cap a serde sequence
/// may grow to before it is rejected.
fn max_encoded_len(kind: ObjectKind) -> usize {
    ParamSet::ALL.iter().map(|&p| kind.encoded_len(p)).max().unwrap_or(0).try_into().unwrap_or(usize::MAX)
}

struct BytesVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Body> Visitor<'de> for BytesVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Lux FHE binary encoding of a {} (bytes)", T::KIND)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        decode_of(v).map_err(E::custom)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<T, E> {
        // The buffer may hold a secret key: wipe it once decoded.
        let v = Zeroizing::new(v);
        decode_of(&v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let cap = max_encoded_len(T::KIND);
        // Secret keys are small: take the whole cap up front so the buffer never
        // reallocates (which would leave unwiped copies). Otherwise trust the hint only
        // up to the cap.
        let initial = if T::KIND == ObjectKind::SecretKey { cap } else { seq.size_hint().unwrap_or(0).min(cap) };
        let mut buf = Zeroizing::new(Vec::with_capacity(initial));
        while let Some(b) = seq.next_element::<u8>()? {
            if buf.len() == cap {
                return Err(de::Error::custom(DecodeError::Invalid(format!(
                    "byte sequence longer than any {} encoding ({cap} bytes)",
                    T::KIND
                ))));
            }
            buf.push(b);
        }
        decode_of(&buf).map_err(de::Error::custom)
    }
}

macro_rules! impl_format {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            const KIND: ObjectKind = <$t as Body>::KIND;
            fn encoded_len(&self) -> usize {
                encoded_len_of(self)
            }
            fn encode_to(&self, out: &mut Vec<u8>) {
                encode_to_of(self, out)
            }
        }

        impl Decode for $t {
            fn decode(bytes: &[u8]) -> Result<Self> {
                decode_of(bytes)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_bytes(BytesVisitor::<$t>(std::marker::PhantomData))
            }
        }
    )*};
}

impl_format!(LweCiphertext, ExtractedLwe, SecretKey, PublicKey, EvaluationKey);

macro_rules! impl_serialize_public {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(&self.encode())
            }
        }
    )*};
}

impl_serialize_public!(LweCiphertext, ExtractedLwe, PublicKey, EvaluationKey);

impl Serialize for SecretKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.encode_zeroizing())
    }
}

impl SecretKey {
    /// The encoding in a buffer that is wiped when dropped.
    pub fn encode_zeroizing(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// SplitMix64: fast deterministic test data (bias of `% bound` is irrelevant here).
    struct Mix(u64);
    impl Mix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, bound: u64) -> u64 {
            self.next() % bound
        }
        fn seed(&mut self) -> [u8; 32] {
            let mut s = [0u8; 32];
            s.chunks_exact_mut(8).for_each(|c| c.copy_from_slice(&self.next().to_le_bytes()));
            s
        }
        fn lwe_words(&mut self, p: &Params, len: usize) -> Vec<u32> {
            (0..len).map(|_| self.below(p.q_lwe()) as u32).collect()
        }
        fn ring_words(&mut self, p: &Params, len: usize) -> Vec<u64> {
            (0..len).map(|_| self.below(p.q_ring())).collect()
        }
        fn ternary(&mut self, len: usize) -> Vec<i8> {
            (0..len).map(|_| self.below(3) as i8 - 1).collect()
        }
    }

    fn ct(set: ParamSet, seed: u64) -> LweCiphertext {
        let p = set.params();
        LweCiphertext::from_raw(set, Mix(seed).lwe_words(p, p.n() + 1)).unwrap()
    }
    fn ext(set: ParamSet, seed: u64) -> ExtractedLwe {
        let p = set.params();
        ExtractedLwe::from_raw(set, Mix(seed).ring_words(p, p.big_n() + 1)).unwrap()
    }
    fn sk(set: ParamSet, seed: u64) -> SecretKey {
        let p = set.params();
        let mut m = Mix(seed);
        SecretKey::from_raw(set, m.ternary(p.n()), m.ternary(p.big_n())).unwrap()
    }
    fn pk(set: ParamSet, seed: u64) -> PublicKey {
        let p = set.params();
        let mut m = Mix(seed);
        let s = m.seed();
        PublicKey::from_raw(set, s, m.lwe_words(p, p.pk_samples)).unwrap()
    }
    fn ek(set: ParamSet, seed: u64) -> EvaluationKey {
        let p = set.params();
        let mut m = Mix(seed);
        let s = m.seed();
        let bsk = m.ring_words(p, p.bsk_b_len());
        let ksk = m.lwe_words(p, p.ksk_samples());
        EvaluationKey::from_raw(set, s, bsk, ksk).unwrap()
    }

    /// Encodings of the four small kinds on every set.
    fn small_samples() -> &'static [(ObjectKind, ParamSet, Vec<u8>)] {
        static S: OnceLock<Vec<(ObjectKind, ParamSet, Vec<u8>)>> = OnceLock::new();
        S.get_or_init(|| {
            let mut v = Vec::new();
            for (i, set) in ParamSet::ALL.into_iter().enumerate() {
                let i = i as u64 * 10;
                v.push((ObjectKind::LweCiphertext, set, ct(set, i).encode()));
                v.push((ObjectKind::ExtractedLwe, set, ext(set, i + 1).encode()));
                v.push((ObjectKind::SecretKey, set, sk(set, i + 2).encode()));
                v.push((ObjectKind::PublicKey, set, pk(set, i + 3).encode()));
            }
            v
        })
    }

    /// The cached encoding of `kind` on `set` (a fresh copy to mutate).
    fn cached(kind: ObjectKind, set: ParamSet) -> Vec<u8> {
        small_samples().iter().find(|(k, s, _)| (*k, *s) == (kind, set)).map(|(_, _, b)| b.clone()).unwrap()
    }

    /// The PN10QP27 evaluation key's encoding (36 MB), shared by the proptests.
    fn ek_bytes() -> &'static [u8] {
        static E: OnceLock<Vec<u8>> = OnceLock::new();
        E.get_or_init(|| ek(ParamSet::PN10QP27, 99).encode())
    }

    /// Decodes `bytes` as `kind`, keeping only the error.
    fn decode_as(kind: ObjectKind, bytes: &[u8]) -> Result<()> {
        match kind {
            ObjectKind::LweCiphertext => LweCiphertext::decode(bytes).map(drop),
            ObjectKind::ExtractedLwe => ExtractedLwe::decode(bytes).map(drop),
            ObjectKind::SecretKey => SecretKey::decode(bytes).map(drop),
            ObjectKind::PublicKey => PublicKey::decode(bytes).map(drop),
            ObjectKind::EvaluationKey => EvaluationKey::decode(bytes).map(drop),
        }
    }

    fn decode_err(kind: ObjectKind, bytes: &[u8]) -> DecodeError {
        match decode_as(kind, bytes) {
            Err(Error::Decode(e)) => e,
            Err(e) => panic!("{kind}: not a decode error: {e}"),
            Ok(()) => panic!("{kind}: decoded"),
        }
    }

    fn round_trip<T: Decode + PartialEq + fmt::Debug>(x: &T) {
        let bytes = x.encode();
        assert_eq!(bytes.len(), x.encoded_len());
        assert_eq!(bytes.capacity(), bytes.len(), "encode must pre-size exactly");
        let back = T::decode(&bytes).unwrap();
        assert_eq!(&back, x);
        assert_eq!(back.encode(), bytes, "encoding is canonical");
        let h = peek_header(&bytes).unwrap();
        assert_eq!(h.kind, T::KIND);
        assert_eq!(h.total_len(), bytes.len() as u64);
    }

    #[test]
    fn every_small_kind_round_trips_on_every_set() {
        for set in ParamSet::ALL {
            for seed in 0..3 {
                round_trip(&ct(set, seed));
                round_trip(&ext(set, seed));
                round_trip(&sk(set, seed));
                round_trip(&pk(set, seed));
            }
            round_trip(&LweCiphertext::trivial(set, 1 << 13));
        }
    }

    #[test]
    fn evaluation_keys_round_trip_on_every_set() {
        for set in ParamSet::ALL {
            let k = ek(set, set.id() as u64);
            let bytes = k.encode();
            assert_eq!(bytes.len() as u64, ObjectKind::EvaluationKey.encoded_len(set));
            let back = EvaluationKey::decode(&bytes).unwrap();
            assert_eq!(back, k, "{set}");
            drop(k);
            assert_eq!(back.encode(), bytes, "{set}");
        }
    }

    #[test]
    fn header_and_body_layout_is_pinned() {
        let set = ParamSet::PN10QP27;
        let bytes = LweCiphertext::trivial(set, 0x2000).encode();
        let mut want = b"LUXFHE".to_vec();
        want.extend([1, 0, 1, 0, 1, 0]);
        want.extend(1114u64.to_le_bytes());
        assert_eq!(&bytes[..HEADER_LEN], &want[..]);
        assert!(bytes[HEADER_LEN..HEADER_LEN + 2 * 556].iter().all(|&b| b == 0));
        assert_eq!(&bytes[HEADER_LEN + 2 * 556..], &[0x00, 0x20]);

        let k = sk(set, 5);
        let b = k.encode();
        for (i, &x) in k.lwe().iter().chain(k.ring()).enumerate() {
            assert_eq!(b[HEADER_LEN + i], [0u8, 1, 2][((x + 3) % 3) as usize], "0 -> 0, +1 -> 1, -1 -> 2");
        }
        let e = ext(ParamSet::PN11QP54, 3);
        let b = e.encode();
        assert_eq!(&b[8..12], &[2, 0, 2, 0]);
        assert_eq!(&b[HEADER_LEN..HEADER_LEN + 8], &e.as_words()[0].to_le_bytes());
    }

    /// The sizes `docs/FORMAT.md` states.
    #[test]
    fn body_lengths_match_the_documented_table() {
        use ObjectKind::*;
        let table: [(ParamSet, [u64; 5]); 3] = [
            (ParamSet::PN10QP27, [1_114, 4_100, 1_580, 10_898, 36_628_512]),
            (ParamSet::PN11QP54, [1_114, 16_392, 2_604, 10_898, 182_571_040]),
            (ParamSet::PN10QP25Q, [1_198, 4_100, 1_622, 11_694, 49_178_656]),
        ];
        for (set, lens) in table {
            for (kind, len) in [LweCiphertext, ExtractedLwe, SecretKey, PublicKey, EvaluationKey].into_iter().zip(lens)
            {
                assert_eq!(kind.body_len(set), len, "{kind} {set}");
            }
        }
        for kind in ObjectKind::ALL {
            assert_eq!(ObjectKind::from_id(kind.id()), Some(kind));
        }
        assert_eq!(ObjectKind::from_id(0), None);
        assert_eq!(ObjectKind::from_id(6), None);
    }

    #[test]
    fn every_truncation_is_reported_as_truncated() {
        for (kind, set, bytes) in small_samples() {
            for len in 0..bytes.len() {
                match decode_err(*kind, &bytes[..len]) {
                    DecodeError::Truncated { needed, have } => {
                        assert_eq!(have, len);
                        assert_eq!(needed, if len < HEADER_LEN { HEADER_LEN } else { bytes.len() }, "{kind} {set}");
                    }
                    e => panic!("{kind} {set} at {len}: {e}"),
                }
            }
        }
    }

    #[test]
    fn wrong_kind_unknown_set_bad_magic_and_length_field() {
        for (kind, set, bytes) in small_samples() {
            let mut b = bytes.clone();
            for other in (0u16..=8).chain([0x7FFF, 0xFFFF]) {
                if other == kind.id() {
                    continue;
                }
                b[KIND_AT..KIND_AT + 2].copy_from_slice(&other.to_le_bytes());
                assert!(matches!(decode_err(*kind, &b), DecodeError::WrongKind { .. }), "{kind} {set} as {other}");
            }
            let mut b = bytes.clone();
            for other in ParamSet::ALL.into_iter().filter(|s| s != set) {
                b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&other.id().to_le_bytes());
                if kind.body_len(other) != kind.body_len(*set) {
                    assert!(matches!(decode_err(*kind, &b), DecodeError::BadLength { .. }), "{kind} {set}");
                } else {
                    // Same layout (e.g. PN10QP27 and PN11QP54 share the LWE side): the
                    // body is read under the other set's bounds and is labelled with it.
                    match decode_as(*kind, &b) {
                        Ok(()) => assert_eq!(peek_header(&b).unwrap().params, other),
                        Err(Error::Decode(DecodeError::OutOfRange { .. })) => {}
                        Err(e) => panic!("{kind} {set} as {other}: {e}"),
                    }
                }
            }
            for i in 0..MAGIC.len() {
                for bit in 0..8 {
                    let mut b = bytes.clone();
                    b[i] ^= 1 << bit;
                    assert_eq!(decode_err(*kind, &b), DecodeError::BadMagic);
                    assert!(matches!(peek_header(&b), Err(Error::Decode(DecodeError::BadMagic))));
                }
            }
            for delta in [1i64, -1, 1 << 32] {
                let mut b = bytes.clone();
                let len = kind.body_len(*set) as i64 + delta;
                b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&(len as u64).to_le_bytes());
                assert_eq!(
                    decode_err(*kind, &b),
                    DecodeError::BadLength { params: set.name(), expected: kind.body_len(*set), found: len as u64 }
                );
            }
            let h = peek_header(bytes).unwrap();
            assert_eq!((h.kind, h.params, h.version), (*kind, *set, FORMAT_VERSION));
        }
    }

    #[test]
    fn concatenated_objects_split_by_their_headers() {
        let all: Vec<u8> = small_samples().iter().flat_map(|(_, _, b)| b.iter().copied()).collect();
        let mut rest = &all[..];
        for (kind, set, bytes) in small_samples() {
            let h = peek_header(rest).unwrap();
            assert_eq!((h.kind, h.params), (*kind, *set));
            let (one, tail) = rest.split_at(h.total_len() as usize);
            assert_eq!(one, &bytes[..]);
            decode_as(*kind, one).unwrap();
            rest = tail;
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn serde_json_round_trips() {
        for set in ParamSet::ALL {
            let c = ct(set, 7);
            let json = serde_json::to_string(&c).unwrap();
            assert!(json.starts_with("[76,85,88,70,72,69,"), "bytes as a JSON array: {}", &json[..40]);
            assert_eq!(serde_json::from_str::<LweCiphertext>(&json).unwrap(), c);
            let s = sk(set, 8);
            assert_eq!(serde_json::from_str::<SecretKey>(&serde_json::to_string(&s).unwrap()).unwrap(), s);
            let e = ext(set, 9);
            assert_eq!(serde_json::from_slice::<ExtractedLwe>(&serde_json::to_vec(&e).unwrap()).unwrap(), e);
            let p = pk(set, 10);
            assert_eq!(serde_json::from_str::<PublicKey>(&serde_json::to_string(&p).unwrap()).unwrap(), p);
        }
        // The wrong kind, garbage, and a sequence longer than any encoding are errors.
        let json = serde_json::to_string(&ct(ParamSet::PN10QP27, 1)).unwrap();
        let err = serde_json::from_str::<PublicKey>(&json).unwrap_err().to_string();
        assert!(err.contains("wrong object kind"), "{err}");
        assert!(serde_json::from_str::<LweCiphertext>("[1,2,3]").is_err());
        assert!(serde_json::from_str::<LweCiphertext>("\"LUXFHE\"").is_err());
        assert!(serde_json::from_str::<LweCiphertext>("[256]").is_err());
        let long = format!("[{}0]", "0,".repeat(2 * 1198));
        let err = serde_json::from_str::<LweCiphertext>(&long).unwrap_err().to_string();
        assert!(err.contains("longer than any"), "{err}");
    }

    #[test]
    fn serde_visitor_accepts_bytes_and_byte_buffers() {
        use serde::de::value::{BorrowedBytesDeserializer, BytesDeserializer, Error as VErr};
        let c = ct(ParamSet::PN10QP25Q, 3);
        let bytes = c.encode();
        assert_eq!(LweCiphertext::deserialize(BytesDeserializer::<VErr>::new(&bytes)).unwrap(), c);
        assert_eq!(LweCiphertext::deserialize(BorrowedBytesDeserializer::<VErr>::new(&bytes)).unwrap(), c);
        let v = BytesVisitor::<LweCiphertext>(std::marker::PhantomData);
        assert_eq!(v.visit_byte_buf::<VErr>(bytes.clone()).unwrap(), c);
        let s = sk(ParamSet::PN10QP25Q, 4);
        assert_eq!(SecretKey::deserialize(BytesDeserializer::<VErr>::new(&s.encode_zeroizing())).unwrap(), s);
        assert!(PublicKey::deserialize(BytesDeserializer::<VErr>::new(&bytes)).is_err());
    }

    #[test]
    fn evaluation_key_words_out_of_range_are_located() {
        let p = ParamSet::PN10QP27.params();
        let mut b = ek_bytes().to_vec();
        let bsk_at = HEADER_LEN + SEED_LEN;
        let ksk_at = bsk_at + 4 * p.bsk_b_len();
        for (i, value) in [(0usize, p.q_ring()), (p.bsk_b_len() / 2, u32::MAX as u64), (p.bsk_b_len() - 1, p.q_ring())]
        {
            let at = bsk_at + 4 * i;
            let old: [u8; 4] = b[at..at + 4].try_into().unwrap();
            b[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes());
            assert_eq!(
                decode_err(ObjectKind::EvaluationKey, &b),
                DecodeError::OutOfRange { index: i, value, bound: p.q_ring() }
            );
            b[at..at + 4].copy_from_slice(&old);
        }
        for (j, value) in [(0usize, 1u64 << 15), (p.ksk_samples() - 1, 0xFFFF)] {
            let at = ksk_at + 2 * j;
            let old: [u8; 2] = b[at..at + 2].try_into().unwrap();
            b[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
            assert_eq!(
                decode_err(ObjectKind::EvaluationKey, &b),
                DecodeError::OutOfRange { index: p.bsk_b_len() + j, value, bound: 1 << 15 }
            );
            b[at..at + 2].copy_from_slice(&old);
        }
        b.push(0);
        assert_eq!(decode_err(ObjectKind::EvaluationKey, &b), DecodeError::TrailingBytes { extra: 1 });
        b.pop();
        b[KIND_AT] = ObjectKind::PublicKey.id() as u8;
        assert!(matches!(decode_err(ObjectKind::EvaluationKey, &b), DecodeError::WrongKind { .. }));
    }

    #[test]
    fn ring_words_of_eight_bytes_are_range_checked() {
        let e = ext(ParamSet::PN11QP54, 1);
        let q = ParamSet::PN11QP54.params().q_ring();
        for (i, value) in [(0usize, q), (2048, u64::MAX), (1000, q + 1)] {
            let mut b = e.encode();
            let at = HEADER_LEN + 8 * i;
            b[at..at + 8].copy_from_slice(&value.to_le_bytes());
            assert_eq!(decode_err(ObjectKind::ExtractedLwe, &b), DecodeError::OutOfRange { index: i, value, bound: q });
        }
    }

    fn kind_strategy() -> impl Strategy<Value = ObjectKind> {
        prop::sample::select(ObjectKind::ALL.to_vec())
    }

    fn sample_strategy() -> impl Strategy<Value = usize> {
        0..small_samples().len()
    }

    proptest! {
        #[test]
        fn random_bytes_never_decode(kind in kind_strategy(), bytes in prop::collection::vec(any::<u8>(), 0..128)) {
            prop_assert!(decode_as(kind, &bytes).is_err());
            let mut m = MAGIC.to_vec();
            m.extend(&bytes);
            prop_assert!(decode_as(kind, &m).is_err());
            let _ = peek_header(&m);
        }

        #[test]
        fn random_headers_never_panic_nor_allocate(
            kind in kind_strategy(),
            version in prop_oneof![Just(1u16), any::<u16>()],
            kind_id in prop_oneof![1u16..=5, any::<u16>()],
            set_id in prop_oneof![1u16..=3, any::<u16>()],
            body_len in prop_oneof![Just(u64::MAX), any::<u64>(), 0u64..20_000],
            tail in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut b = MAGIC.to_vec();
            b.extend(version.to_le_bytes());
            b.extend(kind_id.to_le_bytes());
            b.extend(set_id.to_le_bytes());
            b.extend(body_len.to_le_bytes());
            b.extend(&tail);
            let r = decode_as(kind, &b);
            prop_assert!(r.is_err());
            if version != FORMAT_VERSION {
                let ok = matches!(
                    r,
                    Err(Error::Decode(DecodeError::UnsupportedVersion { found, supported: 1 })) if found == version
                );
                prop_assert!(ok, "{:?}", r);
            } else if kind_id != kind.id() {
                let ok = matches!(r, Err(Error::Decode(DecodeError::WrongKind { .. })));
                prop_assert!(ok, "{:?}", r);
            } else if ParamSet::from_id(set_id).is_none() {
                let ok = matches!(r, Err(Error::Decode(DecodeError::UnknownParamSet(id))) if id == set_id);
                prop_assert!(ok, "{:?}", r);
            }
        }

        #[test]
        fn valid_headers_with_random_bodies_never_panic(i in sample_strategy(), seed in any::<u64>()) {
            let (kind, set, bytes) = &small_samples()[i];
            let mut b = bytes[..HEADER_LEN].to_vec();
            let mut m = Mix(seed);
            b.extend((0..kind.body_len(*set)).map(|_| m.next() as u8));
            let _ = decode_as(*kind, &b);
        }

        #[test]
        fn other_versions_are_unsupported(i in sample_strategy(), version in any::<u16>()) {
            prop_assume!(version != FORMAT_VERSION);
            let (kind, _, bytes) = &small_samples()[i];
            let mut b = bytes.clone();
            b[VERSION_AT..VERSION_AT + 2].copy_from_slice(&version.to_le_bytes());
            let want = DecodeError::UnsupportedVersion { found: version, supported: 1 };
            prop_assert_eq!(decode_err(*kind, &b), want);
            prop_assert!(peek_header(&b).is_err());
        }

        #[test]
        fn unknown_param_sets_are_named(i in sample_strategy(), id in any::<u16>()) {
            prop_assume!(ParamSet::from_id(id).is_none());
            let (kind, _, bytes) = &small_samples()[i];
            let mut b = bytes.clone();
            b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&id.to_le_bytes());
            prop_assert_eq!(decode_err(*kind, &b), DecodeError::UnknownParamSet(id));
        }

        #[test]
        fn appended_bytes_are_trailing(
            i in sample_strategy(),
            extra in prop::collection::vec(any::<u8>(), 1..40),
        ) {
            let (kind, _, bytes) = &small_samples()[i];
            let mut b = bytes.clone();
            b.extend(&extra);
            prop_assert_eq!(decode_err(*kind, &b), DecodeError::TrailingBytes { extra: extra.len() });
        }

        #[test]
        fn lwe_words_out_of_range_are_located(
            set in prop::sample::select(ParamSet::ALL.to_vec()),
            idx in any::<prop::sample::Index>(),
            value in (1u32 << 15)..=0xFFFF,
            seed in any::<u64>(),
        ) {
            let p = set.params();
            let i = idx.index(p.n() + 1);
            let mut b = ct(set, seed).encode();
            let at = HEADER_LEN + 2 * i;
            b[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
            let want = DecodeError::OutOfRange { index: i, value: value as u64, bound: 1 << 15 };
            prop_assert_eq!(decode_err(ObjectKind::LweCiphertext, &b), want);
            let mut b = cached(ObjectKind::PublicKey, set);
            let j = idx.index(p.pk_samples);
            let at = HEADER_LEN + SEED_LEN + 2 * j;
            b[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
            let want = DecodeError::OutOfRange { index: j, value: value as u64, bound: 1 << 15 };
            prop_assert_eq!(decode_err(ObjectKind::PublicKey, &b), want);
        }

        #[test]
        fn ring_words_out_of_range_are_located(
            set in prop::sample::select(vec![ParamSet::PN10QP27, ParamSet::PN10QP25Q]),
            idx in any::<prop::sample::Index>(),
            hi in any::<u32>(),
        ) {
            let p = set.params();
            let value = p.q_ring() + hi as u64 % ((1u64 << 32) - p.q_ring());
            let i = idx.index(p.big_n() + 1);
            let mut b = ext(set, hi as u64).encode();
            let at = HEADER_LEN + 4 * i;
            b[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes());
            let want = DecodeError::OutOfRange { index: i, value, bound: p.q_ring() };
            prop_assert_eq!(decode_err(ObjectKind::ExtractedLwe, &b), want);
        }

        #[test]
        fn bad_secret_bytes_are_rejected(
            set in prop::sample::select(ParamSet::ALL.to_vec()),
            idx in any::<prop::sample::Index>(),
            value in 3u8..,
        ) {
            let p = set.params();
            let i = idx.index(p.n() + p.big_n());
            let mut b = sk(set, i as u64).encode();
            b[HEADER_LEN + i] = value;
            let want = DecodeError::OutOfRange { index: i, value: value as u64, bound: 3 };
            prop_assert_eq!(decode_err(ObjectKind::SecretKey, &b), want);
        }

        #[test]
        fn truncated_evaluation_keys_are_truncated(
            len in prop_oneof![0usize..64, 0usize..36_628_532, 36_628_500usize..36_628_532],
        ) {
            let b = ek_bytes();
            prop_assert_eq!(b.len(), 36_628_532);
            let needed = if len < HEADER_LEN { HEADER_LEN } else { b.len() };
            let want = DecodeError::Truncated { needed, have: len };
            prop_assert_eq!(decode_err(ObjectKind::EvaluationKey, &b[..len]), want);
        }
    }
}
