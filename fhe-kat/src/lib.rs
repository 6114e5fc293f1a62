//! `fhe-kat`: the known-answer corpus of the Lux FHE runtime, its generator and its
//! replay, and the equivalence gate (`cargo xtask kat`, `cargo xtask equiv`,
//! `cargo xtask soak` are thin wrappers over this crate).
//!
//! Every function here takes backends as `&dyn Backend`, so the same code checks the CPU
//! oracle, a CPU NTT variant, or a GPU backend. Comparison is byte for byte on the
//! serialized form (`fhe_api::format`); a difference is reported as a [`Mismatch`] that
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
//! uses the same master seed. Case `k` encrypts the bits `b_j = (k >> j) & 1`,
//! `j = 0, 1, 2` (so cases 0..4 cover every input pair of the two-input gates).
//!
//! # Surfaces of one case
//!
//! From the master seed and the three encryption seeds, a backend computes, in order:
//! `sk`, `pk`, `ek` (`keygen_from_seed`, serialized), `encrypt[j]`
//! (`encrypt_bit_seeded(pk, b_j, seed_j)`), `bootstrap[j]` (`refresh_batch` of all three),
//! `gate:<g>` for each of the six gates on `(encrypt[0], encrypt[1])` (`gate_batch`),
//! `mux` (`mux_batch(encrypt[0], encrypt[1], encrypt[2])`) and `not` (`not(encrypt[0])`).
//! Every ciphertext is also decrypted (`decrypt_bit`) and checked against its plaintext.
//! `equiv dispatch` adds `ntt:forward` and `ntt:inverse` of one polynomial uniform mod
//! `Q` (stream `equiv-ntt` of the master seed). `equiv sweep` prepares the oracle's
//! evaluation key on both backends and compares `refresh_batch` of two encrypted bits
//! and `bootstrap_batch` of two uniformly random LWE ciphertexts (stream
//! `equiv-sweep-random` of the master seed): the whole input space, not only bits.
//!
//! The corpus (`corpus/<SET>.json`, one file per parameter set) stores the seeds, the
//! SHA-256 of the serialized keys, and the full bytes (hex) of every ciphertext surface.
//!
//! # RNS-CKKS
//!
//! The [`ckks`] module adds the second scheme to the corpus (`corpus/ckks-<preset>.json`,
//! words stored as SHA-256 digests of their little-endian bytes) and to the gate; its
//! seeds use the roots above with a `/ckks` suffix. Its docs give the schedule, the
//! digest rule and how a backend without CKKS is reported (skipped, with the reason).
//! Regenerate the CKKS files with `cargo xtask kat generate --scheme ckks --force`.

pub mod ckks;
mod compare;
pub mod corpus;
pub mod equiv;
pub mod soak;
mod surfaces;

#[cfg(test)]
mod testing;

pub use compare::{compare_bytes, first_difference, Case, CaseSet, Mismatch, MismatchKind, Source};
pub use corpus::{Corpus, KatEntry, KatFile};
pub use equiv::{dispatch, replay, sweep, DispatchReport, ReplayReport, SetReport, SweepReport};
pub use soak::{soak, SoakReport};

/// Root of the dispatch seeds.
pub const DISPATCH_ROOT: &str = "lux-fhe-dispatch-equiv-v1";
/// Root of the sweep seeds.
pub const SWEEP_ROOT: &str = "lux-fhe-backend-equiv-sweep-v1";
/// Prefix of the KAT roots (`lux-fhe-kat-v1/<SET>`).
pub const KAT_ROOT: &str = "lux-fhe-kat-v1";
/// Root of the soak seeds.
pub const SOAK_ROOT: &str = "lux-fhe-soak-v1";

/// Entries per parameter set in the corpus the generator writes.
pub const KAT_ENTRIES_PER_SET: u64 = 4;

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
