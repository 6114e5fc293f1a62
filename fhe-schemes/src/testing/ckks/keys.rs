//! Keys made later from the secret key alone, sparse packing, and ciphertexts moved as
//! bytes through the context alone.

use std::sync::Arc;

use fhe_api::ckks::{Ciphertext, Preset, Scale};
use fhe_api::error::{Error, LevelNeed};
use fhe_api::ring::automorphism::galois_element_for_rotation;
use fhe_api::{Backend, Seed};

use super::{encrypt, random_values, rotate_plain};
use crate::ckks::{precision_bits, Context, KeyLevels, KeygenOptions, Mode};

/// A key set made with no rotation gains one later from its secret key alone; the new
/// key carries the set's tag and rotates right. Sparse packing (fewer slots than `N/2`)
/// multiplies and rotates within its slots.
pub fn keys_later_and_sparse_packing(backend: Arc<dyn Backend>, preset: Preset) {
    let ctx = Context::from_preset(backend, preset).unwrap();
    let keys = ctx.keygen_from_seed(&Seed::derive("lux-fhe-ckks-later", 0), &KeygenOptions::default()).unwrap();
    let ev = ctx.evaluator(&keys.eval).unwrap();
    let x = random_values(ctx.params().slots(), 91);
    let cx = encrypt(&ctx, &keys, &x, 91);
    assert!(ev.rotate(&cx, 3).is_err(), "{preset}: no rotation key yet");
    let later = ctx
        .eval_keys_seeded(
            &keys.sk,
            &KeygenOptions { relin: false, rotations: vec![3], conjugation: false },
            &Seed::derive("later", 0),
        )
        .unwrap();
    assert!(later.galois.values().all(|k| k.tag() == keys.sk.tag()));
    ev.add_keys(&later).unwrap();
    let got = ctx.decrypt(&keys.sk, &ev.rotate(&cx, 3).unwrap()).unwrap();
    let bits = precision_bits(&got, &rotate_plain(&x, 3));
    assert!(bits > 15.0, "{preset}: a later rotation key gives {bits:.1} bits");

    let slots = 16;
    let v = random_values(slots, 92);
    let scale = ctx.params().default_scale();
    let top = ctx.params().max_level();
    let pt = ctx.encode_sparse(&v, slots, top, scale).unwrap();
    let later = ctx.rotation_keys(&keys.sk, &[1]).unwrap();
    ev.add_keys(&later).unwrap();
    let c = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("sparse", 0)).unwrap();
    let prod = ev.rotate(&ev.rescale(&ev.mul(&c, &c).unwrap()).unwrap(), 1).unwrap();
    let want = rotate_plain(&v.iter().map(|&a| a * a).collect::<Vec<_>>(), 1);
    let bits = precision_bits(&ctx.decrypt_slots(&keys.sk, &prod, slots).unwrap(), &want);
    assert!(bits > 15.0, "{preset}: sparse packing gives {bits:.1} bits");
    assert!(ctx.encode_sparse(&v, 3, top, scale).is_err(), "{preset}: 3 slots is not a power of two");
    assert!(Scale::new(scale.value()).is_ok());
}

/// A context alone moves a ciphertext to bytes and back (no evaluator), unchanged.
pub fn ciphertexts_travel_as_bytes(backend: Arc<dyn Backend>, preset: Preset) {
    let ctx = Context::from_preset(backend, preset).unwrap();
    let keys = ctx.keygen_from_seed(&Seed::derive("lux-fhe-ckks-bytes", 0), &KeygenOptions::default()).unwrap();
    let x = random_values(ctx.params().slots(), 93);
    let cx = encrypt(&ctx, &keys, &x, 93);
    let bytes = ctx.to_bytes(&cx).unwrap();
    let back = ctx.ciphertext_from_bytes(&bytes).unwrap();
    assert_eq!(ctx.download(&back).unwrap(), ctx.download(&cx).unwrap(), "{preset}: bytes round trip");
    assert_eq!(back.tag(), keys.pk.tag());
    assert!(ctx.ciphertext_from_bytes(&bytes[..bytes.len() - 1]).is_err());
}

/// Keys made from the secret key into the evaluator one at a time
/// (`Context::evaluator_from_secret`) are `keygen`'s of the same seed: the same words out
/// of a product and a rotation. A Galois key prepared up to level 1 rotates at level 1
/// (alone and hoisted) to the words of the whole key; above it, a backend that kept less
/// than the whole key (its `galois_key_level` says) refuses with `LevelNeed::KeyUpTo`.
pub fn keys_up_to_a_level_serve_the_same_words(backend: Arc<dyn Backend>, preset: Preset) {
    let ctx = Context::from_preset(backend, preset).unwrap();
    let seed = Seed::derive("lux-fhe-ckks-up-to", 0);
    let options = KeygenOptions { relin: true, rotations: vec![1, 3], conjugation: false };
    let keys = ctx.keygen_from_seed(&seed, &options).unwrap();
    let whole = ctx.evaluator(&keys.eval).unwrap();
    let g3 = galois_element_for_rotation(ctx.params().ring_degree(), 3);
    let mut levels = KeyLevels::default();
    levels.note(g3, 1);
    let part = ctx.evaluator_from_secret(&keys.sk, &options, Mode::Manual, &levels, &seed).unwrap();
    let words = |c: &Ciphertext| ctx.download(c).unwrap();
    let cx = encrypt(&ctx, &keys, &random_values(ctx.params().slots(), 94), 94);
    assert_eq!(words(&whole.mul(&cx, &cx).unwrap()), words(&part.mul(&cx, &cx).unwrap()), "{preset}: product");
    assert_eq!(words(&whole.rotate(&cx, 1).unwrap()), words(&part.rotate(&cx, 1).unwrap()), "{preset}: rotate 1");
    let low = whole.drop_to_level(&cx, 1).unwrap();
    assert_eq!(words(&whole.rotate(&low, 3).unwrap()), words(&part.rotate(&low, 3).unwrap()), "{preset}: at level 1");
    let (a, b) = (whole.rotate_hoisted(&low, &[1, 3]).unwrap(), part.rotate_hoisted(&low, &[1, 3]).unwrap());
    assert!(a.iter().zip(&b).all(|(a, b)| words(a) == words(b)), "{preset}: hoisted at level 1");
    let top = ctx.params().max_level();
    match part.galois_key_level(g3) {
        Some(l) if l < top => {
            assert_eq!(l, 1, "{preset}: kept up to the level asked");
            let e = part.rotate(&cx, 3).unwrap_err();
            assert!(matches!(e, Error::Level { needed: LevelNeed::KeyUpTo(1), .. }), "{preset}: {e}");
            assert!(e.to_string().contains("up to level 1"), "{e}");
        }
        kept => {
            assert_eq!(kept, Some(top), "{preset}: a backend keeps a key up to the level asked or whole");
            assert_eq!(words(&whole.rotate(&cx, 3).unwrap()), words(&part.rotate(&cx, 3).unwrap()));
        }
    }
}
