//! Keys and ciphertexts: plain data with their parameter set. Validation happens at
//! construction, so every value of these types is well-formed.
//!
//! Layouts (also the order of the binary format, `docs/FORMAT.md`):
//! - LWE ciphertext: `a[0..n]` then `b`, each in `[0, q)`; phase `b - <a, s> mod q`;
//!   bit `m` is encoded as `m * q/4`.
//! - Bootstrap key (`b` halves only, evaluation form): index
//!   `((i * 2 + sign) * 2L + row) * N + slot`, `sign` 0 for `s_i = +1`, 1 for `s_i = -1`,
//!   rows `0..L` carry the gadget in the `a` part, rows `L..2L` in the `b` part.
//! - Key-switching key (`b` halves only): index `(j * levels + l) * (B - 1) + (v - 1)`
//!   encrypts `v * z_j * q / B^(l+1)` under `s`.
//! - Public key (`b` halves only): `pk_samples` LWE encryptions of zero under `s`.
//!
//! Every key and ciphertext carries the [`KeyTag`] of its key set: keys derive it from
//! the set and public seed, ciphertexts inherit it from the key that made them, and
//! combining objects of two tags is [`Error::WrongKey`].

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::rng::{label, stream};
use crate::tag::KeyTag;
use crate::tfhe::params::ParamSet;

/// A ciphertext without a key tag must be trivial (`a = 0`): anything else claims to
/// belong to no key while needing one to decrypt.
fn check_untagged_is_trivial(what: &str, tag: KeyTag, a_is_zero: bool) -> Result<()> {
    if tag.is_none() && !a_is_zero {
        return Err(Error::InvalidInput(format!(
            "{what} with key tag {tag} (none) must be trivial (a = 0); a ciphertext under a key carries that key's tag"
        )));
    }
    Ok(())
}

/// The tag shared by a combination's operands ([`KeyTag::combine`]).
fn common_tag(tags: impl IntoIterator<Item = KeyTag>) -> Result<KeyTag> {
    tags.into_iter().try_fold(KeyTag::NONE, KeyTag::combine)
}

/// An encrypted bit: an LWE ciphertext of dimension `n` modulo `q = 2^15`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LweCiphertext {
    params: ParamSet,
    tag: KeyTag,
    data: Vec<u32>,
}

impl std::fmt::Debug for LweCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LweCiphertext({}, n={}, tag {})", self.params, self.data.len() - 1, self.tag)
    }
}

impl LweCiphertext {
    /// Checks the length (`n + 1`) and the range (`< q`) of every word; `tag` is the key
    /// it was made under ([`KeyTag::NONE`] only for a trivial ciphertext, `a = 0`).
    pub fn from_raw(params: ParamSet, tag: KeyTag, data: Vec<u32>) -> Result<Self> {
        let p = params.params();
        if data.len() != p.n() + 1 {
            return Err(Error::InvalidInput(format!(
                "{params} LWE ciphertext needs {} words, got {}",
                p.n() + 1,
                data.len()
            )));
        }
        if let Some(i) = data.iter().position(|&w| w > p.q_lwe_mask()) {
            return Err(Error::InvalidInput(format!("LWE word {i} = {} is not below q = {}", data[i], p.q_lwe())));
        }
        check_untagged_is_trivial("LWE ciphertext", tag, data[..p.n()].iter().all(|&w| w == 0))?;
        Ok(LweCiphertext { params, tag, data })
    }

    /// The noiseless encryption of a constant (`a = 0`), used for gate offsets. It belongs
    /// to no key ([`KeyTag::NONE`]) and decrypts under every one.
    pub fn trivial(params: ParamSet, b: u32) -> Self {
        let p = params.params();
        let mut data = vec![0u32; p.n() + 1];
        data[p.n()] = b & p.q_lwe_mask();
        LweCiphertext { params, tag: KeyTag::NONE, data }
    }

    pub fn params(&self) -> ParamSet {
        self.params
    }
    /// The tag of the key this ciphertext was made under.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    /// `a[0..n]` followed by `b`.
    pub fn as_words(&self) -> &[u32] {
        &self.data
    }
    pub fn into_words(self) -> Vec<u32> {
        self.data
    }
    pub fn a(&self) -> &[u32] {
        &self.data[..self.data.len() - 1]
    }
    pub fn b(&self) -> u32 {
        self.data[self.data.len() - 1]
    }

