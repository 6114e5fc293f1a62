//! CKKS encryption and decryption on the host, written once over a backend's
//! [`RingOps`] NTT.
//!
//! Public-key encryption of a plaintext `m` at level `l` (streams of the encryption seed):
//! `v` ternary from `(seed, "ckks-encrypt-v", 0)`, `e0`, `e1` centered binomial from
//! `(seed, "ckks-encrypt-e0", 0)` and `(seed, "ckks-encrypt-e1", 0)`. Over the first
//! special prime `p` (the public key's last limb): `u_j = INTT(NTT(v) k_j) + e_j` and `r_j`
//! its centered remainder (`h = floor(p/2)`, `r = ((u + h) mod p) - h`). Then, prime by
//! prime over `q_0 .. q_l`, with `w = p^-1 mod q_i`:
//! `c0 = NTT(w (e0 - r0) + m) + NTT(w v) b`, `c1 = NTT(w (e1 - r1)) + NTT(w v) a`,
//! that is `round((v k + e) / p) + (m, 0)`: the encryption made modulo `Q p` and divided
//! by `p`, whose fresh noise is the rounding's (Lattigo's public-key encryptor divides by
//! all of `P` the same way).
//!
//! Secret-key encryption draws `a` uniform in evaluation form from
//! `(seed, "ckks-sk-encrypt-a", 0)` and `e` from `(seed, "ckks-sk-encrypt-e", 0)`:
//! `c0 = NTT(e + m) - a s`, `c1 = a` (its noise `e` is already below the rounding's).
//! Decryption computes `c0 + c1 s` prime by prime and takes it to coefficient form.

use rayon::prelude::*;
use zeroize::Zeroizing;

use crate::ckks::evaluator::check_params;
use crate::ckks::keygen::{qp_moduli, sample_error, small_to_eval};
use fhe_api::ckks::entities::{expand_uniform, HostCiphertext, Plaintext, PublicKey, SecretKey};
use fhe_api::error::{Error, Result};
use fhe_api::ops::RingOps;
use fhe_api::ring::math::inv_mod;
use fhe_api::ring::modulus::{csub, mul_shoup_lazy, shoup, Modulus};
use fhe_api::ring::RingModulus;
use fhe_api::rng::{stream, Seed};

/// `NTT(e + m)` prime by prime over `q_0 .. q_level`, into `out` (any contents, the
/// plaintext's length).
fn error_plus_message(ring: &dyn RingOps, pt: &Plaintext, e: &[i64], mut out: Vec<u64>) -> Result<Vec<u64>> {
    let params = pt.params();
    let n = params.n();
    let moduli = qp_moduli(params);
    out.copy_from_slice(pt.coeffs());
    for (limb, m) in out.chunks_mut(n).zip(&moduli) {
        limb.iter_mut().zip(e).for_each(|(x, &e)| *x = m.add(*x, m.from_small(e)));
        ring.ring_forward(params.ring_degree(), RingModulus(m.q), limb)?;
    }
    Ok(out)
}

/// `2^62`: added to `e - r` (`|e - r| < 2^61`) so it is a positive `u64` below `2^63`.
const LIFT: u64 = 1 << 62;

/// The first special prime's part of an encryption: `u = INTT(NTT(v) k_p) + e` over `p`,
/// returned as `e - r + 2^62`, `r` the centered remainder of `u` mod `p` (`h = floor(p/2)`,
/// `r = ((u + h) mod p) - h`), so that `X - r` is a multiple of `p` for the integer
/// `X = v k + e` modulo `Q p`.
fn special_offsets(
    ring: &dyn RingOps,
    n_ring: fhe_api::ring::PolynomialSize,
    p: &Modulus,
    v_p: &[u64],
    k_p: &[u64],
    e: &[i64],
) -> Result<Zeroizing<Vec<u64>>> {
    let mut u = Zeroizing::new(vec![0u64; v_p.len()]);
    ring.ring_mul_add(RingModulus(p.q), v_p, k_p, &mut u)?;
    ring.ring_inverse(n_ring, RingModulus(p.q), &mut u)?;
    let h = p.q / 2;
    u.iter_mut().zip(e).for_each(|(x, &e)| {
        let r = csub(p.add(*x, p.from_small(e)) + h, p.q) as i64 - h as i64;
        *x = (e - r + LIFT as i64) as u64;
    });
    Ok(u)
}

