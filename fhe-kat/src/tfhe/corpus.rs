//! The bit scheme's corpus files (`corpus/<SET>.json`): hex is lowercase; every
//! ciphertext is its full serialized form.

use fhe_api::ParamSet;
use serde::{Deserialize, Serialize};

use super::surfaces::{bits, Computed};
use crate::scheme::{changed_fields, changed_outputs, sha256, CaseSeeds};
use crate::{Error, Result};

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

impl KatEntry {
    /// The seeds this entry records (its replay input).
    pub(crate) fn input(&self) -> Result<CaseSeeds> {
        if self.encrypt_seeds.len() != 3 || self.bits.len() != 3 {
            return Err(Error::Corpus(format!("{}: needs 3 encryption seeds and 3 bits", self.name)));
        }
        CaseSeeds::from_hex(&self.name, self.index, &self.seed, &self.encrypt_seeds)
    }
}

/// The entry that records `c`, computed on `generator` for `seeds` of `params`.
pub(crate) fn record(params: ParamSet, seeds: &CaseSeeds, c: Computed, generator: &str) -> Result<KatEntry> {
    let index = seeds.index;
    for ct in &c.cts {
        if ct.decrypted.as_ref() != Ok(&ct.expected_bit) {
            return Err(Error::Corpus(format!(
                "{params}/{index}: {} on {generator} decrypts to {:?}, expected {}: refusing to record a wrong answer",
                ct.name, ct.decrypted, ct.expected_bit
            )));
        }
    }
    let digest = |name: &str| hex::encode(sha256(&c.keys.iter().find(|(n, _)| *n == name).expect("key surface").1));
    Ok(KatEntry {
        name: format!("{params}/{index}"),
        params,
        index,
        seed: hex::encode(seeds.master.0),
        encrypt_seeds: seeds.encrypt_hex(),
        bits: bits(index).to_vec(),
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

/// The fields and surfaces that differ between two versions of an entry.
pub(crate) fn entry_diff(old: &KatEntry, new: &KatEntry) -> Vec<String> {
    let mut what = changed_fields(&[
        ("params", old.params != new.params),
        ("index", old.index != new.index),
        ("seed", old.seed != new.seed),
        ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds),
        ("bits", old.bits != new.bits),
        ("sk", old.sk_sha256 != new.sk_sha256),
        ("pk", old.pk_sha256 != new.pk_sha256),
        ("ek", old.ek_sha256 != new.ek_sha256),
    ]);
    what.extend(changed_outputs(&old.outputs, &new.outputs, |o| &o.surface));
    what
}
