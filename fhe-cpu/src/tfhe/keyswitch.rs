//! Modulus switching `Q -> q` and key switching from the ring secret `z` (dimension
//! `N`) to the LWE secret `s` (dimension `n`).
//!
//! Unsigned base-`B` digits, most significant first: `a_j = sum_l v_l q / B^(l+1)`.
//! The key holds one fresh sample for every non-zero digit value, so the switch adds
//! at most `N * levels` fresh errors and no digit-scaled ones.

use rayon::prelude::*;

use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, Result};

use crate::tfhe::bootstrap::{BootstrapThreads, CpuPrepared};
use crate::tfhe::ring::Ring;

/// The key-switching samples in full, `[sample][n + 1]`: 16-bit words for the gate sets
/// (`q <= 2^16`, half the memory to stream), 32-bit for the wider PBS sets.
pub enum PreparedKsk {
    Narrow(crate::mem::Aligned<u16>),
    Wide(crate::mem::Aligned<u32>),
}

pub fn prepare_ksk(ring: &Ring, ek: &EvaluationKey) -> Result<PreparedKsk> {
    let p = ring.params;
    let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1) * (p.n() + 1);
    // Rows are read at random (one per digit): huge pages spare a TLB miss per row.
    if p.lwe_fits_u16() {
        let mut ksk = crate::mem::Aligned::zeroed_huge(p.ksk_samples() * (p.n() + 1));
        ksk.par_chunks_mut(per_j).enumerate().try_for_each(|(j, out)| ek.ksk_rows(j, out))?;
        Ok(PreparedKsk::Narrow(ksk))
    } else {
        let mut ksk = crate::mem::Aligned::zeroed_huge(p.ksk_samples() * (p.n() + 1));
        ksk.par_chunks_mut(per_j).enumerate().for_each(|(j, out)| ek.ksk_rows_wide(j, out));
        Ok(PreparedKsk::Wide(ksk))
    }
}

/// `round(x q / Q) mod q`, exactly as `fhe_api::ring::math::mod_switch`.
#[inline]
fn ms_to_q(x: u64, q_ring: u64, logq: u32) -> u32 {
    let num = ((x as u128) << logq) + (q_ring / 2) as u128;
    ((num / q_ring as u128) as u64 & ((1u64 << logq) - 1)) as u32
}

/// A word of the key-switching key: arithmetic modulo `2^16` or `2^32`, both multiples
/// of `q`, so the wrapping result masked to `q` is the result mod `q`.
trait KsWord: Copy + Default + Send + Sync {
    fn from_u32(x: u32) -> Self;
    fn to_u32(self) -> u32;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
}

impl KsWord for u16 {
    fn from_u32(x: u32) -> Self {
        x as u16
    }
    fn to_u32(self) -> u32 {
        self as u32
    }
    fn wrapping_sub(self, other: Self) -> Self {
        u16::wrapping_sub(self, other)
    }
    fn wrapping_add(self, other: Self) -> Self {
        u16::wrapping_add(self, other)
    }
}

impl KsWord for u32 {
    fn from_u32(x: u32) -> Self {
        x
    }
    fn to_u32(self) -> u32 {
        self
    }
    fn wrapping_sub(self, other: Self) -> Self {
        u32::wrapping_sub(self, other)
    }
    fn wrapping_add(self, other: Self) -> Self {
        u32::wrapping_add(self, other)
    }
}

/// `lone`: the only switch of its batch, which may take a second thread.
pub fn key_switch(ring: &Ring, key: &CpuPrepared, ct: &ExtractedLwe, lone: bool) -> LweCiphertext {
    match &key.ksk {
        PreparedKsk::Narrow(ksk) => key_switch_words(ring, key, ksk, ct, lone),
        PreparedKsk::Wide(ksk) => key_switch_words(ring, key, ksk, ct, lone),
    }
}

