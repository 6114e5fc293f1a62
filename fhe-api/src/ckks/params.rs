//! CKKS parameters: the prime chain, hybrid key-switching digits, the enforced security
//! bound, and the named presets.
//!
//! A chain is generated, not listed: the first prime is the largest NTT prime below
//! `2^first_bits`, the scale primes alternate around `2^scale_bits` (so the scale stays
//! near `2^scale_bits` after each rescale), and the special primes are the fewest primes
//! below `2^special_bits` whose product exceeds every key-switching digit. Generation is
//! deterministic, so a preset's primes are the same on every platform; tests pin them.
//! `docs/CKKS.md` lists every preset's numbers (printed by an ignored test here).

use std::cmp::Ordering;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::ckks::scale::Scale;
use crate::error::{Error, Result};
use crate::ring::prime::{primes_below, primes_near, primes_tracking};
use crate::ring::{PolynomialSize, RingModulus};
use crate::tag::KeyTag;

/// Smallest and largest ring degree of a CKKS configuration (`N = 2^12 .. 2^17`, DESIGN).
pub const MIN_LOG_N: u32 = 12;
pub const MAX_LOG_N: u32 = 17;
/// Widest first or special prime: the fastest CPU NTT kernel takes `q < 2^60`.
pub const MAX_PRIME_BITS: u32 = 60;
/// Centered-binomial parameter of every CKKS error term: variance `eta / 2 = 10.5`,
/// sigma 3.24, at least the HE standard's sigma 3.2 that its bounds assume.
pub const CKKS_NOISE_ETA: u32 = 21;
/// Hamming weight OpenFHE gives `SPARSE_TERNARY` and `SPARSE_ENCAPSULATED` secrets
/// (openfhe-development issue #311); the sparse bounds below were set for it.
pub const SPARSE_MIN_HAMMING_WEIGHT: usize = 192;

/// How the secret key is sampled; the security bound depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecretDist {
    /// Uniform over `{-1, 0, 1}` per coefficient (the HE standard's "ternary").
    Ternary,
    /// Exactly `hamming_weight` coefficients in `{-1, 1}`, the rest zero: smaller
    /// bootstrapping error (the `I(X)` of ModRaise is bounded by `h`), lower bound.
    SparseTernary { hamming_weight: usize },
}

impl SecretDist {
    /// The name error messages and reports use.
    pub const fn name(self) -> &'static str {
        match self {
            SecretDist::Ternary => "ternary",
            SecretDist::SparseTernary { .. } => "sparse ternary",
        }
    }
}

/// The largest `log2(QP)` that keeps `Z_QP[X]/(X^N + 1)` at 128-bit classical security,
/// or `None` where no table covers `(N, secret)`.
///
/// - Ternary: the Homomorphic Encryption Security Standard (Albrecht et al.,
///   HomomorphicEncryption.org, November 2018), table of 128-bit classical bounds for
///   uniform ternary secrets and sigma ~ 3.2: 27 .. 881 bits for `N = 2^10 .. 2^15`. The
///   `2^16` (1772) and `2^17` (3576) rows go beyond that table: they are the values
///   DESIGN.md adopts, as libraries extend the table (provenance not re-checked here).
/// - Sparse ternary: 767 / 1553 / 3104 bits at `N = 2^15 / 2^16 / 2^17`, the limits of
///   OpenFHE's sparse-secret table as seed 2 (OpenFHE PR #1372) applies them, estimated
///   for `h = 192`. A lighter secret (or another `N`) has no bound here: `None`.
pub fn security_bound_bits(log_n: u32, secret: SecretDist) -> Option<u32> {
    match secret {
        SecretDist::Ternary => match log_n {
            10 => Some(27),
            11 => Some(54),
            12 => Some(109),
            13 => Some(218),
            14 => Some(438),
            15 => Some(881),
            16 => Some(1772),
            17 => Some(3576),
            _ => None,
        },
        SecretDist::SparseTernary { hamming_weight } if hamming_weight >= SPARSE_MIN_HAMMING_WEIGHT => match log_n {
            15 => Some(767),
            16 => Some(1553),
            17 => Some(3104),
            _ => None,
        },
        SecretDist::SparseTernary { .. } => None,
    }
}

