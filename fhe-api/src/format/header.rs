//! The 20-byte header every object opens with, both schemes' object kinds, and the
//! checks a reader runs before any body buffer exists (`docs/FORMAT.md`, "Header" and
//! "Reading a CKKS object").

use std::fmt;

use super::tfhe::lwe_word_bytes;
use crate::ckks;
use crate::ckks::params::Preset;
use crate::error::{DecodeError, Result};
use crate::tfhe::params::ParamSet;

/// The six magic bytes that open every object.
pub const MAGIC: [u8; 6] = *b"LUXFHE";
/// The format version this build writes, and the only one it reads. Version 2 added the
/// key tag to every bit-scheme body; version 1 objects are refused
/// ([`DecodeError::UnsupportedVersion`]).
pub const FORMAT_VERSION: u16 = 2;
/// Bytes in the header.
pub const HEADER_LEN: usize = 20;
/// Bytes of the key tag that opens every bit-scheme body ([`crate::tag::KeyTag`]).
pub const KEY_TAG_LEN: usize = crate::tag::KEY_TAG_LEN;
/// Bytes of the public seed in public-, evaluation- and switching-key bodies.
pub const SEED_LEN: usize = 32;
/// Bytes of the prefix that follows the key tag of a CKKS ciphertext or plaintext body:
/// the level (u32) and the scale (f64 bits). A u32 level puts the scale and every word at
/// an offset that is a multiple of 8 from the start of the object.
pub const CKKS_LEVEL_PREFIX_LEN: usize = 12;
/// Bytes of the prefix that opens a switching-key body: the kind tag (u32) and the
/// Galois element (u64), before the seed.
pub const CKKS_SWITCH_PREFIX_LEN: usize = 12;
/// Bytes per CKKS word (one residue below a prime of at most 60 bits).
pub const CKKS_WORD_LEN: usize = 8;

pub(super) const VERSION_AT: usize = 6;
pub(super) const KIND_AT: usize = 8;
pub(super) const PARAMS_AT: usize = 10;
pub(super) const BODY_LEN_AT: usize = 12;

/// The kind of bit-scheme object a header announces (CKKS kinds are [`CkksObjectKind`],
/// whose ids follow these). The numeric ids are part of the format.
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

    /// The exact body length of this kind under `params`, in bytes: the key tag, then
    /// the kind's fields.
    pub const fn body_len(self, params: ParamSet) -> u64 {
        let p = params.params();
        let lwe = lwe_word_bytes(p) as u64;
        let ring = p.ring_coeff_bytes() as u64;
        KEY_TAG_LEN as u64
            + match self {
                ObjectKind::LweCiphertext => (p.n() as u64 + 1) * lwe,
                ObjectKind::ExtractedLwe => (p.big_n() as u64 + 1) * ring,
                ObjectKind::SecretKey => p.n() as u64 + p.big_n() as u64,
                ObjectKind::PublicKey => SEED_LEN as u64 + p.pk_samples as u64 * lwe,
                ObjectKind::EvaluationKey => {
                    SEED_LEN as u64 + p.bsk_b_len() as u64 * ring + p.ksk_samples() as u64 * lwe
                }
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
        expected: "a bit-scheme object kind (ids 1..=5)",
        found: kind_name(raw.kind),
    })?;
    Ok(finish_header(raw, kind)?)
}

/// What a kind id names, for [`DecodeError::WrongKind`]: a CKKS kind says which reader
/// takes it, since a caller holding one scheme's reader may have the other's object.
fn kind_name(id: u16) -> String {
    match (ObjectKind::from_id(id), CkksObjectKind::from_id(id)) {
        (Some(k), _) => k.name().to_string(),
        (None, Some(k)) => format!("{} (a CKKS object: see peek_ckks_header)", k.name()),
        (None, None) => match ComposedKind::from_id(id) {
            Some(k) => format!("{} (a composed object of other objects' encodings)", k.name()),
            None => format!("unknown kind id {id}"),
        },
    }
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
        return Err(DecodeError::WrongKind { expected: kind.name(), found: kind_name(raw.kind) });
    }
    let header = finish_header(raw, kind)?;
    Ok((header.params, body_of(bytes, header.total_len())?))
}

/// The body, once the input is exactly `total` bytes long.
fn body_of(bytes: &[u8], total: u64) -> Result<&[u8], DecodeError> {
    // The expected length is dictated by the parameter set, so it is small enough for
    // usize whenever the input could hold it; saturate where it is not.
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    if bytes.len() < total {
        return Err(DecodeError::Truncated { needed: total, have: bytes.len() });
    }
    if bytes.len() > total {
        return Err(DecodeError::TrailingBytes { extra: bytes.len() - total });
    }
    Ok(&bytes[HEADER_LEN..])
}

