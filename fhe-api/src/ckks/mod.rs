//! RNS-CKKS: approximate arithmetic on vectors of complex numbers.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | prime chains, presets, the security bound |
//! | [`encoding`] | canonical-embedding encode and decode, deterministic on every platform |
//! | [`fft`] | libm-free roots of unity and the special FFT |
//! | [`entities`] | keys, plaintexts, ciphertexts (host form) |
//! | [`keygen`] | secret, public, relinearization and Galois keys from a seed |
//! | [`encrypt`] | public- and secret-key encryption, decryption |
//! | [`context`] | one parameter set on one backend: the user's starting point |
//! | [`eval`] | the evaluator: level and scale bookkeeping over a backend's `CkksOps` |

pub mod context;
pub mod encoding;
pub mod encrypt;
pub mod entities;
pub mod eval;
pub mod fft;
pub mod keygen;
pub mod params;
