//! The bit scheme's format tests: round trips, pinned layouts and sizes, and every
//! way a reader must refuse bytes (truncation, relabelling, out-of-range words).

use std::fmt;
use std::sync::OnceLock;

use proptest::prelude::*;
use serde::de::{Deserialize, Visitor};
use serde::Serialize;

use super::header::{BODY_LEN_AT, KIND_AT, PARAMS_AT, VERSION_AT};
use super::*;
use crate::rng::SplitMix64;
use crate::tag::KeyTag;
use crate::tfhe::entities::{EvaluationKey, ExtractedLwe, LweCiphertext, PublicKey, SecretKey};
use crate::tfhe::params::{ParamSet, Params};

/// Deterministic test data from [`SplitMix64`] (bias of `% bound` is irrelevant here).
/// Shared with the CKKS format tests.
pub(super) struct Mix(SplitMix64);
impl Mix {
    pub(super) fn new(seed: u64) -> Mix {
        Mix(SplitMix64::new(seed))
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub(super) fn below(&mut self, bound: u64) -> u64 {
        self.0.below(bound)
    }
    pub(super) fn seed(&mut self) -> [u8; 32] {
        self.0.seed_bytes()
    }
    fn lwe_words(&mut self, p: &Params, len: usize) -> Vec<u32> {
        (0..len).map(|_| self.below(p.q_lwe()) as u32).collect()
    }
    fn ring_words(&mut self, p: &Params, len: usize) -> Vec<u64> {
        (0..len).map(|_| self.below(p.q_ring())).collect()
    }
    pub(super) fn ternary(&mut self, len: usize) -> Vec<i8> {
        (0..len).map(|_| self.below(3) as i8 - 1).collect()
    }
}

/// The key tag of test object `seed` (a key set whose public seed is drawn from it).
pub(super) fn test_tag(set: ParamSet, seed: u64) -> KeyTag {
    KeyTag::derive(set, &Mix::new(seed ^ 0x7A6).seed())
}

pub(super) fn ct(set: ParamSet, seed: u64) -> LweCiphertext {
    let p = set.params();
    LweCiphertext::from_raw(set, test_tag(set, seed), Mix::new(seed).lwe_words(p, p.n() + 1)).unwrap()
}
pub(super) fn ext(set: ParamSet, seed: u64) -> ExtractedLwe {
    let p = set.params();
    ExtractedLwe::from_raw(set, test_tag(set, seed), Mix::new(seed).ring_words(p, p.big_n() + 1)).unwrap()
}
pub(super) fn sk(set: ParamSet, seed: u64) -> SecretKey {
    let p = set.params();
    let mut m = Mix::new(seed);
    SecretKey::from_raw(set, test_tag(set, seed), m.ternary(p.n()), m.ternary(p.big_n())).unwrap()
}
pub(super) fn pk(set: ParamSet, seed: u64) -> PublicKey {
    let p = set.params();
    let mut m = Mix::new(seed);
    let s = m.seed();
    PublicKey::from_raw(set, s, m.lwe_words(p, p.pk_samples)).unwrap()
}
pub(super) fn ek(set: ParamSet, seed: u64) -> EvaluationKey {
    let p = set.params();
    let mut m = Mix::new(seed);
    let s = m.seed();
    let bsk = m.ring_words(p, p.bsk_b_len());
    let ksk = m.lwe_words(p, p.ksk_samples());
    EvaluationKey::from_raw(set, s, bsk, ksk).unwrap()
}

/// Encodings of the four small kinds on every set.
pub(super) fn small_samples() -> &'static [(ObjectKind, ParamSet, Vec<u8>)] {
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
pub(super) fn cached(kind: ObjectKind, set: ParamSet) -> Vec<u8> {
    small_samples().iter().find(|(k, s, _)| (*k, *s) == (kind, set)).map(|(_, _, b)| b.clone()).unwrap()
}

/// The PN10QP27 evaluation key's encoding (36 MB), shared by the proptests.
pub(super) fn ek_bytes() -> &'static [u8] {
    static E: OnceLock<Vec<u8>> = OnceLock::new();
    E.get_or_init(|| ek(ParamSet::PN10QP27, 99).encode())
}

/// Decodes `bytes` as `kind`, keeping only the error.
pub(super) fn decode_as(kind: ObjectKind, bytes: &[u8]) -> Result<()> {
    match kind {
        ObjectKind::LweCiphertext => LweCiphertext::decode(bytes).map(drop),
        ObjectKind::ExtractedLwe => ExtractedLwe::decode(bytes).map(drop),
        ObjectKind::SecretKey => SecretKey::decode(bytes).map(drop),
        ObjectKind::PublicKey => PublicKey::decode(bytes).map(drop),
        ObjectKind::EvaluationKey => EvaluationKey::decode(bytes).map(drop),
    }
}

pub(super) fn decode_err(kind: ObjectKind, bytes: &[u8]) -> DecodeError {
    match decode_as(kind, bytes) {
        Err(Error::Decode(e)) => e,
        Err(e) => panic!("{kind}: not a decode error: {e}"),
        Ok(()) => panic!("{kind}: decoded"),
    }
}

