//! RNS-CKKS in the known-answer corpus and the equivalence gate: [`Ckks`], its
//! [`Scheme`] implementation.
//!
//! # Seeds
//!
//! The roots are the bit scheme's with a CKKS suffix (`Seed::derive` as in the crate
//! docs):
//!
//! | use | master seed of case `k` | encryption seed `j` of case `k` |
//! |---|---|---|
//! | KAT corpus, preset `P` | `derive("lux-fhe-kat-v1/ckks/P", k)` | `derive("lux-fhe-kat-v1/ckks/P/encrypt", 3k + j)` |
//! | `equiv dispatch` | `derive("lux-fhe-dispatch-equiv-v1/ckks", k)` | `derive("lux-fhe-dispatch-equiv-v1/ckks/encrypt", 3k + j)` |
//! | `equiv sweep` | `derive("lux-fhe-backend-equiv-sweep-v1/ckks", k)` | `derive("lux-fhe-backend-equiv-sweep-v1/ckks/encrypt", 3k + j)` |
//!
//! `P` is the preset's name (`slots4096-scale40-depth2`). Dispatch and sweep seeds do not
//! depend on the preset. The messages `x` and `y` of a case fill every slot:
//! slot `i` of message `j` (`x`: 0, `y`: 1) is `(u_2i, u_2i+1)` with
//! `u = (next_u64 >> 11) * 2^-53 - 1/2` drawn from `fhe_api::rng::stream(master,
//! "ckks-values", j)`, exact dyadic numbers in `[-1/2, 1/2)`.
//!
//! # Surfaces of one KAT entry
//!
//! Keys from `keygen_from_seed(master)` with relinearization, rotations 1, 2, 3, 4 and
//! conjugation. Digested: `sk`, `pk.b`, `rlk.b`, the Galois keys' `b` halves by Galois
//! element (`gk[rot 1].b`, `gk[rot 2].b`, `gk[rot 3].b`, `gk[rot 4].b`, `gk[conj].b`, in
//! element order), and the encoded messages `encode[x]`, `encode[y]`. Ciphertexts, each
//! downloaded (`c0 || c1`, level, scale) and decrypted on the same backend:
//! `encrypt_pk[x]` (seed 0), `encrypt_pk[y]` (seed 1), `encrypt_sk[x]` (seed 2), `add`
//! (`x + y`), `mul` (`x * y`, relinearized), `rescale` (of `mul`), `rotate(1)` (of `x`),
//! `conjugate`, `rotate_hoisted[1..=4]` (one call, four outputs) and `mul_const+rescale`
//! (`x * -1.25`, rescaled).
//!
//! # The digest rule
//!
//! A full key or ciphertext is hundreds of KB (a relinearization key at N = 2^14 is
//! MBs), so the corpus stores SHA-256 digests: of the words, each as 8 bytes
//! little-endian, limb-major (limb `i` = prime `i` of the chain, `N` words each).
//! Ciphertexts: `c0` then `c1`; keys: the `b` halves only (switching keys digit-major; the
//! `a` halves expand from the public seed, itself a function of the master seed); `sk`:
//! one byte per ternary coefficient (two's complement). `decrypt_sha256` digests the
//! decrypted plaintext's coefficient words. Level and scale (its `f64` bits) are compared
//! exactly; the first [`DECODED_SLOTS`] decoded slots are stored as floats and compared
//! loosely: `|found - stored| <= 2^-50 * max(1, |stored|)` (DESIGN's rule for decoded
//! values); every output must also decrypt to its plaintext result with at least
//! [`MIN_BITS`] bits. One changed word changes a digest, and the replay names the surface.
//!
//! The files are `corpus/ckks-<preset>.json` ([`KAT_PRESETS`], four entries
//! each), regenerated on the CPU oracle by one command:
//! `cargo xtask kat generate --scheme ckks --force`. Bootstrapping has its own file and
//! rules, by the same digest rule: [`bootstrap`].
//!
//! # Dispatch and sweep
//!
//! `equiv dispatch` computes, per seed, keygen (relinearization and rotation 1), both
//! encryptions, decryption, `mul`, `rescale` and `rotate(1)` on the oracle and on the
//! target: every word byte-equal (keys, ciphertexts, decrypted plaintexts), decoded
//! values within 2^-50 of the oracle's. `equiv sweep` replays the CKKS corpus, then per
//! seed takes the oracle's keys and encryptions of `x`, `y` and two uniformly random
//! ciphertexts (stream `ckks-sweep-random` of the master seed) and compares `mul`,
//! `rescale` and `rotate(1)` on both backends. Both run [`EQUIV_PRESETS`] by default.
//!
//! A backend without the CKKS capability (`Backend::ckks()` is `None`) is reported as
//! skipped with the reason, and passes no case.

pub mod bootstrap;
pub mod corpus;
mod equiv;
pub(crate) mod surfaces;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;

