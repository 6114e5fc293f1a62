//! The composed kinds' format tests ([`KeySet`], [`UintBits`]): round trips, the layout,
//! refusals, and random bytes that never panic.

use proptest::prelude::*;

use super::header::{BODY_LEN_AT, KIND_AT, PARAMS_AT};
use super::tests::{test_tag, Mix};
use super::*;
use crate::tag::KeyTag;
use crate::tfhe::entities::{EvaluationKey, KeySet, LweCiphertext, PublicKey, SecretKey};
use crate::tfhe::params::ParamSet;

fn keys(set: ParamSet, seed: u64) -> KeySet {
    let p = set.params();
    let mut m = Mix::new(seed);
    // One key set: the three keys share its public seed, hence its tag.
    let public_seed = m.seed();
    let sk =
        SecretKey::from_raw(set, KeyTag::derive(set, &public_seed), m.ternary(p.n()), m.ternary(p.big_n())).unwrap();
    let lwe = |m: &mut Mix, len: usize| (0..len).map(|_| m.below(p.q_lwe()) as u32).collect::<Vec<_>>();
    let pk = PublicKey::from_raw(set, public_seed, lwe(&mut m, p.pk_samples)).unwrap();
    let bsk = (0..p.bsk_b_len()).map(|_| m.below(p.q_ring())).collect();
    let ek = EvaluationKey::from_raw(set, public_seed, bsk, lwe(&mut m, p.ksk_samples())).unwrap();
    KeySet { sk, pk, ek }
}

fn bits(set: ParamSet, width: usize, seed: u64) -> Vec<LweCiphertext> {
    let p = set.params();
    let mut m = Mix::new(seed);
    (0..width)
        .map(|_| {
            let words = (0..=p.n()).map(|_| m.below(p.q_lwe()) as u32).collect();
            LweCiphertext::from_raw(set, test_tag(set, seed), words).unwrap()
        })
        .collect()
}

fn decode_err<T: Decode + std::fmt::Debug>(bytes: &[u8]) -> DecodeError {
    match T::decode(bytes) {
        Err(Error::Decode(d)) => d,
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn key_sets_round_trip_as_their_three_encodings() {
    for set in ParamSet::ALL {
        let k = keys(set, set.id() as u64);
        let bytes = k.encode_zeroizing();
        assert_eq!(bytes.len(), k.encoded_len());
        // The body is exactly the three keys' own encodings, in order.
        let mut parts = k.sk.encode();
        parts.extend(k.pk.encode());
        parts.extend(k.ek.encode());
        assert_eq!(&bytes[HEADER_LEN..], &parts[..], "{set}");
        assert_eq!(u16::from_le_bytes([bytes[KIND_AT], bytes[KIND_AT + 1]]), ComposedKind::KeySet.id());
        let back = KeySet::decode(&bytes).unwrap();
        assert!(back.sk == k.sk && back.pk == k.pk && back.ek == k.ek, "{set}");
        assert_eq!(&back.encode_zeroizing()[..], &bytes[..], "canonical");
        // A bit-scheme reader names what it was given.
        let e = peek_header(&bytes).unwrap_err().to_string();
        assert!(e.contains("KeySet (a composed object"), "{e}");
    }
}

#[test]
fn key_set_refusals() {
    let set = ParamSet::PN10QP27;
    let bytes = keys(set, 1).encode_zeroizing().to_vec();
    let len = bytes.len();
    assert_eq!(decode_err::<KeySet>(&bytes[..len - 1]), DecodeError::Truncated { needed: len, have: len - 1 });
    let mut b = bytes.clone();
    b.push(0);
    assert_eq!(decode_err::<KeySet>(&b), DecodeError::TrailingBytes { extra: 1 });
    // Relabelled as another set: the length is not that set's.
    let mut b = bytes.clone();
    b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&ParamSet::PN11QP54.id().to_le_bytes());
    assert!(matches!(decode_err::<KeySet>(&b), DecodeError::BadLength { .. }));
    // Another kind, either way round.
    assert!(matches!(decode_err::<KeySet>(&keys(set, 1).ek.encode()), DecodeError::WrongKind { .. }));
    assert!(matches!(decode_err::<EvaluationKey>(&bytes), DecodeError::WrongKind { .. }));
    // A bad word inside a part is the part's own refusal.
    let mut b = bytes.clone();
    b[2 * HEADER_LEN + KEY_TAG_LEN + 5] = 7; // past the secret key's tag
    assert_eq!(decode_err::<KeySet>(&b), DecodeError::OutOfRange { index: 5, value: 7, bound: 3 });
    // Keys of two key sets (each part valid on its own) are one key set's or refused.
    let (k1, k2) = (keys(set, 1), keys(set, 2));
    let mut mixed = bytes[..HEADER_LEN].to_vec();
    mixed.extend(k1.sk.encode());
    mixed.extend(k2.pk.encode());
    mixed.extend(k1.ek.encode());
    assert!(matches!(KeySet::decode(&mixed), Err(Error::WrongKey { .. })));
    // A huge claimed length is refused by comparison, before any allocation.
    let mut b = bytes[..HEADER_LEN].to_vec();
    b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(decode_err::<KeySet>(&b), DecodeError::BadLength { .. }));
}

