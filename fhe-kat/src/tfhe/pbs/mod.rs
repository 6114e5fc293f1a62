//! Programmable bootstrapping and radix integers in the known-answer corpus: [`Pbs`], a
//! fourth [`Scheme`], so the corpus loader, writer, diff and replay (and `kat generate`,
//! `kat replay`) are the shared ones.
//!
//! # Entries
//!
//! One file per programmable-bootstrapping set (`corpus/pbs-M2C2.json`, and
//! `pbs-M2C2G2.json`, `pbs-M2C2G3.json` for the multi-bit blind rotation). Entry `k` runs
//! case `k` of [`CASES`], each after its own `keygen_from_seed`:
//!
//! | k | case | surfaces |
//! |---|---|---|
//! | 0 | [`Case::Table`]: one PBS batch of a table drawn from the master seed on every message | `encrypt[m]`, `pbs[m]`, `m = 0..p` |
//! | 1 | [`Case::RadixAdd`]: a 16-bit radix add, sequential carries (many-LUT) | `a`, `b`, `add` |
//!
//! The table is `t(m) = uniform_mod(p)` for `m = 0..p` in order, from stream `kat-pbs-table`
//! of the master seed (`p` the block modulus, 16 for `M2C2`); the operands of the add are
//! `next_u64() mod 2^16`, `x` then `y`, from stream `kat-radix-operands`. The carry form
//! is fixed (`Propagation::Sequential`): `Auto` depends on the thread count, and the two
//! forms bootstrap different sums.
//!
//! # Seeds
//!
//! | seed | derivation | use |
//! |---|---|---|
//! | master | `derive("lux-fhe-kat-v1/<SET>", k)` (`M2C2` below) | `keygen_from_seed`, the table, the operands |
//! | `encrypt[0]` | `derive("lux-fhe-kat-v1/M2C2/encrypt", 3k)` | block `m` of the table case (`encrypt_block_seeded(sk, m, seed, m)`); `a` of the add |
//! | `encrypt[1]` | `derive(".../encrypt", 3k + 1)` | `b` of the add |
//! | `encrypt[2]` | `derive(".../encrypt", 3k + 2)` | unused (every case has three) |
//!
//! # What is stored and compared
//!
//! A block is `N + 1 = 2049` ring words (16 KB serialized), so, as for CKKS, the file
//! stores SHA-256 digests of the serialized form (`fhe_api::format`; a radix integer:
//! its blocks' serializations concatenated, least significant first) and the decrypted
//! value of every surface; the keys' digests as the bit corpus stores them. A replay
//! must match every digest byte for byte and decrypt every surface to its stored value;
//! a recorded output that does not decrypt to its plaintext result is refused.
//!
//! A backend that does not prepare keys of the set ([`fhe_api::Backend::prepares`]:
//! the GPU kernels hold LWE words in 16 bits, `M2C2`'s are 20) is skipped, never passed.
//! Regenerate with `cargo xtask kat generate --scheme pbs --force` on the CPU oracle.

pub mod corpus;
mod surfaces;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use fhe_api::{Backend, ParamSet};

pub use corpus::{PbsEntry, PbsFile, PbsKatCt};
pub use surfaces::PbsComputed;

use crate::compare::Checker;
use crate::scheme::{CaseSeeds, Labels, Schedule, Scheme};
use crate::{Error, Result, DISPATCH_ROOT, KAT_ROOT, SWEEP_ROOT};

/// What an entry computes after its keygen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// One PBS batch of a drawn table on every message.
    Table,
    /// A radix add of [`RADIX_WIDTH`] bits.
    RadixAdd,
}

impl Case {
    pub const fn name(self) -> &'static str {
        match self {
            Case::Table => "pbs-table",
            Case::RadixAdd => "radix-add-16",
        }
    }
}

/// The width of the radix case: 8 blocks, 8 blind rotations in 8 levels (each but the
/// top one read twice, message and carry: the many-LUT).
pub const RADIX_WIDTH: usize = 16;

/// The cases, by entry index (module docs).
pub const CASES: [Case; 2] = [Case::Table, Case::RadixAdd];

/// The case of entry `k`; an error beyond [`CASES`].
pub fn case_of(k: u64) -> Result<Case> {
    usize::try_from(k)
        .ok()
        .and_then(|k| CASES.get(k).copied())
        .ok_or_else(|| Error::Corpus(format!("PBS entry index {k}: only {} cases", CASES.len())))
}