pub use bootstrap::CkksBootstrap;
pub use corpus::{CkksEntry, CkksFile};
pub use equiv::skip_reason;
pub use surfaces::MIN_BITS;

use crate::compare::Checker;
use crate::scheme::{CaseSeeds, Labels, Schedule, Scheme};
use crate::{Result, DISPATCH_ROOT, KAT_ROOT, SWEEP_ROOT};

/// The presets of the CKKS corpus.
pub const KAT_PRESETS: [Preset; 2] = [Preset::Slots4096Scale40Depth2, Preset::Slots8192Scale40Depth6];
/// The presets `equiv dispatch` and `equiv sweep` run by default (the small one: a seed
/// costs a fraction of a second).
pub const EQUIV_PRESETS: [Preset; 1] = [Preset::Slots4096Scale40Depth2];
/// Decoded slots stored per KAT output.
pub const DECODED_SLOTS: usize = 4;
/// Decoded values agree within this, relative to `max(1, |oracle|)` (2^-50).
pub const DECODED_TOLERANCE: f64 = 1.0 / (1u64 << 50) as f64;

/// RNS-CKKS.
#[derive(Clone, Copy, Debug)]
pub struct Ckks;

impl Scheme for Ckks {
    type Params = Preset;
    type File = CkksFile;
    type Entry = CkksEntry;
    type Computed = surfaces::CkksComputed;

    const LABELS: Labels = Labels {
        noun: "CKKS ",
        prefix: "ckks ",
        kat: "KAT CKKS",
        sets: "presets",
        sweep: "mul+rotate sweep",
        generate: "cargo xtask kat generate --scheme ckks",
        counts_skipped: true,
    };
    const FORMAT: &'static str = corpus::FORMAT;
    const ALL_PARAMS: &'static [Preset] = &Preset::ALL;
    const KAT_PARAMS: &'static [Preset] = &KAT_PRESETS;
    const KAT_ENTRIES: u64 = 4;
    const EQUIV_PARAMS: &'static [Preset] = &EQUIV_PRESETS;

    /// `lux-fhe-kat-v1/ckks/<preset>`.
    fn kat_root(p: Preset) -> String {
        format!("{KAT_ROOT}/ckks/{p}")
    }
    /// `lux-fhe-dispatch-equiv-v1/ckks`.
    fn dispatch_root() -> String {
        format!("{DISPATCH_ROOT}/ckks")
    }
    /// `lux-fhe-backend-equiv-sweep-v1/ckks`.
    fn sweep_root() -> String {
        format!("{SWEEP_ROOT}/ckks")
    }

    fn file_name(p: Preset) -> String {
        format!("ckks-{p}.json")
    }
    fn file_header(f: &CkksFile) -> (&str, &str) {
        (&f.format, &f.preset)
    }
    fn new_file(p: Preset, generator: String, entries: Vec<CkksEntry>) -> CkksFile {
        corpus::new_file(p, generator, entries)
    }
    fn entries(f: &CkksFile) -> &[CkksEntry] {
        &f.entries
    }
    fn entries_mut(f: &mut CkksFile) -> &mut Vec<CkksEntry> {
        &mut f.entries
    }
    fn entry_name(e: &CkksEntry) -> &str {
        &e.name
    }
    fn entry_input(e: &CkksEntry) -> Result<(Preset, CaseSeeds)> {
        Ok((e.preset()?, e.input()?))
    }
    fn entry_diff(old: &CkksEntry, new: &CkksEntry) -> Vec<String> {
        corpus::entry_diff(old, new)
    }

    fn skip_reason(backend: &dyn Backend) -> Option<String> {
        equiv::skip_reason(backend)
    }
    fn compute(backend: &Arc<dyn Backend>, p: Preset, seeds: &CaseSeeds, schedule: Schedule) -> Result<Self::Computed> {
        surfaces::compute(backend, p, seeds, schedule)
    }
    fn record(p: Preset, seeds: &CaseSeeds, c: Self::Computed, generator: &str) -> Result<CkksEntry> {
        corpus::record(p, seeds, c, generator)
    }
    fn check_entry(
        check: &mut Checker,
        backend: &str,
        f: &CkksFile,
        e: &CkksEntry,
        found: &Self::Computed,
    ) -> Result<()> {
        let stored = equiv::Stored {
            name: &e.name,
            digests: &e.digests,
            outputs: &e.outputs,
            tolerance: f.decoded_tolerance,
            min_bits: MIN_BITS,
        };
        equiv::check_entry(check, backend, &stored, found)
    }
    fn compare(check: &mut Checker, _: &str, target: &str, o: &Self::Computed, t: &Self::Computed) {
        equiv::compare(check, target, o, t, MIN_BITS)
    }
    fn sweep_case(
        oracle: &Arc<dyn Backend>,
        target: &Arc<dyn Backend>,
        p: Preset,
        seeds: &CaseSeeds,
        check: &mut Checker,
    ) -> Result<()> {
        equiv::sweep_case(oracle, target, p, seeds, check)
    }
}