#[test]
fn encrypted_integers_round_trip_at_every_width_class() {
    for set in ParamSet::ALL {
        for width in [1, 8, 13, MAX_UINT_BITS] {
            let u = UintBits::new(bits(set, width, width as u64)).unwrap();
            let bytes = u.encode();
            assert_eq!(bytes.len(), u.encoded_len());
            assert_eq!(bytes.len(), HEADER_LEN + UINT_WIDTH_LEN + width * u.bits()[0].encoded_len());
            assert_eq!(&bytes[HEADER_LEN..HEADER_LEN + 4], &(width as u32).to_le_bytes());
            assert_eq!(&bytes[HEADER_LEN + 4..HEADER_LEN + 4 + u.bits()[0].encoded_len()], &u.bits()[0].encode()[..]);
            assert_eq!(encode_uint_bits(u.bits()).unwrap(), bytes);
            assert_eq!(UintBits::decode(&bytes).unwrap(), u, "{set} {width}");
        }
    }
}

#[test]
fn encrypted_integer_refusals() {
    let set = ParamSet::PN10QP27;
    assert!(matches!(UintBits::new(Vec::new()), Err(Error::InvalidInput(_))));
    assert!(matches!(UintBits::new(bits(set, MAX_UINT_BITS + 1, 0)), Err(Error::InvalidInput(_))));
    let mut mixed = bits(set, 3, 0);
    mixed.extend(bits(ParamSet::PN11QP54, 1, 0));
    assert!(matches!(UintBits::new(mixed.clone()), Err(Error::ParamMismatch { .. })));
    assert!(matches!(encode_uint_bits(&mixed), Err(Error::ParamMismatch { .. })));
    assert!(matches!(encode_uint_bits(&[]), Err(Error::InvalidInput(_))));

    let bytes = UintBits::new(bits(set, 8, 1)).unwrap().encode();
    for width in [0u32, MAX_UINT_BITS as u32 + 1, u32::MAX] {
        let mut b = bytes.clone();
        b[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&width.to_le_bytes());
        let e = decode_err::<UintBits>(&b).to_string();
        assert!(e.contains(&format!("width {width}")), "{e}");
    }
    // A width that disagrees with the length field.
    let mut b = bytes.clone();
    b[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&7u32.to_le_bytes());
    assert!(matches!(decode_err::<UintBits>(&b), DecodeError::BadLength { .. }));
    assert!(matches!(decode_err::<UintBits>(&bytes[..HEADER_LEN + 2]), DecodeError::Truncated { .. }));
    // A bit of another kind inside.
    let mut b = bytes.clone();
    b[HEADER_LEN + 4 + KIND_AT] = ObjectKind::ExtractedLwe.id() as u8;
    assert!(matches!(decode_err::<UintBits>(&b), DecodeError::WrongKind { .. }));
}

#[test]
fn composed_kinds_round_trip_through_json_and_cbor() {
    let set = ParamSet::PN10QP27;
    let k = keys(set, 3);
    let u = UintBits::new(bits(set, 4, 3)).unwrap();
    let back: KeySet = serde_json::from_str(&serde_json::to_string(&k).unwrap()).unwrap();
    assert!(back.sk == k.sk && back.ek == k.ek);
    assert_eq!(serde_json::from_str::<UintBits>(&serde_json::to_string(&u).unwrap()).unwrap(), u);
    let mut cbor = Vec::new();
    ciborium::into_writer(&k, &mut cbor).unwrap();
    let back: KeySet = ciborium::from_reader(&cbor[..]).unwrap();
    assert!(back.pk == k.pk && back.ek == k.ek);
    cbor.clear();
    ciborium::into_writer(&u, &mut cbor).unwrap();
    assert_eq!(ciborium::from_reader::<UintBits, _>(&cbor[..]).unwrap(), u);
}

fn composed_kind() -> impl Strategy<Value = ComposedKind> {
    prop::sample::select(ComposedKind::ALL.to_vec())
}

fn decode_as(kind: ComposedKind, bytes: &[u8]) -> Result<()> {
    match kind {
        ComposedKind::KeySet => KeySet::decode(bytes).map(drop),
        ComposedKind::FheUint => UintBits::decode(bytes).map(drop),
        ComposedKind::CkksEvalKeys => crate::ckks::EvalKeys::decode(bytes).map(drop),
    }
}

proptest! {
    #[test]
    fn random_composed_headers_never_panic_nor_allocate(
        kind in composed_kind(),
        kind_id in prop_oneof![11u16..=13, any::<u16>()],
        set_id in prop_oneof![1u16..=3, 101u16..=104, any::<u16>()],
        body_len in prop_oneof![Just(u64::MAX), any::<u64>(), 0u64..20_000],
        width in prop_oneof![0u32..=300, any::<u32>()],
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut b = MAGIC.to_vec();
        b.extend(FORMAT_VERSION.to_le_bytes());
        b.extend(kind_id.to_le_bytes());
        b.extend(set_id.to_le_bytes());
        b.extend(body_len.to_le_bytes());
        b.extend(width.to_le_bytes());
        b.extend(&tail);
        prop_assert!(decode_as(kind, &b).is_err());
    }

    #[test]
    fn valid_composed_prefixes_with_random_bodies_never_panic(
        set in prop::sample::select(ParamSet::ALL.to_vec()),
        width in 1usize..=3,
        seed in any::<u64>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let u = UintBits::new(bits(set, width, seed)).unwrap().encode();
        let mut m = Mix::new(seed);
        // Random words after a valid header and width: whole bit encodings of noise.
        let mut b = u[..HEADER_LEN + UINT_WIDTH_LEN].to_vec();
        b.extend((HEADER_LEN + UINT_WIDTH_LEN..u.len()).map(|_| m.next() as u8));
        let _ = decode_as(ComposedKind::FheUint, &b);
        // A valid integer with a few bytes changed anywhere.
        let mut b = u.clone();
        for (i, v) in &flips {
            let i = i.index(b.len());
            b[i] = *v;
        }
        if let Ok(back) = UintBits::decode(&b) {
            prop_assert_eq!(back.bits().len(), width);
        }
    }
}
