//! Key tags (as OpenFHE's): a short public name of the key set an object belongs to, so
//! that a ciphertext decrypted or evaluated under another key, or relabelled to another
//! parameter set, is refused with [`Error::WrongKey`] instead of computing garbage.
//!
//! The tag is derived from public material only: domain-separated SHA-256 over the
//! parameter set id and the key set's public seed (which the public and evaluation keys
//! already carry in the clear), truncated to 8 bytes. It therefore says nothing about
//! the secret that the public key does not already say (`docs/FORMAT.md`, "Key tags").
//! Binding the set id makes the keys of one seed under two sets differ in tag, so an
//! object relabelled to a set of the same layout meets a key whose tag it does not carry.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::tfhe::params::ParamSet;

/// Bytes of a key tag.
pub const KEY_TAG_LEN: usize = 8;

/// The tag of a key set, carried by every key, ciphertext and prepared key of the bit
/// scheme. [`KeyTag::NONE`] (all zero) marks a trivial ciphertext (`a = 0`, a public
/// constant), which belongs to no key and combines with any; no key has it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct KeyTag([u8; KEY_TAG_LEN]);

impl KeyTag {
    /// No key: the tag of trivial ciphertexts.
    pub const NONE: KeyTag = KeyTag([0; KEY_TAG_LEN]);

    /// `SHA-256("lux-fhe-v2/key-tag" || 0 || set id (u16 LE) || public_seed)[..8]`, never
    /// [`KeyTag::NONE`] (a digest prefix of zero, probability 2^-64, has its last bit set).
    pub fn derive(set: ParamSet, public_seed: &[u8; 32]) -> KeyTag {
        let mut h = Sha256::new();
        h.update(b"lux-fhe-v2/key-tag");
        h.update([0u8]);
        h.update(set.id().to_le_bytes());
        h.update(public_seed);
        Self::from_digest(&h.finalize())
    }

    /// The tag of a CKKS key set: `SHA-256("lux-fhe-v2/ckks-key-tag" || 0 || N (u64 LE)
    /// || every prime of QP (u64 LE) || public_seed)[..8]`, never [`KeyTag::NONE`]. The
    /// whole chain is bound, so a key set's objects are refused under other parameters.
    pub fn derive_ckks(n: usize, primes: impl IntoIterator<Item = u64>, public_seed: &[u8; 32]) -> KeyTag {
        let mut h = Sha256::new();
        h.update(b"lux-fhe-v2/ckks-key-tag");
        h.update([0u8]);
        h.update((n as u64).to_le_bytes());
        primes.into_iter().for_each(|q| h.update(q.to_le_bytes()));
        h.update(public_seed);
        Self::from_digest(&h.finalize())
    }

    fn from_digest(digest: &[u8]) -> KeyTag {
        let mut tag = [0u8; KEY_TAG_LEN];
        tag.copy_from_slice(&digest[..KEY_TAG_LEN]);
        if tag == [0; KEY_TAG_LEN] {
            tag[KEY_TAG_LEN - 1] = 1;
        }
        KeyTag(tag)
    }

    pub const fn from_bytes(bytes: [u8; KEY_TAG_LEN]) -> KeyTag {
        KeyTag(bytes)
    }

    pub const fn to_bytes(self) -> [u8; KEY_TAG_LEN] {
        self.0
    }

    /// Whether this is [`KeyTag::NONE`] (a trivial ciphertext's).
    pub fn is_none(self) -> bool {
        self == KeyTag::NONE
    }

    /// An object carrying `self` may be used with the key tagged `key`: the same tag, or
    /// none (a trivial ciphertext). Otherwise [`Error::WrongKey`].
    pub fn check_against(self, key: KeyTag) -> Result<()> {
        if self.is_none() || self == key {
            Ok(())
        } else {
            Err(Error::WrongKey { expected: key, found: self })
        }
    }

    /// The tag of a combination of two objects: the one key tag they share (a trivial
    /// operand adopts the other's); two different key tags are [`Error::WrongKey`].
    pub fn combine(self, other: KeyTag) -> Result<KeyTag> {
        if self.is_none() {
            Ok(other)
        } else {
            other.check_against(self).map(|()| self)
        }
    }
}

impl fmt::Display for KeyTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for KeyTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyTag({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bind_set_and_seed_and_print_as_hex() {
        let s = [7u8; 32];
        let t = KeyTag::derive(ParamSet::PN10QP27, &s);
        assert_eq!(t, KeyTag::derive(ParamSet::PN10QP27, &s));
        assert_ne!(t, KeyTag::derive(ParamSet::PN11QP54, &s));
        assert_ne!(t, KeyTag::derive(ParamSet::PN10QP27, &[8u8; 32]));
        assert!(!t.is_none());
        assert_eq!(t.to_string().len(), 16);
        assert_eq!(KeyTag::NONE.to_string(), "0000000000000000");
        assert_eq!(KeyTag::from_bytes(t.to_bytes()), t);
    }

    #[test]
    fn none_combines_with_any_and_two_keys_do_not() {
        let a = KeyTag::derive(ParamSet::PN10QP27, &[1; 32]);
        let b = KeyTag::derive(ParamSet::PN10QP27, &[2; 32]);
        assert_eq!(KeyTag::NONE.combine(a).unwrap(), a);
        assert_eq!(a.combine(KeyTag::NONE).unwrap(), a);
        assert_eq!(a.combine(a).unwrap(), a);
        assert!(KeyTag::NONE.check_against(a).is_ok());
        let e = a.combine(b).unwrap_err();
        assert!(matches!(e, Error::WrongKey { expected, found } if expected == a && found == b));
        let msg = e.to_string();
        assert!(msg.contains(&a.to_string()) && msg.contains(&b.to_string()), "{msg}");
    }
}
