//! CKKS key generation, written once for every backend over its [`RingOps`] NTT (so a
//! backend's keys equal the oracle's exactly when its NTT does).
//!
//! Streams (see [`crate::rng`]; `pseed` is [`fhe_api::rng::public_seed`] of the master seed):
//!
//! | component | stream | draws |
//! |---|---|---|
//! | secret `s` | `(seed, "ckks-secret", 0)` | `N` ternary (or sparse: positions, then signs) |
//! | public key `a` | `(pseed, "ckks-pk-a", 0)` | `uniform_mod` per word, limbs `q_0..q_L, p_0` |
//! | public key `e` | `(seed, "ckks-pk-e", 0)` | `N` centered binomial |
//! | switching key `a_j` | `(pseed, "<label>-a", j)` | `uniform_mod`, limbs of QP |
//! | switching key `e_j` | `(seed, "<label>-e", j)` | `N` centered binomial |
//!
//! `<label>` is `ckks-rlk` or `ckks-gk-<g>` ([`SwitchKind::label`]). Every polynomial is
//! taken to evaluation form prime by prime; `b = -a s + e (+ P s' on the digit's primes)`.
//! Sparse secret encapsulation's keys ([`encapsulation_keys`]) and the evaluation keys
//! under its sparse secret ([`each_sparse_eval_key`]) are made the same way from seeds
//! derived from the encapsulation seed (`"ckks-sse-to-sparse"`, `"ckks-sse-to-dense"`,
//! `"ckks-sse-eval"`).

use std::sync::Arc;

use rayon::prelude::*;
use zeroize::Zeroizing;

use fhe_api::ckks::entities::{
    expand_key_a, expand_uniform, EvalKeys, KeySet, PublicKey, SecretKey, SwitchKind, SwitchingKey,
};
use fhe_api::ckks::params::{Params, SecretDist};
use fhe_api::error::{Error, Result};
use fhe_api::ops::RingOps;
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation, EvalPermutation};
use fhe_api::ring::math::product_mod;
use fhe_api::ring::modulus::Modulus;
use fhe_api::rng::{public_seed, stream, Seed};
use fhe_api::tag::KeyTag;

/// Which evaluation keys to generate besides the secret and public keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeygenOptions {
    /// A relinearization key (needed by multiplication).
    pub relin: bool,
    /// Rotation steps (positive: left) to make Galois keys for.
    pub rotations: Vec<i64>,
    /// A Galois key for complex conjugation.
    pub conjugation: bool,
}

impl Default for KeygenOptions {
    fn default() -> Self {
        KeygenOptions { relin: true, rotations: Vec::new(), conjugation: false }
    }
}

/// The secret's ternary coefficients from the master seed.
pub(crate) fn sample_secret(params: &Params, seed: &Seed) -> Zeroizing<Vec<i8>> {
    let n = params.n();
    let mut r = stream(&seed.0, "ckks-secret", 0);
    let mut s = Zeroizing::new(vec![0i8; n]);
    match params.secret() {
        SecretDist::Ternary => s.iter_mut().for_each(|x| *x = r.ternary()),
        SecretDist::SparseTernary { hamming_weight } => sparse_into(&mut r, hamming_weight, &mut s),
    }
    s
}

/// `h` coefficients of `s` set to `+-1` from `r`: a partial Fisher-Yates shuffle picks
/// the positions, then one draw each sign.
fn sparse_into(r: &mut fhe_api::rng::Sampler, hamming_weight: usize, s: &mut [i8]) {
    let n = s.len();
    let mut idx: Vec<usize> = (0..n).collect();
    for t in 0..hamming_weight.min(n) {
        let j = t + r.uniform_mod((n - t) as u64) as usize;
        idx.swap(t, j);
    }
    for &i in &idx[..hamming_weight.min(n)] {
        s[i] = if r.uniform_mod(2) == 0 { 1 } else { -1 };
    }
}

