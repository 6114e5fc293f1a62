//! Every object kind through four serde formats (issue 27, item 2): serde_json (a
//! sequence of numbers), bincode and postcard (not self-describing: bytes with a length
//! prefix) and ciborium (CBOR byte strings, split into chunks above 4 KiB). Each carries
//! the object's binary encoding, so the round trip must give the object back exactly.
//! The smallest bit-scheme set and CKKS preset keep it quick.

use lux_fhe::ckks::KeygenOptions;
use lux_fhe::ckks::Preset;
use lux_fhe::format::TryEncode;
use lux_fhe::{Engine, FheUint, ParamSet, Seed};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// `x` through each format and back; `same` compares the result with `x`.
fn through_every_format<T: Serialize + DeserializeOwned>(name: &str, x: &T, same: impl Fn(&T, &T) -> bool) {
    let back: T = serde_json::from_slice(&serde_json::to_vec(x).expect("json encode"))
        .unwrap_or_else(|e| panic!("{name} through serde_json: {e}"));
    assert!(same(x, &back), "{name}: serde_json gave another object");

    let back: T = bincode::deserialize(&bincode::serialize(x).expect("bincode encode"))
        .unwrap_or_else(|e| panic!("{name} through bincode: {e}"));
    assert!(same(x, &back), "{name}: bincode gave another object");

    let mut cbor = Vec::new();
    ciborium::into_writer(x, &mut cbor).expect("cbor encode");
    let back: T = ciborium::from_reader(&cbor[..]).unwrap_or_else(|e| panic!("{name} through ciborium: {e}"));
    assert!(same(x, &back), "{name}: ciborium gave another object");

    let back: T = postcard::from_bytes(&postcard::to_allocvec(x).expect("postcard encode"))
        .unwrap_or_else(|e| panic!("{name} through postcard: {e}"));
    assert!(same(x, &back), "{name}: postcard gave another object");
}

fn eq<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

#[test]
fn bit_scheme_objects_round_trip_through_every_format() {
    let engine = Engine::with_backend("cpu").unwrap();
    let set = ParamSet::PN10QP27;
    let keys = engine.keygen_from_seed(set, &Seed::derive("serde-formats", 0)).unwrap();
    let ct = engine.encrypt_bit_seeded(&keys.pk, true, &Seed::derive("serde-formats", 1)).unwrap();
    let prepared = engine.backend().prepare(&keys.ek).unwrap();
    let extracted = engine.backend().blind_rotate_batch(&prepared, std::slice::from_ref(&ct)).unwrap().remove(0);
    let uint = FheUint::encrypt(&keys.pk, 8, 173).unwrap();

    through_every_format("LweCiphertext", &ct, eq);
    through_every_format("ExtractedLwe", &extracted, eq);
    through_every_format("SecretKey", &keys.sk, eq);
    through_every_format("PublicKey", &keys.pk, eq);
    through_every_format("EvaluationKey", &keys.ek, eq);
    through_every_format("KeySet", &keys, |a, b| a.sk == b.sk && a.pk == b.pk && a.ek == b.ek);
    through_every_format("FheUint", &uint, eq);

    // What comes back still decrypts.
    let back: FheUint = postcard::from_bytes(&postcard::to_allocvec(&uint).unwrap()).unwrap();
    assert_eq!(back.decrypt_u128(&keys.sk).unwrap(), 173);
    assert_eq!(FheUint::decode(&uint.encode()).unwrap(), uint);
}

#[test]
fn ckks_objects_round_trip_through_every_format() {
    let engine = Engine::with_backend("cpu").unwrap();
    let ctx = engine.ckks(Preset::Slots4096Scale40Depth2).unwrap();
    let options = KeygenOptions { relin: true, ..KeygenOptions::default() };
    let keys = ctx.keygen_from_seed(&Seed::derive("serde-formats-ckks", 0), &options).unwrap();
    let pt = ctx.encode(&[1.5, -2.25, 3.0]).unwrap();
    let handle = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("serde-formats-ckks", 1)).unwrap();
    let ckks = engine.backend().ckks().expect("the CPU backend has CKKS");
    let ct = ckks.download(&handle).unwrap();
    let relin = keys.eval.relin.as_ref().expect("a relinearization key was asked for");

    through_every_format("HostCiphertext", &ct, eq);
    through_every_format("Plaintext", &pt, eq);
    // No PartialEq on a secret (no timing-leaky comparison): compare the encodings.
    through_every_format("ckks::SecretKey", &keys.sk, |a, b| a.try_encode().unwrap() == b.try_encode().unwrap());
    through_every_format("ckks::PublicKey", &keys.pk, eq);
    through_every_format("SwitchingKey", relin, eq);
}