    /// `sum_k coeff_k * ct_k + constant (mod q)`: the linear part of every gate. Terms of
    /// two key tags are [`Error::WrongKey`]; the result carries their common tag.
    pub fn linear_combination(terms: &[(i32, &LweCiphertext)], constant: u32) -> Result<Self> {
        let first = terms.first().ok_or_else(|| Error::InvalidInput("empty linear combination".into()))?;
        let params = first.1.params;
        for (_, ct) in terms {
            if ct.params != params {
                return Err(Error::ParamMismatch { expected: params.name().into(), found: ct.params.name().into() });
            }
        }
        let tag = common_tag(terms.iter().map(|(_, ct)| ct.tag))?;
        let mask = params.params().q_lwe_mask();
        let mut data = vec![0u32; first.1.data.len()];
        for (c, ct) in terms {
            let c = *c as u32; // two's complement is exact modulo a power of two
            for (d, &w) in data.iter_mut().zip(&ct.data) {
                *d = d.wrapping_add(c.wrapping_mul(w));
            }
        }
        let last = data.len() - 1;
        data[last] = data[last].wrapping_add(constant);
        data.iter_mut().for_each(|d| *d &= mask);
        Ok(LweCiphertext { params, tag, data })
    }
}

/// An LWE ciphertext of dimension `N` modulo the ring modulus `Q`, under the ring secret:
/// the output of blind rotation and sample extraction, before key switching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedLwe {
    params: ParamSet,
    tag: KeyTag,
    data: Vec<u64>,
}

impl ExtractedLwe {
    /// Checks length and range; `tag` as [`LweCiphertext::from_raw`]'s.
    pub fn from_raw(params: ParamSet, tag: KeyTag, data: Vec<u64>) -> Result<Self> {
        let p = params.params();
        if data.len() != p.big_n() + 1 || data.iter().any(|&w| w >= p.q_ring()) {
            return Err(Error::InvalidInput(format!("{params} extracted LWE needs {} words below Q", p.big_n() + 1)));
        }
        check_untagged_is_trivial("extracted LWE", tag, data[..p.big_n()].iter().all(|&w| w == 0))?;
        Ok(ExtractedLwe { params, tag, data })
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    /// The tag of the evaluation key whose blind rotation made it.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn as_words(&self) -> &[u64] {
        &self.data
    }
    /// The noiseless encryption of `b` (`a = 0`, no key tag): a constant for
    /// [`ExtractedLwe::linear_combination`].
    pub fn trivial(params: ParamSet, b: u64) -> Self {
        let p = params.params();
        let mut data = vec![0u64; p.big_n() + 1];
        data[p.big_n()] = b % p.q_ring();
        ExtractedLwe { params, tag: KeyTag::NONE, data }
    }

    /// `sum_k coeff_k * ct_k + constant (mod Q)`: the linear part of a programmable
    /// bootstrap's input. Terms of two sets are [`Error::ParamMismatch`], of two key tags
    /// [`Error::WrongKey`]; the result carries their common tag.
    pub fn linear_combination(terms: &[(i64, &ExtractedLwe)], constant: u64) -> Result<Self> {
        let first = terms.first().ok_or_else(|| Error::InvalidInput("empty linear combination".into()))?;
        let params = first.1.params;
        for (_, ct) in terms {
            if ct.params != params {
                return Err(Error::ParamMismatch { expected: params.name().into(), found: ct.params.name().into() });
            }
        }
        let tag = common_tag(terms.iter().map(|(_, ct)| ct.tag))?;
        let q = params.params().q_ring();
        let mut data = vec![0u64; first.1.data.len()];
        for (c, ct) in terms {
            // |c| < Q: a coefficient as a residue, then one 128-bit product per word.
            let c = c.rem_euclid(q as i64) as u128;
            for (d, &w) in data.iter_mut().zip(&ct.data) {
                *d = ((*d as u128 + c * w as u128) % q as u128) as u64;
            }
        }
        let last = data.len() - 1;
        data[last] = ((data[last] as u128 + (constant % q) as u128) % q as u128) as u64;
        Ok(ExtractedLwe { params, tag, data })
    }

