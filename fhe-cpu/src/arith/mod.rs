//! Elementwise modular arithmetic over whole limbs (`N` words under one prime), the
//! pointwise half of CKKS's work (the NTTs are the other): a SIMD kernel where the CPU
//! and the prime allow one, else the portable [`Modulus`] code. Every path returns the
//! canonical residue, so the bytes do not depend on which ran.

#[cfg(target_arch = "x86_64")]
mod ifma;

use fhe_api::ring::modulus::Modulus;

/// `acc[i] = (acc[i] + a[i] b[i]) mod q` for words below `q` (equal lengths, checked by
/// the caller).
pub fn mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) {
    debug_assert!(a.len() == acc.len() && b.len() == acc.len());
    #[cfg(target_arch = "x86_64")]
    if ifma::takes(m.q) {
        // SAFETY: `takes` saw avx512f and avx512ifma on this CPU and `q < 2^50`.
        unsafe { ifma::mul_add(m.q, a, b, acc) };
        return;
    }
    portable_mul_add(m, a, b, acc);
}

fn portable_mul_add(m: &Modulus, a: &[u64], b: &[u64], acc: &mut [u64]) {
    acc.iter_mut().zip(a.iter().zip(b)).for_each(|(c, (&a, &b))| *c = m.add(*c, m.mul(a, b)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    /// Every path against `u128` arithmetic, on primes either side of the IFMA kernel's
    /// `2^50` bound and at the extremes of the range.
    #[test]
    fn mul_add_matches_u128_arithmetic() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for q in [97u64, (1 << 40) + 0x6_0001, (1 << 41) - 0x1_FFFF, (1 << 50) - 27, (1 << 50) + 55, (1 << 60) - 93] {
            let m = Modulus::new(q);
            for n in [0usize, 1, 7, 8, 9, 64, 1000] {
                let mut words = |n| -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| r.next_u64() % q).collect();
                    v.iter_mut().take(3).zip([0, 1, q - 1]).for_each(|(x, e)| *x = e);
                    v
                };
                let (a, b, acc0) = (words(n), words(n), words(n));
                let want: Vec<u64> = (0..n)
                    .map(|i| ((u128::from(acc0[i]) + u128::from(a[i]) * u128::from(b[i])) % u128::from(q)) as u64)
                    .collect();
                let mut acc = acc0.clone();
                mul_add(&m, &a, &b, &mut acc);
                assert_eq!(acc, want, "q {q} n {n}");
                let mut acc = acc0.clone();
                portable_mul_add(&m, &a, &b, &mut acc);
                assert_eq!(acc, want, "portable, q {q} n {n}");
            }
        }
    }
}
