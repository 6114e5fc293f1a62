//! The CKKS reader's refusals: truncated, relabelled (kind, preset, level, length),
//! out-of-range and malformed bytes, each with the error that names it, and property
//! tests that random headers, truncations and bit flips never panic. The largest
//! allocation of a refused decode is measured, so a header claiming a huge level or
//! length is seen refused before anything is allocated.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;

use super::ckks_tests::{
    ct, decode_as, decode_err, invalid_containing, pk, reencode, samples, sk, small_samples, swk, PRESETS, SMALL,
};
use super::header::{BODY_LEN_AT, KIND_AT, PARAMS_AT, VERSION_AT};
use super::*;
use crate::ckks::entities::{SwitchKind, SwitchingKey};
use crate::ckks::params::Preset;

/// Forwards to the system allocator and records, per thread, the largest single request.
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // A const-initialized Cell without a destructor: reading it never allocates, and
    // `try_with` covers allocations during thread teardown.
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the bookkeeping only touches a thread-local `Cell`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: `ptr` came from this allocator, which is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `f` returns, and the largest single allocation it made on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|c| c.set(0));
    let r = f();
    (r, LARGEST.with(|c| c.get()))
}

/// A refused decode allocates an error message and little else.
const SMALL_ALLOCATION: usize = 4096;
#[test]
fn short_truncations_are_truncated() {
    for &(kind, preset, ref bytes) in samples() {
        let prefix = HEADER_LEN + if kind.is_leveled() { KEY_TAG_LEN + CKKS_LEVEL_PREFIX_LEN } else { 0 };
        for len in (0..prefix + 64).chain([bytes.len() - 1]) {
            let needed = match len {
                l if l < HEADER_LEN => HEADER_LEN,
                l if l < prefix => prefix,
                _ => bytes.len(),
            };
            assert_eq!(
                decode_err(kind, &bytes[..len]),
                DecodeError::Truncated { needed, have: len },
                "{kind} {preset}"
            );
        }
    }
}

#[test]
fn relabelled_headers_are_refused() {
    for &(kind, preset, ref bytes) in samples() {
        let mut b = bytes.clone();
        for other in (0u16..=12).chain([101, 0xFFFF]).filter(|&k| k != kind.id()) {
            b[KIND_AT..KIND_AT + 2].copy_from_slice(&other.to_le_bytes());
            assert!(matches!(decode_err(kind, &b), DecodeError::WrongKind { .. }), "{kind} as {other}");
        }
        let mut b = bytes.clone();
        for id in [0u16, 1, 2, 3, 100, 106, 0xFFFF] {
            b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&id.to_le_bytes());
            assert_eq!(decode_err(kind, &b), DecodeError::UnknownParamSet(id), "bit-scheme set ids are not presets");
            assert!(peek_ckks_header(&b).is_err());
        }
        for other in Preset::ALL.into_iter().filter(|&p| p != preset) {
            // Another preset has another N, so no length (and no level) matches.
            b[PARAMS_AT..PARAMS_AT + 2].copy_from_slice(&other.id().to_le_bytes());
            let e = decode_err(kind, &b);
            assert!(matches!(e, DecodeError::BadLength { .. } | DecodeError::Invalid(_)), "{kind} {preset}: {e}");
        }
        for delta in [1i64, -1, 8, -8, 1 << 40] {
            let mut b = bytes.clone();
            let len = (bytes.len() - HEADER_LEN) as i64 + delta;
            b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&(len as u64).to_le_bytes());
            let expected = (bytes.len() - HEADER_LEN) as u64;
            let want = DecodeError::BadLength { params: preset.name(), expected, found: len as u64 };
            assert_eq!(decode_err(kind, &b), want, "{kind} {preset}");
        }
        for (i, bit) in [(0, 0), (5, 7), (7, 1)] {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            assert!(matches!(decode_err(kind, &b), DecodeError::BadMagic | DecodeError::UnsupportedVersion { .. }));
        }
        let mut b = bytes.clone();
        // Version 1 (before key tags; CKKS bodies are unchanged, but the header version
        // is shared) is refused by version.
        b[VERSION_AT] = 1;
        assert_eq!(decode_err(kind, &b), DecodeError::UnsupportedVersion { found: 1, supported: FORMAT_VERSION });
        let h = peek_ckks_header(bytes).unwrap();
        assert_eq!((h.kind, h.preset, h.version, h.total_len()), (kind, preset, FORMAT_VERSION, bytes.len() as u64));
    }
}

