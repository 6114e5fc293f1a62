//! The corpus as data: one JSON file per parameter set (`corpus/<SET>.json`), reviewed
//! in git. Hex is lowercase; every ciphertext is its full serialized form.

use std::path::{Path, PathBuf};

use fhe_api::{Backend, ParamSet};
use serde::{Deserialize, Serialize};

use crate::surfaces::{compute, sha256, CaseInput};
use crate::{Error, Result, KAT_ROOT};

/// The format tag of a corpus file.
pub const FORMAT: &str = "lux-fhe-kat-v1";

/// One ciphertext surface of an entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KatCt {
    /// `encrypt[0]`, `bootstrap[2]`, `gate:and`, `mux`, `not`, ...
    pub surface: String,
    /// The plaintext bit it encrypts.
    pub bit: bool,
    /// The serialized ciphertext, hex.
    pub ct: String,
}

/// One known answer: everything one master seed determines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KatEntry {
    /// `<SET>/<index>`.
    pub name: String,
    pub params: ParamSet,
    /// `k` in `Seed::derive("lux-fhe-kat-v1/<SET>", k)`.
    pub index: u64,
    /// The master seed (keygen), hex; equal to its derivation.
    pub seed: String,
    /// The three encryption seeds, hex.
    pub encrypt_seeds: Vec<String>,
    /// The three encrypted bits.
    pub bits: Vec<bool>,
    /// SHA-256 of the serialized secret, public and evaluation keys, hex.
    pub sk_sha256: String,
    pub pk_sha256: String,
    pub ek_sha256: String,
    /// Every ciphertext surface, in computation order.
    pub outputs: Vec<KatCt>,
}

/// The entries of one parameter set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KatFile {
    pub format: String,
    pub params: ParamSet,
    /// The master-seed root of this file's entries.
    pub seed_root: String,
    /// The backend that generated it (always the oracle for the reviewed corpus).
    pub generator: String,
    pub entries: Vec<KatEntry>,
}

/// The whole corpus.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Corpus {
    pub files: Vec<KatFile>,
}

/// The KAT master-seed root of one parameter set.
pub fn kat_root(params: ParamSet) -> String {
    format!("{KAT_ROOT}/{params}")
}

fn file_path(dir: &Path, params: ParamSet) -> PathBuf {
    dir.join(format!("{params}.json"))
}

impl KatEntry {
    /// The seeds and plaintexts this entry records (its replay input).
    pub(crate) fn input(&self) -> Result<CaseInput> {
        let seed = |s: &str| -> Result<fhe_api::Seed> {
            let bytes = hex::decode(s).map_err(|e| Error::Corpus(format!("{}: bad seed hex: {e}", self.name)))?;
            let arr: [u8; 32] =
                bytes.try_into().map_err(|_| Error::Corpus(format!("{}: a seed is not 32 bytes", self.name)))?;
            Ok(fhe_api::Seed(arr))
        };
        if self.encrypt_seeds.len() != 3 || self.bits.len() != 3 {
            return Err(Error::Corpus(format!("{}: needs 3 encryption seeds and 3 bits", self.name)));
        }
        Ok(CaseInput {
            params: self.params,
            master: seed(&self.seed)?,
            encrypt_seeds: [
                seed(&self.encrypt_seeds[0])?,
                seed(&self.encrypt_seeds[1])?,
                seed(&self.encrypt_seeds[2])?,
            ],
            bits: [self.bits[0], self.bits[1], self.bits[2]],
        })
    }
}

/// Computes entry `index` of `params` on `backend`.
pub fn generate_entry(backend: &dyn Backend, params: ParamSet, index: u64) -> Result<KatEntry> {
    let input = CaseInput::derive(&kat_root(params), params, index);
    let c = compute(backend, &input)?;
    for ct in &c.cts {
        if ct.decrypted.as_ref() != Ok(&ct.expected_bit) {
            return Err(Error::Corpus(format!(
                "{params}/{index}: {} on {} decrypts to {:?}, expected {}: refusing to record a wrong answer",
                ct.name,
                backend.name(),
                ct.decrypted,
                ct.expected_bit
            )));
        }
    }
    let digest = |name: &str| hex::encode(sha256(&c.keys.iter().find(|(n, _)| *n == name).expect("key surface").1));
    Ok(KatEntry {
        name: format!("{params}/{index}"),
        params,
        index,
        seed: hex::encode(input.master.0),
        encrypt_seeds: input.encrypt_seeds.iter().map(|s| hex::encode(s.0)).collect(),
        bits: input.bits.to_vec(),
        sk_sha256: digest("sk"),
        pk_sha256: digest("pk"),
        ek_sha256: digest("ek"),
        outputs: c
            .cts
            .into_iter()
            .map(|ct| KatCt { surface: ct.name, bit: ct.expected_bit, ct: hex::encode(ct.bytes) })
            .collect(),
    })
}

