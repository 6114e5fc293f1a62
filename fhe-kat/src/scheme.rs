//! What differs between the two schemes in the corpus and the gate: one trait,
//! [`Scheme`], implemented by [`crate::tfhe::Tfhe`] (the bit scheme) and
//! [`crate::ckks::Ckks`]. The corpus loader, writer and diff ([`crate::corpus`]) and the
//! equivalence engine with its reports ([`crate::equiv`]) are written once over it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use fhe_api::{Backend, Seed};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::compare::{CaseSet, Checker};
use crate::{Error, Result};

/// Which surfaces a case computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A KAT entry: everything the corpus records.
    Kat,
    /// `equiv dispatch`: the scheme's public surfaces, oracle against target.
    Dispatch,
}

/// The seeds of case `index` under one root (crate docs, "Seeds"): the master seed
/// `Seed::derive(root, index)` and the encryption seeds
/// `Seed::derive(root + "/encrypt", 3 index + j)`, `j = 0, 1, 2`. Both schemes derive
/// their cases this way; what a case computes from them is the scheme's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseSeeds {
    pub index: u64,
    pub master: Seed,
    pub encrypt: [Seed; 3],
}

impl CaseSeeds {
    /// Case `k` of a seed root.
    pub fn derive(root: &str, k: u64) -> CaseSeeds {
        let enc_root = format!("{root}/encrypt");
        CaseSeeds {
            index: k,
            master: Seed::derive(root, k),
            encrypt: [0, 1, 2].map(|j| Seed::derive(&enc_root, 3 * k + j)),
        }
    }

    /// The seeds a corpus entry `name` records (hex), for its replay.
    pub fn from_hex(name: &str, index: u64, master: &str, encrypt: &[String]) -> Result<CaseSeeds> {
        if encrypt.len() != 3 {
            return Err(Error::Corpus(format!("{name}: needs 3 encryption seeds")));
        }
        let seed = |s: &str| -> Result<Seed> {
            let bytes = hex::decode(s).map_err(|e| Error::Corpus(format!("{name}: bad seed hex: {e}")))?;
            let arr: [u8; 32] =
                bytes.try_into().map_err(|_| Error::Corpus(format!("{name}: a seed is not 32 bytes")))?;
            Ok(Seed(arr))
        };
        Ok(CaseSeeds {
            index,
            master: seed(master)?,
            encrypt: [seed(&encrypt[0])?, seed(&encrypt[1])?, seed(&encrypt[2])?],
        })
    }

    /// The encryption seeds as the corpus writes them (hex).
    pub fn encrypt_hex(&self) -> Vec<String> {
        self.encrypt.iter().map(|s| hex::encode(s.0)).collect()
    }
}

/// How the printed lines and messages name a scheme. They read as they did before the
/// engine was shared (`scripts/test` and `xtask/device/run.sh` read them), so the bit
/// scheme keeps its bare lines (`KAT 12/12 byte-equal`, `total: ...`) and CKKS its
/// `KAT CKKS` and `ckks` ones.
#[derive(Clone, Copy, Debug)]
pub struct Labels {
    /// Before "entries", "corpus", "KAT entries" in messages: `""` or `"CKKS "`.
    pub noun: &'static str,
    /// Before "dispatch", "sweep", "total" in lines: `""` or `"ckks "`.
    pub prefix: &'static str,
    /// The head of the replay line: `KAT` or `KAT CKKS`.
    pub kat: &'static str,
    /// What the parameter sets are called in the total line.
    pub sets: &'static str,
    /// What the sweep's seed half does, in its lines.
    pub sweep: &'static str,
    /// The command that regenerates the scheme's files.
    pub generate: &'static str,
    /// Whether the total line counts skipped sets (a scheme a backend may lack).
    pub counts_skipped: bool,
}

