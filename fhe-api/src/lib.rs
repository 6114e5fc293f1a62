//! `fhe-api`: what the Lux FHE runtime computes, independent of how.
//!
//! Parameter sets ([`params`]), keys and ciphertexts ([`entities`]) and their binary
//! format ([`mod@format`]), the randomness contract ([`rng`]), the operation traits every
//! backend implements ([`ops`]), the shared ring ([`ring`]: modular arithmetic, NTT
//! tables, RNS bases, automorphisms), gates written once over any backend ([`gates`]),
//! blind rotation's look-up tables ([`lut`]), the noise model ([`noise`]), one
//! [`Error`], and the backend [`registry`]. Key generation ([`keygen`]) and encryption
//! ([`encrypt`]) are written once here, on the host, over a backend's own NTT.

pub mod ckks;
pub mod decrypt;
pub mod encrypt;
pub mod entities;
pub mod error;
pub mod format;
pub mod gates;
pub mod keygen;
pub mod lut;
pub mod noise;
pub mod ops;
pub mod params;
pub mod per_set;
pub mod registry;
pub mod ring;
pub mod rng;
pub mod tag;
#[cfg(feature = "testing")]
pub mod testing;

pub use entities::{EvaluationKey, ExtractedLwe, KeySet, LweCiphertext, PublicKey, SecretKey};
pub use error::{DecodeError, Error, Result, Unavailable};
pub use gates::Gate;
pub use lut::Lut;
pub use ops::{Backend, BootstrapOps, DeviceInfo, KeyOps, NttOps, PreparedKey};
pub use params::{ParamSet, Params};
pub use registry::{BackendEntry, BackendKind, BackendOptions, Probe, Registry, Selection};
pub use rng::Seed;
pub use tag::KeyTag;
