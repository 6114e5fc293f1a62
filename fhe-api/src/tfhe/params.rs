//! The bit scheme's production parameter sets.
//!
//! Every dimension and modulus is a newtype so a ring degree cannot be passed where an
//! LWE dimension is expected. The numbers, their sources and the security and noise
//! claims built on them are justified in `docs/PARAMETERS.md`; the noise model that
//! turns them into a failure probability is [`crate::noise`].

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::ring::{PolynomialSize, RingModulus};

/// Dimension `n` of the small LWE secret that gate ciphertexts live under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LweDimension(pub usize);

/// `log2` of a gadget decomposition base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecompositionBaseLog(pub u32);

/// Number of digits of a gadget decomposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecompositionLevelCount(pub usize);

/// `log2` of the power-of-two LWE ciphertext modulus `q` (also the key-switch modulus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LweModulusLog(pub u32);

/// LWE coefficients a multi-bit bootstrap key groups per step (TFHE-rs's
/// `LweBskGroupingFactor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupingFactor(pub usize);

/// How the blind rotation consumes the LWE mask, which fixes the bootstrap key's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlindRotation {
    /// One step per coefficient, RGSW keys of `s_i == 1` and `s_i == -1` (ternary).
    Ginx,
    /// One step per group of `k` coefficients, a binary secret, and an RGSW key of the
    /// indicator `[s_group == t]` for every non-zero bit pattern `t` of the group:
    /// `2^k - 1` keys a group. The step multiplies the accumulator by
    /// `1 + sum_t (X^<a_group, t> - 1) [s_group == t] = X^<a_group, s_group>`.
    MultiBit(GroupingFactor),
}

/// Distribution of the small LWE secret `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LweSecret {
    /// Uniform in `{-1, 0, 1}` (OpenFHE's sets): `E[s^2] = 2/3`.
    Ternary,
    /// Uniform in `{0, 1}` (TFHE-rs's sets): `E[s^2] = 1/2`, so the mod switch to `2N`
    /// adds a quarter less noise; the programmable-bootstrapping sets need that margin.
    Binary,
}

impl LweSecret {
    /// `E[s_i^2]`, the factor of every rounding error that multiplies the secret.
    pub const fn second_moment(self) -> f64 {
        match self {
            LweSecret::Ternary => 2.0 / 3.0,
            LweSecret::Binary => 0.5,
        }
    }
}

/// The named production parameter sets. All target 128-bit security.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ParamSet {
    /// Ring N=1024, Q a 27-bit prime, bootstrap decomposition L=4 (the paper's first set).
    PN10QP27,
    /// Ring N=2048, Q a 54-bit prime, L=5 (the paper's second set): the lane that
    /// exercises 64-bit modular arithmetic, with a finer blind-rotation grid (2N = 4096).
    PN11QP54,
    /// Ring N=1024, Q a 25-bit prime: 128-bit security against quantum attacks
    /// (the HE standard's quantum bound, as OpenFHE's STD128Q).
    PN10QP25Q,
    /// Programmable bootstrapping of 2-bit messages with 2 carry bits and a padding bit
    /// (5-bit encoding): the ring of `PN11QP54` with the top digit of a 2-digit gadget,
    /// LWE n = 841 mod 2^20 with a binary secret and one RGSW key a coefficient (the
    /// multi-bit rotation with groups of one), after TFHE-rs's `PARAM_MESSAGE_2_CARRY_2`
    /// (KS-PBS, p-fail 2^-64 family). Not in [`ParamSet::ALL`]: its LWE words exceed 16
    /// bits, which only the CPU backend's key switch handles so far.
    M2C2,
    /// `M2C2` with a multi-bit blind rotation grouping 2 LWE coefficients a step (LWE
    /// n = 846, divisible by 2 and 3).
    M2C2G2,
    /// As [`ParamSet::M2C2G2`], grouping 3 coefficients a step.
    M2C2G3,
}

impl ParamSet {
    /// Every production set, in a fixed order (the order of reports and KAT files).
    pub const ALL: [ParamSet; 3] = [ParamSet::PN10QP27, ParamSet::PN11QP54, ParamSet::PN10QP25Q];

