//! The corpus as data, for either scheme: one JSON file per parameter set
//! ([`Scheme::file_name`]: `corpus/<SET>.json`, `corpus/ckks-<preset>.json`), reviewed in
//! git, loaded, written, generated on the oracle and compared entry by entry here, once.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use fhe_api::Backend;

use crate::scheme::{CaseSeeds, Schedule, Scheme};
use crate::{Error, Result};

/// The files of one scheme's corpus, in [`Scheme::ALL_PARAMS`] order.
pub struct Corpus<S: Scheme> {
    pub files: Vec<S::File>,
}

impl<S: Scheme> Clone for Corpus<S> {
    fn clone(&self) -> Self {
        Corpus { files: self.files.clone() }
    }
}

impl<S: Scheme> PartialEq for Corpus<S> {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files
    }
}

impl<S: Scheme> fmt::Debug for Corpus<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Corpus").field("files", &self.files).finish()
    }
}

impl<S: Scheme> Default for Corpus<S> {
    fn default() -> Self {
        Corpus { files: Vec::new() }
    }
}

/// A difference between two corpora, by entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryChange {
    Added(String),
    Removed(String),
    /// The entry and the fields or surfaces that differ.
    Changed(String, Vec<String>),
}

impl fmt::Display for EntryChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryChange::Added(n) => write!(f, "added {n}"),
            EntryChange::Removed(n) => write!(f, "removed {n}"),
            EntryChange::Changed(n, what) => write!(f, "changed {n}: {}", what.join(", ")),
        }
    }
}

impl<S: Scheme> Corpus<S> {
    /// Computes `per_set` entries for every set of `sets` on `oracle`: entry `k` of set
    /// `p` is the case `CaseSeeds::derive(S::kat_root(p), k)`.
    pub fn generate(oracle: &Arc<dyn Backend>, sets: &[S::Params], per_set: u64) -> Result<Corpus<S>> {
        let mut files = Vec::new();
        for &p in sets {
            let mut entries = Vec::new();
            for index in 0..per_set {
                tracing::info!(params = %p, index, backend = %oracle.name(), "generating KAT entry");
                let seeds = CaseSeeds::derive(&S::kat_root(p), index);
                let c = S::compute(oracle, p, &seeds, Schedule::Kat)?;
                entries.push(S::record(p, &seeds, c, &oracle.name())?);
            }
            files.push(S::new_file(p, oracle.name(), entries));
        }
        Ok(Corpus { files })
    }

