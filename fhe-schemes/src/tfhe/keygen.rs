//! Key generation, written once for every backend: secret key, bootstrap key,
//! key-switching key and public key, each component from its own stream
//! ([`fhe_api::rng`]), in parallel on the host.
//!
//! The only ring operation keygen needs is the forward NTT (the bootstrap key is
//! stored in evaluation form), and it is the backend's: [`keygen_from_seed`] calls its
//! [`NttOps::ntt_forward`] twice, on one polynomial (the ring secret) and on one batch
//! holding every bootstrap-key error polynomial. A backend whose NTT is not byte-exact
//! therefore produces different keys, which the equivalence gate catches.

use rayon::prelude::*;
use zeroize::Zeroizing;

use fhe_api::ops::{NttOps, RingOps};
use fhe_api::ring::modulus::Modulus;
use fhe_api::rng::{label, public_seed, stream, Seed};
use fhe_api::tag::KeyTag;
use fhe_api::tfhe::entities::{expand_bsk_a, expand_ksk_a_wide, expand_pk_a};
use fhe_api::tfhe::params::LweSecret;
use fhe_api::{EvaluationKey, KeySet, ParamSet, PublicKey, Result, SecretKey};

/// All three keys of `set`, determined by `seed` alone (byte-equal on every backend whose
/// NTT is), over `ring`'s NTT.
pub fn keygen_from_seed(ring: &dyn RingOps, set: ParamSet, seed: &Seed) -> Result<KeySet> {
    keygen_with(set, seed, &|data: &mut [u64]| ring.ntt_forward(set, data))
}

/// All three keys of `set` from a fresh OS-random seed.
pub fn keygen(ring: &dyn RingOps, set: ParamSet) -> Result<KeySet> {
    keygen_from_seed(ring, set, &Seed::from_os()?)
}

