//! Galois automorphisms `sigma_g: a(X) -> a(X^g)` of `Z_q[X]/(X^N + 1)`, `g` odd in
//! `[1, 2N)` (the odd residues mod `2N` are exactly the automorphisms, and
//! `sigma_g o sigma_h = sigma_{gh mod 2N}`).
//!
//! **Slot convention (CKKS).** The `N/2` slots are ordered by powers of 5: slot `j` is the
//! value at the root `zeta^(5^j)` (`zeta` a primitive `2N`-th root of unity). Then
//! `sigma_{5^k}(m)(zeta^(5^j)) = m(zeta^(5^(j+k)))`, so `sigma_{5^k}` rotates the slots
//! **left** by `k` (slot `j` receives slot `j + k mod N/2`), and `sigma_{2N-1}` (`X -> X^-1`)
//! conjugates every slot. `5` has order `N/2` mod `2N`, and `{5^k} x {1, -1}` is every odd
//! residue, so these two kinds generate all automorphisms.
//!
//! In coefficient form `sigma_g` sends coefficient `i` to `i g mod 2N`, negated when that
//! index is `>= N` (`X^N = -1`). In the forward NTT's evaluation order (slot `k` holds
//! `A(psi^(2 bitrev(k) + 1))`, [`crate::ring::math::ntt_slot_exponent`]) it is a pure
//! permutation, [`EvalPermutation`]: no arithmetic, so no word can differ between backends.

use crate::error::{Error, Result};
use crate::ring::math::{bit_reverse, pow_mod};
use crate::ring::modulus::csub;
use crate::ring::ntt::MAX_LOG_N;
use crate::ring::PolynomialSize;

/// The Galois element that rotates CKKS slots left by `steps` (right when negative):
/// `5^(steps mod N/2) mod 2N`. Panics unless `N` is a power of two `>= 2`.
pub fn galois_element_for_rotation(n: PolynomialSize, steps: i64) -> u64 {
    assert!(n.0.is_power_of_two() && n.0 >= 2, "N = {} is not a power of two >= 2", n.0);
    let slots = (n.0 / 2) as i64;
    pow_mod(5, steps.rem_euclid(slots) as u64, 2 * n.0 as u64)
}

/// The Galois element of complex conjugation of the slots, `2N - 1` (`X -> X^-1`).
pub fn conjugation_element(n: PolynomialSize) -> u64 {
    2 * n.0 as u64 - 1
}

fn check(n: usize, g: u64) -> Result<()> {
    if !n.is_power_of_two() || !(2..=1 << MAX_LOG_N).contains(&n) {
        return Err(Error::InvalidRing(format!("N = {n} is not a power of two in [2, 2^{MAX_LOG_N}]")));
    }
    if g.is_multiple_of(2) || g >= 2 * n as u64 {
        return Err(Error::InvalidRing(format!("Galois element {g} is not odd in [1, 2N) for N = {n}")));
    }
    Ok(())
}

/// `out = sigma_g(input)` in coefficient form, modulo `q`: `out[i g mod 2N] = input[i]`
/// when that index is below `N`, else `out[i g mod 2N - N] = -input[i] mod q`. `N` is
/// `input.len()`; words `< q` in, `< q` out. Odd `g` makes `i -> i g mod N` a bijection,
/// so every output word is written once.
///
/// Panics on a bad `N`, `g` or length (a caller bug: Galois elements come from
/// [`galois_element_for_rotation`] or a validated key).
pub fn apply_coeff(q: u64, g: u64, input: &[u64], out: &mut [u64]) {
    let n = input.len();
    if let Err(e) = check(n, g) {
        panic!("apply_coeff: {e}");
    }
    assert_eq!(out.len(), n, "apply_coeff: output length");
    let mask = 2 * n - 1;
    // `i g mod 2N`, stepped by `g`: `j + g < 4N` cannot overflow.
    let mut j = 0usize;
    for &a in input {
        debug_assert!(a < q);
        out[j & (n - 1)] = if j < n { a } else { csub(q - a, q) };
        j = (j + g as usize) & mask;
    }
}

/// `sigma_g` in evaluation form: `out[k] = input[index[k]]`.
///
/// Derivation: slot `k` holds `A(psi^e_k)` with `e_k = 2 bitrev(k) + 1`. Every `psi^e`
/// with `e` odd is a root of `X^N + 1`, so reducing `A(X^g)` mod `X^N + 1` does not change
/// its value there: `sigma_g(A)(psi^e_k) = A(psi^(g e_k mod 2N))`. `g e_k` is odd, so it is
/// `e_k'` for exactly one slot, `k' = bitrev((g e_k mod 2N - 1) / 2)`, and
/// `index[k] = k'`. Indices are `u32` (`N <= 2^17`) so GPU backends can upload them as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalPermutation {
    g: u64,
    index: Vec<u32>,
}