pub(super) fn write_header(out: &mut [u8], kind: ObjectKind, params: ParamSet) {
    write_raw_header(out, kind.id(), params.id(), kind.body_len(params));
}

fn write_raw_header(out: &mut [u8], kind: u16, params: u16, body_len: u64) {
    out[..6].copy_from_slice(&MAGIC);
    out[VERSION_AT..VERSION_AT + 2].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[KIND_AT..KIND_AT + 2].copy_from_slice(&kind.to_le_bytes());
    out[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&params.to_le_bytes());
    out[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&body_len.to_le_bytes());
}

// ---------------------------------------------------------------------------------------
// CKKS. The same 20 bytes; the kind ids continue the bit scheme's and the parameter id
// is a `Preset::id` (101..), so the two schemes share one id space and each reader
// refuses the other's objects by kind. A ciphertext's or plaintext's body length also
// depends on its level, which the body's first field holds.

/// The kind of a CKKS object. The numeric ids are part of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CkksObjectKind {
    Ciphertext,
    Plaintext,
    SecretKey,
    PublicKey,
    SwitchingKey,
}

impl CkksObjectKind {
    /// Every kind, in id order.
    pub const ALL: [CkksObjectKind; 5] = [
        CkksObjectKind::Ciphertext,
        CkksObjectKind::Plaintext,
        CkksObjectKind::SecretKey,
        CkksObjectKind::PublicKey,
        CkksObjectKind::SwitchingKey,
    ];

    /// The id written into the header.
    pub const fn id(self) -> u16 {
        match self {
            CkksObjectKind::Ciphertext => 6,
            CkksObjectKind::Plaintext => 7,
            CkksObjectKind::SecretKey => 8,
            CkksObjectKind::PublicKey => 9,
            CkksObjectKind::SwitchingKey => 10,
        }
    }

    /// Inverse of [`CkksObjectKind::id`].
    pub const fn from_id(id: u16) -> Option<CkksObjectKind> {
        match id {
            6 => Some(CkksObjectKind::Ciphertext),
            7 => Some(CkksObjectKind::Plaintext),
            8 => Some(CkksObjectKind::SecretKey),
            9 => Some(CkksObjectKind::PublicKey),
            10 => Some(CkksObjectKind::SwitchingKey),
            _ => None,
        }
    }

    /// The Rust type name of the kind.
    pub const fn name(self) -> &'static str {
        match self {
            CkksObjectKind::Ciphertext => "HostCiphertext",
            CkksObjectKind::Plaintext => "Plaintext",
            CkksObjectKind::SecretKey => "ckks::SecretKey",
            CkksObjectKind::PublicKey => "ckks::PublicKey",
            CkksObjectKind::SwitchingKey => "SwitchingKey",
        }
    }

    /// Whether the body opens with a level, on which its length then depends
    /// (ciphertexts and plaintexts). Keys live at every level and have one length.
    pub const fn is_leveled(self) -> bool {
        matches!(self, CkksObjectKind::Ciphertext | CkksObjectKind::Plaintext)
    }

    /// The exact body length of this kind under `preset`: at `level` for a leveled kind
    /// (`None` above the preset's top level); keys ignore `level`.
    pub fn body_len(self, preset: Preset, level: usize) -> Option<u64> {
        let p = preset.params();
        let limb = (p.n() * CKKS_WORD_LEN) as u64;
        let len = KEY_TAG_LEN as u64
            + match self {
                CkksObjectKind::Ciphertext | CkksObjectKind::Plaintext => {
                    if level > p.max_level() {
                        return None;
                    }
                    let polys = if self == CkksObjectKind::Ciphertext { 2 } else { 1 };
                    CKKS_LEVEL_PREFIX_LEN as u64 + polys * (level as u64 + 1) * limb
                }
                CkksObjectKind::SecretKey => p.n() as u64,
                CkksObjectKind::PublicKey => SEED_LEN as u64 + ckks::PublicKey::limbs(p) as u64 * limb,
                CkksObjectKind::SwitchingKey => {
                    let digits = p.digits(p.max_level()).len() as u64;
                    let qp = (p.q().len() + p.p().len()) as u64;
                    (CKKS_SWITCH_PREFIX_LEN + SEED_LEN) as u64 + digits * qp * limb
                }
            };
        Some(len)
    }

    /// Header plus body ([`CkksObjectKind::body_len`]).
    pub fn encoded_len(self, preset: Preset, level: usize) -> Option<u64> {
        self.body_len(preset, level).map(|b| HEADER_LEN as u64 + b)
    }

    /// The level whose body length is `body_len`, if there is one (leveled kinds only).
    fn level_of_len(self, preset: Preset, body_len: u64) -> Option<usize> {
        if !self.is_leveled() {
            return None;
        }
        let per_level = self.body_len(preset, 0)? - (KEY_TAG_LEN + CKKS_LEVEL_PREFIX_LEN) as u64;
        let words = body_len.checked_sub((KEY_TAG_LEN + CKKS_LEVEL_PREFIX_LEN) as u64)?;
        if words == 0 || words % per_level != 0 {
            return None;
        }
        let level = words / per_level - 1;
        (level <= preset.params().max_level() as u64).then_some(level as usize)
    }
}