/// Sparse secret encapsulation's two keys for `sk` (`docs/CKKS.md`): a sparse secret
/// `s'` of weight `hamming_weight` from `(seed, "ckks-sse-secret")`, the key from `s` to
/// `s'` with its words only over `q_0` and `P` (uniform words on `q_1 .. q_L`, drawn
/// apart from any secret: `s'` is never sampled over a larger modulus), and the key from `s'` back to `s` over all of `QP`.
/// Both are Galois keys of the identity (element 1), each with `a` halves and errors from
/// its own seed derived from `seed`.
pub(crate) fn encapsulation_keys(
    ring: &dyn RingOps,
    sk: &SecretKey,
    seed: &Seed,
    hamming_weight: usize,
) -> Result<(SwitchingKey, SwitchingKey)> {
    let params = sk.params();
    let n = params.n();
    let sparse = sparse_secret(n, seed, hamming_weight);
    let (to_sparse_seed, to_dense_seed) = (derived(seed, "ckks-sse-to-sparse"), derived(seed, "ckks-sse-to-dense"));
    let under_sparse = KeyMaker::new(ring, params, &to_sparse_seed, &sparse, sk.tag())?;
    let under_dense = KeyMaker::new(ring, params, &to_dense_seed, sk.coefficients(), sk.tag())?;
    let mut to_sparse = under_sparse.switching_key(&under_dense.s_eval, SwitchKind::Galois(1))?;
    let to_dense = under_dense.switching_key(&under_sparse.s_eval, SwitchKind::Galois(1))?;
    // Keep q_0 and P only: limbs 1 ..= L of every digit are replaced by uniform words
    // drawn apart from any secret (a level-0 key switch never reads them).
    let limbs = params.q().len() + params.p().len();
    let mut b = to_sparse.b().to_vec();
    let mut pad = vec![0u64; limbs * n];
    for (j, digit) in b.chunks_mut(limbs * n).enumerate() {
        expand_uniform(params, &seed.0, "ckks-sse-pad", j as u64, &mut pad);
        digit[n..params.q().len() * n].copy_from_slice(&pad[n..params.q().len() * n]);
    }
    to_sparse = SwitchingKey::from_raw(params.clone(), SwitchKind::Galois(1), sk.tag(), *to_sparse.seed(), b)?;
    Ok((to_sparse, to_dense))
}

/// The sparse secret `s'` of encapsulation for `seed`.
fn sparse_secret(n: usize, seed: &Seed, hamming_weight: usize) -> Zeroizing<Vec<i8>> {
    let mut sparse = Zeroizing::new(vec![0i8; n]);
    sparse_into(&mut stream(&seed.0, "ckks-sse-secret", 0), hamming_weight, &mut sparse);
    sparse
}

/// A seed of its own for one kind of encapsulation key, from `seed`.
fn derived(seed: &Seed, label: &str) -> Seed {
    let mut r = stream(&seed.0, label, 0);
    let mut b = [0u8; 32];
    b.chunks_mut(8).for_each(|c| c.copy_from_slice(&r.next_u64().to_le_bytes()));
    Seed(b)
}

/// The evaluation keys `options` names under the sparse secret `s'` of
/// [`encapsulation_keys`] for the same `seed` (errors and `a` halves from a seed derived
/// with `"ckks-sse-eval"`), handed to `f` one at a time, tagged with `sk`'s set: a bootstrap
/// that stays under `s'` after ModRaise switches with them.
pub(crate) fn each_sparse_eval_key(
    ring: &dyn RingOps,
    sk: &SecretKey,
    seed: &Seed,
    hamming_weight: usize,
    options: &KeygenOptions,
    f: impl FnMut(SwitchingKey) -> Result<()>,
) -> Result<()> {
    let params = sk.params();
    let sparse = sparse_secret(params.n(), seed, hamming_weight);
    let eval_seed = derived(seed, "ckks-sse-eval");
    KeyMaker::new(ring, params, &eval_seed, &sparse, sk.tag())?.each_eval_key(options, f)
}

/// Every prime of QP in order: `q_0 .. q_L, p_0 .. p_{K-1}`.
pub(crate) fn qp_moduli(params: &Params) -> Vec<Modulus> {
    params.q().iter().chain(params.p().iter()).map(|q| Modulus::new(q.0)).collect()
}

/// Signed small integers as one limb per modulus, taken to evaluation form.
pub(crate) fn small_to_eval<T: Copy + Into<i64> + Sync>(
    ring: &dyn RingOps,
    params: &Params,
    moduli: &[Modulus],
    small: &[T],
) -> Result<Vec<u64>> {
    let n = params.n();
    let mut out = vec![0u64; moduli.len() * n];
    for (limb, m) in out.chunks_mut(n).zip(moduli) {
        // Secrets and errors are far below every prime of the chain.
        limb.iter_mut().zip(small).for_each(|(o, &x)| *o = m.from_small(x.into()));
        ring.ring_forward(params.ring_degree(), fhe_api::ring::RingModulus(m.q), limb)?;
    }
    Ok(out)
}

/// Centered-binomial error polynomial of `N` coefficients from one stream.
pub(crate) fn sample_error(params: &Params, seed: &[u8; 32], label: &str, index: u64) -> Zeroizing<Vec<i64>> {
    let mut r = stream(seed, label, index);
    Zeroizing::new((0..params.n()).map(|_| r.cbd(params.noise_eta())).collect())
}

/// What every key of one secret is made from: the ring's NTT, the parameters, the seed of
/// the errors and its public seed (the keys' `a` halves), the key set's tag, QP's moduli
/// and the secret in evaluation form over QP.
struct KeyMaker<'a> {
    ring: &'a dyn RingOps,
    params: &'a Arc<Params>,
    seed: &'a Seed,
    pseed: [u8; 32],
    tag: KeyTag,
    moduli: Vec<Modulus>,
    s_eval: Zeroizing<Vec<u64>>,
}

