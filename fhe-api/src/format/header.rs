//! The 20-byte header every object opens with, the object kinds, and the checks a
//! reader runs on it before any body is touched (`docs/FORMAT.md`, "Header").

use std::fmt;

use super::tfhe::lwe_word_bytes;
use crate::error::{DecodeError, Result};
use crate::params::ParamSet;

/// The six magic bytes that open every object.
pub const MAGIC: [u8; 6] = *b"LUXFHE";
/// The format version this build writes, and the only one it reads.
pub const FORMAT_VERSION: u16 = 1;
/// Bytes in the header.
pub const HEADER_LEN: usize = 20;
/// Bytes of the public seed that opens public- and evaluation-key bodies.
pub const SEED_LEN: usize = 32;

pub(super) const VERSION_AT: usize = 6;
pub(super) const KIND_AT: usize = 8;
pub(super) const PARAMS_AT: usize = 10;
pub(super) const BODY_LEN_AT: usize = 12;

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
pub(super) fn open(bytes: &[u8], kind: ObjectKind) -> Result<(ParamSet, &[u8]), DecodeError> {
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

pub(super) fn write_header(out: &mut [u8], kind: ObjectKind, params: ParamSet) {
    out[..6].copy_from_slice(&MAGIC);
    out[VERSION_AT..VERSION_AT + 2].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[KIND_AT..KIND_AT + 2].copy_from_slice(&kind.id().to_le_bytes());
    out[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&params.id().to_le_bytes());
    out[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&kind.body_len(params).to_le_bytes());
}