impl fmt::Display for CkksObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated CKKS header: what [`peek_ckks_header`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CkksHeader {
    pub version: u16,
    pub kind: CkksObjectKind,
    pub preset: Preset,
    /// For a ciphertext or plaintext, the level its body length implies (decoding checks
    /// that the body's own level field agrees); `None` for keys.
    pub level: Option<usize>,
    /// The body length: one the kind and preset allow.
    pub body_len: u64,
}

impl CkksHeader {
    /// Header plus body: where the next object starts in a concatenation of objects.
    pub fn total_len(&self) -> u64 {
        HEADER_LEN as u64 + self.body_len
    }
}

/// [`peek_header`] for CKKS objects: magic, version, kind, preset and a body length the
/// kind and preset allow (for a ciphertext or plaintext, the length at some level up to
/// the preset's top), without looking at the body.
pub fn peek_ckks_header(bytes: &[u8]) -> Result<CkksHeader> {
    let raw = read_raw_header(bytes)?;
    let kind = CkksObjectKind::from_id(raw.kind).ok_or_else(|| DecodeError::WrongKind {
        expected: "a CKKS object kind (ids 6..=10)",
        found: kind_name(raw.kind),
    })?;
    let preset = Preset::from_id(raw.params).ok_or(DecodeError::UnknownParamSet(raw.params))?;
    let level = if kind.is_leveled() {
        let level = kind.level_of_len(preset, raw.body_len).ok_or_else(|| {
            DecodeError::Invalid(format!(
                "length field says {}: no {kind} under {preset} has that body length",
                raw.body_len
            ))
        })?;
        Some(level)
    } else {
        check_len(preset, kind, 0, raw.body_len)?;
        None
    };
    Ok(CkksHeader { version: raw.version, kind, preset, level, body_len: raw.body_len })
}

fn check_len(preset: Preset, kind: CkksObjectKind, level: usize, found: u64) -> Result<u64, DecodeError> {
    // `level` is at most the top level here, so the length exists.
    let expected = kind.body_len(preset, level).unwrap_or(u64::MAX);
    if found != expected {
        return Err(DecodeError::BadLength { params: preset.name(), expected, found });
    }
    Ok(expected)
}

/// Validates a CKKS header for `kind` and the input length; returns the preset and the
/// body. A leveled kind's level is read from the body's prefix and bounded by the
/// preset's top level first, so the length compared is computed before anything is
/// allocated and a huge claimed level or length is refused at once.
pub(super) fn open_ckks(bytes: &[u8], kind: CkksObjectKind) -> Result<(Preset, &[u8]), DecodeError> {
    let raw = read_raw_header(bytes)?;
    if raw.kind != kind.id() {
        return Err(DecodeError::WrongKind { expected: kind.name(), found: kind_name(raw.kind) });
    }
    let preset = Preset::from_id(raw.params).ok_or(DecodeError::UnknownParamSet(raw.params))?;
    let level = if kind.is_leveled() {
        let level = read_level(bytes)?;
        let top = preset.params().max_level();
        if level > top as u64 {
            return Err(DecodeError::Invalid(format!("{kind} at level {level}: {preset}'s top level is {top}")));
        }
        level as usize
    } else {
        0
    };
    let body_len = check_len(preset, kind, level, raw.body_len)?;
    Ok((preset, body_of(bytes, HEADER_LEN as u64 + body_len)?))
}

/// The level field of a leveled body (the first 4 bytes after the header and the tag).
fn read_level(bytes: &[u8]) -> Result<u64, DecodeError> {
    let at = HEADER_LEN + KEY_TAG_LEN;
    let needed = at + CKKS_LEVEL_PREFIX_LEN;
    match bytes.get(at..at + 4) {
        Some(b) if bytes.len() >= needed => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64),
        _ => Err(DecodeError::Truncated { needed, have: bytes.len() }),
    }
}