    /// The programmable-bootstrapping sets (message and carry bits with padding;
    /// `fhe_schemes::tfhe::pbs`), kept apart from [`ParamSet::ALL`], whose every member
    /// each backend, KAT file and benchmark covers.
    pub const PBS: [ParamSet; 3] = [ParamSet::M2C2, ParamSet::M2C2G2, ParamSet::M2C2G3];

    /// Every set, gate and programmable-bootstrapping.
    pub fn every() -> impl Iterator<Item = ParamSet> {
        ParamSet::ALL.into_iter().chain(ParamSet::PBS)
    }

    /// Stable numeric id written into every serialized header.
    pub const fn id(self) -> u16 {
        match self {
            ParamSet::PN10QP27 => 1,
            ParamSet::PN11QP54 => 2,
            ParamSet::PN10QP25Q => 3,
            ParamSet::M2C2 => 4,
            ParamSet::M2C2G2 => 5,
            ParamSet::M2C2G3 => 6,
        }
    }

    /// Inverse of [`ParamSet::id`].
    pub const fn from_id(id: u16) -> Option<ParamSet> {
        match id {
            1 => Some(ParamSet::PN10QP27),
            2 => Some(ParamSet::PN11QP54),
            3 => Some(ParamSet::PN10QP25Q),
            4 => Some(ParamSet::M2C2),
            5 => Some(ParamSet::M2C2G2),
            6 => Some(ParamSet::M2C2G3),
            _ => None,
        }
    }

    /// The set's name as users write it.
    pub const fn name(self) -> &'static str {
        self.params().name
    }

    /// The set whose ring is `Z_q[X]/(X^n + 1)`, if one is (a backend whose kernels are
    /// built per set maps a [`crate::ops::RingOps`] call back to its set with this).
    pub fn for_ring(n: PolynomialSize, q: RingModulus) -> Option<ParamSet> {
        ParamSet::ALL.into_iter().find(|s| s.params().ring_degree == n && s.params().ring_modulus == q)
    }

    /// The numbers behind the name.
    pub const fn params(self) -> &'static Params {
        match self {
            ParamSet::PN10QP27 => &PN10QP27,
            ParamSet::PN11QP54 => &PN11QP54,
            ParamSet::PN10QP25Q => &PN10QP25Q,
            ParamSet::M2C2 => &M2C2,
            ParamSet::M2C2G2 => &M2C2G2,
            ParamSet::M2C2G3 => &M2C2G3,
        }
    }
}