/// Computes the corpus: `per_set` entries for every set of `sets`, on `backend`.
pub fn generate(backend: &dyn Backend, sets: &[ParamSet], per_set: u64) -> Result<Corpus> {
    let mut files = Vec::new();
    for &params in sets {
        let mut entries = Vec::new();
        for index in 0..per_set {
            tracing::info!(%params, index, backend = %backend.name(), "generating KAT entry");
            entries.push(generate_entry(backend, params, index)?);
        }
        files.push(KatFile {
            format: FORMAT.into(),
            params,
            seed_root: kat_root(params),
            generator: backend.name(),
            entries,
        });
    }
    Ok(Corpus { files })
}

/// A difference between two corpora, by entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryChange {
    Added(String),
    Removed(String),
    /// The entry and the fields or surfaces that differ.
    Changed(String, Vec<String>),
}

impl std::fmt::Display for EntryChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryChange::Added(n) => write!(f, "added {n}"),
            EntryChange::Removed(n) => write!(f, "removed {n}"),
            EntryChange::Changed(n, what) => write!(f, "changed {n}: {}", what.join(", ")),
        }
    }
}

fn entry_diff(old: &KatEntry, new: &KatEntry) -> Vec<String> {
    let mut what: Vec<String> = [
        ("seed", old.seed != new.seed),
        ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds),
        ("bits", old.bits != new.bits),
        ("sk", old.sk_sha256 != new.sk_sha256),
        ("pk", old.pk_sha256 != new.pk_sha256),
        ("ek", old.ek_sha256 != new.ek_sha256),
    ]
    .into_iter()
    .filter(|(_, differs)| *differs)
    .map(|(name, _)| name.to_string())
    .collect();
    for i in 0..old.outputs.len().max(new.outputs.len()) {
        match (old.outputs.get(i), new.outputs.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), _) => what.push(a.surface.clone()),
            (None, Some(b)) => what.push(b.surface.clone()),
            (None, None) => {}
        }
    }
    what
}

impl Corpus {
    /// Loads `dir/<SET>.json` for every set of `ParamSet::ALL` that has a file; an
    /// empty corpus when none has.
    pub fn load(dir: &Path) -> Result<Corpus> {
        let mut files = Vec::new();
        for params in ParamSet::ALL {
            let path = file_path(dir, params);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::Io { path, source }),
            };
            let file: KatFile =
                serde_json::from_str(&text).map_err(|source| Error::Json { path: path.clone(), source })?;
            if file.format != FORMAT || file.params != params {
                return Err(Error::Corpus(format!(
                    "{}: format `{}` for {}, expected `{FORMAT}` for {params}",
                    path.display(),
                    file.format,
                    file.params
                )));
            }
            files.push(file);
        }
        Ok(Corpus { files })
    }

    /// The reviewed corpus in the source tree; an error when it is empty.
    pub fn load_default() -> Result<Corpus> {
        let dir = crate::corpus_dir();
        let c = Corpus::load(&dir)?;
        if c.is_empty() {
            return Err(Error::Corpus(format!(
                "no corpus files in {} (run `cargo xtask kat generate`)",
                dir.display()
            )));
        }
        Ok(c)
    }

    /// Writes one file per set (pretty JSON, trailing newline).
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.into(), source })?;
        for f in &self.files {
            let path = file_path(dir, f.params);
            let mut text =
                serde_json::to_string_pretty(f).map_err(|source| Error::Json { path: path.clone(), source })?;
            text.push('\n');
            std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
        }
        Ok(())
    }

    pub fn entries(&self) -> impl Iterator<Item = &KatEntry> {
        self.files.iter().flat_map(|f| f.entries.iter())
    }

    pub fn len(&self) -> usize {
        self.entries().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The corpus restricted to the entries `keep` accepts (tests replay a subset).
    pub fn filter(&self, keep: impl Fn(&KatEntry) -> bool) -> Corpus {
        let files = self
            .files
            .iter()
            .map(|f| KatFile { entries: f.entries.iter().filter(|e| keep(e)).cloned().collect(), ..f.clone() })
            .filter(|f| !f.entries.is_empty())
            .collect();
        Corpus { files }
    }

    /// What changed from `self` (on disk) to `new` (freshly generated), entry by entry.
    pub fn diff(&self, new: &Corpus) -> Vec<EntryChange> {
        let mut changes = Vec::new();
        for e in new.entries() {
            match self.entries().find(|o| o.name == e.name) {
                None => changes.push(EntryChange::Added(e.name.clone())),
                Some(o) if o != e => changes.push(EntryChange::Changed(e.name.clone(), entry_diff(o, e))),
                Some(_) => {}
            }
        }
        for o in self.entries() {
            if !new.entries().any(|e| e.name == o.name) {
                changes.push(EntryChange::Removed(o.name.clone()));
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn corpus(entries: Vec<KatEntry>) -> Corpus {
        Corpus {
            files: vec![KatFile {
                format: FORMAT.into(),
                params: ParamSet::PN10QP27,
                seed_root: kat_root(ParamSet::PN10QP27),
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
        assert!(Corpus::load(&dir).unwrap().is_empty());
    }
}