#[test]
fn relabelled_levels_are_refused() {
    for preset in PRESETS {
        let top = preset.params().max_level() as u32;
        for kind in [CkksObjectKind::Ciphertext, CkksObjectKind::Plaintext] {
            let bytes = samples().iter().find(|s| (s.0, s.1) == (kind, preset)).unwrap().2.clone();
            let level = u32::from_le_bytes(bytes[28..32].try_into().unwrap());
            for other in (0..=top).filter(|&l| l != level) {
                // The level disagrees with the length field: refused as a bad length.
                let mut b = bytes.clone();
                b[28..32].copy_from_slice(&other.to_le_bytes());
                let expected = kind.body_len(preset, other as usize).unwrap();
                let found = (bytes.len() - HEADER_LEN) as u64;
                assert_eq!(decode_err(kind, &b), DecodeError::BadLength { params: preset.name(), expected, found });
                // Level and length field agree but the input does not.
                b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&expected.to_le_bytes());
                let e = decode_err(kind, &b);
                assert!(matches!(e, DecodeError::Truncated { .. } | DecodeError::TrailingBytes { .. }), "{e}");
                assert_eq!(peek_ckks_header(&b).unwrap().level, Some(other as usize));
            }
            for other in [top + 1, 1 << 16, u32::MAX] {
                let mut b = bytes.clone();
                b[28..32].copy_from_slice(&other.to_le_bytes());
                invalid_containing(kind, &b, "top level");
            }
        }
    }
}

#[test]
fn huge_claims_are_refused_before_allocating() {
    for p in Preset::ALL {
        // Generating a chain allocates; do it before measuring.
        let _ = p.params();
    }
    let big = Preset::Slots32768Scale40Depth34;
    let header = |kind: CkksObjectKind, body_len: u64| {
        let mut b = MAGIC.to_vec();
        b.extend(1u16.to_le_bytes());
        b.extend(kind.id().to_le_bytes());
        b.extend(big.id().to_le_bytes());
        b.extend(body_len.to_le_bytes());
        b
    };
    let top = CkksObjectKind::Ciphertext.body_len(big, 34).unwrap();
    let mut cases = Vec::new();
    for level in [34u32, 35, u32::MAX] {
        for body_len in [top, u64::MAX, 0] {
            let mut b = header(CkksObjectKind::Ciphertext, body_len);
            b.extend(level.to_le_bytes());
            b.extend(1e12f64.to_bits().to_le_bytes());
            cases.push((CkksObjectKind::Ciphertext, b));
        }
    }
    let swk_len = CkksObjectKind::SwitchingKey.body_len(big, 0).unwrap();
    for body_len in [swk_len, u64::MAX] {
        let mut b = header(CkksObjectKind::SwitchingKey, body_len);
        b.extend([0u8; 44]);
        cases.push((CkksObjectKind::SwitchingKey, b));
    }
    // The counter counts: a valid decode allocates its words.
    let (_, largest) = largest_allocation(|| decode_as(CkksObjectKind::Ciphertext, &samples()[0].2));
    assert!(largest >= 2 * 8192 * 8, "{largest}");
    for (kind, b) in cases {
        let (r, largest) = largest_allocation(|| decode_as(kind, &b));
        assert!(r.is_err(), "{kind}");
        assert!(largest < SMALL_ALLOCATION, "{kind}: {largest} bytes allocated for {:?}", r);
        let (r, largest) = largest_allocation(|| peek_ckks_header(&b));
        assert!(largest < SMALL_ALLOCATION, "peek {kind}: {largest} bytes for {r:?}");
    }
}

#[test]
fn bad_scales_are_refused() {
    let bytes = &samples()[0].2;
    for scale in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, -1e12, f64::from_bits(u64::MAX)] {
        let mut b = bytes.clone();
        b[32..40].copy_from_slice(&scale.to_bits().to_le_bytes());
        invalid_containing(CkksObjectKind::Ciphertext, &b, "finite, normal");
    }
    // A subnormal scale, and one at or above half the modulus of its level.
    for scale in [f64::MIN_POSITIVE / 4.0, 2f64.powi(-70), 2f64.powi(200), 2f64.powi(1000)] {
        let mut b = bytes.clone();
        b[32..40].copy_from_slice(&scale.to_bits().to_le_bytes());
        assert!(decode_as(CkksObjectKind::Ciphertext, &b).is_err(), "{scale:e}");
    }
}