pub(super) fn round_trip<T: Encode + Decode + PartialEq + fmt::Debug>(x: &T) {
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
    want.extend([2, 0, 1, 0, 1, 0]);
    want.extend(1122u64.to_le_bytes());
    assert_eq!(&bytes[..HEADER_LEN], &want[..]);
    // A trivial ciphertext's tag is none (zero); then a = 0 and b.
    let body = HEADER_LEN + KEY_TAG_LEN;
    assert!(bytes[HEADER_LEN..body + 2 * 556].iter().all(|&b| b == 0));
    assert_eq!(&bytes[body + 2 * 556..], &[0x00, 0x20]);

    let k = sk(set, 5);
    let b = k.encode();
    assert_eq!(&b[HEADER_LEN..body], &k.tag().to_bytes());
    for (i, &x) in k.lwe().iter().chain(k.ring()).enumerate() {
        assert_eq!(b[body + i], [0u8, 1, 2][((x + 3) % 3) as usize], "0 -> 0, +1 -> 1, -1 -> 2");
    }
    let e = ext(ParamSet::PN11QP54, 3);
    let b = e.encode();
    assert_eq!(&b[6..12], &[2, 0, 2, 0, 2, 0]);
    assert_eq!(&b[HEADER_LEN..body], &e.tag().to_bytes());
    assert_eq!(&b[body..body + 8], &e.as_words()[0].to_le_bytes());
}

/// The sizes `docs/FORMAT.md` states.
#[test]
fn body_lengths_match_the_documented_table() {
    use ObjectKind::*;
    let table: [(ParamSet, [u64; 5]); 3] = [
        (ParamSet::PN10QP27, [1_122, 4_108, 1_588, 10_906, 36_628_520]),
        (ParamSet::PN11QP54, [1_122, 16_400, 2_612, 10_906, 182_571_048]),
        (ParamSet::PN10QP25Q, [1_206, 4_108, 1_630, 11_702, 49_178_664]),
    ];
    for (set, lens) in table {
        for (kind, len) in [LweCiphertext, ExtractedLwe, SecretKey, PublicKey, EvaluationKey].into_iter().zip(lens) {
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
                // Same layout (e.g. PN10QP27 and PN11QP54 share the LWE side): a public
                // key's tag is not the one the other set derives from its seed; a
                // ciphertext or secret key is read under the other set's bounds and is
                // labelled with it, and refused when it meets that set's keys (tag_tests).
                match decode_as(*kind, &b) {
                    Err(Error::WrongKey { .. }) if *kind == ObjectKind::PublicKey => {}
                    Ok(()) if *kind != ObjectKind::PublicKey => assert_eq!(peek_header(&b).unwrap().params, other),
                    Err(Error::Decode(DecodeError::OutOfRange { .. })) if *kind != ObjectKind::PublicKey => {}
                    r => panic!("{kind} {set} as {other}: {r:?}"),
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
    let bsk_at = HEADER_LEN + KEY_TAG_LEN + SEED_LEN;
    let ksk_at = bsk_at + 4 * p.bsk_b_len();
    for (i, value) in [(0usize, p.q_ring()), (p.bsk_b_len() / 2, u32::MAX as u64), (p.bsk_b_len() - 1, p.q_ring())] {
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
        let at = HEADER_LEN + KEY_TAG_LEN + 8 * i;
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
        version in prop_oneof![Just(1u16), Just(FORMAT_VERSION), any::<u16>()],
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
                Err(Error::Decode(DecodeError::UnsupportedVersion { found, supported: FORMAT_VERSION })) if found == version
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
        let mut m = Mix::new(seed);
        b.extend((0..kind.body_len(*set)).map(|_| m.next() as u8));
        let _ = decode_as(*kind, &b);
    }

    #[test]
    fn other_versions_are_unsupported(i in sample_strategy(), version in any::<u16>()) {
        prop_assume!(version != FORMAT_VERSION);
        let (kind, _, bytes) = &small_samples()[i];
        let mut b = bytes.clone();
        b[VERSION_AT..VERSION_AT + 2].copy_from_slice(&version.to_le_bytes());
        let want = DecodeError::UnsupportedVersion { found: version, supported: FORMAT_VERSION };
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
        let at = HEADER_LEN + KEY_TAG_LEN + 2 * i;
        b[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
        let want = DecodeError::OutOfRange { index: i, value: value as u64, bound: 1 << 15 };
        prop_assert_eq!(decode_err(ObjectKind::LweCiphertext, &b), want);
        let mut b = cached(ObjectKind::PublicKey, set);
        let j = idx.index(p.pk_samples);
        let at = HEADER_LEN + KEY_TAG_LEN + SEED_LEN + 2 * j;
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
        let at = HEADER_LEN + KEY_TAG_LEN + 4 * i;
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
        b[HEADER_LEN + KEY_TAG_LEN + i] = value;
        let want = DecodeError::OutOfRange { index: i, value: value as u64, bound: 3 };
        prop_assert_eq!(decode_err(ObjectKind::SecretKey, &b), want);
    }

    #[test]
    fn truncated_evaluation_keys_are_truncated(
        len in prop_oneof![0usize..64, 0usize..36_628_540, 36_628_500usize..36_628_540],
    ) {
        let b = ek_bytes();
        prop_assert_eq!(b.len(), 36_628_540);
        let needed = if len < HEADER_LEN { HEADER_LEN } else { b.len() };
        let want = DecodeError::Truncated { needed, have: len };
        prop_assert_eq!(decode_err(ObjectKind::EvaluationKey, &b[..len]), want);
    }
}

/// CBOR (ciborium) reads objects far above its 4 KiB borrowed-bytes scratch: the
/// `Deserialize` impls ask for owned byte buffers (issue 27's failure was every object
/// over 4 KiB).
#[test]
fn cbor_round_trips_objects_over_4_kib() {
    fn cbor<T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug>(x: &T) {
        let mut bytes = Vec::new();
        ciborium::into_writer(x, &mut bytes).unwrap();
        assert_eq!(&ciborium::from_reader::<T, _>(&bytes[..]).unwrap(), x);
    }
    for set in ParamSet::ALL {
        cbor(&ct(set, 1));
        cbor(&ext(set, 2));
        cbor(&pk(set, 3));
        cbor(&sk(set, 4));
    }
    cbor(&ek(ParamSet::PN10QP27, 5));
}
