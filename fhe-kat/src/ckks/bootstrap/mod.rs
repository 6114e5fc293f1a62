//! CKKS bootstrapping in the known-answer corpus: [`CkksBootstrap`], a third
//! [`Scheme`], so the corpus loader, writer, diff and replay (and `kat generate`,
//! `kat replay`) are the shared ones.
//!
//! # The parameters
//!
//! One set, [`BootstrapSet::Insecure`] (`bootstrap-insecure`): `N = 2^12`, 24 levels of
//! 50 bits over a 60-bit first prime, a 60-bit special prime, `dnum` 4
//! ([`BootstrapSet::params`], `Params::insecure_for_tests`): far below 128-bit security,
//! small enough that a bootstrap takes about a second. Such a chain cannot be
//! serialized with the format (only presets can), which is one more reason the corpus
//! stores digests.
//!
//! # Entries
//!
//! Entry `k` runs case `k` of [`CASES`] (the user secret, the encapsulation weight and
//! the minimum precision; every other field of the `BootstrapConfig` is its default):
//!
//! | k | secret | `encapsulation` | bootstraps under | min bits |
//! |---|---|---|---|---|
//! | 0 | sparse ternary, weight 192 | default (ignored) | the user secret | 14 |
//! | 1 | uniform ternary | default, `Some(192)` | a sparse secret (SSE) | 13 |
//! | 2 | uniform ternary | `None` | the user secret | 10 |
//! | 3 | uniform ternary | default, `Some(192)` | a sparse secret: FE functional bootstrap of GELU | 20 |
//!
//! Entry 3 is a functional bootstrap (`FunctionalBootstrapper`, budget `{3, 2}`, the
//! exponential at 38 bits, GELU's series at 24 bits): its input `x` is encrypted at the
//! bootstrapper's input level (2), its output decrypts to `GELU(16 Re x)` (the series'
//! range `[-8, 8]` over `x` in `[-1/2, 1/2)`), and its case records the function.
//!
//! Each entry stores its case (secret, the whole configuration, and what the
//! bootstrapper derives from it: `K`, the EvalMod degree and double angles, whether it
//! encapsulates); the replay recomputes it from the index and a different one is the
//! mismatch `case`.
//!
//! # Seeds
//!
//! `Seed::derive` as in the crate docs, with the CKKS root and the set's name:
//!
//! | seed | derivation | use |
//! |---|---|---|
//! | master | `derive("lux-fhe-kat-v1/ckks/bootstrap-insecure", k)` | `keygen_from_seed` (relinearization, conjugation, the transforms' rotations), and the message |
//! | `encrypt[0]` | `derive("lux-fhe-kat-v1/ckks/bootstrap-insecure/encrypt", 3k)` | `encrypt_seeded` of `x` (public key) |
//! | `encrypt[1]` | `derive(".../encrypt", 3k + 1)` | `encapsulation_keys_seeded` (entries that encapsulate) |
//! | `encrypt[2]` | `derive(".../encrypt", 3k + 2)` | unused (every case has three) |
//!
//! The message `x` is message 0 of the preset corpus's rule (`values_rule`: exact dyadic
//! values in `[-1/2, 1/2)` from stream `ckks-values` of the master seed), encoded at
//! level [`INPUT_LEVEL`] (1) and scale `scale_at(1)`.
//!
//! # Surfaces
//!
//! Digests: `sk` (one byte per coefficient), `pk.b`, `rlk.b`, `gk.b` (the `b` halves of
//! every Galois key, in Galois-element order, concatenated), `sse.to_sparse.b` and
//! `sse.to_dense.b` (entries that encapsulate), `encode[x]`. Ciphertexts (downloaded
//! `c0 || c1`, level, scale, decrypted plaintext, decoded slots):
//! `encrypt_pk[x]` (the input, level 1) and `bootstrap` (the output).
//!
//! The digest rule is the preset corpus's ([`crate::ckks`]): SHA-256 of the words, each
//! 8 bytes little-endian, limb-major, `c0` then `c1`. Level and scale bits exactly,
//! four decoded slots within `decoded_tolerance` (2^-50) relative, and both outputs must
//! decrypt to `x` with the case's minimum bits.
//!
//! File: `corpus/ckks-bootstrap-insecure.json`, regenerated on the CPU oracle with
//! `cargo xtask kat generate --scheme ckks-bootstrap --force`; replayed by
//! `cargo xtask kat replay --backend B` (line `KAT CKKS bootstrap E/E byte-equal`) and by
//! this crate's tests (the oracle and the default CPU variant). A backend without CKKS
//! is skipped, never passed.

