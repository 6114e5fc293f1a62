//! Definitional integer arithmetic shared by every backend.
//!
//! These functions are written for clarity, not speed: they define the numbers (the
//! NTT root, the evaluation order, the rounding of a modulus switch) that the byte
//! format depends on. Backends use them to build their tables and then compute with
//! their own fast arithmetic.

/// `(prod factors) mod m`, one factor at a time (`m >= 1`): `P mod q_i`, `Q mod p_j`
/// and the like, for RNS constants.
pub fn product_mod(factors: impl IntoIterator<Item = u64>, m: u64) -> u64 {
    factors.into_iter().fold(1 % m, |acc, f| mul_mod(acc, f % m, m))
}

/// `a * b mod q` through a 128-bit product.
#[inline]
pub const fn mul_mod(a: u64, b: u64, q: u64) -> u64 {
    ((a as u128 * b as u128) % q as u128) as u64
}

/// `base^exp mod q`.
pub const fn pow_mod(mut base: u64, mut exp: u64, q: u64) -> u64 {
    let mut acc = 1 % q;
    base %= q;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base, q);
        }
        base = mul_mod(base, base, q);
        exp >>= 1;
    }
    acc
}

/// Inverse of `a` modulo the prime `q` (Fermat).
pub const fn inv_mod(a: u64, q: u64) -> u64 {
    pow_mod(a, q - 2, q)
}

/// Deterministic Miller-Rabin for every `u64` (the first twelve primes as witnesses).
pub const fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const W: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    let mut i = 0;
    while i < W.len() {
        if n.is_multiple_of(W[i]) {
            return n == W[i];
        }
        i += 1;
    }
    let mut d = n - 1;
    let mut s = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    let mut i = 0;
    'witness: while i < W.len() {
        let mut x = pow_mod(W[i], d, n);
        i += 1;
        if x == 1 || x == n - 1 {
            continue;
        }
        let mut r = 1;
        while r < s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
            r += 1;
        }
        return false;
    }
    true
}

/// Reverse the low `bits` bits of `x`.
#[inline]
pub const fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The canonical primitive `2N`-th root of unity `psi` modulo `q`: for `x = 2, 3, ...`
/// the first `psi = x^((q-1)/2N)` with `psi^N = -1`. Every backend's NTT and every key
/// stored in evaluation form depend on this choice.
///
/// Returns `None` when `q` is not a prime `= 1 mod 2N`.
pub fn negacyclic_root(q: u64, n: usize) -> Option<u64> {
    let two_n = 2 * n as u64;
    if !n.is_power_of_two() || !is_prime(q) || !(q - 1).is_multiple_of(two_n) {
        return None;
    }
    let e = (q - 1) / two_n;
    (2..q).map(|x| pow_mod(x, e, q)).find(|&psi| pow_mod(psi, n as u64, q) == q - 1)
}

/// Evaluation order of the forward NTT: output slot `k` holds `A(psi^(2 * bitrev(k) + 1))`.
/// This returns that odd exponent of `psi` for slot `k` (in `[1, 2N)`).
#[inline]
pub const fn ntt_slot_exponent(k: usize, log_n: u32) -> usize {
    2 * bit_reverse(k, log_n) + 1
}

/// Round `x * to / from` to the nearest integer (halves round up), reduced mod `to`.
/// This is the one modulus switch of the scheme (DESIGN: no floating point).
#[inline]
pub const fn mod_switch(x: u64, from: u64, to: u64) -> u64 {
    let num = x as u128 * to as u128 + (from / 2) as u128;
    ((num / from as u128) % to as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_and_composites() {
        assert!(is_prime(134_215_681));
        assert!(is_prime(18_014_398_509_404_161));
        assert!(is_prime(33_550_337));
        assert!(!is_prime(134_215_681 * 3));
        assert!(!is_prime(1));
        assert!(!is_prime(3_215_031_751)); // strong pseudoprime to bases 2, 3, 5, 7
    }

    #[test]
    fn root_is_primitive() {
        let q = 134_215_681;
        let psi = negacyclic_root(q, 1024).unwrap();
        assert_eq!(pow_mod(psi, 1024, q), q - 1);
        assert_eq!(pow_mod(psi, 2048, q), 1);
        assert!(negacyclic_root(q + 2, 1024).is_none());
    }

    #[test]
    fn mod_switch_rounds_to_nearest() {
        assert_eq!(mod_switch(8, 1 << 15, 2048), 1); // 0.5 rounds up
        assert_eq!(mod_switch(7, 1 << 15, 2048), 0);
        assert_eq!(mod_switch((1 << 15) - 1, 1 << 15, 2048), 0); // wraps
    }
}
