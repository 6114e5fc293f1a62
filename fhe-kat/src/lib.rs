//! `fhe-kat`: the known-answer corpus of the Lux FHE runtime, its generator and its
//! replay, and the equivalence gate (`cargo xtask kat`, `cargo xtask equiv`,
//! `cargo xtask soak` are thin wrappers over this crate).
//!
//! Every function here takes backends as `&Arc<dyn Backend>`, so the same code checks the
//! CPU oracle, a CPU NTT variant, or a GPU backend. Comparison is byte for byte on the
//! serialized form (`fhe_api::format`), or on the SHA-256 of CKKS words; a difference is reported as a [`Mismatch`] that
//! names the case (parameter set, seed root and index, KAT entry), the surface and the
//! first differing byte offset.
//!
//! # Seeds
//!
//! Every seed is derived with [`fhe_api::Seed::derive`]:
//!
//! ```text
//! Seed::derive(root, k) = SHA-256(root || 0x00 || LE64(k))
//! ```
//!
//! (`root` as its UTF-8 bytes, `LE64(k)` the 8-byte little-endian counter). The roots:
//!
//! | use | master seed of case `k` (keygen) | encryption seed `j` of case `k` |
//! |---|---|---|
//! | KAT corpus, set `P` | `derive("lux-fhe-kat-v1/P", k)` | `derive("lux-fhe-kat-v1/P/encrypt", 3k + j)` |
//! | `equiv dispatch` | `derive("lux-fhe-dispatch-equiv-v1", k)` | `derive("lux-fhe-dispatch-equiv-v1/encrypt", 3k + j)` |
//! | `equiv sweep` | `derive("lux-fhe-backend-equiv-sweep-v1", k)` | `derive("lux-fhe-backend-equiv-sweep-v1/encrypt", 3k + j)` |
//! | `soak` | `derive("lux-fhe-soak-v1", k)` | `derive("lux-fhe-soak-v1/encrypt", 64k + i)` (pool slot `i`) |
//!
//! The dispatch and sweep seeds do not depend on the parameter set: seed `k` of every set
//! uses the same master seed ([`CaseSeeds::derive`], one derivation for both schemes).
//!
//! # Layout
//!
//! What differs between the schemes is one trait, [`Scheme`]: the parameter type, the
//! surfaces a case computes on a backend, how an output is compared (bytes for the bit
//! scheme, digests of words plus decoded slots within a tolerance for CKKS), the file
//! naming, and whether a backend runs the scheme at all (else: skipped, never passed).
//! [`tfhe`] implements it for the bit scheme ([`tfhe::Tfhe`]; its docs list the surfaces
//! of a case, and [`tfhe::soak`] chains random gates) and [`ckks`] for RNS-CKKS
//! ([`ckks::Ckks`]; its seeds use the roots above with a `/ckks` suffix, and its docs give
//! the schedule and the digest rule). Written once over the trait: the corpus loader,
//! writer and diff ([`Corpus`]), and the gate with its reports and printed lines
//! ([`replay`], [`dispatch`], [`sweep`]); [`compare`](mod@compare) names a difference.
//!
//! The corpus is `corpus/<SET>.json` (bit scheme) and `corpus/ckks-<preset>.json`, one
//! file per parameter set, and `corpus/ckks-bootstrap-insecure.json` (CKKS
//! bootstrapping at an insecure `N = 2^12`: [`ckks::bootstrap`], a third [`Scheme`],
//! [`ckks::CkksBootstrap`]), and `corpus/pbs-<SET>.json` (a programmable bootstrap and
//! a radix add: [`tfhe::pbs`], a fourth [`Scheme`], [`tfhe::pbs::Pbs`]); regenerate with
//! `cargo xtask kat generate [--scheme bits|ckks|ckks-bootstrap|pbs] --force`.

pub mod ckks;
pub mod compare;
pub mod corpus;
pub mod equiv;
pub mod scheme;
pub mod tfhe;

pub use compare::{compare_bytes, first_difference, Case, CaseSet, Mismatch, MismatchKind, Source};
pub use corpus::{Corpus, EntryChange};
pub use equiv::{dispatch, replay, sweep, DispatchReport, ReplayReport, SetReport, SweepReport, Verdict};
pub use scheme::{CaseSeeds, Labels, Schedule, Scheme};

/// Root of the dispatch seeds.
pub const DISPATCH_ROOT: &str = "lux-fhe-dispatch-equiv-v1";
/// Root of the sweep seeds.
pub const SWEEP_ROOT: &str = "lux-fhe-backend-equiv-sweep-v1";
/// Prefix of the KAT roots (`lux-fhe-kat-v1/<SET>`).
pub const KAT_ROOT: &str = "lux-fhe-kat-v1";
/// Root of the soak seeds.
pub const SOAK_ROOT: &str = "lux-fhe-soak-v1";

/// Where the reviewed corpus lives in the source tree.
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The errors of this crate. A byte difference is not an error: it is a [`Mismatch`]
/// inside a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A backend call failed.
    #[error(transparent)]
    Fhe(#[from] fhe_api::Error),
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Json {
        path: std::path::PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The corpus is malformed (bad hex, unknown parameter set, missing file).
    #[error("KAT corpus: {0}")]
    Corpus(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
