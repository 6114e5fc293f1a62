//! The bit scheme (TFHE/FHEW-style gates): what its objects are, independent of how they
//! are computed.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | the production parameter sets and their dimension newtypes |
//! | [`entities`] | keys and ciphertexts (host form), their seeded halves |
//! | [`lut`] | the look-up tables a blind rotation evaluates |
//!
//! Key generation, encryption, gates and the noise model are host algorithms over a
//! backend: `fhe_schemes::tfhe`.

pub mod entities;
pub mod lut;
pub mod params;