impl fmt::Display for ParamSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ParamSet {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        ParamSet::every().find(|p| p.name().eq_ignore_ascii_case(s)).ok_or_else(|| Error::UnknownParamSet {
            value: s.to_string(),
            valid: ParamSet::every().map(|p| p.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// Every number of one parameter set.
#[derive(Debug)]
pub struct Params {
    pub name: &'static str,
    /// Ring degree `N`.
    pub ring_degree: PolynomialSize,
    /// Prime ring modulus `Q`.
    pub ring_modulus: RingModulus,
    /// Bootstrap-key gadget base `Bg = 2^bsk_base_log`.
    pub bsk_base_log: DecompositionBaseLog,
    /// Bootstrap-key gadget digits `L`, the top ones of the exact decomposition: the gate
    /// sets keep every digit (`Bg^L >= Q`); the programmable-bootstrapping sets keep the
    /// top one and round the lowest away ([`Params::bsk_dropped_levels`]).
    pub bsk_levels: DecompositionLevelCount,
    /// LWE dimension `n`.
    pub lwe_dimension: LweDimension,
    /// LWE and key-switch modulus `q = 2^lwe_modulus_log`.
    pub lwe_modulus_log: LweModulusLog,
    /// Key-switch base `B_ks = 2^ksk_base_log`.
    pub ksk_base_log: DecompositionBaseLog,
    /// Key-switch digits: `B_ks^levels = q` (exact) for the gate sets; the PBS sets keep
    /// the top `levels * log B_ks` bits and round the rest away ([`Params::ksk_shift`]).
    pub ksk_levels: DecompositionLevelCount,
    /// Samples in the LWE public key (leftover-hash bound, see `docs/PARAMETERS.md`).
    pub pk_samples: usize,
    /// Centered-binomial parameter `eta` of every error term: variance `eta/2`.
    pub noise_eta: u32,
    /// Distribution of the LWE secret `s` (the ring secret is always ternary).
    pub lwe_secret: LweSecret,
    /// GINX or multi-bit, and so the bootstrap key's shape ([`Params::bsk_keys`]).
    pub blind_rotation: BlindRotation,
    /// Where the 128-bit claim comes from (one line; the full argument is in the docs).
    pub security_source: &'static str,
}

impl Params {
    pub const fn n(&self) -> usize {
        self.lwe_dimension.0
    }
    pub const fn big_n(&self) -> usize {
        self.ring_degree.0
    }
    pub const fn q_ring(&self) -> u64 {
        self.ring_modulus.0
    }
    /// The LWE modulus `q` as an integer.
    pub const fn q_lwe(&self) -> u64 {
        1u64 << self.lwe_modulus_log.0
    }
    /// True when LWE words fit 16 bits (`q <= 2^16`): the gate sets. The GPU kernels and
    /// the narrow key-switch path store them so.
    pub const fn lwe_fits_u16(&self) -> bool {
        self.lwe_modulus_log.0 <= 16
    }
    /// Low bits of a mod-switched `a_j` that the key switch rounds away before taking
    /// its digits: `log q - levels * log B_ks` (0 for the gate sets).
    pub const fn ksk_shift(&self) -> u32 {
        self.lwe_modulus_log.0 - self.ksk_base_log.0 * self.ksk_levels.0 as u32
    }
    /// Mask reducing an integer mod `q` (q is a power of two).
    pub const fn q_lwe_mask(&self) -> u32 {
        ((1u64 << self.lwe_modulus_log.0) - 1) as u32
    }
    pub const fn bsk_base(&self) -> u64 {
        1u64 << self.bsk_base_log.0
    }
    /// Digits of the exact signed decomposition of a residue: the least `E` with
    /// `Bg^E >= Q`.
    pub const fn bsk_exact_levels(&self) -> usize {
        let bits = 64 - self.ring_modulus.0.leading_zeros() as usize;
        bits.div_ceil(self.bsk_base_log.0 as usize)
    }
    /// The exact decomposition's lowest digits the key has no rows for (`E - L`): the
    /// external product multiplies the top `L` digits only, and the dropped ones, the
    /// accumulator's signed remainder modulo `Bg^D`, add a rounding error instead of
    /// key-noise terms (`docs/PARAMETERS.md`, "Multi-bit sets"). At most 1.
    pub const fn bsk_dropped_levels(&self) -> usize {
        self.bsk_exact_levels() - self.bsk_levels.0
    }
    /// The gadget factor of kept level `l`: `Bg^(D + l)`, reduced mod `Q`.
    pub const fn bsk_gadget(&self, l: usize) -> u64 {
        let (q, mut g, mut i) = (self.ring_modulus.0 as u128, 1u128, 0);
        while i < self.bsk_dropped_levels() + l {
            g = g * self.bsk_base() as u128 % q;
            i += 1;
        }
        g as u64
    }
    pub const fn ksk_base(&self) -> u64 {
        1u64 << self.ksk_base_log.0
    }
    /// Bytes per ring coefficient in the binary format: 4 when `Q < 2^32`, else 8.
    pub const fn ring_coeff_bytes(&self) -> usize {
        if self.ring_modulus.0 < (1u64 << 32) {
            4
        } else {
            8
        }
    }
    /// Rows of one RGSW ciphertext (`2L`).
    pub const fn rgsw_rows(&self) -> usize {
        2 * self.bsk_levels.0
    }
    /// The multi-bit grouping factor `k`, `None` for GINX.
    pub const fn grouping(&self) -> Option<usize> {
        match self.blind_rotation {
            BlindRotation::Ginx => None,
            BlindRotation::MultiBit(k) => Some(k.0),
        }
    }
    /// RGSW keys in the bootstrap key: GINX, `n` coefficients x 2 (`s=+1`, `s=-1`, key
    /// `2i + sign`); multi-bit, `n / k` groups x `2^k - 1` indicators (key
    /// `g (2^k - 1) + t - 1` for bit pattern `t`, bit `j` standing for `s_(g k + j)`).
    pub const fn bsk_keys(&self) -> usize {
        match self.blind_rotation {
            BlindRotation::Ginx => 2 * self.n(),
            BlindRotation::MultiBit(k) => self.n() / k.0 * ((1 << k.0) - 1),
        }
    }
    /// Ring coefficients in the `b` halves of the bootstrap key:
    /// [`Params::bsk_keys`] x `2L` rows x `N`.
    pub const fn bsk_b_len(&self) -> usize {
        self.bsk_keys() * self.rgsw_rows() * self.big_n()
    }
    /// LWE samples in the key-switching key: `N x levels x (B_ks - 1)`
    /// (one fresh sample for every non-zero digit value, as OpenFHE, for low noise).
    pub const fn ksk_samples(&self) -> usize {
        self.big_n() * self.ksk_levels.0 * (self.ksk_base() as usize - 1)
    }
}

/// `ceil(((n + 1) * log2 q + 256) / log2 3)`: enough ternary-weighted public-key
/// samples for the leftover hash lemma to hide the message at 128 bits.
const fn pk_samples(n: usize, logq: u32) -> usize {
    // log2(3) ~ 1.58496; dividing by 1.58496 rounds the sample count up.
    ((n + 1) * logq as usize + 256) * 100_000 / 158_496 + 1
}

/// `PN10QP27`: the OpenFHE `STD128` row (ring N=1024, Q = 134215681 = 2^27 - 2047,
/// gadget base 2^7 with 4 digits; LWE n=556 mod 2^15, key-switch base 2^5).
pub static PN10QP27: Params = Params {
    name: "PN10QP27",
    ring_degree: PolynomialSize(1024),
    ring_modulus: RingModulus(134_215_681),
    bsk_base_log: DecompositionBaseLog(7),
    bsk_levels: DecompositionLevelCount(4),
    lwe_dimension: LweDimension(556),
    lwe_modulus_log: LweModulusLog(15),
    ksk_base_log: DecompositionBaseLog(5),
    ksk_levels: DecompositionLevelCount(3),
    pk_samples: pk_samples(556, 15),
    noise_eta: 21,
    lwe_secret: LweSecret::Ternary,
    blind_rotation: BlindRotation::Ginx,
    security_source: "ring: HE standard table (N=1024, log QP <= 27, ternary, classical); \
                      LWE: OpenFHE STD128 (n=556, q=2^15, sigma 3.19, ternary)",
};

/// `PN11QP54`: ring N=2048 with the largest 54-bit prime `Q = 1 mod 4096`, gadget base
/// 2^11 with 5 digits; the same LWE as `PN10QP27`.
pub static PN11QP54: Params = Params {
    name: "PN11QP54",
    ring_degree: PolynomialSize(2048),
    ring_modulus: RingModulus(18_014_398_509_404_161),
    bsk_base_log: DecompositionBaseLog(11),
    bsk_levels: DecompositionLevelCount(5),
    lwe_dimension: LweDimension(556),
    lwe_modulus_log: LweModulusLog(15),
    ksk_base_log: DecompositionBaseLog(5),
    ksk_levels: DecompositionLevelCount(3),
    pk_samples: pk_samples(556, 15),
    noise_eta: 21,
    lwe_secret: LweSecret::Ternary,
    blind_rotation: BlindRotation::Ginx,
    security_source: "ring: HE standard table (N=2048, log QP <= 54, ternary, classical); \
                      LWE: OpenFHE STD128 (n=556, q=2^15, sigma 3.19, ternary)",
};

/// `PN10QP25Q`: the post-quantum variant, after OpenFHE `STD128Q` (ring N=1024, Q the
/// largest 25-bit prime `= 1 mod 2048`, gadget base 2^5 with 5 digits; LWE n=598 mod 2^15).
pub static PN10QP25Q: Params = Params {
    name: "PN10QP25Q",
    ring_degree: PolynomialSize(1024),
    ring_modulus: RingModulus(33_550_337),
    bsk_base_log: DecompositionBaseLog(5),
    bsk_levels: DecompositionLevelCount(5),
    lwe_dimension: LweDimension(598),
    lwe_modulus_log: LweModulusLog(15),
    ksk_base_log: DecompositionBaseLog(5),
    ksk_levels: DecompositionLevelCount(3),
    pk_samples: pk_samples(598, 15),
    noise_eta: 21,
    lwe_secret: LweSecret::Ternary,
    blind_rotation: BlindRotation::Ginx,
    security_source: "ring: HE standard table (N=1024, log QP <= 25, ternary, quantum); \
                      LWE: OpenFHE STD128Q (n=598, q=2^15, sigma 3.19, ternary)",
};

/// `M2C2`: programmable bootstrapping of 2 message + 2 carry bits (`docs/PARAMETERS.md`,
/// "Programmable-bootstrapping sets"). Ring: `PN11QP54`'s (N=2048, the largest 54-bit
/// prime `= 1 mod 4096`) with gadget base 2^27, 2 digits (exact: 54 bits; the fewest
/// digits, so the fewest NTTs a step, whose noise still costs under a bit of the failure
/// exponent). LWE: n = 841,
/// binary secret, q = 2^20, eta = 22 (sigma = 3.32, sigma/q = 2^-18.27), TFHE-rs's
/// `PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64` LWE (n = 841, binary, sigma/q =
/// 3.1497e-6) with q scaled down and sigma/q kept at or above it. Key switch: base 2^3,
/// 5 digits (the top 15 of 20 bits), TFHE-rs's choice.
pub static M2C2: Params = M2C2_BASE;

/// `M2C2` with a multi-bit blind rotation of grouping factor `k`: LWE n = 846, the
/// nearest dimension above `M2C2`'s 841 that 2 and 3 divide (a larger n at the same
/// noise rate is at least as hard), everything else `M2C2`'s (`docs/PARAMETERS.md`,
/// "Multi-bit sets").
const fn m2c2_multi_bit(name: &'static str, k: usize) -> Params {
    Params {
        name,
        lwe_dimension: LweDimension(846),
        pk_samples: pk_samples(846, 20),
        blind_rotation: BlindRotation::MultiBit(GroupingFactor(k)),
        security_source: "ring: HE standard table (N=2048, log QP <= 54, ternary, classical); \
                          LWE: TFHE-rs PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64 (n=841, binary, \
                          sigma/q = 3.15e-6), here n=846 and sigma/q = 3.16e-6",
        ..M2C2_BASE
    }
}

/// `M2C2`'s numbers as a constant, for the sets built on them.
const M2C2_BASE: Params = Params {
    name: "M2C2",
    ring_degree: PolynomialSize(2048),
    ring_modulus: RingModulus(18_014_398_509_404_161),
    bsk_base_log: DecompositionBaseLog(27),
    // The top 27 bits of the exact 2 x 27: half the key of the two-digit gadget for a
    // rounding error of about 1% of the blind rotation's variance.
    bsk_levels: DecompositionLevelCount(1),
    lwe_dimension: LweDimension(841),
    lwe_modulus_log: LweModulusLog(20),
    ksk_base_log: DecompositionBaseLog(3),
    ksk_levels: DecompositionLevelCount(5),
    pk_samples: pk_samples(841, 20),
    noise_eta: 22,
    lwe_secret: LweSecret::Binary,
    // A binary secret needs one RGSW key a coefficient, `RGSW(s_i)`: the multi-bit
    // rotation with groups of one (GINX's second key, for `s_i = -1`, would encrypt 0).
    blind_rotation: BlindRotation::MultiBit(GroupingFactor(1)),
    security_source: "ring: HE standard table (N=2048, log QP <= 54, ternary, classical); \
                      LWE: TFHE-rs PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64 (n=841, binary, \
                      sigma/q = 3.15e-6, lattice-estimator 128 bits), here sigma/q = 3.16e-6",
};

/// `M2C2G2`: [`m2c2_multi_bit`] with grouping factor 2 (3 RGSW keys per 2 coefficients).
pub static M2C2G2: Params = m2c2_multi_bit("M2C2G2", 2);

/// `M2C2G3`: [`m2c2_multi_bit`] with grouping factor 3 (7 RGSW keys per 3 coefficients).
pub static M2C2G3: Params = m2c2_multi_bit("M2C2G3", 3);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::math::{is_prime, pow_mod};

    #[test]
    fn every_set_is_well_formed() {
        for set in ParamSet::every() {
            let p = set.params();
            let q = p.q_ring();
            let n2 = 2 * p.big_n() as u64;
            assert!(p.big_n().is_power_of_two(), "{set}");
            assert!(is_prime(q), "{set}: Q={q} is not prime");
            assert_eq!(q % n2, 1, "{set}: Q != 1 mod 2N");
            // The exact gadget decomposition's signed digits cover (-Q/2, Q/2]; a set keeps
            // all of them or drops the lowest one.
            let bits = 64 - q.leading_zeros() as usize;
            assert!(p.bsk_base_log.0 as usize * p.bsk_exact_levels() >= bits, "{set}");
            assert!(p.bsk_base_log.0 as usize * (p.bsk_exact_levels() - 1) < bits, "{set}");
            assert!(p.bsk_dropped_levels() <= 1 && p.bsk_levels.0 >= 1, "{set}");
            assert_eq!(
                p.bsk_dropped_levels() == 1,
                p.grouping().is_some(),
                "{set}: only the multi-bit sets drop a digit"
            );
            // Key-switch digits within q: exact for the gate sets.
            assert!(p.ksk_base_log.0 as usize * p.ksk_levels.0 <= p.lwe_modulus_log.0 as usize);
            assert!(p.lwe_modulus_log.0 <= 32, "{set}: LWE words are u32");
            if ParamSet::ALL.contains(&set) {
                assert_eq!(p.ksk_shift(), 0, "{set}");
                assert!(p.lwe_fits_u16(), "{set}");
            }
            // Blind rotation needs q_lwe >= 2N (the mod switch goes down to 2N).
            assert!(p.q_lwe() >= n2);
            assert_eq!(ParamSet::from_id(set.id()), Some(set));
            assert_eq!(set.name().parse::<ParamSet>().unwrap(), set);
            // Fermat sanity check on the prime.
            assert_eq!(pow_mod(3, q - 1, q), 1);
        }
    }

    #[test]
    fn ring_moduli_respect_the_he_standard_bounds() {
        // HE standard, ternary secrets: log QP <= 27 (N=1024), 54 (N=2048) classical,
        // 25 (N=1024) quantum.
        let bits = |q: u64| 64 - q.leading_zeros();
        assert!(bits(PN10QP27.q_ring()) <= 27);
        assert!(bits(PN11QP54.q_ring()) <= 54);
        assert!(bits(PN10QP25Q.q_ring()) <= 25);
        assert!(bits(M2C2.q_ring()) <= 54);
    }

    #[test]
    fn pbs_lwe_noise_rate_is_at_least_tfhe_rs() {
        // TFHE-rs's 2_2 KS-PBS (p-fail 2^-64) LWE: sigma/q = 3.1496674685772435e-6 at
        // n = 841, binary secret; a larger rate at the same n is at least as hard.
        let p = &M2C2;
        let rate = (p.noise_eta as f64 / 2.0).sqrt() / p.q_lwe() as f64;
        assert!(rate >= 3.1496674685772435e-6, "{rate}");
        assert_eq!((p.n(), p.lwe_secret), (841, LweSecret::Binary));
    }

    /// The multi-bit sets group whole groups, on a binary secret (the indicator keys
    /// cover exactly the `2^k` values a group of bits takes), with `M2C2`'s noise rate
    /// at a larger n; GINX key counts are unchanged.
    #[test]
    fn multi_bit_sets_are_well_formed() {
        for (set, k, keys) in [(ParamSet::M2C2G2, 2, 423 * 3), (ParamSet::M2C2G3, 3, 282 * 7)] {
            let p = set.params();
            assert_eq!(p.grouping(), Some(k), "{set}");
            assert!(p.n().is_multiple_of(k) && p.n() >= M2C2.n(), "{set}");
            assert_eq!(p.lwe_secret, LweSecret::Binary, "{set}");
            assert_eq!(p.bsk_keys(), keys, "{set}");
            assert_eq!(
                (p.noise_eta, p.lwe_modulus_log, p.ring_modulus),
                (M2C2.noise_eta, M2C2.lwe_modulus_log, M2C2.ring_modulus)
            );
        }
        assert_eq!((M2C2.grouping(), M2C2.bsk_keys()), (Some(1), 841));
    }

    #[test]
    fn unknown_set_lists_the_valid_ones() {
        let e = "PN12".parse::<ParamSet>().unwrap_err().to_string();
        assert!(e.contains("PN10QP27") && e.contains("PN11QP54") && e.contains("PN10QP25Q"), "{e}");
        assert!(e.contains("M2C2"), "{e}");
    }
}
