//! The CKKS corpus as data: one JSON file per preset (`corpus/ckks-<preset>.json`),
//! reviewed in git. Words are stored as SHA-256 digests (the digest rule is in the
//! [`crate::ckks`] docs and in every file's `digest_rule` field); decoded slots as
//! floats.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;
use serde::{Deserialize, Serialize};

use super::surfaces::{compute, CkksInput, Schedule, MIN_BITS};
use super::{kat_root, DECODED_SLOTS, DECODED_TOLERANCE};
use crate::surfaces::sha256;
use crate::{Error, Result};

/// The format tag of a CKKS corpus file.
pub const FORMAT: &str = "lux-fhe-kat-ckks-v1";

/// The digest rule, as every file states it.
pub const DIGEST_RULE: &str = "sha256 = SHA-256 of the words, each word as 8 bytes little-endian, limb-major \
     (limb i = prime i of the chain, N words each); ciphertexts: c0 then c1; keys: the b halves only (digit-major \
     for switching keys), the a halves follow from the public seed; sk: one byte per ternary coefficient \
     (two's complement); decrypt_sha256: the decrypted plaintext's coefficient words";

/// The message rule, as every file states it.
pub const VALUES_RULE: &str = "x = message 0, y = message 1; slot i of message j = (u_2i, u_2i+1), \
     u = (next_u64 >> 11) * 2^-53 - 1/2 from fhe_api::rng::stream(master seed, \"ckks-values\", j)";

/// The command that rewrites the files.
pub const REGENERATE: &str = "cargo xtask kat generate --scheme ckks --force";

/// A digest of words that are not a ciphertext (keys, encoded messages).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CkksDigest {
    /// `sk`, `pk.b`, `rlk.b`, `gk[rot 1].b`, `gk[conj].b`, `encode[x]`, ...
    pub name: String,
    /// How many words (coefficients for `sk`) the digest covers.
    pub words: usize,
    pub sha256: String,
}

/// One ciphertext surface of an entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CkksKatCt {
    /// `encrypt_pk[x]`, `mul`, `rotate_hoisted[3]`, ...
    pub surface: String,
    pub level: usize,
    /// The scale's `f64` bits, hex (compared exactly).
    pub scale_bits: String,
    /// log2 of the scale, for readers (not compared).
    pub log2_scale: f64,
    /// Words of `c0 || c1`.
    pub words: usize,
    pub sha256: String,
    pub decrypt_sha256: String,
    /// The first [`DECODED_SLOTS`] decoded slots, `[re, im]`.
    pub slots: Vec<[f64; 2]>,
    /// Precision in bits of the oracle's decryption against plaintext arithmetic, over
    /// every slot (for readers, not compared; replay checks its own against
    /// `MIN_BITS`).
    pub precision_bits: f64,
}

impl CkksKatCt {
    /// Equal words, level and scale, and decoded slots within the tolerance (a float
    /// read back from JSON may differ from the computed one in its last bit; the
    /// informative fields are not compared).
    pub fn same_answer(&self, other: &CkksKatCt) -> bool {
        (&self.surface, self.level, &self.scale_bits, self.words, &self.sha256, &self.decrypt_sha256)
            == (&other.surface, other.level, &other.scale_bits, other.words, &other.sha256, &other.decrypt_sha256)
            && self.slots.len() == other.slots.len()
            && self.slots.iter().zip(&other.slots).all(|(a, b)| slot_close(*a, *b, DECODED_TOLERANCE))
    }
}

/// `found` within `tolerance` of `stored`, relative to `max(1, |stored|)` (both parts).
pub fn slot_close(stored: [f64; 2], found: [f64; 2], tolerance: f64) -> bool {
    stored.iter().zip(&found).all(|(s, f)| (s - f).abs() <= tolerance * s.abs().max(1.0))
}

/// One known answer: everything one master seed determines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CkksEntry {
    /// `ckks/<preset>/<index>`.
    pub name: String,
    pub preset: String,
    /// `k` in `Seed::derive("lux-fhe-kat-v1/ckks/<preset>", k)`.
    pub index: u64,
    /// The master seed, hex.
    pub seed: String,
    /// The three encryption seeds (`x`, `y` public-key; `x` secret-key), hex.
    pub encrypt_seeds: Vec<String>,
    pub digests: Vec<CkksDigest>,
    pub outputs: Vec<CkksKatCt>,
}

