//! The CKKS bodies: ciphertexts, plaintexts, secret and public keys, switching keys
//! (`docs/FORMAT.md`, "CKKS objects"), and their serde glue.
//!
//! Every word is 8 bytes and lies below the prime of its limb; limbs are in the entities'
//! order (limb-major, `q_0 ..` then, for switching keys, `p_0 ..`, repeated per digit).
//! Only objects whose parameters equal a preset's have an encoding: the header carries a
//! preset id, not primes.

use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::de::{Deserialize, Deserializer};
use serde::ser::{self, Serialize, Serializer};
use zeroize::Zeroizing;

use super::header::{
    open_ckks, write_ckks_header, CkksObjectKind, CKKS_LEVEL_PREFIX_LEN, CKKS_SWITCH_PREFIX_LEN, CKKS_WORD_LEN,
    HEADER_LEN, KEY_TAG_LEN, SEED_LEN,
};
use super::{byte_to_ternary, invalid, put_u64s, range_check, seed_of, ternary_to_byte, BytesVisitor, Decode};
use super::{TryEncode, Wire};
use crate::ckks::entities::{HostCiphertext, Plaintext, PublicKey, SecretKey, SwitchKind, SwitchingKey};
use crate::ckks::meta::CkksMeta;
use crate::ckks::params::{Params, Preset};
use crate::ckks::scale::Scale;
use crate::error::{DecodeError, Error, LevelNeed, Result};
use crate::keyed_cache::KeyedCache;
use crate::tag::KeyTag;

/// Switching-key kind tags (the body's first field).
const TAG_RELIN: u32 = 0;
const TAG_GALOIS: u32 = 1;

/// The preset whose parameters `params` are, or why there is none.
fn preset_of(params: &Params) -> Result<Preset> {
    // By name first, so only that preset's chain is generated; then every number, so a
    // renamed or altered chain is not mistaken for the preset.
    Preset::from_str(params.name()).ok().filter(|p| p.params() == params).ok_or_else(|| {
        let presets: Vec<_> = Preset::ALL.iter().map(|p| p.name()).collect();
        Error::InvalidInput(format!(
            "CKKS parameters `{}` are not a preset, so they have no encoding: the format names parameters by \
             preset id and a reader could not rebuild custom primes (presets: {})",
            params.name(),
            presets.join(", ")
        ))
    })
}

/// One shared `Arc` per preset, so objects decoded under one preset share their params.
fn preset_params(preset: Preset) -> Arc<Params> {
    static CACHE: OnceLock<KeyedCache<Preset, Params>> = OnceLock::new();
    CACHE.get_or_init(KeyedCache::new).get_or_init(&preset, || preset.params().clone())
}

/// The primes of QP in limb order: `q_0 .. q_L, p_0 .. p_{K-1}`.
fn qp_primes(params: &Params) -> Vec<u64> {
    params.q().iter().chain(params.p().iter()).map(|m| m.0).collect()
}

