//! RNS-CKKS: approximate arithmetic on vectors of complex numbers. What its objects are,
//! independent of how they are computed.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | prime chains, presets, the security bound |
//! | [`entities`] | keys, plaintexts, host ciphertexts, their seeded halves |
//! | [`meta`] | level and scale of a ciphertext or plaintext; the resident objects |
//!
//! Encoding, key generation, encryption and the evaluator are host algorithms over a
//! backend: `fhe_schemes::ckks`.

pub mod entities;
pub mod meta;
pub mod params;

pub use entities::{EvalKeys, HostCiphertext, KeySet, Plaintext, PublicKey, SecretKey, SwitchKind, SwitchingKey};
pub use meta::{Ciphertext, CkksMeta, PlainMeta, PreparedPlaintext, PreparedSwitchKey, SwitchKeyMeta};
pub use params::{Params, ParamsLiteral, Preset, SecretDist};