pub mod corpus;
mod surfaces;

#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use fhe_api::ckks::params::{Params, ParamsLiteral, SecretDist};
use fhe_api::Backend;
use fhe_schemes::ckks::FeFunction;

pub use corpus::{BootstrapCase, BootstrapEntry, BootstrapFile};
pub use surfaces::BootstrapComputed;

use super::equiv;
use crate::compare::{CaseSet, Checker};
use crate::scheme::{CaseSeeds, Labels, Schedule, Scheme};
use crate::{Error, Result, DISPATCH_ROOT, KAT_ROOT, SWEEP_ROOT};

/// The level the input is encrypted at (a bootstrap takes level 1 or above).
pub const INPUT_LEVEL: usize = 1;

/// One case of the corpus: entry `k` runs `CASES[k]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CaseSpec {
    pub secret: SecretDist,
    /// A functional bootstrap of this function instead of a plain one.
    pub function: Option<FeFunction>,
    /// `BootstrapConfig::encapsulation` (every other field is the default).
    pub encapsulation: Option<usize>,
    /// Both outputs decrypt to `x` with at least this many bits (the conformance
    /// suite's bounds for these configurations).
    pub min_bits: f64,
}

const SPARSE: SecretDist = SecretDist::SparseTernary { hamming_weight: 192 };
const SSE: Option<usize> = Some(fhe_api::ckks::params::SPARSE_MIN_HAMMING_WEIGHT);

/// The cases, by entry index (module docs).
///
/// One entry per case: a bootstrap with its keygen costs about a second, and CI
/// replays each on two backends (a second seed of a case would add time, not a path).
pub const CASES: [CaseSpec; 4] = [
    CaseSpec { secret: SPARSE, function: None, encapsulation: SSE, min_bits: 14.0 },
    CaseSpec { secret: SecretDist::Ternary, function: None, encapsulation: SSE, min_bits: 13.0 },
    CaseSpec { secret: SecretDist::Ternary, function: None, encapsulation: None, min_bits: 10.0 },
    CaseSpec { secret: SecretDist::Ternary, function: Some(FeFunction::Gelu), encapsulation: SSE, min_bits: 20.0 },
];

/// The case of entry `k`; an error beyond [`CASES`].
pub fn case_spec(k: u64) -> Result<CaseSpec> {
    usize::try_from(k)
        .ok()
        .and_then(|k| CASES.get(k).copied())
        .ok_or_else(|| Error::Corpus(format!("bootstrap entry index {k}: only {} cases", CASES.len())))
}

/// The parameter sets of the bootstrap corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootstrapSet {
    /// `N = 2^12`, INSECURE (module docs).
    Insecure,
}

impl BootstrapSet {
    pub const ALL: [BootstrapSet; 1] = [BootstrapSet::Insecure];

    pub const fn name(self) -> &'static str {
        match self {
            BootstrapSet::Insecure => "bootstrap-insecure",
        }
    }

    /// The chain of this set with `secret` (module docs).
    pub fn params(self, secret: SecretDist) -> Result<Arc<Params>> {
        let lit = match self {
            BootstrapSet::Insecure => ParamsLiteral {
                name: "kat-bootstrap-n4096".into(),
                log_n: 12,
                scale_bits: 50,
                depth: 24,
                first_bits: 60,
                special_bits: 60,
                dnum: 4,
                secret,
            },
        };
        Ok(Arc::new(Params::insecure_for_tests(&lit)?))
    }
}

impl fmt::Display for BootstrapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BootstrapSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        BootstrapSet::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown CKKS bootstrap set `{s}` (known: bootstrap-insecure)"))
    }
}

impl From<BootstrapSet> for CaseSet {
    fn from(p: BootstrapSet) -> Self {
        CaseSet::CkksBootstrap(p)
    }
}

/// CKKS bootstrapping (module docs).
#[derive(Clone, Copy, Debug)]
pub struct CkksBootstrap;