/// Reads 8-byte words; limb `i` (`n` words) must lie below `primes[i % primes.len()]`.
/// The one allocation is the exact word count of a body whose length was checked.
fn get_limbs(bytes: &[u8], n: usize, primes: &[u64]) -> Result<Vec<u64>, DecodeError> {
    let words: Vec<u64> = bytes.chunks_exact(CKKS_WORD_LEN).map(le_u64).collect();
    for (i, (limb, &q)) in words.chunks(n).zip(primes.iter().cycle()).enumerate() {
        range_check(limb, q, i * n)?;
    }
    Ok(words)
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Writes the level-and-scale prefix of a ciphertext or plaintext body.
fn put_level_prefix(out: &mut [u8], meta: &CkksMeta) {
    // Levels are below the preset's depth (at most 34), so they fit a u32.
    out[..4].copy_from_slice(&(meta.level() as u32).to_le_bytes());
    out[4..CKKS_LEVEL_PREFIX_LEN].copy_from_slice(&meta.scale().value().to_bits().to_le_bytes());
}

/// The metadata of a ciphertext or plaintext body: its level (already bounded by
/// `open_ckks`), its scale (a checked [`Scale`]: not NaN, zero, subnormal or out of
/// range, and below half the modulus of its level) and the tag read before it.
fn get_level_prefix(params: &Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<CkksMeta, DecodeError> {
    let level = le_u32(body) as usize;
    let scale = Scale::new(f64::from_bits(le_u64(&body[4..]))).map_err(invalid)?;
    CkksMeta::new(params.clone(), level, scale, tag).map_err(invalid)
}

// ---------------------------------------------------------------------------------------
// Bodies. `write_body` gets exactly the body length; `read_body` gets exactly the length
// `open_ckks` checked (a leveled body's level already bounded by the preset).

trait CkksBody: Sized {
    const KIND: CkksObjectKind;
    fn params(&self) -> &Params;
    /// The key set's tag, which opens every body.
    fn tag(&self) -> KeyTag;
    /// An object of this kind that has no encoding says why.
    fn check_encodable(&self) -> Result<()> {
        Ok(())
    }
    /// The level the body length depends on (leveled kinds; keys answer 0).
    fn level(&self) -> usize {
        0
    }
    fn write_body(&self, out: &mut [u8]);
    /// `body` after the tag.
    fn read_body(params: Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError>;
}

impl CkksBody for HostCiphertext {
    const KIND: CkksObjectKind = CkksObjectKind::Ciphertext;
    fn params(&self) -> &Params {
        HostCiphertext::params(self)
    }
    fn tag(&self) -> KeyTag {
        HostCiphertext::tag(self)
    }
    fn level(&self) -> usize {
        HostCiphertext::level(self)
    }
    fn write_body(&self, out: &mut [u8]) {
        let (prefix, words) = out.split_at_mut(CKKS_LEVEL_PREFIX_LEN);
        put_level_prefix(prefix, self.meta());
        let (c0, c1) = words.split_at_mut(self.c0().len() * CKKS_WORD_LEN);
        put_u64s(c0, self.c0(), CKKS_WORD_LEN);
        put_u64s(c1, self.c1(), CKKS_WORD_LEN);
    }
    fn read_body(params: Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError> {
        let meta = get_level_prefix(&params, tag, body)?;
        let level = meta.level();
        let (n, primes) = (params.n(), qp_primes(&params));
        let (c0, c1) = body[CKKS_LEVEL_PREFIX_LEN..].split_at((level + 1) * n * CKKS_WORD_LEN);
        let c0 = get_limbs(c0, n, &primes[..=level])?;
        // c1's index continues c0's, so an error names one place in the body.
        let c1 = get_limbs(c1, n, &primes[..=level]).map_err(|e| shift_index(e, c0.len()))?;
        HostCiphertext::from_reduced(meta, c0, c1).map_err(invalid)
    }
}

/// An `OutOfRange` index moved past the `offset` words before this array.
fn shift_index(e: DecodeError, offset: usize) -> DecodeError {
    match e {
        DecodeError::OutOfRange { index, value, bound } => {
            DecodeError::OutOfRange { index: index + offset, value, bound }
        }
        e => e,
    }
}

impl CkksBody for Plaintext {
    const KIND: CkksObjectKind = CkksObjectKind::Plaintext;
    fn params(&self) -> &Params {
        Plaintext::params(self)
    }
    fn tag(&self) -> KeyTag {
        Plaintext::tag(self)
    }
    fn check_encodable(&self) -> Result<()> {
        match self.is_extended() {
            true => Err(Error::InvalidInput(
                "an extended plaintext (limbs over P, for a lazy ModDown) has no encoding: encode its values".into(),
            )),
            false => Ok(()),
        }
    }
    fn level(&self) -> usize {
        Plaintext::level(self)
    }
    fn write_body(&self, out: &mut [u8]) {
        let (prefix, words) = out.split_at_mut(CKKS_LEVEL_PREFIX_LEN);
        put_level_prefix(prefix, self.meta());
        put_u64s(words, self.coeffs(), CKKS_WORD_LEN);
    }
    fn read_body(params: Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError> {
        let meta = get_level_prefix(&params, tag, body)?;
        let primes = qp_primes(&params);
        let coeffs = get_limbs(&body[CKKS_LEVEL_PREFIX_LEN..], params.n(), &primes[..=meta.level()])?;
        Plaintext::from_reduced(meta, coeffs).map_err(invalid)
    }
}

impl CkksBody for SecretKey {
    const KIND: CkksObjectKind = CkksObjectKind::SecretKey;
    fn params(&self) -> &Params {
        &self.params
    }
    fn tag(&self) -> KeyTag {
        self.tag
    }
    fn write_body(&self, out: &mut [u8]) {
        out.iter_mut().zip(self.s.iter()).for_each(|(o, &x)| *o = ternary_to_byte(x));
    }
    fn read_body(params: Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError> {
        // An exact-size buffer, zeroized on every early return; never reallocated.
        let mut s = Zeroizing::new(vec![0i8; params.n()]);
        for (i, (d, &b)) in s.iter_mut().zip(body).enumerate() {
            *d = byte_to_ternary(b, i)?;
        }
        // `from_raw` refuses an all-zero key (it would decrypt everything); its only other
        // checks passed above, so on that error the dropped buffer holds no secret.
        SecretKey::from_raw(params, tag, std::mem::take(&mut *s)).map_err(invalid)
    }
}

impl CkksBody for PublicKey {
    const KIND: CkksObjectKind = CkksObjectKind::PublicKey;
    fn params(&self) -> &Params {
        &self.params
    }
    fn tag(&self) -> KeyTag {
        self.tag
    }
    fn write_body(&self, out: &mut [u8]) {
        out[..SEED_LEN].copy_from_slice(&self.seed);
        put_u64s(&mut out[SEED_LEN..], &self.b, CKKS_WORD_LEN);
    }
    fn read_body(params: Arc<Params>, tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError> {
        // The tag is the seed's: a stored tag that is not is a relabelled key.
        let derived = params.key_tag(&seed_of(body));
        if tag != derived {
            return Err(DecodeError::Invalid(format!(
                "CKKS public key with key tag {tag}, but its public seed gives {derived}"
            )));
        }
        let primes: Vec<u64> = params.q().iter().chain(params.p().first()).map(|m| m.0).collect();
        let b = get_limbs(&body[SEED_LEN..], params.n(), &primes)?;
        PublicKey::from_raw(params, seed_of(body), b).map_err(invalid)
    }
}

impl CkksBody for SwitchingKey {
    const KIND: CkksObjectKind = CkksObjectKind::SwitchingKey;
    fn params(&self) -> &Params {
        &self.params
    }
    fn tag(&self) -> KeyTag {
        self.tag
    }
    fn write_body(&self, out: &mut [u8]) {
        let (tag, g) = match self.kind {
            SwitchKind::Relin => (TAG_RELIN, 0),
            SwitchKind::Galois(g) => (TAG_GALOIS, g),
        };
        out[..4].copy_from_slice(&tag.to_le_bytes());
        out[4..CKKS_SWITCH_PREFIX_LEN].copy_from_slice(&g.to_le_bytes());
        let (seed, words) = out[CKKS_SWITCH_PREFIX_LEN..].split_at_mut(SEED_LEN);
        seed.copy_from_slice(&self.seed);
        put_u64s(words, &self.b, CKKS_WORD_LEN);
    }
    fn read_body(params: Arc<Params>, key_tag: KeyTag, body: &[u8]) -> Result<Self, DecodeError> {
        // The kind first: it is cheap to check, and the words need not be read otherwise.
        let (tag, g) = (le_u32(body), le_u64(&body[4..]));
        let kind = match (tag, g) {
            (TAG_RELIN, 0) => SwitchKind::Relin,
            (TAG_GALOIS, g) if !g.is_multiple_of(2) && g < 2 * params.n() as u64 => SwitchKind::Galois(g),
            _ => {
                return Err(DecodeError::Invalid(format!(
                    "switching-key kind tag {tag} with element {g}: expected 0 (relinearization, element 0) or \
                     1 (Galois, an odd element below 2N = {})",
                    2 * params.n()
                )))
            }
        };
        let rest = &body[CKKS_SWITCH_PREFIX_LEN..];
        let b = get_limbs(&rest[SEED_LEN..], params.n(), &qp_primes(&params))?;
        SwitchingKey::from_raw(params, kind, key_tag, seed_of(rest), b).map_err(invalid)
    }
}

fn try_encoded_len_of<T: CkksBody>(x: &T) -> Result<(Preset, usize)> {
    x.check_encodable()?;
    let preset = preset_of(x.params())?;
    // The object's level is at most its params' top level by construction.
    let len = T::KIND.encoded_len(preset, x.level()).ok_or(Error::Level {
        op: "encode",
        found: x.level(),
        needed: LevelNeed::AtMost(preset.params().max_level()),
    })?;
    // Bounded by the size of a value that already exists in memory.
    Ok((preset, len as usize))
}

fn try_encode_to_of<T: CkksBody>(x: &T, out: &mut Vec<u8>) -> Result<()> {
    let (preset, len) = try_encoded_len_of(x)?;
    let start = out.len();
    out.reserve_exact(len);
    out.resize(start + len, 0);
    let dst = &mut out[start..];
    write_ckks_header(dst, T::KIND, preset, (len - HEADER_LEN) as u64);
    dst[HEADER_LEN..HEADER_LEN + KEY_TAG_LEN].copy_from_slice(&x.tag().to_bytes());
    x.write_body(&mut dst[HEADER_LEN + KEY_TAG_LEN..]);
    Ok(())
}

fn decode_ckks<T: CkksBody>(bytes: &[u8]) -> Result<T> {
    let (preset, body) = open_ckks(bytes, T::KIND)?;
    let (tag, body) = body.split_at(KEY_TAG_LEN);
    let tag = KeyTag::from_bytes(tag.try_into().expect("open_ckks checked the body length"));
    // Only a plaintext may belong to no key (an encoded message); keys and ciphertexts
    // always have one (an encryption carries its public key's).
    if tag.is_none() && T::KIND != CkksObjectKind::Plaintext {
        return Err(
            DecodeError::Invalid(format!("{} with key tag zero: only a plaintext belongs to no key", T::KIND)).into()
        );
    }
    Ok(T::read_body(preset_params(preset), tag, body)?)
}

/// The largest encoding of `kind` over every preset (at its top level).
fn max_encoded_len(kind: CkksObjectKind) -> usize {
    let longest = Preset::ALL.iter().filter_map(|&p| kind.encoded_len(p, p.params().max_level())).max();
    longest.unwrap_or(0).try_into().unwrap_or(usize::MAX)
}

macro_rules! impl_ckks_format {
    ($($t:ty),*) => {$(
        impl TryEncode for $t {
            const KIND: CkksObjectKind = <$t as CkksBody>::KIND;
            fn try_encoded_len(&self) -> Result<usize> {
                Ok(try_encoded_len_of(self)?.1)
            }
            fn try_encode_to(&self, out: &mut Vec<u8>) -> Result<()> {
                try_encode_to_of(self, out)
            }
        }

        impl Decode for $t {
            fn decode(bytes: &[u8]) -> Result<Self> {
                decode_ckks(bytes)
            }
        }

        impl Wire for $t {
            const NAME: &'static str = <$t as CkksBody>::KIND.name();
            const SECRET: bool = matches!(<$t as CkksBody>::KIND, CkksObjectKind::SecretKey);
            fn max_encoded_len() -> usize {
                max_encoded_len(<$t as CkksBody>::KIND)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_byte_buf(BytesVisitor::<$t>(std::marker::PhantomData))
            }
        }
    )*};
}

impl_ckks_format!(HostCiphertext, Plaintext, SecretKey, PublicKey, SwitchingKey);

macro_rules! impl_serialize_public {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            /// Fails (a serializer error) where the parameters are no preset.
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(&self.try_encode().map_err(ser::Error::custom)?)
            }
        }
    )*};
}

impl_serialize_public!(HostCiphertext, Plaintext, PublicKey, SwitchingKey);

impl Serialize for SecretKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.try_encode_zeroizing().map_err(ser::Error::custom)?)
    }
}

impl SecretKey {
    /// The encoding in a buffer that is wiped when dropped.
    pub fn try_encode_zeroizing(&self) -> Result<Zeroizing<Vec<u8>>> {
        let mut out = Zeroizing::new(Vec::new());
        // Sized exactly before the first byte is written, so it never reallocates.
        out.reserve_exact(self.try_encoded_len()?);
        self.try_encode_to(&mut out)?;
        Ok(out)
    }
}
