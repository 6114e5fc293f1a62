//! Public-key encryption: `sum_k r_k pk_k + (0, m q/4)` with `r` uniform ternary from
//! stream `(seed, "encrypt", 0)`. The ciphertext carries the public key's tag.

use fhe_api::rng::{label, stream, Seed};
use fhe_api::{LweCiphertext, PublicKey, Result};

/// Public-key encryption of one bit with fresh OS randomness.
pub fn encrypt_bit(pk: &PublicKey, bit: bool) -> Result<LweCiphertext> {
    encrypt_bit_seeded(pk, bit, &Seed::from_os()?)
}

/// Public-key encryption of one bit with the randomness of `seed` (stream `encrypt`):
/// the same ciphertext on every machine.
pub fn encrypt_bit_seeded(pk: &PublicKey, bit: bool, seed: &Seed) -> Result<LweCiphertext> {
    let p = pk.params().params();
    let n = p.n();
    let mut r = stream(&seed.0, label::ENCRYPT, 0);
    let mut acc = vec![0u32; n + 1];
    let a = pk.a();
    for (k, &b) in pk.b().iter().enumerate() {
        let c = r.ternary();
        if c == 0 {
            continue;
        }
        let row = &a[k * n..(k + 1) * n];
        if c == 1 {
            acc[..n].iter_mut().zip(row).for_each(|(x, &y)| *x = x.wrapping_add(y));
            acc[n] = acc[n].wrapping_add(b);
        } else {
            acc[..n].iter_mut().zip(row).for_each(|(x, &y)| *x = x.wrapping_sub(y));
            acc[n] = acc[n].wrapping_sub(b);
        }
    }
    if bit {
        acc[n] = acc[n].wrapping_add((p.q_lwe() / 4) as u32);
    }
    let mask = p.q_lwe_mask();
    acc.iter_mut().for_each(|x| *x &= mask);
    LweCiphertext::from_raw(pk.params(), pk.tag(), acc)
}
