//! The PBS corpus as data: `corpus/pbs-<SET>.json`, reviewed in git. Ciphertexts are
//! stored as SHA-256 digests of their serialized form with their decrypted values
//! ([`super`] docs).

use fhe_api::ParamSet;
use serde::{Deserialize, Serialize};

use super::surfaces::PbsComputed;
use super::{case_of, Pbs};
use crate::compare::Checker;
use crate::scheme::{changed_fields, changed_outputs, unhex, CaseSeeds, Scheme};
use crate::{Error, Result};

/// The format tag of a PBS corpus file.
pub const FORMAT: &str = "lux-fhe-kat-pbs-v1";

/// The command that rewrites the file.
pub const REGENERATE: &str = "cargo xtask kat generate --scheme pbs --force";
/// The command that writes a missing file.
pub const GENERATE: &str = "cargo xtask kat generate --scheme pbs";

/// What each seed does, as the file states it.
pub const SEEDS_RULE: &str = "master: keygen_from_seed, the table (stream kat-pbs-table: uniform_mod(p) for \
     m = 0..p) and the add's operands (stream kat-radix-operands: next_u64() mod 2^16, x then y); \
     encrypt_seeds[0]: encrypt_block_seeded(sk, m, seed, m) for block m of the table case, \
     RadixUint::encrypt_limbs_seeded of x; encrypt_seeds[1]: of y; encrypt_seeds[2]: unused";

/// The cases, as the file states them.
pub const CASES_RULE: &str = "entry 0 (pbs-table): PbsKey::apply_batch of the table's lut on blocks encrypting \
     0..p; entry 1 (radix-add-16): integer::radix::add at 16 bits, Propagation::Sequential (message and carry \
     of each block below the top from one blind rotation, a many-LUT read at coefficients 0 and N/2)";

/// How ciphertexts are digested, as the file states it.
pub const DIGEST_RULE: &str = "sha256 = SHA-256 of the serialized form (fhe_api::format); a radix integer: \
     its blocks' serializations concatenated, least significant first; keys: of their serialized form";

/// One ciphertext surface: its digest and the value it decrypts to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PbsKatCt {
    /// `encrypt[m]`, `pbs[m]`, `a`, `b`, `add`.
    pub surface: String,
    pub value: u64,
    pub sha256: String,
}

/// One known answer: a keygen and one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PbsEntry {
    /// `<SET>/<index>`.
    pub name: String,
    pub params: ParamSet,
    /// `k` in `Seed::derive("lux-fhe-kat-v1/<SET>", k)`; also the case.
    pub index: u64,
    /// `pbs-table` or `radix-add-16`.
    pub case: String,
    /// The master seed, hex.
    pub seed: String,
    /// The three encryption seeds, hex (`seeds_rule`).
    pub encrypt_seeds: Vec<String>,
    /// The table (`pbs-table`) or the operands `x, y` (`radix-add-16`).
    pub inputs: Vec<u64>,
    pub sk_sha256: String,
    pub pk_sha256: String,
    pub ek_sha256: String,
    pub outputs: Vec<PbsKatCt>,
}

/// The entries of one set, with the rules that read them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PbsFile {
    pub format: String,
    pub params: ParamSet,
    pub seed_root: String,
    pub seeds_rule: String,
    pub cases_rule: String,
    pub digest_rule: String,
    pub generator: String,
    pub regenerate: String,
    pub entries: Vec<PbsEntry>,
}

impl PbsEntry {
    /// The set and seeds this entry records (its replay input); an error for an index
    /// without a case.
    pub(crate) fn input(&self) -> Result<(ParamSet, CaseSeeds)> {
        case_of(self.index).map_err(|e| Error::Corpus(format!("{}: {e}", self.name)))?;
        Ok((self.params, CaseSeeds::from_hex(&self.name, self.index, &self.seed, &self.encrypt_seeds)?))
    }
}

/// The entry that records `c`; refuses an output that does not decrypt to its value.
pub(crate) fn record(params: ParamSet, seeds: &CaseSeeds, c: PbsComputed, generator: &str) -> Result<PbsEntry> {
    let name = format!("{params}/{}", seeds.index);
    for ct in &c.cts {
        if ct.decrypted.as_ref() != Ok(&ct.expected) {
            return Err(Error::Corpus(format!(
                "{name}: {} on {generator} decrypts to {:?}, expected {}: refusing to record a wrong answer",
                ct.name, ct.decrypted, ct.expected
            )));
        }
    }
    let [sk, pk, ek] = c.keys.map(|(_, d)| hex::encode(d));
    Ok(PbsEntry {
        name,
        params,
        index: seeds.index,
        case: c.case.name().into(),
        seed: hex::encode(seeds.master.0),
        encrypt_seeds: seeds.encrypt_hex(),
        inputs: c.inputs,
        sk_sha256: sk,
        pk_sha256: pk,
        ek_sha256: ek,
        outputs: c
            .cts
            .into_iter()
            .map(|ct| PbsKatCt { surface: ct.name, value: ct.expected, sha256: hex::encode(ct.sha256) })
            .collect(),
    })
}

