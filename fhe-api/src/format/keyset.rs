//! A [`KeySet`] (`docs/FORMAT.md`, "Composed objects"): the whole encodings of its secret,
//! public and evaluation keys, in that order, behind a header of kind
//! [`ComposedKind::KeySet`]. Each part is read by its own reader, so every check of the
//! three kinds applies unchanged.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use zeroize::Zeroizing;

use super::header::{open_composed, write_composed_header, ComposedKind, ObjectKind, HEADER_LEN};
use super::{BytesVisitor, Decode, Encode, Wire};
use crate::error::{DecodeError, Error, Result};
use crate::tfhe::entities::{EvaluationKey, KeySet, PublicKey, SecretKey};
use crate::tfhe::params::ParamSet;

/// The parts in body order, with their lengths under `params`.
fn part_lens(params: ParamSet) -> [u64; 3] {
    [ObjectKind::SecretKey, ObjectKind::PublicKey, ObjectKind::EvaluationKey].map(|k| k.encoded_len(params))
}

fn body_len(params: ParamSet) -> u64 {
    part_lens(params).iter().sum()
}

impl KeySet {
    /// The exact number of bytes [`KeySet::encode_zeroizing`] returns.
    pub fn encoded_len(&self) -> usize {
        // Bounded by the size of keys that already exist in memory.
        (HEADER_LEN as u64 + body_len(self.sk.params())) as usize
    }

    /// The encoding (it holds the secret key) in a buffer that is wiped when dropped.
    pub fn encode_zeroizing(&self) -> Zeroizing<Vec<u8>> {
        let params = self.sk.params();
        let mut out = Zeroizing::new(Vec::with_capacity(self.encoded_len()));
        out.resize(HEADER_LEN, 0);
        write_composed_header(&mut out, ComposedKind::KeySet, params, body_len(params));
        self.sk.encode_to(&mut out);
        self.pk.encode_to(&mut out);
        self.ek.encode_to(&mut out);
        debug_assert_eq!(out.len(), self.encoded_len());
        out
    }
}

impl Decode for KeySet {
    /// A key set whose three keys are valid encodings of the header's parameter set.
    fn decode(bytes: &[u8]) -> Result<Self> {
        let (params, body) = open_composed(bytes, ComposedKind::KeySet, |p, _| Ok(body_len(p)))?;
        // The lengths are the set's, so the split points are in range.
        let [sk_len, pk_len, _] = part_lens(params).map(|l| l as usize);
        let (sk, rest) = body.split_at(sk_len);
        let (pk, ek) = rest.split_at(pk_len);
        let keys = KeySet { sk: SecretKey::decode(sk)?, pk: PublicKey::decode(pk)?, ek: EvaluationKey::decode(ek)? };
        // A part of another set has another length and fails above; say so plainly anyway.
        for found in [keys.sk.params(), keys.pk.params(), keys.ek.params()] {
            if found != params {
                return Err(DecodeError::Invalid(format!("KeySet of {params} holds a key of {found}")).into());
            }
        }
        // Each key's own tag was checked by its reader; the three must be one key set's.
        for found in [keys.pk.tag(), keys.ek.tag()] {
            if found != keys.sk.tag() {
                return Err(Error::WrongKey { expected: keys.sk.tag(), found });
            }
        }
        Ok(keys)
    }
}

impl Wire for KeySet {
    const NAME: &'static str = "KeySet";
    const SECRET: bool = true;
    fn max_encoded_len() -> usize {
        ParamSet::ALL
            .iter()
            .map(|&p| HEADER_LEN as u64 + body_len(p))
            .max()
            .unwrap_or(0)
            .try_into()
            .unwrap_or(usize::MAX)
    }
}

impl Serialize for KeySet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.encode_zeroizing())
    }
}

impl<'de> Deserialize<'de> for KeySet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_byte_buf(BytesVisitor::<KeySet>(std::marker::PhantomData))
    }
}
