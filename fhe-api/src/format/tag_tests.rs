//! Key tags in the format (version 2): every body carries its tag, a relabelled key is
//! refused at decode, version 1 objects are refused by version, and no key with tag
//! zero or an all-zero body decodes. The end-to-end refusals (a ciphertext meeting
//! another key) are in the conformance suite (`testing::tags`).

use super::header::{BODY_LEN_AT, PARAMS_AT, VERSION_AT};
use super::tests::{cached, ct, decode_as, decode_err, ek_bytes, ext, pk, round_trip, small_samples, test_tag};
use super::*;
use crate::tag::KeyTag;
use crate::tfhe::entities::{EvaluationKey, ExtractedLwe, LweCiphertext, PublicKey, SecretKey};
use crate::tfhe::params::ParamSet;

/// The tag field of an encoding.
fn tag_of(bytes: &[u8]) -> KeyTag {
    KeyTag::from_bytes(bytes[HEADER_LEN..HEADER_LEN + KEY_TAG_LEN].try_into().unwrap())
}

fn set_tag(bytes: &mut [u8], tag: KeyTag) {
    bytes[HEADER_LEN..HEADER_LEN + KEY_TAG_LEN].copy_from_slice(&tag.to_bytes());
}

#[test]
fn every_body_opens_with_its_tag_and_keys_derive_theirs() {
    for (kind, set, bytes) in small_samples() {
        let tag = tag_of(bytes);
        assert!(!tag.is_none(), "{kind} {set}");
        match kind {
            ObjectKind::PublicKey => assert_eq!(tag, PublicKey::decode(bytes).unwrap().tag()),
            ObjectKind::SecretKey => assert_eq!(tag, SecretKey::decode(bytes).unwrap().tag()),
            _ => {}
        }
    }
    let k = pk(ParamSet::PN10QP27, 4);
    assert_eq!(k.tag(), KeyTag::derive(ParamSet::PN10QP27, k.public_seed()));
    let e = EvaluationKey::decode(ek_bytes()).unwrap();
    assert_eq!(tag_of(ek_bytes()), e.tag());
    assert_eq!(e.tag(), KeyTag::derive(ParamSet::PN10QP27, e.public_seed()));
    round_trip(&LweCiphertext::trivial(ParamSet::PN11QP54, 3));
}

/// A public key relabelled to any other set is refused: by length where the layouts
/// differ, by its tag where they are the same (PN10QP27 and PN11QP54).
#[test]
fn relabelled_public_keys_are_refused_for_every_pair_of_sets() {
    let mut same_layout = 0;
    for from in ParamSet::ALL {
        for to in ParamSet::ALL.into_iter().filter(|&s| s != from) {
            let mut b = cached(ObjectKind::PublicKey, from);
            b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&to.id().to_le_bytes());
            let derived = KeyTag::derive(to, &b[HEADER_LEN + KEY_TAG_LEN..][..SEED_LEN].try_into().unwrap());
            match PublicKey::decode(&b) {
                Err(Error::WrongKey { expected, found }) => {
                    assert_eq!((expected, found), (derived, tag_of(&b)), "{from} as {to}");
                    same_layout += 1;
                }
                Err(Error::Decode(DecodeError::BadLength { .. })) => {
                    assert_ne!(ObjectKind::PublicKey.body_len(from), ObjectKind::PublicKey.body_len(to));
                }
                r => panic!("public key {from} relabelled {to}: {r:?}"),
            }
        }
    }
    assert_eq!(same_layout, 2, "PN10QP27 <-> PN11QP54 share the public key's layout");
}

/// Evaluation keys of different sets never share a length, so relabelling one is
/// refused by the header alone; a tag not derived from its seed is refused as well.
#[test]
fn relabelled_or_retagged_evaluation_keys_are_refused() {
    for from in ParamSet::ALL {
        for to in ParamSet::ALL.into_iter().filter(|&s| s != from) {
            assert_ne!(ObjectKind::EvaluationKey.body_len(from), ObjectKind::EvaluationKey.body_len(to));
        }
    }
    let mut b = ek_bytes().to_vec();
    b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&ParamSet::PN11QP54.id().to_le_bytes());
    assert!(matches!(decode_err(ObjectKind::EvaluationKey, &b), DecodeError::BadLength { .. }));
    let mut b = ek_bytes().to_vec();
    let other = test_tag(ParamSet::PN10QP27, 1);
    set_tag(&mut b, other);
    let err = EvaluationKey::decode(&b).unwrap_err();
    assert!(matches!(err, Error::WrongKey { found, .. } if found == other), "{err}");
}

#[test]
fn keys_with_tag_zero_are_refused_and_say_so() {
    for (kind, set, bytes) in small_samples() {
        let mut b = bytes.clone();
        set_tag(&mut b, KeyTag::NONE);
        let r = decode_as(*kind, &b);
        match kind {
            ObjectKind::SecretKey | ObjectKind::PublicKey => {
                let e = r.unwrap_err().to_string();
                assert!(e.contains("no key has tag zero"), "{kind} {set}: {e}");
            }
            // A ciphertext without a tag must be trivial; these are not.
            _ => assert!(r.unwrap_err().to_string().contains("must be trivial"), "{kind} {set}"),
        }
    }
    let mut b = ek_bytes().to_vec();
    set_tag(&mut b, KeyTag::NONE);
    assert!(EvaluationKey::decode(&b).unwrap_err().to_string().contains("no key has tag zero"));
}