/// `p^-1 (t - 2^62) + m mod q` for each offset word `t` of [`special_offsets`] (`m` the
/// message limb, or none): the coefficient form of `(X - r) / p - v k / p`, so only
/// `NTT(v) p^-1 k` is left to add in evaluation form.
fn scaled_limb(q: &Modulus, p_inv: (u64, u64), t: &[u64], m: Option<&[u64]>, out: &mut [u64]) {
    let (w, ws) = p_inv;
    // `p^-1 2^62 mod q`, subtracted once per word instead of reducing `t - 2^62` first.
    let lift = q.mul(w, q.reduce(LIFT));
    let scaled = |t: u64| q.sub(csub(mul_shoup_lazy(t, w, ws, q.q), q.q), lift);
    match m {
        Some(m) => out.iter_mut().zip(t.iter().zip(m)).for_each(|(o, (&t, &m))| *o = q.add(scaled(t), m)),
        None => out.iter_mut().zip(t).for_each(|(o, &t)| *o = scaled(t)),
    }
}

/// Public-key encryption of `pt` with the randomness of `seed`, writing its two halves
/// into buffers from `buffer(len)` (`len` words,
/// any contents, every word overwritten): a backend recycles dropped ciphertexts' memory
/// there ([`fhe_api::ops::CkksOps::result_buffer`]).
///
/// The encryption is made over `q_0 .. q_level` and the first special prime `p` (the
/// public key has that limb), then divided by `p` with rounding, limb by limb:
/// `c = (v k + (e0, e1) - r) / p + (m, 0)` with `r` the centered remainder modulo `p`.
/// The fresh noise is then the rounding's, `-(r0 + r1 s) / p` (about `sqrt(N / 18)` per
/// coefficient), not `v e + e0 + e1 s`, which the division shrinks below one.
pub(crate) fn encrypt_pk(
    ring: &dyn RingOps,
    pk: &PublicKey,
    pt: &Plaintext,
    seed: &Seed,
    buffer: &dyn Fn(usize) -> Vec<u64>,
) -> Result<HostCiphertext> {
    check_params(pk.params(), pt.params())?;
    pt.tag().check_against(pk.tag())?;
    let meta = pt.meta().with("encrypt", pt.level(), pt.scale(), pk.tag())?;
    let params = pt.params();
    let (n, limbs) = (params.n(), pt.level() + 1);
    let all = qp_moduli(params);
    let moduli = &all[..limbs];
    // `PublicKey::from_raw` refuses parameters without a special prime.
    let top = params.q().len();
    let p = all.get(top).ok_or_else(|| Error::InvalidInput("public-key encryption needs a special prime".into()))?;
    // Three independent streams, drawn on as many cores as there are.
    let (v, (e0, e1)) = rayon::join(
        || {
            let mut r = stream(&seed.0, "ckks-encrypt-v", 0);
            Zeroizing::new((0..n).map(|_| r.ternary()).collect::<Vec<i8>>())
        },
        || {
            rayon::join(
                || sample_error(params, &seed.0, "ckks-encrypt-e0", 0),
                || sample_error(params, &seed.0, "ckks-encrypt-e1", 0),
            )
        },
    );
    let sized = |words: Vec<u64>| match words.len() == limbs * n {
        true => Ok(words),
        false => Err(Error::InvalidInput(format!("a result buffer of {} words, expected {}", words.len(), limbs * n))),
    };
    let a = pk.a_words();
    let pr = top * n..(top + 1) * n;
    let mut v_p = Zeroizing::new(vec![0u64; n]);
    v_p.iter_mut().zip(v.iter()).for_each(|(o, &x)| *o = p.from_small(x.into()));
    ring.ring_forward(params.ring_degree(), RingModulus(p.q), &mut v_p)?;
    let (t0, t1) = rayon::join(
        || special_offsets(ring, params.ring_degree(), p, &v_p, &pk.b()[pr.clone()], &e0),
        || special_offsets(ring, params.ring_degree(), p, &v_p, &a[pr.clone()], &e1),
    );
    let (t0, t1) = (t0?, t1?);
    let (mut c0, mut c1) = (sized(buffer(limbs * n))?, sized(buffer(limbs * n))?);
    // Limb by limb on all cores: each limb's words depend on that limb alone.
    c0.par_chunks_mut(n).zip(c1.par_chunks_mut(n)).zip(moduli.par_iter()).enumerate().try_for_each(
        |(i, ((c0, c1), m))| -> Result<()> {
            let r = i * n..(i + 1) * n;
            let q = RingModulus(m.q);
            let w = inv_mod(p.q % m.q, m.q);
            let p_inv = (w, shoup(w, m.q));
            scaled_limb(m, p_inv, &t0, Some(&pt.coeffs()[r.clone()]), c0);
            scaled_limb(m, p_inv, &t1, None, c1);
            ring.ring_forward(params.ring_degree(), q, c0)?;
            ring.ring_forward(params.ring_degree(), q, c1)?;
            // `v p^-1` straight from the ternary words: the division costs no pass over `v`.
            let table = [m.q - w, 0, w];
            let mut v_limb = Zeroizing::new(v.iter().map(|&x| table[(x + 1) as usize]).collect::<Vec<u64>>());
            ring.ring_forward(params.ring_degree(), q, &mut v_limb)?;
            ring.ring_mul_add(q, &v_limb, &pk.b()[r.clone()], c0)?;
            ring.ring_mul_add(q, &v_limb, &a[r], c1)
        },
    )?;
    // Every word was reduced here: no second pass over 2 (l + 1) N words to check them.
    HostCiphertext::from_reduced(meta, c0, c1)
}