impl<'a> KeyMaker<'a> {
    /// The keys of secret `s` whose set is tagged `tag`, with errors from `seed` and `a`
    /// halves from its public seed.
    fn new(ring: &'a dyn RingOps, params: &'a Arc<Params>, seed: &'a Seed, s: &[i8], tag: KeyTag) -> Result<Self> {
        let moduli = qp_moduli(params);
        let s_eval = Zeroizing::new(small_to_eval(ring, params, &moduli, s)?);
        Ok(KeyMaker { ring, params, seed, pseed: public_seed(seed), tag, moduli, s_eval })
    }

    fn public_key(&self) -> Result<PublicKey> {
        let (params, n) = (self.params, self.params.n());
        let levels = PublicKey::limbs(params);
        let mut a = vec![0u64; levels * n];
        expand_uniform(params, &self.pseed, "ckks-pk-a", 0, &mut a);
        let e = sample_error(params, &self.seed.0, "ckks-pk-e", 0);
        let mut b = small_to_eval(self.ring, params, &self.moduli[..levels], &e)?;
        for (((b, a), s), m) in b.chunks_mut(n).zip(a.chunks(n)).zip(self.s_eval.chunks(n)).zip(&self.moduli) {
            b.iter_mut().zip(a).zip(s).for_each(|((b, &a), &s)| *b = m.sub(*b, m.mul(a, s)));
        }
        PublicKey::from_raw(params.clone(), self.pseed, b)
    }

    fn relin_key(&self) -> Result<SwitchingKey> {
        let n = self.params.n();
        let mut s2 = Zeroizing::new(vec![0u64; self.s_eval.len()]);
        for ((o, x), m) in s2.chunks_mut(n).zip(self.s_eval.chunks(n)).zip(&self.moduli) {
            o.iter_mut().zip(x).for_each(|(o, &x)| *o = m.mul(x, x));
        }
        self.switching_key(&s2, SwitchKind::Relin)
    }

    fn galois_key(&self, g: u64) -> Result<SwitchingKey> {
        let n = self.params.n();
        let perm = EvalPermutation::new(self.params.ring_degree(), g)?;
        let mut sg = Zeroizing::new(vec![0u64; self.s_eval.len()]);
        for (o, x) in sg.chunks_mut(n).zip(self.s_eval.chunks(n)) {
            perm.apply(x, o);
        }
        self.switching_key(&sg, SwitchKind::Galois(g))
    }

    /// The hybrid key switching key from `s'` (`target`, evaluation form over QP) to `s`.
    fn switching_key(&self, target: &[u64], kind: SwitchKind) -> Result<SwitchingKey> {
        let (params, moduli, s_eval) = (self.params, &self.moduli, &self.s_eval);
        let n = params.n();
        let limbs = moduli.len();
        let digits = params.digits(params.max_level());
        let mut a = vec![0u64; digits.len() * limbs * n];
        expand_key_a(params, &self.pseed, kind, &mut a);
        let label = format!("{}-e", kind.label());
        // P mod q_i for the gadget term of each digit's own primes.
        let p_mod: Vec<u64> =
            moduli[..params.q().len()].iter().map(|m| product_mod(params.p().iter().map(|p| p.0), m.q)).collect();
        let mut b = vec![0u64; a.len()];
        let results: Vec<Result<()>> = b
            .par_chunks_mut(limbs * n)
            .zip(a.par_chunks(limbs * n))
            .enumerate()
            .map(|(j, (bj, aj))| {
                let e = sample_error(params, &self.seed.0, &label, j as u64);
                let e_eval = small_to_eval(self.ring, params, moduli, &e)?;
                for (i, m) in moduli.iter().enumerate() {
                    let range = i * n..(i + 1) * n;
                    let gadget = if digits[j].contains(&i) { Some(p_mod[i]) } else { None };
                    let (bl, al, el, sl, tl) = (
                        &mut bj[range.clone()],
                        &aj[range.clone()],
                        &e_eval[range.clone()],
                        &s_eval[range.clone()],
                        &target[range],
                    );
                    for k in 0..n {
                        let mut v = m.sub(el[k], m.mul(al[k], sl[k]));
                        if let Some(pm) = gadget {
                            v = m.add(v, m.mul(pm, tl[k]));
                        }
                        bl[k] = v;
                    }
                }
                Ok(())
            })
            .collect();
        results.into_iter().collect::<Result<()>>()?;
        if b.is_empty() {
            return Err(Error::InvalidInput("a switching key needs at least one digit".into()));
        }
        SwitchingKey::from_raw(params.clone(), kind, self.tag, self.pseed, b)
    }
}

