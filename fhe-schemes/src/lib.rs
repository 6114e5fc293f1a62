//! `fhe-schemes`: the host algorithms of both schemes of the Lux FHE runtime, programs
//! over any backend's operation traits (`&dyn fhe_api::Backend`), so that each is
//! written once and runs, byte for byte, on every backend with the capability.
//!
//! | module | holds |
//! |---|---|
//! | [`tfhe`] | the bit scheme: keygen, encryption, gates, the server key, the noise model |
//! | [`integer`] | encrypted integers: boolean-gate circuits (`integer::gates`) |
//! | [`ckks`] | RNS-CKKS: encoding, keygen, encryption, the context and the evaluator |
//! | `testing` | (feature `testing`) the conformance suite every backend instantiates |
//!
//! The objects, parameters, formats and traits these programs use are `fhe-api`'s.

pub mod ckks;
pub mod integer;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tfhe;
