//! The bit scheme in the known-answer corpus and the equivalence gate: [`Tfhe`], its
//! [`Scheme`] implementation.
//!
//! # Surfaces of one case
//!
//! From the master seed and the three encryption seeds ([`CaseSeeds`]), a backend
//! computes, in order: `sk`, `pk`, `ek` (`keygen_from_seed`, serialized), `encrypt[j]`
//! (`encrypt_bit_seeded(pk, b_j, seed_j)`), `bootstrap[j]` (`refresh_batch` of all
//! three), `gate:<g>` for each of the six gates on `(encrypt[0], encrypt[1])`
//! (`gate_batch`), `mux` (`mux_batch(encrypt[0], encrypt[1], encrypt[2])`) and `not`
//! (`not(encrypt[0])`). Case `k` encrypts the bits `b_j = (k >> j) & 1`, `j = 0, 1, 2`
//! (so cases 0..4 cover every input pair of the two-input gates). Every ciphertext is also
//! decrypted (`decrypt_bit`) and checked against its plaintext.
//!
//! `equiv dispatch` adds `ntt:forward` and `ntt:inverse` of one polynomial uniform mod
//! `Q` (stream `equiv-ntt` of the master seed). `equiv sweep` prepares the oracle's
//! evaluation key on both backends and compares `refresh_batch` of two encrypted bits
//! and `bootstrap_batch` of two uniformly random LWE ciphertexts (stream
//! `equiv-sweep-random` of the master seed): the whole input space, not only bits.
//!
//! The corpus (`corpus/<SET>.json`, one file per parameter set, [`corpus`]) stores the
//! seeds, the SHA-256 of the serialized keys, and the full bytes (hex) of every
//! ciphertext surface; they are compared byte for byte. Every backend runs the bit
//! scheme: none is skipped. [`soak`](mod@soak) chains random gates on one backend.
//! [`pbs`] pins programmable bootstrapping and a radix add (its own [`Scheme`], `Pbs`).

pub mod corpus;
mod equiv;
pub mod pbs;
pub mod soak;
mod surfaces;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use fhe_api::{Backend, ParamSet};

pub use corpus::{KatCt, KatEntry, KatFile};
pub use soak::{soak, SoakReport};

use crate::compare::Checker;
use crate::scheme::{CaseSeeds, Labels, Schedule, Scheme};
use crate::{Result, DISPATCH_ROOT, KAT_ROOT, SWEEP_ROOT};

/// The bit scheme (TFHE/FHEW gates).
#[derive(Clone, Copy, Debug)]
pub struct Tfhe;

impl Scheme for Tfhe {
    type Params = ParamSet;
    type File = KatFile;
    type Entry = KatEntry;
    type Computed = surfaces::Computed;

    const LABELS: Labels = Labels {
        noun: "",
        prefix: "",
        kat: "KAT",
        sets: "parameter sets",
        sweep: "bootstrap sweep",
        generate: "cargo xtask kat generate",
        counts_skipped: false,
    };
    const FORMAT: &'static str = corpus::FORMAT;
    const ALL_PARAMS: &'static [ParamSet] = &ParamSet::ALL;
    const KAT_PARAMS: &'static [ParamSet] = &ParamSet::ALL;
    const KAT_ENTRIES: u64 = 4;
    const EQUIV_PARAMS: &'static [ParamSet] = &ParamSet::ALL;

    /// `lux-fhe-kat-v1/<SET>`.
    fn kat_root(p: ParamSet) -> String {
        format!("{KAT_ROOT}/{p}")
    }
    fn dispatch_root() -> String {
        DISPATCH_ROOT.into()
    }
    fn sweep_root() -> String {
        SWEEP_ROOT.into()
    }

    fn file_name(p: ParamSet) -> String {
        format!("{p}.json")
    }
    fn file_header(f: &KatFile) -> (&str, &str) {
        (&f.format, f.params.name())
    }
    fn new_file(p: ParamSet, generator: String, entries: Vec<KatEntry>) -> KatFile {
        KatFile { format: corpus::FORMAT.into(), params: p, seed_root: Self::kat_root(p), generator, entries }
    }
    fn entries(f: &KatFile) -> &[KatEntry] {
        &f.entries
    }
    fn entries_mut(f: &mut KatFile) -> &mut Vec<KatEntry> {
        &mut f.entries
    }
    fn entry_name(e: &KatEntry) -> &str {
        &e.name
    }
    fn entry_input(e: &KatEntry) -> Result<(ParamSet, CaseSeeds)> {
        Ok((e.params, e.input()?))
    }
    fn entry_diff(old: &KatEntry, new: &KatEntry) -> Vec<String> {
        corpus::entry_diff(old, new)
    }

    fn skip_reason(_: &dyn Backend) -> Option<String> {
        None
    }
    fn compute(
        backend: &Arc<dyn Backend>,
        p: ParamSet,
        seeds: &CaseSeeds,
        schedule: Schedule,
    ) -> Result<Self::Computed> {
        surfaces::compute(&**backend, p, seeds, schedule)
    }
    fn record(p: ParamSet, seeds: &CaseSeeds, c: Self::Computed, generator: &str) -> Result<KatEntry> {
        corpus::record(p, seeds, c, generator)
    }
    fn check_entry(
        check: &mut Checker,
        backend: &str,
        _: &KatFile,
        e: &KatEntry,
        found: &Self::Computed,
    ) -> Result<()> {
        equiv::check_entry(check, backend, e, found)
    }
    fn compare(check: &mut Checker, oracle: &str, target: &str, o: &Self::Computed, t: &Self::Computed) {
        equiv::compare(check, oracle, target, o, t)
    }
    fn sweep_case(
        oracle: &Arc<dyn Backend>,
        target: &Arc<dyn Backend>,
        p: ParamSet,
        seeds: &CaseSeeds,
        check: &mut Checker,
    ) -> Result<()> {
        equiv::sweep_case(oracle, target, p, seeds, check)
    }
}