/// The entries of one preset, with the rules that read them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CkksFile {
    pub format: String,
    pub preset: String,
    pub seed_root: String,
    pub generator: String,
    pub digest_rule: String,
    pub values_rule: String,
    /// Decoded slots match when `|found - stored| <= tolerance * max(1, |stored|)`.
    pub decoded_tolerance: f64,
    pub regenerate: String,
    pub entries: Vec<CkksEntry>,
}

/// The whole CKKS corpus.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CkksCorpus {
    pub files: Vec<CkksFile>,
}

fn file_path(dir: &Path, preset: Preset) -> PathBuf {
    dir.join(format!("ckks-{preset}.json"))
}

pub(crate) fn parse_seed(name: &str, s: &str) -> Result<fhe_api::Seed> {
    let bytes = hex::decode(s).map_err(|e| Error::Corpus(format!("{name}: bad seed hex: {e}")))?;
    let arr: [u8; 32] = bytes.try_into().map_err(|_| Error::Corpus(format!("{name}: a seed is not 32 bytes")))?;
    Ok(fhe_api::Seed(arr))
}

impl CkksEntry {
    pub fn preset(&self) -> Result<Preset> {
        self.preset.parse().map_err(|e| Error::Corpus(format!("{}: {e}", self.name)))
    }

    /// The seeds this entry records (its replay input).
    pub(crate) fn input(&self) -> Result<CkksInput> {
        if self.encrypt_seeds.len() != 3 {
            return Err(Error::Corpus(format!("{}: needs 3 encryption seeds", self.name)));
        }
        let seed = |s: &str| parse_seed(&self.name, s);
        Ok(CkksInput {
            preset: self.preset()?,
            master: seed(&self.seed)?,
            encrypt_seeds: [
                seed(&self.encrypt_seeds[0])?,
                seed(&self.encrypt_seeds[1])?,
                seed(&self.encrypt_seeds[2])?,
            ],
        })
    }
}

/// Computes entry `index` of `preset` on `oracle`; refuses to record an output that
/// decrypts to fewer than `MIN_BITS` bits of the plaintext result.
pub fn generate_entry(oracle: Arc<dyn Backend>, preset: Preset, index: u64) -> Result<CkksEntry> {
    let name = oracle.name();
    let input = CkksInput::derive(&kat_root(preset), preset, index);
    let c = compute(oracle, &input, Schedule::Kat)?;
    let mut outputs = Vec::new();
    for ct in &c.cts {
        let bits = ct.precision();
        if bits < MIN_BITS {
            return Err(Error::Corpus(format!(
                "ckks/{preset}/{index}: {} on {name} decrypts to {bits:.1} bits < {MIN_BITS}: refusing to record a \
                 wrong answer",
                ct.name
            )));
        }
        outputs.push(CkksKatCt {
            surface: ct.name.clone(),
            level: ct.level,
            scale_bits: format!("{:016x}", ct.scale.to_bits()),
            log2_scale: ct.scale.log2(),
            words: ct.bytes.len() / 8,
            sha256: hex::encode(sha256(&ct.bytes)),
            decrypt_sha256: hex::encode(sha256(&ct.decrypted)),
            slots: ct.decoded.iter().take(DECODED_SLOTS).map(|v| [v.re, v.im]).collect(),
            precision_bits: (bits * 100.0).round() / 100.0,
        });
    }
    Ok(CkksEntry {
        name: format!("ckks/{preset}/{index}"),
        preset: preset.name().into(),
        index,
        seed: hex::encode(input.master.0),
        encrypt_seeds: input.encrypt_seeds.iter().map(|s| hex::encode(s.0)).collect(),
        digests: c
            .words
            .iter()
            .map(|w| CkksDigest { name: w.name.clone(), words: w.words, sha256: hex::encode(sha256(&w.bytes)) })
            .collect(),
        outputs,
    })
}

