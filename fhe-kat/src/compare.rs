//! What a difference is, and how it is named.

use std::fmt;

use fhe_api::ckks::params::Preset;
use fhe_api::ParamSet;

/// Which check found the case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Kat,
    Dispatch,
    Sweep,
    /// fhe-bench's `recommend` screening of a candidate, on the inputs it then times.
    Recommend,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Kat => "kat",
            Source::Dispatch => "dispatch",
            Source::Sweep => "sweep",
            Source::Recommend => "recommend",
        }
    }
}

/// The parameter set of a case: a bit-scheme set, a CKKS preset or the CKKS bootstrap
/// corpus's set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseSet {
    Bits(ParamSet),
    Ckks(Preset),
    CkksBootstrap(crate::ckks::bootstrap::BootstrapSet),
}

impl From<ParamSet> for CaseSet {
    fn from(p: ParamSet) -> Self {
        CaseSet::Bits(p)
    }
}

impl From<Preset> for CaseSet {
    fn from(p: Preset) -> Self {
        CaseSet::Ckks(p)
    }
}

impl fmt::Display for CaseSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaseSet::Bits(p) => write!(f, "{p}"),
            CaseSet::Ckks(p) => write!(f, "ckks {p}"),
            CaseSet::CkksBootstrap(p) => write!(f, "ckks {p}"),
        }
    }
}

/// One case: a parameter set and a seed index (plus the KAT entry name for the corpus).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub source: Source,
    pub params: CaseSet,
    pub index: u64,
    /// The KAT entry name (`PN10QP27/2`), for corpus cases.
    pub entry: Option<String>,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(e) => {
                write!(f, "{} entry {e} (params {}, seed index {})", self.source.name(), self.params, self.index)
            }
            None => write!(f, "{} params {} seed index {}", self.source.name(), self.params, self.index),
        }
    }
}

/// How two results differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MismatchKind {
    /// The bytes differ; `offset` is the first differing byte (or the length of the
    /// shorter one when one is a prefix of the other).
    Bytes { offset: usize, expected: Option<u8>, found: Option<u8>, expected_len: usize, found_len: usize },
    /// A ciphertext decrypts to the wrong bit (`backend` names who computed it).
    Plaintext { backend: String, expected: bool, found: String },
    /// The surfaces themselves do not line up (corpus and code disagree on the list).
    Structure(String),
    /// A CKKS ciphertext decrypts to the wrong values (`backend` names who computed it;
    /// `what` says which value, by how much, against which bound).
    Values { backend: String, what: String },
}

/// A difference between the expected (oracle or corpus) and the found (target) result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub case: Case,
    /// `sk`, `ek (sha256)`, `encrypt[1]`, `bootstrap[0]`, `gate:xor`, `mux`, `not`, ...
    pub surface: String,
    pub kind: MismatchKind,
}

impl Mismatch {
    /// The first differing byte offset, for byte mismatches.
    pub fn offset(&self) -> Option<usize> {
        match self.kind {
            MismatchKind::Bytes { offset, .. } => Some(offset),
            _ => None,
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mismatch: {}, surface {}: ", self.case, self.surface)?;
        let byte = |b: Option<u8>| b.map_or_else(|| "end".to_string(), |b| format!("0x{b:02x}"));
        match &self.kind {
            MismatchKind::Bytes { offset, expected, found, expected_len, found_len } => write!(
                f,
                "first differing byte at offset {offset} (expected {}, found {}; lengths {expected_len} vs {found_len})",
                byte(*expected),
                byte(*found)
            ),
            MismatchKind::Plaintext { backend, expected, found } => {
                write!(f, "{backend} decrypts to {found}, expected {}", *expected as u8)
            }
            MismatchKind::Structure(s) => f.write_str(s),
            MismatchKind::Values { backend, what } => write!(f, "{backend} decrypts to the wrong values: {what}"),
        }
    }
}

/// The first offset where `expected` and `found` differ, or `None` when they are equal.
pub fn first_difference(expected: &[u8], found: &[u8]) -> Option<usize> {
    match expected.iter().zip(found).position(|(a, b)| a != b) {
        Some(i) => Some(i),
        None if expected.len() != found.len() => Some(expected.len().min(found.len())),
        None => None,
    }
}

/// The gate's byte rule for one surface a caller computed itself on the oracle
/// (`expected`) and on a target (`found`): `None` when equal, else the [`Mismatch`]
/// naming the case, the surface and the first differing byte. For checks of the very
/// inputs a caller goes on to use (fhe-bench's `recommend`), where the gate's own seeds
/// would check other inputs; one comparison, so both read the same.
pub fn compare_bytes(case: &Case, surface: &str, expected: &[u8], found: &[u8]) -> Option<Mismatch> {
    let mut check = Checker::new(case.clone());
    check.bytes(surface, expected, found);
    check.found.pop()
}

/// Collects the mismatches of one case: what [`crate::Scheme`]'s comparison rules write
/// into.
pub struct Checker {
    pub case: Case,
    pub found: Vec<Mismatch>,
}

impl Checker {
    pub fn new(case: Case) -> Self {
        Checker { case, found: Vec::new() }
    }