/// Degenerate keys are refused at decode, as at construction: a public key or a switching
/// key with an all-zero limb of `b` (with `b = 0`, an encryption's `c0` would carry the
/// message readable), and a key or ciphertext with the tag of no key.
#[test]
fn degenerate_keys_and_missing_tags_are_refused() {
    let key = pk(SMALL, 4);
    let mut b = key.try_encode().unwrap();
    let n = key.params().n();
    let words = HEADER_LEN + KEY_TAG_LEN + SEED_LEN;
    b[words..words + 8 * n].fill(0);
    invalid_containing(CkksObjectKind::PublicKey, &b, "all zero");
    b[words..].fill(0);
    invalid_containing(CkksObjectKind::PublicKey, &b, "all zero");
    let mut b = swk(SMALL, SwitchKind::Relin, 3).try_encode().unwrap();
    let words = HEADER_LEN + KEY_TAG_LEN + CKKS_SWITCH_PREFIX_LEN + SEED_LEN;
    b[words..].fill(0);
    invalid_containing(CkksObjectKind::SwitchingKey, &b, "all zero");
    for &(kind, _, ref bytes) in samples() {
        let mut b = bytes.clone();
        b[HEADER_LEN..HEADER_LEN + KEY_TAG_LEN].fill(0);
        match kind {
            CkksObjectKind::Plaintext => assert!(decode_as(kind, &b).is_ok(), "an encoded plaintext has no key"),
            _ => invalid_containing(kind, &b, "key tag zero"),
        }
    }
    // A public key relabelled to another key set's tag.
    let mut b = pk(SMALL, 4).try_encode().unwrap();
    b[HEADER_LEN] ^= 1;
    invalid_containing(CkksObjectKind::PublicKey, &b, "its public seed gives");
}

#[test]
fn words_out_of_range_are_located() {
    let preset = Preset::Slots8192Scale40Depth6;
    let p = preset.params();
    let (n, q) = (p.n(), |i: usize| p.q()[i].0);
    let c = ct(preset, 2, 1).try_encode().unwrap();
    let words_at = HEADER_LEN + KEY_TAG_LEN + CKKS_LEVEL_PREFIX_LEN;
    // c0 limb 0, c0 limb 2 (its last word), c1 limb 0: the index runs on through c1.
    for (i, value, bound) in [(0, q(0), q(0)), (3 * n - 1, u64::MAX, q(2)), (3 * n, q(0) + 1, q(0))] {
        let mut b = c.clone();
        b[words_at + 8 * i..][..8].copy_from_slice(&value.to_le_bytes());
        assert_eq!(decode_err(CkksObjectKind::Ciphertext, &b), DecodeError::OutOfRange { index: i, value, bound });
    }
    // Switching key: limb L + 1 is p_0; limb L + 1 + K starts the second digit at q_0.
    let k = swk(preset, SwitchKind::Relin, 2).try_encode().unwrap();
    let words_at = HEADER_LEN + KEY_TAG_LEN + CKKS_SWITCH_PREFIX_LEN + SEED_LEN;
    let (l1, kp) = (p.q().len(), p.p().len());
    for (limb, bound) in [(l1, p.p()[0].0), (l1 + kp, q(0)), (l1 + kp - 1, p.p()[kp - 1].0)] {
        let mut b = k.clone();
        b[words_at + 8 * limb * n..][..8].copy_from_slice(&bound.to_le_bytes());
        let want = DecodeError::OutOfRange { index: limb * n, value: bound, bound };
        assert_eq!(decode_err(CkksObjectKind::SwitchingKey, &b), want);
    }
    let mut b = pk(preset, 3).try_encode().unwrap();
    let at = HEADER_LEN + KEY_TAG_LEN + SEED_LEN + 8 * (l1 * n - 1);
    b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let want = DecodeError::OutOfRange { index: l1 * n - 1, value: u64::MAX, bound: q(l1 - 1) };
    assert_eq!(decode_err(CkksObjectKind::PublicKey, &b), want);
}

#[test]
fn bad_secret_keys_are_refused() {
    let mut b = sk(SMALL, 1).try_encode().unwrap();
    let at = HEADER_LEN + KEY_TAG_LEN;
    for (i, value) in [(0usize, 3u8), (4000, 0xFF), (8191, 128)] {
        let old = b[at + i];
        b[at + i] = value;
        let want = DecodeError::OutOfRange { index: i, value: value as u64, bound: 3 };
        assert_eq!(decode_err(CkksObjectKind::SecretKey, &b), want);
        b[at + i] = old;
    }
    b[at..].fill(0);
    invalid_containing(CkksObjectKind::SecretKey, &b, "all-zero");
}

#[test]
fn bad_switching_key_kinds_are_refused() {
    let bytes = swk(SMALL, SwitchKind::Galois(5), 1).try_encode().unwrap();
    for (tag, g) in [(0u32, 5u64), (1, 0), (1, 4), (1, 2 * 8192 + 1), (1, u64::MAX), (2, 0), (u32::MAX, 5)] {
        let mut b = bytes.clone();
        b[28..32].copy_from_slice(&tag.to_le_bytes());
        b[32..40].copy_from_slice(&g.to_le_bytes());
        invalid_containing(CkksObjectKind::SwitchingKey, &b, "switching-key kind");
    }
    let mut b = bytes.clone();
    b[28..40].copy_from_slice(&[0; 12]);
    assert_eq!(SwitchingKey::decode(&b).unwrap().kind(), SwitchKind::Relin);
}

