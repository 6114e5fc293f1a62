//! RNS-CKKS host algorithms, written once over a backend's CKKS capability.
//!
//! | module | holds |
//! |---|---|
//! | [`encoding`] | canonical-embedding encode and decode, deterministic on every platform |
//! | [`fft`] | libm-free roots of unity and the special FFT |
//! | [`keygen`] | secret, public, relinearization and Galois keys from a seed |
//! | [`encrypt`] | public- and secret-key encryption, decryption |
//! | [`context`] | one parameter set on one backend: the user's starting point |
//! | [`evaluator`] | level and scale bookkeeping over a backend's `CkksOps` |

pub mod context;
pub mod encoding;
pub mod encrypt;
pub mod evaluator;
pub mod fft;
pub mod keygen;
