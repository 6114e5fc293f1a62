//! CKKS keys, plaintexts and ciphertexts in their host (serializable) form.
//!
//! Layout, shared by every backend and by the binary format: a polynomial over primes
//! `r_0 .. r_k` is limb-major (`k + 1` limbs of `N` words, limb `i` reduced below `r_i`).
//! Ciphertexts and keys are in evaluation (NTT) form; plaintexts and the secret key in
//! coefficient form. Levels count down: a ciphertext at level `l` lives over `q_0 .. q_l`.
//! Switching keys live over `q_0 .. q_L, p_0 .. p_{K-1}` (QP, all levels) and keep only
//! their `b` halves: the `a` halves are expanded from a public seed ([`expand_key_a`]).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use zeroize::Zeroizing;

use crate::ckks::meta::CkksMeta;
use crate::ckks::params::Params;
use crate::ckks::scale::Scale;
use crate::error::{Error, Result};
use crate::rng::stream;
use crate::tag::KeyTag;

/// Which secret a switching key moves a ciphertext from: `s^2` (relinearization) or
/// `sigma_g(s)` (the Galois automorphism `X -> X^g`, a rotation or conjugation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SwitchKind {
    Relin,
    Galois(u64),
}

impl SwitchKind {
    /// The stream label of the key's seeded `a` halves (and its error).
    pub fn label(self) -> String {
        match self {
            SwitchKind::Relin => "ckks-rlk".into(),
            SwitchKind::Galois(g) => format!("ckks-gk-{g}"),
        }
    }
}

/// The secret key: `N` ternary coefficients and its key set's tag. Zeroized on drop.
pub struct SecretKey {
    pub(crate) params: Arc<Params>,
    pub(crate) tag: KeyTag,
    pub(crate) s: Zeroizing<Vec<i8>>,
    /// `s` in evaluation form over `q_0 .. q_L`, computed on first use (decryption would
    /// otherwise take it through `L + 1` NTTs every time). The NTT's words are fixed, so
    /// the cache is the same whichever backend filled it. Zeroized on drop.
    pub(crate) eval: OnceLock<Zeroizing<Vec<u64>>>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({}, tag {}, ..)", self.params.name(), self.tag)
    }
}

impl SecretKey {
    /// `s` under the key set tagged `tag` ([`Params::key_tag`] of its public seed). The key
    /// is built first and checked after, so a refused key's coefficients are zeroized on
    /// drop like an accepted one's.
    pub fn from_raw(params: Arc<Params>, tag: KeyTag, s: Vec<i8>) -> Result<Self> {
        let key = SecretKey { params, tag, s: Zeroizing::new(s), eval: OnceLock::new() };
        let n = key.params.n();
        if key.s.len() != n || key.s.iter().any(|&x| !(-1..=1).contains(&x)) {
            return Err(Error::InvalidInput(format!("a CKKS secret key has {n} ternary coefficients")));
        }
        if key.s.iter().all(|&x| x == 0) {
            return Err(Error::InvalidInput("an all-zero CKKS secret key".into()));
        }
        if tag.is_none() {
            return Err(Error::InvalidInput("a CKKS secret key needs its key set's tag, not none".into()));
        }
        Ok(key)
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    /// The key set's tag: objects of another key set are `Error::WrongKey`.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    /// The ternary coefficients (secret: handle with care).
    pub fn coefficients(&self) -> &[i8] {
        &self.s
    }
    /// `s` in evaluation form over `q_0 .. q_L`, computed by `compute` on first use and
    /// kept (zeroized on drop). Its words are fixed by the NTT contract, so the cache is
    /// the same whichever backend filled it; a racing thread computes the same words.
    pub fn eval_form(&self, compute: impl FnOnce() -> Result<Zeroizing<Vec<u64>>>) -> Result<&[u64]> {
        if let Some(s) = self.eval.get() {
            return Ok(s);
        }
        let s = compute()?;
        if s.len() != self.params.q().len() * self.params.n() {
            return Err(Error::InvalidInput(format!("a secret's evaluation form of {} words", s.len())));
        }
        let _ = self.eval.set(s);
        Ok(self.eval.get().expect("just set"))
    }
}

/// The public key `(b, a) = (-a s + e, a)` over `q_0 .. q_L` and the first special prime
/// `p_0` (encryption divides by it, `fhe_schemes::ckks`'s encryption), evaluation form;
/// `a` from the public seed (stream `ckks-pk-a`), which also names the key set's tag.
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub(crate) params: Arc<Params>,
    pub(crate) tag: KeyTag,
    pub(crate) seed: [u8; 32],
    pub(crate) b: Vec<u64>,
    /// The `a` half, expanded on first use (a ChaCha draw per word, every encryption).
    a: OnceLock<Vec<u64>>,
}