/// All three keys of `set` from `seed`; `forward` is a batched forward NTT with the
/// conventions of [`fhe_api::ops::RingOps`].
fn keygen_with(set: ParamSet, seed: &Seed, forward: &dyn Fn(&mut [u64]) -> Result<()>) -> Result<KeySet> {
    let p = set.params();
    let (n, big_n) = (p.n(), p.big_n());
    let eta = p.noise_eta;
    let m = Modulus::new(p.q_ring());

    let mut r = stream(&seed.0, label::LWE_SECRET, 0);
    let lwe = Zeroizing::new(
        (0..n)
            .map(|_| match p.lwe_secret {
                LweSecret::Ternary => r.ternary(),
                LweSecret::Binary => r.binary(),
            })
            .collect::<Vec<i8>>(),
    );
    let mut r = stream(&seed.0, label::RING_SECRET, 0);
    let ring_sk = Zeroizing::new((0..big_n).map(|_| r.ternary()).collect::<Vec<i8>>());
    let pseed = public_seed(seed);

    // z in evaluation form.
    let mut z_ntt = Zeroizing::new(ring_sk.iter().map(|&z| m.from_i64(z as i64)).collect::<Vec<u64>>());
    forward(&mut z_ntt)?;

    // Bootstrap key: RGSW(s_i == +1) and RGSW(s_i == -1) for every i (GINX), or
    // RGSW(s_group == t) for every group and non-zero bit pattern t (multi-bit; see
    // `Params::bsk_keys` for the key order). Every row's error polynomial goes into
    // `bsk_b` first, so one batched NTT call transforms them all.
    let levels = p.bsk_levels.0;
    let rows = p.rgsw_rows();
    // `Bg^(D + l)`: a set that drops the lowest digit keeps rows for the top ones only.
    let gadget: Vec<u64> = (0..levels).map(|l| p.bsk_gadget(l)).collect();
    let mut bsk_b = vec![0u64; p.bsk_b_len()];
    bsk_b.par_chunks_mut(rows * big_n).enumerate().for_each(|(key, out)| {
        let mut er = stream(&seed.0, label::BSK_E, key as u64);
        out.iter_mut().for_each(|x| *x = m.from_i64(er.cbd(eta)));
    });
    forward(&mut bsk_b)?;
    bsk_b.par_chunks_mut(rows * big_n).enumerate().for_each(|(key, out)| {
        let mu = bsk_message(p, &lwe, key);
        let mut a = vec![0u64; rows * big_n];
        expand_bsk_a(set, &pseed, key, &mut a);
        for (row, (b_row, a_row)) in out.chunks_mut(big_n).zip(a.chunks(big_n)).enumerate() {
            // Rows 0..L: phase -mu g_l z (gadget in the `a` part); rows L..2L: +mu g_l.
            let g = gadget[row % levels];
            for (slot, b) in b_row.iter_mut().enumerate() {
                let mut v = m.add(m.mul(a_row[slot], z_ntt[slot]), *b);
                if mu {
                    v = if row < levels { m.sub(v, m.mul(g, z_ntt[slot])) } else { m.add(v, g) };
                }
                *b = v;
            }
        }
    });

    // Key-switching key: sample (j, l, v) encrypts v z_j q / B^(l+1) under s.
    let logq = p.lwe_modulus_log.0;
    let mask = p.q_lwe_mask();
    let base_log = p.ksk_base_log.0;
    let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
    let mut ksk_b = vec![0u32; p.ksk_samples()];
    ksk_b.par_chunks_mut(per_j).enumerate().for_each(|(j, out)| {
        let mut a = vec![0u32; per_j * n];
        expand_ksk_a_wide(set, &pseed, j, &mut a);
        let mut er = stream(&seed.0, label::KSK_E, j as u64);
        for (idx, b) in out.iter_mut().enumerate() {
            let (l, v) = (idx / (p.ksk_base() as usize - 1), idx % (p.ksk_base() as usize - 1) + 1);
            let msg = (v as u32).wrapping_mul(ring_sk[j] as i32 as u32) << (logq - base_log * (l as u32 + 1));
            let dot = inner(&a[idx * n..(idx + 1) * n], &lwe);
            *b = dot.wrapping_add(er.cbd(eta) as i32 as u32).wrapping_add(msg) & mask;
        }
    });

    // Public key: pk_samples encryptions of zero under s.
    let a = expand_pk_a(set, &pseed);
    let pk_b: Vec<u32> = (0..p.pk_samples)
        .into_par_iter()
        .map(|k| {
            let mut er = stream(&seed.0, label::PK_E, k as u64);
            inner(&a[k * n..(k + 1) * n], &lwe).wrapping_add(er.cbd(eta) as i32 as u32) & mask
        })
        .collect();

    let sk = SecretKey::from_raw(set, KeyTag::derive(set, &pseed), lwe.to_vec(), ring_sk.to_vec())?;
    let pk = PublicKey::from_raw(set, pseed, pk_b)?;
    let ek = EvaluationKey::from_raw(set, pseed, bsk_b, ksk_b)?;
    Ok(KeySet { sk, pk, ek })
}

/// The bit RGSW key `key` encrypts ([`fhe_api::tfhe::params::Params::bsk_keys`]): GINX
/// key `2i + sign` is `s_i == +1` (sign 0) or `s_i == -1` (sign 1); multi-bit key
/// `g (2^k - 1) + t - 1` is `s_(g k + j) == bit j of t` for every `j < k` (the secret is
/// binary).
fn bsk_message(p: &fhe_api::tfhe::params::Params, lwe: &[i8], key: usize) -> bool {
    match p.grouping() {
        None => {
            let (i, sign) = (key / 2, key % 2);
            (sign == 0 && lwe[i] == 1) || (sign == 1 && lwe[i] == -1)
        }
        Some(k) => {
            let per_group = (1 << k) - 1;
            let (g, t) = (key / per_group, key % per_group + 1);
            (0..k).all(|j| i64::from(lwe[g * k + j]) == ((t >> j) & 1) as i64)
        }
    }
}

/// `<a, s>` modulo `2^32` (callers mask to `q`): wrapping `u32` arithmetic is exact
/// modulo every power-of-two `q <= 2^32`; the form lets the compiler vectorize it.
#[inline]
pub fn inner(a: &[u32], s: &[i8]) -> u32 {
    a.iter().zip(s).fold(0u32, |acc, (&x, &y)| acc.wrapping_add(x.wrapping_mul(y as i32 as u32)))
}
