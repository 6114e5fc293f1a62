//! The bootstrap corpus as data: `corpus/ckks-bootstrap-insecure.json`, reviewed in git.
//! Words are stored as SHA-256 digests by the preset corpus's rule
//! ([`crate::ckks::corpus::DIGEST_RULE`]), decoded slots as floats; each entry states
//! its case, which the replay recomputes.

use serde::{Deserialize, Serialize};

use super::surfaces::BootstrapComputed;
use super::{case_spec, BootstrapSet, CkksBootstrap};
use crate::ckks::corpus::{record_digests, record_outputs, surfaces_diff, CkksDigest, CkksKatCt, DIGEST_RULE};
use crate::ckks::equiv::{check_entry as check_ckks, Stored};
use crate::ckks::DECODED_TOLERANCE;
use crate::compare::Checker;
use crate::scheme::{changed_fields, CaseSeeds, Scheme};
use crate::{Error, Result};

/// The format tag of a bootstrap corpus file.
pub const FORMAT: &str = "lux-fhe-kat-ckks-bootstrap-v1";

/// The command that rewrites the file.
pub const REGENERATE: &str = "cargo xtask kat generate --scheme ckks-bootstrap --force";
/// The command that writes a missing file.
pub const GENERATE: &str = "cargo xtask kat generate --scheme ckks-bootstrap";

/// The chain, as the file states it.
pub const PARAMS_RULE: &str = "INSECURE (Params::insecure_for_tests): N = 2^12, 24 levels of 50 bits over a \
     60-bit first prime, one 60-bit special prime, dnum 4; the secret is the entry's case";

/// What each seed does, as the file states it.
pub const SEEDS_RULE: &str = "master: keygen_from_seed (relinearization, conjugation, the transforms' \
     rotations) and the message; encrypt_seeds[0]: encrypt_seeded of x (public key) at level 1, scale_at(1); \
     encrypt_seeds[1]: encapsulation_keys_seeded (entries that encapsulate); encrypt_seeds[2]: unused";

/// The message rule, as the file states it.
pub const VALUES_RULE: &str = "x = message 0 of the CKKS preset corpus: slot i = (u_2i, u_2i+1), \
     u = (next_u64 >> 11) * 2^-53 - 1/2 from fhe_api::rng::stream(master seed, \"ckks-values\", 0)";

/// The case an entry runs: the secret, the whole `BootstrapConfig`, the minimum
/// precision, and what the bootstrapper derives from them. Compared whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BootstrapCase {
    /// `sparse-ternary-192` or `ternary`.
    pub secret: String,
    pub level_budget: [usize; 2],
    pub prescale_bits: u32,
    pub failure_log2: f64,
    pub eval_mod_bits: u32,
    /// `None`: raise under the user's secret (ignored for a sparse user secret).
    pub encapsulation: Option<usize>,
    pub arcsine: bool,
    /// Both outputs decrypt to `x` with at least this many bits.
    pub min_bits: f64,
    /// Whether the bootstrap goes through a sparse secret.
    pub encapsulates: bool,
    /// The range of the integer part after ModRaise.
    pub k: u32,
    pub eval_mod_degree: usize,
    pub double_angles: u32,
    /// A functional bootstrap's function and its series' degree (the EvalMod fields then
    /// describe its exponential); absent for a plain bootstrap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series_degree: Option<usize>,
}

/// One known answer: a keygen, an encryption at level 1, one bootstrap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BootstrapEntry {
    /// `ckks/bootstrap-insecure/<index>`.
    pub name: String,
    pub set: String,
    /// `k` in `Seed::derive("lux-fhe-kat-v1/ckks/bootstrap-insecure", k)`; also the case.
    pub index: u64,
    pub case: BootstrapCase,
    /// The master seed, hex.
    pub seed: String,
    /// The three encryption seeds, hex (`seeds_rule`).
    pub encrypt_seeds: Vec<String>,
    pub digests: Vec<CkksDigest>,
    /// `encrypt_pk[x]` and `bootstrap`.
    pub outputs: Vec<CkksKatCt>,
}