    /// `self + other (mod Q)`, used by MUX to sum two blind rotations before one key switch.
    pub fn add(&self, other: &ExtractedLwe) -> Result<ExtractedLwe> {
        if self.params != other.params {
            return Err(Error::ParamMismatch {
                expected: self.params.name().into(),
                found: other.params.name().into(),
            });
        }
        let tag = self.tag.combine(other.tag)?;
        let q = self.params.params().q_ring();
        let data = self
            .data
            .iter()
            .zip(&other.data)
            .map(|(&x, &y)| {
                let s = x + y;
                if s >= q {
                    s - q
                } else {
                    s
                }
            })
            .collect();
        Ok(ExtractedLwe { params: self.params, tag, data })
    }
}

/// The secret key: the small LWE secret `s` and the ring secret `z`, both ternary.
/// Zeroized on drop.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey {
    #[zeroize(skip)]
    params: ParamSet,
    /// Public: the tag of the key set ([`KeyTag::derive`] of its public seed).
    #[zeroize(skip)]
    tag: KeyTag,
    lwe: Vec<i8>,
    ring: Vec<i8>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({}, tag {}, ..)", self.params, self.tag)
    }
}

impl SecretKey {
    /// Checks lengths and ternary coefficients. `tag` is the key set's
    /// ([`KeyTag::derive`]; never [`KeyTag::NONE`]); an all-zero `s` or `z` is refused,
    /// since it encrypts nothing. The coefficients are wiped when refused too.
    pub fn from_raw(params: ParamSet, tag: KeyTag, lwe: Vec<i8>, ring: Vec<i8>) -> Result<Self> {
        // Built first so that every refusal below drops (and zeroizes) it.
        let key = SecretKey { params, tag, lwe, ring };
        let p = params.params();
        let ternary = |v: &[i8]| v.iter().all(|&x| (-1..=1).contains(&x));
        if key.lwe.len() != p.n() || key.ring.len() != p.big_n() || !ternary(&key.lwe) || !ternary(&key.ring) {
            return Err(Error::InvalidInput(format!(
                "{params} secret key needs {} + {} ternary coefficients",
                p.n(),
                p.big_n()
            )));
        }
        if tag.is_none() {
            return Err(Error::InvalidInput(format!("{params} secret key with key tag {tag}: no key has tag zero")));
        }
        // An OR over every coefficient, not a search that stops at the first non-zero
        // one: the time taken says nothing about where the secret's non-zeros are.
        let nonzero = |v: &[i8]| v.iter().fold(0u8, |acc, &x| acc | x as u8) != 0;
        if !nonzero(&key.lwe) || !nonzero(&key.ring) {
            return Err(Error::InvalidInput(format!("{params} secret key is all zero: it would encrypt nothing")));
        }
        Ok(key)
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn lwe(&self) -> &[i8] {
        &self.lwe
    }
    pub fn ring(&self) -> &[i8] {
        &self.ring
    }
}

/// The public key: `pk_samples` LWE encryptions of zero under `s`. The `a` halves are
/// expanded from `public_seed` (stream `pk-a`, one per sample) and kept in memory; the
/// format stores only the seed and the `b` halves.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    params: ParamSet,
    tag: KeyTag,
    public_seed: [u8; 32],
    b: Vec<u32>,
    a: Vec<u32>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({}, tag {}, {} samples)", self.params, self.tag, self.b.len())
    }
}

impl PublicKey {
    /// Checks the words; the tag is [`KeyTag::derive`]`(params, public_seed)`. All-zero
    /// `b` halves (no encryption of zero under any real secret) are refused.
    pub fn from_raw(params: ParamSet, public_seed: [u8; 32], b: Vec<u32>) -> Result<Self> {
        let p = params.params();
        if b.len() != p.pk_samples || b.iter().any(|&w| w > p.q_lwe_mask()) {
            return Err(Error::InvalidInput(format!("{params} public key needs {} words below q", p.pk_samples)));
        }
        if b.iter().all(|&w| w == 0) {
            return Err(Error::InvalidInput(format!("{params} public key is all zero")));
        }
        let a = expand_pk_a(params, &public_seed);
        Ok(PublicKey { params, tag: KeyTag::derive(params, &public_seed), public_seed, b, a })
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn public_seed(&self) -> &[u8; 32] {
        &self.public_seed
    }
    pub fn b(&self) -> &[u32] {
        &self.b
    }
    /// The expanded `a` halves, `pk_samples x n`, row-major.
    pub fn a(&self) -> &[u32] {
        &self.a
    }
}

/// The `a` halves of the public key: sample `k` is `fill_pow2_u16(log q)` (`q <= 2^16`)
/// or `fill_pow2_u32(log q)` (wider) of `n` values from stream `(public_seed, "pk-a", k)`.
pub fn expand_pk_a(params: ParamSet, public_seed: &[u8; 32]) -> Vec<u32> {
    let p = params.params();
    let mut a = vec![0u32; p.pk_samples * p.n()];
    let mut narrow = vec![0u16; p.n()];
    for (k, row) in a.chunks_mut(p.n()).enumerate() {
        let mut r = stream(public_seed, label::PK_A, k as u64);
        if p.lwe_fits_u16() {
            r.fill_pow2_u16(p.lwe_modulus_log.0, &mut narrow);
            row.iter_mut().zip(&narrow).for_each(|(o, &x)| *o = x as u32);
        } else {
            r.fill_pow2_u32(p.lwe_modulus_log.0, row);
        }
    }
    a
}

/// The evaluation key: bootstrap key and key-switching key, `b` halves only.
#[derive(Clone, PartialEq, Eq)]
pub struct EvaluationKey {
    params: ParamSet,
    tag: KeyTag,
    public_seed: [u8; 32],
    bsk_b: Vec<u64>,
    ksk_b: Vec<u32>,
}

impl std::fmt::Debug for EvaluationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EvaluationKey({}, tag {})", self.params, self.tag)
    }
}

