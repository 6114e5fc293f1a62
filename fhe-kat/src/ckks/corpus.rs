//! The CKKS corpus as data: one JSON file per preset (`corpus/ckks-<preset>.json`),
//! reviewed in git. Words are stored as SHA-256 digests (the digest rule is in the
//! [`crate::ckks`] docs and in every file's `digest_rule` field); decoded slots as
//! floats.

use fhe_api::ckks::params::Preset;
use serde::{Deserialize, Serialize};

use super::surfaces::{CkksComputed, MIN_BITS};
use super::{Ckks, DECODED_SLOTS, DECODED_TOLERANCE};
use crate::scheme::{changed_fields, sha256, CaseSeeds, Scheme};
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

impl CkksEntry {
    pub fn preset(&self) -> Result<Preset> {
        self.preset.parse().map_err(|e| Error::Corpus(format!("{}: {e}", self.name)))
    }

    /// The seeds this entry records (its replay input).
    pub(crate) fn input(&self) -> Result<CaseSeeds> {
        CaseSeeds::from_hex(&self.name, self.index, &self.seed, &self.encrypt_seeds)
    }
}

/// The entry that records `c`, computed on `generator` for `seeds` of `preset`; refuses
/// to record an output that decrypts to fewer than `MIN_BITS` bits of the plaintext
/// result.
pub(crate) fn record(preset: Preset, seeds: &CaseSeeds, c: CkksComputed, generator: &str) -> Result<CkksEntry> {
    let index = seeds.index;
    let name = format!("ckks/{preset}/{index}");
    Ok(CkksEntry {
        outputs: record_outputs(&name, &c, MIN_BITS, generator)?,
        digests: record_digests(&c),
        name,
        preset: preset.name().into(),
        index,
        seed: hex::encode(seeds.master.0),
        encrypt_seeds: seeds.encrypt_hex(),
    })
}

/// The stored form of every ciphertext of `c` (entry `name`); refuses an output that
/// decrypts to fewer than `min_bits` bits of its plaintext result.
pub(crate) fn record_outputs(name: &str, c: &CkksComputed, min_bits: f64, generator: &str) -> Result<Vec<CkksKatCt>> {
    let mut outputs = Vec::new();
    for ct in &c.cts {
        let bits = ct.precision();
        if bits.is_nan() || bits < min_bits {
            return Err(Error::Corpus(format!(
                "{name}: {} on {generator} decrypts to {bits:.1} bits < {min_bits}: refusing to record a wrong answer",
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
    Ok(outputs)
}

/// The digests of the words of `c` (keys, encoded messages).
pub(crate) fn record_digests(c: &CkksComputed) -> Vec<CkksDigest> {
    c.words
        .iter()
        .map(|w| CkksDigest { name: w.name.clone(), words: w.words, sha256: hex::encode(sha256(&w.bytes)) })
        .collect()
}

/// A file of `preset`'s entries, with the rules that read them.
pub(crate) fn new_file(preset: Preset, generator: String, entries: Vec<CkksEntry>) -> CkksFile {
    CkksFile {
        format: FORMAT.into(),
        preset: preset.name().into(),
        seed_root: Ckks::kat_root(preset),
        generator,
        digest_rule: DIGEST_RULE.into(),
        values_rule: VALUES_RULE.into(),
        decoded_tolerance: DECODED_TOLERANCE,
        regenerate: REGENERATE.into(),
        entries,
    }
}

/// The fields and surfaces that differ between two versions of an entry.
pub(crate) fn entry_diff(old: &CkksEntry, new: &CkksEntry) -> Vec<String> {
    let mut what =
        changed_fields(&[("seed", old.seed != new.seed), ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds)]);
    what.extend(surfaces_diff((&old.digests, &old.outputs), (&new.digests, &new.outputs)));
    what
}

/// The digests and ciphertext surfaces whose answers differ between two versions.
pub(crate) fn surfaces_diff(
    (old_digests, old_outputs): (&[CkksDigest], &[CkksKatCt]),
    (new_digests, new_outputs): (&[CkksDigest], &[CkksKatCt]),
) -> Vec<String> {
    let mut what = Vec::new();
    let names = |a: Option<&String>, b: Option<&String>| a.or(b).cloned().unwrap_or_default();
    for i in 0..old_digests.len().max(new_digests.len()) {
        let (a, b) = (old_digests.get(i), new_digests.get(i));
        if a != b {
            what.push(names(a.map(|d| &d.name), b.map(|d| &d.name)));
        }
    }
    for i in 0..old_outputs.len().max(new_outputs.len()) {
        let (a, b) = (old_outputs.get(i), new_outputs.get(i));
        if !matches!((a, b), (Some(a), Some(b)) if a.same_answer(b)) {
            what.push(names(a.map(|o| &o.surface), b.map(|o| &o.surface)));
        }
    }
    what
}
