//! CKKS encryption and decryption on the host, written once over a backend's
//! [`RingOps`] NTT.
//!
//! Public-key encryption of a plaintext `m` at level `l` (streams of the encryption seed):
//! `v` ternary from `(seed, "ckks-encrypt-v", 0)`, `e0`, `e1` centered binomial from
//! `(seed, "ckks-encrypt-e0", 0)` and `(seed, "ckks-encrypt-e1", 0)`; then, prime by prime,
//! `c0 = NTT(e0 + m) + NTT(v) b`, `c1 = NTT(e1) + NTT(v) a`. Secret-key encryption draws
//! `a` uniform in evaluation form from `(seed, "ckks-sk-encrypt-a", 0)` and `e` from
//! `(seed, "ckks-sk-encrypt-e", 0)`: `c0 = NTT(e + m) - a s`, `c1 = a`.
//! Decryption computes `c0 + c1 s` prime by prime and takes it to coefficient form.

use zeroize::Zeroizing;

use crate::ckks::entities::{expand_uniform, CkksCiphertext, CkksPlaintext, CkksPublicKey, CkksSecretKey};
use crate::ckks::eval::check_params;
use crate::ckks::keygen::{qp_moduli, sample_error, small_to_eval, small_to_eval_into};
use crate::error::{Error, Result};
use crate::ops::RingOps;
use crate::params::RingModulus;
use crate::rng::{stream, Seed};

/// `NTT(e + m)` prime by prime over `q_0 .. q_level`, into `out` (any contents, the
/// plaintext's length).
fn error_plus_message(ring: &dyn RingOps, pt: &CkksPlaintext, e: &[i64], mut out: Vec<u64>) -> Result<Vec<u64>> {
    let params = &pt.params;
    let n = params.n();
    let moduli = qp_moduli(params);
    out.copy_from_slice(&pt.coeffs);
    for (limb, m) in out.chunks_mut(n).zip(&moduli) {
        limb.iter_mut().zip(e).for_each(|(x, &e)| *x = m.add(*x, m.from_small(e)));
        ring.ring_forward(params.ring_degree, RingModulus(m.q), limb)?;
    }
    Ok(out)
}

/// Public-key encryption of `pt` with the randomness of `seed`.
pub fn encrypt_pk(ring: &dyn RingOps, pk: &CkksPublicKey, pt: &CkksPlaintext, seed: &Seed) -> Result<CkksCiphertext> {
    encrypt_pk_with(ring, pk, pt, seed, &|len| vec![0; len])
}

/// [`encrypt_pk`] writing its two halves into buffers from `buffer(len)` (`len` words,
/// any contents, every word overwritten): a backend recycles dropped ciphertexts' memory
/// there ([`crate::ops::CkksOps::result_buffer`]). Same words as [`encrypt_pk`].
pub fn encrypt_pk_with(
    ring: &dyn RingOps,
    pk: &CkksPublicKey,
    pt: &CkksPlaintext,
    seed: &Seed,
    buffer: &dyn Fn(usize) -> Vec<u64>,
) -> Result<CkksCiphertext> {
    check_params(&pk.params, &pt.params)?;
    let params = &pt.params;
    let (n, limbs) = (params.n(), pt.level + 1);
    let moduli = &qp_moduli(params)[..limbs];
    let mut r = stream(&seed.0, "ckks-encrypt-v", 0);
    let v = Zeroizing::new((0..n).map(|_| r.ternary()).collect::<Vec<i8>>());
    let e0 = sample_error(params, &seed.0, "ckks-encrypt-e0", 0);
    let e1 = sample_error(params, &seed.0, "ckks-encrypt-e1", 0);
    let sized = |words: Vec<u64>| match words.len() == limbs * n {
        true => Ok(words),
        false => Err(Error::InvalidInput(format!("a result buffer of {} words, expected {}", words.len(), limbs * n))),
    };
    let mut c0 = error_plus_message(ring, pt, &e0, sized(buffer(limbs * n))?)?;
    let mut c1 = sized(buffer(limbs * n))?;
    small_to_eval_into(ring, params, moduli, &e1, &mut c1)?;
    let a = pk.a_words();
    // `NTT(v)` one limb at a time in one buffer (no `limbs x N` temporary to fault in).
    let mut v_limb = Zeroizing::new(vec![0u64; n]);
    for (i, m) in moduli.iter().enumerate() {
        v_limb.iter_mut().zip(v.iter()).for_each(|(o, &x)| *o = m.from_small(x.into()));
        ring.ring_forward(params.ring_degree, RingModulus(m.q), &mut v_limb)?;
        let r = i * n..(i + 1) * n;
        let q = RingModulus(m.q);
        ring.ring_mul_add(q, &v_limb, &pk.b[r.clone()], &mut c0[r.clone()])?;
        ring.ring_mul_add(q, &v_limb, &a[r.clone()], &mut c1[r])?;
    }
    // Every word was reduced here: no second pass over 2 (l + 1) N words to check them.
    Ok(CkksCiphertext { params: params.clone(), level: pt.level, scale: pt.scale, c0, c1 })
}