/// Every number of one CKKS configuration: validated on construction ([`Params::new`],
/// [`Preset::params`]) and immutable after, so a checked configuration stays checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    name: String,
    /// Ring degree `N`; `N / 2` complex slots.
    ring_degree: PolynomialSize,
    /// `log2` of the default scale `Delta`; the scale primes are near `2^scale_bits`.
    scale_bits: u32,
    /// `q[0]` the first prime, `q[1..=depth]` the scale primes; level `l` uses `q[0..=l]`
    /// and a rescale drops the last one.
    q: Vec<RingModulus>,
    /// Special primes `P` of hybrid key switching (ModUp to `Q_l P`, ModDown by `P`).
    p: Vec<RingModulus>,
    /// Number of key-switching digits at the top level (each digit `alpha` primes of `q`).
    dnum: usize,
    secret: SecretDist,
    /// Centered-binomial `eta` of every error term ([`CKKS_NOISE_ETA`]).
    noise_eta: u32,
    /// Built by [`Params::insecure_for_tests`]: the security check is skipped.
    insecure: bool,
}

impl Params {
    /// The configuration's name (a preset's name, or the literal's).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ring degree `N` as its newtype.
    pub fn ring_degree(&self) -> PolynomialSize {
        self.ring_degree
    }

    /// `log2` of the default scale `Delta`; the scale primes are near `2^scale_bits`.
    pub fn scale_bits(&self) -> u32 {
        self.scale_bits
    }

    /// The ciphertext primes: `q[0]` the first prime, `q[1..=depth]` the scale primes;
    /// level `l` uses `q[0..=l]` and a rescale drops the last one.
    pub fn q(&self) -> &[RingModulus] {
        &self.q
    }

    /// The special primes `P` of hybrid key switching (ModUp to `Q_l P`, ModDown by `P`).
    pub fn p(&self) -> &[RingModulus] {
        &self.p
    }

    /// Key-switching digits at the top level (each digit `alpha` primes of `q`).
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// How the secret key is sampled.
    pub fn secret(&self) -> SecretDist {
        self.secret
    }

    /// Centered-binomial `eta` of every error term ([`CKKS_NOISE_ETA`]).
    pub fn noise_eta(&self) -> u32 {
        self.noise_eta
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.ring_degree.0
    }

    pub fn log_n(&self) -> u32 {
        self.ring_degree.0.trailing_zeros()
    }

    /// Complex slots at full packing: `N / 2` (the conjugate half is implied).
    pub fn slots(&self) -> usize {
        self.ring_degree.0 / 2
    }

    /// The top level: `q.len() - 1`.
    pub fn max_level(&self) -> usize {
        self.q.len() - 1
    }

    /// Multiplicative depth: rescales available from the top level (one per scale prime).
    pub fn depth(&self) -> usize {
        self.q.len() - 1
    }

    /// `Delta = 2^scale_bits`, the scale a fresh encoding uses.
    pub fn default_scale(&self) -> Scale {
        Scale::pow2(self.scale_bits).expect("scale_bits <= 60 is checked at construction")
    }

    /// The canonical scale of `level` in the automatic mode (OpenFHE's FLEXIBLEAUTO
    /// table): `Delta` at the top, and `scale_at(l - 1) = scale_at(l)^2 / q_l`, so a
    /// product of two ciphertexts at their level's scale, rescaled, lands exactly on the
    /// next level's. `level` above the top is clamped to the top.
    pub fn scale_at(&self, level: usize) -> Scale {
        let mut s = self.default_scale().value();
        for l in (level.min(self.max_level()) + 1..=self.max_level()).rev() {
            s = s * s / self.q[l].0 as f64;
        }
        Scale::new(s).unwrap_or(self.default_scale())
    }