/// One scheme in the corpus and the equivalence gate: what differs between the bit
/// scheme and CKKS, and nothing else.
///
/// - the parameter type and which sets the corpus and the gate run ([`Scheme::Params`],
///   [`Scheme::KAT_PARAMS`], [`Scheme::EQUIV_PARAMS`]);
/// - the seed roots and the surfaces a case computes on a backend from its
///   [`CaseSeeds`] ([`Scheme::compute`], [`Scheme::sweep_case`]);
/// - how an output is compared: [`Scheme::compare`] (oracle against target) and
///   [`Scheme::check_entry`] (a corpus entry against a replay); bytes for the bit
///   scheme, digests of words plus decoded slots within a tolerance for CKKS;
/// - the corpus files: their serde types, naming and header, and what a diff lists;
/// - whether a backend runs the scheme at all ([`Scheme::skip_reason`]): a backend that
///   does not is reported as skipped, never as passed.
pub trait Scheme: Sized + 'static {
    /// A bit-scheme parameter set or a CKKS preset.
    type Params: Copy + PartialEq + fmt::Debug + fmt::Display + FromStr<Err: fmt::Display> + Into<CaseSet>;
    /// One corpus file, as serde reads and writes it.
    type File: Clone + PartialEq + fmt::Debug + Serialize + DeserializeOwned;
    /// One known answer of a file.
    type Entry: Clone + PartialEq + fmt::Debug;
    /// Every surface of one case on one backend.
    type Computed;

    const LABELS: Labels;
    /// The `format` tag of the corpus files.
    const FORMAT: &'static str;
    /// Every set that may have a corpus file, in load order.
    const ALL_PARAMS: &'static [Self::Params];
    /// The sets the reviewed corpus holds (what `kat generate` writes).
    const KAT_PARAMS: &'static [Self::Params];
    /// Entries per set in the corpus the generator writes.
    const KAT_ENTRIES: u64;
    /// The sets `equiv dispatch` and `equiv sweep` run by default.
    const EQUIV_PARAMS: &'static [Self::Params];

    /// The master-seed root of the KAT entries of `p`.
    fn kat_root(p: Self::Params) -> String;
    /// The root of the `equiv dispatch` seeds (the same for every set).
    fn dispatch_root() -> String;
    /// The root of the `equiv sweep` seeds (the same for every set).
    fn sweep_root() -> String;

    /// The file of `p` in a corpus folder.
    fn file_name(p: Self::Params) -> String;
    /// The `format` and parameter-set name a file states.
    fn file_header(f: &Self::File) -> (&str, &str);
    /// A file of `p`'s entries, written by `generator`.
    fn new_file(p: Self::Params, generator: String, entries: Vec<Self::Entry>) -> Self::File;
    fn entries(f: &Self::File) -> &[Self::Entry];
    fn entries_mut(f: &mut Self::File) -> &mut Vec<Self::Entry>;
    /// `<SET>/<k>` or `ckks/<preset>/<k>`.
    fn entry_name(e: &Self::Entry) -> &str;
    /// The set and seeds an entry records: its replay input.
    fn entry_input(e: &Self::Entry) -> Result<(Self::Params, CaseSeeds)>;
    /// The fields and surfaces whose answers differ between two versions of an entry
    /// (empty when they give the same answers).
    fn entry_diff(old: &Self::Entry, new: &Self::Entry) -> Vec<String>;

    /// Why `backend` cannot run the scheme, or `None` when it can.
    fn skip_reason(backend: &dyn Backend) -> Option<String>;
    /// Every surface of the case `seeds` of `p` on `backend`, in `schedule`.
    fn compute(
        backend: &Arc<dyn Backend>,
        p: Self::Params,
        seeds: &CaseSeeds,
        schedule: Schedule,
    ) -> Result<Self::Computed>;
    /// The entry that records `c` (computed by `generator` with [`Schedule::Kat`]);
    /// refuses to record an output that does not decrypt to its plaintext result.
    fn record(p: Self::Params, seeds: &CaseSeeds, c: Self::Computed, generator: &str) -> Result<Self::Entry>;
    /// Compares a replay (`found`, computed on `backend`) with the entry of `file`.
    fn check_entry(
        check: &mut Checker,
        backend: &str,
        file: &Self::File,
        entry: &Self::Entry,
        found: &Self::Computed,
    ) -> Result<()>;
    /// Compares two computations of one dispatch case: `o` on `oracle`, `t` on `target`.
    fn compare(check: &mut Checker, oracle: &str, target: &str, o: &Self::Computed, t: &Self::Computed);
    /// One `equiv sweep` seed: the oracle's keys and inputs evaluated on both backends.
    fn sweep_case(
        oracle: &Arc<dyn Backend>,
        target: &Arc<dyn Backend>,
        p: Self::Params,
        seeds: &CaseSeeds,
        check: &mut Checker,
    ) -> Result<()>;
}

/// The names of the fields flagged as differing, in order: the first part of every
/// scheme's [`Scheme::entry_diff`].
pub(crate) fn changed_fields(fields: &[(&str, bool)]) -> Vec<String> {
    fields.iter().filter(|(_, differs)| *differs).map(|(name, _)| name.to_string()).collect()
}

/// The surfaces of the outputs that differ between two versions, position by position
/// (an output present in one version only is a change), named by `surface`.
pub(crate) fn changed_outputs<T: PartialEq>(old: &[T], new: &[T], surface: impl Fn(&T) -> &str) -> Vec<String> {
    (0..old.len().max(new.len()))
        .filter_map(|i| match (old.get(i), new.get(i)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(a), _) => Some(surface(a).to_string()),
            (None, Some(b)) => Some(surface(b).to_string()),
            (None, None) => None,
        })
        .collect()
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

/// `s` decoded from hex; the error names the entry and what was read.
pub(crate) fn unhex(entry: &str, what: &str, s: &str) -> Result<Vec<u8>> {
    hex::decode(s).map_err(|e| Error::Corpus(format!("{entry}: bad {what} hex: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{changed_fields, changed_outputs};

    /// Flagged fields in order; outputs that differ or exist in one version only, by
    /// surface name.
    #[test]
    fn diffs_name_what_changed() {
        assert_eq!(changed_fields(&[("seed", true), ("sk", false), ("pk", true)]), ["seed", "pk"]);
        assert!(changed_fields(&[("seed", false)]).is_empty());
        let (old, new) = (vec![("a", 1), ("b", 2), ("c", 3)], vec![("a", 1), ("b", 5)]);
        assert_eq!(changed_outputs(&old, &new, |o| o.0), ["b", "c"]);
        assert_eq!(changed_outputs(&new, &old, |o| o.0), ["b", "c"]);
        assert!(changed_outputs(&old, &old, |o| o.0).is_empty());
    }
}
