//! The CKKS format tests: round trips of every kind on two presets (random words; the
//! keys keygen makes round-trip in `fhe_schemes::ckks::keygen`), pinned layouts and sizes, refusal of custom parameters at
//! encode, cross-scheme refusal and serde. The builders here are shared with
//! `ckks_refusal_tests`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::de::Deserialize;

use super::tests::Mix;
use super::*;
use crate::ckks::entities::{HostCiphertext, Plaintext, PublicKey, SecretKey, SwitchKind, SwitchingKey};
use crate::ckks::meta::CkksMeta;
use crate::ckks::params::{Params, ParamsLiteral, Preset};
use crate::ckks::scale::Scale;
use crate::tag::KeyTag;
use crate::tfhe::entities::LweCiphertext;

pub(super) const SMALL: Preset = Preset::Slots4096Scale40Depth2;
pub(super) const PRESETS: [Preset; 2] = [SMALL, Preset::Slots8192Scale40Depth6];

pub(super) fn params(preset: Preset) -> Arc<Params> {
    Arc::new(preset.params().clone())
}

/// `limbs` limbs of uniform words, limb `i` below the `i`-th prime of QP (cyclically).
pub(super) fn words(m: &mut Mix, p: &Params, limbs: usize) -> Vec<u64> {
    let primes: Vec<u64> = p.q().iter().chain(p.p()).map(|q| q.0).collect();
    let mut out = Vec::with_capacity(limbs * p.n());
    for i in 0..limbs {
        let q = primes[i % primes.len()];
        out.extend((0..p.n()).map(|_| m.below(q)));
    }
    out
}

/// The tag of test key set `seed` under `p`.
pub(super) fn tag(p: &Params, seed: u64) -> KeyTag {
    p.key_tag(&Mix::new(seed ^ 0x7A6).seed())
}

pub(super) fn meta(p: &Arc<Params>, level: usize, scale: f64, tag: KeyTag) -> CkksMeta {
    CkksMeta::new(p.clone(), level, Scale::new(scale).unwrap(), tag).unwrap()
}

pub(super) fn ct(preset: Preset, level: usize, seed: u64) -> HostCiphertext {
    let p = params(preset);
    let mut m = Mix::new(seed);
    let scale = p.default_scale().value() * (1.0 + m.below(1 << 20) as f64 / (1u64 << 20) as f64);
    let (c0, c1) = (words(&mut m, &p, level + 1), words(&mut m, &p, level + 1));
    HostCiphertext::from_raw(meta(&p, level, scale, tag(&p, seed)), c0, c1).unwrap()
}

pub(super) fn pt(preset: Preset, level: usize, seed: u64) -> Plaintext {
    let p = params(preset);
    let mut m = Mix::new(seed);
    let coeffs = words(&mut m, &p, level + 1);
    // Every other plaintext belongs to a key set (a decryption), the rest to none.
    let t = if seed.is_multiple_of(2) { KeyTag::NONE } else { tag(&p, seed) };
    Plaintext::from_raw(meta(&p, level, 2f64.powi(30 + seed as i32 % 20), t), coeffs).unwrap()
}

pub(super) fn sk(preset: Preset, seed: u64) -> SecretKey {
    let p = params(preset);
    let s = Mix::new(seed).ternary(p.n());
    let t = tag(&p, seed);
    SecretKey::from_raw(p, t, s).unwrap()
}

pub(super) fn pk(preset: Preset, seed: u64) -> PublicKey {
    let p = params(preset);
    let mut m = Mix::new(seed);
    let s = m.seed();
    let b = words(&mut m, &p, PublicKey::limbs(&p));
    PublicKey::from_raw(p, s, b).unwrap()
}

pub(super) fn swk(preset: Preset, kind: SwitchKind, seed: u64) -> SwitchingKey {
    let p = params(preset);
    let mut m = Mix::new(seed);
    let s = m.seed();
    let limbs = p.digits(p.max_level()).len() * (p.q().len() + p.p().len());
    let b = words(&mut m, &p, limbs);
    let t = tag(&p, seed);
    SwitchingKey::from_raw(p, kind, t, s, b).unwrap()
}