/// Computes the CKKS corpus: `per_preset` entries for every preset of `presets`.
pub fn generate(oracle: Arc<dyn Backend>, presets: &[Preset], per_preset: u64) -> Result<CkksCorpus> {
    let mut files = Vec::new();
    for &preset in presets {
        let mut entries = Vec::new();
        for index in 0..per_preset {
            tracing::info!(%preset, index, backend = %oracle.name(), "generating CKKS KAT entry");
            entries.push(generate_entry(oracle.clone(), preset, index)?);
        }
        files.push(CkksFile {
            format: FORMAT.into(),
            preset: preset.name().into(),
            seed_root: kat_root(preset),
            generator: oracle.name(),
            digest_rule: DIGEST_RULE.into(),
            values_rule: VALUES_RULE.into(),
            decoded_tolerance: DECODED_TOLERANCE,
            regenerate: REGENERATE.into(),
            entries,
        });
    }
    Ok(CkksCorpus { files })
}

/// The fields and surfaces that differ between two versions of an entry.
fn entry_diff(old: &CkksEntry, new: &CkksEntry) -> Vec<String> {
    let mut what: Vec<String> =
        [("seed", old.seed != new.seed), ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds)]
            .into_iter()
            .filter(|(_, differs)| *differs)
            .map(|(name, _)| name.to_string())
            .collect();
    let names = |a: Option<&String>, b: Option<&String>| a.or(b).cloned().unwrap_or_default();
    for i in 0..old.digests.len().max(new.digests.len()) {
        let (a, b) = (old.digests.get(i), new.digests.get(i));
        if a != b {
            what.push(names(a.map(|d| &d.name), b.map(|d| &d.name)));
        }
    }
    for i in 0..old.outputs.len().max(new.outputs.len()) {
        let (a, b) = (old.outputs.get(i), new.outputs.get(i));
        if !matches!((a, b), (Some(a), Some(b)) if a.same_answer(b)) {
            what.push(names(a.map(|o| &o.surface), b.map(|o| &o.surface)));
        }
    }
    what
}

impl CkksCorpus {
    /// Loads `dir/ckks-<preset>.json` for every preset that has a file.
    pub fn load(dir: &Path) -> Result<CkksCorpus> {
        let mut files = Vec::new();
        for preset in Preset::ALL {
            let path = file_path(dir, preset);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::Io { path, source }),
            };
            let file: CkksFile =
                serde_json::from_str(&text).map_err(|source| Error::Json { path: path.clone(), source })?;
            if file.format != FORMAT || file.preset != preset.name() {
                return Err(Error::Corpus(format!(
                    "{}: format `{}` for {}, expected `{FORMAT}` for {preset}",
                    path.display(),
                    file.format,
                    file.preset
                )));
            }
            files.push(file);
        }
        Ok(CkksCorpus { files })
    }

    /// Writes one file per preset (pretty JSON, trailing newline).
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.into(), source })?;
        for f in &self.files {
            let preset: Preset = f.preset.parse().map_err(|e| Error::Corpus(format!("{e}")))?;
            let path = file_path(dir, preset);
            let mut text =
                serde_json::to_string_pretty(f).map_err(|source| Error::Json { path: path.clone(), source })?;
            text.push('\n');
            std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
        }
        Ok(())
    }

    pub fn entries(&self) -> impl Iterator<Item = &CkksEntry> {
        self.files.iter().flat_map(|f| f.entries.iter())
    }

    pub fn len(&self) -> usize {
        self.entries().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The corpus restricted to the entries `keep` accepts.
    pub fn filter(&self, keep: impl Fn(&CkksEntry) -> bool) -> CkksCorpus {
        let files = self
            .files
            .iter()
            .map(|f| CkksFile { entries: f.entries.iter().filter(|e| keep(e)).cloned().collect(), ..f.clone() })
            .filter(|f| !f.entries.is_empty())
            .collect();
        CkksCorpus { files }
    }

    /// What changed from `self` (on disk) to `new`, entry by entry.
    pub fn diff(&self, new: &CkksCorpus) -> Vec<crate::corpus::EntryChange> {
        use crate::corpus::EntryChange;
        let mut changes = Vec::new();
        for e in new.entries() {
            match self.entries().find(|o| o.name == e.name) {
                None => changes.push(EntryChange::Added(e.name.clone())),
                Some(o) => {
                    let what = entry_diff(o, e);
                    if !what.is_empty() {
                        changes.push(EntryChange::Changed(e.name.clone(), what));
                    }
                }
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