fn key_switch_words<W: KsWord>(
    ring: &Ring,
    key: &CpuPrepared,
    ksk: &[W],
    ct: &ExtractedLwe,
    lone: bool,
) -> LweCiphertext {
    let p = ring.params;
    let n = p.n();
    let q_ring = p.q_ring();
    let logq = p.lwe_modulus_log.0;
    let base_log = p.ksk_base_log.0;
    let levels = p.ksk_levels.0;
    // The digits cover the top `levels * base_log` bits; the `shift` bits below are
    // rounded away first (0 for the gate sets, whose decomposition is exact).
    let shift = p.ksk_shift();
    let kept = logq - shift;
    let bm1 = p.ksk_base() as usize - 1;
    let words = ct.as_words();
    let mut acc = vec![W::default(); n + 1];
    acc[n] = W::from_u32(ms_to_q(words[ring.n()], q_ring, logq));
    // The sample of every non-zero digit, then the subtractions ([`subtract_rows`]).
    let mut samples = Vec::with_capacity(ring.n() * levels);
    for (j, &aj) in words[..ring.n()].iter().enumerate() {
        let a = ms_to_q(aj, q_ring, logq) as u64;
        // Rounded to the kept bits; a carry out of them is a multiple of q, so dropped.
        let a = if shift == 0 { a } else { ((a + (1 << (shift - 1))) >> shift) & ((1 << kept) - 1) };
        for l in 0..levels {
            let v = ((a >> (kept - base_log * (l as u32 + 1))) & ((1 << base_log) - 1)) as usize;
            if v != 0 {
                samples.push((j * levels + l) * bm1 + (v - 1));
            }
        }
    }
    // A lone switch (a sequential carry's block) takes two threads, each summing half
    // the rows: the sums wrap modulo 2^16 or 2^32, so any split gives the same words.
    if lone && samples.len() >= 2 * AHEAD {
        let (first, second) = samples.split_at(samples.len() / 2);
        let mut other = vec![W::default(); n + 1];
        rayon::join(|| subtract_rows(ksk, n, first, &mut acc), || subtract_rows(ksk, n, second, &mut other));
        acc.iter_mut().zip(&other).for_each(|(x, &y)| *x = x.wrapping_add(y));
    } else {
        subtract_rows(ksk, n, &samples, &mut acc);
    }
    let mask = p.q_lwe_mask();
    let data = acc.into_iter().map(|x| x.to_u32() & mask).collect();
    LweCiphertext::from_raw(ring.set, key.tag, data).expect("key switch yields n + 1 words below q under a key's tag")
}

/// Rows ahead of the one subtracted that are prefetched into L2 (each row is a random
/// read from a key of ~100 MiB; see `mem::prefetch_l2`).
const AHEAD: usize = 16;

/// `acc -= ksk[s]` for every sample `s`, the rows [`AHEAD`] samples ahead prefetched.
fn subtract_rows<W: KsWord>(ksk: &[W], n: usize, samples: &[usize], acc: &mut [W]) {
    for (k, &s) in samples.iter().enumerate() {
        if let Some(&next) = samples.get(k + AHEAD) {
            crate::mem::prefetch_l2(&ksk[next * (n + 1)..(next + 1) * (n + 1)]);
        }
        let row = &ksk[s * (n + 1)..(s + 1) * (n + 1)];
        acc.iter_mut().zip(row).for_each(|(x, &y)| *x = x.wrapping_sub(y));
    }
}

/// The key switches of a batch on all cores; a lone one on two threads where `threads`
/// (`LUX_FHE_BOOTSTRAP_THREADS`) allows.
pub fn key_switch_batch(
    ring: &Ring,
    key: &CpuPrepared,
    inputs: &[ExtractedLwe],
    threads: BootstrapThreads,
) -> Result<Vec<LweCiphertext>> {
    if let [ct] = inputs {
        return Ok(vec![key_switch(ring, key, ct, threads == BootstrapThreads::Two)]);
    }
    Ok(inputs.par_iter().map(|ct| key_switch(ring, key, ct, false)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ring::math::mod_switch;

    /// A lone switch on two threads gives the one-thread words, for a wide (PBS) and a
    /// narrow (gate) key.
    #[test]
    fn lone_switch_on_two_threads_matches_one() {
        use fhe_api::ops::BootstrapOps;
        use fhe_api::{Backend, ParamSet, Seed};
        let cpu = crate::CpuBackend::oracle();
        for set in [ParamSet::M2C2G2, ParamSet::PN10QP27] {
            let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-ks-lone", 0)).unwrap();
            let key = cpu.prepare(&keys.ek).unwrap();
            let prepared = key.downcast::<CpuPrepared>(&cpu.name()).unwrap();
            let ring = cpu.ring(set).unwrap();
            let q = set.params().q_ring();
            let words: Vec<u64> = (0..=ring.n() as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q).collect();
            let ct = ExtractedLwe::from_raw(set, keys.ek.tag(), words).unwrap();
            assert!(key_switch(&ring, prepared, &ct, true) == key_switch(&ring, prepared, &ct, false), "{set}");
        }
    }

    #[test]
    fn fast_mod_switch_matches_the_definition() {
        for q in [134_215_681u64, 18_014_398_509_404_161, 33_550_337] {
            for x in [0, 1, q / 2, q / 2 + 1, q - 1, q / 3, 4097 % q] {
                assert_eq!(ms_to_q(x, q, 15) as u64, mod_switch(x, q, 1 << 15));
            }
        }
    }
}