/// Encodings of every kind on both presets (ciphertexts at level 1, plaintexts at 0).
pub(super) fn samples() -> &'static [(CkksObjectKind, Preset, Vec<u8>)] {
    static S: OnceLock<Vec<(CkksObjectKind, Preset, Vec<u8>)>> = OnceLock::new();
    S.get_or_init(|| {
        let mut v = Vec::new();
        for (i, preset) in PRESETS.into_iter().enumerate() {
            let i = i as u64 * 10;
            v.push((CkksObjectKind::Ciphertext, preset, ct(preset, 1, i).try_encode().unwrap()));
            v.push((CkksObjectKind::Plaintext, preset, pt(preset, 0, i + 1).try_encode().unwrap()));
            v.push((CkksObjectKind::SecretKey, preset, sk(preset, i + 2).try_encode().unwrap()));
            v.push((CkksObjectKind::PublicKey, preset, pk(preset, i + 3).try_encode().unwrap()));
            v.push((
                CkksObjectKind::SwitchingKey,
                preset,
                swk(preset, SwitchKind::Galois(5), i + 4).try_encode().unwrap(),
            ));
        }
        v
    })
}

/// The smaller preset's samples: cheap enough to copy in every proptest case.
pub(super) fn small_samples() -> Vec<&'static (CkksObjectKind, Preset, Vec<u8>)> {
    samples().iter().filter(|(_, p, _)| *p == SMALL).collect()
}

pub(super) fn decode_as(kind: CkksObjectKind, bytes: &[u8]) -> Result<()> {
    match kind {
        CkksObjectKind::Ciphertext => HostCiphertext::decode(bytes).map(drop),
        CkksObjectKind::Plaintext => Plaintext::decode(bytes).map(drop),
        CkksObjectKind::SecretKey => SecretKey::decode(bytes).map(drop),
        CkksObjectKind::PublicKey => PublicKey::decode(bytes).map(drop),
        CkksObjectKind::SwitchingKey => SwitchingKey::decode(bytes).map(drop),
    }
}

/// Decodes and re-encodes: `Some(encoding)` when `bytes` decode as `kind`.
pub(super) fn reencode(kind: CkksObjectKind, bytes: &[u8]) -> Option<Vec<u8>> {
    match kind {
        CkksObjectKind::Ciphertext => HostCiphertext::decode(bytes).ok().map(|x| x.try_encode().unwrap()),
        CkksObjectKind::Plaintext => Plaintext::decode(bytes).ok().map(|x| x.try_encode().unwrap()),
        CkksObjectKind::SecretKey => SecretKey::decode(bytes).ok().map(|x| x.try_encode().unwrap()),
        CkksObjectKind::PublicKey => PublicKey::decode(bytes).ok().map(|x| x.try_encode().unwrap()),
        CkksObjectKind::SwitchingKey => SwitchingKey::decode(bytes).ok().map(|x| x.try_encode().unwrap()),
    }
}

pub(super) fn decode_err(kind: CkksObjectKind, bytes: &[u8]) -> DecodeError {
    match decode_as(kind, bytes) {
        Err(Error::Decode(e)) => e,
        Err(e) => panic!("{kind}: not a decode error: {e}"),
        Ok(()) => panic!("{kind}: decoded"),
    }
}

pub(super) fn invalid_containing(kind: CkksObjectKind, bytes: &[u8], needle: &str) {
    match decode_err(kind, bytes) {
        DecodeError::Invalid(m) => assert!(m.contains(needle), "{kind}: {m}"),
        e => panic!("{kind}: {e}"),
    }
}

fn round_trip<T: TryEncode + Decode + PartialEq + fmt::Debug>(x: &T, level: Option<usize>) {
    let bytes = x.try_encode().unwrap();
    assert_eq!(bytes.len(), x.try_encoded_len().unwrap());
    assert_eq!(bytes.capacity(), bytes.len(), "encode must pre-size exactly");
    let back = T::decode(&bytes).unwrap();
    assert_eq!(&back, x);
    assert_eq!(back.try_encode().unwrap(), bytes, "encoding is canonical");
    let h = peek_ckks_header(&bytes).unwrap();
    assert_eq!((h.kind, h.level, h.total_len()), (T::KIND, level, bytes.len() as u64));
}

fn sk_round_trip(k: &SecretKey) {
    let bytes = k.try_encode_zeroizing().unwrap();
    assert_eq!(bytes.capacity(), bytes.len());
    let back = SecretKey::decode(&bytes).unwrap();
    assert_eq!((back.params(), back.coefficients()), (k.params(), k.coefficients()));
    assert_eq!(back.try_encode().unwrap(), *bytes);
    assert_eq!(peek_ckks_header(&bytes).unwrap().level, None);
}

#[test]
fn every_kind_round_trips_on_two_presets() {
    for preset in PRESETS {
        let p = preset.params();
        for level in 0..=p.max_level() {
            round_trip(&ct(preset, level, level as u64), Some(level));
            round_trip(&pt(preset, level, level as u64 + 7), Some(level));
        }
        sk_round_trip(&sk(preset, 1));
        round_trip(&pk(preset, 2), None);
        let conjugation = 2 * p.n() as u64 - 1;
        for kind in [SwitchKind::Relin, SwitchKind::Galois(5), SwitchKind::Galois(conjugation)] {
            round_trip(&swk(preset, kind, 3), None);
        }
    }
}