/// Keys are equal when their words are; whether `a` was expanded yet does not matter.
impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params && self.seed == other.seed && self.b == other.b
    }
}

impl PublicKey {
    /// A limb of `b` that is all zero is refused: with `b = 0` an encryption's `c0` would
    /// carry the message in the clear (up to `v e`), as would a forged key.
    pub fn from_raw(params: Arc<Params>, seed: [u8; 32], b: Vec<u64>) -> Result<Self> {
        if params.p().is_empty() {
            return Err(Error::InvalidInput(format!("{}: a public key needs a special prime", params.name())));
        }
        check_limbs(&params, &b, Self::limbs(&params), "public key")?;
        check_no_zero_limb(&params, &b, "public key")?;
        Ok(PublicKey { tag: params.key_tag(&seed), params, seed, b, a: OnceLock::new() })
    }
    /// The key set's tag, derived from the public seed.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    /// Limbs of each half: `q_0 .. q_L` and `p_0`.
    pub fn limbs(params: &Params) -> usize {
        params.q().len() + 1
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }
    pub fn b(&self) -> &[u64] {
        &self.b
    }
    /// The `a` half, expanded from the seed.
    pub fn a(&self) -> Vec<u64> {
        self.a_words().to_vec()
    }
    /// The `a` half, expanded once and kept.
    pub fn a_words(&self) -> &[u64] {
        self.a.get_or_init(|| {
            let mut a = vec![0u64; self.b.len()];
            expand_uniform(&self.params, &self.seed, "ckks-pk-a", 0, &mut a);
            a
        })
    }
}

/// A hybrid key-switching key: for each of `dnum` digits `j`, `b_j = -a_j s + e_j +
/// [i in digit j] P s'` modulo every prime `r_i` of QP (evaluation form). Limb-major
/// `dnum x (L + 1 + K) x N` words. It carries its key set's tag: a key made later from
/// the secret key alone has a seed of its own but the set's tag.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchingKey {
    pub(crate) params: Arc<Params>,
    pub(crate) kind: SwitchKind,
    pub(crate) tag: KeyTag,
    pub(crate) seed: [u8; 32],
    pub(crate) b: Vec<u64>,
}

impl SwitchingKey {
    /// A limb of `b` that is all zero is refused (a forged or degenerate key), as is the
    /// tag of no key.
    pub fn from_raw(params: Arc<Params>, kind: SwitchKind, tag: KeyTag, seed: [u8; 32], b: Vec<u64>) -> Result<Self> {
        if let SwitchKind::Galois(g) = kind {
            if g.is_multiple_of(2) || g >= 2 * params.n() as u64 {
                return Err(Error::InvalidInput(format!("Galois element {g} is not odd and below 2N")));
            }
        }
        if tag.is_none() {
            return Err(Error::InvalidInput("a switching key needs its key set's tag, not none".into()));
        }
        let digits = params.digits(params.max_level()).len();
        check_limbs(&params, &b, digits * (params.q().len() + params.p().len()), "switching key")?;
        check_no_zero_limb(&params, &b, "switching key")?;
        Ok(SwitchingKey { params, kind, tag, seed, b })
    }
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }
    pub fn kind(&self) -> SwitchKind {
        self.kind
    }
    /// The key set's tag.
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }
    /// The `b` halves: digit `j`, prime `i` at `((j * (L+1+K)) + i) * N`.
    pub fn b(&self) -> &[u64] {
        &self.b
    }
    /// The `a` halves, expanded from the seed (same layout as [`SwitchingKey::b`]).
    pub fn a(&self) -> Vec<u64> {
        let mut a = vec![0u64; self.b.len()];
        expand_key_a(&self.params, &self.seed, self.kind, &mut a);
        a
    }
    /// `(b, a)` cut to what a switch at `level` or below reads: the digits covering
    /// `q_0..q_level`, each over `q_0..q_level, P` (digit `j`, limb `t` at
    /// `(j * (level+1+K) + t) * N`); the whole key at the top level.
    pub fn halves_up_to(&self, level: usize) -> Result<(Vec<u64>, Vec<u64>)> {
        crate::ckks::meta::check_level(&self.params, level)?;
        if level == self.params.max_level() {
            return Ok((self.b.clone(), self.a()));
        }
        let (n, q_len) = (self.params.n(), self.params.q().len());
        let whole = (q_len + self.params.p().len()) * n;
        let digits = self.params.digits(level).len();
        let cut = |x: &[u64]| -> Vec<u64> {
            let mut out = Vec::with_capacity(digits * (whole - (q_len - level - 1) * n));
            for d in x.chunks(whole).take(digits) {
                out.extend_from_slice(&d[..(level + 1) * n]);
                out.extend_from_slice(&d[q_len * n..]);
            }
            out
        };
        Ok((cut(&self.b), cut(&self.a())))
    }
}