impl EvaluationKey {
    /// Checks lengths and ranges; the tag is [`KeyTag::derive`]`(params, public_seed)`.
    /// An all-zero bootstrap or key-switching key is refused.
    pub fn from_raw(params: ParamSet, public_seed: [u8; 32], bsk_b: Vec<u64>, ksk_b: Vec<u32>) -> Result<Self> {
        let p = params.params();
        if bsk_b.len() != p.bsk_b_len() || ksk_b.len() != p.ksk_samples() {
            return Err(Error::InvalidInput(format!(
                "{params} evaluation key needs {} bootstrap and {} key-switch words",
                p.bsk_b_len(),
                p.ksk_samples()
            )));
        }
        if bsk_b.iter().any(|&w| w >= p.q_ring()) || ksk_b.iter().any(|&w| w > p.q_lwe_mask()) {
            return Err(Error::InvalidInput("evaluation key word out of range".into()));
        }
        if bsk_b.iter().all(|&w| w == 0) || ksk_b.iter().all(|&w| w == 0) {
            return Err(Error::InvalidInput(format!("{params} evaluation key is all zero")));
        }
        Ok(EvaluationKey { params, tag: KeyTag::derive(params, &public_seed), public_seed, bsk_b, ksk_b })
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn public_seed(&self) -> &[u8; 32] {
        &self.public_seed
    }
    pub fn bsk_b(&self) -> &[u64] {
        &self.bsk_b
    }
    pub fn ksk_b(&self) -> &[u32] {
        &self.ksk_b
    }

    /// RGSW key `key` (`Params::bsk_keys` gives the order) in full, as backends hold it: `[row][half][slot]`,
    /// half 0 the `a` expanded from the public seed, half 1 the stored `b`, each residue
    /// mapped by `conv` (to 32-bit words, Montgomery form, ...). `out` holds
    /// `2 * rgsw_rows * N` words.
    pub fn rgsw_key_rows<T>(&self, key: usize, out: &mut [T], conv: impl Fn(u64) -> T) {
        let p = self.params.params();
        let (big_n, rows) = (p.big_n(), p.rgsw_rows());
        let per_key = rows * big_n;
        debug_assert_eq!(out.len(), 2 * per_key);
        let mut a = vec![0u64; per_key];
        expand_bsk_a(self.params, &self.public_seed, key, &mut a);
        let b = &self.bsk_b[key * per_key..(key + 1) * per_key];
        for (row, dst) in out.chunks_mut(2 * big_n).enumerate() {
            let (dst_a, dst_b) = dst.split_at_mut(big_n);
            dst_a.iter_mut().zip(&a[row * big_n..(row + 1) * big_n]).for_each(|(d, &x)| *d = conv(x));
            dst_b.iter_mut().zip(&b[row * big_n..(row + 1) * big_n]).for_each(|(d, &x)| *d = conv(x));
        }
    }

    /// The key-switching samples of ring coefficient `j` in full: `[sample][n + 1]`, the
    /// `a` expanded from the public seed, then `b`. `out` holds `levels * (B-1) * (n+1)`
    /// words. Sets whose LWE words fit 16 bits only: a wider set (the
    /// programmable-bootstrapping sets) is `Error::InvalidInput` naming
    /// [`EvaluationKey::ksk_rows_wide`], which reads every set; so is an `out` of
    /// another length.
    pub fn ksk_rows(&self, j: usize, out: &mut [u16]) -> Result<()> {
        let p = self.params.params();
        if !p.lwe_fits_u16() {
            return Err(Error::InvalidInput(format!(
                "{}: LWE words of {} bits do not fit the 16-bit key-switching rows; ksk_rows_wide reads this set",
                self.params, p.lwe_modulus_log.0
            )));
        }
        let n = p.n();
        let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
        if j >= p.big_n() || out.len() != per_j * (n + 1) {
            return Err(Error::InvalidInput(format!(
                "{}: key-switching rows of coefficient {j} into {} words; the set has {} coefficients of {} words",
                self.params,
                out.len(),
                p.big_n(),
                per_j * (n + 1)
            )));
        }
        let mut a = vec![0u16; per_j * n];
        expand_ksk_a(self.params, &self.public_seed, j, &mut a);
        for (idx, row) in out.chunks_mut(n + 1).enumerate() {
            row[..n].copy_from_slice(&a[idx * n..(idx + 1) * n]);
            row[n] = self.ksk_b[j * per_j + idx] as u16;
        }
        Ok(())
    }
}

impl EvaluationKey {
    /// [`EvaluationKey::ksk_rows`] in 32-bit words, for every set (the `a` halves of a
    /// set with `q <= 2^16` are expanded as for `ksk_rows`, so the words are the same).
    pub fn ksk_rows_wide(&self, j: usize, out: &mut [u32]) {
        let p = self.params.params();
        let n = p.n();
        let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
        debug_assert_eq!(out.len(), per_j * (n + 1));
        let mut a = vec![0u32; per_j * n];
        expand_ksk_a_wide(self.params, &self.public_seed, j, &mut a);
        for (idx, row) in out.chunks_mut(n + 1).enumerate() {
            row[..n].copy_from_slice(&a[idx * n..(idx + 1) * n]);
            row[n] = self.ksk_b[j * per_j + idx];
        }
    }
}

/// The `a` halves of RGSW key `key` (all `2L` rows, evaluation form; `Params::bsk_keys`):
/// `2L * N` values of `uniform_mod(Q)` from stream `(public_seed, "bsk-a", key)`.
/// Uniform in evaluation form is uniform in coefficient form (the NTT is a bijection).
pub fn expand_bsk_a(params: ParamSet, public_seed: &[u8; 32], key: usize, out: &mut [u64]) {
    let p = params.params();
    debug_assert_eq!(out.len(), p.rgsw_rows() * p.big_n());
    let mut r = stream(public_seed, label::BSK_A, key as u64);
    out.iter_mut().for_each(|x| *x = r.uniform_mod(p.q_ring()));
}

/// The `a` halves of the key-switching samples of ring coefficient `j`:
/// `levels * (B-1)` samples of `n` values, in sample order, one `fill_pow2_u16(log q)`
/// over all of them from stream `(public_seed, "ksk-a", j)`.
pub fn expand_ksk_a(params: ParamSet, public_seed: &[u8; 32], j: usize, out: &mut [u16]) {
    let p = params.params();
    debug_assert!(p.lwe_fits_u16());
    debug_assert_eq!(out.len(), p.ksk_levels.0 * (p.ksk_base() as usize - 1) * p.n());
    stream(public_seed, label::KSK_A, j as u64).fill_pow2_u16(p.lwe_modulus_log.0, out);
}

/// [`expand_ksk_a`] in 32-bit words for every set: a set with `q <= 2^16` draws the same
/// values as `expand_ksk_a`, a wider one one `fill_pow2_u32(log q)` over all samples.
pub fn expand_ksk_a_wide(params: ParamSet, public_seed: &[u8; 32], j: usize, out: &mut [u32]) {
    let p = params.params();
    let mut r = stream(public_seed, label::KSK_A, j as u64);
    if p.lwe_fits_u16() {
        let mut narrow = vec![0u16; out.len()];
        r.fill_pow2_u16(p.lwe_modulus_log.0, &mut narrow);
        out.iter_mut().zip(&narrow).for_each(|(o, &x)| *o = x as u32);
    } else {
        r.fill_pow2_u32(p.lwe_modulus_log.0, out);
    }
}

/// The three keys of one seed.
#[derive(Clone, Debug)]
pub struct KeySet {
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub ek: EvaluationKey,
}
