//! The negacyclic NTT's tables for one ring `Z_q[X]/(X^N + 1)`, built from `(N, q)`
//! alone, as [`crate::ops::NttOps`] defines the transform: `psi^bitrev(k)` and
//! `psi^-bitrev(k)` with their Shoup companions, and `1/N`. Every backend builds its NTT
//! from these (the CPU variants read them; GPU backends upload them), so all agree on the
//! root and the order, for the bit scheme's one prime and for every prime of a CKKS chain.

use crate::error::{Error, Result};
use crate::ring::math::{bit_reverse, inv_mod, negacyclic_root, pow_mod};
use crate::ring::modulus::{shoup, Modulus};
use crate::ring::{PolynomialSize, RingModulus};
use crate::tfhe::params::Params;

/// Smallest and largest ring degree any NTT here is built for (`2^1 .. 2^17`).
pub const MAX_LOG_N: u32 = 17;
/// Moduli must stay below `2^62` ([`Modulus`]'s lazy ranges need `4q < 2^64`).
pub const MAX_MODULUS_BITS: u32 = 62;

/// Tables shared by every variant: `psi^bitrev(k)` and `psi^-bitrev(k)` with their
/// Shoup companions, and `1/N`.
#[derive(Debug)]
pub struct NttTables {
    pub n: usize,
    pub log_n: u32,
    pub modulus: Modulus,
    pub psi: u64,
    pub psi_rev: Vec<u64>,
    pub psi_rev_shoup: Vec<u64>,
    pub ipsi_rev: Vec<u64>,
    pub ipsi_rev_shoup: Vec<u64>,
    pub n_inv: u64,
    pub n_inv_shoup: u64,
}

impl NttTables {
    /// The tables of `Z_q[X]/(X^N + 1)`. `N` must be a power of two in `[2, 2^17]` and `q`
    /// a prime below `2^62` with `q = 1 mod 2N`; anything else is `Error::InvalidRing`.
    pub fn new(n: PolynomialSize, q: RingModulus) -> Result<NttTables> {
        let (n, q) = (n.0, q.0);
        if !n.is_power_of_two() || !(2..=1 << MAX_LOG_N).contains(&n) {
            return Err(Error::InvalidRing(format!("N = {n} is not a power of two in [2, 2^{MAX_LOG_N}]")));
        }
        if q >= 1 << MAX_MODULUS_BITS {
            return Err(Error::InvalidRing(format!("q = {q} is not below 2^{MAX_MODULUS_BITS}")));
        }
        let psi = negacyclic_root(q, n)
            .ok_or_else(|| Error::InvalidRing(format!("q = {q} is not a prime = 1 mod 2N (N = {n})")))?;
        let log_n = n.trailing_zeros();
        let ipsi = inv_mod(psi, q);
        let psi_rev: Vec<u64> = (0..n).map(|k| pow_mod(psi, bit_reverse(k, log_n) as u64, q)).collect();
        let ipsi_rev: Vec<u64> = (0..n).map(|k| pow_mod(ipsi, bit_reverse(k, log_n) as u64, q)).collect();
        let n_inv = inv_mod(n as u64, q);
        Ok(NttTables {
            n,
            log_n,
            modulus: Modulus::new(q),
            psi,
            psi_rev_shoup: psi_rev.iter().map(|&w| shoup(w, q)).collect(),
            psi_rev,
            ipsi_rev_shoup: ipsi_rev.iter().map(|&w| shoup(w, q)).collect(),
            ipsi_rev,
            n_inv,
            n_inv_shoup: shoup(n_inv, q),
        })
    }

    /// The tables of a bit-scheme parameter set's ring (validated when the set was
    /// defined, so this cannot fail).
    pub fn for_params(p: &Params) -> NttTables {
        NttTables::new(p.ring_degree, p.ring_modulus).expect("parameter sets are validated: Q prime, Q = 1 mod 2N")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_rings_are_errors_not_panics() {
        let ok = NttTables::new(PolynomialSize(1024), RingModulus(134_215_681)).unwrap();
        assert_eq!(ok.n, 1024);
        for (n, q) in [(1000, 134_215_681u64), (1 << 18, 134_215_681), (1024, 134_215_683), (4096, 134_215_681)] {
            let e = NttTables::new(PolynomialSize(n), RingModulus(q)).unwrap_err();
            assert!(matches!(e, Error::InvalidRing(_)), "{n} {q}: {e}");
        }
        assert!(NttTables::new(PolynomialSize(1024), RingModulus(u64::MAX)).is_err());
    }
}