impl EvalPermutation {
    /// `N` a power of two in `[2, 2^17]` and `g` odd in `[1, 2N)`, else `Error::InvalidRing`.
    pub fn new(n: PolynomialSize, g: u64) -> Result<EvalPermutation> {
        let n = n.0;
        check(n, g)?;
        let log_n = n.trailing_zeros();
        let mask = 2 * n as u64 - 1;
        let index = (0..n)
            .map(|k| {
                let e = ((2 * bit_reverse(k, log_n) as u64 + 1) * g) & mask;
                bit_reverse(((e - 1) / 2) as usize, log_n) as u32
            })
            .collect();
        Ok(EvalPermutation { g, index })
    }

    /// `out[k] = input[index[k]]`; both of length `N`. Panics on other lengths.
    pub fn apply(&self, input: &[u64], out: &mut [u64]) {
        assert!(input.len() == self.index.len() && out.len() == self.index.len(), "EvalPermutation: length");
        for (o, &i) in out.iter_mut().zip(&self.index) {
            *o = input[i as usize];
        }
    }

    /// The Galois element `g`.
    pub fn galois_element(&self) -> u64 {
        self.g
    }

    /// `index[k]`, the source slot of output slot `k`.
    pub fn index(&self) -> &[u32] {
        &self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::math::{mul_mod, ntt_slot_exponent};
    use crate::ring::modulus::Modulus;
    use crate::ring::ntt::NttTables;
    use crate::ring::prime::primes_below;
    use crate::ring::RingModulus;

    use crate::rng::SplitMix64;

    fn poly(r: &mut SplitMix64, n: usize, q: u64) -> Vec<u64> {
        (0..n).map(|_| r.below(q)).collect()
    }

    /// Forward negacyclic NTT, Cooley-Tukey with `psi^bitrev` twiddles (O(N log N)); its
    /// order, slot `k = A(psi^(2 bitrev(k) + 1))`, is checked against the definition below.
    fn ntt(t: &NttTables, a: &[u64]) -> Vec<u64> {
        let m = Modulus::new(t.modulus.q);
        let mut a = a.to_vec();
        let (mut half, mut groups) = (t.n / 2, 1);
        while groups < t.n {
            for g in 0..groups {
                let w = t.psi_rev[groups + g];
                for j in 2 * g * half..(2 * g + 1) * half {
                    let (u, v) = (a[j], m.mul(a[j + half], w));
                    (a[j], a[j + half]) = (m.add(u, v), m.sub(u, v));
                }
            }
            half /= 2;
            groups *= 2;
        }
        a
    }

    /// `A(x) mod q` by Horner.
    fn eval(a: &[u64], x: u64, q: u64) -> u64 {
        a.iter().rev().fold(0, |acc, &c| (mul_mod(acc, x, q) + c) % q)
    }

    fn tables(n: usize, bits: u32) -> NttTables {
        let q = primes_below(bits, PolynomialSize(n), 1, &[]).unwrap()[0];
        NttTables::new(PolynomialSize(n), RingModulus(q)).unwrap()
    }

    #[test]
    fn test_ntt_matches_the_definition() {
        let mut rng = SplitMix64::new(1);
        for (n, bits) in [(16, 40), (64, 60)] {
            let t = tables(n, bits);
            let q = t.modulus.q;
            let a = poly(&mut rng, n, q);
            let fa = ntt(&t, &a);
            for (k, &v) in fa.iter().enumerate() {
                let e = ntt_slot_exponent(k, t.log_n) as u64;
                assert_eq!(v, eval(&a, pow_mod(t.psi, e, q), q), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn rotation_elements() {
        for log_n in [1u32, 4, 10, 16] {
            let n = PolynomialSize(1 << log_n);
            let two_n = 2 * n.0 as u64;
            let slots = (n.0 / 2) as i64;
            assert_eq!(galois_element_for_rotation(n, 0), 1);
            assert_eq!(galois_element_for_rotation(n, slots), 1);
            assert_eq!(conjugation_element(n), two_n - 1);
            for k in [1i64, 2, 3, 7, slots - 1, slots + 5, -1, -3, -slots - 2, i64::MIN, i64::MAX] {
                let g = galois_element_for_rotation(n, k);
                assert!(g % 2 == 1 && g < two_n);
                assert_eq!(g, pow_mod(5, k.rem_euclid(slots) as u64, two_n));
                // Rotating by k then by -k is the identity.
                assert_eq!(mul_mod(g, galois_element_for_rotation(n, k.wrapping_neg()), two_n), 1, "{k}");
            }
        }
        // 5 has order N/2 mod 2N, and its powers with their negatives are every odd residue.
        let n = PolynomialSize(64);
        let mut seen: Vec<u64> = (0..32)
            .flat_map(|k| {
                let g = galois_element_for_rotation(n, k);
                [g, 128 - g]
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..64).map(|i| 2 * i + 1).collect::<Vec<u64>>());
    }

    #[test]
    fn bad_elements_are_errors() {
        for (n, g) in [(16, 0u64), (16, 2), (16, 32), (16, 33), (12, 5), (1, 1), (1 << 18, 5)] {
            let e = EvalPermutation::new(PolynomialSize(n), g).unwrap_err();
            assert!(matches!(e, Error::InvalidRing(_)), "{n} {g}: {e}");
        }
        assert!(EvalPermutation::new(PolynomialSize(16), 31).is_ok());
    }

    /// Slots in the mod-q analogue of the canonical embedding: slot `j` = `A(psi^(5^j))`.
    /// `sigma_{5^k}` moves slot `j + k` to slot `j` (a left rotation) and `2N - 1` maps the
    /// value at `psi^e` to the value at `psi^-e` (conjugation).
    #[test]
    fn rotation_moves_slots_left() {
        let mut rng = SplitMix64::new(2);
        let n = 32;
        let t = tables(n, 50);
        let q = t.modulus.q;
        let a = poly(&mut rng, n, q);
        let slot = |p: &[u64], e: u64| eval(p, pow_mod(t.psi, e, q), q);
        let mut b = vec![0; n];
        for k in [1i64, 3, -2] {
            apply_coeff(q, galois_element_for_rotation(PolynomialSize(n), k), &a, &mut b);
            for j in 0..n as u64 / 2 {
                let e = |j: u64| pow_mod(5, j, 2 * n as u64);
                let src = (j as i64 + k).rem_euclid(n as i64 / 2) as u64;
                assert_eq!(slot(&b, e(j)), slot(&a, e(src)), "k={k} j={j}");
            }
        }
        apply_coeff(q, conjugation_element(PolynomialSize(n)), &a, &mut b);
        for e in (1..2 * n as u64).step_by(2) {
            assert_eq!(slot(&b, e), slot(&a, 2 * n as u64 - e));
        }
    }

    #[test]
    fn eval_permutation_commutes_with_the_ntt() {
        let mut rng = SplitMix64::new(3);
        for (log_n, bits) in [(4u32, 40), (10, 55), (13, 60)] {
            let n = 1usize << log_n;
            let t = tables(n, bits);
            let q = t.modulus.q;
            let pn = PolynomialSize(n);
            let mut gs = vec![1, galois_element_for_rotation(pn, 1), galois_element_for_rotation(pn, -1)];
            gs.extend([galois_element_for_rotation(pn, 5), conjugation_element(pn)]);
            gs.extend((0..3).map(|_| (rng.next_u64() % (2 * n as u64)) | 1));
            let a = poly(&mut rng, n, q);
            let fa = ntt(&t, &a);
            let (mut b, mut fb) = (vec![0; n], vec![0; n]);
            for g in gs {
                apply_coeff(q, g, &a, &mut b);
                let perm = EvalPermutation::new(pn, g).unwrap();
                assert_eq!(perm.galois_element(), g);
                perm.apply(&fa, &mut fb);
                assert_eq!(ntt(&t, &b), fb, "n={n} g={g}");
                // A permutation: every source slot is used once.
                let mut idx = perm.index().to_vec();
                idx.sort_unstable();
                assert!(idx.iter().enumerate().all(|(k, &i)| i as usize == k));
            }
        }
    }

    #[test]
    fn automorphisms_compose() {
        let mut rng = SplitMix64::new(4);
        for n in [16usize, 1024] {
            let t = tables(n, 45);
            let q = t.modulus.q;
            let pn = PolynomialSize(n);
            let a = poly(&mut rng, n, q);
            let fa = ntt(&t, &a);
            for _ in 0..4 {
                let (g, h) = ((rng.next_u64() % (2 * n as u64)) | 1, (rng.next_u64() % (2 * n as u64)) | 1);
                let gh = mul_mod(g, h, 2 * n as u64);
                let (mut x, mut y, mut z) = (vec![0; n], vec![0; n], vec![0; n]);
                apply_coeff(q, h, &a, &mut x);
                apply_coeff(q, g, &x, &mut y);
                apply_coeff(q, gh, &a, &mut z);
                assert_eq!(y, z, "n={n} g={g} h={h}");
                let (pg, ph, pgh) = (
                    EvalPermutation::new(pn, g).unwrap(),
                    EvalPermutation::new(pn, h).unwrap(),
                    EvalPermutation::new(pn, gh).unwrap(),
                );
                ph.apply(&fa, &mut x);
                pg.apply(&x, &mut y);
                pgh.apply(&fa, &mut z);
                assert_eq!(y, z);
            }
            // Conjugation is an involution; the identity element leaves words alone,
            // zeros included (no `q` where `0` belongs).
            let mut b = a.clone();
            b[0] = 0;
            b[n - 1] = 0;
            let (mut x, mut y) = (vec![0; n], vec![0; n]);
            apply_coeff(q, conjugation_element(pn), &b, &mut x);
            assert!(x.iter().all(|&w| w < q));
            apply_coeff(q, conjugation_element(pn), &x, &mut y);
            assert_eq!(y, b);
            apply_coeff(q, 1, &b, &mut y);
            assert_eq!(y, b);
        }
    }
}