fn sample_strategy() -> impl Strategy<Value = usize> {
    0..small_samples().len()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_headers_never_panic_nor_allocate(
        kind in prop::sample::select(CkksObjectKind::ALL.to_vec()),
        version in prop_oneof![Just(1u16), any::<u16>()],
        kind_id in prop_oneof![6u16..=10, any::<u16>()],
        preset_id in prop_oneof![101u16..=104, any::<u16>()],
        body_len in prop_oneof![Just(u64::MAX), any::<u64>(), 0u64..200_000_000],
        level in prop_oneof![0u32..40, any::<u32>()],
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut b = MAGIC.to_vec();
        b.extend(version.to_le_bytes());
        b.extend(kind_id.to_le_bytes());
        b.extend(preset_id.to_le_bytes());
        b.extend(body_len.to_le_bytes());
        b.extend(level.to_le_bytes());
        b.extend(&tail);
        // No valid object is this short, so everything is refused, and before any body.
        let (r, largest) = largest_allocation(|| decode_as(kind, &b));
        prop_assert!(r.is_err());
        prop_assert!(largest < SMALL_ALLOCATION, "{} bytes for {:?}", largest, r);
        let (_, largest) = largest_allocation(|| peek_ckks_header(&b));
        prop_assert!(largest < SMALL_ALLOCATION);
    }

    #[test]
    fn truncations_are_truncated(i in sample_strategy(), cut in any::<prop::sample::Index>()) {
        let &(kind, _, ref bytes) = small_samples()[i];
        let prefix = HEADER_LEN + KEY_TAG_LEN + CKKS_LEVEL_PREFIX_LEN;
        let len = prefix + cut.index(bytes.len() - prefix);
        let (e, largest) = largest_allocation(|| decode_err(kind, &bytes[..len]));
        prop_assert_eq!(e, DecodeError::Truncated { needed: bytes.len(), have: len });
        prop_assert!(largest < SMALL_ALLOCATION);
    }

    #[test]
    fn bit_flips_are_refused_or_canonical(
        i in sample_strategy(),
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        // Header and prefixes first: that is where a flip changes the most.
        let &(kind, _, ref bytes) = small_samples()[i];
        let mut b = bytes.clone();
        let at = if bit % 2 == 0 { at.index(HEADER_LEN + 52) } else { at.index(b.len()) };
        b[at] ^= 1 << bit;
        // A flip that still decodes (a word still below its prime, a scale still
        // positive) is another valid object, and the encoding of that object is exactly
        // the flipped bytes.
        if let Some(again) = reencode(kind, &b) {
            prop_assert_eq!(again, b);
        }
    }

    #[test]
    fn appended_bytes_are_trailing(i in sample_strategy(), extra in prop::collection::vec(any::<u8>(), 1..40)) {
        let &(kind, _, ref bytes) = small_samples()[i];
        let mut b = bytes.clone();
        b.extend(&extra);
        prop_assert_eq!(decode_err(kind, &b), DecodeError::TrailingBytes { extra: extra.len() });
    }
}

/// A CBOR array header claiming 2^40 bytes reserves at most the visitor's 64 KiB before
/// the (absent) bytes are read, for every object kind (issue 27: it reserved an
/// evaluation key's 174 MiB).
#[test]
fn a_huge_cbor_length_claim_reserves_little() {
    // Major type 4 (array), 8-byte length 2^40, then nothing.
    let mut claim = vec![0x9b];
    claim.extend_from_slice(&(1u64 << 40).to_be_bytes());
    let (r, largest) = largest_allocation(|| ciborium::from_reader::<crate::EvaluationKey, _>(&claim[..]));
    assert!(r.is_err());
    assert!(largest <= 1 << 17, "reserved {largest} bytes on a claim");
    let (r, largest) =
        largest_allocation(|| ciborium::from_reader::<crate::ckks::entities::SwitchingKey, _>(&claim[..]));
    assert!(r.is_err());
    assert!(largest <= 1 << 17, "reserved {largest} bytes on a claim");
}

/// A public key in the layout of builds before issue 28 closed (`L + 1` limbs, no
/// `p_0`) is refused by its length, naming the length this build needs.
#[test]
fn public_keys_without_the_special_limb_are_refused() {
    let key = pk(SMALL, 4);
    let bytes = key.try_encode().unwrap();
    let n = key.params().n();
    let old_body = (bytes.len() - HEADER_LEN - 8 * n) as u64;
    let mut b = bytes[..bytes.len() - 8 * n].to_vec();
    b[BODY_LEN_AT..HEADER_LEN].copy_from_slice(&old_body.to_le_bytes());
    let want =
        DecodeError::BadLength { params: SMALL.name(), expected: (bytes.len() - HEADER_LEN) as u64, found: old_body };
    assert_eq!(decode_err(CkksObjectKind::PublicKey, &b), want);
}