    /// The tag of the key set whose public seed is `public_seed` under these parameters.
    pub fn key_tag(&self, public_seed: &[u8; 32]) -> KeyTag {
        KeyTag::derive_ckks(self.n(), self.q.iter().chain(&self.p).map(|q| q.0), public_seed)
    }

    /// `log2(q_0 ... q_level)`: the modulus a ciphertext at `level` lives in.
    pub fn log2_q_at(&self, level: usize) -> f64 {
        self.q[..=level.min(self.max_level())].iter().map(|q| (q.0 as f64).log2()).sum()
    }

    /// Primes per key-switching digit: `ceil(q.len() / dnum)`.
    pub fn alpha(&self) -> usize {
        self.q.len().div_ceil(self.dnum.max(1))
    }

    /// The `q`-index ranges of the key-switching digits at `level`: digit `j` covers
    /// `[j alpha, min((j + 1) alpha, level + 1))`; digits emptied by the level are omitted.
    /// The same partition at every level keeps one set of keys valid for all levels.
    pub fn digits(&self, level: usize) -> Vec<Range<usize>> {
        let (alpha, top) = (self.alpha(), (level + 1).min(self.q.len()));
        (0..self.dnum).map(|j| j * alpha..((j + 1) * alpha).min(top)).filter(|r| !r.is_empty()).collect()
    }

    /// `ceil(log2(QP))` over every prime of `q` and `p`, computed exactly: the bit length
    /// of the product (a product of odd primes is no power of two, so its bit length is
    /// the ceiling of its log). The enforced check uses this, so it never under-counts.
    pub fn log_qp(&self) -> u32 {
        let all: Vec<u64> = self.q.iter().chain(&self.p).map(|m| m.0).collect();
        mp_bits(&mp_product(&all))
    }

    /// `ceil(log2(Q))` of the ciphertext modulus alone (no special primes).
    pub fn log_q(&self) -> u32 {
        let q: Vec<u64> = self.q.iter().map(|m| m.0).collect();
        mp_bits(&mp_product(&q))
    }

    /// The 128-bit bound for this `N` and secret ([`security_bound_bits`]).
    pub fn security_bound(&self) -> Option<u32> {
        security_bound_bits(self.log_n(), self.secret)
    }

    /// Refuses a configuration over the HE standard's 128-bit bound
    /// (`Error::SecurityBound`, naming `log QP` and the bound), or one no table covers
    /// (`Error::InvalidInput`).
    pub fn check_security(&self) -> Result<()> {
        if self.insecure {
            tracing::warn!(params = %self.name, "insecure CKKS parameters (tests only): security check skipped");
            return Ok(());
        }
        let bound = self.security_bound().ok_or_else(|| {
            Error::InvalidInput(format!(
                "no 128-bit bound for {} secrets at N = {} (ternary: N = 2^10..2^17; sparse: N = 2^15..2^17 \
                 with hamming weight >= {SPARSE_MIN_HAMMING_WEIGHT})",
                self.secret.name(),
                self.n()
            ))
        })?;
        let log_qp = self.log_qp();
        if log_qp > bound {
            return Err(Error::SecurityBound { log_qp, bound, n: self.n(), secret: self.secret.name() });
        }
        Ok(())
    }

    /// Generates the chain of `literal` (see the module docs) and checks it against the
    /// security bound.
    ///
    /// `depth` scale primes follow the first prime; `dnum` key-switching digits (a `dnum`
    /// that would leave a digit empty is lowered to the number of non-empty digits:
    /// same `alpha`, same keys). Refused: `N` outside `2^12 .. 2^17`, first or special
    /// primes over 60 bits, `scale_bits` outside `20 ..= first_bits`, `dnum` outside
    /// `1 ..= depth + 1` (`Error::InvalidInput`), and anything over the bound
    /// (`Error::SecurityBound`, naming both numbers).
    pub fn new(literal: &ParamsLiteral) -> Result<Params> {
        let params = Params::build_chain(literal)?;
        params.check_security()?;
        Ok(params)
    }