/// Every key for `params` from `seed`, and the evaluation keys `options` names.
pub fn keygen(ring: &dyn RingOps, params: &Arc<Params>, seed: &Seed, options: &KeygenOptions) -> Result<KeySet> {
    let s = sample_secret(params, seed);
    let tag = params.key_tag(&public_seed(seed));
    let sk = SecretKey::from_raw(params.clone(), tag, s.to_vec())?;
    let maker = KeyMaker::new(ring, params, seed, &s, tag)?;
    let pk = maker.public_key()?;
    let eval = maker.eval_keys(options)?;
    Ok(KeySet { sk, pk, eval })
}

impl KeyMaker<'_> {
    /// The evaluation keys `options` names (the secret and public keys aside).
    fn eval_keys(&self, options: &KeygenOptions) -> Result<EvalKeys> {
        let mut eval = EvalKeys::default();
        self.each_eval_key(options, |key| {
            eval.insert(key);
            Ok(())
        })?;
        Ok(eval)
    }

    /// The keys of [`KeyMaker::eval_keys`], handed to `f` one at a time as made.
    fn each_eval_key(&self, options: &KeygenOptions, mut f: impl FnMut(SwitchingKey) -> Result<()>) -> Result<()> {
        let n = self.params.ring_degree();
        if options.relin {
            f(self.relin_key()?)?;
        }
        let mut elements: Vec<u64> = options.rotations.iter().map(|&k| galois_element_for_rotation(n, k)).collect();
        if options.conjugation {
            elements.push(conjugation_element(n));
        }
        elements.sort_unstable();
        elements.dedup();
        for g in elements {
            f(self.galois_key(g)?)?;
        }
        Ok(())
    }
}

/// A Galois key for one more element from the same master seed (keys can be made and
/// shipped one by one).
pub fn galois_key_from_seed(ring: &dyn RingOps, params: &Arc<Params>, seed: &Seed, g: u64) -> Result<SwitchingKey> {
    let tag = params.key_tag(&public_seed(seed));
    KeyMaker::new(ring, params, seed, &sample_secret(params, seed), tag)?.galois_key(g)
}

/// The evaluation keys `options` names, from the secret key alone (a key set made without
/// some rotation can gain it later): errors from `seed` and `a` halves from its public
/// seed, which each key carries; the keys carry `sk`'s tag, so they serve its set.
pub fn eval_keys_from_secret(
    ring: &dyn RingOps,
    sk: &SecretKey,
    seed: &Seed,
    options: &KeygenOptions,
) -> Result<EvalKeys> {
    KeyMaker::new(ring, sk.params(), seed, sk.coefficients(), sk.tag())?.eval_keys(options)
}

/// The keys of [`eval_keys_from_secret`], handed to `f` one at a time as they are made
/// (so a caller that prepares and drops each never holds the whole set).
pub fn each_eval_key_from_secret(
    ring: &dyn RingOps,
    sk: &SecretKey,
    seed: &Seed,
    options: &KeygenOptions,
    f: impl FnMut(SwitchingKey) -> Result<()>,
) -> Result<()> {
    KeyMaker::new(ring, sk.params(), seed, sk.coefficients(), sk.tag())?.each_eval_key(options, f)
}

#[cfg(test)]
mod tests {
    use fhe_api::ckks::{Preset, SecretKey};
    use fhe_api::format::{Decode, TryEncode};
    use fhe_cpu::CpuBackend;

    use super::*;

    /// Every key keygen makes (secret, public, relinearization, Galois keys of rotations
    /// and conjugation) round-trips through the binary format unchanged.
    #[test]
    fn keygen_objects_round_trip_through_the_format() {
        let params = Arc::new(Preset::Slots4096Scale40Depth2.params().clone());
        let options = KeygenOptions { relin: true, rotations: vec![1, -3], conjugation: true };
        let keys = keygen(&CpuBackend::oracle(), &params, &Seed([7; 32]), &options).unwrap();
        let sk = SecretKey::decode(&keys.sk.try_encode_zeroizing().unwrap()).unwrap();
        assert_eq!(sk.coefficients(), keys.sk.coefficients());
        assert_eq!(PublicKey::decode(&keys.pk.try_encode().unwrap()).unwrap(), keys.pk);
        let relin = keys.eval.relin.as_ref().unwrap();
        assert_eq!(&SwitchingKey::decode(&relin.try_encode().unwrap()).unwrap(), relin);
        assert_eq!(keys.eval.galois.len(), 3, "two rotations and the conjugation");
        for (&g, key) in &keys.eval.galois {
            assert_eq!(key.kind(), SwitchKind::Galois(g));
            assert_eq!(&SwitchingKey::decode(&key.try_encode().unwrap()).unwrap(), key);
        }
    }
}
