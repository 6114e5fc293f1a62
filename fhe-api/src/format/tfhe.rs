//! The bit scheme's bodies: LWE ciphertexts, extracted LWE samples, secret, public and
//! evaluation keys (`docs/FORMAT.md`, "Bodies" 1 to 5), and their serde glue. Every
//! body opens with the object's 8-byte key tag ([`KeyTag`]).

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use zeroize::Zeroizing;

use super::header::{open, write_header, ObjectKind, HEADER_LEN, KEY_TAG_LEN, SEED_LEN};
use super::{
    byte_to_ternary, get_u32s, get_u64s, invalid, put_u32s, put_u64s, seed_of, ternary_to_byte, BytesVisitor, Decode,
    Encode, Wire,
};
use crate::error::{DecodeError, Error, Result};
use crate::tag::KeyTag;
use crate::tfhe::entities::{EvaluationKey, ExtractedLwe, LweCiphertext, PublicKey, SecretKey};
use crate::tfhe::params::{ParamSet, Params};

/// Bytes per LWE word (`a_i`, `b`, public- and key-switching-key `b` halves): 2 when
/// `q <= 2^16` (every production set: `q = 2^15`), else 4.
pub const fn lwe_word_bytes(p: &Params) -> usize {
    if p.lwe_modulus_log.0 <= 16 {
        2
    } else {
        4
    }
}

// ---------------------------------------------------------------------------------------
// Bodies. The key tag is written and read once for every kind (`encode_to_of`,
// `decode_of`); `write_body` and `read_body` get exactly the bytes after it (the length
// checked by `open`).

trait Body: Sized {
    const KIND: ObjectKind;
    fn param_set(&self) -> ParamSet;
    fn tag(&self) -> KeyTag;
    fn write_body(&self, out: &mut [u8]);
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self>;
}

/// A key's stored tag: never none, and for a public or evaluation key the one its set
/// and public seed derive. A key relabelled to another set of the same layout fails
/// here (`Error::WrongKey`), before it can meet a ciphertext.
fn check_key_tag(params: ParamSet, stored: KeyTag, derived: Option<KeyTag>) -> Result<()> {
    if stored.is_none() {
        return Err(DecodeError::Invalid(format!("{params} key with key tag {stored}: no key has tag zero")).into());
    }
    match derived {
        Some(derived) if derived != stored => Err(Error::WrongKey { expected: derived, found: stored }),
        _ => Ok(()),
    }
}

impl Body for LweCiphertext {
    const KIND: ObjectKind = ObjectKind::LweCiphertext;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn tag(&self) -> KeyTag {
        self.tag()
    }
    fn write_body(&self, out: &mut [u8]) {
        put_u32s(out, self.as_words(), lwe_word_bytes(self.params().params()));
    }
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self> {
        let p = params.params();
        let words = get_u32s(body, lwe_word_bytes(p), p.q_lwe(), 0)?;
        Ok(LweCiphertext::from_raw(params, tag, words).map_err(invalid)?)
    }
}

impl Body for ExtractedLwe {
    const KIND: ObjectKind = ObjectKind::ExtractedLwe;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn tag(&self) -> KeyTag {
        self.tag()
    }
    fn write_body(&self, out: &mut [u8]) {
        put_u64s(out, self.as_words(), self.params().params().ring_coeff_bytes());
    }
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self> {
        let p = params.params();
        let words = get_u64s(body, p.ring_coeff_bytes(), p.q_ring(), 0)?;
        Ok(ExtractedLwe::from_raw(params, tag, words).map_err(invalid)?)
    }
}

impl Body for SecretKey {
    const KIND: ObjectKind = ObjectKind::SecretKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn tag(&self) -> KeyTag {
        self.tag()
    }
    fn write_body(&self, out: &mut [u8]) {
        let n = self.lwe().len();
        out[..n].iter_mut().zip(self.lwe()).for_each(|(o, &x)| *o = ternary_to_byte(x));
        out[n..].iter_mut().zip(self.ring()).for_each(|(o, &x)| *o = ternary_to_byte(x));
    }
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self> {
        let p = params.params();
        // No derivation to compare with: the tag is checked when the key meets a
        // ciphertext (`Error::WrongKey`).
        check_key_tag(params, tag, None)?;
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
        // Every coefficient is ternary and every length is right, so this fails only on an
        // all-zero secret; the buffers move into the key, which zeroizes them on drop (a
        // refused one as well).
        Ok(SecretKey::from_raw(params, tag, std::mem::take(&mut *lwe), std::mem::take(&mut *ring)).map_err(invalid)?)
    }
}