#[test]
fn layout_is_pinned() {
    let c = ct(SMALL, 1, 9);
    let b = c.try_encode().unwrap();
    let n = 8192;
    let body_len = 8 + 12 + 2 * 2 * n * 8;
    let mut want = b"LUXFHE".to_vec();
    want.extend([2, 0, 6, 0, 101, 0]);
    want.extend((body_len as u64).to_le_bytes());
    assert_eq!(&b[..HEADER_LEN], &want[..]);
    assert_eq!(b[20..28], c.tag().to_bytes(), "the key tag opens every CKKS body");
    assert_eq!(&b[28..32], &[1, 0, 0, 0], "level, u32");
    assert_eq!(b[32..40], c.scale().value().to_bits().to_le_bytes(), "scale, f64 bits");
    assert_eq!(b[40..48], c.c0()[0].to_le_bytes());
    assert_eq!(b[40 + 2 * n * 8..][..8], c.c1()[0].to_le_bytes(), "c1 follows c0's two limbs");
    assert_eq!(b.len(), HEADER_LEN + body_len);

    let k = swk(SMALL, SwitchKind::Relin, 4);
    let b = k.try_encode().unwrap();
    assert_eq!(&b[8..12], &[10, 0, 101, 0]);
    assert_eq!(b[20..28], k.tag().to_bytes());
    assert_eq!(&b[28..40], &[0; 12], "relinearization: kind 0, element 0");
    assert_eq!(&b[40..72], k.seed());
    assert_eq!(b[72..80], k.b()[0].to_le_bytes());

    let s = sk(SMALL, 5);
    let b = s.try_encode().unwrap();
    assert_eq!(b[20..28], s.tag().to_bytes());
    for (i, &x) in s.coefficients().iter().enumerate() {
        assert_eq!(b[HEADER_LEN + 8 + i], [0u8, 1, 2][((x + 3) % 3) as usize], "0 -> 0, +1 -> 1, -1 -> 2");
    }
    let p = pk(SMALL, 6);
    let b = p.try_encode().unwrap();
    assert_eq!(b[20..28], p.tag().to_bytes());
    assert_eq!((&b[28..60], &b[60..68]), (&p.seed()[..], &p.b()[0].to_le_bytes()[..]));
}

/// The sizes `docs/FORMAT.md` states: ciphertext and plaintext at level 0 and at the
/// top level, secret key, public key, switching key.
#[test]
fn body_lengths_match_the_documented_table() {
    use CkksObjectKind::*;
    let table: [(Preset, [u64; 7]); 4] = [
        (SMALL, [131_092, 393_236, 65_556, 196_628, 8_200, 262_184, 786_484]),
        (Preset::Slots8192Scale40Depth6, [262_164, 1_835_028, 131_092, 917_524, 16_392, 1_048_616, 4_718_644]),
        (Preset::Slots16384Scale40Depth14, [524_308, 7_864_340, 262_164, 3_932_180, 32_776, 4_194_344, 14_942_260]),
        (
            Preset::Slots32768Scale40Depth34,
            [1_048_596, 36_700_180, 524_308, 18_350_100, 65_544, 18_874_408, 125_829_172],
        ),
    ];
    for (preset, lens) in table {
        let top = preset.params().max_level();
        let got = [
            Ciphertext.body_len(preset, 0),
            Ciphertext.body_len(preset, top),
            Plaintext.body_len(preset, 0),
            Plaintext.body_len(preset, top),
            SecretKey.body_len(preset, 0),
            PublicKey.body_len(preset, 0),
            SwitchingKey.body_len(preset, 0),
        ];
        assert_eq!(got, lens.map(Some), "{preset}");
        assert_eq!(Ciphertext.body_len(preset, top + 1), None);
        assert_eq!(Ciphertext.encoded_len(preset, 0), Some(lens[0] + 20));
    }
    for kind in CkksObjectKind::ALL {
        assert_eq!(CkksObjectKind::from_id(kind.id()), Some(kind));
        assert_eq!(ObjectKind::from_id(kind.id()), None, "one id space");
    }
    assert_eq!(CkksObjectKind::ALL.map(|k| k.id()), [6, 7, 8, 9, 10]);
    assert_eq!((CkksObjectKind::from_id(5), CkksObjectKind::from_id(11)), (None, None));
}

