//! Keys made later from the secret key alone, sparse packing, and ciphertexts moved as
//! bytes through the context alone.

use std::sync::Arc;

use fhe_api::ckks::{Preset, Scale};
use fhe_api::{Backend, Seed};

use super::{encrypt, random_values, rotate_plain};
use crate::ckks::{precision_bits, Context, KeygenOptions};

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
