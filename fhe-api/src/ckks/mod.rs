//! RNS-CKKS: approximate arithmetic on vectors of complex numbers. What its objects are,
//! independent of how they are computed.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | prime chains, presets, the security bound |
//! | [`entities`] | keys, plaintexts, host ciphertexts, their seeded halves |
//! | [`meta`] | level, scale and tag of a ciphertext or plaintext; the resident objects |
//! | [`scale`] | the checked scale and when two scales are one |
//!
//! Encoding, key generation, encryption and the evaluator are host algorithms over a
//! backend: `fhe_schemes::ckks`.

pub mod entities;
pub mod meta;
pub mod params;
pub mod scale;

pub use entities::{EvalKeys, HostCiphertext, KeySet, Plaintext, PublicKey, SecretKey, SwitchKind, SwitchingKey};
pub use meta::{
    Ciphertext, CkksMeta, CtMeta, ExtCiphertext, ExtMeta, HoistMeta, Hoisted, PlainMeta, PreparedPlaintext,
    PreparedSwitchKey, SwitchKeyMeta,
};
pub use params::{Params, ParamsLiteral, Preset, SecretDist};
pub use scale::Scale;
