//! `fhe-api`: what the Lux FHE runtime computes, independent of how: the contract between
//! the schemes' host algorithms (`fhe-schemes`) and the backends.
//!
//! - the shared ring ([`ring`]: modular arithmetic, NTT tables, RNS bases, automorphisms);
//! - each scheme's parameters and objects ([`tfhe`], [`ckks`]) and their binary format
//!   ([`mod@format`]);
//! - the operation traits every backend implements ([`ops`]);
//! - the randomness contract ([`rng`]), key tags ([`tag`]), one [`Error`], the backend
//!   [`registry`] and the per-key caches backends keep ([`keyed_cache`]);
//! - with the `testing` feature, [`testing`]: what test wrappers of a backend share.

pub mod ckks;
pub mod error;
pub mod format;
pub mod keyed_cache;
pub mod ops;
pub mod registry;
pub mod ring;
pub mod rng;
pub mod tag;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tfhe;

pub use error::{DecodeError, Error, KeyNeed, LevelNeed, Result, Unavailable};
pub use ops::{Backend, BootstrapOps, DeviceInfo, DeviceMemory, NttOps, PreparedKey, RingOps};
pub use registry::{BackendEntry, BackendKind, BackendOptions, Probe, Registry, Selection};
pub use rng::Seed;
pub use tag::KeyTag;
pub use tfhe::entities::{EvaluationKey, ExtractedLwe, KeySet, LweCiphertext, PublicKey, SecretKey};
pub use tfhe::lut::Lut;
pub use tfhe::params::{ParamSet, Params};
