//! The bit scheme's host algorithms, written once over any backend.
//!
//! | module | holds |
//! |---|---|
//! | [`keygen`] | every key from a seed, over the backend's NTT |
//! | [`encrypt`], [`decrypt`] | public-key encryption of a bit, decryption and phase |
//! | [`gates`] | two-input gates, MUX, NOT, batches: linear parts on the host, one bootstrap batch |
//! | [`server_key`] | a prepared evaluation key and its backend |
//! | [`noise`] | the noise model: predicted variances and the failure probability per gate and per PBS |
//! | [`pbs`] | programmable bootstrapping: block encoding, tables, the PBS key |

pub mod decrypt;
pub mod encrypt;
pub mod gates;
pub mod keygen;
pub mod noise;
pub mod pbs;
pub mod server_key;

pub use decrypt::{decrypt_bit, phase, phase_error};
pub use encrypt::{encrypt_bit, encrypt_bit_seeded};
pub use gates::Gate;
pub use keygen::{keygen, keygen_from_seed};
pub use server_key::ServerKey;