/// `s` in evaluation form over `q_0 .. q_level` (computed once per key over every `q_i`).
fn secret_eval<'a>(ring: &dyn RingOps, sk: &'a CkksSecretKey, level: usize) -> Result<&'a [u64]> {
    let s = match sk.eval.get() {
        Some(s) => s,
        None => {
            let moduli = qp_moduli(&sk.params);
            let s = Zeroizing::new(small_to_eval(ring, &sk.params, &moduli[..sk.params.q.len()], &sk.s)?);
            // A racing thread computed the same words; either copy is kept.
            let _ = sk.eval.set(s);
            sk.eval.get().expect("just set")
        }
    };
    Ok(&s[..(level + 1) * sk.params.n()])
}

/// Secret-key encryption of `pt` with the randomness of `seed`.
pub fn encrypt_sk(ring: &dyn RingOps, sk: &CkksSecretKey, pt: &CkksPlaintext, seed: &Seed) -> Result<CkksCiphertext> {
    check_params(&sk.params, &pt.params)?;
    let params = &pt.params;
    let (n, limbs) = (params.n(), pt.level + 1);
    let moduli = &qp_moduli(params)[..limbs];
    let s = secret_eval(ring, sk, pt.level)?;
    let mut a = vec![0u64; limbs * n];
    expand_uniform(params, &seed.0, "ckks-sk-encrypt-a", 0, &mut a);
    let e = sample_error(params, &seed.0, "ckks-sk-encrypt-e", 0);
    let mut c0 = error_plus_message(ring, pt, &e, vec![0; limbs * n])?;
    for (i, m) in moduli.iter().enumerate() {
        let r = i * n..(i + 1) * n;
        c0[r.clone()]
            .iter_mut()
            .zip(a[r.clone()].iter().zip(&s[r]))
            .for_each(|(c, (&a, &s))| *c = m.sub(*c, m.mul(a, s)));
    }
    Ok(CkksCiphertext { params: params.clone(), level: pt.level, scale: pt.scale, c0, c1: a })
}

/// `c0 + c1 s` in coefficient form: the plaintext the ciphertext holds (with its noise).
pub fn decrypt(ring: &dyn RingOps, sk: &CkksSecretKey, ct: &CkksCiphertext) -> Result<CkksPlaintext> {
    check_params(&sk.params, &ct.params)?;
    let params = &ct.params;
    let n = params.n();
    let moduli = qp_moduli(params);
    let s = secret_eval(ring, sk, ct.level)?;
    let mut m = ct.c0.clone();
    for (i, md) in moduli[..ct.level + 1].iter().enumerate() {
        let r = i * n..(i + 1) * n;
        let limb = &mut m[r.clone()];
        limb.iter_mut().zip(ct.c1[r.clone()].iter().zip(&s[r])).for_each(|(x, (&c, &s))| *x = md.add(*x, md.mul(c, s)));
        ring.ring_inverse(params.ring_degree, RingModulus(md.q), limb)?;
    }
    Ok(CkksPlaintext { params: params.clone(), level: ct.level, scale: ct.scale, coeffs: m })
}