    pub fn bytes(&mut self, surface: &str, expected: &[u8], found: &[u8]) {
        if let Some(offset) = first_difference(expected, found) {
            self.push(
                surface,
                MismatchKind::Bytes {
                    offset,
                    expected: expected.get(offset).copied(),
                    found: found.get(offset).copied(),
                    expected_len: expected.len(),
                    found_len: found.len(),
                },
            );
        }
    }

    pub fn plaintext(&mut self, surface: &str, backend: &str, expected: bool, found: &Result<bool, String>) {
        let shown = match found {
            Ok(b) if *b == expected => return,
            Ok(b) => (*b as u8).to_string(),
            Err(e) => format!("no bit ({e})"),
        };
        self.push(surface, MismatchKind::Plaintext { backend: backend.to_string(), expected, found: shown });
    }

    pub fn structure(&mut self, surface: &str, what: String) {
        self.push(surface, MismatchKind::Structure(what));
    }

    pub fn values(&mut self, surface: &str, backend: &str, what: String) {
        self.push(surface, MismatchKind::Values { backend: backend.to_string(), what });
    }

    fn push(&mut self, surface: &str, kind: MismatchKind) {
        let m = Mismatch { case: self.case.clone(), surface: surface.to_string(), kind };
        tracing::debug!(%m, "mismatch");
        self.found.push(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_finds_the_offset() {
        assert_eq!(first_difference(b"abc", b"abc"), None);
        assert_eq!(first_difference(b"abc", b"abd"), Some(2));
        assert_eq!(first_difference(b"xbc", b"abc"), Some(0));
        assert_eq!(first_difference(b"ab", b"abc"), Some(2));
        assert_eq!(first_difference(b"abc", b""), Some(0));
    }

    #[test]
    fn mismatch_names_case_surface_and_offset() {
        let case = Case { source: Source::Dispatch, params: ParamSet::PN10QP27.into(), index: 7, entry: None };
        let mut c = Checker::new(case);
        c.bytes("bootstrap[1]", &[1, 2, 3, 4], &[1, 2, 9, 4]);
        c.bytes("equal", &[5], &[5]);
        assert_eq!(c.found.len(), 1);
        let s = c.found[0].to_string();
        assert!(s.contains("PN10QP27") && s.contains("seed index 7") && s.contains("bootstrap[1]"), "{s}");
        assert!(s.contains("offset 2") && s.contains("0x03") && s.contains("0x09"), "{s}");
        assert_eq!(c.found[0].offset(), Some(2));
    }

    #[test]
    fn compare_bytes_is_the_checkers_rule() {
        let case = Case { source: Source::Recommend, params: ParamSet::PN10QP27.into(), index: 0, entry: None };
        assert_eq!(compare_bytes(&case, "ntt_forward", &[1, 2], &[1, 2]), None);
        let m = compare_bytes(&case, "ntt_forward", &[1, 2, 3], &[1, 2]).unwrap();
        assert_eq!(m.offset(), Some(2));
        let s = m.to_string();
        assert!(s.starts_with("mismatch: recommend params PN10QP27") && s.contains("surface ntt_forward"), "{s}");
    }
}
