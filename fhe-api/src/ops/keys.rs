//! Key generation, encryption and decryption.

use crate::entities::{KeySet, LweCiphertext, PublicKey, SecretKey};
use crate::error::Result;
use crate::params::ParamSet;
use crate::rng::Seed;

pub trait KeyOps {
    /// All three keys, determined by `seed` alone (DESIGN: byte-equal on every backend).
    fn keygen_from_seed(&self, params: ParamSet, seed: &Seed) -> Result<KeySet>;

    /// Public-key encryption of one bit with the randomness of `seed` (stream `encrypt`).
    fn encrypt_bit_seeded(&self, pk: &PublicKey, bit: bool, seed: &Seed) -> Result<LweCiphertext>;

    /// Public-key encryption with fresh OS randomness.
    fn encrypt_bit(&self, pk: &PublicKey, bit: bool) -> Result<LweCiphertext> {
        self.encrypt_bit_seeded(pk, bit, &Seed::from_os()?)
    }

    /// Decryption: `round(phase / (q/4))`; a phase that decodes to neither bit (an
    /// un-bootstrapped sum, or a ciphertext from another key) is an error.
    fn decrypt_bit(&self, sk: &SecretKey, ct: &LweCiphertext) -> Result<bool> {
        crate::decrypt::decrypt_bit(sk, ct)
    }
}