#[test]
fn all_zero_keys_are_refused_at_decode() {
    for set in ParamSet::ALL {
        let p = set.params();
        // Secret key: every coefficient 0, or only the ring part.
        let mut b = cached(ObjectKind::SecretKey, set);
        let body = HEADER_LEN + KEY_TAG_LEN;
        b[body..].fill(0);
        assert!(SecretKey::decode(&b).unwrap_err().to_string().contains("all zero"), "{set}");
        let mut b = cached(ObjectKind::SecretKey, set);
        b[body + p.n()..].fill(0);
        assert!(SecretKey::decode(&b).unwrap_err().to_string().contains("all zero"), "{set}");
        let mut b = cached(ObjectKind::PublicKey, set);
        b[body + SEED_LEN..].fill(0);
        assert!(PublicKey::decode(&b).unwrap_err().to_string().contains("all zero"), "{set}");
    }
    let p = ParamSet::PN10QP27.params();
    let body = HEADER_LEN + KEY_TAG_LEN + SEED_LEN;
    let mut b = ek_bytes().to_vec();
    b[body..].fill(0);
    assert!(EvaluationKey::decode(&b).unwrap_err().to_string().contains("all zero"));
    let mut b = ek_bytes().to_vec();
    b[body + 4 * p.bsk_b_len()..].fill(0);
    assert!(EvaluationKey::decode(&b).unwrap_err().to_string().contains("all zero"));
}

/// Version 1 (before key tags): refused by version whatever follows, with a message
/// naming the version found and the one supported.
#[test]
fn format_version_1_is_refused_by_version() {
    for (kind, set, bytes) in small_samples() {
        // The version 1 shape: no tag, length 8 bytes shorter.
        let mut b = bytes[..HEADER_LEN].to_vec();
        b[VERSION_AT..VERSION_AT + 2].copy_from_slice(&1u16.to_le_bytes());
        b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&(kind.body_len(*set) - KEY_TAG_LEN as u64).to_le_bytes());
        b.extend(&bytes[HEADER_LEN + KEY_TAG_LEN..]);
        let e = decode_err(*kind, &b);
        assert_eq!(e, DecodeError::UnsupportedVersion { found: 1, supported: FORMAT_VERSION });
        let msg = e.to_string();
        assert!(msg.contains("format version 1") && msg.contains("format version 2"), "{msg}");
        assert!(peek_header(&b).is_err());
    }
}

#[test]
fn untagged_ciphertexts_must_be_trivial() {
    let set = ParamSet::PN10QP25Q;
    let p = set.params();
    let mut words = vec![0u32; p.n() + 1];
    words[p.n()] = 5;
    assert!(LweCiphertext::from_raw(set, KeyTag::NONE, words.clone()).is_ok());
    words[0] = 1;
    assert!(LweCiphertext::from_raw(set, KeyTag::NONE, words).is_err());
    let mut words = vec![0u64; p.big_n() + 1];
    words[3] = 1;
    assert!(ExtractedLwe::from_raw(set, KeyTag::NONE, words.clone()).is_err());
    assert!(ExtractedLwe::from_raw(set, test_tag(set, 1), words).is_ok());
    assert!(SecretKey::from_raw(set, KeyTag::NONE, vec![1; p.n()], vec![1; p.big_n()]).is_err());
}

/// Ciphertexts of two keys do not combine; a trivial one combines with either.
#[test]
fn combining_two_tags_is_wrong_key() {
    let set = ParamSet::PN10QP27;
    let (a, b) = (ct(set, 1), ct(set, 2));
    let r = LweCiphertext::linear_combination(&[(1, &a), (1, &b)], 0);
    assert!(matches!(r, Err(Error::WrongKey { expected, found }) if expected == a.tag() && found == b.tag()));
    let t = LweCiphertext::trivial(set, 7);
    assert_eq!(LweCiphertext::linear_combination(&[(1, &t), (1, &b)], 0).unwrap().tag(), b.tag());
    assert_eq!(LweCiphertext::linear_combination(&[(1, &t)], 0).unwrap().tag(), KeyTag::NONE);
    let (x, y) = (ext(set, 1), ext(set, 2));
    assert!(matches!(x.add(&y), Err(Error::WrongKey { .. })));
    assert_eq!(x.add(&x).unwrap().tag(), x.tag());
}

proptest::proptest! {
    /// Any tag on a valid body: never a panic; a key's tag other than its own is
    /// refused (zero as "no key has tag zero", another as WrongKey for the keys whose
    /// tag is derived); a ciphertext keeps whatever non-zero tag it is given.
    #[test]
    fn random_tags_never_panic_and_keys_check_theirs(
        i in 0..small_samples().len(),
        tag in proptest::prelude::any::<[u8; KEY_TAG_LEN]>(),
    ) {
        let (kind, _, bytes) = &small_samples()[i];
        let own = tag_of(bytes);
        let tag = KeyTag::from_bytes(tag);
        let mut b = bytes.clone();
        set_tag(&mut b, tag);
        let r = decode_as(*kind, &b);
        match (kind, r) {
            (_, Ok(())) => proptest::prop_assert!(tag == own || matches!(kind, ObjectKind::LweCiphertext | ObjectKind::ExtractedLwe | ObjectKind::SecretKey) && !tag.is_none()),
            (_, Err(e)) if tag.is_none() => proptest::prop_assert!(e.to_string().contains("tag zero") || e.to_string().contains("must be trivial"), "{}", e),
            (ObjectKind::PublicKey, Err(Error::WrongKey { expected, found })) => {
                proptest::prop_assert_eq!((expected, found), (own, tag));
            }
            (_, Err(e)) => proptest::prop_assert!(false, "{kind}: {e}"),
        }
    }
}