impl Scheme for CkksBootstrap {
    type Params = BootstrapSet;
    type File = BootstrapFile;
    type Entry = BootstrapEntry;
    type Computed = BootstrapComputed;

    const LABELS: Labels = Labels {
        noun: "CKKS bootstrap ",
        prefix: "ckks bootstrap ",
        kat: "KAT CKKS bootstrap",
        sets: "sets",
        sweep: "bootstrap sweep",
        generate: corpus::GENERATE,
        counts_skipped: true,
    };
    const FORMAT: &'static str = corpus::FORMAT;
    const ALL_PARAMS: &'static [BootstrapSet] = &BootstrapSet::ALL;
    const KAT_PARAMS: &'static [BootstrapSet] = &BootstrapSet::ALL;
    const KAT_ENTRIES: u64 = CASES.len() as u64;
    const EQUIV_PARAMS: &'static [BootstrapSet] = &BootstrapSet::ALL;

    /// `lux-fhe-kat-v1/ckks/bootstrap-insecure`.
    fn kat_root(p: BootstrapSet) -> String {
        format!("{KAT_ROOT}/ckks/{p}")
    }
    /// `lux-fhe-dispatch-equiv-v1/ckks-bootstrap`.
    fn dispatch_root() -> String {
        format!("{DISPATCH_ROOT}/ckks-bootstrap")
    }
    /// `lux-fhe-backend-equiv-sweep-v1/ckks-bootstrap`.
    fn sweep_root() -> String {
        format!("{SWEEP_ROOT}/ckks-bootstrap")
    }

    fn file_name(p: BootstrapSet) -> String {
        format!("ckks-{p}.json")
    }
    fn file_header(f: &BootstrapFile) -> (&str, &str) {
        (&f.format, &f.set)
    }
    fn new_file(p: BootstrapSet, generator: String, entries: Vec<BootstrapEntry>) -> BootstrapFile {
        corpus::new_file(p, generator, entries)
    }
    fn entries(f: &BootstrapFile) -> &[BootstrapEntry] {
        &f.entries
    }
    fn entries_mut(f: &mut BootstrapFile) -> &mut Vec<BootstrapEntry> {
        &mut f.entries
    }
    fn entry_name(e: &BootstrapEntry) -> &str {
        &e.name
    }
    fn entry_input(e: &BootstrapEntry) -> Result<(BootstrapSet, CaseSeeds)> {
        e.input()
    }
    fn entry_diff(old: &BootstrapEntry, new: &BootstrapEntry) -> Vec<String> {
        corpus::entry_diff(old, new)
    }

    fn skip_reason(backend: &dyn Backend) -> Option<String> {
        equiv::skip_reason(backend)
    }
    /// Seed `k` of a dispatch or sweep runs case `k mod CASES.len()`.
    fn compute(backend: &Arc<dyn Backend>, p: BootstrapSet, seeds: &CaseSeeds, _: Schedule) -> Result<Self::Computed> {
        surfaces::compute(backend, p, seeds)
    }
    fn record(p: BootstrapSet, seeds: &CaseSeeds, c: Self::Computed, generator: &str) -> Result<BootstrapEntry> {
        corpus::record(p, seeds, c, generator)
    }
    fn check_entry(
        check: &mut Checker,
        backend: &str,
        f: &BootstrapFile,
        e: &BootstrapEntry,
        found: &Self::Computed,
    ) -> Result<()> {
        corpus::check_entry(check, backend, f.decoded_tolerance, e, found)
    }
    fn compare(check: &mut Checker, _: &str, target: &str, o: &Self::Computed, t: &Self::Computed) {
        if o.case != t.case {
            check.structure("case", format!("the oracle ran {:?}, {target} ran {:?}", o.case, t.case));
        }
        equiv::compare(check, target, &o.ckks, &t.ckks, o.case.min_bits)
    }
    /// The sweep's seeds: the case on both backends, compared as a dispatch.
    fn sweep_case(
        oracle: &Arc<dyn Backend>,
        target: &Arc<dyn Backend>,
        p: BootstrapSet,
        seeds: &CaseSeeds,
        check: &mut Checker,
    ) -> Result<()> {
        let o = surfaces::compute(oracle, p, seeds)?;
        let t = surfaces::compute(target, p, seeds)?;
        Self::compare(check, &oracle.name(), &target.name(), &o, &t);
        Ok(())
    }
}
