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

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::params::ParamSet;
use crate::rng::{label, stream};

/// An encrypted bit: an LWE ciphertext of dimension `n` modulo `q = 2^15`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LweCiphertext {
    params: ParamSet,
    data: Vec<u32>,
}

impl std::fmt::Debug for LweCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LweCiphertext({}, n={})", self.params, self.data.len() - 1)
    }
}

impl LweCiphertext {
    /// Checks the length (`n + 1`) and the range (`< q`) of every word.
    pub fn from_raw(params: ParamSet, data: Vec<u32>) -> Result<Self> {
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
        Ok(LweCiphertext { params, data })
    }

    /// The noiseless encryption of a constant (`a = 0`), used for gate offsets.
    pub fn trivial(params: ParamSet, b: u32) -> Self {
        let p = params.params();
        let mut data = vec![0u32; p.n() + 1];
        data[p.n()] = b & p.q_lwe_mask();
        LweCiphertext { params, data }
    }

    pub fn params(&self) -> ParamSet {
        self.params
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

    /// `sum_k coeff_k * ct_k + constant (mod q)`: the linear part of every gate.
    pub fn linear_combination(terms: &[(i32, &LweCiphertext)], constant: u32) -> Result<Self> {
        let first = terms.first().ok_or_else(|| Error::InvalidInput("empty linear combination".into()))?;
        let params = first.1.params;
        for (_, ct) in terms {
            if ct.params != params {
                return Err(Error::ParamMismatch { expected: params.name(), found: ct.params.name() });
            }
        }
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
        Ok(LweCiphertext { params, data })
    }
}

/// An LWE ciphertext of dimension `N` modulo the ring modulus `Q`, under the ring secret:
/// the output of blind rotation and sample extraction, before key switching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedLwe {
    params: ParamSet,
    data: Vec<u64>,
}

impl ExtractedLwe {
    pub fn from_raw(params: ParamSet, data: Vec<u64>) -> Result<Self> {
        let p = params.params();
        if data.len() != p.big_n() + 1 || data.iter().any(|&w| w >= p.q_ring()) {
            return Err(Error::InvalidInput(format!("{params} extracted LWE needs {} words below Q", p.big_n() + 1)));
        }
        Ok(ExtractedLwe { params, data })
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    pub fn as_words(&self) -> &[u64] {
        &self.data
    }
    /// `self + other (mod Q)`, used by MUX to sum two blind rotations before one key switch.
    pub fn add(&self, other: &ExtractedLwe) -> Result<ExtractedLwe> {
        if self.params != other.params {
            return Err(Error::ParamMismatch { expected: self.params.name(), found: other.params.name() });
        }
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
        Ok(ExtractedLwe { params: self.params, data })
    }
}

/// The secret key: the small LWE secret `s` and the ring secret `z`, both ternary.
/// Zeroized on drop.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey {
    #[zeroize(skip)]
    params: ParamSet,
    lwe: Vec<i8>,
    ring: Vec<i8>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({}, ..)", self.params)
    }
}

impl SecretKey {
    pub fn from_raw(params: ParamSet, lwe: Vec<i8>, ring: Vec<i8>) -> Result<Self> {
        let p = params.params();
        let ternary = |v: &[i8]| v.iter().all(|&x| (-1..=1).contains(&x));
        if lwe.len() != p.n() || ring.len() != p.big_n() || !ternary(&lwe) || !ternary(&ring) {
            return Err(Error::InvalidInput(format!(
                "{params} secret key needs {} + {} ternary coefficients",
                p.n(),
                p.big_n()
            )));
        }
        Ok(SecretKey { params, lwe, ring })
    }
    pub fn params(&self) -> ParamSet {
        self.params
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
    public_seed: [u8; 32],
    b: Vec<u32>,
    a: Vec<u16>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({}, {} samples)", self.params, self.b.len())
    }
}

impl PublicKey {
    pub fn from_raw(params: ParamSet, public_seed: [u8; 32], b: Vec<u32>) -> Result<Self> {
        let p = params.params();
        if b.len() != p.pk_samples || b.iter().any(|&w| w > p.q_lwe_mask()) {
            return Err(Error::InvalidInput(format!("{params} public key needs {} words below q", p.pk_samples)));
        }
        let a = expand_pk_a(params, &public_seed);
        Ok(PublicKey { params, public_seed, b, a })
    }
    pub fn params(&self) -> ParamSet {
        self.params
    }
    pub fn public_seed(&self) -> &[u8; 32] {
        &self.public_seed
    }
    pub fn b(&self) -> &[u32] {
        &self.b
    }
    /// The expanded `a` halves, `pk_samples x n`, row-major.
    pub fn a(&self) -> &[u16] {
        &self.a
    }
}

/// The `a` halves of the public key: sample `k` is `fill_pow2_u16(log q)` of `n` values
/// from stream `(public_seed, "pk-a", k)`.
pub fn expand_pk_a(params: ParamSet, public_seed: &[u8; 32]) -> Vec<u16> {
    let p = params.params();
    let mut a = vec![0; p.pk_samples * p.n()];
    for (k, row) in a.chunks_mut(p.n()).enumerate() {
        stream(public_seed, label::PK_A, k as u64).fill_pow2_u16(p.lwe_modulus_log.0, row);
    }
    a
}

/// The evaluation key: bootstrap key and key-switching key, `b` halves only.
#[derive(Clone, PartialEq, Eq)]
pub struct EvaluationKey {
    params: ParamSet,
    public_seed: [u8; 32],
    bsk_b: Vec<u64>,
    ksk_b: Vec<u32>,
}

impl std::fmt::Debug for EvaluationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EvaluationKey({})", self.params)
    }
}

impl EvaluationKey {
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
        Ok(EvaluationKey { params, public_seed, bsk_b, ksk_b })
    }
    pub fn params(&self) -> ParamSet {
        self.params
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

    /// RGSW key `key` (`i * 2 + sign`) in full, as backends hold it: `[row][half][slot]`,
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
    /// words.
    pub fn ksk_rows(&self, j: usize, out: &mut [u16]) {
        let p = self.params.params();
        let n = p.n();
        let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
        debug_assert_eq!(out.len(), per_j * (n + 1));
        let mut a = vec![0u16; per_j * n];
        expand_ksk_a(self.params, &self.public_seed, j, &mut a);
        for (idx, row) in out.chunks_mut(n + 1).enumerate() {
            row[..n].copy_from_slice(&a[idx * n..(idx + 1) * n]);
            row[n] = self.ksk_b[j * per_j + idx] as u16;
        }
    }
}

/// The `a` halves of RGSW key `key = i * 2 + sign` (all `2L` rows, evaluation form):
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
    debug_assert_eq!(out.len(), p.ksk_levels.0 * (p.ksk_base() as usize - 1) * p.n());
    stream(public_seed, label::KSK_A, j as u64).fill_pow2_u16(p.lwe_modulus_log.0, out);
}

/// The three keys of one seed.
#[derive(Clone, Debug)]
pub struct KeySet {
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub ek: EvaluationKey,
}