    /// The chain of `literal` WITHOUT the security check, named `insecure-<name>`: small
    /// configurations that let CI run circuits (bootstrapping) whose secure sizes take
    /// minutes. Never for data: tests using it say "insecure" in their names.
    pub fn insecure_for_tests(literal: &ParamsLiteral) -> Result<Params> {
        let mut params = Params::build_chain(literal)?;
        params.name = format!("insecure-{}", params.name);
        params.insecure = true;
        Ok(params)
    }

    /// Whether these parameters skip the security check ([`Params::insecure_for_tests`]).
    pub fn is_insecure(&self) -> bool {
        self.insecure
    }

    /// The chain of `literal`, before the security check.
    fn build_chain(literal: &ParamsLiteral) -> Result<Params> {
        let ParamsLiteral { ref name, log_n, scale_bits, depth, first_bits, special_bits, dnum, secret } = *literal;
        let invalid = |m: String| Err(Error::InvalidInput(m));
        if !(MIN_LOG_N..=MAX_LOG_N).contains(&log_n) {
            return invalid(format!("CKKS ring degree 2^{log_n}: must be 2^{MIN_LOG_N} .. 2^{MAX_LOG_N}"));
        }
        if first_bits > MAX_PRIME_BITS || special_bits > MAX_PRIME_BITS {
            return invalid(format!(
                "first prime {first_bits} bits, special primes {special_bits} bits: at most {MAX_PRIME_BITS}"
            ));
        }
        if !(20..=first_bits).contains(&scale_bits) {
            return invalid(format!("scale 2^{scale_bits}: must be 2^20 .. 2^{first_bits} (the first prime)"));
        }
        if !(1..=depth + 1).contains(&dnum) {
            return invalid(format!("dnum = {dnum}: must be 1 ..= {} (the number of q primes)", depth + 1));
        }
        let n = PolynomialSize(1 << log_n);
        let mut q = primes_below(first_bits, n, 1, &[])?;
        // Near 2^scale_bits, alternating above and below, where there are enough and the
        // automatic mode's scale table stays within a bit of 2^scale_bits; else chosen to
        // track that table (deep chains: a deviation doubles at every level).
        let scale_primes = match primes_near(scale_bits, n, depth, &q) {
            Ok(p) if scale_drift_bits(scale_bits, &p) <= 1.0 => p,
            _ => primes_tracking(scale_bits, n, depth, &q)?,
        };
        q.extend(scale_primes);
        let mut params = Params {
            name: name.clone(),
            ring_degree: n,
            scale_bits,
            q: q.iter().map(|&x| RingModulus(x)).collect(),
            p: Vec::new(),
            dnum,
            secret,
            noise_eta: CKKS_NOISE_ETA,
            insecure: false,
        };
        params.dnum = params.digits(params.max_level()).len();
        // P > every digit: the key-switching error is then about the rounding error of
        // ModDown, independent of the digit size (hybrid key switching, Han-Ki 2020).
        let largest_digit = params
            .digits(params.max_level())
            .into_iter()
            .map(|r| mp_product(&q[r]))
            .max_by(|a, b| mp_cmp(a, b))
            .expect("dnum >= 1");
        let mut k = 1;
        let p = loop {
            let p = primes_below(special_bits, n, k, &q)?;
            if mp_cmp(&mp_product(&p), &largest_digit) == Ordering::Greater {
                break p;
            }
            k += 1;
        };
        params.p = p.into_iter().map(RingModulus).collect();
        Ok(params)
    }
}

/// The largest `|log2(scale_at(l)) - scale_bits|` over the levels of a chain whose scale
/// primes are `scale_primes` (`q_1` first), as [`Params::scale_at`] computes the table.
fn scale_drift_bits(scale_bits: u32, scale_primes: &[u64]) -> f64 {
    let delta = pow2_f64(scale_bits);
    let mut s = delta;
    let mut worst = 0.0f64;
    for &q in scale_primes.iter().rev() {
        s = s * s / q as f64;
        worst = worst.max((s / delta).log2().abs());
    }
    if worst.is_finite() {
        worst
    } else {
        f64::INFINITY
    }
}