/// `s` in evaluation form over `q_0 .. q_level` (computed once per key over every `q_i`).
fn secret_eval<'a>(ring: &dyn RingOps, sk: &'a SecretKey, level: usize) -> Result<&'a [u64]> {
    let params = sk.params();
    let s = sk.eval_form(|| {
        let moduli = qp_moduli(params);
        Ok(Zeroizing::new(small_to_eval(ring, params, &moduli[..params.q().len()], sk.coefficients())?))
    })?;
    Ok(&s[..(level + 1) * params.n()])
}

/// Secret-key encryption of `pt` with the randomness of `seed`.
pub fn encrypt_sk(ring: &dyn RingOps, sk: &SecretKey, pt: &Plaintext, seed: &Seed) -> Result<HostCiphertext> {
    check_params(sk.params(), pt.params())?;
    pt.tag().check_against(sk.tag())?;
    let meta = pt.meta().with("encrypt_sk", pt.level(), pt.scale(), sk.tag())?;
    let params = pt.params();
    let (n, limbs) = (params.n(), pt.level() + 1);
    let moduli = &qp_moduli(params)[..limbs];
    let s = secret_eval(ring, sk, pt.level())?;
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
    HostCiphertext::from_reduced(meta, c0, a)
}

/// `c0 + c1 s` in coefficient form: the plaintext the ciphertext holds (with its noise),
/// computed in `c0`'s buffer.
pub fn decrypt(ring: &dyn RingOps, sk: &SecretKey, ct: HostCiphertext) -> Result<Plaintext> {
    check_params(sk.params(), ct.params())?;
    ct.tag().check_against(sk.tag())?;
    let params = ct.params().clone();
    let n = params.n();
    let moduli = qp_moduli(&params);
    let s = secret_eval(ring, sk, ct.level())?;
    let meta = ct.meta().with("decrypt", ct.level(), ct.scale(), sk.tag())?;
    let (mut m, c1) = ct.into_parts();
    // Limb by limb on all cores.
    m.par_chunks_mut(n).zip(c1.par_chunks(n).zip(s.par_chunks(n))).zip(moduli.par_iter()).try_for_each(
        |((limb, (c1, s)), md)| {
            limb.iter_mut().zip(c1.iter().zip(s)).for_each(|(x, (&c, &s))| *x = md.add(*x, md.mul(c, s)));
            ring.ring_inverse(params.ring_degree(), RingModulus(md.q), limb)
        },
    )?;
    Plaintext::from_reduced(meta, m)
}