/// A file of `params`' entries, with the rules that read them.
pub(crate) fn new_file(params: ParamSet, generator: String, entries: Vec<PbsEntry>) -> PbsFile {
    PbsFile {
        format: FORMAT.into(),
        params,
        seed_root: Pbs::kat_root(params),
        seeds_rule: SEEDS_RULE.into(),
        cases_rule: CASES_RULE.into(),
        digest_rule: DIGEST_RULE.into(),
        generator,
        regenerate: REGENERATE.into(),
        entries,
    }
}

/// Checks a replay on `backend` against the entry: the case and its inputs, the keys'
/// digests, then every surface's digest and decrypted value.
pub(crate) fn check_entry(check: &mut Checker, backend: &str, e: &PbsEntry, c: &PbsComputed) -> Result<()> {
    if e.case != c.case.name() || e.inputs != c.inputs {
        check.structure(
            "case",
            format!("corpus has {} of {:?}, the replay runs {} of {:?}", e.case, e.inputs, c.case.name(), c.inputs),
        );
    }
    for ((name, found), stored) in c.keys.iter().zip([&e.sk_sha256, &e.pk_sha256, &e.ek_sha256]) {
        let stored = unhex(&e.name, &format!("{name} digest"), stored)?;
        check.bytes(&format!("{name} (sha256)"), &stored, found);
    }
    if c.cts.len() != e.outputs.len() {
        check.structure(
            "outputs",
            format!("corpus has {} surfaces, the replay computes {}", e.outputs.len(), c.cts.len()),
        );
    }
    for (found, stored) in c.cts.iter().zip(&e.outputs) {
        if found.name != stored.surface || found.expected != stored.value {
            check.structure(
                &stored.surface,
                format!(
                    "corpus surface `{}` (value {}) meets computed `{}` (value {})",
                    stored.surface, stored.value, found.name, found.expected
                ),
            );
            continue;
        }
        let digest = unhex(&format!("{} {}", e.name, stored.surface), "digest", &stored.sha256)?;
        check.bytes(&format!("{} (sha256)", stored.surface), &digest, &found.sha256);
        value(check, backend, &stored.surface, stored.value, &found.decrypted);
    }
    Ok(())
}

fn value(check: &mut Checker, backend: &str, surface: &str, expected: u64, found: &Result<u64, String>) {
    match found {
        Ok(v) if *v == expected => {}
        Ok(v) => check.values(surface, backend, format!("{v}, expected {expected}")),
        Err(err) => check.values(surface, backend, format!("no value ({err}), expected {expected}")),
    }
}

/// Two computations of one case: `o` on the oracle, `t` on `target`, digest for digest,
/// and both decrypting to the plaintext result.
pub(crate) fn compare(check: &mut Checker, target: &str, o: &PbsComputed, t: &PbsComputed) {
    if o.case != t.case || o.inputs != t.inputs {
        check.structure("case", format!("the oracle ran {:?}, {target} ran {:?}", o.case, t.case));
    }
    for ((name, od), (_, td)) in o.keys.iter().zip(&t.keys) {
        check.bytes(&format!("{name} (sha256)"), od, td);
    }
    for (oc, tc) in o.cts.iter().zip(&t.cts) {
        check.bytes(&format!("{} (sha256)", oc.name), &oc.sha256, &tc.sha256);
        value(check, "oracle", &oc.name, oc.expected, &oc.decrypted);
        value(check, target, &tc.name, tc.expected, &tc.decrypted);
    }
}

/// The fields and surfaces that differ between two versions of an entry.
pub(crate) fn entry_diff(old: &PbsEntry, new: &PbsEntry) -> Vec<String> {
    let mut what = changed_fields(&[
        ("case", old.case != new.case),
        ("seed", old.seed != new.seed),
        ("encrypt_seeds", old.encrypt_seeds != new.encrypt_seeds),
        ("inputs", old.inputs != new.inputs),
        ("sk", old.sk_sha256 != new.sk_sha256),
        ("pk", old.pk_sha256 != new.pk_sha256),
        ("ek", old.ek_sha256 != new.ek_sha256),
    ]);
    what.extend(changed_outputs(&old.outputs, &new.outputs, |o| &o.surface));
    what
}