    /// Loads `dir/<file_name(p)>` for every set `p` that has a file; an empty corpus
    /// when none has.
    pub fn load(dir: &Path) -> Result<Corpus<S>> {
        let mut files = Vec::new();
        for &p in S::ALL_PARAMS {
            let path = dir.join(S::file_name(p));
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::Io { path, source }),
            };
            let file: S::File =
                serde_json::from_str(&text).map_err(|source| Error::Json { path: path.clone(), source })?;
            let (format, params) = S::file_header(&file);
            if format != S::FORMAT || params != p.to_string() {
                return Err(Error::Corpus(format!(
                    "{}: format `{format}` for {params}, expected `{}` for {p}",
                    path.display(),
                    S::FORMAT
                )));
            }
            files.push(file);
        }
        Ok(Corpus { files })
    }

    /// The reviewed corpus in the source tree; an error when it is empty.
    pub fn load_default() -> Result<Corpus<S>> {
        let dir = crate::corpus_dir();
        let c = Corpus::load(&dir)?;
        if c.is_empty() {
            let (noun, generate) = (S::LABELS.noun, S::LABELS.generate);
            return Err(Error::Corpus(format!("no {noun}corpus files in {} (run `{generate}`)", dir.display())));
        }
        Ok(c)
    }

    /// Writes one file per set (pretty JSON, trailing newline).
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.into(), source })?;
        for f in &self.files {
            let p: S::Params = S::file_header(f).1.parse().map_err(|e| Error::Corpus(format!("{e}")))?;
            let path = dir.join(S::file_name(p));
            let mut text =
                serde_json::to_string_pretty(f).map_err(|source| Error::Json { path: path.clone(), source })?;
            text.push('\n');
            std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
        }
        Ok(())
    }

    pub fn entries(&self) -> impl Iterator<Item = &S::Entry> {
        self.files.iter().flat_map(|f| S::entries(f).iter())
    }

    pub fn len(&self) -> usize {
        self.entries().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The corpus restricted to the entries `keep` accepts (tests replay a subset).
    pub fn filter(&self, keep: impl Fn(&S::Entry) -> bool) -> Corpus<S> {
        let files = self
            .files
            .iter()
            .map(|f| {
                let mut f = f.clone();
                S::entries_mut(&mut f).retain(|e| keep(e));
                f
            })
            .filter(|f| !S::entries(f).is_empty())
            .collect();
        Corpus { files }
    }

    /// What changed from `self` (on disk) to `new` (freshly generated), entry by entry.
    pub fn diff(&self, new: &Corpus<S>) -> Vec<EntryChange> {
        let find = |c: &'_ Corpus<S>, name: &str| c.entries().find(|o| S::entry_name(o) == name).cloned();
        let mut changes = Vec::new();
        for e in new.entries() {
            let name = S::entry_name(e);
            match find(self, name) {
                None => changes.push(EntryChange::Added(name.to_string())),
                Some(o) => {
                    let what = S::entry_diff(&o, e);
                    if !what.is_empty() {
                        changes.push(EntryChange::Changed(name.to_string(), what));
                    }
                }
            }
        }
        for o in self.entries() {
            if find(new, S::entry_name(o)).is_none() {
                changes.push(EntryChange::Removed(S::entry_name(o).to_string()));
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use fhe_api::ParamSet;

    use super::*;
    use crate::tfhe::corpus::{KatCt, KatEntry, KatFile, FORMAT};
    use crate::tfhe::Tfhe;

    fn entry(name: &str, ct: &str) -> KatEntry {
        KatEntry {
            name: name.into(),
            params: ParamSet::PN10QP27,
            index: 0,
            seed: "00".into(),
            encrypt_seeds: vec![],
            bits: vec![],
            sk_sha256: "aa".into(),
            pk_sha256: "bb".into(),
            ek_sha256: "cc".into(),
            outputs: vec![KatCt { surface: "mux".into(), bit: true, ct: ct.into() }],
        }
    }

    fn corpus(entries: Vec<KatEntry>) -> Corpus<Tfhe> {
        Corpus {
            files: vec![KatFile {
                format: FORMAT.into(),
                params: ParamSet::PN10QP27,
                seed_root: Tfhe::kat_root(ParamSet::PN10QP27),
                generator: "test".into(),
                entries,
            }],
        }
    }

    #[test]
    fn diff_names_changed_added_and_removed_entries() {
        let old = corpus(vec![entry("a", "01"), entry("b", "02")]);
        let mut changed = entry("a", "03");
        changed.ek_sha256 = "dd".into();
        let new = corpus(vec![changed, entry("c", "04")]);
        let d = old.diff(&new);
        assert_eq!(
            d,
            vec![
                EntryChange::Changed("a".into(), vec!["ek".into(), "mux".into()]),
                EntryChange::Added("c".into()),
                EntryChange::Removed("b".into()),
            ]
        );
        assert!(old.diff(&old).is_empty());
    }

    #[test]
    fn corpus_round_trips_through_files() {
        let dir = std::env::temp_dir().join(format!("fhe-kat-test-{}", std::process::id()));
        let c = corpus(vec![entry("a", "01")]);
        c.write(&dir).unwrap();
        assert_eq!(Corpus::load(&dir).unwrap(), c);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(Corpus::<Tfhe>::load(&dir).unwrap().is_empty());
    }
}