/// Programmable bootstrapping and radix integers (module docs).
#[derive(Clone, Copy, Debug)]
pub struct Pbs;

impl Scheme for Pbs {
    type Params = ParamSet;
    type File = PbsFile;
    type Entry = PbsEntry;
    type Computed = PbsComputed;

    const LABELS: Labels = Labels {
        noun: "PBS ",
        prefix: "pbs ",
        kat: "KAT PBS",
        sets: "sets",
        sweep: "PBS sweep",
        generate: corpus::GENERATE,
        counts_skipped: true,
    };
    const FORMAT: &'static str = corpus::FORMAT;
    const ALL_PARAMS: &'static [ParamSet] = &ParamSet::PBS;
    const KAT_PARAMS: &'static [ParamSet] = &ParamSet::PBS;
    const KAT_ENTRIES: u64 = CASES.len() as u64;
    const EQUIV_PARAMS: &'static [ParamSet] = &ParamSet::PBS;

    /// `lux-fhe-kat-v1/<SET>`, as the bit sets' (the set names do not collide).
    fn kat_root(p: ParamSet) -> String {
        format!("{KAT_ROOT}/{p}")
    }
    /// `lux-fhe-dispatch-equiv-v1/pbs`.
    fn dispatch_root() -> String {
        format!("{DISPATCH_ROOT}/pbs")
    }
    /// `lux-fhe-backend-equiv-sweep-v1/pbs`.
    fn sweep_root() -> String {
        format!("{SWEEP_ROOT}/pbs")
    }

    fn file_name(p: ParamSet) -> String {
        format!("pbs-{p}.json")
    }
    fn file_header(f: &PbsFile) -> (&str, &str) {
        (&f.format, f.params.name())
    }
    fn new_file(p: ParamSet, generator: String, entries: Vec<PbsEntry>) -> PbsFile {
        corpus::new_file(p, generator, entries)
    }
    fn entries(f: &PbsFile) -> &[PbsEntry] {
        &f.entries
    }
    fn entries_mut(f: &mut PbsFile) -> &mut Vec<PbsEntry> {
        &mut f.entries
    }
    fn entry_name(e: &PbsEntry) -> &str {
        &e.name
    }
    fn entry_input(e: &PbsEntry) -> Result<(ParamSet, CaseSeeds)> {
        e.input()
    }
    fn entry_diff(old: &PbsEntry, new: &PbsEntry) -> Vec<String> {
        corpus::entry_diff(old, new)
    }

    fn skip_reason(backend: &dyn Backend) -> Option<String> {
        let refused: Vec<&str> = ParamSet::PBS.iter().filter(|&&s| !backend.prepares(s)).map(|s| s.name()).collect();
        (!refused.is_empty()).then(|| {
            format!(
                "{} prepares no keys of {} (LWE words over 16 bits; Backend::prepares)",
                backend.name(),
                refused.join(", ")
            )
        })
    }
    /// Seed `k` of a dispatch or sweep runs case `k mod CASES.len()`.
    fn compute(backend: &Arc<dyn Backend>, p: ParamSet, seeds: &CaseSeeds, _: Schedule) -> Result<PbsComputed> {
        surfaces::compute(backend, p, seeds)
    }
    fn record(p: ParamSet, seeds: &CaseSeeds, c: PbsComputed, generator: &str) -> Result<PbsEntry> {
        corpus::record(p, seeds, c, generator)
    }
    fn check_entry(check: &mut Checker, backend: &str, _: &PbsFile, e: &PbsEntry, found: &PbsComputed) -> Result<()> {
        corpus::check_entry(check, backend, e, found)
    }
    fn compare(check: &mut Checker, _: &str, target: &str, o: &PbsComputed, t: &PbsComputed) {
        corpus::compare(check, target, o, t)
    }
    /// The sweep's seeds: the case on both backends, compared as a dispatch.
    fn sweep_case(
        oracle: &Arc<dyn Backend>,
        target: &Arc<dyn Backend>,
        p: ParamSet,
        seeds: &CaseSeeds,
        check: &mut Checker,
    ) -> Result<()> {
        let o = surfaces::compute(oracle, p, seeds)?;
        let t = surfaces::compute(target, p, seeds)?;
        Self::compare(check, &oracle.name(), &target.name(), &o, &t);
        Ok(())
    }
}