#[test]
fn parameters_that_are_no_preset_are_refused_at_encode() {
    let renamed = Params::new(&ParamsLiteral { name: "my-params".into(), ..SMALL.literal() }).unwrap();
    let mut q = SMALL.params().q().to_vec();
    q.swap(1, 2);
    let altered = SMALL.params().with_q_unchecked(q);
    for p in [renamed, altered] {
        let p = Arc::new(p);
        let c = HostCiphertext::from_raw(meta(&p, 0, 1e12, tag(&p, 1)), vec![0; p.n()], vec![1; p.n()]).unwrap();
        let mut out = vec![0xAA];
        let e = c.try_encode_to(&mut out).unwrap_err().to_string();
        assert!(e.contains("not a preset") && e.contains("slots4096-scale40-depth2"), "{e}");
        assert_eq!(out, [0xAA], "nothing written on a refusal");
        assert!(c.try_encode().is_err() && c.try_encoded_len().is_err());
        let e = serde_json::to_string(&c).unwrap_err().to_string();
        assert!(e.contains("not a preset"), "{e}");
        let s = SecretKey::from_raw(p.clone(), tag(&p, 1), vec![1; p.n()]).unwrap();
        assert!(s.try_encode_zeroizing().is_err() && serde_json::to_vec(&s).is_err());
    }
}

#[test]
fn each_scheme_refuses_the_other() {
    let c = &samples()[0].2;
    let e = LweCiphertext::decode(c).unwrap_err().to_string();
    assert!(e.contains("HostCiphertext") && e.contains("peek_ckks_header"), "{e}");
    assert!(matches!(peek_header(c), Err(Error::Decode(DecodeError::WrongKind { .. }))));
    let lwe = LweCiphertext::trivial(crate::tfhe::params::ParamSet::PN10QP27, 0).encode();
    let e = peek_ckks_header(&lwe).unwrap_err().to_string();
    assert!(e.contains("LweCiphertext"), "{e}");
    assert!(HostCiphertext::decode(&lwe).is_err());
}

#[test]
fn concatenated_objects_split_by_their_headers() {
    let all: Vec<u8> = small_samples().iter().flat_map(|(_, _, b)| b.iter().copied()).collect();
    let mut rest = &all[..];
    for &(kind, preset, ref bytes) in small_samples() {
        let h = peek_ckks_header(rest).unwrap();
        assert_eq!((h.kind, h.preset), (kind, preset));
        let (one, tail) = rest.split_at(h.total_len() as usize);
        assert_eq!(one, &bytes[..]);
        decode_as(kind, one).unwrap();
        rest = tail;
    }
    assert!(rest.is_empty());
}

#[test]
fn serde_json_round_trips() {
    let c = ct(SMALL, 0, 1);
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.starts_with("[76,85,88,70,72,69,2,0,6,0,101,0,"), "{}", &json[..40]);
    assert_eq!(serde_json::from_str::<HostCiphertext>(&json).unwrap(), c);
    let p = pt(SMALL, 1, 2);
    assert_eq!(serde_json::from_slice::<Plaintext>(&serde_json::to_vec(&p).unwrap()).unwrap(), p);
    let k = pk(SMALL, 3);
    assert_eq!(serde_json::from_str::<PublicKey>(&serde_json::to_string(&k).unwrap()).unwrap(), k);
    let r = swk(SMALL, SwitchKind::Relin, 4);
    assert_eq!(serde_json::from_str::<SwitchingKey>(&serde_json::to_string(&r).unwrap()).unwrap(), r);
    let s = sk(SMALL, 5);
    let back = serde_json::from_str::<SecretKey>(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back.coefficients(), s.coefficients());

    let e = serde_json::from_str::<PublicKey>(&json).unwrap_err().to_string();
    assert!(e.contains("wrong object kind"), "{e}");
    assert!(serde_json::from_str::<HostCiphertext>("[1,2,3]").is_err());
    let cap = CkksObjectKind::SecretKey.encoded_len(Preset::Slots32768Scale40Depth34, 0).unwrap() as usize;
    let long = format!("[{}0]", "0,".repeat(cap));
    let e = serde_json::from_str::<SecretKey>(&long).unwrap_err().to_string();
    assert!(e.contains("longer than any ckks::SecretKey encoding"), "{e}");

    use serde::de::value::{BorrowedBytesDeserializer, BytesDeserializer, Error as VErr};
    let bytes = c.try_encode().unwrap();
    assert_eq!(HostCiphertext::deserialize(BytesDeserializer::<VErr>::new(&bytes)).unwrap(), c);
    assert_eq!(HostCiphertext::deserialize(BorrowedBytesDeserializer::<VErr>::new(&bytes)).unwrap(), c);
    assert!(SwitchingKey::deserialize(BytesDeserializer::<VErr>::new(&bytes)).is_err());
}