fn pow2_f64(bits: u32) -> f64 {
    (1u64 << bits) as f64
}

/// The product of `factors` as little-endian 64-bit limbs, without high zero limbs
/// (log QP and the special-prime count need it exactly, as the CRT decode does).
pub fn mp_product(factors: &[u64]) -> Vec<u64> {
    let mut x = vec![1u64];
    for &f in factors {
        let mut carry = 0u128;
        for limb in x.iter_mut() {
            let t = *limb as u128 * f as u128 + carry;
            *limb = t as u64;
            carry = t >> 64;
        }
        if carry != 0 {
            x.push(carry as u64);
        }
    }
    while x.len() > 1 && x[x.len() - 1] == 0 {
        x.pop();
    }
    x
}

/// Bit length of a little-endian multiprecision integer.
pub fn mp_bits(x: &[u64]) -> u32 {
    match x.iter().rposition(|&l| l != 0) {
        Some(i) => 64 * i as u32 + 64 - x[i].leading_zeros(),
        None => 0,
    }
}

/// Compares two little-endian multiprecision integers of any lengths.
pub fn mp_cmp(a: &[u64], b: &[u64]) -> Ordering {
    let len = a.len().max(b.len());
    for i in (0..len).rev() {
        let (x, y) = (a.get(i).copied().unwrap_or(0), b.get(i).copied().unwrap_or(0));
        if x != y {
            return x.cmp(&y);
        }
    }
    Ordering::Equal
}

/// The named CKKS presets, named as seed 1 names them: slots, scale bits, depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Preset {
    /// N = 2^13, 2 levels, dnum 3: the cheap preset CI runs everywhere.
    Slots4096Scale40Depth2,
    /// N = 2^14, 6 levels, dnum 4.
    Slots8192Scale40Depth6,
    /// N = 2^15, 14 levels, dnum 3.
    Slots16384Scale40Depth14,
    /// N = 2^16, 34 levels, dnum 6: seed 1's `slots32768-scale40-depth34`.
    Slots32768Scale40Depth34,
    /// N = 2^16, 59-bit scale, 60-bit first prime, 22 levels, dnum 4, uniform ternary:
    /// the bootstrappable configuration of OpenFHE's benchmark (level budget `{3, 3}`).
    Slots32768Scale59Depth22,
}

/// The numbers a CKKS configuration is generated from (Lattigo's `ParametersLiteral`):
/// [`Params::new`] builds the prime chain and checks it. Start from a preset's
/// ([`Preset::literal`]) and change what you need:
/// `ParamsLiteral { dnum: 4, ..Preset::Slots16384Scale40Depth14.literal() }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsLiteral {
    /// The name reports and errors use.
    pub name: String,
    /// `N = 2^log_n`, `12 ..= 17`.
    pub log_n: u32,
    /// The scale primes sit near `2^scale_bits`, the default scale.
    pub scale_bits: u32,
    /// Scale primes after the first prime: the multiplicative depth.
    pub depth: usize,
    /// Bits of the first prime `q_0` (the largest NTT prime below `2^first_bits`).
    pub first_bits: u32,
    /// Bits of each special prime.
    pub special_bits: u32,
    /// Key-switching digits.
    pub dnum: usize,
    pub secret: SecretDist,
}

impl Preset {
    /// Every preset, in a fixed order (the order of reports and format ids).
    pub const ALL: [Preset; 5] = [
        Preset::Slots4096Scale40Depth2,
        Preset::Slots8192Scale40Depth6,
        Preset::Slots16384Scale40Depth14,
        Preset::Slots32768Scale40Depth34,
        Preset::Slots32768Scale59Depth22,
    ];