impl Body for PublicKey {
    const KIND: ObjectKind = ObjectKind::PublicKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn tag(&self) -> KeyTag {
        self.tag()
    }
    fn write_body(&self, out: &mut [u8]) {
        out[..SEED_LEN].copy_from_slice(self.public_seed());
        put_u32s(&mut out[SEED_LEN..], self.b(), lwe_word_bytes(self.params().params()));
    }
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self> {
        let p = params.params();
        let seed = seed_of(body);
        check_key_tag(params, tag, Some(KeyTag::derive(params, &seed)))?;
        let b = get_u32s(&body[SEED_LEN..], lwe_word_bytes(p), p.q_lwe(), 0)?;
        Ok(PublicKey::from_raw(params, seed, b).map_err(invalid)?)
    }
}

impl Body for EvaluationKey {
    const KIND: ObjectKind = ObjectKind::EvaluationKey;
    fn param_set(&self) -> ParamSet {
        self.params()
    }
    fn tag(&self) -> KeyTag {
        self.tag()
    }
    fn write_body(&self, out: &mut [u8]) {
        let p = self.params().params();
        let (seed, rest) = out.split_at_mut(SEED_LEN);
        seed.copy_from_slice(self.public_seed());
        let (bsk, ksk) = rest.split_at_mut(p.bsk_b_len() * p.ring_coeff_bytes());
        put_u64s(bsk, self.bsk_b(), p.ring_coeff_bytes());
        put_u32s(ksk, self.ksk_b(), lwe_word_bytes(p));
    }
    fn read_body(params: ParamSet, tag: KeyTag, body: &[u8]) -> Result<Self> {
        let p = params.params();
        let seed = seed_of(body);
        // Before the words: a relabelled key is refused before ~180 MB are converted.
        check_key_tag(params, tag, Some(KeyTag::derive(params, &seed)))?;
        let (bsk, ksk) = body[SEED_LEN..].split_at(p.bsk_b_len() * p.ring_coeff_bytes());
        let bsk_b = get_u64s(bsk, p.ring_coeff_bytes(), p.q_ring(), 0)?;
        let ksk_b = get_u32s(ksk, lwe_word_bytes(p), p.q_lwe(), p.bsk_b_len())?;
        Ok(EvaluationKey::from_raw(params, seed, bsk_b, ksk_b).map_err(invalid)?)
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
    let (tag, body) = dst[HEADER_LEN..].split_at_mut(KEY_TAG_LEN);
    tag.copy_from_slice(&x.tag().to_bytes());
    x.write_body(body);
}

fn decode_of<T: Body>(bytes: &[u8]) -> Result<T> {
    let (params, body) = open(bytes, T::KIND)?;
    // `open` checked the length, which is at least the tag's for every kind.
    let (tag, rest) = body.split_at(KEY_TAG_LEN);
    let mut t = [0u8; KEY_TAG_LEN];
    t.copy_from_slice(tag);
    T::read_body(params, KeyTag::from_bytes(t), rest)
}

/// The largest encoding of `kind` over every production set.
fn max_encoded_len(kind: ObjectKind) -> usize {
    ParamSet::ALL.iter().map(|&p| kind.encoded_len(p)).max().unwrap_or(0).try_into().unwrap_or(usize::MAX)
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

        impl Wire for $t {
            const NAME: &'static str = <$t as Body>::KIND.name();
            const SECRET: bool = matches!(<$t as Body>::KIND, ObjectKind::SecretKey);
            fn max_encoded_len() -> usize {
                max_encoded_len(<$t as Body>::KIND)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_byte_buf(BytesVisitor::<$t>(std::marker::PhantomData))
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
