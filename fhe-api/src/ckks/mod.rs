//! RNS-CKKS: approximate arithmetic on vectors of complex numbers. What its objects are,
//! independent of how they are computed.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | prime chains, presets, the security bound |
//! | [`entities`] | keys, plaintexts, ciphertexts (host form), their seeded halves |
//! | [`meta`] | parameters, level and scale of a ciphertext or plaintext, wherever it is |
//!
//! Encoding, key generation, encryption and the evaluator are host algorithms over a
//! backend: `fhe_schemes::ckks`.

pub mod entities;
pub mod meta;
pub mod params;