    /// Stable numeric id in serialized headers (the bit scheme's sets use 1 ..= 100).
    pub const fn id(self) -> u16 {
        match self {
            Preset::Slots4096Scale40Depth2 => 101,
            Preset::Slots8192Scale40Depth6 => 102,
            Preset::Slots16384Scale40Depth14 => 103,
            Preset::Slots32768Scale40Depth34 => 104,
            Preset::Slots32768Scale59Depth22 => 105,
        }
    }

    /// Inverse of [`Preset::id`].
    pub const fn from_id(id: u16) -> Option<Preset> {
        match id {
            101 => Some(Preset::Slots4096Scale40Depth2),
            102 => Some(Preset::Slots8192Scale40Depth6),
            103 => Some(Preset::Slots16384Scale40Depth14),
            104 => Some(Preset::Slots32768Scale40Depth34),
            105 => Some(Preset::Slots32768Scale59Depth22),
            _ => None,
        }
    }

    /// The preset's name as users write it.
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Slots4096Scale40Depth2 => "slots4096-scale40-depth2",
            Preset::Slots8192Scale40Depth6 => "slots8192-scale40-depth6",
            Preset::Slots16384Scale40Depth14 => "slots16384-scale40-depth14",
            Preset::Slots32768Scale40Depth34 => "slots32768-scale40-depth34",
            Preset::Slots32768Scale59Depth22 => "slots32768-scale59-depth22",
        }
    }

    /// The preset's literal. Each preset takes the smallest `dnum` whose chain fits the
    /// bound (a test checks `dnum - 1` does not): fewer digits, fewer key-switching NTTs
    /// and smaller keys.
    pub fn literal(self) -> ParamsLiteral {
        let s = |log_n, depth, first_bits, dnum| ParamsLiteral {
            name: self.name().to_string(),
            log_n,
            scale_bits: if self == Preset::Slots32768Scale59Depth22 { 59 } else { 40 },
            depth,
            first_bits,
            special_bits: 60,
            dnum,
            secret: SecretDist::Ternary,
        };
        match self {
            // A 55-bit first prime (not 60): with 60 bits the special prime could not
            // exceed it alone, and two special primes break the 218-bit bound.
            Preset::Slots4096Scale40Depth2 => s(13, 2, 55, 3),
            Preset::Slots8192Scale40Depth6 => s(14, 6, 60, 4),
            Preset::Slots16384Scale40Depth14 => s(15, 14, 60, 3),
            Preset::Slots32768Scale40Depth34 => s(16, 34, 60, 6),
            Preset::Slots32768Scale59Depth22 => s(16, 22, 60, 4),
        }
    }

    /// The preset's numbers, generated on first use and kept for the process.
    pub fn params(self) -> &'static Params {
        static S4096: OnceLock<Params> = OnceLock::new();
        static S8192: OnceLock<Params> = OnceLock::new();
        static S16384: OnceLock<Params> = OnceLock::new();
        static S32768: OnceLock<Params> = OnceLock::new();
        static S32768B: OnceLock<Params> = OnceLock::new();
        // One cell per preset by an exhaustive match: a new preset fails to compile here.
        let cell = match self {
            Preset::Slots4096Scale40Depth2 => &S4096,
            Preset::Slots8192Scale40Depth6 => &S8192,
            Preset::Slots16384Scale40Depth14 => &S16384,
            Preset::Slots32768Scale40Depth34 => &S32768,
            Preset::Slots32768Scale59Depth22 => &S32768B,
        };
        cell.get_or_init(|| {
            Params::new(&self.literal()).expect("presets are generated deterministically and tested secure")
        })
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Preset::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(s)).ok_or_else(|| Error::UnknownParamSet {
            value: s.to_string(),
            valid: Preset::ALL.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

#[cfg(test)]
impl Params {
    /// A copy with other ciphertext primes, unchecked: for tests of what refuses such
    /// parameters (the format, which takes only presets).
    pub(crate) fn with_q_unchecked(&self, q: Vec<RingModulus>) -> Params {
        Params { q, ..self.clone() }
    }
}

#[cfg(test)]
mod tests;