/// The `a` halves of a switching key: digit `j` from stream `(seed, "<label>-a", j)`, its
/// limbs in QP order, each limb's `N` words by [`crate::rng::Sampler::uniform_mod`].
pub fn expand_key_a(params: &Params, seed: &[u8; 32], kind: SwitchKind, out: &mut [u64]) {
    let per_digit = (params.q().len() + params.p().len()) * params.n();
    let label = format!("{}-a", kind.label());
    for (j, digit) in out.chunks_mut(per_digit).enumerate() {
        expand_uniform(params, seed, &label, j as u64, digit);
    }
}

/// Uniform words over QP's primes in order (q_0.. then p_0..), as many limbs as `out` holds.
pub fn expand_uniform(params: &Params, seed: &[u8; 32], label: &str, index: u64, out: &mut [u64]) {
    let mut r = stream(seed, label, index);
    let primes = params.q().iter().chain(params.p().iter());
    for (limb, q) in out.chunks_mut(params.n()).zip(primes) {
        limb.iter_mut().for_each(|x| *x = r.uniform_mod(q.0));
    }
}

/// The evaluation keys a server needs: relinearization and the Galois keys the caller
/// asked for, by Galois element. Each can be serialized and loaded on its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalKeys {
    pub relin: Option<SwitchingKey>,
    pub galois: BTreeMap<u64, SwitchingKey>,
}

impl EvalKeys {
    /// Files `key` under its kind (a Galois key by its element); the key it replaces, if
    /// any.
    pub fn insert(&mut self, key: SwitchingKey) -> Option<SwitchingKey> {
        match key.kind() {
            SwitchKind::Relin => self.relin.replace(key),
            SwitchKind::Galois(g) => self.galois.insert(g, key),
        }
    }
}

/// Every key of one secret.
pub struct KeySet {
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub eval: EvalKeys,
}

/// A ciphertext on the host: `(c0, c1)` over `q_0 .. q_level`, evaluation form, with the
/// scale its message is multiplied by. Decrypts to `c0 + c1 s`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCiphertext {
    meta: CkksMeta,
    c0: Vec<u64>,
    c1: Vec<u64>,
}

impl HostCiphertext {
    /// Every word is checked below its prime.
    pub fn from_raw(meta: CkksMeta, c0: Vec<u64>, c1: Vec<u64>) -> Result<Self> {
        check_limbs(meta.params(), &c0, meta.limbs(), "ciphertext c0")?;
        check_limbs(meta.params(), &c1, meta.limbs(), "ciphertext c1")?;
        Ok(HostCiphertext { meta, c0, c1 })
    }
    /// For a producer that reduced every word itself (encryption, a backend's download):
    /// the lengths are checked, the words are not (a word at or above its prime gives
    /// unspecified words later, never a panic).
    pub fn from_reduced(meta: CkksMeta, c0: Vec<u64>, c1: Vec<u64>) -> Result<Self> {
        check_len(&meta, &c0, "ciphertext c0")?;
        check_len(&meta, &c1, "ciphertext c1")?;
        Ok(HostCiphertext { meta, c0, c1 })
    }
    pub fn meta(&self) -> &CkksMeta {
        &self.meta
    }
    pub fn params(&self) -> &Arc<Params> {
        self.meta.params()
    }
    pub fn level(&self) -> usize {
        self.meta.level()
    }
    pub fn scale(&self) -> Scale {
        self.meta.scale()
    }
    pub fn tag(&self) -> KeyTag {
        self.meta.tag()
    }
    pub fn c0(&self) -> &[u64] {
        &self.c0
    }
    pub fn c1(&self) -> &[u64] {
        &self.c1
    }
    /// `(c0, c1)`, consuming the ciphertext.
    pub fn into_parts(self) -> (Vec<u64>, Vec<u64>) {
        (self.c0, self.c1)
    }
}