/// The entries of one set, with the rules that read them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BootstrapFile {
    pub format: String,
    pub set: String,
    pub params: String,
    pub seed_root: String,
    pub seeds_rule: String,
    pub generator: String,
    pub digest_rule: String,
    pub values_rule: String,
    /// Decoded slots match when `|found - stored| <= tolerance * max(1, |stored|)`.
    pub decoded_tolerance: f64,
    pub regenerate: String,
    pub entries: Vec<BootstrapEntry>,
}

impl BootstrapEntry {
    /// The set and seeds this entry records (its replay input); an error for an unknown
    /// set or an index without a case.
    pub(crate) fn input(&self) -> Result<(BootstrapSet, CaseSeeds)> {
        let set = self.set.parse().map_err(|e| Error::Corpus(format!("{}: {e}", self.name)))?;
        case_spec(self.index).map_err(|e| Error::Corpus(format!("{}: {e}", self.name)))?;
        Ok((set, CaseSeeds::from_hex(&self.name, self.index, &self.seed, &self.encrypt_seeds)?))
    }
}

/// The entry that records `c`; refuses an output below the case's minimum precision.
pub(crate) fn record(
    set: BootstrapSet,
    seeds: &CaseSeeds,
    c: BootstrapComputed,
    generator: &str,
) -> Result<BootstrapEntry> {
    let name = format!("ckks/{set}/{}", seeds.index);
    Ok(BootstrapEntry {
        outputs: record_outputs(&name, &c.ckks, c.case.min_bits, generator)?,
        digests: record_digests(&c.ckks),
        name,
        set: set.name().into(),
        index: seeds.index,
        case: c.case,
        seed: hex::encode(seeds.master.0),
        encrypt_seeds: seeds.encrypt_hex(),
    })
}

/// A file of `set`'s entries, with the rules that read them.
pub(crate) fn new_file(set: BootstrapSet, generator: String, entries: Vec<BootstrapEntry>) -> BootstrapFile {
    BootstrapFile {
        format: FORMAT.into(),
        set: set.name().into(),
        params: PARAMS_RULE.into(),
        seed_root: CkksBootstrap::kat_root(set),
        seeds_rule: SEEDS_RULE.into(),
        generator,
        digest_rule: DIGEST_RULE.into(),
        values_rule: VALUES_RULE.into(),
        decoded_tolerance: DECODED_TOLERANCE,
        regenerate: REGENERATE.into(),
        entries,
    }
}

/// Checks a replay on `backend` (`found`) against the entry: the case, then the CKKS
/// rule (digests, level and scale bits, decoded slots within `tolerance`, the case's
/// minimum precision).
pub(crate) fn check_entry(
    check: &mut Checker,
    backend: &str,
    tolerance: f64,
    e: &BootstrapEntry,
    found: &BootstrapComputed,
) -> Result<()> {
    if e.case != found.case {
        check.structure("case", format!("corpus has {:?}, the replay runs {:?}", e.case, found.case));
    }
    // The stored minimum is never lower than the code's (a file cannot relax it).
    let min_bits = e.case.min_bits.max(found.case.min_bits);
    let stored = Stored { name: &e.name, digests: &e.digests, outputs: &e.outputs, tolerance, min_bits };
    check_ckks(check, backend, &stored, &found.ckks)
}

/// The fields and surfaces that differ between two versions of an entry.
pub(crate) fn entry_diff(old: &BootstrapEntry, new: &BootstrapEntry) -> Vec<String> {
    let mut what = changed_fields(&[
        ("case", old.case != new.case),
        ("seed", old.seed != new.seed),
        ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds),
    ]);
    what.extend(surfaces_diff((&old.digests, &old.outputs), (&new.digests, &new.outputs)));
    what
}
