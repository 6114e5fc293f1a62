//! Key generation, encryption and decryption.
//!
//! Every method has a default written once in this crate ([`crate::keygen`],
//! [`crate::encrypt`], [`crate::decrypt`]); keygen runs over the backend's own
//! [`NttOps::ntt_forward`], so a backend implements `KeyOps` with an empty `impl` and
//! its keys are byte-equal to the oracle's exactly when its NTT is.

use crate::entities::{KeySet, LweCiphertext, PublicKey, SecretKey};
use crate::error::Result;
use crate::ops::NttOps;
use crate::params::ParamSet;
use crate::rng::Seed;

pub trait KeyOps: NttOps {
    /// All three keys, determined by `seed` alone (DESIGN: byte-equal on every backend).
    fn keygen_from_seed(&self, params: ParamSet, seed: &Seed) -> Result<KeySet> {
        crate::keygen::keygen(params, seed, &|data: &mut [u64]| self.ntt_forward(params, data))
    }

    /// Public-key encryption of one bit with the randomness of `seed` (stream `encrypt`).
    fn encrypt_bit_seeded(&self, pk: &PublicKey, bit: bool, seed: &Seed) -> Result<LweCiphertext> {
        crate::encrypt::encrypt_bit(pk, bit, seed)
    }

    /// Public-key encryption with fresh OS randomness.
    fn encrypt_bit(&self, pk: &PublicKey, bit: bool) -> Result<LweCiphertext> {
        self.encrypt_bit_seeded(pk, bit, &Seed::from_os()?)
    }

    /// Decryption: `round(phase / (q/4))`. A ciphertext whose key tag is another key's is
    /// `Error::WrongKey`; a phase that decodes to neither bit (an un-bootstrapped sum)
    /// is an error.
    fn decrypt_bit(&self, sk: &SecretKey, ct: &LweCiphertext) -> Result<bool> {
        crate::decrypt::decrypt_bit(sk, ct)
    }
}