/// An encoded message: coefficient form over `q_0 .. q_level`, and, for an extended
/// plaintext, over the special primes `p_0 .. p_{K-1}` too (the form a sum of rotations
/// with one lazy ModDown multiplies by, before dividing by `P`).
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    meta: CkksMeta,
    coeffs: Vec<u64>,
    /// `K` limbs over `P`, or none.
    special: Vec<u64>,
}

impl Plaintext {
    /// Every word is checked below its prime.
    pub fn from_raw(meta: CkksMeta, coeffs: Vec<u64>) -> Result<Self> {
        check_limbs(meta.params(), &coeffs, meta.limbs(), "plaintext")?;
        Ok(Plaintext { meta, coeffs, special: Vec::new() })
    }
    /// [`HostCiphertext::from_reduced`]'s rule: lengths checked, words not.
    pub fn from_reduced(meta: CkksMeta, coeffs: Vec<u64>) -> Result<Self> {
        check_len(&meta, &coeffs, "plaintext")?;
        Ok(Plaintext { meta, coeffs, special: Vec::new() })
    }
    /// An extended plaintext: `coeffs` over `q_0 .. q_level` and `special` over
    /// `p_0 .. p_{K-1}`, the same integers reduced (lengths checked, words not).
    pub fn extended_from_reduced(meta: CkksMeta, coeffs: Vec<u64>, special: Vec<u64>) -> Result<Self> {
        check_len(&meta, &coeffs, "plaintext")?;
        let want = meta.params().p().len() * meta.params().n();
        if special.len() != want {
            return Err(Error::InvalidInput(format!(
                "extended plaintext: {} special words, expected {want}",
                special.len()
            )));
        }
        Ok(Plaintext { meta, coeffs, special })
    }
    /// The limbs over `P` of an extended plaintext (empty for any other).
    pub fn special(&self) -> &[u64] {
        &self.special
    }
    pub fn is_extended(&self) -> bool {
        !self.special.is_empty()
    }
    pub fn meta(&self) -> &CkksMeta {
        &self.meta
    }
    pub fn params(&self) -> &Arc<Params> {
        self.meta.params()
    }
    pub fn level(&self) -> usize {
        self.meta.level()
    }
    pub fn scale(&self) -> Scale {
        self.meta.scale()
    }
    pub fn tag(&self) -> KeyTag {
        self.meta.tag()
    }
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }
    pub fn into_coeffs(self) -> Vec<u64> {
        self.coeffs
    }
}

/// No limb of `words` is all zero: a uniformly random limb is zero with probability
/// `q^-N`, a degenerate or forged key's is not.
fn check_no_zero_limb(params: &Params, words: &[u64], what: &str) -> Result<()> {
    match words.chunks(params.n()).position(|limb| limb.iter().all(|&x| x == 0)) {
        Some(i) => Err(Error::InvalidInput(format!("{what}: limb {i} is all zero (a degenerate key)"))),
        None => Ok(()),
    }
}

fn check_len(meta: &CkksMeta, words: &[u64], what: &str) -> Result<()> {
    let want = meta.limbs() * meta.params().n();
    if words.len() != want {
        return Err(Error::InvalidInput(format!("{what}: {} words, expected {want}", words.len())));
    }
    Ok(())
}

/// `words` holds `limbs` limbs of `N` words over the primes of QP in order (repeated every
/// `L + 1 + K` limbs, for switching keys), each word below its prime.
fn check_limbs(params: &Params, words: &[u64], limbs: usize, what: &str) -> Result<()> {
    let n = params.n();
    if words.len() != limbs * n {
        return Err(Error::InvalidInput(format!("{what}: {} words, expected {limbs} limbs of {n}", words.len())));
    }
    let primes: Vec<u64> = params.q().iter().chain(params.p().iter()).map(|q| q.0).collect();
    for (i, limb) in words.chunks(n).enumerate() {
        let q = primes[i % primes.len()];
        if let Some(k) = limb.iter().position(|&x| x >= q) {
            return Err(Error::InvalidInput(format!("{what}: word {} is not below its prime {q}", i * n + k)));
        }
    }
    Ok(())
}