pub(super) fn write_ckks_header(out: &mut [u8], kind: CkksObjectKind, preset: Preset, body_len: u64) {
    write_raw_header(out, kind.id(), preset.id(), body_len);
}

// ---------------------------------------------------------------------------------------
// Composed objects: a body made of other objects' whole encodings (each with its own
// header, checked by its own reader). Ids follow the CKKS kinds.

/// The kind of a composed object. The numeric ids are part of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ComposedKind {
    /// A secret, public and evaluation key of one seed (`KeySet`).
    KeySet,
    /// An encrypted unsigned integer: a width, then one LWE ciphertext per bit.
    FheUint,
    /// A CKKS key set's evaluation keys: counts, then each switching key's encoding
    /// (`ckks::EvalKeys`); the header names a CKKS preset.
    CkksEvalKeys,
}

impl ComposedKind {
    /// Every kind, in id order.
    pub const ALL: [ComposedKind; 3] = [ComposedKind::KeySet, ComposedKind::FheUint, ComposedKind::CkksEvalKeys];

    /// The id written into the header.
    pub const fn id(self) -> u16 {
        match self {
            ComposedKind::KeySet => 11,
            ComposedKind::FheUint => 12,
            ComposedKind::CkksEvalKeys => 13,
        }
    }

    /// Inverse of [`ComposedKind::id`].
    pub const fn from_id(id: u16) -> Option<ComposedKind> {
        match id {
            11 => Some(ComposedKind::KeySet),
            12 => Some(ComposedKind::FheUint),
            13 => Some(ComposedKind::CkksEvalKeys),
            _ => None,
        }
    }

    /// The Rust type name of the kind.
    pub const fn name(self) -> &'static str {
        match self {
            ComposedKind::KeySet => "KeySet",
            ComposedKind::FheUint => "FheUint",
            ComposedKind::CkksEvalKeys => "ckks::EvalKeys",
        }
    }
}

impl fmt::Display for ComposedKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(super) fn write_composed_header(out: &mut [u8], kind: ComposedKind, params: ParamSet, body_len: u64) {
    write_raw_header(out, kind.id(), params.id(), body_len);
}

/// [`open_composed`] for a composed CKKS object: its header names a preset.
pub(super) fn open_ckks_composed(
    bytes: &[u8],
    kind: ComposedKind,
    expected_body_len: impl FnOnce(Preset, &[u8]) -> Result<u64, DecodeError>,
) -> Result<(Preset, &[u8]), DecodeError> {
    let raw = read_raw_header(bytes)?;
    if raw.kind != kind.id() {
        return Err(DecodeError::WrongKind { expected: kind.name(), found: kind_name(raw.kind) });
    }
    let preset = Preset::from_id(raw.params).ok_or(DecodeError::UnknownParamSet(raw.params))?;
    let expected = expected_body_len(preset, &bytes[HEADER_LEN..])?;
    if raw.body_len != expected {
        return Err(DecodeError::BadLength { params: preset.name(), expected, found: raw.body_len });
    }
    Ok((preset, body_of(bytes, HEADER_LEN as u64 + expected)?))
}

pub(super) fn write_ckks_composed_header(out: &mut [u8], kind: ComposedKind, preset: Preset, body_len: u64) {
    write_raw_header(out, kind.id(), preset.id(), body_len);
}

/// Validates a composed header for `kind` and the input length; returns the set and the
/// body. `expected_body_len` gets the set and the bytes after the header (a prefix such
/// as a width may decide the length) and bounds the length before anything is allocated.
pub(super) fn open_composed(
    bytes: &[u8],
    kind: ComposedKind,
    expected_body_len: impl FnOnce(ParamSet, &[u8]) -> Result<u64, DecodeError>,
) -> Result<(ParamSet, &[u8]), DecodeError> {
    let raw = read_raw_header(bytes)?;
    if raw.kind != kind.id() {
        return Err(DecodeError::WrongKind { expected: kind.name(), found: kind_name(raw.kind) });
    }
    let params = ParamSet::from_id(raw.params).ok_or(DecodeError::UnknownParamSet(raw.params))?;
    let expected = expected_body_len(params, &bytes[HEADER_LEN..])?;
    if raw.body_len != expected {
        return Err(DecodeError::BadLength { params: params.name(), expected, found: raw.body_len });
    }
    Ok((params, body_of(bytes, HEADER_LEN as u64 + expected)?))
}
